//! What a file transfer through the simulated relay measured: the session's smoothed RTT
//! against the path's base RTT, what the transport declared lost and resent (every such
//! packet is spurious: TCP delivers everything), and what each TCP leg did — its
//! retransmissions and how long its receiver held bytes back behind a hole.

use std::time::Duration;

use rustox_core::node::FriendNumber;
use rustox_core::relay::server::RelayStats;
use rustox_net_crypto::{Timestamp, TransportStats};
use rustox_simulator::{Profile, FULL_WIRE_PACKET};

use super::legs::base_rtt;
use super::socket::{SocketStats, TcpSocket};
use crate::tox_node::SimToxNode;

/// UDP payload of a full net_crypto datagram: the data packet whose round trip the truth
/// is ([`FULL_WIRE_PACKET`] less IPv4/UDP headers).
const DATA_DATAGRAM: u64 = FULL_WIRE_PACKET - 28;

/// A request packet's datagram as the truth counts it: requests run from ~30 to ~100
/// bytes, which moves a 500 ms truth by less than 0.5 ms.
const REQUEST_DATAGRAM: u64 = 64;

/// The session's smoothed RTT, sampled every half RTT (as `simulator/src/transfer.rs` samples it).
#[derive(Debug, Clone)]
pub struct RttTrack {
    base: Duration,
    every: Duration,
    next: Timestamp,
    /// Only samples from this time on count.
    from: Option<Timestamp>,
    samples: Vec<(Timestamp, Duration)>,
}

impl RttTrack {
    /// Compares with `profile`'s relayed base RTT ([`base_rtt`]).
    pub fn new(profile: &Profile) -> Self {
        RttTrack {
            base: base_rtt(profile, DATA_DATAGRAM, REQUEST_DATAGRAM),
            every: profile.rtt / 2,
            next: Timestamp::ZERO,
            from: None,
            samples: Vec::new(),
        }
    }

    /// Takes a sample at `now` if one is due and `now` is past `warm` (the estimator's
    /// warm-up).
    pub fn sample(&mut self, now: Timestamp, warm: Timestamp, stats: Option<TransportStats>) {
        if now < warm || now < self.next {
            return;
        }
        self.from.get_or_insert(warm);
        self.next = now + self.every;
        if let Some(srtt) = stats.and_then(|s| s.smoothed_rtt) {
            self.samples.push((now, srtt));
        }
    }
}

/// One TCP leg: its sending socket's flow and its receiving socket.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LegFigures {
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Segments re-sent.
    pub segments_retransmitted: u64,
    /// Retransmission timeouts.
    pub rto_count: u64,
    /// The sender's congestion window at the end, segments.
    pub cwnd: f64,
    /// The sender's smoothed RTT at the end.
    pub srtt: Option<Duration>,
    /// The receiving socket's counters: its largest release and longest hold are the
    /// head-of-line blocking this leg caused.
    pub receiver: SocketStats,
    /// The longest time between two in-order deliveries at the receiving socket while the
    /// file flowed.
    pub longest_gap: Duration,
}

impl LegFigures {
    fn of(sender: Option<&TcpSocket>, receiver: Option<&TcpSocket>, window: Window) -> Self {
        let mut f = LegFigures::default();
        if let Some(s) = sender.and_then(TcpSocket::sender) {
            let st = s.stats();
            f.segments_sent = st.segments_sent;
            f.segments_retransmitted = st.retransmitted_segments;
            f.rto_count = st.rto_count;
            f.cwnd = s.cwnd();
            f.srtt = s.srtt();
        }
        if let Some(r) = receiver {
            f.receiver = r.stats();
            if let Some(flow) = r.receiver() {
                let d: Vec<Timestamp> = flow
                    .deliveries()
                    .iter()
                    .map(|(t, _)| *t)
                    .filter(|t| *t >= window.0 && *t <= window.1)
                    .collect();
                f.longest_gap = d.windows(2).map(|w| w[1] - w[0]).max().unwrap_or_default();
            }
        }
        f
    }
}

/// From the end of the warm-up to the last byte.
type Window = (Timestamp, Timestamp);

