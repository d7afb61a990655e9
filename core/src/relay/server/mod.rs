//! A sans-IO TCP relay server (docs/protocol.md §7; c-toxcore 0.2.18 `TCP_server.c`).
//!
//! The driver owns the sockets and names each accepted connection with a [`ConnId`] of its
//! choosing. It feeds the server what happens and pulls what to do:
//!
//! ```text
//!  accept ──► handle_accept(now, conn, addr) ─► Ok, or Refused (close the socket)
//!  read   ──► handle_bytes(now, conn, bytes, rng)
//!  EOF    ──► handle_closed(conn)
//!  timer  ──► handle_timeout(now, rng) at poll_timeout()
//!             poll_ready()            ─► connections with bytes to write
//!             poll_transmit(conn)     ─► those bytes; handle_written(conn, n) after a write
//!             poll_close()            ─► connections to close, with the reason
//!             poll_onion_request()    ─► onion requests for the onion relay (hop A)
//!  onion  ──► handle_onion_response(dest, data): a 0x8e that came back for a connection
//! ```
//!
//! A connection goes hello (128 raw bytes) → unconfirmed (the 96-byte reply is queued) →
//! confirmed (its first frame opened). Behaviour follows c-toxcore, with bounds it lacks:
//! * **Connections**: at most [`RelayConfig::max_connections`] in all and
//!   [`RelayConfig::max_per_ip`] per source address (an IPv6 source counts by its /64);
//!   beyond either, new connections are refused (TokTok/c-toxcore#1227: a relay exhausted by
//!   connections). At most [`RelayConfig::max_handshaking`] may be before their first frame;
//!   a new one beyond that evicts the oldest, as c-toxcore's 256-slot incoming queue does, so
//!   sockets that never speak cannot keep honest clients out: an honest handshake takes one
//!   round trip, and evicting it needs that many new connections within it. The hello and
//!   the first frame must both arrive within [`RelayConfig::handshake_timeout`]
//!   (`TCP_CONNECTION_TIMEOUT`).
//! * **Output**: each connection has one bounded buffer (`relay/outbuf.rs`). Relayed data,
//!   OOB and onion responses for a connection whose buffer is full are dropped and counted,
//!   as c-toxcore drops them when its socket is full; a connection that does not read even
//!   its control frames is closed. A slow reader therefore never makes the server grow.
//! * **Liveness**: a ping every [`RelayConfig::ping_interval`], closed without a pong within
//!   [`RelayConfig::ping_timeout`] (`TCP_PING_FREQUENCY`, `TCP_PING_TIMEOUT`).
//! * **Routes**: up to 240 per connection; a route comes up when both clients asked for each
//!   other and goes down when either asks or leaves (`routes.rs`).
//! * Any malformed frame or packet closes that connection alone, as in c-toxcore.
//! * Forward requests (packet 10) go to the node's forwarding ([`Self::poll_forward_request`],
//!   a queue bounded like the onion's) as c-toxcore's relay passes them to its DHT; replies
//!   come back with [`Self::handle_forward_reply`] as packet 11 to the connection whose index
//!   and serial the sendback names.
//!
//! This file holds the connection records and the driver-facing calls; admitting connections
//! is in `accept`, what their packets do in `packets`, their output and closing in `sending`.

mod accept;
mod onion;
mod packets;
mod routes;
mod sending;
mod stats;

#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;

use crate::onion::wire::ip_port::IpPort;
use crate::relay::wire::handshake::{accept_hello, ExactBytes, CLIENT_HELLO_SIZE};
use crate::relay::wire::{FrameDecoder, FrameEncoder, Packet};

pub use crate::relay::outbuf::SERVER_CONTROL_RESERVE as CONTROL_RESERVE;
use crate::relay::outbuf::{FrameClass, OutBuf, ServerSide};
pub use onion::{parse_sendback_address, sendback_address, ForwardRequest, OnionRequest};
use routes::Routes;
pub use stats::{CloseReason, Refused, RelayDrop, RelayStats};

/// `TCP_CONNECTION_TIMEOUT` (`TCP_client.h`): 10 s for a client's handshake. The server uses
/// it for the hello and the first frame together.
pub const TCP_CONNECTION_TIMEOUT: Duration = Duration::from_secs(10);
/// `TCP_PING_FREQUENCY` (`TCP_common.h`): 30 s between the server's pings.
pub const TCP_PING_FREQUENCY: Duration = Duration::from_secs(30);
/// `TCP_PING_TIMEOUT` (`TCP_common.h`): 10 s for the pong.
pub const TCP_PING_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection, named by the driver (a socket token, a counter). The server only compares
/// ids; a driver may reuse an id once the server has forgotten the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u64);

