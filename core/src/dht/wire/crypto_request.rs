//! The DHT request packet 0x20 and the NAT ping it carries (docs/protocol.md §5.5, §5.6;
//! c-toxcore `create_request` / `handle_request` in `DHT.c`).
//!
//! | length  | content                                                  |
//! |---------|----------------------------------------------------------|
//! | 1       | 0x20                                                     |
//! | 32      | receiver's DHT public key (in clear, for routing)        |
//! | 32      | sender's DHT public key                                  |
//! | 24      | nonce                                                    |
//! | 16 + n  | `E(receiver pk, sender sk, nonce)[request_id u8, data]`  |
//!
//! Created at most 1024 bytes (`MAX_CRYPTO_REQUEST_SIZE`); accepted up to 1024 + 16 as
//! c-toxcore's `cryptopacket_handle` does. A node that holds the receiver in its close list
//! forwards the datagram unchanged.
//!
//! NAT ping data (request_id 254): `[0 request | 1 response][ping_id 8, opaque]`.

use rustox_net_crypto::crypto::{
    Nonce, PrecomputedKey, PublicKey, MAC_SIZE, NONCE_SIZE, PUBLIC_KEY_SIZE,
};

use rustox_net_crypto::wire::Reader;

use super::{kind, read_sender_nonce_box, WireError};

/// `MAX_CRYPTO_REQUEST_SIZE`: the largest request we create.
pub const MAX_CRYPTO_REQUEST_SIZE: usize = 1024;
/// The largest request c-toxcore accepts (`MAX_CRYPTO_REQUEST_SIZE + CRYPTO_MAC_SIZE`).
pub const MAX_ACCEPTED_REQUEST_SIZE: usize = MAX_CRYPTO_REQUEST_SIZE + MAC_SIZE;
/// Bytes before the box.
pub const REQUEST_HEADER_SIZE: usize = 1 + 2 * PUBLIC_KEY_SIZE + NONCE_SIZE;
/// request_id of a NAT ping (`CRYPTO_PACKET_NAT_PING`).
pub const CRYPTO_PACKET_NAT_PING: u8 = 254;
/// request_id of a DHT public key packet (`CRYPTO_PACKET_DHTPK`, §6.4).
pub const CRYPTO_PACKET_DHTPK: u8 = 156;
/// request_id of a friend request (`CRYPTO_PACKET_FRIEND_REQ`).
pub const CRYPTO_PACKET_FRIEND_REQ: u8 = 32;

/// A 0x20 packet before decryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestEnvelope<'a> {
    /// Whom it is for.
    pub receiver: PublicKey,
    /// Who sent it.
    pub sender: PublicKey,
    /// Nonce in clear.
    pub nonce: Nonce,
    /// `[MAC][ciphertext]`.
    pub boxed: &'a [u8],
}

impl<'a> RequestEnvelope<'a> {
    /// Splits a datagram, checking c-toxcore's bounds.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, WireError> {
        if bytes.first() != Some(&kind::CRYPTO_REQUEST) {
            return Err(WireError::UnknownKind(bytes.first().copied().unwrap_or(0)));
        }
        if bytes.len() <= REQUEST_HEADER_SIZE + MAC_SIZE || bytes.len() > MAX_ACCEPTED_REQUEST_SIZE
        {
            return Err(WireError::BadLength {
                kind: kind::CRYPTO_REQUEST,
                len: bytes.len(),
            });
        }
        let mut r = Reader::after_kind(bytes);
        let receiver = PublicKey(r.array().map_err(|_| WireError::BadPayload)?);
        let (sender, nonce, boxed) = read_sender_nonce_box(r)?;
        Ok(RequestEnvelope {
            receiver,
            sender,
            nonce,
            boxed,
        })
    }

    /// Opens the box; returns `(request_id, data)`.
    pub fn open(&self, key: &PrecomputedKey) -> Result<(u8, Vec<u8>), WireError> {
        let mut plain = key
            .decrypt(&self.nonce, self.boxed)
            .map_err(|_| WireError::Decrypt)?;
        if plain.is_empty() {
            return Err(WireError::BadPayload);
        }
        let id = plain.remove(0);
        Ok((id, plain))
    }
}

