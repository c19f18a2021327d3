//! The crash explorer on every PTM scenario (`src/scenarios.rs`): shuttle
//! schedules × crash points × Px86 crash images, each image recovered by
//! opening the PTM on it (null recovery), observed (the whole object read,
//! updates committed on the recovered PTM) and checked for durable
//! linearizability. Reports a PERDURE-CHECK row `explore:ptm/<scenario>`
//! per scenario for `make verify`.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-ptm --test shuttle_explore_ptm` (the `shuttle:ptm` check of
//! `tools/verify.py` does); without the cfg this file is empty (the
//! scenarios need shuttle's thread-locals, see the module docs of
//! `perdure_harness::ptm::scenarios`).
//!
//! * 2 threads × 2 calls (`redo-counter`, `cx-ptm-queue`, …): 2 schedules,
//!   every crash point of each, and a seeded sample of 6 of the images Px86
//!   allows at each point. All images are out of reach: every line a
//!   transaction wrote to a replica other than the one `cur_comb` ends up
//!   designating stays unsettled until that replica is next designated, so
//!   a point has up to ~10^15 images (the rows print the count);
//! * the variants of Redo-PTM on the queue, the set and the map, 2 threads ×
//!   2 calls, 8 schedules (their rows are cheap: 1–3 s per 2 schedules),
//!   every crash point, 6 images each: RedoOpt-PTM with postponed per-line `pwb`s
//!   (`redo-opt-…`) and with its full-flush switch triggering at the second
//!   dirty line (`redo-opt-full-…`); RedoTimed-PTM with a window that never
//!   closes (`redo-timed-wide-…`: only `combs[0]`/`combs[1]`, backoff) and
//!   one closed at once (`redo-timed-closed-…`: the fallback to any replica);
//!   see `constructions` in `src/scenarios.rs`;
//! * 2 threads × 6 calls (`…-6ops`, and Redo-PTM with 2 states per thread,
//!   `redo-rsize2-…`): 2 schedules, a seeded sample of 24 crash points of
//!   each, 6 images each.
//!
//! `PERDURE_DEPTH=deep` multiplies the schedules (and the sampled points)
//! by 10. `PERDURE_SIM_RMW=1` explores x86's Px86 (a locked CAS completes
//! earlier write-backs, and the constructions leave the `pfence` before the
//! `cur_comb` CAS out).

#![cfg(perdure_shuttle)]

mod explore_common;

use explore_common::{config, explore_named, explored, run, Depth};

/// One `#[test]` per scenario name, each explored at `depth`.
macro_rules! rows {
    ($depth:expr; $($test:ident => $name:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            run($name, $depth);
        }
    )*};
}

rows! {
    Depth::Every { schedules: 2 };
    redo_counter => "redo-counter",
    redo_queue => "redo-queue",
    redo_set => "redo-set",
    redo_map => "redo-map",
    cx_ptm_counter => "cx-ptm-counter",
    cx_ptm_queue => "cx-ptm-queue",
    cx_ptm_set => "cx-ptm-set",
    cx_ptm_map => "cx-ptm-map",
    cx_puc_counter => "cx-puc-counter",
    cx_puc_queue => "cx-puc-queue",
    cx_puc_set => "cx-puc-set",
    cx_puc_map => "cx-puc-map",
}

rows! {
    Depth::Every { schedules: 8 };
    redo_opt_queue => "redo-opt-queue",
    redo_opt_set => "redo-opt-set",
    redo_opt_map => "redo-opt-map",
    redo_opt_full_queue => "redo-opt-full-queue",
    redo_opt_full_set => "redo-opt-full-set",
    redo_opt_full_map => "redo-opt-full-map",
    redo_timed_wide_queue => "redo-timed-wide-queue",
    redo_timed_wide_set => "redo-timed-wide-set",
    redo_timed_wide_map => "redo-timed-wide-map",
    redo_timed_closed_queue => "redo-timed-closed-queue",
    redo_timed_closed_set => "redo-timed-closed-set",
    redo_timed_closed_map => "redo-timed-closed-map",
}

