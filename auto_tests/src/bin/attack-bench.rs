//! attack-bench: what floods and abuse cost a running `rustox recv`, and whether an honest
//! file transfer through it survives them (docs/design.md principle 5, "a flood of bad packets
//! costs the node little and changes nothing").
//!
//! Each row starts a fresh victim (`rustox recv`, the binary beside this one), starts one
//! attack from this process, lets it run alone for `--seconds` (pinning: at least until
//! every pinned window is full; friend spam: at least 5 s), then runs
//! `rustox send --to ADDR --key KEY FILE` while the attack goes on, and stops everything.
//! The first row, "none", is the unattacked baseline the others are a share of.
//!
//! Where they run (`--link`). By default the honest transfer crosses a link shaped to
//! `--link` Mbit/s (100) each way: the victim runs in a network namespace of its own, the
//! sender in another, joined by a veth pair with a token bucket on both ends, and the
//! attacker reaches the victim over a second, unshaped veth pair from a third namespace
//! (`rustox_auto_tests::attack::link`). The transfer is then limited by the link, not by the
//! CPU, and the flood does not take the honest link's bandwidth: a row that loses goodput
//! lost it at the victim. Needs root. `--link 0` runs everything on loopback in this
//! namespace instead, where the transfer is CPU-bound (1–2 Gbit/s on two cores, swinging
//! between runs) and its share measures CPU contention as much as the victim.
//!
//! CPUs (unless `--no-pin`, and only with `taskset`, `setsid` and at least two CPUs): the
//! victim runs on CPU 0 and the honest sender on CPU 1 (`taskset -c`); this process's
//! attacker threads are bound to CPU 1 too (`sched_setaffinity`), so the victim has a core to
//! itself and what the attack costs it shows in its own CPU column. The victim and the sender
//! each run in a session of their own (`setsid`) at nice −10, and so does that session's
//! autogroup (`HONEST_NICE`): the attacker beside the sender cannot starve it, and neither
//! can other work on the machine (a build), which the scheduler would otherwise give half of
//! each core whatever its nice. On separate machines of their own they would not be starved.
//! Whether they were anyway is measured: the wait columns.
//!
//! Repeats (`--runs`, 3): every row, the baseline included, runs that many times, the rows
//! interleaved (all rows once, then again) so a slow spell of the machine spreads over all
//! of them. The table shows the median goodput and its min–max, and the share is the median
//! over the baseline's median.
//!
//! Columns: the attack; the rate it offered and the rate the kernel took from it
//! (packets/s, median); the victim's CPU (utime + stime from /proc/PID/stat over the
//! transfer, divided by the transfer's wall time: 100 % is one core; median); the time its
//! loop (main thread) was runnable but waited for its CPU, and the same for the honest
//! sender, as shares of the transfer (/proc/PID/schedstat; median): a victim that waited
//! used less CPU than it needed, so a low CPU column with a high wait means it was starved,
//! not idle (the sender waits 10–25 % unattacked, behind the kernel's softirq work for the
//! link on its CPU); its peak resident set (VmHWM, MiB; largest of the runs); datagrams the
//! kernel dropped at its socket during the transfer because it did not read them in time
//! (/proc/PID/net/udp; largest; drops while the attack ran alone are a note); friends it
//! added (strangers' sessions and friend requests, from its stderr; the honest sender is
//! one; largest); whether the honest file arrived byte-exact in every run (the SHA-256
//! `rustox send` printed equals the one `rustox recv` printed, and all bytes arrived;
//! "k/N" when only k did); the honest goodput as `rustox send` measured it (median, and
//! min–max); and its share of the baseline's, shown only when every run was byte-exact.
//! The project's goal: every row byte-exact, bounded, at ≥ 80 %. Below the table, each
//! row's largest drop counters at the victim in its median run (`layer.reason`, from the
//! JSON line `rustox recv` prints each second with `RUSTOX_TRACE_STATS` set): where the
//! attack was stopped.
//!
//! usage: cargo build --release -p rustox -p rustox-auto-tests --bin attack-bench
//!        target/release/attack-bench [--link 100] [--runs 3] [--size 32MiB]
//!        [--rate 50000,100000] [--seconds 1] [--no-pin]
//!        [--attacks malformed,spoofed,cookie-flood,handshake-replay,pinning,friend-spam,
//!        announce-flood]

