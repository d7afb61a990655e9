//! Onion requests 0x80-0x82 (docs/protocol.md §6.2): raw datagrams, and arbitrary layer
//! plaintexts sealed under the relay's key so the checks after decryption are reached.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustox_core::onion::wire::ip_port::IpPort;
use rustox_core::onion::wire::request::RequestLayer;
use rustox_core::onion::wire::{RETURN_1, RETURN_2};
use rustox_net_crypto::crypto::{Nonce, PrecomputedKey, PublicKey, SecretKey, SymmetricKey};

fuzz_target!(|data: &[u8]| {
    let pk = PublicKey([3; 32]);
    let key = PrecomputedKey::new(&pk, &SecretKey::from_bytes([5; 32])).unwrap();
    if let Ok(layer) = RequestLayer::parse(data) {
        let _ = layer.open(&key);
    }
    let Some((&sel, plain)) = data.split_first() else {
        return;
    };
    let (kind, sendback) = [(0x80, 0), (0x81, RETURN_1), (0x82, RETURN_2)][usize::from(sel) % 3];
    let nonce = Nonce([sel; 24]);
    let mut packet = vec![kind];
    packet.extend_from_slice(&nonce.0);
    packet.extend_from_slice(&pk.0);
    packet.extend_from_slice(&key.encrypt(&nonce, plain));
    packet.extend(std::iter::repeat(0u8).take(sendback));
    if let Ok(layer) = RequestLayer::parse(&packet) {
        if let Ok(opened) = layer.open(&key) {
            let from = IpPort::Udp("192.0.2.1:33445".parse().unwrap());
            let out = opened
                .forward(&from, layer.sendback, &SymmetricKey::from_bytes([1; 32]), &nonce)
                .unwrap();
            assert!(out.len() < packet.len(), "a relay never grows a request");
        }
    }
});
