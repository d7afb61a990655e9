//! The engine's outputs: the events (toxav.h's callbacks) and the packets for the friends'
//! sessions, and the bounded queues where they wait to be polled. An application that stops
//! polling loses the newest outputs (counted), never the engine's memory.

use std::collections::VecDeque;

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
        /// kbit/s (toxav.h's unit).
        bit_rate: u32,
    },
    /// `toxav_video_bit_rate_cb`: the engine suggests this video bit rate.
    VideoBitRate {
        /// Whose call.
        friend: u32,
        /// kbit/s (toxav.h's unit).
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

/// Packets queued at most: a second of a 5 Mbit/s video call in full-size lossy packets.
pub const MAX_QUEUED_TRANSMITS: usize = 4096;
/// Events queued at most: 20 s of one call's 20 ms audio frames.
pub const MAX_QUEUED_EVENTS: usize = 1024;

/// The queues.
#[derive(Debug, Default)]
pub(super) struct Outbox {
    transmits: VecDeque<AvTransmit>,
    events: VecDeque<AvEvent>,
    pub transmits_dropped: u64,
    pub events_dropped: u64,
}

impl Outbox {
    /// Queues a packet for `friend`, id byte first.
    pub fn transmit(&mut self, friend: u32, lossless: bool, data: Vec<u8>) {
        // Signalling must not be lost to a full queue of media: it may take the place of the
        // oldest lossy packet.
        if self.transmits.len() >= MAX_QUEUED_TRANSMITS {
            let lossy = lossless
                .then(|| self.transmits.iter().position(|t| !t.lossless))
                .flatten();
            match lossy {
                Some(i) => {
                    self.transmits.remove(i);
                }
                None => {
                    self.transmits_dropped += 1;
                    return;
                }
            }
            self.transmits_dropped += 1;
        }
        self.transmits.push_back(AvTransmit {
            friend,
            lossless,
            data,
        });
    }

    /// Queues an event.
    pub fn event(&mut self, event: AvEvent) {
        if self.events.len() >= MAX_QUEUED_EVENTS {
            self.events_dropped += 1;
            return;
        }
        self.events.push_back(event);
    }

    pub fn poll_transmit(&mut self) -> Option<AvTransmit> {
        self.transmits.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<AvEvent> {
        self.events.pop_front()
    }
}
