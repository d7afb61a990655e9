//! The onion client against real [`OnionServer`]s in an in-memory network, in virtual time
//! (the pattern of `onion/server/tests.rs`): datagrams are delivered after a per-hop
//! latency, optionally lost at random.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::time::Duration;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::crypto::{KeyPair, PrecomputedKey, PublicKey};
use rustox_net_crypto::Timestamp;

use super::paths::{PathNodes, PathSet, ONION_PATH_MAX_LIFETIME};
use super::*;
use crate::dht::distance::cmp_distance;
use crate::onion::server::{CloseNodes, OnionConfig, OnionServer};
use crate::onion::wire::announce::{AnnounceEnvelope, ANNOUNCE_REQUEST_SIZE};
use crate::onion::wire::RETURN_3;

const START: Timestamp = Timestamp::from_secs(1000);
const UNIX_ORIGIN: u64 = 1_700_000_000;

/// Answers with the 4 nodes closest to the target among those it knows, or with 4 fresh
/// made-up nodes.
struct FakeDht<'a> {
    nodes: &'a [PackedNode],
    junk: &'a std::cell::RefCell<Option<ChaCha8Rng>>,
}

impl CloseNodes for FakeDht<'_> {
    fn closest_nodes(&self, _: Timestamp, target: &PublicKey, _: bool) -> Vec<PackedNode> {
        if let Some(rng) = self.junk.borrow_mut().as_mut() {
            return (0..4)
                .map(|_| {
                    let ip = rng.next_u32().to_be_bytes();
                    PackedNode::udp(
                        SocketAddr::from(([100, ip[1], ip[2], ip[3]], 33445)),
                        KeyPair::generate(rng).public,
                    )
                })
                .collect();
        }
        let mut n = self.nodes.to_vec();
        n.sort_by(|a, b| cmp_distance(target, &a.pk, &b.pk));
        n.truncate(4);
        n
    }
}

/// An announce request as it reached a server.
#[derive(Debug, Clone)]
struct Seen {
    at: Timestamp,
    server: SocketAddr,
    sender: PublicKey,
    ping_id: [u8; 32],
}

/// (delivery time, sequence, from, to, bytes).
type InFlight = (Timestamp, u64, SocketAddr, SocketAddr, Vec<u8>);

struct Net {
    rng: ChaCha8Rng,
    now: Timestamp,
    latency: Duration,
    loss: f64,
    servers: BTreeMap<SocketAddr, (KeyPair, OnionServer)>,
    /// Every server.
    nodes: Vec<PackedNode>,
    /// The half of the servers each server's DHT knows (itself included).
    known: HashMap<SocketAddr, Vec<PackedNode>>,
    junk: std::cell::RefCell<Option<ChaCha8Rng>>,
    clients: Vec<(SocketAddr, OnionClient)>,
    events: Vec<Vec<(Timestamp, OnionEvent)>>,
    queue: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    announces: Vec<Seen>,
    /// Every datagram delivered to a client: (client index, bytes).
    to_clients: Vec<(usize, Vec<u8>)>,
    client_drops: u64,
}

fn server_addr(i: usize) -> SocketAddr {
    SocketAddr::from(([198, 51, 100, i as u8 + 1], 33445))
}

