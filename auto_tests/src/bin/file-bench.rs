//! `file-bench`: Tox file transfers (rustox-file-transfer over net_crypto) through the
//! deterministic simulator, per link profile and congestion controller: goodput
//! efficiency, MiB delivered 1/2/5/10/20 s after the receiver accepted, and the p95 latency
//! of a chat message sent every 500 ms during the transfer. Virtual-time figures: a row
//! replays bit for bit from its seed.
//!
//! `cargo run --release -p rustox-auto-tests --bin file-bench [-- --quick|--json]`

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use rustox_auto_tests::bench::{run_parallel, worker_count, RowArgs};
use rustox_net_crypto::{ControllerKind, Timestamp};
use rustox_simulator::{controller_name, FileRun, FileSpec, Profile};
use serde::Serialize;

/// Default file size: 64 MiB, the size the scenario tests move on every profile.
const FULL_MIB: u64 = 64;
/// `--quick` file size.
const QUICK_MIB: u64 = 8;
/// `--quick` profiles: one clean, one lossy long, one very long path.
const QUICK_PROFILES: [&str; 3] = ["wan20", "wan100", "vpn300"];
/// `--quick` virtual-time cap: past the 20 s mark, no further.
const QUICK_CAP: Duration = Duration::from_secs(25);
/// Seconds after acceptance at which delivered MiB are reported.
const MARKS_S: [u64; 5] = [1, 2, 5, 10, 20];
/// Chat message interval during the transfer.
const CHAT_INTERVAL: Duration = Duration::from_millis(500);

#[derive(Parser, Debug)]
#[command(about = "Simulated file-transfer benchmark: goodput, MiB over time, chat latency",
    mut_arg("quick", |a| a.help("8 MiB on wan20, wan100 and vpn300, at most 25 s of virtual time each"))
)]
struct Args {
    #[command(flatten)]
    rows: RowArgs,
    /// File size in MiB.
    #[arg(long)]
    mib: Option<u64>,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: available cores).
    #[arg(long)]
    jobs: Option<usize>,
}

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
struct Row {
    profile: String,
    controller: String,
    seed: u64,
    mib: u64,
    /// The whole file arrived and verified before the time limit.
    completed: bool,
    /// File bytes ÷ ((last byte − first chunk) × bottleneck rate); null if unfinished.
    goodput_efficiency: Option<f64>,
    mib_at_1s: Option<f64>,
    mib_at_2s: Option<f64>,
    mib_at_5s: Option<f64>,
    mib_at_10s: Option<f64>,
    mib_at_20s: Option<f64>,
    /// p95 one-way latency of the chat messages sent during the transfer.
    chat_latency_p95_ms: Option<f64>,
    /// Chat messages received.
    chat_messages: usize,
    /// Virtual seconds simulated.
    virtual_s: f64,
    /// CPU seconds the row took.
    cpu_s: f64,
    /// Why the simulation stopped early (a broken invariant or a livelock), if it did.
    error: Option<String>,
}

fn run_row(
    profile: &Profile,
    controller: ControllerKind,
    seed: u64,
    mib: u64,
    cap: Option<Duration>,
) -> Row {
    let started = std::time::Instant::now();
    let mut spec = FileSpec::new(profile.clone(), controller, seed, vec![mib << 20]);
    spec.chat_interval = Some(CHAT_INTERVAL);
    if let Some(cap) = cap {
        spec.deadline = spec.deadline.min(Timestamp::ZERO + cap);
    }
    let mut run = FileRun::new(spec);
    let (completed, error) = match run.try_run() {
        Ok(done) => (done, None),
        Err(e) => (false, Some(e)),
    };
    // A mark the run never reached (it stopped early on an error) is unknown, not zero.
    let reached = run.sim.now();
    let accepted = run.receiver().accepted_at.get(&run.file_ids[0]).copied();
    let m = |s: u64| {
        let after = Duration::from_secs(s);
        let known = completed || accepted.is_some_and(|a| a + after <= reached);
        known.then(|| run.mib_at(after))
    };
    Row {
        profile: profile.name.to_owned(),
        controller: controller_name(controller).to_owned(),
        seed,
        mib,
        completed,
        goodput_efficiency: if completed {
            run.goodput_efficiency()
        } else {
            None
        },
        mib_at_1s: m(MARKS_S[0]),
        mib_at_2s: m(MARKS_S[1]),
        mib_at_5s: m(MARKS_S[2]),
        mib_at_10s: m(MARKS_S[3]),
        mib_at_20s: m(MARKS_S[4]),
        chat_latency_p95_ms: run.chat_p95_ms(),
        chat_messages: run.receiver().chat_latencies.len(),
        virtual_s: run.sim.now().as_secs_f64(),
        cpu_s: started.elapsed().as_secs_f64(),
        error,
    }
}

