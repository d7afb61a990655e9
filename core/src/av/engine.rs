//! [`Calls`]: every call of one node, sans-IO (toxav.c's `ToxAV` without its threads).
//!
//! Friends are named by their number (the node's `FriendNumber.0`); the node has checked
//! that a friend exists and is online before a command reaches this engine (toxav.c's
//! `FRIEND_NOT_FOUND` / `FRIEND_NOT_CONNECTED` are the node's errors).
//!
//! This file holds the commands, the packet and timer inputs and the outputs; one call's
//! state is `engine/call.rs`, its audio and video `engine/audio_path.rs` and
//! `engine/video_path.rs` (with the key-frame request, lossy 195), its rates
//! `engine/rate.rs` (the rule that joins toxav.c's loss reports to the path's bandwidth),
//! the events and bounded queues `engine/events.rs`, the refusals `engine/errors.rs`; the
//! audio jitter buffer is [`crate::av::jitter`].
//!
//! Bit rates are toxav.h's kbit/s throughout; the encoders get bits/s (× 1000, as toxav.c).
//! State events follow toxav.c: the caller hears the callee's capabilities when answered
//! (the callee hears nothing for its own answer), either side hears the other's capability
//! changes (pause: 0), `FINISHED` when the other side hangs up or rejects, `ERROR` on an
//! MSI error or when the friend goes offline (msi.c's peer timeout goes to toxav.c's
//! `callback_error`); the side that hangs up hears nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use rustox_net_crypto::Timestamp;

use super::bwc::{BwcReport, PACKET_ID_BWC};
use super::codec::{CodecFactory, YuvFrame};
use super::msi::{
    Msi, MsiCallState, MsiEvent, CAP_RECV_AUDIO, CAP_RECV_VIDEO, CAP_SEND_AUDIO, CAP_SEND_VIDEO,
};
use super::rtp::{PACKET_ID_AUDIO, PACKET_ID_VIDEO};

mod audio_path;
mod call;
mod errors;
mod events;
mod rate;
mod video_path;

use audio_path::{AudioRefused, Played};
use call::{capabilities_for, Call};
use events::Outbox;

pub use errors::{AnswerError, BitRateError, CallError, ControlError, SendFrameError};
pub use events::{AvEvent, AvTransmit, FriendCallState};
use rate::{RateControl, Suggestion};

pub use audio_path::{FRAME_DURATIONS_TENTHS_MS, SAMPLING_RATES};
pub use events::{MAX_QUEUED_EVENTS, MAX_QUEUED_TRANSMITS};
pub use video_path::PACKET_ID_KEYFRAME_REQUEST;

/// `toxav_call_control`'s controls (`Toxav_Call_Control`, toxav.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallControl {
    /// `RESUME`
    Resume,
    /// `PAUSE`
    Pause,
    /// `CANCEL`
    Cancel,
    /// `MUTE_AUDIO`
    MuteAudio,
    /// `UNMUTE_AUDIO`
    UnmuteAudio,
    /// `HIDE_VIDEO`
    HideVideo,
    /// `SHOW_VIDEO`
    ShowVideo,
}

/// What the transport measures of a friend's path, which sets the call's sending rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PathEstimate {
    /// Smoothed round-trip time.
    pub rtt: Duration,
    /// The path's capacity as the congestion controller measured it with the pipe full, bits
    /// per second (net_crypto `Transport::bandwidth_capacity`). 0: not measured, which is the
    /// case of a call alone on its session (lossy media is never sampled); the engine then
    /// keeps the application's rates, as c-toxcore does, and the loss reports still apply.
    pub bandwidth_bps: u64,
}

/// Counters of the engine (frames, packets, losses), for benchmarks and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AvStats {
    /// Audio frames encoded and sent.
    pub audio_frames_sent: u64,
    /// Audio frames decoded from packets.
    pub audio_frames_received: u64,
    /// Audio frames concealed (lost; decoded by FEC or packet-loss concealment).
    pub audio_frames_concealed: u64,
    /// Video frames encoded and sent.
    pub video_frames_sent: u64,
    /// Video frames reassembled and decoded.
    pub video_frames_received: u64,
    /// Video frames dropped incomplete.
    pub video_frames_dropped: u64,
    /// Packets refused by a parser.
    pub packets_malformed: u64,
    /// Packets for no active call, or of a kind not taken now (muted, hidden, paused).
    pub packets_ignored: u64,
    /// Audio frames that arrived after their playout slot (or twice).
    pub audio_frames_late: u64,
    /// Audio frames the decoder refused.
    pub audio_frames_undecodable: u64,
    /// Key-frame requests sent.
    pub keyframe_requests_sent: u64,
    /// Key-frame requests received.
    pub keyframe_requests_received: u64,
    /// Events lost to a full queue.
    pub events_dropped: u64,
    /// Packets lost to a full queue.
    pub transmits_dropped: u64,
}

