//! Acknowledgements: the peer's cumulative `buffer_start` in every data packet header and
//! its request packets (docs/protocol.md §2.7), turned into freed slots, RTT and delivery-rate
//! samples, and one event for the controller per ack (docs/transport.md §3.2, §3.3).
//!
//! - A request is decoded against the `buffer_start` of its own packet's header (passed to
//!   `on_peer_buffer_start` just before), so a reordered request never acknowledges
//!   packets the peer does not hold.
//! - Packets freed when a retransmission fills a hole were received long before; they
//!   count as delivered but give no RTT sample (cumulative case) and no delivery-rate
//!   credit, which would otherwise inflate BBR's bandwidth estimate.
//! - Karn's rule (no RTT or rate sample from a resent packet) holds for BBR and CUBIC;
//!   the legacy model deliberately breaks it, as c-toxcore does (see `cc::legacy`).

use std::time::Duration;

use super::cc::{AckEvent, NackResponse, PacketInfo};
use super::request::{self, Walk};
use super::send_array::{SendSlot, SlotState};
use super::{serial_lt, Transport, TransportError};
use crate::Timestamp;

/// What one ack event (a buffer_start advance or a request) acknowledged.
#[derive(Debug, Default)]
struct AckBatch {
    packets: u64,
    /// Bytes of acked packets that were counted in flight.
    inflight_bytes: u64,
    /// Bytes of all acked packets (delivered).
    bytes: u64,
    /// Newest never-resent packet: (first_sent, info).
    newest_clean: Option<(Timestamp, PacketInfo)>,
    /// Transmission count of that packet (checked by the Karn invariant).
    newest_clean_tx: u8,
    /// `delivered` snapshot of the newest never-resent packet acked, withheld or not
    /// (BBR's round counting needs only "a packet sent after the round began was acked").
    newest_any_delivered: Option<u64>,
    /// Some acked packet had been resent (a hole filled by a retransmission).
    any_resent: bool,
    /// Bytes of acked packets that had been resent.
    resent_bytes: u64,
    /// Packets numbered below this were sent before a retransmission acked in this
    /// event, so they waited behind its hole: their ack was withheld, not slow.
    withheld_below: Option<u32>,
    /// Bytes of never-resent packets whose ack was withheld that way.
    withheld_bytes: u64,
    /// Spurious losses found, and the largest reorder distance among them.
    spurious: u64,
    spurious_distance: u32,
    /// Largest packet number acked.
    largest: Option<u32>,
    /// Latest last-send time among acked packets.
    newest_sent: Timestamp,
    app_limited: bool,
    /// Packets first sent before this time went on a path the session has left: they are
    /// delivered, but their timing says nothing about the path in use (path_change.rs).
    path_since: Timestamp,
}

impl AckBatch {
    fn since(path_since: Timestamp) -> Self {
        AckBatch {
            path_since,
            ..AckBatch::default()
        }
    }

    fn add(&mut self, now: Timestamp, pn: u32, slot: &SendSlot, min_rtt: Option<Duration>) {
        if slot.state == SlotState::Unsent {
            return;
        }
        self.packets += 1;
        self.bytes += slot.size();
        if slot.state == SlotState::InFlight {
            self.inflight_bytes += slot.size();
        }
        if slot.first_sent < self.path_since {
            // Sent on the previous path: no RTT, delivery-rate or round sample.
        } else if slot.tx_count == 1 {
            let d = slot.info.delivered;
            self.newest_any_delivered = Some(self.newest_any_delivered.map_or(d, |m| m.max(d)));
            // Holes precede the packets they hold back, and the walk goes in packet-number
            // order, so the boundary is known by the time those packets come.
            if self.withheld_below.is_some_and(|b| serial_lt(pn, b)) {
                self.withheld_bytes += slot.size();
            } else if self.newest_clean.is_none_or_older(slot.first_sent) {
                self.newest_clean = Some((slot.first_sent, slot.info));
                self.newest_clean_tx = slot.tx_count;
                self.app_limited = slot.info.is_app_limited;
            }
        } else {
            self.any_resent = true;
            self.resent_bytes += slot.size();
            let b = slot.resend_boundary;
            if self.withheld_below.is_none_or(|cur| serial_lt(cur, b)) {
                self.withheld_below = Some(b);
            }
        }
        // Declared lost, yet acked: still waiting for its resend, or acked sooner than one
        // min RTT after the resend — either way the original copy arrived (docs/transport.md §3.3).
        if slot.declared_lost {
            let early = min_rtt.is_some_and(|m| now - slot.last_sent < m);
            if slot.state == SlotState::Lost || early {
                self.spurious += 1;
                self.spurious_distance = self.spurious_distance.max(slot.lost_distance);
            }
        }
        if self.largest.is_none_or(|l| serial_lt(l, pn)) {
            self.largest = Some(pn);
        }
        self.newest_sent = self.newest_sent.max(slot.last_sent);
    }
}

