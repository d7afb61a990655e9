//! Friends (tox.h): adding and deleting them, what they told us, and messages and custom
//! packets to them.

use rustox_core::friend::FriendAddError;
use rustox_core::friend::ToxId;
use rustox_core::node::{FriendListError, FriendNumber, MessageKind, NodeError};
use rustox_net_crypto::crypto::PublicKey;

use crate::guard;
use crate::handle::{tox_ref, user_status, State, Tox};
use crate::types::{
    Tox_Connection, Tox_Err_Friend_Add, Tox_Err_Friend_By_Public_Key, Tox_Err_Friend_Custom_Packet,
    Tox_Err_Friend_Delete, Tox_Err_Friend_Get_Last_Online, Tox_Err_Friend_Get_Public_Key,
    Tox_Err_Friend_Query, Tox_Err_Friend_Send_Message, Tox_Message_Type, Tox_User_Status,
};

/// `TOX_ADDRESS_SIZE`.
const ADDRESS_SIZE: usize = 38;

fn add_error(e: FriendAddError) -> Tox_Err_Friend_Add {
    match e {
        FriendAddError::TooLong(_) => Tox_Err_Friend_Add::TOO_LONG,
        FriendAddError::NoMessage => Tox_Err_Friend_Add::NO_MESSAGE,
        FriendAddError::OwnKey => Tox_Err_Friend_Add::OWN_KEY,
        FriendAddError::AlreadySent => Tox_Err_Friend_Add::ALREADY_SENT,
        FriendAddError::BadChecksum => Tox_Err_Friend_Add::BAD_CHECKSUM,
        FriendAddError::SetNewNospam => Tox_Err_Friend_Add::SET_NEW_NOSPAM,
    }
}

/// Adds a friend by Tox ID and sends it a friend request (`tox_friend_add`): returns its
/// friend number, or `UINT32_MAX`. The request is resent until the friend comes online.
/// Messages longer than 921 bytes are refused (TOO_LONG): 0.2.18 allows 1016, but receivers
/// drop requests that long (docs/protocol.md §6.5; c-toxcore 0.2.21 lowered the limit to 921).
#[no_mangle]
pub unsafe extern "C" fn tox_friend_add(
    tox: *mut Tox,
    address: *const u8,
    message: *const u8,
    length: usize,
    error: *mut Tox_Err_Friend_Add,
) -> u32 {
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_Friend_Add::NULL, u32::MAX);
        };
        // SAFETY: TOX_ADDRESS_SIZE bytes at `address`, `length` at `message`, per tox.h.
        let (Some(address), Some(message)) = (unsafe {
            (
                guard::array::<ADDRESS_SIZE>(address),
                guard::bytes(message, length),
            )
        }) else {
            return guard::fail(error, Tox_Err_Friend_Add::NULL, u32::MAX);
        };
        let mut state = tox.lock();
        let own = state.node.public_key();
        let id = match rustox_core::friend::validate_friend_add(&address, message, &own) {
            Ok(id) => id,
            Err(e) => return guard::fail(error, add_error(e), u32::MAX),
        };
        let now = state.now();
        let result = state
            .node
            .add_friend(now, &ToxId::new(id.pk, id.nospam), message);
        state.flush();
        match result {
            Ok(n) => guard::fail(error, Tox_Err_Friend_Add::OK, n.0),
            Err(e) => guard::fail(error, add_error(e), u32::MAX),
        }
    })
}

