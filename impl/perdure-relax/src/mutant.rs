//! Mutants of the seed's steps, and pause points for deterministic
//! schedules, for checking the checks (feature `mutants`; never in a normal
//! build).
//!
//! Each [`Mutant`] removes one step the seed says is needed, or puts back a
//! step of the seed *as written* that a model check found wrong
//! (`specs/relax/README.md`, Findings M1, R1, R2; M2 in `src/patomic.rs`).
//! [`Mutant::MIRROR`] are the mutants of Mirror and RELAX themselves
//! (`tests/mutants_relax.rs`); [`Mutant::SETS`] break a step of the skip
//! list or the BST (`tests/shuttle_sets.rs`); [`Mutant::EQUIVALENT`] change
//! the code without changing what the checks can see. The algorithm asks
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

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

perdure_pm::declare_mutants! {
    /// Algorithm 4.1, L41–L42: the NVMM replica is not written back and
    /// fenced before the DRAM replica is updated.
    NoFlushBeforeDram = 1 => "mirror-no-flush-before-dram-L41",
    /// Algorithm 6.2, L4: the sequence window is not enforced (a garbage
    /// DRAM sequence may be reached again by later writes).
    NoSeqWindow = 2 => "recover-field-no-seq-window-L4",
    /// Algorithm 6.3, L4: the recovered pointer is copied without the
    /// recovery mark, so its referent is never recovered.
    NoRecoveryMark = 3 => "recover-ptr-no-mark-L4",
    /// Algorithm 6.4, L2.2: a marked pointer is unmarked without its
    /// referent being recovered.
    UnmarkWithoutRecover = 4 => "load-unmark-without-recover-L2.2",
    /// Algorithm 4.1, L46–L47 *as written* (Finding M1): after a failed NVMM
    /// DWCAS that saw another value, help with the DRAM pair read at L9–L11
    /// and return false, instead of retrying from the top.
    Line47AsWritten = 5 => "mirror-L47-as-written-M1",
    /// Algorithm 6.2 *as written* (Finding R1): no write-back and fence of
    /// the NVMM pair before line 5's DRAM DWCAS.
    RecoverNoFlush = 6 => "recover-field-no-flush-before-L5-R1",
    /// Algorithm 6.2 *as written* (Finding R2): no re-read of the DRAM pair
    /// after line 2.
    RecoverNoReread = 7 => "recover-field-no-dram-reread-after-L2-R2",
    /// Algorithm 4.1, L44 *as written* (Finding M2): one DRAM DWCAS, even
    /// when it failed only because the recovery mark was set or cleared
    /// since L9.
    Line44Once = 8 => "mirror-L44-once-M2",
    /// §6.4.1/§6.4.3 (Claim 1): BitsetAtomic marks a field recovered, and
    /// HybridAtomicPointer a node, *before* `recover_field` /
    /// `recover_node` returns instead of after.
    TrackBeforeRecover = 9 => "track-recovered-before-recover-returns",
    /// Skip list (`src/ds/skiplist.rs`), `insert`: the new node is linked
    /// at its upper levels before the bottom one (one attempt per level),
    /// and the bottom-level CAS comes last; the seed's order (Fraser;
    /// Herlihy–Shavit §14.4) links level 0 first, its linearisation point.
    SkipLinkUpperFirst = 10 => "skiplist-insert-links-upper-levels-first",
    /// Skip list, `remove`: the node is unlinked from every level by CASing
    /// its predecessors, without first marking its own `next` pointers (the
    /// mark is what makes a concurrent insert after it, or a second remover,
    /// fail).
    SkipRemoveNoMark = 11 => "skiplist-remove-unlinks-without-marking",
    /// BST (`src/ds/bst.rs`), `cleanup`: the sibling edge is not tagged
    /// before the ancestor's edge is swung to it (Natarajan–Mittal's
    /// bit-test-and-set), so an insert below the sibling edge can still
    /// succeed on the unlinked parent.
    BstCleanupNoTag = 12 => "bst-cleanup-no-tag",
    /// BST, `insert`: a flagged leaf (a pending delete) or a flagged or
    /// tagged edge met by the CAS is not helped (`cleanup`); the insert just
    /// retries. Only the deleter then finishes the delete: one that a crash
    /// cut off never does, and the insert spins forever (lock-freedom lost).
    BstInsertNoHelp = 13 => "bst-insert-no-help",
    /// BST, `insert` and `contains`: a leaf with the key counts as present
    /// even when its edge is flagged — Natarajan and Mittal's search, which
    /// does not look at the flag. Not a bug (see the module docs of
    /// `src/ds/bst.rs`): a set of histories no check here can tell apart.
    BstFlaggedLeafPresent = 14 => "bst-flagged-leaf-present",
}

impl Mutant {
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
    /// `tests/shuttle_sets.rs` (not in [`Mutant::MIRROR`], which
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
}

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
