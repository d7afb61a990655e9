//! The two mixed pairings of `--pairings` on real sockets: a c-toxcore client
//! (`tools/toxcore_file_peer.c` on Debian's libtoxcore 0.2.18) sending to `rustox recv`, and
//! `rustox send` sending to a c-toxcore client, each pair of friends found by Tox ID.
//!
//! The receiver runs in namespace B, the sender in A. The receiver's own DHT node is the
//! sender's only bootstrap node (as in the c-toxcore pair, `Discovery::Direct`): `rustox recv`
//! uses its long-term key as its DHT key, c-toxcore prints its DHT key in its ready line. The
//! sender sends a friend request to the receiver's Tox ID; both receivers accept any. So
//! everything between the two crosses the emulated link. Goodput is the receiver's, from its
//! accept to the last byte, as for the c-toxcore pair; the time to find the friend is outside
//! it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustox_auto_tests::ctoxcore::peer::pattern;
use rustox_auto_tests::ctoxcore::{
    BootstrapSpec, BuildOptions, ContentCheck, FileIdChoice, Launch, PeerBinary, PeerOptions,
    RecvOptions, RecvPeer, SendOptions, SendPeer,
};
use rustox_auto_tests::emulator::{CliSummary, Side, Testbed};
use rustox_simulator::Profile;
use sha2::{Digest, Sha256};

use crate::runs::{host_drops, link_figures, testbed, CpuMeter, LinkFigures, Setup, FIRST_PORT};

/// How long `rustox recv` may take to print its key and Tox ID.
const RECEIVER_STARTUP: Duration = Duration::from_secs(10);
/// How often a running child is checked for exit.
const POLL_CHILD: Duration = Duration::from_millis(20);
/// How long the lines of an exited child may take to reach us.
const LINES_GRACE: Duration = Duration::from_secs(2);

/// The c-toxcore peer binary when a run `needs` it (built once per bench invocation).
pub fn peer_binary_if(needs: bool) -> Result<Option<PeerBinary>, String> {
    if !needs {
        return Ok(None);
    }
    PeerBinary::build(&BuildOptions::default())
        .map(Some)
        .map_err(|e| e.to_string())
}

/// A c-toxcore peer inside the testbed's namespace on `side`, with the content pattern's
/// `seed` and the run's `timeout`; everything else as `PeerOptions::default()`.
pub fn peer_in(bed: &Testbed, side: Side, seed: u64, timeout: Duration) -> PeerOptions {
    PeerOptions {
        launch: Launch::prefixed(["ip", "netns", "exec", bed.namespace(side)]),
        seed,
        timeout,
        ..PeerOptions::default()
    }
}

/// One real run of a mixed pair.
#[derive(Debug, Clone, Default)]
pub struct RealRun {
    /// Goodput, Mbit/s of file bytes (the receiver's, else the sender's).
    pub mbit: Option<f64>,
    /// IP packets A → B per 1371-byte file chunk over the whole run.
    pub packets_per_chunk: Option<f64>,
    /// Packets the emulator dropped A → B (random loss, queue overflow).
    pub dropped: Option<(u64, u64)>,
    pub error: Option<String>,
    pub link: Option<LinkFigures>,
}

impl RealRun {
    fn failed(error: String) -> RealRun {
        RealRun {
            error: Some(error),
            ..RealRun::default()
        }
    }

    /// Fills in the link's figures.
    fn with_link(mut self, bed: Testbed, bytes: u64, cpu: &CpuMeter) -> RealRun {
        let drops = host_drops(&bed);
        match bed.finish() {
            Ok(report) => {
                let fwd = report.stats.a_to_b.link;
                self.packets_per_chunk = Some(fwd.packets_in as f64 / chunks(bytes));
                self.dropped = Some((fwd.dropped_loss, fwd.dropped_queue));
                self.link = Some(link_figures(&report, drops, cpu));
            }
            Err(e) => self.error = self.error.or(Some(e.to_string())),
        }
        self
    }
}

/// File chunks of `bytes`: MAX_FILE_DATA_SIZE = 1371 bytes each (docs/protocol.md §3.6).
pub fn chunks(bytes: u64) -> f64 {
    bytes.div_ceil(1371).max(1) as f64
}

/// A c-toxcore client sends `bytes` of its seeded pattern to `rustox recv --once`.
pub fn ctoxcore_to_rustox(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    peer: &PeerBinary,
    bytes: u64,
    timeout: Duration,
) -> RealRun {
    on_testbed(profile, seed, setup, bytes, |bed| {
        ctoxcore_to_rustox_on(bed, seed, setup, peer, bytes, timeout)
    })
}

/// One mixed run on a fresh testbed: `run` gives the goodput; the link's figures and the
/// CPU used are added either way.
fn on_testbed(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    bytes: u64,
    run: impl FnOnce(&Testbed) -> Result<f64, String>,
) -> RealRun {
    let cpu = CpuMeter::start();
    let bed = match testbed(profile, seed, setup) {
        Ok(b) => b,
        Err(e) => return RealRun::failed(e),
    };
    let run = match run(&bed) {
        Ok(mbit) => RealRun {
            mbit: Some(mbit),
            ..RealRun::default()
        },
        Err(e) => RealRun::failed(e),
    };
    run.with_link(bed, bytes, &cpu)
}