/// Small helper so the "newest first_sent" comparison reads as what it is.
trait NewestClean {
    fn is_none_or_older(&self, t: Timestamp) -> bool;
}
impl NewestClean for Option<(Timestamp, PacketInfo)> {
    fn is_none_or_older(&self, t: Timestamp) -> bool {
        self.is_none_or(|(s, _)| s <= t)
    }
}

impl Transport {
    /// A round trip the connection layer measured on this path before any data flowed: our
    /// cookie request answered by the peer's cookie response, or our handshake answered by
    /// the peer's first data packet (each sent once, so the reply is unambiguous: Karn's
    /// rule). QUIC's first RTT samples likewise come from its handshake packets (RFC 9002
    /// §5.1); without one, the first PTO waits for kInitialRtt's ≈ 1 s even on an 80 ms
    /// path, and a flight whose acknowledgements are lost stalls for seconds. Ignored once
    /// the data path has given a sample.
    pub(crate) fn on_handshake_rtt(&mut self, now: Timestamp, sample: Duration) {
        if !self.rtt.has_sample() {
            self.rtt.on_sample(now, sample);
        }
    }

    /// The peer's cumulative acknowledgement, from any data packet header.
    pub fn on_peer_buffer_start(
        &mut self,
        now: Timestamp,
        buffer_start: u32,
    ) -> Result<(), TransportError> {
        let start = self.send.start();
        let off = buffer_start.wrapping_sub(start);
        self.peer_header_acked = None;
        if off == 0 {
            self.peer_header_start = Some(buffer_start);
            return Ok(());
        }
        if off > self.sent_end.wrapping_sub(start) {
            if self.send.is_before_start(buffer_start) {
                // A reordered, older header: nothing new, but a request in the same
                // packet is relative to it.
                self.peer_header_start = Some(buffer_start);
                return Ok(());
            }
            return Err(TransportError::OutsideWindow);
        }
        // c-toxcore samples the (overwritten) send time of the packet at buffer_start.
        let oldest_last_sent = self
            .send
            .get(start)
            .filter(|s| s.tx_count > 0)
            .map(|s| s.last_sent);
        let mut batch = AckBatch::since(self.path_since);
        let min_rtt = self.rtt.min_rtt_long();
        self.send
            .ack_below(buffer_start, |pn, slot| batch.add(now, pn, &slot, min_rtt));
        self.peer_header_start = Some(buffer_start);
        self.peer_header_acked = (batch.packets > 0).then_some(batch.newest_sent);
        if let Some(sent) = oldest_last_sent {
            self.cc.on_acked_send_time(now, sent);
        }
        self.finish_ack(now, batch);
        self.detect_lost(now);
        Ok(())
    }

