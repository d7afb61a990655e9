//! Onion path nodes that die, in the simulator: Alice and Bob are online friends on a small
//! network with no bootstrap node (they bootstrapped to each other, and in the second case
//! two more nodes joined through Alice); then Bob restarts with a new DHT key on a new port
//! (his real key, and so his Tox ID, stay) and bootstraps to Alice again, and the other
//! nodes leave at the same instant. Alice's path pool still holds the dead nodes (Bob's
//! old DHT node among them, and as her bootstrap node); the two must find each other
//! again, through paths over the nodes that are left, within 90 s (under the stable
//! announce interval, `ANNOUNCE_INTERVAL_STABLE`, 120 s). Before path nodes were blamed for
//! the paths that timed out through them, Alice kept drawing the dead nodes and Bob was
//! not found within 300 s.
//!
//! Failing seeds replay with SIM_SEED.

use std::net::SocketAddr;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rustox_auto_tests::tox_node::{SimToxNode, SimToxOptions};
use rustox_core::node::{FriendNumber, Node, NodeOptions};
use rustox_net_crypto::crypto::KeyPair;
use rustox_net_crypto::Timestamp;
use rustox_simulator::{seed_from_env, NodeId, Profile, Simulator};

/// The bound on finding Bob again after his restart (simulated time): the 90 s within
/// which a friend restarting beside one other node must be found again, under the
/// stable announce interval (`ANNOUNCE_INTERVAL_STABLE`, 120 s).
const FOUND_AGAIN_WITHIN: Duration = Duration::from_secs(90);

fn addr(last: u8, port: u16) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, last], port))
}

/// A node whose real key pair is `keys` (its DHT key is fresh, as every start's is).
fn node_with(start: Timestamp, seed: u64, keys: KeyPair) -> SimToxNode {
    let mut n = SimToxNode::new(start, seed, SimToxOptions::default());
    n.node = Node::new(
        start,
        keys,
        NodeOptions::default(),
        Box::new(ChaCha20Rng::seed_from_u64(seed ^ 0xb0b)),
    );
    n
}

fn step_until(
    sim: &mut Simulator<SimToxNode>,
    deadline: Timestamp,
    done: impl Fn(&Simulator<SimToxNode>) -> bool,
) {
    while !done(sim) && sim.now() < deadline {
        match sim.step() {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => sim.fail(&e),
        }
    }
}

/// Returns how long after Bob's restart Alice saw him online again.
fn restart_scenario(seed: u64, others: u8) -> Option<Duration> {
    let mut sim: Simulator<SimToxNode> = Simulator::new(
        seed,
        Profile::by_name("wan20").expect("profile").link_config(),
    );
    sim.set_trace_enabled(false);
    let start = Timestamp::ZERO;
    let base = seed.wrapping_mul(0x9e37_79b9);
    let mut rng = ChaCha20Rng::seed_from_u64(base);
    let alice_keys = KeyPair::generate(&mut rng);
    let bob_keys = KeyPair::generate(&mut rng);
    let mut alice = node_with(start, base + 2, alice_keys.clone());
    let mut bob = node_with(start, base + 3, bob_keys.clone());
    let friend: FriendNumber = alice
        .node
        .add_friend_norequest(start, bob_keys.public)
        .expect("alice adds bob");
    bob.node
        .add_friend_norequest(start, alice_keys.public)
        .expect("bob adds alice");
    let (alice_addr, bob_addr) = (addr(2, 33445), addr(3, 33445));
    let alice_pk = alice.node.dht_public_key();
    alice.bootstrap(start, bob_addr, bob.node.dht_public_key());
    bob.bootstrap(start, alice_addr, alice_pk);
    let a = sim.add_node(vec![alice_addr], alice).expect("alice");
    let b = sim.add_node(vec![bob_addr], bob).expect("bob");
    let mut extra: Vec<NodeId> = Vec::new();
    for i in 0..others {
        let mut n = SimToxNode::new(start, base + 10 + u64::from(i), SimToxOptions::default());
        n.bootstrap(start, alice_addr, alice_pk);
        extra.push(sim.add_node(vec![addr(10 + i, 33445)], n).expect("node"));
    }
    // Online, then long enough for the paths and lists to settle on every node.
    step_until(&mut sim, start + Duration::from_secs(60), |s| {
        !s.node(a).log.online.is_empty() && !s.node(b).log.online.is_empty()
    });
    assert!(
        !sim.node(a).log.online.is_empty(),
        "seed {seed}: never online at first"
    );
    let settle = sim.now() + Duration::from_secs(120);
    step_until(&mut sim, settle, |_| false);

    // Bob restarts on a new port with a new DHT key; the other nodes leave.
    sim.remove_node(b);
    for id in &extra {
        sim.remove_node(*id);
    }
    let restart = sim.now();
    let mut bob2 = node_with(restart, base + 99, bob_keys);
    bob2.node
        .add_friend_norequest(restart, alice_keys.public)
        .expect("bob adds alice");
    bob2.bootstrap(restart, alice_addr, alice_pk);
    let _ = sim.add_node(vec![addr(4, 40001)], bob2).expect("bob again");
    let seen_before = sim.node(a).log.online.len();
    step_until(&mut sim, restart + Duration::from_secs(300), |s| {
        s.node(a).log.online.len() > seen_before
    });
    let found = sim.node(a).log.online[seen_before..]
        .iter()
        .find(|(_, f)| *f == friend)
        .map(|(t, _)| *t - restart);
    eprintln!(
        "seed {seed}, {others} other nodes: found again after {found:?}; alice {:?}",
        sim.node(a).node.onion_client_stats()
    );
    found
}

fn check(others: u8, seeds: u64) {
    let seeds = std::env::var("PATH_DIE_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(seeds);
    let base = seed_from_env(51);
    for seed in base..base + seeds {
        let found = restart_scenario(seed, others);
        assert!(
            found.is_some_and(|t| t <= FOUND_AGAIN_WITHIN),
            "seed {seed}, {others} other nodes: Bob found again after {found:?}, bound {FOUND_AGAIN_WITHIN:?}"
        );
    }
}

#[test]
fn a_friend_restarting_with_a_new_key_is_found_again_with_one_other_node() {
    check(0, 5);
}

#[test]
fn a_friend_restarting_with_a_new_key_is_found_again_when_path_nodes_die() {
    check(2, 5);
}
