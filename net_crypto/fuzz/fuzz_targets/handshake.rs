//! Handshake 0x1a: parse never panics; whatever parses re-encodes to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_net_crypto::crypto::{PrecomputedKey, PublicKey, SecretKey};
use rustox_net_crypto::packets::Handshake;

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Handshake::parse(data) {
        assert_eq!(packet.to_bytes(), data);
        let key = PrecomputedKey::new(&PublicKey([9; 32]), &SecretKey::from_bytes([1; 32])).unwrap();
        let _ = packet.open(&key);
    }
});
