//! `ffi-bench`: the same C client on rustox's libtoxcore.so.2 and on c-toxcore 0.2.18's,
//! two processes over loopback: the time until both see each other online, one file (MiB/s,
//! CPU seconds per GiB of the sender and of the receiver), then the idle cost of a client
//! that calls `tox_iterate` at `tox_iteration_interval` with its friend online (wake-ups
//! per second, % of a core, resident memory).
//!
//! ```text
//! cargo build --release -p rustox-ffi -p rustox-auto-tests --bin ffi-bench
//! target/release/ffi-bench --size 1024 --idle-seconds 30 --runs 1
//! ```
//!
//! The client is `ffi/bench/client.c` (embedded in this binary when it is built), compiled
//! against Debian's `tox.h` into a temporary directory; which libtoxcore.so.2 it loads is
//! chosen by `LD_LIBRARY_PATH` alone (a directory holding a copy of target/release's
//! `libtoxcore.so` as `libtoxcore.so.2` for rustox; unset for c-toxcore), and the client prints
//! the path the loader used, which is checked. Its main loop is a real client's:
//! `tox_iterate`, then sleep `tox_iteration_interval()` ms.
//!
//! Each pair: the receiver starts (`--accept --recv-file`), prints its Tox ID, DHT key and
//! port; the sender starts at once, bootstraps from the receiver (the only DHT node there
//! is), sends a friend request, and once the friend is online offers a file whose bytes are
//! computed from their position; the receiver checks every chunk. Both then settle and
//! idle. Times are CLOCK_MONOTONIC stamps printed by the clients; CPU is each client's own
//! getrusage (user + system), wake-ups its voluntary context switches (`ru_nvcsw`), RSS its
//! VmRSS at the end of the idle window. Nothing is asserted: the figures are printed.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use clap::Parser;
use rustox_simulator::utc_minute;

/// The client's source, as this binary was built with it.
const CLIENT_C: &str = include_str!("../../../ffi/bench/client.c");

/// The workspace this binary was built from (to build the library when it is missing).
const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// c-toxcore's default port range: never handed to a client, so that a stray c-toxcore
/// instance elsewhere on the machine cannot be mistaken for the peer.
const TOX_PORT_RANGE: std::ops::RangeInclusive<u16> = 33445..=33545;

#[derive(Parser, Debug)]
#[command(
    about = "The same C client on rustox's libtoxcore.so.2 and on c-toxcore 0.2.18: friend online, a file, idle"
)]
struct Args {
    /// File size in MiB (0: no file, only friend online and idle).
    #[arg(long, default_value_t = 1024)]
    size: u64,
    /// Seconds of the idle measurement (0: none).
    #[arg(long, default_value_t = 30)]
    idle_seconds: u64,
    /// Seconds between the end of the file (or friend online) and the idle measurement.
    #[arg(long, default_value_t = 5)]
    settle: u64,
    /// Runs of each pair; the table shows medians.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Leave out the mixed pairs (rustox sender → c-toxcore receiver and the reverse).
    #[arg(long)]
    no_mixed: bool,
    /// Only these pairs, comma-separated, e.g. `rustox,c-toxcore,rustox>c-toxcore`
    /// (`SENDER>RECEIVER`; a single name is both sides).
    #[arg(long)]
    pairs: Option<String>,
    /// rustox's library (default: `libtoxcore.so` beside this executable, built with
    /// `cargo build --release -p rustox-ffi` when missing).
    #[arg(long)]
    rustox_lib: Option<PathBuf>,
    /// c-toxcore's library.
    #[arg(long, default_value = "/usr/lib/x86_64-linux-gnu/libtoxcore.so.2")]
    ctoxcore_lib: PathBuf,
    /// Give up on a pair's run after this many seconds.
    #[arg(long, default_value_t = 3600)]
    timeout: u64,
    /// Keep the temporary directory (the client, its logs).
    #[arg(long)]
    keep: bool,
}

/// Which libtoxcore a client loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lib {
    Rustox,
    CToxcore,
}

