//! The plain integration tests of perdure-ptm: one module per file, one test binary.
//!
//! Built as one binary so that the generic code of the PTMs and the structures compiles and links
//! once, not once per file (docs/USAGE.md, "The tests: one binary per crate"). The loom, shuttle,
//! mutants and process-kill tests stay binaries of their own: they build under another cfg, switch
//! process-wide mutants, or run their own executable again. One file's tests: `cargo test --release
//! -p perdure-ptm --test suite ds_model::`.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

#[path = "../common/mod.rs"]
mod common;
#[path = "../ds_common/mod.rs"]
mod ds_common;

mod cx_bad_input;
mod cx_basic;
mod cx_concurrent;
mod cx_crash;
mod cx_fences;
mod ds_bad_input;
mod ds_concurrent;
mod ds_crash;
mod ds_model;
mod ds_persist;
mod ds_plain;
mod ds_proptest;
mod ptm_bad_input;
mod ptm_basic;
mod ptm_concurrent;
mod ptm_crash;
mod ptm_fences;
mod redo_bad_input;
mod redo_breakdown;
mod redo_concurrent;
mod redo_crash;
mod redo_variants;
mod trace_ptm;
