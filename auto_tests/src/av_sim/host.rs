//! A simulated client in a call: one net_crypto session to its friend, the call engine
//! (`rustox_core::av::Calls`) on that session's lossless (MSI) and lossy (RTP, loss
//! reports) packets, the file layer on the same session, and a client that hands audio and
//! video frames over at their real cadence — marked audio and numbered test pictures
//! (`rustox_core::av::signal`) — and logs what comes out.
//!
//! The host routes packets as the node does (Messenger.c's `m_handle_lossy_packet` and
//! `handle_packet` for ids 69 and 192–199): MSI to [`Calls::handle_msi`], media and reports
//! to [`Calls::handle_media`], file packets (80–82) to the streams layer; it reports the
//! session's RTT and rate to the engine ([`Calls::handle_path`]) as the node does.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rustox_core::av::codec::{StandInCodecs, YuvFrame};
use rustox_core::av::signal::{decode_mark, decode_pattern, pattern_picture, AudioMarker};
use rustox_core::av::{AvEvent, AvTransmit, Calls, FriendCallState, PathEstimate};
use rustox_file_transfer::stream::{FileStreams, StreamEvent};
use rustox_file_transfer::FileKind;
use rustox_net_crypto::crypto::{KeyPair, PublicKey};
use rustox_net_crypto::{
    ConnectionEvent, ConnectionId, ConnectionStatus, Endpoint, EndpointConfig, EndpointEvent,
    Timestamp, TransportConfig,
};
use rustox_simulator::SimNode;

use super::figures::CallLog;

/// The friend number both hosts give each other.
pub const FRIEND: u32 = 0;
/// MSI's lossless packet id (msi.c, `PACKET_ID_MSI`).
const PACKET_ID_MSI: u8 = 69;
/// RTP audio, video and the bandwidth report (rtp.h, bwcontroller.c).
const PACKET_ID_AUDIO: u8 = 192;
const PACKET_ID_VIDEO: u8 = 193;
const PACKET_ID_BWC: u8 = 196;
/// File packets (docs/protocol.md §3.5: FILE_SENDREQUEST, FILE_CONTROL, FILE_DATA).
const FILE_PACKETS: std::ops::RangeInclusive<u8> = 80..=82;
/// How often the host hands the session's path estimate to the engine: about as often as
/// the node's iterate refreshes it.
const PATH_INTERVAL: Duration = Duration::from_millis(50);

/// What a client sends in its call.
#[derive(Debug, Clone)]
pub struct MediaPlan {
    /// Audio bit rate the client asks for, kbit/s (toxav's unit).
    pub audio_kbps: u32,
    /// Video bit rate the client starts at, kbit/s (0: no video).
    pub video_kbps: u32,
    /// The most the client lets the engine's suggestions raise video to, kbit/s.
    pub video_ceiling_kbps: u32,
    /// The host hands the session's bandwidth and RTT to the engine, as the node does; off,
    /// the engine runs on the clients' rates and loss reports alone (as c-toxcore's does).
    pub path_estimates: bool,
    /// The client sets the bit rates the engine suggests (toxav's bit-rate callbacks);
    /// otherwise it keeps its own, as the engine caps what it sends by the path anyway.
    pub follow_suggestions: bool,
    /// Audio frame duration.
    pub audio_frame: Duration,
    /// Sampling rate, Hz.
    pub sampling_rate: u32,
    /// Picture size.
    pub width: u16,
    /// Picture size.
    pub height: u16,
    /// Pictures per second.
    pub fps: u32,
}

impl Default for MediaPlan {
    /// 64 kbit/s Opus in 20 ms frames at 48 kHz; 320×240 at 30 fps starting at qTox's
    /// 2500 kbit/s (the real-socket peers send the same size).
    fn default() -> Self {
        MediaPlan {
            audio_kbps: 64,
            video_kbps: 2_500,
            video_ceiling_kbps: 50_000,
            follow_suggestions: false,
            path_estimates: true,
            audio_frame: Duration::from_millis(20),
            sampling_rate: 48_000,
            width: 320,
            height: 240,
            fps: 30,
        }
    }
}

/// A file's bytes as a function of the offset: nothing is held in memory.
#[derive(Debug, Clone)]
struct PatternFile {
    size: u64,
    pos: u64,
}

