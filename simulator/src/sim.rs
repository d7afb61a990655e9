//! The discrete-event simulator: a virtual clock, nodes, links, and an event heap.
//!
//! Time jumps straight to the earliest pending event — a datagram arriving or a node's
//! deadline — so an hour of a 600 ms path costs only the events in it. Ties are broken by the
//! order events were scheduled, which with seeded links and nodes makes a run a pure function
//! of its seed (checked by hashing the packet trace, see [`crate::trace`]).
//!
//! Routing: a datagram from node A to an address owned by node B crosses the link registered
//! for (A, B); if none is registered one is created from the default configuration. Several
//! node pairs may share one link — that is how flows compete for one bottleneck.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;

use rand_chacha::ChaCha8Rng;
use rustox_net_crypto::Timestamp;

use crate::driver_model::{DriverModel, DriverState, DriverStats, Queued};
use crate::link::{Link, LinkConfig, LinkVerdict};
use crate::node::SimNode;
use crate::seed::{derive_rng, replay_command, StreamKind};
use crate::trace::{TraceEvent, TraceHash};

/// Index of a node in the simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub usize);

/// Index of a link in the simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId(pub usize);

/// Events processed at one instant without the clock moving before the run is declared stuck
/// (a node whose deadline stays in the past would otherwise spin forever). Even 500 nodes all
/// due at the same microsecond with a few datagrams each stay far below this.
const MAX_EVENTS_AT_ONE_INSTANT: u64 = 100_000;

/// Why a run stopped abnormally.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// A node's `check_invariants` failed.
    #[error("node {node} broke an invariant at {at:?}: {reason}")]
    Invariant {
        /// The node.
        node: usize,
        /// When.
        at: Timestamp,
        /// What it reported.
        reason: String,
    },
    /// The clock stopped advancing: a node keeps asking to be woken at or before `now`
    /// without making progress (a sans-IO core must move its deadline once it has run).
    #[error("livelock at {at:?}: {MAX_EVENTS_AT_ONE_INSTANT} events without time advancing; node {node} last asked for a wake-up at {deadline:?}")]
    Livelock {
        /// When.
        at: Timestamp,
        /// The node handling the last event.
        node: usize,
        /// That node's deadline.
        deadline: Option<Timestamp>,
    },
    /// A scenario-level check failed.
    #[error("{0}")]
    Scenario(String),
}

#[derive(Debug)]
enum EventKind {
    Deliver {
        node: NodeId,
        from: SocketAddr,
        to: SocketAddr,
        payload: Vec<u8>,
    },
    Timer {
        node: NodeId,
        generation: u64,
    },
    /// Drain a node's transmits and arm its timer without an input (a newly added node).
    Service {
        node: NodeId,
    },
    /// A node with a driver model reads its socket (driver_model.rs).
    Read {
        node: NodeId,
    },
}

#[derive(Debug)]
struct Event {
    at: Timestamp,
    seq: u64,
    kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

struct NodeSlot<N> {
    node: N,
    addrs: Vec<SocketAddr>,
    armed: Option<Timestamp>,
    generation: u64,
    /// The driver between this node and the network; `None` handles every input at the
    /// instant it happens.
    driver: Option<DriverState>,
    /// The node left the network ([`Simulator::remove_node`]).
    departed: bool,
}

/// Counters of the simulator itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimStats {
    /// Events processed (stale timers excluded).
    pub events: u64,
    /// Datagrams handed to nodes.
    pub datagrams_delivered: u64,
    /// Datagram payload bytes handed to nodes.
    pub bytes_delivered: u64,
    /// Datagrams sent to an address no node owns (including a departed node's).
    pub unroutable: u64,
    /// Datagrams in flight to a node when it departed, dropped on arrival.
    pub lost_to_departed: u64,
}

/// A deterministic network of `N` nodes.
pub struct Simulator<N: SimNode> {
    seed: u64,
    now: Timestamp,
    seq: u64,
    nodes: Vec<NodeSlot<N>>,
    owners: HashMap<SocketAddr, NodeId>,
    links: Vec<Link>,
    routes: HashMap<(NodeId, NodeId), LinkId>,
    default_link: LinkConfig,
    /// With [`Simulator::share_default_link`]: the one link every pair without a route of
    /// its own crosses.
    shared_default: Option<LinkId>,
    share_default: bool,
    events: BinaryHeap<Event>,
    trace: TraceHash,
    trace_enabled: bool,
    invariant_interval: u64,
    stats: SimStats,
    events_this_instant: u64,
}

