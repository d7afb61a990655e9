//! One conference's state (`Group_c` in `toxcore/group.c`) and the rules that change it:
//! its peer lists, its connections, its closest peers and its timers. The packet handlers
//! are in `inbound`, what it sends in `outbound`.

use rustox_net_crypto::crypto::PublicKey;

use super::closest::{Change, Closest};
use super::connections::{
    ConnState, Connection, Connections, MAX_GROUP_CONNECTIONS, REASON_CLOSEST, REASON_INTRODUCER,
};
use super::io::Io;
use super::peers::{cmp_frozen, Peer};
use super::wire::{self, MessageBody, RejoinPacket, MAX_NAME_LEN};
use super::{ConferenceEvent, ConferenceId, ConferenceNumber, DEFAULT_MAX_OFFLINE};

/// Online peers a conference holds; a NEW_PEER or peer list beyond is refused. c-toxcore
/// has no bound (its peer ids are 16-bit); 1024 is four times the 256 the protocol's users
/// expect and keeps a conference's peers under half a megabyte.
pub const MAX_PEERS: usize = 1024;
/// Frozen peers a conference holds whatever `set_max_offline` says.
pub const MAX_FROZEN_PEERS: usize = 1024;
/// `GROUP_PING_INTERVAL`, seconds.
pub const GROUP_PING_INTERVAL: u64 = 20;
/// `FREEZE_TIMEOUT` = 3 × `GROUP_PING_INTERVAL`: a peer silent this long is frozen.
pub const FREEZE_TIMEOUT: u64 = GROUP_PING_INTERVAL * 3;
/// `SAVE_OFFSET_MESSAGE_NUMBER`: the message number is saved this far ahead, so messages
/// sent after the save but before a crash are not taken for repeats after a restart.
pub const SAVE_OFFSET_MESSAGE_NUMBER: u32 = 1 << 16;
/// `SAVE_OFFSET_LOSSY_MESSAGE_NUMBER`.
pub const SAVE_OFFSET_LOSSY_MESSAGE_NUMBER: u16 = 1 << 13;

/// `Groupchat_Status` (without NONE: an empty slot is no `Group`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Joining: invite answered, waiting for the peer list that names us.
    Valid,
    /// In the conference.
    Connected,
}

/// Why `send_message_group` failed (its −2, −3, −4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// Longer than `MAX_GROUP_MESSAGE_DATA_LEN`.
    TooLong,
    /// Not connected, or no connection online.
    NoConnection,
    /// No connection took it.
    FailSend,
}

/// One conference.
#[derive(Debug, Clone)]
pub struct Group {
    /// Our number for it (its index among the conferences).
    pub number: u16,
    /// `status`.
    pub status: Status,
    /// `need_send_name`: send our name at the next tick.
    pub need_send_name: bool,
    /// `title_fresh`: a title came by message, so a peer list's title does not override it.
    pub title_fresh: bool,
    /// `group`: the online peers, ourselves among them; tox.h's peer numbers index it.
    pub peers: Vec<Peer>,
    /// `frozen`: the offline peers; tox.h's offline peer numbers index it.
    pub frozen: Vec<Peer>,
    /// `maxfrozen`.
    pub max_frozen: u32,
    /// `connections`.
    pub conns: Connections,
    /// `closest_peers` and `changed`.
    pub closest: Closest,
    /// `type`.
    pub kind: u8,
    /// `id`.
    pub id: [u8; 32],
    /// `title`.
    pub title: Vec<u8>,
    /// `message_number`: our last message's number.
    pub message_number: u32,
    /// `lossy_message_number`: our next lossy packet's number.
    pub lossy_message_number: u16,
    /// `peer_number`: our 16-bit peer id.
    pub peer_number: u16,
    /// `last_sent_ping`, seconds.
    pub last_sent_ping: u64,
}

impl Group {
    /// `setup_conference`: an empty conference in slot `number`.
    pub fn new(number: u16, status: Status, kind: u8, id: [u8; 32]) -> Self {
        Group {
            number,
            status,
            need_send_name: false,
            title_fresh: false,
            peers: Vec::new(),
            frozen: Vec::new(),
            max_frozen: DEFAULT_MAX_OFFLINE,
            conns: Connections::default(),
            closest: Closest::default(),
            kind,
            id,
            title: Vec::new(),
            message_number: 0,
            lossy_message_number: 0,
            peer_number: 0,
            last_sent_ping: 0,
        }
    }

    fn conference(&self) -> ConferenceNumber {
        ConferenceNumber(u32::from(self.number))
    }