/// Calls kept at most. c-toxcore has no bound (one per friend, in an array as long as the
/// highest friend number); 1024 simultaneous calls is far beyond what one machine encodes in
/// real time, and every call holds codecs and buffers, so a flood of invitations stops here
/// (further invitations are hung up).
pub const MAX_CALLS: usize = 1024;
/// toxav.c `IDLE_ITERATION_INTERVAL_MS`: the iteration interval without a call.
pub const IDLE_ITERATION_INTERVAL: Duration = Duration::from_millis(200);
/// How often an active call moves its loss counts into the report monitor (the monitor
/// sends a report each 950 ms, bwcontroller.c `BWC_SEND_INTERVAL_MS`).
pub const REPORT_CHECK_INTERVAL: Duration = Duration::from_millis(100);

/// Every call of one node (toxav.c's `ToxAV`).
///
/// Bit rates in commands and events are in kbit/s, as toxav.h's.
pub struct Calls {
    codecs: Box<dyn CodecFactory>,
    msi: Msi,
    calls: BTreeMap<u32, Call>,
    out: Outbox,
    stats: AvStats,
    ssrc_seed: u64,
}

impl Calls {
    /// An engine creating its codecs with `codecs`.
    pub fn new(codecs: Box<dyn CodecFactory>) -> Self {
        Self::with_seed(codecs, 0x7275_7374_6f78)
    }

    /// An engine whose RTP source ids derive from `seed` (rtp.c draws the audio one at
    /// random; the node passes its random source's output).
    pub fn with_seed(codecs: Box<dyn CodecFactory>, seed: u64) -> Self {
        Self {
            codecs,
            msi: Msi::new(),
            calls: BTreeMap::new(),
            out: Outbox::default(),
            stats: AvStats::default(),
            ssrc_seed: seed,
        }
    }

    fn next_ssrc(&mut self) -> u32 {
        // splitmix64: a distinct source id per call from one seed.
        self.ssrc_seed = self.ssrc_seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.ssrc_seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as u32
    }

    /// `toxav_call`: calls an online friend; a bit rate of 0 disables sending that kind.
    pub fn call(
        &mut self,
        now: Timestamp,
        friend: u32,
        audio_bit_rate: u32,
        video_bit_rate: u32,
    ) -> Result<(), CallError> {
        if (audio_bit_rate != 0 && audio_bit_rate_invalid(audio_bit_rate))
            || (video_bit_rate != 0 && video_bit_rate_invalid(video_bit_rate))
        {
            return Err(CallError::InvalidBitRate);
        }
        if self.calls.contains_key(&friend) {
            return Err(CallError::AlreadyInCall);
        }
        if self.calls.len() >= MAX_CALLS {
            return Err(CallError::TooMany);
        }
        let call = Call::new(audio_bit_rate, video_bit_rate);
        if self.msi.invite(friend, call.self_caps).is_err() {
            // toxav.c answers `SYNC`; the MSI refuses only when it has a call with this
            // friend, which is "already in call" to the application.
            return Err(CallError::AlreadyInCall);
        }
        self.calls.insert(friend, call);
        self.flush_msi(now);
        Ok(())
    }

