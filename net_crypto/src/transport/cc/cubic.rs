//! CUBIC (RFC 9438, constants as quinn `congestion/cubic.rs`) with HyStart++ slow start
//! (RFC 9406) — the loss-based fallback controller (docs/transport.md §1.3, §3.6).
//!
//! `W_cubic(t) = C·(t − K)³ + W_max`, `K = ∛(W_max·(1−β)/C)`, C = 0.4, β = 0.7; the
//! Reno-friendly estimate `W_est(t) = W_max·β + 3(1−β)/(1+β)·t/RTT` is a floor; fast
//! convergence lowers W_max when a loss comes below the previous one. One reduction per
//! recovery period (RFC 9002 §7.3.2), undone when the loss proves spurious.
//! Its known weakness (why it is not the default): under random loss p the window is
//! ≈ (C(3+β)/(4(1−β)))^¼ · RTT^¾ / p^¾ packets, whatever the link (RFC 8312 §5.1).

use std::time::Duration;

use super::hystart::{HyStart, Phase, CSS_GROWTH_DIVISOR};
use super::{AckEvent, Controller, LossEvent, INITIAL_WINDOW, MAX_PACKET, MIN_WINDOW};
use crate::transport::rtt::RttEstimator;
use crate::Timestamp;

/// RFC 9438 §4.6 C.
const C: f64 = 0.4;
/// RFC 9438 §4.6 β_cubic.
const BETA: f64 = 0.7;
/// RFC 9002 §7.7 pacing gain N in congestion avoidance; 2 in slow start (Linux, s2n-quic).
const PACING_GAIN_CA: f64 = 1.25;
const PACING_GAIN_SS: f64 = 2.0;

/// What one loss reduction changed, for undo.
#[derive(Debug, Clone, Copy)]
struct Saved {
    window: u64,
    ssthresh: u64,
    w_max: f64,
    k: f64,
    epoch: Option<Timestamp>,
}

/// CUBIC + HyStart++.
#[derive(Debug, Clone)]
pub(crate) struct Cubic {
    window: u64,
    ssthresh: u64,
    /// W_max in packets.
    w_max: f64,
    /// K in seconds.
    k: f64,
    epoch: Option<Timestamp>,
    recovery_start: Option<Timestamp>,
    saved: Option<Saved>,
    hystart: HyStart,
    last_sent: Timestamp,
    /// Fractional growth carried between acks, in bytes.
    carry: f64,
}

impl Cubic {
    pub(crate) fn new(_now: Timestamp) -> Self {
        Self {
            window: INITIAL_WINDOW,
            ssthresh: u64::MAX,
            w_max: 0.0,
            k: 0.0,
            epoch: None,
            recovery_start: None,
            saved: None,
            hystart: HyStart::new(),
            last_sent: Timestamp::ZERO,
            carry: 0.0,
        }
    }

    fn in_recovery(&self, sent: Timestamp) -> bool {
        self.recovery_start.is_some_and(|r| sent <= r)
    }

    fn congestion_avoidance(&mut self, ack: &AckEvent, rtt: Duration) {
        let mss = MAX_PACKET as f64;
        let epoch = *self.epoch.get_or_insert(ack.now);
        if self.w_max == 0.0 {
            self.w_max = self.window as f64 / mss;
            self.k = 0.0;
        }
        let t = (ack.now - epoch).as_secs_f64();
        let rtt_s = rtt.as_secs_f64().max(1e-3);
        let w_cubic = C * (t + rtt_s - self.k).powi(3) + self.w_max;
        let w_est = self.w_max * BETA + 3.0 * (1.0 - BETA) / (1.0 + BETA) * t / rtt_s;
        let cwnd = self.window as f64 / mss;
        let target = w_cubic.max(w_est).clamp(cwnd, cwnd * 1.5);
        // Per RFC 9438 §4.4: cwnd += (target − cwnd)/cwnd per acked packet.
        let acked = ack.bytes_acked as f64 / mss;
        self.carry += (target - cwnd) / cwnd * acked * mss;
        if self.carry >= 1.0 {
            let inc = self.carry.floor();
            self.window += inc as u64;
            self.carry -= inc;
        }
    }
}

impl Controller for Cubic {
    fn on_sent(&mut self, now: Timestamp, _bytes: u64, _bytes_in_flight: u64) {
        self.last_sent = now;
    }

    fn on_ack(&mut self, ack: &AckEvent, rtt: &RttEstimator) {
        if ack.app_limited || self.in_recovery(ack.newest_acked_sent) {
            return;
        }
        if self.window < self.ssthresh {
            let sample = rtt.has_sample().then(|| rtt.latest());
            match self
                .hystart
                .on_ack(ack.newest_acked_sent, self.last_sent, sample)
            {
                Phase::SlowStart => self.window += ack.bytes_acked,
                Phase::Conservative => self.window += ack.bytes_acked / CSS_GROWTH_DIVISOR,
                Phase::Exit => self.ssthresh = self.window,
            }
        } else {
            let base = rtt.min_rtt().unwrap_or_else(|| rtt.smoothed_or_initial());
            self.congestion_avoidance(ack, base);
        }
    }

    fn on_loss(&mut self, loss: &LossEvent, _rtt: &RttEstimator) {
        if self.in_recovery(loss.largest_lost_sent) {
            // One reduction per recovery period — but persistent congestion collapses the
            // window whenever it is declared (RFC 9002 §7.6.2).
            if loss.persistent {
                self.window = MIN_WINDOW;
            }
            return;
        }
        self.saved = Some(Saved {
            window: self.window,
            ssthresh: self.ssthresh,
            w_max: self.w_max,
            k: self.k,
            epoch: self.epoch,
        });
        self.recovery_start = Some(loss.now);
        let cwnd = self.window as f64 / MAX_PACKET as f64;
        // Fast convergence (RFC 9438 §4.7).
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.window = ((self.window as f64 * BETA) as u64).max(MIN_WINDOW);
        self.ssthresh = self.window;
        self.k = (self.w_max * (1.0 - BETA) / C).cbrt();
        self.epoch = Some(loss.now);
        self.carry = 0.0;
        if loss.persistent {
            self.window = MIN_WINDOW;
        }
    }

    fn on_spurious_loss(&mut self) {
        if let Some(s) = self.saved.take() {
            self.window = s.window;
            self.ssthresh = s.ssthresh;
            self.w_max = s.w_max;
            self.k = s.k;
            self.epoch = s.epoch;
            self.recovery_start = None;
        }
    }

    fn window(&self) -> u64 {
        self.window
    }

    fn pacing_rate(&self, rtt: &RttEstimator) -> Option<u64> {
        let srtt = rtt.smoothed()?;
        let gain = if self.window < self.ssthresh {
            PACING_GAIN_SS
        } else {
            PACING_GAIN_CA
        };
        Some((gain * self.window as f64 / srtt.as_secs_f64().max(1e-6)) as u64)
    }

    fn in_slow_start(&self) -> bool {
        self.window < self.ssthresh
    }
}
