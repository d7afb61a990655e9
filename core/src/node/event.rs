//! What a node tells its application.

use std::net::SocketAddr;

use rustox_file_transfer::FileKind;
use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::CloseReason;

use super::friends::FriendNumber;

/// Something happened on the node.
#[derive(Debug)]
pub enum NodeEvent {
    /// A stranger asks to be our friend (protocol.md §6.5). Accept with
    /// [`super::Node::add_friend_norequest`].
    FriendRequest {
        /// The requester's real key.
        pk: PublicKey,
        /// The message (untrusted bytes, not necessarily UTF-8).
        message: Vec<u8>,
    },
    /// A friend was added without our asking: the node accepts strangers
    /// ([`super::NodeOptions::accept_strangers`]) and one opened a session or sent a request.
    FriendAdded {
        /// Its number.
        friend: FriendNumber,
        /// Its real key.
        pk: PublicKey,
    },
    /// A friend came online (its `ONLINE` packet arrived on an established session, §3.1) or
    /// went offline.
    FriendConnection {
        /// Which friend.
        friend: FriendNumber,
        /// Online now?
        online: bool,
        /// Where the session runs (the direct UDP address), when online.
        addr: Option<SocketAddr>,
    },
    /// A friend's session ended before or after coming online, and why (a handshake that
    /// timed out names an unreachable or silent address; the node redials by itself).
    SessionClosed {
        /// Which friend.
        friend: FriendNumber,
        /// Why.
        reason: CloseReason,
    },
    /// A chat message or action (its text bytes, not necessarily UTF-8).
    Message {
        /// From whom.
        friend: FriendNumber,
        /// Message or action.
        kind: super::messenger::MessageKind,
        /// The text.
        text: Vec<u8>,
    },
    /// The friend acknowledged the message we sent with this id.
    ReadReceipt {
        /// Which friend.
        friend: FriendNumber,
        /// The id [`super::Node::send_message`] returned.
        message_id: u32,
    },
    /// A friend's name changed (or arrived as it came online).
    FriendName {
        /// Which friend.
        friend: FriendNumber,
        /// Its name (bytes, at most 128).
        name: Vec<u8>,
    },
    /// A friend's status message changed.
    FriendStatusMessage {
        /// Which friend.
        friend: FriendNumber,
        /// The text (bytes, at most 1007).
        text: Vec<u8>,
    },
    /// A friend's user status changed.
    FriendStatus {
        /// Which friend.
        friend: FriendNumber,
        /// Its status.
        status: super::presence::UserStatus,
    },
    /// A friend started or stopped typing to us.
    FriendTyping {
        /// Which friend.
        friend: FriendNumber,
        /// Typing now?
        typing: bool,
    },
    /// A custom packet from a friend (first byte: its id, 160–191 or 69 lossless, 200–254
    /// lossy).
    CustomPacket {
        /// Which friend.
        friend: FriendNumber,
        /// Lossless (in order, resent) or lossy.
        lossless: bool,
        /// The whole packet, id first.
        data: Vec<u8>,
    },
    /// The friend paused, resumed (accepted) or cancelled one of our transfers.
    FileControl {
        /// Which friend.
        friend: FriendNumber,
        /// The file's number.
        file: u32,
        /// What it did.
        control: rustox_file_transfer::FileControl,
    },
    /// A friend offers a file; accept it with [`super::Node::accept_file`].
    FileOffered(FileOffer),
    /// The friend acknowledged every byte of a file we sent.
    FileSent {
        /// To whom.
        friend: FriendNumber,
        /// The transfer's number.
        file: u32,
        /// Bytes sent.
        bytes: u64,
    },
    /// A file arrived whole (and, when the sink hashed it, its SHA-256 matched its file id).
    FileReceived {
        /// From whom.
        friend: FriendNumber,
        /// The transfer's number.
        file: u32,
        /// Bytes written.
        bytes: u64,
        /// True when the SHA-256 was checked.
        verified: bool,
    },
    /// A transfer failed or the friend cancelled it.
    FileFailed {
        /// With whom.
        friend: FriendNumber,
        /// The transfer's number.
        file: u32,
        /// Why, in words.
        reason: String,
        /// The friend cancelled it (its FILE_CONTROL KILL, protocol.md §3.2): what a C
        /// client hears as `tox_file_recv_control_cb` CANCEL. False for failures of our own
        /// side (a sink or source error, a hash mismatch, the session ending).
        by_peer: bool,
    },
    /// The node's own connection to the network changed: connected while nodes store our
    /// onion announcement, so friends can find us (c-toxcore's self connection status,
    /// `onion_connection_status`). [`super::Node::is_connected`] tells the DHT's view.
    SelfConnection {
        /// Connected now?
        connected: bool,
    },
}

/// A file a friend offers.
#[derive(Debug, Clone)]
pub struct FileOffer {
    /// From whom.
    pub friend: FriendNumber,
    /// The transfer's number.
    pub file: u32,
    /// Data or avatar.
    pub kind: FileKind,
    /// Announced size (`u64::MAX` when unknown).
    pub size: u64,
    /// Announced name (untrusted bytes).
    pub name: Vec<u8>,
    /// The file id, which this core's senders set to the content's SHA-256.
    pub file_id: [u8; 32],
}
