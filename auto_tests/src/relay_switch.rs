//! Two `rustox` CLI nodes whose UDP to each other is blocked, a `rustox bootstrap
//! --tcp-ports` relay both reach over TCP, and the moment UDP comes back.
//!
//! Three network namespaces: A (the sender, 10.77.1.2), B (the receiver, 10.77.2.2) and R,
//! the router between them (10.77.1.1, 10.77.2.1, forwarding on), where the relay and two
//! more DHT nodes run on an address of R's own outside both subnets ([`SERVICE_IP`], so R's
//! answers to B are not A's traffic to B). UDP between A and B is blocked in R by policy routing
//! (`ip rule ... ipproto udp blackhole`, both ways): no iptables, nft or tc modules needed,
//! and UDP to R (the DHT, the onion) still works, so both nodes learn each other's UDP
//! address and their sessions keep probing it (docs/protocol.md §2.9).
//!
//! [`run`] sends one file through the relay while UDP is blocked, then a second, larger one
//! during which the rules are deleted; the receiver prints every move of the session's
//! path (`cli/src/recv.rs`), and the time from the rules' deletion to its "now over UDP"
//! line is the switch time. Both files are compared byte for byte with their sources.
//!
//! Needs root and iproute2; [`check_prerequisites`] says what is missing.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::{RngCore, SeedableRng};

use crate::emulator::{veth_into, NetNs, NAMESPACE_PREFIX};

/// Where the relay and the DHT nodes listen in R (on its loopback device; A and B reach it
/// through their default routes).
const SERVICE_IP: &str = "10.77.3.1";
/// The relay's and DHT nodes' UDP ports in R; the relay's TCP port is `DHT_PORT + 1`.
const DHT_PORT: u16 = 33445;
/// Where `rustox recv` listens in B.
const RECV_ADDR: &str = "10.77.2.2:33500";
/// How long a node may take to find its friend through the onion over a relay.
const FIND_LIMIT: Duration = Duration::from_secs(90);
/// How long the session may take to move to UDP once it is unblocked. A session probes
/// UDP only to an address the node knows for the friend, and the node learns it when its
/// DHT hears from the friend's DHT node; while UDP was blocked that node never answered, and
/// it is asked again on the DHT's timers (`PING_INTERVAL` 60 s, a get-nodes per friend every
/// `GET_NODE_INTERVAL` 20 s). Then the 4 s UDP probes (docs/protocol.md §2.9) move the session.
const SWITCH_LIMIT: Duration = Duration::from_secs(150);
/// How long the second transfer should last through the relay alone, so UDP comes back
/// while it runs and the session has time to move.
const SECOND_FILE_SECONDS: f64 = 200.0;
/// R's links toward A and B run at this rate (tc tbf), so a file lasts long enough on
/// loopback-fast veths for UDP to come back during it; both paths share the limit.
const LINK_RATE: &str = "30mbit";

/// Why the scenario could not run or did not do what it should.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// A prerequisite (root, iproute2, the rustox binary) is missing.
    #[error("missing prerequisite: {0}")]
    Missing(String),
    /// Building the namespaces or the rules failed.
    #[error("network setup: {0}")]
    Setup(String),
    /// A process failed or printed something unexpected.
    #[error("{0}")]
    Process(String),
    /// Something did not happen in time.
    #[error("timed out: {0}")]
    Timeout(String),
    /// A file arrived different from its source.
    #[error("{0} arrived different from its source")]
    Corrupt(PathBuf),
}

/// What [`run`] measured.
#[derive(Debug, Clone)]
pub struct SwitchReport {
    /// First file, through the relay only: bytes and the sender's goodput, Mbit/s.
    pub relay_file: (u64, f64),
    /// Second file: bytes, and the sender's goodput over the whole transfer.
    pub switch_file: (u64, f64),
    /// From the UDP rules' deletion to the receiver reporting the session over UDP.
    pub switch_time: Duration,
    /// The receiver's lines about paths, in order.
    pub path_lines: Vec<String>,
}

/// Root and `ip` (with `ip rule ... ipproto`).
pub fn check_prerequisites() -> Result<(), SwitchError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(SwitchError::Missing("root (network namespaces)".into()));
    }
    Command::new("ip")
        .arg("-V")
        .output()
        .map_err(|e| SwitchError::Missing(format!("iproute2's `ip`: {e}")))?;
    Ok(())
}

/// The three namespaces, removed when dropped.
struct Net {
    a: NetNs,
    b: NetNs,
    r: NetNs,
}

fn ip(ns: &NetNs, args: &[&str]) -> Result<(), SwitchError> {
    ns.ip(args)
        .map(|_| ())
        .map_err(|e| SwitchError::Setup(format!("ip -n {} {}: {e}", ns.name(), args.join(" "))))
}

