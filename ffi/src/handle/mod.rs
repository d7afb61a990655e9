//! The `Tox` instance behind the C API's opaque `Tox *`: a node, its socket, the bridge
//! between the node's file layer and tox.h's chunk callbacks, and the client's callbacks.
//!
//! Locking: the node, socket and file bridge sit behind one mutex ([`Instance::lock`]); every
//! entry point holds it only while it works on them. The callbacks sit behind another and
//! are copied out before they run. `tox_iterate` collects an iteration's events under the
//! lock, releases it, and only then calls the client's callbacks, so a callback may call any
//! function of the library (qTox and toxic answer a chunk request with `tox_file_send_chunk`
//! from inside the callback) and another thread may use the instance meanwhile. A poisoned
//! mutex (a panic caught at the boundary, guard.rs) is taken over as it is: the panic is
//! already an error value for the call that hit it.
//!
//! The instance holds the callback table (callbacks/table.rs) and the file bridge
//! (files/bridge.rs); the entry points that change them (callbacks/mod.rs, files/mod.rs)
//! reach the instance through [`tox_ref`], so the dependencies run one way. C's `Tox` is an
//! opaque type of its own (opaque.rs), which the callback types name.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rustox_core::conference::{ConferenceEvent, ConferenceType};
use rustox_core::driver::step::{StepReport, Stepper};
use rustox_core::node::{FriendNumber, Node, NodeEvent};

use crate::callbacks::table::Callbacks;
use crate::event::Event;
use crate::files::bridge::FileBridge;
use crate::types::{
    Tox_Conference_Type, Tox_Connection, Tox_File_Control, Tox_Message_Type, Tox_User_Status,
};

/// Longest `tox_iteration_interval`, in milliseconds. A client sleeps that long without
/// looking at the socket (toxic, qTox and uTox all do), so this bounds how long a datagram
/// that arrives while the node has no deadline of its own waits: a message, a friend
/// request, the first packet of a handshake. c-toxcore always answers 50 ms at most (20
/// wake-ups a second, idle or not); 200 ms keeps chat's added delay under what a person
/// notices while an idle client wakes 5 times a second. During a transfer the node's own
/// deadlines (pacing, acknowledgements) are far shorter and set the interval.
pub const MAX_ITERATION_INTERVAL_MS: u32 = 200;
/// The interval at most while TCP relay connections exist: their bytes are read only when
/// the client iterates (c-toxcore's interval is 50 ms whatever happens).
pub const RELAY_ITERATION_INTERVAL_MS: u32 = 50;

/// The interval at most while we are connected to a conference with other peers online. A
/// conference message reaches most peers through others, each of which forwards it only when
/// its client next iterates, so every hop adds up to this interval: at 200 ms a 16-peer
/// conference delivered at p50 200 ms on loopback where c-toxcore (50 ms, every hop) took
/// 64 ms (conference-net-bench). 25 ms keeps a hop's wait under c-toxcore's while a node
/// with no conference keeps its 200 ms.
pub const CONFERENCE_ITERATION_INTERVAL_MS: u32 = 25;

/// Datagrams one step must have read for the next interval to be at most
/// [`BUSY_INTERVAL_MS`]: a flow is running (file data arriving, or the acknowledgements of
/// ours), and the node cannot know when the next datagram comes, only that it comes soon.
/// A step of an idle node reads one or two (an ALIVE, a DHT ping).
pub const BUSY_DATAGRAMS: usize = 8;

/// The interval while datagrams flow or a file is being transferred: the socket is read
/// every millisecond. A client sleeps blindly for the interval, so a node that waits on its
/// own deadlines there (a receiver's 25 ms acknowledgement delay, net_crypto's
/// `MAX_ACK_DELAY`; a sender's loss timer while its window is full) reads acknowledgements
/// and data only that late, which the transport takes for a long path, and slows down.
pub const BUSY_INTERVAL_MS: u32 = 1;

pub(crate) mod opaque;

pub use opaque::Tox;

