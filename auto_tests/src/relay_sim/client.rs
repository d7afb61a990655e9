//! A node's TCP relay connections on simulated sockets: the part of a driver that owns the
//! relay sockets (core `node/relays.rs`: "the driver owns the TCP sockets"), doing what the
//! real one does with the node's calls.
//!
//! * [`Node::poll_relay_connect`] → a connect; the SYN-ACK → [`Node::handle_relay_connected`];
//!   a reset or a connect that gives up → [`Node::handle_relay_closed`];
//!   [`Node::poll_relay_close`] → a reset.
//! * Bytes read → [`Node::handle_relay_bytes`] at once, in order.
//! * [`Node::relay_write`] is written while the socket takes it, and
//!   [`Node::relay_consume`] is told how much it took: when the send buffer is full the rest
//!   stays in the relay client's own bounded output, and what does not fit there is the
//!   node's to drop — the backpressure a real socket gives.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

use rustox_core::node::Node;
use rustox_core::relay::client::RelayId;
use rustox_net_crypto::Timestamp;

use super::control::{segment_conn, Arrival};
use super::socket::{SocketInput, SocketStats, TcpSocket};
use crate::tcp::StreamOptions;

/// One connection the node asked for.
#[derive(Debug, Clone)]
struct Conn {
    id: RelayId,
    socket: TcpSocket,
}

/// The node's relay sockets. Connections are numbered by this host (the connection id the
/// relay sees beside our address); maps are ordered so runs replay exactly.
#[derive(Debug, Clone)]
pub struct RelaySockets {
    options: StreamOptions,
    next_conn: u32,
    conns: BTreeMap<u32, Conn>,
    by_id: BTreeMap<RelayId, u32>,
    out: VecDeque<(SocketAddr, Vec<u8>)>,
    /// Counters of sockets that are gone, so totals survive reconnections.
    closed_stats: Vec<SocketStats>,
    /// The next connection opened drops a data segment at this time (tests).
    drop_plan: Option<Timestamp>,
}

impl RelaySockets {
    /// No connections yet; sockets are set with `options`.
    pub fn new(options: StreamOptions) -> Self {
        RelaySockets {
            options,
            next_conn: 1,
            conns: BTreeMap::new(),
            by_id: BTreeMap::new(),
            out: VecDeque::new(),
            closed_stats: Vec::new(),
            drop_plan: None,
        }
    }

    /// Fault injection for every socket open or opened later: the first large data segment
    /// each sends at or after `at` is lost ([`TcpSocket::drop_data_segment_at`]).
    pub fn drop_data_segment_at(&mut self, at: Timestamp) {
        self.drop_plan = Some(at);
        for c in self.conns.values_mut() {
            c.socket.drop_data_segment_at(at);
        }
    }

    /// Whether a segment from `from` belongs to one of our connections.
    pub fn owns(&self, from: SocketAddr, bytes: &[u8]) -> bool {
        segment_conn(bytes)
            .and_then(|c| self.conns.get(&c))
            .is_some_and(|c| c.socket.peer() == from)
    }

    /// The open sockets, by the node's relay id.
    pub fn sockets(&self) -> impl Iterator<Item = (RelayId, &TcpSocket)> {
        self.conns.values().map(|c| (c.id, &c.socket))
    }

    /// Counters of every socket this host had, open or gone.
    pub fn all_stats(&self) -> Vec<SocketStats> {
        self.closed_stats
            .iter()
            .copied()
            .chain(self.conns.values().map(|c| c.socket.stats()))
            .collect()
    }

    /// A segment of one of our connections arrived from `from` on our address `to`.
    pub fn handle_segment(&mut self, now: Timestamp, segment: Arrival<'_>, node: &mut Node) {
        let Arrival { from, to, bytes } = segment;
        let Some(conn) = segment_conn(bytes).filter(|c| self.conns.contains_key(c)) else {
            return;
        };
        let Some(c) = self
            .conns
            .get_mut(&conn)
            .filter(|c| c.socket.peer() == from)
        else {
            return;
        };
        let id = c.id;
        match c.socket.handle_segment(now, to, bytes) {
            SocketInput::Connected => node.handle_relay_connected(now, id),
            SocketInput::Reset => {
                self.forget(conn);
                node.handle_relay_closed(now, id);
                return;
            }
            SocketInput::Nothing => {}
        }
        if let Some(c) = self.conns.get_mut(&conn) {
            let bytes = c.socket.read();
            if !bytes.is_empty() {
                node.handle_relay_bytes(now, id, &bytes);
            }
        }
    }

    /// Timers due on the sockets.
    pub fn handle_timeout(&mut self, now: Timestamp, node: &mut Node) {
        let due: Vec<u32> = self
            .conns
            .iter()
            .filter(|(_, c)| c.socket.poll_timeout().is_some_and(|t| t <= now))
            .map(|(k, _)| *k)
            .collect();
        for conn in due {
            let Some(c) = self.conns.get_mut(&conn) else {
                continue;
            };
            if c.socket.handle_timeout(now) == SocketInput::Reset {
                let id = c.id;
                self.forget(conn);
                node.handle_relay_closed(now, id);
            }
        }
    }

    /// Carries out what the node asked for (connects, closes, writes) and collects what
    /// the sockets have to send. Returns true if it called into the node, which may then
    /// have more to say.
    pub fn pump(&mut self, now: Timestamp, node: &mut Node) -> bool {
        let mut touched = false;
        while let Some((id, addr)) = node.poll_relay_connect(now) {
            touched = true;
            let conn = self.next_conn;
            self.next_conn = self.next_conn.wrapping_add(1).max(1);
            let mut socket = TcpSocket::connect(now, conn, addr, self.options);
            if let Some(at) = self.drop_plan {
                socket.drop_data_segment_at(at);
            }
            self.conns.insert(conn, Conn { id, socket });
            self.by_id.insert(id, conn);
        }
        while let Some(id) = node.poll_relay_close() {
            touched = true;
            if let Some(conn) = self.by_id.get(&id).copied() {
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.socket.reset();
                    if let Some(seg) = c.socket.poll_transmit(now) {
                        self.out.push_back((c.socket.peer(), seg));
                    }
                }
                self.forget(conn);
            }
        }
        for c in self.conns.values_mut() {
            while c.socket.write_space() > 0 {
                let Some(bytes) = node.relay_write(c.id).filter(|b| !b.is_empty()) else {
                    break;
                };
                let n = c.socket.write(bytes);
                if n == 0 {
                    break;
                }
                node.relay_consume(c.id, n);
                touched = true;
            }
            while let Some(seg) = c.socket.poll_transmit(now) {
                self.out.push_back((c.socket.peer(), seg));
            }
        }
        touched
    }

    fn forget(&mut self, conn: u32) {
        if let Some(c) = self.conns.remove(&conn) {
            self.by_id.remove(&c.id);
            self.closed_stats.push(c.socket.stats());
        }
    }

    /// The next segment to send, with its destination.
    pub fn poll_transmit(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.out.pop_front()
    }

    /// When [`Self::handle_timeout`] should next run.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.conns
            .values()
            .filter_map(|c| c.socket.poll_timeout())
            .min()
    }

    /// The sockets' TCP invariants.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.conns
            .values()
            .try_for_each(|c| c.socket.check_invariants())
    }
}
