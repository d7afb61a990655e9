//! [`RelayClients`]: the TCP relays a node keeps, and the routes to peers through them,
//! sans-IO (docs/protocol.md §2.9, §4, §7; c-toxcore 0.2.18 `TCP_connection.c`).
//!
//! The node adds relays (bootstrap options, the profile: [`RelayClients::add_relay`]) and
//! peers' relays (SHARE_RELAYS, DHT-PK, the relay a handshake came through:
//! [`RelayClients::add_peer_relay`]), sends net_crypto packets to peers by DHT key
//! ([`RelayClients::send_to_peer`]) and onion requests through any relay
//! ([`RelayClients::send_onion`]). The driver owns the sockets:
//!
//! ```text
//!   poll_connect ──► driver opens TCP ──► handle_connected (hello queued)
//!   socket readable ──► handle_bytes        poll_write / consume ──► socket write
//!   socket closed ──► handle_closed         poll_close ──► driver closes the socket
//!   poll_timeout ──► handle_timeout         poll_event ──► node
//! ```
//!
//! After every input the driver drains `poll_close`, `poll_connect`, `poll_write` for each
//! of its sockets and `poll_event`, then sleeps until `poll_timeout`.
//!
//! Which relays are connected (0.2.18 `do_tcp_conns`, `kill_nonused_tcp`):
//! * a relay listed by a peer whose session is not [direct](RelayClients::set_peer_direct)
//!   is connected, and a route to the peer is requested on it;
//! * at least [`RelayClientConfig::keep_connected`] relays (`NUM_ONION_TCP_CONNECTIONS` = 3)
//!   stay connected, for the onion and to advertise to friends;
//! * beyond that, a relay without an online route to a non-direct peer is closed once
//!   [`TCP_CONNECTION_ANNOUNCE_TIMEOUT`] has passed since its last routing request (the
//!   other side's time to ask too). Its peers lose it, as in 0.2.18, except peers whose
//!   session is direct: the relay comes back when their session leaves UDP.
//! * a relay that fails (refused, handshake timeout, no pong, protocol error) is retried
//!   after a backoff (backoff.rs); a relay only peers listed is forgotten after
//!   [`MAX_FAILURES`] failures in a row.
//!
//! Sending to a peer (0.2.18 `send_packet_tcp_connection`): the first of its relays whose
//! route is online takes the packet; if one was full and none took it, the caller sees
//! [`RelaySendError::Full`] (and slows down); with no online route, a copy goes out of band
//! to every relay where our route is registered.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;

use super::backoff::Backoff;
use super::connection::{
    ConnectionConfig, ConnectionEvent, RelayConnection, SendError, MAX_DATA_SIZE,
    TCP_CONNECTION_TIMEOUT,
};
use super::peers::{Peer, Peers, MAX_FRIEND_TCP_CONNECTIONS, RECOMMENDED_FRIEND_TCP_CONNECTIONS};
use super::routes::RouteStatus;

/// `TCP_CONNECTION_ANNOUNCE_TIMEOUT` = `TCP_CONNECTION_TIMEOUT` = 10 s
/// (`TCP_connection.h`): an unused relay is kept this long after our last routing request
/// on it, so the peer has time to ask for us too.
pub const TCP_CONNECTION_ANNOUNCE_TIMEOUT: Duration = Duration::from_secs(10);
/// `NUM_ONION_TCP_CONNECTIONS` = `RECOMMENDED_FRIEND_TCP_CONNECTIONS` = 3
/// (`TCP_connection.h`): relays kept connected for the onion whatever the peers need.
pub const NUM_ONION_TCP_CONNECTIONS: usize = RECOMMENDED_FRIEND_TCP_CONNECTIONS;
/// Failures in a row after which a relay that only peers listed is forgotten (ours; 0.2.18
/// forgets a relay on its first failure before a handshake). Relays the node added itself
/// are kept and retried at the longest backoff.
pub const MAX_FAILURES: u32 = 6;
/// Relays known at most (ours; 0.2.18 has no bound).
pub const DEFAULT_MAX_RELAYS: usize = 128;
/// TCP connections open or opening at most (ours; 0.2.18 has no bound).
pub const DEFAULT_MAX_CONNECTIONS: usize = 32;
/// Peers at most (ours): above the friend limit, for sessions to strangers in progress.
pub const DEFAULT_MAX_PEERS: usize = 2048;
/// Events held for [`RelayClients::poll_event`] (ours); beyond, the newest are dropped and
/// counted. Large enough for what one 64 KiB read can carry.
pub const MAX_QUEUED_EVENTS: usize = 8192;

/// A relay that may be connected: its index, and since when.
type Candidate = (usize, Timestamp);

/// Sockets held for [`RelayClients::poll_close`] (ours). A driver drains them after every
/// call; one that does not leaks sockets, and past this many the oldest are forgotten.
pub const MAX_QUEUED_CLOSES: usize = 1024;

