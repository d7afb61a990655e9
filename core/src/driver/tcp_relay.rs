//! The TCP relay's driver: one thread, non-blocking sockets on `mio`, around the sans-IO
//! [`RelayServer`] (docs/protocol.md §7).
//!
//! ```text
//!  poll ─► listener readable ─► accept ─► handle_accept (refused: the socket is dropped)
//!       ─► stream readable   ─► read ─► handle_bytes          (EOF/error: handle_closed)
//!       ─► stream writable   ─► write what poll_transmit gives ─► handle_written
//!       ─► waker             ─► onion responses and forward replies from the UDP workers
//!                               ─► handle_onion_response / handle_forward_reply
//!  then: handle_timeout if due; poll_close ─► drop sockets; poll_onion_request and
//!        poll_forward_request ─► the callback (hop A, or the DHT's forwarding, on the UDP
//!        side); poll_ready ─► write; sleep until poll_timeout
//! ```
//!
//! Choices:
//! * **One thread owns the server**: no lock on the relay path; the only cross-thread traffic
//!   is onion responses and forward replies (a bounded channel and a `mio::Waker`) and the
//!   onion and forward requests the callback hands to the UDP side.
//! * **Edge-triggered readiness for both directions**, registered once: a writable event
//!   arrives whenever a full socket drains, so a connection with queued output needs no
//!   re-registration. The server's own buffer is the bound (`RelayConfig::output_limit`);
//!   the kernel's autotuned send buffer comes on top.
//! * **Reads are capped per event** ([`READ_BUDGET`]): a connection with more waiting goes
//!   to the back of a queue served on the next turn, so one fast sender on loopback cannot
//!   hold the thread while others wait.
//! * `TCP_NODELAY`: frames are small and latency-bound (pings, handshakes, chat packets);
//!   writes already batch whatever is queued.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rustox_net_crypto::crypto::KeyPair;
use rustox_net_crypto::Timestamp;
use socket2::{Domain, Protocol, Socket, Type};

use super::clock::Clock;
use crate::onion::wire::ip_port::IpPort;
use crate::relay::server::{
    ConnId, ForwardRequest, OnionRequest, RelayConfig, RelayServer, RelayStats,
};

/// Bytes read from one connection per readiness turn before others get theirs: 16 reads of
/// the 64 KiB buffer.
pub const READ_BUDGET: usize = 16 * READ_BUFFER;
/// One read's buffer.
const READ_BUFFER: usize = 64 * 1024;
/// `TCP_MAX_BACKLOG` (`TCP_server.h`): c-toxcore listens with a backlog of 256.
const LISTEN_BACKLOG: i32 = 256;
/// Onion responses held between the UDP workers and the relay thread; more are dropped.
const ONION_RESPONSE_QUEUE: usize = 4096;

const WAKER: Token = Token(usize::MAX);
/// Tokens below this are listeners; connections count up from it.
const FIRST_CONN: usize = 1 << 16;

/// What to run.
#[derive(Debug, Clone)]
pub struct TcpRelayConfig {
    /// Addresses to listen on (port 0 for any; an IPv6 address takes IPv4 too).
    pub listen: Vec<SocketAddr>,
    /// The server's limits and timers.
    pub relay: RelayConfig,
}

/// What the relay hands the node it runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayRequest {
    /// An onion request, for the onion relay to send on over UDP as hop A.
    Onion(OnionRequest),
    /// A forward request (packet 10), for the DHT's forwarding to send as a 0x91.
    Forward(ForwardRequest),
}

/// Where the relay sends its clients' onion and forward requests.
pub type OnionSink = Box<dyn FnMut(Timestamp, RelayRequest) + Send>;

/// What the UDP side hands back to the relay thread.
enum Delivery {
    /// An onion response for the connection a sendback address names.
    Onion(IpPort, Vec<u8>),
    /// A forward reply for connection index `.0` with serial `.1`.
    Forward(u32, u64, Vec<u8>),
}

/// A handle the UDP side uses to deliver onion responses for TCP clients.
#[derive(Clone)]
pub struct RelayHandle {
    tx: SyncSender<Delivery>,
    waker: Arc<Waker>,
    full: Arc<AtomicU64>,
}

impl RelayHandle {
    /// Queues an onion response for the connection `dest` names; false if the queue is
    /// full (the response is dropped; the client's onion layer retries).
    pub fn deliver(&self, dest: IpPort, response: Vec<u8>) -> bool {
        self.send(Delivery::Onion(dest, response))
    }

    /// Queues a forward reply for connection index `con` with serial `serial` (packet 11);
    /// false if the queue is full.
    pub fn deliver_forward_reply(&self, con: u32, serial: u64, data: Vec<u8>) -> bool {
        self.send(Delivery::Forward(con, serial, data))
    }

