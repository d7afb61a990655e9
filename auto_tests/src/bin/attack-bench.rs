//! attack-bench: what floods and abuse cost a running `rustox recv`, and whether an honest
//! file transfer through it survives them (DESIGN.md principle 5, "a flood of bad packets
//! costs the node little and changes nothing").
//!
//! Each row starts a fresh victim (`rustox recv`, the binary beside this one) on loopback,
//! starts one attack from this process, lets it run alone for `--seconds` (pinning: at
//! least until every pinned window is full; friend spam: at least 5 s), then runs
//! `rustox send --to ADDR --key KEY FILE` while the attack goes on, and stops everything.
//! The first row, "none", is the unattacked baseline the others are a share of.
//!
//! Columns: the attack; the rate it offered and the rate the kernel took from it
//! (packets/s); the victim's CPU (utime + stime from /proc/PID/stat over the transfer,
//! divided by the transfer's wall time: 100 % is one core); its peak resident set (VmHWM,
//! MiB); datagrams the kernel dropped at its socket because it did not read them in time
//! (/proc/net/udp); friends it added (strangers' sessions and friend requests, from its
//! stderr; the honest sender is one); whether the honest file arrived byte-exact (the
//! SHA-256 `rustox send` printed equals the one `rustox recv` printed, and all bytes
//! arrived); the honest goodput as `rustox send` measured it; and its share of the
//! baseline's. The project's goal: every row byte-exact, bounded, at ≥ 80 %. Below the
//! table, each row's largest drop counters at the victim (`layer.reason`, from the JSON
//! line `rustox recv` prints each second with `RUSTOX_TRACE_STATS` set): where the attack
//! was stopped.
//!
//! The attacker runs in this process and shares the machine's cores with the victim and
//! the honest sender, so on a small machine part of a row's slowdown is the attacker's own
//! CPU; the achieved rate column says how hard it actually pushed.
//!
//! usage: cargo build --release -p rustox -p rustox-auto-tests --bin attack-bench
//!        target/release/attack-bench [--size 64MiB] [--rate 50000,100000] [--seconds 1]
//!        [--attacks malformed,spoofed,cookie-flood,handshake-replay,pinning,friend-spam,
//!        announce-flood]

