//! The one error type of the packet parsers.

use crate::crypto::CryptoError;
use crate::wire::TooShort;

/// Why bytes are not a valid packet (or a box inside one did not open).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A fixed-size layout got another size.
    #[error("wrong length: expected {expected}, got {actual}")]
    WrongLength {
        /// The layout's size.
        expected: usize,
        /// What arrived.
        actual: usize,
    },
    /// A variable-size layout outside its bounds.
    #[error("length {actual} outside {min}..={max}")]
    LengthOutOfRange {
        /// Smallest valid size.
        min: usize,
        /// Largest valid size.
        max: usize,
        /// What arrived.
        actual: usize,
    },
    /// The first byte names another packet kind.
    #[error("unexpected packet kind {0:#04x}")]
    WrongKind(u8),
    /// A box did not open: wrong key, wrong nonce or tampered bytes.
    #[error("box did not open: {0}")]
    Crypto(#[from] CryptoError),
    /// A data packet's plaintext holds nothing but zero padding (docs/protocol.md §2.5).
    #[error("data packet is all padding")]
    AllPadding,
    /// A payload to encode is empty, too long, or starts with the padding byte 0.
    #[error("payload cannot be encoded")]
    BadPayload,
}

/// A field that ran out: the layout got fewer bytes than its size.
impl From<TooShort> for ParseError {
    fn from(e: TooShort) -> Self {
        ParseError::WrongLength {
            expected: e.needed,
            actual: e.got,
        }
    }
}
