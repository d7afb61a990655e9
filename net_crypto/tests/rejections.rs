//! Bad input (issue item 11): every datagram below is dropped with a counted, typed
//! `DropReason`, nothing panics, and the session it targets is left exactly as it was.

mod common;

use std::time::Duration;

use common::{Pair, Side};
use proptest::prelude::*;
use rand_chacha::rand_core::SeedableRng;
use rustox_net_crypto::crypto::{
    sha512, KeyPair, Nonce, PrecomputedKey, PublicKey, SymmetricKey, SMALL_ORDER_POINTS,
};
use rustox_net_crypto::packets::{
    CookieRequest, CookieRequestPayload, CookieResponse, CookieResponsePayload, DataPacket,
    DataPlaintext, Handshake, HandshakePayload,
};
use rustox_net_crypto::{
    ConnectError, ConnectionEvent, ConnectionId, ConnectionStatus, Destination, DropReason,
    EndpointLimits,
};

const HANDSHAKE: u8 = 0x1a;
const COOKIE_REQUEST: u8 = 0x18;
const COOKIE_RESPONSE: u8 = 0x19;
const DATA: u8 = 0x1b;

/// What must not change when a packet is refused: the status, the transport's counters and
/// estimates, the events reported so far, and the set of connections.
#[derive(Debug, PartialEq)]
struct Snapshot {
    ids: Vec<ConnectionId>,
    status: Vec<Option<ConnectionStatus>>,
    stats: Vec<String>,
    events: usize,
}

fn snapshot(p: &mut Pair, side: Side) -> Snapshot {
    p.collect_events();
    let node = p.node(side);
    let ids = node.endpoint.connection_ids();
    Snapshot {
        status: ids
            .iter()
            .map(|id| node.endpoint.connection(*id).map(|c| c.status()))
            .collect(),
        stats: ids
            .iter()
            .map(|id| {
                format!(
                    "{:?}",
                    node.endpoint.connection(*id).unwrap().transport().stats()
                )
            })
            .collect(),
        ids,
        events: node.events.len(),
    }
}

/// Delivers `datagram` to `side`, expects `reason`, and checks it was counted and that
/// nothing changed.
fn expect_drop(p: &mut Pair, side: Side, datagram: &[u8], reason: DropReason) {
    let before = snapshot(p, side);
    let counted = p.node(side).endpoint.drop_counters().get(reason);
    assert_eq!(p.deliver(side, datagram), Err(reason));
    assert_eq!(
        p.node(side).endpoint.drop_counters().get(reason),
        counted + 1,
        "{reason:?} counted"
    );
    let after = snapshot(p, side);
    assert_eq!(before, after, "state changed after a {reason:?} drop");
    // Nothing is sent in answer to a refused packet.
    let now = p.now;
    assert!(
        p.node(side).endpoint.poll_transmit(now).is_none() || reason == DropReason::NotNetCrypto
    );
}

fn established(seed: u64) -> (Pair, ConnectionId, ConnectionId) {
    let mut p = Pair::new(seed);
    let (a, b) = p.establish(Side::A);
    p.run_for(Duration::from_millis(50));
    (p, a, b)
}

/// A sends one lossy packet; returns its datagram (delivered to B).
fn lossy_from_a(p: &mut Pair, a: ConnectionId, tag: u8) -> Vec<u8> {
    let now = p.now;
    p.a.endpoint
        .connection_mut(a)
        .unwrap()
        .send_lossy(now, &[200, tag])
        .unwrap();
    let t = p.a.endpoint.poll_transmit(now).expect("lossy datagram");
    assert_eq!(t.payload[0], DATA);
    p.deliver(Side::B, &t.payload).expect("first copy accepted");
    t.payload
}

#[test]
fn truncated_handshake_is_dropped_as_bad_length() {
    let mut p = Pair::new(20);
    p.filter = Some(Box::new(|side, t| {
        !(side == Side::A && t.payload[0] == HANDSHAKE)
    }));
    p.connect(Side::A);
    p.run_for(Duration::from_millis(10));
    let hs = p.sent(Side::A, HANDSHAKE)[0].transmit.payload.clone();
    expect_drop(&mut p, Side::B, &hs[..384], DropReason::BadLength);
    expect_drop(&mut p, Side::B, &hs[..1], DropReason::BadLength);
    let mut long = hs.clone();
    long.push(0);
    expect_drop(&mut p, Side::B, &long, DropReason::BadLength);
    // The intact one still works afterwards.
    assert_eq!(p.deliver(Side::B, &hs), Ok(()));
}

