//! Two nodes whose UDP cannot reach each other, and a TCP relay both use, joined in memory
//! in virtual time (docs/protocol.md §2.9, §7): the session is set up out of band, runs over a
//! route, and moves to UDP when UDP opens.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rustox_net_crypto::PathKind;

use super::tests::node;
use super::*;
use crate::relay::client::RelayId;
use crate::relay::server::{ConnId, RelayConfig, RelayServer};

/// One way on the direct UDP path.
const UDP_ONE_WAY: Duration = Duration::from_millis(10);
/// One way on each TCP leg to the relay.
const TCP_ONE_WAY: Duration = Duration::from_millis(40);

fn addr(i: usize) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, i as u8 + 1], 33445))
}

fn relay_addr() -> SocketAddr {
    "10.0.0.100:443".parse().unwrap()
}

/// Something in flight: a UDP datagram, or bytes on one TCP leg.
enum Wire {
    Udp {
        to: usize,
        from: usize,
        bytes: Vec<u8>,
    },
    ToRelay {
        conn: ConnId,
        bytes: Vec<u8>,
    },
    ToNode {
        node: usize,
        id: RelayId,
        bytes: Vec<u8>,
    },
    Connected {
        node: usize,
        id: RelayId,
    },
    ClosedByRelay {
        node: usize,
        id: RelayId,
    },
}

struct Net {
    nodes: Vec<Node>,
    relay: RelayServer,
    rng: ChaCha20Rng,
    now: Timestamp,
    udp_open: bool,
    wire: Vec<(Timestamp, Wire)>,
    conns: HashMap<ConnId, (usize, RelayId)>,
    by_relay_id: HashMap<(usize, RelayId), ConnId>,
    next_conn: u64,
    events: Vec<Vec<NodeEvent>>,
}

impl Net {
    fn new() -> Net {
        let mut rng = ChaCha20Rng::seed_from_u64(99);
        let relay = RelayServer::new(KeyPair::generate(&mut rng), RelayConfig::default());
        Net {
            nodes: vec![node(1, false), node(2, true)],
            relay,
            rng,
            now: Timestamp::ZERO,
            udp_open: false,
            wire: Vec::new(),
            conns: HashMap::new(),
            by_relay_id: HashMap::new(),
            next_conn: 1,
            events: vec![Vec::new(), Vec::new()],
        }
    }

    /// Everything the nodes and the relay have to send now.
    fn flush(&mut self) {
        let now = self.now;
        for i in 0..self.nodes.len() {
            while let Some(e) = self.nodes[i].poll_event() {
                self.events[i].push(e);
            }
            while let Some(t) = self.nodes[i].poll_transmit(now) {
                let to = (0..self.nodes.len()).find(|&j| addr(j) == t.destination);
                if let (Some(to), true) = (to, self.udp_open) {
                    self.wire.push((
                        now + UDP_ONE_WAY,
                        Wire::Udp {
                            to,
                            from: i,
                            bytes: t.payload,
                        },
                    ));
                }
            }
            while let Some((id, to)) = self.nodes[i].poll_relay_connect(now) {
                assert_eq!(to, relay_addr());
                let conn = ConnId(self.next_conn);
                self.next_conn += 1;
                self.relay.handle_accept(now, conn, addr(i)).unwrap();
                self.conns.insert(conn, (i, id));
                self.by_relay_id.insert((i, id), conn);
                self.wire
                    .push((now + TCP_ONE_WAY, Wire::Connected { node: i, id }));
            }
            while let Some(id) = self.nodes[i].poll_relay_close() {
                if let Some(conn) = self.by_relay_id.remove(&(i, id)) {
                    self.conns.remove(&conn);
                    self.relay.handle_closed(conn);
                }
            }
            let ids: Vec<RelayId> = self
                .by_relay_id
                .keys()
                .filter(|(n, _)| *n == i)
                .map(|(_, id)| *id)
                .collect();
            for id in ids {
                while let Some(bytes) = self.nodes[i].relay_write(id).map(<[u8]>::to_vec) {
                    if bytes.is_empty() {
                        break;
                    }
                    self.nodes[i].relay_consume(id, bytes.len());
                    let conn = self.by_relay_id[&(i, id)];
                    self.wire
                        .push((now + TCP_ONE_WAY, Wire::ToRelay { conn, bytes }));
                }
            }
        }
        while let Some(conn) = self.relay.poll_ready() {
            let bytes = self.relay.poll_transmit(conn).to_vec();
            self.relay.handle_written(conn, bytes.len());
            if let Some(&(node, id)) = self.conns.get(&conn) {
                self.wire
                    .push((now + TCP_ONE_WAY, Wire::ToNode { node, id, bytes }));
            }
        }
        while let Some((conn, _)) = self.relay.poll_close() {
            if let Some((node, id)) = self.conns.remove(&conn) {
                self.by_relay_id.remove(&(node, id));
                self.wire
                    .push((now + TCP_ONE_WAY, Wire::ClosedByRelay { node, id }));
            }
        }
    }

