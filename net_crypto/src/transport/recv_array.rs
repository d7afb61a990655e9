//! The receive array (docs/protocol.md §2.8, §2.6 step 5).
//!
//! Holds out-of-order lossless packets in `[start, start + 32768)`. `start` is the next
//! packet not yet handed to the layer above — the cumulative ack carried on every data
//! packet — so it moves only when `pop` delivers, and what the layer above has not taken
//! stays inside the bounded window. `end` is the peer's `buffer_end` as far as we know it
//! (from packet numbers received and from lossy/request headers); the slots between the
//! highest packet received and `end` are materialised only when the request is encoded.

use std::collections::VecDeque;

use super::send_array::WINDOW;
use super::TransportError;

/// The receive window.
#[derive(Debug, Clone)]
pub(crate) struct RecvArray {
    start: u32,
    end: u32,
    /// Slots `start ..= highest received`; `None` is a hole.
    slots: VecDeque<Option<Vec<u8>>>,
    /// Number of `Some` slots.
    held: u32,
    /// Payload bytes of the `Some` slots.
    held_bytes: usize,
}

/// What one slot of the ring costs, payload aside.
const SLOT_BYTES: usize = std::mem::size_of::<Option<Vec<u8>>>();

/// What storing a packet did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stored {
    /// The packet opened a new hole below it (it skipped at least one number).
    pub(crate) new_hole: bool,
    /// The packet filled a hole (it arrived after a later one).
    pub(crate) filled_hole: bool,
}

impl RecvArray {
    pub(crate) fn new(start: u32) -> Self {
        Self {
            start,
            end: start,
            slots: VecDeque::new(),
            held: 0,
            held_bytes: 0,
        }
    }

    pub(crate) fn start(&self) -> u32 {
        self.start
    }

    /// Window length `end − start` (holes included).
    pub(crate) fn len(&self) -> u32 {
        self.end.wrapping_sub(self.start)
    }

    /// True if slot `start + offset` holds a packet.
    pub(crate) fn is_filled(&self, offset: u32) -> bool {
        matches!(self.slots.get(offset as usize), Some(Some(_)))
    }

    /// Slots up to and including the highest packet received (`len` counts on to the
    /// peer's `buffer_end`, which may lie beyond: packets sent but not yet received).
    pub(crate) fn received_len(&self) -> u32 {
        self.slots.len() as u32
    }

    /// Number of holes in `[start, end)`.
    pub(crate) fn holes(&self) -> u32 {
        self.len() - self.held
    }

    /// Stores packet `pn`. Errors: `OutsideWindow` if it lies beyond the window,
    /// `Duplicate` if already held or already delivered, `OverBudget` if it is not the next
    /// expected packet and `may_grow` refuses the bytes it would add (array_budget.rs).
    pub(crate) fn store(
        &mut self,
        pn: u32,
        payload: &[u8],
        may_grow: impl FnOnce(usize) -> bool,
    ) -> Result<Stored, TransportError> {
        let off = pn.wrapping_sub(self.start);
        if off >= WINDOW {
            // Behind the window by at most one window: a late duplicate.
            let back = self.start.wrapping_sub(pn);
            if back != 0 && back <= WINDOW {
                return Err(TransportError::Duplicate);
            }
            return Err(TransportError::OutsideWindow);
        }
        let off_us = off as usize;
        if self.is_filled(off) {
            return Err(TransportError::Duplicate);
        }
        let highest_before = self.slots.len();
        if off_us > 0 {
            let new_slots = (off_us + 1).saturating_sub(highest_before);
            if !may_grow(payload.len() + new_slots * SLOT_BYTES) {
                return Err(TransportError::OverBudget);
            }
        }
        let new_hole = off_us > highest_before;
        let filled_hole = off_us < highest_before;
        while self.slots.len() <= off_us {
            self.slots.push_back(None);
        }
        self.slots[off_us] = Some(payload.to_vec());
        self.held += 1;
        self.held_bytes += payload.len();
        let after = pn.wrapping_add(1);
        if after.wrapping_sub(self.start) > self.len() {
            self.end = after;
        }
        Ok(Stored {
            new_hole,
            filled_hole,
        })
    }

