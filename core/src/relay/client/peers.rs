//! The relays each peer can be reached through (c-toxcore 0.2.18 `TCP_connection.c`
//! `TCP_Connection_to`), keyed by the peer's DHT public key, the key the relay knows it by.
//!
//! A peer's relays come from its SHARE_RELAYS packets and DHT-PK announcements (docs/protocol.md
//! §4, §6.4) and from the relays a handshake arrived through. Where each route stands lives
//! in the relay's connection (routes.rs); a peer only lists its relays, in the order they
//! were added, which is the order sends try them in.

use std::collections::BTreeMap;

use rustox_net_crypto::crypto::PublicKey;

/// `MAX_FRIEND_TCP_CONNECTIONS` (`TCP_connection.h`): relays one peer may be reached through.
pub const MAX_FRIEND_TCP_CONNECTIONS: usize = 6;
/// `RECOMMENDED_FRIEND_TCP_CONNECTIONS` = 6 / 2 (`TCP_connection.h`): a peer with this many
/// online routes gets no new relay connection (`add_tcp_relay_connection`); relays we are
/// connected to anyway are still added.
pub const RECOMMENDED_FRIEND_TCP_CONNECTIONS: usize = MAX_FRIEND_TCP_CONNECTIONS / 2;

/// One peer.
#[derive(Debug, Clone, Default)]
pub(super) struct Peer {
    /// Relay keys, at most [`MAX_FRIEND_TCP_CONNECTIONS`], oldest first. The relay set
    /// keeps the other direction (which peers list a relay) beside each relay.
    pub(super) relays: Vec<PublicKey>,
    /// The session runs over direct UDP: this peer keeps none of its relays connected
    /// (0.2.18 `set_tcp_connection_to_status(.., false)`, "sleeping").
    pub(super) direct: bool,
    /// Whether an online route existed when last reported in a `PeerRoute` event.
    pub(super) online: bool,
}

impl Peer {
    /// Whether `relay` is one of this peer's relays.
    pub(super) fn has_relay(&self, relay: &PublicKey) -> bool {
        self.relays.contains(relay)
    }

    /// Whether another relay fits.
    pub(super) fn is_full(&self) -> bool {
        self.relays.len() >= MAX_FRIEND_TCP_CONNECTIONS
    }
}

/// Every peer, bounded.
#[derive(Debug, Default)]
pub(super) struct Peers {
    map: BTreeMap<PublicKey, Peer>,
}

impl Peers {
    pub(super) fn get(&self, pk: &PublicKey) -> Option<&Peer> {
        self.map.get(pk)
    }

    pub(super) fn get_mut(&mut self, pk: &PublicKey) -> Option<&mut Peer> {
        self.map.get_mut(pk)
    }

    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// The peer, created if absent and fewer than `max` exist.
    pub(super) fn entry(&mut self, pk: PublicKey, max: usize) -> Option<&mut Peer> {
        if !self.map.contains_key(&pk) && self.map.len() >= max {
            return None;
        }
        Some(self.map.entry(pk).or_default())
    }

    pub(super) fn remove(&mut self, pk: &PublicKey) -> Option<Peer> {
        self.map.remove(pk)
    }
}