fn ctoxcore_to_rustox_on(
    bed: &Testbed,
    seed: u64,
    setup: &Setup,
    peer: &PeerBinary,
    bytes: u64,
    timeout: Duration,
) -> Result<f64, String> {
    let out = setup.work.join("pairing-received");
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let stderr_path = setup.work.join("pairing-recv.stderr");
    let stderr = std::fs::File::create(&stderr_path).map_err(|e| e.to_string())?;
    let listen = std::net::SocketAddr::from((bed.addr(Side::B), FIRST_PORT));
    let mut cmd = bed.command(Side::B, &setup.rustox.to_string_lossy());
    cmd.arg("recv")
        .args(["--listen", &listen.to_string()])
        .arg("--out")
        .arg(&out)
        .arg("--key-file")
        .arg(setup.work.join("pairing-recv.key"))
        .arg("--once")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    let mut recv = Guard(cmd.spawn().map_err(|e| format!("rustox recv: {e}"))?);
    let lines = line_reader(&mut recv.0);
    let startup = Instant::now() + RECEIVER_STARTUP;
    let (mut key, mut tox_id) = (None, None);
    while key.is_none() || tox_id.is_none() {
        let left = startup.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(left).map_err(|_| {
            format!(
                "rustox recv printed no key and Tox ID: {}",
                tail(&stderr_path)
            )
        })?;
        if let Some(k) = line.strip_prefix("public key ") {
            key = Some(k.trim().to_owned());
        }
        if let Some(id) = line.strip_prefix("tox id ") {
            tox_id = Some(id.trim().to_owned());
        }
    }
    let options = SendOptions {
        peer: PeerOptions {
            bootstrap: vec![BootstrapSpec {
                host: bed.addr(Side::B).to_string(),
                port: FIRST_PORT,
                dht_key: key.unwrap_or_default(),
            }],
            friend: tox_id,
            ..peer_in(bed, Side::A, seed, timeout)
        },
        size: bytes,
        file_id: FileIdChoice::Random,
        allow_tcp: false,
    };
    let mut sender = SendPeer::start(peer, &options).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + timeout + Duration::from_secs(10);
    let status = loop {
        match recv.0.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL_CHILD),
            _ => break None,
        }
    };
    let sent = sender.wait_summary();
    let summary = drain(&lines)
        .iter()
        .rev()
        .find_map(|l| serde_json::from_str::<CliSummary>(l).ok());
    let _ = std::fs::remove_dir_all(&out);
    let summary = match (status, summary) {
        (Some(s), Some(summary)) if s.success() => summary,
        (status, _) => {
            return Err(format!(
                "rustox recv {}: {} (c-toxcore sender: {})",
                status.map_or("timed out".to_owned(), |s| format!("exited {s}")),
                tail(&stderr_path),
                match sent {
                    Ok(s) => format!("{} bytes accepted", s.bytes),
                    Err(e) => e.to_string(),
                }
            ))
        }
    };
    let expected = hex::encode(Sha256::digest(pattern(seed, bytes as usize)));
    if summary.bytes != bytes || !summary.sha256.eq_ignore_ascii_case(&expected) {
        return Err(format!(
            "rustox recv got {} bytes with SHA-256 {}, expected {bytes} with {expected}",
            summary.bytes, summary.sha256
        ));
    }
    Ok(summary.goodput_mbit)
}

/// `rustox send` sends `file` (`bytes` long) to a c-toxcore client, which checks it against
/// the file id rustox announces (the content's SHA-256).
pub fn rustox_to_ctoxcore(
    profile: &Profile,
    seed: u64,
    setup: &Setup,
    peer: &PeerBinary,
    file: &Path,
    bytes: u64,
    timeout: Duration,
) -> RealRun {
    on_testbed(profile, seed, setup, bytes, |bed| {
        rustox_to_ctoxcore_on(bed, seed, setup, peer, file, bytes, timeout)
    })
}

fn rustox_to_ctoxcore_on(
    bed: &Testbed,
    seed: u64,
    setup: &Setup,
    peer: &PeerBinary,
    file: &Path,
    bytes: u64,
    timeout: Duration,
) -> Result<f64, String> {
    let options = RecvOptions {
        peer: peer_in(bed, Side::B, seed, timeout),
        expect_size: Some(bytes),
        check: ContentCheck::FileId,
        ..RecvOptions::default()
    };
    let mut recv = RecvPeer::start(peer, &options).map_err(|e| e.to_string())?;
    let ready = recv.ready().clone();
    let stderr_path = setup.work.join("pairing-send.stderr");
    let stderr = std::fs::File::create(&stderr_path).map_err(|e| e.to_string())?;
    let node = format!("{}:{}:{}", bed.addr(Side::B), ready.udp_port, ready.dht_id);
    let mut cmd = bed.command(Side::A, &setup.rustox.to_string_lossy());
    cmd.arg("send")
        .args(["--to", &ready.address, "--bootstrap", &node])
        .args(["--find-timeout", &format!("{:.0}", timeout.as_secs_f64())])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    let _send = Guard(cmd.spawn().map_err(|e| format!("rustox send: {e}"))?);
    let summary = recv.wait_summary().map_err(|e| {
        format!(
            "c-toxcore receiver: {e}; rustox send: {}",
            tail(&stderr_path)
        )
    })?;
    if summary.bytes != bytes || !summary.verified {
        return Err(format!(
            "c-toxcore received {} of {bytes} bytes, verified: {}",
            summary.bytes, summary.verified
        ));
    }
    summary
        .goodput_mbit
        .ok_or_else(|| "c-toxcore reported no goodput".to_owned())
}

/// A child killed when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// The child's stdout lines, read on a thread of their own.
fn line_reader(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
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

/// The lines still to come from an exited child: until its stdout closes (the reader
/// thread may not have passed on the last line when the exit is seen), [`LINES_GRACE`]
/// at most.
fn drain(lines: &mpsc::Receiver<String>) -> Vec<String> {
    let deadline = Instant::now() + LINES_GRACE;
    let mut out = Vec::new();
    while let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        out.push(line);
    }
    out
}

/// The last few non-empty lines of a child's stderr file.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(4)..].join(" | ")
}
