//! Scale, by simulation: friend pairs finding each other in a network of many
//! whole nodes, with loss and churn.
//!
//! The network: `nodes` whole `rustox_core::node::Node`s at 10.x.y.z addresses. A few
//! well-known bootstrap nodes start first, know each other and never leave; every other
//! node starts at a random instant of the first `start_spread` (a real network does not
//! start at one instant) and bootstraps off two random well-known nodes. Every path is the
//! same link: a fixed one-way delay (`rtt / 2`) and independent random loss, no bottleneck —
//! one link shared by all pairs ([`Simulator::share_default_link`], exact for such a link).
//!
//! Churn: from the end of the start spread, `churn_per_min` of the ordinary nodes (neither
//! bootstrap nor in a pair) are replaced per minute ([`churn`]): a random one leaves — the
//! simulator releases its address and drops what is in flight to it
//! ([`Simulator::remove_node`]), its memory is freed — and a fresh node with a new key joins
//! at a new address and bootstraps like the others.
//!
//! The measurement: after `warmup`, in each of `pairs` pairs of ordinary nodes chosen up
//! front (never churned), one sends a friend request to the other's Tox ID and the other
//! accepts strangers. A pair's time is from the add to the later of the two
//! `FriendConnection { online: true }` events. The run ends when every pair is online or
//! `limit` after the adds.

mod churn;
mod node;
pub mod process;
mod report;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rand::seq::index::sample;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rustox_core::node::NodeOptions;
use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;
use rustox_simulator::{LinkConfig, LossModel, NodeId, SimError, Simulator};

use crate::heap_meter;
use crate::tox_node::{SimToxNode, SimToxOptions};
pub use churn::Churn;
pub use node::ScaleNode;
pub use report::{MemoryReport, OnlineTimes, ScaleReport, TableReport};

/// Well-known bootstrap nodes each ordinary node is given: two, as a client ships a short
/// list and tries a few (qTox and toxic bootstrap off a handful of the nodes list).
const BOOTSTRAPS_PER_NODE: usize = 2;

/// Simulated time between checks of whether every pair is online. Only when the run stops
/// depends on it; each pair's time comes from the nodes' own event logs.
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// The port every simulated node listens on (Tox's default, 33445).
const TOX_PORT: u16 = 33445;

/// One run's settings.
#[derive(Debug, Clone)]
pub struct ScaleOptions {
    /// Nodes in the network, bootstrap nodes included.
    pub nodes: usize,
    /// Well-known bootstrap nodes (never leave).
    pub bootstrap_nodes: usize,
    /// Friend pairs (2 × this ordinary nodes, never churned).
    pub pairs: usize,
    /// Random loss on every path, each direction.
    pub loss: f64,
    /// Round-trip time of every path.
    pub rtt: Duration,
    /// Fraction of the ordinary nodes replaced per minute.
    pub churn_per_min: f64,
    /// Ordinary nodes start at random instants within this.
    pub start_spread: Duration,
    /// When the pairs add each other.
    pub warmup: Duration,
    /// How long after the adds to wait for every pair.
    pub limit: Duration,
    /// The run's seed.
    pub seed: u64,
}

impl Default for ScaleOptions {
    /// The network the scale goals are stated for (docs/benchmarks.md): 1000 nodes, 50 pairs, 5 % loss, 1 % churn a minute; a 40 ms
    /// round trip (a continental path), 8 bootstrap nodes, 10 s start spread, 60 s warmup,
    /// 300 s limit.
    fn default() -> Self {
        ScaleOptions {
            nodes: 1000,
            bootstrap_nodes: 8,
            pairs: 50,
            loss: 0.05,
            rtt: Duration::from_millis(40),
            churn_per_min: 0.01,
            start_spread: Duration::from_secs(10),
            warmup: Duration::from_secs(60),
            limit: Duration::from_secs(300),
            seed: 1,
        }
    }
}

/// Why a run could not be set up or went wrong.
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    /// The options cannot describe a network.
    #[error("{0}")]
    Options(String),
    /// The simulator stopped.
    #[error("simulator: {0}")]
    Sim(#[from] SimError),
}

