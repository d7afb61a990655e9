//! Path nodes and onion paths (docs/protocol.md §6.2, §6.6; c-toxcore 0.2.18 `onion_client.c`
//! `onion_add_bs_path_node`, `onion_add_path_node`, `random_path`, `path_timed_out`,
//! `set_path_timeouts`).
//!
//! Path nodes are candidates for the three relays of a path: bootstrap nodes (never evicted)
//! and nodes the DHT knows or that answered us (a ring of [`MAX_PATH_NODES`], the newest
//! replacing the oldest). A `PathSet` holds [`NUMBER_ONION_PATHS`] paths; the client keeps
//! one set for announcing itself and one for friend searches and data, so the relays that
//! see our self-announces are not the ones that see whom we look for.
//!
//! A path that stops answering counts against its relays (`path_health.rs`): new paths are
//! drawn from the nodes with the fewest recent failures, and a node that failed twice with
//! no answer between leaves the ring, so a node that died stops being drawn within a few
//! path timeouts (0.2.18 keeps drawing it until 32 newer nodes push it out).
//!
//! Without working UDP (UDP off, or no DHT node answering) the first relay of a new path is
//! one of our connected TCP relays (0.2.18 `random_nodes_path_onion` with a TCP connection
//! as node 0): it is sent the request without its own layer over TCP (packet 8, §7) and
//! acts as hop A; B and C are UDP path nodes as always.

use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PrecomputedKey};
use rustox_net_crypto::Timestamp;

use super::path_health::{PathHealth, DROP_AFTER_FAILURES};
use crate::dht::wire::packed_node::{canonical, PackedNode};
use crate::onion::wire::request::OnionPath;

pub use super::path_health::MAX_PATH_NODES;

/// `NUMBER_ONION_PATHS` (`onion_client.h`): paths per set.
pub const NUMBER_ONION_PATHS: usize = 6;
/// `ONION_PATH_LENGTH` (`onion.h`): relays per path.
pub const ONION_PATH_LENGTH: usize = 3;
/// `ONION_PATH_FIRST_TIMEOUT` (`onion_client.h`): a path that never answered is dead this
/// long after its last use once it has been used [`ONION_PATH_MAX_NO_RESPONSE_USES`] times.
pub const ONION_PATH_FIRST_TIMEOUT: Duration = Duration::from_secs(4);
/// `ONION_PATH_TIMEOUT` (`onion_client.h`): the same for a path that has answered before.
pub const ONION_PATH_TIMEOUT: Duration = Duration::from_secs(10);
/// `ONION_PATH_MAX_LIFETIME` (`onion_client.h`): paths are rebuilt after 20 minutes
/// whatever happens (relays refresh their sendback keys every 2 h, §6.2).
pub const ONION_PATH_MAX_LIFETIME: Duration = Duration::from_secs(1200);
/// `ONION_PATH_MAX_NO_RESPONSE_USES` (`onion_client.h`): uses without an answer before the
/// timeouts above apply.
pub const ONION_PATH_MAX_NO_RESPONSE_USES: u32 = 4;

/// Candidates for path relays: bootstrap nodes and a ring of recently seen nodes.
#[derive(Debug, Default)]
pub(super) struct PathNodes {
    bootstrap: Vec<PackedNode>,
    ring: Vec<PackedNode>,
    /// Where the next node goes once the ring is full (c-toxcore's `path_nodes_index`).
    next: usize,
    /// Connected TCP relays, candidates for hop A while [`Self::tcp_first`] holds.
    tcp_relays: Vec<PackedNode>,
    /// New paths start at a TCP relay.
    tcp_first: bool,
    /// Which nodes paths timed out through.
    health: PathHealth,
    /// Our own DHT key: never a path node (the DHT never holds it either), though an
    /// announce response may come from ourselves.
    own: Option<rustox_net_crypto::crypto::PublicKey>,
    /// Nodes dropped since the client last asked ([`Self::take_dropped`]): the paths
    /// through them are dead too.
    dropped: Vec<rustox_net_crypto::crypto::PublicKey>,
}

