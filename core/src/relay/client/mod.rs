//! The TCP relay client, sans-IO (docs/protocol.md §7, §2.9, §4, §6.4; c-toxcore 0.2.18
//! `TCP_client.c` and `TCP_connection.c`).
//!
//! The node uses [`RelayClients`]; the driver owns the TCP sockets. Data flows:
//!
//! ```text
//!  node ── add_relay / add_peer_relay / remove_peer / set_peer_direct ──► RelayClients
//!  node ── send_to_peer / send_oob / send_onion ────────────────────────► RelayClients
//!  driver ◄─ poll_connect ─ (opens TCP) ─ handle_connected ───────────►  │ one RelayConnection
//!  driver ── handle_bytes / handle_closed ────────────────────────────►  │ per relay: handshake,
//!  driver ◄─ poll_write + consume / poll_close ─────────────────────────  │ frames, routes, pings
//!  driver ◄─ poll_timeout ─ (sleeps) ─ handle_timeout ────────────────►  │
//!  node ◄── poll_event: RelayUp/Down, PeerRoute, Data, Oob, OnionResponse
//! ```
//!
//! After every call the driver drains `poll_close` (close those sockets), `poll_connect`
//! (open those), `poll_write`/`consume` for each socket and `poll_event`, then sleeps until
//! `poll_timeout` or the next socket event. Time and randomness come in as arguments.
//!
//! The API the node codes against:
//!
//! ```text
//! RelayClients::new(our_dht: KeyPair, config: RelayClientConfig) -> RelayClients
//! add_relay(&mut self, now, addr: SocketAddr, pk: PublicKey) -> Result<(), AddRelayError>
//! add_peer_relay(&mut self, now, peer_dht_pk: PublicKey, addr: SocketAddr, relay_pk: PublicKey)
//!     -> Result<(), AddRelayError>
//! remove_peer(&mut self, peer_dht_pk: &PublicKey)
//! set_peer_direct(&mut self, now, peer_dht_pk: &PublicKey, direct: bool)
//! poll_connect(&mut self, now) -> Option<(RelayId, SocketAddr)>
//! handle_connected(&mut self, now, id: RelayId, rng: &mut dyn CryptoRng)
//! handle_bytes(&mut self, now, id: RelayId, bytes: &[u8])
//! handle_closed(&mut self, now, id: RelayId)
//! poll_write(&self, id: RelayId) -> Option<&[u8]>;  consume(&mut self, id: RelayId, n: usize)
//! poll_close(&mut self) -> Option<RelayId>
//! send_to_peer(&mut self, now, peer_dht_pk: &PublicKey, packet: &[u8]) -> Result<(), RelaySendError>
//! send_oob(&mut self, now, relay_pk: &PublicKey, dest: &PublicKey, data: &[u8])
//!     -> Result<(), RelaySendError>
//! send_onion(&mut self, now, packet: &[u8]) -> Result<SocketAddr, RelaySendError>
//! is_peer_online(&self, peer_dht_pk: &PublicKey) -> bool
//! poll_event(&mut self) -> Option<RelayEvent>
//! connected_relays(&self) -> impl Iterator<Item = (SocketAddr, PublicKey)>
//! poll_timeout(&self) -> Option<Timestamp>
//! handle_timeout(&mut self, now, rng: &mut dyn CryptoRng)
//! stats(&self) -> RelayClientStats
//! ```
//!
//! One concern per file: [`connection`] (one connection to one relay), [`set`] (the relays
//! and the peers' routes), `routes` (a connection's route table), `keepalive` (our
//! pings), `output` (the bounded output buffer), `backoff` (reconnect delays), `peers`
//! (each peer's relays).

mod backoff;
pub mod connection;
mod keepalive;
mod peers;
pub(crate) mod routes;
pub mod set;
#[cfg(test)]
mod tests;

pub use crate::relay::outbuf::CLIENT_CONTROL_RESERVE as CONTROL_RESERVE;
pub use backoff::{RECONNECT_DELAY_MAX, RECONNECT_DELAY_MIN};
pub use connection::{
    ConnectionConfig, ConnectionError, ConnectionEvent, RelayConnection, SendError,
    TCP_CONNECTION_TIMEOUT,
};
pub use keepalive::{TCP_PING_FREQUENCY, TCP_PING_TIMEOUT};
pub use peers::{MAX_FRIEND_TCP_CONNECTIONS, RECOMMENDED_FRIEND_TCP_CONNECTIONS};
pub use routes::RouteStatus;
pub use set::{
    AddRelayError, RelayClientConfig, RelayClientStats, RelayClients, RelayEvent, RelayId,
    RelaySendError, NUM_ONION_TCP_CONNECTIONS,
};
