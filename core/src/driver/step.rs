//! The step driver: a [`Node`] on a non-blocking UDP socket, advanced one step at a time by
//! its caller, with no runtime and no thread of its own. It is what `tox_iterate` runs
//! (docs/design.md: the C API drives the node through this module): each step reads what the
//! socket holds, runs the node's due timers, and sends what the node has to send, then
//! returns; the caller sleeps until [`Stepper::next_wake`] and steps again.
//!
//! The discipline is the tokio driver's (str0m's): after every input, drain the outputs.
//! Events stay in the node for the caller to poll ([`Node::poll_event`]), because a C
//! client's callbacks must run after the node is released (they may call back into it).

use std::io;
use std::net::UdpSocket;
use std::os::fd::AsFd;
use std::time::Duration;

use rustox_net_crypto::Timestamp;

use super::instance_relay::InstanceRelay;
use super::relay_streams::RelayStreams;
use super::{batch_recv, gso, Clock};
use crate::node::Node;

/// Most receive batches one step reads: a step must return to its caller (whose callbacks
/// and file chunks wait for it) even while a fast peer keeps the socket full. 16 batches of
/// up to `batch_recv::SLOTS` datagrams (more with GRO) is ~0.5–8 MiB, a few ms of work.
pub const MAX_BATCHES_PER_STEP: usize = 16;

/// What one step read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepReport {
    /// Datagrams handed to the node.
    pub datagrams: usize,
    /// The step stopped at [`MAX_BATCHES_PER_STEP`] with the socket still holding more: the
    /// caller should step again at once.
    pub more_waiting: bool,
}

/// One node's socket, clock and buffers.
pub struct Stepper {
    socket: UdpSocket,
    clock: Clock,
    batch: batch_recv::RecvBatch,
    out: gso::Batch,
    ipv6_socket: bool,
    relays: RelayStreams,
    /// The instance's own TCP relay server, if it runs one.
    relay_server: Option<InstanceRelay>,
}

impl Stepper {
    /// A driver for a node on `socket` (non-blocking, as [`super::socket::bind`] makes it),
    /// with the time counted by `clock` (the one the node was created with).
    pub fn new(socket: UdpSocket, clock: Clock, gso_on: bool, gro: bool) -> Self {
        let batch = batch_recv::RecvBatch::new(&socket, gro);
        let ipv6_socket = socket.local_addr().is_ok_and(|a| a.is_ipv6());
        Stepper {
            socket,
            clock,
            batch,
            out: gso::Batch::new(gso_on),
            ipv6_socket,
            relays: RelayStreams::default(),
            relay_server: None,
        }
    }

    /// Runs `relay` beside the node: each step moves its onion packets (its clients'
    /// requests are read at the next step, so the caller's step interval bounds their
    /// delay; [`Self::has_relays`] keeps it short).
    pub fn set_relay_server(&mut self, relay: InstanceRelay) {
        self.relay_server = Some(relay);
    }

    /// The instance's relay server, if it runs one.
    pub fn relay_server(&self) -> Option<&InstanceRelay> {
        self.relay_server.as_ref()
    }

    /// The socket the node runs on.
    pub fn socket(&self) -> &UdpSocket {
        &self.socket
    }

    /// The current time on the node's clock.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// One step: the datagrams waiting (at most [`MAX_BATCHES_PER_STEP`] batches), the
    /// timers that are due, and every datagram the node then has to send. A failed send is
    /// counted on the node ([`Node::record_send_error`]) and the node carries on; only a
    /// socket that cannot be read at all is an error.
    pub fn step(&mut self, node: &mut Node) -> io::Result<StepReport> {
        self.flush(node);
        let mut report = StepReport {
            more_waiting: true,
            ..StepReport::default()
        };
        for _ in 0..MAX_BATCHES_PER_STEP {
            match self.batch.recv(self.socket.as_fd()) {
                Ok(_) => {
                    let clock = self.clock;
                    self.batch.for_each(|from, datagram| {
                        report.datagrams += 1;
                        node.handle_datagram(clock.now(), from, datagram);
                    });
                    if let Some(r) = self.relay_server.as_mut() {
                        r.service(node, clock.now());
                    }
                    self.flush(node);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    report.more_waiting = false;
                    break;
                }
                // An ICMP error about an earlier send surfaces on a read: not ours to stop for.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
                    ) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let now = self.clock.now();
        if node.poll_timeout().is_some_and(|t| t <= now) {
            node.handle_timeout(now);
        }
        self.relays.step(node, self.clock.now());
        if let Some(r) = self.relay_server.as_mut() {
            r.service(node, self.clock.now());
        }
        self.flush(node);
        Ok(report)
    }

    /// Sends every datagram the node has now. Events are left for the caller.
    pub fn flush(&mut self, node: &mut Node) {
        let now = self.clock.now();
        loop {
            match self
                .out
                .append_with(|buf| node.poll_transmit_into(now, buf))
            {
                gso::Appended::Nothing => break,
                gso::Appended::Joined => {}
                gso::Appended::SendFirst => {
                    if let Err((to, e)) =
                        gso::send_now(&mut self.out, &self.socket, self.ipv6_socket)
                    {
                        node.record_send_error(to, &e);
                    }
                }
            }
        }
        if let Err((to, e)) = gso::send_now(&mut self.out, &self.socket, self.ipv6_socket) {
            node.record_send_error(to, &e);
        }
    }

    /// True while the node has TCP relay connections or runs a relay server: bytes may
    /// arrive on them, and onion requests from the server's clients, at any time, so the
    /// caller should not sleep long.
    pub fn has_relays(&self) -> bool {
        self.relays.is_active() || self.relay_server.is_some()
    }

    /// How long until the node's next deadline, from now: what `tox_iteration_interval`
    /// returns. `None` when the node has no timer at all (it then waits for datagrams).
    pub fn next_wake(&self, node: &Node) -> Option<Duration> {
        let now = self.clock.now();
        node.poll_timeout()
            .map(|t| Duration::from_micros(t.as_micros().saturating_sub(now.as_micros())))
    }
}
