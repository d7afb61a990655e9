//! The node's TCP relays (docs/protocol.md §2.9, §4, §7): the relay clients
//! ([`RelayClients`]) and what flows between them and the other layers.
//!
//! * Relays come from the application (`tox_add_tcp_relay`, bootstrap options, the profile)
//!   and from friends (SHARE_RELAYS, the TCP nodes of their DHT-PK packets, the relay a
//!   handshake came through). A friend's relays are registered under its DHT key, which is
//!   how relays name clients.
//! * Session datagrams the endpoint sends to [`Destination::Relay`] go to the friend's
//!   relays; relayed datagrams come back to the endpoint by the sender's DHT key. A route
//!   that comes up or goes down tells the endpoint whether the relay path exists.
//! * Out-of-band packets from a client we have no route with (a cookie request or the
//!   handshake of a friend who found us through a relay) are answered out of band through
//!   the relay they came through, remembered in a small table ([`OobReturns`]).
//! * The driver owns the TCP sockets: [`Node::poll_relay_connect`], the `handle_relay_*`
//!   inputs and [`Node::relay_write`] / [`Node::relay_consume`] / [`Node::poll_relay_close`].

use std::collections::VecDeque;
use std::net::SocketAddr;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::packets::PacketKind;
use rustox_net_crypto::{PathKind, Timestamp};

use super::friends::FriendNumber;
use super::{Node, NodeError};
use crate::dht::wire::packed_node::PackedNode;
use crate::relay::client::set::AddRelayError;
use crate::relay::client::{RelayEvent, RelayId, RelaySendError};

/// Out-of-band senders remembered so an answer can go back through the relay their packet
/// came through (ours: c-toxcore answers at once inside its OOB callback). A stranger can
/// fill it, so it is small and the oldest entry goes first.
pub const MAX_OOB_RETURNS: usize = 64;

/// Relays a DHT-PK packet carries at most, before the DHT nodes (docs/protocol.md §6.4:
/// "up to 2 TCP relays we use").
pub const MAX_DHTPK_RELAYS: usize = 2;

/// Friends' relays attached when a session is dialled (`connect_to_saved_tcp_relays`:
/// half of `MAX_FRIEND_TCP_CONNECTIONS`).
pub const DIAL_RELAYS: usize = 3;

/// The relay each recent out-of-band sender came through, newest last.
#[derive(Debug, Default)]
pub(super) struct OobReturns {
    entries: VecDeque<(PublicKey, SocketAddr, PublicKey)>,
}

impl OobReturns {
    fn note(&mut self, from: PublicKey, relay_addr: SocketAddr, relay_pk: PublicKey) {
        self.entries.retain(|(pk, _, _)| *pk != from);
        if self.entries.len() >= MAX_OOB_RETURNS {
            self.entries.pop_front();
        }
        self.entries.push_back((from, relay_addr, relay_pk));
    }

    fn get(&self, from: &PublicKey) -> Option<(SocketAddr, PublicKey)> {
        self.entries
            .iter()
            .rev()
            .find(|(pk, _, _)| pk == from)
            .map(|(_, addr, relay)| (*addr, *relay))
    }
}

impl Node {
    /// Adds a TCP relay to connect through (`tox_add_tcp_relay`; bootstrap options) and
    /// keeps it for the profile.
    pub fn add_tcp_relay(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        pk: PublicKey,
    ) -> Result<(), AddRelayError> {
        self.relays.add_relay(now, addr, pk)?;
        self.keep_tcp_relay(addr, pk);
        Ok(())
    }

    /// A TCP relay through which a friend can be reached (what its SHARE_RELAYS or DHT-PK
    /// packets would tell; for a friend added with its keys and relay known out of band).
    pub fn add_friend_relay(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        addr: SocketAddr,
        pk: PublicKey,
    ) -> Result<(), NodeError> {
        let node = PackedNode {
            addr,
            pk,
            tcp: true,
        };
        let f = self
            .friends
            .get_mut(friend)
            .ok_or(NodeError::UnknownFriend)?;
        f.conn.add_tcp_relay(node);
        if let Some(dht_pk) = f.conn.dht_pk() {
            if self.attach_friend_relays(now, dht_pk, &[node]) {
                self.dial_waiting_friend(now, friend);
            }
        }
        self.drive_friend(now, friend);
        self.after_input(now);
        Ok(())
    }

