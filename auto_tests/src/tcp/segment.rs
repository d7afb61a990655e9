//! The simulated TCP segment: a fixed 24-byte header standing in for the TCP/IP headers,
//! followed by payload (data) or SACK blocks (ACK).
//!
//! Data segment (24 + payload bytes):
//!
//! | offset | length | content                                              |
//! |--------|--------|------------------------------------------------------|
//! | 0      | 1      | kind: [`KIND_DATA`]                                  |
//! | 1      | 1      | 0                                                    |
//! | 2      | 2      | checksum (RFC 1071 over the whole datagram)          |
//! | 4      | 8      | sequence number: byte offset of the payload, LE      |
//! | 12     | 4      | TSval, sender clock in ms, LE (RFC 7323)             |
//! | 16     | 4      | TSecr, LE                                            |
//! | 20     | 4      | flow id, LE                                          |
//! | 24     | n      | payload                                              |
//!
//! ACK segment (24, or 24 + 4 + 8·n with n SACK blocks — the SACK option's NOP, NOP, kind,
//! length and 8 bytes per block, so an ACK costs what Linux's does: 52, 64, 72 or 80 wire
//! bytes over IPv4):
//!
//! | offset | length | content                                              |
//! |--------|--------|------------------------------------------------------|
//! | 0      | 1      | kind: [`KIND_ACK`]                                   |
//! | 1      | 1      | number of SACK blocks n, 0..=3                       |
//! | 2      | 2      | checksum                                             |
//! | 4      | 8      | cumulative ACK: next byte expected, LE               |
//! | 12     | 4      | TSval, receiver clock in ms                          |
//! | 16     | 4      | TSecr: the TS.Recent being echoed                    |
//! | 20     | 4      | flow id                                              |
//! | 24     | 4      | 0 (where the SACK option's kind and length would be) |
//! | 28     | 8·n    | blocks: (start − ack, end − ack) as two u32 LE each  |
//!
//! SACK edges are offsets from the cumulative ACK, like TCP's 32-bit edges: the receive
//! window ([`super::WINDOW_BYTES`]) keeps them far below 2³².

use rustox_net_crypto::Timestamp;

use super::SEGMENT_HEADER;

/// Kind byte of a data segment.
pub const KIND_DATA: u8 = 0xD7;
/// Kind byte of an ACK.
pub const KIND_ACK: u8 = 0xA7;
/// SACK blocks per ACK: three fit beside the timestamp option in TCP's 40 option bytes
/// (RFC 2018 §3), and Linux sends at most that many with timestamps on.
pub const MAX_SACK_BLOCKS: usize = 3;
/// The SACK option's fixed part (NOP, NOP, kind, length).
const SACK_OPTION_FIXED: usize = 4;
/// Bytes per SACK block.
const SACK_BLOCK_BYTES: usize = 8;

/// Why a datagram is not a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    /// Shorter than the header.
    #[error("{0} bytes is shorter than the {SEGMENT_HEADER}-byte segment header")]
    TooShort(usize),
    /// The checksum does not verify (a corrupted datagram; TCP drops these).
    #[error("bad checksum")]
    BadChecksum,
    /// Neither a data segment nor an ACK.
    #[error("unknown segment kind {0:#04x}")]
    UnknownKind(u8),
    /// An ACK whose SACK block count or length is inconsistent.
    #[error("ACK with {blocks} SACK blocks in {len} bytes")]
    BadSackLayout {
        /// The count byte.
        blocks: u8,
        /// The datagram length.
        len: usize,
    },
    /// A SACK block whose end is not after its start.
    #[error("empty or inverted SACK block")]
    BadSackBlock,
}

/// The header fields both kinds share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Sequence number (data) or cumulative ACK (ACK).
    pub number: u64,
    /// Sender's timestamp clock, ms.
    pub tsval: u32,
    /// Echoed timestamp.
    pub tsecr: u32,
    /// Which flow.
    pub flow: u32,
}

/// Up to [`MAX_SACK_BLOCKS`] `[start, end)` byte ranges, most recent first (RFC 2018 §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlocks {
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
    len: usize,
}

impl SackBlocks {
    /// Append a block; ignored when full.
    pub fn push(&mut self, start: u64, end: u64) {
        if self.len < MAX_SACK_BLOCKS {
            self.blocks[self.len] = (start, end);
            self.len += 1;
        }
    }

