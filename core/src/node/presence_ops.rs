//! The node's presence calls (`tox_self_set_name`, `..._status_message`, `..._status`,
//! `tox_self_set_typing`) and the presence packets of a friend's session (docs/protocol.md
//! §3.1); the rules are in `presence.rs`.
// Presence packets come from a friend's session: no indexing, slicing or arithmetic that
// could panic or wrap here (the rest of the Node is not held to it).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use rustox_net_crypto::Timestamp;

use super::event::NodeEvent;
use super::friends::FriendNumber;
use super::presence::{
    FriendPresence, SelfPresence, UserStatus, MAX_NAME_LEN, MAX_STATUS_MESSAGE_LEN,
    PACKET_ID_NICKNAME, PACKET_ID_STATUSMESSAGE, PACKET_ID_TYPING, PACKET_ID_USERSTATUS,
};
use super::{Node, NodeError};

impl Node {
    /// Sets our name (`tox_self_set_name`) and tells every online friend.
    pub fn set_name(&mut self, now: Timestamp, name: &[u8]) -> Result<(), NodeError> {
        if name.len() > MAX_NAME_LEN {
            return Err(NodeError::TooLong(MAX_NAME_LEN));
        }
        self.presence.name = name.to_vec();
        self.broadcast(now, PACKET_ID_NICKNAME, name);
        // The conferences' peers hear it too (`send_name_all_groups`).
        self.conferences.set_self_name(now, name);
        self.drain_conferences(now);
        Ok(())
    }

    /// Sets our status message (`tox_self_set_status_message`) and tells every online friend.
    pub fn set_status_message(&mut self, now: Timestamp, text: &[u8]) -> Result<(), NodeError> {
        if text.len() > MAX_STATUS_MESSAGE_LEN {
            return Err(NodeError::TooLong(MAX_STATUS_MESSAGE_LEN));
        }
        self.presence.status_message = text.to_vec();
        self.broadcast(now, PACKET_ID_STATUSMESSAGE, text);
        Ok(())
    }

    /// Sets our user status (`tox_self_set_status`) and tells every online friend.
    pub fn set_status(&mut self, now: Timestamp, status: UserStatus) {
        self.presence.status = status;
        self.broadcast(now, PACKET_ID_USERSTATUS, &[status.to_byte()]);
    }

    /// Tells a friend whether we are typing (`tox_self_set_typing`); sent now if it is online,
    /// and again whenever it comes online while the flag is set.
    pub fn set_typing(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        typing: bool,
    ) -> Result<(), NodeError> {
        let f = self
            .friends
            .get_mut(friend)
            .ok_or(NodeError::UnknownFriend)?;
        if f.presence.we_type == typing {
            return Ok(());
        }
        f.presence.we_type = typing;
        if f.online {
            self.send_presence_packet(now, friend, PACKET_ID_TYPING, &[u8::from(typing)]);
        }
        Ok(())
    }

    /// Our own name, status message and status.
    pub fn self_presence(&self) -> &SelfPresence {
        &self.presence
    }

    /// What a friend told us about itself.
    pub fn friend_presence(&self, friend: FriendNumber) -> Option<&FriendPresence> {
        self.friends.get(friend).map(|f| &f.presence)
    }

    /// A friend just came online: it gets our name, status message, status and typing flag
    /// (c-toxcore sends each once per session, `name_sent` etc.).
    pub(super) fn send_presence_to(&mut self, now: Timestamp, friend: FriendNumber) {
        let name = self.presence.name.clone();
        let message = self.presence.status_message.clone();
        let status = self.presence.status.to_byte();
        self.send_presence_packet(now, friend, PACKET_ID_NICKNAME, &name);
        self.send_presence_packet(now, friend, PACKET_ID_STATUSMESSAGE, &message);
        self.send_presence_packet(now, friend, PACKET_ID_USERSTATUS, &[status]);
        if self.friends.get(friend).is_some_and(|f| f.presence.we_type) {
            self.send_presence_packet(now, friend, PACKET_ID_TYPING, &[1]);
        }
    }

    /// A presence packet from an online friend: stored and reported when it keeps
    /// c-toxcore's rules, counted as ignored when not. True if it was one.
    pub(super) fn on_presence_packet(&mut self, friend: FriendNumber, p: &[u8]) -> bool {
        let Some((&kind, body)) = p.split_first() else {
            return false;
        };
        let Some(f) = self.friends.get_mut(friend) else {
            return false;
        };
        let event = match kind {
            PACKET_ID_NICKNAME if body.len() <= MAX_NAME_LEN => {
                f.presence.name = body.to_vec();
                NodeEvent::FriendName {
                    friend,
                    name: body.to_vec(),
                }
            }
            PACKET_ID_STATUSMESSAGE if body.len() <= MAX_STATUS_MESSAGE_LEN => {
                f.presence.status_message = body.to_vec();
                NodeEvent::FriendStatusMessage {
                    friend,
                    text: body.to_vec(),
                }
            }
            PACKET_ID_USERSTATUS => match body {
                [b] => match UserStatus::from_byte(*b) {
                    Some(status) => {
                        f.presence.status = status;
                        NodeEvent::FriendStatus { friend, status }
                    }
                    None => return self.ignore(),
                },
                _ => return self.ignore(),
            },
            PACKET_ID_TYPING => match body {
                [b] => {
                    let typing = *b != 0;
                    f.presence.typing = typing;
                    NodeEvent::FriendTyping { friend, typing }
                }
                _ => return self.ignore(),
            },
            PACKET_ID_NICKNAME | PACKET_ID_STATUSMESSAGE => return self.ignore(),
            _ => return false,
        };
        self.push_event(event);
        true
    }

    fn ignore(&mut self) -> bool {
        self.stats.packets_ignored = self.stats.packets_ignored.saturating_add(1);
        true
    }

    fn broadcast(&mut self, now: Timestamp, kind: u8, body: &[u8]) {
        for friend in self.friends.numbers() {
            if self.friends.get(friend).is_some_and(|f| f.online) {
                self.send_presence_packet(now, friend, kind, body);
            }
        }
    }

    /// Sends `[kind][body]` to an online friend. A full send queue drops it: the friend
    /// gets the current value on its next session, as with c-toxcore's retry flags.
    fn send_presence_packet(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        kind: u8,
        body: &[u8],
    ) {
        let Ok((conn, _)) = self.online_session(friend) else {
            return;
        };
        let mut payload = Vec::with_capacity(body.len().saturating_add(1));
        payload.push(kind);
        payload.extend_from_slice(body);
        let _ = conn.send_lossless(now, &payload);
    }
}