impl Read for PatternFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.size.saturating_sub(self.pos).min(buf.len() as u64) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            *b = ((self.pos + i as u64) % 251) as u8;
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for PatternFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.pos = match pos {
            SeekFrom::Start(p) => p,
            SeekFrom::End(d) => self.size.saturating_add_signed(d),
            SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
        };
        Ok(self.pos)
    }
}

/// A sink that only counts what it is given (the highest offset written, shared with the
/// host that reads it).
#[derive(Debug, Default)]
struct CountingSink {
    pos: u64,
    high: Arc<AtomicU64>,
}

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pos += buf.len() as u64;
        self.high.fetch_max(self.pos, Ordering::Relaxed);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for CountingSink {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        if let SeekFrom::Start(p) = pos {
            self.pos = p;
        }
        Ok(self.pos)
    }
}

/// One client of the call.
pub struct CallHost {
    endpoint: Endpoint,
    real_pk: PublicKey,
    dht_pk: PublicKey,
    session: Option<ConnectionId>,
    /// Set on the caller: the friend it dials and calls.
    peer: Option<(SocketAddr, PublicKey, PublicKey)>,
    calls: Calls,
    streams: FileStreams,
    plan: MediaPlan,
    /// The call runs (both sides may send).
    active: bool,
    /// The call ended (state FINISHED or ERROR).
    pub ended: bool,
    next_audio: Option<Timestamp>,
    next_video: Option<Timestamp>,
    next_path: Timestamp,
    /// The video bit rate in force, kbit/s.
    video_kbps: u32,
    marker: AudioMarker,
    samples: usize,
    /// Stop handing frames over at this time.
    pub media_until: Timestamp,
    /// A file to offer at a time: (when, size).
    file_plan: Option<(Timestamp, u64)>,
    /// What this host sent (send times) and received (pictures, bytes): the two halves of
    /// each direction's [`CallLog`].
    pub log: CallLog,
    /// (time, mark) of each decoded audio frame (None: no readable mark); matched with the
    /// sender's frames at the end ([`super::figures::follow_marks`]).
    pub audio_marks: Vec<(u64, Option<u64>)>,
    file_bytes: Arc<AtomicU64>,
    /// Bytes of the incoming file so far, and when each part came (receiver).
    pub file_progress: Vec<(Timestamp, u64)>,
    /// When the file's first chunk was queued (sender) or the offer accepted (receiver).
    pub file_started: Option<Timestamp>,
    /// Whether the incoming file completed, and when.
    pub file_done: Option<Timestamp>,
    /// Audio bit rates the engine suggested (kbit/s), with when.
    pub audio_suggestions: Vec<(Timestamp, u32)>,
    /// Video bit rates the engine suggested (kbit/s), with when.
    pub video_suggestions: Vec<(Timestamp, u32)>,
    /// When the call became active.
    pub active_at: Option<Timestamp>,
    /// Lossy sends the session refused (queue full).
    pub lossy_refused: u64,
    /// Problems to report (refused commands, engine errors).
    pub failures: Vec<String>,
}

impl CallHost {
    /// A client whose keys and endpoint randomness come from `rng`.
    pub fn new(now: Timestamp, mut rng: ChaCha8Rng, plan: MediaPlan) -> Self {
        let real = KeyPair::generate(&mut rng);
        let dht = KeyPair::generate(&mut rng);
        let (real_pk, dht_pk) = (real.public, dht.public);
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let config = EndpointConfig {
            transport: TransportConfig::default(),
            accept_all: false,
        };
        let endpoint = Endpoint::new(
            now,
            real,
            dht,
            config,
            Box::new(ChaCha8Rng::from_seed(seed)),
        );
        let samples = (u64::from(plan.sampling_rate) * plan.audio_frame.as_micros() as u64
            / 1_000_000) as usize;
        let rate = plan.sampling_rate;
        CallHost {
            endpoint,
            real_pk,
            dht_pk,
            session: None,
            peer: None,
            calls: Calls::new(Box::new(StandInCodecs)),
            streams: FileStreams::new(),
            video_kbps: plan.video_kbps,
            plan,
            active: false,
            ended: false,
            next_audio: None,
            next_video: None,
            next_path: now,
            marker: AudioMarker::new(rate, 1),
            samples,
            media_until: Timestamp::MAX,
            file_plan: None,
            log: CallLog::default(),
            audio_marks: Vec::new(),
            file_bytes: Arc::default(),
            file_progress: Vec::new(),
            file_started: None,
            file_done: None,
            video_suggestions: Vec::new(),
            audio_suggestions: Vec::new(),
            active_at: None,
            lossy_refused: 0,
            failures: Vec::new(),
        }
    }

