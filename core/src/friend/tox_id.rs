//! The Tox ID and its nospam (docs/protocol.md §6.5; c-toxcore 0.2.18 `getaddress` and
//! `m_addfriend` in `Messenger.c`, `data_checksum` in `util.c`, `tox_self_get_nospam`).
//!
//! | length | content                                                     |
//! |--------|-------------------------------------------------------------|
//! | 32     | the owner's real (long-term) public key                     |
//! | 4      | nospam, used verbatim on the wire                           |
//! | 2      | checksum: byte 0 = XOR of bytes 0, 2, …, 34; byte 1 = XOR of bytes 1, 3, …, 35 |
//!
//! 38 bytes (`FRIEND_ADDRESS_SIZE`), shown as 76 hex digits. The nospam travels at the front
//! of every friend request (`request.rs`), so changing it makes old copies of the ID useless
//! to spammers while the public key stays the same.
//!
//! What the checksum catches: a change of one byte by a non-zero XOR `d` changes the checksum
//! byte of its parity by `d`, so **every single-byte corruption of the key or nospam is
//! detected**, and so is any change confined to the checksum itself. It cannot detect changes
//! to two or more bytes of the same parity whose XOR deltas cancel: for example the same
//! delta applied to bytes 0 and 2, or two bytes two (or any even distance) apart swapped.
//! Both claims are tested below.
// Tox IDs come from users and the C ABI as text or bytes: no indexing, slicing or
// arithmetic that could panic or wrap.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::fmt;
use std::str::FromStr;

use rustox_net_crypto::crypto::{PublicKey, PUBLIC_KEY_SIZE};
use rustox_net_crypto::wire::Reader;

/// `TOX_NOSPAM_SIZE`.
pub const NOSPAM_SIZE: usize = 4;
/// Size of the checksum at the end of a Tox ID.
pub const CHECKSUM_SIZE: usize = 2;
/// `FRIEND_ADDRESS_SIZE` / `TOX_ADDRESS_SIZE`: 32 + 4 + 2.
pub const TOX_ID_SIZE: usize = PUBLIC_KEY_SIZE + NOSPAM_SIZE + CHECKSUM_SIZE;
/// Length of the hex form.
pub const TOX_ID_HEX_LEN: usize = 2 * TOX_ID_SIZE;

/// The 4 nospam bytes as they appear in the Tox ID and at the front of a friend request.
///
/// c-toxcore keeps the nospam as a host-order `uint32_t` and `memcpy`s it into the ID and
/// the request, then compares requests with `memcmp`: the wire form is a byte string, and
/// byte-for-byte equality is what counts. The API's `uint32_t` (`tox_self_get_nospam`,
/// `tox_self_set_nospam`) is those bytes read big-endian (`net_ntohl`), which
/// [`NoSpam::to_u32`] / [`NoSpam::from_u32`] give.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct NoSpam(pub [u8; NOSPAM_SIZE]);

impl NoSpam {
    /// The nospam whose API value (`tox_self_get_nospam`) is `value`.
    pub const fn from_u32(value: u32) -> Self {
        NoSpam(value.to_be_bytes())
    }

    /// The API value: the wire bytes read big-endian.
    pub const fn to_u32(self) -> u32 {
        u32::from_be_bytes(self.0)
    }

    /// A fresh random nospam (c-toxcore draws one with `random_u32` at start-up).
    pub fn random(rng: &mut dyn rustox_net_crypto::crypto::CryptoRng) -> Self {
        let mut bytes = [0u8; NOSPAM_SIZE];
        rng.fill_bytes(&mut bytes);
        NoSpam(bytes)
    }
}

impl fmt::Debug for NoSpam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NoSpam({:08X})", self.to_u32())
    }
}

/// Why a Tox ID was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ToxIdError {
    /// Not 38 bytes, or not 76 hex digits.
    #[error("a Tox ID is 38 bytes (76 hex digits), got {0}")]
    WrongLength(usize),
    /// A character that is not a hex digit, at this byte offset of the string.
    #[error("not a hex digit at offset {0}")]
    NotHex(usize),
    /// The last two bytes do not match the key and nospam.
    #[error("bad checksum: expected {expected:02X?}, found {found:02X?}")]
    BadChecksum {
        /// The checksum of the first 36 bytes.
        expected: [u8; CHECKSUM_SIZE],
        /// The checksum the ID carries.
        found: [u8; CHECKSUM_SIZE],
    },
}

