//! The onion client's receive path (docs/protocol.md §6.3): arbitrary datagrams, from anywhere,
//! between its timers, while it announces and searches for a friend. Nothing panics, every
//! datagram is either taken or counted as dropped, and the tables stay bounded.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rustox_core::dht::PackedNode;
use rustox_core::onion::client::{OnionClient, OnionClientConfig};
use rustox_net_crypto::crypto::KeyPair;
use rustox_net_crypto::Timestamp;

fuzz_target!(|data: &[u8]| {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let keys = KeyPair::generate(&mut rng);
    let dht = KeyPair::generate(&mut rng);
    let mut now = Timestamp::from_secs(1);
    let mut client = OnionClient::new(keys, dht.public, OnionClientConfig::default(), now, &mut rng);
    for i in 0..5u8 {
        let pk = KeyPair::generate(&mut rng).public;
        client.add_bootstrap_node(PackedNode::udp(([203, 0, 113, i + 1], 33445).into(), pk));
    }
    let friend = KeyPair::generate(&mut rng).public;
    client.add_friend(friend, &mut rng).unwrap();
    client.handle_timeout(now, &mut rng);
    let mut taken = 0u64;
    let mut fed = 0u64;
    for (i, chunk) in data.split(|&b| b == 0xff).enumerate() {
        let from = std::net::SocketAddr::from(([203, 0, 113, (i % 5) as u8 + 1], 33445));
        fed += 1;
        if client.handle_datagram(now, from, chunk, &mut rng).is_ok() {
            taken += 1;
        }
        while client.poll_transmit().is_some() {}
        while client.poll_event().is_some() {}
        now = now.max(client.poll_timeout()).min(now + std::time::Duration::from_secs(2));
        client.handle_timeout(now, &mut rng);
    }
    let s = client.stats();
    assert_eq!(fed, taken + s.total_dropped());
    assert!(s.sendbacks <= 256 && s.announce_nodes <= 12 && s.friend_nodes <= 8);
});
