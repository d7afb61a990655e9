//! The `Tox` instance behind the C API's opaque `Tox *`.

use std::sync::Mutex;

use crate::event::Event;

/// One Tox instance: a node, its socket and the client's callbacks (opaque to C).
pub struct Tox {
    _state: Mutex<()>,
}

impl Tox {
    /// Runs one step of the node and returns what it produced, in order.
    pub fn iterate_events(&self) -> Vec<Event> {
        Vec::new()
    }
}

/// The instance behind a pointer from C, or `None` for NULL.
///
/// # Safety
/// A non-NULL `tox` must come from `tox_new` and not have been passed to `tox_kill`.
pub unsafe fn tox_ref<'a>(tox: *const Tox) -> Option<&'a Tox> {
    // SAFETY: the caller's contract.
    unsafe { tox.as_ref() }
}
