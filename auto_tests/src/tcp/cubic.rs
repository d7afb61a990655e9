//! CUBIC congestion avoidance (RFC 9438), in segments.
//!
//! What this holds: W_max and K of the current epoch, the epoch's start, and the
//! Reno-friendly estimate W_est. The sender calls [`Cubic::on_congestion_event`] when it
//! enters fast recovery, [`Cubic::on_timeout`] on an RTO, and [`Cubic::on_ack`] for every
//! ACK that delivers data while in congestion avoidance; slow start and the window during
//! recovery are the sender's (HyStart++ and PRR).

use std::time::Duration;

use rustox_net_crypto::Timestamp;

/// C, RFC 9438 §4.1 (segments / s³) — the value Linux uses (`bic_scale` 41 → 0.4).
pub const C: f64 = 0.4;
/// β_cubic, RFC 9438 §4.6 (Linux `beta` 717/1024 ≈ 0.7).
pub const BETA: f64 = 0.7;
/// α_cubic = 3(1 − β)/(1 + β), RFC 9438 §4.3: the AIMD increase that makes an AIMD(α, β)
/// flow average what Reno does.
pub const ALPHA_RENO_FRIENDLY: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);
/// The smallest ssthresh, segments (RFC 9438 §4.6: `max(ssthresh, 2)`).
pub const MIN_SSTHRESH: f64 = 2.0;

/// The current congestion-avoidance epoch.
#[derive(Debug, Clone, Copy)]
struct Epoch {
    start: Timestamp,
    /// W_max for this epoch (the plateau the cubic curve flattens at).
    w_max: f64,
    /// K: seconds from the epoch's start to the plateau.
    k: f64,
    /// Reno-friendly window estimate.
    w_est: f64,
}

/// CUBIC's state across epochs.
#[derive(Debug, Clone, Default)]
pub struct Cubic {
    /// cwnd before the last reduction, after fast convergence; `None` after an RTO or before
    /// the first congestion event (RFC 9438 §4.8, §4.10: the next epoch then starts at its own
    /// cwnd with K = 0).
    w_max: Option<f64>,
    /// cwnd just before the last reduction (cwnd_prior): once W_est reaches it, α = 1.
    cwnd_prior: f64,
    epoch: Option<Epoch>,
}

impl Cubic {
    /// A flow that has seen no congestion.
    pub fn new() -> Self {
        Cubic::default()
    }

    /// W_max, if a congestion event set one.
    pub fn w_max(&self) -> Option<f64> {
        self.w_max
    }

    /// K of the current epoch, seconds.
    pub fn k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// A congestion event with window `cwnd` (segments): returns the new ssthresh
    /// (RFC 9438 §4.6 multiplicative decrease on cwnd, as Linux's `cubictcp_recalc_ssthresh`;
    /// §4.7 fast convergence).
    pub fn on_congestion_event(&mut self, cwnd: f64) -> f64 {
        let w_max = match self.w_max {
            // Fast convergence: a flow whose window shrinks releases bandwidth sooner.
            Some(previous) if cwnd < previous => cwnd * (1.0 + BETA) / 2.0,
            _ => cwnd,
        };
        self.w_max = Some(w_max);
        self.cwnd_prior = cwnd;
        self.epoch = None;
        (cwnd * BETA).max(MIN_SSTHRESH)
    }

    /// An RTO with window `cwnd`: the same reduction of ssthresh, then W_max is forgotten —
    /// the first epoch after the timeout starts at its own cwnd with K = 0 (RFC 9438 §4.8;
    /// Linux resets its state on entering Loss).
    pub fn on_timeout(&mut self, cwnd: f64) -> f64 {
        let ssthresh = self.on_congestion_event(cwnd);
        self.reset();
        ssthresh
    }

    /// Forget W_max and the epoch (an RTO during recovery: the reduction was already made).
    pub fn reset(&mut self) {
        self.w_max = None;
        self.epoch = None;
    }

    /// Slow start ended without a congestion event (HyStart++): the next epoch starts at its
    /// own cwnd with K = 0 (RFC 9438 §4.10).
    pub fn on_slow_start_exit(&mut self) {
        self.w_max = None;
        self.epoch = None;
    }

