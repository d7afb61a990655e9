//! Path nodes and onion paths (protocol.md §6.2, §6.6; c-toxcore 0.2.18 `onion_client.c`
//! `onion_add_bs_path_node`, `onion_add_path_node`, `random_path`, `path_timed_out`,
//! `set_path_timeouts`).
//!
//! Path nodes are candidates for the three relays of a path: bootstrap nodes (never evicted)
//! and nodes the DHT knows or that answered us (a ring of [`MAX_PATH_NODES`], the newest
//! replacing the oldest). A `PathSet` holds [`NUMBER_ONION_PATHS`] paths; the client keeps
//! one set for announcing itself and one for friend searches and data, so the relays that
//! see our self-announces are not the ones that see whom we look for.
//!
//! Without working UDP (UDP off, or no DHT node answering) the first relay of a new path is
//! one of our connected TCP relays (0.2.18 `random_nodes_path_onion` with a TCP connection
//! as node 0): it is sent the request without its own layer over TCP (packet 8, §7) and
//! acts as hop A; B and C are UDP path nodes as always.

use std::time::Duration;

use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PrecomputedKey};
use rustox_net_crypto::Timestamp;

use crate::dht::wire::packed_node::{canonical, PackedNode};
use crate::onion::wire::request::OnionPath;

/// `MAX_PATH_NODES` (`onion_client.h`): path-node candidates kept, and bootstrap nodes kept.
pub const MAX_PATH_NODES: usize = 32;
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
}

impl PathNodes {
    /// Adds a bootstrap node unless its key is known; ignored once
    /// [`MAX_PATH_NODES`] are kept (c-toxcore overwrites the oldest; bootstrap nodes come
    /// from the user and we keep the first ones). TCP addresses are refused.
    pub(super) fn add_bootstrap(&mut self, node: PackedNode) -> bool {
        if node.tcp || node.addr.port() == 0 {
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
    /// address of a known key is not updated); the oldest entry makes room.
    pub(super) fn add(&mut self, node: PackedNode) -> bool {
        if node.tcp || node.addr.port() == 0 {
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
    fn random_path_nodes(&self, rng: &mut dyn CryptoRng) -> Option<[PackedNode; 3]> {
        let mut pool: Vec<PackedNode> = self.ring.clone();
        if pool.len() < ONION_PATH_LENGTH {
            for b in &self.bootstrap {
                if !pool.iter().any(|n| n.pk == b.pk) {
                    pool.push(*b);
                }
            }
        }
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
        nodes: &PathNodes,
        rng: &mut dyn CryptoRng,
    ) -> Option<u32> {
        let slot = match path_num {
            Some(n) => n as usize % NUMBER_ONION_PATHS,
            None => random_index(rng, NUMBER_ONION_PATHS),
        };
        let dead = self.slots[slot].as_ref().is_none_or(|s| s.timed_out(now));
        if dead {
            let relays = nodes.random_path_nodes(rng)?;
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
