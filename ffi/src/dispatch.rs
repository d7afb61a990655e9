//! tox_dispatch.h: a table of per-type callbacks (`Tox_Dispatch`) that `tox_dispatch_invoke`
//! calls for each event of a `Tox_Events`.
//!
//! The order is c-toxcore 0.2.18's `tox_dispatch_invoke` (tox_dispatch.c): type by type in
//! [`INVOKE_ORDER`], and within a type in the order the events happened. It is not the
//! order the events happened across types (a `Tox_Events` does not keep it), and not
//! the order `tox_events_get_bytes` writes them in either (that one has file_recv after
//! file_recv_chunk and file_recv_control, and friend_status after friend_status_message).

use std::ffi::c_void;

use crate::events::{
    events_ref, Tox_Event_Conference_Connected, Tox_Event_Conference_Invite,
    Tox_Event_Conference_Message, Tox_Event_Conference_Peer_List_Changed,
    Tox_Event_Conference_Peer_Name, Tox_Event_Conference_Title, Tox_Event_File_Chunk_Request,
    Tox_Event_File_Recv, Tox_Event_File_Recv_Chunk, Tox_Event_File_Recv_Control,
    Tox_Event_Friend_Connection_Status, Tox_Event_Friend_Lossless_Packet,
    Tox_Event_Friend_Lossy_Packet, Tox_Event_Friend_Message, Tox_Event_Friend_Name,
    Tox_Event_Friend_Read_Receipt, Tox_Event_Friend_Request, Tox_Event_Friend_Status,
    Tox_Event_Friend_Status_Message, Tox_Event_Friend_Typing, Tox_Event_Self_Connection_Status,
    Tox_Events,
};
use crate::guard;
use crate::handle::Tox;
use crate::types::{Tox_Err_Dispatch_New, Tox_Event};

/// The order in which `tox_dispatch_invoke` (tox_dispatch.c of c-toxcore 0.2.18) calls the
/// types' callbacks: their names' alphabetical order.
pub const INVOKE_ORDER: [Tox_Event; 21] = crate::events::TYPES;

/// A tox_dispatch.h callback for events of type `E`: `(tox, event, user_data)`.
pub type Callback<E> = unsafe extern "C" fn(tox: *mut Tox, event: *const E, user_data: *mut c_void);

/// `tox_events_conference_connected_cb`.
pub type tox_events_conference_connected_cb = Callback<Tox_Event_Conference_Connected>;
/// `tox_events_conference_invite_cb`.
pub type tox_events_conference_invite_cb = Callback<Tox_Event_Conference_Invite>;
/// `tox_events_conference_message_cb`.
pub type tox_events_conference_message_cb = Callback<Tox_Event_Conference_Message>;
/// `tox_events_conference_peer_list_changed_cb`.
pub type tox_events_conference_peer_list_changed_cb =
    Callback<Tox_Event_Conference_Peer_List_Changed>;
/// `tox_events_conference_peer_name_cb`.
pub type tox_events_conference_peer_name_cb = Callback<Tox_Event_Conference_Peer_Name>;
/// `tox_events_conference_title_cb`.
pub type tox_events_conference_title_cb = Callback<Tox_Event_Conference_Title>;
/// `tox_events_file_chunk_request_cb`.
pub type tox_events_file_chunk_request_cb = Callback<Tox_Event_File_Chunk_Request>;
/// `tox_events_file_recv_cb`.
pub type tox_events_file_recv_cb = Callback<Tox_Event_File_Recv>;
/// `tox_events_file_recv_chunk_cb`.
pub type tox_events_file_recv_chunk_cb = Callback<Tox_Event_File_Recv_Chunk>;
/// `tox_events_file_recv_control_cb`.
pub type tox_events_file_recv_control_cb = Callback<Tox_Event_File_Recv_Control>;
/// `tox_events_friend_connection_status_cb`.
pub type tox_events_friend_connection_status_cb = Callback<Tox_Event_Friend_Connection_Status>;
/// `tox_events_friend_lossless_packet_cb`.
pub type tox_events_friend_lossless_packet_cb = Callback<Tox_Event_Friend_Lossless_Packet>;
/// `tox_events_friend_lossy_packet_cb`.
pub type tox_events_friend_lossy_packet_cb = Callback<Tox_Event_Friend_Lossy_Packet>;
/// `tox_events_friend_message_cb`.
pub type tox_events_friend_message_cb = Callback<Tox_Event_Friend_Message>;
/// `tox_events_friend_name_cb`.
pub type tox_events_friend_name_cb = Callback<Tox_Event_Friend_Name>;
/// `tox_events_friend_read_receipt_cb`.
pub type tox_events_friend_read_receipt_cb = Callback<Tox_Event_Friend_Read_Receipt>;
/// `tox_events_friend_request_cb`.
pub type tox_events_friend_request_cb = Callback<Tox_Event_Friend_Request>;
/// `tox_events_friend_status_cb`.
pub type tox_events_friend_status_cb = Callback<Tox_Event_Friend_Status>;
/// `tox_events_friend_status_message_cb`.
pub type tox_events_friend_status_message_cb = Callback<Tox_Event_Friend_Status_Message>;
/// `tox_events_friend_typing_cb`.
pub type tox_events_friend_typing_cb = Callback<Tox_Event_Friend_Typing>;
/// `tox_events_self_connection_status_cb`.
pub type tox_events_self_connection_status_cb = Callback<Tox_Event_Self_Connection_Status>;