#[test]
fn truncated_and_oversized_data_packets_are_dropped_as_bad_length() {
    let (mut p, a, _) = established(21);
    let d = lossy_from_a(&mut p, a, 1);
    expect_drop(&mut p, Side::B, &d[..27], DropReason::BadLength);
    let mut big = d.clone();
    big.resize(1401, 7);
    expect_drop(&mut p, Side::B, &big, DropReason::BadLength);
    expect_drop(
        &mut p,
        Side::B,
        &vec![COOKIE_REQUEST; 2000],
        DropReason::BadLength,
    );
    expect_drop(
        &mut p,
        Side::B,
        &[COOKIE_RESPONSE; 160],
        DropReason::BadLength,
    );
}

#[test]
fn other_layers_packets_are_reported_as_not_net_crypto() {
    let (mut p, _, _) = established(22);
    for first in [0x00u8, 0x02, 0x20, 0x83, 0xf0] {
        expect_drop(&mut p, Side::B, &[first; 64], DropReason::NotNetCrypto);
    }
    expect_drop(&mut p, Side::B, &[], DropReason::NotNetCrypto);
}

#[test]
fn data_packet_under_the_wrong_key_or_tampered_is_dropped() {
    let (mut p, a, _) = established(23);
    let d = lossy_from_a(&mut p, a, 1);
    let mut tampered = d.clone();
    *tampered.last_mut().unwrap() ^= 0x40;
    expect_drop(&mut p, Side::B, &tampered, DropReason::DecryptionFailed);

    // A well-formed packet boxed under a key that is not the session key.
    let wrong = PrecomputedKey::new(&p.a.real.public, &p.b.real.secret).unwrap();
    let mut nonce = Nonce([0; 24]);
    nonce.0[22..].copy_from_slice(&d[1..3]);
    nonce.increment();
    let forged = DataPacket::seal(
        &wrong,
        &nonce,
        &DataPlaintext {
            buffer_start: 0,
            packet_number: 0,
            payload: vec![200, 1],
        },
    )
    .unwrap()
    .to_bytes();
    expect_drop(&mut p, Side::B, &forged, DropReason::DecryptionFailed);
}

#[test]
fn replayed_data_packet_is_dropped_and_delivered_only_once() {
    let (mut p, a, _) = established(24);
    let d = lossy_from_a(&mut p, a, 42);
    expect_drop(&mut p, Side::B, &d, DropReason::ReplayedNonce);
    p.collect_events();
    let copies = p
        .connection_events(Side::B)
        .iter()
        .filter(|e| **e == ConnectionEvent::Lossy(vec![200, 42]))
        .count();
    assert_eq!(copies, 1);
}

#[test]
fn reordered_data_packets_within_the_window_are_accepted() {
    let (mut p, a, _) = established(25);
    let now = p.now;
    let conn = p.a.endpoint.connection_mut(a).unwrap();
    conn.send_lossy(now, &[201, 1]).unwrap();
    conn.send_lossy(now, &[201, 2]).unwrap();
    let first = p.a.endpoint.poll_transmit(now).unwrap().payload;
    let second = p.a.endpoint.poll_transmit(now).unwrap().payload;
    assert_eq!(p.deliver(Side::B, &second), Ok(()));
    assert_eq!(p.deliver(Side::B, &first), Ok(()));
}

#[test]
fn data_packet_older_than_the_replay_window_is_dropped_as_stale() {
    let (mut p, a, _) = established(26);
    let old = lossy_from_a(&mut p, a, 0);
    // Send more than the 2048-packet window after it; B never saw `old` twice, but cannot
    // tell any more, so it refuses it.
    let now = p.now;
    let mut later = Vec::new();
    for i in 0..2100u32 {
        p.a.endpoint
            .connection_mut(a)
            .unwrap()
            .send_lossy(now, &[202, (i % 251) as u8 | 1])
            .unwrap();
        later.push(p.a.endpoint.poll_transmit(now).unwrap().payload);
    }
    // Deliver only the newest so B's window moves past `old`.
    assert_eq!(p.deliver(Side::B, later.last().unwrap()), Ok(()));
    expect_drop(&mut p, Side::B, &old, DropReason::StaleNonce);
}

