//! The reliability engine of a net_crypto session: send and receive arrays, RTT, loss
//! detection, congestion control, pacing and request (NACK) timing — everything between
//! "a payload to deliver losslessly" and "a plaintext frame to encrypt", with no crypto and
//! no wire framing of its own except the request payload (docs/protocol.md §2.7), which is tied
//! to the arrays.
//!
//! `Connection` (connection/) owns one `Transport` and frames what it yields:
//! `[buffer_start = recv_buffer_start()][packet_number][padding][payload]`.
//!
//! How data flows, one file per step:
//! - [`sender`]: `queue_lossless` stores a payload in the [`send_array`] and queues it as
//!   control or bulk data; `poll_send` picks the next packet (probes, resends, control,
//!   bulk) when the [`pacer`] and the congestion window let it go.
//! - [`ack`]: the peer's `buffer_start` in every data packet header
//!   (`on_peer_buffer_start`) and its request packets (`on_request`) free slots; each ack
//!   event gives RTT ([`rtt`]) and delivery-rate samples and goes to the controller
//!   ([`cc`]).
//! - [`recovery`]: loss detection ([`loss`] thresholds) after every ack event and when its
//!   timer fires moves slots to the resend queue; the probe timeout sends probes and has
//!   the receiver side advertise `buffer_end`.
//! - [`receiver`]: `on_lossless` stores a packet in the [`recv_array`], `poll_delivered`
//!   hands payloads up in order, `poll_request` writes a request ([`request`]) when
//!   [`ack_timing`] says one is due.
//! - [`timer`]: every deadline above is an entry of one table; `poll_timeout` is its
//!   earliest entry, `handle_timeout` runs the expired ones.
//!
//! [`TransportStats`] and [`RateCounter`] are counters for tests, the simulator and the CLI.
//!
//! CONTRACT (shared by connection/, the simulator and file_transfer; keep signatures):
//! - sender side: `queue_lossless`, `send_budget`, `poll_send`, `send_buffer_end`,
//!   `on_peer_buffer_start`, `on_request`, `is_delivered`;
//! - receiver side: `recv_buffer_start`, `on_lossless`, `on_peer_buffer_end`,
//!   `poll_delivered`, `poll_request`;
//! - timers: `poll_timeout`, `handle_timeout`; introspection: `stats`, `check_invariants`,
//!   `memory_usage`.
//!
//! All of it is wire-compatible with c-toxcore 0.2.18; the choices that differ in timing
//! are documented in the file that makes them.

mod ack;
mod ack_timing;
mod array_budget;
mod cc;
mod driver_gap;
mod loss;
mod minmax;
mod pacer;
mod path_change;
mod rate;
mod receiver;
mod recovery;
mod recv_array;
mod request;
mod rtt;
mod send_array;
mod sender;
mod sender_watch;
mod stats;
mod timer;

use array_budget::Account;
pub use array_budget::ArrayBudget;

use std::collections::VecDeque;

pub use rate::RateCounter;
pub use stats::TransportStats;

use ack_timing::AckTiming;
use cc::delivery_rate::DeliveryRate;
use cc::Controller;
use loss::LossThresholds;
use pacer::Pacer;
use recv_array::RecvArray;
use rtt::RttEstimator;
use send_array::{SendArray, SlotState, WINDOW};

use crate::Timestamp;

/// Which congestion controller a session runs (docs/transport.md §3.6, docs/protocol.md §2.10).
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

impl ControllerKind {
    /// Every controller, in the order reports list them.
    pub const ALL: [ControllerKind; 3] = [
        ControllerKind::Bbr,
        ControllerKind::Cubic,
        ControllerKind::Legacy,
    ];

    /// Its name on command lines and in reports: `bbr`, `cubic` or `legacy`.
    pub fn name(self) -> &'static str {
        match self {
            ControllerKind::Bbr => "bbr",
            ControllerKind::Cubic => "cubic",
            ControllerKind::Legacy => "legacy",
        }
    }

    /// The controller called `name` (any case).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }
}

/// How a lossless payload is scheduled (docs/transport.md §3.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketClass {
    /// Messages, control, file requests/controls: goes before bulk data, may use the 16
    /// reserved slots, not limited by `send_budget`.
    Control,
    /// File data: only as much as `send_budget` allows.
    Bulk,
}

