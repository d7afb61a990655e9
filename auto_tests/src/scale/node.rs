//! A Tox node that can leave: the scale run's [`SimNode`].
//!
//! When a peer leaves, the simulator stops routing to it ([`crate::sim::Simulator::remove_node`]);
//! emptying this wrapper then frees the node's memory, so that a churned network holds only
//! the nodes that are still in it and the memory figures are those of live nodes.
//!
//! It also stands in for one property of a real driver that the simulator lacks: by the
//! time a driver has run a node's timers and goes back to sleep, its clock has moved on, so
//! a deadline that is still "now" is met a moment later. In virtual time "now" does not
//! move, and a deadline that stays at now after the timers ran would stop the run as a
//! livelock. The DHT's `to_ping` credit does that (core/src/dht/node.rs `to_ping_due`: a
//! credit a hair below 1.0 gives a wait under a microsecond, which `Timestamp` truncates to
//! zero, and a refill over zero time adds nothing). Such a deadline is moved one
//! microsecond on — the least a real clock advances — and counted in
//! [`ScaleNode::stalls`], so the report shows how often it happened.

use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::Timestamp;

use crate::node::SimNode;
use crate::tox_node::SimToxNode;

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
    /// module doc): each cost one microsecond of virtual time.
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
            Some(ran) if deadline <= ran => Some(ran + Duration::from_micros(1)),
            _ => Some(deadline),
        }
    }
}
