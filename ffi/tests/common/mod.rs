//! What the C-facing tests share: finding c-toxcore and a C compiler, building `peer.c`
//! against Debian's libtoxcore.so.2 and against ours, running peers and reading their
//! milestone lines.
//!
//! Missing tools (cc, pkg-config's toxcore, valgrind, the clients) skip a test with a
//! printed reason; with the environment variable `CI` set they fail it instead, as the
//! project's other interop tests do. Our own library missing is always a failure.

#![allow(dead_code, unused_imports)]

pub mod clients;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread;

pub use rustox_testkit::c::Cc;
pub use rustox_testkit::ci::skip_or_fail;
pub use rustox_testkit::temp::TempDir;
use std::time::{Duration, Instant};

/// The C sources, relative to this crate.
pub fn c_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c")
}

/// Runs a command, returning its stdout when it succeeded.
pub fn run_ok(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?}: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub fn have(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// c-toxcore's development files and a C compiler, or the reason they are missing.
pub fn c_toolchain() -> Result<(), String> {
    if !have("cc", "--version") {
        return Err("no C compiler (cc)".into());
    }
    if !have("pkg-config", "--version") {
        return Err("no pkg-config".into());
    }
    run_ok(Command::new("pkg-config").args(["--exists", "toxcore"]))
        .map_err(|_| "pkg-config finds no toxcore (apt install libtoxcore-dev)".to_string())?;
    Ok(())
}

/// The directory of the cargo profile this test binary was built under (`target/<profile>`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary in target/<profile>/deps")
        .to_path_buf()
}

/// Our `libtoxcore.so` as cargo built it for this test run: `cargo test -p rustox-ffi` builds
/// the library crate with all its crate types into `target/<profile>/deps/`, but copies the
/// cdylib up to `target/<profile>/` only on `cargo build`, so the copy there may be stale.
pub fn our_library() -> PathBuf {
    let lib = profile_dir().join("deps").join("libtoxcore.so");
    assert!(
        lib.exists(),
        "{} is missing: cargo test -p rustox-ffi builds it (or cargo build -p rustox-ffi)",
        lib.display()
    );
    lib
}

/// Debian's library as the loader finds it.
pub fn debian_library() -> PathBuf {
    for dir in [
        "/usr/lib/x86_64-linux-gnu",
        "/lib/x86_64-linux-gnu",
        "/usr/lib",
        "/usr/local/lib",
    ] {
        let p = Path::new(dir).join("libtoxcore.so.2");
        if p.exists() {
            return p;
        }
    }
    panic!("libtoxcore.so.2 not found although pkg-config knows toxcore");
}

/// Which libtoxcore a peer runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lib {
    Debian,
    Ours,
}

impl Lib {
    pub fn name(self) -> &'static str {
        match self {
            Lib::Debian => "debian",
            Lib::Ours => "ours",
        }
    }
}

/// A directory holding our library under the names the linker (`libtoxcore.so`) and the
/// loader (`libtoxcore.so.2`, the SONAME) look for.
pub fn our_lib_dir(under: &Path) -> PathBuf {
    let dir = under.join("ourlib");
    std::fs::create_dir_all(&dir).unwrap();
    let lib = our_library();
    for name in ["libtoxcore.so", "libtoxcore.so.2"] {
        let link = dir.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&lib, &link).unwrap();
    }
    dir
}

/// A C program linked against one of the libraries, with the environment that makes the
/// loader pick that library.
#[derive(Clone, Debug)]
pub struct CProgram {
    pub lib: Lib,
    pub path: PathBuf,
    /// LD_LIBRARY_PATH for ours; none (removed) for Debian's.
    pub lib_dir: Option<PathBuf>,
    /// The shared object the loader must pick for this program.
    pub expected_lib: PathBuf,
}

impl CProgram {
    pub fn command(&self, valgrind: bool) -> Command {
        let mut cmd = if valgrind {
            let mut c = Command::new("valgrind");
            c.args(["-q", "--error-exitcode=99", "--leak-check=no"])
                .arg(&self.path);
            c
        } else {
            Command::new(&self.path)
        };
        cmd.env_remove("LD_LIBRARY_PATH").env_remove("LD_PRELOAD");
        if let Some(dir) = &self.lib_dir {
            cmd.env("LD_LIBRARY_PATH", dir);
        }
        cmd
    }

