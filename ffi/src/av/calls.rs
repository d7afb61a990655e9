//! Placing, answering and controlling calls: `toxav_call`, `toxav_answer`,
//! `toxav_call_control` and the bit-rate setters, each checking in toxav.c's order
//! (errors.rs).

use rustox_core::av::CallControl;
use rustox_core::node::FriendNumber;

use super::errors::{
    answer_code, audio_bit_rate_valid, bit_rate_code, call_code, control_code, video_bit_rate_valid,
};
use super::session::{with_state, ToxAV};
use crate::guard;
use crate::handle::State;
use crate::types::{
    Toxav_Call_Control, Toxav_Call_Control_Value, Toxav_Err_Answer, Toxav_Err_Bit_Rate_Set,
    Toxav_Err_Call, Toxav_Err_Call_Control,
};

/// Whether the Tox has friend `friend` (toxav.c's `m_friend_exists`).
pub fn friend_exists(state: &State, friend: u32) -> bool {
    state.node.friend_public_key(FriendNumber(friend)).is_some()
}

/// `toxav_call`: calls an online friend. Bit rates are in kbit/s; 0 sends none of that
/// kind. Checks: the bit rates (`INVALID_BIT_RATE`), then the friend (`FRIEND_NOT_FOUND`,
/// `FRIEND_NOT_CONNECTED`), then the call (`FRIEND_ALREADY_IN_CALL`), as toxav.c does.
#[no_mangle]
pub unsafe extern "C" fn toxav_call(
    av: *mut ToxAV,
    friend_number: u32,
    audio_bit_rate: u32,
    video_bit_rate: u32,
    error: *mut Toxav_Err_Call,
) -> bool {
    guard::call(false, || {
        if !audio_bit_rate_valid(audio_bit_rate) || !video_bit_rate_valid(video_bit_rate) {
            return guard::fail(error, Toxav_Err_Call::INVALID_BIT_RATE, false);
        }
        // SAFETY: toxav.h's contract for `av`.
        let result = unsafe {
            with_state(av, |state| {
                let now = state.now();
                let result =
                    state
                        .node
                        .av_command(now, FriendNumber(friend_number), |calls, friend| {
                            calls.call(now, friend, audio_bit_rate, video_bit_rate)
                        });
                state.flush();
                result
            })
        };
        let code = call_code(result);
        guard::fail(error, code, code == Toxav_Err_Call::OK)
    })
}

/// `toxav_answer`: answers a friend who is calling. Checks the friend, then the bit rates,
/// then the call, as toxav.c does.
#[no_mangle]
pub unsafe extern "C" fn toxav_answer(
    av: *mut ToxAV,
    friend_number: u32,
    audio_bit_rate: u32,
    video_bit_rate: u32,
    error: *mut Toxav_Err_Answer,
) -> bool {
    guard::call(false, || {
        // SAFETY: toxav.h's contract for `av`.
        let code = unsafe {
            with_state(av, |state| {
                if !friend_exists(state, friend_number) {
                    return Toxav_Err_Answer::FRIEND_NOT_FOUND;
                }
                if !audio_bit_rate_valid(audio_bit_rate) || !video_bit_rate_valid(video_bit_rate) {
                    return Toxav_Err_Answer::INVALID_BIT_RATE;
                }
                let now = state.now();
                let result =
                    state
                        .node
                        .av_command_any(now, FriendNumber(friend_number), |calls, friend| {
                            calls.answer(now, friend, audio_bit_rate, video_bit_rate)
                        });
                state.flush();
                answer_code(Some(result))
            })
        }
        .unwrap_or(Toxav_Err_Answer::FRIEND_NOT_FOUND);
        guard::fail(error, code, code == Toxav_Err_Answer::OK)
    })
}

/// The engine's control for toxav.h's.
fn control_of(control: Toxav_Call_Control) -> CallControl {
    match control {
        Toxav_Call_Control::RESUME => CallControl::Resume,
        Toxav_Call_Control::PAUSE => CallControl::Pause,
        Toxav_Call_Control::CANCEL => CallControl::Cancel,
        Toxav_Call_Control::MUTE_AUDIO => CallControl::MuteAudio,
        Toxav_Call_Control::UNMUTE_AUDIO => CallControl::UnmuteAudio,
        Toxav_Call_Control::HIDE_VIDEO => CallControl::HideVideo,
        Toxav_Call_Control::SHOW_VIDEO => CallControl::ShowVideo,
    }
}

