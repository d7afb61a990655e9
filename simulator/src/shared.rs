//! Several sessions competing for one bottleneck, for fairness (docs/transport.md §6: Jain's index
//! ≥ 0.9 for 2–4 equal flows; `tests/sharing.rs` asks ≥ 0.95 for two, and that each takes
//! the whole link once alone).
//!
//! Senders S₁…Sₙ each open a session to their own receiver R₁…Rₙ; every Sᵢ→Rᵢ route shares
//! one forward link with the profile's bottleneck and every Rᵢ→Sᵢ route one reverse link. All
//! transfers start together; throughput is compared over the window in which all of them are
//! sending: from the last first-data packet to the first completion. When the transfers
//! differ in size, the flow that finishes last has the link to itself for a while: its
//! goodput from shortly after the others finished to its own end says whether it takes
//! the whole link back (on real sockets a flow once stayed at 17 of 100 Mbit/s for 17 s
//! after its competitor had left).

use std::net::SocketAddr;

use rand::Rng;
use rustox_net_crypto::{ControllerKind, Timestamp};
use serde::Serialize;

use crate::driver_model::DriverModel;
use crate::metrics::jain_index;
use crate::netcrypto::NetCryptoNode;
use crate::profiles::Profile;
use crate::sim::{NodeId, SimError, Simulator};
use crate::transfer::{controller_name, deadline_for};

/// The outcome of a shared-bottleneck run.
#[derive(Debug, Clone, Serialize)]
pub struct SharedMetrics {
    /// Profile name.
    pub profile: String,
    /// Controller name.
    pub controller: String,
    /// Seed.
    pub seed: u64,
    /// Each session's goodput over the common window, bytes per second.
    pub throughputs: Vec<f64>,
    /// Jain's index of `throughputs`.
    pub jain_index: f64,
    /// Sum of throughputs ÷ bottleneck rate.
    pub aggregate_efficiency: f64,
    /// Length of the common window, seconds.
    pub window_s: f64,
    /// The last flow's goodput ÷ the path's payload capacity, alone on the link: from
    /// [`ALONE_SETTLE_RTTS`] RTTs after the others finished to its own end. `None` when
    /// that span is empty (equal transfers finishing together).
    pub alone_efficiency: Option<f64>,
    /// True when every transfer completed.
    pub completed: bool,
    /// Application or invariant failure, if any.
    pub error: Option<String>,
}

fn addr(side: u8, i: usize) -> SocketAddr {
    SocketAddr::from(([10, side, 0, (i + 1) as u8], 33445))
}

/// Bytes the receiver had verified at time `t`.
fn delivered_at(deliveries: &[(Timestamp, u64)], t: Timestamp) -> u64 {
    let i = deliveries.partition_point(|d| d.0 <= t);
    if i == 0 {
        0
    } else {
        deliveries[i - 1].1
    }
}

/// RTTs a flow left alone is given to take the link back before its goodput counts (BBR
/// probes for bandwidth every ~8 rounds and grows 25 % per probe; 20 RTTs is 400 ms on
/// wan20).
pub const ALONE_SETTLE_RTTS: u32 = 20;

/// Run `sessions` equal transfers of `bytes_each` through one bottleneck of `profile`,
/// both hosts of each pair under the model of the CLI's driver.
pub fn run_shared_bottleneck(
    profile: &Profile,
    controller: ControllerKind,
    seed: u64,
    sessions: usize,
    bytes_each: u64,
) -> Result<SharedMetrics, SimError> {
    run_sharing(
        profile,
        controller,
        seed,
        &vec![bytes_each; sessions],
        Some(DriverModel::cli()),
    )
}

