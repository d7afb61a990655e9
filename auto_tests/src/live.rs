//! rustox on real sockets inside a test or benchmark process: a [`RustoxPeer`] is a whole
//! `Node` run by the core's tokio session driver on a thread of its own, logging what a
//! client would show ([`PeerLog`]); [`rustox_bootstrap`] starts what `rustox bootstrap` runs.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rand::rngs::{OsRng, StdRng};
use rand::SeedableRng;
use rustox_core::dht::DhtConfig;
use rustox_core::driver::workers::{NodeRunner, RunnerConfig};
use rustox_core::driver::{Clock, DriverOptions};
use rustox_core::friend::ToxId;
use rustox_core::node::{Node, NodeEvent, NodeOptions};
use rustox_net_crypto::crypto::{KeyPair, PublicKey, SecretKey};
use rustox_net_crypto::Timestamp;

use crate::ctoxcore::friend::{PeerEvent, PeerLog, Presence};

/// A rustox bootstrap node (what `rustox bootstrap` runs: DHT and onion server) on
/// 127.0.0.1:`port`.
pub fn rustox_bootstrap(port: u16) -> std::io::Result<NodeRunner> {
    start_bootstrap_node(port, None)
}

/// A rustox bootstrap node that also serves a TCP relay on 127.0.0.1:`tcp_port`, as
/// `rustox bootstrap --tcp-ports` does; `relay` sets its limits.
pub fn rustox_relay(
    port: u16,
    tcp_port: u16,
    relay: rustox_core::relay::server::RelayConfig,
) -> std::io::Result<NodeRunner> {
    start_bootstrap_node(
        port,
        Some(rustox_core::driver::tcp_relay::TcpRelayConfig {
            listen: vec![SocketAddr::from(([127, 0, 0, 1], tcp_port))],
            relay,
        }),
    )
}

/// A TCP relay (its DHT node at 127.0.0.1:`base`, the relay at `base + 1`) and two rustox
/// DHT nodes (`base + 2`, `base + 3`) bootstrapped off it, all on loopback: with UDP off,
/// clients use the DHT nodes only as onion hops behind the relay.
pub struct RelayNetwork {
    _nodes: Vec<NodeRunner>,
    /// The relay's TCP address and DHT key.
    pub relay: (SocketAddr, PublicKey),
    /// The DHT nodes: the relay's, then the two others.
    pub dht: Vec<(SocketAddr, PublicKey)>,
}

impl RelayNetwork {
    /// A rustox relay (`rustox bootstrap --tcp-ports` in process) and the two DHT nodes.
    pub fn rustox(base: u16) -> RelayNetwork {
        let relay = rustox_relay(base, base + 1, Default::default()).expect("start a rustox relay");
        let key = relay.public_key();
        RelayNetwork::behind(base, key, vec![relay])
    }

    /// The two DHT nodes behind a relay already running at `base` with DHT key `key`;
    /// `nodes` (the relay, when it is ours) are kept running with them.
    pub fn behind(base: u16, key: PublicKey, mut nodes: Vec<NodeRunner>) -> RelayNetwork {
        let udp = SocketAddr::from(([127, 0, 0, 1], base));
        let mut dht = vec![(udp, key)];
        for port in [base + 2, base + 3] {
            let n = rustox_bootstrap(port).expect("start a DHT node");
            n.bootstrap(udp, key);
            dht.push((n.local_addr(), n.public_key()));
            nodes.push(n);
        }
        RelayNetwork {
            _nodes: nodes,
            relay: (SocketAddr::from(([127, 0, 0, 1], base + 1)), key),
            dht,
        }
    }
}

fn start_bootstrap_node(
    port: u16,
    tcp: Option<rustox_core::driver::tcp_relay::TcpRelayConfig>,
) -> std::io::Result<NodeRunner> {
    NodeRunner::start(
        KeyPair::generate(&mut StdRng::from_entropy()),
        RunnerConfig {
            tcp,
            ..RunnerConfig::loopback(port)
        },
    )
}

