//! Two hosts joined by an emulated path: namespaces A and B, a TUN device in each, and the
//! emulator thread between them.
//!
//! Usage (a client and a server, one in each namespace):
//!
//! ```no_run
//! use rustox_auto_tests::emulator::{Side, Testbed, TestbedConfig};
//! use rustox_simulator::Profile;
//!
//! let bed = Testbed::new(TestbedConfig::from_profile(&Profile::wan100(), 1)).unwrap();
//! let server = bed.command(Side::B, "iperf3").args(["-s", "-1"]).spawn().unwrap();
//! let to = bed.addr(Side::B).to_string();
//! let client = bed.command(Side::A, "iperf3").args(["-c", &to]).output().unwrap();
//! let report = bed.finish().unwrap(); // stops the emulator; namespaces go on drop
//! ```

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use rustox_simulator::{derive_rng, Link, LinkConfig, Profile, StreamKind};
use tun_rs::{DeviceBuilder, Layer, SyncDevice};

use super::engine::{EmulatorOptions, Engine, EngineOutput};
use super::hosts::Side;
use super::namespace::{command_line, remove_stale_namespaces, run, NetNs, NAMESPACE_PREFIX};
use super::plain::{DirectionModel, PlainLink};
use super::stats::{EmulatorReport, EmulatorStats, UdpCounters};
use super::EmulatorError;

/// Namespace A's address (its end of the point-to-point link).
pub const ADDR_A: Ipv4Addr = Ipv4Addr::new(10, 201, 0, 1);
/// Namespace B's address.
pub const ADDR_B: Ipv4Addr = Ipv4Addr::new(10, 201, 0, 2);

/// MTU of both TUN devices: Ethernet's, so a full 1400-byte net_crypto datagram (1428 on
/// the wire) passes unfragmented as on a real path.
const MTU: u16 = 1500;

/// TUN transmit queue, packets: the kernel's side of the emulator's read loop. The default
/// 500 could overflow while the emulator thread is descheduled for a few ms at 1 Gbit/s
/// (88 packets per ms); 10 000 covers >100 ms at that rate. Overflows still show in
/// [`Testbed::tun_drops`].
const TX_QUEUE_LEN: u32 = 10_000;

/// Distinguishes the testbeds of one process.
static NEXT_TESTBED: AtomicU32 = AtomicU32::new(0);

/// What to build.
#[derive(Debug, Clone)]
pub struct TestbedConfig {
    /// Link model from A to B.
    pub a_to_b: LinkConfig,
    /// Link model from B to A.
    pub b_to_a: LinkConfig,
    /// Seed of the links' random streams: A → B draws from the stream the simulator gives
    /// its first link under this seed, B → A from the second, as in
    /// [`transfer::setup_pair`](rustox_simulator::setup_pair).
    pub seed: u64,
    /// Tuning of the emulator loop.
    pub options: EmulatorOptions,
}

impl TestbedConfig {
    /// The same link both ways.
    pub fn symmetric(link: LinkConfig, seed: u64) -> Self {
        TestbedConfig {
            a_to_b: link.clone(),
            b_to_a: link,
            seed,
            options: EmulatorOptions::default(),
        }
    }

    /// A profile's path, each direction from [`Profile::link_config`] as the simulator
    /// builds it.
    pub fn from_profile(profile: &Profile, seed: u64) -> Self {
        TestbedConfig {
            a_to_b: profile.link_config(),
            b_to_a: profile.link_config(),
            seed,
            options: EmulatorOptions::default(),
        }
    }
}

/// Root, `/dev/net/tun` and iproute2: what a [`Testbed`] needs. The error says which is
/// missing.
pub fn check_prerequisites() -> Result<(), EmulatorError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(EmulatorError::NotRoot);
    }
    if !Path::new("/dev/net/tun").exists() {
        return Err(EmulatorError::NoTun);
    }
    run(Command::new("ip").arg("-V")).map_err(|e| match e {
        EmulatorError::Spawn { source, .. } => EmulatorError::NoIpCommand(source),
        other => other,
    })?;
    Ok(())
}

/// The running emulator thread.
struct Running {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<EngineOutput>,
}

/// Two namespaces joined by emulated links; torn down when dropped.
///
/// Namespace A holds [`ADDR_A`] and B holds [`ADDR_B`], each on a point-to-point TUN device
/// whose peer is the other address, with `lo` up and IPv6 off (so the only packets on the
/// link are the ones a test sends). Commands run inside with [`Testbed::command`]; sockets
/// can be opened inside from this process with [`Testbed::run_inside`].
pub struct Testbed {
    namespaces: [NetNs; 2],
    devices: [String; 2],
    /// Time zero of the emulator's clock (the links' timestamps count from here).
    origin: Instant,
    shared: Arc<Mutex<EmulatorStats>>,
    running: Option<Running>,
}

