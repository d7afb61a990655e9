//! The friend list: who we talk to, by number and by key.
//!
//! Friend numbers are small integers handed to the application, as `tox.h`'s are: the
//! lowest free one is reused after a deletion (`Messenger.c` `m_addfriend` takes the first
//! empty slot). The list is bounded, so a flood of accepted requests cannot grow it.
//!
//! Beside the friends it holds hidden links: friend connections to conference peers that
//! are not our friends (c-toxcore's `friend_connection.c` keeps one `Friend_Conn` for
//! both, with a lock count; Messenger's list names only the friends). A hidden link is
//! searched for, dialled and kept alive exactly as a friend is, but its number lies in a
//! range of its own (from [`HIDDEN_BASE`]) that the application never sees: [`Self::get`],
//! [`Self::by_pk`], [`Self::iter`] and [`Self::numbers`] name friends only, and the
//! `link*` calls name both. A friend deleted while a conference holds its connection
//! becomes hidden ([`Self::demote`]); a hidden key added as a friend takes the lowest free
//! friend number ([`Self::promote`]).

use std::collections::HashMap;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::ConnectionId;
use rustox_net_crypto::Timestamp;

use super::files::FriendFiles;
use crate::friend::{FriendConnection, FriendRequest, RequestSchedule};
pub use crate::types::{FriendNumber, MAX_FRIENDS};

/// What the node knows of one friend.
pub struct Friend {
    /// The friend's long-term (real) key.
    pub(super) pk: PublicKey,
    /// friend_connection: the friend's DHT key and addresses, when to open, keep and kill
    /// its session (docs/protocol.md §4).
    pub(super) conn: FriendConnection,
    /// The net_crypto session to the friend, while one exists.
    pub(super) session: Option<ConnectionId>,
    /// A session friend_connection asked for while no address was known: the DHT key to
    /// dial with once one arrives (c-toxcore keeps such a connection waiting for a path).
    pub(super) awaiting_addr: Option<PublicKey>,
    /// Messenger's view: the friend sent `ONLINE` (docs/protocol.md §3.1) on the current
    /// session. Until then everything else from it is dropped.
    pub(super) online: bool,
    /// Added because it dialled a node that accepts strangers: we take its sessions but
    /// never dial it, and it is the first to go when the list is full.
    pub(super) passive: bool,
    /// Our friend request to it, while it has not come online (§6.5).
    pub(super) request: Option<OutgoingRequest>,
    /// File transfers with this friend.
    pub(super) files: FriendFiles,
    /// When our DHT-PK packet next goes to it by the DHT route (`onion_ops.rs`); `None`:
    /// as soon as its DHT key is known.
    pub(super) dht_route_due: Option<Timestamp>,
    /// What it told us about itself, and what we tell it (`presence.rs`).
    pub(super) presence: super::presence::FriendPresence,
    /// Messages sent to it whose receipt is pending (`messenger.rs`).
    pub(super) receipts: super::messenger::Receipts,
    /// Unix seconds when it was last online (saved in profiles; 0: never).
    pub(super) last_seen: u64,
    /// How many of the conferences' reasons hold this connection
    /// ([`crate::conference::LinkAction::Open`] less `Release`; c-toxcore's `lock_count`).
    /// A hidden link goes when it falls to zero.
    pub(super) conference_refs: u32,
}

/// A friend request we are sending: the body, and when to send it again.
pub struct OutgoingRequest {
    /// What goes out (nospam and message).
    pub(super) request: FriendRequest,
    /// The retry schedule (5 s, doubling, until the friend comes online).
    pub(super) schedule: RequestSchedule,
}

impl Friend {
    /// When the DHT route wants a turn: while the friend is offline and its DHT key known.
    pub fn dht_route_deadline(&self) -> Option<Timestamp> {
        if self.online || self.passive || self.conn.dht_pk().is_none() {
            return None;
        }
        Some(self.dht_route_due.unwrap_or(Timestamp::ZERO))
    }

    fn new(pk: PublicKey) -> Self {
        Friend {
            pk,
            conn: FriendConnection::new(pk),
            session: None,
            awaiting_addr: None,
            online: false,
            passive: false,
            request: None,
            files: FriendFiles::default(),
            dht_route_due: None,
            presence: Default::default(),
            receipts: Default::default(),
            last_seen: 0,
            conference_refs: 0,
        }
    }

