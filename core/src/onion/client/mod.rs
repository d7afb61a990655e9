//! The onion client (docs/protocol.md §6.3–§6.7; c-toxcore 0.2.18 `onion_client.c`), sans-IO:
//! announce ourselves to the nodes closest to our real key, search for each friend at the
//! nodes closest to theirs, and exchange onion data — DHT public keys (§6.4) and friend
//! requests (§6.5) — with friends found that way.
//!
//! Data flows in through [`OnionClient::handle_datagram`] (0x84 announce responses, 0x86
//! data), [`OnionClient::handle_timeout`] and the API calls; out through
//! [`OnionClient::poll_transmit`] (0x80 requests to the first relay of a path) and
//! [`OnionClient::poll_event`]. [`OnionClient::poll_timeout`] is the exact next deadline.
//!
//! One concern per file: `paths` (path nodes and the two path sets), `path_health`
//! (which path nodes paths timed out through), `sendback` (the
//! table behind the 8-byte sendbacks), `nodes` (a list of announce nodes and the per-node
//! ping ceiling), `announce` (our own announce list), `search` (friend searches), `data`
//! (onion data: DHT-PK and friend requests).
//!
//! Differences from 0.2.18, all on timing or local choices, none on the wire:
//! * No 1 s tick: every response is acted on at once, and timers fire at their exact time.
//!   Announcing starts at once (0.2.18 waits `ONION_CONNECTION_SECONDS` = 3 s); a ping id is sent back as soon as it
//!   arrives (0.2.18 waits one to two ticks); a node that answers is next asked one
//!   interval after the answered request (0.2.18: after its first pass is skipped).
//! * The ceiling stays: one list never sends a node two requests within 3 s, except the
//!   one follow-up carrying a ping id just received (`nodes::PingGuard`).
//! * Hop A of a path gets a fresh key pair, like B and C (0.2.18 uses our DHT key there):
//!   the client is not given the DHT secret key, and A learns less about us. The bytes
//!   have the same layout and A cannot tell.
//! * A path that times out counts against its relays (`path_health`): new paths are drawn
//!   from the nodes with the fewest recent failures and a node that failed twice leaves
//!   the path nodes, where 0.2.18 keeps drawing a dead node until 32 newer ones push it out.
//! * Paths use three distinct relays whenever three are known (0.2.18 may draw one twice
//!   even then).
//! * Friend searches start once one node stores our announce, not after 3 s connected.
//! * A response's sendback entry is consumed only after the response decrypts.

mod announce;
mod data;
pub use data::DATA_LIMITS;
pub(crate) mod nodes;
pub(crate) mod path_health;
pub(crate) mod paths;
mod response;
mod search;
pub(crate) mod sendback;

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::{
    CryptoRng, KeyPair, LowOrderPublicKey, Nonce, PrecomputedKey, PublicKey, PUBLIC_KEY_SIZE,
};
use rustox_net_crypto::Timestamp;

use crate::dht::gate::Transmit;
use crate::dht::key_cache::KeyBudget;
use crate::dht::source_guard::SourceGuard;
use crate::dht::wire::packed_node::PackedNode;
use crate::friend::dht_pk::{DhtPkAnnounce, MAX_DHTPK_NODES};
use crate::onion::wire::announce::{AnnounceRequest, PingId};
use crate::onion::wire::kind;

use paths::{PathNodes, PathSet};
use search::Friend;
use sendback::{ListId, SendbackEntry, SendbackTable};

