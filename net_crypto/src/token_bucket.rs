//! A token bucket in virtual time: the endpoint's per-source and key-agreement limits
//! (admission.rs; c-toxcore v0.2.22+ allows 10 UDP cookie requests in a burst and one more
//! per 100 ms, docs/protocol.md §2.2), and core's DHT and onion key-agreement budgets. Answering
//! a request from an unknown key costs an X25519; a bucket caps what a flood of them costs.

use std::time::Duration;

use crate::Timestamp;

/// Up to `burst` events at once, then one per `interval`.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    burst: u32,
    interval: Duration,
    tokens: u32,
    /// When the last whole token was added (or the bucket was last full).
    refilled_at: Timestamp,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(now: Timestamp, burst: u32, interval: Duration) -> Self {
        TokenBucket {
            burst,
            interval,
            tokens: burst,
            refilled_at: now,
        }
    }

    /// The most tokens a bucket of `burst` and `interval` gives in `elapsed` from full: the
    /// burst, then one per whole interval. The bound a test of a limit holds its count to.
    pub fn most_in(burst: u32, interval: Duration, elapsed: Duration) -> u64 {
        let per_interval = elapsed.as_micros() / interval.as_micros().max(1);
        u64::from(burst).saturating_add(u64::try_from(per_interval).unwrap_or(u64::MAX))
    }

    /// Takes one token if there is one.
    pub fn try_take(&mut self, now: Timestamp) -> bool {
        self.refill(now);
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }

    fn refill(&mut self, now: Timestamp) {
        if self.tokens >= self.burst {
            self.refilled_at = now;
            return;
        }
        let interval_us = self.interval.as_micros().max(1);
        let elapsed_us = (now - self.refilled_at).as_micros();
        let new = elapsed_us / interval_us;
        if new == 0 {
            return;
        }
        let new = u32::try_from(new).unwrap_or(u32::MAX);
        self.tokens = self.tokens.saturating_add(new).min(self.burst);
        if self.tokens >= self.burst {
            self.refilled_at = now;
        } else {
            self.refilled_at += self.interval.saturating_mul(new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_one_token_per_interval() {
        let t0 = Timestamp::from_secs(5);
        let mut b = TokenBucket::new(t0, 10, Duration::from_millis(100));
        for _ in 0..10 {
            assert!(b.try_take(t0));
        }
        assert!(!b.try_take(t0));
        assert!(!b.try_take(t0 + Duration::from_millis(99)));
        assert!(b.try_take(t0 + Duration::from_millis(100)));
        assert!(!b.try_take(t0 + Duration::from_millis(150)));
        assert!(b.try_take(t0 + Duration::from_millis(250)));
        // A long pause refills to the burst, not beyond.
        let later = t0 + Duration::from_secs(60);
        for _ in 0..10 {
            assert!(b.try_take(later));
        }
        assert!(!b.try_take(later));
    }

    #[test]
    fn a_bucket_taken_from_all_the_time_gives_most_in() {
        let t0 = Timestamp::from_secs(1);
        let (burst, interval) = (7, Duration::from_micros(2_500));
        let mut b = TokenBucket::new(t0, burst, interval);
        let mut taken = 0u64;
        for step in 0..4_000u32 {
            let now = t0 + Duration::from_micros(u64::from(step) * 300);
            while b.try_take(now) {
                taken += 1;
            }
            let bound = TokenBucket::most_in(burst, interval, now - t0);
            assert!(
                taken <= bound,
                "{taken} taken by {:?}, {bound} allowed",
                now - t0
            );
            // Whole intervals are never lost: at most one short of the bound.
            assert!(taken + 1 >= bound, "{taken} taken, {bound} allowed");
        }
    }
}
