//! What c-toxcore clients expect of any DHT node (docs/protocol.md §6.2, §6.3), sans-IO: relay
//! onion requests and responses (`relay`), keep the announce store and forward data to
//! announced keys ([`announce_store`]).
//!
//! [`OnionServer::handle_datagram`] takes one datagram and returns the one datagram it
//! causes, or the typed reason it was dropped; every outcome is counted in
//! [`OnionServer::stats`]. Nothing is queued: memory is fixed once the server exists (four
//! key caches of 1024 entries, 160 announce entries, a 4096-slot per-source table).
//!
//! Against abuse, beyond c-toxcore 0.2.18:
//! * Datagrams from UDP port 0 are dropped, and nothing is sent to port 0.
//! * A per-source rate limit ([`OnionConfig::guard`]) runs before any decryption, so a flood
//!   of fresh keys from one address costs a hash, not a key agreement per datagram.
//! * Then the key agreements that no cached key saves — request layers 0x80–0x82 and
//!   announce requests 0x83 with fresh keys — take from one budget of all sources together
//!   (`GuardConfig::key_agreements`, key_cache.rs): a flood from many (spoofed) sources costs
//!   bounded CPU, and the paths and clients whose keys are cached are not refused.
//! * Every output is smaller than the datagram that caused it, except an announce response
//!   (at most 464 bytes for a 354-byte 0x83, 1.31×; at most 804 bytes for a 0x87, whose
//!   group announces make it up to 1.9× its request: 804 bytes for 427), which goes back to the request's
//!   source: the last relay of the requester's own path, which a spoofer does not choose
//!   freely, and under the per-source onion rate.
//! * Group announces (0x87) are kept per chat in a bounded store (group_store.rs).

pub mod announce_store;
pub(crate) mod group_store;
pub(crate) mod ping_id;
pub(crate) mod relay;

use std::net::SocketAddr;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, LowOrderPublicKey, Nonce};
use rustox_net_crypto::Timestamp;

use crate::dht::gate::Transmit;
use crate::dht::key_cache::{KeyBudget, KeyRefusal};
use crate::dht::source_guard::{GuardConfig, SourceGuard};
use crate::dht::wire::packed_node::canonical;
use crate::onion::wire::announce::AnnounceError;
use crate::onion::wire::data::DataError;
use crate::onion::wire::ip_port::IpPort;
use crate::onion::wire::kind;
use crate::onion::wire::request::RequestError;
use crate::onion::wire::response::ResponseError;

pub use crate::dht::{CloseNodes, NoNodes};
pub use announce_store::AnnounceStore;
pub use group_store::GroupStore;
pub use relay::{Relay, KEY_REFRESH_INTERVAL};

/// Why an onion datagram was dropped. Field-less so it can be counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, thiserror::Error)]
pub enum OnionDrop {
    /// From UDP port 0: no answer can reach it.
    #[error("datagram from port 0")]
    FromPortZero,
    /// The source is over its onion datagram rate.
    #[error("source over its rate limit")]
    RateLimited,
    /// Not a kind an onion server handles (0x84, 0x86 and 0x88 are for clients).
    #[error("not an onion server packet")]
    UnknownKind,
    /// A length outside the kind's bounds.
    #[error("bad length")]
    BadLength,
    /// Our layer or the announce box did not open.
    #[error("decryption failed")]
    Decrypt,
    /// The next hop's address is not UDP.
    #[error("next hop is not a UDP address")]
    BadAddress,
    /// The next hop's port is 0.
    #[error("next hop is port 0")]
    ToPortZero,
    /// At the last hop, a payload other than 0x83/0x85; or a response other than 0x84/0x86.
    #[error("payload kind not relayed")]
    ForbiddenPayload,
    /// A response whose sendback does not open under our key: forged, corrupted, or made
    /// before our last key refresh.
    #[error("sendback does not open")]
    BadSendback,
    /// The first hop's sendback names a TCP client, and the caller serves no TCP relay
    /// clients ([`OnionServer::handle_datagram`]).
    #[error("sendback names a TCP client")]
    TcpReturn,
    /// A data request for a key not announced here.
    #[error("destination not announced here")]
    UnknownDestination,
    /// A request whose layer or announce key has low order: libsodium's
    /// `crypto_box_beforenm` refuses it, and a key agreed with it would be no secret.
    #[error("low-order public key")]
    LowOrderKey,
    /// A request or announce key not cached, while the key agreements of all sources
    /// together are spent.
    #[error("key-agreement budget spent")]
    KeyBudget,
    /// A 0x87 whose extra data is not a public group announce.
    #[error("bad group announce")]
    BadGroupAnnounce,
}

