//! Password-protected save data: c-toxcore 0.2.18's `toxencryptsave`
//! (`toxencryptsave/toxencryptsave.c`, `defines.h`; docs/protocol.md §8).
//!
//! | length | content                                                      |
//! |--------|--------------------------------------------------------------|
//! | 8      | magic "toxEsave" (`TOX_ENC_SAVE_MAGIC_NUMBER`)               |
//! | 32     | scrypt salt                                                  |
//! | 24     | nonce                                                        |
//! | 16     | Poly1305 MAC                                                 |
//! | N ≥ 1  | XSalsa20 ciphertext of the plaintext save data               |
//!
//! 80 bytes of overhead (`TOX_PASS_ENCRYPTION_EXTRA_LENGTH`). The key is
//! `crypto_pwhash_scryptsalsa208sha256(SHA-256(passphrase), salt,
//! 2 × OPSLIMIT_INTERACTIVE, MEMLIMIT_INTERACTIVE)`, 32 bytes, used directly as a
//! precomputed box key (`encrypt_data_symmetric`, i.e. `crypto_box_afternm`: XSalsa20-Poly1305,
//! the same secretbox as net_crypto's [`SymmetricKey`]).
//!
//! libsodium turns (opslimit, memlimit) into scrypt's (N, r, p) in `pickparams`
//! (`crypto_pwhash/scryptsalsa208sha256/pwhash_scryptsalsa208sha256.c`): r = 8; opslimit =
//! 2 × 524288 = 1048576 is not below memlimit / 32 = 524288, so maxN = memlimit / (r × 128)
//! = 16384 and log2(N) is the first n with 2^n > maxN / 2, n = 14; then
//! p = (opslimit / 4 / N) / r = (262144 / 16384) / 8 = 2. Hence scrypt(N = 2^14, r = 8,
//! p = 2): 16 MiB of memory and a few tens of milliseconds per derivation. A known-answer
//! test made with c-toxcore's own `tox_pass_key_derive_with_salt` pins it.
//!
//! Both the empty plaintext and a ciphertext of 80 bytes or fewer are refused, as c-toxcore
//! refuses them; a passphrase may be empty.

use rustox_net_crypto::crypto::{
    sha256, CryptoError, CryptoRng, Nonce, SymmetricKey, MAC_SIZE, NONCE_SIZE,
};
use rustox_net_crypto::wire::Reader;

/// `TOX_ENC_SAVE_MAGIC_NUMBER`.
pub const MAGIC: &[u8; 8] = b"toxEsave";
/// `TOX_PASS_SALT_LENGTH` (`crypto_pwhash_scryptsalsa208sha256_SALTBYTES`).
pub const SALT_SIZE: usize = 32;
/// `TOX_PASS_KEY_LENGTH`.
pub const KEY_SIZE: usize = 32;
/// `TOX_PASS_ENCRYPTION_EXTRA_LENGTH`: magic + salt + nonce + MAC.
pub const ENCRYPTION_EXTRA_LENGTH: usize = MAGIC.len() + SALT_SIZE + NONCE_SIZE + MAC_SIZE;
const _: () = assert!(ENCRYPTION_EXTRA_LENGTH == 80);

/// scrypt's log2(N) for libsodium's `2 × OPSLIMIT_INTERACTIVE`, `MEMLIMIT_INTERACTIVE`.
pub const SCRYPT_LOG_N: u8 = 14;
/// scrypt's r (libsodium always picks 8).
pub const SCRYPT_R: u32 = 8;
/// scrypt's p for those limits.
pub const SCRYPT_P: u32 = 2;

/// Why data could not be encrypted or decrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CryptError {
    /// The data does not start with "toxEsave" (`TOX_ERR_DECRYPTION_BAD_FORMAT`).
    #[error("not encrypted save data: no toxEsave magic")]
    NotEncrypted,
    /// 80 bytes or fewer: no room for any ciphertext (`TOX_ERR_DECRYPTION_INVALID_LENGTH`).
    #[error("encrypted data of {len} bytes is truncated: more than 80 are needed")]
    Truncated {
        /// Its length.
        len: usize,
    },
    /// The MAC did not verify: the passphrase is wrong, or the data was altered
    /// (`TOX_ERR_DECRYPTION_FAILED`; the two cannot be told apart).
    #[error("wrong passphrase (or the encrypted data was altered)")]
    WrongPassphrase,
    /// c-toxcore refuses to encrypt nothing (`TOX_ERR_ENCRYPTION_NULL`).
    #[error("refusing to encrypt an empty plaintext")]
    EmptyPlaintext,
    /// scrypt refused its parameters (`TOX_ERR_KEY_DERIVATION_FAILED`); cannot happen with
    /// the fixed ones used here.
    #[error("key derivation failed")]
    KeyDerivation,
}

