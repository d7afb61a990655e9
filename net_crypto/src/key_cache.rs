//! The one cache of precomputed shared keys: a node keeps the keys it agreed with peers, so
//! that a peer's next packet costs no X25519 and HSalsa20 (tens of µs). Memory is bounded
//! whatever arrives (docs/design.md principle 5), and which key is evicted is a parameter,
//! [`Eviction`], because the layers that use it decide differently on purpose:
//!
//! * core's DHT and onion layers keep c-toxcore's "shared key cache" (docs/protocol.md §1;
//!   `DHT.c`'s `get_shared_key`): 256 sets × 4 ways indexed by `pk[30]`, least recently used
//!   within a set, entries expire after `KEYS_TIMEOUT` (600 s). Only what is used is
//!   allocated: each set grows to its ways as keys land in it, so a node that talks to a few
//!   dozen peers holds a few dozen entries. A flood of fresh keys only churns the sets it
//!   lands in.
//! * net_crypto's endpoint keeps the keys of cookie requesters and handshaking peers in two
//!   generations of a [`RecentMap`] (no expiry): what is used at least once per half the
//!   capacity stays, and a flood only ages out idle keys.
//!
//! A miss may be refused before any key agreement: [`KeyCache::get_or_agree`] asks its caller
//! to admit the agreement (a budget of all sources together), so keys that are cached — the
//! peers a node talks to — are never refused, however hard the budget is spent by others.

use std::time::Duration;

use crate::crypto::{LowOrderPublicKey, PrecomputedKey, PublicKey, SecretKey};
use crate::recent_map::RecentMap;
use crate::Timestamp;

/// Which key the cache gives up for a new one (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eviction {
    /// `sets` sets (at most 256, indexed by `pk[30]` modulo `sets`) of `ways` entries each;
    /// a new key replaces an expired entry of its set, else takes a free way, else replaces
    /// the least recently used. An entry unused for `expiry` is agreed again.
    SetAssociative {
        /// Sets in the cache.
        sets: usize,
        /// Entries a set holds.
        ways: usize,
        /// How long an unused entry stays valid.
        expiry: Duration,
    },
    /// At most `capacity` keys in two generations ([`RecentMap`]), no expiry.
    TwoGenerations {
        /// Keys held at most.
        capacity: usize,
    },
}

/// c-toxcore's `KEYS_TIMEOUT`: 600 s.
pub const KEYS_TIMEOUT: Duration = Duration::from_secs(600);

impl Eviction {
    /// c-toxcore's shared key cache: 256 sets × 4 ways, [`KEYS_TIMEOUT`].
    pub const C_TOXCORE: Eviction = Eviction::SetAssociative {
        sets: 256,
        ways: 4,
        expiry: KEYS_TIMEOUT,
    };
}

/// Why [`KeyCache::get_or_agree`] gave no key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgreeError<E> {
    /// The peer's key has low order ([`LowOrderPublicKey`]).
    LowOrder(LowOrderPublicKey),
    /// Not cached, and the caller did not admit a key agreement.
    Refused(E),
}

struct Entry {
    pk: PublicKey,
    key: PrecomputedKey,
    last_used: Timestamp,
}

enum Store {
    /// One `Vec` a set, allocated as keys arrive.
    Sets {
        sets: Vec<Vec<Entry>>,
        ways: usize,
        expiry: Duration,
    },
    Recent(RecentMap<PublicKey, PrecomputedKey>),
}

/// Shared keys with peers, agreed with one secret key of ours (see the module docs).
pub struct KeyCache {
    secret: SecretKey,
    store: Store,
    /// Key agreements computed (cache misses), for statistics.
    pub computed: u64,
}

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyCache")
            .field("len", &self.len())
            .field("computed", &self.computed)
            .finish()
    }
}

impl KeyCache {
    /// An empty cache of keys agreed with `secret`, in c-toxcore's layout
    /// ([`Eviction::C_TOXCORE`]).
    pub fn new(secret: SecretKey) -> Self {
        Self::with_eviction(secret, Eviction::C_TOXCORE)
    }

    /// An empty cache of keys agreed with `secret` that evicts as `eviction` says.
    pub fn with_eviction(secret: SecretKey, eviction: Eviction) -> Self {
        let store = match eviction {
            Eviction::SetAssociative { sets, ways, expiry } => {
                let mut table = Vec::with_capacity(sets.clamp(1, 256));
                table.resize_with(sets.clamp(1, 256), Vec::new);
                Store::Sets {
                    sets: table,
                    ways: ways.max(1),
                    expiry,
                }
            }
            Eviction::TwoGenerations { capacity } => Store::Recent(RecentMap::new(capacity)),
        };
        KeyCache {
            secret,
            store,
            computed: 0,
        }
    }

