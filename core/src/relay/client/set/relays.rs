//! The relay table: relays the node and its peers list, the peers' lists of relays, and
//! which relays are wanted, in use or forgotten (0.2.18 `TCP_connection.c`).

use std::net::SocketAddr;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::{AddRelayError, RelayId};
use super::{Link, Relay, RelayClients, MAX_FAILURES};
use crate::relay::client::backoff::Backoff;
use crate::relay::client::peers::{Peer, RECOMMENDED_FRIEND_TCP_CONNECTIONS};
use crate::relay::client::routes::RouteStatus;

impl RelayClients {
    /// Adds a relay the node chose (bootstrap options, the profile, `tox_add_tcp_relay`;
    /// 0.2.18 `add_tcp_relay_global`). It is kept for good and connected while fewer than
    /// [`RelayClientConfig::keep_connected`] relays are, or while a peer needs it. A relay
    /// known already (same key) is kept as it is, with a new address if it is not connected.
    pub fn add_relay(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        pk: PublicKey,
    ) -> Result<(), AddRelayError> {
        let i = self.relay_entry(now, addr, pk)?;
        self.relays[i].global = true;
        Ok(())
    }

    /// Adds a relay through which `peer` (by DHT key) can be reached: from its SHARE_RELAYS
    /// or DHT-PK packet, or the relay its handshake came through (0.2.18
    /// `add_tcp_relay_connection`). At most [`MAX_FRIEND_TCP_CONNECTIONS`] per peer; a relay
    /// we do not know yet is refused when the peer has
    /// [`RECOMMENDED_FRIEND_TCP_CONNECTIONS`] online routes. Adding one twice is harmless.
    pub fn add_peer_relay(
        &mut self,
        now: Timestamp,
        peer: PublicKey,
        addr: SocketAddr,
        relay_pk: PublicKey,
    ) -> Result<(), AddRelayError> {
        if peer == self.our_dht.public {
            return Err(AddRelayError::OwnKey);
        }
        if let Some(p) = self.peers.get(&peer) {
            if p.has_relay(&relay_pk) {
                return Ok(());
            }
            if p.is_full() {
                return Err(AddRelayError::PeerFull);
            }
        }
        if self.relay_index(&relay_pk).is_none()
            && self.online_routes(&peer) >= RECOMMENDED_FRIEND_TCP_CONNECTIONS
        {
            return Err(AddRelayError::Enough);
        }
        if self.peers.get(&peer).is_none() && self.peers.len() >= self.config.max_peers {
            return Err(AddRelayError::TooManyPeers);
        }
        let i = self.relay_entry(now, addr, relay_pk)?;
        let Some(p) = self.peers.entry(peer, self.config.max_peers) else {
            return Err(AddRelayError::TooManyPeers);
        };
        p.relays.push(relay_pk);
        self.relays[i].listed_by.push(peer);
        self.request_route(now, i, peer);
        Ok(())
    }

    /// Forgets `peer`: its routes are given up (the relays are told) and its relays may
    /// be closed if nothing else needs them.
    pub fn remove_peer(&mut self, peer: &PublicKey) {
        let Some(p) = self.peers.remove(peer) else {
            return;
        };
        for relay_pk in &p.relays {
            if let Some(i) = self.relay_index(relay_pk) {
                let relay = &mut self.relays[i];
                relay.listed_by.retain(|pk| pk != peer);
                if let Some(conn) = relay.established_mut() {
                    // A failure here (the relay stopped reading) shows at the next timeout.
                    let _ = conn.remove_route(peer);
                }
            }
        }
        self.unlisted = true;
        self.forget_unused_relays();
    }

