//! The secure stream after the handshake: length-prefixed boxes (docs/protocol.md §7;
//! c-toxcore 0.2.18 `TCP_common.c` `write_packet_TCP_secure_connection`,
//! `read_TCP_length`, `read_packet_TCP_secure_connection`).
//!
//! | length | content                                          |
//! |--------|--------------------------------------------------|
//! | 2      | box length n, big-endian                          |
//! | n      | `E(session key, nonce)[ plaintext ]` = `[MAC 16][ciphertext]` |
//!
//! No nonce travels: each side counts frames from the base nonce the sender announced in
//! the handshake and increments it after every frame. One lost, reordered or forged frame
//! therefore desynchronises the stream for good, which is why c-toxcore closes the
//! connection on any frame that does not open, and so does every user of this module.
//!
//! What 0.2.18 does with each length n on receipt:
//! * n = 0: the two length bytes are consumed and nothing else happens (`read_TCP_length`
//!   returns 0, read as "no packet yet"). [`FrameDecoder`] skips such frames too.
//! * 1 ≤ n ≤ 16: the box is read, cannot open (libsodium needs more than the MAC), and the
//!   connection is killed. [`FrameError::TooShort`], as soon as the length is read.
//! * n > [`MAX_PACKET_SIZE`] = 2048: killed at once. [`FrameError::TooLong`].
//!
//! On sending, c-toxcore refuses an empty plaintext and one longer than
//! [`MAX_PLAINTEXT_SIZE`] = 2032 (`length + CRYPTO_MAC_SIZE > MAX_PACKET_SIZE`).

use rustox_net_crypto::crypto::{Nonce, PrecomputedKey, MAC_SIZE};

/// `MAX_PACKET_SIZE` (`TCP_common.h`): the longest box a frame may carry.
pub const MAX_PACKET_SIZE: usize = 2048;
/// The longest plaintext a frame can carry: [`MAX_PACKET_SIZE`] minus the MAC.
pub const MAX_PLAINTEXT_SIZE: usize = MAX_PACKET_SIZE - MAC_SIZE;
/// The length prefix.
pub const LENGTH_SIZE: usize = 2;
/// The longest frame on the wire, prefix included.
pub const MAX_FRAME_SIZE: usize = LENGTH_SIZE + MAX_PACKET_SIZE;

/// The size on the wire of a frame carrying `plaintext_len` bytes.
pub const fn frame_size(plaintext_len: usize) -> usize {
    // Saturating: no frame holds usize::MAX bytes, so a saturated size fails every bound.
    (LENGTH_SIZE + MAC_SIZE).saturating_add(plaintext_len)
}

/// Why a frame could not be made or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// A plaintext of 0 bytes cannot be sent (`encrypt_data_symmetric` refuses it).
    #[error("empty plaintext")]
    Empty,
    /// A plaintext longer than [`MAX_PLAINTEXT_SIZE`].
    #[error("plaintext of {0} bytes does not fit a frame")]
    PlaintextTooLong(usize),
    /// A length prefix above [`MAX_PACKET_SIZE`].
    #[error("frame length {0} above 2048")]
    TooLong(u16),
    /// A length prefix of 1 to 16: no room for a MAC and a byte.
    #[error("frame length {0} cannot hold a box")]
    TooShort(u16),
    /// The box did not open under the expected nonce.
    #[error("frame does not open")]
    Decrypt,
}

/// Seals plaintexts into frames with the send nonce, which it advances by one per frame.
#[derive(Debug, Clone)]
pub struct FrameEncoder {
    key: PrecomputedKey,
    nonce: Nonce,
}

impl FrameEncoder {
    /// An encoder whose first frame uses `nonce` (the base nonce we announced).
    pub fn new(key: PrecomputedKey, nonce: Nonce) -> Self {
        FrameEncoder { key, nonce }
    }