use std::net::{Ipv4Addr, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_auto_tests::attack::flood::{Flood, FloodReport, Outlet, Pool};
use rustox_auto_tests::attack::forge;
use rustox_auto_tests::attack::session::{handshake_pool, PinnedSession, Pinning, WINDOW};
use rustox_auto_tests::attack::victim::{self, Victim};
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

/// Loopback addresses the spoofed-source flood binds: 127.0.0.2 … 127.0.0.254, all routed
/// to `lo` on Linux (127.0.0.0/8), one socket each on a port the OS picks.
const SPOOF_FIRST: u8 = 2;
const SPOOF_LAST: u8 = 254;

/// A friend-request spammer needs the onion to find the victim (paths, announcements,
/// searches): several seconds on a fresh network, so its lead time is at least this.
const SPAM_LEAD: Duration = Duration::from_secs(5);

/// Drop reasons shown per row, largest first.
const TOP_DROP_REASONS: usize = 4;

/// How long the victim may take to print its summary after the sender exits.
const RECEIVER_SUMMARY_WAIT: Duration = Duration::from_secs(10);

#[derive(Parser, Debug)]
#[command(about = "Attacks on a running rustox recv, against an honest transfer through it")]
struct Args {
    /// The honest file's size (e.g. 16MiB, 64MiB, 1G; binary units, plain numbers are bytes).
    #[arg(long, default_value = "64MiB", value_parser = parse_size)]
    size: u64,
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

/// One line of the table.
struct Row {
    attack: String,
    offered: String,
    achieved: Option<f64>,
    cpu_percent: Option<f64>,
    peak_rss_mib: Option<f64>,
    kernel_drops: Option<u64>,
    friends_added: usize,
    byte_exact: bool,
    goodput_mbit: Option<f64>,
    /// The victim's largest drop counters at the end of the row (`layer.reason`, count).
    drops: Vec<(String, u64)>,
    notes: Vec<String>,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("attack-bench: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), String> {
    let rustox = match &args.rustox {
        Some(p) => p.clone(),
        None => rustox_beside_current_exe()?,
    };
    let dir = std::env::temp_dir().join(format!("attack-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let file = dir.join("honest.bin");
    victim::write_file(&file, args.size, 0x5eed).map_err(|e| format!("{e}"))?;
    println!(
        "attack-bench: honest file {} MiB, attacks lead by {:.1} s, rates {:?} packets/s",
        args.size as f64 / f64::from(1 << 20),
        args.seconds,
        args.rate
    );
    let mut plan: Vec<(Option<AttackKind>, u64)> = vec![(None, 0)];
    for &kind in &args.attacks {
        if kind.is_flood() {
            plan.extend(args.rate.iter().map(|&r| (Some(kind), r)));
        } else {
            plan.push((Some(kind), 0));
        }
    }
    let mut rows = Vec::new();
    for (i, &(kind, rate)) in plan.iter().enumerate() {
        let row_dir = dir.join(format!("row{i}"));
        std::fs::create_dir_all(&row_dir).map_err(|e| format!("{}: {e}", row_dir.display()))?;
        let row = run_row(args, &rustox, &file, &row_dir, kind, rate);
        eprintln!(
            "attack-bench: {} done: {}",
            row.attack,
            if row.byte_exact {
                "byte-exact"
            } else {
                "NOT delivered"
            }
        );
        rows.push(row);
        let _ = std::fs::remove_dir_all(&row_dir);
    }
    print_table(&rows);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn run_row(
    args: &Args,
    rustox: &Path,
    file: &Path,
    dir: &Path,
    kind: Option<AttackKind>,
    rate: u64,
) -> Row {
    let mut row = Row {
        attack: kind.map_or("none", AttackKind::name).to_owned(),
        offered: match kind {
            None => "-".into(),
            Some(AttackKind::FriendSpam) => format!("{} ids", args.spammers),
            Some(_) => rate.to_string(),
        },
        achieved: None,
        cpu_percent: None,
        peak_rss_mib: None,
        kernel_drops: None,
        friends_added: 0,
        byte_exact: false,
        goodput_mbit: None,
        drops: Vec::new(),
        notes: Vec::new(),
    };
    let mut victim = match Victim::start(rustox, dir) {
        Ok(v) => v,
        Err(e) => {
            row.notes.push(e);
            return row;
        }
    };
    let running = match kind {
        None => Ok(Running::Nothing),
        Some(k) => start_attack(args, k, rate, &victim, &mut row.notes),
    };
    let running = match running {
        Ok(r) => r,
        Err(e) => {
            row.notes.push(format!("attack not started: {e}"));
            return row;
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
    let started = Instant::now();
    let honest = victim::send_file(
        rustox,
        &victim,
        file,
        &dir.join("send.stderr"),
        Duration::from_secs(args.limit),
    );
    let window = started.elapsed();
    let cpu_after = victim.cpu_seconds();
    let received = victim.received(if honest.summary.is_ok() {
        RECEIVER_SUMMARY_WAIT
    } else {
        Duration::ZERO
    });
    row.cpu_percent = match (cpu_before, cpu_after) {
        (Some(a), Some(b)) if window > Duration::ZERO => {
            Some((b - a) / window.as_secs_f64() * 100.0)
        }
        _ => None,
    };
    row.peak_rss_mib = victim
        .peak_rss_bytes()
        .map(|b| b as f64 / f64::from(1 << 20));
    row.kernel_drops = victim.socket_drops();
    row.drops = victim.drop_reasons();
    let report = running.stop();
    row.friends_added = victim.friends_added();
    if !victim.running() {
        row.notes.push(format!(
            "the victim exited: {}",
            victim.stderr_tail(2).replace('\n', " | ")
        ));
    }
    if let Some(f) = report.flood {
        row.achieved = Some(f.achieved_rate());
        if f.errors > 0 || f.missed > 0 {
            row.notes.push(format!(
                "flood: {} refused by the kernel, {} not sent in time",
                f.errors, f.missed
            ));
        }
    }
    if let Some(n) = report.spammers_online {
        row.notes.push(format!(
            "{n} of {} spammers saw the victim online as their friend",
            args.spammers
        ));
    }
    match (&honest.summary, &received) {
        (Ok(sent), Some(got)) => {
            row.byte_exact = sent.sha256 == got.sha256 && got.bytes == args.size;
            row.goodput_mbit = Some(sent.goodput_mbit);
            if !row.byte_exact {
                row.notes.push(format!(
                    "sent {} bytes sha256 {}, received {} bytes sha256 {}",
                    sent.bytes, sent.sha256, got.bytes, got.sha256
                ));
            }
        }
        (Ok(sent), None) => {
            row.goodput_mbit = Some(sent.goodput_mbit);
            row.notes
                .push("the sender finished but the victim printed no summary".into());
        }
        (Err(e), _) => row.notes.push(format!(
            "honest send failed after {:.1} s: {e}",
            honest.wall.as_secs_f64()
        )),
    }
    row
}

/// Prepares and starts one attack on `victim`.
fn start_attack(
    args: &Args,
    kind: AttackKind,
    rate: u64,
    victim: &Victim,
    notes: &mut Vec<String>,
) -> Result<Running, String> {
    let mut rng = StdRng::from_entropy();
    let key = PublicKey::from_hex(&victim.key_hex).ok_or("the victim printed a bad key")?;
    let to = victim.addr;
    let one_socket = || Outlet::udp(Ipv4Addr::LOCALHOST).map_err(|e| e.to_string());
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
                .map(|last| Outlet::udp(Ipv4Addr::new(127, 0, 0, last)))
                .collect::<std::io::Result<Vec<_>>>()
                .map_err(|e| format!("binding 127.0.0.x: {e}"))?;
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
            let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| e.to_string())?;
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
                    let ip = Ipv4Addr::new(127, 0, 1, 1 + (i % 250) as u8);
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

fn print_table(rows: &[Row]) {
    let baseline = rows
        .iter()
        .find(|r| r.attack == "none")
        .and_then(|r| r.goodput_mbit);
    let opt = |v: Option<f64>, prec: usize| v.map_or("-".into(), |x| format!("{x:.prec$}"));
    println!();
    println!(
        "{:<17} {:>8} {:>9} {:>8} {:>9} {:>9} {:>7} {:>10} {:>9} {:>7}",
        "attack",
        "rate/s",
        "achieved",
        "cpu %",
        "rss MiB",
        "k-drops",
        "friends",
        "byte-exact",
        "Mbit/s",
        "share %"
    );
    for r in rows {
        let share = match (r.goodput_mbit, baseline) {
            (Some(g), Some(b)) if b > 0.0 && r.byte_exact => Some(g / b * 100.0),
            _ => None,
        };
        println!(
            "{:<17} {:>8} {:>9} {:>8} {:>9} {:>9} {:>7} {:>10} {:>9} {:>7}",
            r.attack,
            r.offered,
            opt(r.achieved, 0),
            opt(r.cpu_percent, 1),
            opt(r.peak_rss_mib, 1),
            r.kernel_drops.map_or("-".into(), |d| d.to_string()),
            r.friends_added,
            if r.byte_exact { "yes" } else { "no" },
            opt(r.goodput_mbit, 1),
            opt(share, 1),
        );
    }
    println!();
    println!("top drop reasons at the victim (RUSTOX_TRACE_STATS, whole row):");
    for r in rows {
        let top: Vec<String> = r
            .drops
            .iter()
            .take(TOP_DROP_REASONS)
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
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
    let notes: Vec<_> = rows
        .iter()
        .flat_map(|r| r.notes.iter().map(move |n| (&r.attack, &r.offered, n)))
        .collect();
    if !notes.is_empty() {
        println!();
        for (attack, rate, note) in notes {
            println!("{attack} @ {rate}: {note}");
        }
    }
}
