//! A Tox node that can leave: the scale run's [`SimNode`].
//!
//! When a peer leaves, the simulator stops routing to it
//! ([`rustox_simulator::Simulator::remove_node`]); emptying this wrapper then frees the node's
//! memory, so that a churned network holds only the nodes that are still in it and the memory
//! figures are those of live nodes.
//!
//! It also stands in for one property of a real driver that the simulator lacks: by the
//! time a driver has run a node's timers and goes back to sleep, its clock has moved on, so
//! a deadline that is still "now" is met a moment later. In virtual time "now" does not
//! move, and a deadline left at now after the timers ran stops the run as a livelock. Two
//! things in core do that (see the scale report): a layer made due by a later layer in the
//! same turn (`Node::handle_timeout` feeds the onion client after running it), which one
//! more turn settles; and deadlines stuck at now for up to 3 s — the onion client's
//! announce to a node refused by a full `PingGuard` gets `not_before` = 0 (core
//! onion/client/nodes.rs `next_allowed` ignores the full-guard case), and the DHT's
//! `to_ping` credit a hair below 1.0 gives a wait under a microsecond that `Timestamp`
//! truncates to zero. A real driver spins on those, re-running the timers every few
//! microseconds until the refusal lifts; nothing is sent meanwhile. Here such a deadline
//! is moved [`STALL_STEP`] on and counted in [`ScaleNode::stalls`]: the same outcome —
//! the refused request goes out at most that much later — for a thousandth of the
//! simulation cost.

use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::Timestamp;
use rustox_simulator::SimNode;

use crate::tox_node::SimToxNode;

/// How far a deadline left at the instant the timers ran is moved on: one millisecond, the grain of
/// tokio's timer wheel (simulator/src/driver_model.rs `TOKIO_TICK`) — the finest a driver sleeping
/// on a timer would wait.
pub const STALL_STEP: Duration = Duration::from_millis(1);

/// A whole Tox node, or nothing once it has left.
pub struct ScaleNode {
    inner: Option<Box<SimToxNode>>,
    /// When the node's timers last ran.
    timers_ran_at: Option<Timestamp>,
    /// Times the node's deadline was still at or before now right after its timers ran.
    stalls: u64,
}

impl ScaleNode {
    /// A node that is in the network.
    pub fn new(node: SimToxNode) -> Self {
        ScaleNode {
            inner: Some(Box::new(node)),
            timers_ran_at: None,
            stalls: 0,
        }
    }

    /// The node, unless it has left.
    pub fn get(&self) -> Option<&SimToxNode> {
        self.inner.as_deref()
    }

    /// The node, unless it has left.
    pub fn get_mut(&mut self) -> Option<&mut SimToxNode> {
        self.inner.as_deref_mut()
    }

    /// Times the node asked to be woken at the instant its timers had just run (see the
    /// module doc); each such deadline was moved [`STALL_STEP`] on.
    pub fn stalls(&self) -> u64 {
        self.stalls
    }

    /// Drop the node, freeing everything it held.
    pub fn clear(&mut self) {
        self.inner = None;
    }
}

impl SimNode for ScaleNode {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, to: SocketAddr, bytes: &[u8]) {
        if let Some(n) = self.inner.as_deref_mut() {
            n.handle_datagram(now, from, to, bytes);
        }
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        if let Some(n) = self.inner.as_deref_mut() {
            n.handle_timeout(now);
            self.timers_ran_at = Some(now);
            if n.poll_timeout().is_some_and(|t| t <= now) {
                self.stalls += 1;
            }
        }
    }

    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        self.inner.as_deref_mut()?.poll_transmit(now)
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        let deadline = self.inner.as_deref()?.poll_timeout()?;
        match self.timers_ran_at {
            Some(ran) if deadline <= ran => Some(ran + STALL_STEP),
            _ => Some(deadline),
        }
    }
}
