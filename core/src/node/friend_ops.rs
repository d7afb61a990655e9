//! The friend list at work: the application's friend calls, each friend's
//! friend_connection actions carried out on the net_crypto endpoint, and the endpoint's and
//! DHT's events turned into friend_connection inputs (docs/protocol.md §4; c-toxcore
//! `friend_connection.c`).
//!
//! The endpoint knows sessions by id and the friend_connection knows a friend by its keys;
//! this file keeps `Friend::session` pointing at the one live session of each friend. A
//! session the node kills on friend_connection's word is forgotten at once, so its closing
//! is never reported back (the contract of [`FriendAction::Kill`]).
//!
//! Hidden links (`links.rs`: conference peers that are not friends) run through the same
//! code: what drives a connection takes friends and hidden links alike (the `link*` calls
//! of the friend list), what the application sees or sends takes friends only.

use std::net::SocketAddr;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::{
    CloseReason, ConnectError, ConnectionEvent, ConnectionId, ConnectionStatus, Destination,
    EndpointEvent, Timestamp,
};

use super::event::NodeEvent;
use super::friends::{FriendListError, FriendNumber, OutgoingRequest};
use super::{Node, NodeError};
use crate::dht::wire::packed_node::canonical;
use crate::dht::DhtEvent;
use crate::friend::packets::{FriendConnPacket, MAX_SHARED_RELAYS, PACKET_ID_ALIVE};
use crate::friend::{
    validate_friend_add, FriendAction, FriendAddError, FriendConnStatus, FriendRequest, Received,
    RequestSchedule, ToxId,
};

/// TCP relays kept for the profile: c-toxcore saves up to `NUM_SAVED_TCP_RELAYS` (8).
pub const MAX_KEPT_TCP_RELAYS: usize = 8;

impl Node {
    // ----- the application's calls -----------------------------------------------------

    /// Adds a friend by Tox ID and sends it a friend request with `message`
    /// (`tox_friend_add`, docs/protocol.md §6.5). The request is retried (5 s, doubling) until
    /// the friend comes online.
    pub fn add_friend(
        &mut self,
        now: Timestamp,
        id: &ToxId,
        message: &[u8],
    ) -> Result<FriendNumber, FriendAddError> {
        let id = validate_friend_add(&id.to_bytes(), message, &self.keys.public)?;
        let request =
            FriendRequest::new(id.nospam, message).map_err(|_| FriendAddError::NoMessage)?;
        if let Some(number) = self.friends.by_pk(&id.pk) {
            let friend = self
                .friends
                .get_mut(number)
                .ok_or(FriendAddError::AlreadySent)?;
            // A pending request under another nospam takes the new one (`m_addfriend`).
            return match &mut friend.request {
                Some(pending) if pending.request.nospam() != id.nospam => {
                    pending.request = request;
                    Err(FriendAddError::SetNewNospam)
                }
                _ => Err(FriendAddError::AlreadySent),
            };
        }
        let number = self
            .new_friend_entry(id.pk)
            .map_err(|_| FriendAddError::AlreadySent)?;
        if let Some(friend) = self.friends.get_mut(number) {
            friend.request = Some(OutgoingRequest {
                request,
                schedule: RequestSchedule::new(),
            });
        }
        self.friend_added(now, number);
        self.friend_timers(now);
        Ok(number)
    }

    /// Adds a friend without a request (`tox_friend_add_norequest`, or accepting a
    /// request): we accept its sessions, and connect once its DHT key is known.
    pub fn add_friend_norequest(
        &mut self,
        now: Timestamp,
        pk: PublicKey,
    ) -> Result<FriendNumber, NodeError> {
        if pk == self.keys.public {
            return Err(NodeError::OwnKey);
        }
        let number = self.new_friend_entry(pk)?;
        self.friend_added(now, number);
        self.friend_timers(now);
        Ok(number)
    }

