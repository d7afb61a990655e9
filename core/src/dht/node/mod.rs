//! The DHT node as a sans-IO state machine (docs/protocol.md §5).
//!
//! Inputs: [`DhtNode::handle_datagram`] (or [`DhtNode::handle_incoming`] after a worker's own
//! [`Gate`]), [`DhtNode::handle_timeout`], and API calls (`bootstrap`, `add_friend`). Outputs
//! are pulled: [`DhtNode::poll_transmit`] (or [`DhtNode::poll_outgoing`]),
//! [`DhtNode::poll_event`], [`DhtNode::poll_timeout`]. Every input takes `now`; randomness
//! (nonces, ping ids, fake-friend keys) comes from the caller's RNG.
//!
//! This file holds the node's types, its inputs and its queues; the routing table is in
//! `lists`, the timers in `rounds`, 0x20 routing in `routing` and NAT hole punching in `punch`.
//!
//! Rules that keep the node safe under abuse, beyond c-toxcore 0.2.18 (which has none):
//! * A node enters a list only after answering *our* ping or get-nodes (id checked against
//!   the pending table, same key and address, within 5 s): the table cannot be filled with
//!   nodes that never answered. Nodes named in a send-nodes are only *asked*, at most 8 per
//!   second for the close list and 4 per searched key (c-toxcore's `to_bootstrap` lists).
//! * Requests that would make us ping a stranger go through the 32-entry, 2-second
//!   `to_ping` batch, so spoofed requests cannot turn the node into a ping cannon.
//! * Replies pass the gate's amplification check; the outbox and event queue are bounded.

mod lists;
mod punch;
mod rounds;
mod routing;

use std::collections::VecDeque;
use std::net::SocketAddr;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;

use super::close_list::CloseList;
use super::gate::{Gate, GateError, GateStats, Incoming, OutPacket, Outgoing, Transmit};
use super::lan::is_lan;
use super::pending::{PendingRequests, RequestKind};
use super::search_list::SearchList;
use super::source_guard::GuardConfig;
use super::timers::*;
use super::wire::bootstrap_info;
use super::wire::crypto_request::CRYPTO_PACKET_NAT_PING;
use super::wire::dht_packet::DhtMessage;
use super::wire::nodes::{NodesRequest, NodesResponse};
use super::wire::packed_node::{canonical, PackedNode};
use super::wire::ping::Ping;

/// Most datagrams waiting in the outbox; beyond it new ones are dropped and counted.
pub const MAX_OUTBOX: usize = 4096;
/// Most events waiting to be polled.
pub const MAX_EVENTS: usize = 1024;
/// `MAX_CLOSE_TO_BOOTSTRAP_NODES`: close-list candidates asked per tick.
pub const MAX_CLOSE_TO_BOOTSTRAP_NODES: usize = 8;
/// Most friends (searched keys besides the fake ones); bounds the per-tick work.
pub const MAX_FRIENDS: usize = 1024;

/// What the bootstrap-info reply says (§5.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapInfo {
    /// The version number sent.
    pub version: u32,
    /// Message of the day (at most 256 bytes are sent).
    pub motd: Vec<u8>,
}

/// Node settings.
#[derive(Debug, Clone)]
pub struct DhtConfig {
    /// Per-source limits.
    pub guard: GuardConfig,
    /// Accept LAN discovery packets and send them every 10 s.
    pub lan_discovery: bool,
    /// Also send LAN discovery to `ff02::1`.
    pub lan_discovery_ipv6: bool,
    /// Answer 0xf0 requests with this (bootstrap daemons only).
    pub bootstrap_info: Option<BootstrapInfo>,
    /// Random keys searched for diversity (`DHT_FAKE_FRIEND_NUMBER`).
    pub fake_friends: usize,
    /// Punch holes towards friends behind NATs.
    pub hole_punching: bool,
}

impl Default for DhtConfig {
    fn default() -> Self {
        DhtConfig {
            guard: GuardConfig::default(),
            lan_discovery: true,
            lan_discovery_ipv6: false,
            bootstrap_info: None,
            fake_friends: DHT_FAKE_FRIEND_NUMBER,
            hole_punching: true,
        }
    }
}

/// What the node tells its user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DhtEvent {
    /// A friend answered us directly at this address (`dht_ip_callback`).
    FriendAddr {
        /// The friend's DHT key.
        pk: PublicKey,
        /// Where it answered from.
        addr: SocketAddr,
    },
    /// A 0x20 request for us that the DHT itself does not handle (DHT-PK, friend request).
    Request {
        /// Sender's DHT key.
        sender: PublicKey,
        /// Request id.
        request_id: u8,
        /// Data after the id.
        data: Vec<u8>,
    },
}