use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_auto_tests::attack::flood::{Flood, FloodReport, Outlet, Pool};
use rustox_auto_tests::attack::forge;
use rustox_auto_tests::attack::link::{AttackNet, LinkShape, Sources, VICTIM_IP};
use rustox_auto_tests::attack::session::{handshake_pool, PinnedSession, Pinning, WINDOW};
use rustox_auto_tests::attack::victim::{self, Victim};
use rustox_auto_tests::ctoxcore::Launch;
use rustox_auto_tests::emulator::rustox_beside_current_exe;
use rustox_auto_tests::live::{RustoxOptions, RustoxPeer};
use rustox_net_crypto::crypto::PublicKey;

/// Distinct datagrams in the malformed pool: enough that the victim never sees a pattern
/// in the time a row lasts (8192 × ~700 bytes is 5.6 MiB of the bench's memory).
const MALFORMED_POOL: usize = 8192;

/// Announce requests in the pool, each from its own key: far more than any shared-key
/// cache the victim might keep, so each costs it a key agreement.
const ANNOUNCE_POOL: usize = 4096;

/// Identities whose real cookies the handshake replay uses, and fresh-key handshakes per
/// identity: 4 × 2 × 128 = 1024 datagrams, half of them verbatim repeats. Four cookies
/// fit the victim's cookie bucket (10 at once) without waiting for a refill.
const REPLAY_IDENTITIES: usize = 4;
const REPLAY_FRESH: usize = 128;

/// Source addresses the spoofed-source flood binds: host 2 … 254 of the attacker's pool
/// (127.0.0.x on loopback, 10.78.4.x with `--link`), one socket each on a port the OS picks.
const SPOOF_FIRST: u8 = 2;
const SPOOF_LAST: u8 = 254;

/// A friend-request spammer needs the onion to find the victim (paths, announcements,
/// searches): several seconds on a fresh network, so its lead time is at least this.
const SPAM_LEAD: Duration = Duration::from_secs(5);

/// Drop reasons shown per row, largest first.
const TOP_DROP_REASONS: usize = 4;

/// How long the victim may take to print its summary after the sender exits.
const RECEIVER_SUMMARY_WAIT: Duration = Duration::from_secs(10);

/// The honest file's default size with `--link`: about 3 s at 100 Mbit/s, long enough that
/// the transfer's start (handshake, slow start) is a small part of its goodput.
const LINK_FILE_SIZE: u64 = 32 << 20;
/// The default size on loopback, where the transfer runs at 1–2 Gbit/s.
const LOOPBACK_FILE_SIZE: u64 = 64 << 20;

/// The CPU the victim runs on, and the one the honest sender and the attacker share.
const VICTIM_CPU: usize = 0;
const OTHERS_CPU: usize = 1;

/// The nice value of the honest parties, victim and sender, and of their sessions'
/// autogroups, when pinned. The sender shares [`OTHERS_CPU`] with the attacker, whose flood
/// thread (and the kernel's work for each datagram, done in its `sendto`) takes all of that
/// core at 100 000 packets/s; at nice 0 the sender then gets half of it and its goodput drops
/// for a reason that has nothing to do with the victim (measured: pinning at 100 000/s, 29 %
/// of the baseline at nice 0, 92 % at −10). At −10 its scheduler weight is 9548 against the
/// attacker's 1024 (the kernel's `sched_prio_to_weight`), so it runs when it needs to, as it
/// would on a machine of its own; the attacker gets the rest, and its achieved rate says how
/// much that was.
///
/// A task's nice only counts inside its autogroup (its session), and this bench's session
/// holds the attacker too, whose load on CPU 1 draws the session's weight there; so each
/// honest party gets a session of its own whose autogroup runs at this nice as well. Measured
/// with four busy loops at nice 10 in another session (a build): all three parties in this
/// session at autogroup nice 0, the baseline fell to 57 Mbit/s and the attacked transfers did
/// not finish; with the session at −10, pinning at 100 000/s still fell to 9 % of the
/// baseline, the victim running 44 % of CPU 0 and waiting runnable most of the rest; with
/// a session of its own for each, pinning and spoofed at 100 000/s kept 98 % and 102 % of
/// a 89 Mbit/s baseline with no socket drops, the victim waiting 13–18 % of the transfer.
const HONEST_NICE: i32 = -10;

