//! Cookie response, packet kind 0x19 (docs/protocol.md §2.2, `COOKIE_RESPONSE_LENGTH`).
//!
//! | bytes | content |
//! |------:|---------|
//! | 1     | 0x19 |
//! | 24    | nonce (random) |
//! | 136   | `E(same DHT-shared key as the request, nonce)[ cookie 112 \| echo_id u64 opaque ]` (120 + 16 MAC) |
//!
//! Total 161.

use super::{expect_fixed, EncryptedCookie, PacketKind, ParseError, COOKIE_SIZE};
use crate::crypto::{Nonce, PrecomputedKey, MAC_SIZE, NONCE_SIZE};
use crate::wire::Reader;

/// Plaintext size: cookie 112 + echo id 8.
pub const COOKIE_RESPONSE_PLAINTEXT_SIZE: usize = COOKIE_SIZE + 8;
/// `COOKIE_RESPONSE_LENGTH` = 1 + 24 + 120 + 16.
pub const COOKIE_RESPONSE_SIZE: usize = 1 + NONCE_SIZE + COOKIE_RESPONSE_PLAINTEXT_SIZE + MAC_SIZE;
const BOX_SIZE: usize = COOKIE_RESPONSE_PLAINTEXT_SIZE + MAC_SIZE;

/// A cookie response on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieResponse {
    /// The box's nonce.
    pub nonce: Nonce,
    /// The box.
    pub encrypted: [u8; BOX_SIZE],
}

/// The plaintext of a cookie response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CookieResponsePayload {
    /// The cookie the requester must put in its handshake.
    pub cookie: EncryptedCookie,
    /// The echo id of the request being answered.
    pub echo_id: u64,
}

impl CookieResponse {
    /// Parses exactly 161 bytes starting with 0x19.
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        expect_fixed(bytes, PacketKind::CookieResponse, COOKIE_RESPONSE_SIZE)?;
        let mut r = Reader::after_kind(bytes);
        Ok(CookieResponse {
            nonce: Nonce(r.array()?),
            encrypted: r.array()?,
        })
    }

    /// The wire bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(COOKIE_RESPONSE_SIZE);
        out.push(PacketKind::CookieResponse as u8);
        out.extend_from_slice(&self.nonce.0);
        out.extend_from_slice(&self.encrypted);
        out
    }

    /// Builds a response with the request's shared key.
    pub fn seal(shared: &PrecomputedKey, nonce: Nonce, payload: &CookieResponsePayload) -> Self {
        let mut plain = [0u8; COOKIE_RESPONSE_PLAINTEXT_SIZE];
        plain[..COOKIE_SIZE].copy_from_slice(&payload.cookie.0);
        plain[COOKIE_SIZE..].copy_from_slice(&payload.echo_id.to_le_bytes());
        let mut encrypted = [0u8; BOX_SIZE];
        encrypted.copy_from_slice(&shared.encrypt(&nonce, &plain));
        CookieResponse { nonce, encrypted }
    }

    /// Opens the box with the shared key of our request.
    pub fn open(&self, shared: &PrecomputedKey) -> Result<CookieResponsePayload, ParseError> {
        let plain = shared.decrypt(&self.nonce, &self.encrypted)?;
        if plain.len() != COOKIE_RESPONSE_PLAINTEXT_SIZE {
            return Err(ParseError::WrongLength {
                expected: COOKIE_RESPONSE_PLAINTEXT_SIZE,
                actual: plain.len(),
            });
        }
        let mut r = Reader::new(&plain);
        Ok(CookieResponsePayload {
            cookie: EncryptedCookie(r.array()?),
            echo_id: r.opaque_u64()?,
        })
    }
}
