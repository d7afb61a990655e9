//! The friend list: who we talk to, by number and by key.
//!
//! Friend numbers are small integers handed to the application, as `tox.h`'s are: the
//! lowest free one is reused after a deletion (`Messenger.c` `m_addfriend` takes the first
//! empty slot). The list is bounded, so a flood of accepted requests cannot grow it.

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
        }
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

/// The friends, by number, with an index by real key.
#[derive(Default)]
pub struct FriendList {
    slots: Vec<Option<Friend>>,
    by_pk: HashMap<PublicKey, FriendNumber>,
}

impl FriendList {
    /// Adds `pk` in the lowest free slot.
    pub fn add(&mut self, pk: PublicKey) -> Result<FriendNumber, FriendListError> {
        if self.by_pk.contains_key(&pk) {
            return Err(FriendListError::AlreadyFriend);
        }
        let index = match self.slots.iter().position(Option::is_none) {
            Some(i) => i,
            None if self.slots.len() < MAX_FRIENDS => {
                self.slots.push(None);
                self.slots.len() - 1
            }
            None => return Err(FriendListError::Full),
        };
        let number = FriendNumber(index as u32);
        self.slots[index] = Some(Friend::new(pk));
        self.by_pk.insert(pk, number);
        Ok(number)
    }

    /// Removes a friend; returns what was known of it.
    pub fn remove(&mut self, number: FriendNumber) -> Option<Friend> {
        let friend = self.slots.get_mut(number.0 as usize)?.take()?;
        self.by_pk.remove(&friend.pk);
        while self.slots.last().is_some_and(Option::is_none) {
            self.slots.pop();
        }
        Some(friend)
    }

    /// The friend with this number.
    pub fn get(&self, number: FriendNumber) -> Option<&Friend> {
        self.slots.get(number.0 as usize)?.as_ref()
    }

    /// The friend with this number, mutably.
    pub fn get_mut(&mut self, number: FriendNumber) -> Option<&mut Friend> {
        self.slots.get_mut(number.0 as usize)?.as_mut()
    }

    /// The number of the friend with this real key.
    pub fn by_pk(&self, pk: &PublicKey) -> Option<FriendNumber> {
        self.by_pk.get(pk).copied()
    }

    /// The number of the friend whose current session is `id`.
    pub fn by_session(&self, id: ConnectionId) -> Option<FriendNumber> {
        self.iter()
            .find(|(_, f)| f.session == Some(id))
            .map(|(n, _)| n)
    }

    /// The number of the friend with this DHT key.
    pub fn by_dht_pk(&self, dht_pk: &PublicKey) -> Option<FriendNumber> {
        self.iter()
            .find(|(_, f)| f.dht_pk().as_ref() == Some(dht_pk))
            .map(|(n, _)| n)
    }

    /// Every friend, in number order.
    pub fn iter(&self) -> impl Iterator<Item = (FriendNumber, &Friend)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|f| (FriendNumber(i as u32), f)))
    }

    /// Every friend, mutably, in number order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (FriendNumber, &mut Friend)> {
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(|(i, f)| f.as_mut().map(|f| (FriendNumber(i as u32), f)))
    }

    /// Every friend's number.
    pub fn numbers(&self) -> Vec<FriendNumber> {
        self.iter().map(|(n, _)| n).collect()
    }

    /// How many friends.
    pub fn len(&self) -> usize {
        self.by_pk.len()
    }
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
    fn the_list_is_bounded() {
        let mut list = FriendList::default();
        for _ in 0..MAX_FRIENDS {
            list.add(key()).unwrap();
        }
        assert_eq!(list.add(key()), Err(FriendListError::Full));
    }
}
