//! A file between two whole nodes in the simulator: Messenger, friend_connection,
//! net_crypto and the file layer together, as a client runs them, on a link profile, with a
//! chat message every 200 ms during the transfer.
//!
//! Alice dials Bob directly (no DHT or onion: the figure is the transfer's), offers a file
//! whose content is a function of its offset, and Bob accepts it into a sink that hashes what
//! it is given; the SHA-256 must equal the file id. On a relayed profile
//! ([`Profile::relayed`]) UDP between them is blocked and both know a relay host (as from
//! `tox_add_tcp_relay`, and Alice knows it is Bob's, as a friend's shared relays would tell
//! her): the session is set up out of band through the relay and runs over a route on its
//! two TCP legs ([`crate::relay_sim`]); the report then has [`RelayFigures`]. Efficiency is
//! computed as
//! `transfer::run_transfer` computes it for the transport alone (delivered bytes over the
//! time from the offer to the last byte, against the bottleneck's wire rate), so the two are
//! comparable on the same profile and seed.

use std::cell::RefCell;
use std::io::{Read, Seek, SeekFrom};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rustox_core::node::{DigestSlot, FriendNumber, Node, NodeEvent, NodeOptions, PreparedFile};
use rustox_core::relay::server::{RelayConfig, RelayServer};
use rustox_net_crypto::crypto::KeyPair;
use rustox_net_crypto::{ControllerKind, Timestamp, TransportConfig};
use rustox_simulator::{NodeId, Profile, Simulator};
use sha2::{Digest, Sha256};

use crate::hashing_sink::HashingSink;
use crate::relay_sim::figures::{RelayFigures, RttTrack};
use crate::relay_sim::{through_relay, RelayedPath, SimRelayServer};
use crate::tcp::StreamOptions;
use crate::tox_node::{SimToxNode, SimToxOptions};

/// Interval of the chat messages sent during the transfer.
const CHAT_EVERY: Duration = Duration::from_millis(200);

/// How long after Bob's accept reaches Alice the session's RTT starts being compared with the
/// truth, in RTTs (as `simulator/src/transfer.rs` waits after the first data packet): the estimator
/// needs a few samples before its smoothed value means anything (RFC 6298 §2).
const RTT_WARMUP_RTTS: u32 = 4;

/// How a transfer is set up beyond its profile, seed and size.
#[derive(Debug, Clone, Default)]
pub struct NodeTransferOptions {
    /// On a relayed profile: how the nodes' relay sockets are set. Nagle off
    /// (`TCP_NODELAY`) is the default, as rustox's relay drivers set them
    /// (`core/src/driver/tokio/relays.rs`, `relay_streams.rs`).
    pub node_sockets: StreamOptions,
    /// On a relayed profile: how the relay's sockets are set. Nagle off is the default, as
    /// `rustox bootstrap --tcp-ports` sets them (`core/src/driver/tcp_relay.rs`); c-toxcore's
    /// relay (tox-bootstrapd) leaves Nagle on.
    pub relay_sockets: StreamOptions,
    /// On a relayed profile: the first data segment of file data Alice's relay socket sends
    /// at or after this time is lost on her leg (fault injection, for head-of-line
    /// blocking).
    pub drop_on_alices_leg_at: Option<Timestamp>,
}

/// One run's outcome.
#[derive(Debug, Clone)]
pub struct NodeTransferReport {
    /// The file arrived whole and its SHA-256 matched.
    pub verified: bool,
    /// Delivered bytes ÷ (offer → last byte × the bottleneck's wire rate).
    pub efficiency: f64,
    /// Offer to last byte, seconds.
    pub seconds: f64,
    /// Delivered bytes ÷ (the receiver's accept reaching the sender → last byte × the
    /// bottleneck's wire rate): the same without the file protocol's offer/accept round
    /// trip, which the transport alone does not have.
    pub efficiency_from_accept: f64,
    /// 95th percentile of the chat messages' one-way latency during the transfer, ms.
    pub chat_p95_ms: Option<f64>,
    /// Chat messages that arrived.
    pub chat_messages: usize,
    /// Bytes Alice's friend Bob cost her when idle: 5 s after the file, its queues drained
    /// (`Node::friend_memory`).
    pub friend_bytes_idle: usize,
    /// The most they cost during the file (sampled every 10 ms of virtual time).
    pub friend_bytes_peak: usize,
    /// On a relayed profile: the session's RTT against the path's, and what the relay, its
    /// TCP legs and the transport did.
    pub relay: Option<RelayFigures>,
}