/// Counters of the state machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DhtStats {
    /// Ping requests answered.
    pub pings_answered: u64,
    /// Get-nodes answered.
    pub nodes_answered: u64,
    /// Bootstrap-info requests answered.
    pub info_answered: u64,
    /// Pings we sent.
    pub pings_sent: u64,
    /// Get-nodes we sent.
    pub nodes_requests_sent: u64,
    /// Responses matching a request of ours.
    pub responses_accepted: u64,
    /// Of those, ping responses.
    pub pings_accepted: u64,
    /// Responses matching nothing (late, forged or replayed).
    pub responses_unsolicited: u64,
    /// 0x20 packets routed to a close node.
    pub routed: u64,
    /// 0x20 packets for keys we do not hold.
    pub unroutable: u64,
    /// LAN discovery packets acted upon.
    pub lan_discovery: u64,
    /// NAT pings received.
    pub nat_pings_received: u64,
    /// Outputs or events dropped because a queue was full.
    pub queue_overflow: u64,
}

/// The DHT node.
#[derive(Debug)]
pub struct DhtNode {
    keys: KeyPair,
    config: DhtConfig,
    gate: Gate,
    close: CloseList,
    close_last_get_node: Option<Timestamp>,
    close_bootstrap_times: u32,
    close_to_bootstrap: Vec<PackedNode>,
    searches: Vec<SearchList>,
    search_to_bootstrap: Vec<Vec<PackedNode>>,
    pending: PendingRequests,
    to_ping: Vec<PackedNode>,
    /// Pings we may still send to nodes that contacted us (a token bucket): ping.c sends
    /// its `to_ping` batch of at most `MAX_TO_PING` every `TIME_TO_PING`; we send each as it
    /// comes, within the same rate, so a new node is not kept waiting up to 2 s.
    to_ping_credit: f64,
    to_ping_credit_at: Timestamp,
    /// When the `to_bootstrap` lists were last asked. c-toxcore asks them on its 1 s tick;
    /// we ask as soon as a node arrives, then at most once a second, so the rate is the
    /// same and the first answer is acted on at once.
    to_bootstrap_at: Option<Timestamp>,
    outbox: VecDeque<Outgoing>,
    events: VecDeque<DhtEvent>,
    /// When the next `do_dht` round runs: its earliest deadline ([`Self::next_round`]).
    next_tick: Timestamp,
    /// When the last round ran.
    last_round: Option<Timestamp>,
    next_lan: Timestamp,
    lan_cursor: u16,
    /// The interfaces' broadcast addresses, which the driver reads from the OS.
    lan_broadcasts: Vec<std::net::IpAddr>,
    /// The nodes [`Self::bootstrap`] was given (at most [`MAX_BOOTSTRAP_NODES`]), asked
    /// again every [`REBOOTSTRAP_INTERVAL`] while no node is good: a node that starts with
    /// its UDP blocked, or loses every node, rejoins once UDP works again.
    bootstrap_nodes: Vec<(SocketAddr, PublicKey)>,
    /// When the bootstrap nodes were last asked.
    last_bootstrap: Option<Timestamp>,
    stats: DhtStats,
}

impl DhtNode {
    /// A node with the given key pair (a fresh one per run, or a bootstrap node's saved one).
    pub fn new(keys: KeyPair, config: DhtConfig, now: Timestamp, rng: &mut dyn CryptoRng) -> Self {
        let gate = Gate::new(&keys, config.guard, rng);
        let mut node = DhtNode {
            close: CloseList::new(keys.public),
            keys,
            gate,
            close_last_get_node: None,
            close_bootstrap_times: 0,
            close_to_bootstrap: Vec::new(),
            searches: Vec::new(),
            search_to_bootstrap: Vec::new(),
            pending: PendingRequests::default(),
            to_ping: Vec::new(),
            to_ping_credit: MAX_TO_PING as f64,
            to_ping_credit_at: now,
            to_bootstrap_at: None,
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            next_tick: now,
            last_round: None,
            bootstrap_nodes: Vec::new(),
            last_bootstrap: None,
            next_lan: now,
            lan_cursor: 0,
            lan_broadcasts: Vec::new(),
            stats: DhtStats::default(),
            config,
        };
        for _ in 0..node.config.fake_friends {
            let fake = KeyPair::generate(rng).public;
            node.push_search(fake, true, rng);
        }
        node
    }

    fn push_search(&mut self, pk: PublicKey, fake: bool, rng: &mut dyn CryptoRng) {
        self.searches
            .push(SearchList::new(pk, fake, rng.next_u64()));
        self.search_to_bootstrap.push(Vec::new());
    }