/// `MAX_ONION_CLIENTS_ANNOUNCE` (`onion_client.h`): nodes we announce ourselves to.
pub const MAX_ONION_CLIENTS_ANNOUNCE: usize = 12;
/// `MAX_ONION_CLIENTS` (`onion_client.h`): nodes kept per searched friend.
pub const MAX_ONION_CLIENTS: usize = 8;
/// `ONION_OFFLINE_TIMEOUT` = `ONION_NODE_PING_INTERVAL * (ONION_NODE_MAX_PINGS + 2)` = 75 s
/// (`onion_client.h`): without any announce response for this long we are not connected.
pub const ONION_OFFLINE_TIMEOUT: Duration = Duration::from_secs(75);
/// `ONION_CONNECTED_TIMEOUT` (`onion_client.c`): reconnecting after this long away resets
/// every friend's search run count (`reset_friend_run_counts`).
pub const ONION_CONNECTED_TIMEOUT: Duration = Duration::from_secs(10);
/// `ANNOUNCE_POPULATE_TIMEOUT` (`onion_client.c`): a list that is not full asks random
/// path nodes again after 10 minutes even if more than half full.
pub const ANNOUNCE_POPULATE_TIMEOUT: Duration = Duration::from_secs(600);
/// How often a list at most half full asks random path nodes: 0.2.18 does it on every 1 s
/// tick (`do_announce`, `do_friend`); the 3 s per-node ceiling still applies to each node.
pub const POPULATE_INTERVAL: Duration = Duration::from_secs(1);
/// Our friend limit: the friend list's (`MAX_FRIENDS`-like bound of the Node).
pub const MAX_FRIENDS: usize = 1024;
/// Datagrams waiting for [`OnionClient::poll_transmit`]; beyond, the oldest is dropped.
pub const MAX_QUEUED_TRANSMITS: usize = 4096;
/// Events waiting for [`OnionClient::poll_event`]; beyond, the oldest is dropped.
pub const MAX_QUEUED_EVENTS: usize = 1024;

/// Settings. `Default` is 0.2.18's constants with our speed-ups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnionClientConfig {
    /// Friends the client searches for at most.
    pub max_friends: usize,
    /// Unix time in seconds at `Timestamp::ZERO`. DHT-PK packets carry
    /// `unix_time_at_origin + now` as `no_replay` (c-toxcore `mono_time_get`, Unix
    /// seconds), which must grow across restarts (`friend::dht_pk` module docs). The Node
    /// sets it from the wall clock; 0 makes `no_replay` the seconds since the origin.
    pub unix_time_at_origin: u64,
}

impl Default for OnionClientConfig {
    fn default() -> Self {
        OnionClientConfig {
            max_friends: MAX_FRIENDS,
            unix_time_at_origin: 0,
        }
    }
}

/// What the client tells the Node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnionEvent {
    /// The onion connection status changed ([`OnionClient::is_connected`]).
    Connected(bool),
    /// A friend's DHT-PK announcement came through the onion (0x9c, §6.4) and passed the
    /// friend's `no_replay` check.
    FriendDhtPk {
        /// The friend's real key.
        friend: PublicKey,
        /// Its current DHT key.
        dht_pk: PublicKey,
        /// Up to 4 nodes: TCP relays it uses, then DHT nodes close to it.
        nodes: Vec<PackedNode>,
    },
    /// A node answered that the friend is announced there: onion data to the friend can
    /// go out now (a friend request waiting for a route, §6.5).
    FriendReachable {
        /// The friend's real key.
        friend: PublicKey,
    },
    /// Onion data id 32 (§6.5) from anyone: the bytes after the id (nospam + message).
    /// The Node filters (nospam, repeats, existing friends).
    FriendRequest {
        /// The sender's real key (authenticated by the inner box).
        from: PublicKey,
        /// `[nospam 4][message]`.
        payload: Vec<u8>,
    },
}

/// Why an API call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OnionClientError {
    /// [`OnionClientConfig::max_friends`] friends already.
    #[error("friend list full")]
    TooManyFriends,
    /// Not a friend of the onion client.
    #[error("unknown friend")]
    UnknownFriend,
    /// Onion data of 0 bytes or more than 1021 (`ONION_CLIENT_MAX_DATA_SIZE`).
    #[error("onion data of {0} bytes")]
    DataSize(usize),
    /// Too few of the friend's nodes know its data key (`send_onion_data`: at least
    /// `(nodes - 1) / 4 + 1`, and at least one).
    #[error("friend not found at enough onion nodes")]
    NotFound,
    /// The friend's key has low order: libsodium's `crypto_box_beforenm` refuses it, so
    /// nothing can be sealed to it (and no client can hold its secret key).
    #[error(transparent)]
    LowOrderPublicKey(#[from] LowOrderPublicKey),
}

