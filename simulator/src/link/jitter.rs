//! Delay variation (netem `delay T JITTER CORR`).
//!
//! Jitter is uniform in `[-amplitude, +amplitude]`, optionally correlated as an AR(1) process
//! `x' = c·x + √(1-c²)·u` so the spread stays the same whatever the correlation (netem's own
//! correlation shrinks it, a known netem quirk). The result is clamped to the amplitude.

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Jitter parameters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Jitter {
    /// Largest deviation from the base delay, either way.
    pub amplitude: Duration,
    /// Correlation with the previous packet's deviation, in `[0, 1)`.
    pub correlation: f64,
}

/// Jitter with its AR(1) state.
#[derive(Debug, Clone)]
pub struct JitterState {
    params: Jitter,
    last: f64,
}

impl JitterState {
    /// Start with no deviation.
    pub fn new(params: Jitter) -> Self {
        JitterState { params, last: 0.0 }
    }

    /// The next deviation in microseconds (may be negative).
    pub fn next_offset_us(&mut self, rng: &mut ChaCha8Rng) -> i64 {
        let amp = self.params.amplitude.as_micros() as f64;
        if amp <= 0.0 {
            return 0;
        }
        let c = self.params.correlation.clamp(0.0, 0.999);
        let u: f64 = rng.gen_range(-1.0..=1.0);
        self.last = (c * self.last + (1.0 - c * c).sqrt() * u).clamp(-1.0, 1.0);
        (self.last * amp).round() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::{derive_rng, StreamKind};

    #[test]
    fn jitter_stays_within_amplitude_and_correlation_smooths_it() {
        let mut rng = derive_rng(3, StreamKind::Link, 1);
        let amp = Duration::from_millis(10);
        let mut free = JitterState::new(Jitter {
            amplitude: amp,
            correlation: 0.0,
        });
        let mut smooth = JitterState::new(Jitter {
            amplitude: amp,
            correlation: 0.9,
        });
        let (mut step_free, mut step_smooth) = (0i64, 0i64);
        let (mut pf, mut ps) = (0i64, 0i64);
        for _ in 0..10_000 {
            let f = free.next_offset_us(&mut rng);
            let s = smooth.next_offset_us(&mut rng);
            assert!(f.abs() <= 10_000 && s.abs() <= 10_000);
            step_free += (f - pf).abs();
            step_smooth += (s - ps).abs();
            pf = f;
            ps = s;
        }
        assert!(step_smooth * 2 < step_free, "{step_smooth} vs {step_free}");
    }
}