/// One TCP connection attempt to one relay. A relay gets a new id for every attempt, so a
/// late call about a closed socket never touches its successor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelayId(pub u32);

/// Settings. `Default` is c-toxcore's constants and our bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelayClientConfig {
    /// Relays known at most ([`DEFAULT_MAX_RELAYS`]).
    pub max_relays: usize,
    /// Connections open or opening at most ([`DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// Peers at most ([`DEFAULT_MAX_PEERS`]).
    pub max_peers: usize,
    /// Relays kept connected whether peers need them or not ([`NUM_ONION_TCP_CONNECTIONS`]).
    pub keep_connected: usize,
    /// Each connection's settings (its output limit).
    pub connection: ConnectionConfig,
}

impl Default for RelayClientConfig {
    fn default() -> Self {
        RelayClientConfig {
            max_relays: DEFAULT_MAX_RELAYS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_peers: DEFAULT_MAX_PEERS,
            keep_connected: NUM_ONION_TCP_CONNECTIONS,
            connection: ConnectionConfig::default(),
        }
    }
}

/// What the relay clients tell the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayEvent {
    /// A relay's handshake completed: it can carry data and onion packets, and may be
    /// advertised ([`RelayClients::connected_relays`]).
    RelayUp {
        /// The relay's address.
        addr: SocketAddr,
        /// The relay's long-term key.
        pk: PublicKey,
    },
    /// An established relay connection ended (failure or no longer needed).
    RelayDown {
        /// The relay's address.
        addr: SocketAddr,
        /// The relay's long-term key.
        pk: PublicKey,
    },
    /// Whether some relay has an online route to the peer changed
    /// ([`RelayClients::is_peer_online`]).
    PeerRoute {
        /// The peer's DHT key.
        peer: PublicKey,
        /// True when the first route came up, false when the last went down.
        online: bool,
    },
    /// A packet from a peer: on a route, or out of band from a peer that lists the relay it
    /// came through (0.2.18 `tcp_conn_oob_callback`).
    Data {
        /// The peer's DHT key.
        from: PublicKey,
        /// A net_crypto packet.
        data: Vec<u8>,
    },
    /// An out-of-band packet from a client we have no route with (a cookie request or
    /// handshake of a new session). Answer with [`RelayClients::send_oob`] through the same
    /// relay, and [`RelayClients::add_peer_relay`] it if a session follows.
    Oob {
        /// The relay it came through (its address).
        relay_addr: SocketAddr,
        /// The relay it came through (its key).
        relay_pk: PublicKey,
        /// The sender's DHT key.
        from: PublicKey,
        /// The packet.
        data: Vec<u8>,
    },
    /// An onion response (0x84 or 0x86) that came back through a relay.
    OnionResponse {
        /// The relay it came through (its address: whether the nodes the response names
        /// may be LAN addresses depends on it, as for a response over UDP).
        relay_addr: SocketAddr,
        /// The response.
        data: Vec<u8>,
    },
}

/// Why a relay or a peer's relay was not added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AddRelayError {
    /// [`RelayClientConfig::max_relays`] relays are known already.
    #[error("relay table full")]
    TooManyRelays,
    /// [`RelayClientConfig::max_peers`] peers are known already.
    #[error("peer table full")]
    TooManyPeers,
    /// The peer lists [`MAX_FRIEND_TCP_CONNECTIONS`] relays already.
    #[error("peer has {MAX_FRIEND_TCP_CONNECTIONS} relays")]
    PeerFull,
    /// The peer has [`RECOMMENDED_FRIEND_TCP_CONNECTIONS`] online routes: no new relay is
    /// connected for it (a relay we know already is still added).
    #[error("peer has enough online routes")]
    Enough,
    /// The peer's key is our own.
    #[error("our own key")]
    OwnKey,
}

/// Why a packet did not go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RelaySendError {
    /// The peer was never added (or was removed).
    #[error("unknown peer")]
    UnknownPeer,
    /// No relay could take it: no online route and no registered one for an OOB copy, or
    /// (for onion and OOB sends) no established relay.
    #[error("no relay route")]
    NoRoute,
    /// A relay that should have taken it is full: slow down and retry (0.2.18 sets
    /// `maximum_speed_reached`).
    #[error("relay output full")]
    Full,
    /// A packet of a size the relay protocol does not carry.
    #[error("packet of {0} bytes")]
    Size(usize),
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayClientStats {
    /// Events dropped because [`MAX_QUEUED_EVENTS`] were waiting.
    pub events_dropped: u64,
    /// Connections that failed, by any cause.
    pub failures: u64,
    /// Relays forgotten after [`MAX_FAILURES`].
    pub relays_forgotten: u64,
    /// Closes dropped because [`MAX_QUEUED_CLOSES`] were waiting.
    pub closes_dropped: u64,
}