    /// Forgets what Messenger knew (a friend turning into a hidden link): the
    /// connection's state and the conferences' references stay.
    pub(super) fn forget_messenger(&mut self) {
        self.online = false;
        self.passive = false;
        self.request = None;
        self.files = FriendFiles::default();
        self.presence = Default::default();
        self.receipts = Default::default();
        self.last_seen = 0;
    }

    /// The friend's DHT key, if known.
    pub fn dht_pk(&self) -> Option<PublicKey> {
        self.conn.dht_pk()
    }
}

/// Why a friend could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FriendListError {
    /// The key is already a friend.
    #[error("already a friend")]
    AlreadyFriend,
    /// [`MAX_FRIENDS`] reached.
    #[error("the friend list is full")]
    Full,
}

/// The first number of a hidden link. Friend numbers stay below [`MAX_FRIENDS`], so the
/// two ranges never meet, and a hidden number never reaches the application.
pub const HIDDEN_BASE: u32 = 1 << 31;

/// Most hidden links a node keeps: each is a conference peer's connection, and the
/// conferences bound their peers; this bounds the sum whatever they do.
pub const MAX_HIDDEN_LINKS: usize = MAX_FRIENDS;

/// The friends and the hidden links, by number, with an index by real key.
#[derive(Default)]
pub struct FriendList {
    /// Friends, at their numbers.
    slots: Vec<Option<Friend>>,
    /// Hidden links, at their numbers less [`HIDDEN_BASE`].
    hidden: Vec<Option<Friend>>,
    /// Friends and hidden links.
    by_pk: HashMap<PublicKey, FriendNumber>,
}

/// The lowest free slot of `slots`, growing it up to `max`.
fn free_slot(slots: &mut Vec<Option<Friend>>, max: usize) -> Option<usize> {
    match slots.iter().position(Option::is_none) {
        Some(i) => Some(i),
        None if slots.len() < max => {
            slots.push(None);
            Some(slots.len() - 1)
        }
        None => None,
    }
}

impl FriendList {
    /// Adds `pk` as a friend in the lowest free slot. A key already known, as a friend or
    /// as a hidden link, is refused: a hidden link becomes a friend by [`Self::promote`].
    pub fn add(&mut self, pk: PublicKey) -> Result<FriendNumber, FriendListError> {
        if self.by_pk.contains_key(&pk) {
            return Err(FriendListError::AlreadyFriend);
        }
        let index = free_slot(&mut self.slots, MAX_FRIENDS).ok_or(FriendListError::Full)?;
        let number = FriendNumber(index as u32);
        self.slots[index] = Some(Friend::new(pk));
        self.by_pk.insert(pk, number);
        Ok(number)
    }

    /// Adds `pk` as a hidden link in the lowest free hidden slot.
    pub fn add_hidden(&mut self, pk: PublicKey) -> Result<FriendNumber, FriendListError> {
        if self.by_pk.contains_key(&pk) {
            return Err(FriendListError::AlreadyFriend);
        }
        let index = free_slot(&mut self.hidden, MAX_HIDDEN_LINKS).ok_or(FriendListError::Full)?;
        let number = FriendNumber(HIDDEN_BASE + index as u32);
        self.hidden[index] = Some(Friend::new(pk));
        self.by_pk.insert(pk, number);
        Ok(number)
    }

    /// The hidden link `number` becomes a friend, at the lowest free friend number, with
    /// its connection as it is. Refused (and left hidden) when the friend list is full.
    pub fn promote(&mut self, number: FriendNumber) -> Result<FriendNumber, FriendListError> {
        if !self.is_hidden(number) || self.link(number).is_none() {
            return Err(FriendListError::AlreadyFriend);
        }
        let index = free_slot(&mut self.slots, MAX_FRIENDS).ok_or(FriendListError::Full)?;
        let friend = self.take(number).ok_or(FriendListError::AlreadyFriend)?;
        let new = FriendNumber(index as u32);
        self.by_pk.insert(friend.pk, new);
        self.slots[index] = Some(friend);
        Ok(new)
    }

    /// The friend `number` becomes a hidden link, with its connection as it is and what
    /// Messenger knew forgotten. Refused (and left a friend) when no hidden slot is free.
    pub fn demote(&mut self, number: FriendNumber) -> Result<FriendNumber, FriendListError> {
        if self.is_hidden(number) || self.get(number).is_none() {
            return Err(FriendListError::AlreadyFriend);
        }
        let index = free_slot(&mut self.hidden, MAX_HIDDEN_LINKS).ok_or(FriendListError::Full)?;
        let mut friend = self.take(number).ok_or(FriendListError::AlreadyFriend)?;
        friend.forget_messenger();
        let new = FriendNumber(HIDDEN_BASE + index as u32);
        self.by_pk.insert(friend.pk, new);
        self.hidden[index] = Some(friend);
        Ok(new)
    }

