//! Congestion control behind one trait (docs/transport.md §3.6, docs/conventions.md: quinn's
//! `congestion.rs`, s2n-quic's opaque per-packet record).
//!
//! The transport hands the controller every send, ack and loss; the controller answers
//! with a congestion window and a pacing rate. Per-packet state the controller needs later
//! (BBR's delivery snapshot) is a [`PacketInfo`] the send array stores in the slot without
//! interpreting it, and gets back with the ack or loss.
//!
//! Three controllers: [`bbr::Bbr`] (default), [`cubic::Cubic`] with HyStart++, and
//! [`legacy::Legacy`], a faithful model of c-toxcore 0.2.18 (see its module docs). c-toxcore
//! differs from us in more than the window: it sends by token buckets, resends on NACK
//! alone, keeps its own RTT and paces its requests by its receive rate. The trait has a
//! hook for each of those differences; the defaults are ours (BBR and CUBIC), and the
//! legacy model overrides them, so the transport never asks which controller it runs.

pub(crate) mod bbr;
pub(crate) mod cubic;
pub(crate) mod delivery_rate;
pub(crate) mod hystart;
pub(crate) mod legacy;

use std::fmt::Debug;
use std::time::Duration;

use super::rtt::RttEstimator;
use super::TransportStats;
use crate::Timestamp;

/// Bytes per full packet for window arithmetic: `MAX_CRYPTO_DATA_SIZE` (docs/protocol.md §2.5).
pub(crate) const MAX_PACKET: u64 = 1373;
/// Smallest window any controller allows: 4 packets (BBR's floor, docs/transport.md §1.4; RFC
/// 9002's kMinimumWindow is 2, but 4 keeps the ack clock alive on request-based acks).
pub(crate) const MIN_WINDOW: u64 = 4 * MAX_PACKET;
/// RFC 9002 §7.2 initial window: min(10·MDS, max(14 720, 2·MDS)) = 10 packets here.
pub(crate) const INITIAL_WINDOW: u64 = 10 * MAX_PACKET;

