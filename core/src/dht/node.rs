//! The DHT node as a sans-IO state machine (docs/protocol.md §5).
//!
//! Inputs: [`DhtNode::handle_datagram`] (or [`DhtNode::handle_incoming`] after a worker's own
//! [`Gate`]), [`DhtNode::handle_timeout`], and API calls (`bootstrap`, `add_friend`). Outputs
//! are pulled: [`DhtNode::poll_transmit`] (or [`DhtNode::poll_outgoing`]),
//! [`DhtNode::poll_event`], [`DhtNode::poll_timeout`]. Every input takes `now`; randomness
//! (nonces, ping ids, fake-friend keys) comes from the caller's RNG.
//!
//! Rules that keep the node safe under abuse, beyond c-toxcore 0.2.18 (which has none):
//! * A node enters a list only after answering *our* ping or get-nodes (id checked against
//!   the pending table, same key and address, within 5 s): the table cannot be filled with
//!   nodes that never answered. Nodes named in a send-nodes are only *asked*, at most 8 per
//!   second for the close list and 4 per searched key (c-toxcore's `to_bootstrap` lists).
//! * Requests that would make us ping a stranger go through the 32-entry, 2-second
//!   `to_ping` batch, so spoofed requests cannot turn the node into a ping cannon.
//! * Replies pass the gate's amplification check; the outbox and event queue are bounded.

use std::collections::VecDeque;
use std::net::SocketAddr;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;

