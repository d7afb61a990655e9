//! A rustox transfer sharing one bottleneck with a TCP CUBIC flow (the goal: against one
//! TCP flow each side gets 35–65 % of the link, `tests/sharing.rs`).
//!
//! The rustox sender and receiver run under a driver model, the TCP ends ([`crate::tcp`],
//! Linux's CUBIC with HyStart++, SACK and PRR, unpaced) handle their inputs exactly, as a
//! kernel does. Both flows start together over the same forward and reverse links; the
//! TCP flow is unlimited, and the shares are measured from a settling time after the start
//! until the rustox transfer completes.

use std::net::SocketAddr;
use std::time::Duration;

use rand::Rng;
use rustox_net_crypto::{ControllerKind, Timestamp};
use rustox_simulator::{
    controller_name, deadline_for, DriverModel, NetCryptoNode, Profile, SimError, SimNode,
    Simulator,
};
use serde::Serialize;

use crate::tcp::{tcp_flow, TcpFlowSpec, TcpHost, TcpNode, TcpReceiver, TcpSender};

/// RTTs after the start before the shares count: both flows leave their start-up (BBR's
/// Startup, CUBIC's slow start and its first loss episode).
pub const SETTLE_RTTS: u32 = 50;

/// A node of a mixed simulation: a rustox host or one end of a TCP flow.
#[derive(Debug)]
pub enum MixedNode {
    /// A rustox host.
    Rustox(Box<NetCryptoNode>),
    /// A TCP end.
    Tcp(TcpNode),
}

impl From<TcpSender> for MixedNode {
    fn from(s: TcpSender) -> Self {
        MixedNode::Tcp(s.into())
    }
}

impl From<TcpReceiver> for MixedNode {
    fn from(r: TcpReceiver) -> Self {
        MixedNode::Tcp(r.into())
    }
}

impl TcpHost for MixedNode {
    fn tcp_sender(&self) -> Option<&TcpSender> {
        match self {
            MixedNode::Tcp(t) => t.tcp_sender(),
            MixedNode::Rustox(_) => None,
        }
    }
    fn tcp_receiver(&self) -> Option<&TcpReceiver> {
        match self {
            MixedNode::Tcp(t) => t.tcp_receiver(),
            MixedNode::Rustox(_) => None,
        }
    }
}

impl MixedNode {
    fn rustox(&self) -> Option<&NetCryptoNode> {
        match self {
            MixedNode::Rustox(n) => Some(n),
            MixedNode::Tcp(_) => None,
        }
    }

    fn rustox_mut(&mut self) -> Option<&mut NetCryptoNode> {
        match self {
            MixedNode::Rustox(n) => Some(n),
            MixedNode::Tcp(_) => None,
        }
    }
}

impl SimNode for MixedNode {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, to: SocketAddr, bytes: &[u8]) {
        match self {
            MixedNode::Rustox(n) => n.handle_datagram(now, from, to, bytes),
            MixedNode::Tcp(t) => t.handle_datagram(now, from, to, bytes),
        }
    }
    fn handle_timeout(&mut self, now: Timestamp) {
        match self {
            MixedNode::Rustox(n) => n.handle_timeout(now),
            MixedNode::Tcp(t) => t.handle_timeout(now),
        }
    }
    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        match self {
            MixedNode::Rustox(n) => n.poll_transmit(now),
            MixedNode::Tcp(t) => t.poll_transmit(now),
        }
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        match self {
            MixedNode::Rustox(n) => n.poll_timeout(),
            MixedNode::Tcp(t) => t.poll_timeout(),
        }
    }
    fn check_invariants(&self) -> Result<(), String> {
        match self {
            MixedNode::Rustox(n) => n.check_invariants(),
            MixedNode::Tcp(t) => t.check_invariants(),
        }
    }
}

/// The outcome of a rustox-versus-TCP run.
#[derive(Debug, Clone, Serialize)]
pub struct CrossMetrics {
    /// Profile name.
    pub profile: String,
    /// rustox's controller.
    pub controller: String,
    /// Seed.
    pub seed: u64,
    /// rustox's goodput over the window, bytes per second.
    pub rustox_goodput: f64,
    /// TCP's goodput over the window, bytes per second.
    pub tcp_goodput: f64,
    /// rustox's share of the two goodputs.
    pub rustox_share: f64,
    /// Both goodputs ÷ the bottleneck rate.
    pub aggregate_efficiency: f64,
    /// The measured window, seconds.
    pub window_s: f64,
    /// TCP retransmitted segments and timeouts over the whole run.
    pub tcp_retransmits: u64,
    /// TCP retransmission timeouts.
    pub tcp_rtos: u64,
    /// True when the rustox transfer completed.
    pub completed: bool,
}

