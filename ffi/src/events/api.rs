//! The C API of a `Tox_Events`: getting one from an iteration or from bytes, its bytes,
//! comparing and freeing it, and its per-type counts and entries.

use super::msgpack::len32;
use super::records::*;
use crate::guard;
use crate::handle::{self, Tox};
use crate::types::Tox_Err_Events_Iterate;

/// The events behind a pointer from C, or `None` for NULL.
///
/// # Safety
/// A non-NULL `events` must come from `tox_events_iterate` or `tox_events_load` and not
/// have been passed to `tox_events_free`.
pub(crate) unsafe fn events_ref<'a>(events: *const Tox_Events) -> Option<&'a Tox_Events> {
    // SAFETY: the caller's contract.
    unsafe { events.as_ref() }
}

/// `tox_events_init`: c-toxcore registers its own event collectors as the instance's
/// tox.h callbacks, which `tox_events_iterate` then needs. Here `tox_events_iterate` takes
/// the iteration's events from the node directly, so there is nothing to register and the
/// client's own callbacks stay as they were.
#[no_mangle]
pub unsafe extern "C" fn tox_events_init(tox: *mut Tox) {
    guard::call((), || {
        let _ = tox;
    })
}

/// `tox_events_iterate`: runs one iteration of `tox` (as `tox_iterate`) and returns its
/// events, to be freed with `tox_events_free`. As c-toxcore 0.2.18 (which allocates the
/// `Tox_Events` at the first event), an iteration without events returns NULL with `error`
/// OK. Collecting events cannot fail here, so `fail_hard` changes nothing; a NULL `tox`
/// (c-toxcore would crash) returns NULL with OK, and an internal failure NULL with MALLOC,
/// the only failure tox_events.h has.
#[no_mangle]
pub unsafe extern "C" fn tox_events_iterate(
    tox: *mut Tox,
    fail_hard: bool,
    error: *mut Tox_Err_Events_Iterate,
) -> *mut Tox_Events {
    let _ = fail_hard;
    let events = guard::call(None, || {
        let raw = tox;
        // SAFETY: tox.h: a non-NULL `tox` comes from `tox_new` and is still alive.
        let Some(tox) = (unsafe { handle::tox_ref(tox) }) else {
            return Some(std::ptr::null_mut());
        };
        let events = tox.iterate_events();
        // toxav's callbacks run inside the iteration, as c-toxcore's MSI and group audio
        // handlers do (av/); a `tox_kill` from one of them takes effect once they are done.
        tox.in_callbacks(|| {
            // SAFETY: no lock is held.
            unsafe {
                crate::av::callbacks::fire_signals(&tox);
                crate::av::group::fire_group_audio(raw, &tox);
            }
        });
        if tox.kill_requested() {
            drop(tox);
            // SAFETY: a toxav callback killed the instance; our own call has left it.
            unsafe { handle::finish_kill(raw) };
            return Some(Box::into_raw(from_events(events)));
        }
        if events.is_empty() {
            return Some(std::ptr::null_mut());
        }
        Some(Box::into_raw(from_events(events)))
    });
    match events {
        Some(events) => {
            guard::set(error, Tox_Err_Events_Iterate::OK);
            events
        }
        None => guard::fail(error, Tox_Err_Events_Iterate::MALLOC, std::ptr::null_mut()),
    }
}

/// `tox_events_free`: frees events from `tox_events_iterate` or `tox_events_load`, and
/// with them every event pointer and byte pointer read from them. NULL is ignored (as
/// c-toxcore).
#[no_mangle]
pub unsafe extern "C" fn tox_events_free(events: *mut Tox_Events) {
    // SAFETY: tox_events.h: non-NULL events come from `Box::into_raw` in
    // `tox_events_iterate` or `tox_events_load` and are freed once.
    unsafe { guard::free(events) }
}

