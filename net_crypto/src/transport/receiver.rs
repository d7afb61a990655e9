//! Receiving: lossless packets into the receive array, in-order delivery to the layer
//! above, and the request (NACK) packets that report the holes (docs/protocol.md §2.7,
//! docs/transport.md §3.4; when a request is due is [`super::ack_timing`]'s).
//!
//! Our requests add a tail entry: with holes below a received tail they also name the
//! first number past the highest received, so the walk acknowledges the packets after the
//! last hole at once (fresh RTT and rate samples). A c-toxcore sender may resend that one
//! packet if it is older than its `rtt_time` (at most one extra packet per request of
//! ours, and only while holes exist); one at or past its `buffer_end` ends its walk.

use std::time::Duration;

use super::request;
use super::send_array::WINDOW;
use super::sender_watch::HOLD_STEPS;
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
        if payload.is_empty() || payload.len() > MAX_PAYLOAD {
            return Err(TransportError::BadLength);
        }
        let account = &self.account;
        match self
            .recv
            .store(packet_number, payload, |extra| account.may_grow(extra))
        {
            Ok(stored) => {
                if stored.filled_hole {
                    self.ack_timing.watch.on_hole_filled(now, packet_number);
                }
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
        self.ack_timing.watch.on_delivered_below(self.recv.start());
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
            None => {
                let due = self.ack_timing.due(self.recv.holes() > 0)?;
                if self.ack_timing.watch.is_legacy_at(due) {
                    Some(self.held_past_windows(due))
                } else {
                    Some(due)
                }
            }
        }
    }

    /// `due`, or the first time after it at which a request lands in no named hole's
    /// window (sender_watch.rs), at most [`SenderWatch::max_hold`](super::sender_watch::SenderWatch::max_hold)
    /// after the last request.
    fn held_past_windows(&self, due: Timestamp) -> Timestamp {
        let last = self.ack_timing.last_request();
        let cap = (last + self.ack_timing.watch.max_hold()).max(due);
        // A request due at the instant of the last one would go at the next poll: judge
        // it a millisecond on, when the holes that one named are in their windows.
        let mut at = due.max(last + Duration::from_millis(1));
        // Each step moves past the windows open at `at`; those that open meanwhile are
        // looked at in the next step.
        for _ in 0..HOLD_STEPS {
            match self.ack_timing.watch.hold_until(at) {
                Some(until) if until < cap => at = until,
                Some(_) => return cap,
                None => return at,
            }
        }
        at
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
            && !self.ack_timing.watch.is_legacy_at(now)
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
        let start = recv.start();
        let highest = recv.received_len();
        self.ack_timing.watch.on_request_sent(
            now,
            (0..highest)
                .filter(|o| !recv.is_filled(*o))
                .map(|o| start.wrapping_add(o)),
        );
        self.ack_timing.on_sent(now);
        self.stats.requests_sent += 1;
        Some(req)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Transport, TransportConfig};
    use crate::{ControllerKind, Timestamp};

    fn ms(v: u64) -> Timestamp {
        Timestamp::from_millis(v)
    }

    fn receiver() -> Transport {
        Transport::new(
            Timestamp::ZERO,
            TransportConfig {
                controller: ControllerKind::Bbr,
                wake_lateness: std::time::Duration::ZERO,
            },
        )
    }

    /// Packets `from..to` except `hole` arrive at `at` and are delivered.
    fn arrive(t: &mut Transport, at: Timestamp, from: u32, to: u32, hole: Option<u32>) {
        for pn in (from..to).filter(|pn| Some(*pn) != hole) {
            t.on_lossless(at, pn, &[7]).expect("stored");
        }
        while t.poll_delivered().is_some() {}
    }

    /// A hole at 5 named at 3000 ms and repaired at 3100 ms; a second hole at 15 named at
    /// 3200 ms; eight more packets at 3210 ms make a request due.
    fn second_hole_pending(t: &mut Transport) {
        arrive(t, ms(3000), 0, 10, Some(5));
        assert!(
            t.poll_request(ms(3000)).is_some(),
            "the new hole is named at once"
        );
        arrive(t, ms(3100), 5, 6, None);
        arrive(t, ms(3200), 10, 20, Some(15));
        assert!(t.poll_request(ms(3200)).is_some());
        arrive(t, ms(3210), 20, 28, None);
    }

    #[test]
    fn a_c_toxcore_sender_gets_no_request_while_a_repair_is_on_its_way() {
        let mut t = receiver();
        // c-toxcore's idle requests, one a second, before the file.
        for s in 1..=3 {
            t.on_request(ms(s * 1000), &[]).expect("an empty request");
        }
        second_hole_pending(&mut t);
        // Repairs take 100 ms: the request waits for 3200 + 100 + 10 ms.
        assert_eq!(t.request_due(), Some(ms(3310)));
        assert!(t.poll_request(ms(3250)).is_none());
        let request = t.poll_request(ms(3310)).expect("due");
        assert_eq!(
            request,
            [1, 1],
            "hole 15 (the first slot) still named, no tail entry"
        );
    }

    #[test]
    fn a_rustox_sender_keeps_the_prompt_timing_and_tail_entries() {
        let mut t = receiver();
        second_hole_pending(&mut t);
        assert!(t.request_due().is_some_and(|due| due <= ms(3210)));
        let request = t.poll_request(ms(3210)).expect("due");
        // Hole 15 (the first slot) and the tail entry past packet 27 (13 further).
        assert_eq!(request, [1, 1, 13]);
    }
}
