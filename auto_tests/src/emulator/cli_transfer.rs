//! The real `rustox recv` and `rustox send` run as child processes in two namespaced hosts
//! (a [`Testbed`](super::Testbed)'s or any other [`TwoHosts`]), and the JSON summary line each
//! prints at the end of a file ([`CliSummary`], the CLI's own type) read back.
//!
//! Several transfers may run at once through one testbed (two receivers on different
//! ports, two senders), which is how the sharing goals are measured.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::hosts::{Side, TwoHosts};
use super::EmulatorError;

/// How long `rustox recv` may take to print its address and key.
const RECEIVER_STARTUP: Duration = Duration::from_secs(10);
/// How often a running child is checked for exit.
const POLL_CHILD: Duration = Duration::from_millis(20);
/// Longest wait for the last lines of a child that has exited.
const READER_DRAIN: Duration = Duration::from_secs(2);
/// Lines of a failed child's stderr quoted in its error.
const STDERR_TAIL_LINES: usize = 5;

/// The `rustox` binary beside the running executable (`target/release/rustox` when this is
/// `target/release/real-bench`), or an error telling how to build it.
pub fn rustox_beside_current_exe() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate this program: {e}"))?;
    let dir = exe
        .parent()
        .ok_or_else(|| format!("{} has no directory", exe.display()))?;
    // Test and example binaries live one level below (target/release/deps, .../examples).
    for candidate in [dir.join("rustox"), dir.join("..").join("rustox")] {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(format!(
        "no rustox binary beside {}: run `cargo build --release -p rustox` first",
        exe.display()
    ))
}

/// The JSON line `rustox send` / `rustox recv` print per file: the CLI's own type.
pub use rustox_simulator::TransferSummary as CliSummary;

/// One file transfer to run: where the receiver listens, with which controller, what to send.
#[derive(Debug, Clone)]
pub struct CliTransferSpec {
    /// `rustox` to run.
    pub rustox: PathBuf,
    /// UDP port `rustox recv` listens on (in namespace B).
    pub port: u16,
    /// `--controller` for both sides.
    pub controller: String,
    /// The file `rustox send` sends (from namespace A).
    pub file: PathBuf,
    /// A scratch directory: received file, key file and both processes' stderr go here.
    pub work_dir: PathBuf,
}

/// What one transfer printed, or why a side failed.
#[derive(Debug, Clone)]
pub struct CliOutcome {
    /// The sender's summary.
    pub sender: Result<CliSummary, String>,
    /// The receiver's summary.
    pub receiver: Result<CliSummary, String>,
}

/// A running `rustox recv` (namespace B), and later its `rustox send` (namespace A).
#[derive(Debug)]
pub struct CliTransfer {
    spec: CliTransferSpec,
    receiver: Child,
    receiver_lines: mpsc::Receiver<String>,
    /// The address and key the receiver printed.
    listen: SocketAddr,
    key: String,
    sender: Option<(Child, mpsc::Receiver<String>)>,
}

impl CliTransfer {
    /// Starts `rustox recv --once` in namespace B and waits for its address and key.
    pub fn start_receiver(
        bed: &impl TwoHosts,
        spec: CliTransferSpec,
    ) -> Result<Self, EmulatorError> {
        let out_dir = spec.work_dir.join(format!("received-{}", spec.port));
        std::fs::create_dir_all(&out_dir).map_err(|e| io_error(&out_dir, e))?;
        let listen = SocketAddr::from((bed.addr(Side::B), spec.port));
        let key_file = spec.work_dir.join(format!("recv-{}.key", spec.port));
        let stderr = stderr_file(&spec.work_dir, "recv", spec.port)?;
        let mut cmd = bed.command(Side::B, &spec.rustox.to_string_lossy());
        cmd.arg("recv")
            .args(["--listen", &listen.to_string()])
            .arg("--out")
            .arg(&out_dir)
            .arg("--key-file")
            .arg(&key_file)
            .arg("--once")
            .args(["--controller", &spec.controller])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut receiver = spawn(&mut cmd)?;
        let receiver_lines = line_reader(receiver.stdout.take());
        let deadline = Instant::now() + RECEIVER_STARTUP;
        let mut key = None;
        while key.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            match receiver_lines.recv_timeout(left) {
                Ok(line) => key = line.strip_prefix("public key ").map(str::to_owned),
                Err(_) => {
                    let _ = receiver.kill();
                    let _ = receiver.wait();
                    return Err(EmulatorError::Child(format!(
                        "rustox recv printed no key: {}",
                        stderr_tail(&spec.work_dir, "recv", spec.port)
                    )));
                }
            }
        }
        Ok(CliTransfer {
            spec,
            receiver,
            receiver_lines,
            listen,
            key: key.unwrap_or_default(),
            sender: None,
        })
    }

    /// Starts `rustox send` in namespace A towards this receiver.
    pub fn start_sender(&mut self, bed: &impl TwoHosts) -> Result<(), EmulatorError> {
        let stderr = stderr_file(&self.spec.work_dir, "send", self.spec.port)?;
        let mut cmd = bed.command(Side::A, &self.spec.rustox.to_string_lossy());
        cmd.arg("send")
            .args(["--to", &self.listen.to_string()])
            .args(["--key", &self.key])
            .args(["--controller", &self.spec.controller])
            .arg(&self.spec.file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut child = spawn(&mut cmd)?;
        let lines = line_reader(child.stdout.take());
        self.sender = Some((child, lines));
        Ok(())
    }

    /// Waits for both processes (killing whatever still runs at `deadline`) and reads
    /// their summaries. The received file is deleted.
    pub fn wait(mut self, deadline: Instant) -> CliOutcome {
        let (work, port) = (self.spec.work_dir.clone(), self.spec.port);
        let sender = match self.sender.take() {
            Some((child, lines)) => finish_child(child, &lines, deadline, &work, "send", port),
            None => Err("never started".into()),
        };
        let receiver = finish_child(
            self.receiver,
            &self.receiver_lines,
            deadline,
            &work,
            "recv",
            port,
        );
        let _ = std::fs::remove_dir_all(work.join(format!("received-{port}")));
        CliOutcome { sender, receiver }
    }
}

