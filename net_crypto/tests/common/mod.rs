//! A two-endpoint harness in virtual time (after quinn-proto's `Pair`): every `Transmit` of
//! one endpoint is delivered to the other, and time jumps to the earliest `poll_timeout`.
//! A filter can drop datagrams in flight, and every datagram is logged so tests can replay
//! or tamper with captured packets.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::crypto::{CryptoRng, KeyPair};
use rustox_net_crypto::{
    ConnectionEvent, ConnectionId, ConnectionStatus, DropReason, Endpoint, EndpointConfig,
    EndpointEvent, Timestamp, Transmit, TransportConfig,
};

/// Which endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

/// One endpoint with its keys (kept so tests can forge packets) and what it reported.
pub struct Node {
    pub endpoint: Endpoint,
    pub real: KeyPair,
    pub dht: KeyPair,
    pub addr: SocketAddr,
    pub events: Vec<EndpointEvent>,
    /// Results of every datagram delivered to this node.
    pub results: Vec<Result<(), DropReason>>,
}

/// A datagram seen in flight.
#[derive(Debug, Clone)]
pub struct Sent {
    pub from: Side,
    pub at: Timestamp,
    pub transmit: Transmit,
}

type Filter = Box<dyn FnMut(Side, &Transmit) -> bool>;

pub struct Pair {
    pub a: Node,
    pub b: Node,
    pub now: Timestamp,
    pub log: Vec<Sent>,
    /// Returns false to drop a datagram sent by the given side.
    pub filter: Option<Filter>,
}

pub fn config(accept_all: bool) -> EndpointConfig {
    EndpointConfig {
        transport: TransportConfig {
            controller: Default::default(),
            ..Default::default()
        },
        accept_all,
    }
}

pub fn rng(seed: u64) -> Box<dyn CryptoRng + Send> {
    Box::new(ChaCha8Rng::seed_from_u64(seed))
}

pub fn node(seed: u64, port: u16, accept_all: bool) -> Node {
    let mut r = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let real = KeyPair::generate(&mut r);
    let dht = KeyPair::generate(&mut r);
    let endpoint = Endpoint::new(
        Timestamp::ZERO,
        real.clone(),
        dht.clone(),
        config(accept_all),
        rng(seed),
    );
    Node {
        endpoint,
        real,
        dht,
        addr: SocketAddr::from(([10, 0, 0, (port % 250) as u8 + 1], port)),
        events: Vec::new(),
        results: Vec::new(),
    }
}

impl Pair {
    /// Two endpoints that accept each other (B allows A, A allows B).
    pub fn new(seed: u64) -> Self {
        let mut a = node(seed * 2 + 1, 33445, false);
        let mut b = node(seed * 2 + 2, 33446, false);
        a.endpoint.allow_peer(b.real.public);
        b.endpoint.allow_peer(a.real.public);
        Pair {
            a,
            b,
            now: Timestamp::from_secs(1000),
            log: Vec::new(),
            filter: None,
        }
    }

    pub fn node(&mut self, side: Side) -> &mut Node {
        match side {
            Side::A => &mut self.a,
            Side::B => &mut self.b,
        }
    }

    /// `side` connects to the other endpoint.
    pub fn connect(&mut self, side: Side) -> ConnectionId {
        let (addr, real, dht) = {
            let peer = self.node(side.other());
            (peer.addr, peer.real.public, peer.dht.public)
        };
        let now = self.now;
        self.node(side)
            .endpoint
            .connect(now, addr, real, dht)
            .expect("connect")
    }

    /// Delivers a datagram to `to` as if it came from the other side.
    pub fn deliver(&mut self, to: Side, payload: &[u8]) -> Result<(), DropReason> {
        let from = self.node(to.other()).addr;
        let now = self.now;
        let node = self.node(to);
        let r = node.endpoint.handle_datagram(now, from, payload);
        node.results.push(r);
        r
    }

