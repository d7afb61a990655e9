//! When the receiver sends request packets (docs/transport.md §3.4; wire format unchanged, only
//! the timing is ours).
//!
//! - at once when a new hole appears (the sender's loss detection then runs on fresh
//!   information), at most one per [`HOLE_MIN_GAP`]. Not also when a hole fills: that
//!   gives fewer spurious CUBIC resends under jitter but worse RTT tracking for BBR on the
//!   500 ms / 3 % path (mean error 0.29 rather than 0.14 in `transport_rtt`);
//! - after every [`PACKETS_PER_REQUEST`] data packets, and at least every
//!   [`MAX_ACK_DELAY`] while data arrives or holes remain;
//! - not at all when there is nothing to acknowledge. Any data packet of ours carries our
//!   `buffer_start`, so one sent while the window has no holes acknowledges as well as a
//!   request would ([`AckTiming::on_data_sent`]). No request goes out on an idle timer
//!   (c-toxcore sends one at least every 1000 ms, `CRYPTO_SEND_PACKET_INTERVAL`): that would
//!   wake an idle node once a second per friend, where the whole node's budget is about one
//!   wake-up a second in all. What idle requests would give is kept by other means: a lost
//!   acknowledgement is repaired by the sender's PTO (ours) or by the next request a
//!   c-toxcore sender provokes (below), and the session is kept alive by friend_connection's
//!   ALIVE every 8 s.
//! - in answer to a request from the peer when we have sent nothing for
//!   [`KEEPALIVE_INTERVAL`]: c-toxcore sends a request every second and counts its direct
//!   UDP path dead after `UDP_DIRECT_TIMEOUT` = 8 s without a datagram from us (docs/protocol.md
//!   §2.9), after which it sends only short packets directly. Answering costs no wake-up:
//!   the peer's request already woke us. A rustox peer sends no idle requests, so two
//!   rustox nodes exchange only ALIVEs and their acknowledgements when idle;
//! - at once when the sender side asks to advertise `buffer_end` (PTO);
//! - later, toward a sender that shows c-toxcore's 1 s request cadence: a request due
//!   while a hole it was asked for is still on its way waits for it (200 ms at most), since
//!   such a sender resends a hole on every request that names it after its first resend
//!   ([`SenderWatch`], `Transport::request_due` in receiver.rs).

use std::time::Duration;

use super::sender_watch::SenderWatch;
use crate::Timestamp;

/// QUIC's default max_ack_delay (RFC 9000 §18.2), our request interval while data flows.
pub(crate) const MAX_ACK_DELAY: Duration = Duration::from_millis(25);
/// How long we may stay silent before a request from the peer is answered with one of ours:
/// half of c-toxcore's `UDP_DIRECT_TIMEOUT` (8 s, docs/protocol.md §2.9), so one lost answer
/// still keeps its direct path alive.
pub(crate) const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(4);
/// Data packets per request while data flows (QUIC acks every 2; requests are bigger and
/// encrypted, so every 8 — docs/transport.md §3.4).
pub(crate) const PACKETS_PER_REQUEST: u32 = 8;
/// Rate limit of hole-triggered requests.
const HOLE_MIN_GAP: Duration = Duration::from_millis(1);

/// Request timing state of the receive side.
#[derive(Debug, Clone)]
pub(crate) struct AckTiming {
    last_request: Timestamp,
    /// Our last datagram of any kind on the session (request or data).
    last_sent: Timestamp,
    packets_since: u32,
    new_hole: bool,
    advertise: bool,
    /// A peer's request found us silent for [`KEEPALIVE_INTERVAL`]: answer it.
    keepalive: bool,
    /// What the peer's sender is, and when a request would make a c-toxcore sender resend
    /// a packet already on its way.
    pub(crate) watch: SenderWatch,
}

impl AckTiming {
    pub(crate) fn new(now: Timestamp) -> Self {
        Self {
            last_request: now,
            last_sent: now,
            packets_since: 0,
            new_hole: false,
            advertise: false,
            keepalive: false,
            watch: SenderWatch::default(),
        }
    }

