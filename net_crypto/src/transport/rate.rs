//! Rate counters that divide by the time they have actually been collecting
//! (docs/design.md lesson 2, docs/transport.md §3.8; rakshasa's libtorrent, `Rate::rate()` in
//! `src/torrent/rate.cc`).
//!
//! libtorrent's 30-second counter divides by its whole span, so one second into a
//! connection it reads a thirtieth of the true rate. Here the divisor is
//! `clamp(now − created_at, min(one bucket, 100 ms), window)`: a young counter reads the
//! rate it has seen, an old one the rate over its window. Nothing in the workspace reads
//! one yet: the type is exported (`net_crypto::transport::RateCounter`) for statistics.
//! Congestion control uses per-acknowledgement delivery-rate samples instead, and the
//! legacy model computes its receive rate on c-toxcore's 50 ms ticks, as c-toxcore does.

use std::time::Duration;

use crate::Timestamp;

/// Buckets per window: 10 buckets of 100 ms for a 1 s counter (docs/transport.md §3.8).
const BUCKETS: usize = 10;
/// Smallest divisor: a counter younger than this reads amount / 100 ms rather than
/// dividing by (almost) zero.
const MIN_ELAPSED_US: u64 = 100_000;

/// Bytes (or packets) per unit time over a sliding window of [`BUCKETS`] buckets.
#[derive(Debug, Clone)]
pub struct RateCounter {
    created_at: Timestamp,
    bucket_len: u64,
    /// Index (in bucket units since `created_at`) of the newest bucket.
    head: u64,
    buckets: [u64; BUCKETS],
}

impl RateCounter {
    /// A counter over `window` (split into 10 buckets), started at `now`.
    pub fn new(now: Timestamp, window: Duration) -> Self {
        let w = u64::try_from(window.as_micros())
            .unwrap_or(u64::MAX)
            .max(BUCKETS as u64);
        Self {
            created_at: now,
            bucket_len: w / BUCKETS as u64,
            head: 0,
            buckets: [0; BUCKETS],
        }
    }

    fn index(&self, now: Timestamp) -> u64 {
        now.as_micros().saturating_sub(self.created_at.as_micros()) / self.bucket_len
    }

    /// Moves the head to `now`'s bucket, clearing the buckets it skips.
    fn advance(&mut self, now: Timestamp) {
        let idx = self.index(now);
        if idx <= self.head {
            return;
        }
        let steps = (idx - self.head).min(BUCKETS as u64);
        for k in 1..=steps {
            self.buckets[((self.head + k) % BUCKETS as u64) as usize] = 0;
        }
        self.head = idx;
    }

    /// Counts `amount` at `now`.
    pub fn add(&mut self, now: Timestamp, amount: u64) {
        self.advance(now);
        let slot = (self.head % BUCKETS as u64) as usize;
        self.buckets[slot] = self.buckets[slot].saturating_add(amount);
    }

    /// Units per second at `now`: the amount in the window divided by the time the counter
    /// has really been collecting, clamped to [min(one bucket, 100 ms), the window].
    pub fn rate(&self, now: Timestamp) -> u64 {
        let idx = self.index(now);
        // Sum the buckets still inside the window ending at `now`'s bucket.
        let mut sum: u64 = 0;
        for k in 0..BUCKETS as u64 {
            let Some(b) = idx.checked_sub(k) else { break };
            if b > self.head || self.head - b >= BUCKETS as u64 {
                continue;
            }
            sum = sum.saturating_add(self.buckets[(b % BUCKETS as u64) as usize]);
        }
        let window = self.bucket_len * BUCKETS as u64;
        let age = now.as_micros().saturating_sub(self.created_at.as_micros());
        // Full window once old: the oldest bucket is partly outside, so count whole buckets
        // plus the elapsed part of the current one.
        let elapsed = if age >= window {
            window - self.bucket_len + age % self.bucket_len
        } else {
            age
        }
        .clamp(self.bucket_len.min(MIN_ELAPSED_US), window);
        ((sum as u128 * 1_000_000) / elapsed as u128).min(u64::MAX as u128) as u64
    }

    /// True once the counter has collected for a whole window.
    pub fn is_warm(&self, now: Timestamp) -> bool {
        now.as_micros().saturating_sub(self.created_at.as_micros())
            >= self.bucket_len * BUCKETS as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `rate` units/s in 1 ms steps from `from` for `dur`.
    fn feed(c: &mut RateCounter, from: Timestamp, dur: Duration, rate: u64) -> Timestamp {
        let mut t = from;
        let end = from + dur;
        while t < end {
            c.add(t, rate / 1000);
            t += Duration::from_millis(1);
        }
        t
    }

    #[test]
    fn counter_fed_at_r_for_one_second_reads_r_within_5_percent() {
        for window in [
            Duration::from_secs(1),
            Duration::from_secs(5),
            Duration::from_secs(30),
        ] {
            let mut c = RateCounter::new(Timestamp::ZERO, window);
            let r = 1_250_000;
            let t = feed(&mut c, Timestamp::ZERO, Duration::from_secs(1), r);
            let read = c.rate(t);
            let err = (read as f64 - r as f64).abs() / r as f64;
            assert!(err < 0.05, "window {window:?}: read {read}, want {r}");
        }
    }

    #[test]
    fn young_counter_is_not_diluted_by_its_span() {
        let mut c = RateCounter::new(Timestamp::ZERO, Duration::from_secs(30));
        let t = feed(
            &mut c,
            Timestamp::ZERO,
            Duration::from_millis(300),
            1_000_000,
        );
        let read = c.rate(t);
        assert!(read > 900_000 && read < 1_100_000, "{read}");
        assert!(!c.is_warm(t));
    }

    #[test]
    fn old_samples_leave_the_window() {
        let mut c = RateCounter::new(Timestamp::ZERO, Duration::from_secs(1));
        let t = feed(&mut c, Timestamp::ZERO, Duration::from_secs(2), 1_000_000);
        // Silence for 2 s: the rate must fall to zero.
        assert_eq!(c.rate(t + Duration::from_secs(2)), 0);
        // Steady state after a long run reads the rate.
        let t2 = feed(
            &mut c,
            t + Duration::from_secs(2),
            Duration::from_secs(3),
            500_000,
        );
        let read = c.rate(t2);
        assert!((read as i64 - 500_000).abs() < 25_000, "{read}");
    }
}
