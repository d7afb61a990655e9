//! What the simulator benchmarks (`transport-bench`, `file-bench`) share: choosing profiles
//! and controllers on the command line, and running independent rows on worker threads.

use std::collections::VecDeque;
use std::sync::Mutex;

use rustox_net_crypto::ControllerKind;
use rustox_simulator::{controllers_by_names, Profile};

/// The options both benchmarks take first: the output's form, the short run and which rows.
/// Each benchmark says what its `--quick` shortens (`mut_arg("quick", …)` on its command).
#[derive(clap::Args, Debug)]
pub struct RowArgs {
    /// One JSON object per row instead of the table.
    #[arg(long)]
    pub json: bool,
    /// A short run.
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub select: Selection,
}

/// The profiles and controllers a benchmark runs, as named on its command line.
#[derive(clap::Args, Debug)]
pub struct Selection {
    /// Only these profiles (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub profile: Vec<String>,
    /// Only these controllers (bbr, cubic, legacy; comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub controller: Vec<String>,
}

impl Selection {
    /// The named profiles, or `unnamed` when none is named. The error names the unknown one.
    pub fn profiles(&self, unnamed: impl FnOnce() -> Vec<Profile>) -> Result<Vec<Profile>, String> {
        if self.profile.is_empty() {
            return Ok(unnamed());
        }
        self.profile
            .iter()
            .map(|name| Profile::by_name(name).ok_or_else(|| format!("unknown profile {name}")))
            .collect()
    }

    /// The named controllers, or all three when none is named.
    pub fn controllers(&self) -> Result<Vec<ControllerKind>, String> {
        controllers_by_names(&self.controller).map_err(|name| format!("unknown controller {name}"))
    }
}

/// Worker threads: `jobs` if given, else the available cores; at least one.
pub fn worker_count(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// Runs `run` on every item on up to `jobs` threads; the results come back in the items'
/// order. Each row is independent and single-threaded, so the threads change only how long
/// the whole takes.
pub fn run_parallel<T: Send, R: Send>(
    items: Vec<T>,
    jobs: usize,
    run: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let total = items.len();
    let queue = Mutex::new(items.into_iter().enumerate().collect::<VecDeque<_>>());
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..total).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(total.max(1)) {
            s.spawn(|| loop {
                let next = queue.lock().map(|mut q| q.pop_front()).unwrap_or(None);
                let Some((i, item)) = next else { break };
                let result = run(item);
                if let Ok(mut r) = results.lock() {
                    if let Some(slot) = r.get_mut(i) {
                        *slot = Some(result);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}
