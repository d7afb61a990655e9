//! Deficit round-robin across outgoing transfers (docs/transport.md §3.9).
//!
//! The send budget is shared packet by packet: each visit to a transfer credits it one
//! quantum of bytes (1371, a full chunk) and it may send while its deficit covers the next
//! chunk. The cursor and the deficit of the transfer being visited persist across calls, so
//! fairness holds even when the budget arrives one packet at a time. Since no chunk exceeds
//! the quantum, a credited transfer always sends, so the scan finds a chunk within one pass.
//!
//! Only occupied slots are visited (the caller passes them as a [`SlotSet`]): this runs once
//! per chunk, and walking all 256 slots cost ~6 % of a sender's CPU with one transfer. An
//! empty slot has nothing to send, so skipping it is what the full scan did to it anyway —
//! end the visit in progress and move on; its deficit is reset when the slot is freed or
//! filled ([`DeficitRoundRobin::reset_slot`]).

use crate::packet::MAX_FILE_DATA_SIZE;
use crate::slots::SlotSet;

/// Bytes credited per visit: one full chunk, so equal transfers alternate chunk by chunk.
const QUANTUM: u32 = MAX_FILE_DATA_SIZE as u32;

/// DRR state over the 256 outgoing slots.
#[derive(Debug, Clone)]
pub(crate) struct DeficitRoundRobin {
    deficit: Vec<u32>,
    cursor: u8,
    /// The slot at `cursor` has already been credited for the current visit.
    in_visit: bool,
}

impl Default for DeficitRoundRobin {
    /// No deficits yet: the vector grows to the highest slot that sends (a friend that sends
    /// no file holds none).
    fn default() -> Self {
        DeficitRoundRobin {
            deficit: Vec::new(),
            cursor: 0,
            in_visit: false,
        }
    }
}

impl DeficitRoundRobin {
    /// Pick the slot that sends the next chunk, visiting every slot as if all 256 were
    /// occupied (for the unit tests, which have no table).
    #[cfg(test)]
    pub fn next(&mut self, next_len: impl FnMut(u8) -> Option<usize>) -> Option<u8> {
        self.next_among(SlotSet::full(), next_len)
    }

    /// Pick the slot among `occupied` that sends the next chunk. `next_len(slot)` gives the
    /// length of the slot's next chunk (≤ 1371), or `None` when it has nothing to send now.
    ///
    /// Visits the occupied slots in circular order from the cursor. The result, the cursor
    /// and the deficits are those of a scan over all 256 slots in which every slot outside
    /// `occupied` answers `None` (the tests check this against that scan).
    pub fn next_among(
        &mut self,
        occupied: SlotSet,
        mut next_len: impl FnMut(u8) -> Option<usize>,
    ) -> Option<u8> {
        let start = self.cursor;
        // Two passes: the first may only finish the current visit and reset idle slots.
        for slot in occupied.iter_from(start).chain(occupied.iter_from(start)) {
            if slot != self.cursor {
                // Slots between the cursor and here are empty: each ends the visit.
                self.cursor = slot;
                self.in_visit = false;
            }
            let index = usize::from(slot);
            match next_len(slot) {
                None => {
                    // DRR: an empty queue loses its deficit.
                    if let Some(d) = self.deficit.get_mut(index) {
                        *d = 0;
                    }
                    self.advance();
                }
                Some(len) => {
                    let len = len.min(QUANTUM as usize) as u32;
                    if self.deficit.len() <= index {
                        self.deficit.resize(index + 1, 0);
                    }
                    if !self.in_visit {
                        self.deficit[index] = self.deficit[index].saturating_add(QUANTUM);
                        self.in_visit = true;
                    }
                    if self.deficit[index] >= len {
                        self.deficit[index] -= len;
                        return Some(slot);
                    }
                    self.advance();
                }
            }
        }
        // Nothing to send. The full scan visited 2 * 256 + 1 slots and so stopped one past
        // where it started; keep that, so the next call starts where it would have.
        self.cursor = start.wrapping_add(1);
        self.in_visit = false;
        None
    }

