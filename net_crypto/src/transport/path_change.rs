//! A session moving between direct UDP and a TCP relay (docs/protocol.md §2.9; net_crypto's
//! path.rs decides when).
//!
//! The two paths share nothing but the endpoints: a relay adds two TCP legs, its own queue
//! and head-of-line blocking, so an RTT or a bandwidth learned on one says nothing about the
//! other. What the transport does on a change, and why:
//!
//! | state | on a change | why |
//! |---|---|---|
//! | RTT estimator, min RTT | reset | measured on the old path |
//! | loss thresholds (reorder distance, ack-loop floor) | reset | the old path's reordering and ack loop |
//! | congestion controller, delivery-rate sampler | new, in startup | the old path's bandwidth and queue |
//! | PTO backoff, loss timer | reset | deadlines computed from the old RTT |
//! | packets in flight on a path that went silent | declared lost, resent on the new path | UDP is left only after [`crate::path::UDP_DIRECT_TIMEOUT`] of silence: what went out on it is gone |
//! | packets in flight through a relay when UDP comes back | still in flight | TCP delivers them; resending would only duplicate |
//! | packets sent before the change | no RTT or rate samples when acked | their timing mixes both paths (like Karn's rule for resends) |
//! | send and receive arrays, packet numbers, the peer's window | kept | they belong to the session, not the path |
//! | pacer's measured wake-up lateness | kept | a property of the driver, not the path |
//! | counters (`TransportStats`) | kept | the session's history |

use super::cc;
use super::cc::delivery_rate::DeliveryRate;
use super::loss::LossThresholds;
use super::rtt::RttEstimator;
use super::send_array::SlotState;
use super::Transport;
use crate::Timestamp;

impl Transport {
    /// The session's data now travels on another path. `old_path_silent`: the path left had
    /// stopped delivering (UDP timed out), so what is in flight on it is lost.
    pub fn on_path_change(&mut self, now: Timestamp, old_path_silent: bool) {
        self.rtt = RttEstimator::new();
        self.loss = LossThresholds::new();
        self.cc = cc::build(self.kind, now);
        self.delivery = DeliveryRate::new(now);
        self.pto_count = 0;
        self.last_pto = None;
        self.unanswered_pto = None;
        self.loss_timer = None;
        self.last_sampled_sent = None;
        self.largest_nacked = None;
        self.path_since = now;
        self.stats.path_changes += 1;
        if old_path_silent {
            self.declare_in_flight_lost();
        }
    }

    /// Every packet in flight goes to the resend queue, in packet-number order.
    fn declare_in_flight_lost(&mut self) {
        let mut lost_bytes = 0u64;
        let mut lost_packets = 0u64;
        for (pn, slot) in self.send.iter_mut() {
            if slot.state != SlotState::InFlight {
                continue;
            }
            slot.state = SlotState::Lost;
            slot.declared_lost = true;
            lost_bytes += slot.size();
            lost_packets += 1;
            self.resend_queue.push_back(pn);
        }
        self.bytes_in_flight = self.bytes_in_flight.saturating_sub(lost_bytes);
        self.stats.packets_declared_lost += lost_packets;
        self.stats.bytes_declared_lost += lost_bytes;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::transport::{PacketClass, TransportConfig};

    fn t(ms: u64) -> Timestamp {
        Timestamp::from_millis(ms)
    }

    /// A transport with `n` packets sent at `at`.
    fn sent(n: u32, at: Timestamp) -> Transport {
        let mut tr = Transport::new(Timestamp::ZERO, TransportConfig::default());
        for i in 0..n {
            tr.queue_lossless(at, PacketClass::Control, &[16, i as u8])
                .unwrap();
        }
        while tr.poll_send_ref(at).is_some() {}
        tr
    }

    #[test]
    fn leaving_a_silent_path_resends_what_was_in_flight() {
        let mut tr = sent(5, t(10));
        assert!(tr.bytes_in_flight > 0);
        tr.on_path_change(t(9000), true);
        assert_eq!(tr.bytes_in_flight, 0);
        assert_eq!(tr.resend_queue.len(), 5);
        assert_eq!(tr.stats().path_changes, 1);
        tr.check_invariants().unwrap();
    }

    #[test]
    fn leaving_a_working_relay_keeps_its_packets_in_flight() {
        let mut tr = sent(5, t(10));
        let in_flight = tr.bytes_in_flight;
        tr.on_path_change(t(20), false);
        assert_eq!(tr.bytes_in_flight, in_flight);
        assert!(tr.resend_queue.is_empty());
        tr.check_invariants().unwrap();
    }

    #[test]
    fn packets_sent_before_the_change_give_no_rtt_sample() {
        let mut tr = sent(3, t(10));
        tr.on_path_change(t(20), false);
        // Acknowledged 990 ms after they were sent, through the old path: no sample.
        tr.on_peer_buffer_start(t(1000), 3).unwrap();
        assert_eq!(tr.stats().rtt_samples, 0);
        assert_eq!(tr.stats().smoothed_rtt, None);
        // A packet sent on the new path samples the new path's RTT.
        tr.queue_lossless(t(1000), PacketClass::Control, &[16, 9])
            .unwrap();
        while tr.poll_send_ref(t(1000)).is_some() {}
        tr.on_peer_buffer_start(t(1040), 4).unwrap();
        assert_eq!(tr.stats().rtt_samples, 1);
        assert_eq!(tr.stats().latest_rtt, Some(Duration::from_millis(40)));
    }
}
