//! The DHT node's routing table: which nodes enter the close list and the searched keys'
//! lists, which are asked next (the `to_bootstrap` and `to_ping` batches), and the closest
//! good nodes we answer a get-nodes with (docs/protocol.md §5.3).

use std::net::SocketAddr;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::{DhtEvent, DhtNode, MAX_CLOSE_TO_BOOTSTRAP_NODES};
use crate::dht::client::ClientEntry;
use crate::dht::distance::cmp_distance;
use crate::dht::lan::is_lan;
use crate::dht::timers::*;
use crate::dht::wire::nodes::MAX_SENT_NODES;
use crate::dht::wire::packed_node::PackedNode;

impl DhtNode {
    /// Up to 4 good nodes closest to `target` from every list (`get_close_nodes`); LAN
    /// addresses only for LAN requesters.
    pub fn closest_nodes(
        &self,
        now: Timestamp,
        target: &PublicKey,
        requester_on_lan: bool,
    ) -> Vec<PackedNode> {
        let mut best: Vec<PackedNode> = Vec::with_capacity(MAX_SENT_NODES + 1);
        let candidates = self
            .close
            .iter()
            .chain(self.searches.iter().flat_map(|s| s.clients.iter()));
        for entry in candidates {
            let Some(assoc) = entry.best_good(now) else {
                continue;
            };
            if is_lan(assoc.addr.ip()) && !requester_on_lan {
                continue;
            }
            if best.iter().any(|n| n.pk == entry.pk) {
                continue;
            }
            if best.len() == MAX_SENT_NODES {
                let last = &best[MAX_SENT_NODES - 1];
                if cmp_distance(target, &entry.pk, &last.pk) != std::cmp::Ordering::Less {
                    continue;
                }
                best.pop();
            }
            let node = PackedNode::udp(assoc.addr, entry.pk);
            let at = best
                .iter()
                .position(|n| cmp_distance(target, &node.pk, &n.pk) == std::cmp::Ordering::Less)
                .unwrap_or(best.len());
            best.insert(at, node);
        }
        best
    }

    /// A node answered a request of ours: it enters every list with room for it.
    pub(super) fn add_to_lists(&mut self, now: Timestamp, pk: PublicKey, addr: SocketAddr) {
        self.close.add(pk, addr, now);
        let mut found_friend = false;
        for s in &mut self.searches {
            if s.add(pk, addr, now) && s.pk == pk && !s.fake {
                found_friend = true;
            }
        }
        // A new node (or a new address of one) is asked for nodes in the next round, as
        // c-toxcore asks it on its next 1 s tick: that is how the lists fill.
        let unasked = |e: &ClientEntry| {
            e.assocs()
                .any(|a| a.addr == addr && a.last_pinged.is_none())
        };
        if self.close.get(&pk).is_some_and(unasked)
            || self
                .searches
                .iter()
                .any(|s| !s.dormant && s.get(&pk).is_some_and(unasked))
        {
            self.next_tick = self
                .next_tick
                .min(self.last_round.map_or(now, |t| t + DHT_TICK));
        }
        if found_friend {
            self.push_event(DhtEvent::FriendAddr { pk, addr });
        }
    }

    /// A node named in a send-nodes: ask it too if it would be kept somewhere
    /// (`ping_node_from_getnodes_ok`), through the bounded `to_bootstrap` lists.
    pub(super) fn consider_node(&mut self, now: Timestamp, node: PackedNode) {
        if node.pk == self.keys.public {
            return;
        }
        let known = |e: Option<&ClientEntry>| {
            e.is_some_and(|e| e.assocs().any(|a| a.addr == node.addr && a.is_good(now)))
        };
        let own = self.keys.public;
        if self.close.addable(&node.pk, now) && !known(self.close.get(&node.pk)) {
            insert_closest(
                &mut self.close_to_bootstrap,
                MAX_CLOSE_TO_BOOTSTRAP_NODES,
                node,
                &own,
            );
        }
        for (s, list) in self
            .searches
            .iter_mut()
            .zip(self.search_to_bootstrap.iter_mut())
        {
            // A paused search asks no one (its list keeps what answers bring it anyway).
            if s.dormant {
                continue;
            }
            let in_list = known(s.clients.iter().find(|c| c.pk == node.pk));
            if s.addable(&node.pk, now) && !in_list {
                insert_closest(list, MAX_SENT_NODES, node, &s.pk);
            }
        }
    }

    /// A node reported an address for a key: our own (what the world sees of us) or a
    /// friend's (used for hole punching) — `returnedip_ports`.
    pub(super) fn returned_ip(&mut self, now: Timestamp, node: PackedNode, returner: PublicKey) {
        let record = |entry: &mut ClientEntry| {
            if let Some(a) = entry.assoc_slot(node.addr).as_mut() {
                a.returned = Some((node.addr, now));
            }
        };
        if node.pk == self.keys.public {
            if let Some(e) = self.close.get_mut(&returner) {
                record(e);
            }
            return;
        }
        for s in self.searches.iter_mut().filter(|s| s.pk == node.pk) {
            if let Some(e) = s.get_mut(&returner) {
                record(e);
            }
        }
    }

    /// Someone pinged or asked us: ping them back later if they would fit the close list.
    pub(super) fn add_to_ping(&mut self, now: Timestamp, pk: PublicKey, addr: SocketAddr) {
        if !self.close.addable(&pk, now) {
            return;
        }
        if self
            .close
            .get(&pk)
            .is_some_and(|e| e.assocs().any(|a| a.addr == addr && a.is_good(now)))
        {
            return;
        }
        let own = self.keys.public;
        insert_closest(
            &mut self.to_ping,
            MAX_TO_PING,
            PackedNode::udp(addr, pk),
            &own,
        );
    }
}

/// Keeps `list` as the `max` nodes closest to `target`, replacing the farthest
/// (`add_to_list`).
fn insert_closest(list: &mut Vec<PackedNode>, max: usize, node: PackedNode, target: &PublicKey) {
    if list.iter().any(|n| n.pk == node.pk) {
        return;
    }
    if list.len() < max {
        list.push(node);
        return;
    }
    if let Some(far) =
        (0..list.len()).max_by(|&a, &b| cmp_distance(target, &list[a].pk, &list[b].pk))
    {
        if cmp_distance(target, &node.pk, &list[far].pk) == std::cmp::Ordering::Less {
            list[far] = node;
        }
    }
}
