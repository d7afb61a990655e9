//! Calls on the node (toxav.c's place above Messenger): once enabled, MSI packets (69) and
//! the calls' lossy packets (192–196) of online friends go to [`Calls`], whose packets are
//! sent at once on the friend's session, lossy ones ahead of file chunks; a friend going
//! offline ends its call; the session's bandwidth and RTT estimates reach the engine.
//! Group audio rides on the conferences' lossy packet 199 ([`crate::av::group_audio`]).
//!
//! Routing follows Messenger.c: with calls off, a packet 69 reaches the application as a
//! custom lossless packet (`m_handle_packet` hands it to `m_callback_msi_packet`'s handler
//! only when toxav registered one) and lossy 192–196 are dropped (no RTP handler is
//! registered, `m_handle_lossy_packet`).
//!
//! Priority: media packets are lossy datagrams, which the session sends with the next
//! datagram out, ahead of any lossless data waiting for its pacer or window, and whose bytes
//! it charges to its pacer (`Connection::send_lossy`), so a file transfer on the same
//! friend yields the call its rate (docs/architecture.md, "Calls").

use std::collections::HashMap;
use std::time::Duration;

use rustox_net_crypto::{ConnectionStatus, Timestamp};

use super::event::NodeEvent;
use super::{FriendNumber, Node};
use crate::av::codec::CodecFactory;
use crate::av::group_audio::{GroupAudio, GROUP_AUDIO_PACKET_ID};
use crate::av::{AvTransmit, CallControl, Calls, PathEstimate};
use crate::conference::{ConferenceNumber, ConferenceType};

/// The lossy ids a call uses: RTP audio (192) and video (193) (rtp.h's `RTP_TYPE_*`), and
/// the bandwidth controller's reports (196, bwcontroller.c's `BWC_PACKET_ID`); toxav
/// registers no handler for 194 and 195, so they are dropped like any unhandled lossy id.
pub const CALL_LOSSY_IDS: [u8; 3] = [192, 193, 196];

/// How often the path estimate of a friend in a call is fed to the engine even when it did
/// not change: the engine's rate decisions age with it.
const PATH_REFRESH: Duration = Duration::from_millis(100);

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

/// The node's share of calls: the engine when enabled, the path estimates it was last
/// given, and the group audio of AV conferences.
#[derive(Default)]
pub(super) struct AvState {
    /// The engine; `None` while calls are off.
    calls: Option<Calls>,
    /// Per friend in a call: the path estimate last given to the engine, and when.
    paths: HashMap<u32, (PathEstimate, Timestamp)>,
    /// The codecs group audio encodes and decodes with (`None`: the default ones).
    group_codecs: Option<Box<dyn CodecFactory>>,
    /// AV conferences whose audio is on.
    groups: HashMap<ConferenceNumber, GroupAudio>,
}

impl std::fmt::Debug for AvState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AvState")
            .field("calls", &self.calls.is_some())
            .field("groups", &self.groups.len())
            .finish_non_exhaustive()
    }
}

/// The codecs group audio uses unless told otherwise: the system's libopus when the
/// `codecs` feature is on.
fn default_group_codecs() -> Option<Box<dyn CodecFactory>> {
    #[cfg(feature = "codecs")]
    {
        Some(Box::new(crate::av::codec::SystemCodecs))
    }
    #[cfg(not(feature = "codecs"))]
    {
        None
    }
}

impl Node {
    /// `toxav_new`: calls on. From now on packets 69 and 192–196 go to the engine; `false`
    /// when already on (`TOXAV_ERR_NEW_MULTIPLE`).
    pub fn enable_av(&mut self, codecs: Box<dyn CodecFactory>) -> bool {
        if self.av.calls.is_some() {
            return false;
        }
        self.av.calls = Some(Calls::new(codecs));
        self.av.paths.clear();
        true
    }

    /// `toxav_kill`: every call hung up, calls off. The hang-ups go out first
    /// (`msi_kill` sends each peer its call's end).
    pub fn disable_av(&mut self, now: Timestamp) {
        let Some(calls) = self.av.calls.as_mut() else {
            return;
        };
        for number in self.friends.numbers() {
            if calls.in_call(number.0) {
                let _ = calls.control(now, number.0, CallControl::Cancel);
            }
        }
        self.flush_av(now);
        // The engine's last events (the calls' ends) are the application's too.
        self.av.calls = None;
        self.av.paths.clear();
    }

    /// The engine, for queries (None: calls are off).
    pub fn calls(&self) -> Option<&Calls> {
        self.av.calls.as_ref()
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
        if self.av.calls.is_none() {
            return Err(AvAccessError::Disabled);
        }
        let f = self
            .friends
            .get(friend)
            .ok_or(AvAccessError::FriendNotFound)?;
        if !f.online {
            return Err(AvAccessError::FriendNotConnected);
        }
        self.av_command_any(now, friend, command)
    }