#[test]
fn data_packet_below_the_moved_receive_base_fails_decryption() {
    let (mut p, a, _) = established(27);
    let old = lossy_from_a(&mut p, a, 0);
    let now = p.now;
    // 43700 packets: the diff passes 43690, so B's base moves up by 21845 (docs/protocol.md §2.4)
    // and a nonce below it rebuilds to the wrong value.
    for i in 0..43_700u32 {
        p.a.endpoint
            .connection_mut(a)
            .unwrap()
            .send_lossy(now, &[203, i as u8 | 1])
            .unwrap();
        let d = p.a.endpoint.poll_transmit(now).unwrap().payload;
        if i % 1000 == 999 || i == 43_699 {
            assert_eq!(p.deliver(Side::B, &d), Ok(()));
        }
    }
    expect_drop(&mut p, Side::B, &old, DropReason::DecryptionFailed);
}

#[test]
fn handshake_with_a_stale_cookie_is_dropped() {
    let mut p = Pair::new(28);
    p.filter = Some(Box::new(|side, t| {
        !(side == Side::A && t.payload[0] == HANDSHAKE)
    }));
    p.connect(Side::A);
    p.run_for(Duration::from_millis(10));
    let hs = p.sent(Side::A, HANDSHAKE)[0].transmit.payload.clone();
    p.now += Duration::from_secs(16);
    expect_drop(&mut p, Side::B, &hs, DropReason::StaleCookie);
    assert!(p.b.endpoint.connection_ids().is_empty());
}

#[test]
fn handshake_within_fifteen_seconds_of_its_cookie_is_accepted() {
    let mut p = Pair::new(29);
    p.filter = Some(Box::new(|side, t| {
        !(side == Side::A && t.payload[0] == HANDSHAKE)
    }));
    p.connect(Side::A);
    p.run_for(Duration::from_millis(10));
    let hs = p.sent(Side::A, HANDSHAKE)[0].transmit.payload.clone();
    p.now += Duration::from_secs(14);
    assert_eq!(p.deliver(Side::B, &hs), Ok(()));
}

#[test]
fn cookie_response_with_a_wrong_echo_id_is_dropped() {
    let mut p = Pair::new(30);
    p.filter = Some(Box::new(|_, _| false));
    let id = p.connect(Side::A);
    p.flush();
    let req = CookieRequest::parse(&p.sent(Side::A, COOKIE_REQUEST)[0].transmit.payload).unwrap();
    // Answer it as B would, but with another echo id.
    let shared = PrecomputedKey::new(&p.a.dht.public, &p.b.dht.secret).unwrap();
    let payload = req.open(&shared).unwrap();
    let cookie = rustox_net_crypto::packets::Cookie {
        time: p.now.as_secs(),
        real_pk: p.a.real.public,
        dht_pk: p.a.dht.public,
    }
    .seal_with_nonce(&SymmetricKey::from_bytes([3; 32]), &Nonce([4; 24]));
    let bad = CookieResponse::seal(
        &shared,
        Nonce([5; 24]),
        &CookieResponsePayload {
            cookie,
            echo_id: payload.echo_id.wrapping_add(1),
        },
    )
    .to_bytes();
    expect_drop(&mut p, Side::A, &bad, DropReason::WrongEchoId);
    assert_eq!(
        p.status(Side::A, id),
        Some(ConnectionStatus::CookieRequesting)
    );
    // The right echo id is accepted.
    let good = CookieResponse::seal(
        &shared,
        Nonce([6; 24]),
        &CookieResponsePayload {
            cookie,
            echo_id: payload.echo_id,
        },
    )
    .to_bytes();
    assert_eq!(p.deliver(Side::A, &good), Ok(()));
    assert_eq!(p.status(Side::A, id), Some(ConnectionStatus::HandshakeSent));
}

#[test]
fn cookie_response_outside_cookie_requesting_is_dropped() {
    let (mut p, _, _) = established(31);
    let resp = p.sent(Side::B, COOKIE_RESPONSE)[0].transmit.payload.clone();
    expect_drop(&mut p, Side::A, &resp, DropReason::WrongState);
}

