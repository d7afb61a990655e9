//! Deterministic network simulation for rustox's sans-IO cores, plus the scenarios and
//! benchmarks built on it.
//!
//! Data flows: a [`Simulator`] pops the earliest event from a heap (a datagram arriving or a
//! node's deadline), hands it to a [`SimNode`], drains the node's transmits onto [`Link`]s —
//! which delay, queue, lose, corrupt, duplicate or reorder them from a seeded stream — and
//! schedules their arrivals. Everything random derives from one seed, so a run replays bit
//! for bit (`SIM_SEED=… cargo test …`).
//!
//! Layers: [`sim`]/[`link`]/[`node`] know nothing about Tox; [`netcrypto`] wraps a
//! `rustox_net_crypto::Endpoint` with a bulk-transfer app; [`transfer`] runs one measured
//! transfer over a [`profiles::Profile`] and returns [`transfer::TransferMetrics`] — the piece
//! the benchmark binaries and `rustox sim` call.

pub mod attack;
pub mod cross_traffic;
pub mod ctoxcore;
pub mod driver_model;
pub mod emulator;
pub mod friend_online;
pub mod hashing_sink;
pub mod heap_meter;
pub mod idle;
pub mod link;
pub mod live;
pub mod metrics;
pub mod netcrypto;
pub mod node;
pub mod node_transfer;
pub mod profiles;
pub mod proxies;
pub mod relay_probe;
pub mod relay_sim;
pub mod relay_switch;
pub mod scale;
pub mod seed;
pub mod shared;
pub mod sim;
pub mod targets;
pub mod tcp;
pub mod tox_node;
pub mod toy;
pub mod trace;
pub mod transfer;

pub use link::{Link, LinkConfig, LinkStats};
pub use node::SimNode;
pub use profiles::Profile;
pub use seed::{derive_rng, seed_from_env, StreamKind};
pub use sim::{LinkId, NodeId, SimError, Simulator};
pub use trace::TraceHash;
