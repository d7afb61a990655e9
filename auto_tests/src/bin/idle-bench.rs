//! `idle-bench`: what an idle node costs: wake-ups per second, CPU and resident
//! memory of a `rustox recv` process with 0, 1 and N friends online and nothing to say.
//!
//! ```text
//! cargo build --release -p rustox -p rustox-auto-tests --bin idle-bench
//! target/release/idle-bench --friends 1,100 --seconds 30
//! target/release/idle-bench --offline 100 --fillers 20 --friends 100 --settle 100
//! ```
//!
//! `--offline N` starts the node from a c-toxcore-format profile (`rustox profile new`,
//! then N random friends nobody runs): the first row is the node searching for them, the
//! rows after add online friends beside them. `--fillers K` starts K quiet rustox nodes
//! first, which make the DHT and the onion a network of their own.
//!
//! For `rustox recv`, every row is also broken down by cause: the CLI counts what woke its
//! driver (`RUSTOX_WAKE_STATS`, printed on SIGUSR1; core's `driver::wake_tally`): which
//! timer was due or which kind of datagram arrived. Those are loop turns; a turn whose
//! cause was already waiting did not sleep, so they may exceed the context switches.
//!
//! The measured node is a real `rustox recv` (the CLI, its tokio driver on the main
//! thread) or core's echo bot (`--node echo-bot`: the Rust API alone, its node on a thread
//! of its own), found by Tox ID through an in-process bootstrap node; its friends are rustox
//! nodes in this process that send it a friend request and then stay quiet. Wake-ups are the
//! voluntary context switches of all its threads (`/proc/PID/task/*/status`): each is a
//! thread going to sleep and being woken. CPU is utime + stime of the whole process, RSS its
//! VmRSS.
//! For comparison, c-toxcore 0.2.18 measured on this machine on 2026-12-01: ~20 wake-ups/s
//! with one friend (it iterates every 50 ms), 0.4 % of a core, 4.0 MiB resident.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use rand::rngs::OsRng;
use rustox_core::savedata::{FriendStatus, Profile, SavedFriend};
use rustox_net_crypto::crypto::KeyPair;

use clap::Parser;
use rustox_auto_tests::emulator::rustox_beside_current_exe;
use rustox_auto_tests::live::{rustox_bootstrap, RustoxOptions, RustoxPeer};
use rustox_core::friend::ToxId;

#[derive(Parser, Debug)]
#[command(about = "Idle cost of a rustox node with friends online")]
struct Args {
    /// Friend counts to measure, comma-separated (0 is always measured first).
    #[arg(long, default_value = "1,100")]
    friends: String,
    /// Seconds of each measurement.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// Seconds to wait after the friends are online before measuring: the onion announces
    /// every 15 s for its first 90 s and every 120 s after (`TIME_TO_STABLE`), so a node
    /// left idle for long is measured after about 100 s.
    #[arg(long, default_value_t = 5)]
    settle: u64,
    /// The node measured: `rustox` (`rustox recv`, the CLI) or `echo-bot` (core's
    /// `examples/echo_bot`, a program on the Rust API alone: `cargo build --release -p
    /// rustox-core --example echo_bot` first).
    #[arg(long, default_value = "rustox")]
    node: String,
    /// The echo bot's executable, when not `examples/echo_bot` beside this one (for example
    /// `target/small/examples/echo_bot`, built with `--profile small`).
    #[arg(long)]
    echo_bot: Option<std::path::PathBuf>,
    /// The timer the node's driver sleeps on: `precise` (the timerfd, what the CLI runs by
    /// default) or `tokio` (its millisecond wheel, `RUSTOX_TIMER=tokio`).
    #[arg(long, default_value = "precise")]
    timer: String,
    /// Offline friends: the node starts from a profile holding this many random friends
    /// that nobody runs (`rustox recv` only).
    #[arg(long, default_value_t = 0)]
    offline: usize,
    /// The `rustox` executable measured, when not the one beside this program.
    #[arg(long)]
    rustox: Option<std::path::PathBuf>,
    /// Quiet rustox nodes started before the node, as the rest of the network.
    #[arg(long, default_value_t = 0)]
    fillers: usize,
}

/// Loop turns by cause, from a `wake-ups total=N cause=N ...` line.
type Causes = BTreeMap<String, u64>;

fn parse_causes(line: &str) -> Causes {
    line.split_whitespace()
        .skip(1)
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

/// Asks the node for its counts (SIGUSR1) and waits for the line.
fn causes(pid: u32, lines: &Receiver<String>) -> Option<Causes> {
    while lines.try_recv().is_ok() {}
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGUSR1,
    );
    lines
        .recv_timeout(Duration::from_secs(5))
        .ok()
        .map(|l| parse_causes(&l))
}

