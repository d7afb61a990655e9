//! The rows and their runs: a fresh victim per run, the attack, the honest transfer through
//! it, and what was measured.

use std::path::Path;
use std::time::{Duration, Instant};

use rustox_auto_tests::attack::session::WINDOW;
use rustox_auto_tests::attack::victim::{self, Victim};

use crate::attack::{start_attack, Running};
use crate::{Args, AttackKind, Setup, OTHERS_CPU, VICTIM_CPU};

/// A friend-request spammer needs the onion to find the victim (paths, announcements,
/// searches): several seconds on a fresh network, so its lead time is at least this.
const SPAM_LEAD: Duration = Duration::from_secs(5);

/// How long the victim may take to print its summary after the sender exits.
const RECEIVER_SUMMARY_WAIT: Duration = Duration::from_secs(10);

/// The victim's wait for its CPU (share of the transfer) above which a run gets a note that
/// it was starved: the row then measures the machine's other load, not only the node. On an
/// idle machine it waits 1–2 %; the sender waits 10–25 % even unattacked, behind
/// `ksoftirqd/1` doing the kernel's work for the shaped link, so its column gets no note.
const STARVED_PERCENT: f64 = 10.0;

/// What one run of a row measured.
pub struct Sample {
    pub achieved: Option<f64>,
    pub cpu_percent: Option<f64>,
    /// The victim's loop waiting runnable for its CPU, % of the transfer.
    pub victim_wait_percent: Option<f64>,
    /// The same for the honest sender.
    pub sender_wait_percent: Option<f64>,
    pub peak_rss_mib: Option<f64>,
    /// Socket drops during the transfer.
    pub kernel_drops: Option<u64>,
    pub friends_added: usize,
    pub byte_exact: bool,
    pub goodput_mbit: Option<f64>,
    /// The victim's largest drop counters at the end of the run (`layer.reason`, count).
    pub drops: Vec<(String, u64)>,
    pub notes: Vec<String>,
}

