//! `rustox send`: one file to a friend over a net_crypto session: to a `rustox recv` dialled
//! directly by address and key, or to anyone (a `rustox recv`, a c-toxcore client) known by
//! Tox ID, found through the DHT and the onion after a friend request (docs/protocol.md §6).
//!
//! Everything a person can get wrong is checked before the first datagram leaves (key
//! syntax, the file), and what can only be learnt from the network (nobody answering, the
//! receiver going away) ends the run with one line saying so and a non-zero exit.

use std::fs::File;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use indicatif::ProgressBar;
use rand::rngs::OsRng;
use rustox_core::crypto::KeyPair;
use rustox_core::driver::Clock;
use rustox_core::node::{FriendNumber, Node, NodeEvent, NodeOptions, PreparedFile};
use rustox_core::transport::{CloseReason, ControllerKind, Timestamp};

use crate::addr::{any_for, parse_addr};
use crate::controller::parse_controller;
use crate::driver::{self, App};
use crate::network::NetworkArgs;
use crate::progress::{say, transfer_bar};
use crate::relay_args::describe_path;
use crate::summary::TransferSummary;
use rustox_core::friend::ToxId;

/// Options of `rustox send`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The receiver: its Tox ID (76 hex digits; it is sent a friend request and found
    /// through --bootstrap nodes or --lan), or its address HOST:PORT with --key.
    #[arg(long, value_parser = parse_target)]
    to: Target,
    /// The receiver's public key with an address in --to (64 hex digits, as `rustox recv`
    /// printed it).
    #[arg(long)]
    key: Option<String>,
    /// The friend request's message, with a Tox ID in --to.
    #[arg(long, default_value = "rustox send: a file for you")]
    message: String,
    /// With a Tox ID in --to, give up when the friend is not online after this many
    /// seconds.
    #[arg(long, default_value_t = 120)]
    find_timeout: u64,
    /// A Tox profile to send as (its identity and friends; a friend already in it is not
    /// sent a new request). Saved back afterwards with the new friend.
    #[arg(long)]
    profile: Option<PathBuf>,
    #[command(flatten)]
    network: NetworkArgs,
    /// Congestion controller: bbr (default), cubic, or legacy (a model of c-toxcore 0.2.18).
    #[arg(long, default_value = "bbr", value_parser = parse_controller)]
    controller: ControllerKind,
    /// Local address to send from (default: any, port chosen by the OS).
    #[arg(long, value_parser = parse_addr)]
    bind: Option<SocketAddr>,
    /// Give up when no byte is acknowledged for this many seconds.
    #[arg(long, default_value_t = 20)]
    stall_timeout: u64,
    /// The file to send.
    file: PathBuf,
}

/// Who `--to` names.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    /// A Tox ID: found through the network.
    ToxId(ToxId),
    /// An address, dialled with `--key`.
    Addr(SocketAddr),
}

/// Parses `--to`: 76 hex digits are a Tox ID, anything else an address; an error names both
/// forms, since either is what the user may have meant.
fn parse_target(text: &str) -> Result<Target, String> {
    let t = text.trim();
    if t.len() == 76 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return t
            .parse::<ToxId>()
            .map(Target::ToxId)
            .map_err(|e| format!("{text:?} is not a valid Tox ID: {e}"));
    }
    if t.bytes().all(|b| b.is_ascii_hexdigit()) && t.len() > 12 {
        return Err(format!(
            "{text:?} is {} hex digits: a Tox ID has 76 (or give HOST:PORT with --key)",
            t.len()
        ));
    }
    parse_addr(t).map(Target::Addr).map_err(|e| {
        format!("{e}; or give the receiver's Tox ID (76 hex digits, as `rustox recv` prints it)")
    })
}