/// Why an incoming datagram was dropped. Field-less so it can be counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, thiserror::Error)]
pub enum OnionClientDrop {
    /// Not 0x84 or 0x86.
    #[error("not an onion client packet")]
    UnknownKind,
    /// A length outside the kind's bounds.
    #[error("bad length")]
    BadLength,
    /// An announce response whose sendback is unknown, already used, or older than 10 s.
    #[error("unknown or expired sendback")]
    UnknownSendback,
    /// The response, or a layer of the data, did not open.
    #[error("decryption failed")]
    Decrypt,
    /// `is_stored` not allowed for the list (2 in a search answer, > 2 anywhere), or a
    /// node list that does not decode.
    #[error("bad announce response contents")]
    BadContents,
    /// A search answer for a friend removed since the request.
    #[error("friend removed")]
    UnknownFriend,
    /// A DHT-PK announcement from someone who is not our friend.
    #[error("DHT-PK from a non-friend")]
    NotFriend,
    /// A DHT-PK announcement whose `no_replay` is not newer than the last.
    #[error("replayed DHT-PK")]
    Replayed,
    /// A DHT-PK announcement that does not decode.
    #[error("malformed DHT-PK")]
    BadDhtPk,
    /// Onion data with an id we do not handle (0.2.18 registers 32 and 156 only).
    #[error("unhandled onion data id")]
    UnknownDataKind,
    /// Onion data whose temporary or sender key has low order: libsodium's
    /// `crypto_box_beforenm` refuses it.
    #[error("low-order public key")]
    LowOrderKey,
    /// Onion data from a source over its rate ([`DATA_LIMITS`]).
    #[error("source over its rate limit")]
    RateLimited,
    /// Onion data whose keys are not cached, while the key agreements of all sources
    /// together are spent ([`DATA_LIMITS`]).
    #[error("key-agreement budget spent")]
    KeyBudget,
}

impl From<LowOrderPublicKey> for OnionClientDrop {
    fn from(_: LowOrderPublicKey) -> Self {
        OnionClientDrop::LowOrderKey
    }
}

impl OnionClientDrop {
    /// Every reason, in counter order.
    pub const ALL: [OnionClientDrop; 13] = [
        OnionClientDrop::UnknownKind,
        OnionClientDrop::BadLength,
        OnionClientDrop::UnknownSendback,
        OnionClientDrop::Decrypt,
        OnionClientDrop::BadContents,
        OnionClientDrop::UnknownFriend,
        OnionClientDrop::NotFriend,
        OnionClientDrop::Replayed,
        OnionClientDrop::BadDhtPk,
        OnionClientDrop::UnknownDataKind,
        OnionClientDrop::LowOrderKey,
        OnionClientDrop::RateLimited,
        OnionClientDrop::KeyBudget,
    ];

    /// A short name for statistics lines.
    pub fn name(self) -> &'static str {
        match self {
            OnionClientDrop::UnknownKind => "unknown_kind",
            OnionClientDrop::BadLength => "bad_length",
            OnionClientDrop::UnknownSendback => "unknown_sendback",
            OnionClientDrop::Decrypt => "decrypt",
            OnionClientDrop::BadContents => "bad_contents",
            OnionClientDrop::UnknownFriend => "unknown_friend",
            OnionClientDrop::NotFriend => "not_friend",
            OnionClientDrop::Replayed => "replayed",
            OnionClientDrop::BadDhtPk => "bad_dht_pk",
            OnionClientDrop::UnknownDataKind => "unknown_data_kind",
            OnionClientDrop::LowOrderKey => "low_order_key",
            OnionClientDrop::RateLimited => "rate_limited",
            OnionClientDrop::KeyBudget => "key_budget",
        }
    }
}

