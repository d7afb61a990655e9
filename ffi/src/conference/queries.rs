//! The conference queries: peers online and offline, titles, the list of conferences, a
//! conference's type and id. Each answers from the node's conferences as they are now,
//! with c-toxcore 0.2.18's failure values: `UINT32_MAX` for counts and numbers, `SIZE_MAX`
//! (tox.c's `return -1` as a `size_t`) for sizes, `UINT64_MAX` for times, `false` else.
//!
//! An output buffer that is NULL is not written and the call succeeds: c-toxcore writes
//! through it regardless (and crashes) except in `tox_conference_get_id` and
//! `tox_conference_get_chatlist`, which skip a NULL one; no client depends on the crash.

use rustox_core::conference::{ConferenceError, ConferenceId, ConferenceNumber, PeerList};
use rustox_core::node::Node;

use super::access::with_state;
use super::errors::{peer_query_error, title_error};
use crate::guard;
use crate::handle::Tox;
use crate::types::{
    Tox_Conference_Type_Value, Tox_Err_Conference_By_Id, Tox_Err_Conference_By_Uid,
    Tox_Err_Conference_Get_Type, Tox_Err_Conference_Peer_Query, Tox_Err_Conference_Title,
};

/// Runs a query on the node of `tox`, mapping its error to a peer query code; an unknown
/// instance answers as an unknown conference.
///
/// # Safety
/// `tox` as for [`with_state`].
unsafe fn peer_query<T>(
    tox: *const Tox,
    error: *mut Tox_Err_Conference_Peer_Query,
    failed: T,
    query: impl FnOnce(&Node) -> Result<T, ConferenceError>,
) -> T {
    // SAFETY: the caller's contract.
    match unsafe { with_state(tox, |state| query(&state.node)) } {
        Some(Ok(value)) => guard::fail(error, Tox_Err_Conference_Peer_Query::OK, value),
        Some(Err(e)) => guard::fail(error, peer_query_error(e), failed),
        None => guard::fail(
            error,
            Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND,
            failed,
        ),
    }
}

/// The peer list a tox.h function reads.
fn list(offline: bool) -> PeerList {
    if offline {
        PeerList::Offline
    } else {
        PeerList::Online
    }
}

/// `*_peer_count`.
unsafe fn count(
    tox: *const Tox,
    conference: u32,
    offline: bool,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> u32 {
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe {
            peer_query(tox, error, u32::MAX, |node| {
                node.conferences()
                    .peer_count(ConferenceNumber(conference), list(offline))
            })
        }
    })
}

/// `*_peer_get_name_size`.
unsafe fn name_size(
    tox: *const Tox,
    conference: u32,
    peer: u32,
    offline: bool,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> usize {
    guard::call(usize::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe {
            peer_query(tox, error, usize::MAX, |node| {
                node.conferences()
                    .peer_name(ConferenceNumber(conference), list(offline), peer)
                    .map(<[u8]>::len)
            })
        }
    })
}

/// `*_peer_get_name`: the name's bytes into `name`, sized by `*_peer_get_name_size`.
unsafe fn name(
    tox: *const Tox,
    conference: u32,
    peer: u32,
    offline: bool,
    name: *mut u8,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`; a non-NULL `name` holds the name's size.
        unsafe {
            peer_query(tox, error, false, |node| {
                let bytes = node.conferences().peer_name(
                    ConferenceNumber(conference),
                    list(offline),
                    peer,
                )?;
                guard::copy_out(bytes, name);
                Ok(true)
            })
        }
    })
}

/// `*_peer_get_public_key`: the peer's long-term key into `public_key` (32 bytes).
unsafe fn public_key(
    tox: *const Tox,
    conference: u32,
    peer: u32,
    offline: bool,
    public_key: *mut u8,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`; a non-NULL `public_key` holds 32 bytes.
        unsafe {
            peer_query(tox, error, false, |node| {
                let pk = node.conferences().peer_public_key(
                    ConferenceNumber(conference),
                    list(offline),
                    peer,
                )?;
                guard::copy_out(&pk.0, public_key);
                Ok(true)
            })
        }
    })
}

/// `tox_conference_peer_count`: peers online in the conference, ourselves included.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_peer_count(
    tox: *const Tox,
    conference_number: u32,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> u32 {
    // SAFETY: the same contract.
    unsafe { count(tox, conference_number, false, error) }
}

