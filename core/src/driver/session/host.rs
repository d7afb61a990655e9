//! A node as the CLI sees it: one net_crypto [`Endpoint`] plus, per session, the chat
//! messages and the streamed file transfers riding on it — still sans-IO.
//!
//! The endpoint knows nothing about files and the file layer nothing about routing; this
//! type is the glue the socket driver ([`super::run`]) and the commands talk to. Data flows:
//! a datagram (with `now`) enters [`Host::handle_datagram`]; lossless payloads with a file
//! id (80/81/82) go to that session's [`FileStreams`], chat messages (id 64) and everything
//! that happened become [`HostEvent`]s; then every established session's file layer is
//! topped up to its send budget (transport.md §3.9). Datagrams leave through
//! [`Host::poll_transmit`], the next deadline through [`Host::poll_timeout`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{Seek, Write};
use std::net::SocketAddr;

use rustox_file_transfer::stream::{FileStreams, Source, StreamError, StreamEvent};

use super::hashing_writer::{DigestSlot, HashingWriter};
use rustox_file_transfer::{FileControl, FileKind};
use rustox_net_crypto::crypto::{CryptoRng, KeyPair, PublicKey};
use rustox_net_crypto::{
    CloseReason, ConnectError, ConnectionEvent, ConnectionId, ConnectionStatus, Endpoint,
    EndpointConfig, EndpointEvent, SendError, Timestamp, Transmit, TransportConfig, TransportStats,
};

/// Messenger's `PACKET_ID_MESSAGE` (protocol.md §3.1): a chat message, text after the id.
pub const PACKET_ID_MESSAGE: u8 = 64;
/// The file-transfer packet ids (protocol.md §3.2): send request, control, data.
const FILE_PACKET_IDS: std::ops::RangeInclusive<u8> = 80..=82;
/// The longest chat message text: a lossless payload is at most 1373 bytes, one is the id.
pub const MAX_MESSAGE_LEN: usize = 1372;

/// What happened on a node.
#[derive(Debug)]
pub enum HostEvent {
    /// A peer opened a session to us.
    Incoming {
        /// The session.
        id: ConnectionId,
        /// The peer's long-term key.
        peer: PublicKey,
        /// Where it came from.
        addr: SocketAddr,
    },
    /// A session is up: messages and files may flow.
    Established(ConnectionId),
    /// A chat message (its text bytes, not necessarily UTF-8).
    Message(ConnectionId, Vec<u8>),
    /// The peer offers a file; accept it with [`Host::accept_file`].
    FileOffered(FileOffer),
    /// The peer acknowledged every byte of a file we sent.
    FileSent {
        /// The session.
        id: ConnectionId,
        /// The transfer's number.
        file: u32,
        /// Bytes sent.
        bytes: u64,
    },
    /// A file arrived whole (and, when asked, its SHA-256 matched its file id).
    FileReceived {
        /// The session.
        id: ConnectionId,
        /// The transfer's number.
        file: u32,
        /// Bytes written.
        bytes: u64,
        /// True when the SHA-256 was checked.
        verified: bool,
    },
    /// A transfer failed or the peer cancelled it.
    FileFailed {
        /// The session.
        id: ConnectionId,
        /// The transfer's number.
        file: u32,
        /// Why, in words.
        reason: String,
    },
    /// The session is over.
    Closed(ConnectionId, CloseReason),
}

/// A file the peer offers.
#[derive(Debug, Clone)]
pub struct FileOffer {
    /// The session.
    pub id: ConnectionId,
    /// The transfer's number.
    pub file: u32,
    /// Announced size (`u64::MAX` when unknown).
    pub size: u64,
    /// Announced name (untrusted bytes).
    pub name: Vec<u8>,
    /// The file id, which this CLI's senders set to the content's SHA-256.
    pub file_id: [u8; 32],
}

/// A file ready to offer: its content, size and SHA-256 (the file id receivers verify).
pub struct PreparedFile {
    /// The content, read as chunks are requested.
    pub source: Box<dyn Source>,
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256.
    pub sha256: [u8; 32],
}

impl PreparedFile {
    /// A file on disk, hashed from its start (see [`sha256_of_file`]) and rewound.
    pub fn hash_file(file: std::fs::File) -> std::io::Result<Self> {
        use std::io::{Seek, SeekFrom};
        let (size, sha256) = sha256_of_file(&file)?;
        let mut source = file;
        source.seek(SeekFrom::Start(0))?;
        Ok(PreparedFile {
            source: Box::new(std::io::BufReader::with_capacity(256 * 1024, source)),
            size,
            sha256,
        })
    }
}

