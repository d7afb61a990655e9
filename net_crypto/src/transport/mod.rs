//! The reliability engine of a net_crypto session: send and receive arrays, RTT, loss
//! detection, congestion control, pacing and request (NACK) timing — everything between
//! "a payload to deliver losslessly" and "a plaintext frame to encrypt", with no crypto and
//! no wire framing of its own except the request payload (protocol.md §2.7), which is tied
//! to the arrays.
//!
//! `Connection` (connection.rs) owns one `Transport` and frames what it yields:
//! `[buffer_start = recv_buffer_start()][packet_number][padding][payload]`.
//!
//! CONTRACT (shared by connection.rs, the simulator and file_transfer; keep signatures):
//! - sender side: `queue_lossless`, `send_budget`, `poll_send`, `send_buffer_end`,
//!   `on_peer_buffer_start`, `on_request`, `is_delivered`;
//! - receiver side: `recv_buffer_start`, `on_lossless`, `on_peer_buffer_end`,
//!   `poll_delivered`, `poll_request`;
//! - timers: `poll_timeout`, `handle_timeout`; introspection: `stats`, `check_invariants`,
//!   `memory_usage`.

use std::time::Duration;

use crate::Timestamp;

/// Which congestion controller a session runs (transport.md §3.6, protocol.md §2.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ControllerKind {
    /// Delivery-rate (BBR-style) with a ~2 %-per-round loss guard. The default.
    #[default]
    Bbr,
    /// CUBIC with HyStart++.
    Cubic,
    /// A faithful model of c-toxcore 0.2.18 (min-only RTT, 50 ms ticks, ×1.2/×0.9).
    Legacy,
}

/// How a lossless payload is scheduled (transport.md §3.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketClass {
    /// Messages, control, file requests/controls: goes before bulk data, may use the 16
    /// reserved slots, not limited by `send_budget`.
    Control,
    /// File data: only as much as `send_budget` allows.
    Bulk,
}

/// Tunables of a transport.
#[derive(Debug, Clone)]
pub struct TransportConfig {
    /// The congestion controller.
    pub controller: ControllerKind,
}

/// A plaintext frame body the connection must encrypt and send now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingData {
    /// The packet number to put in the header.
    pub packet_number: u32,
    /// The payload, id byte first.
    pub payload: Vec<u8>,
    /// True when this is a retransmission.
    pub is_resend: bool,
}

/// Why the transport refused an input (all inputs leave state unchanged when refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// A packet number or buffer_start outside the 32768-packet window.
    #[error("packet number outside the window")]
    OutsideWindow,
    /// A lossless packet we already hold or already delivered.
    #[error("duplicate packet")]
    Duplicate,
    /// A request payload that does not decode (protocol.md §2.7 decoding rule).
    #[error("malformed request packet")]
    MalformedRequest,
    /// The send array is full.
    #[error("send queue full")]
    SendQueueFull,
    /// Payload empty or longer than 1373 bytes.
    #[error("bad payload length")]
    BadLength,
}

/// Counters and estimates, for tests, benchmarks and the CLI.
#[derive(Debug, Clone, Default)]
pub struct TransportStats {
    /// Smoothed RTT, once a sample exists.
    pub smoothed_rtt: Option<Duration>,
    /// RTT variance.
    pub rtt_var: Option<Duration>,
    /// Windowed minimum RTT.
    pub min_rtt: Option<Duration>,
    /// Latest RTT sample.
    pub latest_rtt: Option<Duration>,
    /// Number of RTT samples taken (never from resent packets).
    pub rtt_samples: u64,
    /// Congestion window in bytes.
    pub cwnd_bytes: u64,
    /// Pacing rate in bytes per second.
    pub pacing_rate: u64,
    /// Payload bytes sent and not yet acknowledged or declared lost.
    pub bytes_in_flight: u64,
    /// Lossless packets sent for the first time / their payload bytes.
    pub packets_sent: u64,
    /// Payload bytes of first transmissions.
    pub bytes_sent: u64,
    /// Retransmissions / their payload bytes.
    pub packets_resent: u64,
    /// Payload bytes of retransmissions.
    pub bytes_resent: u64,
    /// Packets declared lost.
    pub packets_declared_lost: u64,
    /// Losses later found spurious (the original copy was delivered).
    pub spurious_losses: u64,
    /// Lossless packets the receiver got twice (truth for spurious resends).
    pub duplicates_received: u64,
    /// Lossless payload bytes delivered in order to the layer above.
    pub bytes_delivered: u64,
    /// Request packets sent / received.
    pub requests_sent: u64,
    /// Request packets received.
    pub requests_received: u64,
    /// Lossless packets acknowledged (cumulatively or by request).
    pub packets_acked: u64,
}

