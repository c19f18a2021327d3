//! A global allocator that counts, per thread, the heap bytes allocated and
//! not yet freed, so that a test can see what a drop gives back (a leak is
//! invisible to every crash check). A test binary installs it with
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: perdure_harness::heapcount::Counting = perdure_harness::heapcount::Counting;
//! ```
//!
//! and reads [`live_bytes`] before and after (or counts the frees of one
//! block size with [`watch_frees`]); the count is the calling
//! thread's, so tests running in parallel do not disturb each other.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards every call to the system allocator and counts the bytes.
#[derive(Debug)]
pub struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    /// The block size [`watch_frees`] watches (0: none) and how many blocks
    /// of that size this thread freed since.
    static WATCH: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counter is a const-initialised thread-local that never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LIVE.try_with(|c| c.set(c.get() + layout.size() as isize));
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = LIVE.try_with(|c| c.set(c.get() - layout.size() as isize));
        let _ = WATCH.try_with(|c| {
            let (size, n) = c.get();
            if size == layout.size() {
                c.set((size, n + 1));
            }
        });
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = LIVE.try_with(|c| c.set(c.get() + new_size as isize - layout.size() as isize));
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The bytes this thread allocated and has not freed since it started (a
/// block freed by another thread counts there), when [`Counting`] is the
/// global allocator; 0 otherwise.
pub fn live_bytes() -> isize {
    LIVE.with(|c| c.get())
}

/// Starts counting the blocks of exactly `size` bytes this thread frees
/// (from 0), when [`Counting`] is the global allocator: a free that
/// allocations in between would hide from [`live_bytes`] still shows.
pub fn watch_frees(size: usize) {
    WATCH.with(|c| c.set((size, 0)));
}

/// The blocks of the watched size this thread freed since [`watch_frees`].
pub fn watched_frees() -> usize {
    WATCH.with(|c| c.get().1)
}
