//! Announce request 0x83 and response 0x84 (docs/protocol.md §6.3): raw datagrams, and arbitrary
//! plaintexts sealed under the shared key so the payload decoders are reached.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::onion::wire::announce::{AnnounceEnvelope, AnnounceResponseEnvelope};
use rustox_net_crypto::crypto::{Nonce, PrecomputedKey, PublicKey, SecretKey};

fuzz_target!(|data: &[u8]| {
    let pk = PublicKey([3; 32]);
    let key = PrecomputedKey::new(&pk, &SecretKey::from_bytes([5; 32])).unwrap();
    if let Ok(env) = AnnounceEnvelope::parse(data) {
        let _ = env.open(&key);
    }
    if let Ok(env) = AnnounceResponseEnvelope::parse(data) {
        let _ = env.open(&key);
    }
    let nonce = Nonce([9; 24]);
    let boxed = key.encrypt(&nonce, data);
    let mut request = vec![0x83];
    request.extend_from_slice(&nonce.0);
    request.extend_from_slice(&pk.0);
    request.extend_from_slice(&boxed);
    if let Ok(env) = AnnounceEnvelope::parse(&request) {
        let req = env.open(&key).unwrap();
        assert_eq!(req.seal(&pk, &key, &nonce), request);
    }
    let mut response = vec![0x84];
    response.extend_from_slice(&[1; 8]);
    response.extend_from_slice(&nonce.0);
    response.extend_from_slice(&boxed);
    if let Ok(env) = AnnounceResponseEnvelope::parse(&response) {
        if let Ok(resp) = env.open(&key) {
            assert!(resp.nodes.len() <= 4 && resp.nodes.iter().all(|n| !n.tcp));
            let again = resp.seal(&key, &nonce).unwrap();
            let back = AnnounceResponseEnvelope::parse(&again).unwrap().open(&key).unwrap();
            assert_eq!(back, resp);
        }
    }
});
