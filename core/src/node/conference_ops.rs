//! The node's conference calls: the tox.h commands, checked against the friend list and
//! handed to [`crate::conference::Conferences`], whose link actions the node carries out
//! (`links.rs`) and whose events it passes on.
//!
//! Which packets reach the conferences follows c-toxcore 0.2.18: invites (96) are
//! Messenger's, taken only from a friend that is online for Messenger (`m_handle_packet`);
//! the conference packets proper (97–100 lossless, 199 lossy) are friend_connection's,
//! taken from any link whose session is up, friend or hidden, Messenger-online or not
//! (`g_handle_packet` and `handle_lossy`, registered on the friend connection itself).
//! A link's status is friend_connection's (`g_handle_status`). None of these ids is in a
//! custom packet range (160–191, 200–254), so none reaches the application as one.

use std::ops::RangeInclusive;

use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::{ConnectionId, Timestamp};

use super::event::NodeEvent;
use super::Node;
use crate::conference::{
    ConferenceError, ConferenceEvent, ConferenceId, ConferenceNumber, ConferenceType, Conferences,
    CONFERENCE_ID_LEN, INVITE_COOKIE_LEN,
};
use crate::types::{FriendNumber, MessageKind};

/// `PACKET_ID_INVITE_CONFERENCE` (net_crypto.h): invites and their answers, Messenger's.
pub const PACKET_ID_INVITE_CONFERENCE: u8 = 96;
/// `PACKET_ID_ONLINE_PACKET` (97), `PACKET_ID_DIRECT_CONFERENCE` (98),
/// `PACKET_ID_MESSAGE_CONFERENCE` (99), `PACKET_ID_REJOIN_CONFERENCE` (100) (net_crypto.h):
/// friend_connection's, from any link.
pub const CONFERENCE_LINK_IDS: RangeInclusive<u8> = 97..=100;
/// `PACKET_ID_LOSSY_CONFERENCE` (net_crypto.h): group audio's lossy packets, from any link.
pub const PACKET_ID_LOSSY_CONFERENCE: u8 = 199;

impl Node {
    /// The conferences, for queries (peer lists, titles, ids).
    pub fn conferences(&self) -> &Conferences {
        &self.conferences
    }

    /// `tox_conference_new`.
    pub fn conference_new(
        &mut self,
        now: Timestamp,
        kind: ConferenceType,
    ) -> Result<ConferenceNumber, ConferenceError> {
        let result = self.conferences.create(now, self.rng.as_mut(), kind);
        self.drain_conferences(now);
        result
    }

    /// `tox_conference_delete`.
    pub fn conference_delete(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
    ) -> Result<(), ConferenceError> {
        let result = self.conferences.delete(now, conference);
        if result.is_ok() {
            self.group_audio_forget(Some(conference));
        }
        self.drain_conferences(now);
        result
    }

    /// `tox_conference_invite`: `FailSend` when the friend does not exist or is offline.
    /// c-toxcore's `invite_friend` looks at the conference first (not found, not
    /// connected), then fails to send to a friend that is not online for Messenger
    /// (`send_conference_invite_packet`); so does this.
    pub fn conference_invite(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        conference: ConferenceNumber,
    ) -> Result<(), ConferenceError> {
        if !self.conferences.is_connected(conference)? {
            return Err(ConferenceError::NoConnection);
        }
        let pk = self
            .friends
            .get(friend)
            .filter(|f| f.online)
            .map(|f| f.pk)
            .ok_or(ConferenceError::FailSend)?;
        let result = self.conferences.invite(now, conference, pk);
        self.drain_conferences(now);
        result
    }

    /// `tox_conference_join`. In c-toxcore's order (`join_groupchat`): the cookie's length
    /// and type, then the friend (`FriendNotFound`), then a conference we are already in
    /// (`Duplicate`); a friend that exists but is not online for Messenger gets no answer
    /// to its invite (`FailSend`), and no conference is made.
    pub fn conference_join(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        cookie: &[u8],
    ) -> Result<ConferenceNumber, ConferenceError> {
        self.join_typed(now, friend, cookie, ConferenceType::Text)
    }