/// One Tox instance: what a C `Tox *` points to ([`tox_ref`] turns the one into the other).
pub struct Instance {
    state: Mutex<State>,
    callbacks: Mutex<Callbacks>,
    /// Entry points running on this instance now ([`Entered`]): `tox_kill` waits for them.
    calls: AtomicUsize,
    /// `tox_kill` was called: no new call gets in.
    killed: AtomicBool,
    /// `tox_kill` was called from one of this instance's callbacks: the `tox_iterate`
    /// that runs them frees the instance when they are done.
    kill_after_callbacks: AtomicBool,
}

thread_local! {
    /// The instance whose callbacks this thread is running, if any.
    static IN_CALLBACKS: Cell<*const Instance> = const { Cell::new(std::ptr::null()) };
}

/// One entry point's use of an instance: counted while it lives, so that `tox_kill` on
/// another thread waits for it instead of freeing the instance under it.
pub struct Entered<'a>(&'a Instance);

impl std::ops::Deref for Entered<'_> {
    type Target = Instance;

    fn deref(&self) -> &Instance {
        self.0
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.0.calls.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What the instance's lock guards.
pub struct State {
    /// The node.
    pub node: Node,
    /// Its socket and clock.
    pub stepper: Stepper,
    /// Files between the node's file layer and the client's chunks.
    pub files: FileBridge,
    /// The self connection status last reported.
    pub self_status: Tox_Connection,
    /// Each online friend's connection status last reported (UDP or TCP).
    pub friend_status: HashMap<u32, Tox_Connection>,
    /// Events produced by API calls outside an iteration (none today: every event comes
    /// from the node), delivered with the next iteration's.
    pub pending: Vec<Event>,
    /// What the last step read.
    pub last_step: StepReport,
    /// What the client has been told of each friend, which the getters answer with:
    /// [`Delivered`].
    pub delivered: HashMap<u32, Delivered>,
    /// toxav's events and group audio, waiting for the client (av/hub.rs).
    pub av: crate::av::hub::AvHub,
}

/// A friend's state as the callbacks delivered so far have told it. The node's state runs
/// ahead of the callbacks (a step's events are handed over after it), and c-toxcore's
/// getters always agree with the callback being run: asked from inside a typing callback,
/// `tox_friend_get_typing` says what the callback says, even when a later event of the same
/// step changes it again. A field is `None` until its first event: the node's value (from
/// the profile) stands until then.
#[derive(Debug, Clone, Default)]
pub struct Delivered {
    /// Last `tox_friend_connection_status_cb`.
    pub connection: Option<Tox_Connection>,
    /// Last `tox_friend_typing_cb`.
    pub typing: Option<bool>,
    /// Last `tox_friend_status_cb`.
    pub status: Option<Tox_User_Status>,
    /// Last `tox_friend_name_cb`.
    pub name: Option<Vec<u8>>,
    /// Last `tox_friend_status_message_cb`.
    pub status_message: Option<Vec<u8>>,
}

impl Instance {
    /// A new instance over a running node.
    pub fn new(node: Node, stepper: Stepper) -> Instance {
        Instance {
            state: Mutex::new(State {
                node,
                stepper,
                files: FileBridge::default(),
                self_status: Tox_Connection::NONE,
                friend_status: HashMap::new(),
                pending: Vec::new(),
                last_step: StepReport::default(),
                delivered: HashMap::new(),
                av: crate::av::hub::AvHub::default(),
            }),
            callbacks: Mutex::new(Callbacks::default()),
            calls: AtomicUsize::new(0),
            killed: AtomicBool::new(false),
            kill_after_callbacks: AtomicBool::new(false),
        }
    }

    /// Hands the instance to C, as the `Tox *` that `tox_new` returns ([`kill`] frees it).
    pub fn into_c(self) -> *mut Tox {
        Box::into_raw(Box::new(self)).cast()
    }

    /// Counts a call in, unless the instance is being killed.
    fn enter(&self) -> Option<Entered<'_>> {
        // Counted before the flag is read, and the flag is set before `kill` reads the
        // count: either the call sees the flag, or `kill` sees the call.
        self.calls.fetch_add(1, Ordering::SeqCst);
        let entered = Entered(self);
        (!self.killed.load(Ordering::SeqCst)).then_some(entered)
    }

    /// Runs `callbacks` marked as this instance's, so that a `tox_kill` from inside them
    /// is deferred to their end instead of waiting for itself.
    pub fn in_callbacks(&self, callbacks: impl FnOnce()) {
        let outer = IN_CALLBACKS.with(|c| c.replace(self as *const Instance));
        callbacks();
        IN_CALLBACKS.with(|c| c.set(outer));
    }

    /// `tox_kill` was called from this instance's callbacks on this thread.
    pub fn kill_requested(&self) -> bool {
        self.kill_after_callbacks.load(Ordering::SeqCst)
    }

    /// The node and its companions, locked.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The callbacks, locked (to register one, or to copy them before an iteration's run).
    pub fn callbacks(&self) -> MutexGuard<'_, Callbacks> {
        self.callbacks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs one step of the node and returns what it produced, in order, as delivered all at
    /// once (`tox_events_iterate`: the getters answer with the step's final state).
    pub fn iterate_events(&self) -> Vec<Event> {
        let events = self.step_events();
        let mut state = self.lock();
        for event in &events {
            state.deliver(event);
        }
        events
    }

    /// Runs one step of the node and returns what it produced, in order, not yet delivered:
    /// `tox_iterate` delivers each just before its callback runs ([`State::deliver`]).
    pub fn step_events(&self) -> Vec<Event> {
        let mut state = self.lock();
        let state = &mut *state;
        // Chunks the client gave since the node ran dry, that no single chunk's call woke
        // it for (files/bridge.rs, `take_wake`): the step sends them.
        let now = state.stepper.now();
        for (friend, file) in state.files.starved_with_data() {
            state
                .node
                .file_source_ready(now, rustox_core::node::FriendNumber(friend), file);
        }
        match state.stepper.step(&mut state.node) {
            Ok(report) => state.last_step = report,
            Err(e) => tracing::warn!("cannot read the node's socket: {e}"),
        }
        let mut events = std::mem::take(&mut state.pending);
        state.collect(&mut events);
        // The file layer read what the client sent since the last step: send it now.
        state.stepper.flush(&mut state.node);
        events
    }

    /// Milliseconds until the node's next deadline, at most [`MAX_ITERATION_INTERVAL_MS`];
    /// 0 while chunks or events wait to be handed over or the socket holds more than the
    /// last step read; at most [`BUSY_INTERVAL_MS`] while datagrams flow.
    pub fn iteration_interval(&self) -> u32 {
        let state = self.lock();
        let node = &state.node;
        let has_work = state.files.has_work(|friend, file| {
            node.file_paused(rustox_core::node::FriendNumber(friend), file)
        });
        if !state.pending.is_empty() || has_work || state.last_step.more_waiting {
            return 0;
        }
        let cap = if state.last_step.datagrams >= BUSY_DATAGRAMS || state.files.transferring() {
            BUSY_INTERVAL_MS
        } else if in_live_conference(node) {
            CONFERENCE_ITERATION_INTERVAL_MS
        } else if state.stepper.has_relays() {
            RELAY_ITERATION_INTERVAL_MS
        } else {
            MAX_ITERATION_INTERVAL_MS
        };
        let wait = state
            .stepper
            .next_wake(&state.node)
            .unwrap_or(Duration::from_millis(u64::from(MAX_ITERATION_INTERVAL_MS)));
        // Rounded up: a client that wakes before the deadline only spins once more.
        let ms = wait.as_micros().div_ceil(1000);
        u32::try_from(ms).map_or(cap, |ms| ms.min(cap))
    }
}

