//! The 256 transfer slots of one direction, with the set of occupied ones kept beside them.
//!
//! Why: the per-chunk paths (`poll_send`, the round-robin scheduler) look at the slots
//! several times per call, and scanning all 256 each time measures at ~10 % of each side's
//! CPU on a one-file 1 GiB loopback transfer — most of it on empty slots. Iterating the
//! occupied set makes that work proportional to the transfers that exist. The set lives
//! inside [`SlotTable`] and every fill or free goes through it, so it cannot drift from the
//! slots.

use crate::number::MAX_CONCURRENT_FILE_PIPES;

/// Words in the bitmap: one bit per slot.
const WORDS: usize = MAX_CONCURRENT_FILE_PIPES / 64;

/// A set of slot numbers (0..=255) as a 256-bit bitmap. `Copy`, so a caller can iterate a
/// snapshot while it changes the table the snapshot came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SlotSet([u64; WORDS]);

impl SlotSet {
    /// Every slot, for callers that have no table (the scheduler's reference tests).
    #[cfg(test)]
    pub fn full() -> Self {
        SlotSet([u64::MAX; WORDS])
    }

    pub fn contains(&self, slot: u8) -> bool {
        let (word, bit) = Self::position(slot);
        self.0[word] & bit != 0
    }

    pub fn insert(&mut self, slot: u8) {
        let (word, bit) = Self::position(slot);
        self.0[word] |= bit;
    }

    pub fn remove(&mut self, slot: u8) {
        let (word, bit) = Self::position(slot);
        self.0[word] &= !bit;
    }

    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// The lowest slot not in the set.
    pub fn first_absent(&self) -> Option<u8> {
        self.0.iter().enumerate().find_map(|(i, &w)| {
            (w != u64::MAX).then(|| (i * 64 + (!w).trailing_zeros() as usize) as u8)
        })
    }

    /// The members in ascending order.
    pub fn iter(self) -> SlotIter {
        SlotIter {
            set: self,
            word: 0,
            rest: self.0[0],
        }
    }

    /// The members in circular order: `start` (if present) and above ascending, then the
    /// ones below `start` ascending. This is the round-robin scheduler's visiting order.
    pub fn iter_from(self, start: u8) -> impl Iterator<Item = u8> {
        let (below, at_or_above) = self.split_at(start);
        at_or_above.iter().chain(below.iter())
    }

    /// (members < `start`, members ≥ `start`).
    fn split_at(self, start: u8) -> (SlotSet, SlotSet) {
        let mut low = [0u64; WORDS];
        let (word, bit) = Self::position(start);
        low[..word].copy_from_slice(&self.0[..word]);
        // `bit - 1` is every bit below `start` in its word.
        low[word] = self.0[word] & (bit - 1);
        let mut high = self.0;
        for (h, l) in high.iter_mut().zip(low) {
            *h &= !l;
        }
        (SlotSet(low), SlotSet(high))
    }

    fn position(slot: u8) -> (usize, u64) {
        (usize::from(slot) / 64, 1u64 << (slot % 64))
    }
}

/// Ascending iteration over a [`SlotSet`], one `trailing_zeros` per member.
#[derive(Debug, Clone)]
pub(crate) struct SlotIter {
    set: SlotSet,
    word: usize,
    /// The bits of `set.0[word]` not yet yielded.
    rest: u64,
}

impl Iterator for SlotIter {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        while self.rest == 0 {
            self.word += 1;
            if self.word == WORDS {
                return None;
            }
            self.rest = self.set.0[self.word];
        }
        let bit = self.rest.trailing_zeros() as usize;
        // Clear the lowest set bit.
        self.rest &= self.rest - 1;
        Some((self.word * 64 + bit) as u8)
    }
}

/// 256 slots of `T`, indexed by the slot number of the wire protocol, and the set of the
/// occupied ones. The only way to fill or empty a slot is through this type, which keeps
/// `occupied()` equal to the slots that are `Some`.
///
/// The vector grows to the highest slot filled and shrinks back when the table empties: a
/// friend with no transfers holds no slots (256 empty ones per direction would be ~50 KiB
/// per friend).
#[derive(Debug, Clone)]
pub(crate) struct SlotTable<T> {
    slots: Vec<Option<T>>,
    occupied: SlotSet,
}

impl<T> Default for SlotTable<T> {
    fn default() -> Self {
        SlotTable {
            slots: Vec::new(),
            occupied: SlotSet::default(),
        }
    }
}