impl PathNodes {
    /// Adds a bootstrap node unless its key is known; ignored once
    /// [`MAX_PATH_NODES`] are kept (c-toxcore overwrites the oldest; bootstrap nodes come
    /// from the user and we keep the first ones). TCP addresses are refused.
    pub(super) fn add_bootstrap(&mut self, node: PackedNode) -> bool {
        if node.tcp || node.addr.port() == 0 || self.own == Some(node.pk) {
            return false;
        }
        let node = PackedNode::udp(canonical(node.addr), node.pk);
        if self.bootstrap.iter().any(|n| n.pk == node.pk) {
            return true;
        }
        if self.bootstrap.len() >= MAX_PATH_NODES {
            return false;
        }
        self.bootstrap.push(node);
        true
    }

    /// Adds a node unless its key is already in the ring (`onion_add_path_node`: the
    /// address of a known key is not updated) or paths timed out through it too often
    /// lately; the oldest entry makes room.
    pub(super) fn add(&mut self, now: Timestamp, node: PackedNode) -> bool {
        if node.tcp || node.addr.port() == 0 || self.own == Some(node.pk) {
            return false;
        }
        if self.health.failures(now, &node.pk) >= DROP_AFTER_FAILURES {
            return false;
        }
        let node = PackedNode::udp(canonical(node.addr), node.pk);
        if self.ring.iter().any(|n| n.pk == node.pk) {
            return false;
        }
        if self.ring.len() < MAX_PATH_NODES {
            self.ring.push(node);
        } else {
            self.ring[self.next % MAX_PATH_NODES] = node;
        }
        self.next = (self.next + 1) % MAX_PATH_NODES;
        true
    }

    /// Paths for the node whose DHT key is `own`.
    pub(super) fn for_own_key(own: rustox_net_crypto::crypto::PublicKey) -> Self {
        PathNodes {
            own: Some(own),
            ..PathNodes::default()
        }
    }

    /// `pk` answered at `at`: a path through it, the node itself, or its DHT replies.
    pub(super) fn answered(
        &mut self,
        now: Timestamp,
        pk: &rustox_net_crypto::crypto::PublicKey,
        at: Timestamp,
    ) {
        self.health.answered(now, pk, at);
    }

    /// A path over `relays` stopped answering (it last answered at `path_answered`): its
    /// relays are blamed (`path_health.rs`), and those that failed too often leave the ring.
    fn path_failed(&mut self, now: Timestamp, relays: &[PackedNode; 3], path_answered: Timestamp) {
        let keys: Vec<_> = relays.iter().filter(|n| !n.tcp).map(|n| n.pk).collect();
        let dropped = self.health.path_failed(now, &keys, path_answered);
        if !dropped.is_empty() {
            self.ring.retain(|n| !dropped.contains(&n.pk));
            self.next %= MAX_PATH_NODES;
            for pk in dropped {
                if !self.dropped.contains(&pk) && self.dropped.len() < 2 * MAX_PATH_NODES {
                    self.dropped.push(pk);
                }
            }
        }
    }

    /// The nodes dropped since the last call.
    pub(super) fn take_dropped(&mut self) -> Vec<rustox_net_crypto::crypto::PublicKey> {
        std::mem::take(&mut self.dropped)
    }

    /// The TCP relays paths may start at, and whether new paths start there.
    pub(super) fn set_tcp_relays(&mut self, relays: Vec<PackedNode>, tcp_first: bool) {
        self.tcp_relays = relays;
        self.tcp_relays.truncate(MAX_PATH_NODES);
        self.tcp_first = tcp_first;
    }

    /// Nodes in the ring (c-toxcore's `min(path_nodes_index, MAX_PATH_NODES)`).
    pub(super) fn len(&self) -> usize {
        self.ring.len()
    }

    /// Bootstrap nodes kept.
    pub(super) fn bootstrap_len(&self) -> usize {
        self.bootstrap.len()
    }

    /// The nodes announce and search requests are sent to when a list needs filling
    /// (`do_announce` uses the bootstrap list while the ring is empty).
    pub(super) fn populate_pool(&self) -> &[PackedNode] {
        if self.ring.is_empty() {
            &self.bootstrap
        } else {
            &self.ring
        }
    }

