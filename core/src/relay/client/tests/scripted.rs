//! Scenarios against [`ScriptedRelay`]: the protocol as c-toxcore's relay speaks it, and
//! every way a relay can fail.

use super::*;

/// Two clients that both list relay 1 for each other, with the routes up.
fn routed_pair() -> World {
    let mut w = World::new(1, 2);
    w.add_peer_relay(0, 1, 1);
    w.add_peer_relay(1, 0, 1);
    w.run_for(Duration::from_millis(10));
    assert!(w.online(0, 1) && w.online(1, 0));
    w
}

#[test]
fn handshake_brings_the_relay_up_and_pings_keep_it_up() {
    let mut w = World::new(1, 1);
    w.add_relay(0, 1);
    let pk = w.relay_pk(1);
    assert_eq!(
        w.take_events(0),
        vec![RelayEvent::RelayUp { addr: addr(1), pk }]
    );
    assert_eq!(
        w.clients[0].relays.connected_relays().collect::<Vec<_>>(),
        vec![(addr(1), pk)]
    );
    // Ten minutes: a ping every 30 s, each answered; the relay stays up.
    w.run_for(Duration::from_secs(600));
    assert_eq!(w.take_events(0), vec![]);
    let pings = w.relays[&addr(1)]
        .received_ids
        .iter()
        .filter(|&&id| id == 4)
        .count();
    assert!((20..=21).contains(&pings), "{pings} pings in 600 s");
    assert_eq!(w.clients[0].connects.len(), 1);
}

#[test]
fn the_relays_pings_are_answered_with_the_same_id() {
    let mut w = World::new(1, 1);
    w.add_relay(0, 1);
    let me = w.dht(0);
    w.relays.get_mut(&addr(1)).unwrap().send_to(
        &me,
        &Packet::Ping {
            ping_id: 0xdead_beef,
        },
    );
    w.pump();
    assert_eq!(w.relays[&addr(1)].pongs, vec![0xdead_beef]);
}

#[test]
fn route_comes_up_only_when_both_ask() {
    let mut w = World::new(1, 2);
    w.add_peer_relay(0, 1, 1);
    w.add_relay(1, 1);
    w.run_for(Duration::from_secs(5));
    assert!(!w.online(0, 1), "only one side asked");
    assert!(!w.online(1, 0));
    assert!(!w
        .events(0)
        .iter()
        .any(|e| matches!(e, RelayEvent::PeerRoute { .. })));
    w.add_peer_relay(1, 0, 1);
    assert!(w.online(0, 1) && w.online(1, 0));
    let (a, b) = (w.dht(0), w.dht(1));
    assert!(w.events(0).contains(&RelayEvent::PeerRoute {
        peer: b,
        online: true
    }));
    assert!(w.events(1).contains(&RelayEvent::PeerRoute {
        peer: a,
        online: true
    }));
}

#[test]
fn data_flows_both_ways_on_the_route() {
    let mut w = routed_pair();
    w.take_events(0);
    w.take_events(1);
    w.send(0, 1, b"\x1bhello").unwrap();
    w.send(1, 0, b"\x1bworld").unwrap();
    w.send(1, 0, &[0x1b; MAX_DATA_SIZE_FOR_TEST]).unwrap();
    assert_eq!(w.data_from(1, 0), vec![b"\x1bhello".to_vec()]);
    assert_eq!(
        w.data_from(0, 1),
        vec![b"\x1bworld".to_vec(), vec![0x1b; MAX_DATA_SIZE_FOR_TEST]]
    );
    // Data packets, never OOB, once the route is up.
    assert!(!w.relays[&addr(1)].received_ids.contains(&6));
}

const MAX_DATA_SIZE_FOR_TEST: usize = crate::relay::client::connection::MAX_DATA_SIZE;

#[test]
fn sizes_outside_the_protocol_are_refused() {
    let mut w = routed_pair();
    assert_eq!(w.send(0, 1, &[]), Err(RelaySendError::Size(0)));
    assert_eq!(
        w.send(0, 1, &vec![1; MAX_DATA_SIZE_FOR_TEST + 1]),
        Err(RelaySendError::Size(MAX_DATA_SIZE_FOR_TEST + 1))
    );
    let stranger = KeyPair::generate(&mut ChaCha8Rng::seed_from_u64(99)).public;
    assert_eq!(
        w.clients[0].relays.send_to_peer(w.now, &stranger, b"x"),
        Err(RelaySendError::UnknownPeer)
    );
}

