//! What a node tells its application.

use std::net::SocketAddr;

use rustox_file_transfer::FileKind;
use rustox_net_crypto::crypto::PublicKey;
use rustox_net_crypto::CloseReason;

use crate::types::{FriendNumber, MessageKind, UserStatus};

/// Something happened on the node.
#[derive(Debug)]
pub enum NodeEvent {
    /// A stranger asks to be our friend (docs/protocol.md §6.5). Accept with
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
        kind: MessageKind,
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
        status: UserStatus,
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
    /// A file arrived whole. It is kept whatever its SHA-256: the file id is opaque to
    /// tox.h, so only a file id equal to the content's SHA-256 verifies anything.
    FileReceived {
        /// From whom.
        friend: FriendNumber,
        /// The transfer's number.
        file: u32,
        /// Bytes written.
        bytes: u64,
        /// The SHA-256 of the whole file, when its sink hashed it.
        sha256: Option<[u8; 32]>,
        /// Whether the bytes could be checked against the sender, and how.
        verification: FileVerification,
    },
    /// A transfer failed or the friend cancelled it.
    FileFailed {
        /// With whom.
        friend: FriendNumber,
        /// The transfer's number.
        file: u32,
        /// Why, in words.
        reason: String,
        /// The friend cancelled it (its FILE_CONTROL KILL, docs/protocol.md §3.2): what a C
        /// client hears as `tox_file_recv_control_cb` CANCEL. False for failures of our own
        /// side (a sink or source error, a hash mismatch, the session ending).
        by_peer: bool,
    },
    /// A friend invites us to a conference (`tox_conference_invite_cb`); join with
    /// [`super::Node::conference_join`] and the cookie.
    ConferenceInvite {
        /// The inviting friend.
        friend: FriendNumber,
        /// The conference's type.
        kind: crate::conference::ConferenceType,
        /// The cookie to join with.
        cookie: Vec<u8>,
    },
    /// Something happened in a conference (every [`crate::conference::ConferenceEvent`] but
    /// `Invite`, which arrives as [`NodeEvent::ConferenceInvite`]).
    Conference(crate::conference::ConferenceEvent),
    /// Something happened in a call (calls are on: [`super::Node::enable_av`]).
    Av(crate::av::AvEvent),
    /// Group audio: a decoded frame from a conference peer (toxav's `audio_callback` of
    /// `toxav_add_av_groupchat`).
    ConferenceAudio {
        /// Which conference.
        conference: crate::conference::ConferenceNumber,
        /// Which peer (tox.h's peer number).
        peer: u32,
        /// Interleaved samples.
        pcm: Vec<i16>,
        /// Channels.
        channels: u8,
        /// Hz.
        sampling_rate: u32,
    },
    /// The node's own connection to the network changed: connected while nodes store our
    /// onion announcement, so friends can find us (c-toxcore's self connection status,
    /// `onion_connection_status`). [`super::Node::is_connected`] tells the DHT's view.
    SelfConnection {
        /// Connected now?
        connected: bool,
    },
}

/// What a received file's SHA-256 says about it. To tox.h a file id is "a unique
/// identifier" (c-toxcore's `tox_file_send` draws a random one when the client passes
/// NULL, as qTox, toxic and uTox do); rustox's senders set it to the content's SHA-256.
/// The two cannot be told apart from the offer, so the receiver keeps every file and says
/// which case it was: a random id equals the content's SHA-256 with probability 2⁻²⁵⁶.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileVerification {
    /// The content's SHA-256 equals the file id: the sender hashed its content and these
    /// are its bytes.
    Sha256FileId,
    /// The content's SHA-256 differs from the file id: an opaque id (a c-toxcore client's
    /// random one), so there was nothing to check the bytes against.
    OpaqueFileId,
    /// No SHA-256 of the file is known (its sink did not hash it, or not in order).
    NotHashed,
}

impl FileVerification {
    /// From the SHA-256 of what was written and the offer's file id.
    pub fn of(sha256: Option<[u8; 32]>, file_id: &[u8; 32]) -> Self {
        match sha256 {
            Some(digest) if digest == *file_id => FileVerification::Sha256FileId,
            Some(_) => FileVerification::OpaqueFileId,
            None => FileVerification::NotHashed,
        }
    }

    /// The bytes were verified against the sender's file id.
    pub fn is_verified(self) -> bool {
        self == FileVerification::Sha256FileId
    }
}

impl std::fmt::Display for FileVerification {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileVerification::Sha256FileId => "sha256-file-id",
            FileVerification::OpaqueFileId => "unverified (opaque file id)",
            FileVerification::NotHashed => "unverified (not hashed)",
        })
    }
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
    /// The file id: the content's SHA-256 from a rustox sender, an opaque (often random)
    /// id from others ([`FileVerification`]).
    pub file_id: [u8; 32],
}
