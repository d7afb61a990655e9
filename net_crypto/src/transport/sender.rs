//! Sending: the queues a payload waits in, how many bulk packets the layer above may queue
//! (`send_budget`, docs/transport.md §3.9), and which packet goes next (`poll_send`).
//!
//! - Order: PTO probes (they bypass pacer and window, RFC 9002 §6.2.4), then resends, then
//!   control packets, then bulk data.
//! - `send_buffer_end` advertises one past the highest packet *transmitted*, not queued,
//!   so the peer never NACKs what is still waiting for the pacer.
//! - Resends are paced but not window-limited: the request format acknowledges only what
//!   lies between holes, so the window can be full of packets the peer holds but cannot
//!   acknowledge until the hole being repaired is filled.
//! - The pacing rate and burst are the pacer's ([`super::pacer`]).

use super::cc::MAX_PACKET;
use super::driver_gap::CoverInputs;
use super::pacer;
use super::send_array::{self, SendSlot, SlotState};
use super::{
    serial_lt, OutgoingData, OutgoingRef, PacketClass, Transport, TransportError, MAX_PAYLOAD,
    RESERVED_SLOTS,
};
use crate::Timestamp;

/// Tail copies per tail ([`Transport::at_the_tail`]): enough for a final flight's repairs
/// on sat600 (~25), few enough that a tail of mass repairs (CUBIC after overflowing
/// relay500's 16-BDP buffer: ~200) costs the link little (32 packets, 0.18 s at 2 Mbit/s).
const TAIL_COPIES_MAX: u32 = 32;

/// What [`Transport::transmit`] put on the wire.
#[derive(Debug, Clone, Copy)]
struct Sent {
    packet_number: u32,
    is_resend: bool,
}

impl Transport {
    /// Queue a lossless payload (id byte first, 1..=1373 bytes). Returns its packet number.
    ///
    /// Control packets are refused only by a full array; Bulk packets also leave the last
    /// [`RESERVED_SLOTS`] free, and need the controller's admission where it has its own
    /// write limit (the legacy model: c-toxcore refuses the congestion-controlled write
    /// without a `packets_left` token).
    pub fn queue_lossless(
        &mut self,
        now: Timestamp,
        class: PacketClass,
        payload: &[u8],
    ) -> Result<u32, TransportError> {
        if payload.is_empty() || payload.len() > MAX_PAYLOAD {
            return Err(TransportError::BadLength);
        }
        if class == PacketClass::Bulk {
            if self.send.free() <= RESERVED_SLOTS {
                return Err(TransportError::SendQueueFull);
            }
            let pending = self.resend_queue.len() as u32;
            if !self.cc.admit_bulk_write(now, pending) {
                return Err(TransportError::SendQueueFull);
            }
        }
        if !self
            .account
            .may_grow(payload.len() + send_array::SEND_SLOT_BYTES)
        {
            return Err(TransportError::SendQueueFull);
        }
        let pn = self.send.push(SendSlot::new(payload.to_vec()))?;
        self.sync_array_account();
        match class {
            PacketClass::Control => self.control_queue.push_back(pn),
            PacketClass::Bulk => {
                self.cc.on_bulk_write();
                self.queued_bulk_bytes += payload.len() as u64;
                self.tail_copies_made = 0;
                self.bulk_queue.push_back(pn);
                self.budget_unused = self.budget_unused.saturating_sub(1);
            }
        }
        Ok(pn)
    }