#[test]
fn without_a_route_packets_go_out_of_band_to_every_registered_relay() {
    // Client 0 lists relays 1 and 2 for client 1; client 1 is connected to both but has
    // not asked for client 0: no route, so OOB through both.
    let mut w = World::new(2, 2);
    w.add_peer_relay(0, 1, 1);
    w.add_peer_relay(0, 1, 2);
    w.add_relay(1, 1);
    w.add_relay(1, 2);
    w.take_events(1);
    assert!(!w.online(0, 1));
    w.send(0, 1, b"\x18cookie request").unwrap();
    let a = w.dht(0);
    let oob: Vec<_> = w
        .take_events(1)
        .into_iter()
        .filter_map(|e| match e {
            RelayEvent::Oob {
                relay_addr,
                relay_pk,
                from,
                data,
            } => Some((relay_addr, relay_pk, from, data)),
            _ => None,
        })
        .collect();
    assert_eq!(oob.len(), 2, "one copy per relay: {oob:?}");
    for (n, (relay_addr, relay_pk, from, data)) in oob.into_iter().enumerate() {
        assert_eq!(relay_addr, addr(n as u8 + 1));
        assert_eq!(relay_pk, w.relay_pk(n as u8 + 1));
        assert_eq!(from, a);
        assert_eq!(data, b"\x18cookie request");
    }
    // The answer goes back OOB through the relay it came in by.
    let r1 = w.relay_pk(1);
    w.clients[1]
        .relays
        .send_oob(w.now, &r1, &a, b"\x19cookie response")
        .unwrap();
    w.pump();
    // Client 0 lists relay 1 for client 1: OOB from a listed peer is data.
    assert_eq!(w.data_from(0, 1), vec![b"\x19cookie response".to_vec()]);
}

#[test]
fn a_peer_on_no_relay_is_unreachable() {
    let mut w = World::new(1, 2);
    w.add_peer_relay(0, 1, 1);
    // Client 1 never connects to the relay; our route is registered, the OOB copy goes
    // out and the relay drops it. Before the relay answers, there is nothing to send on.
    assert_eq!(w.send(0, 1, b"\x18x"), Ok(()));
    let mut w = World::new(1, 2);
    w.relays.get_mut(&addr(1)).unwrap().accept = false;
    w.add_peer_relay(0, 1, 1);
    assert_eq!(w.send(0, 1, b"\x18x"), Err(RelaySendError::NoRoute));
}

#[test]
fn disconnect_notification_takes_the_route_down_and_sends_fall_back_to_oob() {
    let mut w = routed_pair();
    w.take_events(0);
    let (a, b) = (w.dht(0), w.dht(1));
    w.clients[1].relays.remove_peer(&a);
    w.pump();
    assert_eq!(w.take_events(0), route_down(b));
    assert!(!w.online(0, 1));
    // Our route is still registered: the packet goes OOB, and arrives as OOB because
    // client 1 no longer lists client 0.
    w.send(0, 1, b"\x1a").unwrap();
    assert!(w.take_events(1).iter().any(|e| matches!(e,
        RelayEvent::Oob { from, .. } if *from == a)));
    // When client 1 asks again the route comes back on the same registration.
    w.add_peer_relay(1, 0, 1);
    assert!(w.online(0, 1));
}

#[test]
fn peer_leaving_the_relay_takes_the_route_down() {
    let mut w = routed_pair();
    let b = w.dht(1);
    w.take_events(0);
    // Client 1 is dropped by its driver: its socket closes.
    let id = *w.clients[1].sockets.keys().next().unwrap();
    let (a, key) = w.clients[1].sockets.remove(&id).unwrap();
    w.relays.get_mut(&a).unwrap().client_closed(key);
    w.pump();
    assert_eq!(w.take_events(0), route_down(b));
}

