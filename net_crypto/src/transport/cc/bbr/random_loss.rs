//! Where BBR may learn loss as random (docs/transport.md §3.6): the guard behind
//! `background_loss`, from which the loss guard raises its threshold and the pacer
//! compensates the rate lost after the bottleneck.
//!
//! Loss in a round whose minimum RTT stayed flat is learned as random, except on paths
//! whose smoothed RTT is twice the minimum or more. Why: the compensation paces at
//! bw / (1 − p), so loss learned from an overflowing queue feeds itself — pacing p above the
//! link overflows a buffer by p, which is learned again as p, and the probes push p up to
//! the cap. Where the smoothed RTT is over twice the minimum, queues, our receiver's ack
//! delay and the host's scheduling make up most of every sample: the queue tests' allowance
//! for them (standing_queue.rs) is then larger than a shallow buffer, every round passes for
//! flat, and a round that overflowed between two empty moments of its queue teaches its
//! overflow as random loss.
//!
//! Measured through a kernel token bucket (tc tbf, 100 Mbit/s, a 12.5 kB queue, a veth pair
//! on a loaded 2-core host: min RTT 25 µs, smoothed 0.9 ms, ack delay 5–12 ms): 3–13 % was
//! learned as random and pacing ran ~15 % above the link; with this test, none. Long paths
//! with random loss keep learning (sat600: ~0.7 s smoothed over 0.6 s; bursty: 80 ms over
//! 60 ms; lossy, wan100, vpn300 within a few percent of the minimum).

use std::time::Duration;

/// Smoothed RTT ÷ min RTT from which no round can vouch for random loss.
const SMOOTHED_RTT_FLAT_RATIO: u32 = 2;

/// True if a flat round on this path may teach random loss: the smoothed RTT `srtt` is
/// under twice the minimum `min`, plus a slow acknowledger's request `cadence` (c-toxcore),
/// which every sample carries.
pub(super) fn may_learn_random_loss(min: Duration, srtt: Duration, cadence: Duration) -> bool {
    srtt < min * SMOOTHED_RTT_FLAT_RATIO + cadence
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: f64) -> Duration {
        Duration::from_secs_f64(v / 1e3)
    }

    #[test]
    fn long_paths_with_random_loss_learn_it() {
        assert!(
            may_learn_random_loss(ms(60.0), ms(65.0), Duration::ZERO),
            "lossy"
        );
        assert!(
            may_learn_random_loss(ms(600.0), ms(740.0), Duration::ZERO),
            "sat600"
        );
        assert!(
            may_learn_random_loss(ms(60.0), ms(80.0), Duration::ZERO),
            "bursty"
        );
    }

    #[test]
    fn a_short_path_whose_rtt_is_mostly_delay_learns_nothing() {
        // The kernel-shaped veth: min 25 µs, smoothed 0.9 ms.
        assert!(!may_learn_random_loss(ms(0.025), ms(0.9), Duration::ZERO));
        // A standing queue as deep as the path: its loss is the queue's.
        assert!(!may_learn_random_loss(ms(20.0), ms(40.0), Duration::ZERO));
    }

    #[test]
    fn a_slow_acknowledgers_cadence_is_not_a_queue() {
        // c-toxcore requests every 250 ms over a 50 ms path.
        assert!(may_learn_random_loss(ms(50.0), ms(200.0), ms(250.0)));
        assert!(!may_learn_random_loss(ms(50.0), ms(400.0), ms(250.0)));
    }
}