    /// How many more Bulk packets may be queued now (cwnd, pacer quantum, window, reserve):
    /// about one pacing quantum beyond what is already queued (docs/transport.md §3.9), so
    /// nothing waits in the sender longer than one quantum and a chat message never sits
    /// behind seconds of file data. The offer is remembered: if the queues run dry while
    /// part of it is unused, the sender is application-limited (see `poll_next`). A
    /// controller with its own write limit (the legacy model's token bucket) sets the
    /// budget instead, within the same reserve.
    pub fn send_budget(&mut self, now: Timestamp) -> usize {
        if !self
            .account
            .may_grow(MAX_PAYLOAD + send_array::SEND_SLOT_BYTES)
        {
            // The session holds its share of a full memory budget (array_budget.rs).
            return 0;
        }
        let free = self.send.free().saturating_sub(RESERVED_SLOTS) as u64;
        let pending = self.resend_queue.len() as u32;
        if let Some(tokens) = self.cc.bulk_write_budget(now, pending) {
            return u64::from(tokens).min(free) as usize;
        }
        let cwnd = self.cc.window();
        let room = cwnd
            .saturating_sub(self.bytes_in_flight)
            .saturating_sub(self.queued_bulk_bytes)
            / MAX_PACKET;
        let has_room = self.bytes_in_flight + MAX_PACKET <= cwnd;
        self.driver_gap.on_call(now, has_room);
        // One quantum, or what the pacing rate sends before the layer above comes back
        // (driver_gap.rs), whichever is more.
        let quantum = match self.pacing_rate() {
            Some(rate) => pacer::quantum_packets(rate).max(2).max(
                self.driver_gap
                    .cover_bytes(now, &self.cover_inputs(now, rate))
                    .div_ceil(MAX_PACKET),
            ),
            None => u64::MAX,
        };
        let quantum = quantum.saturating_sub(self.bulk_queue.len() as u64);
        let budget = room.min(quantum).min(free);
        self.budget_unused = budget;
        budget as usize
    }

    /// The next lossless packet to transmit now (resends, then control, then bulk), if the
    /// pacer and congestion window allow one.
    pub fn poll_send(&mut self, now: Timestamp) -> Option<OutgoingData> {
        let sent = self.poll_next(now)?;
        self.on_data_sent(now);
        Some(OutgoingData {
            packet_number: sent.packet_number,
            payload: self.payload_of(sent.packet_number).to_vec(),
            is_resend: sent.is_resend,
        })
    }

