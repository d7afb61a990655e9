//! One saved friend: the 2216-byte record of the FRIENDS section (c-toxcore 0.2.18
//! `struct Saved_Friend`, `friend_save` / `friend_load` / `friends_list_save` in
//! `toxcore/Messenger.c`).
//!
//! | offset | length | content                                                   |
//! |--------|--------|-----------------------------------------------------------|
//! | 0      | 1      | status: 0 none, 1 added, 2 request sent, 3 confirmed, 4 online |
//! | 1      | 32     | the friend's real public key                              |
//! | 33     | 1024   | friend request message, zero-padded                       |
//! | 1057   | 1      | padding                                                   |
//! | 1058   | 2      | request message length, u16 **big-endian**                |
//! | 1060   | 128    | name, zero-padded                                         |
//! | 1188   | 2      | name length, u16 big-endian                               |
//! | 1190   | 1007   | status message, zero-padded                               |
//! | 2197   | 1      | padding                                                   |
//! | 2198   | 2      | status message length, u16 big-endian                     |
//! | 2200   | 1      | user status: 0 none, 1 away, 2 busy                       |
//! | 2201   | 3      | padding                                                   |
//! | 2204   | 4      | the nospam the request was sent to, the Tox ID's bytes    |
//! | 2208   | 8      | last seen, u64 big-endian (seconds since the Unix epoch)  |
//!
//! The record is the in-memory `struct` of an LP64 C compiler, padding included, with its
//! lengths stored through `net_htons` and the time through `net_pack_u64`; c-toxcore asserts
//! `memcmp(record, &struct) == 0` on LP64 hosts. It fills the request message and nospam only
//! for status < 3, and the name, status message, user status and last-seen time only for
//! status ≥ 3 (an online friend is saved as 3); on load it adds status ≥ 3 as a confirmed
//! friend and 1–2 by `m_addfriend` with the saved message, and skips status 0.
//!
//! [`SavedFriend::write`] writes every field it holds, whatever the status: for a record
//! c-toxcore wrote, the fields it left empty are empty, so the bytes come out the same, and
//! nothing a caller put in is lost. Padding is written as zeros and ignored on read.

use rustox_net_crypto::crypto::{PublicKey, PUBLIC_KEY_SIZE};

use crate::friend::request::MAX_FRIEND_REQUEST_DATA_SIZE;
use crate::friend::NoSpam;

/// `SAVED_FRIEND_REQUEST_SIZE`: room for the request message in a record.
pub const SAVED_FRIEND_REQUEST_SIZE: usize = 1024;
/// `MAX_NAME_LENGTH`: the same limit Messenger enforces on the wire.
pub const MAX_NAME_LENGTH: usize = crate::types::MAX_NAME_LEN;
/// `MAX_STATUSMESSAGE_LENGTH`: the same limit Messenger enforces on the wire.
pub const MAX_STATUSMESSAGE_LENGTH: usize = crate::types::MAX_STATUS_MESSAGE_LEN;
/// Size of one record (`friend_size()`).
pub const SAVED_FRIEND_SIZE: usize = 2216;

const OFF_PK: usize = 1;
const OFF_INFO: usize = OFF_PK + PUBLIC_KEY_SIZE;
const OFF_INFO_LEN: usize = OFF_INFO + SAVED_FRIEND_REQUEST_SIZE + 1;
const OFF_NAME: usize = OFF_INFO_LEN + 2;
const OFF_NAME_LEN: usize = OFF_NAME + MAX_NAME_LENGTH;
const OFF_STATUS_MSG: usize = OFF_NAME_LEN + 2;
const OFF_STATUS_MSG_LEN: usize = OFF_STATUS_MSG + MAX_STATUSMESSAGE_LENGTH + 1;
const OFF_USER_STATUS: usize = OFF_STATUS_MSG_LEN + 2;
const OFF_NOSPAM: usize = OFF_USER_STATUS + 1 + 3;
const OFF_LAST_SEEN: usize = OFF_NOSPAM + 4;
const _: () = assert!(OFF_LAST_SEEN + 8 == SAVED_FRIEND_SIZE);

