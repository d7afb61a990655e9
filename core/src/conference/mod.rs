//! Conferences: the old group chats of c-toxcore 0.2.18 (`toxcore/group.c`, docs/protocol.md
//! §12), sans-IO.
//!
//! A conference rides on friend connections: to friends, and to peers that are not friends
//! (the node keeps a hidden link for those). [`Conferences`] never sees a socket or a
//! session. The node feeds it what happens on the links ([`Conferences::handle_link_status`],
//! [`Conferences::handle_packet`]) and the user's commands, and pulls out
//! [`LinkAction`]s (open or release a link to a real key, send a packet on it) with
//! [`Conferences::poll_action`] and [`ConferenceEvent`]s with [`Conferences::poll_event`].
//!
//! Peer numbers given to the application are indices into the conference's list of online
//! (or offline) peers, as tox.h's are; they change when a peer leaves. The 16-bit peer ids of
//! the wire never leave this module.

mod closest;
mod connections;
mod dispatch;
mod group;
mod inbound;
mod io;
mod outbound;
mod peers;
mod persist;
pub mod wire;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_net;

use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, PublicKey};
use rustox_net_crypto::Timestamp;

use crate::savedata::SavedConference;
use crate::types::MessageKind;

pub use closest::{comp_value, DESIRED_CLOSEST};
pub use connections::MAX_GROUP_CONNECTIONS;
pub use group::{FREEZE_TIMEOUT, GROUP_PING_INTERVAL, MAX_FROZEN_PEERS, MAX_PEERS};
pub use io::{ConferenceStats, MAX_QUEUED_ACTIONS, MAX_QUEUED_EVENTS};
pub use peers::{MAX_LAST_MESSAGE_INFOS, MAX_LOSSY_COUNT};
pub use wire::MAX_MESSAGE_DATA_LEN;

use group::{Group, SendError, Status};
use io::Io;
use wire::{Cookie, InvitePacket, OnlinePacket, RejoinPacket};

/// Conferences a node holds (joined, joining or loaded); beyond, `create`, `join` and
/// `load` fail. c-toxcore numbers them with 16 bits on the wire.
pub const MAX_CONFERENCES: usize = 1024;

/// `GROUP_ID_LENGTH`: a conference's id, random, chosen by its founder.
pub const CONFERENCE_ID_LEN: usize = 32;
/// The invite cookie handed to the application and back to [`Conferences::join`]: the
/// inviter's conference number (u16 big-endian), the type byte, the id.
pub const INVITE_COOKIE_LEN: usize = 2 + 1 + CONFERENCE_ID_LEN;
/// `MAX_NAME_LENGTH`: the longest title and the longest peer name.
pub const MAX_TITLE_LEN: usize = crate::types::MAX_NAME_LEN;
/// `TOX_MAX_MESSAGE_LENGTH`, tox.h's bound. group.c refuses more than
/// [`MAX_MESSAGE_DATA_LEN`] (1363) bytes with `TOO_LONG`, and so does
/// [`Conferences::send_message`].
pub const MAX_CONFERENCE_MESSAGE_LEN: usize = 1372;
/// `MAX_FROZEN_DEFAULT`: offline peers kept per conference until the user sets another bound.
pub const DEFAULT_MAX_OFFLINE: u32 = 128;

/// A conference's number, as the application sees it (the lowest free slot is reused, as
/// c-toxcore's `create_group_chat` does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConferenceNumber(pub u32);

/// A conference's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConferenceId(pub [u8; CONFERENCE_ID_LEN]);

/// `Tox_Conference_Type`, the type byte of invites and the save file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConferenceType {
    /// Text only (0).
    Text,
    /// Text and audio (1): audio rides on lossy packet 199.
    Av,
}

