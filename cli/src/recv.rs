//! `rustox recv`: listens on one UDP address, accepts sessions from anyone who knows its
//! public key, and writes every offered file into the output directory. Each file is
//! kept and its SHA-256 printed, with whether that verified it: a rustox sender's file id
//! is the content's SHA-256, a c-toxcore client's is random (an opaque id to tox.h), so a
//! file is verified when the two are equal and otherwise kept unverified — or, with
//! `--require-verified` (the senders are known to be rustox), reported as failed.
//!
//! It prints its address, public key and Tox ID first (stdout, so a script can read them),
//! then one JSON summary line per file received. Peers reach it directly by address and key
//! (`rustox send --to ADDR --key KEY`) or by Tox ID through the DHT and the onion
//! (`rustox send --to TOXID --bootstrap ...`): their friend request is accepted when
//! `--accept-from` allows it.
//!
//! With `RUSTOX_TRACE_STATS` set, it also prints the node's counters (drops by layer and
//! reason, io, key agreements) to stderr as one JSON line a second (`trace_stats.rs`).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::BufWriter;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::ProgressBar;
use rand::rngs::OsRng;
use rustox_core::crypto::KeyPair;
use rustox_core::driver::tokio::relay_server::WithRelayServer;
use rustox_core::driver::Clock;
use rustox_core::friend::ToxId;
use rustox_core::node::{FileOffer, FileVerification, FriendNumber, Node, NodeEvent, NodeOptions};
use rustox_core::relay::server::RelayConfig;
use rustox_core::transport::{ControllerKind, PathKind, Timestamp};

use crate::addr::parse_addr;
use crate::controller::parse_controller;
use crate::driver::{self, App};
use crate::network::NetworkArgs;
use crate::progress::{say, transfer_bar};
use crate::relay_args::describe_path;
use crate::summary::TransferSummary;

/// How long `--once` waits after the file for the sender to close the session: several
/// request intervals (25 ms) and resend timeouts, far below the sender's patience.
const LINGER: Duration = Duration::from_secs(3);

/// Write-behind for received files: chunks arrive 1371 bytes at a time.
const WRITE_BUFFER: usize = 1 << 20;

/// Options of `rustox recv`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Address to listen on (HOST:PORT; port 0 lets the OS choose, and the address used is
    /// printed).
    #[arg(long, value_parser = parse_addr)]
    listen: SocketAddr,
    /// Directory for received files (created if missing).
    #[arg(long, default_value = ".")]
    out: PathBuf,
    /// Key file: the node's secret key, created on first use so the public key stays the
    /// same across restarts.
    #[arg(long, default_value = "rustox-recv.key")]
    key_file: PathBuf,
    /// Exit after the first file (status 0 only if it arrived whole, and verified when
    /// `--require-verified` is given).
    #[arg(long)]
    once: bool,
    /// The senders are known to set the file id to the content's SHA-256 (rustox send
    /// does; c-toxcore clients send a random id): a file whose SHA-256 differs from its id
    /// is a failure (it is still kept and its JSON line printed).
    #[arg(long)]
    require_verified: bool,
    /// Congestion controller for what this side sends (acknowledgements, messages).
    #[arg(long, default_value = "bbr", value_parser = parse_controller)]
    controller: ControllerKind,
    /// Whose friend requests to accept: `any`, or one Tox ID (76 hex digits); requests from
    /// anyone else are shown and refused.
    #[arg(long, default_value = "any", value_parser = parse_accept_from)]
    accept_from: AcceptFrom,
    /// A Tox profile (c-toxcore's save file) to be: its identity instead of --key-file,
    /// and the friends it accepts are saved into it. Created when missing.
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Also run a TCP relay on this port (0: any free port) under our key, as a c-toxcore
    /// client started with `tcp_port` does: peers whose UDP is blocked reach us, and each
    /// other, through it (`--tcp-relay 127.0.0.1:PORT:KEY`, KEY our public key). The port
    /// used is printed.
    #[arg(long, value_name = "PORT")]
    tcp_port: Option<u16>,
    #[command(flatten)]
    network: NetworkArgs,
}

/// Whose friend requests `rustox recv` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcceptFrom {
    /// Everyone's: each becomes a friend.
    Any,
    /// One peer's, known in advance: added as a friend at start, so it comes online
    /// whether or not its request arrives.
    One(ToxId),
}

