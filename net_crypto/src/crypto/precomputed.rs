//! Precomputed ("beforenm") and symmetric keys, with box/open in Tox's wire form.
//!
//! Both are a 32-byte XSalsa20-Poly1305 key; they differ only in where the key comes from. The
//! cipher itself is ours (`secretbox.rs`, and why in `xsalsa20.rs` and `poly1305.rs`); the
//! X25519 and HSalsa20 of `beforenm` come from `x25519-dalek` and `salsa20`.

use salsa20::cipher::consts::U10;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use super::secretbox;
use super::{CryptoError, Nonce, PublicKey, SecretKey};

/// Size of the Poly1305 tag that leads every box.
pub const MAC_SIZE: usize = 16;
/// Size of a symmetric key (cookie keys, toxencryptsave keys).
pub const SYMMETRIC_KEY_SIZE: usize = 32;

/// `crypto_box_beforenm(pk, sk)`: X25519 then HSalsa20, so that every later box with the same
/// peer costs only XSalsa20-Poly1305. Symmetric: `new(pkB, skA)` equals `new(pkA, skB)`.
/// Zeroed on drop (its [`SymmetricKey`] is). Its boxes are its [`SymmetricKey`]'s: `encrypt`
/// is `crypto_box_afternm` (`[MAC 16][ciphertext]`), `decrypt` is `crypto_box_open_afternm`,
/// and `encrypt_in_place` is the allocation-free form for the data path.
#[derive(Clone)]
pub struct PrecomputedKey(SymmetricKey);

/// Why `crypto_box_beforenm` refused a public key: it is a point of small order (dividing 8:
/// 0, 1, p − 1, the two points of order 8, and the non-canonical encodings p and p + 1,
/// each with or without the ignored top bit). X25519 with any clamped secret key maps such
/// a point to zero, so the "shared" key would be HSalsa20 of 32 zero bytes, one that anyone
/// can compute, and boxes under it prove nothing about who sealed them.
///
/// libsodium 1.0.18 refuses these in `crypto_scalarmult_curve25519` (its `has_small_order`
/// blacklist, and an all-zero-output check behind it: `crypto_scalarmult/curve25519/
/// scalarmult_curve25519.c`), so `crypto_box_beforenm` returns −1 and c-toxcore 0.2.18's
/// `encrypt_precompute`/`encrypt_data` fail: a packet under such a key is dropped there, and
/// is here too. Field-less so callers can count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("low-order public key: the X25519 shared secret would be all zeros")]
pub struct LowOrderPublicKey;

/// The seven points of libsodium 1.0.18's `has_small_order` blacklist
/// (`crypto_scalarmult/curve25519/ref10/x25519_ref10.c`), little-endian u-coordinates, each
/// of which [`PrecomputedKey::new`] refuses with [`LowOrderPublicKey`] (with or without the
/// ignored top bit). The table the tests of every crate forge low-order keys from.
pub const SMALL_ORDER_POINTS: [PublicKey; 7] = [
    // 0 (order 4)
    from_hex("0000000000000000000000000000000000000000000000000000000000000000"),
    // 1 (order 1)
    from_hex("0100000000000000000000000000000000000000000000000000000000000000"),
    // 325606250916557431795983626356110631294008115727848805560023387167927233504 (order 8)
    from_hex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
    // 39382357235489614581723060781553021112529911719440698176882885853963445705823
    // (order 8)
    from_hex("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
    // p − 1 (order 2)
    from_hex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    // p, non-canonical 0
    from_hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    // p + 1, non-canonical 1
    from_hex("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
];

/// 64 lowercase hex digits as a key, at compile time (the table above).
const fn from_hex(hex: &str) -> PublicKey {
    const fn digit(c: u8) -> u8 {
        match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => panic!("not a lowercase hex digit"),
        }
    }
    let hex = hex.as_bytes();
    assert!(hex.len() == 64, "a key is 64 hex digits");
    let mut key = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        key[i] = digit(hex[2 * i]) << 4 | digit(hex[2 * i + 1]);
        i += 1;
    }
    PublicKey(key)
}

