//! tox.h's conferences (the old group chats): not implemented in rustox yet.
//!
//! No conference ever exists, so every function answers as c-toxcore 0.2.18 answers for a
//! conference number that designates none: `CONFERENCE_NOT_FOUND` with the failure value
//! c-toxcore returns (`UINT32_MAX`, `SIZE_MAX` for sizes, `UINT64_MAX`, `false`), the list of
//! conferences is empty, and creating or joining one fails. The `Tox *` is never
//! dereferenced (c-toxcore asserts it is not NULL; here NULL gets the same answers), and
//! neither is any other pointer, except the cookie given to `tox_conference_join`, which is
//! checked as c-toxcore checks it.
//!
//! The six `tox_callback_conference_*` functions accept the callback and drop it: no
//! conference event can happen, so there is nothing to call it for.

use std::ffi::c_void;

use crate::guard;
use crate::handle::Tox;
use crate::stub::stub;
use crate::types::{
    Tox_Conference_Type, Tox_Err_Conference_By_Id, Tox_Err_Conference_By_Uid,
    Tox_Err_Conference_Delete, Tox_Err_Conference_Get_Type, Tox_Err_Conference_Invite,
    Tox_Err_Conference_Join, Tox_Err_Conference_New, Tox_Err_Conference_Peer_Query,
    Tox_Err_Conference_Send_Message, Tox_Err_Conference_Set_Max_Offline, Tox_Err_Conference_Title,
    Tox_Message_Type,
};

/// An invite cookie's length in c-toxcore (`join_groupchat`): the inviter's 2-byte
/// conference number, the type byte, then the 32-byte conference id.
pub const COOKIE_LENGTH: usize = 2 + 1 + 32;

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

stub! {
    /// `tox_callback_conference_invite`: accepted and dropped; no invite can arrive.
    fn tox_callback_conference_invite(tox: *mut Tox, callback: Option<tox_conference_invite_cb>)
}

stub! {
    /// `tox_callback_conference_connected`: accepted and dropped; no conference can connect.
    fn tox_callback_conference_connected(
        tox: *mut Tox,
        callback: Option<tox_conference_connected_cb>,
    )
}

stub! {
    /// `tox_callback_conference_message`: accepted and dropped; no conference message can
    /// arrive.
    fn tox_callback_conference_message(tox: *mut Tox, callback: Option<tox_conference_message_cb>)
}

stub! {
    /// `tox_callback_conference_title`: accepted and dropped; no title can change.
    fn tox_callback_conference_title(tox: *mut Tox, callback: Option<tox_conference_title_cb>)
}

stub! {
    /// `tox_callback_conference_peer_name`: accepted and dropped; no conference peer exists.
    fn tox_callback_conference_peer_name(
        tox: *mut Tox,
        callback: Option<tox_conference_peer_name_cb>,
    )
}

stub! {
    /// `tox_callback_conference_peer_list_changed`: accepted and dropped; no peer list exists
    /// to change.
    fn tox_callback_conference_peer_list_changed(
        tox: *mut Tox,
        callback: Option<tox_conference_peer_list_changed_cb>,
    )
}

stub! {
    /// `tox_conference_new`: `UINT32_MAX` with `TOX_ERR_CONFERENCE_NEW_INIT` ("the conference
    /// instance failed to initialize"), c-toxcore's answer when it cannot create one.
    fn tox_conference_new(tox: *mut Tox) -> u32 = u32::MAX, error: Tox_Err_Conference_New::INIT
}