    /// Our DHT public key.
    pub fn public_key(&self) -> PublicKey {
        self.keys.public
    }

    /// Our key pair (a worker needs it to build its own [`Gate`]).
    pub fn keys(&self) -> &KeyPair {
        &self.keys
    }

    /// The configuration.
    pub fn config(&self) -> &DhtConfig {
        &self.config
    }

    /// Counters.
    pub fn stats(&self) -> DhtStats {
        self.stats
    }

    /// The node's own gate's counters.
    pub fn gate_stats(&self) -> GateStats {
        self.gate.stats
    }

    /// Key agreements the node's own gate computed (its cache's misses).
    pub fn key_agreements(&self) -> u64 {
        self.gate.key_agreements()
    }

    /// The close list.
    pub fn close_list(&self) -> &CloseList {
        &self.close
    }

    /// Whether any close-list node is good (answered within the last 122 s): the DHT is
    /// connected. No allocation, for callers on every datagram.
    pub fn has_good_node(&self, now: Timestamp) -> bool {
        self.close.iter().any(|e| e.best_good(now).is_some())
    }

    /// Whether a close-list node is good at an address outside the LAN
    /// (`dht_non_lan_connected`, DHT.c): c-toxcore reports its connection as UDP only then,
    /// and as TCP while only LAN nodes answer.
    pub fn has_good_non_lan_node(&self, now: Timestamp) -> bool {
        self.close.iter().any(|e| {
            e.assocs()
                .any(|a| a.is_good(now) && !crate::dht::lan::is_lan(a.addr.ip()))
        })
    }

    /// Good nodes of the close list with when each last answered us: how recently a node
    /// was heard tells the onion client which path nodes are alive.
    pub fn close_nodes_heard(&self, now: Timestamp) -> Vec<(PackedNode, Timestamp)> {
        self.close
            .iter()
            .filter_map(|e| {
                e.best_good(now)
                    .map(|a| (PackedNode::udp(a.addr, e.pk), a.last_seen))
            })
            .collect()
    }

    /// Good nodes of the close list.
    pub fn close_nodes(&self, now: Timestamp) -> Vec<PackedNode> {
        self.close
            .iter()
            .filter_map(|e| e.best_good(now).map(|a| PackedNode::udp(a.addr, e.pk)))
            .collect()
    }

    /// The search lists (friends and fake friends).
    pub fn searches(&self) -> &[SearchList] {
        &self.searches
    }

    /// Starts from a known node: sends it a get-nodes for our own key (`dht_bootstrap`).
    pub fn bootstrap(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        pk: PublicKey,
        rng: &mut dyn CryptoRng,
    ) {
        let own = self.keys.public;
        let addr = canonical(addr);
        if self.bootstrap_nodes.len() < MAX_BOOTSTRAP_NODES
            && !self.bootstrap_nodes.contains(&(addr, pk))
        {
            self.bootstrap_nodes.push((addr, pk));
        }
        self.last_bootstrap = Some(now);
        self.send_nodes_request(now, addr, pk, own, rng);
    }

    /// Asks the bootstrap nodes again when none has answered for [`REBOOTSTRAP_INTERVAL`]
    /// and no node is good.
    fn rebootstrap(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        let due = self
            .last_bootstrap
            .is_some_and(|t| now.saturating_duration_since(t) >= REBOOTSTRAP_INTERVAL);
        if !due || self.has_good_node(now) {
            return;
        }
        self.last_bootstrap = Some(now);
        let own = self.keys.public;
        for (addr, pk) in self.bootstrap_nodes.clone() {
            self.send_nodes_request(now, addr, pk, own, rng);
        }
    }

    /// Asks the node at `addr` for the nodes closest to `target` (`dht_getnodes`): what
    /// the onion client does with the nodes a friend's DHT-PK packet names, searching there
    /// for the friend's DHT key (docs/protocol.md §6.4).
    pub fn get_nodes(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        pk: PublicKey,
        target: PublicKey,
        rng: &mut dyn CryptoRng,
    ) {
        self.send_nodes_request(now, canonical(addr), pk, target, rng);
    }

    /// Sends a 0x00 ping; the answer adds the node to the lists (ping.c `ping_send_request`).
    pub fn ping(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        pk: PublicKey,
        rng: &mut dyn CryptoRng,
    ) {
        self.send_ping(now, canonical(addr), pk, rng);
    }