/// `tox_conference_peer_get_name_size`: the length of a peer's name (0 before it told us).
#[no_mangle]
pub unsafe extern "C" fn tox_conference_peer_get_name_size(
    tox: *const Tox,
    conference_number: u32,
    peer_number: u32,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> usize {
    // SAFETY: the same contract.
    unsafe { name_size(tox, conference_number, peer_number, false, error) }
}

/// `tox_conference_peer_get_name`.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_peer_get_name(
    tox: *const Tox,
    conference_number: u32,
    peer_number: u32,
    name_out: *mut u8,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> bool {
    // SAFETY: the same contract.
    unsafe { name(tox, conference_number, peer_number, false, name_out, error) }
}

/// `tox_conference_peer_get_public_key`.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_peer_get_public_key(
    tox: *const Tox,
    conference_number: u32,
    peer_number: u32,
    public_key_out: *mut u8,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> bool {
    // SAFETY: the same contract.
    unsafe {
        public_key(
            tox,
            conference_number,
            peer_number,
            false,
            public_key_out,
            error,
        )
    }
}

/// `tox_conference_peer_number_is_ours`: `CONFERENCE_NOT_FOUND`, then `PEER_NOT_FOUND`,
/// then `NO_CONNECTION` while we have not joined yet (`group_peernumber_is_ours`).
#[no_mangle]
pub unsafe extern "C" fn tox_conference_peer_number_is_ours(
    tox: *const Tox,
    conference_number: u32,
    peer_number: u32,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe {
            peer_query(tox, error, false, |node| {
                let conferences = node.conferences();
                let conference = ConferenceNumber(conference_number);
                if peer_number >= conferences.peer_count(conference, PeerList::Online)? {
                    return Err(ConferenceError::PeerNotFound);
                }
                conferences.peer_number_is_ours(conference, peer_number)
            })
        }
    })
}

/// `tox_conference_offline_peer_count`: peers the conference remembers that are offline.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_offline_peer_count(
    tox: *const Tox,
    conference_number: u32,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> u32 {
    // SAFETY: the same contract.
    unsafe { count(tox, conference_number, true, error) }
}

/// `tox_conference_offline_peer_get_name_size`.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_offline_peer_get_name_size(
    tox: *const Tox,
    conference_number: u32,
    offline_peer_number: u32,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> usize {
    // SAFETY: the same contract.
    unsafe { name_size(tox, conference_number, offline_peer_number, true, error) }
}

/// `tox_conference_offline_peer_get_name`.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_offline_peer_get_name(
    tox: *const Tox,
    conference_number: u32,
    offline_peer_number: u32,
    name_out: *mut u8,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> bool {
    // SAFETY: the same contract.
    unsafe {
        name(
            tox,
            conference_number,
            offline_peer_number,
            true,
            name_out,
            error,
        )
    }
}

/// `tox_conference_offline_peer_get_public_key`.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_offline_peer_get_public_key(
    tox: *const Tox,
    conference_number: u32,
    offline_peer_number: u32,
    public_key_out: *mut u8,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> bool {
    // SAFETY: the same contract.
    unsafe {
        public_key(
            tox,
            conference_number,
            offline_peer_number,
            true,
            public_key_out,
            error,
        )
    }
}

/// `tox_conference_offline_peer_get_last_active`: when the peer was last heard from, in
/// Unix seconds (c-toxcore's `mono_time_get`, which counts from the Unix epoch).
#[no_mangle]
pub unsafe extern "C" fn tox_conference_offline_peer_get_last_active(
    tox: *const Tox,
    conference_number: u32,
    offline_peer_number: u32,
    error: *mut Tox_Err_Conference_Peer_Query,
) -> u64 {
    guard::call(u64::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe {
            peer_query(tox, error, u64::MAX, |node| {
                node.conferences().offline_peer_last_active(
                    ConferenceNumber(conference_number),
                    offline_peer_number,
                )
            })
        }
    })
}

/// The title of a conference, through `read`; `INVALID_LENGTH` while it has none
/// (`group_title_get_size`).
unsafe fn title<T>(
    tox: *const Tox,
    conference_number: u32,
    error: *mut Tox_Err_Conference_Title,
    failed: T,
    read: impl FnOnce(&[u8]) -> T,
) -> T {
    type E = Tox_Err_Conference_Title;
    // SAFETY: the caller's contract.
    let result = unsafe {
        with_state(tox, |state| {
            state
                .node
                .conferences()
                .title(ConferenceNumber(conference_number))
                .map(read)
        })
    };
    match result {
        Some(Ok(value)) => guard::fail(error, E::OK, value),
        Some(Err(e)) => guard::fail(error, title_error(e), failed),
        None => guard::fail(error, E::CONFERENCE_NOT_FOUND, failed),
    }
}

/// `tox_conference_get_title_size`.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_get_title_size(
    tox: *const Tox,
    conference_number: u32,
    error: *mut Tox_Err_Conference_Title,
) -> usize {
    guard::call(usize::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe { title(tox, conference_number, error, usize::MAX, <[u8]>::len) }
    })
}

