//! Earliest-departure-time pacer (docs/transport.md §3.7; s2n-quic / quiche style) that holds its
//! rate when the driver's wake-ups run late.
//!
//! Each send advances `next_departure` by `size / rate`. A packet may leave once
//! `next_departure` has come; when the sender was held back, packets may leave back to back
//! until the departures catch up with `now`, but never more than a *credit* behind it, so
//! that an idle sender cannot save up an unbounded burst.
//!
//! The credit has two parts:
//! - the burst quantum: max(2 packets, 1 ms at the rate) capped at 10 packets (quinn caps
//!   bursts at 2 ms of window and 10–256 datagrams; quiche allows 10 after idle, then 2),
//!   a single packet below 1.2 Mbit/s, where one packet is already ~10 ms of queue;
//! - the driver's wake-up lateness. A driver sleeps until the release time the transport
//!   asked for and wakes late: tokio's timer wheel rounds to milliseconds and wakes 0.05–2
//!   ms after the deadline, a timerfd tens of microseconds. Whatever the pacer cannot send
//!   for the time it was asleep past its release time is lost for good if the credit is
//!   smaller than that lateness, and the flow is then capped at about one quantum per
//!   wake-up, whatever the path (with tokio's timer, ~1 packet/ms: BBR gets 11 Mbit/s of a
//!   20 Mbit/s path on real sockets, and the congestion controller measures the pacer, not
//!   the path). So the pacer measures the lateness of the wake-ups it asked for (a windowed
//!   maximum) and lets the credit cover it; a driver may also declare its timer's lateness
//!   up front ([`crate::TransportConfig::wake_lateness`]) so the first wake-ups of a flow
//!   are covered too.
//!
//! The credit is capped ([`credit_cap`]) at a quarter of the congestion window and at half
//! the path's bandwidth-delay product at the pacing rate: a driver with a coarse timer, or
//! one starved of CPU, on a fast, short path (a gigabit LAN with a switch's 1-BDP buffer)
//! would otherwise release milliseconds of line rate at once and overflow the queue. There
//! the rate is lower than the path's, which is the lesser harm; the real fix is a finer
//! timer (and a CPU) for the driver.
//!
//! Requests and PTO probes bypass the pacer; the controller's rate drives it; no pacing when
//! the controller gives no rate.

use std::time::Duration;

use super::cc::{Controller, MAX_PACKET};
use super::minmax::MinMax;
use super::rtt::RttEstimator;
use crate::Timestamp;

/// Below this rate a burst is a single packet (quiche gcongestion/pacer.rs: 1.2 Mbit/s).
const SINGLE_PACKET_BELOW: u64 = 1_200_000 / 8;
/// Burst bounds in packets (docs/transport.md §3.7).
const MIN_BURST: u64 = 2;
const MAX_BURST: u64 = 10;
/// Burst length in time at the pacing rate.
const BURST_TIME: Duration = Duration::from_millis(1);
/// How long a measured wake-up lateness is remembered: long enough to span many wake-ups
/// (a timer's lateness varies with the phase of its grain from one to the next), short
/// enough to forget a scheduling hiccup within a second.
const LATENESS_WINDOW: Duration = Duration::from_secs(1);
/// Largest lateness believed, so one stall of the process does not turn into a burst of
/// seconds (the credit is capped as well).
const MAX_LATENESS: Duration = Duration::from_millis(50);
/// The credit may be at most this fraction (1/n) of the congestion window.
const CREDIT_WINDOW_DIVISOR: u64 = 4;
/// The credit may be at most this fraction (1/n) of the bandwidth-delay product at the
/// pacing rate: docs/design.md's shallowest buffer is one BDP (lan), and a burst of half of it
/// leaves room for the queue already standing. Measured on real sockets through the link
/// emulator (lan, 1 Gbit/s, 62.5 kB buffer, 256 MiB): with the credit at a quarter of a
/// window that BBR's ack-delay allowance had grown to 0.8–1.1 MB, a sender whose wake-ups
/// ran 2–3 ms late (two cores shared with the receiver and the emulator) sent 200-packet
/// bursts, and 13.5 % of its packets were resent.
const CREDIT_BDP_DIVISOR: u64 = 2;

