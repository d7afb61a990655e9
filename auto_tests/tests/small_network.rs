//! Networks of two or three nodes and nothing else, in the simulator: no bootstrap node, the
//! nodes found by LAN discovery alone. c-toxcore counts itself online once it is announced
//! on half of the live nodes of its announce list, however few (`onion_isconnected`,
//! onion_client.c), and builds paths by drawing nodes with replacement, so two instances on
//! one LAN announce to each other through paths that pass one node several times. Ours
//! must do the same: both report themselves connected, and friends find each other.
//!
//! The simulator has no broadcast: each node gets the others' LAN discovery packet (the
//! wire bytes, from the sender's address) as a broadcast would deliver it, once at the
//! start; from then on only the protocol runs. Failing seeds replay with SIM_SEED.

use std::net::SocketAddr;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rustox_auto_tests::tox_node::{SimToxNode, SimToxOptions};
use rustox_core::dht::wire::lan_discovery;
use rustox_core::node::{Node, NodeOptions};
use rustox_net_crypto::crypto::KeyPair;
use rustox_net_crypto::Timestamp;
use rustox_simulator::{seed_from_env, NodeId, Profile, Simulator};

/// The bound on being announced (simulated time): the first announce goes out at once, a
/// stored announce needs the ping-id round trip on top, and a path that loses its first
/// request waits out 0.2.18's per-node ceiling of 3 s before the next; c-toxcore's
/// instances take 7–8 s on loopback (3 s before the first announce, a one-second tick).
const CONNECTED_WITHIN: Duration = Duration::from_secs(10);

fn addr(last: u8) -> SocketAddr {
    SocketAddr::from(([192, 168, 1, last], 33445))
}

/// A node with LAN discovery on (the simulator's plain nodes have it off).
fn lan_node(start: Timestamp, seed: u64, accept_strangers: bool) -> SimToxNode {
    let mut sim_node = SimToxNode::new(start, seed, SimToxOptions::default());
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x1a2);
    let keys = KeyPair::generate(&mut rng);
    let mut options = NodeOptions {
        accept_strangers,
        ..NodeOptions::default()
    };
    options.dht.lan_discovery = true;
    sim_node.node = Node::new(start, keys, options, Box::new(rng));
    sim_node
}

/// `n` nodes on one LAN, each told of the others by their LAN discovery packets; the
/// first one sends the second a friend request, which the second accepts.
fn lan(n: u8, seed: u64) -> (Simulator<SimToxNode>, Vec<NodeId>) {
    let mut sim: Simulator<SimToxNode> = Simulator::new(seed, Profile::lan().link_config());
    sim.set_trace_enabled(false);
    let start = Timestamp::ZERO;
    let mut nodes: Vec<SimToxNode> = (0..n)
        .map(|i| lan_node(start, seed.wrapping_mul(31) + u64::from(i), i == 1))
        .collect();
    let second = nodes[1].node.tox_id();
    nodes[0]
        .node
        .add_friend(start, &second, b"on the same LAN")
        .expect("friend request");
    let keys: Vec<_> = nodes.iter().map(|x| x.node.dht_public_key()).collect();
    let ids: Vec<NodeId> = nodes
        .into_iter()
        .enumerate()
        .map(|(i, x)| sim.add_node(vec![addr(2 + i as u8)], x).expect("node"))
        .collect();
    for (i, id) in ids.iter().enumerate() {
        for (j, key) in keys.iter().enumerate() {
            if i != j {
                let packet = lan_discovery::encode(key);
                sim.with_node(*id, |x, now| {
                    x.node.handle_datagram(now, addr(2 + j as u8), &packet)
                });
            }
        }
    }
    (sim, ids)
}

/// When each node first reported itself connected.
fn connected_at(sim: &Simulator<SimToxNode>, ids: &[NodeId]) -> Vec<Option<Timestamp>> {
    ids.iter()
        .map(|id| {
            sim.node(*id)
                .log
                .self_connection
                .iter()
                .find(|(_, c)| *c)
                .map(|(t, _)| *t)
        })
        .collect()
}

fn run(n: u8, seeds: u64) {
    let base = seed_from_env(71);
    for seed in base..base + seeds {
        let (mut sim, ids) = lan(n, seed);
        let deadline = Timestamp::ZERO + Duration::from_secs(60);
        let done = |sim: &Simulator<SimToxNode>| {
            connected_at(sim, &ids).iter().all(Option::is_some)
                && !sim.node(ids[0]).log.online.is_empty()
                && !sim.node(ids[1]).log.online.is_empty()
        };
        while !done(&sim) && sim.now() < deadline {
            match sim.step() {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => sim.fail(&e),
            }
        }
        let at = connected_at(&sim, &ids);
        for (i, t) in at.iter().enumerate() {
            let t = t.unwrap_or_else(|| {
                panic!(
                    "{n} nodes, seed {seed}: node {i} never connected: {:?}",
                    sim.node(ids[i]).node.onion_client_stats()
                )
            });
            assert!(
                t - Timestamp::ZERO <= CONNECTED_WITHIN,
                "{n} nodes, seed {seed}: node {i} connected only after {t:?}"
            );
            assert!(
                sim.node(ids[i]).node.is_onion_connected(),
                "{n} nodes, seed {seed}: node {i} fell back to offline"
            );
        }
        let online = |i: usize| sim.node(ids[i]).log.online.first().map(|(t, _)| *t);
        assert!(
            online(0).is_some() && online(1).is_some(),
            "{n} nodes, seed {seed}: the friends did not come online"
        );
        eprintln!(
            "{n} nodes, seed {seed}: connected at {:?}, friends online at {:?} / {:?}",
            at,
            online(0),
            online(1)
        );
    }
}

#[test]
fn two_nodes_found_by_lan_discovery_alone_announce_and_befriend() {
    run(2, 5);
}

#[test]
fn three_nodes_found_by_lan_discovery_alone_announce_and_befriend() {
    run(3, 5);
}
