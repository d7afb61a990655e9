//! XSalsa20-Poly1305 (`crypto_secretbox`, NaCl), in place, with the tag beside the message.
//!
//! The construction (docs/protocol.md §1; Bernstein, "Cryptography in NaCl", §9): the XSalsa20
//! keystream's first 32 bytes key a one-time Poly1305, the rest is XORed with the message, and
//! the tag authenticates the ciphertext. On the Tox wire a box is `[tag 16][ciphertext]`.
//! Opening checks the tag before it decrypts, so a forged box never yields plaintext, and the
//! comparison takes the same time whatever the bytes (`subtle`). The keystream, its subkey
//! and the one-time key are wiped when the stream drops at the end of each call
//! (`xsalsa20.rs`), and so is the tag an open computed: on a forged box it is the tag that
//! box needed.

use subtle::ConstantTimeEq;
use zeroize::Zeroize;

use super::poly1305::{self, TAG_SIZE};
use super::xsalsa20::XSalsa20;
use super::{CryptoError, Nonce};

/// Encrypts `message` in place and returns its tag.
pub(super) fn seal_in_place(key: &[u8; 32], nonce: &Nonce, message: &mut [u8]) -> [u8; TAG_SIZE] {
    let mut stream = XSalsa20::new(key, &nonce.0);
    stream.apply(message);
    poly1305::tag(stream.poly1305_key(), message)
}

/// Checks `tag` over `ciphertext`, then decrypts it in place. On a bad tag nothing is changed.
pub(super) fn open_in_place(
    key: &[u8; 32],
    nonce: &Nonce,
    tag: &[u8; TAG_SIZE],
    ciphertext: &mut [u8],
) -> Result<(), CryptoError> {
    let mut stream = XSalsa20::new(key, &nonce.0);
    let mut expected = poly1305::tag(stream.poly1305_key(), ciphertext);
    let authentic = bool::from(expected.ct_eq(tag));
    expected.as_mut_slice().zeroize();
    if !authentic {
        return Err(CryptoError::AuthenticationFailed);
    }
    stream.apply(ciphertext);
    Ok(())
}