/// Run one transfer per entry of `sizes` through one bottleneck of `profile`, all started
/// together, every host under `driver` (`None`: exact handling).
pub fn run_sharing(
    profile: &Profile,
    controller: ControllerKind,
    seed: u64,
    sizes: &[u64],
    driver: Option<DriverModel>,
) -> Result<SharedMetrics, SimError> {
    let sessions = sizes.len();
    let mut sim: Simulator<NetCryptoNode> = Simulator::new(seed, profile.link_config());
    let key: u64 = sim.scenario_rng(0).gen();
    let forward = sim.add_link(profile.link_config());
    let reverse = sim.add_link(profile.link_config());
    let mut pairs: Vec<(NodeId, NodeId)> = Vec::new();
    for i in 0..sessions {
        let r = sim
            .add_node_with(vec![addr(1, i)], |rng| {
                NetCryptoNode::new(Timestamp::ZERO, rng, controller, false)
            })
            .ok_or_else(|| SimError::Scenario("address clash".into()))?;
        let s = sim
            .add_node_with(vec![addr(0, i)], |rng| {
                NetCryptoNode::new(Timestamp::ZERO, rng, controller, false)
            })
            .ok_or_else(|| SimError::Scenario("address clash".into()))?;
        sim.set_route(s, r, forward);
        sim.set_route(r, s, reverse);
        sim.set_driver(s, driver.clone());
        sim.set_driver(r, driver.clone());
        pairs.push((s, r));
    }
    for (i, &(s, r)) in pairs.iter().enumerate() {
        let (s_pk, r_pk, r_dht) = (
            sim.node(s).real_pk(),
            sim.node(r).real_pk(),
            sim.node(r).dht_pk(),
        );
        let k = key.wrapping_add(i as u64);
        let bytes = sizes[i];
        sim.with_node(r, |n, _| n.expect_transfer(s_pk, k, bytes));
        sim.with_node(s, |n, now| {
            n.start_transfer(now, addr(1, i), r_pk, r_dht, k, bytes)
        })
        .map_err(SimError::Scenario)?;
    }
    let total = sizes.iter().sum();
    let deadline = deadline_for(profile, total);
    let done = |sim: &Simulator<NetCryptoNode>, r: NodeId| {
        sim.node(r)
            .incoming()
            .first()
            .is_some_and(|t| t.receiver.is_complete())
    };
    sim.run_while(deadline, |sim| {
        let any_error = pairs
            .iter()
            .any(|&(s, r)| sim.node(s).error().is_some() || sim.node(r).error().is_some());
        !any_error && !pairs.iter().all(|&(_, r)| done(sim, r))
    })?;

    let error = pairs.iter().find_map(|&(s, r)| {
        sim.node(s)
            .error()
            .or(sim.node(r).error())
            .map(str::to_owned)
    });
    let starts: Vec<Timestamp> = pairs
        .iter()
        .filter_map(|&(s, _)| {
            sim.node(s)
                .outgoing()
                .first()
                .and_then(|t| t.sender.first_send())
        })
        .collect();
    let ends: Vec<Timestamp> = pairs
        .iter()
        .map(|&(_, r)| {
            sim.node(r)
                .incoming()
                .first()
                .and_then(|t| t.receiver.completed_at())
                .unwrap_or(sim.now())
        })
        .collect();
    let start = starts.iter().copied().max().unwrap_or(Timestamp::ZERO);
    let end = ends.iter().copied().min().unwrap_or(sim.now());
    let window = end - start;
    let throughputs: Vec<f64> = pairs
        .iter()
        .map(|&(_, r)| {
            let d = sim
                .node(r)
                .incoming()
                .first()
                .map_or(&[][..], |t| t.receiver.deliveries());
            let bytes = delivered_at(d, end).saturating_sub(delivered_at(d, start));
            if window.is_zero() {
                0.0
            } else {
                bytes as f64 / window.as_secs_f64()
            }
        })
        .collect();
    let completed =
        starts.len() == sessions && pairs.iter().all(|&(_, r)| done(&sim, r)) && error.is_none();
    let alone_efficiency = alone_efficiency(&sim, &pairs, &ends, profile);
    Ok(SharedMetrics {
        profile: profile.name.to_owned(),
        controller: controller_name(controller).to_owned(),
        seed,
        jain_index: jain_index(&throughputs),
        aggregate_efficiency: throughputs.iter().sum::<f64>() / profile.rate_bytes_per_sec(),
        throughputs,
        window_s: window.as_secs_f64(),
        alone_efficiency,
        completed,
        error,
    })
}

/// The goodput of the flow that finished last, over its time alone on the link (see
/// [`SharedMetrics::alone_efficiency`]).
fn alone_efficiency(
    sim: &Simulator<NetCryptoNode>,
    pairs: &[(NodeId, NodeId)],
    ends: &[Timestamp],
    profile: &Profile,
) -> Option<f64> {
    let (last, &last_end) = ends.iter().enumerate().max_by_key(|(_, e)| **e)?;
    let others_end = ends
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != last)
        .map(|(_, e)| *e)
        .max()?;
    let from = others_end + profile.rtt * ALONE_SETTLE_RTTS;
    if from >= last_end {
        return None;
    }
    let d = sim
        .node(pairs[last].1)
        .incoming()
        .first()
        .map_or(&[][..], |t| t.receiver.deliveries());
    let bytes = delivered_at(d, last_end).saturating_sub(delivered_at(d, from));
    let rate = bytes as f64 / (last_end - from).as_secs_f64();
    Some(rate / profile.payload_capacity_bytes_per_sec())
}