/// The largest credit the pacer may give at `rate` bytes/s: a quarter of the congestion
/// `window` and half of `rate × min_rtt` (the bandwidth-delay product as the pacer sees
/// it), once a minimum RTT is known.
pub(crate) fn credit_cap(window: u64, rate: Option<u64>, min_rtt: Option<Duration>) -> u64 {
    let by_window = window / CREDIT_WINDOW_DIVISOR;
    match (rate, min_rtt) {
        (Some(rate), Some(min_rtt)) => {
            let bdp = u64::try_from(u128::from(rate) * min_rtt.as_micros() / 1_000_000)
                .unwrap_or(u64::MAX);
            by_window.min(bdp / CREDIT_BDP_DIVISOR)
        }
        _ => by_window,
    }
}

/// The pacer.
#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    /// When the next packet may leave, in nanoseconds on the `Timestamp` clock: at a
    /// gigabit a packet's time is 11 µs, and whole microseconds would pace ~9 % fast.
    next_departure_ns: u64,
    /// The release time of a packet the pacer held back, i.e. the wake-up the driver was
    /// asked for; the next send measures how late it came. `Timestamp::MAX` when none was
    /// asked for (no send is ever later than it). Not an `Option`: the payload of `None` is
    /// uninitialised memory that optimised code may read before the tag decides, which
    /// valgrind reports in every C client of the library (ffi/tests run under it).
    asked_wake: Timestamp,
    /// Windowed maximum of measured wake-up lateness, µs.
    lateness: MinMax,
    /// When the last lateness sample was taken.
    last_sample_at: Option<Timestamp>,
    /// Lateness the driver declared for its timer.
    declared_lateness: Duration,
}

impl Default for Pacer {
    fn default() -> Self {
        Self::new(Duration::ZERO)
    }
}

/// The rate the pacer holds sends to: the controller's, on every path. Short paths are
/// paced too (docs/transport.md §3.7): unpaced, a gigabit LAN's whole window leaves in one
/// burst and overflows a switch's shallow buffer (on real sockets, ~30 % of packets resent
/// through a 62.5 kB queue). Pacing costs no throughput on loopback even with a driver
/// timer of millisecond grain, because the credit covers how late the wake-ups run.
pub(super) fn pacing_rate(cc: &dyn Controller, rtt: &RttEstimator) -> Option<u64> {
    cc.pacing_rate(rtt)
}

/// Burst size in packets at `rate` bytes/s.
pub(crate) fn quantum_packets(rate: u64) -> u64 {
    if rate < SINGLE_PACKET_BELOW {
        return 1;
    }
    let one_ms = rate * BURST_TIME.as_micros() as u64 / 1_000_000;
    (one_ms / MAX_PACKET).clamp(MIN_BURST, MAX_BURST)
}

/// Nanoseconds `bytes` take at `rate` bytes/s.
fn transmit_ns(bytes: u64, rate: u64) -> u64 {
    u64::try_from(u128::from(bytes) * 1_000_000_000 / u128::from(rate.max(1))).unwrap_or(u64::MAX)
}

fn to_ns(t: Timestamp) -> u64 {
    t.as_micros().saturating_mul(1000)
}

impl Pacer {
    /// A pacer for a driver whose wake-ups run up to `declared_lateness` late.
    pub(crate) fn new(declared_lateness: Duration) -> Self {
        Self {
            next_departure_ns: 0,
            asked_wake: Timestamp::MAX,
            lateness: MinMax::new_max(LATENESS_WINDOW.as_micros() as u64),
            last_sample_at: None,
            declared_lateness: declared_lateness.min(MAX_LATENESS),
        }
    }

    /// When the next packet may leave (`None` rate = now).
    pub(crate) fn release_time(&self, rate: Option<u64>) -> Timestamp {
        match rate {
            None => Timestamp::ZERO,
            Some(_) => Timestamp::from_micros(self.next_departure_ns.div_ceil(1000)),
        }
    }

    /// True if a packet may leave at `now`.
    pub(crate) fn can_send(&self, now: Timestamp, rate: Option<u64>) -> bool {
        self.release_time(rate) <= now
    }

    /// A ready packet was held back: the driver will be asked to wake at the release time.
    pub(crate) fn on_held_back(&mut self) {
        self.asked_wake = Timestamp::from_micros(self.next_departure_ns.div_ceil(1000));
    }

    /// The lateness the credit covers: the larger of the declared and the measured one.
    pub(crate) fn wake_lateness(&self, now: Timestamp) -> Duration {
        // The filter only ages on a new sample; with none for a whole window, what it holds
        // has expired.
        let fresh = self
            .last_sample_at
            .is_some_and(|t| now.saturating_duration_since(t) <= LATENESS_WINDOW);
        let measured = match self.lateness.get() {
            Some(us) if fresh => Duration::from_micros(us),
            _ => Duration::ZERO,
        };
        measured.max(self.declared_lateness)
    }

