//! File transfers in the simulator: a host running a net_crypto `Endpoint` and one
//! friend's `FileStreams`, driven the way core will drive them (every input with `now`,
//! then pump the file layer within the session's send budget). Shared by the
//! `file_*.rs` scenario tests and the `file-bench` binary.

use std::collections::HashMap;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rustox_file_transfer::stream::{FileStreams, StreamEvent};
use rustox_file_transfer::{FileControl, FileKind};
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::{
    ConnectionEvent, ConnectionId, ConnectionStatus, ControllerKind, Endpoint, EndpointConfig,
    EndpointEvent, Timestamp, TransportConfig,
};
use sha2::{Digest, Sha256};

use crate::metrics::{jain_index, percentile};
use crate::netcrypto::poll_udp_transmit;
use crate::node::SimNode;
use crate::profiles::Profile;
use crate::sim::{NodeId, SimError, Simulator};
use crate::transfer::host_addr;

/// Chat message id (docs/protocol.md §3.1, MESSAGE = 64).
const PACKET_ID_MESSAGE: u8 = 64;
/// Wait after a session closes before dialling again.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);
/// Silence after which a host declares its friend offline and drops the session — the
/// simulator's stand-in for friend_connection's ping timeout (docs/protocol.md §4), shortened so
/// that a 30 s outage reliably breaks the session as it would on a real path where NAT
/// mappings and relays also time out.
const FRIEND_TIMEOUT: Duration = Duration::from_secs(10);

// ------------------------------------------------------------------ content

/// SplitMix64 (Steele, Lea, Flood 2014).
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A file's content: byte `i` is a function of `key` and `i`, so no memory is needed to
/// send 64 MiB and any offset can be read directly.
#[derive(Debug, Clone)]
pub struct PatternSource {
    key: u64,
    size: u64,
    pos: u64,
}

impl PatternSource {
    pub fn new(key: u64, size: u64) -> Self {
        PatternSource { key, size, pos: 0 }
    }

    /// SHA-256 of the whole content (the file id the streams layer announces).
    pub fn sha256(&self) -> [u8; 32] {
        let mut s = self.clone();
        s.pos = 0;
        let mut h = Sha256::new();
        let mut buf = vec![0; 1 << 16];
        loop {
            let n = s.read(&mut buf).expect("pattern reads cannot fail");
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        h.finalize().into()
    }
}

impl Read for PatternSource {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (self.size.saturating_sub(self.pos)).min(buf.len() as u64) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            let off = self.pos + i as u64;
            *b = splitmix64(self.key ^ (off / 8)).to_le_bytes()[(off % 8) as usize];
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for PatternSource {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.pos = match pos {
            SeekFrom::Start(p) => p,
            SeekFrom::End(d) => self.size.saturating_add_signed(d),
            SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
        };
        Ok(self.pos)
    }
}

/// An in-memory file both the receiver's streams layer and the test can see.
#[derive(Debug, Clone, Default)]
pub struct SharedFile {
    data: Arc<Mutex<Vec<u8>>>,
    pos: u64,
}

impl SharedFile {
    pub fn len(&self) -> u64 {
        self.data.lock().unwrap().len() as u64
    }
    pub fn sha256(&self) -> [u8; 32] {
        Sha256::digest(&*self.data.lock().unwrap()).into()
    }
}

impl Read for SharedFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let data = self.data.lock().unwrap();
        let start = (self.pos as usize).min(data.len());
        let n = (data.len() - start).min(buf.len());
        buf[..n].copy_from_slice(&data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Write for SharedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut data = self.data.lock().unwrap();
        let start = self.pos as usize;
        if data.len() < start + buf.len() {
            data.resize(start + buf.len(), 0);
        }
        data[start..start + buf.len()].copy_from_slice(buf);
        self.pos += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for SharedFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let len = self.len();
        self.pos = match pos {
            SeekFrom::Start(p) => p,
            SeekFrom::End(d) => len.saturating_add_signed(d),
            SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
        };
        Ok(self.pos)
    }
}

// ------------------------------------------------------------------ the host

/// Something a scenario makes a host do at a given time.
#[derive(Debug, Clone, Copy)]
pub enum FileAction {
    /// Apply a control to the transfer of the `index`-th file (in offer order).
    Control(usize, FileControl),
}

/// A file the sender offers.
#[derive(Debug, Clone)]
struct Offer {
    source: PatternSource,
    file_id: [u8; 32],
    /// API number in the current session, once offered.
    number: Option<u32>,
}

