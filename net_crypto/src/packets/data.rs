//! Crypto data packet, kind 0x1b (docs/protocol.md §2.5), and its plaintext with the padding rule.
//!
//! Wire:
//!
//! | bytes    | content |
//! |---------:|---------|
//! | 1        | 0x1b |
//! | 2        | the last two bytes of the sender's nonce, big-endian |
//! | 25..1397 | `E(session shared key, full nonce)[ plaintext ]` |
//!
//! Total > 27 and ≤ 1400. Plaintext:
//!
//! | bytes  | content |
//! |-------:|---------|
//! | 4      | buffer_start u32 BE: the sender's receive-array start (a cumulative ack) |
//! | 4      | packet_number u32 BE: the lossless sequence number, or the send-array end for lossy/request/kill |
//! | 0..7   | zero padding, `(1373 − |payload|) mod 8` bytes |
//! | 1..1373| payload, id byte first (never 0) |
//!
//! The padding hides small length differences; the receiver skips leading zero bytes, so a
//! plaintext that is all zeros after the header carries no packet and is refused.

use super::{PacketKind, ParseError, MAX_CRYPTO_PACKET_SIZE};
use crate::crypto::{CryptoError, Nonce, PrecomputedKey, MAC_SIZE};
use crate::wire::Reader;

/// `CRYPTO_DATA_PACKET_MIN_SIZE` (net_crypto.c) = 1 + 2 + (16 + 4 + 4) + 0: a received data
/// packet must be *longer* than this.
pub const MIN_DATA_PACKET_SIZE: usize = 1 + 2 + MAC_SIZE + 8;
/// The plaintext header: buffer_start and packet_number.
pub const DATA_HEADER_SIZE: usize = 8;
/// `MAX_CRYPTO_DATA_SIZE` = 1400 − (1 + 2 + 8 + 16) = 1373: the largest payload, id included.
pub const MAX_CRYPTO_DATA_SIZE: usize =
    MAX_CRYPTO_PACKET_SIZE - (1 + 2 + DATA_HEADER_SIZE + MAC_SIZE);
/// `CRYPTO_MAX_PADDING` (net_crypto.h).
const MAX_PADDING: usize = 8;

/// Zero bytes placed before a payload of `payload_len` bytes (docs/protocol.md §2.5):
/// `(MAX_CRYPTO_DATA_SIZE − len) mod 8`, so padding + payload ≡ 1373 (mod 8).
pub fn padding_len(payload_len: usize) -> usize {
    MAX_CRYPTO_DATA_SIZE.saturating_sub(payload_len) % MAX_PADDING
}

/// A data packet on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataPacket {
    /// The last two bytes of the sender's nonce.
    pub nonce_low: u16,
    /// The box (MAC first).
    pub encrypted: Vec<u8>,
}

impl DataPacket {
    /// Parses a datagram of more than 27 and at most 1400 bytes starting with 0x1b.
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        DataPacketRef::parse(bytes).map(|p| DataPacket {
            nonce_low: p.nonce_low,
            encrypted: p.encrypted.to_vec(),
        })
    }

    /// The wire bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encrypted.len().saturating_add(3));
        out.push(PacketKind::Data as u8);
        out.extend_from_slice(&self.nonce_low.to_be_bytes());
        out.extend_from_slice(&self.encrypted);
        out
    }

    /// Encrypts `plaintext` with the session key and the sender's full nonce.
    pub fn seal(
        key: &PrecomputedKey,
        nonce: &Nonce,
        plaintext: &DataPlaintext,
    ) -> Result<Self, ParseError> {
        let mut wire = Vec::new();
        seal_data_into(
            key,
            nonce,
            plaintext.buffer_start,
            plaintext.packet_number,
            &plaintext.payload,
            &mut wire,
        )?;
        Self::parse(&wire)
    }

    /// Decrypts with the full nonce the receiver rebuilt (docs/protocol.md §2.4) and parses the
    /// plaintext.
    pub fn open(&self, key: &PrecomputedKey, nonce: &Nonce) -> Result<DataPlaintext, ParseError> {
        let packet = DataPacketRef {
            nonce_low: self.nonce_low,
            encrypted: &self.encrypted,
        };
        packet
            .open_into(key, nonce, &mut Vec::new())
            .map(|p| p.to_owned())
    }
}

