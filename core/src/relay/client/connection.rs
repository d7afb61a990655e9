//! One connection to one TCP relay, sans-IO (docs/protocol.md §7; c-toxcore 0.2.18
//! `TCP_client.c`).
//!
//! The driver opens the TCP connection; [`RelayConnection::new`] queues the 128-byte hello
//! for it to write. The relay's 96-byte reply completes the handshake, which must happen
//! within [`TCP_CONNECTION_TIMEOUT`] of the connection's start. From then on both
//! directions carry frames ([`crate::relay::wire::frame`]) holding packets
//! (`crate::relay::wire::packet`):
//!
//! ```text
//!   handle_bytes ─► reply (96) ─► frames ─► packets ─┬─► routes (routes.rs) ─► events
//!                                                    ├─► ping → pong queued at once
//!                                                    └─► pong → keepalive.rs
//!   request_route / send_* ─► packets ─► frames ─► relay/outbuf.rs (bounded) ─► poll_write
//! ```
//!
//! Any violation c-toxcore punishes by closing the connection — a frame that does not
//! open, a packet of the wrong length, a client-to-server packet from the relay, a
//! notification for a reserved id, a pong with id 0 — fails the connection for good with a
//! [`ConnectionError`]; the caller closes the socket. Errors of our own sends (no route,
//! bad size, full output) are [`SendError`]s and leave the connection as it was.
//!
//! Differences from 0.2.18, none on the wire: data and control frames share one bounded
//! buffer (relay/outbuf.rs) where 0.2.18 keeps an unbounded list of control frames beside
//! one pending data frame; forwarding packets (11) are dropped, as nothing in this client
//! sends forward requests. A proxy (`crate::proxy`) is spoken by the driver before this
//! connection starts, within the same time-out.

use std::collections::VecDeque;
use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;

use crate::relay::outbuf::{Admit, ClientSide, FrameClass, OutBuf};
use crate::relay::wire::frame::frame_size;
use crate::relay::wire::packet::{MAX_OOB_DATA_LENGTH, ONION_REQUEST_MIN_EXCLUSIVE};
use crate::relay::wire::{
    ClientHandshake, ExactBytes, FrameDecoder, FrameEncoder, FrameError, HandshakeError, Packet,
    PacketError, MAX_PLAINTEXT_SIZE, SERVER_REPLY_SIZE,
};

use super::keepalive::{Keepalive, PongVerdict};
use super::routes::{RouteChange, RouteError, RouteRequestError, RouteStatus, RouteTable};

/// `TCP_CONNECTION_TIMEOUT` = 10 s (`TCP_client.h`): from opening the TCP connection to the
/// relay's handshake reply, at most this long (`kill_at` in `new_TCP_connection`).
pub const TCP_CONNECTION_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes of frames queued for the driver before data sends are refused (ours): 16 frames of
/// the 2 KiB maximum. 0.2.18 refuses a data frame while any byte of the previous one is
/// unsent, on top of the kernel's socket buffer; this much lets a driver that writes once
/// per wake-up keep the socket busy without hiding a slow relay from congestion control.
pub const DEFAULT_OUTPUT_LIMIT: usize = 32 * 1024;

/// Events held for [`RelayConnection::poll_event`] (ours). One 64 KiB read makes at most
/// about 3400 frames; beyond this the newest are dropped and counted.
pub const MAX_CONNECTION_EVENTS: usize = 4096;

/// The longest payload a routed data packet carries: one frame minus the id byte.
pub const MAX_DATA_SIZE: usize = MAX_PLAINTEXT_SIZE - 1;
/// The longest onion request body (after the id byte).
pub const MAX_ONION_REQUEST_SIZE: usize = MAX_PLAINTEXT_SIZE - 1;
/// The shortest onion request body a 0.2.18 relay accepts; a shorter one makes it close
/// the connection (`handle_TCP_packet`).
pub const MIN_ONION_REQUEST_SIZE: usize = ONION_REQUEST_MIN_EXCLUSIVE;

