//! A bounded cache of precomputed shared keys (protocol.md §1: c-toxcore's "shared key
//! cache", 256 sets × 4 ways indexed by `pk[30]`, entries expire after `KEYS_TIMEOUT`).
//!
//! The X25519 + HSalsa20 key agreement is the most expensive step of a DHT packet (tens of
//! µs); a node that keeps talking to the same few hundred peers pays it once per peer.
//! Memory is fixed: 1024 entries. A flood of fresh keys only churns the sets it lands in.

use rustox_net_crypto::crypto::{PrecomputedKey, PublicKey, SecretKey};
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
    entries: Vec<Option<Entry>>,
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
        let mut entries = Vec::with_capacity(SETS * WAYS);
        entries.resize_with(SETS * WAYS, || None);
        KeyCache {
            secret,
            entries,
            computed: 0,
        }
    }

    /// The shared key with `pk`, computed on a miss.
    pub fn get(&mut self, now: Timestamp, pk: &PublicKey) -> &PrecomputedKey {
        let set = usize::from(pk.0[30]) * WAYS;
        let ways = set..set + WAYS;
        let hit = self.entries[ways.clone()].iter().position(|e| {
            e.as_ref()
                .is_some_and(|e| e.pk == *pk && now < e.last_used + KEYS_TIMEOUT)
        });
        let i = match hit {
            Some(w) => set + w,
            None => {
                // Empty or expired first, else the least recently used.
                let w = (0..WAYS)
                    .min_by_key(|&w| match &self.entries[set + w] {
                        None => (0, Timestamp::ZERO),
                        Some(e) if now >= e.last_used + KEYS_TIMEOUT => (0, Timestamp::ZERO),
                        Some(e) => (1, e.last_used),
                    })
                    .unwrap_or(0);
                self.computed += 1;
                self.entries[set + w] = Some(Entry {
                    pk: *pk,
                    key: PrecomputedKey::new(pk, &self.secret),
                    last_used: now,
                });
                set + w
            }
        };
        let e = self.entries[i]
            .as_mut()
            .expect("slot just checked or filled");
        e.last_used = now;
        &e.key
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
        let boxed = c.get(t, &peer.public).encrypt(&Nonce([0; 24]), b"x");
        c.get(t, &peer.public);
        assert_eq!(c.computed, 1);
        let direct = PrecomputedKey::new(&me.public, &peer.secret);
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
            c.get(t, k);
        }
        let before = c.computed;
        c.get(t, &same_set[0]);
        assert_eq!(c.computed, before + 1);
        c.get(t + KEYS_TIMEOUT, &same_set[0]);
        assert_eq!(c.computed, before + 2, "expired entries are recomputed");
    }
}