impl<N: SimNode> Simulator<N> {
    /// An empty network whose every random draw derives from `seed`; links created on demand
    /// use `default_link`.
    pub fn new(seed: u64, default_link: LinkConfig) -> Self {
        Simulator {
            seed,
            now: Timestamp::ZERO,
            seq: 0,
            nodes: Vec::new(),
            owners: HashMap::new(),
            links: Vec::new(),
            routes: HashMap::new(),
            default_link,
            shared_default: None,
            share_default: false,
            events: BinaryHeap::new(),
            trace: TraceHash::default(),
            trace_enabled: true,
            invariant_interval: 1,
            stats: SimStats::default(),
            events_this_instant: 0,
        }
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The virtual clock.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// Simulator counters.
    pub fn stats(&self) -> SimStats {
        self.stats
    }

    /// The packet-trace hash so far.
    pub fn trace(&self) -> TraceHash {
        self.trace
    }

    /// Turn trace hashing off (it reads every byte; many-node runs may not want it).
    pub fn set_trace_enabled(&mut self, enabled: bool) {
        self.trace_enabled = enabled;
    }

    /// Send every pair of nodes without a route of its own over one shared link built from
    /// the default configuration, instead of a link per ordered pair created on demand.
    ///
    /// For many-node runs: a thousand nodes that each talk to a few hundred others would
    /// otherwise hold hundreds of thousands of links and route entries — simulator memory
    /// that would blur a measurement of the nodes' own. Sharing is exact for a default link
    /// with a fixed delay, no jitter, no bottleneck and independent random loss: arrivals
    /// keep their send order (which the link enforces) because every datagram takes the same
    /// delay, and independent loss draws do not care which stream they come from. With a
    /// bottleneck or jitter the pairs would couple; do not share such a link.
    pub fn share_default_link(&mut self, share: bool) {
        self.share_default = share;
    }

    /// Check a node's invariants after every `n`-th event it handles (default 1: every step).
    pub fn set_invariant_interval(&mut self, n: u64) {
        self.invariant_interval = n.max(1);
    }

    /// The RNG the node with id `id` should use; call before `add_node` with
    /// `next_node_id()` to seed the node from the run.
    pub fn node_rng(&self, id: NodeId) -> ChaCha8Rng {
        derive_rng(self.seed, StreamKind::Node, id.0 as u64)
    }

    /// A scenario-level RNG stream (`index` distinguishes several).
    pub fn scenario_rng(&self, index: u64) -> ChaCha8Rng {
        derive_rng(self.seed, StreamKind::Scenario, index)
    }

    /// The id the next added node will get.
    pub fn next_node_id(&self) -> NodeId {
        NodeId(self.nodes.len())
    }

    /// Add a node owning `addrs` (the first is its source address). Returns `None` if an
    /// address is already owned or none is given. Its first transmits are collected by the
    /// first `step`, after any links the scenario sets up meanwhile.
    pub fn add_node(&mut self, addrs: Vec<SocketAddr>, node: N) -> Option<NodeId> {
        if addrs.is_empty() || addrs.iter().any(|a| self.owners.contains_key(a)) {
            return None;
        }
        let id = NodeId(self.nodes.len());
        for a in &addrs {
            self.owners.insert(*a, id);
        }
        self.nodes.push(NodeSlot {
            node,
            addrs,
            armed: None,
            generation: 0,
            driver: None,
            departed: false,
        });
        // Serviced as the first event at the current instant, so that routes set up right
        // after adding the node already apply to its first datagrams.
        self.push(self.now, EventKind::Service { node: id });
        Some(id)
    }

    /// Build a node from its seeded RNG and add it.
    pub fn add_node_with(
        &mut self,
        addrs: Vec<SocketAddr>,
        make: impl FnOnce(ChaCha8Rng) -> N,
    ) -> Option<NodeId> {
        let rng = self.node_rng(self.next_node_id());
        let node = make(rng);
        self.add_node(addrs, node)
    }

    /// Node `id` leaves the network, as a peer that quits or loses its connection does: its
    /// addresses are released (datagrams sent to them later are unroutable), datagrams
    /// already in flight to it are dropped on arrival, its timer never fires again and it is
    /// never serviced again. Ids are indices, so its slot — and its `N` value — stay; a
    /// scenario that wants the node's memory back empties the value through
    /// [`Simulator::with_node`]. A node joining later is a new node at a new id.
    pub fn remove_node(&mut self, id: NodeId) {
        let Some(slot) = self.nodes.get_mut(id.0) else {
            return;
        };
        if slot.departed {
            return;
        }
        slot.departed = true;
        slot.armed = None;
        slot.generation += 1;
        slot.driver = None;
        for a in &slot.addrs {
            self.owners.remove(a);
        }
    }

    /// Whether node `id` left the network.
    pub fn is_departed(&self, id: NodeId) -> bool {
        self.nodes.get(id.0).is_some_and(|s| s.departed)
    }

    /// Drive node `id` through a model of a real driver (timer grain, socket buffer,
    /// receive batching, CPU cost) from now on; `None` goes back to exact handling.
    pub fn set_driver(&mut self, id: NodeId, model: Option<DriverModel>) {
        let rng = derive_rng(self.seed, StreamKind::Driver, id.0 as u64);
        let slot = &mut self.nodes[id.0];
        slot.driver = model.map(|m| DriverState::new(m, rng));
        // Re-arm the timer under the new model.
        slot.armed = None;
        self.service(id);
    }

    /// The counters of node `id`'s simulated driver, if it has one.
    pub fn driver_stats(&self, id: NodeId) -> Option<DriverStats> {
        self.nodes[id.0].driver.as_ref().map(|d| d.stats)
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// A node, for inspection.
    pub fn node(&self, id: NodeId) -> &N {
        &self.nodes[id.0].node
    }

    /// A node, to drive it from the scenario (e.g. start a transfer). The simulator services
    /// it (drains transmits, re-arms its timer) afterwards.
    pub fn with_node<R>(&mut self, id: NodeId, f: impl FnOnce(&mut N, Timestamp) -> R) -> R {
        let now = self.now;
        let r = f(&mut self.nodes[id.0].node, now);
        self.service(id);
        r
    }

    /// A node's addresses.
    pub fn addrs(&self, id: NodeId) -> &[SocketAddr] {
        &self.nodes[id.0].addrs
    }

    /// Add a link with its own random stream.
    pub fn add_link(&mut self, config: LinkConfig) -> LinkId {
        let id = LinkId(self.links.len());
        self.links.push(Link::new(
            config,
            derive_rng(self.seed, StreamKind::Link, id.0 as u64),
        ));
        id
    }

    /// Send datagrams from `from` to `to` over `link` (links may be shared between pairs).
    pub fn set_route(&mut self, from: NodeId, to: NodeId, link: LinkId) {
        self.routes.insert((from, to), link);
    }

    /// Connect two nodes with a link each way; returns (a→b, b→a).
    pub fn connect(
        &mut self,
        a: NodeId,
        b: NodeId,
        a_to_b: LinkConfig,
        b_to_a: LinkConfig,
    ) -> (LinkId, LinkId) {
        let ab = self.add_link(a_to_b);
        let ba = self.add_link(b_to_a);
        self.set_route(a, b, ab);
        self.set_route(b, a, ba);
        (ab, ba)
    }

    /// A link, for its statistics.
    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id.0]
    }

