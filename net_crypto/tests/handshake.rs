//! The handshake state machine of docs/protocol.md §2.2–§2.3, driven through two endpoints.

mod common;

use std::time::Duration;

use common::{both_established, only_connection, Pair, Side};
use rustox_net_crypto::{
    CloseReason, ConnectionEvent, ConnectionStatus, Destination, DropReason, EndpointEvent,
    Timestamp,
};

const COOKIE_REQUEST: u8 = 0x18;
const COOKIE_RESPONSE: u8 = 0x19;
const HANDSHAKE: u8 = 0x1a;

fn assert_established_once(p: &Pair, side: Side) {
    let established = p
        .connection_events(side)
        .iter()
        .filter(|e| **e == ConnectionEvent::Established)
        .count();
    assert_eq!(established, 1, "{side:?} reports Established exactly once");
}

#[test]
fn handshake_initiated_by_a_establishes_both_sides() {
    let mut p = Pair::new(1);
    let id_a = p.connect(Side::A);
    assert_eq!(
        p.status(Side::A, id_a),
        Some(ConnectionStatus::CookieRequesting)
    );
    let ok = p.run_until(p.now + Duration::from_secs(5), both_established);
    assert!(ok);
    let id_b = only_connection(&p.b.endpoint);
    assert_eq!(p.status(Side::A, id_a), Some(ConnectionStatus::Established));
    assert_eq!(p.status(Side::B, id_b), Some(ConnectionStatus::Established));
    assert_established_once(&p, Side::A);
    assert_established_once(&p, Side::B);

    // B learned who connected from the cookie inside A's handshake.
    let incoming: Vec<_> =
        p.b.events
            .iter()
            .filter_map(|e| match e {
                EndpointEvent::Incoming {
                    id,
                    peer_real_pk,
                    peer_dht_pk,
                    from,
                } => Some((*id, *peer_real_pk, *peer_dht_pk, *from)),
                _ => None,
            })
            .collect();
    assert_eq!(
        incoming,
        vec![(
            id_b,
            p.a.real.public,
            p.a.dht.public,
            Destination::Udp(p.a.addr)
        )]
    );
    let conn_b = p.b.endpoint.connection(id_b).unwrap();
    assert_eq!(conn_b.peer_real_pk(), p.a.real.public);
    assert_eq!(conn_b.peer_addr(), Some(p.a.addr));
    assert!(
        p.a.endpoint.drop_counters().total() == 0,
        "{:?}",
        p.a.endpoint.drop_counters()
    );
    assert!(
        p.b.endpoint.drop_counters().total() == 0,
        "{:?}",
        p.b.endpoint.drop_counters()
    );
}

#[test]
fn responder_answers_with_the_other_cookie_and_never_requests_one() {
    let mut p = Pair::new(2);
    p.establish(Side::A);
    assert_eq!(p.sent(Side::A, COOKIE_REQUEST).len(), 1);
    assert_eq!(p.sent(Side::B, COOKIE_RESPONSE).len(), 1);
    assert_eq!(p.sent(Side::B, COOKIE_REQUEST).len(), 0);
    assert_eq!(p.sent(Side::A, HANDSHAKE).len(), 1);
    assert_eq!(p.sent(Side::B, HANDSHAKE).len(), 1);
    // B's handshake carries, as its outer cookie, the other_cookie A put in its own.
    let b_handshake = &p.sent(Side::B, HANDSHAKE)[0].transmit.payload;
    assert_eq!(b_handshake.len(), 385);
}

#[test]
fn handshake_initiated_by_b_establishes_both_sides() {
    let mut p = Pair::new(3);
    let (id_a, id_b) = p.establish(Side::B);
    assert_eq!(p.status(Side::A, id_a), Some(ConnectionStatus::Established));
    assert_eq!(p.status(Side::B, id_b), Some(ConnectionStatus::Established));
    assert!(p
        .a
        .events
        .iter()
        .any(|e| matches!(e, EndpointEvent::Incoming { peer_real_pk, .. } if *peer_real_pk == p.b.real.public)));
    assert_established_once(&p, Side::A);
    assert_established_once(&p, Side::B);
}