/// The delivery-rate snapshot stamped on a packet at send time
/// (draft-cheng-iccrg-delivery-rate-estimation §3.2; docs/transport.md §1.4).
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
    /// The path's bandwidth as the controller models it, bytes per second (`None`: no
    /// model, or no sample yet).
    fn bandwidth_estimate(&self) -> Option<u64> {
        None
    }
    /// The path's capacity, bytes per second, once the controller has measured it with the
    /// pipe full (BBR after startup found the bandwidth plateau); `None` before, and for
    /// controllers without a bandwidth model. Until then an estimate is only a lower bound:
    /// a session carrying a call alone never fills its pipe (lossy media is neither
    /// acknowledged nor sampled), so its estimate stays at what the handshake measured.
    fn bandwidth_capacity(&self) -> Option<u64> {
        None
    }
    /// A one-line state summary for traces.
    fn summary(&self) -> String {
        format!("{self:?}")
    }

    // ---- Where c-toxcore's sender and receiver differ from ours (docs/protocol.md §2.7,
    // §2.10, §2.11; docs/transport.md §2.4). Each default is what BBR and CUBIC do.

    /// Whether resends and bulk data wait for the pacer and the congestion window. Ours
    /// do (docs/transport.md §3.7). c-toxcore has neither: each pass of `send_crypto_packets`
    /// sends at once whatever its token buckets allow (docs/protocol.md §2.10 (c)–(d)), so its
    /// resends and bulk data go on the controller's own iterations
    /// ([`Self::on_iteration`], [`Self::refill_deadline`]) and only control packets go
    /// as soon as they are queued. A controller that does not pace gives no pacing rate.
    fn paces(&self) -> bool {
        true
    }

    /// Bulk packets the controller itself lets the layer above write at `now`, or `None`
    /// when the congestion window and the pacer decide (ours, docs/transport.md §3.9).
    /// c-toxcore refuses a congestion-controlled write without a `packets_left` token, and
    /// its resend pass (`pending_resends` packets waiting) takes its tokens first
    /// (docs/protocol.md §2.10 (b)–(d)). A question, not an iteration: the state is unchanged.
    fn bulk_write_budget(&self, now: Timestamp, pending_resends: u32) -> Option<u32> {
        let _ = (now, pending_resends);
        None
    }

    /// Whether one more bulk packet may be written at `now` (refilling token buckets to
    /// `now` first). Ours always: `send_budget` already held the layer above to the
    /// window. c-toxcore's `write_cryptpacket` refuses it with no token left (docs/protocol.md
    /// §2.10 (d)).
    fn admit_bulk_write(&mut self, now: Timestamp, pending_resends: u32) -> bool {
        let _ = (now, pending_resends);
        true
    }

    /// A bulk packet was queued: c-toxcore takes its tokens and counts it as sent
    /// (`packets_left−−`, `packets_sent++`, docs/protocol.md §2.10 (d)). Ours count at send.
    fn on_bulk_write(&mut self) {}

    /// Whether the resend queue's head may go now, taking what it costs. Ours: yes (the
    /// pacer alone holds resends). c-toxcore's resend pass stops when
    /// `packets_left_requested` runs out, and each resend spends a new-data token too or
    /// starts a congestion event (docs/protocol.md §2.10 (c)).
    fn take_resend_token(&mut self, now: Timestamp) -> bool {
        let _ = now;
        true
    }

    /// One pass of the controller's own clock, run by every `poll_send` and every
    /// `handle_timeout`. Ours has none: it reacts to sends, acks and losses. c-toxcore runs
    /// `send_crypto_packets` once per iteration of its main loop, refilling its token
    /// buckets from the elapsed time and running the 50 ms measurement tick (docs/protocol.md
    /// §2.10 (a)–(b)). `send_queue_len` = packets held in the send array.
    fn on_iteration(&mut self, now: Timestamp, send_queue_len: u32) {
        let _ = (now, send_queue_len);
    }

    /// When the controller's measurement tick is next due, if it is timed apart from its
    /// iterations ([`Self::refill_deadline`]). Ours: never. The legacy model runs its
    /// 50 ms tick (docs/protocol.md §2.10 (a)) inside an iteration, as c-toxcore does, and
    /// gives none either.
    fn tick_deadline(&self) -> Option<Timestamp> {
        None
    }

    /// When the controller's own clock next has work ([`Self::on_iteration`] then refills
    /// token buckets, runs a tick, lets resends go). c-toxcore's `tox_iterate` loop wakes
    /// every `floor(1000/rate) + 1` ms, at most every 50 ms (`crypto_run_interval`,
    /// `messenger_run_interval`, docs/protocol.md §2.10 (e)); its resends and bulk data go in
    /// those iterations. Ours: never.
    fn refill_deadline(&self) -> Option<Timestamp> {
        None
    }

    /// What a request naming a packet in flight, last sent at `last_sent`, does. Ours
    /// mark it NACKed and leave the verdict to loss detection (docs/transport.md §3.5): a NACK
    /// is evidence, not proof. c-toxcore resends it iff `sent_time + rtt_time < now`
    /// and ignores it otherwise (docs/protocol.md §2.7).
    fn on_nack(&self, now: Timestamp, last_sent: Timestamp) -> NackResponse {
        let _ = (now, last_sent);
        NackResponse::MarkNacked
    }

    /// Whether this path loses packets at random, not only to a full queue: then a repair
    /// may well be lost again, and at a transfer's tail the transport sends each repair
    /// twice (sender.rs `at_the_tail`). A controller that cannot tell says no: on a path
    /// whose only losses are overflows, a second copy is always a duplicate.
    fn sees_random_loss(&self) -> bool {
        false
    }

    /// Whether our loss detection (thresholds and loss timer) and probe timeout run. Ours
    /// do (docs/transport.md §3.5, RFC 9002 §6). c-toxcore has no retransmission timer: it
    /// resends only what a request names ([`Self::on_nack`]), and tail loss waits until
    /// the peer learns `buffer_end` from a later packet (docs/protocol.md §2.7).
    fn detects_loss(&self) -> bool {
        true
    }

    /// Whether acknowledgements feed our RTT estimator (Karn's rule: samples only from
    /// never-resent packets, docs/transport.md §3.3) and the delivery-rate sampler. c-toxcore
    /// keeps its own min-only `rtt_time` from [`Self::on_acked_send_time`] instead
    /// (docs/protocol.md §2.11).
    fn uses_rtt_estimator(&self) -> bool {
        true
    }

    /// c-toxcore's RTT candidate: the last send time of the packet at the old
    /// `buffer_start` when a header advances it, or the newest last send time among the
    /// packets a request frees (docs/protocol.md §2.6 step 2, §2.7, §2.11; overwritten on
    /// resend, hence its Karn violation). Ours ignore it.
    fn on_acked_send_time(&mut self, now: Timestamp, last_sent: Timestamp) {
        let _ = (now, last_sent);
    }

    /// The RTT, window and pacing figures of the transport's statistics. Ours come from
    /// the RTT estimator and this controller; the legacy model reports c-toxcore's
    /// `rtt_time` and token bucket, which is what its sender acts on.
    fn fill_stats(&self, rtt: &RttEstimator, stats: &mut TransportStats) {
        stats.smoothed_rtt = rtt.smoothed();
        stats.rtt_var = rtt.has_sample().then(|| rtt.var());
        stats.min_rtt = rtt.min_rtt();
        stats.latest_rtt = rtt.has_sample().then(|| rtt.latest());
        stats.rtt_samples = rtt.samples();
        stats.cwnd_bytes = self.window();
        stats.pacing_rate = self.pacing_rate(rtt).unwrap_or(0);
        stats.peer_ack_delay = Some(rtt.peer_ack_delay());
    }

    // ---- The receive side of the same differences.

    /// A lossless packet was received (first copy). c-toxcore counts them for its receive
    /// rate, which sets its request interval (`packet_counter`, docs/protocol.md §2.10 (a)).
    fn on_packet_received(&mut self) {}

    /// The request interval when the controller sets it, given `recv_len` = receive-array
    /// length including holes; `None` when our ack timing decides (docs/transport.md §3.4:
    /// every 8 packets, at once on a new hole, 25 ms while data flows). c-toxcore's
    /// receiver requests every 50–1000 ms by its receive rate and never on a hole
    /// (docs/protocol.md §2.7).
    fn request_interval(&self, recv_len: u32) -> Option<Duration> {
        let _ = recv_len;
        None
    }

    /// Whether our requests carry a tail entry (see the transport's `receiver` module).
    /// The legacy model's receiver writes c-toxcore's `generate_request_packet` as it is.
    fn sends_tail_entries(&self) -> bool {
        true
    }
}

/// What a request naming a packet in flight does ([`Controller::on_nack`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NackResponse {
    /// Mark the slot NACKed; loss detection decides (ours).
    MarkNacked,
    /// Declare it lost and queue its resend now (c-toxcore, sent long enough ago).
    Resend,
    /// Nothing (c-toxcore, sent too recently).
    Ignore,
}

/// Builds the controller for `kind`.
pub(crate) fn build(kind: super::ControllerKind, now: Timestamp) -> Box<dyn Controller> {
    match kind {
        super::ControllerKind::Bbr => Box::new(bbr::Bbr::new(now)),
        super::ControllerKind::Cubic => Box::new(cubic::Cubic::new(now)),
        super::ControllerKind::Legacy => Box::new(legacy::Legacy::new(now)),
    }
}