    /// The link datagrams from `from` to `to` take, if one exists yet.
    pub fn route(&self, from: NodeId, to: NodeId) -> Option<LinkId> {
        self.routes.get(&(from, to)).copied()
    }

    /// The time of the next event, if any.
    pub fn next_event_time(&self) -> Option<Timestamp> {
        self.events.peek().map(|e| e.at)
    }

    fn push(&mut self, at: Timestamp, kind: EventKind) {
        self.seq += 1;
        self.events.push(Event {
            at,
            seq: self.seq,
            kind,
        });
    }

    /// Drain a node's transmits onto links and re-arm its timer.
    fn service(&mut self, id: NodeId) {
        self.service_turn(id, 0);
    }

    /// One driver loop turn after `rx` datagrams were handled: drain the node's transmits
    /// onto links, charge the turn's CPU to its driver, and re-arm its timer (through the
    /// driver's timer model, from when the turn's work ends).
    fn service_turn(&mut self, id: NodeId, rx: u64) {
        if self.nodes[id.0].departed {
            return;
        }
        let now = self.now;
        let mut tx = 0u64;
        while let Some((src, dst, payload)) = self.nodes[id.0].node.poll_transmit_from(now) {
            tx += 1;
            self.route_datagram(id, src, dst, payload);
        }
        let slot = &mut self.nodes[id.0];
        let mut read_at = None;
        if let Some(driver) = slot.driver.as_mut() {
            driver.charge(now, rx, tx);
            if !driver.socket.is_empty() && !driver.read_pending {
                driver.read_pending = true;
                read_at = Some(driver.busy_until);
            }
        }
        let deadline = slot.node.poll_timeout();
        if deadline != slot.armed {
            slot.armed = deadline;
            slot.generation += 1;
            let generation = slot.generation;
            if let Some(t) = deadline {
                let at = match slot.driver.as_mut() {
                    Some(d) => {
                        let asleep = d.busy_until.max(now);
                        d.model.timer.wake_at(asleep, t, &mut d.rng)
                    }
                    None => t.max(now),
                };
                self.push(
                    at,
                    EventKind::Timer {
                        node: id,
                        generation,
                    },
                );
            }
        }
        if let Some(at) = read_at {
            self.push(at, EventKind::Read { node: id });
        }
    }

