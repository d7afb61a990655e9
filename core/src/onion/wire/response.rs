//! Onion responses 0x8c, 0x8d, 0x8e (docs/protocol.md §6.2; c-toxcore 0.2.18 `onion.c`
//! `send_onion_response`, `handle_recv_3`, `handle_recv_2`, `handle_recv_1`).
//!
//! | kind | from → to | layout                                  |
//! |------|-----------|-----------------------------------------|
//! | 0x8c | D → C     | `[0x8c][sendback_C 177][response]`      |
//! | 0x8d | C → B     | `[0x8d][sendback_B 118][response]`      |
//! | 0x8e | B → A     | `[0x8e][sendback_A 59][response]`       |
//! | —    | A → client | `[response]`                           |
//!
//! The response is not encrypted by the relays (its own box is for the client); relays pass
//! only 0x84, 0x86 and 0x88 (c-toxcore 0.2.19+ `onion.c` `handle_recv_*`; 0.2.18 passed no
//! 0x88). Receipt checks, in c-toxcore's order: a length of at
//! most 1400 and more than `1 + RETURN_n`; the response kind; then the sendback opens (see
//! [`super::sendback::open`]).

use super::sendback::ReturnLevel;
use super::{kind, ONION_MAX_PACKET_SIZE};

/// Why an onion response was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    /// Not 0x8c, 0x8d or 0x8e.
    #[error("not an onion response: kind {0:#04x}")]
    UnknownKind(u8),
    /// Longer than 1400 bytes, or no response after the sendback.
    #[error("bad length {len} for onion response {kind:#04x}")]
    BadLength {
        /// The kind byte.
        kind: u8,
        /// The datagram's length.
        len: usize,
    },
    /// A response other than 0x84, 0x86 or 0x88.
    #[error("response kind {0:#04x} is not relayed")]
    ForbiddenResponse(u8),
}

/// The response kind that carries a sendback of `level` (C's → 0x8c, B's → 0x8d, A's → 0x8e).
pub const fn response_kind(level: ReturnLevel) -> u8 {
    match level {
        ReturnLevel::Three => kind::RESPONSE_3,
        ReturnLevel::Two => kind::RESPONSE_2,
        ReturnLevel::One => kind::RESPONSE_1,
    }
}

/// An onion response as a relay receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseLayer<'a> {
    /// The sendback it carries: ours (C's in 0x8c, B's in 0x8d, A's in 0x8e).
    pub level: ReturnLevel,
    /// The sendback bytes.
    pub sendback: &'a [u8],
    /// The response for the client (0x84 or 0x86).
    pub response: &'a [u8],
}

impl<'a> ResponseLayer<'a> {
    /// Splits a datagram, checking kind, length and response kind.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, ResponseError> {
        let k = *bytes.first().ok_or(ResponseError::UnknownKind(0))?;
        let level = match k {
            kind::RESPONSE_3 => ReturnLevel::Three,
            kind::RESPONSE_2 => ReturnLevel::Two,
            kind::RESPONSE_1 => ReturnLevel::One,
            other => return Err(ResponseError::UnknownKind(other)),
        };
        let len = bytes.len();
        if len > ONION_MAX_PACKET_SIZE || len <= level.size().saturating_add(1) {
            return Err(ResponseError::BadLength { kind: k, len });
        }
        let (sendback, response) = bytes
            .get(1..)
            .and_then(|b| b.split_at_checked(level.size()))
            .ok_or(ResponseError::BadLength { kind: k, len })?;
        match response.first() {
            Some(
                &kind::ANNOUNCE_RESPONSE | &kind::ANNOUNCE_RESPONSE_NEW | &kind::DATA_RESPONSE,
            ) => {}
            Some(&other) => return Err(ResponseError::ForbiddenResponse(other)),
            None => return Err(ResponseError::BadLength { kind: k, len }),
        }
        Ok(ResponseLayer {
            level,
            sendback,
            response,
        })
    }
}

/// `[kind(level)][sendback][response]`: what D sends to C (level Three), or what a relay sends
/// on after opening its sendback (with the inner one). `None` unless the sendback has the
/// level's size and the response is not empty and fits in 1400 bytes with it (for D that is
/// `ONION_RESPONSE_MAX_DATA_SIZE` = 1222, `send_onion_response`'s limit).
pub fn encode(level: ReturnLevel, sendback: &[u8], response: &[u8]) -> Option<Vec<u8>> {
    if sendback.len() != level.size()
        || response.is_empty()
        || sendback.len().saturating_add(response.len()) > ONION_MAX_PACKET_SIZE - 1
    {
        return None;
    }
    // At most ONION_MAX_PACKET_SIZE after the check above.
    let mut out = Vec::with_capacity(
        sendback
            .len()
            .saturating_add(response.len())
            .saturating_add(1),
    );
    out.push(response_kind(level));
    out.extend_from_slice(sendback);
    out.extend_from_slice(response);
    Some(out)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::onion::wire::RETURN_3;
    use proptest::prelude::*;

    #[test]
    fn layout_and_limits() {
        let sb = [5u8; RETURN_3];
        let out = encode(ReturnLevel::Three, &sb, &[0x84, 1, 2]).unwrap();
        assert_eq!(out.len(), 1 + 177 + 3);
        assert_eq!(out[0], 0x8c);
        let r = ResponseLayer::parse(&out).unwrap();
        assert_eq!(r.level, ReturnLevel::Three);
        assert_eq!(r.sendback, &sb[..]);
        assert_eq!(r.response, &[0x84, 1, 2]);
        assert!(encode(ReturnLevel::Three, &sb, &[]).is_none());
        assert!(encode(ReturnLevel::Two, &sb, &[0x84]).is_none());
        let max = encode(
            ReturnLevel::Three,
            &sb,
            &[0x86; crate::onion::wire::ONION_RESPONSE_MAX_DATA_SIZE],
        )
        .unwrap();
        assert_eq!(max.len(), 1400);
        assert!(encode(ReturnLevel::Three, &sb, &[0x86; 1223]).is_none());
        let mut bad = out.clone();
        bad[178] = 0x87;
        assert_eq!(
            ResponseLayer::parse(&bad),
            Err(ResponseError::ForbiddenResponse(0x87))
        );
        bad[178] = 0x88;
        assert!(ResponseLayer::parse(&bad).is_ok(), "NGC's 0x88 passes");
        assert_eq!(
            ResponseLayer::parse(&out[..178]),
            Err(ResponseError::BadLength {
                kind: 0x8c,
                len: 178
            })
        );
        let mut e = vec![0x8e];
        e.extend_from_slice(&[0; 59]);
        e.push(0x86);
        assert_eq!(ResponseLayer::parse(&e).unwrap().level, ReturnLevel::One);
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..1500)) {
            if let Ok(r) = ResponseLayer::parse(&bytes) {
                prop_assert_eq!(encode(r.level, r.sendback, r.response).unwrap(), bytes);
            }
        }
    }
}