/// A friend's state as c-toxcore numbers it (`FRIEND_NOFRIEND` … `FRIEND_ONLINE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum FriendStatus {
    /// `FRIEND_NOFRIEND`: an empty slot; c-toxcore never saves one and skips it on load.
    #[default]
    None = 0,
    /// `FRIEND_ADDED`: added with a friend request that has not been sent yet.
    Added = 1,
    /// `FRIEND_REQUESTED`: the friend request went out; no answer yet.
    RequestSent = 2,
    /// `FRIEND_CONFIRMED`: a friend (added without a request, or who accepted ours).
    Confirmed = 3,
    /// `FRIEND_ONLINE`: a live state, saved as [`FriendStatus::Confirmed`].
    Online = 4,
}

impl FriendStatus {
    /// The status for its c-toxcore number.
    pub fn from_u8(value: u8) -> Option<Self> {
        Some(match value {
            0 => FriendStatus::None,
            1 => FriendStatus::Added,
            2 => FriendStatus::RequestSent,
            3 => FriendStatus::Confirmed,
            4 => FriendStatus::Online,
            _ => return None,
        })
    }

    /// True for 1 and 2: a friend request of ours is still pending.
    pub fn is_pending_request(self) -> bool {
        matches!(self, FriendStatus::Added | FriendStatus::RequestSent)
    }
}

/// A user's availability: the node's type, saved as its wire byte.
pub use crate::types::UserStatus;

/// What is wrong with a friend record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FriendRecordError {
    /// A status byte above 4 (`FRIEND_ONLINE`).
    #[error("status {0} is not one of 0..=4")]
    BadStatus(u8),
    /// The request message length is above `MAX_FRIEND_REQUEST_DATA_SIZE` (1016); c-toxcore
    /// would refuse to re-add such a friend.
    #[error("request message length {0} exceeds 1016")]
    RequestTooLong(u16),
    /// The name length is above `MAX_NAME_LENGTH` (128).
    #[error("name length {0} exceeds 128")]
    NameTooLong(u16),
    /// The status message length is above `MAX_STATUSMESSAGE_LENGTH` (1007).
    #[error("status message length {0} exceeds 1007")]
    StatusMessageTooLong(u16),
    /// A user status byte above 2 (`USERSTATUS_BUSY`).
    #[error("user status {0} is not one of 0..=2")]
    BadUserStatus(u8),
}

/// One friend as the save file holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedFriend {
    /// The friend's real (long-term) public key.
    pub pk: PublicKey,
    /// Where the friendship stands.
    pub status: FriendStatus,
    /// The friend request message, for a pending request (status 1–2); at most 1016 bytes.
    pub request_message: Vec<u8>,
    /// The nospam the request is addressed to (status 1–2), in the Tox ID's byte order.
    pub request_nospam: NoSpam,
    /// The friend's name (status ≥ 3); at most 128 bytes.
    pub name: Vec<u8>,
    /// The friend's status message (status ≥ 3); at most 1007 bytes.
    pub status_message: Vec<u8>,
    /// The friend's user status (status ≥ 3).
    pub user_status: UserStatus,
    /// When the friend was last seen online, in seconds since the Unix epoch (0: never).
    pub last_seen: u64,
}

impl SavedFriend {
    /// A record with status 0 and every field empty.
    pub fn empty(pk: PublicKey) -> Self {
        SavedFriend {
            pk,
            status: FriendStatus::None,
            request_message: Vec::new(),
            request_nospam: NoSpam::default(),
            name: Vec::new(),
            status_message: Vec::new(),
            user_status: UserStatus::None,
            last_seen: 0,
        }
    }

    /// A confirmed friend with nothing else known, as `tox_friend_add_norequest` makes one.
    pub fn confirmed(pk: PublicKey) -> Self {
        SavedFriend {
            status: FriendStatus::Confirmed,
            ..SavedFriend::empty(pk)
        }
    }

    /// A friend our request is pending with, as `tox_friend_add` makes one.
    pub fn pending(pk: PublicKey, nospam: NoSpam, message: Vec<u8>) -> Self {
        SavedFriend {
            status: FriendStatus::Added,
            request_message: message,
            request_nospam: nospam,
            ..SavedFriend::empty(pk)
        }
    }

