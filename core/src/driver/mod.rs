//! Drivers: the only code in this crate that touches sockets, clocks and threads.
//!
//! * [`workers`]: the production UDP path for a DHT / bootstrap node, built after the
//!   opentracker lessons (DESIGN.md lesson 4): one `SO_REUSEPORT` socket per worker, a
//!   blocking read per worker, a separate timer thread, per-worker counters summed on read.
//!   Each of these choices has its measurement beside the code that made it.
//! * [`tokio_driver`]: the thin async loop (one task: `select!` over the socket and the
//!   node's deadline), for embedding a node in an async application — and the baseline the
//!   blocking-read workers were measured against.
//! * [`keyfile`]: a bootstrap node's key pair across restarts.
//! * [`cpu_time`]: the CPU time a thread used, for benchmarks that report CPU per byte.
//! * [`session`]: net_crypto sessions and their file transfers on one UDP socket under
//!   tokio (`rustox send`, `recv`, `demo`), with batched receives, segmentation offload, a
//!   microsecond timer and a file writer/hasher thread.

pub mod clock;
pub mod cpu_time;
pub mod keyfile;
#[cfg(feature = "tokio")]
pub mod session;
pub mod socket;
#[cfg(feature = "tokio")]
pub mod tokio_driver;
pub mod workers;

pub use clock::Clock;
pub use cpu_time::CpuTimer;