    /// `toxav_answer`: answers a friend's call. As in toxav.c, the callee hears no state event
    /// for its own answer; the caller hears the callee's capabilities.
    pub fn answer(
        &mut self,
        now: Timestamp,
        friend: u32,
        audio_bit_rate: u32,
        video_bit_rate: u32,
    ) -> Result<(), AnswerError> {
        if (audio_bit_rate != 0 && audio_bit_rate_invalid(audio_bit_rate))
            || (video_bit_rate != 0 && video_bit_rate_invalid(video_bit_rate))
        {
            return Err(AnswerError::InvalidBitRate);
        }
        if !self.calls.contains_key(&friend)
            || self.msi.call_state(friend) != MsiCallState::Requested
        {
            return Err(AnswerError::FriendNotCalling);
        }
        let ssrc = self.next_ssrc();
        let call = self
            .calls
            .get_mut(&friend)
            .ok_or(AnswerError::FriendNotCalling)?;
        if !call.prepare(now, self.codecs.as_ref(), ssrc) {
            return Err(AnswerError::CodecInitialization);
        }
        call.audio_kbps = audio_bit_rate;
        call.video_kbps = video_bit_rate;
        call.rate.note_requested_video(video_bit_rate);
        call.self_caps = capabilities_for(audio_bit_rate, video_bit_rate);
        call.previous_self_caps = call.self_caps;
        let caps = call.self_caps;
        if self.msi.answer(friend, caps).is_err() {
            // toxav.c answers `SYNC` here; the MSI refuses only a call not ringing.
            call.media = None;
            return Err(AnswerError::FriendNotCalling);
        }
        self.flush_msi(now);
        Ok(())
    }

    /// `toxav_call_control`, with toxav.c's transitions: PAUSE needs some capability and
    /// RESUME a paused call that had some; MUTE and HIDE need the receive bit set; UNMUTE and
    /// SHOW are refused only when that receive bit is all we have (toxav.c tests
    /// `self_capabilities ^ bit == 0`). CANCEL works on a ringing call too.
    pub fn control(
        &mut self,
        now: Timestamp,
        friend: u32,
        control: CallControl,
    ) -> Result<(), ControlError> {
        let call = self
            .calls
            .get_mut(&friend)
            .ok_or(ControlError::FriendNotInCall)?;
        if !call.active() && control != CallControl::Cancel {
            return Err(ControlError::FriendNotInCall);
        }
        let caps = call.self_caps;
        let new_caps = match control {
            CallControl::Cancel => {
                let _ = self.msi.hangup(friend);
                self.calls.remove(&friend);
                self.flush_msi(now);
                return Ok(());
            }
            CallControl::Resume => {
                if caps != 0 || call.previous_self_caps == 0 {
                    return Err(ControlError::InvalidTransition);
                }
                call.previous_self_caps
            }
            CallControl::Pause => {
                if caps == 0 {
                    return Err(ControlError::InvalidTransition);
                }
                call.previous_self_caps = caps;
                0
            }
            CallControl::MuteAudio => {
                if caps & CAP_RECV_AUDIO == 0 {
                    return Err(ControlError::InvalidTransition);
                }
                caps ^ CAP_RECV_AUDIO
            }
            CallControl::UnmuteAudio => {
                if caps ^ CAP_RECV_AUDIO == 0 {
                    return Err(ControlError::InvalidTransition);
                }
                caps | CAP_RECV_AUDIO
            }
            CallControl::HideVideo => {
                if caps & CAP_RECV_VIDEO == 0 {
                    return Err(ControlError::InvalidTransition);
                }
                caps ^ CAP_RECV_VIDEO
            }
            CallControl::ShowVideo => {
                if caps ^ CAP_RECV_VIDEO == 0 {
                    return Err(ControlError::InvalidTransition);
                }
                caps | CAP_RECV_VIDEO
            }
        };
        if self.msi.change_capabilities(friend, new_caps).is_err() {
            return Err(ControlError::InvalidTransition);
        }
        call.self_caps = new_caps;
        if new_caps & CAP_RECV_AUDIO == 0 {
            // toxav.c `rtp_stop_receiving`: what was buffered is not played after an unmute.
            if let Some(media) = call.media.as_mut() {
                media.audio_rx.jitter.clear();
            }
        }
        self.flush_msi(now);
        Ok(())
    }

