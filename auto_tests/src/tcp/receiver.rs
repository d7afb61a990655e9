//! The receiving end of a TCP flow: reassembly, and ACKs timed as Linux times them. A bulk
//! receiver ([`TcpReceiver::new`]) verifies every byte against the flow's pattern; a stream
//! receiver ([`TcpReceiver::stream`]) hands the application the bytes in order
//! ([`TcpReceiver::read`]), holding what arrives above a gap until the gap fills.
//!
//! ACK policy (RFC 5681 §4.2, RFC 1122 §4.2.3.2, Linux `__tcp_ack_snd_check`):
//! - at once when more than one full segment has arrived in order since the last ACK (so
//!   every second segment), when a segment arrives out of order or duplicated, and when one
//!   fills (part of) a gap;
//! - otherwise after at most [`DELAYED_ACK`].
//!
//! Not modelled: Linux's quick-ACK mode at connection start and its SACK compression
//! (`tcp_comp_sack_delay_ns`), D-SACK, and receive-window autotuning (the window is a fixed
//! [`super::WINDOW_BYTES`] and is not advertised: the sender honours the same bound).

use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::Timestamp;
use rustox_simulator::SimNode;

use super::payload;
use super::reassembly::{Arrival, Reassembly};
use super::receive_buffer::ReceiveBuffer;
use super::segment::{encode_ack, timestamp_clock, Header, Segment};
use super::stats::TcpReceiverStats;
use super::{mss_for, WINDOW_BYTES};

/// Longest an ACK is held back: Linux's `TCP_DELACK_MIN` (HZ/25 = 40 ms).
pub const DELAYED_ACK: Duration = Duration::from_millis(40);

/// Receives one flow, verifies every byte against the flow's pattern, and acknowledges.
#[derive(Debug, Clone)]
pub struct TcpReceiver {
    flow: u32,
    expected: Option<u64>,
    reassembly: Reassembly,
    /// The sender, learned from its first segment.
    peer: Option<SocketAddr>,
    /// RFC 7323 TS.Recent.
    ts_recent: u32,
    /// The cumulative ACK last sent (RFC 7323 Last.ACK.sent).
    last_ack_sent: u64,
    ack_now: bool,
    delayed_ack_at: Option<Timestamp>,
    /// The next ACK is the delayed-ACK timer's.
    ack_is_delayed: bool,
    deliveries: Vec<(Timestamp, u64)>,
    stats: TcpReceiverStats,
    error: Option<String>,
    /// A stream receiver's bytes; `None` for a bulk receiver.
    stream: Option<Box<ReceiveBuffer>>,
}

impl TcpReceiver {
    /// A receiver for flow `flow`, expecting `expected` bytes (`None`: unlimited).
    pub fn new(flow: u32, expected: Option<u64>) -> Self {
        TcpReceiver {
            flow,
            expected,
            reassembly: Reassembly::new(WINDOW_BYTES),
            peer: None,
            ts_recent: 0,
            last_ack_sent: 0,
            ack_now: false,
            delayed_ack_at: None,
            ack_is_delayed: false,
            deliveries: Vec::new(),
            stats: TcpReceiverStats::default(),
            error: None,
            stream: None,
        }
    }

    /// A receiver for flow `flow` from `peer` that hands its application whatever arrives,
    /// in order.
    pub fn stream(flow: u32, peer: SocketAddr) -> Self {
        let mut r = TcpReceiver::new(flow, None);
        r.peer = Some(peer);
        r.stream = Some(Box::default());
        r
    }

    /// The bytes that became readable since the last call (a stream receiver's).
    pub fn read(&mut self) -> Vec<u8> {
        self.stream.as_mut().map_or_else(Vec::new, |s| s.read())
    }

    /// Payload bytes held above a gap, waiting for it to fill.
    pub fn held_bytes(&self) -> usize {
        self.stream.as_ref().map_or(0, |s| s.held_bytes())
    }

    /// The flow id.
    pub fn flow(&self) -> u32 {
        self.flow
    }

    /// Counters.
    pub fn stats(&self) -> TcpReceiverStats {
        self.stats
    }

    /// Bytes delivered in order so far.
    pub fn bytes_delivered(&self) -> u64 {
        self.reassembly.rcv_nxt()
    }

    /// True once the expected byte count has been delivered.
    pub fn is_complete(&self) -> bool {
        self.expected == Some(self.bytes_delivered())
    }

    /// When the last expected byte was delivered.
    pub fn completed_at(&self) -> Option<Timestamp> {
        if self.is_complete() {
            self.deliveries.last().map(|d| d.0)
        } else {
            None
        }
    }

    /// (time, cumulative bytes delivered) after each advance of the cumulative point, one
    /// entry per instant (memory grows with the run's length, as the rustox receiver's does).
    pub fn deliveries(&self) -> &[(Timestamp, u64)] {
        &self.deliveries
    }

