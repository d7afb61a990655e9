//! Scenarios against the real [`RelayServer`]: client ↔ server ↔ client, with the server's
//! own pings, timeouts and onion hop.

use super::*;

type ServerNet = Net<ServerRelay>;

fn server(w: &mut ServerNet, n: u8) -> &mut RelayServer {
    &mut w.relays.get_mut(&addr(n)).unwrap().server
}

#[test]
fn two_clients_meet_through_the_server_and_stay_connected() {
    let mut w = ServerNet::new(1, 2);
    w.add_peer_relay(0, 1, 1);
    w.add_relay(1, 1);
    w.run_for(Duration::from_secs(5));
    assert!(!w.online(0, 1), "a route needs both sides");
    w.add_peer_relay(1, 0, 1);
    assert!(w.online(0, 1) && w.online(1, 0));
    w.take_events(0);
    w.take_events(1);
    w.send(0, 1, b"\x1bping").unwrap();
    w.send(1, 0, b"\x1bpong").unwrap();
    assert_eq!(w.data_from(1, 0), vec![b"\x1bping".to_vec()]);
    assert_eq!(w.data_from(0, 1), vec![b"\x1bpong".to_vec()]);
    // Ten idle minutes: both sides' pings are answered, nothing closes, nothing reconnects.
    w.run_for(Duration::from_secs(600));
    assert_eq!(w.take_events(0), vec![]);
    assert_eq!(w.take_events(1), vec![]);
    assert_eq!(w.clients[0].connects.len(), 1);
    assert_eq!(w.clients[1].connects.len(), 1);
    let stats = server(&mut w, 1).stats();
    assert!(stats.pings_sent >= 38, "{} server pings", stats.pings_sent);
    assert_eq!(server(&mut w, 1).connections(), 2);
    w.send(0, 1, b"\x1bstill").unwrap();
    assert_eq!(w.data_from(1, 0), vec![b"\x1bstill".to_vec()]);
}

#[test]
fn before_the_route_packets_go_out_of_band_through_the_server() {
    let mut w = ServerNet::new(1, 2);
    w.add_peer_relay(0, 1, 1);
    w.add_relay(1, 1);
    w.take_events(1);
    w.send(0, 1, b"\x18cookie request").unwrap();
    let a = w.dht(0);
    let r = w.relay_pk(1);
    assert_eq!(
        w.take_events(1),
        vec![RelayEvent::Oob {
            relay_addr: addr(1),
            relay_pk: r,
            from: a,
            data: b"\x18cookie request".to_vec()
        }]
    );
    let now = w.now;
    w.clients[1]
        .relays
        .send_oob(now, &r, &a, b"\x19cookie response")
        .unwrap();
    w.pump();
    assert_eq!(w.data_from(0, 1), vec![b"\x19cookie response".to_vec()]);
}

#[test]
fn a_peer_leaving_the_server_takes_the_route_down() {
    let mut w = ServerNet::new(1, 2);
    w.add_peer_relay(0, 1, 1);
    w.add_peer_relay(1, 0, 1);
    assert!(w.online(0, 1));
    w.take_events(0);
    let b = w.dht(1);
    let a = w.dht(0);
    w.clients[1].relays.remove_peer(&a);
    w.pump();
    assert_eq!(w.take_events(0), route_down(b));
    w.add_peer_relay(1, 0, 1);
    assert!(w.online(0, 1), "the route comes back when asked again");
}

#[test]
fn onion_request_through_the_server_and_its_response_back() {
    let mut w = ServerNet::new(1, 1);
    w.add_relay(0, 1);
    w.take_events(0);
    let mut body = Nonce([9; 24]).0.to_vec();
    body.extend((0..300).map(|i| (i * 7) as u8));
    let now = w.now;
    assert_eq!(w.clients[0].relays.send_onion(now, &body), Ok(addr(1)));
    w.pump();
    let request = server(&mut w, 1)
        .poll_onion_request()
        .expect("hop A gets it");
    assert_eq!(request.nonce, Nonce([9; 24]));
    assert_eq!(request.plain, body[24..]);
    assert!(server(&mut w, 1).handle_onion_response(&request.source, b"\x86data response"));
    w.pump();
    assert_eq!(
        w.take_events(0),
        vec![RelayEvent::OnionResponse {
            relay_addr: addr(1),
            data: b"\x86data response".to_vec()
        }]
    );
}

#[test]
fn a_client_whose_socket_stops_writing_loses_the_relay_and_reconnects() {
    let mut w = ServerNet::new(1, 1);
    w.add_relay(0, 1);
    let pk = w.relay_pk(1);
    w.take_events(0);
    // Nothing leaves the client any more: the pings of +30 s go unanswered both ways.
    w.clients[0].write_budget = Some(0);
    w.run_for(Duration::from_secs(45));
    assert_eq!(
        w.clients[0].events,
        vec![(
            START + Duration::from_secs(40),
            RelayEvent::RelayDown { addr: addr(1), pk }
        )]
    );
    w.take_events(0);
    assert_eq!(server(&mut w, 1).confirmed_connections(), 0);
    assert_eq!(w.clients[0].connects.len(), 2, "retried at +41 s");
    // The client's socket works again: the retry after the backoff brings the relay back.
    w.clients[0].write_budget = None;
    w.run_for(Duration::from_secs(3));
    assert_eq!(
        w.take_events(0),
        vec![RelayEvent::RelayUp { addr: addr(1), pk }]
    );
    assert_eq!(server(&mut w, 1).confirmed_connections(), 1);
}

#[test]
fn many_peers_share_one_relay() {
    let mut w = ServerNet::new(1, 6);
    for a in 0..6 {
        for b in 0..6 {
            if a != b {
                w.add_peer_relay(a, b, 1);
            }
        }
    }
    for a in 0..6 {
        w.take_events(a);
    }
    for a in 0..6 {
        for b in 0..6 {
            if a != b {
                assert!(w.online(a, b), "{a} → {b}");
                w.send(a, b, &[0x1b, a as u8, b as u8]).unwrap();
            }
        }
    }
    for b in 0..6 {
        let mut got: Vec<Vec<u8>> = w
            .take_events(b)
            .into_iter()
            .filter_map(|e| match e {
                RelayEvent::Data { data, .. } => Some(data),
                _ => None,
            })
            .collect();
        got.sort();
        let want: Vec<Vec<u8>> = (0..6)
            .filter(|&a| a != b)
            .map(|a| vec![0x1b, a as u8, b as u8])
            .collect();
        assert_eq!(got, want);
    }
}