    fn set_bit_rate(
        &mut self,
        now: Timestamp,
        friend: u32,
        bit_rate: u32,
        video: bool,
    ) -> Result<(), BitRateError> {
        let invalid = if video {
            video_bit_rate_invalid(bit_rate)
        } else {
            audio_bit_rate_invalid(bit_rate)
        };
        if bit_rate > 0 && invalid {
            return Err(BitRateError::InvalidBitRate);
        }
        let active = self.msi.call_state(friend) == MsiCallState::Active;
        let call = self
            .calls
            .get_mut(&friend)
            .filter(|c| c.active() && active)
            .ok_or(BitRateError::FriendNotInCall)?;
        let (current, send_bit) = if video {
            (call.video_kbps, CAP_SEND_VIDEO)
        } else {
            (call.audio_kbps, CAP_SEND_AUDIO)
        };
        if current == bit_rate {
            return Ok(());
        }
        // toxav.c: going to 0 withdraws the send capability, coming from 0 announces it;
        // a change between two non-zero rates is local to the encoder.
        let caps = if bit_rate == 0 {
            Some(call.self_caps & !send_bit)
        } else if current == 0 {
            Some(call.self_caps | send_bit)
        } else {
            None
        };
        if let Some(caps) = caps {
            if self.msi.change_capabilities(friend, caps).is_err() {
                return Err(BitRateError::FriendNotInCall);
            }
            call.self_caps = caps;
        }
        if video {
            call.video_kbps = bit_rate;
            call.rate.note_requested_video(bit_rate);
        } else {
            call.audio_kbps = bit_rate;
        }
        self.flush_msi(now);
        Ok(())
    }

    /// `toxav_audio_set_bit_rate` (kbit/s; 0 disables sending audio).
    pub fn set_audio_bit_rate(
        &mut self,
        now: Timestamp,
        friend: u32,
        bit_rate: u32,
    ) -> Result<(), BitRateError> {
        self.set_bit_rate(now, friend, bit_rate, false)
    }

    /// `toxav_video_set_bit_rate` (kbit/s; 0 disables sending video).
    pub fn set_video_bit_rate(
        &mut self,
        now: Timestamp,
        friend: u32,
        bit_rate: u32,
    ) -> Result<(), BitRateError> {
        self.set_bit_rate(now, friend, bit_rate, true)
    }

    /// `toxav_audio_send_frame`: encodes interleaved `pcm` (`sample_count * channels`
    /// samples) and queues its packets. The frame must be one Opus duration (2.5, 5, 10,
    /// 20, 40 or 60 ms) at 8, 12, 16, 24 or 48 kHz, 1 or 2 channels.
    pub fn send_audio_frame(
        &mut self,
        now: Timestamp,
        friend: u32,
        pcm: &[i16],
        sample_count: usize,
        channels: u8,
        sampling_rate: u32,
    ) -> Result<(), SendFrameError> {
        let codecs: &dyn CodecFactory = self.codecs.as_ref();
        let call = sending_call(&mut self.calls, &self.msi, friend, false)?;
        let targets = call.rate.targets(call.audio_kbps, call.video_kbps);
        let media = call.media.as_mut().ok_or(SendFrameError::FriendNotInCall)?;
        let packets = media.audio_tx.send(
            now,
            codecs,
            targets.audio_kbps,
            pcm,
            sample_count,
            channels,
            sampling_rate,
        )?;
        for p in packets {
            self.out.transmit(friend, false, p);
        }
        self.stats.audio_frames_sent += 1;
        Ok(())
    }

    /// `toxav_video_send_frame`: encodes a YUV 4:2:0 picture and queues its packets.
    pub fn send_video_frame(
        &mut self,
        now: Timestamp,
        friend: u32,
        frame: &YuvFrame<'_>,
    ) -> Result<(), SendFrameError> {
        let codecs: &dyn CodecFactory = self.codecs.as_ref();
        let call = sending_call(&mut self.calls, &self.msi, friend, true)?;
        let targets = call.rate.targets(call.audio_kbps, call.video_kbps);
        let media = call.media.as_mut().ok_or(SendFrameError::FriendNotInCall)?;
        let packets = media
            .video_tx
            .send(now, codecs, targets.video_kbps, frame)?;
        for p in packets {
            self.out.transmit(friend, false, p);
        }
        self.stats.video_frames_sent += 1;
        Ok(())
    }

    /// A lossless MSI packet (id 69 first) from an online friend.
    pub fn handle_msi(&mut self, now: Timestamp, friend: u32, packet: &[u8]) {
        let before = self.msi.stats().malformed;
        self.msi.handle_packet(friend, packet);
        let refused = self.msi.stats().malformed.saturating_sub(before);
        self.stats.packets_malformed += refused;
        self.flush_msi(now);
    }

