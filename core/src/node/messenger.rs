//! Messenger on a friend's session (docs/protocol.md §3.1, `toxcore/Messenger.c`): the
//! `ONLINE`/`OFFLINE` handshake that makes a friend online, messages and actions with read
//! receipts, and custom packets. Names, status and typing are in `presence.rs`, files in
//! `files.rs`.
//!
//! Read receipts have no packet of their own: a message's id (a per-friend counter from 1,
//! as `m_send_message_generic` numbers them) is tied to the net_crypto packet number that
//! carried it, and the receipt is reported once the peer acknowledged that number
//! (`cryptpacket_received`).
// Messenger packets come from a friend's session: no indexing, slicing or arithmetic that
// could panic or wrap here (the rest of the Node is not held to it).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::collections::VecDeque;

use rustox_net_crypto::{Connection, ConnectionId, Timestamp};

use super::event::NodeEvent;
use super::friends::{Friend, FriendNumber};
use super::{Node, NodeError};
use crate::friend::connection::FriendConnStatus;

/// `PACKET_ID_ONLINE`: sent when a session comes up; the friend is online for Messenger
/// only once it arrived, and everything else before it is dropped. Length exactly 1.
pub const PACKET_ID_ONLINE: u8 = 24;
/// `PACKET_ID_OFFLINE`: sent on friend deletion; length exactly 1.
pub const PACKET_ID_OFFLINE: u8 = 25;
/// `PACKET_ID_MESSAGE`: a chat message, text after the id.
pub const PACKET_ID_MESSAGE: u8 = 64;
/// `PACKET_ID_ACTION`: an action ("/me ..."), laid out as a message.
pub const PACKET_ID_ACTION: u8 = 65;
/// `PACKET_ID_MSI`: toxav's call signalling, which `tox_friend_send_lossless_packet` also
/// accepts.
pub const PACKET_ID_MSI: u8 = 69;
/// Custom lossless packets (`PACKET_ID_RANGE_LOSSLESS_CUSTOM_START..=END`).
pub const CUSTOM_LOSSLESS_IDS: std::ops::RangeInclusive<u8> = 160..=191;
/// Custom lossy packets (`PACKET_ID_RANGE_LOSSY_CUSTOM_START..=END`).
pub const CUSTOM_LOSSY_IDS: std::ops::RangeInclusive<u8> = 200..=254;
/// `TOX_MAX_CUSTOM_PACKET_SIZE`: a custom packet is at most this long, id included.
pub const MAX_CUSTOM_PACKET_LEN: usize = 1373;
/// Receipts a friend may have pending; past it the oldest is dropped unreported. A
/// session's send queue holds at most 32768 packets (`CRYPTO_PACKET_BUFFER_SIZE`), so a
/// live session never reaches it.
pub const MAX_PENDING_RECEIPTS: usize = 32768;
/// The file-transfer packet ids (§3.2): send request, control, data.
pub const FILE_PACKET_IDS: std::ops::RangeInclusive<u8> = 80..=82;
/// `TOX_MAX_MESSAGE_LENGTH`: a lossless payload is at most 1373 bytes, one is the id.
pub const MAX_MESSAGE_LEN: usize = 1372;

/// A message or an action (`Tox_Message_Type`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// A normal message (64).
    #[default]
    Normal,
    /// An action (65).
    Action,
}

impl MessageKind {
    fn packet_id(self) -> u8 {
        match self {
            MessageKind::Normal => PACKET_ID_MESSAGE,
            MessageKind::Action => PACKET_ID_ACTION,
        }
    }
}

/// One friend's message ids and the receipts still to report.
#[derive(Debug, Clone, Default)]
pub struct Receipts {
    /// The last message id handed out (0: none yet).
    last_id: u32,
    /// (net_crypto packet number, message id), oldest first.
    pending: VecDeque<(u32, u32)>,
}

impl Receipts {
    /// Messages whose receipt is still pending.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Forgets the pending receipts (the session is gone); ids keep counting.
    pub fn clear_pending(&mut self) {
        self.pending.clear();
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
                self.send_presence_to(now, number);
            }
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