    /// The cached key with `pk`, if any; being asked for counts as a use.
    pub fn cached(&mut self, now: Timestamp, pk: &PublicKey) -> Option<&PrecomputedKey> {
        match &mut self.store {
            Store::Sets { sets, expiry, .. } => {
                let expiry = *expiry;
                let i = set_index(pk, sets.len());
                let set = &mut sets[i];
                let e = set
                    .iter_mut()
                    .find(|e| e.pk == *pk && now < e.last_used + expiry)?;
                e.last_used = now;
                Some(&e.key)
            }
            Store::Recent(map) => map.get_mut(pk).map(|key| &*key),
        }
    }

    /// One key agreement with `pk`, counted, not kept: for a key to keep only once it proved
    /// useful ([`Self::insert`]). A low-order `pk` is refused, as libsodium's
    /// `crypto_box_beforenm` refuses it.
    pub fn agree(&mut self, pk: &PublicKey) -> Result<PrecomputedKey, LowOrderPublicKey> {
        self.computed += 1;
        PrecomputedKey::new(pk, &self.secret)
    }

    /// Keeps `key` as the one agreed with `pk`, evicting as [`Eviction`] says.
    pub fn insert(&mut self, now: Timestamp, pk: PublicKey, key: PrecomputedKey) {
        self.insert_entry(now, pk, key);
    }

    /// The key with `pk`, agreed and kept on a miss: for keys we chose (what we send); keys
    /// that arrive in datagrams from anyone go through [`Self::get_or_agree`] and a budget.
    /// A low-order `pk` is refused and takes no entry.
    pub fn get(
        &mut self,
        now: Timestamp,
        pk: &PublicKey,
    ) -> Result<&PrecomputedKey, LowOrderPublicKey> {
        self.get_or_agree(now, pk, || Ok::<(), std::convert::Infallible>(()))
            .map_err(|e| match e {
                AgreeError::LowOrder(e) => e,
                AgreeError::Refused(never) => match never {},
            })
    }

    /// The key with `pk`: the cached one, or on a miss — once `admit` allows it — one agreed
    /// now and kept. A low-order `pk` takes no entry: each try costs the key agreement a fresh
    /// key would.
    pub fn get_or_agree<E>(
        &mut self,
        now: Timestamp,
        pk: &PublicKey,
        admit: impl FnOnce() -> Result<(), E>,
    ) -> Result<&PrecomputedKey, AgreeError<E>> {
        // Looked up twice on a hit rather than borrowed across the miss path.
        if self.cached(now, pk).is_none() {
            admit().map_err(AgreeError::Refused)?;
            let key = self.agree(pk).map_err(AgreeError::LowOrder)?;
            return Ok(self.insert_entry(now, *pk, key));
        }
        Ok(self.cached(now, pk).expect("found above"))
    }

    fn insert_entry(
        &mut self,
        now: Timestamp,
        pk: PublicKey,
        key: PrecomputedKey,
    ) -> &PrecomputedKey {
        match &mut self.store {
            Store::Sets { sets, ways, expiry } => {
                let (ways, expiry) = (*ways, *expiry);
                let i = set_index(&pk, sets.len());
                let set = &mut sets[i];
                let entry = Entry {
                    pk,
                    key,
                    last_used: now,
                };
                // An expired entry first, else a free way, else the least recently used.
                let expired = set.iter().position(|e| now >= e.last_used + expiry);
                let w = match expired {
                    Some(w) => {
                        set[w] = entry;
                        w
                    }
                    None if set.len() < ways => {
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
                };
                &set[w].key
            }
            Store::Recent(map) => {
                map.insert(pk, key);
                map.get_mut(&pk).map(|key| &*key).expect("just inserted")
            }
        }
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        match &self.store {
            Store::Sets { sets, .. } => sets.iter().map(Vec::len).sum(),
            Store::Recent(map) => map.len(),
        }
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held by the entries (their allocated slots).
    pub fn memory_usage(&self) -> usize {
        match &self.store {
            Store::Sets { sets, .. } => {
                sets.iter().map(Vec::capacity).sum::<usize>() * std::mem::size_of::<Entry>()
            }
            Store::Recent(map) => map.memory_usage(),
        }
    }
}

/// The set of `pk`: its byte 30, as c-toxcore's `get_shared_key` indexes its 256 sets.
fn set_index(pk: &PublicKey, sets: usize) -> usize {
    usize::from(pk.0[30]) % sets
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::{KeyPair, Nonce};
    use rand_chacha::rand_core::SeedableRng;

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