impl OnionDrop {
    /// Every reason, in counter order.
    pub const ALL: [OnionDrop; 14] = [
        OnionDrop::FromPortZero,
        OnionDrop::RateLimited,
        OnionDrop::UnknownKind,
        OnionDrop::BadLength,
        OnionDrop::Decrypt,
        OnionDrop::BadAddress,
        OnionDrop::ToPortZero,
        OnionDrop::ForbiddenPayload,
        OnionDrop::BadSendback,
        OnionDrop::TcpReturn,
        OnionDrop::UnknownDestination,
        OnionDrop::LowOrderKey,
        OnionDrop::KeyBudget,
        OnionDrop::BadGroupAnnounce,
    ];

    /// A short name for statistics lines.
    pub fn name(self) -> &'static str {
        match self {
            OnionDrop::FromPortZero => "from_port_zero",
            OnionDrop::RateLimited => "rate_limited",
            OnionDrop::UnknownKind => "unknown_kind",
            OnionDrop::BadLength => "bad_length",
            OnionDrop::Decrypt => "decrypt",
            OnionDrop::BadAddress => "bad_address",
            OnionDrop::ToPortZero => "to_port_zero",
            OnionDrop::ForbiddenPayload => "forbidden_payload",
            OnionDrop::BadSendback => "bad_sendback",
            OnionDrop::TcpReturn => "tcp_return",
            OnionDrop::UnknownDestination => "unknown_destination",
            OnionDrop::LowOrderKey => "low_order_key",
            OnionDrop::KeyBudget => "key_budget",
            OnionDrop::BadGroupAnnounce => "bad_group_announce",
        }
    }
}

impl From<RequestError> for OnionDrop {
    fn from(e: RequestError) -> Self {
        match e {
            RequestError::UnknownKind(_) => OnionDrop::UnknownKind,
            RequestError::Decrypt => OnionDrop::Decrypt,
            RequestError::Address(_) => OnionDrop::BadAddress,
            RequestError::ForbiddenPayload(_) => OnionDrop::ForbiddenPayload,
            RequestError::Sendback(_) => OnionDrop::BadSendback,
            RequestError::LowOrderKey => OnionDrop::LowOrderKey,
            RequestError::BadLength { .. }
            | RequestError::PayloadSize(_)
            | RequestError::TcpHop => OnionDrop::BadLength,
        }
    }
}

impl From<ResponseError> for OnionDrop {
    fn from(e: ResponseError) -> Self {
        match e {
            ResponseError::UnknownKind(_) => OnionDrop::UnknownKind,
            ResponseError::BadLength { .. } => OnionDrop::BadLength,
            ResponseError::ForbiddenResponse(_) => OnionDrop::ForbiddenPayload,
        }
    }
}

impl From<AnnounceError> for OnionDrop {
    fn from(e: AnnounceError) -> Self {
        match e {
            AnnounceError::UnknownKind(_) => OnionDrop::UnknownKind,
            AnnounceError::Decrypt => OnionDrop::Decrypt,
            AnnounceError::BadLength { .. }
            | AnnounceError::BadStatus(_)
            | AnnounceError::Nodes(_)
            | AnnounceError::TooManyNodes(_) => OnionDrop::BadLength,
        }
    }
}

impl From<LowOrderPublicKey> for OnionDrop {
    fn from(_: LowOrderPublicKey) -> Self {
        OnionDrop::LowOrderKey
    }
}

impl From<KeyRefusal> for OnionDrop {
    fn from(e: KeyRefusal) -> Self {
        match e {
            KeyRefusal::LowOrder(_) => OnionDrop::LowOrderKey,
            KeyRefusal::OverBudget => OnionDrop::KeyBudget,
        }
    }
}

impl From<DataError> for OnionDrop {
    fn from(e: DataError) -> Self {
        match e {
            DataError::UnknownKind(_) => OnionDrop::UnknownKind,
            DataError::Decrypt => OnionDrop::Decrypt,
            DataError::LowOrderKey => OnionDrop::LowOrderKey,
            DataError::BadLength { .. } | DataError::DataSize(_) => OnionDrop::BadLength,
        }
    }
}

/// What an onion datagram causes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnionOutput {
    /// A datagram to send.
    Udp(Transmit),
    /// A response for a client of our TCP relay: `dest` is the address our first-hop
    /// sendback held (the relay server's `sendback_address`), `response` goes to that
    /// client as TCP packet 9.
    TcpClient {
        /// The sendback address.
        dest: IpPort,
        /// The response (0x84 or 0x86).
        response: Vec<u8>,
    },
}

