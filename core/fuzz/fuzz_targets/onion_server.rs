//! The onion server's whole receive path (docs/protocol.md §6.2, §6.3): arbitrary datagrams from
//! many sources, its timer in between. Nothing panics, no output is sent to port 0 or is
//! more than 110 bytes longer than its input, the store stays bounded, and every datagram is
//! counted once.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rustox_core::onion::server::announce_store::ONION_ANNOUNCE_MAX_ENTRIES;
use rustox_core::onion::server::{NoNodes, OnionConfig, OnionServer};
use rustox_net_crypto::crypto::KeyPair;
use rustox_net_crypto::Timestamp;

fuzz_target!(|data: &[u8]| {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let keys = KeyPair::generate(&mut rng);
    let mut server = OnionServer::new(&keys, OnionConfig::default(), Timestamp::ZERO, &mut rng);
    let mut now = Timestamp::ZERO;
    for (i, chunk) in data.split(|&b| b == 0xff).enumerate() {
        let from = std::net::SocketAddr::from(([127, 0, 0, (i % 250) as u8 + 1], i as u16));
        if let Ok(t) = server.handle_datagram(now, from, chunk, &NoNodes, &mut rng) {
            assert!(t.dst.port() != 0);
            assert!(t.payload.len() <= chunk.len() + 110);
        }
        now = Timestamp::from_secs(now.as_secs() + 61);
        server.handle_timeout(now, &mut rng);
    }
    assert!(server.store().len(now) <= ONION_ANNOUNCE_MAX_ENTRIES);
    let s = server.stats();
    assert_eq!(s.datagrams_in, s.forwarded() + s.total_dropped());
});