    /// Adds (or updates) a friend whose DHT key and address are known, and dials it at
    /// once: the direct form of `rustox send --to ADDR --key KEY`.
    pub fn add_friend_direct(
        &mut self,
        now: Timestamp,
        pk: PublicKey,
        dht_pk: PublicKey,
        addr: SocketAddr,
    ) -> Result<FriendNumber, NodeError> {
        let number = match self.friends.by_pk(&pk) {
            Some(n) => n,
            None => self.add_friend_norequest(now, pk)?,
        };
        if let Some(friend) = self.friends.get_mut(number) {
            friend.passive = false;
            friend.conn.set_dht_pk(now, dht_pk);
            friend.conn.set_direct_addr(now, canonical(addr));
        }
        self.drive_friend(now, number);
        Ok(number)
    }

    /// Removes a friend: an `OFFLINE` packet goes out when it was online, its transfers
    /// fail, and its session is killed and it can no longer open one to us, unless a
    /// conference still holds the connection: then it stays, as a hidden link
    /// (`m_delfriend`, which drops only Messenger's lock on it).
    pub fn delete_friend(&mut self, now: Timestamp, friend: FriendNumber) -> Result<(), NodeError> {
        let f = self
            .friends
            .get_mut(friend)
            .ok_or(NodeError::UnknownFriend)?;
        let pk = f.pk;
        if f.online {
            if let Some(conn) = f.session.and_then(|id| self.endpoint.connection_mut(id)) {
                let _ = conn.send_lossless(now, &[super::messenger::PACKET_ID_OFFLINE]);
            }
        }
        f.files.friend_offline(friend, &mut Vec::new());
        self.av_friend_offline(now, friend);
        self.requests.forget(&pk);
        if !self.keep_as_hidden(friend) {
            if let Some(removed) = self.friends.remove(friend) {
                self.close_connection(now, &removed);
            }
        }
        self.drain_conferences(now);
        Ok(())
    }

    /// Unix seconds when the friend was last seen online (`tox_friend_get_last_online`;
    /// kept in profiles, 0 when never).
    pub fn friend_last_seen(&self, friend: FriendNumber) -> Option<u64> {
        self.friends.get(friend).map(|f| f.last_seen)
    }

    /// Keeps a TCP relay the application named (`tox_add_tcp_relay`) in the profile's relay
    /// list, newest first, at most `MAX_KEPT_TCP_RELAYS`. The node has no TCP client yet
    /// (docs/protocol.md §7): the relay is saved, so a profile written here still lists it for a
    /// core that has one.
    pub fn keep_tcp_relay(&mut self, addr: std::net::SocketAddr, pk: PublicKey) {
        let relays = &mut self.kept.tcp_relays;
        relays.retain(|r| !(r.addr == addr && r.pk == pk));
        relays.insert(
            0,
            crate::dht::wire::packed_node::PackedNode {
                addr,
                tcp: true,
                pk,
            },
        );
        relays.truncate(MAX_KEPT_TCP_RELAYS);
    }

    /// The friend with this real key.
    pub fn friend_by_pk(&self, pk: &PublicKey) -> Option<FriendNumber> {
        self.friends.by_pk(pk)
    }

    /// Every friend's number.
    pub fn friends(&self) -> Vec<FriendNumber> {
        self.friends.numbers()
    }

    /// A friend's real key.
    pub fn friend_public_key(&self, friend: FriendNumber) -> Option<PublicKey> {
        self.friends.get(friend).map(|f| f.pk)
    }

    /// A friend's DHT key, once known.
    pub fn friend_dht_key(&self, friend: FriendNumber) -> Option<PublicKey> {
        self.friends.get(friend).and_then(|f| f.dht_pk())
    }

    /// Whether a friend is online (its session is up and its `ONLINE` arrived).
    pub fn is_friend_online(&self, friend: FriendNumber) -> bool {
        self.friends.get(friend).is_some_and(|f| f.online)
    }

