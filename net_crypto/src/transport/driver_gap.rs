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
//! (pacer.rs) holds again.

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
/// Only toward a peer whose requests come further apart than this (cc/bbr/standing_queue.rs
/// marks a slow acknowledger, c-toxcore, at the same cadence): between its requests nothing
/// but the driver's own loop moves the sender, and the window covers the cadence, so the
/// driver's release per call is all that holds it. A prompt acknowledger's requests keep
/// the flight, and with it the rate, bounded by the window; on a link of unbounded rate (a
/// test's instant delivery) the credit fed its own bandwidth samples without end.
const SLOW_ACKER_CADENCE: Duration = Duration::from_millis(30);

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

    /// Bytes at `rate` that one gap takes: what the bulk queue must hold at a call; zero
    /// unless the peer acknowledges slowly (`cadence`: its request cadence).
    pub(crate) fn cover_bytes(&self, now: Timestamp, rate: u64, cadence: Option<Duration>) -> u64 {
        if cadence.is_none_or(|c| c <= SLOW_ACKER_CADENCE) {
            return 0;
        }
        let gap = self.gap(now);
        u64::try_from(u128::from(rate) * gap.as_micros() / 1_000_000).unwrap_or(u64::MAX)
    }

    /// The pacer's credit for one gap at `rate`, while the path drops nothing: zero within
    /// [`LOSS_QUIET`] of a declared loss.
    pub(crate) fn credit_bytes(&self, now: Timestamp, rate: u64, cadence: Option<Duration>) -> u64 {
        let quiet = self
            .last_loss_at
            .is_none_or(|t| now.saturating_duration_since(t) >= LOSS_QUIET);
        if quiet {
            self.cover_bytes(now, rate, cadence)
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// c-toxcore's request cadence.
    const C: Option<Duration> = Some(Duration::from_millis(50));

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
        let cover = g.cover_bytes(ms(t), 50_000_000, C);
        assert!((65_000..=68_000).contains(&cover), "{cover}");
        // Toward a prompt acknowledger (ours: every 8 packets or 25 ms), nothing.
        assert_eq!(
            g.cover_bytes(ms(t), 50_000_000, Some(Duration::from_millis(2))),
            0
        );
        assert_eq!(g.credit_bytes(ms(t), 50_000_000, None), 0);
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
        assert_eq!(g.credit_bytes(ms(1002.0), 1_000_000, C), 2_000);
        g.on_loss(ms(1002.0));
        assert_eq!(g.credit_bytes(ms(1500.0), 1_000_000, C), 0);
        assert_eq!(
            g.cover_bytes(ms(1500.0), 1_000_000, C),
            2_000,
            "the queue still covers it"
        );
        g.on_call(ms(2003.0), true); // 1 s after the last call: believed as MAX_GAP
        assert_eq!(g.credit_bytes(ms(2003.0), 1_000_000, C), 5_000);
    }
}