#[test]
fn handshake_to_an_established_connection_is_ignored() {
    let (mut p, _, _) = established(32);
    let hs = p.sent(Side::A, HANDSHAKE)[0].transmit.payload.clone();
    expect_drop(&mut p, Side::B, &hs, DropReason::HandshakeIgnored);
}

#[test]
fn handshake_with_a_cookie_that_is_not_ours_is_dropped() {
    let (mut p, _, _) = established(33);
    let mut hs = p.sent(Side::A, HANDSHAKE)[0].transmit.payload.clone();
    hs[40] ^= 1; // inside the cookie's box
    expect_drop(&mut p, Side::B, &hs, DropReason::BadCookie);
    let mut random = vec![HANDSHAKE; 385];
    random[1..]
        .iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = i as u8);
    expect_drop(&mut p, Side::B, &random, DropReason::BadCookie);
}

#[test]
fn handshake_whose_hash_does_not_match_its_cookie_is_dropped() {
    let mut p = Pair::new(34);
    p.filter = Some(Box::new(|side, t| {
        !(side == Side::A && t.payload[0] == HANDSHAKE)
    }));
    p.connect(Side::A);
    p.run_for(Duration::from_millis(10));
    let hs = Handshake::parse(&p.sent(Side::A, HANDSHAKE)[0].transmit.payload).unwrap();
    // Rebuild A's handshake (the test holds A's real key) with a wrong cookie hash.
    let shared = PrecomputedKey::new(&p.b.real.public, &p.a.real.secret).unwrap();
    let mut payload: HandshakePayload = hs.open(&shared).unwrap();
    assert_eq!(payload.cookie_hash, sha512(&hs.cookie.0));
    payload.cookie_hash[0] ^= 1;
    let forged = Handshake::seal(hs.cookie, &shared, Nonce([9; 24]), &payload).to_bytes();
    expect_drop(&mut p, Side::B, &forged, DropReason::CookieHashMismatch);
    // A box under another key with B's own valid cookie does not open.
    let other = PrecomputedKey::new(&p.b.real.public, &p.b.real.secret).unwrap();
    let forged = Handshake::seal(hs.cookie, &other, Nonce([9; 24]), &payload).to_bytes();
    expect_drop(&mut p, Side::B, &forged, DropReason::DecryptionFailed);
}

#[test]
fn handshake_from_another_peer_at_a_connections_address_is_dropped() {
    let (mut p, _, _) = established(35);
    // C gets a genuine cookie from B, then sends its handshake from A's address.
    let mut c = common::node(500, 50000, false);
    c.endpoint.allow_peer(p.b.real.public);
    let now = p.now;
    c.endpoint
        .connect(now, p.b.addr, p.b.real.public, p.b.dht.public)
        .unwrap();
    let req = c.endpoint.poll_transmit(now).unwrap();
    assert_eq!(
        p.b.endpoint.handle_datagram(now, c.addr, &req.payload),
        Ok(())
    );
    let resp = p.b.endpoint.poll_transmit(now).unwrap();
    assert_eq!(resp.destination.udp(), Some(c.addr));
    assert_eq!(
        c.endpoint.handle_datagram(now, p.b.addr, &resp.payload),
        Ok(())
    );
    let hs = c.endpoint.poll_transmit(now).unwrap();
    assert_eq!(hs.payload[0], HANDSHAKE);
    expect_drop(&mut p, Side::B, &hs.payload, DropReason::WrongPeer);
}

#[test]
fn data_from_an_unknown_address_is_dropped() {
    let (mut p, a, _) = established(36);
    let now = p.now;
    p.a.endpoint
        .connection_mut(a)
        .unwrap()
        .send_lossy(now, &[200, 1])
        .unwrap();
    let d = p.a.endpoint.poll_transmit(now).unwrap().payload;
    let before = snapshot(&mut p, Side::B);
    let stranger: std::net::SocketAddr = "192.0.2.1:9".parse().unwrap();
    assert_eq!(
        p.b.endpoint.handle_datagram(now, stranger, &d),
        Err(DropReason::UnknownConnection)
    );
    assert_eq!(before, snapshot(&mut p, Side::B));
}