impl ConferenceType {
    /// The wire byte.
    pub fn to_byte(self) -> u8 {
        match self {
            ConferenceType::Text => 0,
            ConferenceType::Av => 1,
        }
    }
    /// From the wire byte; other values are not a type c-toxcore 0.2.18 knows.
    pub fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(ConferenceType::Text),
            1 => Some(ConferenceType::Av),
            _ => None,
        }
    }
}

/// Which of a conference's two peer lists a peer number indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerList {
    /// Peers we hear from (tox.h's "peer" functions).
    Online,
    /// Frozen peers: gone quiet, remembered until they return (tox.h's "offline_peer").
    Offline,
}

/// What the engine asks the node to do with its links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkAction {
    /// Keep a friend connection to `pk` (a friend's, or a hidden one for a stranger) and
    /// report its status with [`Conferences::handle_link_status`]. `dht_pk` is the peer's DHT
    /// key as the conference knows it, a hint to dial before the onion finds it. Each
    /// `Open` is matched by one [`LinkAction::Release`].
    Open {
        /// The peer's real key.
        pk: PublicKey,
        /// Its DHT key, when known.
        dht_pk: Option<PublicKey>,
    },
    /// One reason to keep the link to `pk` is gone.
    Release {
        /// The peer's real key.
        pk: PublicKey,
    },
    /// Send `data` (its first byte is the packet id: 96–100 lossless, 199 lossy) on the link
    /// to `pk`, if it is connected. A packet to a link that is down is dropped.
    Send {
        /// The peer's real key.
        pk: PublicKey,
        /// The packet, id first.
        data: Vec<u8>,
        /// A lossy packet (199) rather than a lossless one.
        lossy: bool,
    },
}

/// What the engine tells the application (tox.h's six conference callbacks, and the lossy
/// packets group audio rides on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConferenceEvent {
    /// A friend invites us (`tox_conference_invite_cb`); pass the cookie to
    /// [`Conferences::join`].
    Invite {
        /// The inviting friend's real key (the node maps it to a friend number).
        friend_pk: PublicKey,
        /// The conference's type.
        kind: ConferenceType,
        /// [`INVITE_COOKIE_LEN`] bytes.
        cookie: Vec<u8>,
    },
    /// We are connected to a conference we joined (`tox_conference_connected_cb`).
    Connected {
        /// Which conference.
        conference: ConferenceNumber,
    },
    /// A message or action (`tox_conference_message_cb`), ours included as c-toxcore
    /// reports them.
    Message {
        /// Which conference.
        conference: ConferenceNumber,
        /// The sender's peer number (online list).
        peer: u32,
        /// Message or action.
        kind: MessageKind,
        /// The text (bytes, not necessarily UTF-8).
        text: Vec<u8>,
    },
    /// The title changed (`tox_conference_title_cb`).
    Title {
        /// Which conference.
        conference: ConferenceNumber,
        /// Who set it; `u32::MAX` when it came with the peer list on joining.
        peer: u32,
        /// The new title.
        title: Vec<u8>,
    },
    /// A peer's name changed (`tox_conference_peer_name_cb`).
    PeerName {
        /// Which conference.
        conference: ConferenceNumber,
        /// The peer (online list).
        peer: u32,
        /// Its name.
        name: Vec<u8>,
    },
    /// Peers joined, left, froze or thawed (`tox_conference_peer_list_changed_cb`).
    PeerListChanged {
        /// Which conference.
        conference: ConferenceNumber,
    },
    /// A lossy packet from a peer (group audio, packet 199), deduplicated, its header
    /// removed: the first byte is the handler's id (192 for audio).
    Lossy {
        /// Which conference.
        conference: ConferenceNumber,
        /// The sender's peer number (online list).
        peer: u32,
        /// The payload.
        data: Vec<u8>,
    },
}