    fn send(&self, d: Delivery) -> bool {
        match self.tx.try_send(d) {
            Ok(()) => {
                let _ = self.waker.wake();
                true
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.full.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }
}

/// A snapshot of the relay's state.
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpRelaySnapshot {
    /// The server's counters.
    pub stats: RelayStats,
    /// Connections held.
    pub connections: usize,
    /// Of those, past their first frame.
    pub confirmed: usize,
    /// Onion responses dropped because the queue to the relay thread was full.
    pub responses_queue_full: u64,
}

/// A running TCP relay.
pub struct TcpRelay {
    thread: Option<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    snapshot: Arc<Mutex<TcpRelaySnapshot>>,
    full: Arc<AtomicU64>,
    local_addrs: Vec<SocketAddr>,
}

fn listen(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() {
        socket.set_only_v6(false)?;
    }
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

impl TcpRelay {
    /// Binds the listeners, then starts the thread. `onion` receives onion requests (none:
    /// they are dropped).
    /// `clock` is the one the node's other threads use, so that the times the relay passes
    /// on agree with theirs.
    pub fn start(
        keys: KeyPair,
        config: TcpRelayConfig,
        onion: Option<OnionSink>,
        clock: Clock,
    ) -> io::Result<(TcpRelay, RelayHandle)> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let mut listeners = Vec::new();
        let mut local_addrs = Vec::new();
        for (i, addr) in config.listen.iter().enumerate() {
            let mut l = TcpListener::from_std(listen(*addr)?);
            local_addrs.push(l.local_addr()?);
            poll.registry()
                .register(&mut l, Token(i), Interest::READABLE)?;
            listeners.push(l);
        }
        let (tx, rx) = sync_channel(ONION_RESPONSE_QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let snapshot = Arc::new(Mutex::new(TcpRelaySnapshot::default()));
        let full = Arc::new(AtomicU64::new(0));
        let server = RelayServer::new(keys, config.relay);
        let mut driver = Driver {
            poll,
            listeners,
            streams: HashMap::new(),
            next_token: FIRST_CONN,
            server,
            clock,
            rng: StdRng::from_entropy(),
            onion,
            responses: rx,
            again: VecDeque::new(),
            buf: vec![0; READ_BUFFER],
        };
        let thread = {
            let stop = stop.clone();
            let snapshot = snapshot.clone();
            std::thread::Builder::new()
                .name("tcp-relay".into())
                .spawn(move || driver.run(&stop, &snapshot))?
        };
        Ok((
            TcpRelay {
                thread: Some(thread),
                stop,
                waker: waker.clone(),
                snapshot,
                full: full.clone(),
                local_addrs,
            },
            RelayHandle { tx, waker, full },
        ))
    }

    /// The addresses listened on.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.local_addrs
    }

    /// Counters and connection counts, as of the thread's last turn.
    pub fn snapshot(&self) -> TcpRelaySnapshot {
        let mut s = *self.snapshot.lock().unwrap_or_else(|p| p.into_inner());
        s.responses_queue_full = self.full.load(Ordering::Relaxed);
        s
    }

    /// Stops the thread and closes every socket.
    pub fn shutdown(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for TcpRelay {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

struct Driver {
    poll: Poll,
    listeners: Vec<TcpListener>,
    streams: HashMap<Token, TcpStream>,
    next_token: usize,
    server: RelayServer,
    clock: Clock,
    rng: StdRng,
    onion: Option<OnionSink>,
    responses: Receiver<Delivery>,
    /// Connections that hit [`READ_BUDGET`] with data left.
    again: VecDeque<Token>,
    buf: Vec<u8>,
}

fn conn_of(t: Token) -> ConnId {
    ConnId(t.0 as u64)
}

fn token_of(c: ConnId) -> Token {
    Token(c.0 as usize)
}

impl Driver {
    fn run(&mut self, stop: &AtomicBool, snapshot: &Mutex<TcpRelaySnapshot>) {
        let mut events = Events::with_capacity(1024);
        while !stop.load(Ordering::Relaxed) {
            let now = self.clock.now();
            let timeout = if self.again.is_empty() {
                self.server
                    .poll_timeout()
                    .map(|t| t.saturating_duration_since(now) + Duration::from_millis(1))
            } else {
                Some(Duration::ZERO)
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != io::ErrorKind::Interrupted {
                    tracing::warn!("tcp relay poll failed: {e}");
                    std::thread::sleep(Duration::from_millis(10));
                }
                continue;
            }
            let now = self.clock.now();
            let again: Vec<Token> = self.again.drain(..).collect();
            for t in again {
                self.read(now, t);
            }
            for ev in events.iter() {
                match ev.token() {
                    WAKER => {
                        while let Ok(d) = self.responses.try_recv() {
                            match d {
                                Delivery::Onion(dest, response) => {
                                    self.server.handle_onion_response(&dest, &response);
                                }
                                Delivery::Forward(con, serial, data) => {
                                    self.server.handle_forward_reply(con, serial, &data);
                                }
                            }
                        }
                    }
                    t if t.0 < FIRST_CONN => self.accept(now, t.0),
                    t => {
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            self.read(now, t);
                        }
                        if ev.is_writable() {
                            self.write(conn_of(t));
                        }
                    }
                }
            }
            if self.server.poll_timeout().is_some_and(|t| t <= now) {
                self.server.handle_timeout(now, &mut self.rng);
            }
            self.drain_outputs(now);
            let mut s = snapshot.lock().unwrap_or_else(|p| p.into_inner());
            if s.stats != self.server.stats() || s.connections != self.server.connections() {
                s.stats = self.server.stats();
                s.connections = self.server.connections();
                s.confirmed = self.server.confirmed_connections();
            }
        }
    }

    fn accept(&mut self, now: Timestamp, listener: usize) {
        loop {
            let (mut stream, addr) = match self.listeners[listener].accept() {
                Ok(s) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                // Out of descriptors, or a connection reset before accept: try again on the
                // next readiness event.
                Err(_) => return,
            };
            let token = Token(self.next_token);
            self.next_token += 1;
            if self
                .server
                .handle_accept(now, conn_of(token), canonical(addr))
                .is_err()
            {
                continue;
            }
            let _ = stream.set_nodelay(true);
            if self
                .poll
                .registry()
                .register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)
                .is_err()
            {
                self.server.handle_closed(conn_of(token));
                continue;
            }
            self.streams.insert(token, stream);
        }
    }

    /// Reads up to [`READ_BUDGET`] from one connection into the server.
    fn read(&mut self, now: Timestamp, token: Token) {
        let mut budget = READ_BUDGET;
        loop {
            let Some(stream) = self.streams.get_mut(&token) else {
                return;
            };
            match stream.read(&mut self.buf) {
                Ok(0) => return self.closed(token),
                Ok(n) => {
                    self.server
                        .handle_bytes(now, conn_of(token), &self.buf[..n], &mut self.rng);
                    // What these bytes made goes to its sockets at once, as c-toxcore writes
                    // each frame straight to its socket: the server's buffer then only holds
                    // what the kernel's is too full to take, and a fast sender's next reads
                    // do not pile onto an unflushed buffer and overflow it.
                    self.flush_ready();
                    budget = budget.saturating_sub(n);
                    if budget == 0 {
                        self.again.push_back(token);
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.closed(token),
            }
        }
    }

    /// Writes what the server has queued for `conn`, in records (relay_socket.rs), until the
    /// socket would block.
    fn write(&mut self, conn: ConnId) {
        loop {
            let Some(stream) = self.streams.get_mut(&token_of(conn)) else {
                return;
            };
            let bytes = self.server.poll_transmit(conn);
            if bytes.is_empty() {
                return;
            }
            match super::relay_socket::send_record(stream, bytes) {
                Ok(0) => return self.closed(token_of(conn)),
                Ok(n) => self.server.handle_written(conn, n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.closed(token_of(conn)),
            }
        }
    }

    fn closed(&mut self, token: Token) {
        if let Some(mut s) = self.streams.remove(&token) {
            let _ = self.poll.registry().deregister(&mut s);
        }
        self.server.handle_closed(conn_of(token));
    }

    fn drain_outputs(&mut self, now: Timestamp) {
        while let Some((conn, _)) = self.server.poll_close() {
            if let Some(mut s) = self.streams.remove(&token_of(conn)) {
                let _ = self.poll.registry().deregister(&mut s);
            }
        }
        while let Some(req) = self.server.poll_onion_request() {
            if let Some(sink) = self.onion.as_mut() {
                sink(now, RelayRequest::Onion(req));
            }
        }
        while let Some(req) = self.server.poll_forward_request() {
            if let Some(sink) = self.onion.as_mut() {
                sink(now, RelayRequest::Forward(req));
            }
        }
        self.flush_ready();
    }

    fn flush_ready(&mut self) {
        while let Some(conn) = self.server.poll_ready() {
            self.write(conn);
        }
    }
}

/// IPv4-mapped IPv6 addresses as IPv4 (a dual-stack listener reports IPv4 clients so).
fn canonical(addr: SocketAddr) -> SocketAddr {
    crate::dht::wire::packed_node::canonical(addr)
}