impl Net {
    fn new(servers: usize, seed: u64, latency: Duration, loss: f64) -> Net {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut map = BTreeMap::new();
        let mut nodes = Vec::new();
        for i in 0..servers {
            let keys = KeyPair::generate(&mut rng);
            let server = OnionServer::new(&keys, OnionConfig::default(), START, &mut rng);
            nodes.push(PackedNode::udp(server_addr(i), keys.public));
            map.insert(server_addr(i), (keys, server));
        }
        let mut known = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            let mut k: Vec<PackedNode> = nodes
                .iter()
                .enumerate()
                .filter(|(j, _)| *j == i || rng.next_u32() % 2 == 0)
                .map(|(_, n)| *n)
                .collect();
            k.dedup();
            known.insert(n.addr, k);
        }
        Net {
            rng,
            now: START,
            latency,
            loss,
            servers: map,
            nodes,
            known,
            junk: std::cell::RefCell::new(None),
            clients: Vec::new(),
            events: Vec::new(),
            queue: BinaryHeap::new(),
            seq: 0,
            announces: Vec::new(),
            to_clients: Vec::new(),
            client_drops: 0,
        }
    }

    fn node(&self, i: usize) -> PackedNode {
        self.nodes[i]
    }

    /// A client that knows 4 bootstrap servers and 10 random ones as path nodes.
    fn add_client(&mut self) -> usize {
        let real = KeyPair::generate(&mut self.rng);
        let dht = KeyPair::generate(&mut self.rng);
        let config = OnionClientConfig {
            unix_time_at_origin: UNIX_ORIGIN,
            ..OnionClientConfig::default()
        };
        let mut c = OnionClient::new(real, dht.public, config, self.now, &mut self.rng);
        for i in 0..4 {
            c.add_bootstrap_node(self.node(i));
        }
        for _ in 0..10 {
            let i = (self.rng.next_u32() as usize) % self.nodes.len();
            c.add_path_node(self.now, self.node(i));
        }
        let idx = self.clients.len();
        let addr = SocketAddr::from(([192, 0, 2, idx as u8 + 1], 40000));
        self.clients.push((addr, c));
        self.events.push(Vec::new());
        idx
    }

    fn client(&mut self, i: usize) -> &mut OnionClient {
        &mut self.clients[i].1
    }

    fn pk(&self, i: usize) -> PublicKey {
        self.clients[i].1.real_keys.public
    }

    /// Loss applies to the clients' access links (datagrams from or to a client); relays
    /// talk to each other without loss, as servers on good links do.
    fn send(&mut self, from: SocketAddr, to: SocketAddr, bytes: Vec<u8>) {
        let client_link = !self.servers.contains_key(&from) || !self.servers.contains_key(&to);
        if client_link
            && self.loss > 0.0
            && (self.rng.next_u32() as f64 / u32::MAX as f64) < self.loss
        {
            return;
        }
        self.seq += 1;
        self.queue.push(Reverse((
            self.now + self.latency,
            self.seq,
            from,
            to,
            bytes,
        )));
    }

    fn drain_clients(&mut self) {
        for i in 0..self.clients.len() {
            let from = self.clients[i].0;
            while let Some(t) = self.clients[i].1.poll_transmit() {
                self.send(from, t.dst, t.payload);
            }
            while let Some(e) = self.clients[i].1.poll_event() {
                self.events[i].push((self.now, e));
            }
        }
    }

    fn deliver(&mut self, from: SocketAddr, to: SocketAddr, bytes: Vec<u8>) {
        if let Some((keys, server)) = self.servers.get_mut(&to) {
            if bytes.first() == Some(&0x83) && bytes.len() == ANNOUNCE_REQUEST_SIZE + RETURN_3 {
                let req = &bytes[..ANNOUNCE_REQUEST_SIZE];
                let env = AnnounceEnvelope::parse(req).unwrap();
                let plain = env
                    .open(&PrecomputedKey::new(&env.sender_pk, &keys.secret).unwrap())
                    .unwrap();
                self.announces.push(Seen {
                    at: self.now,
                    server: to,
                    sender: env.sender_pk,
                    ping_id: plain.ping_id,
                });
            }
            let dht = FakeDht {
                nodes: &self.known[&to],
                junk: &self.junk,
            };
            if let Ok(t) = server.handle_datagram(self.now, from, &bytes, &dht, &mut self.rng) {
                self.send(to, t.dst, t.payload);
            }
            return;
        }
        if let Some(i) = self.clients.iter().position(|(a, _)| *a == to) {
            self.to_clients.push((i, bytes.clone()));
            let c = &mut self.clients[i].1;
            if c.handle_datagram(self.now, from, &bytes, &mut self.rng)
                .is_err()
            {
                self.client_drops += 1;
            }
        }
    }

    /// Runs until `done` holds or `until` passes; returns whether `done` held.
    fn run(&mut self, until: Timestamp, mut done: impl FnMut(&Net) -> bool) -> bool {
        let mut same = 0;
        for _ in 0..10_000_000 {
            self.drain_clients();
            if done(self) {
                return true;
            }
            let mut next = Timestamp::MAX;
            if let Some(Reverse((t, ..))) = self.queue.peek() {
                next = *t;
            }
            for (_, c) in &self.clients {
                next = next.min(c.poll_timeout());
            }
            if next > until {
                self.now = until;
                return done(self);
            }
            let next = next.max(self.now);
            if next == self.now {
                same += 1;
                assert!(same < 1000, "the clients spin at {:?}", self.now);
            } else {
                same = 0;
            }
            self.now = next;
            while let Some(Reverse((t, ..))) = self.queue.peek() {
                if *t > self.now {
                    break;
                }
                let Reverse((_, _, from, to, bytes)) = self.queue.pop().unwrap();
                self.deliver(from, to, bytes);
            }
            for i in 0..self.clients.len() {
                if self.clients[i].1.poll_timeout() <= self.now {
                    let now = self.now;
                    self.clients[i].1.handle_timeout(now, &mut self.rng);
                }
            }
        }
        panic!("simulation did not settle");
    }

    fn got_dht_pk(&self, i: usize, friend: &PublicKey) -> Option<(Timestamp, PublicKey)> {
        self.events[i].iter().find_map(|(t, e)| match e {
            OnionEvent::FriendDhtPk {
                friend: f, dht_pk, ..
            } if f == friend => Some((*t, *dht_pk)),
            _ => None,
        })
    }

    /// Servers among the 12 closest to `pk` that store `pk` with `data_pk`.
    fn stored_on_closest(&self, pk: &PublicKey, data_pk: &PublicKey) -> usize {
        let mut nodes = self.nodes.clone();
        nodes.sort_by(|a, b| cmp_distance(pk, &a.pk, &b.pk));
        nodes
            .iter()
            .take(MAX_ONION_CLIENTS_ANNOUNCE)
            .filter(|n| self.servers[&n.addr].1.store().data_pk(self.now, pk) == Some(*data_pk))
            .count()
    }
}

