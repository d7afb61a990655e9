//! The send array (docs/protocol.md §2.8, docs/transport.md §3.2).
//!
//! A window of at most 32768 packet numbers `[start, end)` (serial, wrapping u32). Slot
//! `start + i` lives at index `i` of a `VecDeque` that holds only what is queued or in
//! flight, so an idle array costs nothing and a busy one gives its memory back when it
//! drains. An acknowledged slot becomes `None` (its payload is freed at once) and the front
//! is popped as soon as it is acknowledged.
//!
//! Every slot keeps its first send time (never overwritten), its last send time and its
//! transmission count: only packets sent once give RTT or delivery-rate samples (Karn's
//! rule, docs/design.md lesson 1).

use std::collections::VecDeque;

use super::cc::PacketInfo;
use super::TransportError;
use crate::Timestamp;

/// CRYPTO_PACKET_BUFFER_SIZE (docs/protocol.md §2.8): the window in packets.
pub(crate) const WINDOW: u32 = 32768;

/// Where a queued packet is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotState {
    /// Queued, never transmitted.
    Unsent,
    /// Transmitted, counted in bytes_in_flight.
    InFlight,
    /// Declared lost, waiting in the resend queue; not in flight.
    Lost,
}

/// One queued or unacknowledged lossless packet.
#[derive(Debug, Clone)]
pub(crate) struct SendSlot {
    pub(crate) payload: Vec<u8>,
    pub(crate) state: SlotState,
    /// First transmission time; set once, never overwritten.
    pub(crate) first_sent: Timestamp,
    /// Latest transmission time; drives loss ageing and PTO.
    pub(crate) last_sent: Timestamp,
    /// Number of transmissions (0 while unsent; saturating).
    pub(crate) tx_count: u8,
    /// A request named this slot since its last transmission.
    pub(crate) nacked: bool,
    /// That request named this slot last, right after a slot it passed: the shape of our
    /// receiver's tail entry (the first number past its highest received), which is
    /// usually a packet still on its way, not a hole. Convicted only after a PTO.
    pub(crate) nack_is_tail: bool,
    /// Declared lost at least once (for spurious-loss detection).
    pub(crate) declared_lost: bool,
    /// Largest-acked distance when it was declared lost (reorder distance if spurious).
    pub(crate) lost_distance: u32,
    /// `sent_end` at the latest retransmission: packets numbered below it were sent
    /// before this copy, so they may have waited behind this packet's hole.
    pub(crate) resend_boundary: u32,
    /// The congestion controller's per-packet record, opaque to the array.
    pub(crate) info: PacketInfo,
}

impl SendSlot {
    pub(crate) fn new(payload: Vec<u8>) -> Self {
        Self {
            payload,
            state: SlotState::Unsent,
            first_sent: Timestamp::ZERO,
            last_sent: Timestamp::ZERO,
            tx_count: 0,
            nacked: false,
            nack_is_tail: false,
            declared_lost: false,
            lost_distance: 0,
            resend_boundary: 0,
            info: PacketInfo::default(),
        }
    }

    /// Payload bytes, as counted in flight.
    pub(crate) fn size(&self) -> u64 {
        self.payload.len() as u64
    }
}

/// The send window.
#[derive(Debug, Clone)]
pub(crate) struct SendArray {
    start: u32,
    slots: VecDeque<Option<SendSlot>>,
    /// Payload bytes of the held slots.
    payload_bytes: usize,
}

/// What one slot of the ring costs, payload aside.
pub(crate) const SEND_SLOT_BYTES: usize = std::mem::size_of::<Option<SendSlot>>();

impl SendArray {
    pub(crate) fn new(start: u32) -> Self {
        Self {
            start,
            slots: VecDeque::new(),
            payload_bytes: 0,
        }
    }

    /// Oldest unacknowledged packet number (our `buffer_start`).
    pub(crate) fn start(&self) -> u32 {
        self.start
    }

    /// The number the next queued packet gets (our `buffer_end`).
    pub(crate) fn end(&self) -> u32 {
        self.start.wrapping_add(self.slots.len() as u32)
    }

    /// Slots in the window, holes included.
    pub(crate) fn len(&self) -> u32 {
        self.slots.len() as u32
    }

    /// Free slots before the window is full.
    pub(crate) fn free(&self) -> u32 {
        WINDOW - self.len()
    }

    /// Offset of `pn` in the window, if it lies inside.
    pub(crate) fn offset(&self, pn: u32) -> Option<u32> {
        let off = pn.wrapping_sub(self.start);
        (off < self.len()).then_some(off)
    }

    /// True if `pn` lies before `start` (already acknowledged), serially within a window.
    pub(crate) fn is_before_start(&self, pn: u32) -> bool {
        let back = self.start.wrapping_sub(pn);
        back != 0 && back <= WINDOW
    }