impl Lib {
    fn name(self) -> &'static str {
        match self {
            Lib::Rustox => "rustox",
            Lib::CToxcore => "c-toxcore",
        }
    }

    fn parse(s: &str) -> Result<Lib, String> {
        match s.trim() {
            "rustox" => Ok(Lib::Rustox),
            "c-toxcore" | "ctoxcore" => Ok(Lib::CToxcore),
            other => Err(format!("{other:?}: rustox or c-toxcore")),
        }
    }
}

/// A sender and a receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pair {
    sender: Lib,
    receiver: Lib,
}

impl Pair {
    fn label(self) -> String {
        if self.sender == self.receiver {
            self.sender.name().to_string()
        } else {
            format!("{} → {}", self.sender.name(), self.receiver.name())
        }
    }
}

/// Where the clients find each library.
struct Libraries {
    /// A directory with a copy of rustox's library as `libtoxcore.so.2`, for
    /// `LD_LIBRARY_PATH`.
    rustox_dir: PathBuf,
    /// That copy, resolved.
    rustox: PathBuf,
    /// c-toxcore's library, resolved.
    ctoxcore: PathBuf,
}

impl Libraries {
    fn configure(&self, lib: Lib, cmd: &mut Command) {
        match lib {
            Lib::Rustox => {
                cmd.env("LD_LIBRARY_PATH", &self.rustox_dir);
            }
            Lib::CToxcore => {
                cmd.env_remove("LD_LIBRARY_PATH");
            }
        }
    }

    fn expected(&self, lib: Lib) -> &Path {
        match lib {
            Lib::Rustox => &self.rustox,
            Lib::CToxcore => &self.ctoxcore,
        }
    }
}

/// A child killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// How often a long transfer's progress is shown (on stderr).
const PROGRESS_EVERY: Duration = Duration::from_secs(60);

