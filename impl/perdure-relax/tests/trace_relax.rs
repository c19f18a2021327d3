//! The trace producer of `perdure trace relax` (`src/trace.rs`, feature
//! `trace`): reproducible seeds, the steps a run must contain (a crash, the
//! lazy recovery after it, several threads recovering at once), the tamper
//! modes, bad options. Whether TLC accepts the traces is checked by
//! `traces/relax/checks.json` (`make verify`, `trace:relax/*` rows), not
//! here.
//!
//! `PERDURE_TRACE_OUT=DIR` also writes, for each mutant of `src/mutant.rs`
//! that changes Algorithm 4.1's or 6.2's steps, a crash trace recorded with
//! the mutant switched on, for replaying by hand with
//! `tools/trace-check.sh traces/relax/RelaxTrace.tla DIR/<mutant>.ndjson`
//! (`traces/relax/README.md` reports what TLC says).

use perdure_harness::relax::trace::{trace, Tamper, TraceOptions};
use perdure_relax::mutant::{self, Mutant};
use serde_json::Value;

fn steps(t: &str) -> Vec<Value> {
    t.lines()
        .map(|l| serde_json::from_str(l).expect("a trace line is JSON"))
        .collect()
}

fn action(v: &Value) -> &str {
    v["action"].as_str().unwrap_or("")
}

fn opts(seed: u64, runs: u64, threads: usize, crash: bool) -> TraceOptions {
    TraceOptions {
        seed,
        runs,
        threads,
        ops: 4,
        crash,
        ..TraceOptions::default()
    }
}

#[test]
fn a_seed_gives_the_same_trace() {
    let _g = mutant::lock();
    let o = opts(300, 3, 3, true);
    assert_eq!(trace(&o).unwrap(), trace(&o).unwrap());
    assert_ne!(trace(&o).unwrap(), trace(&opts(301, 3, 3, true)).unwrap());
}

#[test]
fn crash_runs_recover_lazily_and_concurrently() {
    let _g = mutant::lock();
    let known = [
        "Begin", "Crash", "Invoke", "Ret", "S0", "LD", "L5", "L9", "L21", "L24", "L40", "L42",
        "L43", "R1", "R2", "R22", "R41", "R43", "R5",
    ];
    let s = steps(&trace(&opts(300, 30, 3, true)).unwrap());
    assert!(s.iter().all(|v| known.contains(&action(v))), "unknown step");
    assert_eq!(s.iter().filter(|v| action(v) == "Begin").count(), 30);
    assert_eq!(s.iter().filter(|v| action(v) == "Crash").count(), 30);
    // Every Invoke carries its call; after each crash the first access of
    // some thread recovers, and every recovery starts at line 1.
    for (i, v) in s.iter().enumerate() {
        if action(v) == "Invoke" {
            assert!(["load", "store", "cas"].contains(&v["op"].as_str().unwrap_or("")));
            if v["recover"] == Value::Bool(true) {
                let next = s[i + 1..]
                    .iter()
                    .find(|u| u["thread"] == v["thread"])
                    .expect("the recovering thread goes on");
                assert_eq!(action(next), "R1");
            }
        }
        if action(v) == "Crash" {
            let first = s[i + 1..]
                .iter()
                .find(|u| action(u) == "Invoke" || action(u) == "Begin");
            if let Some(first) = first.filter(|u| action(u) == "Invoke") {
                assert_eq!(first["recover"], Value::Bool(true), "step {i}");
            }
        }
    }
    // The schedules put two recoverers in Algorithm 6.2 at once: some line-5
    // DWCAS loses to another recoverer, some re-read sees DRAM moved.
    assert!(s
        .iter()
        .any(|v| action(v) == "R5" && v["ok"] == Value::Bool(false)));
    assert!(s
        .iter()
        .any(|v| action(v) == "R22" && v["same"] == Value::Bool(false)));
    assert!(s
        .iter()
        .any(|v| action(v) == "R41" && v["ok"] == Value::Bool(true)));
}

#[test]
fn tamper_modes_change_the_trace() {
    let _g = mutant::lock();
    let o = opts(100, 5, 2, true);
    let plain = trace(&o).unwrap();
    for t in [Tamper::LostWrite, Tamper::NoRecover, Tamper::WrongLoad] {
        let tampered = trace(&TraceOptions {
            tamper: Some(t),
            ..o
        })
        .unwrap();
        assert_ne!(plain, tampered, "{t:?}");
    }
    // Without a crash there is nothing for no-recover to change.
    assert!(trace(&TraceOptions {
        tamper: Some(Tamper::NoRecover),
        ..opts(100, 2, 2, false)
    })
    .is_err());
}

#[test]
fn bad_options_are_errors() {
    let _g = mutant::lock();
    assert!(trace(&opts(1, 1, 0, false)).is_err());
    assert!(trace(&opts(1, 1, 4, false)).is_err());
    let o = opts(1, 1, 2, false);
    assert!(trace(&TraceOptions { ops: 0, ..o }).is_err());
    assert!(trace(&TraceOptions { ops: 7, ..o }).is_err());
    assert!(trace(&TraceOptions { runs: 0, ..o }).is_err());
}

#[test]
fn write_back_and_fence_steps_come_from_the_simulator() {
    let _g = mutant::lock();
    let count = |t: &str, a: &str| steps(t).iter().filter(|v| action(v) == a).count();
    let o = opts(1, 5, 2, false);
    let clean = trace(&o).unwrap();
    assert!(count(&clean, "L42") > 0 && count(&clean, "Fence") == 0);
    // L41–L42 skipped: the trace must not claim the L42 step.
    mutant::set(Some(Mutant::NoFlushBeforeDram));
    let skipped = trace(&o);
    mutant::set(None);
    let skipped = skipped.unwrap();
    assert_eq!(count(&skipped, "L42"), 0);
    assert!(count(&skipped, "L43") > 0);
}

#[test]
fn mutant_traces_for_replay_by_hand() {
    let _g = mutant::lock();
    let Ok(dir) = std::env::var("PERDURE_TRACE_OUT") else {
        return;
    };
    std::fs::create_dir_all(&dir).unwrap();
    for m in [
        Mutant::NoFlushBeforeDram,
        Mutant::NoSeqWindow,
        Mutant::RecoverNoFlush,
        Mutant::RecoverNoReread,
        Mutant::Line47AsWritten,
    ] {
        mutant::set(Some(m));
        let t = trace(&opts(300, 30, 3, true));
        mutant::set(None);
        let t = t.unwrap_or_else(|e| format!("{{\"error\":{e:?}}}\n"));
        std::fs::write(format!("{dir}/{}.ndjson", m.name()), t).unwrap();
    }
}
