//! A link shaped by the kernel alone: two network namespaces joined by a veth pair whose
//! egress on each side is a token-bucket filter (`tc qdisc add dev D root tbf rate R burst
//! B limit L`). No process in user space touches a packet, so the link costs no CPU of the
//! kind the endpoints compete for, and at 1 Gbit/s it cannot be the bottleneck the way a
//! userspace emulator on a loaded machine can ([`crate::emulator`]).
//!
//! What it does not have: propagation delay, jitter or random loss. The host kernel has no
//! `netem` qdisc, so a path with a delay still needs the userspace emulator. The shaped
//! link is the shallow-buffer case: a round trip of tens of microseconds and a queue of
//! about a millisecond at the rate (docs/benchmarks.md "Shallow buffers").
//!
//! How tbf's knobs map onto a link (Linux `net/sched/sch_tbf.c`):
//! - `rate`: bits per second of what the qdisc sees, which on a veth is the whole Ethernet
//!   frame (14 header bytes plus the IP packet), so a full 1428-byte rustox datagram costs
//!   1442 bytes of the rate and a 1448-byte TCP segment 1514.
//! - `limit`: bytes the child bfifo holds while they wait for tokens: the queue. A packet
//!   that would take the backlog past it is dropped (drop-tail in bytes).
//! - `burst`: the bucket's depth. After an idle spell up to this many bytes leave at the
//!   veth's own speed, so it adds to what the link absorbs. The kernel derives the largest
//!   packet tbf passes whole from it (rounded down to its time ticks) and drops larger
//!   non-GSO packets: `burst 1514` becomes 1512 and would drop every full frame, so the
//!   least safe burst is two frames, [`MIN_BURST`].
//!
//! The named profiles set the burst to the limit (a bucket as deep as the queue): measured
//! here (docs/benchmarks.md "Shallow buffers", 2026-12-07), that is what reproduces the
//! reference figures for TCP CUBIC alone (0.925 of 100 Mbit/s and 0.900 of 1 Gbit/s, none
//! resent), while a two-frame bucket makes CUBIC resend 2.7 % at 100 Mbit/s and cannot
//! carry a gigabit at all on a busy host (its timer fires every 24 µs; CUBIC 0.51). The
//! `-small` profiles keep the two-frame bucket, for which the queue is the limit alone.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use serde::Serialize;

use crate::emulator::{
    remove_stale_namespaces, run_command, veth_into, EmulatorError, NetNs, Side, TwoHosts,
    NAMESPACE_PREFIX,
};

/// Namespace A's address on the veth pair.
pub const KERNEL_ADDR_A: Ipv4Addr = Ipv4Addr::new(10, 203, 0, 1);
/// Namespace B's address.
pub const KERNEL_ADDR_B: Ipv4Addr = Ipv4Addr::new(10, 203, 0, 2);

/// A full Ethernet frame at the veth's default MTU of 1500: 1500 + 14 header bytes.
pub const FRAME_BYTES: u64 = 1514;
/// The least bucket: two full frames, the least that lets a full frame through after the
/// kernel rounds the burst down to its ticks (`burst 3028` reads back as 3025).
pub const MIN_BURST: u64 = 2 * FRAME_BYTES;

/// Ethernet header bytes the qdisc counts on a veth beyond the IP packet.
pub const ETHERNET_HEADER: u64 = 14;

/// Distinguishes the links of one process.
static NEXT_LINK: AtomicU32 = AtomicU32::new(0);

/// A shaped link's parameters (each direction gets the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TbfConfig {
    /// Bits per second of Ethernet frames.
    pub rate_bps: u64,
    /// Bucket depth, bytes (at least one frame; see the module docs).
    pub burst_bytes: u64,
    /// Queue, bytes of frames waiting for tokens.
    pub limit_bytes: u64,
}

/// Why a [`TbfConfig`] cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TbfConfigError {
    /// A zero rate shapes nothing.
    #[error("the rate must be above zero")]
    ZeroRate,
    /// tbf would drop every full frame.
    #[error("burst {0} bytes is below two frames ({MIN_BURST}): tbf would drop full frames")]
    BurstTooSmall(u64),
    /// The queue could not hold one full frame.
    #[error("limit {0} bytes cannot hold one {FRAME_BYTES}-byte frame")]
    LimitTooSmall(u64),
}

impl TbfConfig {
    /// `rate_bps` with a queue of `limit_bytes` and a bucket as deep (module docs).
    pub fn new(rate_bps: u64, limit_bytes: u64) -> Self {
        TbfConfig {
            rate_bps,
            burst_bytes: limit_bytes,
            limit_bytes,
        }
    }

    /// The link's parameters checked against what tbf needs.
    pub fn validate(&self) -> Result<(), TbfConfigError> {
        if self.rate_bps == 0 {
            return Err(TbfConfigError::ZeroRate);
        }
        if self.burst_bytes < MIN_BURST {
            return Err(TbfConfigError::BurstTooSmall(self.burst_bytes));
        }
        if self.limit_bytes < FRAME_BYTES {
            return Err(TbfConfigError::LimitTooSmall(self.limit_bytes));
        }
        Ok(())
    }