/// Counters and table sizes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OnionClientStats {
    /// Self-announce requests sent (including ping-id follow-ups).
    pub announce_requests: u64,
    /// Of those, follow-ups sent at once with a ping id just received.
    pub follow_ups: u64,
    /// Friend search requests sent.
    pub search_requests: u64,
    /// Announce responses accepted (self and search).
    pub announce_responses: u64,
    /// Requests not sent because no path could be built (too few path nodes, or one whose
    /// key has low order).
    pub no_path: u64,
    /// Announce or search requests not sent because the node's key has low order.
    pub low_order_keys: u64,
    /// Requests held back by the per-node 3 s ceiling.
    pub rate_limited: u64,
    /// Onion paths built (both sets).
    pub paths_created: u64,
    /// 0x85 data requests sent.
    pub data_sent: u64,
    /// DHT-PK announcements sent through the onion (each to several nodes).
    pub dht_pk_sent: u64,
    /// DHT-PK announcements accepted (onion route and [`OnionClient::accept_dht_route_pk`]).
    pub dht_pk_accepted: u64,
    /// Friend requests received.
    pub friend_requests: u64,
    /// Sendback entries pushed out by newer ones.
    pub sendbacks_evicted: u64,
    /// Transmits or events dropped because their queue was full.
    pub queue_overflows: u64,
    /// Drops, indexed like [`OnionClientDrop::ALL`].
    pub drops: [u64; OnionClientDrop::ALL.len()],
    /// Path-node candidates held (≤ 32).
    pub path_nodes: usize,
    /// Bootstrap nodes held (≤ 32).
    pub bootstrap_nodes: usize,
    /// Nodes in our announce list (≤ 12).
    pub announce_nodes: usize,
    /// Of those, nodes that store our announce.
    pub announced_on: usize,
    /// Friends.
    pub friends: usize,
    /// Nodes in all friends' lists (≤ 8 per friend).
    pub friend_nodes: usize,
    /// Outstanding sendbacks (≤ 256).
    pub sendbacks: usize,
    /// Requests remembered by the ping guards.
    pub guarded_pings: usize,
    /// Queued transmits.
    pub queued_transmits: usize,
}

impl OnionClientStats {
    /// Drops counted for `reason`.
    pub fn dropped(&self, reason: OnionClientDrop) -> u64 {
        self.drops[reason as usize]
    }

