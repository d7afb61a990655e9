//! A bounded cache of precomputed shared keys (docs/protocol.md §1: c-toxcore's "shared key
//! cache", 256 sets × 4 ways indexed by `pk[30]`, entries expire after `KEYS_TIMEOUT`), and the
//! budget of the key agreements no cached key saves.
//!
//! The X25519 + HSalsa20 key agreement is the most expensive step of a DHT packet (tens of
//! µs); a node that keeps talking to the same few hundred peers pays it once per peer.
//! Memory is bounded by 1024 entries, and only what is used is allocated: each set grows to
//! its four ways as keys land in it, so an idle node that talks to a few dozen peers holds a
//! few dozen entries, not a thousand (a node has six of these caches). A flood of fresh
//! keys only churns the sets it lands in.
//!
//! A flood of fresh keys from many (spoofed) sources passes every per-source limit, and no
//! cache saves its key agreements. A [`KeyBudget`] caps them for all sources together, as
//! net_crypto's admission does for cookie requests and handshakes: [`KeyCache::get_within`]
//! takes a token only on a miss, so peers whose key is cached — those we talk to — are never
//! refused, however hard the budget is spent by others.
//!
//! net_crypto's endpoint keeps its agreed keys in a [`RecentMap`] instead (two generations,
//! no expiry); this cache keeps c-toxcore's layout, whose sets, ways and timeout decide which
//! key is evicted and when one is agreed again.
//!
//! [`RecentMap`]: rustox_net_crypto::recent_map::RecentMap

use rustox_net_crypto::crypto::{LowOrderPublicKey, PrecomputedKey, PublicKey, SecretKey};
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

/// Sets in the cache (indexed by one key byte).
const SETS: usize = 256;
/// Ways per set.
const WAYS: usize = 4;
/// `KEYS_TIMEOUT`: 600 s.
pub const KEYS_TIMEOUT: Duration = Duration::from_secs(600);

struct Entry {
    pk: PublicKey,
    key: PrecomputedKey,
    last_used: Timestamp,
}

/// The cache; one per thread that opens or seals packets.
pub struct KeyCache {
    secret: SecretKey,
    /// `SETS` sets of at most `WAYS` entries each, allocated as keys arrive.
    sets: Vec<Vec<Entry>>,
    /// Key agreements computed (cache misses), for statistics.
    pub computed: u64,
}

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyCache")
            .field("computed", &self.computed)
            .finish()
    }
}

impl KeyCache {
    /// An empty cache for our secret key.
    pub fn new(secret: SecretKey) -> Self {
        let mut sets = Vec::with_capacity(SETS);
        sets.resize_with(SETS, Vec::new);
        KeyCache {
            secret,
            sets,
            computed: 0,
        }
    }

    /// The shared key with `pk`, computed on a miss. A low-order `pk` is refused, as
    /// libsodium's `crypto_box_beforenm` refuses it, and takes no entry: each try costs the
    /// one key agreement a fresh key would. For keys we chose (what we send); keys that
    /// arrive in datagrams from anyone go through [`Self::get_within`].
    pub fn get(
        &mut self,
        now: Timestamp,
        pk: &PublicKey,
    ) -> Result<&PrecomputedKey, LowOrderPublicKey> {
        match self.fetch(now, pk, None) {
            Ok(key) => Ok(key),
            // Without a budget, a low-order key is the only refusal.
            Err(_) => Err(LowOrderPublicKey),
        }
    }

    /// As [`Self::get`], but a miss first takes a key agreement from `budget`: a key that
    /// is cached costs nothing and is never refused.
    pub fn get_within(
        &mut self,
        now: Timestamp,
        pk: &PublicKey,
        budget: &mut KeyBudget,
    ) -> Result<&PrecomputedKey, KeyRefusal> {
        self.fetch(now, pk, Some(budget))
    }

    fn fetch(
        &mut self,
        now: Timestamp,
        pk: &PublicKey,
        budget: Option<&mut KeyBudget>,
    ) -> Result<&PrecomputedKey, KeyRefusal> {
        let set = &mut self.sets[usize::from(pk.0[30])];
        let hit = set
            .iter()
            .position(|e| e.pk == *pk && now < e.last_used + KEYS_TIMEOUT);
        let i = match hit {
            Some(w) => w,
            None => {
                if budget.is_some_and(|b| !b.admit(now)) {
                    return Err(KeyRefusal::OverBudget);
                }
                self.computed += 1;
                let entry = Entry {
                    pk: *pk,
                    key: PrecomputedKey::new(pk, &self.secret)?,
                    last_used: now,
                };
                // An expired entry first, else a free way, else the least recently used.
                let expired = set.iter().position(|e| now >= e.last_used + KEYS_TIMEOUT);
                match expired {
                    Some(w) => {
                        set[w] = entry;
                        w
                    }
                    None if set.len() < WAYS => {
                        set.reserve_exact(1);
                        set.push(entry);
                        set.len() - 1
                    }
                    None => {
                        let w = (0..set.len())
                            .min_by_key(|&w| set[w].last_used)
                            .unwrap_or(0);
                        set[w] = entry;
                        w
                    }
                }
            }
        };
        let e = &mut set[i];
        e.last_used = now;
        Ok(&e.key)
    }

    /// Entries held, for memory accounting.
    pub fn len(&self) -> usize {
        self.sets.iter().map(Vec::len).sum()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;
    use rustox_net_crypto::crypto::{KeyPair, Nonce};

    #[test]
    fn caches_and_evicts_within_a_set() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let me = KeyPair::generate(&mut rng);
        let peer = KeyPair::generate(&mut rng);
        let mut c = KeyCache::new(me.secret.clone());
        let t = Timestamp::from_secs(1);
        let boxed = c
            .get(t, &peer.public)
            .unwrap()
            .encrypt(&Nonce([0; 24]), b"x");
        c.get(t, &peer.public).unwrap();
        assert_eq!(c.computed, 1);
        let direct = PrecomputedKey::new(&me.public, &peer.secret).unwrap();
        assert_eq!(direct.decrypt(&Nonce([0; 24]), &boxed).unwrap(), b"x");
        // Five keys in one set: the first is evicted.
        let mut same_set = Vec::new();
        while same_set.len() < 5 {
            let k = KeyPair::generate(&mut rng).public;
            if k.0[30] == 7 {
                same_set.push(k);
            }
        }
        for k in &same_set {
            c.get(t, k).unwrap();
        }
        let before = c.computed;
        c.get(t, &same_set[0]).unwrap();
        assert_eq!(c.computed, before + 1);
        c.get(t + KEYS_TIMEOUT, &same_set[0]).unwrap();
        assert_eq!(c.computed, before + 2, "expired entries are recomputed");
        assert_eq!(c.len(), 1 + 4, "a set holds four ways at most");
    }

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

    #[test]
    fn a_low_order_key_is_refused_and_takes_no_entry() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut c = KeyCache::new(KeyPair::generate(&mut rng).secret);
        let t = Timestamp::from_secs(1);
        // 1, a point of order 1 (libsodium's blacklist).
        let mut one = PublicKey([0; 32]);
        one.0[0] = 1;
        for _ in 0..2 {
            assert_eq!(c.get(t, &one).err(), Some(LowOrderPublicKey));
        }
        assert_eq!(c.computed, 2, "each try is a key agreement");
        assert!(c.is_empty());
    }
}