    /// The lateness the credit covered when last measured (for statistics).
    pub(crate) fn last_wake_lateness(&self) -> Duration {
        let measured = self
            .lateness
            .get()
            .map_or(Duration::ZERO, Duration::from_micros);
        measured.max(self.declared_lateness)
    }

    /// Records a departure of `bytes` at `now`; the credit is at most `credit_cap` bytes
    /// ([`credit_cap`]), never less than one burst.
    pub(crate) fn on_sent(
        &mut self,
        now: Timestamp,
        bytes: u64,
        rate: Option<u64>,
        credit_cap: u64,
    ) {
        let asked = std::mem::replace(&mut self.asked_wake, Timestamp::MAX);
        if now > asked {
            let late = (now - asked).min(MAX_LATENESS);
            self.lateness
                .update(now.as_micros(), late.as_micros() as u64);
            self.last_sample_at = Some(now);
        }
        self.charge(now, bytes, rate, credit_cap);
    }

    /// Advances the departures by `bytes` sent at `now` outside the pacer's own schedule
    /// (a lossy datagram, which leaves at once: `Transport::on_lossy_sent`), without taking a
    /// wake-up lateness sample: that send answered no wake-up the pacer asked for.
    pub(crate) fn charge(
        &mut self,
        now: Timestamp,
        bytes: u64,
        rate: Option<u64>,
        credit_cap: u64,
    ) {
        let Some(rate) = rate else {
            self.next_departure_ns = to_ns(now);
            return;
        };
        let burst = (quantum_packets(rate) - 1) * MAX_PACKET;
        let late =
            u64::try_from(u128::from(rate) * self.wake_lateness(now).as_micros() / 1_000_000)
                .unwrap_or(u64::MAX);
        let cap = credit_cap.max(burst);
        let credit = transmit_ns(burst.max(late.min(cap)), rate);
        let base = self
            .next_departure_ns
            .max(to_ns(now).saturating_sub(credit));
        self.next_departure_ns = base.saturating_add(transmit_ns(bytes, rate));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cap large enough not to limit the credit.
    const BIG_WINDOW: u64 = 1 << 30;

    /// Sends full packets at `rate` for `span` with a driver that wakes `late` after each
    /// release time it is given; returns the rate achieved, bytes per second.
    fn achieved_rate(mut p: Pacer, rate: u64, span: Duration, late: Duration) -> f64 {
        let mut now = Timestamp::from_secs(1);
        let start = now;
        let mut sent = 0u64;
        while now < start + span {
            if p.can_send(now, Some(rate)) {
                p.on_sent(now, MAX_PACKET, Some(rate), BIG_WINDOW);
                sent += MAX_PACKET;
            } else {
                p.on_held_back();
                now = p.release_time(Some(rate)) + late;
            }
        }
        sent as f64 / (now - start).as_secs_f64()
    }

    /// Lossy bytes charged to the pacer take their share of the rate: the paced sends
    /// get the rest, and a charge takes no wake-up lateness sample.
    #[test]
    fn charged_lossy_bytes_leave_the_paced_sends_the_rest() {
        let rate = 1_250_000; // 10 Mbit/s
        let lossy_every = Duration::from_millis(20);
        let lossy_bytes = 5_000; // 250 kB/s: a fifth of the rate
        let mut p = Pacer::default();
        let start = Timestamp::from_secs(1);
        let mut now = start;
        let mut next_lossy = start;
        let mut paced = 0u64;
        while now < start + Duration::from_secs(2) {
            if now >= next_lossy {
                p.charge(now, lossy_bytes, Some(rate), BIG_WINDOW);
                next_lossy += lossy_every;
            }
            if p.can_send(now, Some(rate)) {
                p.on_sent(now, MAX_PACKET, Some(rate), BIG_WINDOW);
                paced += MAX_PACKET;
            } else {
                p.on_held_back();
                now = p.release_time(Some(rate)).min(next_lossy);
            }
        }
        let achieved = paced as f64 / (now - start).as_secs_f64();
        let expected = (rate - 250_000) as f64;
        let err = (achieved - expected).abs() / expected;
        assert!(
            err < 0.03,
            "paced {achieved:.0} B/s, expected {expected:.0}"
        );
        assert_eq!(p.last_wake_lateness(), Duration::ZERO);
    }

    #[test]
    fn paced_sends_match_the_rate() {
        let rate = 1_250_000; // 10 Mbit/s
        let achieved = achieved_rate(
            Pacer::default(),
            rate,
            Duration::from_secs(1),
            Duration::ZERO,
        );
        let err = (achieved - rate as f64).abs() / rate as f64;
        assert!(err < 0.02, "achieved {achieved:.0} B/s of {rate}");
    }

    #[test]
    fn gigabit_pacing_keeps_sub_microsecond_packet_times() {
        // 1373 bytes at 125 MB/s take 10.98 µs: counted in whole microseconds the pacer
        // would release 9 % above its rate.
        let rate = 125_000_000;
        let span = Duration::from_millis(100);
        let achieved = achieved_rate(Pacer::default(), rate, span, Duration::ZERO);
        let err = (achieved - rate as f64).abs() / rate as f64;
        assert!(err < 0.01, "achieved {achieved:.0} B/s of {rate}");
    }

    #[test]
    fn idle_credit_is_one_burst() {
        let rate = 12_500_000; // 100 Mbit/s: 1 ms = 12.5 kB ≈ 9 packets
        let mut p = Pacer::default();
        let now = Timestamp::from_secs(10);
        let mut n = 0;
        while p.can_send(now, Some(rate)) {
            p.on_sent(now, MAX_PACKET, Some(rate), BIG_WINDOW);
            n += 1;
        }
        assert_eq!(n, quantum_packets(rate));
        assert_eq!(quantum_packets(100_000), 1);
    }

    #[test]
    fn the_rate_holds_when_every_wakeup_is_a_millisecond_late() {
        // 20 Mbit/s: a quantum is 2 packets, 1.1 ms of rate. A driver whose timer wakes
        // 1 ms late gets ~2 packets per 2 ms unless the credit covers the lateness.
        let rate = 2_500_000;
        let achieved = achieved_rate(
            Pacer::default(),
            rate,
            Duration::from_secs(1),
            Duration::from_millis(1),
        );
        assert!(
            (achieved - rate as f64).abs() / (rate as f64) < 0.03,
            "achieved {achieved:.0} B/s of {rate}"
        );
    }

    #[test]
    fn a_declared_lateness_covers_the_first_wakeup() {
        let rate = 2_500_000;
        let late = Duration::from_millis(2);
        let mut p = Pacer::new(late);
        let mut now = Timestamp::from_secs(1);
        p.on_sent(now, MAX_PACKET, Some(rate), BIG_WINDOW);
        // Held back once, woken 2 ms late: everything owed since then may leave at once.
        p.on_held_back();
        now = p.release_time(Some(rate)) + late;
        let mut n = 0;
        while p.can_send(now, Some(rate)) {
            p.on_sent(now, MAX_PACKET, Some(rate), BIG_WINDOW);
            n += 1;
        }
        // 2 ms + one packet time at 2.5 MB/s ≈ 4.6 packets owed.
        assert!(n >= 4, "only {n} packets after a 2 ms late wake-up");
    }

    #[test]
    fn the_credit_never_exceeds_a_quarter_of_the_window_or_half_the_bdp() {
        let rate = 125_000_000; // 1 Gbit/s
        let window = 200_000;
        let mut p = Pacer::new(Duration::from_millis(2)); // 250 kB of credit at this rate
        let now = Timestamp::from_secs(5);
        let mut bytes = 0;
        let cap = credit_cap(window, Some(rate), None);
        while p.can_send(now, Some(rate)) {
            p.on_sent(now, MAX_PACKET, Some(rate), cap);
            bytes += MAX_PACKET;
        }
        assert!(bytes <= window / 4 + MAX_PACKET, "burst of {bytes} bytes");
        // Half a BDP, when that is smaller: 0.5 ms at a gigabit is 62.5 kB.
        let lan = credit_cap(window, Some(rate), Some(Duration::from_micros(500)));
        assert_eq!(lan, 31_250);
    }

    #[test]
    fn measured_lateness_is_forgotten_after_its_window() {
        let mut p = Pacer::default();
        let rate = 2_500_000;
        let now = Timestamp::from_secs(1);
        p.on_sent(now, MAX_PACKET, Some(rate), BIG_WINDOW);
        p.on_held_back();
        let late_wake = p.release_time(Some(rate)) + Duration::from_millis(3);
        p.on_sent(late_wake, MAX_PACKET, Some(rate), BIG_WINDOW);
        assert_eq!(p.wake_lateness(late_wake), Duration::from_millis(3));
        let later = late_wake + LATENESS_WINDOW + Duration::from_millis(1);
        assert_eq!(p.wake_lateness(later), Duration::ZERO);
    }
}
