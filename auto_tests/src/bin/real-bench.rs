//! `real-bench`: the simulator's link profiles applied to real sockets, so no simulated
//! figure has to be trusted alone (DESIGN.md "Link profiles").
//!
//! For each profile it runs the real `rustox recv --once` in namespace B and `rustox send`
//! in namespace A through the emulator (`rustox_auto_tests::emulator`), then the same
//! profile, size, controller and seed in the simulator, and prints both side by side.
//! `--flows N` runs N transfers at once through one link; `--tcp` runs one next to an iperf3
//! TCP CUBIC flow; both report each flow's share while all were active.
//!
//! ```text
//! cargo build --release -p rustox -p rustox-auto-tests --bin real-bench
//! target/release/real-bench --profiles wan100,lan-bdp        # as root
//! ```
//!
//! Needs root, /dev/net/tun, iproute2, and for `--tcp` iperf3.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use rand::RngCore;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use rustox_auto_tests::driver_model::{driver_by_name, DriverModel};
use rustox_auto_tests::emulator::{
    calibrate, check_prerequisites, merged, overlap, rates_bps, rustox_beside_current_exe,
    CalibrationSpec, CliOutcome, CliTransfer, CliTransferSpec, EmulatorOptions, EmulatorReport,
    LatenessSummary, Side, Testbed, TestbedConfig, PROTO_TCP, PROTO_UDP,
};
use rustox_auto_tests::link::{BottleneckConfig, LossModel};
use rustox_auto_tests::metrics::{jain_index, percentile};
use rustox_auto_tests::profiles::{Profile, FULL_WIRE_PACKET};
use rustox_auto_tests::transfer::{
    controller_by_name, controller_name, run_transfer, TransferMetrics, TransferSpec,
};
use rustox_net_crypto::ControllerKind;
use serde::Serialize;

/// First UDP port the receivers listen on (Tox's default); flow i uses this + i.
const FIRST_PORT: u16 = 33445;
/// iperf3's port.
const IPERF_PORT: u16 = 5201;
/// Default size aims at this many seconds at the bottleneck rate: long enough that ramp-up
/// and the final round trips are a small part of the figure.
const AUTO_SIZE_SECONDS: f64 = 8.0;
/// Bounds of the automatic size (a gigabit LAN would otherwise want a 1 GB file).
const AUTO_SIZE_MIN: u64 = 4 << 20;
const AUTO_SIZE_MAX: u64 = 256 << 20;
/// A run is abandoned after this many times its ideal duration, plus [`TIMEOUT_SLACK`].
const TIMEOUT_FACTOR: u32 = 20;
const TIMEOUT_SLACK: Duration = Duration::from_secs(30);

