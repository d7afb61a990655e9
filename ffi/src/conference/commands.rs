//! The conference calls that change something: create, delete, invite, join, send, set the
//! title, bound the offline peers. Each checks its arguments in c-toxcore 0.2.18's order
//! (the conference first, then lengths, then the network), hands the call to the node, and
//! sends what the node queued at once, as c-toxcore sends from inside the call.

use rustox_core::conference::{ConferenceNumber, ConferenceType};
use rustox_core::node::{FriendNumber, MessageKind};

use super::access::{exists, with_state, COOKIE_LENGTH, MAX_MESSAGE_LEN, MAX_TITLE};
use super::errors;
use crate::guard;
use crate::handle::Tox;
use crate::types::{
    Tox_Conference_Type, Tox_Err_Conference_Delete, Tox_Err_Conference_Invite,
    Tox_Err_Conference_Join, Tox_Err_Conference_New, Tox_Err_Conference_Send_Message,
    Tox_Err_Conference_Set_Max_Offline, Tox_Err_Conference_Title, Tox_Message_Type,
    Tox_Message_Type_Value,
};

/// `tox_conference_new`: a text conference with us as its only peer, at the lowest free
/// number; `UINT32_MAX` with `INIT` when none can be made.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_new(
    tox: *mut Tox,
    error: *mut Tox_Err_Conference_New,
) -> u32 {
    guard::call(u32::MAX, || {
        // SAFETY: tox.h's contract for `tox`.
        let result = unsafe {
            with_state(tox, |state| {
                let now = state.now();
                let result = state.node.conference_new(now, ConferenceType::Text);
                state.flush();
                result
            })
        };
        match result {
            Some(Ok(n)) => guard::fail(error, Tox_Err_Conference_New::OK, n.0),
            Some(Err(e)) => guard::fail(error, errors::new_error(e), u32::MAX),
            None => guard::fail(error, Tox_Err_Conference_New::INIT, u32::MAX),
        }
    })
}

/// `tox_conference_delete`: leaves the conference (its peers hear we left for good) and
/// frees its number.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_delete(
    tox: *mut Tox,
    conference_number: u32,
    error: *mut Tox_Err_Conference_Delete,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let result = unsafe {
            with_state(tox, |state| {
                let now = state.now();
                let result = state
                    .node
                    .conference_delete(now, ConferenceNumber(conference_number));
                state.flush();
                result
            })
        };
        match result {
            Some(Ok(())) => guard::fail(error, Tox_Err_Conference_Delete::OK, true),
            Some(Err(e)) => guard::fail(error, errors::delete_error(e), false),
            None => guard::fail(
                error,
                Tox_Err_Conference_Delete::CONFERENCE_NOT_FOUND,
                false,
            ),
        }
    })
}

/// `tox_conference_invite`: `CONFERENCE_NOT_FOUND`, then `NO_CONNECTION` while we have
/// not joined it ourselves, then `FAIL_SEND` for a friend that does not exist or is
/// offline (c-toxcore's `invite_friend` checks in that order).
#[no_mangle]
pub unsafe extern "C" fn tox_conference_invite(
    tox: *mut Tox,
    friend_number: u32,
    conference_number: u32,
    error: *mut Tox_Err_Conference_Invite,
) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let result = unsafe {
            with_state(tox, |state| {
                let now = state.now();
                let result = state.node.conference_invite(
                    now,
                    FriendNumber(friend_number),
                    ConferenceNumber(conference_number),
                );
                state.flush();
                result
            })
        };
        match result {
            Some(Ok(())) => guard::fail(error, Tox_Err_Conference_Invite::OK, true),
            Some(Err(e)) => guard::fail(error, errors::invite_error(e), false),
            None => guard::fail(
                error,
                Tox_Err_Conference_Invite::CONFERENCE_NOT_FOUND,
                false,
            ),
        }
    })
}

/// `tox_conference_join`: answers a friend's invite with its cookie; returns the new
/// conference's number, `UINT32_MAX` on failure. The checks are `join_groupchat`'s, in its
/// order: a cookie not exactly [`COOKIE_LENGTH`] bytes long (or NULL, which tox.h gives no
/// code of its own) is `INVALID_LENGTH`; a type byte other than
/// `TOX_CONFERENCE_TYPE_TEXT` is `WRONG_TYPE` (A/V conferences are joined through toxav);
/// then the node's: `FRIEND_NOT_FOUND`, `DUPLICATE` for a conference we are in,
/// `INIT_FAIL`, `FAIL_SEND` when the friend is offline.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_join(
    tox: *mut Tox,
    friend_number: u32,
    cookie: *const u8,
    length: usize,
    error: *mut Tox_Err_Conference_Join,
) -> u32 {
    guard::call(u32::MAX, || {
        if length != COOKIE_LENGTH {
            return guard::fail(error, Tox_Err_Conference_Join::INVALID_LENGTH, u32::MAX);
        }
        // SAFETY: tox.h: a non-NULL cookie has `length` bytes.
        let Some(cookie) = (unsafe { guard::bytes(cookie, length) }) else {
            return guard::fail(error, Tox_Err_Conference_Join::INVALID_LENGTH, u32::MAX);
        };
        if cookie.get(2).map(|&b| u32::from(b)) != Some(Tox_Conference_Type::TEXT as u32) {
            return guard::fail(error, Tox_Err_Conference_Join::WRONG_TYPE, u32::MAX);
        }
        // SAFETY: tox.h's contract for `tox`.
        let result = unsafe {
            with_state(tox, |state| {
                let now = state.now();
                let result = state
                    .node
                    .conference_join(now, FriendNumber(friend_number), cookie);
                state.flush();
                result
            })
        };
        match result {
            Some(Ok(n)) => guard::fail(error, Tox_Err_Conference_Join::OK, n.0),
            Some(Err(e)) => guard::fail(error, errors::join_error(e), u32::MAX),
            None => guard::fail(error, Tox_Err_Conference_Join::FRIEND_NOT_FOUND, u32::MAX),
        }
    })
}

