//! What an instance says about itself (tox.h "self" functions): address, keys, nospam,
//! name, status message, user status, typing, ports and connection status.

use rustox_core::node::{FriendNumber, NodeError, UserStatus};

use crate::guard;
use crate::handle::{tox_ref, user_status, Tox};
use crate::types::{
    Tox_Connection, Tox_Err_Get_Port, Tox_Err_Set_Info, Tox_Err_Set_Typing, Tox_User_Status,
};

/// Whether the instance is connected to the network (`tox_self_get_connection_status`):
/// UDP while nodes store our onion announcement, so friends can find us.
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_connection_status(tox: *const Tox) -> Tox_Connection {
    guard::call(Tox_Connection::NONE, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe { tox_ref(tox) }.map_or(Tox_Connection::NONE, |t| t.lock().self_status)
    })
}

/// Copies `bytes` to `out` when the instance and the buffer exist.
unsafe fn read_into<const N: usize>(
    tox: *const Tox,
    out: *mut u8,
    read: impl Fn(&crate::handle::State) -> [u8; N],
) {
    guard::call((), || {
        // SAFETY: tox.h's contract for `tox`.
        if let Some(tox) = unsafe { tox_ref(tox) } {
            let bytes = read(&tox.lock());
            // SAFETY: tox.h: `out` has room for the N bytes of its kind.
            unsafe { guard::copy_out(&bytes, out) };
        }
    })
}

/// Our Tox ID (`tox_self_get_address`): 38 bytes, key, nospam and checksum.
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_address(tox: *const Tox, address: *mut u8) {
    // SAFETY: forwarded under tox.h's contract.
    unsafe { read_into(tox, address, |s| s.node.tox_id().to_bytes()) }
}

/// Our long-term public key (`tox_self_get_public_key`).
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_public_key(tox: *const Tox, public_key: *mut u8) {
    // SAFETY: forwarded under tox.h's contract.
    unsafe { read_into(tox, public_key, |s| s.node.public_key().0) }
}

/// Our long-term secret key (`tox_self_get_secret_key`).
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_secret_key(tox: *const Tox, secret_key: *mut u8) {
    // SAFETY: forwarded under tox.h's contract.
    unsafe { read_into(tox, secret_key, |s| s.node.secret_key().to_bytes()) }
}

/// Our DHT key (`tox_self_get_dht_id`): what others bootstrap from.
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_dht_id(tox: *const Tox, dht_id: *mut u8) {
    // SAFETY: forwarded under tox.h's contract.
    unsafe { read_into(tox, dht_id, |s| s.node.dht_public_key().0) }
}

/// Our nospam as tox.h numbers it: the address's 4 nospam bytes read big-endian.
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_nospam(tox: *const Tox) -> u32 {
    guard::call(0, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe { tox_ref(tox) }.map_or(0, |t| t.lock().node.tox_id().nospam.to_u32())
    })
}

/// Sets our nospam (`tox_self_set_nospam`): the Tox ID changes, requests sent to the old
/// one are refused.
#[no_mangle]
pub unsafe extern "C" fn tox_self_set_nospam(tox: *mut Tox, nospam: u32) {
    guard::call((), || {
        // SAFETY: tox.h's contract for `tox`.
        if let Some(t) = unsafe { tox_ref(tox) } {
            t.lock()
                .node
                .set_nospam(rustox_core::friend::NoSpam::from_u32(nospam));
        }
    })
}

/// Sets a text of ours (name or status message) with tox.h's errors.
unsafe fn set_info(
    tox: *mut Tox,
    data: *const u8,
    length: usize,
    error: *mut Tox_Err_Set_Info,
    set: impl Fn(&mut crate::handle::State, &[u8]) -> Result<(), NodeError>,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(tox) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_Set_Info::NULL, false);
        };
        // SAFETY: `length` bytes at `data`, per tox.h.
        let Some(data) = (unsafe { guard::bytes(data, length) }) else {
            return guard::fail(error, Tox_Err_Set_Info::NULL, false);
        };
        let mut state = tox.lock();
        let result = set(&mut state, data);
        state.flush();
        match result {
            Ok(()) => guard::fail(error, Tox_Err_Set_Info::OK, true),
            Err(_) => guard::fail(error, Tox_Err_Set_Info::TOO_LONG, false),
        }
    })
}

/// Sets our name (`tox_self_set_name`), at most 128 bytes; online friends hear it now.
#[no_mangle]
pub unsafe extern "C" fn tox_self_set_name(
    tox: *mut Tox,
    name: *const u8,
    length: usize,
    error: *mut Tox_Err_Set_Info,
) -> bool {
    // SAFETY: forwarded under tox.h's contract.
    unsafe {
        set_info(tox, name, length, error, |s, name| {
            let now = s.now();
            s.node.set_name(now, name)
        })
    }
}

/// Sets our status message (`tox_self_set_status_message`), at most 1007 bytes.
#[no_mangle]
pub unsafe extern "C" fn tox_self_set_status_message(
    tox: *mut Tox,
    status_message: *const u8,
    length: usize,
    error: *mut Tox_Err_Set_Info,
) -> bool {
    // SAFETY: forwarded under tox.h's contract.
    unsafe {
        set_info(tox, status_message, length, error, |s, text| {
            let now = s.now();
            s.node.set_status_message(now, text)
        })
    }
}

