//! A Tox node that can leave: the scale run's [`SimNode`].
//!
//! When a peer leaves, the simulator stops routing to it ([`crate::sim::Simulator::remove_node`]);
//! emptying this wrapper then frees the node's memory, so that a churned network holds only
//! the nodes that are still in it and the memory figures are those of live nodes.

use std::net::SocketAddr;

use rustox_net_crypto::Timestamp;

use crate::node::SimNode;
use crate::tox_node::SimToxNode;

/// A whole Tox node, or nothing once it has left.
pub struct ScaleNode {
    inner: Option<Box<SimToxNode>>,
}

impl ScaleNode {
    /// A node that is in the network.
    pub fn new(node: SimToxNode) -> Self {
        ScaleNode {
            inner: Some(Box::new(node)),
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
        }
    }

    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        self.inner.as_deref_mut()?.poll_transmit(now)
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.inner.as_deref()?.poll_timeout()
    }
}