/// `tox_events_bytes_size`: the length of `tox_events_get_bytes`'s output. NULL counts as
/// no events (one byte, the empty msgpack array), as in c-toxcore, whose per-type sizes
/// are 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn tox_events_bytes_size(events: *const Tox_Events) -> u32 {
    guard::call(0, || {
        // SAFETY: see `events_ref`; tox_events.h's contract for `events`.
        let bytes = match unsafe { events_ref(events) } {
            Some(events) => events.to_bytes(),
            None => Tox_Events::default().to_bytes(),
        };
        len32(&bytes)
    })
}

/// `tox_events_get_bytes`: writes the events' msgpack serialisation, c-toxcore 0.2.18's
/// format byte for byte (see the module's documentation), to `bytes`, which must hold
/// `tox_events_bytes_size(events)` bytes. NULL events write the empty array; a NULL
/// `bytes` writes nothing (c-toxcore then only counts).
#[no_mangle]
pub unsafe extern "C" fn tox_events_get_bytes(events: *const Tox_Events, bytes: *mut u8) {
    guard::call((), || {
        // SAFETY: see `events_ref`; tox_events.h's contract for `events`.
        let out = match unsafe { events_ref(events) } {
            Some(events) => events.to_bytes(),
            None => Tox_Events::default().to_bytes(),
        };
        let out = &out[..len32(&out) as usize];
        // SAFETY: tox_events.h: `bytes` holds `tox_events_bytes_size(events)` bytes, which
        // is `out.len()`; NULL writes nothing.
        unsafe { guard::copy_out(out, bytes) };
    })
}

/// `tox_events_load`: events read from `bytes_size` bytes of `tox_events_get_bytes`'s
/// format, or NULL when c-toxcore 0.2.18 would refuse them (a wrong type, a short read, a
/// count or length the bytes cannot hold, an unknown event type). Accepts what
/// c-toxcore's reader accepts: integers in any form that fits, unchecked enum values,
/// trailing bytes. NULL `bytes` returns NULL (c-toxcore asserts).
#[no_mangle]
pub unsafe extern "C" fn tox_events_load(bytes: *const u8, bytes_size: u32) -> *mut Tox_Events {
    guard::call(std::ptr::null_mut(), || {
        if bytes.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: tox_events.h: `bytes` points to `bytes_size` readable bytes.
        let Some(bytes) = (unsafe { guard::bytes(bytes, bytes_size as usize) }) else {
            return std::ptr::null_mut();
        };
        match Tox_Events::from_bytes(bytes) {
            Some(events) => Box::into_raw(Box::new(events)),
            None => std::ptr::null_mut(),
        }
    })
}

/// `tox_events_equal`: whether two events serialise to the same bytes, which is how
/// c-toxcore 0.2.18 compares them (so NULL equals an empty `Tox_Events`, and the order
/// between types does not count).
#[no_mangle]
pub unsafe extern "C" fn tox_events_equal(a: *const Tox_Events, b: *const Tox_Events) -> bool {
    guard::call(false, || {
        let empty = Tox_Events::default();
        // SAFETY: see `events_ref`; tox_events.h's contract for `a` and `b`.
        let (a, b) = unsafe { (events_ref(a), events_ref(b)) };
        a.unwrap_or(&empty).to_bytes() == b.unwrap_or(&empty).to_bytes()
    })
}

/// Defines `tox_events_get_<type>_size` and `tox_events_get_<type>` over the list `field`.
macro_rules! accessors {
    ($field:ident: $record:ident, $size:ident, $get:ident) => {
        #[doc = concat!(
                    "`", stringify!($size), "`: how many `", stringify!($record),
                    "` events `events` holds; 0 for NULL events, as in c-toxcore."
                )]
        #[no_mangle]
        pub unsafe extern "C" fn $size(events: *const Tox_Events) -> u32 {
            guard::call(0, || {
                // SAFETY: see `events_ref`; tox_events.h's contract for `events`.
                unsafe { events_ref(events) }
                    .map_or(0, |e| u32::try_from(e.$field.len()).unwrap_or(u32::MAX))
            })
        }

        #[doc = concat!(
                    "`", stringify!($get), "`: the `index`-th `", stringify!($record),
                    "` event, valid until `tox_events_free`. NULL events or an index out of range ",
                    "return NULL (c-toxcore asserts instead)."
                )]
        #[no_mangle]
        pub unsafe extern "C" fn $get(events: *const Tox_Events, index: u32) -> *const $record {
            guard::call(std::ptr::null(), || {
                // SAFETY: see `events_ref`; tox_events.h's contract for `events`.
                unsafe { events_ref(events) }
                    .and_then(|e| e.$field.get(index as usize))
                    .map_or(std::ptr::null(), |record| record as *const $record)
            })
        }
    };
}