    /// Appends the frame for `plaintext` to `out`; `out` is unchanged on error. Costs no
    /// allocation beyond `out`'s growth.
    pub fn encode(&mut self, plaintext: &[u8], out: &mut Vec<u8>) -> Result<(), FrameError> {
        if plaintext.is_empty() {
            return Err(FrameError::Empty);
        }
        if plaintext.len() > MAX_PLAINTEXT_SIZE {
            return Err(FrameError::PlaintextTooLong(plaintext.len()));
        }
        // At most MAX_PACKET_SIZE (2048) after the check above.
        let boxed = u16::try_from(MAC_SIZE.saturating_add(plaintext.len()))
            .map_err(|_| FrameError::PlaintextTooLong(plaintext.len()))?;
        out.reserve(frame_size(plaintext.len()));
        out.extend_from_slice(&boxed.to_be_bytes());
        let mac_at = out.len();
        out.extend_from_slice(&[0u8; MAC_SIZE]);
        out.extend_from_slice(plaintext);
        // The MAC slot was appended just above, so it is always there.
        if let Some((mac_slot, plain)) = out
            .get_mut(mac_at..)
            .and_then(<[u8]>::split_first_chunk_mut::<MAC_SIZE>)
        {
            *mac_slot = self.key.encrypt_in_place(&self.nonce, plain);
        }
        self.nonce.increment();
        Ok(())
    }

    /// The nonce the next frame will use.
    pub fn next_nonce(&self) -> Nonce {
        self.nonce
    }
}

/// Reads frames out of a byte stream delivered in arbitrary chunks and opens them with the
/// receive nonce. Holds at most one partial frame ([`MAX_PACKET_SIZE`] bytes), so a peer
/// cannot make it grow; bytes are left in the caller's chunk until a frame needs them.
///
/// After an error the stream is desynchronised: every later call returns the same error.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    key: PrecomputedKey,
    nonce: Nonce,
    /// The length prefix as far as it has arrived.
    prefix: [u8; LENGTH_SIZE],
    prefix_len: usize,
    /// The box being collected, once its length is known (then decrypted in place).
    body: Vec<u8>,
    body_len: usize,
    failed: Option<FrameError>,
}

impl FrameDecoder {
    /// A decoder whose first frame is expected under `nonce` (the peer's base nonce).
    pub fn new(key: PrecomputedKey, nonce: Nonce) -> Self {
        FrameDecoder {
            key,
            nonce,
            prefix: [0; LENGTH_SIZE],
            prefix_len: 0,
            body: Vec::new(),
            body_len: 0,
            failed: None,
        }
    }