/// Counters of an onion server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OnionStats {
    /// Onion datagrams received (every kind passed to the server).
    pub datagrams_in: u64,
    /// Requests forwarded, by the hop we were: \[0\] A (0x80 in), \[1\] B (0x81), \[2\] C (0x82).
    pub requests_relayed: [u64; 3],
    /// Responses forwarded: \[0\] 0x8c in, \[1\] 0x8d, \[2\] 0x8e.
    pub responses_relayed: [u64; 3],
    /// Announce requests answered.
    pub announces_answered: u64,
    /// Of those, announces with a valid ping id that stored or refreshed an entry.
    pub announces_stored: u64,
    /// Of those, searches answered with `is_stored` 1.
    pub searches_found: u64,
    /// Group announces stored (0x87 with extra data).
    pub group_announces_stored: u64,
    /// Other peers' group announces sent back in 0x88 responses.
    pub group_announces_sent: u64,
    /// Data requests forwarded to an announced key.
    pub data_forwarded: u64,
    /// Sendback key replacements.
    pub key_refreshes: u64,
    /// Requests from TCP relay clients sent on as hop A (not counted in `datagrams_in`).
    pub tcp_requests_relayed: u64,
    /// Requests from TCP relay clients dropped (not counted in `drops`).
    pub tcp_requests_dropped: u64,
    /// Drops, indexed like [`OnionDrop::ALL`].
    pub drops: [u64; OnionDrop::ALL.len()],
}

impl OnionStats {
    /// Drops counted for `reason`.
    pub fn dropped(&self, reason: OnionDrop) -> u64 {
        self.drops[reason as usize]
    }

    /// All drops.
    pub fn total_dropped(&self) -> u64 {
        self.drops.iter().sum()
    }

    /// Datagrams that caused an output.
    pub fn forwarded(&self) -> u64 {
        self.requests_relayed.iter().sum::<u64>()
            + self.responses_relayed.iter().sum::<u64>()
            + self.announces_answered
            + self.data_forwarded
    }
}

/// Settings of an onion server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnionConfig {
    /// Per-source datagram limit, checked before decryption (`rate: None` = unlimited).
    pub guard: GuardConfig,
}

impl Default for OnionConfig {
    /// 128 onion datagrams/s per source IP, burst 512. A c-toxcore client sends a few
    /// announce and search requests per second in steady state and bursts of some hundred at
    /// start-up (195 in its first seconds against one bootstrap node, `tests/interop_dht.rs`);
    /// relays forward other clients' traffic, spread over the whole network. The figure is a
    /// margin over those, not a measurement of where honest traffic ends.
    fn default() -> Self {
        OnionConfig {
            guard: GuardConfig {
                rate: Some(128.0),
                burst: 512.0,
                ..GuardConfig::default()
            },
        }
    }
}

/// The onion server of one DHT node.
#[derive(Debug)]
pub struct OnionServer {
    relay: Relay,
    store: AnnounceStore,
    groups: GroupStore,
    guard: SourceGuard,
    /// Key agreements the relay's and the store's caches do not save, for both.
    budget: KeyBudget,
    stats: OnionStats,
}

impl OnionServer {
    /// A server for our DHT key pair.
    pub fn new(
        keys: &KeyPair,
        config: OnionConfig,
        now: Timestamp,
        rng: &mut dyn CryptoRng,
    ) -> Self {
        OnionServer {
            relay: Relay::new(keys, now, rng),
            store: AnnounceStore::new(keys, rng),
            groups: GroupStore::new(),
            guard: SourceGuard::new(config.guard, rng),
            budget: KeyBudget::new(config.guard.key_agreements),
            stats: OnionStats::default(),
        }
    }

    /// True for the kinds [`Self::handle_datagram`] serves: requests 0x80–0x82, announces
    /// 0x83 and 0x87, data 0x85, responses 0x8c–0x8e.
    pub fn handles(k: u8) -> bool {
        matches!(
            k,
            kind::REQUEST_0
                | kind::REQUEST_1
                | kind::REQUEST_2
                | kind::ANNOUNCE_REQUEST
                | kind::ANNOUNCE_REQUEST_NEW
                | kind::DATA_REQUEST
                | kind::RESPONSE_3
                | kind::RESPONSE_2
                | kind::RESPONSE_1
        )
    }

    /// One datagram from `from`; the datagram it causes, or why it was dropped. `nodes`
    /// supplies the closest nodes for announce responses. For a node without a TCP relay: a
    /// response for a TCP client is dropped as [`OnionDrop::TcpReturn`].
    pub fn handle_datagram(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        nodes: &dyn CloseNodes,
        rng: &mut dyn CryptoRng,
    ) -> Result<Transmit, OnionDrop> {
        self.stats.datagrams_in += 1;
        let result = match self.dispatch(now, canonical(from), bytes, nodes, rng) {
            Ok(OnionOutput::Udp(t)) => Ok(t),
            Ok(OnionOutput::TcpClient { .. }) => {
                self.stats.responses_relayed[2] -= 1;
                Err(OnionDrop::TcpReturn)
            }
            Err(e) => Err(e),
        };
        match &result {
            Ok(t) => debug_assert!(t.dst.port() != 0 && t.payload.len() <= bytes.len() + 380),
            Err(reason) => self.stats.drops[*reason as usize] += 1,
        }
        result
    }