/// Adds a friend by public key without a request (`tox_friend_add_norequest`): how a
/// client accepts a friend request.
#[no_mangle]
pub unsafe extern "C" fn tox_friend_add_norequest(
    tox: *mut Tox,
    public_key: *const u8,
    error: *mut Tox_Err_Friend_Add,
) -> u32 {
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_Friend_Add::NULL, u32::MAX);
        };
        // SAFETY: TOX_PUBLIC_KEY_SIZE bytes, per tox.h.
        let Some(pk) = (unsafe { guard::array::<32>(public_key) }) else {
            return guard::fail(error, Tox_Err_Friend_Add::NULL, u32::MAX);
        };
        let pk = PublicKey(pk);
        if !pk.is_valid() {
            return guard::fail(error, Tox_Err_Friend_Add::BAD_CHECKSUM, u32::MAX);
        }
        let mut state = tox.lock();
        let now = state.now();
        let result = state.node.add_friend_norequest(now, pk);
        state.flush();
        match result {
            Ok(n) => guard::fail(error, Tox_Err_Friend_Add::OK, n.0),
            Err(NodeError::OwnKey) => guard::fail(error, Tox_Err_Friend_Add::OWN_KEY, u32::MAX),
            Err(NodeError::FriendList(FriendListError::AlreadyFriend)) => {
                guard::fail(error, Tox_Err_Friend_Add::ALREADY_SENT, u32::MAX)
            }
            Err(_) => guard::fail(error, Tox_Err_Friend_Add::MALLOC, u32::MAX),
        }
    })
}

/// Removes a friend (`tox_friend_delete`): its session ends, it can no longer reach us.
#[no_mangle]
pub unsafe extern "C" fn tox_friend_delete(
    tox: *mut Tox,
    friend_number: u32,
    error: *mut Tox_Err_Friend_Delete,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_Friend_Delete::FRIEND_NOT_FOUND, false);
        };
        let mut state = tox.lock();
        let now = state.now();
        let result = state.node.delete_friend(now, FriendNumber(friend_number));
        state.files.friend_offline(friend_number);
        state.delivered.remove(&friend_number);
        state.flush();
        match result {
            Ok(()) => guard::fail(error, Tox_Err_Friend_Delete::OK, true),
            Err(_) => guard::fail(error, Tox_Err_Friend_Delete::FRIEND_NOT_FOUND, false),
        }
    })
}

/// The friend number of a public key (`tox_friend_by_public_key`), or `UINT32_MAX`.
#[no_mangle]
pub unsafe extern "C" fn tox_friend_by_public_key(
    tox: *const Tox,
    public_key: *const u8,
    error: *mut Tox_Err_Friend_By_Public_Key,
) -> u32 {
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract for `tox` and the 32-byte key.
        let (Some(tox), Some(pk)) = (unsafe { (tox_ref(tox), guard::array::<32>(public_key)) })
        else {
            return guard::fail(error, Tox_Err_Friend_By_Public_Key::NULL, u32::MAX);
        };
        let found = tox.lock().node.friend_by_pk(&PublicKey(pk));
        match found {
            Some(n) => guard::fail(error, Tox_Err_Friend_By_Public_Key::OK, n.0),
            None => guard::fail(error, Tox_Err_Friend_By_Public_Key::NOT_FOUND, u32::MAX),
        }
    })
}

/// Whether a friend number is in use (`tox_friend_exists`).
#[no_mangle]
pub unsafe extern "C" fn tox_friend_exists(tox: *const Tox, friend_number: u32) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe { tox_ref(tox) }.is_some_and(|t| {
            t.lock()
                .node
                .friend_public_key(FriendNumber(friend_number))
                .is_some()
        })
    })
}

/// How many friends there are (`tox_self_get_friend_list_size`).
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_friend_list_size(tox: *const Tox) -> usize {
    guard::call(0, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe { tox_ref(tox) }.map_or(0, |t| t.lock().node.friends().len())
    })
}

/// The friend numbers, into `friend_list` (room for `tox_self_get_friend_list_size`).
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_friend_list(tox: *const Tox, friend_list: *mut u32) {
    guard::call((), || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(t) = (unsafe { tox_ref(tox) }) else {
            return;
        };
        if friend_list.is_null() {
            return;
        }
        let numbers: Vec<u32> = t.lock().node.friends().iter().map(|n| n.0).collect();
        // SAFETY: tox.h: room for one u32 per friend; checked non-NULL.
        unsafe { std::ptr::copy_nonoverlapping(numbers.as_ptr(), friend_list, numbers.len()) };
    })
}

