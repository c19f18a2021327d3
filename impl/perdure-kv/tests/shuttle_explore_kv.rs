//! The crash explorer on perdure-kv's store (`perdure_harness::ptm::scenarios::kv`):
//! the store on every construction, 2 threads of `put`/`remove`
//! transactions and `get`s, shuttle schedules × crash points × Px86 crash
//! images; each image recovered by opening the PTM on it (null recovery),
//! the store checked (`Store::check`: the hash map and the ordered index,
//! each against the other), observed (every key read, updates committed)
//! and the history checked for durable linearizability as a `map`.
//! Reports a PERDURE-CHECK row `explore:kv/<scenario>` per scenario.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-kv --test shuttle_explore_kv` (the `shuttle:kv` check of
//! `tools/verify.py` does); without the cfg this file is empty.
//!
//! * 2 threads × 2 calls on each construction (`redo-kv`, `redo-opt-kv`,
//!   `redo-opt-full-kv`, `redo-timed-wide-kv`, `redo-timed-closed-kv`,
//!   `cx-ptm-kv`, `cx-puc-kv`): 2 schedules, every crash point, 6 images
//!   each;
//! * 2 threads × 4 calls on Redo-PTM and CX-PTM (`…-kv-4ops`): 2
//!   schedules, a seeded sample of 24 crash points, 6 images each.
//!
//! `PERDURE_DEPTH=deep` multiplies the schedules (and the sampled points)
//! by 10. Not covered: scans and batches under crashes (the `map` model
//! has no range operation; the kill test and the transaction tests check
//! those), crashes during recovery, more than 2 threads.

#![cfg(perdure_shuttle)]

#[path = "../../perdure-ptm/tests/explore_common/mod.rs"]
mod explore_common;

use explore_common::{run_as, Depth};

macro_rules! rows {
    ($depth:expr; $($test:ident => $name:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            run_as("kv", $name, $depth);
        }
    )*};
}

rows! {
    Depth::Every { schedules: 2 };
    redo_kv => "redo-kv",
    redo_opt_kv => "redo-opt-kv",
    redo_opt_full_kv => "redo-opt-full-kv",
    redo_timed_wide_kv => "redo-timed-wide-kv",
    redo_timed_closed_kv => "redo-timed-closed-kv",
    cx_ptm_kv => "cx-ptm-kv",
    cx_puc_kv => "cx-puc-kv",
}

rows! {
    Depth::Sampled { schedules: 2, points: 24 };
    redo_kv_4ops => "redo-kv-4ops",
    cx_ptm_kv_4ops => "cx-ptm-kv-4ops",
}
