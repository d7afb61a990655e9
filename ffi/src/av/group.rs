//! Group audio on A/V conferences (toxav_old.c over groupav.c): `toxav_add_av_groupchat`,
//! `toxav_join_av_groupchat`, `toxav_group_send_audio`, `toxav_groupchat_enable_av`,
//! `toxav_groupchat_disable_av`, `toxav_groupchat_av_enabled`. They take a `Tox *` and
//! need no session; every failure is -1 (or `false`), as in groupav.c.
//!
//! The node decodes conference audio (packet 199) as it arrives; each frame is handed to
//! the conference's `audio_callback` with the `Tox *` and the callback's userdata at the
//! end of the `tox_iterate` that received it ([`fire_group_audio`]).

use std::ffi::{c_int, c_uint, c_void};

use rustox_core::av::codec::SystemCodecs;
use rustox_core::conference::ConferenceNumber;
use rustox_core::node::FriendNumber;

use super::callbacks::toxav_audio_data_cb;
use super::frames::MAX_AUDIO_SAMPLES;
use super::hub::{GroupCallback, UserData};
use crate::guard;
use crate::handle::{tox_ref, Instance, State, Tox};

/// The length of a conference invite cookie: conference number (2), type (1), id (32)
/// (Group_chats.c's `join_groupchat` checks it).
const COOKIE_LEN: usize = 2 + 1 + 32;
/// Where the cookie keeps the conference's type, and the A/V type's value
/// (`GROUPCHAT_TYPE_AV`, group.h).
const COOKIE_TYPE_AT: usize = 2;
const GROUPCHAT_TYPE_AV: u8 = 1;

/// Runs `body` on the Tox's state, locked; `None` for NULL or a killed Tox.
///
/// # Safety
/// tox.h's contract for `tox`.
unsafe fn with_tox<T>(tox: *mut Tox, body: impl FnOnce(&mut State) -> T) -> Option<T> {
    // SAFETY: the caller's contract.
    let instance = unsafe { tox_ref(tox) }?;
    let mut state = instance.lock();
    Some(body(&mut state))
}

/// Group audio encodes and decodes with libopus (groupav.c's Opus, as toxav.c's calls).
fn use_system_codecs(state: &mut State) {
    state.node.set_group_audio_codecs(Box::new(SystemCodecs));
}

/// Turns audio on for an A/V conference and keeps its callback; false when it is not an
/// A/V conference or its audio is already on (groupav.c's `groupchat_enable_av`).
fn enable(
    state: &mut State,
    conference: u32,
    callback: Option<toxav_audio_data_cb>,
    user_data: *mut c_void,
) -> bool {
    let number = ConferenceNumber(conference);
    if state.node.conference_audio_enabled(number) {
        return false;
    }
    let now = state.now();
    use_system_codecs(state);
    if state.node.conference_set_audio(now, number, true).is_err() {
        return false;
    }
    state.av.set_group_callback(
        conference,
        Some(GroupCallback {
            callback,
            user_data: UserData::of(user_data),
        }),
    );
    true
}

/// `toxav_add_av_groupchat`: a new A/V conference with audio on; its number, or -1.
#[no_mangle]
pub unsafe extern "C" fn toxav_add_av_groupchat(
    tox: *mut Tox,
    audio_callback: Option<toxav_audio_data_cb>,
    userdata: *mut c_void,
) -> c_int {
    guard::call(-1, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe {
            with_tox(tox, |state| {
                let now = state.now();
                use_system_codecs(state);
                let Ok(conference) = state.node.conference_new_av(now) else {
                    return -1;
                };
                state.av.set_group_callback(
                    conference.0,
                    Some(GroupCallback {
                        callback: audio_callback,
                        user_data: UserData::of(userdata),
                    }),
                );
                state.flush();
                c_int::try_from(conference.0).unwrap_or(-1)
            })
        }
        .unwrap_or(-1)
    })
}

/// `toxav_join_av_groupchat`: joins the A/V conference a friend invited us to (`data`:
/// the invite's cookie) with audio on; its number, or -1 (also for a text conference's
/// cookie, as `join_groupchat` checks the type).
#[no_mangle]
pub unsafe extern "C" fn toxav_join_av_groupchat(
    tox: *mut Tox,
    friendnumber: u32,
    data: *const u8,
    length: u16,
    audio_callback: Option<toxav_audio_data_cb>,
    userdata: *mut c_void,
) -> c_int {
    guard::call(-1, || {
        // SAFETY: toxav.h: `length` bytes at `data`.
        let Some(cookie) = (unsafe { guard::bytes(data, usize::from(length)) }) else {
            return -1;
        };
        if cookie.len() != COOKIE_LEN || cookie[COOKIE_TYPE_AT] != GROUPCHAT_TYPE_AV {
            return -1;
        }
        // SAFETY: tox.h's contract for `tox`.
        unsafe {
            with_tox(tox, |state| {
                let now = state.now();
                use_system_codecs(state);
                let Ok(conference) =
                    state
                        .node
                        .conference_join_av(now, FriendNumber(friendnumber), cookie)
                else {
                    return -1;
                };
                let joined = if state.node.conference_audio_enabled(conference) {
                    state.av.set_group_callback(
                        conference.0,
                        Some(GroupCallback {
                            callback: audio_callback,
                            user_data: UserData::of(userdata),
                        }),
                    );
                    true
                } else {
                    enable(state, conference.0, audio_callback, userdata)
                };
                if !joined {
                    // groupav.c's `join_av_groupchat` deletes the conference it joined.
                    let _ = state.node.conference_delete(now, conference);
                }
                state.flush();
                if joined {
                    c_int::try_from(conference.0).unwrap_or(-1)
                } else {
                    -1
                }
            })
        }
        .unwrap_or(-1)
    })
}