/// A c-toxcore-format profile made by `rustox profile new`, with `offline` random friends
/// added (confirmed, as friends accepted long ago).
fn offline_profile(rustox: &Path, file: &Path, offline: usize) -> Result<(), String> {
    let status = Command::new(rustox)
        .args(["profile", "new"])
        .arg(file)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("rustox profile new: {e}"))?;
    if !status.success() {
        return Err("rustox profile new failed".into());
    }
    let bytes = std::fs::read(file).map_err(|e| e.to_string())?;
    let mut profile = Profile::parse(&bytes).map_err(|e| e.to_string())?;
    for _ in 0..offline {
        let mut friend = SavedFriend::empty(KeyPair::generate(&mut OsRng).public);
        friend.status = FriendStatus::Confirmed;
        profile.friends.push(friend);
    }
    std::fs::write(file, profile.to_bytes()).map_err(|e| e.to_string())
}

/// A child killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The voluntary context switches of all the process's threads, its CPU seconds, its RSS
/// in KiB.
fn sample(pid: u32) -> Option<(u64, f64, u64)> {
    let field = |status: &str, name: &str| -> Option<u64> {
        status
            .lines()
            .find(|l| l.starts_with(name))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    let mut switches = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let status = std::fs::read_to_string(task.ok()?.path().join("status")).ok()?;
        switches += field(&status, "voluntary_ctxt_switches:")?;
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss = field(&status, "VmRSS:")?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some((switches, ticks / 100.0, rss))
}

/// Wake-ups per second, % of a core, RSS MiB over `seconds`.
fn measure(pid: u32, seconds: u64) -> Option<(f64, f64, f64)> {
    let (s0, c0, _) = sample(pid)?;
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(seconds));
    let (s1, c1, rss) = sample(pid)?;
    let dt = t0.elapsed().as_secs_f64();
    Some((
        (s1 - s0) as f64 / dt,
        (c1 - c0) / dt * 100.0,
        rss as f64 / 1024.0,
    ))
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    let counts: Vec<usize> = args
        .friends
        .split(',')
        .filter(|n| !n.trim().is_empty())
        .map(|n| {
            n.trim()
                .parse()
                .map_err(|_| format!("{n:?} is not a count"))
        })
        .collect::<Result<_, _>>()?;
    let rustox = match &args.rustox {
        Some(path) => path.clone(),
        None => rustox_beside_current_exe()?,
    };
    let runner = rustox_bootstrap(0).map_err(|e| format!("bootstrap node: {e}"))?;
    let boot = (runner.local_addr(), runner.public_key());
    let dir = std::env::temp_dir().join(format!("rustox-idle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    // The rest of the network, on loopback addresses of their own (127.0.3.x up).
    let mut fillers: Vec<RustoxPeer> = Vec::new();
    for i in 0..args.fillers {
        let ip = std::net::Ipv4Addr::new(127, 0, 3 + (i / 250) as u8, 1 + (i % 250) as u8);
        fillers.push(
            RustoxPeer::start(RustoxOptions {
                bind_ip: Some(ip.into()),
                bootstrap: vec![boot],
                ..RustoxOptions::default()
            })
            .map_err(|e| e.to_string())?,
        );
    }
    if args.offline > 0 && args.node != "rustox" {
        return Err("--offline needs --node rustox".into());
    }
    let identity: Vec<std::ffi::OsString> = if args.offline > 0 {
        let file = dir.join("profile.tox");
        offline_profile(&rustox, &file, args.offline)?;
        vec!["--profile".into(), file.into()]
    } else {
        vec!["--key-file".into(), dir.join("recv.key").into()]
    };
    let mut recv = Killed(match args.node.as_str() {
        "rustox" => Command::new(&rustox)
            .args(["recv", "--listen", "127.0.0.1:0", "--out"])
            .arg(dir.join("inbox"))
            .args(&identity)
            .arg("--bootstrap")
            .arg(format!("{}:{}", boot.0, boot.1.to_hex()))
            .env("RUSTOX_TIMER", &args.timer)
            .env("RUSTOX_WAKE_STATS", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", rustox.display()))?,
        "echo-bot" => {
            let bot = match &args.echo_bot {
                Some(path) => path.clone(),
                None => rustox
                    .parent()
                    .ok_or("no target directory")?
                    .join("examples/echo_bot"),
            };
            Command::new(&bot)
                .arg(format!("{}:{}", boot.0, boot.1.to_hex()))
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot start {}: {e}", bot.display()))?
        }
        other => return Err(format!("--node {other:?}: rustox or echo-bot")),
    });
    let pid = recv.0.id();
    let mut out = BufReader::new(recv.0.stdout.take().ok_or("no stdout")?);
    let mut line = String::new();
    let id: ToxId = loop {
        line.clear();
        if out.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("the node exited".into());
        }
        let id = line
            .strip_prefix("tox id ")
            .or_else(|| line.strip_prefix("echo bot "))
            .and_then(|rest| rest.split_whitespace().next());
        if let Some(id) = id {
            break id.parse().map_err(|e| format!("{e}"))?;
        }
    };
    // The node's output is drained so that it never blocks on a full pipe; its counts by
    // cause come back through the channel.
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        let mut sink = String::new();
        while out.read_line(&mut sink).is_ok_and(|n| n > 0) {
            if sink.starts_with("wake-ups ") {
                let _ = tx.send(sink.trim_end().to_string());
            }
            sink.clear();
        }
    });
    println!(
        "idle cost of {} (pid {pid}, {} timer), {} s per row, {} s after the friends are online",
        if args.node == "rustox" {
            "`rustox recv`"
        } else {
            "the echo bot"
        },
        args.timer,
        args.seconds,
        args.settle
    );
    println!(
        "{} offline friends, {} other nodes",
        args.offline, args.fillers
    );
    println!("| friends online | wake-ups/s | CPU % of a core | RSS MiB | driver turns/s |");
    println!("|---:|---:|---:|---:|---:|");
    std::thread::sleep(Duration::from_secs(3.max(args.settle)));
    let mut by_row: Vec<(usize, Causes)> = Vec::new();
    let mut row = |n: usize| -> Result<(), String> {
        let before = causes(pid, &lines);
        let (w, cpu, rss) = measure(pid, args.seconds).ok_or("cannot read /proc")?;
        let after = causes(pid, &lines);
        let per_sec = match (before, after) {
            (Some(b), Some(a)) => {
                let d: Causes = a
                    .iter()
                    .map(|(k, v)| (k.clone(), v - b.get(k).copied().unwrap_or(0)))
                    .filter(|(_, v)| *v > 0)
                    .collect();
                by_row.push((n, d.clone()));
                format!(
                    "{:.1}",
                    d.get("total").copied().unwrap_or(0) as f64 / args.seconds as f64
                )
            }
            _ => "-".into(),
        };
        println!("| {n} | {w:.1} | {cpu:.2} | {rss:.1} | {per_sec} |");
        Ok(())
    };
    row(0)?;
    let mut friends: Vec<RustoxPeer> = Vec::new();
    for n in counts {
        while friends.len() < n {
            // Each friend on its own loopback address: the bootstrap node and the hub limit
            // traffic per source address, as they would on a real network.
            let i = friends.len();
            let ip = std::net::Ipv4Addr::new(127, 0, 1 + (i / 250) as u8, 1 + (i % 250) as u8);
            friends.push(
                RustoxPeer::start(RustoxOptions {
                    bind_ip: Some(ip.into()),
                    bootstrap: vec![boot],
                    request: Some(id),
                    ..RustoxOptions::default()
                })
                .map_err(|e| e.to_string())?,
            );
        }
        let end = Instant::now() + Duration::from_secs(120);
        while Instant::now() < end && friends.iter().any(|f| f.log.friend_online().is_none()) {
            std::thread::sleep(Duration::from_millis(100));
        }
        let online = friends
            .iter()
            .filter(|f| f.log.friend_online().is_some())
            .count();
        if online < n {
            return Err(format!("only {online} of {n} friends came online"));
        }
        // Past the first ALIVE rounds and the onion's first announces.
        std::thread::sleep(Duration::from_secs(args.settle));
        row(n)?;
    }
    print_causes(&by_row, args.seconds);
    drop(fillers);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The driver's turns per second by cause, one column per row measured (the signal's own
/// turn, `app`, left out).
fn print_causes(rows: &[(usize, Causes)], seconds: u64) {
    if rows.is_empty() {
        return;
    }
    let mut names: Vec<&String> = rows
        .iter()
        .flat_map(|(_, c)| c.keys())
        .filter(|k| *k != "total" && *k != "app")
        .collect();
    names.sort();
    names.dedup();
    println!();
    println!(
        "driver turns per second by cause (timer: the timers due; recv: the first datagram's kind)"
    );
    let head: Vec<String> = rows.iter().map(|(n, _)| format!("{n} online")).collect();
    println!("| cause | {} |", head.join(" | "));
    println!("|---|{}", "---:|".repeat(rows.len()));
    for name in names {
        let cells: Vec<String> = rows
            .iter()
            .map(|(_, c)| {
                format!(
                    "{:.2}",
                    c.get(name).copied().unwrap_or(0) as f64 / seconds as f64
                )
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
}
