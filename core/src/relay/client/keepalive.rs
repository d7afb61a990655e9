//! Our pings to the relay, and the verdict when one goes unanswered (docs/protocol.md §7;
//! c-toxcore 0.2.18 `TCP_client.c` `do_confirmed_TCP`, `handle_TCP_client_pong`).
//!
//! 0.2.18 pings as soon as the session is up (`last_pinged` starts at 0; the connection
//! sends that first ping itself) and then every [`TCP_PING_FREQUENCY`]; a ping unanswered
//! for [`TCP_PING_TIMEOUT`] kills the connection.
//! The ping id is 8 random bytes, never zero; only the sender reads it back, so byte order
//! does not matter. The relay's own pings are answered by the connection at once and do
//! not pass through here.

use std::time::Duration;

use rustox_net_crypto::crypto::CryptoRng;
use rustox_net_crypto::Timestamp;

/// `TCP_PING_FREQUENCY` = 30 s (`TCP_common.h`): time between our pings.
pub const TCP_PING_FREQUENCY: Duration = Duration::from_secs(30);
/// `TCP_PING_TIMEOUT` = 10 s (`TCP_common.h`): a ping unanswered this long means the relay
/// is gone.
pub const TCP_PING_TIMEOUT: Duration = Duration::from_secs(10);

/// What a pong told us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PongVerdict {
    /// It answered our outstanding ping.
    Answered,
    /// An old or unknown id: ignored, as 0.2.18 does.
    Stale,
    /// Id zero, which no ping carries: 0.2.18 closes the connection.
    Invalid,
}

/// Ping schedule of one established connection.
#[derive(Debug, Clone)]
pub(super) struct Keepalive {
    next_ping: Timestamp,
    /// The id and send time of the ping awaiting its pong.
    outstanding: Option<(u64, Timestamp)>,
}

impl Keepalive {
    /// The schedule of a session established at `now`: the first ping is due at once.
    pub(super) fn new(now: Timestamp) -> Self {
        Keepalive {
            next_ping: now,
            outstanding: None,
        }
    }

    /// When [`Self::due_ping`] or [`Self::is_dead`] next changes its answer.
    pub(super) fn deadline(&self) -> Timestamp {
        match self.outstanding {
            Some((_, sent)) => (sent + TCP_PING_TIMEOUT).min(self.next_ping),
            None => self.next_ping,
        }
    }

    /// True once our outstanding ping has gone unanswered for [`TCP_PING_TIMEOUT`].
    pub(super) fn is_dead(&self, now: Timestamp) -> bool {
        matches!(self.outstanding, Some((_, sent)) if now >= sent + TCP_PING_TIMEOUT)
    }

    /// A fresh ping id if one is due at `now`. The caller sends `[4][id]` and then calls
    /// [`Self::ping_sent`]; if the frame could not be queued it calls nothing and the ping
    /// stays due.
    pub(super) fn due_ping(&self, now: Timestamp, rng: &mut dyn CryptoRng) -> Option<u64> {
        if now < self.next_ping {
            return None;
        }
        Some(rng.next_u64().max(1))
    }

    /// Records that the ping `id` went out at `now`.
    pub(super) fn ping_sent(&mut self, now: Timestamp, id: u64) {
        self.outstanding = Some((id, now));
        self.next_ping = now + TCP_PING_FREQUENCY;
    }

    /// A pong `[5][id]` from the relay.
    pub(super) fn on_pong(&mut self, id: u64) -> PongVerdict {
        if id == 0 {
            return PongVerdict::Invalid;
        }
        match self.outstanding {
            Some((want, _)) if want == id => {
                self.outstanding = None;
                PongVerdict::Answered
            }
            _ => PongVerdict::Stale,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn pings_at_once_then_every_30_s_and_dies_10_s_after_an_unanswered_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let t0 = Timestamp::from_secs(100);
        let mut k = Keepalive::new(t0);
        let id = k.due_ping(t0, &mut rng).expect("first ping at once");
        assert_ne!(id, 0);
        k.ping_sent(t0, id);
        assert_eq!(k.deadline(), t0 + TCP_PING_TIMEOUT);
        assert_eq!(k.on_pong(id), PongVerdict::Answered);
        assert_eq!(k.deadline(), t0 + TCP_PING_FREQUENCY);
        assert!(k.due_ping(t0 + Duration::from_secs(29), &mut rng).is_none());
        let t1 = t0 + TCP_PING_FREQUENCY;
        let id2 = k.due_ping(t1, &mut rng).unwrap();
        k.ping_sent(t1, id2);
        assert!(!k.is_dead(t1 + Duration::from_millis(9_999)));
        assert!(k.is_dead(t1 + TCP_PING_TIMEOUT));
    }

    #[test]
    fn a_stale_pong_does_not_count_and_zero_is_invalid() {
        let mut k = Keepalive::new(Timestamp::ZERO);
        k.ping_sent(Timestamp::ZERO, 7);
        assert_eq!(k.on_pong(8), PongVerdict::Stale);
        assert!(k.is_dead(Timestamp::ZERO + TCP_PING_TIMEOUT));
        assert_eq!(k.on_pong(0), PongVerdict::Invalid);
        assert_eq!(k.on_pong(7), PongVerdict::Answered);
        assert!(!k.is_dead(Timestamp::ZERO + TCP_PING_TIMEOUT));
    }
}
