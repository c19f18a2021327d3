//! The plain integration tests of perdure-memento: one module per file, one test binary.
//!
//! Built as one binary so that the structures' generic code compiles and links once, not once per
//! file (docs/USAGE.md, "The tests: one binary per crate"). The explorer, mutants, ABA and shuttle
//! tests stay binaries of their own: the mutation tier runs them by name (tools/mutants_cargo.py),
//! and some switch process-wide mutants or run their own executable again. One file's tests: `cargo
//! test --release -p perdure-memento --test suite proptest_memento::`.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod baseline_recovery_crash;
mod proptest_memento;
