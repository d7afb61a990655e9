//! Messenger on a friend's session (docs/protocol.md §3.1, `toxcore/Messenger.c`): the
//! `ONLINE`/`OFFLINE` handshake that makes a friend online, messages and actions with read
//! receipts, and custom packets. Names, status and typing are in `presence.rs`, files in
//! `files.rs`. This file holds the packet ids, limits and per-friend receipts; the node's
//! calls and packet handling are in `messenger_ops.rs`.
//!
//! Read receipts have no packet of their own: a message's id (a per-friend counter from 1,
//! as `m_send_message_generic` numbers them) is tied to the net_crypto packet number that
//! carried it, and the receipt is reported once the peer acknowledged that number
//! (`cryptpacket_received`).
// Messenger packets come from a friend's session: no indexing, slicing or arithmetic that
// could panic or wrap here (the rest of the Node is not held to it).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::collections::VecDeque;

pub use crate::types::MessageKind;

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

/// One friend's message ids and the receipts still to report.
#[derive(Debug, Clone, Default)]
pub struct Receipts {
    /// The last message id handed out (0: none yet).
    pub(super) last_id: u32,
    /// (net_crypto packet number, message id), oldest first.
    pub(super) pending: VecDeque<(u32, u32)>,
}

impl Receipts {
    /// Forgets the pending receipts (the session is gone); ids keep counting.
    pub fn clear_pending(&mut self) {
        self.pending.clear();
    }
}
