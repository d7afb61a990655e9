//! The Rust API: a [`Tox`] handle for programs that want a Tox node without driving one.
//!
//! [`Tox::start`] binds a UDP socket, builds a [`Node`] (fresh, or from a profile), and runs
//! it on a thread of its own with the session driver ([`crate::driver::tokio::session`])
//! on a single-threaded tokio runtime: the node's receive batches are not `Send`, and one
//! thread per node keeps its latency independent of the caller's tasks. The handle's methods hand work to that task and
//! await its answer; what happens on the network comes out of [`Tox::next_event`] or the
//! [`EventStream`] (a `futures_core::Stream`). Programs without a runtime start it with
//! [`Tox::start_blocking`], read events in a plain loop with [`Tox::poll_event`] (or wait
//! with [`Tox::wait_event`]) and call the node with [`Tox::with_node_blocking`]; or they drive
//! a [`Node`] themselves: it is sans-IO, with `handle_datagram`, `poll_transmit`,
//! `poll_event` and `poll_timeout`.
//!
//! Conferences (c-toxcore's group chats) are `conference_*` methods on the same handle, and
//! their invitations and events come through the same stream
//! ([`NodeEvent::ConferenceInvite`], [`NodeEvent::Conference`]); see `examples/group_echo_bot.rs`.
//! Calls (ToxAV) are methods too ([`Tox::enable_calls`], [`Tox::call`], [`Tox::answer`],
//! [`Tox::send_audio`], ...), their events [`NodeEvent::Av`] in the same stream; see
//! `examples/answering_machine.rs`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), rustox_core::api::ToxError> {
//! use rustox_core::api::{Tox, ToxOptions};
//! use rustox_core::node::NodeEvent;
//! let mut tox = Tox::start(ToxOptions::default()).await?;
//! println!("my Tox ID: {}", tox.tox_id());
//! while let Some(event) = tox.next_event().await {
//!     if let NodeEvent::Message { friend, text, .. } = event {
//!         tox.send_message(friend, &text).await?;
//!     }
//! }
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rand::rngs::OsRng;
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::Timestamp;
use tokio::sync::{mpsc, oneshot, Notify};

mod av;
mod conference;
mod file_sink;
mod file_source;
/// The attribute a [`FileSink`] or [`FileSource`] implementation takes
/// (`#[rustox_core::api::async_trait]`).
pub use async_trait::async_trait;
pub use conference::{ConferenceInfo, ConferencePeer};
pub use file_sink::{FileSink, MAX_SINK_BACKLOG};
pub use file_source::{FileSource, SOURCE_BUFFER};

use crate::driver::tokio::relay_server::WithRelayServer;
use crate::driver::tokio::session::{self, App};
use crate::driver::{Clock, DriverOptions};
use crate::friend::ToxId;
use crate::node::{FriendNumber, MessageKind, Node, NodeError, NodeEvent, NodeOptions};
use crate::relay::server::RelayConfig;
use crate::savedata::Profile;

/// Events held for a handle that does not read them; past it the oldest are dropped (and
/// counted in [`Tox::events_dropped`]) so a forgetful program cannot grow without bound.
pub const EVENT_QUEUE: usize = 4096;

/// How to start a [`Tox`].
#[derive(Debug, Clone)]
pub struct ToxOptions {
    /// Where to listen (port 0: any free port).
    pub bind: SocketAddr,
    /// The node's options (transport, DHT, LAN discovery, accepting strangers).
    pub node: NodeOptions,
    /// DHT nodes to start from: address and DHT public key.
    pub bootstrap: Vec<(SocketAddr, PublicKey)>,
    /// TCP relays to connect through (address and the relay's DHT public key): how a node
    /// behind a network that blocks UDP reaches anyone, and with `node.udp_disabled` or
    /// `node.proxy` (every relay connection through a SOCKS5 or HTTP proxy, no UDP) the
    /// only way it does.
    pub tcp_relays: Vec<(SocketAddr, PublicKey)>,
    /// Run a TCP relay on this port (0: any free port) under the node's DHT key, as
    /// c-toxcore's `tcp_port` option does: friends that reach only TCP reach us and each
    /// other through it, and we are a client of it too. `None`: no relay.
    pub tcp_port: Option<u16>,
    /// A profile to be (identity, friends, name); `None`: a fresh identity.
    pub profile: Option<Profile>,
    /// How the driver uses the OS.
    pub driver: DriverOptions,
}