stub! {
    /// `tox_conference_delete`: false with `CONFERENCE_NOT_FOUND`.
    fn tox_conference_delete(
        tox: *mut Tox,
        conference_number: u32,
    ) -> bool = false, error: Tox_Err_Conference_Delete::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_peer_count`: `UINT32_MAX` with `CONFERENCE_NOT_FOUND`, as c-toxcore.
    fn tox_conference_peer_count(
        tox: *const Tox,
        conference_number: u32,
    ) -> u32 = u32::MAX, error: Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_peer_get_name_size`: `SIZE_MAX` (c-toxcore's `return -1`) with
    /// `CONFERENCE_NOT_FOUND`.
    fn tox_conference_peer_get_name_size(
        tox: *const Tox,
        conference_number: u32,
        peer_number: u32,
    ) -> usize = usize::MAX, error: Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_peer_get_name`: false with `CONFERENCE_NOT_FOUND`; `name` is not
    /// written.
    fn tox_conference_peer_get_name(
        tox: *const Tox,
        conference_number: u32,
        peer_number: u32,
        name: *mut u8,
    ) -> bool = false, error: Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_peer_get_public_key`: false with `CONFERENCE_NOT_FOUND`; `public_key`
    /// is not written.
    fn tox_conference_peer_get_public_key(
        tox: *const Tox,
        conference_number: u32,
        peer_number: u32,
        public_key: *mut u8,
    ) -> bool = false, error: Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_peer_number_is_ours`: false with `CONFERENCE_NOT_FOUND`.
    fn tox_conference_peer_number_is_ours(
        tox: *const Tox,
        conference_number: u32,
        peer_number: u32,
    ) -> bool = false, error: Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_offline_peer_count`: `UINT32_MAX` with `CONFERENCE_NOT_FOUND`, as
    /// c-toxcore.
    fn tox_conference_offline_peer_count(
        tox: *const Tox,
        conference_number: u32,
    ) -> u32 = u32::MAX, error: Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_offline_peer_get_name_size`: `SIZE_MAX` (c-toxcore's `return -1`) with
    /// `CONFERENCE_NOT_FOUND`.
    fn tox_conference_offline_peer_get_name_size(
        tox: *const Tox,
        conference_number: u32,
        offline_peer_number: u32,
    ) -> usize = usize::MAX, error: Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_offline_peer_get_name`: false with `CONFERENCE_NOT_FOUND`; `name` is
    /// not written.
    fn tox_conference_offline_peer_get_name(
        tox: *const Tox,
        conference_number: u32,
        offline_peer_number: u32,
        name: *mut u8,
    ) -> bool = false, error: Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_offline_peer_get_public_key`: false with `CONFERENCE_NOT_FOUND`;
    /// `public_key` is not written.
    fn tox_conference_offline_peer_get_public_key(
        tox: *const Tox,
        conference_number: u32,
        offline_peer_number: u32,
        public_key: *mut u8,
    ) -> bool = false, error: Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_offline_peer_get_last_active`: `UINT64_MAX` with
    /// `CONFERENCE_NOT_FOUND`, as c-toxcore.
    fn tox_conference_offline_peer_get_last_active(
        tox: *const Tox,
        conference_number: u32,
        offline_peer_number: u32,
    ) -> u64 = u64::MAX, error: Tox_Err_Conference_Peer_Query::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_set_max_offline`: false with `CONFERENCE_NOT_FOUND`.
    fn tox_conference_set_max_offline(
        tox: *mut Tox,
        conference_number: u32,
        max_offline_peers: u32,
    ) -> bool = false, error: Tox_Err_Conference_Set_Max_Offline::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_invite`: false with `CONFERENCE_NOT_FOUND` (c-toxcore looks the
    /// conference up before the friend).
    fn tox_conference_invite(
        tox: *mut Tox,
        friend_number: u32,
        conference_number: u32,
    ) -> bool = false, error: Tox_Err_Conference_Invite::CONFERENCE_NOT_FOUND
}

/// `tox_conference_join`: always `UINT32_MAX`. The cookie is checked first, as c-toxcore's
/// `join_groupchat` checks it: not exactly [`COOKIE_LENGTH`] bytes (or NULL, which tox.h
/// gives no code of its own) is `INVALID_LENGTH`; a type byte other than
/// `TOX_CONFERENCE_TYPE_TEXT` is `WRONG_TYPE` (A/V conferences are toxav's). A well-formed
/// cookie gets `INIT_FAIL`, "conference instance failed to initialize": that is what
/// happens, since rustox cannot create a conference. `FAIL_SEND` would send the client
/// looking at the network and `DUPLICATE` claims a conference exists. c-toxcore looks the
/// friend up between the cookie checks and the creation (`FRIEND_NOT_FOUND` for an unknown
/// friend); this does not, so an unknown friend gets `INIT_FAIL` here.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_join(
    tox: *mut Tox,
    friend_number: u32,
    cookie: *const u8,
    length: usize,
    error: *mut Tox_Err_Conference_Join,
) -> u32 {
    guard::call(u32::MAX, || {
        let _ = (tox, friend_number);
        if length != COOKIE_LENGTH {
            return guard::fail(error, Tox_Err_Conference_Join::INVALID_LENGTH, u32::MAX);
        }
        // SAFETY: tox.h: a non-NULL cookie has `length` bytes.
        let Some(cookie) = (unsafe { guard::bytes(cookie, length) }) else {
            return guard::fail(error, Tox_Err_Conference_Join::INVALID_LENGTH, u32::MAX);
        };
        if u32::from(cookie[2]) != Tox_Conference_Type::TEXT as u32 {
            return guard::fail(error, Tox_Err_Conference_Join::WRONG_TYPE, u32::MAX);
        }
        guard::fail(error, Tox_Err_Conference_Join::INIT_FAIL, u32::MAX)
    })
}

stub! {
    /// `tox_conference_send_message`: false with `CONFERENCE_NOT_FOUND`; the message is not
    /// read and the `Tox_Message_Type` (a plain integer from C) is not looked at.
    fn tox_conference_send_message(
        tox: *mut Tox,
        conference_number: u32,
        kind: crate::types::Tox_Message_Type_Value,
        message: *const u8,
        length: usize,
    ) -> bool = false, error: Tox_Err_Conference_Send_Message::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_get_title_size`: `SIZE_MAX` (c-toxcore's `return -1`) with
    /// `CONFERENCE_NOT_FOUND`.
    fn tox_conference_get_title_size(
        tox: *const Tox,
        conference_number: u32,
    ) -> usize = usize::MAX, error: Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_get_title`: false with `CONFERENCE_NOT_FOUND`; `title` is not written.
    fn tox_conference_get_title(
        tox: *const Tox,
        conference_number: u32,
        title: *mut u8,
    ) -> bool = false, error: Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_set_title`: false with `CONFERENCE_NOT_FOUND`; the title is not read.
    fn tox_conference_set_title(
        tox: *mut Tox,
        conference_number: u32,
        title: *const u8,
        length: usize,
    ) -> bool = false, error: Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_get_chatlist_size`: 0, there are no conferences.
    fn tox_conference_get_chatlist_size(tox: *const Tox) -> usize = 0
}

stub! {
    /// `tox_conference_get_chatlist`: copies the conference numbers, of which there are none:
    /// `chatlist` (sized by `tox_conference_get_chatlist_size`, so possibly of 0 elements or
    /// NULL) is not written.
    fn tox_conference_get_chatlist(tox: *const Tox, chatlist: *mut u32)
}

stub! {
    /// `tox_conference_get_type`: `CONFERENCE_NOT_FOUND`, returning what c-toxcore returns then,
    /// `(Tox_Conference_Type)-1`, i.e. `UINT32_MAX` (tox.h: "unspecified on failure"). The Rust
    /// return type is `u32` because that value is no `Tox_Conference_Type` variant; a C enum is
    /// returned as its `unsigned int`, so the ABI is the header's.
    fn tox_conference_get_type(
        tox: *const Tox,
        conference_number: u32,
    ) -> crate::types::Tox_Conference_Type_Value = u32::MAX,
        error: Tox_Err_Conference_Get_Type::CONFERENCE_NOT_FOUND
}

stub! {
    /// `tox_conference_get_id`: false (no such conference); `id` is not written.
    fn tox_conference_get_id(tox: *const Tox, conference_number: u32, id: *mut u8) -> bool = false
}

/// `tox_conference_by_id`: `UINT32_MAX`, with `TOX_ERR_CONFERENCE_BY_ID_NULL` for a NULL id
/// (checked first, as c-toxcore) and `NOT_FOUND` otherwise. The id is not read.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_by_id(
    tox: *const Tox,
    id: *const u8,
    error: *mut Tox_Err_Conference_By_Id,
) -> u32 {
    guard::call(u32::MAX, || {
        let _ = tox;
        if id.is_null() {
            return guard::fail(error, Tox_Err_Conference_By_Id::NULL, u32::MAX);
        }
        guard::fail(error, Tox_Err_Conference_By_Id::NOT_FOUND, u32::MAX)
    })
}

