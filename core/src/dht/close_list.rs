//! The close list: 128 k-buckets of 8 nodes (docs/protocol.md §5.3, c-toxcore 0.2.18
//! `close_clientlist`, `add_to_close`).
//!
//! A node's bucket is the number of leading bits its key shares with ours, capped at 127.
//! A node takes an empty or bad slot of its bucket first. **Deviation from c-toxcore 0.2.18**
//! (table policy only, nothing on the wire changes): when the bucket is full of good nodes, a
//! node closer to us than the bucket's farthest replaces that one. c-toxcore never evicts a
//! good node, so a bucket keeps whichever 8 nodes arrived first and a node's truly closest
//! neighbours can stay out for as long as those 8 answer: in the 500-node simulation (5 %
//! loss, auto_tests/tests/dht_convergence.rs, seed 6) 2 nodes still missed one of their 4
//! closest after 120 s for exactly this reason; with the replacement, none do. Only nodes that
//! answered a request of ours are ever added (the caller guarantees it, see `node/lists.rs`), so
//! the table still cannot be filled with nodes that never answered, and a flood of random
//! fresh keys rarely beats the members of the deep buckets that matter.

use std::net::SocketAddr;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::client::ClientEntry;
use std::cmp::Ordering;

use super::distance::{cmp_distance, common_prefix_bits};
use super::timers::{LCLIENT_LENGTH, LCLIENT_NODES};

/// 128 buckets of at most 8 nodes. Each bucket grows as nodes arrive, so the list holds
/// what it knows rather than 1024 empty slots (which would cost a few hundred kB per node,
/// idle or not).
#[derive(Debug, Clone)]
pub struct CloseList {
    own: PublicKey,
    buckets: Vec<Vec<ClientEntry>>,
}

impl CloseList {
    /// An empty list around our key.
    pub fn new(own: PublicKey) -> Self {
        let mut buckets = Vec::with_capacity(LCLIENT_LENGTH);
        buckets.resize_with(LCLIENT_LENGTH, Vec::new);
        CloseList { own, buckets }
    }

    /// The bucket index of `pk` (`bit_by_bit_cmp`, capped at `LCLIENT_LENGTH - 1`).
    pub fn bucket_of(&self, pk: &PublicKey) -> usize {
        common_prefix_bits(&self.own, pk).min(LCLIENT_LENGTH - 1)
    }

    /// The entry for `pk`, if present.
    pub fn get(&self, pk: &PublicKey) -> Option<&ClientEntry> {
        self.buckets[self.bucket_of(pk)]
            .iter()
            .find(|e| e.pk == *pk)
    }

    /// The entry for `pk`, if present, mutably.
    pub fn get_mut(&mut self, pk: &PublicKey) -> Option<&mut ClientEntry> {
        let b = self.bucket_of(pk);
        self.buckets[b].iter_mut().find(|e| e.pk == *pk)
    }

    /// Whether `pk` is in the list or would get a slot (`node_addable_to_close_list`).
    pub fn addable(&self, pk: &PublicKey, now: Timestamp) -> bool {
        if *pk == self.own {
            return false;
        }
        let bucket = &self.buckets[self.bucket_of(pk)];
        bucket.len() < LCLIENT_NODES
            || bucket.iter().any(|e| e.pk == *pk || !e.is_good(now))
            || self
                .farthest(bucket)
                .is_some_and(|i| cmp_distance(&self.own, pk, &bucket[i].pk) == Ordering::Less)
    }

    /// Index of the member farthest from our key in a bucket.
    fn farthest(&self, bucket: &[ClientEntry]) -> Option<usize> {
        (0..bucket.len()).max_by(|&a, &b| cmp_distance(&self.own, &bucket[a].pk, &bucket[b].pk))
    }

