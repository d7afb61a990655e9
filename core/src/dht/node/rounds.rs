//! The DHT node's timers (docs/protocol.md §5.4, §5.7): the `do_dht` round (pings and
//! get-nodes to every list), the `to_bootstrap` and `to_ping` batches, LAN discovery, and
//! when the next of them is due.

use std::net::SocketAddr;

use rustox_net_crypto::crypto::{CryptoRng, PublicKey};
use rustox_net_crypto::Timestamp;

use super::DhtNode;
use crate::dht::client::ClientEntry;
use crate::dht::distance::cmp_distance;
use crate::dht::gate::{OutPacket, Outgoing};
use crate::dht::lan::discovery_targets;
use crate::dht::pending::RequestKind;
use crate::dht::timers::*;
use crate::dht::wire::dht_packet::DhtMessage;
use crate::dht::wire::lan_discovery;
use crate::dht::wire::nodes::NodesRequest;
use crate::dht::wire::ping::Ping;

impl DhtNode {
    pub(super) fn send_ping(
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

    pub(super) fn send_nodes_request(
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
    pub(super) fn to_bootstrap_due(&self) -> Option<Timestamp> {
        let waiting = !self.close_to_bootstrap.is_empty()
            || self.search_to_bootstrap.iter().any(|l| !l.is_empty());
        waiting.then(|| {
            self.to_bootstrap_at
                .map_or(Timestamp::ZERO, |t| t + DHT_TICK)
        })
    }

    /// When the next `to_ping` node may be pinged, if any waits.
    pub(super) fn to_ping_due(&self) -> Option<Timestamp> {
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
    pub(super) fn ask_to_bootstrap(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
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
    pub(super) fn ping_to_ping(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
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

    pub(super) fn do_dht(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
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
            if self.searches[i].dormant {
                continue;
            }
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
    pub(super) fn next_round(&self, now: Timestamp) -> Timestamp {
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
        for s in self.searches.iter().filter(|s| !s.dormant) {
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
        for s in self.searches.iter().filter(|s| !s.dormant) {
            if s.clients.iter().any(|e| e.is_good(now)) {
                next = next.min(get_node_due(s.last_get_node, s.bootstrap_times));
            }
        }
        if self.config.hole_punching
            && (0..self.searches.len()).any(|i| {
                !self.searches[i].fake
                    && !self.searches[i].dormant
                    && self.friend_ips(now, i).len() >= MAX_FRIEND_CLIENTS / 2
            })
        {
            next = soonest;
        }
        next.max(soonest)
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
