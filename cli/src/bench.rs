//! Hidden benchmark subcommands behind the README's loopback figures.
//!
//! * `bench-crypto`: what one core can seal with the session cipher (XSalsa20-Poly1305 via
//!   the same `PrecomputedKey::encrypt_in_place` the data path calls) over 1400-byte
//!   datagrams — the ceiling a single-threaded sender cannot beat — and, for comparison,
//!   what RustCrypto's `xsalsa20poly1305` crate manages (the implementation net_crypto's
//!   own cipher is checked against, `net_crypto/tests/secretbox_oracle.rs`); then the same
//!   for opening, the receiver's side.
//! * `bench-loopback`: the ceiling, then `rustox recv` and `rustox send` as two processes on
//!   127.0.0.1 with one generated file, each reporting its own CPU time; prints MiB/s and
//!   CPU seconds per GiB for each side beside the ceiling.
//!
//! Numbers are printed, never asserted: on a shared machine they vary run to run.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rand::rngs::OsRng;
use rustox_core::crypto::{KeyPair, Nonce, PrecomputedKey, CIPHER_LANES};
use serde::Deserialize;

use crate::size::parse_size;

/// Largest net_crypto datagram (docs/protocol.md §2.5).
const DATAGRAM: usize = 1400;
/// The datagram's encrypted part: the box is `[MAC 16][ciphertext]` after 3 header bytes.
const SEALED_PLAINTEXT: usize = DATAGRAM - 3 - 16;
/// File bytes in one full datagram (FILE_DATA payload, docs/protocol.md §3.2).
const FILE_BYTES_PER_DATAGRAM: u64 = 1371;

/// Options of `bench-crypto`.
#[derive(clap::Args, Debug)]
pub struct CryptoArgs {
    /// Datagram bytes to seal.
    #[arg(long, default_value = "512MiB", value_parser = parse_size)]
    size: u64,
}

/// Options of `bench-loopback`.
#[derive(clap::Args, Debug)]
pub struct LoopbackArgs {
    /// Size of the generated file.
    #[arg(long, default_value = "1GiB", value_parser = parse_size)]
    size: u64,
    /// Congestion controller of the sender: bbr (default), cubic, or legacy.
    #[arg(long, default_value = "bbr")]
    controller: String,
    /// Directory for the file and the received copy (default: a fresh one under /tmp,
    /// removed afterwards).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

/// The cipher ceiling.
#[derive(Debug, Clone, Copy)]
pub struct Ceiling {
    /// Datagrams sealed per CPU second.
    pub datagrams_per_s: f64,
}

impl Ceiling {
    /// File MiB per second that rate of datagrams carries.
    pub fn file_mib_per_s(&self) -> f64 {
        self.datagrams_per_s * FILE_BYTES_PER_DATAGRAM as f64 / 1048576.0
    }

