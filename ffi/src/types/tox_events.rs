//! tox_events.h's and tox_dispatch.h's enums.

/// `Tox_Event` (tox_events.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Event {
    /// `TOX_EVENT_SELF_CONNECTION_STATUS`
    SELF_CONNECTION_STATUS = 0,
    /// `TOX_EVENT_FRIEND_REQUEST`
    FRIEND_REQUEST = 1,
    /// `TOX_EVENT_FRIEND_CONNECTION_STATUS`
    FRIEND_CONNECTION_STATUS = 2,
    /// `TOX_EVENT_FRIEND_LOSSY_PACKET`
    FRIEND_LOSSY_PACKET = 3,
    /// `TOX_EVENT_FRIEND_LOSSLESS_PACKET`
    FRIEND_LOSSLESS_PACKET = 4,
    /// `TOX_EVENT_FRIEND_NAME`
    FRIEND_NAME = 5,
    /// `TOX_EVENT_FRIEND_STATUS`
    FRIEND_STATUS = 6,
    /// `TOX_EVENT_FRIEND_STATUS_MESSAGE`
    FRIEND_STATUS_MESSAGE = 7,
    /// `TOX_EVENT_FRIEND_MESSAGE`
    FRIEND_MESSAGE = 8,
    /// `TOX_EVENT_FRIEND_READ_RECEIPT`
    FRIEND_READ_RECEIPT = 9,
    /// `TOX_EVENT_FRIEND_TYPING`
    FRIEND_TYPING = 10,
    /// `TOX_EVENT_FILE_CHUNK_REQUEST`
    FILE_CHUNK_REQUEST = 11,
    /// `TOX_EVENT_FILE_RECV`
    FILE_RECV = 12,
    /// `TOX_EVENT_FILE_RECV_CHUNK`
    FILE_RECV_CHUNK = 13,
    /// `TOX_EVENT_FILE_RECV_CONTROL`
    FILE_RECV_CONTROL = 14,
    /// `TOX_EVENT_CONFERENCE_INVITE`
    CONFERENCE_INVITE = 15,
    /// `TOX_EVENT_CONFERENCE_CONNECTED`
    CONFERENCE_CONNECTED = 16,
    /// `TOX_EVENT_CONFERENCE_PEER_LIST_CHANGED`
    CONFERENCE_PEER_LIST_CHANGED = 17,
    /// `TOX_EVENT_CONFERENCE_PEER_NAME`
    CONFERENCE_PEER_NAME = 18,
    /// `TOX_EVENT_CONFERENCE_TITLE`
    CONFERENCE_TITLE = 19,
    /// `TOX_EVENT_CONFERENCE_MESSAGE`
    CONFERENCE_MESSAGE = 20,
}

impl Tox_Event {
    /// The value C passed, if `Tox_Event` has it.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::SELF_CONNECTION_STATUS),
            1 => Some(Self::FRIEND_REQUEST),
            2 => Some(Self::FRIEND_CONNECTION_STATUS),
            3 => Some(Self::FRIEND_LOSSY_PACKET),
            4 => Some(Self::FRIEND_LOSSLESS_PACKET),
            5 => Some(Self::FRIEND_NAME),
            6 => Some(Self::FRIEND_STATUS),
            7 => Some(Self::FRIEND_STATUS_MESSAGE),
            8 => Some(Self::FRIEND_MESSAGE),
            9 => Some(Self::FRIEND_READ_RECEIPT),
            10 => Some(Self::FRIEND_TYPING),
            11 => Some(Self::FILE_CHUNK_REQUEST),
            12 => Some(Self::FILE_RECV),
            13 => Some(Self::FILE_RECV_CHUNK),
            14 => Some(Self::FILE_RECV_CONTROL),
            15 => Some(Self::CONFERENCE_INVITE),
            16 => Some(Self::CONFERENCE_CONNECTED),
            17 => Some(Self::CONFERENCE_PEER_LIST_CHANGED),
            18 => Some(Self::CONFERENCE_PEER_NAME),
            19 => Some(Self::CONFERENCE_TITLE),
            20 => Some(Self::CONFERENCE_MESSAGE),
            _ => None,
        }
    }
}

/// `Tox_Err_Events_Iterate` (tox_events.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Events_Iterate {
    /// `TOX_ERR_EVENTS_ITERATE_OK`
    OK = 0,
    /// `TOX_ERR_EVENTS_ITERATE_MALLOC`
    MALLOC = 1,
}

/// `Tox_Err_Dispatch_New` (tox_dispatch.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Dispatch_New {
    /// `TOX_ERR_DISPATCH_NEW_OK`
    OK = 0,
    /// `TOX_ERR_DISPATCH_NEW_MALLOC`
    MALLOC = 1,
}
