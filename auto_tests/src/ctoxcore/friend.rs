//! A c-toxcore 0.2.18 client for friend tests (`tools/toxfriend.c`) as a child process:
//! it bootstraps, sends or accepts friend requests, greets friends that come online, and
//! reports each of these as a line that [`CPeer`] turns into a [`PeerLog`].

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};

use rustox_core::friend::ToxId;
use rustox_net_crypto::crypto::PublicKey;

use super::error::CToxcoreError;

/// What a peer reported, with the seconds since it started.
#[derive(Debug, Clone, PartialEq)]
pub enum PeerEvent {
    /// Its own connection (c-toxcore: onion status; 0 none, 1 TCP, 2 UDP).
    SelfStatus(i32),
    /// A friend request from this key.
    Request(PublicKey),
    /// Friend N's connection status (0 offline).
    Friend(u32, i32),
    /// A message from friend N.
    Message(u32, String),
    /// An action from friend N.
    Action(u32, String),
    /// Our message to friend N got this id.
    Sent(u32, u32),
    /// Friend N acknowledged our message with this id.
    Receipt(u32, u32),
    /// Friend N's name.
    Name(u32, String),
    /// Friend N's status message.
    StatusMessage(u32, String),
    /// Friend N's user status (0 none, 1 away, 2 busy).
    Status(u32, i32),
    /// Friend N typing?
    Typing(u32, bool),
    /// Friend N offered a file of this kind (0 data, 1 avatar).
    FileOffered(u32, u32),
    /// A file from friend N arrived: bytes, and whether its SHA-256 matched its id.
    FileReceived(u32, u64, bool),
    /// Friend N acknowledged every byte of our file.
    FileSent(u32, u64),
    /// A transfer with friend N failed, and why.
    FileFailed(u32, String),
}

/// Everything a peer reported so far.
#[derive(Debug, Clone, Default)]
pub struct PeerLog(Arc<Mutex<Vec<(f64, PeerEvent)>>>);

impl PeerLog {
    /// Records an event.
    pub fn push(&self, at: f64, event: PeerEvent) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((at, event));
    }

    /// A copy of the events.
    pub fn events(&self) -> Vec<(f64, PeerEvent)> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// When some friend first came online (seconds since start).
    pub fn friend_online(&self) -> Option<f64> {
        self.events()
            .iter()
            .find(|(_, e)| matches!(e, PeerEvent::Friend(_, s) if *s != 0))
            .map(|(t, _)| *t)
    }

    /// How many times some friend came online.
    pub fn times_online(&self) -> usize {
        self.events()
            .iter()
            .filter(|(_, e)| matches!(e, PeerEvent::Friend(_, s) if *s != 0))
            .count()
    }

    /// Whether an event matching `what` was logged.
    pub fn has(&self, what: impl Fn(&PeerEvent) -> bool) -> bool {
        self.events().iter().any(|(_, e)| what(e))
    }

    /// The first message received.
    pub fn message(&self) -> Option<String> {
        self.events().iter().find_map(|(_, e)| match e {
            PeerEvent::Message(_, m) => Some(m.clone()),
            _ => None,
        })
    }
}

/// A c-toxcore 0.2.18 client (`auto_tests/tools/toxfriend.c`) as a child process.
pub struct CPeer {
    child: Child,
    _stdin: ChildStdin,
    /// Its Tox ID.
    pub tox_id: ToxId,
    /// Its DHT key.
    pub dht_pk: PublicKey,
    /// Its UDP port.
    pub port: u16,
    /// Its long-term secret key (to restart it as the same identity).
    pub secret: [u8; 32],
    /// What it reported.
    pub log: PeerLog,
}