    /// Whether `peer`'s session runs over direct UDP (0.2.18 `set_tcp_connection_to_status`
    /// with `!direct_connected`). While it does, its relays are kept only if something
    /// else needs them; when it stops, they are reconnected and the routes requested again.
    pub fn set_peer_direct(&mut self, now: Timestamp, peer: &PublicKey, direct: bool) {
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        if p.direct == direct {
            return;
        }
        p.direct = direct;
        if !direct {
            // Routes lost while direct (a relay closed meanwhile) are asked for again.
            let relays = p.relays.clone();
            for relay_pk in relays {
                if let Some(i) = self.relay_index(&relay_pk) {
                    self.request_route(now, i, *peer);
                }
            }
        }
    }

    pub(super) fn relay_index(&self, pk: &PublicKey) -> Option<usize> {
        self.relays.iter().position(|r| r.pk == *pk)
    }

    pub(super) fn index_of(&self, id: RelayId) -> Option<usize> {
        self.relays.iter().position(|r| r.id() == Some(id))
    }

    pub(super) fn fresh_id(&mut self) -> RelayId {
        loop {
            let id = RelayId(self.next_id);
            self.next_id = self.next_id.wrapping_add(1);
            if self.index_of(id).is_none() {
                return id;
            }
        }
    }

    /// The relay with key `pk`, added if unknown.
    pub(super) fn relay_entry(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        pk: PublicKey,
    ) -> Result<usize, AddRelayError> {
        if let Some(i) = self.relay_index(&pk) {
            let relay = &mut self.relays[i];
            if !relay.is_busy() {
                relay.addr = addr;
            }
            return Ok(i);
        }
        if self.relays.len() >= self.config.max_relays {
            return Err(AddRelayError::TooManyRelays);
        }
        self.relays.push(Relay {
            addr,
            pk,
            global: false,
            backoff: Backoff::default(),
            retry_at: now,
            listed_by: Vec::new(),
            last_request: Timestamp::ZERO,
            link: Link::Idle,
        });
        Ok(self.relays.len() - 1)
    }

    /// Whether a non-direct peer lists relay `i`.
    pub(super) fn is_wanted(&self, i: usize) -> bool {
        self.relays[i]
            .listed_by
            .iter()
            .any(|pk| self.peers.get(pk).is_some_and(|p| !p.direct))
    }

    /// Whether relay `i` has an online route to a non-direct peer.
    pub(super) fn is_in_use(&self, i: usize) -> bool {
        let relay = &self.relays[i];
        relay.listed_by.iter().any(|pk| {
            self.peers.get(pk).is_some_and(|p| !p.direct)
                && matches!(relay.route(pk), Some(RouteStatus::Online(_)))
        })
    }

    /// Takes relay `i` from the peers that list it, except those `keep` accepts.
    pub(super) fn unlink(&mut self, i: usize, keep: impl Fn(&Peer) -> bool) {
        let relay = &mut self.relays[i];
        let relay_pk = relay.pk;
        let peers = &mut self.peers;
        relay.listed_by.retain(|pk| match peers.get_mut(pk) {
            Some(p) if keep(p) => true,
            Some(p) => {
                p.relays.retain(|r| *r != relay_pk);
                false
            }
            None => false,
        });
        self.unlisted = true;
    }

    /// Forgets relays only peers listed once no peer lists them and they are idle, and
    /// those that failed [`MAX_FAILURES`] times in a row. Runs only after something was
    /// closed or unlinked.
    pub(super) fn forget_unused_relays(&mut self) {
        if !std::mem::take(&mut self.unlisted) {
            return;
        }
        let mut i = 0;
        while i < self.relays.len() {
            let relay = &self.relays[i];
            let failed_out = relay.backoff.failures() >= MAX_FAILURES;
            let forget =
                !relay.global && !relay.is_busy() && (relay.listed_by.is_empty() || failed_out);
            if forget {
                if failed_out {
                    self.stats.relays_forgotten += 1;
                }
                self.unlink(i, |_| false);
                self.relays.remove(i);
                if self.onion_cursor > i {
                    self.onion_cursor -= 1;
                }
            } else {
                i += 1;
            }
        }
        self.unlisted = false;
    }
}