use super::client::ClientEntry;
use super::close_list::CloseList;
use super::distance::cmp_distance;
use super::gate::{Gate, GateError, GateStats, Incoming, OutPacket, Outgoing, Transmit};
use super::lan::{discovery_targets, is_lan};
use super::nat::{common_ip, ports_for, punch_ports};
use super::pending::{PendingRequests, RequestKind};
use super::search_list::SearchList;
use super::source_guard::GuardConfig;
use super::timers::*;
use super::wire::bootstrap_info;
use super::wire::crypto_request::{NatPing, CRYPTO_PACKET_NAT_PING};
use super::wire::dht_packet::DhtMessage;
use super::wire::lan_discovery;
use super::wire::nodes::{NodesRequest, NodesResponse, MAX_SENT_NODES};
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
    /// [`super::lan::MAX_BROADCAST_ADDRS`] are used).
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

    /// Up to 4 good nodes closest to `target` from every list (`get_close_nodes`); LAN
    /// addresses only for LAN requesters.
    pub fn closest_nodes(
        &self,
        now: Timestamp,
        target: &PublicKey,
        requester_on_lan: bool,
    ) -> Vec<PackedNode> {
        let mut best: Vec<PackedNode> = Vec::with_capacity(MAX_SENT_NODES + 1);
        let candidates = self
            .close
            .iter()
            .chain(self.searches.iter().flat_map(|s| s.clients.iter()));
        for entry in candidates {
            let Some(assoc) = entry.best_good(now) else {
                continue;
            };
            if is_lan(assoc.addr.ip()) && !requester_on_lan {
                continue;
            }
            if best.iter().any(|n| n.pk == entry.pk) {
                continue;
            }
            if best.len() == MAX_SENT_NODES {
                let last = &best[MAX_SENT_NODES - 1];
                if cmp_distance(target, &entry.pk, &last.pk) != std::cmp::Ordering::Less {
                    continue;
                }
                best.pop();
            }
            let node = PackedNode::udp(assoc.addr, entry.pk);
            let at = best
                .iter()
                .position(|n| cmp_distance(target, &node.pk, &n.pk) == std::cmp::Ordering::Less)
                .unwrap_or(best.len());
            best.insert(at, node);
        }
        best
    }

    /// A node answered a request of ours: it enters every list with room for it.
    fn add_to_lists(&mut self, now: Timestamp, pk: PublicKey, addr: SocketAddr) {
        self.close.add(pk, addr, now);
        let mut found_friend = false;
        for s in &mut self.searches {
            if s.add(pk, addr, now) && s.pk == pk && !s.fake {
                found_friend = true;
            }
        }
        // A new node (or a new address of one) is asked for nodes in the next round, as
        // c-toxcore asks it on its next 1 s tick: that is how the lists fill.
        let unasked = |e: &ClientEntry| {
            e.assocs()
                .any(|a| a.addr == addr && a.last_pinged.is_none())
        };
        if self.close.get(&pk).is_some_and(unasked)
            || self
                .searches
                .iter()
                .any(|s| s.get(&pk).is_some_and(unasked))
        {
            self.next_tick = self
                .next_tick
                .min(self.last_round.map_or(now, |t| t + DHT_TICK));
        }
        if found_friend {
            self.push_event(DhtEvent::FriendAddr { pk, addr });
        }
    }

    /// A node named in a send-nodes: ask it too if it would be kept somewhere
    /// (`ping_node_from_getnodes_ok`), through the bounded `to_bootstrap` lists.
    fn consider_node(&mut self, now: Timestamp, node: PackedNode) {
        if node.pk == self.keys.public {
            return;
        }
        let known = |e: Option<&ClientEntry>| {
            e.is_some_and(|e| e.assocs().any(|a| a.addr == node.addr && a.is_good(now)))
        };
        let own = self.keys.public;
        if self.close.addable(&node.pk, now) && !known(self.close.get(&node.pk)) {
            insert_closest(
                &mut self.close_to_bootstrap,
                MAX_CLOSE_TO_BOOTSTRAP_NODES,
                node,
                &own,
            );
        }
        for (s, list) in self
            .searches
            .iter_mut()
            .zip(self.search_to_bootstrap.iter_mut())
        {
            let in_list = known(s.clients.iter().find(|c| c.pk == node.pk));
            if s.addable(&node.pk, now) && !in_list {
                insert_closest(list, MAX_SENT_NODES, node, &s.pk);
            }
        }
    }

    /// A node reported an address for a key: our own (what the world sees of us) or a
    /// friend's (used for hole punching) — `returnedip_ports`.
    fn returned_ip(&mut self, now: Timestamp, node: PackedNode, returner: PublicKey) {
        let record = |entry: &mut ClientEntry| {
            if let Some(a) = entry.assoc_slot(node.addr).as_mut() {
                a.returned = Some((node.addr, now));
            }
        };
        if node.pk == self.keys.public {
            if let Some(e) = self.close.get_mut(&returner) {
                record(e);
            }
            return;
        }
        for s in self.searches.iter_mut().filter(|s| s.pk == node.pk) {
            if let Some(e) = s.get_mut(&returner) {
                record(e);
            }
        }
    }

    /// Someone pinged or asked us: ping them back later if they would fit the close list.
    fn add_to_ping(&mut self, now: Timestamp, pk: PublicKey, addr: SocketAddr) {
        if !self.close.addable(&pk, now) {
            return;
        }
        if self
            .close
            .get(&pk)
            .is_some_and(|e| e.assocs().any(|a| a.addr == addr && a.is_good(now)))
        {
            return;
        }
        let own = self.keys.public;
        insert_closest(
            &mut self.to_ping,
            MAX_TO_PING,
            PackedNode::udp(addr, pk),
            &own,
        );
    }

    fn route(&mut self, now: Timestamp, receiver: PublicKey, packet: Vec<u8>) {
        let dst = self.close.get(&receiver).and_then(|e| {
            e.v6.iter()
                .chain(e.v4.iter())
                .find(|a| !a.is_dead(now))
                .map(|a| a.addr)
        });
        match dst {
            Some(dst) => {
                self.stats.routed += 1;
                self.push_out(Outgoing {
                    dst,
                    packet: OutPacket::Raw(packet),
                    reply: false,
                });
            }
            None => self.stats.unroutable += 1,
        }
    }

    fn handle_nat_ping(
        &mut self,
        now: Timestamp,
        sender: PublicKey,
        data: &[u8],
        rng: &mut dyn CryptoRng,
    ) {
        let Ok(ping) = NatPing::decode(data) else {
            return;
        };
        let Some(i) = self.searches.iter().position(|s| s.pk == sender && !s.fake) else {
            return;
        };
        self.stats.nat_pings_received += 1;
        if !ping.response {
            let reply = NatPing {
                response: true,
                id: ping.id,
            };
            self.route_to_friend(now, i, CRYPTO_PACKET_NAT_PING, &reply.encode(), true);
            self.searches[i].nat.nat_ping_received = Some(now);
        } else if ping.id == self.searches[i].nat.nat_ping_id {
            self.searches[i].nat.nat_ping_id = rng.next_u64();
            self.searches[i].nat.hole_punching = true;
        }
    }

    /// Addresses the friend's close nodes report for it; empty if we reach it directly
    /// (`friend_iplist`).
    fn friend_ips(&self, now: Timestamp, i: usize) -> Vec<SocketAddr> {
        let s = &self.searches[i];
        if s.clients.iter().any(|c| c.pk == s.pk && c.is_good(now)) {
            return Vec::new();
        }
        s.clients
            .iter()
            .flat_map(|c| c.assocs())
            .filter(|a| a.is_good(now))
            .filter_map(|a| {
                a.returned
                    .filter(|(_, t)| now < *t + BAD_NODE_TIMEOUT)
                    .map(|(addr, _)| addr)
            })
            .collect()
    }

    /// Sends a 0x20 request for the friend with DHT key `friend_dht_pk` through its close
    /// nodes that report its address, which route it on (`route_to_friend`, docs/protocol.md
    /// §5.5): how a DHT-PK announcement (request id 156) reaches a friend we know by DHT key
    /// but hold no address for. Needs at least `MAX_FRIEND_CLIENTS / 4` such nodes, as
    /// 0.2.18 does; returns how many copies went out (0: the friend is not searched for,
    /// or too few of its nodes know where it is).
    pub fn route_request_to_friend(
        &mut self,
        now: Timestamp,
        friend_dht_pk: &PublicKey,
        request_id: u8,
        data: &[u8],
    ) -> usize {
        let Some(i) = self
            .searches
            .iter()
            .position(|s| s.pk == *friend_dht_pk && !s.fake)
        else {
            return 0;
        };
        self.route_to_friend(now, i, request_id, data, false)
    }

    /// Sends a request through the friend's close nodes that know its address
    /// (`route_to_friend` / `route_one_to_friend`); at least 2 such nodes are required.
    fn route_to_friend(
        &mut self,
        now: Timestamp,
        i: usize,
        request_id: u8,
        data: &[u8],
        only_one: bool,
    ) -> usize {
        let s = &self.searches[i];
        let routes: Vec<SocketAddr> = s
            .clients
            .iter()
            .flat_map(|c| c.assocs())
            .filter(|a| {
                a.is_good(now) && a.returned.is_some_and(|(_, t)| now < t + BAD_NODE_TIMEOUT)
            })
            .map(|a| a.addr)
            .collect();
        if routes.len() < MAX_FRIEND_CLIENTS / 4 {
            return 0;
        }
        let to = s.pk;
        let n = if only_one { 1 } else { routes.len() };
        for dst in routes.iter().take(n) {
            self.push_out(Outgoing {
                dst: *dst,
                packet: OutPacket::Request {
                    to,
                    request_id,
                    data: data.to_vec(),
                },
                reply: false,
            });
        }
        n.min(routes.len())
    }

    fn do_nat(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        if !self.config.hole_punching {
            return;
        }
        for i in 0..self.searches.len() {
            if self.searches[i].fake {
                continue;
            }
            let ips = self.friend_ips(now, i);
            if ips.len() < MAX_FRIEND_CLIENTS / 2 {
                continue;
            }
            let nat = &self.searches[i].nat;
            if nat.nat_ping_sent.is_none_or(|t| t + PUNCH_INTERVAL < now) {
                let ping = NatPing {
                    response: false,
                    id: nat.nat_ping_id,
                };
                self.route_to_friend(now, i, CRYPTO_PACKET_NAT_PING, &ping.encode(), false);
                self.searches[i].nat.nat_ping_sent = Some(now);
            }
            let nat = &self.searches[i].nat;
            let punch_due = nat.hole_punching
                && nat.punching_at.is_none_or(|t| t + PUNCH_INTERVAL < now)
                && nat
                    .nat_ping_received
                    .is_some_and(|t| t + PUNCH_INTERVAL * 2 >= now);
            if !punch_due {
                continue;
            }
            let Some(ip) = common_ip(&ips, MAX_FRIEND_CLIENTS / 2) else {
                continue;
            };
            let friend = self.searches[i].pk;
            let nat = &mut self.searches[i].nat;
            if nat.punching_at.is_some_and(|t| t + PUNCH_RESET_TIME < now) {
                nat.reset_guessing();
            }
            let ports = punch_ports(nat, &ports_for(&ips, ip));
            nat.punching_at = Some(now);
            nat.hole_punching = false;
            for port in ports {
                self.send_ping(now, SocketAddr::new(ip, port), friend, rng);
            }
        }
    }

    fn send_ping(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        pk: PublicKey,
        rng: &mut dyn CryptoRng,
    ) {
        let id = self.pending.add(now, RequestKind::Ping, pk, addr, rng);
        self.stats.pings_sent += 1;
        self.push_out(Outgoing {
            dst: addr,
            packet: OutPacket::Dht {
                to: pk,
                msg: DhtMessage::Ping(Ping {
                    response: false,
                    id,
                }),
            },
            reply: false,
        });
    }

    fn send_nodes_request(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        pk: PublicKey,
        searched: PublicKey,
        rng: &mut dyn CryptoRng,
    ) {
        if pk == self.keys.public {
            return;
        }
        let id = self.pending.add(now, RequestKind::Nodes, pk, addr, rng);
        self.stats.nodes_requests_sent += 1;
        self.push_out(Outgoing {
            dst: addr,
            packet: OutPacket::Dht {
                to: pk,
                msg: DhtMessage::NodesRequest(NodesRequest {
                    searched,
                    sendback: id,
                }),
            },
            reply: false,
        });
    }

    /// When [`handle_timeout`](Self::handle_timeout) next has work.
    pub fn poll_timeout(&self) -> Timestamp {
        let mut next = self.next_tick;
        if self.config.lan_discovery {
            next = next.min(self.next_lan);
        }
        if let Some(t) = self.to_bootstrap_due() {
            next = next.min(t);
        }
        if let Some(t) = self.to_ping_due() {
            next = next.min(t);
        }
        next
    }

    /// When the `to_bootstrap` lists may next be asked, if any holds a node.
    fn to_bootstrap_due(&self) -> Option<Timestamp> {
        let waiting = !self.close_to_bootstrap.is_empty()
            || self.search_to_bootstrap.iter().any(|l| !l.is_empty());
        waiting.then(|| {
            self.to_bootstrap_at
                .map_or(Timestamp::ZERO, |t| t + DHT_TICK)
        })
    }

    /// When the next `to_ping` node may be pinged, if any waits.
    fn to_ping_due(&self) -> Option<Timestamp> {
        if self.to_ping.is_empty() {
            return None;
        }
        let missing = (1.0 - self.to_ping_credit).max(0.0);
        let per_ping = TIME_TO_PING.as_secs_f64() / MAX_TO_PING as f64;
        // Rounded up to the next whole microsecond (the timestamps' grain): rounded down, a
        // credit just short of 1 would be due now and refill nothing, again and again.
        let wait_us = (missing * per_ping * 1e6).ceil() as u64;
        Some(self.to_ping_credit_at + std::time::Duration::from_micros(wait_us))
    }

    /// Asks the nodes in the `to_bootstrap` lists (`do_close` / `do_friend`'s bootstrap
    /// part): for our own key, and for each searched key.
    fn ask_to_bootstrap(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        self.to_bootstrap_at = Some(now);
        let own = self.keys.public;
        for node in std::mem::take(&mut self.close_to_bootstrap) {
            self.send_nodes_request(now, node.addr, node.pk, own, rng);
        }
        for i in 0..self.searches.len() {
            let target = self.searches[i].pk;
            for node in std::mem::take(&mut self.search_to_bootstrap[i]) {
                self.send_nodes_request(now, node.addr, node.pk, target, rng);
            }
        }
    }

    /// Pings the `to_ping` nodes the credit allows (`ping_iterate`).
    fn ping_to_ping(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        let refill = (now - self.to_ping_credit_at).as_secs_f64() / TIME_TO_PING.as_secs_f64()
            * MAX_TO_PING as f64;
        self.to_ping_credit = (self.to_ping_credit + refill).min(MAX_TO_PING as f64);
        self.to_ping_credit_at = now;
        let own = self.keys.public;
        // The epsilon absorbs float rounding of the refill (see `to_ping_due`).
        while self.to_ping_credit >= 1.0 - 1e-9 && !self.to_ping.is_empty() {
            // Closest to us first: those are the ones the close list wants.
            let Some(i) = (0..self.to_ping.len())
                .min_by(|&a, &b| cmp_distance(&own, &self.to_ping[a].pk, &self.to_ping[b].pk))
            else {
                break;
            };
            let node = self.to_ping.swap_remove(i);
            if self.close.addable(&node.pk, now) {
                self.send_ping(now, node.addr, node.pk, rng);
                self.to_ping_credit -= 1.0;
            }
        }
    }

    /// Runs the timers that are due: the once-a-second `do_dht` round and LAN discovery.
    pub fn handle_timeout(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        if self.to_bootstrap_due().is_some_and(|t| t <= now) {
            self.ask_to_bootstrap(now, rng);
        }
        if self.to_ping_due().is_some_and(|t| t <= now) {
            self.ping_to_ping(now, rng);
        }
        if now >= self.next_tick {
            self.do_dht(now, rng);
            self.last_round = Some(now);
            self.next_tick = self.next_round(now);
        }
        if self.config.lan_discovery && now >= self.next_lan {
            self.next_lan = now + LAN_DISCOVERY_INTERVAL;
            let packet = lan_discovery::encode(&self.keys.public);
            let targets = discovery_targets(
                &mut self.lan_cursor,
                self.config.lan_discovery_ipv6,
                &self.lan_broadcasts,
            );
            for dst in targets {
                self.push_out(Outgoing {
                    dst,
                    packet: OutPacket::Raw(packet.to_vec()),
                    reply: false,
                });
            }
        }
    }

    fn do_dht(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        self.rebootstrap(now, rng);
        // A node whose every close node died is probably offline: make them merely bad
        // (as of BAD_NODE_TIMEOUT ago) so they keep being pinged.
        self.close.expire(now, now.saturating_sub(BAD_NODE_TIMEOUT));
        for s in &mut self.searches {
            s.expire(now);
        }
        let own = self.keys.public;
        // Close list (the to_bootstrap lists are asked as nodes arrive, above).
        let (due, good) = due_and_good(self.close.iter_mut(), now);
        for (addr, pk) in due {
            self.send_nodes_request(now, addr, pk, own, rng);
        }
        if !good.is_empty()
            && (self
                .close_last_get_node
                .is_none_or(|t| t + GET_NODE_INTERVAL <= now + ROUND_SLACK)
                || self.close_bootstrap_times < MAX_BOOTSTRAP_TIMES)
        {
            let (addr, pk) = good[(rng.next_u64() % good.len() as u64) as usize];
            self.send_nodes_request(now, addr, pk, own, rng);
            self.close_last_get_node = Some(now);
            self.close_bootstrap_times = self.close_bootstrap_times.saturating_add(1);
        }
        // Searched keys.
        for i in 0..self.searches.len() {
            let target = self.searches[i].pk;
            let (due, good) = due_and_good(self.searches[i].clients.iter_mut(), now);
            for (addr, pk) in due {
                self.send_nodes_request(now, addr, pk, target, rng);
            }
            let s = &self.searches[i];
            if !good.is_empty()
                && (s
                    .last_get_node
                    .is_none_or(|t| t + GET_NODE_INTERVAL <= now + ROUND_SLACK)
                    || s.bootstrap_times < MAX_BOOTSTRAP_TIMES)
            {
                let (addr, pk) = good[(rng.next_u64() % good.len() as u64) as usize];
                self.send_nodes_request(now, addr, pk, target, rng);
                let s = &mut self.searches[i];
                s.last_get_node = Some(now);
                s.bootstrap_times = s.bootstrap_times.saturating_add(1);
            }
        }
        self.do_nat(now, rng);
    }

    /// When the round after one run at `now` is due: the earliest ping or get-nodes of any
    /// list, the next bootstrap round, hole punching while a friend may need it; at least
    /// [`DHT_TICK`] and at most [`MAX_ROUND_GAP`] away.
    fn next_round(&self, now: Timestamp) -> Timestamp {
        let soonest = now + DHT_TICK;
        let mut next = now + MAX_ROUND_GAP;
        let mut ping_due = |entries: &mut dyn Iterator<Item = &ClientEntry>| {
            for e in entries {
                for a in e.assocs() {
                    if !a.is_dead(now) {
                        next = next.min(a.last_pinged.map_or(soonest, |t| t + PING_INTERVAL));
                    }
                }
            }
        };
        ping_due(&mut self.close.iter());
        for s in &self.searches {
            ping_due(&mut s.clients.iter());
        }
        let get_node_due = |last: Option<Timestamp>, times: u32| {
            if times < MAX_BOOTSTRAP_TIMES {
                soonest
            } else {
                last.map_or(soonest, |t| t + GET_NODE_INTERVAL)
            }
        };
        if self.close.iter().any(|e| e.is_good(now)) {
            next = next.min(get_node_due(
                self.close_last_get_node,
                self.close_bootstrap_times,
            ));
        }
        for s in &self.searches {
            if s.clients.iter().any(|e| e.is_good(now)) {
                next = next.min(get_node_due(s.last_get_node, s.bootstrap_times));
            }
        }
        if self.config.hole_punching
            && (0..self.searches.len()).any(|i| {
                !self.searches[i].fake && self.friend_ips(now, i).len() >= MAX_FRIEND_CLIENTS / 2
            })
        {
            next = soonest;
        }
        next.max(soonest)
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

/// Keeps `list` as the `max` nodes closest to `target`, replacing the farthest
/// (`add_to_list`).
fn insert_closest(list: &mut Vec<PackedNode>, max: usize, node: PackedNode, target: &PublicKey) {
    if list.iter().any(|n| n.pk == node.pk) {
        return;
    }
    if list.len() < max {
        list.push(node);
        return;
    }
    if let Some(far) =
        (0..list.len()).max_by(|&a, &b| cmp_distance(target, &list[a].pk, &list[b].pk))
    {
        if cmp_distance(target, &node.pk, &list[far].pk) == std::cmp::Ordering::Less {
            list[far] = node;
        }
    }
}

/// A node's address and DHT key.
type NodeAddr = (SocketAddr, PublicKey);

/// One pass over a list's live associations (close list or a searched key's list): the ones due
/// a get-nodes ping (`PING_INTERVAL`, docs/protocol.md §5.4), marked as pinged now, and the good
/// ones, from which one random node is asked every `GET_NODE_INTERVAL`.
fn due_and_good<'a>(
    entries: impl Iterator<Item = &'a mut ClientEntry>,
    now: Timestamp,
) -> (Vec<NodeAddr>, Vec<NodeAddr>) {
    let mut due = Vec::new();
    let mut good = Vec::new();
    for entry in entries {
        let pk = entry.pk;
        for a in entry.assocs_mut() {
            if a.is_dead(now) {
                continue;
            }
            if a.last_pinged
                .is_none_or(|t| t + PING_INTERVAL <= now + ROUND_SLACK)
            {
                a.last_pinged = Some(now);
                due.push((a.addr, pk));
            }
            if a.is_good(now) {
                good.push((a.addr, pk));
            }
        }
    }
    (due, good)
}
