//! Where the parties of `attack-bench --link` run: three network namespaces, so the honest
//! transfer is limited by a link rather than by the CPU, and the flood reaches the victim
//! without taking that link's bandwidth.
//!
//! ```text
//!   namespace S (sender)                namespace V (victim)             namespace A (attacker)
//!   rustox send                         rustox recv on 10.78.1.2
//!   hs 10.78.1.1 ── tbf RATE ────────▶ vh 10.78.1.2
//!                ◀──────── tbf RATE ── vh
//!                                       va 10.78.2.2 ◀── unshaped veth ── aa 10.78.2.1
//!                                       route 10.78.4.0/23 via aa         lo 10.78.4.0/23 (sources)
//! ```
//!
//! Both directions of the honest veth pair are shaped by a token bucket (`tc qdisc ... tbf`)
//! to the link's rate, with a drop-tail queue of [`LinkShape::queue`] worth of bytes. This
//! kernel has no netem (`CONFIG_NET_SCH_NETEM` is not set; `emulator/mod.rs` says the
//! same), so the link adds no propagation delay: its round trip is the veth's few µs plus
//! whatever the queue holds. The attacker's veth pair has no qdisc at all. The attacker
//! runs in this process, on a thread that entered namespace A ([`AttackNet::run_attacker`]),
//! and every thread it starts is in A too; it reaches the victim's address through V's
//! `va`, and V routes A's source addresses (all of `10.78.4.0/23`, local on A's `lo`, for
//! the spoofed and pinning attacks' many sources) back the same way.
//!
//! The addresses (10.78.x) are private to these namespaces; the project's other
//! namespace tests use 10.77.x (`relay_switch.rs`) and 10.201.0.x (`emulator/`). Namespace
//! names carry this process's pid ([`NAMESPACE_PREFIX`]), so parallel runs never clash and
//! [`remove_stale_namespaces`] clears what a killed run left. Everything is deleted when the
//! [`AttackNet`] is dropped, also while a panic unwinds: the veths die with their namespaces.

use std::ffi::OsString;
use std::net::Ipv4Addr;
use std::process::Command;
use std::time::Duration;

use crate::emulator::{remove_stale_namespaces, veth_into, NetNs, NAMESPACE_PREFIX};

/// The victim's address in V, on the honest link's end; the attacker reaches it by route.
pub const VICTIM_IP: Ipv4Addr = Ipv4Addr::new(10, 78, 1, 2);
/// The honest sender's address in S.
const SENDER_IP: Ipv4Addr = Ipv4Addr::new(10, 78, 1, 1);
/// V's end of the attacker's veth.
const VICTIM_ATTACK_IP: Ipv4Addr = Ipv4Addr::new(10, 78, 2, 2);
/// A's end of the attacker's veth.
const ATTACKER_LINK_IP: Ipv4Addr = Ipv4Addr::new(10, 78, 2, 1);
/// The attacker's source addresses: a /23 on A's `lo`, all local there (Linux makes a whole
/// prefix on a loopback device local), so any of them can be bound.
const ATTACKER_SOURCES: &str = "10.78.4.1/23";
const ATTACKER_SOURCES_NET: &str = "10.78.4.0/23";

/// Ethernet frame of a full-size packet: 1500-byte MTU plus the 14-byte header tbf counts.
const FRAME: u64 = 1514;

/// The token bucket's depth: 1 ms at the link's rate, at least [`MIN_BURST`]. A bucket
/// must hold at least one frame; one millisecond keeps the link's bursts at the scale of the
/// kernel's timers, so the shaper neither smooths nor bursts beyond what a real link does.
const BURST_TIME: Duration = Duration::from_millis(1);
/// The smallest bucket: a few frames, so a slow link still passes full-size packets (and
/// segments of a GSO burst, which tbf splits when it exceeds the bucket).
const MIN_BURST: u64 = 8 * FRAME;

/// The smallest queue: enough frames that a slow link still queues a burst of packets.
const MIN_QUEUE: u64 = 16 * FRAME;

