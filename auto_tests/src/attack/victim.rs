//! The attacked node and the honest transfer through it, as child processes: `rustox recv`
//! (a full node: DHT, onion server, net_crypto endpoint, friend requests) and
//! `rustox send --to ADDR --key KEY FILE`. What each costs or achieves is read from
//! `/proc` and from the JSON line each prints per file (`simulator/src/summary.rs`).
//!
//! Either may run behind a [`Launch`] prefix such as `taskset -c 0 setsid nice -n -10 ip netns
//! exec NS`: all these programs replace themselves with the next (`exec`), so the child's pid
//! is the rustox process's and its `/proc` entries are the victim's, and the environment
//! passes through.
//!
//! What the scheduler did to each is read too ([`SchedStat`]): a process that was runnable
//! but waited for its CPU uses less of it than it needed, and its CPU time alone would make
//! it look idle while its socket overflows.

use std::fs::File;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::ctoxcore::Launch;
use crate::emulator::cli_transfer::line_reader;
use crate::emulator::CliSummary;
use crate::scale::process::{cpu_time_of, peak_rss_bytes_of};

/// How long `rustox recv` may take to print its address and key.
const STARTUP: Duration = Duration::from_secs(10);

/// How long the last lines of an exited child may take to come through its pipe.
const OUTPUT_DRAIN: Duration = Duration::from_secs(2);

/// What `rustox recv` prints on stderr for each friend it adds (`cli/src/recv.rs`): a
/// stranger who opened a session or whose friend request arrived.
const FRIEND_ADDED: &str = "accepted a friend request from";

/// The variable that makes `rustox recv` print its counters as a JSON line a second.
const TRACE_STATS: &str = "RUSTOX_TRACE_STATS";

/// The key that marks the counters line, a JSON object (cli/src/trace_stats.rs).
const TRACE_STATS_KEY: &str = "trace_stats";

/// A running `rustox recv` with an OS-chosen port, killed on drop.
pub struct Victim {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its public key (also its DHT key), hex.
    pub key_hex: String,
    /// Its Tox ID.
    pub tox_id: String,
    lines: mpsc::Receiver<String>,
    stderr: PathBuf,
}

impl Victim {
    /// Starts `rustox recv` behind `launch`, listening on `ip`, with its files, key and
    /// stderr in `dir`.
    pub fn start(rustox: &Path, launch: &Launch, ip: IpAddr, dir: &Path) -> Result<Victim, String> {
        let out = dir.join("inbox");
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let stderr = dir.join("recv.stderr");
        let err_file = File::create(&stderr).map_err(|e| format!("{}: {e}", stderr.display()))?;
        let mut child = launch
            .command(rustox)
            .args([
                "recv",
                "--listen",
                &SocketAddr::new(ip, 0).to_string(),
                "--out",
            ])
            .arg(&out)
            .arg("--key-file")
            .arg(dir.join("recv.key"))
            // Its counters once a second on stderr (cli/src/trace_stats.rs): which drop
            // reasons an attack hits.
            .env(TRACE_STATS, "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(err_file)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", rustox.display()))?;
        let lines = line_reader(child.stdout.take());
        let deadline = Instant::now() + STARTUP;
        let (mut addr, mut key_hex, mut tox_id) = (None, None, None);
        while addr.is_none() || key_hex.is_none() || tox_id.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = lines.recv_timeout(left) else {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "rustox recv printed no address, key and Tox ID: {}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                ));
            };
            if let Some(a) = line.strip_prefix("rustox recv listening on ") {
                addr = a.trim().parse().ok();
            } else if let Some(k) = line.strip_prefix("public key ") {
                key_hex = Some(k.trim().to_owned());
            } else if let Some(t) = line.strip_prefix("tox id ") {
                tox_id = Some(t.trim().to_owned());
            }
        }
        Ok(Victim {
            child,
            addr: addr.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0))),
            key_hex: key_hex.unwrap_or_default(),
            tox_id: tox_id.unwrap_or_default(),
            lines,
            stderr,
        })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it still runs.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The next file summary it prints, waiting at most `limit`.
    pub fn received(&self, limit: Duration) -> Option<CliSummary> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).ok()?;
            if line.starts_with('{') {
                if let Ok(s) = serde_json::from_str(&line) {
                    return Some(s);
                }
            }
        }
    }

    /// User + system CPU seconds it has used (all threads).
    pub fn cpu_seconds(&self) -> Option<f64> {
        cpu_time_of(self.pid()).map(|t| t.as_secs_f64())
    }

    /// Its main thread's (the node's loop's) scheduler counters so far.
    pub fn schedstat(&self) -> Option<SchedStat> {
        proc_schedstat(self.pid())
    }

    /// Its peak resident set (`VmHWM`), bytes.
    pub fn peak_rss_bytes(&self) -> Option<u64> {
        peak_rss_bytes_of(self.pid())
    }

    /// Datagrams the kernel dropped at its socket because its receive buffer was full (the
    /// `drops` column of its namespace's `/proc/PID/net/udp`): what it never got to read.
    pub fn socket_drops(&self) -> Option<u64> {
        udp_socket_drops(self.pid(), self.addr)
    }

    /// Friends it added (strangers' sessions and friend requests), from its stderr.
    pub fn friends_added(&self) -> usize {
        std::fs::read_to_string(&self.stderr)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(FRIEND_ADDED))
            .count()
    }

    /// Its drop counters (`layer.reason`, count) from the last counters line it printed,
    /// largest first.
    pub fn drop_reasons(&self) -> Vec<(String, u64)> {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let Some(value) = text
            .lines()
            .rev()
            .filter(|l| l.starts_with('{') && l.contains(TRACE_STATS_KEY))
            .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v.get(TRACE_STATS_KEY).is_some())
        else {
            return Vec::new();
        };
        let mut drops: Vec<(String, u64)> = value["drops"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
                    .collect()
            })
            .unwrap_or_default();
        drops.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        drops
    }

    /// The last `n` lines of its stderr.
    pub fn stderr_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the honest `rustox send` reported.
