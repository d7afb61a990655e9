//! Messenger's packet ids on a friend's net_crypto session (protocol.md §3.1,
//! `toxcore/Messenger.h`), the few this node handles itself.

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