#[derive(Parser, Debug)]
#[command(
    about = "Real rustox send/recv through the simulator's link models, beside the simulator"
)]
struct Args {
    /// Profiles (comma-separated): DESIGN.md names, or NAME-noloss for one without its
    /// random loss.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "wan20,wan100,vpn300,lossy,lan"
    )]
    profiles: Vec<String>,
    /// File size (e.g. 20M, 64MiB, 1G; binary units). Default: about 8 s at the
    /// bottleneck rate, 4–256 MiB.
    #[arg(long)]
    size: Option<String>,
    /// Congestion controller of both sides: bbr, cubic or legacy.
    #[arg(long, default_value = "bbr")]
    controller: String,
    /// Runs per profile (seeds --seed, --seed + 1, ...).
    #[arg(long, default_value_t = 1)]
    runs: u64,
    /// First seed (link loss streams, same in the simulator).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Concurrent rustox transfers through the same link (sharing mode when > 1).
    #[arg(long, default_value_t = 1)]
    flows: u16,
    /// One rustox transfer next to one iperf3 TCP CUBIC flow.
    #[arg(long)]
    tcp: bool,
    /// Check the instrument instead: a paced UDP flow at this fraction of each profile's
    /// bottleneck (e.g. 0.9) for 3 s; shows the emulator's input lag and the drops it alone
    /// would cause at the profile's buffer.
    #[arg(long)]
    calibrate: Option<f64>,
    /// Skip the simulator.
    #[arg(long)]
    no_sim: bool,
    /// Driver model of the simulated hosts: cli (the model of `rustox send`/`recv`'s
    /// driver), tokio, precise or exact (every input handled the instant it happens).
    #[arg(long, default_value = "cli")]
    sim_driver: String,
    /// JSON lines instead of tables.
    #[arg(long)]
    json: bool,
    /// The rustox binary (default: beside this program).
    #[arg(long)]
    rustox: Option<PathBuf>,
    /// The emulator spins instead of sleeping this close to a release (µs).
    #[arg(long)]
    spin_us: Option<u64>,
    /// Keep the emulator thread at normal priority (default: SCHED_FIFO, see
    /// `EmulatorOptions::realtime_priority`).
    #[arg(long)]
    no_realtime: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("real-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What every mode needs.
struct Setup {
    rustox: PathBuf,
    sim_driver: Option<DriverModel>,
    controller: ControllerKind,
    work: PathBuf,
    options: EmulatorOptions,
}

fn run(args: &Args) -> Result<(), String> {
    check_prerequisites().map_err(|e| e.to_string())?;
    let rustox = match &args.rustox {
        Some(p) => p.clone(),
        None => rustox_beside_current_exe()?,
    };
    let controller = controller_by_name(&args.controller)
        .ok_or_else(|| format!("unknown controller {}", args.controller))?;
    let profiles = args
        .profiles
        .iter()
        .map(|n| profile_by_name(n).ok_or_else(|| format!("unknown profile {n}")))
        .collect::<Result<Vec<_>, _>>()?;
    let size = args.size.as_deref().map(parse_size).transpose()?;
    let work = std::env::temp_dir().join(format!("real-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let mut options = EmulatorOptions::default();
    if let Some(us) = args.spin_us {
        options.spin = Duration::from_micros(us);
    }
    if args.no_realtime {
        options.realtime_priority = None;
    }
    let setup = Setup {
        rustox,
        sim_driver: driver_by_name(&args.sim_driver)?,
        controller,
        work: work.clone(),
        options,
    };
    let result = if let Some(load) = args.calibrate {
        run_calibration(args, &setup, &profiles, load)
    } else if args.tcp {
        run_tcp(args, &setup, &profiles, size)
    } else if args.flows > 1 {
        run_flows(args, &setup, &profiles, size)
    } else {
        run_single(args, &setup, &profiles, size)
    };
    let _ = std::fs::remove_dir_all(&work);
    result
}

/// Suffix that takes a profile's random loss away (`wan100-noloss`): separates what loss
/// costs from what the path's rate and delay cost.
const NO_LOSS_SUFFIX: &str = "-noloss";

/// DESIGN.md's profiles by name, or one of them with `-noloss`.
fn profile_by_name(name: &str) -> Option<Profile> {
    let lower = name.to_ascii_lowercase();
    match lower.strip_suffix(NO_LOSS_SUFFIX) {
        Some(base) => {
            let mut p = Profile::by_name(base)?.with_loss(LossModel::None);
            // Profile names are static; the few variants are leaked once per process.
            p.name = Box::leak(format!("{}{NO_LOSS_SUFFIX}", p.name).into_boxed_str());
            Some(p)
        }
        None => Profile::by_name(&lower),
    }
}

/// `20M`, `64MiB`, `1G`, `500k`, `12345` → bytes (binary units).
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("bad size {text:?} (e.g. 20M)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        _ => return Err(format!("bad size unit in {text:?}")),
    };
    Ok(n << shift)
}

/// About [`AUTO_SIZE_SECONDS`] at the bottleneck, whole MiB, within the bounds.
fn auto_size(profile: &Profile) -> u64 {
    let bytes = (profile.rate_bytes_per_sec() * AUTO_SIZE_SECONDS) as u64;
    (bytes >> 20 << 20).clamp(AUTO_SIZE_MIN, AUTO_SIZE_MAX)
}

/// The simulator's transfer matching a real run, its hosts under `driver`. The only place
/// that builds a [`TransferSpec`], so a change to its fields is made here once.
fn sim_spec(
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
fn source_file(work: &Path, size: u64) -> Result<PathBuf, String> {
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
fn deadline(profile: &Profile, bytes: u64, flows: u32) -> Instant {
    let ideal = bytes as f64 * f64::from(flows) / profile.payload_capacity_bytes_per_sec();
    Instant::now() + Duration::from_secs_f64(ideal) * TIMEOUT_FACTOR + TIMEOUT_SLACK
}

fn testbed(profile: &Profile, seed: u64, setup: &Setup) -> Result<Testbed, String> {
    let mut config = TestbedConfig::from_profile(profile, seed);
    config.options = setup.options.clone();
    Testbed::new(config).map_err(|e| e.to_string())
}

fn transfer_spec(setup: &Setup, port: u16, file: &Path) -> CliTransferSpec {
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
struct HostDrops {
    tun: u64,
    udp_rcvbuf: u64,
}

fn host_drops(bed: &Testbed) -> HostDrops {
    let mut d = HostDrops::default();
    for side in [Side::A, Side::B] {
        d.tun += bed.tun_drops(side).unwrap_or(0);
        d.udp_rcvbuf += bed.udp_counters(side).map_or(0, |c| c.rcvbuf_errors);
    }
    d
}

/// What the emulator saw on the data direction.
#[derive(Debug, Clone, Serialize)]
struct LinkFigures {
    loss_drops: u64,
    queue_drops: u64,
    queue_p95_ms: Option<f64>,
    lateness: LatenessSummary,
    /// Fraction of the time the emulator thread was not asleep.
    emulator_busy: Option<f64>,
    pending_overflow: u64,
    host_drops: HostDrops,
    /// The emulator thread ran under SCHED_FIFO.
    realtime: bool,
    /// The machine's 1-minute load average when the run ended (2 cores: above 2 means
    /// the endpoints and the emulator waited for CPU).
    load1: Option<f64>,
}

fn link_figures(report: &EmulatorReport, host_drops: HostDrops) -> LinkFigures {
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
    }
}

/// The 1-minute load average (/proc/loadavg).
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

// ---------------------------------------------------------------- single transfers

/// One profile/seed: the real run beside the simulated one.
#[derive(Debug, Serialize)]
struct SingleRow {
    profile: String,
    controller: String,
    seed: u64,
    bytes: u64,
    /// Sender's goodput (offer to last acknowledgement), Mbit/s.
    real_send_mbit: Option<f64>,
    /// Receiver's goodput (accept to last byte written), Mbit/s.
    real_recv_mbit: Option<f64>,
    /// Receiver's goodput ÷ bottleneck rate.
    real_efficiency: Option<f64>,
    real_resent: Option<u64>,
    real_rtt_ms: Option<f64>,
    real_error: Option<String>,
    sim_efficiency: Option<f64>,
    sim_resent: Option<u64>,
    sim_rtt_ms: Option<f64>,
    sim_error: Option<String>,
    /// real_efficiency ÷ sim_efficiency.
    ratio: Option<f64>,
    link: Option<LinkFigures>,
}

fn run_single(
    args: &Args,
    setup: &Setup,
    profiles: &[Profile],
    size: Option<u64>,
) -> Result<(), String> {
    let mut rows = Vec::new();
    for profile in profiles {
        let bytes = size.unwrap_or_else(|| auto_size(profile));
        let file = source_file(&setup.work, bytes)?;
        for seed in args.seed..args.seed + args.runs {
            eprintln!(
                "real-bench: {} {} seed {seed}, {} MiB ...",
                profile.name,
                controller_name(setup.controller),
                bytes >> 20
            );
            let (outcome, link) = match real_single(profile, seed, setup, &file, bytes) {
                Ok((o, l)) => (Some(o), Some(l)),
                Err(e) => {
                    eprintln!("real-bench: {e}");
                    (None, None)
                }
            };
            let sim = (!args.no_sim).then(|| {
                run_transfer(&sim_spec(
                    profile,
                    setup.controller,
                    seed,
                    bytes,
                    &setup.sim_driver,
                ))
            });
            let row = single_row(profile, setup.controller, seed, bytes, outcome, link, sim);
            if args.json {
                println!("{}", serde_json::to_string(&row).unwrap_or_default());
            }
            rows.push(row);
        }
    }
    if !args.json {
        print_single_table(&rows, &args.sim_driver);
    }
    Ok(())
}

fn real_single(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    file: &Path,
    bytes: u64,
) -> Result<(CliOutcome, LinkFigures), String> {
    let bed = testbed(profile, seed, setup)?;
    let mut transfer = CliTransfer::start_receiver(&bed, transfer_spec(setup, FIRST_PORT, file))
        .map_err(|e| e.to_string())?;
    transfer.start_sender(&bed).map_err(|e| e.to_string())?;
    let outcome = transfer.wait(deadline(profile, bytes, 1));
    let drops = host_drops(&bed);
    let report = bed.finish().map_err(|e| e.to_string())?;
    Ok((outcome, link_figures(&report, drops)))
}

fn single_row(
    profile: &Profile,
    controller: ControllerKind,
    seed: u64,
    bytes: u64,
    outcome: Option<CliOutcome>,
    link: Option<LinkFigures>,
    sim: Option<Result<TransferMetrics, rustox_auto_tests::SimError>>,
) -> SingleRow {
    let (send, recv) = match &outcome {
        Some(o) => (o.sender.clone(), o.receiver.clone()),
        None => (Err("no run".into()), Err("no run".into())),
    };
    let real_efficiency = recv
        .as_ref()
        .ok()
        .map(|r| r.goodput_mbit * 1e6 / profile.rate_bps as f64);
    let real_error = match (&send, &recv) {
        (Err(e), _) | (_, Err(e)) => Some(e.clone()),
        _ => None,
    };
    let (sim_ok, sim_error) = match sim {
        Some(Ok(m)) if m.completed => (Some(m), None),
        Some(Ok(m)) => (
            None,
            Some(m.error.unwrap_or_else(|| "did not complete".into())),
        ),
        Some(Err(e)) => (None, Some(e.to_string())),
        None => (None, None),
    };
    let sim_efficiency = sim_ok.as_ref().map(|m| m.goodput_efficiency);
    SingleRow {
        profile: profile.name.to_owned(),
        controller: controller_name(controller).to_owned(),
        seed,
        bytes,
        real_send_mbit: send.as_ref().ok().map(|s| s.goodput_mbit),
        real_recv_mbit: recv.as_ref().ok().map(|r| r.goodput_mbit),
        real_efficiency,
        real_resent: send.as_ref().ok().map(|s| s.resent_packets),
        real_rtt_ms: send.as_ref().ok().and_then(|s| s.rtt_ms),
        real_error,
        sim_efficiency,
        sim_resent: sim_ok.as_ref().map(|m| m.packets_resent),
        sim_rtt_ms: sim_ok.as_ref().and_then(|m| m.final_srtt_ms),
        sim_error,
        ratio: real_efficiency
            .zip(sim_efficiency)
            .filter(|(_, s)| *s > 0.0)
            .map(|(r, s)| r / s),
        link,
    }
}

fn print_single_table(rows: &[SingleRow], sim_driver: &str) {
    let mut t = Table::new(&[
        "profile",
        "ctrl",
        "seed",
        "MiB",
        "real Mbit/s send/recv",
        "real η",
        "sim η",
        "real/sim",
        "resent real/sim",
        "RTT ms real/sim",
        "link drops loss/queue",
        "queue p95 ms",
        "emu late p50/p99/max µs",
        "emu busy",
        "host drops tun/rcvbuf",
        "load",
    ]);
    for r in rows {
        let link = r.link.as_ref();
        t.row(vec![
            r.profile.clone(),
            r.controller.clone(),
            r.seed.to_string(),
            format!("{}", r.bytes >> 20),
            format!(
                "{} / {}",
                opt(r.real_send_mbit, 1),
                opt(r.real_recv_mbit, 1)
            ),
            opt(r.real_efficiency, 3),
            opt(r.sim_efficiency, 3),
            opt(r.ratio, 2),
            format!(
                "{} / {}",
                r.real_resent.map_or("–".into(), |v| v.to_string()),
                r.sim_resent.map_or("–".into(), |v| v.to_string())
            ),
            format!("{} / {}", opt(r.real_rtt_ms, 1), opt(r.sim_rtt_ms, 1)),
            link.map_or("–".into(), |l| {
                format!("{} / {}", l.loss_drops, l.queue_drops)
            }),
            opt(link.and_then(|l| l.queue_p95_ms), 1),
            link.map_or("–".into(), |l| {
                format!(
                    "{} / {} / {}",
                    opt(l.lateness.p50_us, 0),
                    opt(l.lateness.p99_us, 0),
                    opt(l.lateness.max_us, 0)
                )
            }),
            opt(link.and_then(|l| l.emulator_busy).map(|b| b * 100.0), 0) + " %",
            link.map_or("–".into(), |l| {
                format!("{} / {}", l.host_drops.tun, l.host_drops.udp_rcvbuf)
            }),
            opt(link.and_then(|l| l.load1), 1),
        ]);
    }
    t.print();
    if rows
        .iter()
        .any(|r| r.link.as_ref().is_some_and(|l| !l.realtime))
    {
        println!("- the emulator thread ran at normal priority (SCHED_FIFO off or refused)");
    }
    for r in rows {
        if let Some(e) = &r.real_error {
            println!("- {} seed {}: real run failed: {e}", r.profile, r.seed);
        }
        if let Some(e) = &r.sim_error {
            println!("- {} seed {}: simulation failed: {e}", r.profile, r.seed);
        }
    }
    println!(
        "\nη = file bytes / (time × bottleneck rate); real η from the receiver's time (accept to \
         last byte written), sim η from first data packet to last byte, simulated hosts under the `{sim_driver}` \
         driver model. Resent and RTT: the \
         sender's (final smoothed RTT). Link drops and queue delay: the emulated A→B link. \
         emu late: how long after its model arrival time the emulator wrote each packet. Host \
         drops: kernel drops outside the model (TUN queue, UDP receive buffers). Load: 1-minute \
         load average at the end of the run (2 cores)."
    );
}

// ---------------------------------------------------------------- sharing: rustox × N

/// One flow of a sharing run.
#[derive(Debug, Serialize)]
struct FlowRow {
    name: String,
    /// The flow's own report: goodput and duration (receiver), resent and RTT (sender).
    recv_mbit: Option<f64>,
    seconds: Option<f64>,
    resent: Option<u64>,
    rtt_ms: Option<f64>,
    error: Option<String>,
    /// IP-level rate while all flows were active, Mbit/s.
    overlap_mbit: Option<f64>,
    /// That rate ÷ bottleneck rate.
    overlap_share: Option<f64>,
    /// Largest 1 s rate while it was the only flow delivering, ÷ bottleneck rate.
    alone_share: Option<f64>,
    /// IP bytes delivered per second (emulator arrival times).
    mbit_per_second: Vec<f64>,
}

/// A sharing run.
#[derive(Debug, Serialize)]
struct SharingRun {
    profile: String,
    controller: String,
    seed: u64,
    bytes: u64,
    /// Seconds (emulator time) of the overlap the shares are computed over.
    overlap_s: Option<(usize, usize)>,
    jain: Option<f64>,
    flows: Vec<FlowRow>,
    link: LinkFigures,
}

fn run_flows(
    args: &Args,
    setup: &Setup,
    profiles: &[Profile],
    size: Option<u64>,
) -> Result<(), String> {
    for profile in profiles {
        let bytes = size.unwrap_or_else(|| auto_size(profile));
        let file = source_file(&setup.work, bytes)?;
        for seed in args.seed..args.seed + args.runs {
            eprintln!(
                "real-bench: {} × {} rustox, {} seed {seed}, {} MiB each ...",
                profile.name,
                args.flows,
                controller_name(setup.controller),
                bytes >> 20
            );
            let run = sharing_rustox(profile, seed, setup, &file, bytes, args.flows)?;
            report_sharing(args, profile, &run);
        }
    }
    if !args.no_sim && !args.json {
        println!(
            "\n(No simulated column: the simulator runs one transfer per pair of hosts; a \
             cross-traffic model is the lead's to add.)"
        );
    }
    Ok(())
}

fn sharing_rustox(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    file: &Path,
    bytes: u64,
    flows: u16,
) -> Result<SharingRun, String> {
    let bed = testbed(profile, seed, setup)?;
    let ports: Vec<u16> = (0..flows).map(|i| FIRST_PORT + i).collect();
    let mut transfers = Vec::new();
    for &port in &ports {
        transfers.push(
            CliTransfer::start_receiver(&bed, transfer_spec(setup, port, file))
                .map_err(|e| e.to_string())?,
        );
    }
    for t in &mut transfers {
        t.start_sender(&bed).map_err(|e| e.to_string())?;
    }
    let until = deadline(profile, bytes, u32::from(flows));
    let outcomes: Vec<CliOutcome> = transfers.into_iter().map(|t| t.wait(until)).collect();
    let drops = host_drops(&bed);
    let report = bed.finish().map_err(|e| e.to_string())?;
    let series: Vec<Vec<u64>> = ports
        .iter()
        .map(|&p| series_to_port(&report, PROTO_UDP, p))
        .collect();
    let rows = ports
        .iter()
        .zip(&outcomes)
        .map(|(port, o)| {
            let mut row = FlowRow::empty(format!("rustox :{port}"));
            row.fill_from(o);
            row
        })
        .collect();
    Ok(sharing_run(
        profile, setup, seed, bytes, rows, series, &report, drops,
    ))
}

impl FlowRow {
    fn empty(name: String) -> Self {
        FlowRow {
            name,
            recv_mbit: None,
            seconds: None,
            resent: None,
            rtt_ms: None,
            error: None,
            overlap_mbit: None,
            overlap_share: None,
            alone_share: None,
            mbit_per_second: Vec::new(),
        }
    }

    fn fill_from(&mut self, o: &CliOutcome) {
        self.recv_mbit = o.receiver.as_ref().ok().map(|r| r.goodput_mbit);
        self.seconds = o.receiver.as_ref().ok().map(|r| r.seconds);
        self.resent = o.sender.as_ref().ok().map(|s| s.resent_packets);
        self.rtt_ms = o.sender.as_ref().ok().and_then(|s| s.rtt_ms);
        self.error = match (&o.sender, &o.receiver) {
            (Err(e), _) | (_, Err(e)) => Some(e.clone()),
            _ => None,
        };
    }
}

/// Bytes per interval delivered A → B to `port` over `protocol` (all such flows summed).
fn series_to_port(report: &EmulatorReport, protocol: u8, port: u16) -> Vec<u64> {
    let flows: Vec<_> = report
        .stats
        .a_to_b
        .flows
        .iter()
        .filter(|f| f.flow.protocol == protocol && f.flow.dst.port() == port)
        .collect();
    merged(&flows)
}

/// Shares over the overlap, per-second rates, and each flow's best second alone.
#[allow(clippy::too_many_arguments)]
fn sharing_run(
    profile: &Profile,
    setup: &Setup,
    seed: u64,
    bytes: u64,
    mut rows: Vec<FlowRow>,
    series: Vec<Vec<u64>>,
    report: &EmulatorReport,
    drops: HostDrops,
) -> SharingRun {
    let interval = Duration::from_millis(report.stats.a_to_b.interval_ms.max(1));
    let rate = profile.rate_bps as f64;
    let window = overlap(&series);
    let rates = window
        .clone()
        .map(|w| rates_bps(&series, w, interval))
        .unwrap_or_default();
    let per_s = |b: u64| b as f64 * 8.0 / interval.as_secs_f64() / 1e6;
    for (i, row) in rows.iter_mut().enumerate() {
        row.overlap_mbit = rates.get(i).map(|r| r / 1e6);
        row.overlap_share = rates.get(i).map(|r| r / rate);
        row.mbit_per_second = series[i].iter().map(|&b| per_s(b)).collect();
        // Intervals where only this flow delivered, boundary intervals excluded.
        row.alone_share = (1..series[i].len().saturating_sub(1))
            .filter(|&t| {
                series[i][t] > 0
                    && series
                        .iter()
                        .enumerate()
                        .all(|(j, s)| j == i || s.get(t).copied().unwrap_or(0) == 0)
                    && series[i][t - 1] > 0
                    && series[i][t + 1] > 0
            })
            .map(|t| series[i][t] as f64 * 8.0 / interval.as_secs_f64() / rate)
            .reduce(f64::max);
    }
    SharingRun {
        profile: profile.name.to_owned(),
        controller: controller_name(setup.controller).to_owned(),
        seed,
        bytes,
        overlap_s: window.map(|w| (w.start, w.end)),
        jain: (!rates.is_empty()).then(|| jain_index(&rates)),
        flows: rows,
        link: link_figures(report, drops),
    }
}

fn report_sharing(args: &Args, profile: &Profile, run: &SharingRun) {
    if args.json {
        println!("{}", serde_json::to_string(run).unwrap_or_default());
        return;
    }
    println!(
        "\n### {} ({} Mbit/s, {} ms), {}, seed {}, {} MiB per flow\n",
        profile.name,
        profile.rate_bps / 1_000_000,
        profile.rtt.as_secs_f64() * 1000.0,
        run.controller,
        run.seed,
        run.bytes >> 20
    );
    let mut t = Table::new(&[
        "flow",
        "own Mbit/s",
        "s",
        "resent",
        "RTT ms",
        "Mbit/s while all active",
        "share of link",
        "best 1 s alone",
    ]);
    for f in &run.flows {
        t.row(vec![
            f.name.clone(),
            opt(f.recv_mbit, 1),
            opt(f.seconds, 1),
            f.resent.map_or("–".into(), |v| v.to_string()),
            opt(f.rtt_ms, 1),
            opt(f.overlap_mbit, 1),
            opt(f.overlap_share.map(|s| s * 100.0), 0) + " %",
            opt(f.alone_share.map(|s| s * 100.0), 0) + " %",
        ]);
    }
    t.print();
    match (run.jain, run.overlap_s) {
        (Some(j), Some((a, b))) => println!("\nJain's index over seconds {a}–{b}: {j:.3}"),
        _ => println!("\nThe flows never delivered at the same time."),
    }
    for f in &run.flows {
        if let Some(e) = &f.error {
            println!("- {}: {e}", f.name);
        }
    }
    let l = &run.link;
    println!(
        "Link: {} loss / {} queue drops, queue p95 {} ms; emulator lateness p50/p99/max {} / {} / \
         {} µs; host drops tun {} rcvbuf {}; load {}",
        l.loss_drops,
        l.queue_drops,
        opt(l.queue_p95_ms, 1),
        opt(l.lateness.p50_us, 0),
        opt(l.lateness.p99_us, 0),
        opt(l.lateness.max_us, 0),
        l.host_drops.tun,
        l.host_drops.udp_rcvbuf,
        opt(l.load1, 1)
    );
    let len = run
        .flows
        .iter()
        .map(|f| f.mbit_per_second.len())
        .max()
        .unwrap_or(0);
    let mut header = vec!["s".to_owned()];
    header.extend(run.flows.iter().map(|f| format!("{} Mbit/s", f.name)));
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut s = Table::new(&header_refs);
    for i in 0..len {
        let mut row = vec![i.to_string()];
        row.extend(
            run.flows
                .iter()
                .map(|f| opt(f.mbit_per_second.get(i).copied(), 1)),
        );
        s.row(row);
    }
    println!("\nPer second (IP bytes at the emulator's arrival times):\n");
    s.print();
}

// ---------------------------------------------------------------- sharing: rustox × TCP

fn run_tcp(
    args: &Args,
    setup: &Setup,
    profiles: &[Profile],
    size: Option<u64>,
) -> Result<(), String> {
    Command::new("iperf3")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .map_err(|_| "iperf3 is not installed: apt-get install -y iperf3".to_owned())?;
    for profile in profiles {
        let bytes = size.unwrap_or_else(|| auto_size(profile));
        let file = source_file(&setup.work, bytes)?;
        for seed in args.seed..args.seed + args.runs {
            eprintln!(
                "real-bench: {} rustox {} vs iperf3 cubic, seed {seed}, {} MiB ...",
                profile.name,
                controller_name(setup.controller),
                bytes >> 20
            );
            let run = sharing_tcp(profile, seed, setup, &file, bytes)?;
            report_sharing(args, profile, &run);
        }
    }
    Ok(())
}

fn sharing_tcp(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    file: &Path,
    bytes: u64,
) -> Result<SharingRun, String> {
    let bed = testbed(profile, seed, setup)?;
    // iperf3 runs as long as the rustox transfer would at half the link, plus margin, so
    // the two overlap for the whole transfer if the sharing is fair.
    let half_link_s = bytes as f64 * 8.0 / (profile.rate_bps as f64 / 2.0);
    let tcp_seconds = (half_link_s * 1.5).ceil() as u64 + 5;
    let server = spawn_quiet(bed.command(Side::B, "iperf3").args([
        "-s",
        "-1",
        "-p",
        &IPERF_PORT.to_string(),
    ]))?;
    let mut transfer = CliTransfer::start_receiver(&bed, transfer_spec(setup, FIRST_PORT, file))
        .map_err(|e| e.to_string())?;
    let client = bed
        .command(Side::A, "iperf3")
        .args(["-c", &bed.addr(Side::B).to_string()])
        .args(["-p", &IPERF_PORT.to_string()])
        .args(["-t", &tcp_seconds.to_string()])
        .args(["-C", "cubic", "-J"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start iperf3: {e}"))?;
    transfer.start_sender(&bed).map_err(|e| e.to_string())?;
    let outcome = transfer.wait(deadline(profile, bytes, 2));
    let tcp = wait_iperf(
        client,
        Instant::now() + Duration::from_secs(tcp_seconds + 30),
    );
    reap(server);
    let drops = host_drops(&bed);
    let report = bed.finish().map_err(|e| e.to_string())?;
    let series = vec![
        series_to_port(&report, PROTO_UDP, FIRST_PORT),
        series_to_port(&report, PROTO_TCP, IPERF_PORT),
    ];
    let mut rustox = FlowRow::empty(format!("rustox {}", controller_name(setup.controller)));
    rustox.fill_from(&outcome);
    let mut iperf = FlowRow::empty("iperf3 cubic".into());
    match tcp {
        Ok(t) => {
            iperf.recv_mbit = Some(t.mbit);
            iperf.seconds = Some(t.seconds);
            iperf.resent = Some(t.retransmits);
        }
        Err(e) => iperf.error = Some(e),
    }
    Ok(sharing_run(
        profile,
        setup,
        seed,
        bytes,
        vec![rustox, iperf],
        series,
        &report,
        drops,
    ))
}

/// What iperf3's client reported.
struct IperfResult {
    mbit: f64,
    seconds: f64,
    retransmits: u64,
}

fn wait_iperf(mut child: Child, deadline: Instant) -> Result<IperfResult, String> {
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(out) = stdout.as_mut() {
            let _ = std::io::Read::read_to_string(out, &mut text);
        }
        text
    });
    let status = wait_until(&mut child, deadline);
    let text = reader.join().unwrap_or_default();
    if status != Some(true) {
        return Err("iperf3 client failed or timed out".into());
    }
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("iperf3 -J output: {e}"))?;
    let sent = &json["end"]["sum_sent"];
    let received = &json["end"]["sum_received"];
    Ok(IperfResult {
        mbit: received["bits_per_second"].as_f64().unwrap_or(0.0) / 1e6,
        seconds: received["seconds"].as_f64().unwrap_or(0.0),
        retransmits: sent["retransmits"].as_u64().unwrap_or(0),
    })
}

/// Waits for `child` until `deadline`, then kills it; `Some(success)` if it exited alone.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<bool> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status.success()),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

fn spawn_quiet(cmd: &mut Command) -> Result<Child, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))
}

