//! When to try a relay again after a connection to it failed.
//!
//! 0.2.18 (`TCP_connection.c` `do_tcp_conns`) reconnects at once to a relay that dies
//! after its handshake and forgets one that fails before it; a relay that refuses
//! connections is then retried only when something adds it again. We keep the relay and
//! retry it with an exponential backoff instead, so a relay that is down is neither
//! hammered nor lost, and a node whose network was down for a while keeps its relays.

use std::time::Duration;

/// The wait after the first failure (ours): long enough that a relay refusing connections
/// costs one attempt a second at most.
pub const RECONNECT_DELAY_MIN: Duration = Duration::from_secs(1);
/// The longest wait (ours): a relay that comes back is found within two minutes.
pub const RECONNECT_DELAY_MAX: Duration = Duration::from_secs(120);

/// Consecutive failures of one relay, reset by a completed handshake.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Backoff {
    failures: u32,
}

impl Backoff {
    /// Failures since the last handshake that completed.
    pub(super) fn failures(self) -> u32 {
        self.failures
    }

    /// Counts a failure; the wait before the next attempt:
    /// [`RECONNECT_DELAY_MIN`] × 2^(failures − 1), at most [`RECONNECT_DELAY_MAX`].
    pub(super) fn fail(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        let shift = (self.failures - 1).min(16);
        RECONNECT_DELAY_MIN
            .saturating_mul(1u32 << shift)
            .min(RECONNECT_DELAY_MAX)
    }

    /// A handshake completed: the next failure waits the minimum again.
    pub(super) fn succeed(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_one_second_up_to_the_cap_and_resets_on_success() {
        let mut b = Backoff::default();
        let waits: Vec<u64> = (0..10).map(|_| b.fail().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 120, 120, 120]);
        assert_eq!(b.failures(), 10);
        b.succeed();
        assert_eq!(b.fail(), RECONNECT_DELAY_MIN);
    }
}
