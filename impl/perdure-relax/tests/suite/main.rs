//! The plain integration tests of perdure-relax: one module per file, one test binary.
//!
//! Built as one binary so that the structures' generic code compiles and links once, not once per
//! file (docs/USAGE.md, "The tests: one binary per crate"). The mutants, trace, shuttle tests and
//! the mutation tier's checks (lazy, crash_sim, sets_crash_sim: tools/mutants_cargo.py runs them by
//! name) stay binaries of their own. One file's tests: `cargo test --release -p perdure-relax
//! --test suite sets_model::`.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

#[path = "../common/mod.rs"]
mod common;
#[path = "../conc/mod.rs"]
mod conc;
#[path = "../crash/mod.rs"]
mod crash;
#[path = "../sets/mod.rs"]
mod sets;

mod bad_input;
mod concurrent;
mod mirror;
mod proptest_relax;
mod reclaim_epoch;
mod sets_concurrent;
mod sets_model;