    /// Records a node that answered us from `addr`; returns true if it is (now) in the list.
    pub fn add(&mut self, pk: PublicKey, addr: SocketAddr, now: Timestamp) -> bool {
        if pk == self.own {
            return false;
        }
        if let Some(e) = self.get_mut(&pk) {
            e.heard_from(addr, now);
            return true;
        }
        let b = self.bucket_of(&pk);
        let own = self.own;
        let farthest = self.farthest(&self.buckets[b]);
        let bucket = &mut self.buckets[b];
        let entry = ClientEntry::new(pk, addr, now);
        if bucket.len() < LCLIENT_NODES {
            bucket.reserve_exact(1);
            bucket.push(entry);
            return true;
        }
        let replace = bucket.iter().position(|e| !e.is_good(now)).or_else(|| {
            farthest.filter(|&i| cmp_distance(&own, &pk, &bucket[i].pk) == Ordering::Less)
        });
        match replace {
            Some(i) => {
                bucket[i] = entry;
                true
            }
            None => false,
        }
    }

    /// All entries.
    pub fn iter(&self) -> impl Iterator<Item = &ClientEntry> {
        self.buckets.iter().flatten()
    }

    /// All entries, mutably.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut ClientEntry> {
        self.buckets.iter_mut().flatten()
    }

    /// Number of entries that are good at `now`.
    pub fn good_count(&self, now: Timestamp) -> usize {
        self.iter().filter(|e| e.is_good(now)).count()
    }

    /// Drops dead entries so their slots are free; if *every* entry is dead, they are all
    /// kept and made merely bad instead, so that pinging goes on (docs/protocol.md §5.4: a node
    /// that lost its network must not forget the whole table).
    pub fn expire(&mut self, now: Timestamp, revive_as_of: Timestamp) {
        let any = self.iter().next().is_some();
        if any && self.iter().all(|e| e.is_dead(now)) {
            for e in self.iter_mut() {
                for a in e.assocs_mut() {
                    a.last_seen = revive_as_of;
                }
            }
            return;
        }
        for bucket in &mut self.buckets {
            bucket.retain(|e| !e.is_dead(now));
            if bucket.is_empty() {
                bucket.shrink_to_fit();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dht::timers::BAD_NODE_TIMEOUT;

    fn key(first: u8, last: u8) -> PublicKey {
        let mut k = [0u8; 32];
        k[0] = first;
        k[31] = last;
        PublicKey(k)
    }

    #[test]
    fn bucket_index_is_capped_at_127() {
        let own = PublicKey([0; 32]);
        let l = CloseList::new(own);
        assert_eq!(l.bucket_of(&key(0x80, 0)), 0);
        assert_eq!(l.bucket_of(&key(0x01, 0)), 7);
        assert_eq!(l.bucket_of(&key(0, 1)), 127);
    }

    #[test]
    fn full_buckets_take_only_closer_nodes_and_replace_bad_ones() {
        let mut l = CloseList::new(PublicKey([0; 32]));
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let t0 = Timestamp::from_secs(1);
        for i in 10..18 {
            assert!(l.add(key(0x80, i), addr, t0));
        }
        assert!(!l.addable(&key(0x80, 99), t0), "farther than every member");
        assert!(!l.add(key(0x80, 99), addr, t0));
        assert!(
            l.addable(&key(0x80, 1), t0),
            "closer than the farthest member"
        );
        assert!(l.add(key(0x80, 1), addr, t0));
        assert!(
            l.get(&key(0x80, 17)).is_none(),
            "the farthest member made room"
        );
        assert!(l.get(&key(0x80, 16)).is_some());
        assert!(l.addable(&key(0x80, 3), t0), "present nodes stay addable");
        let later = t0 + BAD_NODE_TIMEOUT;
        assert!(l.add(key(0x80, 99), addr, later));
        assert_eq!(l.iter().count(), 8);
        assert!(l.get(&key(0x80, 99)).is_some());
    }

    #[test]
    fn own_key_is_never_added() {
        let own = key(5, 5);
        let mut l = CloseList::new(own);
        assert!(!l.add(own, "127.0.0.1:1".parse().unwrap(), Timestamp::ZERO));
    }
}