/// Whether the node is connected to a conference in which some other peer is online: then
/// messages may arrive for it to forward at any moment.
fn in_live_conference(node: &Node) -> bool {
    let conferences = node.conferences();
    conferences.list().into_iter().any(|c| {
        conferences.is_connected(c) == Ok(true)
            && conferences
                .peer_count(c, rustox_core::conference::PeerList::Online)
                .is_ok_and(|n| n > 1)
    })
}

impl State {
    /// Records that the client is being told `event`: the getters answer with it from now.
    pub fn deliver(&mut self, event: &Event) {
        let (friend, update): (u32, &dyn Fn(&mut Delivered)) = match event {
            Event::FriendConnectionStatus {
                friend_number,
                status,
            } => (*friend_number, &|d| d.connection = Some(*status)),
            Event::FriendTyping {
                friend_number,
                typing,
            } => (*friend_number, &|d| d.typing = Some(*typing)),
            Event::FriendStatus {
                friend_number,
                status,
            } => (*friend_number, &|d| d.status = Some(*status)),
            Event::FriendName {
                friend_number,
                name,
            } => (*friend_number, &|d| d.name = Some(name.clone())),
            Event::FriendStatusMessage {
                friend_number,
                message,
            } => (*friend_number, &|d| {
                d.status_message = Some(message.clone())
            }),
            _ => return,
        };
        update(self.delivered.entry(friend).or_default());
    }