/// When client 0 tried to connect after its first attempt, in whole seconds after `t`.
fn connects_after(w: &World, t: Timestamp) -> Vec<u64> {
    w.clients[0]
        .connects
        .iter()
        .skip(1)
        .map(|(at, _)| at.saturating_duration_since(t).as_secs())
        .collect()
}

#[test]
fn missing_pong_kills_the_relay_and_it_is_retried_with_backoff() {
    let mut w = World::new(1, 1);
    w.add_relay(0, 1);
    let pk = w.relay_pk(1);
    w.take_events(0);
    w.run_for(Duration::from_secs(45));
    // The relay falls silent: the next ping (at +60 s) goes unanswered.
    w.relays.get_mut(&addr(1)).unwrap().answer_pings = false;
    w.relays.get_mut(&addr(1)).unwrap().accept = false;
    w.run_for(Duration::from_secs(30));
    let down_at = START + Duration::from_secs(70);
    assert_eq!(
        w.clients[0].events,
        vec![(down_at, RelayEvent::RelayDown { addr: addr(1), pk })],
        "down 10 s after the unanswered ping of +60 s"
    );
    assert!(w.relays[&addr(1)].sessions.is_empty(), "socket closed");
    // Refused attempts at +1 s, then 2, 4, 8 s after each.
    let connects = connects_after(&w, down_at);
    assert_eq!(connects, vec![1, 3]);
    w.run_for(Duration::from_secs(60));
    let connects = connects_after(&w, down_at);
    assert_eq!(connects, vec![1, 3, 7, 15, 31, 63]);
    // The relay answers again: the next attempt brings it up.
    w.relays.get_mut(&addr(1)).unwrap().accept = true;
    w.relays.get_mut(&addr(1)).unwrap().answer_pings = true;
    w.run_for(Duration::from_secs(130));
    assert!(w
        .events(0)
        .contains(&RelayEvent::RelayUp { addr: addr(1), pk }));
    assert_eq!(w.clients[0].relays.connected_relays().count(), 1);
}

#[test]
fn a_relay_that_never_answers_the_hello_fails_after_10_s() {
    let mut w = World::new(1, 1);
    // Accepted, but the hello is never answered: feed the relay nothing.
    w.clients[0].write_budget = Some(0);
    w.add_relay(0, 1);
    w.run_for(Duration::from_millis(9_999));
    assert!(w.relays[&addr(1)].sessions.len() == 1);
    w.run_for(Duration::from_millis(1));
    assert!(w.relays[&addr(1)].sessions.is_empty(), "closed at 10 s");
    assert_eq!(w.clients[0].relays.stats().failures, 1);
    assert!(w.events(0).is_empty(), "never up, so never down");
}

#[test]
fn a_full_output_buffer_is_an_error_not_growth() {
    let mut w = routed_pair();
    // The socket stops taking bytes.
    w.clients[0].write_budget = Some(0);
    let packet = [0x1b; 1000];
    let mut sent = 0;
    let err = loop {
        match w.send(0, 1, &packet) {
            Ok(()) => sent += 1,
            Err(e) => break e,
        }
        assert!(sent < 1000, "never refused");
    };
    assert_eq!(err, RelaySendError::Full);
    let id = *w.clients[0].sockets.keys().next().unwrap();
    let queued = w.clients[0].relays.queued(id);
    assert!(queued <= DEFAULT_OUTPUT_LIMIT, "{queued} bytes queued");
    assert!(queued + 1018 > DEFAULT_OUTPUT_LIMIT, "the limit is used");
    // Pings still go out while data is refused (they use the reserve)...
    w.run_for(Duration::from_secs(31));
    let after_ping = w.clients[0].relays.queued(id);
    assert!(after_ping > queued && after_ping <= DEFAULT_OUTPUT_LIMIT + CONTROL_RESERVE);
    assert_eq!(w.send(0, 1, &packet), Err(RelaySendError::Full));
    // ...and once the socket drains, everything arrives in order and sends work again.
    w.clients[0].write_budget = None;
    w.pump();
    assert_eq!(w.data_from(1, 0).len(), sent);
    assert_eq!(w.send(0, 1, &packet), Ok(()));
    assert_eq!(w.data_from(1, 0).len(), 1);
    assert!(
        w.online(0, 1),
        "the relay never declared dead: pongs came in time"
    );
}