/// A Tox ID: whom to send a friend request to, and the nospam it must carry.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToxId {
    /// The owner's real (long-term) public key.
    pub pk: PublicKey,
    /// The nospam the owner currently accepts.
    pub nospam: NoSpam,
}

impl ToxId {
    /// An ID for `pk` and `nospam`.
    pub fn new(pk: PublicKey, nospam: NoSpam) -> Self {
        ToxId { pk, nospam }
    }

    /// The checksum of this ID's key and nospam.
    pub fn checksum(&self) -> [u8; CHECKSUM_SIZE] {
        let mut head = [0u8; PUBLIC_KEY_SIZE + NOSPAM_SIZE];
        head[..PUBLIC_KEY_SIZE].copy_from_slice(self.pk.as_bytes());
        head[PUBLIC_KEY_SIZE..].copy_from_slice(&self.nospam.0);
        checksum(&head)
    }

    /// The 38-byte wire form.
    pub fn to_bytes(&self) -> [u8; TOX_ID_SIZE] {
        let mut out = [0u8; TOX_ID_SIZE];
        out[..PUBLIC_KEY_SIZE].copy_from_slice(self.pk.as_bytes());
        out[PUBLIC_KEY_SIZE..PUBLIC_KEY_SIZE + NOSPAM_SIZE].copy_from_slice(&self.nospam.0);
        out[PUBLIC_KEY_SIZE + NOSPAM_SIZE..].copy_from_slice(&self.checksum());
        out
    }

    /// Parses the 38-byte form, checking the checksum. The key's validity
    /// (`public_key_valid`) is not checked here; see [`validate_friend_add`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ToxIdError> {
        let bad = ToxIdError::WrongLength(bytes.len());
        if bytes.len() != TOX_ID_SIZE {
            return Err(bad);
        }
        let (head, &found) = bytes.split_last_chunk::<CHECKSUM_SIZE>().ok_or(bad)?;
        let expected = checksum(head);
        if expected != found {
            return Err(ToxIdError::BadChecksum { expected, found });
        }
        let mut r = Reader::new(head);
        let id = ToxId {
            pk: PublicKey(r.array().map_err(|_| bad)?),
            nospam: NoSpam(r.array().map_err(|_| bad)?),
        };
        r.expect_end().map_err(|_| bad)?;
        Ok(id)
    }
}

/// c-toxcore's `data_checksum`: XOR of the even-offset bytes, then of the odd-offset ones.
pub fn checksum(data: &[u8]) -> [u8; CHECKSUM_SIZE] {
    let mut sum = [0u8; CHECKSUM_SIZE];
    for pair in data.chunks(CHECKSUM_SIZE) {
        for (s, byte) in sum.iter_mut().zip(pair) {
            *s ^= byte;
        }
    }
    sum
}

impl fmt::Display for ToxId {
    /// 76 upper-case hex digits, as Tox clients show IDs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.to_bytes() {
            write!(f, "{byte:02X}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ToxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ToxId({self})")
    }
}

impl FromStr for ToxId {
    type Err = ToxIdError;

    /// 76 hex digits in either case; nothing else (no whitespace, no prefix).
    fn from_str(s: &str) -> Result<Self, ToxIdError> {
        let digits = s.as_bytes();
        if digits.len() != TOX_ID_HEX_LEN {
            return Err(ToxIdError::WrongLength(digits.len()));
        }
        let mut bytes = [0u8; TOX_ID_SIZE];
        for (i, (byte, pair)) in bytes.iter_mut().zip(digits.chunks_exact(2)).enumerate() {
            let &[hi, lo] = pair else {
                return Err(ToxIdError::WrongLength(digits.len()));
            };
            // i < 38: the digit positions are below 76.
            let at = i.saturating_mul(2);
            let hi = hex_value(hi).ok_or(ToxIdError::NotHex(at))?;
            let lo = hex_value(lo).ok_or(ToxIdError::NotHex(at.saturating_add(1)))?;
            *byte = (hi << 4) | lo;
        }
        ToxId::from_bytes(&bytes)
    }
}