    /// The conference id.
    pub fn conference_id(&self) -> ConferenceId {
        ConferenceId(self.id)
    }

    // --- lookups ---

    /// `get_peer_index`.
    pub fn peer_index(&self, peer_number: u16) -> Option<usize> {
        self.peers.iter().position(|p| p.peer_number == peer_number)
    }
    /// `get_frozen_index`.
    pub fn frozen_index(&self, peer_number: u16) -> Option<usize> {
        self.frozen
            .iter()
            .position(|p| p.peer_number == peer_number)
    }
    /// `peer_in_group`.
    pub fn peer_by_pk(&self, pk: &PublicKey) -> Option<usize> {
        self.peers.iter().position(|p| p.real_pk == *pk)
    }
    /// `frozen_in_group`.
    pub fn frozen_by_pk(&self, pk: &PublicKey) -> Option<usize> {
        self.frozen.iter().position(|p| p.real_pk == *pk)
    }
    /// `get_peer_number`: the peer id of `pk`, online or frozen.
    pub fn peer_number_of(&self, pk: &PublicKey) -> Option<u16> {
        self.peer_by_pk(pk)
            .and_then(|i| self.peers.get(i))
            .or_else(|| self.frozen_by_pk(pk).and_then(|i| self.frozen.get(i)))
            .map(|p| p.peer_number)
    }

    /// The DHT key of the link to `pk`: the node's, else the one the peer lists gave, else
    /// the zero key (a hint only: peers dial what the onion finds).
    pub fn dht_of(&self, io: &Io, pk: &PublicKey) -> PublicKey {
        io.link_dht_pk(pk)
            .or_else(|| {
                self.peer_by_pk(pk)
                    .and_then(|i| self.peers.get(i))
                    .map(|p| p.temp_pk)
            })
            .or_else(|| {
                self.frozen_by_pk(pk)
                    .and_then(|i| self.frozen.get(i))
                    .map(|p| p.temp_pk)
            })
            .unwrap_or(PublicKey([0; 32]))
    }

    fn bound_frozen(&self) -> usize {
        usize::try_from(self.max_frozen)
            .unwrap_or(usize::MAX)
            .min(MAX_FROZEN_PEERS)
    }

    // --- peer lists ---

    /// `note_peer_active`: the peer `peer_number` was heard: its last activity is now, and a
    /// frozen peer thaws (joins the end of the online list).
    pub fn note_peer_active(&mut self, io: &mut Io, peer_number: u16) -> Option<usize> {
        if let Some(i) = self.peer_index(peer_number) {
            if let Some(p) = self.peers.get_mut(i) {
                p.last_active = io.now;
            }
            return Some(i);
        }
        let f = self.frozen_index(peer_number)?;
        if self.peers.len() >= MAX_PEERS {
            io.stats.peers_refused = io.stats.peers_refused.saturating_add(1);
            return None;
        }
        let mut peer = self.frozen.swap_remove(f);
        peer.temp_pk_updated = false;
        peer.last_active = io.now;
        self.closest.add(&io.self_pk, peer.real_pk, peer.temp_pk);
        self.peers.push(peer);
        io.event(ConferenceEvent::PeerListChanged {
            conference: self.conference(),
        });
        self.need_send_name = true;
        Some(self.peers.len().saturating_sub(1))
    }

    /// `addpeer`: add a peer or update one. `fresh`: the news is current (the peer is
    /// active; its DHT key replaces ours). `callback`: tell the application.
    pub fn add_peer(
        &mut self,
        io: &mut Io,
        real_pk: PublicKey,
        temp_pk: PublicKey,
        peer_number: u16,
        fresh: bool,
        callback: bool,
    ) -> Option<usize> {
        // Our own entry keeps our peer id once we are in (rustox's hardening: in group.c a
        // peer list or NEW_PEER naming our key under another id replaces our entry, after
        // which no peer number is ours).
        if real_pk == io.self_pk
            && self.status == Status::Connected
            && peer_number != self.peer_number
        {
            io.drop_packet();
            return None;
        }
        let found = if fresh {
            self.note_peer_active(io, peer_number)
        } else {
            self.peer_index(peer_number)
        };
        if let Some(i) = found {
            let p = self.peers.get_mut(i)?;
            if p.real_pk != real_pk {
                return None;
            }
            if real_pk == io.self_pk {
                return Some(i);
            }
            if fresh || !p.temp_pk_updated {
                p.temp_pk = temp_pk;
                p.temp_pk_updated = true;
            }
            return Some(i);
        }
        if !fresh {
            if let Some(f) = self.frozen_index(peer_number) {
                if let Some(p) = self.frozen.get_mut(f) {
                    if p.real_pk == real_pk {
                        p.temp_pk = temp_pk;
                    }
                }
                return None;
            }
        }
        self.delete_any_peer_with_pk(io, &real_pk);
        if self.peers.len() >= MAX_PEERS {
            io.stats.peers_refused = io.stats.peers_refused.saturating_add(1);
            return None;
        }
        let mut peer = Peer::new(real_pk, temp_pk, peer_number, io.now);
        peer.is_friend = io.is_friend(&real_pk);
        self.peers.push(peer);
        self.closest.add(&io.self_pk, real_pk, temp_pk);
        if callback {
            io.event(ConferenceEvent::PeerListChanged {
                conference: self.conference(),
            });
        }
        Some(self.peers.len().saturating_sub(1))
    }