    /// Whether `event`, collected at the start of this `tox_iterate`, is still to be
    /// delivered after the callbacks before it ran: a chunk request for a file the client
    /// has since ended, cancelled or paused is not ([`FileBridge::still_requested`]); the
    /// part of the file it asked for is asked for again once the file resumes.
    pub fn is_current(&self, event: &Event) -> bool {
        match *event {
            Event::FileChunkRequest {
                friend_number,
                file_number,
                position,
                length,
            } if length > 0 => {
                if !self
                    .files
                    .still_requested(friend_number, file_number, position)
                {
                    return false;
                }
                let friend = rustox_core::node::FriendNumber(friend_number);
                if self.node.file_paused(friend, file_number) {
                    self.files.take_back(friend_number, file_number, position);
                    return false;
                }
                true
            }
            _ => true,
        }
    }

    /// What the client has been told of `friend`, if anything.
    pub fn delivered(&self, friend: u32) -> Option<&Delivered> {
        self.delivered.get(&friend)
    }

    /// The time on the node's clock.
    pub fn now(&self) -> rustox_net_crypto::Timestamp {
        self.stepper.now()
    }

    /// Sends what an API call left the node to send (a message goes out at once, as
    /// c-toxcore sends it from the call).
    pub fn flush(&mut self) {
        self.stepper.flush(&mut self.node);
    }

    /// The node's events since the last call, in tox.h's terms, after the file chunks that
    /// arrived before them; then the chunk requests the client must answer.
    fn collect(&mut self, out: &mut Vec<Event>) {
        self.files.drain_received(out);
        while let Some(event) = self.node.poll_event() {
            self.translate(event, out);
        }
        self.refresh_connection_kinds(out);
        self.files.drain_received(out);
        let node = &self.node;
        self.files.request_chunks(out, |friend, file| {
            node.file_paused(rustox_core::node::FriendNumber(friend), file)
        });
    }