/// A friend's public key, into `public_key` (`tox_friend_get_public_key`).
#[no_mangle]
pub unsafe extern "C" fn tox_friend_get_public_key(
    tox: *const Tox,
    friend_number: u32,
    public_key: *mut u8,
    error: *mut Tox_Err_Friend_Get_Public_Key,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let pk = unsafe { tox_ref(tox) }
            .and_then(|t| t.lock().node.friend_public_key(FriendNumber(friend_number)));
        match pk {
            // SAFETY: tox.h: room for TOX_PUBLIC_KEY_SIZE bytes (NULL writes nothing).
            Some(pk) if unsafe { guard::copy_out(&pk.0, public_key) } => {
                guard::fail(error, Tox_Err_Friend_Get_Public_Key::OK, true)
            }
            _ => guard::fail(
                error,
                Tox_Err_Friend_Get_Public_Key::FRIEND_NOT_FOUND,
                false,
            ),
        }
    })
}

/// When a friend was last online, in Unix seconds (`tox_friend_get_last_online`).
#[no_mangle]
pub unsafe extern "C" fn tox_friend_get_last_online(
    tox: *const Tox,
    friend_number: u32,
    error: *mut Tox_Err_Friend_Get_Last_Online,
) -> u64 {
    guard::call(u64::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        let seen = unsafe { tox_ref(tox) }
            .and_then(|t| t.lock().node.friend_last_seen(FriendNumber(friend_number)));
        match seen {
            Some(s) => guard::fail(error, Tox_Err_Friend_Get_Last_Online::OK, s),
            None => guard::fail(
                error,
                Tox_Err_Friend_Get_Last_Online::FRIEND_NOT_FOUND,
                u64::MAX,
            ),
        }
    })
}

/// A query about a friend with tox.h's errors.
unsafe fn query<T: Clone>(
    tox: *const Tox,
    friend_number: u32,
    error: *mut Tox_Err_Friend_Query,
    failed: T,
    read: impl FnOnce(&State, FriendNumber) -> Option<T>,
) -> T {
    guard::call_with(failed, |failed| {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_Friend_Query::NULL, failed);
        };
        let value = read(&tox.lock(), FriendNumber(friend_number));
        match value {
            Some(v) => guard::fail(error, Tox_Err_Friend_Query::OK, v),
            None => guard::fail(error, Tox_Err_Friend_Query::FRIEND_NOT_FOUND, failed),
        }
    })
}

/// Copies a friend's text out, with tox.h's errors (NULL buffer: NULL).
unsafe fn text_out(
    tox: *const Tox,
    friend_number: u32,
    out: *mut u8,
    error: *mut Tox_Err_Friend_Query,
    pick: impl Fn(&State, FriendNumber) -> Option<&[u8]>,
) -> bool {
    if out.is_null() {
        return guard::fail(error, Tox_Err_Friend_Query::NULL, false);
    }
    // SAFETY: forwarded under tox.h's contract.
    unsafe {
        query(tox, friend_number, error, false, |s, f| {
            pick(s, f).map(|text| {
                // SAFETY: tox.h: room for the text's `_size` bytes; checked non-NULL.
                guard::copy_out(text, out)
            })
        })
    }
}

/// A friend's name as last delivered, else as the node has it.
fn name_of(s: &State, f: FriendNumber) -> Option<&[u8]> {
    let node = &s.node.friend_presence(f)?.name;
    Some(
        s.delivered(f.0)
            .and_then(|d| d.name.as_ref())
            .unwrap_or(node),
    )
}

/// A friend's status message as last delivered, else as the node has it.
fn status_message_of(s: &State, f: FriendNumber) -> Option<&[u8]> {
    let node = &s.node.friend_presence(f)?.status_message;
    Some(
        s.delivered(f.0)
            .and_then(|d| d.status_message.as_ref())
            .unwrap_or(node),
    )
}