    /// A lossless packet arrived; `new_hole` if it skipped a number.
    pub(crate) fn on_packet(&mut self, new_hole: bool) {
        self.packets_since = self.packets_since.saturating_add(1);
        self.new_hole |= new_hole;
    }

    /// The sender side wants `buffer_end` advertised now (tail-loss probe).
    pub(crate) fn request_advertise(&mut self) {
        self.advertise = true;
    }

    /// A request from the peer arrived at `now`: answered with one of ours if we have been
    /// silent for [`KEEPALIVE_INTERVAL`].
    pub(crate) fn on_peer_request(&mut self, now: Timestamp) {
        self.watch.on_peer_request(now);
        if now >= self.last_sent + KEEPALIVE_INTERVAL {
            self.keepalive = true;
        }
    }

    /// When the next request is due, if one is; `holes` = the receive window has holes.
    pub(crate) fn due(&self, holes: bool) -> Option<Timestamp> {
        if self.advertise || self.keepalive {
            return Some(self.last_request);
        }
        if self.new_hole {
            return Some(self.last_request + HOLE_MIN_GAP);
        }
        if self.packets_since >= PACKETS_PER_REQUEST {
            return Some(self.last_request);
        }
        if self.packets_since > 0 || holes {
            return Some(self.last_request + MAX_ACK_DELAY);
        }
        None
    }

    /// A data packet of ours went out at `now`; `acks_all`: the receive window has no holes,
    /// so its `buffer_start` acknowledged everything received.
    pub(crate) fn on_data_sent(&mut self, now: Timestamp, acks_all: bool) {
        self.last_sent = now;
        if acks_all {
            self.packets_since = 0;
            self.new_hole = false;
        }
    }

    /// When the last request went out.
    pub(crate) fn last_request(&self) -> Timestamp {
        self.last_request
    }

    /// A request was sent at `now`.
    pub(crate) fn on_sent(&mut self, now: Timestamp) {
        self.last_request = now;
        self.last_sent = now;
        self.keepalive = false;
        self.packets_since = 0;
        self.new_hole = false;
        self.advertise = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hole_is_reported_promptly_and_flowing_data_every_25ms() {
        let t0 = Timestamp::from_secs(5);
        let mut a = AckTiming::new(t0);
        assert_eq!(a.due(false), None);
        a.on_packet(false);
        assert_eq!(a.due(false), Some(t0 + MAX_ACK_DELAY));
        a.on_packet(true);
        assert_eq!(a.due(true), Some(t0 + HOLE_MIN_GAP));
        a.on_sent(t0 + HOLE_MIN_GAP);
        assert_eq!(a.due(true), Some(t0 + HOLE_MIN_GAP + MAX_ACK_DELAY));
        assert_eq!(a.due(false), None);
    }

    #[test]
    fn a_data_packet_acknowledges_unless_there_are_holes() {
        let t0 = Timestamp::from_secs(5);
        let mut a = AckTiming::new(t0);
        a.on_packet(false);
        a.on_data_sent(t0, false);
        assert_eq!(a.due(true), Some(t0 + MAX_ACK_DELAY));
        a.on_data_sent(t0, true);
        assert_eq!(a.due(false), None);
    }

    #[test]
    fn peer_requests_are_answered_only_after_a_silence() {
        let t0 = Timestamp::from_secs(5);
        let mut a = AckTiming::new(t0);
        a.on_peer_request(t0 + Duration::from_secs(1));
        assert_eq!(a.due(false), None);
        let late = t0 + KEEPALIVE_INTERVAL;
        a.on_peer_request(late);
        assert_eq!(a.due(false), Some(t0));
        a.on_sent(late);
        assert_eq!(a.due(false), None);
        a.on_data_sent(late + Duration::from_secs(3), true);
        a.on_peer_request(late + KEEPALIVE_INTERVAL);
        assert_eq!(a.due(false), None);
    }
}
