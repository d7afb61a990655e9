//! A two-transport harness in virtual time (quinn's `Pair`, docs/conventions.md): A sends a stream of
//! numbered bulk packets (plus occasional control packets) to B through an in-memory link
//! with delay, a bottleneck, random loss, duplication and reordering; B checks in-order,
//! exactly-once delivery. Both sides run full duplex (B's requests flow back to A).
//! Included by the `transport_*.rs` test files with `#[path]`.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::transport::{
    ControllerKind, PacketClass, Transport, TransportConfig, TransportStats,
};
use rustox_net_crypto::Timestamp;

/// A frame on the wire (what connection/framing.rs would encrypt).
#[derive(Debug, Clone)]
pub enum Frame {
    /// A lossless data packet: [buffer_start][packet_number][payload].
    Data {
        buffer_start: u32,
        pn: u32,
        payload: Vec<u8>,
    },
    /// A request packet: [buffer_start][buffer_end][0x01 ...].
    Request {
        buffer_start: u32,
        buffer_end: u32,
        payload: Vec<u8>,
    },
}

impl Frame {
    fn wire_len(&self) -> u64 {
        // 0x1b + nonce + MAC + header, as net_crypto's framing: ~ payload + 27 + padding.
        let p = match self {
            Frame::Data { payload, .. } | Frame::Request { payload, .. } => payload.len(),
        };
        (p + 27 + 28) as u64
    }
}

/// One direction of a link.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    pub delay: Duration,
    pub jitter: Duration,
    /// Bytes per second; 0 = unlimited.
    pub rate: u64,
    /// Bottleneck buffer in bytes (drop-tail).
    pub buffer: u64,
    pub loss: f64,
    pub duplicate: f64,
    /// Drop the first this-many data frames (scripted loss of the first packets).
    pub drop_first_data: u64,
}

impl LinkConfig {
    pub fn simple(delay_ms: u64) -> Self {
        Self {
            delay: Duration::from_millis(delay_ms),
            jitter: Duration::ZERO,
            rate: 0,
            buffer: u64::MAX,
            loss: 0.0,
            duplicate: 0.0,
            drop_first_data: 0,
        }
    }
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct InFlight {
    at: Timestamp,
    seq: u64,
    #[allow(clippy::struct_field_names)]
    idx: usize,
}

pub struct Link {
    pub cfg: LinkConfig,
    free_at: Timestamp,
    queue: BinaryHeap<Reverse<(Timestamp, u64)>>,
    frames: std::collections::HashMap<u64, (Timestamp, Frame)>,
    /// Transit time of the most recently delivered frame (RTT truth for traces).
    pub last_transit: Duration,
    seq: u64,
    pub dropped: u64,
    pub dropped_data_bytes: u64,
    data_seen: u64,
}

impl Link {
    pub fn new(cfg: LinkConfig) -> Self {
        Self {
            cfg,
            free_at: Timestamp::ZERO,
            queue: BinaryHeap::new(),
            frames: Default::default(),
            last_transit: Duration::ZERO,
            seq: 0,
            dropped: 0,
            dropped_data_bytes: 0,
            data_seen: 0,
        }
    }

    fn push(&mut self, sent: Timestamp, at: Timestamp, f: Frame) {
        self.seq += 1;
        self.frames.insert(self.seq, (sent, f));
        self.queue.push(Reverse((at, self.seq)));
    }

    pub fn send(&mut self, now: Timestamp, f: Frame, rng: &mut ChaCha8Rng) {
        let size = f.wire_len();
        let mut leave = now;
        if self.cfg.rate > 0 {
            let start = self.free_at.max(now);
            let backlog = (start - now).as_micros() as u64 * self.cfg.rate / 1_000_000;
            if backlog + size > self.cfg.buffer {
                self.dropped += 1;
                return;
            }
            leave = start + Duration::from_micros(size * 1_000_000 / self.cfg.rate);
            self.free_at = leave;
        }
        let scripted = if let Frame::Data { .. } = &f {
            self.data_seen += 1;
            self.data_seen <= self.cfg.drop_first_data
        } else {
            false
        };
        if scripted || unit(rng) < self.cfg.loss {
            self.dropped += 1;
            if let Frame::Data { payload, .. } = &f {
                self.dropped_data_bytes += payload.len() as u64;
            }
            return;
        }
        let jitter = |rng: &mut ChaCha8Rng, j: Duration| {
            Duration::from_micros((unit(rng) * j.as_micros() as f64) as u64)
        };
        let at = leave + self.cfg.delay + jitter(rng, self.cfg.jitter);
        if unit(rng) < self.cfg.duplicate {
            let at2 = leave + self.cfg.delay + jitter(rng, self.cfg.jitter);
            self.push(now, at2, f.clone());
        }
        self.push(now, at, f);
    }