/// Byte `i` of the test file.
fn pattern(i: u64) -> u8 {
    (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8 ^ (i as u8)
}

/// The file's content, generated as it is read.
struct PatternSource {
    size: u64,
    pos: u64,
}

impl Read for PatternSource {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (self.size.saturating_sub(self.pos)).min(buf.len() as u64) as usize;
        for (k, b) in buf[..n].iter_mut().enumerate() {
            *b = pattern(self.pos + k as u64);
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for PatternSource {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.pos = match pos {
            SeekFrom::Start(p) => p,
            SeekFrom::End(d) => (self.size as i64 + d).max(0) as u64,
            SeekFrom::Current(d) => (self.pos as i64 + d).max(0) as u64,
        };
        Ok(self.pos)
    }
}

fn sha256_of(size: u64) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut src = PatternSource { size, pos: 0 };
    let mut buf = vec![0; 1 << 16];
    loop {
        let n = src.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    h.finalize().into()
}

/// What the two applications share with the harness.
#[derive(Default)]
struct Shared {
    offered_at: Option<Timestamp>,
    accepted_at: Option<Timestamp>,
    received: Option<(Timestamp, u64, bool)>,
    chat_latencies: Vec<f64>,
}

/// Alice's, Bob's and the relay host's UDP addresses.
fn addrs() -> [SocketAddr; 3] {
    [
        SocketAddr::from(([10, 0, 0, 1], 33445)),
        SocketAddr::from(([10, 0, 0, 2], 33445)),
        SocketAddr::from(([10, 0, 0, 100], 33445)),
    ]
}

/// A host's TCP address: its UDP address's host on the relay port c-toxcore's relays
/// listen on (and, for the nodes, the port their connections leave from).
fn tcp_addr(udp: SocketAddr) -> SocketAddr {
    SocketAddr::new(udp.ip(), 443)
}

/// Runs one transfer of `bytes` on `profile` with `seed`.
pub fn run_node_transfer(profile: &Profile, seed: u64, bytes: u64) -> NodeTransferReport {
    run_node_transfer_with(profile, seed, bytes, &NodeTransferOptions::default())
}

/// Runs one transfer of `bytes` on `profile` with `seed`, set up as `options` says.
pub fn run_node_transfer_with(
    profile: &Profile,
    seed: u64,
    bytes: u64,
    options: &NodeTransferOptions,
) -> NodeTransferReport {
    let mut link = profile.link_config();
    link.record_samples = false;
    let mut sim: Simulator<SimToxNode> = Simulator::new(seed, link);
    sim.set_trace_enabled(false);
    let t0 = Timestamp::ZERO;
    let (node_sockets, relay_sockets) = (options.node_sockets, options.relay_sockets);
    let node_options = |accept| SimToxOptions {
        node: NodeOptions {
            transport: TransportConfig {
                controller: ControllerKind::Bbr,
                ..TransportConfig::default()
            },
            accept_strangers: accept,
            ..NodeOptions::default()
        },
    };
    let [a_addr, b_addr, r_addr] = addrs();
    let mut alice = SimToxNode::new(t0, seed.wrapping_mul(31) + 1, node_options(false));
    let mut bob = SimToxNode::new(t0, seed.wrapping_mul(31) + 2, node_options(true));
    let friend = alice
        .node
        .add_friend_direct(t0, bob.node.public_key(), bob.node.dht_public_key(), b_addr)
        .expect("add Bob");
    let relay_host = profile.relayed.then(|| {
        let relay_seed = seed.wrapping_mul(31) + 3;
        let mut host = SimToxNode::new(t0, relay_seed, node_options(false));
        let keys = KeyPair::generate(&mut ChaCha20Rng::seed_from_u64(relay_seed ^ 0x7e1a));
        let relay_pk = keys.public;
        host.open_tcp_port(tcp_addr(r_addr), relay_sockets);
        host.serve_relay(SimRelayServer::new(
            RelayServer::new(keys, RelayConfig::default()),
            relay_seed,
            relay_sockets,
        ));
        for (node, addr) in [(&mut alice, a_addr), (&mut bob, b_addr)] {
            node.open_tcp_port(tcp_addr(addr), node_sockets);
            node.node
                .add_tcp_relay(t0, tcp_addr(r_addr), relay_pk)
                .expect("a relay");
        }
        alice
            .node
            .add_friend_relay(t0, friend, tcp_addr(r_addr), relay_pk)
            .expect("Bob's relay");
        if let (Some(at), Some(port)) = (options.drop_on_alices_leg_at, alice.tcp_mut()) {
            port.clients_mut().drop_data_segment_at(at);
        }
        host
    });
    let shared = Rc::new(RefCell::new(Shared::default()));
    let sha = sha256_of(bytes);
    let s_a = shared.clone();
    alice.react = Some(Box::new(move |node: &mut Node, now, event: &NodeEvent| {
        if let NodeEvent::FileControl {
            control: rustox_file_transfer::FileControl::Resume,
            ..
        } = event
        {
            s_a.borrow_mut().accepted_at.get_or_insert(now);
        }
        if let NodeEvent::FriendConnection { online: true, .. } = event {
            let file = PreparedFile {
                source: Box::new(PatternSource {
                    size: bytes,
                    pos: 0,
                }),
                size: bytes,
                sha256: sha,
            };
            if node.send_file(now, friend, file, b"bench.bin").is_ok() {
                s_a.borrow_mut().offered_at = Some(now);
            }
        }
    }));
    let s_b = shared.clone();
    bob.react = Some(Box::new(
        move |node: &mut Node, now, event: &NodeEvent| match event {
            NodeEvent::FileOffered(offer) => {
                let digest: DigestSlot = Arc::new(Mutex::new(None));
                let sink = HashingSink::new(digest.clone());
                let _ =
                    node.accept_file(now, offer.friend, offer.file, Box::new(sink), Some(digest));
            }
            NodeEvent::FileReceived {
                bytes,
                verification,
                ..
            } => s_b.borrow_mut().received = Some((now, *bytes, verification.is_verified())),
            NodeEvent::Message { text, .. } => {
                if let Some(sent) = std::str::from_utf8(text)
                    .ok()
                    .and_then(|t| t.parse::<u64>().ok())
                {
                    let latency = now.as_micros().saturating_sub(sent) as f64 / 1000.0;
                    s_b.borrow_mut().chat_latencies.push(latency);
                }
            }
            _ => {}
        },
    ));
    let host_addrs = |udp: SocketAddr| {
        if profile.relayed {
            vec![udp, tcp_addr(udp)]
        } else {
            vec![udp]
        }
    };
    let a = sim
        .add_node(host_addrs(a_addr), alice)
        .expect("Alice's address");
    let b = sim
        .add_node(host_addrs(b_addr), bob)
        .expect("Bob's address");
    let path: Option<RelayedPath> = relay_host.map(|host| {
        let r = sim
            .add_node(host_addrs(r_addr), host)
            .expect("the relay's address");
        through_relay(&mut sim, profile, a, b, r)
    });
    let mut rtt = path.map(|_| RttTrack::new(profile));
    let capacity = profile.payload_capacity_bytes_per_sec();
    let limit = t0 + Duration::from_secs_f64(60.0 + 4.0 * bytes as f64 / capacity);
    let mut next_chat = t0;
    let mut next_sample = t0;
    let mut peak = 0usize;
    while shared.borrow().received.is_none() && sim.now() < limit {
        let offered = shared.borrow().offered_at.is_some();
        if sim.now() >= next_sample {
            next_sample = sim.now() + Duration::from_millis(10);
            let bytes = sim.node(a).node.friend_memory(friend).unwrap_or(0);
            if offered {
                peak = peak.max(bytes);
            }
        }
        if let (Some(track), Some(accepted)) = (rtt.as_mut(), shared.borrow().accepted_at) {
            let warm = accepted + profile.rtt * RTT_WARMUP_RTTS;
            track.sample(sim.now(), warm, sim.node(a).node.session_stats(friend));
        }
        if offered && sim.now() >= next_chat {
            next_chat = sim.now() + CHAT_EVERY;
            sim.with_node(a, |n, now| {
                let _ = n.node.send_message(
                    now,
                    FriendNumber(friend.0),
                    now.as_micros().to_string().as_bytes(),
                );
            });
        }
        match sim.step() {
            Ok(true) => {}
            _ => break,
        }
    }
    let finished = sim.now();
    let relay = match (path, rtt) {
        (Some(path), Some(track)) => Some(collect(&sim, &path, a, b, friend, track, finished)),
        _ => None,
    };
    let quiet = sim.now() + Duration::from_secs(5);
    let _ = sim.run_until(quiet);
    let idle = sim.node(a).node.friend_memory(friend).unwrap_or(0);
    let s = shared.borrow();
    let (done, delivered, verified) = s.received.unwrap_or((sim.now(), 0, false));
    let seconds = s.offered_at.map_or(0.0, |o| (done - o).as_secs_f64());
    let from_accept = s.accepted_at.map_or(0.0, |a| (done - a).as_secs_f64());
    let mut lat = s.chat_latencies.clone();
    lat.sort_by(f64::total_cmp);
    NodeTransferReport {
        verified: verified && delivered == bytes,
        efficiency: if seconds > 0.0 {
            delivered as f64 / (seconds * profile.rate_bytes_per_sec())
        } else {
            0.0
        },
        seconds,
        efficiency_from_accept: if from_accept > 0.0 {
            delivered as f64 / (from_accept * profile.rate_bytes_per_sec())
        } else {
            0.0
        },
        chat_p95_ms: (!lat.is_empty())
            .then(|| lat[((lat.len() - 1) as f64 * 0.95).round() as usize]),
        chat_messages: lat.len(),
        friend_bytes_idle: idle,
        friend_bytes_peak: peak,
        relay,
    }
}

/// The relayed run's figures at the end of the file.
fn collect(
    sim: &Simulator<SimToxNode>,
    path: &RelayedPath,
    a: NodeId,
    b: NodeId,
    friend: FriendNumber,
    rtt: RttTrack,
    now: Timestamp,
) -> RelayFigures {
    let bob_friend = sim
        .node(b)
        .node
        .friends()
        .first()
        .copied()
        .unwrap_or(FriendNumber(0));
    RelayFigures::collect(
        rtt,
        now,
        sim.node(a),
        sim.node(b),
        sim.node(path.relay),
        friend,
        bob_friend,
    )
}
