//! The net_crypto session as the file layer sees it (docs/transport.md §3.9).
//!
//! File transfers never push into a deep queue: they ask [`Session::send_budget`] how many
//! congestion-controlled packets may be queued *now* and produce no more than that, so a
//! chat message queued by the layer above waits behind at most one pacing quantum of file
//! data. Requests and controls go through [`Session::send_lossless`], which is not limited
//! by the budget (c-toxcore sends them "without congestion control", docs/protocol.md §3.3–3.4).

use rustox_net_crypto::{Connection, Timestamp};

/// The session refused to queue a payload (not established, queue full, no budget, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the session refused the packet")]
pub struct SessionRefused;

/// What the file layer needs from a net_crypto session.
pub trait Session {
    /// How many bulk (FILE_DATA) packets may be queued now. Mutable because the session
    /// remembers the offer: budget left unused when its queues run dry marks the sender
    /// application-limited rather than window-limited.
    fn send_budget(&mut self, now: Timestamp) -> usize;
    /// Queue a control-class lossless payload (id byte first); returns its packet number.
    fn send_lossless(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SessionRefused>;
    /// Queue a bulk lossless payload (id byte first) within the budget; returns its number.
    fn send_bulk(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SessionRefused>;
    /// True once the peer has acknowledged `packet_number`.
    fn is_delivered(&self, packet_number: u32) -> bool;
}

impl Session for Connection {
    fn send_budget(&mut self, now: Timestamp) -> usize {
        Connection::send_budget(self, now)
    }

    fn send_lossless(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SessionRefused> {
        Connection::send_lossless(self, now, payload).map_err(|_| SessionRefused)
    }

    fn send_bulk(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SessionRefused> {
        Connection::send_bulk(self, now, payload).map_err(|_| SessionRefused)
    }

    fn is_delivered(&self, packet_number: u32) -> bool {
        Connection::is_delivered(self, packet_number)
    }
}

impl<S: Session + ?Sized> Session for &mut S {
    fn send_budget(&mut self, now: Timestamp) -> usize {
        (**self).send_budget(now)
    }

    fn send_lossless(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SessionRefused> {
        (**self).send_lossless(now, payload)
    }

    fn send_bulk(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SessionRefused> {
        (**self).send_bulk(now, payload)
    }

    fn is_delivered(&self, packet_number: u32) -> bool {
        (**self).is_delivered(packet_number)
    }
}