    /// A request packet's payload, without its id byte (docs/protocol.md §2.7).
    ///
    /// The walk starts at the `buffer_start` of the same packet's header (the connection
    /// passes it to [`on_peer_buffer_start`](Self::on_peer_buffer_start) first): a request
    /// reordered behind a newer header is still decoded against the window it was written
    /// for, never shifted onto ours.
    pub fn on_request(&mut self, now: Timestamp, request: &[u8]) -> Result<(), TransportError> {
        // Consumed here, so a request never uses the header of an earlier packet.
        let start = match self.peer_header_start.take() {
            Some(h) if self.send.is_before_start(h) => h,
            _ => self.send.start(),
        };
        let len = self.sent_end.wrapping_sub(start);
        request::validate(request, len)?;
        self.stats.requests_received += 1;
        self.ack_timing.on_peer_request(now);
        let outstanding = self.bytes_in_flight > 0;
        self.last_request_rx = Some(now);
        let min_rtt = self.rtt.min_rtt_long();
        let mut batch = AckBatch::since(self.path_since);
        // c-toxcore's RTT candidate: the newest last send time among the packets freed.
        let mut newest_freed_last_sent: Option<Timestamp> = None;
        let cc = self.cc.as_ref();
        let send = &mut self.send;
        let resend_queue = &mut self.resend_queue;
        let bytes_in_flight = &mut self.bytes_in_flight;
        let largest_nacked = &mut self.largest_nacked;
        let mut reached: Option<u32> = None;
        // (previous walk step, last walk step): the tail-entry shape is [.., Passed, Named].
        let mut last_two: (Option<Walk>, Option<Walk>) = (None, None);
        request::decode(request, len, |off, walk| {
            reached = Some(off);
            last_two = (last_two.1, Some(walk));
            let pn = start.wrapping_add(off);
            match walk {
                Walk::Named => {
                    let Some(slot) = send.get_mut(pn) else { return };
                    slot.nack_is_tail = false;
                    if slot.state != SlotState::InFlight {
                        return;
                    }
                    match cc.on_nack(now, slot.last_sent) {
                        NackResponse::MarkNacked => {
                            slot.nacked = true;
                            if largest_nacked.is_none_or(|l| serial_lt(l, pn)) {
                                *largest_nacked = Some(pn);
                            }
                        }
                        NackResponse::Resend => {
                            slot.state = SlotState::Lost;
                            *bytes_in_flight -= slot.size();
                            resend_queue.push_back(pn);
                        }
                        NackResponse::Ignore => {}
                    }
                }
                Walk::Passed => {
                    if send.get(pn).is_some_and(|s| s.state != SlotState::Unsent) {
                        if let Some(slot) = send.take(pn) {
                            if slot.tx_count > 0 {
                                newest_freed_last_sent =
                                    newest_freed_last_sent.max(Some(slot.last_sent));
                            }
                            batch.add(now, pn, &slot, min_rtt);
                        }
                    }
                }
            }
        })?;
        if let Some(sent) = newest_freed_last_sent {
            self.cc.on_acked_send_time(now, sent);
        }
        // `nacked` means "named by the latest request": a slot beyond this walk is not
        // missing as far as this request says (received after the last hole, or not yet
        // known to the peer). A stale NACK kept from an earlier request would convict a
        // packet whose ack is merely withheld behind a hole (docs/design.md lesson 3).
        if let (Some(r), (Some(Walk::Passed), Some(Walk::Named))) = (reached, last_two) {
            if let Some(slot) = self.send.get_mut(start.wrapping_add(r)) {
                slot.nack_is_tail = slot.nacked;
            }
        }
        let first_unreached = start.wrapping_add(reached.map_or(0, |r| r + 1));
        if let Some(from) = self.send.offset(first_unreached) {
            for (_, slot) in self.send.iter_mut_from(from) {
                slot.nacked = false;
            }
        }
        // A request that acknowledges nothing and walks over no packet is a keep-alive
        // from a peer with nothing new: no measure of its ack delay.
        // What this request packet acknowledged, its header included (the header's
        // cumulative ack is all a loss-free flow's requests carry).
        let header_acked = self.peer_header_acked.take();
        let walk_acked = (batch.packets > 0).then_some(batch.newest_sent);
        let newest_acked_sent = walk_acked.max(header_acked);
        let walked = reached.is_some() || newest_acked_sent.is_some();
        self.finish_ack(now, batch);
        self.detect_lost(now);
        self.rtt.on_request(
            now,
            outstanding,
            walked,
            newest_acked_sent,
            header_acked.is_some(),
        );
        Ok(())
    }

