//! A bounds-checked cursor over a byte slice, so parsers cannot index out of range.

use super::ParseError;

/// Reads fixed-size fields front to back; every read fails instead of panicking.
pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    total: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Reader {
            bytes,
            total: bytes.len(),
        }
    }

    /// The bytes after the packet kind byte (empty if there are none).
    pub(super) fn after_kind(bytes: &'a [u8]) -> Self {
        Reader::new(bytes.get(1..).unwrap_or_default())
    }

    /// The next `N` bytes as an array.
    pub(super) fn array<const N: usize>(&mut self) -> Result<[u8; N], ParseError> {
        let (head, rest) = self
            .bytes
            .split_first_chunk::<N>()
            .ok_or(ParseError::WrongLength {
                // What was read before, plus `N`: never more than `total + N`.
                expected: self
                    .total
                    .saturating_sub(self.bytes.len())
                    .saturating_add(N),
                actual: self.total,
            })?;
        self.bytes = rest;
        Ok(*head)
    }

    /// A u64 in the sender's own byte order. Tox's echo ids and cookie times are "opaque"
    /// (docs/protocol.md conventions): only their writer reads them back, so we pick little-endian.
    pub(super) fn opaque_u64(&mut self) -> Result<u64, ParseError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A big-endian u32.
    pub(super) fn u32_be(&mut self) -> Result<u32, ParseError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// A big-endian u16.
    pub(super) fn u16_be(&mut self) -> Result<u16, ParseError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// Whatever is left.
    pub(super) fn rest(self) -> &'a [u8] {
        self.bytes
    }
}