    /// Whether an online friend's session has working UDP now (a datagram came over UDP
    /// within 8 s) rather than only a TCP relay: c-toxcore's `direct_connected`, which
    /// `tox_friend_get_connection_status` reports as UDP, else TCP. `None` when the friend
    /// is not online.
    pub fn friend_udp_direct(&self, friend: FriendNumber, now: Timestamp) -> Option<bool> {
        let id = self.online_session_id(friend).ok()?;
        let c = self.endpoint.connection(id)?;
        Some(c.udp_working(now) || !c.has_relay())
    }

    /// Bytes a friend costs: its record (friend_connection, presence, file state) and its
    /// session with the transport's queues, as their own accounting reports them.
    pub fn friend_memory(&self, friend: FriendNumber) -> Option<usize> {
        let f = self.friends.get(friend)?;
        let session = f
            .session
            .and_then(|id| self.endpoint.connection(id))
            .map_or(0, |c| c.memory_usage());
        let own = std::mem::size_of::<super::friends::Friend>()
            + f.presence.name.capacity()
            + f.presence.status_message.capacity();
        Some(own + session)
    }

    /// The transport's statistics of a friend's session.
    pub fn session_stats(&self, friend: FriendNumber) -> Option<rustox_net_crypto::TransportStats> {
        let id = self.friends.get(friend)?.session?;
        self.endpoint.connection(id).map(|c| c.transport().stats())
    }

    // ----- timers ----------------------------------------------------------------------

    /// Runs every friend's due timers (friend_connection, friend requests).
    pub(super) fn friend_timers(&mut self, now: Timestamp) {
        let mut alive_round = false;
        for number in self.friends.link_numbers() {
            let Some(friend) = self.friends.link_mut(number) else {
                continue;
            };
            if friend.conn.poll_timeout().is_some_and(|t| t <= now) {
                friend.conn.handle_timeout(now);
                alive_round |= friend.conn.alive_sent() == Some(now);
            }
            self.send_friend_request(now, number);
            self.send_dht_route_pk(now, number);
            self.drive_friend(now, number);
        }
        if alive_round {
            self.alive_round(now);
        }
    }

    /// One friend's ALIVE went out (its timer, or an answer to its own): the others due
    /// within half an interval go with it, so a node with many friends sends them all in one
    /// wake-up and their answers come back together.
    fn alive_round(&mut self, now: Timestamp) {
        for number in self.friends.link_numbers() {
            let sent = self
                .friends
                .link_mut(number)
                .is_some_and(|f| f.conn.send_alive_if_due_soon(now));
            if sent {
                self.drive_friend(now, number);
            }
        }
    }

    /// The earliest deadline of any friend.
    pub(super) fn friends_poll_timeout(&self) -> Option<Timestamp> {
        self.friends
            .links()
            .flat_map(|(_, f)| {
                [
                    f.conn.poll_timeout(),
                    f.request.as_ref().and_then(|r| r.schedule.poll_timeout()),
                    f.dht_route_deadline(),
                ]
            })
            .flatten()
            .min()
    }

    /// Sends our friend request to `number` if it is due. Routes: a live session (id 18);
    /// the onion, once it finds nodes where the friend is announced.
    pub(super) fn send_friend_request(&mut self, now: Timestamp, number: FriendNumber) {
        let Some(friend) = self.friends.get_mut(number) else {
            return;
        };
        let Some(pending) = friend.request.as_mut() else {
            return;
        };
        pending.schedule.handle_timeout(now);
        if !pending.schedule.due(now) {
            return;
        }
        let session = friend
            .session
            .and_then(|id| self.endpoint.connection_mut(id));
        match session.filter(|c| c.status() == ConnectionStatus::Established) {
            Some(conn) => {
                let _ = conn.send_lossless(now, &pending.request.encode_net_crypto());
                pending.schedule.on_sent(now);
            }
            None => {
                let pk = friend.pk;
                let data = pending.request.encode_onion_data();
                let sent = self
                    .onion_client
                    .send_data(now, &pk, &data, self.rng.as_mut())
                    .unwrap_or(0);
                if let Some(pending) = self
                    .friends
                    .get_mut(number)
                    .and_then(|f| f.request.as_mut())
                {
                    if sent > 0 {
                        pending.schedule.on_sent(now);
                    } else {
                        pending.schedule.on_send_failed(now);
                    }
                }
            }
        }
    }

