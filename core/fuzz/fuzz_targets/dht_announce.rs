//! Forwarding 0x90–0x92 and DHT announcement requests 0x93/0x95/0x97: raw datagrams into a
//! server, and arbitrary bodies sealed under the requester's key so the body parsers are
//! reached; every output must be a bounded datagram.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rustox_core::dht::announce::{AnnounceConfig, AnnounceOutput, AnnounceServer, ForwardRoute};
use rustox_core::dht::PackedNode;
use rustox_core::onion::server::CloseNodes;
use rustox_net_crypto::crypto::{KeyPair, Nonce, PrecomputedKey, PublicKey, SecretKey};
use rustox_net_crypto::Timestamp;
use std::net::SocketAddr;

struct Dht;
impl CloseNodes for Dht {
    fn closest_nodes(&self, _: Timestamp, _: &PublicKey, _: bool) -> Vec<PackedNode> {
        vec![PackedNode::udp("203.0.113.1:33445".parse().unwrap(), PublicKey([1; 32]))]
    }
}
impl ForwardRoute for Dht {
    fn close_addr(&self, _: Timestamp, pk: &PublicKey) -> Option<SocketAddr> {
        (pk.0[0] & 1 == 0).then(|| "203.0.113.2:33445".parse().unwrap())
    }
}

fuzz_target!(|data: &[u8]| {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let keys = KeyPair::from_secret(SecretKey::from_bytes([5; 32]));
    let now = Timestamp::from_secs(10_000);
    let mut server = AnnounceServer::new(&keys, AnnounceConfig::default(), now, &mut rng);
    let from: SocketAddr = "192.0.2.1:4000".parse().unwrap();
    let check = |out: Result<AnnounceOutput, _>| {
        if let Ok(AnnounceOutput::Udp(t)) = out {
            assert!(t.payload.len() <= 2048 && t.dst.port() != 0);
        }
    };
    check(server.handle_datagram(now, from, data, &Dht, &mut rng));
    // The same bytes as a sealed body of each request kind.
    let client = KeyPair::from_secret(SecretKey::from_bytes([7; 32]));
    let key = PrecomputedKey::new(&keys.public, &client.secret).unwrap();
    let nonce = Nonce([3; 24]);
    for kind in [0x93u8, 0x95, 0x97] {
        let mut req = vec![kind];
        req.extend_from_slice(client.public.as_bytes());
        req.extend_from_slice(&nonce.0);
        req.extend_from_slice(&key.encrypt(&nonce, data));
        check(server.handle_datagram(now, from, &req, &Dht, &mut rng));
    }
});
