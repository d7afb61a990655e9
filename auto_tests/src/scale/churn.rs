//! When peers leave and join.
//!
//! A rate of `r` per minute over a population of `n` churnable peers is `r·n` departures a
//! minute; each departure is paired with the arrival of a fresh peer at the same instant, so
//! the network keeps its size and the figures per node stay comparable across a run. The
//! departures are evenly spaced rather than Poisson: with a few hundred of them in a run the
//! difference does not change what is measured (lookups through a thinning, refilling
//! DHT), and even spacing keeps the schedule independent of any random stream.

use std::time::Duration;

use rustox_net_crypto::Timestamp;

/// The churn schedule.
#[derive(Debug, Clone)]
pub struct Churn {
    interval: Option<Duration>,
    next: Timestamp,
}

impl Churn {
    /// `rate_per_min` of `population` peers replaced per minute, the first one interval
    /// after `start`. No churn when the product is not positive.
    pub fn new(rate_per_min: f64, population: usize, start: Timestamp) -> Self {
        let per_min = rate_per_min * population as f64;
        let interval = (per_min.is_finite() && per_min > 0.0)
            .then(|| Duration::from_secs_f64(60.0 / per_min))
            .filter(|d| !d.is_zero());
        Churn {
            next: start + interval.unwrap_or_default(),
            interval,
        }
    }

    /// When the next peer leaves (and a new one joins), if ever.
    pub fn next_at(&self) -> Option<Timestamp> {
        self.interval.map(|_| self.next)
    }

    /// The replacement due at [`Churn::next_at`] happened.
    pub fn advance(&mut self) {
        if let Some(i) = self.interval {
            self.next += i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_percent_of_a_thousand_is_one_replacement_every_six_seconds() {
        let mut c = Churn::new(0.01, 1000, Timestamp::ZERO);
        assert_eq!(c.next_at(), Some(Timestamp::ZERO + Duration::from_secs(6)));
        c.advance();
        assert_eq!(c.next_at(), Some(Timestamp::ZERO + Duration::from_secs(12)));
    }

    #[test]
    fn no_rate_means_no_churn() {
        assert_eq!(Churn::new(0.0, 1000, Timestamp::ZERO).next_at(), None);
        assert_eq!(Churn::new(0.01, 0, Timestamp::ZERO).next_at(), None);
    }
}
