//! The node: everything one Tox instance runs on its one UDP port, sans-IO.
//!
//! c-toxcore puts the DHT, LAN discovery, the onion, net_crypto sessions and friend
//! connections on one socket; so does this type. A datagram enters
//! [`Node::handle_datagram`] with the time it arrived and is routed by its first byte
//! (`route::layer_of`) to the DHT, the net_crypto endpoint or the onion; what the layers
//! produce is pulled out with [`Node::poll_transmit`], [`Node::poll_event`] and
//! [`Node::poll_timeout`]. The application calls the API (friends, messages, files) with
//! `now`. The simulator, the drivers and the C API all run this same type.
//!
//! Between the layers sits the friend list. Each friend's friend_connection
//! ([`crate::friend::FriendConnection`]) takes what the DHT and the onion learn (the
//! friend's DHT key, its addresses) and asks for sessions, ALIVE packets and kills, which
//! the node carries out on the net_crypto endpoint (`friends_ops.rs`); Messenger's
//! `ONLINE` packet on that session makes the friend online (docs/protocol.md §3.1,
//! `messenger.rs`); files ride on the same session (`files.rs`). Conferences
//! ([`crate::conference::Conferences`]) ride on friend connections too, and on hidden
//! links to conference peers that are not friends (`links.rs`, `conference_ops.rs`).

mod av_ops;
mod conference_ops;
pub(crate) mod event;
mod file_ops;
pub(crate) mod files;
mod friend_ops;
pub(crate) mod friends;
mod links;
pub(crate) mod messenger;
mod messenger_ops;
mod onion_ops;
pub(crate) mod presence;
mod presence_ops;
pub(crate) mod profile;
mod proxy;
mod relay_server;
mod relays;
pub(crate) mod route;

use std::collections::VecDeque;
use std::net::SocketAddr;

use rand::SeedableRng;
use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PublicKey};
use rustox_net_crypto::{
    ConnectError, Destination, Endpoint, EndpointConfig, SendError, Timestamp, TransportConfig,
};

use crate::conference::Conferences;
use crate::dht::announce::{AnnounceConfig, AnnounceOutput, AnnounceServer};
use crate::dht::wire::packed_node::canonical;
use crate::dht::wire::packed_node::PackedNode;
use crate::dht::{DhtConfig, DhtNode};
use crate::friend::{NoSpam, RequestFilter, ToxId};
use crate::onion::client::{OnionClient, OnionClientConfig, OnionClientStats};
use crate::onion::server::{OnionConfig, OnionServer, OnionStats};
use crate::relay::client::{RelayClientConfig, RelayClients};
pub use av_ops::{AvAccessError, GroupAudioError, CALL_LOSSY_IDS};
pub use event::{FileOffer, FileVerification, NodeEvent};
pub use files::{DigestSlot, PreparedFile};
use friends::FriendList;
pub use friends::{FriendListError, FriendNumber, MAX_FRIENDS};
pub use messenger::MessageKind;
use messenger::MAX_MESSAGE_LEN;
pub use presence::UserStatus;
pub use relay_server::MAX_RELAY_ONION_RESPONSES;
use route::Layer;

/// Most events waiting to be polled; beyond it new ones are dropped and counted. An
/// application that stops polling must not make the node grow without bound.
pub const MAX_EVENTS: usize = 4096;

