//! Messenger on a friend's session (protocol.md §3.1, `toxcore/Messenger.c`): the part this
//! node handles itself — the `ONLINE`/`OFFLINE` handshake that makes a friend online, and
//! chat messages. Files are in `files.rs`; names, status and typing come with Messenger.

use rustox_net_crypto::{ConnectionId, Timestamp};

use super::event::NodeEvent;
use super::friends::FriendNumber;
use super::{Node, NodeError};
use crate::friend::connection::FriendConnStatus;

/// `PACKET_ID_ONLINE`: sent when a session comes up; the friend is online for Messenger
/// only once it arrived, and everything else before it is dropped. Length exactly 1.
pub const PACKET_ID_ONLINE: u8 = 24;
/// `PACKET_ID_OFFLINE`: sent on friend deletion; length exactly 1.
pub const PACKET_ID_OFFLINE: u8 = 25;
/// `PACKET_ID_MESSAGE`: a chat message, text after the id.
pub const PACKET_ID_MESSAGE: u8 = 64;
/// The file-transfer packet ids (§3.2): send request, control, data.
pub const FILE_PACKET_IDS: std::ops::RangeInclusive<u8> = 80..=82;
/// `TOX_MAX_MESSAGE_LENGTH`: a lossless payload is at most 1373 bytes, one is the id.
pub const MAX_MESSAGE_LEN: usize = 1372;

impl Node {
    /// Sends a chat message to an online friend.
    pub fn send_message(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        text: &[u8],
    ) -> Result<(), NodeError> {
        if text.is_empty() {
            return Err(NodeError::EmptyMessage);
        }
        if text.len() > MAX_MESSAGE_LEN {
            return Err(NodeError::MessageTooLong);
        }
        let id = self.online_session_id(friend)?;
        let conn = self
            .endpoint
            .connection_mut(id)
            .ok_or(NodeError::FriendOffline)?;
        let mut payload = Vec::with_capacity(text.len() + 1);
        payload.push(PACKET_ID_MESSAGE);
        payload.extend_from_slice(text);
        conn.send_lossless(now, &payload)?;
        Ok(())
    }

    /// The session of an online friend.
    pub(super) fn online_session_id(
        &self,
        friend: FriendNumber,
    ) -> Result<ConnectionId, NodeError> {
        let f = self.friends.get(friend).ok_or(NodeError::UnknownFriend)?;
        match f.session {
            Some(id) if f.online => Ok(id),
            _ => Err(NodeError::FriendOffline),
        }
    }

    /// A lossless packet on `number`'s session that is not friend_connection's.
    pub(super) fn on_messenger_packet(
        &mut self,
        now: Timestamp,
        number: FriendNumber,
        id: ConnectionId,
        p: &[u8],
    ) {
        let Some(f) = self.friends.get(number) else {
            return;
        };
        let online = f.online;
        let connected = f.conn.status() == FriendConnStatus::Connected;
        match (p.first().copied(), online) {
            (Some(PACKET_ID_ONLINE), false) if p.len() == 1 && connected => {
                let addr = self.endpoint.connection(id).map(|c| c.peer_addr());
                if let Some(f) = self.friends.get_mut(number) {
                    f.online = true;
                    if let Some(request) = f.request.as_mut() {
                        request.schedule.on_friend_online();
                    }
                    f.request = None;
                }
                self.push_event(NodeEvent::FriendConnection {
                    friend: number,
                    online: true,
                    addr,
                });
            }
            (Some(PACKET_ID_OFFLINE), true) if p.len() == 1 => self.go_offline(number),
            (Some(PACKET_ID_MESSAGE), true) if p.len() > 1 => {
                self.push_event(NodeEvent::Message {
                    friend: number,
                    text: p[1..].to_vec(),
                });
            }
            (Some(kind), true) if FILE_PACKET_IDS.contains(&kind) => {
                self.on_file_packet(now, number, id, p)
            }
            // Status, typing, and anything before ONLINE: dropped (§3.1).
            _ => self.stats.packets_ignored += 1,
        }
    }
}
