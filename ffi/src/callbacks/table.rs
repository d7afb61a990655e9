//! The callbacks a client registered, and calling them: tox.h's callback types, the table
//! an instance holds them in (handle/mod.rs), and [`fire`], which calls the one registered for
//! an event.

use std::ffi::c_void;

use crate::event::Event;
use crate::handle::opaque::Tox;
use crate::types::{
    Tox_Conference_Type, Tox_Connection, Tox_File_Control, Tox_Message_Type, Tox_User_Status,
};

/// `tox_self_connection_status_cb`.
pub type SelfConnectionStatusCb = unsafe extern "C" fn(*mut Tox, Tox_Connection, *mut c_void);
/// `tox_friend_name_cb`.
pub type FriendNameCb = unsafe extern "C" fn(*mut Tox, u32, *const u8, usize, *mut c_void);
/// `tox_friend_status_message_cb`.
pub type FriendStatusMessageCb = unsafe extern "C" fn(*mut Tox, u32, *const u8, usize, *mut c_void);
/// `tox_friend_status_cb`.
pub type FriendStatusCb = unsafe extern "C" fn(*mut Tox, u32, Tox_User_Status, *mut c_void);
/// `tox_friend_connection_status_cb`.
pub type FriendConnectionStatusCb =
    unsafe extern "C" fn(*mut Tox, u32, Tox_Connection, *mut c_void);
/// `tox_friend_typing_cb`.
pub type FriendTypingCb = unsafe extern "C" fn(*mut Tox, u32, bool, *mut c_void);
/// `tox_friend_read_receipt_cb`.
pub type FriendReadReceiptCb = unsafe extern "C" fn(*mut Tox, u32, u32, *mut c_void);
/// `tox_friend_request_cb`.
pub type FriendRequestCb = unsafe extern "C" fn(*mut Tox, *const u8, *const u8, usize, *mut c_void);
/// `tox_friend_message_cb`.
pub type FriendMessageCb =
    unsafe extern "C" fn(*mut Tox, u32, Tox_Message_Type, *const u8, usize, *mut c_void);
/// `tox_file_recv_control_cb`.
pub type FileRecvControlCb =
    unsafe extern "C" fn(*mut Tox, u32, u32, Tox_File_Control, *mut c_void);
/// `tox_file_chunk_request_cb`.
pub type FileChunkRequestCb = unsafe extern "C" fn(*mut Tox, u32, u32, u64, usize, *mut c_void);
/// `tox_file_recv_cb`.
pub type FileRecvCb =
    unsafe extern "C" fn(*mut Tox, u32, u32, u32, u64, *const u8, usize, *mut c_void);
/// `tox_file_recv_chunk_cb`.
pub type FileRecvChunkCb =
    unsafe extern "C" fn(*mut Tox, u32, u32, u64, *const u8, usize, *mut c_void);
/// `tox_friend_lossy_packet_cb`.
pub type FriendLossyPacketCb = unsafe extern "C" fn(*mut Tox, u32, *const u8, usize, *mut c_void);
/// `tox_friend_lossless_packet_cb`.
pub type FriendLosslessPacketCb =
    unsafe extern "C" fn(*mut Tox, u32, *const u8, usize, *mut c_void);
/// `tox_conference_invite_cb` (tox.h).
pub type tox_conference_invite_cb = unsafe extern "C" fn(
    tox: *mut Tox,
    friend_number: u32,
    kind: Tox_Conference_Type,
    cookie: *const u8,
    length: usize,
    user_data: *mut c_void,
);
/// `tox_conference_connected_cb` (tox.h).
pub type tox_conference_connected_cb =
    unsafe extern "C" fn(tox: *mut Tox, conference_number: u32, user_data: *mut c_void);
/// `tox_conference_message_cb` (tox.h).
pub type tox_conference_message_cb = unsafe extern "C" fn(
    tox: *mut Tox,
    conference_number: u32,
    peer_number: u32,
    kind: Tox_Message_Type,
    message: *const u8,
    length: usize,
    user_data: *mut c_void,
);
/// `tox_conference_title_cb` (tox.h).
pub type tox_conference_title_cb = unsafe extern "C" fn(
    tox: *mut Tox,
    conference_number: u32,
    peer_number: u32,
    title: *const u8,
    length: usize,
    user_data: *mut c_void,
);
/// `tox_conference_peer_name_cb` (tox.h).
pub type tox_conference_peer_name_cb = unsafe extern "C" fn(
    tox: *mut Tox,
    conference_number: u32,
    peer_number: u32,
    name: *const u8,
    length: usize,
    user_data: *mut c_void,
);
/// `tox_conference_peer_list_changed_cb` (tox.h).
pub type tox_conference_peer_list_changed_cb =
    unsafe extern "C" fn(tox: *mut Tox, conference_number: u32, user_data: *mut c_void);