/// What the relay told us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionEvent {
    /// The handshake completed: routes and sends are possible now.
    Established,
    /// The relay refused a route (its table for us is full, or it was our own key).
    RouteRefused(PublicKey),
    /// The peer asked for us too: data flows on the route.
    RouteOnline(PublicKey),
    /// The peer left the relay or dropped its route; ours stays registered.
    RouteOffline(PublicKey),
    /// Data on a route (a net_crypto packet).
    Data {
        /// The peer's DHT key.
        from: PublicKey,
        /// The payload.
        data: Vec<u8>,
    },
    /// An out-of-band packet from any client of the relay.
    Oob {
        /// The sender's DHT key, as the relay authenticated it.
        from: PublicKey,
        /// The payload.
        data: Vec<u8>,
    },
    /// An onion response that came back through this relay (0x84 or 0x86).
    OnionResponse(Vec<u8>),
}

/// Why the connection is dead. Every case is one where c-toxcore closes the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// No valid reply within [`TCP_CONNECTION_TIMEOUT`].
    #[error("handshake timed out")]
    HandshakeTimeout,
    /// The reply did not open with the relay's key.
    #[error("handshake: {0}")]
    Handshake(#[from] HandshakeError),
    /// A frame of a bad length or that did not open.
    #[error("frame: {0}")]
    Frame(#[from] FrameError),
    /// A plaintext that is no valid packet.
    #[error("packet: {0}")]
    Packet(#[from] PacketError),
    /// A packet only clients send (routing request, OOB send, onion or forward request).
    #[error("relay sent client packet id {0}")]
    UnexpectedPacket(u8),
    /// A notification for a reserved id.
    #[error("route: {0}")]
    Route(#[from] RouteError),
    /// A pong with id 0.
    #[error("pong with id 0")]
    InvalidPong,
    /// Our ping went unanswered for `TCP_PING_TIMEOUT`.
    #[error("relay did not answer our ping")]
    PingTimeout,
    /// Not even a control frame fits in the output: the relay has stopped reading.
    #[error("relay stopped reading")]
    Stalled,
}

/// Why a send or route request did not happen. The connection is unchanged, except for
/// [`SendError::Failed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The handshake has not completed.
    #[error("relay connection not established")]
    NotEstablished,
    /// The connection is dead.
    #[error("relay connection failed: {0}")]
    Failed(ConnectionError),
    /// No online route to the peer.
    #[error("no online route")]
    NoRoute,
    /// A route request that cannot be made.
    #[error("route: {0}")]
    Route(#[from] RouteRequestError),
    /// A payload of a size the packet does not allow (0, or above its maximum).
    #[error("payload of {0} bytes")]
    Size(usize),
    /// The output buffer is full: write what is queued first (0.2.18's failed send, which
    /// sets net_crypto's `maximum_speed_reached`).
    #[error("relay output buffer full")]
    Full,
}

/// Settings of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionConfig {
    /// Queued output beyond which data sends are refused ([`DEFAULT_OUTPUT_LIMIT`]).
    pub output_limit: usize,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            output_limit: DEFAULT_OUTPUT_LIMIT,
        }
    }
}

/// What was dropped, for statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnectionStats {
    /// Frames received and opened.
    pub frames_in: u64,
    /// Frames queued for sending.
    pub frames_out: u64,
    /// Data packets for a route id we do not hold.
    pub unknown_route: u64,
    /// Forwarding packets (11), which nothing here asked for.
    pub forwarding: u64,
    /// Events dropped because [`MAX_CONNECTION_EVENTS`] were waiting.
    pub events_dropped: u64,
}

/// A [`Tx`] for `$encoder` into `$conn`'s output: a macro, because the encoder is
/// borrowed from the session in `$conn.state` apart from the fields it names.
macro_rules! tx {
    ($conn:expr, $encoder:expr) => {
        Tx {
            encoder: $encoder,
            out: &mut $conn.out,
            output_limit: $conn.output_limit,
            scratch: &mut $conn.scratch,
            frames_out: &mut $conn.stats.frames_out,
        }
    };
}

