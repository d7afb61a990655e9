//! Cookie request 0x18: parse never panics; whatever parses re-encodes to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_net_crypto::crypto::{PrecomputedKey, PublicKey, SecretKey};
use rustox_net_crypto::packets::CookieRequest;

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = CookieRequest::parse(data) {
        assert_eq!(packet.to_bytes(), data);
        let key = PrecomputedKey::new(&PublicKey([9; 32]), &SecretKey::from_bytes([1; 32])).unwrap();
        let _ = packet.open(&key);
    }
});
