//! The per-socket endpoint (docs/protocol.md §2.2–§2.3): one per UDP socket, many connections.
//!
//! It answers cookie requests without keeping state, verifies handshakes (cookie, age,
//! boxes, hash) before any connection sees them, routes cookie responses and data packets by
//! source — a UDP address, or the DHT key a TCP relay names the sender by (§2.9, §7) — and
//! creates responder connections for peers it was told to accept.
//! Anything refused is counted by [`DropReason`]; every table is bounded ([`EndpointLimits`]).
//!
//! The files, bottom up: config.rs (what the endpoint is told), output.rs (what it hands
//! back), state.rs (the struct and its connection table), key_cache.rs (agreed keys and the
//! X25519 budget), cookie_service.rs, handshake_checks.rs, demux.rs (datagrams in), and
//! here the public face: construction, connections, and the polls.

pub(crate) mod config;
mod cookie_service;
mod demux;
mod handshake_checks;
mod key_cache;
mod output;
mod state;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::ops::Bound;

pub use crate::drop_reason::{DropCounters, DropReason};
pub use config::{EndpointConfig, EndpointLimits};
pub use output::{ConnectError, EndpointEvent, Transmit};
pub use state::Endpoint;

use crate::admission::Admission;
use crate::connection::{Connection, ConnectionId, ConnectionStatus};
use crate::crypto::{CryptoRng, KeyPair, LowOrderPublicKey, PublicKey, SymmetricKey};
use crate::identity::Identity;
use crate::path::{Destination, Paths};
use crate::transport::ArrayBudget;
use crate::Timestamp;
use key_cache::agreed_key_caches;

impl Endpoint {
    /// An endpoint with our identity and DHT key pairs; it draws its cookie key from `rng`.
    pub fn new(
        now: Timestamp,
        real: KeyPair,
        dht: KeyPair,
        config: EndpointConfig,
        mut rng: Box<dyn CryptoRng + Send>,
    ) -> Self {
        let cookie_key = SymmetricKey::generate(rng.as_mut());
        let limits = EndpointLimits::default();
        let (dht_keys, real_keys) = agreed_key_caches(&real, &dht, limits);
        Endpoint {
            identity: Identity {
                real,
                dht,
                cookie_key,
            },
            config,
            limits,
            admission: Admission::new(now, limits),
            dht_keys,
            real_keys,
            key_agreements: 0,
            array_budget: ArrayBudget::new(limits.array_memory_budget),
            rng,
            connections: BTreeMap::new(),
            by_addr: HashMap::new(),
            by_dht_pk: HashMap::new(),
            by_real_pk: HashMap::new(),
            allowed: HashSet::new(),
            next_id: 0,
            responses: VecDeque::new(),
            events: VecDeque::new(),
            drops: DropCounters::default(),
            transmit_cursor: None,
            open_scratch: Vec::new(),
        }
    }

    /// Replaces the default bounds.
    pub fn set_limits(&mut self, limits: EndpointLimits) {
        self.limits = limits;
        // The new buckets start full; their start time only matters once they are drained.
        self.admission = Admission::new(Timestamp::ZERO, limits);
        (self.dht_keys, self.real_keys) =
            agreed_key_caches(&self.identity.real, &self.identity.dht, limits);
        self.array_budget = ArrayBudget::new(limits.array_memory_budget);
        for conn in self.connections.values_mut() {
            conn.set_array_budget(self.array_budget.clone());
        }
    }

    /// The bounds in force.
    pub fn limits(&self) -> EndpointLimits {
        self.limits
    }

    /// Our long-term key.
    pub fn real_public_key(&self) -> PublicKey {
        self.identity.real.public
    }

    /// Our DHT key.
    pub fn dht_public_key(&self) -> PublicKey {
        self.identity.dht.public
    }

    /// Starts a connection to a peer at UDP address `addr` (we are the initiator); see
    /// [`Self::connect_via`].
    pub fn connect(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        peer_real_pk: PublicKey,
        peer_dht_pk: PublicKey,
    ) -> Result<ConnectionId, ConnectError> {
        self.connect_via(now, Some(addr), false, peer_real_pk, peer_dht_pk)
    }

