//! What an endpoint hands back: datagrams to send ([`Transmit`]), events
//! ([`EndpointEvent`]) and why a `connect` was refused ([`ConnectError`]).

use crate::connection::{ConnectionEvent, ConnectionId};
use crate::crypto::PublicKey;
use crate::path::Destination;

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
