//! The TCP relay client, sans-IO (protocol.md §7, §2.9, §4, §6.4; c-toxcore 0.2.18
//! `TCP_client.c` and `TCP_connection.c`).
//!
//! The driver owns the TCP sockets; everything else is here:
//! * [`connection`]: one connection to one relay: handshake, frames, routes, ping and
//!   pong, OOB, onion and data packets, a bounded output buffer.
//! * [`set`]: [`RelayClients`], what the node uses: a bounded set of relays, connected and
//!   reconnected with backoff, three kept for the onion, unused ones dropped, and routes
//!   to peers keyed by their DHT public key.
//!
//! One concern per file besides: `routes` (a connection's route table), `keepalive` (our
//! pings), `output` (the bounded output buffer), `backoff` (reconnect delays), `peers`
//! (each peer's relays).

mod backoff;
pub mod connection;
mod keepalive;
mod output;
mod peers;
pub mod routes;
pub mod set;
#[cfg(test)]
mod tests;

pub use backoff::{RECONNECT_DELAY_MAX, RECONNECT_DELAY_MIN};
pub use connection::{
    ConnectionConfig, ConnectionError, ConnectionEvent, RelayConnection, SendError,
    TCP_CONNECTION_TIMEOUT,
};
pub use keepalive::{TCP_PING_FREQUENCY, TCP_PING_TIMEOUT};
pub use output::CONTROL_RESERVE;
pub use routes::RouteStatus;
pub use set::{
    AddRelayError, RelayClientConfig, RelayClientStats, RelayClients, RelayEvent, RelayId,
    RelaySendError,
};
