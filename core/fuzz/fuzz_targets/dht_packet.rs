//! The generic DHT packet (docs/protocol.md §5.2): envelope parsing and opening with a fixed key.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::dht::wire::dht_packet::Envelope;
use rustox_net_crypto::crypto::{PrecomputedKey, PublicKey, SecretKey};

fuzz_target!(|data: &[u8]| {
    if let Ok(env) = Envelope::parse(data) {
        let key = PrecomputedKey::new(&PublicKey([9; 32]), &SecretKey::from_bytes([7; 32])).unwrap();
        let _ = env.open(&key);
    }
});
