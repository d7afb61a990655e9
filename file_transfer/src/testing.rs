//! An in-memory [`Session`] for tests and examples: a lossless, in-order pipe with a
//! budget the test controls. Used by this crate's tests and available to the layers above
//! for theirs behind the `testing` feature (off by default, so no normal build holds it);
//! production code uses `rustox_net_crypto::Connection`.

use std::collections::VecDeque;

use rustox_net_crypto::Timestamp;

use crate::session::{Session, SessionRefused};

/// Which method queued a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketClass {
    /// `send_lossless` (requests, controls, chat).
    Control,
    /// `send_bulk` (file data).
    Bulk,
}

/// One side of a lossless pipe. Bulk sends consume budget tokens the test grants with
/// [`MockSession::grant`]; everything sent waits in `outbox` until the test moves it.
#[derive(Debug, Default)]
pub struct MockSession {
    /// Bulk packets still allowed.
    pub budget: usize,
    /// Payloads sent and not yet moved to the peer, with their packet numbers.
    pub outbox: VecDeque<(u32, PacketClass, Vec<u8>)>,
    /// Packet numbers below this have been delivered (the pipe is in order).
    pub delivered_below: u32,
    /// Make `send_lossless` fail (SENDQ paths).
    pub refuse_control: bool,
    /// Make `send_bulk` fail even with budget.
    pub refuse_bulk: bool,
    /// Bulk payload bytes accepted so far.
    pub bulk_bytes_sent: u64,
    next_packet_number: u32,
}

impl MockSession {
    /// A session with no budget.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allow `packets` more bulk packets (replaces the remaining budget).
    pub fn grant(&mut self, packets: usize) {
        self.budget = packets;
    }

    /// Take everything sent so far, marking it delivered (the peer acknowledges at once).
    pub fn drain(&mut self) -> Vec<(u32, PacketClass, Vec<u8>)> {
        let out: Vec<_> = self.outbox.drain(..).collect();
        self.delivered_below = self.next_packet_number;
        out
    }

    /// Take everything sent so far without acknowledging it (a lossless but slow peer).
    pub fn drain_unacked(&mut self) -> Vec<(u32, PacketClass, Vec<u8>)> {
        self.outbox.drain(..).collect()
    }

    fn queue(&mut self, class: PacketClass, payload: &[u8]) -> u32 {
        let n = self.next_packet_number;
        self.next_packet_number = n.wrapping_add(1);
        self.outbox.push_back((n, class, payload.to_vec()));
        n
    }
}

impl Session for MockSession {
    fn send_budget(&mut self, _now: Timestamp) -> usize {
        if self.refuse_bulk {
            0
        } else {
            self.budget
        }
    }

    fn send_lossless(&mut self, _now: Timestamp, payload: &[u8]) -> Result<u32, SessionRefused> {
        if self.refuse_control || payload.is_empty() || payload.len() > 1373 {
            return Err(SessionRefused);
        }
        Ok(self.queue(PacketClass::Control, payload))
    }

    fn send_bulk(&mut self, _now: Timestamp, payload: &[u8]) -> Result<u32, SessionRefused> {
        if self.refuse_bulk || self.budget == 0 || payload.is_empty() || payload.len() > 1373 {
            return Err(SessionRefused);
        }
        self.budget -= 1;
        self.bulk_bytes_sent += payload.len() as u64;
        Ok(self.queue(PacketClass::Bulk, payload))
    }

    fn is_delivered(&self, packet_number: u32) -> bool {
        packet_number < self.delivered_below
    }
}
