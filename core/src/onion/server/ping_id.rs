//! Announce ping ids (docs/protocol.md §6.3; c-toxcore 0.2.18 `timed_auth.c`, used by
//! `onion_announce.c` with `PING_ID_TIMEOUT` = `ONION_ANNOUNCE_TIMEOUT` = 300 s).
//!
//! `ping_id = HMAC-SHA512-256(key, window ‖ requester pk ‖ packed source IP_Port)` with
//! `window = floor(now / 300 s)`, accepted for the current or the previous window: a ping id
//! lives 300 to 600 s. The key is random per instance and never leaves it. Clients treat the
//! value as opaque, so only its properties matter: unforgeable, bound to the requester's key
//! and to the address the request came from (the last relay of the requester's path), and
//! stateless — checking one costs an HMAC and no memory.
//!
//! Like c-toxcore the window is written in little-endian order; unlike 0.2.18, which hashes
//! its in-memory `IP_Port` struct, the address is hashed in its packed 19-byte form (as
//! c-toxcore does since v0.2.21).

use std::net::SocketAddr;
use std::time::Duration;

use hmac::{Hmac, Mac};
use rustox_net_crypto::crypto::{CryptoRng, PublicKey};
use rustox_net_crypto::Timestamp;
use sha2::Sha512;

use crate::onion::wire::announce::PingId;
use crate::onion::wire::ip_port::IpPort;

/// `PING_ID_TIMEOUT`: the length of one ping-id window.
pub const PING_ID_TIMEOUT: Duration = Duration::from_secs(300);

/// The per-instance HMAC key (`CRYPTO_HMAC_KEY_SIZE` = 32).
pub struct PingIdKey([u8; 32]);

impl std::fmt::Debug for PingIdKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PingIdKey(…)")
    }
}

impl PingIdKey {
    /// A fresh random key (`new_hmac_key`).
    pub fn generate(rng: &mut dyn CryptoRng) -> Self {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        PingIdKey(key)
    }

    fn mac(&self, window: u64, pk: &PublicKey, source: SocketAddr) -> Hmac<Sha512> {
        let mut mac =
            Hmac::<Sha512>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(&window.to_le_bytes());
        mac.update(pk.as_bytes());
        mac.update(&IpPort::Udp(source).encode());
        mac
    }

    fn window(now: Timestamp) -> u64 {
        now.as_secs() / PING_ID_TIMEOUT.as_secs()
    }

    /// The ping id for a request from `pk` via `source`, now (`generate_timed_auth`).
    pub fn ping_id(&self, now: Timestamp, pk: &PublicKey, source: SocketAddr) -> PingId {
        let tag = self
            .mac(Self::window(now), pk, source)
            .finalize()
            .into_bytes();
        let mut out = [0u8; 32];
        out.copy_from_slice(&tag[..32]);
        out
    }

    /// True if `ping_id` was made for `pk` and `source` in this window or the previous one
    /// (`check_timed_auth`); the comparison is constant-time.
    pub fn check(
        &self,
        now: Timestamp,
        pk: &PublicKey,
        source: SocketAddr,
        ping_id: &PingId,
    ) -> bool {
        let w = Self::window(now);
        [w, w.wrapping_sub(1)].into_iter().any(|w| {
            self.mac(w, pk, source)
                .verify_truncated_left(ping_id)
                .is_ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn valid_for_its_window_and_the_next_only() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let key = PingIdKey::generate(&mut rng);
        let pk = PublicKey([1; 32]);
        let src: SocketAddr = "1.2.3.4:5".parse().unwrap();
        let t = Timestamp::from_secs(1000);
        let id = key.ping_id(t, &pk, src);
        assert!(key.check(t, &pk, src, &id));
        assert!(key.check(Timestamp::from_secs(1199), &pk, src, &id));
        assert!(key.check(Timestamp::from_secs(1499), &pk, src, &id));
        assert!(!key.check(Timestamp::from_secs(1500), &pk, src, &id));
        assert!(
            !key.check(Timestamp::from_secs(899), &pk, src, &id),
            "not before it was made"
        );
        assert!(!key.check(t, &PublicKey([2; 32]), src, &id));
        assert!(!key.check(t, &pk, "1.2.3.4:6".parse().unwrap(), &id));
        assert!(!key.check(t, &pk, src, &[0; 32]));
        let other = PingIdKey::generate(&mut rng);
        assert!(!other.check(t, &pk, src, &id));
        // An IPv4-mapped source is the same source.
        assert!(key.check(t, &pk, "[::ffff:1.2.3.4]:5".parse().unwrap(), &id));
    }

    #[test]
    fn is_hmac_sha512_256() {
        // libsodium's crypto_auth is HMAC-SHA512 truncated to 32 bytes.
        let key = PingIdKey([7; 32]);
        let pk = PublicKey([1; 32]);
        let src: SocketAddr = "1.2.3.4:5".parse().unwrap();
        let mut msg = 3u64.to_le_bytes().to_vec();
        msg.extend_from_slice(&[1; 32]);
        msg.extend_from_slice(&IpPort::Udp(src).encode());
        let mut mac = Hmac::<Sha512>::new_from_slice(&[7; 32]).unwrap();
        mac.update(&msg);
        let full = mac.finalize().into_bytes();
        assert_eq!(key.ping_id(Timestamp::from_secs(900), &pk, src), full[..32]);
    }
}
