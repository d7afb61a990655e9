//! Calls on the node (toxav.c's place above Messenger): once enabled, MSI packets (69) and
//! the calls' lossy packets (192–196) of online friends go to [`Calls`], whose packets are
//! sent at once on the friend's session, lossy ones ahead of file chunks; a friend going
//! offline ends its call; the session's bandwidth and RTT estimates reach the engine.
//! Group audio rides on the conferences' lossy packet 199 ([`crate::av::group_audio`]).

use rustox_net_crypto::Timestamp;

use super::{FriendNumber, Node};
use crate::av::codec::CodecFactory;
use crate::av::Calls;
use crate::conference::ConferenceNumber;

/// Why a call command did not reach the engine (toxav.h's errors that are the node's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AvAccessError {
    /// Calls are not enabled on this node ([`Node::enable_av`]).
    #[error("calls are not enabled")]
    Disabled,
    /// `FRIEND_NOT_FOUND`
    #[error("no such friend")]
    FriendNotFound,
    /// `FRIEND_NOT_CONNECTED`
    #[error("the friend is not online")]
    FriendNotConnected,
}

/// Group audio's refusals (groupav.c's -1 cases).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GroupAudioError {
    /// No such conference.
    #[error("no such conference")]
    NotFound,
    /// The conference is a text one, or its audio is disabled.
    #[error("the conference has no audio")]
    NotAv,
    /// Bad sample count, channels or rate.
    #[error("invalid audio frame")]
    Invalid,
    /// Encoding or sending failed.
    #[error("sending failed")]
    SendFailed,
}

impl Node {
    /// `toxav_new`: calls on. From now on packets 69 and 192–196 go to the engine; `false`
    /// when already on (`TOXAV_ERR_NEW_MULTIPLE`).
    pub fn enable_av(&mut self, codecs: Box<dyn CodecFactory>) -> bool {
        let _ = codecs;
        todo!()
    }

    /// `toxav_kill`: every call hung up, calls off.
    pub fn disable_av(&mut self, now: Timestamp) {
        let _ = now;
        todo!()
    }

    /// The engine, for queries (None: calls are off).
    pub fn calls(&self) -> Option<&Calls> {
        todo!()
    }

    /// Runs `command` on the engine for an existing, online friend (checked in that order,
    /// as toxav.c does), then sends what it queued. `command` gets the friend's number as
    /// the engine names it.
    pub fn av_command<T>(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        command: impl FnOnce(&mut Calls, u32) -> T,
    ) -> Result<T, AvAccessError> {
        let _ = (now, friend, command);
        todo!()
    }

    /// Like [`Node::av_command`] without the online check (hang-ups and queries of a call
    /// whose friend just went offline).
    pub fn av_command_any<T>(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        command: impl FnOnce(&mut Calls, u32) -> T,
    ) -> Result<T, AvAccessError> {
        let _ = (now, friend, command);
        todo!()
    }

    /// `toxav_add_av_groupchat`: a new AV conference (group audio on).
    pub fn conference_new_av(
        &mut self,
        now: Timestamp,
    ) -> Result<ConferenceNumber, crate::conference::ConferenceError> {
        let _ = now;
        todo!()
    }

    /// `toxav_groupchat_enable_av` / `disable_av`.
    pub fn conference_set_audio(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        enabled: bool,
    ) -> Result<(), GroupAudioError> {
        let _ = (now, conference, enabled);
        todo!()
    }

    /// `toxav_groupchat_av_enabled`.
    pub fn conference_audio_enabled(&self, conference: ConferenceNumber) -> bool {
        let _ = conference;
        todo!()
    }

    /// `toxav_group_send_audio`: encodes interleaved `pcm` and sends it to the conference.
    pub fn conference_send_audio(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        pcm: &[i16],
        samples: usize,
        channels: u8,
        sampling_rate: u32,
    ) -> Result<(), GroupAudioError> {
        let _ = (now, conference, pcm, samples, channels, sampling_rate);
        todo!()
    }
}