/// The established session.
#[derive(Debug)]
struct Session {
    encoder: FrameEncoder,
    decoder: FrameDecoder,
    routes: RouteTable,
    keepalive: Keepalive,
}

#[derive(Debug)]
enum State {
    Handshaking {
        handshake: ClientHandshake,
        reply: Box<ExactBytes<SERVER_REPLY_SIZE>>,
        deadline: Timestamp,
        /// The id of the ping sent as soon as the session is up (drawn now: the reply
        /// arrives in `handle_bytes`, which has no RNG).
        first_ping: u64,
    },
    Established(Box<Session>),
    Failed(ConnectionError),
}

/// One connection to one relay. Bounded: at most 240 routes, one partial frame in,
/// [`ConnectionConfig::output_limit`] plus a small control reserve out, and
/// [`MAX_CONNECTION_EVENTS`] events.
#[derive(Debug)]
pub struct RelayConnection {
    relay_pk: PublicKey,
    state: State,
    out: OutBuf<ClientSide>,
    /// Data frames are refused once this many bytes wait ([`ConnectionConfig::output_limit`]).
    output_limit: usize,
    /// Reused for each plaintext being sealed.
    scratch: Vec<u8>,
    events: VecDeque<ConnectionEvent>,
    stats: ConnectionStats,
}

impl RelayConnection {
    /// A connection to the relay with long-term key `relay_pk`, whose TCP connection the
    /// driver opened at `started`: the hello is queued, and the handshake fails at
    /// `started` + [`TCP_CONNECTION_TIMEOUT`]. `our_dht` is our DHT key pair: the relay and
    /// the peers reach us by its public half.
    pub fn new(
        started: Timestamp,
        our_dht: &KeyPair,
        relay_pk: PublicKey,
        config: ConnectionConfig,
        rng: &mut dyn CryptoRng,
    ) -> Result<Self, HandshakeError> {
        let (handshake, hello) = ClientHandshake::new(our_dht, &relay_pk, rng)?;
        let first_ping = rng.next_u64().max(1);
        let mut out = OutBuf::default();
        out.append_raw(&hello);
        Ok(RelayConnection {
            relay_pk,
            state: State::Handshaking {
                handshake,
                reply: Box::default(),
                deadline: started + TCP_CONNECTION_TIMEOUT,
                first_ping,
            },
            out,
            output_limit: config.output_limit,
            scratch: Vec::new(),
            events: VecDeque::new(),
            stats: ConnectionStats::default(),
        })
    }

    /// The relay's long-term key.
    pub fn relay_pk(&self) -> &PublicKey {
        &self.relay_pk
    }

    /// True once the handshake completed and until the connection fails.
    pub fn is_established(&self) -> bool {
        matches!(self.state, State::Established(_))
    }

