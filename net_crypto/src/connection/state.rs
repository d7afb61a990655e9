//! A connection's state: the [`Connection`] struct, what it queues for `poll_transmit`, its
//! accessors, the endpoint's setters for its paths and keys, and `close`. The concerns
//! around it (handshake.rs, receive.rs, framing.rs, transmit.rs and the send API in mod.rs)
//! change it through these fields.

use std::collections::VecDeque;
use std::net::SocketAddr;

use super::types::{CloseReason, ConnectionEvent, ConnectionId, ConnectionStatus};
use crate::crypto::{CryptoRng, KeyPair, Nonce, PrecomputedKey, PublicKey};
use crate::path::{Destination, PathKind, Paths};
use crate::receive_nonce::ReceiveNonce;
use crate::transport::{ArrayBudget, Transport, TransportConfig};
use crate::Timestamp;

/// Which way a queued datagram goes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Route {
    /// Handshake phase (cookie request, handshake): every path (docs/protocol.md §2.9).
    Every,
    /// A data packet (lossy, kill): the path data travels on when it leaves.
    Data,
    /// One destination (the second copy of an `Every` datagram, a UDP probe).
    To(Destination),
}

/// A sealed datagram waiting for `poll_transmit`.
#[derive(Debug)]
pub(super) struct Queued {
    pub(super) bytes: Vec<u8>,
    pub(super) route: Route,
}

/// The packet resent until the handshake completes (c-toxcore's `temp_packet`).
#[derive(Debug)]
pub(super) struct TempPacket {
    pub(super) bytes: Vec<u8>,
    pub(super) last_sent: Timestamp,
    pub(super) sends: u8,
}

/// What we learned from the peer's handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PeerSession {
    pub(super) session_pk: PublicKey,
    pub(super) base_nonce: Nonce,
}

/// One net_crypto session. See the module docs.
pub struct Connection {
    pub(super) id: ConnectionId,
    pub(super) status: ConnectionStatus,
    pub(super) peer_real_pk: PublicKey,
    pub(super) peer_dht_pk: PublicKey,
    /// Direct UDP and the relays, and which carries data (path.rs).
    pub(super) paths: Paths,
    /// beforenm(peer real pk, own real sk): boxes handshakes both ways.
    pub(super) real_shared: PrecomputedKey,
    /// beforenm(peer DHT pk, own DHT sk) and the echo id of our cookie request; only while
    /// COOKIE_REQUESTING.
    pub(super) cookie_request: Option<(PrecomputedKey, u64)>,
    /// beforenm(peer DHT pk, own DHT sk), kept by an initiator for the session's life: the
    /// peer's own cookie requests (it connects to us as we connect to it) are answered with
    /// it, without an X25519 (admission.rs).
    pub(super) dht_shared: Option<PrecomputedKey>,
    /// Our per-session key pair (the public half goes in our handshake).
    pub(super) session: KeyPair,
    /// The nonce of our next data packet; its first value is our handshake's base nonce.
    pub(super) sent_nonce: Nonce,
    pub(super) peer_session: Option<PeerSession>,
    /// beforenm(peer session pk, own session sk): the data key, both directions (§2.4).
    pub(super) data_key: Option<PrecomputedKey>,
    pub(super) recv_nonce: Option<ReceiveNonce>,
    pub(super) temp: Option<TempPacket>,
    /// An empty request packet is due to confirm the session to the peer.
    pub(super) confirm_pending: bool,
    pub(super) transport: Transport,
    pub(super) outgoing: VecDeque<Queued>,
    pub(super) events: VecDeque<ConnectionEvent>,
    pub(super) close_reason: Option<CloseReason>,
    pub(super) close_reported: bool,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("id", &self.id)
            .field("status", &self.status)
            .field("peer_real_pk", &self.peer_real_pk)
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

impl Connection {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        id: ConnectionId,
        now: Timestamp,
        paths: Paths,
        peer_real_pk: PublicKey,
        peer_dht_pk: PublicKey,
        real_shared: PrecomputedKey,
        config: TransportConfig,
        rng: &mut dyn CryptoRng,
    ) -> Self {
        Connection {
            id,
            status: ConnectionStatus::CookieRequesting,
            peer_real_pk,
            peer_dht_pk,
            paths,
            real_shared,
            cookie_request: None,
            dht_shared: None,
            session: KeyPair::generate(rng),
            sent_nonce: Nonce::random(rng),
            peer_session: None,
            data_key: None,
            recv_nonce: None,
            temp: None,
            confirm_pending: false,
            transport: Transport::new(now, config),
            outgoing: VecDeque::new(),
            events: VecDeque::new(),
            close_reason: None,
            close_reported: false,
        }
    }

