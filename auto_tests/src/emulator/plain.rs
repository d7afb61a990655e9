//! A plain link, written apart from the simulator's model so the two can check each other:
//! a fixed propagation delay, a rate, and a drop-tail queue of bytes — nothing else (no
//! jitter, loss, corruption, duplication or outages), with every time in nanoseconds.
//!
//! Where the profile's model ([`rustox_simulator::Link`], link/bottleneck.rs) differs, on
//! a profile without loss or jitter such as `wan20`:
//! - queue accounting: the model counts every byte not yet fully serialised, the packet
//!   on the wire included; this link counts only packets still waiting to start, as a
//!   router's output queue (or Linux's bfifo behind a shaper) does — one packet more room;
//! - timer granularity: the model takes entry times in whole microseconds and rounds
//!   departures up to the next one; this link keeps the emulator's nanoseconds;
//! - jitter and loss: the model draws them from seeded streams when the profile has them;
//!   this link has none, whatever the profile says (`--plain-link` takes only its delay,
//!   rate and queue).
//!
//! Both sit behind the same emulator loop, so its read batching and release lateness
//! (`EmulatorReport`'s lateness figures) are common to both.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use rustox_net_crypto::Timestamp;
use rustox_simulator::{Link, LinkConfig, LinkSample, LinkStats, LinkVerdict};

/// Nanoseconds per second, for serialisation times.
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Delay, rate and a drop-tail byte queue.
#[derive(Debug, Clone)]
pub struct PlainLink {
    delay_ns: u64,
    rate_bps: u64,
    limit_bytes: u64,
    /// (serialisation start in ns, wire bytes) of packets still waiting, oldest first.
    waiting: VecDeque<(u64, u64)>,
    waiting_bytes: u64,
    busy_until_ns: u64,
    record_samples: bool,
    stats: LinkStats,
}

impl PlainLink {
    /// `rate_bps` (0: unlimited) with a queue of `limit_bytes` and `delay` after it.
    pub fn new(delay: Duration, rate_bps: u64, limit_bytes: u64) -> Self {
        PlainLink {
            delay_ns: u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX),
            rate_bps,
            limit_bytes,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            busy_until_ns: 0,
            record_samples: false,
            stats: LinkStats::default(),
        }
    }

    /// The delay, rate and queue of `config` (its other effects left out).
    pub fn from_config(config: &LinkConfig) -> Self {
        let (rate, limit) = config
            .bottleneck
            .map_or((0, u64::MAX), |b| (b.rate_bps, b.queue_bytes));
        let mut link = PlainLink::new(config.delay, rate, limit);
        link.record_samples = config.record_samples;
        link
    }

    /// What it did so far, in the model's terms (drops are all queue drops).
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Bytes waiting at `now_ns` (the packet being serialised not included).
    pub fn waiting_bytes(&mut self, now_ns: u64) -> u64 {
        self.expire(now_ns);
        self.waiting_bytes
    }

    fn expire(&mut self, now_ns: u64) {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now_ns {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes;
        }
    }

    /// A packet of `wire` bytes entering at `now_ns`: its arrival time at the far end, or
    /// `None` if the queue had no room for it.
    pub fn offer(&mut self, now_ns: u64, wire: u64) -> Option<u64> {
        self.stats.packets_in += 1;
        self.stats.bytes_in += wire;
        self.expire(now_ns);
        if self.waiting_bytes + wire > self.limit_bytes {
            self.stats.packets_dropped_queue += 1;
            self.stats.bytes_dropped_queue += wire;
            return None;
        }
        let start = self.busy_until_ns.max(now_ns);
        let serialisation = if self.rate_bps == 0 {
            0
        } else {
            let ns = (u128::from(wire) * 8 * NANOS_PER_SEC).div_ceil(u128::from(self.rate_bps));
            u64::try_from(ns).unwrap_or(u64::MAX)
        };
        let finish = start.saturating_add(serialisation);
        self.busy_until_ns = finish;
        if start > now_ns {
            self.waiting.push_back((start, wire));
            self.waiting_bytes += wire;
        }
        let arrival = finish.saturating_add(self.delay_ns);
        self.stats.packets_out += 1;
        self.stats.bytes_out += wire;
        if self.record_samples {
            let us = |ns: u64| u32::try_from(ns / 1000).unwrap_or(u32::MAX);
            self.stats.samples.push(LinkSample {
                entered: Timestamp::from_micros(now_ns / 1000),
                queue_delay_us: us(start - now_ns),
                transit_us: us(arrival - now_ns),
            });
        }
        Some(arrival)
    }
}

