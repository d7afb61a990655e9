//! `real-bench`: the simulator's link profiles applied to real sockets, so no simulated
//! figure has to be trusted alone (docs/design.md "Link profiles").
//!
//! For each profile it runs the real `rustox recv --once` in namespace B and `rustox send`
//! in namespace A through the emulator (`rustox_auto_tests::emulator`), then the same
//! profile, size, controller and seed in the simulator, and prints both side by side.
//! `--flows N` runs N transfers at once through one link; `--tcp` runs one next to an iperf3
//! TCP CUBIC flow; both report each flow's share while all were active. `--ctoxcore` runs
//! c-toxcore 0.2.18 itself on each profile beside rustox's legacy model (real and
//! simulated) and BBR. `--kernel-link` runs rustox and iperf3 CUBIC alone across a veth
//! pair shaped by the kernel's tbf instead (no emulator in user space, no delay).
//!
//! ```text
//! cargo build --release -p rustox -p rustox-auto-tests --bin real-bench
//! target/release/real-bench --profiles wan100,lan        # as root
//! target/release/real-bench --kernel-link tbf100,tbf1g
//! ```
//!
//! Needs root, /dev/net/tun, iproute2 (with tc for `--kernel-link`), and for `--tcp` and
//! `--kernel-link` iperf3.

mod calibration;
mod ctoxcore;
mod kernel;
mod mixed;
mod pairings;
mod runs;
mod sharing;
mod single;
mod table;
mod tcp;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use rustox_auto_tests::emulator::{
    check_prerequisites, rustox_beside_current_exe, EmulatorOptions,
};
use rustox_simulator::{controller_by_name, driver_by_name, LossModel, Profile};

use calibration::run_calibration;
use ctoxcore::run_ctoxcore;
use kernel::run_kernel;
use pairings::run_pairings;
use runs::Setup;
use sharing::run_flows;
use single::run_single;
use tcp::run_tcp;

/// Default size aims at this many seconds at the bottleneck rate: long enough that ramp-up
/// and the final round trips are a small part of the figure.
const AUTO_SIZE_SECONDS: f64 = 8.0;
/// Bounds of the automatic size (a gigabit LAN would otherwise want a 1 GB file).
const AUTO_SIZE_MIN: u64 = 4 << 20;
const AUTO_SIZE_MAX: u64 = 256 << 20;