/// Where sources live: each attack's datagrams leave from these addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sources {
    /// On loopback, in the bench's own namespace: 127.0.0.0/8 is all local on Linux.
    Loopback,
    /// In namespace A of an [`AttackNet`]: `10.78.4.0/23`.
    Link,
}

impl Sources {
    /// The attacker's one ordinary address (single-socket floods, the friend spammers).
    pub fn host(self) -> Ipv4Addr {
        self.spoofed(1)
    }

    /// Address `last` (1–254) of the spoofed-source pool.
    pub fn spoofed(self, last: u8) -> Ipv4Addr {
        match self {
            Sources::Loopback => Ipv4Addr::new(127, 0, 0, last),
            Sources::Link => Ipv4Addr::new(10, 78, 4, last),
        }
    }

    /// Address `last` (1–254) of the pinning sessions' pool.
    pub fn pinned(self, last: u8) -> Ipv4Addr {
        match self {
            Sources::Loopback => Ipv4Addr::new(127, 0, 1, last),
            Sources::Link => Ipv4Addr::new(10, 78, 5, last),
        }
    }
}

/// The honest link: its rate each way and how long a full queue lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkShape {
    /// Bits per second, each direction.
    pub rate_bps: u64,
    /// The drop-tail queue, as the time it takes to drain at `rate_bps`. Sized as one
    /// bandwidth-delay product (the classic rule for a single loss-based flow to keep a
    /// link busy, Villamizar & Song 1994) of a path of this round trip.
    pub queue: Duration,
}

impl LinkShape {
    /// The token bucket's depth, bytes.
    pub fn burst_bytes(&self) -> u64 {
        (self.bytes_in(BURST_TIME)).max(MIN_BURST)
    }

    /// The queue's limit, bytes.
    pub fn queue_bytes(&self) -> u64 {
        self.bytes_in(self.queue).max(MIN_QUEUE)
    }

    fn bytes_in(&self, t: Duration) -> u64 {
        (self.rate_bps as f64 / 8.0 * t.as_secs_f64()).round() as u64
    }
}

/// The three namespaces and their veths; all deleted when dropped.
pub struct AttackNet {
    sender: NetNs,
    victim: NetNs,
    attacker: NetNs,
    shape: LinkShape,
}

impl AttackNet {
    /// Builds the namespaces, veths, addresses, routes and shapers. Needs root.
    pub fn build(shape: LinkShape) -> Result<AttackNet, String> {
        if !nix::unistd::geteuid().is_root() {
            return Err(
                "--link needs root (it creates network namespaces and veths); \
                        run as root, or pass --link 0 for plain loopback"
                    .into(),
            );
        }
        Command::new("ip")
            .arg("-V")
            .output()
            .map_err(|e| format!("--link needs iproute2's `ip` and `tc`: {e}"))?;
        remove_stale_namespaces();
        let pid = std::process::id();
        let make = |side: &str| {
            NetNs::create(&format!("{NAMESPACE_PREFIX}{pid}-atk-{side}"))
                .map_err(|e| format!("netns: {e}"))
        };
        // Each created namespace is owned at once, so an error below drops (deletes) it.
        let net = AttackNet {
            sender: make("s")?,
            victim: make("v")?,
            attacker: make("a")?,
            shape,
        };
        net.wire()?;
        Ok(net)
    }

