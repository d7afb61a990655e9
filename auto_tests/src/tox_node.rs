//! Whole Tox nodes in the simulator: `rustox_core::node::Node` — the same type the drivers
//! and the CLI run — behind [`SimNode`], with the little a client application does around
//! it (bootstrapping until connected, noting when friends come online).
//!
//! Nothing here re-implements node logic: the simulator only moves datagrams and time. A
//! node given a TCP port ([`SimToxNode::open_tcp_port`]) also opens the relay connections
//! its node asks for, and a node given a relay server ([`SimToxNode::serve_relay`]) also
//! serves as a TCP relay, as `rustox bootstrap --tcp-ports` does ([`crate::relay_sim`]).

use std::net::SocketAddr;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rustox_core::dht::DhtConfig;
use rustox_core::node::{FriendNumber, Node, NodeEvent, NodeOptions};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;
use rustox_simulator::SimNode;

use crate::relay_sim::{SimRelayServer, TcpPort};
use crate::tcp::StreamOptions;

/// How often a client that is not connected calls bootstrap again: a Tox client keeps
/// calling `tox_bootstrap` until the DHT answers (qTox and toxic retry every few seconds), and
/// a lossy link can drop the first get-nodes.
pub const REBOOTSTRAP: Duration = Duration::from_secs(5);

/// Most events a simulated node keeps for a test to read; a long run with chatty events
/// must not grow without bound.
const MAX_LOGGED: usize = 1024;

/// What a simulated node's application saw.
#[derive(Debug, Default, Clone)]
pub struct NodeLog {
    /// When each friend came online (the first time, and each time after going offline).
    pub online: Vec<(Timestamp, FriendNumber)>,
    /// When each friend went offline.
    pub offline: Vec<(Timestamp, FriendNumber)>,
    /// Friend requests the node passed up (with `accept_strangers` off).
    pub requests: Vec<(Timestamp, PublicKey, Vec<u8>)>,
    /// Friends added from requests (with `accept_strangers` on).
    pub added: Vec<(Timestamp, PublicKey)>,
    /// Messages received.
    pub messages: Vec<(Timestamp, FriendNumber, Vec<u8>)>,
    /// When the node's own connection last changed, and to what.
    pub self_connection: Vec<(Timestamp, bool)>,
    /// Events not kept because the log was full.
    pub dropped: u64,
}

/// An application's reaction to an event: it may call the node's API.
pub type React = Box<dyn FnMut(&mut Node, Timestamp, &NodeEvent)>;

/// One Tox node and its application, for the simulator.
pub struct SimToxNode {
    /// The node.
    pub node: Node,
    /// What its application saw.
    pub log: NodeLog,
    /// Called with every event before it is logged.
    pub react: Option<React>,
    bootstrap: Vec<(SocketAddr, PublicKey)>,
    next_bootstrap: Timestamp,
    tcp: Option<TcpPort>,
}

/// How to build a simulated node.
#[derive(Debug, Clone, Default)]
pub struct SimToxOptions {
    /// The node's options (LAN discovery is off unless asked: the simulator has no
    /// broadcast).
    pub node: NodeOptions,
}

