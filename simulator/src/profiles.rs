//! The named link profiles of docs/design.md ("Link profiles") as link configurations.
//!
//! Conventions: the RTT column is propagation only, split evenly (one-way delay = RTT / 2);
//! both directions get the same bottleneck, loss and jitter (a symmetric path); "1 BDP" of
//! buffer is `rate × RTT` in wire bytes; packet-counted buffers assume full 1428-byte wire
//! packets (1400-byte net_crypto datagrams + 28 bytes of IPv4/UDP headers).

use std::fmt;
use std::time::Duration;

use crate::link::{BottleneckConfig, Jitter, LinkConfig, LossModel};

/// Wire size of a full net_crypto datagram over IPv4: 1400 (MAX_CRYPTO_PACKET_SIZE,
/// docs/protocol.md §2) + 28 (IPv4 + UDP headers).
pub const FULL_WIRE_PACKET: u64 = 1428;

/// File-data bytes a full packet carries: MAX_FILE_DATA_SIZE = 1371 (docs/protocol.md §3.5).
pub const FULL_PAYLOAD: u64 = 1371;

/// Mean Bad-state spell, in packets, for the Gilbert–Elliott profiles. docs/design.md gives only
/// the mean loss; 4-packet bursts are typical of Wi-Fi/satellite fades at these rates
/// (an assumption, stated here so it can be changed in one place).
pub const GE_MEAN_BURST_PACKETS: f64 = 4.0;

/// Correlation of successive jitter draws on `bursty`: jitter on real paths comes from
/// queues elsewhere and moves smoothly; uncorrelated ±10 ms draws with no reordering would
/// instead bunch packets into trains.
pub const BURSTY_JITTER_CORRELATION: f64 = 0.9;

/// A named path.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Its docs/design.md name.
    pub name: &'static str,
    /// Round-trip propagation delay.
    pub rtt: Duration,
    /// Bottleneck rate, bits per second on the wire.
    pub rate_bps: u64,
    /// Non-congestive loss per direction.
    pub loss: LossModel,
    /// Drop-tail buffer, wire bytes.
    pub buffer_bytes: u64,
    /// Jitter per direction.
    pub jitter: Jitter,
    /// Whole nodes on this profile reach each other only through a TCP relay: UDP between
    /// them is blocked, and the path is two TCP legs through the relay server
    /// (the rig's `auto_tests/src/relay_sim`) whose delays, rate and loss add up to this
    /// profile's. Transport-only harnesses (a net_crypto endpoint pair, `transfer.rs`,
    /// `files.rs`) have no relay client — that lives in the node — and run the same figures as
    /// one UDP link: their result is the transport's own on the path's shape, which is what a
    /// relayed run is compared with.
    pub relayed: bool,
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// `rate × rtt` in bytes.
fn bdp(rate_bps: u64, rtt: Duration) -> u64 {
    (rate_bps as f64 / 8.0 * rtt.as_secs_f64()).round() as u64
}

impl Profile {
    fn new(
        name: &'static str,
        rtt_us: u64,
        rate_bps: u64,
        loss: LossModel,
        buffer_bytes: Option<u64>,
    ) -> Self {
        let rtt = Duration::from_micros(rtt_us);
        Profile {
            name,
            rtt,
            rate_bps,
            loss,
            buffer_bytes: buffer_bytes.unwrap_or_else(|| bdp(rate_bps, rtt)),
            jitter: Jitter::default(),
            relayed: false,
        }
    }

    /// lan: 0.5 ms, 1 Gbit/s, no loss, 1 BDP (62.5 kB: a gigabit switch's shallow
    /// per-port buffer, docs/design.md).
    pub fn lan() -> Self {
        Profile::new("lan", 500, 1_000_000_000, LossModel::None, None)
    }
    /// wan20: 20 ms, 100 Mbit/s, no loss, 1 BDP.
    pub fn wan20() -> Self {
        Profile::new("wan20", 20_000, 100_000_000, LossModel::None, None)
    }
    /// wan100: 100 ms, 20 Mbit/s, 0.5 % random loss, 1 BDP.
    pub fn wan100() -> Self {
        Profile::new(
            "wan100",
            100_000,
            20_000_000,
            LossModel::Random(0.005),
            None,
        )
    }
    /// vpn300: 300 ms, 8 Mbit/s, 1 % random loss, 1 BDP.
    pub fn vpn300() -> Self {
        Profile::new("vpn300", 300_000, 8_000_000, LossModel::Random(0.01), None)
    }
    /// lossy: 60 ms, 10 Mbit/s, 3 % random loss, 1 BDP.
    pub fn lossy() -> Self {
        Profile::new("lossy", 60_000, 10_000_000, LossModel::Random(0.03), None)
    }
    /// bursty: 80 ms ± 20 ms (±10 ms each way), 20 Mbit/s, 2 % Gilbert–Elliott, 100 KB.
    pub fn bursty() -> Self {
        let mut p = Profile::new(
            "bursty",
            80_000,
            20_000_000,
            LossModel::bursts(0.02, GE_MEAN_BURST_PACKETS),
            Some(100_000),
        );
        p.jitter = Jitter {
            amplitude: Duration::from_millis(10),
            correlation: BURSTY_JITTER_CORRELATION,
        };
        p
    }
    /// sat600: 600 ms, 15 Mbit/s, 3 % Gilbert–Elliott, 500 KB.
    pub fn sat600() -> Self {
        Profile::new(
            "sat600",
            600_000,
            15_000_000,
            LossModel::bursts(0.03, GE_MEAN_BURST_PACKETS),
            Some(500_000),
        )
    }
    /// relay500: 500 ms, 2 Mbit/s, no loss, a deep buffer: 16 BDP (2 MB, 8 s of queue),
    /// like the TCP relays and Tor circuits of PR #1323 that buffer nearly without limit.
    /// Whole nodes run it through a simulated TCP relay ([`Profile::relayed`]).
    pub fn relay500() -> Self {
        let mut p = Profile::new(
            "relay500",
            500_000,
            2_000_000,
            LossModel::None,
            Some(16 * bdp(2_000_000, Duration::from_millis(500))),
        );
        p.relayed = true;
        p
    }

