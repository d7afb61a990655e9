//! `group-bench`: how long a c-toxcore 0.2.20 NGC joiner takes to hear the founder of a public
//! group, through DHTs of different nodes (real loopback sockets).
//!
//! ```text
//! cargo build --release -p rustox-auto-tests --bin group-bench
//! target/release/group-bench --runs 3
//! ```
//!
//! Setups: one rustox node, one tox-bootstrapd 0.2.18 node, twelve rustox nodes, twelve
//! tox-bootstrapd nodes, and twelve alternating (rustox first). The nodes are joined into one
//! DHT (each bootstraps from every earlier one) and get 3 s to meet; the founder and the
//! joiner (`tools/toxgroup.c` on Debian trixie's libtoxcore 0.2.20) know only the first node.
//! Seconds from the joiner's start to the founder's first message; a run that takes longer
//! than `--limit` counts as a miss. c-toxcore 0.2.20 is fetched as `tests/interop_groups.rs`
//! fetches it.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use rustox_auto_tests::ctoxcore::group::{default_dir, run_discovery, DhtNet, GroupTool, NodeKind};

#[derive(Parser, Debug)]
#[command(about = "Time for an NGC joiner to hear a public group's founder")]
struct Args {
    /// Runs per setup.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Seconds a run may take before it counts as a miss.
    #[arg(long, default_value_t = 120)]
    limit: u64,
    /// Only these setups (comma-separated: rustox1, bootstrapd1, rustox12, bootstrapd12, mixed12).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let tool = match GroupTool::prepare(&default_dir()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("group-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let setups = [
        ("rustox1", "1 rustox node", NodeKind::Rustox, 1),
        (
            "bootstrapd1",
            "1 tox-bootstrapd 0.2.18 node",
            NodeKind::ToxBootstrapd,
            1,
        ),
        ("rustox12", "12 rustox nodes", NodeKind::Rustox, 12),
        (
            "bootstrapd12",
            "12 tox-bootstrapd 0.2.18 nodes",
            NodeKind::ToxBootstrapd,
            12,
        ),
        (
            "mixed12",
            "12 nodes, rustox and tox-bootstrapd alternating",
            NodeKind::Mixed,
            12,
        ),
    ];
    println!("| DHT | runs | found | min s | median s | max s | times s |");
    println!("|---|---:|---:|---:|---:|---:|---|");
    let mut port = 37000u16;
    for (key, label, kind, n) in setups {
        if !args.only.is_empty() && !args.only.iter().any(|o| o == key) {
            continue;
        }
        let mut times = Vec::new();
        let mut shown = Vec::new();
        for _ in 0..args.runs {
            let net = match DhtNet::start(kind, n, port) {
                Ok(net) => net,
                Err(e) => {
                    eprintln!("group-bench: starting {label}: {e}");
                    return ExitCode::FAILURE;
                }
            };
            std::thread::sleep(Duration::from_secs(3));
            let peers = (port + 40, port + 41);
            match run_discovery(&tool, &net.first(), peers, Duration::from_secs(args.limit)) {
                Ok(t) => {
                    times.push(t.message);
                    shown.push(format!("{:.1}", t.message));
                }
                Err(e) => {
                    eprintln!("group-bench: {label}: {e}");
                    shown.push("miss".into());
                }
            }
            drop(net);
            port += 50;
        }
        times.sort_by(f64::total_cmp);
        let fmt = |v: Option<&f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        println!(
            "| {label} | {} | {} | {} | {} | {} | {} |",
            args.runs,
            times.len(),
            fmt(times.first()),
            fmt(times.get(times.len() / 2)),
            fmt(times.last()),
            shown.join(", ")
        );
    }
    ExitCode::SUCCESS
}
