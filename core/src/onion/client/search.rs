//! Friend searches (docs/protocol.md §6.3, §6.6; c-toxcore 0.2.18 `onion_client.c` `do_friend`,
//! `Onion_Friend`).
//!
//! Per friend we keep the [`MAX_ONION_CLIENTS`] answering nodes closest to the friend's
//! real key, and ask each one, with a search request (sender = a temporary key pair of this
//! friend, ping id and data pk zero), whether the friend is announced there. A node that
//! says yes (`is_stored` 1) gives the friend's data key, which our onion data to the
//! friend is sealed to. The interval per node is [`ANNOUNCE_FRIEND_NEW_INTERVAL`] while
//! `run_count` ≤ [`ANNOUNCE_FRIEND_RUN_COUNT_BEGINNING`], then
//! 2^min([`MAX_RUN_COUNT_EXPONENT`], run_count − 2) s capped at
//! [`ANNOUNCE_FRIEND_MAX_INTERVAL`]; `run_count` grows every 4 requests.
//!
//! Ours: once a search is past its beginning, its requests go out on a grid shared by every
//! friend ([`search_grid`]): a node due at `t` is asked at the last grid instant at or
//! before `t` (never later than 0.2.18 would ask it, so the worst case stays 0.2.18's), and
//! the throttle's end is moved to the next grid instant. 0.2.18 serves every friend on its
//! 1 s tick, which costs it nothing more; a node that sleeps between its deadlines would
//! otherwise wake once per request of each friend, each due at its own instant (with 100
//! offline friends, 100 s after the start, about six a second). On the grid, every friend
//! due within the same few seconds goes in one wake-up, and their answers, which come back
//! together, in few more.

use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PrecomputedKey, PublicKey};
use rustox_net_crypto::Timestamp;

use super::nodes::{NodeList, PingGuard, ONION_NODE_MAX_PINGS};
use super::paths::{random_index, MAX_PATH_NODES};
use super::sendback::ListId;
use super::{OnionClient, ANNOUNCE_POPULATE_TIMEOUT, MAX_ONION_CLIENTS, POPULATE_INTERVAL};
use crate::friend::dht_pk::{NoReplay, ONION_DHTPK_SEND_INTERVAL};

/// `ANNOUNCE_FRIEND_NEW_INTERVAL` (`onion_client.c`): per-node interval for a new search.
pub const ANNOUNCE_FRIEND_NEW_INTERVAL: Duration = Duration::from_secs(3);
/// `ANNOUNCE_FRIEND_RUN_COUNT_BEGINNING` (`onion_client.c`): a search is new while its
/// run count is at most this.
pub const ANNOUNCE_FRIEND_RUN_COUNT_BEGINNING: u32 = 5;
/// `ANNOUNCE_FRIEND_MAX_INTERVAL` (`onion_client.c`): 1 h.
pub const ANNOUNCE_FRIEND_MAX_INTERVAL: u64 = 3600;
/// `MAX_RUN_COUNT_EXPONENT` (`onion_client.c`).
pub const MAX_RUN_COUNT_EXPONENT: u32 = 12;
/// The coarsest grid a search's requests are aligned to: the grids are powers of two of
/// seconds, so every instant of a coarser grid is one of each finer grid too, and friends
/// at different stages of their back-off still share wake-ups. 32 s: a search at its
/// longest interval (1 h) then moves by less than 1 % of it.
pub const SEARCH_GRID_MAX: Duration = Duration::from_secs(32);

/// The grid a search with this per-node interval (whole seconds) is aligned to: the
/// largest power of two of seconds no longer than a quarter of the interval (the throttle
/// between two requests of one friend) and [`SEARCH_GRID_MAX`]; `None` for a new search
/// (3 s), which runs at its own pace so that a friend just added is found as in 0.2.18.
pub fn search_grid(interval_secs: u64) -> Option<Duration> {
    if interval_secs <= ANNOUNCE_FRIEND_NEW_INTERVAL.as_secs() {
        return None;
    }
    let quarter = (interval_secs / (MAX_ONION_CLIENTS as u64 / 2)).max(1);
    let pow = 1u64 << (63 - quarter.leading_zeros());
    Some(Duration::from_secs(pow.min(SEARCH_GRID_MAX.as_secs())))
}

/// The last instant of `grid` at or before `t` (counted from [`Timestamp::ZERO`]).
fn grid_floor(t: Timestamp, grid: Duration) -> Timestamp {
    let g = grid.as_micros() as u64;
    Timestamp::from_micros(t.as_micros() / g * g)
}

/// The first instant of `grid` at or after `t`.
fn grid_ceil(t: Timestamp, grid: Duration) -> Timestamp {
    let g = grid.as_micros() as u64;
    if t == Timestamp::MAX {
        return t;
    }
    Timestamp::from_micros(t.as_micros().div_ceil(g).saturating_mul(g))
}

