//! What wakes an idle node, by cause (against a budget of about one wake-up a second in
//! all), in virtual time: one
//! bootstrap node, node A, `friends` friends of A (each sends A a friend request, A accepts
//! strangers; the requests spread over 8 s), optionally friends of A that nobody runs
//! ([`run_idle_with`]), and `fillers` plain nodes that make the DHT and the onion
//! realistic, 20 ms between any two nodes. Once everyone is online and a settling minute
//! has passed, A is watched for `seconds`: every instant at which A handles a datagram or a
//! timer is one wake-up, tallied by the timers due and by the datagrams' first bytes.
//!
//! The simulator delivers datagrams that leave together at the same instant, so this counts
//! the wake-ups the protocol asks for; a real driver also wakes once per datagram that
//! arrives while it sleeps (`idle-bench` measures that on real sockets).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::net::SocketAddr;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rustox_core::node::{FriendNumber, NodeOptions};
use rustox_net_crypto::crypto::KeyPair;
use rustox_net_crypto::Timestamp;
use rustox_simulator::SimNode;

use crate::tox_node::{SimToxNode, SimToxOptions};

/// How long after everyone is online the count starts.
const SETTLE: Duration = Duration::from_secs(60);
/// One-way delay between any two nodes.
const ONE_WAY: Duration = Duration::from_millis(20);
/// The friends send their requests this far apart in all, one after the other (as people
/// start their clients at their own times): their timers start in every phase of
/// friend_connection's 8 s ALIVE interval, not in one.
const STAGGER: Duration = Duration::from_secs(8);
/// Longest wait for everyone to come online.
const ONLINE_LIMIT: Duration = Duration::from_secs(600);

/// What A did while idle.
#[derive(Debug, Clone, Default)]
pub struct IdleReport {
    /// When everyone was online, seconds from the start.
    pub online_at: f64,
    /// Seconds watched.
    pub seconds: u64,
    /// Instants at which A handled anything.
    pub wakeups: u64,
    /// Instants at which a timer of A was due, by the set of timers due ("dht+friends").
    pub timer_wakeups: BTreeMap<String, u64>,
    /// Datagrams A received, by first byte.
    pub received: BTreeMap<u8, u64>,
    /// Net_crypto data packets (id 27) A sent.
    pub session_packets_sent: u64,
    /// A's friends' records and sessions at the end, bytes (`Node::friend_memory`).
    pub friend_memory: usize,
    /// A's DHT searches for friends at the end, and how many of them were paused (the
    /// friend online over direct UDP).
    pub searches: (usize, usize),
}

impl IdleReport {
    /// Wake-ups per second.
    pub fn wakeups_per_sec(&self) -> f64 {
        self.wakeups as f64 / self.seconds as f64
    }

    /// Timer wake-ups per second.
    pub fn timer_wakeups_per_sec(&self) -> f64 {
        self.timer_wakeups.values().sum::<u64>() as f64 / self.seconds as f64
    }
}

/// A datagram on its way: (arrival, sequence, from, to, payload).
type InFlight = (Timestamp, u64, usize, usize, Vec<u8>);

fn addr(i: usize) -> SocketAddr {
    SocketAddr::from(([10, 0, (i / 250) as u8, 1 + (i % 250) as u8], 33445))
}

/// Runs the scenario; `None` if not everyone came online. Also returns A itself, so that a
/// caller can measure its heap by dropping it.
pub fn run_idle(friends: usize, fillers: usize, seconds: u64) -> Option<(IdleReport, SimToxNode)> {
    run_idle_with(friends, 0, fillers, seconds)
}