/// The victim's wait for its CPU (share of the transfer) above which a run gets a note that
/// it was starved: the row then measures the machine's other load, not only the node. On an
/// idle machine it waits 1–2 %; the sender waits 10–25 % even unattacked, behind
/// `ksoftirqd/1` doing the kernel's work for the shaped link, so its column gets no note.
const STARVED_PERCENT: f64 = 10.0;

#[derive(Parser, Debug)]
#[command(about = "Attacks on a running rustox recv, against an honest transfer through it")]
struct Args {
    /// The honest file's size (e.g. 16MiB, 64MiB, 1G; binary units, plain numbers are
    /// bytes). Default: 32MiB with --link, 64MiB on loopback.
    #[arg(long, value_parser = parse_size)]
    size: Option<u64>,
    /// The honest link's rate, Mbit/s each way: the victim and the sender run in network
    /// namespaces joined by a shaped veth pair, the attacker reaches the victim over an
    /// unshaped one (needs root). 0: everything on loopback in this namespace.
    #[arg(long, default_value_t = 100)]
    link: u64,
    /// The honest link's queue, in milliseconds at its rate (one bandwidth-delay product of
    /// a path with this round trip).
    #[arg(long, default_value_t = 20)]
    queue_ms: u64,
    /// Times each row (the baseline included) runs; the table shows medians.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Leave CPU placement to the scheduler (default: victim on CPU 0, honest sender and
    /// attacker on CPU 1).
    #[arg(long)]
    no_pin: bool,
    /// Flood rates to try, packets per second (comma-separated; each flood gets one row
    /// per rate).
    #[arg(long, value_delimiter = ',', default_value = "50000")]
    rate: Vec<u64>,
    /// Seconds each attack runs alone before the honest transfer starts.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Attacks to run (comma-separated), after the "none" baseline.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "malformed,spoofed,cookie-flood,handshake-replay,pinning,friend-spam,announce-flood"
    )]
    attacks: Vec<AttackKind>,
    /// Sessions the pinning attacker completes and pins, each from its own address.
    #[arg(long, default_value_t = 8)]
    pin_sessions: usize,
    /// Identities that each send the victim a friend request (a rustox node each).
    #[arg(long, default_value_t = 16)]
    spammers: usize,
    /// Seconds the honest transfer may take before it counts as failed.
    #[arg(long, default_value_t = 120)]
    limit: u64,
    /// The rustox binary (default: beside this one).
    #[arg(long)]
    rustox: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AttackKind {
    /// Random lengths and bytes behind net_crypto, DHT, onion and LAN kind bytes.
    Malformed,
    /// The cookie-request pool from 253 loopback addresses and, as root, source port 0.
    Spoofed,
    /// 32 identities' cookie requests from one socket, half with a broken box.
    CookieFlood,
    /// Handshakes under real cookies: verbatim repeats and fresh session keys.
    HandshakeReplay,
    /// Completed sessions that send only packets above a hole, so all are buffered.
    Pinning,
    /// Many identities sending friend requests through the DHT and onion.
    FriendSpam,
    /// Onion announce requests from random keys, straight to the victim.
    AnnounceFlood,
}

impl AttackKind {
    fn name(self) -> &'static str {
        match self {
            AttackKind::Malformed => "malformed",
            AttackKind::Spoofed => "spoofed",
            AttackKind::CookieFlood => "cookie-flood",
            AttackKind::HandshakeReplay => "handshake-replay",
            AttackKind::Pinning => "pinning",
            AttackKind::FriendSpam => "friend-spam",
            AttackKind::AnnounceFlood => "announce-flood",
        }
    }

    /// Whether the attack is a paced flood (one row per rate).
    fn is_flood(self) -> bool {
        self != AttackKind::FriendSpam
    }
}

