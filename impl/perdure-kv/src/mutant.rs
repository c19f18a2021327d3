//! Mutants of the store's steps, for checking the checks (feature
//! `mutants`; never in a normal build): the `kv` group of perdure-pm's one
//! catalogue. A hook (`mutant!(Name)` in the store's code, a constant
//! `false` without the feature) takes the mutated path while the mutant is
//! switched on; `tests/mutants_kv.rs` switches each on and expects the check
//! named there to fail.

pub use perdure_pm::hooks::mutants::{active, lock, set, Mutant};