/// The callbacks a client registered (function pointers: copied out before they run).
#[derive(Default, Clone, Copy)]
pub struct Callbacks {
    /// `tox_callback_self_connection_status`.
    pub self_connection_status: Option<SelfConnectionStatusCb>,
    /// `tox_callback_friend_name`.
    pub friend_name: Option<FriendNameCb>,
    /// `tox_callback_friend_status_message`.
    pub friend_status_message: Option<FriendStatusMessageCb>,
    /// `tox_callback_friend_status`.
    pub friend_status: Option<FriendStatusCb>,
    /// `tox_callback_friend_connection_status`.
    pub friend_connection_status: Option<FriendConnectionStatusCb>,
    /// `tox_callback_friend_typing`.
    pub friend_typing: Option<FriendTypingCb>,
    /// `tox_callback_friend_read_receipt`.
    pub friend_read_receipt: Option<FriendReadReceiptCb>,
    /// `tox_callback_friend_request`.
    pub friend_request: Option<FriendRequestCb>,
    /// `tox_callback_friend_message`.
    pub friend_message: Option<FriendMessageCb>,
    /// `tox_callback_file_recv_control`.
    pub file_recv_control: Option<FileRecvControlCb>,
    /// `tox_callback_file_chunk_request`.
    pub file_chunk_request: Option<FileChunkRequestCb>,
    /// `tox_callback_file_recv`.
    pub file_recv: Option<FileRecvCb>,
    /// `tox_callback_file_recv_chunk`.
    pub file_recv_chunk: Option<FileRecvChunkCb>,
    /// `tox_callback_friend_lossy_packet`.
    pub friend_lossy_packet: Option<FriendLossyPacketCb>,
    /// `tox_callback_friend_lossless_packet`.
    pub friend_lossless_packet: Option<FriendLosslessPacketCb>,
    /// `tox_callback_conference_invite`.
    pub conference_invite: Option<tox_conference_invite_cb>,
    /// `tox_callback_conference_connected`.
    pub conference_connected: Option<tox_conference_connected_cb>,
    /// `tox_callback_conference_message`.
    pub conference_message: Option<tox_conference_message_cb>,
    /// `tox_callback_conference_title`.
    pub conference_title: Option<tox_conference_title_cb>,
    /// `tox_callback_conference_peer_name`.
    pub conference_peer_name: Option<tox_conference_peer_name_cb>,
    /// `tox_callback_conference_peer_list_changed`.
    pub conference_peer_list_changed: Option<tox_conference_peer_list_changed_cb>,
}

/// A pointer to `bytes` for C: NULL for none, as c-toxcore passes an empty file chunk.
fn ptr(bytes: &[u8]) -> *const u8 {
    if bytes.is_empty() {
        std::ptr::null()
    } else {
        bytes.as_ptr()
    }
}

