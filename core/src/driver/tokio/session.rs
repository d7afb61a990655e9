//! The node driver: one [`Node`] on one UDP socket under tokio, the sans-IO node
//! untouched. How it uses the OS (timer, segmentation and receive offload) is the caller's
//! choice, in [`DriverOptions`]: the library reads no environment.
//!
//! str0m's discipline (docs/conventions.md): after every input, drain the outputs — events to the
//! application, datagrams to the socket — then sleep until a datagram arrives or the
//! node's own deadline ([`Node::poll_timeout`]) passes. There is no fixed tick: an idle
//! node wakes only when a timer of the protocol says so.
//!
//! The application is an [`App`]: it sees every [`NodeEvent`], may call the node's API in
//! response, and ends the loop by returning its output.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsFd;

use ::tokio::io::Interest;
use ::tokio::net::UdpSocket;
use rustox_net_crypto::Timestamp;

use super::relays::RelaySockets;
use super::timer;
use crate::driver::socket::for_socket;
use crate::driver::{batch_recv, gso, Clock, DriverOptions, TimerKind, WakeTally};
use crate::node::{Node, NodeEvent};

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

    /// A signal that wakes the loop from outside (another task has work for the node:
    /// the Rust API's calls). `None`: only the socket and the timers wake it.
    fn waker(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        None
    }

    /// The [`App::waker`] fired; `Some` ends the loop.
    fn on_wake(&mut self, _node: &mut Node, _now: Timestamp) -> Option<Self::Output> {
        None
    }

    /// Where the loop counts what woke it, by cause ([`WakeTally`]); `None`: not counted.
    fn wake_tally(&mut self) -> Option<&mut WakeTally> {
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
    let v6 = socket.local_addr().is_ok_and(|a| a.is_ipv6());
    // The microsecond timerfd unless it cannot be had.
    let timer = match options.timer {
        TimerKind::Precise => timer::PreciseTimer::new().ok(),
        TimerKind::Tokio => None,
    };
    let waker = app.waker();
    let mut relays = RelaySockets::default();
    loop {
        let now = clock.now();
        if let Some(output) = drain(node, socket, v6, &mut out, now, app).await? {
            return Ok(output);
        }
        relays.service(node, now);
        app.after_io(node, now);
        if app.poll_timeout().is_some_and(|t| t <= now) {
            if let Some(output) = app.on_timeout(node, now) {
                flush(node, socket, v6, &mut out, now).await?;
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
                let mut first = None;
                match socket.try_io(Interest::READABLE, || batch.recv(socket.as_fd())) {
                    Ok(_) => batch.for_each(|from, datagram| {
                        first = first.or(datagram.first().copied());
                        node.handle_datagram(clock.now(), from, datagram);
                    }),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => recv_error(e)?,
                }
                if let Some(tally) = app.wake_tally() {
                    tally.datagram(first);
                }
                // Under a steady flood the timer branch may lose every race: run it here.
                if deadline.is_some_and(|t| t <= clock.now()) {
                    node.handle_timeout(clock.now());
                }
            }
            Some((id, io)) = relays.next() => {
                if let Some(tally) = app.wake_tally() {
                    tally.other("relay");
                }
                relays.deliver(node, clock.now(), id, io);
            }
            // The app's own deadline is checked at the top of the loop.
            () = sleep => {
                let now = clock.now();
                if let Some(tally) = app.wake_tally() {
                    tally.timer(node.due_timers(now));
                }
                node.handle_timeout(now);
            }
            () = async {
                match &waker {
                    Some(w) => w.notified().await,
                    None => std::future::pending().await,
                }
            } => {
                if let Some(tally) = app.wake_tally() {
                    tally.other("app");
                }
                if let Some(output) = app.on_wake(node, clock.now()) {
                    flush(node, socket, v6, &mut out, clock.now()).await?;
                    return Ok(output);
                }
            }
        }
    }
}

/// Hands events to the app and datagrams to the socket until neither is left.
async fn drain<A: App>(
    node: &mut Node,
    socket: &UdpSocket,
    v6: bool,
    out: &mut gso::Batch,
    now: Timestamp,
    app: &mut A,
) -> Result<Option<A::Output>, DriverError> {
    loop {
        let mut quiet = true;
        while let Some(event) = node.poll_event() {
            quiet = false;
            if let Some(output) = app.on_event(node, now, event) {
                flush(node, socket, v6, out, now).await?;
                return Ok(Some(output));
            }
        }
        quiet &= !flush(node, socket, v6, out, now).await?;
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
    v6: bool,
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
                    record_send(node, send_batch(out, socket, v6).await);
                }
            }
        }
        record_send(node, send_batch(out, socket, v6).await);
        return Ok(any);
    }
    while let Some(t) = node.poll_transmit(now) {
        any = true;
        let result = socket
            .send_to(&t.payload, for_socket(t.destination, v6))
            .await;
        record_send(node, result.map(drop).map_err(|e| (t.destination, e)));
    }
    Ok(any)
}

/// Sends `out`'s pending batch, waiting while the socket's buffer is full; offload is
/// switched off only if the same datagrams then go out one by one (gso.rs).
async fn send_batch(
    out: &mut gso::Batch,
    socket: &UdpSocket,
    v6: bool,
) -> Result<(), (SocketAddr, io::Error)> {
    let Some(pending) = out.pending() else {
        return Ok(());
    };
    let destination = pending.destination;
    let to = for_socket(destination, v6);
    let mut refused = false;
    let result = match socket
        .async_io(Interest::WRITABLE, || pending.send_once(socket.as_fd(), to))
        .await
    {
        Err(e) if pending.count > 1 && gso::is_refusal(&e) => {
            let one_by_one = socket
                .async_io(Interest::WRITABLE, || {
                    pending.send_one_by_one(socket.as_fd(), to)
                })
                .await;
            refused = one_by_one.is_ok();
            one_by_one
        }
        other => other,
    };
    out.sent(refused);
    result.map_err(|e| (destination, e))
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
