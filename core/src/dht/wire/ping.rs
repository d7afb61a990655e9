//! Ping request and response payloads (docs/protocol.md §5.2, c-toxcore `ping.c`).
//!
//! Plaintext inside the generic DHT box (see [`super::dht_packet`]):
//!
//! | length | content                                   |
//! |--------|-------------------------------------------|
//! | 1      | 0x00 request / 0x01 response              |
//! | 8      | ping id (opaque: only its creator reads it) |
//!
//! The type byte inside the box stops a request being replayed as a response: both
//! directions share one key. Whole datagram: 1 + 32 + 24 + 16 + 9 = 82 bytes.

use rustox_net_crypto::wire::Reader;

use super::WireError;

/// Plaintext size of a ping payload.
pub const PING_PLAIN_SIZE: usize = 1 + 8;
/// Whole datagram size (`DHT_PING_SIZE`); c-toxcore drops any other length.
pub const PING_PACKET_SIZE: usize = 82;

/// A ping payload; `response` says which direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ping {
    /// False for a request (0x00), true for a response (0x01).
    pub response: bool,
    /// The opaque id a response echoes.
    pub id: u64,
}

impl Ping {
    /// The 9-byte plaintext.
    pub fn encode(&self) -> [u8; PING_PLAIN_SIZE] {
        let mut out = [0u8; PING_PLAIN_SIZE];
        out[0] = u8::from(self.response);
        out[1..].copy_from_slice(&self.id.to_be_bytes());
        out
    }

    /// Parses the plaintext; `response` is the direction the outer kind byte announced, and
    /// the inner byte must agree with it.
    pub fn decode(plain: &[u8], response: bool) -> Result<Ping, WireError> {
        let mut r = Reader::new(plain);
        let kind = r.u8().map_err(|_| WireError::BadPayload)?;
        let id = r.u64_be().map_err(|_| WireError::BadPayload)?;
        r.expect_end().map_err(|_| WireError::BadPayload)?;
        if kind != u8::from(response) {
            return Err(WireError::BadPayload);
        }
        Ok(Ping { response, id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn inner_type_must_match_outer_kind() {
        let p = Ping {
            response: false,
            id: 5,
        }
        .encode();
        assert_eq!(p, [0, 0, 0, 0, 0, 0, 0, 0, 5]);
        assert_eq!(Ping::decode(&p, true), Err(WireError::BadPayload));
        assert!(Ping::decode(&p, false).is_ok());
        assert_eq!(Ping::decode(&p[..8], false), Err(WireError::BadPayload));
    }

    proptest! {
        #[test]
        fn round_trip(response in any::<bool>(), id in any::<u64>()) {
            let p = Ping { response, id };
            prop_assert_eq!(Ping::decode(&p.encode(), response), Ok(p));
        }
    }
}