/// Settings of a relay server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayConfig {
    /// Connections held at once, in every state.
    pub max_connections: usize,
    /// Connections held at once from one IPv4 address or IPv6 /64.
    pub max_per_ip: usize,
    /// Connections held at once before their first frame; a new one beyond this evicts the
    /// oldest.
    pub max_handshaking: usize,
    /// Time from accept to the first frame.
    pub handshake_timeout: Duration,
    /// Time between pings.
    pub ping_interval: Duration,
    /// Time to answer a ping.
    pub ping_timeout: Duration,
    /// Bytes of ordinary frames a connection's output buffer may hold; control frames may
    /// take [`CONTROL_RESERVE`] more.
    pub output_limit: usize,
    /// Onion requests held for the onion relay.
    pub onion_queue: usize,
}

impl Default for RelayConfig {
    /// The limits c-toxcore lacks, chosen as margins rather than measured: 16 384
    /// connections (a public relay sees some thousands), 32 per address (each client
    /// connects once to a relay; the rest is room for NAT), 1024 handshakes (4 × its
    /// 256-slot incoming queue), 64 KiB of output per connection (32 full frames, on top of
    /// the kernel's socket buffer), 1024 onion requests.
    fn default() -> Self {
        RelayConfig {
            max_connections: 16_384,
            max_per_ip: 32,
            max_handshaking: 1024,
            handshake_timeout: TCP_CONNECTION_TIMEOUT,
            ping_interval: TCP_PING_FREQUENCY,
            ping_timeout: TCP_PING_TIMEOUT,
            output_limit: 64 * 1024,
            onion_queue: 1024,
        }
    }
}

/// The secure stream of a connection past its hello.
#[derive(Debug)]
struct Session {
    pk: PublicKey,
    enc: FrameEncoder,
    /// Taken out while its frames are processed.
    dec: Option<FrameDecoder>,
    confirmed: bool,
}

/// One client connection.
#[derive(Debug)]
struct Conn {
    addr: SocketAddr,
    serial: u64,
    hello: Option<Box<ExactBytes<CLIENT_HELLO_SIZE>>>,
    session: Option<Session>,
    out: OutBuf<ServerSide>,
    routes: Routes,
    accepted: Timestamp,
    last_pinged: Timestamp,
    /// The unanswered ping's id, 0 if none.
    ping_id: u64,
    /// The entry in the timer set.
    deadline: Timestamp,
    /// In the ready queue.
    ready: bool,
}

impl Conn {
    fn confirmed(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.confirmed)
    }

    fn next_deadline(&self, config: &RelayConfig) -> Timestamp {
        if !self.confirmed() {
            self.accepted + config.handshake_timeout
        } else if self.ping_id != 0 {
            self.last_pinged + config.ping_timeout
        } else {
            self.last_pinged + config.ping_interval
        }
    }
}

/// Source addresses as the per-address limit counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum AddrKey {
    V4([u8; 4]),
    V6Prefix([u8; 8]),
}

impl AddrKey {
    fn of(addr: &SocketAddr) -> AddrKey {
        match addr.ip() {
            IpAddr::V4(v4) => AddrKey::V4(v4.octets()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => AddrKey::V4(v4.octets()),
                None => {
                    let mut p = [0u8; 8];
                    p.copy_from_slice(&v6.octets()[..8]);
                    AddrKey::V6Prefix(p)
                }
            },
        }
    }
}

/// What became of a frame offered to a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    Queued,
    Dropped,
    /// A control frame beyond the reserve: the destination must be closed.
    Overflow,
}

/// The relay server.
#[derive(Debug)]
pub struct RelayServer {
    keys: KeyPair,
    config: RelayConfig,
    conns: HashMap<ConnId, Conn>,
    by_pk: HashMap<PublicKey, ConnId>,
    per_addr: HashMap<AddrKey, usize>,
    handshaking: usize,
    /// Connections in their handshake, oldest first, with their serials; entries for
    /// connections that have since confirmed or closed are skipped when met.
    handshake_order: VecDeque<(ConnId, u64)>,
    timers: BTreeSet<(Timestamp, ConnId)>,
    ready: VecDeque<ConnId>,
    closes: VecDeque<(ConnId, CloseReason)>,
    onion: VecDeque<OnionRequest>,
    /// Forward requests for the DHT, bounded by `onion_queue` too.
    forwards: VecDeque<ForwardRequest>,
    next_serial: u64,
    scratch: Vec<u8>,
    stats: RelayStats,
}