impl Testbed {
    /// Builds the namespaces and devices and starts the emulator.
    pub fn new(config: TestbedConfig) -> Result<Self, EmulatorError> {
        check_prerequisites()?;
        remove_stale_namespaces();
        let pid = std::process::id();
        let n = NEXT_TESTBED.fetch_add(1, Ordering::Relaxed);
        // Device names live in the root namespace until moved: at most 15 bytes, unique per
        // process and testbed.
        let devices = [
            format!("rx{pid}.{}a", n % 10_000),
            format!("rx{pid}.{}b", n % 10_000),
        ];
        let namespaces = [
            NetNs::create(&format!("{NAMESPACE_PREFIX}{pid}-{n}-a"))?,
            NetNs::create(&format!("{NAMESPACE_PREFIX}{pid}-{n}-b"))?,
        ];
        let tuns = [
            host_device(&namespaces[0], &devices[0], ADDR_A, ADDR_B)?,
            host_device(&namespaces[1], &devices[1], ADDR_B, ADDR_A)?,
        ];
        let model = |link: LinkConfig, stream| {
            if config.options.plain {
                DirectionModel::Plain(Box::new(PlainLink::from_config(&link)))
            } else {
                let rng = derive_rng(config.seed, StreamKind::Link, stream);
                DirectionModel::Profile(Box::new(Link::new(link, rng)))
            }
        };
        let links = [model(config.a_to_b, 0), model(config.b_to_a, 1)];
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Mutex::new(EmulatorStats::default()));
        let origin = Instant::now();
        let engine = Engine::new(
            tuns,
            links,
            origin,
            config.options,
            stop.clone(),
            shared.clone(),
        )
        .map_err(|source| EmulatorError::Tun {
            name: devices[0].clone(),
            source,
        })?;
        let thread = std::thread::Builder::new()
            .name("link-emulator".into())
            .spawn(move || engine.run())
            .map_err(|e| EmulatorError::Thread(e.to_string()))?;
        Ok(Testbed {
            namespaces,
            devices,
            origin,
            shared,
            running: Some(Running { stop, thread }),
        })
    }

    /// The namespace of `side`, as `ip netns` names it.
    pub fn namespace(&self, side: Side) -> &str {
        self.namespaces[side.index()].name()
    }

    /// The address of `side`.
    pub fn addr(&self, side: Side) -> Ipv4Addr {
        [ADDR_A, ADDR_B][side.index()]
    }

    /// The name of `side`'s TUN device (inside its namespace).
    pub fn device(&self, side: Side) -> &str {
        &self.devices[side.index()]
    }

    /// `ip netns exec NS program`: a command that runs inside `side`'s namespace.
    pub fn command(&self, side: Side, program: &str) -> Command {
        self.namespaces[side.index()].command(program)
    }

    /// Runs `f` on a thread inside `side`'s namespace (see [`NetNs::run_inside`]).
    pub fn run_inside<T, F>(&self, side: Side, f: F) -> Result<T, EmulatorError>
    where
        T: Send,
        F: FnOnce() -> T + Send,
    {
        self.namespaces[side.index()].run_inside(f)
    }

    /// A UDP socket bound in `side`'s namespace to its address and `port` (0: any).
    pub fn udp_socket(&self, side: Side, port: u16) -> Result<UdpSocket, EmulatorError> {
        let addr = SocketAddr::from((self.addr(side), port));
        self.run_inside(side, move || UdpSocket::bind(addr))?
            .map_err(|source| EmulatorError::Setns {
                name: self.namespace(side).to_owned(),
                source,
            })
    }

    /// The instant the emulator's clock reads zero: link samples' `entered` times and
    /// flow intervals count from here, so a process in the same host can relate its own
    /// [`Instant`]s to them.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// The emulator's counters now (refreshed every 20 ms while it runs).
    pub fn stats(&self) -> EmulatorStats {
        self.shared.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Packets the kernel dropped at `side`'s TUN device before the emulator read them (its
    /// transmit queue was full): drops the link model did not make. Should stay 0.
    pub fn tun_drops(&self, side: Side) -> Result<u64, EmulatorError> {
        let ns = &self.namespaces[side.index()];
        let args = ["-s", "-j", "link", "show", "dev", self.device(side)];
        let out = ns.ip(&args)?;
        let parse_error = |detail: &str| EmulatorError::Parse {
            command: format!("ip -n {} {}", ns.name(), args.join(" ")),
            detail: detail.to_owned(),
        };
        let json: serde_json::Value =
            serde_json::from_str(&out).map_err(|e| parse_error(&e.to_string()))?;
        json.get(0)
            .and_then(|l| l.get("stats64"))
            .and_then(|s| s.get("tx"))
            .and_then(|t| t.get("dropped"))
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| parse_error("no stats64.tx.dropped"))
    }

    /// The kernel's UDP counters inside `side`'s namespace (socket buffer overflows there
    /// are drops the link model did not make).
    pub fn udp_counters(&self, side: Side) -> Result<UdpCounters, EmulatorError> {
        let mut cmd = self.command(side, "cat");
        cmd.arg("/proc/net/snmp");
        let line = command_line(&cmd);
        let out = run(&mut cmd)?;
        UdpCounters::parse(&out).ok_or(EmulatorError::Parse {
            command: line,
            detail: "no Udp: lines".into(),
        })
    }

    /// Stops the emulator and returns everything it measured, the links' full statistics
    /// included. Packets still in flight are discarded. The namespaces stay until `self`
    /// is dropped (here, on return).
    pub fn finish(mut self) -> Result<EmulatorReport, EmulatorError> {
        let output = self.stop()?;
        Ok(EmulatorReport {
            stats: output.stats,
            a_to_b: output.a_to_b.stats().clone(),
            b_to_a: output.b_to_a.stats().clone(),
        })
    }

    fn stop(&mut self) -> Result<EngineOutput, EmulatorError> {
        let running = self
            .running
            .take()
            .ok_or_else(|| EmulatorError::Thread("already stopped".into()))?;
        running.stop.store(true, Ordering::Relaxed);
        running
            .thread
            .join()
            .map_err(|_| EmulatorError::Thread("the emulator thread panicked".into()))
    }
}

