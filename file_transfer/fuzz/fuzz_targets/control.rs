//! Fuzz the ControlPacket parser: it must never panic, and whatever it accepts must re-encode
//! to a payload that parses to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rustox_file_transfer::packet::ControlPacket;

fn encode(p: &ControlPacket) -> Vec<u8> {
    p.encode()
}

fuzz_target!(|bytes: &[u8]| {
    if let Ok(packet) = ControlPacket::parse(bytes) {
        let again = ControlPacket::parse(&encode(&packet)).expect("re-encoded packet parses");
        assert_eq!(again, packet);
    }
});