#[derive(Debug)]
enum Link {
    /// No socket.
    Idle,
    /// [`RelayClients::poll_connect`] handed the address out; the socket is not up yet.
    Connecting { id: RelayId, started: Timestamp },
    /// The socket is up; the connection is handshaking, established or just failed.
    Open {
        id: RelayId,
        conn: Box<RelayConnection>,
        /// The handshake completed (reported by `RelayUp`).
        up: bool,
    },
}

#[derive(Debug)]
struct Relay {
    addr: SocketAddr,
    pk: PublicKey,
    /// Added by the node itself (bootstrap, profile): never forgotten.
    global: bool,
    backoff: Backoff,
    /// No attempt before this.
    retry_at: Timestamp,
    /// The peers that list this relay (the other direction of `Peer::relays`).
    listed_by: Vec<PublicKey>,
    /// Our last routing request on the current connection, or its establishment; ZERO if
    /// none was made (then it may be closed at once when surplus).
    last_request: Timestamp,
    link: Link,
}

impl Relay {
    fn id(&self) -> Option<RelayId> {
        match &self.link {
            Link::Idle => None,
            Link::Connecting { id, .. } | Link::Open { id, .. } => Some(*id),
        }
    }

    fn established(&self) -> Option<&RelayConnection> {
        match &self.link {
            Link::Open { conn, .. } if conn.is_established() => Some(conn),
            _ => None,
        }
    }

    fn established_mut(&mut self) -> Option<&mut RelayConnection> {
        match &mut self.link {
            Link::Open { conn, .. } if conn.is_established() => Some(conn),
            _ => None,
        }
    }

    fn route(&self, peer: &PublicKey) -> Option<RouteStatus> {
        self.established()?.route_status(peer)
    }

    fn is_busy(&self) -> bool {
        !matches!(self.link, Link::Idle)
    }
}

/// The node's TCP relay connections and the routes to peers through them. Everything is
/// bounded: relays, connections, peers (6 relays each), each connection's buffers and
/// routes, events.
#[derive(Debug)]
pub struct RelayClients {
    our_dht: KeyPair,
    config: RelayClientConfig,
    relays: Vec<Relay>,
    peers: Peers,
    events: VecDeque<RelayEvent>,
    closes: VecDeque<RelayId>,
    next_id: u32,
    onion_cursor: usize,
    /// A relay was closed or lost a peer since the last look for relays to forget.
    unlisted: bool,
    stats: RelayClientStats,
}

