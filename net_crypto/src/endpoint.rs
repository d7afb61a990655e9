//! The per-socket endpoint (docs/protocol.md §2.2–§2.3): one per UDP socket, many connections.
//!
//! It answers cookie requests without keeping state, verifies handshakes (cookie, age,
//! boxes, hash) before any connection sees them, routes cookie responses and data packets by
//! source — a UDP address, or the DHT key a TCP relay names the sender by (§2.9, §7) — and
//! creates responder connections for peers it was told to accept.
//! Anything refused is counted by [`DropReason`]; every table is bounded ([`EndpointLimits`]).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::ops::Bound;
use std::time::Duration;

use crate::admission::Admission;
use crate::connection::{Connection, ConnectionEvent, ConnectionId, ConnectionStatus};
use crate::crypto::{
    sha512, CryptoRng, KeyPair, LowOrderPublicKey, Nonce, PrecomputedKey, PublicKey, SymmetricKey,
};
pub use crate::drop_reason::{DropCounters, DropReason};
use crate::identity::Identity;
use crate::packets::{
    Cookie, CookieRequest, CookieResponse, CookieResponsePayload, DataPacketRef, Handshake,
    PacketKind, ParseError, MAX_CRYPTO_PACKET_SIZE,
};
use crate::path::{Destination, Paths};
use crate::recent_map::RecentMap;
use crate::transport::{ArrayBudget, TransportConfig};
use crate::Timestamp;

/// Endpoint configuration.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Tunables for every connection's transport.
    pub transport: TransportConfig,
    /// Accept handshakes from any peer (demo/CLI receive). Otherwise only peers passed to
    /// [`Endpoint::allow_peer`] (the friend list's stand-in) are accepted.
    pub accept_all: bool,
}

/// Bounds on what an endpoint holds (docs/design.md principle 5). What exceeds them is dropped
/// and counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointLimits {
    /// Connections of any state, closed ones awaiting their last event included.
    pub max_connections: usize,
    /// Connections in COOKIE_REQUESTING, HANDSHAKE_SENT or NOT_CONFIRMED. Incoming
    /// handshakes beyond it are dropped; each costs an X25519 and a connection's memory.
    pub max_handshakes_in_progress: usize,
    /// Stateless cookie responses waiting for `poll_transmit`.
    pub max_queued_responses: usize,
    /// Cookie requests and handshakes one source (a UDP address with its port, or a relayed
    /// peer) may send in a burst ...
    pub source_burst: u32,
    /// ... and then one per this interval. c-toxcore v0.2.22+ allows 10 and 100 ms for all
    /// cookie requests together; here that is each source's, so that a flood from one source
    /// spends only its own (admission.rs).
    pub source_interval: Duration,
    /// Sources whose buckets are remembered; one not seen recently starts with a full bucket.
    pub max_tracked_sources: usize,
    /// Key agreements (X25519) for cookie requests and handshakes that no cached key saves,
    /// all sources together, in a burst ...
    pub key_agreement_burst: u32,
    /// ... and then one per this interval: what a flood from many (spoofed) sources costs.
    pub key_agreement_interval: Duration,
    /// Agreed keys remembered: requesters' DHT keys and accepted peers' real keys whose
    /// boxes opened, so that their next cookie request or handshake costs no X25519.
    pub max_cached_keys: usize,
    /// Bytes all sessions' send and receive arrays may hold together before a session that
    /// holds its share (this over the number of sessions holding any) stops growing
    /// (transport/array_budget.rs).
    pub array_memory_budget: usize,
}