    /// Reads one record. Every length is checked against its field and its c-toxcore limit;
    /// nothing is allocated beyond those limits.
    pub fn parse(record: &[u8; SAVED_FRIEND_SIZE]) -> Result<Self, FriendRecordError> {
        let status =
            FriendStatus::from_u8(record[0]).ok_or(FriendRecordError::BadStatus(record[0]))?;
        let info_len = u16::from_be_bytes([record[OFF_INFO_LEN], record[OFF_INFO_LEN + 1]]);
        if usize::from(info_len) > MAX_FRIEND_REQUEST_DATA_SIZE {
            return Err(FriendRecordError::RequestTooLong(info_len));
        }
        let name_len = u16::from_be_bytes([record[OFF_NAME_LEN], record[OFF_NAME_LEN + 1]]);
        if usize::from(name_len) > MAX_NAME_LENGTH {
            return Err(FriendRecordError::NameTooLong(name_len));
        }
        let status_msg_len =
            u16::from_be_bytes([record[OFF_STATUS_MSG_LEN], record[OFF_STATUS_MSG_LEN + 1]]);
        if usize::from(status_msg_len) > MAX_STATUSMESSAGE_LENGTH {
            return Err(FriendRecordError::StatusMessageTooLong(status_msg_len));
        }
        let user_status = UserStatus::from_byte(record[OFF_USER_STATUS])
            .ok_or(FriendRecordError::BadUserStatus(record[OFF_USER_STATUS]))?;
        let mut pk = [0u8; PUBLIC_KEY_SIZE];
        pk.copy_from_slice(&record[OFF_PK..OFF_INFO]);
        let mut nospam = [0u8; 4];
        nospam.copy_from_slice(&record[OFF_NOSPAM..OFF_LAST_SEEN]);
        let mut last_seen = [0u8; 8];
        last_seen.copy_from_slice(&record[OFF_LAST_SEEN..]);
        Ok(SavedFriend {
            pk: PublicKey(pk),
            status,
            // Each length was checked against its limit, which is its field's size, so every
            // field is there; were one not, the record is refused as too long.
            request_message: field(record, OFF_INFO, info_len)
                .ok_or(FriendRecordError::RequestTooLong(info_len))?,
            request_nospam: NoSpam(nospam),
            name: field(record, OFF_NAME, name_len)
                .ok_or(FriendRecordError::NameTooLong(name_len))?,
            status_message: field(record, OFF_STATUS_MSG, status_msg_len)
                .ok_or(FriendRecordError::StatusMessageTooLong(status_msg_len))?,
            user_status,
            last_seen: u64::from_be_bytes(last_seen),
        })
    }

    /// Checks the field lengths against c-toxcore's limits.
    pub fn check(&self) -> Result<(), FriendRecordError> {
        let len16 = |v: &[u8]| u16::try_from(v.len()).unwrap_or(u16::MAX);
        if self.request_message.len() > MAX_FRIEND_REQUEST_DATA_SIZE {
            return Err(FriendRecordError::RequestTooLong(len16(
                &self.request_message,
            )));
        }
        if self.name.len() > MAX_NAME_LENGTH {
            return Err(FriendRecordError::NameTooLong(len16(&self.name)));
        }
        if self.status_message.len() > MAX_STATUSMESSAGE_LENGTH {
            return Err(FriendRecordError::StatusMessageTooLong(len16(
                &self.status_message,
            )));
        }
        Ok(())
    }