/// Why a conference command failed. Each maps onto one tox.h error code; the node and the
/// C API pick the code by the function that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConferenceError {
    /// No conference has that number (`CONFERENCE_NOT_FOUND`).
    #[error("no such conference")]
    NotFound,
    /// No peer has that number in the list asked for (`PEER_NOT_FOUND`).
    #[error("no such peer")]
    PeerNotFound,
    /// We are not connected to the conference yet (`NO_CONNECTION`).
    #[error("not connected to the conference")]
    NoConnection,
    /// A packet could not be sent (`FAIL_SEND`).
    #[error("the packet could not be sent")]
    FailSend,
    /// A message, title or cookie of the wrong length (`TOO_LONG`, `INVALID_LENGTH`).
    #[error("wrong length")]
    InvalidLength,
    /// No friend has that number (`FRIEND_NOT_FOUND` of `tox_conference_join`).
    #[error("no such friend")]
    FriendNotFound,
    /// The invite's type byte is not one we know (`WRONG_TYPE`).
    #[error("unknown conference type")]
    WrongType,
    /// We are already in that conference (`DUPLICATE`).
    #[error("already in that conference")]
    Duplicate,
    /// The conference table is full, or the join could not start (`INIT`, `INIT_FAIL`).
    #[error("could not create the conference")]
    Init,
}

/// All conferences of one node.
pub struct Conferences {
    io: Io,
    /// Slot `n` is conference `n` (`chats`); `None` is a free slot (`GROUPCHAT_STATUS_NONE`).
    chats: Vec<Option<Group>>,
    /// The last time any call told us.
    last_now: Timestamp,
    /// When the timers last ran.
    last_tick: Timestamp,
}

/// How often [`Conferences::handle_timeout`] wants to run when nothing is pending: group.c's
/// timers count whole seconds.
const TICK: Duration = Duration::from_secs(1);

impl Conferences {
    /// An empty set for the node whose real key is `self_pk`, whose DHT key is `self_dht_pk`
    /// (it goes into peer lists as our "temp" key) and whose name is `self_name`.
    pub fn new(self_pk: PublicKey, self_dht_pk: PublicKey, self_name: &[u8]) -> Self {
        let name = self_name.get(..MAX_TITLE_LEN).unwrap_or(self_name);
        Conferences {
            io: Io::new(self_pk, self_dht_pk, name),
            chats: Vec::new(),
            last_now: Timestamp::ZERO,
            last_tick: Timestamp::ZERO,
        }
    }

    fn set_now(&mut self, now: Timestamp) {
        if now > self.last_now {
            self.last_now = now;
        }
        self.io.now = self.last_now.as_secs().saturating_add(self.io.unix_offset);
    }

    /// Tells the engine the Unix time at `now`, so peers' last-active times (saved in the
    /// profile and given by [`Conferences::offline_peer_last_active`]) are Unix seconds as
    /// c-toxcore's are. Without it they count from the driver's origin.
    pub fn set_unix_time(&mut self, now: Timestamp, unix_secs: u64) {
        self.io.unix_offset = unix_secs.saturating_sub(now.as_secs());
        self.set_now(now);
    }

    /// Mixes fresh randomness into the generator of 16-bit peer ids (they need to be
    /// distinct, not secret; c-toxcore's `random_u16`). `create` does it too.
    pub fn reseed(&mut self, rng: &mut dyn CryptoRng) {
        self.io.reseed(rng.next_u64());
    }

    /// The node learned the DHT key of the link to `pk`: it goes into the peer lists and
    /// NEW_PEER messages we send about `pk` (group.c takes it from the friend connection).
    pub fn set_link_dht_pk(&mut self, pk: PublicKey, dht_pk: PublicKey) {
        self.io.set_link_dht_pk(pk, dht_pk);
    }

    /// Counters of dropped input and output.
    pub fn stats(&self) -> ConferenceStats {
        self.io.stats
    }

    /// Bytes the engine holds, roughly (peer lists, queues, link tables).
    pub fn memory_estimate(&self) -> usize {
        self.chats
            .iter()
            .flatten()
            .map(Group::memory_estimate)
            .sum::<usize>()
            + self.chats.capacity() * std::mem::size_of::<Option<Group>>()
            + self.io.memory_estimate()
    }