    /// Removes a friend or a hidden link; returns what was known of it.
    pub fn remove(&mut self, number: FriendNumber) -> Option<Friend> {
        let friend = self.take(number)?;
        self.by_pk.remove(&friend.pk);
        Some(friend)
    }

    /// Takes the entry out of its slot, leaving the index by key alone.
    fn take(&mut self, number: FriendNumber) -> Option<Friend> {
        let slots = if self.is_hidden(number) {
            &mut self.hidden
        } else {
            &mut self.slots
        };
        let friend = slots.get_mut(slot_index(number))?.take()?;
        while slots.last().is_some_and(Option::is_none) {
            slots.pop();
        }
        Some(friend)
    }

    /// Whether `number` is in the hidden links' range.
    pub fn is_hidden(&self, number: FriendNumber) -> bool {
        number.0 >= HIDDEN_BASE
    }

    /// The friend with this number (never a hidden link).
    pub fn get(&self, number: FriendNumber) -> Option<&Friend> {
        if self.is_hidden(number) {
            return None;
        }
        self.slots.get(slot_index(number))?.as_ref()
    }

    /// The friend with this number, mutably (never a hidden link).
    pub fn get_mut(&mut self, number: FriendNumber) -> Option<&mut Friend> {
        if self.is_hidden(number) {
            return None;
        }
        self.slots.get_mut(slot_index(number))?.as_mut()
    }

    /// The friend or hidden link with this number.
    pub fn link(&self, number: FriendNumber) -> Option<&Friend> {
        let slots = if self.is_hidden(number) {
            &self.hidden
        } else {
            &self.slots
        };
        slots.get(slot_index(number))?.as_ref()
    }

    /// The friend or hidden link with this number, mutably.
    pub fn link_mut(&mut self, number: FriendNumber) -> Option<&mut Friend> {
        let slots = if self.is_hidden(number) {
            &mut self.hidden
        } else {
            &mut self.slots
        };
        slots.get_mut(slot_index(number))?.as_mut()
    }

    /// The number of the friend with this real key (never a hidden link).
    pub fn by_pk(&self, pk: &PublicKey) -> Option<FriendNumber> {
        self.by_pk.get(pk).copied().filter(|n| !self.is_hidden(*n))
    }

    /// The number of the friend or hidden link with this real key.
    pub fn link_by_pk(&self, pk: &PublicKey) -> Option<FriendNumber> {
        self.by_pk.get(pk).copied()
    }

    /// The number of the friend or hidden link whose current session is `id`.
    pub fn by_session(&self, id: ConnectionId) -> Option<FriendNumber> {
        self.links()
            .find(|(_, f)| f.session == Some(id))
            .map(|(n, _)| n)
    }

    /// The number of the friend or hidden link with this DHT key.
    pub fn by_dht_pk(&self, dht_pk: &PublicKey) -> Option<FriendNumber> {
        self.links()
            .find(|(_, f)| f.dht_pk().as_ref() == Some(dht_pk))
            .map(|(n, _)| n)
    }

    /// Every friend, in number order (no hidden link).
    pub fn iter(&self) -> impl Iterator<Item = (FriendNumber, &Friend)> {
        numbered(&self.slots, 0)
    }

    /// Every friend, mutably, in number order (no hidden link).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (FriendNumber, &mut Friend)> {
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(|(i, f)| f.as_mut().map(|f| (FriendNumber(i as u32), f)))
    }

    /// Every friend, then every hidden link: what drives connections.
    pub fn links(&self) -> impl Iterator<Item = (FriendNumber, &Friend)> {
        numbered(&self.slots, 0).chain(numbered(&self.hidden, HIDDEN_BASE))
    }

    /// Every friend's number (no hidden link).
    pub fn numbers(&self) -> Vec<FriendNumber> {
        self.iter().map(|(n, _)| n).collect()
    }

    /// Every friend's and hidden link's number.
    pub fn link_numbers(&self) -> Vec<FriendNumber> {
        self.links().map(|(n, _)| n).collect()
    }

    /// How many friends (hidden links not counted).
    pub fn len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    /// How many hidden links.
    pub fn hidden_len(&self) -> usize {
        self.hidden.iter().flatten().count()
    }
}

