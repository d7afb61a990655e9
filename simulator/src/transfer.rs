//! One measured bulk transfer over a named profile — the unit every scenario test, the
//! `transport-bench` table and `rustox sim` are built from.
//!
//! Sender A and receiver B are joined by two links with the profile's parameters (one per
//! direction). A opens a net_crypto session to B and sends `bytes` of verifiable bulk data as
//! fast as the session's budget allows; the run ends when B has verified the last byte, an
//! invariant breaks, or a generous virtual-time deadline passes. Metrics are docs/transport.md §6's.

use std::net::SocketAddr;
use std::time::Duration;

use rand::Rng;
use rustox_net_crypto::{ConnectionId, ControllerKind, Timestamp, TransportStats};
use serde::Serialize;

use crate::driver_model::DriverModel;
use crate::link::{LinkStats, IPV4_UDP_OVERHEAD};
use crate::metrics::percentile;
use crate::netcrypto::NetCryptoNode;
use crate::profiles::Profile;
use crate::sim::{LinkId, NodeId, SimError, Simulator};
use rustox_core::driver::CpuTimer;

/// Bytes a net_crypto data datagram adds around its plaintext payload (docs/protocol.md §2.6):
/// id (1) + nonce low bytes (2) + MAC (16) + buffer_start (4) + packet number (4). Padding is
/// zero for the full 1373-byte payloads bulk data uses.
pub const DATA_PACKET_OVERHEAD: u64 = 27;

/// How long after the first data packet RTT fidelity starts being sampled, in RTTs: the
/// estimator needs a few samples before its smoothed value means anything (RFC 6298 §2).
const RTT_WARMUP_RTTS: u32 = 4;

/// Fraction of the bottleneck's payload capacity that counts as "ramped up" (docs/transport.md §6).
pub const RAMP_FRACTION: f64 = 0.9;

/// Name of a controller as used on the command line and in reports.
pub fn controller_name(c: ControllerKind) -> &'static str {
    c.name()
}

/// The controller with this name.
pub fn controller_by_name(name: &str) -> Option<ControllerKind> {
    ControllerKind::from_name(name)
}

/// The controllers named on a command line, or all three (in report order) when none is named.
/// An unknown name is returned as the error.
pub fn controllers_by_names(names: &[String]) -> Result<Vec<ControllerKind>, String> {
    if names.is_empty() {
        return Ok(CONTROLLERS.to_vec());
    }
    names
        .iter()
        .map(|name| controller_by_name(name).ok_or_else(|| name.clone()))
        .collect()
}

/// All three controllers, in report order.
pub const CONTROLLERS: [ControllerKind; 3] = ControllerKind::ALL;

/// What to run.
#[derive(Debug, Clone)]
pub struct TransferSpec {
    /// The path.
    pub profile: Profile,
    /// The sender's (and receiver's) congestion controller.
    pub controller: ControllerKind,
    /// The run's seed.
    pub seed: u64,
    /// Bulk bytes to transfer.
    pub bytes: u64,
    /// The driver both hosts run under (`None`: exact, every input handled the instant it
    /// happens).
    pub driver: Option<DriverModel>,
    /// The receiver's controller when it differs from the sender's: `Legacy` gives it
    /// c-toxcore 0.2.18's request cadence (a request every 50–1000 ms, never on a hole),
    /// as when a rustox node sends to a c-toxcore client.
    pub receiver_controller: Option<ControllerKind>,
}

impl TransferSpec {
    /// A transfer under the model of the CLI's own driver ([`DriverModel::cli`]), as real
    /// `rustox send`/`recv` would run it.
    pub fn new(profile: Profile, controller: ControllerKind, seed: u64, bytes: u64) -> Self {
        TransferSpec {
            profile,
            controller,
            seed,
            bytes,
            driver: Some(DriverModel::cli()),
            receiver_controller: None,
        }
    }
}

