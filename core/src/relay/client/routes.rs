//! The routes of one relay connection: which peer each connection id stands for, and
//! whether the peer is there (docs/protocol.md §7; c-toxcore 0.2.18 `TCP_client.c`
//! `TCP_Client_Conn` and the `handle_TCP_client_*` notification handlers).
//!
//! A route starts with our routing request `[0][peer pk]`. The relay answers `[1][id][pk]`
//! with an id in 16..=255 (or 0: refused); from then on the route is *registered*. It is
//! *online* between a connect notification `[2][id]` and a disconnect notification
//! `[3][id]`: the relay sends the first once the peer has asked for a route to us too.
//! Data flows `[id][payload]` only on online routes.
//!
//! Differences from 0.2.18, none visible on the wire except that we free what we do not
//! use: a route removed while its request is unanswered is remembered, and its id is
//! released with a disconnect notification when the answer arrives (0.2.18 sends
//! `[3][16]` at once, which names whatever route holds id 16); an answer we never asked for
//! is released the same way (0.2.18 keeps the slot).

use std::collections::BTreeMap;

use rustox_net_crypto::crypto::PublicKey;

use crate::relay::wire::{NUM_CLIENT_CONNECTIONS, NUM_RESERVED_PORTS};

/// Where a route to one peer stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteStatus {
    /// Requested; the relay has not answered.
    Requested,
    /// The relay refused (its table for us is full).
    Refused,
    /// The relay gave it this wire id (16..=255); the peer has not asked for us.
    Registered(u8),
    /// Both sides asked: data flows under this wire id.
    Online(u8),
}

impl RouteStatus {
    /// The wire id of a registered or online route.
    pub fn wire_id(self) -> Option<u8> {
        match self {
            RouteStatus::Registered(id) | RouteStatus::Online(id) => Some(id),
            RouteStatus::Requested | RouteStatus::Refused => None,
        }
    }
}

/// What a notification from the relay changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RouteChange {
    /// Nothing a caller needs to know.
    None,
    /// The relay refused our request for this peer.
    Refused(PublicKey),
    /// The route to this peer came up (connect notification).
    Online(PublicKey),
    /// The route to this peer went down (disconnect notification); it stays registered.
    Offline(PublicKey),
    /// A wire id we hold but do not want: send `[3][id]` to release it.
    Release(u8),
}

/// Why a notification breaks the protocol. c-toxcore closes the connection on both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// A connect or disconnect notification naming a reserved id (below 16).
    #[error("notification for reserved id {0}")]
    ReservedId(u8),
}

/// Why a route could not be requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RouteRequestError {
    /// Already requested or held.
    #[error("route already requested")]
    Exists,
    /// Requests and held routes (including released ones still awaiting their answer)
    /// already number [`NUM_CLIENT_CONNECTIONS`], all a relay can give one client.
    #[error("route table full")]
    Full,
}

/// The route table of one relay connection. Holds at most [`NUM_CLIENT_CONNECTIONS`]
/// entries, counting requests cancelled before their answer.
#[derive(Debug, Default)]
pub(super) struct RouteTable {
    by_peer: BTreeMap<PublicKey, RouteStatus>,
    by_slot: BTreeMap<u8, PublicKey>,
    /// Requests we no longer want whose answer is still to come.
    cancelled: Vec<PublicKey>,
}

impl RouteTable {
    /// The status of the route to `peer`, if we asked for one.
    pub(super) fn status(&self, peer: &PublicKey) -> Option<RouteStatus> {
        self.by_peer.get(peer).copied()
    }

    /// The peer a data packet's wire id stands for (registered or online, as 0.2.18
    /// delivers data on either).
    pub(super) fn peer_of(&self, wire_id: u8) -> Option<&PublicKey> {
        let slot = wire_id.checked_sub(NUM_RESERVED_PORTS)?;
        self.by_slot.get(&slot)
    }