/// `Tox_Dispatch` (tox_dispatch.h): one optional callback per event type.
#[derive(Default)]
pub struct Tox_Dispatch {
    conference_connected: Option<tox_events_conference_connected_cb>,
    conference_invite: Option<tox_events_conference_invite_cb>,
    conference_message: Option<tox_events_conference_message_cb>,
    conference_peer_list_changed: Option<tox_events_conference_peer_list_changed_cb>,
    conference_peer_name: Option<tox_events_conference_peer_name_cb>,
    conference_title: Option<tox_events_conference_title_cb>,
    file_chunk_request: Option<tox_events_file_chunk_request_cb>,
    file_recv: Option<tox_events_file_recv_cb>,
    file_recv_chunk: Option<tox_events_file_recv_chunk_cb>,
    file_recv_control: Option<tox_events_file_recv_control_cb>,
    friend_connection_status: Option<tox_events_friend_connection_status_cb>,
    friend_lossless_packet: Option<tox_events_friend_lossless_packet_cb>,
    friend_lossy_packet: Option<tox_events_friend_lossy_packet_cb>,
    friend_message: Option<tox_events_friend_message_cb>,
    friend_name: Option<tox_events_friend_name_cb>,
    friend_read_receipt: Option<tox_events_friend_read_receipt_cb>,
    friend_request: Option<tox_events_friend_request_cb>,
    friend_status: Option<tox_events_friend_status_cb>,
    friend_status_message: Option<tox_events_friend_status_message_cb>,
    friend_typing: Option<tox_events_friend_typing_cb>,
    self_connection_status: Option<tox_events_self_connection_status_cb>,
}

/// Calls `callback`, if set, for each of `events` in order.
///
/// # Safety
/// `callback` must be a function of tox_dispatch.h's signature for `E`; it receives `tox`
/// and `user_data` as the client passed them to `tox_dispatch_invoke`.
unsafe fn invoke_all<E>(
    callback: Option<Callback<E>>,
    events: &[E],
    tox: *mut Tox,
    user_data: *mut c_void,
) {
    let Some(callback) = callback else {
        return;
    };
    for event in events {
        // SAFETY: the caller's contract; `event` lives as long as the `Tox_Events` the
        // client handed to `tox_dispatch_invoke`, which tox_dispatch.h says it keeps until
        // the call returns.
        unsafe { callback(tox, event, user_data) };
    }
}

