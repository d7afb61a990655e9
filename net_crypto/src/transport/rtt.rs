//! Round-trip time estimation (docs/transport.md §3.3, RFC 9002 §5).
//!
//! Samples come only from packets transmitted once (Karn's rule; docs/design.md lesson 1): the
//! send array keeps each packet's first send time and never overwrites it. Smoothing is
//! RFC 9002's (α = 1/8, β = 1/4) and follows increases as well as decreases — c-toxcore's
//! `rtt_time` only ever falls (docs/protocol.md §2.11), which is the bug we exist to fix.
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
/// BBR's MinRTTFilterLen (docs/transport.md §1.4): window of the min RTT used for BDP.
const MIN_RTT_WINDOW_SHORT: Duration = Duration::from_secs(10);
/// quiche's RTT_WINDOW (docs/transport.md §2.2): window of the min RTT used for plausibility.
const MIN_RTT_WINDOW_LONG: Duration = Duration::from_secs(300);
/// Window of the peer-ack-delay maximum.
const ACK_DELAY_WINDOW: Duration = Duration::from_secs(5);
/// kPersistentCongestionThreshold (RFC 9002 §7.6.1).
const PERSISTENT_CONGESTION_THRESHOLD: u32 = 3;
/// Bounds of the peer ack-delay estimate (docs/transport.md §3.3: legacy peers 50–1000 ms,
/// ours ≤ 25 ms).
const MIN_ACK_DELAY: Duration = Duration::from_millis(1);
const MAX_ACK_DELAY: Duration = Duration::from_millis(1000);
/// Until the first gap is measured, assume our own request interval (docs/transport.md §3.4).
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
    /// The smoothed gap (EWMA, 1/8) between two requests that acknowledged new packets:
    /// how often the peer acknowledges. Ours requests every 8 packets or 25 ms; c-toxcore
    /// 0.2.18 every 50–1000 ms whatever the rate (`do_net_crypto`'s
    /// `request_packet_interval`). A mean, not a minimum: two requests that arrive back to
    /// back after a scheduling hiccup would pull a minimum down to nothing.
    request_cadence: Option<Duration>,
    last_request_at: Option<Timestamp>,
    /// When the first sample arrived (RFC 9002 §7.6.2: only packets sent after it count
    /// toward persistent congestion).
    first_sample_at: Option<Timestamp>,
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
            request_cadence: None,
            last_request_at: None,
            first_sample_at: None,
        }
    }

    /// Feeds one sample (RFC 9002 §5.3, ack delay kept as path delay).
    pub(crate) fn on_sample(&mut self, now: Timestamp, sample: Duration) {
        let sample = sample.max(Duration::from_micros(1));
        self.first_sample_at.get_or_insert(now);
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

    /// A request packet was processed. `outstanding`: data was in flight before it;
    /// `walked`: it acknowledged or named a packet; `newest_acked_sent`: the latest send
    /// time among the packets it acknowledged.
    ///
    /// The sample is the gap since the previous request, but counted at the earliest from
    /// when the newest packet it acknowledges could have come back (sent + min RTT): what
    /// inflates our RTT samples is how long the peer held *that* packet, and a peer cannot
    /// acknowledge what has not reached it. Without that, the gaps of a window small
    /// against the path — Startup on a satellite link, where each round's packets leave
    /// together and the next request comes an RTT later — read as an ack delay of one RTT
    /// (560–600 ms on sat600), and every queue and loss threshold that adds the ack delay
    /// went blind through Startup: BBR overflowed the half-BDP buffer for five RTTs (5 MB
    /// dropped). A request that walks over no packet is a keep-alive from a peer with
    /// nothing new (c-toxcore and our receiver send one every second or so) and gives no
    /// sample: during a forward outage those read as a 1 s ack delay, which tripled the
    /// PTO and the persistent-congestion duration.
    pub(crate) fn on_request(
        &mut self,
        now: Timestamp,
        outstanding: bool,
        walked: bool,
        newest_acked_sent: Option<Timestamp>,
        acked_in_header: bool,
    ) {
        // Without a minimum RTT there is no telling a delay from the path: no sample.
        if let (Some(prev), true, true, Some(min)) =
            (self.last_request_at, outstanding, walked, self.min_rtt())
        {
            let possible = newest_acked_sent.map(|sent| sent + min);
            let from = possible.map_or(prev, |t| t.max(prev));
            let gap = now.saturating_duration_since(from);
            let gap = gap.clamp(MIN_ACK_DELAY, MAX_ACK_DELAY);
            self.peer_ack_delay.update(now.as_micros(), us(gap));
        }
        // The cadence counts requests that acknowledged data we had out. A request often
        // carries its cumulative ack in its header too, which empties the flight before
        // the walk: such a request had data outstanding as well.
        if let (Some(prev), true, true) =
            (self.last_request_at, walked, outstanding || acked_in_header)
        {
            let interval = now.saturating_duration_since(prev).min(MAX_ACK_DELAY);
            self.request_cadence = Some(match self.request_cadence {
                None => interval,
                Some(c) => (c * 7 + interval) / 8,
            });
        }
        self.last_request_at = Some(now);
    }

    /// When the first sample arrived.
    pub(crate) fn first_sample_at(&self) -> Option<Timestamp> {
        self.first_sample_at
    }

    /// RFC 9002 §7.6: how far apart the send times of two lost packets with nothing
    /// acknowledged between them must be for persistent congestion (the PTO base × 3).
    pub(crate) fn persistent_congestion_duration(&self) -> Duration {
        self.pto_base() * PERSISTENT_CONGESTION_THRESHOLD
    }

    /// Persistent congestion was declared: the path may have changed, so the minimum RTT
    /// filters restart from the latest sample (docs/transport.md §3.3; RFC 9002 §5.2).
    pub(crate) fn on_persistent_congestion(&mut self, now: Timestamp) {
        self.min_short.reset(now.as_micros(), us(self.latest));
        self.min_long.reset(now.as_micros(), us(self.latest));
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
    /// The smoothed gap between the peer's acknowledging requests (`None` before the
    /// first): a peer that acknowledges this seldom holds data about that long whatever
    /// we send.
    pub(crate) fn peer_request_cadence(&self) -> Option<Duration> {
        self.request_cadence
    }

    /// max(smoothed, latest): RFC 9002 §6.1.2's base for the loss delay.
    pub(crate) fn conservative(&self) -> Duration {
        self.smoothed_or_initial().max(self.latest)
    }
    /// RFC 9002 §6.2.1: smoothed + max(4·rttvar, granularity) + max_ack_delay.
    pub(crate) fn pto_base(&self) -> Duration {
        // The measured delay is a maximum of what was seen, and can sit below what the
        // peer may legitimately take: ours may wait MAX_ACK_DELAY (25 ms, ack_timing.rs)
        // for more packets, like RFC 9002's max_ack_delay. A PTO below that fires on a
        // healthy flow — lossy, 3 %: RTT error 0.03 → 0.10–0.14 and a 4× queue.
        self.smoothed_or_initial()
            + (self.var * 4).max(GRANULARITY)
            + self.peer_ack_delay().max(DEFAULT_ACK_DELAY)
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

    /// A window small against a 600 ms path: each request acknowledges packets sent an
    /// RTT before it, and the next request comes an RTT later only because the next
    /// round's data left an RTT before it. That gap is the path, not the peer's delay.
    #[test]
    fn a_round_trip_spent_waiting_for_data_is_not_ack_delay() {
        let mut r = RttEstimator::new();
        let mut t = Timestamp::ZERO + ms(1000);
        r.on_sample(t, ms(600));
        for _ in 0..10 {
            // The newest packet this request acknowledges left 602 ms ago.
            r.on_request(t, true, true, Some(t - ms(602)), false);
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
            // It held the newest packet it acknowledges for most of the second.
            r.on_request(t, true, true, Some(t - ms(1050)), false);
            t += ms(1000);
        }
        assert_eq!(r.peer_ack_delay(), ms(950));
    }

    /// Keep-alive requests (they acknowledge and walk over nothing) during an outage are
    /// no ack delay: the estimate keeps the last real sample.
    #[test]
    fn keep_alive_requests_give_no_sample() {
        let mut r = RttEstimator::new();
        let mut t = Timestamp::ZERO + ms(1000);
        r.on_sample(t, ms(40));
        r.on_request(t, true, true, Some(t - ms(45)), false);
        t += ms(10);
        r.on_request(t, true, true, Some(t - ms(43)), false);
        assert_eq!(r.peer_ack_delay(), ms(3));
        for _ in 0..3 {
            t += ms(1000);
            r.on_request(t, true, false, None, false);
        }
        assert_eq!(r.peer_ack_delay(), ms(3));
        // The PTO still allows our own receiver's 25 ms ack timer.
        assert!(r.pto_base() >= ms(40) + DEFAULT_ACK_DELAY);
    }
}
