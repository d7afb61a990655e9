//! Precomputed ("beforenm") and symmetric keys, with box/open in Tox's wire form.

use crypto_box::aead::{Aead, KeyInit};
use crypto_box::SalsaBox;
use xsalsa20poly1305::XSalsa20Poly1305;

use super::{CryptoError, Nonce, PublicKey, SecretKey};

/// Size of the Poly1305 tag that leads every box.
pub const MAC_SIZE: usize = 16;
/// Size of a symmetric key (cookie keys, toxencryptsave keys).
pub const SYMMETRIC_KEY_SIZE: usize = 32;

/// `crypto_box_beforenm(pk, sk)`: X25519 then HSalsa20, so that every later box with the same
/// peer costs only XSalsa20-Poly1305. Symmetric: `new(pkB, skA)` equals `new(pkA, skB)`.
pub struct PrecomputedKey(SalsaBox);

impl PrecomputedKey {
    /// The shared key between our secret key and the peer's public key.
    pub fn new(peer: &PublicKey, own: &SecretKey) -> Self {
        PrecomputedKey(SalsaBox::new(&peer.to_crypto_box(), &own.0))
    }

    /// `crypto_box_afternm`: returns `[MAC 16][ciphertext]`.
    pub fn encrypt(&self, nonce: &Nonce, plaintext: &[u8]) -> Vec<u8> {
        seal(&self.0, nonce, plaintext)
    }

    /// `crypto_box_open_afternm` on `[MAC 16][ciphertext]`.
    pub fn decrypt(&self, nonce: &Nonce, boxed: &[u8]) -> Result<Vec<u8>, CryptoError> {
        open(&self.0, nonce, boxed)
    }
}

impl std::fmt::Debug for PrecomputedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrecomputedKey(…)")
    }
}

/// A 32-byte key used directly as a precomputed box key (c-toxcore's
/// `encrypt_data_symmetric`): the cookie key and the toxencryptsave key.
#[derive(Clone)]
pub struct SymmetricKey(XSalsa20Poly1305);

impl SymmetricKey {
    /// A key from raw bytes.
    pub fn from_bytes(bytes: [u8; SYMMETRIC_KEY_SIZE]) -> Self {
        SymmetricKey(XSalsa20Poly1305::new(&bytes.into()))
    }

    /// A fresh random key (`new_symmetric_key`).
    pub fn generate(rng: &mut dyn super::CryptoRng) -> Self {
        let mut bytes = [0u8; SYMMETRIC_KEY_SIZE];
        rng.fill_bytes(&mut bytes);
        Self::from_bytes(bytes)
    }

    /// Box `plaintext`: `[MAC 16][ciphertext]`.
    pub fn encrypt(&self, nonce: &Nonce, plaintext: &[u8]) -> Vec<u8> {
        seal(&self.0, nonce, plaintext)
    }

    /// Open `[MAC 16][ciphertext]`.
    pub fn decrypt(&self, nonce: &Nonce, boxed: &[u8]) -> Result<Vec<u8>, CryptoError> {
        open(&self.0, nonce, boxed)
    }
}

impl std::fmt::Debug for SymmetricKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SymmetricKey(…)")
    }
}

fn seal<A: Aead>(cipher: &A, nonce: &Nonce, plaintext: &[u8]) -> Vec<u8> {
    cipher
        .encrypt(nonce.0.as_slice().into(), plaintext)
        .expect("XSalsa20-Poly1305 encryption cannot fail without associated data")
}

fn open<A: Aead>(cipher: &A, nonce: &Nonce, boxed: &[u8]) -> Result<Vec<u8>, CryptoError> {
    if boxed.len() <= MAC_SIZE {
        return Err(CryptoError::TooShort);
    }
    cipher
        .decrypt(nonce.0.as_slice().into(), boxed)
        .map_err(|_| CryptoError::AuthenticationFailed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::KeyPair;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn beforenm_is_symmetric_and_boxes_open() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let a = KeyPair::generate(&mut rng);
        let b = KeyPair::generate(&mut rng);
        let ab = PrecomputedKey::new(&b.public, &a.secret);
        let ba = PrecomputedKey::new(&a.public, &b.secret);
        let nonce = Nonce([3; 24]);
        let boxed = ab.encrypt(&nonce, b"hello");
        assert_eq!(boxed.len(), 5 + MAC_SIZE);
        assert_eq!(ba.decrypt(&nonce, &boxed).unwrap(), b"hello");
        let mut tampered = boxed.clone();
        tampered[0] ^= 1;
        assert_eq!(
            ba.decrypt(&nonce, &tampered),
            Err(CryptoError::AuthenticationFailed)
        );
        assert_eq!(ba.decrypt(&nonce, &boxed[..16]), Err(CryptoError::TooShort));
    }
}
