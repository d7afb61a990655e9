//! A rate-limited link with a drop-tail queue measured in bytes (netem `rate R limit`,
//! Mahimahi `mm-link` with a byte-limited droptail queue).
//!
//! The queue is modelled analytically: each accepted packet finishes serialisation at
//! `max(arrival, previous finish) + wire_bytes / rate`, so no simulator events are needed for
//! it. Bytes in the queue are those of packets not yet fully serialised (the one being sent
//! included), and a packet that would push them past the limit is dropped — drop-tail.
//! Sizes are wire sizes: UDP payload plus IP and UDP headers.

use std::collections::VecDeque;

/// Nanoseconds per second, for the serialisation-time arithmetic.
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// What the bottleneck did with a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Queued; it leaves the bottleneck at `departure_ns` after waiting `queue_delay_ns`.
    Accepted {
        /// When its last bit has been serialised.
        departure_ns: u64,
        /// How long it waited behind earlier packets (its own serialisation excluded).
        queue_delay_ns: u64,
    },
    /// The queue was full: dropped.
    Overflow,
}

/// Rate and drop-tail queue state.
#[derive(Debug, Clone)]
pub struct Bottleneck {
    rate_bps: u64,
    limit_bytes: u64,
    /// (finish time in ns, wire bytes) of packets still in the queue, oldest first.
    queue: VecDeque<(u64, u64)>,
    queued_bytes: u64,
    busy_until_ns: u64,
}

impl Bottleneck {
    /// A bottleneck of `rate_bps` bits per second holding at most `limit_bytes` wire bytes.
    pub fn new(rate_bps: u64, limit_bytes: u64) -> Self {
        Bottleneck {
            rate_bps: rate_bps.max(1),
            limit_bytes,
            queue: VecDeque::new(),
            queued_bytes: 0,
            busy_until_ns: 0,
        }
    }

    /// The rate in bits per second.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Wire bytes currently queued at `now_ns`.
    pub fn backlog_bytes(&mut self, now_ns: u64) -> u64 {
        self.expire(now_ns);
        self.queued_bytes
    }

    fn expire(&mut self, now_ns: u64) {
        while let Some(&(finish, bytes)) = self.queue.front() {
            if finish > now_ns {
                break;
            }
            self.queue.pop_front();
            self.queued_bytes -= bytes;
        }
    }

    /// Offer a packet of `wire_bytes` arriving at `now_ns`.
    pub fn offer(&mut self, now_ns: u64, wire_bytes: u64) -> Admission {
        self.expire(now_ns);
        if self.queued_bytes + wire_bytes > self.limit_bytes {
            return Admission::Overflow;
        }
        let start = self.busy_until_ns.max(now_ns);
        let serialisation =
            (u128::from(wire_bytes) * 8 * NANOS_PER_SEC).div_ceil(u128::from(self.rate_bps));
        let departure_ns = start.saturating_add(u64::try_from(serialisation).unwrap_or(u64::MAX));
        self.busy_until_ns = departure_ns;
        self.queue.push_back((departure_ns, wire_bytes));
        self.queued_bytes += wire_bytes;
        Admission::Accepted {
            departure_ns,
            queue_delay_ns: start - now_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_time_follows_the_rate() {
        // 1250 bytes at 10 Mbit/s = 1 ms.
        let mut b = Bottleneck::new(10_000_000, 1_000_000);
        assert_eq!(
            b.offer(0, 1250),
            Admission::Accepted {
                departure_ns: 1_000_000,
                queue_delay_ns: 0
            }
        );
        assert_eq!(
            b.offer(0, 1250),
            Admission::Accepted {
                departure_ns: 2_000_000,
                queue_delay_ns: 1_000_000
            }
        );
        // An idle link starts fresh.
        assert_eq!(
            b.offer(5_000_000, 1250),
            Admission::Accepted {
                departure_ns: 6_000_000,
                queue_delay_ns: 0
            }
        );
    }

    #[test]
    fn drop_tail_counts_bytes_not_packets() {
        let mut b = Bottleneck::new(8_000_000, 3000);
        assert!(matches!(b.offer(0, 1428), Admission::Accepted { .. }));
        assert!(matches!(b.offer(0, 1428), Admission::Accepted { .. }));
        assert_eq!(b.offer(0, 1428), Admission::Overflow, "2856 + 1428 > 3000");
        assert!(
            matches!(b.offer(0, 100), Admission::Accepted { .. }),
            "a small packet still fits"
        );
        assert_eq!(b.backlog_bytes(0), 2956);
        // After the first packet has left (1428 B at 1 MB/s = 1.428 ms) there is room again.
        assert!(matches!(
            b.offer(1_428_000, 1428),
            Admission::Accepted { .. }
        ));
    }

    #[test]
    fn throughput_never_exceeds_the_rate() {
        let mut b = Bottleneck::new(20_000_000, 50_000);
        let mut last = 0;
        let mut accepted = 0u64;
        for i in 0..10_000u64 {
            if let Admission::Accepted { departure_ns, .. } = b.offer(i * 100_000, 1428) {
                accepted += 1428;
                last = departure_ns;
            }
        }
        let rate = accepted as f64 * 8.0 / (last as f64 / 1e9);
        assert!(rate <= 20_000_000.0 * 1.0001, "{rate}");
        assert!(
            rate > 19_000_000.0,
            "offered 114 Mbit/s keeps it busy: {rate}"
        );
    }
}