impl RelayClients {
    /// Relay clients that authenticate with `our_dht`, our DHT key pair: peers reach us
    /// through relays by its public half.
    pub fn new(our_dht: KeyPair, config: RelayClientConfig) -> Self {
        RelayClients {
            our_dht,
            config,
            relays: Vec::new(),
            peers: Peers::default(),
            events: VecDeque::new(),
            closes: VecDeque::new(),
            next_id: 0,
            onion_cursor: 0,
            unlisted: false,
            stats: RelayClientStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> RelayClientStats {
        self.stats
    }

    /// Adds a relay the node chose (bootstrap options, the profile, `tox_add_tcp_relay`;
    /// 0.2.18 `add_tcp_relay_global`). It is kept for good and connected while fewer than
    /// [`RelayClientConfig::keep_connected`] relays are, or while a peer needs it. A relay
    /// known already (same key) is kept as it is, with a new address if it is not connected.
    pub fn add_relay(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        pk: PublicKey,
    ) -> Result<(), AddRelayError> {
        let i = self.relay_entry(now, addr, pk)?;
        self.relays[i].global = true;
        Ok(())
    }

    /// Adds a relay through which `peer` (by DHT key) can be reached: from its SHARE_RELAYS
    /// or DHT-PK packet, or the relay its handshake came through (0.2.18
    /// `add_tcp_relay_connection`). At most [`MAX_FRIEND_TCP_CONNECTIONS`] per peer; a relay
    /// we do not know yet is refused when the peer has
    /// [`RECOMMENDED_FRIEND_TCP_CONNECTIONS`] online routes. Adding one twice is harmless.
    pub fn add_peer_relay(
        &mut self,
        now: Timestamp,
        peer: PublicKey,
        addr: SocketAddr,
        relay_pk: PublicKey,
    ) -> Result<(), AddRelayError> {
        if peer == self.our_dht.public {
            return Err(AddRelayError::OwnKey);
        }
        if let Some(p) = self.peers.get(&peer) {
            if p.has_relay(&relay_pk) {
                return Ok(());
            }
            if p.is_full() {
                return Err(AddRelayError::PeerFull);
            }
        }
        if self.relay_index(&relay_pk).is_none()
            && self.online_routes(&peer) >= RECOMMENDED_FRIEND_TCP_CONNECTIONS
        {
            return Err(AddRelayError::Enough);
        }
        if self.peers.get(&peer).is_none() && self.peers.len() >= self.config.max_peers {
            return Err(AddRelayError::TooManyPeers);
        }
        let i = self.relay_entry(now, addr, relay_pk)?;
        let Some(p) = self.peers.entry(peer, self.config.max_peers) else {
            return Err(AddRelayError::TooManyPeers);
        };
        p.relays.push(relay_pk);
        self.relays[i].listed_by.push(peer);
        self.request_route(now, i, peer);
        Ok(())
    }

    /// Forgets `peer`: its routes are given up (the relays are told) and its relays may
    /// be closed if nothing else needs them.
    pub fn remove_peer(&mut self, peer: &PublicKey) {
        let Some(p) = self.peers.remove(peer) else {
            return;
        };
        for relay_pk in &p.relays {
            if let Some(i) = self.relay_index(relay_pk) {
                let relay = &mut self.relays[i];
                relay.listed_by.retain(|pk| pk != peer);
                if let Some(conn) = relay.established_mut() {
                    // A failure here (the relay stopped reading) shows at the next timeout.
                    let _ = conn.remove_route(peer);
                }
            }
        }
        self.unlisted = true;
        self.forget_unused_relays();
    }

    /// Whether `peer`'s session runs over direct UDP (0.2.18 `set_tcp_connection_to_status`
    /// with `!direct_connected`). While it does, its relays are kept only if something
    /// else needs them; when it stops, they are reconnected and the routes requested again.
    pub fn set_peer_direct(&mut self, now: Timestamp, peer: &PublicKey, direct: bool) {
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        if p.direct == direct {
            return;
        }
        p.direct = direct;
        if !direct {
            // Routes lost while direct (a relay closed meanwhile) are asked for again.
            let relays = p.relays.clone();
            for relay_pk in relays {
                if let Some(i) = self.relay_index(&relay_pk) {
                    self.request_route(now, i, *peer);
                }
            }
        }
    }

    /// The next relay the driver should open a TCP connection to, and the id to use in the
    /// calls about it. Call until `None`.
    #[must_use]
    pub fn poll_connect(&mut self, now: Timestamp) -> Option<(RelayId, SocketAddr)> {
        let i = self.next_to_connect(now)?;
        let id = self.fresh_id();
        let relay = &mut self.relays[i];
        relay.link = Link::Connecting { id, started: now };
        Some((id, relay.addr))
    }

    /// The TCP connection `id` is up: the hello is queued for [`Self::poll_write`].
    pub fn handle_connected(&mut self, now: Timestamp, id: RelayId, rng: &mut dyn CryptoRng) {
        let Some(i) = self.index_of(id) else {
            return;
        };
        let relay = &mut self.relays[i];
        if let Link::Connecting { started, .. } = relay.link {
            let Ok(conn) = RelayConnection::new(
                started,
                &self.our_dht,
                relay.pk,
                self.config.connection,
                rng,
            ) else {
                // A relay key of small order: no secure session is possible with it.
                self.fail(now, i, true);
                return;
            };
            let relay = &mut self.relays[i];
            relay.link = Link::Open {
                id,
                conn: Box::new(conn),
                up: false,
            };
        }
    }

    /// Bytes read from the socket of `id`. A relay that breaks the protocol is failed: its
    /// socket shows up in [`Self::poll_close`] and nothing else is touched.
    pub fn handle_bytes(&mut self, now: Timestamp, id: RelayId, bytes: &[u8]) {
        let Some(i) = self.index_of(id) else {
            return;
        };
        let result = match &mut self.relays[i].link {
            Link::Open { conn, .. } => conn.handle_bytes(now, bytes),
            // Bytes before the connection was reported up: a driver bug; ignore them.
            Link::Connecting { .. } | Link::Idle => return,
        };
        self.drain_connection(now, i);
        if result.is_err() {
            self.fail(now, i, true);
            self.forget_unused_relays();
        }
    }

    /// The socket of `id` closed (by the relay, or an error). Ignored for an id already
    /// handed to [`Self::poll_close`].
    pub fn handle_closed(&mut self, now: Timestamp, id: RelayId) {
        if let Some(i) = self.index_of(id) {
            self.fail(now, i, false);
            self.forget_unused_relays();
        }
    }

    /// The next record to write to the socket of `id` (whole frames), if any. After
    /// writing, call [`Self::consume`] with the number written.
    pub fn poll_write(&self, id: RelayId) -> Option<&[u8]> {
        let i = self.index_of(id)?;
        match &self.relays[i].link {
            Link::Open { conn, .. } if !conn.poll_write().is_empty() => Some(conn.poll_write()),
            _ => None,
        }
    }

    /// Bytes waiting to be written to the socket of `id`, in all records.
    pub fn queued(&self, id: RelayId) -> usize {
        let Some(i) = self.index_of(id) else {
            return 0;
        };
        match &self.relays[i].link {
            Link::Open { conn, .. } => conn.queued(),
            _ => 0,
        }
    }

    /// The driver wrote the first `n` bytes of [`Self::poll_write`] for `id`.
    pub fn consume(&mut self, id: RelayId, n: usize) {
        if let Some(i) = self.index_of(id) {
            if let Link::Open { conn, .. } = &mut self.relays[i].link {
                conn.consume(n);
            }
        }
    }

    /// A socket the driver should close. Its id is dead from now on.
    #[must_use]
    pub fn poll_close(&mut self) -> Option<RelayId> {
        self.closes.pop_front()
    }

    /// The next event.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<RelayEvent> {
        self.events.pop_front()
    }

    /// Sends a net_crypto packet to `peer`: on the first online route, else out of band
    /// through every relay where our route is registered (0.2.18
    /// `send_packet_tcp_connection`).
    pub fn send_to_peer(
        &mut self,
        _now: Timestamp,
        peer: &PublicKey,
        packet: &[u8],
    ) -> Result<(), RelaySendError> {
        let Some(p) = self.peers.get(peer) else {
            return Err(RelaySendError::UnknownPeer);
        };
        if packet.is_empty() || packet.len() > MAX_DATA_SIZE {
            return Err(RelaySendError::Size(packet.len()));
        }
        // The peer's relays in its order (at most 6; no allocation on the data path).
        let mut found = [0usize; MAX_FRIEND_TCP_CONNECTIONS];
        let mut n = 0;
        for pk in p.relays.iter().take(MAX_FRIEND_TCP_CONNECTIONS) {
            if let Some(i) = self.relay_index(pk) {
                found[n] = i;
                n += 1;
            }
        }
        let relays = &found[..n];
        let mut full = false;
        for &i in relays {
            let Some(conn) = self.relays[i].established_mut() else {
                continue;
            };
            if let Some(RouteStatus::Online(_)) = conn.route_status(peer) {
                match conn.send_data(peer, packet) {
                    Ok(()) => return Ok(()),
                    Err(SendError::Full) => full = true,
                    Err(_) => {}
                }
            }
        }
        if full {
            return Err(RelaySendError::Full);
        }
        let mut sent = false;
        for &i in relays {
            let Some(conn) = self.relays[i].established_mut() else {
                continue;
            };
            if let Some(RouteStatus::Registered(_)) = conn.route_status(peer) {
                match conn.send_oob(peer, packet) {
                    Ok(()) => sent = true,
                    Err(SendError::Full) => full = true,
                    Err(_) => {}
                }
            }
        }
        match (sent, full) {
            (true, _) => Ok(()),
            (false, true) => Err(RelaySendError::Full),
            (false, false) => Err(RelaySendError::NoRoute),
        }
    }

    /// Sends `data` out of band to the client `dest` of the relay `relay_pk` (an answer to
    /// a [`RelayEvent::Oob`]; 0.2.18 `tcp_send_oob_packet_using_relay`).
    pub fn send_oob(
        &mut self,
        _now: Timestamp,
        relay_pk: &PublicKey,
        dest: &PublicKey,
        data: &[u8],
    ) -> Result<(), RelaySendError> {
        let conn = self
            .relay_index(relay_pk)
            .and_then(|i| self.relays[i].established_mut())
            .ok_or(RelaySendError::NoRoute)?;
        conn.send_oob(dest, data).map_err(send_error)
    }

    /// Sends an onion request (the body of TCP packet 8: `[nonce][ipport B][PK2][E(..)]`,
    /// `OnionRequest::tcp_request`) through an established relay, taking turns among
    /// them. The relay's address, for the path's records.
    pub fn send_onion(
        &mut self,
        _now: Timestamp,
        packet: &[u8],
    ) -> Result<SocketAddr, RelaySendError> {
        let n = self.relays.len();
        let mut result = Err(RelaySendError::NoRoute);
        for k in 0..n {
            let i = (self.onion_cursor + k) % n;
            let addr = self.relays[i].addr;
            let Some(conn) = self.relays[i].established_mut() else {
                continue;
            };
            match conn.send_onion(packet) {
                Ok(()) => {
                    self.onion_cursor = i + 1;
                    return Ok(addr);
                }
                Err(e) => {
                    result = Err(send_error(e));
                    if let Err(RelaySendError::Size(_)) = result {
                        return result;
                    }
                }
            }
        }
        result
    }

    /// Whether `peer` lists a relay we are connected to: packets to it can go at least out
    /// of band ([`Self::send_to_peer`]).
    pub fn has_peer_relays(&self, peer: &PublicKey) -> bool {
        self.peers.get(peer).is_some_and(|p| {
            p.relays.iter().any(|pk| {
                self.relay_index(pk)
                    .is_some_and(|i| self.relays[i].established().is_some())
            })
        })
    }

    /// Whether some relay has an online route to `peer`.
    pub fn is_peer_online(&self, peer: &PublicKey) -> bool {
        self.online_routes(peer) > 0
    }

    /// The relays with an online route to `peer`: where its relayed data goes.
    pub fn peer_relays(&self, peer: &PublicKey) -> Vec<(SocketAddr, PublicKey)> {
        let Some(p) = self.peers.get(peer) else {
            return Vec::new();
        };
        p.relays
            .iter()
            .filter_map(|pk| self.relay_index(pk))
            .filter(|&i| matches!(self.relays[i].route(peer), Some(RouteStatus::Online(_))))
            .map(|i| (self.relays[i].addr, self.relays[i].pk))
            .collect()
    }

    /// Established relays: what SHARE_RELAYS and DHT-PK packets advertise.
    pub fn connected_relays(&self) -> impl Iterator<Item = (SocketAddr, PublicKey)> + '_ {
        self.relays
            .iter()
            .filter(|r| r.established().is_some())
            .map(|r| (r.addr, r.pk))
    }

