//! A file between two whole nodes in the simulator (issue #12): Messenger, friend_connection,
//! net_crypto and the file layer together, as a client runs them, on a link profile, with a
//! chat message every 200 ms during the transfer.
//!
//! Alice dials Bob directly (no DHT or onion: the figure is the transfer's), offers a file
//! whose content is a function of its offset, and Bob accepts it into a sink that hashes what
//! it is given; the SHA-256 must equal the file id. Efficiency is computed as
//! `transfer::run_transfer` computes it for the transport alone (delivered bytes over the
//! time from the offer to the last byte, against the bottleneck's wire rate), so the two are
//! comparable on the same profile and seed.

use std::cell::RefCell;
use std::io::{Read, Seek, SeekFrom};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustox_core::node::{DigestSlot, FriendNumber, Node, NodeEvent, NodeOptions, PreparedFile};
use rustox_net_crypto::{ControllerKind, Timestamp, TransportConfig};
use sha2::{Digest, Sha256};

use crate::hashing_sink::HashingSink;
use crate::profiles::Profile;
use crate::sim::Simulator;
use crate::tox_node::{SimToxNode, SimToxOptions};

/// Interval of the chat messages sent during the transfer.
const CHAT_EVERY: Duration = Duration::from_millis(200);

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

/// Runs one transfer of `bytes` on `profile` with `seed`.
pub fn run_node_transfer(profile: &Profile, seed: u64, bytes: u64) -> NodeTransferReport {
    let mut link = profile.link_config();
    link.record_samples = false;
    let mut sim: Simulator<SimToxNode> = Simulator::new(seed, link);
    sim.set_trace_enabled(false);
    let t0 = Timestamp::ZERO;
    let options = |accept| SimToxOptions {
        node: NodeOptions {
            transport: TransportConfig {
                controller: ControllerKind::Bbr,
                ..TransportConfig::default()
            },
            accept_strangers: accept,
            ..NodeOptions::default()
        },
    };
    let (a_addr, b_addr) = (
        SocketAddr::from(([10, 0, 0, 1], 33445)),
        SocketAddr::from(([10, 0, 0, 2], 33445)),
    );
    let mut alice = SimToxNode::new(t0, seed.wrapping_mul(31) + 1, options(false));
    let mut bob = SimToxNode::new(t0, seed.wrapping_mul(31) + 2, options(true));
    let friend = alice
        .node
        .add_friend_direct(t0, bob.node.public_key(), bob.node.dht_public_key(), b_addr)
        .expect("add Bob");
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
                bytes, verified, ..
            } => s_b.borrow_mut().received = Some((now, *bytes, *verified)),
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
    let a = sim.add_node(vec![a_addr], alice).expect("Alice's address");
    let _ = sim.add_node(vec![b_addr], bob).expect("Bob's address");
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
    }
}