    /// Starts a connection to a peer (we are the initiator) over its UDP address, if known,
    /// and through the relays, if `relay` (the node reaches the peer through one). The peer
    /// is also allowed to connect to us, as a friend is (crossed handshakes, a restarted
    /// peer).
    pub fn connect_via(
        &mut self,
        now: Timestamp,
        udp: Option<SocketAddr>,
        relay: bool,
        peer_real_pk: PublicKey,
        peer_dht_pk: PublicKey,
    ) -> Result<ConnectionId, ConnectError> {
        if self.live_by_real_pk(&peer_real_pk).is_some()
            || udp.is_some_and(|a| self.live_by_addr(&a).is_some())
        {
            return Err(ConnectError::AlreadyConnected);
        }
        self.check_capacity().map_err(|r| match r {
            DropReason::TooManyHandshakes => ConnectError::TooManyHandshakes,
            _ => ConnectError::TooManyConnections,
        })?;
        let id = self.free_id();
        let conn = Connection::initiate(
            id,
            now,
            Paths::new(udp, relay),
            peer_real_pk,
            peer_dht_pk,
            &self.identity,
            self.config.transport.clone(),
            self.rng.as_mut(),
        )
        .map_err(|LowOrderPublicKey| ConnectError::LowOrderPublicKey)?;
        self.insert(conn);
        self.allowed.insert(peer_real_pk);
        Ok(id)
    }

    /// Accept incoming handshakes from this key (a stand-in for the friend list).
    pub fn allow_peer(&mut self, peer_real_pk: PublicKey) {
        self.allowed.insert(peer_real_pk);
    }

    /// Stop accepting handshakes from this key (a deleted friend). Its live connection, if
    /// any, is the caller's to kill.
    pub fn forbid_peer(&mut self, peer_real_pk: &PublicKey) {
        self.allowed.remove(peer_real_pk);
    }

    /// Points a connection at a new UDP address (a friend's address learned from the DHT:
    /// `set_direct_ip_port`). A connection still setting up always takes it; an
    /// established one only while UDP is not working (no packet from its address within
    /// `UDP_DIRECT_TIMEOUT`: a session on a relay, or one whose peer moved), so a stale DHT
    /// report cannot pull a working session away. Returns false when nothing changed.
    pub fn set_peer_addr(&mut self, now: Timestamp, id: ConnectionId, addr: SocketAddr) -> bool {
        if self.live_by_addr(&addr).is_some() {
            return false;
        }
        let Some(conn) = self.connections.get_mut(&id) else {
            return false;
        };
        let movable = match conn.status() {
            ConnectionStatus::CookieRequesting | ConnectionStatus::HandshakeSent => true,
            ConnectionStatus::NotConfirmed | ConnectionStatus::Established => {
                !conn.udp_working(now)
            }
            ConnectionStatus::Closed => false,
        };
        if !movable {
            return false;
        }
        let old = conn.peer_addr();
        conn.set_peer_addr(addr);
        self.readdress(id, old, addr);
        true
    }

    /// Whether the node can reach this peer (by DHT key) through a TCP relay: a route is
    /// up, or the peer is registered on a relay we are connected to (out-of-band).
    pub fn set_relay(&mut self, peer_dht_pk: &PublicKey, available: bool) {
        if let Some(conn) = self
            .live_by_dht_pk(peer_dht_pk)
            .and_then(|id| self.connections.get_mut(&id))
        {
            conn.set_relay(available);
        }
    }

    /// The live (not closed) connection to the peer with this real key.
    pub fn connection_to(&self, peer_real_pk: &PublicKey) -> Option<ConnectionId> {
        self.live_by_real_pk(peer_real_pk)
    }

    /// The next datagram to send: cookie responses first, then connections in turn.
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Transmit> {
        let mut payload = Vec::new();
        let destination = self.poll_transmit_into(now, &mut payload)?;
        Some(Transmit {
            destination,
            payload,
        })
    }

