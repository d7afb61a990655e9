//! Round-trip time estimation (transport.md §3.3, RFC 9002 §5).
//!
//! Samples come only from packets transmitted once (Karn's rule; DESIGN.md lesson 1): the
//! send array keeps each packet's first send time and never overwrites it. Smoothing is
//! RFC 9002's (α = 1/8, β = 1/4) and follows increases as well as decreases — c-toxcore's
//! `rtt_time` only ever falls (protocol.md §2.11), which is the bug we exist to fix.
//!
//! The wire has no ack-delay field, so the peer's ack delay is treated as path delay (RFC
//! 9002 keeps excess ack delay in the RTT) and estimated separately, as the windowed
//! maximum gap between request packets while data is outstanding, for use as
//! `max_ack_delay` in the PTO.

use std::time::Duration;

use super::minmax::MinMax;
use crate::Timestamp;

/// RFC 9002 §6.2.2 kInitialRtt: the RTT assumed before any sample (first PTO ≈ 1 s).
pub(crate) const INITIAL_RTT: Duration = Duration::from_millis(333);
/// RFC 9002 §6.1.2 kGranularity.
pub(crate) const GRANULARITY: Duration = Duration::from_millis(1);
/// BBR's MinRTTFilterLen (transport.md §1.4): window of the min RTT used for BDP.
const MIN_RTT_WINDOW_SHORT: Duration = Duration::from_secs(10);
/// quiche's RTT_WINDOW (transport.md §2.2): window of the min RTT used for plausibility.
const MIN_RTT_WINDOW_LONG: Duration = Duration::from_secs(300);
/// Window of the peer-ack-delay maximum.
const ACK_DELAY_WINDOW: Duration = Duration::from_secs(5);
/// Bounds of the peer ack-delay estimate (transport.md §3.3: legacy peers 50–1000 ms,
/// ours ≤ 25 ms).
const MIN_ACK_DELAY: Duration = Duration::from_millis(1);
const MAX_ACK_DELAY: Duration = Duration::from_millis(1000);
/// Until the first gap is measured, assume our own request interval (transport.md §3.4).
const DEFAULT_ACK_DELAY: Duration = Duration::from_millis(25);

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The RTT estimator of one session.
#[derive(Debug, Clone)]
pub(crate) struct RttEstimator {
    smoothed: Option<Duration>,
    var: Duration,
    latest: Duration,
    min_short: MinMax,
    min_long: MinMax,
    samples: u64,
    peer_ack_delay: MinMax,
    last_request_at: Option<Timestamp>,
}

impl RttEstimator {
    pub(crate) fn new() -> Self {
        Self {
            smoothed: None,
            var: INITIAL_RTT / 2,
            latest: INITIAL_RTT,
            min_short: MinMax::new_min(us(MIN_RTT_WINDOW_SHORT)),
            min_long: MinMax::new_min(us(MIN_RTT_WINDOW_LONG)),
            samples: 0,
            peer_ack_delay: MinMax::new_max(us(ACK_DELAY_WINDOW)),
            last_request_at: None,
        }
    }

    /// Feeds one sample (RFC 9002 §5.3, ack delay kept as path delay).
    pub(crate) fn on_sample(&mut self, now: Timestamp, sample: Duration) {
        let sample = sample.max(Duration::from_micros(1));
        self.latest = sample;
        self.samples += 1;
        self.min_short.update(now.as_micros(), us(sample));
        self.min_long.update(now.as_micros(), us(sample));
        match self.smoothed {
            None => {
                self.smoothed = Some(sample);
                self.var = sample / 2;
            }
            Some(s) => {
                let diff = s.abs_diff(sample);
                // rttvar first, with the old smoothed value (RFC 6298 §2.3, RFC 9002 §5.3).
                self.var = (self.var * 3 + diff) / 4;
                self.smoothed = Some((s * 7 + sample) / 8);
            }
        }
    }

    /// A request packet arrived; `outstanding` says whether data was in flight (only then
    /// is the gap a measure of the peer's ack delay).
    pub(crate) fn on_request(&mut self, now: Timestamp, outstanding: bool) {
        if let (Some(prev), true) = (self.last_request_at, outstanding) {
            let gap = (now - prev).clamp(MIN_ACK_DELAY, MAX_ACK_DELAY);
            self.peer_ack_delay.update(now.as_micros(), us(gap));
        }
        self.last_request_at = Some(now);
    }

    pub(crate) fn smoothed(&self) -> Option<Duration> {
        self.smoothed
    }
    /// Smoothed RTT, or kInitialRtt before the first sample.
    pub(crate) fn smoothed_or_initial(&self) -> Duration {
        self.smoothed.unwrap_or(INITIAL_RTT)
    }
    pub(crate) fn var(&self) -> Duration {
        self.var
    }
    pub(crate) fn latest(&self) -> Duration {
        self.latest
    }
    pub(crate) fn has_sample(&self) -> bool {
        self.samples > 0
    }
    pub(crate) fn samples(&self) -> u64 {
        self.samples
    }
    /// Windowed (10 s) minimum RTT, for BDP and pacing.
    pub(crate) fn min_rtt(&self) -> Option<Duration> {
        self.min_short.get().map(Duration::from_micros)
    }
    /// Long-window (300 s) minimum RTT, for plausibility tests (spurious loss).
    pub(crate) fn min_rtt_long(&self) -> Option<Duration> {
        self.min_long.get().map(Duration::from_micros)
    }
    /// The peer's estimated maximum ack delay.
    pub(crate) fn peer_ack_delay(&self) -> Duration {
        self.peer_ack_delay
            .get()
            .map(Duration::from_micros)
            .unwrap_or(DEFAULT_ACK_DELAY)
    }
    /// max(smoothed, latest): RFC 9002 §6.1.2's base for the loss delay.
    pub(crate) fn conservative(&self) -> Duration {
        self.smoothed_or_initial().max(self.latest)
    }
    /// RFC 9002 §6.2.1: smoothed + max(4·rttvar, granularity) + max_ack_delay.
    pub(crate) fn pto_base(&self) -> Duration {
        self.smoothed_or_initial() + (self.var * 4).max(GRANULARITY) + self.peer_ack_delay()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoothed_follows_increases() {
        let mut r = RttEstimator::new();
        let mut t = Timestamp::ZERO;
        for _ in 0..10 {
            t += Duration::from_millis(50);
            r.on_sample(t, Duration::from_millis(50));
        }
        for _ in 0..60 {
            t += Duration::from_millis(500);
            r.on_sample(t, Duration::from_millis(500));
        }
        let s = r.smoothed().unwrap();
        assert!(s > Duration::from_millis(480), "{s:?}");
        // 30 s later the 10 s min filter has forgotten the 50 ms samples; the 300 s one
        // still remembers them.
        assert_eq!(r.min_rtt(), Some(Duration::from_millis(500)));
        assert_eq!(r.min_rtt_long(), Some(Duration::from_millis(50)));
    }

    #[test]
    fn first_sample_initialises_var_to_half() {
        let mut r = RttEstimator::new();
        r.on_sample(Timestamp::ZERO, Duration::from_millis(100));
        assert_eq!(r.smoothed(), Some(Duration::from_millis(100)));
        assert_eq!(r.var(), Duration::from_millis(50));
    }
}