    /// Moves every pending datagram once (through the filter) and collects events.
    /// Returns how many datagrams were sent.
    pub fn flush(&mut self) -> usize {
        let mut moved = 0;
        loop {
            let mut progressed = false;
            for side in [Side::A, Side::B] {
                let now = self.now;
                while let Some(t) = self.node(side).endpoint.poll_transmit(now) {
                    progressed = true;
                    moved += 1;
                    self.log.push(Sent {
                        from: side,
                        at: now,
                        transmit: t.clone(),
                    });
                    let pass = match self.filter.as_mut() {
                        Some(f) => f(side, &t),
                        None => true,
                    };
                    if pass {
                        let _ = self.deliver(side.other(), &t.payload);
                    }
                }
            }
            self.collect_events();
            if !progressed {
                return moved;
            }
        }
    }

    pub fn collect_events(&mut self) {
        for side in [Side::A, Side::B] {
            let node = self.node(side);
            while let Some(e) = node.endpoint.poll_event() {
                node.events.push(e);
            }
        }
    }

    /// Runs the pair until `until` (virtual time), jumping from timeout to timeout.
    pub fn run_for(&mut self, duration: Duration) {
        let end = self.now + duration;
        self.run_until(end, |_| false);
    }

    /// Runs until `done` holds or virtual time passes `end`. Returns whether `done` held.
    pub fn run_until(&mut self, end: Timestamp, mut done: impl FnMut(&Pair) -> bool) -> bool {
        let mut steps = 0u32;
        loop {
            self.flush();
            if done(self) {
                return true;
            }
            let next = [
                self.a.endpoint.poll_timeout(),
                self.b.endpoint.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next else {
                self.now = self.now.max(end);
                return done(self);
            };
            if next > end {
                self.now = end;
                return done(self);
            }
            // A deadline in the past still moves time by at least a microsecond.
            self.now = next.max(self.now + Duration::from_micros(1));
            let now = self.now;
            self.a.endpoint.handle_timeout(now);
            self.b.endpoint.handle_timeout(now);
            steps += 1;
            // A deadline that handle_timeout never clears (and that yields nothing to send)
            // is a livelock; report who is stuck instead of spinning forever.
            assert!(
                steps < 1_000_000,
                "simulation does not settle at {:?}: A wants {:?}, B wants {:?}",
                self.now,
                self.a.endpoint.poll_timeout(),
                self.b.endpoint.poll_timeout()
            );
        }
    }

    /// Connects `side` to the other and runs until both ends are established.
    pub fn establish(&mut self, side: Side) -> (ConnectionId, ConnectionId) {
        let id = self.connect(side);
        let end = self.now + Duration::from_secs(10);
        let ok = self.run_until(end, both_established);
        assert!(ok, "handshake did not complete");
        let other = only_connection(&self.node(side.other()).endpoint);
        match side {
            Side::A => (id, other),
            Side::B => (other, id),
        }
    }

    pub fn status(&self, side: Side, id: ConnectionId) -> Option<ConnectionStatus> {
        let node = match side {
            Side::A => &self.a,
            Side::B => &self.b,
        };
        node.endpoint.connection(id).map(|c| c.status())
    }

    /// The connection events one side reported, in order.
    pub fn connection_events(&self, side: Side) -> Vec<ConnectionEvent> {
        let node = match side {
            Side::A => &self.a,
            Side::B => &self.b,
        };
        node.events
            .iter()
            .filter_map(|e| match e {
                EndpointEvent::Connection { event, .. } => Some(event.clone()),
                _ => None,
            })
            .collect()
    }

    /// Datagrams sent by `side` whose first byte is `kind`.
    pub fn sent(&self, side: Side, kind: u8) -> Vec<Sent> {
        self.log
            .iter()
            .filter(|s| s.from == side && s.transmit.payload.first() == Some(&kind))
            .cloned()
            .collect()
    }
}

pub fn both_established(p: &Pair) -> bool {
    let est = |e: &Endpoint| {
        let ids = e.connection_ids();
        !ids.is_empty()
            && ids.iter().all(|id| {
                e.connection(*id).map(|c| c.status()) == Some(ConnectionStatus::Established)
            })
    };
    est(&p.a.endpoint) && est(&p.b.endpoint)
}

pub fn only_connection(e: &Endpoint) -> ConnectionId {
    let ids = e.connection_ids();
    assert_eq!(ids.len(), 1, "expected exactly one connection, got {ids:?}");
    ids[0]
}