    /// Datagram MiB per second.
    pub fn wire_mib_per_s(&self) -> f64 {
        self.datagrams_per_s * DATAGRAM as f64 / 1048576.0
    }
}

/// Seals `bytes` worth of datagrams on this thread with our cipher, in place as the data
/// path does, and measures its CPU time.
pub fn measure_ceiling(bytes: u64) -> Ceiling {
    let a = KeyPair::generate(&mut OsRng);
    let b = KeyPair::generate(&mut OsRng);
    let key = PrecomputedKey::new(&b.public, &a.secret).expect("generated keys have large order");
    let mut nonce = Nonce::random(&mut OsRng);
    let mut plaintext = vec![0x5au8; SEALED_PLAINTEXT];
    measure(bytes, || {
        let mac = key.encrypt_in_place(&nonce, &mut plaintext);
        nonce.increment();
        mac[0]
    })
}

/// Opens `bytes` worth of datagrams on this thread with our cipher, as the receive path does
/// (tag check, then decryption in place), and measures its CPU time. The boxes come from a
/// small ring sealed beforehand; each is copied into a scratch buffer before it is opened (a
/// 1.4 kB copy, a few percent of an open).
pub fn measure_open_ceiling(bytes: u64) -> Ceiling {
    /// Distinct boxes in the ring: enough that no two opens in a row see the same nonce.
    const RING: usize = 64;
    let a = KeyPair::generate(&mut OsRng);
    let b = KeyPair::generate(&mut OsRng);
    let key = PrecomputedKey::new(&b.public, &a.secret).expect("generated keys have large order");
    let mut nonce = Nonce::random(&mut OsRng);
    let ring: Vec<_> = (0..RING)
        .map(|_| {
            let mut ciphertext = vec![0x5au8; SEALED_PLAINTEXT];
            let mac = key.encrypt_in_place(&nonce, &mut ciphertext);
            let sealed = (nonce, mac, ciphertext);
            nonce.increment();
            sealed
        })
        .collect();
    let mut scratch = vec![0u8; SEALED_PLAINTEXT];
    let mut next = 0;
    measure(bytes, || {
        let (nonce, mac, ciphertext) = &ring[next % RING];
        next += 1;
        scratch.copy_from_slice(ciphertext);
        key.decrypt_in_place(nonce, mac, &mut scratch)
            .expect("a box sealed with this key opens");
        scratch[0]
    })
}

/// The same with RustCrypto's `xsalsa20poly1305` crate (in place too), for comparison.
pub fn measure_crate_ceiling(bytes: u64) -> Ceiling {
    use xsalsa20poly1305::aead::{AeadInPlace, KeyInit};
    let cipher = xsalsa20poly1305::XSalsa20Poly1305::new(&[0x17; 32].into());
    let mut nonce = Nonce::random(&mut OsRng);
    let mut plaintext = vec![0x5au8; SEALED_PLAINTEXT];
    measure(bytes, || {
        let mac = cipher
            .encrypt_in_place_detached(nonce.0.as_slice().into(), &[], &mut plaintext)
            .expect("no associated data");
        nonce.increment();
        mac[0]
    })
}

/// Runs `seal` once per datagram for `bytes` worth of datagrams and measures this thread's
/// CPU time.
fn measure(bytes: u64, mut seal: impl FnMut() -> u8) -> Ceiling {
    let count = (bytes / DATAGRAM as u64).max(1);
    let cpu = rustox_core::driver::CpuTimer::start();
    let mut checksum = 0u8;
    for _ in 0..count {
        checksum ^= seal();
    }
    let secs = cpu.elapsed().as_secs_f64().max(1e-9);
    // Keeps the loop from being optimised away.
    std::hint::black_box(checksum);
    Ceiling {
        datagrams_per_s: count as f64 / secs,
    }
}

/// Runs `bench-crypto`.
pub fn run_crypto(args: CryptoArgs) -> anyhow::Result<()> {
    println!("our keystream runs on {CIPHER_LANES}");
    for (name, c) in [
        ("ours", measure_ceiling(args.size)),
        ("ours, opening", measure_open_ceiling(args.size)),
        (
            "RustCrypto xsalsa20poly1305 0.9",
            measure_crate_ceiling(args.size),
        ),
    ] {
        println!(
            "XSalsa20-Poly1305 ({name}), one core, {DATAGRAM}-byte datagrams: {:.0} datagrams/s = {:.0} MiB/s on the wire = {:.0} MiB/s of file data",
            c.datagrams_per_s,
            c.wire_mib_per_s(),
            c.file_mib_per_s()
        );
    }
    Ok(())
}

/// The JSON summary line of `send` / `recv` (the fields the benchmark needs).
#[derive(Debug, Deserialize)]
struct Summary {
    bytes: u64,
    seconds: f64,
    rtt_ms: Option<f64>,
    resent_packets: u64,
    sha256: String,
    cpu_seconds: Option<f64>,
}

/// Runs `bench-loopback`.
pub fn run_loopback(args: LoopbackArgs) -> anyhow::Result<()> {
    let ceiling = (measure_ceiling(256 << 20), measure_crate_ceiling(256 << 20));
    let (dir, temporary) = match &args.dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("rustox-bench-{}", std::process::id())),
            true,
        ),
    };
    std::fs::create_dir_all(dir.join("in"))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let result = loopback_in(&args, &dir, ceiling);
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn loopback_in(args: &LoopbackArgs, dir: &Path, ceiling: (Ceiling, Ceiling)) -> anyhow::Result<()> {
    let file = dir.join("bench.bin");
    let _ = std::fs::remove_file(dir.join("in").join("bench.bin"));
    eprintln!("generating {} ...", crate::demo::human_bytes(args.size));
    crate::demo::generate(&file, args.size)?;
    let exe = std::env::current_exe().context("cannot find the rustox binary")?;
    let mut recv = Command::new(&exe)
        .args(["recv", "--listen", "127.0.0.1:0", "--once", "--out"])
        .arg(dir.join("in"))
        .arg("--key-file")
        .arg(dir.join("recv.key"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start rustox recv")?;
    // The receiver's stderr is kept, not shown: it matters only when the receiver fails.
    let recv_stderr = Tail::spawn(recv.stderr.take().context("no stderr")?, false);
    let mut recv_stdout = BufReader::new(recv.stdout.take().context("no stdout")?);
    let listening = read_field(&mut recv_stdout, "rustox recv listening on ")
        .and_then(|addr| Ok((addr, read_field(&mut recv_stdout, "public key ")?)));
    let (addr, key) = match listening {
        Ok(found) => found,
        Err(e) => {
            let status = wait_at_most(&mut recv, SHORT_WAIT);
            let run = ChildRun::new("recv", status, Vec::new(), recv_stderr.join());
            return Err(e.context(run.describe("did not start")));
        }
    };
    let recv_stdout = Tail::spawn(recv_stdout, false);
    let wall = Instant::now();
    let mut send = Command::new(&exe)
        .args([
            "send",
            "--to",
            &addr,
            "--key",
            &key,
            "--controller",
            &args.controller,
        ])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let (send, wall) = match send.as_mut() {
        Ok(child) => {
            // The sender's stderr is shown as it comes, as when it was inherited.
            let stderr = child.stderr.take().map(|e| Tail::spawn(e, true));
            let stdout = child.stdout.take().map(|o| Tail::spawn(o, false));
            let status = child.wait().ok();
            let wall = wall.elapsed();
            let run = ChildRun::new(
                "send",
                status,
                stdout.map(Tail::join).unwrap_or_default(),
                stderr.map(Tail::join).unwrap_or_default(),
            );
            (run, wall)
        }
        Err(e) => {
            let _ = wait_at_most(&mut recv, Duration::ZERO);
            return Err(anyhow::anyhow!("cannot run rustox send: {e}"));
        }
    };
    // A receiver whose sender is done has at most its linger left (recv.rs); one whose
    // sender failed may wait for a session forever, so it gets little time.
    let patience = if send.status.is_some_and(|s| s.success()) {
        RECV_EXIT_WAIT
    } else {
        SHORT_WAIT
    };
    let status = wait_at_most(&mut recv, patience);
    let recv = ChildRun::new("recv", status, recv_stdout.join(), recv_stderr.join());
    match (send.summary(), recv.summary()) {
        (Ok(sent), Ok(received)) => {
            report(args, ceiling, &sent, &received, wall);
            Ok(())
        }
        (sent, received) => {
            let failures: Vec<String> = [sent.err(), received.err()]
                .into_iter()
                .flatten()
                .map(|e| format!("{e:#}"))
                .collect();
            bail!("{}", failures.join("\n"))
        }
    }
}

/// How long the receiver may take to exit after a successful sender: its linger (3 s,
/// recv.rs) with a wide margin for a busy machine.
const RECV_EXIT_WAIT: Duration = Duration::from_secs(30);
/// How long a child that has no reason to stay gets before it is killed.
const SHORT_WAIT: Duration = Duration::from_secs(5);
/// Lines of a child's output kept: the last few of its stderr say why it failed (the
/// command's one-line error is the very last), the last of its stdout is its summary.
const TAIL_LINES: usize = 20;
/// A kept line is cut to this many bytes, the rest of it skipped (a line without an end
/// could be any size).
const MAX_LINE_BYTES: usize = 1000;

/// The last lines of a child's pipe, read to its end on a thread of its own so the child
/// never blocks on a full pipe while the bench waits for something else.
struct Tail(std::thread::JoinHandle<Vec<String>>);

impl Tail {
    /// Starts reading `pipe`; with `echo`, every line also goes to this process's stderr.
    fn spawn(pipe: impl std::io::Read + Send + 'static, echo: bool) -> Tail {
        Tail(std::thread::spawn(move || {
            let mut reader = BufReader::new(pipe);
            let mut kept = std::collections::VecDeque::with_capacity(TAIL_LINES);
            let mut raw = Vec::new();
            loop {
                raw.clear();
                match (&mut reader)
                    .take(MAX_LINE_BYTES as u64)
                    .read_until(b'\n', &mut raw)
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if !raw.ends_with(b"\n") && skip_line(&mut reader).is_err() {
                    break;
                }
                let line = String::from_utf8_lossy(&raw);
                let line = line.trim_end_matches(['\n', '\r']);
                if echo {
                    eprintln!("{line}");
                }
                if kept.len() == TAIL_LINES {
                    kept.pop_front();
                }
                kept.push_back(line.to_owned());
            }
            kept.into()
        }))
    }

    /// The last lines, once the pipe is closed (the child and its children exited).
    fn join(self) -> Vec<String> {
        self.0.join().unwrap_or_default()
    }
}

/// Reads past the end of the current line (its newline included).
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|&b| b == b'\n') {
            Some(end) => {
                reader.consume(end + 1);
                return Ok(());
            }
            None => {
                let all = buffer.len();
                reader.consume(all);
            }
        }
    }
}