/// `toxav_group_send_audio`: encodes `samples` samples per channel of interleaved `pcm`
/// and sends them to the conference; 0, or -1 (no A/V conference with audio on, 1 or 2
/// channels, a rate Opus takes, a frame it takes).
#[no_mangle]
pub unsafe extern "C" fn toxav_group_send_audio(
    tox: *mut Tox,
    groupnumber: u32,
    pcm: *const i16,
    samples: c_uint,
    channels: u8,
    sample_rate: u32,
) -> c_int {
    guard::call(-1, || {
        let samples = samples as usize;
        if pcm.is_null() || !(1..=2).contains(&channels) || samples > MAX_AUDIO_SAMPLES {
            return -1;
        }
        // SAFETY: toxav.h: `samples * channels` samples at `pcm`, both bounded above.
        let pcm = unsafe { std::slice::from_raw_parts(pcm, samples * usize::from(channels)) };
        // SAFETY: tox.h's contract for `tox`.
        unsafe {
            with_tox(tox, |state| {
                let now = state.now();
                let result = state.node.conference_send_audio(
                    now,
                    ConferenceNumber(groupnumber),
                    pcm,
                    samples,
                    channels,
                    sample_rate,
                );
                state.flush();
                if result.is_ok() {
                    0
                } else {
                    -1
                }
            })
        }
        .unwrap_or(-1)
    })
}

/// `toxav_groupchat_enable_av`: turns audio on for an A/V conference; 0, or -1 (not an
/// A/V conference, or its audio is already on).
#[no_mangle]
pub unsafe extern "C" fn toxav_groupchat_enable_av(
    tox: *mut Tox,
    groupnumber: u32,
    audio_callback: Option<toxav_audio_data_cb>,
    userdata: *mut c_void,
) -> c_int {
    guard::call(-1, || {
        // SAFETY: tox.h's contract for `tox`.
        let enabled = unsafe {
            with_tox(tox, |state| {
                let done = enable(state, groupnumber, audio_callback, userdata);
                state.flush();
                done
            })
        };
        if enabled == Some(true) {
            0
        } else {
            -1
        }
    })
}

/// `toxav_groupchat_disable_av`: turns audio off; 0, or -1 (not an A/V conference, or its
/// audio is off).
#[no_mangle]
pub unsafe extern "C" fn toxav_groupchat_disable_av(tox: *mut Tox, groupnumber: u32) -> c_int {
    guard::call(-1, || {
        // SAFETY: tox.h's contract for `tox`.
        let disabled = unsafe {
            with_tox(tox, |state| {
                let number = ConferenceNumber(groupnumber);
                if !state.node.conference_audio_enabled(number) {
                    return false;
                }
                let now = state.now();
                let done = state.node.conference_set_audio(now, number, false).is_ok();
                state.av.set_group_callback(groupnumber, None);
                state.flush();
                done
            })
        };
        if disabled == Some(true) {
            0
        } else {
            -1
        }
    })
}

/// `toxav_groupchat_av_enabled`: whether the conference's audio is on.
#[no_mangle]
pub unsafe extern "C" fn toxav_groupchat_av_enabled(tox: *mut Tox, groupnumber: u32) -> bool {
    guard::call(false, || {
        // SAFETY: tox.h's contract for `tox`.
        unsafe {
            with_tox(tox, |state| {
                state
                    .node
                    .conference_audio_enabled(ConferenceNumber(groupnumber))
            })
        }
        .unwrap_or(false)
    })
}

/// Hands the group audio frames that arrived in this `tox_iterate` to their conferences'
/// callbacks, with no lock held.
///
/// # Safety
/// Called from `tox_iterate` on `tox`'s `instance`, with no lock held.
pub unsafe fn fire_group_audio(tox: *mut Tox, instance: &Instance) {
    let frames = instance.lock().av.take_group();
    for (frame, registered) in frames {
        if instance.kill_requested() {
            break;
        }
        let Some(callback) = registered.callback else {
            continue;
        };
        if frame.channels == 0 || frame.pcm.is_empty() {
            continue;
        }
        let samples = frame.pcm.len() / usize::from(frame.channels);
        // SAFETY: toxav.h's signature; the samples live for the call.
        unsafe {
            callback(
                tox.cast(),
                frame.conference,
                frame.peer,
                frame.pcm.as_ptr(),
                u32::try_from(samples).unwrap_or(0),
                frame.channels,
                frame.sampling_rate,
                registered.user_data.get(),
            )
        };
    }
}
