//! The two roles of `toxcore_file_peer` as child processes: their options, the JSON lines
//! they print (see the C file's header) and the typed summaries read from them.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustox_net_crypto::crypto::PublicKey;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::bootstrap::BootstrapSpec;
use super::build::PeerBinary;
use super::child::LineChild;
use super::error::CToxcoreError;
use super::friend::{PeerEvent, PeerLog};
use super::launch::Launch;

/// How long a peer may take to print its ready line (tox_new and binding a port).
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// How much longer than its own `--timeout` we wait for a peer's summary: it then reports
/// the timeout itself, which says more than ours would.
const SUMMARY_GRACE: Duration = Duration::from_secs(5);

/// What both roles take.
#[derive(Debug, Clone)]
pub struct PeerOptions {
    /// How to start it (e.g. inside a network namespace).
    pub launch: Launch,
    /// UDP port to bind; 0: the first free one in c-toxcore's range 33445–33545. c-toxcore
    /// always binds the wildcard address.
    pub port: u16,
    /// DHT nodes to bootstrap from.
    pub bootstrap: Vec<BootstrapSpec>,
    /// Long-term secret key (savedata type SECRET_KEY); `None`: a fresh random one.
    pub secret_key: Option<[u8; 32]>,
    /// The friend: a public key (64 hex digits, added without a request) or a Tox ID (76,
    /// sent a friend request). A receiver without one accepts any friend request.
    pub friend: Option<String>,
    /// IPv6 off.
    pub ipv4_only: bool,
    /// LAN discovery on.
    pub lan_discovery: bool,
    /// UDP hole punching on.
    pub hole_punching: bool,
    /// Seed of the content pattern (the same on both sides).
    pub seed: u64,
    /// The peer gives up (and says why) after this long in all.
    pub timeout: Duration,
    /// Copy the peer's per-second progress lines to our stderr.
    pub progress: bool,
    /// Copy c-toxcore's own log (DEBUG and up) to our stderr.
    pub toxcore_log: bool,
    /// Send the file as an avatar (`TOX_FILE_KIND_AVATAR`), or accept only avatars.
    pub avatar: bool,
    /// UDP on; off, the friend is reached through [`Self::tcp_relays`] only.
    pub udp: bool,
    /// TCP relays (`tox_add_tcp_relay`): address and the relay's DHT key.
    pub tcp_relays: Vec<BootstrapSpec>,
}

impl Default for PeerOptions {
    fn default() -> Self {
        PeerOptions {
            launch: Launch::direct(),
            port: 0,
            bootstrap: Vec::new(),
            secret_key: None,
            friend: None,
            ipv4_only: true,
            lan_discovery: false,
            hole_punching: true,
            seed: 1,
            timeout: Duration::from_secs(120),
            progress: false,
            toxcore_log: false,
            avatar: false,
            udp: true,
            tcp_relays: Vec::new(),
        }
    }
}

impl PeerOptions {
    fn args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--port".into(), self.port.to_string().into()];
        for node in &self.bootstrap {
            args.push("--bootstrap".into());
            args.push(node.to_string().into());
        }
        if let Some(key) = &self.secret_key {
            args.push("--secret-key".into());
            args.push(hex(key).into());
        }
        if let Some(friend) = &self.friend {
            args.push("--friend".into());
            args.push(friend.into());
        }
        if self.ipv4_only {
            args.push("--ipv4-only".into());
        }
        if !self.lan_discovery {
            args.push("--no-lan".into());
        }
        if !self.hole_punching {
            args.push("--no-hole-punching".into());
        }
        args.push("--seed".into());
        args.push(self.seed.to_string().into());
        args.push("--timeout".into());
        args.push(format!("{:.3}", self.timeout.as_secs_f64()).into());
        if self.progress {
            args.push("--progress".into());
        }
        if self.toxcore_log {
            args.push("--log".into());
        }
        if self.avatar {
            args.push("--avatar".into());
        }
        for relay in &self.tcp_relays {
            args.push("--tcp-relay".into());
            args.push(relay.to_string().into());
        }
        if !self.udp {
            args.push("--no-udp".into());
        }
        args
    }
}

/// How the receiver checks what arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentCheck {
    /// Every byte against the sender's pattern for the seed.
    Pattern,
    /// SHA-256 of the content against the offer's file id (rustox's senders set it so).
    FileId,
    /// SHA-256 of the content against this digest.
    Sha256([u8; 32]),
    /// Count the bytes only.
    None,
}

/// The receiving role.
#[derive(Debug, Clone)]
pub struct RecvOptions {
    /// What both roles take.
    pub peer: PeerOptions,
    /// Refuse an offer of another size.
    pub expect_size: Option<u64>,
    /// How the content is checked.
    pub check: ContentCheck,
    /// Also write the file here (as the receiver's path sees it).
    pub output: Option<PathBuf>,
    /// How long to keep iterating after the last byte (so the last acknowledgement leaves)
    /// when the sender does not go offline first.
    pub linger: Duration,
}