    /// Starts searching for a friend's DHT key. Returns false if already searched or full.
    pub fn add_friend(&mut self, pk: PublicKey, rng: &mut dyn CryptoRng) -> bool {
        let friends = self.searches.iter().filter(|s| !s.fake).count();
        if pk == self.keys.public
            || friends >= MAX_FRIENDS
            || self.searches.iter().any(|s| s.pk == pk && !s.fake)
        {
            return false;
        }
        self.push_search(pk, false, rng);
        true
    }

    /// The interfaces' IPv4 broadcast addresses, where LAN discovery goes besides
    /// 255.255.255.255 (the driver reads them from the OS; at most
    /// `super::lan::MAX_BROADCAST_ADDRS` are used).
    pub fn set_lan_broadcasts(&mut self, mut addrs: Vec<std::net::IpAddr>) {
        addrs.truncate(super::lan::MAX_BROADCAST_ADDRS);
        self.lan_broadcasts = addrs;
    }

    /// Asks the good nodes we know closest to `pk` (up to `MAX_SENT_NODES`) for the nodes
    /// closest to it, now: a friend whose DHT key was just learned is searched for at once
    /// rather than on the next 1 s round (`do_dht_friends` in c-toxcore). Counts as one of
    /// the search's bootstrap rounds, so the rate stays c-toxcore's. Returns how many
    /// requests went out.
    pub fn search_now(&mut self, now: Timestamp, pk: PublicKey, rng: &mut dyn CryptoRng) -> usize {
        let Some(i) = self.searches.iter().position(|s| s.pk == pk && !s.fake) else {
            return 0;
        };
        let nodes = self.closest_nodes(now, &pk, true);
        for node in &nodes {
            self.send_nodes_request(now, node.addr, node.pk, pk, rng);
        }
        if !nodes.is_empty() {
            let s = &mut self.searches[i];
            s.last_get_node = Some(now);
            s.bootstrap_times = s.bootstrap_times.saturating_add(1);
        }
        nodes.len()
    }

    /// Pauses or resumes the search for a friend's DHT key: paused while the friend's
    /// session runs over direct UDP. Searching finds the friend's address and the close
    /// nodes that route its NAT pings (`do_dht_friends`, `do_nat` in c-toxcore's DHT.c);
    /// a session on direct UDP already has the one address that matters, and `friend_iplist`
    /// gives no hole punching for a friend reached directly. c-toxcore keeps pinging the
    /// friend's close nodes anyway (every `PING_INTERVAL`, a random one every
    /// `GET_NODE_INTERVAL`); with a hundred friends online that is a get-nodes to or from
    /// a friend every few hundred milliseconds, each a wake-up of a node that is otherwise
    /// idle. On resume the search starts again as a new one does (`search_now`, then the
    /// quick bootstrap rounds), from whatever nodes we know closest to the key. Returns
    /// whether the state changed.
    pub fn set_search_dormant(
        &mut self,
        now: Timestamp,
        pk: &PublicKey,
        dormant: bool,
        rng: &mut dyn CryptoRng,
    ) -> bool {
        let Some(s) = self.searches.iter_mut().find(|s| s.pk == *pk && !s.fake) else {
            return false;
        };
        if s.dormant == dormant {
            return false;
        }
        s.dormant = dormant;
        if !dormant {
            s.bootstrap_times = 0;
            s.last_get_node = None;
            self.search_now(now, *pk, rng);
            // The next round comes within a tick, not at the old schedule's pace.
            self.next_tick = self.next_tick.min(now + DHT_TICK);
        }
        true
    }

    /// Stops searching for a friend.
    pub fn remove_friend(&mut self, pk: &PublicKey) {
        if let Some(i) = self.searches.iter().position(|s| s.pk == *pk && !s.fake) {
            self.searches.remove(i);
            self.search_to_bootstrap.remove(i);
        }
    }

    /// One datagram from the network.
    pub fn handle_datagram(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        rng: &mut dyn CryptoRng,
    ) -> Result<(), GateError> {
        let incoming = self.gate.open(now, from, bytes)?;
        self.handle_incoming(now, canonical(from), incoming, rng);
        Ok(())
    }

