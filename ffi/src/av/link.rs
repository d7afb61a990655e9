//! What a session shares with the Tox's state, and nothing that needs that state: the
//! session's type, its link (alive flag, callback table, address), toxav.h's callback types
//! and the client's userdata. The Tox's state (handle/, through hub.rs) holds a link; the
//! session's functions (session.rs, callbacks.rs) reach the state through the Tox's pointer.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// `ToxAV` (toxav.h): an A/V session, opaque to C.
pub struct ToxAV {
    /// Its `Tox *`, untyped: nothing here needs the Tox's state (session.rs casts it back).
    pub(crate) tox: *mut c_void,
    pub(crate) link: Arc<AvLink>,
}

/// What a session shares with its Tox's state: whether the Tox is still alive, the
/// session's callbacks, and its address (the first argument of every callback).
#[derive(Default)]
pub struct AvLink {
    /// False once `tox_kill` began: the Tox must not be reached any more.
    alive: Mutex<bool>,
    callbacks: Mutex<AvCallbacks>,
    pub(crate) av: AtomicUsize,
}

impl AvLink {
    /// A link to a live Tox.
    pub fn new() -> Self {
        Self {
            alive: Mutex::new(true),
            ..Self::default()
        }
    }

    pub(crate) fn alive(&self) -> MutexGuard<'_, bool> {
        self.alive.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `tox_kill` began: from now on the session's functions do not reach the Tox. Waits
    /// for an entry point that is checking the flag to have entered the Tox, which
    /// `tox_kill` then waits for.
    pub fn tox_killed(&self) {
        *self.alive() = false;
    }

    /// The session's callbacks, locked.
    pub fn callbacks(&self) -> MutexGuard<'_, AvCallbacks> {
        self.callbacks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session, as its callbacks receive it.
    pub fn av(&self) -> *mut ToxAV {
        self.av.load(Ordering::SeqCst) as *mut ToxAV
    }
}

/// The session behind a pointer from C (NULL: none).
///
/// # Safety
/// A non-NULL `av` comes from `toxav_new` and was not killed.
pub unsafe fn session<'a>(av: *const ToxAV) -> Option<&'a ToxAV> {
    // SAFETY: the caller's contract.
    unsafe { av.as_ref() }
}

impl ToxAV {
    /// The link the session shares with its Tox.
    pub fn link(&self) -> &Arc<AvLink> {
        &self.link
    }
}

/// A pointer the client gave with a callback, handed back to it untouched. Kept as an
/// address so that the state stays `Send` (the client owns what it points to).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UserData(pub usize);

impl UserData {
    /// The client's pointer.
    pub fn get(self) -> *mut c_void {
        self.0 as *mut c_void
    }

    /// Keeps `ptr`.
    pub fn of(ptr: *mut c_void) -> Self {
        Self(ptr as usize)
    }
}

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
/// One registered callback with its userdata.
#[derive(Debug, Clone, Copy)]
pub struct Registered<F> {
    pub(crate) callback: Option<F>,
    pub(crate) user_data: UserData,
}

impl<F> Default for Registered<F> {
    fn default() -> Self {
        Self {
            callback: None,
            user_data: UserData::default(),
        }
    }
}

/// A session's callbacks (toxav.c's `ccb`, `scb`, `abcb`, `vbcb`, `acb`, `vcb`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AvCallbacks {
    pub(crate) call: Registered<toxav_call_cb>,
    pub(crate) call_state: Registered<toxav_call_state_cb>,
    pub(crate) audio_bit_rate: Registered<toxav_audio_bit_rate_cb>,
    pub(crate) video_bit_rate: Registered<toxav_video_bit_rate_cb>,
    pub(crate) audio_frame: Registered<toxav_audio_receive_frame_cb>,
    pub(crate) video_frame: Registered<toxav_video_receive_frame_cb>,
}
