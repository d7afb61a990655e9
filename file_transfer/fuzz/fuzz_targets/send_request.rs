//! Fuzz the SendRequestPacket parser: it must never panic, and whatever it accepts must re-encode
//! to a payload that parses to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rustox_file_transfer::packet::SendRequestPacket;

fn encode(p: &SendRequestPacket) -> Vec<u8> {
    p.encode().expect("a parsed request re-encodes")
}

fuzz_target!(|bytes: &[u8]| {
    if let Ok(packet) = SendRequestPacket::parse(bytes) {
        let again = SendRequestPacket::parse(&encode(&packet)).expect("re-encoded packet parses");
        assert_eq!(again, packet);
    }
});
