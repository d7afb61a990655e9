//! Sending frames: `toxav_audio_send_frame` and `toxav_video_send_frame`.
//!
//! The client's buffers are read only as far as toxav.h says they reach, and only once
//! their sizes are known sane: an audio frame of at most [`MAX_AUDIO_SAMPLES`] samples per
//! channel and 1 or 2 channels; a picture's Y plane `width × height`, its U and V planes
//! `(width / 2) × (height / 2)` (what toxav.c copies into libvpx's image).

use rustox_core::av::codec::YuvFrame;
use rustox_core::node::FriendNumber;

use super::calls::friend_exists;
use super::errors::send_frame_code;
use super::session::{with_state, ToxAV};
use crate::guard;
use crate::types::Toxav_Err_Send_Frame;

/// The longest audio frame, in samples per channel: Opus frames last at most 120 ms
/// (RFC 6716 section 2.1.4), 5760 samples at 48 kHz. A longer one is `INVALID`, as
/// libopus refuses it in toxav.c.
pub const MAX_AUDIO_SAMPLES: usize = 5760;

/// `toxav_audio_send_frame`: encodes `sample_count` samples per channel of interleaved
/// `pcm` and sends them. Checks the friend, the call, whether audio is sent, then NULL
/// `pcm`, then the frame (toxav.c's order).
#[no_mangle]
pub unsafe extern "C" fn toxav_audio_send_frame(
    av: *mut ToxAV,
    friend_number: u32,
    pcm: *const i16,
    sample_count: usize,
    channels: u8,
    sampling_rate: u32,
    error: *mut Toxav_Err_Send_Frame,
) -> bool {
    guard::call(false, || {
        let null = pcm.is_null();
        let sane = !null && (1..=2).contains(&channels) && sample_count <= MAX_AUDIO_SAMPLES;
        let samples: &[i16] = if sane {
            // SAFETY: toxav.h: `pcm` holds `sample_count * channels` samples; both are
            // bounded above.
            unsafe { std::slice::from_raw_parts(pcm, sample_count * usize::from(channels)) }
        } else {
            &[]
        };
        // An insane frame reaches the engine empty, which it refuses as INVALID after its
        // call checks.
        let count = if sane { sample_count } else { 0 };
        // SAFETY: toxav.h's contract for `av`.
        let code = unsafe {
            with_state(av, |state| {
                if !friend_exists(state, friend_number) {
                    return Toxav_Err_Send_Frame::FRIEND_NOT_FOUND;
                }
                let now = state.now();
                let result =
                    state
                        .node
                        .av_command_any(now, FriendNumber(friend_number), |calls, friend| {
                            calls.send_audio_frame(
                                now,
                                friend,
                                samples,
                                count,
                                channels,
                                sampling_rate,
                            )
                        });
                state.flush();
                send_frame_code(Some(result), null)
            })
        }
        .unwrap_or(Toxav_Err_Send_Frame::FRIEND_NOT_FOUND);
        guard::fail(error, code, code == Toxav_Err_Send_Frame::OK)
    })
}

/// The `len` bytes at `plane` (NULL: none).
///
/// # Safety
/// A non-NULL `plane` points to `len` readable bytes.
unsafe fn plane<'a>(plane: *const u8, len: usize) -> Option<&'a [u8]> {
    // SAFETY: the caller's contract.
    unsafe { guard::bytes(plane, len) }.filter(|_| !plane.is_null())
}

/// `toxav_video_send_frame`: encodes a YUV 4:2:0 picture and sends it. Checks the
/// friend, the call, whether video is sent, then NULL planes, then the picture.
#[no_mangle]
pub unsafe extern "C" fn toxav_video_send_frame(
    av: *mut ToxAV,
    friend_number: u32,
    width: u16,
    height: u16,
    y: *const u8,
    u: *const u8,
    v: *const u8,
    error: *mut Toxav_Err_Send_Frame,
) -> bool {
    guard::call(false, || {
        let (w, h) = (usize::from(width), usize::from(height));
        let chroma = (w / 2) * (h / 2);
        // SAFETY (each): toxav.h: Y holds width × height bytes, U and V (width / 2) ×
        // (height / 2).
        let planes = unsafe { (plane(y, w * h), plane(u, chroma), plane(v, chroma)) };
        let null = planes.0.is_none() || planes.1.is_none() || planes.2.is_none();
        // Odd sizes: the engine's chroma planes are rounded up; the row and column toxav.c
        // leaves out of its copy stay black (128).
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        let pad = |p: &[u8]| -> Vec<u8> {
            let mut out = vec![128u8; cw * ch];
            for row in 0..h / 2 {
                let src = &p[row * (w / 2)..(row + 1) * (w / 2)];
                out[row * cw..row * cw + w / 2].copy_from_slice(src);
            }
            out
        };
        let odd = w % 2 == 1 || h % 2 == 1;
        let (pu, pv) = match (&planes.1, &planes.2, odd) {
            (Some(u), Some(v), true) => (Some(pad(u)), Some(pad(v))),
            _ => (None, None),
        };
        let frame = if null {
            YuvFrame {
                width: 0,
                height: 0,
                y: &[],
                u: &[],
                v: &[],
            }
        } else {
            YuvFrame {
                width,
                height,
                y: planes.0.unwrap_or(&[]),
                u: pu.as_deref().or(planes.1).unwrap_or(&[]),
                v: pv.as_deref().or(planes.2).unwrap_or(&[]),
            }
        };
        // SAFETY: toxav.h's contract for `av`.
        let code = unsafe {
            with_state(av, |state| {
                if !friend_exists(state, friend_number) {
                    return Toxav_Err_Send_Frame::FRIEND_NOT_FOUND;
                }
                let now = state.now();
                let result =
                    state
                        .node
                        .av_command_any(now, FriendNumber(friend_number), |calls, friend| {
                            calls.send_video_frame(now, friend, &frame)
                        });
                state.flush();
                send_frame_code(Some(result), null)
            })
        }
        .unwrap_or(Toxav_Err_Send_Frame::FRIEND_NOT_FOUND);
        guard::fail(error, code, code == Toxav_Err_Send_Frame::OK)
    })
}