    fn translate(&mut self, event: NodeEvent, out: &mut Vec<Event>) {
        match event {
            NodeEvent::FriendRequest { pk, message } => out.push(Event::FriendRequest {
                public_key: pk.0,
                message,
            }),
            // Only a node accepting strangers adds friends by itself; a C client never asks.
            NodeEvent::FriendAdded { .. } | NodeEvent::SessionClosed { .. } => {}
            // Calls and group audio wait for toxav's callbacks (av/hub.rs).
            NodeEvent::Av(event) => self.av.push(event),
            NodeEvent::ConferenceAudio {
                conference,
                peer,
                pcm,
                channels,
                sampling_rate,
            } => self.av.push_group(crate::av::hub::GroupFrame {
                conference: conference.0,
                peer,
                pcm,
                channels,
                sampling_rate,
            }),
            NodeEvent::FriendConnection { friend, online, .. } => {
                let status = if online {
                    self.friend_kind(friend.0).unwrap_or(Tox_Connection::UDP)
                } else {
                    self.files.friend_offline(friend.0);
                    Tox_Connection::NONE
                };
                if online {
                    self.friend_status.insert(friend.0, status);
                } else {
                    self.friend_status.remove(&friend.0);
                }
                out.push(Event::FriendConnectionStatus {
                    friend_number: friend.0,
                    status,
                })
            }
            NodeEvent::Message { friend, kind, text } => out.push(Event::FriendMessage {
                friend_number: friend.0,
                kind: message_type(kind),
                message: text,
            }),
            NodeEvent::ReadReceipt { friend, message_id } => out.push(Event::FriendReadReceipt {
                friend_number: friend.0,
                message_id,
            }),
            NodeEvent::FriendName { friend, name } => out.push(Event::FriendName {
                friend_number: friend.0,
                name,
            }),
            NodeEvent::FriendStatusMessage { friend, text } => {
                out.push(Event::FriendStatusMessage {
                    friend_number: friend.0,
                    message: text,
                })
            }
            NodeEvent::FriendStatus { friend, status } => out.push(Event::FriendStatus {
                friend_number: friend.0,
                status: user_status(status),
            }),
            NodeEvent::FriendTyping { friend, typing } => out.push(Event::FriendTyping {
                friend_number: friend.0,
                typing,
            }),
            NodeEvent::CustomPacket {
                friend,
                lossless,
                data,
            } => out.push(if lossless {
                Event::FriendLosslessPacket {
                    friend_number: friend.0,
                    data,
                }
            } else {
                Event::FriendLossyPacket {
                    friend_number: friend.0,
                    data,
                }
            }),
            NodeEvent::FileControl {
                friend,
                file,
                control,
            } => out.push(Event::FileRecvControl {
                friend_number: friend.0,
                file_number: file,
                control: match control {
                    rustox_file_transfer::FileControl::Resume => Tox_File_Control::RESUME,
                    rustox_file_transfer::FileControl::Pause => Tox_File_Control::PAUSE,
                    rustox_file_transfer::FileControl::Cancel => Tox_File_Control::CANCEL,
                },
            }),
            NodeEvent::FileOffered(offer) => {
                self.files.offered(&offer);
                out.push(Event::FileRecv {
                    friend_number: offer.friend.0,
                    file_number: offer.file,
                    kind: offer.kind.to_u32(),
                    file_size: offer.size,
                    filename: offer.name,
                })
            }
            // c-toxcore's last chunk request has length 0: the file is done.
            NodeEvent::FileSent {
                friend,
                file,
                bytes,
            } => {
                self.files.finished(friend.0, file);
                out.push(Event::FileChunkRequest {
                    friend_number: friend.0,
                    file_number: file,
                    position: bytes,
                    length: 0,
                })
            }
            // Every chunk before it, then c-toxcore's 0-length chunk: the file is complete.
            NodeEvent::FileReceived {
                friend,
                file,
                bytes,
                ..
            } => {
                self.files.drain_received(out);
                self.files.finished(friend.0, file);
                out.push(Event::FileRecvChunk {
                    friend_number: friend.0,
                    file_number: file,
                    position: bytes,
                    data: Vec::new(),
                })
            }
            NodeEvent::FileFailed {
                friend,
                file,
                reason,
                by_peer,
            } => {
                self.files.finished(friend.0, file);
                if by_peer {
                    out.push(Event::FileRecvControl {
                        friend_number: friend.0,
                        file_number: file,
                        control: Tox_File_Control::CANCEL,
                    });
                } else {
                    // c-toxcore drops a broken transfer silently (`break_files`) and so do
                    // we, towards the client; the reason goes to the log.
                    tracing::info!("file {file} with friend {} failed: {reason}", friend.0);
                }
            }
            NodeEvent::SelfConnection { .. } => self.refresh_self_status(out),
            NodeEvent::ConferenceInvite {
                friend,
                kind,
                cookie,
            } => out.push(Event::ConferenceInvite {
                friend_number: friend.0,
                kind: conference_type(kind),
                cookie,
            }),
            NodeEvent::Conference(event) => self.translate_conference(event, out),
        }
    }