    /// Peers with a route entry, any status.
    pub(super) fn peers(&self) -> impl Iterator<Item = (&PublicKey, RouteStatus)> + '_ {
        self.by_peer.iter().map(|(pk, s)| (pk, *s))
    }

    /// Records a request about to be sent for `peer`.
    pub(super) fn request(&mut self, peer: PublicKey) -> Result<(), RouteRequestError> {
        if self.by_peer.contains_key(&peer) {
            return Err(RouteRequestError::Exists);
        }
        if self.by_peer.len() + self.cancelled.len() >= NUM_CLIENT_CONNECTIONS {
            return Err(RouteRequestError::Full);
        }
        self.by_peer.insert(peer, RouteStatus::Requested);
        Ok(())
    }

    /// Forgets the route to `peer`; the wire id to release with `[3][id]`, if it held one.
    pub(super) fn remove(&mut self, peer: &PublicKey) -> Option<u8> {
        match self.by_peer.remove(peer)? {
            RouteStatus::Requested => {
                self.cancelled.push(*peer);
                None
            }
            RouteStatus::Refused => None,
            RouteStatus::Registered(id) | RouteStatus::Online(id) => {
                self.by_slot.remove(&(id - NUM_RESERVED_PORTS));
                Some(id)
            }
        }
    }

    /// A routing response `[1][id][pk]`.
    pub(super) fn on_response(&mut self, wire_id: u8, peer: PublicKey) -> RouteChange {
        let Some(slot) = wire_id.checked_sub(NUM_RESERVED_PORTS) else {
            // 0 is the refusal; 1..=15 never come from a relay and 0.2.18 ignores them.
            return match self.by_peer.get_mut(&peer) {
                Some(s @ RouteStatus::Requested) => {
                    *s = RouteStatus::Refused;
                    RouteChange::Refused(peer)
                }
                _ => {
                    self.cancelled.retain(|c| *c != peer);
                    RouteChange::None
                }
            };
        };
        if self.by_slot.contains_key(&slot) {
            // 0.2.18 ignores an answer for an id it already holds.
            return RouteChange::None;
        }
        match self.by_peer.get_mut(&peer) {
            Some(s @ RouteStatus::Requested) => {
                *s = RouteStatus::Registered(wire_id);
                self.by_slot.insert(slot, peer);
                RouteChange::None
            }
            Some(RouteStatus::Registered(_) | RouteStatus::Online(_)) => RouteChange::None,
            Some(RouteStatus::Refused) | None => {
                self.cancelled.retain(|c| *c != peer);
                RouteChange::Release(wire_id)
            }
        }
    }

    /// A connect notification `[2][id]`.
    pub(super) fn on_connect(&mut self, wire_id: u8) -> Result<RouteChange, RouteError> {
        let Some(peer) = self.slot_peer(wire_id)?.copied() else {
            return Ok(RouteChange::None);
        };
        match self.by_peer.get_mut(&peer) {
            Some(s @ RouteStatus::Registered(_)) => {
                *s = RouteStatus::Online(wire_id);
                Ok(RouteChange::Online(peer))
            }
            _ => Ok(RouteChange::None),
        }
    }

    /// A disconnect notification `[3][id]`: the peer left; the route stays registered and
    /// comes back online if the peer asks again.
    pub(super) fn on_disconnect(&mut self, wire_id: u8) -> Result<RouteChange, RouteError> {
        let Some(peer) = self.slot_peer(wire_id)?.copied() else {
            return Ok(RouteChange::None);
        };
        match self.by_peer.get_mut(&peer) {
            Some(s @ RouteStatus::Online(_)) => {
                *s = RouteStatus::Registered(wire_id);
                Ok(RouteChange::Offline(peer))
            }
            _ => Ok(RouteChange::None),
        }
    }

    fn slot_peer(&self, wire_id: u8) -> Result<Option<&PublicKey>, RouteError> {
        let slot = wire_id
            .checked_sub(NUM_RESERVED_PORTS)
            .ok_or(RouteError::ReservedId(wire_id))?;
        Ok(self.by_slot.get(&slot))
    }
}
