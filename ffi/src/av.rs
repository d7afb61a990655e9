//! toxav.h: audio/video calls, which rustox does not implement yet.
//!
//! Every function toxav.h declares is exported, so clients built against c-toxcore 0.2.18
//! load and link. `toxav_new` creates a session that never has a call: qTox and toxic treat
//! a failed `toxav_new` as fatal (qTox asserts, toxic dereferences the NULL session), so a
//! session that says "no call" is what lets them run, without calls. Calling a friend fails
//! (`FRIEND_NOT_FOUND` for an unknown friend, `FRIEND_NOT_CONNECTED` for an offline one,
//! otherwise `MALLOC`: the call's structures cannot be created), and everything that needs a
//! call in progress says the friend is not in one (`FRIEND_NOT_IN_CALL`,
//! `FRIEND_NOT_CALLING`), which is true. Registered callbacks are kept by no one: no call
//! event can happen.
//!
//! The old conference audio functions (`toxav_add_av_groupchat` to
//! `toxav_groupchat_av_enabled`) take a `Tox *` and a conference number. Text conferences
//! exist (conference/), A/V ones (group audio) do not yet: these functions fail with -1 (or
//! `false`) as c-toxcore (groupav.c) does for a conference that is not an A/V one.

use std::ffi::{c_int, c_uint, c_void};

use crate::guard;
use crate::handle::Tox;
use crate::stub::stub;
use crate::types::{
    Toxav_Err_Answer, Toxav_Err_Bit_Rate_Set, Toxav_Err_Call, Toxav_Err_Call_Control,
    Toxav_Err_New, Toxav_Err_Send_Frame,
};

/// `ToxAV` (toxav.h): an A/V session, opaque to C. It only knows its Tox: it never has a
/// call.
pub struct ToxAV {
    tox: *mut Tox,
}

/// Whether `friend_number` is a friend of the session's Tox, and online.
///
/// # Safety
/// A non-NULL `av` comes from `toxav_new` and its Tox is alive (toxav.h: the session is
/// killed before its Tox).
unsafe fn friend_of(av: *const ToxAV, friend_number: u32) -> Option<bool> {
    // SAFETY: the caller's contract.
    let av = unsafe { av.as_ref() }?;
    // SAFETY: the session's Tox outlives it (toxav.h).
    let tox = unsafe { crate::handle::tox_ref(av.tox) }?;
    let state = tox.lock();
    let friend = rustox_core::node::FriendNumber(friend_number);
    state.node.friend_public_key(friend)?;
    Some(state.node.is_friend_online(friend))
}

/// Defines an entry point about the call with friend `friend_number`, of which none exists:
/// false with `FRIEND_NOT_FOUND` when `av` has no such friend, else with `error: Err::CODE`
/// (c-toxcore's first checks); its other arguments are never read.
macro_rules! no_call {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?), error: $err:ident::$code:ident) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            av: *mut ToxAV,
            friend_number: u32,
            $($arg: $ty,)*
            error: *mut $err,
        ) -> bool {
            guard::call(false, || {
                let _ = ($($arg,)*);
                // SAFETY: toxav.h's contract for `av`.
                let code = match unsafe { friend_of(av, friend_number) } {
                    None => $err::FRIEND_NOT_FOUND,
                    Some(_) => $err::$code,
                };
                guard::fail(error, code, false)
            })
        }
    };
}