/// Runs `rustox send`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match (&args.to, &args.key) {
        (Target::Addr(_), None) => {
            bail!("--to ADDR needs --key (the public key `rustox recv` printed)")
        }
        (Target::ToxId(_), Some(_)) => bail!("--key goes with --to ADDR, not with a Tox ID"),
        (Target::ToxId(_), None) if !args.network.can_search() => {
            bail!("to find a Tox ID, give a DHT node with --bootstrap HOST:PORT:KEY (or --lan)")
        }
        _ => {}
    }
    args.network.relays.check().map_err(anyhow::Error::msg)?;
    let file =
        File::open(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    if meta.is_dir() {
        bail!(
            "{} is a directory; send one file at a time",
            args.file.display()
        );
    }
    let name = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let bind = args
        .bind
        .unwrap_or_else(|| match (args.to, args.network.bootstrap.first()) {
            (Target::Addr(to), _) => any_for(to),
            (Target::ToxId(_), Some(b)) => any_for(b.addr),
            (Target::ToxId(_), None) => SocketAddr::from(([0, 0, 0, 0], 0)),
        });
    let socket = driver::bind(bind)?;
    // Hashed before the session exists, so the session never waits for the disk.
    let prepared = driver::prepare_file(file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let runtime = driver::runtime()?;
    let summary = runtime.block_on(async {
        let socket = tokio::net::UdpSocket::from_std(socket).context("cannot use the socket")?;
        let clock = Clock::default();
        let options = NodeOptions {
            transport: driver::transport(args.controller),
            dht: args.network.dht_config(),
            unix_time: rustox_core::driver::clock::unix_now(),
            udp_disabled: args.network.udp_disabled(),
            proxy: args.network.relays.proxy,
            ..NodeOptions::default()
        };
        let now = clock.now();
        let loaded = match &args.profile {
            Some(path) => Some((path.clone(), crate::profile::load(path)?)),
            None => None,
        };
        let mut node = match &loaded {
            Some((_, (profile, _))) => {
                Node::from_profile(now, profile, options, rustox_core::node::system_rng())
            }
            None => Node::new(
                now,
                KeyPair::generate(&mut OsRng),
                options,
                rustox_core::node::system_rng(),
            ),
        };
        args.network.bootstrap(&mut node, now)?;
        let (friend, to, find_deadline) = match (args.to, &args.key) {
            (Target::Addr(addr), key) => {
                let key = key.as_deref().context("--to ADDR needs --key")?;
                let key = crate::keys::parse_public_key(key)?;
                // `rustox recv` uses its long-term key as its DHT key too, so one key
                // dials it.
                let friend = node
                    .add_friend_direct(now, key, key, addr)
                    .context("cannot start the session")?;
                eprintln!("rustox send: connecting to {addr} ...");
                (friend, addr.to_string(), None)
            }
            (Target::ToxId(id), _) => {
                // A friend the profile already has needs no request.
                let friend = match node.friend_by_pk(&id.pk) {
                    Some(friend) => friend,
                    None => node
                        .add_friend(now, &id, args.message.as_bytes())
                        .context("cannot send the friend request")?,
                };
                eprintln!("rustox send: looking for {id} ...");
                let patience = Duration::from_secs(args.find_timeout.max(1));
                (
                    friend,
                    hex::encode(&id.pk.as_bytes()[..8]),
                    Some(now + patience),
                )
            }
        };
        let mut app = SendApp {
            proxy_report: crate::proxy_arg::ProxyReport::default(),
            profile: loaded.map(|(path, (_, pass))| (path, pass)),
            to,
            find_deadline,
            started_at: now,
            friend_online: None,
            friend,
            size: prepared.size,
            source: Some((prepared, name)),
            file: None,
            started: None,
            bar: ProgressBar::hidden(),
            stall: Duration::from_secs(args.stall_timeout.max(1)),
            last_progress: (0, Timestamp::ZERO),
            established: false,
            sha256: None,
            trace_every: std::env::var_os("RUSTOX_TRACE_STATS").map(|_| Duration::from_secs(1)),
            last_trace: Timestamp::ZERO,
        };
        driver::run(&mut node, &socket, clock, &mut app).await?
    })?;
    println!("{}", summary.to_json());
    Ok(())
}

/// The sender's side of the conversation.
struct SendApp {
    /// Proxy failures told to the user (`--proxy`).
    proxy_report: crate::proxy_arg::ProxyReport,
    /// With `--profile`: where the friend is saved afterwards, and its passphrase.
    profile: Option<(PathBuf, Option<Vec<u8>>)>,
    /// The receiver as messages name it: its address, or the start of its key.
    to: String,
    /// With a Tox ID: when to give up finding the friend.
    find_deadline: Option<Timestamp>,
    started_at: Timestamp,
    /// Seconds from start to the friend online, when found by Tox ID.
    friend_online: Option<f64>,
    friend: FriendNumber,
    /// The file and its name until it is offered.
    source: Option<(PreparedFile, String)>,
    size: u64,
    file: Option<u32>,
    started: Option<Instant>,
    bar: ProgressBar,
    stall: Duration,
    /// Bytes acknowledged and when that figure last grew.
    last_progress: (u64, Timestamp),
    established: bool,
    /// The file id announced with the offer: the SHA-256 of the source.
    sha256: Option<[u8; 32]>,
    /// With `RUSTOX_TRACE_STATS=1`, the transport's statistics go to stderr this often
    /// (a diagnostic for the transport, not part of the interface).
    trace_every: Option<Duration>,
    last_trace: Timestamp,
}

impl SendApp {
    fn offer(&mut self, node: &mut Node, now: Timestamp) -> anyhow::Result<()> {
        let Some((file, name)) = self.source.take() else {
            return Ok(());
        };
        self.sha256 = Some(file.sha256);
        let number = node
            .send_file(now, self.friend, file, name.as_bytes())
            .with_context(|| format!("cannot offer {name}"))?;
        self.file = Some(number);
        self.started = Some(Instant::now());
        self.last_progress = (0, now);
        self.bar = transfer_bar(self.size, &name);
        Ok(())
    }

    fn finish(
        &mut self,
        node: &mut Node,
        now: Timestamp,
        bytes: u64,
    ) -> anyhow::Result<TransferSummary> {
        self.bar.finish_and_clear();
        let elapsed = self.started.map_or(Duration::ZERO, |s| s.elapsed());
        let sha = self.sha256.context("the file was never offered")?;
        let mut summary = TransferSummary::new(
            bytes,
            elapsed,
            node.session_stats(self.friend).as_ref(),
            sha,
        );
        summary.friend_online_seconds = self.friend_online;
        // With a profile the friend is kept there (saved before the session ends).
        if let Some((path, pass)) = &self.profile {
            crate::profile::save(path, &node.to_profile(now), pass.as_deref())?;
        }
        // Done with the receiver: OFFLINE, then the session is killed.
        let _ = node.delete_friend(now, self.friend);
        Ok(summary)
    }
}

impl App for SendApp {
    type Output = anyhow::Result<TransferSummary>;

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
            } if friend == self.friend => {
                self.established = true;
                eprintln!(
                    "rustox send: friend reached {}",
                    describe_path(node, now, friend, addr)
                );
                if self.find_deadline.take().is_some() {
                    let after = (now - self.started_at).as_secs_f64();
                    self.friend_online = Some(after);
                    eprintln!("rustox send: friend online after {after:.2} s");
                }
                eprintln!("rustox send: session up with {}", self.to);
                if let Err(e) = self.offer(node, now) {
                    return Some(Err(e));
                }
            }
            NodeEvent::FileSent {
                friend,
                file,
                bytes,
            } if friend == self.friend && Some(file) == self.file => {
                return Some(self.finish(node, now, bytes));
            }
            NodeEvent::FileFailed { friend, reason, .. } if friend == self.friend => {
                self.bar.finish_and_clear();
                return Some(Err(anyhow::anyhow!("the transfer failed: {reason}")));
            }
            NodeEvent::Message { friend, text, .. } if friend == self.friend => {
                say(
                    &self.bar,
                    &format!("{}: {}", self.to, String::from_utf8_lossy(&text)),
                );
            }
            NodeEvent::FriendConnection {
                friend,
                online: false,
                ..
            } if friend == self.friend => {
                self.bar.finish_and_clear();
                return Some(Err(closed_error(&self.to, CloseReason::Killed, true)));
            }
            // Found by Tox ID, a session that fails before the friend is online is retried
            // by the friend connection until --find-timeout.
            NodeEvent::SessionClosed { friend, .. }
                if friend == self.friend && self.find_deadline.is_some() => {}
            NodeEvent::SessionClosed { friend, reason } if friend == self.friend => {
                self.bar.finish_and_clear();
                let refused = self.to.parse().ok().and_then(|to| send_refused(node, to));
                return Some(Err(match refused {
                    Some(refused) if !self.established => refused,
                    _ => closed_error(&self.to, reason, self.established),
                }));
            }
            _ => {}
        }
        None
    }

    fn after_io(&mut self, node: &mut Node, now: Timestamp) {
        self.proxy_report.check(node);
        if self
            .trace_every
            .is_some_and(|every| now >= self.last_trace + every)
        {
            self.last_trace = now;
            if let Some(s) = node.session_stats(self.friend) {
                say(&self.bar, &format!("rustox send: {s:?}"));
            }
        }
        if let Some(file) = self.file {
            if let Some(done) = node.file_progress(self.friend, file) {
                self.bar.set_position(done);
                if done > self.last_progress.0 {
                    self.last_progress = (done, now);
                }
            }
        }
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.find_deadline
            .or_else(|| self.file.map(|_| self.last_progress.1 + self.stall))
    }

    fn on_timeout(&mut self, node: &mut Node, now: Timestamp) -> Option<Self::Output> {
        self.bar.finish_and_clear();
        if let Some(deadline) = self.find_deadline {
            if now < deadline {
                return None;
            }
            return Some(Err(anyhow::anyhow!(
                "{} did not come online within {:.0} s (DHT connected: {}; is it running, \
                 and does it accept our request?)",
                self.to,
                (now - self.started_at).as_secs_f64(),
                node.is_connected()
            )));
        }
        Some(Err(anyhow::anyhow!(
            "no progress for {} s: {} stopped acknowledging data",
            self.stall.as_secs(),
            self.to
        )))
    }
}

/// What the OS said when it last refused a datagram to `to`, if it did. A session that
/// never came up to an unroutable address times out like one to a silent host; this says
/// which it was (the driver counts the refusal and carries on).
pub fn send_refused(node: &Node, to: SocketAddr) -> Option<anyhow::Error> {
    match &node.io_counters().last_send_error {
        Some((addr, why)) if *addr == to => Some(anyhow::anyhow!("cannot send to {to}: {why}")),
        _ => None,
    }
}

/// The one line for a session that ended before the file was delivered.
pub fn closed_error(to: &str, reason: CloseReason, established: bool) -> anyhow::Error {
    match (reason, established) {
        (CloseReason::Timeout, false) => anyhow::anyhow!(
            "no answer from {to}: the handshake timed out after 8 s (is `rustox recv` running \
             there and reachable, and is --key its public key?)"
        ),
        (CloseReason::Timeout, true) => anyhow::anyhow!("lost the session with {to}: it timed out"),
        (CloseReason::Killed, _) => {
            anyhow::anyhow!("{to} closed the session before the file was delivered")
        }
        (CloseReason::Local, _) => anyhow::anyhow!("the session with {to} was closed"),
    }
}
