//! Who we are to our friends and who they are to us (docs/protocol.md §3.1): name (NICKNAME 48),
//! status message (STATUSMESSAGE 49), user status (USERSTATUS 50) and typing (TYPING 51).
//!
//! As in c-toxcore (`Messenger.c`, `do_friends`), each is sent once when the friend comes
//! online and again whenever ours changes, without congestion control; what a friend sends
//! is checked against c-toxcore's limits and dropped (counted) when it breaks them.
//!
//! This file holds the packet ids and the presence records; the node's calls and packet
//! handling are in `presence_ops.rs`.
// Presence packets come from a friend's session: no indexing, slicing or arithmetic that
// could panic or wrap here (the rest of the Node is not held to it).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub use crate::types::{UserStatus, MAX_NAME_LEN, MAX_STATUS_MESSAGE_LEN};

/// `PACKET_ID_NICKNAME`.
pub const PACKET_ID_NICKNAME: u8 = 48;
/// `PACKET_ID_STATUSMESSAGE`.
pub const PACKET_ID_STATUSMESSAGE: u8 = 49;
/// `PACKET_ID_USERSTATUS`.
pub const PACKET_ID_USERSTATUS: u8 = 50;
/// `PACKET_ID_TYPING`.
pub const PACKET_ID_TYPING: u8 = 51;
/// Our own profile as friends see it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelfPresence {
    /// Our name.
    pub name: Vec<u8>,
    /// Our status message.
    pub status_message: Vec<u8>,
    /// Our user status.
    pub status: UserStatus,
}

/// What a friend told us, and whether we are typing to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FriendPresence {
    /// Its name.
    pub name: Vec<u8>,
    /// Its status message.
    pub status_message: Vec<u8>,
    /// Its user status.
    pub status: UserStatus,
    /// Whether it is typing to us (reset when it goes offline).
    pub typing: bool,
    /// Whether we are typing to it.
    pub we_type: bool,
}
