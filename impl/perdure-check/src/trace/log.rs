//! Protocol-level traces of the tutorial commit-marker log.
//!
//! The Rust log (`perdure_pm::commit_log`) runs unmodified on the `Sim`
//! backend with tracing on; this module maps the recorded persistent-memory
//! events to the actions of `specs/tutorial/CommitLog.tla`:
//!
//! | Sim event (by thread t) | step |
//! | --- | --- |
//! | fetch-add on the reserved word, new value v | `Reserve(t, v - 1)` |
//! | first store into record i's line (a run of stores) | `WriteRecord(t, i)` |
//! | `pwb` of record i's line | `FlushRecord(t, i)` |
//! | `pfence` | `Fence(t)` |
//! | store of n to the commit word | `Commit(t, n)` |
//! | `pwb` of the commit word's line | `FlushCommit(t)` |
//! | `psync` | `Sync(t)` |
//!
//! Loads change nothing and are left out, as are stores outside the log
//! (the pool header) and the ticket reset of recovery. A crash is the step
//! `Crash(c, D)`, where `c` is the commit word and `D` the set of intact
//! records in the crash image the simulator chose; the steps of the
//! recovered run follow it. Each step is one ndjson line
//! `{"type":"step","action":...,"thread":...,...}` (`traces/SCHEMA.md`).

use super::TraceOptions;
use perdure_pm::commit_log::{CommitLog, PAYLOAD_WORDS, RECORD};
use perdure_pm::sim::{SimEvent, SimOp, VolatileFill};
use perdure_pm::{Pool, Sim, SimOptions};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

const POOL: u64 = 64 << 10;
const LOG_LEN: u64 = 16 << 10;
/// Offsets inside the log (see `perdure_pm::commit_log`).
const OFF_RESERVED: u64 = 64;
const OFF_RECORDS: u64 = 128;

/// The tutorial log's run: the `C` of its [`TraceOptions`]. The log runs
/// once on OS threads, unseeded: `seed` is not used and `runs` must be 1;
/// `ops` is the appends per thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogRun {
    /// With `crash`: crash after this many persistence events of the run
    /// (then recover and append once more).
    pub crash_after: u64,
    /// Which allowed crash image to take (index into the enumeration,
    /// modulo their number).
    pub image: u64,
    /// Run the mutant without the record fence.
    pub without_record_fence: bool,
}

/// The tampering of a log trace: the first step whose action is `.0`
/// removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DropFirst(pub String);

/// What to trace.
pub type LogTraceOptions = TraceOptions<LogRun, DropFirst>;

fn log_for(pool: &Pool<Sim>, fence: bool) -> Result<CommitLog<'_, Sim>, String> {
    let log = CommitLog::attach(pool, pool.data_offset(), LOG_LEN).map_err(|e| e.to_string())?;
    Ok(if fence {
        log
    } else {
        log.without_record_fence()
    })
}

/// Maps Sim events to protocol steps (see the module docs).
pub fn steps(events: &[SimEvent], base: u64) -> Vec<Value> {
    let commit_off = base;
    let reserved_off = base + OFF_RESERVED;
    let records = base + OFF_RECORDS..base + LOG_LEN;
    let mut out = Vec::new();
    // Per thread, the record it is writing (its stores to it may be
    // interleaved with other threads' events): one WriteRecord per ticket.
    let mut writing: std::collections::HashMap<usize, u64> = std::collections::HashMap::new();
    for e in events {
        let t = e.thread;
        let step = match e.op {
            SimOp::Rmw if e.off == reserved_off => {
                writing.remove(&t);
                Some(json!({"type":"step","action":"Reserve","thread":t,"rec":e.val - 1}))
            }
            SimOp::Store if records.contains(&e.off) => {
                let i = (e.off - records.start) / RECORD;
                if writing.insert(t, i) == Some(i) {
                    None
                } else {
                    Some(json!({"type":"step","action":"WriteRecord","thread":t,"rec":i}))
                }
            }
            SimOp::Pwb if records.contains(&e.off) => {
                let i = (e.off - records.start) / RECORD;
                Some(json!({"type":"step","action":"FlushRecord","thread":t,"rec":i}))
            }
            SimOp::Pwb if e.off == commit_off => {
                Some(json!({"type":"step","action":"FlushCommit","thread":t}))
            }
            SimOp::Store if e.off == commit_off => {
                Some(json!({"type":"step","action":"Commit","thread":t,"n":e.val}))
            }
            SimOp::Pfence => Some(json!({"type":"step","action":"Fence","thread":t})),
            SimOp::Psync => Some(json!({"type":"step","action":"Sync","thread":t})),
            _ => None,
        };
        out.extend(step);
    }
    out
}