/// Parses 64MiB, 16M, 1G, 1500 (bytes); K/M/G are binary.
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let n: u64 = n.parse().map_err(|_| format!("{text:?} is not a size"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        _ => return Err(format!("{text:?}: unknown unit {unit:?}")),
    };
    n.checked_mul(1 << shift)
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{text:?} is out of range"))
}

/// What runs against the victim during a row.
enum Running {
    Nothing,
    Flood(Flood),
    Peers(Vec<RustoxPeer>),
}

/// What a stopped attack reports.
struct AttackReport {
    flood: Option<FloodReport>,
    /// Friend-spam: spammers that saw the victim come online as their friend.
    spammers_online: Option<usize>,
}

impl Running {
    fn stop(self) -> AttackReport {
        match self {
            Running::Nothing => AttackReport {
                flood: None,
                spammers_online: None,
            },
            Running::Flood(f) => AttackReport {
                flood: Some(f.stop()),
                spammers_online: None,
            },
            Running::Peers(peers) => {
                let online = peers
                    .iter()
                    .filter(|p| p.log.friend_online().is_some())
                    .count();
                for p in peers {
                    p.stop();
                }
                AttackReport {
                    flood: None,
                    spammers_online: Some(online),
                }
            }
        }
    }
}

/// What one run of a row measured.
struct Sample {
    achieved: Option<f64>,
    cpu_percent: Option<f64>,
    /// The victim's loop waiting runnable for its CPU, % of the transfer.
    victim_wait_percent: Option<f64>,
    /// The same for the honest sender.
    sender_wait_percent: Option<f64>,
    peak_rss_mib: Option<f64>,
    /// Socket drops during the transfer.
    kernel_drops: Option<u64>,
    friends_added: usize,
    byte_exact: bool,
    goodput_mbit: Option<f64>,
    /// The victim's largest drop counters at the end of the run (`layer.reason`, count).
    drops: Vec<(String, u64)>,
    notes: Vec<String>,
}

