//! Packet loss models: independent (Bernoulli) and Gilbert–Elliott bursts.
//!
//! Parameters follow netem's `loss random P` and `loss gemodel p r 1-h 1-k` (docs/transport.md §4):
//! the chain moves Good→Bad with probability `p` and Bad→Good with `r` once per step; a packet
//! is lost with `1-k` in Good and `1-h` in Bad. The mean loss is
//! `π_B·(1-h) + π_G·(1-k)` with `π_B = p / (p + r)`, and a Bad spell lasts `1/r` steps on
//! average.
//!
//! A step is a slot of time — one full packet's time at the link's bottleneck rate — not a
//! packet, as netem has it. A fade on a radio or satellite hop lasts a time: stepping once
//! per packet made a Bad spell last four packets whatever their spacing, so on the sparse
//! reverse path (a request every few milliseconds, then only the answers to probes) a
//! spell outlived seconds and every request in it: CUBIC on bursty stalled for 5 s with
//! the receiver's requests all lost. At full load (a packet per slot) the two agree. Between
//! packets the chain advances by the elapsed slots in closed form: with λ = 1 − p − r,
//! P(Bad after n steps) = π_B + (P(Bad now) − π_B)·λⁿ.

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::Timestamp;

/// How a link decides that a packet is lost (non-congestive loss; queue overflow is separate).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LossModel {
    /// No random loss.
    None,
    /// Each packet lost independently with this probability.
    Random(f64),
    /// Gilbert–Elliott two-state bursts (netem `gemodel`).
    GilbertElliott {
        /// P(Good → Bad) per packet.
        p: f64,
        /// P(Bad → Good) per packet.
        r: f64,
        /// Loss probability in the Bad state (netem's `1-h`).
        loss_bad: f64,
        /// Loss probability in the Good state (netem's `1-k`).
        loss_good: f64,
    },
}

impl LossModel {
    /// Bursts that lose every packet in the Bad state, averaging `mean_loss`, with Bad spells
    /// of `mean_burst` packets on average (so `r = 1/mean_burst`, `p = r·L/(1-L)`).
    pub fn bursts(mean_loss: f64, mean_burst: f64) -> LossModel {
        let r = (1.0 / mean_burst.max(1.0)).clamp(0.0, 1.0);
        let l = mean_loss.clamp(0.0, 0.999);
        LossModel::GilbertElliott {
            p: (r * l / (1.0 - l)).clamp(0.0, 1.0),
            r,
            loss_bad: 1.0,
            loss_good: 0.0,
        }
    }

    /// The long-run fraction of packets this model loses.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Random(p) => p,
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                if p + r <= 0.0 {
                    return loss_good;
                }
                let bad = p / (p + r);
                bad * loss_bad + (1.0 - bad) * loss_good
            }
        }
    }
}

/// A loss model with its chain state.
#[derive(Debug, Clone)]
pub struct LossState {
    model: LossModel,
    bad: bool,
    /// The chain's step: one slot of time (see the module docs).
    slot: Duration,
    /// When the chain was last advanced (`None` before the first packet).
    stepped_at: Option<Timestamp>,
}

impl LossState {
    /// Start in the Good state, stepping once per `slot` of time.
    pub fn new(model: LossModel, slot: Duration) -> Self {
        LossState {
            model,
            bad: false,
            slot: slot.max(Duration::from_micros(1)),
            stepped_at: None,
        }
    }

    /// Decide the fate of one packet entering at `now`: true when it is lost.
    pub fn is_lost(&mut self, now: Timestamp, rng: &mut ChaCha8Rng) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Random(p) => p > 0.0 && rng.gen_bool(p.clamp(0.0, 1.0)),
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                // At least one step per packet (as netem), more for a longer gap.
                let elapsed = self
                    .stepped_at
                    .map_or(self.slot, |t| now.saturating_duration_since(t));
                let steps = (elapsed.as_secs_f64() / self.slot.as_secs_f64()).max(1.0);
                self.stepped_at = Some(now);
                let p_bad = bad_after(p, r, self.bad, steps);
                self.bad = rng.gen_bool(p_bad.clamp(0.0, 1.0));
                let loss = if self.bad { loss_bad } else { loss_good };
                loss > 0.0 && rng.gen_bool(loss.clamp(0.0, 1.0))
            }
        }
    }
}

