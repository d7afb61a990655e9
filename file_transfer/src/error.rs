//! Typed errors: one enum per API call, shaped like tox.h's error enums (docs/protocol.md §9),
//! and [`FileError`] for packets from the peer.
//!
//! Every error leaves every transfer exactly as it was, except where a variant says
//! otherwise. tox.h's FRIEND_NOT_FOUND / NULL cases belong to the layer above (which owns
//! the friend list); a refused session maps to FRIEND_NOT_CONNECTED or SENDQ as noted.

use crate::number::FileNumber;
use crate::packet::PacketError;

/// `tox_file_send` failures (`Tox_Err_File_Send`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FileSendError {
    /// NAME_TOO_LONG: the name exceeds 255 bytes.
    #[error("file name longer than 255 bytes")]
    NameTooLong,
    /// TOO_MANY: all 256 outgoing slots are in use.
    #[error("256 outgoing transfers already in progress")]
    TooMany,
    /// FRIEND_NOT_CONNECTED: the session refused the request packet. No slot is taken.
    #[error("the session refused the file request")]
    FriendNotConnected,
}

/// `tox_file_control` failures (`Tox_Err_File_Control`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FileControlError {
    /// NOT_FOUND: no transfer with that number (or the number is out of range).
    #[error("no such transfer")]
    NotFound,
    /// NOT_PAUSED: resume of a transfer we have not paused.
    #[error("transfer not paused")]
    NotPaused,
    /// DENIED: resume of a transfer paused only by the peer, or a sender resuming a
    /// transfer the receiver has not accepted.
    #[error("control denied")]
    Denied,
    /// ALREADY_PAUSED: pause of a transfer we already paused, or one not yet transferring
    /// (c-toxcore answers that case with ALREADY_PAUSED too).
    #[error("transfer already paused")]
    AlreadyPaused,
    /// SENDQ: the session refused the control packet; nothing changed.
    #[error("the session refused the control packet")]
    SendQ,
}

/// `tox_file_seek` failures (`Tox_Err_File_Seek`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FileSeekError {
    /// NOT_FOUND: no transfer with that number.
    #[error("no such transfer")]
    NotFound,
    /// DENIED: only the receiver may seek, and only before accepting.
    #[error("seek denied")]
    Denied,
    /// INVALID_POSITION: the position is not below the file size.
    #[error("seek position beyond the file")]
    InvalidPosition,
    /// SENDQ: the session refused the control packet; nothing changed.
    #[error("the session refused the seek packet")]
    SendQ,
}

/// `tox_file_send_chunk` failures (`Tox_Err_File_Send_Chunk`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FileSendChunkError {
    /// NOT_FOUND: no outgoing transfer with that number.
    #[error("no such outgoing transfer")]
    NotFound,
    /// NOT_TRANSFERRING: not accepted yet, or already finished.
    #[error("transfer not in the transferring state")]
    NotTransferring,
    /// INVALID_LENGTH: longer than 1371, beyond the size, or short without being the last.
    #[error("invalid chunk length")]
    InvalidLength,
    /// SENDQ: the session refused the packet. The transfer rewinds to the last byte sent,
    /// so the chunk is requested again.
    #[error("the session refused the chunk")]
    SendQ,
    /// WRONG_POSITION: not the next byte to send, or not requested.
    #[error("chunk at the wrong position")]
    WrongPosition,
}

/// `tox_file_get_file_id` failure (`Tox_Err_File_Get`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FileGetError {
    /// NOT_FOUND: no transfer with that number.
    #[error("no such transfer")]
    NotFound,
}

/// Why a packet from the peer was rejected. The packet changed nothing, except that a
/// control for an unknown transfer queues a KILL answer (docs/protocol.md §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    /// The payload does not decode.
    #[error("malformed file packet: {0}")]
    Malformed(#[from] PacketError),
    /// A request for a slot that is already in use (c-toxcore ignores it).
    #[error("file request for slot {0} which is in use")]
    SlotInUse(u8),
    /// Data or a control for a transfer that does not exist.
    #[error("no transfer {0:?}")]
    UnknownTransfer(FileNumber),
    /// Data for a transfer that is not accepted, or a control that its state does not allow.
    #[error("packet not allowed in the transfer's state ({0:?})")]
    WrongState(FileNumber),
    /// Data that would run past the announced size.
    #[error("file data beyond the announced size of {0:?}")]
    BeyondSize(FileNumber),
    /// A seek to a position not below the size.
    #[error("seek beyond the announced size of {0:?}")]
    InvalidPosition(FileNumber),
    /// Too many events are waiting to be polled; the packet was dropped unprocessed.
    #[error("event queue full")]
    EventQueueFull,
}
