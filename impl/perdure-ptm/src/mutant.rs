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
//! the crash explorer on a scenario of `perdure_harness::ptm::scenarios`, and expects a
//! violation; `MUTANTS.md` records which check catches which mutant and the
//! counterexample.
//!
//! The switch is process-global: tests that use it must run one at a time
//! ([`lock`]). With no mutant switched on ([`set`]`(None)`, the initial
//! state) the code behaves exactly as without the feature.

perdure_pm::declare_mutants! {
    /// Redo-PTM, Algorithm 3 L30–L37: the winner of the `cur_comb` CAS
    /// returns without `pwb(cur_comb)` + `psync` (it still raises the
    /// durability watermark, as if it had synced).
    RedoNoSyncAfterCas = 1 => "redo-no-sync-after-cas",
    /// Redo-PTM, Algorithm 3 L26 (`flushDeferredPWBs`): the replica's dirty
    /// lines are written back after the `cur_comb` CAS instead of before it.
    RedoFlushAfterCas = 2 => "redo-flush-after-cas",
    /// Redo-PTM, Algorithm 3 L38: a failed (or doomed) attempt keeps its
    /// simulated stores — no undo log applied — and the replica's `head` is
    /// still set back to `tail`.
    RedoNoUndoOnFailedCas = 3 => "redo-no-undo-on-failed-cas",
    /// Redo-PTM, Algorithm 3 L19 (`applyRedologs`): the redo logs after the
    /// replica's head are applied without checking that each state is still
    /// the one the ring names (not reused, not overflowed, not lapped).
    RedoReplayWithoutValidity = 4 => "redo-replay-without-validity",
    /// Redo-PTM, Algorithm 3 L31: the superseded replica is released right
    /// after the CAS, as in the seed's pseudo-code, before `pwb(cur_comb)` +
    /// `psync` (the open item of `redo/mod.rs`).
    RedoReleaseBeforeSync = 5 => "redo-release-before-sync",
    /// Redo-PTM, Algorithm 2 L13–L16: a read-only transaction returns
    /// without making the state it read durable.
    RedoReadWithoutSync = 6 => "redo-read-without-sync",
    /// Redo-PTM: no `pfence` between the replica's write-backs and the
    /// `cur_comb` CAS (on a backend whose CAS does not complete them).
    RedoNoFenceBeforeCas = 7 => "redo-no-fence-before-cas",
    /// CX-PTM / CX-PUC, §4: the winner of the `cur_comb` CAS returns without
    /// `pwb(cur_comb)` + `psync` (watermark raised as if it had synced).
    CxNoSyncAfterCas = 8 => "cx-no-sync-after-cas",
    /// CX-PTM / CX-PUC, §4: the replica is written back after the CAS that
    /// designates it (the whole used range, after the CAS, before
    /// `pwb(cur_comb)`), instead of before.
    CxFlushAfterCas = 9 => "cx-flush-after-cas",
    /// CX-PTM / CX-PUC: the superseded replica is released before
    /// `pwb(cur_comb)` + `psync`.
    CxReleaseBeforeSync = 10 => "cx-release-before-sync",
    /// CX-PTM / CX-PUC: no `pfence` between the replica's write-backs and
    /// the `cur_comb` CAS.
    CxNoFenceBeforeCas = 11 => "cx-no-fence-before-cas",
    /// RedoTimed-PTM / RedoOpt-PTM, step {5} after the window closed: the
    /// replica the fallback locks outside the window (`combs[2..]`) is
    /// taken as up to date — its `head` set to the designated replica's —
    /// so step {6} neither replays nor copies it, and nothing checks that it
    /// holds that state.
    RedoTimedFallbackWithoutCopy = 12 => "redo-timed-fallback-without-copy",
    /// RedoOpt-PTM, flush aggregation by cache line: the line set's O(1)
    /// reset (a new generation) is skipped when a replica's lines are
    /// written back, so a line that a later commit on the same replica
    /// stores again is taken as already tracked and is not written back
    /// before that commit's `cur_comb` CAS (a line stored twice, flushed
    /// once too few).
    RedoOptLineSetNotReset = 13 => "redo-opt-line-set-not-reset",
    /// RedoOpt-PTM, the full-flush switch: the complete flush drops the
    /// lines tracked so far (the switch promised to cover them) and writes
    /// back `used / 8` bytes of the replica — the used part's length taken
    /// in words for bytes — instead of the whole used part.
    RedoOptFullFlushShort = 14 => "redo-opt-full-flush-short",
}
