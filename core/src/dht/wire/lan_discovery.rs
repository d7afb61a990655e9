//! LAN discovery (docs/protocol.md §5.7, c-toxcore `LAN_discovery.c`).
//!
//! | length | content                |
//! |--------|------------------------|
//! | 1      | 0x21                   |
//! | 32     | sender's DHT public key |
//!
//! Exactly 33 bytes, unencrypted. Sent to broadcast / `ff02::1` on ports 33445–33545.

use rustox_net_crypto::crypto::{PublicKey, PUBLIC_KEY_SIZE};

use super::{kind, WireError};

/// Size of a LAN discovery datagram.
pub const LAN_DISCOVERY_SIZE: usize = 1 + PUBLIC_KEY_SIZE;

/// Builds the 33-byte datagram.
pub fn encode(pk: &PublicKey) -> [u8; LAN_DISCOVERY_SIZE] {
    let mut out = [0u8; LAN_DISCOVERY_SIZE];
    out[0] = kind::LAN_DISCOVERY;
    out[1..].copy_from_slice(pk.as_bytes());
    out
}

/// Parses a datagram (exact length, kind 0x21).
pub fn decode(bytes: &[u8]) -> Result<PublicKey, WireError> {
    if bytes.first() != Some(&kind::LAN_DISCOVERY) {
        return Err(WireError::UnknownKind(bytes.first().copied().unwrap_or(0)));
    }
    if bytes.len() != LAN_DISCOVERY_SIZE {
        return Err(WireError::BadLength {
            kind: kind::LAN_DISCOVERY,
            len: bytes.len(),
        });
    }
    PublicKey::from_slice(bytes.get(1..).unwrap_or_default()).ok_or(WireError::BadPayload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn byte_table() {
        let b = encode(&PublicKey([5; 32]));
        assert_eq!(b[0], 0x21);
        assert_eq!(&b[1..], &[5; 32]);
        assert!(decode(&b[..32]).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(pk in any::<[u8; 32]>()) {
            prop_assert_eq!(decode(&encode(&PublicKey(pk))), Ok(PublicKey(pk)));
        }
    }
}