    fn wire(&self) -> Result<(), String> {
        let (s, v, a) = (&self.sender, &self.victim, &self.attacker);
        // The veths are created inside V with their peers moved straight into S and A, so
        // no device name ever appears in the root namespace.
        ip(v, &veth_into("vh", "hs", s))?;
        ip(v, &veth_into("va", "aa", a))?;
        for (ns, dev, addr) in [
            (s, "hs", format!("{SENDER_IP}/24")),
            (v, "vh", format!("{VICTIM_IP}/24")),
            (v, "va", format!("{VICTIM_ATTACK_IP}/24")),
            (a, "aa", format!("{ATTACKER_LINK_IP}/24")),
        ] {
            ip(ns, &["addr", "add", &addr, "dev", dev])?;
            ip(ns, &["link", "set", dev, "up"])?;
        }
        for ns in [s, v, a] {
            ip(ns, &["link", "set", "lo", "up"])?;
        }
        ip(a, &["addr", "add", ATTACKER_SOURCES, "dev", "lo"])?;
        ip(
            a,
            &[
                "route",
                "add",
                &format!("{VICTIM_IP}/32"),
                "via",
                &VICTIM_ATTACK_IP.to_string(),
            ],
        )?;
        ip(
            v,
            &[
                "route",
                "add",
                ATTACKER_SOURCES_NET,
                "via",
                &ATTACKER_LINK_IP.to_string(),
            ],
        )?;
        for (ns, dev) in [(s, "hs"), (v, "vh")] {
            let rate = format!("{}bit", self.shape.rate_bps);
            let burst = self.shape.burst_bytes().to_string();
            let limit = self.shape.queue_bytes().to_string();
            let status = ns
                .command("tc")
                .args(["qdisc", "add", "dev", dev, "root", "tbf", "rate", &rate])
                .args(["burst", &burst, "limit", &limit])
                .stdout(std::process::Stdio::null())
                .status()
                .map_err(|e| format!("tc: {e}"))?;
            if !status.success() {
                return Err(format!(
                    "tc qdisc add dev {dev} root tbf rate {rate} burst {burst} limit {limit} \
                     failed in {}",
                    ns.name()
                ));
            }
        }
        Ok(())
    }

    /// How the honest link is shaped.
    pub fn shape(&self) -> LinkShape {
        self.shape
    }

    /// `ip netns exec V`: the prefix that starts the victim inside its namespace.
    pub fn victim_prefix(&self) -> Vec<OsString> {
        netns_exec(&self.victim)
    }

    /// `ip netns exec S`: the prefix that starts the honest sender inside its namespace.
    pub fn sender_prefix(&self) -> Vec<OsString> {
        netns_exec(&self.sender)
    }

    /// Runs `f` on a thread inside namespace A: every socket it opens, and every thread it
    /// starts, is the attacker's. Children it starts are in A too unless their command
    /// enters another namespace (the victim's and sender's prefixes do).
    pub fn run_attacker<T, F>(&self, f: F) -> Result<T, String>
    where
        T: Send,
        F: FnOnce() -> T + Send,
    {
        self.attacker.run_inside(f).map_err(|e| e.to_string())
    }
}

fn netns_exec(ns: &NetNs) -> Vec<OsString> {
    ["ip", "netns", "exec", ns.name()]
        .into_iter()
        .map(OsString::from)
        .collect()
}

fn ip(ns: &NetNs, args: &[&str]) -> Result<(), String> {
    ns.ip(args)
        .map(|_| ())
        .map_err(|e| format!("ip -n {} {}: {e}", ns.name(), args.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_100_mbit_link_queues_20_ms_in_250_kb_and_bursts_1_ms() {
        let shape = LinkShape {
            rate_bps: 100_000_000,
            queue: Duration::from_millis(20),
        };
        assert_eq!(shape.queue_bytes(), 250_000);
        assert_eq!(shape.burst_bytes(), MIN_BURST.max(12_500));
    }

    #[test]
    fn a_slow_link_still_holds_whole_frames() {
        let shape = LinkShape {
            rate_bps: 1_000_000,
            queue: Duration::from_millis(20),
        };
        assert_eq!(shape.burst_bytes(), MIN_BURST);
        assert_eq!(shape.queue_bytes(), MIN_QUEUE);
    }

    #[test]
    fn link_sources_stay_inside_the_attackers_routed_prefix() {
        assert_eq!(Sources::Link.host(), Ipv4Addr::new(10, 78, 4, 1));
        assert_eq!(Sources::Link.pinned(250), Ipv4Addr::new(10, 78, 5, 250));
        assert_eq!(Sources::Loopback.spoofed(2), Ipv4Addr::new(127, 0, 0, 2));
    }
}
