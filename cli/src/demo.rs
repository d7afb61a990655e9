//! `rustox demo`: the first thing to run. A bootstrap node and two nodes, Alice and Bob, each
//! with its own UDP socket on 127.0.0.1 and its own thread. Alice knows only Bob's Tox ID and
//! the bootstrap node: she sends him a friend request, the onion and the DHT find him, he
//! accepts, and a net_crypto session comes up (the time to friend-online is printed). They
//! chat a little and Alice sends Bob a freshly generated file. The demo then hashes both
//! files from disk and stops unless they match. Its second act ([`crate::demo_conference`])
//! is a conference of three, with Carol, Bob's friend and a stranger to Alice; the demo exits
//! 0 only if every line said there reached every peer.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use indicatif::ProgressBar;
use rand::rngs::OsRng;
use rand::{RngCore, SeedableRng};
use rustox_core::crypto::KeyPair;
use rustox_core::dht::DhtConfig;
use rustox_core::driver::workers::{NodeRunner, RunnerConfig};
use rustox_core::driver::Clock;
use rustox_core::node::{FileOffer, FriendNumber, Node, NodeEvent, NodeOptions, PreparedFile};
use rustox_core::transport::{ControllerKind, Timestamp, TransportStats};

use crate::controller::parse_controller;
use crate::driver::{self, App};
use crate::progress::transfer_bar;
use crate::relay_args::RelayArgs;
use crate::send::closed_error;
use crate::size::parse_size;

/// Alice's lines; the last one precedes the file.
const ALICE_SAYS: [&str; 2] = [
    "Hello Bob! Alice here, over an encrypted Tox session.",
    "I have a file for you, sending it now.",
];
/// Alice's friend request.
const ALICE_REQUEST: &str = "Hi Bob, it's Alice: add me?";
/// Bob's answers, one per line of Alice's.
const BOB_SAYS: [&str; 2] = ["Hi Alice, loud and clear.", "Go ahead, I'm ready."];

/// How long Bob stays after the file arrived, waiting for Alice to close the session (so
/// his last acknowledgements reach her).
const LINGER: Duration = Duration::from_secs(2);

/// Options of `rustox demo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Size of the generated file.
    #[arg(long, default_value = "64MiB", value_parser = parse_size)]
    size: u64,
    /// Congestion controller: bbr (default), cubic, or legacy (a model of c-toxcore 0.2.18).
    #[arg(long, default_value = "bbr", value_parser = parse_controller)]
    controller: ControllerKind,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// TCP relays for both nodes (without them, Alice and Bob use UDP only).
    #[command(flatten)]
    relays: RelayArgs,
}

/// What Alice measured.
struct AliceReport {
    /// From start to Bob online.
    online: Duration,
    bytes: u64,
    elapsed: Duration,
    stats: Option<TransportStats>,
}