impl<T> SlotTable<T> {
    pub fn get(&self, slot: u8) -> Option<&T> {
        self.slots.get(usize::from(slot))?.as_ref()
    }

    pub fn get_mut(&mut self, slot: u8) -> Option<&mut T> {
        self.slots.get_mut(usize::from(slot))?.as_mut()
    }

    pub fn contains(&self, slot: u8) -> bool {
        self.occupied.contains(slot)
    }

    /// Fill `slot`, returning what was there.
    pub fn insert(&mut self, slot: u8, value: T) -> Option<T> {
        let i = usize::from(slot);
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        self.occupied.insert(slot);
        self.slots[i].replace(value)
    }

    /// Empty `slot`, returning what was there.
    pub fn remove(&mut self, slot: u8) -> Option<T> {
        self.occupied.remove(slot);
        let old = self.slots.get_mut(usize::from(slot))?.take();
        if self.occupied.is_empty() {
            self.slots = Vec::new();
        }
        old
    }

    /// Empty every slot.
    pub fn clear(&mut self) {
        self.slots = Vec::new();
        self.occupied = SlotSet::default();
    }

    /// A snapshot of the occupied slot numbers.
    pub fn occupied(&self) -> SlotSet {
        self.occupied
    }

    /// The lowest free slot, as `tox_file_send` hands out numbers.
    pub fn first_free(&self) -> Option<u8> {
        self.occupied.first_absent()
    }

    pub fn len(&self) -> usize {
        self.occupied.len()
    }

    pub fn is_empty(&self) -> bool {
        self.occupied.is_empty()
    }

    /// The occupied slots and their values, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &T)> + '_ {
        self.occupied
            .iter()
            .filter_map(move |s| self.get(s).map(|t| (s, t)))
    }

    /// The occupied set equals the slots that are `Some` (a full scan: tests only).
    #[cfg(test)]
    pub fn is_consistent(&self) -> bool {
        (0..=255u8).all(|s| self.occupied.contains(s) == self.get(s).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn iteration_is_ascending_across_words() {
        let mut set = SlotSet::default();
        for s in [255u8, 0, 64, 63, 128, 200] {
            set.insert(s);
        }
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 63, 64, 128, 200, 255]);
        assert_eq!(set.len(), 6);
    }

    #[test]
    fn circular_iteration_starts_at_the_cursor_and_wraps() {
        let mut set = SlotSet::default();
        for s in [3u8, 200, 255] {
            set.insert(s);
        }
        assert_eq!(set.iter_from(200).collect::<Vec<_>>(), [200, 255, 3]);
        assert_eq!(set.iter_from(201).collect::<Vec<_>>(), [255, 3, 200]);
        assert_eq!(set.iter_from(0).collect::<Vec<_>>(), [3, 200, 255]);
        assert_eq!(set.iter_from(4).collect::<Vec<_>>(), [200, 255, 3]);
    }

    #[test]
    fn first_free_skips_full_words() {
        let mut table = SlotTable::default();
        for s in 0..=64u8 {
            table.insert(s, ());
        }
        assert_eq!(table.first_free(), Some(65));
        for s in 65..=255u8 {
            table.insert(s, ());
        }
        assert_eq!(table.first_free(), None);
        table.remove(130);
        assert_eq!(table.first_free(), Some(130));
    }

    proptest! {
        /// Any sequence of fills, frees and clears keeps the set equal to the `Some` slots,
        /// and the set's iterators agree with a plain filter over 0..=255.
        #[test]
        fn set_tracks_the_table(ops in proptest::collection::vec((0u8..3, any::<u8>()), 0..400)) {
            let mut table = SlotTable::default();
            for (op, slot) in ops {
                match op {
                    0 => { table.insert(slot, slot); }
                    1 => { table.remove(slot); }
                    _ if slot < 4 => table.clear(),
                    _ => {}
                }
                prop_assert!(table.is_consistent());
                let some: Vec<u8> = (0..=255u8).filter(|&s| table.get(s).is_some()).collect();
                prop_assert_eq!(table.occupied().iter().collect::<Vec<_>>(), some.clone());
                prop_assert_eq!(table.len(), some.len());
                prop_assert_eq!(table.first_free(), (0..=255u8).find(|s| !some.contains(s)));
                let circular: Vec<u8> = some.iter().copied().filter(|&s| s >= slot)
                    .chain(some.iter().copied().filter(|&s| s < slot)).collect();
                prop_assert_eq!(table.occupied().iter_from(slot).collect::<Vec<_>>(), circular);
            }
        }
    }
}