    fn delete_any_peer_with_pk(&mut self, io: &mut Io, pk: &PublicKey) {
        if let Some(i) = self.peer_by_pk(pk) {
            self.del_peer(io, i);
        }
        if let Some(f) = self.frozen_by_pk(pk) {
            self.frozen.swap_remove(f);
        }
    }

    /// `delpeer`: the peer at `index` leaves the online list (the last one takes its
    /// place, so tox.h's peer numbers move as c-toxcore's do) and its connection goes.
    pub fn del_peer(&mut self, io: &mut Io, index: usize) -> Option<Peer> {
        let pk = self.peers.get(index)?.real_pk;
        self.closest.remove(&pk);
        if io.link_exists(&pk) {
            if let Some(c) = self.conns.find(&pk) {
                self.remove_connection(io, c);
            }
        }
        let peer = self.peers.swap_remove(index);
        io.event(ConferenceEvent::PeerListChanged {
            conference: self.conference(),
        });
        Some(peer)
    }

    /// `freeze_peer`: the peer at `index` moves to the frozen list; if a link to it exists
    /// we ask it to rejoin.
    pub fn freeze_peer(&mut self, io: &mut Io, index: usize) {
        let Some(mut peer) = self.del_peer(io, index) else {
            return;
        };
        self.try_send_rejoin(io, &peer.real_pk, Some(peer.temp_pk));
        peer.lossy = Default::default();
        self.frozen.push(peer);
        self.delete_old_frozen();
    }

    /// `delete_old_frozen`: keep at most `maxfrozen`, friends first then the most recent.
    pub fn delete_old_frozen(&mut self) -> bool {
        let bound = self.bound_frozen();
        if self.frozen.len() <= bound {
            return false;
        }
        if bound == 0 {
            self.frozen.clear();
            return true;
        }
        self.frozen.sort_by(cmp_frozen);
        self.frozen.truncate(bound);
        true
    }

    /// `setnick`.
    pub fn set_nick(&mut self, io: &mut Io, index: usize, nick: &[u8], callback: bool) -> bool {
        if nick.len() > MAX_NAME_LEN {
            return false;
        }
        let conference = self.conference();
        let Some(p) = self.peers.get_mut(index) else {
            return false;
        };
        p.nick_updated = true;
        if p.nick == nick {
            return true;
        }
        p.nick = nick.to_vec();
        if callback {
            io.event(ConferenceEvent::PeerName {
                conference,
                peer: u32::try_from(index).unwrap_or(u32::MAX),
                name: nick.to_vec(),
            });
        }
        true
    }

    /// `settitle`: `index` None for a title from a peer list (reported as peer `u32::MAX`).
    pub fn set_title_from(&mut self, io: &mut Io, index: Option<usize>, title: &[u8]) -> bool {
        if title.is_empty() || title.len() > MAX_NAME_LEN {
            return false;
        }
        if self.title == title {
            return true;
        }
        self.title = title.to_vec();
        self.title_fresh = true;
        io.event(ConferenceEvent::Title {
            conference: self.conference(),
            peer: index
                .and_then(|i| u32::try_from(i).ok())
                .unwrap_or(u32::MAX),
            title: title.to_vec(),
        });
        true
    }

    /// `check_disconnected`: with no connection online, every peer but us freezes.
    pub fn check_disconnected(&mut self, io: &mut Io) {
        if self.conns.count_online() > 0 {
            return;
        }
        let mut i = 0;
        while i < self.peers.len() {
            while self.peers.get(i).is_some_and(|p| p.real_pk != io.self_pk) {
                self.freeze_peer(io, i);
            }
            i += 1;
        }
    }

    // --- connections ---