    /// A conference event in tox.h's terms, in the order the node reported it (c-toxcore
    /// calls the conference callbacks from inside `tox_iterate` as the packets arrive,
    /// between the friend callbacks of the same iteration).
    fn translate_conference(&mut self, event: ConferenceEvent, out: &mut Vec<Event>) {
        out.push(match event {
            // The node reports invites as `NodeEvent::ConferenceInvite`; one that comes
            // through here still reaches the client if its sender is a friend.
            ConferenceEvent::Invite {
                friend_pk,
                kind,
                cookie,
            } => {
                let Some(friend) = self.node.friend_by_pk(&friend_pk) else {
                    return;
                };
                Event::ConferenceInvite {
                    friend_number: friend.0,
                    kind: conference_type(kind),
                    cookie,
                }
            }
            ConferenceEvent::Connected { conference } => Event::ConferenceConnected {
                conference_number: conference.0,
            },
            ConferenceEvent::Message {
                conference,
                peer,
                kind,
                text,
            } => Event::ConferenceMessage {
                conference_number: conference.0,
                peer_number: peer,
                kind: message_type(kind),
                message: text,
            },
            ConferenceEvent::Title {
                conference,
                peer,
                title,
            } => Event::ConferenceTitle {
                conference_number: conference.0,
                peer_number: peer,
                title,
            },
            ConferenceEvent::PeerName {
                conference,
                peer,
                name,
            } => Event::ConferencePeerName {
                conference_number: conference.0,
                peer_number: peer,
                name,
            },
            ConferenceEvent::PeerListChanged { conference } => Event::ConferencePeerListChanged {
                conference_number: conference.0,
            },
            // Group audio (packet 199) reaches toxav as `NodeEvent::ConferenceAudio`,
            // decoded (av/group.rs): nothing in tox.h hears it.
            ConferenceEvent::Lossy { .. } => return,
        })
    }

    /// The self connection status as c-toxcore's `onion_connection_status` reports it:
    /// NONE until announced on the onion, then UDP while a DHT node outside the LAN answers
    /// us and TCP otherwise (only LAN nodes, or only TCP relays).
    fn self_kind(&self) -> Tox_Connection {
        if !self.node.is_onion_connected() {
            Tox_Connection::NONE
        } else if self.node.is_udp_connected(self.now()) {
            Tox_Connection::UDP
        } else {
            Tox_Connection::TCP
        }
    }

    /// An online friend's status as c-toxcore's `m_get_friend_connectionstatus` reports
    /// it: UDP while its session has working UDP, else TCP (through a relay).
    fn friend_kind(&self, friend: u32) -> Option<Tox_Connection> {
        let direct = self
            .node
            .friend_udp_direct(FriendNumber(friend), self.now())?;
        Some(if direct {
            Tox_Connection::UDP
        } else {
            Tox_Connection::TCP
        })
    }

    fn refresh_self_status(&mut self, out: &mut Vec<Event>) {
        let status = self.self_kind();
        if status != self.self_status {
            self.self_status = status;
            out.push(Event::SelfConnectionStatus { status });
        }
    }

    /// Reports the changes between UDP and TCP that no node event announces: the DHT
    /// gaining or losing its nodes outside the LAN, a friend's session moving between UDP
    /// and a relay (c-toxcore's callbacks fire on those too).
    fn refresh_connection_kinds(&mut self, out: &mut Vec<Event>) {
        if self.self_status != Tox_Connection::NONE {
            self.refresh_self_status(out);
        }
        let mut changed = Vec::new();
        for (&friend, &status) in &self.friend_status {
            if let Some(now) = self.friend_kind(friend) {
                if now != status {
                    changed.push((friend, now));
                }
            }
        }
        for (friend, status) in changed {
            self.friend_status.insert(friend, status);
            out.push(Event::FriendConnectionStatus {
                friend_number: friend,
                status,
            });
        }
    }
}

