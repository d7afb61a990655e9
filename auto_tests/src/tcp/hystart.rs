//! HyStart++ (RFC 9406): leave slow start on a rise in the per-round minimum RTT, through a
//! few rounds of Conservative Slow Start, instead of on the burst of losses a doubling
//! window ends in.
//!
//! Used for the initial slow start only (RFC 9406 §4.3 recommends that; after an RTO,
//! ssthresh already bounds slow start).

use std::time::Duration;

/// RTT samples a round needs before its minimum is trusted (RFC 9406 §4.3 N_RTT_SAMPLE).
pub const N_RTT_SAMPLE: u32 = 8;
/// Lower clamp of the RTT-increase threshold (MIN_RTT_THRESH).
pub const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
/// Upper clamp of the RTT-increase threshold (MAX_RTT_THRESH).
pub const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// Threshold = last round's minimum RTT ÷ this (MIN_RTT_DIVISOR).
pub const MIN_RTT_DIVISOR: u32 = 8;
/// Growth in CSS is slow start's ÷ this (CSS_GROWTH_DIVISOR).
pub const CSS_GROWTH_DIVISOR: f64 = 4.0;
/// Rounds of CSS before congestion avoidance (CSS_ROUNDS).
pub const CSS_ROUNDS: u32 = 5;
/// Most segments one ACK may add in (conservative) slow start when not paced (RFC 9406
/// §4.3: L = 8 without pacing; Linux CUBIC is not paced).
pub const MAX_SEGMENTS_PER_ACK: f64 = 8.0;

/// Where HyStart++ stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Phase {
    /// Standard slow start, watching for an RTT rise.
    SlowStart,
    /// Conservative Slow Start after an RTT rise at `baseline`; `rounds` ended so far.
    Conservative {
        /// The round minimum that triggered CSS (cssBaselineMinRtt).
        baseline: Duration,
        /// Rounds completed in CSS (a partial first round counts).
        rounds: u32,
    },
    /// Slow start is over (by CSS or by a congestion event).
    Done,
}

/// What the sender must do after an ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Keep going.
    Continue,
    /// CSS ran its rounds: set ssthresh = cwnd and enter congestion avoidance.
    EnterCongestionAvoidance,
}

/// Per-round RTT minima and the phase.
#[derive(Debug, Clone)]
pub struct HyStart {
    phase: Phase,
    /// The round ends when the cumulative ACK reaches this (windowEnd).
    window_end: u64,
    last_round_min: Option<Duration>,
    current_round_min: Option<Duration>,
    samples: u32,
}

impl Default for HyStart {
    fn default() -> Self {
        HyStart::new()
    }
}

impl HyStart {
    /// Slow start from the first segment (the first round ends with its first ACK).
    pub fn new() -> Self {
        HyStart {
            phase: Phase::SlowStart,
            window_end: 0,
            last_round_min: None,
            current_round_min: None,
            samples: 0,
        }
    }

    /// The phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// True while HyStart++ governs the window (slow start or CSS).
    pub fn is_active(&self) -> bool {
        self.phase != Phase::Done
    }

    /// Slow-start growth for `acked` segments (RFC 9406 §4.3: min(acked, L), ÷ 4 in CSS).
    pub fn growth(&self, acked: f64) -> f64 {
        let g = acked.min(MAX_SEGMENTS_PER_ACK);
        match self.phase {
            Phase::Conservative { .. } => g / CSS_GROWTH_DIVISOR,
            _ => g,
        }
    }

    /// A congestion event or an RTO ended slow start.
    pub fn on_congestion(&mut self) {
        self.phase = Phase::Done;
    }

