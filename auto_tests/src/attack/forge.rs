//! The datagrams of each attack, built with the project's public packet types so that what
//! reaches the victim is what a real attacker's client would send.

use rand::seq::SliceRandom;
use rand::Rng;
use rustox_core::onion::wire::announce::AnnounceRequest;
use rustox_core::onion::wire::RETURN_3;
use rustox_net_crypto::crypto::{
    sha512, CryptoRng, KeyPair, Nonce, PrecomputedKey, PublicKey, SymmetricKey,
};
use rustox_net_crypto::packets::{
    Cookie, CookieRequest, CookieRequestPayload, EncryptedCookie, Handshake, HandshakePayload,
    MAX_CRYPTO_PACKET_SIZE,
};

/// First bytes the malformed flood draws from: net_crypto's four kinds (0x18 cookie
/// request, 0x19 cookie response, 0x1a handshake, 0x1b data; docs/protocol.md §2.1), the DHT's
/// ping request/response and get-nodes/send-nodes (0x00, 0x01, 0x02, 0x04; §5), LAN
/// discovery (0x21), and the onion's 0x80–0x8f (§6.1).
pub fn flood_kinds() -> Vec<u8> {
    let mut kinds = vec![0x18, 0x19, 0x1a, 0x1b, 0x00, 0x01, 0x02, 0x04, 0x21];
    kinds.extend(0x80..=0x8f);
    kinds
}

/// `count` datagrams of random length 1..=1400 (`MAX_CRYPTO_PACKET_SIZE`), each a kind
/// byte from [`flood_kinds`] and random bytes after it.
pub fn malformed(count: usize, rng: &mut impl Rng) -> Vec<Vec<u8>> {
    let kinds = flood_kinds();
    (0..count)
        .map(|_| {
            let len = rng.gen_range(1..=MAX_CRYPTO_PACKET_SIZE);
            let mut p = vec![0u8; len];
            rng.fill(&mut p[..]);
            p[0] = *kinds.choose(rng).unwrap_or(&0x18);
            p
        })
        .collect()
}

/// The shared key an attacker identity and the victim box cookie requests and handshakes
/// with (`rustox recv` uses its long-term key as its DHT key too).
pub fn shared_key(attacker: &KeyPair, victim: &PublicKey) -> Option<PrecomputedKey> {
    PrecomputedKey::new(victim, &attacker.secret).ok()
}

/// A valid cookie request (docs/protocol.md §2.2) from `attacker` (as both its DHT and real
/// key) to `victim`, with a random nonce and `echo_id`.
pub fn cookie_request(
    attacker: &KeyPair,
    shared: &PrecomputedKey,
    echo_id: u64,
    rng: &mut dyn CryptoRng,
) -> Vec<u8> {
    CookieRequest::seal(
        attacker.public,
        shared,
        Nonce::random(rng),
        &CookieRequestPayload {
            sender_real_pk: attacker.public,
            echo_id,
        },
    )
    .to_bytes()
}

/// Attacker identities in the cookie-request pool.
pub const COOKIE_POOL_KEYS: usize = 32;
/// Requests per identity in the pool (different nonces and echo ids), so the victim sees
/// 256 distinct datagrams cycling, not one.
const COOKIE_POOL_NONCES: usize = 8;

/// The cookie-request flood's pool: [`COOKIE_POOL_KEYS`] identities, the first half sending
/// valid requests, the second half the same requests with one byte of the box flipped (they
/// cost the victim the key agreement and a failed MAC check, and earn no response).
pub fn cookie_request_pool(victim: &PublicKey, rng: &mut dyn CryptoRng) -> Vec<Vec<u8>> {
    let mut pool = Vec::with_capacity(COOKIE_POOL_KEYS * COOKIE_POOL_NONCES);
    for k in 0..COOKIE_POOL_KEYS {
        let keys = KeyPair::generate(rng);
        let Some(shared) = shared_key(&keys, victim) else {
            continue;
        };
        for _ in 0..COOKIE_POOL_NONCES {
            let mut p = cookie_request(&keys, &shared, rng.next_u64(), rng);
            if k >= COOKIE_POOL_KEYS / 2 {
                // Inside the box (after kind, key and nonce): the MAC no longer matches.
                if let Some(b) = p.last_mut() {
                    *b ^= 0x5a;
                }
            }
            pool.push(p);
        }
    }
    pool
}

/// A handshake (docs/protocol.md §2.2) from `attacker` to the victim under the victim's
/// `cookie`, announcing `session_pk` and `base_nonce`. The cookie the victim would answer
/// with (`other_cookie`) is sealed under a throwaway key: an attacker has no use for the
/// victim's handshake beyond its keys.
pub fn handshake(
    shared: &PrecomputedKey,
    cookie: EncryptedCookie,
    victim: &PublicKey,
    session_pk: PublicKey,
    base_nonce: Nonce,
    rng: &mut dyn CryptoRng,
) -> Vec<u8> {
    let other_cookie = Cookie {
        time: 0,
        real_pk: *victim,
        dht_pk: *victim,
    }
    .seal(&SymmetricKey::generate(rng), rng);
    Handshake::seal(
        cookie,
        shared,
        Nonce::random(rng),
        &HandshakePayload {
            base_nonce,
            session_pk,
            cookie_hash: sha512(&cookie.0),
            other_cookie,
        },
    )
    .to_bytes()
}

/// `count` onion announce requests (0x83, docs/protocol.md §6.3) to the victim as an onion
/// server, each from a fresh random key announcing itself with a random data key, sealed
/// to the victim's DHT key, with a random 177-byte return path appended as hop C would
/// (`ANNOUNCE_REQUEST_SIZE_RECV` = 354). Every one costs the victim a key agreement its
/// shared-key cache cannot save, and a response to the sender's address.
pub fn announce_requests(
    victim_dht: &PublicKey,
    count: usize,
    rng: &mut (impl CryptoRng + Rng),
) -> Vec<Vec<u8>> {
    (0..count)
        .filter_map(|_| {
            let sender = KeyPair::generate(rng);
            let key = shared_key(&sender, victim_dht)?;
            let request = AnnounceRequest {
                ping_id: [0; 32],
                searched_pk: sender.public,
                data_pk: PublicKey(rng.gen()),
                sendback: rng.gen(),
            };
            let mut p = request.seal(&sender.public, &key, &Nonce::random(rng));
            let mut ret = [0u8; RETURN_3];
            rng.fill(&mut ret[..]);
            p.extend_from_slice(&ret);
            Some(p)
        })
        .collect()
}