/// How a child ended, if it did (within a moment), for an error message.
fn exit_status(child: &mut Killed) -> String {
    for _ in 0..20 {
        if let Ok(Some(status)) = child.0.try_wait() {
            return format!("ended: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    "still running".into()
}

/// `key=value` in a client's line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .skip(1)
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

fn num(line: &str, key: &str) -> Result<f64, String> {
    field(line, key)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no number {key}= in {line:?}"))
}

/// What one client printed.
#[derive(Default, Debug)]
struct Log {
    lines: Vec<String>,
    ended: bool,
}

impl Log {
    fn find(&self, name: &str) -> Option<&str> {
        self.lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(String::as_str)
    }

    fn word(&self, name: &str) -> Option<&str> {
        self.find(name)?.split_whitespace().nth(1)
    }
}

/// One client's idle window.
#[derive(Debug, Clone, Copy)]
struct Idle {
    wakeups_per_s: f64,
    cpu_percent: f64,
    rss_mib: f64,
}

fn idle_of(log: &Log) -> Result<Idle, String> {
    let line = log.find("IDLE").ok_or("no IDLE line")?;
    let secs = num(line, "secs")?.max(1e-9);
    Ok(Idle {
        wakeups_per_s: num(line, "vcsw")? / secs,
        cpu_percent: num(line, "cpu")? / secs * 100.0,
        rss_mib: num(line, "rss_kib")? / 1024.0,
    })
}

/// One client's loop during the file.
#[derive(Debug, Clone, Copy, Default)]
struct LoopStats {
    iterations_per_s: f64,
    events_per_iteration: f64,
    /// Shares of intervals 0 / 1 / 2–4 / 5–49 / 50+ ms.
    hist: [f64; 5],
}

fn loop_stats(log: &Log, secs: f64) -> Result<LoopStats, String> {
    let line = log.find("FILE_STATS").ok_or("no FILE_STATS line")?;
    let iterations = num(line, "iterations")?;
    let hist: Vec<f64> = field(line, "interval_hist")
        .ok_or("no interval_hist")?
        .split(',')
        .map(|v| v.parse::<f64>().map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let total: f64 = hist.iter().sum::<f64>().max(1.0);
    let mut shares = [0.0; 5];
    for (s, h) in shares.iter_mut().zip(&hist) {
        *s = h / total;
    }
    Ok(LoopStats {
        iterations_per_s: iterations / secs.max(1e-9),
        events_per_iteration: num(line, "events")? / iterations.max(1.0),
        hist: shares,
    })
}

/// The figures of one run of a pair.
#[derive(Debug, Clone)]
struct Run {
    online_s: f64,
    file: Option<FileRun>,
    /// Receiver, sender.
    idle: Option<(Idle, Idle)>,
}

#[derive(Debug, Clone)]
struct FileRun {
    /// File bytes / (sender's offer → receiver's last byte).
    mib_s: f64,
    /// Sender's offer → the receiver's client sees it and accepts.
    offer_to_accept_s: f64,
    /// File bytes / (receiver's accept → its last byte).
    accept_mib_s: f64,
    sender_cpu_per_gib: f64,
    receiver_cpu_per_gib: f64,
    sender_loop: LoopStats,
    receiver_loop: LoopStats,
    verified: bool,
}

struct Bench {
    args: Args,
    dir: PathBuf,
    client: PathBuf,
    libs: Libraries,
}

/// A free UDP port (IPv4 and IPv6) outside c-toxcore's default range and `avoid`.
fn free_port(avoid: &[u16]) -> Result<u16, String> {
    for _ in 0..1000 {
        let socket = UdpSocket::bind("[::]:0")
            .or_else(|_| UdpSocket::bind("0.0.0.0:0"))
            .map_err(|e| format!("cannot find a free UDP port: {e}"))?;
        let port = socket.local_addr().map_err(|e| e.to_string())?.port();
        if !TOX_PORT_RANGE.contains(&port) && !avoid.contains(&port) {
            return Ok(port);
        }
    }
    Err("cannot find a free UDP port".into())
}

enum Output {
    Line(usize, String),
    Closed(usize),
}

impl Bench {
    fn spawn(
        &self,
        lib: Lib,
        side: usize,
        name: &str,
        args: &[String],
        tx: &mpsc::Sender<Output>,
    ) -> Result<Killed, String> {
        let stderr = File::create(self.dir.join(format!("{name}.stderr")))
            .map_err(|e| format!("cannot create a log file: {e}"))?;
        let mut cmd = Command::new(&self.client);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        self.libs.configure(lib, &mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.client.display()))?;
        let out = child.stdout.take().ok_or("no stdout")?;
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(Output::Line(side, line)).is_err() {
                    return;
                }
            }
            let _ = tx.send(Output::Closed(side));
        });
        Ok(Killed(child))
    }

    fn stderr_tail(&self, name: &str) -> String {
        let text =
            std::fs::read_to_string(self.dir.join(format!("{name}.stderr"))).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(5)..].join(" | ")
    }

    /// One run of a pair.
    fn run(&self, pair: Pair, index: usize) -> Result<Run, String> {
        let a = &self.args;
        let recv_port = free_port(&[])?;
        let send_port = free_port(&[recv_port])?;
        let (tx, rx) = mpsc::channel();
        let mut common: Vec<String> = vec![
            "--settle".into(),
            a.settle.to_string(),
            "--linger".into(),
            "60".into(),
            "--timeout".into(),
            a.timeout.to_string(),
        ];
        if a.idle_seconds > 0 {
            common.extend(["--idle".into(), a.idle_seconds.to_string()]);
        }
        let names = [format!("recv-{index}"), format!("send-{index}")];
        let mut recv_args: Vec<String> =
            vec!["--port".into(), recv_port.to_string(), "--accept".into()];
        if a.size > 0 {
            recv_args.push("--recv-file".into());
        }
        recv_args.extend(common.iter().cloned());
        let mut receiver = self.spawn(pair.receiver, 0, &names[0], &recv_args, &tx)?;
        let mut sender: Option<Killed> = None;
        let last_progress = std::cell::Cell::new(Instant::now());
        let mut logs = [Log::default(), Log::default()];
        let deadline = Instant::now() + Duration::from_secs(a.timeout);
        let describe = |logs: &[Log; 2], what: &str| {
            format!(
                "{what}; receiver said {:?} (stderr: {}); sender said {:?} (stderr: {})",
                logs[0].lines.last(),
                self.stderr_tail(&names[0]),
                logs[1].lines.last(),
                self.stderr_tail(&names[1])
            )
        };
        let wait = |logs: &mut [Log; 2], done: &dyn Fn(&[Log; 2]) -> bool, limit: Instant| {
            while !done(logs) {
                let left = limit.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(describe(logs, "timed out"));
                }
                match rx.recv_timeout(left) {
                    Ok(Output::Line(side, line)) => {
                        if side == 0
                            && line.starts_with("PROGRESS")
                            && last_progress.get().elapsed() >= PROGRESS_EVERY
                        {
                            last_progress.set(Instant::now());
                            eprintln!(
                                "  {}: {:.0} MiB received",
                                pair.label(),
                                num(&line, "bytes").unwrap_or(0.0) / 1048576.0
                            );
                        }
                        if line.starts_with("TIMEOUT") {
                            logs[side].lines.push(line);
                            return Err(describe(logs, "a client timed out"));
                        }
                        logs[side].lines.push(line);
                    }
                    Ok(Output::Closed(side)) => {
                        logs[side].ended = true;
                        if !done(logs) {
                            return Err(describe(
                                logs,
                                &format!("the {} exited", ["receiver", "sender"][side]),
                            ));
                        }
                    }
                    Err(_) => return Err(describe(logs, "timed out")),
                }
            }
            Ok(())
        };
        wait(
            &mut logs,
            &|l| l[0].find("PORT").is_some(),
            Instant::now() + Duration::from_secs(30),
        )
        .map_err(|e| format!("{e}; receiver {}", exit_status(&mut receiver)))?;
        let (id, dht) = (
            logs[0].word("TOXID").ok_or("no TOXID")?.to_string(),
            logs[0].word("DHTKEY").ok_or("no DHTKEY")?.to_string(),
        );
        let mut send_args: Vec<String> = vec![
            "--port".into(),
            send_port.to_string(),
            "--bootstrap".into(),
            "127.0.0.1".into(),
            recv_port.to_string(),
            dht,
            "--add".into(),
            id,
        ];
        if a.size > 0 {
            send_args.extend(["--send-file".into(), a.size.to_string()]);
        }
        send_args.extend(common.iter().cloned());
        let sender = sender.insert(self.spawn(pair.sender, 1, &names[1], &send_args, &tx)?);
        let last = if a.idle_seconds > 0 {
            "IDLE"
        } else if a.size > 0 {
            // Printed right after FILE_DONE.
            "FILE_STATS"
        } else {
            "FRIEND_ONLINE"
        };
        wait(
            &mut logs,
            &|l| l.iter().all(|log| log.find(last).is_some()),
            deadline,
        )
        .map_err(|e| {
            format!(
                "{e}; receiver {}, sender {}",
                exit_status(&mut receiver),
                exit_status(sender)
            )
        })?;
        // Both children are killed when they drop: their remaining linger is of no use.
        for (side, lib) in [(0, pair.receiver), (1, pair.sender)] {
            let path = logs[side]
                .find("LIB")
                .and_then(|l| field(l, "path"))
                .ok_or("no LIB line")?;
            let loaded = std::fs::canonicalize(path).map_err(|e| format!("{path}: {e}"))?;
            if loaded != self.libs.expected(lib) {
                return Err(format!(
                    "the {} loaded {} instead of {}",
                    ["receiver", "sender"][side],
                    loaded.display(),
                    self.libs.expected(lib).display()
                ));
            }
        }
        let start = num(logs[0].find("START").ok_or("no START")?, "t")?;
        let online = |log: &Log| -> Result<f64, String> {
            num(log.find("FRIEND_ONLINE").ok_or("no FRIEND_ONLINE")?, "t")
        };
        let online_s = online(&logs[0])?.max(online(&logs[1])?) - start;
        let file = if a.size > 0 {
            let line = |log: &Log, name: &str| -> Result<String, String> {
                log.find(name)
                    .map(str::to_string)
                    .ok_or_else(|| format!("no {name}"))
            };
            let (s0, s1) = (line(&logs[1], "FILE_START")?, line(&logs[1], "FILE_DONE")?);
            let (r0, r1) = (line(&logs[0], "FILE_START")?, line(&logs[0], "FILE_DONE")?);
            let bytes = num(&r1, "bytes")?;
            let mib = bytes / 1048576.0;
            let gib = bytes / (1u64 << 30) as f64;
            let secs = num(&r1, "t")? - num(&s0, "t")?;
            let accept_secs = num(&r1, "t")? - num(&r0, "t")?;
            let verified = field(&r1, "ok") == Some("1")
                && field(&s1, "ok") == Some("1")
                && num(&r1, "mismatches")? == 0.0
                && bytes == (a.size << 20) as f64;
            Some(FileRun {
                mib_s: mib / secs.max(1e-9),
                offer_to_accept_s: num(&r0, "t")? - num(&s0, "t")?,
                accept_mib_s: mib / accept_secs.max(1e-9),
                sender_cpu_per_gib: (num(&s1, "cpu")? - num(&s0, "cpu")?) / gib,
                receiver_cpu_per_gib: (num(&r1, "cpu")? - num(&r0, "cpu")?) / gib,
                sender_loop: loop_stats(&logs[1], num(&s1, "t")? - num(&s0, "t")?)?,
                receiver_loop: loop_stats(&logs[0], accept_secs)?,
                verified,
            })
        } else {
            None
        };
        let idle = if a.idle_seconds > 0 {
            Some((idle_of(&logs[0])?, idle_of(&logs[1])?))
        } else {
            None
        };
        Ok(Run {
            online_s,
            file,
            idle,
        })
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The median of `f` over the runs, formatted, or `–`.
fn med(runs: &[Run], digits: usize, f: impl Fn(&Run) -> Option<f64>) -> String {
    median(runs.iter().filter_map(f).collect()).map_or("–".into(), |v| format!("{v:.digits$}"))
}