    // ----- friend_connection's actions -------------------------------------------------

    /// Carries out everything `number`'s friend_connection asks for.
    pub(super) fn drive_friend(&mut self, now: Timestamp, number: FriendNumber) {
        loop {
            let Some(friend) = self.friends.link_mut(number) else {
                return;
            };
            let Some(action) = friend.conn.poll_action() else {
                return;
            };
            self.apply_friend_action(now, number, action);
        }
    }

    fn apply_friend_action(&mut self, now: Timestamp, number: FriendNumber, action: FriendAction) {
        let Some(friend) = self.friends.link_mut(number) else {
            return;
        };
        match action {
            FriendAction::Connect { dht_pk, addr } => {
                friend.awaiting_addr = None;
                let addr = addr.filter(|_| !self.udp_disabled);
                if friend.passive {
                    // A stranger that dialled us: its sessions are welcome, but we never
                    // dial it.
                    return;
                }
                // The friend's stored relays are attached first: with one, the session
                // can start before the DHT finds an address (`connect_to_saved_tcp_relays`).
                let stored: Vec<_> = friend.conn.tcp_relays().copied().collect();
                let relay = self.attach_friend_relays(now, dht_pk, &stored);
                match (addr, relay) {
                    (Some(_), _) | (None, true) => self.dial(now, number, dht_pk, addr, relay),
                    (None, false) => {
                        if let Some(f) = self.friends.link_mut(number) {
                            f.awaiting_addr = Some(dht_pk);
                        }
                    }
                }
            }
            FriendAction::SetDirectAddr(_) if self.udp_disabled => {}
            FriendAction::SetDirectAddr(addr) => {
                if let Some(dht_pk) = friend.awaiting_addr.take() {
                    self.dial(now, number, dht_pk, Some(addr), false);
                } else if let Some(id) = friend.session {
                    self.endpoint.set_peer_addr(now, id, addr);
                }
            }
            FriendAction::SendAlive => {
                if let Some(conn) = friend
                    .session
                    .and_then(|id| self.endpoint.connection_mut(id))
                {
                    let _ = conn.send_lossless(now, &[PACKET_ID_ALIVE]);
                }
            }
            FriendAction::SendShareRelays => self.share_relays(now, number),
            FriendAction::Kill { .. } => {
                friend.awaiting_addr = None;
                if let Some(id) = friend.session.take() {
                    if let Some(conn) = self.endpoint.connection_mut(id) {
                        conn.kill(now);
                    }
                }
            }
            FriendAction::DhtPkChanged { old, new } => {
                let pk = friend.pk;
                if let Some(old) = old {
                    self.dht.remove_friend(&old);
                }
                if let Some(new) = new {
                    self.dht.add_friend(new, self.rng.as_mut());
                    self.dht.search_now(now, new, self.rng.as_mut());
                    // The conferences name peers with it (group.c reads the connection's
                    // `dht_temp_pk`).
                    self.conferences.set_link_dht_pk(pk, new);
                }
            }
            FriendAction::StatusChanged { connected: true } => {
                // Connected: the onion stops searching for it (`onion_set_friend_online`).
                let pk = friend.pk;
                self.onion_client.set_friend_online(&pk, true);
                // Messenger's hello, to friends only (a hidden link has no Messenger): the
                // friend is online for the peer once it arrives.
                self.send_online_packet(now, number);
                // The conferences hear of every link (`g_handle_status`).
                self.conference_link_status(now, pk, true);
            }
            FriendAction::StatusChanged { connected: false } => {
                let pk = friend.pk;
                self.onion_client.set_friend_online(&pk, false);
                if let Some(f) = self.friends.link_mut(number) {
                    // Offline again: tell it our DHT key by every route at once.
                    f.dht_route_due = None;
                }
                self.go_offline(now, number);
                self.conference_link_status(now, pk, false);
            }
        }
    }

