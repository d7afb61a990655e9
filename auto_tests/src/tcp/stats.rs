//! What a TCP flow did, for scenarios and benchmarks.

use std::time::Duration;

use rustox_net_crypto::Timestamp;

/// How the initial slow start ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowStartExit {
    /// HyStart++ saw the RTT rise and CSS ran its rounds.
    HyStart,
    /// A loss started fast recovery.
    Loss,
    /// The retransmission timer expired.
    Timeout,
}

/// Counters of a [`super::TcpSender`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpSenderStats {
    /// Bytes the receiver's cumulative ACK covers: delivered in order.
    pub bytes_acked: u64,
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Segments re-sent (after loss marking or an RTO).
    pub retransmitted_segments: u64,
    /// Retransmission timer expiries.
    pub rto_count: u64,
    /// Fast-recovery episodes entered (one window reduction each).
    pub loss_episodes: u64,
    /// Segments marked lost by the SACK rule.
    pub segments_marked_lost: u64,
    /// ACKs processed.
    pub acks_received: u64,
    /// Datagrams that were not valid ACKs for this flow (bad checksum, wrong flow, data).
    pub malformed: u64,
    /// When and how the initial slow start ended.
    pub slow_start_exit: Option<(Timestamp, SlowStartExit)>,
}

/// One sample per round trip of the sender's state (taken when the cumulative ACK passes
/// what was outstanding at the previous sample), for plots and convergence checks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundSample {
    /// When.
    pub at: Timestamp,
    /// Congestion window, segments.
    pub cwnd: f64,
    /// Segments in flight.
    pub in_flight: usize,
    /// Smoothed RTT.
    pub srtt: Option<Duration>,
    /// Cumulative bytes acknowledged.
    pub bytes_acked: u64,
}

/// Counters of a [`super::TcpReceiver`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpReceiverStats {
    /// Bytes delivered in order (the cumulative point).
    pub bytes_delivered: u64,
    /// Data segments received and parsed.
    pub segments_received: u64,
    /// Segments that brought nothing new (spurious retransmissions, duplicates).
    pub duplicate_segments: u64,
    /// Segments that arrived above a gap.
    pub out_of_order_segments: u64,
    /// Segments beyond the receive window (dropped).
    pub out_of_window_segments: u64,
    /// ACKs sent.
    pub acks_sent: u64,
    /// ACKs sent at once (out of order, gap filled, or the second full segment).
    pub immediate_acks: u64,
    /// ACKs sent when the delayed-ACK timer fired.
    pub delayed_acks: u64,
    /// Datagrams that were not valid data segments of this flow.
    pub malformed: u64,
}
