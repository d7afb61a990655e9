//! The C boundary's guards: no panic crosses it, error out-parameters are set only when the
//! caller passed one, and a (pointer, length) pair from C becomes a slice only after it is
//! checked.
//!
//! A panic inside the library is a bug; at the boundary it becomes the function's error
//! value (what tox.h documents for failure: `false`, `UINT32_MAX`, NULL, 0), never an abort
//! of the client and never unwinding into C (which is undefined behaviour).

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`; a panic in it yields `on_panic` instead.
pub fn call<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    // The state a panicking call leaves behind is guarded by mutexes that recover from
    // poisoning (handle/mod.rs); what the panic interrupted is lost, the instance goes on.
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(on_panic)
}

/// Writes `value` to the caller's error out-parameter, if it gave one.
///
/// Safe to call: every caller is an entry point passing on the pointer C gave it, whose
/// validity is tox.h's contract with the client (a non-NULL error pointer is writable).
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn set<E: Copy>(error: *mut E, value: E) {
    if !error.is_null() {
        // SAFETY: tox.h: a non-NULL error pointer points to a writable enum of its type.
        unsafe { error.write(value) };
    }
}

/// Writes `value` to an error out-parameter and returns `result`: the usual tail of an
/// entry point.
pub fn fail<E: Copy, T>(error: *mut E, value: E, result: T) -> T {
    set(error, value);
    result
}

/// The `length` bytes at `data`, or `None` when `data` is NULL with a nonzero length. A
/// NULL pointer with length 0 is the empty slice (c-toxcore accepts it for empty names).
///
/// # Safety
/// A non-NULL `data` must point to `length` readable bytes that live for `'a`.
pub unsafe fn bytes<'a>(data: *const u8, length: usize) -> Option<&'a [u8]> {
    if data.is_null() {
        return (length == 0).then_some(&[][..]);
    }
    // Longer than any object can be (`slice::from_raw_parts` requires ≤ isize::MAX).
    if length > isize::MAX as usize {
        return None;
    }
    // SAFETY: the caller's contract, checked for NULL and size above.
    Some(unsafe { std::slice::from_raw_parts(data, length) })
}

/// The `N` bytes at `data` (a key, an address, a hash), or `None` when NULL.
///
/// # Safety
/// A non-NULL `data` must point to `N` readable bytes.
pub unsafe fn array<const N: usize>(data: *const u8) -> Option<[u8; N]> {
    if data.is_null() {
        return None;
    }
    let mut out = [0u8; N];
    // SAFETY: the caller's contract; `out` is N bytes and does not overlap C's memory.
    unsafe { std::ptr::copy_nonoverlapping(data, out.as_mut_ptr(), N) };
    Some(out)
}

/// Copies `src` to the caller's buffer `dst`, which tox.h says is large enough (its size
/// was asked for with the matching `_size` function). Nothing is written when `dst` is NULL.
///
/// # Safety
/// A non-NULL `dst` must point to at least `src.len()` writable bytes.
pub unsafe fn copy_out(src: &[u8], dst: *mut u8) -> bool {
    if dst.is_null() {
        return false;
    }
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
    true
}

/// [`call`] for a body that returns its own failure value: `failed` is handed to the body
/// and also returned on a panic.
pub fn call_with<T: Clone>(failed: T, body: impl FnOnce(T) -> T) -> T {
    let on_panic = failed.clone();
    call(on_panic, || body(failed))
}

/// Frees what C got from `Box::into_raw` (`tox_events_free`, `tox_dispatch_free`,
/// `toxav_kill`...); NULL is ignored, as C's `free` ignores it.
///
/// # Safety
/// A non-NULL `ptr` comes from `Box::into_raw` of a `Box<T>` and is freed once.
pub unsafe fn free<T>(ptr: *mut T) {
    call((), || {
        if !ptr.is_null() {
            // SAFETY: the caller's contract.
            drop(unsafe { Box::from_raw(ptr) });
        }
    })
}
