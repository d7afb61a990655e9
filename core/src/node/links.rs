//! Friend connections held for the conferences (c-toxcore's `friend_connection.c` lock
//! count, and its `new_friend_connection` for conference peers that are not friends).
//!
//! A conference asks for a link to a peer's real key with [`LinkAction::Open`] and lets it
//! go with [`LinkAction::Release`]. To a friend, that is one more reference on the friend's
//! connection. To anyone else it is a hidden link: a friend connection in every way the
//! network sees (onion search and DHT lookup for the key, its sessions accepted, ALIVE and
//! SHARE_RELAYS), which the application never sees: no friend number, no events, no
//! Messenger packets, not saved (`friends.rs`). The last release closes it.
//!
//! Friends and hidden links trade places as c-toxcore's one table of connections lets them:
//! a friend deleted while a conference holds its connection keeps the connection as a
//! hidden link (`m_delfriend` only drops Messenger's lock), and a key added as a friend
//! while hidden takes over its connection (`init_new_friend` reuses it, and says `ONLINE`
//! at once when it is up).

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::Timestamp;

use super::friends::{Friend, FriendListError, FriendNumber};
use super::Node;
use crate::conference::LinkAction;
use crate::friend::FriendConnStatus;

impl Node {
    /// How many hidden links the node holds: connections to conference peers that are not
    /// friends, which [`Node::friends`] never lists.
    pub fn hidden_link_count(&self) -> usize {
        self.friends.hidden_len()
    }

    /// Carries out one of the conferences' link actions.
    pub(super) fn apply_link_action(&mut self, now: Timestamp, action: LinkAction) {
        match action {
            LinkAction::Open { pk, dht_pk } => self.open_link(now, pk, dht_pk),
            LinkAction::Release { pk } => self.release_link(now, pk),
            LinkAction::Send { pk, data, lossy } => self.send_on_link(now, &pk, &data, lossy),
        }
    }

    /// One more reference on the connection to `pk`, a hidden link made for it if it is not
    /// a friend. `dht_pk` is what the conference knows of the peer's DHT key: a link not
    /// yet under way dials it now (c-toxcore's `set_dht_temp_pk`); one being set up or up
    /// keeps its own. The conferences already know whether a link they open is up: every
    /// link's status changes are reported to them (`conference_link_status`).
    fn open_link(&mut self, now: Timestamp, pk: PublicKey, dht_pk: Option<PublicKey>) {
        if pk == self.keys.public {
            return;
        }
        let number = match self.friends.link_by_pk(&pk) {
            Some(n) => n,
            None => match self.friends.add_hidden(pk) {
                Ok(n) => {
                    self.watch_key(pk);
                    n
                }
                Err(_) => {
                    self.stats.links_refused = self.stats.links_refused.saturating_add(1);
                    return;
                }
            },
        };
        let Some(link) = self.friends.link_mut(number) else {
            return;
        };
        link.conference_refs = link.conference_refs.saturating_add(1);
        if let Some(dht_pk) = dht_pk {
            if link.conn.status() == FriendConnStatus::NotConnected {
                link.conn.set_dht_pk(now, dht_pk);
            }
        }
        self.drive_friend(now, number);
    }

    /// One reference fewer on the connection to `pk`; a hidden link left with none closes.
    fn release_link(&mut self, now: Timestamp, pk: PublicKey) {
        let Some(number) = self.friends.link_by_pk(&pk) else {
            return;
        };
        let Some(link) = self.friends.link_mut(number) else {
            return;
        };
        link.conference_refs = link.conference_refs.saturating_sub(1);
        if link.conference_refs > 0 || !self.friends.is_hidden(number) {
            return;
        }
        if let Some(gone) = self.friends.remove(number) {
            self.close_connection(now, &gone);
        }
    }

