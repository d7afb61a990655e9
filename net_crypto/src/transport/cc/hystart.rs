//! HyStart++ (RFC 9406), as in quiche `recovery/congestion/hystart.rs` (docs/transport.md §1.3):
//! leave slow start before the queue overflows, on a rise of the per-round minimum RTT.
//!
//! Per round, after at least [`N_RTT_SAMPLE`] samples: if this round's minimum RTT is at least
//! `clamp(last_round_min / 8, 4 ms, 16 ms)` above the last round's, enter Conservative Slow
//! Start (growth ÷ [`CSS_GROWTH_DIVISOR`]); if the RTT falls back below the CSS baseline,
//! resume slow start; after [`CSS_ROUNDS`] rounds of CSS, go to congestion avoidance.

use std::time::Duration;

use crate::Timestamp;

/// RFC 9406 §4.3 N_RTT_SAMPLE.
const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3 MIN_RTT_THRESH / MAX_RTT_THRESH.
const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// RFC 9406 §4.3 MIN_RTT_DIVISOR.
const MIN_RTT_DIVISOR: u32 = 8;
/// RFC 9406 §4.3 CSS_GROWTH_DIVISOR.
pub(crate) const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3 CSS_ROUNDS.
const CSS_ROUNDS: u32 = 5;

/// What slow start should do after an ack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Standard slow start.
    SlowStart,
    /// Conservative slow start: divide growth by [`CSS_GROWTH_DIVISOR`].
    Conservative,
    /// Leave slow start now.
    Exit,
}

/// HyStart++ state.
#[derive(Debug, Clone)]
pub(crate) struct HyStart {
    /// Round ends when a packet sent at or after this time is acked.
    round_end: Option<Timestamp>,
    last_round_min: Option<Duration>,
    current_round_min: Option<Duration>,
    samples: u32,
    css_baseline: Option<Duration>,
    css_rounds: u32,
}

impl HyStart {
    pub(crate) fn new() -> Self {
        Self {
            round_end: None,
            last_round_min: None,
            current_round_min: None,
            samples: 0,
            css_baseline: None,
            css_rounds: 0,
        }
    }

    /// An ack during slow start. `newest_acked_sent` = send time of the newest packet acked,
    /// `last_sent` = send time of the newest packet sent, `rtt` = this event's RTT sample.
    pub(crate) fn on_ack(
        &mut self,
        newest_acked_sent: Timestamp,
        last_sent: Timestamp,
        rtt: Option<Duration>,
    ) -> Phase {
        let round_over = self.round_end.is_none_or(|end| newest_acked_sent >= end);
        if round_over {
            self.round_end = Some(last_sent);
            if self.css_baseline.is_some() {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    return Phase::Exit;
                }
            }
            self.last_round_min = self.current_round_min.take();
            self.samples = 0;
        }
        if let Some(r) = rtt {
            self.samples += 1;
            self.current_round_min = Some(self.current_round_min.map_or(r, |m| m.min(r)));
        }
        let (Some(cur), Some(last)) = (self.current_round_min, self.last_round_min) else {
            return self.phase();
        };
        match self.css_baseline {
            None if self.samples >= N_RTT_SAMPLE => {
                let thresh = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                if cur >= last + thresh {
                    self.css_baseline = Some(cur);
                    self.css_rounds = 0;
                }
            }
            Some(base) if cur < base => {
                // RTT fell back: the rise was spurious, resume slow start.
                self.css_baseline = None;
            }
            _ => {}
        }
        self.phase()
    }

    fn phase(&self) -> Phase {
        if self.css_baseline.is_some() {
            Phase::Conservative
        } else {
            Phase::SlowStart
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rising_rtt_enters_css_then_exits_after_five_rounds() {
        let mut h = HyStart::new();
        let ms = Duration::from_millis;
        let mut t = 0;
        let mut phase = Phase::SlowStart;
        // Round 1 at 100 ms, then rounds at 120 ms.
        for round in 0..10u64 {
            let rtt = if round == 0 { ms(100) } else { ms(120) };
            for _ in 0..10 {
                t += 1;
                phase = h.on_ack(
                    Timestamp::from_millis(round * 1000 + t),
                    Timestamp::from_millis(round * 1000 + 999),
                    Some(rtt),
                );
                if phase == Phase::Exit {
                    break;
                }
            }
            if phase == Phase::Exit {
                assert!(round >= 5, "exited too early at round {round}");
                return;
            }
            if round == 1 {
                assert_eq!(phase, Phase::Conservative);
            }
        }
        panic!("never left slow start");
    }
}
