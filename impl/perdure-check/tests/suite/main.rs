//! The integration tests of perdure-check: one module per file, one test binary.
//!
//! Built as one binary so that the checkers' generic code compiles and links once, not once per
//! file (docs/USAGE.md, "The tests: one binary per crate"). One file's tests: `cargo test --release
//! -p perdure-check --test suite history_oracle::`.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

#[path = "../common/mod.rs"]
mod common;

mod explore_log;
mod explore_recovering;
mod history_malformed;
mod history_models;
mod history_oracle;
mod history_property;
mod html_render;
mod litmus_engine;
mod litmus_parse;
mod litmus_sim_crosscheck;
mod litmus_suite;
mod tla_litmus_crosscheck;
