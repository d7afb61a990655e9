//! What a connection shows the layer above: its id, status, events, why it closed or refused a
//! payload, and the constants of the handshake phase and of its queues.

use std::time::Duration;

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
    /// We called [`Connection::kill`](crate::Connection::kill).
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