/// One host. The sender dials, offers its files once the session is up (again after a
/// reconnection) and sends a chat message every `chat_interval`; the receiver accepts
/// every offer, resuming from what it already holds.
pub struct FileHost {
    endpoint: Endpoint,
    real_pk: PublicKey,
    dht_pk: PublicKey,
    session: Option<ConnectionId>,
    streams: FileStreams,
    peer: Option<(SocketAddr, PublicKey, PublicKey)>,
    reconnect_at: Option<Timestamp>,
    /// Last datagram from the peer.
    last_heard: Timestamp,
    offers: Vec<Offer>,
    chat_interval: Option<Duration>,
    next_chat: Option<Timestamp>,
    script: Vec<(Timestamp, FileAction)>,
    /// First FILE_DATA queued (sender).
    pub first_chunk_at: Option<Timestamp>,
    /// When each offer was accepted (receiver), by file id.
    pub accepted_at: HashMap<[u8; 32], Timestamp>,
    /// Files received (receiver), by file id.
    pub files: HashMap<[u8; 32], SharedFile>,
    /// (time, cumulative bytes) per file id (receiver), sampled at every delivery.
    pub progress: HashMap<[u8; 32], Vec<(Timestamp, u64)>>,
    /// Completed and verified files (receiver): id and time.
    pub received: Vec<([u8; 32], Timestamp)>,
    /// Fully acknowledged sends (sender).
    pub sent: Vec<([u8; 32], Timestamp)>,
    /// Peer controls seen.
    pub peer_controls: Vec<(Timestamp, FileControl)>,
    /// Chat latencies in µs (receiver).
    pub chat_latencies: Vec<u32>,
    /// Incoming API number → file id, in the current session (receiver).
    incoming_ids: HashMap<u32, [u8; 32]>,
    /// Sessions that came up.
    pub sessions_established: u32,
    /// Resumptions (receiver): offset accepted from.
    pub resumed_from: Vec<u64>,
    failures: Vec<String>,
}

impl FileHost {
    pub fn new(now: Timestamp, mut rng: ChaCha8Rng, controller: ControllerKind) -> Self {
        let real = KeyPair::generate(&mut rng);
        let dht = KeyPair::generate(&mut rng);
        let (real_pk, dht_pk) = (real.public, dht.public);
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let config = EndpointConfig {
            transport: TransportConfig {
                controller,
                ..Default::default()
            },
            accept_all: false,
        };
        let endpoint = Endpoint::new(
            now,
            real,
            dht,
            config,
            Box::new(ChaCha8Rng::from_seed(seed)),
        );
        FileHost {
            endpoint,
            real_pk,
            dht_pk,
            session: None,
            streams: FileStreams::new(),
            peer: None,
            reconnect_at: None,
            last_heard: now,
            offers: Vec::new(),
            chat_interval: None,
            next_chat: None,
            script: Vec::new(),
            first_chunk_at: None,
            accepted_at: HashMap::new(),
            files: HashMap::new(),
            progress: HashMap::new(),
            received: Vec::new(),
            sent: Vec::new(),
            peer_controls: Vec::new(),
            chat_latencies: Vec::new(),
            sessions_established: 0,
            resumed_from: Vec::new(),
            incoming_ids: HashMap::new(),
            failures: Vec::new(),
        }
    }

    /// The components of `poll_timeout`, for diagnosing stalls.
    pub fn debug_timeouts(&mut self) -> String {
        let budget = self
            .session
            .and_then(|id| self.endpoint.connection_mut(id))
            .map(|c| c.send_budget(Timestamp::MAX));
        format!(
            "endpoint {:?} reconnect {:?} script {:?} chat {:?} up {} session {:?} budget {:?}",
            self.endpoint.poll_timeout(),
            self.reconnect_at,
            self.script.first().map(|(t, _)| *t),
            self.next_chat,
            self.connection_up(),
            self.session,
            budget,
        )
    }

    /// The file layer's counters (chunks requested and sent, packets rejected, ...).
    pub fn file_stats(&self) -> rustox_file_transfer::FileStats {
        self.streams.stats()
    }

    pub fn failures(&self) -> &[String] {
        &self.failures
    }

    /// The session's transport statistics.
    pub fn transport_stats(&self) -> Option<rustox_net_crypto::TransportStats> {
        self.endpoint
            .connection(self.session?)
            .map(|c| c.transport().stats())
    }