fn payload(t: usize, k: usize) -> [u64; PAYLOAD_WORDS] {
    std::array::from_fn(|w| (t * 1000 + k * 10 + w) as u64)
}

/// Runs the log on the `Sim` backend and returns its protocol trace as
/// ndjson, one step per line (tampered with if `opts.tamper` says so).
pub fn trace(opts: &LogTraceOptions) -> Result<String, String> {
    if opts.runs != 1 {
        return Err(format!(
            "the tutorial log records one run, not {}",
            opts.runs
        ));
    }
    let crash_after = opts.crash.then_some(opts.object.crash_after);
    let pool = Pool::volatile("trace-log", POOL, Sim::new(SimOptions::default()))
        .map_err(|e| e.to_string())?;
    let base = pool.data_offset();
    CommitLog::open(&pool, base, LOG_LEN).map_err(|e| e.to_string())?;
    pool.backend().start_trace();
    // Crash point: after the given number of persistence events.
    let crash: Arc<Mutex<Option<(perdure_pm::sim::CrashPoint, usize)>>> =
        Arc::new(Mutex::new(None));
    if let Some(after) = crash_after {
        let crash = crash.clone();
        let start = pool.backend().counts().events;
        pool.backend().set_crash_hook(move |event, view| {
            let mut c = crash.lock().unwrap_or_else(|e| e.into_inner());
            if c.is_none() && event >= start + after {
                *c = Some((view.capture(), view.trace_len()));
            }
        });
    }
    let fence = !opts.object.without_record_fence;
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..opts.threads {
            let pool = &pool;
            let errors = &errors;
            s.spawn(move || {
                let log = match log_for(pool, fence) {
                    Ok(l) => l,
                    Err(e) => return errors.lock().unwrap_or_else(|e| e.into_inner()).push(e),
                };
                for k in 0..opts.ops as usize {
                    if let Err(e) = log.append(&payload(t, k)) {
                        errors
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(e.to_string());
                        return;
                    }
                }
            });
        }
    });
    pool.backend().clear_crash_hook();
    if let Some(e) = errors.into_inner().unwrap_or_default().first() {
        return Err(format!("append failed: {e}"));
    }
    let events = pool.backend().take_trace();
    let captured = crash.lock().unwrap_or_else(|e| e.into_inner()).take();
    let mut lines: Vec<Value> = Vec::new();
    match (crash_after, captured) {
        (None, _) => lines.extend(steps(&events, base)),
        (Some(after), None) => {
            return Err(format!(
                "the run had fewer than {after} persistence events: no crash point"
            ));
        }
        (Some(_), Some((cp, len))) => {
            lines.extend(steps(&events[..len], base));
            // The image the crash keeps.
            let (_, images) = cp.images(u64::MAX, 1);
            let all: Vec<_> = images.collect();
            let choice = &all[(opts.object.image % all.len() as u64) as usize];
            let words = cp.materialize(choice, VolatileFill::Zeroed);
            let after = Pool::volatile_from_words(&words, Sim::new(SimOptions::default()))
                .map_err(|e| e.to_string())?;
            let log = CommitLog::open(&after, base, LOG_LEN)
                .map_err(|e| format!("recovery failed: {e}"))?;
            let c = log.len();
            let intact: Vec<u64> = (0..log.capacity().min(64))
                .filter(|&i| log.read(i).is_ok())
                .collect();
            lines.push(json!({"type":"step","action":"Crash","commit":c,"durable":intact}));
            // The recovered run: one more append by one thread.
            after.backend().start_trace();
            log_for(&after, fence)?
                .append(&payload(9, 0))
                .map_err(|e| format!("append after recovery failed: {e}"))?;
            lines.extend(steps(&after.backend().take_trace(), base));
        }
    }
    let mut out = String::new();
    for l in lines {
        out.push_str(&l.to_string());
        out.push('\n');
    }
    Ok(match &opts.tamper {
        Some(DropFirst(action)) => drop_first(&out, action),
        None => out,
    })
}