/// [`run_idle`] where A also has `offline` friends nobody runs (random keys, added without
/// a request, as a profile's friends are): A searches for them through the onion for as
/// long as it runs. With no online friend, the count starts [`SETTLE`] after the start.
pub fn run_idle_with(
    friends: usize,
    offline: usize,
    fillers: usize,
    seconds: u64,
) -> Option<(IdleReport, SimToxNode)> {
    let t0 = Timestamp::ZERO;
    // 0: bootstrap, 1: A, 2..2 + friends: friends, then fillers.
    let n = 2 + friends + fillers;
    let mut nodes: Vec<SimToxNode> = (0..n)
        .map(|i| {
            let node = NodeOptions {
                accept_strangers: i == 1,
                ..NodeOptions::default()
            };
            SimToxNode::new(t0, 100 + i as u64, SimToxOptions { node })
        })
        .collect();
    let boot_pk = nodes[0].node.dht_public_key();
    for node in nodes.iter_mut().skip(1) {
        node.bootstrap(t0, addr(0), boot_pk);
    }
    let a_id = nodes[1].node.tox_id();
    // (when, friend's index): each friend's request, in time order.
    let mut requests: Vec<(Timestamp, usize)> = (0..friends)
        .map(|k| (t0 + STAGGER * k as u32 / friends.max(1) as u32, 2 + k))
        .rev()
        .collect();

    let mut keys = ChaCha20Rng::seed_from_u64(0x0ff1);
    for _ in 0..offline {
        let pk = KeyPair::generate(&mut keys).public;
        nodes[1].node.add_friend_norequest(t0, pk).ok()?;
    }
    let by_addr: BTreeMap<SocketAddr, usize> = (0..n).map(|i| (addr(i), i)).collect();
    let mut wire: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut now = t0;
    let mut window: Option<(Timestamp, Timestamp)> = None;
    let mut report = IdleReport {
        seconds,
        ..IdleReport::default()
    };
    let mut instants: BTreeSet<Timestamp> = BTreeSet::new();
    let give_up = t0 + ONLINE_LIMIT;
    loop {
        while requests.last().is_some_and(|r| r.0 <= now) {
            let Some((_, f)) = requests.pop() else {
                break;
            };
            nodes[f].node.add_friend(now, &a_id, b"hi").ok()?;
        }
        let counting = window.is_some_and(|(s, e)| now >= s && now < e);
        for (i, node) in nodes.iter_mut().enumerate() {
            while let Some((dst, payload)) = node.poll_transmit(now) {
                if i == 1 && counting && payload.first() == Some(&27) {
                    report.session_packets_sent += 1;
                }
                if let Some(&to) = by_addr.get(&dst) {
                    seq += 1;
                    wire.push(Reverse((now + ONE_WAY, seq, i, to, payload)));
                }
            }
        }
        match window {
            None => {
                let online = nodes[1].log.online.len() >= friends
                    && nodes
                        .iter()
                        .skip(2)
                        .take(friends)
                        .all(|f| !f.log.online.is_empty());
                if online {
                    report.online_at = now.as_secs_f64();
                    let start = now + SETTLE;
                    window = Some((start, start + Duration::from_secs(seconds)));
                } else if now >= give_up {
                    return None;
                }
            }
            Some((_, end)) if now >= end => break,
            Some(_) => {}
        }
        let next_timer = nodes.iter().filter_map(|x| x.poll_timeout()).min();
        let next_wire = wire.peek().map(|Reverse(w)| w.0);
        let next_request = requests.last().map(|r| r.0);
        let Some(next) = [next_timer, next_wire, next_request]
            .into_iter()
            .flatten()
            .min()
        else {
            break;
        };
        now = next.max(now);
        let counting = window.is_some_and(|(s, e)| now >= s && now < e);
        for (i, node) in nodes.iter_mut().enumerate() {
            if node.poll_timeout().is_none_or(|t| t > now) {
                continue;
            }
            if i == 1 && counting {
                let due = node.node.due_timers(now);
                let causes: Vec<&str> = [
                    ("dht", due.dht),
                    ("onion_server", due.onion_server),
                    ("onion_client", due.onion_client),
                    ("sessions", due.sessions),
                    ("friends", due.friends),
                ]
                .iter()
                .filter(|c| c.1)
                .map(|c| c.0)
                .collect();
                *report.timer_wakeups.entry(causes.join("+")).or_default() += 1;
                instants.insert(now);
            }
            node.handle_timeout(now);
        }
        while wire.peek().is_some_and(|Reverse(w)| w.0 <= now) {
            let Some(Reverse((_, _, from, to, payload))) = wire.pop() else {
                break;
            };
            if to == 1 && counting {
                if let Some(&first) = payload.first() {
                    *report.received.entry(first).or_default() += 1;
                }
                instants.insert(now);
            }
            nodes[to].handle_datagram(now, addr(from), addr(to), &payload);
        }
    }
    report.wakeups = instants.len() as u64;
    let a = nodes.swap_remove(1);
    let searches = a.node.dht().searches().iter().filter(|s| !s.fake);
    report.searches = (
        searches.clone().count(),
        searches.filter(|s| s.dormant).count(),
    );
    report.friend_memory = (0..(friends + offline) as u32)
        .filter_map(|f| a.node.friend_memory(FriendNumber(f)))
        .sum();
    Some((report, a))
}