    /// As [`Self::handle_datagram`], for a node that runs a TCP relay: a response whose
    /// first-hop sendback names a TCP client comes back as [`OnionOutput::TcpClient`] for the
    /// relay server to deliver.
    pub fn handle_datagram_with_tcp(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        nodes: &dyn CloseNodes,
        rng: &mut dyn CryptoRng,
    ) -> Result<OnionOutput, OnionDrop> {
        self.stats.datagrams_in += 1;
        let result = self.dispatch(now, canonical(from), bytes, nodes, rng);
        if let Err(reason) = &result {
            self.stats.drops[*reason as usize] += 1;
        }
        result
    }

    /// An onion request from a client of our TCP relay (TCP packet 8, docs/protocol.md §6.2):
    /// sent on as hop A's 0x81, with a sendback naming `source`, the connection's sendback
    /// address. `client` is the client's TCP address; the per-source limit applies to it as
    /// to UDP sources.
    pub fn handle_tcp_request(
        &mut self,
        now: Timestamp,
        client: SocketAddr,
        source: &IpPort,
        nonce: &Nonce,
        plain: &[u8],
        rng: &mut dyn CryptoRng,
    ) -> Result<Transmit, OnionDrop> {
        let result = if self
            .guard
            .on_receive(now, canonical(client).ip(), plain.len())
            .is_err()
        {
            Err(OnionDrop::RateLimited)
        } else {
            self.relay
                .handle_tcp_request(now, source, nonce, plain, &mut self.stats, rng)
        };
        match &result {
            Ok(_) => self.stats.tcp_requests_relayed += 1,
            Err(_) => self.stats.tcp_requests_dropped += 1,
        }
        result
    }

    fn dispatch(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        nodes: &dyn CloseNodes,
        rng: &mut dyn CryptoRng,
    ) -> Result<OnionOutput, OnionDrop> {
        if from.port() == 0 {
            return Err(OnionDrop::FromPortZero);
        }
        let k = *bytes.first().ok_or(OnionDrop::UnknownKind)?;
        if !Self::handles(k) {
            return Err(OnionDrop::UnknownKind);
        }
        if self.guard.on_receive(now, from.ip(), bytes.len()).is_err() {
            return Err(OnionDrop::RateLimited);
        }
        let stats = &mut self.stats;
        let budget = &mut self.budget;
        match k {
            kind::REQUEST_0 | kind::REQUEST_1 | kind::REQUEST_2 => self
                .relay
                .handle_request(now, from, bytes, budget, stats, rng)
                .map(OnionOutput::Udp),
            kind::RESPONSE_3 | kind::RESPONSE_2 | kind::RESPONSE_1 => {
                self.relay.handle_response(now, bytes, stats, rng)
            }
            kind::ANNOUNCE_REQUEST => self
                .store
                .handle_announce(now, from, bytes, nodes, budget, stats, rng)
                .map(OnionOutput::Udp),
            kind::ANNOUNCE_REQUEST_NEW => self
                .store
                .handle_announce_ext(
                    now,
                    from,
                    bytes,
                    nodes,
                    &mut self.groups,
                    budget,
                    stats,
                    rng,
                )
                .map(OnionOutput::Udp),
            _ => self
                .store
                .handle_data(now, bytes, stats)
                .map(OnionOutput::Udp),
        }
    }

    /// Replaces the sendback key when it is due.
    pub fn handle_timeout(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        if self.relay.handle_timeout(now, rng) {
            self.stats.key_refreshes += 1;
        }
    }

    /// When [`Self::handle_timeout`] next has work: the sendback key's refresh. (Announce
    /// entries expire by their timestamps and need no timer.)
    pub fn poll_timeout(&self) -> Timestamp {
        self.relay.next_refresh()
    }

    /// Counters.
    pub fn stats(&self) -> OnionStats {
        self.stats
    }

    /// The announce store.
    pub fn store(&self) -> &AnnounceStore {
        &self.store
    }

    /// The group announce store.
    pub fn groups(&self) -> &GroupStore {
        &self.groups
    }

    /// Key agreements computed by the server's key caches.
    pub fn key_agreements(&self) -> u64 {
        self.relay.key_agreements() + self.store.key_agreements()
    }
}

#[cfg(test)]
mod tests;