    /// An ACK advanced the cumulative ACK to `snd_una` with `snd_nxt` the next new byte,
    /// carrying RTT sample `rtt` (if it had one). Call before growing the window.
    pub fn on_ack(&mut self, snd_una: u64, snd_nxt: u64, rtt: Option<Duration>) -> Verdict {
        if !self.is_active() {
            return Verdict::Continue;
        }
        if snd_una >= self.window_end {
            // A round ended.
            if let Phase::Conservative { baseline, rounds } = self.phase {
                let rounds = rounds + 1;
                if rounds >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    return Verdict::EnterCongestionAvoidance;
                }
                self.phase = Phase::Conservative { baseline, rounds };
            }
            self.last_round_min = self.current_round_min;
            self.current_round_min = None;
            self.samples = 0;
            self.window_end = snd_nxt;
        }
        let Some(rtt) = rtt else {
            return Verdict::Continue;
        };
        let current = self.current_round_min.map_or(rtt, |m| m.min(rtt));
        self.current_round_min = Some(current);
        self.samples += 1;
        if self.samples < N_RTT_SAMPLE {
            return Verdict::Continue;
        }
        match self.phase {
            Phase::SlowStart => {
                if let Some(last) = self.last_round_min {
                    let thresh = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if current >= last + thresh {
                        self.phase = Phase::Conservative {
                            baseline: current,
                            rounds: 0,
                        };
                    }
                }
            }
            Phase::Conservative { baseline, .. } => {
                if current < baseline {
                    // The rise was spurious: back to slow start.
                    self.phase = Phase::SlowStart;
                }
            }
            Phase::Done => {}
        }
        Verdict::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Feed one round of ten ACKs with RTT `rtt`: the cumulative ACK goes from `start` (the
    /// previous round's end) towards `end`, which is what was sent when the round began.
    fn round(h: &mut HyStart, start: u64, end: u64, rtt: Duration) -> Verdict {
        let mut v = Verdict::Continue;
        for i in 0..10 {
            let una = start + (end - start) * i / 10;
            v = h.on_ack(una, end, Some(rtt));
            if v != Verdict::Continue {
                break;
            }
        }
        v
    }

    #[test]
    fn rising_rtt_enters_css_then_congestion_avoidance_after_five_rounds() {
        let mut h = HyStart::new();
        let mut edge = 0;
        let next = |e: &mut u64| {
            let s = *e;
            *e = if s == 0 { 10 } else { s * 3 };
            (s, *e)
        };
        // Flat RTT: stays in slow start.
        for _ in 0..3 {
            let (s, e) = next(&mut edge);
            assert_eq!(round(&mut h, s, e, 50 * MS), Verdict::Continue);
        }
        assert_eq!(h.phase(), Phase::SlowStart);
        // +7 ms ≥ max(4, 50/8 = 6.25) ms: CSS.
        let (s, e) = next(&mut edge);
        round(&mut h, s, e, 57 * MS);
        assert!(matches!(h.phase(), Phase::Conservative { .. }));
        assert!((h.growth(2.0) - 0.5).abs() < 1e-12);
        let mut verdict = Verdict::Continue;
        for _ in 0..6 {
            let (s, e) = next(&mut edge);
            verdict = round(&mut h, s, e, 60 * MS);
            if verdict != Verdict::Continue {
                break;
            }
        }
        assert_eq!(verdict, Verdict::EnterCongestionAvoidance);
        assert_eq!(h.phase(), Phase::Done);
    }

    #[test]
    fn rtt_dropping_below_the_baseline_resumes_slow_start() {
        let mut h = HyStart::new();
        round(&mut h, 0, 10, 40 * MS);
        round(&mut h, 10, 30, 40 * MS);
        round(&mut h, 30, 90, 46 * MS);
        assert!(matches!(h.phase(), Phase::Conservative { .. }));
        round(&mut h, 90, 270, 41 * MS);
        assert_eq!(h.phase(), Phase::SlowStart);
    }

    #[test]
    fn too_few_samples_decide_nothing() {
        let mut h = HyStart::new();
        round(&mut h, 0, 10, 40 * MS);
        for i in 0..(N_RTT_SAMPLE as u64 - 1) {
            h.on_ack(10 + i, 100, Some(200 * MS));
        }
        assert_eq!(h.phase(), Phase::SlowStart);
    }
}
