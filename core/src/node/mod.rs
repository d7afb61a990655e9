//! The node: everything one Tox instance runs on its one UDP port, sans-IO.
//!
//! c-toxcore puts the DHT, LAN discovery, the onion, net_crypto sessions and friend
//! connections on one socket; so does this type. A datagram enters
//! [`Node::handle_datagram`] with the time it arrived and is routed by its first byte
//! ([`route::layer_of`]) to the DHT, the net_crypto endpoint or the onion; what the layers
//! produce is pulled out with [`Node::poll_transmit`], [`Node::poll_event`] and
//! [`Node::poll_timeout`]. The application calls the API (friends, messages, files) with
//! `now`. The simulator, the drivers and the C API all run this same type.
//!
//! Between the layers the node keeps the friend list: a friend's DHT key and address, once
//! learned, become a net_crypto session (`friend_connection.c`), and Messenger's `ONLINE`
//! packet on that session makes the friend online (protocol.md §3.1).

pub mod event;
pub mod files;
pub mod friends;
pub mod messenger;
pub mod route;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use rand::SeedableRng;
use rustox_file_transfer::stream::{Sink, StreamError};
use rustox_file_transfer::FileKind;
use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PublicKey};
use rustox_net_crypto::{
    CloseReason, ConnectError, ConnectionEvent, ConnectionId, ConnectionStatus, Endpoint,
    EndpointConfig, EndpointEvent, SendError, Timestamp, Transmit, TransportConfig, TransportStats,
};

use crate::dht::wire::packed_node::canonical;
use crate::dht::{DhtConfig, DhtEvent, DhtNode};
pub use event::{FileOffer, NodeEvent};
pub use files::{DigestSlot, PreparedFile};
use friends::FriendList;
pub use friends::{FriendListError, FriendNumber, MAX_FRIENDS};
use messenger::*;
use route::Layer;

/// Most events waiting to be polled; beyond it new ones are dropped and counted. An
/// application that stops polling must not make the node grow without bound.
pub const MAX_EVENTS: usize = 4096;

/// The shortest time between two dials of one friend: a session that a peer kills at once
/// must not turn into a handshake loop. c-toxcore redials on its next iteration after a
/// handshake gave up (8 × 1 s, protocol.md §2.3); one second keeps that pace.
pub const REDIAL_INTERVAL: Duration = Duration::from_secs(1);

/// How a node runs.
#[derive(Debug, Clone, Default)]
pub struct NodeOptions {
    /// The transport every session runs.
    pub transport: TransportConfig,
    /// The DHT's settings (LAN discovery, hole punching, limits).
    pub dht: DhtConfig,
    /// The DHT key pair. `None`: a fresh one for this run, as c-toxcore does, so the DHT
    /// key says nothing about who we are. A node that is dialled directly by address and
    /// one key (`rustox recv`) passes its long-term pair here.
    pub dht_keys: Option<KeyPair>,
    /// Accept sessions from anyone who dials us, adding them as friends (`rustox recv
    /// --accept-from any`). Off, only friends get a session.
    pub accept_strangers: bool,
}

