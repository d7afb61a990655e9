//! rustox-core: the node. So far the DHT (protocol.md §5), the onion's wire formats and its
//! server side (§6), and the drivers that run them and net_crypto sessions on real sockets.
//!
//! Data flows: datagrams enter [`dht::DhtNode`] with the current time and an injected RNG;
//! datagrams to send, events and the next deadline are pulled out of it. Onion datagrams go
//! to [`onion::server::OnionServer`] beside it, which answers each with at most one datagram.
//! [`driver`] (cargo features `io` and `tokio`, both on by default) is the only part that
//! touches sockets, clocks and threads.

#[cfg(feature = "io")]
pub mod bootstrap_node;
pub mod dht;
#[cfg(feature = "io")]
pub mod driver;
pub mod onion;