/// Appends the data packet carrying `payload` to `out`, ready for the wire: header, MAC and
/// plaintext are laid out in place and encrypted there, so the data path copies the payload
/// once and allocates nothing when `out` has room. On error nothing is appended.
pub fn seal_data_into(
    key: &PrecomputedKey,
    nonce: &Nonce,
    buffer_start: u32,
    packet_number: u32,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), ParseError> {
    check_payload(payload)?;
    let pad = padding_len(payload.len());
    let start = out.len();
    // The header, MAC and padding are bounded constants and `check_payload` bounded the
    // payload: the packet is at most MAX_CRYPTO_PACKET_SIZE bytes, so nothing here overflows.
    out.reserve(
        (3 + MAC_SIZE + DATA_HEADER_SIZE)
            .saturating_add(pad)
            .saturating_add(payload.len()),
    );
    out.push(PacketKind::Data as u8);
    out.extend_from_slice(&nonce.low_u16().to_be_bytes());
    out.extend_from_slice(&[0; MAC_SIZE]);
    out.extend_from_slice(&buffer_start.to_be_bytes());
    out.extend_from_slice(&packet_number.to_be_bytes());
    out.extend(std::iter::repeat_n(0, pad));
    out.extend_from_slice(payload);
    let sealed = out.get_mut(start.saturating_add(3)..).unwrap_or_default();
    let (mac_slot, plain) = sealed.split_at_mut(MAC_SIZE.min(sealed.len()));
    let mac = key.encrypt_in_place(nonce, plain);
    mac_slot.copy_from_slice(&mac);
    Ok(())
}

/// A payload the plaintext can carry: 1..=1373 bytes whose id byte is not 0 (it would read
/// back as padding).
fn check_payload(payload: &[u8]) -> Result<(), ParseError> {
    match payload.first() {
        Some(&id) if id != 0 && payload.len() <= MAX_CRYPTO_DATA_SIZE => Ok(()),
        _ => Err(ParseError::BadPayload),
    }
}

/// A data packet borrowed from the received datagram: the receive path's view, which copies
/// nothing until the plaintext is decrypted into a reused buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPacketRef<'a> {
    /// The last two bytes of the sender's nonce.
    pub nonce_low: u16,
    /// The box (MAC first), more than 24 bytes.
    pub encrypted: &'a [u8],
}

impl<'a> DataPacketRef<'a> {
    /// Parses a datagram of more than 27 and at most 1400 bytes starting with 0x1b.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, ParseError> {
        if bytes.len() <= MIN_DATA_PACKET_SIZE || bytes.len() > MAX_CRYPTO_PACKET_SIZE {
            return Err(ParseError::LengthOutOfRange {
                min: MIN_DATA_PACKET_SIZE + 1,
                max: MAX_CRYPTO_PACKET_SIZE,
                actual: bytes.len(),
            });
        }
        let mut r = Reader::new(bytes);
        let [kind] = r.array()?;
        if kind != PacketKind::Data as u8 {
            return Err(ParseError::WrongKind(kind));
        }
        let nonce_low = r.u16_be()?;
        Ok(DataPacketRef {
            nonce_low,
            encrypted: r.rest(),
        })
    }

    /// Decrypts into `scratch` (cleared first; reused from packet to packet) with the full
    /// nonce the receiver rebuilt (docs/protocol.md §2.4), and parses the plaintext there.
    pub fn open_into<'s>(
        &self,
        key: &PrecomputedKey,
        nonce: &Nonce,
        scratch: &'s mut Vec<u8>,
    ) -> Result<DataPlaintextRef<'s>, ParseError> {
        if self.encrypted.len() <= MAC_SIZE {
            return Err(CryptoError::TooShort.into());
        }
        let (mac, ciphertext) = self.encrypted.split_at(MAC_SIZE);
        scratch.clear();
        scratch.extend_from_slice(ciphertext);
        key.decrypt_in_place(nonce, mac.try_into().expect("16 bytes"), scratch)?;
        DataPlaintextRef::parse(scratch)
    }
}