/// True if `data` starts with the "toxEsave" magic (`tox_is_data_encrypted`).
pub fn is_encrypted(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

/// The salt of encrypted data (`tox_get_salt`), so the key can be derived once and reused.
pub fn salt(data: &[u8]) -> Option<[u8; SALT_SIZE]> {
    if !is_encrypted(data) {
        return None;
    }
    Reader::new(data.get(MAGIC.len()..)?).array().ok()
}

/// A key derived from a passphrase and its salt (`Tox_Pass_Key`). Deriving costs 16 MiB and
/// tens of milliseconds; a client that saves often keeps one. Zeroed on drop.
#[derive(Clone, Debug)]
pub struct PassKey {
    salt: [u8; SALT_SIZE],
    key: SymmetricKey,
}

impl PassKey {
    /// `tox_pass_key_derive_with_salt`.
    pub fn derive(passphrase: &[u8], salt: [u8; SALT_SIZE]) -> Result<PassKey, CryptError> {
        let params = scrypt::Params::new(SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P, KEY_SIZE)
            .map_err(|_| CryptError::KeyDerivation)?;
        let mut passkey = sha256(passphrase);
        let mut key = [0u8; KEY_SIZE];
        let result = scrypt::scrypt(&passkey, &salt, &params, &mut key);
        passkey.fill(0);
        result.map_err(|_| CryptError::KeyDerivation)?;
        let key_bytes = key;
        key.fill(0);
        Ok(PassKey {
            salt,
            key: SymmetricKey::from_bytes(key_bytes),
        })
    }

    /// `tox_pass_key_derive`: a fresh random salt.
    pub fn derive_random(
        passphrase: &[u8],
        rng: &mut dyn CryptoRng,
    ) -> Result<PassKey, CryptError> {
        let mut salt = [0u8; SALT_SIZE];
        rng.fill_bytes(&mut salt);
        Self::derive(passphrase, salt)
    }

    /// The salt this key was derived with.
    pub fn salt(&self) -> [u8; SALT_SIZE] {
        self.salt
    }

    /// `tox_pass_key_encrypt`: magic, salt, a random nonce, then the box.
    pub fn encrypt(&self, plain: &[u8], rng: &mut dyn CryptoRng) -> Result<Vec<u8>, CryptError> {
        if plain.is_empty() {
            return Err(CryptError::EmptyPlaintext);
        }
        let nonce = Nonce::random(rng);
        let mut out = Vec::with_capacity(ENCRYPTION_EXTRA_LENGTH.saturating_add(plain.len()));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.salt);
        out.extend_from_slice(&nonce.0);
        let start = out.len();
        out.extend_from_slice(&[0; MAC_SIZE]);
        out.extend_from_slice(plain);
        // The MAC slot was appended just above, so it is always there.
        if let Some((mac_slot, boxed)) = out
            .get_mut(start..)
            .and_then(<[u8]>::split_first_chunk_mut::<MAC_SIZE>)
        {
            *mac_slot = self.key.encrypt_in_place(&nonce, boxed);
        }
        Ok(out)
    }

    /// `tox_pass_key_decrypt`. The salt in `data` is not looked at: this key's is used.
    pub fn decrypt(&self, data: &[u8]) -> Result<Vec<u8>, CryptError> {
        let (nonce, boxed) = split(data)?;
        self.key.decrypt(&nonce, boxed).map_err(|e| match e {
            CryptoError::AuthenticationFailed => CryptError::WrongPassphrase,
            CryptoError::TooShort => CryptError::Truncated { len: data.len() },
        })
    }
}

/// Where the nonce starts: after the magic and the salt.
const NONCE_AT: usize = MAGIC.len() + SALT_SIZE;

/// Checks the length and magic; returns the nonce and `[MAC][ciphertext]`.
fn split(data: &[u8]) -> Result<(Nonce, &[u8]), CryptError> {
    if data.len() <= ENCRYPTION_EXTRA_LENGTH {
        // c-toxcore checks the length first, so short data without the magic is "invalid
        // length" there too.
        return Err(CryptError::Truncated { len: data.len() });
    }
    if !is_encrypted(data) {
        return Err(CryptError::NotEncrypted);
    }
    let mut r = Reader::new(data.get(NONCE_AT..).unwrap_or_default());
    let nonce = Nonce(
        r.array()
            .map_err(|_| CryptError::Truncated { len: data.len() })?,
    );
    Ok((nonce, r.rest()))
}