/// Defines a friend text's two getters: `size` (its length; `SIZE_MAX` on error) and `get`
/// (the text copied into the buffer `out`), both of what `of` reads.
macro_rules! friend_text {
    ($(#[$size_doc:meta])* $size:ident, $(#[$get_doc:meta])* $get:ident($out:ident) = $of:ident) => {
        $(#[$size_doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $size(
            tox: *const Tox,
            friend_number: u32,
            error: *mut Tox_Err_Friend_Query,
        ) -> usize {
            // SAFETY: forwarded under tox.h's contract.
            unsafe { query(tox, friend_number, error, usize::MAX, |s, f| $of(s, f).map(<[u8]>::len)) }
        }

        $(#[$get_doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            tox: *const Tox,
            friend_number: u32,
            $out: *mut u8,
            error: *mut Tox_Err_Friend_Query,
        ) -> bool {
            guard::call(false, || {
                // SAFETY: forwarded under tox.h's contract.
                unsafe { text_out(tox, friend_number, $out, error, $of) }
            })
        }
    };
}

friend_text! {
    /// The length of a friend's name (`tox_friend_get_name_size`; SIZE_MAX on error).
    tox_friend_get_name_size,
    /// A friend's name, into `name` (`tox_friend_get_name`).
    tox_friend_get_name(name) = name_of
}

friend_text! {
    /// The length of a friend's status message (`tox_friend_get_status_message_size`).
    tox_friend_get_status_message_size,
    /// A friend's status message, into `status_message`.
    tox_friend_get_status_message(status_message) = status_message_of
}

/// A friend's user status (`tox_friend_get_status`).
#[no_mangle]
pub unsafe extern "C" fn tox_friend_get_status(
    tox: *const Tox,
    friend_number: u32,
    error: *mut Tox_Err_Friend_Query,
) -> Tox_User_Status {
    // SAFETY: forwarded under tox.h's contract.
    unsafe {
        query(tox, friend_number, error, Tox_User_Status::NONE, |s, f| {
            let node = s.node.friend_presence(f).map(|p| user_status(p.status))?;
            Some(s.delivered(f.0).and_then(|d| d.status).unwrap_or(node))
        })
    }
}

/// Whether a friend is online (`tox_friend_get_connection_status`): UDP while its session
/// has working UDP, TCP while it runs through a relay only, NONE otherwise; as the
/// callbacks delivered so far have said.
#[no_mangle]
pub unsafe extern "C" fn tox_friend_get_connection_status(
    tox: *const Tox,
    friend_number: u32,
    error: *mut Tox_Err_Friend_Query,
) -> Tox_Connection {
    // SAFETY: forwarded under tox.h's contract.
    unsafe {
        query(tox, friend_number, error, Tox_Connection::NONE, |s, f| {
            s.node.friend_public_key(f)?;
            // Before any connection event the friend has not been online.
            Some(
                s.delivered(f.0)
                    .and_then(|d| d.connection)
                    .unwrap_or(Tox_Connection::NONE),
            )
        })
    }
}

/// Whether a friend is typing to us (`tox_friend_get_typing`).
#[no_mangle]
pub unsafe extern "C" fn tox_friend_get_typing(
    tox: *const Tox,
    friend_number: u32,
    error: *mut Tox_Err_Friend_Query,
) -> bool {
    // SAFETY: forwarded under tox.h's contract.
    unsafe {
        query(tox, friend_number, error, false, |s, f| {
            let node = s.node.friend_presence(f).map(|p| p.typing)?;
            Some(s.delivered(f.0).and_then(|d| d.typing).unwrap_or(node))
        })
    }
}

/// Sends a message or an action (`tox_friend_send_message`): returns its message id, which
/// `tox_friend_read_receipt_cb` names once the friend has it; `UINT32_MAX` on error. A
/// message type tox.h does not have is refused as NULL (an argument C got wrong).
#[no_mangle]
pub unsafe extern "C" fn tox_friend_send_message(
    tox: *mut Tox,
    friend_number: u32,
    kind: crate::types::Tox_Message_Type_Value,
    message: *const u8,
    length: usize,
    error: *mut Tox_Err_Friend_Send_Message,
) -> u32 {
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_Friend_Send_Message::NULL, u32::MAX);
        };
        let kind = match Tox_Message_Type::from_raw(kind) {
            Some(Tox_Message_Type::NORMAL) => MessageKind::Normal,
            Some(Tox_Message_Type::ACTION) => MessageKind::Action,
            None => return guard::fail(error, Tox_Err_Friend_Send_Message::NULL, u32::MAX),
        };
        if message.is_null() {
            return guard::fail(error, Tox_Err_Friend_Send_Message::NULL, u32::MAX);
        }
        // SAFETY: `length` bytes at `message`, per tox.h.
        let Some(text) = (unsafe { guard::bytes(message, length) }) else {
            return guard::fail(error, Tox_Err_Friend_Send_Message::NULL, u32::MAX);
        };
        let mut state = tox.lock();
        let now = state.now();
        let result = state
            .node
            .send_message_kind(now, FriendNumber(friend_number), kind, text);
        state.flush();
        match result {
            Ok(id) => guard::fail(error, Tox_Err_Friend_Send_Message::OK, id),
            Err(e) => {
                let code = match e {
                    NodeError::EmptyMessage => Tox_Err_Friend_Send_Message::EMPTY,
                    NodeError::MessageTooLong => Tox_Err_Friend_Send_Message::TOO_LONG,
                    NodeError::UnknownFriend => Tox_Err_Friend_Send_Message::FRIEND_NOT_FOUND,
                    NodeError::FriendOffline => Tox_Err_Friend_Send_Message::FRIEND_NOT_CONNECTED,
                    _ => Tox_Err_Friend_Send_Message::SENDQ,
                };
                guard::fail(error, code, u32::MAX)
            }
        }
    })
}

