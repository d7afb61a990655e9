//! tox.h's enums.

/// `Tox_User_Status` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_User_Status {
    /// `TOX_USER_STATUS_NONE`
    NONE = 0,
    /// `TOX_USER_STATUS_AWAY`
    AWAY = 1,
    /// `TOX_USER_STATUS_BUSY`
    BUSY = 2,
}

impl Tox_User_Status {
    /// The value C passed, if `Tox_User_Status` has it.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::NONE),
            1 => Some(Self::AWAY),
            2 => Some(Self::BUSY),
            _ => None,
        }
    }
}

/// `Tox_Message_Type` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Message_Type {
    /// `TOX_MESSAGE_TYPE_NORMAL`
    NORMAL = 0,
    /// `TOX_MESSAGE_TYPE_ACTION`
    ACTION = 1,
}

impl Tox_Message_Type {
    /// The value C passed, if `Tox_Message_Type` has it.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::NORMAL),
            1 => Some(Self::ACTION),
            _ => None,
        }
    }
}

/// `Tox_Proxy_Type` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Proxy_Type {
    /// `TOX_PROXY_TYPE_NONE`
    NONE = 0,
    /// `TOX_PROXY_TYPE_HTTP`
    HTTP = 1,
    /// `TOX_PROXY_TYPE_SOCKS5`
    SOCKS5 = 2,
}

impl Tox_Proxy_Type {
    /// The value C passed, if `Tox_Proxy_Type` has it.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::NONE),
            1 => Some(Self::HTTP),
            2 => Some(Self::SOCKS5),
            _ => None,
        }
    }
}

/// `Tox_Savedata_Type` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Savedata_Type {
    /// `TOX_SAVEDATA_TYPE_NONE`
    NONE = 0,
    /// `TOX_SAVEDATA_TYPE_TOX_SAVE`
    TOX_SAVE = 1,
    /// `TOX_SAVEDATA_TYPE_SECRET_KEY`
    SECRET_KEY = 2,
}

impl Tox_Savedata_Type {
    /// The value C passed, if `Tox_Savedata_Type` has it.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::NONE),
            1 => Some(Self::TOX_SAVE),
            2 => Some(Self::SECRET_KEY),
            _ => None,
        }
    }
}

/// `Tox_Log_Level` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Log_Level {
    /// `TOX_LOG_LEVEL_TRACE`
    TRACE = 0,
    /// `TOX_LOG_LEVEL_DEBUG`
    DEBUG = 1,
    /// `TOX_LOG_LEVEL_INFO`
    INFO = 2,
    /// `TOX_LOG_LEVEL_WARNING`
    WARNING = 3,
    /// `TOX_LOG_LEVEL_ERROR`
    ERROR = 4,
}

impl Tox_Log_Level {
    /// The value C passed, if `Tox_Log_Level` has it.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::TRACE),
            1 => Some(Self::DEBUG),
            2 => Some(Self::INFO),
            3 => Some(Self::WARNING),
            4 => Some(Self::ERROR),
            _ => None,
        }
    }
}

/// `Tox_Err_Options_New` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Options_New {
    /// `TOX_ERR_OPTIONS_NEW_OK`
    OK = 0,
    /// `TOX_ERR_OPTIONS_NEW_MALLOC`
    MALLOC = 1,
}

/// `Tox_Err_New` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_New {
    /// `TOX_ERR_NEW_OK`
    OK = 0,
    /// `TOX_ERR_NEW_NULL`
    NULL = 1,
    /// `TOX_ERR_NEW_MALLOC`
    MALLOC = 2,
    /// `TOX_ERR_NEW_PORT_ALLOC`
    PORT_ALLOC = 3,
    /// `TOX_ERR_NEW_PROXY_BAD_TYPE`
    PROXY_BAD_TYPE = 4,
    /// `TOX_ERR_NEW_PROXY_BAD_HOST`
    PROXY_BAD_HOST = 5,
    /// `TOX_ERR_NEW_PROXY_BAD_PORT`
    PROXY_BAD_PORT = 6,
    /// `TOX_ERR_NEW_PROXY_NOT_FOUND`
    PROXY_NOT_FOUND = 7,
    /// `TOX_ERR_NEW_LOAD_ENCRYPTED`
    LOAD_ENCRYPTED = 8,
    /// `TOX_ERR_NEW_LOAD_BAD_FORMAT`
    LOAD_BAD_FORMAT = 9,
}