    /// Why the connection died, once it has.
    pub fn failure(&self) -> Option<ConnectionError> {
        match self.state {
            State::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// Counters.
    pub fn stats(&self) -> ConnectionStats {
        self.stats
    }

    /// Bytes the relay sent. An error means the connection is dead and the socket should be
    /// closed; the same error is returned by every later call.
    pub fn handle_bytes(
        &mut self,
        now: Timestamp,
        mut bytes: &[u8],
    ) -> Result<(), ConnectionError> {
        if let State::Handshaking {
            reply, deadline, ..
        } = &mut self.state
        {
            if now >= *deadline {
                return self.fail(ConnectionError::HandshakeTimeout);
            }
            let Some(reply) = reply.fill(&mut bytes).copied() else {
                return Ok(());
            };
            let State::Handshaking {
                handshake,
                first_ping,
                ..
            } = std::mem::replace(
                &mut self.state,
                State::Failed(ConnectionError::HandshakeTimeout),
            )
            else {
                unreachable!("matched above");
            };
            match handshake.open_reply(&reply) {
                Ok(keys) => {
                    let (mut encoder, decoder) = keys.split();
                    // 0.2.18 pings in the same pass that completes the handshake; the
                    // relay counts the connection as confirmed (and lets others reach
                    // it) only from our first frame on.
                    let mut keepalive = Keepalive::new(now);
                    let mut tx = tx!(self, &mut encoder);
                    if let Err(e) = tx.control(&Packet::Ping {
                        ping_id: first_ping,
                    }) {
                        return self.fail(e);
                    }
                    keepalive.ping_sent(now, first_ping);
                    self.state = State::Established(Box::new(Session {
                        encoder,
                        decoder,
                        routes: RouteTable::default(),
                        keepalive,
                    }));
                    self.push_event(ConnectionEvent::Established);
                }
                Err(e) => return self.fail(e.into()),
            }
        }
        let result = self.read_frames(bytes);
        if let Err(e) = result {
            return self.fail(e);
        }
        if let State::Failed(e) = self.state {
            return Err(e);
        }
        Ok(())
    }

    /// Decodes and handles every complete frame in `bytes`.
    fn read_frames(&mut self, mut bytes: &[u8]) -> Result<(), ConnectionError> {
        let State::Established(session) = &mut self.state else {
            return match self.state {
                State::Failed(e) => Err(e),
                _ => Ok(()),
            };
        };
        let Session {
            encoder,
            decoder,
            routes,
            keepalive,
        } = &mut **session;
        let mut tx = tx!(self, encoder);
        while let Some(plain) = decoder.decode(&mut bytes)? {
            self.stats.frames_in += 1;
            let packet = Packet::parse(plain)?;
            let event = match packet {
                Packet::RoutingResponse { conn_id, pk } => match routes.on_response(conn_id, pk) {
                    RouteChange::Refused(pk) => Some(ConnectionEvent::RouteRefused(pk)),
                    RouteChange::Release(id) => {
                        tx.control(&Packet::DisconnectNotification { conn_id: id })?;
                        None
                    }
                    _ => None,
                },
                Packet::ConnectNotification { conn_id } => match routes.on_connect(conn_id)? {
                    RouteChange::Online(pk) => Some(ConnectionEvent::RouteOnline(pk)),
                    _ => None,
                },
                Packet::DisconnectNotification { conn_id } => {
                    match routes.on_disconnect(conn_id)? {
                        RouteChange::Offline(pk) => Some(ConnectionEvent::RouteOffline(pk)),
                        _ => None,
                    }
                }
                Packet::Ping { ping_id } => {
                    tx.control(&Packet::Pong { ping_id })?;
                    None
                }
                Packet::Pong { ping_id } => match keepalive.on_pong(ping_id) {
                    PongVerdict::Invalid => return Err(ConnectionError::InvalidPong),
                    PongVerdict::Answered | PongVerdict::Stale => None,
                },
                Packet::OobRecv { sender, data } => Some(ConnectionEvent::Oob {
                    from: sender,
                    data: data.to_vec(),
                }),
                Packet::OnionResponse { data } => {
                    Some(ConnectionEvent::OnionResponse(data.to_vec()))
                }
                Packet::Forwarding { .. } => {
                    self.stats.forwarding += 1;
                    None
                }
                Packet::Data { conn_id, payload } => match routes.peer_of(conn_id) {
                    Some(pk) => Some(ConnectionEvent::Data {
                        from: *pk,
                        data: payload.to_vec(),
                    }),
                    None => {
                        self.stats.unknown_route += 1;
                        None
                    }
                },
                Packet::RoutingRequest { .. }
                | Packet::OobSend { .. }
                | Packet::OnionRequest { .. }
                | Packet::ForwardRequest { .. } => {
                    return Err(ConnectionError::UnexpectedPacket(packet.id()))
                }
            };
            if let Some(event) = event {
                push_bounded(&mut self.events, &mut self.stats.events_dropped, event);
            }
        }
        decoder.shrink();
        Ok(())
    }

    /// The next deadline: the handshake's, or the next ping or pong deadline.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        match &self.state {
            State::Handshaking { deadline, .. } => Some(*deadline),
            State::Established(s) => Some(s.keepalive.deadline()),
            State::Failed(_) => None,
        }
    }