    /// Three random relays: distinct ones from the ring if it holds three, else from the
    /// ring and the bootstrap list together. Where even those are fewer than three (a new
    /// network: one bootstrap node and a peer), they are drawn with replacement, as 0.2.18's
    /// `random_nodes_path_onion` always does, so a path may pass one node twice: a node
    /// relaying to itself is harmless, and without it two peers and one bootstrap node could
    /// never announce.
    ///
    /// Only the candidates with the fewest recent failures are drawn (`path_health.rs`):
    /// with one live node and one dead one, every new path passes the live one alone.
    fn random_path_nodes(
        &self,
        now: Timestamp,
        rng: &mut dyn CryptoRng,
    ) -> Option<[PackedNode; 3]> {
        let mut pool: Vec<PackedNode> = self.ring.clone();
        if pool.len() < ONION_PATH_LENGTH {
            for b in &self.bootstrap {
                if !pool.iter().any(|n| n.pk == b.pk) {
                    pool.push(*b);
                }
            }
        }
        let fewest = pool
            .iter()
            .map(|n| self.health.failures(now, &n.pk))
            .min()?;
        pool.retain(|n| self.health.failures(now, &n.pk) == fewest);
        let first = *pool.first()?;
        let mut picked = [first; 3];
        if self.tcp_first && !self.tcp_relays.is_empty() {
            picked[0] = self.tcp_relays[random_index(rng, self.tcp_relays.len())];
            let distinct = pool.len() >= ONION_PATH_LENGTH - 1;
            for slot in picked[1..].iter_mut() {
                let i = random_index(rng, pool.len());
                *slot = if distinct {
                    pool.swap_remove(i)
                } else {
                    pool[i]
                };
            }
            return Some(picked);
        }
        if pool.len() < ONION_PATH_LENGTH {
            for slot in picked.iter_mut() {
                *slot = pool[random_index(rng, pool.len())];
            }
            return Some(picked);
        }
        for slot in picked.iter_mut() {
            let i = random_index(rng, pool.len());
            *slot = pool.swap_remove(i);
        }
        Some(picked)
    }
}

/// A uniform index below `n` (`random_range_u32`); `n` must not be 0.
pub(super) fn random_index(rng: &mut dyn CryptoRng, n: usize) -> usize {
    debug_assert!(n > 0);
    (rng.next_u64() % n.max(1) as u64) as usize
}

/// One path and its timers (c-toxcore's `Onion_Client_Paths` arrays, one index).
#[derive(Debug)]
struct PathSlot {
    path: OnionPath,
    /// Random, ≡ slot (mod 6): recorded in each request's sendback so that a response
    /// marks exactly this path alive, not a later one in the same slot.
    path_num: u32,
    created: Timestamp,
    last_success: Timestamp,
    last_used: Timestamp,
    /// Uses since the last response.
    used_times: u32,
}

impl PathSlot {
    /// `path_timed_out`'s first clause: used [`ONION_PATH_MAX_NO_RESPONSE_USES`] times
    /// without an answer, the last use a timeout ago. (Its second clause, the 20-minute
    /// lifetime, says nothing against the relays.)
    fn unanswered(&self, now: Timestamp) -> bool {
        let timeout = if self.last_success == self.created {
            ONION_PATH_FIRST_TIMEOUT
        } else {
            ONION_PATH_TIMEOUT
        };
        self.used_times >= ONION_PATH_MAX_NO_RESPONSE_USES && self.last_used + timeout <= now
    }

    /// `path_timed_out`.
    fn timed_out(&self, now: Timestamp) -> bool {
        let timeout = if self.last_success == self.created {
            ONION_PATH_FIRST_TIMEOUT
        } else {
            ONION_PATH_TIMEOUT
        };
        (self.used_times >= ONION_PATH_MAX_NO_RESPONSE_USES && self.last_used + timeout <= now)
            || self.created + ONION_PATH_MAX_LIFETIME <= now
    }
}

/// [`NUMBER_ONION_PATHS`] paths, rebuilt when they time out.
#[derive(Debug, Default)]
pub(super) struct PathSet {
    slots: [Option<PathSlot>; NUMBER_ONION_PATHS],
    created: u64,
}