/// Tunables of a transport.
#[derive(Debug, Clone, Default)]
pub struct TransportConfig {
    /// The congestion controller.
    pub controller: ControllerKind,
    /// How late the driver's timer may wake after the deadline it was given (its grain plus
    /// scheduling delay): tokio's millisecond timer up to ~2 ms, a timerfd tens of µs. The
    /// pacer lets its burst credit cover this from the first wake-up on (pacer.rs); later
    /// it also measures the lateness itself. Zero: measured only.
    pub wake_lateness: std::time::Duration,
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

/// A packet to send, borrowed from the send array ([`Transport::poll_send_ref`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutgoingRef<'a> {
    /// The packet number to put in the header.
    pub packet_number: u32,
    /// The payload, id byte first.
    pub payload: &'a [u8],
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
    /// A request payload that does not decode (docs/protocol.md §2.7 decoding rule).
    #[error("malformed request packet")]
    MalformedRequest,
    /// The send array is full, or holds the session's share of a full memory budget.
    #[error("send queue full")]
    SendQueueFull,
    /// An out-of-order packet refused: the endpoint's memory budget is full and this
    /// session holds its share ([`ArrayBudget`]).
    #[error("memory budget full")]
    OverBudget,
    /// Payload empty or longer than 1373 bytes.
    #[error("bad payload length")]
    BadLength,
}

/// `MAX_CRYPTO_DATA_SIZE` (docs/protocol.md §2.5): the largest payload, id byte included.
pub const MAX_PAYLOAD: usize = 1373;
/// Messenger's MIN_SLOTS_FREE (docs/protocol.md §3.6, docs/transport.md §3.9): send slots kept for
/// non-bulk packets.
pub const RESERVED_SLOTS: u32 = 16;

/// True if `a` comes before `b` in serial (wrapping u32) order.
fn serial_lt(a: u32, b: u32) -> bool {
    a != b && b.wrapping_sub(a) < 1 << 31
}

/// See the module docs.
#[derive(Debug)]
pub struct Transport {
    kind: ControllerKind,
    // ---- sender ----
    send: SendArray,
    /// One past the highest packet number transmitted: what we advertise as buffer_end.
    sent_end: u32,
    resend_queue: VecDeque<u32>,
    probe_queue: VecDeque<u32>,
    /// Resends made while the sender had no new data, to be sent once more (sender.rs).
    tail_copies: VecDeque<u32>,
    /// Tail copies made since bulk data was last queued.
    tail_copies_made: u32,
    control_queue: VecDeque<u32>,
    bulk_queue: VecDeque<u32>,
    queued_bulk_bytes: u64,
    bytes_in_flight: u64,
    largest_acked: Option<u32>,
    /// buffer_start of the latest data-packet header, until a request consumes it (a
    /// request is relative to its own packet's header).
    peer_header_start: Option<u32>,
    /// Highest packet number a request named (loss-scan bound).
    largest_nacked: Option<u32>,
    rtt: RttEstimator,
    /// first_sent of the packet that gave the last RTT sample (one sample per packet).
    last_sampled_sent: Option<Timestamp>,
    /// The latest send time among the packets the last header's `buffer_start`
    /// acknowledged (for the request in the same packet, which takes it).
    peer_header_acked: Option<Timestamp>,
    /// When the last PTO fired, until new data is acknowledged.
    last_pto: Option<Timestamp>,
    /// A PTO that expired unanswered before the next one fired (persistent congestion
    /// evidence), kept until loss detection uses it or an ack without a PTO before it.
    unanswered_pto: Option<Timestamp>,
    loss: LossThresholds,
    /// The loss-detection deadline ([`timer::Timer::LossDetection`]), armed by loss
    /// detection: the one deadline stored; timer.rs derives the others.
    loss_timer: Option<Timestamp>,
    cc: Box<dyn Controller>,
    delivery: DeliveryRate,
    pacer: Pacer,
    pto_count: u32,
    last_inflight_sent: Timestamp,
    /// When the peer's last request arrived (PTO probes only if it has gone silent).
    last_request_rx: Option<Timestamp>,
    /// Set if an RTT sample ever came from a resent packet (must stay false; bbr/cubic).
    karn_violated: bool,
    /// Bulk packets the last `send_budget` offered and the layer above has not queued
    /// yet. If it is still positive when the queues run dry, the sender is
    /// application-limited (the file layer had nothing to send), not window-limited.
    budget_unused: u64,
    /// How far apart the layer above calls for bulk data (driver_gap.rs).
    driver_gap: driver_gap::DriverGap,
    // ---- receiver ----
    recv: RecvArray,
    ack_timing: AckTiming,
    /// Packet numbers our recent requests named as tail entries (see `poll_request`).
    tail_named: VecDeque<u32>,
    /// Duplicates received of packets that a tail entry had named: a c-toxcore sender
    /// resends every named packet older than its (minimum) RTT, so under jitter or a
    /// queue it resends the tail packets still in flight. At `TAIL_DUPLICATES_OFF`
    /// (receiver.rs) tail entries stop for this session.
    tail_duplicates: u32,
    /// When the session last moved to another path (path_change.rs); packets first sent
    /// before it give no samples.
    path_since: Timestamp,
    stats: TransportStats,
    /// What the arrays hold, in the endpoint's memory budget.
    account: Account,
}

