//! NGC group discovery with c-toxcore 0.2.20 peers (`tools/toxgroup.c`): a founder creates
//! a public group, a joiner joins it by chat id, and the time until the joiner hears the
//! founder's message says how fast the DHT nodes between them let the group be found.
//!
//! c-toxcore 0.2.20 is Debian trixie's libtoxcore2, which `tools/fetch_toxcore_0_2_20.sh`
//! fetches with apt into a directory of its own (never installed over bookworm's 0.2.18);
//! the peer is compiled against that copy's header and run with `LD_LIBRARY_PATH` on it.
//! [`GroupTool::prepare`] does both once per source version.
//!
//! [`DhtNet`] starts the DHT the peers use: `n` nodes, rustox's (in-process bootstrap nodes),
//! tox-bootstrapd 0.2.18's, or alternately both, each later node bootstrapping from every
//! earlier one, so that they form one DHT. The peers know only the first node.

use std::net::{SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rustox_net_crypto::crypto::PublicKey;
use rustox_testkit::c::Cc;
use rustox_testkit::ci::under_ci;
use sha2::{Digest, Sha256};

use super::bootstrap::{BootstrapNode, BootstrapOptions};
use super::child::LineChild;
use super::error::CToxcoreError;

/// The peer's source.
const SOURCE: &str = include_str!("../../tools/toxgroup.c");
/// The fetch script.
const FETCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/fetch_toxcore_0_2_20.sh");

/// The 0.2.20 library and the peer built on it.
#[derive(Debug, Clone)]
pub struct GroupTool {
    binary: PathBuf,
    lib_dir: PathBuf,
}

/// `target/toxcore-0.2.20` in this workspace.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/toxcore-0.2.20")
}

