//! The real [`RelayServer`] state machine (core `relay/server`) behind simulated TCP
//! sockets: what `rustox bootstrap --tcp-ports` runs around it (`core/src/driver/tcp_relay.rs`),
//! done the same way.
//!
//! * A SYN is offered to [`RelayServer::handle_accept`]; accepted, it gets a SYN-ACK and a
//!   [`ConnId`]; refused (connection caps), a RST.
//! * Bytes read go to [`RelayServer::handle_bytes`] at once. The server's output
//!   ([`RelayServer::poll_ready`] / [`RelayServer::poll_transmit`]) is written while the
//!   socket takes it, [`RelayServer::handle_written`] told how much; a connection whose
//!   socket was full is tried again after every input, since `poll_ready` names a
//!   connection only when new bytes are queued. So a slow leg fills the socket's send
//!   buffer, then the server's bounded output, and then the server drops relayed data as it
//!   does for a slow reader.
//! * [`RelayServer::poll_close`] and a client's RST close the connection both ways.
//! * Onion requests (packet 8) are counted and dropped: rustox's onion client sends over UDP
//!   only, so nothing in these simulations sends one.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rustox_core::relay::server::{ConnId, RelayServer};
use rustox_net_crypto::Timestamp;

use super::control::{segment_conn, Arrival, Control};
use super::socket::{SocketInput, TcpSocket};
use crate::tcp::StreamOptions;

/// Bytes the driver reads from a socket at a time before it writes what they produced: the
/// relay driver's read buffer (`core/src/driver/tcp_relay.rs`, which flushes after every
/// read for this reason; c-toxcore's relay forwards frame by frame, finer still).
pub const READ_BUFFER: usize = 64 * 1024;

/// Counters of the driver (the server keeps its own, [`RelayServer::stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayHostStats {
    /// SYNs the server refused.
    pub refused: u64,
    /// Onion requests dropped.
    pub onion_dropped: u64,
    /// Segments for no connection we know (answered with a RST).
    pub strays: u64,
}

/// A relay server on its sockets.
#[derive(Debug)]
pub struct SimRelayServer {
    server: RelayServer,
    rng: ChaCha20Rng,
    options: StreamOptions,
    next_conn: u64,
    by_peer: BTreeMap<(SocketAddr, u32), ConnId>,
    sockets: BTreeMap<ConnId, TcpSocket>,
    /// Connections whose server output did not all fit in their socket.
    unflushed: BTreeSet<ConnId>,
    out: VecDeque<(SocketAddr, Vec<u8>)>,
    stats: RelayHostStats,
}

impl SimRelayServer {
    /// `server` on sockets set with `options`; its handshakes draw from `seed`.
    pub fn new(server: RelayServer, seed: u64, options: StreamOptions) -> Self {
        SimRelayServer {
            server,
            rng: ChaCha20Rng::seed_from_u64(seed),
            options,
            next_conn: 1,
            by_peer: BTreeMap::new(),
            sockets: BTreeMap::new(),
            unflushed: BTreeSet::new(),
            out: VecDeque::new(),
            stats: RelayHostStats::default(),
        }
    }

    /// The relay server.
    pub fn server(&self) -> &RelayServer {
        &self.server
    }

    /// Driver counters.
    pub fn stats(&self) -> RelayHostStats {
        self.stats
    }

    /// The open sockets, with their clients' addresses.
    pub fn sockets(&self) -> impl Iterator<Item = &TcpSocket> {
        self.sockets.values()
    }