impl PathSet {
    /// The path to send a request on (`random_path`): the slot of `path_num` if given, else
    /// a random slot; a dead or empty slot gets a new path first. Returns the slot's
    /// `path_num`, or `None` when too few path nodes are known or the first one's key has
    /// low order (B's and C's are checked by [`OnionPath::with_first_key`]).
    pub(super) fn pick(
        &mut self,
        now: Timestamp,
        path_num: Option<u32>,
        nodes: &mut PathNodes,
        rng: &mut dyn CryptoRng,
    ) -> Option<u32> {
        let slot = match path_num {
            Some(n) => n as usize % NUMBER_ONION_PATHS,
            None => random_index(rng, NUMBER_ONION_PATHS),
        };
        let dead = self.slots[slot].as_ref().is_none_or(|s| s.timed_out(now));
        if dead {
            if let Some(old) = self.slots[slot].as_ref().filter(|s| s.unanswered(now)) {
                nodes.path_failed(now, old.path.nodes(), old.last_success);
                // Blamed once: the slot is replaced below, or emptied if no path can be built.
                self.slots[slot] = None;
            }
            let relays = nodes.random_path_nodes(now, rng)?;
            // Hop A gets a fresh key pair like B and C: the client is given no DHT secret
            // key (see the module docs of `client`).
            let first = KeyPair::generate(rng);
            let shared = PrecomputedKey::new(&relays[0].pk, &first.secret).ok()?;
            let path = OnionPath::with_first_key(first.public, shared, relays, rng).ok()?;
            let num = (rng.next_u32() / NUMBER_ONION_PATHS as u32) * NUMBER_ONION_PATHS as u32
                + slot as u32;
            self.slots[slot] = Some(PathSlot {
                path,
                path_num: num,
                created: now,
                last_success: now,
                last_used: now,
                used_times: ONION_PATH_MAX_NO_RESPONSE_USES / 2,
            });
            self.created += 1;
        }
        let s = self.slots[slot].as_mut()?;
        if s.used_times < ONION_PATH_MAX_NO_RESPONSE_USES {
            s.last_used = now;
        }
        s.used_times += 1;
        Some(s.path_num)
    }

    /// Forgets the paths that pass any of `dead` (nodes dropped for their failures): they
    /// cannot answer, and an announce stored through one must be renewed on another now,
    /// not when its stable interval (120 s) comes round.
    pub(super) fn forget_through(&mut self, dead: &[rustox_net_crypto::crypto::PublicKey]) {
        for slot in self.slots.iter_mut() {
            if slot.as_ref().is_some_and(|s| {
                s.path
                    .nodes()
                    .iter()
                    .any(|n| !n.tcp && dead.contains(&n.pk))
            }) {
                *slot = None;
            }
        }
    }

    /// The path of `path_num`, if that path still occupies its slot.
    pub(super) fn path(&self, path_num: u32) -> Option<&OnionPath> {
        let s = self.slots[path_num as usize % NUMBER_ONION_PATHS].as_ref()?;
        (s.path_num == path_num).then_some(&s.path)
    }

    /// `path_exists`: the path is in its slot and alive.
    pub(super) fn exists(&self, now: Timestamp, path_num: u32) -> bool {
        self.slots[path_num as usize % NUMBER_ONION_PATHS]
            .as_ref()
            .is_some_and(|s| s.path_num == path_num && !s.timed_out(now))
    }

    /// A response came back on `path_num` (`set_path_timeouts`): the path is alive. Returns
    /// its relays (they become path nodes), or `None` if the path has been replaced.
    pub(super) fn confirm(&mut self, now: Timestamp, path_num: u32) -> Option<[PackedNode; 3]> {
        let s = self.slots[path_num as usize % NUMBER_ONION_PATHS].as_mut()?;
        if s.path_num != path_num {
            return None;
        }
        s.last_success = now;
        s.used_times = 0;
        Some(*s.path.nodes())
    }

    /// True when the path in `path_num`'s slot counts as stable for `do_announce`: older
    /// than `age` and not waiting on unanswered uses for longer than [`ONION_PATH_TIMEOUT`].
    pub(super) fn stable(&self, now: Timestamp, path_num: u32, age: Duration) -> bool {
        self.slots[path_num as usize % NUMBER_ONION_PATHS]
            .as_ref()
            .is_some_and(|s| {
                s.created + age <= now
                    && !(s.used_times > 0 && s.last_used + ONION_PATH_TIMEOUT <= now)
            })
    }

    /// Paths built so far.
    pub(super) fn created(&self) -> u64 {
        self.created
    }
}