    /// `tc` arguments installing the shaper as the root qdisc of `dev`.
    pub fn tc_args(&self, dev: &str) -> Vec<String> {
        [
            "qdisc",
            "add",
            "dev",
            dev,
            "root",
            "tbf",
            "rate",
            &format!("{}bit", self.rate_bps),
            "burst",
            &self.burst_bytes.to_string(),
            "limit",
            &self.limit_bytes.to_string(),
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    }

    /// Share of the rate left for a flow's payload when every frame is full: `payload`
    /// bytes of data in a frame of `ip_packet` + 14 bytes.
    pub fn payload_ceiling(payload: u64, ip_packet: u64) -> f64 {
        payload as f64 / (ip_packet + ETHERNET_HEADER) as f64
    }
}

/// The shaped links the bench knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KernelProfile {
    /// Its name on the command line.
    pub name: &'static str,
    /// The link.
    pub tbf: TbfConfig,
}

impl KernelProfile {
    /// 100 Mbit/s with a 12.5 kB queue (1 ms at the rate): a home router's shallow buffer.
    pub fn tbf100() -> Self {
        KernelProfile {
            name: "tbf100",
            tbf: TbfConfig::new(100_000_000, 12_500),
        }
    }

    /// 1 Gbit/s with a 62.5 kB queue (0.5 ms): a gigabit switch port, as the simulator's
    /// `lan` profile (docs/design.md).
    pub fn tbf1g() -> Self {
        KernelProfile {
            name: "tbf1g",
            tbf: TbfConfig::new(1_000_000_000, 62_500),
        }
    }

    /// `self` with the least bucket, [`MIN_BURST`]: the queue is then the limit alone,
    /// and the link passes no more than two frames at once after a pause.
    pub fn small_bucket(self, name: &'static str) -> Self {
        KernelProfile {
            name,
            tbf: TbfConfig {
                burst_bytes: MIN_BURST,
                ..self.tbf
            },
        }
    }

    /// Every named profile: tbf100 and tbf1g, and each with the least bucket (`-small`).
    pub fn all() -> [Self; 4] {
        [
            Self::tbf100(),
            Self::tbf1g(),
            Self::tbf100().small_bucket("tbf100-small"),
            Self::tbf1g().small_bucket("tbf1g-small"),
        ]
    }

    /// A profile by name (case-insensitive).
    pub fn by_name(name: &str) -> Option<Self> {
        Self::all()
            .into_iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }
}

/// One direction's qdisc counters (`tc -s -j qdisc show`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct QdiscCounters {
    /// Frames the qdisc passed on.
    pub packets: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Frames dropped (the queue was full, or a frame was larger than the bucket).
    pub drops: u64,
    /// Times a frame had to wait for tokens.
    pub overlimits: u64,
}

impl QdiscCounters {
    /// The root tbf's counters in `tc -s -j qdisc show dev D`'s output; `None` if there is
    /// no tbf or a counter is missing.
    pub fn parse(json: &str) -> Option<Self> {
        let value: serde_json::Value = serde_json::from_str(json).ok()?;
        let tbf = value
            .as_array()?
            .iter()
            .find(|q| q.get("kind").and_then(serde_json::Value::as_str) == Some("tbf"))?;
        let field = |name: &str| tbf.get(name).and_then(serde_json::Value::as_u64);
        Some(QdiscCounters {
            packets: field("packets")?,
            bytes: field("bytes")?,
            drops: field("drops")?,
            overlimits: field("overlimits")?,
        })
    }
}

/// Two namespaces joined by a tbf-shaped veth pair; torn down when dropped.
pub struct KernelLink {
    namespaces: [NetNs; 2],
    tbf: TbfConfig,
}

/// The veth ends' names inside their namespaces.
const DEVICES: [&str; 2] = ["ka", "kb"];

impl KernelLink {
    /// Builds the namespaces, the veth pair and both shapers.
    pub fn new(tbf: TbfConfig) -> Result<Self, EmulatorError> {
        tbf.validate()
            .map_err(|e| EmulatorError::Child(e.to_string()))?;
        crate::emulator::check_prerequisites()?;
        remove_stale_namespaces();
        let pid = std::process::id();
        let n = NEXT_LINK.fetch_add(1, Ordering::Relaxed);
        let name = |side: &str| format!("{NAMESPACE_PREFIX}{pid}-k{n}-{side}");
        let namespaces = [NetNs::create(&name("a"))?, NetNs::create(&name("b"))?];
        let [a, b] = &namespaces;
        a.ip(&veth_into(DEVICES[0], DEVICES[1], b))?;
        for ((ns, dev), addr) in namespaces
            .iter()
            .zip(DEVICES)
            .zip([KERNEL_ADDR_A, KERNEL_ADDR_B])
        {
            disable_ipv6(ns)?;
            ns.ip(&["addr", "add", &format!("{addr}/24"), "dev", dev])?;
            ns.ip(&["link", "set", dev, "up"])?;
            ns.ip(&["link", "set", "lo", "up"])?;
            let mut tc = ns.command("tc");
            tc.args(tbf.tc_args(dev));
            run_command(&mut tc)?;
        }
        Ok(KernelLink { namespaces, tbf })
    }