    /// A conference packet on the link to `pk`, if its session is up; dropped and counted
    /// when not (the conferences resend what matters).
    fn send_on_link(&mut self, now: Timestamp, pk: &PublicKey, data: &[u8], lossy: bool) {
        let session = self
            .friends
            .link_by_pk(pk)
            .and_then(|n| self.friends.link(n))
            .filter(|f| f.conn.status() == FriendConnStatus::Connected)
            .and_then(|f| f.session);
        let sent = match session.and_then(|id| self.endpoint.connection_mut(id)) {
            Some(conn) if lossy => conn.send_lossy(now, data).is_ok(),
            Some(conn) => conn.send_lossless(now, data).is_ok(),
            None => false,
        };
        if !sent {
            self.stats.conference_unsent = self.stats.conference_unsent.saturating_add(1);
        }
    }

    /// The friend entry for `pk` (c-toxcore's `init_new_friend`): a hidden link to it
    /// becomes the friend at the lowest free number, its connection kept; otherwise a new
    /// connection starts. The caller finishes with [`Node::friend_added`].
    pub(super) fn new_friend_entry(
        &mut self,
        pk: PublicKey,
    ) -> Result<FriendNumber, FriendListError> {
        match self.friends.link_by_pk(&pk) {
            Some(n) if self.friends.is_hidden(n) => self.friends.promote(n),
            Some(_) => Err(FriendListError::AlreadyFriend),
            None => {
                let n = self.friends.add(pk)?;
                self.watch_key(pk);
                Ok(n)
            }
        }
    }

    /// A friend was added: the conferences know it is one, and a connection that is
    /// already up (a hidden link's) gets Messenger's `ONLINE` now.
    pub(super) fn friend_added(&mut self, now: Timestamp, number: FriendNumber) {
        let Some(pk) = self.friends.get(number).map(|f| f.pk) else {
            return;
        };
        self.conferences.set_friend(pk, true);
        self.send_online_packet(now, number);
        self.drain_conferences(now);
    }

    /// The friend `number` is being deleted; true when a conference still holds its
    /// connection, which then stays as a hidden link (else the caller closes it).
    pub(super) fn keep_as_hidden(&mut self, number: FriendNumber) -> bool {
        let Some(f) = self.friends.get(number) else {
            return false;
        };
        let pk = f.pk;
        let held = f.conference_refs > 0;
        self.conferences.set_friend(pk, false);
        held && self.friends.demote(number).is_ok()
    }

    /// Messenger's `ONLINE` on a friend's connection that is up (`send_online_packet`).
    /// Nothing for a hidden link.
    pub(super) fn send_online_packet(&mut self, now: Timestamp, number: FriendNumber) {
        let Some(f) = self.friends.get(number) else {
            return;
        };
        if f.conn.status() != FriendConnStatus::Connected {
            return;
        }
        if let Some(conn) = f.session.and_then(|id| self.endpoint.connection_mut(id)) {
            let _ = conn.send_lossless(now, &[super::messenger::PACKET_ID_ONLINE]);
        }
    }

    /// Sessions from `pk` are accepted and the onion searches for it
    /// (`new_friend_connection`'s `onion_addfriend`).
    fn watch_key(&mut self, pk: PublicKey) {
        self.endpoint.allow_peer(pk);
        // The onion client's friend list is as large as ours, so this fails only for a key of
        // low order, which no Tox client can hold: like c-toxcore (whose `public_key_valid`
        // checks only the top bit), we keep such a friend, and nothing ever reaches it.
        let _ = self.onion_client.add_friend(pk, self.rng.as_mut());
    }

    /// The end of a connection (`kill_friend_connection` once unlocked): no more sessions
    /// from the key, no search for it, its session killed.
    pub(super) fn close_connection(&mut self, now: Timestamp, gone: &Friend) {
        self.endpoint.forbid_peer(&gone.pk);
        self.onion_client.remove_friend(&gone.pk);
        if let Some(dht_pk) = gone.dht_pk() {
            self.dht.remove_friend(&dht_pk);
        }
        if let Some(conn) = gone.session.and_then(|id| self.endpoint.connection_mut(id)) {
            conn.kill(now);
        }
    }
}