    /// Long-term public key.
    pub fn real_pk(&self) -> PublicKey {
        self.real_pk
    }

    /// DHT public key.
    pub fn dht_pk(&self) -> PublicKey {
        self.dht_pk
    }

    /// The call engine, for its counters.
    pub fn calls(&self) -> &Calls {
        &self.calls
    }

    /// The session's transport counters.
    pub fn transport_stats(&self) -> Option<rustox_net_crypto::TransportStats> {
        self.endpoint
            .connection(self.session?)
            .map(|c| c.transport().stats())
    }

    /// Accept the friend's session (the callee).
    pub fn allow(&mut self, peer: PublicKey) {
        self.endpoint.allow_peer(peer);
    }

    /// Dial the friend and call it once the session is up (the caller).
    pub fn dial(&mut self, now: Timestamp, addr: SocketAddr, real: PublicKey, dht: PublicKey) {
        self.peer = Some((addr, real, dht));
        match self.endpoint.connect(now, addr, real, dht) {
            Ok(id) => self.session = Some(id),
            Err(e) => self.failures.push(format!("connect: {e}")),
        }
    }

    /// Offer a file of `size` bytes to the friend at `at`.
    pub fn plan_file(&mut self, at: Timestamp, size: u64) {
        self.file_plan = Some((at, size));
    }

    fn established(&self) -> bool {
        self.session
            .and_then(|id| self.endpoint.connection(id))
            .is_some_and(|c| c.status() == ConnectionStatus::Established)
    }

    fn pump(&mut self, now: Timestamp) {
        while let Some(event) = self.endpoint.poll_event() {
            match event {
                EndpointEvent::Incoming { id, .. } => self.session = Some(id),
                EndpointEvent::Connection { id, event } => self.on_connection(now, id, event),
            }
        }
        if self.calls.poll_timeout().is_some_and(|t| t <= now) {
            self.calls.handle_timeout(now);
        }
        if self.plan.path_estimates && now >= self.next_path && self.established() {
            self.next_path = now + PATH_INTERVAL;
            let conn = self.session.and_then(|id| self.endpoint.connection(id));
            if let Some(transport) = conn.map(|c| c.transport()) {
                // As the node estimates a call's path (core/src/node/av_ops.rs).
                let path = PathEstimate {
                    rtt: transport.smoothed_rtt().unwrap_or_default(),
                    bandwidth_bps: transport
                        .bandwidth_capacity()
                        .unwrap_or(0)
                        .saturating_mul(8),
                };
                self.calls.handle_path(now, FRIEND, path);
            }
        }
        self.send_media(now);
        if let Some((at, size)) = self.file_plan {
            if now >= at && self.established() {
                self.file_plan = None;
                self.offer_file(now, size);
            }
        }
        // Answering, state changes and media each may produce more: drain until quiet.
        for _ in 0..8 {
            let events = self.drain_av_events(now);
            let sent = self.drain_av_transmits(now);
            if events == 0 && sent == 0 {
                break;
            }
        }
        self.pump_files(now);
    }

    fn on_connection(&mut self, now: Timestamp, id: ConnectionId, event: ConnectionEvent) {
        if Some(id) != self.session {
            return;
        }
        match event {
            ConnectionEvent::Established => {
                if self.peer.is_some() {
                    let p = &self.plan;
                    let (a, v) = (p.audio_kbps, p.video_kbps);
                    if let Err(e) = self.calls.call(now, FRIEND, a, v) {
                        self.failures.push(format!("call: {e}"));
                    }
                }
            }
            ConnectionEvent::Lossless(payload) => match payload.first() {
                Some(&PACKET_ID_MSI) => self.calls.handle_msi(now, FRIEND, &payload),
                Some(id) if FILE_PACKETS.contains(id) => {
                    if let Some(conn) = self.endpoint.connection_mut(id_of(self.session)) {
                        let _ = self.streams.handle_packet(now, conn, &payload);
                    }
                    self.drain_file_events(now);
                }
                _ => {}
            },
            ConnectionEvent::Lossy(payload) => match payload.first() {
                Some(&PACKET_ID_AUDIO) => {
                    self.log
                        .audio_bytes
                        .push((now.as_micros(), payload.len() as u32));
                    self.calls.handle_media(now, FRIEND, &payload);
                }
                Some(&PACKET_ID_VIDEO) => {
                    self.log
                        .video_bytes
                        .push((now.as_micros(), payload.len() as u32));
                    self.calls.handle_media(now, FRIEND, &payload);
                }
                Some(&PACKET_ID_BWC) => self.calls.handle_media(now, FRIEND, &payload),
                _ => {}
            },
            ConnectionEvent::Closed(reason) => {
                if !self.ended {
                    self.failures.push(format!("session closed: {reason:?}"));
                }
                self.calls.handle_friend_offline(now, FRIEND);
                self.session = None;
            }
        }
    }

