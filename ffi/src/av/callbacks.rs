//! toxav.h's callback types, the session's callback table, its setters, and how an event
//! is handed to its callback.

use std::ffi::c_void;

use rustox_core::av::AvEvent;

use super::hub::EventClass;
use super::link::{session, AvLink, Registered, ToxAV, UserData};
pub use super::link::{
    toxav_audio_bit_rate_cb, toxav_audio_data_cb, toxav_audio_receive_frame_cb, toxav_call_cb,
    toxav_call_state_cb, toxav_video_bit_rate_cb, toxav_video_receive_frame_cb, AvCallbacks,
};
use crate::guard;
use crate::handle::Instance;

/// `enum Toxav_Friend_Call_State` (toxav.h): the bit flags of `toxav_call_state_cb`'s
/// `state` (a `uint32_t` there, hence plain constants).
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

/// `toxav_group_audio_cb` (toxav.h): the same callback with a typed `Tox *`, which
/// toxav.h declares for clients of the old group calls.
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

/// Defines a `toxav_callback_*` setter of the table's `$field` (NULL session: nothing).
macro_rules! setter {
    ($(#[$doc:meta])* fn $name:ident($cb:ty) => $field:ident) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            av: *mut ToxAV,
            callback: Option<$cb>,
            user_data: *mut c_void,
        ) {
            guard::call((), || {
                // SAFETY: toxav.h's contract for `av`.
                if let Some(av) = unsafe { session(av) } {
                    av.link().callbacks().$field = Registered {
                        callback,
                        user_data: UserData::of(user_data),
                    };
                }
            })
        }
    };
}

setter! {
    /// `toxav_callback_call`: called (from `tox_iterate`) when a friend calls.
    fn toxav_callback_call(toxav_call_cb) => call
}
setter! {
    /// `toxav_callback_call_state`: called (from `tox_iterate`) when a call's state changes.
    fn toxav_callback_call_state(toxav_call_state_cb) => call_state
}
setter! {
    /// `toxav_callback_audio_bit_rate`: the engine's audio bit-rate suggestions.
    fn toxav_callback_audio_bit_rate(toxav_audio_bit_rate_cb) => audio_bit_rate
}
setter! {
    /// `toxav_callback_video_bit_rate`: the engine's video bit-rate suggestions.
    fn toxav_callback_video_bit_rate(toxav_video_bit_rate_cb) => video_bit_rate
}
setter! {
    /// `toxav_callback_audio_receive_frame`: decoded audio, from `toxav_audio_iterate`.
    fn toxav_callback_audio_receive_frame(toxav_audio_receive_frame_cb) => audio_frame
}
setter! {
    /// `toxav_callback_video_receive_frame`: decoded video, from `toxav_video_iterate`.
    fn toxav_callback_video_receive_frame(toxav_video_receive_frame_cb) => video_frame
}

/// Hands `event` to its callback, if the session registered one. The table is read for
/// each event: a callback may register or clear another.
///
/// # Safety
/// No lock of the library may be held; the callbacks are the client's C functions.
pub unsafe fn deliver(link: &AvLink, event: &AvEvent) {
    let av = link.av();
    let table = *link.callbacks();
    // SAFETY (every call): toxav.h's signatures, the client's userdata, buffers that live
    // for the call (toxav.h: valid only during the callback).
    unsafe {
        match event {
            AvEvent::Call {
                friend,
                audio,
                video,
            } => {
                if let Some(cb) = table.call.callback {
                    cb(av, *friend, *audio, *video, table.call.user_data.get());
                }
            }
            AvEvent::State { friend, state } => {
                if let Some(cb) = table.call_state.callback {
                    cb(av, *friend, state.0, table.call_state.user_data.get());
                }
            }
            AvEvent::AudioBitRate { friend, bit_rate } => {
                if let Some(cb) = table.audio_bit_rate.callback {
                    cb(av, *friend, *bit_rate, table.audio_bit_rate.user_data.get());
                }
            }
            AvEvent::VideoBitRate { friend, bit_rate } => {
                if let Some(cb) = table.video_bit_rate.callback {
                    cb(av, *friend, *bit_rate, table.video_bit_rate.user_data.get());
                }
            }
            AvEvent::AudioFrame {
                friend,
                pcm,
                channels,
                sampling_rate,
            } => {
                let Some(cb) = table.audio_frame.callback else {
                    return;
                };
                if *channels == 0 || pcm.is_empty() {
                    return;
                }
                let samples = pcm.len() / usize::from(*channels);
                cb(
                    av,
                    *friend,
                    pcm.as_ptr(),
                    samples,
                    *channels,
                    *sampling_rate,
                    table.audio_frame.user_data.get(),
                );
            }
            AvEvent::VideoFrame {
                friend,
                width,
                height,
                y,
                u,
                v,
            } => {
                let Some(cb) = table.video_frame.callback else {
                    return;
                };
                let Some(strides) = video_strides(*width, *height, y.len(), u.len(), v.len())
                else {
                    return;
                };
                cb(
                    av,
                    *friend,
                    *width,
                    *height,
                    y.as_ptr(),
                    u.as_ptr(),
                    v.as_ptr(),
                    strides.0,
                    strides.1,
                    strides.1,
                    table.video_frame.user_data.get(),
                );
            }
        }
    }
}

/// The strides of a tightly packed I420 picture (Y: `width`; U and V: `width / 2`
/// rounded up), if the planes are long enough for them; `None` otherwise (a picture the
/// client would read past).
pub fn video_strides(width: u16, height: u16, y: usize, u: usize, v: usize) -> Option<(i32, i32)> {
    let (w, h) = (usize::from(width), usize::from(height));
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    if w == 0 || h == 0 || y < w * h || u < cw * ch || v < cw * ch {
        return None;
    }
    Some((i32::from(width), i32::try_from(cw).ok()?))
}

/// Hands the signalling events the node produced in this `tox_iterate` to the session's
/// callbacks (toxav.c's MSI and bandwidth callbacks run inside `tox_iterate`).
///
/// # Safety
/// Called from `tox_iterate` with no lock held.
pub unsafe fn fire_signals(instance: &Instance) {
    let (link, events) = {
        let mut state = instance.lock();
        let Some(link) = state.av.link() else {
            return;
        };
        (link, state.av.take(|c| c == EventClass::Signal))
    };
    for event in &events {
        if instance.kill_requested() {
            break;
        }
        // SAFETY: no lock is held; the caller's contract.
        unsafe { deliver(&link, event) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_need_whole_planes() {
        assert_eq!(video_strides(4, 2, 8, 2, 2), Some((4, 2)));
        assert_eq!(video_strides(5, 3, 15, 6, 6), Some((5, 3)));
        assert_eq!(video_strides(5, 3, 15, 5, 6), None);
        assert_eq!(video_strides(0, 3, 15, 6, 6), None);
        assert_eq!(video_strides(4, 2, 7, 2, 2), None);
    }
}