/// `toxav_call_control`: pause, resume, cancel (hang up or reject), mute, hide. A value
/// `Toxav_Call_Control` does not have is `INVALID_TRANSITION` for a friend in a call, as
/// toxav.c's `call_control_handle` falls through to it.
#[no_mangle]
pub unsafe extern "C" fn toxav_call_control(
    av: *mut ToxAV,
    friend_number: u32,
    control: Toxav_Call_Control_Value,
    error: *mut Toxav_Err_Call_Control,
) -> bool {
    guard::call(false, || {
        // SAFETY: toxav.h's contract for `av`.
        let code = unsafe {
            with_state(av, |state| {
                if !friend_exists(state, friend_number) {
                    return Toxav_Err_Call_Control::FRIEND_NOT_FOUND;
                }
                let Some(control) = Toxav_Call_Control::from_raw(control) else {
                    let in_call = state
                        .node
                        .calls()
                        .is_some_and(|calls| calls.in_call(friend_number));
                    return if in_call {
                        Toxav_Err_Call_Control::INVALID_TRANSITION
                    } else {
                        Toxav_Err_Call_Control::FRIEND_NOT_IN_CALL
                    };
                };
                let now = state.now();
                let result =
                    state
                        .node
                        .av_command_any(now, FriendNumber(friend_number), |calls, friend| {
                            calls.control(now, friend, control_of(control))
                        });
                state.flush();
                control_code(Some(result))
            })
        }
        .unwrap_or(Toxav_Err_Call_Control::FRIEND_NOT_FOUND);
        guard::fail(error, code, code == Toxav_Err_Call_Control::OK)
    })
}

/// Which bit rate a setter changes.
#[derive(Clone, Copy)]
enum Kind {
    Audio,
    Video,
}

/// A bit-rate setter: the friend, then the rate, then the call (toxav.c's order).
///
/// # Safety
/// toxav.h's contract for `av`.
unsafe fn set_bit_rate(
    av: *mut ToxAV,
    friend_number: u32,
    bit_rate: u32,
    kind: Kind,
) -> Toxav_Err_Bit_Rate_Set {
    // SAFETY: the caller's contract.
    unsafe {
        with_state(av, |state| {
            if !friend_exists(state, friend_number) {
                return Toxav_Err_Bit_Rate_Set::FRIEND_NOT_FOUND;
            }
            let valid = match kind {
                Kind::Audio => audio_bit_rate_valid(bit_rate),
                Kind::Video => video_bit_rate_valid(bit_rate),
            };
            if !valid {
                return Toxav_Err_Bit_Rate_Set::INVALID_BIT_RATE;
            }
            let now = state.now();
            let result =
                state
                    .node
                    .av_command_any(
                        now,
                        FriendNumber(friend_number),
                        |calls, friend| match kind {
                            Kind::Audio => calls.set_audio_bit_rate(now, friend, bit_rate),
                            Kind::Video => calls.set_video_bit_rate(now, friend, bit_rate),
                        },
                    );
            state.flush();
            bit_rate_code(Some(result))
        })
    }
    .unwrap_or(Toxav_Err_Bit_Rate_Set::FRIEND_NOT_FOUND)
}

/// `toxav_audio_set_bit_rate`: the audio bit rate (kbit/s) of a call in progress; 0 stops
/// sending audio (the peer is told through MSI's capabilities).
#[no_mangle]
pub unsafe extern "C" fn toxav_audio_set_bit_rate(
    av: *mut ToxAV,
    friend_number: u32,
    bit_rate: u32,
    error: *mut Toxav_Err_Bit_Rate_Set,
) -> bool {
    guard::call(false, || {
        // SAFETY: toxav.h's contract for `av`.
        let code = unsafe { set_bit_rate(av, friend_number, bit_rate, Kind::Audio) };
        guard::fail(error, code, code == Toxav_Err_Bit_Rate_Set::OK)
    })
}

/// `toxav_video_set_bit_rate`: the video bit rate (kbit/s) of a call in progress; 0 stops
/// sending video.
#[no_mangle]
pub unsafe extern "C" fn toxav_video_set_bit_rate(
    av: *mut ToxAV,
    friend_number: u32,
    bit_rate: u32,
    error: *mut Toxav_Err_Bit_Rate_Set,
) -> bool {
    guard::call(false, || {
        // SAFETY: toxav.h's contract for `av`.
        let code = unsafe { set_bit_rate(av, friend_number, bit_rate, Kind::Video) };
        guard::fail(error, code, code == Toxav_Err_Bit_Rate_Set::OK)
    })
}
