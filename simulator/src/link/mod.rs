//! One direction of a simulated path, modelled on str0m's netem (docs/transport.md §4).
//!
//! A datagram entering a link goes through, in order:
//! 1. an outage check (the link is down: dropped);
//! 2. the bottleneck: rate limit and drop-tail byte queue (congestive loss happens here);
//! 3. random or Gilbert–Elliott loss — after the bottleneck, so it models non-congestive loss
//!    (radio, a lossy hop further on) and lost packets still used bottleneck capacity;
//! 4. single-bit corruption;
//! 5. propagation delay plus jitter; without reordering a packet never overtakes the one
//!    before it (as on a real path, jitter stretches gaps instead of swapping packets);
//! 6. duplication.
//!
//! Each link draws from its own ChaCha8 stream, so adding a link elsewhere does not change
//! this one's draws.

mod bottleneck;
mod jitter;
mod loss;
mod stats;

pub use bottleneck::{Admission, Bottleneck};
pub use jitter::{Jitter, JitterState};
pub use loss::{LossModel, LossState};
pub use stats::{LinkSample, LinkStats};

use std::net::SocketAddr;
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::Timestamp;

/// IPv4 (20) + UDP (8) header bytes: what a datagram costs on the wire beyond its payload.
pub const IPV4_UDP_OVERHEAD: u64 = 28;
/// IPv6 (40) + UDP (8) header bytes.
pub const IPV6_UDP_OVERHEAD: u64 = 48;

/// Wire bytes of a UDP datagram with `payload` bytes sent to `to`.
pub fn wire_bytes(to: SocketAddr, payload: usize) -> u64 {
    let overhead = if to.is_ipv4() {
        IPV4_UDP_OVERHEAD
    } else {
        IPV6_UDP_OVERHEAD
    };
    payload as u64 + overhead
}

/// Rate-limited bottleneck parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BottleneckConfig {
    /// Bits per second on the wire (headers included).
    pub rate_bps: u64,
    /// Drop-tail limit in wire bytes.
    pub queue_bytes: u64,
}

/// Packets held back so that later ones overtake them (netem `reorder`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reorder {
    /// Probability that a packet is held back.
    pub probability: f64,
    /// How long it is held back beyond its normal arrival.
    pub extra_delay: Duration,
}

/// Everything a link does to the datagrams crossing it in one direction.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// One-way propagation delay (RTT = 2 × this on a symmetric path).
    pub delay: Duration,
    /// Delay variation.
    pub jitter: Jitter,
    /// Non-congestive loss, applied after the bottleneck.
    pub loss: LossModel,
    /// Probability a packet is delivered twice.
    pub duplicate: f64,
    /// Reordering; `None` keeps packets in order whatever the jitter.
    pub reorder: Option<Reorder>,
    /// Probability a packet has one random bit flipped.
    pub corrupt: f64,
    /// The bottleneck, if any (`None`: infinitely fast, no queue).
    pub bottleneck: Option<BottleneckConfig>,
    /// Intervals `[start, end)` during which the link drops everything entering it.
    pub outages: Vec<(Timestamp, Timestamp)>,
    /// Keep a per-packet sample (queueing delay, transit time) for percentiles and true-RTT
    /// estimates. Off for many-node runs that do not need it.
    pub record_samples: bool,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            delay: Duration::ZERO,
            jitter: Jitter::default(),
            loss: LossModel::None,
            duplicate: 0.0,
            reorder: None,
            corrupt: 0.0,
            bottleneck: None,
            outages: Vec::new(),
            record_samples: false,
        }
    }
}

impl LinkConfig {
    /// A link with only a propagation delay.
    pub fn with_delay(delay: Duration) -> Self {
        LinkConfig {
            delay,
            ..LinkConfig::default()
        }
    }
}

/// The Gilbert–Elliott chain's step (link/loss.rs): one full-size packet's time at the
/// bottleneck rate, [`LOSS_SLOT_UNLIMITED`] without a bottleneck.
fn loss_slot(config: &LinkConfig) -> Duration {
    match config.bottleneck {
        Some(b) if b.rate_bps > 0 => {
            Duration::from_nanos(FULL_PACKET_WIRE_BYTES * 8 * 1_000_000_000 / b.rate_bps)
        }
        _ => LOSS_SLOT_UNLIMITED,
    }
}

/// Wire bytes of a full net_crypto datagram over IPv4 (profiles.rs FULL_WIRE_PACKET): the
/// packet whose time at the bottleneck is the loss chain's step.
const FULL_PACKET_WIRE_BYTES: u64 = 1428;
/// The loss chain's step on a link without a bottleneck.
const LOSS_SLOT_UNLIMITED: Duration = Duration::from_millis(1);

/// A datagram leaving the link: when it reaches the far end, and its (possibly corrupted)
/// bytes. A duplicated datagram yields a second copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival {
    /// Arrival time at the destination.
    pub at: Timestamp,
    /// The bytes as they arrive.
    pub payload: Vec<u8>,
    /// A second copy, arriving at the same time right after the first.
    pub duplicate: bool,
}