    pub fn next_arrival(&self) -> Option<Timestamp> {
        self.queue.peek().map(|Reverse((t, _))| *t)
    }

    pub fn pop_due(&mut self, now: Timestamp) -> Option<Frame> {
        let Reverse((t, seq)) = *self.queue.peek()?;
        if t > now {
            return None;
        }
        self.queue.pop();
        let (sent, f) = self.frames.remove(&seq)?;
        self.last_transit = t - sent;
        Some(f)
    }
}

pub fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// One endpoint plus its application.
pub struct Node {
    pub t: Transport,
    /// Bulk packets still to queue (sender app).
    pub to_send: u64,
    pub next_seq: u64,
    pub payload_len: usize,
    /// Control packets queued every `control_every` bulk packets (0 = never).
    pub control_every: u64,
    pub next_control: u64,
    /// Receiver app: next bulk/control sequence expected.
    pub expect_bulk: u64,
    pub expect_control: u64,
    pub delivered_bytes: u64,
    pub errors: Vec<String>,
    /// The last frames received (debugging aid).
    pub log: std::collections::VecDeque<String>,
}

impl Node {
    fn new(now: Timestamp, kind: ControllerKind) -> Self {
        Self {
            t: Transport::new(
                now,
                TransportConfig {
                    controller: kind,
                    ..Default::default()
                },
            ),
            to_send: 0,
            next_seq: 0,
            payload_len: 1373,
            control_every: 0,
            next_control: 0,
            expect_bulk: 0,
            expect_control: 0,
            delivered_bytes: 0,
            errors: Vec::new(),
            log: Default::default(),
        }
    }
}

/// Bulk payload: [82][seq u64][filler]; control: [64][seq u64].
fn bulk_payload(seq: u64, len: usize) -> Vec<u8> {
    let mut p = vec![0xAAu8; len.max(9)];
    p[0] = 82;
    p[1..9].copy_from_slice(&seq.to_be_bytes());
    p
}

fn control_payload(seq: u64) -> Vec<u8> {
    let mut p = vec![64u8; 9];
    p[1..9].copy_from_slice(&seq.to_be_bytes());
    p
}

pub struct Pair {
    pub now: Timestamp,
    pub a: Node,
    pub b: Node,
    pub ab: Link,
    pub ba: Link,
    pub rng: ChaCha8Rng,
    pub steps: u64,
    stuck: u64,
}

impl Pair {
    pub fn new(kind: ControllerKind, ab: LinkConfig, ba: LinkConfig, seed: u64) -> Self {
        let now = Timestamp::ZERO;
        Self {
            now,
            a: Node::new(now, kind),
            b: Node::new(now, kind),
            ab: Link::new(ab),
            ba: Link::new(ba),
            rng: ChaCha8Rng::seed_from_u64(seed),
            steps: 0,
            stuck: 0,
        }
    }

    fn drive_node(now: Timestamp, n: &mut Node, out: &mut Link, rng: &mut ChaCha8Rng) {
        if n.t.poll_timeout().is_some_and(|t| t <= now) {
            n.t.handle_timeout(now);
        }
        while let Some(p) = n.t.poll_delivered() {
            n.delivered_bytes += p.len() as u64;
            if p.len() < 9 {
                n.errors.push(format!("short payload {p:?}"));
                continue;
            }
            let seq = u64::from_be_bytes(p[1..9].try_into().unwrap());
            let exp = if p[0] == 82 {
                &mut n.expect_bulk
            } else {
                &mut n.expect_control
            };
            if seq != *exp {
                n.errors
                    .push(format!("id {} got seq {seq}, expected {}", p[0], *exp));
            }
            *exp = seq + 1;
        }
        // Application: fill the budget.
        let mut budget = n.t.send_budget(now);
        while n.to_send > 0 && budget > 0 {
            if n.control_every > 0
                && n.next_seq.is_multiple_of(n.control_every)
                && n.next_seq / n.control_every >= n.next_control
            {
                let c = n.next_control;
                if n.t
                    .queue_lossless(now, PacketClass::Control, &control_payload(c))
                    .is_ok()
                {
                    n.next_control += 1;
                }
            }
            match n.t.queue_lossless(
                now,
                PacketClass::Bulk,
                &bulk_payload(n.next_seq, n.payload_len),
            ) {
                Ok(_) => {
                    n.next_seq += 1;
                    n.to_send -= 1;
                    budget -= 1;
                }
                Err(_) => break,
            }
        }
        while let Some(d) = n.t.poll_send(now) {
            let f = Frame::Data {
                buffer_start: n.t.recv_buffer_start(),
                pn: d.packet_number,
                payload: d.payload,
            };
            out.send(now, f, rng);
        }
        if let Some(r) = n.t.poll_request(now) {
            let f = Frame::Request {
                buffer_start: n.t.recv_buffer_start(),
                buffer_end: n.t.send_buffer_end(),
                payload: r,
            };
            out.send(now, f, rng);
        }
        if let Err(e) = n.t.check_invariants() {
            n.errors.push(format!("invariant at {now:?}: {e}"));
        }
    }

