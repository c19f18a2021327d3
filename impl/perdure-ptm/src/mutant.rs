//! Mutants of the seed's constructions, for checking the checks (feature
//! `mutants`; never in a normal build).
//!
//! Each [`Mutant`] removes or reorders one step that the seed's correctness
//! argument (§4 "Adding persistence to CX", §5 Algorithms 2–3, and §5's
//! "Timed variant" and "Additional optimizations" for RedoTimed-PTM and
//! RedoOpt-PTM) relies on. A
//! hook at that step (`mutant!(Name)` in the construction's code, a
//! constant `false` without the feature) asks [`active`] whether to take the
//! mutated path. `tests/shuttle_mutants_ptm.rs` switches each mutant on, runs
//! the crash explorer on a scenario of [`crate::scenarios`], and expects a
//! violation; `MUTANTS.md` records which check catches which mutant and the
//! counterexample.
//!
//! The switch is process-global: tests that use it must run one at a time
//! ([`lock`]). With no mutant switched on ([`set`]`(None)`, the initial
//! state) the code behaves exactly as without the feature.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

/// One mutation of a seed step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Mutant {
    /// Redo-PTM, Algorithm 3 L30–L37: the winner of the `cur_comb` CAS
    /// returns without `pwb(cur_comb)` + `psync` (it still raises the
    /// durability watermark, as if it had synced).
    RedoNoSyncAfterCas = 1,
    /// Redo-PTM, Algorithm 3 L26 (`flushDeferredPWBs`): the replica's dirty
    /// lines are written back after the `cur_comb` CAS instead of before it.
    RedoFlushAfterCas = 2,
    /// Redo-PTM, Algorithm 3 L38: a failed (or doomed) attempt keeps its
    /// simulated stores — no undo log applied — and the replica's `head` is
    /// still set back to `tail`.
    RedoNoUndoOnFailedCas = 3,
    /// Redo-PTM, Algorithm 3 L19 (`applyRedologs`): the redo logs after the
    /// replica's head are applied without checking that each state is still
    /// the one the ring names (not reused, not overflowed, not lapped).
    RedoReplayWithoutValidity = 4,
    /// Redo-PTM, Algorithm 3 L31: the superseded replica is released right
    /// after the CAS, as in the seed's pseudo-code, before `pwb(cur_comb)` +
    /// `psync` (the open item of `redo/mod.rs`).
    RedoReleaseBeforeSync = 5,
    /// Redo-PTM, Algorithm 2 L13–L16: a read-only transaction returns
    /// without making the state it read durable.
    RedoReadWithoutSync = 6,
    /// Redo-PTM: no `pfence` between the replica's write-backs and the
    /// `cur_comb` CAS (on a backend whose CAS does not complete them).
    RedoNoFenceBeforeCas = 7,
    /// CX-PTM / CX-PUC, §4: the winner of the `cur_comb` CAS returns without
    /// `pwb(cur_comb)` + `psync` (watermark raised as if it had synced).
    CxNoSyncAfterCas = 8,
    /// CX-PTM / CX-PUC, §4: the replica is written back after the CAS that
    /// designates it (the whole used range, after the CAS, before
    /// `pwb(cur_comb)`), instead of before.
    CxFlushAfterCas = 9,
    /// CX-PTM / CX-PUC: the superseded replica is released before
    /// `pwb(cur_comb)` + `psync`.
    CxReleaseBeforeSync = 10,
    /// CX-PTM / CX-PUC: no `pfence` between the replica's write-backs and
    /// the `cur_comb` CAS.
    CxNoFenceBeforeCas = 11,
    /// RedoTimed-PTM / RedoOpt-PTM, step {5} after the window closed: the
    /// replica the fallback locks outside the window (`combs[2..]`) is
    /// taken as up to date — its `head` set to the designated replica's —
    /// so step {6} neither replays nor copies it, and nothing checks that it
    /// holds that state.
    RedoTimedFallbackWithoutCopy = 12,
    /// RedoOpt-PTM, flush aggregation by cache line: the line set's O(1)
    /// reset (a new generation) is skipped when a replica's lines are
    /// written back, so a line that a later commit on the same replica
    /// stores again is taken as already tracked and is not written back
    /// before that commit's `cur_comb` CAS (a line stored twice, flushed
    /// once too few).
    RedoOptLineSetNotReset = 13,
    /// RedoOpt-PTM, the full-flush switch: the complete flush drops the
    /// lines tracked so far (the switch promised to cover them) and writes
    /// back `used / 8` bytes of the replica — the used part's length taken
    /// in words for bytes — instead of the whole used part.
    RedoOptFullFlushShort = 14,
}

impl Mutant {
    /// Every mutant.
    pub const ALL: [Mutant; 14] = [
        Mutant::RedoNoSyncAfterCas,
        Mutant::RedoFlushAfterCas,
        Mutant::RedoNoUndoOnFailedCas,
        Mutant::RedoReplayWithoutValidity,
        Mutant::RedoReleaseBeforeSync,
        Mutant::RedoReadWithoutSync,
        Mutant::RedoNoFenceBeforeCas,
        Mutant::CxNoSyncAfterCas,
        Mutant::CxFlushAfterCas,
        Mutant::CxReleaseBeforeSync,
        Mutant::CxNoFenceBeforeCas,
        Mutant::RedoTimedFallbackWithoutCopy,
        Mutant::RedoOptLineSetNotReset,
        Mutant::RedoOptFullFlushShort,
    ];

    /// Short name (`mutant:ptm/<name>` in reports).
    pub fn name(self) -> &'static str {
        match self {
            Mutant::RedoNoSyncAfterCas => "redo-no-sync-after-cas",
            Mutant::RedoFlushAfterCas => "redo-flush-after-cas",
            Mutant::RedoNoUndoOnFailedCas => "redo-no-undo-on-failed-cas",
            Mutant::RedoReplayWithoutValidity => "redo-replay-without-validity",
            Mutant::RedoReleaseBeforeSync => "redo-release-before-sync",
            Mutant::RedoReadWithoutSync => "redo-read-without-sync",
            Mutant::RedoNoFenceBeforeCas => "redo-no-fence-before-cas",
            Mutant::CxNoSyncAfterCas => "cx-no-sync-after-cas",
            Mutant::CxFlushAfterCas => "cx-flush-after-cas",
            Mutant::CxReleaseBeforeSync => "cx-release-before-sync",
            Mutant::CxNoFenceBeforeCas => "cx-no-fence-before-cas",
            Mutant::RedoTimedFallbackWithoutCopy => "redo-timed-fallback-without-copy",
            Mutant::RedoOptLineSetNotReset => "redo-opt-line-set-not-reset",
            Mutant::RedoOptFullFlushShort => "redo-opt-full-flush-short",
        }
    }
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);
static LOCK: Mutex<()> = Mutex::new(());

/// Switches mutant `m` on (`None`: all off).
pub fn set(m: Option<Mutant>) {
    ACTIVE.store(m.map_or(0, |m| m as u8), Ordering::SeqCst);
}

/// Whether mutant `m` is switched on.
#[inline]
pub fn active(m: Mutant) -> bool {
    ACTIVE.load(Ordering::Relaxed) == m as u8
}

/// Serialises the users of the process-global switch: hold the guard while
/// a mutant is on (and while checking the unmutated code).
pub fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