/// Receiver / sender medians.
fn both(runs: &[Run], digits: usize, f: impl Fn(&Idle) -> f64) -> String {
    let r = med(runs, digits, |run| run.idle.map(|(r, _)| f(&r)));
    let s = med(runs, digits, |run| run.idle.map(|(_, s)| f(&s)));
    format!("{r} / {s}")
}

/// rustox's library: the one asked for, or target/release's, built when missing.
fn rustox_library(args: &Args) -> Result<PathBuf, String> {
    if let Some(path) = &args.rustox_lib {
        return std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("no directory for this executable")?;
    let lib = dir.join("libtoxcore.so");
    if !lib.exists() {
        eprintln!(
            "{} is missing: cargo build --release -p rustox-ffi",
            lib.display()
        );
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--release", "-p", "rustox-ffi"])
            .current_dir(WORKSPACE)
            .status();
        if !status.is_ok_and(|s| s.success()) || !lib.exists() {
            return Err(format!(
                "{} is missing and could not be built: run `cargo build --release -p rustox-ffi` in the workspace",
                lib.display()
            ));
        }
    }
    std::fs::canonicalize(&lib).map_err(|e| format!("{}: {e}", lib.display()))
}

/// Newest modification time under `dir` (files only).
fn newest(dir: &Path) -> Option<SystemTime> {
    let mut best = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let t = if path.is_dir() {
            newest(&path)
        } else {
            entry.metadata().ok()?.modified().ok()
        };
        best = best.max(t);
    }
    best
}

