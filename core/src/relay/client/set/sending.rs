//! Sending through the relays: to a peer on its online route or out of band, onion requests
//! through any relay, and which peers are reachable (0.2.18 `send_packet_tcp_connection`).

use std::net::SocketAddr;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::RelayClients;
use super::{RelayEvent, RelaySendError};
use crate::relay::client::connection::{SendError, MAX_DATA_SIZE};
use crate::relay::client::peers::MAX_FRIEND_TCP_CONNECTIONS;
use crate::relay::client::routes::RouteStatus;

impl RelayClients {
    /// Sends a net_crypto packet to `peer`: on the first online route, else out of band
    /// through every relay where our route is registered (0.2.18
    /// `send_packet_tcp_connection`).
    pub fn send_to_peer(
        &mut self,
        _now: Timestamp,
        peer: &PublicKey,
        packet: &[u8],
    ) -> Result<(), RelaySendError> {
        let Some(p) = self.peers.get(peer) else {
            return Err(RelaySendError::UnknownPeer);
        };
        if packet.is_empty() || packet.len() > MAX_DATA_SIZE {
            return Err(RelaySendError::Size(packet.len()));
        }
        // The peer's relays in its order (at most 6; no allocation on the data path).
        let mut found = [0usize; MAX_FRIEND_TCP_CONNECTIONS];
        let mut n = 0;
        for pk in p.relays.iter().take(MAX_FRIEND_TCP_CONNECTIONS) {
            if let Some(i) = self.relay_index(pk) {
                found[n] = i;
                n += 1;
            }
        }
        let relays = &found[..n];
        let mut full = false;
        for &i in relays {
            let Some(conn) = self.relays[i].established_mut() else {
                continue;
            };
            if let Some(RouteStatus::Online(_)) = conn.route_status(peer) {
                match conn.send_data(peer, packet) {
                    Ok(()) => return Ok(()),
                    Err(SendError::Full) => full = true,
                    Err(_) => {}
                }
            }
        }
        if full {
            return Err(RelaySendError::Full);
        }
        let mut sent = false;
        for &i in relays {
            let Some(conn) = self.relays[i].established_mut() else {
                continue;
            };
            if let Some(RouteStatus::Registered(_)) = conn.route_status(peer) {
                match conn.send_oob(peer, packet) {
                    Ok(()) => sent = true,
                    Err(SendError::Full) => full = true,
                    Err(_) => {}
                }
            }
        }
        match (sent, full) {
            (true, _) => Ok(()),
            (false, true) => Err(RelaySendError::Full),
            (false, false) => Err(RelaySendError::NoRoute),
        }
    }

    /// Sends `data` out of band to the client `dest` of the relay `relay_pk` (an answer to
    /// a [`RelayEvent::Oob`]; 0.2.18 `tcp_send_oob_packet_using_relay`).
    pub fn send_oob(
        &mut self,
        _now: Timestamp,
        relay_pk: &PublicKey,
        dest: &PublicKey,
        data: &[u8],
    ) -> Result<(), RelaySendError> {
        let conn = self
            .relay_index(relay_pk)
            .and_then(|i| self.relays[i].established_mut())
            .ok_or(RelaySendError::NoRoute)?;
        conn.send_oob(dest, data).map_err(send_error)
    }

    /// Sends an onion request (the body of TCP packet 8: `[nonce][ipport B][PK2][E(..)]`,
    /// `OnionRequest::tcp_request`) through an established relay, taking turns among
    /// them. The relay's address, for the path's records.
    pub fn send_onion(
        &mut self,
        _now: Timestamp,
        packet: &[u8],
    ) -> Result<SocketAddr, RelaySendError> {
        let n = self.relays.len();
        let mut result = Err(RelaySendError::NoRoute);
        for k in 0..n {
            let i = (self.onion_cursor + k) % n;
            let addr = self.relays[i].addr;
            let Some(conn) = self.relays[i].established_mut() else {
                continue;
            };
            match conn.send_onion(packet) {
                Ok(()) => {
                    self.onion_cursor = i + 1;
                    return Ok(addr);
                }
                Err(e) => {
                    result = Err(send_error(e));
                    if let Err(RelaySendError::Size(_)) = result {
                        return result;
                    }
                }
            }
        }
        result
    }

    /// Whether `peer` lists a relay we are connected to: packets to it can go at least out
    /// of band ([`Self::send_to_peer`]).
    pub fn has_peer_relays(&self, peer: &PublicKey) -> bool {
        self.peers.get(peer).is_some_and(|p| {
            p.relays.iter().any(|pk| {
                self.relay_index(pk)
                    .is_some_and(|i| self.relays[i].established().is_some())
            })
        })
    }

    /// Whether some relay has an online route to `peer`.
    pub fn is_peer_online(&self, peer: &PublicKey) -> bool {
        self.online_routes(peer) > 0
    }

    /// The relays with an online route to `peer`: where its relayed data goes.
    pub fn peer_relays(&self, peer: &PublicKey) -> Vec<(SocketAddr, PublicKey)> {
        let Some(p) = self.peers.get(peer) else {
            return Vec::new();
        };
        p.relays
            .iter()
            .filter_map(|pk| self.relay_index(pk))
            .filter(|&i| matches!(self.relays[i].route(peer), Some(RouteStatus::Online(_))))
            .map(|i| (self.relays[i].addr, self.relays[i].pk))
            .collect()
    }

    /// Established relays: what SHARE_RELAYS and DHT-PK packets advertise.
    pub fn connected_relays(&self) -> impl Iterator<Item = (SocketAddr, PublicKey)> + '_ {
        self.relays
            .iter()
            .filter(|r| r.established().is_some())
            .map(|r| (r.addr, r.pk))
    }

    /// Online routes to `peer`.
    pub(super) fn online_routes(&self, peer: &PublicKey) -> usize {
        let Some(p) = self.peers.get(peer) else {
            return 0;
        };
        p.relays
            .iter()
            .filter_map(|pk| self.relay_index(pk))
            .filter(|&i| matches!(self.relays[i].route(peer), Some(RouteStatus::Online(_))))
            .count()
    }

    /// Asks relay `i` for a route to `peer` if it is established and has none.
    pub(super) fn request_route(&mut self, now: Timestamp, i: usize, peer: PublicKey) {
        let relay = &mut self.relays[i];
        if let Some(conn) = relay.established_mut() {
            if conn.route_status(&peer).is_none() && conn.request_route(peer).is_ok() {
                relay.last_request = now;
            }
        }
    }

    /// Reports `peer`'s online state if it changed.
    pub(super) fn update_peer_online(&mut self, peer: &PublicKey) {
        let online = self.is_peer_online(peer);
        let Some(p) = self.peers.get_mut(peer) else {
            return;
        };
        if p.online != online {
            p.online = online;
            self.push_event(RelayEvent::PeerRoute {
                peer: *peer,
                online,
            });
        }
    }
}

pub(super) fn send_error(e: SendError) -> RelaySendError {
    match e {
        SendError::Full => RelaySendError::Full,
        SendError::Size(n) => RelaySendError::Size(n),
        SendError::NotEstablished
        | SendError::Failed(_)
        | SendError::NoRoute
        | SendError::Route(_) => RelaySendError::NoRoute,
    }
}
