//! How long the layer above leaves between two calls for bulk data (`send_budget`), and what
//! the sender must hold and release at each call to keep its rate across that gap.
//!
//! A client of tox.h sleeps `tox_iteration_interval()` whole milliseconds between two
//! `tox_iterate` calls, and wakes a little later still: 1.2–1.4 ms apart on loopback under
//! load (ffi-bench's loop table). The bulk budget (one pacing quantum, 1 ms at the rate) and
//! the pacer's credit (capped at half the bandwidth-delay product, a few microseconds of
//! data on loopback) then let out about one quantum per call, which is less than the rate
//! asked for: BBR's bandwidth samples, taken with the budget used up and so not
//! application-limited, measure that cap, the next rate is lower again, and the flow
//! settles where a call lets out its two-packet floor. Measured with ffi-bench's C client
//! on loopback (1.35 ms calls): 1.4 MiB/s to c-toxcore and 1.8 MiB/s to rustox, against
//! 16.5 MiB/s between two c-toxcore clients in the same minute.
//!
//! So the gaps between calls are measured (a windowed maximum, as the pacer measures its
//! wake-ups' lateness), counted only while the congestion window had room (a
//! window-limited sender waits for acknowledgements, not for its driver), and the budget
//! and the pacer's credit cover one gap at the pacing rate — the credit only while the
//! path has dropped nothing for [`LOSS_QUIET`]: a burst of one gap at the rate into a
//! buffer shallower than that burst loses packets, and then the shallow buffer's cap
//! (pacer.rs) holds again. Toward a prompt acknowledger the cover is bounded
//! ([`DriverGap::cover_bytes`]); without it two C clients on the library moved 2.5 MiB/s on
//! loopback even at load 1.3 (ffi-bench, 64 MiB, 2026-12-07 23:02 UTC), with it 104–125.

use std::time::Duration;

use super::minmax::MinMax;
use crate::Timestamp;

/// How long a measured gap is remembered: many calls, and a scheduling hiccup is forgotten
/// within a second (the pacer's lateness window).
const GAP_WINDOW: Duration = Duration::from_secs(1);
/// Largest gap believed: c-toxcore's clients sleep 1–4 ms during a transfer (ffi-bench's
/// interval shares); a longer one is a stalled process, whose burst would only flood.
const MAX_GAP: Duration = Duration::from_millis(5);
/// How long after a declared loss the pacer's credit stays at the shallow-buffer cap.
const LOSS_QUIET: Duration = Duration::from_secs(1);
/// The cover in full only toward a peer whose requests come further apart than this
/// (cc/bbr/standing_queue.rs marks a slow acknowledger, c-toxcore, at the same cadence):
/// between its requests nothing
/// but the driver's own loop moves the sender, and the window covers the cadence, so the
/// driver's release per call is all that holds it. A prompt acknowledger's requests keep
/// the flight, and with it the rate, bounded by the window; on a link of unbounded rate (a
/// test's instant delivery) an unbounded credit fed its own bandwidth samples without end.
const SLOW_ACKER_CADENCE: Duration = Duration::from_millis(30);
/// Toward a prompt acknowledger the cover is at most this fraction of the congestion
/// window: the pacer's own credit bound (pacer.rs, `CREDIT_WINDOW_DIVISOR`).
const PROMPT_WINDOW_DIVISOR: u64 = 4;

/// The measured gaps of one session's driver.
#[derive(Debug, Clone)]
pub(crate) struct DriverGap {
    /// The previous call, and whether the window had room then.
    last_call: Option<(Timestamp, bool)>,
    /// Windowed maximum gap, µs.
    max_gap: MinMax,
    last_sample_at: Option<Timestamp>,
    last_loss_at: Option<Timestamp>,
}

impl DriverGap {
    pub(crate) fn new() -> Self {
        Self {
            last_call: None,
            max_gap: MinMax::new_max(GAP_WINDOW.as_micros() as u64),
            last_sample_at: None,
            last_loss_at: None,
        }
    }