/// Everything a relayed node transfer measured.
#[derive(Debug, Clone)]
pub struct RelayFigures {
    /// The truth the smoothed RTT is compared with: the path's round trip when nothing
    /// queues ([`base_rtt`]).
    pub base_rtt: Duration,
    /// The sender's smoothed RTT every half RTT, from 4 RTTs after the accept to the last
    /// byte.
    pub srtt: Vec<(Timestamp, Duration)>,
    /// The sender's session at the last byte.
    pub sender: TransportStats,
    /// The receiver's session at the last byte.
    pub receiver: TransportStats,
    /// The relay server's counters.
    pub server: RelayStats,
    /// Session datagrams the sender's and the receiver's relay clients could not queue.
    pub relay_unsent: (u64, u64),
    /// Sender → relay, then relay → receiver.
    pub legs: [LegFigures; 2],
    /// When the sender first saw the receiver online (from the start of the run).
    pub online_at: Option<Timestamp>,
}

impl RelayFigures {
    /// Reads the figures off the three hosts at `now` (the last byte); `alice` sends to her
    /// friend `friend`, `bob` knows her as `bob_friend`.
    pub fn collect(
        rtt: RttTrack,
        now: Timestamp,
        alice: &SimToxNode,
        bob: &SimToxNode,
        relay: &SimToxNode,
        friend: FriendNumber,
        bob_friend: FriendNumber,
    ) -> Self {
        let window = (rtt.from.unwrap_or(now), now);
        let own_socket = |n: &SimToxNode| {
            n.tcp()
                .and_then(|p| p.clients().sockets().map(|(_, s)| s.clone()).next())
        };
        let relay_socket_of = |n: &SimToxNode| {
            let addr = n.tcp().map(|p| p.addr());
            relay
                .tcp()
                .and_then(|p| p.server())
                .and_then(|s| s.sockets().find(|s| Some(s.peer()) == addr).cloned())
        };
        let (a_sock, b_sock) = (own_socket(alice), own_socket(bob));
        let (ra_sock, rb_sock) = (relay_socket_of(alice), relay_socket_of(bob));
        RelayFigures {
            base_rtt: rtt.base,
            srtt: rtt.samples,
            sender: alice.node.session_stats(friend).unwrap_or_default(),
            receiver: bob.node.session_stats(bob_friend).unwrap_or_default(),
            server: relay
                .tcp()
                .and_then(|p| p.server())
                .map(|s| s.server().stats())
                .unwrap_or_default(),
            relay_unsent: (
                alice.node.io_counters().relay_unsent,
                bob.node.io_counters().relay_unsent,
            ),
            legs: [
                LegFigures::of(a_sock.as_ref(), ra_sock.as_ref(), window),
                LegFigures::of(rb_sock.as_ref(), b_sock.as_ref(), window),
            ],
            online_at: alice.first_online(friend),
        }
    }

    /// Each sample's (srtt − base) / base.
    fn errors(&self) -> impl Iterator<Item = f64> + '_ {
        let base = self.base_rtt.as_secs_f64();
        self.srtt
            .iter()
            .map(move |(_, s)| (s.as_secs_f64() - base) / base)
    }

    /// Mean |srtt − base| / base over the samples (`None` without samples).
    pub fn rtt_error_mean(&self) -> Option<f64> {
        let n = self.srtt.len();
        (n > 0).then(|| self.errors().map(f64::abs).sum::<f64>() / n as f64)
    }

    /// The largest |srtt − base| / base of any sample.
    pub fn rtt_error_max(&self) -> Option<f64> {
        self.errors().map(f64::abs).reduce(f64::max)
    }

    /// The median smoothed RTT of the samples.
    pub fn srtt_median(&self) -> Option<Duration> {
        let mut s: Vec<Duration> = self.srtt.iter().map(|(_, d)| *d).collect();
        s.sort();
        s.get(s.len() / 2).copied()
    }

    /// The smallest smoothed RTT of the samples ÷ the base RTT: below 1 the estimator read
    /// the path shorter than it can be (PR #1323's collapse).
    pub fn srtt_floor_ratio(&self) -> Option<f64> {
        let base = self.base_rtt.as_secs_f64();
        self.srtt
            .iter()
            .map(|(_, s)| s.as_secs_f64() / base)
            .reduce(f64::min)
    }

    /// Relayed data the relay server dropped (a full output buffer or an unlinked route).
    pub fn relay_drops(&self) -> u64 {
        self.server.drops.iter().sum()
    }

    /// Packets the sender re-sent. With nothing dropped before the legs (`relay_unsent`
    /// and the server's drops all 0) every one is spurious: the legs' TCP delivers
    /// everything the relay clients and the relay queued.
    pub fn spurious_resends(&self) -> u64 {
        self.sender.packets_resent
    }
}