impl Sample {
    /// Nothing measured yet.
    pub fn empty() -> Sample {
        Sample {
            achieved: None,
            cpu_percent: None,
            victim_wait_percent: None,
            sender_wait_percent: None,
            peak_rss_mib: None,
            kernel_drops: None,
            friends_added: 0,
            byte_exact: false,
            goodput_mbit: None,
            drops: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// One line of the table: an attack at a rate, and its runs.
pub struct Row {
    pub attack: String,
    pub offered: String,
    pub runs: Vec<Sample>,
}

/// Binds the calling thread, and so every thread it starts later, to `cpu`.
fn pin_current_thread(cpu: usize) -> Result<(), String> {
    let mut set = nix::sched::CpuSet::new();
    set.set(cpu).map_err(|e| e.to_string())?;
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).map_err(|e| e.to_string())
}

/// Runs every row `args.runs` times, the rows interleaved, on the calling thread (the
/// attacker's: inside namespace A with `--link`).
pub fn run_rows(args: &Args, setup: &Setup, file: &Path, dir: &Path, size: u64) -> Vec<Row> {
    let mut plan: Vec<(Option<AttackKind>, u64)> = vec![(None, 0)];
    for &kind in &args.attacks {
        if kind.is_flood() {
            plan.extend(args.rate.iter().map(|&r| (Some(kind), r)));
        } else {
            plan.push((Some(kind), 0));
        }
    }
    let mut rows: Vec<Row> = plan
        .iter()
        .map(|&(kind, rate)| Row {
            attack: kind.map_or("none", AttackKind::name).to_owned(),
            offered: match kind {
                None => "-".into(),
                Some(AttackKind::FriendSpam) => format!("{} ids", args.spammers),
                Some(_) => rate.to_string(),
            },
            runs: Vec::new(),
        })
        .collect();
    let pin_note = if setup.pin_attacker {
        pin_current_thread(OTHERS_CPU)
            .err()
            .map(|e| format!("attacker not pinned: {e}"))
    } else {
        None
    };
    for run in 0..args.runs {
        for (i, (&(kind, rate), row)) in plan.iter().zip(rows.iter_mut()).enumerate() {
            let run_dir = dir.join(format!("row{i}-run{run}"));
            let mut sample = match std::fs::create_dir_all(&run_dir) {
                Ok(()) => run_once(args, setup, file, &run_dir, size, kind, rate),
                Err(e) => failed(format!("{}: {e}", run_dir.display())),
            };
            sample.notes.extend(pin_note.clone());
            eprintln!(
                "attack-bench: run {}/{} {} @ {}: {}{}",
                run + 1,
                args.runs,
                row.attack,
                row.offered,
                if sample.byte_exact {
                    "byte-exact"
                } else {
                    "NOT delivered"
                },
                sample
                    .goodput_mbit
                    .map_or(String::new(), |g| format!(", {g:.1} Mbit/s"))
            );
            row.runs.push(sample);
            let _ = std::fs::remove_dir_all(&run_dir);
        }
    }
    rows
}

/// A run that never started.
fn failed(note: String) -> Sample {
    let mut sample = Sample::empty();
    sample.notes.push(note);
    sample
}

/// One run of one sample: a fresh victim, the attack, the honest transfer.
fn run_once(
    args: &Args,
    setup: &Setup,
    file: &Path,
    dir: &Path,
    size: u64,
    kind: Option<AttackKind>,
    rate: u64,
) -> Sample {
    let mut sample = Sample::empty();
    let mut victim = match Victim::start(&setup.rustox, &setup.victim, setup.victim_ip, dir) {
        Ok(v) => v,
        Err(e) => {
            sample.notes.push(e);
            return sample;
        }
    };
    // It printed its address: it is rustox by now, in the session `setsid` made.
    if let Some(nice) = setup.autogroup_nice {
        if let Err(e) = victim::set_autogroup_nice(victim.pid(), nice) {
            sample
                .notes
                .push(format!("the victim's session keeps its nice: {e}"));
        }
    }
    let running = match kind {
        None => Ok(Running::Nothing),
        Some(k) => start_attack(args, setup.sources, k, rate, &victim, &mut sample.notes),
    };
    let running = match running {
        Ok(r) => r,
        Err(e) => {
            sample.notes.push(format!("attack not started: {e}"));
            return sample;
        }
    };
    let lead = Duration::from_secs_f64(args.seconds.max(0.0));
    std::thread::sleep(match kind {
        Some(AttackKind::FriendSpam) => lead.max(SPAM_LEAD),
        // Long enough to fill every pinned window once, so the peak memory shows whether
        // the victim bounds what it buffers or holds the whole window per session.
        Some(AttackKind::Pinning) if rate > 0 => lead.max(Duration::from_secs_f64(
            args.pin_sessions as f64 * f64::from(WINDOW) / rate as f64,
        )),
        _ => lead,
    });

    let cpu_before = victim.cpu_seconds();
    let sched_before = victim.schedstat();
    let drops_before = victim.socket_drops();
    let started = Instant::now();
    let honest = victim::send_file(
        &setup.rustox,
        &setup.sender,
        &victim,
        file,
        &dir.join("send.stderr"),
        Duration::from_secs(args.limit),
        setup.autogroup_nice,
    );
    let window = started.elapsed();
    let cpu_after = victim.cpu_seconds();
    let sched_after = victim.schedstat();
    let drops_after = victim.socket_drops();
    let received = victim.received(if honest.summary.is_ok() {
        RECEIVER_SUMMARY_WAIT
    } else {
        Duration::ZERO
    });
    sample.cpu_percent = match (cpu_before, cpu_after) {
        (Some(a), Some(b)) if window > Duration::ZERO => {
            Some((b - a) / window.as_secs_f64() * 100.0)
        }
        _ => None,
    };
    let share = |d: Duration, of: Duration| {
        (of > Duration::ZERO).then(|| d.as_secs_f64() / of.as_secs_f64() * 100.0)
    };
    sample.victim_wait_percent = match (sched_before, sched_after) {
        (Some(a), Some(b)) => share(b.since(a).waited, window),
        _ => None,
    };
    sample.sender_wait_percent = honest.sched.and_then(|s| share(s.waited, honest.wall));
    if let Some(w) = sample.victim_wait_percent.filter(|&w| w > STARVED_PERCENT) {
        sample.notes.push(format!(
            "the victim waited runnable for CPU {VICTIM_CPU} {w:.0} % of the transfer: other \
             tasks had it, and the row measures them as much as the victim"
        ));
    }
    if let Some(Err(e)) = &honest.autogroup {
        sample
            .notes
            .push(format!("the sender's session keeps its nice: {e}"));
    }
    sample.peak_rss_mib = victim
        .peak_rss_bytes()
        .map(|b| b as f64 / f64::from(1 << 20));
    sample.kernel_drops = match (drops_before, drops_after) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    if let Some(lead) = drops_before.filter(|&d| d > 0) {
        sample.notes.push(format!(
            "{lead} datagrams dropped at the victim's socket while the attack ran alone"
        ));
    }
    sample.drops = victim.drop_reasons();
    let report = running.stop();
    sample.friends_added = victim.friends_added();
    if !victim.running() {
        sample.notes.push(format!(
            "the victim exited: {}",
            victim.stderr_tail(2).replace('\n', " | ")
        ));
    }
    if let Some(f) = report.flood {
        sample.achieved = Some(f.achieved_rate());
        if f.errors > 0 || f.missed > 0 {
            sample.notes.push(format!(
                "flood: {} refused by the kernel, {} not sent in time",
                f.errors, f.missed
            ));
        }
    }
    if let Some(n) = report.spammers_online {
        sample.notes.push(format!(
            "{n} of {} spammers saw the victim online as their friend",
            args.spammers
        ));
    }
    match (&honest.summary, &received) {
        (Ok(sent), Some(got)) => {
            sample.byte_exact = sent.sha256 == got.sha256 && got.bytes == size;
            sample.goodput_mbit = Some(sent.goodput_mbit);
            if !sample.byte_exact {
                sample.notes.push(format!(
                    "sent {} bytes sha256 {}, received {} bytes sha256 {}",
                    sent.bytes, sent.sha256, got.bytes, got.sha256
                ));
            }
        }
        (Ok(sent), None) => {
            sample.goodput_mbit = Some(sent.goodput_mbit);
            sample
                .notes
                .push("the sender finished but the victim printed no summary".into());
        }
        (Err(e), _) => sample.notes.push(format!(
            "honest send failed after {:.1} s: {e}",
            honest.wall.as_secs_f64()
        )),
    }
    sample
}
