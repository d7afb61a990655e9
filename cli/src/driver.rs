//! The node driver the commands run on (core's `driver::tokio`), with the switches this
//! binary takes from its environment: the library reads none.
//!
//! - `RUSTOX_TIMER=tokio`: sleep on tokio's millisecond timer instead of the timerfd (to
//!   measure what the timer costs);
//! - `RUSTOX_GSO=0`: send datagrams one by one, without segmentation offload;
//! - `RUSTOX_NO_GRO`: do not ask for receive offload.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;

use rustox_core::driver::tokio::{self as session, DriverError};
use rustox_core::driver::Clock;
use rustox_core::driver::{DriverOptions, TimerKind};
use tokio::net::UdpSocket;

pub use rustox_core::driver::tokio::App;
pub use rustox_core::driver::{hashing_sink, prepare_file, sha256_of_file, socket};
use rustox_core::node::Node;
use rustox_core::transport::{ControllerKind, TransportConfig};

/// The driver options this process runs with.
pub fn options() -> DriverOptions {
    DriverOptions {
        timer: match std::env::var("RUSTOX_TIMER").as_deref() {
            Ok("tokio") => TimerKind::Tokio,
            _ => TimerKind::Precise,
        },
        gso: std::env::var_os("RUSTOX_GSO").is_none_or(|v| v != "0"),
        gro: std::env::var_os("RUSTOX_NO_GRO").is_none(),
    }
}

/// How late this process's driver wakes up ([`DriverOptions::wake_lateness`]).
pub fn wake_lateness() -> Duration {
    options().wake_lateness()
}

/// The transport settings of a command's node: its congestion controller, and the wake-up
/// lateness of this process's driver ([`wake_lateness`]).
pub fn transport(controller: ControllerKind) -> TransportConfig {
    TransportConfig {
        controller,
        wake_lateness: wake_lateness(),
    }
}

/// The single-threaded async runtime a command's node runs on.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Runs `node` on `socket` until `app` is done, with this process's [`options`].
pub async fn run<A: App>(
    node: &mut Node,
    socket: &UdpSocket,
    clock: Clock,
    app: &mut A,
) -> Result<A::Output, DriverError> {
    session::run(node, socket, clock, app, options()).await
}

/// Binds the one UDP socket a command runs on.
pub fn bind(addr: SocketAddr) -> Result<std::net::UdpSocket, socket::BindError> {
    socket::bind(addr)
}