/// `Tox_Err_Bootstrap` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Bootstrap {
    /// `TOX_ERR_BOOTSTRAP_OK`
    OK = 0,
    /// `TOX_ERR_BOOTSTRAP_NULL`
    NULL = 1,
    /// `TOX_ERR_BOOTSTRAP_BAD_HOST`
    BAD_HOST = 2,
    /// `TOX_ERR_BOOTSTRAP_BAD_PORT`
    BAD_PORT = 3,
}

/// `Tox_Connection` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Connection {
    /// `TOX_CONNECTION_NONE`
    NONE = 0,
    /// `TOX_CONNECTION_TCP`
    TCP = 1,
    /// `TOX_CONNECTION_UDP`
    UDP = 2,
}

impl Tox_Connection {
    /// The value C passed, if `Tox_Connection` has it.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::NONE),
            1 => Some(Self::TCP),
            2 => Some(Self::UDP),
            _ => None,
        }
    }
}

/// `Tox_Err_Set_Info` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Set_Info {
    /// `TOX_ERR_SET_INFO_OK`
    OK = 0,
    /// `TOX_ERR_SET_INFO_NULL`
    NULL = 1,
    /// `TOX_ERR_SET_INFO_TOO_LONG`
    TOO_LONG = 2,
}

/// `Tox_Err_Friend_Add` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Friend_Add {
    /// `TOX_ERR_FRIEND_ADD_OK`
    OK = 0,
    /// `TOX_ERR_FRIEND_ADD_NULL`
    NULL = 1,
    /// `TOX_ERR_FRIEND_ADD_TOO_LONG`
    TOO_LONG = 2,
    /// `TOX_ERR_FRIEND_ADD_NO_MESSAGE`
    NO_MESSAGE = 3,
    /// `TOX_ERR_FRIEND_ADD_OWN_KEY`
    OWN_KEY = 4,
    /// `TOX_ERR_FRIEND_ADD_ALREADY_SENT`
    ALREADY_SENT = 5,
    /// `TOX_ERR_FRIEND_ADD_BAD_CHECKSUM`
    BAD_CHECKSUM = 6,
    /// `TOX_ERR_FRIEND_ADD_SET_NEW_NOSPAM`
    SET_NEW_NOSPAM = 7,
    /// `TOX_ERR_FRIEND_ADD_MALLOC`
    MALLOC = 8,
}

/// `Tox_Err_Friend_Delete` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Friend_Delete {
    /// `TOX_ERR_FRIEND_DELETE_OK`
    OK = 0,
    /// `TOX_ERR_FRIEND_DELETE_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 1,
}

/// `Tox_Err_Friend_By_Public_Key` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Friend_By_Public_Key {
    /// `TOX_ERR_FRIEND_BY_PUBLIC_KEY_OK`
    OK = 0,
    /// `TOX_ERR_FRIEND_BY_PUBLIC_KEY_NULL`
    NULL = 1,
    /// `TOX_ERR_FRIEND_BY_PUBLIC_KEY_NOT_FOUND`
    NOT_FOUND = 2,
}

/// `Tox_Err_Friend_Get_Public_Key` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Friend_Get_Public_Key {
    /// `TOX_ERR_FRIEND_GET_PUBLIC_KEY_OK`
    OK = 0,
    /// `TOX_ERR_FRIEND_GET_PUBLIC_KEY_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 1,
}

/// `Tox_Err_Friend_Get_Last_Online` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Friend_Get_Last_Online {
    /// `TOX_ERR_FRIEND_GET_LAST_ONLINE_OK`
    OK = 0,
    /// `TOX_ERR_FRIEND_GET_LAST_ONLINE_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 1,
}

/// `Tox_Err_Friend_Query` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Friend_Query {
    /// `TOX_ERR_FRIEND_QUERY_OK`
    OK = 0,
    /// `TOX_ERR_FRIEND_QUERY_NULL`
    NULL = 1,
    /// `TOX_ERR_FRIEND_QUERY_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 2,
}

/// `Tox_Err_Set_Typing` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Set_Typing {
    /// `TOX_ERR_SET_TYPING_OK`
    OK = 0,
    /// `TOX_ERR_SET_TYPING_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 1,
}