fn elapsed(t: Timestamp) -> Duration {
    t.saturating_duration_since(START)
}

#[test]
fn client_announces_to_closest_servers_and_reports_connected() {
    let mut net = Net::new(40, 1, Duration::from_millis(10), 0.0);
    let c = net.add_client();
    let connected = net.run(START + Duration::from_secs(10), |n| {
        n.events[0].contains(&(n.now, OnionEvent::Connected(true)))
            || n.events[0]
                .iter()
                .any(|(_, e)| *e == OnionEvent::Connected(true))
    });
    assert!(connected, "connected within 10 s");
    let at = net.events[c]
        .iter()
        .find(|(_, e)| *e == OnionEvent::Connected(true))
        .unwrap()
        .0;
    // 10 ms per hop: one onion round trip is 80 ms.
    assert!(
        elapsed(at) <= Duration::from_millis(500),
        "connected after {:?}",
        elapsed(at)
    );
    assert!(net.client(c).is_connected());
    // Keep going: the list converges on the closest servers.
    net.run(START + Duration::from_secs(10), |_| false);
    let pk = net.pk(c);
    let data_pk = net.client(c).data_pk();
    let stored = net.stored_on_closest(&pk, &data_pk);
    assert!(
        stored >= 10,
        "stored on {stored} of the 12 closest after 10 s"
    );
    let s = net.client(c).stats();
    assert_eq!(s.announce_nodes, 12);
    assert!(s.announced_on >= 10, "{s:?}");
    assert_eq!(s.total_dropped(), 0, "{s:?}");
}

fn two_friends(net: &mut Net) -> (usize, usize) {
    let a = net.add_client();
    let b = net.add_client();
    let (pa, pb) = (net.pk(a), net.pk(b));
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    net.client(a).add_friend(pb, &mut rng).unwrap();
    net.client(b).add_friend(pa, &mut rng).unwrap();
    (a, b)
}

fn exchange_dht_pk(latency: Duration, loss: f64, seed: u64, limit: Duration) -> Duration {
    let mut net = Net::new(40, seed, latency, loss);
    let (a, b) = two_friends(&mut net);
    let (pa, pb) = (net.pk(a), net.pk(b));
    let (da, db) = (net.client(a).dht_pk, net.client(b).dht_pk);
    let done = net.run(START + limit, |n| {
        n.got_dht_pk(a, &pb).is_some() && n.got_dht_pk(b, &pa).is_some()
    });
    assert!(done, "both DHT keys within {limit:?}");
    let (ta, ka) = net.got_dht_pk(a, &pb).unwrap();
    let (tb, kb) = net.got_dht_pk(b, &pa).unwrap();
    assert_eq!((ka, kb), (db, da), "each learns the other's DHT key");
    assert_eq!(net.client(a).friend_dht_pk(&pb), Some(db));
    elapsed(ta.max(tb))
}

#[test]
fn friends_exchange_dht_pk_within_one_second_plus_six_round_trips() {
    // 10 ms per hop: an onion round trip (8 hops) is 80 ms; the goal is 1 s + 6 RTT.
    let t = exchange_dht_pk(Duration::from_millis(10), 0.0, 2, Duration::from_secs(30));
    eprintln!("DHT-PK exchanged after {t:?} (10 ms hops)");
    assert!(t <= Duration::from_millis(1000 + 6 * 80), "took {t:?}");
}

#[test]
fn friends_exchange_dht_pk_with_zero_latency_links_at_once() {
    let t = exchange_dht_pk(Duration::ZERO, 0.0, 3, Duration::from_secs(30));
    eprintln!("DHT-PK exchanged after {t:?} (zero latency)");
    assert!(t <= Duration::from_secs(1), "took {t:?}");
}

