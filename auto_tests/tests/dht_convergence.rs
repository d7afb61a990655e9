//! 500 rustox DHT nodes in the deterministic simulator, 20 ms links with 5 % random loss,
//! virtual time: within 2 simulated minutes every node's close list holds its true closest
//! nodes, checked against a brute-force sort of all keys.
//!
//! "True closest" (see `missing_closest`): the 4 nodes closest by XOR distance, found by
//! sorting every key, with a k-bucket's 8-node cap respected. Four is `MAX_SENT_NODES`: a get-nodes for a key returns the 4
//! closest its responder knows, so those are the nodes the protocol guarantees to find
//! (ranks 5–8 are found only by chance in c-toxcore's design too; see
//! core/tests/dht_node.rs). Failing seeds are printed and replay with SIM_SEED.

use std::net::SocketAddr;
use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use rustox_core::dht::close_list::CloseList;
use rustox_core::dht::distance::cmp_distance;
use rustox_core::dht::{DhtConfig, DhtNode};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;
use rustox_simulator::{seed_from_env, LinkConfig, LossModel, NodeId, SimNode, Simulator};

/// Retry interval for a bootstrap node that has not answered yet (a Tox client keeps
/// calling `tox_bootstrap` until it is connected; with 5 % loss a single get-nodes is lost
/// one time in ten, and a well-known node that never joined would leave its clients in a
/// partition of their own).
const REBOOTSTRAP: Duration = Duration::from_secs(5);

struct DhtSim {
    node: DhtNode,
    rng: ChaCha8Rng,
    /// Well-known nodes to bootstrap from, and whether each has answered yet.
    bootstrap: Vec<(SocketAddr, PublicKey, bool)>,
    next_rebootstrap: Timestamp,
}

impl SimNode for DhtSim {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, _to: SocketAddr, bytes: &[u8]) {
        let _ = self.node.handle_datagram(now, from, bytes, &mut self.rng);
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        if now >= self.next_rebootstrap {
            self.next_rebootstrap = now + REBOOTSTRAP;
            for (addr, pk, answered) in &mut self.bootstrap {
                *answered |= self.node.close_list().get(pk).is_some();
                if !*answered {
                    self.node.bootstrap(now, *addr, *pk, &mut self.rng);
                }
            }
        }
        if self.node.poll_timeout() <= now {
            self.node.handle_timeout(now, &mut self.rng);
        }
    }

    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        self.node
            .poll_transmit(now, &mut self.rng)
            .map(|t| (t.dst, t.payload))
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        Some(self.node.poll_timeout().min(self.next_rebootstrap))
    }
}

fn addr(i: usize) -> SocketAddr {
    SocketAddr::from(([10, 1, (i >> 8) as u8, i as u8], 33445))
}

/// How many of the nodes a correct close list must hold it does not: the `k` nodes closest
/// to its key by XOR (brute force over all keys), except that a k-bucket holds at most 8, so
/// a node is expected only while its bucket has fewer than 8 expected nodes.
fn missing_closest(
    me: &PublicKey,
    list: &CloseList,
    others: &[PublicKey],
    have: &[PublicKey],
    k: usize,
) -> usize {
    let mut sorted: Vec<&PublicKey> = others.iter().collect();
    sorted.sort_by(|a, b| cmp_distance(me, a, b));
    let mut per_bucket = [0usize; 128];
    let mut expected = 0;
    let mut missing = 0;
    for x in sorted {
        if expected == k {
            break;
        }
        let b = list.bucket_of(x);
        if per_bucket[b] == 8 {
            continue;
        }
        per_bucket[b] += 1;
        expected += 1;
        if !have.contains(x) {
            missing += 1;
        }
    }
    missing
}

/// Nodes whose close list misses some of their closest nodes.
fn unconverged(sim: &Simulator<DhtSim>, keys: &[PublicKey], k: usize) -> Vec<(usize, usize)> {
    let now = sim.now();
    (0..keys.len())
        .filter_map(|i| {
            let node = &sim.node(NodeId(i)).node;
            let truth: Vec<PublicKey> = keys.iter().copied().filter(|x| *x != keys[i]).collect();
            let have: Vec<PublicKey> = node.close_nodes(now).iter().map(|n| n.pk).collect();
            let m = missing_closest(&keys[i], node.close_list(), &truth, &have, k);
            (m > 0).then_some((i, m))
        })
        .collect()
}

#[test]
fn five_hundred_nodes_with_loss_converge_within_two_minutes() {
    let seed = seed_from_env(6);
    let n = 500;
    let link = LinkConfig {
        delay: Duration::from_millis(20),
        loss: LossModel::Random(0.05),
        ..LinkConfig::default()
    };
    let mut sim: Simulator<DhtSim> = Simulator::new(seed, link);
    sim.set_trace_enabled(false);
    let mut keys = Vec::new();
    for i in 0..n {
        // Five well-known bootstrap nodes, as clients ship a list of them: each of them knows
        // the ones before it, every other node two of them.
        let known: Vec<(SocketAddr, PublicKey, bool)> = if i < 5 {
            (0..i).map(|b| (addr(b), keys[b], false)).collect()
        } else {
            [i % 5, (i + 1) % 5]
                .iter()
                .map(|&b| (addr(b), keys[b], false))
                .collect()
        };
        sim.add_node_with(vec![addr(i)], |mut rng| {
            let keypair = KeyPair::generate(&mut rng);
            keys.push(keypair.public);
            let node = DhtNode::new(
                keypair,
                DhtConfig {
                    lan_discovery: false,
                    ..DhtConfig::default()
                },
                Timestamp::ZERO,
                &mut rng,
            );
            DhtSim {
                node,
                rng,
                bootstrap: known,
                next_rebootstrap: Timestamp::ZERO,
            }
        })
        .expect("distinct addresses");
    }
    let mut converged_at = None;
    let mut report = Vec::new();
    for step in 1..=12u64 {
        let t = Timestamp::from_secs(10 * step);
        if let Err(e) = sim.run_until(t) {
            sim.fail(&e);
        }
        let left = unconverged(&sim, &keys, 4);
        let left8 = unconverged(&sim, &keys, 8).len();
        report.push(format!(
            "t={:>3}s unconverged(k=4)={:>3} (k=8)={:>3}",
            10 * step,
            left.len(),
            left8
        ));
        if left.is_empty() && converged_at.is_none() {
            converged_at = Some(10 * step);
        }
    }
    let stats = sim.stats();
    eprintln!("seed {seed}: {}", report.join("\n  "));
    eprintln!(
        "seed {seed}: {} datagrams delivered, {} bytes; converged at {:?} s",
        stats.datagrams_delivered, stats.bytes_delivered, converged_at
    );
    let left = unconverged(&sim, &keys, 4);
    assert!(
        left.is_empty(),
        "seed {seed}: {} nodes miss some of their 4 closest after 120 s (first: {:?}); replay with SIM_SEED={seed}",
        left.len(),
        &left[..left.len().min(5)]
    );
}
