//! The bulk-transfer application: what a sender puts in each lossless packet and how the
//! receiver proves every byte arrived exactly once and in order.
//!
//! Each payload mimics a Tox file-data packet (docs/protocol.md §3.5): `[82][file number 0][chunk]`
//! with chunks of 1371 bytes (MAX_FILE_DATA_SIZE) except the last. A chunk's bytes are a
//! function of the transfer key and their absolute offset, and a full chunk starts with its
//! offset, so a reordered, duplicated, skipped or corrupted chunk cannot verify. The pieces
//! are independent of net_crypto so the file-transfer bench can reuse them.

use rustox_net_crypto::Timestamp;

/// Lossless packet id of Tox file data (PACKET_ID_FILE_DATA, docs/protocol.md §3.5).
pub const BULK_PACKET_ID: u8 = 82;
/// File-data bytes per packet: MAX_FILE_DATA_SIZE = 1373 − 2.
pub const CHUNK_SIZE: usize = 1371;
/// Bytes before the chunk: the id and the file number.
pub const BULK_HEADER: usize = 2;

/// SplitMix64 (Steele, Lea, Flood 2014): a cheap, well-mixed function of the word index.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Write the chunk starting at `offset` into `out` (its length is the chunk length): byte
/// `x` of the transfer is byte `x % 8` of `splitmix64(key ^ (x / 8))`, one mix per 8 bytes.
pub fn fill_chunk(key: u64, offset: u64, out: &mut [u8]) {
    let mut pos = 0usize;
    while pos < out.len() {
        let abs = offset + pos as u64;
        let word = splitmix64(key ^ (abs / 8)).to_le_bytes();
        let from = (abs % 8) as usize;
        let n = (8 - from).min(out.len() - pos);
        out[pos..pos + n].copy_from_slice(&word[from..from + n]);
        pos += n;
    }
    if out.len() >= 8 {
        out[..8].copy_from_slice(&offset.to_le_bytes());
    }
}

/// The sending half: hands out payloads until `total` bytes have been queued.
#[derive(Debug, Clone)]
pub struct BulkSender {
    key: u64,
    total: u64,
    offset: u64,
    first_send: Option<Timestamp>,
    last_send: Option<Timestamp>,
}

impl BulkSender {
    /// A transfer of `total` bytes whose content is derived from `key`.
    pub fn new(key: u64, total: u64) -> Self {
        BulkSender {
            key,
            total,
            offset: 0,
            first_send: None,
            last_send: None,
        }
    }

    /// The next payload to queue, or `None` when everything has been queued.
    pub fn peek_payload(&self) -> Option<Vec<u8>> {
        if self.offset >= self.total {
            return None;
        }
        let len = (self.total - self.offset).min(CHUNK_SIZE as u64) as usize;
        let mut p = vec![0u8; BULK_HEADER + len];
        p[0] = BULK_PACKET_ID;
        fill_chunk(self.key, self.offset, &mut p[BULK_HEADER..]);
        Some(p)
    }

    /// The payload from `peek_payload` was accepted by the session at `now`.
    pub fn advance(&mut self, now: Timestamp) {
        let len = (self.total - self.offset).min(CHUNK_SIZE as u64);
        self.offset += len;
        self.first_send.get_or_insert(now);
        self.last_send = Some(now);
    }

    /// Bytes queued so far.
    pub fn queued(&self) -> u64 {
        self.offset
    }

    /// True once every byte has been queued.
    pub fn is_done(&self) -> bool {
        self.offset >= self.total
    }

    /// When the first payload was queued (≈ the first data packet on the wire).
    pub fn first_send(&self) -> Option<Timestamp> {
        self.first_send
    }
}

/// What went wrong with received data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BulkError {
    /// Not a file-data payload.
    #[error("unexpected payload id {0}")]
    UnexpectedId(u8),
    /// A payload too short to hold the header.
    #[error("payload of {0} bytes is too short")]
    TooShort(usize),
    /// More bytes than the transfer holds.
    #[error("{extra} bytes beyond the end of a {total}-byte transfer")]
    TooLong {
        /// Bytes past the end.
        extra: u64,
        /// Transfer size.
        total: u64,
    },
    /// A chunk that is not the next one (reordered, duplicated or skipped).
    #[error("expected the chunk at offset {expected}, got one starting at {got}")]
    OutOfOrder {
        /// The offset we expected.
        expected: u64,
        /// The offset the chunk carries.
        got: u64,
    },
    /// A byte that differs from the pattern.
    #[error("wrong byte at offset {0}")]
    Corrupt(u64),
    /// A chunk shorter than 1371 bytes before the end.
    #[error("short chunk of {len} bytes at offset {offset} before the end")]
    ShortChunk {
        /// Chunk length.
        len: usize,
        /// Its offset.
        offset: u64,
    },
}

/// The receiving half: verifies each payload and records when bytes were delivered.
#[derive(Debug, Clone)]
pub struct BulkReceiver {
    key: u64,
    total: u64,
    received: u64,
    /// (delivery time, cumulative bytes) after each chunk.
    deliveries: Vec<(Timestamp, u64)>,
    error: Option<BulkError>,
}

impl BulkReceiver {
    /// Expect `total` bytes of the transfer keyed `key`.
    pub fn new(key: u64, total: u64) -> Self {
        BulkReceiver {
            key,
            total,
            received: 0,
            deliveries: Vec::new(),
            error: None,
        }
    }