    /// A segment arrived from `from` on our address `to`.
    pub fn handle_segment(&mut self, now: Timestamp, segment: Arrival<'_>) {
        let Arrival { from, to, bytes } = segment;
        let Some(conn_no) = segment_conn(bytes) else {
            return;
        };
        let known = self.by_peer.get(&(from, conn_no)).copied();
        let id = match (Control::parse(bytes), known) {
            (Some(Control::Syn(_)), None) => {
                let id = ConnId(self.next_conn);
                self.next_conn += 1;
                match self.server.handle_accept(now, id, from) {
                    Ok(()) => {
                        self.by_peer.insert((from, conn_no), id);
                        self.sockets
                            .insert(id, TcpSocket::accept(now, conn_no, from, self.options));
                    }
                    Err(_) => {
                        self.stats.refused += 1;
                        self.out.push_back((from, Control::Rst(conn_no).encode()));
                    }
                }
                return;
            }
            (_, Some(id)) => id,
            (Some(Control::Rst(_)), None) => return,
            (_, None) => {
                self.stats.strays += 1;
                self.out.push_back((from, Control::Rst(conn_no).encode()));
                return;
            }
        };
        let Some(socket) = self.sockets.get_mut(&id) else {
            return;
        };
        if socket.handle_segment(now, to, bytes) == SocketInput::Reset {
            self.forget(id);
            self.server.handle_closed(id);
            return;
        }
        let read = socket.read();
        for chunk in read.chunks(READ_BUFFER) {
            self.server.handle_bytes(now, id, chunk, &mut self.rng);
            while self.server.poll_onion_request().is_some() {
                self.stats.onion_dropped += 1;
            }
            self.write_out();
        }
    }

    /// Timers due: the server's (handshake and ping timeouts, pings) and the sockets'.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if self.server.poll_timeout().is_some_and(|t| t <= now) {
            self.server.handle_timeout(now, &mut self.rng);
        }
        let due: Vec<ConnId> = self
            .sockets
            .iter()
            .filter(|(_, s)| s.poll_timeout().is_some_and(|t| t <= now))
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            if let Some(s) = self.sockets.get_mut(&id) {
                // Only a connect gives up on a timer, and the server never connects.
                let _ = s.handle_timeout(now);
            }
        }
    }

    /// Writes the server's output into the sockets, closes what the server closed, and
    /// collects what the sockets have to send.
    pub fn pump(&mut self, now: Timestamp) {
        self.write_out();
        while let Some((id, _reason)) = self.server.poll_close() {
            if let Some(s) = self.sockets.get_mut(&id) {
                s.reset();
                if let Some(seg) = s.poll_transmit(now) {
                    self.out.push_back((s.peer(), seg));
                }
            }
            self.forget(id);
        }
        for s in self.sockets.values_mut() {
            while let Some(seg) = s.poll_transmit(now) {
                self.out.push_back((s.peer(), seg));
            }
        }
    }

    /// Writes the server's output into the sockets while they take it.
    fn write_out(&mut self) {
        while let Some(id) = self.server.poll_ready() {
            self.unflushed.insert(id);
        }
        let pending: Vec<ConnId> = self.unflushed.iter().copied().collect();
        for id in pending {
            let Some(socket) = self.sockets.get_mut(&id) else {
                self.unflushed.remove(&id);
                continue;
            };
            loop {
                let bytes = self.server.poll_transmit(id);
                if bytes.is_empty() {
                    self.unflushed.remove(&id);
                    break;
                }
                let n = socket.write(bytes);
                if n == 0 {
                    break;
                }
                self.server.handle_written(id, n);
            }
        }
    }

    fn forget(&mut self, id: ConnId) {
        if let Some(s) = self.sockets.remove(&id) {
            self.by_peer.remove(&(s.peer(), s.conn()));
        }
        self.unflushed.remove(&id);
    }

    /// The next segment to send, with its destination.
    pub fn poll_transmit(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.out.pop_front()
    }

    /// When [`Self::handle_timeout`] should next run.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.sockets
            .values()
            .filter_map(TcpSocket::poll_timeout)
            .chain(self.server.poll_timeout())
            .min()
    }

    /// The sockets' TCP invariants.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.sockets
            .values()
            .try_for_each(TcpSocket::check_invariants)
    }
}
