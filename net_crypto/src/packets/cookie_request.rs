//! Cookie request, packet kind 0x18 (docs/protocol.md §2.2, `COOKIE_REQUEST_LENGTH`).
//!
//! | bytes | content |
//! |------:|---------|
//! | 1     | 0x18 |
//! | 32    | sender's DHT public key |
//! | 24    | nonce (random) |
//! | 88    | `E(DHT-shared(sender DHT sk, receiver DHT pk), nonce)[ sender real pk 32 \| 32 zero bytes \| echo_id u64 opaque ]` (72 + 16 MAC) |
//!
//! Total 145. The 32 zero bytes are padding; c-toxcore does not check them, neither do we.

use super::{expect_fixed, PacketKind, ParseError};
use crate::crypto::{Nonce, PrecomputedKey, PublicKey, MAC_SIZE, NONCE_SIZE};
use crate::wire::Reader;

/// Plaintext size: real pk 32, padding 32, echo id 8.
pub const COOKIE_REQUEST_PLAINTEXT_SIZE: usize = 32 + 32 + 8;
/// `COOKIE_REQUEST_LENGTH` = 1 + 32 + 24 + 72 + 16.
pub const COOKIE_REQUEST_SIZE: usize =
    1 + 32 + NONCE_SIZE + COOKIE_REQUEST_PLAINTEXT_SIZE + MAC_SIZE;
const BOX_SIZE: usize = COOKIE_REQUEST_PLAINTEXT_SIZE + MAC_SIZE;

/// A cookie request on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieRequest {
    /// The sender's DHT key (in clear: the receiver needs it to open the box).
    pub sender_dht_pk: PublicKey,
    /// The box's nonce.
    pub nonce: Nonce,
    /// The box.
    pub encrypted: [u8; BOX_SIZE],
}

/// The plaintext of a cookie request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CookieRequestPayload {
    /// The sender's long-term key, which the cookie will hold.
    pub sender_real_pk: PublicKey,
    /// Echoed in the response so the requester can match it to its connection.
    pub echo_id: u64,
}

impl CookieRequest {
    /// Parses exactly 145 bytes starting with 0x18.
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        expect_fixed(bytes, PacketKind::CookieRequest, COOKIE_REQUEST_SIZE)?;
        let mut r = Reader::after_kind(bytes);
        Ok(CookieRequest {
            sender_dht_pk: PublicKey(r.array()?),
            nonce: Nonce(r.array()?),
            encrypted: r.array()?,
        })
    }

    /// The wire bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(COOKIE_REQUEST_SIZE);
        out.push(PacketKind::CookieRequest as u8);
        out.extend_from_slice(self.sender_dht_pk.as_bytes());
        out.extend_from_slice(&self.nonce.0);
        out.extend_from_slice(&self.encrypted);
        out
    }

    /// Builds a request; `shared` is beforenm(receiver DHT pk, sender DHT sk).
    pub fn seal(
        sender_dht_pk: PublicKey,
        shared: &PrecomputedKey,
        nonce: Nonce,
        payload: &CookieRequestPayload,
    ) -> Self {
        let mut plain = [0u8; COOKIE_REQUEST_PLAINTEXT_SIZE];
        plain[..32].copy_from_slice(payload.sender_real_pk.as_bytes());
        plain[64..].copy_from_slice(&payload.echo_id.to_le_bytes());
        let boxed = shared.encrypt(&nonce, &plain);
        let mut encrypted = [0u8; BOX_SIZE];
        encrypted.copy_from_slice(&boxed);
        CookieRequest {
            sender_dht_pk,
            nonce,
            encrypted,
        }
    }

    /// Opens the box; `shared` is beforenm(sender DHT pk, receiver DHT sk).
    pub fn open(&self, shared: &PrecomputedKey) -> Result<CookieRequestPayload, ParseError> {
        let plain = shared.decrypt(&self.nonce, &self.encrypted)?;
        if plain.len() != COOKIE_REQUEST_PLAINTEXT_SIZE {
            return Err(ParseError::WrongLength {
                expected: COOKIE_REQUEST_PLAINTEXT_SIZE,
                actual: plain.len(),
            });
        }
        let mut r = Reader::new(&plain);
        let sender_real_pk = PublicKey(r.array()?);
        let _padding: [u8; 32] = r.array()?;
        Ok(CookieRequestPayload {
            sender_real_pk,
            echo_id: r.opaque_u64()?,
        })
    }
}
