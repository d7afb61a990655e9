//! Tox's net_crypto session, sans-IO.
//!
//! Data flows: datagrams enter through `handle_*` with the current time; encrypted datagrams,
//! delivered payloads and events leave through `poll_*`. Nothing here reads a clock, touches a
//! socket or spawns a thread.
//!
//! One [`Endpoint`] per UDP socket answers cookie requests, verifies handshakes and routes
//! datagrams by source address to its [`Connection`]s (docs/protocol.md §2.2–§2.3). A connection
//! owns the session keys and nonces and frames data packets (§2.4–§2.6) around what its
//! [`transport::Transport`] (arrays, RTT, loss, congestion control, pacing) sends and
//! receives. [`packets`] holds the wire layouts, [`crypto`] the primitives (§1).

mod admission;
mod connection;
pub mod crypto;
mod drop_reason;
mod endpoint;
mod identity;
pub mod key_cache;
pub mod packets;
mod path;
mod receive_nonce;
pub mod recent_map;
mod time;
pub mod token_bucket;
pub mod transport;
pub mod wire;

pub use connection::{
    CloseReason, Connection, ConnectionEvent, ConnectionId, ConnectionStatus, SendError,
};
pub use endpoint::{
    ConnectError, DropCounters, DropReason, Endpoint, EndpointConfig, EndpointEvent,
    EndpointLimits, Transmit,
};
pub use path::{Destination, PathKind};
pub use time::Timestamp;
pub use transport::{ControllerKind, PacketClass, TransportConfig, TransportStats};
