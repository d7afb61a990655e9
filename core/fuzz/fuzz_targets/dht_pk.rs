//! The DHT public key announcement as onion data, and its DHT-route wrapper (docs/protocol.md §6.4).
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::friend::dht_pk::{DhtPkAnnounce, DhtPkRoute};
use rustox_net_crypto::crypto::{PrecomputedKey, PublicKey, SecretKey};

fuzz_target!(|data: &[u8]| {
    if let Ok(a) = DhtPkAnnounce::decode(data) {
        let again = a.encode().expect("a decoded announcement has at most 4 nodes");
        assert_eq!(DhtPkAnnounce::decode(&again), Ok(a));
    }
    if let Ok(route) = DhtPkRoute::parse(data) {
        // A low-order sender key is refused before any box is opened.
        if let Ok(key) = PrecomputedKey::new(&route.sender_real_pk, &SecretKey::from_bytes([5; 32])) {
            let _ = route.open(&key, &PublicKey([3; 32]));
        }
    }
});
