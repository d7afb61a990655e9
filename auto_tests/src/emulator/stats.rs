//! What the emulator measured: the link models' counters, its own packet counters, how late
//! it released packets, and per-flow deliveries over time.
//!
//! The lateness figures are what show that the instrument is not the bottleneck: a packet
//! released 5 µs after its model arrival time is as good as on time at 1 Gbit/s (11 µs per
//! 1428-byte packet); a p99 in milliseconds would mean the emulator, not the transport
//! under test, shaped the traffic.

use std::collections::HashMap;

use rustox_simulator::LinkStats;
use serde::Serialize;

use super::packet::FlowKey;

/// Lateness below this is counted per microsecond.
const FINE_BUCKETS_US: usize = 1000;
/// Then per millisecond up to this many milliseconds; beyond, one overflow bucket.
const COARSE_BUCKETS_MS: usize = 1000;

/// Histogram of release lateness (actual write time − model arrival time).
#[derive(Debug, Clone)]
pub struct LatenessHistogram {
    fine_us: Vec<u64>,
    coarse_ms: Vec<u64>,
    overflow: u64,
    count: u64,
    max_ns: u64,
}

impl Default for LatenessHistogram {
    fn default() -> Self {
        LatenessHistogram {
            fine_us: vec![0; FINE_BUCKETS_US],
            coarse_ms: vec![0; COARSE_BUCKETS_MS],
            overflow: 0,
            count: 0,
            max_ns: 0,
        }
    }
}

impl LatenessHistogram {
    /// Records one release `late_ns` after its due time.
    pub fn record(&mut self, late_ns: u64) {
        let us = (late_ns / 1000) as usize;
        if us < FINE_BUCKETS_US {
            self.fine_us[us] += 1;
        } else if us / 1000 < COARSE_BUCKETS_MS {
            self.coarse_ms[us / 1000] += 1;
        } else {
            self.overflow += 1;
        }
        self.count += 1;
        self.max_ns = self.max_ns.max(late_ns);
    }

    /// Releases recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q` quantile (0..=1) in microseconds, rounded up to its bucket's upper edge;
    /// `None` before the first release.
    pub fn quantile_us(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.fine_us.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some((i + 1) as f64);
            }
        }
        for (i, n) in self.coarse_ms.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(((i + 1) * 1000) as f64);
            }
        }
        Some(self.max_ns as f64 / 1000.0)
    }

    /// p50, p99 and the maximum.
    pub fn summary(&self) -> LatenessSummary {
        LatenessSummary {
            releases: self.count,
            p50_us: self.quantile_us(0.5),
            p99_us: self.quantile_us(0.99),
            max_us: (self.count > 0).then(|| self.max_ns as f64 / 1000.0),
            over_1ms: self.coarse_ms.iter().sum::<u64>() + self.overflow,
        }
    }
}

/// Release lateness in a line.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct LatenessSummary {
    /// Packets released.
    pub releases: u64,
    /// Median lateness, µs (bucket upper edge).
    pub p50_us: Option<f64>,
    /// 99th percentile, µs (bucket upper edge).
    pub p99_us: Option<f64>,
    /// Worst, µs.
    pub max_us: Option<f64>,
    /// Releases 1 ms or more late: tells a lone outlier from a pattern.
    pub over_1ms: u64,
}

/// The scalar counters of a [`LinkStats`] (without its per-packet samples), serialisable.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct LinkCounters {
    /// Packets offered to the link model.
    pub packets_in: u64,
    /// Their wire bytes (= IP packet bytes).
    pub bytes_in: u64,
    /// Packets the model let through.
    pub packets_out: u64,
    /// Their wire bytes.
    pub bytes_out: u64,
    /// Dropped by random / Gilbert–Elliott loss.
    pub dropped_loss: u64,
    /// Dropped by the full bottleneck queue (drop-tail).
    pub dropped_queue: u64,
    /// Dropped during an outage.
    pub dropped_outage: u64,
    /// Delivered with a flipped bit.
    pub corrupted: u64,
    /// Delivered twice.
    pub duplicated: u64,
    /// Held back so later packets overtook them.
    pub reordered: u64,
}