impl SimToxNode {
    /// A node with keys and randomness drawn from `seed`, started at `now`.
    pub fn new(now: Timestamp, seed: u64, options: SimToxOptions) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let keys = KeyPair::generate(&mut rng);
        let mut node_options = options.node;
        node_options.dht = DhtConfig {
            lan_discovery: false,
            ..node_options.dht
        };
        SimToxNode {
            node: Node::new(now, keys, node_options, Box::new(rng)),
            log: NodeLog::default(),
            react: None,
            bootstrap: Vec::new(),
            next_bootstrap: now,
            tcp: None,
        }
    }

    /// Gives the node a TCP port at `addr` (add it to the node's simulator addresses): the
    /// relay connections its node asks for open from there, on sockets set with `options`.
    pub fn open_tcp_port(&mut self, addr: SocketAddr, options: StreamOptions) {
        self.tcp = Some(TcpPort::new(addr, options));
    }

    /// Serves as a TCP relay on the node's TCP port ([`Self::open_tcp_port`] first; without
    /// a port this does nothing).
    pub fn serve_relay(&mut self, server: SimRelayServer) {
        if let Some(port) = self.tcp.as_mut() {
            port.serve(server);
        }
    }

    /// The node's TCP port, if it has one.
    pub fn tcp(&self) -> Option<&TcpPort> {
        self.tcp.as_ref()
    }

    /// The node's TCP port, to inject faults.
    pub fn tcp_mut(&mut self) -> Option<&mut TcpPort> {
        self.tcp.as_mut()
    }

    /// Bootstraps from `addr` now, and again every [`REBOOTSTRAP`] while not connected.
    pub fn bootstrap(&mut self, now: Timestamp, addr: SocketAddr, dht_pk: PublicKey) {
        self.bootstrap.push((addr, dht_pk));
        self.node.bootstrap(now, addr, dht_pk);
        self.next_bootstrap = now + REBOOTSTRAP;
    }

    /// When friend `friend` first came online, if it did.
    pub fn first_online(&self, friend: FriendNumber) -> Option<Timestamp> {
        self.log
            .online
            .iter()
            .find(|(_, f)| *f == friend)
            .map(|(t, _)| *t)
    }

    fn drain_events(&mut self, now: Timestamp) {
        while let Some(event) = self.node.poll_event() {
            if let Some(react) = self.react.as_mut() {
                react(&mut self.node, now, &event);
            }
            let log = &mut self.log;
            let full = log.online.len()
                + log.offline.len()
                + log.requests.len()
                + log.added.len()
                + log.messages.len()
                + log.self_connection.len()
                >= MAX_LOGGED;
            if full {
                log.dropped += 1;
                continue;
            }
            match event {
                NodeEvent::FriendConnection {
                    friend,
                    online: true,
                    ..
                } => log.online.push((now, friend)),
                NodeEvent::FriendConnection {
                    friend,
                    online: false,
                    ..
                } => log.offline.push((now, friend)),
                NodeEvent::FriendRequest { pk, message } => log.requests.push((now, pk, message)),
                NodeEvent::FriendAdded { pk, .. } => log.added.push((now, pk)),
                NodeEvent::Message { friend, text, .. } => log.messages.push((now, friend, text)),
                NodeEvent::SelfConnection { connected } => {
                    log.self_connection.push((now, connected))
                }
                _ => {}
            }
        }
    }
}

impl SimNode for SimToxNode {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, to: SocketAddr, bytes: &[u8]) {
        match self.tcp.as_mut() {
            Some(port) if port.addr() == to => {
                port.handle_segment(now, from, bytes, &mut self.node)
            }
            _ => self.node.handle_datagram(now, from, bytes),
        }
        self.drain_events(now);
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        if now >= self.next_bootstrap && !self.bootstrap.is_empty() {
            self.next_bootstrap = now + REBOOTSTRAP;
            if !self.node.is_connected() {
                for (addr, pk) in self.bootstrap.clone() {
                    self.node.bootstrap(now, addr, pk);
                }
            }
        }
        if let Some(port) = self.tcp.as_mut() {
            if port.poll_timeout().is_some_and(|t| t <= now) {
                port.handle_timeout(now, &mut self.node);
            }
        }
        self.node.handle_timeout(now);
        self.drain_events(now);
    }

    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        self.poll_transmit_from(now)
            .map(|(_, to, bytes)| (to, bytes))
    }

    /// UDP from the node first, then the TCP port's segments: what the node asked of its
    /// relay sockets (and, on a relay host, what the relay wrote) is carried out before
    /// the segments are collected, until neither has more to say.
    fn poll_transmit_from(
        &mut self,
        now: Timestamp,
    ) -> Option<(Option<SocketAddr>, SocketAddr, Vec<u8>)> {
        loop {
            if let Some(t) = self.node.poll_transmit(now) {
                return Some((None, t.destination, t.payload));
            }
            let port = self.tcp.as_mut()?;
            if let Some((to, bytes)) = port.poll_transmit() {
                return Some((Some(port.addr()), to, bytes));
            }
            if port.pump(now, &mut self.node) {
                self.drain_events(now);
                continue;
            }
            let port = self.tcp.as_mut()?;
            return port
                .poll_transmit()
                .map(|(to, bytes)| (Some(port.addr()), to, bytes));
        }
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        // Only while not connected: a connected node's application has nothing to do.
        let rebootstrap = (!self.bootstrap.is_empty() && !self.node.is_connected())
            .then_some(self.next_bootstrap);
        [
            self.node.poll_timeout(),
            rebootstrap,
            self.tcp.as_ref().and_then(TcpPort::poll_timeout),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.tcp.as_ref().map_or(Ok(()), TcpPort::check_invariants)
    }
}
