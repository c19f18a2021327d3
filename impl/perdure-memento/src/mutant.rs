//! Mutants of the seed's algorithms, for checking the checks (feature
//! `mutants`; never in a normal build).
//!
//! Each [`Mutant`] removes or reorders one step the seed says is needed. A
//! hook at that step (`mutant!(Name)` in the algorithm's code, a constant
//! `false` without the feature) asks [`active`] whether to take the mutated
//! path. `tests/mutants_memento.rs` switches each mutant on, runs the check
//! that must catch it, and expects a violation; `MUTANTS.md` records which
//! check catches which mutant and the counterexample.
//!
//! The switch is process-global: tests that use it must run one at a time
//! ([`lock`]). With no mutant switched on ([`set`]`(None)`, the initial
//! state) the code behaves exactly as without the feature.

perdure_pm::declare_mutants! {
    /// Algorithm 1, L33: the location is not flushed after the first plain
    /// CAS, before the memento is checkpointed.
    NoFlushLocL33 = 1 => "cas-no-flush-loc-L33",
    /// Algorithm 1, L35: the memento is not flushed (`flushopt`) after
    /// `ts_succ` is stored in it.
    NoFlushMementoL35 = 2 => "cas-no-flush-memento-L35",
    /// Algorithm 2, L13–L16: LOADHELP helps the second plain CAS without
    /// raising HELP\[p\]\[tid\] (the CAS on HELP and its flush are skipped).
    SkipHelpUpdate = 3 => "loadhelp-skip-help-update",
    /// Algorithm 3, L24–L25: INSERT clears the persist bit (L25) before it
    /// flushes the location (L24).
    ClearBeforeFlushL25 = 4 => "insert-clear-before-flush",
    /// §2.2 step 5: the checkpoint's timestamp is written back (`pwb`) but
    /// the `pfence` perdure defers to the thread's next write
    /// ([`crate::runtime::Handle::defer_fence`]) is never owed.
    CheckpointNoFence = 5 => "checkpoint-no-fence",
    /// Algorithm 1, L38 as published: the un-annotated word is not written
    /// back after the second plain CAS (perdure writes it back, fenced
    /// before the thread's next write).
    NoFlushLocL38 = 6 => "cas-no-flush-loc-L38",
}