/// Removes the first step whose action is `action`: a tampered trace.
pub fn drop_first(ndjson: &str, action: &str) -> String {
    let mut dropped = false;
    ndjson
        .lines()
        .filter(|l| {
            if dropped {
                return true;
            }
            let is = serde_json::from_str::<Value>(l)
                .map(|v| v["action"] == action)
                .unwrap_or(false);
            if is {
                dropped = true;
            }
            !is
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_append_traces_the_protocol_in_order() {
        let t = trace(&LogTraceOptions {
            threads: 1,
            ops: 1,
            ..Default::default()
        })
        .unwrap();
        let actions: Vec<String> = t
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["action"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            actions,
            [
                "Reserve",
                "WriteRecord",
                "FlushRecord",
                "Fence",
                "Commit",
                "FlushCommit",
                "Sync"
            ]
        );
        let mutant = trace(&LogTraceOptions {
            threads: 1,
            ops: 1,
            object: LogRun {
                without_record_fence: true,
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        assert!(!mutant.contains("\"Fence\""));
        assert_eq!(drop_first(&t, "Fence").lines().count(), 6);
        let tampered = trace(&LogTraceOptions {
            threads: 1,
            ops: 1,
            tamper: Some(DropFirst("Fence".into())),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(tampered, drop_first(&t, "Fence"));
        // One unseeded run is all the log records.
        let two = LogTraceOptions {
            runs: 2,
            ..Default::default()
        };
        assert!(trace(&two).is_err());
    }

    #[test]
    fn interleaved_record_stores_give_one_write_step_per_ticket() {
        use perdure_pm::sim::{SimEvent, SimOp};
        let base = 4096;
        let ev = |thread, op, off, val| SimEvent {
            thread,
            op,
            off,
            val,
        };
        let r0 = base + OFF_RECORDS;
        let r1 = r0 + RECORD;
        let events = [
            ev(0, SimOp::Rmw, base + OFF_RESERVED, 1),
            ev(0, SimOp::Store, r0, 0),
            ev(1, SimOp::Rmw, base + OFF_RESERVED, 2),
            ev(0, SimOp::Store, r0 + 8, 5),
            ev(1, SimOp::Store, r1, 1),
            ev(0, SimOp::Store, r0 + 16, 5),
            ev(1, SimOp::Store, r1 + 8, 6),
        ];
        let actions: Vec<(String, u64)> = steps(&events, base)
            .iter()
            .map(|s| {
                (
                    s["action"].as_str().unwrap().to_owned(),
                    s["thread"].as_u64().unwrap(),
                )
            })
            .collect();
        let want = [
            ("Reserve", 0),
            ("WriteRecord", 0),
            ("Reserve", 1),
            ("WriteRecord", 1),
        ];
        assert_eq!(actions, want.map(|(a, t)| (a.to_owned(), t)));
    }

    #[test]
    fn a_crash_step_records_the_image() {
        let t = trace(&LogTraceOptions {
            ops: 2,
            crash: true,
            object: LogRun {
                crash_after: 10,
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        let crash: Vec<Value> = t
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["action"] == "Crash")
            .collect();
        assert_eq!(crash.len(), 1);
        assert!(crash[0]["commit"].is_u64() && crash[0]["durable"].is_array());
    }
}