/// `tox_conference_send_message`: `CONFERENCE_NOT_FOUND`, then `TOO_LONG` past
/// [`MAX_MESSAGE_LEN`] bytes, then `NO_CONNECTION` while no peer is connected (a
/// conference of one included), then `FAIL_SEND`. Any type but `TOX_MESSAGE_TYPE_NORMAL`
/// is sent as an action, as tox.c does. Where c-toxcore differs: it truncates the length
/// to 16 bits before checking it (a 65 537-byte message goes out as its first byte), which
/// is refused here as `TOO_LONG`; and a NULL message with a nonzero length, on which it
/// would read NULL, is `FAIL_SEND`. An empty message is sent (c-toxcore's receivers drop it).
#[no_mangle]
pub unsafe extern "C" fn tox_conference_send_message(
    tox: *mut Tox,
    conference_number: u32,
    kind: Tox_Message_Type_Value,
    message: *const u8,
    length: usize,
    error: *mut Tox_Err_Conference_Send_Message,
) -> bool {
    type E = Tox_Err_Conference_Send_Message;
    guard::call(false, || {
        let kind = if kind == Tox_Message_Type::NORMAL as u32 {
            MessageKind::Normal
        } else {
            MessageKind::Action
        };
        // SAFETY: tox.h's contract for `tox`; `length` bytes at a non-NULL `message`.
        let result = unsafe {
            with_state(tox, |state| {
                if !exists(&state.node, conference_number) {
                    return Err(E::CONFERENCE_NOT_FOUND);
                }
                if length > MAX_MESSAGE_LEN {
                    return Err(E::TOO_LONG);
                }
                let text = guard::bytes(message, length).ok_or(E::FAIL_SEND)?;
                let now = state.now();
                let result = state.node.conference_send_message(
                    now,
                    ConferenceNumber(conference_number),
                    kind,
                    text,
                );
                state.flush();
                result.map_err(errors::send_message_error)
            })
        };
        match result {
            Some(Ok(())) => guard::fail(error, E::OK, true),
            Some(Err(code)) => guard::fail(error, code, false),
            None => guard::fail(error, E::CONFERENCE_NOT_FOUND, false),
        }
    })
}

/// `tox_conference_set_title`: `CONFERENCE_NOT_FOUND`, then `INVALID_LENGTH` for an empty
/// title or one longer than `MAX_NAME_LENGTH` (128), then `FAIL_SEND` when the peers
/// could not be told. Setting the title it already has, or setting it while alone in the
/// conference, sends nothing and succeeds (`group_title_send`). c-toxcore truncates the
/// length to 8 bits first (a 257-byte title becomes its first byte); here any length past
/// 128 is `INVALID_LENGTH`, and so is a NULL title.
#[no_mangle]
pub unsafe extern "C" fn tox_conference_set_title(
    tox: *mut Tox,
    conference_number: u32,
    title: *const u8,
    length: usize,
    error: *mut Tox_Err_Conference_Title,
) -> bool {
    type E = Tox_Err_Conference_Title;
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`; `length` bytes at a non-NULL `title`.
        let result = unsafe {
            with_state(tox, |state| {
                if !exists(&state.node, conference_number) {
                    return Err(E::CONFERENCE_NOT_FOUND);
                }
                if length == 0 || length > MAX_TITLE {
                    return Err(E::INVALID_LENGTH);
                }
                let title = guard::bytes(title, length).ok_or(E::INVALID_LENGTH)?;
                let now = state.now();
                let result = state.node.conference_set_title(
                    now,
                    ConferenceNumber(conference_number),
                    title,
                );
                state.flush();
                result.map_err(errors::title_error)
            })
        };
        match result {
            Some(Ok(())) => guard::fail(error, E::OK, true),
            Some(Err(code)) => guard::fail(error, code, false),
            None => guard::fail(error, E::CONFERENCE_NOT_FOUND, false),
        }
    })
}

/// `tox_conference_set_max_offline`: how many offline peers the conference remembers; the
/// least recently active beyond that are forgotten at once (`group_set_max_frozen`).
#[no_mangle]
pub unsafe extern "C" fn tox_conference_set_max_offline(
    tox: *mut Tox,
    conference_number: u32,
    max_offline_peers: u32,
    error: *mut Tox_Err_Conference_Set_Max_Offline,
) -> bool {
    type E = Tox_Err_Conference_Set_Max_Offline;
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        let result = unsafe {
            with_state(tox, |state| {
                state.node.conference_set_max_offline(
                    ConferenceNumber(conference_number),
                    max_offline_peers,
                )
            })
        };
        match result {
            Some(Ok(())) => guard::fail(error, E::OK, true),
            Some(Err(e)) => guard::fail(error, errors::set_max_offline_error(e), false),
            None => guard::fail(error, E::CONFERENCE_NOT_FOUND, false),
        }
    })
}