/// Polls `what` every 50 ms until it holds or `limit` passes; whether it held.
pub fn wait_until(limit: Duration, mut what: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + limit;
    while std::time::Instant::now() < end {
        if what() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    what()
}

/// How to start a rustox peer.
#[derive(Debug, Clone, Default)]
pub struct RustoxOptions {
    /// UDP port (0: any).
    pub port: u16,
    /// Address to bind; `None`: 127.0.0.1.
    pub bind_ip: Option<std::net::IpAddr>,
    /// DHT nodes: address and DHT key.
    pub bootstrap: Vec<(SocketAddr, PublicKey)>,
    /// Long-term keys (to restart as the same identity); `None`: fresh ones.
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
    /// Name, status, typing and an action to send.
    pub presence: Presence,
    /// Offer this content (file id = its SHA-256) to each friend once it is online.
    pub send_file: Option<Arc<Vec<u8>>>,
    /// The kind it is offered as (data unless set: an avatar's id is its SHA-256 too).
    pub send_kind: Option<rustox_file_transfer::FileKind>,
    /// Accept every offered file into memory, checking it against its SHA-256 file id.
    pub receive_files: bool,
    /// Start as this profile (identity, friends); `secret` and `add` still apply.
    pub profile: Option<rustox_core::savedata::Profile>,
    /// UDP off ([`NodeOptions::udp_disabled`]): friends are reached through
    /// [`Self::tcp_relays`] only.
    pub no_udp: bool,
    /// TCP relays (`Node::add_tcp_relay`): address and the relay's key.
    pub tcp_relays: Vec<(SocketAddr, PublicKey)>,
    /// Every relay connection through this proxy ([`NodeOptions::proxy`]; no UDP).
    pub proxy: Option<rustox_core::proxy::ProxyConfig>,
}

/// A rustox node on a real socket, run by the tokio session driver on a thread of its own.
pub struct RustoxPeer {
    /// Its Tox ID.
    pub tox_id: ToxId,
    /// Its DHT key.
    pub dht_pk: PublicKey,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its long-term secret key.
    pub secret: [u8; 32],
    /// What it reported.
    pub log: PeerLog,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

struct PeerApp {
    log: PeerLog,
    started: Timestamp,
    say: Option<String>,
    presence: Presence,
    stop: Arc<AtomicBool>,
    /// Offered to each friend once it is online.
    send_file: Option<Arc<Vec<u8>>>,
    send_kind: rustox_file_transfer::FileKind,
    /// Offers are accepted into memory and checked against their SHA-256 file id.
    receive_files: bool,
    /// When the next diagnostic line is due (`RUSTOX_LIVE_TRACE` set), else `None`.
    next_trace: Option<Timestamp>,
}

impl rustox_core::driver::tokio::session::App for PeerApp {
    type Output = ();

    fn on_event(&mut self, node: &mut Node, now: Timestamp, event: NodeEvent) -> Option<()> {
        let at = (now - self.started).as_secs_f64();
        match event {
            NodeEvent::SelfConnection { connected } => self
                .log
                .push(at, PeerEvent::SelfStatus(if connected { 2 } else { 0 })),
            NodeEvent::FriendRequest { pk, .. } => self.log.push(at, PeerEvent::Request(pk)),
            NodeEvent::FriendAdded { pk, .. } => self.log.push(at, PeerEvent::Request(pk)),
            NodeEvent::FriendConnection {
                friend,
                online,
                addr,
            } => {
                // c-toxcore's TOX_CONNECTION numbers: a session without a UDP address runs
                // through TCP relays.
                let status = match (online, addr) {
                    (false, _) => 0,
                    (true, None) => 1,
                    (true, Some(_)) => 2,
                };
                self.log.push(at, PeerEvent::Friend(friend.0, status));
                if !online {
                    return None;
                }
                if let Some(text) = &self.say {
                    if let Ok(id) = node.send_message(now, friend, text.as_bytes()) {
                        self.log.push(at, PeerEvent::Sent(friend.0, id));
                    }
                }
                if let Some(text) = &self.presence.act {
                    if let Ok(id) = node.send_message_kind(
                        now,
                        friend,
                        rustox_core::node::MessageKind::Action,
                        text.as_bytes(),
                    ) {
                        self.log.push(at, PeerEvent::Sent(friend.0, id));
                    }
                }
                if self.presence.typing {
                    let _ = node.set_typing(now, friend, true);
                }
                if let Some(content) = &self.send_file {
                    use sha2::Digest;
                    let file = rustox_core::node::PreparedFile {
                        source: Box::new(std::io::Cursor::new(content.as_ref().clone())),
                        size: content.len() as u64,
                        sha256: sha2::Sha256::digest(content.as_slice()).into(),
                    };
                    let _ =
                        node.send_file_kind(now, friend, self.send_kind, file, b"from-rustox.bin");
                }
            }
            NodeEvent::Message { friend, kind, text } => {
                let text = String::from_utf8_lossy(&text).into_owned();
                self.log.push(
                    at,
                    match kind {
                        rustox_core::node::MessageKind::Action => PeerEvent::Action(friend.0, text),
                        rustox_core::node::MessageKind::Normal => {
                            PeerEvent::Message(friend.0, text)
                        }
                    },
                )
            }
            NodeEvent::FileOffered(offer) if self.receive_files => {
                self.log.push(
                    at,
                    PeerEvent::FileOffered(offer.friend.0, offer.kind.to_u32()),
                );
                let digest = rustox_core::node::DigestSlot::default();
                let sink = crate::hashing_sink::HashingSink::new(digest.clone());
                let _ =
                    node.accept_file(now, offer.friend, offer.file, Box::new(sink), Some(digest));
            }
            NodeEvent::FileReceived {
                friend,
                bytes,
                verification,
                ..
            } => self.log.push(
                at,
                PeerEvent::FileReceived(friend.0, bytes, verification.is_verified()),
            ),
            NodeEvent::FileSent { friend, bytes, .. } => {
                self.log.push(at, PeerEvent::FileSent(friend.0, bytes))
            }
            NodeEvent::FileFailed { friend, reason, .. } => {
                self.log.push(at, PeerEvent::FileFailed(friend.0, reason))
            }
            NodeEvent::ReadReceipt { friend, message_id } => {
                self.log.push(at, PeerEvent::Receipt(friend.0, message_id))
            }
            NodeEvent::FriendName { friend, name } => self.log.push(
                at,
                PeerEvent::Name(friend.0, String::from_utf8_lossy(&name).into_owned()),
            ),
            NodeEvent::FriendStatusMessage { friend, text } => self.log.push(
                at,
                PeerEvent::StatusMessage(friend.0, String::from_utf8_lossy(&text).into_owned()),
            ),
            NodeEvent::FriendStatus { friend, status } => self
                .log
                .push(at, PeerEvent::Status(friend.0, i32::from(status.to_byte()))),
            NodeEvent::FriendTyping { friend, typing } => {
                self.log.push(at, PeerEvent::Typing(friend.0, typing))
            }
            _ => {}
        }
        None
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        None
    }

    fn after_io(&mut self, node: &mut Node, now: Timestamp) {
        self.trace(node, now);
    }

    fn on_timeout(&mut self, node: &mut Node, now: Timestamp) -> Option<()> {
        self.trace(node, now);
        None
    }
}

impl PeerApp {
    /// With `RUSTOX_LIVE_TRACE` set, the node's counters and friend 0's session once a
    /// second on stderr (a diagnostic for interop runs).
    fn trace(&mut self, node: &mut Node, now: Timestamp) {
        let Some(next) = self.next_trace else { return };
        if now < next {
            return;
        }
        self.next_trace = Some(now + std::time::Duration::from_secs(1));
        let at = (now - self.started).as_secs_f64();
        let friend = rustox_core::node::FriendNumber(0);
        eprintln!(
            "[{at:7.2}] stats {:?}\n          io {:?}\n          path {:?} session {:?}",
            node.stats(),
            node.io_counters(),
            node.friend_data_path(now, friend),
            node.session_stats(friend)
        );
    }
}

impl RustoxPeer {
    /// Starts the node and returns once it is bound.
    pub fn start(options: RustoxOptions) -> Result<RustoxPeer, LiveError> {
        let keys = match (options.secret, &options.profile) {
            (Some(sk), _) => KeyPair::from_secret(SecretKey::from_bytes(sk)),
            (None, Some(p)) => KeyPair::from_secret(p.secret_key.clone()),
            (None, None) => KeyPair::generate(&mut OsRng),
        };
        let secret = keys.secret.to_bytes();
        let ip = options
            .bind_ip
            .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
        let socket = rustox_core::driver::socket::bind(SocketAddr::new(ip, options.port))?;
        let addr = socket.local_addr().map_err(LiveError::Io)?;
        let clock = Clock::default();
        let node_options = NodeOptions {
            dht: DhtConfig {
                lan_discovery: options.lan,
                ..DhtConfig::default()
            },
            accept_strangers: options.accept,
            unix_time: rustox_core::driver::clock::unix_now(),
            udp_disabled: options.no_udp,
            proxy: options.proxy,
            ..NodeOptions::default()
        };
        let mut node = match &options.profile {
            Some(p) => Node::from_profile(
                clock.now(),
                p,
                node_options,
                rustox_core::node::system_rng(),
            ),
            None => Node::new(
                clock.now(),
                keys,
                node_options,
                rustox_core::node::system_rng(),
            ),
        };
        let now = clock.now();
        if options.lan {
            node.set_lan_broadcasts(rustox_core::driver::socket::interface_broadcasts());
        }
        for (a, pk) in &options.bootstrap {
            node.bootstrap(now, *a, *pk);
        }
        for (a, pk) in &options.tcp_relays {
            node.add_tcp_relay(now, *a, *pk)
                .map_err(|e| LiveError::Relay(*a, e))?;
        }
        if let Some(id) = &options.request {
            node.add_friend(now, id, b"hello from rustox")?;
        }
        if let Some(pk) = options.add {
            node.add_friend_norequest(now, pk)?;
        }
        if let Some(name) = &options.presence.name {
            node.set_name(now, name.as_bytes())?;
        }
        if let Some(text) = &options.presence.status_message {
            node.set_status_message(now, text.as_bytes())?;
        }
        if let Some(k) = options.presence.status {
            if let Some(status) = rustox_core::node::UserStatus::from_byte(k) {
                node.set_status(now, status);
            }
        }
        let tox_id = node.tox_id();
        let dht_pk = node.dht_public_key();
        let log = PeerLog::default();
        let stop = Arc::new(AtomicBool::new(false));
        let mut app = PeerApp {
            log: log.clone(),
            started: now,
            say: options.say.clone(),
            presence: options.presence.clone(),
            send_file: options.send_file.clone(),
            send_kind: options
                .send_kind
                .unwrap_or(rustox_file_transfer::FileKind::Data),
            receive_files: options.receive_files,
            stop: stop.clone(),
            next_trace: std::env::var_os("RUSTOX_LIVE_TRACE").map(|_| now),
        };
        let thread = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                let Ok(socket) = tokio::net::UdpSocket::from_std(socket) else {
                    return;
                };
                let stop = app.stop.clone();
                let run = rustox_core::driver::tokio::session::run(
                    &mut node,
                    &socket,
                    clock,
                    &mut app,
                    DriverOptions::default(),
                );
                tokio::select! {
                    _ = run => {}
                    _ = async {
                        while !stop.load(Ordering::Relaxed) {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    } => {}
                }
            });
        });
        Ok(RustoxPeer {
            tox_id,
            dht_pk,
            addr,
            secret,
            log,
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the node and closes its socket.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RustoxPeer {
    fn drop(&mut self) {
        self.halt();
    }
}

/// Why a live peer could not start.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The socket.
    #[error(transparent)]
    Bind(#[from] rustox_core::driver::socket::BindError),
    /// Reading the socket's address.
    #[error("socket: {0}")]
    Io(std::io::Error),
    /// Adding the friend.
    #[error(transparent)]
    Friend(#[from] rustox_core::friend::FriendAddError),
    /// Adding the friend by key.
    #[error(transparent)]
    Node(#[from] rustox_core::node::NodeError),
    /// Adding a TCP relay.
    #[error("TCP relay {0}: {1}")]
    Relay(SocketAddr, rustox_core::relay::client::AddRelayError),
}