    /// toxav's `toxav_join_av_groupchat`: [`Node::conference_join`] for an AV conference's
    /// cookie (a text one's is `WrongType`), its group audio on (`groupchat_enable_av`
    /// follows the join there).
    pub fn conference_join_av(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        cookie: &[u8],
    ) -> Result<ConferenceNumber, ConferenceError> {
        let conference = self.join_typed(now, friend, cookie, ConferenceType::Av)?;
        let _ = self.conference_set_audio(now, conference, true);
        Ok(conference)
    }

    fn join_typed(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        cookie: &[u8],
        expected: ConferenceType,
    ) -> Result<ConferenceNumber, ConferenceError> {
        let Some((pk, online)) = self.friends.get(friend).map(|f| (f.pk, f.online)) else {
            check_cookie(cookie, expected)?;
            return Err(ConferenceError::FriendNotFound);
        };
        if !online {
            let (kind, id) = check_cookie(cookie, expected)?;
            let duplicate = self
                .conferences
                .by_id(&id)
                .is_some_and(|n| self.conferences.kind(n) == Ok(kind));
            return Err(if duplicate {
                ConferenceError::Duplicate
            } else {
                ConferenceError::FailSend
            });
        }
        let result = self.conferences.join_typed(now, pk, cookie, expected);
        self.drain_conferences(now);
        result
    }

    /// `tox_conference_send_message`.
    pub fn conference_send_message(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        kind: MessageKind,
        text: &[u8],
    ) -> Result<(), ConferenceError> {
        let result = self.conferences.send_message(now, conference, kind, text);
        self.drain_conferences(now);
        result
    }

    /// `tox_conference_set_title`.
    pub fn conference_set_title(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        title: &[u8],
    ) -> Result<(), ConferenceError> {
        let result = self.conferences.set_title(now, conference, title);
        self.drain_conferences(now);
        result
    }

    /// `tox_conference_set_max_offline`.
    pub fn conference_set_max_offline(
        &mut self,
        conference: ConferenceNumber,
        max: u32,
    ) -> Result<(), ConferenceError> {
        self.conferences.set_max_offline(conference, max)
    }

    /// Group audio and other lossy conference packets (`send_group_lossy_packet`).
    pub fn conference_send_lossy(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        data: &[u8],
    ) -> Result<(), ConferenceError> {
        let result = self.conferences.send_lossy(now, conference, data);
        self.drain_conferences(now);
        result
    }

    /// What `tox_kill` does to the conferences (`kill_groupchats`): each is left as if for
    /// a restart (its peers freeze us and expect us back) and forgotten. Save the profile
    /// first: afterwards it holds no conference.
    pub fn conference_close_all(&mut self, now: Timestamp) {
        self.conferences.close(now);
        self.group_audio_forget(None);
        self.drain_conferences(now);
    }

    // ----- what the links bring ----------------------------------------------------------

    /// A lossless packet on a link's session that friend_connection did not take: the
    /// conferences', Messenger's (friends only), or dropped.
    pub(super) fn on_session_packet(
        &mut self,
        now: Timestamp,
        number: FriendNumber,
        id: ConnectionId,
        p: &[u8],
    ) {
        let (Some(&kind), Some(link)) = (p.first(), self.friends.link(number)) else {
            return;
        };
        let pk = link.pk;
        let online = link.online;
        if CONFERENCE_LINK_IDS.contains(&kind) {
            self.conference_packet(now, pk, p);
        } else if self.friends.is_hidden(number) {
            // A hidden link has no Messenger: its peer's ONLINE, names, messages go nowhere.
            self.stats.packets_ignored = self.stats.packets_ignored.saturating_add(1);
        } else if kind == PACKET_ID_INVITE_CONFERENCE {
            if online {
                self.conference_packet(now, pk, p);
            } else {
                self.stats.packets_ignored = self.stats.packets_ignored.saturating_add(1);
            }
        } else {
            self.on_messenger_packet(now, number, id, p);
        }
    }

