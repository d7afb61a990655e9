//! Deterministic network simulation for rustox's sans-IO sessions.
//!
//! Data flows: a [`Simulator`] pops the earliest event from a heap (a datagram arriving or a
//! node's deadline), hands it to a [`SimNode`], drains the node's transmits onto [`Link`]s —
//! which delay, queue, lose, corrupt, duplicate or reorder them from a seeded stream — and
//! schedules their arrivals. Everything random derives from one seed, so a run replays bit
//! for bit (`SIM_SEED=… cargo test …`). A [`DriverModel`] stands for the driver between a
//! session and its socket: timer grain, batching, socket buffers.
//!
//! Layers: the simulator, its links and [`SimNode`] know nothing about Tox; [`NetCryptoNode`]
//! wraps a `rustox_net_crypto::Endpoint` with a bulk-transfer app; [`run_transfer`] runs one
//! measured transfer over a [`Profile`] and returns [`TransferMetrics`] — the piece the
//! benchmarks and `rustox sim` call. [`FileRun`] moves Tox files (rustox-file-transfer) between
//! two such hosts; [`run_sharing`] puts several sessions on one bottleneck. [`targets`] holds
//! the transport's acceptance targets (docs/transport.md §6).
//!
//! The scenario tests, the real-socket emulator and the benchmarks built on this crate are in
//! `auto_tests`.

mod driver_model;
mod files;
mod link;
mod metrics;
mod netcrypto;
mod node;
mod profiles;
mod seed;
mod shared;
mod sim;
mod summary;
pub mod targets;
mod trace;
mod transfer;

pub use driver_model::{driver_by_name, socket_truesize, DriverModel, DriverStats, TimerModel};
pub use files::{FileAction, FileHost, FileRun, FileSpec};
pub use link::{
    wire_bytes, Admission, Bottleneck, BottleneckConfig, DropCause, Jitter, Link, LinkConfig,
    LinkSample, LinkStats, LinkVerdict, LossModel, Reorder, IPV4_UDP_OVERHEAD, IPV6_UDP_OVERHEAD,
};
pub use metrics::{jain_index, percentile, utc_minute};
pub use netcrypto::NetCryptoNode;
pub use node::SimNode;
pub use profiles::{Profile, FULL_PAYLOAD, FULL_WIRE_PACKET};
pub use seed::{derive_rng, replay_command, seed_from_env, StreamKind, SEED_ENV};
pub use shared::{run_shared_bottleneck, run_sharing, SharedMetrics, ALONE_SETTLE_RTTS};
pub use sim::{LinkId, NodeId, SimError, SimStats, Simulator};
pub use summary::TransferSummary;
pub use trace::TraceHash;
pub use transfer::{
    controller_by_name, controller_name, controllers_by_names, deadline_for, host_addr,
    run_transfer, setup_pair, Pair, TransferMetrics, TransferSpec, CONTROLLERS,
};
