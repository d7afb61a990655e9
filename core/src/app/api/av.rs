//! Calls on the [`Tox`] handle: toxav.h's calls (`toxav_new`, `toxav_call`, `toxav_answer`,
//! `toxav_call_control`, the bit-rate setters and the frame senders) and group audio as
//! async methods.
//!
//! Each method runs one command on the node's thread through [`Tox::with_node`]. What
//! happens in the calls arrives in the handle's event stream as
//! [`NodeEvent::Av`](crate::node::NodeEvent::Av) with an [`AvEvent`](crate::av::AvEvent)
//! (a friend calls, a call's state changed, a decoded audio or video frame, a suggested bit
//! rate) and group audio as
//! [`NodeEvent::ConferenceAudio`](crate::node::NodeEvent::ConferenceAudio). Frames are
//! buffers the caller fills: interleaved `i16` samples, YUV 4:2:0 planes ([`YuvFrame`]).
//! Friends are named by their [`FriendNumber`]; the engine's events carry its `.0`.
//! See `examples/answering_machine.rs`.

use super::{Tox, ToxError};
use crate::av::codec::{CodecFactory, YuvFrame};
use crate::av::{AvStats, CallControl};
use crate::conference::ConferenceNumber;
use crate::node::FriendNumber;

/// A picture owned for its trip to the node's thread.
struct OwnedPicture {
    width: u16,
    height: u16,
    y: Vec<u8>,
    u: Vec<u8>,
    v: Vec<u8>,
}

impl Tox {
    /// Turns calls on (`toxav_new`) with the codecs calls are made with
    /// ([`SystemCodecs`](crate::av::codec::SystemCodecs) for libopus and libvpx). `false`
    /// when they were on already (`TOXAV_ERR_NEW_MULTIPLE`).
    pub async fn enable_calls(&self, codecs: Box<dyn CodecFactory>) -> Result<bool, ToxError> {
        self.with_node(move |n, _| n.enable_av(codecs)).await
    }

    /// Hangs up every call and turns calls off (`toxav_kill`).
    pub async fn disable_calls(&self) -> Result<(), ToxError> {
        self.with_node(move |n, now| n.disable_av(now)).await
    }

    /// Calls an online friend (`toxav_call`); a bit rate of 0 sends none of that kind.
    pub async fn call(
        &self,
        friend: FriendNumber,
        audio_bit_rate: u32,
        video_bit_rate: u32,
    ) -> Result<(), ToxError> {
        Ok(self
            .with_node(move |n, now| {
                n.av_command(now, friend, |c, f| {
                    c.call(now, f, audio_bit_rate, video_bit_rate)
                })
            })
            .await???)
    }

    /// Answers a friend's call (`toxav_answer`).
    pub async fn answer(
        &self,
        friend: FriendNumber,
        audio_bit_rate: u32,
        video_bit_rate: u32,
    ) -> Result<(), ToxError> {
        Ok(self
            .with_node(move |n, now| {
                n.av_command(now, friend, |c, f| {
                    c.answer(now, f, audio_bit_rate, video_bit_rate)
                })
            })
            .await???)
    }

    /// Pauses, resumes, hangs up, mutes or hides (`toxav_call_control`). Hanging up works on
    /// a friend that just went offline too.
    pub async fn call_control(
        &self,
        friend: FriendNumber,
        control: CallControl,
    ) -> Result<(), ToxError> {
        Ok(self
            .with_node(move |n, now| {
                n.av_command_any(now, friend, |c, f| c.control(now, f, control))
            })
            .await???)
    }

    /// Changes the audio bit rate of a call (`toxav_audio_set_bit_rate`; 0: send none).
    pub async fn set_audio_bit_rate(
        &self,
        friend: FriendNumber,
        bit_rate: u32,
    ) -> Result<(), ToxError> {
        Ok(self
            .with_node(move |n, now| {
                n.av_command_any(now, friend, |c, f| c.set_audio_bit_rate(now, f, bit_rate))
            })
            .await???)
    }

