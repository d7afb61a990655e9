//! Data request 0x85 and response 0x86 (docs/protocol.md §6.3): raw datagrams, and arbitrary
//! plaintexts sealed under both layers' keys so the inner checks are reached.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::onion::wire::data::{DataRequest, DataResponse};
use rustox_net_crypto::crypto::{KeyPair, Nonce, PrecomputedKey, SecretKey};

fuzz_target!(|data: &[u8]| {
    let ours = KeyPair::from_secret(SecretKey::from_bytes([5; 32]));
    let temp = KeyPair::from_secret(SecretKey::from_bytes([6; 32]));
    if let Ok(r) = DataRequest::parse(data) {
        assert_eq!(r.to_response().len(), data.len() - 32);
    }
    if let Ok(r) = DataResponse::parse(data) {
        let _ = r.open(&ours.secret);
    }
    let nonce = Nonce([2; 24]);
    let mut response = vec![0x86];
    response.extend_from_slice(&nonce.0);
    response.extend_from_slice(&temp.public.0);
    response.extend_from_slice(&PrecomputedKey::new(&ours.public, &temp.secret).unwrap().encrypt(&nonce, data));
    if let Ok(r) = DataResponse::parse(&response) {
        let inner = r.open(&ours.secret).unwrap();
        // A low-order sender key is refused before the inner box is opened.
        if let Ok(key) = PrecomputedKey::new(&inner.sender_real_pk, &ours.secret) {
            let _ = inner.open(&key);
        }
    }
});