/// A `toxav_callback_*` setter: `fn(av, callback, user_data)`, the callback dropped (nothing
/// that would call it can happen here).
macro_rules! dropped_callback {
    ($(#[$doc:meta])* fn $name:ident($cb:ty)) => {
        stub! {
            $(#[$doc])*
            fn $name(av: *mut ToxAV, callback: Option<$cb>, user_data: *mut c_void)
        }
    };
}

/// `toxav_group_audio_cb` (toxav.h): audio of the old group calls. No group call exists here,
/// so it is never called; the type is part of the header clients compile against.
pub type toxav_group_audio_cb = unsafe extern "C" fn(
    tox: *mut crate::handle::Tox,
    groupnumber: u32,
    peernumber: u32,
    pcm: *const i16,
    samples: u32,
    channels: u8,
    sample_rate: u32,
    user_data: *mut c_void,
);

/// `enum Toxav_Friend_Call_State` (toxav.h): the bit flags of `toxav_call_state_cb`'s
/// `state` (a `uint32_t` there, hence plain constants). Missing from types/toxav.rs.
#[allow(non_snake_case)]
pub mod Toxav_Friend_Call_State {
    /// `TOXAV_FRIEND_CALL_STATE_NONE`
    pub const NONE: u32 = 0;
    /// `TOXAV_FRIEND_CALL_STATE_ERROR`
    pub const ERROR: u32 = 1;
    /// `TOXAV_FRIEND_CALL_STATE_FINISHED`
    pub const FINISHED: u32 = 2;
    /// `TOXAV_FRIEND_CALL_STATE_SENDING_A`
    pub const SENDING_A: u32 = 4;
    /// `TOXAV_FRIEND_CALL_STATE_SENDING_V`
    pub const SENDING_V: u32 = 8;
    /// `TOXAV_FRIEND_CALL_STATE_ACCEPTING_A`
    pub const ACCEPTING_A: u32 = 16;
    /// `TOXAV_FRIEND_CALL_STATE_ACCEPTING_V`
    pub const ACCEPTING_V: u32 = 32;
}

/// What the `*_iteration_interval` functions return: toxav.h's "if no call is active at
/// the moment, this function returns 200" (milliseconds). No call is ever active, and a
/// client that sleeps for this long between iterations must not busy-loop on 0.
pub const IDLE_ITERATION_INTERVAL_MS: u32 = 200;

/// `toxav_call_cb` (toxav.h).
pub type toxav_call_cb = unsafe extern "C" fn(
    av: *mut ToxAV,
    friend_number: u32,
    audio: bool,
    video: bool,
    user_data: *mut c_void,
);
/// `toxav_call_state_cb` (toxav.h).
pub type toxav_call_state_cb =
    unsafe extern "C" fn(av: *mut ToxAV, friend_number: u32, state: u32, user_data: *mut c_void);
/// `toxav_audio_bit_rate_cb` (toxav.h).
pub type toxav_audio_bit_rate_cb = unsafe extern "C" fn(
    av: *mut ToxAV,
    friend_number: u32,
    audio_bit_rate: u32,
    user_data: *mut c_void,
);
/// `toxav_video_bit_rate_cb` (toxav.h).
pub type toxav_video_bit_rate_cb = unsafe extern "C" fn(
    av: *mut ToxAV,
    friend_number: u32,
    video_bit_rate: u32,
    user_data: *mut c_void,
);
/// `toxav_audio_receive_frame_cb` (toxav.h).
pub type toxav_audio_receive_frame_cb = unsafe extern "C" fn(
    av: *mut ToxAV,
    friend_number: u32,
    pcm: *const i16,
    sample_count: usize,
    channels: u8,
    sampling_rate: u32,
    user_data: *mut c_void,
);
/// `toxav_video_receive_frame_cb` (toxav.h).
pub type toxav_video_receive_frame_cb = unsafe extern "C" fn(
    av: *mut ToxAV,
    friend_number: u32,
    width: u16,
    height: u16,
    y: *const u8,
    u: *const u8,
    v: *const u8,
    ystride: i32,
    ustride: i32,
    vstride: i32,
    user_data: *mut c_void,
);
/// `toxav_audio_data_cb` (toxav.h): the conference audio callback, with its `void *tox`.
pub type toxav_audio_data_cb = unsafe extern "C" fn(
    tox: *mut c_void,
    groupnumber: u32,
    peernumber: u32,
    pcm: *const i16,
    samples: u32,
    channels: u8,
    sample_rate: u32,
    userdata: *mut c_void,
);

/// `toxav_new`: always NULL, as rustox has no audio/video. A NULL `tox` is
/// `TOXAV_ERR_NEW_NULL`, as in c-toxcore. Otherwise the error is `TOXAV_ERR_NEW_MALLOC`:
/// of the codes toxav.h offers it is the one c-toxcore gives whenever it cannot build the
/// session's structures (its allocation, mutex and MSI failures all map to it), which is
/// what happens here; `MULTIPLE` would claim a session exists and `NULL` would blame the
/// `toxav_new`: a session over `tox` that never has a call (see the module documentation);
/// NULL with `TOXAV_ERR_NEW_NULL` for a NULL `tox`. Free it with `toxav_kill`.
#[no_mangle]
pub unsafe extern "C" fn toxav_new(tox: *mut Tox, error: *mut Toxav_Err_New) -> *mut ToxAV {
    guard::call(std::ptr::null_mut(), || {
        if tox.is_null() {
            return guard::fail(error, Toxav_Err_New::NULL, std::ptr::null_mut());
        }
        guard::set(error, Toxav_Err_New::OK);
        Box::into_raw(Box::new(ToxAV { tox }))
    })
}

/// `toxav_kill`: frees the session (NULL is ignored).
#[no_mangle]
pub unsafe extern "C" fn toxav_kill(av: *mut ToxAV) {
    // SAFETY: toxav.h: a non-NULL session came from `toxav_new` and is killed once.
    unsafe { guard::free(av) }
}

/// `toxav_get_tox`: the Tox the session was created with (NULL for a NULL session).
#[no_mangle]
pub unsafe extern "C" fn toxav_get_tox(av: *const ToxAV) -> *mut Tox {
    guard::call(std::ptr::null_mut(), || {
        // SAFETY: a non-NULL session came from toxav_new.
        unsafe { av.as_ref() }.map_or(std::ptr::null_mut(), |av| av.tox)
    })
}

stub! {
    /// `toxav_iteration_interval`: 200 ms, toxav.h's value when no call is active.
    fn toxav_iteration_interval(av: *const ToxAV) -> u32 = IDLE_ITERATION_INTERVAL_MS
}

stub! {
    /// `toxav_iterate`: nothing to do, no call is active.
    fn toxav_iterate(av: *mut ToxAV)
}

stub! {
    /// `toxav_audio_iteration_interval`: 200 ms, toxav.h's value when no call is active.
    fn toxav_audio_iteration_interval(av: *const ToxAV) -> u32 = IDLE_ITERATION_INTERVAL_MS
}

stub! {
    /// `toxav_audio_iterate`: nothing to do, no call is active.
    fn toxav_audio_iterate(av: *mut ToxAV)
}

stub! {
    /// `toxav_video_iteration_interval`: 200 ms, toxav.h's value when no call is active.
    fn toxav_video_iteration_interval(av: *const ToxAV) -> u32 = IDLE_ITERATION_INTERVAL_MS
}

stub! {
    /// `toxav_video_iterate`: nothing to do, no call is active.
    fn toxav_video_iterate(av: *mut ToxAV)
}

/// `toxav_call`: false with `TOXAV_ERR_CALL_FRIEND_NOT_FOUND` (no session, so no friend
/// of one; see the module documentation).
#[no_mangle]
pub unsafe extern "C" fn toxav_call(
    av: *mut ToxAV,
    friend_number: u32,
    audio_bit_rate: u32,
    video_bit_rate: u32,
    error: *mut Toxav_Err_Call,
) -> bool {
    guard::call(false, || {
        let _ = (audio_bit_rate, video_bit_rate);
        // SAFETY: toxav.h's contract for `av`.
        let code = match unsafe { friend_of(av, friend_number) } {
            None => Toxav_Err_Call::FRIEND_NOT_FOUND,
            Some(false) => Toxav_Err_Call::FRIEND_NOT_CONNECTED,
            Some(true) => Toxav_Err_Call::MALLOC,
        };
        guard::fail(error, code, false)
    })
}

dropped_callback! {
    /// `toxav_callback_call`: dropped; no call can come in.
    fn toxav_callback_call(toxav_call_cb)
}

no_call! {
    /// `toxav_answer`: false with `TOXAV_ERR_ANSWER_FRIEND_NOT_FOUND` (no session, so no
    /// friend of one).
    fn toxav_answer(audio_bit_rate: u32, video_bit_rate: u32),
        error: Toxav_Err_Answer::FRIEND_NOT_CALLING
}

dropped_callback! {
    /// `toxav_callback_call_state`: dropped; no call state can change.
    fn toxav_callback_call_state(toxav_call_state_cb)
}

no_call! {
    /// `toxav_call_control`: false with `TOXAV_ERR_CALL_CONTROL_FRIEND_NOT_FOUND`. The
    /// `Toxav_Call_Control` arrives as the plain integer C passed and is not looked at.
    fn toxav_call_control(control: crate::types::Toxav_Call_Control_Value),
        error: Toxav_Err_Call_Control::FRIEND_NOT_IN_CALL
}

no_call! {
    /// `toxav_audio_send_frame`: false, `FRIEND_NOT_FOUND` or `FRIEND_NOT_IN_CALL` (c-toxcore's
    /// first checks, before the one for NULL samples); `pcm` is never read.
    fn toxav_audio_send_frame(
        pcm: *const i16,
        sample_count: usize,
        channels: u8,
        sampling_rate: u32,
    ), error: Toxav_Err_Send_Frame::FRIEND_NOT_IN_CALL
}

no_call! {
    /// `toxav_audio_set_bit_rate`: false with `TOXAV_ERR_BIT_RATE_SET_FRIEND_NOT_FOUND`.
    fn toxav_audio_set_bit_rate(bit_rate: u32), error: Toxav_Err_Bit_Rate_Set::FRIEND_NOT_IN_CALL
}

dropped_callback! {
    /// `toxav_callback_audio_bit_rate`: dropped; no call, no bit-rate suggestion.
    fn toxav_callback_audio_bit_rate(toxav_audio_bit_rate_cb)
}

no_call! {
    /// `toxav_video_send_frame`: false, `FRIEND_NOT_FOUND` or `FRIEND_NOT_IN_CALL` (c-toxcore's
    /// first checks, before the one for NULL planes); `y`, `u`, `v` are never read.
    fn toxav_video_send_frame(
        width: u16,
        height: u16,
        y: *const u8,
        u: *const u8,
        v: *const u8,
    ), error: Toxav_Err_Send_Frame::FRIEND_NOT_IN_CALL
}

no_call! {
    /// `toxav_video_set_bit_rate`: false with `TOXAV_ERR_BIT_RATE_SET_FRIEND_NOT_FOUND`.
    fn toxav_video_set_bit_rate(bit_rate: u32), error: Toxav_Err_Bit_Rate_Set::FRIEND_NOT_IN_CALL
}

dropped_callback! {
    /// `toxav_callback_video_bit_rate`: dropped; no call, no bit-rate suggestion.
    fn toxav_callback_video_bit_rate(toxav_video_bit_rate_cb)
}

dropped_callback! {
    /// `toxav_callback_audio_receive_frame`: dropped; no audio frame can arrive.
    fn toxav_callback_audio_receive_frame(toxav_audio_receive_frame_cb)
}

dropped_callback! {
    /// `toxav_callback_video_receive_frame`: dropped; no video frame can arrive.
    fn toxav_callback_video_receive_frame(toxav_video_receive_frame_cb)
}

stub! {
    /// `toxav_add_av_groupchat`: -1, c-toxcore's "failure" (it returns the new conference's
    /// number on success); rustox creates no A/V conferences.
    fn toxav_add_av_groupchat(
        tox: *mut Tox,
        audio_callback: Option<toxav_audio_data_cb>,
        userdata: *mut c_void,
    ) -> c_int = -1
}

stub! {
    /// `toxav_join_av_groupchat`: -1, c-toxcore's "failure"; rustox joins no A/V
    /// conferences.
    /// `data` (the invite cookie) is never read.
    fn toxav_join_av_groupchat(
        tox: *mut Tox,
        friendnumber: u32,
        data: *const u8,
        length: u16,
        audio_callback: Option<toxav_audio_data_cb>,
        userdata: *mut c_void,
    ) -> c_int = -1
}

stub! {
    /// `toxav_group_send_audio`: -1, c-toxcore's "failure": no A/V conference exists to send
    /// to.
    /// `pcm` is never read.
    fn toxav_group_send_audio(
        tox: *mut Tox,
        groupnumber: u32,
        pcm: *const i16,
        samples: c_uint,
        channels: u8,
        sample_rate: u32,
    ) -> c_int = -1
}

stub! {
    /// `toxav_groupchat_enable_av`: -1, c-toxcore's "failure" for a conference number that
    /// does not designate an A/V conference (none exists).
    fn toxav_groupchat_enable_av(
        tox: *mut Tox,
        groupnumber: u32,
        audio_callback: Option<toxav_audio_data_cb>,
        userdata: *mut c_void,
    ) -> c_int = -1
}

stub! {
    /// `toxav_groupchat_disable_av`: -1, c-toxcore's "failure" for a conference number that
    /// does not designate an A/V conference (none exists).
    fn toxav_groupchat_disable_av(tox: *mut Tox, groupnumber: u32) -> c_int = -1
}

stub! {
    /// `toxav_groupchat_av_enabled`: false; no conference has A/V.
    fn toxav_groupchat_av_enabled(tox: *mut Tox, groupnumber: u32) -> bool = false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::{null, null_mut};

    /// A session over a real Tox has no call: every call function says why, in toxav.h's
    /// terms, for an unknown friend, an offline friend and (for everything but starting a
    /// call) a friend not in a call.
    #[test]
    fn a_session_has_no_calls() {
        let options = crate::options::Tox_Options {
            ipv6_enabled: false,
            local_discovery_enabled: false,
            start_port: 41400,
            end_port: 41450,
            ..crate::options::Tox_Options::default()
        };
        // SAFETY (every call): live Tox and session, valid error pointers.
        unsafe {
            let tox = crate::lifecycle::tox_new(&options, null_mut());
            assert!(!tox.is_null());
            let mut err = Toxav_Err_New::MALLOC;
            let av = toxav_new(tox, &mut err);
            assert_eq!(err, Toxav_Err_New::OK);
            assert!(!av.is_null());
            assert_eq!(toxav_get_tox(av), tox);
            assert_eq!(toxav_iteration_interval(av), 200);
            toxav_iterate(av);
            toxav_callback_call(av, None, null_mut());
            toxav_callback_call_state(av, None, null_mut());

            let mut e = Toxav_Err_Call::OK;
            assert!(!toxav_call(av, 0, 48, 5000, &mut e));
            assert_eq!(e, Toxav_Err_Call::FRIEND_NOT_FOUND);
            assert_eq!(
                crate::friends::tox_friend_add_norequest(tox, [5u8; 32].as_ptr(), null_mut()),
                0
            );
            assert!(!toxav_call(av, 0, 48, 5000, &mut e));
            assert_eq!(e, Toxav_Err_Call::FRIEND_NOT_CONNECTED);
            let mut e = Toxav_Err_Answer::OK;
            assert!(!toxav_answer(av, 0, 48, 0, &mut e));
            assert_eq!(e, Toxav_Err_Answer::FRIEND_NOT_CALLING);
            let mut e = Toxav_Err_Call_Control::OK;
            assert!(!toxav_call_control(av, 0, 2, &mut e));
            assert_eq!(e, Toxav_Err_Call_Control::FRIEND_NOT_IN_CALL);
            assert!(!toxav_call_control(av, 7, 2, &mut e));
            assert_eq!(e, Toxav_Err_Call_Control::FRIEND_NOT_FOUND);
            let mut e = Toxav_Err_Bit_Rate_Set::OK;
            assert!(!toxav_audio_set_bit_rate(av, 0, 48, &mut e));
            assert_eq!(e, Toxav_Err_Bit_Rate_Set::FRIEND_NOT_IN_CALL);
            let mut e = Toxav_Err_Send_Frame::OK;
            assert!(!toxav_audio_send_frame(
                av,
                0,
                null(),
                960,
                2,
                48000,
                &mut e
            ));
            assert_eq!(e, Toxav_Err_Send_Frame::FRIEND_NOT_IN_CALL);
            assert!(!toxav_video_send_frame(
                av,
                9,
                640,
                480,
                null(),
                null(),
                null(),
                &mut e
            ));
            assert_eq!(e, Toxav_Err_Send_Frame::FRIEND_NOT_FOUND);
            toxav_kill(av);
            crate::lifecycle::tox_kill(tox);
        }
    }

    /// NULL instead of a session: every function fails without touching anything.
    #[test]
    fn a_null_session_is_refused() {
        let av = null_mut();
        // SAFETY (every call): NULL is never dereferenced, error pointers are valid.
        unsafe {
            let mut err = Toxav_Err_New::OK;
            assert!(toxav_new(null_mut(), &mut err).is_null());
            assert_eq!(err, Toxav_Err_New::NULL);
            toxav_kill(av);
            assert!(toxav_get_tox(av).is_null());
            assert_eq!(toxav_iteration_interval(av), 200);
            assert_eq!(toxav_audio_iteration_interval(av), 200);
            assert_eq!(toxav_video_iteration_interval(av), 200);
            toxav_iterate(av);
            toxav_audio_iterate(av);
            toxav_video_iterate(av);
            let mut e = Toxav_Err_Call::OK;
            assert!(!toxav_call(av, 0, 48, 5000, &mut e));
            assert_eq!(e, Toxav_Err_Call::FRIEND_NOT_FOUND);
            let mut e = Toxav_Err_Bit_Rate_Set::OK;
            assert!(!toxav_video_set_bit_rate(av, 0, 5000, &mut e));
            assert_eq!(e, Toxav_Err_Bit_Rate_Set::FRIEND_NOT_FOUND);
            toxav_callback_audio_bit_rate(av, None, null_mut());
            toxav_callback_video_bit_rate(av, None, null_mut());
            toxav_callback_audio_receive_frame(av, None, null_mut());
            toxav_callback_video_receive_frame(av, None, null_mut());
        }
    }

    #[test]
    fn conference_audio_always_fails() {
        // SAFETY (every call): the Tox pointer and data pointers are never dereferenced.
        unsafe {
            let tox = null_mut();
            assert_eq!(toxav_add_av_groupchat(tox, None, null_mut()), -1);
            assert_eq!(
                toxav_join_av_groupchat(tox, 0, null(), 35, None, null_mut()),
                -1
            );
            assert_eq!(toxav_group_send_audio(tox, 0, null(), 960, 1, 48000), -1);
            assert_eq!(toxav_groupchat_enable_av(tox, 0, None, null_mut()), -1);
            assert_eq!(toxav_groupchat_disable_av(tox, 0), -1);
            assert!(!toxav_groupchat_av_enabled(tox, 0));
        }
    }
}