    /// Forget a slot's credit (transfer ended or reset).
    pub fn reset_slot(&mut self, slot: u8) {
        if let Some(d) = self.deficit.get_mut(usize::from(slot)) {
            *d = 0;
        }
    }

    fn advance(&mut self) {
        self.cursor = self.cursor.wrapping_add(1);
        self.in_visit = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::number::MAX_CONCURRENT_FILE_PIPES;
    use proptest::prelude::*;

    /// The scheduler as it was before it learnt the occupied set: a walk over all 256 slots
    /// (2 * 256 + 1 visits at most). The reference that `next_among` must match.
    #[derive(Debug, Clone, Default)]
    struct FullScan {
        deficit: Vec<u32>,
        cursor: usize,
        in_visit: bool,
    }

    impl FullScan {
        fn new() -> Self {
            FullScan {
                deficit: vec![0; MAX_CONCURRENT_FILE_PIPES],
                ..Default::default()
            }
        }

        fn next(&mut self, mut next_len: impl FnMut(u8) -> Option<usize>) -> Option<u8> {
            for _ in 0..=2 * MAX_CONCURRENT_FILE_PIPES {
                let slot = self.cursor;
                match next_len(slot as u8) {
                    None => {
                        self.deficit[slot] = 0;
                        self.advance();
                    }
                    Some(len) => {
                        let len = len.min(QUANTUM as usize) as u32;
                        if !self.in_visit {
                            self.deficit[slot] = self.deficit[slot].saturating_add(QUANTUM);
                            self.in_visit = true;
                        }
                        if self.deficit[slot] >= len {
                            self.deficit[slot] -= len;
                            return Some(slot as u8);
                        }
                        self.advance();
                    }
                }
            }
            None
        }

        fn advance(&mut self) {
            self.cursor = (self.cursor + 1) % MAX_CONCURRENT_FILE_PIPES;
            self.in_visit = false;
        }
    }

    #[test]
    fn sparse_equal_transfers_alternate_in_slot_order() {
        // Slots far apart and at the top of the range, the budget one packet at a time.
        let mut drr = DeficitRoundRobin::default();
        let mut occupied = SlotSet::default();
        for s in [255u8, 3, 200] {
            occupied.insert(s);
        }
        let picked: Vec<u8> = (0..9)
            .map(|_| {
                drr.next_among(occupied, |_| Some(MAX_FILE_DATA_SIZE))
                    .unwrap()
            })
            .collect();
        assert_eq!(picked, [3, 200, 255, 3, 200, 255, 3, 200, 255]);
    }

    #[test]
    fn a_slot_with_nothing_to_send_loses_its_deficit() {
        let mut drr = DeficitRoundRobin::default();
        let mut occupied = SlotSet::default();
        occupied.insert(3);
        occupied.insert(200);
        // Slot 3 is credited 1371 and spends 500: 871 left, still in its visit.
        assert_eq!(drr.next_among(occupied, |_| Some(500)), Some(3));
        assert_eq!(drr.deficit[3], QUANTUM - 500);
        // Slot 3 goes idle (paused): it is passed over and its 871 bytes are gone.
        assert_eq!(
            drr.next_among(occupied, |s| (s == 200).then_some(MAX_FILE_DATA_SIZE)),
            Some(200)
        );
        assert_eq!(drr.deficit[3], 0);
        // Back with 500-byte chunks, slot 3 starts from one fresh quantum: two chunks
        // (1000 ≤ 1371 < 1500) and then 200's turn. Had it kept its 871 bytes, it would
        // send four in a row.
        let picked: Vec<u8> = (0..4)
            .map(|_| {
                drr.next_among(occupied, |s| {
                    Some(if s == 3 { 500 } else { MAX_FILE_DATA_SIZE })
                })
                .unwrap()
            })
            .collect();
        assert_eq!(picked, [3, 3, 200, 3]);
    }

    #[test]
    fn an_empty_set_advances_the_cursor_as_the_full_scan_did() {
        let (mut drr, mut reference) = (DeficitRoundRobin::default(), FullScan::new());
        for _ in 0..3 {
            assert_eq!(drr.next_among(SlotSet::default(), |_| None), None);
            assert_eq!(reference.next(|_| None), None);
            assert_eq!(usize::from(drr.cursor), reference.cursor);
        }
    }

    proptest! {
        /// Any interleaving of fills, frees, pauses and picks gives the same picks, cursor
        /// and deficits (of occupied slots) as the full scan over 256 slots. A filled slot's
        /// deficit is reset, as `file_send` does; a freed one's sometimes is and sometimes
        /// not, as in `poll_send`'s free of a finished transfer.
        #[test]
        fn matches_the_full_scan(ops in proptest::collection::vec((0u8..6, any::<u8>(), 1usize..=MAX_FILE_DATA_SIZE), 0..300)) {
            let (mut drr, mut reference) = (DeficitRoundRobin::default(), FullScan::new());
            let mut occupied = SlotSet::default();
            // Per slot: the next chunk's length, or None while paused.
            let mut lengths = vec![None; MAX_CONCURRENT_FILE_PIPES];
            // Few distinct slots, so they collide and the cursor wraps past them.
            let slot_of = |x: u8| [0u8, 1, 3, 64, 127, 200, 254, 255][usize::from(x % 8)];
            for (op, x, len) in ops {
                let s = slot_of(x);
                match op {
                    0 => {
                        occupied.insert(s);
                        lengths[usize::from(s)] = Some(len);
                        drr.reset_slot(s);
                        reference.deficit[usize::from(s)] = 0;
                    }
                    1 => {
                        occupied.remove(s);
                        lengths[usize::from(s)] = None;
                        if x % 2 == 0 {
                            drr.reset_slot(s);
                            reference.deficit[usize::from(s)] = 0;
                        }
                    }
                    2 => lengths[usize::from(s)] = lengths[usize::from(s)].xor(Some(len)).filter(|_| occupied.contains(s)),
                    _ => {
                        let got = drr.next_among(occupied, |s| lengths[usize::from(s)]);
                        let want = reference.next(|s| lengths[usize::from(s)]);
                        prop_assert_eq!(got, want);
                        prop_assert_eq!(usize::from(drr.cursor), reference.cursor);
                        for o in occupied.iter() {
                            let ours = drr.deficit.get(usize::from(o)).copied().unwrap_or(0);
                            prop_assert_eq!(ours, reference.deficit[usize::from(o)]);
                        }
                        // in_visit only matters while the cursor's slot is occupied.
                        if occupied.contains(drr.cursor) {
                            prop_assert_eq!(drr.in_visit, reference.in_visit);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn equal_transfers_alternate_even_one_packet_at_a_time() {
        let mut drr = DeficitRoundRobin::default();
        let active = [3u8, 7, 200];
        let mut counts = [0usize; 256];
        for _ in 0..300 {
            let s = drr
                .next(|s| active.contains(&s).then_some(MAX_FILE_DATA_SIZE))
                .unwrap();
            counts[usize::from(s)] += 1;
        }
        assert_eq!((counts[3], counts[7], counts[200]), (100, 100, 100));
    }

    #[test]
    fn short_chunks_earn_their_bytes_not_their_packets() {
        // A slot sending 500-byte chunks gets more packets but a similar byte share.
        let mut drr = DeficitRoundRobin::default();
        let mut bytes = [0usize; 2];
        for _ in 0..2000 {
            let s = drr
                .next(|s| match s {
                    0 => Some(MAX_FILE_DATA_SIZE),
                    1 => Some(500),
                    _ => None,
                })
                .unwrap();
            bytes[usize::from(s)] += if s == 0 { MAX_FILE_DATA_SIZE } else { 500 };
        }
        let (a, b) = (bytes[0] as f64, bytes[1] as f64);
        assert!((a / b - 1.0).abs() < 0.05, "{a} vs {b}");
    }

    #[test]
    fn nothing_to_send_gives_none() {
        let mut drr = DeficitRoundRobin::default();
        assert_eq!(drr.next(|_| None), None);
    }
}
