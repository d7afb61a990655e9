//! Loss recovery (docs/transport.md §3.5, RFC 9002 §6–7): loss detection by packet and time
//! thresholds over the NACKed and unacknowledged slots, persistent congestion, and the
//! probe timeout (PTO) with its probes.
//!
//! A lone NACK right after the acknowledged run is most likely our receiver's tail entry
//! (see [`super::receiver`]) naming a packet still on its way, so it waits a PTO rather
//! than the time threshold (`SendSlot::nack_is_tail`).

use std::time::Duration;

use super::cc::LossEvent;
use super::send_array::SlotState;
use super::{serial_lt, Transport};
use crate::Timestamp;

/// Consecutive PTO backoff cap (quinn MAX_BACKOFF_EXPONENT).
const MAX_PTO_BACKOFF: u32 = 16;
/// Absolute PTO cap (RFC 6298 §2.5 allows an upper bound ≥ 60 s).
const MAX_PTO: Duration = Duration::from_secs(60);
/// Packets resent as probes per PTO (RFC 9002 §6.2.4: one or two).
const PTO_PROBES: usize = 2;

/// RFC 9002 §7.6.2 over one pass of loss detection, in packet-number order: two lost
/// packets with nothing acknowledged between them (an acknowledged packet leaves a gap in
/// the held slots), sent after the first RTT sample and further apart than the
/// persistent-congestion duration.
struct PersistentCongestion {
    first_sample_at: Option<Timestamp>,
    duration: Duration,
    /// The latest PTO that expired without an acknowledgement before the next one did
    /// (see [`Transport::on_pto`]), if no acknowledgement of new data came since.
    unanswered_pto: Option<Timestamp>,
    /// The send time of the earliest packet lost (after the first RTT sample).
    earliest_lost: Option<Timestamp>,
    /// The packet number visited last.
    previous: Option<u32>,
    /// The send time of the first lost packet of the current unbroken run.
    run_start: Option<Timestamp>,
    established: bool,
}

impl PersistentCongestion {
    fn new(
        first_sample_at: Option<Timestamp>,
        duration: Duration,
        unanswered_pto: Option<Timestamp>,
    ) -> Self {
        Self {
            first_sample_at,
            duration,
            unanswered_pto,
            earliest_lost: None,
            previous: None,
            run_start: None,
            established: false,
        }
    }

    /// A held slot; a gap since the previous one means packets between were acknowledged.
    fn visit(&mut self, pn: u32) {
        if self.previous.is_some_and(|p| p.wrapping_add(1) != pn) {
            self.run_start = None;
        }
        self.previous = Some(pn);
    }

    /// The slot just visited is lost (now or before), last sent at `sent`.
    fn lost(&mut self, sent: Timestamp) {
        if self.first_sample_at.is_none_or(|first| sent <= first) {
            return;
        }
        self.earliest_lost = Some(self.earliest_lost.map_or(sent, |e| e.min(sent)));
        match self.run_start {
            None => self.run_start = Some(sent),
            Some(start) if sent.saturating_duration_since(start) > self.duration => {
                self.established = true;
            }
            Some(_) => {}
        }
    }

    /// Whether persistent congestion is established. Besides two lost packets far enough
    /// apart, an unanswered PTO counts as a lost ack-eliciting transmission: our probes
    /// resend existing packet numbers (and the request a PTO triggers is no data packet),
    /// so an outage shows in the packet numbers as one window lost within an RTT, and in
    /// time as PTOs expiring without an answer.
    fn established(&self) -> bool {
        self.established
            || matches!(
                (self.earliest_lost, self.unanswered_pto),
                (Some(first), Some(pto)) if pto.saturating_duration_since(first) > self.duration
            )
    }
}

