//! The 0x20 DHT request and the NAT ping inside it (docs/protocol.md §5.5, §5.6).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::dht::wire::crypto_request::{NatPing, RequestEnvelope};
use rustox_net_crypto::crypto::{PrecomputedKey, PublicKey, SecretKey};

fuzz_target!(|data: &[u8]| {
    if let Ok(env) = RequestEnvelope::parse(data) {
        let key = PrecomputedKey::new(&PublicKey([3; 32]), &SecretKey::from_bytes([5; 32])).unwrap();
        let _ = env.open(&key);
    }
    if let Ok(p) = NatPing::decode(data) {
        assert_eq!(NatPing::decode(&p.encode()), Ok(p));
    }
});