    /// Appends the 2216-byte record. An online friend is written as confirmed, as c-toxcore
    /// does. Fields longer than their limit are cut to it ([`SavedFriend::check`] says so
    /// beforehand; [`super::Profile::to_bytes`] relies on its caller's checks).
    pub fn write(&self, out: &mut Vec<u8>) {
        let mut record = [0u8; SAVED_FRIEND_SIZE];
        record[0] = match self.status {
            FriendStatus::Online => FriendStatus::Confirmed as u8,
            other => other as u8,
        };
        record[OFF_PK..OFF_INFO].copy_from_slice(self.pk.as_bytes());
        let mut put = |at: usize, len_at: usize, field: &[u8], max: usize| {
            let field = field.get(..max).unwrap_or(field);
            // Every `max` is the size of the field at `at`, so both slots are always there.
            if let Some(slot) = record.get_mut(at..).and_then(|r| r.get_mut(..field.len())) {
                slot.copy_from_slice(field);
            }
            if let Some(slot) = record
                .get_mut(len_at..)
                .and_then(<[u8]>::first_chunk_mut::<2>)
            {
                // max ≤ 1016, so the length fits in a u16.
                *slot = (field.len() as u16).to_be_bytes();
            }
        };
        put(
            OFF_INFO,
            OFF_INFO_LEN,
            &self.request_message,
            MAX_FRIEND_REQUEST_DATA_SIZE,
        );
        put(OFF_NAME, OFF_NAME_LEN, &self.name, MAX_NAME_LENGTH);
        put(
            OFF_STATUS_MSG,
            OFF_STATUS_MSG_LEN,
            &self.status_message,
            MAX_STATUSMESSAGE_LENGTH,
        );
        record[OFF_USER_STATUS] = self.user_status.to_byte();
        record[OFF_NOSPAM..OFF_LAST_SEEN].copy_from_slice(&self.request_nospam.0);
        record[OFF_LAST_SEEN..].copy_from_slice(&self.last_seen.to_be_bytes());
        out.extend_from_slice(&record);
    }
}

/// The first `len` bytes of the field at `at`, if the record holds them.
fn field(record: &[u8], at: usize, len: u16) -> Option<Vec<u8>> {
    Some(record.get(at..)?.get(..usize::from(len))?.to_vec())
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn field_offsets_are_the_lp64_struct_layout() {
        // The offsets of `struct Saved_Friend` under the System V x86-64 ABI.
        assert_eq!(OFF_INFO_LEN, 1058);
        assert_eq!(OFF_NAME, 1060);
        assert_eq!(OFF_NAME_LEN, 1188);
        assert_eq!(OFF_STATUS_MSG, 1190);
        assert_eq!(OFF_STATUS_MSG_LEN, 2198);
        assert_eq!(OFF_USER_STATUS, 2200);
        assert_eq!(OFF_NOSPAM, 2204);
        assert_eq!(OFF_LAST_SEEN, 2208);
    }

    #[test]
    fn online_is_saved_as_confirmed() {
        let friend = SavedFriend {
            status: FriendStatus::Online,
            ..SavedFriend::confirmed(PublicKey([1; 32]))
        };
        let mut out = Vec::new();
        friend.write(&mut out);
        assert_eq!(out[0], 3);
        let back = SavedFriend::parse(out.as_slice().try_into().unwrap()).unwrap();
        assert_eq!(back.status, FriendStatus::Confirmed);
    }

    #[test]
    fn lengths_beyond_the_limits_are_refused() {
        let mut out = Vec::new();
        SavedFriend::confirmed(PublicKey([1; 32])).write(&mut out);
        let mut bad = out.clone();
        bad[OFF_NAME_LEN + 1] = 129;
        assert_eq!(
            SavedFriend::parse(bad.as_slice().try_into().unwrap()),
            Err(FriendRecordError::NameTooLong(129))
        );
        let mut bad = out.clone();
        bad[OFF_INFO_LEN..OFF_INFO_LEN + 2].copy_from_slice(&1017u16.to_be_bytes());
        assert_eq!(
            SavedFriend::parse(bad.as_slice().try_into().unwrap()),
            Err(FriendRecordError::RequestTooLong(1017))
        );
        let mut bad = out.clone();
        bad[OFF_STATUS_MSG_LEN..OFF_STATUS_MSG_LEN + 2].copy_from_slice(&1008u16.to_be_bytes());
        assert_eq!(
            SavedFriend::parse(bad.as_slice().try_into().unwrap()),
            Err(FriendRecordError::StatusMessageTooLong(1008))
        );
        let mut bad = out.clone();
        bad[0] = 5;
        assert_eq!(
            SavedFriend::parse(bad.as_slice().try_into().unwrap()),
            Err(FriendRecordError::BadStatus(5))
        );
        let mut bad = out;
        bad[OFF_USER_STATUS] = 3;
        assert_eq!(
            SavedFriend::parse(bad.as_slice().try_into().unwrap()),
            Err(FriendRecordError::BadUserStatus(3))
        );
    }
}