    /// `acked` segments were delivered at `now` in congestion avoidance with window `cwnd`
    /// and smoothed RTT `srtt`: returns the new window (RFC 9438 §4.2–§4.4).
    pub fn on_ack(&mut self, now: Timestamp, cwnd: f64, acked: f64, srtt: Duration) -> f64 {
        let epoch = *self.epoch.get_or_insert_with(|| {
            // The epoch starts with the first ACK of congestion avoidance; cwnd_epoch = cwnd.
            let (w_max, k) = match self.w_max {
                Some(w) if w > cwnd => (w, ((w - cwnd) / C).cbrt()),
                _ => (cwnd, 0.0),
            };
            if self.w_max.is_none() {
                self.cwnd_prior = cwnd;
            }
            Epoch {
                start: now,
                w_max,
                k,
                w_est: cwnd,
            }
        });
        let t = (now - epoch.start).as_secs_f64();
        let w_cubic = |t: f64| C * (t - epoch.k).powi(3) + epoch.w_max;

        // §4.3: W_est grows by α per window of ACKed segments; α = 1 once it has reached the
        // window before the last reduction.
        let alpha = if epoch.w_est >= self.cwnd_prior {
            1.0
        } else {
            ALPHA_RENO_FRIENDLY
        };
        let w_est = epoch.w_est + alpha * acked / cwnd;
        if let Some(e) = self.epoch.as_mut() {
            e.w_est = w_est;
        }
        if w_cubic(t) < w_est {
            // Reno-friendly region.
            return w_est.max(cwnd);
        }
        // §4.4/§4.5: aim at W_cubic one RTT ahead, clamped to [cwnd, 1.5·cwnd].
        let target = w_cubic(t + srtt.as_secs_f64()).clamp(cwnd, 1.5 * cwnd);
        cwnd + (target - cwnd) / cwnd * acked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: Duration = Duration::from_millis(100);

    /// Run congestion avoidance with one ACK per segment and the window growing per ACK,
    /// for `secs` seconds from `start`; returns the final window.
    fn run(c: &mut Cubic, mut cwnd: f64, start: Timestamp, secs: f64) -> f64 {
        let mut now = start;
        while (now - start).as_secs_f64() < secs {
            let per_ack = RTT.as_secs_f64() / cwnd;
            for _ in 0..cwnd as usize {
                cwnd = c.on_ack(now, cwnd, 1.0, RTT);
                now += Duration::from_secs_f64(per_ack);
            }
        }
        cwnd
    }

    #[test]
    fn decrease_and_fast_convergence() {
        let mut c = Cubic::new();
        assert!((c.on_congestion_event(100.0) - 70.0).abs() < 1e-9);
        assert_eq!(c.w_max(), Some(100.0));
        // A second event below W_max: fast convergence lowers W_max to cwnd·(1+β)/2.
        assert!((c.on_congestion_event(80.0) - 56.0).abs() < 1e-9);
        assert!((c.w_max().unwrap() - 68.0).abs() < 1e-9);
        assert_eq!(c.on_congestion_event(1.0), MIN_SSTHRESH);
    }

    #[test]
    fn window_returns_to_w_max_after_k_seconds() {
        let mut c = Cubic::new();
        let ssthresh = c.on_congestion_event(1000.0);
        let k = ((1000.0 - ssthresh) / C).cbrt();
        assert!((k - 9.08).abs() < 0.01, "K = ∛(300/0.4) = {k}");
        let start = Timestamp::from_secs(1);
        let before = run(&mut c, ssthresh, start, k - 1.0);
        assert!(
            before < 1000.0,
            "concave region stays below W_max: {before}"
        );
        let at = run(
            &mut c,
            before,
            start + Duration::from_secs_f64(k - 1.0),
            1.2,
        );
        assert!((at - 1000.0).abs() < 30.0, "near W_max around K: {at}");
        let after = run(&mut c, at, start + Duration::from_secs_f64(k + 0.2), 3.0);
        assert!(after > 1010.0, "convex region probes beyond W_max: {after}");
    }

    #[test]
    fn small_windows_grow_like_reno_friendly_aimd() {
        // W_max = 10: the cubic curve is nearly flat, so W_est (α ≈ 0.53 per RTT) governs.
        let mut c = Cubic::new();
        let ssthresh = c.on_congestion_event(10.0);
        let end = run(&mut c, ssthresh, Timestamp::ZERO, 1.0);
        let rtts = 1.0 / RTT.as_secs_f64();
        let reno_friendly = ssthresh + ALPHA_RENO_FRIENDLY * rtts;
        assert!(
            end >= reno_friendly * 0.9,
            "at least the Reno-friendly window: {end} vs {reno_friendly}"
        );
    }

    #[test]
    fn after_timeout_the_epoch_starts_flat() {
        let mut c = Cubic::new();
        c.on_congestion_event(100.0);
        let ssthresh = c.on_timeout(100.0);
        assert_eq!(c.w_max(), None);
        let w = c.on_ack(Timestamp::ZERO, ssthresh, 1.0, RTT);
        assert_eq!(c.k(), Some(0.0));
        assert!(w >= ssthresh);
    }
}
