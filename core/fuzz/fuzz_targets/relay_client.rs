//! The TCP relay client's byte input (docs/protocol.md §7): whatever a relay sends after a valid
//! handshake reply — raw bytes, or arbitrary plaintexts sealed in valid frames so the packet
//! handling and route table are reached — never panics and never makes the client's output
//! or events grow past their bounds. Timers run, and the client sends to its peers and the
//! onion, between chunks; the driver writes everything, record by record, or nothing (the
//! relay stops reading). No record is longer than RECORD_SIZE or one frame.
#![no_main]
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rustox_core::relay::client::connection::DEFAULT_OUTPUT_LIMIT;
use rustox_core::relay::client::set::MAX_QUEUED_EVENTS;
use rustox_core::relay::client::{RelayClientConfig, RelayClients, CONTROL_RESERVE};
use rustox_core::relay::record::RECORD_SIZE;
use rustox_core::relay::wire::frame::MAX_FRAME_SIZE;
use rustox_core::relay::wire::{accept_hello, MAX_PLAINTEXT_SIZE};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;

/// Output a connection may hold: the data limit, the control reserve, and the raw hello.
const MAX_OUTPUT: usize = DEFAULT_OUTPUT_LIMIT + CONTROL_RESERVE + 128;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, data)) = data.split_first() else {
        return;
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let ours = KeyPair::generate(&mut rng);
    let relay = KeyPair::generate(&mut rng);
    let mut now = Timestamp::from_secs(1);
    let mut clients = RelayClients::new(ours, RelayClientConfig::default());
    let addr = std::net::SocketAddr::from(([203, 0, 113, 1], 33445));
    let peers = [PublicKey([1; 32]), PublicKey([2; 32])];
    for p in peers {
        clients.add_peer_relay(now, p, addr, relay.public).unwrap();
    }
    let (id, _) = clients.poll_connect(now).unwrap();
    clients.handle_connected(now, id, &mut rng);
    let hello = clients.poll_write(id).unwrap().to_vec();
    clients.consume(id, hello.len());
    let accepted = accept_hello(&relay.secret, &hello, &mut rng).unwrap();
    clients.handle_bytes(now, id, &accepted.reply);
    let (mut enc, _) = accepted.keys.split();
    for chunk in data.split(|&b| b == 0xff) {
        let bytes = if mode & 1 == 0 || chunk.is_empty() || chunk.len() > MAX_PLAINTEXT_SIZE {
            chunk.to_vec()
        } else {
            let mut framed = Vec::new();
            enc.encode(chunk, &mut framed).unwrap();
            framed
        };
        clients.handle_bytes(now, id, &bytes);
        let _ = clients.send_to_peer(now, &peers[chunk.len() % 2], chunk);
        if mode & 2 != 0 {
            let _ = clients.send_onion(now, chunk);
        }
        let queued = clients.queued(id);
        assert!(queued <= MAX_OUTPUT, "{queued} bytes queued");
        while let Some(out) = clients.poll_write(id) {
            // A record: whole frames within RECORD_SIZE, or one frame (or the hello) alone.
            assert!(
                out.len() <= RECORD_SIZE.max(MAX_FRAME_SIZE),
                "{} bytes in one record",
                out.len()
            );
            if mode & 4 != 0 {
                break;
            }
            let n = out.len();
            clients.consume(id, n);
        }
        let mut events = 0;
        while clients.poll_event().is_some() {
            events += 1;
        }
        assert!(events <= MAX_QUEUED_EVENTS);
        while clients.poll_close().is_some() {}
        while clients.poll_connect(now).is_some() {}
        now = clients
            .poll_timeout()
            .unwrap_or(now)
            .clamp(now, now + Duration::from_secs(5));
        clients.handle_timeout(now, &mut rng);
    }
    assert!(clients.connected_relays().count() <= 1);
});