    /// Consumes bytes from the front of `input` until one frame is complete and returns its
    /// plaintext, or returns `None` when `input` is used up without completing one. Call it
    /// again with the rest of `input` until it returns `None`.
    pub fn decode(&mut self, input: &mut &[u8]) -> Result<Option<&[u8]>, FrameError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        loop {
            if self.prefix_len < LENGTH_SIZE {
                let free = self.prefix.get_mut(self.prefix_len..).unwrap_or_default();
                // At most LENGTH_SIZE - prefix_len bytes: `prefix_len` never passes 2.
                self.prefix_len = self
                    .prefix_len
                    .saturating_add(super::take_front(free, input));
                if self.prefix_len < LENGTH_SIZE {
                    return Ok(None);
                }
                let n = u16::from_be_bytes(self.prefix);
                if n == 0 {
                    // 0.2.18 consumes a zero length and reads on.
                    self.prefix_len = 0;
                    continue;
                }
                let error = if usize::from(n) > MAX_PACKET_SIZE {
                    Some(FrameError::TooLong(n))
                } else if usize::from(n) <= MAC_SIZE {
                    Some(FrameError::TooShort(n))
                } else {
                    None
                };
                if let Some(e) = error {
                    self.failed = Some(e);
                    return Err(e);
                }
                self.body.clear();
                self.body_len = usize::from(n);
            }
            let bytes: &[u8] = input;
            let take = self
                .body_len
                .saturating_sub(self.body.len())
                .min(bytes.len());
            let (head, rest) = bytes.split_at_checked(take).unwrap_or((bytes, &[]));
            self.body.extend_from_slice(head);
            *input = rest;
            if self.body.len() < self.body_len {
                return Ok(None);
            }
            self.prefix_len = 0;
            // The length check above made the body longer than a MAC.
            let opened = match self.body.split_first_chunk_mut::<MAC_SIZE>() {
                Some((mac, ciphertext)) => {
                    let mac = *mac;
                    self.key
                        .decrypt_in_place(&self.nonce, &mac, ciphertext)
                        .is_ok()
                }
                None => false,
            };
            if !opened {
                self.failed = Some(FrameError::Decrypt);
                return Err(FrameError::Decrypt);
            }
            self.nonce.increment();
            return Ok(Some(self.body.get(MAC_SIZE..).unwrap_or_default()));
        }
    }

    /// True when no partial frame is held: the stream is at a frame boundary.
    pub fn is_idle(&self) -> bool {
        self.prefix_len == 0
    }

    /// Bytes of a partial frame held now (at most [`MAX_FRAME_SIZE`]).
    pub fn buffered(&self) -> usize {
        if self.prefix_len < LENGTH_SIZE {
            self.prefix_len
        } else {
            // The body never holds more than one frame (2048 bytes).
            LENGTH_SIZE.saturating_add(self.body.len())
        }
    }

    /// Gives back the partial-frame buffer's memory if no frame is in progress (an idle
    /// connection then costs no buffer at all).
    pub fn shrink(&mut self) {
        if self.is_idle() {
            self.body = Vec::new();
        }
    }

    /// The nonce the next frame must open under.
    pub fn next_nonce(&self) -> Nonce {
        self.nonce
    }

    /// Heap bytes held by the partial-frame buffer.
    pub fn heap_bytes(&self) -> usize {
        self.body.capacity()
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rustox_net_crypto::crypto::{KeyPair, PublicKey, SecretKey};

    fn pair() -> (FrameEncoder, FrameDecoder) {
        let a = SecretKey::from_bytes([1; 32]);
        let b: PublicKey = KeyPair::from_secret(SecretKey::from_bytes([2; 32])).public;
        let key = PrecomputedKey::new(&b, &a).unwrap();
        let mut nonce = Nonce([0; 24]);
        nonce.0[23] = 0xfe; // the increment carries within the first frames
        (
            FrameEncoder::new(key.clone(), nonce),
            FrameDecoder::new(key, nonce),
        )
    }

    fn decode_all(dec: &mut FrameDecoder, mut input: &[u8]) -> Result<Vec<Vec<u8>>, FrameError> {
        let mut out = Vec::new();
        while let Some(p) = dec.decode(&mut input)? {
            out.push(p.to_vec());
        }
        assert!(input.is_empty());
        Ok(out)
    }

    #[test]
    fn layout_is_length_then_box_and_nonce_advances() {
        let (mut enc, _) = pair();
        let first = enc.next_nonce();
        let mut out = Vec::new();
        enc.encode(b"abc", &mut out).unwrap();
        assert_eq!(out.len(), frame_size(3));
        assert_eq!(&out[..2], &[0, 19]);
        let mut second = first;
        second.increment();
        assert_eq!(enc.next_nonce(), second);
        // The box is exactly what the session key seals under the first nonce.
        let a = SecretKey::from_bytes([1; 32]);
        let b = KeyPair::from_secret(SecretKey::from_bytes([2; 32])).public;
        assert_eq!(
            &out[2..],
            &PrecomputedKey::new(&b, &a).unwrap().encrypt(&first, b"abc")[..]
        );
    }

    #[test]
    fn encoder_refuses_empty_and_oversized() {
        let (mut enc, _) = pair();
        let mut out = Vec::new();
        assert_eq!(enc.encode(&[], &mut out), Err(FrameError::Empty));
        assert_eq!(
            enc.encode(&[0; MAX_PLAINTEXT_SIZE + 1], &mut out),
            Err(FrameError::PlaintextTooLong(2033))
        );
        assert!(out.is_empty());
        enc.encode(&[0; MAX_PLAINTEXT_SIZE], &mut out).unwrap();
        assert_eq!(out.len(), MAX_FRAME_SIZE);
    }

    #[test]
    fn frames_split_byte_by_byte_decode_in_order() {
        let (mut enc, mut dec) = pair();
        let mut wire = Vec::new();
        for i in 1..=5u8 {
            enc.encode(&vec![i; usize::from(i) * 100], &mut wire)
                .unwrap();
        }
        let mut got = Vec::new();
        for b in wire.chunks(1) {
            got.extend(decode_all(&mut dec, b).unwrap());
            assert!(dec.buffered() <= MAX_FRAME_SIZE);
        }
        assert_eq!(got.len(), 5);
        for (i, p) in got.iter().enumerate() {
            assert_eq!(p, &vec![i as u8 + 1; (i + 1) * 100]);
        }
        assert!(dec.is_idle());
    }

    #[test]
    fn zero_length_frames_are_skipped() {
        let (mut enc, mut dec) = pair();
        let mut wire = vec![0, 0, 0, 0];
        enc.encode(b"hi", &mut wire).unwrap();
        wire.extend_from_slice(&[0, 0]);
        assert_eq!(decode_all(&mut dec, &wire).unwrap(), vec![b"hi".to_vec()]);
    }

    #[test]
    fn bad_lengths_and_forgeries_are_fatal_and_sticky() {
        let (_, mut dec) = pair();
        assert_eq!(
            decode_all(&mut dec, &[0x08, 0x01]),
            Err(FrameError::TooLong(2049))
        );
        assert_eq!(
            decode_all(&mut dec, &[0, 20]),
            Err(FrameError::TooLong(2049))
        );
        let (_, mut dec) = pair();
        assert_eq!(
            decode_all(&mut dec, &[0, 16]),
            Err(FrameError::TooShort(16))
        );
        let (mut enc, mut dec) = pair();
        let mut wire = Vec::new();
        enc.encode(b"payload", &mut wire).unwrap();
        wire[5] ^= 0x40;
        assert_eq!(decode_all(&mut dec, &wire), Err(FrameError::Decrypt));
    }

    #[test]
    fn a_skipped_frame_breaks_the_nonce_sequence() {
        let (mut enc, mut dec) = pair();
        let mut lost = Vec::new();
        enc.encode(b"one", &mut lost).unwrap();
        let mut wire = Vec::new();
        enc.encode(b"two", &mut wire).unwrap();
        assert_eq!(decode_all(&mut dec, &wire), Err(FrameError::Decrypt));
    }

    #[test]
    fn shrink_frees_only_between_frames() {
        let (mut enc, mut dec) = pair();
        let mut wire = Vec::new();
        enc.encode(&[7; 1000], &mut wire).unwrap();
        let mut first: &[u8] = &wire[..500];
        assert_eq!(dec.decode(&mut first).unwrap(), None);
        dec.shrink();
        assert_eq!(dec.buffered(), 500);
        assert_eq!(decode_all(&mut dec, &wire[500..]).unwrap().len(), 1);
        dec.shrink();
        assert_eq!(dec.buffered(), 0);
    }

    proptest! {
        #[test]
        fn any_plaintexts_any_chunking_round_trip(
            plains in proptest::collection::vec(
                proptest::collection::vec(any::<u8>(), 1..300), 1..8),
            cuts in proptest::collection::vec(1usize..400, 1..20),
        ) {
            let (mut enc, mut dec) = pair();
            let mut wire = Vec::new();
            for p in &plains {
                enc.encode(p, &mut wire).unwrap();
            }
            let mut got = Vec::new();
            let mut rest: &[u8] = &wire;
            for c in cuts.iter().cycle() {
                if rest.is_empty() {
                    break;
                }
                let (chunk, tail) = rest.split_at((*c).min(rest.len()));
                got.extend(decode_all(&mut dec, chunk).unwrap());
                rest = tail;
            }
            prop_assert_eq!(got, plains);
        }

        #[test]
        fn arbitrary_bytes_never_panic_and_stay_bounded(
            bytes in proptest::collection::vec(any::<u8>(), 0..5000),
        ) {
            let (_, mut dec) = pair();
            let mut input: &[u8] = &bytes;
            while let Ok(Some(p)) = dec.decode(&mut input) {
                prop_assert!(p.len() <= MAX_PLAINTEXT_SIZE);
            }
            prop_assert!(dec.buffered() <= MAX_FRAME_SIZE);
        }
    }
}
