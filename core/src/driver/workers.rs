//! The multi-worker UDP driver of a DHT / bootstrap node (docs/design.md lesson 4).
//!
//! ```text
//!   worker i:  blocking recv_from ─► own Gate (limits, decrypt) ─► lock node: handle,
//!              drain outputs ─► unlock ─► own Gate (encrypt) ─► send_to
//!   timer:     sleep until the node's deadline ─► lock: handle_timeout, drain ─► send
//!   onion:     worker: recv_from ─► lock onion (and, for an announce, the node first):
//!              handle_datagram ─► unlock ─► send_to
//!   forwarding and DHT announcements (0x90–0x93, 0x95, 0x97): worker: recv_from ─► lock
//!              the node, then the announce server: handle_datagram ─► unlock ─► send_to
//! ```
//!
//! Choices and the measurements behind them (`auto_tests/src/bin/dht-load.rs`, full tables in
//! `core/BENCH.md`; 2-CPU machine shared with the generator, medians of 3–5 runs):
//! * **A blocking read per worker** against the tokio event loop
//!   ([`super::tokio::dht`]): 8.6–9.1 vs 9.8–9.9 µs of CPU per get-nodes with warm key
//!   caches (one system call per datagram instead of two); equal when X25519 dominates.
//!   Kept.
//! * **Crypto outside the lock**: each worker owns a [`Gate`] (key cache, limits, RNG), so
//!   only list work is serialised; 2 workers cost 8.4–9.0 µs per request against 8.6–9.1 for
//!   one, so the shared lock adds nothing measurable. Kept.
//! * **One socket per worker with `SO_REUSEPORT`** ([`UdpMode::ReusePort`]) against one
//!   socket shared by all workers ([`UdpMode::Shared`]): no consistent difference at 2 workers
//!   (42 143 vs 38 573, 74 555 vs 82 907, 74 888 vs 77 979 answered/s). Not decided by our
//!   data; it only matters with more than one worker, and the default is one worker.
//! * **Workers woken by `shutdown(SHUT_RD)`** ([`super::socket::wake_reader`]), not by a
//!   receive timeout: idle workers had 0 context switches in 20 s; only the timer thread
//!   wakes, once per DHT tick (21 in 20 s). Kept.
//! * **Limits per worker**: each worker's gate keeps its own per-source table, so a source
//!   whose datagrams the kernel spreads over N sockets (one hash per source *port*) gets up
//!   to N times the per-source rate; the amplification bound (4× the bytes received) holds
//!   per worker and therefore overall.
//! * **Counters per worker, summed when read**: a reader may see one packet's worth of
//!   skew between fields; nothing on the packet path writes memory another worker writes.
//! * **Order**: keys are loaded before the first socket exists (the caller's job); teardown
//!   stops the timer thread first (it is the one that sends unprompted), then the workers.
//! * **The TCP relay** ([`super::tcp_relay`], docs/protocol.md §7), when configured, runs on a
//!   thread of its own. Its clients' onion requests take the onion server's lock on that
//!   thread and leave from the first worker's socket; responses for its clients (0x8e whose
//!   sendback names a connection) reach it from the workers through a bounded queue.
//! * **The onion server** (docs/protocol.md §6.2, §6.3, as c-toxcore's DHT_bootstrap serves it)
//!   sits beside the DHT node under its own lock: relayed packets never take the node's
//!   lock, and an announce takes the node's lock first, then the onion's, for the closest
//!   nodes of its answer (the only place both are held, always in that order). Its layer
//!   crypto runs under its lock; not measured yet, since onion traffic at a bootstrap node is
//!   a fraction of its get-nodes. Onion datagrams bypass the gate (the server has its own
//!   per-source limit and counters).

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;

