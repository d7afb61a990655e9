//! What every mode shares: the run's setup, the simulator's matching transfer, source
//! files, deadlines, and the emulator's figures for a run.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::RngCore;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use rustox_auto_tests::emulator::{
    CliTransferSpec, EmulatorOptions, EmulatorReport, LatenessSummary, Side, Testbed, TestbedConfig,
};
use rustox_net_crypto::ControllerKind;
use rustox_simulator::{controller_name, percentile, DriverModel, Profile, TransferSpec};
use serde::Serialize;

/// First UDP port the receivers listen on (Tox's default); flow i uses this + i.
pub const FIRST_PORT: u16 = 33445;
/// A run is abandoned after this many times its ideal duration, plus [`TIMEOUT_SLACK`].
pub const TIMEOUT_FACTOR: u32 = 20;
pub const TIMEOUT_SLACK: Duration = Duration::from_secs(30);

/// What every mode needs.
pub struct Setup {
    pub rustox: PathBuf,
    pub sim_driver: Option<DriverModel>,
    pub controller: ControllerKind,
    pub work: PathBuf,
    pub options: EmulatorOptions,
}

/// The simulator's transfer matching a real run, its hosts under `driver`. The only place
/// that builds a [`TransferSpec`], so a change to its fields is made here once.
pub fn sim_spec(
    profile: &Profile,
    controller: ControllerKind,
    seed: u64,
    bytes: u64,
    driver: &Option<DriverModel>,
) -> TransferSpec {
    let mut spec = TransferSpec::new(profile.clone(), controller, seed, bytes);
    spec.driver = driver.clone();
    spec
}

/// A file of `size` seeded random bytes in `work`, made once per size.
pub fn source_file(work: &Path, size: u64) -> Result<PathBuf, String> {
    let path = work.join(format!("source-{size}.bin"));
    if path.exists() {
        return Ok(path);
    }
    let err = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let mut out = BufWriter::new(File::create(&path).map_err(err)?);
    let mut rng = ChaCha8Rng::seed_from_u64(size);
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        rng.fill_bytes(&mut chunk[..n]);
        out.write_all(&chunk[..n]).map_err(err)?;
        left -= n as u64;
    }
    out.flush().map_err(err)?;
    Ok(path)
}

/// Deadline for a run moving `bytes` per flow, `flows` flows sharing the link.
pub fn deadline(profile: &Profile, bytes: u64, flows: u32) -> Instant {
    let ideal = bytes as f64 * f64::from(flows) / profile.payload_capacity_bytes_per_sec();
    Instant::now() + Duration::from_secs_f64(ideal) * TIMEOUT_FACTOR + TIMEOUT_SLACK
}

pub fn testbed(profile: &Profile, seed: u64, setup: &Setup) -> Result<Testbed, String> {
    let mut config = TestbedConfig::from_profile(profile, seed);
    config.options = setup.options.clone();
    Testbed::new(config).map_err(|e| e.to_string())
}

pub fn transfer_spec(setup: &Setup, port: u16, file: &Path) -> CliTransferSpec {
    CliTransferSpec {
        rustox: setup.rustox.clone(),
        port,
        controller: controller_name(setup.controller).to_owned(),
        file: file.to_path_buf(),
        work_dir: setup.work.clone(),
    }
}

/// Drops outside the link model during a run: TUN queue overflows and UDP socket buffer
/// overflows in either namespace.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct HostDrops {
    pub tun: u64,
    pub udp_rcvbuf: u64,
}

pub fn host_drops(bed: &Testbed) -> HostDrops {
    let mut d = HostDrops::default();
    for side in [Side::A, Side::B] {
        d.tun += bed.tun_drops(side).unwrap_or(0);
        d.udp_rcvbuf += bed.udp_counters(side).map_or(0, |c| c.rcvbuf_errors);
    }
    d
}

/// What the emulator saw on the data direction.
#[derive(Debug, Clone, Serialize)]
pub struct LinkFigures {
    pub loss_drops: u64,
    pub queue_drops: u64,
    pub queue_p95_ms: Option<f64>,
    pub lateness: LatenessSummary,
    /// Fraction of the time the emulator thread was not asleep.
    pub emulator_busy: Option<f64>,
    pub pending_overflow: u64,
    pub host_drops: HostDrops,
    /// The emulator thread ran under SCHED_FIFO.
    pub realtime: bool,
    /// The machine's 1-minute load average when the run ended (2 cores: above 2 means
    /// the endpoints and the emulator waited for CPU).
    pub load1: Option<f64>,
    /// Share of the machine's CPU time left idle during the run: near 0, the endpoints and
    /// the emulator (and whatever else runs) used every core, and the figures may be
    /// CPU-bound rather than the transport's.
    pub cpu_idle: Option<f64>,
}

pub fn link_figures(report: &EmulatorReport, host_drops: HostDrops, cpu: &CpuMeter) -> LinkFigures {
    let fwd = &report.stats.a_to_b;
    let mut delays: Vec<u32> = report
        .a_to_b
        .samples
        .iter()
        .map(|s| s.queue_delay_us)
        .collect();
    LinkFigures {
        loss_drops: fwd.link.dropped_loss,
        queue_drops: fwd.link.dropped_queue,
        queue_p95_ms: percentile(&mut delays, 0.95).map(|us| f64::from(us) / 1000.0),
        lateness: report.stats.lateness.summary(),
        emulator_busy: report.stats.busy_fraction(),
        pending_overflow: fwd.pending_overflow + report.stats.b_to_a.pending_overflow,
        host_drops,
        realtime: report.stats.realtime,
        load1: load_average(),
        cpu_idle: cpu.idle_fraction(),
    }
}

/// Machine-wide CPU time since it was started (/proc/stat's first line).
pub struct CpuMeter {
    start: Option<(u64, u64)>,
}

impl CpuMeter {
    pub fn start() -> Self {
        CpuMeter { start: cpu_times() }
    }

    /// Idle share of all CPU time since `start`.
    pub fn idle_fraction(&self) -> Option<f64> {
        let (total0, idle0) = self.start?;
        let (total1, idle1) = cpu_times()?;
        let total = total1.checked_sub(total0).filter(|t| *t > 0)?;
        Some(idle1.saturating_sub(idle0) as f64 / total as f64)
    }
}

/// (all jiffies, idle + iowait jiffies) summed over CPUs.
fn cpu_times() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    Some((fields.iter().sum(), idle))
}

/// The 1-minute load average (/proc/loadavg).
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