    fn start_media(&mut self, now: Timestamp) {
        if self.active {
            return;
        }
        self.active = true;
        self.active_at = Some(now);
        self.next_audio = Some(now);
        self.next_video = (self.plan.video_kbps > 0).then_some(now);
    }

    fn send_media(&mut self, now: Timestamp) {
        if !self.active || self.ended || now >= self.media_until {
            return;
        }
        while let Some(at) = self.next_audio.filter(|&t| t <= now) {
            let index = self.log.audio_sent.len() as u64;
            let pcm = self.marker.frame(index, self.samples);
            self.log.audio_sent.push(now.as_micros());
            let rate = self.plan.sampling_rate;
            if let Err(e) = self
                .calls
                .send_audio_frame(now, FRIEND, &pcm, self.samples, 1, rate)
            {
                self.failures.push(format!("audio frame {index}: {e}"));
            }
            self.next_audio = Some(at + self.plan.audio_frame);
        }
        while let Some(at) = self.next_video.filter(|&t| t <= now) {
            let index = self.log.video_sent.len() as u32;
            // The pattern carries 16 bits; a call of this benchmark sends far fewer pictures.
            let picture = pattern_picture(self.plan.width, self.plan.height, index as u16);
            self.log.video_sent.push(now.as_micros());
            let frame = YuvFrame {
                width: picture.width,
                height: picture.height,
                y: &picture.y,
                u: &picture.u,
                v: &picture.v,
            };
            if let Err(e) = self.calls.send_video_frame(now, FRIEND, &frame) {
                self.failures.push(format!("video frame {index}: {e}"));
            }
            let n = index as u64 + 1;
            let next = self.active_at.unwrap_or(now)
                + Duration::from_micros(n * 1_000_000 / u64::from(self.plan.fps.max(1)));
            self.next_video = Some(next.max(at));
        }
    }

    fn drain_av_events(&mut self, now: Timestamp) -> usize {
        let mut n = 0;
        while let Some(event) = self.calls.poll_event() {
            n += 1;
            match event {
                AvEvent::Call { friend, .. } => {
                    let p = &self.plan;
                    let (a, v) = (p.audio_kbps, p.video_kbps);
                    match self.calls.answer(now, friend, a, v) {
                        Ok(()) => self.start_media(now),
                        Err(e) => self.failures.push(format!("answer: {e}")),
                    }
                }
                AvEvent::State { state, .. } => {
                    let bits = state.0;
                    if bits & (FriendCallState::FINISHED | FriendCallState::ERROR) != 0 {
                        self.ended = true;
                        self.active = false;
                    } else if bits != 0 {
                        self.start_media(now);
                    }
                }
                AvEvent::AudioFrame {
                    pcm,
                    channels,
                    sampling_rate,
                    ..
                } => {
                    let mark = decode_mark(&pcm, channels, sampling_rate);
                    self.audio_marks
                        .push((now.as_micros(), mark.map(u64::from)));
                }
                AvEvent::VideoFrame {
                    width, height, y, ..
                } => {
                    if let Some(n) = decode_pattern(width, height, &y) {
                        self.log
                            .video_received
                            .push((u32::from(n), now.as_micros()));
                    }
                }
                AvEvent::VideoBitRate { friend, bit_rate } => {
                    self.video_suggestions.push((now, bit_rate));
                    let rate = bit_rate.min(self.plan.video_ceiling_kbps);
                    let follow = self.plan.follow_suggestions && self.plan.video_kbps > 0;
                    if rate != self.video_kbps
                        && follow
                        && self.calls.set_video_bit_rate(now, friend, rate).is_ok()
                    {
                        self.video_kbps = rate;
                    }
                }
                AvEvent::AudioBitRate { friend, bit_rate } => {
                    self.audio_suggestions.push((now, bit_rate));
                    if self.plan.follow_suggestions {
                        let _ = self.calls.set_audio_bit_rate(now, friend, bit_rate);
                    }
                }
            }
        }
        n
    }