impl From<&LinkStats> for LinkCounters {
    fn from(s: &LinkStats) -> Self {
        LinkCounters {
            packets_in: s.packets_in,
            bytes_in: s.bytes_in,
            packets_out: s.packets_out,
            bytes_out: s.bytes_out,
            dropped_loss: s.packets_dropped_loss,
            dropped_queue: s.packets_dropped_queue,
            dropped_outage: s.packets_dropped_outage,
            corrupted: s.packets_corrupted,
            duplicated: s.packets_duplicated,
            reordered: s.packets_reordered,
        }
    }
}

/// Deliveries of one flow, binned by model arrival time.
#[derive(Debug, Clone, Serialize)]
pub struct FlowSeries {
    /// The flow.
    pub flow: FlowKey,
    /// Packets delivered.
    pub packets: u64,
    /// IP bytes delivered.
    pub bytes: u64,
    /// IP bytes delivered in each interval since the emulator started (interval length in
    /// [`DirectionStats::interval_ms`]); bounded by [`FlowTable`]'s limit.
    pub bytes_per_interval: Vec<u64>,
}

/// Most flows tracked per direction; later ones are summed under [`DirectionStats::untracked_bytes`].
const MAX_FLOWS: usize = 64;
/// Most intervals kept per flow (an hour at 1 s); later deliveries still count in `bytes`.
const MAX_INTERVALS: usize = 3600;

/// Per-flow delivery series, bounded in flows and intervals.
#[derive(Debug, Clone, Default)]
pub(super) struct FlowTable {
    index: HashMap<FlowKey, usize>,
    flows: Vec<FlowSeries>,
    untracked_bytes: u64,
}

impl FlowTable {
    /// Counts `bytes` of `flow` delivered in interval `interval`.
    pub(super) fn record(&mut self, flow: FlowKey, interval: usize, bytes: u64) {
        let slot = match self.index.get(&flow) {
            Some(&i) => i,
            None if self.flows.len() < MAX_FLOWS => {
                self.flows.push(FlowSeries {
                    flow,
                    packets: 0,
                    bytes: 0,
                    bytes_per_interval: Vec::new(),
                });
                self.index.insert(flow, self.flows.len() - 1);
                self.flows.len() - 1
            }
            None => {
                self.untracked_bytes += bytes;
                return;
            }
        };
        let series = &mut self.flows[slot];
        series.packets += 1;
        series.bytes += bytes;
        if interval < MAX_INTERVALS {
            if series.bytes_per_interval.len() <= interval {
                series.bytes_per_interval.resize(interval + 1, 0);
            }
            series.bytes_per_interval[interval] += bytes;
        }
    }

    pub(super) fn flows(&self) -> &[FlowSeries] {
        &self.flows
    }

    pub(super) fn untracked_bytes(&self) -> u64 {
        self.untracked_bytes
    }
}

/// One direction of the emulator.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DirectionStats {
    /// IP packets read from the sending namespace's TUN device.
    pub packets_read: u64,
    /// Their bytes.
    pub bytes_read: u64,
    /// Packets written into the receiving namespace (duplicates included).
    pub packets_released: u64,
    /// Their bytes.
    pub bytes_released: u64,
    /// Writes the kernel refused.
    pub write_errors: u64,
    /// Packets dropped because the emulator's own in-flight store was full (should be 0;
    /// non-zero means the options' limit, not the link model, dropped them).
    pub pending_overflow: u64,
    /// Most packets in flight (queued or propagating) at once.
    pub max_pending: usize,
    /// The link model's counters.
    pub link: LinkCounters,
    /// Length of the flow series' intervals, ms.
    pub interval_ms: u64,
    /// Deliveries per flow.
    pub flows: Vec<FlowSeries>,
    /// Bytes of flows beyond the tracked limit.
    pub untracked_bytes: u64,
}

/// A snapshot of the whole emulator.
#[derive(Debug, Clone, Default)]
pub struct EmulatorStats {
    /// Namespace A → B.
    pub a_to_b: DirectionStats,
    /// Namespace B → A.
    pub b_to_a: DirectionStats,
    /// Release lateness over both directions.
    pub lateness: LatenessHistogram,
    /// Times the loop slept in `ppoll`.
    pub sleeps: u64,
    /// Loop turns spent spinning because the next release was too close to sleep for.
    pub spins: u64,
    /// Nanoseconds spent asleep in `ppoll`; `1 − slept_ns / elapsed_ns` is how busy the
    /// emulator thread was (near 1: it may be reading packets later than they were sent).
    pub slept_ns: u64,
    /// Nanoseconds since the emulator started (its time origin).
    pub elapsed_ns: u64,
    /// Whether the emulator thread runs under a real-time policy
    /// ([`EmulatorOptions::realtime_priority`](super::EmulatorOptions::realtime_priority)).
    pub realtime: bool,
}