/// Why an API call was refused.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// No friend with that number.
    #[error("no such friend")]
    UnknownFriend,
    /// The friend is not online (no session, or its `ONLINE` has not arrived).
    #[error("the friend is not online")]
    FriendOffline,
    /// The key is our own.
    #[error("that is our own key")]
    OwnKey,
    /// The friend list refused.
    #[error(transparent)]
    FriendList(#[from] FriendListError),
    /// The endpoint refused to dial.
    #[error("cannot connect: {0}")]
    Connect(#[from] ConnectError),
    /// The session refused the payload.
    #[error("cannot send: {0}")]
    Send(#[from] SendError),
    /// The message does not fit one packet.
    #[error("message longer than {MAX_MESSAGE_LEN} bytes")]
    MessageTooLong,
    /// The message is empty.
    #[error("empty message")]
    EmptyMessage,
    /// The file layer refused.
    #[error(transparent)]
    Stream(#[from] StreamError),
}

/// What the driver's socket refused or dropped: a failed send of one datagram, or a
/// datagram no answer could ever reach, is counted here and the node carries on.
#[derive(Debug, Clone, Default)]
pub struct IoCounters {
    /// Datagrams the OS refused to send.
    pub send_errors: u64,
    /// The latest refusal: the destination and what the OS said.
    pub last_send_error: Option<(SocketAddr, String)>,
    /// Datagrams dropped on arrival because they came from UDP port 0, which no reply can
    /// reach (a spoofed or broken source; answering one made the OS refuse the send).
    pub from_port_zero: u64,
}

/// Counters of the node's own routing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Datagrams handed to the DHT.
    pub dht_in: u64,
    /// Datagrams handed to the net_crypto endpoint.
    pub net_crypto_in: u64,
    /// Onion datagrams (no onion layer yet: counted and dropped).
    pub onion_in: u64,
    /// Datagrams whose first byte names no layer.
    pub unknown_kind: u64,
    /// Datagrams the DHT refused (rate limit, malformed, undecryptable).
    pub dht_refused: u64,
    /// Datagrams the endpoint refused (its own counters say why).
    pub net_crypto_refused: u64,
    /// Lossless packets from a friend that is not online yet, or with an id this node does
    /// not handle.
    pub packets_ignored: u64,
    /// Events dropped because the application did not poll them.
    pub events_dropped: u64,
}

/// One Tox instance. See the module docs.
pub struct Node {
    keys: KeyPair,
    dht: DhtNode,
    endpoint: Endpoint,
    friends: FriendList,
    accept_strangers: bool,
    rng: Box<dyn CryptoRng + Send>,
    events: VecDeque<NodeEvent>,
    io: IoCounters,
    stats: NodeStats,
    self_connected: bool,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("pk", &self.keys.public)
            .field("friends", &self.friends.len())
            .finish_non_exhaustive()
    }
}

impl Node {
    /// A node with long-term identity `keys`. Randomness (keys, nonces, ping ids) comes
    /// from `rng`: the OS in production, a seeded generator in tests.
    pub fn new(
        now: Timestamp,
        keys: KeyPair,
        options: NodeOptions,
        mut rng: Box<dyn CryptoRng + Send>,
    ) -> Self {
        let dht_keys = options
            .dht_keys
            .unwrap_or_else(|| KeyPair::generate(rng.as_mut()));
        let dht = DhtNode::new(dht_keys.clone(), options.dht, now, rng.as_mut());
        // The endpoint draws from its own generator, seeded from ours: a CSPRNG seeded from
        // the OS in production, reproducible from the test's seed in simulation.
        let endpoint_rng = rand_chacha::ChaCha20Rng::from_seed(rng_seed(rng.as_mut()));
        let endpoint = Endpoint::new(
            now,
            keys.clone(),
            dht_keys,
            EndpointConfig {
                transport: options.transport,
                accept_all: options.accept_strangers,
            },
            Box::new(endpoint_rng),
        );
        Node {
            keys,
            dht,
            endpoint,
            friends: FriendList::default(),
            accept_strangers: options.accept_strangers,
            rng,
            events: VecDeque::new(),
            io: IoCounters::default(),
            stats: NodeStats::default(),
            self_connected: false,
        }
    }

    // ----- identity and state ----------------------------------------------------------

    /// Our long-term public key.
    pub fn public_key(&self) -> PublicKey {
        self.keys.public
    }

    /// Our DHT public key (for this run unless fixed in [`NodeOptions::dht_keys`]).
    pub fn dht_public_key(&self) -> PublicKey {
        self.dht.public_key()
    }

    /// The DHT.
    pub fn dht(&self) -> &DhtNode {
        &self.dht
    }

    /// The net_crypto endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The node's routing counters.
    pub fn stats(&self) -> NodeStats {
        self.stats
    }

    /// What the driver's socket refused or dropped so far.
    pub fn io_counters(&self) -> &IoCounters {
        &self.io
    }

    /// Whether the node holds at least one DHT node that answered it.
    pub fn is_connected(&self) -> bool {
        self.self_connected
    }

    // ----- network ---------------------------------------------------------------------

    /// Starts from a known DHT node: asks it for the nodes closest to us (`dht_bootstrap`,
    /// protocol.md §5.8).
    pub fn bootstrap(&mut self, now: Timestamp, addr: SocketAddr, dht_pk: PublicKey) {
        self.dht.bootstrap(now, addr, dht_pk, self.rng.as_mut());
    }

    // ----- friends ---------------------------------------------------------------------

    /// Adds a friend without a request (`tox_friend_add_norequest`): we accept its sessions
    /// and connect once its DHT key and address are known.
    pub fn add_friend_norequest(
        &mut self,
        now: Timestamp,
        pk: PublicKey,
    ) -> Result<FriendNumber, NodeError> {
        if pk == self.keys.public {
            return Err(NodeError::OwnKey);
        }
        let number = self.friends.add(pk)?;
        self.endpoint.allow_peer(pk);
        self.maintain_friends(now);
        Ok(number)
    }

    /// Adds (or updates) a friend whose DHT key and address are known, and dials it at
    /// once: the direct form of `rustox send --to ADDR --key KEY`.
    pub fn add_friend_direct(
        &mut self,
        now: Timestamp,
        pk: PublicKey,
        dht_pk: PublicKey,
        addr: SocketAddr,
    ) -> Result<FriendNumber, NodeError> {
        let number = match self.friends.by_pk(&pk) {
            Some(n) => n,
            None => self.add_friend_norequest(now, pk)?,
        };
        self.learn_dht_pk(number, dht_pk);
        if let Some(friend) = self.friends.get_mut(number) {
            friend.addr = Some((canonical(addr), now));
            friend.dialled_at = None;
            friend.passive = false;
        }
        self.maintain_friends(now);
        Ok(number)
    }

    /// Removes a friend: its session is killed (after an `OFFLINE` packet when it was
    /// online), its transfers fail, and it can no longer open a session to us.
    pub fn delete_friend(&mut self, now: Timestamp, friend: FriendNumber) -> Result<(), NodeError> {
        let mut removed = self
            .friends
            .remove(friend)
            .ok_or(NodeError::UnknownFriend)?;
        self.endpoint.forbid_peer(&removed.pk);
        if let Some(dht_pk) = removed.dht_pk {
            self.dht.remove_friend(&dht_pk);
        }
        if let Some(conn) = removed
            .session
            .and_then(|id| self.endpoint.connection_mut(id))
        {
            if removed.online {
                let _ = conn.send_lossless(now, &[PACKET_ID_OFFLINE]);
            }
            conn.kill(now);
        }
        removed.files.friend_offline(friend, &mut Vec::new());
        Ok(())
    }

    /// The friend with this real key.
    pub fn friend_by_pk(&self, pk: &PublicKey) -> Option<FriendNumber> {
        self.friends.by_pk(pk)
    }

    /// Every friend's number.
    pub fn friends(&self) -> Vec<FriendNumber> {
        self.friends.numbers()
    }

    /// A friend's real key.
    pub fn friend_public_key(&self, friend: FriendNumber) -> Option<PublicKey> {
        self.friends.get(friend).map(|f| f.pk)
    }

    /// Whether a friend is online (its session is up and its `ONLINE` arrived).
    pub fn is_friend_online(&self, friend: FriendNumber) -> bool {
        self.friends.get(friend).is_some_and(|f| f.online)
    }

    /// The transport's statistics of a friend's session.
    pub fn session_stats(&self, friend: FriendNumber) -> Option<TransportStats> {
        let id = self.friends.get(friend)?.session?;
        self.endpoint.connection(id).map(|c| c.transport().stats())
    }

    // ----- messages and files ----------------------------------------------------------

    /// Sends a chat message to an online friend.
    pub fn send_message(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        text: &[u8],
    ) -> Result<(), NodeError> {
        if text.is_empty() {
            return Err(NodeError::EmptyMessage);
        }
        if text.len() > MAX_MESSAGE_LEN {
            return Err(NodeError::MessageTooLong);
        }
        let conn = self.online_session(friend)?;
        let mut payload = Vec::with_capacity(text.len() + 1);
        payload.push(PACKET_ID_MESSAGE);
        payload.extend_from_slice(text);
        conn.send_lossless(now, &payload)?;
        Ok(())
    }

    /// Offers a file whose SHA-256 the caller computed beforehand — before the session,
    /// ideally: hashing a large file inside the event loop stalls every session for as
    /// long as it takes (≈ 1 s per GiB), which the transport then reads as a huge RTT.
    pub fn send_file(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        file: PreparedFile,
        name: &[u8],
    ) -> Result<u32, NodeError> {
        let id = self.online_session_id(friend)?;
        let conn = self
            .endpoint
            .connection_mut(id)
            .ok_or(NodeError::FriendOffline)?;
        let f = self
            .friends
            .get_mut(friend)
            .ok_or(NodeError::UnknownFriend)?;
        let number = f.files.streams.send_with_id(
            now,
            conn,
            FileKind::Data,
            file.size,
            file.sha256,
            file.source,
            name,
        )?;
        self.after_input(now);
        Ok(number)
    }

    /// Accepts an offered file into `sink`. When the sink hashes what it writes (the
    /// drivers' writer thread does, off the event loop), `digest` is where it leaves the
    /// SHA-256, which must then equal the file id.
    pub fn accept_file(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        file: u32,
        sink: Box<dyn Sink>,
        digest: Option<DigestSlot>,
    ) -> Result<(), NodeError> {
        let id = self.online_session_id(friend)?;
        let conn = self
            .endpoint
            .connection_mut(id)
            .ok_or(NodeError::FriendOffline)?;
        let f = self
            .friends
            .get_mut(friend)
            .ok_or(NodeError::UnknownFriend)?;
        let expected = *f
            .files
            .offered
            .get(&file)
            .ok_or(StreamError::NotOffered(file))?;
        f.files.streams.accept(now, conn, file, sink, false)?;
        f.files.offered.remove(&file);
        f.files.receiving.insert(file, (digest, expected));
        Ok(())
    }

    /// Refuses an offer or stops a transfer.
    pub fn cancel_file(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        file: u32,
    ) -> Result<(), NodeError> {
        let id = self.online_session_id(friend)?;
        let conn = self
            .endpoint
            .connection_mut(id)
            .ok_or(NodeError::FriendOffline)?;
        let f = self
            .friends
            .get_mut(friend)
            .ok_or(NodeError::UnknownFriend)?;
        f.files.offered.remove(&file);
        f.files.receiving.remove(&file);
        f.files.streams.cancel(now, conn, file)?;
        Ok(())
    }

    /// Bytes of a transfer done so far (sent and acknowledged, or received).
    pub fn file_progress(&mut self, friend: FriendNumber, file: u32) -> Option<u64> {
        let f = self.friends.get_mut(friend)?;
        f.files
            .streams
            .transfers()
            .transfer(file)
            .map(|t| t.transferred)
    }

    // ----- the sans-IO loop ------------------------------------------------------------

    /// A received datagram. One from UDP port 0 is dropped before anything reads it: no
    /// answer can reach that port. Anything a layer refuses is counted there; nothing a
    /// datagram says can stop the node.
    pub fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, datagram: &[u8]) {
        // A dual-stack socket reports IPv4 peers IPv4-mapped; every layer keys peers by
        // the plain form, as the wire carries them (protocol.md §5.1).
        let from = canonical(from);
        if from.port() == 0 {
            self.io.from_port_zero += 1;
            return;
        }
        match route::layer_of(datagram) {
            Layer::Dht => {
                self.stats.dht_in += 1;
                if self
                    .dht
                    .handle_datagram(now, from, datagram, self.rng.as_mut())
                    .is_err()
                {
                    self.stats.dht_refused += 1;
                }
            }
            Layer::NetCrypto => {
                self.stats.net_crypto_in += 1;
                if self.endpoint.handle_datagram(now, from, datagram).is_err() {
                    self.stats.net_crypto_refused += 1;
                }
            }
            Layer::OnionServer | Layer::OnionClient => self.stats.onion_in += 1,
            Layer::Unknown => self.stats.unknown_kind += 1,
        }
        self.after_input(now);
    }

    /// The OS refused to send one datagram to `to`: counted, and the node goes on (the
    /// transport resends what mattered; a peer that cannot be reached times out).
    pub fn record_send_error(&mut self, to: SocketAddr, error: &std::io::Error) {
        self.io.send_errors += 1;
        self.io.last_send_error = Some((to, error.to_string()));
    }

    /// The deadline from [`Node::poll_timeout`] passed (calling it early is harmless).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if self.dht.poll_timeout() <= now {
            self.dht.handle_timeout(now, self.rng.as_mut());
        }
        self.endpoint.handle_timeout(now);
        self.after_input(now);
    }

    /// The next datagram to send: the DHT's few control datagrams first, then the
    /// sessions'. When none is left, the file layer gets one more chance to fill budget
    /// that sending just opened.
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Transmit> {
        if let Some(t) = self.dht.poll_transmit(now, self.rng.as_mut()) {
            return Some(Transmit {
                destination: t.dst,
                payload: t.payload,
            });
        }
        if let Some(t) = self.endpoint.poll_transmit(now) {
            return Some(t);
        }
        if self.pump_files(now) == 0 {
            return None;
        }
        self.endpoint.poll_transmit(now)
    }

    /// [`Node::poll_transmit`] appending the datagram to `out` (a send batch) and
    /// returning its destination.
    pub fn poll_transmit_into(&mut self, now: Timestamp, out: &mut Vec<u8>) -> Option<SocketAddr> {
        if let Some(t) = self.dht.poll_transmit(now, self.rng.as_mut()) {
            out.extend_from_slice(&t.payload);
            return Some(t.dst);
        }
        if let Some(to) = self.endpoint.poll_transmit_into(now, out) {
            return Some(to);
        }
        if self.pump_files(now) == 0 {
            return None;
        }
        self.endpoint.poll_transmit_into(now, out)
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<NodeEvent> {
        self.events.pop_front()
    }

    /// When [`Node::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let dht = self.dht.poll_timeout();
        Some(match self.endpoint.poll_timeout() {
            Some(t) => t.min(dht),
            None => dht,
        })
    }

    // ----- internals -------------------------------------------------------------------

    fn online_session_id(&self, friend: FriendNumber) -> Result<ConnectionId, NodeError> {
        let f = self.friends.get(friend).ok_or(NodeError::UnknownFriend)?;
        match f.session {
            Some(id) if f.online => Ok(id),
            _ => Err(NodeError::FriendOffline),
        }
    }

    fn online_session(
        &mut self,
        friend: FriendNumber,
    ) -> Result<&mut rustox_net_crypto::Connection, NodeError> {
        let id = self.online_session_id(friend)?;
        self.endpoint
            .connection_mut(id)
            .ok_or(NodeError::FriendOffline)
    }

    fn push_event(&mut self, event: NodeEvent) {
        if self.events.len() >= MAX_EVENTS {
            self.stats.events_dropped += 1;
            return;
        }
        self.events.push_back(event);
    }

    /// A friend's DHT key became known (or changed): the DHT searches for it.
    fn learn_dht_pk(&mut self, friend: FriendNumber, dht_pk: PublicKey) {
        let Some(f) = self.friends.get_mut(friend) else {
            return;
        };
        if f.dht_pk == Some(dht_pk) {
            return;
        }
        if let Some(old) = f.dht_pk.replace(dht_pk) {
            self.dht.remove_friend(&old);
        }
        self.dht.add_friend(dht_pk, self.rng.as_mut());
    }

    /// After every input: move the layers' events along, then top up the files.
    fn after_input(&mut self, now: Timestamp) {
        self.drain_dht(now);
        self.drain_endpoint(now);
        self.maintain_friends(now);
        self.pump_files(now);
        let connected = !self.dht.close_nodes(now).is_empty();
        if connected != self.self_connected {
            self.self_connected = connected;
            self.push_event(NodeEvent::SelfConnection { connected });
        }
    }

    fn drain_dht(&mut self, now: Timestamp) {
        while let Some(event) = self.dht.poll_event() {
            match event {
                DhtEvent::FriendAddr { pk, addr } => {
                    if let Some(n) = self.friends.by_dht_pk(&pk) {
                        if let Some(f) = self.friends.get_mut(n) {
                            f.addr = Some((addr, now));
                        }
                    }
                }
                // DHT-PK and friend requests through the DHT: handled with the onion.
                DhtEvent::Request { .. } => {}
            }
        }
    }

    /// Dials every friend whose DHT key and address are known and who has no session.
    fn maintain_friends(&mut self, now: Timestamp) {
        for number in self.friends.numbers() {
            let Some(f) = self.friends.get(number).filter(|f| !f.passive) else {
                continue;
            };
            let (Some(dht_pk), Some((addr, _))) = (f.dht_pk, f.addr) else {
                continue;
            };
            let live = f.session.is_some_and(|id| {
                self.endpoint
                    .connection(id)
                    .is_some_and(|c| c.status() != ConnectionStatus::Closed)
            });
            if live || f.dialled_at.is_some_and(|t| now < t + REDIAL_INTERVAL) {
                continue;
            }
            let pk = f.pk;
            // An incoming session may exist already under a new id.
            if let Some(id) = self.endpoint.connection_to(&pk) {
                if let Some(f) = self.friends.get_mut(number) {
                    f.session = Some(id);
                }
                continue;
            }
            if let Ok(id) = self.endpoint.connect(now, addr, pk, dht_pk) {
                if let Some(f) = self.friends.get_mut(number) {
                    f.session = Some(id);
                    f.online = false;
                    f.dialled_at = Some(now);
                }
            }
        }
    }

    fn drain_endpoint(&mut self, now: Timestamp) {
        while let Some(event) = self.endpoint.poll_event() {
            match event {
                EndpointEvent::Incoming {
                    id,
                    peer_real_pk,
                    peer_dht_pk,
                    addr,
                } => self.on_incoming(now, id, peer_real_pk, peer_dht_pk, addr),
                EndpointEvent::Connection { id, event } => self.on_connection(now, id, event),
            }
        }
    }

    fn on_incoming(
        &mut self,
        now: Timestamp,
        id: ConnectionId,
        pk: PublicKey,
        dht_pk: PublicKey,
        addr: SocketAddr,
    ) {
        let number = match self.friends.by_pk(&pk) {
            Some(n) => n,
            None if self.accept_strangers => match self.add_stranger(pk) {
                Some(n) => {
                    self.push_event(NodeEvent::FriendAdded { friend: n, pk });
                    n
                }
                None => {
                    if let Some(conn) = self.endpoint.connection_mut(id) {
                        conn.kill(now);
                    }
                    return;
                }
            },
            None => {
                // The endpoint accepts only allowed keys; a stranger here means the friend
                // was deleted in between.
                if let Some(conn) = self.endpoint.connection_mut(id) {
                    conn.kill(now);
                }
                return;
            }
        };
        self.learn_dht_pk(number, dht_pk);
        if let Some(f) = self.friends.get_mut(number) {
            f.session = Some(id);
            f.online = false;
            f.addr = Some((addr, now));
        }
    }

    /// A stranger that dialled us becomes a passive friend. When the list is full, a
    /// passive friend without a live session makes room: strangers cannot lock the list.
    fn add_stranger(&mut self, pk: PublicKey) -> Option<FriendNumber> {
        match self.friends.add(pk) {
            Ok(n) => Some(n),
            Err(FriendListError::Full) => {
                let idle = self
                    .friends
                    .iter()
                    .find(|(_, f)| {
                        f.passive
                            && f.session
                                .and_then(|id| self.endpoint.connection(id))
                                .is_none_or(|c| c.status() == ConnectionStatus::Closed)
                    })
                    .map(|(n, _)| n)?;
                let gone = self.friends.remove(idle)?;
                self.endpoint.forbid_peer(&gone.pk);
                if let Some(dht_pk) = gone.dht_pk {
                    self.dht.remove_friend(&dht_pk);
                }
                self.friends.add(pk).ok()
            }
            Err(FriendListError::AlreadyFriend) => self.friends.by_pk(&pk),
        }
        .inspect(|&n| {
            if let Some(f) = self.friends.get_mut(n) {
                f.passive = true;
            }
        })
    }

    fn on_connection(&mut self, now: Timestamp, id: ConnectionId, event: ConnectionEvent) {
        let Some(number) = self.friends.by_session(id) else {
            return;
        };
        match event {
            ConnectionEvent::Established => {
                if let Some(conn) = self.endpoint.connection_mut(id) {
                    // Messenger's hello: the friend is online for the peer once it arrives.
                    let _ = conn.send_lossless(now, &[PACKET_ID_ONLINE]);
                }
            }
            ConnectionEvent::Lossless(payload) => self.on_lossless(now, number, id, &payload),
            ConnectionEvent::Lossy(_) => self.stats.packets_ignored += 1,
            ConnectionEvent::Closed(reason) => self.on_closed(number, reason),
        }
    }

    fn on_lossless(&mut self, now: Timestamp, number: FriendNumber, id: ConnectionId, p: &[u8]) {
        let online = self.friends.get(number).is_some_and(|f| f.online);
        match (p.first().copied(), online) {
            (Some(PACKET_ID_ONLINE), false) if p.len() == 1 => {
                let addr = self.endpoint.connection(id).map(|c| c.peer_addr());
                if let Some(f) = self.friends.get_mut(number) {
                    f.online = true;
                }
                self.push_event(NodeEvent::FriendConnection {
                    friend: number,
                    online: true,
                    addr,
                });
            }
            (Some(PACKET_ID_OFFLINE), true) if p.len() == 1 => {
                self.go_offline(number);
            }
            (Some(PACKET_ID_MESSAGE), true) if p.len() > 1 => {
                self.push_event(NodeEvent::Message {
                    friend: number,
                    text: p[1..].to_vec(),
                });
            }
            (Some(kind), true) if FILE_PACKET_IDS.contains(&kind) => {
                let (Some(conn), Some(f)) = (
                    self.endpoint.connection_mut(id),
                    self.friends.get_mut(number),
                ) else {
                    return;
                };
                // A malformed or out-of-place file packet is the file layer's to refuse
                // and count; the session goes on.
                let _ = f.files.streams.handle_packet(now, conn, p);
                let mut events = Vec::new();
                f.files.drain_into(number, &mut events);
                for e in events {
                    self.push_event(e);
                }
            }
            // Status, typing, and anything before ONLINE: dropped (§3.1).
            _ => self.stats.packets_ignored += 1,
        }
    }

    /// The friend is no longer online for Messenger: its transfers fail.
    fn go_offline(&mut self, number: FriendNumber) {
        let Some(f) = self.friends.get_mut(number) else {
            return;
        };
        let was_online = std::mem::replace(&mut f.online, false);
        let mut events = Vec::new();
        f.files.friend_offline(number, &mut events);
        for e in events {
            self.push_event(e);
        }
        if was_online {
            self.push_event(NodeEvent::FriendConnection {
                friend: number,
                online: false,
                addr: None,
            });
        }
    }

    fn on_closed(&mut self, number: FriendNumber, reason: CloseReason) {
        self.go_offline(number);
        if let Some(f) = self.friends.get_mut(number) {
            f.session = None;
        }
        self.push_event(NodeEvent::SessionClosed {
            friend: number,
            reason,
        });
    }

    /// Tops up every online friend's file layer; returns file bytes queued.
    fn pump_files(&mut self, now: Timestamp) -> u64 {
        let mut queued = 0;
        let mut events = Vec::new();
        for number in self.friends.numbers() {
            let Some(f) = self.friends.get_mut(number) else {
                continue;
            };
            let Some(id) = f.session.filter(|_| f.online) else {
                continue;
            };
            let Some(conn) = self.endpoint.connection_mut(id) else {
                continue;
            };
            if conn.status() != ConnectionStatus::Established {
                continue;
            }
            queued += f.files.streams.pump(now, conn);
            f.files.drain_into(number, &mut events);
        }
        for e in events {
            self.push_event(e);
        }
        queued
    }
}

/// A seed drawn from `rng`.
fn rng_seed(rng: &mut dyn CryptoRng) -> [u8; 32] {
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    seed
}

#[cfg(test)]
mod tests;
