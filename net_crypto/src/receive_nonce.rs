//! The receive side of the data-packet nonce (docs/protocol.md §2.4) and its anti-replay window.
//!
//! A data packet carries only the last two bytes of the sender's nonce. The receiver keeps a
//! base (`recv_nonce`), rebuilds the full nonce as `base + (low − base.low) mod 2^16`, and after
//! a successful decryption with a difference above 43690 moves the base up by 21845. That is
//! c-toxcore's scheme; it makes any nonce below the base fail the MAC (its difference wraps).
//!
//! c-toxcore has no replay protection: a captured data packet decrypts again for as long as
//! its nonce lies within 65535 of the base, so a replayed lossy packet is delivered twice and
//! a replayed request packet re-triggers resends. We number every accepted nonce by its
//! distance from the handshake's base nonce and keep a bitmap of the last [`REPLAY_WINDOW`]
//! numbers below the highest one accepted (the IPsec/DTLS sliding window): a number seen
//! before is a replay, a number older than the window is stale. Neither changes the wire.
// Wire input: no indexing or arithmetic that could panic or wrap (see packets/mod.rs).
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::crypto::Nonce;

/// `DATA_NUM_THRESHOLD` (net_crypto.c): how far the base moves at a time.
pub const DATA_NUM_THRESHOLD: u32 = 21845;
/// A difference above `2 × DATA_NUM_THRESHOLD` moves the base (docs/protocol.md §2.4).
const BASE_MOVE_DIFF: u16 = 2 * DATA_NUM_THRESHOLD as u16;
/// Packets accepted out of order up to this far below the newest one. 2048 packets is more
/// reordering than a UDP path produces in practice (about 2.8 MB of 1400-byte packets); the
/// bitmap costs 256 bytes per connection.
pub const REPLAY_WINDOW: u64 = 2048;
const WORDS: usize = (REPLAY_WINDOW / 64) as usize;

/// A received nonce rebuilt from its low 16 bits, not yet accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NonceCandidate {
    /// The full nonce to decrypt with.
    pub nonce: Nonce,
    /// Its distance from the handshake's base nonce.
    index: u64,
    /// Its distance from the current base (the §2.4 `diff`).
    diff: u16,
}

/// Why a nonce that decrypted is still refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplayError {
    /// This exact nonce was accepted before.
    Replayed,
    /// Older than the window: we cannot tell, so we refuse.
    Stale,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct ReceiveNonce {
    base: Nonce,
    base_index: u64,
    highest: Option<u64>,
    /// Bit `i mod REPLAY_WINDOW` is set when number `i` (within the window) was accepted.
    seen: [u64; WORDS],
}

impl ReceiveNonce {
    /// Starts from the base nonce the peer announced in its handshake.
    pub(crate) fn new(base: Nonce) -> Self {
        ReceiveNonce {
            base,
            base_index: 0,
            highest: None,
            seen: [0; WORDS],
        }
    }

    /// Rebuilds the full nonce for a packet carrying `low` (steps 1–2 of §2.4).
    pub(crate) fn candidate(&self, low: u16) -> NonceCandidate {
        let diff = low.wrapping_sub(self.base.low_u16());
        let mut nonce = self.base;
        nonce.add(u32::from(diff));
        NonceCandidate {
            nonce,
            index: self.base_index.saturating_add(u64::from(diff)),
            diff,
        }
    }

    /// Whether a candidate that decrypted may be accepted. Changes nothing.
    pub(crate) fn check(&self, c: &NonceCandidate) -> Result<(), ReplayError> {
        let Some(highest) = self.highest else {
            return Ok(());
        };
        if c.index > highest {
            return Ok(());
        }
        if highest.saturating_sub(c.index) >= REPLAY_WINDOW {
            return Err(ReplayError::Stale);
        }
        if self.is_seen(c.index) {
            return Err(ReplayError::Replayed);
        }
        Ok(())
    }

