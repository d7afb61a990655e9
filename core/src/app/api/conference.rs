//! Conferences on the [`Tox`] handle: tox.h's `tox_conference_*` calls as async methods.
//!
//! Each method runs one call (or, for the snapshots, one consistent read) on the node's
//! thread through [`Tox::with_node`] and returns the engine's
//! [`ConferenceError`](crate::conference::ConferenceError) as [`ToxError::Conference`].
//! What happens in a conference arrives in the handle's event stream:
//! [`NodeEvent::ConferenceInvite`](crate::node::NodeEvent::ConferenceInvite) (answer it with
//! [`Tox::conference_join`]) and
//! [`NodeEvent::Conference`](crate::node::NodeEvent::Conference) with a
//! [`ConferenceEvent`](crate::conference::ConferenceEvent) (connected, message, title, peer
//! name, peer list changed).
//!
//! Peer numbers are indices into a conference's online or offline list, as tox.h's are
//! (c-toxcore 0.2.18 `group.c`, `delpeer` swaps the last peer into a leaver's slot): a number
//! read here or carried by an event names the same peer until the next
//! `ConferenceEvent::PeerListChanged` of that conference.

use rustox_net_crypto::crypto::PublicKey;

use super::{Tox, ToxError};
use crate::conference::{
    ConferenceError, ConferenceId, ConferenceNumber, ConferenceType, Conferences, PeerList,
};
use crate::node::{FriendNumber, MessageKind};

/// One peer of a conference as its list shows it at the time of the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConferencePeer {
    /// Its number in the list it was read from.
    pub number: u32,
    /// Its real (long-term) public key.
    pub public_key: PublicKey,
    /// Its name in the conference (may be empty: a peer whose name has not arrived yet).
    pub name: Vec<u8>,
    /// This peer is us (`tox_conference_peer_number_is_ours`); never for offline peers.
    pub ours: bool,
    /// When an offline peer was last heard from, Unix seconds
    /// (`tox_conference_offline_peer_get_last_active`); `None` in the online list.
    pub last_active: Option<u64>,
}

/// A conference as it is at the time of the call, read in one go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConferenceInfo {
    /// Its number.
    pub number: ConferenceNumber,
    /// Its id (`tox_conference_get_id`), the same for every peer.
    pub id: ConferenceId,
    /// Text or audio (`tox_conference_get_type`).
    pub kind: ConferenceType,
    /// Its title; `None` while nobody has set one (c-toxcore answers `INVALID_LENGTH`).
    pub title: Option<Vec<u8>>,
    /// Whether we are connected to it (a conference we joined is not until a peer answers).
    pub connected: bool,
    /// The online peers, in peer-number order, us included.
    pub peers: Vec<ConferencePeer>,
    /// The offline (frozen) peers, in peer-number order.
    pub offline_peers: Vec<ConferencePeer>,
}

/// Reads one peer list.
fn read_peers(
    conferences: &Conferences,
    conference: ConferenceNumber,
    list: PeerList,
) -> Result<Vec<ConferencePeer>, ConferenceError> {
    let count = conferences.peer_count(conference, list)?;
    (0..count)
        .map(|number| read_peer(conferences, conference, list, number))
        .collect()
}

/// Reads one peer.
fn read_peer(
    conferences: &Conferences,
    conference: ConferenceNumber,
    list: PeerList,
    number: u32,
) -> Result<ConferencePeer, ConferenceError> {
    let public_key = conferences.peer_public_key(conference, list, number)?;
    let name = conferences.peer_name(conference, list, number)?.to_vec();
    let (ours, last_active) = match list {
        // Before we are connected c-toxcore answers NO_CONNECTION: nobody is us yet.
        PeerList::Online => (
            conferences
                .peer_number_is_ours(conference, number)
                .unwrap_or(false),
            None,
        ),
        PeerList::Offline => (
            false,
            Some(conferences.offline_peer_last_active(conference, number)?),
        ),
    };
    Ok(ConferencePeer {
        number,
        public_key,
        name,
        ours,
        last_active,
    })
}

/// A title, or `None` where c-toxcore says `INVALID_LENGTH` (no title set yet).
fn read_title(
    conferences: &Conferences,
    conference: ConferenceNumber,
) -> Result<Option<Vec<u8>>, ConferenceError> {
    match conferences.title(conference) {
        Ok(title) => Ok(Some(title.to_vec())),
        Err(ConferenceError::InvalidLength) => Ok(None),
        Err(e) => Err(e),
    }
}

impl Tox {
    /// Creates a conference with us as its only peer (`tox_conference_new`).
    pub async fn conference_new(&self, kind: ConferenceType) -> Result<ConferenceNumber, ToxError> {
        Ok(self
            .with_node(move |n, now| n.conference_new(now, kind))
            .await??)
    }

    /// Leaves a conference, telling its peers, and forgets it (`tox_conference_delete`).
    pub async fn conference_delete(&self, conference: ConferenceNumber) -> Result<(), ToxError> {
        Ok(self
            .with_node(move |n, now| n.conference_delete(now, conference))
            .await??)
    }

    /// Invites an online friend (`tox_conference_invite`; `FailSend` when the friend is
    /// offline or not a friend).
    pub async fn conference_invite(
        &self,
        friend: FriendNumber,
        conference: ConferenceNumber,
    ) -> Result<(), ToxError> {
        Ok(self
            .with_node(move |n, now| n.conference_invite(now, friend, conference))
            .await??)
    }