impl Tox_Dispatch {
    /// Calls the callbacks for `events`, type by type in [`INVOKE_ORDER`].
    ///
    /// # Safety
    /// The callbacks must be C functions of tox_dispatch.h's signatures.
    unsafe fn invoke(&self, events: &Tox_Events, tox: *mut Tox, user_data: *mut c_void) {
        let (t, u) = (tox, user_data);
        for kind in INVOKE_ORDER {
            // SAFETY: the caller's contract; each callback is paired with its own type's
            // events.
            unsafe {
                match kind {
                    Tox_Event::CONFERENCE_CONNECTED => invoke_all(
                        self.conference_connected,
                        &events.conference_connected,
                        t,
                        u,
                    ),
                    Tox_Event::CONFERENCE_INVITE => {
                        invoke_all(self.conference_invite, &events.conference_invite, t, u)
                    }
                    Tox_Event::CONFERENCE_MESSAGE => {
                        invoke_all(self.conference_message, &events.conference_message, t, u)
                    }
                    Tox_Event::CONFERENCE_PEER_LIST_CHANGED => invoke_all(
                        self.conference_peer_list_changed,
                        &events.conference_peer_list_changed,
                        t,
                        u,
                    ),
                    Tox_Event::CONFERENCE_PEER_NAME => invoke_all(
                        self.conference_peer_name,
                        &events.conference_peer_name,
                        t,
                        u,
                    ),
                    Tox_Event::CONFERENCE_TITLE => {
                        invoke_all(self.conference_title, &events.conference_title, t, u)
                    }
                    Tox_Event::FILE_CHUNK_REQUEST => {
                        invoke_all(self.file_chunk_request, &events.file_chunk_request, t, u)
                    }
                    Tox_Event::FILE_RECV => invoke_all(self.file_recv, &events.file_recv, t, u),
                    Tox_Event::FILE_RECV_CHUNK => {
                        invoke_all(self.file_recv_chunk, &events.file_recv_chunk, t, u)
                    }
                    Tox_Event::FILE_RECV_CONTROL => {
                        invoke_all(self.file_recv_control, &events.file_recv_control, t, u)
                    }
                    Tox_Event::FRIEND_CONNECTION_STATUS => invoke_all(
                        self.friend_connection_status,
                        &events.friend_connection_status,
                        t,
                        u,
                    ),
                    Tox_Event::FRIEND_LOSSLESS_PACKET => invoke_all(
                        self.friend_lossless_packet,
                        &events.friend_lossless_packet,
                        t,
                        u,
                    ),
                    Tox_Event::FRIEND_LOSSY_PACKET => {
                        invoke_all(self.friend_lossy_packet, &events.friend_lossy_packet, t, u)
                    }
                    Tox_Event::FRIEND_MESSAGE => {
                        invoke_all(self.friend_message, &events.friend_message, t, u)
                    }
                    Tox_Event::FRIEND_NAME => {
                        invoke_all(self.friend_name, &events.friend_name, t, u)
                    }
                    Tox_Event::FRIEND_READ_RECEIPT => {
                        invoke_all(self.friend_read_receipt, &events.friend_read_receipt, t, u)
                    }
                    Tox_Event::FRIEND_REQUEST => {
                        invoke_all(self.friend_request, &events.friend_request, t, u)
                    }
                    Tox_Event::FRIEND_STATUS => {
                        invoke_all(self.friend_status, &events.friend_status, t, u)
                    }
                    Tox_Event::FRIEND_STATUS_MESSAGE => invoke_all(
                        self.friend_status_message,
                        &events.friend_status_message,
                        t,
                        u,
                    ),
                    Tox_Event::FRIEND_TYPING => {
                        invoke_all(self.friend_typing, &events.friend_typing, t, u)
                    }
                    Tox_Event::SELF_CONNECTION_STATUS => invoke_all(
                        self.self_connection_status,
                        &events.self_connection_status,
                        t,
                        u,
                    ),
                }
            }
        }
    }
}

/// `tox_dispatch_new`: a dispatch table with no callbacks, to be freed with
/// `tox_dispatch_free`; `error` OK (MALLOC and NULL only if the allocation fails, as in
/// c-toxcore).
#[no_mangle]
pub unsafe extern "C" fn tox_dispatch_new(error: *mut Tox_Err_Dispatch_New) -> *mut Tox_Dispatch {
    let dispatch = guard::call(std::ptr::null_mut(), || {
        Box::into_raw(Box::<Tox_Dispatch>::default())
    });
    if dispatch.is_null() {
        return guard::fail(error, Tox_Err_Dispatch_New::MALLOC, dispatch);
    }
    guard::set(error, Tox_Err_Dispatch_New::OK);
    dispatch
}