    fn dial(&mut self, now: Timestamp) {
        if let Some((addr, real, dht)) = self.peer {
            match self.endpoint.connect(now, addr, real, dht) {
                Ok(id) => {
                    self.session = Some(id);
                    self.last_heard = now;
                }
                Err(e) => self.failures.push(format!("connect: {e}")),
            }
        }
    }

    fn connection_up(&self) -> bool {
        self.session
            .and_then(|id| self.endpoint.connection(id))
            .is_some_and(|c| c.status() == ConnectionStatus::Established)
    }

    fn offer_all(&mut self, now: Timestamp) {
        let Some(id) = self.session else { return };
        for i in 0..self.offers.len() {
            if self.sent.iter().any(|(f, _)| *f == self.offers[i].file_id) {
                continue;
            }
            let Some(conn) = self.endpoint.connection_mut(id) else {
                return;
            };
            let offer = &mut self.offers[i];
            let mut source = offer.source.clone();
            source.pos = 0;
            match self.streams.send_with_id(
                now,
                conn,
                FileKind::Data,
                offer.source.size,
                offer.file_id,
                Box::new(source),
                b"file.bin",
            ) {
                Ok(n) => offer.number = Some(n),
                Err(e) => self.failures.push(format!("offer: {e}")),
            }
        }
    }

    /// Drain the endpoint, feed the file layer, run the scenario, send within budget.
    fn pump(&mut self, now: Timestamp) {
        while let Some(event) = self.endpoint.poll_event() {
            match event {
                EndpointEvent::Incoming { id, .. } => {
                    self.session = Some(id);
                    self.last_heard = now;
                }
                EndpointEvent::Connection { id, event } => self.on_connection(now, id, event),
            }
        }
        if self.session.is_some() && now >= self.last_heard + FRIEND_TIMEOUT {
            self.friend_offline(now);
        }
        if let Some(at) = self.reconnect_at {
            if now >= at && self.session.is_none() {
                self.reconnect_at = None;
                self.dial(now);
            }
        }
        while self.script.first().is_some_and(|(t, _)| *t <= now) {
            let (_, action) = self.script.remove(0);
            self.act(now, action);
        }
        if let Some(at) = self.next_chat {
            if now >= at && self.connection_up() {
                self.next_chat = self.chat_interval.map(|i| at + i);
                let mut msg = vec![PACKET_ID_MESSAGE];
                msg.extend_from_slice(&now.as_micros().to_be_bytes());
                msg.extend_from_slice(b" hello during the transfer");
                if let Some(conn) = self.session.and_then(|id| self.endpoint.connection_mut(id)) {
                    let _ = conn.send_lossless(now, &msg);
                }
            }
        }
        self.pump_files(now);
    }

    fn pump_files(&mut self, now: Timestamp) {
        let Some(id) = self.session else { return };
        let Some(conn) = self.endpoint.connection_mut(id) else {
            return;
        };
        if conn.status() != ConnectionStatus::Established {
            return;
        }
        let sent = self.streams.pump(now, conn);
        if sent > 0 {
            self.first_chunk_at.get_or_insert(now);
        }
        self.drain_stream_events(now);
    }

    fn act(&mut self, now: Timestamp, action: FileAction) {
        let FileAction::Control(index, control) = action;
        let number = self.offers.get(index).and_then(|o| o.number).or_else(|| {
            // Receiver: incoming slot `index` (the sender offers in slot order).
            Some((index as u32 + 1) << 16)
        });
        let (Some(number), Some(id)) = (number, self.session) else {
            return;
        };
        let Some(conn) = self.endpoint.connection_mut(id) else {
            return;
        };
        if let Err(e) = self.streams.transfers().control(now, conn, number, control) {
            self.failures
                .push(format!("control {control:?} on {number}: {e}"));
        }
        if control == FileControl::Cancel {
            if let Some(o) = self.offers.get_mut(index) {
                o.number = None;
            }
        }
    }

