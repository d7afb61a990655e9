//! Congestion control behind one trait (transport.md §3.6, STYLE.md: quinn's
//! `congestion.rs`, s2n-quic's opaque per-packet record).
//!
//! The transport hands the controller every send, ack and loss; the controller answers
//! with a congestion window and a pacing rate. Per-packet state the controller needs later
//! (BBR's delivery snapshot) is a [`PacketInfo`] the send array stores in the slot without
//! interpreting it, and gets back with the ack or loss.
//!
//! Three controllers: [`bbr::Bbr`] (default), [`cubic::Cubic`] with HyStart++, and
//! [`legacy::Legacy`], a faithful model of c-toxcore 0.2.18 that also takes over resend and
//! RTT policy (see its module docs).

pub(crate) mod bbr;
pub(crate) mod cubic;
pub(crate) mod delivery_rate;
pub(crate) mod hystart;
pub(crate) mod legacy;

use std::fmt::Debug;
use std::time::Duration;

use super::rtt::RttEstimator;
use crate::Timestamp;

/// Bytes per full packet for window arithmetic: `MAX_CRYPTO_DATA_SIZE` (protocol.md §2.5).
pub(crate) const MAX_PACKET: u64 = 1373;
/// Smallest window any controller allows: 4 packets (BBR's floor, transport.md §1.4; RFC
/// 9002's kMinimumWindow is 2, but 4 keeps the ack clock alive on request-based acks).
pub(crate) const MIN_WINDOW: u64 = 4 * MAX_PACKET;
/// RFC 9002 §7.2 initial window: min(10·MDS, max(14 720, 2·MDS)) = 10 packets here.
pub(crate) const INITIAL_WINDOW: u64 = 10 * MAX_PACKET;

/// The delivery-rate snapshot stamped on a packet at send time
/// (draft-cheng-iccrg-delivery-rate-estimation §3.2; transport.md §1.4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PacketInfo {
    /// Bytes delivered (acked) when this packet was sent.
    pub(crate) delivered: u64,
    /// When `delivered` last changed, as of this send.
    pub(crate) delivered_time: Timestamp,
    /// Send time of the first packet of the flight this packet belongs to.
    pub(crate) first_sent_time: Timestamp,
    /// The sender was application-limited when this packet was sent.
    pub(crate) is_app_limited: bool,
    /// Bytes in flight just after this packet was sent.
    pub(crate) tx_in_flight: u64,
    /// Bytes declared lost when this packet was sent.
    pub(crate) lost: u64,
    /// Bytes transmitted (first sends and resends) up to and including this packet.
    pub(crate) sent_total: u64,
    /// `sent_total` at `first_sent_time` (start of this packet's flight).
    pub(crate) first_sent_total: u64,
}

/// One delivery-rate sample, computed when a never-resent packet is acknowledged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RateSample {
    /// Bytes per second.
    pub(crate) delivery_rate: u64,
    /// Bytes delivered over the sample's interval.
    pub(crate) delivered: u64,
    /// The interval.
    pub(crate) interval: Duration,
    /// The acked packet's snapshot said app-limited.
    pub(crate) is_app_limited: bool,
    /// Bytes in flight when the acked packet was sent.
    pub(crate) tx_in_flight: u64,
    /// Bytes lost between the packet's send and its ack.
    pub(crate) lost: u64,
    /// `delivered` counter of the acked packet at send (round tracking).
    pub(crate) prior_delivered: u64,
}

/// Everything an ack event tells the controller.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AckEvent {
    pub(crate) now: Timestamp,
    /// Bytes newly acknowledged by this event (in-flight ones).
    pub(crate) bytes_acked: u64,
    /// Bytes newly delivered by this event (all acked packets, including ones declared
    /// lost earlier).
    pub(crate) newly_delivered: u64,
    /// The RTT sample this event produced, if any (never from a resent packet).
    pub(crate) rtt_sample: Option<Duration>,
    /// The largest send-time `delivered` snapshot among never-resent packets acked now
    /// (round counting: a round ends when a packet sent after it began is acked).
    pub(crate) round_marker: Option<u64>,
    /// Bytes in flight after the event.
    pub(crate) bytes_in_flight: u64,
    /// Bytes credited to delivery-rate samples so far (rate domain; rounds use it).
    pub(crate) delivered: u64,
    /// All bytes acknowledged so far.
    pub(crate) delivered_total: u64,
    /// Total bytes declared lost so far.
    pub(crate) lost: u64,
    /// A delivery-rate sample, if a never-resent packet was acknowledged.
    pub(crate) sample: Option<RateSample>,
    /// Send time of the newest packet this event acknowledged (recovery-period end test).
    pub(crate) newest_acked_sent: Timestamp,
    /// The sender could not fill the window when the acked data was sent.
    pub(crate) app_limited: bool,
}

/// A batch of packets declared lost in one detection run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LossEvent {
    pub(crate) now: Timestamp,
    /// Latest send time among the lost packets (one reduction per recovery period).
    pub(crate) largest_lost_sent: Timestamp,
    /// Bytes in flight after removing the lost packets.
    pub(crate) bytes_in_flight: u64,
    /// RFC 9002 §7.6 persistent congestion.
    pub(crate) persistent: bool,
}

/// A congestion controller.
pub(crate) trait Controller: Debug + Send {
    /// A packet of `bytes` left; `bytes_in_flight` includes it.
    fn on_sent(&mut self, now: Timestamp, bytes: u64, bytes_in_flight: u64);
    /// An ack event with its RTT estimate already updated.
    fn on_ack(&mut self, ack: &AckEvent, rtt: &RttEstimator);
    /// Packets were declared lost.
    fn on_loss(&mut self, loss: &LossEvent, rtt: &RttEstimator);
    /// A loss declared earlier was spurious: undo its reduction (quinn
    /// `on_spurious_congestion_event`, quiche's rollback).
    fn on_spurious_loss(&mut self);
    /// The congestion window in bytes.
    fn window(&self) -> u64;
    /// Pacing rate in bytes per second; `None` means "do not pace".
    fn pacing_rate(&self, rtt: &RttEstimator) -> Option<u64>;
    /// Whether still in the startup / slow-start phase (diagnostics).
    fn in_slow_start(&self) -> bool;
    /// A one-line state summary for traces.
    fn summary(&self) -> String {
        format!("{self:?}")
    }
}

/// Builds the controller for `kind`.
pub(crate) fn build(kind: super::ControllerKind, now: Timestamp) -> Box<dyn Controller> {
    match kind {
        super::ControllerKind::Bbr => Box::new(bbr::Bbr::new(now)),
        super::ControllerKind::Cubic => Box::new(cubic::Cubic::new(now)),
        // Legacy runs outside the trait's window logic (token buckets); the transport
        // drives `legacy::Legacy` directly and uses this only for bookkeeping.
        super::ControllerKind::Legacy => Box::new(legacy::LegacyWindow),
    }
}