#[test]
fn lossless_packet_number_outside_the_window_is_dropped() {
    let (mut p, a, b) = established(37);
    let start =
        p.b.endpoint
            .connection(b)
            .unwrap()
            .transport()
            .recv_buffer_start();
    let forged =
        p.a.endpoint
            .connection_mut(a)
            .unwrap()
            .forge_data_packet(start.wrapping_add(40_000), &[16, 1, 2])
            .unwrap();
    expect_drop(&mut p, Side::B, &forged, DropReason::PacketOutsideWindow);
}

#[test]
fn reserved_and_invalid_packet_ids_are_dropped() {
    let (mut p, a, _) = established(38);
    for id in [3u8, 15, 255] {
        let forged =
            p.a.endpoint
                .connection_mut(a)
                .unwrap()
                .forge_data_packet(0, &[id, 1])
                .unwrap();
        expect_drop(&mut p, Side::B, &forged, DropReason::InvalidPacketId);
    }
    // id 0 cannot even be framed: it would read back as padding.
    assert!(p
        .a
        .endpoint
        .connection_mut(a)
        .unwrap()
        .forge_data_packet(0, &[0, 1])
        .is_none());
}

#[test]
fn handshakes_beyond_the_limit_are_dropped_and_counted() {
    let mut b = common::node(600, 33446, true);
    b.endpoint.set_limits(EndpointLimits {
        max_handshakes_in_progress: 2,
        ..EndpointLimits::default()
    });
    let now = rustox_net_crypto::Timestamp::from_secs(10);
    let mut results = Vec::new();
    for i in 0..3u64 {
        let mut c = common::node(700 + i, 40000 + i as u16, false);
        c.endpoint
            .connect(now, b.addr, b.real.public, b.dht.public)
            .unwrap();
        let req = c.endpoint.poll_transmit(now).unwrap();
        b.endpoint
            .handle_datagram(now, c.addr, &req.payload)
            .unwrap();
        let resp = b.endpoint.poll_transmit(now).unwrap();
        c.endpoint
            .handle_datagram(now, b.addr, &resp.payload)
            .unwrap();
        let hs = c.endpoint.poll_transmit(now).unwrap();
        results.push(b.endpoint.handle_datagram(now, c.addr, &hs.payload));
    }
    assert_eq!(
        results,
        vec![Ok(()), Ok(()), Err(DropReason::TooManyHandshakes)]
    );
    assert_eq!(b.endpoint.connection_ids().len(), 2);
    assert_eq!(
        b.endpoint
            .drop_counters()
            .get(DropReason::TooManyHandshakes),
        1
    );
}

