//! msgpack, as c-toxcore 0.2.18's `bin_pack.c` / `bin_unpack.c` write and read it over
//! the `cmp` library: the writer in `cmp`'s shortest forms, the reader as permissive as
//! `cmp`'s readers (see the module's documentation one level up for the format).

use crate::types::Tox_Event;

/// `bytes.len()` as the C API's `uint32_t` (records hold at most `u32::MAX` bytes).
pub(super) fn len32(bytes: &[u8]) -> u32 {
    u32::try_from(bytes.len()).unwrap_or(u32::MAX)
}

/// Writes msgpack in `cmp`'s shortest forms (`cmp_write_uinteger`, `cmp_write_array`,
/// `cmp_write_bin`).
#[derive(Default)]
pub(super) struct Packer {
    pub(super) out: Vec<u8>,
}

impl Packer {
    /// `cmp_write_array`: fixarray (≤ 15), array16, array32.
    pub(super) fn array(&mut self, n: u32) {
        if n <= 15 {
            self.out.push(0x90 | n as u8);
        } else if let Ok(n) = u16::try_from(n) {
            self.out.push(0xdc);
            self.out.extend_from_slice(&n.to_be_bytes());
        } else {
            self.out.push(0xdd);
            self.out.extend_from_slice(&n.to_be_bytes());
        }
    }

    /// `cmp_write_uinteger`: positive fixint (≤ 0x7f), uint8, uint16, uint32, uint64.
    fn uint(&mut self, v: u64) {
        if v <= 0x7f {
            self.out.push(v as u8);
        } else if let Ok(v) = u8::try_from(v) {
            self.out.extend_from_slice(&[0xcc, v]);
        } else if let Ok(v) = u16::try_from(v) {
            self.out.push(0xcd);
            self.out.extend_from_slice(&v.to_be_bytes());
        } else if let Ok(v) = u32::try_from(v) {
            self.out.push(0xce);
            self.out.extend_from_slice(&v.to_be_bytes());
        } else {
            self.out.push(0xcf);
            self.out.extend_from_slice(&v.to_be_bytes());
        }
    }

    /// `cmp_write_bool`: 0xc3 true, 0xc2 false.
    fn bool(&mut self, b: bool) {
        self.out.push(if b { 0xc3 } else { 0xc2 });
    }

    /// `cmp_write_bin`: bin8, bin16 or bin32 header, then the bytes.
    fn bin(&mut self, data: &[u8]) {
        let n = len32(data);
        if let Ok(n) = u8::try_from(n) {
            self.out.extend_from_slice(&[0xc4, n]);
        } else if let Ok(n) = u16::try_from(n) {
            self.out.push(0xc5);
            self.out.extend_from_slice(&n.to_be_bytes());
        } else {
            self.out.push(0xc6);
            self.out.extend_from_slice(&n.to_be_bytes());
        }
        self.out.extend_from_slice(&data[..n as usize]);
    }

    /// Every record of one type, each as `[type, payload]`.
    pub(super) fn records<R: Record>(&mut self, records: &[R]) {
        for record in records {
            self.array(2);
            self.uint(R::TYPE as u64);
            if R::FIELDS > 1 {
                self.array(R::FIELDS);
            }
            record.pack_fields(self);
        }
    }
}