    /// Sends SHARE_RELAYS with up to 3 of our connected relays and registers the friend on
    /// them, so both ends meet there (`send_relays`). Nothing without a connected relay.
    fn share_relays(&mut self, now: Timestamp, number: FriendNumber) {
        let relays = self.advertised_relays(MAX_SHARED_RELAYS);
        if relays.is_empty() {
            return;
        }
        let Some(friend) = self.friends.link_mut(number) else {
            return;
        };
        for node in &relays {
            friend.conn.add_tcp_relay(*node);
        }
        let dht_pk = friend.conn.dht_pk();
        let session = friend.session;
        let packet = FriendConnPacket::ShareRelays(relays.clone()).encode();
        if let (Ok(packet), Some(conn)) = (
            packet,
            session.and_then(|id| self.endpoint.connection_mut(id)),
        ) {
            let _ = conn.send_lossless(now, &packet);
        }
        if let Some(dht_pk) = dht_pk {
            self.attach_friend_relays(now, dht_pk, &relays);
        }
    }

    /// A friend waiting for a direct address is dialled through its relays once one is
    /// registered (the only way without UDP, and a head start with it).
    pub(super) fn dial_waiting_friend(&mut self, now: Timestamp, number: FriendNumber) {
        let Some(friend) = self.friends.link_mut(number) else {
            return;
        };
        if friend.passive || friend.session.is_some() {
            return;
        }
        if let Some(dht_pk) = friend.awaiting_addr.take() {
            self.dial(now, number, dht_pk, None, true);
        }
    }

    /// Opens a session to a friend at `addr` and/or through its relays
    /// (`new_crypto_connection` + `set_direct_ip_port`). A live session the endpoint
    /// already has with it (crossed handshakes) becomes the friend's.
    fn dial(
        &mut self,
        now: Timestamp,
        number: FriendNumber,
        dht_pk: PublicKey,
        addr: Option<SocketAddr>,
        relay: bool,
    ) {
        let Some(friend) = self.friends.link_mut(number) else {
            return;
        };
        match self
            .endpoint
            .connect_via(now, addr, relay, friend.pk, dht_pk)
        {
            Ok(id) => friend.session = Some(id),
            Err(ConnectError::AlreadyConnected) => {
                friend.session = self.endpoint.connection_to(&friend.pk);
                if friend.session.is_none() {
                    // The address is another peer's live session: no session this round.
                    friend.conn.on_closed(now);
                }
            }
            // Out of room for sessions: friend_connection retries (once a second at most).
            Err(_) => friend.conn.on_closed(now),
        }
    }

    // ----- what the DHT and the endpoint report ----------------------------------------

    pub(super) fn drain_dht(&mut self, now: Timestamp) {
        while let Some(event) = self.dht.poll_event() {
            match event {
                DhtEvent::FriendAddr { pk, addr } => {
                    if let Some(n) = self.friends.by_dht_pk(&pk) {
                        if let Some(f) = self.friends.link_mut(n) {
                            f.conn.set_direct_addr(now, addr);
                        }
                        self.drive_friend(now, n);
                    }
                }
                DhtEvent::Request {
                    sender,
                    request_id: crate::friend::dht_pk::CRYPTO_PACKET_DHTPK,
                    data,
                } => self.on_dht_route_pk(now, sender, &data),
                // NAT pings are the DHT's own; nothing else comes this way in 0.2.18.
                DhtEvent::Request { .. } => {}
            }
        }
    }