    /// A lossless payload delivered by the session at `now`. The first error sticks.
    pub fn on_payload(&mut self, now: Timestamp, payload: &[u8]) -> Result<(), BulkError> {
        let r = self.check(payload);
        match &r {
            Ok(len) => {
                self.received += *len as u64;
                self.deliveries.push((now, self.received));
            }
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(e.clone());
                }
            }
        }
        r.map(|_| ())
    }

    fn check(&self, payload: &[u8]) -> Result<usize, BulkError> {
        if payload.len() < BULK_HEADER {
            return Err(BulkError::TooShort(payload.len()));
        }
        if payload[0] != BULK_PACKET_ID {
            return Err(BulkError::UnexpectedId(payload[0]));
        }
        let chunk = &payload[BULK_HEADER..];
        let offset = self.received;
        let end = offset + chunk.len() as u64;
        if end > self.total {
            return Err(BulkError::TooLong {
                extra: end - self.total,
                total: self.total,
            });
        }
        if chunk.len() < CHUNK_SIZE && end != self.total {
            return Err(BulkError::ShortChunk {
                len: chunk.len(),
                offset,
            });
        }
        if chunk.len() >= 8 {
            let got = u64::from_le_bytes(chunk[..8].try_into().unwrap_or([0; 8]));
            if got != offset {
                return Err(BulkError::OutOfOrder {
                    expected: offset,
                    got,
                });
            }
        }
        let mut expected = [0u8; CHUNK_SIZE];
        let expected = &mut expected[..chunk.len()];
        fill_chunk(self.key, offset, expected);
        if let Some(i) = expected.iter().zip(chunk).position(|(a, b)| a != b) {
            return Err(BulkError::Corrupt(offset + i as u64));
        }
        Ok(chunk.len())
    }

    /// Bytes verified so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// True once all bytes arrived.
    pub fn is_complete(&self) -> bool {
        self.received == self.total
    }

    /// The first error seen, if any.
    pub fn error(&self) -> Option<&BulkError> {
        self.error.as_ref()
    }

    /// (time, cumulative bytes) after each delivered chunk.
    pub fn deliveries(&self) -> &[(Timestamp, u64)] {
        &self.deliveries
    }

    /// When the last byte arrived.
    pub fn completed_at(&self) -> Option<Timestamp> {
        if self.is_complete() {
            self.deliveries.last().map(|d| d.0)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(sender: &mut BulkSender) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(p) = sender.peek_payload() {
            sender.advance(Timestamp::ZERO);
            out.push(p);
        }
        out
    }

    #[test]
    fn pattern_is_a_function_of_the_absolute_offset() {
        let mut whole = [0u8; 64];
        fill_chunk(5, 1000, &mut whole);
        let mut part = [0u8; 13];
        fill_chunk(5, 1000 + 21, &mut part);
        assert_eq!(&whole[21 + 8..34], &part[8..], "same offsets, same bytes");
        assert_eq!(
            &part[..8],
            &1021u64.to_le_bytes(),
            "a chunk starts with its offset"
        );
    }

    #[test]
    fn in_order_payloads_verify_to_the_last_byte() {
        let total = 10 * CHUNK_SIZE as u64 + 5;
        let chunks = drain(&mut BulkSender::new(1, total));
        assert_eq!(chunks.len(), 11);
        assert!(chunks
            .iter()
            .all(|c| c.len() <= 1373 && c[0] == BULK_PACKET_ID));
        let mut r = BulkReceiver::new(1, total);
        for c in &chunks {
            r.on_payload(Timestamp::ZERO, c).unwrap();
        }
        assert!(r.is_complete());
    }

    #[test]
    fn reordered_duplicated_or_flipped_chunks_are_caught() {
        let total = 4 * CHUNK_SIZE as u64;
        let chunks = drain(&mut BulkSender::new(2, total));
        let mut r = BulkReceiver::new(2, total);
        r.on_payload(Timestamp::ZERO, &chunks[0]).unwrap();
        assert_eq!(
            r.on_payload(Timestamp::ZERO, &chunks[0]),
            Err(BulkError::OutOfOrder {
                expected: 1371,
                got: 0
            })
        );
        assert!(matches!(
            r.on_payload(Timestamp::ZERO, &chunks[2]),
            Err(BulkError::OutOfOrder { .. })
        ));
        let mut bad = chunks[1].clone();
        bad[700] ^= 4;
        assert_eq!(
            r.on_payload(Timestamp::ZERO, &bad),
            Err(BulkError::Corrupt(1371 + 698))
        );
        assert_eq!(
            r.on_payload(Timestamp::ZERO, &[82, 0]),
            Err(BulkError::ShortChunk {
                len: 0,
                offset: 1371
            })
        );
        assert_eq!(
            r.on_payload(Timestamp::ZERO, &[7, 0, 1]),
            Err(BulkError::UnexpectedId(7))
        );
        assert_eq!(
            r.error(),
            Some(&BulkError::OutOfOrder {
                expected: 1371,
                got: 0
            }),
            "the first error sticks"
        );
        // A different key is a different transfer.
        let mut other = BulkReceiver::new(3, total);
        assert!(matches!(
            other.on_payload(Timestamp::ZERO, &chunks[0]),
            Err(BulkError::Corrupt(_))
        ));
    }
}