    /// Asserts that `ldd` resolves libtoxcore.so.2 to the intended library.
    pub fn check_ldd(&self) {
        let mut cmd = Command::new("ldd");
        cmd.arg(&self.path).env_remove("LD_LIBRARY_PATH");
        if let Some(dir) = &self.lib_dir {
            cmd.env("LD_LIBRARY_PATH", dir);
        }
        let out = run_ok(&mut cmd).expect("ldd");
        let line = out
            .lines()
            .find(|l| l.contains("libtoxcore.so.2"))
            .unwrap_or_else(|| panic!("ldd {}: no libtoxcore.so.2\n{out}", self.path.display()));
        let resolved = line
            .split("=>")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("ldd line {line:?}"));
        self.check_loaded(resolved);
    }

    /// Asserts that the shared object the loader chose (`path`, from ldd or from peer.c's
    /// `LIB` line) is the intended library.
    pub fn check_loaded(&self, path: &str) {
        let loaded = std::fs::canonicalize(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let expected = std::fs::canonicalize(&self.expected_lib).unwrap();
        assert_eq!(
            loaded,
            expected,
            "{} loaded {path}, not {:?}'s library",
            self.path.display(),
            self.lib
        );
    }
}

/// Compiles `source` as the project's C programs are built:
/// `cc -O1 -g -Wall -Werror $(pkg-config --cflags toxcore) -I<testkit.h's dir> src -o out
/// -ltoxcore -L<dir>`, Debian's builds pinned to its library's folder.
pub fn compile_c(source: &Path, out_dir: &Path, stem: &str, lib: Lib, extra: &[&str]) -> CProgram {
    let out = out_dir.join(format!("{stem}-{}", lib.name()));
    let cc = Cc::new("cc")
        .args(["-O1", "-g", "-Wall", "-Werror"])
        .pkg_config(&["--cflags"], &["toxcore"])
        .expect("pkg-config toxcore")
        .testkit_header()
        .arg(source)
        .args(extra);
    let (cc, lib_dir) = match lib {
        // Pinned (an RPATH to pkg-config's libdir): c-toxcore even where our library is
        // installed under the same name.
        Lib::Debian => (
            cc.pkg_config(&["--libs"], &["toxcore"])
                .and_then(|cc| cc.pin_pkg_config_library("toxcore"))
                .expect("pkg-config toxcore"),
            None,
        ),
        Lib::Ours => {
            let dir = our_lib_dir(out_dir);
            (
                cc.arg(format!("-L{}", dir.display())).arg("-ltoxcore"),
                Some(dir),
            )
        }
    };
    if let Err(e) = cc.build(&out) {
        panic!(
            "compiling {} against {lib:?}'s libtoxcore:\n{e}",
            source.display()
        );
    }
    let prog = CProgram {
        lib,
        path: out,
        lib_dir,
        expected_lib: match lib {
            Lib::Debian => debian_library(),
            Lib::Ours => our_library(),
        },
    };
    prog.check_ldd();
    prog
}

/// peer.c built against both libraries, once per test binary run.
pub struct Peers {
    pub debian: CProgram,
    pub ours: CProgram,
    _dir: PathBuf,
}

impl Peers {
    pub fn get(&self, lib: Lib) -> &CProgram {
        match lib {
            Lib::Debian => &self.debian,
            Lib::Ours => &self.ours,
        }
    }
}

static PEERS: OnceLock<Result<Peers, String>> = OnceLock::new();

