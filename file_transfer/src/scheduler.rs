//! Deficit round-robin across outgoing transfers (transport.md §3.9).
//!
//! The send budget is shared packet by packet: each visit to a transfer credits it one
//! quantum of bytes (1371, a full chunk) and it may send while its deficit covers the next
//! chunk. The cursor and the deficit of the transfer being visited persist across calls, so
//! fairness holds even when the budget arrives one packet at a time. Since no chunk exceeds
//! the quantum, the scan always finds a chunk within one pass over the 256 slots.

use crate::number::MAX_CONCURRENT_FILE_PIPES;
use crate::packet::MAX_FILE_DATA_SIZE;

/// Bytes credited per visit: one full chunk, so equal transfers alternate chunk by chunk.
const QUANTUM: u32 = MAX_FILE_DATA_SIZE as u32;

/// DRR state over the 256 outgoing slots.
#[derive(Debug, Clone)]
pub(crate) struct DeficitRoundRobin {
    deficit: Vec<u32>,
    cursor: usize,
    /// The slot at `cursor` has already been credited for the current visit.
    in_visit: bool,
}

impl Default for DeficitRoundRobin {
    fn default() -> Self {
        DeficitRoundRobin {
            deficit: vec![0; MAX_CONCURRENT_FILE_PIPES],
            cursor: 0,
            in_visit: false,
        }
    }
}

impl DeficitRoundRobin {
    /// Pick the slot that sends the next chunk. `next_len(slot)` gives the length of the
    /// slot's next chunk (≤ 1371), or `None` when it has nothing to send now.
    pub fn next(&mut self, mut next_len: impl FnMut(u8) -> Option<usize>) -> Option<u8> {
        // Two passes: the first may only finish the current visit and reset idle slots.
        for _ in 0..=2 * MAX_CONCURRENT_FILE_PIPES {
            let slot = self.cursor;
            match next_len(slot as u8) {
                None => {
                    // DRR: an empty queue loses its deficit.
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

    /// Forget a slot's credit (transfer ended or reset).
    pub fn reset_slot(&mut self, slot: u8) {
        self.deficit[usize::from(slot)] = 0;
    }

    fn advance(&mut self) {
        self.cursor = (self.cursor + 1) % MAX_CONCURRENT_FILE_PIPES;
        self.in_visit = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
