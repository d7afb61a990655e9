//! The budget of the key agreements that no cached key saves, for core's DHT and onion
//! layers, and their shared-key cache: net_crypto's [`KeyCache`] in c-toxcore's layout
//! (docs/protocol.md §1: 256 sets × 4 ways indexed by `pk[30]`, entries expire after
//! [`KEYS_TIMEOUT`]; see `net_crypto/src/key_cache.rs`).
//!
//! A flood of fresh keys from many (spoofed) sources passes every per-source limit, and no
//! cache saves its key agreements. A [`KeyBudget`] caps them for all sources together, as
//! net_crypto's admission does for cookie requests and handshakes:
//! [`WithinBudget::get_within`] takes a token only on a miss, so peers whose key is cached —
//! those we talk to — are never refused, however hard the budget is spent by others.

use rustox_net_crypto::crypto::{LowOrderPublicKey, PrecomputedKey, PublicKey};
use rustox_net_crypto::key_cache::AgreeError;
pub use rustox_net_crypto::key_cache::{KeyCache, KEYS_TIMEOUT};
use rustox_net_crypto::token_bucket::{BucketLimit, TokenBucket};
use rustox_net_crypto::Timestamp;
use std::time::Duration;

/// Key agreements that no cached key saves, all sources together: `burst` at once, then one
/// per `interval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyAgreementLimit {
    /// Agreements allowed at once.
    pub burst: u32,
    /// Then one per this interval.
    pub interval: Duration,
}

impl Default for KeyAgreementLimit {
    /// net_crypto's budget (`EndpointLimits::default`): a burst of 1000, then 1000 a second.
    /// The burst is what a network starting at once needs: in auto_tests' idle scenario (a
    /// node, 100 friends and 20 DHT nodes starting together) a burst of 100 kept the friends
    /// offline for 78 s instead of 18. A key agreement (X25519 and HSalsa20) took 73–90 µs on
    /// this project's VM, so a sustained flood of fresh keys costs each budgeted layer at most
    /// about 9 % of a core; honest strangers' keys arrive at a few a second on a client node.
    fn default() -> Self {
        KeyAgreementLimit {
            burst: 1000,
            interval: Duration::from_millis(1),
        }
    }
}

/// The budget of one layer (see the module docs); `None` as limit: unlimited.
#[derive(Debug, Clone)]
pub struct KeyBudget {
    limit: Option<KeyAgreementLimit>,
    /// Made full on first use, so that the budget needs no clock when it is created.
    bucket: Option<TokenBucket>,
    /// Key agreements refused.
    refused: u64,
}

impl KeyBudget {
    /// A full budget.
    pub fn new(limit: Option<KeyAgreementLimit>) -> Self {
        KeyBudget {
            limit,
            bucket: None,
            refused: 0,
        }
    }

    /// Takes one key agreement; false (counted) when the budget is spent.
    pub fn admit(&mut self, now: Timestamp) -> bool {
        let Some(limit) = self.limit else {
            return true;
        };
        let limit = BucketLimit::per_interval(limit.burst, limit.interval);
        let bucket = self
            .bucket
            .get_or_insert_with(|| TokenBucket::new(now, &limit));
        if bucket.try_take(now, &limit) {
            return true;
        }
        self.refused += 1;
        false
    }

    /// Key agreements refused so far.
    pub fn refused(&self) -> u64 {
        self.refused
    }
}

/// Why [`KeyCache::get_within`] gave no key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KeyRefusal {
    /// The peer's key has low order ([`LowOrderPublicKey`]).
    #[error(transparent)]
    LowOrder(#[from] LowOrderPublicKey),
    /// Not cached, and the budget of key agreements is spent.
    #[error("key-agreement budget spent")]
    OverBudget,
}

/// A key from a [`KeyCache`] whose misses take from a [`KeyBudget`].
pub trait WithinBudget {
    /// As [`KeyCache::get`], but a miss first takes a key agreement from `budget`: a key that
    /// is cached costs nothing and is never refused.
    fn get_within(
        &mut self,
        now: Timestamp,
        pk: &PublicKey,
        budget: &mut KeyBudget,
    ) -> Result<&PrecomputedKey, KeyRefusal>;
}

impl WithinBudget for KeyCache {
    fn get_within(
        &mut self,
        now: Timestamp,
        pk: &PublicKey,
        budget: &mut KeyBudget,
    ) -> Result<&PrecomputedKey, KeyRefusal> {
        self.get_or_agree(now, pk, || {
            if budget.admit(now) {
                Ok(())
            } else {
                Err(KeyRefusal::OverBudget)
            }
        })
        .map_err(|e| match e {
            AgreeError::LowOrder(e) => KeyRefusal::LowOrder(e),
            AgreeError::Refused(refusal) => refusal,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;
    use rustox_net_crypto::crypto::KeyPair;

    #[test]
    fn a_spent_budget_refuses_only_keys_not_cached() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
        let mut c = KeyCache::new(KeyPair::generate(&mut rng).secret);
        let mut budget = KeyBudget::new(Some(KeyAgreementLimit {
            burst: 2,
            interval: Duration::from_secs(1),
        }));
        let t = Timestamp::from_secs(1);
        let known = KeyPair::generate(&mut rng).public;
        c.get_within(t, &known, &mut budget).unwrap();
        c.get_within(t, &KeyPair::generate(&mut rng).public, &mut budget)
            .unwrap();
        let late = KeyPair::generate(&mut rng).public;
        assert_eq!(
            c.get_within(t, &late, &mut budget).err(),
            Some(KeyRefusal::OverBudget)
        );
        assert_eq!(budget.refused(), 1);
        c.get_within(t, &known, &mut budget)
            .expect("a cached key needs no budget");
        assert_eq!(c.computed, 2, "the refused key was not agreed");
        c.get_within(t + Duration::from_secs(1), &late, &mut budget)
            .expect("the budget refills");
        // Keys we send to are not budgeted.
        c.get(t, &KeyPair::generate(&mut rng).public).unwrap();
        assert_eq!(c.computed, 4);
    }
}
