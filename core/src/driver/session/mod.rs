//! The node driver: one [`Node`] on one UDP socket under tokio, the sans-IO node
//! untouched. How it uses the OS (timer, segmentation and receive offload) is the caller's
//! choice, in [`DriverOptions`]: the library reads no environment.
//!
//! str0m's discipline (STYLE.md): after every input, drain the outputs — events to the
//! application, datagrams to the socket — then sleep until a datagram arrives or the
//! node's own deadline ([`Node::poll_timeout`]) passes. There is no fixed tick: an idle
//! node wakes only when a timer of the protocol says so.
//!
//! The application is an [`App`]: it sees every [`NodeEvent`], may call the node's API in
//! response, and ends the loop by returning its output.

pub mod batch_recv;
pub mod gso;
pub mod hashing_writer;
pub mod prepare;
pub mod socket;
pub mod timer;

use std::io;
use std::net::SocketAddr;

use crate::driver::Clock;
use rustox_net_crypto::Timestamp;
use tokio::net::UdpSocket;

use crate::node::{Node, NodeEvent};
pub use prepare::{hashing_sink, prepare_file, sha256_of_file};

/// What drives a node: the commands (`demo`, `send`, `recv`) implement it.
pub trait App {
    /// What the loop returns when the application is done.
    type Output;

    /// An event happened; `Some` ends the loop (after the datagrams already queued are sent).
    fn on_event(
        &mut self,
        node: &mut Node,
        now: Timestamp,
        event: NodeEvent,
    ) -> Option<Self::Output>;

    /// Called once per loop turn, after the outputs were drained (progress bars).
    fn after_io(&mut self, _node: &mut Node, _now: Timestamp) {}

    /// The application's own next deadline (a watchdog), if any.
    fn poll_timeout(&self) -> Option<Timestamp> {
        None
    }

    /// The deadline from [`App::poll_timeout`] passed; `Some` ends the loop.
    fn on_timeout(&mut self, _node: &mut Node, _now: Timestamp) -> Option<Self::Output> {
        None
    }
}

/// Why the driver stopped before the application was done. A failed send of one datagram
/// is not a reason: it is counted on the node ([`Node::record_send_error`]) and the node
/// carries on, so a datagram crafted to draw a reply the OS refuses cannot stop it.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// Reading the socket failed.
    #[error("cannot receive: {0}")]
    Recv(io::Error),
}

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
    /// (transport.md §3.7), and a gigabit LAN's pacing gaps are ~11 µs a packet. The pacer
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
    /// (auto_tests/src/driver_model.rs).
    ///
    /// [`TransportConfig::wake_lateness`]: rustox_net_crypto::TransportConfig::wake_lateness
    pub fn wake_lateness(&self) -> std::time::Duration {
        match self.timer {
            TimerKind::Precise => std::time::Duration::from_micros(100),
            TimerKind::Tokio => std::time::Duration::from_millis(2),
        }
    }
}

/// Runs `node` on `socket` until `app` returns its output.
pub async fn run<A: App>(
    node: &mut Node,
    socket: &UdpSocket,
    clock: Clock,
    app: &mut A,
    options: DriverOptions,
) -> Result<A::Output, DriverError> {
    let mut batch = batch_recv::RecvBatch::new(socket, options.gro);
    let mut out = gso::Batch::new(options.gso);
    // The microsecond timerfd unless it cannot be had.
    let timer = match options.timer {
        TimerKind::Precise => timer::PreciseTimer::new().ok(),
        TimerKind::Tokio => None,
    };
    loop {
        let now = clock.now();
        if let Some(output) = drain(node, socket, &mut out, now, app).await? {
            return Ok(output);
        }
        app.after_io(node, now);
        if app.poll_timeout().is_some_and(|t| t <= now) {
            if let Some(output) = app.on_timeout(node, now) {
                flush(node, socket, &mut out, now).await?;
                return Ok(output);
            }
            continue;
        }
        let deadline = match (node.poll_timeout(), app.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let sleep = async {
            match (deadline, &timer) {
                (Some(t), Some(timer)) => {
                    if timer.sleep_until(clock.instant(t)).await.is_err() {
                        tokio::time::sleep_until(clock.instant(t).into()).await;
                    }
                }
                (Some(t), None) => tokio::time::sleep_until(clock.instant(t).into()).await,
                (None, _) => std::future::pending().await,
            }
        };
        tokio::select! {
            ready = socket.readable() => {
                ready.map_err(DriverError::Recv)?;
                // One `recvmmsg` per wake-up (up to `batch_recv::SLOTS` datagrams, more
                // with GRO), then the outputs are drained again: acknowledgements and
                // timers keep flowing while a fast peer floods us.
                match batch.recv(socket) {
                    Ok(_) => batch.for_each(|from, datagram| {
                        node.handle_datagram(clock.now(), from, datagram);
                    }),
                    Err(e) => recv_error(e)?,
                }
                // Under a steady flood the timer branch may lose every race: run it here.
                if deadline.is_some_and(|t| t <= clock.now()) {
                    node.handle_timeout(clock.now());
                }
            }
            // The app's own deadline is checked at the top of the loop.
            () = sleep => node.handle_timeout(clock.now()),
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

/// Hands events to the app and datagrams to the socket until neither is left.
async fn drain<A: App>(
    node: &mut Node,
    socket: &UdpSocket,
    out: &mut gso::Batch,
    now: Timestamp,
    app: &mut A,
) -> Result<Option<A::Output>, DriverError> {
    loop {
        let mut quiet = true;
        while let Some(event) = node.poll_event() {
            quiet = false;
            if let Some(output) = app.on_event(node, now, event) {
                flush(node, socket, out, now).await?;
                return Ok(Some(output));
            }
        }
        quiet &= !flush(node, socket, out, now).await?;
        if quiet {
            return Ok(None);
        }
    }
}

/// Sends every datagram the node has now; true when there was at least one. Runs of
/// equal-sized datagrams to one peer leave in one `sendmsg` with UDP segmentation offload
/// (gso.rs) when `out` uses it; `out` keeps its buffer from call to call.
async fn flush(
    node: &mut Node,
    socket: &UdpSocket,
    out: &mut gso::Batch,
    now: Timestamp,
) -> Result<bool, DriverError> {
    let mut any = false;
    if out.offload() {
        loop {
            match out.append_with(|buf| node.poll_transmit_into(now, buf)) {
                gso::Appended::Nothing => break,
                gso::Appended::Joined => any = true,
                gso::Appended::SendFirst => {
                    any = true;
                    record_send(node, out.send(socket).await);
                }
            }
        }
        record_send(node, out.send(socket).await);
        return Ok(any);
    }
    while let Some(t) = node.poll_transmit(now) {
        any = true;
        let result = socket.send_to(&t.payload, t.destination).await;
        record_send(node, result.map(drop).map_err(|e| (t.destination, e)));
    }
    Ok(any)
}

/// A send's outcome: a refused datagram is lost like one a congested link drops (the
/// transport resends what mattered, an unreachable peer times out, and the application
/// can say why from [`Node::io_counters`]).
fn record_send(node: &mut Node, result: Result<(), (SocketAddr, io::Error)>) {
    if let Err((to, error)) = result {
        node.record_send_error(to, &error);
    }
}

/// A failed read: the errors a UDP socket reports about earlier sends (an ICMP "port
/// unreachable" surfaces as ECONNREFUSED on the next read) are no reason to stop.
fn recv_error(e: io::Error) -> Result<(), DriverError> {
    match e.kind() {
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset => Ok(()),
        _ => Err(DriverError::Recv(e)),
    }
}