/// Builds a 0x20 packet; `None` if it would exceed 1024 bytes.
pub fn seal(
    receiver: &PublicKey,
    sender: &PublicKey,
    key: &PrecomputedKey,
    nonce: &Nonce,
    request_id: u8,
    data: &[u8],
) -> Option<Vec<u8>> {
    if data.len() > MAX_CRYPTO_REQUEST_SIZE - (REQUEST_HEADER_SIZE + MAC_SIZE + 1) {
        return None;
    }
    // `data` is at most 918 bytes here, so neither sum below can overflow.
    let mut plain = Vec::with_capacity(data.len().saturating_add(1));
    plain.push(request_id);
    plain.extend_from_slice(data);
    let boxed = key.encrypt(nonce, &plain);
    let mut out = Vec::with_capacity(REQUEST_HEADER_SIZE.saturating_add(boxed.len()));
    out.push(kind::CRYPTO_REQUEST);
    out.extend_from_slice(receiver.as_bytes());
    out.extend_from_slice(sender.as_bytes());
    out.extend_from_slice(&nonce.0);
    out.extend_from_slice(&boxed);
    Some(out)
}

/// A NAT ping (request_id 254).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NatPing {
    /// False: request (`NAT_PING_REQUEST` 0); true: response (`NAT_PING_RESPONSE` 1).
    pub response: bool,
    /// Opaque id.
    pub id: u64,
}

impl NatPing {
    /// The 9-byte data after the request id.
    pub fn encode(&self) -> [u8; 9] {
        let mut out = [0u8; 9];
        out[0] = u8::from(self.response);
        out[1..].copy_from_slice(&self.id.to_be_bytes());
        out
    }

    /// Parses the data (c-toxcore requires exactly 9 bytes and type 0 or 1).
    pub fn decode(data: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(data);
        let kind = r.u8().map_err(|_| WireError::BadPayload)?;
        let id = r.u64_be().map_err(|_| WireError::BadPayload)?;
        r.expect_end().map_err(|_| WireError::BadPayload)?;
        if kind > 1 {
            return Err(WireError::BadPayload);
        }
        Ok(NatPing {
            response: kind == 1,
            id,
        })
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand_chacha::rand_core::SeedableRng;
    use rustox_net_crypto::crypto::KeyPair;

    #[test]
    fn layout_and_size_limit() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let (a, b) = (KeyPair::generate(&mut rng), KeyPair::generate(&mut rng));
        let k = PrecomputedKey::new(&b.public, &a.secret).unwrap();
        let ping = NatPing {
            response: false,
            id: 77,
        };
        let p = seal(
            &b.public,
            &a.public,
            &k,
            &Nonce([4; 24]),
            CRYPTO_PACKET_NAT_PING,
            &ping.encode(),
        )
        .unwrap();
        assert_eq!(p.len(), 1 + 32 + 32 + 24 + 16 + 10);
        assert_eq!(p[0], 0x20);
        assert_eq!(&p[1..33], b.public.as_bytes());
        assert_eq!(&p[33..65], a.public.as_bytes());
        let env = RequestEnvelope::parse(&p).unwrap();
        let kb = PrecomputedKey::new(&a.public, &b.secret).unwrap();
        let (id, data) = env.open(&kb).unwrap();
        assert_eq!(id, 254);
        assert_eq!(NatPing::decode(&data), Ok(ping));
        let largest = MAX_CRYPTO_REQUEST_SIZE - REQUEST_HEADER_SIZE - MAC_SIZE - 1;
        assert_eq!(
            seal(
                &b.public,
                &a.public,
                &k,
                &Nonce([0; 24]),
                1,
                &vec![0; largest]
            )
            .unwrap()
            .len(),
            1024
        );
        assert!(seal(
            &b.public,
            &a.public,
            &k,
            &Nonce([0; 24]),
            1,
            &vec![0; largest + 1]
        )
        .is_none());
        assert!(RequestEnvelope::parse(&vec![0x20; 1041]).is_err());
        assert!(RequestEnvelope::parse(&vec![0x20; 1040]).is_ok());
        assert!(RequestEnvelope::parse(&[0x20; 105]).is_err());
    }

    proptest! {
        #[test]
        fn nat_ping_round_trip(response in any::<bool>(), id in any::<u64>()) {
            let p = NatPing { response, id };
            prop_assert_eq!(NatPing::decode(&p.encode()), Ok(p));
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..1100)) {
            let _ = RequestEnvelope::parse(&bytes);
        }
    }
}
