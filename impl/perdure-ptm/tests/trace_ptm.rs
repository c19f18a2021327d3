//! The trace producer of Redo-PTM and CX-PTM (`perdure_ptm::trace`,
//! feature `trace`): what its traces hold, independently of TLC (which
//! checks them against `traces/ptm/PtmTrace.tla`, `trace:ptm/...` in
//! `make verify`).
//!
//! Checked here, for both constructions, with and without a crash: a seed is
//! one reproducible trace; every run opens with `Begin`; every transaction
//! is invoked once per (thread, index) and, without a crash, returns once,
//! after its invocation; commits (`CasCC`) and the hooks' steps are present;
//! a crash run has one `Crash` and continues with fresh indices; the tamper
//! modes change the trace where they say; bad options are errors.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

use perdure_ptm::trace::{trace, Construction, Tamper, TraceError, TraceOptions};
use serde_json::Value;
use std::collections::HashSet;

fn steps(opts: &TraceOptions) -> Vec<Value> {
    trace(opts)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn opts(c: Construction, crash: bool) -> TraceOptions {
    TraceOptions {
        construction: c,
        seed: 7,
        runs: 3,
        threads: 3,
        ops: 3,
        crash,
        tamper: None,
    }
}

fn count(s: &[Value], action: &str) -> usize {
    s.iter().filter(|v| v["action"] == action).count()
}

fn key(v: &Value) -> (u64, u64) {
    (v["thread"].as_u64().unwrap(), v["i"].as_u64().unwrap())
}

/// The runs of a trace, each from its `Begin`.
fn runs(s: &[Value]) -> Vec<&[Value]> {
    let starts: Vec<usize> = (0..s.len())
        .filter(|&k| s[k]["action"] == "Begin")
        .collect();
    (0..starts.len())
        .map(|j| &s[starts[j]..starts.get(j + 1).copied().unwrap_or(s.len())])
        .collect()
}

fn check_runs(c: Construction, crash: bool) {
    let o = opts(c, crash);
    let s = steps(&o);
    assert_eq!(
        trace(&o).unwrap(),
        trace(&o).unwrap(),
        "a seed is one trace"
    );
    assert!(s.iter().all(|v| v["type"] == "step"));
    assert_eq!(s[0]["action"], "Begin");
    let rs = runs(&s);
    assert_eq!(rs.len(), 3);
    for r in rs {
        let mut invoked = HashSet::new();
        for (k, v) in r.iter().enumerate() {
            if v["action"] == "Invoke" {
                assert!(
                    invoked.insert(key(v)),
                    "a (thread, index) invoked twice: {v}"
                );
            }
            if v["action"] == "Return" {
                assert!(
                    r[..k]
                        .iter()
                        .any(|u| u["action"] == "Invoke" && key(u) == key(v)),
                    "a return before its invocation: {v}"
                );
            }
        }
        assert_eq!(count(r, "Crash"), usize::from(crash));
        if !crash {
            assert_eq!(invoked.len(), 9);
            assert_eq!(count(r, "Return"), 9);
        }
        assert!(count(r, "Lock") > 0 && count(r, "Fence") > 0);
        match c {
            Construction::Redo => assert!(count(r, "Announce") > 0),
            Construction::Cx => assert!(count(r, "Enqueue") > 0),
        }
    }
    assert!(count(&s, "CasCC") > 0 && count(&s, "Store") > 0 && count(&s, "PwbR") > 0);
}

#[test]
fn redo_traces() {
    check_runs(Construction::Redo, false);
    check_runs(Construction::Redo, true);
}

#[test]
fn cx_traces() {
    check_runs(Construction::Cx, false);
    check_runs(Construction::Cx, true);
}

#[test]
fn tampering_moves_a_return_or_drops_write_backs_or_a_store() {
    for c in [Construction::Redo, Construction::Cx] {
        let clean = steps(&opts(c, false));
        let early = steps(&TraceOptions {
            tamper: Some(Tamper::ReturnBeforePsync),
            ..opts(c, false)
        });
        assert_eq!(early.len(), clean.len());
        let cas = early.iter().position(|v| v["action"] == "CasCC").unwrap();
        assert_eq!(early[cas + 1]["action"], "Return");
        assert_eq!(early[cas + 1]["thread"], early[cas]["thread"]);
        assert_ne!(early, clean);
        let unflushed = steps(&TraceOptions {
            tamper: Some(Tamper::CasBeforeFlush),
            ..opts(c, false)
        });
        assert!(count(&unflushed, "PwbR") < count(&clean, "PwbR"));
        assert_eq!(count(&unflushed, "CasCC"), count(&clean, "CasCC"));
        let lost = steps(&TraceOptions {
            tamper: Some(Tamper::LostStore),
            ..opts(c, false)
        });
        assert_eq!(count(&lost, "Store") + 1, count(&clean, "Store"));
        assert_eq!(lost.len() + 1, clean.len());
    }
}

#[test]
fn bad_options_are_errors() {
    for bad in [
        TraceOptions {
            threads: 0,
            ..TraceOptions::default()
        },
        TraceOptions {
            threads: 4,
            ..TraceOptions::default()
        },
        TraceOptions {
            ops: 7,
            ..TraceOptions::default()
        },
        TraceOptions {
            runs: 0,
            ..TraceOptions::default()
        },
    ] {
        assert!(matches!(trace(&bad), Err(TraceError::Options(_))));
    }
}
