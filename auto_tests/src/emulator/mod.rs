//! A real-socket link emulator: the simulator's own [`Link`](rustox_simulator::Link) models applied
//! to real IP packets travelling between two network namespaces (docs/design.md "Link profiles":
//! a simulated figure counts when the same profile on real sockets agrees with it).
//!
//! ```text
//!   namespace A (10.201.0.1)          root namespace                namespace B (10.201.0.2)
//!   process ── UDP/TCP ── tun A ──fd──▶ emulator thread ──fd──▶ tun B ── UDP/TCP ── process
//!                               ◀──────  Link B→A  ◀──────
//!                               ──────▶  Link A→B  ──────▶
//! ```
//!
//! Each TUN device is created in the root namespace and then moved into its own namespace;
//! its file descriptor stays with the emulator thread, which reads every IP packet the
//! namespace sends, passes it through that direction's `Link` with a timestamp from a
//! monotonic clock, and writes it into the other namespace at the arrival time the model
//! chose. The kernels on both sides are real: socket buffers, GSO segmentation, timers and
//! scheduling all happen as they would on a host, which is what the simulator cannot show.
//!
//! The host has no netem qdisc; a userspace emulator also keeps the link model identical to
//! the simulator's (same code, same seed streams), so a disagreement is about the endpoints,
//! not about two different link models.
//!
//! Requirements: root (namespaces, moving devices) and `/dev/net/tun`; see
//! [`check_prerequisites`]. Entry point: [`Testbed`].

mod calibration;
pub(crate) mod cli_transfer;
mod engine;
mod error;
mod hosts;
mod namespace;
mod packet;
mod plain;
mod sharing;
mod stats;
mod testbed;

pub use calibration::{calibrate, CalibrationReport, CalibrationSpec};
pub use cli_transfer::{
    rustox_beside_current_exe, CliOutcome, CliSummary, CliTransfer, CliTransferSpec,
};
pub use engine::EmulatorOptions;
pub use error::EmulatorError;
pub use hosts::{Side, TwoHosts};
pub use namespace::{remove_stale_namespaces, run_command, veth_into, NetNs, NAMESPACE_PREFIX};
pub use packet::{FlowKey, PacketInfo, PROTO_TCP, PROTO_UDP};
pub use plain::PlainLink;
pub use sharing::{merged, overlap, rates_bps, shares_by_half, shares_per_interval};
pub use stats::{
    DirectionStats, EmulatorReport, EmulatorStats, FlowSeries, LatenessHistogram, LatenessSummary,
    LinkCounters, UdpCounters,
};
pub use testbed::{check_prerequisites, Testbed, TestbedConfig, ADDR_A, ADDR_B};