    /// A lossy packet of a call (id 192, 193, 196 or [`PACKET_ID_KEYFRAME_REQUEST`] first)
    /// from an online friend. Packets for no active call, or of a kind we do not take now
    /// (muted, hidden, paused, the peer not sending it), are ignored as c-toxcore's
    /// unregistered or stopped RTP sessions ignore them; packets that do not parse are
    /// counted as malformed and change nothing.
    pub fn handle_media(&mut self, now: Timestamp, friend: u32, packet: &[u8]) {
        let Some(&id) = packet.first() else {
            self.stats.packets_malformed += 1;
            return;
        };
        let peer = self.msi.peer_capabilities(friend);
        let Some(call) = self.calls.get_mut(&friend) else {
            self.stats.packets_ignored += 1;
            return;
        };
        let receives_audio = call.receives_audio(peer);
        let receives_video = call.receives_video(peer);
        let (audio_kbps, video_kbps) = (call.audio_kbps, call.video_kbps);
        let Some(media) = call.media.as_mut() else {
            self.stats.packets_ignored += 1;
            return;
        };
        match id {
            PACKET_ID_AUDIO => {
                if !receives_audio {
                    self.stats.packets_ignored += 1;
                    return;
                }
                let first = match media.audio_rtp.handle_packet(now, packet) {
                    Err(_) => {
                        self.stats.packets_malformed += 1;
                        return;
                    }
                    Ok(frame) => frame,
                };
                let mut frame = first;
                while let Some(f) = frame {
                    match media.audio_rx.push(now, f) {
                        Ok(()) => {}
                        Err(AudioRefused::Malformed) => self.stats.packets_malformed += 1,
                        Err(AudioRefused::Late) => self.stats.audio_frames_late += 1,
                    }
                    frame = media.audio_rtp.poll_frame();
                }
            }
            PACKET_ID_VIDEO => {
                if !receives_video {
                    self.stats.packets_ignored += 1;
                    return;
                }
                let first = match media.video_rtp.handle_packet(now, packet) {
                    Err(_) => {
                        self.stats.packets_malformed += 1;
                        return;
                    }
                    Ok(frame) => frame,
                };
                let mut frame = first;
                while let Some(f) = frame {
                    frame = media.video_rtp.poll_frame();
                    let got = media.video_rx.receive(now, friend, f);
                    self.stats.video_frames_dropped += got.missing;
                    if got.undecodable {
                        self.stats.video_frames_dropped += 1;
                    } else {
                        self.stats.video_frames_received += 1;
                    }
                    if got.ask_keyframe {
                        self.stats.keyframe_requests_sent += 1;
                        self.out
                            .transmit(friend, false, vec![PACKET_ID_KEYFRAME_REQUEST]);
                    }
                    for picture in got.pictures {
                        self.out.event(picture);
                    }
                }
            }
            PACKET_ID_BWC => match BwcReport::parse(packet) {
                Err(_) => self.stats.packets_malformed += 1,
                Ok(report) => {
                    if let Some(loss) = media.bwc.handle_report(now, report) {
                        if let Some(s) = RateControl::loss_suggestion(loss, audio_kbps, video_kbps)
                        {
                            self.out.event(suggestion_event(friend, s));
                        }
                    }
                }
            },
            PACKET_ID_KEYFRAME_REQUEST => {
                if packet.len() != 1 {
                    self.stats.packets_malformed += 1;
                    return;
                }
                self.stats.keyframe_requests_received += 1;
                media.video_tx.request_keyframe();
            }
            _ => self.stats.packets_malformed += 1,
        }
    }

    /// The friend went offline: its call ends (msi.c `on_peer_status` →
    /// `MSI_ON_PEERTIMEOUT`, which toxav.c hands to `callback_error`: the application hears
    /// state `ERROR`).
    pub fn handle_friend_offline(&mut self, now: Timestamp, friend: u32) {
        self.msi.handle_friend_offline(friend);
        self.flush_msi(now);
        // Whatever the MSI said, no call outlives its friend's session.
        if self.calls.remove(&friend).is_some() {
            self.out.event(AvEvent::State {
                friend,
                state: FriendCallState(FriendCallState::ERROR),
            });
        }
    }

    /// What the friend's session measures of the path (bandwidth, RTT): caps the encoders'
    /// rates and suggests rates to the application (rate.rs has the rule).
    pub fn handle_path(&mut self, now: Timestamp, friend: u32, path: PathEstimate) {
        let _ = now;
        let Some(call) = self.calls.get_mut(&friend) else {
            return;
        };
        call.rate.set_path(path);
        if !call.active() {
            return;
        }
        for s in call.rate.path_suggestions(call.audio_kbps, call.video_kbps) {
            self.out.event(suggestion_event(friend, s));
        }
    }