/// tox.h's message type for the node's.
pub fn message_type(kind: rustox_core::node::MessageKind) -> Tox_Message_Type {
    match kind {
        rustox_core::node::MessageKind::Normal => Tox_Message_Type::NORMAL,
        rustox_core::node::MessageKind::Action => Tox_Message_Type::ACTION,
    }
}

/// tox.h's conference type for the engine's.
pub fn conference_type(kind: ConferenceType) -> Tox_Conference_Type {
    match kind {
        ConferenceType::Text => Tox_Conference_Type::TEXT,
        ConferenceType::Av => Tox_Conference_Type::AV,
    }
}

/// tox.h's user status for the node's.
pub fn user_status(status: rustox_core::node::UserStatus) -> Tox_User_Status {
    match status {
        rustox_core::node::UserStatus::None => Tox_User_Status::NONE,
        rustox_core::node::UserStatus::Away => Tox_User_Status::AWAY,
        rustox_core::node::UserStatus::Busy => Tox_User_Status::BUSY,
    }
}

/// The instance behind a pointer from C, entered for the caller's call; `None` for NULL or
/// for an instance being killed.
///
/// # Safety
/// A non-NULL `tox` must come from `tox_new` and `tox_kill` must not have returned for it.
pub unsafe fn tox_ref<'a>(tox: *const Tox) -> Option<Entered<'a>> {
    // SAFETY: the caller's contract.
    unsafe { tox.cast::<Instance>().as_ref() }.and_then(Instance::enter)
}

/// What `tox_kill` does: refuses new calls, waits for the calls in progress on other
/// threads (their callbacks included), then frees the instance. From inside one of the
/// instance's own callbacks it only marks the instance, and the `tox_iterate` running them
/// frees it when they are done ([`finish_kill`]).
///
/// # Safety
/// `tox` comes from `tox_new`, is not NULL and is not killed twice.
pub unsafe fn kill(tox: *mut Tox) {
    let tox = tox.cast::<Instance>();
    // SAFETY: the caller's contract: alive until freed below.
    let instance = unsafe { &*tox };
    if instance.killed.swap(true, Ordering::SeqCst) {
        return;
    }
    if std::ptr::eq(IN_CALLBACKS.with(|c| c.get()), tox) {
        instance.kill_after_callbacks.store(true, Ordering::SeqCst);
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { finish_kill(tox.cast()) };
}

/// Waits for the calls still in progress, leaves the conferences and closes the friends'
/// sessions as c-toxcore's `tox_kill` does, then frees the instance.
///
/// # Safety
/// `tox` comes from `tox_new`, is marked killed, and the caller holds no [`Entered`] of it.
pub unsafe fn finish_kill(tox: *mut Tox) {
    let tox = tox.cast::<Instance>();
    // SAFETY: alive until freed below.
    let instance = unsafe { &*tox };
    // A ToxAV session still alive (toxav.h asks for it to be killed first) must not reach
    // the instance from now on; marked before the wait, which then covers a session call
    // that got in (av/session.rs).
    let link = instance.lock().av.take_link();
    if let Some(link) = link {
        link.tox_killed();
    }
    while instance.calls.load(Ordering::SeqCst) > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    {
        let mut state = instance.lock();
        let now = state.now();
        // c-toxcore's `kill_groupchats`: every conference is left as for a restart, so its
        // peers keep us as an offline peer and take us back when we rejoin. Sent before
        // the sessions close below, which would drop it.
        state.node.conference_close_all(now);
        state.flush();
        // c-toxcore's `kill_net_crypto` ends every session with a kill packet, so friends
        // see us offline at once (and a restarted instance is not held off by the session
        // its friends still keep for the old one). The dying node closes each friend's
        // session by forgetting the friend (an OFFLINE packet, then the kill); the profile
        // was taken before, if the client wanted it.
        for friend in state.node.friends() {
            let _ = state.node.delete_friend(now, friend);
        }
        state.flush();
    }
    // SAFETY: came from Box::into_raw in tox_new; no call holds it any more.
    drop(unsafe { Box::from_raw(tox) });
}
