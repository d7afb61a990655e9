//! A bulk TCP flow as Linux runs it, as simulator nodes: the cross traffic rustox's
//! transport must share a bottleneck with (issue: "against one TCP flow each side gets
//! 35–65 % of the link").
//!
//! Data flows: a [`TcpSender`] sends MSS-sized segments — a 24-byte header plus payload, so
//! that with the link's 28 bytes of IPv4/UDP overhead each full segment costs the 1500 wire
//! bytes Linux puts on an Ethernet path — as fast as its congestion window allows (no
//! pacing: Linux CUBIC under the default qdisc is not paced). A [`TcpReceiver`] reassembles
//! them, verifies every byte, and returns cumulative ACKs with up to three SACK blocks,
//! delayed as Linux delays them. The sender's CUBIC ([`cubic`], RFC 9438) with HyStart++
//! ([`hystart`], RFC 9406), SACK loss recovery with PRR ([`scoreboard`], RFC 6675/6937) and
//! RTO ([`rtt`], RFC 6298 with Linux's 200 ms floor) react to what the ACKs report.
//!
//! [`flow`] adds a sender/receiver pair to any [`rustox_simulator::Simulator`] whose node type can
//! hold them ([`TcpHost`]); [`TcpNode`] is such a type on its own.
//!
//! The same ends also carry an application's bytes ([`TcpSender::stream`],
//! [`TcpReceiver::stream`]: [`send_buffer`], [`receive_buffer`]): the TCP connections of the
//! simulated relay ([`crate::relay_sim`]).

pub mod cubic;
pub mod flow;
pub mod hystart;
pub mod payload;
pub mod reassembly;
pub mod receive_buffer;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod segment;
pub mod send_buffer;
pub mod sender;
pub mod stats;

pub use flow::{tcp_flow, TcpFlow, TcpFlowSpec, TcpHost, TcpNode};
pub use receiver::TcpReceiver;
pub use sender::{CaState, StreamOptions, TcpSender};
pub use stats::{RoundSample, SlowStartExit, TcpReceiverStats, TcpSenderStats};

use std::net::SocketAddr;

use rustox_simulator::{IPV4_UDP_OVERHEAD, IPV6_UDP_OVERHEAD};

/// IPv4 (20) + TCP (20) + timestamp option (10, padded to 12) header bytes of every Linux
/// segment on a path with TCP timestamps (net.ipv4.tcp_timestamps = 1, the default).
pub const IPV4_TCP_HEADERS: usize = 52;

/// IPv6 (40) + TCP (20) + timestamp option (12) header bytes.
pub const IPV6_TCP_HEADERS: usize = 72;

/// Ethernet MTU: the IP packet size Linux segments to on an ordinary path.
pub const ETHERNET_MTU: usize = 1500;

/// Bytes of our segment header: the TCP/IP headers minus what the simulated link already
/// charges for every datagram (IPv4/UDP: 52 − 28; IPv6/UDP: 72 − 48 — both 24), so a
/// segment costs exactly its Linux wire size.
pub const SEGMENT_HEADER: usize = 24;

const _: () = assert!(SEGMENT_HEADER as u64 + IPV4_UDP_OVERHEAD == IPV4_TCP_HEADERS as u64);
const _: () = assert!(SEGMENT_HEADER as u64 + IPV6_UDP_OVERHEAD == IPV6_TCP_HEADERS as u64);

/// The payload bytes per full segment toward `peer`: 1448 over IPv4, 1428 over IPv6 (the MTU
/// minus the headers with timestamps — what `ss -i` shows as `mss` on such a path).
pub fn mss_for(peer: SocketAddr) -> usize {
    if peer.is_ipv4() {
        ETHERNET_MTU - IPV4_TCP_HEADERS
    } else {
        ETHERNET_MTU - IPV6_TCP_HEADERS
    }
}

/// Bytes a sender may have unacknowledged, and a receiver will buffer beyond its cumulative
/// ACK: Linux's default `tcp_wmem` maximum, 4 MiB. It bounds both ends' memory; on the
/// simulated profiles it is never the limit (the deepest, relay500, holds 2.1 MB: its 2 MB buffer plus 125 kB BDP).
pub const WINDOW_BYTES: u64 = 4 * 1024 * 1024;