    /// A lossy packet on a link's session: the conferences' (199) from any link, the
    /// application's custom ones from friends.
    pub(super) fn on_session_lossy(&mut self, now: Timestamp, number: FriendNumber, p: &[u8]) {
        match (p.first(), self.friends.link(number)) {
            (Some(&PACKET_ID_LOSSY_CONFERENCE), Some(link)) => {
                let pk = link.pk;
                self.conference_packet(now, pk, p);
            }
            _ if self.friends.is_hidden(number) => {
                self.stats.packets_ignored = self.stats.packets_ignored.saturating_add(1);
            }
            (Some(k), _) if super::CALL_LOSSY_IDS.contains(k) => {
                self.av_media_packet(now, number, p)
            }
            _ => self.on_lossy_packet(number, p),
        }
    }

    fn conference_packet(&mut self, now: Timestamp, pk: PublicKey, p: &[u8]) {
        self.conferences.handle_packet(now, pk, p);
        self.drain_conferences(now);
    }

    /// The friend connection to `pk` came up or went down (friend or hidden link).
    pub(super) fn conference_link_status(&mut self, now: Timestamp, pk: PublicKey, up: bool) {
        self.conferences.handle_link_status(now, pk, up);
        self.drain_conferences(now);
    }

    /// Carries out the conferences' link actions and passes their events on, until they
    /// have none. A link status change an action causes (a link found up on opening) is fed
    /// in and its consequences carried out in this same loop.
    pub(super) fn drain_conferences(&mut self, now: Timestamp) {
        if self.draining_conferences {
            return;
        }
        self.draining_conferences = true;
        loop {
            if let Some(action) = self.conferences.poll_action() {
                self.apply_link_action(now, action);
            } else if let Some(event) = self.conferences.poll_event() {
                self.conference_event(now, event);
            } else {
                break;
            }
        }
        self.draining_conferences = false;
    }

    /// An invite names its friend by number (one that is no longer a friend is dropped);
    /// everything else goes out as it is.
    fn conference_event(&mut self, now: Timestamp, event: ConferenceEvent) {
        match event {
            // Group audio, when the conference's audio is on (groupav.c's lossy handler).
            ConferenceEvent::Lossy {
                conference,
                peer,
                data,
            } => {
                if let Some(data) = self.group_audio_packet(now, conference, peer, data) {
                    self.push_event(NodeEvent::Conference(ConferenceEvent::Lossy {
                        conference,
                        peer,
                        data,
                    }));
                }
            }
            ConferenceEvent::PeerListChanged { conference } => {
                self.group_audio_peers_changed(conference);
                self.push_event(NodeEvent::Conference(ConferenceEvent::PeerListChanged {
                    conference,
                }));
            }
            ConferenceEvent::Invite {
                friend_pk,
                kind,
                cookie,
            } => {
                if let Some(friend) = self.friends.by_pk(&friend_pk) {
                    self.push_event(NodeEvent::ConferenceInvite {
                        friend,
                        kind,
                        cookie,
                    });
                }
            }
            other => self.push_event(NodeEvent::Conference(other)),
        }
    }
}

/// A cookie `join_groupchat` takes: [`INVITE_COOKIE_LEN`] bytes (`InvalidLength`), the
/// type byte the caller expects (`WrongType`: tox.c joins with `GROUPCHAT_TYPE_TEXT`,
/// toxav with `GROUPCHAT_TYPE_AV`); its type and id.
fn check_cookie(
    cookie: &[u8],
    expected: ConferenceType,
) -> Result<(ConferenceType, ConferenceId), ConferenceError> {
    if cookie.len() != INVITE_COOKIE_LEN {
        return Err(ConferenceError::InvalidLength);
    }
    let kind = cookie
        .get(2)
        .copied()
        .and_then(ConferenceType::from_byte)
        .filter(|k| *k == expected)
        .ok_or(ConferenceError::WrongType)?;
    let mut id = [0u8; CONFERENCE_ID_LEN];
    id.copy_from_slice(cookie.get(3..).ok_or(ConferenceError::InvalidLength)?);
    Ok((kind, ConferenceId(id)))
}
