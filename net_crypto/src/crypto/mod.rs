//! Tox's crypto primitives (docs/protocol.md §1): X25519 (`x25519-dalek`), SHA-2 (`sha2`), and an
//! XSalsa20-Poly1305 of our own that is twice as fast as RustCrypto's (`xsalsa20.rs`,
//! `poly1305.rs` say why), checked against libsodium and against those crates. The check
//! against libsodium itself, loaded into a test (`ffi/tests/libsodium_cipher.rs`: every length
//! across the keystream's group edges, tampered boxes, key agreement, small-order keys), runs
//! in CI on both the SIMD and the scalar lanes (`lanes.rs`).
//!
//! Every box on the Tox wire is `[Poly1305 tag 16][ciphertext]` — libsodium's "easy" layout,
//! which is also what `crypto_box`/`xsalsa20poly1305` produce. The known-answer test in
//! `tests/crypto_kat.rs` pins that layout against vectors made by libsodium itself, so a crate
//! upgrade cannot change it silently.

mod keys;
mod lanes;
mod nonce;
mod poly1305;
mod precomputed;
mod secretbox;
mod xsalsa20;

pub use keys::{KeyPair, PublicKey, SecretKey, PUBLIC_KEY_SIZE, SECRET_KEY_SIZE};
pub use lanes::CIPHER_LANES;
pub use nonce::{Nonce, NONCE_SIZE};
pub use precomputed::{
    LowOrderPublicKey, PrecomputedKey, SymmetricKey, MAC_SIZE, SMALL_ORDER_POINTS,
    SYMMETRIC_KEY_SIZE,
};

use sha2::{Digest, Sha256, Sha512};

/// The source of randomness every core takes by injection (docs/design.md, principle 1): the OS
/// generator in production, a seeded ChaCha in tests and the simulator.
pub trait CryptoRng: rand_core::RngCore + rand_core::CryptoRng {}
impl<T: rand_core::RngCore + rand_core::CryptoRng> CryptoRng for T {}

/// Why a box could not be opened or sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CryptoError {
    /// The MAC did not verify: wrong key, wrong nonce, or tampered bytes.
    #[error("authentication failed")]
    AuthenticationFailed,
    /// c-toxcore refuses empty plaintexts and ciphertexts of 16 bytes or fewer (docs/protocol.md §1).
    #[error("box too short")]
    TooShort,
}

/// SHA-256 (`crypto_hash_sha256`).
pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// SHA-512 (`crypto_hash_sha512`), used for the cookie hash inside the handshake.
pub fn sha512(data: &[u8]) -> [u8; 64] {
    Sha512::digest(data).into()
}