/// The outcome of one transfer. Ratios are `None` when undefined (e.g. nothing was lost).
#[derive(Debug, Clone, Serialize)]
pub struct TransferMetrics {
    /// Profile name.
    pub profile: String,
    /// Controller name.
    pub controller: String,
    /// Seed.
    pub seed: u64,
    /// Bytes requested.
    pub bytes: u64,
    /// True when every byte arrived and verified before the deadline.
    pub completed: bool,
    /// Bytes verified at the receiver.
    pub bytes_delivered: u64,
    /// Payload bytes ÷ ((last byte − first data packet) × bottleneck rate).
    pub goodput_efficiency: f64,
    /// First data packet to the last byte, seconds of virtual time.
    pub transfer_time_s: f64,
    /// Time from the first data packet until the delivery rate over the last RTT first
    /// reached 90 % of the bottleneck's payload capacity.
    pub time_to_90_s: Option<f64>,
    /// The same in RTTs of the profile.
    pub time_to_90_rtts: Option<f64>,
    /// Lossless packets the receiver got twice: retransmissions that were not needed.
    pub spurious_resends: u64,
    /// Losses the sender itself later found spurious.
    pub spurious_losses_detected: u64,
    /// Retransmitted data datagrams' wire bytes ÷ wire bytes the forward link lost.
    pub resent_over_lost: Option<f64>,
    /// Payload bytes retransmitted.
    pub bytes_resent: u64,
    /// Packets retransmitted.
    pub packets_resent: u64,
    /// Of which deliberate second copies of repairs at the transfer's tail.
    pub tail_copies: u64,
    /// Wire bytes the forward link dropped or corrupted.
    pub link_bytes_lost: u64,
    /// Of which dropped by the bottleneck queue.
    pub link_bytes_queue_overflow: u64,
    /// Mean |smoothed RTT − true RTT| ÷ true RTT during the transfer.
    pub rtt_error: Option<f64>,
    /// Mean signed (smoothed RTT − true RTT) ÷ true RTT: negative when the estimate runs low
    /// (PR #1323's failure), positive when it lags a queue that is draining.
    pub rtt_bias: Option<f64>,
    /// 95th percentile of the forward bottleneck's queueing delay during the transfer.
    pub queue_delay_p95_ms: Option<f64>,
    /// Largest memory a session held (sampled), bytes.
    pub peak_session_memory: usize,
    /// Final smoothed RTT in ms.
    pub final_srtt_ms: Option<f64>,
    /// Simulator events processed.
    pub sim_events: u64,
    /// CPU seconds the run took.
    pub cpu_seconds: f64,
    /// Simulated MiB delivered per CPU second.
    pub sim_mib_per_cpu_s: f64,
    /// Packet-trace hash (determinism check).
    pub trace_hash: String,
    /// Why the run failed, when it did.
    pub error: Option<String>,
}

/// Addresses of the sender and receiver.
pub fn host_addr(index: u8) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, index], 33445))
}

/// Ideal transfer time at the profile's payload capacity.
fn ideal_time(profile: &Profile, bytes: u64) -> Duration {
    Duration::from_secs_f64(bytes as f64 / profile.payload_capacity_bytes_per_sec())
}

/// Virtual-time budget for a transfer: 120 times the ideal time plus two minutes, so even
/// the legacy controller (a c-toxcore model that reaches ~1.3 % of a 15 Mbit/s, 600 ms
/// satellite path) can finish, while a stalled session still ends. Virtual time is cheap: an
/// idle session costs a few timer events per second.
pub fn deadline_for(profile: &Profile, bytes: u64) -> Timestamp {
    Timestamp::ZERO + ideal_time(profile, bytes) * 120 + Duration::from_secs(120) + profile.rtt * 20
}

/// Time from `first` until the delivery rate over the last `rtt` reached `fraction × capacity`.
pub fn time_to_fraction(
    deliveries: &[(Timestamp, u64)],
    first: Timestamp,
    rtt: Duration,
    capacity_bytes_per_sec: f64,
    fraction: f64,
) -> Option<Duration> {
    let target = fraction * capacity_bytes_per_sec * rtt.as_secs_f64();
    let mut lo = 0usize; // first delivery inside the window
    for j in 0..deliveries.len() {
        let (t, cum) = deliveries[j];
        let start = t - rtt;
        while lo < j && deliveries[lo].0 <= start {
            lo += 1;
        }
        // Bytes delivered in (t − rtt, t]: cumulative now minus cumulative just before lo.
        let before = if lo == 0 { 0 } else { deliveries[lo - 1].1 };
        if (cum - before) as f64 >= target && t >= first {
            return Some(t - first);
        }
    }
    None
}

