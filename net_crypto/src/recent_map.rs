//! A map that remembers what was used recently, in bounded memory, its capacity a parameter:
//! the endpoint's per-source rate-limit buckets and its caches of agreed keys
//! ([`crate::key_cache::Eviction::TwoGenerations`]) (docs/design.md principle 5: every table
//! is bounded).
//!
//! Two generations: entries go into the current one; once it holds half the capacity it
//! becomes the previous one and the older generation is dropped whole. A lookup that finds
//! an entry in the previous generation moves it back into the current one. So what is used
//! at least once per half-capacity insertions stays, everything else ages out, and each
//! operation is O(1) — a flood of new keys (spoofed sources, random keys) costs a hash insert
//! each and can only push out entries that were idle, never grow the map.

use std::collections::HashMap;
use std::hash::Hash;

/// At most `capacity` entries (see the module docs).
#[derive(Debug, Clone)]
pub struct RecentMap<K, V> {
    current: HashMap<K, V>,
    previous: HashMap<K, V>,
    /// Entries per generation: half the capacity, at least one.
    generation: usize,
}

impl<K: Eq + Hash + Clone, V> RecentMap<K, V> {
    /// An empty map that holds at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        RecentMap {
            current: HashMap::new(),
            previous: HashMap::new(),
            generation: (capacity / 2).max(1),
        }
    }

    /// The entry for `key`, if it is still remembered; being asked for counts as a use.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        if !self.current.contains_key(key) {
            let value = self.previous.remove(key)?;
            self.insert(key.clone(), value);
        }
        self.current.get_mut(key)
    }

    /// The entry for `key`, inserted with `make()` if it is not remembered.
    pub fn get_or_insert_with(&mut self, key: &K, make: impl FnOnce() -> V) -> &mut V {
        if !self.current.contains_key(key) {
            let moved = self.previous.remove(key);
            self.make_room();
            return self
                .current
                .entry(key.clone())
                .or_insert_with(|| moved.unwrap_or_else(make));
        }
        self.current.entry(key.clone()).or_insert_with(make)
    }

    /// Remembers `value` under `key`, replacing what was there.
    pub fn insert(&mut self, key: K, value: V) {
        self.previous.remove(&key);
        if !self.current.contains_key(&key) {
            self.make_room();
        }
        self.current.insert(key, value);
    }

    /// Before a new key goes into a full current generation, it becomes the previous one.
    fn make_room(&mut self) {
        if self.current.len() >= self.generation {
            self.previous = std::mem::take(&mut self.current);
        }
    }

    /// Entries remembered.
    pub fn len(&self) -> usize {
        self.current.len() + self.previous.len()
    }

    /// True when nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held by the two tables (their allocated slots).
    pub fn memory_usage(&self) -> usize {
        (self.current.capacity() + self.previous.capacity())
            * (std::mem::size_of::<K>() + std::mem::size_of::<V>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_at_most_its_capacity_and_keeps_what_is_used() {
        let mut m = RecentMap::new(8);
        m.insert(0u32, 0u32);
        for k in 1..1000u32 {
            m.insert(k, k);
            // Key 0 is used between every two insertions: it must survive the churn.
            assert_eq!(m.get_mut(&0).copied(), Some(0), "after {k}");
            assert!(m.len() <= 8, "len {} after {k}", m.len());
        }
        // Keys inserted long ago and never used are gone.
        assert!(m.get_mut(&5).is_none());
        assert_eq!(m.get_mut(&999).copied(), Some(999));
    }

    #[test]
    fn get_or_insert_with_finds_before_it_makes() {
        let mut m = RecentMap::new(4);
        *m.get_or_insert_with(&1u8, || 10u8) += 1;
        assert_eq!(*m.get_or_insert_with(&1, || 99), 11);
        // Pushed into the previous generation, then found there, not made again.
        m.insert(2, 2);
        m.insert(3, 3);
        assert_eq!(*m.get_or_insert_with(&1, || 99), 11);
        assert!(m.len() <= 4);
    }
}
