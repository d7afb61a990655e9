//! One net_crypto session (docs/protocol.md §2.2–§2.6): the handshake state machine, the session
//! keys and data nonces, and the framing of what the reliability engine ([`Transport`])
//! sends and receives.
//!
//! Roles. The *initiator* (`Endpoint::connect`) sends a cookie request and waits
//! (COOKIE_REQUESTING), then sends its handshake (HANDSHAKE_SENT). The *responder*
//! is created by the endpoint from a valid handshake and answers with its own, using the
//! `other_cookie` the initiator sent, so it never needs a cookie round of its own
//! (NOT_CONFIRMED). When both sides connect at once the handshakes cross: each side takes
//! the other's handshake while in HANDSHAKE_SENT and goes to NOT_CONFIRMED without sending
//! another. The first authentic data packet moves NOT_CONFIRMED to ESTABLISHED (§2.3).
//!
//! Until ESTABLISHED the last handshake packet (the "temp packet") is resent every 1000 ms;
//! after 8 sends without progress the connection closes with [`CloseReason::Timeout`].
//! In NOT_CONFIRMED each send of the temp packet is followed by an empty request packet,
//! which is the data packet that confirms the session to the peer (c-toxcore sends a request
//! packet at once and then every second in that state, §2.7).
//!
//! The endpoint verifies the outer layers (cookie, boxes, hashes) and routes; this type owns
//! what changes per connection.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use crate::crypto::{
    sha512, CryptoRng, KeyPair, LowOrderPublicKey, Nonce, PrecomputedKey, PublicKey,
};
use crate::drop_reason::DropReason;
use crate::identity::Identity;
use crate::packets::{
    seal_data_into, Cookie, CookieRequest, CookieRequestPayload, CookieResponse, DataPacketRef,
    EncryptedCookie, Handshake, HandshakePayload, ParseError, PayloadKind, MAX_CRYPTO_DATA_SIZE,
    PACKET_ID_KILL, PACKET_ID_REQUEST,
};
use crate::path::{Destination, PathKind, Paths};
use crate::receive_nonce::{ReceiveNonce, ReplayError};
use crate::transport::{ArrayBudget, PacketClass, Transport, TransportConfig, TransportError};
use crate::Timestamp;

/// `CRYPTO_SEND_PACKET_INTERVAL` (net_crypto.h, docs/protocol.md §2.3): temp-packet resend period.
pub const TEMP_PACKET_INTERVAL: Duration = Duration::from_millis(1000);
/// `MAX_NUM_SENDPACKET_TRIES` (net_crypto.h): sends of a temp packet before giving up.
pub const MAX_TEMP_PACKET_SENDS: u8 = 8;
/// Datagrams a connection holds for `poll_transmit` (lossy packets, temp packets, kill).
/// Past it `send_lossy` fails rather than buffer: lossy data that cannot go now is stale.
pub const MAX_QUEUED_DATAGRAMS: usize = 64;
/// Events (lossy payloads) held for `poll_event`; lossless payloads wait in the transport.
pub const MAX_QUEUED_EVENTS: usize = 256;

/// An endpoint-local handle for one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(pub u32);

/// Where a connection is in its life (docs/protocol.md §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectionStatus {
    /// We sent a cookie request and wait for the response.
    CookieRequesting,
    /// We sent a handshake and wait for the peer's.
    HandshakeSent,
    /// Both handshakes are known; no data packet has arrived yet.
    NotConfirmed,
    /// A data packet arrived: the session is up.
    Established,
    /// Killed, timed out, or closed locally.
    Closed,
}

/// Why a connection closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseReason {
    /// The peer sent a kill packet (or came back with a new DHT key, which c-toxcore also
    /// treats as the end of the old session).
    Killed,
    /// The handshake gave up after 8 sends of the temp packet.
    Timeout,
    /// We called [`Connection::kill`].
    Local,
}