    /// The endpoint-local id.
    pub fn id(&self) -> ConnectionId {
        self.id
    }

    /// Where the connection is in its life.
    pub fn status(&self) -> ConnectionStatus {
        self.status
    }

    /// The peer's long-term key.
    pub fn peer_real_pk(&self) -> PublicKey {
        self.peer_real_pk
    }

    /// The peer's DHT key (from our `connect` call or its cookie).
    pub fn peer_dht_pk(&self) -> PublicKey {
        self.peer_dht_pk
    }

    /// The peer's direct UDP address, if known.
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.paths.udp()
    }

    /// The node can reach the peer through a TCP relay.
    pub fn has_relay(&self) -> bool {
        self.paths.relay()
    }

    /// UDP works: a datagram came from the peer's address within `UDP_DIRECT_TIMEOUT`.
    pub fn udp_working(&self, now: Timestamp) -> bool {
        self.paths.udp_fresh(now)
    }

    /// The path data would travel on now (docs/protocol.md §2.9), `None` when there is none.
    pub fn data_path(&self, now: Timestamp) -> Option<PathKind> {
        self.paths.preferred(now)
    }

    /// The reliability engine (for its `stats()`).
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// Heap and inline bytes held by this connection, transport included.
    pub fn memory_usage(&self) -> usize {
        let queued: usize = self.outgoing.iter().map(|q| q.bytes.capacity()).sum();
        let events: usize = self
            .events
            .iter()
            .map(|e| match e {
                ConnectionEvent::Lossless(p) | ConnectionEvent::Lossy(p) => p.capacity(),
                _ => 0,
            })
            .sum();
        std::mem::size_of::<Self>()
            + queued
            + self.outgoing.capacity() * std::mem::size_of::<Queued>()
            + events
            + self.events.capacity() * std::mem::size_of::<ConnectionEvent>()
            + self.temp.as_ref().map_or(0, |t| t.bytes.capacity())
            + self.transport.memory_usage()
    }

    /// The peer's UDP address: learned from the DHT, or the peer reached us from a new
    /// address with a handshake (docs/protocol.md §2.3, `handle_new_connection_handshake`).
    pub(crate) fn set_peer_addr(&mut self, addr: SocketAddr) {
        self.paths.set_udp(addr);
    }

    /// The paths as they are, for [`Self::restore_paths`].
    pub(crate) fn paths_snapshot(&self) -> Paths {
        self.paths.clone()
    }

    /// Puts the paths back as a snapshot had them (a refused handshake changes nothing).
    pub(crate) fn restore_paths(&mut self, paths: Paths) {
        self.paths = paths;
    }

    /// Whether the node can reach the peer through a relay.
    pub(crate) fn set_relay(&mut self, available: bool) {
        self.paths.set_relay(available);
    }

    /// A datagram of this connection's peer was accepted: UDP from its address counts as
    /// working, and one through a relay shows the relay reaches it.
    pub(crate) fn heard(&mut self, now: Timestamp, from: Destination) {
        match from {
            Destination::Udp(_) => self.on_udp_heard(now),
            Destination::Relay(_) => self.set_relay(true),
        }
    }

    /// An authentic datagram of this session arrived over UDP (c-toxcore's
    /// `direct_lastrecv_time`).
    pub(crate) fn on_udp_heard(&mut self, now: Timestamp) {
        self.paths.on_udp_heard(now);
    }

    /// Accounts the transport's arrays in the endpoint's memory budget.
    pub(crate) fn set_array_budget(&mut self, budget: ArrayBudget) {
        self.transport.set_array_budget(budget);
    }

    /// beforenm(peer DHT pk, own DHT sk), if this side initiated.
    pub(crate) fn dht_shared_key(&self) -> Option<&PrecomputedKey> {
        self.dht_shared.as_ref()
    }

    /// The key that boxes handshakes with this peer.
    pub(crate) fn real_shared_key(&self) -> &PrecomputedKey {
        &self.real_shared
    }

    pub(super) fn close(&mut self, reason: CloseReason) {
        self.status = ConnectionStatus::Closed;
        self.close_reason = Some(reason);
        self.temp = None;
        self.confirm_pending = false;
        self.cookie_request = None;
        self.data_key = None;
        self.recv_nonce = None;
        self.peer_session = None;
    }
}