/// `Tox_Err_Friend_Send_Message` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Friend_Send_Message {
    /// `TOX_ERR_FRIEND_SEND_MESSAGE_OK`
    OK = 0,
    /// `TOX_ERR_FRIEND_SEND_MESSAGE_NULL`
    NULL = 1,
    /// `TOX_ERR_FRIEND_SEND_MESSAGE_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 2,
    /// `TOX_ERR_FRIEND_SEND_MESSAGE_FRIEND_NOT_CONNECTED`
    FRIEND_NOT_CONNECTED = 3,
    /// `TOX_ERR_FRIEND_SEND_MESSAGE_SENDQ`
    SENDQ = 4,
    /// `TOX_ERR_FRIEND_SEND_MESSAGE_TOO_LONG`
    TOO_LONG = 5,
    /// `TOX_ERR_FRIEND_SEND_MESSAGE_EMPTY`
    EMPTY = 6,
}

/// `Tox_File_Control` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_File_Control {
    /// `TOX_FILE_CONTROL_RESUME`
    RESUME = 0,
    /// `TOX_FILE_CONTROL_PAUSE`
    PAUSE = 1,
    /// `TOX_FILE_CONTROL_CANCEL`
    CANCEL = 2,
}

impl Tox_File_Control {
    /// The value C passed, if `Tox_File_Control` has it.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::RESUME),
            1 => Some(Self::PAUSE),
            2 => Some(Self::CANCEL),
            _ => None,
        }
    }
}

/// `Tox_Err_File_Control` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_File_Control {
    /// `TOX_ERR_FILE_CONTROL_OK`
    OK = 0,
    /// `TOX_ERR_FILE_CONTROL_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 1,
    /// `TOX_ERR_FILE_CONTROL_FRIEND_NOT_CONNECTED`
    FRIEND_NOT_CONNECTED = 2,
    /// `TOX_ERR_FILE_CONTROL_NOT_FOUND`
    NOT_FOUND = 3,
    /// `TOX_ERR_FILE_CONTROL_NOT_PAUSED`
    NOT_PAUSED = 4,
    /// `TOX_ERR_FILE_CONTROL_DENIED`
    DENIED = 5,
    /// `TOX_ERR_FILE_CONTROL_ALREADY_PAUSED`
    ALREADY_PAUSED = 6,
    /// `TOX_ERR_FILE_CONTROL_SENDQ`
    SENDQ = 7,
}

/// `Tox_Err_File_Seek` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_File_Seek {
    /// `TOX_ERR_FILE_SEEK_OK`
    OK = 0,
    /// `TOX_ERR_FILE_SEEK_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 1,
    /// `TOX_ERR_FILE_SEEK_FRIEND_NOT_CONNECTED`
    FRIEND_NOT_CONNECTED = 2,
    /// `TOX_ERR_FILE_SEEK_NOT_FOUND`
    NOT_FOUND = 3,
    /// `TOX_ERR_FILE_SEEK_DENIED`
    DENIED = 4,
    /// `TOX_ERR_FILE_SEEK_INVALID_POSITION`
    INVALID_POSITION = 5,
    /// `TOX_ERR_FILE_SEEK_SENDQ`
    SENDQ = 6,
}

/// `Tox_Err_File_Get` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_File_Get {
    /// `TOX_ERR_FILE_GET_OK`
    OK = 0,
    /// `TOX_ERR_FILE_GET_NULL`
    NULL = 1,
    /// `TOX_ERR_FILE_GET_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 2,
    /// `TOX_ERR_FILE_GET_NOT_FOUND`
    NOT_FOUND = 3,
}

/// `Tox_Err_File_Send` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_File_Send {
    /// `TOX_ERR_FILE_SEND_OK`
    OK = 0,
    /// `TOX_ERR_FILE_SEND_NULL`
    NULL = 1,
    /// `TOX_ERR_FILE_SEND_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 2,
    /// `TOX_ERR_FILE_SEND_FRIEND_NOT_CONNECTED`
    FRIEND_NOT_CONNECTED = 3,
    /// `TOX_ERR_FILE_SEND_NAME_TOO_LONG`
    NAME_TOO_LONG = 4,
    /// `TOX_ERR_FILE_SEND_TOO_MANY`
    TOO_MANY = 5,
}

