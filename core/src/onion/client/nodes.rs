//! The announce nodes of one list — ours or one friend's — and the per-node ping ceiling
//! (docs/protocol.md §6.6; c-toxcore 0.2.18 `onion_client.c` `Onion_Node`, `client_add_to_list`,
//! `onion_node_timed_out`, `good_to_ping`).
//!
//! A list keeps the nodes closest to a reference key (our real key: 12 nodes; a friend's
//! real key: 8) that answered us. A node that stops answering times out after
//! [`ONION_NODE_MAX_PINGS`] unanswered requests and [`ONION_NODE_TIMEOUT`], and is removed.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use crate::dht::distance::cmp_distance;
use crate::onion::wire::announce::PingId;

/// `ONION_NODE_PING_INTERVAL` (`onion_client.h`): 15 s.
pub const ONION_NODE_PING_INTERVAL: Duration = Duration::from_secs(15);
/// `ONION_NODE_TIMEOUT` = `ONION_NODE_PING_INTERVAL` (`onion_client.h`).
pub const ONION_NODE_TIMEOUT: Duration = ONION_NODE_PING_INTERVAL;
/// `ONION_NODE_MAX_PINGS` (`onion_client.h`): unanswered requests before a node is given
/// up (after [`ONION_NODE_TIMEOUT`]).
pub const ONION_NODE_MAX_PINGS: u8 = 3;
/// The ceiling on requests from one list to one node (docs/protocol.md §6.7: "3 s between pings
/// to one node", = `ANNOUNCE_INTERVAL_NOT_ANNOUNCED` and `ANNOUNCE_FRIEND_NEW_INTERVAL`,
/// the shortest interval at which 0.2.18 re-pings a listed node).
pub const MIN_PING_SPACING: Duration = Duration::from_secs(3);
/// Requests remembered by a `PingGuard`. When every slot holds a request younger than
/// [`MIN_PING_SPACING`] no new node can be asked: the list's request rate is capped at
/// 64 per 3 s (c-toxcore's `MAX_STORED_PINGED_NODES` is 9 with a 10 s window, but it only
/// guards nodes learned from responses).
pub const PING_GUARD_SIZE: usize = 64;

/// One announce node (c-toxcore `Onion_Node`).
#[derive(Debug, Clone)]
pub(super) struct OnionNode {
    pub(super) pk: PublicKey,
    pub(super) addr: SocketAddr,
    /// The last ping id it gave us (self list: sent back to stay announced).
    pub(super) ping_id: PingId,
    /// Self list: we are announced here. Friend list: the friend is announced here and
    /// `data_pk` holds its data key.
    pub(super) is_stored: bool,
    /// Friend list: the friend's data public key, from `is_stored` 1.
    pub(super) data_pk: Option<PublicKey>,
    /// When it entered the list.
    pub(super) added: Timestamp,
    /// The last request sent to it, if any since it was added.
    pub(super) last_pinged: Option<Timestamp>,
    /// Requests since its last response.
    pub(super) pings_since_response: u8,
    /// The path of its last response (`path_used`); `None` if that path was replaced.
    pub(super) path_used: Option<u32>,
    /// Not to be asked before this (set when the ping guard refused a due request).
    pub(super) not_before: Timestamp,
}

impl OnionNode {
    /// `onion_node_timed_out`: three unanswered requests, the last one 15 s old.
    pub(super) fn timed_out(&self, now: Timestamp) -> bool {
        self.pings_since_response >= ONION_NODE_MAX_PINGS
            && self
                .last_pinged
                .is_none_or(|t| t + ONION_NODE_TIMEOUT <= now)
    }

    /// When [`Self::timed_out`] becomes true, if it can.
    pub(super) fn timeout_at(&self) -> Option<Timestamp> {
        (self.pings_since_response >= ONION_NODE_MAX_PINGS)
            .then(|| self.last_pinged.unwrap_or(Timestamp::ZERO) + ONION_NODE_TIMEOUT)
    }
}

/// What a response said about the list's key at that node.
#[derive(Debug, Clone, Copy)]
pub(super) struct NodeAnswer {
    pub(super) is_stored: bool,
    pub(super) ping_id: Option<PingId>,
    pub(super) data_pk: Option<PublicKey>,
}

/// The nodes closest to `reference` that answered, at most `capacity`.
#[derive(Debug)]
pub(super) struct NodeList {
    reference: PublicKey,
    capacity: usize,
    pub(super) nodes: Vec<OnionNode>,
}

impl NodeList {
    pub(super) fn new(reference: PublicKey, capacity: usize) -> Self {
        NodeList {
            reference,
            capacity,
            nodes: Vec::with_capacity(capacity),
        }
    }

    /// Forgets every node and gives the room back.
    pub(super) fn clear(&mut self) {
        self.nodes = Vec::new();
    }

    /// Removes the timed-out nodes (c-toxcore leaves them as free slots); returns how many.
    pub(super) fn remove_timed_out(&mut self, now: Timestamp) -> usize {
        let before = self.nodes.len();
        self.nodes.retain(|n| !n.timed_out(now));
        before - self.nodes.len()
    }

    pub(super) fn contains(&self, pk: &PublicKey) -> bool {
        self.nodes.iter().any(|n| n.pk == *pk)
    }

