//! `idle-bench`: what an idle node costs: wake-ups per second, CPU and resident
//! memory of a `rustox recv` process with 0, 1 and N friends online and nothing to say.
//!
//! ```text
//! cargo build --release -p rustox -p rustox-auto-tests --bin idle-bench
//! target/release/idle-bench --friends 1,100 --seconds 30
//! ```
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

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
        .map(|n| {
            n.trim()
                .parse()
                .map_err(|_| format!("{n:?} is not a count"))
        })
        .collect::<Result<_, _>>()?;
    let rustox = rustox_beside_current_exe()?;
    let runner = rustox_bootstrap(0).map_err(|e| format!("bootstrap node: {e}"))?;
    let boot = (runner.local_addr(), runner.public_key());
    let dir = std::env::temp_dir().join(format!("rustox-idle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut recv = Killed(match args.node.as_str() {
        "rustox" => Command::new(&rustox)
            .args(["recv", "--listen", "127.0.0.1:0", "--out"])
            .arg(dir.join("inbox"))
            .arg("--key-file")
            .arg(dir.join("recv.key"))
            .arg("--bootstrap")
            .arg(format!("{}:{}", boot.0, boot.1.to_hex()))
            .env("RUSTOX_TIMER", &args.timer)
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
    // The node's output is drained so that it never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while out.read_line(&mut sink).is_ok_and(|n| n > 0) {
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
    println!("| friends online | wake-ups/s | CPU % of a core | RSS MiB |");
    println!("|---:|---:|---:|---:|");
    std::thread::sleep(Duration::from_secs(3.max(args.settle)));
    let row = |n: usize| -> Result<(), String> {
        let (w, cpu, rss) = measure(pid, args.seconds).ok_or("cannot read /proc")?;
        println!("| {n} | {w:.1} | {cpu:.2} | {rss:.1} |");
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
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