    /// Relays whose handshake completed: what SHARE_RELAYS and DHT-PK packets advertise.
    pub fn connected_relays(&self) -> Vec<(SocketAddr, PublicKey)> {
        self.relays.connected_relays().collect()
    }

    /// Whether some relay has an online route to the peer with this DHT key.
    pub fn relay_route_online(&self, peer_dht_pk: &PublicKey) -> bool {
        self.relays.is_peer_online(peer_dht_pk)
    }

    /// The relays through which a friend is reached now (an online route to its DHT key):
    /// what an application shows as "through relay X".
    pub fn friend_relays(&self, friend: FriendNumber) -> Vec<(SocketAddr, PublicKey)> {
        match self.friend_dht_key(friend) {
            Some(dht_pk) => self.relays.peer_relays(&dht_pk),
            None => Vec::new(),
        }
    }

    /// The path a friend's session data travels on now (docs/protocol.md §2.9: UDP while it was
    /// heard from within 8 s, the relays otherwise); `None` without a session.
    pub fn friend_data_path(&self, now: Timestamp, friend: FriendNumber) -> Option<PathKind> {
        let id = self.friends.get(friend)?.session?;
        self.endpoint.connection(id)?.data_path(now)
    }

    /// The UDP address a friend's session knows for it (whether or not UDP works now).
    pub fn friend_udp_addr(&self, friend: FriendNumber) -> Option<SocketAddr> {
        let id = self.friends.get(friend)?.session?;
        self.endpoint.connection(id)?.peer_addr()
    }

    // ----- the driver's side -------------------------------------------------------------

    /// The next relay to open a TCP connection to, with the id to use in the calls about
    /// it. Call until `None` after every input.
    pub fn poll_relay_connect(&mut self, now: Timestamp) -> Option<(RelayId, SocketAddr)> {
        self.relays.poll_connect(now)
    }

    /// The TCP connection `id` is up.
    pub fn handle_relay_connected(&mut self, now: Timestamp, id: RelayId) {
        self.relays.handle_connected(now, id, self.rng.as_mut());
        self.after_relay_input(now);
    }

    /// Bytes read from relay connection `id`.
    pub fn handle_relay_bytes(&mut self, now: Timestamp, id: RelayId, bytes: &[u8]) {
        self.relays.handle_bytes(now, id, bytes);
        self.after_relay_input(now);
    }

    /// Relay connection `id` failed or was closed by the other side.
    pub fn handle_relay_closed(&mut self, now: Timestamp, id: RelayId) {
        self.relays.handle_closed(now, id);
        self.after_relay_input(now);
    }

    /// The next record to write to relay connection `id` (whole frames; write it with one
    /// send, `driver::relay_socket::send_record`, so its segment ends at a frame end).
    pub fn relay_write(&self, id: RelayId) -> Option<&[u8]> {
        self.relays.poll_write(id)
    }

    /// `n` bytes of [`Node::relay_write`] were written.
    pub fn relay_consume(&mut self, id: RelayId, n: usize) {
        self.relays.consume(id, n);
    }

    /// A relay connection the driver should close.
    pub fn poll_relay_close(&mut self) -> Option<RelayId> {
        self.relays.poll_close()
    }

    fn after_relay_input(&mut self, now: Timestamp) {
        self.drain_relays(now);
        self.after_input(now);
    }

    // ----- between the layers ------------------------------------------------------------