/// The index of `number` in its own range's slots.
fn slot_index(number: FriendNumber) -> usize {
    (number.0 & !HIDDEN_BASE) as usize
}

/// The occupied slots of `slots`, numbered from `base`.
fn numbered(slots: &[Option<Friend>], base: u32) -> impl Iterator<Item = (FriendNumber, &Friend)> {
    slots
        .iter()
        .enumerate()
        .filter_map(move |(i, f)| f.as_ref().map(|f| (FriendNumber(base + i as u32), f)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustox_net_crypto::crypto::KeyPair;

    fn key() -> PublicKey {
        KeyPair::generate(&mut rand::rngs::OsRng).public
    }

    #[test]
    fn numbers_are_reused_lowest_first_and_lookups_follow() {
        let mut list = FriendList::default();
        let (a, b, c) = (key(), key(), key());
        assert_eq!(list.add(a), Ok(FriendNumber(0)));
        assert_eq!(list.add(b), Ok(FriendNumber(1)));
        assert_eq!(list.add(a), Err(FriendListError::AlreadyFriend));
        assert!(list.remove(FriendNumber(0)).is_some());
        assert_eq!(list.by_pk(&a), None);
        assert_eq!(list.add(c), Ok(FriendNumber(0)));
        assert_eq!(list.by_pk(&c), Some(FriendNumber(0)));
        assert_eq!(list.by_pk(&b), Some(FriendNumber(1)));
        assert_eq!(list.len(), 2);
        assert!(list.remove(FriendNumber(7)).is_none());
    }

    #[test]
    fn hidden_links_have_their_own_numbers_and_stay_out_of_the_friends_view() {
        let mut list = FriendList::default();
        let (a, b, h) = (key(), key(), key());
        assert_eq!(list.add(a), Ok(FriendNumber(0)));
        let hidden = list.add_hidden(h).unwrap();
        assert!(list.is_hidden(hidden));
        assert_eq!(hidden, FriendNumber(HIDDEN_BASE));
        assert_eq!(list.add_hidden(h), Err(FriendListError::AlreadyFriend));
        assert_eq!(list.add(h), Err(FriendListError::AlreadyFriend));
        // The friends' view: no hidden link anywhere.
        assert_eq!(list.by_pk(&h), None);
        assert!(list.get(hidden).is_none());
        assert_eq!(list.numbers(), vec![FriendNumber(0)]);
        assert_eq!(list.len(), 1);
        // The links' view: both.
        assert_eq!(list.link_by_pk(&h), Some(hidden));
        assert_eq!(list.link(hidden).map(|f| f.pk), Some(h));
        assert_eq!(list.link_numbers(), vec![FriendNumber(0), hidden]);
        assert_eq!(list.hidden_len(), 1);
        // A friend number stays the lowest free one among friends.
        assert_eq!(list.add(b), Ok(FriendNumber(1)));
        assert!(list.remove(FriendNumber(0)).is_some());
        // Promoted, the hidden link takes friend number 0 and keeps its state.
        list.link_mut(hidden).unwrap().conference_refs = 2;
        let promoted = list.promote(hidden).unwrap();
        assert_eq!(promoted, FriendNumber(0));
        assert_eq!(list.by_pk(&h), Some(promoted));
        assert_eq!(list.get(promoted).unwrap().conference_refs, 2);
        assert_eq!(list.hidden_len(), 0);
        assert!(list.link(hidden).is_none());
        // Demoted, a friend leaves the friends' view with its Messenger state forgotten.
        list.get_mut(FriendNumber(1)).unwrap().online = true;
        let demoted = list.demote(FriendNumber(1)).unwrap();
        assert!(list.is_hidden(demoted));
        assert_eq!(list.by_pk(&b), None);
        assert_eq!(list.link_by_pk(&b), Some(demoted));
        assert!(!list.link(demoted).unwrap().online);
        assert_eq!(list.numbers(), vec![FriendNumber(0)]);
        // Removing a hidden link frees its key.
        assert!(list.remove(demoted).is_some());
        assert_eq!(list.link_by_pk(&b), None);
        assert_eq!(
            list.promote(FriendNumber(0)),
            Err(FriendListError::AlreadyFriend)
        );
        assert_eq!(list.demote(demoted), Err(FriendListError::AlreadyFriend));
    }

    #[test]
    fn the_list_is_bounded() {
        let mut list = FriendList::default();
        for _ in 0..MAX_FRIENDS {
            list.add(key()).unwrap();
        }
        assert_eq!(list.add(key()), Err(FriendListError::Full));
    }
}