    /// [`Self::poll_transmit`] appending the datagram to `out` and returning where it goes:
    /// a driver that batches datagrams (segmentation offload) gets them sealed in place in
    /// its send buffer, with no allocation or copy per packet.
    pub fn poll_transmit_into(&mut self, now: Timestamp, out: &mut Vec<u8>) -> Option<Destination> {
        if let Some(t) = self.responses.pop_front() {
            out.extend_from_slice(&t.payload);
            return Some(t.destination);
        }
        // Round robin: start after the connection served last, wrap once around.
        let mut cursor = self.transmit_cursor;
        for _ in 0..self.connections.len() {
            let after = match cursor {
                Some(c) => self
                    .connections
                    .range((Bound::Excluded(c), Bound::Unbounded))
                    .next(),
                None => None,
            };
            let Some(id) = after
                .or_else(|| self.connections.iter().next())
                .map(|(id, _)| *id)
            else {
                break;
            };
            cursor = Some(id);
            if let Some(conn) = self.connections.get_mut(&id) {
                if let Some(destination) = conn.poll_transmit_into(now, out) {
                    self.transmit_cursor = Some(id);
                    return Some(destination);
                }
            }
        }
        self.reap();
        None
    }

    /// The next event: new incoming connections, then each connection's events. A closed
    /// connection stays readable (`connection(id)`) until a call returns `None` after its
    /// `Closed` event; then it is forgotten.
    pub fn poll_event(&mut self) -> Option<EndpointEvent> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        for (id, conn) in self.connections.iter_mut() {
            if let Some(event) = conn.poll_event() {
                return Some(EndpointEvent::Connection { id: *id, event });
            }
        }
        self.reap();
        None
    }

    /// When `handle_timeout` should next be called.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.connections
            .values()
            .filter_map(|c| c.poll_timeout())
            .min()
    }

    /// Runs expired timers of every connection and forgets finished ones.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        for conn in self.connections.values_mut() {
            conn.handle_timeout(now);
        }
        self.reap();
    }

    /// A connection by id.
    pub fn connection(&self, id: ConnectionId) -> Option<&Connection> {
        self.connections.get(&id).map(|c| &**c)
    }

    /// A connection by id, mutably.
    pub fn connection_mut(&mut self, id: ConnectionId) -> Option<&mut Connection> {
        self.connections.get_mut(&id).map(|c| &mut **c)
    }

    /// Ids of all connections still held (closed ones until their last event is polled).
    pub fn connection_ids(&self) -> Vec<ConnectionId> {
        self.connections.keys().copied().collect()
    }

    /// Drops per reason.
    pub fn drop_counters(&self) -> &DropCounters {
        &self.drops
    }

    /// Key agreements (X25519) done for cookie requests and for handshakes of peers with no
    /// agreed key yet: the public-key work that datagrams from anyone can cause
    /// (admission.rs bounds it). A new connection's session key costs one more, counted
    /// nowhere: only a peer whose handshake opened gets that far.
    pub fn key_agreements(&self) -> u64 {
        self.key_agreements
    }

    /// Bytes all connections' send and receive arrays hold (payloads and ring slots): what
    /// [`EndpointLimits::array_memory_budget`] bounds.
    pub fn array_bytes(&self) -> usize {
        self.array_budget.held()
    }

    /// Bytes held by the endpoint: its connections (transports included), queued cookie
    /// responses and events, and its tables.
    pub fn memory_usage(&self) -> usize {
        let connections: usize = self
            .connections
            .values()
            .map(|c| c.memory_usage() + std::mem::size_of::<Box<Connection>>())
            .sum();
        let responses: usize = self
            .responses
            .iter()
            .map(|t| t.payload.capacity() + std::mem::size_of::<Transmit>())
            .sum();
        let tables = self.by_addr.capacity()
            * (std::mem::size_of::<SocketAddr>() + std::mem::size_of::<ConnectionId>())
            + self.by_dht_pk.capacity()
                * (std::mem::size_of::<PublicKey>() + std::mem::size_of::<ConnectionId>())
            + self.by_real_pk.capacity()
                * (std::mem::size_of::<PublicKey>() + std::mem::size_of::<ConnectionId>())
            + self.allowed.capacity() * std::mem::size_of::<PublicKey>()
            + self.events.capacity() * std::mem::size_of::<EndpointEvent>();
        let caches = self.admission.memory_usage()
            + self.dht_keys.memory_usage()
            + self.real_keys.memory_usage();
        std::mem::size_of::<Self>() + connections + responses + tables + caches
    }
}