/// Mean transit (µs) of a link's samples that entered in `[from, to)`.
fn mean_transit(stats: &LinkStats, from: Timestamp, to: Timestamp) -> Option<f64> {
    let s = stats.samples_between(from, to);
    if s.is_empty() {
        return None;
    }
    Some(s.iter().map(|x| f64::from(x.transit_us)).sum::<f64>() / s.len() as f64)
}

/// The round trip that the packets whose acknowledgements reach the sender around `now`
/// really experienced, as the simulator measured it: each data packet's own forward transit
/// (queueing, serialisation, propagation, jitter) plus the reverse link's mean transit. The
/// packets chosen are those that arrived at the receiver within the last quarter RTT (at
/// least 2 ms) before `now − reverse transit` — the ones an RTT estimator could have sampled
/// just now, so a queue that is growing or draining is compared in phase.
pub fn true_rtt_us(
    fwd: &LinkStats,
    rev: &LinkStats,
    now: Timestamp,
    profile: &Profile,
) -> Option<f64> {
    let one_way = (profile.rtt / 2).as_micros() as f64;
    let reverse =
        mean_transit(rev, now - profile.rtt.max(Duration::from_millis(1)), now).unwrap_or(one_way);
    let acked_by = now.as_micros().saturating_sub(reverse as u64);
    let window = (profile.rtt / 4).max(Duration::from_millis(2)).as_micros() as u64;
    let from = acked_by.saturating_sub(window);
    // Without reordering a link is FIFO, so arrival times are sorted like entry times.
    let arrival = |x: &crate::link::LinkSample| x.entered.as_micros() + u64::from(x.transit_us);
    let lo = fwd.samples.partition_point(|x| arrival(x) < from);
    let hi = fwd.samples.partition_point(|x| arrival(x) <= acked_by);
    let picked = fwd.samples.get(lo..hi.max(lo))?;
    if picked.is_empty() {
        return None;
    }
    let forward = picked.iter().map(|x| f64::from(x.transit_us)).sum::<f64>() / picked.len() as f64;
    Some(forward + reverse)
}

/// A sender/receiver pair set up for a transfer.
pub struct Pair {
    /// The simulator.
    pub sim: Simulator<NetCryptoNode>,
    /// Sender.
    pub a: NodeId,
    /// Receiver.
    pub b: NodeId,
    /// A→B link.
    pub forward: LinkId,
    /// B→A link.
    pub reverse: LinkId,
    /// The sender's session.
    pub session: ConnectionId,
}

/// Build the two hosts, the links, and start the transfer.
pub fn setup_pair(spec: &TransferSpec) -> Result<Pair, SimError> {
    let mut sim: Simulator<NetCryptoNode> = Simulator::new(spec.seed, spec.profile.link_config());
    let key: u64 = sim.scenario_rng(0).gen();
    let controller = spec.controller;
    let receiver = spec.receiver_controller.unwrap_or(controller);
    let b = sim
        .add_node_with(vec![host_addr(2)], |rng| {
            NetCryptoNode::new(Timestamp::ZERO, rng, receiver, false)
        })
        .ok_or_else(|| SimError::Scenario("address clash".into()))?;
    let a = sim
        .add_node_with(vec![host_addr(1)], |rng| {
            NetCryptoNode::new(Timestamp::ZERO, rng, controller, false)
        })
        .ok_or_else(|| SimError::Scenario("address clash".into()))?;
    let (forward, reverse) =
        sim.connect(a, b, spec.profile.link_config(), spec.profile.link_config());
    sim.set_driver(a, spec.driver.clone());
    sim.set_driver(b, spec.driver.clone());
    let (a_pk, b_pk, b_dht) = (
        sim.node(a).real_pk(),
        sim.node(b).real_pk(),
        sim.node(b).dht_pk(),
    );
    let bytes = spec.bytes;
    sim.with_node(b, |n, _| n.expect_transfer(a_pk, key, bytes));
    let session = sim
        .with_node(a, |n, now| {
            n.start_transfer(now, host_addr(2), b_pk, b_dht, key, bytes)
        })
        .map_err(SimError::Scenario)?;
    Ok(Pair {
        sim,
        a,
        b,
        forward,
        reverse,
        session,
    })
}

fn receiver_done(sim: &Simulator<NetCryptoNode>, b: NodeId) -> bool {
    sim.node(b)
        .incoming()
        .first()
        .is_some_and(|t| t.receiver.is_complete())
}