use super::clock::Clock;
use super::socket::{bind_udp, recv_from, send_to, wake_reader};
use super::tcp_relay::{RelayHandle, RelayRequest, TcpRelay, TcpRelayConfig, TcpRelaySnapshot};
use crate::dht::announce::{AnnounceConfig, AnnounceOutput, AnnounceServer, AnnounceStats};
use crate::dht::gate::{Gate, GateStats};
use crate::dht::node::{DhtConfig, DhtNode, DhtStats};
use crate::dht::source_guard::GuardConfig;
use crate::dht::wire::packed_node::PackedNode;
use crate::onion::server::{NoNodes, OnionConfig, OnionOutput, OnionServer, OnionStats};
use crate::onion::wire::kind as onion_kind;

/// How workers share the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpMode {
    /// One socket per worker, bound with `SO_REUSEPORT`; the kernel spreads datagrams.
    ReusePort,
    /// One socket, all workers blocked in `recv_from` on it.
    Shared,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// Address to bind (port 0 for any).
    pub bind: SocketAddr,
    /// Worker threads (at least 1).
    pub workers: usize,
    /// Socket layout.
    pub mode: UdpMode,
    /// The node's settings.
    pub dht: DhtConfig,
    /// The onion server's settings; `None` leaves onion datagrams unanswered (counted by
    /// the gate as unsupported).
    pub onion: Option<OnionConfig>,
    /// A TCP relay to run beside the UDP workers; `None` for none.
    pub tcp: Option<TcpRelayConfig>,
}

impl RunnerConfig {
    /// A bootstrap node on `127.0.0.1:port` (0: any port) as tests and the demo run one: one
    /// worker, no LAN discovery, the onion server on, no TCP relay. Change a field with
    /// `RunnerConfig { tcp: Some(..), ..RunnerConfig::loopback(port) }`.
    pub fn loopback(port: u16) -> RunnerConfig {
        RunnerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], port)),
            workers: 1,
            mode: UdpMode::ReusePort,
            dht: DhtConfig {
                lan_discovery: false,
                ..DhtConfig::default()
            },
            onion: Some(OnionConfig::default()),
            tcp: None,
        }
    }
}

/// Counters of one worker, written only by it.
#[derive(Debug, Default)]
struct WorkerCounters {
    datagrams_in: AtomicU64,
    bytes_in: AtomicU64,
    rate_limited: AtomicU64,
    malformed: AtomicU64,
    unsupported: AtomicU64,
    from_port_zero: AtomicU64,
    low_order_keys: AtomicU64,
    key_budget: AtomicU64,
    amplification_refused: AtomicU64,
    datagrams_out: AtomicU64,
    bytes_out: AtomicU64,
    key_agreements: AtomicU64,
}

impl WorkerCounters {
    fn publish(&self, g: &Gate) {
        let s = g.stats;
        self.datagrams_in.store(s.datagrams_in, Ordering::Relaxed);
        self.bytes_in.store(s.bytes_in, Ordering::Relaxed);
        self.rate_limited.store(s.rate_limited, Ordering::Relaxed);
        self.malformed.store(s.malformed, Ordering::Relaxed);
        self.unsupported.store(s.unsupported, Ordering::Relaxed);
        self.from_port_zero
            .store(s.from_port_zero, Ordering::Relaxed);
        self.low_order_keys
            .store(s.low_order_keys, Ordering::Relaxed);
        self.key_budget.store(s.key_budget, Ordering::Relaxed);
        self.amplification_refused
            .store(s.amplification_refused, Ordering::Relaxed);
        self.datagrams_out.store(s.datagrams_out, Ordering::Relaxed);
        self.bytes_out.store(s.bytes_out, Ordering::Relaxed);
        self.key_agreements
            .store(g.key_agreements(), Ordering::Relaxed);
    }

    fn read(&self) -> (GateStats, u64) {
        (
            GateStats {
                datagrams_in: self.datagrams_in.load(Ordering::Relaxed),
                bytes_in: self.bytes_in.load(Ordering::Relaxed),
                rate_limited: self.rate_limited.load(Ordering::Relaxed),
                malformed: self.malformed.load(Ordering::Relaxed),
                unsupported: self.unsupported.load(Ordering::Relaxed),
                from_port_zero: self.from_port_zero.load(Ordering::Relaxed),
                low_order_keys: self.low_order_keys.load(Ordering::Relaxed),
                key_budget: self.key_budget.load(Ordering::Relaxed),
                amplification_refused: self.amplification_refused.load(Ordering::Relaxed),
                datagrams_out: self.datagrams_out.load(Ordering::Relaxed),
                bytes_out: self.bytes_out.load(Ordering::Relaxed),
            },
            self.key_agreements.load(Ordering::Relaxed),
        )
    }
}