#[test]
fn friends_find_each_other_with_20_percent_loss() {
    // 20 % loss each way on both clients' links: an onion round trip succeeds 64 % of the
    // time. Several seeds, each within 60 s: a lost DHT-PK is resent after
    // ONION_DHTPK_SEND_INTERVAL (30 s), as in 0.2.18.
    for seed in 4..8 {
        let t = exchange_dht_pk(
            Duration::from_millis(10),
            0.2,
            seed,
            Duration::from_secs(60),
        );
        eprintln!(
            "DHT-PK exchanged after {t:?} (10 ms hops, 20 % loss on client links, seed {seed})"
        );
    }
}

#[test]
fn friend_request_reaches_a_client_that_has_no_such_friend() {
    let mut net = Net::new(40, 5, Duration::from_millis(10), 0.0);
    let a = net.add_client();
    let b = net.add_client();
    let (pa, pb) = (net.pk(a), net.pk(b));
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    net.client(a).add_friend(pb, &mut rng).unwrap();
    let mut payload = vec![1, 2, 3, 4];
    payload.extend_from_slice(b"hello from a");
    let mut onion_data = vec![32];
    onion_data.extend_from_slice(&payload);
    // Once A has found B at enough nodes, send.
    let mut sent = Err(OnionClientError::NotFound);
    for _ in 0..200 {
        let end = net.now + Duration::from_millis(100);
        net.run(end, |_| false);
        let now = net.now;
        sent = net.client(a).send_data(now, &pb, &onion_data, &mut rng);
        if sent.is_ok() {
            break;
        }
    }
    assert!(sent.unwrap() >= 1);
    let now = net.now;
    let got = net.run(START + Duration::from_secs(25), |n| {
        n.events[b]
            .iter()
            .any(|(_, e)| matches!(e, OnionEvent::FriendRequest { .. }))
    });
    assert!(got);
    let reqs: Vec<_> = net.events[b]
        .iter()
        .filter_map(|(_, e)| match e {
            OnionEvent::FriendRequest { from, payload } => Some((*from, payload.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(reqs[0], (pa, payload));
    // Unknown friends and oversize data are refused.
    assert_eq!(
        net.client(b).send_data(now, &pa, b"x", &mut rng),
        Err(OnionClientError::UnknownFriend)
    );
    assert_eq!(
        net.client(a).send_data(now, &pb, &[0; 1022], &mut rng),
        Err(OnionClientError::DataSize(1022))
    );
}

#[test]
fn replayed_and_old_dht_pk_are_rejected() {
    let mut net = Net::new(40, 6, Duration::from_millis(10), 0.0);
    let (a, b) = two_friends(&mut net);
    let pa = net.pk(a);
    assert!(net.run(START + Duration::from_secs(30), |n| n
        .got_dht_pk(b, &pa)
        .is_some()));
    // The 0x86 that carried A's DHT-PK to B, delivered again.
    let before = net.events[b].len();
    let replays: Vec<Vec<u8>> = net
        .to_clients
        .iter()
        .filter(|(i, bytes)| *i == b && bytes[0] == 0x86)
        .map(|(_, bytes)| bytes.clone())
        .collect();
    assert!(!replays.is_empty());
    let now = net.now;
    let from = server_addr(0);
    for bytes in &replays {
        assert_eq!(
            net.client(b)
                .handle_datagram(now, from, bytes, &mut ChaCha8Rng::seed_from_u64(1)),
            Err(OnionClientDrop::Replayed)
        );
    }
    assert!(net.client(b).poll_event().is_none());
    assert_eq!(net.events[b].len(), before);
    assert!(net.client(b).stats().dropped(OnionClientDrop::Replayed) >= replays.len() as u64);
    // The DHT route shares the guard: older is refused, newer accepted.
    let last = UNIX_ORIGIN + now.as_secs();
    let old = DhtPkAnnounce {
        no_replay: UNIX_ORIGIN,
        dht_pk: PublicKey([5; 32]),
        nodes: vec![],
    };
    assert!(!net.client(b).accept_dht_route_pk(&pa, &old));
    let newer = DhtPkAnnounce {
        no_replay: last + 100,
        ..old.clone()
    };
    assert!(net.client(b).accept_dht_route_pk(&pa, &newer));
    assert!(!net.client(b).accept_dht_route_pk(&pa, &newer));
    assert_eq!(net.client(b).friend_dht_pk(&pa), Some(PublicKey([5; 32])));
    // Going offline resets it (0.2.18 `onion_set_friend_online`).
    net.client(b).set_friend_online(&pa, false);
    assert!(net.client(b).accept_dht_route_pk(&pa, &old));
    // Not a friend: refused.
    assert!(!net
        .client(b)
        .accept_dht_route_pk(&PublicKey([9; 32]), &newer));
}

#[test]
fn garbage_and_spoofed_responses_are_dropped_by_reason_without_state_change() {
    let mut net = Net::new(40, 7, Duration::from_millis(10), 0.0);
    let c = net.add_client();
    // Capture real responses before the client sees them.
    net.run(START + Duration::from_millis(30), |_| false);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let now = net.now;
    let from = server_addr(0);
    let before = net.client(c).stats();
    let cases: Vec<(Vec<u8>, OnionClientDrop)> = vec![
        (vec![], OnionClientDrop::UnknownKind),
        (vec![0x00; 100], OnionClientDrop::UnknownKind),
        (vec![0x83; 177], OnionClientDrop::UnknownKind),
        (vec![0x84; 81], OnionClientDrop::BadLength),
        (vec![0x84; 627], OnionClientDrop::BadLength),
        (vec![0x84; 120], OnionClientDrop::UnknownSendback),
        (vec![0x86; 121], OnionClientDrop::BadLength),
        (vec![0x86; 1070], OnionClientDrop::BadLength),
        (vec![0x86; 300], OnionClientDrop::Decrypt),
    ];
    for (bytes, reason) in &cases {
        assert_eq!(
            net.client(c).handle_datagram(now, from, bytes, &mut rng),
            Err(*reason),
            "{:?}",
            &bytes[..bytes.len().min(4)]
        );
    }
    let after = net.client(c).stats();
    assert_eq!(after.total_dropped(), cases.len() as u64);
    assert_eq!(
        (
            after.announce_nodes,
            after.sendbacks,
            after.announce_responses
        ),
        (
            before.announce_nodes,
            before.sendbacks,
            before.announce_responses
        )
    );
    assert!(net.client(c).poll_transmit().is_none());

    // A real response with a flipped bit: Decrypt, and the sendback stays usable, so the
    // genuine response is still taken; a replay of it then finds no sendback.
    let mut net = Net::new(40, 8, Duration::from_millis(10), 0.0);
    let c = net.add_client();
    net.client(c).handle_timeout(START, &mut rng);
    net.drain_clients();
    let mut response = None;
    while response.is_none() {
        let Reverse((t, _, from, to, bytes)) = net.queue.pop().expect("traffic");
        net.now = t;
        if to == net.clients[c].0 {
            response = Some((from, bytes));
        } else {
            net.deliver(from, to, bytes);
        }
    }
    let (from, bytes) = response.unwrap();
    assert_eq!(bytes[0], 0x84);
    let mut bad = bytes.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let now = net.now;
    let cl = net.client(c);
    assert_eq!(
        cl.handle_datagram(now, from, &bad, &mut rng),
        Err(OnionClientDrop::Decrypt)
    );
    assert_eq!(cl.stats().announce_nodes, 0);
    assert_eq!(cl.handle_datagram(now, from, &bytes, &mut rng), Ok(()));
    assert_eq!(cl.stats().announce_nodes, 1);
    assert_eq!(
        cl.handle_datagram(now, from, &bytes, &mut rng),
        Err(OnionClientDrop::UnknownSendback)
    );
    // Too late: a response after 10 s finds no sendback.
    let later = now + Duration::from_secs(11);
    while let Some(Reverse((_, _, from, to, bytes))) = net.queue.pop() {
        if to == net.clients[c].0 && bytes[0] == 0x84 {
            assert_eq!(
                net.client(c).handle_datagram(later, from, &bytes, &mut rng),
                Err(OnionClientDrop::UnknownSendback)
            );
            break;
        }
        net.now = now;
        net.deliver(from, to, bytes);
    }
}

#[test]
fn no_node_gets_two_requests_from_one_sender_within_three_seconds() {
    let mut net = Net::new(40, 9, Duration::from_millis(10), 0.0);
    let (_a, _b) = two_friends(&mut net);
    net.run(START + Duration::from_secs(300), |_| false);
    let mut by_pair: HashMap<(SocketAddr, PublicKey), Vec<Seen>> = HashMap::new();
    for s in &net.announces {
        by_pair
            .entry((s.server, s.sender))
            .or_default()
            .push(s.clone());
    }
    assert!(net.announces.len() > 100);
    let spacing = Duration::from_secs(3);
    for seen in by_pair.values() {
        for w in seen.windows(2) {
            if w[1].at.saturating_duration_since(w[0].at) < spacing {
                // Only the follow-up carrying a ping id just received may come sooner.
                assert_ne!(w[1].ping_id, [0; 32], "{w:?}");
                assert_ne!(w[1].ping_id, w[0].ping_id, "{w:?}");
            }
        }
        for w in seen.windows(3) {
            assert!(
                w[2].at.saturating_duration_since(w[0].at) >= spacing,
                "three requests within 3 s: {w:?}"
            );
        }
    }
}

#[test]
fn tables_stay_bounded_under_floods() {
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let keys = KeyPair::generate(&mut rng);
    let mut c = OnionClient::new(
        keys,
        PublicKey([1; 32]),
        OnionClientConfig {
            max_friends: 3,
            ..OnionClientConfig::default()
        },
        START,
        &mut rng,
    );
    for i in 0..10_000u32 {
        let b = i.to_be_bytes();
        let node = PackedNode::udp(
            SocketAddr::from(([100, b[1], b[2], b[3]], 33445)),
            KeyPair::generate(&mut rng).public,
        );
        c.add_path_node(START, node);
        if i < 100 {
            c.add_bootstrap_node(node);
        }
    }
    for _ in 0..3 {
        c.add_friend(KeyPair::generate(&mut rng).public, &mut rng)
            .unwrap();
    }
    assert_eq!(
        c.add_friend(PublicKey([7; 32]), &mut rng),
        Err(OnionClientError::TooManyFriends)
    );
    let s = c.stats();
    assert_eq!((s.path_nodes, s.bootstrap_nodes, s.friends), (32, 32, 3));

    // Responses that each name 4 new nodes: every list keeps its bound.
    let mut net = Net::new(40, 11, Duration::from_millis(10), 0.0);
    *net.junk.borrow_mut() = Some(ChaCha8Rng::seed_from_u64(12));
    let (a, _b) = two_friends(&mut net);
    let mut max = OnionClientStats::default();
    for step in 1..=60 {
        net.run(START + Duration::from_secs(step), |_| false);
        let s = net.clients[a].1.stats();
        max.sendbacks = max.sendbacks.max(s.sendbacks);
        max.announce_nodes = max.announce_nodes.max(s.announce_nodes);
        max.friend_nodes = max.friend_nodes.max(s.friend_nodes);
        max.guarded_pings = max.guarded_pings.max(s.guarded_pings);
        max.path_nodes = max.path_nodes.max(s.path_nodes);
    }
    assert!(max.sendbacks <= sendback::ANNOUNCE_ARRAY_SIZE, "{max:?}");
    assert!(max.announce_nodes <= MAX_ONION_CLIENTS_ANNOUNCE);
    assert!(max.friend_nodes <= MAX_ONION_CLIENTS);
    assert!(max.guarded_pings <= 2 * nodes::PING_GUARD_SIZE);
    assert!(max.path_nodes <= paths::MAX_PATH_NODES);
}

#[test]
fn unanswered_paths_die_after_their_timeouts_and_are_replaced() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let mut nodes = PathNodes::default();
    for i in 0..10 {
        nodes.add(
            START,
            PackedNode::udp(server_addr(i), KeyPair::generate(&mut rng).public),
        );
    }
    let mut set = PathSet::default();
    let t0 = START;
    let p = set.pick(t0, Some(0), &mut nodes, &mut rng).unwrap();
    // A new path starts at 2 uses of 4; two more without an answer, then 4 s: dead.
    assert_eq!(set.pick(t0, Some(p), &mut nodes, &mut rng), Some(p));
    assert_eq!(set.pick(t0, Some(p), &mut nodes, &mut rng), Some(p));
    assert_eq!(
        set.pick(
            t0 + Duration::from_millis(3999),
            Some(p),
            &mut nodes,
            &mut rng
        ),
        Some(p)
    );
    let q = set
        .pick(t0 + Duration::from_secs(4), Some(p), &mut nodes, &mut rng)
        .unwrap();
    assert_ne!(q, p, "replaced after the first timeout");
    assert_eq!(q as usize % paths::NUMBER_ONION_PATHS, 0, "same slot");
    assert!(!set.exists(t0 + Duration::from_secs(4), p));
    // An answered path: 4 unanswered uses, then the 10 s timeout.
    let t1 = t0 + Duration::from_secs(5);
    assert!(set.confirm(t1, q).is_some());
    for _ in 0..4 {
        assert_eq!(set.pick(t1, Some(q), &mut nodes, &mut rng), Some(q));
    }
    assert_eq!(
        set.pick(t1 + Duration::from_secs(9), Some(q), &mut nodes, &mut rng),
        Some(q)
    );
    let r = set
        .pick(t1 + Duration::from_secs(10), Some(q), &mut nodes, &mut rng)
        .unwrap();
    assert_ne!(r, q, "replaced after the 10 s timeout");
    // However busy, a path lasts 1200 s at most.
    let t2 = t1 + Duration::from_secs(10);
    assert!(set.confirm(t2, r).is_some());
    assert_eq!(
        set.pick(
            t2 + ONION_PATH_MAX_LIFETIME - Duration::from_secs(11),
            Some(r),
            &mut nodes,
            &mut rng
        ),
        Some(r)
    );
    assert_ne!(
        set.pick(t2 + ONION_PATH_MAX_LIFETIME, Some(r), &mut nodes, &mut rng),
        Some(r)
    );
    // Paths use three distinct relays.
    for _ in 0..50 {
        let n = set.pick(t2, None, &mut nodes, &mut rng).unwrap();
        let relays = set.path(n).unwrap().nodes();
        assert!(
            relays[0].pk != relays[1].pk
                && relays[1].pk != relays[2].pk
                && relays[0].pk != relays[2].pk
        );
    }

    // In the network: a client whose traffic is all lost keeps replacing its paths, and
    // connects once the network works.
    let mut net = Net::new(40, 14, Duration::from_millis(10), 1.0);
    let c = net.add_client();
    net.run(START + Duration::from_secs(60), |_| false);
    let s = net.client(c).stats();
    assert!(
        s.paths_created > 2 * paths::NUMBER_ONION_PATHS as u64,
        "{s:?}"
    );
    assert!(!net.client(c).is_connected());
    net.loss = 0.0;
    let end = net.now + Duration::from_secs(10);
    assert!(net.run(end, |n| n.clients[c].1.is_connected()));
}

#[test]
fn connection_is_lost_when_servers_go_silent_and_search_stops_for_online_friends() {
    let mut net = Net::new(40, 15, Duration::from_millis(10), 0.0);
    let (a, b) = two_friends(&mut net);
    let pb = net.pk(b);
    assert!(net.run(START + Duration::from_secs(10), |n| n.clients[a]
        .1
        .is_connected()));
    // Friend online: no search requests for it.
    net.client(a).set_friend_online(&pb, true);
    net.run(net.now + Duration::from_secs(1), |_| false);
    let searches = net.client(a).stats().search_requests;
    net.run(net.now + Duration::from_secs(60), |_| false);
    assert_eq!(net.client(a).stats().search_requests, searches);
    // All traffic lost: disconnected after the node timeouts, with an event.
    net.loss = 1.0;
    let t = net.now;
    assert!(net.run(t + Duration::from_secs(120), |n| !n.clients[a]
        .1
        .is_connected()));
    let lost_after = net.now.saturating_duration_since(t);
    assert!(
        lost_after <= ONION_OFFLINE_TIMEOUT + Duration::from_secs(1),
        "{lost_after:?}"
    );
    assert!(net.events[a]
        .iter()
        .any(|(_, e)| *e == OnionEvent::Connected(false)));
}

/// A friend request from a fresh sender, as the announce node D forwards it to us: a 0x86
/// whose temporary key is new, so no cache can save its key agreement.
fn friend_request_0x86(to_real: &PublicKey, to_data: &PublicKey, rng: &mut ChaCha8Rng) -> Vec<u8> {
    use crate::onion::wire::data::{seal_inner, seal_request, DataRequest};
    use rustox_net_crypto::crypto::Nonce;
    let sender = KeyPair::generate(rng);
    let nonce = Nonce::random(rng);
    let key = PrecomputedKey::new(to_real, &sender.secret).unwrap();
    let inner = seal_inner(&sender.public, &key, &nonce, &[32, 0, 0, 0, 0, b'h', b'i']).unwrap();
    let request = seal_request(to_real, to_data, &nonce, &inner, rng).unwrap();
    DataRequest::parse(&request).unwrap().to_response()
}

/// Onion data (0x86) costs a key agreement with a key its sender makes fresh per packet
/// (and one more with a stranger's real key). A flood from one source is cut by that
/// source's rate before any of them; a flood from many sources by the budget of all
/// sources together; and once the flood stops the budget refills for honest data (issue
/// #15).
#[test]
fn a_flood_of_onion_data_costs_at_most_the_source_rate_and_the_key_budget() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let real = KeyPair::generate(&mut rng);
    let real_pk = real.public;
    let mut c = OnionClient::new(
        real,
        PublicKey([1; 32]),
        OnionClientConfig::default(),
        START,
        &mut rng,
    );
    let data_pk = c.data_pk();
    let limits = DATA_LIMITS;
    let source_burst = limits.burst as u64;
    let budget = limits.key_agreements.unwrap();
    // Each phase floods 300 beyond what it tests.
    let phase_one = source_burst as usize + 300;
    let phase_two = budget.burst as usize + 300;
    let flood: Vec<Vec<u8>> = (0..phase_one + phase_two)
        .map(|_| friend_request_0x86(&real_pk, &data_pk, &mut rng))
        .collect();
    let delivered = |c: &mut OnionClient| {
        let mut n = 0;
        while let Some(e) = c.poll_event() {
            n += u64::from(matches!(e, OnionEvent::FriendRequest { .. }));
        }
        n
    };

    // One source: beyond its burst, nothing reaches a key agreement (and of its burst, a
    // stranger's request costing two, the budget lets half its burst through).
    let one: SocketAddr = "192.0.2.1:33445".parse().unwrap();
    for p in &flood[..phase_one] {
        let _ = c.handle_datagram(START, one, p, &mut rng);
    }
    assert_eq!(c.stats().dropped(OnionClientDrop::RateLimited), 300);
    assert_eq!(
        delivered(&mut c),
        source_burst.min(u64::from(budget.burst) / 2)
    );

    // Many sources, 1 s later (the budget full again): each stranger's request takes two
    // key agreements, so half the burst get through, and no more.
    let t1 = START + Duration::from_secs(1);
    for (i, p) in flood[phase_one..].iter().enumerate() {
        let from = SocketAddr::from(([10, 1, (i / 250) as u8, (i % 250) as u8 + 1], 33445));
        let _ = c.handle_datagram(t1, from, p, &mut rng);
    }
    assert_eq!(delivered(&mut c), u64::from(budget.burst) / 2);
    let in_phase_one = source_burst - u64::from(budget.burst) / 2;
    assert_eq!(
        c.stats().dropped(OnionClientDrop::KeyBudget),
        in_phase_one + phase_two as u64 - u64::from(budget.burst) / 2
    );

    // The flood over, an honest request from yet another source gets through.
    let t2 = t1 + budget.interval * 2;
    let honest = friend_request_0x86(&real_pk, &data_pk, &mut rng);
    let relay: SocketAddr = "198.51.100.3:33445".parse().unwrap();
    assert_eq!(c.handle_datagram(t2, relay, &honest, &mut rng), Ok(()));
    assert_eq!(delivered(&mut c), 1);
}

/// A path that times out counts against its relays that nothing heard from since: new
/// paths leave them out, and a second failure drops the node from the ring, while the
/// live node beside it (heard by the DHT and on other paths) is not blamed.
#[test]
fn paths_leave_out_the_nodes_paths_timed_out_through() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut nodes = PathNodes::default();
    let live = PackedNode::udp(server_addr(1), KeyPair::generate(&mut rng).public);
    let dead = PackedNode::udp(server_addr(2), KeyPair::generate(&mut rng).public);
    assert!(nodes.add(START, live));
    assert!(nodes.add(START, dead));
    let mut set = PathSet::default();
    let passes_dead = |set: &PathSet, num: u32| {
        set.path(num)
            .unwrap()
            .nodes()
            .iter()
            .any(|n| n.pk == dead.pk)
    };
    // Round after round: paths without the dead node answer, the others do not.
    let mut t = START;
    let mut dead_paths_seen = 0;
    for round in 0..6 {
        // The DHT hears the live node every round (its replies); never the dead one.
        nodes.answered(t, &live.pk, t);
        let nums: Vec<u32> = (0..6)
            .map(|slot| set.pick(t, Some(slot), &mut nodes, &mut rng).unwrap())
            .collect();
        for &num in &nums {
            if passes_dead(&set, num) {
                dead_paths_seen += 1;
                // Used until the no-response timeout applies.
                set.pick(t, Some(num), &mut nodes, &mut rng);
                set.pick(t, Some(num), &mut nodes, &mut rng);
            } else {
                set.confirm(t, num);
                nodes.answered(t, &live.pk, t);
            }
        }
        if round >= 2 {
            assert!(
                nums.iter().all(|&n| !passes_dead(&set, n)),
                "round {round}: a new path still passes the dead node"
            );
        }
        t += Duration::from_secs(11);
    }
    assert!(dead_paths_seen > 0, "the seed drew the dead node at first");
    assert_eq!(nodes.len(), 1, "the dead node left the ring");
    // It is not taken back while its failures count, even if the DHT still offers it.
    assert!(!nodes.add(t, dead));
    assert!(nodes.add(t + super::path_health::FAILURE_MEMORY, dead));
}
