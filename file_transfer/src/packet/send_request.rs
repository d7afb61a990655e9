//! FILE_SENDREQUEST (id 80): the sender offers a file (docs/protocol.md §3.3).
//!
//! | length | content                                            |
//! |-------:|----------------------------------------------------|
//! | 1      | id = 80                                            |
//! | 1      | file number (the sender's outgoing slot, 0..=255)  |
//! | 4      | kind, u32 big-endian (0 data, 1 avatar, others free)|
//! | 8      | file size, u64 big-endian (`u64::MAX` = unknown)   |
//! | 32     | file id                                            |
//! | 0..255 | file name, the rest of the payload (no NUL)        |
//!
//! c-toxcore (`Messenger.c`, `m_handle_packet`) drops a request whose name is longer than
//! 255 bytes; so does [`SendRequestPacket::parse`].

use rustox_net_crypto::wire::Reader;

use super::{
    expect_id, PacketError, FILE_ID_LENGTH, MAX_FILENAME_LENGTH, PACKET_ID_FILE_SENDREQUEST,
};

/// Bytes before the file name: id, file number, kind, size, file id.
const HEAD_LENGTH: usize = 1 + 1 + 4 + 8 + FILE_ID_LENGTH;

/// A decoded FILE_SENDREQUEST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendRequestPacket {
    /// The sender's slot number for this file.
    pub file_number: u8,
    /// The file kind, raw (`TOX_FILE_KIND_DATA` = 0, `TOX_FILE_KIND_AVATAR` = 1).
    pub kind: u32,
    /// Size in bytes, or `u64::MAX` when unknown (streaming).
    pub file_size: u64,
    /// The 32-byte file id.
    pub file_id: [u8; FILE_ID_LENGTH],
    /// The file name, at most 255 bytes, not necessarily UTF-8.
    pub filename: Vec<u8>,
}

impl SendRequestPacket {
    /// Decode a payload (id byte first).
    pub fn parse(payload: &[u8]) -> Result<Self, PacketError> {
        let mut r = Reader::new(payload);
        let head: [u8; HEAD_LENGTH] = r.array()?;
        let name = r.rest();
        expect_id(payload, PACKET_ID_FILE_SENDREQUEST)?;
        if name.len() > MAX_FILENAME_LENGTH {
            return Err(PacketError::NameTooLong(name.len()));
        }
        // The head's fields in order; each read is within the head's fixed length.
        let mut head = Reader::new(&head);
        let [_, file_number] = head.array()?;
        Ok(SendRequestPacket {
            file_number,
            kind: head.u32_be()?,
            file_size: head.u64_be()?,
            file_id: head.array()?,
            filename: name.to_vec(),
        })
    }

    /// Encode as a lossless payload (id byte first).
    pub fn encode(&self) -> Result<Vec<u8>, PacketError> {
        if self.filename.len() > MAX_FILENAME_LENGTH {
            return Err(PacketError::NameTooLong(self.filename.len()));
        }
        let mut out = Vec::with_capacity(self.filename.len().saturating_add(HEAD_LENGTH));
        out.push(PACKET_ID_FILE_SENDREQUEST);
        out.push(self.file_number);
        out.extend_from_slice(&self.kind.to_be_bytes());
        out.extend_from_slice(&self.file_size.to_be_bytes());
        out.extend_from_slice(&self.file_id);
        out.extend_from_slice(&self.filename);
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_bytes_decode_field_by_field() {
        let mut bytes = vec![80, 9, 0, 0, 0, 1];
        bytes.extend_from_slice(&0x0102_0304_0506_0708u64.to_be_bytes());
        bytes.extend_from_slice(&[0xAB; 32]);
        bytes.extend_from_slice(b"cat.png");
        let p = SendRequestPacket::parse(&bytes).unwrap();
        assert_eq!(p.file_number, 9);
        assert_eq!(p.kind, 1);
        assert_eq!(p.file_size, 0x0102_0304_0506_0708);
        assert_eq!(p.file_id, [0xAB; 32]);
        assert_eq!(p.filename, b"cat.png");
        assert_eq!(p.encode().unwrap(), bytes);
    }

    #[test]
    fn head_is_45_bytes_after_the_id() {
        // docs/protocol.md §3.3: head = 1+4+8+32 = 45 bytes after the id; an empty name is legal.
        let bytes = [80u8; 46];
        assert!(SendRequestPacket::parse(&bytes).is_ok());
        assert_eq!(
            SendRequestPacket::parse(&bytes[..45]),
            Err(PacketError::TooShort {
                needed: 46,
                got: 45
            })
        );
    }

    #[test]
    fn name_of_256_bytes_is_rejected_both_ways() {
        let mut bytes = vec![80u8; 46];
        bytes.extend_from_slice(&[b'a'; 256]);
        assert_eq!(
            SendRequestPacket::parse(&bytes),
            Err(PacketError::NameTooLong(256))
        );
        let p = SendRequestPacket {
            file_number: 0,
            kind: 0,
            file_size: 0,
            file_id: [0; 32],
            filename: vec![b'a'; 256],
        };
        assert_eq!(p.encode(), Err(PacketError::NameTooLong(256)));
    }

    proptest! {
        #[test]
        fn round_trip(file_number: u8, kind: u32, file_size: u64, file_id: [u8; 32],
                      filename in proptest::collection::vec(any::<u8>(), 0..=255)) {
            let p = SendRequestPacket { file_number, kind, file_size, file_id, filename };
            let bytes = p.encode().unwrap();
            prop_assert_eq!(bytes.len(), 46 + p.filename.len());
            prop_assert_eq!(SendRequestPacket::parse(&bytes).unwrap(), p);
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = SendRequestPacket::parse(&bytes);
        }
    }
}