    /// The earliest time [`Self::handle_timeout`] or [`Self::poll_connect`] has work.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let mut next: Option<Timestamp> = None;
        let mut at = |t: Timestamp| next = Some(next.map_or(t, |n| n.min(t)));
        for relay in &self.relays {
            match &relay.link {
                Link::Connecting { started, .. } => at(*started + TCP_CONNECTION_TIMEOUT),
                // A connection that failed outside `handle_*` (a control frame that did
                // not fit during `add_peer_relay`, `remove_peer`) has no deadline: it is
                // collected by the next `handle_timeout`, due at once.
                Link::Open { conn, .. } => at(conn.poll_timeout().unwrap_or(Timestamp::ZERO)),
                Link::Idle => {}
            }
        }
        if let Some(t) = self.next_connect_time() {
            at(t);
        }
        if let Some(t) = self.next_surplus_close() {
            at(t);
        }
        next
    }

    /// Runs the timers: connection and handshake deadlines, pings, closing unused relays.
    pub fn handle_timeout(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        for i in 0..self.relays.len() {
            let failed = match &mut self.relays[i].link {
                Link::Connecting { started, .. } => now >= *started + TCP_CONNECTION_TIMEOUT,
                Link::Open { conn, .. } => conn.handle_timeout(now, rng).is_err(),
                Link::Idle => false,
            };
            self.drain_connection(now, i);
            if failed {
                self.fail(now, i, true);
            }
        }
        self.close_surplus(now);
        self.forget_unused_relays();
    }

    // ---- internals ----

    fn relay_index(&self, pk: &PublicKey) -> Option<usize> {
        self.relays.iter().position(|r| r.pk == *pk)
    }

    fn index_of(&self, id: RelayId) -> Option<usize> {
        self.relays.iter().position(|r| r.id() == Some(id))
    }

    fn fresh_id(&mut self) -> RelayId {
        loop {
            let id = RelayId(self.next_id);
            self.next_id = self.next_id.wrapping_add(1);
            if self.index_of(id).is_none() {
                return id;
            }
        }
    }

    /// The relay with key `pk`, added if unknown.
    fn relay_entry(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        pk: PublicKey,
    ) -> Result<usize, AddRelayError> {
        if let Some(i) = self.relay_index(&pk) {
            let relay = &mut self.relays[i];
            if !relay.is_busy() {
                relay.addr = addr;
            }
            return Ok(i);
        }
        if self.relays.len() >= self.config.max_relays {
            return Err(AddRelayError::TooManyRelays);
        }
        self.relays.push(Relay {
            addr,
            pk,
            global: false,
            backoff: Backoff::default(),
            retry_at: now,
            listed_by: Vec::new(),
            last_request: Timestamp::ZERO,
            link: Link::Idle,
        });
        Ok(self.relays.len() - 1)
    }

    /// Online routes to `peer`.
    fn online_routes(&self, peer: &PublicKey) -> usize {
        let Some(p) = self.peers.get(peer) else {
            return 0;
        };
        p.relays
            .iter()
            .filter_map(|pk| self.relay_index(pk))
            .filter(|&i| matches!(self.relays[i].route(peer), Some(RouteStatus::Online(_))))
            .count()
    }

    /// Asks relay `i` for a route to `peer` if it is established and has none.
    fn request_route(&mut self, now: Timestamp, i: usize, peer: PublicKey) {
        let relay = &mut self.relays[i];
        if let Some(conn) = relay.established_mut() {
            if conn.route_status(&peer).is_none() && conn.request_route(peer).is_ok() {
                relay.last_request = now;
            }
        }
    }

    /// Whether a non-direct peer lists relay `i`.
    fn is_wanted(&self, i: usize) -> bool {
        self.relays[i]
            .listed_by
            .iter()
            .any(|pk| self.peers.get(pk).is_some_and(|p| !p.direct))
    }

    /// Whether relay `i` has an online route to a non-direct peer.
    fn is_in_use(&self, i: usize) -> bool {
        let relay = &self.relays[i];
        relay.listed_by.iter().any(|pk| {
            self.peers.get(pk).is_some_and(|p| !p.direct)
                && matches!(relay.route(pk), Some(RouteStatus::Online(_)))
        })
    }

    /// Takes relay `i` from the peers that list it, except those `keep` accepts.
    fn unlink(&mut self, i: usize, keep: impl Fn(&Peer) -> bool) {
        let relay = &mut self.relays[i];
        let relay_pk = relay.pk;
        let peers = &mut self.peers;
        relay.listed_by.retain(|pk| match peers.get_mut(pk) {
            Some(p) if keep(p) => true,
            Some(p) => {
                p.relays.retain(|r| *r != relay_pk);
                false
            }
            None => false,
        });
        self.unlisted = true;
    }

    /// The relay [`Self::poll_connect`] picks at `now`: the idle relay a non-direct peer
    /// lists that has waited out its backoff longest ago, else, while fewer than
    /// `keep_connected` connections are open or opening, any such idle relay.
    fn next_to_connect(&self, now: Timestamp) -> Option<usize> {
        let (wanted, any) = self.connect_candidates(now);
        wanted.or(any).map(|(i, _)| i)
    }

    /// When [`Self::poll_connect`] next has a relay to give (possibly in the past).
    fn next_connect_time(&self) -> Option<Timestamp> {
        let (wanted, any) = self.connect_candidates(Timestamp::MAX);
        [wanted, any].into_iter().flatten().map(|(_, t)| t).min()
    }

    /// The earliest eligible idle relay a non-direct peer lists, and the earliest eligible
    /// idle relay of all if fewer than `keep_connected` are open or opening; each with the
    /// time it became eligible. Nothing while `max_connections` are open or opening.
    fn connect_candidates(&self, now: Timestamp) -> (Option<Candidate>, Option<Candidate>) {
        let busy = self.relays.iter().filter(|r| r.is_busy()).count();
        if busy >= self.config.max_connections {
            return (None, None);
        }
        let idle = (0..self.relays.len()).filter(|&i| {
            let r = &self.relays[i];
            !r.is_busy() && r.retry_at <= now
        });
        let earliest = |it: &mut dyn Iterator<Item = usize>| {
            it.map(|i| (i, self.relays[i].retry_at))
                .min_by_key(|&(i, t)| (t, i))
        };
        let wanted = earliest(&mut idle.clone().filter(|&i| self.is_wanted(i)));
        let any = if busy < self.config.keep_connected {
            earliest(&mut idle.clone())
        } else {
            None
        };
        (wanted, any)
    }

    fn established_count(&self) -> usize {
        self.relays
            .iter()
            .filter(|r| r.established().is_some())
            .count()
    }

    /// When the next surplus relay may be closed.
    fn next_surplus_close(&self) -> Option<Timestamp> {
        if self.established_count() <= self.config.keep_connected {
            return None;
        }
        (0..self.relays.len())
            .filter(|&i| self.relays[i].established().is_some() && !self.is_in_use(i))
            .map(|i| self.relays[i].last_request + TCP_CONNECTION_ANNOUNCE_TIMEOUT)
            .min()
    }

    /// Closes relays beyond `keep_connected` that carry no online route to a non-direct
    /// peer and whose last routing request is [`TCP_CONNECTION_ANNOUNCE_TIMEOUT`] old
    /// (0.2.18 `kill_nonused_tcp`, `sleep_tcp_relay_connection`).
    fn close_surplus(&mut self, now: Timestamp) {
        let mut surplus = self
            .established_count()
            .saturating_sub(self.config.keep_connected);
        for i in 0..self.relays.len() {
            if surplus == 0 {
                break;
            }
            let relay = &self.relays[i];
            if relay.established().is_none()
                || self.is_in_use(i)
                || now < relay.last_request + TCP_CONNECTION_ANNOUNCE_TIMEOUT
            {
                continue;
            }
            // Peers whose session is direct keep the relay for when they leave UDP; the
            // others lose it, as in 0.2.18 (they re-share their relays).
            self.unlink(i, |p| p.direct);
            self.close(now, i, true, None);
            surplus -= 1;
        }
    }

    /// Relay `i` failed: counted against its backoff.
    fn fail(&mut self, now: Timestamp, i: usize, close_socket: bool) {
        self.stats.failures += 1;
        let delay = self.relays[i].backoff.fail();
        self.close(now, i, close_socket, Some(delay));
    }

    /// Ends relay `i`'s connection; a retry no sooner than `now + delay` (at once if
    /// `None`). Reports the relay down and every peer whose last route went with it.
    fn close(&mut self, now: Timestamp, i: usize, close_socket: bool, delay: Option<Duration>) {
        let relay = &mut self.relays[i];
        let was_up = matches!(relay.link, Link::Open { up: true, .. });
        if let (Some(id), true) = (relay.id(), close_socket) {
            if self.closes.len() >= MAX_QUEUED_CLOSES {
                self.closes.pop_front();
                self.stats.closes_dropped += 1;
            }
            self.closes.push_back(id);
        }
        relay.link = Link::Idle;
        relay.last_request = Timestamp::ZERO;
        relay.retry_at = now + delay.unwrap_or(Duration::ZERO);
        let (addr, pk) = (relay.addr, relay.pk);
        if was_up {
            self.push_event(RelayEvent::RelayDown { addr, pk });
        }
        for k in 0..self.relays[i].listed_by.len() {
            let peer = self.relays[i].listed_by[k];
            self.update_peer_online(&peer);
        }
        self.unlisted = true;
    }

    /// Forgets relays only peers listed once no peer lists them and they are idle, and
    /// those that failed [`MAX_FAILURES`] times in a row. Runs only after something was
    /// closed or unlinked.
    fn forget_unused_relays(&mut self) {
        if !std::mem::take(&mut self.unlisted) {
            return;
        }
        let mut i = 0;
        while i < self.relays.len() {
            let relay = &self.relays[i];
            let failed_out = relay.backoff.failures() >= MAX_FAILURES;
            let forget =
                !relay.global && !relay.is_busy() && (relay.listed_by.is_empty() || failed_out);
            if forget {
                if failed_out {
                    self.stats.relays_forgotten += 1;
                }
                self.unlink(i, |_| false);
                self.relays.remove(i);
                if self.onion_cursor > i {
                    self.onion_cursor -= 1;
                }
            } else {
                i += 1;
            }
        }
        self.unlisted = false;
    }

    /// Handles what relay `i`'s connection reported.
    fn drain_connection(&mut self, now: Timestamp, i: usize) {
        loop {
            let event = match &mut self.relays[i].link {
                Link::Open { conn, .. } => conn.poll_event(),
                _ => None,
            };
            let Some(event) = event else {
                return;
            };
            self.on_connection_event(now, i, event);
        }
    }

    fn on_connection_event(&mut self, now: Timestamp, i: usize, event: ConnectionEvent) {
        let (addr, pk) = (self.relays[i].addr, self.relays[i].pk);
        match event {
            ConnectionEvent::Established => {
                let relay = &mut self.relays[i];
                if let Link::Open { up, .. } = &mut relay.link {
                    *up = true;
                }
                relay.backoff.succeed();
                relay.last_request = Timestamp::ZERO;
                self.push_event(RelayEvent::RelayUp { addr, pk });
                // 0.2.18 `tcp_relay_on_online`: a route for every peer listing the relay.
                for k in 0..self.relays[i].listed_by.len() {
                    let peer = self.relays[i].listed_by[k];
                    self.request_route(now, i, peer);
                }
            }
            ConnectionEvent::RouteRefused(_) => {}
            ConnectionEvent::RouteOnline(peer) | ConnectionEvent::RouteOffline(peer) => {
                self.update_peer_online(&peer);
            }
            ConnectionEvent::Data { from, data } => {
                self.push_event(RelayEvent::Data { from, data });
            }
            ConnectionEvent::Oob { from, data } => {
                let listed = self.peers.get(&from).is_some_and(|p| p.has_relay(&pk));
                let event = if listed {
                    RelayEvent::Data { from, data }
                } else {
                    RelayEvent::Oob {
                        relay_addr: addr,
                        relay_pk: pk,
                        from,
                        data,
                    }
                };
                self.push_event(event);
            }
            ConnectionEvent::OnionResponse(data) => {
                self.push_event(RelayEvent::OnionResponse {
                    relay_addr: addr,
                    data,
                });
            }
        }
    }

    /// Reports `peer`'s online state if it changed.
    fn update_peer_online(&mut self, peer: &PublicKey) {
        let online = self.is_peer_online(peer);
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        if p.online != online {
            p.online = online;
            self.push_event(RelayEvent::PeerRoute {
                peer: *peer,
                online,
            });
        }
    }

    fn push_event(&mut self, event: RelayEvent) {
        if self.events.len() >= MAX_QUEUED_EVENTS {
            self.stats.events_dropped += 1;
        } else {
            self.events.push_back(event);
        }
    }
}

fn send_error(e: SendError) -> RelaySendError {
    match e {
        SendError::Full => RelaySendError::Full,
        SendError::Size(n) => RelaySendError::Size(n),
        SendError::NotEstablished
        | SendError::Failed(_)
        | SendError::NoRoute
        | SendError::Route(_) => RelaySendError::NoRoute,
    }
}