/// `tox_dispatch_free`: frees a table from `tox_dispatch_new`; NULL is ignored (c-toxcore
/// calls `free`, which ignores NULL too).
#[no_mangle]
pub unsafe extern "C" fn tox_dispatch_free(dispatch: *mut Tox_Dispatch) {
    // SAFETY: tox_dispatch.h: a non-NULL `dispatch` comes from `tox_dispatch_new`
    // (`Box::into_raw`) and is freed once.
    unsafe { guard::free(dispatch) }
}

/// `tox_dispatch_invoke`: calls `dispatch`'s callback of each type for each event of that
/// type in `events`, passing `tox` and `user_data` through unchanged. As c-toxcore 0.2.18:
/// type by type in [`INVOKE_ORDER`], each type's events in order, nothing for a type
/// without a callback; NULL `events` has no events. A NULL `dispatch` (c-toxcore would
/// crash) does nothing.
#[no_mangle]
pub unsafe extern "C" fn tox_dispatch_invoke(
    dispatch: *const Tox_Dispatch,
    events: *const Tox_Events,
    tox: *mut Tox,
    user_data: *mut c_void,
) {
    guard::call((), || {
        // SAFETY: tox_dispatch.h: a non-NULL `dispatch` comes from `tox_dispatch_new`, and
        // non-NULL `events` from `tox_events_iterate` or `tox_events_load`, neither freed.
        let (Some(dispatch), Some(events)) =
            (unsafe { dispatch.as_ref() }, unsafe { events_ref(events) })
        else {
            return;
        };
        // SAFETY: the registered callbacks are C functions of tox_dispatch.h's signatures
        // (the registration functions' types say so).
        unsafe { dispatch.invoke(events, tox, user_data) };
    })
}

/// Defines `tox_events_callback_<type>`, which sets the `field` callback.
macro_rules! registration {
    ($name:ident, $field:ident: $cb:ident) => {
        #[doc = concat!(
                    "`", stringify!($name), "`: sets (NULL: clears) the `", stringify!($cb),
                    "` that `tox_dispatch_invoke` calls, replacing the previous one, as c-toxcore ",
                    "does. A NULL `dispatch` is ignored (c-toxcore would crash)."
                )]
        #[no_mangle]
        pub unsafe extern "C" fn $name(dispatch: *mut Tox_Dispatch, callback: Option<$cb>) {
            guard::call((), || {
                // SAFETY: tox_dispatch.h: a non-NULL `dispatch` comes from
                // `tox_dispatch_new` and is not freed; C gives it to one thread at a time.
                if let Some(dispatch) = unsafe { dispatch.as_mut() } {
                    dispatch.$field = callback;
                }
            })
        }
    };
}

registration!(tox_events_callback_conference_connected,
    conference_connected: tox_events_conference_connected_cb);
registration!(tox_events_callback_conference_invite,
    conference_invite: tox_events_conference_invite_cb);
registration!(tox_events_callback_conference_message,
    conference_message: tox_events_conference_message_cb);
registration!(tox_events_callback_conference_peer_list_changed,
    conference_peer_list_changed: tox_events_conference_peer_list_changed_cb);
registration!(tox_events_callback_conference_peer_name,
    conference_peer_name: tox_events_conference_peer_name_cb);
registration!(tox_events_callback_conference_title,
    conference_title: tox_events_conference_title_cb);
registration!(tox_events_callback_file_chunk_request,
    file_chunk_request: tox_events_file_chunk_request_cb);
registration!(tox_events_callback_file_recv, file_recv: tox_events_file_recv_cb);
registration!(tox_events_callback_file_recv_chunk,
    file_recv_chunk: tox_events_file_recv_chunk_cb);
registration!(tox_events_callback_file_recv_control,
    file_recv_control: tox_events_file_recv_control_cb);
registration!(tox_events_callback_friend_connection_status,
    friend_connection_status: tox_events_friend_connection_status_cb);
registration!(tox_events_callback_friend_lossless_packet,
    friend_lossless_packet: tox_events_friend_lossless_packet_cb);
registration!(tox_events_callback_friend_lossy_packet,
    friend_lossy_packet: tox_events_friend_lossy_packet_cb);
registration!(tox_events_callback_friend_message, friend_message: tox_events_friend_message_cb);
registration!(tox_events_callback_friend_name, friend_name: tox_events_friend_name_cb);
registration!(tox_events_callback_friend_read_receipt,
    friend_read_receipt: tox_events_friend_read_receipt_cb);