#[test]
fn crossed_handshakes_give_one_connection_per_side() {
    let mut p = Pair::new(4);
    let id_a = p.connect(Side::A);
    let id_b = p.connect(Side::B);
    let ok = p.run_until(p.now + Duration::from_secs(5), both_established);
    assert!(ok, "crossed handshakes did not establish");
    assert_eq!(p.a.endpoint.connection_ids(), vec![id_a]);
    assert_eq!(p.b.endpoint.connection_ids(), vec![id_b]);
    assert!(
        p.a.events
            .iter()
            .chain(&p.b.events)
            .all(|e| !matches!(e, EndpointEvent::Incoming { .. })),
        "no side saw its peer as a new incoming connection"
    );
    assert_eq!(p.sent(Side::A, HANDSHAKE).len(), 1);
    assert_eq!(p.sent(Side::B, HANDSHAKE).len(), 1);
    assert_established_once(&p, Side::A);
    assert_established_once(&p, Side::B);

    // And the session works both ways.
    p.a.endpoint
        .connection_mut(id_a)
        .unwrap()
        .send_lossless(p.now, &[160, 1, 2])
        .unwrap();
    p.b.endpoint
        .connection_mut(id_b)
        .unwrap()
        .send_lossless(p.now, &[161, 3])
        .unwrap();
    p.run_for(Duration::from_millis(200));
    assert!(p
        .connection_events(Side::B)
        .contains(&ConnectionEvent::Lossless(vec![160, 1, 2])));
    assert!(p
        .connection_events(Side::A)
        .contains(&ConnectionEvent::Lossless(vec![161, 3])));
}

#[test]
fn handshake_gives_up_after_eight_cookie_requests() {
    let mut p = Pair::new(5);
    p.filter = Some(Box::new(|_, _| false));
    let start = p.now;
    let id = p.connect(Side::A);
    p.run_for(Duration::from_secs(30));
    let requests = p.sent(Side::A, COOKIE_REQUEST);
    assert_eq!(requests.len(), 8);
    // One every 1000 ms, all identical (the temp packet is resent as is).
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(r.at, start + Duration::from_secs(i as u64));
        assert_eq!(r.transmit.payload, requests[0].transmit.payload);
    }
    assert_eq!(
        p.connection_events(Side::A),
        vec![ConnectionEvent::Closed(CloseReason::Timeout)]
    );
    assert!(
        p.a.endpoint.connection(id).is_none(),
        "closed connection is forgotten"
    );
    assert_eq!(p.a.endpoint.poll_timeout(), None);
}

#[test]
fn handshake_gives_up_after_eight_handshakes_when_the_peer_never_answers_them() {
    let mut p = Pair::new(6);
    // Cookie requests and responses pass; B's handshake never reaches A, A's never reaches B.
    p.filter = Some(Box::new(|_, t| t.payload[0] != HANDSHAKE));
    p.connect(Side::A);
    p.run_for(Duration::from_secs(30));
    assert_eq!(p.sent(Side::A, HANDSHAKE).len(), 8);
    assert_eq!(
        p.connection_events(Side::A),
        vec![ConnectionEvent::Closed(CloseReason::Timeout)]
    );
}

#[test]
fn lost_handshake_reply_is_repaired_by_the_temp_packet_resend() {
    let mut p = Pair::new(7);
    let mut dropped = false;
    p.filter = Some(Box::new(move |side, t| {
        if side == Side::B && t.payload[0] == HANDSHAKE && !dropped {
            dropped = true;
            return false;
        }
        true
    }));
    p.connect(Side::A);
    let ok = p.run_until(p.now + Duration::from_secs(5), both_established);
    assert!(ok);
    assert!(p.sent(Side::B, HANDSHAKE).len() >= 2);
}