/// When a DHT-PK send found enough nodes but no path, the next try waits this long
/// (0.2.18 retries on its next 1 s tick).
pub const DHTPK_RETRY: Duration = Duration::from_secs(1);
/// Ours: the first resend of a DHT-PK while the friend is not online, doubling up to
/// `ONION_DHTPK_SEND_INTERVAL` (30 s, 0.2.18's only interval). A DHT-PK lost on a lossy
/// path would otherwise cost 30 s; the extra packets are a handful per friend, and only
/// until it comes online.
pub const DHTPK_FIRST_RESEND: Duration = Duration::from_secs(1);

/// One friend's search state (c-toxcore `Onion_Friend`).
#[derive(Debug)]
pub(super) struct Friend {
    /// `beforenm(friend real pk, our real sk)`: seals onion data to it, opens its data.
    pub(super) shared: PrecomputedKey,
    /// Signs our search requests for it (`temp_public_key`).
    pub(super) temp_keys: KeyPair,
    pub(super) list: NodeList,
    pub(super) guard: PingGuard,
    pub(super) online: bool,
    pub(super) no_replay: NoReplay,
    pub(super) dht_pk: Option<PublicKey>,
    pub(super) run_count: u32,
    /// Successful search requests (`pings`).
    pub(super) pings: u32,
    /// The last search request to any of its nodes (`time_last_pinged`).
    pub(super) time_last_pinged: Option<Timestamp>,
    /// The last DHT-PK sent through the onion (`last_dht_pk_onion_sent`).
    pub(super) last_dht_pk_sent: Option<Timestamp>,
    /// Not before this may the next DHT-PK be tried (a try found no path).
    pub(super) dht_pk_retry: Timestamp,
    /// DHT-PKs sent since the friend was last online (sets the resend interval).
    pub(super) dht_pk_sends: u32,
    pub(super) populated_at: Option<Timestamp>,
    pub(super) populate_sent: Option<Timestamp>,
}

impl Friend {
    pub(super) fn new(real_pk: PublicKey, shared: PrecomputedKey, temp_keys: KeyPair) -> Self {
        Friend {
            shared,
            temp_keys,
            list: NodeList::new(real_pk, MAX_ONION_CLIENTS),
            guard: PingGuard::default(),
            online: false,
            no_replay: NoReplay::new(),
            dht_pk: None,
            run_count: 0,
            pings: 0,
            time_last_pinged: None,
            last_dht_pk_sent: None,
            dht_pk_retry: Timestamp::ZERO,
            dht_pk_sends: 0,
            populated_at: None,
            populate_sent: None,
        }
    }

    fn is_new(&self) -> bool {
        self.run_count <= ANNOUNCE_FRIEND_RUN_COUNT_BEGINNING
    }

    /// The per-node interval in whole seconds, as `do_friend` computes it.
    pub(super) fn interval_secs(&self) -> u64 {
        if self.is_new() {
            return ANNOUNCE_FRIEND_NEW_INTERVAL.as_secs();
        }
        let exp = MAX_RUN_COUNT_EXPONENT.min(self.run_count.saturating_sub(2));
        (1u64 << exp).min(ANNOUNCE_FRIEND_MAX_INTERVAL)
    }

    /// No request to any of its nodes before this: `interval / (MAX_ONION_CLIENTS / 2)`
    /// whole seconds after the last one (0 s while the interval is 3 s, as in C).
    fn throttle_until(&self) -> Timestamp {
        let gap = Duration::from_secs(self.interval_secs() / (MAX_ONION_CLIENTS as u64 / 2));
        self.time_last_pinged.map_or(Timestamp::ZERO, |t| t + gap)
    }

    /// When listed node `i` is next due, or `None` after its last try. Past the search's
    /// beginning, on its grid ([`search_grid`]): the interval's end moved back to the grid,
    /// the throttle's and a refusal's moved forward to it.
    fn node_due(&self, i: usize) -> Option<Timestamp> {
        let n = &self.list.nodes[i];
        if n.pings_since_response >= ONION_NODE_MAX_PINGS {
            return None;
        }
        let secs = self.interval_secs();
        let interval = Duration::from_secs(secs);
        let due = n.last_pinged.map_or(Timestamp::ZERO, |t| t + interval);
        let Some(grid) = search_grid(secs) else {
            return Some(due.max(n.not_before).max(self.throttle_until()));
        };
        let later = n.not_before.max(self.throttle_until());
        Some(grid_ceil(grid_floor(due, grid).max(later), grid))
    }