#[test]
fn a_relay_that_stops_reading_is_declared_dead_by_its_unanswered_ping() {
    let mut w = routed_pair();
    w.clients[0].write_budget = Some(0);
    while w.send(0, 1, &[0x1b; 1000]).is_ok() {}
    // Our ping of +30 s is queued behind the data the relay does not read: at +40 s the
    // client gives up on the relay.
    w.run_for(Duration::from_secs(45));
    assert!(w
        .events(0)
        .iter()
        .any(|e| matches!(e, RelayEvent::RelayDown { .. })));
}

#[test]
fn a_malformed_frame_kills_only_that_relay() {
    let mut w = World::new(2, 2);
    for n in [1, 2] {
        w.add_peer_relay(0, 1, n);
        w.add_peer_relay(1, 0, n);
    }
    assert!(w.online(0, 1));
    w.take_events(0);
    let me = w.dht(0);
    // A frame length above 2048 on relay 1's stream.
    w.relays
        .get_mut(&addr(1))
        .unwrap()
        .send_raw_to(&me, &[0x08, 0x01, 0, 0]);
    w.pump();
    let r1 = w.relay_pk(1);
    assert_eq!(
        w.take_events(0),
        vec![RelayEvent::RelayDown {
            addr: addr(1),
            pk: r1
        }]
    );
    assert!(w.online(0, 1), "the route through relay 2 stays");
    w.send(0, 1, b"\x1bstill here").unwrap();
    assert_eq!(w.data_from(1, 0), vec![b"\x1bstill here".to_vec()]);
    assert_eq!(
        w.clients[0]
            .relays
            .connected_relays()
            .map(|(a, _)| a)
            .collect::<Vec<_>>(),
        vec![addr(2)]
    );
    // The broken relay is retried after the backoff and comes back.
    w.run_for(Duration::from_secs(2));
    assert_eq!(w.clients[0].relays.connected_relays().count(), 2);
}

#[test]
fn a_client_packet_from_the_relay_or_a_bad_notification_kills_the_connection() {
    for bad in [
        Packet::RoutingRequest {
            pk: PublicKey([1; 32]),
        },
        Packet::ConnectNotification { conn_id: 15 },
        Packet::Pong { ping_id: 0 },
    ] {
        let mut w = World::new(1, 1);
        w.add_relay(0, 1);
        w.take_events(0);
        let me = w.dht(0);
        w.relays.get_mut(&addr(1)).unwrap().send_to(&me, &bad);
        w.pump();
        assert_eq!(w.take_events(0).len(), 1, "{bad:?}: relay down");
        assert_eq!(w.clients[0].relays.connected_relays().count(), 0);
    }
}

#[test]
fn onion_request_goes_out_and_the_response_comes_in() {
    let mut w = World::new(1, 1);
    w.add_relay(0, 1);
    w.take_events(0);
    let mut body = Nonce([7; 24]).0.to_vec();
    body.extend((0..200).map(|i| i as u8));
    assert_eq!(w.clients[0].relays.send_onion(w.now, &body), Ok(addr(1)));
    w.pump();
    assert_eq!(w.relays[&addr(1)].onion, vec![body]);
    let me = w.dht(0);
    w.relays.get_mut(&addr(1)).unwrap().send_to(
        &me,
        &Packet::OnionResponse {
            data: b"\x84response",
        },
    );
    w.pump();
    assert_eq!(
        w.take_events(0),
        vec![RelayEvent::OnionResponse {
            relay_addr: addr(1),
            data: b"\x84response".to_vec()
        }]
    );
    // A body a relay would kill the connection for is refused here.
    assert_eq!(
        w.clients[0]
            .relays
            .send_onion(w.now, &[0; MIN_ONION_REQUEST_SIZE - 1]),
        Err(RelaySendError::Size(MIN_ONION_REQUEST_SIZE - 1))
    );
}