/// Run one transfer and measure it. `Err` carries invariant failures (with the seed in the
/// simulator's message); a transfer that merely misses the deadline returns metrics with
/// `completed == false`.
pub fn run_transfer(spec: &TransferSpec) -> Result<TransferMetrics, SimError> {
    let cpu = CpuTimer::start();
    let mut pair = setup_pair(spec)?;
    let deadline = deadline_for(&spec.profile, spec.bytes);
    let profile = spec.profile.clone();
    let sample_every = (profile.rtt / 2).max(Duration::from_millis(5));
    let warmup = profile.rtt * RTT_WARMUP_RTTS;
    let mut next_sample = Timestamp::ZERO;
    let mut rtt_errors: Vec<f64> = Vec::new();
    let (a, b, fwd, rev, session) = (pair.a, pair.b, pair.forward, pair.reverse, pair.session);
    pair.sim.run_while(deadline, |sim| {
        let now = sim.now();
        if now >= next_sample {
            next_sample = now + sample_every;
            let first = sim
                .node(a)
                .outgoing()
                .first()
                .and_then(|t| t.sender.first_send());
            if let Some(first) = first.filter(|f| now >= *f + warmup) {
                let _ = first;
                let srtt = sim.node(a).stats(session).and_then(|s| s.smoothed_rtt);
                let truth =
                    true_rtt_us(sim.link(fwd).stats(), sim.link(rev).stats(), now, &profile);
                if let (Some(srtt), Some(truth)) = (srtt, truth) {
                    rtt_errors.push((srtt.as_micros() as f64 - truth) / truth);
                }
            }
        }
        !receiver_done(sim, b) && sim.node(a).error().is_none() && sim.node(b).error().is_none()
    })?;
    let cpu_seconds = cpu.elapsed().as_secs_f64();
    Ok(measure(spec, &pair, rtt_errors, cpu_seconds))
}