#[test]
fn handshake_from_a_peer_not_allowed_is_dropped_and_counted() {
    let mut p = Pair::new(8);
    let mut stranger = common::node(99, 40000, false);
    p.b.endpoint = std::mem::replace(&mut stranger.endpoint, common::node(100, 1, false).endpoint);
    // B is now an endpoint that allows nobody.
    p.b.real = stranger.real;
    p.b.dht = stranger.dht;
    p.connect(Side::A);
    p.run_for(Duration::from_secs(3));
    assert!(p.b.endpoint.connection_ids().is_empty());
    assert!(p.b.endpoint.drop_counters().get(DropReason::PeerNotAllowed) >= 1);
}

#[test]
fn accept_all_takes_handshakes_from_any_peer() {
    let mut p = Pair::new(9);
    let b = common::node(77, 33446, true);
    p.b = b;
    p.connect(Side::A);
    assert!(p.run_until(p.now + Duration::from_secs(5), both_established));
}

#[test]
fn data_flows_both_ways_once_established() {
    let mut p = Pair::new(10);
    let (id_a, id_b) = p.establish(Side::A);
    let now = p.now;
    let a = p.a.endpoint.connection_mut(id_a).unwrap();
    let n0 = a.send_lossless(now, &[16, b'h', b'i']).unwrap();
    let n1 = a.send_lossless(now, &[17]).unwrap();
    a.send_lossy(now, &[200, 9, 9]).unwrap();
    p.b.endpoint
        .connection_mut(id_b)
        .unwrap()
        .send_lossless(now, &[64, 1])
        .unwrap();
    p.run_for(Duration::from_secs(2));
    let b_events = p.connection_events(Side::B);
    let lossless: Vec<_> = b_events
        .iter()
        .filter(|e| matches!(e, ConnectionEvent::Lossless(_)))
        .cloned()
        .collect();
    assert_eq!(
        lossless,
        vec![
            ConnectionEvent::Lossless(vec![16, b'h', b'i']),
            ConnectionEvent::Lossless(vec![17])
        ]
    );
    assert!(b_events.contains(&ConnectionEvent::Lossy(vec![200, 9, 9])));
    assert!(p
        .connection_events(Side::A)
        .contains(&ConnectionEvent::Lossless(vec![64, 1])));
    let a = p.a.endpoint.connection(id_a).unwrap();
    assert!(a.is_delivered(n0) && a.is_delivered(n1));
}

#[test]
fn sending_checks_state_length_and_id_range() {
    use rustox_net_crypto::SendError;
    let mut p = Pair::new(11);
    let id = p.connect(Side::A);
    let now = p.now;
    let c = p.a.endpoint.connection_mut(id).unwrap();
    assert_eq!(c.send_lossless(now, &[16]), Err(SendError::NotEstablished));
    assert_eq!(c.send_lossy(now, &[200]), Err(SendError::NotEstablished));
    assert_eq!(c.send_budget(now), 0);
    let (id_a, _) = {
        p.run_until(p.now + Duration::from_secs(5), both_established);
        (id, ())
    };
    let now = p.now;
    let c = p.a.endpoint.connection_mut(id_a).unwrap();
    assert_eq!(c.send_lossless(now, &[]), Err(SendError::BadLength));
    assert_eq!(
        c.send_lossless(now, &vec![16; 1374]),
        Err(SendError::BadLength)
    );
    assert!(c.send_lossless(now, &vec![16; 1373]).is_ok());
    assert_eq!(c.send_lossless(now, &[15]), Err(SendError::InvalidPacketId));
    assert_eq!(
        c.send_lossless(now, &[192]),
        Err(SendError::InvalidPacketId)
    );
    assert_eq!(c.send_lossy(now, &[191]), Err(SendError::InvalidPacketId));
    assert_eq!(c.send_lossy(now, &[255]), Err(SendError::InvalidPacketId));
    assert_eq!(c.send_lossy(now, &[2]), Err(SendError::InvalidPacketId));
}