    /// `add_conn_to_groupchat`: hold the link to `pk` for `reason`; a new slot opens the
    /// link (`dht_pk` the hint to dial). None when all 16 slots are taken.
    pub fn add_conn(
        &mut self,
        io: &mut Io,
        pk: PublicKey,
        reason: u8,
        dht_pk: Option<PublicKey>,
    ) -> Option<usize> {
        let mut empty = None;
        let mut ind = None;
        for (i, c) in self.conns.slots.iter().enumerate() {
            if c.state == ConnState::None {
                empty = Some(i);
                continue;
            }
            if c.pk == pk {
                ind = Some(i);
                break;
            }
        }
        let ind = match ind {
            Some(i) => i,
            None => {
                let e = empty?;
                io.open(pk, dht_pk);
                *self.conns.get_mut(e)? = Connection {
                    state: ConnState::Connecting,
                    reasons: 0,
                    pk,
                    group_number: 0,
                    queries: (0, 0),
                };
                e
            }
        };
        let c = self.conns.get_mut(ind)?;
        if c.reasons & reason == 0 {
            c.reasons |= reason;
            if reason == REASON_INTRODUCER {
                self.conns.num_introducer = self.conns.num_introducer.saturating_add(1);
            }
        }
        Some(ind)
    }

    /// `remove_connection`: drop slot `i` whatever its reasons.
    pub fn remove_connection(&mut self, io: &mut Io, i: usize) {
        let Some(c) = self.conns.get_mut(i) else {
            return;
        };
        let had_introducer = c.reasons & REASON_INTRODUCER != 0;
        let pk = c.pk;
        c.state = ConnState::None;
        if had_introducer {
            self.conns.num_introducer = self.conns.num_introducer.saturating_sub(1);
        }
        io.release(pk);
    }

    /// `remove_connection_reason`: one reason fewer; the last one drops the slot. An
    /// introducer no longer needed is told so (PEER_INTRODUCED).
    pub fn remove_connection_reason(&mut self, io: &mut Io, i: usize, reason: u8) {
        let Some(c) = self.conns.get_mut(i) else {
            return;
        };
        if c.reasons & reason == 0 {
            return;
        }
        c.reasons &= !reason;
        let c = *c;
        if reason == REASON_INTRODUCER {
            self.conns.num_introducer = self.conns.num_introducer.saturating_sub(1);
            if c.state == ConnState::Online {
                self.send_direct(io, c.pk, c.group_number, wire::PEER_INTRODUCED_ID);
            }
        }
        if c.reasons == 0 {
            if let Some(slot) = self.conns.get_mut(i) {
                slot.state = ConnState::None;
            }
            io.release(c.pk);
        }
    }

    /// The link to `pk` went up or down (`set_conns_type_connections`): up, we say we are
    /// online on it; down, the connection waits again and, if it was the last one, every
    /// peer freezes.
    pub fn link_status(&mut self, io: &mut Io, pk: &PublicKey, up: bool) {
        for i in 0..MAX_GROUP_CONNECTIONS {
            let Some(c) = self.conns.get(i) else {
                continue;
            };
            if c.state == ConnState::None || c.pk != *pk {
                continue;
            }
            if up {
                self.send_online(io, *pk);
            } else {
                if let Some(c) = self.conns.get_mut(i) {
                    c.state = ConnState::Connecting;
                }
                self.check_disconnected(io);
            }
        }
    }

    /// `try_send_rejoin`: if a link to `pk` exists and is up, send REJOIN and hold the link
    /// as an introducer.
    pub fn try_send_rejoin(&mut self, io: &mut Io, pk: &PublicKey, dht: Option<PublicKey>) -> bool {
        if !io.link_exists(pk) {
            return false;
        }
        let packet = RejoinPacket {
            kind: self.kind,
            id: self.id,
        };
        if !io.send(*pk, packet.encode()) {
            return false;
        }
        self.add_conn(io, *pk, REASON_INTRODUCER, dht);
        true
    }