#[test]
fn onion_requests_take_turns_among_relays_and_need_one() {
    let mut w = World::new(3, 1);
    assert_eq!(
        w.clients[0].relays.send_onion(w.now, &[0; 200]),
        Err(RelaySendError::NoRoute)
    );
    for n in 1..=3 {
        w.add_relay(0, n);
    }
    let used: Vec<SocketAddr> = (0..6)
        .map(|_| w.clients[0].relays.send_onion(w.now, &[0; 200]).unwrap())
        .collect();
    assert_eq!(used, [addr(1), addr(2), addr(3), addr(1), addr(2), addr(3)]);
}

#[test]
fn three_relays_stay_connected_and_surplus_unused_ones_are_dropped() {
    let mut w = World::new(6, 2);
    for n in 1..=5 {
        w.add_relay(0, n);
    }
    assert_eq!(
        w.clients[0].connects.len(),
        3,
        "only keep_connected relays are opened"
    );
    // A peer needs relay 6: a fourth connection, with a route. One of the three unused
    // relays is now surplus and goes (0.2.18 `kill_nonused_tcp`: in order, the first
    // unused one whose last routing request is 10 s old, or that never carried one).
    w.add_peer_relay(0, 1, 6);
    w.add_peer_relay(1, 0, 6);
    assert!(w.online(0, 1));
    assert_eq!(w.connected(0).len(), 4);
    w.run_for(Duration::from_millis(1));
    assert_eq!(w.connected(0), vec![addr(2), addr(3), addr(6)]);
    w.run_for(TCP_CONNECTION_ANNOUNCE_TIMEOUT * 2);
    assert_eq!(w.connected(0), vec![addr(2), addr(3), addr(6)], "in use");
    // The peer goes away: relay 6 is unused but within the three kept.
    let b = w.dht(1);
    w.clients[0].relays.remove_peer(&b);
    w.run_for(TCP_CONNECTION_ANNOUNCE_TIMEOUT * 2);
    assert_eq!(w.connected(0), vec![addr(2), addr(3), addr(6)]);
    // A kept relay that fails is replaced by a known one while it backs off.
    w.relays.get_mut(&addr(2)).unwrap().accept = false;
    let me = w.dht(0);
    w.relays
        .get_mut(&addr(2))
        .unwrap()
        .send_raw_to(&me, &[0xff, 0xff]);
    w.pump();
    assert_eq!(w.connected(0), vec![addr(1), addr(3), addr(6)]);
}

/// Client 0 with routes to client 1 on relays 1–3 (all in use), and relay 4 listed for
/// client 2.
fn three_in_use_and_one_more() -> World {
    let mut w = World::new(4, 3);
    for n in 1..=3 {
        w.add_peer_relay(0, 1, n);
        w.add_peer_relay(1, 0, n);
    }
    w.add_peer_relay(0, 2, 4);
    assert_eq!(w.connected(0).len(), 4);
    w
}

#[test]
fn an_unused_relay_is_kept_10_s_for_the_peer_to_ask() {
    let mut w = three_in_use_and_one_more();
    // Client 2 never asks for us on relay 4.
    w.run_for(TCP_CONNECTION_ANNOUNCE_TIMEOUT - Duration::from_millis(1));
    assert_eq!(w.connected(0).len(), 4);
    w.run_for(Duration::from_millis(1));
    assert_eq!(w.connected(0), vec![addr(1), addr(2), addr(3)]);
    // As in 0.2.18 the peer loses the relay: it must be shared again.
    assert_eq!(
        w.send(0, 2, b"\x18x"),
        Err(RelaySendError::NoRoute),
        "no relay left for the peer"
    );
    assert_eq!(
        w.clients[0].relays.poll_connect(w.now),
        None,
        "and it stays closed"
    );
}

#[test]
fn an_unused_relay_is_kept_if_the_peer_asks_in_time() {
    let mut w = three_in_use_and_one_more();
    w.run_for(TCP_CONNECTION_ANNOUNCE_TIMEOUT - Duration::from_secs(1));
    w.add_peer_relay(2, 0, 4);
    assert!(w.online(0, 2));
    w.run_for(TCP_CONNECTION_ANNOUNCE_TIMEOUT * 3);
    assert_eq!(w.connected(0).len(), 4);
}