    /// Accepts an invitation (`tox_conference_join`): `friend` and `cookie` as
    /// [`NodeEvent::ConferenceInvite`](crate::node::NodeEvent::ConferenceInvite) gave them.
    /// The conference counts as connected once `ConferenceEvent::Connected` arrives.
    pub async fn conference_join(
        &self,
        friend: FriendNumber,
        cookie: &[u8],
    ) -> Result<ConferenceNumber, ToxError> {
        let cookie = cookie.to_vec();
        Ok(self
            .with_node(move |n, now| n.conference_join(now, friend, &cookie))
            .await??)
    }

    /// Sends a message to every peer (`tox_conference_send_message`, normal).
    pub async fn conference_send_message(
        &self,
        conference: ConferenceNumber,
        text: &[u8],
    ) -> Result<(), ToxError> {
        self.conference_send_message_kind(conference, MessageKind::Normal, text)
            .await
    }

    /// Sends a message or an action (`/me`) to every peer (`tox_conference_send_message`).
    pub async fn conference_send_message_kind(
        &self,
        conference: ConferenceNumber,
        kind: MessageKind,
        text: &[u8],
    ) -> Result<(), ToxError> {
        let text = text.to_vec();
        Ok(self
            .with_node(move |n, now| n.conference_send_message(now, conference, kind, &text))
            .await??)
    }

    /// Sets the title for every peer (`tox_conference_set_title`).
    pub async fn conference_set_title(
        &self,
        conference: ConferenceNumber,
        title: &[u8],
    ) -> Result<(), ToxError> {
        let title = title.to_vec();
        Ok(self
            .with_node(move |n, now| n.conference_set_title(now, conference, &title))
            .await??)
    }

    /// The title; `None` while nobody has set one (`tox_conference_get_title`).
    pub async fn conference_title(
        &self,
        conference: ConferenceNumber,
    ) -> Result<Option<Vec<u8>>, ToxError> {
        Ok(self
            .with_node(move |n, _| read_title(n.conferences(), conference))
            .await??)
    }

    /// The online or offline peers with their names and keys, read together
    /// (`tox_conference_peer_count`, `..._peer_get_name`, `..._peer_get_public_key` and their
    /// `offline_peer` forms).
    pub async fn conference_peers(
        &self,
        conference: ConferenceNumber,
        list: PeerList,
    ) -> Result<Vec<ConferencePeer>, ToxError> {
        Ok(self
            .with_node(move |n, _| read_peers(n.conferences(), conference, list))
            .await??)
    }

    /// One peer: who sent a `ConferenceEvent::Message`, say (`PeerNotFound` for a number
    /// the list does not have).
    pub async fn conference_peer(
        &self,
        conference: ConferenceNumber,
        list: PeerList,
        peer: u32,
    ) -> Result<ConferencePeer, ToxError> {
        Ok(self
            .with_node(move |n, _| read_peer(n.conferences(), conference, list, peer))
            .await??)
    }

    /// Our own number in the online list (`tox_conference_peer_number_is_ours` asked of
    /// each); `NoConnection` before we are connected.
    pub async fn conference_own_peer_number(
        &self,
        conference: ConferenceNumber,
    ) -> Result<u32, ToxError> {
        Ok(self
            .with_node(move |n, _| {
                let conferences = n.conferences();
                let count = conferences.peer_count(conference, PeerList::Online)?;
                for peer in 0..count {
                    if conferences.peer_number_is_ours(conference, peer)? {
                        return Ok(peer);
                    }
                }
                Err(ConferenceError::NoConnection)
            })
            .await??)
    }

    /// The conferences we are in, ascending (`tox_conference_get_chatlist`).
    pub async fn conference_list(&self) -> Result<Vec<ConferenceNumber>, ToxError> {
        self.with_node(|n, _| n.conferences().list()).await
    }

    /// The conference with this id, if we are in it (`tox_conference_by_id`).
    pub async fn conference_by_id(
        &self,
        id: ConferenceId,
    ) -> Result<Option<ConferenceNumber>, ToxError> {
        self.with_node(move |n, _| n.conferences().by_id(&id)).await
    }

    /// A conference's id (`tox_conference_get_id`).
    pub async fn conference_id(
        &self,
        conference: ConferenceNumber,
    ) -> Result<ConferenceId, ToxError> {
        Ok(self
            .with_node(move |n, _| n.conferences().id(conference))
            .await??)
    }

    /// A conference's type (`tox_conference_get_type`).
    pub async fn conference_type(
        &self,
        conference: ConferenceNumber,
    ) -> Result<ConferenceType, ToxError> {
        Ok(self
            .with_node(move |n, _| n.conferences().kind(conference))
            .await??)
    }

    /// How many offline peers the conference remembers (`tox_conference_set_max_offline`).
    pub async fn conference_set_max_offline(
        &self,
        conference: ConferenceNumber,
        max: u32,
    ) -> Result<(), ToxError> {
        Ok(self
            .with_node(move |n, _| n.conference_set_max_offline(conference, max))
            .await??)
    }

    /// Everything about one conference, read in one go on the node's thread (so its peer
    /// numbers agree with each other).
    pub async fn conference(
        &self,
        conference: ConferenceNumber,
    ) -> Result<ConferenceInfo, ToxError> {
        Ok(self
            .with_node(move |n, _| {
                let c = n.conferences();
                Ok::<_, ConferenceError>(ConferenceInfo {
                    number: conference,
                    id: c.id(conference)?,
                    kind: c.kind(conference)?,
                    title: read_title(c, conference)?,
                    connected: c.is_connected(conference)?,
                    peers: read_peers(c, conference, PeerList::Online)?,
                    offline_peers: read_peers(c, conference, PeerList::Offline)?,
                })
            })
            .await??)
    }
}