impl Sample {
    /// Nothing measured yet.
    fn empty() -> Sample {
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
struct Row {
    attack: String,
    offered: String,
    runs: Vec<Sample>,
}

/// How the parties are started and where the attacker's datagrams come from.
struct Setup {
    rustox: PathBuf,
    /// Prefix of the victim's command (`taskset`, `ip netns exec`).
    victim: Launch,
    /// Prefix of the honest sender's command.
    sender: Launch,
    /// Where the victim listens.
    victim_ip: IpAddr,
    sources: Sources,
    /// Bind the attacker's threads to [`OTHERS_CPU`].
    pin_attacker: bool,
    /// The nice of the victim's and the sender's own sessions ([`HONEST_NICE`] when pinned).
    autogroup_nice: Option<i32>,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("attack-bench: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), String> {
    if args.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let rustox = match &args.rustox {
        Some(p) => p.clone(),
        None => rustox_beside_current_exe()?,
    };
    let size = args.size.unwrap_or(if args.link > 0 {
        LINK_FILE_SIZE
    } else {
        LOOPBACK_FILE_SIZE
    });
    let pin = pinning(args);
    let taskset = |cpu: usize| -> Vec<OsString> {
        match pin {
            Ok(()) => ["taskset", "-c", &cpu.to_string()]
                .into_iter()
                .map(OsString::from)
                .collect(),
            Err(_) => Vec::new(),
        }
    };
    // A session of its own at HONEST_NICE for each honest party.
    let honest_nice: Vec<OsString> = match pin {
        Ok(()) => ["setsid", "nice", "-n", &HONEST_NICE.to_string()]
            .into_iter()
            .map(OsString::from)
            .collect(),
        Err(_) => Vec::new(),
    };
    let net = if args.link > 0 {
        Some(AttackNet::build(LinkShape {
            rate_bps: args.link.saturating_mul(1_000_000),
            queue: Duration::from_millis(args.queue_ms),
        })?)
    } else {
        None
    };
    let setup = Setup {
        rustox,
        victim: Launch::prefixed(
            taskset(VICTIM_CPU)
                .into_iter()
                .chain(honest_nice.iter().cloned())
                .chain(net.iter().flat_map(AttackNet::victim_prefix)),
        ),
        sender: Launch::prefixed(
            taskset(OTHERS_CPU)
                .into_iter()
                .chain(honest_nice)
                .chain(net.iter().flat_map(AttackNet::sender_prefix)),
        ),
        victim_ip: if net.is_some() {
            IpAddr::V4(VICTIM_IP)
        } else {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        },
        sources: if net.is_some() {
            Sources::Link
        } else {
            Sources::Loopback
        },
        pin_attacker: pin.is_ok(),
        autogroup_nice: pin.is_ok().then_some(HONEST_NICE),
    };

    let dir = std::env::temp_dir().join(format!("attack-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let file = dir.join("honest.bin");
    victim::write_file(&file, size, 0x5eed).map_err(|e| format!("{e}"))?;
    println!(
        "attack-bench: honest file {} MiB, attacks lead by {:.1} s, rates {:?} packets/s, {} run{} per row",
        size as f64 / f64::from(1 << 20),
        args.seconds,
        args.rate,
        args.runs,
        if args.runs == 1 { "" } else { "s" }
    );
    match &net {
        Some(net) => {
            let shape = net.shape();
            println!(
                "link: {} Mbit/s each way (tbf, bucket {} B, drop-tail queue {} B = {} ms), \
                 no added delay (this kernel has no netem); the attacker on its own unshaped veth",
                args.link,
                shape.burst_bytes(),
                shape.queue_bytes(),
                args.queue_ms
            );
        }
        None => println!("link: none, all on loopback (the transfer is CPU-bound)"),
    }
    match &pin {
        Ok(()) => println!(
            "cpus: victim on {VICTIM_CPU}; honest sender and attacker threads on {OTHERS_CPU}; \
             victim and sender each in a session of its own, \
             at nice {HONEST_NICE} (task and autogroup)"
        ),
        Err(why) => println!("cpus: not pinned ({why})"),
    }
    let started = Instant::now();
    let rows = match &net {
        Some(net) => net.run_attacker(|| run_rows(args, &setup, &file, &dir, size))?,
        None => run_rows(args, &setup, &file, &dir, size),
    };
    print_table(&rows);
    println!();
    println!("wall time {:.0} s", started.elapsed().as_secs_f64().round());
    let _ = std::fs::remove_dir_all(&dir);
    drop(net);
    Ok(())
}

/// Whether to pin the parties to CPUs, or why not.
fn pinning(args: &Args) -> Result<(), String> {
    if args.no_pin {
        return Err("--no-pin".into());
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus <= OTHERS_CPU {
        return Err(format!("{cpus} CPU available"));
    }
    for tool in ["taskset", "setsid"] {
        match std::process::Command::new(tool)
            .arg("-V")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
        {
            Ok(s) if s.success() => {}
            _ => return Err(format!("no {tool}")),
        }
    }
    Ok(())
}

/// Binds the calling thread, and so every thread it starts later, to `cpu`.
fn pin_current_thread(cpu: usize) -> Result<(), String> {
    let mut set = nix::sched::CpuSet::new();
    set.set(cpu).map_err(|e| e.to_string())?;
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).map_err(|e| e.to_string())
}

/// Runs every row `args.runs` times, the rows interleaved, on the calling thread (the
/// attacker's: inside namespace A with `--link`).
fn run_rows(args: &Args, setup: &Setup, file: &Path, dir: &Path, size: u64) -> Vec<Row> {
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

/// Prepares and starts one attack on `victim`, from `sources`.
fn start_attack(
    args: &Args,
    sources: Sources,
    kind: AttackKind,
    rate: u64,
    victim: &Victim,
    notes: &mut Vec<String>,
) -> Result<Running, String> {
    let mut rng = StdRng::from_entropy();
    let key = PublicKey::from_hex(&victim.key_hex).ok_or("the victim printed a bad key")?;
    let to = victim.addr;
    let one_socket = || Outlet::udp(sources.host()).map_err(|e| e.to_string());
    let flood = |outlets: Vec<Outlet>, packets: Vec<Vec<u8>>| {
        let n = outlets.len();
        Flood::start(to, rate, outlets, Box::new(Pool::new(packets, n)))
            .map(Running::Flood)
            .map_err(|e| e.to_string())
    };
    match kind {
        AttackKind::Malformed => flood(
            vec![one_socket()?],
            forge::malformed(MALFORMED_POOL, &mut rng),
        ),
        AttackKind::CookieFlood => flood(
            vec![one_socket()?],
            forge::cookie_request_pool(&key, &mut rng),
        ),
        AttackKind::Spoofed => {
            let mut outlets = (SPOOF_FIRST..=SPOOF_LAST)
                .map(|last| Outlet::udp(sources.spoofed(last)))
                .collect::<std::io::Result<Vec<_>>>()
                .map_err(|e| format!("binding {}: {e}", sources.spoofed(SPOOF_FIRST)))?;
            match Outlet::port_zero() {
                Ok(raw) => {
                    outlets.push(raw);
                    notes.push(format!(
                        "1 in {} datagrams from UDP source port 0 (raw socket)",
                        outlets.len()
                    ));
                }
                Err(e) => notes.push(format!("no datagrams from port 0 (needs root): {e}")),
            }
            flood(outlets, forge::cookie_request_pool(&key, &mut rng))
        }
        AttackKind::HandshakeReplay => {
            let socket = UdpSocket::bind((sources.host(), 0)).map_err(|e| e.to_string())?;
            let pool = handshake_pool(&socket, to, &key, REPLAY_IDENTITIES, REPLAY_FRESH, &mut rng)
                .map_err(|e| e.to_string())?;
            notes.push(format!(
                "cookies expire after 15 s (COOKIE_TIMEOUT): later handshakes are stale ({} datagrams in the pool)",
                pool.len()
            ));
            flood(vec![Outlet::Udp(socket)], pool)
        }
        AttackKind::Pinning => {
            let sessions = (0..args.pin_sessions)
                .map(|i| {
                    let ip = sources.pinned(1 + (i % 250) as u8);
                    PinnedSession::open(ip, to, &key, &mut rng)
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let (source, outlets) = Pinning::new(sessions).map_err(|e| e.to_string())?;
            Flood::start(to, rate, outlets, Box::new(source))
                .map(Running::Flood)
                .map_err(|e| e.to_string())
        }
        AttackKind::AnnounceFlood => flood(
            vec![one_socket()?],
            forge::announce_requests(&key, ANNOUNCE_POOL, &mut rng),
        ),
        AttackKind::FriendSpam => {
            let id = victim
                .tox_id
                .parse()
                .map_err(|e| format!("the victim's Tox ID: {e}"))?;
            let peers = (0..args.spammers)
                .map(|_| {
                    RustoxPeer::start(RustoxOptions {
                        bind_ip: Some(IpAddr::V4(sources.host())),
                        bootstrap: vec![(to, key)],
                        request: Some(id),
                        ..RustoxOptions::default()
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            Ok(Running::Peers(peers))
        }
    }
}

/// The median of `values` (the mean of the middle two for an even count); `None` if empty.
fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.into_iter().collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => v.get(n / 2).copied(),
        _ => Some((v.get(n / 2 - 1)? + v.get(n / 2)?) / 2.0),
    }
}

impl Row {
    fn median_goodput(&self) -> Option<f64> {
        median(self.runs.iter().filter_map(|s| s.goodput_mbit))
    }

    fn all_byte_exact(&self) -> bool {
        !self.runs.is_empty() && self.runs.iter().all(|s| s.byte_exact)
    }

    /// The run whose goodput is the median (the lower middle for an even count); without
    /// any goodput, the last run.
    fn median_run(&self) -> Option<&Sample> {
        let mut with: Vec<&Sample> = self
            .runs
            .iter()
            .filter(|s| s.goodput_mbit.is_some())
            .collect();
        with.sort_by(|a, b| {
            a.goodput_mbit
                .unwrap_or(0.0)
                .total_cmp(&b.goodput_mbit.unwrap_or(0.0))
        });
        match with.len() {
            0 => self.runs.last(),
            n => with.get((n - 1) / 2).copied(),
        }
    }
}

fn print_table(rows: &[Row]) {
    let baseline = rows
        .iter()
        .find(|r| r.attack == "none")
        .filter(|r| r.all_byte_exact())
        .and_then(Row::median_goodput);
    let opt = |v: Option<f64>, prec: usize| v.map_or("-".into(), |x| format!("{x:.prec$}"));
    let max_f = |it: &mut dyn Iterator<Item = f64>| it.reduce(f64::max);
    println!();
    println!(
        "{:<17} {:>8} {:>9} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>10} {:>7} {:>13} {:>7}",
        "attack",
        "rate/s",
        "achieved",
        "cpu %",
        "wait %",
        "s-wait %",
        "rss MiB",
        "k-drops",
        "friends",
        "byte-exact",
        "Mbit/s",
        "min–max",
        "share %"
    );
    for r in rows {
        let goodput = r.median_goodput();
        let share = match (goodput, baseline) {
            (Some(g), Some(b)) if b > 0.0 && r.all_byte_exact() => Some(g / b * 100.0),
            _ => None,
        };
        let goodputs: Vec<f64> = r.runs.iter().filter_map(|s| s.goodput_mbit).collect();
        let range = match (
            goodputs.iter().copied().reduce(f64::min),
            goodputs.iter().copied().reduce(f64::max),
        ) {
            (Some(lo), Some(hi)) => format!("{lo:.1}–{hi:.1}"),
            _ => "-".into(),
        };
        let exact = r.runs.iter().filter(|s| s.byte_exact).count();
        println!(
            "{:<17} {:>8} {:>9} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>10} {:>7} {:>13} {:>7}",
            r.attack,
            r.offered,
            opt(median(r.runs.iter().filter_map(|s| s.achieved)), 0),
            opt(median(r.runs.iter().filter_map(|s| s.cpu_percent)), 1),
            opt(
                median(r.runs.iter().filter_map(|s| s.victim_wait_percent)),
                1
            ),
            opt(
                median(r.runs.iter().filter_map(|s| s.sender_wait_percent)),
                1
            ),
            opt(max_f(&mut r.runs.iter().filter_map(|s| s.peak_rss_mib)), 1),
            r.runs
                .iter()
                .filter_map(|s| s.kernel_drops)
                .max()
                .map_or("-".into(), |d| d.to_string()),
            r.runs.iter().map(|s| s.friends_added).max().unwrap_or(0),
            match exact {
                _ if r.all_byte_exact() => "yes".to_owned(),
                0 => "no".to_owned(),
                k => format!("{k}/{}", r.runs.len()),
            },
            opt(goodput, 1),
            range,
            opt(share, 1),
        );
    }
    println!();
    println!("top drop reasons at the victim (RUSTOX_TRACE_STATS, whole row, median run):");
    for r in rows {
        let top: Vec<String> = r
            .median_run()
            .map(|s| {
                s.drops
                    .iter()
                    .take(TOP_DROP_REASONS)
                    .map(|(name, n)| format!("{name} {n}"))
                    .collect()
            })
            .unwrap_or_default();
        println!(
            "{:<17} {:>8}  {}",
            r.attack,
            r.offered,
            if top.is_empty() {
                "-".to_owned()
            } else {
                top.join(", ")
            }
        );
    }
    // Each distinct note once per row, with the runs it came from.
    let mut notes: Vec<(&str, &str, &str, Vec<usize>)> = Vec::new();
    for r in rows {
        for (i, s) in r.runs.iter().enumerate() {
            for n in &s.notes {
                match notes
                    .iter_mut()
                    .find(|(a, o, t, _)| *a == r.attack && *o == r.offered && *t == n.as_str())
                {
                    Some((_, _, _, runs)) => runs.push(i + 1),
                    None => notes.push((&r.attack, &r.offered, n, vec![i + 1])),
                }
            }
        }
    }
    if !notes.is_empty() {
        println!();
        for (attack, rate, note, runs) in notes {
            let runs: Vec<String> = runs.iter().map(usize::to_string).collect();
            println!("{attack} @ {rate} (run {}): {note}", runs.join(","));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median([3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median([4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median([]), None);
    }
}
