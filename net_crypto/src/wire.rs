//! The one idiom the project's parsers read untrusted bytes with: a [`Reader`], a cursor
//! that hands out fixed-size fields front to back and fails with a typed [`TooShort`] naming
//! what was missing instead of indexing out of range. net_crypto's packets, file_transfer's
//! packets and core's wire layouts (DHT, onion, relay, friend packets, savedata) all parse
//! through it; each maps a [`TooShort`] into its own typed drop reason.
// Every length here comes from the network: no indexing, slicing or arithmetic that could
// panic or wrap.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

/// The bytes ended before a field: the one error of a [`Reader`]'s reads. Counts bytes from
/// where the reader began (the byte after the kind for [`Reader::after_kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too short: need {needed} bytes, got {got}")]
pub struct TooShort {
    /// Bytes read before the field, plus the field's size.
    pub needed: usize,
    /// Bytes there were.
    pub got: usize,
}

/// [`Reader::expect_end`] found bytes after the last field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("trailing bytes: expected {expected}, got {got}")]
pub struct Trailing {
    /// Bytes read.
    pub expected: usize,
    /// Bytes there were.
    pub got: usize,
}

/// Reads fields front to back from a byte slice; every read fails instead of panicking.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    total: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the first byte of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader {
            bytes,
            total: bytes.len(),
        }
    }

    /// A reader at the byte after the packet kind byte (nothing to read if there is none).
    pub fn after_kind(bytes: &'a [u8]) -> Self {
        Reader::new(bytes.get(1..).unwrap_or_default())
    }

    /// Bytes read so far.
    fn read(&self) -> usize {
        self.total.saturating_sub(self.bytes.len())
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], TooShort> {
        let (head, rest) = self.bytes.split_first_chunk::<N>().ok_or(TooShort {
            // What was read before, plus `N`: never more than `total + N`.
            needed: self.read().saturating_add(N),
            got: self.total,
        })?;
        self.bytes = rest;
        Ok(*head)
    }

    /// The next byte.
    pub fn u8(&mut self) -> Result<u8, TooShort> {
        let [byte] = self.array()?;
        Ok(byte)
    }

    /// A big-endian u16.
    pub fn u16_be(&mut self) -> Result<u16, TooShort> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// A big-endian u32.
    pub fn u32_be(&mut self) -> Result<u32, TooShort> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// A big-endian u64.
    pub fn u64_be(&mut self) -> Result<u64, TooShort> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// A u64 in the sender's own byte order. Tox's echo ids and cookie times are "opaque"
    /// (docs/protocol.md conventions): only their writer reads them back, so we pick
    /// little-endian.
    pub fn opaque_u64(&mut self) -> Result<u64, TooShort> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// Whatever is left.
    pub fn rest(self) -> &'a [u8] {
        self.bytes
    }

    /// Nothing is left: the fields read were the whole layout.
    pub fn expect_end(self) -> Result<(), Trailing> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(Trailing {
                expected: self.read(),
                got: self.total,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_in_order_and_running_out_names_what_was_missing() {
        let bytes = [1, 0, 2, 0, 0, 0, 3, 9];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u8(), Ok(1));
        assert_eq!(r.u16_be(), Ok(2));
        assert_eq!(r.u32_be(), Ok(3));
        assert_eq!(r.remaining(), 1);
        assert_eq!(r.clone().u64_be(), Err(TooShort { needed: 15, got: 8 }));
        assert_eq!(
            r.clone().expect_end(),
            Err(Trailing {
                expected: 7,
                got: 8
            })
        );
        assert_eq!(r.array::<1>(), Ok([9]));
        assert_eq!(r.expect_end(), Ok(()));
    }

    #[test]
    fn after_kind_starts_past_the_first_byte() {
        let mut r = Reader::after_kind(&[7, 1, 2]);
        assert_eq!(r.array::<3>(), Err(TooShort { needed: 3, got: 2 }));
        assert_eq!(r.rest(), &[1, 2]);
        assert!(Reader::after_kind(&[]).rest().is_empty());
    }
}
