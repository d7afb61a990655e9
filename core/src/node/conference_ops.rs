//! The node's conference calls: the tox.h commands, checked against the friend list and
//! handed to [`crate::conference::Conferences`], whose link actions the node carries out.

use rustox_net_crypto::Timestamp;

use super::Node;
use crate::conference::{ConferenceError, ConferenceNumber, ConferenceType, Conferences};
use crate::types::{FriendNumber, MessageKind};

impl Node {
    /// The conferences, for queries (peer lists, titles, ids).
    pub fn conferences(&self) -> &Conferences {
        todo!("node conference integration")
    }

    /// `tox_conference_new`.
    pub fn conference_new(
        &mut self,
        now: Timestamp,
        kind: ConferenceType,
    ) -> Result<ConferenceNumber, ConferenceError> {
        let _ = (now, kind);
        todo!("node conference integration")
    }

    /// `tox_conference_delete`.
    pub fn conference_delete(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
    ) -> Result<(), ConferenceError> {
        let _ = (now, conference);
        todo!("node conference integration")
    }

    /// `tox_conference_invite`: `FailSend` when the friend does not exist or is offline.
    pub fn conference_invite(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        conference: ConferenceNumber,
    ) -> Result<(), ConferenceError> {
        let _ = (now, friend, conference);
        todo!("node conference integration")
    }

    /// `tox_conference_join`.
    pub fn conference_join(
        &mut self,
        now: Timestamp,
        friend: FriendNumber,
        cookie: &[u8],
    ) -> Result<ConferenceNumber, ConferenceError> {
        let _ = (now, friend, cookie);
        todo!("node conference integration")
    }

    /// `tox_conference_send_message`.
    pub fn conference_send_message(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        kind: MessageKind,
        text: &[u8],
    ) -> Result<(), ConferenceError> {
        let _ = (now, conference, kind, text);
        todo!("node conference integration")
    }

    /// `tox_conference_set_title`.
    pub fn conference_set_title(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        title: &[u8],
    ) -> Result<(), ConferenceError> {
        let _ = (now, conference, title);
        todo!("node conference integration")
    }

    /// `tox_conference_set_max_offline`.
    pub fn conference_set_max_offline(
        &mut self,
        conference: ConferenceNumber,
        max: u32,
    ) -> Result<(), ConferenceError> {
        let _ = (conference, max);
        todo!("node conference integration")
    }

    /// Group audio and other lossy conference packets (`send_group_lossy_packet`).
    pub fn conference_send_lossy(
        &mut self,
        now: Timestamp,
        conference: ConferenceNumber,
        data: &[u8],
    ) -> Result<(), ConferenceError> {
        let _ = (now, conference, data);
        todo!("node conference integration")
    }
}