impl Default for RecvOptions {
    fn default() -> Self {
        RecvOptions {
            peer: PeerOptions::default(),
            expect_size: None,
            check: ContentCheck::Pattern,
            output: None,
            linger: Duration::from_secs(5),
        }
    }
}

/// Which file id the sender announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileIdChoice {
    /// c-toxcore's random id.
    #[default]
    Random,
    /// The SHA-256 of the content, as rustox's senders do.
    Sha256,
}

/// The sending role.
#[derive(Debug, Clone)]
pub struct SendOptions {
    /// What both roles take; `peer.friend` must be set.
    pub peer: PeerOptions,
    /// Bytes to send.
    pub size: u64,
    /// The file id announced with the offer.
    pub file_id: FileIdChoice,
    /// Offer the file over a TCP relay connection too, instead of waiting for UDP.
    pub allow_tcp: bool,
}

/// A peer's first line: who it is and where it listens.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct PeerReady {
    /// Its long-term public key (hex).
    pub public_key: String,
    /// Its Tox ID (hex).
    pub address: String,
    /// Its DHT public key (hex): what a node bootstrapping off it needs.
    pub dht_id: String,
    /// The UDP port it bound.
    pub udp_port: u16,
    /// libtoxcore's version, "0.2.18" on Debian 12.
    pub toxcore_version: String,
}

/// What both peers' summaries report. Times are seconds; `None` where the event never
/// happened.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct TransferTimes {
    /// Bytes handed to c-toxcore and accepted (sender), or received (receiver).
    pub bytes: u64,
    /// Sender: from the receiver's accept to c-toxcore's final (zero-length) chunk request,
    /// made once the last data packet is acknowledged. Receiver: from sending the accept to
    /// the last byte.
    pub seconds: Option<f64>,
    /// `bytes` over `seconds`, Mbit/s.
    pub goodput_mbit: Option<f64>,
    /// From process start to the friend's connection coming up.
    pub time_to_friend_online: Option<f64>,
    /// From process start to c-toxcore reporting itself connected (onion announced).
    pub time_to_self_online: Option<f64>,
    /// The friend connection: "udp", "tcp" or "none" (sender: at the end; receiver: when the
    /// file completed).
    pub friend_connection: String,
}

/// The sender's summary; its common part reads through `Deref` (`summary.bytes`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct SendSummary {
    /// Bytes, times and the friend connection.
    #[serde(flatten)]
    pub times: TransferTimes,
    /// Chunk requests answered.
    pub chunk_requests: u64,
    /// Chunks c-toxcore refused with SENDQ (each retried later).
    pub sendq_refusals: u64,
    /// The most chunks waiting for a retry at once.
    pub backlog_peak: u64,
}

/// The receiver's summary; its common part reads through `Deref` (`summary.bytes`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct RecvSummary {
    /// Bytes, times and the friend connection.
    #[serde(flatten)]
    pub times: TransferTimes,
    /// The size the offer announced.
    pub expected_bytes: u64,
    /// All bytes arrived, in order, and passed the check.
    pub verified: bool,
    /// Which check ran: "pattern", "file-id", "sha256" or "none".
    pub check: String,
    /// Bytes that differed from the pattern (pattern check only).
    pub mismatched_bytes: u64,
    /// Every chunk arrived at the position that followed the previous one.
    pub in_order: bool,
}

impl RecvSummary {
    /// A test's checks of a file c-toxcore received from a rustox peer over a TCP relay:
    /// `size` bytes, verified against the file id, on a TCP friend connection, and the
    /// rustox peer (`rustox`, its log) saw the friend online over TCP; `via` names the relay
    /// in the failure message.
    #[track_caller]
    pub fn assert_file_by_relay(&self, size: u64, rustox: &PeerLog, via: &str) {
        assert_eq!(self.bytes, size, "{self:?}\n rustox: {:?}", rustox.events());
        assert!(self.verified, "c-toxcore's check failed: {self:?}");
        assert_eq!(self.check, "file-id");
        assert_eq!(self.friend_connection, "tcp", "{self:?}");
        assert!(
            rustox.has(|e| matches!(e, PeerEvent::Friend(_, 1))),
            "rustox did not see the friend through {via}: {:?}",
            rustox.events()
        );
    }
}

impl std::ops::Deref for SendSummary {
    type Target = TransferTimes;

    fn deref(&self) -> &TransferTimes {
        &self.times
    }
}

impl std::ops::Deref for RecvSummary {
    type Target = TransferTimes;

    fn deref(&self) -> &TransferTimes {
        &self.times
    }
}