#[test]
fn kill_from_a_closes_both_sides() {
    let mut p = Pair::new(12);
    let (id_a, id_b) = p.establish(Side::A);
    let now = p.now;
    p.a.endpoint.connection_mut(id_a).unwrap().kill(now);
    assert_eq!(p.status(Side::A, id_a), Some(ConnectionStatus::Closed));
    p.flush();
    assert_eq!(
        p.connection_events(Side::A).last(),
        Some(&ConnectionEvent::Closed(CloseReason::Local))
    );
    assert_eq!(
        p.connection_events(Side::B).last(),
        Some(&ConnectionEvent::Closed(CloseReason::Killed))
    );
    p.run_for(Duration::from_secs(2));
    assert!(p.a.endpoint.connection(id_a).is_none());
    assert!(p.b.endpoint.connection(id_b).is_none());
    // One kill packet (a data packet, 0x1b) went out and nothing after it.
    let last = p.log.last().unwrap();
    assert_eq!((last.from, last.transmit.payload[0]), (Side::A, 0x1b));
}

#[test]
fn kill_from_b_closes_both_sides() {
    let mut p = Pair::new(13);
    let (id_a, id_b) = p.establish(Side::A);
    let now = p.now;
    p.b.endpoint.connection_mut(id_b).unwrap().kill(now);
    p.flush();
    assert_eq!(
        p.connection_events(Side::B).last(),
        Some(&ConnectionEvent::Closed(CloseReason::Local))
    );
    assert_eq!(
        p.connection_events(Side::A).last(),
        Some(&ConnectionEvent::Closed(CloseReason::Killed))
    );
    let _ = id_a;
    // A can connect again afterwards.
    p.run_for(Duration::from_millis(10));
    p.establish(Side::A);
}

#[test]
fn lossless_data_sent_before_a_kill_is_delivered_before_the_close() {
    let mut p = Pair::new(14);
    let (id_a, _) = p.establish(Side::A);
    let now = p.now;
    let a = p.a.endpoint.connection_mut(id_a).unwrap();
    a.send_lossless(now, &[20, 1]).unwrap();
    p.flush();
    let now = p.now;
    p.a.endpoint.connection_mut(id_a).unwrap().kill(now);
    p.flush();
    let events = p.connection_events(Side::B);
    let pos_data = events
        .iter()
        .position(|e| *e == ConnectionEvent::Lossless(vec![20, 1]));
    let pos_close = events
        .iter()
        .position(|e| *e == ConnectionEvent::Closed(CloseReason::Killed));
    assert!(pos_data.is_some() && pos_close.is_some());
    assert!(pos_data < pos_close);
}

#[test]
fn idle_established_session_costs_at_most_16_kib() {
    let mut p = Pair::new(15);
    let (id_a, id_b) = p.establish(Side::A);
    p.run_for(Duration::from_secs(5));
    for (side, id) in [(Side::A, id_a), (Side::B, id_b)] {
        let node = p.node(side);
        let used = node.endpoint.connection(id).unwrap().memory_usage();
        assert!(used <= 16 * 1024, "{side:?}: {used} bytes");
        assert!(used > 0);
    }
}

#[test]
fn established_session_has_no_handshake_timeout() {
    let mut p = Pair::new(16);
    let (id_a, id_b) = p.establish(Side::A);
    p.run_for(Duration::from_secs(60));
    assert_eq!(p.status(Side::A, id_a), Some(ConnectionStatus::Established));
    assert_eq!(p.status(Side::B, id_b), Some(ConnectionStatus::Established));
    let _ = Timestamp::ZERO;
}

#[test]
fn handshake_received_while_requesting_a_cookie_is_answered_with_the_other_cookie() {
    let mut p = Pair::new(17);
    // A's cookie request is lost, so A is still COOKIE_REQUESTING when B's handshake comes.
    let mut dropped = false;
    p.filter = Some(Box::new(move |side, t| {
        if side == Side::A && t.payload[0] == COOKIE_REQUEST && !dropped {
            dropped = true;
            return false;
        }
        true
    }));
    let id_a = p.connect(Side::A);
    let id_b = p.connect(Side::B);
    p.flush();
    assert_eq!(p.status(Side::A, id_a), Some(ConnectionStatus::Established));
    assert_eq!(p.status(Side::B, id_b), Some(ConnectionStatus::Established));
    // A answered B's handshake without a cookie of its own: one request (the lost one).
    assert_eq!(p.sent(Side::A, COOKIE_REQUEST).len(), 1);
    assert_eq!(p.sent(Side::A, HANDSHAKE).len(), 1);
    assert_eq!(p.a.endpoint.connection_ids(), vec![id_a]);
}