/// See the module docs.
#[derive(Debug)]
pub struct Transport {
    _private: (),
}

#[allow(unused_variables)]
impl Transport {
    /// A transport whose arrays start at packet number 0 in both directions.
    pub fn new(now: Timestamp, config: TransportConfig) -> Self {
        todo!()
    }

    /// Queue a lossless payload (id byte first, 1..=1373 bytes). Returns its packet number.
    pub fn queue_lossless(
        &mut self,
        now: Timestamp,
        class: PacketClass,
        payload: &[u8],
    ) -> Result<u32, TransportError> {
        todo!()
    }

    /// How many more Bulk packets may be queued now (cwnd, pacer quantum, window, reserve).
    pub fn send_budget(&self, now: Timestamp) -> usize {
        todo!()
    }

    /// The next lossless packet to transmit now (resends, then control, then bulk), if the
    /// pacer and congestion window allow one.
    pub fn poll_send(&mut self, now: Timestamp) -> Option<OutgoingData> {
        todo!()
    }

    /// The number the next lossless packet will get (carried by lossy/request/kill packets).
    pub fn send_buffer_end(&self) -> u32 {
        todo!()
    }

    /// The peer's cumulative acknowledgement, from any data packet header.
    pub fn on_peer_buffer_start(
        &mut self,
        now: Timestamp,
        buffer_start: u32,
    ) -> Result<(), TransportError> {
        todo!()
    }

    /// A request packet's payload, without its id byte (protocol.md §2.7).
    pub fn on_request(&mut self, now: Timestamp, request: &[u8]) -> Result<(), TransportError> {
        todo!()
    }

    /// True once the peer has acknowledged `packet_number` (`cryptpacket_received`).
    pub fn is_delivered(&self, packet_number: u32) -> bool {
        todo!()
    }

    /// The next lossless packet number we have not yet delivered (our cumulative ack).
    pub fn recv_buffer_start(&self) -> u32 {
        todo!()
    }

    /// A lossless packet from the peer.
    pub fn on_lossless(
        &mut self,
        now: Timestamp,
        packet_number: u32,
        payload: &[u8],
    ) -> Result<(), TransportError> {
        todo!()
    }

    /// The peer's send `buffer_end`, from a lossy/request/kill packet header.
    pub fn on_peer_buffer_end(
        &mut self,
        now: Timestamp,
        buffer_end: u32,
    ) -> Result<(), TransportError> {
        todo!()
    }

    /// The next in-order lossless payload for the layer above.
    pub fn poll_delivered(&mut self) -> Option<Vec<u8>> {
        todo!()
    }

    /// A request payload (id byte 1 first) when one is due (transport.md §3.4).
    pub fn poll_request(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        todo!()
    }

    /// The earliest time `handle_timeout` or `poll_send`/`poll_request` has work.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        todo!()
    }

    /// Run expired timers (loss timer, PTO, request timer, legacy ticks).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        todo!()
    }

    /// Counters and estimates.
    pub fn stats(&self) -> TransportStats {
        todo!()
    }

    /// Internal invariants (bytes in flight = Σ unacked sizes, no RTT sample from a resent
    /// packet, ...). The simulator calls this on every step.
    pub fn check_invariants(&self) -> Result<(), String> {
        todo!()
    }

    /// Heap bytes held by this transport (for the idle-session memory bound).
    pub fn memory_usage(&self) -> usize {
        todo!()
    }
}
