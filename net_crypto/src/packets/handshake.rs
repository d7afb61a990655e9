//! Crypto handshake, packet kind 0x1a (docs/protocol.md §2.2, `HANDSHAKE_PACKET_LENGTH`).
//!
//! | bytes | content |
//! |------:|---------|
//! | 1     | 0x1a |
//! | 112   | cookie (made by the receiver, obtained from it) |
//! | 24    | nonce (random) |
//! | 248   | `E(receiver real pk, sender real sk, nonce)[ base_nonce 24 \| sender session pk 32 \| sha512(cookie above) 64 \| other_cookie 112 ]` (232 + 16 MAC) |
//!
//! Total 385. `base_nonce` is the nonce the *sender* will encrypt its data packets with (the
//! receiver stores it as its receive nonce; docs/protocol.md §2.12 on the spec's wording).
//! `other_cookie` is a cookie made by the sender for the receiver, so the receiver can answer
//! with its own handshake without a cookie round trip.

use super::{expect_fixed, EncryptedCookie, PacketKind, ParseError, COOKIE_SIZE};
use crate::crypto::{Nonce, PrecomputedKey, PublicKey, MAC_SIZE, NONCE_SIZE};
use crate::wire::Reader;

/// Plaintext size: 24 + 32 + 64 + 112.
pub const HANDSHAKE_PLAINTEXT_SIZE: usize = NONCE_SIZE + 32 + 64 + COOKIE_SIZE;
/// `HANDSHAKE_PACKET_LENGTH` = 1 + 112 + 24 + 232 + 16.
pub const HANDSHAKE_SIZE: usize =
    1 + COOKIE_SIZE + NONCE_SIZE + HANDSHAKE_PLAINTEXT_SIZE + MAC_SIZE;
const BOX_SIZE: usize = HANDSHAKE_PLAINTEXT_SIZE + MAC_SIZE;

/// A handshake on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    /// The receiver's cookie, in clear (only the receiver can open it).
    pub cookie: EncryptedCookie,
    /// The box's nonce.
    pub nonce: Nonce,
    /// The box.
    pub encrypted: [u8; BOX_SIZE],
}

/// The plaintext of a handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandshakePayload {
    /// The nonce the sender starts its data packets with.
    pub base_nonce: Nonce,
    /// The sender's per-session public key.
    pub session_pk: PublicKey,
    /// SHA-512 of the outer cookie: binds the box to that cookie.
    pub cookie_hash: [u8; 64],
    /// A cookie for the receiver's own handshake.
    pub other_cookie: EncryptedCookie,
}

impl Handshake {
    /// Parses exactly 385 bytes starting with 0x1a.
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        expect_fixed(bytes, PacketKind::Handshake, HANDSHAKE_SIZE)?;
        let mut r = Reader::after_kind(bytes);
        Ok(Handshake {
            cookie: EncryptedCookie(r.array()?),
            nonce: Nonce(r.array()?),
            encrypted: r.array()?,
        })
    }

    /// The wire bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HANDSHAKE_SIZE);
        out.push(PacketKind::Handshake as u8);
        out.extend_from_slice(&self.cookie.0);
        out.extend_from_slice(&self.nonce.0);
        out.extend_from_slice(&self.encrypted);
        out
    }

    /// Builds a handshake; `shared` is beforenm(receiver real pk, sender real sk).
    pub fn seal(
        cookie: EncryptedCookie,
        shared: &PrecomputedKey,
        nonce: Nonce,
        payload: &HandshakePayload,
    ) -> Self {
        let mut plain = [0u8; HANDSHAKE_PLAINTEXT_SIZE];
        plain[..24].copy_from_slice(&payload.base_nonce.0);
        plain[24..56].copy_from_slice(payload.session_pk.as_bytes());
        plain[56..120].copy_from_slice(&payload.cookie_hash);
        plain[120..].copy_from_slice(&payload.other_cookie.0);
        let mut encrypted = [0u8; BOX_SIZE];
        encrypted.copy_from_slice(&shared.encrypt(&nonce, &plain));
        Handshake {
            cookie,
            nonce,
            encrypted,
        }
    }

    /// Opens the box; `shared` is beforenm(sender real pk, receiver real sk). Checking the
    /// cookie hash is the caller's job ([`HandshakePayload::cookie_hash`]).
    pub fn open(&self, shared: &PrecomputedKey) -> Result<HandshakePayload, ParseError> {
        let plain = shared.decrypt(&self.nonce, &self.encrypted)?;
        if plain.len() != HANDSHAKE_PLAINTEXT_SIZE {
            return Err(ParseError::WrongLength {
                expected: HANDSHAKE_PLAINTEXT_SIZE,
                actual: plain.len(),
            });
        }
        let mut r = Reader::new(&plain);
        Ok(HandshakePayload {
            base_nonce: Nonce(r.array()?),
            session_pk: PublicKey(r.array()?),
            cookie_hash: r.array()?,
            other_cookie: EncryptedCookie(r.array()?),
        })
    }
}
