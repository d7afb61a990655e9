//! Our own announce list (docs/protocol.md §6.3, §6.6; c-toxcore 0.2.18 `onion_client.c`
//! `do_announce`, `clients_announce_list`).
//!
//! We keep the [`MAX_ONION_CLIENTS_ANNOUNCE`] answering nodes closest to our real key and
//! announce to each with our real key as sender and our data key as data pk: first without
//! a ping id, then with the one the node returns, along the same path (the ping id is bound
//! to the address D sees, the path's last relay). Re-announce intervals as 0.2.18:
//! [`ANNOUNCE_INTERVAL_NOT_ANNOUNCED`] until the node stores us on a live path,
//! [`ANNOUNCE_INTERVAL_ANNOUNCED`] after, [`ANNOUNCE_INTERVAL_STABLE`] once node and path
//! have lasted [`TIME_TO_STABLE`] without unanswered requests.

use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, PublicKey};
use rustox_net_crypto::Timestamp;

use super::nodes::{
    NodeList, PingGuard, ONION_NODE_MAX_PINGS, ONION_NODE_PING_INTERVAL, ONION_NODE_TIMEOUT,
};
use super::paths::random_index;
use super::sendback::ListId;
use super::{
    OnionClient, ANNOUNCE_POPULATE_TIMEOUT, MAX_ONION_CLIENTS_ANNOUNCE, POPULATE_INTERVAL,
};

/// `ANNOUNCE_INTERVAL_NOT_ANNOUNCED` (`onion_client.c`): 3 s.
pub const ANNOUNCE_INTERVAL_NOT_ANNOUNCED: Duration = Duration::from_secs(3);
/// `ANNOUNCE_INTERVAL_ANNOUNCED` = `ONION_NODE_PING_INTERVAL` (`onion_client.c`): 15 s.
pub const ANNOUNCE_INTERVAL_ANNOUNCED: Duration = ONION_NODE_PING_INTERVAL;
/// `TIME_TO_STABLE` = `ONION_NODE_PING_INTERVAL * 6` (`onion_client.c`): 90 s.
pub const TIME_TO_STABLE: Duration = Duration::from_secs(90);
/// `ANNOUNCE_INTERVAL_STABLE` = `ONION_NODE_PING_INTERVAL * 8` (`onion_client.c`): 120 s.
pub const ANNOUNCE_INTERVAL_STABLE: Duration = Duration::from_secs(120);

/// The self-announce list and its timers.
#[derive(Debug)]
pub(super) struct AnnounceList {
    pub(super) list: NodeList,
    pub(super) guard: PingGuard,
    /// The last announce request to a listed node (`last_announce`).
    last_announce: Option<Timestamp>,
    /// The last time the list was full (`last_populated`).
    populated_at: Option<Timestamp>,
    /// The last time random path nodes were asked.
    populate_sent: Option<Timestamp>,
    /// Populating rounds in a row that found the list no fuller than the one before: each
    /// doubles [`POPULATE_INTERVAL`], up to [`MAX_POPULATE_BACKOFF`] doublings.
    populate_backoff: u32,
    /// The list's count at the last populating round.
    populate_count: usize,
}

/// Most doublings of the populating interval (1 s × 2⁶ = 64 s). On a network too small to
/// fill half the list (a bootstrap node and a few peers) 0.2.18 asks random path nodes every
/// second forever; asking again is only worth it when the last round found someone, or when
/// new path nodes arrive ([`AnnounceList::on_new_path_node`]).
pub const MAX_POPULATE_BACKOFF: u32 = 6;
/// Most doublings while the list is empty (4 s).
pub const EMPTY_POPULATE_BACKOFF: u32 = 2;

impl AnnounceList {
    pub(super) fn new(real_pk: PublicKey) -> Self {
        AnnounceList {
            list: NodeList::new(real_pk, MAX_ONION_CLIENTS_ANNOUNCE),
            guard: PingGuard::default(),
            last_announce: None,
            populated_at: None,
            populate_sent: None,
            populate_backoff: 0,
            populate_count: 0,
        }
    }

    /// A path node we did not know: worth asking at the normal pace again.
    pub(super) fn on_new_path_node(&mut self) {
        self.populate_backoff = 0;
    }
}

impl OnionClient {
    /// When listed node `i` is next due (`do_announce`'s interval choice), or `None` if it
    /// has had its [`ONION_NODE_MAX_PINGS`] tries.
    fn announce_node_due(&self, now: Timestamp, i: usize) -> Option<Timestamp> {
        let n = &self.announce.list.nodes[i];
        if n.pings_since_response >= ONION_NODE_MAX_PINGS {
            return None;
        }
        let Some(last) = n.last_pinged else {
            return Some(n.not_before);
        };
        let mut interval = ANNOUNCE_INTERVAL_NOT_ANNOUNCED;
        if let Some(p) = n
            .path_used
            .filter(|p| n.is_stored && self.paths_self.exists(now, *p))
        {
            interval = ANNOUNCE_INTERVAL_ANNOUNCED;
            let node_stable = n.added + TIME_TO_STABLE <= now
                && !(n.pings_since_response > 0 && last + ONION_NODE_TIMEOUT <= now);
            if node_stable && self.paths_self.stable(now, p, TIME_TO_STABLE) {
                interval = ANNOUNCE_INTERVAL_STABLE;
            }
        }
        let mut due = last + interval;
        // Nothing announced for 15 s: every node is due (`last_announce`).
        if let Some(la) = self.announce.last_announce {
            due = due.min(la + ONION_NODE_PING_INTERVAL);
        }
        Some(due.max(n.not_before))
    }