rows! {
    Depth::Sampled { schedules: 2, points: 24 };
    redo_queue_6ops => "redo-queue-6ops",
    redo_set_6ops => "redo-set-6ops",
    redo_map_6ops => "redo-map-6ops",
    redo_rsize2_queue_6ops => "redo-rsize2-queue-6ops",
    redo_rsize2_map_6ops => "redo-rsize2-map-6ops",
    cx_ptm_queue_6ops => "cx-ptm-queue-6ops",
    cx_ptm_set_6ops => "cx-ptm-set-6ops",
    cx_ptm_map_6ops => "cx-ptm-map-6ops",
    cx_puc_queue_6ops => "cx-puc-queue-6ops",
    cx_puc_map_6ops => "cx-puc-map-6ops",
}

/// Depth: PCT schedules (bug depth 3) beside the random ones, every crash
/// point, up to 64 images each, the queue on each construction (its
/// transactions leave the most lines unsettled). Rows
/// `explore:ptm/depth-pct-<scenario>`; `PERDURE_DEPTH=deep` runs 10× the
/// schedules; `PERDURE_PTM_DEPTH_SCHEDULES` sets the base count.
#[test]
fn depth_pct() {
    const SCENARIOS: [&str; 5] = [
        "redo-queue",
        "redo-opt-queue",
        "redo-timed-wide-queue",
        "cx-ptm-queue",
        "cx-puc-queue",
    ];
    let base = std::env::var("PERDURE_PTM_DEPTH_SCHEDULES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let cfg = perdure_check::explore::ExploreConfig {
        scheduler: perdure_check::explore::SchedulerKind::Pct { depth: 3 },
        images: 64,
        seed: 31,
        ..config(Depth::Every { schedules: base })
    };
    depth_rows(
        "depth-pct",
        &SCENARIOS,
        &cfg,
        "PCT schedules (depth 3), every crash point, up to 64 Px86 images each, null recovery, the recovered PTM read whole and updated, durable linearizability checked",
    );
}

/// Depth: exhaustive schedules, bounded — shuttle's DFS over the first
/// schedules of the counter and the queue on Redo-PTM and CX-PUC (the
/// schedules DFS enumerates first differ in their last choices, which
/// random and PCT sampling rarely revisit), every crash point, up to 16
/// images each. Rows `explore:ptm/depth-dfs-<scenario>`; `PERDURE_DEPTH=deep`
/// runs 10× the schedules.
#[test]
fn depth_dfs() {
    const SCENARIOS: [&str; 4] = [
        "redo-counter",
        "redo-queue",
        "cx-puc-counter",
        "cx-ptm-queue",
    ];
    let cfg = perdure_check::explore::ExploreConfig {
        scheduler: perdure_check::explore::SchedulerKind::Dfs,
        images: 16,
        seed: 37,
        ..config(Depth::Every { schedules: 3 })
    };
    depth_rows(
        "depth-dfs",
        &SCENARIOS,
        &cfg,
        "DFS schedules (shuttle's, bounded), every crash point, up to 16 Px86 images each, null recovery, durable linearizability checked",
    );
}

/// Explores each of `scenarios` with `cfg`, one row
/// `explore:ptm/{kind}-<scenario>` each; panics at the first violation.
fn depth_rows(
    kind: &str,
    scenarios: &[&str],
    cfg: &perdure_check::explore::ExploreConfig,
    detail: &str,
) {
    for name in scenarios {
        let t = std::time::Instant::now();
        let report = explore_named(name, cfg);
        let row = format!("explore:ptm/{kind}-{name}");
        if let Some(why) = perdure_harness::report::explore_row(
            &row,
            name,
            &report,
            &explored(&report),
            Some(detail),
            t,
        ) {
            panic!("{why}");
        }
    }
}
