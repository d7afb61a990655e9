//! `toxav_iterate` and its audio and video halves, with their intervals.
//!
//! The node decodes while `tox_iterate` steps it; what it decoded waits in the Tox's
//! state (hub.rs) until the client's audio or video iteration hands it over, as toxav.c's
//! `ac_iterate` and `vc_iterate` do from their queues.

use std::time::Duration;

use super::callbacks::deliver;
use super::hub::EventClass;
use super::session::{session, with_state, ToxAV};
use crate::guard;

/// toxav.h: "If no call is active at the moment, this function returns 200" (ms).
pub const IDLE_ITERATION_INTERVAL_MS: u32 = 200;

/// An interval for the client: 0 while frames of `class` wait, else the engine's
/// (toxav.c: a frame's duration less its decoding time while a call is active), at most
/// [`IDLE_ITERATION_INTERVAL_MS`].
///
/// # Safety
/// toxav.h's contract for `av`.
unsafe fn interval(av: *const ToxAV, class: EventClass) -> u32 {
    // SAFETY: the caller's contract.
    unsafe {
        with_state(av, |state| {
            if state.av.has(class) {
                return 0;
            }
            let Some(calls) = state.node.calls() else {
                return IDLE_ITERATION_INTERVAL_MS;
            };
            if calls.call_count() == 0 {
                return IDLE_ITERATION_INTERVAL_MS;
            }
            let cap = Duration::from_millis(u64::from(IDLE_ITERATION_INTERVAL_MS));
            let wait = calls.iteration_interval().min(cap);
            u32::try_from(wait.as_millis()).unwrap_or(IDLE_ITERATION_INTERVAL_MS)
        })
    }
    .unwrap_or(IDLE_ITERATION_INTERVAL_MS)
}

/// Hands the waiting frames of the classes `wanted` accepts to the session's callbacks,
/// with no lock held.
///
/// # Safety
/// toxav.h's contract for `av`.
unsafe fn iterate(av: *mut ToxAV, wanted: fn(EventClass) -> bool) {
    // SAFETY: the caller's contract.
    let Some(session) = (unsafe { session(av) }) else {
        return;
    };
    // SAFETY: the caller's contract.
    let Some(events) = (unsafe { with_state(av, |state| state.av.take(wanted)) }) else {
        return;
    };
    for event in &events {
        // SAFETY: no lock is held; the client's callbacks with toxav.h's arguments.
        unsafe { deliver(session.link(), event) };
    }
}

/// `toxav_iteration_interval`: the smaller of the audio and video intervals.
#[no_mangle]
pub unsafe extern "C" fn toxav_iteration_interval(av: *const ToxAV) -> u32 {
    guard::call(IDLE_ITERATION_INTERVAL_MS, || {
        // SAFETY: toxav.h's contract for `av`.
        unsafe { interval(av, EventClass::Audio).min(interval(av, EventClass::Video)) }
    })
}

/// `toxav_iterate`: decoded audio and video to their callbacks.
#[no_mangle]
pub unsafe extern "C" fn toxav_iterate(av: *mut ToxAV) {
    guard::call((), || {
        // SAFETY: toxav.h's contract for `av`.
        unsafe { iterate(av, |c| c != EventClass::Signal) }
    })
}

/// `toxav_audio_iteration_interval`: how soon decoded audio is due.
#[no_mangle]
pub unsafe extern "C" fn toxav_audio_iteration_interval(av: *const ToxAV) -> u32 {
    guard::call(IDLE_ITERATION_INTERVAL_MS, || {
        // SAFETY: toxav.h's contract for `av`.
        unsafe { interval(av, EventClass::Audio) }
    })
}

/// `toxav_audio_iterate`: decoded audio to its callback (video waits).
#[no_mangle]
pub unsafe extern "C" fn toxav_audio_iterate(av: *mut ToxAV) {
    guard::call((), || {
        // SAFETY: toxav.h's contract for `av`.
        unsafe { iterate(av, |c| c == EventClass::Audio) }
    })
}

/// `toxav_video_iteration_interval`: how soon decoded video is due.
#[no_mangle]
pub unsafe extern "C" fn toxav_video_iteration_interval(av: *const ToxAV) -> u32 {
    guard::call(IDLE_ITERATION_INTERVAL_MS, || {
        // SAFETY: toxav.h's contract for `av`.
        unsafe { interval(av, EventClass::Video) }
    })
}

/// `toxav_video_iterate`: decoded video to its callback (audio waits).
#[no_mangle]
pub unsafe extern "C" fn toxav_video_iterate(av: *mut ToxAV) {
    guard::call((), || {
        // SAFETY: toxav.h's contract for `av`.
        unsafe { iterate(av, |c| c == EventClass::Video) }
    })
}