/// Waits for `child` until `deadline` (then kills it) and returns the summary among the
/// lines it printed.
fn finish_child(
    mut child: Child,
    lines: &mpsc::Receiver<String>,
    deadline: Instant,
    work: &Path,
    role: &str,
    port: u16,
) -> Result<CliSummary, String> {
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL_CHILD),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    // The reader thread may still hold the last lines of a child that has just exited:
    // read until it has seen the pipe's end (or a killed child's pipe stays open too long).
    let mut summary = None;
    while let Ok(l) = lines.recv_timeout(READER_DRAIN) {
        if let Ok(s) = serde_json::from_str::<CliSummary>(&l) {
            summary = Some(s);
        }
    }
    match (status, summary) {
        (Some(s), Some(summary)) if s.success() => Ok(summary),
        (Some(s), _) => Err(format!(
            "rustox {role} exited {s}: {}",
            stderr_tail(work, role, port)
        )),
        (None, _) => Err(format!(
            "rustox {role} timed out: {}",
            stderr_tail(work, role, port)
        )),
    }
}

fn spawn(cmd: &mut std::process::Command) -> Result<Child, EmulatorError> {
    cmd.spawn().map_err(|source| EmulatorError::Spawn {
        command: super::namespace::command_line(cmd),
        source,
    })
}

/// Lines of `stdout`, read on a thread of their own (the child never blocks on a full pipe).
pub(crate) fn line_reader(stdout: Option<ChildStdout>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    if let Some(stdout) = stdout {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    rx
}

fn stderr_path(work: &Path, role: &str, port: u16) -> PathBuf {
    work.join(format!("{role}-{port}.stderr"))
}

fn stderr_file(work: &Path, role: &str, port: u16) -> Result<File, EmulatorError> {
    let path = stderr_path(work, role, port);
    File::create(&path).map_err(|e| io_error(&path, e))
}

/// The last lines a child wrote to stderr, joined.
fn stderr_tail(work: &Path, role: &str, port: u16) -> String {
    let mut text = String::new();
    if let Ok(mut f) = File::open(stderr_path(work, role, port)) {
        let _ = f.read_to_string(&mut text);
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..].join(" | ")
}

fn io_error(path: &Path, source: std::io::Error) -> EmulatorError {
    EmulatorError::Io {
        path: path.display().to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_summary_line_parses() {
        let line = r#"{"bytes":20971520,"seconds":15.6,"goodput_mbit":10.754,"rtt_ms":131.2,"resent_packets":203,"sha256":"ab","cpu_seconds":1.2}"#;
        let s: CliSummary = serde_json::from_str(line).unwrap();
        assert_eq!(s.resent_packets, 203);
        assert_eq!(s.rtt_ms, Some(131.2));
        let no_rtt = r#"{"bytes":1,"seconds":0.1,"goodput_mbit":0.0,"rtt_ms":null,"resent_packets":0,"sha256":"","cpu_seconds":null}"#;
        assert_eq!(
            serde_json::from_str::<CliSummary>(no_rtt).unwrap().rtt_ms,
            None
        );
    }
}