    /// The layer above asked for a budget at `now`; `room`: the congestion window had room.
    pub(crate) fn on_call(&mut self, now: Timestamp, room: bool) {
        if let Some((prev, true)) = self.last_call {
            if now > prev {
                let gap = (now - prev).min(MAX_GAP);
                self.max_gap.update(now.as_micros(), gap.as_micros() as u64);
                self.last_sample_at = Some(now);
            }
        }
        if self.last_call.is_none_or(|(prev, _)| now > prev) {
            self.last_call = Some((now, room));
        }
    }

    /// The gap to cover at `now`: zero once no sample was taken for a whole window.
    pub(crate) fn gap(&self, now: Timestamp) -> Duration {
        let fresh = self
            .last_sample_at
            .is_some_and(|t| now.saturating_duration_since(t) <= GAP_WINDOW);
        match self.max_gap.get() {
            Some(us) if fresh => Duration::from_micros(us),
            _ => Duration::ZERO,
        }
    }

    /// Packets declared lost at `now`.
    pub(crate) fn on_loss(&mut self, now: Timestamp) {
        self.last_loss_at = Some(now);
    }

    /// Bytes at `path.rate` that one gap takes: what the bulk queue must hold at a call.
    /// Toward a slow acknowledger (`path.cadence`: its request cadence) all of it. Toward a
    /// prompt one at most a quarter of the congestion window (the pacer's own credit
    /// bound), and only as much as the driver's wake-ups come late for the pacer
    /// (`path.lateness`) at the rate: a driver that wakes when the pacer asks (the
    /// simulator's, a node's own loop) gets none, and on a path whose acknowledgements come
    /// back at once (a test's instant delivery: a burst is acknowledged as one and its
    /// bandwidth sample is the burst over next to no time) the cover stays under what the
    /// samples' intervals span, so it cannot feed its own samples (without the RTT bound on
    /// the lateness net_crypto's transport_lossy_priority ran to 10 GB/s and out of
    /// memory). A tox.h client sleeps whole milliseconds whatever the pacer asks, and its
    /// peer, looping the same way, acknowledges milliseconds later.
    pub(crate) fn cover_bytes(&self, now: Timestamp, path: &CoverInputs) -> u64 {
        let at_rate = |d: Duration| {
            u64::try_from(u128::from(path.rate) * d.as_micros() / 1_000_000).unwrap_or(u64::MAX)
        };
        let bytes = at_rate(self.gap(now));
        if path.cadence.is_none_or(|c| c <= SLOW_ACKER_CADENCE) {
            bytes
                .min(path.window / PROMPT_WINDOW_DIVISOR)
                .min(at_rate(path.lateness))
        } else {
            bytes
        }
    }

    /// The pacer's credit for one gap ([`Self::cover_bytes`]), while the path drops
    /// nothing: zero within [`LOSS_QUIET`] of a declared loss.
    pub(crate) fn credit_bytes(&self, now: Timestamp, path: &CoverInputs) -> u64 {
        let quiet = self
            .last_loss_at
            .is_none_or(|t| now.saturating_duration_since(t) >= LOSS_QUIET);
        if quiet {
            self.cover_bytes(now, path)
        } else {
            0
        }
    }
}