impl Default for ToxOptions {
    fn default() -> Self {
        ToxOptions {
            bind: SocketAddr::from(([0, 0, 0, 0], 0)),
            node: NodeOptions::default(),
            bootstrap: Vec::new(),
            tcp_relays: Vec::new(),
            tcp_port: None,
            profile: None,
            driver: DriverOptions::default(),
        }
    }
}

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ToxError {
    /// The socket could not be bound.
    #[error(transparent)]
    Bind(#[from] crate::driver::socket::BindError),
    /// The socket failed.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// The node refused the call.
    #[error(transparent)]
    Node(#[from] NodeError),
    /// A friend could not be added.
    #[error(transparent)]
    FriendAdd(#[from] crate::friend::FriendAddError),
    /// A conference call failed (each variant is one of tox.h's `Tox_Err_Conference_*`).
    #[error(transparent)]
    Conference(#[from] crate::conference::ConferenceError),
    /// The node's task has stopped (its socket failed, or the handle was shut down).
    #[error("the node has stopped")]
    Stopped,
    /// The TCP relay ([`ToxOptions::tcp_port`]) could not listen.
    #[error(transparent)]
    Relay(#[from] crate::driver::instance_relay::InstanceRelayError),
    /// Calls are off, or the friend is unknown or offline (toxav.h's node-side errors).
    #[error(transparent)]
    Av(#[from] crate::node::AvAccessError),
    /// `toxav_call` refused (`Toxav_Err_Call`).
    #[error(transparent)]
    Call(#[from] crate::av::CallError),
    /// `toxav_answer` refused (`Toxav_Err_Answer`).
    #[error(transparent)]
    Answer(#[from] crate::av::AnswerError),
    /// `toxav_call_control` refused (`Toxav_Err_Call_Control`).
    #[error(transparent)]
    CallControl(#[from] crate::av::ControlError),
    /// A bit-rate setter refused (`Toxav_Err_Bit_Rate_Set`).
    #[error(transparent)]
    BitRate(#[from] crate::av::BitRateError),
    /// A frame could not be sent (`Toxav_Err_Send_Frame`).
    #[error(transparent)]
    SendFrame(#[from] crate::av::SendFrameError),
    /// Group audio refused (groupav.c's failures).
    #[error(transparent)]
    GroupAudio(#[from] crate::node::GroupAudioError),
}

type Job = Box<dyn FnOnce(&mut Node, Timestamp) + Send>;

/// A running Tox node. Dropping it stops the node.
pub struct Tox {
    /// `None` once stopped: the node's thread ends when this sender is gone.
    jobs: Option<mpsc::UnboundedSender<Job>>,
    wake: Arc<Notify>,
    events: mpsc::Receiver<NodeEvent>,
    tox_id: ToxId,
    dht_pk: PublicKey,
    local: SocketAddr,
    tcp_port: Option<u16>,
    dropped: Arc<std::sync::atomic::AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The task's side: runs jobs on wake, forwards events.
struct ApiApp {
    jobs: mpsc::UnboundedReceiver<Job>,
    wake: Arc<Notify>,
    events: mpsc::Sender<NodeEvent>,
    dropped: Arc<std::sync::atomic::AtomicU64>,
}

/// What the node's thread runs: the API's app, with the instance's relay server beside it
/// when [`ToxOptions::tcp_port`] asks for one.
enum Runner {
    Plain(ApiApp),
    WithRelay(WithRelayServer<ApiApp>),
}

impl App for ApiApp {
    type Output = ();

    fn on_event(&mut self, _node: &mut Node, _now: Timestamp, event: NodeEvent) -> Option<()> {
        match self.events.try_send(event) {
            Ok(()) => None,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.dropped
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                None
            }
            // The handle is gone: stop.
            Err(mpsc::error::TrySendError::Closed(_)) => Some(()),
        }
    }

    fn waker(&self) -> Option<Arc<Notify>> {
        Some(self.wake.clone())
    }

    fn on_wake(&mut self, node: &mut Node, now: Timestamp) -> Option<()> {
        loop {
            match self.jobs.try_recv() {
                Ok(job) => job(node, now),
                Err(mpsc::error::TryRecvError::Empty) => return None,
                Err(mpsc::error::TryRecvError::Disconnected) => return Some(()),
            }
        }
    }
}

impl Tox {
    /// Binds the socket, builds the node and starts it on its thread.
    pub async fn start(options: ToxOptions) -> Result<Tox, ToxError> {
        Self::start_blocking(options)
    }

    /// [`Tox::start`] for programs without an async runtime (nothing in it waits: the node
    /// gets a runtime of its own on its thread). Such a program then reads events with
    /// [`Tox::poll_event`] or [`Tox::wait_event`] and calls the node with
    /// [`Tox::with_node_blocking`].
    pub fn start_blocking(options: ToxOptions) -> Result<Tox, ToxError> {
        let socket = crate::driver::socket::bind(options.bind)?;
        let local = socket.local_addr()?;
        let clock = Clock::default();
        let now = clock.now();
        let mut node = match &options.profile {
            Some(p) => Node::from_profile(now, p, options.node.clone(), crate::node::system_rng()),
            None => Node::new(
                now,
                KeyPair::generate(&mut OsRng),
                options.node.clone(),
                crate::node::system_rng(),
            ),
        };
        if options.node.dht.lan_discovery {
            node.set_lan_broadcasts(crate::driver::socket::interface_broadcasts());
        }
        for (addr, pk) in &options.bootstrap {
            node.bootstrap(now, *addr, *pk);
        }
        for (addr, pk) in &options.tcp_relays {
            // A full relay table keeps the relays it has.
            let _ = node.add_tcp_relay(now, *addr, *pk);
        }
        let (job_tx, job_rx) = mpsc::unbounded_channel();
        let (event_tx, event_rx) = mpsc::channel(EVENT_QUEUE);
        let wake = Arc::new(Notify::new());
        let dropped = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let tox_id = node.tox_id();
        let dht_pk = node.dht_public_key();
        let app = ApiApp {
            jobs: job_rx,
            wake: wake.clone(),
            events: event_tx,
            dropped: dropped.clone(),
        };
        let driver = options.driver;
        let mut app = match options.tcp_port {
            Some(port) => Runner::WithRelay(WithRelayServer::start(
                app,
                &mut node,
                now,
                port,
                local.is_ipv6(),
                RelayConfig::default(),
                clock,
            )?),
            None => Runner::Plain(app),
        };
        let tcp_port = match &app {
            Runner::WithRelay(a) => Some(a.relay().port()),
            Runner::Plain(_) => None,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::Builder::new()
            .name("rustox-node".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(socket) = tokio::net::UdpSocket::from_std(socket) else {
                        return;
                    };
                    let _ = match &mut app {
                        Runner::WithRelay(app) => {
                            session::run(&mut node, &socket, clock, app, driver).await
                        }
                        Runner::Plain(app) => {
                            session::run(&mut node, &socket, clock, app, driver).await
                        }
                    };
                });
            })?;
        Ok(Tox {
            jobs: Some(job_tx),
            wake,
            events: event_rx,
            tox_id,
            dht_pk,
            local,
            tcp_port,
            dropped,
            thread: Some(thread),
        })
    }

    /// Runs `f` on the node, on its task, and returns what it returns: every method below
    /// is one of these. The closure must be quick (it holds up the node's sessions).
    pub async fn with_node<R, F>(&self, f: F) -> Result<R, ToxError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Node, Timestamp) -> R + Send + 'static,
    {
        self.submit(f)?.await.map_err(|_| ToxError::Stopped)
    }

    /// [`Tox::with_node`] for programs without an async runtime: blocks until the node has
    /// run `f`. Must not be called from async code (it would block the runtime's thread;
    /// tokio refuses with a panic).
    pub fn with_node_blocking<R, F>(&self, f: F) -> Result<R, ToxError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Node, Timestamp) -> R + Send + 'static,
    {
        self.submit(f)?
            .blocking_recv()
            .map_err(|_| ToxError::Stopped)
    }

    /// Queues `f` for the node's task and wakes it; the receiver gets what `f` returns.
    fn submit<R, F>(&self, f: F) -> Result<oneshot::Receiver<R>, ToxError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Node, Timestamp) -> R + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |node, now| {
            let _ = tx.send(f(node, now));
        });
        self.jobs
            .as_ref()
            .ok_or(ToxError::Stopped)?
            .send(job)
            .map_err(|_| ToxError::Stopped)?;
        self.wake.notify_one();
        Ok(rx)
    }

    /// The next event if one is waiting, without waiting: the plain poll loop of a program
    /// without a runtime (call it from its own loop, as a C client calls `tox_iterate`).
    pub fn poll_event(&mut self) -> Option<NodeEvent> {
        self.events.try_recv().ok()
    }

    /// Waits for the next event; `None` once the node has stopped. For programs without a
    /// runtime; must not be called from async code.
    pub fn wait_event(&mut self) -> Option<NodeEvent> {
        self.events.blocking_recv()
    }

    /// Our Tox ID (give it to friends).
    pub fn tox_id(&self) -> ToxId {
        self.tox_id
    }

    /// Our DHT key (others bootstrap off `local_addr` with it).
    pub fn dht_public_key(&self) -> PublicKey {
        self.dht_pk
    }

    /// Where the socket listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The TCP port our relay listens on ([`ToxOptions::tcp_port`]), if one runs.
    pub fn tcp_port(&self) -> Option<u16> {
        self.tcp_port
    }

    /// Events dropped because the handle did not read them.
    pub fn events_dropped(&self) -> u64 {
        self.dropped.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The next event; `None` once the node has stopped.
    pub async fn next_event(&mut self) -> Option<NodeEvent> {
        self.events.recv().await
    }

    /// The events as a `futures_core::Stream` (for `StreamExt` combinators); the handle
    /// keeps working for calls.
    pub fn events(&mut self) -> EventStream<'_> {
        EventStream {
            rx: &mut self.events,
        }
    }

    /// Starts from another DHT node.
    pub async fn bootstrap(&self, addr: SocketAddr, dht_pk: PublicKey) -> Result<(), ToxError> {
        self.with_node(move |n, now| n.bootstrap(now, addr, dht_pk))
            .await
    }

    /// Sends a friend request (`tox_friend_add`).
    pub async fn add_friend(&self, id: ToxId, message: &[u8]) -> Result<FriendNumber, ToxError> {
        let message = message.to_vec();
        Ok(self
            .with_node(move |n, now| n.add_friend(now, &id, &message))
            .await??)
    }

    /// Adds a friend without a request, or accepts one (`tox_friend_add_norequest`).
    pub async fn add_friend_norequest(&self, pk: PublicKey) -> Result<FriendNumber, ToxError> {
        Ok(self
            .with_node(move |n, now| n.add_friend_norequest(now, pk))
            .await??)
    }

    /// Sends a message; returns its id for the read receipt.
    pub async fn send_message(&self, friend: FriendNumber, text: &[u8]) -> Result<u32, ToxError> {
        self.send_message_kind(friend, MessageKind::Normal, text)
            .await
    }

    /// Sends a message or an action.
    pub async fn send_message_kind(
        &self,
        friend: FriendNumber,
        kind: MessageKind,
        text: &[u8],
    ) -> Result<u32, ToxError> {
        let text = text.to_vec();
        Ok(self
            .with_node(move |n, now| n.send_message_kind(now, friend, kind, &text))
            .await??)
    }

    /// Sets our name.
    pub async fn set_name(&self, name: &[u8]) -> Result<(), ToxError> {
        let name = name.to_vec();
        Ok(self
            .with_node(move |n, now| n.set_name(now, &name))
            .await??)
    }

    /// Offers a file from disk; it is hashed first (off the node's task) so receivers can
    /// verify it. Returns the file number.
    pub async fn send_file(&self, friend: FriendNumber, path: &Path) -> Result<u32, ToxError> {
        let file = std::fs::File::open(path)?;
        let prepared = tokio::task::spawn_blocking(move || crate::driver::prepare_file(file))
            .await
            .map_err(|_| ToxError::Stopped)??;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned().into_bytes())
            .unwrap_or_default();
        Ok(self
            .with_node(move |n, now| n.send_file(now, friend, prepared, &name))
            .await??)
    }

    /// Accepts an offered file into a new file at `path`, hashed as it is written:
    /// [`NodeEvent::FileReceived`] gives its SHA-256 and whether that equals the offer's
    /// file id (a rustox sender's) or the id was opaque (a c-toxcore client's random one).
    /// The file is kept either way.
    pub async fn accept_file(
        &self,
        friend: FriendNumber,
        file: u32,
        path: PathBuf,
    ) -> Result<(), ToxError> {
        let handle = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        let (sink, digest) =
            crate::driver::hashing_sink(std::io::BufWriter::with_capacity(1 << 20, handle))?;
        Ok(self
            .with_node(move |n, now| n.accept_file(now, friend, file, sink, Some(digest)))
            .await??)
    }

    /// Offers a file whose bytes come from `source`, which a task on the caller's runtime
    /// reads ahead of the node ([`FileSource`]: a slow source holds up only this file).
    /// `size` may be [`rustox_file_transfer::UNKNOWN_FILE_SIZE`] for a stream that ends when
    /// the source does. `file_id` is what receivers check the file against: its SHA-256 if
    /// the caller knows it (they can then verify it), else any 32 bytes (tox.h draws random
    /// ones). Returns the file number and the task, which ends with the bytes read or the
    /// source's error (the transfer then fails).
    pub async fn send_file_from<S: FileSource>(
        &self,
        friend: FriendNumber,
        name: &[u8],
        size: u64,
        file_id: [u8; 32],
        source: S,
    ) -> Result<(u32, tokio::task::JoinHandle<std::io::Result<u64>>), ToxError> {
        let (reader, start) = file_source::read_ahead(Box::new(source));
        let name = name.to_vec();
        let file = self
            .with_node(move |n, now| {
                let prepared = crate::node::PreparedFile {
                    source: Box::new(reader),
                    size,
                    sha256: file_id,
                };
                n.send_file(now, friend, prepared, &name)
            })
            .await??;
        let jobs = self.jobs.clone().ok_or(ToxError::Stopped)?;
        let wake = self.wake.clone();
        let ready = move || {
            let job: Job = Box::new(move |node, now| node.file_source_ready(now, friend, file));
            if jobs.send(job).is_ok() {
                wake.notify_one();
            }
        };
        Ok((file, tokio::spawn(start(Box::new(ready)))))
    }

    /// Accepts an offered file into `sink`, which a task on the caller's runtime writes in
    /// order ([`FileSink`]: a slow sink never holds up the node). The file is hashed as it
    /// arrives ([`NodeEvent::FileReceived`] gives its SHA-256 and whether that equals the
    /// offer's file id). The returned task ends with the bytes the sink took once it has finished the
    /// file, or with the sink's error (the transfer is then cancelled).
    pub async fn accept_file_into<S: FileSink>(
        &self,
        friend: FriendNumber,
        file: u32,
        sink: S,
    ) -> Result<tokio::task::JoinHandle<std::io::Result<u64>>, ToxError> {
        let (writer, task) = file_sink::channel_sink(Box::new(sink));
        let (sink, digest) = crate::driver::hashing_sink(writer)?;
        self.with_node(move |n, now| n.accept_file(now, friend, file, sink, Some(digest)))
            .await??;
        Ok(tokio::spawn(task))
    }

    /// The node's state as a profile (save it with [`crate::savedata::file::save_atomic`]
    /// after `to_bytes`, or encrypt it first with [`crate::savedata::crypt::encrypt`]).
    pub async fn profile(&self) -> Result<Profile, ToxError> {
        self.with_node(|n, now| n.to_profile(now)).await
    }

    /// Stops the node and waits for its thread to end.
    pub async fn shutdown(mut self) {
        let thread = self.stop();
        if let Some(thread) = thread {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }

    /// Closes the job channel and wakes the node, which then stops.
    fn stop(&mut self) -> Option<std::thread::JoinHandle<()>> {
        self.jobs = None;
        self.events.close();
        self.wake.notify_one();
        self.thread.take()
    }
}

impl Drop for Tox {
    fn drop(&mut self) {
        // The thread ends on its own once woken; it is not joined here, so dropping a
        // handle inside async code never blocks a runtime thread.
        let _ = self.stop();
    }
}

/// [`Tox`]'s events as a stream.
pub struct EventStream<'a> {
    rx: &'a mut mpsc::Receiver<NodeEvent>,
}

impl futures_core::Stream for EventStream<'_> {
    type Item = NodeEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<NodeEvent>> {
        self.rx.poll_recv(cx)
    }
}