#[test]
fn peer_back_with_a_new_dht_key_replaces_the_old_session() {
    let mut p = Pair::new(18);
    let (_, old_b) = p.establish(Side::A);
    // A restarts: same identity, new DHT key (DHT keys are per run), same address.
    let mut rng =
        <rand_chacha::ChaCha8Rng as rand_chacha::rand_core::SeedableRng>::seed_from_u64(4242);
    let new_dht = rustox_net_crypto::crypto::KeyPair::generate(&mut rng);
    let mut endpoint = rustox_net_crypto::Endpoint::new(
        p.now,
        p.a.real.clone(),
        new_dht.clone(),
        common::config(false),
        common::rng(4243),
    );
    endpoint.allow_peer(p.b.real.public);
    p.a.endpoint = endpoint;
    p.a.dht = new_dht;
    p.a.events.clear();
    p.b.events.clear();
    p.connect(Side::A);
    assert!(p.run_until(p.now + Duration::from_secs(5), both_established));
    assert_eq!(
        p.connection_events(Side::B).first(),
        Some(&ConnectionEvent::Closed(CloseReason::Killed)),
        "the old session ends"
    );
    let new_b = only_connection(&p.b.endpoint);
    assert_ne!(new_b, old_b);
    assert_eq!(
        p.b.endpoint.connection(new_b).unwrap().peer_dht_pk(),
        p.a.dht.public
    );
}

#[test]
fn responder_gives_up_after_eight_handshakes_when_nothing_of_it_arrives() {
    let mut p = Pair::new(19);
    // Only B's cookie response gets through; its handshakes and data never do.
    p.filter = Some(Box::new(|side, t| {
        side == Side::A || t.payload[0] == COOKIE_RESPONSE
    }));
    p.connect(Side::A);
    p.run_for(Duration::from_secs(30));
    assert_eq!(p.sent(Side::B, HANDSHAKE).len(), 8);
    assert_eq!(p.sent(Side::A, HANDSHAKE).len(), 8);
    for side in [Side::A, Side::B] {
        assert_eq!(
            p.connection_events(side).last(),
            Some(&ConnectionEvent::Closed(CloseReason::Timeout)),
            "{side:?}"
        );
        assert!(p.node(side).endpoint.connection_ids().is_empty());
    }
    // B never reported Established: the peer never confirmed.
    assert!(!p
        .connection_events(Side::B)
        .contains(&ConnectionEvent::Established));
}

#[test]
fn a_peer_we_connected_to_may_later_connect_to_us() {
    let mut p = Pair::new(20);
    // Endpoints that allow nobody up front.
    p.a = common::node(2001, 33445, false);
    p.b = common::node(2002, 33446, false);
    p.filter = Some(Box::new(|_, _| false));
    p.connect(Side::A);
    p.run_for(Duration::from_secs(30));
    assert!(p.a.endpoint.connection_ids().is_empty(), "A gave up");
    // B was told about A only now; A accepts B's handshake because it had asked for B.
    p.filter = None;
    p.b.endpoint.allow_peer(p.a.real.public);
    p.connect(Side::B);
    assert!(p.run_until(p.now + Duration::from_secs(5), both_established));
    assert!(p
        .a
        .events
        .iter()
        .any(|e| matches!(e, EndpointEvent::Incoming { .. })));
}

#[test]
fn endpoint_memory_is_the_sum_of_its_connections_and_stays_small_when_idle() {
    let mut p = Pair::new(21);
    let before = p.b.endpoint.memory_usage();
    let (_, id_b) = p.establish(Side::A);
    p.run_for(Duration::from_secs(3));
    let conn = p.b.endpoint.connection(id_b).unwrap().memory_usage();
    let after = p.b.endpoint.memory_usage();
    assert!(after >= before + conn, "{after} < {before} + {conn}");
    assert!(
        after <= before + conn + 4096,
        "tables cost more than 4 KiB: {after}"
    );
}