/// The address of the `index`-th node ever created: 10.x.y.z, never reused.
fn address(index: usize) -> SocketAddr {
    let i = index as u32 + 1;
    SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], TOX_PORT))
}

/// A well-known node: where it is and its DHT key.
#[derive(Debug, Clone, Copy)]
struct WellKnown {
    addr: SocketAddr,
    dht_pk: PublicKey,
}

/// The network under construction and churn.
struct Network {
    sim: Simulator<ScaleNode>,
    /// Every node ever created (its address index is its position here).
    created: usize,
    well_known: Vec<WellKnown>,
    bootstrap_ids: Vec<NodeId>,
    /// Ordinary nodes that may be churned and are in the network.
    churnable: Vec<NodeId>,
    rng: ChaCha8Rng,
    seed: u64,
    replaced: usize,
}

impl Network {
    /// Build a node now and add it; `well_known` nodes it bootstraps off.
    fn spawn(&mut self, accept_strangers: bool, boot_off: &[WellKnown]) -> Option<NodeId> {
        let now = self.sim.now();
        let index = self.created;
        self.created += 1;
        // A node's keys and randomness: the run seed and its creation index, mixed
        // (splitmix64's multiplier) so that neighbouring runs do not share nodes.
        let node_seed = (self.seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .wrapping_add(index as u64);
        let mut node = SimToxNode::new(
            now,
            node_seed,
            SimToxOptions {
                node: NodeOptions {
                    accept_strangers,
                    ..NodeOptions::default()
                },
            },
        );
        for w in boot_off {
            node.bootstrap(now, w.addr, w.dht_pk);
        }
        self.sim
            .add_node(vec![address(index)], ScaleNode::new(node))
    }

    /// Two distinct random well-known nodes (all of them if there are fewer).
    fn pick_bootstraps(&mut self) -> Vec<WellKnown> {
        let n = self.well_known.len();
        let k = BOOTSTRAPS_PER_NODE.min(n);
        sample(&mut self.rng, n, k)
            .into_iter()
            .map(|i| self.well_known[i])
            .collect()
    }

    /// An ordinary node starts.
    fn start_ordinary(&mut self, accept_strangers: bool) -> Option<NodeId> {
        let boot = self.pick_bootstraps();
        self.spawn(accept_strangers, &boot)
    }

    /// A random churnable node leaves and a fresh one joins.
    fn replace_one(&mut self) {
        if self.churnable.is_empty() {
            return;
        }
        let victim = self
            .churnable
            .swap_remove(self.rng.gen_range(0..self.churnable.len()));
        self.sim.remove_node(victim);
        self.sim.with_node(victim, |n, _| n.clear());
        if let Some(id) = self.start_ordinary(false) {
            self.churnable.push(id);
        }
        self.replaced += 1;
    }
}

/// A friend pair: the requester and the acceptor.
#[derive(Debug, Clone, Copy)]
struct Pair {
    requester: NodeId,
    acceptor: NodeId,
}

/// When `id` first saw a friend online (each pair member has exactly one friend).
fn first_online(sim: &Simulator<ScaleNode>, id: NodeId) -> Option<Timestamp> {
    let node = sim.node(id).get()?;
    node.log.online.first().map(|(t, _)| *t)
}

/// When both members of `pair` were online, if they are.
fn pair_online(sim: &Simulator<ScaleNode>, pair: &Pair) -> Option<Timestamp> {
    Some(first_online(sim, pair.requester)?.max(first_online(sim, pair.acceptor)?))
}

/// Run one scale scenario.
pub fn run_scale(options: &ScaleOptions) -> Result<ScaleReport, ScaleError> {
    let ordinary = options.nodes.saturating_sub(options.bootstrap_nodes);
    if options.bootstrap_nodes == 0 || ordinary < 2 * options.pairs {
        return Err(ScaleError::Options(format!(
            "{} nodes with {} bootstrap nodes cannot hold {} pairs",
            options.nodes, options.bootstrap_nodes, options.pairs
        )));
    }
    let wall_start = Instant::now();
    let cpu_start = process::cpu_time();
    let rss_start = process::rss_bytes();

    let link = LinkConfig {
        delay: options.rtt / 2,
        loss: if options.loss > 0.0 {
            LossModel::Random(options.loss.clamp(0.0, 1.0))
        } else {
            LossModel::None
        },
        record_samples: false,
        ..LinkConfig::default()
    };
    let mut sim: Simulator<ScaleNode> = Simulator::new(options.seed, link);
    sim.set_trace_enabled(false);
    sim.share_default_link(true);
    // Nodes have no invariant check of their own; do not pay for calling it every event.
    sim.set_invariant_interval(u64::MAX);
    let mut plan_rng = sim.scenario_rng(0);
    let net_rng = sim.scenario_rng(1);
    let start = sim.now();

    let mut net = Network {
        sim,
        created: 0,
        well_known: Vec::new(),
        bootstrap_ids: Vec::new(),
        churnable: Vec::new(),
        rng: net_rng,
        seed: options.seed,
        replaced: 0,
    };

    // The well-known nodes: built first so each can be given all the others.
    let mut boot_nodes = Vec::new();
    for _ in 0..options.bootstrap_nodes {
        let index = net.created;
        net.created += 1;
        let seed = (options.seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .wrapping_add(index as u64);
        let node = SimToxNode::new(start, seed, SimToxOptions::default());
        net.well_known.push(WellKnown {
            addr: address(index),
            dht_pk: node.node.dht_public_key(),
        });
        boot_nodes.push((index, node));
    }
    for (index, mut node) in boot_nodes {
        for w in net.well_known.iter().filter(|w| w.addr != address(index)) {
            node.bootstrap(start, w.addr, w.dht_pk);
        }
        if let Some(id) = net.sim.add_node(vec![address(index)], ScaleNode::new(node)) {
            net.bootstrap_ids.push(id);
        }
    }

    // The ordinary nodes' start times, and which of them form the pairs (by start order:
    // requesters are [0, pairs), acceptors [pairs, 2·pairs) of a random sample).
    let mut starts: Vec<Duration> = (0..ordinary)
        .map(|_| options.start_spread.mul_f64(plan_rng.gen::<f64>()))
        .collect();
    starts.sort();
    let chosen = sample(&mut plan_rng, ordinary, 2 * options.pairs).into_vec();
    let mut role = vec![None; ordinary];
    for (k, &i) in chosen.iter().enumerate() {
        role[i] = Some(k);
    }
    let heap_fresh_node = fresh_node_heap(options.seed);
    let mut requesters = vec![None; options.pairs];
    let mut acceptors = vec![None; options.pairs];
    for (i, at) in starts.iter().enumerate() {
        net.sim.run_until(start + *at)?;
        let accept = role[i].is_some_and(|k| k >= options.pairs);
        let Some(id) = net.start_ordinary(accept) else {
            continue;
        };
        match role[i] {
            Some(k) if k < options.pairs => requesters[k] = Some(id),
            Some(k) => acceptors[k - options.pairs] = Some(id),
            None => net.churnable.push(id),
        }
    }
    let pairs: Vec<Pair> = requesters
        .iter()
        .zip(&acceptors)
        .filter_map(|(r, a)| {
            Some(Pair {
                requester: (*r)?,
                acceptor: (*a)?,
            })
        })
        .collect();

    // Warm-up with churn, the adds, then churn until every pair is online or the limit.
    let mut churn = Churn::new(
        options.churn_per_min,
        net.churnable.len(),
        start + options.start_spread,
    );
    let add_at = start + options.warmup;
    let end_at = add_at + options.limit;
    let mut added = false;
    let mut next_check = add_at;
    loop {
        let mut next = if added { next_check } else { add_at };
        if let Some(c) = churn.next_at() {
            next = next.min(c);
        }
        let next = next.min(end_at);
        net.sim.run_until(next)?;
        if churn.next_at() == Some(next) {
            net.replace_one();
            churn.advance();
        }
        if !added && next == add_at {
            for p in &pairs {
                let acceptor_id = net.sim.node(p.acceptor).get().map(|n| n.node.tox_id());
                if let Some(id) = acceptor_id {
                    net.sim.with_node(p.requester, |n, now| {
                        if let Some(n) = n.get_mut() {
                            let _ = n.node.add_friend(now, &id, b"scale: hi");
                        }
                    });
                }
            }
            added = true;
            next_check = add_at + CHECK_EVERY;
        } else if added && next == next_check {
            if pairs.iter().all(|p| pair_online(&net.sim, p).is_some()) {
                break;
            }
            next_check += CHECK_EVERY;
        }
        if next >= end_at {
            break;
        }
    }
    let end = net.sim.now();

    let online = OnlineTimes(
        pairs
            .iter()
            .map(|p| pair_online(&net.sim, p).map(|t| t - add_at))
            .chain(std::iter::repeat_n(
                None,
                options.pairs.saturating_sub(pairs.len()),
            ))
            .collect(),
    );
    let tables = table_sizes(&net.sim);
    let stalls = (0..net.sim.node_count())
        .map(|i| net.sim.node(NodeId(i)).stalls())
        .sum();
    let peak_rss = process::peak_rss_bytes();
    let stats = net.sim.stats();
    let cpu = match (cpu_start, process::cpu_time()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    let wall = wall_start.elapsed();
    let memory = MemoryReport {
        peak_rss,
        peak_rss_growth_per_node: match (rss_start, peak_rss) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a) / options.nodes as u64),
            _ => None,
        },
        heap_fresh_node,
        ..heap_per_node(&mut net)
    };
    Ok(ScaleReport {
        nodes: options.nodes,
        pairs: options.pairs,
        online,
        replaced: net.replaced,
        simulated: end - start,
        wall,
        cpu,
        events: stats.events,
        datagrams: stats.datagrams_delivered,
        bytes: stats.bytes_delivered,
        to_departed: stats.lost_to_departed + stats.unroutable,
        stalls,
        memory,
        tables,
    })
}

