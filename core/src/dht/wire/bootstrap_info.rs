//! Bootstrap-node info (docs/protocol.md §5.8, c-toxcore `other/bootstrap_node_packets.c`).
//!
//! Request: `[0xf0]` followed by 77 bytes of anything, exactly 78 bytes
//! (`INFO_REQUEST_PACKET_LENGTH`); the padding keeps the request as large as the reply
//! usually is, so the reply amplifies little.
//!
//! Reply:
//!
//! | length | content                                             |
//! |--------|-----------------------------------------------------|
//! | 1      | 0xf0                                                |
//! | 4      | version, big-endian                                 |
//! | ≤ 256  | message of the day (`MAX_MOTD_LENGTH`), tox-bootstrapd includes the final NUL |

use rustox_net_crypto::wire::Reader;

use super::{kind, WireError};

/// Exact request size (`INFO_REQUEST_PACKET_LENGTH`).
pub const INFO_REQUEST_SIZE: usize = 78;
/// `MAX_MOTD_LENGTH`.
pub const MAX_MOTD_LENGTH: usize = 256;

/// A 78-byte request.
pub fn encode_request() -> [u8; INFO_REQUEST_SIZE] {
    let mut out = [0u8; INFO_REQUEST_SIZE];
    out[0] = kind::BOOTSTRAP_INFO;
    out
}

/// True if `bytes` is a well-formed request.
pub fn is_request(bytes: &[u8]) -> bool {
    bytes.len() == INFO_REQUEST_SIZE && bytes.first() == Some(&kind::BOOTSTRAP_INFO)
}

/// The reply; a MOTD longer than 256 bytes is cut.
pub fn encode_reply(version: u32, motd: &[u8]) -> Vec<u8> {
    let motd = motd.get(..MAX_MOTD_LENGTH).unwrap_or(motd);
    let mut out = Vec::with_capacity(motd.len().saturating_add(5));
    out.push(kind::BOOTSTRAP_INFO);
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(motd);
    out
}

/// Parses a reply into (version, motd).
pub fn decode_reply(bytes: &[u8]) -> Result<(u32, &[u8]), WireError> {
    if bytes.first() != Some(&kind::BOOTSTRAP_INFO)
        || bytes.len() < 5
        || bytes.len() > 5 + MAX_MOTD_LENGTH
    {
        return Err(WireError::BadLength {
            kind: kind::BOOTSTRAP_INFO,
            len: bytes.len(),
        });
    }
    let mut r = Reader::after_kind(bytes);
    let version = r.u32_be().map_err(|_| WireError::BadLength {
        kind: kind::BOOTSTRAP_INFO,
        len: bytes.len(),
    })?;
    Ok((version, r.rest()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn request_must_be_exactly_78_bytes() {
        assert!(is_request(&encode_request()));
        assert!(!is_request(&encode_request()[..77]));
        let mut long = encode_request().to_vec();
        long.push(0);
        assert!(!is_request(&long));
    }

    #[test]
    fn reply_byte_table() {
        assert_eq!(
            encode_reply(0x01020304, b"hi\0"),
            vec![0xf0, 1, 2, 3, 4, b'h', b'i', 0]
        );
        assert_eq!(encode_reply(1, &[b'x'; 300]).len(), 5 + 256);
    }

    proptest! {
        #[test]
        fn reply_round_trip(version in any::<u32>(), motd in proptest::collection::vec(any::<u8>(), 0..=256)) {
            let r = encode_reply(version, &motd);
            prop_assert_eq!(decode_reply(&r), Ok((version, motd.as_slice())));
        }
    }
}