/// `Tox_Err_File_Send_Chunk` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_File_Send_Chunk {
    /// `TOX_ERR_FILE_SEND_CHUNK_OK`
    OK = 0,
    /// `TOX_ERR_FILE_SEND_CHUNK_NULL`
    NULL = 1,
    /// `TOX_ERR_FILE_SEND_CHUNK_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 2,
    /// `TOX_ERR_FILE_SEND_CHUNK_FRIEND_NOT_CONNECTED`
    FRIEND_NOT_CONNECTED = 3,
    /// `TOX_ERR_FILE_SEND_CHUNK_NOT_FOUND`
    NOT_FOUND = 4,
    /// `TOX_ERR_FILE_SEND_CHUNK_NOT_TRANSFERRING`
    NOT_TRANSFERRING = 5,
    /// `TOX_ERR_FILE_SEND_CHUNK_INVALID_LENGTH`
    INVALID_LENGTH = 6,
    /// `TOX_ERR_FILE_SEND_CHUNK_SENDQ`
    SENDQ = 7,
    /// `TOX_ERR_FILE_SEND_CHUNK_WRONG_POSITION`
    WRONG_POSITION = 8,
}

/// `Tox_Conference_Type` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Conference_Type {
    /// `TOX_CONFERENCE_TYPE_TEXT`
    TEXT = 0,
    /// `TOX_CONFERENCE_TYPE_AV`
    AV = 1,
}

impl Tox_Conference_Type {
    /// The value C passed, if `Tox_Conference_Type` has it.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::TEXT),
            1 => Some(Self::AV),
            _ => None,
        }
    }
}

/// `Tox_Err_Conference_New` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_New {
    /// `TOX_ERR_CONFERENCE_NEW_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_NEW_INIT`
    INIT = 1,
}

/// `Tox_Err_Conference_Delete` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_Delete {
    /// `TOX_ERR_CONFERENCE_DELETE_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_DELETE_CONFERENCE_NOT_FOUND`
    CONFERENCE_NOT_FOUND = 1,
}

/// `Tox_Err_Conference_Peer_Query` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_Peer_Query {
    /// `TOX_ERR_CONFERENCE_PEER_QUERY_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_PEER_QUERY_CONFERENCE_NOT_FOUND`
    CONFERENCE_NOT_FOUND = 1,
    /// `TOX_ERR_CONFERENCE_PEER_QUERY_PEER_NOT_FOUND`
    PEER_NOT_FOUND = 2,
    /// `TOX_ERR_CONFERENCE_PEER_QUERY_NO_CONNECTION`
    NO_CONNECTION = 3,
}

/// `Tox_Err_Conference_Set_Max_Offline` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_Set_Max_Offline {
    /// `TOX_ERR_CONFERENCE_SET_MAX_OFFLINE_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_SET_MAX_OFFLINE_CONFERENCE_NOT_FOUND`
    CONFERENCE_NOT_FOUND = 1,
}

/// `Tox_Err_Conference_Invite` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_Invite {
    /// `TOX_ERR_CONFERENCE_INVITE_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_INVITE_CONFERENCE_NOT_FOUND`
    CONFERENCE_NOT_FOUND = 1,
    /// `TOX_ERR_CONFERENCE_INVITE_FAIL_SEND`
    FAIL_SEND = 2,
    /// `TOX_ERR_CONFERENCE_INVITE_NO_CONNECTION`
    NO_CONNECTION = 3,
}

/// `Tox_Err_Conference_Join` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_Join {
    /// `TOX_ERR_CONFERENCE_JOIN_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_JOIN_INVALID_LENGTH`
    INVALID_LENGTH = 1,
    /// `TOX_ERR_CONFERENCE_JOIN_WRONG_TYPE`
    WRONG_TYPE = 2,
    /// `TOX_ERR_CONFERENCE_JOIN_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 3,
    /// `TOX_ERR_CONFERENCE_JOIN_DUPLICATE`
    DUPLICATE = 4,
    /// `TOX_ERR_CONFERENCE_JOIN_INIT_FAIL`
    INIT_FAIL = 5,
    /// `TOX_ERR_CONFERENCE_JOIN_FAIL_SEND`
    FAIL_SEND = 6,
}

/// `Tox_Err_Conference_Send_Message` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_Send_Message {
    /// `TOX_ERR_CONFERENCE_SEND_MESSAGE_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_SEND_MESSAGE_CONFERENCE_NOT_FOUND`
    CONFERENCE_NOT_FOUND = 1,
    /// `TOX_ERR_CONFERENCE_SEND_MESSAGE_TOO_LONG`
    TOO_LONG = 2,
    /// `TOX_ERR_CONFERENCE_SEND_MESSAGE_NO_CONNECTION`
    NO_CONNECTION = 3,
    /// `TOX_ERR_CONFERENCE_SEND_MESSAGE_FAIL_SEND`
    FAIL_SEND = 4,
}