    fn drain_av_transmits(&mut self, now: Timestamp) -> usize {
        let mut n = 0;
        while let Some(AvTransmit { lossless, data, .. }) = self.calls.poll_transmit() {
            n += 1;
            let Some(conn) = self.session.and_then(|id| self.endpoint.connection_mut(id)) else {
                continue;
            };
            let sent = if lossless {
                conn.send_lossless(now, &data).map(|_| ())
            } else {
                conn.send_lossy(now, &data)
            };
            if sent.is_err() {
                if lossless {
                    self.failures
                        .push("MSI packet refused by the session".into());
                } else {
                    self.lossy_refused += 1;
                }
            }
        }
        n
    }

    fn offer_file(&mut self, now: Timestamp, size: u64) {
        let Some(conn) = self.session.and_then(|id| self.endpoint.connection_mut(id)) else {
            return;
        };
        let source = PatternFile { size, pos: 0 };
        let id = [0x46; 32];
        match self.streams.send_with_id(
            now,
            conn,
            FileKind::Data,
            size,
            id,
            Box::new(source),
            b"call.bin",
        ) {
            Ok(_) => self.file_started = Some(now),
            Err(e) => self.failures.push(format!("file offer: {e}")),
        }
    }

    fn pump_files(&mut self, now: Timestamp) {
        let Some(conn) = self.session.and_then(|id| self.endpoint.connection_mut(id)) else {
            return;
        };
        if conn.status() != ConnectionStatus::Established {
            return;
        }
        self.streams.pump(now, conn);
        self.drain_file_events(now);
    }

    fn drain_file_events(&mut self, now: Timestamp) {
        while let Some(event) = self.streams.poll_event() {
            match event {
                StreamEvent::Offered { file, .. } => {
                    let Some(conn) = self.session.and_then(|id| self.endpoint.connection_mut(id))
                    else {
                        return;
                    };
                    let sink = Box::new(CountingSink {
                        pos: 0,
                        high: self.file_bytes.clone(),
                    });
                    match self.streams.accept(now, conn, file, sink, false) {
                        Ok(()) => self.file_started = Some(now),
                        Err(e) => self.failures.push(format!("file accept: {e}")),
                    }
                }
                StreamEvent::Received { .. } => self.file_done = Some(now),
                StreamEvent::Failed { file, error } => {
                    self.failures.push(format!("file {file}: {error}"));
                }
                _ => {}
            }
        }
        let got = self.file_bytes.load(Ordering::Relaxed);
        if self.file_progress.last().map(|p| p.1) != Some(got) && got > 0 {
            self.file_progress.push((now, got));
        }
    }

    fn poll_udp(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        let udp = |t: rustox_net_crypto::Transmit| t.destination.udp().map(|a| (a, t.payload));
        if let Some(t) = self.endpoint.poll_transmit(now) {
            return udp(t);
        }
        // Sending opened the budget: let the file layer top it up once.
        self.pump_files(now);
        self.endpoint.poll_transmit(now).and_then(udp)
    }
}

fn id_of(session: Option<ConnectionId>) -> ConnectionId {
    session.expect("a packet arrived on the session")
}

impl SimNode for CallHost {
    fn handle_datagram(&mut self, now: Timestamp, from: SocketAddr, _to: SocketAddr, bytes: &[u8]) {
        let _ = self.endpoint.handle_datagram(now, from, bytes);
        self.pump(now);
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        self.endpoint.handle_timeout(now);
        self.pump(now);
    }

    fn poll_transmit(&mut self, now: Timestamp) -> Option<(SocketAddr, Vec<u8>)> {
        self.poll_udp(now)
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        let media = |t: Option<Timestamp>| t.filter(|&t| self.active && t < self.media_until);
        [
            self.endpoint.poll_timeout(),
            self.calls.poll_timeout(),
            media(self.next_audio),
            media(self.next_video),
            self.file_plan.map(|(t, _)| t),
            (self.plan.path_estimates && self.established()).then_some(self.next_path),
        ]
        .into_iter()
        .flatten()
        .min()
    }
}