/// Gives a server that should have exited a moment, then kills it.
fn reap(mut child: Child) {
    let _ = wait_until(&mut child, Instant::now() + Duration::from_secs(2));
}

// ---------------------------------------------------------------- calibration

/// Length of a calibration flow.
const CALIBRATION_TIME: Duration = Duration::from_secs(3);

/// A perfectly paced UDP flow of full datagrams at `load` × each profile's rate: the
/// emulator's input lag, and the bottleneck drops it alone would cause
/// (`emulator::calibrate`).
fn run_calibration(
    args: &Args,
    setup: &Setup,
    profiles: &[Profile],
    load: f64,
) -> Result<(), String> {
    let mut t = Table::new(&[
        "profile",
        "offered / sent Mbit/s",
        "packets",
        "send late p50/p99/max µs",
        "entry lag p50/p99/max µs",
        "drops: schedule / send times / entry times",
        "release late p50/p99/max µs",
        "emu busy",
        "load",
    ]);
    for profile in profiles {
        let rate_bps = (profile.rate_bps as f64 * load) as u64;
        let spec = CalibrationSpec {
            rate_bps,
            packet_bytes: FULL_WIRE_PACKET as usize,
            duration: CALIBRATION_TIME,
            delay: profile.rtt / 2,
            bottleneck: BottleneckConfig {
                rate_bps: profile.rate_bps,
                queue_bytes: profile.buffer_bytes,
            },
            options: setup.options.clone(),
        };
        eprintln!(
            "real-bench: calibrating {} at {:.1} Mbit/s ...",
            profile.name,
            rate_bps as f64 / 1e6
        );
        let r = calibrate(&spec).map_err(|e| e.to_string())?;
        if args.json {
            println!(
                "{}",
                serde_json::json!({"profile": profile.name, "offered_bps": rate_bps,
                    "calibration": r, "load1": load_average()})
            );
            continue;
        }
        let late = |l: &LatenessSummary| {
            format!(
                "{} / {} / {}",
                opt(l.p50_us, 0),
                opt(l.p99_us, 0),
                opt(l.max_us, 0)
            )
        };
        t.row(vec![
            profile.name.to_owned(),
            format!("{:.1} / {:.1}", rate_bps as f64 / 1e6, r.sent_bps / 1e6),
            r.packets.to_string(),
            late(&r.send_lateness),
            late(&r.entry_lag),
            format!(
                "{} / {} / {}",
                r.drops_on_schedule, r.drops_at_send_times, r.drops_at_entry_times
            ),
            late(&r.release_lateness),
            opt(r.emulator_busy.map(|b| b * 100.0), 0) + " %",
            opt(load_average(), 1),
        ]);
    }
    if !args.json {
        t.print();
        println!(
            "\nA paced UDP flow through a delay-only path; its profile's bottleneck is replayed \
             offline on the schedule, on the real send times and on the emulator's entry \
             timestamps. Drops at entry times beyond those at send times are the instrument's."
        );
    }
    Ok(())
}