    fn group(&self, conference: ConferenceNumber) -> Result<&Group, ConferenceError> {
        usize::try_from(conference.0)
            .ok()
            .and_then(|i| self.chats.get(i))
            .and_then(Option::as_ref)
            .ok_or(ConferenceError::NotFound)
    }

    fn group_mut(&mut self, conference: ConferenceNumber) -> Option<&mut Group> {
        usize::try_from(conference.0)
            .ok()
            .and_then(|i| self.chats.get_mut(i))
            .and_then(Option::as_mut)
    }

    /// Splits the borrow: one conference and the shared state.
    fn parts(&mut self, number: usize) -> Option<(&mut Group, &mut Io)> {
        let g = self.chats.get_mut(number)?.as_mut()?;
        Some((g, &mut self.io))
    }

    /// `create_group_chat`: the lowest free slot.
    fn free_slot(&mut self) -> Option<u16> {
        if let Some(i) = self.chats.iter().position(Option::is_none) {
            return u16::try_from(i).ok();
        }
        if self.chats.len() >= MAX_CONFERENCES {
            return None;
        }
        self.chats.push(None);
        u16::try_from(self.chats.len().saturating_sub(1)).ok()
    }

    /// `wipe_group_chat`: free the slot and trim free slots off the end.
    fn wipe(&mut self, number: usize) {
        if let Some(slot) = self.chats.get_mut(number) {
            *slot = None;
        }
        while self.chats.last().is_some_and(Option::is_none) {
            self.chats.pop();
        }
    }

    /// `get_group_num`: the conference of that type and id.
    fn find(&self, kind: u8, id: &[u8; CONFERENCE_ID_LEN]) -> Option<usize> {
        self.chats
            .iter()
            .position(|g| g.as_ref().is_some_and(|g| g.kind == kind && g.id == *id))
    }

    /// Restores conferences saved in a profile (c-toxcore's `load_conferences`): each
    /// comes back with its peers frozen, and rejoins as they come online.
    pub fn load(&mut self, now: Timestamp, saved: &[SavedConference]) {
        self.set_now(now);
        for s in saved {
            let Some(n) = self.free_slot() else {
                return;
            };
            match Group::from_saved(n, s, &mut self.io) {
                Some(g) => {
                    if let Some(slot) = self.chats.get_mut(usize::from(n)) {
                        *slot = Some(g);
                    }
                }
                None => self.wipe(usize::from(n)),
            }
        }
    }

    /// What goes into the profile (c-toxcore's `conferences_save`).
    pub fn save(&self) -> Vec<SavedConference> {
        self.chats
            .iter()
            .flatten()
            .filter_map(|g| g.to_saved(&self.io))
            .collect()
    }

    // --- commands (tox.h) ---

    /// `tox_conference_new`: a conference with us as its only peer.
    pub fn create(
        &mut self,
        now: Timestamp,
        rng: &mut dyn CryptoRng,
        kind: ConferenceType,
    ) -> Result<ConferenceNumber, ConferenceError> {
        self.set_now(now);
        self.reseed(rng);
        let mut id = [0u8; CONFERENCE_ID_LEN];
        rng.fill_bytes(&mut id);
        let n = self.free_slot().ok_or(ConferenceError::Init)?;
        let mut g = Group::new(n, Status::Connected, kind.to_byte(), id);
        g.peer_number = 0;
        let (own, own_dht) = (self.io.self_pk, self.io.self_dht_pk);
        let index = g
            .add_peer(&mut self.io, own, own_dht, 0, true, false)
            .ok_or(ConferenceError::Init)?;
        let name = self.io.self_name.clone();
        g.set_nick(&mut self.io, index, &name, false);
        if let Some(slot) = self.chats.get_mut(usize::from(n)) {
            *slot = Some(g);
        }
        Ok(ConferenceNumber(u32::from(n)))
    }

