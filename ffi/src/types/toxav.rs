//! toxav.h's enums.

/// `Toxav_Err_New` (toxav.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toxav_Err_New {
    /// `TOXAV_ERR_NEW_OK`
    OK = 0,
    /// `TOXAV_ERR_NEW_NULL`
    NULL = 1,
    /// `TOXAV_ERR_NEW_MALLOC`
    MALLOC = 2,
    /// `TOXAV_ERR_NEW_MULTIPLE`
    MULTIPLE = 3,
}

/// `Toxav_Err_Call` (toxav.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toxav_Err_Call {
    /// `TOXAV_ERR_CALL_OK`
    OK = 0,
    /// `TOXAV_ERR_CALL_MALLOC`
    MALLOC = 1,
    /// `TOXAV_ERR_CALL_SYNC`
    SYNC = 2,
    /// `TOXAV_ERR_CALL_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 3,
    /// `TOXAV_ERR_CALL_FRIEND_NOT_CONNECTED`
    FRIEND_NOT_CONNECTED = 4,
    /// `TOXAV_ERR_CALL_FRIEND_ALREADY_IN_CALL`
    FRIEND_ALREADY_IN_CALL = 5,
    /// `TOXAV_ERR_CALL_INVALID_BIT_RATE`
    INVALID_BIT_RATE = 6,
}

/// `Toxav_Err_Answer` (toxav.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toxav_Err_Answer {
    /// `TOXAV_ERR_ANSWER_OK`
    OK = 0,
    /// `TOXAV_ERR_ANSWER_SYNC`
    SYNC = 1,
    /// `TOXAV_ERR_ANSWER_CODEC_INITIALIZATION`
    CODEC_INITIALIZATION = 2,
    /// `TOXAV_ERR_ANSWER_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 3,
    /// `TOXAV_ERR_ANSWER_FRIEND_NOT_CALLING`
    FRIEND_NOT_CALLING = 4,
    /// `TOXAV_ERR_ANSWER_INVALID_BIT_RATE`
    INVALID_BIT_RATE = 5,
}

/// `Toxav_Call_Control` (toxav.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toxav_Call_Control {
    /// `TOXAV_CALL_CONTROL_RESUME`
    RESUME = 0,
    /// `TOXAV_CALL_CONTROL_PAUSE`
    PAUSE = 1,
    /// `TOXAV_CALL_CONTROL_CANCEL`
    CANCEL = 2,
    /// `TOXAV_CALL_CONTROL_MUTE_AUDIO`
    MUTE_AUDIO = 3,
    /// `TOXAV_CALL_CONTROL_UNMUTE_AUDIO`
    UNMUTE_AUDIO = 4,
    /// `TOXAV_CALL_CONTROL_HIDE_VIDEO`
    HIDE_VIDEO = 5,
    /// `TOXAV_CALL_CONTROL_SHOW_VIDEO`
    SHOW_VIDEO = 6,
}

impl Toxav_Call_Control {
    /// The value C passed, if `Toxav_Call_Control` has it.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::RESUME),
            1 => Some(Self::PAUSE),
            2 => Some(Self::CANCEL),
            3 => Some(Self::MUTE_AUDIO),
            4 => Some(Self::UNMUTE_AUDIO),
            5 => Some(Self::HIDE_VIDEO),
            6 => Some(Self::SHOW_VIDEO),
            _ => None,
        }
    }
}

/// `Toxav_Err_Call_Control` (toxav.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toxav_Err_Call_Control {
    /// `TOXAV_ERR_CALL_CONTROL_OK`
    OK = 0,
    /// `TOXAV_ERR_CALL_CONTROL_SYNC`
    SYNC = 1,
    /// `TOXAV_ERR_CALL_CONTROL_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 2,
    /// `TOXAV_ERR_CALL_CONTROL_FRIEND_NOT_IN_CALL`
    FRIEND_NOT_IN_CALL = 3,
    /// `TOXAV_ERR_CALL_CONTROL_INVALID_TRANSITION`
    INVALID_TRANSITION = 4,
}

/// `Toxav_Err_Bit_Rate_Set` (toxav.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toxav_Err_Bit_Rate_Set {
    /// `TOXAV_ERR_BIT_RATE_SET_OK`
    OK = 0,
    /// `TOXAV_ERR_BIT_RATE_SET_SYNC`
    SYNC = 1,
    /// `TOXAV_ERR_BIT_RATE_SET_INVALID_BIT_RATE`
    INVALID_BIT_RATE = 2,
    /// `TOXAV_ERR_BIT_RATE_SET_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 3,
    /// `TOXAV_ERR_BIT_RATE_SET_FRIEND_NOT_IN_CALL`
    FRIEND_NOT_IN_CALL = 4,
}

/// `Toxav_Err_Send_Frame` (toxav.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toxav_Err_Send_Frame {
    /// `TOXAV_ERR_SEND_FRAME_OK`
    OK = 0,
    /// `TOXAV_ERR_SEND_FRAME_NULL`
    NULL = 1,
    /// `TOXAV_ERR_SEND_FRAME_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 2,
    /// `TOXAV_ERR_SEND_FRAME_FRIEND_NOT_IN_CALL`
    FRIEND_NOT_IN_CALL = 3,
    /// `TOXAV_ERR_SEND_FRAME_SYNC`
    SYNC = 4,
    /// `TOXAV_ERR_SEND_FRAME_INVALID`
    INVALID = 5,
    /// `TOXAV_ERR_SEND_FRAME_PAYLOAD_TYPE_DISABLED`
    PAYLOAD_TYPE_DISABLED = 6,
    /// `TOXAV_ERR_SEND_FRAME_RTP_FAILED`
    RTP_FAILED = 7,
}

/// See [`super::Tox_User_Status_Value`].
pub type Toxav_Call_Control_Value = u32;