/// How to start a c-toxcore client.
#[derive(Debug, Clone, Default)]
pub struct CPeerOptions {
    /// UDP port (0: c-toxcore's range).
    pub port: u16,
    /// DHT nodes: address and DHT key.
    pub bootstrap: Vec<(SocketAddr, PublicKey)>,
    /// Restart as this identity.
    pub secret: Option<[u8; 32]>,
    /// Send a friend request here.
    pub request: Option<ToxId>,
    /// Add this key as a friend without a request.
    pub add: Option<PublicKey>,
    /// Accept every friend request.
    pub accept: bool,
    /// LAN discovery on.
    pub lan: bool,
    /// Say this to each friend that comes online.
    pub say: Option<String>,
    /// Run inside this network namespace (`ip netns exec`).
    pub netns: Option<String>,
    /// Name, status, typing and an action to send.
    pub presence: Presence,
    /// Start from this save file.
    pub load: Option<std::path::PathBuf>,
    /// Write the save file here once set up.
    pub save: Option<std::path::PathBuf>,
    /// UDP off: friends are reached through [`Self::tcp_relays`] only.
    pub no_udp: bool,
    /// TCP relays (`tox_add_tcp_relay`): address and the relay's DHT key.
    pub tcp_relays: Vec<(SocketAddr, PublicKey)>,
}

/// What a peer says about itself and sends besides `say` (both implementations' options).
#[derive(Debug, Clone, Default)]
pub struct Presence {
    /// Our name.
    pub name: Option<String>,
    /// Our status message.
    pub status_message: Option<String>,
    /// Our user status (0 none, 1 away, 2 busy).
    pub status: Option<u8>,
    /// Tell each friend we are typing once it is online.
    pub typing: bool,
    /// An action to send each friend once it is online.
    pub act: Option<String>,
}