impl EmulatorStats {
    /// Fraction of the emulator's time not spent asleep (spinning counts as busy).
    pub fn busy_fraction(&self) -> Option<f64> {
        (self.elapsed_ns > 0).then(|| 1.0 - self.slept_ns as f64 / self.elapsed_ns as f64)
    }
}

/// Everything at the end of a run: the snapshot plus each link's full statistics (with
/// per-packet samples, when the link config records them).
#[derive(Debug, Clone)]
pub struct EmulatorReport {
    /// Counters and lateness.
    pub stats: EmulatorStats,
    /// The A → B link model's statistics.
    pub a_to_b: LinkStats,
    /// The B → A link model's statistics.
    pub b_to_a: LinkStats,
}

/// The kernel's UDP counters in one namespace (`/proc/net/snmp`, "Udp:" lines): receive
/// buffer overflows there are drops the link model did not make.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct UdpCounters {
    /// Datagrams delivered to sockets.
    pub in_datagrams: u64,
    /// Datagrams dropped because a socket's receive buffer was full.
    pub rcvbuf_errors: u64,
    /// Datagrams not sent because the send buffer was full.
    pub sndbuf_errors: u64,
    /// Datagrams to a port nobody listened on.
    pub no_ports: u64,
}

impl UdpCounters {
    /// Parses `/proc/net/snmp`; `None` when its "Udp:" lines are missing or malformed.
    pub fn parse(snmp: &str) -> Option<Self> {
        let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
        let names: Vec<&str> = udp.next()?.split_whitespace().skip(1).collect();
        let values: Vec<u64> = udp
            .next()?
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        let get = |name: &str| {
            names
                .iter()
                .position(|n| *n == name)
                .and_then(|i| values.get(i).copied())
        };
        Some(UdpCounters {
            in_datagrams: get("InDatagrams")?,
            rcvbuf_errors: get("RcvbufErrors").unwrap_or(0),
            sndbuf_errors: get("SndbufErrors").unwrap_or(0),
            no_ports: get("NoPorts").unwrap_or(0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_land_on_bucket_edges() {
        let mut h = LatenessHistogram::default();
        assert_eq!(h.quantile_us(0.5), None);
        for _ in 0..98 {
            h.record(2_500); // 2.5 µs
        }
        h.record(40_000_000); // 40 ms
        h.record(5_000_000_000); // 5 s: overflow
        assert_eq!(h.quantile_us(0.5), Some(3.0));
        assert_eq!(h.quantile_us(0.99), Some(41_000.0));
        assert_eq!(h.quantile_us(1.0), Some(5_000_000.0));
        assert_eq!(h.summary().max_us, Some(5_000_000.0));
        assert_eq!(h.summary().over_1ms, 2);
        assert_eq!(h.count(), 100);
    }

    #[test]
    fn flow_table_is_bounded() {
        let mut t = FlowTable::default();
        for i in 0..(MAX_FLOWS as u16 + 5) {
            let flow = FlowKey {
                protocol: 17,
                src: std::net::SocketAddr::from(([10, 201, 0, 1], i)),
                dst: std::net::SocketAddr::from(([10, 201, 0, 2], 1)),
            };
            t.record(flow, MAX_INTERVALS + 10, 100);
            t.record(flow, 2, 100);
        }
        assert_eq!(t.flows().len(), MAX_FLOWS);
        assert_eq!(t.untracked_bytes(), 5 * 200);
        assert_eq!(t.flows()[0].bytes, 200);
        assert_eq!(t.flows()[0].bytes_per_interval, vec![0, 0, 100]);
    }

    #[test]
    fn udp_counters_from_proc_net_snmp() {
        let snmp = "Ip: Forwarding DefaultTTL\nIp: 1 64\n\
            Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
            Udp: 120 3 7 99 7 0 0 0 0\n";
        let c = UdpCounters::parse(snmp).unwrap();
        assert_eq!(
            c,
            UdpCounters {
                in_datagrams: 120,
                rcvbuf_errors: 7,
                sndbuf_errors: 0,
                no_ports: 3
            }
        );
        assert_eq!(UdpCounters::parse("Ip: x\nIp: 1\n"), None);
    }
}