fn build_net(tag: &str) -> Result<Net, SwitchError> {
    let name = |side: &str| format!("{NAMESPACE_PREFIX}{}-{tag}-{side}", std::process::id());
    let make = |side: &str| {
        NetNs::create(&name(side)).map_err(|e| SwitchError::Setup(format!("netns: {e}")))
    };
    let net = Net {
        a: make("a")?,
        b: make("b")?,
        r: make("r")?,
    };
    ip(&net.r, &veth_into("ra", "ea", &net.a))?;
    ip(&net.r, &veth_into("rb", "eb", &net.b))?;
    for (ns, dev, addr) in [
        (&net.r, "ra", "10.77.1.1/24"),
        (&net.r, "rb", "10.77.2.1/24"),
        (&net.a, "ea", "10.77.1.2/24"),
        (&net.b, "eb", "10.77.2.2/24"),
    ] {
        ip(ns, &["addr", "add", addr, "dev", dev])?;
        ip(ns, &["link", "set", dev, "up"])?;
        ip(ns, &["link", "set", "lo", "up"])?;
    }
    ip(
        &net.r,
        &["addr", "add", &format!("{SERVICE_IP}/32"), "dev", "lo"],
    )?;
    ip(&net.a, &["route", "add", "default", "via", "10.77.1.1"])?;
    ip(&net.b, &["route", "add", "default", "via", "10.77.2.1"])?;
    for dev in ["ra", "rb"] {
        let status = net
            .r
            .command("tc")
            .args(["qdisc", "add", "dev", dev, "root", "tbf", "rate", LINK_RATE])
            .args(["burst", "256kb", "latency", "50ms"])
            .status()
            .map_err(|e| SwitchError::Setup(format!("tc: {e}")))?;
        if !status.success() {
            return Err(SwitchError::Setup(format!(
                "tc qdisc add dev {dev} tbf failed"
            )));
        }
    }
    let status = net
        .r
        .command("sysctl")
        .args(["-qw", "net.ipv4.ip_forward=1"])
        .status()
        .map_err(|e| SwitchError::Setup(format!("sysctl: {e}")))?;
    if !status.success() {
        return Err(SwitchError::Setup(
            "sysctl net.ipv4.ip_forward=1 failed".into(),
        ));
    }
    Ok(net)
}

/// The two rules that drop UDP between A and B in R (`add` or `del`).
fn udp_rules(net: &Net, op: &str) -> Result<(), SwitchError> {
    for (from, to) in [
        ("10.77.1.0/24", "10.77.2.0/24"),
        ("10.77.2.0/24", "10.77.1.0/24"),
    ] {
        ip(
            &net.r,
            &[
                "rule",
                op,
                "pref",
                "100",
                "from",
                from,
                "to",
                to,
                "ipproto",
                "udp",
                "blackhole",
            ],
        )?;
    }
    Ok(())
}

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Lines a child printed, with when they were read.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<(Instant, String)>>>);

impl Lines {
    fn follow(&self, from: impl Read + Send + 'static) {
        let lines = self.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(from).lines().map_while(Result::ok) {
                // indicatif may put several updates on one line with carriage returns.
                for part in line.split('\r') {
                    if !part.trim().is_empty() {
                        lines
                            .0
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push((Instant::now(), part.to_owned()));
                    }
                }
            }
        });
    }

    fn all(&self) -> Vec<(Instant, String)> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn first(&self, what: impl Fn(&str) -> bool) -> Option<(Instant, String)> {
        self.all().into_iter().find(|(_, l)| what(l))
    }

    fn count(&self, what: impl Fn(&str) -> bool) -> usize {
        self.all().iter().filter(|(_, l)| what(l)).count()
    }

    fn wait(&self, limit: Duration, what: impl Fn(&str) -> bool) -> Option<(Instant, String)> {
        let end = Instant::now() + limit;
        loop {
            if let Some(found) = self.first(&what) {
                return Some(found);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn tail(&self) -> String {
        let all = self.all();
        let from = all.len().saturating_sub(12);
        all.get(from..)
            .unwrap_or_default()
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn spawn(ns: &NetNs, rustox: &Path, args: &[String]) -> Result<(Proc, Lines, Lines), SwitchError> {
    let mut child = ns
        .command(&rustox.to_string_lossy())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| SwitchError::Process(format!("start rustox {}: {e}", args.join(" "))))?;
    let (out, err) = (Lines::default(), Lines::default());
    if let Some(s) = child.stdout.take() {
        out.follow(s);
    }
    if let Some(s) = child.stderr.take() {
        err.follow(s);
    }
    Ok((Proc(child), out, err))
}

/// A DHT node in R (the first with the relay); returns it and its key.
fn bootstrap_node(
    net: &Net,
    rustox: &Path,
    dir: &Path,
    port: u16,
    relay: bool,
    join: Option<&str>,
) -> Result<(Proc, String), SwitchError> {
    let mut args = vec![
        "bootstrap".to_owned(),
        "--bind".into(),
        SERVICE_IP.into(),
        "--port".into(),
        port.to_string(),
        "--keys".into(),
        dir.join(format!("node-{port}.keys"))
            .to_string_lossy()
            .into(),
    ];
    if relay {
        args.extend(["--tcp-ports".into(), (port + 1).to_string()]);
    }
    if let Some(node) = join {
        args.extend(["--node".into(), node.to_owned()]);
    }
    let (proc, out, err) = spawn(&net.r, rustox, &args)?;
    let (_, key) = out
        .wait(Duration::from_secs(10), |l| l.len() == 64)
        .ok_or_else(|| SwitchError::Process(format!("bootstrap node {port}: {}", err.tail())))?;
    Ok((proc, key))
}

fn random_file(path: &Path, size: u64, seed: u64) -> Result<(), SwitchError> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(path).map_err(|e| SwitchError::Setup(format!("{e}")))?,
    );
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        rng.fill_bytes(&mut chunk);
        let n = left.min(chunk.len() as u64) as usize;
        std::io::Write::write_all(&mut out, chunk.get(..n).unwrap_or_default())
            .map_err(|e| SwitchError::Setup(format!("{e}")))?;
        left -= n as u64;
    }
    std::io::Write::flush(&mut out).map_err(|e| SwitchError::Setup(format!("{e}")))
}