impl PrecomputedKey {
    /// The shared key between our secret key and the peer's public key, or
    /// [`LowOrderPublicKey`] where libsodium's `crypto_box_beforenm` returns −1.
    ///
    /// The test is x25519-dalek's [`SharedSecret::was_contributory`] (the X25519 output is
    /// not all zeros, compared in constant time): the same condition as libsodium's final
    /// check, and it covers every point of its blacklist (`tests` below; compared with
    /// libsodium itself in `ffi/tests/libsodium_cipher.rs`).
    ///
    /// [`SharedSecret::was_contributory`]: x25519_dalek::SharedSecret::was_contributory
    pub fn new(peer: &PublicKey, own: &SecretKey) -> Result<Self, LowOrderPublicKey> {
        let own = Zeroizing::new(own.to_bytes());
        let secret = x25519_dalek::StaticSecret::from(*own);
        // `shared` and `secret` zero themselves on drop (x25519-dalek's `zeroize` feature).
        let shared = secret.diffie_hellman(&x25519_dalek::PublicKey::from(peer.0));
        if !shared.was_contributory() {
            return Err(LowOrderPublicKey);
        }
        // NaCl's crypto_box_beforenm: HSalsa20 of the X25519 output with a zero input block.
        let mut key = salsa20::hsalsa::<U10>(shared.as_bytes().into(), &[0u8; 16].into());
        let precomputed = PrecomputedKey(SymmetricKey::from_bytes(key.into()));
        key.as_mut_slice().zeroize();
        Ok(precomputed)
    }
}

impl std::ops::Deref for PrecomputedKey {
    type Target = SymmetricKey;

    fn deref(&self) -> &SymmetricKey {
        &self.0
    }
}

/// Its only field, a [`SymmetricKey`], zeroes itself on drop.
impl ZeroizeOnDrop for PrecomputedKey {}

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

    /// Open `[MAC 16][ciphertext]`. Refuses boxes of 16 bytes or fewer (docs/protocol.md §1).
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

impl Zeroize for SymmetricKey {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

impl Drop for SymmetricKey {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl ZeroizeOnDrop for SymmetricKey {}

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
        let ab = PrecomputedKey::new(&b.public, &a.secret).unwrap();
        let ba = PrecomputedKey::new(&a.public, &b.secret).unwrap();
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

    fn point(hex: &str) -> PublicKey {
        PublicKey(hex::decode(hex).unwrap().try_into().unwrap())
    }

    #[test]
    fn every_small_order_point_is_refused_with_or_without_the_top_bit() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(15);
        let secrets: Vec<SecretKey> = (0..4).map(|_| KeyPair::generate(&mut rng).secret).collect();
        for low in SMALL_ORDER_POINTS {
            let mut high = low;
            // X25519 ignores bit 255 (RFC 7748 §5), and so does libsodium's blacklist.
            high.0[31] |= 0x80;
            for pk in [low, high] {
                for sk in &secrets {
                    assert_eq!(
                        PrecomputedKey::new(&pk, sk).err(),
                        Some(LowOrderPublicKey),
                        "{}",
                        pk.to_hex()
                    );
                }
            }
        }
    }

    #[test]
    fn neighbours_of_small_order_points_and_random_keys_are_accepted() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
        let sk = KeyPair::generate(&mut rng).secret;
        // 2, p − 2, p + 2 (≡ 2): points of large order next to the blacklist.
        for hex in [
            "0200000000000000000000000000000000000000000000000000000000000000",
            "ebffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
            "efffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        ] {
            assert!(PrecomputedKey::new(&point(hex), &sk).is_ok(), "{hex}");
        }
        for _ in 0..64 {
            let peer = KeyPair::generate(&mut rng).public;
            assert!(PrecomputedKey::new(&peer, &sk).is_ok());
        }
    }

    #[test]
    fn a_wiped_symmetric_key_is_all_zeros() {
        let mut key = SymmetricKey::from_bytes([0xa5; SYMMETRIC_KEY_SIZE]);
        key.zeroize();
        assert_eq!(key.0, [0; SYMMETRIC_KEY_SIZE]);
    }

    #[test]
    fn key_types_are_marked_zeroize_on_drop() {
        fn zeroize_on_drop<T: ZeroizeOnDrop>() {}
        zeroize_on_drop::<PrecomputedKey>();
        zeroize_on_drop::<SymmetricKey>();
        zeroize_on_drop::<SecretKey>();
    }
}