/// peer.c compiled twice, or `None` when the test is to be skipped.
pub fn peers() -> Option<&'static Peers> {
    let result = PEERS.get_or_init(|| {
        c_toolchain()?;
        let dir = std::env::temp_dir().join(format!("rustox-ffi-peer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = c_dir().join("peer.c");
        let debian = compile_c(&src, &dir, "peer", Lib::Debian, &[]);
        let ours = compile_c(&src, &dir, "peer", Lib::Ours, &[]);
        Ok(Peers {
            debian,
            ours,
            _dir: dir,
        })
    });
    match result {
        Ok(p) => Some(p),
        Err(reason) => {
            skip_or_fail(reason);
            None
        }
    }
}

/// Valgrind, or the reason for skipping.
pub fn valgrind_available() -> bool {
    have("valgrind", "--version") || !skip_or_fail("valgrind is not installed")
}

#[derive(Default)]
struct Output {
    lines: Vec<String>,
    eof: bool,
}

/// A running peer (peer.c) and the lines it has printed.
pub struct Peer {
    pub label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    out: Arc<(Mutex<Output>, Condvar)>,
    err: Arc<Mutex<String>>,
    threads: Vec<thread::JoinHandle<()>>,
    pub status: Option<ExitStatus>,
    pub started: Instant,
}

impl Peer {
    pub fn spawn(label: &str, prog: &CProgram, args: &[String], valgrind: bool) -> Peer {
        let mut cmd = prog.command(valgrind);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", prog.path.display()));
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let out = Arc::new((Mutex::new(Output::default()), Condvar::new()));
        let err = Arc::new(Mutex::new(String::new()));
        let out2 = out.clone();
        let t1 = thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let (m, cv) = &*out2;
                m.lock().unwrap().lines.push(line);
                cv.notify_all();
            }
            let (m, cv) = &*out2;
            m.lock().unwrap().eof = true;
            cv.notify_all();
        });
        let err2 = err.clone();
        let t2 = thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                err2.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdin = child.stdin.take();
        let peer = Peer {
            label: format!("{label} ({})", prog.lib.name()),
            child,
            stdin,
            out,
            err,
            threads: vec![t1, t2],
            status: None,
            started: Instant::now(),
        };
        // The loader chose the intended library.
        let lib = peer
            .wait_for("LIB ", Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("{e}"));
        prog.check_loaded(&lib[4..]);
        peer
    }

    /// The first line starting with `prefix`, waiting for it until `timeout`.
    pub fn wait_for(&self, prefix: &str, timeout: Duration) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        let (m, cv) = &*self.out;
        let mut o = m.lock().unwrap();
        loop {
            if let Some(l) = o.lines.iter().find(|l| l.starts_with(prefix)) {
                return Ok(l.clone());
            }
            if o.eof {
                drop(o);
                return Err(format!(
                    "{} exited before printing {prefix:?}\n{}",
                    self.label,
                    self.report()
                ));
            }
            let now = Instant::now();
            if now >= deadline {
                drop(o);
                return Err(format!(
                    "{} printed no {prefix:?} within {timeout:?}\n{}",
                    self.label,
                    self.report()
                ));
            }
            o = cv.wait_timeout(o, deadline - now).unwrap().0;
        }
    }

    /// The word `index` (0 = the tag) of the first line tagged `tag`.
    pub fn field(&self, tag: &str, index: usize, timeout: Duration) -> Result<String, String> {
        let line = self.wait_for(&format!("{tag} "), timeout)?;
        line.split_whitespace()
            .nth(index)
            .map(str::to_string)
            .ok_or_else(|| format!("{}: line {line:?} has no field {index}", self.label))
    }

    pub fn lines(&self) -> Vec<String> {
        self.out.0.lock().unwrap().lines.clone()
    }

    pub fn lines_tagged(&self, tag: &str) -> Vec<String> {
        let prefix = format!("{tag} ");
        self.lines()
            .into_iter()
            .filter(|l| l.starts_with(&prefix) || l == tag)
            .collect()
    }

    pub fn stderr(&self) -> String {
        self.err.lock().unwrap().clone()
    }

    pub fn send(&mut self, line: &str) {
        if let Some(stdin) = self.stdin.as_mut() {
            // A peer that has already exited is reported by `finish`.
            let _ = writeln!(stdin, "{line}");
            let _ = stdin.flush();
        }
    }

    /// Says QUIT, then waits for the exit (killing the peer after `timeout`).
    pub fn finish(&mut self, timeout: Duration) -> ExitStatus {
        self.send("QUIT");
        self.stdin = None;
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                break s;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                break self.child.wait().expect("wait");
            }
            thread::sleep(Duration::from_millis(20));
        };
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        self.status = Some(status);
        status
    }

    /// The peer's output for a failure message: stdout (runs of packet lines summarised)
    /// and stderr.
    pub fn report(&self) -> String {
        let lines = self.lines();
        let mut s = format!("---- {} stdout ({} lines):\n", self.label, lines.len());
        let mut skipped = 0;
        for l in &lines {
            if l.starts_with("LOSSLESS ") || l.starts_with("LOSSY ") {
                skipped += 1;
                continue;
            }
            s.push_str(&format!("  {l}\n"));
        }
        if skipped > 0 {
            s.push_str(&format!("  ({skipped} LOSSLESS/LOSSY lines)\n"));
        }
        s.push_str(&format!("---- {} stderr:\n{}", self.label, self.stderr()));
        s
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `len` bytes of deterministic pseudo-random data (xorshift64*), different per `seed`.
pub fn test_data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        v.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    v.truncate(len);
    v
}