#[test]
fn connections_beyond_the_limit_are_refused() {
    let mut a = common::node(800, 1000, false);
    a.endpoint.set_limits(EndpointLimits {
        max_connections: 2,
        ..EndpointLimits::default()
    });
    let now = rustox_net_crypto::Timestamp::ZERO;
    for i in 0..3u8 {
        let peer = common::node(900 + u64::from(i), 2000 + u16::from(i), false);
        let r = a
            .endpoint
            .connect(now, peer.addr, peer.real.public, peer.dht.public);
        assert_eq!(r.is_ok(), i < 2, "connect #{i}: {r:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_datagrams_never_panic_or_change_an_established_session(
        datagrams in proptest::collection::vec(
            (prop_oneof![Just(0x18u8), Just(0x19), Just(0x1a), Just(0x1b), any::<u8>()],
             proptest::collection::vec(any::<u8>(), 0..1500)),
            1..16)
    ) {
        let (mut p, _, _) = established(40);
        let before = snapshot(&mut p, Side::B);
        for (kind, mut bytes) in datagrams {
            bytes.insert(0, kind);
            let r = p.deliver(Side::B, &bytes);
            prop_assert!(r.is_err(), "random bytes accepted: {:?}", r);
        }
        prop_assert_eq!(before, snapshot(&mut p, Side::B));
    }
}

#[test]
fn cookie_requests_beyond_a_sources_rate_limit_are_dropped_and_other_sources_answered() {
    let mut p = Pair::new(41);
    p.filter = Some(Box::new(|_, _| false));
    p.connect(Side::A);
    p.flush();
    let req = p.sent(Side::A, COOKIE_REQUEST)[0].transmit.payload.clone();
    // c-toxcore v0.2.22+'s bucket, here for each source: a burst of 10, then one per 100 ms.
    for _ in 0..10 {
        assert_eq!(p.deliver(Side::B, &req), Ok(()));
    }
    let now = p.now;
    let responses = std::iter::from_fn(|| p.b.endpoint.poll_transmit(now)).count();
    assert_eq!(responses, 10);
    expect_drop(&mut p, Side::B, &req, DropReason::SourceRateLimited);
    // The same request from another port of the same host has a bucket of its own.
    let mut other_port = p.a.addr;
    other_port.set_port(other_port.port().wrapping_add(1));
    assert_eq!(p.b.endpoint.handle_datagram(now, other_port, &req), Ok(()));
    let answer = p.b.endpoint.poll_transmit(now).expect("a cookie response");
    assert_eq!(answer.destination, Destination::Udp(other_port));
    p.now += Duration::from_millis(100);
    assert_eq!(p.deliver(Side::B, &req), Ok(()));
}

// ----- low-order public keys ---------------------------------------------------------------
//
// libsodium's `crypto_box_beforenm` refuses a public key of small order, so c-toxcore drops
// what names one; the key agreed with such a point would be HSalsa20 of 32 zero bytes, which
// anyone can compute. Each forged packet below is the attacker's best: sealed under that key,
// so that an endpoint without the check would accept it.

/// The seven points of libsodium 1.0.18's `has_small_order` blacklist.
fn small_order_points() -> impl Iterator<Item = PublicKey> {
    SMALL_ORDER_POINTS.into_iter()
}

/// beforenm(low-order point, any secret key): HSalsa20 of the all-zero X25519 output.
fn key_anyone_can_compute() -> SymmetricKey {
    use salsa20::cipher::consts::U10;
    SymmetricKey::from_bytes(salsa20::hsalsa::<U10>(&[0u8; 32].into(), &[0u8; 16].into()).into())
}

#[test]
fn cookie_request_from_a_low_order_dht_key_is_dropped() {
    let mut p = Pair::new(40);
    for low in small_order_points() {
        // CookieRequest::seal's layout: [real pk 32][padding 32][echo id 8].
        let nonce = Nonce([1; 24]);
        let mut plain = [0u8; 72];
        plain[..32].copy_from_slice(p.a.real.public.as_bytes());
        let boxed = key_anyone_can_compute().encrypt(&nonce, &plain);
        let request = CookieRequest {
            sender_dht_pk: low,
            nonce,
            encrypted: boxed.try_into().unwrap(),
        }
        .to_bytes();
        expect_drop(&mut p, Side::B, &request, DropReason::LowOrderPublicKey);
    }
}

#[test]
fn handshake_whose_cookie_names_a_low_order_real_key_is_dropped() {
    // B accepts anyone, so only the key check stands between the attacker and a session.
    let mut b = common::node(41, 33446, true);
    let attacker_dht = KeyPair::generate(&mut rand_chacha::ChaCha8Rng::seed_from_u64(41));
    let now = rustox_net_crypto::Timestamp::from_secs(1000);
    for (port, low) in (4000..).zip(small_order_points()) {
        // From a port of its own each time: the per-source rate limit is not what is tested.
        let from = std::net::SocketAddr::from(([192, 0, 2, 9], port));
        // A genuine cookie from B naming the low-order key as the attacker's real key.
        let dht_shared = PrecomputedKey::new(&b.dht.public, &attacker_dht.secret).unwrap();
        let request = CookieRequest::seal(
            attacker_dht.public,
            &dht_shared,
            Nonce([2; 24]),
            &CookieRequestPayload {
                sender_real_pk: low,
                echo_id: 7,
            },
        );
        assert_eq!(
            b.endpoint.handle_datagram(now, from, &request.to_bytes()),
            Ok(())
        );
        let response = b.endpoint.poll_transmit(now).expect("cookie response");
        let cookie = CookieResponse::parse(&response.payload)
            .unwrap()
            .open(&dht_shared)
            .unwrap()
            .cookie;
        // Handshake::seal's layout: [base nonce 24][session pk 32][sha512(cookie) 64]
        // [other cookie 112], under the key anyone can compute.
        let mut plain = vec![0u8; 24];
        plain.extend_from_slice(attacker_dht.public.as_bytes());
        plain.extend_from_slice(&sha512(&cookie.0));
        plain.extend_from_slice(&cookie.0);
        let nonce = Nonce([3; 24]);
        let handshake = Handshake {
            cookie,
            nonce,
            encrypted: key_anyone_can_compute()
                .encrypt(&nonce, &plain)
                .try_into()
                .unwrap(),
        };
        assert_eq!(
            b.endpoint.handle_datagram(now, from, &handshake.to_bytes()),
            Err(DropReason::LowOrderPublicKey)
        );
        assert!(b.endpoint.connection_ids().is_empty());
        assert!(b.endpoint.poll_transmit(now).is_none());
    }
    assert_eq!(
        b.endpoint
            .drop_counters()
            .get(DropReason::LowOrderPublicKey),
        7
    );
}

#[test]
fn handshake_with_a_low_order_session_key_creates_no_connection() {
    let mut p = Pair::new(42);
    p.filter = Some(Box::new(|side, t| {
        !(side == Side::A && t.payload[0] == HANDSHAKE)
    }));
    p.connect(Side::A);
    p.run_for(Duration::from_millis(10));
    let genuine = p.sent(Side::A, HANDSHAKE)[0].transmit.payload.clone();
    let hs = Handshake::parse(&genuine).unwrap();
    let shared = PrecomputedKey::new(&p.b.real.public, &p.a.real.secret).unwrap();
    let mut payload: HandshakePayload = hs.open(&shared).unwrap();
    for low in small_order_points() {
        payload.session_pk = low;
        let forged = Handshake::seal(hs.cookie, &shared, Nonce([9; 24]), &payload).to_bytes();
        expect_drop(&mut p, Side::B, &forged, DropReason::LowOrderPublicKey);
        assert!(p.b.endpoint.connection_ids().is_empty());
    }
    assert_eq!(p.deliver(Side::B, &genuine), Ok(()));
    assert_eq!(p.b.endpoint.connection_ids().len(), 1);
}

#[test]
fn handshake_with_a_low_order_session_key_leaves_a_waiting_connection_as_it_was() {
    let mut p = Pair::new(43);
    p.filter = Some(Box::new(|side, t| {
        !(side == Side::B && t.payload[0] == HANDSHAKE)
    }));
    let id = p.connect(Side::A);
    p.run_for(Duration::from_millis(10));
    assert_eq!(p.status(Side::A, id), Some(ConnectionStatus::HandshakeSent));
    let genuine = p.sent(Side::B, HANDSHAKE)[0].transmit.payload.clone();
    let hs = Handshake::parse(&genuine).unwrap();
    let shared = PrecomputedKey::new(&p.a.real.public, &p.b.real.secret).unwrap();
    let mut payload: HandshakePayload = hs.open(&shared).unwrap();
    payload.session_pk = small_order_points().nth(2).unwrap();
    let forged = Handshake::seal(hs.cookie, &shared, Nonce([9; 24]), &payload).to_bytes();
    expect_drop(&mut p, Side::A, &forged, DropReason::LowOrderPublicKey);
    // From a new address (the peer moved): refused, and the connection keeps its address.
    let now = p.now;
    let elsewhere: std::net::SocketAddr = "192.0.2.10:5000".parse().unwrap();
    assert_eq!(
        p.a.endpoint.handle_datagram(now, elsewhere, &forged),
        Err(DropReason::LowOrderPublicKey)
    );
    let conn = p.a.endpoint.connection(id).unwrap();
    assert_eq!(conn.peer_addr(), Some(p.b.addr));
    assert_eq!(conn.status(), ConnectionStatus::HandshakeSent);
    assert_eq!(p.deliver(Side::A, &genuine), Ok(()));
    assert_eq!(p.status(Side::A, id), Some(ConnectionStatus::NotConfirmed));
}

#[test]
fn connecting_to_a_low_order_key_is_refused_and_uses_up_nothing() {
    let mut p = Pair::new(44);
    let now = p.now;
    let (addr, real, dht) = (p.b.addr, p.b.real.public, p.b.dht.public);
    for low in small_order_points() {
        for (peer_real, peer_dht) in [(low, dht), (real, low)] {
            assert_eq!(
                p.a.endpoint.connect(now, addr, peer_real, peer_dht),
                Err(ConnectError::LowOrderPublicKey)
            );
        }
    }
    assert!(p.a.endpoint.connection_ids().is_empty());
    assert!(p.a.endpoint.poll_transmit(now).is_none());
    assert_eq!(p.connect(Side::A), ConnectionId(0), "no id was used up");
}