/// Statistics of a running node.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunnerStats {
    /// Gate counters summed over the workers and the timer thread.
    pub gate: GateStats,
    /// Key agreements computed, summed.
    pub key_agreements: u64,
    /// The state machine's counters.
    pub dht: DhtStats,
    /// Good nodes in the close list.
    pub close_nodes: usize,
    /// The onion server's counters (zero without one).
    pub onion: OnionStats,
    /// Keys announced at the onion server now.
    pub onion_announced: usize,
    /// Forwarding and the DHT announcement store (zero without an onion server).
    pub announce: AnnounceStats,
    /// The TCP relay's state, if one runs.
    pub relay: Option<TcpRelaySnapshot>,
}

struct Shared {
    node: Mutex<DhtNode>,
    onion: Option<Mutex<OnionServer>>,
    /// Forwarding and the DHT announcement store, run wherever the onion server runs.
    announce: Option<Mutex<AnnounceServer>>,
    /// Where onion responses for TCP relay clients go, once the relay runs.
    relay: OnceLock<RelayHandle>,
    keys: KeyPair,
    clock: Clock,
    stop: AtomicBool,
    kick: Mutex<bool>,
    kick_cv: Condvar,
    counters: Vec<WorkerCounters>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, DhtNode> {
        // A worker that panicked mid-update leaves lists that are still well-formed
        // (every mutation is a single assignment), so the poison is ignored.
        self.node.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Handles a datagram for one of this node's servers (forwarding and DHT announcements,
    /// the onion) if it runs that server and `bytes` is one of its kinds: `Some` with the
    /// datagram to send back, if any; `None` for the DHT.
    fn server_datagram(
        &self,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        rng: &mut StdRng,
    ) -> Option<Option<crate::dht::Transmit>> {
        let k = *bytes.first()?;
        match (&self.announce, &self.onion) {
            (Some(announce), _) if AnnounceServer::handles(k) => {
                Some(self.announce_datagram(announce, now, from, bytes, rng))
            }
            (_, Some(onion)) if OnionServer::handles(k) => {
                Some(self.onion_datagram(onion, k, now, from, bytes, rng))
            }
            _ => None,
        }
    }

    /// A forwarding or DHT announcement datagram for `announce`. A forward reply for a
    /// client of our TCP relay goes to the relay thread as packet 11.
    fn announce_datagram(
        &self,
        announce: &Mutex<AnnounceServer>,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        rng: &mut StdRng,
    ) -> Option<crate::dht::Transmit> {
        let node = self.lock();
        // Every mutation of the server is a single assignment or a counter: a poisoned lock
        // still guards a well-formed server.
        let mut server = announce.lock().unwrap_or_else(|p| p.into_inner());
        match server.handle_datagram(now, from, bytes, &*node, rng) {
            Ok(AnnounceOutput::Udp(t)) => Some(t),
            Ok(AnnounceOutput::Tcp { con, id, data }) => {
                if let Some(relay) = self.relay.get() {
                    relay.deliver_forward_reply(con, id, data);
                }
                None
            }
            Err(_) => None,
        }
    }

    /// An onion datagram of kind `k` for `onion`.
    fn onion_datagram(
        &self,
        onion: &Mutex<OnionServer>,
        k: u8,
        now: Timestamp,
        from: SocketAddr,
        bytes: &[u8],
        rng: &mut StdRng,
    ) -> Option<crate::dht::Transmit> {
        // Every mutation of the server is a single assignment or a counter: a poisoned lock
        // still guards a well-formed server.
        let relay = self.relay.get();
        let out = if k == onion_kind::ANNOUNCE_REQUEST || k == onion_kind::ANNOUNCE_REQUEST_NEW {
            let node = self.lock();
            let mut server = onion.lock().unwrap_or_else(|p| p.into_inner());
            server.handle_datagram(now, from, bytes, &*node, rng)
        } else {
            let mut server = onion.lock().unwrap_or_else(|p| p.into_inner());
            match relay {
                Some(relay) => {
                    match server.handle_datagram_with_tcp(now, from, bytes, &NoNodes, rng) {
                        Ok(OnionOutput::Udp(t)) => Ok(t),
                        Ok(OnionOutput::TcpClient { dest, response }) => {
                            drop(server);
                            relay.deliver(dest, response);
                            return None;
                        }
                        Err(e) => Err(e),
                    }
                }
                None => server.handle_datagram(now, from, bytes, &NoNodes, rng),
            }
        };
        out.ok()
    }

    /// Sends a TCP relay client's onion request on as hop A, from `socket`.
    /// A client's packet 10: sent on as a 0x91 by the DHT's forwarding.
    fn tcp_forward(
        &self,
        req: &crate::relay::server::ForwardRequest,
        socket: &UdpSocket,
        v6: bool,
    ) {
        let Some(announce) = self.announce.as_ref() else {
            return;
        };
        let now = self.clock.now();
        let out = announce
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .handle_tcp_forward(now, req.client, req.con, req.serial, req.dest, &req.data);
        if let Ok(t) = out {
            let _ = send_to(socket, &t.payload, t.dst, v6);
        }
    }

    fn onion_tcp_request(
        &self,
        req: &crate::relay::server::OnionRequest,
        socket: &UdpSocket,
        v6: bool,
        rng: &mut StdRng,
    ) {
        let Some(onion) = self.onion.as_ref() else {
            return;
        };
        let now = self.clock.now();
        let out = onion
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .handle_tcp_request(now, req.client, &req.source, &req.nonce, &req.plain, rng);
        if let Ok(t) = out {
            let _ = send_to(socket, &t.payload, t.dst, v6);
        }
    }
}

/// A running node: worker threads plus a timer thread.
pub struct NodeRunner {
    shared: Arc<Shared>,
    sockets: Vec<UdpSocket>,
    workers: Vec<JoinHandle<()>>,
    timer: Option<JoinHandle<()>>,
    relay: Option<TcpRelay>,
    local_addr: SocketAddr,
}

impl NodeRunner {
    /// Binds the sockets and starts the threads.
    pub fn start(keys: KeyPair, config: RunnerConfig) -> std::io::Result<NodeRunner> {
        let workers = config.workers.max(1);
        let first = bind_udp(config.bind, config.mode == UdpMode::ReusePort)?;
        let local_addr = first.local_addr()?;
        let mut sockets = vec![first];
        for _ in 1..workers {
            sockets.push(match config.mode {
                UdpMode::ReusePort => bind_udp(local_addr, true)?,
                UdpMode::Shared => sockets[0].try_clone()?,
            });
        }
        let clock = Clock::default();
        let mut rng = StdRng::from_entropy();
        let node = DhtNode::new(keys.clone(), config.dht.clone(), clock.now(), &mut rng);
        let onion = config
            .onion
            .map(|c| Mutex::new(OnionServer::new(&keys, c, clock.now(), &mut rng)));
        let announce = config.onion.map(|c| {
            Mutex::new(AnnounceServer::new(
                &keys,
                AnnounceConfig {
                    guard: GuardConfig {
                        slots: c.guard.slots,
                        key_agreements: c.guard.key_agreements,
                        ..config.dht.guard
                    },
                },
                clock.now(),
                &mut rng,
            ))
        });
        let shared = Arc::new(Shared {
            node: Mutex::new(node),
            onion,
            announce,
            relay: OnceLock::new(),
            keys,
            clock,
            stop: AtomicBool::new(false),
            kick: Mutex::new(false),
            kick_cv: Condvar::new(),
            counters: (0..=workers).map(|_| WorkerCounters::default()).collect(),
        });
        let relay = match config.tcp {
            Some(tcp) => {
                let sink_shared = shared.clone();
                let socket = sockets[0].try_clone()?;
                let v6 = local_addr.is_ipv6();
                let mut rng = StdRng::from_entropy();
                let sink = Box::new(move |_: Timestamp, req: RelayRequest| match req {
                    RelayRequest::Onion(req) => {
                        sink_shared.onion_tcp_request(&req, &socket, v6, &mut rng)
                    }
                    RelayRequest::Forward(req) => sink_shared.tcp_forward(&req, &socket, v6),
                });
                let (relay, handle) =
                    TcpRelay::start(shared.keys.clone(), tcp, Some(sink), shared.clock)?;
                let _ = shared.relay.set(handle);
                Some(relay)
            }
            None => None,
        };
        let timer_socket = sockets[0].try_clone()?;
        let guard = config.dht.guard;
        let timer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("dht-timer".into())
                .spawn(move || timer_loop(&shared, &timer_socket, guard))?
        };
        let mut handles = Vec::new();
        for (i, s) in sockets.iter().enumerate() {
            let socket = s.try_clone()?;
            let shared = shared.clone();
            handles.push(
                std::thread::Builder::new()
                    .name(format!("dht-worker-{i}"))
                    .spawn(move || worker_loop(&shared, &socket, i, guard))?,
            );
        }
        Ok(NodeRunner {
            shared,
            sockets,
            workers: handles,
            timer: Some(timer),
            relay,
            local_addr,
        })
    }

