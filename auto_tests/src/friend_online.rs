//! How long two Tox nodes take to become online friends, in the simulator.
//!
//! Three whole nodes (`rustox_core::node::Node`): a bootstrap node that only serves the DHT
//! and the onion, and Alice and Bob, who know only the bootstrap node. Every path between
//! two nodes is the profile's link (its delay, loss, jitter and bottleneck). Alice sends Bob
//! a friend request to his Tox ID and Bob accepts it ([`Friendship::Request`]), or both add
//! each other by key ([`Friendship::Mutual`]); the run ends when each sees the other online.
//! The figure is the time from start to the later of the two `FriendConnection { online }`
//! events, with the datagrams all three nodes sent meanwhile.
//!
//! A relayed profile ([`Profile::relayed`], relay500) runs here as UDP links of its shape,
//! not through the simulated relay: finding a friend takes the onion, whose paths may start
//! at a TCP relay but go on through two UDP path nodes (core/src/onion/client/paths.rs),
//! and in a network of three nodes two that cannot reach each other over UDP have no onion
//! path between them. What the relay changes —
//! the session's path once they know each other — is measured by `node_transfer.rs`.

use std::net::SocketAddr;
use std::time::Duration;

use rustox_core::node::NodeOptions;
use rustox_net_crypto::Timestamp;
use rustox_simulator::{Profile, Simulator};

use crate::tox_node::{SimToxNode, SimToxOptions};

/// How the two become friends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Friendship {
    /// Alice sends a friend request to Bob's Tox ID; Bob accepts requests from anyone.
    Request,
    /// Both add the other's public key without a request (`tox_friend_add_norequest`).
    Mutual,
}

/// One run's settings.
#[derive(Debug, Clone)]
pub struct OnlineOptions {
    /// The path between every two nodes.
    pub profile: Profile,
    /// The run's seed.
    pub seed: u64,
    /// How they become friends.
    pub friendship: Friendship,
    /// Give up after this much virtual time (counted from Bob's start).
    pub limit: Duration,
    /// Bob starts this long after Alice and the bootstrap node: Alice has searched for
    /// him all that while, her search backed off (onion_client.c's schedule, on the shared
    /// search grid). Times are counted from Bob's start.
    pub bob_starts_after: Duration,
}

impl OnlineOptions {
    /// A request-and-accept run on `profile` with `seed`, 120 s at most.
    pub fn new(profile: Profile, seed: u64) -> Self {
        OnlineOptions {
            profile,
            seed,
            friendship: Friendship::Request,
            limit: Duration::from_secs(120),
            bob_starts_after: Duration::ZERO,
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct OnlineReport {
    /// When Alice saw Bob online.
    pub alice_sees_bob: Option<Duration>,
    /// When Bob saw Alice online.
    pub bob_sees_alice: Option<Duration>,
    /// Datagrams delivered between the three nodes until both were online (or the limit).
    pub datagrams: u64,
    /// When Alice's and Bob's DHT first held a node that answered.
    pub dht_connected: (Option<Duration>, Option<Duration>),
}

impl OnlineReport {
    /// Both online: the later of the two times.
    pub fn both_online(&self) -> Option<Duration> {
        Some(self.alice_sees_bob?.max(self.bob_sees_alice?))
    }
}

fn addr(last: u8) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, last], 33445))
}

/// Runs one friend-online scenario.
pub fn run_friend_online(options: &OnlineOptions) -> OnlineReport {
    let mut link = options.profile.link_config();
    link.record_samples = false;
    let mut sim: Simulator<SimToxNode> = Simulator::new(options.seed, link);
    sim.set_trace_enabled(false);
    let start = Timestamp::ZERO;
    let seed = options.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let plain = || SimToxOptions {
        node: NodeOptions::default(),
    };
    let bootstrap = SimToxNode::new(start, seed, plain());
    let (boot_pk, boot_addr) = (bootstrap.node.dht_public_key(), addr(1));
    let mut alice = SimToxNode::new(start, seed + 1, plain());
    let bob_start = start + options.bob_starts_after;
    let mut bob = SimToxNode::new(
        bob_start,
        seed + 2,
        SimToxOptions {
            node: NodeOptions {
                accept_strangers: options.friendship == Friendship::Request,
                ..NodeOptions::default()
            },
        },
    );
    alice.bootstrap(start, boot_addr, boot_pk);
    bob.bootstrap(bob_start, boot_addr, boot_pk);
    let bob_id = bob.node.tox_id();
    let alice_pk = alice.node.public_key();
    let friend_of_alice = match options.friendship {
        Friendship::Request => alice
            .node
            .add_friend(start, &bob_id, b"Hi Bob, it's Alice")
            .ok(),
        Friendship::Mutual => {
            let _ = bob.node.add_friend_norequest(bob_start, alice_pk);
            alice.node.add_friend_norequest(start, bob_id.pk).ok()
        }
    };
    let _ = sim.add_node(vec![boot_addr], bootstrap);
    let a = sim.add_node(vec![addr(2)], alice);
    while sim.now() < bob_start {
        match sim.step() {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => panic!("simulator: {e:?}"),
        }
    }
    // Bob joins at the first event at or after his start (the same instant when he starts
    // with the others); his timers already due run at once.
    let bob_start = sim.now().max(bob_start);
    let b = sim.add_node(vec![addr(3)], bob);
    let (Some(a), Some(b), Some(_)) = (a, b, friend_of_alice) else {
        return OnlineReport {
            alice_sees_bob: None,
            bob_sees_alice: None,
            datagrams: 0,
            dht_connected: (None, None),
        };
    };
    let deadline = bob_start + options.limit;
    let both = |sim: &Simulator<SimToxNode>| {
        !sim.node(a).log.online.is_empty() && !sim.node(b).log.online.is_empty()
    };
    while !both(&sim) && sim.now() < deadline {
        match sim.step() {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => panic!("simulator: {e:?}"),
        }
    }
    let since = |t: Timestamp| t - bob_start;
    let first_connected = |n: &SimToxNode| {
        n.log
            .self_connection
            .iter()
            .find(|(_, c)| *c)
            .map(|(t, _)| since(*t))
    };
    let (na, nb) = (sim.node(a), sim.node(b));
    OnlineReport {
        alice_sees_bob: na.log.online.first().map(|(t, _)| since(*t)),
        bob_sees_alice: nb.log.online.first().map(|(t, _)| since(*t)),
        datagrams: sim.stats().datagrams_delivered,
        dht_connected: (first_connected(na), first_connected(nb)),
    }
}