    /// Applies one ack event: in-flight accounting, RTT and delivery-rate samples (Karn),
    /// the ack-loop floor, spurious-loss undo, the controller.
    fn finish_ack(&mut self, now: Timestamp, batch: AckBatch) {
        if batch.packets == 0 {
            return;
        }
        self.sync_array_account();
        self.stats.packets_acked += batch.packets;
        self.bytes_in_flight = self.bytes_in_flight.saturating_sub(batch.inflight_bytes);
        // A filled hole (an acked retransmission) releases packets the peer received long
        // ago — those sent before the retransmission. They count as delivered, but not
        // toward rate samples, and never give the RTT or rate sample (docs/transport.md §3.6:
        // samples from never-resent packets, honestly timed).
        let rate_bytes = batch.bytes - batch.withheld_bytes;
        self.delivery.on_delivered(now, batch.bytes, rate_bytes);
        if let Some(l) = batch.largest {
            if self.largest_acked.is_none_or(|cur| serial_lt(cur, l)) {
                self.largest_acked = Some(l);
            }
        }
        let mut sample = None;
        let mut rtt_sample = None;
        if self.cc.uses_rtt_estimator() {
            if let Some((sent, info)) = batch.newest_clean {
                // `newest_clean` never is a withheld packet (see AckBatch::add).
                let fresh = self.last_sampled_sent.is_none_or(|last| sent > last);
                if fresh {
                    // Karn's rule, checked rather than assumed (check_invariants reports it).
                    self.karn_violated |= batch.newest_clean_tx != 1;
                    self.rtt.on_sample(now, now - sent);
                    rtt_sample = Some(now - sent);
                    self.last_sampled_sent = Some(sent);
                    self.loss.on_ack_loop(now, now - sent);
                }
                sample = self.delivery.sample(now, &info, sent, self.rtt.min_rtt());
            }
        }
        if batch.spurious > 0 {
            self.stats.spurious_losses += batch.spurious;
            self.loss.on_spurious(batch.spurious_distance);
            self.cc.on_spurious_loss();
        }
        let ack = AckEvent {
            now,
            bytes_acked: batch.inflight_bytes,
            newly_delivered: batch.bytes,
            rtt_sample,
            round_marker: batch.newest_any_delivered,
            bytes_in_flight: self.bytes_in_flight,
            delivered: self.delivery.delivered(),
            delivered_total: self.delivery.delivered_total(),
            lost: self.delivery.lost(),
            sample,
            newest_acked_sent: batch.newest_sent,
            app_limited: batch.app_limited && batch.newest_clean.is_some(),
        };
        self.cc.on_ack(&ack, &self.rtt);
        self.pto_count = 0;
        // New data acknowledged: the PTOs before it were answered. Evidence of an outage
        // stays for the loss detection this acknowledgement triggers.
        if self.last_pto.take().is_none() {
            self.unanswered_pto = None;
        }
    }

    /// True once the peer holds `packet_number` and every packet before it: c-toxcore's
    /// `cryptpacket_received`, a cumulative acknowledgement (docs/protocol.md §2.8). A packet a
    /// request freed while older ones are still missing at the peer is not delivered yet:
    /// read receipts and file completion ride on this, and a sender that closed its
    /// session on a file's last packet alone stranded the receiver with a hole (the kill
    /// packet overtakes the repair).
    pub fn is_delivered(&self, packet_number: u32) -> bool {
        self.send.is_before_start(packet_number)
    }
}