    /// `tox_conference_delete`: leave (telling the peers) and forget.
    pub fn delete(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
    ) -> Result<(), ConferenceError> {
        self.leave(now, conference, true)
    }

    /// `del_groupchat`: leave (`permanent`: KILL_PEER, else FREEZE_PEER as `tox_kill`
    /// does) and forget.
    pub fn leave(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        permanent: bool,
    ) -> Result<(), ConferenceError> {
        self.set_now(now);
        self.group(conference)?;
        let n = conference.0 as usize;
        if let Some((g, io)) = self.parts(n) {
            g.leave(io, permanent);
            g.release_all(io);
        }
        self.wipe(n);
        Ok(())
    }

    /// `kill_groupchats`: leave every conference non-permanently (FREEZE_PEER), as
    /// `tox_kill` does, so the peers expect us back.
    pub fn close(&mut self, now: Timestamp) {
        for n in self.list() {
            let _ = self.leave(now, n, false);
        }
    }

    /// `tox_conference_invite`: queue the invite to the friend whose real key is
    /// `friend_pk`. The node checks the friend is online first (else `FAIL_SEND`).
    pub fn invite(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        friend_pk: PublicKey,
    ) -> Result<(), ConferenceError> {
        self.set_now(now);
        let g = self.group(conference)?;
        if g.status != Status::Connected {
            return Err(ConferenceError::NoConnection);
        }
        let packet = InvitePacket::Invite {
            group_number: g.number,
            kind: g.kind,
            id: g.id,
        };
        if self.io.send_invite(friend_pk, packet.encode()) {
            Ok(())
        } else {
            Err(ConferenceError::FailSend)
        }
    }

    /// `tox_conference_join`: answer the invite of the friend `friend_pk` (online; the node
    /// checks) with its `cookie`. Like tox.h's call it joins text conferences only
    /// (`WrongType` for an AV one; see [`Conferences::join_typed`]).
    pub fn join(
        &mut self,
        now: Timestamp,
        friend_pk: PublicKey,
        cookie: &[u8],
    ) -> Result<ConferenceNumber, ConferenceError> {
        self.join_typed(now, friend_pk, cookie, ConferenceType::Text)
    }

    /// The checks `join_groupchat` makes on a cookie before it looks at the friend:
    /// `InvalidLength`, then `WrongType`. The node calls it before its friend lookup so the
    /// errors come in tox.c's order.
    pub fn check_cookie(cookie: &[u8], expected: ConferenceType) -> Result<(), ConferenceError> {
        let cookie = Cookie::parse(cookie).map_err(|_| ConferenceError::InvalidLength)?;
        if cookie.kind != expected.to_byte() {
            return Err(ConferenceError::WrongType);
        }
        Ok(())
    }

    /// `join_groupchat` with the type the caller expects (toxav's AV join passes `Av`).
    pub fn join_typed(
        &mut self,
        now: Timestamp,
        friend_pk: PublicKey,
        cookie: &[u8],
        expected: ConferenceType,
    ) -> Result<ConferenceNumber, ConferenceError> {
        self.set_now(now);
        Self::check_cookie(cookie, expected)?;
        let cookie = Cookie::parse(cookie).map_err(|_| ConferenceError::InvalidLength)?;
        if self.find(cookie.kind, &cookie.id).is_some() {
            return Err(ConferenceError::Duplicate);
        }
        let n = self.free_slot().ok_or(ConferenceError::Init)?;
        // The id and type are taken once the answer is sent (`send_invite_response`).
        let mut g = Group::new(n, Status::Valid, 0, [0; CONFERENCE_ID_LEN]);
        if !g.send_invite_response(&mut self.io, friend_pk, &cookie) {
            self.wipe(usize::from(n));
            return Err(ConferenceError::FailSend);
        }
        if let Some(slot) = self.chats.get_mut(usize::from(n)) {
            *slot = Some(g);
        }
        Ok(ConferenceNumber(u32::from(n)))
    }