impl super::TwoHosts for Testbed {
    fn command(&self, side: Side, program: &str) -> Command {
        Testbed::command(self, side, program)
    }
    fn addr(&self, side: Side) -> Ipv4Addr {
        Testbed::addr(self, side)
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        // The thread owns the TUN descriptors: stopping it closes them, which removes the
        // devices; the namespaces are deleted after this, as the fields drop.
        if self.running.is_some() {
            let _ = self.stop();
        }
    }
}

/// Namespace `ns` made ready and given TUN device `dev` with address `local` and `peer` at
/// the other end; the device's descriptor, for the emulator.
fn host_device(
    ns: &NetNs,
    dev: &str,
    local: Ipv4Addr,
    peer: Ipv4Addr,
) -> Result<SyncDevice, EmulatorError> {
    prepare_namespace(ns)?;
    let tun = create_tun(dev)?;
    move_and_configure(ns, dev, local, peer)?;
    Ok(tun)
}

/// IPv6 off (no router solicitations or DAD on the link) and loopback up.
fn prepare_namespace(ns: &NetNs) -> Result<(), EmulatorError> {
    ns.run_inside(|| {
        for knob in ["all", "default"] {
            std::fs::write(format!("/proc/sys/net/ipv6/conf/{knob}/disable_ipv6"), "1")?;
        }
        Ok::<_, std::io::Error>(())
    })?
    .map_err(|source| EmulatorError::Setns {
        name: ns.name().to_owned(),
        source,
    })?;
    ns.ip(&["link", "set", "lo", "up"])?;
    Ok(())
}

/// A layer-3 TUN device without packet information (IFF_NO_PI), down, in the root
/// namespace.
fn create_tun(name: &str) -> Result<SyncDevice, EmulatorError> {
    DeviceBuilder::new()
        .name(name)
        .layer(Layer::L3)
        .packet_information(false)
        .mtu(MTU)
        .tx_queue_len(TX_QUEUE_LEN)
        .enable(false)
        .build_sync()
        .map_err(|source| EmulatorError::Tun {
            name: name.to_owned(),
            source,
        })
}

/// Moves `dev` into `ns` (its descriptor keeps working), gives it `local` with `peer` on the
/// other end, and brings it up.
fn move_and_configure(
    ns: &NetNs,
    dev: &str,
    local: Ipv4Addr,
    peer: Ipv4Addr,
) -> Result<(), EmulatorError> {
    run(Command::new("ip").args(["link", "set", dev, "netns", ns.name()]))?;
    ns.ip(&[
        "addr",
        "add",
        &local.to_string(),
        "peer",
        &format!("{peer}/32"),
        "dev",
        dev,
    ])?;
    ns.ip(&["link", "set", dev, "up"])?;
    Ok(())
}