    /// Sends a datagram from `from_node`, from `src` if the node owns that address, else from
    /// its first.
    fn route_datagram(
        &mut self,
        from_node: NodeId,
        src: Option<SocketAddr>,
        dst: SocketAddr,
        payload: Vec<u8>,
    ) {
        let addrs = &self.nodes[from_node.0].addrs;
        let src = src.filter(|a| addrs.contains(a)).unwrap_or(addrs[0]);
        let Some(&to_node) = self.owners.get(&dst) else {
            self.stats.unroutable += 1;
            if self.trace_enabled {
                self.trace
                    .record(TraceEvent::Dropped, self.now, src, dst, &payload);
            }
            return;
        };
        let link = match self.routes.get(&(from_node, to_node)) {
            Some(&l) => l,
            None if self.share_default => match self.shared_default {
                Some(l) => l,
                None => {
                    let l = self.add_link(self.default_link.clone());
                    self.shared_default = Some(l);
                    l
                }
            },
            None => {
                let l = self.add_link(self.default_link.clone());
                self.routes.insert((from_node, to_node), l);
                l
            }
        };
        let trace_copy = if self.trace_enabled {
            Some(payload.clone())
        } else {
            None
        };
        match self.links[link.0].transmit(self.now, dst, payload) {
            LinkVerdict::Dropped(_) => {
                if let Some(bytes) = trace_copy {
                    self.trace
                        .record(TraceEvent::Dropped, self.now, src, dst, &bytes);
                }
            }
            LinkVerdict::Arrives(a) => {
                let deliver = |payload| EventKind::Deliver {
                    node: to_node,
                    from: src,
                    to: dst,
                    payload,
                };
                if a.duplicate {
                    self.push(a.at, deliver(a.payload.clone()));
                }
                self.push(a.at, deliver(a.payload));
            }
        }
    }

