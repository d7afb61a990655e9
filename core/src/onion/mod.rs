//! The onion (docs/protocol.md §6): how Tox clients find each other without telling the network
//! who they are looking for.
//!
//! * [`wire`]: every onion packet's codec — the IP_Port of the layers, the 3-hop request
//!   0x80–0x82 and its client-side builder ([`wire::request::OnionPath`]), the responses
//!   0x8c–0x8e, the sendbacks, announce 0x83/0x84 and data 0x85/0x86.
//! * [`server`]: what every DHT node does for clients, sans-IO: relay requests and
//!   responses, keep the announce store, forward data to announced keys.
//! * [`client`]: what a Tox client does, sans-IO: announce itself to the nodes closest to
//!   its real key, search for friends at the nodes closest to theirs, and exchange onion
//!   data with them (DHT public keys §6.4, friend requests §6.5).

pub mod client;
pub mod server;
pub mod wire;