impl Transport {
    /// Runs loss detection (docs/transport.md §3.5) and arms the loss timer
    /// ([`Timer::LossDetection`](super::timer::Timer::LossDetection)).
    pub(super) fn detect_lost(&mut self, now: Timestamp) {
        self.loss_timer = None;
        if !self.cc.detects_loss() {
            return; // c-toxcore resends only on NACK (see on_request)
        }
        let bound = match (self.largest_acked, self.largest_nacked) {
            (Some(a), Some(n)) => {
                if serial_lt(a, n) {
                    n
                } else {
                    a
                }
            }
            (Some(a), None) => a,
            (None, Some(n)) => n,
            (None, None) => return,
        };
        let loss_delay = self.loss.loss_delay(now, &self.rtt);
        // Rounded up to whole µs like `loss_delay`, or the timer would fire where the rule
        // does not yet hold, forever.
        let pto = self.rtt.pto_base();
        let tail_delay = loss_delay.max(Duration::from_micros(
            u64::try_from(pto.as_nanos().div_ceil(1000)).unwrap_or(u64::MAX),
        ));
        let loop_max = self.loss.ack_loop_max(now);
        let pkt_thresh = self.loss.pkt_thresh();
        let largest = self.largest_acked;
        let mut timer: Option<Timestamp> = None;
        let mut lost_bytes = 0u64;
        let mut lost_packets = 0u64;
        let mut largest_lost_sent = Timestamp::ZERO;
        let mut persistent = PersistentCongestion::new(
            self.rtt.first_sample_at(),
            self.rtt.persistent_congestion_duration(),
            self.unanswered_pto,
        );
        for (pn, slot) in self.send.iter_mut() {
            if serial_lt(bound, pn) {
                break;
            }
            persistent.visit(pn);
            if slot.state == SlotState::Lost {
                persistent.lost(slot.last_sent);
            }
            if slot.state != SlotState::InFlight {
                continue;
            }
            let distance = largest.map_or(0, |l| l.wrapping_sub(pn));
            let before_largest = largest.is_some_and(|l| serial_lt(pn, l));
            if !(slot.nacked || before_largest) {
                continue;
            }
            // A lone NACK right after the acknowledged run is most likely our receiver's
            // tail entry naming a packet still in the queue (poll_request): a queue that
            // grew since srtt was last updated would make 9/8·srtt convict it spuriously
            // (lossy, CUBIC: resent/lost 1.04 → 2.17 without this), so it waits a PTO.
            let delay = if slot.nack_is_tail && !before_largest {
                tail_delay
            } else {
                loss_delay
            };
            let age = now - slot.last_sent;
            let by_time = age >= delay;
            // The packet rule needs later packets sent after this one: not for resends.
            let by_count =
                before_largest && slot.tx_count == 1 && distance >= pkt_thresh && age >= loop_max;
            if by_time || by_count {
                slot.state = SlotState::Lost;
                slot.declared_lost = true;
                slot.lost_distance = distance;
                lost_bytes += slot.size();
                lost_packets += 1;
                largest_lost_sent = largest_lost_sent.max(slot.last_sent);
                persistent.lost(slot.last_sent);
                self.resend_queue.push_back(pn);
            } else {
                let at = slot.last_sent + delay;
                timer = Some(timer.map_or(at, |t| t.min(at)));
            }
        }
        self.loss_timer = timer;
        if lost_packets > 0 {
            self.bytes_in_flight = self.bytes_in_flight.saturating_sub(lost_bytes);
            self.stats.packets_declared_lost += lost_packets;
            self.driver_gap.on_loss(now);
            self.stats.bytes_declared_lost += lost_bytes;
            self.delivery.on_lost(lost_bytes);
            let persistent = persistent.established();
            if persistent {
                // Declared once per outage.
                self.unanswered_pto = None;
                self.stats.persistent_congestion += 1;
                self.rtt.on_persistent_congestion(now);
            }
            let ev = LossEvent {
                now,
                largest_lost_sent,
                bytes_in_flight: self.bytes_in_flight,
                persistent,
            };
            self.cc.on_loss(&ev, &self.rtt);
        }
    }

    /// When the probe timeout fires (RFC 9002 §6.2.1), if anything is in flight
    /// ([`Timer::Pto`](super::timer::Timer::Pto)).
    pub(super) fn pto_deadline(&self) -> Option<Timestamp> {
        if !self.cc.detects_loss() || self.bytes_in_flight == 0 {
            return None;
        }
        let backoff = 1u32 << self.pto_count.min(MAX_PTO_BACKOFF);
        let pto = (self.rtt.pto_base() * backoff).min(MAX_PTO);
        Some(self.last_inflight_sent + pto)
    }

    /// PTO: resend the newest unacknowledged packets as probes and advertise buffer_end;
    /// declare nothing lost (RFC 9002 §6.2.4).
    pub(super) fn on_pto(&mut self, now: Timestamp) {
        // A PTO that expires while the previous one is still unanswered: that one's
        // transmissions were lost (persistent congestion evidence, detect_lost).
        if let Some(previous) = self.last_pto.replace(now) {
            self.unanswered_pto = Some(previous);
        }
        self.pto_count = self.pto_count.saturating_add(1);
        self.stats.pto_count += 1;
        self.probe_queue.clear();
        // The peer learns our buffer_end from the request this asks for, and NACKs the
        // tail — the repair then runs through normal loss detection. Probes (resends of
        // the newest packets, which are usually only unacknowledged, not lost) are sent
        // only when the peer's requests have stopped coming: then the ack path itself
        // may be what was lost.
        let pto = self.rtt.pto_base();
        let peer_silent = self.last_request_rx.is_none_or(|t| now - t > pto);
        if peer_silent {
            let newest = self
                .send
                .iter()
                .rev()
                .filter(|(_, s)| s.state == SlotState::InFlight)
                .map(|(pn, _)| pn)
                .take(PTO_PROBES);
            let mut probes: Vec<u32> = newest.collect();
            probes.reverse();
            self.probe_queue.extend(probes);
        }
        self.ack_timing.request_advertise();
        // Restart the timer from now even if the probes wait for the driver.
        self.last_inflight_sent = now;
    }
}