/// Sends a custom packet, lossless or lossy, with tox.h's errors.
unsafe fn custom_packet(
    tox: *mut Tox,
    friend_number: u32,
    data: *const u8,
    length: usize,
    error: *mut Tox_Err_Friend_Custom_Packet,
    lossless: bool,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox` and the packet bytes.
        let (Some(tox), Some(data)) = (unsafe { (tox_ref(tox), guard::bytes(data, length)) })
        else {
            return guard::fail(error, Tox_Err_Friend_Custom_Packet::NULL, false);
        };
        if data.is_empty() {
            return guard::fail(error, Tox_Err_Friend_Custom_Packet::EMPTY, false);
        }
        let mut state = tox.lock();
        let now = state.now();
        let friend = FriendNumber(friend_number);
        let result = if lossless {
            state.node.send_lossless_packet(now, friend, data)
        } else {
            state.node.send_lossy_packet(now, friend, data)
        };
        state.flush();
        match result {
            Ok(()) => guard::fail(error, Tox_Err_Friend_Custom_Packet::OK, true),
            Err(e) => {
                let code = match e {
                    NodeError::BadPacketId => Tox_Err_Friend_Custom_Packet::INVALID,
                    NodeError::TooLong(_) => Tox_Err_Friend_Custom_Packet::TOO_LONG,
                    NodeError::UnknownFriend => Tox_Err_Friend_Custom_Packet::FRIEND_NOT_FOUND,
                    NodeError::FriendOffline => Tox_Err_Friend_Custom_Packet::FRIEND_NOT_CONNECTED,
                    _ => Tox_Err_Friend_Custom_Packet::SENDQ,
                };
                guard::fail(error, code, false)
            }
        }
    })
}

/// Defines the entry point that sends a custom packet, lossless or not ([`custom_packet`]).
macro_rules! custom_packet_entry {
    ($(#[$doc:meta])* $name:ident, lossless: $lossless:expr) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            tox: *mut Tox,
            friend_number: u32,
            data: *const u8,
            length: usize,
            error: *mut Tox_Err_Friend_Custom_Packet,
        ) -> bool {
            // SAFETY: forwarded under tox.h's contract.
            unsafe { custom_packet(tox, friend_number, data, length, error, $lossless) }
        }
    };
}

custom_packet_entry! {
    /// Sends a custom lossy packet (`tox_friend_send_lossy_packet`): first byte 200–254.
    tox_friend_send_lossy_packet, lossless: false
}

custom_packet_entry! {
    /// Sends a custom lossless packet (`tox_friend_send_lossless_packet`): first byte 160–191
    /// (or 69).
    tox_friend_send_lossless_packet, lossless: true
}