impl GroupTool {
    /// Fetches c-toxcore 0.2.20 into `dir` (if it is not there) and builds the peer (if
    /// this source was not built there before).
    pub fn prepare(dir: &Path) -> Result<GroupTool, CToxcoreError> {
        let out = Command::new("bash")
            .arg(FETCH)
            .arg(dir)
            .output()
            .map_err(|source| CToxcoreError::ToolMissing {
                program: "bash".into(),
                source,
            })?;
        if !out.status.success() {
            return Err(CToxcoreError::LibraryMissing {
                detail: format!(
                    "fetching c-toxcore 0.2.20 failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            });
        }
        let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let lib_dir = root.join("usr/lib/x86_64-linux-gnu");
        let include = dir.join("include");
        let tag: String = Sha256::digest(SOURCE.as_bytes())[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let binary = dir.join(format!("toxgroup-{tag}"));
        if !binary.is_file() {
            let source = dir.join(format!("toxgroup-{tag}.c"));
            std::fs::write(&source, SOURCE)
                .map_err(|e| CToxcoreError::io(format!("writing {}", source.display()), e))?;
            Cc::new("cc")
                .args(["-O1", "-Wall", "-Wextra", "-Werror"])
                .arg(&source)
                .arg(format!("-I{}", include.display()))
                .arg(format!("-L{}", lib_dir.display()))
                .arg("-l:libtoxcore.so.2")
                .arg(format!("-Wl,-rpath-link,{}", lib_dir.display()))
                .pin_library_dir(&lib_dir)
                .build(&binary)
                .map_err(|e| CToxcoreError::from_build(e, &source))?;
        }
        Ok(GroupTool { binary, lib_dir })
    }

    fn command(&self, port: u16, seconds: u64, role: &str, first: &NodeRef) -> Command {
        let mut c = Command::new(&self.binary);
        c.env("LD_LIBRARY_PATH", &self.lib_dir)
            .env("TOXGROUP_IGNORE_STDIN", "1")
            .arg(port.to_string())
            .arg(seconds.to_string())
            .arg(role)
            .arg("--bootstrap")
            .arg(first.addr.ip().to_string())
            .arg(first.addr.port().to_string())
            .arg(first.pk.to_hex());
        c
    }
}

/// The tool, or `None` (with a notice) when it cannot be had and `CI` is not set. Under CI
/// that is a failure: the group interop test must run there.
pub fn group_tool_or_skip() -> Option<GroupTool> {
    match GroupTool::prepare(&default_dir()) {
        Ok(t) => Some(t),
        Err(e) if !under_ci() => {
            eprintln!("NOTICE: {e}; c-toxcore 0.2.20 group test skipped");
            None
        }
        Err(e) => panic!("cannot prepare the c-toxcore 0.2.20 group peer: {e}"),
    }
}

/// A DHT node: where it listens and its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeRef {
    /// UDP address.
    pub addr: SocketAddrV4,
    /// DHT key.
    pub pk: PublicKey,
}

/// Which implementation runs the DHT's nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// rustox bootstrap nodes, in process.
    Rustox,
    /// tox-bootstrapd 0.2.18.
    ToxBootstrapd,
    /// Alternately rustox and tox-bootstrapd, the first rustox.
    Mixed,
}

/// A node kept running; each stops when dropped.
enum Running {
    Rustox(rustox_core::driver::workers::NodeRunner),
    Bootstrapd(#[allow(dead_code)] BootstrapNode),
}

/// A running DHT of several nodes; stopped when dropped.
pub struct DhtNet {
    nodes: Vec<(NodeRef, Running)>,
}

impl DhtNet {
    /// `n` nodes of `kind` on 127.0.0.1, UDP ports `base..base + n`.
    pub fn start(kind: NodeKind, n: usize, base: u16) -> Result<DhtNet, CToxcoreError> {
        let mut nodes: Vec<(NodeRef, Running)> = Vec::with_capacity(n);
        for i in 0..n {
            let port = base + i as u16;
            let rustox = match kind {
                NodeKind::Rustox => true,
                NodeKind::ToxBootstrapd => false,
                NodeKind::Mixed => i % 2 == 0,
            };
            let earlier: Vec<NodeRef> = nodes.iter().map(|(r, _)| *r).collect();
            let (r, running) = if rustox {
                let runner = crate::live::rustox_bootstrap(port)
                    .map_err(|e| CToxcoreError::io(format!("rustox node on port {port}"), e))?;
                for e in &earlier {
                    runner.bootstrap(SocketAddr::V4(e.addr), e.pk);
                }
                let r = NodeRef {
                    addr: SocketAddrV4::new([127, 0, 0, 1].into(), port),
                    pk: runner.public_key(),
                };
                (r, Running::Rustox(runner))
            } else {
                let node = BootstrapNode::start(&BootstrapOptions {
                    port,
                    bootstrap_nodes: earlier.iter().map(|e| (e.addr, e.pk)).collect(),
                    ..BootstrapOptions::default()
                })?;
                let pk = PublicKey::from_hex(node.dht_key()).ok_or_else(|| {
                    CToxcoreError::UnexpectedOutput {
                        role: "tox-bootstrapd".into(),
                        reason: "not a DHT key".into(),
                        line: node.dht_key().to_string(),
                    }
                })?;
                let r = NodeRef {
                    addr: SocketAddrV4::new([127, 0, 0, 1].into(), port),
                    pk,
                };
                (r, Running::Bootstrapd(node))
            };
            nodes.push((r, running));
        }
        Ok(DhtNet { nodes })
    }

    /// The first node: the only one the peers are told of.
    pub fn first(&self) -> NodeRef {
        self.nodes[0].0
    }

    /// Every node.
    pub fn nodes(&self) -> Vec<NodeRef> {
        self.nodes.iter().map(|(r, _)| *r).collect()
    }

    /// Onion server counters of the rustox nodes, summed: (group announces stored, sent).
    pub fn rustox_group_announces(&self) -> (u64, u64) {
        self.rustox_onion_stats().iter().fold((0, 0), |(a, b), s| {
            (a + s.group_announces_stored, b + s.group_announces_sent)
        })
    }

    /// Each rustox node's onion server counters, in node order.
    pub fn rustox_onion_stats(&self) -> Vec<rustox_core::onion::server::OnionStats> {
        self.nodes
            .iter()
            .filter_map(|(_, n)| match n {
                Running::Rustox(r) => Some(r.stats().onion),
                Running::Bootstrapd(_) => None,
            })
            .collect()
    }
}

/// What one discovery run measured, seconds from the joiner's start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupTimes {
    /// The joiner is in the group (self join).
    pub joined: Option<f64>,
    /// The joiner heard the founder's message.
    pub message: f64,
}

/// Starts a founder, then a joiner of its public group, both knowing only `first`, on UDP
/// ports `ports.0` and `ports.1`; waits up to `limit` for the joiner to hear the founder.
pub fn run_discovery(
    tool: &GroupTool,
    first: &NodeRef,
    ports: (u16, u16),
    limit: Duration,
) -> Result<GroupTimes, CToxcoreError> {
    let seconds = limit.as_secs() + 5;
    let mut founder = LineChild::spawn(
        tool.command(ports.0, seconds, "founder", first),
        "founder",
        false,
        |source| CToxcoreError::ToolMissing {
            program: "toxgroup".into(),
            source,
        },
    )?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let chat = loop {
        let line = founder.next_line("the chat id", deadline)?;
        if let Some(hex) = line.strip_prefix("CHAT ") {
            break hex.to_string();
        }
    };
    let mut cmd = tool.command(ports.1, seconds, "joiner", first);
    cmd.arg("--chat-id").arg(&chat);
    let mut joiner = LineChild::spawn(cmd, "joiner", false, |source| CToxcoreError::ToolMissing {
        program: "toxgroup".into(),
        source,
    })?;
    let deadline = Instant::now() + limit;
    let mut joined = None;
    loop {
        let line = joiner.next_line("the founder's group message", deadline)?;
        let mut words = line.split_whitespace();
        match (
            words.next(),
            words.next().and_then(|t| t.parse::<f64>().ok()),
        ) {
            (Some("JOINED"), Some(t)) => joined = Some(t),
            (Some("MESSAGE"), Some(t)) => {
                return Ok(GroupTimes { joined, message: t });
            }
            _ => {}
        }
    }
}
