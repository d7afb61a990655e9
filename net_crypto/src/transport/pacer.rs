//! Earliest-departure-time pacer (transport.md §3.7; s2n-quic / quiche style).
//!
//! Each send advances `next_departure` by `size / rate`; after idle, up to one quantum may
//! leave back to back, so the pacer never lets a credit pile up beyond one burst. The
//! quantum is max(2 packets, 1 ms at the rate) capped at 10 packets (quinn caps bursts at
//! 2 ms of window and 10–256 datagrams; quiche allows 10 after idle, then 2), and a single
//! packet below 1.2 Mbit/s, where one packet is already ~10 ms of queue (quiche). Requests
//! and PTO probes bypass the pacer; the controller's rate drives it; no pacing when the
//! controller gives no rate.

use std::time::Duration;

use super::cc::{Controller, MAX_PACKET};
use super::rtt::RttEstimator;
use crate::Timestamp;

/// Paths whose (minimum) RTT is below this are not paced (transport.md §3.7).
const UNPACED_BELOW_RTT: Duration = Duration::from_millis(2);
/// Below this rate a burst is a single packet (quiche gcongestion/pacer.rs: 1.2 Mbit/s).
const SINGLE_PACKET_BELOW: u64 = 1_200_000 / 8;
/// Burst bounds in packets (transport.md §3.7).
const MIN_BURST: u64 = 2;
const MAX_BURST: u64 = 10;
/// Burst length in time at the pacing rate.
const BURST_TIME: Duration = Duration::from_millis(1);

/// The pacer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pacer {
    next_departure: Timestamp,
}

/// The rate the pacer holds sends to: the controller's, except on short paths
/// (transport.md §3.7: no pacing when the RTT is under 2 ms). There a whole window
/// leaves within a couple of milliseconds anyway, and a pacer whose gaps are a few
/// microseconds cannot be honoured by a driver timer of millisecond grain: a late wake
/// forfeits the credit beyond one burst, and on loopback that capped a 200 MB/s pacing
/// rate at ~110–145 MiB/s achieved (2026-11-30).
///
/// "Short" is judged by the windowed minimum RTT, where §3.7 says srtt: srtt includes
/// the queue the flow itself builds — on loopback the receiver's socket buffer, a few
/// milliseconds at 250 MiB/s — and keyed on srtt, pacing switched itself back on
/// whenever that queue grew (bench-loopback 1 GiB, same machine state: 253–268 MiB/s
/// keyed on srtt, 278–303 on the minimum RTT, with up to 0.24 % of packets resent and
/// an RTT of 11–21 ms from the socket-buffer queue).
pub(super) fn pacing_rate(cc: &dyn Controller, rtt: &RttEstimator) -> Option<u64> {
    match rtt.min_rtt() {
        Some(min_rtt) if min_rtt < UNPACED_BELOW_RTT => None,
        _ => cc.pacing_rate(rtt),
    }
}

/// Burst size in packets at `rate` bytes/s.
pub(crate) fn quantum_packets(rate: u64) -> u64 {
    if rate < SINGLE_PACKET_BELOW {
        return 1;
    }
    let one_ms = rate * BURST_TIME.as_micros() as u64 / 1_000_000;
    (one_ms / MAX_PACKET).clamp(MIN_BURST, MAX_BURST)
}

fn transmit_time(bytes: u64, rate: u64) -> Duration {
    Duration::from_micros((u128::from(bytes) * 1_000_000 / u128::from(rate.max(1))) as u64)
}

impl Pacer {
    /// When the next packet may leave (`None` rate = now).
    pub(crate) fn release_time(&self, rate: Option<u64>) -> Timestamp {
        match rate {
            None => Timestamp::ZERO,
            Some(_) => self.next_departure,
        }
    }

    /// True if a packet may leave at `now`.
    pub(crate) fn can_send(&self, now: Timestamp, rate: Option<u64>) -> bool {
        self.release_time(rate) <= now
    }

    /// Records a departure of `bytes` at `now`.
    pub(crate) fn on_sent(&mut self, now: Timestamp, bytes: u64, rate: Option<u64>) {
        let Some(rate) = rate else {
            self.next_departure = now;
            return;
        };
        // Credit for idle time is capped at one burst: this packet plus quantum − 1 more.
        let burst = transmit_time((quantum_packets(rate) - 1) * MAX_PACKET, rate);
        let base = self.next_departure.max(now - burst);
        self.next_departure = base + transmit_time(bytes, rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paced_sends_match_the_rate() {
        let rate = 1_250_000; // 10 Mbit/s
        let mut p = Pacer::default();
        let mut now = Timestamp::from_secs(1);
        let start = now;
        let mut sent = 0u64;
        while now < start + Duration::from_secs(1) {
            if p.can_send(now, Some(rate)) {
                p.on_sent(now, MAX_PACKET, Some(rate));
                sent += MAX_PACKET;
            } else {
                now = p.release_time(Some(rate));
            }
        }
        let err = (sent as f64 - rate as f64).abs() / rate as f64;
        assert!(err < 0.02, "sent {sent}");
    }

    #[test]
    fn idle_credit_is_one_burst() {
        let rate = 12_500_000; // 100 Mbit/s: 1 ms = 12.5 kB ≈ 9 packets
        let mut p = Pacer::default();
        let now = Timestamp::from_secs(10);
        let mut n = 0;
        while p.can_send(now, Some(rate)) {
            p.on_sent(now, MAX_PACKET, Some(rate));
            n += 1;
        }
        assert_eq!(n, quantum_packets(rate));
        assert_eq!(quantum_packets(100_000), 1);
    }
}