fn opt(v: Option<f64>, scale: f64, digits: usize) -> String {
    v.map_or_else(|| "-".to_owned(), |x| format!("{:.*}", digits, x * scale))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let unnamed = || {
        if args.rows.quick {
            QUICK_PROFILES
                .iter()
                .filter_map(|n| Profile::by_name(n))
                .collect()
        } else {
            Profile::all()
        }
    };
    let (profiles, controllers) = match (
        args.rows.select.profiles(unnamed),
        args.rows.select.controllers(),
    ) {
        (Ok(p), Ok(c)) => (p, c),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let mib = args
        .mib
        .unwrap_or(if args.rows.quick { QUICK_MIB } else { FULL_MIB });
    let cap = args.rows.quick.then_some(QUICK_CAP);
    let work: Vec<(Profile, ControllerKind)> = profiles
        .iter()
        .flat_map(|p| controllers.iter().map(move |c| (p.clone(), *c)))
        .collect();
    let rows = run_parallel(work, worker_count(args.jobs), |(profile, controller)| {
        run_row(&profile, controller, args.seed, mib, cap)
    });

    if args.rows.json {
        for row in &rows {
            match serde_json::to_string(row) {
                Ok(line) => println!("{line}"),
                Err(e) => {
                    eprintln!("json: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        return ExitCode::SUCCESS;
    }
    println!(
        "file-bench: {mib} MiB per transfer, chat every {} ms, seed {}{}",
        CHAT_INTERVAL.as_millis(),
        args.seed,
        if args.rows.quick {
            " (quick: ≤ 25 s virtual)"
        } else {
            ""
        }
    );
    println!(
        "{:<9} {:<7} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9} {:>6}",
        "profile",
        "cc",
        "done",
        "eff",
        "MiB@1s",
        "MiB@2s",
        "MiB@5s",
        "MiB@10s",
        "MiB@20s",
        "chat p95",
        "cpu s"
    );
    for r in &rows {
        println!(
            "{:<9} {:<7} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9} {:>6.1}",
            r.profile,
            r.controller,
            if r.completed { "yes" } else { "no" },
            opt(r.goodput_efficiency, 100.0, 1)
                + if r.goodput_efficiency.is_some() {
                    "%"
                } else {
                    ""
                },
            opt(r.mib_at_1s, 1.0, 2),
            opt(r.mib_at_2s, 1.0, 2),
            opt(r.mib_at_5s, 1.0, 2),
            opt(r.mib_at_10s, 1.0, 2),
            opt(r.mib_at_20s, 1.0, 2),
            opt(r.chat_latency_p95_ms, 1.0, 1)
                + if r.chat_latency_p95_ms.is_some() {
                    " ms"
                } else {
                    ""
                },
            r.cpu_s
        );
    }
    for r in rows.iter().filter(|r| r.error.is_some()) {
        println!(
            "! {} {}: {}",
            r.profile,
            r.controller,
            r.error.as_deref().unwrap_or_default()
        );
    }
    ExitCode::SUCCESS
}
