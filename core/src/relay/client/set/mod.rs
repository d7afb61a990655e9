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
//!
//! This file holds the relay and link records and the driver-facing calls; the relay table is
//! in `relays`, connecting and closing in `links`, sending in `sending`, and the public
//! settings, events, errors and counters in `types`.

mod links;
mod relays;
mod sending;
mod types;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;

use super::backoff::Backoff;
use super::connection::{RelayConnection, TCP_CONNECTION_TIMEOUT};
use super::peers::{Peers, RECOMMENDED_FRIEND_TCP_CONNECTIONS};
use super::routes::RouteStatus;

pub use types::{
    AddRelayError, RelayClientConfig, RelayClientStats, RelayEvent, RelayId, RelaySendError,
};

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

    fn push_event(&mut self, event: RelayEvent) {
        if self.events.len() >= MAX_QUEUED_EVENTS {
            self.stats.events_dropped += 1;
        } else {
            self.events.push_back(event);
        }
    }
}
