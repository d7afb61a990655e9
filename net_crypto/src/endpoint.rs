//! The per-socket endpoint. Work in progress: public API only.

use std::net::SocketAddr;

use crate::connection::{Connection, ConnectionEvent, ConnectionId};
use crate::crypto::{CryptoRng, KeyPair, PublicKey};
use crate::transport::TransportConfig;
use crate::Timestamp;

/// Endpoint configuration.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Tunables for every connection's transport.
    pub transport: TransportConfig,
    /// Accept handshakes from any peer (demo/CLI receive).
    pub accept_all: bool,
}

/// A datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Where to.
    pub destination: SocketAddr,
    /// The bytes.
    pub payload: Vec<u8>,
}

/// What the endpoint reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointEvent {
    /// A peer opened a connection to us.
    Incoming {
        /// The new connection.
        id: ConnectionId,
        /// The peer's long-term key.
        peer_real_pk: PublicKey,
        /// The peer's DHT key.
        peer_dht_pk: PublicKey,
        /// The peer's address.
        addr: SocketAddr,
    },
    /// An event of one connection.
    Connection {
        /// Which connection.
        id: ConnectionId,
        /// What happened.
        event: ConnectionEvent,
    },
}

/// Why a datagram was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, thiserror::Error)]
pub enum DropReason {
    /// Not a net_crypto packet kind (route it elsewhere).
    #[error("not a net_crypto packet")]
    NotNetCrypto,
}

/// Why `connect` failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// Too many connections.
    #[error("too many connections")]
    TooManyConnections,
}

/// Count of dropped datagrams per reason.
#[derive(Debug, Clone, Default)]
pub struct DropCounters {}

/// One endpoint per UDP socket.
pub struct Endpoint {
    _rng: Box<dyn CryptoRng + Send>,
}

#[allow(unused_variables)]
impl Endpoint {
    /// A new endpoint.
    pub fn new(
        now: Timestamp,
        real: KeyPair,
        dht: KeyPair,
        config: EndpointConfig,
        rng: Box<dyn CryptoRng + Send>,
    ) -> Self {
        todo!()
    }
    /// Our long-term key.
    pub fn real_public_key(&self) -> PublicKey {
        todo!()
    }
    /// Our DHT key.
    pub fn dht_public_key(&self) -> PublicKey {
        todo!()
    }
    /// Start a connection.
    pub fn connect(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        peer_real_pk: PublicKey,
        peer_dht_pk: PublicKey,
    ) -> Result<ConnectionId, ConnectError> {
        todo!()
    }
    /// Accept incoming handshakes from this key.
    pub fn allow_peer(&mut self, peer_real_pk: PublicKey) {
        todo!()
    }
    /// One received datagram.
    pub fn handle_datagram(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        datagram: &[u8],
    ) -> Result<(), DropReason> {
        todo!()
    }
    /// The next datagram to send.
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Transmit> {
        todo!()
    }
    /// The next event.
    pub fn poll_event(&mut self) -> Option<EndpointEvent> {
        todo!()
    }
    /// When `handle_timeout` should next be called.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        todo!()
    }
    /// Run expired timers.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        todo!()
    }
    /// A connection by id.
    pub fn connection(&self, id: ConnectionId) -> Option<&Connection> {
        todo!()
    }
    /// A connection by id, mutably.
    pub fn connection_mut(&mut self, id: ConnectionId) -> Option<&mut Connection> {
        todo!()
    }
    /// Ids of all live connections.
    pub fn connection_ids(&self) -> Vec<ConnectionId> {
        todo!()
    }
    /// Drops per reason.
    pub fn drop_counters(&self) -> &DropCounters {
        todo!()
    }
}