impl RelayServer {
    /// A relay with the long-term key pair `keys` (the DHT key: clients know a relay by it).
    pub fn new(keys: KeyPair, config: RelayConfig) -> Self {
        RelayServer {
            keys,
            config,
            conns: HashMap::new(),
            by_pk: HashMap::new(),
            per_addr: HashMap::new(),
            handshaking: 0,
            handshake_order: VecDeque::new(),
            timers: BTreeSet::new(),
            ready: VecDeque::new(),
            closes: VecDeque::new(),
            onion: VecDeque::new(),
            forwards: VecDeque::new(),
            next_serial: 1,
            scratch: Vec::new(),
            stats: RelayStats::default(),
        }
    }

    /// The relay's public key.
    pub fn public_key(&self) -> PublicKey {
        self.keys.public
    }

    /// The settings.
    pub fn config(&self) -> &RelayConfig {
        &self.config
    }

    /// Bytes read from `conn`'s socket. Unknown connections are ignored.
    pub fn handle_bytes(
        &mut self,
        now: Timestamp,
        conn: ConnId,
        bytes: &[u8],
        rng: &mut dyn CryptoRng,
    ) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        self.stats.bytes_in += bytes.len() as u64;
        let mut input = bytes;
        if let Some(hello) = c.hello.as_mut() {
            let Some(hello) = hello.fill(&mut input) else {
                return;
            };
            match accept_hello(&self.keys.secret, hello, rng) {
                Err(_) => {
                    self.close(conn, CloseReason::BadHandshake);
                    return;
                }
                Ok(accepted) => {
                    c.hello = None;
                    c.out.append_raw(&accepted.reply);
                    let (enc, dec) = accepted.keys.split();
                    c.session = Some(Session {
                        pk: accepted.client_pk,
                        enc,
                        dec: Some(dec),
                        confirmed: false,
                    });
                    self.mark_ready(conn);
                }
            }
        }
        if input.is_empty() {
            return;
        }
        let Some(mut dec) = self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.session.as_mut())
            .and_then(|s| s.dec.take())
        else {
            return;
        };
        loop {
            let plain = match dec.decode(&mut input) {
                Ok(Some(plain)) => plain,
                Ok(None) => break,
                Err(_) => {
                    self.close(conn, CloseReason::BadFrame);
                    return;
                }
            };
            if let Err(reason) = self.handle_plaintext(now, conn, plain) {
                self.close(conn, reason);
                return;
            }
            if !self.conns.contains_key(&conn) {
                return;
            }
        }
        if let Some(s) = self.conns.get_mut(&conn).and_then(|c| c.session.as_mut()) {
            s.dec = Some(dec);
        }
    }

    /// The peer closed `conn` or its socket failed: forget it (its routes go down).
    pub fn handle_closed(&mut self, conn: ConnId) {
        if self.conns.contains_key(&conn) {
            self.stats.closed_by_peer += 1;
            self.close_inner(conn, None);
        }
    }

    /// Timers due by `now`: handshake timeouts, pings, ping timeouts.
    pub fn handle_timeout(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        while let Some(&(t, id)) = self.timers.first() {
            if t > now {
                break;
            }
            self.timers.pop_first();
            let Some(c) = self.conns.get_mut(&id) else {
                debug_assert!(false, "timer for a forgotten connection");
                continue;
            };
            if !c.confirmed() {
                self.close(id, CloseReason::HandshakeTimeout);
                continue;
            }
            if c.ping_id != 0 {
                self.close(id, CloseReason::PingTimeout);
                continue;
            }
            // c-toxcore's `random_u64`, made non-zero: 0 means "no ping outstanding".
            let ping_id = rng.next_u64().max(1);
            if let Some(dec) = c.session.as_mut().and_then(|s| s.dec.as_mut()) {
                dec.shrink();
            }
            match self.send(id, &Packet::Ping { ping_id }, FrameClass::Control) {
                Sent::Overflow => self.close(id, CloseReason::SlowReader),
                _ => {
                    self.stats.pings_sent += 1;
                    if let Some(c) = self.conns.get_mut(&id) {
                        c.ping_id = ping_id;
                        c.last_pinged = now;
                    }
                    self.reschedule(id);
                }
            }
        }
    }

    /// When [`Self::handle_timeout`] next has work; `None` without connections.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.timers.first().map(|(t, _)| *t)
    }

    /// A connection that got bytes to write since it was last returned. The driver writes
    /// what [`Self::poll_transmit`] gives until the socket would block.
    pub fn poll_ready(&mut self) -> Option<ConnId> {
        while let Some(id) = self.ready.pop_front() {
            if let Some(c) = self.conns.get_mut(&id) {
                c.ready = false;
                if !c.out.is_empty() {
                    return Some(id);
                }
            }
        }
        None
    }

    /// The record `conn` should write next (whole frames, see `relay::record`; empty when
    /// there is none).
    pub fn poll_transmit(&self, conn: ConnId) -> &[u8] {
        self.conns.get(&conn).map_or(&[], |c| c.out.front())
    }

    /// `n` bytes of [`Self::poll_transmit`] were written to `conn`'s socket.
    pub fn handle_written(&mut self, conn: ConnId, n: usize) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.out.consume(n);
            self.stats.bytes_out += n as u64;
        }
    }

    /// A connection the server closed, and why. The driver closes its socket; the server has
    /// already forgotten it.
    pub fn poll_close(&mut self) -> Option<(ConnId, CloseReason)> {
        self.closes.pop_front()
    }

    /// An onion request for the onion relay to send as hop A.
    pub fn poll_onion_request(&mut self) -> Option<OnionRequest> {
        self.onion.pop_front()
    }

    /// A forward request for the DHT's forwarding to send.
    pub fn poll_forward_request(&mut self) -> Option<ForwardRequest> {
        self.forwards.pop_front()
    }

    /// A forward reply whose sendback named connection index `con` with serial `serial`:
    /// queued for it as packet 11. False if that connection is gone (or was replaced), the
    /// reply is empty, or its buffer is full.
    pub fn handle_forward_reply(&mut self, con: u32, serial: u64, data: &[u8]) -> bool {
        let id = ConnId(u64::from(con));
        let live = self
            .conns
            .get(&id)
            .is_some_and(|c| c.serial == serial && c.confirmed());
        if !live {
            self.stats.drops[RelayDrop::ForwardUnknownConnection as usize] += 1;
            return false;
        }
        if data.is_empty() {
            return false;
        }
        match self.send(id, &Packet::Forwarding { data }, FrameClass::Data) {
            Sent::Queued => {
                self.stats.forward_replies += 1;
                true
            }
            _ => false,
        }
    }

    /// An onion response the onion relay opened for `dest` (a sendback address from
    /// [`sendback_address`]): queued for that connection as packet 9. False if `dest` names
    /// no live connection here or its buffer is full.
    pub fn handle_onion_response(&mut self, dest: &IpPort, data: &[u8]) -> bool {
        let live = parse_sendback_address(dest).filter(|(id, serial)| {
            self.conns
                .get(id)
                .is_some_and(|c| c.serial == *serial && c.confirmed())
        });
        let Some((id, _)) = live else {
            self.stats.drops[RelayDrop::OnionUnknownConnection as usize] += 1;
            return false;
        };
        // The onion relay passes only responses of at least one byte (a 0x84 or 0x86), and a
        // client closes the connection on an empty packet 9.
        if data.is_empty() {
            return false;
        }
        match self.send(id, &Packet::OnionResponse { data }, FrameClass::Data) {
            Sent::Queued => {
                self.stats.onion_responses += 1;
                true
            }
            _ => false,
        }
    }

    /// Counters.
    pub fn stats(&self) -> RelayStats {
        self.stats
    }

    /// Connections held, in every state.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// Connections whose first frame has opened.
    pub fn confirmed_connections(&self) -> usize {
        self.conns.len() - self.handshaking
    }

    /// The key `conn` authenticated with, once its hello opened.
    pub fn client_key(&self, conn: ConnId) -> Option<PublicKey> {
        Some(self.conns.get(&conn)?.session.as_ref()?.pk)
    }

    /// Bytes waiting in `conn`'s output buffer.
    pub fn queued(&self, conn: ConnId) -> usize {
        self.conns.get(&conn).map_or(0, |c| c.out.len())
    }

    /// Route slots `conn` has in use.
    pub fn routes(&self, conn: ConnId) -> usize {
        self.conns.get(&conn).map_or(0, |c| c.routes.len())
    }

    /// Heap bytes `conn` holds beyond its fixed record: output buffer, partial frame, route
    /// table, pending hello.
    pub fn heap_bytes(&self, conn: ConnId) -> usize {
        self.conns.get(&conn).map_or(0, |c| {
            c.out.capacity()
                + c.routes.heap_bytes()
                + c.hello.as_ref().map_or(0, |_| CLIENT_HELLO_SIZE + 8)
                + c.session
                    .as_ref()
                    .and_then(|s| s.dec.as_ref())
                    .map_or(0, |d| d.heap_bytes())
        })
    }

    /// Bytes of one connection's fixed record (the memory every connection costs, whatever
    /// it does), for capacity estimates.
    pub const fn connection_record_size() -> usize {
        std::mem::size_of::<Conn>()
    }
}
