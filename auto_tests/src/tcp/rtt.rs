//! Round-trip estimation and the retransmission timeout: RFC 6298's smoothing with the
//! bounds Linux applies (`tcp_rtt_estimator`, `tcp_set_rto`).
//!
//! Linux floors the variance term, not the sum: its RTO is SRTT + max(4·RTTVAR, 200 ms)
//! (`rttvar_us` never drops below `tcp_rto_min`), so on a 20 ms path the first RTO fires
//! ~220 ms after the last ACK, not at RFC 6298's 1 s minimum.

use std::time::Duration;

/// RTO before any sample: RFC 6298 §2.1 and Linux's `TCP_TIMEOUT_INIT`.
pub const INITIAL_RTO: Duration = Duration::from_secs(1);
/// Linux's `TCP_RTO_MIN` (HZ/5), the floor of the variance term.
pub const MIN_RTO_VARIANCE: Duration = Duration::from_millis(200);
/// Linux's `TCP_RTO_MAX`: backoff stops doubling here (RFC 6298 §2.5 allows ≥ 60 s).
pub const MAX_RTO: Duration = Duration::from_secs(120);
/// RFC 6298's K.
const K: u32 = 4;

/// SRTT/RTTVAR per RFC 6298 §2, the minimum RTT, and the backed-off RTO.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    min_rtt: Option<Duration>,
    latest: Option<Duration>,
    /// Consecutive expiries since the last valid sample (RFC 6298 §5.5, §5.7).
    backoff: u32,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator::new()
    }
}

impl RttEstimator {
    /// No samples yet.
    pub fn new() -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            min_rtt: None,
            latest: None,
            backoff: 0,
        }
    }

    /// A valid sample (never from a retransmitted segment, Karn's rule). Clears the backoff:
    /// Linux resets `icsk_backoff` only on a valid RTT measurement (RFC 6298 §5.7).
    pub fn on_sample(&mut self, rtt: Duration) {
        match self.srtt {
            None => {
                // RFC 6298 §2.2.
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                // RFC 6298 §2.3: RTTVAR first, with the old SRTT; β = 1/4, α = 1/8.
                let err = srtt.abs_diff(rtt);
                self.rttvar = (self.rttvar * 3 + err) / 4;
                self.srtt = Some((srtt * 7 + rtt) / 8);
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.latest = Some(rtt);
        self.backoff = 0;
    }

    /// The retransmission timer expired: double the RTO (RFC 6298 §5.5).
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1).min(31);
    }

    /// The current RTO, backoff included.
    pub fn rto(&self) -> Duration {
        let base = match self.srtt {
            None => INITIAL_RTO,
            Some(srtt) => srtt + (self.rttvar * K).max(MIN_RTO_VARIANCE),
        };
        base.checked_mul(1 << self.backoff)
            .unwrap_or(MAX_RTO)
            .min(MAX_RTO)
    }

    /// Smoothed RTT, once sampled.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// RTT variation.
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }

    /// Smallest sample seen.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// The most recent sample.
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }

    /// Consecutive backoffs.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn first_sample_and_linux_floor() {
        let mut r = RttEstimator::new();
        assert_eq!(r.rto(), INITIAL_RTO);
        r.on_sample(20 * MS);
        assert_eq!(r.srtt(), Some(20 * MS));
        assert_eq!(r.rttvar(), 10 * MS);
        // 4 × 10 ms < 200 ms: the floor applies to the variance term.
        assert_eq!(r.rto(), 220 * MS);
        r.on_sample(36 * MS);
        // RTTVAR = 3/4·10 + 1/4·16 = 11.5; SRTT = 7/8·20 + 1/8·36 = 22.
        assert_eq!(r.rttvar(), Duration::from_micros(11_500));
        assert_eq!(r.srtt(), Some(22 * MS));
    }

    #[test]
    fn large_variance_exceeds_the_floor() {
        let mut r = RttEstimator::new();
        r.on_sample(400 * MS);
        assert_eq!(r.rto(), 400 * MS + 800 * MS);
    }

    #[test]
    fn backoff_doubles_caps_and_resets_on_a_sample() {
        let mut r = RttEstimator::new();
        r.on_sample(20 * MS);
        r.back_off();
        r.back_off();
        assert_eq!(r.rto(), 880 * MS);
        for _ in 0..40 {
            r.back_off();
        }
        assert_eq!(r.rto(), MAX_RTO);
        r.on_sample(20 * MS);
        assert_eq!(r.backoff(), 0);
        assert!(r.rto() < 300 * MS);
    }
}