/// `Tox_Err_Conference_Title` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_Title {
    /// `TOX_ERR_CONFERENCE_TITLE_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_TITLE_CONFERENCE_NOT_FOUND`
    CONFERENCE_NOT_FOUND = 1,
    /// `TOX_ERR_CONFERENCE_TITLE_INVALID_LENGTH`
    INVALID_LENGTH = 2,
    /// `TOX_ERR_CONFERENCE_TITLE_FAIL_SEND`
    FAIL_SEND = 3,
}

/// `Tox_Err_Conference_Get_Type` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_Get_Type {
    /// `TOX_ERR_CONFERENCE_GET_TYPE_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_GET_TYPE_CONFERENCE_NOT_FOUND`
    CONFERENCE_NOT_FOUND = 1,
}

/// `Tox_Err_Conference_By_Id` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_By_Id {
    /// `TOX_ERR_CONFERENCE_BY_ID_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_BY_ID_NULL`
    NULL = 1,
    /// `TOX_ERR_CONFERENCE_BY_ID_NOT_FOUND`
    NOT_FOUND = 2,
}

/// `Tox_Err_Conference_By_Uid` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Conference_By_Uid {
    /// `TOX_ERR_CONFERENCE_BY_UID_OK`
    OK = 0,
    /// `TOX_ERR_CONFERENCE_BY_UID_NULL`
    NULL = 1,
    /// `TOX_ERR_CONFERENCE_BY_UID_NOT_FOUND`
    NOT_FOUND = 2,
}

/// `Tox_Err_Friend_Custom_Packet` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Friend_Custom_Packet {
    /// `TOX_ERR_FRIEND_CUSTOM_PACKET_OK`
    OK = 0,
    /// `TOX_ERR_FRIEND_CUSTOM_PACKET_NULL`
    NULL = 1,
    /// `TOX_ERR_FRIEND_CUSTOM_PACKET_FRIEND_NOT_FOUND`
    FRIEND_NOT_FOUND = 2,
    /// `TOX_ERR_FRIEND_CUSTOM_PACKET_FRIEND_NOT_CONNECTED`
    FRIEND_NOT_CONNECTED = 3,
    /// `TOX_ERR_FRIEND_CUSTOM_PACKET_INVALID`
    INVALID = 4,
    /// `TOX_ERR_FRIEND_CUSTOM_PACKET_EMPTY`
    EMPTY = 5,
    /// `TOX_ERR_FRIEND_CUSTOM_PACKET_TOO_LONG`
    TOO_LONG = 6,
    /// `TOX_ERR_FRIEND_CUSTOM_PACKET_SENDQ`
    SENDQ = 7,
}

/// `Tox_Err_Get_Port` (tox.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tox_Err_Get_Port {
    /// `TOX_ERR_GET_PORT_OK`
    OK = 0,
    /// `TOX_ERR_GET_PORT_NOT_BOUND`
    NOT_BOUND = 1,
}

/// `enum Tox_File_Kind` (tox.h): the kinds c-toxcore names; `tox_file_send` and
/// `tox_file_recv_cb` pass kinds as `uint32_t`, and other values pass through.
#[allow(non_snake_case)]
pub mod Tox_File_Kind {
    /// `TOX_FILE_KIND_DATA`
    pub const DATA: u32 = 0;
    /// `TOX_FILE_KIND_AVATAR`
    pub const AVATAR: u32 = 1;
}

/// An enum value as C passes it in or reads it out, where C may hold any value (C enums are
/// `int`-sized): a plain integer here, checked with the enum's `from_raw` before use, and
/// the enum's own type in the generated headers (so that C++ clients assign it without a
/// cast).
pub type Tox_User_Status_Value = u32;
/// See [`Tox_User_Status_Value`].
pub type Tox_Message_Type_Value = u32;
/// See [`Tox_User_Status_Value`].
pub type Tox_File_Control_Value = u32;
/// See [`Tox_User_Status_Value`].
pub type Tox_Proxy_Type_Value = u32;
/// See [`Tox_User_Status_Value`].
pub type Tox_Savedata_Type_Value = u32;
/// See [`Tox_User_Status_Value`].
pub type Tox_Connection_Value = u32;
/// See [`Tox_User_Status_Value`].
pub type Tox_Conference_Type_Value = u32;
