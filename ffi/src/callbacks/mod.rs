//! tox.h's callbacks: registered with `tox_callback_<event>`, called from `tox_iterate`
//! with the `user_data` it was given, after the instance's lock is released (handle/mod.rs), in
//! the order the events happened.

use crate::guard;
use crate::handle::{tox_ref, Tox};

pub(crate) mod table;

pub use table::*;

/// Registration functions: a NULL callback unregisters; a NULL instance is ignored.
macro_rules! registrations {
    ($($field:ident: $ty:ty => $name:ident;)*) => {$(
        #[doc = concat!("Registers the `", stringify!($field), "` callback (`", stringify!($name), "`).")]
        #[no_mangle]
        pub unsafe extern "C" fn $name(tox: *mut Tox, callback: Option<$ty>) {
            guard::call((), || {
                // SAFETY: tox.h's contract for `tox`.
                if let Some(tox) = unsafe { tox_ref(tox) } {
                    tox.callbacks().$field = callback;
                }
            })
        }
    )*};
}

registrations! {
    self_connection_status: SelfConnectionStatusCb => tox_callback_self_connection_status;
    friend_name: FriendNameCb => tox_callback_friend_name;
    friend_status_message: FriendStatusMessageCb => tox_callback_friend_status_message;
    friend_status: FriendStatusCb => tox_callback_friend_status;
    friend_connection_status: FriendConnectionStatusCb => tox_callback_friend_connection_status;
    friend_typing: FriendTypingCb => tox_callback_friend_typing;
    friend_read_receipt: FriendReadReceiptCb => tox_callback_friend_read_receipt;
    friend_request: FriendRequestCb => tox_callback_friend_request;
    friend_message: FriendMessageCb => tox_callback_friend_message;
    file_recv_control: FileRecvControlCb => tox_callback_file_recv_control;
    file_chunk_request: FileChunkRequestCb => tox_callback_file_chunk_request;
    file_recv: FileRecvCb => tox_callback_file_recv;
    file_recv_chunk: FileRecvChunkCb => tox_callback_file_recv_chunk;
    friend_lossy_packet: FriendLossyPacketCb => tox_callback_friend_lossy_packet;
    friend_lossless_packet: FriendLosslessPacketCb => tox_callback_friend_lossless_packet;
    conference_invite: tox_conference_invite_cb => tox_callback_conference_invite;
    conference_connected: tox_conference_connected_cb => tox_callback_conference_connected;
    conference_message: tox_conference_message_cb => tox_callback_conference_message;
    conference_title: tox_conference_title_cb => tox_callback_conference_title;
    conference_peer_name: tox_conference_peer_name_cb => tox_callback_conference_peer_name;
    conference_peer_list_changed: tox_conference_peer_list_changed_cb
        => tox_callback_conference_peer_list_changed;
}