    /// Changes the video bit rate of a call (`toxav_video_set_bit_rate`; 0: send none).
    pub async fn set_video_bit_rate(
        &self,
        friend: FriendNumber,
        bit_rate: u32,
    ) -> Result<(), ToxError> {
        Ok(self
            .with_node(move |n, now| {
                n.av_command_any(now, friend, |c, f| c.set_video_bit_rate(now, f, bit_rate))
            })
            .await???)
    }

    /// Sends one audio frame (`toxav_audio_send_frame`): `pcm` holds `sample_count ×
    /// channels` interleaved samples (20 ms at 48 kHz mono: 960).
    pub async fn send_audio(
        &self,
        friend: FriendNumber,
        pcm: &[i16],
        sample_count: usize,
        channels: u8,
        sampling_rate: u32,
    ) -> Result<(), ToxError> {
        let pcm = pcm.to_vec();
        Ok(self
            .with_node(move |n, now| {
                n.av_command(now, friend, |c, f| {
                    c.send_audio_frame(now, f, &pcm, sample_count, channels, sampling_rate)
                })
            })
            .await???)
    }

    /// Sends one video frame (`toxav_video_send_frame`).
    pub async fn send_video(
        &self,
        friend: FriendNumber,
        frame: &YuvFrame<'_>,
    ) -> Result<(), ToxError> {
        let picture = OwnedPicture {
            width: frame.width,
            height: frame.height,
            y: frame.y.to_vec(),
            u: frame.u.to_vec(),
            v: frame.v.to_vec(),
        };
        Ok(self
            .with_node(move |n, now| {
                let frame = YuvFrame {
                    width: picture.width,
                    height: picture.height,
                    y: &picture.y,
                    u: &picture.u,
                    v: &picture.v,
                };
                n.av_command(now, friend, |c, f| c.send_video_frame(now, f, &frame))
            })
            .await???)
    }

    /// The engine's counters (frames sent, received, concealed); `None` while calls are off.
    pub async fn call_stats(&self) -> Result<Option<AvStats>, ToxError> {
        self.with_node(|n, _| n.calls().map(|c| c.stats())).await
    }

    /// Creates an AV conference with its audio on (`toxav_add_av_groupchat`).
    pub async fn conference_new_av(&self) -> Result<ConferenceNumber, ToxError> {
        Ok(self.with_node(|n, now| n.conference_new_av(now)).await??)
    }

    /// Joins an AV conference a friend invited us to (`toxav_join_av_groupchat`).
    pub async fn conference_join_av(
        &self,
        friend: FriendNumber,
        cookie: &[u8],
    ) -> Result<ConferenceNumber, ToxError> {
        let cookie = cookie.to_vec();
        Ok(self
            .with_node(move |n, now| n.conference_join_av(now, friend, &cookie))
            .await??)
    }

    /// Turns an AV conference's audio on or off (`toxav_groupchat_enable_av` /
    /// `toxav_groupchat_disable_av`).
    pub async fn conference_set_audio(
        &self,
        conference: ConferenceNumber,
        enabled: bool,
    ) -> Result<(), ToxError> {
        Ok(self
            .with_node(move |n, now| n.conference_set_audio(now, conference, enabled))
            .await??)
    }

    /// Sends one frame of audio to an AV conference (`toxav_group_send_audio`).
    pub async fn conference_send_audio(
        &self,
        conference: ConferenceNumber,
        pcm: &[i16],
        samples: usize,
        channels: u8,
        sampling_rate: u32,
    ) -> Result<(), ToxError> {
        let pcm = pcm.to_vec();
        Ok(self
            .with_node(move |n, now| {
                n.conference_send_audio(now, conference, &pcm, samples, channels, sampling_rate)
            })
            .await??)
    }
}