    /// A datagram that already passed a [`Gate`].
    pub fn handle_incoming(
        &mut self,
        now: Timestamp,
        from: SocketAddr,
        incoming: Incoming,
        rng: &mut dyn CryptoRng,
    ) {
        match incoming {
            Incoming::Dht { sender, msg } => self.handle_dht(now, from, sender, msg),
            Incoming::Request {
                sender,
                request_id,
                data,
            } => {
                if request_id == CRYPTO_PACKET_NAT_PING {
                    self.handle_nat_ping(now, sender, &data, rng);
                } else {
                    self.push_event(DhtEvent::Request {
                        sender,
                        request_id,
                        data,
                    });
                }
            }
            Incoming::Route { receiver, packet } => self.route(now, receiver, packet),
            Incoming::Lan { pk } => {
                if self.config.lan_discovery && is_lan(from.ip()) {
                    self.stats.lan_discovery += 1;
                    let own = self.keys.public;
                    let id = self.pending.add(now, RequestKind::Nodes, pk, from, rng);
                    self.stats.nodes_requests_sent += 1;
                    self.push_out(Outgoing {
                        dst: from,
                        packet: OutPacket::Dht {
                            to: pk,
                            msg: DhtMessage::NodesRequest(NodesRequest {
                                searched: own,
                                sendback: id,
                            }),
                        },
                        reply: true,
                    });
                }
            }
            Incoming::BootstrapInfo => {
                if let Some(info) = &self.config.bootstrap_info {
                    let reply = bootstrap_info::encode_reply(info.version, &info.motd);
                    self.stats.info_answered += 1;
                    self.push_out(Outgoing {
                        dst: from,
                        packet: OutPacket::Raw(reply),
                        reply: true,
                    });
                }
            }
        }
    }

    fn handle_dht(&mut self, now: Timestamp, from: SocketAddr, sender: PublicKey, msg: DhtMessage) {
        match msg {
            DhtMessage::Ping(Ping {
                response: false,
                id,
            }) => {
                self.stats.pings_answered += 1;
                self.push_out(Outgoing {
                    dst: from,
                    packet: OutPacket::Dht {
                        to: sender,
                        msg: DhtMessage::Ping(Ping { response: true, id }),
                    },
                    reply: true,
                });
                self.add_to_ping(now, sender, from);
            }
            DhtMessage::Ping(Ping { response: true, id }) => {
                if self.pending.take(now, id, RequestKind::Ping, &sender, from) {
                    self.stats.responses_accepted += 1;
                    self.stats.pings_accepted += 1;
                    self.add_to_lists(now, sender, from);
                } else {
                    self.stats.responses_unsolicited += 1;
                }
            }
            DhtMessage::NodesRequest(req) => {
                self.stats.nodes_answered += 1;
                let nodes = self.closest_nodes(now, &req.searched, is_lan(from.ip()));
                self.push_out(Outgoing {
                    dst: from,
                    packet: OutPacket::Dht {
                        to: sender,
                        msg: DhtMessage::NodesResponse(NodesResponse {
                            nodes,
                            sendback: req.sendback,
                        }),
                    },
                    reply: true,
                });
                self.add_to_ping(now, sender, from);
            }
            DhtMessage::NodesResponse(resp) => {
                if !self
                    .pending
                    .take(now, resp.sendback, RequestKind::Nodes, &sender, from)
                {
                    self.stats.responses_unsolicited += 1;
                    return;
                }
                self.stats.responses_accepted += 1;
                self.add_to_lists(now, sender, from);
                for node in resp.nodes {
                    self.consider_node(now, node);
                    self.returned_ip(now, node, sender);
                }
            }
        }
    }

    /// The next output before encryption (multi-worker drivers seal it in their own gate).
    pub fn poll_outgoing(&mut self) -> Option<Outgoing> {
        let out = self.outbox.pop_front();
        if out.is_none() {
            give_back(&mut self.outbox);
        }
        out
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) -> Option<Transmit> {
        while let Some(out) = self.outbox.pop_front() {
            if let Some(t) = self.gate.seal(now, out, rng) {
                return Some(t);
            }
        }
        give_back(&mut self.outbox);
        None
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<DhtEvent> {
        self.events.pop_front()
    }

    fn push_out(&mut self, out: Outgoing) {
        if self.outbox.len() >= MAX_OUTBOX {
            self.stats.queue_overflow += 1;
            return;
        }
        self.outbox.push_back(out);
    }

    fn push_event(&mut self, e: DhtEvent) {
        if self.events.len() >= MAX_EVENTS {
            self.stats.queue_overflow += 1;
            return;
        }
        self.events.push_back(e);
    }
}

/// Room kept by a drained queue. A round's burst (hundreds of requests on a busy node) grows
/// a queue; an idle node should not keep that room for good.
const QUEUE_ROOM_KEPT: usize = 64;

/// Shrinks a drained queue that a burst grew.
pub(crate) fn give_back<T>(queue: &mut VecDeque<T>) {
    if queue.is_empty() && queue.capacity() > 4 * QUEUE_ROOM_KEPT {
        queue.shrink_to(QUEUE_ROOM_KEPT);
    }
}