    /// Like [`Node::av_command`] without the online check (hang-ups and queries of a call
    /// whose friend just went offline).
    pub fn av_command_any<T>(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        command: impl FnOnce(&mut Calls, u32) -> T,
    ) -> Result<T, AvAccessError> {
        if self.friends.get(friend).is_none() {
            return Err(if self.av.calls.is_none() {
                AvAccessError::Disabled
            } else {
                AvAccessError::FriendNotFound
            });
        }
        let calls = self.av.calls.as_mut().ok_or(AvAccessError::Disabled)?;
        let result = command(calls, friend.0);
        // A call that just started gets the path at once, not at the next refresh.
        self.feed_paths(now);
        self.flush_av(now);
        Ok(result)
    }

    // ----- group audio -------------------------------------------------------------------

    /// The codecs group audio encodes and decodes with, instead of the default ones (the
    /// simulator's stand-in).
    pub fn set_group_audio_codecs(&mut self, codecs: Box<dyn CodecFactory>) {
        self.av.group_codecs = Some(codecs);
    }

    /// `toxav_add_av_groupchat`: a new AV conference (group audio on).
    pub fn conference_new_av(
        &mut self,
        now: Timestamp,
    ) -> Result<ConferenceNumber, crate::conference::ConferenceError> {
        let conference = self.conference_new(now, ConferenceType::Av)?;
        self.av.groups.insert(conference, GroupAudio::new());
        Ok(conference)
    }

    /// `toxav_groupchat_enable_av` / `disable_av`. Enabling audio that is on, or disabling
    /// audio that is off, fails as groupav.c's `groupchat_enable_av` / `_disable_av` do.
    pub fn conference_set_audio(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        enabled: bool,
    ) -> Result<(), GroupAudioError> {
        let _ = now;
        match self.conferences.kind(conference) {
            Ok(ConferenceType::Av) => {}
            Ok(_) => return Err(GroupAudioError::NotAv),
            Err(_) => return Err(GroupAudioError::NotFound),
        }
        let on = self.av.groups.contains_key(&conference);
        match (enabled, on) {
            (true, false) => {
                self.av.groups.insert(conference, GroupAudio::new());
                Ok(())
            }
            (false, true) => {
                self.av.groups.remove(&conference);
                Ok(())
            }
            _ => Err(GroupAudioError::NotAv),
        }
    }

    /// `toxav_groupchat_av_enabled`.
    pub fn conference_audio_enabled(&self, conference: ConferenceNumber) -> bool {
        self.av.groups.contains_key(&conference)
            && self.conferences.kind(conference) == Ok(ConferenceType::Av)
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
        if self.conferences.kind(conference).is_err() {
            return Err(GroupAudioError::NotFound);
        }
        if !self.conference_audio_enabled(conference) {
            return Err(GroupAudioError::NotAv);
        }
        let default = default_group_codecs();
        let codecs = self
            .av
            .group_codecs
            .as_deref()
            .or(default.as_deref())
            .ok_or(GroupAudioError::SendFailed)?;
        let group = self
            .av
            .groups
            .get_mut(&conference)
            .ok_or(GroupAudioError::NotAv)?;
        let packet = group
            .encode(codecs, pcm, samples, channels, sampling_rate)
            .map_err(|e| match e {
                crate::av::group_audio::GroupAudioSendError::Invalid => GroupAudioError::Invalid,
                crate::av::group_audio::GroupAudioSendError::Encode => GroupAudioError::SendFailed,
            })?;
        self.conference_send_lossy(now, conference, &packet)
            .map_err(|_| GroupAudioError::SendFailed)?;
        if let Some(group) = self.av.groups.get_mut(&conference) {
            group.on_sent();
        }
        Ok(())
    }

    // ----- what the conferences and sessions bring -------------------------------------

    /// A conference's lossy packet (header removed) from `peer`: group audio when the
    /// conference's audio is on; `None` when it was taken, else the packet back for the
    /// application.
    pub(super) fn group_audio_packet(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        peer: u32,
        data: Vec<u8>,
    ) -> Option<Vec<u8>> {
        if data.first() != Some(&GROUP_AUDIO_PACKET_ID) || !self.av.groups.contains_key(&conference)
        {
            return Some(data);
        }
        let default = default_group_codecs();
        // Without codecs the audio is not heard, and not the application's either.
        let codecs = self.av.group_codecs.as_deref().or(default.as_deref())?;
        let Some(group) = self.av.groups.get_mut(&conference) else {
            return Some(data);
        };
        let frames = group.handle_packet(now, codecs, peer, &data);
        for frame in frames {
            self.push_event(NodeEvent::ConferenceAudio {
                conference,
                peer: frame.peer,
                pcm: frame.pcm,
                channels: frame.channels,
                sampling_rate: frame.sampling_rate,
            });
        }
        None
    }

    /// The conference's peers changed: its group audio's per-peer state starts over.
    pub(super) fn group_audio_peers_changed(&mut self, conference: ConferenceNumber) {
        if let Some(group) = self.av.groups.get_mut(&conference) {
            group.reset_peers();
        }
    }