    /// Process the next event. Returns `Ok(false)` when there is nothing left to do.
    pub fn step(&mut self) -> Result<bool, SimError> {
        let Some(event) = self.events.pop() else {
            return Ok(false);
        };
        if event.at > self.now {
            self.now = event.at;
            self.events_this_instant = 0;
        }
        self.events_this_instant += 1;
        if self.events_this_instant > MAX_EVENTS_AT_ONE_INSTANT {
            let node = match &event.kind {
                EventKind::Deliver { node, .. }
                | EventKind::Timer { node, .. }
                | EventKind::Read { node }
                | EventKind::Service { node } => *node,
            };
            return Err(SimError::Livelock {
                at: self.now,
                node: node.0,
                deadline: self.nodes[node.0].node.poll_timeout(),
            });
        }
        let now = self.now;
        // A node whose driver is still busy with earlier work takes its timer or read when
        // that work ends.
        if let EventKind::Timer { node, .. } | EventKind::Read { node } = event.kind {
            if let Some(busy) = self.nodes[node.0].driver.as_ref().map(|d| d.busy_until) {
                if busy > now {
                    self.push(busy, event.kind);
                    return Ok(true);
                }
            }
        }
        let mut rx = 0u64;
        let id = match event.kind {
            EventKind::Deliver {
                node,
                from,
                to,
                payload,
            } => {
                if self.nodes[node.0].departed {
                    self.stats.lost_to_departed += 1;
                    return Ok(true);
                }
                if self.trace_enabled {
                    self.trace
                        .record(TraceEvent::Delivered, now, from, to, &payload);
                }
                self.stats.datagrams_delivered += 1;
                self.stats.bytes_delivered += payload.len() as u64;
                let slot = &mut self.nodes[node.0];
                if let Some(driver) = slot.driver.as_mut() {
                    // Into the socket buffer; the driver reads it when it next can.
                    if driver.enqueue(Queued { from, to, payload }) && !driver.read_pending {
                        driver.read_pending = true;
                        let at = (now + driver.model.rx_wake_latency).max(driver.busy_until);
                        self.push(at, EventKind::Read { node });
                    }
                    return Ok(true);
                }
                slot.node.handle_datagram(now, from, to, &payload);
                node
            }
            EventKind::Timer { node, generation } => {
                let slot = &mut self.nodes[node.0];
                if slot.generation != generation {
                    return Ok(true);
                }
                if let (Some(d), Some(asked)) = (slot.driver.as_mut(), slot.armed) {
                    d.stats.timer_wakeups += 1;
                    d.stats.timer_lateness_us +=
                        now.saturating_duration_since(asked).as_micros() as u64;
                }
                slot.armed = None;
                slot.node.handle_timeout(now);
                node
            }
            EventKind::Read { node } => {
                let slot = &mut self.nodes[node.0];
                let Some(driver) = slot.driver.as_mut() else {
                    return Ok(true);
                };
                driver.read_pending = false;
                let batch = driver.model.rx_batch.max(1);
                for _ in 0..batch {
                    let Some(d) = driver.dequeue() else { break };
                    rx += 1;
                    slot.node.handle_datagram(now, d.from, d.to, &d.payload);
                }
                // The loop checks its deadline after a read (core/src/driver/tokio/session.rs):
                // under a steady flood the timer would otherwise never win the race.
                if slot.node.poll_timeout().is_some_and(|t| t <= now) {
                    slot.node.handle_timeout(now);
                }
                node
            }
            EventKind::Service { node } => {
                if self.nodes[node.0].departed {
                    return Ok(true);
                }
                node
            }
        };
        self.stats.events += 1;
        self.service_turn(id, rx);
        if self.stats.events % self.invariant_interval == 0 {
            if let Err(reason) = self.nodes[id.0].node.check_invariants() {
                return Err(SimError::Invariant {
                    node: id.0,
                    at: now,
                    reason,
                });
            }
        }
        Ok(true)
    }

    /// Run until no events remain or the next one is after `deadline` (the clock then stands
    /// at `deadline`).
    pub fn run_until(&mut self, deadline: Timestamp) -> Result<(), SimError> {
        while self.next_event_time().is_some_and(|t| t <= deadline) {
            self.step()?;
        }
        self.now = self.now.max(deadline);
        Ok(())
    }

    /// Run while `keep_going` holds (checked before every event), up to `deadline`.
    /// Returns true if `keep_going` turned false, false on deadline or when events ran out.
    pub fn run_while(
        &mut self,
        deadline: Timestamp,
        mut keep_going: impl FnMut(&Self) -> bool,
    ) -> Result<bool, SimError> {
        loop {
            if !keep_going(self) {
                return Ok(true);
            }
            match self.next_event_time() {
                Some(t) if t <= deadline => {
                    self.step()?;
                }
                _ => return Ok(false),
            }
        }
    }

    /// Panic with the seed and the command that replays this run. Tests call this on any
    /// failure so that a red CI run can be reproduced exactly.
    pub fn fail(&self, error: &SimError) -> ! {
        panic!(
            "simulation failed (seed {seed}, t={now:?}): {error}\nreplay: {cmd}",
            seed = self.seed,
            now = self.now,
            cmd = replay_command(self.seed)
        )
    }
}