/// The size and SHA-256 of a file from its start, reading and hashing overlapped: a thread
/// reads 1 MiB blocks while this one hashes the previous ones. A sender cannot offer a file
/// before its SHA-256 (the file id) is known, so this pass is all of the wait before the
/// first byte leaves; on one core's worth of SHA-256 (~1.9 GB/s here) the page-cache copies
/// of the reads are what the overlap hides. The file's cursor is left wherever it ends.
pub fn sha256_of_file(file: &std::fs::File) -> std::io::Result<(u64, [u8; 32])> {
    use sha2::{Digest, Sha256};
    use std::io::{Read, Seek, SeekFrom};
    const BLOCK: usize = 1 << 20;
    const BLOCKS_IN_FLIGHT: usize = 4;
    let mut reader = file.try_clone()?;
    reader.seek(SeekFrom::Start(0))?;
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(BLOCKS_IN_FLIGHT);
    let (empty_tx, empty_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(BLOCKS_IN_FLIGHT);
    for _ in 0..BLOCKS_IN_FLIGHT {
        empty_tx.send(vec![0; BLOCK]).expect("room for every block");
    }
    let read = std::thread::Builder::new()
        .name("rustox-hash-reader".into())
        .spawn(move || -> std::io::Result<()> {
            while let Ok(mut block) = empty_rx.recv() {
                block.resize(BLOCK, 0);
                let mut filled = 0;
                while filled < BLOCK {
                    match reader.read(&mut block[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                block.truncate(filled);
                let last = filled < BLOCK;
                if full_tx.send(block).is_err() || last {
                    return Ok(());
                }
            }
            Ok(())
        })?;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    for block in full_rx {
        hasher.update(&block);
        size += block.len() as u64;
        // The reader may already be done; then the block is simply dropped.
        let _ = empty_tx.send(block);
    }
    read.join()
        .map_err(|_| std::io::Error::other("the hash reader thread panicked"))??;
    Ok((size, hasher.finalize().into()))
}

/// Why a host call was refused.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// No such session.
    #[error("no such session")]
    UnknownSession,
    /// The endpoint refused to dial.
    #[error("cannot connect")]
    Connect(#[from] ConnectError),
    /// The session refused the payload.
    #[error("cannot send")]
    Send(#[from] SendError),
    /// The message does not fit one packet.
    #[error("message longer than {MAX_MESSAGE_LEN} bytes")]
    MessageTooLong,
    /// The file layer refused.
    #[error(transparent)]
    Stream(#[from] rustox_file_transfer::stream::StreamError),
}

/// One session's application state.
#[derive(Default)]
struct SessionState {
    files: FileStreams,
    /// The file id of each offer not yet accepted or refused (at most 256: one per slot).
    offered: HashMap<u32, [u8; 32]>,
    /// Each file being received: where its writer leaves the SHA-256, and the id it must
    /// equal.
    receiving: HashMap<u32, (DigestSlot, [u8; 32])>,
}

/// A node: endpoint, sessions, their files. See the module docs.
pub struct Host {
    endpoint: Endpoint,
    sessions: BTreeMap<ConnectionId, SessionState>,
    events: VecDeque<HostEvent>,
    io: IoCounters,
}

/// What the driver's socket refused or dropped: a failed send of one datagram, or a
/// datagram no answer could ever reach, is counted here and the node carries on.
#[derive(Debug, Clone, Default)]
pub struct IoCounters {
    /// Datagrams the OS refused to send.
    pub send_errors: u64,
    /// The latest refusal: the destination and what the OS said.
    pub last_send_error: Option<(SocketAddr, String)>,
    /// Datagrams dropped on arrival because they came from UDP port 0, which no reply can
    /// reach (a spoofed or broken source; answering one made the OS refuse the send).
    pub from_port_zero: u64,
}

impl Host {
    /// A node with identity `keys`. The same key pair serves as the DHT key, so a peer
    /// needs only one key to dial us directly (there is no DHT lookup on this path).
    /// `accept_all` lets any peer open a session (what `rustox recv` does).
    pub fn new(
        now: Timestamp,
        keys: KeyPair,
        transport: TransportConfig,
        accept_all: bool,
        rng: Box<dyn CryptoRng + Send>,
    ) -> Self {
        let config = EndpointConfig {
            transport,
            accept_all,
        };
        Host {
            endpoint: Endpoint::new(now, keys.clone(), keys, config, rng),
            sessions: BTreeMap::new(),
            events: VecDeque::new(),
            io: IoCounters::default(),
        }
    }

    /// Dial a peer whose (single) key is `peer`.
    pub fn connect(
        &mut self,
        now: Timestamp,
        addr: SocketAddr,
        peer: PublicKey,
    ) -> Result<ConnectionId, HostError> {
        let id = self.endpoint.connect(now, addr, peer, peer)?;
        self.sessions.insert(id, SessionState::default());
        Ok(id)
    }

    /// Let `peer` open sessions to us even when not accepting everyone.
    pub fn allow_peer(&mut self, peer: PublicKey) {
        self.endpoint.allow_peer(peer);
    }

    /// Send a chat message.
    pub fn send_message(
        &mut self,
        now: Timestamp,
        id: ConnectionId,
        text: &[u8],
    ) -> Result<(), HostError> {
        if text.len() > MAX_MESSAGE_LEN {
            return Err(HostError::MessageTooLong);
        }
        let conn = self
            .endpoint
            .connection_mut(id)
            .ok_or(HostError::UnknownSession)?;
        let mut payload = Vec::with_capacity(text.len() + 1);
        payload.push(PACKET_ID_MESSAGE);
        payload.extend_from_slice(text);
        conn.send_lossless(now, &payload)?;
        Ok(())
    }

    /// Offer a file of `size` bytes whose SHA-256 the caller computed beforehand — before
    /// the session, ideally: hashing a large file inside the event loop stalls the session
    /// for as long as it takes (≈ 1 s per GiB), which the transport then reads as a huge
    /// RTT.
    pub fn send_file(
        &mut self,
        now: Timestamp,
        id: ConnectionId,
        file: PreparedFile,
        name: &[u8],
    ) -> Result<u32, HostError> {
        let (conn, state) = self.session(id)?;
        let number = state.files.send_with_id(
            now,
            conn,
            FileKind::Data,
            file.size,
            file.sha256,
            file.source,
            name,
        )?;
        self.after_input(now);
        Ok(number)
    }

    /// Accept an offered file into `sink`, checking its SHA-256 against the file id. The
    /// sink is written, and the bytes hashed, on a thread of its own (hashing_writer.rs), so
    /// the disk and the hash do not slow the session's event loop.
    pub fn accept_file(
        &mut self,
        now: Timestamp,
        id: ConnectionId,
        file: u32,
        sink: impl Write + Seek + Send + 'static,
    ) -> Result<(), HostError> {
        let (conn, state) = self.session(id)?;
        let expected = *state
            .offered
            .get(&file)
            .ok_or(StreamError::NotOffered(file))?;
        let writer = HashingWriter::new(sink).map_err(StreamError::Io)?;
        let digest = writer.digest_slot();
        // The stream layer does not hash: the writer does, off this thread.
        state
            .files
            .accept(now, conn, file, Box::new(writer), false)?;
        state.offered.remove(&file);
        state.receiving.insert(file, (digest, expected));
        Ok(())
    }

    /// Refuse an offer or stop a transfer.
    pub fn cancel_file(
        &mut self,
        now: Timestamp,
        id: ConnectionId,
        file: u32,
    ) -> Result<(), HostError> {
        let (conn, state) = self.session(id)?;
        state.offered.remove(&file);
        state.receiving.remove(&file);
        state.files.cancel(now, conn, file)?;
        Ok(())
    }

    /// Bytes of a transfer done so far (sent and acknowledged, or received).
    pub fn file_progress(&mut self, id: ConnectionId, file: u32) -> Option<u64> {
        let state = self.sessions.get_mut(&id)?;
        state
            .files
            .transfers()
            .transfer(file)
            .map(|t| t.transferred)
    }

    /// Close a session (a kill packet goes to the peer when it was up).
    pub fn close(&mut self, now: Timestamp, id: ConnectionId) {
        if let Some(conn) = self.endpoint.connection_mut(id) {
            conn.kill(now);
        }
    }

    /// The transport's statistics of a session.
    pub fn stats(&self, id: ConnectionId) -> Option<TransportStats> {
        self.endpoint.connection(id).map(|c| c.transport().stats())
    }

    /// Whether a session is up.
    pub fn is_established(&self, id: ConnectionId) -> bool {
        self.endpoint
            .connection(id)
            .is_some_and(|c| c.status() == ConnectionStatus::Established)
    }

    /// A received datagram. Datagrams that are not net_crypto or fail its checks are the
    /// endpoint's to count; a node on the open Internet gets plenty of them. One from UDP
    /// port 0 is dropped before anything reads it: no answer can reach that port.
    pub fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, datagram: &[u8]) {
        if from.port() == 0 {
            self.io.from_port_zero += 1;
            return;
        }
        let _ = self.endpoint.handle_datagram(now, from, datagram);
        self.after_input(now);
    }

    /// The OS refused to send one datagram to `to`: counted, and the node goes on (the
    /// transport resends what mattered; a peer that cannot be reached times out).
    pub fn record_send_error(&mut self, to: SocketAddr, error: &std::io::Error) {
        self.io.send_errors += 1;
        self.io.last_send_error = Some((to, error.to_string()));
    }

    /// What the driver's socket refused or dropped so far.
    pub fn io_counters(&self) -> &IoCounters {
        &self.io
    }

    /// The deadline from [`Host::poll_timeout`] passed.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.endpoint.handle_timeout(now);
        self.after_input(now);
    }

    /// The next datagram to send. When the endpoint has none, the file layer gets one more
    /// chance to fill budget that sending just opened.
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Transmit> {
        if let Some(t) = self.endpoint.poll_transmit(now) {
            return Some(t);
        }
        if self.pump_files(now) == 0 {
            return None;
        }
        self.endpoint.poll_transmit(now)
    }

    /// [`Host::poll_transmit`] appending the datagram to `out` (the send batch) and
    /// returning its destination.
    pub fn poll_transmit_into(&mut self, now: Timestamp, out: &mut Vec<u8>) -> Option<SocketAddr> {
        if let Some(to) = self.endpoint.poll_transmit_into(now, out) {
            return Some(to);
        }
        if self.pump_files(now) == 0 {
            return None;
        }
        self.endpoint.poll_transmit_into(now, out)
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<HostEvent> {
        self.events.pop_front()
    }

    /// When [`Host::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.endpoint.poll_timeout()
    }

    // ----- internals --------------------------------------------------------------------

    fn session(
        &mut self,
        id: ConnectionId,
    ) -> Result<(&mut rustox_net_crypto::Connection, &mut SessionState), HostError> {
        let conn = self
            .endpoint
            .connection_mut(id)
            .ok_or(HostError::UnknownSession)?;
        let state = self
            .sessions
            .get_mut(&id)
            .ok_or(HostError::UnknownSession)?;
        Ok((conn, state))
    }

    /// Drain the endpoint's events into the file layer and ours, then top up the files.
    fn after_input(&mut self, now: Timestamp) {
        self.drain_endpoint(now);
        self.pump_files(now);
    }

    fn drain_endpoint(&mut self, now: Timestamp) {
        while let Some(event) = self.endpoint.poll_event() {
            match event {
                EndpointEvent::Incoming {
                    id,
                    peer_real_pk,
                    addr,
                    ..
                } => {
                    self.sessions.insert(id, SessionState::default());
                    self.events.push_back(HostEvent::Incoming {
                        id,
                        peer: peer_real_pk,
                        addr,
                    });
                }
                EndpointEvent::Connection { id, event } => self.on_connection(now, id, event),
            }
        }
    }

    fn on_connection(&mut self, now: Timestamp, id: ConnectionId, event: ConnectionEvent) {
        match event {
            ConnectionEvent::Established => self.events.push_back(HostEvent::Established(id)),
            ConnectionEvent::Lossless(payload) => match payload.first() {
                Some(&PACKET_ID_MESSAGE) => self
                    .events
                    .push_back(HostEvent::Message(id, payload[1..].to_vec())),
                Some(kind) if FILE_PACKET_IDS.contains(kind) => {
                    if let Ok((conn, state)) = self.session(id) {
                        // A malformed or out-of-place file packet is the file layer's to
                        // refuse and count; the session goes on.
                        let _ = state.files.handle_packet(now, conn, &payload);
                        self.drain_streams(id);
                    }
                }
                // Other messenger packets (status, typing, ...) have no use here.
                _ => {}
            },
            ConnectionEvent::Lossy(_) => {}
            ConnectionEvent::Closed(reason) => {
                // Unfinished transfers are reported as failed, then the session is gone.
                if let Some(state) = self.sessions.get_mut(&id) {
                    state.files.friend_offline();
                }
                self.drain_streams(id);
                self.sessions.remove(&id);
                self.events.push_back(HostEvent::Closed(id, reason));
            }
        }
    }

    /// Top up every established session's file layer; returns file bytes queued.
    fn pump_files(&mut self, now: Timestamp) -> u64 {
        let mut queued = 0;
        let ids: Vec<ConnectionId> = self.sessions.keys().copied().collect();
        for id in ids {
            if !self.is_established(id) {
                continue;
            }
            if let Ok((conn, state)) = self.session(id) {
                queued += state.files.pump(now, conn);
            }
            self.drain_streams(id);
        }
        queued
    }

    fn drain_streams(&mut self, id: ConnectionId) {
        let Some(state) = self.sessions.get_mut(&id) else {
            return;
        };
        while let Some(event) = state.files.poll_event() {
            let event = match event {
                StreamEvent::Offered {
                    file,
                    size,
                    file_id,
                    name,
                    ..
                } => {
                    state.offered.insert(file, file_id);
                    HostEvent::FileOffered(FileOffer {
                        id,
                        file,
                        size,
                        name,
                        file_id,
                    })
                }
                StreamEvent::Sent { file, bytes } => HostEvent::FileSent { id, file, bytes },
                StreamEvent::Received { file, bytes, .. } => {
                    // The stream layer flushed the writer, which left the digest of the
                    // file as written.
                    match state.receiving.remove(&file) {
                        Some((digest, expected)) => {
                            let digest = *digest.lock().unwrap_or_else(|e| e.into_inner());
                            match digest {
                                Some(d) if d == expected => HostEvent::FileReceived {
                                    id,
                                    file,
                                    bytes,
                                    verified: true,
                                },
                                Some(_) => HostEvent::FileFailed {
                                    id,
                                    file,
                                    reason: StreamError::HashMismatch.to_string(),
                                },
                                None => HostEvent::FileReceived {
                                    id,
                                    file,
                                    bytes,
                                    verified: false,
                                },
                            }
                        }
                        None => HostEvent::FileReceived {
                            id,
                            file,
                            bytes,
                            verified: false,
                        },
                    }
                }
                StreamEvent::PeerControl {
                    file,
                    control: FileControl::Cancel,
                } => {
                    state.offered.remove(&file);
                    state.receiving.remove(&file);
                    HostEvent::FileFailed {
                        id,
                        file,
                        reason: "the peer cancelled the transfer".into(),
                    }
                }
                StreamEvent::Failed { file, error } => {
                    state.receiving.remove(&file);
                    HostEvent::FileFailed {
                        id,
                        file,
                        reason: error.to_string(),
                    }
                }
                StreamEvent::PeerControl { .. } | StreamEvent::Other(_) => continue,
            };
            self.events.push_back(event);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Two hosts joined in memory, in virtual time: the glue between endpoint, chat and
    //! file streams, without sockets or a runtime.

    use std::net::SocketAddr;
    use std::time::Duration;

    use rand::rngs::OsRng;
    use rustox_net_crypto::ControllerKind;

    use super::*;

    const ONE_WAY: Duration = Duration::from_millis(1);

    fn host(accept_all: bool) -> (Host, PublicKey) {
        let keys = KeyPair::generate(&mut OsRng);
        let public = keys.public;
        let config = TransportConfig {
            controller: ControllerKind::Bbr,
            ..Default::default()
        };
        let host = Host::new(Timestamp::ZERO, keys, config, accept_all, Box::new(OsRng));
        (host, public)
    }

    type React<'a> = &'a mut dyn FnMut(&mut Host, Timestamp, &HostEvent);
    /// Decides whether the wire loses a datagram: called with `true` for a → b and the
    /// datagram's bytes.
    type Loss<'a> = &'a mut dyn FnMut(bool, &[u8]) -> bool;

    /// [`run_lossy`] on a wire that loses nothing.
    fn run(
        a: &mut Host,
        b: &mut Host,
        on_a: React,
        on_b: React,
        done: impl Fn(&[HostEvent], &[HostEvent]) -> bool,
    ) -> (Vec<HostEvent>, Vec<HostEvent>) {
        run_lossy(a, b, on_a, on_b, &mut |_, _| false, done)
    }

    /// Moves datagrams both ways (1 ms one way) except those `lose` picks, lets each side
    /// react to its events, and stops when `done` holds or 60 virtual seconds pass.
    /// Returns each side's events.
    fn run_lossy(
        a: &mut Host,
        b: &mut Host,
        on_a: React,
        on_b: React,
        lose: Loss,
        done: impl Fn(&[HostEvent], &[HostEvent]) -> bool,
    ) -> (Vec<HostEvent>, Vec<HostEvent>) {
        let addr_a: SocketAddr = "10.0.0.1:1".parse().unwrap();
        let addr_b: SocketAddr = "10.0.0.2:1".parse().unwrap();
        let mut now = Timestamp::ZERO;
        let mut wire: Vec<(Timestamp, bool, Vec<u8>)> = Vec::new();
        let (mut ev_a, mut ev_b) = (Vec::new(), Vec::new());
        while now < Timestamp::from_secs(60) && !done(&ev_a, &ev_b) {
            while let Some(e) = a.poll_event() {
                on_a(a, now, &e);
                ev_a.push(e);
            }
            while let Some(e) = b.poll_event() {
                on_b(b, now, &e);
                ev_b.push(e);
            }
            while let Some(t) = a.poll_transmit(now) {
                if !lose(true, &t.payload) {
                    wire.push((now + ONE_WAY, true, t.payload));
                }
            }
            while let Some(t) = b.poll_transmit(now) {
                if !lose(false, &t.payload) {
                    wire.push((now + ONE_WAY, false, t.payload));
                }
            }
            let next = [
                wire.iter().map(|(t, _, _)| *t).min(),
                a.poll_timeout(),
                b.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(now + ONE_WAY);
            now = next.max(now);
            let (due, rest): (Vec<_>, Vec<_>) = wire.into_iter().partition(|(t, _, _)| *t <= now);
            wire = rest;
            for (_, to_b, bytes) in due {
                if to_b {
                    b.handle_datagram(now, addr_a, &bytes);
                } else {
                    a.handle_datagram(now, addr_b, &bytes);
                }
            }
            a.handle_timeout(now);
            b.handle_timeout(now);
        }
        (ev_a, ev_b)
    }

    #[test]
    fn hash_file_covers_every_block_and_rewinds() {
        use sha2::{Digest, Sha256};
        use std::io::Read;
        let dir = std::env::temp_dir().join(format!("rustox-hash-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for len in [0usize, 1, 1 << 20, 2 << 20, (3 << 20) + 12_345] {
            let content: Vec<u8> = (0..len).map(|i| (i * 31 + i / 977) as u8).collect();
            let path = dir.join(format!("f{len}"));
            std::fs::write(&path, &content).unwrap();
            let mut prepared =
                PreparedFile::hash_file(std::fs::File::open(&path).unwrap()).unwrap();
            assert_eq!(prepared.size, len as u64, "length {len}");
            assert_eq!(prepared.sha256, <[u8; 32]>::from(Sha256::digest(&content)));
            let mut back = Vec::new();
            prepared.source.read_to_end(&mut back).unwrap();
            assert!(
                back == content,
                "length {len}: the source does not read back from 0"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_message_and_a_verified_file_cross_between_two_hosts() {
        let (mut a, _) = host(false);
        let (mut b, b_key) = host(true);
        let id = a
            .connect(Timestamp::ZERO, "10.0.0.2:1".parse().unwrap(), b_key)
            .unwrap();
        let content: Vec<u8> = (0..300_000u32)
            .map(|i| (i % 251) as u8 ^ (i >> 11) as u8)
            .collect();
        let path = std::env::temp_dir().join(format!("rustox-host-test-{}", std::process::id()));
        let source_path = path.with_extension("src");
        std::fs::write(&source_path, &content).unwrap();
        let mut on_a = |a: &mut Host, now: Timestamp, e: &HostEvent| {
            if matches!(e, HostEvent::Established(x) if *x == id) {
                a.send_message(now, id, b"hello").unwrap();
                let file =
                    PreparedFile::hash_file(std::fs::File::open(&source_path).unwrap()).unwrap();
                a.send_file(now, id, file, b"x.bin").unwrap();
            }
        };
        let sink_path = path.clone();
        let mut on_b = |b: &mut Host, now: Timestamp, e: &HostEvent| {
            if let HostEvent::FileOffered(offer) = e {
                assert_eq!(offer.size, 300_000);
                assert_eq!(offer.name, b"x.bin");
                let sink = std::fs::File::create(&sink_path).unwrap();
                b.accept_file(now, offer.id, offer.file, sink).unwrap();
            }
        };
        let (ev_a, ev_b) = run(&mut a, &mut b, &mut on_a, &mut on_b, |ev_a, ev_b| {
            ev_a.iter().any(|e| matches!(e, HostEvent::FileSent { .. }))
                && ev_b
                    .iter()
                    .any(|e| matches!(e, HostEvent::FileReceived { .. }))
        });
        let received = std::fs::read(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&source_path);
        assert!(ev_b
            .iter()
            .any(|e| matches!(e, HostEvent::Message(_, text) if text == b"hello")));
        assert!(ev_b.iter().any(|e| matches!(
            e,
            HostEvent::FileReceived {
                bytes: 300_000,
                verified: true,
                ..
            }
        )));
        assert!(ev_a
            .iter()
            .any(|e| matches!(e, HostEvent::FileSent { bytes: 300_000, .. })));
        assert!(received == content, "the file arrived altered");
    }

    /// A cookie request from UDP port 0 is dropped unread and counted: answering it would
    /// only make the OS refuse the send. From a real port the same request is answered.
    #[test]
    fn a_datagram_from_port_zero_is_dropped_and_counted() {
        let (mut a, _) = host(false);
        let (mut b, b_key) = host(true);
        a.connect(Timestamp::ZERO, "10.0.0.2:1".parse().unwrap(), b_key)
            .unwrap();
        let request = a.poll_transmit(Timestamp::ZERO).expect("a cookie request");
        b.handle_datagram(
            Timestamp::ZERO,
            "10.0.0.1:0".parse().unwrap(),
            &request.payload,
        );
        assert!(b.poll_transmit(Timestamp::ZERO).is_none());
        assert_eq!(b.io_counters().from_port_zero, 1);
        b.handle_datagram(
            Timestamp::ZERO,
            "10.0.0.1:9".parse().unwrap(),
            &request.payload,
        );
        let reply = b.poll_transmit(Timestamp::ZERO).expect("a cookie response");
        assert_eq!(reply.destination, "10.0.0.1:9".parse().unwrap());
        // A refused send is recorded for the application to report, not raised.
        let refused = std::io::Error::from_raw_os_error(101);
        b.record_send_error(reply.destination, &refused);
        assert_eq!(b.io_counters().send_errors, 1);
        assert_eq!(
            b.io_counters().last_send_error.as_ref().map(|(to, _)| *to),
            Some(reply.destination)
        );
    }

    #[test]
    fn a_peer_that_is_not_allowed_never_gets_a_session() {
        let (mut a, _) = host(false);
        let (mut b, b_key) = host(false);
        a.connect(Timestamp::ZERO, "10.0.0.2:1".parse().unwrap(), b_key)
            .unwrap();
        let (ev_a, ev_b) = run(
            &mut a,
            &mut b,
            &mut |_, _, _| {},
            &mut |_, _, _| {},
            |ev_a, _| ev_a.iter().any(|e| matches!(e, HostEvent::Closed(..))),
        );
        assert!(ev_b.is_empty(), "b saw {ev_b:?}");
        assert!(ev_a
            .iter()
            .any(|e| matches!(e, HostEvent::Closed(_, CloseReason::Timeout))));
    }

    /// Issue #10: a sender that closes the session on `FileSent` (as `rustox send` and the
    /// demo do) must not strand the receiver with a hole. The wire loses one full data
    /// datagram a few packets before the file's last one, and its first repairs; the
    /// receiver then holds the last packet while the lost one is still missing, and its
    /// request packets (which name the hole) acknowledge the last one. `FileSent` must wait
    /// for the hole: the file layer asks net_crypto whether the file's last packet is
    /// delivered, which holds only once every packet before it is too (protocol.md §2.8).
    /// Each of the last eight full chunks is lost in turn.
    #[test]
    fn file_sent_waits_until_the_receiver_has_every_packet() {
        const SIZE: usize = 300_000;
        // 218 full chunks, then one of 1122 bytes.
        let full_chunks = SIZE / 1371;
        let dir = std::env::temp_dir().join(format!("rustox-host-hole-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let content: Vec<u8> = (0..SIZE as u32).map(|i| (i * 7 + i / 4099) as u8).collect();
        let source = dir.join("source");
        std::fs::write(&source, &content).unwrap();
        let sink = dir.join("sink");
        let mut failures = Vec::new();
        for before_end in 0..8 {
            let lost = full_chunks - before_end;
            let (ev_a, ev_b) = send_closing_on_file_sent(&source, &sink, lost);
            let received = std::fs::read(&sink).unwrap_or_default();
            let sent = ev_a.iter().find(|e| ended(e));
            let got = ev_b.iter().find(|e| ended(e));
            let whole = matches!(sent, Some(HostEvent::FileSent { bytes, .. }) if *bytes == SIZE as u64)
                && matches!(got, Some(HostEvent::FileReceived { verified: true, .. }))
                && received == content;
            if !whole {
                failures.push(format!(
                    "full chunk {lost} of {full_chunks} lost: the sender ended with {sent:?}, \
                     the receiver with {got:?}"
                ));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(failures.is_empty(), "{failures:#?}");
    }

    /// Repairs lost after the file's last chunk (see [`send_closing_on_file_sent`]).
    const REPAIRS_LOST: usize = 3;

    /// The first event that ends a side's part in a transfer.
    fn ended(e: &HostEvent) -> bool {
        matches!(
            e,
            HostEvent::FileSent { .. }
                | HostEvent::FileReceived { .. }
                | HostEvent::FileFailed { .. }
                | HostEvent::Closed(..)
        )
    }

    /// `source` from a to b into `sink`, a closing the session on `FileSent`. The wire
    /// loses the `lost`-th full data datagram a → b (counting from 1), then, once the
    /// file's last (short) chunk has passed, the first [`REPAIRS_LOST`] full datagrams after
    /// it: the repairs of the hole, so the receiver holds the last chunk without the lost
    /// one for several round trips, whatever the transport's repair timing. Panics when
    /// the wire lost nothing.
    fn send_closing_on_file_sent(
        source: &std::path::Path,
        sink: &std::path::Path,
        lost: usize,
    ) -> (Vec<HostEvent>, Vec<HostEvent>) {
        /// Only a FILE_DATA datagram with a full chunk (1371 file bytes) is this large;
        /// handshakes, the offer, requests and acknowledgements are far smaller.
        const FULL_CHUNK_DATAGRAM: usize = 1371;
        /// The last chunk (1122 file bytes) makes the only datagram between these sizes.
        const LAST_CHUNK_DATAGRAM: std::ops::Range<usize> = 1122..FULL_CHUNK_DATAGRAM;
        let (mut a, _) = host(false);
        let (mut b, b_key) = host(true);
        let id = a
            .connect(Timestamp::ZERO, "10.0.0.2:1".parse().unwrap(), b_key)
            .unwrap();
        let mut on_a = |a: &mut Host, now: Timestamp, e: &HostEvent| match e {
            HostEvent::Established(x) if *x == id => {
                let file = PreparedFile::hash_file(std::fs::File::open(source).unwrap()).unwrap();
                a.send_file(now, id, file, b"x.bin").unwrap();
            }
            // What `rustox send` does: the file is delivered, so the session can go.
            HostEvent::FileSent { .. } => a.close(now, id),
            _ => {}
        };
        let mut on_b = |b: &mut Host, now: Timestamp, e: &HostEvent| {
            if let HostEvent::FileOffered(offer) = e {
                let file = std::fs::File::create(sink).unwrap();
                b.accept_file(now, offer.id, offer.file, file).unwrap();
            }
        };
        let mut full_datagrams = 0;
        let mut last_chunk_passed = false;
        let mut repairs_lost = 0;
        let mut lose = |to_b: bool, datagram: &[u8]| {
            if !to_b {
                return false;
            }
            if LAST_CHUNK_DATAGRAM.contains(&datagram.len()) {
                last_chunk_passed = true;
            }
            if datagram.len() < FULL_CHUNK_DATAGRAM {
                return false;
            }
            full_datagrams += 1;
            if last_chunk_passed && repairs_lost < REPAIRS_LOST {
                repairs_lost += 1;
                return true;
            }
            full_datagrams == lost
        };
        let events = run_lossy(
            &mut a,
            &mut b,
            &mut on_a,
            &mut on_b,
            &mut lose,
            |ev_a, ev_b| ev_a.iter().any(ended) && ev_b.iter().any(ended),
        );
        assert!(full_datagrams >= lost, "the wire lost no data datagram");
        assert!(last_chunk_passed, "the last chunk never left");
        events
    }
}
