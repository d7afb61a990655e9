//! Fuzz the DataPacket parser: it must never panic, and whatever it accepts must
//! re-encode to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rustox_file_transfer::packet::DataPacket;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(packet) = DataPacket::parse(bytes) {
        assert_eq!(packet.encode().expect("a parsed chunk re-encodes"), bytes);
    }
});