// ---------------------------------------------------------------- output

/// `x` with `digits` decimals, or a dash.
fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("–".into(), |v| format!("{v:.digits$}"))
}

/// A Markdown table with padded columns.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|s| (*s).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn print(&self) {
        let width = |i: usize| {
            std::iter::once(&self.header)
                .chain(&self.rows)
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.header.len()).map(width).collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = widths
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let c = cells.get(i).map_or("", String::as_str);
                    format!("{c}{}", " ".repeat(w - c.chars().count()))
                })
                .collect();
            println!("| {} |", padded.join(" | "));
        };
        line(&self.header);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        println!("|-{}-|", rule.join("-|-"));
        for r in &self.rows {
            line(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_size("20M"), Ok(20 << 20));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("x").is_err());
        assert!(parse_size("5T").is_err());
    }

    #[test]
    fn auto_size_is_about_eight_seconds_within_bounds() {
        assert_eq!(auto_size(&Profile::wan100()), 19 << 20);
        assert_eq!(auto_size(&Profile::lan()), AUTO_SIZE_MAX);
    }

    #[test]
    fn noloss_variants_keep_the_path_and_drop_the_loss() {
        let p = profile_by_name("WAN100-noloss").unwrap();
        assert_eq!(p.name, "wan100-noloss");
        assert_eq!(p.loss, LossModel::None);
        assert_eq!(p.rate_bps, Profile::wan100().rate_bps);
        assert!(profile_by_name("nope-noloss").is_none());
    }
}