/// `tox_conference_get_uid`: the deprecated name of `tox_conference_get_id`; false, `uid`
/// is not written.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_get_uid(
    tox: *const Tox,
    conference_number: u32,
    uid: *mut u8,
) -> bool {
    // SAFETY: the same contract; neither pointer is dereferenced.
    guard::call(false, || unsafe {
        tox_conference_get_id(tox, conference_number, uid)
    })
}

/// `tox_conference_by_uid`: the deprecated name of `tox_conference_by_id`: `UINT32_MAX`,
/// with `TOX_ERR_CONFERENCE_BY_UID_NULL` for a NULL uid and `NOT_FOUND` otherwise.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_by_uid(
    tox: *const Tox,
    uid: *const u8,
    error: *mut Tox_Err_Conference_By_Uid,
) -> u32 {
    guard::call(u32::MAX, || {
        let _ = tox;
        if uid.is_null() {
            return guard::fail(error, Tox_Err_Conference_By_Uid::NULL, u32::MAX);
        }
        guard::fail(error, Tox_Err_Conference_By_Uid::NOT_FOUND, u32::MAX)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::{null, null_mut};

    /// A `Tox *` that is never dereferenced: the conference functions must not need one.
    fn toxes() -> [*mut Tox; 2] {
        [null_mut(), std::ptr::NonNull::<Tox>::dangling().as_ptr()]
    }

    #[test]
    fn no_conference_can_be_created_or_found() {
        for tox in toxes() {
            // SAFETY (every call): `tox` is never dereferenced; the other pointers are NULL
            // or point to buffers of tox.h's sizes.
            unsafe {
                let mut e = Tox_Err_Conference_New::OK;
                assert_eq!(tox_conference_new(tox, &mut e), u32::MAX);
                assert_eq!(e, Tox_Err_Conference_New::INIT);
                assert_eq!(tox_conference_get_chatlist_size(tox), 0);
                let mut list = [7u32; 2];
                tox_conference_get_chatlist(tox, list.as_mut_ptr());
                tox_conference_get_chatlist(tox, null_mut());
                assert_eq!(list, [7, 7], "nothing written");

                let id = [1u8; 32];
                let mut e = Tox_Err_Conference_By_Id::OK;
                assert_eq!(tox_conference_by_id(tox, id.as_ptr(), &mut e), u32::MAX);
                assert_eq!(e, Tox_Err_Conference_By_Id::NOT_FOUND);
                assert_eq!(tox_conference_by_id(tox, null(), &mut e), u32::MAX);
                assert_eq!(e, Tox_Err_Conference_By_Id::NULL);
                let mut e = Tox_Err_Conference_By_Uid::OK;
                assert_eq!(tox_conference_by_uid(tox, id.as_ptr(), &mut e), u32::MAX);
                assert_eq!(e, Tox_Err_Conference_By_Uid::NOT_FOUND);
                assert_eq!(tox_conference_by_uid(tox, null(), &mut e), u32::MAX);
                assert_eq!(e, Tox_Err_Conference_By_Uid::NULL);
                let mut out = [9u8; 32];
                assert!(!tox_conference_get_id(tox, 0, out.as_mut_ptr()));
                assert!(!tox_conference_get_uid(tox, 0, out.as_mut_ptr()));
                assert!(!tox_conference_get_id(tox, 0, null_mut()));
                assert_eq!(out, [9; 32], "nothing written");

                assert_eq!(tox_conference_new(tox, null_mut()), u32::MAX);
            }
        }
    }

    #[test]
    fn every_query_says_conference_not_found() {
        type Q = Tox_Err_Conference_Peer_Query;
        for tox in toxes() {
            let mut buf = [5u8; 1400];
            let b = buf.as_mut_ptr();
            // SAFETY (every call): `tox` is never dereferenced; the other pointers are NULL
            // or point to buffers of tox.h's sizes.
            unsafe {
                let mut e = Tox_Err_Conference_Delete::OK;
                assert!(!tox_conference_delete(tox, 0, &mut e));
                assert_eq!(e, Tox_Err_Conference_Delete::CONFERENCE_NOT_FOUND);

                let mut q = Q::OK;
                assert_eq!(tox_conference_peer_count(tox, 0, &mut q), u32::MAX);
                assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
                q = Q::OK;
                assert_eq!(
                    tox_conference_peer_get_name_size(tox, 0, 0, &mut q),
                    usize::MAX
                );
                assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
                q = Q::OK;
                assert!(!tox_conference_peer_get_name(tox, 0, 0, b, &mut q));
                assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
                q = Q::OK;
                assert!(!tox_conference_peer_get_public_key(tox, 0, 0, b, &mut q));
                assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
                q = Q::OK;
                assert!(!tox_conference_peer_number_is_ours(tox, 0, 0, &mut q));
                assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
                q = Q::OK;
                assert_eq!(tox_conference_offline_peer_count(tox, 0, &mut q), u32::MAX);
                assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
                q = Q::OK;
                assert_eq!(
                    tox_conference_offline_peer_get_name_size(tox, 0, 0, &mut q),
                    usize::MAX
                );
                assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
                q = Q::OK;
                assert!(!tox_conference_offline_peer_get_name(tox, 0, 0, b, &mut q));
                assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
                q = Q::OK;
                assert!(!tox_conference_offline_peer_get_public_key(
                    tox, 0, 0, b, &mut q
                ));
                assert_eq!(q, Q::CONFERENCE_NOT_FOUND);
                q = Q::OK;
                assert_eq!(
                    tox_conference_offline_peer_get_last_active(tox, 0, 0, &mut q),
                    u64::MAX
                );
                assert_eq!(q, Q::CONFERENCE_NOT_FOUND);

                let mut e = Tox_Err_Conference_Set_Max_Offline::OK;
                assert!(!tox_conference_set_max_offline(tox, 0, 10, &mut e));
                assert_eq!(e, Tox_Err_Conference_Set_Max_Offline::CONFERENCE_NOT_FOUND);
                let mut e = Tox_Err_Conference_Invite::OK;
                assert!(!tox_conference_invite(tox, 0, 0, &mut e));
                assert_eq!(e, Tox_Err_Conference_Invite::CONFERENCE_NOT_FOUND);
                let mut e = Tox_Err_Conference_Send_Message::OK;
                assert!(!tox_conference_send_message(
                    tox,
                    0,
                    0,
                    b"hi".as_ptr(),
                    2,
                    &mut e
                ));
                assert_eq!(e, Tox_Err_Conference_Send_Message::CONFERENCE_NOT_FOUND);

                let mut t = Tox_Err_Conference_Title::OK;
                assert_eq!(tox_conference_get_title_size(tox, 0, &mut t), usize::MAX);
                assert_eq!(t, Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND);
                t = Tox_Err_Conference_Title::OK;
                assert!(!tox_conference_get_title(tox, 0, b, &mut t));
                assert_eq!(t, Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND);
                t = Tox_Err_Conference_Title::OK;
                assert!(!tox_conference_set_title(tox, 0, b"t".as_ptr(), 1, &mut t));
                assert_eq!(t, Tox_Err_Conference_Title::CONFERENCE_NOT_FOUND);

                let mut g = Tox_Err_Conference_Get_Type::OK;
                assert_eq!(tox_conference_get_type(tox, 0, &mut g), u32::MAX);
                assert_eq!(g, Tox_Err_Conference_Get_Type::CONFERENCE_NOT_FOUND);
            }
            assert!(buf.iter().all(|&x| x == 5), "no output buffer written");
        }
    }

    #[test]
    fn join_checks_the_cookie_then_cannot_initialize() {
        let tox = null_mut();
        let join = |cookie: *const u8, length: usize| {
            let mut e = Tox_Err_Conference_Join::OK;
            // SAFETY: `tox` is never dereferenced; `cookie` is NULL or has `length` bytes.
            let n = unsafe { tox_conference_join(tox, 0, cookie, length, &mut e) };
            assert_eq!(n, u32::MAX);
            e
        };
        let mut cookie = [0u8; COOKIE_LENGTH];
        assert_eq!(
            join(cookie.as_ptr(), 34),
            Tox_Err_Conference_Join::INVALID_LENGTH
        );
        assert_eq!(join(null(), 0), Tox_Err_Conference_Join::INVALID_LENGTH);
        assert_eq!(
            join(null(), COOKIE_LENGTH),
            Tox_Err_Conference_Join::INVALID_LENGTH
        );
        assert_eq!(
            join(cookie.as_ptr(), COOKIE_LENGTH),
            Tox_Err_Conference_Join::INIT_FAIL
        );
        cookie[2] = Tox_Conference_Type::AV as u8;
        assert_eq!(
            join(cookie.as_ptr(), COOKIE_LENGTH),
            Tox_Err_Conference_Join::WRONG_TYPE
        );
    }

    #[test]
    fn callbacks_are_accepted() {
        unsafe extern "C" fn connected(_: *mut Tox, _: u32, _: *mut c_void) {
            unreachable!("no conference event can happen");
        }
        for tox in toxes() {
            // SAFETY (every call): `tox` is never dereferenced, the callback never called.
            unsafe {
                tox_callback_conference_invite(tox, None);
                tox_callback_conference_connected(tox, Some(connected));
                tox_callback_conference_message(tox, None);
                tox_callback_conference_title(tox, None);
                tox_callback_conference_peer_name(tox, None);
                tox_callback_conference_peer_list_changed(tox, Some(connected));
            }
        }
    }
}
