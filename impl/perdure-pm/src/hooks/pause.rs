//! Pause points: places between two steps of a construction's algorithm
//! where a test may hold a thread, to force a schedule step by step (as the
//! counterexamples of the TLA+ models are written) with real threads.
//!
//! The algorithm calls [`pause!(Name)`](crate::pause) at the place (nothing
//! unless the expanding crate is built with its feature `mutants`). A test
//! installs a hook for one thread with [`set_hook`]; the hook runs on that
//! thread at every [`Point`] it passes, and may block it there (on a
//! channel) while the test runs other threads' steps. Threads without a
//! hook pass the points at the cost of one relaxed load.
//!
//! The hook table is `std` state, not the [`crate::sync`] facade: test
//! instrumentation, not part of any protocol the models explore.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A place between two steps where a test may pause a thread, by
/// construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    // RELAX (seed 002), `perdure_relax::mutant` and `tests/mutants_relax.rs`.
    /// Algorithm 4.1: the field's pairs were read and checked (L5–L33);
    /// next is L40's DWCAS on NVMM.
    CasBeforeNvmmDwcas,
    /// Algorithm 4.1: L40's DWCAS on NVMM succeeded; next is L41's
    /// write-back (nothing of the new pair is durable yet).
    CasAfterNvmmDwcas,
    /// Algorithm 6.2/6.3: line 1 read the DRAM pair; next is line 2.
    RecoverAfterLine1,
    /// Algorithm 6.2/6.3: lines 2–4.2 are done (line 4.1's CAS, if any,
    /// succeeded); next is the write-back of Finding R1, then line 5.
    RecoverBeforeLine5,
    /// Tracking (BitsetAtomic for a field, HybridAtomicPointer for a node)
    /// found the field or node unrecovered; next is its recovery
    /// (`recover_field` / `recover_node`).
    TrackBeforeRecover,
    /// The skip list's `find` has its window at level 1; next is level 0
    /// (an upper level's successor can be a node whose level 0 a remover
    /// marks meanwhile).
    SkipFindBeforeLevel0,
    // Memento (seed 001), `perdure_memento::mutant` and its tests.
    /// CombQ-mmt: a waiting thread read the published state and found its
    /// request unserved; next is its CAS on the combiner's lock (another
    /// combiner can serve the request and release the lock in between).
    CombBeforeLock,
}

/// The hook of the calling thread.
pub type Hook = Box<dyn FnMut(Point)>;

thread_local! {
    static HOOK: RefCell<Option<Hook>> = const { RefCell::new(None) };
}
/// How many threads have a hook installed (the fast path's test).
static HOOKED: AtomicUsize = AtomicUsize::new(0);

/// Installs `hook` for the calling thread (`None`: removes it). It is
/// called at every [`Point`] the thread passes, until removed.
pub fn set_hook(hook: Option<Hook>) {
    HOOK.with(|h| {
        let mut h = h.borrow_mut();
        match (h.is_some(), hook.is_some()) {
            (false, true) => {
                HOOKED.fetch_add(1, Ordering::SeqCst);
            }
            (true, false) => {
                HOOKED.fetch_sub(1, Ordering::SeqCst);
            }
            _ => {}
        }
        *h = hook;
    });
}

/// The calling thread passes point `p`: runs its hook, if any. The hook is
/// taken out while it runs, so a hook that runs the algorithm itself does
/// not re-enter.
pub fn at(p: Point) {
    if HOOKED.load(Ordering::Relaxed) == 0 {
        return;
    }
    let Some(mut hook) = HOOK.with(|h| h.borrow_mut().take()) else {
        return;
    };
    hook(p);
    HOOK.with(|h| {
        let mut h = h.borrow_mut();
        if h.is_none() {
            *h = Some(hook);
        }
    });
}
