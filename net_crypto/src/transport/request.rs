//! The request (NACK) payload, `PACKET_ID_REQUEST` = 1 (docs/protocol.md §2.7).
//!
//! The receiver walks its receive array from `buffer_start` to `buffer_end − 1` with a
//! counter `n` that starts at 1 and grows by one per slot. At an empty slot it emits `n` and
//! restarts; at a filled slot where `n == 255` it emits `0` and restarts. Each non-zero byte
//! is thus the distance from the previous missing packet (or from `buffer_start − 1`) to the
//! next one, and each `0` adds 255. The payload (id byte included) is cut at 1373 bytes.
//!
//! The sender walks its send array with the same counter until the bytes run out: a slot
//! whose counter equals the next byte is *named* (requested); a slot passed without being
//! named is implicitly acknowledged; whenever the counter reaches 255 on an unnamed slot
//! the next byte must be `0` (it is consumed) or the whole packet is rejected. Slots after
//! the last consumed byte are left alone.
//!
//! Example (§2.7): `buffer_start` = 100, only 100, 102 and 400 missing →
//! `[01][01][02][00][2b]`.
// Wire input: no indexing or arithmetic that could panic or wrap (see packets/mod.rs).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::TransportError;

/// `PACKET_ID_REQUEST` (docs/protocol.md §2.5 table).
pub(crate) const PACKET_ID_REQUEST: u8 = 1;

/// `MAX_CRYPTO_DATA_SIZE`: the largest payload, id byte included (docs/protocol.md §2.5).
pub(crate) const MAX_REQUEST_LEN: usize = 1373;

/// Encodes a request payload, id byte first, for a receive window of `len` slots starting
/// at `buffer_start`; `is_filled(offset)` says whether slot `buffer_start + offset` holds a
/// packet. Mirrors c-toxcore's `generate_request_packet` byte for byte, including the cut
/// at [`MAX_REQUEST_LEN`].
pub(crate) fn encode(len: u32, mut is_filled: impl FnMut(u32) -> bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    out.push(PACKET_ID_REQUEST);
    let mut n: u32 = 1;
    for offset in 0..len {
        if !is_filled(offset) {
            // n ≤ 255 here: a filled slot at n == 255 restarts the counter below.
            out.push(n as u8);
            n = 0;
        } else if n == 255 {
            out.push(0);
            n = 0;
        }
        if out.len() >= MAX_REQUEST_LEN {
            break;
        }
        n = n.saturating_add(1);
    }
    out
}

/// What the sender's walk says about one slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walk {
    /// The request names this slot: the receiver misses it.
    Named,
    /// The walk passed this slot without naming it: the receiver has it.
    Passed,
}

/// Decodes a request payload (id byte already stripped) against a send window of
/// `len` slots, calling `f(offset, walk)` for every slot the walk reaches, in order.
///
/// Returns [`TransportError::MalformedRequest`] when the counter reaches 255 on an unnamed
/// slot and the next byte is not 0. Callers that must leave state untouched on error run
/// it once with a no-op `f` to validate first ([`validate`]).
pub(crate) fn decode(
    payload: &[u8],
    len: u32,
    mut f: impl FnMut(u32, Walk),
) -> Result<(), TransportError> {
    let mut bytes = payload.iter().copied().peekable();
    let mut n: u32 = 1;
    for offset in 0..len {
        let Some(&next) = bytes.peek() else { break };
        if u32::from(next) == n {
            f(offset, Walk::Named);
            bytes.next();
            n = 0;
        } else {
            f(offset, Walk::Passed);
        }
        if n == 255 {
            n = 1;
            // "Reaching 255 on an unnamed slot requires a 0 byte" (docs/protocol.md §2.7).
            match bytes.next() {
                Some(0) => {}
                _ => return Err(TransportError::MalformedRequest),
            }
        } else {
            n = n.saturating_add(1);
        }
    }
    Ok(())
}

/// Checks a request payload without acting on it (so a refused input changes nothing).
pub(crate) fn validate(payload: &[u8], len: u32) -> Result<(), TransportError> {
    decode(payload, len, |_, _| {})
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn protocol_md_example_encodes_exactly() {
        // buffer_start = 100, window up to 450, only 100, 102 and 400 missing.
        let missing = [0u32, 2, 300];
        let req = encode(350, |o| !missing.contains(&o));
        assert_eq!(req, vec![0x01, 0x01, 0x02, 0x00, 0x2b]);
    }

    #[test]
    fn protocol_md_example_decodes_to_the_same_holes() {
        let mut named = Vec::new();
        let mut passed = 0;
        decode(&[0x01, 0x02, 0x00, 0x2b], 350, |o, w| match w {
            Walk::Named => named.push(o),
            Walk::Passed => passed += 1,
        })
        .unwrap();
        assert_eq!(named, vec![0, 2, 300]);
        // Everything up to the last named slot was passed, nothing after it.
        assert_eq!(passed, 301 - 3);
    }

    #[test]
    fn nothing_missing_is_just_the_id() {
        assert_eq!(encode(0, |_| true), vec![1]);
    }

    #[test]
    fn zero_bytes_skip_255_and_a_hole_at_255_is_named_by_255() {
        // A 0 passes 255 filled slots; then 7 names the 7th slot after them.
        let mut named = Vec::new();
        validate(&[0, 7], 300).unwrap();
        decode(&[0, 7], 300, |o, w| {
            if w == Walk::Named {
                named.push(o)
            }
        })
        .unwrap();
        assert_eq!(named, vec![255 + 6]);
        // A missing packet at distance exactly 255 is encoded as 255, not as 0.
        let req = encode(300, |o| o != 254);
        assert_eq!(req, vec![1, 255]);
        named.clear();
        decode(&req[1..], 300, |o, w| {
            if w == Walk::Named {
                named.push(o)
            }
        })
        .unwrap();
        assert_eq!(named, vec![254]);
        // The 255-rule can only fire on a byte the counter never matched, i.e. 0, so a
        // well-formed counter never rejects; a walk that runs out of window just stops.
        validate(&[200, 200, 200], 10).unwrap();
    }

    #[test]
    fn encoding_is_cut_at_1373_bytes() {
        // Every other slot missing: far more than 1372 holes.
        let req = encode(32768, |o| o % 2 == 1);
        assert_eq!(req.len(), MAX_REQUEST_LEN);
    }

    proptest::proptest! {
        /// Any hole pattern survives encode → decode: the walk names exactly the holes
        /// and passes exactly the filled slots before the last hole.
        #[test]
        fn encode_decode_round_trip(filled in proptest::collection::vec(proptest::bool::weighted(0.9), 0..3000)) {
            let len = filled.len() as u32;
            let req = encode(len, |o| filled[o as usize]);
            let mut named = Vec::new();
            let mut passed = Vec::new();
            decode(&req[1..], len, |o, w| match w {
                Walk::Named => named.push(o),
                Walk::Passed => passed.push(o),
            }).unwrap();
            let holes: Vec<u32> = (0..len).filter(|&o| !filled[o as usize]).collect();
            proptest::prop_assert_eq!(&named, &holes);
            for o in passed {
                proptest::prop_assert!(filled[o as usize]);
                proptest::prop_assert!(holes.last().is_some_and(|&h| o < h) || holes.is_empty());
            }
        }
    }
}
