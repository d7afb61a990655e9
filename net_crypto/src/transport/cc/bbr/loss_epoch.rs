//! Loss judged over a span of time as well as a round (docs/transport.md §3.6), for paths
//! whose RTT cannot tell a queue from a flat path.
//!
//! The round-based loss guard (mod.rs `judge_round`) calls a round congested only when its
//! loss comes with a standing queue, so random loss on a flat-RTT path leaves the rate alone.
//! Where the peer's ack delay is four minimum RTTs or more (random_loss.rs), that test
//! cannot work: the allowance for the peer's ack delay is larger than the whole buffer,
//! every round passes for flat, and an overflowing queue goes unanswered. Those paths are short (a LAN, a
//! kernel token bucket on a veth pair, loopback), and their rounds are shorter than one
//! acknowledgement interval: through tc tbf at 100 Mbit/s with a 12.5 kB queue the min RTT is
//! 25 µs and the peer's ack delay 1–12 ms (its estimate read 1.2–4.3 ms in the runs of
//! 2026-12-07, 22:00 UTC, on a loaded host), so a round holds one request's worth of losses or
//! none. An epoch here is a round that also lasted [`EPOCH_MIN`], long enough to hold a few
//! acknowledgements; its loss rate is the fraction of the bytes settled in it that were lost.
//!
//! What the controller does with an epoch (mod.rs `epoch_guard`): above 1 % lost (half of
//! draft-ietf-ccwg-bbr's LossThresh: nothing is learned as random on these paths) it paces
//! 1 % below the rate the path carried, `bw × (1 − loss)`, and keeps that bound, growing it
//! by 0.5 % per epoch that lost under 0.5 %, until its next probe for bandwidth 2–3 s later;
//! the bandwidth filter is not fed from the bounded sending meanwhile, so the bound cannot
//! feed on itself. Which paths: the peer's ack delay four minimum RTTs or more
//! (random_loss.rs `ack_delay_dominates`).

use std::time::Duration;

use crate::transport::ack_timing::MAX_ACK_DELAY;
use crate::Timestamp;

/// Shortest epoch: our receiver's ack timer (25 ms), the longest a rustox peer waits before
/// it requests. Through the kernel token bucket (100 Mbit/s, requests 5–12 ms apart on a
/// loaded host) that is 2–5 requests and ~230 packets, so 2 % is ~5 packets.
pub(super) const EPOCH_MIN: Duration = MAX_ACK_DELAY;

/// What one epoch settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EpochLoss {
    /// Bytes declared lost in the epoch.
    pub(super) lost: u64,
    /// Bytes acknowledged in the epoch.
    pub(super) delivered: u64,
}

impl EpochLoss {
    /// Lost ÷ (lost + delivered).
    pub(super) fn rate(&self) -> f64 {
        self.lost as f64 / (self.lost + self.delivered).max(1) as f64
    }
}

/// The running epoch.
#[derive(Debug, Clone)]
pub(super) struct LossEpoch {
    start: Timestamp,
    lost_start: u64,
    delivered_start: u64,
    /// The epoch after a cut is not judged: its losses are mostly of packets sent before
    /// the cut, at the old rate, and declared up to an ack interval later.
    skip: bool,
}

impl LossEpoch {
    pub(super) fn new(now: Timestamp) -> Self {
        Self {
            start: now,
            lost_start: 0,
            delivered_start: 0,
            skip: false,
        }
    }

    /// One ack: `round_start` from the packet-round counter, `lost` and `delivered` the
    /// transport's running totals. Returns the epoch that ends here, if one does and is to
    /// be judged.
    pub(super) fn on_ack(
        &mut self,
        now: Timestamp,
        round_start: bool,
        lost: u64,
        delivered: u64,
    ) -> Option<EpochLoss> {
        if !round_start || now - self.start < EPOCH_MIN {
            return None;
        }
        let epoch = EpochLoss {
            lost: lost.saturating_sub(self.lost_start),
            delivered: delivered.saturating_sub(self.delivered_start),
        };
        self.start = now;
        self.lost_start = lost;
        self.delivered_start = delivered;
        if std::mem::take(&mut self.skip) {
            return None;
        }
        Some(epoch)
    }

    /// The controller cut its rate at `now`: the next epoch starts here and is not judged.
    pub(super) fn restart_after_cut(&mut self, now: Timestamp, lost: u64, delivered: u64) {
        self.start = now;
        self.lost_start = lost;
        self.delivered_start = delivered;
        self.skip = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_micros(ms * 1000)
    }

    #[test]
    fn an_epoch_needs_a_round_and_its_time() {
        let mut e = LossEpoch::new(at(0));
        // Rounds of 25 µs end long before the epoch can.
        assert_eq!(e.on_ack(at(10), true, 5_000, 100_000), None);
        // Time enough, but no round boundary.
        assert_eq!(e.on_ack(at(30), false, 6_000, 200_000), None);
        let got = e.on_ack(at(31), true, 7_000, 300_000).expect("epoch ends");
        assert_eq!(
            got,
            EpochLoss {
                lost: 7_000,
                delivered: 300_000
            }
        );
        assert!((got.rate() - 7.0 / 307.0).abs() < 1e-9);
        // The next epoch counts from here.
        let next = e
            .on_ack(at(60), true, 8_000, 400_000)
            .expect("second epoch");
        assert_eq!(next.lost, 1_000);
        assert_eq!(next.delivered, 100_000);
    }

    #[test]
    fn the_epoch_after_a_cut_is_not_judged() {
        let mut e = LossEpoch::new(at(0));
        e.restart_after_cut(at(5), 10_000, 50_000);
        assert_eq!(e.on_ack(at(40), true, 20_000, 150_000), None);
        let got = e
            .on_ack(at(70), true, 20_500, 250_000)
            .expect("judged again");
        assert_eq!(got.lost, 500);
        assert_eq!(got.delivered, 100_000);
    }
}
