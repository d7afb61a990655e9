//! The node's Messenger calls (messages, custom packets) and the Messenger packets of a
//! friend's session: `ONLINE`/`OFFLINE`, messages and actions with their receipts, custom
//! packets (docs/protocol.md §3.1); the rules are in `messenger.rs`.
// Messenger packets come from a friend's session: no indexing, slicing or arithmetic that
// could panic or wrap here (the rest of the Node is not held to it).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use rustox_net_crypto::{Connection, ConnectionId, Timestamp};

use super::event::NodeEvent;
use super::friends::{Friend, FriendNumber};
use super::messenger::{
    MessageKind, CUSTOM_LOSSLESS_IDS, CUSTOM_LOSSY_IDS, FILE_PACKET_IDS, MAX_CUSTOM_PACKET_LEN,
    MAX_MESSAGE_LEN, MAX_PENDING_RECEIPTS, PACKET_ID_ACTION, PACKET_ID_MESSAGE, PACKET_ID_MSI,
    PACKET_ID_OFFLINE, PACKET_ID_ONLINE,
};
use super::{Node, NodeError};
use crate::friend::connection::FriendConnStatus;

impl MessageKind {
    fn packet_id(self) -> u8 {
        match self {
            MessageKind::Normal => PACKET_ID_MESSAGE,
            MessageKind::Action => PACKET_ID_ACTION,
        }
    }
}

impl Node {
    /// Sends a chat message to an online friend; returns its message id, which a
    /// [`NodeEvent::ReadReceipt`] names once the friend has it.
    pub fn send_message(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        text: &[u8],
    ) -> Result<u32, NodeError> {
        self.send_message_kind(now, friend, MessageKind::Normal, text)
    }

    /// Sends a message or an action (`tox_friend_send_message`).
    pub fn send_message_kind(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        kind: MessageKind,
        text: &[u8],
    ) -> Result<u32, NodeError> {
        if text.is_empty() {
            return Err(NodeError::EmptyMessage);
        }
        if text.len() > MAX_MESSAGE_LEN {
            return Err(NodeError::MessageTooLong);
        }
        let (conn, f) = self.online_session(friend)?;
        let mut payload = Vec::with_capacity(text.len().saturating_add(1));
        payload.push(kind.packet_id());
        payload.extend_from_slice(text);
        let packet = conn.send_lossless(now, &payload)?;
        f.receipts.last_id = f.receipts.last_id.wrapping_add(1);
        let message_id = f.receipts.last_id;
        if f.receipts.pending.len() >= MAX_PENDING_RECEIPTS {
            f.receipts.pending.pop_front();
        }
        f.receipts.pending.push_back((packet, message_id));
        self.receipts_pending = true;
        Ok(message_id)
    }

    /// Sends a custom lossless packet (`tox_friend_send_lossless_packet`): its first byte
    /// in 160–191 (or 69, toxav's signalling), at most 1373 bytes.
    pub fn send_lossless_packet(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        data: &[u8],
    ) -> Result<(), NodeError> {
        check_custom_packet(data, |k| {
            CUSTOM_LOSSLESS_IDS.contains(&k) || k == PACKET_ID_MSI
        })?;
        self.online_session(friend)?.0.send_lossless(now, data)?;
        Ok(())
    }

    /// Sends a custom lossy packet (`tox_friend_send_lossy_packet`): its first byte in
    /// 200–254, at most 1373 bytes.
    pub fn send_lossy_packet(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        data: &[u8],
    ) -> Result<(), NodeError> {
        check_custom_packet(data, |k| CUSTOM_LOSSY_IDS.contains(&k))?;
        self.online_session(friend)?.0.send_lossy(now, data)?;
        Ok(())
    }