/// `tox_pass_encrypt`: derives a key with a fresh salt and encrypts `plain` with it.
pub fn encrypt(
    passphrase: &[u8],
    plain: &[u8],
    rng: &mut dyn CryptoRng,
) -> Result<Vec<u8>, CryptError> {
    if plain.is_empty() {
        return Err(CryptError::EmptyPlaintext);
    }
    PassKey::derive_random(passphrase, rng)?.encrypt(plain, rng)
}

/// `tox_pass_decrypt`: derives the key from the passphrase and the salt in `data`, then
/// opens the box. The format is checked before the (costly) derivation.
pub fn decrypt(passphrase: &[u8], data: &[u8]) -> Result<Vec<u8>, CryptError> {
    split(data)?;
    let salt = salt(data).ok_or(CryptError::NotEncrypted)?;
    PassKey::derive(passphrase, salt)?.decrypt(data)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    fn rng() -> rand_chacha::ChaCha8Rng {
        rand_chacha::ChaCha8Rng::seed_from_u64(7)
    }

    /// Made by c-toxcore 0.2.18 (Debian's libtoxcore, `tox_pass_encrypt`) from the plaintext
    /// "rustox known answer" and the passphrase "correct horse": it pins the scrypt
    /// parameters and the layout to libsodium's.
    const C_TOXCORE_SEALED: &str = "746f784573617665529e06d3378ba0709756ef401c7b5f6ac3084f6123699e28e9ca78d213ed14b90a02d5afafcd39c5b949eb833b2aed4d69f457a5e8306ccca868be0d4172bd2bdf47385499e7e6fb9515c2320506065a681697caa9408afb6fbd86";

    #[test]
    fn decrypts_what_c_toxcore_encrypted() {
        let sealed = hex::decode(C_TOXCORE_SEALED).unwrap();
        assert_eq!(
            decrypt(b"correct horse", &sealed).unwrap(),
            b"rustox known answer"
        );
        assert_eq!(
            decrypt(b"correct horse!", &sealed),
            Err(CryptError::WrongPassphrase)
        );
    }

    #[test]
    fn round_trip_and_overhead_of_80_bytes() {
        let mut rng = rng();
        let plain = b"some save data".to_vec();
        let sealed = encrypt(b"hunter2", &plain, &mut rng).unwrap();
        assert_eq!(sealed.len(), plain.len() + ENCRYPTION_EXTRA_LENGTH);
        assert!(is_encrypted(&sealed));
        assert_eq!(decrypt(b"hunter2", &sealed).unwrap(), plain);
        // An empty passphrase is a passphrase.
        let sealed = encrypt(b"", &plain, &mut rng).unwrap();
        assert_eq!(decrypt(b"", &sealed).unwrap(), plain);
    }

    #[test]
    fn wrong_passphrase_is_a_typed_error() {
        let mut rng = rng();
        let sealed = encrypt(b"right", b"data", &mut rng).unwrap();
        assert_eq!(decrypt(b"wrong", &sealed), Err(CryptError::WrongPassphrase));
    }

    #[test]
    fn every_altered_byte_is_detected() {
        let mut rng = rng();
        let key = PassKey::derive_random(b"pass", &mut rng).unwrap();
        let sealed = key.encrypt(b"0123456789", &mut rng).unwrap();
        // The salt only feeds the derivation, which PassKey::decrypt skips; every byte after
        // it (nonce, MAC, ciphertext) is authenticated.
        for i in MAGIC.len() + SALT_SIZE..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x01;
            assert_eq!(
                key.decrypt(&bad),
                Err(CryptError::WrongPassphrase),
                "byte {i}"
            );
        }
        // Through the passphrase, an altered salt gives another key.
        let mut bad = sealed.clone();
        bad[MAGIC.len()] ^= 1;
        assert_eq!(decrypt(b"pass", &bad), Err(CryptError::WrongPassphrase));
        let mut bad = sealed;
        bad[0] = b'T';
        assert_eq!(key.decrypt(&bad), Err(CryptError::NotEncrypted));
    }

    #[test]
    fn truncated_and_empty_inputs_are_refused() {
        let mut rng = rng();
        let sealed = encrypt(b"p", b"x", &mut rng).unwrap();
        assert_eq!(sealed.len(), 81);
        for len in 0..sealed.len() {
            assert_eq!(
                decrypt(b"p", &sealed[..len]),
                Err(CryptError::Truncated { len }),
                "length {len}"
            );
        }
        assert_eq!(
            encrypt(b"p", b"", &mut rng),
            Err(CryptError::EmptyPlaintext)
        );
        assert_eq!(decrypt(b"p", &[0u8; 100]), Err(CryptError::NotEncrypted));
    }
}