    /// When random path nodes are next asked for this friend; past the search's beginning,
    /// at the next instant of its grid.
    fn populate_due(&self, now: Timestamp) -> Timestamp {
        let (count, _) = self.list.counts(now);
        if count >= MAX_ONION_CLIENTS {
            return Timestamp::MAX;
        }
        let refresh = self
            .populated_at
            .map_or(now, |t| t + ANNOUNCE_POPULATE_TIMEOUT);
        let due = if count <= MAX_ONION_CLIENTS / 2 {
            refresh.min(self.populate_sent.map_or(now, |t| t + POPULATE_INTERVAL))
        } else {
            refresh
        };
        match search_grid(self.interval_secs()) {
            Some(grid) => grid_ceil(due, grid),
            None => due,
        }
    }

    /// How long after the last DHT-PK the next is due: [`DHTPK_FIRST_RESEND`] doubling per
    /// send, at most `ONION_DHTPK_SEND_INTERVAL`.
    pub(super) fn dht_pk_interval(&self) -> Duration {
        let doublings = self.dht_pk_sends.saturating_sub(1).min(5);
        (DHTPK_FIRST_RESEND * (1u32 << doublings)).min(ONION_DHTPK_SEND_INTERVAL)
    }

    /// When the DHT-PK is next due through the onion, if its data key is known somewhere.
    fn dht_pk_due(&self, now: Timestamp) -> Option<Timestamp> {
        if !self
            .list
            .nodes
            .iter()
            .any(|n| n.is_stored && !n.timed_out(now))
        {
            return None;
        }
        let due = self
            .last_dht_pk_sent
            .map_or(Timestamp::ZERO, |t| t + self.dht_pk_interval());
        Some(due.max(self.dht_pk_retry))
    }
}

impl OnionClient {
    /// `do_friend`: DHT-PK when due, search requests to due nodes, then random path nodes
    /// if the list is at most half full.
    pub(super) fn run_friend(&mut self, now: Timestamp, pk: &PublicKey, rng: &mut dyn CryptoRng) {
        let Some(f) = self.friends.get_mut(pk) else {
            return;
        };
        if f.online {
            return;
        }
        f.list.remove_timed_out(now);
        if f.dht_pk_due(now).is_some_and(|t| t <= now) {
            self.send_dht_pk(now, pk, rng);
        }
        let Some(f) = self.friends.get(pk) else {
            return;
        };
        for i in 0..f.list.nodes.len() {
            let Some(f) = self.friends.get_mut(pk) else {
                return;
            };
            if f.node_due(i).is_none_or(|t| t > now) {
                continue;
            }
            let node = f.list.nodes[i].clone();
            if !f.guard.allow(now, &node.pk) {
                f.list.nodes[i].not_before = f.guard.next_allowed(&node.pk);
                self.stats.rate_limited += 1;
                continue;
            }
            let list = ListId::Friend(*pk);
            let sent =
                self.send_announce_request(now, list, (node.pk, node.addr), [0; 32], None, rng);
            let Some(f) = self.friends.get_mut(pk) else {
                return;
            };
            if sent.is_some() {
                let n = &mut f.list.nodes[i];
                n.last_pinged = Some(now);
                n.pings_since_response += 1;
                f.time_last_pinged = Some(now);
                f.pings += 1;
                if f.pings % (MAX_ONION_CLIENTS as u32 / 2) == 0 {
                    f.run_count += 1;
                }
            } else {
                f.list.nodes[i].not_before = now + ANNOUNCE_FRIEND_NEW_INTERVAL;
            }
        }
        let Some(f) = self.friends.get_mut(pk) else {
            return;
        };
        let (count, _) = f.list.counts(now);
        if count == MAX_ONION_CLIENTS {
            if !f.is_new() {
                f.populated_at = Some(now);
            }
            return;
        }
        if f.populate_due(now) > now {
            return;
        }
        let pool = self.path_nodes.populate_pool().to_vec();
        if pool.is_empty() {
            return;
        }
        f.populate_sent = Some(now);
        f.populated_at = Some(now);
        for _ in 0..pool.len().min(MAX_PATH_NODES / 4) {
            let node = pool[random_index(rng, pool.len())];
            let Some(f) = self.friends.get_mut(pk) else {
                return;
            };
            if f.list.contains(&node.pk) || !f.guard.allow(now, &node.pk) {
                continue;
            }
            self.send_announce_request(
                now,
                ListId::Friend(*pk),
                (node.pk, node.addr),
                [0; 32],
                None,
                rng,
            );
        }
    }

    /// A friend's next deadline (none while it is online).
    pub(super) fn friend_deadline(&self, now: Timestamp, f: &Friend) -> Timestamp {
        if f.online {
            return Timestamp::MAX;
        }
        let mut d = Timestamp::MAX;
        for (i, n) in f.list.nodes.iter().enumerate() {
            if let Some(t) = f.node_due(i) {
                d = d.min(t);
            }
            if let Some(t) = n.timeout_at() {
                d = d.min(t);
            }
        }
        if let Some(t) = f.dht_pk_due(now) {
            d = d.min(t);
        }
        if !self.path_nodes.populate_pool().is_empty() {
            d = d.min(f.populate_due(now));
        }
        d
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
