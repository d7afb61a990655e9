//! Wire layouts of the three file-transfer packets (docs/protocol.md §3.1, §3.3–§3.5).
//!
//! Each layout lives in its own file beside its byte table. Every parser takes the whole
//! net_crypto lossless payload (id byte first), checks every length against the bytes
//! actually present, never allocates more than the bounded fields allow, and returns a
//! typed [`PacketError`] instead of panicking.
// Wire code: every length comes from the peer, so no indexing, slicing or arithmetic that
// could panic or wrap.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use rustox_net_crypto::wire::TooShort;

mod control;
mod data;
mod send_request;

pub use control::{ControlKind, ControlPacket, Direction};
pub use data::DataPacket;
pub use send_request::SendRequestPacket;

/// Id of FILE_SENDREQUEST (docs/protocol.md §3.1; `PACKET_ID_FILE_SENDREQUEST` in Messenger.h).
pub const PACKET_ID_FILE_SENDREQUEST: u8 = 80;
/// Id of FILE_CONTROL (docs/protocol.md §3.1; `PACKET_ID_FILE_CONTROL`).
pub const PACKET_ID_FILE_CONTROL: u8 = 81;
/// Id of FILE_DATA (docs/protocol.md §3.1; `PACKET_ID_FILE_DATA`).
pub const PACKET_ID_FILE_DATA: u8 = 82;

/// Largest FILE_DATA payload after id and file number: 1373 − 2 (docs/protocol.md §3.5,
/// `MAX_FILE_DATA_SIZE`). Every chunk of a transfer except the last has exactly this size.
pub const MAX_FILE_DATA_SIZE: usize = 1371;
/// Longest file name on the wire (docs/protocol.md §3.3 and §9, `TOX_MAX_FILENAME_LENGTH`).
pub const MAX_FILENAME_LENGTH: usize = 255;
/// Length of a file id (docs/protocol.md §3.2, `FILE_ID_LENGTH` / `TOX_FILE_ID_LENGTH`).
pub const FILE_ID_LENGTH: usize = 32;

/// Why a file-transfer payload does not decode or encode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// The payload is shorter than the fixed part of its layout.
    #[error("packet too short: need {needed} bytes, got {got}")]
    TooShort {
        /// Bytes the fixed part needs (id included).
        needed: usize,
        /// Bytes present.
        got: usize,
    },
    /// The first byte is not the id this parser handles.
    #[error("unexpected packet id {0}")]
    WrongId(u8),
    /// A file name longer than 255 bytes (c-toxcore drops such requests).
    #[error("file name of {0} bytes exceeds 255")]
    NameTooLong(usize),
    /// A FILE_DATA payload longer than 1371 bytes.
    #[error("file data of {0} bytes exceeds 1371")]
    DataTooLong(usize),
    /// A FILE_CONTROL direction byte other than 0 or 1.
    #[error("bad file control direction {0}")]
    BadDirection(u8),
    /// A FILE_CONTROL control byte other than 0..=3.
    #[error("bad file control type {0}")]
    BadControl(u8),
    /// A SEEK whose position is not exactly 8 bytes (c-toxcore's `length != sizeof(position)`).
    #[error("seek position of {0} bytes, expected 8")]
    BadSeekLength(usize),
}

/// Any of the three file packets, decoded from a lossless payload (id byte first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilePacket<'a> {
    /// FILE_SENDREQUEST (80).
    SendRequest(SendRequestPacket),
    /// FILE_CONTROL (81).
    Control(ControlPacket),
    /// FILE_DATA (82).
    Data(DataPacket<'a>),
}

impl<'a> FilePacket<'a> {
    /// Decode a payload whose id is 80, 81 or 82.
    pub fn parse(payload: &'a [u8]) -> Result<Self, PacketError> {
        match payload.first() {
            None => Err(PacketError::TooShort { needed: 1, got: 0 }),
            Some(&PACKET_ID_FILE_SENDREQUEST) => {
                SendRequestPacket::parse(payload).map(FilePacket::SendRequest)
            }
            Some(&PACKET_ID_FILE_CONTROL) => ControlPacket::parse(payload).map(FilePacket::Control),
            Some(&PACKET_ID_FILE_DATA) => DataPacket::parse(payload).map(FilePacket::Data),
            Some(&id) => Err(PacketError::WrongId(id)),
        }
    }
}

/// A field that ran out (`rustox_net_crypto::wire`): the payload is shorter than its layout.
impl From<TooShort> for PacketError {
    fn from(e: TooShort) -> Self {
        PacketError::TooShort {
            needed: e.needed,
            got: e.got,
        }
    }
}

/// Fail with `WrongId` unless the first byte is `id` (callers check the length first).
fn expect_id(payload: &[u8], id: u8) -> Result<(), PacketError> {
    match payload.first() {
        Some(&b) if b == id => Ok(()),
        Some(&b) => Err(PacketError::WrongId(b)),
        None => Err(PacketError::TooShort { needed: 1, got: 0 }),
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_rejects_empty_and_foreign_ids() {
        assert_eq!(
            FilePacket::parse(&[]),
            Err(PacketError::TooShort { needed: 1, got: 0 })
        );
        assert_eq!(
            FilePacket::parse(&[64, 1, 2]),
            Err(PacketError::WrongId(64))
        );
    }

    #[test]
    fn dispatch_routes_each_id_to_its_parser() {
        assert!(matches!(
            FilePacket::parse(&[82, 7, 1, 2, 3]),
            Ok(FilePacket::Data(d)) if d.file_number == 7 && d.data == [1, 2, 3]
        ));
        assert!(matches!(
            FilePacket::parse(&[81, 0, 3, 2]),
            Ok(FilePacket::Control(_))
        ));
        let mut req = vec![80, 1];
        req.extend_from_slice(&[0; 44]);
        assert!(matches!(
            FilePacket::parse(&req),
            Ok(FilePacket::SendRequest(_))
        ));
    }
}