    fn receive(now: Timestamp, n: &mut Node, f: Frame) {
        if n.log.len() >= 12 {
            n.log.pop_front();
        }
        n.log.push_back(match &f {
            Frame::Data {
                buffer_start, pn, ..
            } => format!("{now:?} data bs={buffer_start} pn={pn}"),
            Frame::Request {
                buffer_start,
                buffer_end,
                payload,
            } => {
                format!(
                    "{now:?} req bs={buffer_start} be={buffer_end} {:?}",
                    &payload[..payload.len().min(20)]
                )
            }
        });
        match f {
            Frame::Data {
                buffer_start,
                pn,
                payload,
            } => {
                let _ = n.t.on_peer_buffer_start(now, buffer_start);
                let _ = n.t.on_lossless(now, pn, &payload);
            }
            Frame::Request {
                buffer_start,
                buffer_end,
                payload,
            } => {
                let _ = n.t.on_peer_buffer_start(now, buffer_start);
                if let Err(e) = n.t.on_request(now, &payload[1..]) {
                    n.errors.push(format!("request refused: {e}"));
                }
                let _ = n.t.on_peer_buffer_end(now, buffer_end);
            }
        }
    }

    /// One step: deliver what has arrived, drive both nodes, jump to the next event.
    pub fn step(&mut self) {
        self.steps += 1;
        while let Some(f) = self.ab.pop_due(self.now) {
            Self::receive(self.now, &mut self.b, f);
        }
        while let Some(f) = self.ba.pop_due(self.now) {
            Self::receive(self.now, &mut self.a, f);
        }
        Self::drive_node(self.now, &mut self.a, &mut self.ab, &mut self.rng);
        Self::drive_node(self.now, &mut self.b, &mut self.ba, &mut self.rng);
        let mut next = Timestamp::MAX;
        for t in [
            self.a.t.poll_timeout(),
            self.b.t.poll_timeout(),
            self.ab.next_arrival(),
            self.ba.next_arrival(),
        ]
        .into_iter()
        .flatten()
        {
            next = next.min(t);
        }
        // Both idle, nothing on the wire: the application is the next thing to act; step
        // time in 1 ms so that a caller's predicate on the clock is reached.
        if next == Timestamp::MAX {
            next = self.now + Duration::from_millis(1);
        }
        // A deadline that does not move is a livelock (the simulator's check, too).
        if next <= self.now {
            self.stuck += 1;
            assert!(
                self.stuck < 100_000,
                "livelock at {:?}: A wants {:?}, B wants {:?}; A {:?}",
                self.now,
                self.a.t.poll_timeout(),
                self.b.t.poll_timeout(),
                self.a.t.stats()
            );
        } else {
            self.stuck = 0;
        }
        // Never stand still: a deadline in the past means "work now" — advance by 1 µs.
        self.now = next.max(self.now + Duration::from_micros(1));
    }

    /// Runs until `done` or `limit` of virtual time.
    pub fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Pair) -> bool) -> bool {
        let end = self.now + limit;
        while self.now < end {
            if done(self) {
                return true;
            }
            self.step();
        }
        done(self)
    }

    /// A sends `n` bulk packets; runs until B has them all. Returns the finish time.
    pub fn transfer(&mut self, n: u64, limit: Duration) -> Option<Timestamp> {
        self.a.to_send += n;
        let target = self.a.next_seq + n;
        let ok = self.run_until(limit, |p| p.b.expect_bulk >= target);
        ok.then_some(self.now)
    }

    pub fn stats_a(&self) -> TransportStats {
        self.a.t.stats()
    }
}