/// Reads msgpack as `bin_unpack.c` does with `cmp`'s readers; every read refuses what does
/// not fit in the bytes left.
pub(super) struct Reader<'a> {
    pub(super) rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn be<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// `cmp_read_array`: a fixarray, array16 or array32 header.
    fn array_header(&mut self) -> Option<u32> {
        match self.byte()? {
            m @ 0x90..=0x9f => Some(u32::from(m & 0x0f)),
            0xdc => Some(u32::from(u16::from_be_bytes(self.be()?))),
            0xdd => Some(u32::from_be_bytes(self.be()?)),
            _ => None,
        }
    }

    /// `bin_unpack_array`: an array header whose count is no larger than the bytes left.
    pub(super) fn array(&mut self) -> Option<u32> {
        let n = self.array_header()?;
        (n as usize <= self.rest.len()).then_some(n)
    }

    /// `bin_unpack_array_fixed`: an array header of exactly `n` elements.
    fn array_fixed(&mut self, n: u32) -> Option<()> {
        (self.array_header()? == n).then_some(())
    }

    /// An unsigned integer of at most `bits` bits, in any form `cmp_read_uchar`,
    /// `cmp_read_ushort`, `cmp_read_uint` or `cmp_read_ulong` (for 8, 16, 32, 64) accepts:
    /// a positive fixint, an unsigned integer of at most `bits` bits, or a non-negative
    /// signed integer of at most `bits` bits.
    fn unsigned(&mut self, bits: u32) -> Option<u64> {
        let marker = self.byte()?;
        let (width, value) = match marker {
            0x00..=0x7f => (8, Some(u64::from(marker))),
            0xcc => (8, Some(u64::from(self.byte()?))),
            0xcd => (16, Some(u64::from(u16::from_be_bytes(self.be()?)))),
            0xce => (32, Some(u64::from(u32::from_be_bytes(self.be()?)))),
            0xcf => (64, Some(u64::from_be_bytes(self.be()?))),
            0xd0 => (8, u64::try_from(i8::from_be_bytes(self.be()?)).ok()),
            0xd1 => (16, u64::try_from(i16::from_be_bytes(self.be()?)).ok()),
            0xd2 => (32, u64::try_from(i32::from_be_bytes(self.be()?)).ok()),
            0xd3 => (64, u64::try_from(i64::from_be_bytes(self.be()?)).ok()),
            _ => return None,
        };
        if width > bits {
            return None;
        }
        value
    }

    /// `bin_unpack_u08`.
    pub(super) fn u8(&mut self) -> Option<u8> {
        self.unsigned(8).map(|v| v as u8)
    }

    /// `bin_unpack_u16`.
    fn u16(&mut self) -> Option<u16> {
        self.unsigned(16).map(|v| v as u16)
    }

    /// `bin_unpack_u32`, and the `tox_unpack_*` enum readers (an unchecked `u32`).
    fn u32(&mut self) -> Option<u32> {
        self.unsigned(32).map(|v| v as u32)
    }

    /// `bin_unpack_u64`.
    fn u64(&mut self) -> Option<u64> {
        self.unsigned(64)
    }

    /// `bin_unpack_bool`: msgpack true or false only.
    fn bool(&mut self) -> Option<bool> {
        match self.byte()? {
            0xc2 => Some(false),
            0xc3 => Some(true),
            _ => None,
        }
    }

    /// `cmp_read_bin_size`: a bin8, bin16 or bin32 header.
    fn bin_size(&mut self) -> Option<u32> {
        match self.byte()? {
            0xc4 => Some(u32::from(self.byte()?)),
            0xc5 => Some(u32::from(u16::from_be_bytes(self.be()?))),
            0xc6 => Some(u32::from_be_bytes(self.be()?)),
            _ => None,
        }
    }

    /// `bin_unpack_bin`: bytes, copied only once the bytes left are known to hold them.
    fn bin(&mut self) -> Option<Box<[u8]>> {
        let n = self.bin_size()?;
        Some(self.take(n as usize)?.into())
    }

    /// `bin_unpack_bin_fixed`: exactly `N` bytes.
    fn bin_fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        if self.bin_size()? as usize != N {
            return None;
        }
        self.be()
    }

    /// One payload of type `R`, appended to `list`.
    pub(super) fn record<R: Record>(&mut self, list: &mut Vec<R>) -> Option<()> {
        if R::FIELDS > 1 {
            self.array_fixed(R::FIELDS)?;
        }
        list.push(R::unpack_fields(self)?);
        Some(())
    }
}

/// One event type's payload, as `tox_event_<type>_pack` / `_unpack` write and read it: its
/// fields in order, each in its [`Field`] form, inside an array when there are two or more
/// (the single-field conference connected, peer list changed and self connection status
/// events carry the bare value).
pub(super) trait Record: Sized {
    /// Its `Tox_Event` value, the first element of `[type, payload]`.
    const TYPE: Tox_Event;
    /// How many fields the payload has.
    const FIELDS: u32;
    /// Writes the fields.
    fn pack_fields(&self, p: &mut Packer);
    /// Reads the fields.
    fn unpack_fields(r: &mut Reader<'_>) -> Option<Self>;
}

/// One field of a payload, as `bin_pack.c` writes it and `bin_unpack.c` reads it.
pub(super) trait Field: Sized {
    fn pack(&self, p: &mut Packer);
    fn unpack(r: &mut Reader<'_>) -> Option<Self>;
}

/// `bin_pack_u16` / `bin_unpack_u16`.
impl Field for u16 {
    fn pack(&self, p: &mut Packer) {
        p.uint(u64::from(*self));
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.u16()
    }
}

/// `bin_pack_u32` / `bin_unpack_u32`, and the enums (an unchecked `u32`).
impl Field for u32 {
    fn pack(&self, p: &mut Packer) {
        p.uint(u64::from(*self));
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.u32()
    }
}

/// `bin_pack_u64` / `bin_unpack_u64`.
impl Field for u64 {
    fn pack(&self, p: &mut Packer) {
        p.uint(*self);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.u64()
    }
}

/// `bin_pack_bool` / `bin_unpack_bool`.
impl Field for bool {
    fn pack(&self, p: &mut Packer) {
        p.bool(*self);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.bool()
    }
}

/// `bin_pack_bin` / `bin_unpack_bin`: bytes of any length.
impl Field for Box<[u8]> {
    fn pack(&self, p: &mut Packer) {
        p.bin(self);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.bin()
    }
}

/// `bin_pack_bin` / `bin_unpack_bin_fixed`: exactly `N` bytes (a public key).
impl<const N: usize> Field for [u8; N] {
    fn pack(&self, p: &mut Packer) {
        p.bin(self);
    }
    fn unpack(r: &mut Reader<'_>) -> Option<Self> {
        r.bin_fixed()
    }
}