/// A running receiver; killed when dropped.
#[derive(Debug)]
pub struct RecvPeer {
    inner: RunningPeer,
}

/// A running sender; killed when dropped.
#[derive(Debug)]
pub struct SendPeer {
    inner: RunningPeer,
}

impl RecvOptions {
    /// A receiver on `port` with UDP off, bootstrapping from `nodes` and reaching its friend
    /// only through `relay` (addresses and DHT keys), expecting `size` bytes whose file id it
    /// checks; 150 s to finish.
    pub fn tcp_only(
        port: u16,
        nodes: &[(SocketAddr, PublicKey)],
        relay: &(SocketAddr, PublicKey),
        size: u64,
    ) -> RecvOptions {
        RecvOptions {
            peer: PeerOptions {
                port,
                bootstrap: nodes
                    .iter()
                    .map(|(addr, pk)| BootstrapSpec::at(*addr, pk))
                    .collect(),
                udp: false,
                tcp_relays: vec![BootstrapSpec::at(relay.0, &relay.1)],
                timeout: Duration::from_secs(150),
                ..PeerOptions::default()
            },
            expect_size: Some(size),
            // The file id is the SHA-256 rustox announces: c-toxcore checks every byte.
            check: ContentCheck::FileId,
            ..RecvOptions::default()
        }
    }
}

impl RecvPeer {
    /// Starts a receiver and waits for its ready line.
    pub fn start(binary: &PeerBinary, options: &RecvOptions) -> Result<RecvPeer, CToxcoreError> {
        let mut args: Vec<OsString> = vec!["recv".into()];
        args.extend(options.peer.args());
        if let Some(size) = options.expect_size {
            args.push("--expect-size".into());
            args.push(size.to_string().into());
        }
        args.push("--check".into());
        args.push(match options.check {
            ContentCheck::Pattern => "pattern".into(),
            ContentCheck::FileId => "file-id".into(),
            ContentCheck::None => "none".into(),
            ContentCheck::Sha256(digest) => format!("sha256:{}", hex(&digest)).into(),
        });
        if let Some(path) = &options.output {
            args.push("--output".into());
            args.push(path.into());
        }
        args.push("--linger".into());
        args.push(format!("{:.3}", options.linger.as_secs_f64()).into());
        let timeout = options.peer.timeout + options.linger;
        RunningPeer::start(binary, &options.peer, "recv", args, timeout)
            .map(|inner| RecvPeer { inner })
    }

    /// Its ready line.
    pub fn ready(&self) -> &PeerReady {
        &self.inner.ready
    }

    /// The receiver as a DHT node reached at `host`, for a sender to bootstrap off.
    pub fn as_bootstrap(&self, host: impl Into<String>) -> BootstrapSpec {
        self.inner.as_bootstrap(host)
    }

    /// Waits for the summary the receiver prints when the file completes.
    pub fn wait_summary(&mut self) -> Result<RecvSummary, CToxcoreError> {
        self.inner.wait_summary()
    }

    /// Its summary; a failure panics with what the other side, `other`, logged.
    pub fn summary_beside(&mut self, other: &PeerLog) -> RecvSummary {
        match self.wait_summary() {
            Ok(s) => s,
            Err(e) => panic!(
                "the c-toxcore receiver's summary: {e}\n rustox: {:?}",
                other.events()
            ),
        }
    }

    /// Waits for it to exit (it lingers after the summary); `None` if still running at `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        self.inner.child.wait_exit(Instant::now() + limit)
    }
}

impl SendPeer {
    /// Starts a sender and waits for its ready line.
    pub fn start(binary: &PeerBinary, options: &SendOptions) -> Result<SendPeer, CToxcoreError> {
        if options.peer.friend.is_none() {
            return Err(CToxcoreError::TransferFailed(
                "a sender needs peer.friend".to_string(),
            ));
        }
        let mut args: Vec<OsString> = vec!["send".into()];
        args.extend(options.peer.args());
        args.push("--size".into());
        args.push(options.size.to_string().into());
        args.push("--file-id".into());
        args.push(match options.file_id {
            FileIdChoice::Random => "random".into(),
            FileIdChoice::Sha256 => "sha256".into(),
        });
        if options.allow_tcp {
            args.push("--allow-tcp".into());
        }
        RunningPeer::start(binary, &options.peer, "send", args, options.peer.timeout)
            .map(|inner| SendPeer { inner })
    }

    /// Its ready line.
    pub fn ready(&self) -> &PeerReady {
        &self.inner.ready
    }

    /// Waits for the summary the sender prints when the last chunk is acknowledged.
    pub fn wait_summary(&mut self) -> Result<SendSummary, CToxcoreError> {
        self.inner.wait_summary()
    }

    /// Waits for it to exit; `None` if still running at `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        self.inner.child.wait_exit(Instant::now() + limit)
    }
}