/// Whether two files hold the same bytes (read in chunks: the second file is large).
fn same_bytes(a: &Path, b: &Path) -> bool {
    let digest = |p: &Path| -> Option<Vec<u8>> {
        use sha2::Digest;
        let mut f = std::fs::File::open(p).ok()?;
        let mut h = sha2::Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = f.read(&mut buf).ok()?;
            if n == 0 {
                return Some(h.finalize().to_vec());
            }
            h.update(buf.get(..n)?);
        }
    };
    matches!((digest(a), digest(b)), (Some(x), Some(y)) if x == y)
}

/// The sender's goodput from its JSON summary line.
fn goodput(lines: &Lines) -> f64 {
    lines
        .first(|l| l.contains("goodput_mbit"))
        .and_then(|(_, l)| serde_json::from_str::<serde_json::Value>(&l).ok())
        .and_then(|v| v.get("goodput_mbit")?.as_f64())
        .unwrap_or(0.0)
}

/// Starts `rustox send` from A to the receiver's Tox ID.
fn send(
    net: &Net,
    rustox: &Path,
    network: &[String],
    to: &str,
    file: &Path,
) -> Result<(Proc, Lines, Lines), SwitchError> {
    let mut args = vec!["send".to_owned(), "--to".into(), to.to_owned()];
    args.extend(network.iter().cloned());
    args.push(file.to_string_lossy().into());
    spawn(&net.a, rustox, &args)
}

fn wait_exit(proc: &mut Proc, limit: Duration, what: &str, err: &Lines) -> Result<(), SwitchError> {
    let end = Instant::now() + limit;
    loop {
        match proc.0.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                return Err(SwitchError::Process(format!(
                    "{what} exited with {status}:\n{}",
                    err.tail()
                )))
            }
            Ok(None) if Instant::now() >= end => {
                return Err(SwitchError::Timeout(format!("{what}:\n{}", err.tail())))
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(SwitchError::Process(format!("{what}: {e}"))),
        }
    }
}

