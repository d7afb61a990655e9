//! [`Calls`]: every call of one node, sans-IO (toxav.c's `ToxAV` without its threads).
//!
//! Friends are named by their number (the node's `FriendNumber.0`); the node has checked
//! that a friend exists and is online before a command reaches this engine (toxav.c's
//! `FRIEND_NOT_FOUND` / `FRIEND_NOT_CONNECTED` are the node's errors).

use std::time::Duration;

use rustox_net_crypto::Timestamp;

use super::codec::{CodecFactory, YuvFrame};

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

/// `Toxav_Friend_Call_State` bits (toxav.h), as `toxav_call_state_cb` hands them over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FriendCallState(pub u32);

impl FriendCallState {
    /// `TOXAV_FRIEND_CALL_STATE_ERROR`
    pub const ERROR: u32 = 1;
    /// `TOXAV_FRIEND_CALL_STATE_FINISHED`
    pub const FINISHED: u32 = 2;
    /// `TOXAV_FRIEND_CALL_STATE_SENDING_A`
    pub const SENDING_A: u32 = 4;
    /// `TOXAV_FRIEND_CALL_STATE_SENDING_V`
    pub const SENDING_V: u32 = 8;
    /// `TOXAV_FRIEND_CALL_STATE_ACCEPTING_A`
    pub const ACCEPTING_A: u32 = 16;
    /// `TOXAV_FRIEND_CALL_STATE_ACCEPTING_V`
    pub const ACCEPTING_V: u32 = 32;
}

/// `toxav_call`'s refusals that are the engine's (`Toxav_Err_Call`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// `FRIEND_ALREADY_IN_CALL`
    #[error("already in a call with this friend")]
    AlreadyInCall,
    /// `INVALID_BIT_RATE`
    #[error("invalid bit rate")]
    InvalidBitRate,
    /// `MALLOC`: a codec could not be created.
    #[error("the call's codecs could not be created")]
    Codec,
    /// `TOO_MANY`-like bound: more calls than [`Calls`] keeps (c-toxcore has none; `MALLOC`).
    #[error("too many calls")]
    TooMany,
}

/// `toxav_answer`'s refusals that are the engine's (`Toxav_Err_Answer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// `CODEC_INITIALIZATION`
    #[error("the call's codecs could not be created")]
    CodecInitialization,
    /// `FRIEND_NOT_CALLING`
    #[error("the friend is not calling")]
    FriendNotCalling,
    /// `INVALID_BIT_RATE`
    #[error("invalid bit rate")]
    InvalidBitRate,
}

/// `toxav_call_control`'s refusals that are the engine's (`Toxav_Err_Call_Control`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// `FRIEND_NOT_IN_CALL`
    #[error("not in a call with this friend")]
    FriendNotInCall,
    /// `INVALID_TRANSITION`
    #[error("that control does not apply in the call's state")]
    InvalidTransition,
}

/// The bit-rate setters' refusals (`Toxav_Err_Bit_Rate_Set`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BitRateError {
    /// `INVALID_BIT_RATE`
    #[error("invalid bit rate")]
    InvalidBitRate,
    /// `FRIEND_NOT_IN_CALL`
    #[error("not in a call with this friend")]
    FriendNotInCall,
}

/// The frame senders' refusals (`Toxav_Err_Send_Frame`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendFrameError {
    /// `FRIEND_NOT_IN_CALL`
    #[error("not in a call with this friend")]
    FriendNotInCall,
    /// `INVALID`: bad sample count, channels, rate or picture size.
    #[error("invalid frame")]
    Invalid,
    /// `PAYLOAD_TYPE_DISABLED`: the call does not send this kind (bit rate 0, muted, hidden).
    #[error("this kind is disabled in the call")]
    PayloadTypeDisabled,
    /// `RTP_FAILED`: the encoder failed.
    #[error("encoding or packetising failed")]
    RtpFailed,
}

/// A packet for a friend's session: lossless (MSI, 69) or lossy (192, 193, 196), id byte
/// first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvTransmit {
    /// The friend's number.
    pub friend: u32,
    /// Lossless (MSI) or lossy (media, reports).
    pub lossless: bool,
    /// The packet, its id first.
    pub data: Vec<u8>,
}

/// What the transport measures of a friend's path, which sets the call's sending rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PathEstimate {
    /// Smoothed round-trip time.
    pub rtt: Duration,
    /// The congestion controller's bandwidth estimate, bits per second (0: none yet).
    pub bandwidth_bps: u64,
}

/// What happened in the calls (toxav.h's callbacks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AvEvent {
    /// `toxav_call_cb`: a friend calls.
    Call {
        /// Who.
        friend: u32,
        /// The caller sends audio.
        audio: bool,
        /// The caller sends video.
        video: bool,
    },
    /// `toxav_call_state_cb`: a call's state changed ([`FriendCallState`] bits).
    State {
        /// Whose call.
        friend: u32,
        /// The new state.
        state: FriendCallState,
    },
    /// `toxav_audio_bit_rate_cb`: the engine suggests this audio bit rate.
    AudioBitRate {
        /// Whose call.
        friend: u32,
        /// Bits per second.
        bit_rate: u32,
    },
    /// `toxav_video_bit_rate_cb`: the engine suggests this video bit rate.
    VideoBitRate {
        /// Whose call.
        friend: u32,
        /// Bits per second.
        bit_rate: u32,
    },
    /// `toxav_audio_receive_frame_cb`: decoded audio, interleaved.
    AudioFrame {
        /// From whom.
        friend: u32,
        /// Interleaved samples (`sample_count * channels`).
        pcm: Vec<i16>,
        /// Channels (1 or 2).
        channels: u8,
        /// Hz.
        sampling_rate: u32,
    },
    /// `toxav_video_receive_frame_cb`: a decoded picture, planes tightly packed (strides
    /// equal widths: `width` for Y, `width / 2` rounded up for U and V).
    VideoFrame {
        /// From whom.
        friend: u32,
        /// Pixels.
        width: u16,
        /// Pixels.
        height: u16,
        /// Luma plane.
        y: Vec<u8>,
        /// Chroma plane U.
        u: Vec<u8>,
        /// Chroma plane V.
        v: Vec<u8>,
    },
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
}

