//! A net_crypto connection (protocol.md §2.2–§2.6). Work in progress: public API only.

use std::net::SocketAddr;

use crate::crypto::PublicKey;
use crate::transport::Transport;
use crate::Timestamp;

/// An endpoint-local handle for one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(pub u32);

/// Where a connection is in its life (protocol.md §2.3).
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
    /// The peer sent a kill packet.
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
    /// The payload's first byte is not in the id range of this kind of packet.
    #[error("packet id not valid for this kind of packet")]
    InvalidPacketId,
    /// The send array or queue is full.
    #[error("send queue full")]
    QueueFull,
    /// `send_budget` is zero.
    #[error("no send budget")]
    NoBudget,
}

/// One net_crypto session.
#[derive(Debug)]
pub struct Connection {
    transport: Transport,
}

#[allow(unused_variables)]
impl Connection {
    /// Where the connection is in its life.
    pub fn status(&self) -> ConnectionStatus {
        todo!()
    }
    /// The peer's long-term key.
    pub fn peer_real_pk(&self) -> PublicKey {
        todo!()
    }
    /// The peer's address.
    pub fn peer_addr(&self) -> SocketAddr {
        todo!()
    }
    /// Queue a lossless control payload; returns its packet number.
    pub fn send_lossless(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SendError> {
        todo!()
    }
    /// Bulk packets allowed now (0 unless established).
    pub fn send_budget(&self, now: Timestamp) -> usize {
        todo!()
    }
    /// Queue a lossless bulk payload; returns its packet number.
    pub fn send_bulk(&mut self, now: Timestamp, payload: &[u8]) -> Result<u32, SendError> {
        todo!()
    }
    /// Send a lossy payload.
    pub fn send_lossy(&mut self, now: Timestamp, payload: &[u8]) -> Result<(), SendError> {
        todo!()
    }
    /// True once the peer acknowledged `packet_number`.
    pub fn is_delivered(&self, packet_number: u32) -> bool {
        todo!()
    }
    /// Close the connection, telling the peer if established.
    pub fn kill(&mut self, now: Timestamp) {
        todo!()
    }
    /// The reliability engine.
    pub fn transport(&self) -> &Transport {
        &self.transport
    }
    /// Bytes held by this connection.
    pub fn memory_usage(&self) -> usize {
        todo!()
    }
}