    /// Runs the timers: audio playout from the jitter buffer, loss reports.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        let codecs: &dyn CodecFactory = self.codecs.as_ref();
        let mut played = Vec::new();
        for (&friend, call) in self.calls.iter_mut() {
            let Some(media) = call.media.as_mut() else {
                continue;
            };
            media.audio_rx.play(now, friend, codecs, &mut played);
            for (event, kind) in played.drain(..) {
                match kind {
                    Played::Frame => self.stats.audio_frames_received += 1,
                    Played::Concealed => self.stats.audio_frames_concealed += 1,
                    Played::Failed => self.stats.audio_frames_undecodable += 1,
                }
                if let Some(event) = event {
                    self.out.event(event);
                }
            }
            if now >= call.next_report_check {
                call.next_report_check = now + REPORT_CHECK_INTERVAL;
                for rtp in [&mut media.audio_rtp, &mut media.video_rtp] {
                    let (lost, received) = rtp.take_loss_counts();
                    media.bwc.add_lost(lost);
                    media.bwc.add_received(received);
                }
                if let Some(report) = media.bwc.poll_report(now) {
                    self.out.transmit(friend, false, report);
                }
            }
        }
    }

    /// The next packet to send.
    pub fn poll_transmit(&mut self) -> Option<AvTransmit> {
        self.out.poll_transmit()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<AvEvent> {
        self.out.poll_event()
    }

    /// When [`Calls::handle_timeout`] is next due (None: no active call).
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.calls
            .values()
            .filter_map(|c| {
                let media = c.media.as_ref()?;
                let report = c.next_report_check;
                Some(match media.audio_rx.jitter.next_due() {
                    Some(due) => due.min(report),
                    None => report,
                })
            })
            .min()
    }

    /// `toxav_iteration_interval`: the shortest frame interval of what the calls receive
    /// (audio.c's `lp_frame_duration`, video.c's `lcfd`), 200 ms without a call.
    pub fn iteration_interval(&self) -> Duration {
        if self.calls.is_empty() {
            return IDLE_ITERATION_INTERVAL;
        }
        let mut ms = IDLE_ITERATION_INTERVAL.as_millis() as u32;
        for (&friend, call) in &self.calls {
            let Some(media) = call.media.as_ref() else {
                continue;
            };
            let peer = self.msi.peer_capabilities(friend);
            if call.receives_audio(peer) {
                ms = ms.min(media.audio_rx.frame_ms());
            }
            if call.receives_video(peer) {
                ms = ms.min(media.video_rx.frame_interval_ms);
            }
        }
        Duration::from_millis(u64::from(ms))
    }

    /// Whether a call with `friend` exists (ringing, or in progress).
    pub fn in_call(&self, friend: u32) -> bool {
        self.calls.contains_key(&friend)
    }

    /// Calls that exist.
    pub fn call_count(&self) -> usize {
        self.calls.len()
    }

    /// The engine's counters.
    pub fn stats(&self) -> AvStats {
        let mut stats = self.stats;
        stats.events_dropped = self.out.events_dropped;
        stats.transmits_dropped = self.out.transmits_dropped;
        stats
    }

    /// The encoders' current bit rates for `friend`'s call, bits/s (audio, video; 0 before
    /// the first frame of that kind).
    pub fn encoder_bit_rates(&self, friend: u32) -> Option<(u32, u32)> {
        let media = self.calls.get(&friend)?.media.as_ref()?;
        Some((media.audio_tx.bit_rate_bps(), media.video_tx.bit_rate_bps()))
    }

    /// Our capabilities as last sent to `friend` (MSI bits).
    pub fn self_capabilities(&self, friend: u32) -> Option<u8> {
        Some(self.calls.get(&friend)?.self_caps)
    }

    /// The audio jitter buffer's current delay for `friend`'s call.
    pub fn audio_playout_delay(&self, friend: u32) -> Option<Duration> {
        Some(
            self.calls
                .get(&friend)?
                .media
                .as_ref()?
                .audio_rx
                .jitter
                .delay(),
        )
    }

    /// Moves the MSI's packets out and turns its events into calls and [`AvEvent`]s
    /// (toxav.c's `callback_invite`, `_start`, `_end`, `_error`, `_capabilites`).
    fn flush_msi(&mut self, now: Timestamp) {
        // Each MSI event may make the MSI send; loop until both are drained.
        loop {
            while let Some((friend, data)) = self.msi.poll_send() {
                self.out.transmit(friend, true, data);
            }
            let Some(event) = self.msi.poll_event() else {
                break;
            };
            self.on_msi_event(now, event);
        }
    }

    fn on_msi_event(&mut self, now: Timestamp, event: MsiEvent) {
        match event {
            MsiEvent::Invite { friend, caps } => {
                if self.calls.contains_key(&friend) || self.calls.len() >= MAX_CALLS {
                    let _ = self.msi.hangup(friend);
                    return;
                }
                self.calls.insert(friend, Call::new(0, 0));
                self.out.event(AvEvent::Call {
                    friend,
                    audio: caps & CAP_SEND_AUDIO != 0,
                    video: caps & CAP_SEND_VIDEO != 0,
                });
            }
            MsiEvent::Start { friend, caps } => {
                let ssrc = self.next_ssrc();
                let Some(call) = self.calls.get_mut(&friend) else {
                    let _ = self.msi.hangup(friend);
                    return;
                };
                if !call.prepare(now, self.codecs.as_ref(), ssrc) {
                    let _ = self.msi.hangup(friend);
                    self.end(friend, FriendCallState::ERROR);
                    return;
                }
                call.next_report_check = now;
                self.out.event(AvEvent::State {
                    friend,
                    state: FriendCallState(u32::from(caps)),
                });
            }
            MsiEvent::Capabilities { friend, caps } => {
                if self.calls.contains_key(&friend) {
                    self.out.event(AvEvent::State {
                        friend,
                        state: FriendCallState(u32::from(caps)),
                    });
                }
            }
            MsiEvent::End { friend } => self.end(friend, FriendCallState::FINISHED),
            MsiEvent::Error { friend, .. } | MsiEvent::PeerTimeout { friend } => {
                self.end(friend, FriendCallState::ERROR)
            }
        }
    }

    /// The call ends with `state` told to the application (when it had heard of the call).
    fn end(&mut self, friend: u32, state: u32) {
        if self.calls.remove(&friend).is_some() {
            self.out.event(AvEvent::State {
                friend,
                state: FriendCallState(state),
            });
        }
    }
}

