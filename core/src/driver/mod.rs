//! Drivers: the only code in this crate that touches sockets, clocks and threads.
//!
//! Without an async runtime (cargo feature `io`):
//! * [`socket`]: the node's UDP socket (large buffers, broadcast, dual stack) and the
//!   bootstrap workers' sockets.
//! * `batch_recv` and `gso`: one system call for many datagrams in each direction
//!   (`recvmmsg` with UDP GRO, `sendmsg` with UDP segmentation offload), non-blocking, so an
//!   async loop and a blocking one share them.
//! * `hashing_writer` and `prepare`: files hashed before they are offered and sinks that
//!   write and hash on a thread of their own.
//! * [`workers`]: the production UDP path for a DHT / bootstrap node, built after the
//!   opentracker lessons (docs/design.md lesson 4): one `SO_REUSEPORT` socket per worker, a
//!   blocking read per worker, a separate timer thread, per-worker counters summed on read.
//! * [`tcp_relay`]: the TCP relay server's thread (non-blocking sockets on `mio`), run by
//!   the bootstrap node beside its UDP workers; [`instance_relay`] the same server run by
//!   a Tox instance (`tcp_port`) beside its node.
//! * [`step`]: a node advanced one step at a time by its caller, with no runtime and no
//!   thread: what the C API's `tox_iterate` runs; [`relay_streams`] its TCP relay
//!   connections on non-blocking sockets.
//! * `keyfile`, [`clock`], `cpu_time`, [`wake_tally`] (what woke a driver, by cause).
//!
//! With tokio (cargo feature `tokio`), [`tokio`]: the async loop that runs a [`Node`] for
//! the commands and for embedding, and the DHT-only loop the workers were measured against.
//!
//! [`Node`]: crate::node::Node

pub(crate) mod batch_recv;
pub mod clock;
pub(crate) mod cpu_time;
pub(crate) mod gso;
pub(crate) mod hashing_writer;
pub mod instance_relay;
pub(crate) mod keyfile;
pub(crate) mod prepare;
pub(crate) mod proxy_stream;
pub(crate) mod relay_socket;
pub mod relay_streams;
pub mod socket;
pub mod step;
pub mod tcp_relay;
#[cfg(feature = "tokio")]
pub mod tokio;
pub mod wake_tally;
pub mod workers;

pub use clock::Clock;
pub use cpu_time::CpuTimer;
pub use prepare::{hashing_sink, prepare_file, sha256_of_file};
pub use wake_tally::WakeTally;

/// How the driver uses the OS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriverOptions {
    /// The timer it sleeps on.
    pub timer: TimerKind,
    /// Runs of equal-sized datagrams to one peer leave in one `sendmsg` with UDP
    /// segmentation offload (gso.rs). A kernel that refuses it for this socket gets
    /// datagrams one by one from then on.
    pub gso: bool,
    /// Ask the kernel to coalesce received datagrams (UDP GRO, batch_recv.rs).
    pub gro: bool,
}

impl Default for DriverOptions {
    /// The microsecond timer, segmentation and receive offload: every path is paced
    /// (docs/transport.md §3.7), and a gigabit LAN's pacing gaps are ~11 µs a packet. The pacer
    /// covers a late wake-up with burst credit, but on a fast, short path the credit it
    /// may take is half the BDP, so a millisecond timer would cap the rate there.
    fn default() -> Self {
        DriverOptions {
            timer: TimerKind::Precise,
            gso: true,
            gro: true,
        }
    }
}

impl DriverOptions {
    /// How late this driver's wake-ups may run, for [`TransportConfig::wake_lateness`]
    /// (the pacer measures it too; this covers a flow's first wake-ups). Measured on this
    /// project's 2-core VM: a timerfd with 1 ns slack woke 5–40 µs late when idle, more
    /// when the other core is busy; tokio's wheel 0.05–2.1 ms
    /// (simulator/src/driver_model.rs).
    ///
    /// [`TransportConfig::wake_lateness`]: rustox_net_crypto::TransportConfig::wake_lateness
    pub fn wake_lateness(&self) -> std::time::Duration {
        match self.timer {
            TimerKind::Precise => std::time::Duration::from_micros(100),
            TimerKind::Tokio => std::time::Duration::from_millis(2),
        }
    }
}

/// Which timer the driver sleeps on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    /// A timerfd with 1 ns timer slack (timer.rs).
    Precise,
    /// tokio's timer wheel: millisecond grain.
    Tokio,
}