    /// `do_announce`: re-announce to due nodes, then ask random path nodes if the list is
    /// at most half full (or not full for 10 minutes).
    pub(super) fn run_announce(&mut self, now: Timestamp, rng: &mut dyn CryptoRng) {
        self.announce.list.remove_timed_out(now);
        for i in 0..self.announce.list.nodes.len() {
            let Some(due) = self.announce_node_due(now, i) else {
                continue;
            };
            if due > now {
                continue;
            }
            let n = self.announce.list.nodes[i].clone();
            let path = if n.pings_since_response == ONION_NODE_MAX_PINGS - 1
                && n.added + TIME_TO_STABLE <= now
            {
                // Last chance for a long-lived node: a random path.
                None
            } else {
                n.path_used
            };
            if !self.announce.guard.allow(now, &n.pk) {
                self.stats.rate_limited += 1;
                self.announce.list.nodes[i].not_before = self.announce.guard.next_allowed(&n.pk);
                continue;
            }
            let sent = self.send_announce_request(
                now,
                ListId::Announce,
                (n.pk, n.addr),
                n.ping_id,
                path,
                rng,
            );
            let node = &mut self.announce.list.nodes[i];
            if sent.is_some() {
                node.last_pinged = Some(now);
                node.pings_since_response += 1;
                self.announce.last_announce = Some(now);
            } else {
                // No path: try again after the shortest interval.
                node.not_before = now + ANNOUNCE_INTERVAL_NOT_ANNOUNCED;
            }
        }
        let (count, _) = self.announce.list.counts(now);
        if count == MAX_ONION_CLIENTS_ANNOUNCE {
            self.announce.populated_at = Some(now);
            return;
        }
        if self.announce_populate_due(now, count) <= now {
            let a = &mut self.announce;
            if a.populate_sent.is_some() && count == a.populate_count {
                a.populate_backoff = (a.populate_backoff + 1).min(MAX_POPULATE_BACKOFF);
            } else {
                a.populate_backoff = 0;
            }
            a.populate_count = count;
            self.announce.populate_sent = Some(now);
            self.announce.populated_at.get_or_insert(now);
            let pool = self.path_nodes.populate_pool().to_vec();
            if pool.is_empty() {
                return;
            }
            for _ in 0..MAX_ONION_CLIENTS_ANNOUNCE / 2 {
                let node = pool[random_index(rng, pool.len())];
                if self.announce.list.contains(&node.pk) {
                    continue;
                }
                if !self.announce.guard.allow(now, &node.pk) {
                    continue;
                }
                self.send_announce_request(
                    now,
                    ListId::Announce,
                    (node.pk, node.addr),
                    [0; 32],
                    None,
                    rng,
                );
            }
        }
    }

    fn announce_populate_due(&self, now: Timestamp, count: usize) -> Timestamp {
        if count >= MAX_ONION_CLIENTS_ANNOUNCE {
            return Timestamp::MAX;
        }
        if count <= MAX_ONION_CLIENTS_ANNOUNCE / 2 {
            // A list that lost nodes since the last round refills at the normal pace. An
            // empty list is a node cut off (or a network coming back): it keeps asking at
            // least every 4 s, so it reconnects soon after the network does.
            let backoff = if count < self.announce.populate_count {
                0
            } else if count == 0 {
                self.announce.populate_backoff.min(EMPTY_POPULATE_BACKOFF)
            } else {
                self.announce.populate_backoff
            };
            let interval = POPULATE_INTERVAL * (1 << backoff);
            return self.announce.populate_sent.map_or(now, |t| t + interval);
        }
        self.announce
            .populated_at
            .map_or(now, |t| t + ANNOUNCE_POPULATE_TIMEOUT)
    }

    /// The announce list's next deadline: a node due, a node timing out, or populating.
    pub(super) fn announce_deadline(&self, now: Timestamp) -> Timestamp {
        let mut d = Timestamp::MAX;
        for i in 0..self.announce.list.nodes.len() {
            if let Some(t) = self.announce_node_due(now, i) {
                d = d.min(t);
            }
            if let Some(t) = self.announce.list.nodes[i].timeout_at() {
                d = d.min(t);
            }
        }
        if self.path_nodes.populate_pool().is_empty() {
            return d;
        }
        let (count, _) = self.announce.list.counts(now);
        d.min(self.announce_populate_due(now, count))
    }
}
