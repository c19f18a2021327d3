//! The plain integration tests of perdure-pm: one module per file, one test binary.
//!
//! Built as one binary so that the pool's and heap's generic code compiles and links once, not once
//! per file (docs/USAGE.md, "The tests: one binary per crate"). The loom, shuttle and process-kill
//! tests stay binaries of their own: they build under another cfg or run their own executable
//! again. One file's tests: `cargo test --release -p perdure-pm --test suite heap::`.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod heap;
mod heap_crash_sim;
mod pool_bad_input;
mod sim;
