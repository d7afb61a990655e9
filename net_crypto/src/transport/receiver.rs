//! Receiving: lossless packets into the receive array, in-order delivery to the layer
//! above, and the request (NACK) packets that report the holes (docs/protocol.md §2.7,
//! docs/transport.md §3.4; when a request is due is [`super::ack_timing`]'s).
//!
//! Our requests add a tail entry: with holes below a received tail they also name the
//! first number past the highest received, so the walk acknowledges the packets after the
//! last hole at once (fresh RTT and rate samples). A c-toxcore sender may resend that one
//! packet if it is older than its `rtt_time` (at most one extra packet per request of
//! ours, and only while holes exist); one at or past its `buffer_end` ends its walk.

use super::request;
use super::send_array::WINDOW;
use super::{Transport, TransportError, MAX_PAYLOAD};
use crate::Timestamp;

/// Tail entries remembered to recognise a legacy sender's resend of one. Its resend
/// reaches us about one RTT after our request, and we send a request per 8 packets
/// (ack_timing), so 256 cover an RTT of up to 2048 packets (e.g. 8 Mbit/s at 2.8 s,
/// 100 Mbit/s at 220 ms); at most 1 KiB, cut to [`TAIL_NAMED_IDLE`] when drained.
const TAIL_NAMED_KEPT: usize = 256;
/// Tail entries kept while the receive window is empty (transport_memory's idle bound).
const TAIL_NAMED_IDLE: usize = 16;
/// Duplicates of tail-named packets after which tail entries stop. Our own sender's
/// spurious resends are rare (0–12 duplicates per 32 MiB on every profile, few of them
/// tail-named), but at 1 a single one turned tail entries off on lossy (BBR RTT error
/// 0.03 → 0.07–0.12). At 4, the legacy model's sender on bursty (8 MiB, seeds 1–3)
/// gets 6/77/41 duplicates instead of 85/107/85 without the check (0 without tail
/// entries), and our lossy RTT error stays 0.03.
const TAIL_DUPLICATES_OFF: u32 = 4;

impl Transport {
    /// True if lossless packet `packet_number` from the peer was received (held or already
    /// delivered). For tests and diagnostics.
    pub fn is_received(&self, packet_number: u32) -> bool {
        let back = self.recv.start().wrapping_sub(packet_number);
        if back != 0 && back <= WINDOW {
            return true;
        }
        self.recv
            .is_filled(packet_number.wrapping_sub(self.recv.start()))
    }

    /// The next lossless packet number we have not yet delivered (our cumulative ack).
    pub fn recv_buffer_start(&self) -> u32 {
        self.recv.start()
    }

    /// A lossless packet from the peer.
    pub fn on_lossless(
        &mut self,
        now: Timestamp,
        packet_number: u32,
        payload: &[u8],
    ) -> Result<(), TransportError> {
        let _ = now;
        if payload.is_empty() || payload.len() > MAX_PAYLOAD {
            return Err(TransportError::BadLength);
        }
        let account = &self.account;
        match self
            .recv
            .store(packet_number, payload, |extra| account.may_grow(extra))
        {
            Ok(stored) => {
                self.sync_array_account();
                self.stats.packets_received += 1;
                self.ack_timing.on_packet(stored.new_hole);
                self.cc.on_packet_received();
                Ok(())
            }
            Err(TransportError::Duplicate) => {
                self.stats.duplicates_received += 1;
                if self.tail_named.contains(&packet_number) {
                    self.tail_duplicates += 1;
                }
                // The sender may not have seen our ack: answer soon.
                self.ack_timing.on_packet(false);
                Err(TransportError::Duplicate)
            }
            Err(e) => Err(e),
        }
    }

    /// The peer's send `buffer_end`, from a lossy/request/kill packet header.
    pub fn on_peer_buffer_end(
        &mut self,
        now: Timestamp,
        buffer_end: u32,
    ) -> Result<(), TransportError> {
        let _ = now;
        self.recv.set_end(buffer_end)
    }

    /// The next in-order lossless payload for the layer above.
    pub fn poll_delivered(&mut self) -> Option<Vec<u8>> {
        let p = self.recv.pop()?;
        self.sync_array_account();
        self.stats.bytes_delivered += p.len() as u64;
        Some(p)
    }

    /// When our next request is due ([`Timer::Request`](super::timer::Timer::Request)).
    pub(super) fn request_due(&self) -> Option<Timestamp> {
        match self.cc.request_interval(self.recv.len()) {
            // c-toxcore's receiver: its own interval (1 s when receiving slowly), no
            // hole-triggered requests.
            Some(interval) => Some(self.ack_timing.last_request() + interval),
            None => self.ack_timing.due(self.recv.holes() > 0),
        }
    }

    /// A data packet of ours (lossless or lossy) went out carrying our `buffer_start`.
    pub fn on_data_sent(&mut self, now: Timestamp) {
        self.ack_timing.on_data_sent(now, self.recv.holes() == 0);
    }

    /// A request payload (id byte 1 first) when one is due (docs/transport.md §3.4).
    pub fn poll_request(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        if self.request_due().is_none_or(|due| now < due) {
            return None;
        }
        let recv = &self.recv;
        let len = recv.len();
        // Tail entry (wire-compatible; the encoding is the receiver's choice): with holes
        // below a received tail, also name the first number past the highest received, so
        // the walk acknowledges everything up to that packet now instead of when the next
        // hole or the repair arrives. Without it the packets after the last hole are
        // acknowledged late and in bursts: stale RTT samples (vpn300: srtt +7.6 % above
        // the truth) and bursty delivery-rate samples. The legacy model stays c-toxcore's
        // `generate_request_packet`.
        //
        // A c-toxcore sender resends a named packet if it was sent more than its minimum
        // RTT ago, so under jitter or a queue it resends the tail packet still in flight
        // (legacy model on bursty, 8 MiB: ~90 duplicates, resent/lost 1.0 → 2.0 with tail
        // entries; none on vpn300/lossy/wan100, which have no jitter). A few duplicates
        // of tail-named packets turn them off for the session ([`TAIL_DUPLICATES_OFF`]);
        // our own sender holds a lone trailing NACK for a PTO and seldom causes one.
        let tail = self.cc.sends_tail_entries()
            && self.tail_duplicates < TAIL_DUPLICATES_OFF
            && recv.holes() > 0
            && len > 0
            && recv.is_filled(len - 1);
        let req = if tail {
            let pn = recv.start().wrapping_add(len);
            if self.tail_named.len() >= TAIL_NAMED_KEPT {
                self.tail_named.pop_front();
            }
            self.tail_named.push_back(pn);
            request::encode(len + 1, |o| o < len && recv.is_filled(o))
        } else {
            if len == 0 && self.tail_named.capacity() > TAIL_NAMED_IDLE {
                // Drained: keep only the newest entries (a legacy resend of one may still
                // be on its way) and give the memory back.
                let keep = self.tail_named.len().min(TAIL_NAMED_IDLE);
                self.tail_named.drain(..self.tail_named.len() - keep);
                self.tail_named.shrink_to(TAIL_NAMED_IDLE);
            }
            request::encode(len, |o| recv.is_filled(o))
        };
        self.ack_timing.on_sent(now);
        self.stats.requests_sent += 1;
        Some(req)
    }
}
