//! Where announce and search replies get their nodes: the DHT's closest good nodes to a key
//! (docs/protocol.md §5.3, §6.3; c-toxcore `get_close_nodes`). The onion server and the DHT
//! announce server take it; the DHT node is what implements it.

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::node::DhtNode;
use super::wire::packed_node::PackedNode;

/// Where announce responses get their nodes: the DHT's closest good nodes to a key
/// (c-toxcore `get_close_nodes`). [`DhtNode`] implements it; tests pass a fake. The onion server's announce
/// responses and the DHT announce server's search replies both take it.
pub trait CloseNodes {
    /// Up to four nodes closest to `target`; LAN addresses only if `requester_on_lan`.
    fn closest_nodes(
        &self,
        now: Timestamp,
        target: &PublicKey,
        requester_on_lan: bool,
    ) -> Vec<PackedNode>;
}

impl CloseNodes for DhtNode {
    fn closest_nodes(
        &self,
        now: Timestamp,
        target: &PublicKey,
        requester_on_lan: bool,
    ) -> Vec<PackedNode> {
        DhtNode::closest_nodes(self, now, target, requester_on_lan)
    }
}

/// No DHT to ask: announce responses carry no nodes.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoNodes;

impl CloseNodes for NoNodes {
    fn closest_nodes(&self, _: Timestamp, _: &PublicKey, _: bool) -> Vec<PackedNode> {
        Vec::new()
    }
}
