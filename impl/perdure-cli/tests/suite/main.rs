//! The integration tests of the perdure command: one module per file, one test binary.
//!
//! Built as one binary so that the crates they link compile into one executable, not one per file
//! (docs/USAGE.md, "The tests: one binary per crate"). kv_kill stays a binary of its own: it runs
//! its own executable again as the killed writer. One file's tests: `cargo test --release -p
//! perdure --test suite kv_cli::`.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod cli;
mod history_cli;
mod kv_cli;
mod kv_damage;
mod litmus_cli;