    fn on_connection(&mut self, now: Timestamp, id: ConnectionId, event: ConnectionEvent) {
        if Some(id) != self.session {
            return;
        }
        match event {
            ConnectionEvent::Established => {
                self.sessions_established += 1;
                if !self.offers.is_empty() {
                    self.offer_all(now);
                    if self.next_chat.is_none() {
                        self.next_chat = self.chat_interval.map(|_| now);
                    }
                }
            }
            ConnectionEvent::Lossless(payload) => match payload.first() {
                Some(80..=82) => {
                    let Some(conn) = self.endpoint.connection_mut(id) else {
                        return;
                    };
                    // Errors are the peer's misbehaviour; the file layer counts them.
                    let _ = self.streams.handle_packet(now, conn, &payload);
                    self.record_progress(now);
                    self.drain_stream_events(now);
                }
                Some(&PACKET_ID_MESSAGE) if payload.len() >= 9 => {
                    let mut t = [0u8; 8];
                    t.copy_from_slice(&payload[1..9]);
                    let sent = Timestamp::from_micros(u64::from_be_bytes(t));
                    let latency = (now - sent).as_micros();
                    self.chat_latencies
                        .push(u32::try_from(latency).unwrap_or(u32::MAX));
                }
                _ => {}
            },
            ConnectionEvent::Lossy(_) => {}
            ConnectionEvent::Closed(_) => self.friend_offline(now),
        }
    }

    /// The session is gone (closed, or silent for [`FRIEND_TIMEOUT`]): reset every transfer
    /// as c-toxcore does, and let the dialling side try again.
    fn friend_offline(&mut self, now: Timestamp) {
        if let Some(conn) = self.session.and_then(|id| self.endpoint.connection_mut(id)) {
            conn.kill(now);
        }
        self.streams.friend_offline();
        self.session = None;
        self.incoming_ids.clear();
        for o in &mut self.offers {
            o.number = None;
        }
        if self.peer.is_some() {
            self.reconnect_at = Some(now + RECONNECT_DELAY);
        }
        // Failures reported by friend_offline are the expected reset, not errors.
        while let Some(event) = self.streams.poll_event() {
            if !matches!(event, StreamEvent::Failed { .. }) {
                self.failures
                    .push(format!("unexpected event on reset: {event:?}"));
            }
        }
    }

    fn record_progress(&mut self, now: Timestamp) {
        for (id, file) in &self.files {
            let len = file.len();
            let p = self.progress.entry(*id).or_default();
            if p.last().map(|&(_, l)| l) != Some(len) {
                p.push((now, len));
            }
        }
    }

    fn drain_stream_events(&mut self, now: Timestamp) {
        while let Some(event) = self.streams.poll_event() {
            match event {
                StreamEvent::Offered {
                    file,
                    file_id,
                    size,
                    ..
                } => {
                    let Some(conn) = self.session.and_then(|id| self.endpoint.connection_mut(id))
                    else {
                        return;
                    };
                    let sink = self.files.entry(file_id).or_default().clone();
                    let have = sink.len();
                    let result = if have > 0 && have < size {
                        self.resumed_from.push(have);
                        self.streams.accept_from(now, conn, file, sink, have, true)
                    } else {
                        self.streams.accept(now, conn, file, Box::new(sink), true)
                    };
                    match result {
                        Ok(()) => {
                            self.accepted_at.entry(file_id).or_insert(now);
                            self.incoming_ids.insert(file, file_id);
                        }
                        Err(e) => self.failures.push(format!("accept: {e}")),
                    }
                }
                StreamEvent::Received { file, verified, .. } => {
                    match self.incoming_ids.get(&file) {
                        Some(id) if verified => self.received.push((*id, now)),
                        _ => self
                            .failures
                            .push(format!("file {file} received unverified")),
                    }
                    self.record_progress(now);
                }
                StreamEvent::Sent { file, .. } => {
                    if let Some(o) = self.offers.iter().find(|o| o.number == Some(file)) {
                        self.sent.push((o.file_id, now));
                    }
                }
                StreamEvent::PeerControl { control, .. } => {
                    self.peer_controls.push((now, control));
                }
                StreamEvent::Failed { file, error } => {
                    self.failures.push(format!("file {file}: {error}"));
                }
                StreamEvent::Other(_) => {}
            }
        }
    }
}

impl SimNode for FileHost {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, _to: SocketAddr, bytes: &[u8]) {
        if self.endpoint.handle_datagram(now, from, bytes).is_ok() {
            self.last_heard = now;
        }
        self.pump(now);
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        self.endpoint.handle_timeout(now);
        self.pump(now);
    }

    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        poll_udp_transmit(self, now, |h| &mut h.endpoint, Self::pump_files)
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        [
            self.endpoint.poll_timeout(),
            self.reconnect_at,
            self.session.map(|_| self.last_heard + FRIEND_TIMEOUT),
            self.script.first().map(|(t, _)| *t),
            self.next_chat.filter(|_| self.connection_up()),
        ]
        .into_iter()
        .flatten()
        .min()
    }
}