/// P(Bad) after `steps` steps of the chain from Bad (`bad`) or Good.
fn bad_after(p: f64, r: f64, bad: bool, steps: f64) -> f64 {
    if p + r <= 0.0 {
        return if bad { 1.0 } else { 0.0 };
    }
    let stationary = p / (p + r);
    let now = if bad { 1.0 } else { 0.0 };
    let lambda = 1.0 - p - r;
    // λ may be negative (p + r > 1: the chain alternates); a real power of a negative base
    // is undefined, so whole steps there.
    let decay = if lambda >= 0.0 {
        lambda.powf(steps)
    } else {
        lambda.powi(steps.round() as i32)
    };
    stationary + (now - stationary) * decay
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::{derive_rng, StreamKind};

    /// Loss rate and mean burst length of `n` packets, one per slot of 1 ms.
    fn measure(model: LossModel, n: usize) -> (f64, f64) {
        let mut rng = derive_rng(1, StreamKind::Link, 0);
        let slot = Duration::from_millis(1);
        let mut state = LossState::new(model, slot);
        let (mut lost, mut bursts, mut prev) = (0usize, 0usize, false);
        for i in 0..n {
            let l = state.is_lost(Timestamp::ZERO + slot * i as u32, &mut rng);
            if l {
                lost += 1;
                if !prev {
                    bursts += 1;
                }
            }
            prev = l;
        }
        (lost as f64 / n as f64, lost as f64 / bursts.max(1) as f64)
    }

    #[test]
    fn random_loss_matches_its_probability() {
        let (rate, burst) = measure(LossModel::Random(0.03), 200_000);
        assert!((rate - 0.03).abs() < 0.003, "{rate}");
        assert!(
            burst < 1.2,
            "independent losses are rarely adjacent: {burst}"
        );
    }

    #[test]
    fn gilbert_elliott_bursts_have_the_configured_mean_and_length() {
        let model = LossModel::bursts(0.02, 4.0);
        assert!((model.mean_loss() - 0.02).abs() < 1e-9);
        let (rate, burst) = measure(model, 400_000);
        assert!((rate - 0.02).abs() < 0.004, "{rate}");
        assert!((burst - 4.0).abs() < 0.6, "mean burst {burst}");
    }

    #[test]
    fn a_bad_spell_lasts_a_time_not_a_number_of_packets() {
        // Packets a second apart on a chain with 1 ms slots: each sees the stationary
        // chain, so losses are independent with the mean rate — no multi-second spells.
        let model = LossModel::bursts(0.02, 4.0);
        let mut rng = derive_rng(2, StreamKind::Link, 0);
        let mut state = LossState::new(model, Duration::from_millis(1));
        let (mut lost, mut runs, mut longest, mut run) = (0u32, 0u32, 0u32, 0u32);
        for i in 0..100_000u64 {
            if state.is_lost(Timestamp::from_secs(i), &mut rng) {
                lost += 1;
                run += 1;
                longest = longest.max(run);
            } else {
                if run > 0 {
                    runs += 1;
                }
                run = 0;
            }
        }
        let rate = f64::from(lost) / 100_000.0;
        assert!((rate - 0.02).abs() < 0.003, "{rate}");
        // Independent 2 % losses: a run of 4 has probability 1.6e-7 per packet.
        assert!(
            longest <= 3,
            "a run of {longest} sparse packets lost ({runs} runs)"
        );
        assert!((bad_after(0.1, 0.25, true, 1e6) - 0.1 / 0.35).abs() < 1e-9);
        assert!((bad_after(0.1, 0.25, true, 1.0) - 0.75).abs() < 1e-9);
    }

    #[test]
    fn no_loss_never_loses() {
        assert_eq!(measure(LossModel::None, 10_000).0, 0.0);
    }
}