/// What the session knows of its path at a call, as [`DriverGap::cover_bytes`] bounds the
/// cover by it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CoverInputs {
    /// The pacing rate, bytes/s.
    pub rate: u64,
    /// The peer's request cadence, when measured (ack_timing.rs).
    pub cadence: Option<Duration>,
    /// The congestion window, bytes.
    pub window: u64,
    /// How late the driver wakes for the pacer (pacer.rs), at most the smoothed RTT.
    pub lateness: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// c-toxcore's request cadence.
    const C: Option<Duration> = Some(Duration::from_millis(50));
    /// A window that does not bound the cover.
    const W: u64 = 1 << 30;
    /// A wake-up lateness that does not bound it.
    const R: Duration = Duration::from_millis(5);

    fn at(rate: u64, cadence: Option<Duration>, window: u64, lateness: Duration) -> CoverInputs {
        CoverInputs {
            rate,
            cadence,
            window,
            lateness,
        }
    }

    fn ms(t: f64) -> Timestamp {
        Timestamp::from_micros((t * 1000.0) as u64)
    }

    #[test]
    fn the_gap_is_the_largest_recent_one_with_room_in_the_window() {
        let mut g = DriverGap::new();
        let mut t = 1000.0;
        for _ in 0..100 {
            g.on_call(ms(t), true);
            // Several calls in one iteration: only the gap between iterations counts.
            g.on_call(ms(t + 0.01), true);
            t += 1.35;
        }
        let gap = g.gap(ms(t));
        assert!(gap >= Duration::from_micros(1300), "{gap:?}");
        assert!(gap <= Duration::from_micros(1360), "{gap:?}");
        // 50 MB/s over 1.34 ms: ~67 kB to hold at each call.
        let cover = g.cover_bytes(ms(t), &at(50_000_000, C, W, R));
        assert!((65_000..=68_000).contains(&cover), "{cover}");
        // Toward a prompt acknowledger (ours: every 8 packets or 25 ms) the same while a
        // quarter of the window holds it, and never more.
        let prompt = Some(Duration::from_millis(2));
        assert_eq!(g.cover_bytes(ms(t), &at(50_000_000, prompt, W, R)), cover);
        assert_eq!(
            g.cover_bytes(ms(t), &at(50_000_000, prompt, 100_000, R)),
            25_000
        );
        assert_eq!(
            g.credit_bytes(ms(t), &at(50_000_000, None, 40_000, R)),
            10_000
        );
        // Nor more than the driver's lateness for the pacer at the rate: 50 MB/s × 0.4 ms;
        // a driver that wakes when the pacer asks gets nothing.
        let late = Duration::from_micros(400);
        assert_eq!(
            g.cover_bytes(ms(t), &at(50_000_000, prompt, W, late)),
            20_000
        );
        assert_eq!(
            g.cover_bytes(ms(t), &at(50_000_000, prompt, W, Duration::ZERO)),
            0
        );
        assert_eq!(
            g.cover_bytes(ms(t), &at(50_000_000, C, W, Duration::ZERO)),
            cover
        );
        // Toward a slow acknowledger the window does not bound it.
        assert_eq!(g.cover_bytes(ms(t), &at(50_000_000, C, 100_000, R)), cover);
    }

    #[test]
    fn window_limited_waits_and_stalls_do_not_count_in_full() {
        let mut g = DriverGap::new();
        g.on_call(ms(1000.0), false);
        g.on_call(ms(1040.0), true); // waited for an ack: no sample
        assert_eq!(g.gap(ms(1040.0)), Duration::ZERO);
        g.on_call(ms(1240.0), true); // a stall: believed up to MAX_GAP
        assert_eq!(g.gap(ms(1240.0)), MAX_GAP);
        // Forgotten after a window without samples.
        assert_eq!(g.gap(ms(2300.0)), Duration::ZERO);
    }

    #[test]
    fn a_loss_holds_the_credit_back_for_a_while() {
        let mut g = DriverGap::new();
        g.on_call(ms(1000.0), true);
        g.on_call(ms(1002.0), true);
        assert_eq!(g.credit_bytes(ms(1002.0), &at(1_000_000, C, W, R)), 2_000);
        g.on_loss(ms(1002.0));
        assert_eq!(g.credit_bytes(ms(1500.0), &at(1_000_000, C, W, R)), 0);
        assert_eq!(
            g.cover_bytes(ms(1500.0), &at(1_000_000, C, W, R)),
            2_000,
            "the queue still covers it"
        );
        g.on_call(ms(2003.0), true); // 1 s after the last call: believed as MAX_GAP
        assert_eq!(g.credit_bytes(ms(2003.0), &at(1_000_000, C, W, R)), 5_000);
    }
}