    /// Reports every receipt whose packet the friend acknowledged, oldest first.
    pub(super) fn check_receipts(&mut self) {
        if !self.receipts_pending {
            return;
        }
        let mut any_left = false;
        let mut done = Vec::new();
        for (number, f) in self.friends.iter_mut() {
            let Some(conn) = f.session.and_then(|id| self.endpoint.connection(id)) else {
                continue;
            };
            while let Some(&(packet, message_id)) = f.receipts.pending.front() {
                if !conn.is_delivered(packet) {
                    break;
                }
                f.receipts.pending.pop_front();
                done.push((number, message_id));
            }
            any_left |= !f.receipts.pending.is_empty();
        }
        self.receipts_pending = any_left;
        for (friend, message_id) in done {
            self.push_event(NodeEvent::ReadReceipt { friend, message_id });
        }
    }

    /// A custom lossy packet from an online friend.
    pub(super) fn on_lossy_packet(&mut self, number: FriendNumber, p: &[u8]) {
        let online = self.friends.get(number).is_some_and(|f| f.online);
        match p.first() {
            Some(k) if online && CUSTOM_LOSSY_IDS.contains(k) => {
                self.push_event(NodeEvent::CustomPacket {
                    friend: number,
                    lossless: false,
                    data: p.to_vec(),
                })
            }
            _ => self.stats.packets_ignored = self.stats.packets_ignored.saturating_add(1),
        }
    }

    /// An online friend's session and record, together (they live in different tables,
    /// so one call borrows both).
    pub(super) fn online_session(
        &mut self,
        friend: FriendNumber,
    ) -> Result<(&mut Connection, &mut Friend), NodeError> {
        let id = self.online_session_id(friend)?;
        let conn = self
            .endpoint
            .connection_mut(id)
            .ok_or(NodeError::FriendOffline)?;
        let f = self
            .friends
            .get_mut(friend)
            .ok_or(NodeError::UnknownFriend)?;
        Ok((conn, f))
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
                let addr = self.endpoint.connection(id).and_then(|c| c.peer_addr());
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
                // Answered with ours (`m_handle_packet`): a peer that said ONLINE before we
                // listened (we held its connection as a hidden link then) hears it now.
                self.send_online_packet(now, number);
                self.send_presence_to(now, number);
            }
            // The answer to ours, or a repeat: nothing to do, as in `m_handle_packet`.
            (Some(PACKET_ID_ONLINE), true) if p.len() == 1 => {}
            (Some(PACKET_ID_OFFLINE), true) if p.len() == 1 => self.go_offline(now, number),
            (Some(k @ (PACKET_ID_MESSAGE | PACKET_ID_ACTION)), true) if p.len() > 1 => {
                self.push_event(NodeEvent::Message {
                    friend: number,
                    kind: if k == PACKET_ID_ACTION {
                        MessageKind::Action
                    } else {
                        MessageKind::Normal
                    },
                    text: p.get(1..).unwrap_or_default().to_vec(),
                });
            }
            // Calls on: signalling is the engine's (`m_callback_msi_packet`'s handler).
            (Some(PACKET_ID_MSI), true) if self.av_enabled() => self.av_msi_packet(now, number, p),
            (Some(k), true) if CUSTOM_LOSSLESS_IDS.contains(&k) || k == PACKET_ID_MSI => {
                self.push_event(NodeEvent::CustomPacket {
                    friend: number,
                    lossless: true,
                    data: p.to_vec(),
                });
            }
            (Some(_), true) if self.on_presence_packet(number, p) => {}
            (Some(kind), true) if FILE_PACKET_IDS.contains(&kind) => {
                self.on_file_packet(now, number, id, p)
            }
            // Anything before ONLINE, and unknown ids: dropped (§3.1).
            _ => self.stats.packets_ignored = self.stats.packets_ignored.saturating_add(1),
        }
    }
}

/// A custom packet's rules (`m_send_custom_lossless_packet` / `..._lossy_packet`): its first
/// byte in the range `allowed` takes, at most [`MAX_CUSTOM_PACKET_LEN`] bytes.
fn check_custom_packet(data: &[u8], allowed: impl Fn(u8) -> bool) -> Result<(), NodeError> {
    match data.first() {
        Some(&k) if allowed(k) => {}
        _ => return Err(NodeError::BadPacketId),
    }
    if data.len() > MAX_CUSTOM_PACKET_LEN {
        return Err(NodeError::TooLong(MAX_CUSTOM_PACKET_LEN));
    }
    Ok(())
}