    /// The conference is gone: so is its audio.
    pub(super) fn group_audio_forget(&mut self, conference: Option<ConferenceNumber>) {
        match conference {
            Some(c) => {
                self.av.groups.remove(&c);
            }
            None => self.av.groups.clear(),
        }
    }

    /// Whether calls take MSI packets (else they are the application's custom packets).
    pub(super) fn av_enabled(&self) -> bool {
        self.av.calls.is_some()
    }

    /// An MSI packet (69) from an online friend, with calls on.
    pub(super) fn av_msi_packet(&mut self, now: Timestamp, friend: FriendNumber, p: &[u8]) {
        if let Some(calls) = self.av.calls.as_mut() {
            calls.handle_msi(now, friend.0, p);
            self.feed_paths(now);
            self.flush_av(now);
        }
    }

    /// A lossy packet of a call (192, 193, 196) from a friend: to the engine when calls are
    /// on and the friend is online, else dropped (`m_handle_lossy_packet` without a handler).
    pub(super) fn av_media_packet(&mut self, now: Timestamp, friend: FriendNumber, p: &[u8]) {
        let online = self.friends.get(friend).is_some_and(|f| f.online);
        match self.av.calls.as_mut() {
            Some(calls) if online => {
                calls.handle_media(now, friend.0, p);
                self.flush_av(now);
            }
            _ => self.stats.packets_ignored = self.stats.packets_ignored.saturating_add(1),
        }
    }

    /// The friend went offline (or was deleted): its call ends (`MSI_ON_PEERTIMEOUT`).
    pub(super) fn av_friend_offline(&mut self, now: Timestamp, friend: FriendNumber) {
        if let Some(calls) = self.av.calls.as_mut() {
            calls.handle_friend_offline(now, friend.0);
            self.av.paths.remove(&friend.0);
            self.flush_av(now);
        }
    }

    /// When the engine's timers, or the next path refresh, are due.
    pub(super) fn av_poll_timeout(&self) -> Option<Timestamp> {
        let calls = self.av.calls.as_ref()?;
        let refresh = self
            .av
            .paths
            .values()
            .map(|(_, at)| *at + PATH_REFRESH)
            .min();
        [calls.poll_timeout(), refresh].into_iter().flatten().min()
    }

    /// Runs the engine's timers and the path refresh, and sends what they queued.
    pub(super) fn av_timers(&mut self, now: Timestamp) {
        let Some(calls) = self.av.calls.as_mut() else {
            return;
        };
        if calls.poll_timeout().is_some_and(|t| t <= now) {
            calls.handle_timeout(now);
        }
        self.feed_paths(now);
        self.flush_av(now);
    }

    /// Gives the engine each call's path estimate from its friend's session: for a call
    /// that has none yet, when it changed, and [`PATH_REFRESH`] after the last one.
    fn feed_paths(&mut self, now: Timestamp) {
        let Some(calls) = self.av.calls.as_mut() else {
            return;
        };
        if calls.call_count() == 0 {
            self.av.paths.clear();
            return;
        }
        for (number, f) in self.friends.iter() {
            if !calls.in_call(number.0) {
                self.av.paths.remove(&number.0);
                continue;
            }
            let Some(conn) = f
                .session
                .filter(|_| f.online)
                .and_then(|id| self.endpoint.connection(id))
                .filter(|c| c.status() == ConnectionStatus::Established)
            else {
                continue;
            };
            let transport = conn.transport();
            let estimate = PathEstimate {
                rtt: transport.smoothed_rtt().unwrap_or_default(),
                bandwidth_bps: transport
                    .bandwidth_capacity()
                    .unwrap_or(0)
                    .saturating_mul(8),
            };
            let due = match self.av.paths.get(&number.0) {
                Some((last, at)) => {
                    *last != estimate || now.saturating_duration_since(*at) >= PATH_REFRESH
                }
                None => true,
            };
            if due {
                calls.handle_path(now, number.0, estimate);
                self.av.paths.insert(number.0, (estimate, now));
            }
        }
    }

    /// Sends every packet the engine queued on its friend's session (lossless MSI,
    /// lossy media) and passes its events on. A packet for a friend without a session is
    /// dropped: the engine learns of it through `handle_friend_offline`.
    pub(super) fn flush_av(&mut self, now: Timestamp) {
        let Some(calls) = self.av.calls.as_mut() else {
            return;
        };
        let mut out = Vec::new();
        while let Some(t) = calls.poll_transmit() {
            out.push(t);
        }
        let mut events = Vec::new();
        while let Some(e) = calls.poll_event() {
            events.push(e);
        }
        for AvTransmit {
            friend,
            lossless,
            data,
        } in out
        {
            let Ok((conn, _)) = self.online_session(FriendNumber(friend)) else {
                continue;
            };
            // A refused send (queue full) loses a media packet, as a lost datagram would;
            // the engine's signalling has its own timeouts.
            let _ = if lossless {
                conn.send_lossless(now, &data).map(|_| ())
            } else {
                conn.send_lossy(now, &data)
            };
        }
        for e in events {
            self.push_event(NodeEvent::Av(e));
        }
    }
}
