//! What [`RelayClients`](super::RelayClients) takes and gives: connection ids, settings,
//! events, errors and counters.

use std::net::SocketAddr;

use rustox_net_crypto::crypto::PublicKey;

use super::{
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_PEERS, DEFAULT_MAX_RELAYS, NUM_ONION_TCP_CONNECTIONS,
};
use crate::relay::client::connection::ConnectionConfig;
use crate::relay::client::peers::MAX_FRIEND_TCP_CONNECTIONS;

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