/// The call with `friend` if it is active and sends that kind to a peer that takes it
/// (toxav.c's checks before encoding a frame, in its order).
fn sending_call<'a>(
    calls: &'a mut BTreeMap<u32, Call>,
    msi: &Msi,
    friend: u32,
    video: bool,
) -> Result<&'a mut Call, SendFrameError> {
    let active = msi.call_state(friend) == MsiCallState::Active;
    let peer = msi.peer_capabilities(friend);
    let call = calls
        .get_mut(&friend)
        .filter(|c| c.active() && active)
        .ok_or(SendFrameError::FriendNotInCall)?;
    let (rate, send_bit, recv_bit) = if video {
        (call.video_kbps, CAP_SEND_VIDEO, CAP_RECV_VIDEO)
    } else {
        (call.audio_kbps, CAP_SEND_AUDIO, CAP_RECV_AUDIO)
    };
    if rate == 0 || call.self_caps & send_bit == 0 || peer & recv_bit == 0 {
        return Err(SendFrameError::PayloadTypeDisabled);
    }
    Ok(call)
}

fn suggestion_event(friend: u32, s: Suggestion) -> AvEvent {
    match s {
        Suggestion::Audio(bit_rate) => AvEvent::AudioBitRate { friend, bit_rate },
        Suggestion::Video(bit_rate) => AvEvent::VideoBitRate { friend, bit_rate },
    }
}

/// toxav.c `audio_bit_rate_invalid`: Opus' 6..=510 kbit/s (RFC 6716 §2.1.1).
fn audio_bit_rate_invalid(kbps: u32) -> bool {
    !(6..=510).contains(&kbps)
}

/// toxav.c `video_bit_rate_invalid`: any `u32` is valid in 0.2.18 (it tests
/// `bit_rate > UINT32_MAX`); the product with 1000 the encoder receives saturates.
fn video_bit_rate_invalid(_kbps: u32) -> bool {
    false
}

#[cfg(test)]
mod tests_calls;
#[cfg(test)]
mod tests_codecs;
#[cfg(test)]
mod tests_fuzz;
#[cfg(test)]
mod tests_media;
#[cfg(test)]
mod tests_support;
