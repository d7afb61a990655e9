//! Small nodes for testing the simulator itself (and for load tests that need no protocol):
//! a constant-rate [`Flooder`], a [`Sink`] that checks sequence numbers, and a [`Pinger`]
//! that measures round trips against [`Echo`]s.
//!
//! Datagram layout used by all of them: `[kind u8][seq u64 LE][sent_at µs u64 LE][filler]`.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::Timestamp;

use rustox_simulator::SimNode;

const KIND_DATA: u8 = 1;
const KIND_PING: u8 = 2;
const KIND_PONG: u8 = 3;
/// Bytes of the toy header.
pub const TOY_HEADER: usize = 17;

fn encode(kind: u8, seq: u64, at: Timestamp, size: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(size.max(TOY_HEADER));
    v.push(kind);
    v.extend_from_slice(&seq.to_le_bytes());
    v.extend_from_slice(&at.as_micros().to_le_bytes());
    v.resize(size.max(TOY_HEADER), (seq & 0xff) as u8);
    v
}

fn decode(bytes: &[u8]) -> Option<(u8, u64, Timestamp)> {
    if bytes.len() < TOY_HEADER {
        return None;
    }
    let seq = u64::from_le_bytes(bytes[1..9].try_into().ok()?);
    let at = u64::from_le_bytes(bytes[9..17].try_into().ok()?);
    Some((bytes[0], seq, Timestamp::from_micros(at)))
}

/// Sends `count` datagrams of `size` bytes to `dst`, one every `interval`.
#[derive(Debug)]
pub struct Flooder {
    dst: SocketAddr,
    size: usize,
    interval: Duration,
    count: u64,
    sent: u64,
    next: Timestamp,
}

impl Flooder {
    /// A flooder starting at time zero.
    pub fn new(dst: SocketAddr, size: usize, interval: Duration, count: u64) -> Self {
        Flooder {
            dst,
            size,
            interval,
            count,
            sent: 0,
            next: Timestamp::ZERO,
        }
    }

    /// Datagrams sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

impl SimNode for Flooder {
    fn handle_datagram(&mut self, _: Timestamp, _: SocketAddr, _: SocketAddr, _: &[u8]) {}
    fn handle_timeout(&mut self, _: Timestamp) {}
    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        if self.sent >= self.count || now < self.next {
            return None;
        }
        let d = encode(KIND_DATA, self.sent, now, self.size);
        self.sent += 1;
        self.next += self.interval;
        Some((self.dst, d))
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        (self.sent < self.count).then_some(self.next)
    }
}

/// Receives flooder datagrams and records sequence numbers, arrival times and transit times.
#[derive(Debug, Default)]
pub struct Sink {
    /// (seq, arrival, transit) of every datagram received, in arrival order.
    pub received: Vec<(u64, Timestamp, Duration)>,
    /// Datagrams that did not parse (e.g. corrupted headers).
    pub malformed: u64,
    /// If set, the invariant check fails when sequence numbers go backwards.
    pub require_order: bool,
}

impl SimNode for Sink {
    fn handle_datagram(&mut self, now: Timestamp, _: SocketAddr, _: SocketAddr, bytes: &[u8]) {
        match decode(bytes) {
            Some((KIND_DATA, seq, at)) => self.received.push((seq, now, now - at)),
            _ => self.malformed += 1,
        }
    }
    fn handle_timeout(&mut self, _: Timestamp) {}
    fn poll_transmit(&mut self, _: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        None
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        None
    }
    fn check_invariants(&self) -> Result<(), String> {
        if self.require_order {
            if let [.., a, b] = self.received.as_slice() {
                if b.0 <= a.0 {
                    return Err(format!("datagram {} arrived after {}", b.0, a.0));
                }
            }
        }
        Ok(())
    }
}

/// Answers pings.
#[derive(Debug, Default)]
pub struct Echo {
    replies: VecDeque<(SocketAddr, Vec<u8>)>,
}

impl SimNode for Echo {
    fn handle_datagram(&mut self, _: Timestamp, from: SocketAddr, _: SocketAddr, bytes: &[u8]) {
        if let Some((KIND_PING, _, _)) = decode(bytes) {
            let mut reply = bytes.to_vec();
            reply[0] = KIND_PONG;
            self.replies.push_back((from, reply));
        }
    }
    fn handle_timeout(&mut self, _: Timestamp) {}
    fn poll_transmit(&mut self, _: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        self.replies.pop_front()
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        None
    }
}

/// Pings a random peer from its list every `interval` and records round-trip times.
#[derive(Debug)]
pub struct Pinger {
    peers: Vec<SocketAddr>,
    interval: Duration,
    rng: ChaCha8Rng,
    next: Timestamp,
    seq: u64,
    outbox: VecDeque<(SocketAddr, Vec<u8>)>,
    /// Measured round trips.
    pub rtts: Vec<Duration>,
    /// Pings answered (including answers to other pingers' pings is impossible: each
    /// pinger only counts pongs it can parse).
    pub pongs: u64,
    inbox_echo: Echo,
}

impl Pinger {
    /// A pinger that also answers pings (so pingers can ping each other).
    pub fn new(peers: Vec<SocketAddr>, interval: Duration, mut rng: ChaCha8Rng) -> Self {
        let first = Timestamp::from_micros(rng.gen_range(0..interval.as_micros().max(1) as u64));
        Pinger {
            peers,
            interval,
            rng,
            next: first,
            seq: 0,
            outbox: VecDeque::new(),
            rtts: Vec::new(),
            pongs: 0,
            inbox_echo: Echo::default(),
        }
    }

    /// Pings sent.
    pub fn sent(&self) -> u64 {
        self.seq
    }
}

impl SimNode for Pinger {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, to: SocketAddr, bytes: &[u8]) {
        match decode(bytes) {
            Some((KIND_PONG, _, at)) => {
                self.pongs += 1;
                self.rtts.push(now - at);
            }
            Some((KIND_PING, _, _)) => self.inbox_echo.handle_datagram(now, from, to, bytes),
            _ => {}
        }
    }
    fn handle_timeout(&mut self, now: Timestamp) {
        while self.next <= now && !self.peers.is_empty() {
            let peer = self.peers[self.rng.gen_range(0..self.peers.len())];
            self.outbox
                .push_back((peer, encode(KIND_PING, self.seq, now, 64)));
            self.seq += 1;
            self.next += self.interval;
        }
    }
    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        self.inbox_echo
            .poll_transmit(now)
            .or_else(|| self.outbox.pop_front())
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        (!self.peers.is_empty()).then_some(self.next)
    }
}