/// Runs the demo.
pub fn run(args: Args) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("rustox-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let result = run_in(&args, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_in(args: &Args, dir: &Path) -> anyhow::Result<()> {
    args.relays.check().map_err(anyhow::Error::msg)?;
    let source = dir.join("alice-file.bin");
    let inbox = dir.join("bob");
    std::fs::create_dir_all(&inbox)
        .with_context(|| format!("cannot create {}", inbox.display()))?;
    println!(
        "Generating a {} file of random bytes ...",
        human_bytes(args.size)
    );
    generate(&source, args.size)?;

    let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
    // The bootstrap node: what `rustox bootstrap` runs (DHT and onion server), on threads
    // of its own; dropped (and stopped) when the demo ends.
    let boot = NodeRunner::start(KeyPair::generate(&mut OsRng), RunnerConfig::loopback(0))
        .context("cannot start the bootstrap node")?;
    let (boot_addr, boot_pk) = (boot.local_addr(), boot.public_key());
    let alice_socket = driver::bind(loopback)?;
    let bob_socket = driver::bind(loopback)?;
    let alice_keys = KeyPair::generate(&mut OsRng);
    let bob_keys = KeyPair::generate(&mut OsRng);
    println!("Bootstrap node {boot_addr}  DHT key {}", boot_pk.to_hex());

    let options = NodeOptions {
        transport: driver::transport(args.controller),
        dht: DhtConfig {
            lan_discovery: false,
            ..DhtConfig::default()
        },
        unix_time: rustox_core::driver::clock::unix_now(),
        udp_disabled: args.relays.no_udp,
        ..NodeOptions::default()
    };
    let limit = Duration::from_secs(args.timeout.max(1));
    let conference = crate::demo_conference::Setup {
        boot: (boot_addr, boot_pk),
        node: options.clone(),
        tcp_relays: args
            .relays
            .tcp_relays
            .iter()
            .map(|r| (r.addr, r.pk))
            .collect(),
        limit,
    };
    // One clock for both nodes, so their timestamps agree from creation on.
    let clock = Clock::default();
    let start = clock.now();
    let mut bob_node = Node::new(
        start,
        bob_keys,
        options.clone(),
        rustox_core::node::system_rng(),
    );
    bob_node.bootstrap(start, boot_addr, boot_pk);
    args.relays.add_relays(&mut bob_node, start)?;
    let relays = args.relays.clone();
    let bob_id = bob_node.tox_id();
    println!("Bob   {}  Tox ID {bob_id}", bob_socket.local_addr()?);
    let bob = {
        let inbox = inbox.clone();
        std::thread::Builder::new().name("bob".into()).spawn(
            move || -> anyhow::Result<PathBuf> {
                let mut app = Bob {
                    inbox,
                    bar: ProgressBar::hidden(),
                    heard: 0,
                    file: None,
                    received: None,
                    linger_until: None,
                };
                drive(bob_socket, clock, bob_node, &mut app, limit)?
            },
        )?
    };
    let alice = std::thread::Builder::new().name("alice".into()).spawn(
        move || -> anyhow::Result<AliceReport> {
            // Alice hashes her file before dialling, as `rustox send` does.
            let reader =
                File::open(&source).with_context(|| format!("cannot read {}", source.display()))?;
            let prepared = driver::prepare_file(reader)
                .with_context(|| format!("cannot read {}", source.display()))?;
            let mut node = Node::new(
                clock.now(),
                alice_keys,
                options,
                rustox_core::node::system_rng(),
            );
            println!(
                "Alice {}  sends Bob a friend request",
                alice_socket.local_addr()?
            );
            node.bootstrap(clock.now(), boot_addr, boot_pk);
            relays.add_relays(&mut node, clock.now())?;
            let friend = node.add_friend(clock.now(), &bob_id, ALICE_REQUEST.as_bytes())?;
            let mut app = Alice {
                friend,
                start,
                source: Some(prepared),
                heard: 0,
                file: None,
                online: None,
                started: None,
            };
            drive(alice_socket, clock, node, &mut app, limit)?
        },
    )?;
    let alice = alice
        .join()
        .map_err(|_| anyhow::anyhow!("Alice's thread failed"))?;
    let bob = bob
        .join()
        .map_err(|_| anyhow::anyhow!("Bob's thread failed"))?;
    let report = alice.context("Alice")?;
    let received = bob.context("Bob")?;

    let sent_hash = sha256_file(&dir.join("alice-file.bin"))?;
    let received_hash = sha256_file(&received)?;
    let secs = report.elapsed.as_secs_f64();
    let rate = report.bytes as f64 / secs.max(1e-9);
    println!();
    println!(
        "friend online    {:.2} s after start (request, onion, DHT, handshake)",
        report.online.as_secs_f64()
    );
    println!(
        "file             {} in {:.2} s",
        human_bytes(report.bytes),
        secs
    );
    println!(
        "goodput          {:.0} Mbit/s ({:.1} MiB/s)",
        rate * 8.0 / 1e6,
        rate / 1048576.0
    );
    let stats = report.stats.unwrap_or_default();
    match stats.smoothed_rtt {
        Some(rtt) => println!("RTT (smoothed)   {:.3} ms", rtt.as_secs_f64() * 1e3),
        None => println!("RTT (smoothed)   no sample"),
    }
    println!(
        "resent packets   {} of {} sent",
        stats.packets_resent, stats.packets_sent
    );
    println!("SHA-256 sent     {}", hex::encode(sent_hash));
    println!("SHA-256 received {}", hex::encode(received_hash));
    if sent_hash != received_hash {
        bail!("the received file differs from the one sent");
    }
    println!("SHA-256 match: the file arrived intact.");
    crate::demo_conference::run(conference)?;
    // The bootstrap node served both acts.
    drop(boot);
    Ok(())
}