/// One child's run as the bench saw it.
#[derive(Debug)]
struct ChildRun {
    /// `send` or `recv`.
    name: &'static str,
    /// `None`: it did not exit in time and was killed, or could not be waited for.
    status: Option<ExitStatus>,
    /// The last lines of its stdout (the JSON summary is the last of them).
    stdout: Vec<String>,
    /// The last lines of its stderr.
    stderr: Vec<String>,
}

impl ChildRun {
    fn new(
        name: &'static str,
        status: Option<ExitStatus>,
        stdout: Vec<String>,
        stderr: Vec<String>,
    ) -> Self {
        ChildRun {
            name,
            status,
            stdout,
            stderr,
        }
    }

    /// Its JSON summary, or an error naming the child, how it ended and what it said.
    fn summary(&self) -> anyhow::Result<Summary> {
        match self.status {
            Some(s) if s.success() => {}
            _ => bail!("{}", self.describe("failed")),
        }
        let line = self
            .stdout
            .iter()
            .rev()
            .find(|l| l.starts_with('{'))
            .ok_or_else(|| anyhow::anyhow!("{}", self.describe("printed no JSON summary line")))?;
        serde_json::from_str(line).with_context(|| {
            self.describe(&format!(
                "printed a summary line the bench cannot read: {line}"
            ))
        })
    }