fn addr(side: u8, i: u8) -> SocketAddr {
    SocketAddr::from(([10, side, 1, i], 33445))
}

/// One rustox transfer of `bytes` next to one unlimited TCP CUBIC flow through `profile`'s
/// bottleneck, the rustox hosts under `driver`.
pub fn run_against_tcp(
    profile: &Profile,
    controller: ControllerKind,
    seed: u64,
    bytes: u64,
    driver: Option<DriverModel>,
) -> Result<CrossMetrics, SimError> {
    let mut sim: Simulator<MixedNode> = Simulator::new(seed, profile.link_config());
    let key: u64 = sim.scenario_rng(0).gen();
    let forward = sim.add_link(profile.link_config());
    let reverse = sim.add_link(profile.link_config());
    let new_host = |rng| {
        MixedNode::Rustox(Box::new(NetCryptoNode::new(
            Timestamp::ZERO,
            rng,
            controller,
            false,
        )))
    };
    let r = sim
        .add_node_with(vec![addr(1, 1)], new_host)
        .ok_or_else(|| SimError::Scenario("address clash".into()))?;
    let s = sim
        .add_node_with(vec![addr(0, 1)], new_host)
        .ok_or_else(|| SimError::Scenario("address clash".into()))?;
    sim.set_route(s, r, forward);
    sim.set_route(r, s, reverse);
    sim.set_driver(s, driver.clone());
    sim.set_driver(r, driver);
    let tcp = tcp_flow(
        &mut sim,
        TcpFlowSpec::new(addr(0, 2), addr(1, 2)).over(forward, reverse),
    )?;
    let keys = |sim: &Simulator<MixedNode>, id| {
        sim.node(id)
            .rustox()
            .map(|n| (n.real_pk(), n.dht_pk()))
            .ok_or_else(|| SimError::Scenario("not a rustox host".into()))
    };
    let (s_pk, _) = keys(&sim, s)?;
    let (r_pk, r_dht) = keys(&sim, r)?;
    sim.with_node(r, |n, _| {
        if let Some(n) = n.rustox_mut() {
            n.expect_transfer(s_pk, key, bytes);
        }
    });
    sim.with_node(s, |n, now| match n.rustox_mut() {
        Some(n) => n.start_transfer(now, addr(1, 1), r_pk, r_dht, key, bytes),
        None => Err("not a rustox host".into()),
    })
    .map_err(SimError::Scenario)?;

    let done = |sim: &Simulator<MixedNode>| {
        sim.node(r)
            .rustox()
            .and_then(|n| n.incoming().first())
            .is_some_and(|t| t.receiver.is_complete())
    };
    let failed = |sim: &Simulator<MixedNode>| {
        [s, r]
            .iter()
            .any(|&id| sim.node(id).rustox().is_some_and(|n| n.error().is_some()))
    };
    // The unlimited TCP flow never lets the simulator run dry: give rustox's transfer the
    // budget it would have had with the link to itself, twice over.
    let deadline = deadline_for(profile, bytes * 2);
    sim.run_while(deadline, |sim| !done(sim) && !failed(sim))?;

    let incoming = sim.node(r).rustox().and_then(|n| n.incoming().first());
    let end = incoming
        .and_then(|t| t.receiver.completed_at())
        .unwrap_or(sim.now());
    let start = Timestamp::ZERO + profile.rtt * SETTLE_RTTS;
    let window = end.saturating_duration_since(start);
    let secs = window.as_secs_f64().max(f64::MIN_POSITIVE);
    let deliveries = incoming.map_or(&[][..], |t| t.receiver.deliveries());
    let at = |t: Timestamp| {
        let i = deliveries.partition_point(|d| d.0 <= t);
        if i == 0 {
            0
        } else {
            deliveries[i - 1].1
        }
    };
    let rustox_goodput = at(end).saturating_sub(at(start)) as f64 / secs;
    let tcp_goodput = tcp.goodput_between(&sim, start, end);
    let stats = tcp.sender(&sim).map(|t| t.stats());
    let total = rustox_goodput + tcp_goodput;
    Ok(CrossMetrics {
        profile: profile.name.to_owned(),
        controller: controller_name(controller).to_owned(),
        seed,
        rustox_goodput,
        tcp_goodput,
        rustox_share: if total > 0.0 {
            rustox_goodput / total
        } else {
            0.0
        },
        aggregate_efficiency: total / profile.rate_bytes_per_sec(),
        window_s: if window > Duration::ZERO { secs } else { 0.0 },
        tcp_retransmits: stats.as_ref().map_or(0, |s| s.retransmitted_segments),
        tcp_rtos: stats.as_ref().map_or(0, |s| s.rto_count),
        completed: done(&sim) && !failed(&sim),
    })
}
