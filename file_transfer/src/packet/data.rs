//! FILE_DATA (id 82): one chunk of a file, the only congestion-controlled packet
//! (docs/protocol.md §3.5).
//!
//! | length  | content                                         |
//! |--------:|-------------------------------------------------|
//! | 1       | id = 82                                         |
//! | 1       | file number (the sender's outgoing slot)        |
//! | 0..1371 | data (no position: it is implied by the order)  |
//!
//! Every chunk but the last is exactly 1371 bytes; a shorter one (even empty) ends the file.

use rustox_net_crypto::wire::Reader;

use super::{expect_id, PacketError, MAX_FILE_DATA_SIZE, PACKET_ID_FILE_DATA};

/// Bytes before the data.
const HEAD_LENGTH: usize = 2;

/// A decoded FILE_DATA, borrowing its data from the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPacket<'a> {
    /// The sender's slot number for this file.
    pub file_number: u8,
    /// The chunk, 0..=1371 bytes.
    pub data: &'a [u8],
}

impl<'a> DataPacket<'a> {
    /// Decode a payload (id byte first).
    pub fn parse(payload: &'a [u8]) -> Result<Self, PacketError> {
        let mut r = Reader::new(payload);
        let [_, file_number] = r.array::<HEAD_LENGTH>()?;
        let data = r.rest();
        expect_id(payload, PACKET_ID_FILE_DATA)?;
        if data.len() > MAX_FILE_DATA_SIZE {
            return Err(PacketError::DataTooLong(data.len()));
        }
        Ok(DataPacket { file_number, data })
    }

    /// Encode as a lossless payload (id byte first).
    pub fn encode(&self) -> Result<Vec<u8>, PacketError> {
        if self.data.len() > MAX_FILE_DATA_SIZE {
            return Err(PacketError::DataTooLong(self.data.len()));
        }
        let mut out = Vec::with_capacity(self.data.len().saturating_add(HEAD_LENGTH));
        out.push(PACKET_ID_FILE_DATA);
        out.push(self.file_number);
        out.extend_from_slice(self.data);
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn full_chunk_is_1373_bytes_and_one_more_is_rejected() {
        let data = [7u8; 1372];
        let full = DataPacket {
            file_number: 1,
            data: &data[..1371],
        }
        .encode()
        .unwrap();
        assert_eq!(full.len(), 1373);
        assert_eq!(&full[..2], &[82, 1]);
        assert_eq!(
            DataPacket {
                file_number: 1,
                data: &data
            }
            .encode(),
            Err(PacketError::DataTooLong(1372))
        );
        let mut long = full.clone();
        long.push(0);
        assert_eq!(
            DataPacket::parse(&long),
            Err(PacketError::DataTooLong(1372))
        );
    }

    #[test]
    fn empty_chunk_is_legal() {
        let p = DataPacket::parse(&[82, 3]).unwrap();
        assert_eq!(p.file_number, 3);
        assert!(p.data.is_empty());
        assert_eq!(
            DataPacket::parse(&[82]),
            Err(PacketError::TooShort { needed: 2, got: 1 })
        );
    }

    proptest! {
        #[test]
        fn round_trip(file_number: u8, data in proptest::collection::vec(any::<u8>(), 0..=1371)) {
            let p = DataPacket { file_number, data: &data };
            let bytes = p.encode().unwrap();
            prop_assert_eq!(DataPacket::parse(&bytes).unwrap(), p);
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..1400)) {
            let _ = DataPacket::parse(&bytes);
        }
    }
}
