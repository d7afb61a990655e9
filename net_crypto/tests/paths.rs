//! A session over a TCP relay and over direct UDP, and moving between them (docs/protocol.md
//! §2.9): the relay is modelled as an in-order path with its own delay, addressed by the
//! peer's DHT key; UDP can be blocked and unblocked. Virtual time.

mod common;

use std::collections::VecDeque;
use std::time::Duration;

use common::{node, Node};
use rustox_net_crypto::{
    ConnectionEvent, ConnectionId, ConnectionStatus, Destination, EndpointEvent, PathKind,
    Timestamp,
};

/// One-way delay of the direct path.
const UDP_DELAY: Duration = Duration::from_millis(20);
/// One-way delay through the relay (two TCP legs).
const RELAY_DELAY: Duration = Duration::from_millis(150);

struct InFlight {
    at: Timestamp,
    to_b: bool,
    via_relay: bool,
    bytes: Vec<u8>,
}

struct Net {
    a: Node,
    b: Node,
    now: Timestamp,
    udp_blocked: bool,
    flight: VecDeque<InFlight>,
    udp_sent: u64,
    relay_sent: u64,
    delivered_to_b: Vec<Vec<u8>>,
}

impl Net {
    fn new(seed: u64) -> Net {
        let mut a = node(seed * 2 + 1, 33445, false);
        let mut b = node(seed * 2 + 2, 33446, false);
        a.endpoint.allow_peer(b.real.public);
        b.endpoint.allow_peer(a.real.public);
        Net {
            a,
            b,
            now: Timestamp::from_secs(1000),
            udp_blocked: false,
            flight: VecDeque::new(),
            udp_sent: 0,
            relay_sent: 0,
            delivered_to_b: Vec::new(),
        }
    }

    /// Sends what both endpoints have now.
    fn transmit(&mut self) {
        for to_b in [true, false] {
            let (from, to) = if to_b {
                (&mut self.a, &self.b)
            } else {
                (&mut self.b, &self.a)
            };
            while let Some(t) = from.endpoint.poll_transmit(self.now) {
                let via_relay = match t.destination {
                    Destination::Udp(addr) => {
                        assert_eq!(addr, to.addr, "UDP goes to the peer's address");
                        self.udp_sent += 1;
                        if self.udp_blocked {
                            continue;
                        }
                        false
                    }
                    Destination::Relay(pk) => {
                        assert_eq!(pk, to.dht.public, "the relay names the peer by DHT key");
                        self.relay_sent += 1;
                        true
                    }
                };
                let delay = if via_relay { RELAY_DELAY } else { UDP_DELAY };
                self.flight.push_back(InFlight {
                    at: self.now + delay,
                    to_b,
                    via_relay,
                    bytes: t.payload,
                });
            }
        }
    }