    /// The TCP relay's listening addresses (empty without a relay).
    pub fn tcp_addrs(&self) -> Vec<SocketAddr> {
        self.relay
            .as_ref()
            .map_or_else(Vec::new, |r| r.local_addrs().to_vec())
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The node's DHT public key.
    pub fn public_key(&self) -> PublicKey {
        self.shared.keys.public
    }

    /// Sends a get-nodes for our key to a known node.
    pub fn bootstrap(&self, addr: SocketAddr, pk: PublicKey) {
        let now = self.shared.clock.now();
        let mut rng = StdRng::from_entropy();
        self.shared.lock().bootstrap(now, addr, pk, &mut rng);
        self.kick();
    }

    /// Runs `f` on the node under its lock.
    pub fn with_node<R>(&self, f: impl FnOnce(&mut DhtNode, Timestamp) -> R) -> R {
        let now = self.shared.clock.now();
        let r = f(&mut self.shared.lock(), now);
        self.kick();
        r
    }

    /// Good close-list nodes.
    pub fn close_nodes(&self) -> Vec<PackedNode> {
        let now = self.shared.clock.now();
        self.shared.lock().close_nodes(now)
    }

    /// Counters, summed over the threads.
    pub fn stats(&self) -> RunnerStats {
        let mut out = RunnerStats::default();
        for c in &self.shared.counters {
            let (g, k) = c.read();
            out.gate += g;
            out.key_agreements += k;
        }
        let now = self.shared.clock.now();
        {
            let node = self.shared.lock();
            out.dht = node.stats();
            out.close_nodes = node.close_list().good_count(now);
        }
        if let Some(onion) = &self.shared.onion {
            let onion = onion.lock().unwrap_or_else(|p| p.into_inner());
            out.onion = onion.stats();
            out.onion_announced = onion.store().len(now);
        }
        if let Some(announce) = &self.shared.announce {
            out.announce = announce.lock().unwrap_or_else(|p| p.into_inner()).stats();
        }
        out.relay = self.relay.as_ref().map(TcpRelay::snapshot);
        out
    }

    /// Wakes the timer thread to flush outputs queued by an API call.
    fn kick(&self) {
        *self.shared.kick.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.shared.kick_cv.notify_one();
    }

    /// Stops the timer, then the workers, and waits for them.
    pub fn shutdown(mut self) {
        self.stop_threads();
    }

    fn stop_threads(&mut self) {
        // The relay first: it is a source of onion requests for the workers' socket.
        if let Some(relay) = self.relay.take() {
            relay.shutdown();
        }
        self.shared.stop.store(true, Ordering::SeqCst);
        self.kick();
        if let Some(t) = self.timer.take() {
            let _ = t.join();
        }
        for s in &self.sockets {
            wake_reader(s);
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

impl Drop for NodeRunner {
    fn drop(&mut self) {
        self.stop_threads();
    }
}

fn worker_loop(shared: &Shared, socket: &UdpSocket, index: usize, guard: crate::dht::GuardConfig) {
    let mut rng = StdRng::from_entropy();
    let mut gate = Gate::new(&shared.keys, guard, &mut rng);
    // MAX_UDP_PACKET_SIZE (docs/protocol.md §2.1).
    let mut buf = [0u8; 2048];
    let mut outs = Vec::new();
    let v6 = socket.local_addr().is_ok_and(|a| a.is_ipv6());
    loop {
        let received = recv_from(socket, &mut buf);
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let (len, from) = match received {
            Ok(Some(r)) => r,
            // Woken without a datagram, an ICMP error (ECONNREFUSED from an earlier send)
            // or EINTR: keep reading.
            Ok(None) | Err(_) => continue,
        };
        let now = shared.clock.now();
        if let Some(out) = shared.server_datagram(now, from, &buf[..len], &mut rng) {
            if let Some(t) = out {
                let _ = send_to(socket, &t.payload, t.dst, v6);
            }
            continue;
        }
        if let Ok(incoming) = gate.open(now, from, &buf[..len]) {
            let due_now = {
                let mut node = shared.lock();
                node.handle_incoming(
                    now,
                    crate::dht::wire::packed_node::canonical(from),
                    incoming,
                    &mut rng,
                );
                outs.extend(std::iter::from_fn(|| node.poll_outgoing()));
                node.poll_timeout() <= now
            };
            // The datagram made work due at once (a new node to ping, nodes to ask): wake
            // the timer thread rather than leave it for its next deadline.
            if due_now {
                *shared.kick.lock().unwrap_or_else(|p| p.into_inner()) = true;
                shared.kick_cv.notify_one();
            }
        }
        for out in outs.drain(..) {
            if let Some(t) = gate.seal(now, out, &mut rng) {
                let _ = send_to(socket, &t.payload, t.dst, v6);
            }
        }
        shared.counters[index].publish(&gate);
    }
}

fn timer_loop(shared: &Shared, socket: &UdpSocket, guard: crate::dht::GuardConfig) {
    let mut rng = StdRng::from_entropy();
    let mut gate = Gate::new(&shared.keys, guard, &mut rng);
    let index = shared.counters.len() - 1;
    let mut outs = Vec::new();
    let v6 = socket.local_addr().is_ok_and(|a| a.is_ipv6());
    while !shared.stop.load(Ordering::Relaxed) {
        let now = shared.clock.now();
        let deadline = {
            let mut node = shared.lock();
            if node.poll_timeout() <= now {
                node.handle_timeout(now, &mut rng);
            }
            outs.extend(std::iter::from_fn(|| node.poll_outgoing()));
            node.poll_timeout()
        };
        let deadline = match &shared.onion {
            Some(onion) => {
                let mut onion = onion.lock().unwrap_or_else(|p| p.into_inner());
                if onion.poll_timeout() <= now {
                    onion.handle_timeout(now, &mut rng);
                }
                deadline.min(onion.poll_timeout())
            }
            None => deadline,
        };
        for out in outs.drain(..) {
            if let Some(t) = gate.seal(now, out, &mut rng) {
                let _ = send_to(socket, &t.payload, t.dst, v6);
            }
        }
        shared.counters[index].publish(&gate);
        let wait = deadline
            .saturating_duration_since(shared.clock.now())
            .max(Duration::from_millis(1));
        let kicked = shared.kick.lock().unwrap_or_else(|p| p.into_inner());
        let (mut kicked, _) = shared
            .kick_cv
            .wait_timeout_while(kicked, wait, |k| !*k)
            .unwrap_or_else(|p| p.into_inner());
        *kicked = false;
    }
}