    /// Runs the timers: the handshake deadline, our pings and their deadline.
    pub fn handle_timeout(
        &mut self,
        now: Timestamp,
        rng: &mut dyn CryptoRng,
    ) -> Result<(), ConnectionError> {
        match &mut self.state {
            State::Failed(e) => Err(*e),
            State::Handshaking { deadline, .. } => {
                if now >= *deadline {
                    return self.fail(ConnectionError::HandshakeTimeout);
                }
                Ok(())
            }
            State::Established(session) => {
                if session.keepalive.is_dead(now) {
                    return self.fail(ConnectionError::PingTimeout);
                }
                if let Some(ping_id) = session.keepalive.due_ping(now, rng) {
                    let mut tx = tx!(self, &mut session.encoder);
                    if let Err(e) = tx.control(&Packet::Ping { ping_id }) {
                        return self.fail(e);
                    }
                    session.keepalive.ping_sent(now, ping_id);
                }
                Ok(())
            }
        }
    }

    /// The next record for the driver to write to the socket, in order (whole frames, see
    /// `relay::record`); empty when there is none.
    pub fn poll_write(&self) -> &[u8] {
        self.out.front()
    }

    /// The driver wrote the first `n` bytes of [`Self::poll_write`].
    pub fn consume(&mut self, n: usize) {
        self.out.consume(n);
    }

    /// Bytes waiting to be written.
    pub fn queued(&self) -> usize {
        self.out.len()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ConnectionEvent> {
        self.events.pop_front()
    }

    /// The status of our route to `peer`, if we asked for one.
    pub fn route_status(&self, peer: &PublicKey) -> Option<RouteStatus> {
        match &self.state {
            State::Established(s) => s.routes.status(peer),
            _ => None,
        }
    }

    /// Every route we asked for, with its status.
    pub fn routes(&self) -> impl Iterator<Item = (&PublicKey, RouteStatus)> + '_ {
        let routes = match &self.state {
            State::Established(s) => Some(s.routes.peers()),
            _ => None,
        };
        routes.into_iter().flatten()
    }

    /// Asks the relay for a route to `peer` (`[0][pk]`). It comes up once the peer asks
    /// for us too ([`ConnectionEvent::RouteOnline`]).
    pub fn request_route(&mut self, peer: PublicKey) -> Result<(), SendError> {
        let result = self.with_session(|routes, tx| {
            routes.request(peer)?;
            tx.control(&Packet::RoutingRequest { pk: peer })
                .map_err(SendError::Failed)
        });
        self.fail_on_stall(result)
    }

    /// Gives up the route to `peer`; the relay is told (`[3][id]`) if it gave one.
    pub fn remove_route(&mut self, peer: &PublicKey) -> Result<(), SendError> {
        let result = self.with_session(|routes, tx| match routes.remove(peer) {
            Some(conn_id) => tx
                .control(&Packet::DisconnectNotification { conn_id })
                .map_err(SendError::Failed),
            None => Ok(()),
        });
        self.fail_on_stall(result)
    }

    /// Sends `data` (a net_crypto packet) on the online route to `peer`.
    pub fn send_data(&mut self, peer: &PublicKey, data: &[u8]) -> Result<(), SendError> {
        if data.is_empty() || data.len() > MAX_DATA_SIZE {
            return Err(SendError::Size(data.len()));
        }
        self.with_session(|routes, tx| match routes.status(peer) {
            Some(RouteStatus::Online(conn_id)) => tx.data(&Packet::Data {
                conn_id,
                payload: data,
            }),
            _ => Err(SendError::NoRoute),
        })
    }

    /// Sends `data` (1..=1024 bytes) out of band to whichever client of the relay has the
    /// key `dest`; the relay drops it if there is none.
    pub fn send_oob(&mut self, dest: &PublicKey, data: &[u8]) -> Result<(), SendError> {
        if data.is_empty() || data.len() > MAX_OOB_DATA_LENGTH {
            return Err(SendError::Size(data.len()));
        }
        self.with_session(|_, tx| tx.data(&Packet::OobSend { dest: *dest, data }))
    }