    /// Acts on what the relay clients report.
    pub(super) fn drain_relays(&mut self, now: Timestamp) {
        while let Some(event) = self.relays.poll_event() {
            match event {
                RelayEvent::RelayUp { .. } => {
                    self.stats.relays_up += 1;
                    self.offer_relays_to_onion(now);
                    // Sessions to friends listed on it can use it out of band from now.
                    self.mark_relay_reachable_friends();
                    // Friends hear of it now rather than at the next 120 s round.
                    for number in self.friends.link_numbers() {
                        if let Some(f) = self.friends.link_mut(number) {
                            f.conn.share_relays_now();
                        }
                    }
                }
                RelayEvent::RelayDown { .. } => {
                    self.stats.relays_down += 1;
                    self.offer_relays_to_onion(now);
                }
                RelayEvent::PeerRoute { peer, online } => {
                    // Without a route, packets still go out of band through the relays the
                    // peer is registered on.
                    let reachable = online || self.relays.has_peer_relays(&peer);
                    self.endpoint.set_relay(&peer, reachable);
                }
                RelayEvent::Data { from, data } => self.relayed_datagram(now, from, &data),
                RelayEvent::Oob {
                    relay_addr,
                    relay_pk,
                    from,
                    data,
                } => {
                    self.oob_returns.note(from, relay_addr, relay_pk);
                    self.relayed_datagram(now, from, &data);
                }
                RelayEvent::OnionResponse { relay_addr, data } => {
                    self.stats.onion_client_in += 1;
                    // Drops are counted by reason inside the client.
                    let _ = self.onion_client.handle_datagram(
                        now,
                        relay_addr,
                        &data,
                        self.rng.as_mut(),
                    );
                }
            }
        }
    }

    /// Every friend's session learns whether a connected relay lists the friend.
    fn mark_relay_reachable_friends(&mut self) {
        for number in self.friends.link_numbers() {
            let Some(dht_pk) = self.friends.link(number).and_then(|f| f.conn.dht_pk()) else {
                continue;
            };
            let reachable =
                self.relays.is_peer_online(&dht_pk) || self.relays.has_peer_relays(&dht_pk);
            self.endpoint.set_relay(&dht_pk, reachable);
        }
    }

    /// Tells the onion client which relays its paths may start at, and whether they
    /// should: without UDP, or while no DHT node answers us (0.2.18 builds TCP paths when
    /// its DHT is not connected).
    pub(super) fn offer_relays_to_onion(&mut self, now: Timestamp) {
        let relays: Vec<PackedNode> = self
            .relays
            .connected_relays()
            .map(|(addr, pk)| PackedNode {
                addr,
                pk,
                tcp: true,
            })
            .collect();
        let tcp_first = self.udp_disabled || !self.self_connected;
        self.onion_client.set_tcp_relays(now, relays, tcp_first);
    }

    /// Onion requests for a TCP relay as hop A go to any connected relay.
    pub(super) fn send_onion_tcp(&mut self, now: Timestamp) {
        while let Some(request) = self.onion_client.poll_tcp_request() {
            match self.relays.send_onion(now, &request) {
                Ok(_) => self.stats.relayed_out += 1,
                Err(_) => self.io.relay_unsent += 1,
            }
        }
    }

    /// A net_crypto datagram a relay delivered from the peer with this DHT key.
    fn relayed_datagram(&mut self, now: Timestamp, from: PublicKey, data: &[u8]) {
        if PacketKind::of(data).is_none() {
            self.stats.unknown_kind += 1;
            return;
        }
        self.stats.net_crypto_in += 1;
        self.stats.relayed_in += 1;
        if self.endpoint.handle_relayed(now, from, data).is_err() {
            self.stats.net_crypto_refused += 1;
        }
    }

    /// A session datagram for the peer with this DHT key, through the relays: a route if
    /// one is up, else out of band through every relay the peer is registered on, else —
    /// for a client that reached us out of band — back through the relay it came through.
    /// What none can take is dropped and counted; the transport resends what mattered.
    pub(super) fn send_relayed(&mut self, now: Timestamp, peer_dht_pk: PublicKey, datagram: &[u8]) {
        let sent = match self.relays.send_to_peer(now, &peer_dht_pk, datagram) {
            Err(RelaySendError::UnknownPeer | RelaySendError::NoRoute) => {
                match self.oob_returns.get(&peer_dht_pk) {
                    Some((_, relay_pk)) => {
                        self.relays.send_oob(now, &relay_pk, &peer_dht_pk, datagram)
                    }
                    None => Err(RelaySendError::NoRoute),
                }
            }
            other => other,
        };
        match sent {
            Ok(()) => self.stats.relayed_out += 1,
            Err(_) => self.io.relay_unsent += 1,
        }
    }