registration!(tox_events_callback_friend_request, friend_request: tox_events_friend_request_cb);
registration!(tox_events_callback_friend_status, friend_status: tox_events_friend_status_cb);
registration!(tox_events_callback_friend_status_message,
    friend_status_message: tox_events_friend_status_message_cb);
registration!(tox_events_callback_friend_typing, friend_typing: tox_events_friend_typing_cb);
registration!(tox_events_callback_self_connection_status,
    self_connection_status: tox_events_self_connection_status_cb);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Event;
    use crate::events::{
        from_events, tox_event_file_recv_chunk_get_position,
        tox_event_friend_message_get_friend_number, tox_event_friend_status_get_friend_number,
        tox_event_friend_status_message_get_friend_number, tox_events_free, tox_events_load,
    };
    use crate::types::{Tox_Connection, Tox_Message_Type, Tox_User_Status};

    /// What the callbacks saw: (what, a number from the event, the `Tox *` they got).
    type Log = Vec<(&'static str, u32, usize)>;

    /// The test's `user_data`.
    fn log<'a>(user_data: *mut c_void) -> &'a mut Log {
        // SAFETY: every test passes a live `&mut Log` as user_data and nothing else holds
        // it during `tox_dispatch_invoke`.
        unsafe { &mut *user_data.cast::<Log>() }
    }

    unsafe extern "C" fn on_message(
        tox: *mut Tox,
        event: *const Tox_Event_Friend_Message,
        user_data: *mut c_void,
    ) {
        // SAFETY: `event` comes from the events being dispatched.
        let friend = unsafe { tox_event_friend_message_get_friend_number(event) };
        log(user_data).push(("message", friend, tox as usize));
    }

    unsafe extern "C" fn on_status(
        tox: *mut Tox,
        event: *const Tox_Event_Friend_Status,
        user_data: *mut c_void,
    ) {
        // SAFETY: `event` comes from the events being dispatched.
        let friend = unsafe { tox_event_friend_status_get_friend_number(event) };
        log(user_data).push(("status", friend, tox as usize));
    }

    unsafe extern "C" fn on_status_message(
        tox: *mut Tox,
        event: *const Tox_Event_Friend_Status_Message,
        user_data: *mut c_void,
    ) {
        // SAFETY: `event` comes from the events being dispatched.
        let friend = unsafe { tox_event_friend_status_message_get_friend_number(event) };
        log(user_data).push(("status message", friend, tox as usize));
    }

    unsafe extern "C" fn on_chunk(
        tox: *mut Tox,
        event: *const Tox_Event_File_Recv_Chunk,
        user_data: *mut c_void,
    ) {
        // SAFETY: `event` comes from the events being dispatched.
        let position = unsafe { tox_event_file_recv_chunk_get_position(event) };
        log(user_data).push(("chunk", position as u32, tox as usize));
    }

    unsafe extern "C" fn on_file_recv(
        tox: *mut Tox,
        _event: *const Tox_Event_File_Recv,
        user_data: *mut c_void,
    ) {
        log(user_data).push(("file recv", 0, tox as usize));
    }

    unsafe extern "C" fn on_self(
        tox: *mut Tox,
        _event: *const Tox_Event_Self_Connection_Status,
        user_data: *mut c_void,
    ) {
        log(user_data).push(("self", 0, tox as usize));
    }

    unsafe extern "C" fn on_conference_connected(
        tox: *mut Tox,
        _event: *const Tox_Event_Conference_Connected,
        user_data: *mut c_void,
    ) {
        log(user_data).push(("conference connected", 0, tox as usize));
    }

    fn events() -> Vec<Event> {
        vec![
            Event::SelfConnectionStatus {
                status: Tox_Connection::UDP,
            },
            Event::FriendMessage {
                friend_number: 4,
                kind: Tox_Message_Type::NORMAL,
                message: b"a".to_vec(),
            },
            Event::FriendStatusMessage {
                friend_number: 5,
                message: b"b".to_vec(),
            },
            Event::FriendStatus {
                friend_number: 6,
                status: Tox_User_Status::AWAY,
            },
            Event::FriendMessage {
                friend_number: 7,
                kind: Tox_Message_Type::ACTION,
                message: b"c".to_vec(),
            },
            Event::FileRecvChunk {
                friend_number: 0,
                file_number: 0,
                position: 9,
                data: vec![1],
            },
            Event::FileRecv {
                friend_number: 0,
                file_number: 0,
                kind: 0,
                file_size: 1,
                filename: b"f".to_vec(),
            },
            Event::FriendTyping {
                friend_number: 8,
                typing: true,
            },
        ]
    }

    #[test]
    fn invoke_goes_type_by_type_in_c_toxcores_order_with_tox_and_user_data() {
        let tox = 0x1234 as *mut Tox;
        let events = Box::into_raw(from_events(events()));
        let mut seen = Log::new();
        let mut error = Tox_Err_Dispatch_New::MALLOC;
        // SAFETY: `dispatch` and `events` are alive until freed at the end; `seen` outlives
        // the invoke; the callbacks have tox_dispatch.h's signatures; `tox` is only passed
        // through, never dereferenced.
        unsafe {
            let dispatch = tox_dispatch_new(&mut error);
            assert!(!dispatch.is_null());
            assert_eq!(error, Tox_Err_Dispatch_New::OK);
            tox_events_callback_friend_message(dispatch, Some(on_message));
            tox_events_callback_friend_status(dispatch, Some(on_status));
            tox_events_callback_friend_status_message(dispatch, Some(on_status_message));
            tox_events_callback_file_recv_chunk(dispatch, Some(on_chunk));
            tox_events_callback_file_recv(dispatch, Some(on_file_recv));
            tox_events_callback_self_connection_status(dispatch, Some(on_self));
            tox_events_callback_conference_connected(dispatch, Some(on_conference_connected));
            // No typing callback: that event is skipped.
            tox_dispatch_invoke(dispatch, events, tox, (&mut seen as *mut Log).cast());
            tox_dispatch_free(dispatch);
            tox_events_free(events);
        }
        let t = tox as usize;
        assert_eq!(
            seen,
            [
                ("file recv", 0, t),
                ("chunk", 9, t),
                ("message", 4, t),
                ("message", 7, t),
                ("status", 6, t),
                ("status message", 5, t),
                ("self", 0, t),
            ]
        );
    }

    #[test]
    fn invoke_reaches_conference_events_from_loaded_bytes() {
        // Two conference-connected events, as c-toxcore would write them.
        let bytes = [0x92, 0x92, 0x10, 0x01, 0x92, 0x10, 0x02];
        let mut seen = Log::new();
        // SAFETY: `bytes` is live; `dispatch` and `events` are alive until freed here.
        unsafe {
            let events = tox_events_load(bytes.as_ptr(), bytes.len() as u32);
            let dispatch = tox_dispatch_new(std::ptr::null_mut());
            tox_events_callback_conference_connected(dispatch, Some(on_conference_connected));
            tox_dispatch_invoke(
                dispatch,
                events,
                std::ptr::null_mut(),
                (&mut seen as *mut Log).cast(),
            );
            tox_dispatch_free(dispatch);
            tox_events_free(events);
        }
        assert_eq!(
            seen,
            [
                ("conference connected", 0, 0),
                ("conference connected", 0, 0)
            ]
        );
    }

    #[test]
    fn a_null_callback_unregisters_and_null_arguments_do_nothing() {
        let events = Box::into_raw(from_events(events()));
        let mut seen = Log::new();
        // SAFETY: as above; NULL dispatch and NULL events are checked.
        unsafe {
            let dispatch = tox_dispatch_new(std::ptr::null_mut());
            tox_events_callback_friend_message(dispatch, Some(on_message));
            tox_events_callback_friend_message(dispatch, None);
            let user_data = (&mut seen as *mut Log).cast();
            tox_dispatch_invoke(dispatch, events, std::ptr::null_mut(), user_data);
            tox_dispatch_invoke(dispatch, std::ptr::null(), std::ptr::null_mut(), user_data);
            tox_dispatch_invoke(std::ptr::null(), events, std::ptr::null_mut(), user_data);
            tox_events_callback_friend_message(std::ptr::null_mut(), Some(on_message));
            tox_dispatch_free(dispatch);
            tox_dispatch_free(std::ptr::null_mut());
            tox_events_free(events);
        }
        assert!(seen.is_empty());
    }
}
