//! `scale-sim`: the scale simulation — friend pairs finding each other in a network
//! of whole simulated Tox nodes with loss and churn — printed as markdown table rows.
//!
//! One run: `scale-sim --nodes 1000 --pairs 50 --loss 0.05 --churn-per-min 0.01 --seed 1`.
//!
//! A sweep: `scale-sim --sweep 1000,2000,5000,10000 --cpu-budget-secs 600` runs each size in
//! a child process of its own (so the peak-RSS figure is that run's alone) and stops after
//! the first run over the CPU budget, or before a run whose CPU — extrapolated linearly in
//! the node count from the last one — would take the sweep past `--total-cpu-secs`. It ends
//! with the largest size within the budget and its CPU per node per simulated minute.
//!
//! Memory per node is exact heap (this binary installs the counting allocator,
//! `heap_meter`) and, separately, peak RSS growth; see `scale::MemoryReport`.

use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use clap::Parser;
use rustox_auto_tests::heap_meter::CountingAlloc;
use rustox_auto_tests::scale::{process, run_scale, ScaleOptions, ScaleReport};

#[global_allocator]
static HEAP: CountingAlloc = CountingAlloc;

#[derive(Parser, Debug)]
#[command(about = "Friend pairs finding each other in a simulated Tox network")]
struct Args {
    /// Nodes in the network, bootstrap nodes included.
    #[arg(long, default_value_t = 1000)]
    nodes: usize,
    /// Friend pairs.
    #[arg(long, default_value_t = 50)]
    pairs: usize,
    /// Random loss on every path, each direction.
    #[arg(long, default_value_t = 0.05)]
    loss: f64,
    /// Fraction of ordinary nodes replaced per minute.
    #[arg(long, default_value_t = 0.01)]
    churn_per_min: f64,
    /// Round-trip time of every path, ms.
    #[arg(long, default_value_t = 40)]
    rtt_ms: u64,
    /// Well-known bootstrap nodes.
    #[arg(long, default_value_t = 8)]
    bootstrap_nodes: usize,
    /// Seconds before the pairs add each other.
    #[arg(long, default_value_t = 60)]
    warmup_secs: u64,
    /// Seconds after the adds to wait for every pair.
    #[arg(long, default_value_t = 300)]
    limit_secs: u64,
    /// Ordinary nodes start within this many seconds.
    #[arg(long, default_value_t = 10)]
    start_spread_secs: u64,
    /// The run's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Comma-separated node counts to run in turn.
    #[arg(long, value_delimiter = ',')]
    sweep: Vec<usize>,
    /// A sweep stops after the first run using more CPU than this.
    #[arg(long, default_value_t = 600)]
    cpu_budget_secs: u64,
    /// A sweep does not start a run predicted to take its total CPU past this.
    #[arg(long, default_value_t = 900)]
    total_cpu_secs: u64,
    /// Print the row only (used by the sweep's child runs).
    #[arg(long, hide = true)]
    no_header: bool,
}

impl Args {
    fn options(&self) -> ScaleOptions {
        ScaleOptions {
            nodes: self.nodes,
            bootstrap_nodes: self.bootstrap_nodes,
            pairs: self.pairs,
            loss: self.loss,
            rtt: Duration::from_millis(self.rtt_ms),
            churn_per_min: self.churn_per_min,
            start_spread: Duration::from_secs(self.start_spread_secs),
            warmup: Duration::from_secs(self.warmup_secs),
            limit: Duration::from_secs(self.limit_secs),
            seed: self.seed,
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.sweep.is_empty() {
        return single(&args);
    }
    sweep(&args)
}

fn single(args: &Args) -> ExitCode {
    match run_scale(&args.options()) {
        Ok(report) => {
            if !args.no_header {
                println!("{}", ScaleReport::header());
            }
            println!("{}", report.row());
            eprintln!(
                "nodes {}: {} events, {} datagrams to departed nodes, {} deadlines moved 1 ms on, heap of the largest node {} B",
                report.nodes,
                report.events,
                report.to_departed,
                report.stalls,
                report
                    .memory
                    .heap_max_node
                    .map_or("—".to_string(), |b| b.to_string())
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scale-sim: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Each size in a child process of its own, while the CPU budget holds.
fn sweep(args: &Args) -> ExitCode {
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("scale-sim: cannot find my own executable");
        return ExitCode::FAILURE;
    };
    let budget = Duration::from_secs(args.cpu_budget_secs);
    let total_cap = Duration::from_secs(args.total_cpu_secs);
    let mut spent = Duration::ZERO;
    let mut last: Option<(usize, Duration)> = None;
    let mut largest_within: Option<(usize, Duration, String)> = None;
    println!("{}", ScaleReport::header());
    for &n in &args.sweep {
        if let Some((ln, lcpu)) = last {
            let predicted = lcpu.mul_f64(n as f64 / ln.max(1) as f64);
            if spent + predicted > total_cap {
                eprintln!(
                    "sweep: not running {n} nodes: predicted {:.0} s CPU would take the sweep past {} s",
                    predicted.as_secs_f64(),
                    total_cap.as_secs()
                );
                break;
            }
        }
        let before = process::children_cpu_time().unwrap_or_default();
        let output = Command::new(&exe)
            .args(["--nodes", &n.to_string()])
            .args(["--pairs", &args.pairs.to_string()])
            .args(["--loss", &args.loss.to_string()])
            .args(["--churn-per-min", &args.churn_per_min.to_string()])
            .args(["--rtt-ms", &args.rtt_ms.to_string()])
            .args(["--bootstrap-nodes", &args.bootstrap_nodes.to_string()])
            .args(["--warmup-secs", &args.warmup_secs.to_string()])
            .args(["--limit-secs", &args.limit_secs.to_string()])
            .args(["--start-spread-secs", &args.start_spread_secs.to_string()])
            .args(["--seed", &args.seed.to_string()])
            .arg("--no-header")
            .stderr(Stdio::inherit())
            .output();
        let output = match output {
            Ok(o) if o.status.success() => o,
            Ok(o) => {
                eprintln!("sweep: {n} nodes failed: {}", o.status);
                break;
            }
            Err(e) => {
                eprintln!("sweep: cannot run {n} nodes: {e}");
                break;
            }
        };
        let cpu = process::children_cpu_time()
            .unwrap_or_default()
            .saturating_sub(before);
        spent += cpu;
        let row = String::from_utf8_lossy(&output.stdout).trim().to_string();
        println!("{row}");
        last = Some((n, cpu));
        if cpu > budget {
            eprintln!(
                "sweep: {n} nodes took {:.0} s CPU, over the {} s budget",
                cpu.as_secs_f64(),
                budget.as_secs()
            );
            break;
        }
        largest_within = Some((n, cpu, row));
    }
    match largest_within {
        Some((n, cpu, _)) => println!(
            "\nLargest network within {} s CPU: {n} nodes ({:.0} s CPU); total sweep CPU {:.0} s.",
            budget.as_secs(),
            cpu.as_secs_f64(),
            spent.as_secs_f64()
        ),
        None => println!("\nNo size ran within {} s CPU.", budget.as_secs()),
    }
    ExitCode::SUCCESS
}