    /// Bytes delivered by time `t`.
    pub fn delivered_at(&self, t: Timestamp) -> u64 {
        let i = self.deliveries.partition_point(|d| d.0 <= t);
        if i == 0 {
            0
        } else {
            self.deliveries[i - 1].1
        }
    }

    /// Goodput over `[from, to]`, bytes per second (0 for an empty interval).
    pub fn goodput_between(&self, from: Timestamp, to: Timestamp) -> f64 {
        let secs = (to - from).as_secs_f64();
        if secs <= 0.0 {
            return 0.0;
        }
        self.delivered_at(to)
            .saturating_sub(self.delivered_at(from)) as f64
            / secs
    }

    /// The first verification failure, if any (wrong bytes, data beyond the expected end).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    fn fail(&mut self, reason: String) {
        if self.error.is_none() {
            self.error = Some(reason);
        }
    }

    fn on_data(&mut self, now: Timestamp, from: SocketAddr, header: Header, data: &[u8]) {
        let seq = header.number;
        let len = data.len() as u64;
        let mismatch = match self.stream {
            Some(_) => None,
            None => payload::first_mismatch(self.flow, seq, data),
        };
        if let Some(i) = mismatch {
            self.fail(format!(
                "flow {}: wrong byte at offset {}",
                self.flow,
                seq + i as u64
            ));
            return;
        }
        if let Some(total) = self.expected {
            if seq + len > total {
                self.fail(format!(
                    "flow {}: data up to {} beyond the {total}-byte transfer",
                    self.flow,
                    seq + len
                ));
                return;
            }
        }
        self.peer.get_or_insert(from);
        self.stats.segments_received += 1;
        // RFC 7323 §4.3: echo the timestamp of the segment that the next ACK acknowledges
        // first, so delayed and out-of-order ACKs overstate rather than understate the RTT.
        if header.tsval.wrapping_sub(self.ts_recent) as i32 >= 0 && seq <= self.last_ack_sent {
            self.ts_recent = header.tsval;
        }
        let mss = self.peer.map_or(0, mss_for) as u64;
        let arrival = self.reassembly.on_segment(seq, len);
        if let Some(s) = self.stream.as_mut() {
            if matches!(arrival, Arrival::InOrder { .. } | Arrival::OutOfOrder) {
                s.on_segment(seq, data);
            }
        }
        match arrival {
            Arrival::InOrder {
                delivered,
                filled_gap,
            } => {
                self.stats.bytes_delivered += delivered;
                let total = self.reassembly.rcv_nxt();
                match self.deliveries.last_mut() {
                    Some(last) if last.0 == now => last.1 = total,
                    _ => self.deliveries.push((now, total)),
                }
                if filled_gap || total - self.last_ack_sent > mss {
                    self.ack_now = true;
                } else if self.delayed_ack_at.is_none() {
                    self.delayed_ack_at = Some(now + DELAYED_ACK);
                }
            }
            Arrival::OutOfOrder => {
                self.stats.out_of_order_segments += 1;
                self.ack_now = true;
            }
            Arrival::Duplicate => {
                self.stats.duplicate_segments += 1;
                self.ack_now = true;
            }
            Arrival::OutOfWindow => {
                self.stats.out_of_window_segments += 1;
                self.ack_now = true;
            }
        }
    }
}

impl SimNode for TcpReceiver {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, _: SocketAddr, bytes: &[u8]) {
        match Segment::parse(bytes) {
            Ok(Segment::Data { header, payload }) if header.flow == self.flow => {
                self.on_data(now, from, header, payload)
            }
            _ => self.stats.malformed += 1,
        }
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        if self.delayed_ack_at.is_some_and(|t| t <= now) {
            self.ack_now = true;
            self.ack_is_delayed = true;
        }
    }

    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        if !self.ack_now {
            return None;
        }
        let peer = self.peer?;
        let rcv_nxt = self.reassembly.rcv_nxt();
        let header = Header {
            number: rcv_nxt,
            tsval: timestamp_clock(now),
            tsecr: self.ts_recent,
            flow: self.flow,
        };
        let ack = encode_ack(&header, &self.reassembly.sack_blocks());
        self.stats.acks_sent += 1;
        if self.ack_is_delayed {
            self.stats.delayed_acks += 1;
        } else {
            self.stats.immediate_acks += 1;
        }
        self.ack_now = false;
        self.ack_is_delayed = false;
        self.delayed_ack_at = None;
        self.last_ack_sent = rcv_nxt;
        Some((peer, ack))
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.delayed_ack_at
    }

    fn check_invariants(&self) -> Result<(), String> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.stats.bytes_delivered != self.reassembly.rcv_nxt() {
            return Err(format!(
                "delivered {} bytes but the cumulative point is {}",
                self.stats.bytes_delivered,
                self.reassembly.rcv_nxt()
            ));
        }
        if let Some(s) = &self.stream {
            if s.delivered() != self.reassembly.rcv_nxt() {
                return Err(format!(
                    "stream readable up to {} but the cumulative point is {}",
                    s.delivered(),
                    self.reassembly.rcv_nxt()
                ));
            }
        }
        Ok(())
    }
}
