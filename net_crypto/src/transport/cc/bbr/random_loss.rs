//! Which loss BBR may learn as random (docs/transport.md §3.6): the account behind
//! `background_loss`, from which the loss guard raises its threshold and the pacer
//! compensates the rate lost after the bottleneck.
//!
//! Only loss declared on an ack whose RTT sample stayed near the path minimum counts, and
//! only on paths whose smoothed RTT is under twice the minimum. Why: the compensation paces
//! at bw / (1 − p), so loss learned from an overflowing queue feeds itself — pacing p above
//! the link overflows a buffer by p, which is learned again as p, and the probes push p up
//! to the cap. A round's minimum RTT cannot tell the two apart: through a shallow buffer the
//! queue empties between bursts within a round that also overflowed. A drop-tail loss is
//! declared by the acks of packets that queued behind it and saw a full queue; a random one
//! at whatever RTT the path had. And where the smoothed RTT is more than twice the minimum,
//! queues, ack delay and the host's scheduling make up most of every sample, and one that
//! happens to come near the minimum says nothing about the queue when the loss happened.
//!
//! Measured through a kernel token bucket (tc tbf, 100 Mbit/s, a 12.5 kB queue, a veth pair
//! on a loaded 2-core host: min RTT 25 µs, smoothed 0.9 ms, ack delay 5–12 ms): with the
//! round-minimum test 3–13 % was learned as random and pacing ran ~15 % above the link;
//! with the per-ack test alone still 8.9 %; with both, none. Random-loss profiles keep what
//! they learned (sat600: 0.75 s smoothed over 0.6 s, bursty 80 ms over 60 ms).

use std::time::Duration;

use super::params::{MAX_QUEUE_THRESH, MIN_QUEUE_THRESH};

/// Smoothed RTT ÷ min RTT from which no sample can vouch for random loss.
const SMOOTHED_RTT_FLAT_RATIO: u32 = 2;

/// The path as the test sees it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Path {
    /// The windowed minimum RTT.
    pub(super) min: Duration,
    /// The smoothed RTT.
    pub(super) srtt: Duration,
    /// A slow acknowledger's request cadence (c-toxcore), which every sample carries.
    pub(super) cadence: Duration,
}

impl Path {
    /// True if `sample` shows no queue: within RFC 9406's clamp(min/8, 4 ms, 16 ms) of the
    /// minimum (a quarter of it on paths under 16 ms) plus the acknowledger's cadence —
    /// without the allowance for our own receiver's ack delay and the RTT's variation that
    /// the queue tests add (standing_queue.rs), which on a short path is larger than the
    /// whole buffer.
    fn is_flat(&self, sample: Duration) -> bool {
        if self.srtt >= self.min * SMOOTHED_RTT_FLAT_RATIO + self.cadence {
            return false;
        }
        let base = (self.min / 8).clamp(MIN_QUEUE_THRESH.min(self.min / 4), MAX_QUEUE_THRESH);
        sample < self.min + base + self.cadence
    }
}

/// A round's loss and delivery on flat-RTT acks.
#[derive(Debug, Clone, Default)]
pub(super) struct FlatLoss {
    /// Bytes declared lost on flat acks this round.
    lost: u64,
    /// Bytes delivered on flat acks this round.
    delivered: u64,
    /// The cumulative lost counter at the previous ack.
    last_lost: u64,
}

impl FlatLoss {
    /// An ack: `lost_total` bytes declared lost so far, `delivered` newly delivered,
    /// `sample` its RTT sample (or the latest).
    pub(super) fn on_ack(&mut self, lost_total: u64, delivered: u64, sample: Duration, path: Path) {
        let newly_lost = lost_total.saturating_sub(self.last_lost);
        self.last_lost = lost_total;
        if path.is_flat(sample) {
            self.lost += newly_lost;
            self.delivered += delivered;
        }
    }

    /// An ack the test cannot judge (no RTT known yet): its loss is not random evidence.
    pub(super) fn skip(&mut self, lost_total: u64) {
        self.last_lost = lost_total;
    }

    /// The round's random-loss rate, if any flat ack delivered data; starts a new round.
    pub(super) fn take_round(&mut self) -> Option<f64> {
        let (lost, delivered) = (self.lost, self.delivered);
        self.lost = 0;
        self.delivered = 0;
        (delivered > 0).then(|| lost as f64 / (lost + delivered) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: f64) -> Duration {
        Duration::from_secs_f64(v / 1e3)
    }

    fn path(min: f64, srtt: f64) -> Path {
        Path {
            min: ms(min),
            srtt: ms(srtt),
            cadence: Duration::ZERO,
        }
    }

    #[test]
    fn loss_on_a_flat_long_path_is_learned() {
        // lossy: 60 ms, a sample 3 ms above (under 7.5 ms), 3 lost of 100 packets.
        let mut f = FlatLoss::default();
        f.on_ack(0, 97 * 1373, ms(63.0), path(60.0, 65.0));
        f.on_ack(3 * 1373, 0, ms(63.0), path(60.0, 65.0));
        let rate = f.take_round().expect("a flat round");
        assert!((rate - 0.03).abs() < 1e-9, "{rate}");
        assert_eq!(f.take_round(), None, "the round was taken");
    }

    #[test]
    fn loss_declared_behind_a_full_queue_is_not() {
        // 20 ms path, the queue full (10 ms over): the overflow's loss is not random.
        let mut f = FlatLoss::default();
        f.on_ack(0, 50 * 1373, ms(21.0), path(20.0, 24.0));
        f.on_ack(5 * 1373, 10 * 1373, ms(30.0), path(20.0, 24.0));
        assert_eq!(f.take_round(), Some(0.0));
    }

    #[test]
    fn a_short_path_whose_smoothed_rtt_is_mostly_delay_learns_nothing() {
        // The kernel-shaped veth: min 25 µs, smoothed 0.9 ms; a sample at the minimum.
        let mut f = FlatLoss::default();
        f.on_ack(1373, 10 * 1373, ms(0.026), path(0.025, 0.9));
        assert_eq!(f.take_round(), None);
        // Loss counted while skipped is not carried into the next judged ack.
        f.skip(2 * 1373);
        f.on_ack(2 * 1373, 10 * 1373, ms(61.0), path(60.0, 62.0));
        assert_eq!(f.take_round(), Some(0.0));
    }

    #[test]
    fn a_slow_acknowledgers_cadence_is_not_a_queue() {
        // c-toxcore requests every 250 ms over a 50 ms path: samples up to 300 ms are flat.
        let p = Path {
            min: ms(50.0),
            srtt: ms(200.0),
            cadence: ms(250.0),
        };
        let mut f = FlatLoss::default();
        f.on_ack(1373, 99 * 1373, ms(280.0), p);
        assert!(f.take_round().is_some_and(|r| r > 0.0));
    }
}