    /// `tox_conference_send_message`.
    pub fn send_message(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        kind: MessageKind,
        text: &[u8],
    ) -> Result<(), ConferenceError> {
        self.set_now(now);
        self.group(conference)?;
        let id = match kind {
            MessageKind::Normal => wire::MESSAGE_MESSAGE_ID,
            MessageKind::Action => wire::MESSAGE_ACTION_ID,
        };
        let (g, io) = self
            .parts(conference.0 as usize)
            .ok_or(ConferenceError::NotFound)?;
        match g.send_raw_message(io, id, text) {
            Ok(_) => Ok(()),
            Err(SendError::TooLong) => Err(ConferenceError::InvalidLength),
            Err(SendError::NoConnection) => Err(ConferenceError::NoConnection),
            Err(SendError::FailSend) => Err(ConferenceError::FailSend),
        }
    }

    /// `tox_conference_set_title` (`group_title_send`): alone in the conference the title
    /// is only stored; otherwise it goes out as a TITLE message (failure: `FailSend`).
    pub fn set_title(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        title: &[u8],
    ) -> Result<(), ConferenceError> {
        self.set_now(now);
        self.group(conference)?;
        if title.is_empty() || title.len() > MAX_TITLE_LEN {
            return Err(ConferenceError::InvalidLength);
        }
        let (g, io) = self
            .parts(conference.0 as usize)
            .ok_or(ConferenceError::NotFound)?;
        if g.title == title {
            return Ok(());
        }
        g.title = title.to_vec();
        if g.peers.len() == 1 {
            return Ok(());
        }
        g.send_raw_message(io, wire::MESSAGE_TITLE_ID, title)
            .map(|_| ())
            .map_err(|_| ConferenceError::FailSend)
    }

    /// `tox_conference_set_max_offline`.
    pub fn set_max_offline(
        &mut self,
        conference: ConferenceNumber,
        max: u32,
    ) -> Result<(), ConferenceError> {
        let g = self
            .group_mut(conference)
            .ok_or(ConferenceError::NotFound)?;
        g.max_frozen = max;
        g.delete_old_frozen();
        Ok(())
    }

    /// `send_group_lossy_packet`: group audio (first byte the handler id, 192).
    pub fn send_lossy(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        data: &[u8],
    ) -> Result<(), ConferenceError> {
        self.set_now(now);
        self.group(conference)?;
        let (g, io) = self
            .parts(conference.0 as usize)
            .ok_or(ConferenceError::NotFound)?;
        if g.send_lossy(io, data) {
            Ok(())
        } else {
            Err(ConferenceError::FailSend)
        }
    }

    /// Our name changed (`send_name_all_groups`).
    pub fn set_self_name(&mut self, now: Timestamp, name: &[u8]) {
        self.set_now(now);
        let name = name.get(..MAX_TITLE_LEN).unwrap_or(name).to_vec();
        self.io.self_name = name.clone();
        for slot in self.chats.iter_mut() {
            if let Some(g) = slot.as_mut() {
                if g.status == Status::Connected {
                    let _ = g.send_raw_message(&mut self.io, wire::MESSAGE_NAME_ID, &name);
                    g.need_send_name = false;
                }
            }
        }
    }

    /// Whether `pk` is a friend of ours (c-toxcore keeps friends first among frozen peers).
    /// A friend's link exists whatever the conferences hold, so the node reports its
    /// status too.
    pub fn set_friend(&mut self, pk: PublicKey, is_friend: bool) {
        self.io.set_friend(pk, is_friend);
    }

    // --- queries (tox.h) ---

