//! Exact heap accounting for the scale simulation: a global allocator that counts the bytes
//! it has handed out and not yet taken back.
//!
//! Resident-set figures blur what a node holds with allocator slack and everything else in
//! the process; this counts the bytes of live allocations only, so dropping one node and
//! reading the count before and after gives exactly the heap that node held. A binary or
//! test opts in with
//!
//! ```ignore
//! #[global_allocator]
//! static HEAP: rustox_auto_tests::heap_meter::CountingAlloc = rustox_auto_tests::heap_meter::CountingAlloc;
//! ```
//!
//! and [`installed`] tells the scenario whether the figures mean anything.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static LIVE: AtomicU64 = AtomicU64::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting live bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAlloc;

// SAFETY: every call is forwarded unchanged to `System`; the counter is only arithmetic.
// A global allocator can only be written with `unsafe` (the workspace denies it elsewhere
// outside ffi; this is test instrumentation, never in a shipped crate).
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
            note_alloc(new_size);
        }
        p
    }
}

fn note_alloc(size: usize) {
    LIVE.fetch_add(size as u64, Ordering::Relaxed);
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
}

/// Whether [`CountingAlloc`] is this process's allocator (it has seen an allocation).
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Bytes allocated and not yet freed, if [`CountingAlloc`] is installed.
pub fn live_bytes() -> Option<u64> {
    installed().then(|| LIVE.load(Ordering::Relaxed))
}
