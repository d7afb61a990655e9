//! Loss-detection thresholds (docs/transport.md §3.5; RFC 9002 §6.1; quiche's ack-latency loss
//! floor, commit bf417fe4, cloudflare/quiche pull request #2568; docs/design.md lesson 3).
//!
//! A packet that is NACKed or older than the newest acknowledged packet is lost when
//! - time rule: `now − last_sent ≥ loss_delay = max(time_thresh · max(srtt, latest),
//!   ack_loop_max + 1 ms, 1 ms)`, or
//! - packet rule: at least `pkt_thresh` later packet numbers are acknowledged AND
//!   `now − last_sent ≥ ack_loop_max` — a request generated before the packet could arrive
//!   says nothing about it, so a NACK never convicts a packet younger than one observed
//!   send-to-processed-ack loop.
//!
//! `ack_loop_max` is the slowest send-to-processed-ack loop of the last 512 ms. We measure
//! the loop on the newest never-resent packet of each ack event, not the oldest: the request
//! format leaves packets after the last hole unacknowledged until the hole fills, so the
//! batch maximum would measure that withholding (up to an RTT) rather than ack latency.
//! Thresholds adapt after a spurious loss (quiche): `pkt_thresh` rises to the observed
//! reorder distance (≤ 20) and `time_thresh` to 5/4.

use std::time::Duration;

use super::rtt::{RttEstimator, GRANULARITY};
use crate::Timestamp;

/// RFC 9002 §6.1.1 kPacketThreshold.
const INITIAL_PACKET_THRESHOLD: u32 = 3;
/// quiche MAX_PACKET_THRESHOLD.
const MAX_PACKET_THRESHOLD: u32 = 20;
/// RFC 9002 §6.1.2 kTimeThreshold = 9/8, in eighths.
const INITIAL_TIME_THRESHOLD_8THS: u32 = 9;
/// quiche PACKET_REORDER_TIME_THRESHOLD = 5/4, in eighths.
const REORDER_TIME_THRESHOLD_8THS: u32 = 10;
/// quiche ACK_LOOP_WINDOW.
const ACK_LOOP_WINDOW: Duration = Duration::from_millis(512);

/// Adaptive thresholds and the ack-loop floor.
#[derive(Debug, Clone)]
pub(crate) struct LossThresholds {
    pkt_thresh: u32,
    time_thresh_8ths: u32,
    ack_loop_max: Duration,
    ack_loop_at: Timestamp,
}

impl LossThresholds {
    pub(crate) fn new() -> Self {
        Self {
            pkt_thresh: INITIAL_PACKET_THRESHOLD,
            time_thresh_8ths: INITIAL_TIME_THRESHOLD_8THS,
            ack_loop_max: Duration::ZERO,
            ack_loop_at: Timestamp::ZERO,
        }
    }

    /// One ack event's loop (`now − first_sent` of its newest never-resent packet).
    pub(crate) fn on_ack_loop(&mut self, now: Timestamp, ack_loop: Duration) {
        if ack_loop >= self.ack_loop_max || now - self.ack_loop_at > ACK_LOOP_WINDOW {
            self.ack_loop_max = ack_loop;
            self.ack_loop_at = now;
        }
    }

    /// The slowest loop of the last 512 ms (zero once it has expired without renewal).
    pub(crate) fn ack_loop_max(&self, now: Timestamp) -> Duration {
        if now - self.ack_loop_at > ACK_LOOP_WINDOW * 2 {
            Duration::ZERO
        } else {
            self.ack_loop_max
        }
    }

    /// `max(time_thresh · max(srtt, latest), ack_loop_max + 1 ms, 1 ms)`, rounded up to
    /// whole microseconds: timers are armed in µs (`Timestamp`), and a sub-µs remainder
    /// would arm a timer at an instant where the rule does not yet hold — forever.
    pub(crate) fn loss_delay(&self, now: Timestamp, rtt: &RttEstimator) -> Duration {
        let timed = rtt.conservative() * self.time_thresh_8ths / 8;
        let d = timed
            .max(self.ack_loop_max(now) + GRANULARITY)
            .max(GRANULARITY);
        Duration::from_micros(u64::try_from(d.as_nanos().div_ceil(1000)).unwrap_or(u64::MAX))
    }

    pub(crate) fn pkt_thresh(&self) -> u32 {
        self.pkt_thresh
    }

    /// A declared loss proved spurious after a reorder of `distance` packets.
    pub(crate) fn on_spurious(&mut self, distance: u32) {
        self.pkt_thresh = self
            .pkt_thresh
            .max(distance.saturating_add(1))
            .min(MAX_PACKET_THRESHOLD);
        self.time_thresh_8ths = REORDER_TIME_THRESHOLD_8THS;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_delay_is_floored_by_the_ack_loop() {
        let mut l = LossThresholds::new();
        let mut rtt = RttEstimator::new();
        let t = Timestamp::from_secs(1);
        rtt.on_sample(t, Duration::from_millis(1));
        assert_eq!(l.loss_delay(t, &rtt), Duration::from_micros(1125));
        l.on_ack_loop(t, Duration::from_millis(30));
        assert_eq!(l.loss_delay(t, &rtt), Duration::from_millis(31));
        // The floor expires if nothing renews it.
        let later = t + Duration::from_secs(2);
        assert_eq!(l.loss_delay(later, &rtt), Duration::from_micros(1125));
    }

    #[test]
    fn spurious_loss_raises_thresholds() {
        let mut l = LossThresholds::new();
        l.on_spurious(7);
        assert_eq!(l.pkt_thresh(), 8);
        l.on_spurious(100);
        assert_eq!(l.pkt_thresh(), MAX_PACKET_THRESHOLD);
    }
}
