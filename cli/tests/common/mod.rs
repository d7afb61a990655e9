//! Helpers for the CLI tests: the binary under test, scratch directories, a `rustox recv`
//! child that reports its OS-chosen port (no port races), and deterministic files.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A child killed when the test ends, however it ends.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `rustox` binary cargo built for these tests.
pub fn rustox() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rustox"))
}

/// A fresh directory for one test, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("rustox-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `size` bytes whose value depends on the offset and `seed` (xorshift), so a
/// misplaced or repeated chunk changes the content.
pub fn write_pattern(path: &Path, size: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let data: Vec<u8> = (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    let mut f = std::fs::File::create(path).expect("create file");
    f.write_all(&data).expect("write file");
    data
}

/// A running `rustox recv --once` on 127.0.0.1 with an OS-chosen port.
pub struct Receiver {
    pub child: Child,
    pub addr: String,
    pub key: String,
    pub stdout: BufReader<ChildStdout>,
}

impl Receiver {
    pub fn start(out: &Path, key_file: &Path) -> Self {
        Self::start_with(out, key_file, &[], Stdio::piped())
    }

    /// `rustox recv --listen 127.0.0.1:0 --once --out <out> --key-file <key_file> <extra>`,
    /// its stderr to `stderr`; read up to its public key line.
    pub fn start_with(out: &Path, key_file: &Path, extra: &[&str], stderr: Stdio) -> Self {
        let mut child = rustox()
            .args(["recv", "--listen", "127.0.0.1:0", "--once", "--out"])
            .arg(out)
            .arg("--key-file")
            .arg(key_file)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn rustox recv");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let addr = line_after(&mut stdout, "rustox recv listening on ");
        let key = line_after(&mut stdout, "public key ");
        Receiver {
            child,
            addr,
            key,
            stdout,
        }
    }

    /// `rustox send --to <its address> --key <its key>`, for the caller's further arguments.
    pub fn send(&self) -> Command {
        let mut command = rustox();
        command.args(["send", "--to", &self.addr, "--key", &self.key]);
        command
    }

    /// Waits for the receiver to exit; returns its status and the rest of its stdout.
    pub fn finish(mut self, limit: Duration) -> (std::process::ExitStatus, String, String) {
        let status = wait_with_limit(&mut self.child, limit);
        let mut rest = String::new();
        for line in (&mut self.stdout).lines() {
            rest.push_str(&line.unwrap_or_default());
            rest.push('\n');
        }
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        (status, rest, err)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads lines until one starts with `prefix`; returns the rest, trimmed.
pub fn line_after(out: &mut impl BufRead, prefix: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        let n = out.read_line(&mut line).expect("read stdout");
        assert!(n > 0, "the process exited before printing {prefix:?}");
        if let Some(rest) = line.strip_prefix(prefix) {
            return rest.trim().to_owned();
        }
    }
}

/// `rustox bootstrap --bind 127.0.0.1 --port <port> <extra> --keys <keys>`, its stderr to
/// `stderr`; returns it and the key it printed first.
pub fn start_bootstrap(port: u16, keys: &Path, extra: &[&str], stderr: Stdio) -> (Killed, String) {
    let mut boot = Killed(
        rustox()
            .args(["bootstrap", "--bind", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(extra)
            .arg("--keys")
            .arg(keys)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn rustox bootstrap"),
    );
    let mut key = String::new();
    BufReader::new(boot.0.stdout.take().expect("stdout"))
        .read_line(&mut key)
        .expect("its key");
    (boot, key.trim().to_string())
}

/// Waits for `child`, killing it (and failing the test) after `limit`.
pub fn wait_with_limit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("process did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs a command to completion within `limit`.
pub fn run_with_limit(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rustox");
    // Drain the pipes on threads so a chatty child cannot block on a full pipe.
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_thread = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut s);
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut s);
        s
    });
    let status = wait_with_limit(&mut child, limit);
    Output {
        status,
        stdout: out_thread.join().unwrap_or_default(),
        stderr: err_thread.join().unwrap_or_default(),
    }
}

/// A finished run's stderr, for a failure message.
pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The JSON summary of a run that must have succeeded (`what` names it if it failed).
pub fn succeeded(output: &Output, what: &str) -> serde_json::Value {
    assert!(
        output.status.success(),
        "{what} failed: {}",
        stderr_of(output)
    );
    summary_of(output)
}

/// The JSON summary line a finished run printed last.
pub fn summary_of(output: &Output) -> serde_json::Value {
    last_json(&String::from_utf8_lossy(&output.stdout))
}

/// The last line of `text` that is a JSON object.
pub fn last_json(text: &str) -> serde_json::Value {
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON line in {text:?}"));
    serde_json::from_str(line).expect("valid JSON summary")
}

/// Asserts the stderr of a failed run is exactly one line of explanation, not a panic.
pub fn assert_one_line_error(output: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "expected failure, got success; stderr: {stderr}"
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = lines.last().copied().unwrap_or("");
    assert!(
        last.starts_with("rustox: ") && last.contains(expected),
        "expected a line containing {expected:?}, got stderr {stderr:?}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "stderr shows a panic: {stderr}"
    );
}