    /// `rustox NAME WHAT (exit status ...); the end of its stderr:` and those lines.
    fn describe(&self, what: &str) -> String {
        let ended = match self.status {
            Some(s) => s.to_string(),
            None => "did not exit in time and was killed".into(),
        };
        let mut text = format!("rustox {} {what} ({ended})", self.name);
        if self.stderr.is_empty() {
            text.push_str("; its stderr was empty");
        } else {
            text.push_str("; the end of its stderr:");
            for line in &self.stderr {
                text.push_str("\n    ");
                text.push_str(line);
            }
        }
        text
    }
}

fn read_field(lines: &mut impl BufRead, prefix: &str) -> anyhow::Result<String> {
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line)? == 0 {
            bail!("rustox recv ended before printing {prefix:?}")
        }
        if let Some(rest) = line.strip_prefix(prefix) {
            return Ok(rest.trim().to_owned());
        }
    }
}

/// Waits up to `limit` for `child` to exit, then kills it; its status, or `None` when it
/// had to be killed.
fn wait_at_most(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn report(
    args: &LoopbackArgs,
    (ceiling, crate_ceiling): (Ceiling, Ceiling),
    sent: &Summary,
    received: &Summary,
    wall: Duration,
) {
    let gib = sent.bytes as f64 / (1u64 << 30) as f64;
    let mib = sent.bytes as f64 / 1048576.0;
    let rate = |s: &Summary| s.bytes as f64 / 1048576.0 / s.seconds.max(1e-9);
    let per_gib = |s: &Summary| {
        s.cpu_seconds
            .map_or("-".into(), |c| format!("{:.2}", c / gib))
    };
    println!(
        "loopback send → recv, {:.0} MiB, controller {}, measured {}",
        mib,
        args.controller,
        rustox_simulator::utc_minute(std::time::SystemTime::now())
    );
    println!(
        "cipher ceiling (one core, XSalsa20-Poly1305, 1400 B): {:.0} MiB/s of file data ({:.0} MiB/s on the wire); RustCrypto's crate: {:.0} MiB/s of file data",
        ceiling.file_mib_per_s(),
        ceiling.wire_mib_per_s(),
        crate_ceiling.file_mib_per_s()
    );
    let share = |r: f64| {
        format!(
            "{:.0} % of the ceiling, {:.0} % of the crate's",
            r / ceiling.file_mib_per_s() * 100.0,
            r / crate_ceiling.file_mib_per_s() * 100.0
        )
    };
    println!(
        "sender:   {:.0} MiB/s (offer → last ack; {}), CPU {} s/GiB, RTT {} ms, resent {}",
        rate(sent),
        share(rate(sent)),
        per_gib(sent),
        sent.rtt_ms.map_or("-".into(), |r| format!("{r:.3}")),
        sent.resent_packets
    );
    println!(
        "receiver: {:.0} MiB/s (accept → last byte written), CPU {} s/GiB",
        rate(received),
        per_gib(received)
    );
    let end_to_end = mib / wall.as_secs_f64();
    println!(
        "end to end (process start → exit of send, the sender's SHA-256 pass included): {:.0} MiB/s; {}",
        end_to_end,
        share(end_to_end)
    );
    println!(
        "SHA-256 {} ({})",
        if sent.sha256 == received.sha256 {
            "match"
        } else {
            "MISMATCH"
        },
        sent.sha256
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sh -c script` as the bench runs a child: both pipes read on threads, at most
    /// `limit` to exit.
    fn run_sh(script: &str, limit: Duration) -> ChildRun {
        let mut child = Command::new("sh")
            .args(["-c", script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sh runs");
        let stdout = Tail::spawn(child.stdout.take().expect("stdout"), false);
        let stderr = Tail::spawn(child.stderr.take().expect("stderr"), false);
        let status = wait_at_most(&mut child, limit);
        ChildRun::new("recv", status, stdout.join(), stderr.join())
    }

    const SUMMARY: &str = r#"{"bytes":5,"seconds":1.0,"rtt_ms":null,"resent_packets":0,"sha256":"ab","cpu_seconds":0.1}"#;

    #[test]
    fn a_failing_child_is_named_with_its_status_and_last_stderr_lines() {
        let run = run_sh(
            "for i in $(seq 1 50); do echo noise $i >&2; done; \
             echo 'rustox: receiving x failed: friend went offline' >&2; exit 3",
            Duration::from_secs(10),
        );
        let error = format!("{:#}", run.summary().expect_err("exit 3 is a failure"));
        assert!(
            error.starts_with("rustox recv failed (exit status: 3)"),
            "{error}"
        );
        assert!(
            error.ends_with("rustox: receiving x failed: friend went offline"),
            "{error}"
        );
        assert!(
            !error.contains("noise 30\n"),
            "only the tail is kept: {error}"
        );
        assert_eq!(run.stderr.len(), TAIL_LINES);
    }

    #[test]
    fn a_child_that_exits_0_without_a_summary_says_so() {
        let run = run_sh("echo not json; echo why >&2", Duration::from_secs(10));
        let error = format!("{:#}", run.summary().expect_err("no summary"));
        assert!(
            error.starts_with("rustox recv printed no JSON summary line (exit status: 0)"),
            "{error}"
        );
        assert!(error.ends_with("why"), "{error}");
    }

    #[test]
    fn a_child_that_hangs_is_killed_and_reported() {
        let run = run_sh(
            "echo waiting >&2; exec sleep 30",
            Duration::from_millis(200),
        );
        let error = format!("{:#}", run.summary().expect_err("killed"));
        assert!(
            error.contains("did not exit in time and was killed"),
            "{error}"
        );
        assert!(error.ends_with("waiting"), "{error}");
    }

    #[test]
    fn a_chatty_child_cannot_block_on_a_full_pipe() {
        // 4 MiB on stderr, far beyond a pipe's 64 KiB: the child finishes only if the
        // pipe is read while the bench waits for it.
        let script = format!(
            "head -c 4194304 /dev/zero | tr '\\0' x >&2; echo >&2; echo >&2 done; echo '{SUMMARY}'"
        );
        let run = run_sh(&script, Duration::from_secs(20));
        let summary = run.summary().expect("the summary line");
        assert_eq!(summary.bytes, 5);
        assert_eq!(run.stderr.last().map(String::as_str), Some("done"));
        assert_eq!(run.stderr.len(), 2, "one long line, cut, then 'done'");
        assert!(run.stderr.iter().all(|l| l.len() <= MAX_LINE_BYTES));
    }
}
