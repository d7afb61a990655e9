//! The cookie (docs/protocol.md §2.2, `COOKIE_LENGTH`): proof that a peer asked us for a cookie
//! at its address recently, which lets a responder stay stateless until a handshake arrives.
//!
//! | bytes | content |
//! |------:|---------|
//! | 24    | nonce (random) |
//! | 88    | `E(cookie key, nonce)[ time u64 opaque (s) \| peer real pk 32 \| peer DHT pk 32 ]` (72 + 16 MAC) |
//!
//! Total 112. Only the instance that made a cookie can open it: the key is a random symmetric
//! key drawn at startup and never sent.

use super::ParseError;
use crate::crypto::{CryptoRng, Nonce, PublicKey, SymmetricKey, MAC_SIZE, NONCE_SIZE};
use crate::wire::Reader;

/// Size of the cookie plaintext: time 8 + two keys 32.
pub const COOKIE_PLAINTEXT_SIZE: usize = 8 + 32 + 32;
/// `COOKIE_LENGTH` = 24 + 72 + 16.
pub const COOKIE_SIZE: usize = NONCE_SIZE + COOKIE_PLAINTEXT_SIZE + MAC_SIZE;
/// `COOKIE_TIMEOUT` (net_crypto.c): a cookie older than this many seconds is refused.
pub const COOKIE_TIMEOUT_SECS: u64 = 15;

/// What a cookie holds once opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cookie {
    /// When its maker made it, in the maker's whole seconds (`mono_time_get`).
    pub time: u64,
    /// The long-term key of the peer the cookie was made for.
    pub real_pk: PublicKey,
    /// The DHT key of the peer the cookie was made for.
    pub dht_pk: PublicKey,
}

impl Cookie {
    /// The 72-byte plaintext.
    fn to_plaintext(self) -> [u8; COOKIE_PLAINTEXT_SIZE] {
        let mut out = [0u8; COOKIE_PLAINTEXT_SIZE];
        out[..8].copy_from_slice(&self.time.to_le_bytes());
        out[8..40].copy_from_slice(self.real_pk.as_bytes());
        out[40..].copy_from_slice(self.dht_pk.as_bytes());
        out
    }

    fn from_plaintext(bytes: &[u8]) -> Result<Self, ParseError> {
        if bytes.len() != COOKIE_PLAINTEXT_SIZE {
            return Err(ParseError::WrongLength {
                expected: COOKIE_PLAINTEXT_SIZE,
                actual: bytes.len(),
            });
        }
        let mut r = Reader::new(bytes);
        Ok(Cookie {
            time: r.opaque_u64()?,
            real_pk: PublicKey(r.array()?),
            dht_pk: PublicKey(r.array()?),
        })
    }

    /// Encrypts the cookie under our cookie key with a fresh random nonce.
    pub fn seal(&self, key: &SymmetricKey, rng: &mut dyn CryptoRng) -> EncryptedCookie {
        self.seal_with_nonce(key, &Nonce::random(rng))
    }

    /// Encrypts with a given nonce (deterministic; for tests and fuzzing).
    pub fn seal_with_nonce(&self, key: &SymmetricKey, nonce: &Nonce) -> EncryptedCookie {
        let boxed = key.encrypt(nonce, &self.to_plaintext());
        let mut out = [0u8; COOKIE_SIZE];
        out[..NONCE_SIZE].copy_from_slice(&nonce.0);
        out[NONCE_SIZE..].copy_from_slice(&boxed);
        EncryptedCookie(out)
    }

    /// c-toxcore's freshness rule: refused if `time + 15 < now` or `now < time` (seconds).
    pub fn is_fresh(&self, now_secs: u64) -> bool {
        now_secs >= self.time && self.time.saturating_add(COOKIE_TIMEOUT_SECS) >= now_secs
    }
}

/// A cookie as it travels: opaque to everyone but its maker.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EncryptedCookie(pub [u8; COOKIE_SIZE]);

impl EncryptedCookie {
    /// Reads a cookie from exactly 112 bytes.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, ParseError> {
        let array: [u8; COOKIE_SIZE] = bytes.try_into().map_err(|_| ParseError::WrongLength {
            expected: COOKIE_SIZE,
            actual: bytes.len(),
        })?;
        Ok(EncryptedCookie(array))
    }

    /// Opens the cookie with our cookie key. Freshness is the caller's check
    /// ([`Cookie::is_fresh`]), since it needs the time.
    pub fn open(&self, key: &SymmetricKey) -> Result<Cookie, ParseError> {
        let (nonce, boxed) = self.0.split_at(NONCE_SIZE);
        let nonce = Nonce::from_slice(nonce).ok_or(ParseError::WrongLength {
            expected: COOKIE_SIZE,
            actual: self.0.len(),
        })?;
        let plaintext = key.decrypt(&nonce, boxed)?;
        Cookie::from_plaintext(&plaintext)
    }
}

impl std::fmt::Debug for EncryptedCookie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EncryptedCookie(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_is_112_bytes_and_opens_only_with_its_key() {
        let key = SymmetricKey::from_bytes([1; 32]);
        let other = SymmetricKey::from_bytes([2; 32]);
        let cookie = Cookie {
            time: 77,
            real_pk: PublicKey([3; 32]),
            dht_pk: PublicKey([4; 32]),
        };
        let sealed = cookie.seal_with_nonce(&key, &Nonce([5; 24]));
        assert_eq!(sealed.0.len(), 112);
        assert_eq!(sealed.open(&key), Ok(cookie));
        assert!(matches!(sealed.open(&other), Err(ParseError::Crypto(_))));
    }

    #[test]
    fn freshness_window_is_fifteen_seconds_and_refuses_the_future() {
        let c = Cookie {
            time: 100,
            real_pk: PublicKey([0; 32]),
            dht_pk: PublicKey([0; 32]),
        };
        assert!(c.is_fresh(100));
        assert!(c.is_fresh(115));
        assert!(!c.is_fresh(116));
        assert!(!c.is_fresh(99));
        let late = Cookie {
            time: u64::MAX,
            ..c
        };
        assert!(late.is_fresh(u64::MAX));
    }
}