    /// Records a checked candidate whose packet was authentic, and moves the base (step 3).
    pub(crate) fn accept(&mut self, c: &NonceCandidate) {
        match self.highest {
            Some(highest) if c.index <= highest => {}
            Some(highest) => {
                // Numbers between the old and new highest have not been seen yet.
                let gap = c.index.saturating_sub(highest);
                if gap >= REPLAY_WINDOW {
                    self.seen = [0; WORDS];
                } else {
                    for i in highest.saturating_add(1)..c.index {
                        self.clear(i);
                    }
                }
                self.clear(c.index);
                self.highest = Some(c.index);
            }
            None => {
                self.seen = [0; WORDS];
                self.highest = Some(c.index);
            }
        }
        self.mark(c.index);
        if c.diff > BASE_MOVE_DIFF {
            self.base.add(DATA_NUM_THRESHOLD);
            self.base_index = self
                .base_index
                .saturating_add(u64::from(DATA_NUM_THRESHOLD));
        }
    }

    fn slot(i: u64) -> (usize, u64) {
        let bit = i % REPLAY_WINDOW;
        ((bit / 64) as usize, 1u64 << (bit % 64))
    }

    fn is_seen(&self, i: u64) -> bool {
        let (w, m) = Self::slot(i);
        self.seen.get(w).is_some_and(|word| word & m != 0)
    }

    fn mark(&mut self, i: u64) {
        let (w, m) = Self::slot(i);
        if let Some(word) = self.seen.get_mut(w) {
            *word |= m;
        }
    }

    fn clear(&mut self, i: u64) {
        let (w, m) = Self::slot(i);
        if let Some(word) = self.seen.get_mut(w) {
            *word &= !m;
        }
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn nonce_at(base: Nonce, n: u32) -> Nonce {
        let mut x = base;
        x.add(n);
        x
    }

    #[test]
    fn rebuilds_the_full_nonce_across_a_carry() {
        let mut base = Nonce([7; 24]);
        base.0[22] = 0xff;
        base.0[23] = 0xf0;
        let r = ReceiveNonce::new(base);
        let sent = nonce_at(base, 0x20);
        assert_eq!(r.candidate(sent.low_u16()).nonce, sent);
    }

    #[test]
    fn base_moves_by_21845_after_a_difference_above_43690() {
        let base = Nonce([0; 24]);
        let mut r = ReceiveNonce::new(base);
        let c = r.candidate(43690);
        r.accept(&c);
        assert_eq!(r.base, base, "43690 does not move the base");
        let c = r.candidate(43691);
        r.accept(&c);
        assert_eq!(r.base, nonce_at(base, 21845));
        // A packet 65536 + 10 after the start still rebuilds correctly after the move.
        let later = nonce_at(base, 65546);
        assert_eq!(r.candidate(later.low_u16()).nonce, later);
    }

    #[test]
    fn replay_is_refused_and_reordering_within_the_window_is_not() {
        let mut r = ReceiveNonce::new(Nonce([0; 24]));
        for n in [5u16, 3, 4, 9] {
            let c = r.candidate(n);
            assert_eq!(r.check(&c), Ok(()));
            r.accept(&c);
        }
        for n in [5u16, 3, 4, 9] {
            assert_eq!(r.check(&r.candidate(n)), Err(ReplayError::Replayed), "{n}");
        }
        assert_eq!(r.check(&r.candidate(6)), Ok(()));
        let far = r.candidate(9 + 2048);
        r.accept(&far);
        assert_eq!(r.check(&r.candidate(6)), Err(ReplayError::Stale));
        assert_eq!(
            r.check(&r.candidate(9 + 1)),
            Ok(()),
            "slot reused by 9+2048+... cleared"
        );
        assert_eq!(r.check(&r.candidate(9 + 2048)), Err(ReplayError::Replayed));
    }

    #[test]
    fn a_jump_beyond_the_window_forgets_old_bits() {
        let mut r = ReceiveNonce::new(Nonce([0; 24]));
        let c = r.candidate(1);
        r.accept(&c);
        let c = r.candidate(1 + 2 * 2048);
        r.accept(&c);
        // 1 + 2048 maps to the same bit as 1 but was never seen.
        let mid = r.candidate(1 + 2048 + 5);
        assert_eq!(r.check(&mid), Ok(()));
        let c = r.candidate(1 + 4096 - 1);
        assert_eq!(r.check(&c), Ok(()));
    }
}