    pub(super) fn drain_endpoint(&mut self, now: Timestamp) {
        while let Some(event) = self.endpoint.poll_event() {
            match event {
                EndpointEvent::Incoming {
                    id,
                    peer_real_pk,
                    peer_dht_pk,
                    from,
                } => {
                    if let Destination::Relay(pk) = from {
                        self.adopt_oob_relay(now, pk);
                    }
                    self.on_incoming(now, id, peer_real_pk, peer_dht_pk, from.udp())
                }
                EndpointEvent::Connection { id, event } => self.on_connection(now, id, event),
            }
        }
    }

    fn on_incoming(
        &mut self,
        now: Timestamp,
        id: ConnectionId,
        pk: PublicKey,
        dht_pk: PublicKey,
        addr: Option<SocketAddr>,
    ) {
        let number = match self.friends.link_by_pk(&pk) {
            Some(n) => n,
            None if self.accept_strangers => match self.add_stranger(pk) {
                Some(n) => {
                    self.conferences.set_friend(pk, true);
                    self.push_event(NodeEvent::FriendAdded { friend: n, pk });
                    n
                }
                None => {
                    if let Some(conn) = self.endpoint.connection_mut(id) {
                        conn.kill(now);
                    }
                    return;
                }
            },
            None => {
                // The endpoint accepts only allowed keys; a stranger here means the friend
                // was deleted in between.
                if let Some(conn) = self.endpoint.connection_mut(id) {
                    conn.kill(now);
                }
                return;
            }
        };
        let Some(friend) = self.friends.link_mut(number) else {
            return;
        };
        friend.awaiting_addr = None;
        if let Some(old) = friend.session.replace(id) {
            if old != id {
                if let Some(conn) = self.endpoint.connection_mut(old) {
                    conn.kill(now);
                }
            }
        }
        friend.conn.on_incoming_session(now, dht_pk, addr);
        self.drive_friend(now, number);
    }

    /// A stranger that dialled us becomes a passive friend. When the list is full, a
    /// passive friend without a live session makes room: strangers cannot lock the list.
    fn add_stranger(&mut self, pk: PublicKey) -> Option<FriendNumber> {
        let number = match self.friends.add(pk) {
            Ok(n) => n,
            Err(FriendListError::Full) => {
                let idle = self
                    .friends
                    .iter()
                    .find(|(_, f)| {
                        // One a conference holds is not idle.
                        f.passive
                            && f.conference_refs == 0
                            && f.conn.status() != FriendConnStatus::Connected
                    })
                    .map(|(n, _)| n)?;
                let gone = self.friends.remove(idle)?;
                self.conferences.set_friend(gone.pk, false);
                self.endpoint.forbid_peer(&gone.pk);
                if let Some(id) = gone.session {
                    if let Some(conn) = self.endpoint.connection_mut(id) {
                        conn.kill(Timestamp::ZERO);
                    }
                }
                if let Some(dht_pk) = gone.dht_pk() {
                    self.dht.remove_friend(&dht_pk);
                }
                self.friends.add(pk).ok()?
            }
            Err(FriendListError::AlreadyFriend) => self.friends.by_pk(&pk)?,
        };
        if let Some(f) = self.friends.get_mut(number) {
            f.passive = true;
        }
        Some(number)
    }