    pub(crate) fn push(&mut self, slot: SendSlot) -> Result<u32, TransportError> {
        if self.len() >= WINDOW {
            return Err(TransportError::SendQueueFull);
        }
        let pn = self.end();
        self.payload_bytes += slot.payload.len();
        self.slots.push_back(Some(slot));
        Ok(pn)
    }

    pub(crate) fn get(&self, pn: u32) -> Option<&SendSlot> {
        let off = self.offset(pn)?;
        self.slots.get(off as usize)?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, pn: u32) -> Option<&mut SendSlot> {
        let off = self.offset(pn)?;
        self.slots.get_mut(off as usize)?.as_mut()
    }

    /// Acknowledges (removes) `pn`, returning its slot if it was still held.
    pub(crate) fn take(&mut self, pn: u32) -> Option<SendSlot> {
        let off = self.offset(pn)?;
        let slot = self.slots.get_mut(off as usize)?.take();
        if let Some(s) = &slot {
            self.payload_bytes -= s.payload.len();
        }
        self.pop_acked_front();
        slot
    }

    /// Acknowledges everything below `new_start` (the cumulative ack), calling `f` for every
    /// slot still held. The caller has checked `new_start` lies within `[start, end]`.
    pub(crate) fn ack_below(&mut self, new_start: u32, mut f: impl FnMut(u32, SendSlot)) {
        let count = new_start.wrapping_sub(self.start).min(self.len());
        for _ in 0..count {
            let pn = self.start;
            if let Some(Some(slot)) = self.slots.pop_front() {
                self.payload_bytes -= slot.payload.len();
                f(pn, slot);
            }
            self.start = self.start.wrapping_add(1);
        }
        self.pop_acked_front();
    }

    fn pop_acked_front(&mut self) {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.start = self.start.wrapping_add(1);
        }
        self.maybe_shrink();
    }

    /// Gives memory back once the window has drained (requirement: a busy transport
    /// grows only with data in flight and returns it).
    fn maybe_shrink(&mut self) {
        let cap = self.slots.capacity();
        if self.slots.is_empty() {
            self.slots.shrink_to(0);
        } else if cap > 64 && self.slots.len() * 4 < cap {
            self.slots.shrink_to(self.slots.len() * 2);
        }
    }

    /// Iterates `(pn, slot)` over held slots, oldest first.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = (u32, &SendSlot)> + '_ {
        let start = self.start;
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(i, s)| s.as_ref().map(|s| (start.wrapping_add(i as u32), s)))
    }

    /// Iterates `(pn, slot)` mutably over held slots, oldest first.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut SendSlot)> + '_ {
        let start = self.start;
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(move |(i, s)| s.as_mut().map(|s| (start.wrapping_add(i as u32), s)))
    }

    /// Iterates `(pn, slot)` mutably over held slots from window offset `from` on.
    pub(crate) fn iter_mut_from(
        &mut self,
        from: u32,
    ) -> impl Iterator<Item = (u32, &mut SendSlot)> + '_ {
        let start = self.start;
        self.slots
            .iter_mut()
            .enumerate()
            .skip(from as usize)
            .filter_map(move |(i, s)| s.as_mut().map(|s| (start.wrapping_add(i as u32), s)))
    }

    /// Payload bytes held and the slots of the ring: what the memory budget counts.
    pub(crate) fn accounted_bytes(&self) -> usize {
        self.payload_bytes + self.slots.len() * SEND_SLOT_BYTES
    }

    /// Heap bytes: the ring plus the payloads it holds.
    pub(crate) fn memory_usage(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Option<SendSlot>>()
            + self
                .iter()
                .map(|(_, s)| s.payload.capacity())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot() -> SendSlot {
        SendSlot::new(vec![16])
    }

    #[test]
    fn window_wraps_serially() {
        let mut a = SendArray::new(u32::MAX - 1);
        for _ in 0..4 {
            a.push(slot()).unwrap();
        }
        assert_eq!(a.end(), 2);
        assert_eq!(a.offset(0), Some(2));
        assert!(a.is_before_start(u32::MAX - 2));
        let mut acked = Vec::new();
        a.ack_below(1, |pn, _| acked.push(pn));
        assert_eq!(acked, vec![u32::MAX - 1, u32::MAX, 0]);
        assert_eq!(a.start(), 1);
    }

    #[test]
    fn full_window_refuses() {
        let mut a = SendArray::new(0);
        for _ in 0..WINDOW {
            a.push(slot()).unwrap();
        }
        assert_eq!(a.push(slot()), Err(TransportError::SendQueueFull));
        a.ack_below(WINDOW, |_, _| {});
        assert_eq!(a.len(), 0);
        assert!(a.memory_usage() < 64 * std::mem::size_of::<Option<SendSlot>>() * 2 + 1);
    }

    #[test]
    fn taking_the_front_advances_start() {
        let mut a = SendArray::new(10);
        for _ in 0..3 {
            a.push(slot()).unwrap();
        }
        assert!(a.take(11).is_some());
        assert_eq!(a.start(), 10);
        assert!(a.take(10).is_some());
        assert_eq!(a.start(), 12);
    }
}