/// The fate of a datagram offered to a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkVerdict {
    /// It arrives (once, or twice when `duplicate`).
    Arrives(Arrival),
    /// The link dropped it.
    Dropped(DropCause),
}

/// Why a link dropped a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropCause {
    /// Random or Gilbert–Elliott loss.
    Loss,
    /// The bottleneck queue was full.
    QueueOverflow,
    /// The link was down.
    Outage,
}

/// One direction of a path: configuration, random stream, model state and statistics.
#[derive(Debug, Clone)]
pub struct Link {
    config: LinkConfig,
    rng: ChaCha8Rng,
    loss: LossState,
    jitter: JitterState,
    bottleneck: Option<Bottleneck>,
    last_arrival: Timestamp,
    stats: LinkStats,
}

impl Link {
    /// A link drawing its randomness from `rng`.
    pub fn new(config: LinkConfig, rng: ChaCha8Rng) -> Self {
        Link {
            loss: LossState::new(config.loss, loss_slot(&config)),
            jitter: JitterState::new(config.jitter),
            bottleneck: config
                .bottleneck
                .map(|b| Bottleneck::new(b.rate_bps, b.queue_bytes)),
            config,
            rng,
            last_arrival: Timestamp::ZERO,
            stats: LinkStats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// What happened on this link so far.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Take a datagram of `payload` bytes (a UDP payload to `to`) entering at `now`.
    pub fn transmit(
        &mut self,
        now: Timestamp,
        to: SocketAddr,
        mut payload: Vec<u8>,
    ) -> LinkVerdict {
        let wire = wire_bytes(to, payload.len());
        self.stats.packets_in += 1;
        self.stats.bytes_in += wire;

        if self
            .config
            .outages
            .iter()
            .any(|&(start, end)| now >= start && now < end)
        {
            self.stats.record_drop(DropCause::Outage, wire);
            return LinkVerdict::Dropped(DropCause::Outage);
        }

        let now_ns = now.as_micros().saturating_mul(1000);
        let (departure_ns, queue_delay_ns) = match self.bottleneck.as_mut() {
            None => (now_ns, 0),
            Some(b) => match b.offer(now_ns, wire) {
                Admission::Accepted {
                    departure_ns,
                    queue_delay_ns,
                } => (departure_ns, queue_delay_ns),
                Admission::Overflow => {
                    self.stats.record_drop(DropCause::QueueOverflow, wire);
                    return LinkVerdict::Dropped(DropCause::QueueOverflow);
                }
            },
        };

        if self.loss.is_lost(now, &mut self.rng) {
            self.stats.record_drop(DropCause::Loss, wire);
            return LinkVerdict::Dropped(DropCause::Loss);
        }

        if self.config.corrupt > 0.0
            && !payload.is_empty()
            && self.rng.gen_bool(self.config.corrupt.clamp(0.0, 1.0))
        {
            let byte = self.rng.gen_range(0..payload.len());
            let bit = self.rng.gen_range(0..8u32);
            payload[byte] ^= 1 << bit;
            self.stats.packets_corrupted += 1;
            self.stats.bytes_corrupted += wire;
        }

        let jitter_us = self.jitter.next_offset_us(&mut self.rng);
        let base_us = departure_ns
            .div_ceil(1000)
            .saturating_add(self.config.delay.as_micros() as u64);
        let mut at = Timestamp::from_micros(base_us.saturating_add_signed(jitter_us));
        match self.config.reorder {
            Some(r) if r.probability > 0.0 && self.rng.gen_bool(r.probability.clamp(0.0, 1.0)) => {
                at = at.saturating_add(r.extra_delay);
                self.stats.packets_reordered += 1;
            }
            Some(_) => {}
            None => {
                // Never overtake the previous packet.
                at = at.max(self.last_arrival);
                self.last_arrival = at;
            }
        }

        let duplicate =
            self.config.duplicate > 0.0 && self.rng.gen_bool(self.config.duplicate.clamp(0.0, 1.0));
        if duplicate {
            self.stats.packets_duplicated += 1;
        }
        self.stats.packets_out += 1;
        self.stats.bytes_out += wire;
        if self.config.record_samples {
            self.stats.samples.push(LinkSample {
                entered: now,
                queue_delay_us: u32::try_from(queue_delay_ns / 1000).unwrap_or(u32::MAX),
                transit_us: u32::try_from(at.as_micros().saturating_sub(now.as_micros()))
                    .unwrap_or(u32::MAX),
            });
        }
        LinkVerdict::Arrives(Arrival {
            at,
            payload,
            duplicate,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::{derive_rng, StreamKind};

    fn addr() -> SocketAddr {
        "10.0.0.2:33445".parse().unwrap()
    }

    fn link(config: LinkConfig) -> Link {
        Link::new(config, derive_rng(9, StreamKind::Link, 0))
    }

    #[test]
    fn delay_and_serialisation_add_up() {
        let mut l = link(LinkConfig {
            delay: Duration::from_millis(10),
            bottleneck: Some(BottleneckConfig {
                rate_bps: 8_000_000,
                queue_bytes: 100_000,
            }),
            ..LinkConfig::default()
        });
        // 972 + 28 = 1000 wire bytes at 1 MB/s = 1 ms, then 10 ms of propagation.
        match l.transmit(Timestamp::ZERO, addr(), vec![0; 972]) {
            LinkVerdict::Arrives(a) => assert_eq!(a.at, Timestamp::from_millis(11)),
            v => panic!("{v:?}"),
        }
        match l.transmit(Timestamp::ZERO, addr(), vec![0; 972]) {
            LinkVerdict::Arrives(a) => assert_eq!(a.at, Timestamp::from_millis(12)),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn jitter_without_reordering_never_swaps_packets() {
        let mut l = link(LinkConfig {
            delay: Duration::from_millis(40),
            jitter: Jitter {
                amplitude: Duration::from_millis(10),
                correlation: 0.0,
            },
            ..LinkConfig::default()
        });
        let mut last = Timestamp::ZERO;
        let mut spread = (u64::MAX, 0u64);
        for i in 0..5_000u64 {
            let now = Timestamp::from_micros(i * 1000);
            let LinkVerdict::Arrives(a) = l.transmit(now, addr(), vec![1; 100]) else {
                panic!()
            };
            assert!(a.at >= last, "packet {i} overtook its predecessor");
            last = a.at;
            let transit = a.at.as_micros() - now.as_micros();
            spread = (spread.0.min(transit), spread.1.max(transit));
        }
        assert!(
            spread.0 >= 30_000 && spread.1 <= 50_000 + 1_000,
            "{spread:?}"
        );
        assert!(spread.1 - spread.0 > 5_000, "jitter is visible: {spread:?}");
    }

    #[test]
    fn reordering_lets_later_packets_overtake() {
        let mut l = link(LinkConfig {
            delay: Duration::from_millis(5),
            reorder: Some(Reorder {
                probability: 0.1,
                extra_delay: Duration::from_millis(3),
            }),
            ..LinkConfig::default()
        });
        let mut arrivals = Vec::new();
        for i in 0..1000u64 {
            let LinkVerdict::Arrives(a) =
                l.transmit(Timestamp::from_micros(i * 500), addr(), vec![0; 10])
            else {
                panic!()
            };
            arrivals.push(a.at);
        }
        let swaps = arrivals.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(swaps > 50, "{swaps}");
        assert!((l.stats().packets_reordered as i64 - 100).abs() < 40);
    }

    #[test]
    fn corruption_flips_exactly_one_bit() {
        let mut l = link(LinkConfig {
            corrupt: 1.0,
            ..LinkConfig::default()
        });
        let LinkVerdict::Arrives(a) = l.transmit(Timestamp::ZERO, addr(), vec![0; 64]) else {
            panic!()
        };
        let ones: u32 = a.payload.iter().map(|b| b.count_ones()).sum();
        assert_eq!(ones, 1);
    }

    #[test]
    fn outage_drops_everything_inside_the_interval_only() {
        let mut l = link(LinkConfig {
            outages: vec![(Timestamp::from_secs(1), Timestamp::from_secs(2))],
            ..LinkConfig::default()
        });
        assert!(matches!(
            l.transmit(Timestamp::from_millis(999), addr(), vec![0; 10]),
            LinkVerdict::Arrives(_)
        ));
        assert_eq!(
            l.transmit(Timestamp::from_secs(1), addr(), vec![0; 10]),
            LinkVerdict::Dropped(DropCause::Outage)
        );
        assert!(matches!(
            l.transmit(Timestamp::from_secs(2), addr(), vec![0; 10]),
            LinkVerdict::Arrives(_)
        ));
        assert_eq!(l.stats().bytes_dropped_outage, 38);
    }

    #[test]
    fn loss_is_counted_apart_from_queue_overflow() {
        let mut l = link(LinkConfig {
            loss: LossModel::Random(0.1),
            bottleneck: Some(BottleneckConfig {
                rate_bps: 1_000_000,
                queue_bytes: 10_000,
            }),
            ..LinkConfig::default()
        });
        for _ in 0..100 {
            let _ = l.transmit(Timestamp::ZERO, addr(), vec![0; 972]);
        }
        let s = l.stats();
        assert_eq!(s.packets_dropped_queue, 90, "10 × 1000 wire bytes fit");
        assert!(s.packets_dropped_loss <= 10);
        assert_eq!(s.bytes_dropped_queue, 90_000);
        assert_eq!(s.packets_in, 100);
    }

    #[test]
    fn duplication_marks_copies() {
        let mut l = link(LinkConfig {
            duplicate: 0.5,
            ..LinkConfig::default()
        });
        let mut dups = 0;
        for _ in 0..1000 {
            if let LinkVerdict::Arrives(a) = l.transmit(Timestamp::ZERO, addr(), vec![0; 10]) {
                dups += a.duplicate as u32;
            }
        }
        assert!((400..600).contains(&dups), "{dups}");
    }
}
