//! A whole endpoint fed arbitrary datagrams: never panics, and random bytes never create a
//! connection.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rustox_net_crypto::crypto::{KeyPair, SecretKey};
use rustox_net_crypto::{Endpoint, EndpointConfig, Timestamp, TransportConfig};

fuzz_target!(|data: &[u8]| {
    let mut endpoint = Endpoint::new(
        Timestamp::ZERO,
        KeyPair::from_secret(SecretKey::from_bytes([1; 32])),
        KeyPair::from_secret(SecretKey::from_bytes([2; 32])),
        EndpointConfig {
            transport: TransportConfig::default(),
            accept_all: true,
        },
        Box::new(rand_chacha::ChaCha8Rng::seed_from_u64(0)),
    );
    let from = "192.0.2.7:33445".parse().unwrap();
    let now = Timestamp::from_secs(100);
    for chunk in data.split(|&b| b == 0xff) {
        let _ = endpoint.handle_datagram(now, from, chunk);
        while endpoint.poll_transmit(now).is_some() {}
    }
    assert!(endpoint.connection_ids().is_empty());
});