/// What one direction of the emulator runs: the profile's model or the plain link.
#[derive(Debug)]
pub(super) enum DirectionModel {
    /// The simulator's [`Link`], as the profile builds it.
    Profile(Box<Link>),
    /// [`PlainLink`].
    Plain(Box<PlainLink>),
}

/// A packet the model lets through.
pub(super) struct Passed {
    /// Arrival time, ns since the emulator's origin.
    pub(super) at_ns: u64,
    /// The bytes handed to the model, as they arrive.
    pub(super) payload: Vec<u8>,
    /// Deliver it twice.
    pub(super) duplicate: bool,
}

impl DirectionModel {
    /// `payload` (a packet minus its header allowance, see packet.rs) to `dst` entering at
    /// `now_ns`; `None` if dropped.
    pub(super) fn transmit(
        &mut self,
        now_ns: u64,
        dst: SocketAddr,
        payload: Vec<u8>,
    ) -> Option<Passed> {
        match self {
            DirectionModel::Profile(link) => {
                let now = Timestamp::from_micros(now_ns / 1000);
                match link.transmit(now, dst, payload) {
                    LinkVerdict::Arrives(a) => Some(Passed {
                        at_ns: a.at.as_micros().saturating_mul(1000),
                        payload: a.payload,
                        duplicate: a.duplicate,
                    }),
                    LinkVerdict::Dropped(_) => None,
                }
            }
            DirectionModel::Plain(link) => {
                let wire = rustox_simulator::wire_bytes(dst, payload.len());
                link.offer(now_ns, wire).map(|at_ns| Passed {
                    at_ns,
                    payload,
                    duplicate: false,
                })
            }
        }
    }

    /// The model's statistics.
    pub(super) fn stats(&self) -> &LinkStats {
        match self {
            DirectionModel::Profile(link) => link.stats(),
            DirectionModel::Plain(link) => link.stats(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_tail_counts_waiting_bytes_only() {
        // 1000 bytes at 8 Mbit/s = 1 ms each; a queue of 2000 bytes.
        let mut l = PlainLink::new(Duration::from_millis(10), 8_000_000, 2000);
        assert_eq!(l.offer(0, 1000), Some(11_000_000), "on the wire at once");
        assert_eq!(l.offer(0, 1000), Some(12_000_000), "waits 1 ms");
        assert_eq!(l.offer(0, 1000), Some(13_000_000), "2000 bytes waiting now");
        assert_eq!(l.offer(0, 1), None, "full: drop-tail in bytes");
        assert_eq!(l.waiting_bytes(0), 2000);
        // At 1 ms the second packet is on the wire: its bytes left the queue.
        assert_eq!(l.waiting_bytes(1_000_000), 1000);
        assert_eq!(l.offer(1_000_000, 1000), Some(14_000_000));
        assert_eq!(l.stats().packets_dropped_queue, 1);
        assert_eq!(l.stats().packets_out, 4);
    }

    #[test]
    fn the_profile_model_holds_one_packet_less() {
        // The same offers through the simulator's bottleneck: it counts the packet being
        // serialised, so the third packet no longer fits.
        let mut model = rustox_simulator::Bottleneck::new(8_000_000, 2000);
        let accepted = (0..3)
            .filter(|_| {
                matches!(
                    model.offer(0, 1000),
                    rustox_simulator::Admission::Accepted { .. }
                )
            })
            .count();
        assert_eq!(accepted, 2);
    }

    #[test]
    fn an_idle_link_starts_afresh_and_keeps_nanoseconds() {
        let mut l = PlainLink::new(Duration::from_nanos(500), 1_000_000_000, 10_000);
        assert_eq!(l.offer(0, 1500), Some(12_500));
        assert_eq!(l.offer(1_000_001, 1500), Some(1_012_501));
        assert_eq!(l.waiting_bytes(1_000_001), 0);
    }
}
