//! A bounded cache of precomputed shared keys (protocol.md §1: c-toxcore's "shared key
//! cache", 256 sets × 4 ways indexed by `pk[30]`, entries expire after `KEYS_TIMEOUT`).
//!
//! The X25519 + HSalsa20 key agreement is the most expensive step of a DHT packet (tens of
//! µs); a node that keeps talking to the same few hundred peers pays it once per peer.
//! Memory is bounded by 1024 entries, and only what is used is allocated: each set grows to
//! its four ways as keys land in it, so an idle node that talks to a few dozen peers holds a
//! few dozen entries, not a thousand (a node has six of these caches; issue #12's memory
//! budget). A flood of fresh keys only churns the sets it lands in.

use rustox_net_crypto::crypto::{LowOrderPublicKey, PrecomputedKey, PublicKey, SecretKey};
use rustox_net_crypto::Timestamp;
use std::time::Duration;

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
    /// one key agreement a fresh key would.
    pub fn get(
        &mut self,
        now: Timestamp,
        pk: &PublicKey,
    ) -> Result<&PrecomputedKey, LowOrderPublicKey> {
        let set = &mut self.sets[usize::from(pk.0[30])];
        let hit = set
            .iter()
            .position(|e| e.pk == *pk && now < e.last_used + KEYS_TIMEOUT);
        let i = match hit {
            Some(w) => w,
            None => {
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