/// Runs the scenario with `rustox` in a scratch directory `dir`; `tag` keeps namespace
/// names apart between runs in one process.
pub fn run(rustox: &Path, dir: &Path, tag: &str) -> Result<SwitchReport, SwitchError> {
    check_prerequisites()?;
    if !rustox.is_file() {
        return Err(SwitchError::Missing(format!("{}", rustox.display())));
    }
    std::fs::create_dir_all(dir.join("in")).map_err(|e| SwitchError::Setup(format!("{e}")))?;
    let net = build_net(tag)?;
    udp_rules(&net, "add")?;
    let (_relay, k1) = bootstrap_node(&net, rustox, dir, DHT_PORT, true, None)?;
    let first = format!("{SERVICE_IP}:{DHT_PORT}:{k1}");
    let (_n2, k2) = bootstrap_node(&net, rustox, dir, DHT_PORT + 2, false, Some(&first))?;
    let (_n3, k3) = bootstrap_node(&net, rustox, dir, DHT_PORT + 3, false, Some(&first))?;
    let network: Vec<String> = [
        "--bootstrap".to_owned(),
        first.clone(),
        "--bootstrap".into(),
        format!("{SERVICE_IP}:{}:{k2}", DHT_PORT + 2),
        "--bootstrap".into(),
        format!("{SERVICE_IP}:{}:{k3}", DHT_PORT + 3),
        "--tcp-relay".into(),
        format!("{SERVICE_IP}:{}:{k1}", DHT_PORT + 1),
    ]
    .into();
    let mut recv_args: Vec<String> = [
        "recv",
        "--listen",
        RECV_ADDR,
        "--out",
        &dir.join("in").to_string_lossy(),
        "--key-file",
        &dir.join("recv.key").to_string_lossy(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    recv_args.extend(network.iter().cloned());
    let (_recv, recv_out, recv_err) = spawn(&net.b, rustox, &recv_args)?;
    let (_, id_line) = recv_out
        .wait(Duration::from_secs(10), |l| l.starts_with("tox id "))
        .ok_or_else(|| SwitchError::Process(format!("rustox recv: {}", recv_err.tail())))?;
    let id = id_line.trim_start_matches("tox id ").trim().to_owned();
    let is_udp =
        |l: &str| l.contains("rustox recv:") && l.contains(" over UDP") && !l.contains("trace");

    // 1. Through the relay only.
    let first_size = 8u64 << 20;
    let first_file = dir.join("first.bin");
    random_file(&first_file, first_size, 1)?;
    let (mut s1, s1_out, s1_err) = send(&net, rustox, &network, &id, &first_file)?;
    wait_exit(
        &mut s1,
        FIND_LIMIT + Duration::from_secs(60),
        "the first rustox send",
        &s1_err,
    )?;
    recv_err
        .wait(Duration::from_secs(10), |l| {
            l.contains("wrote") && l.contains("first.bin")
        })
        .ok_or_else(|| SwitchError::Timeout(format!("first file at recv:\n{}", recv_err.tail())))?;
    if !same_bytes(&first_file, &dir.join("in").join("first.bin")) {
        return Err(SwitchError::Corrupt(first_file));
    }
    if recv_err
        .first(|l| l.contains("through TCP relay"))
        .is_none()
        || recv_err.first(is_udp).is_some()
    {
        return Err(SwitchError::Process(format!(
            "the first file did not go through the relay only:\n{}",
            recv_err.tail()
        )));
    }
    let relay_mbit = goodput(&s1_out);

    // 2. A file long enough to be running when UDP comes back.
    let second_size =
        ((relay_mbit.max(1.0) * 1e6 / 8.0 * SECOND_FILE_SECONDS) as u64).clamp(32 << 20, 1 << 30);
    let second_file = dir.join("second.bin");
    random_file(&second_file, second_size, 2)?;
    let (mut s2, s2_out, s2_err) = send(&net, rustox, &network, &id, &second_file)?;
    recv_err
        .wait(FIND_LIMIT, |l| {
            l.contains("receiving") && l.contains("second.bin")
        })
        .ok_or_else(|| SwitchError::Timeout(format!("second offer:\n{}", recv_err.tail())))?;
    std::thread::sleep(Duration::from_secs(2));
    let udp_lines_before = recv_err.count(is_udp);
    let unblocked = Instant::now();
    udp_rules(&net, "del")?;
    let switched = loop {
        let found = recv_err
            .all()
            .into_iter()
            .filter(|(_, l)| is_udp(l))
            .nth(udp_lines_before);
        if let Some((at, _)) = found {
            break at;
        }
        if unblocked.elapsed() > SWITCH_LIMIT {
            return Err(SwitchError::Timeout(format!(
                "the session never moved to UDP within {SWITCH_LIMIT:?}:\n{}",
                recv_err.tail()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let switch_time = switched.saturating_duration_since(unblocked);
    wait_exit(
        &mut s2,
        Duration::from_secs(300),
        "the second rustox send",
        &s2_err,
    )?;
    recv_err
        .wait(Duration::from_secs(10), |l| {
            l.contains("wrote") && l.contains("second.bin")
        })
        .ok_or_else(|| {
            SwitchError::Timeout(format!("second file at recv:\n{}", recv_err.tail()))
        })?;
    if !same_bytes(&second_file, &dir.join("in").join("second.bin")) {
        return Err(SwitchError::Corrupt(second_file));
    }
    let path_lines = recv_err
        .all()
        .into_iter()
        .map(|(_, l)| l)
        .filter(|l| l.contains("through TCP relay") || is_udp(l))
        .collect();
    Ok(SwitchReport {
        relay_file: (first_size, relay_mbit),
        switch_file: (second_size, goodput(&s2_out)),
        switch_time,
        path_lines,
    })
}