    fn on_connection(&mut self, now: Timestamp, id: ConnectionId, event: ConnectionEvent) {
        let Some(number) = self.friends.by_session(id) else {
            return;
        };
        match event {
            ConnectionEvent::Established => {
                if let Some(f) = self.friends.link_mut(number) {
                    f.conn.on_established(now);
                }
                self.drive_friend(now, number);
            }
            ConnectionEvent::Lossless(payload) => {
                let Some((&kind, body)) = payload.split_first() else {
                    return;
                };
                let Some(f) = self.friends.link_mut(number) else {
                    return;
                };
                match f.conn.on_packet(now, kind, body) {
                    Ok(Received::ForMessenger) => self.on_session_packet(now, number, id, &payload),
                    Ok(Received::FriendRequest(request)) => {
                        self.on_friend_request(now, f_pk(self, number), request)
                    }
                    Ok(Received::Alive) => {
                        let answered = f.conn.alive_sent() == Some(now);
                        self.drive_friend(now, number);
                        if answered {
                            self.alive_round(now);
                        }
                    }
                    Ok(Received::Relays(_)) => {
                        // Stored by friend_connection; registered on the relay clients so a
                        // route is ready when UDP stops working.
                        let stored: Vec<_> = f.conn.tcp_relays().copied().collect();
                        if let Some(dht_pk) = f.conn.dht_pk() {
                            if self.attach_friend_relays(now, dht_pk, &stored) {
                                self.dial_waiting_friend(now, number);
                            }
                        }
                    }
                    Err(_) => self.stats.bad_friend_packets += 1,
                }
            }
            ConnectionEvent::Lossy(payload) => self.on_session_lossy(now, number, &payload),
            ConnectionEvent::Closed(reason) => self.on_closed(now, number, reason),
        }
    }

    fn on_closed(&mut self, now: Timestamp, number: FriendNumber, reason: CloseReason) {
        if let Some(f) = self.friends.link_mut(number) {
            f.session = None;
            f.conn.on_closed(now);
        }
        self.drive_friend(now, number);
        // A hidden link's sessions are no business of the application's.
        if self.friends.get(number).is_some() {
            self.push_event(NodeEvent::SessionClosed {
                friend: number,
                reason,
            });
        }
    }

    /// A friend request that arrived (onion data 32, DHT request 32 or net_crypto 18) from
    /// `sender`'s real key: through the filter (nospam, repeats, friends), then to the
    /// application, or straight into the friend list when the node accepts strangers.
    pub(super) fn on_friend_request(
        &mut self,
        now: Timestamp,
        sender: Option<PublicKey>,
        request: FriendRequest,
    ) {
        let Some(sender) = sender else {
            return;
        };
        let friends = &self.friends;
        let Ok(request) = self
            .requests
            .check_request(&sender, request, |pk| friends.by_pk(pk).is_some())
        else {
            return;
        };
        if self.accept_strangers {
            if let Ok(number) = self.add_friend_norequest(now, sender) {
                self.push_event(NodeEvent::FriendAdded {
                    friend: number,
                    pk: sender,
                });
            }
            return;
        }
        self.push_event(NodeEvent::FriendRequest {
            pk: sender,
            message: request.message().to_vec(),
        });
    }

    /// The friend is no longer online for Messenger: its transfers fail. Nothing for a
    /// hidden link, which is never online for Messenger.
    pub(super) fn go_offline(&mut self, now: Timestamp, number: FriendNumber) {
        let Some(f) = self.friends.get_mut(number) else {
            return;
        };
        let was_online = std::mem::replace(&mut f.online, false);
        if was_online {
            f.last_seen = self.unix_origin.saturating_add(now.as_secs());
        }
        // c-toxcore forgets a friend's typing flag and our pending receipts with the
        // session (`set_friend_status` to NOT_ONLINE, `clear_receipts`).
        f.presence.typing = false;
        f.receipts.clear_pending();
        let mut events = Vec::new();
        f.files.friend_offline(number, &mut events);
        for e in events {
            self.push_event(e);
        }
        self.av_friend_offline(now, number);
        if was_online {
            self.push_event(NodeEvent::FriendConnection {
                friend: number,
                online: false,
                addr: None,
            });
        }
    }
}

/// The real key of friend `number`.
fn f_pk(node: &Node, number: FriendNumber) -> Option<PublicKey> {
    node.friends.link(number).map(|f| f.pk)
}