/// One node's thread: a runtime, the socket, the driver, a deadline.
fn drive<A: App>(
    socket: std::net::UdpSocket,
    clock: Clock,
    mut node: Node,
    app: &mut A,
    limit: Duration,
) -> anyhow::Result<A::Output> {
    let runtime = driver::runtime()?;
    runtime.block_on(async {
        let socket = tokio::net::UdpSocket::from_std(socket)?;
        match tokio::time::timeout(limit, driver::run(&mut node, &socket, clock, app)).await {
            Ok(result) => Ok(result?),
            Err(_) => bail!("the demo did not finish within {} s", limit.as_secs()),
        }
    })
}

/// Alice: dials, chats, sends the file, measures.
struct Alice {
    friend: FriendNumber,
    start: Timestamp,
    source: Option<PreparedFile>,
    heard: usize,
    file: Option<u32>,
    online: Option<Duration>,
    started: Option<Instant>,
}

impl Alice {
    fn say(&self, node: &mut Node, now: Timestamp, line: &str) -> anyhow::Result<()> {
        node.send_message(now, self.friend, line.as_bytes())?;
        Ok(())
    }

    fn offer(&mut self, node: &mut Node, now: Timestamp) -> anyhow::Result<()> {
        let Some(file) = self.source.take() else {
            return Ok(());
        };
        self.started = Some(Instant::now());
        self.file = Some(node.send_file(now, self.friend, file, b"alice-file.bin")?);
        Ok(())
    }

    fn step(
        &mut self,
        node: &mut Node,
        now: Timestamp,
        event: NodeEvent,
    ) -> anyhow::Result<Option<AliceReport>> {
        match event {
            NodeEvent::FriendConnection {
                friend,
                online: true,
                ..
            } if friend == self.friend => {
                let online = now - self.start;
                println!(
                    "Bob is online for Alice after {:.2} s",
                    online.as_secs_f64()
                );
                self.online = Some(online);
                self.say(node, now, ALICE_SAYS[0])?;
            }
            NodeEvent::Message { friend, text, .. } if friend == self.friend => {
                println!("bob   → alice: {}", String::from_utf8_lossy(&text));
                self.heard += 1;
                if self.heard < ALICE_SAYS.len() {
                    self.say(node, now, ALICE_SAYS[self.heard])?;
                } else {
                    self.offer(node, now)?;
                }
            }
            NodeEvent::FileSent { friend, bytes, .. } if friend == self.friend => {
                let report = AliceReport {
                    online: self.online.unwrap_or_default(),
                    bytes,
                    elapsed: self.started.map_or(Duration::ZERO, |s| s.elapsed()),
                    stats: node.session_stats(self.friend),
                };
                // The demo is over: OFFLINE, then the session is killed.
                node.delete_friend(now, self.friend)?;
                return Ok(Some(report));
            }
            NodeEvent::FileFailed { friend, reason, .. } if friend == self.friend => {
                bail!("the transfer failed: {reason}")
            }
            // Before Bob is online a failed session is retried by the friend connection.
            NodeEvent::SessionClosed { friend, reason }
                if friend == self.friend && self.online.is_some() =>
            {
                return Err(closed_error("Bob", reason, true));
            }
            _ => {}
        }
        Ok(None)
    }
}

impl App for Alice {
    type Output = anyhow::Result<AliceReport>;

    fn on_event(&mut self, node: &mut Node, now: Timestamp, e: NodeEvent) -> Option<Self::Output> {
        self.step(node, now, e).transpose()
    }
}