    /// Sends an onion request for the relay to forward as the path's first hop. `body` is
    /// `[nonce 24][ipport B 19][PK2 32][E(k2)[..]]` (`OnionRequest::tcp_request`), between
    /// [`MIN_ONION_REQUEST_SIZE`] and [`MAX_ONION_REQUEST_SIZE`] bytes.
    pub fn send_onion(&mut self, body: &[u8]) -> Result<(), SendError> {
        if body.len() < MIN_ONION_REQUEST_SIZE || body.len() > MAX_ONION_REQUEST_SIZE {
            return Err(SendError::Size(body.len()));
        }
        let (nonce, plain) = body.split_at(rustox_net_crypto::crypto::NONCE_SIZE);
        let nonce = rustox_net_crypto::crypto::Nonce::from_slice(nonce)
            .ok_or(SendError::Size(body.len()))?;
        self.with_session(|_, tx| tx.data(&Packet::OnionRequest { nonce, plain }))
    }

    fn with_session<T>(
        &mut self,
        f: impl FnOnce(&mut RouteTable, &mut Tx<'_>) -> Result<T, SendError>,
    ) -> Result<T, SendError> {
        match &mut self.state {
            State::Handshaking { .. } => Err(SendError::NotEstablished),
            State::Failed(e) => Err(SendError::Failed(*e)),
            State::Established(session) => {
                let Session {
                    encoder, routes, ..
                } = &mut **session;
                let mut tx = tx!(self, encoder);
                f(routes, &mut tx)
            }
        }
    }

    fn fail_on_stall(&mut self, result: Result<(), SendError>) -> Result<(), SendError> {
        if let Err(SendError::Failed(e)) = result {
            self.state = State::Failed(e);
        }
        result
    }

    fn fail(&mut self, e: ConnectionError) -> Result<(), ConnectionError> {
        self.state = State::Failed(e);
        Err(e)
    }

    fn push_event(&mut self, event: ConnectionEvent) {
        push_bounded(&mut self.events, &mut self.stats.events_dropped, event);
    }
}

fn push_bounded(events: &mut VecDeque<ConnectionEvent>, dropped: &mut u64, event: ConnectionEvent) {
    if events.len() >= MAX_CONNECTION_EVENTS {
        *dropped += 1;
    } else {
        events.push_back(event);
    }
}

/// The sending half: seals packets into the bounded output.
struct Tx<'a> {
    encoder: &'a mut FrameEncoder,
    out: &'a mut OutBuf<ClientSide>,
    output_limit: usize,
    scratch: &'a mut Vec<u8>,
    frames_out: &'a mut u64,
}

impl Tx<'_> {
    /// Queues a control frame; a full reserve means the relay stopped reading.
    fn control(&mut self, packet: &Packet<'_>) -> Result<(), ConnectionError> {
        self.send(FrameClass::Control, packet)
            .map_err(|_| ConnectionError::Stalled)
    }

    /// Queues a data frame; [`SendError::Full`] if it does not fit.
    fn data(&mut self, packet: &Packet<'_>) -> Result<(), SendError> {
        self.send(FrameClass::Data, packet)
    }

    fn send(&mut self, class: FrameClass, packet: &Packet<'_>) -> Result<(), SendError> {
        let len = packet.encoded_len();
        if len > MAX_PLAINTEXT_SIZE {
            return Err(SendError::Size(len));
        }
        self.scratch.clear();
        packet.encode(self.scratch);
        let encoder = &mut *self.encoder;
        let plain = &*self.scratch;
        if self.out.admit(class, frame_size(len), self.output_limit) != Admit::Yes {
            return Err(SendError::Full);
        }
        self.out
            .append(|buf| encoder.encode(plain, buf))
            .map_err(|_| SendError::Size(len))?;
        *self.frames_out += 1;
        Ok(())
    }
}
