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
/// Counted in requests, not time: the delay a peer shows depends on how fast data flows
/// (our receiver requests every 8 packets or 25 ms while data flows, after 1 s otherwise),
/// and a time window kept the idle-phase gaps of a flow's first round trips — 560 ms on
/// sat600 — through all of Startup, where they hid the queue and the loss of an
/// overflowing buffer (every threshold adds the ack delay). 64 requests span ≥ 512 packets
/// of a flowing transfer, and about a minute of a c-toxcore peer's requests.
const ACK_DELAY_WINDOW_REQUESTS: u64 = 64;
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
    /// Requests whose gap was measured: the ack-delay window's clock.
    requests_timed: u64,
    /// When the oldest packet in flight after the last request was (last) sent (see
    /// [`Self::on_request`]).
    oldest_in_flight_sent: Option<Timestamp>,
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
            peer_ack_delay: MinMax::new_max(ACK_DELAY_WINDOW_REQUESTS),
            last_request_at: None,
            requests_timed: 0,
            oldest_in_flight_sent: None,
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
    ///
    /// The gap counts from the previous request, or from when the data then in flight could
    /// first have been acknowledged, whichever is later: a peer cannot acknowledge what has
    /// not reached it. Without that, the gaps of a window that is small against the path
    /// — Startup on a satellite link, where each round's packets leave together and the
    /// next request comes an RTT later — read as an ack delay of one RTT (600 ms on
    /// sat600), and every queue and loss threshold that adds the ack delay went blind:
    /// Startup overflowed a half-BDP buffer for five RTTs (3800 packets lost).
    pub(crate) fn on_request(&mut self, now: Timestamp, outstanding: bool) {
        // Without a minimum RTT there is no telling a delay from the path: no sample.
        if let (Some(prev), true, Some(min)) = (self.last_request_at, outstanding, self.min_rtt()) {
            let possible = self.oldest_in_flight_sent.map(|sent| sent + min);
            let from = possible.map_or(prev, |t| t.max(prev));
            let gap = now.saturating_duration_since(from);
            let gap = gap.clamp(MIN_ACK_DELAY, MAX_ACK_DELAY);
            self.requests_timed += 1;
            self.peer_ack_delay.update(self.requests_timed, us(gap));
        }
        self.last_request_at = Some(now);
    }

    /// After a request was processed: the oldest packet still in flight was (last) sent at
    /// `sent`, so no later request can acknowledge it before that plus the minimum RTT.
    /// `None` (nothing in flight): the next packet sent takes that place ([`Self::on_sent`]).
    pub(crate) fn set_oldest_in_flight(&mut self, sent: Option<Timestamp>) {
        self.oldest_in_flight_sent = sent;
    }

    /// A packet left; it is the oldest in flight if nothing was.
    pub(crate) fn on_sent(&mut self, now: Timestamp) {
        self.oldest_in_flight_sent.get_or_insert(now);
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

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A window small against a 600 ms path: the peer acks each round at once, and the next
    /// request comes an RTT later only because the next round's data left an RTT before
    /// it. That gap is the path, not the peer's delay.
    #[test]
    fn a_round_trip_spent_waiting_for_data_is_not_ack_delay() {
        let mut r = RttEstimator::new();
        let mut t = Timestamp::ZERO + ms(1000);
        r.on_sample(t, ms(600));
        for _ in 0..10 {
            // The request acked everything; the next round leaves 2 ms later.
            r.on_request(t, true);
            r.set_oldest_in_flight(None);
            r.on_sent(t + ms(2));
            t += ms(605);
        }
        assert!(r.peer_ack_delay() <= ms(5), "{:?}", r.peer_ack_delay());
    }

    /// A full pipe and a peer that requests once a second (c-toxcore): the gap is its delay.
    #[test]
    fn a_slow_peer_with_a_full_pipe_shows_its_delay() {
        let mut r = RttEstimator::new();
        let mut t = Timestamp::ZERO + ms(5000);
        r.on_sample(t, ms(100));
        for _ in 0..5 {
            r.on_request(t, true);
            // The oldest packet in flight left long ago: the peer has had it for a while.
            r.set_oldest_in_flight(Some(t - ms(900)));
            t += ms(1000);
        }
        assert_eq!(r.peer_ack_delay(), ms(1000));
    }

    /// The estimate is a maximum over a window of 64 timed requests, so a long early gap
    /// does not outlive a flow's first round trips however long they take.
    #[test]
    fn an_early_long_gap_expires_after_64_requests() {
        let mut r = RttEstimator::new();
        let mut t = Timestamp::ZERO + ms(1000);
        r.on_sample(t, ms(600));
        r.on_request(t, true);
        r.set_oldest_in_flight(Some(t - ms(600)));
        t += ms(560);
        r.on_request(t, true);
        assert_eq!(r.peer_ack_delay(), ms(560));
        for _ in 0..=ACK_DELAY_WINDOW_REQUESTS {
            r.set_oldest_in_flight(Some(t - ms(600)));
            t += ms(10);
            r.on_request(t, true);
        }
        assert_eq!(r.peer_ack_delay(), ms(10));
    }
}