    /// Runs until `until`, delivering in time order and firing timers.
    fn run(&mut self, until: Timestamp) {
        loop {
            // As a node does: what arrived is delivered before anything is sent, so the
            // acknowledgements sent next cover it.
            self.drain_events();
            self.transmit();
            let next_arrival = self.flight.iter().map(|f| f.at).min();
            let next_timer = [
                self.a.endpoint.poll_timeout(),
                self.b.endpoint.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            let next = match (next_arrival, next_timer) {
                (Some(x), Some(y)) => x.min(y),
                (x, y) => match x.or(y) {
                    Some(t) => t,
                    None => break,
                },
            };
            if next > until {
                break;
            }
            self.now = self.now.max(next);
            // Deliver everything due, in send order (the relay keeps order; so does this UDP).
            let due: Vec<InFlight> = {
                let (due, rest): (Vec<_>, Vec<_>) =
                    self.flight.drain(..).partition(|f| f.at <= self.now);
                self.flight = rest.into();
                due
            };
            for f in due {
                let (to, from) = if f.to_b {
                    (&mut self.b, &self.a)
                } else {
                    (&mut self.a, &self.b)
                };
                let _ = if f.via_relay {
                    to.endpoint
                        .handle_relayed(self.now, from.dht.public, &f.bytes)
                } else {
                    to.endpoint.handle_datagram(self.now, from.addr, &f.bytes)
                };
            }
            self.a.endpoint.handle_timeout(self.now);
            self.b.endpoint.handle_timeout(self.now);
        }
        self.now = self.now.max(until);
    }

    fn drain_events(&mut self) {
        while let Some(e) = self.a.endpoint.poll_event() {
            self.a.events.push(e);
        }
        while let Some(e) = self.b.endpoint.poll_event() {
            if let EndpointEvent::Connection {
                event: ConnectionEvent::Lossless(p),
                ..
            } = &e
            {
                self.delivered_to_b.push(p.clone());
            }
            self.b.events.push(e);
        }
    }

    fn b_conn(&self) -> ConnectionId {
        self.b.endpoint.connection_ids()[0]
    }

    /// Queues `n` lossless packets at A (as much as the send array takes).
    fn send(&mut self, id: ConnectionId, from: u32, n: u32) {
        let conn = self.a.endpoint.connection_mut(id).unwrap();
        for i in from..from + n {
            let mut p = vec![160u8];
            p.extend_from_slice(&i.to_be_bytes());
            p.resize(1000, (i % 251) as u8);
            conn.send_lossless(self.now, &p).unwrap();
        }
    }
}

fn established(n: &Node, id: ConnectionId) -> bool {
    n.endpoint.connection(id).map(|c| c.status()) == Some(ConnectionStatus::Established)
}

#[test]
fn a_session_set_up_and_carried_by_a_relay_alone() {
    let mut net = Net::new(1);
    net.udp_blocked = true;
    let (real, dht) = (net.b.real.public, net.b.dht.public);
    let id = net
        .a
        .endpoint
        .connect_via(net.now, None, true, real, dht)
        .unwrap();
    net.run(net.now + Duration::from_secs(3));
    assert!(established(&net.a, id));
    let b_id = net.b_conn();
    assert!(established(&net.b, b_id));
    assert_eq!(net.udp_sent, 0, "no UDP address: nothing goes over UDP");
    net.send(id, 0, 50);
    net.run(net.now + Duration::from_secs(5));
    assert_eq!(net.delivered_to_b.len(), 50);
    for (i, p) in net.delivered_to_b.iter().enumerate() {
        assert_eq!(&p[1..5], &(i as u32).to_be_bytes());
    }
    let c = net.a.endpoint.connection(id).unwrap();
    assert_eq!(c.data_path(net.now), Some(PathKind::Relay));
    // The RTT the transport measures is the relay's round trip (2 × 150 ms).
    let srtt = c.transport().stats().smoothed_rtt.unwrap();
    let truth = RELAY_DELAY * 2;
    assert!(
        srtt >= truth && srtt < truth + truth / 10,
        "srtt {srtt:?} vs {truth:?}"
    );
}

#[test]
fn a_relayed_session_moves_to_udp_when_it_is_unblocked_and_back_when_udp_goes_silent() {
    let mut net = Net::new(2);
    net.udp_blocked = true;
    let (real, dht, b_addr) = (net.b.real.public, net.b.dht.public, net.b.addr);
    // A knows B's address (the DHT found it) and a relay: both are tried.
    let id = net
        .a
        .endpoint
        .connect_via(net.now, Some(b_addr), true, real, dht)
        .unwrap();
    net.run(net.now + Duration::from_secs(3));
    assert!(established(&net.a, id));
    let b_id = net.b_conn();
    // B learned of A only through the relay; the DHT tells it A's address.
    let a_addr = net.a.addr;
    let b_now = net.now;
    net.b.endpoint.set_peer_addr(b_now, b_id, a_addr);
    net.send(id, 0, 20);
    net.run(net.now + Duration::from_secs(2));
    assert_eq!(
        net.a.endpoint.connection(id).unwrap().data_path(net.now),
        Some(PathKind::Relay)
    );
    let relay_rtt = net
        .a
        .endpoint
        .connection(id)
        .unwrap()
        .transport()
        .stats()
        .smoothed_rtt
        .unwrap();
    assert!(relay_rtt >= RELAY_DELAY * 2);

    // Hole punching succeeds: the small datagrams tried over UDP get through, and within
    // a few probe intervals both ends carry data over UDP.
    net.udp_blocked = false;
    let unblocked = net.now;
    let mut moved_at = None;
    let mut next = 20;
    while net.now < unblocked + Duration::from_secs(20) {
        net.send(id, next, 2);
        next += 2;
        net.run(net.now + Duration::from_millis(500));
        let a_udp = net.a.endpoint.connection(id).unwrap().data_path(net.now);
        let b_udp = net.b.endpoint.connection(b_id).unwrap().data_path(net.now);
        if a_udp == Some(PathKind::Udp) && b_udp == Some(PathKind::Udp) {
            moved_at = Some(net.now);
            break;
        }
    }
    let moved_at = moved_at.expect("the session moved to UDP");
    assert!(
        moved_at - unblocked <= Duration::from_secs(9),
        "moved {:?} after the unblock",
        moved_at - unblocked
    );
    // Then the RTT estimate follows the new path (2 × 20 ms), within 10 %.
    net.send(id, next, 40);
    next += 40;
    net.run(net.now + Duration::from_secs(3));
    let stats = net.a.endpoint.connection(id).unwrap().transport().stats();
    let srtt = stats.smoothed_rtt.unwrap();
    let truth = UDP_DELAY * 2;
    assert!(
        srtt >= truth && srtt < truth + truth / 10,
        "srtt {srtt:?} vs {truth:?} after the move: {stats:?}"
    );
    assert!(stats.path_changes >= 1);

    // UDP goes silent: after UDP_DIRECT_TIMEOUT the session is carried by the relay again
    // and nothing is lost.
    net.udp_blocked = true;
    net.send(id, next, 40);
    next += 40;
    net.run(net.now + Duration::from_secs(20));
    assert_eq!(
        net.a.endpoint.connection(id).unwrap().data_path(net.now),
        Some(PathKind::Relay)
    );
    assert!(established(&net.a, id) && established(&net.b, b_id));
    assert_eq!(
        net.delivered_to_b.len() as u32,
        next,
        "every packet delivered"
    );
    for (i, p) in net.delivered_to_b.iter().enumerate() {
        assert_eq!(&p[1..5], &(i as u32).to_be_bytes(), "in order");
    }
}