#[derive(Debug, Clone)]
pub struct HonestOutcome {
    /// Its summary, or why there is none.
    pub summary: Result<CliSummary, String>,
    /// From start to exit.
    pub wall: Duration,
    /// Its main thread's scheduler counters, read last within a poll (10 ms) of its exit.
    pub sched: Option<SchedStat>,
    /// Whether its session's nice was set, when [`send_file`] was asked to.
    pub autogroup: Option<Result<(), String>>,
}

/// How often [`send_file`] looks at the sender.
const SENDER_POLL: Duration = Duration::from_millis(10);

/// Runs `rustox send --to ADDR --key KEY FILE` behind `launch` to completion or `limit`.
/// With `autogroup_nice`, `launch` must start it in a session of its own (`setsid`), whose
/// nice is then set to that value ([`set_autogroup_nice`]).
pub fn send_file(
    rustox: &Path,
    launch: &Launch,
    victim: &Victim,
    file: &Path,
    stderr: &Path,
    limit: Duration,
    autogroup_nice: Option<i32>,
) -> HonestOutcome {
    let started = Instant::now();
    let err_file = match File::create(stderr) {
        Ok(f) => f,
        Err(e) => {
            return HonestOutcome {
                summary: Err(format!("{}: {e}", stderr.display())),
                wall: started.elapsed(),
                sched: None,
                autogroup: None,
            }
        }
    };
    let child = launch
        .command(rustox)
        .args(["send", "--to", &victim.addr.to_string(), "--key"])
        .arg(&victim.key_hex)
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(err_file)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return HonestOutcome {
                summary: Err(format!("cannot start rustox send: {e}")),
                wall: started.elapsed(),
                sched: None,
                autogroup: None,
            }
        }
    };
    let lines = line_reader(child.stdout.take());
    let mut sched = None;
    // The session exists once `setsid` has run, a few execs after the spawn: try until then.
    let mut autogroup = autogroup_nice.map(|_| Err("its session never appeared".to_owned()));
    let status = loop {
        if let (Some(nice), Some(Err(_))) = (autogroup_nice, &autogroup) {
            autogroup = Some(set_autogroup_nice(child.id(), nice));
        }
        // Before `try_wait` reaps it: afterwards its /proc entry is gone.
        sched = proc_schedstat(child.id()).or(sched);
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(SENDER_POLL),
            Err(_) => break None,
        }
    };
    let wall = started.elapsed();
    // The child has exited; its reader thread delivers what is left and hangs up at EOF.
    let mut summary = None;
    while let Ok(line) = lines.recv_timeout(OUTPUT_DRAIN) {
        if let Ok(s) = serde_json::from_str::<CliSummary>(&line) {
            summary = Some(s);
        }
    }
    let summary = match (status, summary) {
        (Some(s), Some(summary)) if s.success() => Ok(summary),
        (None, _) => Err(format!("still running after {limit:?}; killed")),
        (Some(s), _) => {
            let text = std::fs::read_to_string(stderr).unwrap_or_default();
            Err(format!(
                "{s}: {}",
                text.lines().last().unwrap_or("no message")
            ))
        }
    };
    HonestOutcome {
        summary,
        wall,
        sched,
        autogroup,
    }
}

