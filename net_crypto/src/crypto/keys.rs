//! Curve25519 key pairs (docs/protocol.md §1: `crypto_box_keypair`).

use std::fmt;

use super::CryptoRng;

/// Size of a Curve25519 public key.
pub const PUBLIC_KEY_SIZE: usize = 32;
/// Size of a Curve25519 secret key.
pub const SECRET_KEY_SIZE: usize = 32;

/// A Curve25519 public key as it travels on the wire.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PublicKey(pub [u8; PUBLIC_KEY_SIZE]);

impl PublicKey {
    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; PUBLIC_KEY_SIZE] {
        &self.0
    }

    /// Reads a key from the first 32 bytes of `bytes`, if there are that many.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes
            .get(..PUBLIC_KEY_SIZE)
            .map(|b| PublicKey(b.try_into().expect("32-byte slice")))
    }

    /// c-toxcore's `public_key_valid`: only the top bit of the last byte is checked.
    pub fn is_valid(&self) -> bool {
        self.0[31] < 128
    }

    /// Upper-case hex, as Tox clients print keys.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02X}")).collect()
    }

    /// Parses 64 hex digits (either case).
    pub fn from_hex(hex: &str) -> Option<Self> {
        let hex = hex.trim();
        if hex.len() != 2 * PUBLIC_KEY_SIZE || !hex.is_ascii() {
            return None;
        }
        let mut out = [0u8; PUBLIC_KEY_SIZE];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(PublicKey(out))
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Eight hex digits identify a key in logs without flooding them.
        write!(f, "PublicKey({}…)", &self.to_hex()[..8])
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// A Curve25519 secret key. Zeroed on drop by the underlying crate; never printed.
#[derive(Clone)]
pub struct SecretKey(pub(crate) crypto_box::SecretKey);

impl SecretKey {
    /// A key from its raw bytes (c-toxcore's `load_secret_key`).
    pub fn from_bytes(bytes: [u8; SECRET_KEY_SIZE]) -> Self {
        SecretKey(crypto_box::SecretKey::from(bytes))
    }

    /// The raw bytes, for savedata and key files.
    pub fn to_bytes(&self) -> [u8; SECRET_KEY_SIZE] {
        self.0.to_bytes()
    }

    /// The matching public key (`crypto_scalarmult_base`).
    pub fn public_key(&self) -> PublicKey {
        PublicKey(*self.0.public_key().as_bytes())
    }
}

/// crypto_box's `SecretKey`, our only field, zeroes its scalar in its `Drop`
/// (crypto_box 0.9 `src/secret_key.rs`).
impl zeroize::ZeroizeOnDrop for SecretKey {}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(…)")
    }
}

/// A public/secret key pair.
#[derive(Clone, Debug)]
pub struct KeyPair {
    /// The public half.
    pub public: PublicKey,
    /// The secret half.
    pub secret: SecretKey,
}

impl KeyPair {
    /// A fresh random key pair from the injected generator.
    pub fn generate(rng: &mut dyn CryptoRng) -> Self {
        let mut bytes = [0u8; SECRET_KEY_SIZE];
        rng.fill_bytes(&mut bytes);
        Self::from_secret(SecretKey::from_bytes(bytes))
    }

    /// The pair for a known secret key.
    pub fn from_secret(secret: SecretKey) -> Self {
        KeyPair {
            public: secret.public_key(),
            secret,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_rejects() {
        let pk = PublicKey([0xAB; 32]);
        assert_eq!(PublicKey::from_hex(&pk.to_hex()), Some(pk));
        assert_eq!(PublicKey::from_hex(&pk.to_hex().to_lowercase()), Some(pk));
        assert_eq!(PublicKey::from_hex("abc"), None);
        assert_eq!(PublicKey::from_hex(&"zz".repeat(32)), None);
        assert_eq!(PublicKey::from_hex(&"é".repeat(32)), None);
    }

    #[test]
    fn validity_checks_only_the_top_bit() {
        let mut pk = PublicKey([0; 32]);
        assert!(pk.is_valid());
        pk.0[31] = 0x80;
        assert!(!pk.is_valid());
    }
}