/// Mean table sizes over the nodes still in the network.
fn table_sizes(sim: &Simulator<ScaleNode>) -> TableReport {
    let mut t = TableReport::default();
    let mut n = 0usize;
    for i in 0..sim.node_count() {
        let Some(node) = sim.node(NodeId(i)).get() else {
            continue;
        };
        let oc = node.node.onion_client_stats();
        t.close_list += node.node.dht().close_list().iter().count() as f64;
        t.onion_path_nodes += oc.path_nodes as f64;
        t.onion_announce_nodes += oc.announce_nodes as f64;
        t.onion_announced_on += oc.announced_on as f64;
        n += 1;
    }
    let n = n.max(1) as f64;
    TableReport {
        close_list: t.close_list / n,
        onion_path_nodes: t.onion_path_nodes / n,
        onion_announce_nodes: t.onion_announce_nodes / n,
        onion_announced_on: t.onion_announced_on / n,
    }
}

/// The exact heap each node still in the network holds: drop it under the counting
/// allocator and read what was freed. Ends the run (every node is gone afterwards).
fn heap_per_node(net: &mut Network) -> MemoryReport {
    if !heap_meter::installed() {
        return MemoryReport::default();
    }
    let mut total = 0u64;
    let mut count = 0u64;
    let mut max = 0u64;
    let mut boot_total = 0u64;
    for i in 0..net.sim.node_count() {
        let id = NodeId(i);
        if net.sim.node(id).get().is_none() {
            continue;
        }
        let before = heap_meter::live_bytes().unwrap_or(0);
        net.sim.remove_node(id);
        net.sim.with_node(id, |n, _| n.clear());
        let freed = before.saturating_sub(heap_meter::live_bytes().unwrap_or(0));
        total += freed;
        count += 1;
        max = max.max(freed);
        if net.bootstrap_ids.contains(&id) {
            boot_total += freed;
        }
    }
    MemoryReport {
        heap_per_node: Some(total / count.max(1)),
        heap_max_node: Some(max),
        heap_per_bootstrap_node: Some(boot_total / (net.bootstrap_ids.len().max(1) as u64)),
        ..MemoryReport::default()
    }
}

/// The exact heap of one ordinary node as built, before it has heard from anyone.
fn fresh_node_heap(seed: u64) -> Option<u64> {
    let before = heap_meter::live_bytes()?;
    let node = ScaleNode::new(SimToxNode::new(
        Timestamp::ZERO,
        seed ^ 0x5ca1e,
        SimToxOptions::default(),
    ));
    let after = heap_meter::live_bytes()?;
    drop(node);
    Some(after.saturating_sub(before))
}