#[derive(Parser, Debug)]
#[command(
    about = "Real rustox send/recv through the simulator's link models, beside the simulator"
)]
struct Args {
    /// Profiles (comma-separated): docs/design.md names, or NAME-noloss for one without its
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
    /// Sharing mode with one size per flow (comma-separated, e.g. 48M,95M): the flow that
    /// finishes first leaves the link to the others, which shows whether they take it.
    #[arg(long, value_delimiter = ',')]
    flow_sizes: Vec<String>,
    /// One rustox transfer next to one iperf3 TCP CUBIC flow.
    #[arg(long)]
    tcp: bool,
    /// Check the instrument instead: a paced UDP flow at this fraction of each profile's
    /// bottleneck (e.g. 0.9) for 3 s; shows the emulator's input lag and the drops it alone
    /// would cause at the profile's buffer.
    #[arg(long)]
    calibrate: Option<f64>,
    /// c-toxcore 0.2.18 itself (tools/toxcore_file_peer.c on the system's libtoxcore) on
    /// each profile, beside `rustox send --controller legacy`, the simulated legacy model
    /// and `rustox send` with BBR. Default size: 16 MiB up to 10 Mbit/s, 32 MiB above
    /// (the sizes of `tests/legacy_model.rs`'s reference runs). `--controller` is not used.
    #[arg(long)]
    ctoxcore: bool,
    /// What `--ctoxcore` runs (comma-separated): ctoxcore, legacy (real), sim (legacy),
    /// bbr (real).
    #[arg(long, value_delimiter = ',', default_value = "ctoxcore,legacy,sim,bbr")]
    ctoxcore_columns: Vec<String>,
    /// `--ctoxcore`, `--pairings`: each c-toxcore peer gives up after this many seconds (coming online
    /// included); the rustox runs get at least as long.
    #[arg(long, default_value_t = 300.0)]
    ctoxcore_timeout: f64,
    /// The four pairings of c-toxcore and rustox (c-toxcore → c-toxcore, rustox → rustox,
    /// rustox → c-toxcore, c-toxcore → rustox) on each profile, real and simulated, with
    /// ratios to c-toxcore → c-toxcore. Default size: 4 MiB up to 2 Mbit/s, 16 MiB up to
    /// 10 Mbit/s, 32 MiB above. `--controller` is not used (rustox runs BBR).
    #[arg(long)]
    pairings: bool,
    /// Which pairings `--pairings` runs (comma-separated, sender first): cc, rr, rc, cr.
    #[arg(long, value_delimiter = ',', default_value = "cc,rr,rc,cr")]
    pairings_of: Vec<String>,
    /// Skip the real runs (`--pairings`: the simulated columns only).
    #[arg(long)]
    no_real: bool,
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
    /// Kernel-shaped links instead of the emulator (comma-separated): tbf100 (100 Mbit/s,
    /// 12.5 kB queue), tbf1g (1 Gbit/s, 62.5 kB), tbf's bucket as deep as the queue; each
    /// also as NAME-small (a two-frame bucket). A veth pair with tbf on each egress, no
    /// delay; rustox and iperf3 CUBIC each run alone across it (`--kernel-flows`).
    #[arg(long, value_delimiter = ',')]
    kernel_link: Vec<String>,
    /// `--kernel-link`: what runs, in this order per seed (rustox, cubic).
    #[arg(long, value_delimiter = ',', default_value = "rustox,cubic")]
    kernel_flows: Vec<String>,
    /// `--kernel-link`: tbf's bucket, bytes (default the queue's size; at least 3028).
    #[arg(long)]
    tbf_burst: Option<u64>,
    /// `--kernel-link`: tbf's queue, bytes (default the profile's).
    #[arg(long)]
    tbf_limit: Option<u64>,
    /// `--tcp`: seconds between iperf3's start and the rustox sender's (the rustox flow
    /// joins a link the TCP flow already fills).
    #[arg(long, default_value_t = 0.0)]
    start_offset: f64,
    /// A plain link instead of the profile's model: its delay, rate and drop-tail byte
    /// queue only, the queue counting just the packets waiting (see the emulator's `plain`
    /// module for what differs).
    #[arg(long)]
    plain_link: bool,
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

fn run(args: &Args) -> Result<(), String> {
    // `--pairings --no-real` runs the simulator only: no namespaces, no binaries.
    let sim_only = args.pairings && args.no_real;
    if !sim_only {
        check_prerequisites().map_err(|e| e.to_string())?;
    }
    let rustox = match &args.rustox {
        Some(p) => p.clone(),
        None if sim_only => PathBuf::new(),
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
    let flow_sizes = args
        .flow_sizes
        .iter()
        .map(|s| parse_size(s))
        .collect::<Result<Vec<_>, _>>()?;
    let work = WorkDir::create()?;
    let mut options = EmulatorOptions::default();
    if let Some(us) = args.spin_us {
        options.spin = Duration::from_micros(us);
    }
    if args.no_realtime {
        options.realtime_priority = None;
    }
    options.plain = args.plain_link;
    let setup = Setup {
        rustox,
        sim_driver: driver_by_name(&args.sim_driver)?,
        controller,
        work: work.0.clone(),
        options,
    };
    let result = if !args.kernel_link.is_empty() {
        run_kernel(args, &setup, size)
    } else if args.pairings {
        run_pairings(args, &setup, &profiles, size)
    } else if args.ctoxcore {
        run_ctoxcore(args, &setup, &profiles, size)
    } else if let Some(load) = args.calibrate {
        run_calibration(args, &setup, &profiles, load)
    } else if args.tcp {
        let offset = Duration::try_from_secs_f64(args.start_offset)
            .map_err(|e| format!("--start-offset: {e}"))?;
        run_tcp(args, &setup, &profiles, size, offset)
    } else if args.flows > 1 || !flow_sizes.is_empty() {
        run_flows(args, &setup, &profiles, size, &flow_sizes)
    } else {
        run_single(args, &setup, &profiles, size)
    };
    drop(work);
    result
}

/// The run's scratch directory (source files, received files, keys, child stderr), removed
/// on drop — also when a panic unwinds (e.g. stdout closed by `| head`).
struct WorkDir(PathBuf);

impl WorkDir {
    fn create() -> Result<Self, String> {
        let dir = std::env::temp_dir().join(format!("real-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(WorkDir(dir))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Suffix that takes a profile's random loss away (`wan100-noloss`): separates what loss
/// costs from what the path's rate and delay cost.
const NO_LOSS_SUFFIX: &str = "-noloss";

/// docs/design.md's profiles by name, or one of them with `-noloss`.
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