/// Parses `--accept-from`.
fn parse_accept_from(text: &str) -> Result<AcceptFrom, String> {
    if text.eq_ignore_ascii_case("any") {
        return Ok(AcceptFrom::Any);
    }
    text.trim()
        .parse::<ToxId>()
        .map(AcceptFrom::One)
        .map_err(|e| format!("{text:?} is neither `any` nor a Tox ID: {e}"))
}

/// Runs `rustox recv`.
pub fn run(args: Args) -> anyhow::Result<()> {
    args.network.relays.check().map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot use output directory {}", args.out.display()))?;
    if !args.out.is_dir() {
        anyhow::bail!("output directory {} is not a directory", args.out.display());
    }
    // The identity: a profile (with its friends), or the key file.
    let (keys, created, profile) = match &args.profile {
        Some(path) if path.exists() => {
            let (profile, pass) = crate::profile::load(path)?;
            let keys = KeyPair::from_secret(profile.secret_key.clone());
            (keys, false, Some((path.clone(), profile, pass)))
        }
        Some(path) => {
            let keys = KeyPair::generate(&mut OsRng);
            let profile = rustox_core::savedata::Profile::new(
                keys.secret.clone(),
                rustox_core::friend::NoSpam::random(&mut OsRng),
            );
            crate::profile::save(path, &profile, None)?;
            (keys, true, Some((path.clone(), profile, None)))
        }
        None => {
            let (keys, created) =
                crate::keys::load_or_create(&args.key_file, KeyPair::generate(&mut OsRng))?;
            (keys, created, None)
        }
    };
    let identity_file = args
        .profile
        .clone()
        .unwrap_or_else(|| args.key_file.clone());
    let socket = driver::bind(args.listen)?;
    let local = socket
        .local_addr()
        .context("cannot read the socket's address")?;
    println!("rustox recv listening on {local}");
    println!("public key {}", keys.public.to_hex());
    eprintln!(
        "rustox recv: {} {} {}; files go to {}",
        if created { "created" } else { "loaded" },
        if profile.is_some() {
            "profile"
        } else {
            "key file"
        },
        identity_file.display(),
        args.out.display()
    );
    eprintln!(
        "send a file here with: rustox send --to {local} --key {} FILE",
        keys.public.to_hex()
    );
    let runtime = driver::runtime()?;
    runtime.block_on(async {
        let socket = tokio::net::UdpSocket::from_std(socket).context("cannot use the socket")?;
        let clock = Clock::default();
        let options = NodeOptions {
            transport: driver::transport(args.controller),
            // One key dials us directly (`rustox send --to ADDR --key KEY`), so the
            // long-term key serves as the DHT key too.
            dht_keys: Some(keys.clone()),
            dht: args.network.dht_config(),
            unix_time: rustox_core::driver::clock::unix_now(),
            accept_strangers: args.accept_from == AcceptFrom::Any,
            udp_disabled: args.network.udp_disabled(),
            proxy: args.network.relays.proxy,
            ..NodeOptions::default()
        };
        let mut node = match &profile {
            Some((_, p, _)) => {
                Node::from_profile(clock.now(), p, options, rustox_core::node::system_rng())
            }
            None => Node::new(clock.now(), keys, options, rustox_core::node::system_rng()),
        };
        println!("tox id {}", node.tox_id());
        if let AcceptFrom::One(id) = args.accept_from {
            node.add_friend_norequest(clock.now(), id.pk)
                .context("cannot add the --accept-from peer")?;
        }
        args.network.bootstrap(&mut node, clock.now())?;
        let mut app = RecvApp {
            proxy_report: crate::proxy_arg::ProxyReport::default(),
            out: args.out.clone(),
            once: args.once,
            require_verified: args.require_verified,
            peers: HashMap::new(),
            paths: HashMap::new(),
            trace_path: std::env::var_os("RUSTOX_TRACE_PATH").is_some(),
            last_trace: Timestamp::ZERO,
            trace_stats: std::env::var_os("RUSTOX_TRACE_STATS").map(|_| Instant::now()),
            last_stats: None,
            incoming: HashMap::new(),
            bar: ProgressBar::hidden(),
            linger: None,
            profile: profile.map(|(path, _, pass)| (path, pass)),
            wake_stats: crate::wake_stats::WakeStats::from_env()?,
        };
        match args.tcp_port {
            Some(port) => {
                let mut app = WithRelayServer::start(
                    app,
                    &mut node,
                    clock.now(),
                    port,
                    local.is_ipv6(),
                    RelayConfig::default(),
                    clock,
                )
                .context("cannot start the TCP relay")?;
                println!("tcp relay on port {}", app.relay().port());
                driver::run(&mut node, &socket, clock, &mut app).await?
            }
            None => driver::run(&mut node, &socket, clock, &mut app).await?,
        }
    })
}