impl CPeer {
    /// Starts the client and waits for its READY line.
    pub fn start(bin: &Path, options: &CPeerOptions) -> Result<CPeer, CToxcoreError> {
        let mut cmd = match &options.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.arg(options.port.to_string()).arg("300");
        for (addr, pk) in &options.bootstrap {
            cmd.arg("--bootstrap")
                .arg(addr.ip().to_string())
                .arg(addr.port().to_string())
                .arg(pk.to_hex());
        }
        if let Some(sk) = &options.secret {
            cmd.arg("--secret-key").arg(hex::encode(sk));
        }
        if let Some(id) = &options.request {
            cmd.arg("--request")
                .arg(id.to_string())
                .arg("hello from c-toxcore");
        }
        if let Some(pk) = &options.add {
            cmd.arg("--add").arg(pk.to_hex());
        }
        if options.accept {
            cmd.arg("--accept");
        }
        if options.lan {
            cmd.arg("--lan");
        }
        if let Some(text) = &options.say {
            cmd.arg("--say").arg(text);
        }
        if let Some(text) = &options.presence.act {
            cmd.arg("--act").arg(text);
        }
        if let Some(text) = &options.presence.name {
            cmd.arg("--name").arg(text);
        }
        if let Some(text) = &options.presence.status_message {
            cmd.arg("--status-message").arg(text);
        }
        if let Some(k) = options.presence.status {
            cmd.arg("--status").arg(k.to_string());
        }
        if options.presence.typing {
            cmd.arg("--typing");
        }
        if let Some(path) = &options.load {
            cmd.arg("--load").arg(path);
        }
        if let Some(path) = &options.save {
            cmd.arg("--save").arg(path);
        }
        for (addr, pk) in &options.tcp_relays {
            cmd.arg("--tcp-relay")
                .arg(addr.ip().to_string())
                .arg(addr.port().to_string())
                .arg(pk.to_hex());
        }
        if options.no_udp {
            cmd.arg("--no-udp");
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| CToxcoreError::io(format!("starting {}", bin.display()), e))?;
        let bad = |what: &str| {
            CToxcoreError::io(what.to_string(), std::io::ErrorKind::InvalidData.into())
        };
        let stdin = child.stdin.take().ok_or_else(|| bad("toxfriend stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| bad("toxfriend stdout"))?;
        let mut lines = BufReader::new(stdout).lines();
        let ready = loop {
            match lines.next() {
                Some(Ok(line)) if line.starts_with("READY ") => break line,
                Some(Ok(_)) => {}
                _ => return Err(bad("toxfriend exited before READY")),
            }
        };
        let f: Vec<&str> = ready.split_whitespace().collect();
        let field = |i: usize| f.get(i).copied().unwrap_or("");
        let tox_id: ToxId = field(1)
            .parse()
            .map_err(|_| bad("toxfriend READY: Tox ID"))?;
        let dht_pk =
            PublicKey::from_hex(field(2)).ok_or_else(|| bad("toxfriend READY: DHT key"))?;
        let port = field(3).parse().map_err(|_| bad("toxfriend READY: port"))?;
        let mut secret = [0u8; 32];
        hex::decode_to_slice(field(4), &mut secret).map_err(|_| bad("toxfriend READY: key"))?;
        let log = PeerLog::default();
        let log2 = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let f: Vec<&str> = line.splitn(4, ' ').collect();
                let t = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
                let event = match f.first().copied().unwrap_or("") {
                    "SELF" => PeerEvent::SelfStatus(num(&f, 1)),
                    "REQUEST" => match PublicKey::from_hex(f.get(1).copied().unwrap_or("")) {
                        Some(pk) => PeerEvent::Request(pk),
                        None => continue,
                    },
                    "FRIEND" => PeerEvent::Friend(num(&f, 1) as u32, num(&f, 2)),
                    "MESSAGE" | "ACTION" | "NAME" | "STATUSMSG" => {
                        let text = line.splitn(3, ' ').nth(2).unwrap_or("").to_string();
                        let n = num(&f, 1) as u32;
                        let event = match f[0] {
                            "MESSAGE" => PeerEvent::Message(n, text),
                            "ACTION" => PeerEvent::Action(n, text),
                            "NAME" => PeerEvent::Name(n, text),
                            _ => PeerEvent::StatusMessage(n, text),
                        };
                        log2.push(0.0, event);
                        continue;
                    }
                    "SENT" => PeerEvent::Sent(num(&f, 1) as u32, num(&f, 2) as u32),
                    "RECEIPT" => PeerEvent::Receipt(num(&f, 1) as u32, num(&f, 2) as u32),
                    "STATUS" => PeerEvent::Status(num(&f, 1) as u32, num(&f, 2)),
                    "TYPING" => PeerEvent::Typing(num(&f, 1) as u32, num(&f, 2) != 0),
                    _ => continue,
                };
                let at = match event {
                    PeerEvent::Friend(..) => t(3),
                    PeerEvent::SelfStatus(..) | PeerEvent::Request(..) => t(2),
                    _ => 0.0,
                };
                log2.push(at, event);
            }
        });
        Ok(CPeer {
            child,
            _stdin: stdin,
            tox_id,
            dht_pk,
            port,
            secret,
            log,
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
}

impl Drop for CPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Field `i` of a line as a number (0 when missing or malformed).
fn num(fields: &[&str], i: usize) -> i32 {
    fields.get(i).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// The friend client, built once per source version; `None` (with a notice) when c-toxcore
/// is not installed and `CI` is not set. Under CI a missing c-toxcore is a failure: the
/// interop tests must run there.
pub fn friend_binary_or_skip() -> Option<std::path::PathBuf> {
    use super::{BuildOptions, PeerBinary};
    match PeerBinary::build_friend(&BuildOptions::default()) {
        Ok(bin) => Some(bin.path().to_path_buf()),
        Err(e) if e.is_missing_dependency() && !rustox_testkit::ci::under_ci() => {
            eprintln!(
                "NOTICE: {e}; c-toxcore interop test skipped (apt-get install libtoxcore-dev)"
            );
            None
        }
        Err(e) => panic!("cannot build the c-toxcore friend client: {e}"),
    }
}