/// A text of ours, by length or copied out.
unsafe fn self_text(
    tox: *const Tox,
    read: impl Fn(&crate::handle::State) -> Vec<u8>,
) -> Option<Vec<u8>> {
    // SAFETY: tox.h's contract for `tox`.
    unsafe { tox_ref(tox) }.map(|t| read(&t.lock()))
}

/// The length of our name (`tox_self_get_name_size`).
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_name_size(tox: *const Tox) -> usize {
    guard::call(0, || {
        // SAFETY: forwarded under tox.h's contract.
        unsafe { self_text(tox, |s| s.node.self_presence().name.clone()) }.map_or(0, |n| n.len())
    })
}

/// Our name, into `name` (room for `tox_self_get_name_size` bytes).
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_name(tox: *const Tox, name: *mut u8) {
    guard::call((), || {
        // SAFETY: forwarded under tox.h's contract.
        if let Some(n) = unsafe { self_text(tox, |s| s.node.self_presence().name.clone()) } {
            // SAFETY: tox.h: room for the name.
            unsafe { guard::copy_out(&n, name) };
        }
    })
}

/// The length of our status message (`tox_self_get_status_message_size`).
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_status_message_size(tox: *const Tox) -> usize {
    guard::call(0, || {
        // SAFETY: forwarded under tox.h's contract.
        unsafe { self_text(tox, |s| s.node.self_presence().status_message.clone()) }
            .map_or(0, |n| n.len())
    })
}

/// Our status message, into `status_message`.
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_status_message(tox: *const Tox, status_message: *mut u8) {
    guard::call((), || {
        // SAFETY: forwarded under tox.h's contract.
        if let Some(n) =
            unsafe { self_text(tox, |s| s.node.self_presence().status_message.clone()) }
        {
            // SAFETY: tox.h: room for the status message.
            unsafe { guard::copy_out(&n, status_message) };
        }
    })
}

/// Sets our user status (`tox_self_set_status`); a value tox.h does not have is ignored.
#[no_mangle]
pub unsafe extern "C" fn tox_self_set_status(
    tox: *mut Tox,
    status: crate::types::Tox_User_Status_Value,
) {
    guard::call((), || {
        let status = match Tox_User_Status::from_raw(status) {
            Some(Tox_User_Status::NONE) => UserStatus::None,
            Some(Tox_User_Status::AWAY) => UserStatus::Away,
            Some(Tox_User_Status::BUSY) => UserStatus::Busy,
            None => return,
        };
        // SAFETY: tox.h's contract for `tox`.
        if let Some(t) = unsafe { tox_ref(tox) } {
            let mut state = t.lock();
            let now = state.now();
            state.node.set_status(now, status);
            state.flush();
        }
    })
}

/// Our user status (`tox_self_get_status`).
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_status(tox: *const Tox) -> Tox_User_Status {
    guard::call(Tox_User_Status::NONE, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe { tox_ref(tox) }.map_or(Tox_User_Status::NONE, |t| {
            user_status(t.lock().node.self_presence().status)
        })
    })
}

/// Tells a friend whether we are typing (`tox_self_set_typing`).
#[no_mangle]
pub unsafe extern "C" fn tox_self_set_typing(
    tox: *mut Tox,
    friend_number: u32,
    typing: bool,
    error: *mut Tox_Err_Set_Typing,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(t) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Tox_Err_Set_Typing::FRIEND_NOT_FOUND, false);
        };
        let mut state = t.lock();
        let now = state.now();
        let result = state
            .node
            .set_typing(now, FriendNumber(friend_number), typing);
        state.flush();
        match result {
            Ok(()) => guard::fail(error, Tox_Err_Set_Typing::OK, true),
            Err(_) => guard::fail(error, Tox_Err_Set_Typing::FRIEND_NOT_FOUND, false),
        }
    })
}

/// The UDP port the instance listens on (`tox_self_get_udp_port`); NOT_BOUND with UDP off,
/// as c-toxcore answers (its network has no port then).
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_udp_port(
    tox: *const Tox,
    error: *mut Tox_Err_Get_Port,
) -> u16 {
    guard::call(0, || {
        // SAFETY: tox.h's contract for `tox`.
        let port = unsafe { tox_ref(tox) }
            .and_then(|t| {
                let state = t.lock();
                if state.node.is_udp_disabled() {
                    return None;
                }
                state.stepper.socket().local_addr().ok()
            })
            .map(|a| a.port());
        match port {
            Some(p) => guard::fail(error, Tox_Err_Get_Port::OK, p),
            None => guard::fail(error, Tox_Err_Get_Port::NOT_BOUND, 0),
        }
    })
}

/// The TCP relay server's port (`tox_self_get_tcp_port`): the `tcp_port` the instance was
/// started with; NOT_BOUND when it runs no relay.
#[no_mangle]
pub unsafe extern "C" fn tox_self_get_tcp_port(
    tox: *const Tox,
    error: *mut Tox_Err_Get_Port,
) -> u16 {
    guard::call(0, || {
        // SAFETY: tox.h's contract for `tox`.
        let port =
            unsafe { tox_ref(tox) }.and_then(|t| t.lock().stepper.relay_server().map(|r| r.port()));
        match port {
            Some(p) => guard::fail(error, Tox_Err_Get_Port::OK, p),
            None => guard::fail(error, Tox_Err_Get_Port::NOT_BOUND, 0),
        }
    })
}