impl Transport {
    /// A transport whose arrays start at packet number 0 in both directions.
    pub fn new(now: Timestamp, config: TransportConfig) -> Self {
        Self {
            kind: config.controller,
            send: SendArray::new(0),
            sent_end: 0,
            resend_queue: VecDeque::new(),
            probe_queue: VecDeque::new(),
            tail_copies: VecDeque::new(),
            tail_copies_made: 0,
            control_queue: VecDeque::new(),
            bulk_queue: VecDeque::new(),
            queued_bulk_bytes: 0,
            bytes_in_flight: 0,
            largest_acked: None,
            peer_header_start: None,
            largest_nacked: None,
            rtt: RttEstimator::new(),
            last_sampled_sent: None,
            peer_header_acked: None,
            last_pto: None,
            unanswered_pto: None,
            loss: LossThresholds::new(),
            loss_timer: None,
            cc: cc::build(config.controller, now),
            delivery: DeliveryRate::new(now),
            pacer: Pacer::new(config.wake_lateness),
            pto_count: 0,
            last_inflight_sent: now,
            last_request_rx: None,
            karn_violated: false,
            budget_unused: 0,
            driver_gap: driver_gap::DriverGap::new(),
            recv: RecvArray::new(0),
            ack_timing: AckTiming::new(now),
            tail_named: VecDeque::new(),
            tail_duplicates: 0,
            path_since: Timestamp::ZERO,
            stats: TransportStats::default(),
            account: Account::new(ArrayBudget::unlimited()),
        }
    }

    /// The controller this transport runs.
    pub fn controller(&self) -> ControllerKind {
        self.kind
    }

    /// Accounts this transport's arrays in `budget` (an endpoint's) from now on.
    pub fn set_array_budget(&mut self, budget: ArrayBudget) {
        self.account = Account::new(budget);
        self.sync_array_account();
    }

    /// Bytes the send and receive arrays hold (payloads and ring slots), as the memory
    /// budget counts them.
    pub fn array_bytes(&self) -> usize {
        self.account.held()
    }

    /// Brings the budget's count up to date after the arrays changed.
    pub(crate) fn sync_array_account(&mut self) {
        let bytes = self.send.accounted_bytes() + self.recv.accounted_bytes();
        self.account.set_held(bytes);
    }

    /// A one-line description of the congestion controller's state, for traces.
    pub fn controller_state(&self) -> String {
        self.cc.summary()
    }

    /// Internal invariants (bytes in flight = Σ unacked sizes, no RTT sample from a resent
    /// packet, ...). The simulator calls this on every step.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut inflight = 0u64;
        for (pn, s) in self.send.iter() {
            if s.state == SlotState::InFlight {
                inflight += s.size();
            }
            if s.tx_count > 0 && s.first_sent > s.last_sent {
                return Err(format!(
                    "packet {pn}: first_sent {:?} > last_sent {:?}",
                    s.first_sent, s.last_sent
                ));
            }
            if s.tx_count == 0 && s.state != SlotState::Unsent {
                return Err(format!("packet {pn}: state {:?} but never sent", s.state));
            }
        }
        if inflight != self.bytes_in_flight {
            return Err(format!(
                "bytes_in_flight {} != Σ in-flight slot sizes {inflight}",
                self.bytes_in_flight
            ));
        }
        if self.karn_violated {
            return Err("an RTT sample was taken from a resent packet".into());
        }
        if self.send.len() > WINDOW || self.recv.len() > WINDOW {
            return Err(format!(
                "window too large: send {} recv {}",
                self.send.len(),
                self.recv.len()
            ));
        }
        if self.sent_end.wrapping_sub(self.send.start()) > self.send.len() {
            return Err("sent_end beyond the send array".into());
        }
        Ok(())
    }

    /// Heap bytes held by this transport (for the idle-session memory bound).
    pub fn memory_usage(&self) -> usize {
        let q = |d: &VecDeque<u32>| d.capacity() * std::mem::size_of::<u32>();
        self.send.memory_usage()
            + self.recv.memory_usage()
            + q(&self.resend_queue)
            + q(&self.probe_queue)
            + q(&self.tail_copies)
            + q(&self.control_queue)
            + q(&self.bulk_queue)
            + q(&self.tail_named)
            + self.ack_timing.watch.memory_usage()
            + std::mem::size_of_val(self.cc.as_ref())
    }
}