    /// [`Self::poll_send`] without the copy: the payload is borrowed from the send array, and
    /// the connection seals it straight into the outgoing datagram.
    pub fn poll_send_ref(&mut self, now: Timestamp) -> Option<OutgoingRef<'_>> {
        let sent = self.poll_next(now)?;
        self.on_data_sent(now);
        Some(OutgoingRef {
            packet_number: sent.packet_number,
            payload: self.payload_of(sent.packet_number),
            is_resend: sent.is_resend,
        })
    }

    /// The payload held for packet `pn` (empty if it is not held).
    fn payload_of(&self, pn: u32) -> &[u8] {
        self.send.get(pn).map_or(&[], |slot| &slot.payload)
    }

    /// The scheduling behind [`Self::poll_send`]: which packet goes next, if any, with its
    /// bookkeeping done.
    fn poll_next(&mut self, now: Timestamp) -> Option<Sent> {
        self.cc.on_iteration(now, self.send.len());
        // Tail-loss probes bypass pacer and window (RFC 9002 §6.2.4).
        while let Some(pn) = self.probe_queue.pop_front() {
            if self
                .send
                .get(pn)
                .is_some_and(|s| s.state == SlotState::InFlight)
            {
                return Some(self.transmit(now, pn));
            }
        }
        let rate = self.pacing_rate();
        let paced_ok = !self.cc.paces() || self.pacer.can_send(now, rate);
        let cwnd = self.cc.window();

        while let Some(&pn) = self.resend_queue.front() {
            if !self
                .send
                .get(pn)
                .is_some_and(|s| s.state == SlotState::Lost)
            {
                self.resend_queue.pop_front();
                continue;
            }
            if !paced_ok {
                self.pacer.on_held_back();
                return None; // resends go first: nothing new overtakes a hole's repair
            }
            if !self.cc.take_resend_token(now) {
                break; // the legacy model's resend pass is out of tokens; new data may go
            }
            // Resends are paced but not window-limited: a lost packet left the flight when
            // it was declared, and the window may be full of packets the peer holds but
            // cannot acknowledge until this very hole is filled (the request format only
            // acks between holes) — waiting for the window would deadlock.
            self.resend_queue.pop_front();
            if self.at_the_tail() && self.tail_copies_made < TAIL_COPIES_MAX {
                self.tail_copies_made += 1;
                self.tail_copies.push_back(pn);
            }
            return Some(self.transmit(now, pn));
        }

        while let Some(&pn) = self.control_queue.front() {
            if !self
                .send
                .get(pn)
                .is_some_and(|s| s.state == SlotState::Unsent)
            {
                self.control_queue.pop_front();
                continue;
            }
            if !paced_ok {
                self.pacer.on_held_back();
                return None;
            }
            self.control_queue.pop_front();
            return Some(self.transmit(now, pn));
        }

        while let Some(&pn) = self.bulk_queue.front() {
            let Some(slot) = self.send.get(pn) else {
                self.bulk_queue.pop_front();
                continue;
            };
            if slot.state != SlotState::Unsent {
                self.queued_bulk_bytes = self.queued_bulk_bytes.saturating_sub(slot.size());
                self.bulk_queue.pop_front();
                continue;
            }
            // A controller without a window reports u64::MAX.
            if !paced_ok || self.bytes_in_flight + slot.size() > cwnd {
                if self.bytes_in_flight + slot.size() <= cwnd {
                    self.pacer.on_held_back();
                }
                return None;
            }
            self.queued_bulk_bytes = self.queued_bulk_bytes.saturating_sub(slot.size());
            self.bulk_queue.pop_front();
            return Some(self.transmit(now, pn));
        }

        // A second copy of each repair made at the tail, after every other packet.
        while let Some(&pn) = self.tail_copies.front() {
            if !self
                .send
                .get(pn)
                .is_some_and(|s| s.state == SlotState::InFlight)
            {
                self.tail_copies.pop_front();
                continue;
            }
            if !paced_ok {
                self.pacer.on_held_back();
                return None;
            }
            self.tail_copies.pop_front();
            self.stats.tail_copies += 1;
            return Some(self.transmit(now, pn));
        }

        // Nothing to send while the window has room, and the layer above left budget
        // unused: samples taken now are app-limited (draft-cheng-iccrg-delivery-rate-
        // estimation §3.4). A sender that simply drained one quantum is not.
        if self.bytes_in_flight + MAX_PACKET <= cwnd
            && self.resend_queue.is_empty()
            && self.budget_unused > 0
        {
            self.delivery.on_app_limited(self.bytes_in_flight);
        }
        None
    }

    /// True when the sender has no new data: nothing bulk queued, and the layer above left
    /// the budget it was last offered unused (the end of a transfer). A repair made then is
    /// sent twice (the second copy after every other packet waiting): with nothing behind
    /// it, a repair lost again costs a whole extra round trip of loss detection, the
    /// transfer's last. sat600 (3 % loss, 600 ms): the final flight's ~25 repairs lose one
    /// again in half the runs; each copy costs one packet of an otherwise idle link, and at
    /// most [`TAIL_COPIES_MAX`] are made until new data is queued. Only where the
    /// controller sees random loss ([`Controller::sees_random_loss`]): where queues alone
    /// drop, a repair arrives and its copy is a duplicate.
    ///
    /// [`Controller::sees_random_loss`]: super::cc::Controller::sees_random_loss
    fn at_the_tail(&self) -> bool {
        self.cc.sees_random_loss() && self.bulk_queue.is_empty() && self.budget_unused > 0
    }

    /// When the pacer releases the next packet that is ready to go
    /// ([`Timer::Pacing`](super::timer::Timer::Pacing)), if one is. Only a packet the window
    /// would let go waits for the pacer; a window-limited sender waits for an ack instead. A
    /// controller that does not pace sends resends and bulk data on its refills, control
    /// packets at once.
    pub(super) fn pacer_release(&self) -> Option<Timestamp> {
        let cwnd = self.cc.window();
        let resend_ready = !self.resend_queue.is_empty() || !self.tail_copies.is_empty();
        let bulk_ready = !self.bulk_queue.is_empty() && self.bytes_in_flight + MAX_PACKET <= cwnd;
        let paced_ready = self.cc.paces() && (resend_ready || bulk_ready);
        (paced_ready || !self.control_queue.is_empty())
            .then(|| self.pacer.release_time(self.pacing_rate()))
    }

    /// The path as the driver-gap cover sees it at `rate` (driver_gap.rs): the lateness is
    /// how long the driver holds the sender beyond the pacer's schedule as far as the path
    /// can tell it from a burst, the driver's lateness for the pacer (pacer.rs) at most the
    /// smoothed RTT.
    fn cover_inputs(&self, now: Timestamp, rate: u64) -> CoverInputs {
        CoverInputs {
            rate,
            cadence: self.rtt.peer_request_cadence(),
            window: self.cc.window(),
            lateness: self
                .pacer
                .wake_lateness(now)
                .min(self.rtt.smoothed().unwrap_or_default()),
        }
    }

    /// The rate the pacer holds sends to ([`pacer::pacing_rate`]).
    pub(super) fn pacing_rate(&self) -> Option<u64> {
        pacer::pacing_rate(self.cc.as_ref(), &self.rtt)
    }

    /// Puts packet `pn` on the wire (first send, resend or probe) and does the bookkeeping.
    fn transmit(&mut self, now: Timestamp, pn: u32) -> Sent {
        let rate = self.pacing_rate();
        let mut in_flight_after = self.bytes_in_flight;
        let size;
        let out;
        {
            let Some(slot) = self.send.get_mut(pn) else {
                // Callers only pass held slots; keep going rather than panic.
                return Sent {
                    packet_number: pn,
                    is_resend: true,
                };
            };
            size = slot.size();
            let first = slot.tx_count == 0;
            if slot.state != SlotState::InFlight {
                in_flight_after += size;
            }
            if first {
                slot.first_sent = now;
                slot.info = self.delivery.on_sent(now, in_flight_after, size);
                self.stats.packets_sent += 1;
                self.stats.bytes_sent += size;
            } else {
                self.stats.packets_resent += 1;
                self.stats.bytes_resent += size;
                self.delivery.on_resent(size);
                slot.resend_boundary = self.sent_end;
            }
            slot.last_sent = now;
            slot.tx_count = slot.tx_count.saturating_add(1);
            slot.state = SlotState::InFlight;
            slot.nacked = false;
            slot.nack_is_tail = false;
            out = Sent {
                packet_number: pn,
                is_resend: !first,
            };
        }
        self.bytes_in_flight = in_flight_after;
        if serial_lt(self.sent_end, pn.wrapping_add(1)) {
            self.sent_end = pn.wrapping_add(1);
        }
        self.last_inflight_sent = now;
        self.cc.on_sent(now, size, self.bytes_in_flight);
        if self.cc.paces() {
            // The shallow-buffer cap, or one gap of the driver's at the rate while the
            // path drops nothing, bounded toward a prompt acknowledger (driver_gap.rs).
            let cap = pacer::credit_cap(self.cc.window(), rate, self.rtt.min_rtt()).max(
                rate.map_or(0, |r| {
                    self.driver_gap
                        .credit_bytes(now, &self.cover_inputs(now, r))
                }),
            );
            self.pacer.on_sent(now, size, rate, cap);
        }
        out
    }

    /// A lossy datagram of `bytes` left at `now` (audio, video: it never waits for the
    /// pacer, and is never resent or acknowledged). Its bytes are charged to the pacer, so
    /// the lossless data behind it (a file) is paced at what the path has left: together
    /// they keep to the controller's rate instead of the lossy traffic queueing on top of
    /// a saturating transfer at the bottleneck.
    ///
    /// Only once the controller knows the path's capacity: before, its rate is a lower bound
    /// that grows only with the lossless data it samples, and charging a call's media to it
    /// would hold that data back for good (no samples, no growth, no file).
    pub fn on_lossy_sent(&mut self, now: Timestamp, bytes: u64) {
        if self.cc.paces() && self.cc.bandwidth_capacity().is_some() {
            let rate = self.pacing_rate();
            let cap = pacer::credit_cap(self.cc.window(), rate, self.rtt.min_rtt());
            self.pacer.charge(now, bytes, rate, cap);
        }
    }

    /// The congestion controller's estimate of the path's bandwidth, bytes per second: its
    /// bandwidth model where it has one (BBR's max filter), else the pacing rate; `None`
    /// before either exists. What a call's sender sizes its bit rates by.
    pub fn bandwidth_estimate(&self) -> Option<u64> {
        self.cc.bandwidth_estimate().or_else(|| self.pacing_rate())
    }

    /// The path's capacity, bytes per second, once the controller measured it with the pipe
    /// full (`CongestionControl::bandwidth_capacity`); `None` while the estimate is only a
    /// lower bound. What a call's sender caps its bit rates by: a lower bound would cut a call
    /// that runs alone to the rate of the handshake.
    pub fn bandwidth_capacity(&self) -> Option<u64> {
        self.cc.bandwidth_capacity()
    }

    /// The smoothed round-trip time, once a sample exists.
    pub fn smoothed_rtt(&self) -> Option<std::time::Duration> {
        self.rtt.smoothed()
    }

    /// The number the next lossless packet will get (carried by lossy/request/kill packets).
    ///
    /// This is one past the highest number actually transmitted: packets queued but not yet
    /// sent are not advertised, so the peer does not NACK what is still waiting here.
    pub fn send_buffer_end(&self) -> u32 {
        self.sent_end
    }
}