    /// The shaper's parameters.
    pub fn tbf(&self) -> TbfConfig {
        self.tbf
    }

    /// A UDP socket bound in `side`'s namespace to its address and `port` (0: any).
    pub fn udp_socket(&self, side: Side, port: u16) -> Result<UdpSocket, EmulatorError> {
        let ns = &self.namespaces[side.index()];
        let addr = SocketAddr::from((self.addr(side), port));
        ns.run_inside(move || UdpSocket::bind(addr))?
            .map_err(|source| EmulatorError::Setns {
                name: ns.name().to_owned(),
                source,
            })
    }

    /// The counters of the qdisc on `side`'s egress (side A's carries A → B).
    pub fn qdisc(&self, side: Side) -> Result<QdiscCounters, EmulatorError> {
        let i = side.index();
        let mut tc = self.namespaces[i].command("tc");
        tc.args(["-s", "-j", "qdisc", "show", "dev", DEVICES[i]]);
        let out = run_command(&mut tc)?;
        QdiscCounters::parse(&out).ok_or_else(|| EmulatorError::Parse {
            command: format!("tc -s -j qdisc show dev {}", DEVICES[i]),
            detail: "no tbf counters".into(),
        })
    }
}

impl TwoHosts for KernelLink {
    fn command(&self, side: Side, program: &str) -> Command {
        self.namespaces[side.index()].command(program)
    }

    fn addr(&self, side: Side) -> Ipv4Addr {
        [KERNEL_ADDR_A, KERNEL_ADDR_B][side.index()]
    }
}

/// IPv6 off, so the only frames on the link are the ones a run sends.
fn disable_ipv6(ns: &NetNs) -> Result<(), EmulatorError> {
    ns.run_inside(|| {
        for knob in ["all", "default"] {
            std::fs::write(format!("/proc/sys/net/ipv6/conf/{knob}/disable_ipv6"), "1")?;
        }
        Ok::<_, std::io::Error>(())
    })?
    .map_err(|source| EmulatorError::Setns {
        name: ns.name().to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tc_command_names_rate_burst_and_limit_in_tc_units() {
        let args = KernelProfile::tbf100().tbf.tc_args("ka");
        assert_eq!(
            args.join(" "),
            "qdisc add dev ka root tbf rate 100000000bit burst 12500 limit 12500"
        );
        let gig = KernelProfile::by_name("TBF1G").unwrap().tbf;
        assert_eq!(gig.rate_bps, 1_000_000_000);
        assert_eq!(gig.limit_bytes, 62_500);
        assert!(KernelProfile::by_name("tbf10").is_none());
        let small = KernelProfile::by_name("tbf100-small").unwrap().tbf;
        assert_eq!((small.burst_bytes, small.limit_bytes), (3028, 12_500));
        assert_eq!(small.validate(), Ok(()));
    }

    #[test]
    fn a_burst_below_two_frames_or_a_queue_below_one_is_refused() {
        let ok = TbfConfig::new(100_000_000, 12_500);
        assert_eq!(ok.validate(), Ok(()));
        let small_burst = TbfConfig {
            burst_bytes: FRAME_BYTES,
            ..ok
        };
        assert_eq!(
            small_burst.validate(),
            Err(TbfConfigError::BurstTooSmall(FRAME_BYTES))
        );
        let small_queue = TbfConfig {
            limit_bytes: 1000,
            ..ok
        };
        assert_eq!(
            small_queue.validate(),
            Err(TbfConfigError::LimitTooSmall(1000))
        );
        let zero = TbfConfig { rate_bps: 0, ..ok };
        assert_eq!(zero.validate(), Err(TbfConfigError::ZeroRate));
    }

    #[test]
    fn ceilings_count_the_ethernet_header() {
        // rustox: 1371 file bytes in a 1428-byte datagram; TCP: a 1448-byte segment (MSS
        // with timestamps) in a 1500-byte packet.
        let rustox = TbfConfig::payload_ceiling(1371, 1428);
        let tcp = TbfConfig::payload_ceiling(1448, 1500);
        assert!((rustox - 0.9508).abs() < 1e-4, "{rustox}");
        assert!((tcp - 0.9564).abs() < 1e-4, "{tcp}");
    }

    #[test]
    fn qdisc_counters_parse_from_tc_json() {
        let json = r#"[{"kind":"tbf","handle":"8034:","root":true,"refcnt":3,"options":{"rate":12500000,"burst":3025,"lat":758},"bytes":90,"packets":1,"drops":2,"overlimits":7,"requeues":0,"backlog":0,"qlen":0}]"#;
        assert_eq!(
            QdiscCounters::parse(json),
            Some(QdiscCounters {
                packets: 1,
                bytes: 90,
                drops: 2,
                overlimits: 7
            })
        );
        assert_eq!(QdiscCounters::parse(r#"[{"kind":"noqueue"}]"#), None);
        assert_eq!(QdiscCounters::parse("not json"), None);
    }
}
