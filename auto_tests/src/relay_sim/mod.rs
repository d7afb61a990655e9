//! A TCP relay in the simulator: two whole nodes that cannot reach each other over UDP,
//! and the real relay server between them on simulated TCP connections.
//!
//! What runs is the code users run: each node is a `rustox_core::node::Node` whose relay
//! client speaks the relay protocol (docs/protocol.md §7), and the relay is
//! `rustox_core::relay::server::RelayServer`. What the simulator adds is what the operating
//! system would: TCP. Every node↔relay connection is a pair of flows of the TCP model
//! ([`crate::tcp`]: Linux's CUBIC with HyStart++, SACK recovery with PRR, RTO with its
//! 200 ms floor, delayed ACKs) carrying the bytes the programs write, so a relayed path has
//! what TCP gives it:
//! * **in-order delivery**: a segment lost on a leg is re-sent by that leg's TCP, and
//!   everything behind it waits in the receiving socket until it arrives, then is released
//!   at once — head-of-line blocking. Above it, the net_crypto session sees no loss, only
//!   a pause and a burst;
//! * **the legs' own congestion control**: each leg's CUBIC runs under the session's own
//!   controller (TCP in TCP), and a leg's window, not the session's, may limit the flow;
//! * **backpressure**: a socket takes only what its send buffer holds (Linux's autotuned
//!   limit, two windows); what it does not take waits in the relay client's or the relay
//!   server's bounded output, and past that the node or the relay drops it, as the real
//!   ones do.
//!
//! Pieces: [`control`] (SYN, SYN-ACK, RST), [`socket`] (one connection end), [`client`]
//! (the node's relay sockets, driven by the node's `poll_relay_connect` / `relay_write` /
//! `handle_relay_*` calls), [`server`] (the relay server on its sockets), [`port`] (a host's
//! TCP address holding both), [`legs`] (a profile cut into two legs, and the path's base
//! RTT), [`topology`] (wiring two nodes and a relay host into a simulator), [`figures`]
//! (what a transfer through it measured).
//!
//! Not modelled: the TCP handshake's options and window scaling (windows are the TCP
//! model's fixed 4 MiB), FIN (connections end with a reset), ACKs riding on data, the
//! relay's CPU time, and a relay host's own access link being shared by other clients.

pub mod client;
pub mod control;
pub mod figures;
pub mod legs;
pub mod port;
pub mod server;
pub mod socket;
pub mod topology;

pub use client::RelaySockets;
pub use legs::{base_rtt, leg_config};
pub use port::TcpPort;
pub use server::SimRelayServer;
pub use socket::{SocketStats, TcpSocket};
pub use topology::{through_relay, RelayedPath};
