//! Precomputed ("beforenm") and symmetric keys, with box/open in Tox's wire form.
//!
//! Both are a 32-byte XSalsa20-Poly1305 key; they differ only in where the key comes from. The
//! cipher itself is ours (`secretbox.rs`, and why in `xsalsa20.rs` and `poly1305.rs`); the
//! X25519 and HSalsa20 of `beforenm` come from `x25519-dalek` and `salsa20`.

use salsa20::cipher::consts::U10;
use zeroize::Zeroize;

use super::secretbox;
use super::{CryptoError, Nonce, PublicKey, SecretKey};

/// Size of the Poly1305 tag that leads every box.
pub const MAC_SIZE: usize = 16;
/// Size of a symmetric key (cookie keys, toxencryptsave keys).
pub const SYMMETRIC_KEY_SIZE: usize = 32;

/// `crypto_box_beforenm(pk, sk)`: X25519 then HSalsa20, so that every later box with the same
/// peer costs only XSalsa20-Poly1305. Symmetric: `new(pkB, skA)` equals `new(pkA, skB)`.
#[derive(Clone)]
pub struct PrecomputedKey(SymmetricKey);

impl PrecomputedKey {
    /// The shared key between our secret key and the peer's public key.
    pub fn new(peer: &PublicKey, own: &SecretKey) -> Self {
        let secret = x25519_dalek::StaticSecret::from(own.to_bytes());
        let shared = secret.diffie_hellman(&x25519_dalek::PublicKey::from(peer.0));
        // NaCl's crypto_box_beforenm: HSalsa20 of the X25519 output with a zero input block.
        let mut key: [u8; SYMMETRIC_KEY_SIZE] =
            salsa20::hsalsa::<U10>(shared.as_bytes().into(), &[0u8; 16].into()).into();
        let precomputed = PrecomputedKey(SymmetricKey::from_bytes(key));
        key.zeroize();
        precomputed
    }

    /// `crypto_box_afternm`: returns `[MAC 16][ciphertext]`.
    pub fn encrypt(&self, nonce: &Nonce, plaintext: &[u8]) -> Vec<u8> {
        self.0.encrypt(nonce, plaintext)
    }

    /// `crypto_box_open_afternm` on `[MAC 16][ciphertext]`.
    pub fn decrypt(&self, nonce: &Nonce, boxed: &[u8]) -> Result<Vec<u8>, CryptoError> {
        self.0.decrypt(nonce, boxed)
    }

    /// Encrypts `message` in place and returns the MAC that goes before it on the wire: the
    /// allocation-free form of [`Self::encrypt`] for the data path.
    pub fn encrypt_in_place(&self, nonce: &Nonce, message: &mut [u8]) -> [u8; MAC_SIZE] {
        self.0.encrypt_in_place(nonce, message)
    }

    /// Verifies `mac` over `ciphertext`, then decrypts it in place; on failure `ciphertext` is
    /// left as it was.
    pub fn decrypt_in_place(
        &self,
        nonce: &Nonce,
        mac: &[u8; MAC_SIZE],
        ciphertext: &mut [u8],
    ) -> Result<(), CryptoError> {
        self.0.decrypt_in_place(nonce, mac, ciphertext)
    }
}

impl std::fmt::Debug for PrecomputedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrecomputedKey(…)")
    }
}

/// A 32-byte key used directly as a precomputed box key (c-toxcore's
/// `encrypt_data_symmetric`): the cookie key and the toxencryptsave key. Zeroed on drop.
#[derive(Clone)]
pub struct SymmetricKey([u8; SYMMETRIC_KEY_SIZE]);

impl SymmetricKey {
    /// A key from raw bytes.
    pub fn from_bytes(bytes: [u8; SYMMETRIC_KEY_SIZE]) -> Self {
        SymmetricKey(bytes)
    }

    /// A fresh random key (`new_symmetric_key`).
    pub fn generate(rng: &mut dyn super::CryptoRng) -> Self {
        let mut bytes = [0u8; SYMMETRIC_KEY_SIZE];
        rng.fill_bytes(&mut bytes);
        Self::from_bytes(bytes)
    }

    /// Box `plaintext`: `[MAC 16][ciphertext]`.
    pub fn encrypt(&self, nonce: &Nonce, plaintext: &[u8]) -> Vec<u8> {
        let mut boxed = vec![0u8; MAC_SIZE + plaintext.len()];
        boxed[MAC_SIZE..].copy_from_slice(plaintext);
        let mac = self.encrypt_in_place(nonce, &mut boxed[MAC_SIZE..]);
        boxed[..MAC_SIZE].copy_from_slice(&mac);
        boxed
    }

    /// Open `[MAC 16][ciphertext]`. Refuses boxes of 16 bytes or fewer (protocol.md §1).
    pub fn decrypt(&self, nonce: &Nonce, boxed: &[u8]) -> Result<Vec<u8>, CryptoError> {
        if boxed.len() <= MAC_SIZE {
            return Err(CryptoError::TooShort);
        }
        let (mac, ciphertext) = boxed.split_at(MAC_SIZE);
        let mut plaintext = ciphertext.to_vec();
        self.decrypt_in_place(nonce, mac.try_into().expect("16 bytes"), &mut plaintext)?;
        Ok(plaintext)
    }

    /// Encrypts `message` in place and returns its MAC.
    pub fn encrypt_in_place(&self, nonce: &Nonce, message: &mut [u8]) -> [u8; MAC_SIZE] {
        secretbox::seal_in_place(&self.0, nonce, message)
    }

    /// Verifies `mac` over `ciphertext`, then decrypts it in place; on failure `ciphertext` is
    /// left as it was. An empty ciphertext is refused, as libsodium-based c-toxcore does.
    pub fn decrypt_in_place(
        &self,
        nonce: &Nonce,
        mac: &[u8; MAC_SIZE],
        ciphertext: &mut [u8],
    ) -> Result<(), CryptoError> {
        if ciphertext.is_empty() {
            return Err(CryptoError::TooShort);
        }
        secretbox::open_in_place(&self.0, nonce, mac, ciphertext)
    }
}

impl Drop for SymmetricKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl std::fmt::Debug for SymmetricKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SymmetricKey(…)")
    }
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
