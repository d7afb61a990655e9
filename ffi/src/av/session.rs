//! The session (`ToxAV`): `toxav_new`, `toxav_kill`, `toxav_get_tox`, and how every
//! other entry point reaches the Tox's state.
//!
//! A session keeps its Tox's pointer and a shared [`AvLink`] which the Tox's state also
//! holds (hub.rs). toxav.h asks clients to kill the session before its Tox; should a
//! client kill the Tox first, `tox_kill` marks the link dead before it frees anything
//! ([`AvLink::tox_killed`]), and the session's functions then fail as for an unknown
//! friend instead of reaching freed memory.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rustox_core::av::codec::SystemCodecs;

pub use super::link::{session, AvLink, ToxAV};
use crate::guard;
use crate::handle::{tox_ref, State, Tox};
use crate::types::Toxav_Err_New;

/// Runs `body` on the state of the session's Tox, locked; `None` for a NULL session or a
/// killed Tox.
///
/// # Safety
/// A non-NULL `av` comes from `toxav_new` and was not killed.
pub unsafe fn with_state<T>(av: *const ToxAV, body: impl FnOnce(&mut State) -> T) -> Option<T> {
    // SAFETY: the caller's contract.
    let av = unsafe { session(av) }?;
    let entered = {
        let alive = av.link.alive();
        if !*alive {
            return None;
        }
        // SAFETY: the Tox is alive: `tox_kill` marks the link (under this lock) before it
        // waits for the calls it has counted in and frees the instance.
        unsafe { tox_ref(av.tox.cast()) }?
    };
    let mut state = entered.lock();
    Some(body(&mut state))
}

/// `toxav_new`: turns calls on for `tox` (libopus and libvpx as codecs). NULL with
/// `TOXAV_ERR_NEW_NULL` for a NULL (or killed) `tox`, `TOXAV_ERR_NEW_MULTIPLE` when the Tox
/// already has a session (toxav.c checks Messenger's `msi_packet`).
#[no_mangle]
pub unsafe extern "C" fn toxav_new(tox: *mut Tox, error: *mut Toxav_Err_New) -> *mut ToxAV {
    let null = std::ptr::null_mut();
    guard::call(null, || {
        // SAFETY: tox.h's contract for `tox`.
        let Some(instance) = (unsafe { tox_ref(tox) }) else {
            return guard::fail(error, Toxav_Err_New::NULL, null);
        };
        let mut state = instance.lock();
        if !state.node.enable_av(Box::new(SystemCodecs)) {
            return guard::fail(error, Toxav_Err_New::MULTIPLE, null);
        }
        let link = Arc::new(AvLink::new());
        state.av.attach(link.clone());
        let av = Box::into_raw(Box::new(ToxAV {
            tox: tox.cast(),
            link: link.clone(),
        }));
        link.av.store(av as usize, Ordering::SeqCst);
        guard::set(error, Toxav_Err_New::OK);
        av
    })
}

/// `toxav_kill`: hangs up every call (msi.c's `msi_kill` ends each one towards the peer),
/// turns calls off and frees the session. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn toxav_kill(av: *mut ToxAV) {
    guard::call((), || {
        if av.is_null() {
            return;
        }
        // SAFETY: toxav.h: a non-NULL session came from `toxav_new` and is killed once.
        let session = unsafe { Box::from_raw(av) };
        // SAFETY: the session is alive until dropped below.
        unsafe {
            with_state(&*session, |state| {
                let now = state.now();
                state.av.detach(&session.link);
                state.node.disable_av(now);
                state.flush();
            })
        };
        drop(session);
    })
}

/// `toxav_get_tox`: the Tox the session was created with (NULL for a NULL session).
#[no_mangle]
pub unsafe extern "C" fn toxav_get_tox(av: *const ToxAV) -> *mut Tox {
    guard::call(std::ptr::null_mut(), || {
        // SAFETY: toxav.h's contract for `av`.
        unsafe { session(av) }.map_or(std::ptr::null_mut(), |av| av.tox.cast())
    })
}