fn measure(
    spec: &TransferSpec,
    pair: &Pair,
    // Signed relative errors of the smoothed RTT, one per sample.
    rtt_errors: Vec<f64>,
    cpu_seconds: f64,
) -> TransferMetrics {
    let sim = &pair.sim;
    let profile = &spec.profile;
    let sender = sim.node(pair.a);
    let receiver = sim.node(pair.b);
    let incoming = receiver.incoming().first();
    let delivered = incoming.map_or(0, |t| t.receiver.received());
    let completed_at = incoming.and_then(|t| t.receiver.completed_at());
    let first = sender
        .outgoing()
        .first()
        .and_then(|t| t.sender.first_send());
    let end = completed_at.unwrap_or(sim.now());
    let elapsed = first.map_or(Duration::ZERO, |f| end - f);
    let goodput_efficiency = if elapsed.is_zero() {
        0.0
    } else {
        delivered as f64 / (elapsed.as_secs_f64() * profile.rate_bytes_per_sec())
    };
    let ramp = match (first, incoming) {
        (Some(f), Some(t)) => time_to_fraction(
            t.receiver.deliveries(),
            f,
            profile.rtt,
            profile.payload_capacity_bytes_per_sec(),
            RAMP_FRACTION,
        ),
        _ => None,
    };
    let tx: TransportStats = sender.stats(pair.session).unwrap_or_default();
    let rx: TransportStats = incoming
        .and_then(|t| receiver.stats(t.id))
        .unwrap_or_default();
    let fwd = sim.link(pair.forward).stats();
    let lost = fwd.bytes_lost_total();
    let resent_wire =
        tx.bytes_resent + tx.packets_resent * (DATA_PACKET_OVERHEAD + IPV4_UDP_OVERHEAD);
    let resent_over_lost = (lost > 0).then(|| resent_wire as f64 / lost as f64);
    let mut delays: Vec<u32> = match first {
        Some(f) => fwd.queue_delays_between(f, end).collect(),
        None => Vec::new(),
    };
    let queue_delay_p95_ms = percentile(&mut delays, 0.95).map(|us| f64::from(us) / 1000.0);
    let n = rtt_errors.len() as f64;
    let rtt_error = (n > 0.0).then(|| rtt_errors.iter().map(|e| e.abs()).sum::<f64>() / n);
    let rtt_bias = (n > 0.0).then(|| rtt_errors.iter().sum::<f64>() / n);
    let error = sender.error().or(receiver.error()).map(str::to_owned);
    let completed = completed_at.is_some() && error.is_none();
    TransferMetrics {
        profile: profile.name.to_owned(),
        controller: controller_name(spec.controller).to_owned(),
        seed: spec.seed,
        bytes: spec.bytes,
        completed,
        bytes_delivered: delivered,
        goodput_efficiency,
        transfer_time_s: elapsed.as_secs_f64(),
        time_to_90_s: ramp.map(|d| d.as_secs_f64()),
        time_to_90_rtts: ramp.map(|d| d.as_secs_f64() / profile.rtt.as_secs_f64()),
        spurious_resends: rx.duplicates_received,
        spurious_losses_detected: tx.spurious_losses,
        resent_over_lost,
        bytes_resent: tx.bytes_resent,
        packets_resent: tx.packets_resent,
        tail_copies: tx.tail_copies,
        link_bytes_lost: lost,
        link_bytes_queue_overflow: fwd.bytes_dropped_queue,
        rtt_error,
        rtt_bias,
        queue_delay_p95_ms,
        peak_session_memory: sender
            .peak_session_memory()
            .max(receiver.peak_session_memory()),
        final_srtt_ms: tx.smoothed_rtt.map(|d| d.as_secs_f64() * 1000.0),
        sim_events: sim.stats().events,
        cpu_seconds,
        sim_mib_per_cpu_s: if cpu_seconds > 0.0 {
            delivered as f64 / 1048576.0 / cpu_seconds
        } else {
            0.0
        },
        trace_hash: format!("{:016x}", sim.trace().value()),
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_time_uses_the_rate_over_the_last_rtt() {
        // 1000 B/s capacity, RTT 1 s: deliveries of 100 B every 0.1 s reach 900 B per RTT
        // once nine chunks fall in the window.
        let d: Vec<(Timestamp, u64)> = (1..=30)
            .map(|i| (Timestamp::from_millis(i * 100), i * 100))
            .collect();
        let t = time_to_fraction(&d, Timestamp::ZERO, Duration::from_secs(1), 1000.0, 0.9).unwrap();
        assert_eq!(t, Duration::from_millis(900));
        // Half the rate never ramps.
        let slow: Vec<(Timestamp, u64)> = (1..=30)
            .map(|i| (Timestamp::from_millis(i * 100), i * 50))
            .collect();
        assert_eq!(
            time_to_fraction(&slow, Timestamp::ZERO, Duration::from_secs(1), 1000.0, 0.9),
            None
        );
    }

    #[test]
    fn true_rtt_follows_the_packets_being_acknowledged_now() {
        use crate::link::LinkSample;
        let profile = Profile::vpn300();
        // Forward transit grows by 1 ms per packet sent every 10 ms (a filling queue).
        let mut fwd = LinkStats::default();
        for i in 0..300u64 {
            let transit = 150_000 + 1000 * i as u32;
            fwd.samples.push(LinkSample {
                entered: Timestamp::from_millis(10 * i),
                queue_delay_us: 0,
                transit_us: transit,
            });
        }
        let mut rev = LinkStats::default();
        for i in 0..300u64 {
            rev.samples.push(LinkSample {
                entered: Timestamp::from_millis(10 * i),
                queue_delay_us: 0,
                transit_us: 150_000,
            });
        }
        // At 2 s, acks arriving now left the receiver at 1.85 s: packets that arrived there
        // in [1.775 s, 1.85 s] entered at i·10 ms + 150 ms + i ms, i.e. i in 148..=154.
        let t = true_rtt_us(&fwd, &rev, Timestamp::from_secs(2), &profile).unwrap();
        let expected = 150_000.0 + 1000.0 * (148..=154).sum::<u32>() as f64 / 7.0 + 150_000.0;
        assert!((t - expected).abs() < 1.0, "{t} vs {expected}");
        assert_eq!(
            true_rtt_us(&fwd, &rev, Timestamp::from_millis(100), &profile),
            None,
            "nothing acked yet"
        );
    }

    #[test]
    fn controller_names_round_trip() {
        for c in CONTROLLERS {
            assert_eq!(controller_by_name(controller_name(c)), Some(c));
        }
    }
}