    /// Every profile, in docs/design.md's order.
    pub fn all() -> Vec<Profile> {
        vec![
            Profile::lan(),
            Profile::wan20(),
            Profile::wan100(),
            Profile::vpn300(),
            Profile::lossy(),
            Profile::bursty(),
            Profile::sat600(),
            Profile::relay500(),
        ]
    }

    /// The profile with this name, among [`Profile::all`] and [`Profile::shallow`].
    pub fn by_name(name: &str) -> Option<Profile> {
        Profile::all()
            .into_iter()
            .chain(Profile::shallow())
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }

    /// The same path with a different loss model.
    pub fn with_loss(mut self, loss: LossModel) -> Self {
        self.loss = loss;
        self
    }

    /// Bandwidth-delay product in bytes.
    pub fn bdp_bytes(&self) -> u64 {
        bdp(self.rate_bps, self.rtt)
    }

    /// Bottleneck rate in bytes per second.
    pub fn rate_bytes_per_sec(&self) -> f64 {
        self.rate_bps as f64 / 8.0
    }

    /// File bytes per second the bottleneck can carry in full packets (1371 of every 1428).
    pub fn payload_capacity_bytes_per_sec(&self) -> f64 {
        self.rate_bytes_per_sec() * FULL_PAYLOAD as f64 / FULL_WIRE_PACKET as f64
    }

    /// One direction of the path, recording per-packet samples.
    pub fn link_config(&self) -> LinkConfig {
        LinkConfig {
            delay: self.rtt / 2,
            jitter: self.jitter,
            loss: self.loss,
            bottleneck: Some(BottleneckConfig {
                rate_bps: self.rate_bps,
                queue_bytes: self.buffer_bytes,
            }),
            record_samples: true,
            ..LinkConfig::default()
        }
    }
}

/// Shallow-buffer paths: a kernel token-bucket shaper (`tc qdisc ... tbf`) on a veth pair
/// between two namespaces, the real-socket shape of a home router or a switch port whose
/// queue holds a few packets. Not in docs/design.md's table (so not in [`Profile::all`]):
/// they test that the controller neither overflows such a queue with its probes nor leaves
/// the link idle.
impl Profile {
    /// shallow100: 100 Mbit/s, 12.5 kB drop-tail queue (1 ms, 8 full packets), 0.2 ms of
    /// propagation (a veth pair's RTT between two processes on one host), no loss.
    pub fn shallow100() -> Self {
        Profile::new(
            "shallow100",
            200,
            100_000_000,
            LossModel::None,
            Some(12_500),
        )
    }
    /// shallow1g: 1 Gbit/s, 62.5 kB drop-tail queue (0.5 ms), 0.2 ms, no loss.
    pub fn shallow1g() -> Self {
        Profile::new(
            "shallow1g",
            200,
            1_000_000_000,
            LossModel::None,
            Some(62_500),
        )
    }

    /// The shallow-buffer profiles.
    pub fn shallow() -> Vec<Profile> {
        vec![Profile::shallow100(), Profile::shallow1g()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_follow_the_design_table() {
        assert_eq!(Profile::wan20().buffer_bytes, 250_000, "100 Mbit/s × 20 ms");
        assert_eq!(Profile::vpn300().buffer_bytes, 300_000, "8 Mbit/s × 300 ms");
        assert_eq!(Profile::lan().buffer_bytes, 62_500, "1 Gbit/s × 0.5 ms");
        assert_eq!(Profile::sat600().buffer_bytes, 500_000);
        assert!((Profile::sat600().loss.mean_loss() - 0.03).abs() < 1e-9);
        assert_eq!(Profile::all().len(), 8);
        let relayed: Vec<&str> = Profile::all()
            .iter()
            .filter(|p| p.relayed)
            .map(|p| p.name)
            .collect();
        assert_eq!(relayed, ["relay500"]);
        assert_eq!(
            Profile::by_name("RELAY500").map(|p| p.name),
            Some("relay500")
        );
        assert_eq!(Profile::shallow100().buffer_bytes, 12_500);
        assert_eq!(
            Profile::by_name("shallow1g").map(|p| p.buffer_bytes),
            Some(62_500)
        );
    }
}