fn hex_value(c: u8) -> Option<u8> {
    // Digits and letters of either case, as the arms 0-9, a-f, A-F did.
    char::from(c)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_id() -> impl Strategy<Value = ToxId> {
        (any::<[u8; 32]>(), any::<[u8; 4]>())
            .prop_map(|(pk, ns)| ToxId::new(PublicKey(pk), NoSpam(ns)))
    }

    #[test]
    fn byte_table_and_checksum() {
        let mut pk = [0u8; 32];
        pk[0] = 0x01;
        pk[1] = 0x10;
        pk[2] = 0x02;
        let id = ToxId::new(PublicKey(pk), NoSpam([0xAA, 0xBB, 0xCC, 0xDD]));
        let bytes = id.to_bytes();
        assert_eq!(&bytes[..32], &pk);
        assert_eq!(&bytes[32..36], &[0xAA, 0xBB, 0xCC, 0xDD]);
        // Even bytes: 0x01 ^ 0x02 ^ 0xAA ^ 0xCC; odd bytes: 0x10 ^ 0xBB ^ 0xDD.
        assert_eq!(bytes[36], 0x01 ^ 0x02 ^ 0xAA ^ 0xCC);
        assert_eq!(bytes[37], 0x10 ^ 0xBB ^ 0xDD);
    }

    #[test]
    fn nospam_api_value_is_big_endian() {
        let ns = NoSpam::from_u32(0x1234_5678);
        assert_eq!(ns.0, [0x12, 0x34, 0x56, 0x78]);
        assert_eq!(ns.to_u32(), 0x1234_5678);
    }

    #[test]
    fn display_is_76_uppercase_hex_and_parses_in_either_case() {
        let id = ToxId::new(PublicKey([0xab; 32]), NoSpam([0xcd, 0xef, 0x01, 0x23]));
        let s = id.to_string();
        assert_eq!(s.len(), 76);
        assert_eq!(s, s.to_uppercase());
        assert!(s.starts_with("ABABAB"));
        assert_eq!(s.parse::<ToxId>(), Ok(id));
        assert_eq!(s.to_lowercase().parse::<ToxId>(), Ok(id));
    }

    #[test]
    fn parse_errors_are_typed() {
        let s = ToxId::new(PublicKey([7; 32]), NoSpam([1, 2, 3, 4])).to_string();
        assert_eq!(s[..74].parse::<ToxId>(), Err(ToxIdError::WrongLength(74)));
        assert_eq!(
            format!("{s} ").parse::<ToxId>(),
            Err(ToxIdError::WrongLength(77))
        );
        let mut bad = s.clone().into_bytes();
        bad[10] = b'g';
        assert_eq!(
            String::from_utf8(bad).unwrap().parse::<ToxId>(),
            Err(ToxIdError::NotHex(10))
        );
        // A multi-byte character of the right byte length is refused, not sliced.
        let accented = format!("{}é", &s[..74]);
        assert_eq!(accented.parse::<ToxId>(), Err(ToxIdError::NotHex(74)));
        let mut flipped = s.into_bytes();
        flipped[75] = if flipped[75] == b'0' { b'1' } else { b'0' };
        assert!(matches!(
            String::from_utf8(flipped).unwrap().parse::<ToxId>(),
            Err(ToxIdError::BadChecksum { .. })
        ));
        assert_eq!(
            ToxId::from_bytes(&[0; 37]),
            Err(ToxIdError::WrongLength(37))
        );
    }

    proptest! {
        #[test]
        fn bytes_and_hex_round_trip(id in arb_id()) {
            prop_assert_eq!(ToxId::from_bytes(&id.to_bytes()), Ok(id));
            prop_assert_eq!(id.to_string().parse::<ToxId>(), Ok(id));
        }

        #[test]
        fn every_single_byte_corruption_is_caught(
            id in arb_id(), pos in 0usize..TOX_ID_SIZE, delta in 1u8..=255,
        ) {
            let mut bytes = id.to_bytes();
            bytes[pos] ^= delta;
            let caught = matches!(ToxId::from_bytes(&bytes), Err(ToxIdError::BadChecksum { .. }));
            prop_assert!(caught);
        }

        /// The blind spot: equal deltas on two bytes of the same parity cancel out.
        #[test]
        fn same_parity_cancelling_pair_is_not_caught(
            id in arb_id(), a in 0usize..18, b in 0usize..18, odd in any::<bool>(), delta in 1u8..=255,
        ) {
            prop_assume!(a != b);
            let (i, j) = (2 * a + usize::from(odd), 2 * b + usize::from(odd));
            let mut bytes = id.to_bytes();
            bytes[i] ^= delta;
            bytes[j] ^= delta;
            let parsed = ToxId::from_bytes(&bytes).unwrap();
            prop_assert_ne!(parsed, id);
        }

        #[test]
        fn parse_never_panics(s in "\\PC{0,80}") {
            let _ = s.parse::<ToxId>();
        }

        #[test]
        fn from_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..50)) {
            let _ = ToxId::from_bytes(&bytes);
        }
    }
}