/// The plaintext of a data packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataPlaintext {
    /// The sender's receive-array start: everything below it arrived (cumulative ack).
    pub buffer_start: u32,
    /// Sequence number (lossless) or the sender's send-array end (other kinds).
    pub packet_number: u32,
    /// The payload, id byte first, padding removed.
    pub payload: Vec<u8>,
}

impl DataPlaintext {
    /// Header, padding and payload. Refuses an empty payload, one longer than 1373 bytes, and
    /// one whose id byte is 0 (it would read back as padding).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ParseError> {
        check_payload(&self.payload)?;
        let pad = padding_len(self.payload.len());
        let mut out = Vec::with_capacity(
            DATA_HEADER_SIZE
                .saturating_add(pad)
                .saturating_add(self.payload.len()),
        );
        out.extend_from_slice(&self.buffer_start.to_be_bytes());
        out.extend_from_slice(&self.packet_number.to_be_bytes());
        out.extend(std::iter::repeat_n(0, pad));
        out.extend_from_slice(&self.payload);
        Ok(out)
    }

    /// Parses a decrypted plaintext: more than 8 bytes, leading zeros after the header skipped.
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        DataPlaintextRef::parse(bytes).map(|p| p.to_owned())
    }
}

/// A decrypted plaintext borrowed from the buffer it was decrypted into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPlaintextRef<'a> {
    /// The sender's receive-array start: everything below it arrived (cumulative ack).
    pub buffer_start: u32,
    /// Sequence number (lossless) or the sender's send-array end (other kinds).
    pub packet_number: u32,
    /// The payload, id byte first, padding removed.
    pub payload: &'a [u8],
}

impl<'a> DataPlaintextRef<'a> {
    /// Parses a decrypted plaintext: more than 8 bytes, leading zeros after the header skipped.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, ParseError> {
        if bytes.len() <= DATA_HEADER_SIZE || bytes.len() > DATA_HEADER_SIZE + MAX_CRYPTO_DATA_SIZE
        {
            return Err(ParseError::LengthOutOfRange {
                min: DATA_HEADER_SIZE + 1,
                max: DATA_HEADER_SIZE + MAX_CRYPTO_DATA_SIZE,
                actual: bytes.len(),
            });
        }
        let mut r = Reader::new(bytes);
        let buffer_start = r.u32_be()?;
        let packet_number = r.u32_be()?;
        let body = r.rest();
        let start = body
            .iter()
            .position(|&b| b != 0)
            .ok_or(ParseError::AllPadding)?;
        Ok(DataPlaintextRef {
            buffer_start,
            packet_number,
            payload: body.get(start..).ok_or(ParseError::AllPadding)?,
        })
    }

    /// An owned copy.
    pub fn to_owned(&self) -> DataPlaintext {
        DataPlaintext {
            buffer_start: self.buffer_start,
            packet_number: self.packet_number,
            payload: self.payload.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_makes_padded_payload_congruent_to_1373_mod_8() {
        for len in 1..=MAX_CRYPTO_DATA_SIZE {
            let pad = padding_len(len);
            assert!(pad < 8);
            assert_eq!((pad + len) % 8, MAX_CRYPTO_DATA_SIZE % 8, "len {len}");
            assert!(pad + len <= MAX_CRYPTO_DATA_SIZE);
        }
        assert_eq!(MAX_CRYPTO_DATA_SIZE, 1373);
        assert_eq!(padding_len(1), 4);
        assert_eq!(padding_len(1373), 0);
    }

    #[test]
    fn largest_payload_fills_exactly_1400_bytes() {
        let key = PrecomputedKey::new(
            &crate::crypto::PublicKey([9; 32]),
            &crate::crypto::SecretKey::from_bytes([7; 32]),
        )
        .unwrap();
        let plain = DataPlaintext {
            buffer_start: 1,
            packet_number: 2,
            payload: vec![16; MAX_CRYPTO_DATA_SIZE],
        };
        let packet = DataPacket::seal(&key, &Nonce([0; 24]), &plain).unwrap();
        assert_eq!(packet.to_bytes().len(), 1400);
        let too_big = DataPlaintext {
            payload: vec![16; MAX_CRYPTO_DATA_SIZE + 1],
            ..plain
        };
        assert_eq!(too_big.to_bytes(), Err(ParseError::BadPayload));
    }
}