accessors!(conference_connected: Tox_Event_Conference_Connected,
    tox_events_get_conference_connected_size, tox_events_get_conference_connected);
accessors!(conference_invite: Tox_Event_Conference_Invite,
    tox_events_get_conference_invite_size, tox_events_get_conference_invite);
accessors!(conference_message: Tox_Event_Conference_Message,
    tox_events_get_conference_message_size, tox_events_get_conference_message);
accessors!(conference_peer_list_changed: Tox_Event_Conference_Peer_List_Changed,
    tox_events_get_conference_peer_list_changed_size, tox_events_get_conference_peer_list_changed);
accessors!(conference_peer_name: Tox_Event_Conference_Peer_Name,
    tox_events_get_conference_peer_name_size, tox_events_get_conference_peer_name);
accessors!(conference_title: Tox_Event_Conference_Title,
    tox_events_get_conference_title_size, tox_events_get_conference_title);
accessors!(file_chunk_request: Tox_Event_File_Chunk_Request,
    tox_events_get_file_chunk_request_size, tox_events_get_file_chunk_request);
accessors!(file_recv: Tox_Event_File_Recv,
    tox_events_get_file_recv_size, tox_events_get_file_recv);
accessors!(file_recv_chunk: Tox_Event_File_Recv_Chunk,
    tox_events_get_file_recv_chunk_size, tox_events_get_file_recv_chunk);
accessors!(file_recv_control: Tox_Event_File_Recv_Control,
    tox_events_get_file_recv_control_size, tox_events_get_file_recv_control);
accessors!(friend_connection_status: Tox_Event_Friend_Connection_Status,
    tox_events_get_friend_connection_status_size, tox_events_get_friend_connection_status);
accessors!(friend_lossless_packet: Tox_Event_Friend_Lossless_Packet,
    tox_events_get_friend_lossless_packet_size, tox_events_get_friend_lossless_packet);
accessors!(friend_lossy_packet: Tox_Event_Friend_Lossy_Packet,
    tox_events_get_friend_lossy_packet_size, tox_events_get_friend_lossy_packet);
accessors!(friend_message: Tox_Event_Friend_Message,
    tox_events_get_friend_message_size, tox_events_get_friend_message);
accessors!(friend_name: Tox_Event_Friend_Name,
    tox_events_get_friend_name_size, tox_events_get_friend_name);
accessors!(friend_read_receipt: Tox_Event_Friend_Read_Receipt,
    tox_events_get_friend_read_receipt_size, tox_events_get_friend_read_receipt);
accessors!(friend_request: Tox_Event_Friend_Request,
    tox_events_get_friend_request_size, tox_events_get_friend_request);
accessors!(friend_status: Tox_Event_Friend_Status,
    tox_events_get_friend_status_size, tox_events_get_friend_status);
accessors!(friend_status_message: Tox_Event_Friend_Status_Message,
    tox_events_get_friend_status_message_size, tox_events_get_friend_status_message);
accessors!(friend_typing: Tox_Event_Friend_Typing,
    tox_events_get_friend_typing_size, tox_events_get_friend_typing);
accessors!(self_connection_status: Tox_Event_Self_Connection_Status,
    tox_events_get_self_connection_status_size, tox_events_get_self_connection_status);