/// What both running roles share.
#[derive(Debug)]
struct RunningPeer {
    child: LineChild,
    ready: PeerReady,
    summary_deadline: Instant,
}

impl RunningPeer {
    fn start(
        binary: &PeerBinary,
        options: &PeerOptions,
        role: &str,
        args: Vec<OsString>,
        timeout: Duration,
    ) -> Result<RunningPeer, CToxcoreError> {
        let mut command = options.launch.command(binary.path());
        command.args(args);
        let echo = options.progress || options.toxcore_log;
        let mut child = LineChild::spawn(command, role, echo, |e| {
            CToxcoreError::io(format!("starting {}", binary.path().display()), e)
        })?;
        let started = Instant::now();
        let ready: PeerReady = parse_event(
            &mut child,
            "ready",
            started + READY_TIMEOUT,
            "its ready line",
        )?;
        Ok(RunningPeer {
            child,
            ready,
            summary_deadline: started + timeout + SUMMARY_GRACE,
        })
    }

    fn as_bootstrap(&self, host: impl Into<String>) -> BootstrapSpec {
        BootstrapSpec {
            host: host.into(),
            port: self.ready.udp_port,
            dht_key: self.ready.dht_id.clone(),
        }
    }

    fn wait_summary<T: DeserializeOwned>(&mut self) -> Result<T, CToxcoreError> {
        parse_event(
            &mut self.child,
            "done",
            self.summary_deadline,
            "its summary",
        )
    }
}

/// Reads stdout lines until one whose `event` is `event`, and decodes it as `T`.
fn parse_event<T: DeserializeOwned>(
    child: &mut LineChild,
    event: &str,
    deadline: Instant,
    awaited: &str,
) -> Result<T, CToxcoreError> {
    loop {
        let line = child.next_line(awaited, deadline)?;
        let unexpected = |reason: String| CToxcoreError::UnexpectedOutput {
            role: child.role().to_string(),
            reason,
            line: line.clone(),
        };
        let value: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| unexpected(e.to_string()))?;
        if value.get("event").and_then(|e| e.as_str()) != Some(event) {
            continue;
        }
        return serde_json::from_value(value).map_err(|e| unexpected(e.to_string()));
    }
}

/// The file peer's content for `seed`: `size` bytes, byte `at` being byte `at % 8` of
/// splitmix64(seed + at / 8), little-endian (`fill_pattern` in toxcore_file_peer.c), so a
/// test can write the same file for a rustox sender or compare what a rustox receiver wrote.
pub fn pattern(seed: u64, size: usize) -> Vec<u8> {
    fn splitmix64(x: u64) -> u64 {
        let x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }
    (0..size as u64)
        .map(|at| (splitmix64(seed.wrapping_add(at >> 3)) >> (8 * (at & 7))) as u8)
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_options_become_the_c_peers_arguments() {
        let options = PeerOptions {
            port: 40000,
            bootstrap: vec![BootstrapSpec {
                host: "10.0.0.2".into(),
                port: 33445,
                dht_key: "CD".repeat(32),
            }],
            secret_key: Some([0xab; 32]),
            friend: Some("EF".repeat(32)),
            timeout: Duration::from_millis(1500),
            ..PeerOptions::default()
        };
        let args: Vec<String> = options
            .args()
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let expected = [
            "--port".to_string(),
            "40000".into(),
            "--bootstrap".into(),
            format!("10.0.0.2:33445:{}", "CD".repeat(32)),
            "--secret-key".into(),
            "AB".repeat(32),
            "--friend".into(),
            "EF".repeat(32),
            "--ipv4-only".into(),
            "--no-lan".into(),
            "--seed".into(),
            "1".into(),
            "--timeout".into(),
            "1.500".into(),
        ];
        assert_eq!(args, expected);
    }

    #[test]
    fn summaries_decode_from_the_c_peers_lines() {
        let send: SendSummary = serde_json::from_str(
            r#"{"event":"done","role":"send","bytes":4194304,"seconds":2.5,"goodput_mbit":13.4,
            "time_to_friend_online":9.4,"time_to_self_online":null,"friend_connection":"udp",
            "chunk_requests":3060,"sendq_refusals":0,"backlog_peak":0}"#,
        )
        .unwrap();
        assert_eq!(send.bytes, 4_194_304);
        assert_eq!(send.time_to_self_online, None);
        let recv: RecvSummary = serde_json::from_str(
            r#"{"event":"done","role":"recv","bytes":5,"seconds":0.1,"goodput_mbit":0.0004,
            "time_to_friend_online":9.8,"time_to_self_online":7.6,"friend_connection":"udp",
            "expected_bytes":5,"verified":true,"check":"pattern","mismatched_bytes":0,
            "in_order":true}"#,
        )
        .unwrap();
        assert!(recv.verified && recv.in_order);
    }
}