impl Default for EndpointLimits {
    /// 1024 connections (an idle one costs ≤ 16 KiB, so 16 MiB at most), 128 handshakes in
    /// progress, 256 queued cookie responses (a burst a driver drains in one loop),
    /// c-toxcore's cookie-request bucket for each source (docs/protocol.md §2.2) with 4096
    /// sources remembered (about 100 bytes each), and 1000 key agreements a second after a
    /// burst of 1000 (what a node whose friends all come online at once may need; core's
    /// layers take the same, key_cache.rs): a `PrecomputedKey::new` (X25519 and HSalsa20)
    /// took 73–90 µs on this project's 2-core VM with other work running, so a sustained
    /// flood of fresh keys costs at most about 9 % of a core.
    /// 1024 cached keys take 64 KiB. 64 MiB for the arrays: one session's full receive window
    /// (32 768 × 1373 bytes, 45 MiB) with room for a busy send array, so that a single
    /// session is never held back by the budget, and at most 128 MiB whatever the peers do.
    fn default() -> Self {
        EndpointLimits {
            max_connections: 1024,
            max_handshakes_in_progress: 128,
            max_queued_responses: 256,
            source_burst: 10,
            source_interval: Duration::from_millis(100),
            max_tracked_sources: 4096,
            key_agreement_burst: 1000,
            key_agreement_interval: Duration::from_millis(1),
            max_cached_keys: 1024,
            array_memory_budget: 64 << 20,
        }
    }
}

/// A datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Where to.
    pub destination: Destination,
    /// The bytes.
    pub payload: Vec<u8>,
}

/// What the endpoint reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointEvent {
    /// A peer opened a connection to us (it is in NOT_CONFIRMED; `Established` follows).
    Incoming {
        /// The new connection.
        id: ConnectionId,
        /// The peer's long-term key.
        peer_real_pk: PublicKey,
        /// The peer's DHT key.
        peer_dht_pk: PublicKey,
        /// Where its handshake came from.
        from: Destination,
    },
    /// An event of one connection.
    Connection {
        /// Which connection.
        id: ConnectionId,
        /// What happened.
        event: ConnectionEvent,
    },
}

/// Why `connect` failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The connection limit is reached.
    #[error("too many connections")]
    TooManyConnections,
    /// The handshake limit is reached.
    #[error("too many handshakes in progress")]
    TooManyHandshakes,
    /// A live connection to this peer (by key or address) exists already.
    #[error("already connected to this peer")]
    AlreadyConnected,
    /// The peer's real or DHT key is a point of low order, with which no key can be agreed
    /// ([`crate::crypto::LowOrderPublicKey`]).
    #[error("the peer's public key has low order")]
    LowOrderPublicKey,
}