/// What a connection reports to the layer above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionEvent {
    /// The session is up.
    Established,
    /// An in-order lossless payload (id byte first).
    Lossless(Vec<u8>),
    /// A lossy payload (id byte first).
    Lossy(Vec<u8>),
    /// The connection is gone.
    Closed(CloseReason),
}

/// Why a payload could not be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// Only an established connection carries data.
    #[error("connection not established")]
    NotEstablished,
    /// Payload empty or longer than 1373 bytes.
    #[error("bad payload length")]
    BadLength,
    /// The payload's first byte is not in the id range of this kind of packet
    /// (16–191 lossless, 192–254 lossy; docs/protocol.md §2.5).
    #[error("packet id not valid for this kind of packet")]
    InvalidPacketId,
    /// The send array or the datagram queue is full.
    #[error("send queue full")]
    QueueFull,
    /// `send_budget` is zero: bulk data must wait.
    #[error("no send budget")]
    NoBudget,
}

/// Which way a queued datagram goes.
#[derive(Debug, Clone, Copy)]
enum Route {
    /// Handshake phase (cookie request, handshake): every path (docs/protocol.md §2.9).
    Every,
    /// A data packet (lossy, kill): the path data travels on when it leaves.
    Data,
    /// One destination (the second copy of an `Every` datagram, a UDP probe).
    To(Destination),
}

/// A sealed datagram waiting for `poll_transmit`.
#[derive(Debug)]
struct Queued {
    bytes: Vec<u8>,
    route: Route,
}

/// The packet resent until the handshake completes (c-toxcore's `temp_packet`).
#[derive(Debug)]
struct TempPacket {
    bytes: Vec<u8>,
    last_sent: Timestamp,
    sends: u8,
}

/// What we learned from the peer's handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PeerSession {
    session_pk: PublicKey,
    base_nonce: Nonce,
}

