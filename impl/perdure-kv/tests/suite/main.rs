//! The plain integration tests of perdure-kv: one module per file, one test binary.
//!
//! Built as one binary so that the store's generic code compiles and links once, not once per file
//! (docs/USAGE.md, "The tests: one binary per crate"). The mutants and shuttle tests stay binaries
//! of their own: they switch process-wide mutants or build under another cfg. One file's tests:
//! `cargo test --release -p perdure-kv --test suite map::`.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod file;
mod index;
mod map;
mod proptest_kv;
mod txn;