// ------------------------------------------------------------------ scenarios

/// What a file scenario runs.
#[derive(Debug, Clone)]
pub struct FileSpec {
    pub profile: Profile,
    pub controller: ControllerKind,
    pub seed: u64,
    /// Sizes of the files sent concurrently.
    pub files: Vec<u64>,
    /// Chat message interval during the transfer.
    pub chat_interval: Option<Duration>,
    /// Link outages (both directions), `[start, end)`.
    pub outages: Vec<(Timestamp, Timestamp)>,
    /// Scripted actions of the sender and the receiver.
    pub sender_script: Vec<(Timestamp, FileAction)>,
    pub receiver_script: Vec<(Timestamp, FileAction)>,
    /// Virtual-time limit.
    pub deadline: Timestamp,
}

impl FileSpec {
    pub fn new(profile: Profile, controller: ControllerKind, seed: u64, files: Vec<u64>) -> Self {
        let total: u64 = files.iter().sum();
        let ideal = total as f64 / profile.payload_capacity_bytes_per_sec();
        let deadline = Timestamp::ZERO
            + Duration::from_secs_f64(ideal * 10.0)
            + Duration::from_secs(60)
            + profile.rtt * 20;
        FileSpec {
            profile,
            controller,
            seed,
            files,
            chat_interval: None,
            outages: Vec::new(),
            sender_script: Vec::new(),
            receiver_script: Vec::new(),
            deadline,
        }
    }
}

/// A running scenario.
pub struct FileRun {
    pub sim: Simulator<FileHost>,
    pub sender: NodeId,
    pub receiver: NodeId,
    pub file_ids: Vec<[u8; 32]>,
    pub spec: FileSpec,
}

impl FileRun {
    /// Build the two hosts and links; the sender dials at once.
    pub fn new(spec: FileSpec) -> Self {
        match Self::try_new(spec) {
            Ok(run) => run,
            Err(e) => panic!("scenario setup failed: {e}"),
        }
    }

    fn try_new(spec: FileSpec) -> Result<Self, SimError> {
        let mut link = spec.profile.link_config();
        link.outages = spec.outages.clone();
        let mut sim: Simulator<FileHost> = Simulator::new(spec.seed, link.clone());
        let controller = spec.controller;
        let receiver = sim
            .add_node_with(vec![host_addr(2)], |rng| {
                FileHost::new(Timestamp::ZERO, rng, controller)
            })
            .ok_or_else(|| SimError::Scenario("address clash".into()))?;
        let sender = sim
            .add_node_with(vec![host_addr(1)], |rng| {
                FileHost::new(Timestamp::ZERO, rng, controller)
            })
            .ok_or_else(|| SimError::Scenario("address clash".into()))?;
        sim.connect(sender, receiver, link.clone(), link);
        let (s_pk, r_pk, r_dht) = (
            sim.node(sender).real_pk,
            sim.node(receiver).real_pk,
            sim.node(receiver).dht_pk,
        );
        let mut file_ids = Vec::new();
        let mut offers = Vec::new();
        for (i, &size) in spec.files.iter().enumerate() {
            let source = PatternSource::new(spec.seed ^ ((i as u64 + 1) * 0x1000_0001), size);
            let file_id = source.sha256();
            file_ids.push(file_id);
            offers.push(Offer {
                source,
                file_id,
                number: None,
            });
        }
        let (chat, rscript, sscript) = (
            spec.chat_interval,
            spec.receiver_script.clone(),
            spec.sender_script.clone(),
        );
        sim.with_node(receiver, |n, _| {
            n.endpoint.allow_peer(s_pk);
            n.script = rscript;
        });
        sim.with_node(sender, |n, now| {
            n.offers = offers;
            n.chat_interval = chat;
            n.script = sscript;
            n.peer = Some((host_addr(2), r_pk, r_dht));
            n.dial(now);
        });
        Ok(FileRun {
            sim,
            sender,
            receiver,
            file_ids,
            spec,
        })
    }

    /// Every file received and verified.
    pub fn all_received(&self) -> bool {
        let r = self.sim.node(self.receiver);
        self.file_ids
            .iter()
            .all(|id| r.received.iter().any(|(x, _)| x == id))
    }

