//! Small types and limits that the node ([`crate::node`]), the profile ([`crate::savedata`])
//! and the Rust API share: a friend's number, a message's kind, a user's status, and the
//! limits on the friend list, a name and a status message (docs/protocol.md §3.1, §8).
//!
//! A leaf: it uses nothing of the crate, so the modules above it depend on it one way.

/// Most friends a node keeps. c-toxcore has no limit but its memory; this one bounds what a
/// node that accepts requests from anyone can be made to hold (a friend without a session
/// costs well under 1 KiB).
pub const MAX_FRIENDS: usize = 1024;

/// `MAX_NAME_LENGTH` (`TOX_MAX_NAME_LENGTH`): longer names are ignored on receipt.
pub const MAX_NAME_LEN: usize = 128;
/// `MAX_STATUSMESSAGE_LENGTH` (`TOX_MAX_STATUS_MESSAGE_LENGTH`).
pub const MAX_STATUS_MESSAGE_LEN: usize = 1007;

/// A friend's number, as the application sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FriendNumber(pub u32);

impl std::fmt::Display for FriendNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "friend {}", self.0)
    }
}

/// A message or an action (`Tox_Message_Type`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// A normal message (64).
    #[default]
    Normal,
    /// An action (65).
    Action,
}

/// A user's availability (`Tox_User_Status`; the wire byte).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum UserStatus {
    /// Available.
    #[default]
    None,
    /// Away from the keyboard.
    Away,
    /// Do not disturb.
    Busy,
}

impl UserStatus {
    /// The wire byte.
    pub fn to_byte(self) -> u8 {
        match self {
            UserStatus::None => 0,
            UserStatus::Away => 1,
            UserStatus::Busy => 2,
        }
    }

    /// From the wire byte; 3 and up are invalid (`USERSTATUS_INVALID`), as c-toxcore drops them.
    pub fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(UserStatus::None),
            1 => Some(UserStatus::Away),
            2 => Some(UserStatus::Busy),
            _ => None,
        }
    }
}