    /// The blocks.
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len]
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True without blocks.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A parsed segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    /// Data at `header.number`.
    Data {
        /// Header.
        header: Header,
        /// The payload bytes.
        payload: &'a [u8],
    },
    /// A cumulative ACK of `header.number` with SACK blocks.
    Ack {
        /// Header.
        header: Header,
        /// Selective acknowledgements.
        sacks: SackBlocks,
    },
}

/// The TSval clock (RFC 7323 §5.4): milliseconds, Linux's timestamp granularity, offset by
/// one so that a TSecr of 0 always means "nothing echoed" (Linux ignores a zero TSecr).
pub fn timestamp_clock(now: Timestamp) -> u32 {
    (now.as_millis() as u32).wrapping_add(1)
}

/// The round trip a timestamp echo measures at `now`, if `tsecr` echoes anything.
pub fn echoed_rtt(now: Timestamp, tsecr: u32) -> Option<std::time::Duration> {
    (tsecr != 0).then(|| {
        std::time::Duration::from_millis(u64::from(timestamp_clock(now).wrapping_sub(tsecr)))
    })
}

/// RFC 1071 Internet checksum: the ones'-complement of the ones'-complement sum of the
/// 16-bit big-endian words (an odd tail byte padded with zero). TCP's own, so corrupted
/// segments are dropped as a real stack would drop them.
pub fn internet_checksum(bytes: &[u8]) -> u16 {
    let mut sum: u64 = 0;
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        sum += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        sum += u64::from(*last) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn write_header(buf: &mut [u8], kind: u8, count: u8, h: &Header) {
    buf[0] = kind;
    buf[1] = count;
    buf[2..4].fill(0);
    buf[4..12].copy_from_slice(&h.number.to_le_bytes());
    buf[12..16].copy_from_slice(&h.tsval.to_le_bytes());
    buf[16..20].copy_from_slice(&h.tsecr.to_le_bytes());
    buf[20..24].copy_from_slice(&h.flow.to_le_bytes());
}

fn seal(buf: &mut [u8]) {
    let sum = internet_checksum(buf);
    buf[2..4].copy_from_slice(&sum.to_be_bytes());
}

/// A data segment of `len` payload bytes, the payload written by `fill`.
pub fn encode_data(header: &Header, len: usize, fill: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut buf = vec![0u8; SEGMENT_HEADER + len];
    write_header(&mut buf, KIND_DATA, 0, header);
    fill(&mut buf[SEGMENT_HEADER..]);
    seal(&mut buf);
    buf
}

/// An ACK carrying `sacks`. Blocks must lie above `header.number` (the receiver's window
/// keeps their offsets within u32; anything else is clamped rather than wrapped).
pub fn encode_ack(header: &Header, sacks: &SackBlocks) -> Vec<u8> {
    let n = sacks.len();
    let len = if n == 0 {
        SEGMENT_HEADER
    } else {
        SEGMENT_HEADER + SACK_OPTION_FIXED + SACK_BLOCK_BYTES * n
    };
    let mut buf = vec![0u8; len];
    write_header(&mut buf, KIND_ACK, n as u8, header);
    let offset = |edge: u64| {
        u32::try_from(edge.saturating_sub(header.number))
            .unwrap_or(u32::MAX)
            .to_le_bytes()
    };
    for (i, &(start, end)) in sacks.as_slice().iter().enumerate() {
        let at = SEGMENT_HEADER + SACK_OPTION_FIXED + SACK_BLOCK_BYTES * i;
        buf[at..at + 4].copy_from_slice(&offset(start));
        buf[at + 4..at + 8].copy_from_slice(&offset(end));
    }
    seal(&mut buf);
    buf
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

impl<'a> Segment<'a> {
    /// Parse and verify a datagram.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, SegmentError> {
        if bytes.len() < SEGMENT_HEADER {
            return Err(SegmentError::TooShort(bytes.len()));
        }
        if internet_checksum(bytes) != 0 {
            return Err(SegmentError::BadChecksum);
        }
        let header = Header {
            number: u64_at(bytes, 4),
            tsval: u32_at(bytes, 12),
            tsecr: u32_at(bytes, 16),
            flow: u32_at(bytes, 20),
        };
        match bytes[0] {
            KIND_DATA => Ok(Segment::Data {
                header,
                payload: &bytes[SEGMENT_HEADER..],
            }),
            KIND_ACK => {
                let count = bytes[1];
                let n = usize::from(count);
                let expected = if n == 0 {
                    SEGMENT_HEADER
                } else {
                    SEGMENT_HEADER + SACK_OPTION_FIXED + SACK_BLOCK_BYTES * n
                };
                if n > MAX_SACK_BLOCKS || bytes.len() != expected {
                    return Err(SegmentError::BadSackLayout {
                        blocks: count,
                        len: bytes.len(),
                    });
                }
                let mut sacks = SackBlocks::default();
                for i in 0..n {
                    let at = SEGMENT_HEADER + SACK_OPTION_FIXED + SACK_BLOCK_BYTES * i;
                    let start = header.number + u64::from(u32_at(bytes, at));
                    let end = header.number + u64::from(u32_at(bytes, at + 4));
                    if end <= start {
                        return Err(SegmentError::BadSackBlock);
                    }
                    sacks.push(start, end);
                }
                Ok(Segment::Ack { header, sacks })
            }
            other => Err(SegmentError::UnknownKind(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustox_simulator::IPV4_UDP_OVERHEAD;

    fn header(number: u64) -> Header {
        Header {
            number,
            tsval: 7,
            tsecr: 5,
            flow: 3,
        }
    }

    #[test]
    fn full_data_segment_is_a_1500_byte_ethernet_packet() {
        let d = encode_data(&header(1448), 1448, |p| p.fill(0x5a));
        assert_eq!(d.len() as u64 + IPV4_UDP_OVERHEAD, 1500);
        match Segment::parse(&d) {
            Ok(Segment::Data { header: h, payload }) => {
                assert_eq!(h, header(1448));
                assert_eq!(payload.len(), 1448);
                assert!(payload.iter().all(|&b| b == 0x5a));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn acks_cost_what_linux_acks_cost() {
        let mut sacks = SackBlocks::default();
        let wire = |s: &SackBlocks| encode_ack(&header(1000), s).len() as u64 + IPV4_UDP_OVERHEAD;
        assert_eq!(wire(&sacks), 52);
        sacks.push(2000, 3000);
        assert_eq!(wire(&sacks), 64);
        sacks.push(4000, 5000);
        sacks.push(6000, 7000);
        assert_eq!(wire(&sacks), 80);
        sacks.push(8000, 9000);
        assert_eq!(sacks.len(), 3, "a fourth block does not fit");
        let a = encode_ack(&header(1000), &sacks);
        match Segment::parse(&a) {
            Ok(Segment::Ack {
                header: h,
                sacks: s,
            }) => {
                assert_eq!(h, header(1000));
                assert_eq!(s.as_slice(), &[(2000, 3000), (4000, 5000), (6000, 7000)]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn any_single_bit_flip_is_rejected() {
        let mut sacks = SackBlocks::default();
        sacks.push(5000, 6448);
        let a = encode_ack(&header(1000), &sacks);
        for bit in 0..a.len() * 8 {
            let mut c = a.clone();
            c[bit / 8] ^= 1 << (bit % 8);
            assert!(
                Segment::parse(&c).is_err(),
                "flip of bit {bit} went unnoticed"
            );
        }
    }

    #[test]
    fn malformed_datagrams_are_errors_not_panics() {
        assert_eq!(Segment::parse(&[0; 3]), Err(SegmentError::TooShort(3)));
        let mut d = encode_data(&header(0), 10, |_| {});
        d[0] = 0x11;
        d[2..4].fill(0);
        let sum = internet_checksum(&d);
        d[2..4].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(Segment::parse(&d), Err(SegmentError::UnknownKind(0x11)));
        let mut a = encode_ack(&header(0), &SackBlocks::default());
        a[1] = 2;
        a[2..4].fill(0);
        let sum = internet_checksum(&a);
        a[2..4].copy_from_slice(&sum.to_be_bytes());
        assert!(matches!(
            Segment::parse(&a),
            Err(SegmentError::BadSackLayout { .. })
        ));
    }
}