#[test]
fn a_direct_peer_lets_its_relay_go_and_gets_it_back_when_udp_ends() {
    let mut w = three_in_use_and_one_more();
    w.add_peer_relay(2, 0, 4);
    assert!(w.online(0, 2));
    let c = w.dht(2);
    w.run_for(TCP_CONNECTION_ANNOUNCE_TIMEOUT);
    let now = w.now;
    w.clients[0].relays.set_peer_direct(now, &c, true);
    w.run_for(Duration::from_millis(1));
    assert_eq!(w.connected(0), vec![addr(1), addr(2), addr(3)]);
    assert!(!w.online(0, 2));
    assert_eq!(
        w.clients[0].relays.poll_connect(w.now),
        None,
        "not while direct"
    );
    let now = w.now;
    w.clients[0].relays.set_peer_direct(now, &c, false);
    w.pump();
    assert_eq!(w.connected(0).len(), 4);
    assert!(w.online(0, 2), "route requested again on reconnect");
}

#[test]
fn per_peer_and_table_bounds_hold() {
    let config = RelayClientConfig {
        max_relays: 8,
        max_peers: 2,
        ..RelayClientConfig::default()
    };
    let mut w = World::with_config(8, 4, config);
    let (b, c, d) = (w.dht(1), w.dht(2), w.dht(3));
    let now = w.now;
    let r = &mut w.clients[0].relays;
    for n in 1..=6u8 {
        r.add_peer_relay(now, b, addr(n), PublicKey([n; 32]))
            .unwrap();
    }
    assert_eq!(
        r.add_peer_relay(now, b, addr(7), PublicKey([7; 32])),
        Err(AddRelayError::PeerFull)
    );
    assert_eq!(
        r.add_peer_relay(now, b, addr(1), PublicKey([1; 32])),
        Ok(()),
        "a relay listed already"
    );
    r.add_peer_relay(now, c, addr(7), PublicKey([7; 32]))
        .unwrap();
    assert_eq!(
        r.add_peer_relay(now, d, addr(7), PublicKey([7; 32])),
        Err(AddRelayError::TooManyPeers)
    );
    r.add_relay(now, addr(8), PublicKey([8; 32])).unwrap();
    assert_eq!(
        r.add_relay(now, addr(9), PublicKey([9; 32])),
        Err(AddRelayError::TooManyRelays)
    );
    let own = w.dht(0);
    assert_eq!(
        w.clients[0]
            .relays
            .add_peer_relay(now, own, addr(1), PublicKey([1; 32])),
        Err(AddRelayError::OwnKey)
    );
}

#[test]
fn connections_are_bounded() {
    let config = RelayClientConfig {
        max_connections: 4,
        ..RelayClientConfig::default()
    };
    let mut w = World::with_config(8, 2, config);
    let b = w.dht(1);
    for n in 1..=6 {
        let pk = w.relay_pk(n);
        let now = w.now;
        w.clients[0]
            .relays
            .add_peer_relay(now, b, addr(n), pk)
            .unwrap();
    }
    w.pump();
    assert_eq!(w.clients[0].connects.len(), 4);
    assert_eq!(w.clients[0].relays.poll_connect(w.now), None);
}

#[test]
fn a_stale_id_is_ignored() {
    let mut w = World::new(1, 1);
    w.add_relay(0, 1);
    let old = *w.clients[0].sockets.keys().next().unwrap();
    let me = w.dht(0);
    w.relays
        .get_mut(&addr(1))
        .unwrap()
        .send_raw_to(&me, &[0xff, 0xff]);
    w.pump();
    w.run_for(Duration::from_secs(2));
    assert_eq!(w.clients[0].relays.connected_relays().count(), 1, "back up");
    let now = w.now;
    let r = &mut w.clients[0].relays;
    r.handle_closed(now, old);
    r.handle_bytes(now, old, &[0xff; 10]);
    assert!(r.poll_write(old).is_none());
    assert_eq!(
        r.connected_relays().count(),
        1,
        "the new connection is untouched"
    );
}