fn compile(dir: &Path) -> Result<(PathBuf, String), String> {
    let source = dir.join("client.c");
    std::fs::write(&source, CLIENT_C).map_err(|e| format!("{}: {e}", source.display()))?;
    let header = dir.join(rustox_testkit::c::HEADER_NAME);
    std::fs::write(&header, rustox_testkit::c::HEADER)
        .map_err(|e| format!("{}: {e}", header.display()))?;
    let cflags = rustox_testkit::c::pkg_config("pkg-config", &["--cflags"], &["toxcore"])
        .map_err(|e| format!("{e} (apt-get install libtoxcore-dev)"))?;
    let client = dir.join("client");
    let mut args = vec!["-O2".to_string()];
    args.extend(cflags);
    args.extend([
        "client.c".into(),
        "-o".into(),
        "client".into(),
        "-ltoxcore".into(),
    ]);
    let out = Command::new("cc")
        .args(&args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run cc: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cc {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok((client, format!("cc {}", args.join(" "))))
}

fn pairs(args: &Args) -> Result<Vec<Pair>, String> {
    if let Some(list) = &args.pairs {
        return list
            .split(',')
            .map(|p| match p.split_once('>') {
                Some((s, r)) => Ok(Pair {
                    sender: Lib::parse(s)?,
                    receiver: Lib::parse(r)?,
                }),
                None => {
                    let lib = Lib::parse(p)?;
                    Ok(Pair {
                        sender: lib,
                        receiver: lib,
                    })
                }
            })
            .collect();
    }
    let mut v = vec![
        Pair {
            sender: Lib::Rustox,
            receiver: Lib::Rustox,
        },
        Pair {
            sender: Lib::CToxcore,
            receiver: Lib::CToxcore,
        },
    ];
    if !args.no_mixed {
        v.push(Pair {
            sender: Lib::Rustox,
            receiver: Lib::CToxcore,
        });
        v.push(Pair {
            sender: Lib::CToxcore,
            receiver: Lib::Rustox,
        });
    }
    Ok(v)
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("ffi-bench: {e}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<(), String> {
    let args = Args::parse();
    let command: Vec<String> = std::env::args().collect();
    let pairs = pairs(&args)?;
    let rustox = rustox_library(&args)?;
    let ctoxcore = std::fs::canonicalize(&args.ctoxcore_lib)
        .map_err(|e| format!("{}: {e}", args.ctoxcore_lib.display()))?;
    let dir = std::env::temp_dir().join(format!("rustox-ffi-bench-{}", std::process::id()));
    let rustox_dir = dir.join("rustox-lib");
    std::fs::create_dir_all(&rustox_dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // A copy, not a link: a rebuild during the run (cargo rewrites target/release's file)
    // would change the library under running clients and between pairs.
    let built = std::fs::metadata(&rustox).and_then(|m| m.modified()).ok();
    let copy = rustox_dir.join("libtoxcore.so.2");
    std::fs::copy(&rustox, &copy).map_err(|e| format!("cannot copy {}: {e}", rustox.display()))?;
    let (client, cc) = compile(&dir)?;
    let sources = newest(&Path::new(WORKSPACE).join("ffi/src"));
    let stale = match (built, sources, &args.rustox_lib) {
        (Some(b), Some(src), None) if src > b => " — OLDER than ffi/src, rebuild it",
        _ => "",
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "ffi-bench, {}: `{}`",
        utc_minute(SystemTime::now()),
        command.join(" ")
    );
    println!();
    println!(
        "The same C client (ffi/bench/client.c: tox_iterate, then sleep tox_iteration_interval() ms), \
         two processes on loopback, {} MiB file, {} s idle after {} s of settling, median of {} run(s); \
         {cores} cores, load average at start {}.",
        args.size,
        args.idle_seconds,
        args.settle,
        args.runs,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    println!(
        "rustox: {} (built {}{stale}; copied for the run); c-toxcore: {}; client: {cc}.",
        rustox.display(),
        built.map_or("?".into(), utc_minute),
        ctoxcore.display()
    );
    let bench = Bench {
        args,
        dir: dir.clone(),
        client,
        libs: Libraries {
            rustox_dir,
            rustox: std::fs::canonicalize(&copy).map_err(|e| format!("{}: {e}", copy.display()))?,
            ctoxcore,
        },
    };
    let mut results: Vec<(Pair, Vec<Run>, usize)> =
        pairs.iter().map(|&p| (p, Vec::new(), 0)).collect();
    for run in 0..bench.args.runs {
        for (i, (pair, runs, failed)) in results.iter_mut().enumerate() {
            let index = run * 100 + i;
            match bench.run(*pair, index) {
                Ok(r) => {
                    eprintln!(
                        "run {}/{} {}: online {:.2} s{}",
                        run + 1,
                        bench.args.runs,
                        pair.label(),
                        r.online_s,
                        r.file.as_ref().map_or(String::new(), |f| format!(
                            ", file {:.1} MiB/s, CPU s/GiB send {:.2} recv {:.2}, verified {}",
                            f.mib_s, f.sender_cpu_per_gib, f.receiver_cpu_per_gib, f.verified
                        ))
                    );
                    runs.push(r);
                }
                Err(e) => {
                    eprintln!(
                        "run {}/{} {}: FAILED: {e}",
                        run + 1,
                        bench.args.runs,
                        pair.label()
                    );
                    *failed += 1;
                }
            }
        }
    }
    println!();
    println!(
        "Idle columns: receiver / sender. File MiB/s: the sender's offer to the receiver's last byte. \
         CPU: each client's user + system time from its offer (sender) or the offer's arrival \
         (receiver) to its end of the file, per GiB; it includes computing (sender) or checking \
         (receiver) the file's bytes, ~0.1 s/GiB each (PATTERN in the clients' output)."
    );
    println!();
    println!("| library | friend online s | file MiB/s | sender CPU s/GiB | receiver CPU s/GiB | idle wake-ups/s | idle CPU % | idle RSS MiB |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (pair, runs, failed) in &results {
        let label = if *failed > 0 {
            format!(
                "{} ({} of {} runs failed)",
                pair.label(),
                failed,
                failed + runs.len()
            )
        } else {
            pair.label()
        };
        println!(
            "| {label} | {} | {} | {} | {} | {} | {} | {} |",
            med(runs, 2, |r| Some(r.online_s)),
            med(runs, 1, |r| r.file.as_ref().map(|f| f.mib_s)),
            med(runs, 2, |r| r.file.as_ref().map(|f| f.sender_cpu_per_gib)),
            med(runs, 2, |r| r.file.as_ref().map(|f| f.receiver_cpu_per_gib)),
            both(runs, 1, |i| i.wakeups_per_s),
            both(runs, 2, |i| i.cpu_percent),
            both(runs, 1, |i| i.rss_mib),
        );
    }
    if bench.args.size > 0 {
        println!();
        println!("The loop during the file (medians): iterations per second, callbacks (chunk requests or chunks) per iteration, and the share of tox_iteration_interval() answers of 0 / 1 / 2–4 / 5–49 / ≥ 50 ms.");
        println!();
        println!("| library | file MiB/s, each run | offer → accept s | accept → last byte MiB/s | sender it/s | sender chunks/it | sender intervals % | receiver it/s | receiver chunks/it | receiver intervals % | verified |");
        println!("|---|---|---:|---:|---:|---:|---|---:|---:|---|---|");
        let hist = |runs: &[Run], f: &dyn Fn(&FileRun) -> LoopStats| -> String {
            (0..5)
                .map(|k| med(runs, 0, |r| r.file.as_ref().map(|x| f(x).hist[k] * 100.0)))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        for (pair, runs, _) in &results {
            let verified = runs
                .iter()
                .filter(|r| r.file.as_ref().is_some_and(|f| f.verified))
                .count();
            let each: Vec<String> = runs
                .iter()
                .filter_map(|r| r.file.as_ref().map(|f| format!("{:.1}", f.mib_s)))
                .collect();
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {verified}/{} |",
                pair.label(),
                each.join(", "),
                med(runs, 2, |r| r.file.as_ref().map(|f| f.offer_to_accept_s)),
                med(runs, 1, |r| r.file.as_ref().map(|f| f.accept_mib_s)),
                med(runs, 0, |r| r
                    .file
                    .as_ref()
                    .map(|f| f.sender_loop.iterations_per_s)),
                med(runs, 1, |r| r
                    .file
                    .as_ref()
                    .map(|f| f.sender_loop.events_per_iteration)),
                hist(runs, &|f| f.sender_loop),
                med(runs, 0, |r| r
                    .file
                    .as_ref()
                    .map(|f| f.receiver_loop.iterations_per_s)),
                med(runs, 1, |r| r
                    .file
                    .as_ref()
                    .map(|f| f.receiver_loop.events_per_iteration)),
                hist(runs, &|f| f.receiver_loop),
                runs.len(),
            );
        }
    }
    if bench.args.keep {
        eprintln!("kept {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}
