//! rustox-core: the node. So far the DHT (protocol.md §5) and its UDP driver.
//!
//! Data flows: datagrams enter [`dht::DhtNode`] with the current time and an injected RNG;
//! datagrams to send, events and the next deadline are pulled out of it. [`driver`] is the
//! only part that touches sockets, clocks and threads.

pub mod bootstrap_node;
pub mod dht;
pub mod driver;