/// Writes `size` bytes of a xorshift stream (seeded by `seed`) to `path`, so a misplaced or
/// repeated chunk changes the file's hash.
pub fn write_file(path: &Path, size: u64, seed: u64) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(File::create(path)?);
    let mut x = seed | 1;
    let mut block = vec![0u8; 1 << 16];
    let mut left = size;
    while left > 0 {
        for chunk in block.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes());
        }
        let n = left.min(block.len() as u64) as usize;
        out.write_all(&block[..n])?;
        left -= n as u64;
    }
    out.flush()
}

/// A thread's scheduler counters (`/proc/PID/schedstat`, the thread group leader's): time on
/// a CPU and time runnable but waiting on a runqueue for one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedStat {
    /// Time it ran.
    pub ran: Duration,
    /// Time it was runnable but another task had its CPU.
    pub waited: Duration,
}

impl SchedStat {
    /// What happened between `earlier` and `self`.
    pub fn since(self, earlier: SchedStat) -> SchedStat {
        SchedStat {
            ran: self.ran.saturating_sub(earlier.ran),
            waited: self.waited.saturating_sub(earlier.waited),
        }
    }

    /// Parses `/proc/PID/schedstat`: nanoseconds on the CPU, nanoseconds waiting on a
    /// runqueue, timeslices (the kernel's `sched-stats.rst`).
    pub fn parse(text: &str) -> Option<SchedStat> {
        let mut fields = text.split_whitespace().map(str::parse::<u64>);
        let ran = fields.next()?.ok()?;
        let waited = fields.next()?.ok()?;
        Some(SchedStat {
            ran: Duration::from_nanos(ran),
            waited: Duration::from_nanos(waited),
        })
    }
}

/// The scheduler counters of `pid`'s main thread.
pub fn proc_schedstat(pid: u32) -> Option<SchedStat> {
    SchedStat::parse(&std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?)
}

/// Sets the nice value of `pid`'s autogroup. With autogroups (sched(7); on unless
/// `kernel.sched_autogroup_enabled` is 0), the scheduler first shares a CPU between
/// sessions, equally at equal autogroup nice, and a task's own nice counts only inside its
/// session: a build in another session, at any nice, takes half of a CPU from a process
/// that needs it. Refuses while `pid` is still in this process's session (it has not run
/// `setsid` yet), which it must not change. Lowering the nice needs `CAP_SYS_NICE`.
pub fn set_autogroup_nice(pid: u32, nice: i32) -> Result<(), String> {
    let group = |path: &str| -> Result<String, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        Ok(text
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned())
    };
    let theirs = format!("/proc/{pid}/autogroup");
    if group(&theirs)? == group("/proc/self/autogroup")? {
        return Err(format!("{pid} is still in this process's session"));
    }
    std::fs::write(&theirs, nice.to_string()).map_err(|e| format!("{theirs}: {e}"))
}

/// The `drops` count of the IPv4 UDP socket bound to `addr`, from `/proc/PID/net/udp`: the
/// table of `pid`'s network namespace (local address as `AABBCCDD:PPPP`, the address in host
/// byte order, the port big-endian; drops is the last column).
fn udp_socket_drops(pid: u32, addr: SocketAddr) -> Option<u64> {
    let SocketAddr::V4(v4) = addr else {
        return None;
    };
    let ip = u32::from_ne_bytes(v4.ip().octets());
    let local = format!("{ip:08X}:{:04X}", v4.port());
    let table = std::fs::read_to_string(format!("/proc/{pid}/net/udp")).ok()?;
    table.lines().skip(1).find_map(|l| {
        let cols: Vec<&str> = l.split_whitespace().collect();
        if cols.get(1) == Some(&local.as_str()) {
            cols.last()?.parse().ok()
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_reads_run_and_runqueue_nanoseconds() {
        let s = SchedStat::parse("1473374169 1213007018 769\n").unwrap();
        assert_eq!(s.ran, Duration::from_nanos(1_473_374_169));
        assert_eq!(s.waited, Duration::from_nanos(1_213_007_018));
        assert_eq!(SchedStat::parse("12"), None);
        let later = SchedStat::parse("4184815270 5037278447 1582").unwrap();
        assert_eq!(later.since(s).waited, Duration::from_nanos(3_824_271_429));
        assert_eq!(s.since(later), SchedStat::default());
    }

    #[test]
    fn this_process_has_scheduler_counters() {
        assert!(proc_schedstat(std::process::id()).is_some());
    }
}