/// A file being received.
struct Incoming {
    path: PathBuf,
    /// The offer's file id: the content's SHA-256 from a rustox sender, opaque from others.
    file_id: [u8; 32],
    started: Instant,
}

/// The receiver's side of every conversation.
struct RecvApp {
    /// Proxy failures told to the user (`--proxy`).
    proxy_report: crate::proxy_arg::ProxyReport,
    out: PathBuf,
    once: bool,
    /// An unverified file is a failure (`--require-verified`).
    require_verified: bool,
    /// Each online friend as messages name it.
    peers: HashMap<FriendNumber, String>,
    /// The path each online friend's session ran on when last looked at: a change is
    /// printed, so a person (or a test) sees a session move between a relay and UDP.
    paths: HashMap<FriendNumber, PathKind>,
    trace_path: bool,
    last_trace: Timestamp,
    /// With `RUSTOX_TRACE_STATS` set: when the process started; the counters go to stderr
    /// as one JSON line a second (trace_stats.rs).
    trace_stats: Option<Instant>,
    last_stats: Option<Timestamp>,
    incoming: HashMap<(FriendNumber, u32), Incoming>,
    /// The bar of the most recent incoming file.
    bar: ProgressBar,
    /// With `--once`, after the file: the session to see closed, and how long to wait.
    linger: Option<(FriendNumber, Timestamp)>,
    /// With `--profile`: where to save the friends we accept, and its passphrase.
    profile: Option<(PathBuf, Option<Vec<u8>>)>,
    /// With `RUSTOX_WAKE_STATS`: what woke the driver, printed on SIGUSR1.
    wake_stats: Option<crate::wake_stats::WakeStats>,
}

impl RecvApp {
    fn accept(&mut self, node: &mut Node, now: Timestamp, offer: &FileOffer) -> anyhow::Result<()> {
        let FileOffer {
            friend: id,
            file,
            size,
            ref name,
            ref file_id,
            ..
        } = *offer;
        let (path, handle) = create_unique(&self.out, &safe_name(name))?;
        // Written and hashed on a thread of its own, so the disk and SHA-256 do not slow
        // the session's event loop.
        let (sink, digest) = driver::hashing_sink(BufWriter::with_capacity(WRITE_BUFFER, handle))
            .with_context(|| format!("cannot write {}", path.display()))?;
        node.accept_file(now, id, file, sink, Some(digest))
            .with_context(|| format!("cannot accept {}", path.display()))?;
        let from = self.peers.get(&id).cloned().unwrap_or_else(|| "?".into());
        self.bar = transfer_bar(if size == u64::MAX { 0 } else { size }, &from);
        say(
            &self.bar,
            &format!(
                "rustox recv: receiving {} ({size} bytes, file id {}) from {from}",
                path.display(),
                hex::encode(file_id)
            ),
        );
        self.incoming.insert(
            (id, file),
            Incoming {
                path,
                file_id: *file_id,
                started: Instant::now(),
            },
        );
        Ok(())
    }
}

impl App for RecvApp {
    type Output = anyhow::Result<()>;

