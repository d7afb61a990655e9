//! The Tox DHT (docs/protocol.md §5), sans-IO.
//!
//! Datagrams pass a [`gate::Gate`] (per-source limits, decryption) into the
//! [`node::DhtNode`] state machine (lists, pending requests, timers); its outputs leave
//! through the gate again (amplification check, encryption). Wire formats live in [`wire`].

pub mod announce;
pub(crate) mod client;
pub mod close_list;
mod close_nodes;
pub mod distance;
pub mod gate;
pub mod key_cache;
pub(crate) mod lan;
pub(crate) mod nat;
pub mod node;
pub(crate) mod pending;
pub(crate) mod search_list;
pub mod source_guard;
pub mod timers;
pub mod wire;

pub use close_nodes::{CloseNodes, NoNodes};
pub use gate::{Gate, GateError, GateStats, Incoming, OutPacket, Outgoing, Transmit};
pub use node::{BootstrapInfo, DhtConfig, DhtEvent, DhtNode, DhtStats};
pub use source_guard::GuardConfig;
pub use wire::packed_node::PackedNode;
