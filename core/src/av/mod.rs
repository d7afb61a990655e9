//! Calls: ToxAV as c-toxcore 0.2.18 has it (`toxav/`), sans-IO (docs/protocol.md §13).
//!
//! A call rides on a friend's session: signalling (MSI) on lossless packet 69, audio and
//! video (RTP with c-toxcore's 80-byte header) on lossy packets 192 and 193, and the
//! receiver's loss reports on lossy 196. [`Calls`] never sees a socket: the node feeds it
//! the packets of those ids ([`Calls::handle_msi`], [`Calls::handle_media`]), friends going
//! offline and the session's path estimate, and the user's commands, and pulls out
//! [`AvTransmit`]s and [`AvEvent`]s. Codecs are behind the traits of [`codec`], so the
//! simulator runs calls on a deterministic stand-in and the library on libopus and libvpx.
//!
//! Group audio (the old conferences' audio, `groupav.c`) is [`group_audio`]: it rides on the
//! conferences' lossy packet 199.

pub mod bwc;
pub mod codec;
mod codec_standin;
#[cfg(feature = "codecs")]
mod codec_system;
mod engine;
pub mod group_audio;
pub mod jitter;
pub mod msi;
pub mod rtp;
pub mod signal;

pub use engine::{
    AnswerError, AvEvent, AvStats, AvTransmit, BitRateError, CallControl, CallError, Calls,
    ControlError, FriendCallState, PathEstimate, SendFrameError, FRAME_DURATIONS_TENTHS_MS,
    MAX_CALLS, MAX_QUEUED_EVENTS, MAX_QUEUED_TRANSMITS, PACKET_ID_KEYFRAME_REQUEST, SAMPLING_RATES,
};