/// A stable small number for a name (to spread things like display numbers).
pub fn small_hash(name: &str, modulo: u64) -> u64 {
    let mut h = DefaultHasher::new();
    name.hash(&mut h);
    h.finish() % modulo
}

/// A free UDP/TCP port pair base: each test gets its own fixed range so that parallel
/// tests do not collide; this checks the ports are free now.
pub fn check_ports_free(ports: &[u16]) {
    for &p in ports {
        if std::net::UdpSocket::bind(("0.0.0.0", p)).is_err() {
            panic!("UDP port {p} is in use (another test run?)");
        }
    }
}

/// Runs peer.c's `--selftest` (single-instance checks: sizes, Tox_Options through setters
/// and struct fields, tox_new's errors, the address and checksum, own info, friend list
/// errors, savedata, tox_hash, toxencryptsave, conferences, toxav, tox_events_iterate);
/// every check passes on either library.
pub fn run_selftest(prog: &CProgram, port: u16, valgrind: bool) {
    check_ports_free(&[port, port + 1]);
    let mut p = Peer::spawn(
        "selftest",
        prog,
        &[
            "--selftest".to_string(),
            "--port".to_string(),
            port.to_string(),
        ],
        valgrind,
    );
    let st = p.finish(Duration::from_secs(if valgrind { 300 } else { 60 }));
    let failed: Vec<String> = p
        .lines()
        .into_iter()
        .filter(|l| l.ends_with("FAILED"))
        .collect();
    // peer.c exits 1 when any check failed; valgrind's errors make it 99.
    let clean_exit = st.success();
    assert!(
        clean_exit
            && failed.is_empty()
            && p.wait_for("CHECK events_iterate", Duration::ZERO).is_ok(),
        "selftest of {}: exit {st}{}; failed: {failed:?}\n{}",
        prog.path.display(),
        if st.code() == Some(99) {
            " (valgrind reported errors)"
        } else {
            ""
        },
        p.report()
    );
    let checks = p.lines_tagged("CHECK").len();
    assert!(checks > 60, "only {checks} checks ran\n{}", p.report());
}

/// Runs a C program that drives several instances of one library in one process (av.c,
/// conference.c) on `ports` free UDP ports, checks it finished with `OK` on the library it
/// was built for, and returns its output without the `LIB` line: the lines that must be the
/// same on Debian's library and on ours.
pub fn run_line_by_line(prog: &CProgram, name: &str, ports: usize) -> Vec<String> {
    let ports: Vec<String> = (0..ports)
        .map(|_| rustox_testkit::net::free_udp_port().to_string())
        .collect();
    let out = prog
        .command(false)
        .args(&ports)
        .output()
        .unwrap_or_else(|e| panic!("run {name}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.lines().last() == Some("OK"),
        "{name} on {:?}'s library failed ({}):\n{stderr}\nlast lines:\n{}",
        prog.lib,
        out.status,
        stdout.lines().rev().take(15).collect::<Vec<_>>().join("\n")
    );
    let loaded = stdout
        .lines()
        .find_map(|l| l.strip_prefix("LIB "))
        .expect("a LIB line");
    prog.check_loaded(loaded);
    stdout
        .lines()
        .filter(|l| !l.starts_with("LIB "))
        .map(str::to_owned)
        .collect()
}

/// The first lines where `ours` and `theirs` part, with context, for a failure message.
pub fn first_difference(ours: &[String], theirs: &[String]) -> String {
    let at = ours
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    let from = at.saturating_sub(5);
    let show = |lines: &[String]| {
        lines
            .iter()
            .enumerate()
            .skip(from)
            .take(15)
            .map(|(i, l)| format!("{:4} {l}", i + 1))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "first difference at line {}\n--- c-toxcore:\n{}\n--- ours:\n{}",
        at + 1,
        show(theirs),
        show(ours)
    )
}
