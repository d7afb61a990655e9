//! Extended announce request 0x87 and response 0x88, and the group announces they carry:
//! raw datagrams, and arbitrary plaintexts sealed under the shared key so the payload
//! decoders are reached.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::onion::wire::announce_ext::{ExtAnnounceEnvelope, ExtAnnounceResponse};
use rustox_core::onion::wire::group_announce::{decode_announces, PublicGroupAnnounce};
use rustox_net_crypto::crypto::{Nonce, PrecomputedKey, PublicKey, SecretKey};

fuzz_target!(|data: &[u8]| {
    let pk = PublicKey([3; 32]);
    let key = PrecomputedKey::new(&pk, &SecretKey::from_bytes([5; 32])).unwrap();
    if let Ok(env) = ExtAnnounceEnvelope::parse(data) {
        let _ = env.open(&key);
    }
    let _ = ExtAnnounceResponse::open(data, &key);
    if let Ok(a) = PublicGroupAnnounce::decode(data) {
        assert_eq!(PublicGroupAnnounce::decode(&a.encode()), Ok(a));
    }
    let _ = decode_announces(data);
    let nonce = Nonce([9; 24]);
    let boxed = key.encrypt(&nonce, data);
    let mut request = vec![0x87];
    request.extend_from_slice(&nonce.0);
    request.extend_from_slice(&pk.0);
    request.extend_from_slice(&boxed);
    if let Ok(env) = ExtAnnounceEnvelope::parse(&request) {
        let (req, extra) = env.open(&key).unwrap();
        assert!(extra.len() <= 136);
        let _ = PublicGroupAnnounce::decode(&extra);
        let _ = req;
    }
    let mut response = vec![0x88];
    response.extend_from_slice(&[1; 8]);
    response.extend_from_slice(&nonce.0);
    response.extend_from_slice(&boxed);
    if let Ok(resp) = ExtAnnounceResponse::open(&response, &key) {
        assert!(resp.nodes.len() <= 4 && resp.announces.len() <= 4);
        if let Ok(again) = resp.seal(&key, &nonce) {
            assert_eq!(ExtAnnounceResponse::open(&again, &key), Ok(resp));
        }
    }
});
