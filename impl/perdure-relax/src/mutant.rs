//! Mutants of the seed's steps, and pause points for deterministic
//! schedules, for checking the checks (feature `mutants`; never in a normal
//! build).
//!
//! Each [`Mutant`] removes one step the seed says is needed, or puts back a
//! step of the seed *as written* that a model check found wrong
//! (`specs/relax/README.md`, Findings M1, R1, R2; M2 in `src/patomic.rs`).
//! [`MIRROR`] are the mutants of Mirror and RELAX themselves
//! (`tests/mutants_relax.rs`); [`SETS`] break a step of the skip
//! list or the BST (`tests/shuttle_sets.rs`); [`EQUIVALENT`] change
//! the code without changing what the checks can see; [`TSO`] are wrong
//! under x86-TSO only (`tests/shuttle_tso_mutants_relax.rs`). The algorithm asks
//! `mutant!(Name)` at that step (a constant `false` without the feature)
//! whether to take the mutated path. The switch is process-global: tests that
//! use it hold [`lock`]. With no mutant switched on the code behaves exactly
//! as without the feature.
//!
//! A [`Point`] is a place between two steps of Algorithm 4.1 or 6.2 where
//! the algorithm calls `pause!(Name)` (nothing without the feature). A test
//! installs a hook for one thread with [`set_hook`]; the hook runs on that
//! thread at every point it passes, and may block it there (on a channel)
//! while the test runs other threads' steps: a schedule forced step by step,
//! as the counterexamples of the TLA+ models are written. Threads without a
//! hook pass the points at the cost of one relaxed load.

pub use perdure_pm::hooks::mutants::{active, lock, set, Mutant};
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The mutants of Mirror and RELAX themselves, each caught by
/// `tests/mutants_relax.rs` with its own deterministic schedules.
pub const MIRROR: [Mutant; 9] = [
    Mutant::NoFlushBeforeDram,
    Mutant::NoSeqWindow,
    Mutant::NoRecoveryMark,
    Mutant::UnmarkWithoutRecover,
    Mutant::Line47AsWritten,
    Mutant::RecoverNoFlush,
    Mutant::RecoverNoReread,
    Mutant::Line44Once,
    Mutant::TrackBeforeRecover,
];
/// The mutants of the skip list and the BST, each caught by
/// `tests/shuttle_sets.rs` (not in [`MIRROR`], which
/// `tests/mutants_relax.rs` checks with its own deterministic schedules).
pub const SETS: [Mutant; 4] = [
    Mutant::SkipLinkUpperFirst,
    Mutant::SkipRemoveNoMark,
    Mutant::BstCleanupNoTag,
    Mutant::BstInsertNoHelp,
];
/// Mutants that change the code but, as far as the checks here can
/// tell, not its histories (equivalent mutants, kept as evidence for a
/// claim of the docs; `tests/shuttle_sets.rs` runs them and expects no
/// violation).
pub const EQUIVALENT: [Mutant; 1] = [Mutant::BstFlaggedLeafPresent];
/// The TSO-only mutants: correct under sequential consistency, caught only
/// with store buffers (`tests/shuttle_tso_mutants_relax.rs`, shuttle build).
pub const TSO: [Mutant; 1] = [Mutant::SpacePinNoFence];

/// A place between two steps where a test may pause a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
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
}

/// The hook of the calling thread.
type Hook = Box<dyn FnMut(Point)>;

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
