//! Mutants of the PTMs' seed steps, each caught by the crash explorer
//! (feature `mutants`; `MUTANTS.md` is the record).
//!
//! For the mutants of the write-backs, fences and syncs around the
//! `cur_comb` CAS ([`EXPLORED`]): the explorer runs on the scenarios listed for it
//! (`src/scenarios.rs`), first on the code as written (must pass), then
//! with the mutant switched on (must report a violation in one of them).
//! The mutant switch is process-global, so one test runs them all, in turn,
//! and prints a PERDURE-CHECK row `mutant:ptm/<name>` per mutant, with the
//! first line of the counterexample.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-ptm --test shuttle_mutants_ptm` (the `shuttle:ptm` check of
//! `tools/verify.py` does); without the cfg this file is empty (see
//! `tests/shuttle_explore_ptm.rs`).

#![cfg(perdure_shuttle)]

mod explore_common;

use explore_common::{config, explore_named, explored, Depth};
use perdure_harness::report::MutantTrial;
use perdure_ptm::mutant::{self, Mutant};
use std::collections::HashMap;

/// The scenarios and depth the explorer uses on `m`, in the order tried.
fn checks(m: Mutant) -> (&'static [&'static str], Depth) {
    let every = |schedules| Depth::Every { schedules };
    match m {
        Mutant::RedoNoSyncAfterCas => (&["redo-counter"], every(2)),
        Mutant::RedoFlushAfterCas => (&["redo-queue"], every(2)),
        Mutant::RedoNoFenceBeforeCas => (&["redo-map"], every(2)),
        Mutant::CxNoSyncAfterCas => (&["cx-puc-counter"], every(2)),
        Mutant::CxFlushAfterCas => (&["cx-ptm-queue"], every(2)),
        Mutant::CxNoFenceBeforeCas => (&["cx-puc-queue"], every(2)),
        Mutant::RedoTimedFallbackWithoutCopy => (&["redo-timed-closed-queue"], every(2)),
        Mutant::RedoOptLineSetNotReset => (&["redo-opt-queue"], every(2)),
        Mutant::RedoOptFullFlushShort => (&["redo-opt-full-queue"], every(2)),
        // Their window is a few steps wide: `tests/mutants_ptm.rs`.
        _ => (&[], every(0)),
    }
}

/// The mutants this test checks (the others are `tests/mutants_ptm.rs`'s:
/// 4 schedules of the explorer did not hit their windows, see
/// `MUTANTS.md`).
const EXPLORED: [Mutant; 9] = [
    Mutant::RedoNoSyncAfterCas,
    Mutant::RedoFlushAfterCas,
    Mutant::RedoNoFenceBeforeCas,
    Mutant::CxNoSyncAfterCas,
    Mutant::CxFlushAfterCas,
    Mutant::CxNoFenceBeforeCas,
    Mutant::RedoTimedFallbackWithoutCopy,
    Mutant::RedoOptLineSetNotReset,
    Mutant::RedoOptFullFlushShort,
];

/// The explorer on `names` at `depth`: `Ok` with what it explored, or `Err`
/// with the first violation and its history.
fn explore_all(names: &[&str], depth: Depth) -> Result<String, String> {
    let cfg = config(depth);
    let mut done = Vec::new();
    for name in names {
        let r = explore_named(name, &cfg);
        if let Some(v) = r.violations.first() {
            return Err(format!(
                "explorer on {name}: {} (schedule {}, crash event {}, image {})\n{}",
                v.reason, v.schedule, v.crash_event, v.image, v.history
            ));
        }
        done.push(format!("{name}: {}", explored(&r)));
    }
    Ok(done.join("; "))
}

#[test]
fn every_mutant_is_caught_by_the_explorer() {
    let _guard = mutant::lock();
    let mut missed = Vec::new();
    // The code as written, once per (scenarios, depth).
    let mut baselines: HashMap<String, Result<String, String>> = HashMap::new();
    for m in EXPLORED {
        let (names, depth) = checks(m);
        let key = format!("{names:?} {depth:?}");
        let baseline = || {
            baselines
                .entry(key)
                .or_insert_with(|| explore_all(names, depth))
                .clone()
        };
        let trial = MutantTrial::run(mutant::set, m, baseline, || explore_all(names, depth));
        let explored = format!(
            "crash explorer on {} ({depth:?}); as written: {}; mutant: {}",
            names.join(", "),
            if trial.baseline.is_ok() {
                "no violation".to_string()
            } else {
                MutantTrial::first_line(&trial.baseline)
            },
            MutantTrial::first_line(&trial.mutated)
        );
        trial.report(
            &format!("mutant:ptm/{}", m.name()),
            m.name(),
            &explored,
            &mut missed,
        );
    }
    assert!(missed.is_empty(), "not caught:\n{}", missed.join("\n"));
}