/// One endpoint per UDP socket. See the module docs.
pub struct Endpoint {
    identity: Identity,
    config: EndpointConfig,
    limits: EndpointLimits,
    rng: Box<dyn CryptoRng + Send>,
    /// Boxed: a connection is a few KiB, and the tree's nodes hold 11 values each whether
    /// used or not.
    connections: BTreeMap<ConnectionId, Box<Connection>>,
    by_addr: HashMap<SocketAddr, ConnectionId>,
    /// Connections by the peer's DHT key: how relayed datagrams find theirs.
    by_dht_pk: HashMap<PublicKey, ConnectionId>,
    by_real_pk: HashMap<PublicKey, ConnectionId>,
    allowed: HashSet<PublicKey>,
    next_id: u32,
    responses: VecDeque<Transmit>,
    events: VecDeque<EndpointEvent>,
    drops: DropCounters,
    /// Per-source and key-agreement buckets for cookie requests and handshakes.
    admission: Admission,
    /// Requesters' DHT keys agreed with ours, kept once their cookie request opened.
    dht_keys: RecentMap<PublicKey, PrecomputedKey>,
    /// Accepted peers' real keys agreed with ours, kept once their handshake opened.
    real_keys: RecentMap<PublicKey, PrecomputedKey>,
    /// X25519s done for cookie requests and handshakes (connections' own not counted).
    key_agreements: u64,
    /// What every connection's send and receive arrays hold together.
    array_budget: ArrayBudget,
    /// Round-robin position of `poll_transmit` over connections.
    transmit_cursor: Option<ConnectionId>,
    /// Where data packets are decrypted, reused from packet to packet (≤ 1400 bytes).
    open_scratch: Vec<u8>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("real_pk", &self.identity.real.public)
            .field("connections", &self.connections.len())
            .finish_non_exhaustive()
    }
}

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
        Endpoint {
            identity: Identity {
                real,
                dht,
                cookie_key,
            },
            config,
            limits,
            admission: Admission::new(now, limits),
            dht_keys: RecentMap::new(limits.max_cached_keys),
            real_keys: RecentMap::new(limits.max_cached_keys),
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
        self.dht_keys = RecentMap::new(limits.max_cached_keys);
        self.real_keys = RecentMap::new(limits.max_cached_keys);
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
        if let Some(old) = old {
            if self.by_addr.get(&old) == Some(&id) {
                self.by_addr.remove(&old);
            }
        }
        self.by_addr.insert(addr, id);
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

    /// One received datagram. A refused one is counted and its reason returned; nothing
    /// changes. [`DropReason::NotNetCrypto`] means the datagram belongs to another layer.
    pub fn handle_datagram(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        self.handle_from(now, Destination::Udp(from), datagram)
    }

    /// One datagram a TCP relay delivered from the peer with this DHT key (over a route or
    /// out-of-band, docs/protocol.md §7). Answers and data for it go back through the relays.
    pub fn handle_relayed(
        &mut self,
        now: Timestamp,
        peer_dht_pk: PublicKey,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        self.handle_from(now, Destination::Relay(peer_dht_pk), datagram)
    }

    fn handle_from(
        &mut self,
        now: Timestamp,
        from: Destination,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        let result = self.route(now, from, datagram);
        if let Err(reason) = result {
            self.drops.count(reason);
        }
        result
    }

    fn route(
        &mut self,
        now: Timestamp,
        from: Destination,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        let kind = PacketKind::of(datagram).ok_or(DropReason::NotNetCrypto)?;
        if datagram.len() > MAX_CRYPTO_PACKET_SIZE {
            return Err(DropReason::BadLength);
        }
        match kind {
            PacketKind::CookieRequest => self.answer_cookie_request(now, from, datagram),
            PacketKind::CookieResponse => {
                let response = CookieResponse::parse(datagram).map_err(length_drop)?;
                let id = self
                    .live_by_source(&from)
                    .ok_or(DropReason::UnknownConnection)?;
                let conn = self
                    .connections
                    .get_mut(&id)
                    .ok_or(DropReason::UnknownConnection)?;
                conn.handle_cookie_response(now, &response, &self.identity, self.rng.as_mut())?;
                heard(conn, now, from);
                Ok(())
            }
            PacketKind::Handshake => self.handle_handshake(now, from, datagram),
            PacketKind::Data => {
                let packet = DataPacketRef::parse(datagram).map_err(length_drop)?;
                let id = self
                    .live_by_source(&from)
                    .ok_or(DropReason::UnknownConnection)?;
                let conn = self
                    .connections
                    .get_mut(&id)
                    .ok_or(DropReason::UnknownConnection)?;
                conn.handle_data(now, &packet, &mut self.open_scratch)?;
                heard(conn, now, from);
                Ok(())
            }
        }
    }

    /// Answers a cookie request statelessly (docs/protocol.md §2.2): the cookie holds the
    /// requester's real key and DHT key, boxed under our cookie key with the time.
    fn answer_cookie_request(
        &mut self,
        now: Timestamp,
        from: Destination,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        let request = CookieRequest::parse(datagram).map_err(length_drop)?;
        if let Destination::Relay(sender) = from {
            // The relay names the sender; a request under another key is not its own.
            if sender != request.sender_dht_pk {
                return Err(DropReason::WrongPeer);
            }
        }
        if self.responses.len() >= self.limits.max_queued_responses {
            return Err(DropReason::ResponseQueueFull);
        }
        self.admission.admit_source(now, &from)?;
        // The key: a connection's of ours to this peer, or one agreed before, or (within the
        // budget of all sources) a new X25519.
        let known = self
            .live_by_dht_pk(&request.sender_dht_pk)
            .and_then(|id| self.connections.get(&id))
            .and_then(|conn| conn.dht_shared_key())
            .cloned()
            .or_else(|| self.dht_keys.get_mut(&request.sender_dht_pk).cloned());
        let fresh = known.is_none();
        let shared = match known {
            Some(key) => key,
            None => {
                self.admission.admit_key_agreement(now)?;
                self.key_agreements += 1;
                PrecomputedKey::new(&request.sender_dht_pk, &self.identity.dht.secret)
                    .map_err(low_order_drop)?
            }
        };
        let payload = request.open(&shared).map_err(crypto_drop)?;
        if fresh {
            // The box opened: the requester holds the key's secret half.
            self.dht_keys.insert(request.sender_dht_pk, shared.clone());
        }
        let cookie = Cookie {
            time: now.as_secs(),
            real_pk: payload.sender_real_pk,
            dht_pk: request.sender_dht_pk,
        }
        .seal(&self.identity.cookie_key, self.rng.as_mut());
        let response = CookieResponse::seal(
            &shared,
            Nonce::random(self.rng.as_mut()),
            &CookieResponsePayload {
                cookie,
                echo_id: payload.echo_id,
            },
        );
        self.responses.push_back(Transmit {
            destination: from,
            payload: response.to_bytes(),
        });
        Ok(())
    }

    /// Verifies a handshake and hands it to its connection, or creates one (docs/protocol.md
    /// §2.2 checks, §2.3 routing).
    fn handle_handshake(
        &mut self,
        now: Timestamp,
        from: Destination,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        let handshake = Handshake::parse(datagram).map_err(length_drop)?;
        let cookie = handshake
            .cookie
            .open(&self.identity.cookie_key)
            .map_err(|_| DropReason::BadCookie)?;
        if !cookie.is_fresh(now.as_secs()) {
            return Err(DropReason::StaleCookie);
        }
        if let Destination::Relay(sender) = from {
            // The relay names the sender by the key it connected with: its DHT key.
            if sender != cookie.dht_pk {
                return Err(DropReason::WrongPeer);
            }
        }

        // A connection at this address must be with the peer the cookie names.
        let at_addr = self.live_by_source(&from);
        if let Some(conn) = at_addr.and_then(|id| self.connections.get(&id)) {
            if conn.peer_real_pk() != cookie.real_pk {
                return Err(DropReason::WrongPeer);
            }
        }
        let existing = at_addr.or_else(|| self.live_by_real_pk(&cookie.real_pk));
        if existing.is_none() {
            // A new connection: the checks that cost nothing come before any that costs a
            // box or a key agreement.
            if !self.accepts(&cookie.real_pk) {
                return Err(DropReason::PeerNotAllowed);
            }
            self.check_capacity()?;
        }
        self.admission.admit_source(now, &from)?;

        // The key: the connection's, or one agreed before, or (within the budget of all
        // sources) a new X25519.
        let fresh_key = match existing {
            Some(_) => None,
            None => match self.real_keys.get_mut(&cookie.real_pk) {
                Some(key) => Some(key.clone()),
                None => {
                    self.admission.admit_key_agreement(now)?;
                    self.key_agreements += 1;
                    let key = PrecomputedKey::new(&cookie.real_pk, &self.identity.real.secret)
                        .map_err(low_order_drop)?;
                    // Kept whether or not the box opens: the key is one of a peer we accept
                    // (checked above), and a flood of boxes it does not open must not cost an
                    // X25519 each.
                    self.real_keys.insert(cookie.real_pk, key.clone());
                    Some(key)
                }
            },
        };
        let existing_conn = existing.and_then(|id| self.connections.get(&id));
        let real_shared = match (existing_conn, &fresh_key) {
            (Some(conn), _) => conn.real_shared_key(),
            (None, Some(key)) => key,
            (None, None) => return Err(DropReason::UnknownConnection),
        };
        let payload = handshake.open(real_shared).map_err(crypto_drop)?;
        if payload.cookie_hash != sha512(&handshake.cookie.0) {
            return Err(DropReason::CookieHashMismatch);
        }

        let mut replaced = None;
        if let Some(id) = existing {
            let conn = self
                .connections
                .get_mut(&id)
                .ok_or(DropReason::UnknownConnection)?;
            if conn.peer_dht_pk() != cookie.dht_pk {
                // The peer came back with a new DHT key: once the new connection is
                // accepted below, the old session is over (§2.2).
                replaced = Some(id);
            } else if at_addr.is_some() {
                conn.handle_handshake(now, &payload, &self.identity, self.rng.as_mut())?;
                heard(conn, now, from);
                return Ok(());
            } else {
                // Same peer, new address: adopt only a connection still waiting for its
                // handshake (`handle_new_connection_handshake`).
                let (ConnectionStatus::CookieRequesting | ConnectionStatus::HandshakeSent) =
                    conn.status()
                else {
                    return Err(DropReason::HandshakeIgnored);
                };
                let Destination::Udp(addr) = from else {
                    // A relayed handshake from this DHT key finds its connection by key.
                    return Err(DropReason::HandshakeIgnored);
                };
                let old_addr = conn.peer_addr();
                let old_paths = conn.paths_snapshot();
                conn.set_peer_addr(addr);
                let handled =
                    conn.handle_handshake(now, &payload, &self.identity, self.rng.as_mut());
                if let Err(reason) = handled {
                    // Refused (a low-order session key): the connection stays where it was.
                    conn.restore_paths(old_paths);
                    return Err(reason);
                }
                heard(conn, now, from);
                if let Some(old) = old_addr {
                    if self.by_addr.get(&old) == Some(&id) {
                        self.by_addr.remove(&old);
                    }
                }
                self.by_addr.insert(addr, id);
                return Ok(());
            }
        }

        if !self.accepts(&cookie.real_pk) {
            return Err(DropReason::PeerNotAllowed);
        }
        self.check_capacity()?;
        let real_shared = match fresh_key {
            Some(key) => key,
            // The peer came back with a new DHT key: same real key, same shared key.
            None => replaced
                .and_then(|id| self.connections.get(&id))
                .map(|conn| conn.real_shared_key().clone())
                .ok_or(DropReason::UnknownConnection)?,
        };
        let paths = match from {
            Destination::Udp(addr) => Paths::new(Some(addr), false),
            Destination::Relay(_) => Paths::new(None, true),
        };
        // Built before the replaced session is closed: a handshake it refuses (a low-order
        // session key) must leave everything as it was.
        let mut conn = Connection::accept(
            self.free_id(),
            now,
            paths,
            &cookie,
            &payload,
            real_shared,
            &self.identity,
            self.config.transport.clone(),
            self.rng.as_mut(),
        )?;
        heard(&mut conn, now, from);
        let id = conn.id();
        if let Some(conn) = replaced.and_then(|id| self.connections.get_mut(&id)) {
            conn.close_replaced();
        }
        self.insert(conn);
        self.events.push_back(EndpointEvent::Incoming {
            id,
            peer_real_pk: cookie.real_pk,
            peer_dht_pk: cookie.dht_pk,
            from,
        });
        Ok(())
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

    // ----- internals ------------------------------------------------------------------------

    /// The first id from `next_id` on that no connection holds; [`Self::insert`] takes it,
    /// so a connection refused before it is inserted uses none up.
    fn free_id(&self) -> ConnectionId {
        let mut id = self.next_id;
        while self.connections.contains_key(&ConnectionId(id)) {
            id = id.wrapping_add(1);
        }
        ConnectionId(id)
    }

    fn insert(&mut self, mut conn: Connection) {
        conn.set_array_budget(self.array_budget.clone());
        let id = conn.id();
        self.next_id = id.0.wrapping_add(1);
        if let Some(addr) = conn.peer_addr() {
            self.by_addr.insert(addr, id);
        }
        self.by_dht_pk.insert(conn.peer_dht_pk(), id);
        self.by_real_pk.insert(conn.peer_real_pk(), id);
        self.connections.insert(id, Box::new(conn));
    }

    fn is_live(&self, id: ConnectionId) -> bool {
        self.connections
            .get(&id)
            .is_some_and(|c| c.status() != ConnectionStatus::Closed)
    }

    fn live_by_addr(&self, addr: &SocketAddr) -> Option<ConnectionId> {
        self.by_addr
            .get(addr)
            .copied()
            .filter(|id| self.is_live(*id))
    }

    fn live_by_dht_pk(&self, pk: &PublicKey) -> Option<ConnectionId> {
        self.by_dht_pk
            .get(pk)
            .copied()
            .filter(|id| self.is_live(*id))
    }

    fn live_by_source(&self, from: &Destination) -> Option<ConnectionId> {
        match from {
            Destination::Udp(addr) => self.live_by_addr(addr),
            Destination::Relay(pk) => self.live_by_dht_pk(pk),
        }
    }

    fn live_by_real_pk(&self, pk: &PublicKey) -> Option<ConnectionId> {
        self.by_real_pk
            .get(pk)
            .copied()
            .filter(|id| self.is_live(*id))
    }

    /// May this peer open a connection to us?
    fn accepts(&self, peer_real_pk: &PublicKey) -> bool {
        self.config.accept_all || self.allowed.contains(peer_real_pk)
    }

    fn check_capacity(&self) -> Result<(), DropReason> {
        if self.connections.len() >= self.limits.max_connections {
            return Err(DropReason::TooManyConnections);
        }
        let in_progress = self
            .connections
            .values()
            .filter(|c| {
                matches!(
                    c.status(),
                    ConnectionStatus::CookieRequesting
                        | ConnectionStatus::HandshakeSent
                        | ConnectionStatus::NotConfirmed
                )
            })
            .count();
        if in_progress >= self.limits.max_handshakes_in_progress {
            return Err(DropReason::TooManyHandshakes);
        }
        Ok(())
    }

    /// Forgets closed connections whose last event was polled and last datagram sent.
    fn reap(&mut self) {
        let finished: Vec<ConnectionId> = self
            .connections
            .iter()
            .filter(|(_, c)| c.is_finished())
            .map(|(id, _)| *id)
            .collect();
        for id in finished {
            if let Some(conn) = self.connections.remove(&id) {
                if let Some(addr) = conn.peer_addr() {
                    if self.by_addr.get(&addr) == Some(&id) {
                        self.by_addr.remove(&addr);
                    }
                }
                if self.by_dht_pk.get(&conn.peer_dht_pk()) == Some(&id) {
                    self.by_dht_pk.remove(&conn.peer_dht_pk());
                }
                if self.by_real_pk.get(&conn.peer_real_pk()) == Some(&id) {
                    self.by_real_pk.remove(&conn.peer_real_pk());
                }
            }
        }
    }
}

/// A datagram of this connection's peer was accepted: UDP from its address counts as
/// working, and one through a relay shows the relay reaches it.
fn heard(conn: &mut Connection, now: Timestamp, from: Destination) {
    match from {
        Destination::Udp(_) => conn.on_udp_heard(now),
        Destination::Relay(_) => conn.set_relay(true),
    }
}

/// A fixed layout of the wrong size.
fn length_drop(_: ParseError) -> DropReason {
    DropReason::BadLength
}

/// A box that did not open.
fn low_order_drop(_: LowOrderPublicKey) -> DropReason {
    DropReason::LowOrderPublicKey
}

fn crypto_drop(e: ParseError) -> DropReason {
    match e {
        ParseError::Crypto(_) => DropReason::DecryptionFailed,
        _ => DropReason::BadLength,
    }
}