    /// All drops.
    pub fn total_dropped(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// The onion client of one Tox instance.
pub struct OnionClient {
    config: OnionClientConfig,
    real_keys: KeyPair,
    /// Our DHT key, carried in DHT-PK packets.
    dht_pk: PublicKey,
    /// The temporary data key pair (`temp_public_key`): friends encrypt onion data to its
    /// public half, which we announce; it lives as long as the client.
    data_keys: KeyPair,
    path_nodes: PathNodes,
    paths_self: PathSet,
    paths_friends: PathSet,
    sendbacks: SendbackTable,
    announce: announce::AnnounceList,
    friends: BTreeMap<PublicKey, Friend>,
    dht_pk_nodes: Vec<PackedNode>,
    /// The last accepted announce response (`last_packet_recv`).
    last_response: Option<Timestamp>,
    connected: bool,
    /// When we last stopped being connected (for `ONION_CONNECTED_TIMEOUT`).
    disconnected_at: Timestamp,
    transmits: VecDeque<Transmit>,
    /// Requests for a TCP relay as hop A, waiting for [`Self::poll_tcp_request`].
    tcp_transmits: VecDeque<Vec<u8>>,
    events: VecDeque<OnionEvent>,
    stats: OnionClientStats,
    deadline: Timestamp,
    /// Onion data (0x86) per source, before any key agreement ([`DATA_LIMITS`]).
    data_guard: SourceGuard,
    /// Key agreements for onion data, all sources together ([`DATA_LIMITS`]).
    data_budget: KeyBudget,
}

impl std::fmt::Debug for OnionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnionClient")
            .field("real_pk", &self.real_keys.public)
            .field("connected", &self.connected)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl OnionClient {
    /// A client for our real key pair; `dht_pk` is our DHT key (carried in DHT-PK packets).
    /// The data key pair is made here and kept for the client's life.
    pub fn new(
        real_keys: KeyPair,
        dht_pk: PublicKey,
        config: OnionClientConfig,
        now: Timestamp,
        rng: &mut dyn CryptoRng,
    ) -> Self {
        let announce = announce::AnnounceList::new(real_keys.public);
        OnionClient {
            config,
            real_keys,
            dht_pk,
            data_keys: KeyPair::generate(rng),
            path_nodes: PathNodes::for_own_key(dht_pk),
            paths_self: PathSet::default(),
            paths_friends: PathSet::default(),
            sendbacks: SendbackTable::default(),
            announce,
            friends: BTreeMap::new(),
            dht_pk_nodes: Vec::new(),
            last_response: None,
            connected: false,
            disconnected_at: now,
            transmits: VecDeque::new(),
            tcp_transmits: VecDeque::new(),
            events: VecDeque::new(),
            stats: OnionClientStats::default(),
            deadline: now,
            data_guard: SourceGuard::new(DATA_LIMITS, rng),
            data_budget: KeyBudget::new(DATA_LIMITS.key_agreements),
        }
    }

    /// Our temporary data public key (what we announce; friends encrypt onion data to it).
    pub fn data_pk(&self) -> PublicKey {
        self.data_keys.public
    }

    /// A bootstrap node: a path relay candidate that is never evicted (at most 32 kept).
    pub fn add_bootstrap_node(&mut self, node: PackedNode) {
        self.path_nodes.add_bootstrap(node);
        self.deadline = Timestamp::ZERO;
    }

    /// A node the DHT knows: a path relay candidate, and one the lists may ask. The newest
    /// 32 distinct keys are kept.
    pub fn add_path_node(&mut self, now: Timestamp, node: PackedNode) {
        if !self.path_nodes.add(now, node) {
            return;
        }
        self.announce.on_new_path_node();
        if self.path_nodes.len() <= paths::ONION_PATH_LENGTH {
            // The first nodes may make paths possible: let the lists run.
            self.deadline = now;
        } else {
            // The populating round may come sooner now.
            self.update_deadline(now);
        }
    }

    /// The DHT heard `pk` at `at` (its last answer): a path node that is alive, whatever
    /// paths through it did before then (`path_health.rs`). Call before
    /// [`Self::add_path_node`], which refuses a node that failed too often lately.
    pub fn path_node_heard(&mut self, now: Timestamp, pk: &PublicKey, at: Timestamp) {
        self.path_nodes.answered(now, pk, at);
    }

    /// The nodes our DHT-PK packets carry (TCP relays first, then DHT nodes; 4 kept).
    pub fn set_dht_pk_nodes(&mut self, mut nodes: Vec<PackedNode>) {
        nodes.truncate(MAX_DHTPK_NODES);
        self.dht_pk_nodes = nodes;
    }

    /// Starts searching for `real_pk` (`onion_addfriend`): a fresh temporary key pair
    /// signs its search requests. Adding a friend twice is not an error; a low-order key is
    /// refused.
    pub fn add_friend(
        &mut self,
        real_pk: PublicKey,
        rng: &mut dyn CryptoRng,
    ) -> Result<(), OnionClientError> {
        if self.friends.contains_key(&real_pk) {
            return Ok(());
        }
        if self.friends.len() >= self.config.max_friends {
            return Err(OnionClientError::TooManyFriends);
        }
        let shared = PrecomputedKey::new(&real_pk, &self.real_keys.secret)?;
        self.friends.insert(
            real_pk,
            Friend::new(real_pk, shared, KeyPair::generate(rng)),
        );
        self.deadline = Timestamp::ZERO;
        Ok(())
    }

    /// Stops searching for `real_pk` and forgets its requests in flight.
    pub fn remove_friend(&mut self, real_pk: &PublicKey) {
        if self.friends.remove(real_pk).is_some() {
            self.sendbacks.forget_list(ListId::Friend(*real_pk));
        }
    }

    /// The friend is online over net_crypto (its onion activity stops) or went offline
    /// (`onion_set_friend_online`: its search run count and `no_replay` reset).
    pub fn set_friend_online(&mut self, real_pk: &PublicKey, online: bool) {
        if let Some(f) = self.friends.get_mut(real_pk) {
            f.online = online;
            if online {
                // Nothing searches for an online friend, and the nodes would be stale (timed
                // out) by the time it goes offline: 0.2.18 keeps them, we give the room back
                // (~2.5 KiB a friend) and search afresh when it goes offline.
                f.list.clear();
                f.guard = nodes::PingGuard::default();
            } else {
                f.no_replay.reset();
                f.run_count = 0;
                f.dht_pk_sends = 0;
            }
            self.deadline = Timestamp::ZERO;
        }
    }

    /// The friend's DHT key as last announced to us, if any.
    pub fn friend_dht_pk(&self, real_pk: &PublicKey) -> Option<PublicKey> {
        self.friends.get(real_pk).and_then(|f| f.dht_pk)
    }

    /// True for the kinds [`Self::handle_datagram`] takes: 0x84 and 0x86.
    pub fn handles(k: u8) -> bool {
        k == kind::ANNOUNCE_RESPONSE || k == kind::DATA_RESPONSE
    }

    /// One datagram from `from` (the first relay of one of our paths, in practice).
    pub fn handle_datagram(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        rng: &mut dyn CryptoRng,
    ) -> Result<(), OnionClientDrop> {
        let result = match bytes.first() {
            Some(&kind::ANNOUNCE_RESPONSE) => self.handle_announce_response(now, from, bytes, rng),
            Some(&kind::DATA_RESPONSE) => self.handle_data_response(now, from, bytes),
            _ => Err(OnionClientDrop::UnknownKind),
        };
        match result {
            Err(reason) => self.stats.drops[reason as usize] += 1,
            Ok(()) => {
                self.update_connected(now);
                self.update_deadline(now);
            }
        }
        result
    }

    /// Runs every timer that is due: announce and search requests, DHT-PK packets, node
    /// and path timeouts, the connection status.
    pub fn handle_timeout(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        self.sendbacks.expire(now);
        self.run_announce(now, rng);
        self.update_connected(now);
        if self.searching(now) {
            let keys: Vec<PublicKey> = self.friends.keys().copied().collect();
            for pk in keys {
                self.run_friend(now, &pk, rng);
            }
        }
        self.update_deadline(now);
    }

    /// The exact time [`Self::handle_timeout`] next has work.
    pub fn poll_timeout(&self) -> Timestamp {
        self.deadline
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        let t = self.transmits.pop_front();
        if t.is_none() {
            crate::dht::node::give_back(&mut self.transmits);
        }
        t
    }

    /// The next onion request for a TCP relay (the body of TCP packet 8, docs/protocol.md §7):
    /// any connected relay can be hop A, since the request carries no layer for it.
    pub fn poll_tcp_request(&mut self) -> Option<Vec<u8>> {
        self.tcp_transmits.pop_front()
    }

    /// Our connected TCP relays, and whether new paths should start at one (UDP is off or
    /// no DHT node answers us).
    pub fn set_tcp_relays(&mut self, now: Timestamp, relays: Vec<PackedNode>, tcp_first: bool) {
        let usable = tcp_first && !relays.is_empty();
        self.path_nodes.set_tcp_relays(relays, tcp_first);
        if usable && self.path_nodes.len() + self.path_nodes.bootstrap_len() > 0 {
            // Paths may be possible now: let the lists run.
            self.deadline = self.deadline.min(now);
        }
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<OnionEvent> {
        self.events.pop_front()
    }

    /// Connected to the onion (`onion_isconnected`): an announce response within 75 s, and
    /// announced on at least half of the live announce nodes, which are at least half of
    /// min(12, path nodes).
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// Counters and table sizes.
    pub fn stats(&self) -> OnionClientStats {
        let mut s = self.stats;
        s.paths_created = self.paths_self.created() + self.paths_friends.created();
        s.sendbacks_evicted = self.sendbacks.evicted();
        s.path_nodes = self.path_nodes.len();
        s.bootstrap_nodes = self.path_nodes.bootstrap_len();
        s.announce_nodes = self.announce.list.nodes.len();
        s.announced_on = self
            .announce
            .list
            .nodes
            .iter()
            .filter(|n| n.is_stored)
            .count();
        s.friends = self.friends.len();
        s.friend_nodes = self.friends.values().map(|f| f.list.nodes.len()).sum();
        s.sendbacks = self.sendbacks.len();
        s.guarded_pings =
            self.announce.guard.len() + self.friends.values().map(|f| f.guard.len()).sum::<usize>();
        s.queued_transmits = self.transmits.len();
        s
    }

    /// Friend searches run once at least one node stores our announce (0.2.18 waits until
    /// connected for 3 ticks): a friend that started with us is then about as far along,
    /// so the nodes closest to it are asked when they are likely to hold it, and a search
    /// request is not spent before the friend could be found.
    fn searching(&self, now: Timestamp) -> bool {
        self.connected || self.announce.list.counts(now).1 > 0
    }

    /// `onion_isconnected`.
    fn compute_connected(&self, now: Timestamp) -> bool {
        if self
            .last_response
            .is_none_or(|t| t + ONION_OFFLINE_TIMEOUT <= now)
        {
            return false;
        }
        if self.path_nodes.len() == 0 {
            return false;
        }
        let (num, announced) = self.announce.list.counts(now);
        let pnodes = self.path_nodes.len().min(MAX_ONION_CLIENTS_ANNOUNCE);
        num != 0 && announced != 0 && num / 2 <= announced && pnodes / 2 <= num
    }

    fn update_connected(&mut self, now: Timestamp) {
        let connected = self.compute_connected(now);
        if connected == self.connected {
            return;
        }
        self.connected = connected;
        if connected {
            if self.disconnected_at + ONION_CONNECTED_TIMEOUT <= now {
                for f in self.friends.values_mut() {
                    f.run_count = 0;
                }
            }
        } else {
            self.disconnected_at = now;
        }
        self.push_event(OnionEvent::Connected(connected));
    }

    fn push_event(&mut self, event: OnionEvent) {
        if self.events.len() >= MAX_QUEUED_EVENTS {
            self.events.pop_front();
            self.stats.queue_overflows += 1;
        }
        self.events.push_back(event);
    }

    /// Queues a request built on `path` for its first hop: a 0x80 datagram to a UDP node,
    /// or the body of a TCP onion request for a relay (paths.rs).
    fn push_on_path(&mut self, first: PackedNode, packet: Vec<u8>) {
        if first.tcp {
            if self.tcp_transmits.len() >= MAX_QUEUED_TRANSMITS {
                self.tcp_transmits.pop_front();
                self.stats.queue_overflows += 1;
            }
            self.tcp_transmits.push_back(packet);
        } else {
            self.push_transmit(first.addr, packet);
        }
    }

    fn push_transmit(&mut self, dst: SocketAddr, payload: Vec<u8>) {
        if self.transmits.len() >= MAX_QUEUED_TRANSMITS {
            self.transmits.pop_front();
            self.stats.queue_overflows += 1;
        }
        self.transmits.push_back(Transmit { dst, payload });
    }

    /// `client_send_announce_request`: an announce (list [`ListId::Announce`]) or search
    /// request to `node` on path `path_num` (or a random path), with `ping_id`. Returns the
    /// path number used, or `None` if no path could be built or the list is gone.
    fn send_announce_request(
        &mut self,
        now: Timestamp,
        list: ListId,
        (node_pk, node_addr): (PublicKey, SocketAddr),
        ping_id: PingId,
        path_num: Option<u32>,
        rng: &mut dyn CryptoRng,
    ) -> Option<u32> {
        let (sender, searched, data_pk) = match list {
            ListId::Announce => (
                &self.real_keys,
                self.real_keys.public,
                self.data_keys.public,
            ),
            ListId::Friend(pk) => (
                &self.friends.get(&pk)?.temp_keys,
                pk,
                PublicKey([0; PUBLIC_KEY_SIZE]),
            ),
        };
        let sender_pk = sender.public;
        let Ok(key) = PrecomputedKey::new(&node_pk, &sender.secret) else {
            self.stats.low_order_keys += 1;
            return None;
        };
        let set = match list {
            ListId::Announce => &mut self.paths_self,
            ListId::Friend(_) => &mut self.paths_friends,
        };
        let Some(num) = set.pick(now, path_num, &mut self.path_nodes, rng) else {
            self.stats.no_path += 1;
            return None;
        };
        let path = set.path(num)?;
        let entry = SendbackEntry {
            list,
            node_pk,
            node_addr,
            path_num: num,
            sent: now,
            key: key.clone(),
            ping_id,
        };
        let sendback = self.sendbacks.insert(now, entry, rng);
        let request = AnnounceRequest {
            ping_id,
            searched_pk: searched,
            data_pk,
            sendback,
        };
        let inner = request.seal(&sender_pk, &key, &Nonce::random(rng));
        let first = path.nodes()[0];
        let packet = if first.tcp {
            path.tcp_request(node_addr, &inner, rng).ok()?
        } else {
            path.request(node_addr, &inner, rng).ok()?
        };
        self.push_on_path(first, packet);
        match list {
            ListId::Announce => self.stats.announce_requests += 1,
            ListId::Friend(_) => self.stats.search_requests += 1,
        }
        self.forget_dead_paths();
        Some(num)
    }

    /// Forgets the paths, in both sets, through the path nodes dropped since the last
    /// call (`path_health.rs`).
    fn forget_dead_paths(&mut self) {
        let dead = self.path_nodes.take_dropped();
        if !dead.is_empty() {
            self.paths_self.forget_through(&dead);
            self.paths_friends.forget_through(&dead);
        }
    }

    /// The next deadline of every list.
    fn update_deadline(&mut self, now: Timestamp) {
        let mut d = self.announce_deadline(now);
        if self.searching(now) {
            for f in self.friends.values() {
                d = d.min(self.friend_deadline(now, f));
            }
        }
        if let Some(t) = self.last_response {
            let off = t + ONION_OFFLINE_TIMEOUT;
            if off > now && self.connected {
                d = d.min(off);
            }
        }
        self.deadline = d.max(now);
    }

    /// `no_replay` for a DHT-PK packet sent now.
    fn no_replay(&self, now: Timestamp) -> u64 {
        self.config
            .unix_time_at_origin
            .saturating_add(now.as_secs())
    }

    /// The key agreed with friend `real_pk`'s real key when it was added: what its DHT-route
    /// DHT-PK packets open with, so that they cost no key agreement each.
    pub fn friend_shared_key(&self, real_pk: &PublicKey) -> Option<&PrecomputedKey> {
        self.friends.get(real_pk).map(|f| &f.shared)
    }

    /// Checks and records a DHT-PK announcement that came by the DHT route (0x20, request
    /// id 156, §6.4) against the friend's `no_replay`, shared with the onion route. True if
    /// the Node should act on it.
    pub fn accept_dht_route_pk(&mut self, friend: &PublicKey, announce: &DhtPkAnnounce) -> bool {
        let Some(f) = self.friends.get_mut(friend) else {
            return false;
        };
        if f.no_replay.check(announce.no_replay).is_err() {
            return false;
        }
        f.dht_pk = Some(announce.dht_pk);
        self.stats.dht_pk_accepted += 1;
        true
    }
}

#[cfg(test)]
mod tests;
