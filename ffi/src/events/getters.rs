//! The C API of the records: one getter per field of each event type.

use super::msgpack::len32;
use super::records::*;
use crate::guard;
use crate::types::{
    Tox_Conference_Type_Value, Tox_Connection_Value, Tox_File_Control_Value,
    Tox_Message_Type_Value, Tox_User_Status_Value,
};

/// What a getter returns for a NULL event.
trait Null {
    const NULL: Self;
}

impl Null for u16 {
    const NULL: Self = 0;
}

impl Null for u32 {
    const NULL: Self = 0;
}

impl Null for u64 {
    const NULL: Self = 0;
}

impl Null for bool {
    const NULL: Self = false;
}

impl Null for *const u8 {
    const NULL: Self = std::ptr::null();
}

/// Defines the getters of each record: `name -> ret = |e| body` reads a field of a
/// non-NULL record; a NULL record gives [`Null::NULL`] (c-toxcore asserts a non-NULL
/// event). Each getter's doc comment says what the field is.
macro_rules! getters {
    ($($record:ident {
        $($(#[$doc:meta])* $name:ident -> $ret:ty = |$e:ident| $body:expr;)+
    })*) => {$($(
        $(#[$doc])*
        ///
        /// c-toxcore asserts a non-NULL event; a NULL one gives 0, false or NULL here.
        #[no_mangle]
        pub unsafe extern "C" fn $name(event: *const $record) -> $ret {
            guard::call(<$ret as Null>::NULL, || {
                // SAFETY: tox_events.h: a non-NULL event comes from a `tox_events_get_*`
                // accessor (or a dispatch callback) of events not yet freed.
                match unsafe { event.as_ref() } {
                    Some($e) => $body,
                    None => <$ret as Null>::NULL,
                }
            })
        }
    )+)*};
}

getters! {
    Tox_Event_Conference_Connected {
        /// `tox_event_conference_connected_get_conference_number`: the conference joined.
        tox_event_conference_connected_get_conference_number -> u32 = |e| e.conference_number;
    }
    Tox_Event_Conference_Invite {
        /// `tox_event_conference_invite_get_cookie`: the invitation's cookie, for
        /// `tox_conference_join`; valid until `tox_events_free`.
        tox_event_conference_invite_get_cookie -> *const u8 = |e| e.cookie.as_ptr();
        /// `tox_event_conference_invite_get_cookie_length`: the cookie's length.
        tox_event_conference_invite_get_cookie_length -> u32 = |e| len32(&e.cookie);
        /// `tox_event_conference_invite_get_type`: the `Tox_Conference_Type` value, as stored
        /// (c-toxcore does not check loaded values).
        tox_event_conference_invite_get_type -> Tox_Conference_Type_Value = |e| e.conference_type;
        /// `tox_event_conference_invite_get_friend_number`: the inviting friend.
        tox_event_conference_invite_get_friend_number -> u32 = |e| e.friend_number;
    }
    Tox_Event_Conference_Message {
        /// `tox_event_conference_message_get_message`: the text; valid until `tox_events_free`.
        tox_event_conference_message_get_message -> *const u8 = |e| e.message.as_ptr();
        /// `tox_event_conference_message_get_message_length`: the text's length.
        tox_event_conference_message_get_message_length -> u32 = |e| len32(&e.message);
        /// `tox_event_conference_message_get_type`: the `Tox_Message_Type` value, as stored.
        tox_event_conference_message_get_type -> Tox_Message_Type_Value = |e| e.message_type;
        /// `tox_event_conference_message_get_conference_number`: the conference.
        tox_event_conference_message_get_conference_number -> u32 = |e| e.conference_number;
        /// `tox_event_conference_message_get_peer_number`: the peer who spoke.
        tox_event_conference_message_get_peer_number -> u32 = |e| e.peer_number;
    }
    Tox_Event_Conference_Peer_List_Changed {
        /// `tox_event_conference_peer_list_changed_get_conference_number`: the conference.
        tox_event_conference_peer_list_changed_get_conference_number -> u32
            = |e| e.conference_number;
    }
    Tox_Event_Conference_Peer_Name {
        /// `tox_event_conference_peer_name_get_name`: the new name; valid until
        /// `tox_events_free`.
        tox_event_conference_peer_name_get_name -> *const u8 = |e| e.name.as_ptr();
        /// `tox_event_conference_peer_name_get_name_length`: the name's length.
        tox_event_conference_peer_name_get_name_length -> u32 = |e| len32(&e.name);
        /// `tox_event_conference_peer_name_get_conference_number`: the conference.
        tox_event_conference_peer_name_get_conference_number -> u32 = |e| e.conference_number;
        /// `tox_event_conference_peer_name_get_peer_number`: the renamed peer.
        tox_event_conference_peer_name_get_peer_number -> u32 = |e| e.peer_number;
    }
    Tox_Event_Conference_Title {
        /// `tox_event_conference_title_get_title`: the new title; valid until `tox_events_free`.
        tox_event_conference_title_get_title -> *const u8 = |e| e.title.as_ptr();
        /// `tox_event_conference_title_get_title_length`: the title's length.
        tox_event_conference_title_get_title_length -> u32 = |e| len32(&e.title);
        /// `tox_event_conference_title_get_conference_number`: the conference.
        tox_event_conference_title_get_conference_number -> u32 = |e| e.conference_number;
        /// `tox_event_conference_title_get_peer_number`: the peer who set it.
        tox_event_conference_title_get_peer_number -> u32 = |e| e.peer_number;
    }
    Tox_Event_File_Chunk_Request {
        /// `tox_event_file_chunk_request_get_length`: how many bytes to send (0: the file is
        /// done).
        tox_event_file_chunk_request_get_length -> u16 = |e| e.length;
        /// `tox_event_file_chunk_request_get_file_number`: the transfer.
        tox_event_file_chunk_request_get_file_number -> u32 = |e| e.file_number;
        /// `tox_event_file_chunk_request_get_friend_number`: the receiving friend.
        tox_event_file_chunk_request_get_friend_number -> u32 = |e| e.friend_number;
        /// `tox_event_file_chunk_request_get_position`: where the requested bytes start.
        tox_event_file_chunk_request_get_position -> u64 = |e| e.position;
    }
    Tox_Event_File_Recv {
        /// `tox_event_file_recv_get_filename`: the offered file's name; valid until
        /// `tox_events_free`.
        tox_event_file_recv_get_filename -> *const u8 = |e| e.filename.as_ptr();
        /// `tox_event_file_recv_get_filename_length`: the name's length.
        tox_event_file_recv_get_filename_length -> u32 = |e| len32(&e.filename);
        /// `tox_event_file_recv_get_file_number`: the transfer.
        tox_event_file_recv_get_file_number -> u32 = |e| e.file_number;
        /// `tox_event_file_recv_get_file_size`: the file's size (`UINT64_MAX`: unknown).
        tox_event_file_recv_get_file_size -> u64 = |e| e.file_size;
        /// `tox_event_file_recv_get_friend_number`: the offering friend.
        tox_event_file_recv_get_friend_number -> u32 = |e| e.friend_number;
        /// `tox_event_file_recv_get_kind`: `TOX_FILE_KIND_DATA`, `TOX_FILE_KIND_AVATAR` or a
        /// client's own kind.
        tox_event_file_recv_get_kind -> u32 = |e| e.kind;
    }
    Tox_Event_File_Recv_Chunk {
        /// `tox_event_file_recv_chunk_get_data`: the chunk's bytes; valid until
        /// `tox_events_free`.
        tox_event_file_recv_chunk_get_data -> *const u8 = |e| e.data.as_ptr();
        /// `tox_event_file_recv_chunk_get_length`: the chunk's length (0: the file is complete).
        tox_event_file_recv_chunk_get_length -> u32 = |e| len32(&e.data);
        /// `tox_event_file_recv_chunk_get_file_number`: the transfer.
        tox_event_file_recv_chunk_get_file_number -> u32 = |e| e.file_number;
        /// `tox_event_file_recv_chunk_get_friend_number`: the sending friend.
        tox_event_file_recv_chunk_get_friend_number -> u32 = |e| e.friend_number;
        /// `tox_event_file_recv_chunk_get_position`: where the chunk goes in the file.
        tox_event_file_recv_chunk_get_position -> u64 = |e| e.position;
    }
    Tox_Event_File_Recv_Control {
        /// `tox_event_file_recv_control_get_control`: the `Tox_File_Control` value, as stored.
        tox_event_file_recv_control_get_control -> Tox_File_Control_Value = |e| e.control;
        /// `tox_event_file_recv_control_get_file_number`: the transfer.
        tox_event_file_recv_control_get_file_number -> u32 = |e| e.file_number;
        /// `tox_event_file_recv_control_get_friend_number`: the friend who sent the control.
        tox_event_file_recv_control_get_friend_number -> u32 = |e| e.friend_number;
    }
    Tox_Event_Friend_Connection_Status {
        /// `tox_event_friend_connection_status_get_connection_status`: the `Tox_Connection`
        /// value, as stored.
        tox_event_friend_connection_status_get_connection_status -> Tox_Connection_Value
            = |e| e.connection_status;
        /// `tox_event_friend_connection_status_get_friend_number`: the friend.
        tox_event_friend_connection_status_get_friend_number -> u32 = |e| e.friend_number;
    }
    Tox_Event_Friend_Lossless_Packet {
        /// `tox_event_friend_lossless_packet_get_data`: the packet, id byte first; valid until
        /// `tox_events_free`.
        tox_event_friend_lossless_packet_get_data -> *const u8 = |e| e.data.as_ptr();
        /// `tox_event_friend_lossless_packet_get_data_length`: the packet's length.
        tox_event_friend_lossless_packet_get_data_length -> u32 = |e| len32(&e.data);
        /// `tox_event_friend_lossless_packet_get_friend_number`: the sender.
        tox_event_friend_lossless_packet_get_friend_number -> u32 = |e| e.friend_number;
    }
    Tox_Event_Friend_Lossy_Packet {
        /// `tox_event_friend_lossy_packet_get_data`: the packet, id byte first; valid until
        /// `tox_events_free`.
        tox_event_friend_lossy_packet_get_data -> *const u8 = |e| e.data.as_ptr();
        /// `tox_event_friend_lossy_packet_get_data_length`: the packet's length.
        tox_event_friend_lossy_packet_get_data_length -> u32 = |e| len32(&e.data);
        /// `tox_event_friend_lossy_packet_get_friend_number`: the sender.
        tox_event_friend_lossy_packet_get_friend_number -> u32 = |e| e.friend_number;
    }
    Tox_Event_Friend_Message {
        /// `tox_event_friend_message_get_friend_number`: the sender.
        tox_event_friend_message_get_friend_number -> u32 = |e| e.friend_number;
        /// `tox_event_friend_message_get_type`: the `Tox_Message_Type` value, as stored.
        tox_event_friend_message_get_type -> Tox_Message_Type_Value = |e| e.message_type;
        /// `tox_event_friend_message_get_message_length`: the text's length.
        tox_event_friend_message_get_message_length -> u32 = |e| len32(&e.message);
        /// `tox_event_friend_message_get_message`: the text (not NUL-terminated, as in
        /// c-toxcore); valid until `tox_events_free`.
        tox_event_friend_message_get_message -> *const u8 = |e| e.message.as_ptr();
    }
    Tox_Event_Friend_Name {
        /// `tox_event_friend_name_get_name`: the friend's new name; valid until
        /// `tox_events_free`.
        tox_event_friend_name_get_name -> *const u8 = |e| e.name.as_ptr();
        /// `tox_event_friend_name_get_name_length`: the name's length.
        tox_event_friend_name_get_name_length -> u32 = |e| len32(&e.name);
        /// `tox_event_friend_name_get_friend_number`: the friend.
        tox_event_friend_name_get_friend_number -> u32 = |e| e.friend_number;
    }
    Tox_Event_Friend_Read_Receipt {
        /// `tox_event_friend_read_receipt_get_friend_number`: the friend who received it.
        tox_event_friend_read_receipt_get_friend_number -> u32 = |e| e.friend_number;
        /// `tox_event_friend_read_receipt_get_message_id`: the id `tox_friend_send_message`
        /// returned.
        tox_event_friend_read_receipt_get_message_id -> u32 = |e| e.message_id;
    }
    Tox_Event_Friend_Request {
        /// `tox_event_friend_request_get_message`: the request's message; valid until
        /// `tox_events_free`.
        tox_event_friend_request_get_message -> *const u8 = |e| e.message.as_ptr();
        /// `tox_event_friend_request_get_public_key`: the requester's long-term key,
        /// `TOX_PUBLIC_KEY_SIZE` bytes; valid until `tox_events_free`.
        tox_event_friend_request_get_public_key -> *const u8 = |e| e.public_key.as_ptr();
        /// `tox_event_friend_request_get_message_length`: the message's length.
        tox_event_friend_request_get_message_length -> u32 = |e| len32(&e.message);
    }
    Tox_Event_Friend_Status {
        /// `tox_event_friend_status_get_status`: the `Tox_User_Status` value, as stored.
        tox_event_friend_status_get_status -> Tox_User_Status_Value = |e| e.status;
        /// `tox_event_friend_status_get_friend_number`: the friend.
        tox_event_friend_status_get_friend_number -> u32 = |e| e.friend_number;
    }
    Tox_Event_Friend_Status_Message {
        /// `tox_event_friend_status_message_get_message`: the new status message; valid until
        /// `tox_events_free`.
        tox_event_friend_status_message_get_message -> *const u8 = |e| e.message.as_ptr();
        /// `tox_event_friend_status_message_get_message_length`: its length.
        tox_event_friend_status_message_get_message_length -> u32 = |e| len32(&e.message);
        /// `tox_event_friend_status_message_get_friend_number`: the friend.
        tox_event_friend_status_message_get_friend_number -> u32 = |e| e.friend_number;
    }
    Tox_Event_Friend_Typing {
        /// `tox_event_friend_typing_get_typing`: whether the friend is typing now.
        tox_event_friend_typing_get_typing -> bool = |e| e.typing;
        /// `tox_event_friend_typing_get_friend_number`: the friend.
        tox_event_friend_typing_get_friend_number -> u32 = |e| e.friend_number;
    }
    Tox_Event_Self_Connection_Status {
        /// `tox_event_self_connection_status_get_connection_status`: the `Tox_Connection`
        /// value, as stored.
        tox_event_self_connection_status_get_connection_status -> Tox_Connection_Value
            = |e| e.connection_status;
    }
}
