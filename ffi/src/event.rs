//! What one iteration of a `Tox` produced, in tox.h's terms: the payload of every callback
//! (`tox_iterate` calls them) and of every `Tox_Events` entry (`tox_events_iterate` returns
//! them). One list serves both, so both APIs see the same events in the same order.

use crate::types::{
    Tox_Conference_Type, Tox_Connection, Tox_File_Control, Tox_Message_Type, Tox_User_Status,
};

/// One event of an iteration, owning its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `tox_self_connection_status_cb`
    SelfConnectionStatus {
        /// NONE, TCP or UDP.
        status: Tox_Connection,
    },
    /// `tox_friend_request_cb`
    FriendRequest {
        /// The requester's long-term key.
        public_key: [u8; 32],
        /// Its message.
        message: Vec<u8>,
    },
    /// `tox_friend_connection_status_cb`
    FriendConnectionStatus {
        /// Which friend.
        friend_number: u32,
        /// NONE, TCP or UDP.
        status: Tox_Connection,
    },
    /// `tox_friend_lossy_packet_cb`
    FriendLossyPacket {
        /// Which friend.
        friend_number: u32,
        /// The packet, id first.
        data: Vec<u8>,
    },
    /// `tox_friend_lossless_packet_cb`
    FriendLosslessPacket {
        /// Which friend.
        friend_number: u32,
        /// The packet, id first.
        data: Vec<u8>,
    },
    /// `tox_friend_name_cb`
    FriendName {
        /// Which friend.
        friend_number: u32,
        /// The name.
        name: Vec<u8>,
    },
    /// `tox_friend_status_cb`
    FriendStatus {
        /// Which friend.
        friend_number: u32,
        /// Its user status.
        status: Tox_User_Status,
    },
    /// `tox_friend_status_message_cb`
    FriendStatusMessage {
        /// Which friend.
        friend_number: u32,
        /// The status message.
        message: Vec<u8>,
    },
    /// `tox_friend_message_cb`
    FriendMessage {
        /// Which friend.
        friend_number: u32,
        /// Normal or action.
        kind: Tox_Message_Type,
        /// The text.
        message: Vec<u8>,
    },
    /// `tox_friend_read_receipt_cb`
    FriendReadReceipt {
        /// Which friend.
        friend_number: u32,
        /// The id `tox_friend_send_message` returned.
        message_id: u32,
    },
    /// `tox_friend_typing_cb`
    FriendTyping {
        /// Which friend.
        friend_number: u32,
        /// Typing now?
        typing: bool,
    },
    /// `tox_file_chunk_request_cb`: send `length` bytes at `position` with
    /// `tox_file_send_chunk`; length 0 says the file is done.
    FileChunkRequest {
        /// Which friend.
        friend_number: u32,
        /// Which transfer.
        file_number: u32,
        /// Where the bytes start.
        position: u64,
        /// How many.
        length: u16,
    },
    /// `tox_file_recv_cb`: a friend offers a file.
    FileRecv {
        /// Which friend.
        friend_number: u32,
        /// Which transfer.
        file_number: u32,
        /// `TOX_FILE_KIND_DATA` (0) or `TOX_FILE_KIND_AVATAR` (1).
        kind: u32,
        /// Its size (`UINT64_MAX`: unknown).
        file_size: u64,
        /// Its name.
        filename: Vec<u8>,
    },
    /// `tox_file_recv_chunk_cb`: bytes of an incoming file; length 0 says it is complete.
    FileRecvChunk {
        /// Which friend.
        friend_number: u32,
        /// Which transfer.
        file_number: u32,
        /// Where the bytes go.
        position: u64,
        /// The bytes.
        data: Vec<u8>,
    },
    /// `tox_file_recv_control_cb`: the friend paused, resumed or cancelled a transfer.
    FileRecvControl {
        /// Which friend.
        friend_number: u32,
        /// Which transfer.
        file_number: u32,
        /// What it did.
        control: Tox_File_Control,
    },
    /// `tox_conference_invite_cb`: a friend invites us to a conference.
    ConferenceInvite {
        /// The inviting friend.
        friend_number: u32,
        /// Text or A/V.
        kind: Tox_Conference_Type,
        /// The cookie to pass to `tox_conference_join`.
        cookie: Vec<u8>,
    },
    /// `tox_conference_connected_cb`: we are connected to a conference we joined.
    ConferenceConnected {
        /// Which conference.
        conference_number: u32,
    },
    /// `tox_conference_message_cb`
    ConferenceMessage {
        /// Which conference.
        conference_number: u32,
        /// The sender's peer number.
        peer_number: u32,
        /// Normal or action.
        kind: Tox_Message_Type,
        /// The text.
        message: Vec<u8>,
    },
    /// `tox_conference_title_cb`
    ConferenceTitle {
        /// Which conference.
        conference_number: u32,
        /// Who set it; `UINT32_MAX` when it came with the peer list on joining.
        peer_number: u32,
        /// The new title.
        title: Vec<u8>,
    },
    /// `tox_conference_peer_name_cb`
    ConferencePeerName {
        /// Which conference.
        conference_number: u32,
        /// The peer.
        peer_number: u32,
        /// Its name.
        name: Vec<u8>,
    },
    /// `tox_conference_peer_list_changed_cb`: peers joined, left, went offline or returned.
    ConferencePeerListChanged {
        /// Which conference.
        conference_number: u32,
    },
}