    /// `tox_conference_get_chatlist`: the numbers in use, ascending.
    pub fn list(&self) -> Vec<ConferenceNumber> {
        self.chats
            .iter()
            .enumerate()
            .filter(|(_, g)| g.is_some())
            .filter_map(|(i, _)| u32::try_from(i).ok().map(ConferenceNumber))
            .collect()
    }
    /// `tox_conference_get_type`.
    pub fn kind(&self, conference: ConferenceNumber) -> Result<ConferenceType, ConferenceError> {
        let g = self.group(conference)?;
        // A joining conference's type is known once its answer went out; unknown bytes
        // cannot get in (invites of unknown types are dropped).
        Ok(ConferenceType::from_byte(g.kind).unwrap_or(ConferenceType::Text))
    }
    /// `tox_conference_get_id`.
    pub fn id(&self, conference: ConferenceNumber) -> Result<ConferenceId, ConferenceError> {
        Ok(self.group(conference)?.conference_id())
    }
    /// `tox_conference_by_id`.
    pub fn by_id(&self, id: &ConferenceId) -> Option<ConferenceNumber> {
        self.chats
            .iter()
            .position(|g| g.as_ref().is_some_and(|g| g.id == id.0))
            .and_then(|i| u32::try_from(i).ok())
            .map(ConferenceNumber)
    }
    /// `tox_conference_get_title`: c-toxcore answers `INVALID_LENGTH` for a conference
    /// without a title; so does this.
    pub fn title(&self, conference: ConferenceNumber) -> Result<&[u8], ConferenceError> {
        let g = self.group(conference)?;
        if g.title.is_empty() || g.title.len() > MAX_TITLE_LEN {
            return Err(ConferenceError::InvalidLength);
        }
        Ok(&g.title)
    }

    fn list_of(g: &Group, list: PeerList) -> &[peers::Peer] {
        match list {
            PeerList::Online => &g.peers,
            PeerList::Offline => &g.frozen,
        }
    }

    fn peer(
        &self,
        conference: ConferenceNumber,
        list: PeerList,
        peer: u32,
    ) -> Result<&peers::Peer, ConferenceError> {
        let g = self.group(conference)?;
        usize::try_from(peer)
            .ok()
            .and_then(|i| Self::list_of(g, list).get(i))
            .ok_or(ConferenceError::PeerNotFound)
    }

    /// `tox_conference_peer_count` / `tox_conference_offline_peer_count`.
    pub fn peer_count(
        &self,
        conference: ConferenceNumber,
        list: PeerList,
    ) -> Result<u32, ConferenceError> {
        let g = self.group(conference)?;
        Ok(u32::try_from(Self::list_of(g, list).len()).unwrap_or(u32::MAX))
    }
    /// `tox_conference_peer_get_name` / `..._offline_peer_get_name`.
    pub fn peer_name(
        &self,
        conference: ConferenceNumber,
        list: PeerList,
        peer: u32,
    ) -> Result<&[u8], ConferenceError> {
        Ok(&self.peer(conference, list, peer)?.nick)
    }
    /// `tox_conference_peer_get_public_key` / `..._offline_peer_get_public_key`.
    pub fn peer_public_key(
        &self,
        conference: ConferenceNumber,
        list: PeerList,
        peer: u32,
    ) -> Result<PublicKey, ConferenceError> {
        Ok(self.peer(conference, list, peer)?.real_pk)
    }
    /// `tox_conference_peer_number_is_ours` (`NO_CONNECTION` before we are connected).
    pub fn peer_number_is_ours(
        &self,
        conference: ConferenceNumber,
        peer: u32,
    ) -> Result<bool, ConferenceError> {
        let g = self.group(conference)?;
        let p = self.peer(conference, PeerList::Online, peer)?;
        if g.status != Status::Connected {
            return Err(ConferenceError::NoConnection);
        }
        Ok(p.peer_number == g.peer_number)
    }
    /// `tox_conference_offline_peer_get_last_active`: Unix seconds (see
    /// [`Conferences::set_unix_time`]).
    pub fn offline_peer_last_active(
        &self,
        conference: ConferenceNumber,
        peer: u32,
    ) -> Result<u64, ConferenceError> {
        Ok(self.peer(conference, PeerList::Offline, peer)?.last_active)
    }
    /// Whether we are connected to the conference (c-toxcore's `GROUPCHAT_STATUS_CONNECTED`).
    pub fn is_connected(&self, conference: ConferenceNumber) -> Result<bool, ConferenceError> {
        Ok(self.group(conference)?.status == Status::Connected)
    }