    /// `connect_to_closest`: after the closest set changed, hold links to its members and
    /// let go of those that left it.
    pub fn connect_to_closest(&mut self, io: &mut Io) {
        if self.closest.changed == Change::None {
            return;
        }
        if self.closest.changed == Change::Removed {
            let own = io.self_pk;
            for p in &self.peers {
                self.closest.add(&own, p.real_pk, p.temp_pk);
            }
        }
        // purge_closest
        for i in 0..MAX_GROUP_CONNECTIONS {
            let Some(c) = self.conns.get(i).copied() else {
                continue;
            };
            if c.state == ConnState::None || c.reasons & REASON_CLOSEST == 0 {
                continue;
            }
            if !self.closest.contains(&c.pk) {
                self.remove_connection_reason(io, i, REASON_CLOSEST);
            }
        }
        // add_closest_connections
        let wanted: Vec<(PublicKey, PublicKey)> = self.closest.peers().copied().collect();
        for (real, temp) in wanted {
            let Some(i) = self.add_conn(io, real, REASON_CLOSEST, Some(temp)) else {
                continue;
            };
            if io.link_up(&real)
                && self
                    .conns
                    .get(i)
                    .is_some_and(|c| c.state == ConnState::Connecting)
            {
                self.send_online(io, real);
            }
        }
        self.closest.changed = Change::None;
    }

    /// `clean_connections`: keep `MIN_EMPTY_CONNECTIONS` slots free, dropping first
    /// connections that are waiting and not for the closest rule, then online ones not for
    /// it; then squash the table.
    pub fn clean_connections(&mut self, io: &mut Io) {
        let mut to_clear = self.conns.to_clear();
        while to_clear > 0 {
            let waiting =
                self.conns.slots.iter().position(|c| {
                    c.state == ConnState::Connecting && c.reasons & REASON_CLOSEST == 0
                });
            let i = match waiting {
                Some(i) => i,
                None => {
                    let limit = MAX_GROUP_CONNECTIONS.saturating_sub(to_clear);
                    let mut i = 0;
                    while i < limit
                        && self.conns.slots.get(i).is_some_and(|c| {
                            c.state != ConnState::Online || c.reasons & REASON_CLOSEST != 0
                        })
                    {
                        i += 1;
                    }
                    i
                }
            };
            if self
                .conns
                .get(i)
                .is_some_and(|c| c.state != ConnState::None)
            {
                self.remove_connection(io, i);
            }
            to_clear -= 1;
        }
        self.conns.squash();
    }

    // --- timers ---

    /// `ping_groupchat`.
    pub fn ping(&mut self, io: &mut Io) {
        if self.last_sent_ping.saturating_add(GROUP_PING_INTERVAL) <= io.now
            && self.send_message(io, &MessageBody::Ping).is_ok()
        {
            self.last_sent_ping = io.now;
        }
    }

    /// `groupchat_freeze_timedout`. Like group.c, the peer swapped into a frozen peer's
    /// place is looked at on the next tick, not this one.
    pub fn freeze_timed_out(&mut self, io: &mut Io) {
        let mut i = 0;
        while i < self.peers.len() {
            let timed_out = self.peers.get(i).is_some_and(|p| {
                p.peer_number != self.peer_number
                    && p.last_active.saturating_add(FREEZE_TIMEOUT) <= io.now
            });
            if timed_out {
                self.freeze_peer(io, i);
            }
            i += 1;
        }
        if self.peers.len() <= 1 {
            self.title_fresh = false;
        }
    }

    /// One round of `do_groupchats` for a connected conference.
    pub fn tick(&mut self, io: &mut Io) {
        if self.status != Status::Connected {
            return;
        }
        self.connect_to_closest(io);
        self.ping(io);
        self.freeze_timed_out(io);
        self.clean_connections(io);
        if self.need_send_name {
            let name = io.self_name.clone();
            let _ = self.send_raw_message(io, wire::MESSAGE_NAME_ID, &name);
            self.need_send_name = false;
        }
    }

    /// Whether the next tick has work now (not only on the timers).
    pub fn wants_tick(&self) -> bool {
        self.status == Status::Connected
            && (self.closest.changed != Change::None || self.need_send_name)
    }

    /// When the timers next fire, in seconds.
    pub fn next_timer(&self) -> Option<u64> {
        if self.status != Status::Connected {
            return None;
        }
        let ping = self.last_sent_ping.saturating_add(GROUP_PING_INTERVAL);
        let freeze = self
            .peers
            .iter()
            .filter(|p| p.peer_number != self.peer_number)
            .map(|p| p.last_active.saturating_add(FREEZE_TIMEOUT))
            .min();
        Some(freeze.map_or(ping, |f| f.min(ping)))
    }

    /// Bytes this conference holds, roughly.
    pub fn memory_estimate(&self) -> usize {
        let peer = std::mem::size_of::<Peer>();
        let names: usize = self
            .peers
            .iter()
            .chain(self.frozen.iter())
            .map(|p| p.nick.capacity())
            .sum();
        std::mem::size_of::<Self>()
            + (self.peers.capacity() + self.frozen.capacity()) * peer
            + names
            + self.title.capacity()
    }
}