    /// The farthest node, if the list is full.
    fn farthest_if_full(&self) -> Option<usize> {
        if self.nodes.len() < self.capacity {
            return None;
        }
        (0..self.nodes.len())
            .max_by(|&a, &b| cmp_distance(&self.reference, &self.nodes[a].pk, &self.nodes[b].pk))
    }

    /// True if `pk` would get a place: the list has room, or `pk` is closer than its
    /// farthest node (`client_ping_nodes`' test before pinging a node from a response).
    pub(super) fn wants(&self, pk: &PublicKey) -> bool {
        if self.contains(pk) {
            return false;
        }
        match self.farthest_if_full() {
            None => true,
            Some(i) => {
                cmp_distance(&self.reference, pk, &self.nodes[i].pk) == std::cmp::Ordering::Less
            }
        }
    }

    /// `client_add_to_list`: updates a listed node, or adds an answering node if it has a
    /// place (replacing the farthest). `pinged` is when the answered request was sent: a
    /// new node counts as pinged then, so its next request waits one interval (c-toxcore
    /// waits one interval after adding it too, by skipping its first pass). Returns the
    /// node's index, or `None` if it is farther than every listed node.
    pub(super) fn add(
        &mut self,
        now: Timestamp,
        pk: PublicKey,
        addr: SocketAddr,
        answer: NodeAnswer,
        path_used: Option<u32>,
        pinged: Timestamp,
    ) -> Option<usize> {
        let index = match self.nodes.iter().position(|n| n.pk == pk) {
            Some(i) => i,
            None => {
                if !self.wants(&pk) {
                    return None;
                }
                let node = OnionNode {
                    pk,
                    addr,
                    ping_id: [0; 32],
                    is_stored: false,
                    data_pk: None,
                    added: now,
                    last_pinged: Some(pinged),
                    pings_since_response: 0,
                    path_used,
                    not_before: Timestamp::ZERO,
                };
                match self.farthest_if_full() {
                    Some(i) => {
                        self.nodes[i] = node;
                        i
                    }
                    None => {
                        self.nodes.push(node);
                        self.nodes.len() - 1
                    }
                }
            }
        };
        let n = &mut self.nodes[index];
        n.addr = addr;
        n.is_stored = answer.is_stored;
        if let Some(p) = answer.ping_id {
            n.ping_id = p;
        }
        if answer.data_pk.is_some() {
            n.data_pk = answer.data_pk;
        }
        n.pings_since_response = 0;
        n.path_used = path_used;
        Some(index)
    }

    /// Live nodes, and of those the ones with `is_stored`.
    pub(super) fn counts(&self, now: Timestamp) -> (usize, usize) {
        let live = self.nodes.iter().filter(|n| !n.timed_out(now));
        let (mut num, mut stored) = (0, 0);
        for n in live {
            num += 1;
            stored += usize::from(n.is_stored);
        }
        (num, stored)
    }
}

/// The requests one list sent in the last [`MIN_PING_SPACING`]: no node gets a second
/// one in that time, except the single follow-up that answers a fresh ping id.
#[derive(Debug, Default)]
pub(super) struct PingGuard {
    recent: VecDeque<(PublicKey, Timestamp)>,
}

impl PingGuard {
    fn purge(&mut self, now: Timestamp) {
        while let Some((_, t)) = self.recent.front() {
            if *t + MIN_PING_SPACING <= now {
                self.recent.pop_front();
            } else {
                break;
            }
        }
        // A burst (a search's first round) must not leave every friend's guard holding
        // room for 64 entries: give it back once the guard is nearly empty.
        if self.recent.len() <= 2 && self.recent.capacity() > 8 {
            self.recent.shrink_to(4);
        }
    }

    /// Records a request to `pk` if none went to it in the last 3 s and the guard has room.
    pub(super) fn allow(&mut self, now: Timestamp, pk: &PublicKey) -> bool {
        self.purge(now);
        if self.recent.len() >= PING_GUARD_SIZE || self.recent.iter().any(|(k, _)| k == pk) {
            return false;
        }
        self.recent.push_back((*pk, now));
        true
    }

    /// Records the follow-up that carries a ping id just received: allowed if `pk` got at
    /// most one request in the last 3 s.
    pub(super) fn allow_follow_up(&mut self, now: Timestamp, pk: &PublicKey) -> bool {
        self.purge(now);
        if self.recent.len() >= PING_GUARD_SIZE
            || self.recent.iter().filter(|(k, _)| k == pk).count() >= 2
        {
            return false;
        }
        self.recent.push_back((*pk, now));
        true
    }

    /// When `pk` may next be asked: 3 s after its own last request, and while the guard is
    /// full, not before its oldest entry expires (else a refused node would be due again at
    /// once, and the caller would spin until then).
    pub(super) fn next_allowed(&self, pk: &PublicKey) -> Timestamp {
        let own = self
            .recent
            .iter()
            .filter(|(k, _)| k == pk)
            .map(|(_, t)| *t + MIN_PING_SPACING)
            .max()
            .unwrap_or(Timestamp::ZERO);
        let room = if self.recent.len() >= PING_GUARD_SIZE {
            self.recent
                .front()
                .map_or(Timestamp::ZERO, |(_, t)| *t + MIN_PING_SPACING)
        } else {
            Timestamp::ZERO
        };
        own.max(room)
    }

    pub(super) fn len(&self) -> usize {
        self.recent.len()
    }
}
