//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation; quiche
//! `recovery/congestion/delivery_rate.rs`; docs/transport.md §1.4).
//!
//! On send, the packet is stamped with the connection's delivery state ([`PacketInfo`]);
//! on ack of a never-resent packet (Karn's rule applies to rate samples too, docs/transport.md
//! §3.6), the rate over the packet's flight is
//! `(delivered_now − P.delivered) / max(send_elapsed, ack_elapsed)`.
//!
//! One deviation, for Tox's request format: the rate is capped by the flight's *send*
//! rate (bytes sent from `first_sent_time` to P's send, over that time). A request acknowledges only what lies between holes, so the
//! packets after the last hole are acknowledged in one jump when it fills — bytes the
//! peer received long before P was sent. Counted as delivered during P's flight they
//! inflate the sample (and BBR's max filter keeps the inflated value for 10 rounds); the
//! send side of the flight bounds what can really have been delivered in it (quinn's
//! estimator takes min(send rate, ack rate) for the same reason).

use std::time::Duration;

use super::{PacketInfo, RateSample};
use crate::Timestamp;

/// The connection-wide delivery state.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeliveryRate {
    delivered: u64,
    delivered_time: Timestamp,
    first_sent_time: Timestamp,
    lost: u64,
    /// All bytes acknowledged (`delivered` counts only those credited to rate samples).
    delivered_total: u64,
    /// Bytes transmitted so far, and at `first_sent_time`.
    sent_total: u64,
    first_sent_total: u64,
    /// Until `delivered` passes this, samples are app-limited (0 = not app-limited).
    app_limited_until: u64,
}

impl DeliveryRate {
    pub(crate) fn new(now: Timestamp) -> Self {
        Self {
            delivered_time: now,
            first_sent_time: now,
            ..Self::default()
        }
    }

    /// Stamps a packet sent at `now`; `bytes_in_flight` includes it.
    pub(crate) fn on_sent(
        &mut self,
        now: Timestamp,
        bytes_in_flight: u64,
        size: u64,
    ) -> PacketInfo {
        if bytes_in_flight <= size {
            // Nothing else in flight: a new flight starts here.
            self.first_sent_time = now;
            self.delivered_time = now;
            self.first_sent_total = self.sent_total;
        }
        self.sent_total = self.sent_total.saturating_add(size);
        PacketInfo {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.app_limited_until != 0,
            tx_in_flight: bytes_in_flight,
            lost: self.lost,
            sent_total: self.sent_total,
            first_sent_total: self.first_sent_total,
        }
    }

    /// Counts a retransmission's bytes as sent (they occupy the path like new data).
    pub(crate) fn on_resent(&mut self, size: u64) {
        self.sent_total = self.sent_total.saturating_add(size);
    }

    /// Counts newly acknowledged bytes: `total` of them, of which `for_rate` count toward
    /// delivery-rate samples (see [`Transport`](crate::transport::Transport)'s ack
    /// processing: bytes freed by a filled hole were delivered long before, and crediting
    /// them now would inflate every sample whose interval spans the fill).
    pub(crate) fn on_delivered(&mut self, now: Timestamp, total: u64, for_rate: u64) {
        self.delivered_total = self.delivered_total.saturating_add(total);
        if for_rate == 0 {
            return;
        }
        self.delivered = self.delivered.saturating_add(for_rate);
        self.delivered_time = now;
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
    }

    /// Counts bytes declared lost.
    pub(crate) fn on_lost(&mut self, bytes: u64) {
        self.lost = self.lost.saturating_add(bytes);
    }

    /// Marks the connection app-limited: the sender has nothing to send and room to send.
    pub(crate) fn on_app_limited(&mut self, bytes_in_flight: u64) {
        self.app_limited_until = self.delivered.saturating_add(bytes_in_flight).max(1);
    }

    /// Bytes credited to delivery-rate samples (the rate-domain counter; rounds use it).
    pub(crate) fn delivered(&self) -> u64 {
        self.delivered
    }

    /// All bytes acknowledged.
    pub(crate) fn delivered_total(&self) -> u64 {
        self.delivered_total
    }

    pub(crate) fn lost(&self) -> u64 {
        self.lost
    }

    /// The sample for the most recently sent, never-resent packet acknowledged in this
    /// event; `sent` is that packet's (first and only) send time. Call after
    /// [`on_delivered`](Self::on_delivered) for the whole event.
    pub(crate) fn sample(
        &mut self,
        now: Timestamp,
        info: &PacketInfo,
        sent: Timestamp,
        min_rtt: Option<Duration>,
    ) -> Option<RateSample> {
        // The next packet's flight starts at this packet's send time (draft §3.3).
        self.first_sent_time = sent;
        self.first_sent_total = info.sent_total;
        let send_elapsed = sent - info.first_sent_time;
        let ack_elapsed = now - info.delivered_time;
        let interval = send_elapsed.max(ack_elapsed);
        let sent_in_flight = info.sent_total.saturating_sub(info.first_sent_total);
        let delivered = self.delivered.saturating_sub(info.delivered);
        if interval.is_zero() {
            return None;
        }
        // Shorter than min_rtt: the sample may be compressed by ack aggregation (draft §3.3).
        if let Some(m) = min_rtt {
            if interval < m {
                return None;
            }
        }
        let mut rate = u128::from(delivered) * 1_000_000 / interval.as_micros().max(1);
        if !send_elapsed.is_zero() {
            // The flight's send rate bounds what it can have delivered.
            let send_rate = u128::from(sent_in_flight) * 1_000_000 / send_elapsed.as_micros();
            rate = rate.min(send_rate);
        }
        let rate = rate.min(u128::from(u64::MAX)) as u64;
        Some(RateSample {
            delivery_rate: rate,
            delivered,
            interval,
            is_app_limited: info.is_app_limited,
            tx_in_flight: info.tx_in_flight,
            lost: self.lost.saturating_sub(info.lost),
            prior_delivered: info.delivered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_flow_measures_its_rate() {
        // 1000 bytes every 1 ms, acked 100 ms later: 1 MB/s.
        let mut d = DeliveryRate::new(Timestamp::ZERO);
        let mut infos = Vec::new();
        let mut inflight = 0;
        let mut last = None;
        for i in 0..400u64 {
            let now = Timestamp::from_millis(i);
            if i >= 100 {
                let (sent, info): (Timestamp, PacketInfo) = infos[(i - 100) as usize];
                d.on_delivered(now, 1000, 1000);
                inflight -= 1000;
                last = d.sample(now, &info, sent, Some(Duration::from_millis(100)));
            }
            inflight += 1000;
            infos.push((now, d.on_sent(now, inflight, 1000)));
        }
        let r = last.unwrap().delivery_rate;
        assert!((990_000..=1_010_000).contains(&r), "{r}");
    }
}