    /// Runs until `until` or until `done` holds.
    fn run(&mut self, until: Timestamp, done: impl Fn(&Net) -> bool) {
        while self.now < until && !done(self) {
            self.flush();
            let next = self
                .wire
                .iter()
                .map(|(t, _)| *t)
                .chain(self.nodes.iter().filter_map(Node::poll_timeout))
                .chain(self.relay.poll_timeout())
                .min()
                .unwrap_or(until);
            self.now = next.max(self.now).min(until);
            let now = self.now;
            // In order of arrival; a TCP leg keeps its order because pushes are in order.
            self.wire.sort_by_key(|(t, _)| *t);
            let due: Vec<Wire> = {
                let split = self.wire.partition_point(|(t, _)| *t <= now);
                self.wire.drain(..split).map(|(_, w)| w).collect()
            };
            for w in due {
                match w {
                    Wire::Udp { to, from, bytes } => {
                        self.nodes[to].handle_datagram(now, addr(from), &bytes)
                    }
                    Wire::ToRelay { conn, bytes } => {
                        self.relay.handle_bytes(now, conn, &bytes, &mut self.rng);
                        while let Some(_onion) = self.relay.poll_onion_request() {}
                    }
                    Wire::ToNode { node, id, bytes } => {
                        self.nodes[node].handle_relay_bytes(now, id, &bytes)
                    }
                    Wire::Connected { node, id } => {
                        self.nodes[node].handle_relay_connected(now, id)
                    }
                    Wire::ClosedByRelay { node, id } => {
                        self.nodes[node].handle_relay_closed(now, id)
                    }
                }
            }
            for n in &mut self.nodes {
                n.handle_timeout(now);
            }
            self.relay.handle_timeout(now, &mut self.rng);
        }
    }

    fn online(&self, i: usize) -> bool {
        self.events[i]
            .iter()
            .rev()
            .find_map(|e| match e {
                NodeEvent::FriendConnection { online, .. } => Some(*online),
                _ => None,
            })
            .unwrap_or(false)
    }

    fn path(&self, i: usize, friend: FriendNumber) -> Option<PathKind> {
        let n = &self.nodes[i];
        let id = n.friends.get(friend)?.session?;
        n.endpoint.connection(id)?.data_path(self.now)
    }
}

#[test]
fn friends_without_udp_meet_on_a_relay_and_move_to_udp_when_it_opens() {
    let mut net = Net::new();
    let relay_pk = net.relay.public_key();
    for n in &mut net.nodes {
        n.add_tcp_relay(Timestamp::ZERO, relay_addr(), relay_pk)
            .unwrap();
    }
    let (b_pk, b_dht) = (net.nodes[1].public_key(), net.nodes[1].dht_public_key());
    let friend = net.nodes[0]
        .add_friend_direct(Timestamp::ZERO, b_pk, b_dht, addr(1))
        .unwrap();
    net.nodes[0]
        .add_friend_relay(Timestamp::ZERO, friend, relay_addr(), relay_pk)
        .unwrap();

    // UDP between them is blocked: the handshake goes out of band through the relay,
    // then the session runs on a route.
    net.run(Timestamp::from_secs(30), |n| n.online(0) && n.online(1));
    assert!(
        net.online(0) && net.online(1),
        "friends online through the relay"
    );
    assert!(net.nodes[0].relay_route_online(&b_dht), "a route is up");
    assert_eq!(net.path(0, friend), Some(PathKind::Relay));
    let relayed = net.nodes[0].stats().relayed_out;
    assert!(relayed > 0);

    // A message crosses through the relay.
    let now = net.now;
    net.nodes[0]
        .send_message(now, friend, b"through the relay")
        .unwrap();
    net.run(now + Duration::from_secs(5), |n| {
        n.events[1]
            .iter()
            .any(|e| matches!(e, NodeEvent::Message { .. }))
    });
    assert!(net.events[1].iter().any(|e| matches!(
        e,
        NodeEvent::Message { text, .. } if text == b"through the relay"
    )));

    // UDP opens, and the DHT finds each one's address for the other (here: each
    // bootstraps from the other): the session moves to UDP without going offline.
    net.udp_open = true;
    let opened = net.now;
    let a_dht = net.nodes[0].dht_public_key();
    net.nodes[0].bootstrap(opened, addr(1), b_dht);
    net.nodes[1].bootstrap(opened, addr(0), a_dht);
    net.run(opened + Duration::from_secs(30), |n| {
        n.path(0, friend) == Some(PathKind::Udp)
    });
    assert_eq!(net.path(0, friend), Some(PathKind::Udp), "moved to UDP");
    assert!(net.online(0) && net.online(1), "never went offline");
    let took = net.now - opened;
    assert!(took <= Duration::from_secs(15), "took {took:?}");
}