    // --- links ---

    /// The friend connection to `pk` came up (`online`) or went down. The node reports
    /// every friend's link and every link we opened (`g_handle_any_status` then
    /// `g_handle_status`): a link coming up to a frozen peer asks it to rejoin.
    pub fn handle_link_status(&mut self, now: Timestamp, pk: PublicKey, online: bool) {
        self.set_now(now);
        if !self.io.set_link_status(pk, online) {
            return;
        }
        if online {
            for slot in self.chats.iter_mut() {
                if let Some(g) = slot.as_mut() {
                    if let Some(f) = g.frozen_by_pk(&pk) {
                        let dht = g.frozen.get(f).map(|p| p.temp_pk);
                        g.try_send_rejoin(&mut self.io, &pk, dht);
                    }
                }
            }
        }
        for slot in self.chats.iter_mut() {
            if let Some(g) = slot.as_mut() {
                g.link_status(&mut self.io, &pk, online);
            }
        }
    }

    /// A packet on the link to `pk` whose first byte is 96–100 (lossless) or 199 (lossy).
    /// Packet 96 (invites) is accepted only from friends that are online for Messenger: the
    /// node passes it only then. Bad packets are dropped and counted; nothing panics.
    pub fn handle_packet(&mut self, now: Timestamp, pk: PublicKey, data: &[u8]) {
        self.set_now(now);
        let handled = match data.first() {
            Some(&wire::PACKET_ID_INVITE) => self.handle_invite(pk, data),
            Some(&wire::PACKET_ID_ONLINE) => match OnlinePacket::parse(data) {
                Ok(p) => self
                    .find(p.kind, &p.id)
                    .and_then(|n| self.parts(n))
                    .is_some_and(|(g, io)| g.handle_online(io, pk, &p)),
                Err(_) => false,
            },
            Some(&wire::PACKET_ID_REJOIN) if data.len() >= 4 => match RejoinPacket::parse(data) {
                Ok(p) => self
                    .find(p.kind, &p.id)
                    .and_then(|n| self.parts(n))
                    .is_some_and(|(g, io)| g.handle_rejoin(io, pk)),
                Err(_) => false,
            },
            Some(&(wire::PACKET_ID_DIRECT | wire::PACKET_ID_MESSAGE | wire::PACKET_ID_LOSSY)) => {
                self.handle_group_packet(pk, data)
            }
            _ => false,
        };
        if !handled {
            self.io.drop_packet();
        }
    }

    /// Timers: pings, peer timeouts, reconnecting to the closest peers (`do_groupchats`).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.set_now(now);
        self.last_tick = self.last_now;
        for slot in self.chats.iter_mut() {
            if let Some(g) = slot.as_mut() {
                g.tick(&mut self.io);
            }
        }
    }

    /// When [`Conferences::handle_timeout`] wants to run next: at once when a conference
    /// has a change to act on, else each second while any conference is connected.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let mut any = false;
        for g in self.chats.iter().flatten() {
            if g.wants_tick() {
                return Some(self.last_now);
            }
            any |= g.next_timer().is_some();
        }
        any.then(|| self.last_tick.saturating_add(TICK))
    }

    /// The next thing to do on a link.
    pub fn poll_action(&mut self) -> Option<LinkAction> {
        self.io.poll_action()
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<ConferenceEvent> {
        self.io.poll_event()
    }
}
