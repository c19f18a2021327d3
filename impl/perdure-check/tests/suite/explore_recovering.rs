//! The explorer's recovering workload (`Scenario::recovering_workload`):
//! calls that several threads make concurrently right after recovery are
//! run, recorded with their interleaving, and checked with the rest of the
//! history. A durable counter (a pool word, `add` written back and fenced
//! before it returns) passes; the same counter whose recovering threads
//! report a value it never held is caught, with the recovering calls in the
//! failing history. A recovering thread that panics is never ignored.

use crate::common;

use perdure_check::explore::{explore, At, Call, CrashPoints, ExploreConfig, Scenario, Session};
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{Pool, Sim};
use serde_json::{json, Value};
use std::sync::Arc;

/// The counter's word: the first of the data area.
fn word(pool: &Pool<Sim>) -> u64 {
    pool.data_offset()
}

struct Counter {
    /// The recovering threads' `get` adds this to what it reads (0: honest).
    lie: u64,
    /// The recovering threads panic at their first call.
    panics: bool,
}

impl Scenario for Counter {
    fn name(&self) -> &'static str {
        "recovering-counter"
    }
    fn description(&self) -> &'static str {
        "a durable counter, 2 threads adding, 3 threads reading and adding right after recovery"
    }
    fn object(&self) -> &'static str {
        "counter"
    }
    fn setup(&self, pool: &Pool<Sim>) -> Result<(), String> {
        let w = word(pool);
        pool.word(w)
            .map_err(|e| e.to_string())?
            .store(0, Ordering::SeqCst);
        pool.pwb(w, 8);
        pool.pfence();
        Ok(())
    }
    fn workload(&self, _seed: u64) -> Vec<Vec<Call>> {
        (0..2)
            .map(|t| vec![Call::new("add", vec![json!(t + 1)]); 2])
            .collect()
    }
    fn apply(&self, at: At<'_>, call: &Call) -> Result<Value, String> {
        let pool = at.pool;
        let w = word(pool);
        let cell = pool.word(w).map_err(|e| e.to_string())?;
        match call.op.as_str() {
            "add" => {
                let d = call.args[0].as_u64().ok_or("add needs a number")?;
                cell.fetch_add(d, Ordering::SeqCst);
                pool.pwb(w, 8);
                pool.pfence();
                Ok(Value::Null)
            }
            "get" => Ok(json!(cell.load(Ordering::SeqCst))),
            op => Err(format!("no operation {op}")),
        }
    }
    fn recover(&self, _pool: &Pool<Sim>) -> Result<(), String> {
        Ok(())
    }
    fn recovering_workload(&self, _session: &Session) -> Vec<Vec<Call>> {
        (0..3)
            .map(|t| {
                vec![
                    Call::new("get", vec![]),
                    Call::new("add", vec![json!(10 * (t + 1))]),
                    Call::new("get", vec![]),
                ]
            })
            .collect()
    }
    fn apply_recovering(&self, at: At<'_>, call: &Call) -> Result<Value, String> {
        assert!(!self.panics, "recovering thread {} panics", at.thread);
        let v = self.apply(at, call)?;
        Ok(match (call.op.as_str(), v.as_u64()) {
            ("get", Some(n)) => json!(n + self.lie),
            _ => v,
        })
    }
    fn observe(&self, at: At<'_>) -> Result<Vec<(Call, Value)>, String> {
        let c = Call::new("get", vec![]);
        let v = self.apply(at, &c)?;
        Ok(vec![(c, v)])
    }
}

fn cfg() -> ExploreConfig {
    ExploreConfig {
        seed: 3,
        schedules: 4,
        crash_points: CrashPoints::All,
        images: 4,
        ..ExploreConfig::default()
    }
}

#[test]
fn recovering_calls_are_run_and_checked() {
    let r = explore(
        Arc::new(Counter {
            lie: 0,
            panics: false,
        }),
        &cfg(),
    );
    assert!(
        r.violations.is_empty(),
        "{:?}",
        r.violations.first().map(|v| (&v.reason, &v.history))
    );
    assert!(r.images_checked > 10, "{}", r.summary());

    let r = explore(
        Arc::new(Counter {
            lie: 1000,
            panics: false,
        }),
        &cfg(),
    );
    let v = common::first_dl_violation(&r, "a recovering thread's lie is caught");
    // The failing history has the recovering threads' calls after the
    // crash, by three threads, interleaved (a thread invokes while another's
    // call is pending).
    let after: Vec<Value> = v
        .history
        .lines()
        .skip_while(|l| !l.contains("\"crash\""))
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let threads: std::collections::BTreeSet<u64> = after
        .iter()
        .filter(|e| e["type"] == "invoke")
        .filter_map(|e| e["thread"].as_u64())
        .collect();
    assert_eq!(threads.len(), 3, "{}", v.history);
}

#[test]
fn recovering_threads_interleave() {
    // Over the schedules some history has two recovering calls pending at
    // once: the threads really run concurrently.
    let r = explore(
        Arc::new(Counter {
            lie: 1000,
            panics: false,
        }),
        &ExploreConfig {
            max_violations: 50,
            ..cfg()
        },
    );
    let overlapping = r.violations.iter().any(|v| {
        let mut pending = 0i32;
        let mut most = 0;
        for l in v.history.lines().skip_while(|l| !l.contains("\"crash\"")) {
            if l.contains("\"invoke\"") {
                pending += 1;
            } else if l.contains("\"return\"") {
                pending -= 1;
            }
            most = most.max(pending);
        }
        most >= 2
    });
    assert!(
        overlapping,
        "{} histories, none with overlapping recovering calls",
        r.violations.len()
    );
}

#[test]
fn a_panicking_recovering_thread_is_not_ignored() {
    // Shuttle fails the whole execution when one of its threads panics, so
    // the exploration panics; were the panic caught and the thread's join
    // error dropped, the honest counter's histories would pass and the
    // report would come back clean.
    let run = std::panic::catch_unwind(|| {
        explore(
            Arc::new(Counter {
                lie: 0,
                panics: true,
            }),
            &cfg(),
        )
    });
    if let Ok(r) = run {
        let v = r
            .violations
            .first()
            .unwrap_or_else(|| panic!("a panicked recovering thread was ignored: {}", r.summary()));
        assert!(
            v.reason.contains("a recovering thread panicked"),
            "{}",
            v.reason
        );
    }
}
