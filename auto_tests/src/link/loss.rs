//! Packet loss models: independent (Bernoulli) and Gilbert–Elliott bursts.
//!
//! Parameters follow netem's `loss random P` and `loss gemodel p r 1-h 1-k` (transport.md §4):
//! the chain moves Good→Bad with probability `p` and Bad→Good with `r` once per packet; a packet
//! is lost with `1-k` in Good and `1-h` in Bad. The mean loss is
//! `π_B·(1-h) + π_G·(1-k)` with `π_B = p / (p + r)`, and a Bad spell lasts `1/r` packets on
//! average.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

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
}

impl LossState {
    /// Start in the Good state.
    pub fn new(model: LossModel) -> Self {
        LossState { model, bad: false }
    }

    /// Decide the fate of one packet: true when it is lost.
    pub fn is_lost(&mut self, rng: &mut ChaCha8Rng) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Random(p) => p > 0.0 && rng.gen_bool(p.clamp(0.0, 1.0)),
            LossModel::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                let switch = if self.bad { r } else { p };
                if rng.gen_bool(switch.clamp(0.0, 1.0)) {
                    self.bad = !self.bad;
                }
                let loss = if self.bad { loss_bad } else { loss_good };
                loss > 0.0 && rng.gen_bool(loss.clamp(0.0, 1.0))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::{derive_rng, StreamKind};

    fn measure(model: LossModel, n: usize) -> (f64, f64) {
        let mut rng = derive_rng(1, StreamKind::Link, 0);
        let mut state = LossState::new(model);
        let (mut lost, mut bursts, mut prev) = (0usize, 0usize, false);
        for _ in 0..n {
            let l = state.is_lost(&mut rng);
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
    fn no_loss_never_loses() {
        assert_eq!(measure(LossModel::None, 10_000).0, 0.0);
    }
}
