//! The callbacks a client registered, and calling them: tox.h's callback types, the table
//! an instance holds them in (handle/mod.rs), and [`fire`], which calls the one registered for
//! an event.

use std::ffi::c_void;

use crate::event::Event;
use crate::handle::opaque::Tox;
use crate::types::{Tox_Connection, Tox_File_Control, Tox_Message_Type, Tox_User_Status};

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
        }
    }
}
