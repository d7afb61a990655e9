//! Timed authenticators (c-toxcore 0.2.18 `timed_auth.c`): `HMAC-SHA512-256(key, window ‖ data)`
//! with `window = floor(now / timeout)` in little-endian order, accepted for the current or the
//! previous window. Only the node that made one checks it, so only its properties matter:
//! unforgeable without the per-instance key, bound to `data`, stateless, and alive between one
//! and two `timeout`s.

use std::time::Duration;

use hmac::{Hmac, Mac};
use rustox_net_crypto::crypto::CryptoRng;
use rustox_net_crypto::Timestamp;
use sha2::Sha512;

/// `TIMED_AUTH_SIZE` (= `CRYPTO_HMAC_SIZE`).
pub const TIMED_AUTH_SIZE: usize = 32;

/// An authenticator.
pub type TimedAuth = [u8; TIMED_AUTH_SIZE];

/// The per-instance key (`new_hmac_key`).
pub struct TimedAuthKey([u8; 32]);

impl std::fmt::Debug for TimedAuthKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TimedAuthKey(…)")
    }
}

impl TimedAuthKey {
    /// A fresh random key.
    pub fn generate(rng: &mut dyn CryptoRng) -> Self {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        TimedAuthKey(key)
    }

    fn mac(&self, window: u64, data: &[u8]) -> Hmac<Sha512> {
        let mut mac =
            Hmac::<Sha512>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(&window.to_le_bytes());
        mac.update(data);
        mac
    }

    fn window(now: Timestamp, timeout: Duration) -> u64 {
        now.as_secs() / timeout.as_secs().max(1)
    }

    /// `generate_timed_auth`.
    pub fn generate_auth(&self, now: Timestamp, timeout: Duration, data: &[u8]) -> TimedAuth {
        let tag = self
            .mac(Self::window(now, timeout), data)
            .finalize()
            .into_bytes();
        let mut out = [0u8; TIMED_AUTH_SIZE];
        out.copy_from_slice(&tag[..TIMED_AUTH_SIZE]);
        out
    }

    /// `check_timed_auth`: made for `data` in this window or the previous one (constant-time).
    pub fn check(&self, now: Timestamp, timeout: Duration, data: &[u8], auth: &[u8]) -> bool {
        let w = Self::window(now, timeout);
        auth.len() == TIMED_AUTH_SIZE
            && [w, w.wrapping_sub(1)]
                .into_iter()
                .any(|w| self.mac(w, data).verify_truncated_left(auth).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn valid_for_its_window_and_the_next_only() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let key = TimedAuthKey::generate(&mut rng);
        let t = Duration::from_secs(60);
        let a = key.generate_auth(Timestamp::from_secs(130), t, b"data");
        assert!(key.check(Timestamp::from_secs(120), t, b"data", &a));
        assert!(key.check(Timestamp::from_secs(239), t, b"data", &a));
        assert!(!key.check(Timestamp::from_secs(240), t, b"data", &a));
        assert!(!key.check(Timestamp::from_secs(119), t, b"data", &a));
        assert!(!key.check(Timestamp::from_secs(130), t, b"datb", &a));
        assert!(!key.check(Timestamp::from_secs(130), t, b"data", &a[..31]));
        let other = TimedAuthKey::generate(&mut rng);
        assert!(!other.check(Timestamp::from_secs(130), t, b"data", &a));
    }
}