/// Every call of one node (toxav.c's `ToxAV`).
pub struct Calls {
    codecs: Box<dyn CodecFactory>,
}

impl Calls {
    /// An engine creating its codecs with `codecs`.
    pub fn new(codecs: Box<dyn CodecFactory>) -> Self {
        Self { codecs }
    }

    /// `toxav_call`: calls an online friend; a bit rate of 0 disables sending that kind.
    pub fn call(
        &mut self,
        now: Timestamp,
        friend: u32,
        audio_bit_rate: u32,
        video_bit_rate: u32,
    ) -> Result<(), CallError> {
        let _ = (now, friend, audio_bit_rate, video_bit_rate, &self.codecs);
        todo!()
    }

    /// `toxav_answer`: answers a friend's call.
    pub fn answer(
        &mut self,
        now: Timestamp,
        friend: u32,
        audio_bit_rate: u32,
        video_bit_rate: u32,
    ) -> Result<(), AnswerError> {
        let _ = (now, friend, audio_bit_rate, video_bit_rate);
        todo!()
    }

    /// `toxav_call_control`.
    pub fn control(
        &mut self,
        now: Timestamp,
        friend: u32,
        control: CallControl,
    ) -> Result<(), ControlError> {
        let _ = (now, friend, control);
        todo!()
    }

    /// `toxav_audio_set_bit_rate` (0 disables sending audio).
    pub fn set_audio_bit_rate(
        &mut self,
        now: Timestamp,
        friend: u32,
        bit_rate: u32,
    ) -> Result<(), BitRateError> {
        let _ = (now, friend, bit_rate);
        todo!()
    }

    /// `toxav_video_set_bit_rate` (0 disables sending video).
    pub fn set_video_bit_rate(
        &mut self,
        now: Timestamp,
        friend: u32,
        bit_rate: u32,
    ) -> Result<(), BitRateError> {
        let _ = (now, friend, bit_rate);
        todo!()
    }

    /// `toxav_audio_send_frame`: encodes interleaved `pcm` (`sample_count * channels`
    /// samples) and queues its packets.
    pub fn send_audio_frame(
        &mut self,
        now: Timestamp,
        friend: u32,
        pcm: &[i16],
        sample_count: usize,
        channels: u8,
        sampling_rate: u32,
    ) -> Result<(), SendFrameError> {
        let _ = (now, friend, pcm, sample_count, channels, sampling_rate);
        todo!()
    }

    /// `toxav_video_send_frame`: encodes a YUV 4:2:0 picture and queues its packets.
    pub fn send_video_frame(
        &mut self,
        now: Timestamp,
        friend: u32,
        frame: &YuvFrame<'_>,
    ) -> Result<(), SendFrameError> {
        let _ = (now, friend, frame);
        todo!()
    }

    /// A lossless MSI packet (id 69 first) from an online friend.
    pub fn handle_msi(&mut self, now: Timestamp, friend: u32, packet: &[u8]) {
        let _ = (now, friend, packet);
        todo!()
    }

    /// A lossy packet of a call (id 192, 193 or 196 first) from an online friend.
    pub fn handle_media(&mut self, now: Timestamp, friend: u32, packet: &[u8]) {
        let _ = (now, friend, packet);
        todo!()
    }

    /// The friend went offline: its call ends (msi.c's `MSI_ON_PEERTIMEOUT`).
    pub fn handle_friend_offline(&mut self, now: Timestamp, friend: u32) {
        let _ = (now, friend);
        todo!()
    }

    /// What the friend's session measures of the path (bandwidth, RTT).
    pub fn handle_path(&mut self, now: Timestamp, friend: u32, path: PathEstimate) {
        let _ = (now, friend, path);
        todo!()
    }

    /// Runs the timers: audio playout from the jitter buffer, loss reports, rate changes.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        let _ = now;
        todo!()
    }

    /// The next packet to send.
    pub fn poll_transmit(&mut self) -> Option<AvTransmit> {
        todo!()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<AvEvent> {
        todo!()
    }

    /// When [`Calls::handle_timeout`] is next due (None: no call).
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        todo!()
    }

    /// `toxav_iteration_interval`: how soon the client should iterate (200 ms without a
    /// call, as toxav.h says).
    pub fn iteration_interval(&self) -> Duration {
        todo!()
    }

    /// Whether a call with `friend` exists (ringing, or in progress).
    pub fn in_call(&self, friend: u32) -> bool {
        let _ = friend;
        todo!()
    }

    /// Calls that exist.
    pub fn call_count(&self) -> usize {
        todo!()
    }

    /// The engine's counters.
    pub fn stats(&self) -> AvStats {
        todo!()
    }
}