/// Calls the callback registered for `event`, if any.
///
/// # Safety
/// `tox` is the instance the event came from; the callbacks are the client's.
pub unsafe fn fire(tox: *mut Tox, callbacks: &Callbacks, event: &Event, user_data: *mut c_void) {
    // SAFETY (every call below): a registered callback has tox.h's signature for its
    // event; the pointers passed live until it returns.
    unsafe {
        match event {
            Event::SelfConnectionStatus { status } => {
                if let Some(cb) = callbacks.self_connection_status {
                    cb(tox, *status, user_data)
                }
            }
            Event::FriendRequest {
                public_key,
                message,
            } => {
                if let Some(cb) = callbacks.friend_request {
                    cb(
                        tox,
                        public_key.as_ptr(),
                        message.as_ptr(),
                        message.len(),
                        user_data,
                    )
                }
            }
            Event::FriendConnectionStatus {
                friend_number,
                status,
            } => {
                if let Some(cb) = callbacks.friend_connection_status {
                    cb(tox, *friend_number, *status, user_data)
                }
            }
            Event::FriendLossyPacket {
                friend_number,
                data,
            } => {
                if let Some(cb) = callbacks.friend_lossy_packet {
                    cb(tox, *friend_number, data.as_ptr(), data.len(), user_data)
                }
            }
            Event::FriendLosslessPacket {
                friend_number,
                data,
            } => {
                if let Some(cb) = callbacks.friend_lossless_packet {
                    cb(tox, *friend_number, data.as_ptr(), data.len(), user_data)
                }
            }
            Event::FriendName {
                friend_number,
                name,
            } => {
                if let Some(cb) = callbacks.friend_name {
                    cb(tox, *friend_number, name.as_ptr(), name.len(), user_data)
                }
            }
            Event::FriendStatus {
                friend_number,
                status,
            } => {
                if let Some(cb) = callbacks.friend_status {
                    cb(tox, *friend_number, *status, user_data)
                }
            }
            Event::FriendStatusMessage {
                friend_number,
                message,
            } => {
                if let Some(cb) = callbacks.friend_status_message {
                    cb(
                        tox,
                        *friend_number,
                        message.as_ptr(),
                        message.len(),
                        user_data,
                    )
                }
            }
            Event::FriendMessage {
                friend_number,
                kind,
                message,
            } => {
                if let Some(cb) = callbacks.friend_message {
                    cb(
                        tox,
                        *friend_number,
                        *kind,
                        message.as_ptr(),
                        message.len(),
                        user_data,
                    )
                }
            }
            Event::FriendReadReceipt {
                friend_number,
                message_id,
            } => {
                if let Some(cb) = callbacks.friend_read_receipt {
                    cb(tox, *friend_number, *message_id, user_data)
                }
            }
            Event::FriendTyping {
                friend_number,
                typing,
            } => {
                if let Some(cb) = callbacks.friend_typing {
                    cb(tox, *friend_number, *typing, user_data)
                }
            }
            Event::FileChunkRequest {
                friend_number,
                file_number,
                position,
                length,
            } => {
                if let Some(cb) = callbacks.file_chunk_request {
                    cb(
                        tox,
                        *friend_number,
                        *file_number,
                        *position,
                        usize::from(*length),
                        user_data,
                    )
                }
            }
            Event::FileRecv {
                friend_number,
                file_number,
                kind,
                file_size,
                filename,
            } => {
                if let Some(cb) = callbacks.file_recv {
                    cb(
                        tox,
                        *friend_number,
                        *file_number,
                        *kind,
                        *file_size,
                        filename.as_ptr(),
                        filename.len(),
                        user_data,
                    )
                }
            }
            Event::FileRecvChunk {
                friend_number,
                file_number,
                position,
                data,
            } => {
                if let Some(cb) = callbacks.file_recv_chunk {
                    cb(
                        tox,
                        *friend_number,
                        *file_number,
                        *position,
                        ptr(data),
                        data.len(),
                        user_data,
                    )
                }
            }
            Event::FileRecvControl {
                friend_number,
                file_number,
                control,
            } => {
                if let Some(cb) = callbacks.file_recv_control {
                    cb(tox, *friend_number, *file_number, *control, user_data)
                }
            }
            Event::ConferenceInvite {
                friend_number,
                kind,
                cookie,
            } => {
                if let Some(cb) = callbacks.conference_invite {
                    cb(
                        tox,
                        *friend_number,
                        *kind,
                        cookie.as_ptr(),
                        cookie.len(),
                        user_data,
                    )
                }
            }
            Event::ConferenceConnected { conference_number } => {
                if let Some(cb) = callbacks.conference_connected {
                    cb(tox, *conference_number, user_data)
                }
            }
            Event::ConferenceMessage {
                conference_number,
                peer_number,
                kind,
                message,
            } => {
                if let Some(cb) = callbacks.conference_message {
                    // c-toxcore hands the callback a NUL-terminated copy
                    // (`handle_message_packet_group`); a client may print it as a C string.
                    let mut terminated = Vec::with_capacity(message.len() + 1);
                    terminated.extend_from_slice(message);
                    terminated.push(0);
                    cb(
                        tox,
                        *conference_number,
                        *peer_number,
                        *kind,
                        terminated.as_ptr(),
                        message.len(),
                        user_data,
                    )
                }
            }
            Event::ConferenceTitle {
                conference_number,
                peer_number,
                title,
            } => {
                if let Some(cb) = callbacks.conference_title {
                    cb(
                        tox,
                        *conference_number,
                        *peer_number,
                        title.as_ptr(),
                        title.len(),
                        user_data,
                    )
                }
            }
            Event::ConferencePeerName {
                conference_number,
                peer_number,
                name,
            } => {
                if let Some(cb) = callbacks.conference_peer_name {
                    cb(
                        tox,
                        *conference_number,
                        *peer_number,
                        name.as_ptr(),
                        name.len(),
                        user_data,
                    )
                }
            }
            Event::ConferencePeerListChanged { conference_number } => {
                if let Some(cb) = callbacks.conference_peer_list_changed {
                    cb(tox, *conference_number, user_data)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// What the recording callbacks saw, as text.
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn text(ptr: *const u8, len: usize) -> String {
        // SAFETY: the callback's contract: `len` bytes at `ptr`.
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(ptr, len) }).into_owned()
    }

    unsafe extern "C" fn invite(
        _: *mut Tox,
        f: u32,
        k: Tox_Conference_Type,
        c: *const u8,
        l: usize,
        u: *mut c_void,
    ) {
        let line = format!("invite {f} {k:?} {} {}", text(c, l), u as usize);
        SEEN.lock().unwrap().push(line);
    }
    unsafe extern "C" fn connected(_: *mut Tox, c: u32, _: *mut c_void) {
        SEEN.lock().unwrap().push(format!("connected {c}"));
    }
    unsafe extern "C" fn message(
        _: *mut Tox,
        c: u32,
        p: u32,
        k: Tox_Message_Type,
        m: *const u8,
        l: usize,
        _: *mut c_void,
    ) {
        // SAFETY: c-toxcore's promise kept: a NUL follows the message.
        let nul = unsafe { *m.add(l) };
        let line = format!("message {c} {p} {k:?} {} nul={nul}", text(m, l));
        SEEN.lock().unwrap().push(line);
    }
    unsafe extern "C" fn title(
        _: *mut Tox,
        c: u32,
        p: u32,
        t: *const u8,
        l: usize,
        _: *mut c_void,
    ) {
        SEEN.lock()
            .unwrap()
            .push(format!("title {c} {p} {}", text(t, l)));
    }
    unsafe extern "C" fn name(_: *mut Tox, c: u32, p: u32, n: *const u8, l: usize, _: *mut c_void) {
        SEEN.lock()
            .unwrap()
            .push(format!("name {c} {p} {}", text(n, l)));
    }
    unsafe extern "C" fn list_changed(_: *mut Tox, c: u32, _: *mut c_void) {
        SEEN.lock().unwrap().push(format!("peers {c}"));
    }

    #[test]
    fn conference_events_reach_their_callbacks_with_c_toxcores_arguments() {
        let callbacks = Callbacks {
            conference_invite: Some(invite),
            conference_connected: Some(connected),
            conference_message: Some(message),
            conference_title: Some(title),
            conference_peer_name: Some(name),
            conference_peer_list_changed: Some(list_changed),
            ..Callbacks::default()
        };
        let events = [
            Event::ConferenceInvite {
                friend_number: 3,
                kind: Tox_Conference_Type::TEXT,
                cookie: b"cookie".to_vec(),
            },
            Event::ConferenceConnected {
                conference_number: 1,
            },
            Event::ConferencePeerListChanged {
                conference_number: 1,
            },
            Event::ConferencePeerName {
                conference_number: 1,
                peer_number: 2,
                name: b"bob".to_vec(),
            },
            Event::ConferenceTitle {
                conference_number: 1,
                peer_number: u32::MAX,
                title: b"the title".to_vec(),
            },
            Event::ConferenceMessage {
                conference_number: 1,
                peer_number: 2,
                kind: Tox_Message_Type::ACTION,
                message: b"waves".to_vec(),
            },
        ];
        let user_data = 42usize as *mut c_void;
        for event in &events {
            // SAFETY: the callbacks above have tox.h's signatures; `tox` is not used.
            unsafe { fire(std::ptr::null_mut(), &callbacks, event, user_data) };
        }
        // SAFETY: no callback is registered for these: nothing is called.
        unsafe {
            fire(
                std::ptr::null_mut(),
                &Callbacks::default(),
                &events[0],
                user_data,
            )
        };
        assert_eq!(
            *SEEN.lock().unwrap(),
            [
                "invite 3 TEXT cookie 42",
                "connected 1",
                "peers 1",
                "name 1 2 bob",
                "title 1 4294967295 the title",
                "message 1 2 ACTION waves nul=0",
            ]
        );
    }
}