#[test]
fn a_peer_with_three_online_routes_gets_no_new_relay_but_may_use_a_known_one() {
    let mut w = World::new(5, 2);
    for n in 1..=3 {
        w.add_peer_relay(0, 1, n);
        w.add_peer_relay(1, 0, n);
    }
    w.add_relay(0, 5);
    let (b, now) = (w.dht(1), w.now);
    let (r4, r5) = (w.relay_pk(4), w.relay_pk(5));
    let r = &mut w.clients[0].relays;
    assert_eq!(
        r.add_peer_relay(now, b, addr(4), r4),
        Err(AddRelayError::Enough)
    );
    assert_eq!(r.add_peer_relay(now, b, addr(5), r5), Ok(()));
}

#[test]
fn a_connect_the_driver_never_completes_is_abandoned_after_10_s() {
    let mut w = World::new(1, 1);
    let (pk, now) = (w.relay_pk(1), w.now);
    let client = &mut w.clients[0];
    let r = &mut client.relays;
    r.add_relay(now, addr(1), pk).unwrap();
    let (id, a) = r.poll_connect(now).unwrap();
    assert_eq!(a, addr(1));
    assert_eq!(r.poll_connect(now), None, "one attempt at a time");
    assert_eq!(r.poll_timeout(), Some(now + TCP_CONNECTION_TIMEOUT));
    let deadline = now + TCP_CONNECTION_TIMEOUT;
    r.handle_timeout(deadline - Duration::from_micros(1), &mut client.rng);
    assert_eq!(r.poll_close(), None);
    r.handle_timeout(deadline, &mut client.rng);
    assert_eq!(r.poll_close(), Some(id));
    assert_eq!(r.stats().failures, 1);
    assert_eq!(r.poll_timeout(), Some(deadline + RECONNECT_DELAY_MIN));
    assert_eq!(r.poll_connect(deadline), None);
    let (again, _) = r.poll_connect(deadline + RECONNECT_DELAY_MIN).unwrap();
    assert_ne!(again, id, "a new attempt, a new id");
}

#[test]
fn a_peers_relay_that_keeps_failing_is_forgotten_but_ours_is_kept() {
    let mut w = World::new(2, 2);
    for n in [1, 2] {
        w.relays.get_mut(&addr(n)).unwrap().accept = false;
    }
    w.add_peer_relay(0, 1, 1);
    w.add_relay(0, 2);
    w.run_for(Duration::from_secs(600));
    let r = &w.clients[0].relays;
    assert_eq!(r.stats().relays_forgotten, 1);
    let tries = |n: u8| {
        w.clients[0]
            .connects
            .iter()
            .filter(|(_, a)| *a == addr(n))
            .count()
    };
    assert_eq!(
        tries(1),
        MAX_FAILURES as usize,
        "forgotten after {MAX_FAILURES}"
    );
    assert!(
        tries(2) > MAX_FAILURES as usize,
        "ours is retried: {}",
        tries(2)
    );
    assert_eq!(w.send(0, 1, b"\x18x"), Err(RelaySendError::NoRoute));
    // Once our relay answers again, it comes up at the next try.
    w.relays.get_mut(&addr(2)).unwrap().accept = true;
    w.run_for(RECONNECT_DELAY_MAX);
    assert_eq!(w.connected(0), vec![addr(2)]);
}

#[test]
fn a_relay_that_reads_nothing_while_we_ask_for_routes_is_given_up() {
    let config = RelayClientConfig {
        connection: ConnectionConfig { output_limit: 1000 },
        ..RelayClientConfig::default()
    };
    let mut w = World::with_config(1, 1, config);
    w.add_relay(0, 1);
    w.take_events(0);
    w.clients[0].write_budget = Some(0);
    // Each routing request is a 51-byte control frame; the output limit and the reserve
    // hold about 100 of them (fewer than the 240 routes a relay gives), then the
    // connection is stalled.
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let pk = w.relay_pk(1);
    for _ in 0..200 {
        let peer = KeyPair::generate(&mut rng).public;
        let now = w.now;
        w.clients[0]
            .relays
            .add_peer_relay(now, peer, addr(1), pk)
            .unwrap();
    }
    assert_eq!(w.clients[0].relays.poll_timeout(), Some(Timestamp::ZERO));
    w.run_for(Duration::from_millis(1));
    assert_eq!(
        w.take_events(0),
        vec![RelayEvent::RelayDown { addr: addr(1), pk }]
    );
    assert_eq!(w.clients[0].relays.stats().failures, 1);
}
