//! Tox's net_crypto session, sans-IO.
//!
//! Data flows: datagrams enter through `handle_*` with the current time; encrypted datagrams,
//! delivered payloads and events leave through `poll_*`. Nothing here reads a clock, touches a
//! socket or spawns a thread.

pub mod connection;
pub mod crypto;
mod drop_reason;
pub mod endpoint;
mod identity;
pub mod packets;
mod receive_nonce;
mod token_bucket;
pub mod time;
pub mod transport;

pub use connection::{
    CloseReason, Connection, ConnectionEvent, ConnectionId, ConnectionStatus, SendError,
};
pub use endpoint::{
    ConnectError, DropCounters, DropReason, Endpoint, EndpointConfig, EndpointEvent,
    EndpointLimits, Transmit,
};
pub use time::Timestamp;
pub use transport::{ControllerKind, PacketClass, TransportConfig, TransportStats};
