//! A token bucket in virtual time, the one rate limiter of the tree: the endpoint's per-source
//! and key-agreement limits (admission.rs; c-toxcore v0.2.22+ allows 10 UDP cookie requests in
//! a burst and one more per 100 ms, docs/protocol.md §2.2), core's DHT and onion key-agreement
//! budgets, and the per-source request rate of core's DHT and onion source guard
//! (core/src/dht/source_guard.rs). Answering a request from an unknown key costs an X25519; a
//! bucket caps what a flood of them costs.
//!
//! A bucket is its state only (tokens and when they were last refilled, 16 bytes); its
//! [`BucketLimit`] — burst and [`Refill`] — is passed to each call, so a table of many buckets
//! with one limit (the guard's slots, the endpoint's sources) stores the limit once.

use std::time::Duration;

use crate::Timestamp;

/// How an empty bucket fills again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Refill {
    /// One whole token per interval; the part of an interval not yet elapsed carries over
    /// (the endpoint's limits and the key-agreement budgets).
    PerInterval(Duration),
    /// This many tokens a second, fractions kept (the source guard's request rate).
    PerSecond(f64),
}

/// Up to `burst` tokens at once, refilled by `refill`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketLimit {
    /// Tokens a full bucket holds.
    pub burst: f64,
    /// How it fills again.
    pub refill: Refill,
}

impl BucketLimit {
    /// Up to `burst` at once, then one per `interval`.
    pub fn per_interval(burst: u32, interval: Duration) -> Self {
        BucketLimit {
            burst: f64::from(burst),
            refill: Refill::PerInterval(interval),
        }
    }

    /// Up to `burst` at once, refilled continuously at `per_second`.
    pub fn per_second(burst: f64, per_second: f64) -> Self {
        BucketLimit {
            burst,
            refill: Refill::PerSecond(per_second),
        }
    }
}

/// The state of one bucket; its limit is passed to each call (see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct TokenBucket {
    /// Whole tokens under [`Refill::PerInterval`], fractional under [`Refill::PerSecond`].
    tokens: f64,
    /// When the last whole token was added or the bucket was last full
    /// ([`Refill::PerInterval`]); when it was last refilled ([`Refill::PerSecond`]).
    refilled_at: Timestamp,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(now: Timestamp, limit: &BucketLimit) -> Self {
        TokenBucket {
            tokens: limit.burst,
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
    pub fn try_take(&mut self, now: Timestamp, limit: &BucketLimit) -> bool {
        match limit.refill {
            Refill::PerInterval(interval) => self.refill_intervals(now, limit.burst, interval),
            Refill::PerSecond(rate) => self.refill_continuously(now, limit.burst, rate),
        }
        if self.tokens < 1.0 {
            return false;
        }
        self.tokens -= 1.0;
        true
    }

    /// Adds one token per whole interval since `refilled_at`; what is left of an interval
    /// counts towards the next token. The tokens stay whole numbers.
    fn refill_intervals(&mut self, now: Timestamp, burst: f64, interval: Duration) {
        if self.tokens >= burst {
            self.refilled_at = now;
            return;
        }
        let interval_us = interval.as_micros().max(1);
        let elapsed_us = (now - self.refilled_at).as_micros();
        let new = elapsed_us / interval_us;
        if new == 0 {
            return;
        }
        let new = u32::try_from(new).unwrap_or(u32::MAX);
        self.tokens = (self.tokens + f64::from(new)).min(burst);
        if self.tokens >= burst {
            self.refilled_at = now;
        } else {
            self.refilled_at += interval.saturating_mul(new);
        }
    }

    /// Adds `rate` tokens per second since `refilled_at`, fractions kept; a `now` before it
    /// adds nothing.
    fn refill_continuously(&mut self, now: Timestamp, burst: f64, rate: f64) {
        let elapsed = now.saturating_duration_since(self.refilled_at);
        self.refilled_at = self.refilled_at.max(now);
        self.tokens = (self.tokens + elapsed.as_secs_f64() * rate).min(burst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_one_token_per_interval() {
        let t0 = Timestamp::from_secs(5);
        let limit = BucketLimit::per_interval(10, Duration::from_millis(100));
        let mut b = TokenBucket::new(t0, &limit);
        for _ in 0..10 {
            assert!(b.try_take(t0, &limit));
        }
        assert!(!b.try_take(t0, &limit));
        assert!(!b.try_take(t0 + Duration::from_millis(99), &limit));
        assert!(b.try_take(t0 + Duration::from_millis(100), &limit));
        assert!(!b.try_take(t0 + Duration::from_millis(150), &limit));
        assert!(b.try_take(t0 + Duration::from_millis(250), &limit));
        // A long pause refills to the burst, not beyond.
        let later = t0 + Duration::from_secs(60);
        for _ in 0..10 {
            assert!(b.try_take(later, &limit));
        }
        assert!(!b.try_take(later, &limit));
    }

    #[test]
    fn a_bucket_taken_from_all_the_time_gives_most_in() {
        let t0 = Timestamp::from_secs(1);
        let (burst, interval) = (7, Duration::from_micros(2_500));
        let limit = BucketLimit::per_interval(burst, interval);
        let mut b = TokenBucket::new(t0, &limit);
        let mut taken = 0u64;
        for step in 0..4_000u32 {
            let now = t0 + Duration::from_micros(u64::from(step) * 300);
            while b.try_take(now, &limit) {
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

    #[test]
    fn a_continuous_bucket_keeps_fractions() {
        let t0 = Timestamp::from_secs(1);
        let limit = BucketLimit::per_second(2.0, 4.0);
        let mut b = TokenBucket::new(t0, &limit);
        assert!(b.try_take(t0, &limit));
        assert!(b.try_take(t0, &limit));
        assert!(!b.try_take(t0, &limit));
        // A quarter second is one token; two eighths add up to it.
        assert!(!b.try_take(t0 + Duration::from_millis(125), &limit));
        assert!(b.try_take(t0 + Duration::from_millis(250), &limit));
        // A time before the last refill adds nothing and moves nothing back.
        assert!(!b.try_take(t0, &limit));
        assert!(b.try_take(t0 + Duration::from_millis(500), &limit));
    }
}