    fn on_event(
        &mut self,
        node: &mut Node,
        now: Timestamp,
        event: NodeEvent,
    ) -> Option<Self::Output> {
        match event {
            NodeEvent::FriendConnection {
                friend,
                online: true,
                addr,
            } => {
                let key = node
                    .friend_public_key(friend)
                    .map_or_else(String::new, |k| k.to_hex());
                let path = describe_path(node, now, friend, addr);
                // Named by its UDP address when it has one, else by the start of its key.
                let name = addr.map_or_else(|| key.chars().take(16).collect(), |a| a.to_string());
                self.peers.insert(friend, name);
                say(
                    &self.bar,
                    &format!("rustox recv: session with friend {key} {path}"),
                );
            }
            NodeEvent::FriendRequest { pk, message } => {
                say(
                    &self.bar,
                    &format!(
                        "rustox recv: refused a friend request from {} ({:?}); see --accept-from",
                        pk.to_hex(),
                        String::from_utf8_lossy(&message)
                    ),
                );
            }
            NodeEvent::FriendAdded { pk, .. } => {
                say(
                    &self.bar,
                    &format!(
                        "rustox recv: accepted a friend request from {}",
                        pk.to_hex()
                    ),
                );
                // Remembered: the profile now holds the new friend.
                if let Some((path, pass)) = &self.profile {
                    let saved = crate::profile::save(path, &node.to_profile(now), pass.as_deref());
                    if let Err(e) = saved {
                        say(&self.bar, &format!("rustox recv: {e:#}"));
                    }
                }
            }
            NodeEvent::Message { friend, text, .. } => {
                let from = self
                    .peers
                    .get(&friend)
                    .cloned()
                    .unwrap_or_else(|| "?".into());
                say(
                    &self.bar,
                    &format!("{from}: {}", String::from_utf8_lossy(&text)),
                );
            }
            NodeEvent::FileOffered(offer) => {
                if let Err(e) = self.accept(node, now, &offer) {
                    let _ = node.cancel_file(now, offer.friend, offer.file);
                    if self.once {
                        return Some(Err(e));
                    }
                    say(&self.bar, &format!("rustox recv: {e:#}"));
                }
            }
            NodeEvent::FileReceived {
                friend,
                file,
                bytes,
                sha256,
                verification,
            } => {
                self.bar.finish_and_clear();
                let incoming = self.incoming.remove(&(friend, file))?;
                let elapsed: Duration = incoming.started.elapsed();
                // The writer thread hashes what it writes in order, which is always the
                // case here; the file on disk is read back only if it could not.
                let (sha256, verification) = match sha256 {
                    Some(d) => (d, verification),
                    None => match hash_file(&incoming.path) {
                        Ok(d) => (d, FileVerification::of(Some(d), &incoming.file_id)),
                        Err(e) => return Some(Err(e)),
                    },
                };
                let mut summary = TransferSummary::new(
                    bytes,
                    elapsed,
                    node.session_stats(friend).as_ref(),
                    sha256,
                );
                summary.file_id = Some(hex::encode(incoming.file_id));
                summary.verified = Some(verification.to_string());
                eprintln!(
                    "rustox recv: wrote {} ({bytes} bytes, SHA-256 {}, {verification})",
                    incoming.path.display(),
                    hex::encode(sha256)
                );
                println!("{}", summary.to_json());
                if self.require_verified && !verification.is_verified() {
                    let message = format!(
                        "{} is {verification}, and --require-verified was given",
                        incoming.path.display()
                    );
                    if self.once {
                        return Some(Err(anyhow::anyhow!(message)));
                    }
                    eprintln!("rustox recv: {message}");
                } else if self.once {
                    // Stay until the sender has our last acknowledgement and closes the
                    // session; leaving at once would strand it resending the last packet.
                    self.linger = Some((friend, now + LINGER));
                }
            }
            NodeEvent::FileFailed {
                friend,
                file,
                reason,
                ..
            } => {
                self.bar.finish_and_clear();
                let path = self
                    .incoming
                    .remove(&(friend, file))
                    .map_or_else(|| "a file".into(), |i| i.path.display().to_string());
                let message = format!("receiving {path} failed: {reason}");
                if self.once {
                    return Some(Err(anyhow::anyhow!(message)));
                }
                eprintln!("rustox recv: {message}");
            }
            NodeEvent::SessionClosed { friend, reason } => {
                self.paths.remove(&friend);
                if let Some(addr) = self.peers.remove(&friend) {
                    say(
                        &self.bar,
                        &format!("rustox recv: session with {addr} closed ({reason:?})"),
                    );
                }
                if self.linger.is_some_and(|(f, _)| f == friend) {
                    return Some(Ok(()));
                }
            }
            _ => {}
        }
        None
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.linger.map(|(_, until)| until)
    }

