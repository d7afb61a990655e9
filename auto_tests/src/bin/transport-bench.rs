//! `transport-bench`: every link profile × controller × seed through the deterministic
//! simulator, printed as a table (or JSON lines). Figures are virtual-time measurements, so a
//! row replays bit for bit from its seed; only the simulator-speed column depends on the
//! machine.
//!
//! `cargo run --release -p rustox-auto-tests --bin transport-bench [-- --quick|--json]`

use std::process::ExitCode;

use clap::Parser;
use rustox_auto_tests::bench::{run_parallel, worker_count, RowArgs};
use rustox_simulator::targets::{goodput_target, RAMP_MAX_RTTS, RAMP_PROFILES};
use rustox_simulator::{driver_by_name, run_transfer, Profile, TransferMetrics, TransferSpec};

/// Default transfer size: 32 MiB, the size the transport's acceptance targets are stated for.
const FULL_MIB: u64 = 32;
/// `--quick` transfer size: 8 MiB, one seed.
const QUICK_MIB: u64 = 8;
/// Seeds of a full run.
const FULL_SEEDS: u64 = 3;

#[derive(Parser, Debug)]
#[command(about = "Simulated transport benchmark: goodput, ramp, resends, RTT fidelity, queueing",
    mut_arg("quick", |a| a.help("One seed, 8 MiB per transfer"))
)]
struct Args {
    #[command(flatten)]
    rows: RowArgs,
    /// Number of seeds (1, 2, …).
    #[arg(long)]
    seeds: Option<u64>,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Transfer size in MiB.
    #[arg(long)]
    mib: Option<u64>,
    /// Worker threads (default: available cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// The driver model both hosts run under: cli (the model of `rustox send`/`recv`'s own
    /// loop), tokio (tokio's millisecond timer), precise (a microsecond timer), exact (no
    /// model: every input handled the instant it happens).
    #[arg(long, default_value = "cli")]
    driver: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let (profiles, controllers) = match (
        args.rows.select.profiles(Profile::all),
        args.rows.select.controllers(),
    ) {
        (Ok(p), Ok(c)) => (p, c),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let seeds = args
        .seeds
        .unwrap_or(if args.rows.quick { 1 } else { FULL_SEEDS });
    let mib = args
        .mib
        .unwrap_or(if args.rows.quick { QUICK_MIB } else { FULL_MIB });
    let driver = match driver_by_name(&args.driver) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let mut specs = Vec::new();
    for p in &profiles {
        for &c in &controllers {
            for s in 0..seeds {
                specs.push(TransferSpec {
                    driver: driver.clone(),
                    ..TransferSpec::new(p.clone(), c, args.first_seed + s, mib * 1024 * 1024)
                });
            }
        }
    }
    let rows = run_all(specs, worker_count(args.jobs), !args.rows.json);
    if args.rows.json {
        for r in &rows {
            match serde_json::to_string(r) {
                Ok(line) => println!("{line}"),
                Err(e) => eprintln!("cannot encode row: {e}"),
            }
        }
    } else {
        print_table(&rows, mib);
    }
    ExitCode::SUCCESS
}

/// Run every spec on `jobs` threads; rows come back in spec order.
fn run_all(specs: Vec<TransferSpec>, jobs: usize, progress: bool) -> Vec<TransferMetrics> {
    run_parallel(specs, jobs, |spec| {
        let row = run_transfer(&spec).unwrap_or_else(|e| failed_row(&spec, e.to_string()));
        if progress {
            eprintln!(
                "  done {:<9} {:<6} seed {} ({:.1} s CPU)",
                row.profile, row.controller, row.seed, row.cpu_seconds
            );
        }
        row
    })
}

fn failed_row(spec: &TransferSpec, error: String) -> TransferMetrics {
    TransferMetrics {
        profile: spec.profile.name.to_owned(),
        controller: rustox_simulator::controller_name(spec.controller).to_owned(),
        seed: spec.seed,
        bytes: spec.bytes,
        completed: false,
        bytes_delivered: 0,
        goodput_efficiency: 0.0,
        transfer_time_s: 0.0,
        time_to_90_s: None,
        time_to_90_rtts: None,
        spurious_resends: 0,
        spurious_losses_detected: 0,
        resent_over_lost: None,
        bytes_resent: 0,
        packets_resent: 0,
        tail_copies: 0,
        link_bytes_lost: 0,
        link_bytes_queue_overflow: 0,
        rtt_error: None,
        rtt_bias: None,
        queue_delay_p95_ms: None,
        peak_session_memory: 0,
        final_srtt_ms: None,
        sim_events: 0,
        cpu_seconds: 0.0,
        sim_mib_per_cpu_s: 0.0,
        trace_hash: String::new(),
        error: Some(error),
    }
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".to_owned(), |x| format!("{x:.prec$}"))
}

fn print_table(rows: &[TransferMetrics], mib: u64) {
    println!("transport-bench: {mib} MiB per transfer, virtual time (goodput η = bytes / (time × bottleneck); ceiling 0.96)");
    println!(
        "{:<9} {:<6} {:>4} {:>4} {:>6} {:>6} {:>8} {:>7} {:>6} {:>8} {:>7} {:>8} {:>8} {:>9}  verdict",
        "profile",
        "ctrl",
        "seed",
        "done",
        "η",
        "target",
        "t90 s",
        "t90 RTT",
        "spur",
        "rsnt/lst",
        "rtt err",
        "q95 ms",
        "mem KiB",
        "MiB/cpu-s"
    );
    for r in rows {
        let target = goodput_target(&r.profile);
        let mut verdict = Vec::new();
        if r.controller == "bbr" {
            if let Some(t) = target {
                verdict.push(if r.goodput_efficiency >= t {
                    "η ok"
                } else {
                    "η FAIL"
                });
            }
            if RAMP_PROFILES.contains(&r.profile.as_str()) {
                verdict.push(if r.time_to_90_rtts.is_some_and(|x| x <= RAMP_MAX_RTTS) {
                    "ramp ok"
                } else {
                    "ramp FAIL"
                });
            }
        }
        if !r.completed {
            verdict.push("INCOMPLETE");
        }
        println!(
            "{:<9} {:<6} {:>4} {:>4} {:>6.3} {:>6} {:>8} {:>7} {:>6} {:>8} {:>7} {:>8} {:>8} {:>9.1}  {}{}",
            r.profile,
            r.controller,
            r.seed,
            if r.completed { "yes" } else { "no" },
            r.goodput_efficiency,
            if r.controller == "bbr" { opt(target, 2) } else { "(none)".to_owned() },
            opt(r.time_to_90_s, 2),
            opt(r.time_to_90_rtts, 1),
            r.spurious_resends,
            opt(r.resent_over_lost, 2),
            opt(r.rtt_error, 3),
            opt(r.queue_delay_p95_ms, 1),
            r.peak_session_memory / 1024,
            r.sim_mib_per_cpu_s,
            verdict.join(", "),
            r.error.as_ref().map_or(String::new(), |e| format!(" error: {e}")),
        );
    }
    print_summary(rows);
    let mib: f64 = rows
        .iter()
        .map(|r| r.bytes_delivered as f64 / 1048576.0)
        .sum();
    let cpu: f64 = rows.iter().map(|r| r.cpu_seconds).sum();
    let events: u64 = rows.iter().map(|r| r.sim_events).sum();
    println!(
        "simulator: {mib:.0} MiB delivered in {cpu:.1} CPU s ({:.1} MiB per CPU second, {:.2} M events per CPU second)",
        if cpu > 0.0 { mib / cpu } else { 0.0 },
        if cpu > 0.0 { events as f64 / cpu / 1e6 } else { 0.0 }
    );
}

/// Median of the finite values, if any.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// One line per profile: the median over seeds of each controller's goodput efficiency, and
/// BBR's ramp, beside the targets.
fn print_summary(rows: &[TransferMetrics]) {
    let mut profiles: Vec<&str> = Vec::new();
    for r in rows {
        if !profiles.contains(&r.profile.as_str()) {
            profiles.push(&r.profile);
        }
    }
    println!();
    println!("summary (median over seeds): goodput efficiency per controller, BBR ramp in RTTs");
    println!(
        "{:<9} {:>7} {:>7} {:>7} {:>7} {:>9} {:>9}",
        "profile", "bbr η", "cubic η", "legacy", "target", "bbr t90", "bbr/legacy"
    );
    for p in profiles {
        let eta = |c: &str| {
            median(
                rows.iter()
                    .filter(|r| r.profile == p && r.controller == c)
                    .map(|r| r.goodput_efficiency)
                    .collect(),
            )
        };
        let t90 = median(
            rows.iter()
                .filter(|r| r.profile == p && r.controller == "bbr")
                .filter_map(|r| r.time_to_90_rtts)
                .collect(),
        );
        let (b, l) = (eta("bbr"), eta("legacy"));
        let speedup = match (b, l) {
            (Some(b), Some(l)) if l > 0.0 => format!("{:.1}x", b / l),
            _ => "-".to_owned(),
        };
        println!(
            "{:<9} {:>7} {:>7} {:>7} {:>7} {:>9} {:>9}",
            p,
            opt(b, 3),
            opt(eta("cubic"), 3),
            opt(l, 3),
            opt(goodput_target(p), 2),
            opt(t90, 1),
            speedup
        );
    }
}