/// One net_crypto session. See the module docs.
pub struct Connection {
    id: ConnectionId,
    status: ConnectionStatus,
    peer_real_pk: PublicKey,
    peer_dht_pk: PublicKey,
    /// Direct UDP and the relays, and which carries data (path.rs).
    paths: Paths,
    /// beforenm(peer real pk, own real sk): boxes handshakes both ways.
    real_shared: PrecomputedKey,
    /// beforenm(peer DHT pk, own DHT sk) and the echo id of our cookie request; only while
    /// COOKIE_REQUESTING.
    cookie_request: Option<(PrecomputedKey, u64)>,
    /// beforenm(peer DHT pk, own DHT sk), kept by an initiator for the session's life: the
    /// peer's own cookie requests (it connects to us as we connect to it) are answered with
    /// it, without an X25519 (admission.rs).
    dht_shared: Option<PrecomputedKey>,
    /// Our per-session key pair (the public half goes in our handshake).
    session: KeyPair,
    /// The nonce of our next data packet; its first value is our handshake's base nonce.
    sent_nonce: Nonce,
    peer_session: Option<PeerSession>,
    /// beforenm(peer session pk, own session sk): the data key, both directions (§2.4).
    data_key: Option<PrecomputedKey>,
    recv_nonce: Option<ReceiveNonce>,
    temp: Option<TempPacket>,
    /// An empty request packet is due to confirm the session to the peer.
    confirm_pending: bool,
    transport: Transport,
    outgoing: VecDeque<Queued>,
    events: VecDeque<ConnectionEvent>,
    close_reason: Option<CloseReason>,
    close_reported: bool,
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
    /// Starts a connection as initiator: sends a cookie request to the peer's DHT key
    /// (docs/protocol.md §2.2) and waits in COOKIE_REQUESTING. A low-order DHT or real key of the
    /// peer is refused: no key can be agreed with it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn initiate(
        id: ConnectionId,
        now: Timestamp,
        paths: Paths,
        peer_real_pk: PublicKey,
        peer_dht_pk: PublicKey,
        identity: &Identity,
        config: TransportConfig,
        rng: &mut dyn CryptoRng,
    ) -> Result<Self, LowOrderPublicKey> {
        let dht_shared = PrecomputedKey::new(&peer_dht_pk, &identity.dht.secret)?;
        let real_shared = PrecomputedKey::new(&peer_real_pk, &identity.real.secret)?;
        let echo_id = rng.next_u64();
        let request = CookieRequest::seal(
            identity.dht.public,
            &dht_shared,
            Nonce::random(rng),
            &CookieRequestPayload {
                sender_real_pk: identity.real.public,
                echo_id,
            },
        );
        let mut conn = Self::new(
            id,
            now,
            paths,
            peer_real_pk,
            peer_dht_pk,
            real_shared,
            config,
            rng,
        );
        conn.cookie_request = Some((dht_shared.clone(), echo_id));
        conn.dht_shared = Some(dht_shared);
        conn.status = ConnectionStatus::CookieRequesting;
        conn.start_temp(now, request.to_bytes());
        Ok(conn)
    }

    /// Creates the responder's side from a verified handshake (`cookie` is the opened outer
    /// cookie, `real_shared` the key that opened the box) and answers with our handshake.
    /// Refuses a handshake whose session key has low order.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn accept(
        id: ConnectionId,
        now: Timestamp,
        paths: Paths,
        cookie: &Cookie,
        payload: &HandshakePayload,
        real_shared: PrecomputedKey,
        identity: &Identity,
        config: TransportConfig,
        rng: &mut dyn CryptoRng,
    ) -> Result<Self, DropReason> {
        let mut conn = Self::new(
            id,
            now,
            paths,
            cookie.real_pk,
            cookie.dht_pk,
            real_shared,
            config,
            rng,
        );
        conn.adopt_peer_session(payload)?;
        let handshake = conn.build_handshake(now, payload.other_cookie, identity, rng);
        conn.start_temp(now, handshake);
        conn.status = ConnectionStatus::NotConfirmed;
        Ok(conn)
    }

    #[allow(clippy::too_many_arguments)]
    fn new(
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

    /// Queue a lossless control payload (id 16–191 first); returns its packet number.
    pub fn send_lossless(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SendError> {
        self.queue_lossless(now, PacketClass::Control, payload)
    }

    /// Bulk packets allowed now (0 unless established); see [`Transport::send_budget`].
    pub fn send_budget(&mut self, now: Timestamp) -> usize {
        if self.status == ConnectionStatus::Established {
            self.transport.send_budget(now)
        } else {
            0
        }
    }

    /// Queue a lossless bulk payload (file data) within `send_budget`; returns its number.
    pub fn send_bulk(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SendError> {
        if self.status == ConnectionStatus::Established && self.transport.send_budget(now) == 0 {
            return Err(SendError::NoBudget);
        }
        self.queue_lossless(now, PacketClass::Bulk, payload)
    }

    fn queue_lossless(
        &mut self,
        now: Timestamp,
        class: PacketClass,
        payload: &[u8],
    ) -> Result<u32, SendError> {
        self.check_payload(payload, PayloadKind::Lossless)?;
        self.transport
            .queue_lossless(now, class, payload)
            .map_err(|e| match e {
                TransportError::BadLength => SendError::BadLength,
                _ => SendError::QueueFull,
            })
    }

    /// Send a lossy payload (id 192–254 first). It is encrypted now and leaves with the
    /// next `poll_transmit`; it is never resent.
    pub fn send_lossy(&mut self, now: Timestamp, payload: &[u8]) -> Result<(), SendError> {
        self.check_payload(payload, PayloadKind::Lossy)?;
        if self.outgoing.len() >= MAX_QUEUED_DATAGRAMS {
            return Err(SendError::QueueFull);
        }
        let packet_number = self.transport.send_buffer_end();
        let datagram = self
            .sealed_datagram(packet_number, payload)
            .ok_or(SendError::NotEstablished)?;
        self.outgoing.push_back(Queued {
            bytes: datagram,
            route: Route::Data,
        });
        self.transport.on_data_sent(now);
        Ok(())
    }

    fn check_payload(&self, payload: &[u8], kind: PayloadKind) -> Result<(), SendError> {
        if self.status != ConnectionStatus::Established {
            return Err(SendError::NotEstablished);
        }
        let Some(&id) = payload.first() else {
            return Err(SendError::BadLength);
        };
        if payload.len() > MAX_CRYPTO_DATA_SIZE {
            return Err(SendError::BadLength);
        }
        if PayloadKind::of(id) != kind {
            return Err(SendError::InvalidPacketId);
        }
        Ok(())
    }

    /// True once the peer acknowledged `packet_number` (`cryptpacket_received`).
    pub fn is_delivered(&self, packet_number: u32) -> bool {
        self.transport.is_delivered(packet_number)
    }

    /// Closes the connection. An established one first sends a kill packet (id 2), as
    /// c-toxcore's `crypto_kill` does; then the keys are wiped. Reports
    /// `Closed(Local)`.
    pub fn kill(&mut self, now: Timestamp) {
        let _ = now;
        if self.status == ConnectionStatus::Closed {
            return;
        }
        self.outgoing.clear();
        if self.status == ConnectionStatus::Established {
            let packet_number = self.transport.send_buffer_end();
            if let Some(kill) = self.sealed_datagram(packet_number, &[PACKET_ID_KILL]) {
                self.outgoing.push_back(Queued {
                    bytes: kill,
                    route: Route::Data,
                });
            }
        }
        self.close(CloseReason::Local);
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

    /// Builds a data packet with any payload under this session's keys, without checking
    /// its id. Consumes a nonce exactly like a real send. For fault injection by tests (a
    /// misbehaving but authenticated peer), behind the `testing` feature; `None` before the
    /// handshake.
    #[cfg(feature = "testing")]
    pub fn forge_data_packet(&mut self, packet_number: u32, payload: &[u8]) -> Option<Vec<u8>> {
        self.sealed_datagram(packet_number, payload)
    }

    // ----- inputs from the endpoint -------------------------------------------------------

    /// A cookie response from the peer's address (docs/protocol.md §2.2): accepted only while
    /// COOKIE_REQUESTING and only with our echo id; then our handshake goes out.
    pub(crate) fn handle_cookie_response(
        &mut self,
        now: Timestamp,
        response: &CookieResponse,
        identity: &Identity,
        rng: &mut dyn CryptoRng,
    ) -> Result<(), DropReason> {
        let (dht_shared, echo_id) = match (&self.status, &self.cookie_request) {
            (ConnectionStatus::CookieRequesting, Some(request)) => request,
            _ => return Err(DropReason::WrongState),
        };
        let payload = response.open(dht_shared).map_err(parse_drop)?;
        if payload.echo_id != *echo_id {
            return Err(DropReason::WrongEchoId);
        }
        self.handshake_rtt_sample(now);
        let handshake = self.build_handshake(now, payload.cookie, identity, rng);
        self.cookie_request = None;
        self.start_temp(now, handshake);
        self.status = ConnectionStatus::HandshakeSent;
        Ok(())
    }

    /// A verified handshake from this connection's peer (docs/protocol.md §2.3). The endpoint
    /// has opened the cookie, checked its age and that it names this peer, opened the box
    /// and checked the cookie hash.
    pub(crate) fn handle_handshake(
        &mut self,
        now: Timestamp,
        payload: &HandshakePayload,
        identity: &Identity,
        rng: &mut dyn CryptoRng,
    ) -> Result<(), DropReason> {
        match self.status {
            ConnectionStatus::CookieRequesting => {
                // The peer connected to us first: answer with the cookie it gave us.
                self.adopt_peer_session(payload)?;
                let handshake = self.build_handshake(now, payload.other_cookie, identity, rng);
                self.cookie_request = None;
                self.start_temp(now, handshake);
                self.status = ConnectionStatus::NotConfirmed;
                Ok(())
            }
            ConnectionStatus::HandshakeSent => {
                // Our handshake is out (crossed, or the peer's answer to ours).
                self.adopt_peer_session(payload)?;
                self.status = ConnectionStatus::NotConfirmed;
                Ok(())
            }
            ConnectionStatus::NotConfirmed => {
                let incoming = PeerSession {
                    session_pk: payload.session_pk,
                    base_nonce: payload.base_nonce,
                };
                if self.peer_session != Some(incoming) {
                    // The peer started over (new session key): follow it, as c-toxcore does.
                    self.adopt_peer_session(payload)?;
                }
                Ok(())
            }
            ConnectionStatus::Established | ConnectionStatus::Closed => {
                Err(DropReason::HandshakeIgnored)
            }
        }
    }

    /// A data packet from the peer's address (docs/protocol.md §2.4–§2.6). Everything that can
    /// refuse the packet is checked before anything changes. `scratch` is the endpoint's
    /// buffer that the plaintext is decrypted into.
    pub(crate) fn handle_data(
        &mut self,
        now: Timestamp,
        packet: &DataPacketRef<'_>,
        scratch: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        if !matches!(
            self.status,
            ConnectionStatus::NotConfirmed | ConnectionStatus::Established
        ) {
            return Err(DropReason::WrongState);
        }
        let (Some(key), Some(recv)) = (&self.data_key, &self.recv_nonce) else {
            return Err(DropReason::WrongState);
        };
        let candidate = recv.candidate(packet.nonce_low);
        let plain = packet
            .open_into(key, &candidate.nonce, scratch)
            .map_err(parse_drop)?;
        recv.check(&candidate).map_err(|e| match e {
            ReplayError::Replayed => DropReason::ReplayedNonce,
            ReplayError::Stale => DropReason::StaleNonce,
        })?;
        let Some(&id) = plain.payload.first() else {
            return Err(DropReason::MalformedPlaintext);
        };
        let kind = PayloadKind::of(id);
        if matches!(kind, PayloadKind::Reserved | PayloadKind::Invalid) {
            return Err(DropReason::InvalidPacketId);
        }

        // §2.6 step 2: the cumulative ack first.
        self.transport
            .on_peer_buffer_start(now, plain.buffer_start)
            .map_err(|_| DropReason::AckOutsideWindow)?;
        if let Some(recv) = self.recv_nonce.as_mut() {
            recv.accept(&candidate);
        }

        // Step 3: kill.
        if kind == PayloadKind::Kill {
            self.outgoing.clear();
            self.close(CloseReason::Killed);
            return Ok(());
        }

        // Step 4: the first authentic data packet confirms the session.
        if self.status == ConnectionStatus::NotConfirmed {
            // The temp packet is our handshake: the peer could seal this packet only after
            // that handshake reached it, so the gap is at least one round trip.
            self.handshake_rtt_sample(now);
            // `confirm_pending` stays: the peer may still be waiting for our first packet.
            self.status = ConnectionStatus::Established;
            self.temp = None;
            self.events.push_back(ConnectionEvent::Established);
        }

        // Step 5.
        let payload = plain.payload;
        match kind {
            PayloadKind::Request => {
                self.transport
                    .on_request(now, &payload[1..])
                    .map_err(transport_drop)?;
                self.transport
                    .on_peer_buffer_end(now, plain.packet_number)
                    .map_err(transport_drop)
            }
            PayloadKind::Lossless => self
                .transport
                .on_lossless(now, plain.packet_number, payload)
                .map_err(transport_drop),
            PayloadKind::Lossy => {
                self.transport
                    .on_peer_buffer_end(now, plain.packet_number)
                    .map_err(transport_drop)?;
                if self.events.len() >= MAX_QUEUED_EVENTS {
                    return Err(DropReason::EventQueueFull);
                }
                self.events
                    .push_back(ConnectionEvent::Lossy(payload.to_vec()));
                Ok(())
            }
            PayloadKind::Kill | PayloadKind::Reserved | PayloadKind::Invalid => {
                Err(DropReason::InvalidPacketId)
            }
        }
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

    /// The peer's DHT key changed: c-toxcore kills the old session (§2.2).
    pub(crate) fn close_replaced(&mut self) {
        if self.status != ConnectionStatus::Closed {
            self.outgoing.clear();
            self.close(CloseReason::Killed);
        }
    }

    // ----- outputs --------------------------------------------------------------------------

    /// Appends the next datagram for the peer to `out` and returns where it goes: queued
    /// datagrams (temp packet, lossy, kill), then the confirmation, then the transport's
    /// request packet, then its lossless data — sealed in place there, straight from the
    /// send array. `None` when nothing is due or there is no path to the peer yet.
    pub(crate) fn poll_transmit_into(
        &mut self,
        now: Timestamp,
        out: &mut Vec<u8>,
    ) -> Option<Destination> {
        while let Some(queued) = self.outgoing.pop_front() {
            let destination = match queued.route {
                Route::To(d) => d,
                Route::Every => {
                    let mut all = self.paths.all(self.peer_dht_pk);
                    let (Some(first), second) = (all.next(), all.next()) else {
                        continue; // nowhere to send it yet; the temp packet is resent later
                    };
                    if let Some(second) = second {
                        self.outgoing.push_front(Queued {
                            bytes: queued.bytes.clone(),
                            route: Route::To(second),
                        });
                    }
                    first
                }
                Route::Data => match self.data_destination(now) {
                    Some(d) => d,
                    None => continue,
                },
            };
            out.extend_from_slice(&queued.bytes);
            self.queue_probe(now, destination, &queued.bytes);
            return Some(destination);
        }
        match self.status {
            ConnectionStatus::NotConfirmed | ConnectionStatus::Established => {}
            _ => return None,
        }
        let destination = self.data_destination(now)?;
        let start = out.len();
        if self.poll_data_into(now, out) {
            let probe = out.get(start..).map(<[u8]>::to_vec).unwrap_or_default();
            self.queue_probe(now, destination, &probe);
            Some(destination)
        } else {
            None
        }
    }

    /// Seals the next session packet (confirmation, request, data) onto `out`.
    fn poll_data_into(&mut self, now: Timestamp, out: &mut Vec<u8>) -> bool {
        let buffer_start = self.transport.recv_buffer_start();
        if self.confirm_pending {
            self.confirm_pending = false;
            let packet_number = self.transport.send_buffer_end();
            if self.seal_data(buffer_start, packet_number, &[PACKET_ID_REQUEST], out) {
                return true;
            }
        }
        if self.status != ConnectionStatus::Established {
            return false;
        }
        if let Some(request) = self.transport.poll_request(now) {
            let packet_number = self.transport.send_buffer_end();
            if self.seal_data(buffer_start, packet_number, &request, out) {
                return true;
            }
        }
        let Some(data) = self.transport.poll_send_ref(now) else {
            return false;
        };
        // The payload is borrowed from the transport, so the fields go in one by one.
        seal_and_advance(
            self.data_key.as_ref(),
            &mut self.sent_nonce,
            buffer_start,
            data.packet_number,
            data.payload,
            out,
        )
    }

    /// Where data goes now; tells the transport when that is another path than before.
    fn data_destination(&mut self, now: Timestamp) -> Option<Destination> {
        let udp_was_fresh = self.paths.udp_fresh(now);
        let (path, changed) = self.paths.choose(now)?;
        if changed {
            // Leaving UDP means it has been silent for UDP_DIRECT_TIMEOUT; leaving a relay
            // means UDP came back while the relay still delivers.
            let left_silent_udp = path == PathKind::Relay && !udp_was_fresh;
            self.transport.on_path_change(now, left_silent_udp);
        }
        self.paths.destination(path, self.peer_dht_pk)
    }

    /// A small datagram that went through a relay is also tried over UDP now and then, so
    /// the session finds its way back to UDP when hole punching succeeds (path.rs).
    fn queue_probe(&mut self, now: Timestamp, sent_to: Destination, datagram: &[u8]) {
        if !matches!(sent_to, Destination::Relay(_)) || datagram.is_empty() {
            return;
        }
        if let Some(addr) = self.paths.take_probe(now, datagram.len()) {
            self.outgoing.push_front(Queued {
                bytes: datagram.to_vec(),
                route: Route::To(Destination::Udp(addr)),
            });
        }
    }

    /// The next event: queued ones, then in-order lossless payloads, then the close.
    pub(crate) fn poll_event(&mut self) -> Option<ConnectionEvent> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        if let Some(payload) = self.transport.poll_delivered() {
            return Some(ConnectionEvent::Lossless(payload));
        }
        match self.close_reason {
            Some(reason) if !self.close_reported => {
                self.close_reported = true;
                Some(ConnectionEvent::Closed(reason))
            }
            _ => None,
        }
    }

    /// The earliest time `handle_timeout` has work.
    pub(crate) fn poll_timeout(&self) -> Option<Timestamp> {
        let temp = match self.status {
            ConnectionStatus::Closed | ConnectionStatus::Established => None,
            _ => self
                .temp
                .as_ref()
                .map(|t| t.last_sent + TEMP_PACKET_INTERVAL),
        };
        let transport = match self.status {
            ConnectionStatus::Established => self.transport.poll_timeout(),
            _ => None,
        };
        match (temp, transport) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Resends the temp packet when due (and gives up after 8 sends); runs the transport's
    /// timers.
    pub(crate) fn handle_timeout(&mut self, now: Timestamp) {
        match self.status {
            ConnectionStatus::Closed => return,
            ConnectionStatus::Established => {
                self.transport.handle_timeout(now);
                return;
            }
            _ => {}
        }
        let Some(temp) = self.temp.as_mut() else {
            return;
        };
        if now < temp.last_sent + TEMP_PACKET_INTERVAL {
            return;
        }
        if temp.sends >= MAX_TEMP_PACKET_SENDS {
            self.outgoing.clear();
            self.close(CloseReason::Timeout);
            return;
        }
        temp.sends += 1;
        temp.last_sent = now;
        let bytes = temp.bytes.clone();
        if self.outgoing.len() < MAX_QUEUED_DATAGRAMS {
            self.outgoing.push_back(Queued {
                bytes,
                route: Route::Every,
            });
        }
        if self.status == ConnectionStatus::NotConfirmed {
            self.confirm_pending = true;
        }
    }

    /// True when the connection is closed and has nothing left to say.
    pub(crate) fn is_finished(&self) -> bool {
        self.status == ConnectionStatus::Closed
            && self.close_reported
            && self.outgoing.is_empty()
            && self.events.is_empty()
    }

    // ----- internals ------------------------------------------------------------------------

    fn start_temp(&mut self, now: Timestamp, bytes: Vec<u8>) {
        if self.outgoing.len() < MAX_QUEUED_DATAGRAMS {
            self.outgoing.push_back(Queued {
                bytes: bytes.clone(),
                route: Route::Every,
            });
        }
        self.temp = Some(TempPacket {
            bytes,
            last_sent: now,
            sends: 1,
        });
    }

    /// The temp packet was just answered (a cookie response echoing our request's id, or
    /// the peer's first data packet, sealed with the session key our handshake carried):
    /// its round trip seeds the transport's RTT estimator, which otherwise assumes
    /// kInitialRtt (333 ms, first PTO ≈ 1 s) until data is acknowledged. Only a temp
    /// packet sent once counts (Karn's rule: after a resend the reply may answer either
    /// send). Local timing only; nothing on the wire changes.
    fn handshake_rtt_sample(&mut self, now: Timestamp) {
        if let Some(temp) = self.temp.as_ref().filter(|t| t.sends == 1) {
            self.transport.on_handshake_rtt(now, now - temp.last_sent);
        }
    }

    /// Takes the session key and base nonce of the peer's handshake. A low-order session key
    /// is refused before anything changes: the data key would be one anyone can compute.
    fn adopt_peer_session(&mut self, payload: &HandshakePayload) -> Result<(), DropReason> {
        let data_key = PrecomputedKey::new(&payload.session_pk, &self.session.secret)
            .map_err(|LowOrderPublicKey| DropReason::LowOrderPublicKey)?;
        self.data_key = Some(data_key);
        self.recv_nonce = Some(ReceiveNonce::new(payload.base_nonce));
        self.peer_session = Some(PeerSession {
            session_pk: payload.session_pk,
            base_nonce: payload.base_nonce,
        });
        self.confirm_pending = true;
        Ok(())
    }

    /// Our handshake, inside the peer's cookie `outer`, carrying a fresh cookie of ours.
    fn build_handshake(
        &self,
        now: Timestamp,
        outer: EncryptedCookie,
        identity: &Identity,
        rng: &mut dyn CryptoRng,
    ) -> Vec<u8> {
        let other_cookie = Cookie {
            time: now.as_secs(),
            real_pk: self.peer_real_pk,
            dht_pk: self.peer_dht_pk,
        }
        .seal(&identity.cookie_key, rng);
        let payload = HandshakePayload {
            base_nonce: self.sent_nonce,
            session_pk: self.session.public,
            cookie_hash: sha512(&outer.0),
            other_cookie,
        };
        Handshake::seal(outer, &self.real_shared, Nonce::random(rng), &payload).to_bytes()
    }

    /// Frames and encrypts one data packet onto `out`, then advances our nonce (§2.4: after
    /// every data packet, resends included). False when there is no session key yet or the
    /// payload cannot be framed.
    fn seal_data(
        &mut self,
        buffer_start: u32,
        packet_number: u32,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> bool {
        seal_and_advance(
            self.data_key.as_ref(),
            &mut self.sent_nonce,
            buffer_start,
            packet_number,
            payload,
            out,
        )
    }

    /// [`Self::seal_data`] into a datagram of its own, for the queue of lossy and kill packets.
    fn sealed_datagram(&mut self, packet_number: u32, payload: &[u8]) -> Option<Vec<u8>> {
        let buffer_start = self.transport.recv_buffer_start();
        let mut datagram = Vec::new();
        self.seal_data(buffer_start, packet_number, payload, &mut datagram)
            .then_some(datagram)
    }

    fn close(&mut self, reason: CloseReason) {
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

/// Seals one data packet onto `out` under `key` and, when it was sealed, advances `nonce`
/// (§2.4: after every data packet, resends included). False without a key or for a payload
/// that cannot be framed; then nothing is appended and the nonce stays.
fn seal_and_advance(
    key: Option<&PrecomputedKey>,
    nonce: &mut Nonce,
    buffer_start: u32,
    packet_number: u32,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> bool {
    let Some(key) = key else {
        return false;
    };
    let sealed = seal_data_into(key, nonce, buffer_start, packet_number, payload, out).is_ok();
    if sealed {
        nonce.increment();
    }
    sealed
}

fn parse_drop(e: ParseError) -> DropReason {
    match e {
        ParseError::Crypto(_) => DropReason::DecryptionFailed,
        ParseError::AllPadding => DropReason::MalformedPlaintext,
        ParseError::LengthOutOfRange { .. } => DropReason::MalformedPlaintext,
        ParseError::WrongLength { .. } | ParseError::WrongKind(_) | ParseError::BadPayload => {
            DropReason::BadLength
        }
    }
}

fn transport_drop(e: TransportError) -> DropReason {
    match e {
        TransportError::OutsideWindow => DropReason::PacketOutsideWindow,
        TransportError::Duplicate => DropReason::DuplicatePacket,
        TransportError::MalformedRequest => DropReason::MalformedRequest,
        TransportError::OverBudget => DropReason::MemoryBudget,
        TransportError::SendQueueFull | TransportError::BadLength => DropReason::MalformedPlaintext,
    }
}
