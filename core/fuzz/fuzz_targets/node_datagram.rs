//! The whole receive path: arbitrary datagrams into a DHT node, then its timers and outputs.
//! Checks that nothing panics and the outbox stays bounded.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rustox_core::dht::{DhtConfig, DhtNode};
use rustox_net_crypto::crypto::KeyPair;
use rustox_net_crypto::Timestamp;

fuzz_target!(|data: &[u8]| {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut node = DhtNode::new(
        KeyPair::generate(&mut rng),
        DhtConfig::default(),
        Timestamp::ZERO,
        &mut rng,
    );
    let mut now = Timestamp::ZERO;
    for (i, chunk) in data.split(|&b| b == 0xff).enumerate() {
        let from = std::net::SocketAddr::from(([127, 0, 0, (i % 250) as u8 + 1], 33445));
        let _ = node.handle_datagram(now, from, chunk, &mut rng);
        now = Timestamp::from_millis(now.as_millis() + 700);
        node.handle_timeout(now, &mut rng);
        let mut n = 0;
        while node.poll_transmit(now, &mut rng).is_some() {
            n += 1;
            assert!(n <= rustox_core::dht::node::MAX_OUTBOX);
        }
    }
});