    fn on_timeout(&mut self, _node: &mut Node, _now: Timestamp) -> Option<Self::Output> {
        // The sender never closed; the file is complete and verified all the same.
        Some(Ok(()))
    }

    fn waker(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        self.wake_stats.as_ref().map(|w| w.signal.clone())
    }

    fn on_wake(&mut self, _node: &mut Node, _now: Timestamp) -> Option<Self::Output> {
        if let Some(w) = &self.wake_stats {
            w.print();
        }
        None
    }

    fn wake_tally(&mut self) -> Option<&mut rustox_core::driver::WakeTally> {
        self.wake_stats.as_mut().map(|w| &mut w.tally)
    }

    fn after_io(&mut self, node: &mut Node, now: Timestamp) {
        self.proxy_report.check(node);
        if let Some(started) = self.trace_stats {
            if self
                .last_stats
                .is_none_or(|last| now >= last + Duration::from_secs(1))
            {
                self.last_stats = Some(now);
                eprintln!(
                    "{}",
                    crate::trace_stats::line(node, started.elapsed().as_secs_f64())
                );
            }
        }
        // With `RUSTOX_TRACE_PATH=1`, each friend's path and known UDP address once a second
        // (a diagnostic of path selection, not part of the interface).
        if self.trace_path && now >= self.last_trace + Duration::from_secs(1) {
            self.last_trace = now;
            for &friend in self.peers.keys() {
                eprintln!(
                    "rustox recv: trace path {:?} udp addr {:?} relays {}",
                    node.friend_data_path(now, friend),
                    node.friend_udp_addr(friend),
                    node.friend_relays(friend).len()
                );
            }
        }
        for &friend in self.peers.keys() {
            let Some(path) = node.friend_data_path(now, friend) else {
                continue;
            };
            if self
                .paths
                .insert(friend, path)
                .is_some_and(|old| old != path)
            {
                let name = &self.peers[&friend];
                let udp = node.friend_udp_addr(friend);
                say(
                    &self.bar,
                    &format!(
                        "rustox recv: friend {name} now {}",
                        describe_path(node, now, friend, udp)
                    ),
                );
            }
        }
        if self.bar.is_hidden() {
            return;
        }
        if let Some(&(id, file)) = self.incoming.keys().next() {
            if let Some(done) = node.file_progress(id, file) {
                self.bar.set_position(done);
            }
        }
    }
}

/// The SHA-256 of a file on disk.
fn hash_file(path: &Path) -> anyhow::Result<[u8; 32]> {
    File::open(path)
        .and_then(|f| rustox_core::driver::sha256_of_file(&f))
        .map(|(_, sha256)| sha256)
        .with_context(|| format!("cannot read {}", path.display()))
}

/// The last path component of an offered name, or `received.bin`: a peer must not be
/// able to write outside the output directory (`../x`, `/etc/x`) or hide a file (`.x`).
pub fn safe_name(name: &[u8]) -> String {
    let text = String::from_utf8_lossy(name);
    let last = text
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or("")
        .trim_start_matches('.')
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>();
    if last.is_empty() {
        "received.bin".into()
    } else {
        last
    }
}

/// Creates `dir/name`, or `dir/name.1`, `.2`, ... when taken: a received file never
/// overwrites one already there.
fn create_unique(dir: &Path, name: &str) -> anyhow::Result<(PathBuf, File)> {
    for n in 0..1000u32 {
        let path = if n == 0 {
            dir.join(name)
        } else {
            dir.join(format!("{name}.{n}"))
        };
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    anyhow::bail!(
        "cannot create {name} in {}: 1000 files of that name exist",
        dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::safe_name;

    #[test]
    fn offered_names_cannot_escape_the_output_directory() {
        assert_eq!(safe_name(b"../../etc/passwd"), "passwd");
        assert_eq!(safe_name(b"/abs/path.txt"), "path.txt");
        assert_eq!(safe_name(b"..\\win.txt"), "win.txt");
        assert_eq!(safe_name(b".."), "received.bin");
        assert_eq!(safe_name(b""), "received.bin");
        assert_eq!(safe_name(b".hidden"), "hidden");
        assert_eq!(safe_name(b"ok.bin"), "ok.bin");
    }
}