/// Bob: answers, accepts the file into his inbox, shows progress.
struct Bob {
    inbox: PathBuf,
    bar: ProgressBar,
    heard: usize,
    file: Option<(FriendNumber, u32, PathBuf)>,
    received: Option<PathBuf>,
    linger_until: Option<Timestamp>,
}

impl Bob {
    fn step(
        &mut self,
        node: &mut Node,
        now: Timestamp,
        event: NodeEvent,
    ) -> anyhow::Result<Option<PathBuf>> {
        match event {
            NodeEvent::FriendRequest { pk, message } => {
                println!(
                    "Bob gets a friend request: {:?}; he accepts",
                    String::from_utf8_lossy(&message)
                );
                node.add_friend_norequest(now, pk)?;
            }
            NodeEvent::Message { friend, text, .. } => {
                println!("alice → bob  : {}", String::from_utf8_lossy(&text));
                if let Some(answer) = BOB_SAYS.get(self.heard) {
                    node.send_message(now, friend, answer.as_bytes())?;
                }
                self.heard += 1;
            }
            NodeEvent::FileOffered(FileOffer {
                friend, file, size, ..
            }) => {
                let path = self.inbox.join("received.bin");
                let (sink, digest) =
                    driver::hashing_sink(BufWriter::with_capacity(1 << 20, File::create(&path)?))?;
                node.accept_file(now, friend, file, sink, Some(digest))?;
                self.bar = transfer_bar(size, "alice → bob");
                let line = format!("bob accepts a {} file", human_bytes(size));
                if self.bar.is_hidden() {
                    println!("{line}");
                } else {
                    self.bar.println(line);
                }
                self.file = Some((friend, file, path));
            }
            NodeEvent::FileReceived {
                file, verification, ..
            } => {
                self.bar.finish();
                if !verification.is_verified() {
                    bail!("the file arrived but was not verified");
                }
                if let Some((_, f, path)) = self.file.take() {
                    if f == file {
                        self.received = Some(path);
                        self.linger_until = Some(now + LINGER);
                    }
                }
            }
            NodeEvent::FileFailed { reason, .. } => {
                self.bar.abandon();
                bail!("receiving failed: {reason}")
            }
            NodeEvent::FriendConnection { online: false, .. } => {
                return match self.received.take() {
                    Some(path) => Ok(Some(path)),
                    None => bail!("Alice closed the session before the file arrived"),
                };
            }
            _ => {}
        }
        Ok(None)
    }
}

impl App for Bob {
    type Output = anyhow::Result<PathBuf>;

    fn on_event(&mut self, node: &mut Node, now: Timestamp, e: NodeEvent) -> Option<Self::Output> {
        self.step(node, now, e).transpose()
    }

    fn after_io(&mut self, node: &mut Node, _now: Timestamp) {
        if let Some((id, file, _)) = &self.file {
            if let Some(done) = node.file_progress(*id, *file) {
                self.bar.set_position(done);
            }
        }
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.linger_until
    }

    fn on_timeout(&mut self, _node: &mut Node, _now: Timestamp) -> Option<Self::Output> {
        self.received.take().map(Ok)
    }
}

/// Writes `size` random bytes (a fast seeded generator: the content only has to be
/// unpredictable enough that a misplaced chunk changes the hash).
pub fn generate(path: &Path, size: u64) -> anyhow::Result<()> {
    let mut rng = rand::rngs::StdRng::from_rng(OsRng).context("no OS randomness")?;
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut block = vec![0u8; 1 << 16];
    let mut left = size;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        rng.fill_bytes(&mut block[..n]);
        out.write_all(&block[..n])?;
        left -= n as u64;
    }
    out.flush()?;
    Ok(())
}

/// SHA-256 of a file on disk (the sender's hashing pass, reused).
pub fn sha256_file(path: &Path) -> anyhow::Result<[u8; 32]> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let (_, digest) = crate::driver::sha256_of_file(&file)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(digest)
}

/// "64.0 MiB".
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} GiB", b / (1024.0 * 1024.0 * 1024.0))
    } else if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{bytes} B")
    }
}