    /// Run until `done` or the deadline; panics with the seed on invariant failures.
    pub fn run_until(&mut self, mut done: impl FnMut(&Self) -> bool) -> bool {
        let deadline = self.spec.deadline;
        loop {
            if done(self) {
                return true;
            }
            match self.sim.next_event_time() {
                Some(t) if t <= deadline => {
                    if let Err(e) = self.sim.step() {
                        self.sim.fail(&e);
                    }
                }
                _ => return done(self),
            }
        }
    }

    /// Like [`FileRun::run`], but a simulation failure (invariant, livelock) is returned
    /// instead of panicking, for the benchmark.
    pub fn try_run(&mut self) -> Result<bool, String> {
        let deadline = self.spec.deadline;
        loop {
            if self.all_received() {
                return Ok(true);
            }
            match self.sim.next_event_time() {
                Some(t) if t <= deadline => {
                    self.sim
                        .step()
                        .map_err(|e| format!("seed {}: {e}", self.sim.seed()))?;
                }
                _ => return Ok(self.all_received()),
            }
        }
    }

    /// Run every file to completion (or the deadline).
    pub fn run(&mut self) -> bool {
        self.run_until(|r| r.all_received())
    }

    /// Run until virtual time `t`.
    pub fn run_to(&mut self, t: Timestamp) {
        if let Err(e) = self.sim.run_until(t) {
            self.sim.fail(&e);
        }
    }

    /// Bytes of file `index` the receiver holds.
    pub fn received_bytes(&self, index: usize) -> u64 {
        self.sim
            .node(self.receiver)
            .files
            .get(&self.file_ids[index])
            .map_or(0, SharedFile::len)
    }

    /// Goodput efficiency: file bytes ÷ ((last byte − first chunk) × bottleneck rate).
    pub fn goodput_efficiency(&self) -> Option<f64> {
        let first = self.sim.node(self.sender).first_chunk_at?;
        let r = self.sim.node(self.receiver);
        let last = r.received.iter().map(|(_, t)| *t).max()?;
        let bytes: u64 = self.spec.files.iter().sum();
        let secs = (last - first).as_secs_f64();
        (secs > 0.0).then(|| bytes as f64 / (secs * self.spec.profile.rate_bytes_per_sec()))
    }

    /// MiB of file 0 delivered `after` its acceptance.
    pub fn mib_at(&self, after: Duration) -> f64 {
        let r = self.sim.node(self.receiver);
        let id = self.file_ids[0];
        let Some(&accepted) = r.accepted_at.get(&id) else {
            return 0.0;
        };
        let t = accepted + after;
        let bytes = r
            .progress
            .get(&id)
            .and_then(|p| p.iter().take_while(|(at, _)| *at <= t).last())
            .map_or(0, |&(_, b)| b);
        bytes as f64 / 1048576.0
    }

    /// 95th percentile chat latency at the receiver, ms.
    pub fn chat_p95_ms(&self) -> Option<f64> {
        let mut l = self.sim.node(self.receiver).chat_latencies.clone();
        percentile(&mut l, 0.95).map(|us| f64::from(us) / 1000.0)
    }

    /// Jain's index of the bytes each file received over the middle 80 % of the run
    /// (from the first delivery to the first completion, so all files compete throughout).
    pub fn jain_middle_80(&self) -> Option<f64> {
        let r = self.sim.node(self.receiver);
        let series: Vec<&Vec<(Timestamp, u64)>> = self
            .file_ids
            .iter()
            .map(|id| r.progress.get(id))
            .collect::<Option<_>>()?;
        let start = series.iter().filter_map(|s| s.first().map(|p| p.0)).min()?;
        let end = r.received.iter().map(|(_, t)| *t).min()?;
        let span = end - start;
        let (a, b) = (start + span / 10, start + span * 9 / 10);
        let at = |s: &Vec<(Timestamp, u64)>, t: Timestamp| {
            s.iter()
                .take_while(|(x, _)| *x <= t)
                .last()
                .map_or(0, |p| p.1)
        };
        let xs: Vec<f64> = series
            .iter()
            .map(|s| (at(s, b) - at(s, a)) as f64)
            .collect();
        Some(jain_index(&xs))
    }

    pub fn sender(&self) -> &FileHost {
        self.sim.node(self.sender)
    }

    pub fn receiver(&self) -> &FileHost {
        self.sim.node(self.receiver)
    }
}
