//! The nodes kept for one searched key — a friend's DHT key or one of the random "fake
//! friend" keys (docs/protocol.md §5.3, c-toxcore `DHT_Friend.client_list`, `replace_all`).
//!
//! Up to `MAX_FRIEND_CLIENTS` = 8 nodes closest to the key; a new node takes a bad node's
//! place first, otherwise the farthest one's if it is closer.

use std::cmp::Ordering;
use std::net::SocketAddr;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::client::ClientEntry;
use super::distance::cmp_distance;
use super::nat::NatState;
use super::timers::MAX_FRIEND_CLIENTS;

/// The lookup state for one key.
#[derive(Debug, Clone)]
pub struct SearchList {
    /// The searched key.
    pub pk: PublicKey,
    /// Up to eight nodes close to it.
    pub clients: Vec<ClientEntry>,
    /// When the last get-nodes for this key went to a random good node.
    pub last_get_node: Option<Timestamp>,
    /// Rounds done while bootstrapping (`bootstrap_times`).
    pub bootstrap_times: u32,
    /// Hole-punching state (unused for fake friends).
    pub nat: NatState,
    /// True for a random key searched only for diversity.
    pub fake: bool,
    /// The friend's session runs over direct UDP: its nodes are neither pinged nor asked
    /// until it stops (see [`super::DhtNode::set_search_dormant`]).
    pub dormant: bool,
}

impl SearchList {
    /// An empty search.
    pub fn new(pk: PublicKey, fake: bool, nat_ping_id: u64) -> Self {
        SearchList {
            pk,
            clients: Vec::with_capacity(MAX_FRIEND_CLIENTS),
            last_get_node: None,
            bootstrap_times: 0,
            nat: NatState::new(nat_ping_id),
            fake,
            dormant: false,
        }
    }

    /// The entry for `pk`.
    pub fn get(&self, pk: &PublicKey) -> Option<&ClientEntry> {
        self.clients.iter().find(|c| c.pk == *pk)
    }

    /// The entry for `pk`, mutably.
    pub fn get_mut(&mut self, pk: &PublicKey) -> Option<&mut ClientEntry> {
        self.clients.iter_mut().find(|c| c.pk == *pk)
    }

    /// Whether `pk` would be kept (present, free slot, a bad slot, or closer than the farthest).
    pub fn addable(&self, pk: &PublicKey, now: Timestamp) -> bool {
        if self.clients.len() < MAX_FRIEND_CLIENTS || self.clients.iter().any(|c| c.pk == *pk) {
            return true;
        }
        self.clients.iter().any(|c| !c.is_good(now))
            || self
                .farthest()
                .is_some_and(|f| cmp_distance(&self.pk, pk, &self.clients[f].pk) == Ordering::Less)
    }

    fn farthest(&self) -> Option<usize> {
        (0..self.clients.len())
            .max_by(|&a, &b| cmp_distance(&self.pk, &self.clients[a].pk, &self.clients[b].pk))
    }

    /// Records a node that answered us; returns true if it is kept.
    pub fn add(&mut self, pk: PublicKey, addr: SocketAddr, now: Timestamp) -> bool {
        if let Some(c) = self.get_mut(&pk) {
            c.heard_from(addr, now);
            return true;
        }
        if self.clients.len() < MAX_FRIEND_CLIENTS {
            self.clients.push(ClientEntry::new(pk, addr, now));
            return true;
        }
        let victim = self
            .clients
            .iter()
            .position(|c| !c.is_good(now))
            .or_else(|| {
                self.farthest()
                    .filter(|&f| cmp_distance(&self.pk, &pk, &self.clients[f].pk) == Ordering::Less)
            });
        match victim {
            Some(i) => {
                self.clients[i] = ClientEntry::new(pk, addr, now);
                true
            }
            None => false,
        }
    }

    /// Drops entries that are dead.
    pub fn expire(&mut self, now: Timestamp) {
        self.clients.retain(|c| !c.is_dead(now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_eight_closest() {
        let target = PublicKey([0; 32]);
        let mut s = SearchList::new(target, false, 1);
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let now = Timestamp::from_secs(1);
        for i in (1..=20u8).rev() {
            let mut k = [0u8; 32];
            k[0] = i;
            s.add(PublicKey(k), addr, now);
        }
        let mut firsts: Vec<u8> = s.clients.iter().map(|c| c.pk.0[0]).collect();
        firsts.sort();
        assert_eq!(firsts, (1..=8).collect::<Vec<u8>>());
        let mut far = [0u8; 32];
        far[0] = 50;
        assert!(!s.addable(&PublicKey(far), now));
    }
}
