//! BBR's parameters, each with its source (draft-ietf-ccwg-bbr, BBRv1's `tcp_bbr.c`, BBRv3,
//! RFC 9406) or the measurement that chose it (docs/transport.md §3.6). The state machine in
//! mod.rs reads them; the standing-queue test (standing_queue.rs) its RTT-rise bounds.

use std::time::Duration;

use super::super::{MAX_PACKET, MIN_WINDOW};
use crate::transport::ack_timing::PACKETS_PER_REQUEST;

/// draft-ietf-ccwg-bbr StartupPacingGain = 4·ln 2.
pub(super) const STARTUP_PACING_GAIN: f64 = 2.77;
/// draft-ietf-ccwg-bbr DefaultCwndGain.
pub(super) const CWND_GAIN: f64 = 2.0;
/// Startup cwnd gain: BBRv1's high_gain 2/ln 2 (Linux `tcp_bbr.c` uses it for pacing and
/// cwnd). draft-ietf-ccwg-bbr's 2 made the cwnd, not the pacer, limit Startup's growth
/// (sat600 seed 1: t90 7.6 → 6.9 s, η 0.723 → 0.729).
pub(super) const STARTUP_CWND_GAIN: f64 = 2.885;
/// draft-ietf-ccwg-bbr DrainPacingGain 0.5 (docs/transport.md §1.4; v1 used 1/2.885). Drain
/// after a shallow buffer overflowed starves the link at 1/2.885 (sat600: η +0.005).
pub(super) const DRAIN_PACING_GAIN: f64 = 0.5;
/// BBRv1 ProbeBW gain cycle (Linux `tcp_bbr.c` bbr_pacing_gain).
pub(super) const CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// draft-ietf-ccwg-bbr PacingMarginPercent: pace 1 % below the estimate.
pub(super) const PACING_MARGIN: f64 = 0.99;
/// BBRv1 bandwidth filter length, in rounds (docs/transport.md §1.4).
pub(super) const BW_FILTER_ROUNDS: u64 = 10;
/// draft-ietf-ccwg-bbr ExtraAckedFilterLen, in rounds.
pub(super) const EXTRA_ACKED_ROUNDS: u64 = 10;
/// BBR MinRTTFilterLen.
pub(super) const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);
/// draft-ietf-ccwg-bbr ProbeRTTDuration.
pub(super) const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// Full-pipe test: growth factor and rounds (docs/transport.md §1.4).
pub(super) const FULL_BW_GROWTH: f64 = 1.25;
pub(super) const FULL_BW_ROUNDS: u32 = 3;
/// draft-ietf-ccwg-bbr LossThresh: 2 % of a round's data lost.
pub(super) const LOSS_THRESH: f64 = 0.02;
/// Upper bound of the adaptive loss threshold (docs/transport.md §3.6: "raise to ~10 % on
/// links flagged lossy").
pub(super) const MAX_LOSS_THRESH: f64 = 0.10;
/// Smallest loss in a round that can count as congestion: 6 full packets
/// (draft-ietf-ccwg-bbr: Startup exits after 6 loss events in a round).
pub(super) const MIN_CONGESTION_LOSS: u64 = 6 * MAX_PACKET;
/// Background loss (lost in rounds whose RTT stayed flat) from which the path counts as
/// losing packets at random: a tenth of a percent is already far above what overflow-free
/// paths show (none), and below the 0.5 % of the mildest lossy profile (wan100).
pub(super) const RANDOM_LOSS_EVIDENCE: f64 = 0.001;
/// EWMA gain of the background-loss estimate, per RTT-flat round.
pub(super) const BACKGROUND_LOSS_GAIN: f64 = 0.125;
/// Bandwidth bound while a standing queue drains (BBRv3's ProbeBW_DOWN gain, 0.9).
pub(super) const QUEUE_DRAIN_FACTOR: f64 = 0.9;
/// draft-ietf-ccwg-bbr Beta: multiplicative cut per congested round.
pub(super) const BETA: f64 = 0.7;
/// Queue-rise threshold bounds (RFC 9406 MIN/MAX_RTT_THRESH), re-used to tell a standing
/// queue from a flat RTT.
pub(super) const MIN_QUEUE_THRESH: Duration = Duration::from_millis(4);
pub(super) const MAX_QUEUE_THRESH: Duration = Duration::from_millis(16);
/// BBR's window floor: twice the packets our receiver (and a rustox peer) waits for before
/// it requests at once, 16 × 1373 = 21 968 bytes (above the generic 4-packet
/// [`MIN_WINDOW`]).
///
/// Why: a peer requests after every 8 data packets, else after its 25 ms timer
/// (`ack_timing`). With a window below 8 packets every ack waits for that timer, so each
/// delivery-rate sample is at most window / 25 ms (4 packets: 5.5 kB / 25 ms = 220 kB/s),
/// the bandwidth filter keeps that, and on a short path the window it yields,
/// 2 × 220 kB/s × min RTT (50 µs: 22 bytes), is the floor again: a self-sustaining
/// collapse. Over loopback UDP the CLI measured 0.26 MB/s (cwnd 5492, srtt 15 ms against
/// a 40–90 µs min RTT); the harness reproduces it on a 50 µs path after an app-limited
/// start (0.21 MiB/s of 11.5, cwnd 5492, srtt 14.9 ms) or with 200 µs of jitter
/// (`transport_loopback`). The ack-aggregation allowance (extra_acked) cannot get out of
/// it, as it measures the aggregation against the same starved bandwidth estimate. With
/// 16 packets in flight, 8 arrive within the RTT, the request fires at once, the sample
/// measures the path (8 packets per RTT) and the model recovers within a round; the
/// second 8 keep the pipe busy while that request is on its way back (an RTT of
/// window-stall per 8 packets otherwise). Pacing still sets the rate, so on slow paths
/// the floor adds no queue while the flow is pacing-limited (it always is in ProbeBW at
/// gain ≤ 1).
pub(super) const ACK_CLOCK_WINDOW: u64 = 2 * PACKETS_PER_REQUEST as u64 * MAX_PACKET;
/// RTT samples a cruising round needs before its minimum is believed to show a standing
/// queue. On a path of a few packets per round (100 µs loopback at a gigabit: ~13
/// packets, one or two requests) the round minimum is one or two samples, and scheduling
/// jitter alone lifts it: the queue verdict's bandwidth cut then fed on itself
/// (transport_loopback's jittery path: 60 of 115 MiB/s).
pub(super) const QUEUE_ROUND_MIN_SAMPLES: u32 = 4;
/// The floor BBR's window never goes below.
pub(super) const BBR_MIN_WINDOW: u64 = if ACK_CLOCK_WINDOW > MIN_WINDOW {
    ACK_CLOCK_WINDOW
} else {
    MIN_WINDOW
};
/// BBR's initial window: 20 packets, paced over the handshake's RTT (the first flight is
/// paced like every other, so a larger window is not a larger burst). RFC 9002's 10
/// packets cost long paths a round trip of ramp: sat600 (600 ms, 15 Mbit/s) spends ~7
/// rounds in Startup from 10 packets. Chromium's QUIC starts BBR at 32; on
/// transport_delivery's 2 MB/s, 40 ms path with a 2.5-BDP buffer 32 makes Startup's last
/// round overflow the buffer where 10 and 20 do not. 20 against 10 (32 MiB, CLI driver
/// model, seeds 1-3): sat600 0.763/0.739/0.765 against 0.746/0.731/0.746, wan20 0.926
/// against 0.919, vpn300 0.902-0.913 against 0.899-0.909, and 90 % of the bottleneck
/// reached 1-2 RTTs sooner on every profile.
pub(super) const BBR_INITIAL_WINDOW: u64 = 20 * MAX_PACKET;
/// RFC 9406 N_RTT_SAMPLE: consecutive risen RTT samples that end Startup.
pub(super) const STARTUP_RISEN_SAMPLES: u32 = 8;
