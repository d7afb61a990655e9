//! The TCP relay server's whole input path (docs/protocol.md §7): arbitrary bytes to a few
//! connections, with accepts, closes and timers in between, plus two real clients linked to
//! each other so that frames open and packets are handled. Nothing panics, no connection's
//! output passes its bound, and the connection count agrees with the counters.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rand_chacha::rand_core::SeedableRng;
use rustox_core::relay::server::{ConnId, RelayConfig, RelayServer, CONTROL_RESERVE};
use rustox_core::relay::wire::{ClientHandshake, ExactBytes, FrameEncoder, Packet};
use rustox_net_crypto::crypto::KeyPair;
use rustox_net_crypto::Timestamp;

const LIMIT: usize = 1024;

fuzz_target!(|data: &[u8]| {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let config = RelayConfig {
        max_connections: 6,
        max_per_ip: 4,
        max_handshaking: 4,
        output_limit: LIMIT,
        onion_queue: 4,
        ..RelayConfig::default()
    };
    let mut s = RelayServer::new(KeyPair::generate(&mut rng), config);
    let mut now = Timestamp::from_secs(1);
    let addr = |i: u8| std::net::SocketAddr::from(([127, 0, 0, i % 3], 1000));
    // Two real clients, each with its encoder: fuzz bytes become their packets.
    let mut encs: Vec<(ConnId, FrameEncoder)> = Vec::new();
    let keys: Vec<KeyPair> = (0..2).map(|_| KeyPair::generate(&mut rng)).collect();
    for (i, k) in keys.iter().enumerate() {
        let id = ConnId(100 + i as u64);
        s.handle_accept(now, id, addr(i as u8)).unwrap();
        // The server's key is a generated one, never low-order.
        let Ok((hs, hello)) = ClientHandshake::new(k, &s.public_key(), &mut rng) else {
            return;
        };
        s.handle_bytes(now, id, &hello, &mut rng);
        let mut reply = ExactBytes::<96>::default();
        let mut out: &[u8] = s.poll_transmit(id);
        let keys = hs.open_reply(reply.fill(&mut out).unwrap()).unwrap();
        let n = s.poll_transmit(id).len();
        s.handle_written(id, n);
        encs.push((id, keys.split().0));
    }
    for (i, k) in keys.iter().enumerate() {
        let (id, enc) = &mut encs[1 - i];
        let mut f = Vec::new();
        enc.encode(&Packet::RoutingRequest { pk: k.public }.to_vec(), &mut f).unwrap();
        s.handle_bytes(now, *id, &f, &mut rng);
    }
    for chunk in data.split(|&b| b == 0xff) {
        let Some((&op, rest)) = chunk.split_first() else { continue };
        let conn = ConnId(u64::from(op >> 4) % 8);
        match op & 0x0f {
            0 => {
                let _ = s.handle_accept(now, conn, addr(op));
            }
            1 => s.handle_closed(conn),
            2 => {
                now = Timestamp::from_micros(now.as_micros() + u64::from(op) * 200_000);
                s.handle_timeout(now, &mut rng);
            }
            3 | 4 => {
                // A plaintext from one of the real clients.
                let (id, enc) = &mut encs[usize::from(op & 1)];
                let mut f = Vec::new();
                if enc.encode(rest, &mut f).is_ok() {
                    s.handle_bytes(now, *id, &f, &mut rng);
                }
            }
            5 => {
                let n = s.poll_transmit(conn).len();
                s.handle_written(conn, n / 2);
            }
            _ => s.handle_bytes(now, conn, rest, &mut rng),
        }
        for id in (0..8).map(ConnId).chain([ConnId(100), ConnId(101)]) {
            assert!(s.queued(id) <= LIMIT + CONTROL_RESERVE + 96);
        }
        assert!(s.connections() <= 6);
        while s.poll_close().is_some() {}
        while s.poll_onion_request().is_some() {}
        while s.poll_forward_request().is_some() {}
        while s.poll_ready().is_some() {}
    }
    let st = s.stats();
    let closed: u64 = st.closed.iter().sum::<u64>() + st.closed_by_peer;
    assert_eq!(st.accepted - closed, s.connections() as u64);
});