/// A UDP datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Where to.
    pub destination: SocketAddr,
    /// The bytes.
    pub payload: Vec<u8>,
}

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
    /// The nospam of our Tox ID (§6.5). `None`: a random one.
    pub nospam: Option<NoSpam>,
    /// Accept sessions from anyone who dials us, adding them as friends (`rustox recv
    /// --accept-from any`). Off, only friends get a session.
    pub accept_strangers: bool,
    /// The onion server every DHT node runs for others (docs/protocol.md §6.2–§6.3): relaying,
    /// announce storage, data forwarding. c-toxcore clients expect it of any DHT node.
    pub onion_server: OnionConfig,
    /// Unix seconds at the `now` given to [`Node::new`]: the wall clock the drivers read,
    /// which the node itself never does. DHT-PK packets carry it (plus the seconds since) as
    /// `no_replay`, which must grow across our restarts for friends to accept them
    /// (docs/protocol.md §6.4; c-toxcore's `mono_time_get` is Unix-based too). 0 counts from 1.
    pub unix_time: u64,
    /// No UDP at all (c-toxcore's `udp_enabled = false`, for networks that block it):
    /// sessions and the onion go through TCP relays only, and nothing is sent over UDP.
    pub udp_disabled: bool,
    /// A proxy every TCP relay connection goes through (tox.h's `proxy_type`, `proxy_host`,
    /// `proxy_port`). A proxy carries TCP only, so with one the node sends no UDP whatever
    /// `udp_disabled` says, as c-toxcore's `new_messenger` (Messenger.c) turns UDP off
    /// when a proxy is set: nothing leaves but through the proxy.
    pub proxy: Option<crate::proxy::ProxyConfig>,
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
    /// The friend request cannot be built (empty or too long a message).
    #[error(transparent)]
    Request(#[from] crate::friend::RequestError),
    /// The endpoint refused to dial.
    #[error("cannot connect: {0}")]
    Connect(#[from] ConnectError),
    /// The session refused the payload.
    #[error("cannot send: {0}")]
    Send(#[from] SendError),
    /// The message does not fit one packet.
    #[error("message longer than {MAX_MESSAGE_LEN} bytes")]
    MessageTooLong,
    /// A name, status message or packet longer than c-toxcore allows.
    #[error("longer than {0} bytes")]
    TooLong(usize),
    /// A custom packet whose first byte is outside its range.
    #[error("custom packet id outside its range (lossless 160-191 or 69, lossy 200-254)")]
    BadPacketId,
    /// The message is empty.
    #[error("empty message")]
    EmptyMessage,
    /// The file layer refused.
    #[error(transparent)]
    Stream(#[from] rustox_file_transfer::stream::StreamError),
    /// The file control is not allowed now (c-toxcore's `file_control` rules).
    #[error(transparent)]
    FileControl(#[from] rustox_file_transfer::FileControlError),
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
    /// Session datagrams for a relay that reaches no relay (see `relays.rs`).
    pub relay_unsent: u64,
    /// UDP datagrams not sent, or not read, because UDP is disabled
    /// ([`NodeOptions::udp_disabled`]).
    pub udp_disabled_dropped: u64,
}

/// Which timers of a node are due at one instant ([`Node::due_timers`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DueTimers {
    /// The DHT's rounds, pings and LAN discovery.
    pub dht: bool,
    /// The onion server's key rotation and expiry.
    pub onion_server: bool,
    /// The onion client's announces, searches and DHT-PK resends.
    pub onion_client: bool,
    /// The net_crypto sessions' resends, pings, requests and pacing.
    pub sessions: bool,
    /// The friends' connection attempts, requests and DHT-route DHT-PK packets.
    pub friends: bool,
    /// The conferences' pings, timeouts and reconnections.
    pub conferences: bool,
    /// The calls' timers (audio playout, loss reports, rates) and path refreshes.
    pub calls: bool,
}

/// Counters of the node's own routing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Datagrams handed to the DHT.
    pub dht_in: u64,
    /// Datagrams handed to the net_crypto endpoint.
    pub net_crypto_in: u64,
    /// Onion datagrams served for others (relayed layers, announces, data to forward).
    pub onion_server_in: u64,
    /// Onion responses for us (announce and data responses).
    pub onion_client_in: u64,
    /// Forwarding and DHT announcement datagrams served for others (0x90–0x93, 0x95, 0x97).
    pub announce_in: u64,
    /// Datagrams whose first byte names no layer.
    pub unknown_kind: u64,
    /// Friend requests that came as onion data (before the filter).
    pub onion_requests: u64,
    /// Friends' DHT keys learned (onion or DHT route).
    pub dht_pks_received: u64,
    /// Our DHT-PK packets sent by the DHT route.
    pub dht_pks_routed: u64,
    /// DHT-route DHT-PK packets refused (malformed, not a friend, undecryptable, replayed).
    pub bad_dht_pks: u64,
    /// Datagrams the DHT refused (rate limit, malformed, undecryptable).
    pub dht_refused: u64,
    /// Datagrams the endpoint refused (its own counters say why).
    pub net_crypto_refused: u64,
    /// Lossless packets from a friend that is not online yet, or with an id this node does
    /// not handle.
    pub packets_ignored: u64,
    /// friend_connection packets that did not parse.
    pub bad_friend_packets: u64,
    /// Events dropped because the application did not poll them.
    pub events_dropped: u64,
    /// TCP relay connections whose handshake completed.
    pub relays_up: u64,
    /// TCP relay connections that ended after their handshake.
    pub relays_down: u64,
    /// Session datagrams that came through a relay.
    pub relayed_in: u64,
    /// Session datagrams handed to the relays.
    pub relayed_out: u64,
    /// Conference links not opened: the hidden links' table was full.
    pub links_refused: u64,
    /// Conference packets dropped because their link was not up.
    pub conference_unsent: u64,
    /// Times the friends' file layers were topped up ([`Node::poll_transmit`] and every
    /// input): what an idle or window-blocked sender pays per pass of its driver.
    pub file_pumps: u64,
}

/// One Tox instance. See the module docs.
pub struct Node {
    keys: KeyPair,
    dht: DhtNode,
    onion_server: OnionServer,
    /// Forwarding and the DHT announcement store, which every 0.2.18 node runs.
    announce_server: AnnounceServer,
    /// Datagrams the onion and announce servers produced, waiting for `poll_transmit`; at
    /// most one per datagram received, so bounded by what one poll round lets in.
    onion_out: VecDeque<crate::dht::gate::Transmit>,
    /// Announcing us, searching for friends, DHT-PK and friend requests over the onion.
    onion_client: OnionClient,
    /// The onion client's connection status as last reported (c-toxcore's self connection).
    onion_connected: bool,
    /// When the onion client is next given the DHT's nodes (`onion_ops.rs`).
    next_onion_feed: Timestamp,
    /// The DHT's count of accepted answers at the last feed.
    onion_fed_answers: u64,
    endpoint: Endpoint,
    friends: FriendList,
    requests: RequestFilter,
    accept_strangers: bool,
    rng: Box<dyn CryptoRng + Send>,
    events: VecDeque<NodeEvent>,
    io: IoCounters,
    stats: NodeStats,
    self_connected: bool,
    /// Our name, status message and status (`presence.rs`).
    presence: presence::SelfPresence,
    /// Some friend has a read receipt pending (`messenger.rs`).
    receipts_pending: bool,
    /// Unix seconds at `Timestamp::ZERO` (from [`NodeOptions::unix_time`]).
    unix_origin: u64,
    /// Profile sections kept to be written back (`profile.rs`).
    kept: profile::KeptSections,
    /// TCP relay connections and the routes to friends through them (`relays.rs`).
    relays: RelayClients,
    /// The relay each recent out-of-band sender came through (`relays.rs`).
    oob_returns: relays::OobReturns,
    /// Rotation of the relays SHARE_RELAYS and DHT-PK packets advertise.
    relay_rotation: usize,
    /// [`NodeOptions::udp_disabled`], or a proxy is set.
    udp_disabled: bool,
    /// [`NodeOptions::proxy`] and how it has failed (`proxy.rs`).
    proxy: proxy::ProxyState,
    /// Onion responses for the clients of this instance's relay server, when one runs
    /// (`relay_server.rs`).
    relay_onion: Option<relay_server::RelayOnion>,
    /// The conferences (`conference_ops.rs`), and the links they hold (`links.rs`).
    conferences: Conferences,
    /// The conferences' actions are being carried out: a status change they cause is
    /// fed back in that same loop rather than in a nested one.
    draining_conferences: bool,
    /// Calls and group audio (`av_ops.rs`).
    av: av_ops::AvState,
    /// A session datagram went out since the file layers were last topped up: sending
    /// may have opened budget for more file data ([`Node::poll_transmit_into`]).
    sent_since_pump: bool,
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
        let nospam = options
            .nospam
            .unwrap_or_else(|| NoSpam::random(rng.as_mut()));
        let dht = DhtNode::new(dht_keys.clone(), options.dht, now, rng.as_mut());
        let onion_server = OnionServer::new(&dht_keys, options.onion_server, now, rng.as_mut());
        let announce_server =
            AnnounceServer::new(&dht_keys, AnnounceConfig::default(), now, rng.as_mut());
        let unix_origin = options.unix_time.saturating_sub(now.as_secs());
        let onion_client = OnionClient::new(
            keys.clone(),
            dht_keys.public,
            OnionClientConfig {
                // `no_replay` counts Unix seconds, and 0 is never taken: count from 1 when no
                // wall clock was given.
                unix_time_at_origin: options.unix_time.saturating_sub(now.as_secs()).max(1),
                // Every friend connection is an onion friend: the friends' and the hidden
                // links' (`new_friend_connection`'s `onion_addfriend`).
                max_friends: MAX_FRIENDS + friends::MAX_HIDDEN_LINKS,
            },
            now,
            rng.as_mut(),
        );
        // The endpoint draws from its own generator, seeded from ours: a CSPRNG seeded from
        // the OS in production, reproducible from the test's seed in simulation.
        let endpoint_rng = rand_chacha::ChaCha20Rng::from_seed(rng_seed(rng.as_mut()));
        let relays = RelayClients::new(dht_keys.clone(), RelayClientConfig::default());
        let mut conferences = Conferences::new(keys.public, dht_keys.public, &[]);
        conferences.reseed(rng.as_mut());
        if options.unix_time > 0 {
            // Peers' last-active times in Unix seconds, as c-toxcore saves them.
            conferences.set_unix_time(now, options.unix_time);
        }
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
            onion_server,
            announce_server,
            onion_out: VecDeque::new(),
            onion_client,
            onion_connected: false,
            next_onion_feed: now,
            onion_fed_answers: 0,
            endpoint,
            friends: FriendList::default(),
            requests: RequestFilter::new(nospam),
            accept_strangers: options.accept_strangers,
            rng,
            events: VecDeque::new(),
            io: IoCounters::default(),
            stats: NodeStats::default(),
            self_connected: false,
            presence: presence::SelfPresence::default(),
            receipts_pending: false,
            unix_origin,
            kept: profile::KeptSections::default(),
            relays,
            oob_returns: relays::OobReturns::default(),
            relay_rotation: 0,
            udp_disabled: options.udp_disabled || options.proxy.is_some(),
            proxy: proxy::ProxyState::new(options.proxy),
            relay_onion: None,
            conferences,
            draining_conferences: false,
            av: Default::default(),
            sent_since_pump: false,
        }
    }

    // ----- identity and state ----------------------------------------------------------

    /// Our long-term secret key (`tox_self_get_secret_key`: the profile's identity).
    pub fn secret_key(&self) -> &rustox_net_crypto::crypto::SecretKey {
        &self.keys.secret
    }

    /// Our long-term public key.
    pub fn public_key(&self) -> PublicKey {
        self.keys.public
    }

    /// Our Tox ID: the key, the nospam, the checksum (docs/protocol.md §6.5).
    pub fn tox_id(&self) -> ToxId {
        ToxId::new(self.keys.public, self.requests.nospam())
    }

    /// Changes the nospam (`tox_self_set_nospam`): requests carrying the old one are
    /// dropped from now on.
    pub fn set_nospam(&mut self, nospam: NoSpam) {
        self.requests.set_nospam(nospam);
    }

    /// Our DHT public key (for this run unless fixed in [`NodeOptions::dht_keys`]).
    pub fn dht_public_key(&self) -> PublicKey {
        self.dht.public_key()
    }

    /// The DHT.
    pub fn dht(&self) -> &DhtNode {
        &self.dht
    }

    /// The onion server's counters: what it relayed, stored and dropped, by reason.
    pub fn onion_server_stats(&self) -> OnionStats {
        self.onion_server.stats()
    }

    /// Counters of forwarding and the DHT announcement store.
    pub fn announce_server_stats(&self) -> crate::dht::announce::AnnounceStats {
        self.announce_server.stats()
    }

    /// The onion client's counters and table sizes.
    pub fn onion_client_stats(&self) -> OnionClientStats {
        self.onion_client.stats()
    }

    /// Whether we are announced on the onion (c-toxcore's self connection status): friends
    /// can find us.
    pub fn is_onion_connected(&self) -> bool {
        self.onion_connected
    }

    /// The net_crypto endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The node's routing counters.
    pub fn stats(&self) -> NodeStats {
        self.stats
    }

    /// How many friend requests were passed on or refused, by reason.
    pub fn request_stats(&self) -> crate::friend::FilterStats {
        self.requests.stats()
    }

    /// What the driver's socket refused or dropped so far.
    pub fn io_counters(&self) -> &IoCounters {
        &self.io
    }

    /// Whether UDP is off ([`NodeOptions::udp_disabled`]).
    pub fn is_udp_disabled(&self) -> bool {
        self.udp_disabled
    }

    /// Whether the node holds at least one DHT node that answered it.
    pub fn is_connected(&self) -> bool {
        self.self_connected
    }

    /// Whether a DHT node outside the LAN answers us: what c-toxcore's
    /// `onion_connection_status` calls a UDP connection (`dht_non_lan_connected`); a node
    /// announced on the onion with only LAN nodes or TCP relays about is connected over TCP.
    pub fn is_udp_connected(&self, now: Timestamp) -> bool {
        !self.udp_disabled && self.dht.has_good_non_lan_node(now)
    }

    // ----- network ---------------------------------------------------------------------

    /// Starts from a known DHT node: asks it for the nodes closest to us (`dht_bootstrap`,
    /// docs/protocol.md §5.8).
    pub fn bootstrap(&mut self, now: Timestamp, addr: SocketAddr, dht_pk: PublicKey) {
        self.dht
            .bootstrap(now, canonical(addr), dht_pk, self.rng.as_mut());
        // Also a first onion path node (`onion_add_bs_path_node`).
        self.onion_client
            .add_bootstrap_node(PackedNode::udp(canonical(addr), dht_pk));
        self.after_input(now);
    }

    /// The interfaces' broadcast addresses for LAN discovery, which a driver reads from the
    /// operating system (`driver::socket::interface_broadcasts`).
    pub fn set_lan_broadcasts(&mut self, addrs: Vec<std::net::IpAddr>) {
        self.dht.set_lan_broadcasts(addrs);
    }

    // ----- the sans-IO loop ------------------------------------------------------------

    /// A received datagram. One from UDP port 0 is dropped before anything reads it: no
    /// answer can reach that port. Anything a layer refuses is counted there; nothing a
    /// datagram says can stop the node.
    pub fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, datagram: &[u8]) {
        // A dual-stack socket reports IPv4 peers IPv4-mapped; every layer keys peers by
        // the plain form, as the wire carries them (docs/protocol.md §5.1).
        let from = canonical(from);
        if from.port() == 0 {
            self.io.from_port_zero += 1;
            return;
        }
        if self.udp_disabled {
            self.io.udp_disabled_dropped += 1;
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
                self.update_dht_connected(now);
                // Only the DHT's answers change what the onion client is fed: not on the
                // sessions' data path.
                self.feed_onion(now);
            }
            Layer::NetCrypto => {
                self.stats.net_crypto_in += 1;
                if self.endpoint.handle_datagram(now, from, datagram).is_err() {
                    self.stats.net_crypto_refused += 1;
                }
            }
            Layer::OnionServer if self.relay_onion.is_some() => {
                self.stats.onion_server_in += 1;
                self.onion_datagram_with_relay(now, from, datagram);
            }
            Layer::OnionServer => {
                self.stats.onion_server_in += 1;
                // Drops are counted by reason inside the server.
                if let Ok(t) = self.onion_server.handle_datagram(
                    now,
                    from,
                    datagram,
                    &self.dht,
                    self.rng.as_mut(),
                ) {
                    self.onion_out.push_back(t);
                }
            }
            Layer::Announce => {
                self.stats.announce_in += 1;
                // Drops are counted inside the server; a reply for a client of a relay is
                // kept only when this instance runs one (`relay_server.rs`).
                match self.announce_server.handle_datagram(
                    now,
                    from,
                    datagram,
                    &self.dht,
                    self.rng.as_mut(),
                ) {
                    Ok(AnnounceOutput::Udp(t)) => self.onion_out.push_back(t),
                    Ok(AnnounceOutput::Tcp { con, id, data }) => {
                        self.queue_relay_forward_reply(con, id, data)
                    }
                    Err(_) => {}
                }
            }
            Layer::OnionClient => {
                self.stats.onion_client_in += 1;
                // Drops are counted by reason inside the client.
                let _ = self
                    .onion_client
                    .handle_datagram(now, from, datagram, self.rng.as_mut());
            }
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
        if self.onion_server.poll_timeout() <= now {
            self.onion_server.handle_timeout(now, self.rng.as_mut());
        }
        // Fed first, so that path nodes it gains are used in this pass, not in another
        // one at the same instant.
        self.feed_onion(now);
        if self.onion_client.poll_timeout() <= now {
            self.onion_client.handle_timeout(now, self.rng.as_mut());
        }
        if self.relays.poll_timeout().is_some_and(|t| t <= now) {
            self.relays.handle_timeout(now, self.rng.as_mut());
        }
        self.endpoint.handle_timeout(now);
        self.update_dht_connected(now);
        self.friend_timers(now);
        self.update_direct_peers(now);
        if self.conferences.poll_timeout().is_some_and(|t| t <= now) {
            self.conferences.handle_timeout(now);
        }
        self.av_timers(now);
        self.after_input(now);
    }

    /// The next UDP datagram to send: the DHT's few control datagrams first, then the
    /// sessions'. When none is left and a session datagram went out since the file layers
    /// were last topped up, they get one more chance to fill budget that sending just
    /// opened. Session datagrams bound for a TCP relay go to the relay client on the way.
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Transmit> {
        let mut payload = Vec::new();
        let destination = self.poll_transmit_into(now, &mut payload)?;
        Some(Transmit {
            destination,
            payload,
        })
    }

    /// [`Node::poll_transmit`] appending the datagram to `out` (a send batch) and
    /// returning its destination.
    pub fn poll_transmit_into(&mut self, now: Timestamp, out: &mut Vec<u8>) -> Option<SocketAddr> {
        if let Some(t) = self.poll_control(now) {
            out.extend_from_slice(&t.payload);
            return Some(t.dst);
        }
        if let Some(to) = self.poll_session_into(now, out) {
            return Some(to);
        }
        // Nothing sent since the last top-up: the budget it saw is unchanged. Everything
        // else that opens budget or unblocks a file (an acknowledgement, a timer, a control,
        // a source with data again, a new file) is an input, and every input ends with a
        // top-up (`after_input`, `file_source_ready`, `send_file_kind`). Topping up on every
        // empty poll instead cost a window-blocked C client most of its CPU: its driver polls
        // several times a step, a thousand steps a second.
        if !self.sent_since_pump || self.pump_files(now) == 0 {
            return None;
        }
        self.poll_session_into(now, out)
    }

    /// The sessions' next UDP datagram; those for a relay are handed to the relay client.
    fn poll_session_into(&mut self, now: Timestamp, out: &mut Vec<u8>) -> Option<SocketAddr> {
        loop {
            let start = out.len();
            let destination = self.endpoint.poll_transmit_into(now, out)?;
            self.sent_since_pump = true;
            match destination {
                Destination::Udp(addr) => return Some(addr),
                Destination::Relay(peer_dht_pk) => {
                    let datagram = out.split_off(start);
                    self.send_relayed(now, peer_dht_pk, &datagram);
                }
            }
        }
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<NodeEvent> {
        self.events.pop_front()
    }

    /// When [`Node::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        [
            Some(self.dht.poll_timeout()),
            Some(self.onion_server.poll_timeout()),
            Some(self.onion_client.poll_timeout()),
            // The onion feed has no timer of its own: it runs with the DHT's rounds and
            // datagrams, which are what change the nodes it hands over.
            self.endpoint.poll_timeout(),
            self.friends_poll_timeout(),
            self.relays.poll_timeout(),
            self.conferences.poll_timeout(),
            self.av_poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Which of the node's timers are due at `now`: what would wake a driver then. For
    /// measuring an idle node's wake-ups by cause (`auto_tests/src/idle.rs`).
    pub fn due_timers(&self, now: Timestamp) -> DueTimers {
        let due = |t: Option<Timestamp>| t.is_some_and(|t| t <= now);
        DueTimers {
            dht: due(Some(self.dht.poll_timeout())),
            onion_server: due(Some(self.onion_server.poll_timeout())),
            onion_client: due(Some(self.onion_client.poll_timeout())),
            sessions: due(self.endpoint.poll_timeout()),
            friends: due(self.friends_poll_timeout()),
            conferences: due(self.conferences.poll_timeout()),
            calls: due(self.av_poll_timeout()),
        }
    }

    // ----- internals -------------------------------------------------------------------

    /// The next control datagram: the DHT's, then the onion's. They are few and small, and
    /// go before the sessions' data so that a busy transfer does not delay them.
    fn poll_control(&mut self, now: Timestamp) -> Option<crate::dht::gate::Transmit> {
        if self.udp_disabled {
            // No socket to send them on: the DHT's and the onion's UDP datagrams go nowhere
            // (the onion's paths start at a TCP relay, relays.rs).
            while self.dht.poll_transmit(now, self.rng.as_mut()).is_some()
                || self.onion_out.pop_front().is_some()
                || self.onion_client.poll_transmit().is_some()
            {
                self.io.udp_disabled_dropped += 1;
            }
            return None;
        }
        if let Some(t) = self.dht.poll_transmit(now, self.rng.as_mut()) {
            return Some(t);
        }
        if let Some(t) = self.onion_out.pop_front() {
            return Some(t);
        }
        self.onion_client.poll_transmit()
    }

    fn push_event(&mut self, event: NodeEvent) {
        if self.events.len() >= MAX_EVENTS {
            self.stats.events_dropped += 1;
            return;
        }
        self.events.push_back(event);
    }

    /// After every input: move the layers' events along, then top up the files.
    fn after_input(&mut self, now: Timestamp) {
        self.drain_relays(now);
        self.drain_onion(now);
        self.send_onion_tcp(now);
        self.drain_dht(now);
        self.drain_endpoint(now);
        self.drain_conferences(now);
        self.check_receipts();
        self.pump_files(now);
    }

    /// Re-reads whether the DHT holds a node that answered us: after DHT datagrams and
    /// timers only, not on the data path.
    fn update_dht_connected(&mut self, now: Timestamp) {
        self.self_connected = self.dht.has_good_node(now);
    }
}

/// The randomness a node runs on outside tests and simulations: a ChaCha12 CSPRNG
/// (`rand::rngs::StdRng`) seeded once from the operating system. Drawing every nonce and
/// ping id from `OsRng` cost a `getrandom` system call each, about three per datagram sent.
pub fn system_rng() -> Box<dyn CryptoRng + Send> {
    use rand::SeedableRng;
    Box::new(rand::rngs::StdRng::from_entropy())
}

/// A seed drawn from `rng`.
fn rng_seed(rng: &mut dyn CryptoRng) -> [u8; 32] {
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    seed
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_av;
#[cfg(test)]
mod tests_conference;
#[cfg(test)]
mod tests_pump;
#[cfg(test)]
mod tests_relay;