    /// A session from a peer that reached us through a relay: its relay becomes one of
    /// the peer's, so our answers and data have a route (0.2.18 `tcp_oob_callback` →
    /// `add_tcp_number_relay_connection`).
    pub(super) fn adopt_oob_relay(&mut self, now: Timestamp, peer_dht_pk: PublicKey) {
        if let Some((addr, relay_pk)) = self.oob_returns.get(&peer_dht_pk) {
            let _ = self.relays.add_peer_relay(now, peer_dht_pk, addr, relay_pk);
        }
    }

    /// Registers a friend's relays under its DHT key (at most [`DIAL_RELAYS`] of the
    /// stored ones, newest first); true if the friend can now be reached through one.
    pub(super) fn attach_friend_relays(
        &mut self,
        now: Timestamp,
        dht_pk: PublicKey,
        relays: &[PackedNode],
    ) -> bool {
        let mut any = false;
        for node in relays.iter().filter(|n| n.tcp).take(DIAL_RELAYS) {
            match self.relays.add_peer_relay(now, dht_pk, node.addr, node.pk) {
                Ok(()) | Err(AddRelayError::Enough) => any = true,
                Err(_) => {}
            }
        }
        if self.relays.has_peer_relays(&dht_pk) {
            // A session already under way (dialled over UDP) tries the relay at once: its
            // handshake goes out of band until a route comes up.
            self.endpoint.set_relay(&dht_pk, true);
        }
        any
    }

    /// Up to `n` connected relays as TCP packed nodes, rotating so successive calls show
    /// different ones (`send_relays` / `copy_connected_tcp_relays`).
    pub(super) fn advertised_relays(&mut self, n: usize) -> Vec<PackedNode> {
        let connected: Vec<(SocketAddr, PublicKey)> = self.relays.connected_relays().collect();
        if connected.is_empty() {
            return Vec::new();
        }
        let start = self.relay_rotation % connected.len();
        self.relay_rotation = self.relay_rotation.wrapping_add(1);
        connected
            .iter()
            .cycle()
            .skip(start)
            .take(n.min(connected.len()))
            .map(|&(addr, pk)| PackedNode {
                addr,
                pk,
                tcp: true,
            })
            .collect()
    }

    /// Tells the relay clients which friends' sessions run over direct UDP, so relays
    /// kept only for them can close (and come back when UDP stops working).
    pub(super) fn update_direct_peers(&mut self, now: Timestamp) {
        for number in self.friends.link_numbers() {
            let Some(f) = self.friends.link(number) else {
                continue;
            };
            let Some(dht_pk) = f.conn.dht_pk() else {
                continue;
            };
            let conn = f.session.and_then(|id| self.endpoint.connection(id));
            let direct = conn.is_some_and(|c| c.udp_working(now));
            // Online over direct UDP (not a relay): the DHT need not search for the friend.
            let on_udp = f.online
                && conn.is_some_and(|c| c.data_path(now) == Some(rustox_net_crypto::PathKind::Udp));
            // A session that came in through a relay knows no UDP address, and friend
            // connection reports an address only when it changes: the one the DHT found is
            // handed to the session here, so its UDP probes can start.
            let known = f.conn.direct_addr();
            let give = match (f.session, conn, known) {
                (Some(id), Some(c), Some(addr)) if !direct && c.peer_addr() != Some(addr) => {
                    Some((id, addr))
                }
                _ => None,
            };
            if let Some((id, addr)) = give {
                if !self.udp_disabled {
                    self.endpoint.set_peer_addr(now, id, addr);
                }
            }
            self.relays.set_peer_direct(now, &dht_pk, direct);
            self.dht
                .set_search_dormant(now, &dht_pk, on_udp, self.rng.as_mut());
        }
    }
}