/// `tox_conference_get_title`: the title's bytes into `title_out`, sized by
/// `tox_conference_get_title_size`.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_get_title(
    tox: *const Tox,
    conference_number: u32,
    title_out: *mut u8,
    error: *mut Tox_Err_Conference_Title,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`; a non-NULL `title_out` holds the title.
        unsafe {
            title(tox, conference_number, error, false, |bytes| {
                guard::copy_out(bytes, title_out);
                true
            })
        }
    })
}

/// `tox_conference_get_chatlist_size`: how many conferences exist (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn tox_conference_get_chatlist_size(tox: *const Tox) -> usize {
    guard::call(0, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe { with_state(tox, |state| state.node.conferences().list().len()) }.unwrap_or(0)
    })
}

/// `tox_conference_get_chatlist`: their numbers, ascending, into `chatlist`, sized by
/// `tox_conference_get_chatlist_size`; a NULL `chatlist` is not written.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_get_chatlist(tox: *const Tox, chatlist: *mut u32) {
    guard::call((), || {
        if chatlist.is_null() {
            return;
        }
        // SAFETY: tox.h's contract for `tox`.
        let numbers = unsafe { with_state(tox, |state| state.node.conferences().list()) };
        for (i, n) in numbers.unwrap_or_default().into_iter().enumerate() {
            // SAFETY: tox.h: `chatlist` holds `tox_conference_get_chatlist_size` numbers.
            unsafe { chatlist.add(i).write(n.0) };
        }
    })
}

/// `tox_conference_get_type`: `TOX_CONFERENCE_TYPE_TEXT` or `_AV`; for an unknown
/// conference what c-toxcore returns, `(Tox_Conference_Type)-1`, i.e. `UINT32_MAX` (tox.h:
/// "unspecified on failure"). The Rust return type is `u32` because that value is no
/// `Tox_Conference_Type` variant; a C enum is returned as its `unsigned int`, so the ABI is
/// the header's.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_get_type(
    tox: *const Tox,
    conference_number: u32,
    error: *mut Tox_Err_Conference_Get_Type,
) -> Tox_Conference_Type_Value {
    type E = Tox_Err_Conference_Get_Type;
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        let kind = unsafe {
            with_state(tox, |state| {
                state
                    .node
                    .conferences()
                    .kind(ConferenceNumber(conference_number))
                    .ok()
            })
        };
        match kind.flatten() {
            Some(kind) => guard::fail(error, E::OK, crate::handle::conference_type(kind) as u32),
            None => guard::fail(error, E::CONFERENCE_NOT_FOUND, u32::MAX),
        }
    })
}

/// `tox_conference_get_id`: the conference's 32-byte id into `id`; false for an unknown
/// conference. A NULL `id` is not written and the call succeeds (`conference_get_id`).
#[no_mangle]
pub unsafe extern "C" fn tox_conference_get_id(
    tox: *const Tox,
    conference_number: u32,
    id: *mut u8,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let found = unsafe {
            with_state(tox, |state| {
                state
                    .node
                    .conferences()
                    .id(ConferenceNumber(conference_number))
                    .ok()
            })
        };
        let Some(found) = found.flatten() else {
            return false;
        };
        // SAFETY: tox.h: a non-NULL `id` holds `TOX_CONFERENCE_ID_SIZE` bytes.
        unsafe { guard::copy_out(&found.0, id) };
        true
    })
}

/// `tox_conference_get_uid`: the deprecated name of `tox_conference_get_id`.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_get_uid(
    tox: *const Tox,
    conference_number: u32,
    uid: *mut u8,
) -> bool {
    // SAFETY: the same contract.
    unsafe { tox_conference_get_id(tox, conference_number, uid) }
}

/// The conference whose id is at `id`: `Err(true)` for a NULL id (checked first, as
/// c-toxcore's `tox_conference_by_id`), `Err(false)` for none.
///
/// # Safety
/// `tox` as for [`with_state`]; a non-NULL `id` holds 32 bytes.
unsafe fn by_id(tox: *const Tox, id: *const u8) -> Result<u32, bool> {
    // SAFETY: the caller's contract.
    let id = unsafe { guard::array::<32>(id) }.ok_or(true)?;
    // SAFETY: the caller's contract.
    let found = unsafe {
        with_state(tox, |state| {
            state.node.conferences().by_id(&ConferenceId(id))
        })
    };
    found.flatten().map(|n| n.0).ok_or(false)
}

/// `tox_conference_by_id`: the number of the conference with this id; `UINT32_MAX` with
/// `NULL` for a NULL id or `NOT_FOUND`.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_by_id(
    tox: *const Tox,
    id: *const u8,
    error: *mut Tox_Err_Conference_By_Id,
) -> u32 {
    type E = Tox_Err_Conference_By_Id;
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract.
        match unsafe { by_id(tox, id) } {
            Ok(n) => guard::fail(error, E::OK, n),
            Err(true) => guard::fail(error, E::NULL, u32::MAX),
            Err(false) => guard::fail(error, E::NOT_FOUND, u32::MAX),
        }
    })
}

/// `tox_conference_by_uid`: the deprecated name of `tox_conference_by_id`, with its own
/// error enum.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_by_uid(
    tox: *const Tox,
    uid: *const u8,
    error: *mut Tox_Err_Conference_By_Uid,
) -> u32 {
    type E = Tox_Err_Conference_By_Uid;
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract.
        match unsafe { by_id(tox, uid) } {
            Ok(n) => guard::fail(error, E::OK, n),
            Err(true) => guard::fail(error, E::NULL, u32::MAX),
            Err(false) => guard::fail(error, E::NOT_FOUND, u32::MAX),
        }
    })
}
