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
//!
//! A [`Point`] is a place between two steps where the code calls
//! `pause!(Name)` (nothing without the feature) and a test's hook
//! ([`set_hook`]) may hold the calling thread, to force a race step by step
//! (`perdure_pm::hooks::pause`): Memento's is [`Point::CombBeforeLock`].

pub use perdure_pm::hooks::mutants::{active, lock, set, Mutant};
pub use perdure_pm::hooks::pause::{at, set_hook, Point};

/// The TSO-only mutants: correct under sequential consistency, so only a
/// check with store buffers catches them — the shuttle build's
/// `tests/shuttle_tso_mutants_memento.rs`, not `tests/mutants_memento.rs`.
pub const TSO: [Mutant; 1] = [Mutant::EbrPinNoFence];