    /// Learns the peer's `buffer_end`; only moves forward, never past the window.
    pub(crate) fn set_end(&mut self, end: u32) -> Result<(), TransportError> {
        let off = end.wrapping_sub(self.start);
        if off > WINDOW {
            let back = self.start.wrapping_sub(end);
            if back <= WINDOW {
                return Ok(()); // stale header, behind us: nothing to learn
            }
            return Err(TransportError::OutsideWindow);
        }
        if off > self.len() {
            self.end = end;
        }
        Ok(())
    }

    /// Delivers the next in-order packet, if held.
    pub(crate) fn pop(&mut self) -> Option<Vec<u8>> {
        if !matches!(self.slots.front(), Some(Some(_))) {
            return None;
        }
        let p = self.slots.pop_front().flatten();
        self.start = self.start.wrapping_add(1);
        self.held -= 1;
        self.held_bytes -= p.as_ref().map_or(0, Vec::len);
        let cap = self.slots.capacity();
        if self.slots.is_empty() {
            // Drained: an idle session holds no ring at all.
            self.slots.shrink_to(0);
        } else if cap > 64 && self.slots.len() * 4 < cap {
            self.slots.shrink_to(self.slots.len() * 2);
        }
        p
    }

    /// Payload bytes held and the slots of the ring: what the memory budget counts.
    pub(crate) fn accounted_bytes(&self) -> usize {
        self.held_bytes + self.slots.len() * SLOT_BYTES
    }

    pub(crate) fn memory_usage(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Option<Vec<u8>>>()
            + self
                .slots
                .iter()
                .flatten()
                .map(|p| p.capacity())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_packets_are_delivered_in_order_once() {
        let mut r = RecvArray::new(u32::MAX);
        assert!(r.store(1, &[3], |_| true).unwrap().new_hole);
        assert_eq!(r.pop(), None);
        assert!(r.store(0, &[2], |_| true).unwrap().filled_hole);
        assert_eq!(r.store(0, &[2], |_| true), Err(TransportError::Duplicate));
        r.store(u32::MAX, &[1], |_| true).unwrap();
        assert_eq!(r.pop(), Some(vec![1]));
        assert_eq!(r.pop(), Some(vec![2]));
        assert_eq!(r.pop(), Some(vec![3]));
        assert_eq!(r.start(), 2);
        assert_eq!(r.store(0, &[2], |_| true), Err(TransportError::Duplicate));
        assert_eq!(
            r.store(2 + WINDOW, &[2], |_| true),
            Err(TransportError::OutsideWindow)
        );
    }

    #[test]
    fn past_a_hole_only_what_the_budget_allows_is_stored() {
        let mut r = RecvArray::new(0);
        // Packet 3 would add its payload and slots 0..=3.
        let asked = std::cell::Cell::new(0);
        let refuse = |extra| {
            asked.set(extra);
            false
        };
        assert_eq!(
            r.store(3, &[1; 10], refuse),
            Err(TransportError::OverBudget)
        );
        assert_eq!(asked.get(), 10 + 4 * SLOT_BYTES);
        assert_eq!(r.accounted_bytes(), 0);
        // The next expected packet is stored whatever the budget says.
        r.store(0, &[1; 10], |_| false).unwrap();
        assert_eq!(r.accounted_bytes(), 10 + SLOT_BYTES);
        assert_eq!(r.pop(), Some(vec![1; 10]));
        assert_eq!(r.accounted_bytes(), 0);
    }

    #[test]
    fn end_only_moves_forward() {
        let mut r = RecvArray::new(5);
        r.set_end(10).unwrap();
        r.set_end(7).unwrap();
        assert_eq!(r.len(), 5);
        assert_eq!(r.holes(), 5);
        assert!(r.set_end(5 + WINDOW + 1).is_err());
    }
}
