//! rustox-core: the node, sans-IO, and the drivers that run it on real sockets.
//!
//! [`node::Node`] is one Tox instance on one UDP port: datagrams enter it with the current
//! time and are routed by kind to the DHT ([`dht`], docs/protocol.md §5), the net_crypto endpoint
//! and the onion; the friend list and friend connections ([`friend`], §4, §6.4–§6.5) tie them
//! together. Datagrams to send, events and the next deadline are pulled out of it.
//! [`driver`] (cargo features `io` and `tokio`, both on by default) is the only part that
//! touches sockets, clocks and threads. [`savedata`] reads and writes the profile a node is
//! restored from: c-toxcore's save file, plain or password-protected.
//!
//! Layers, from the bottom: `types` (small shared types, re-exported where users meet them); the sans-IO protocol layers
//! ([`dht`], [`proxy`], [`friend`], [`onion`], [`savedata`], [`relay`]) and the [`node`] that
//! ties them; [`driver`]; and above the drivers the layer that runs them (`src/app`): the
//! Rust API [`api`] and the [`bootstrap_node`]. Each imports only the layers below it.

#[cfg(feature = "io")]
mod app;
#[cfg(feature = "tokio")]
pub use app::api;
#[cfg(feature = "io")]
pub use app::bootstrap_node;
pub mod av;
pub mod conference;
pub mod crypto;
pub mod dht;
#[cfg(feature = "io")]
pub mod driver;
pub mod friend;
pub mod node;
pub mod onion;
pub mod proxy;
pub mod relay;
pub mod savedata;
pub mod transport;
mod types;
