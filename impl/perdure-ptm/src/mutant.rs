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

pub use perdure_pm::hooks::mutants::{active, lock, set, Mutant};
