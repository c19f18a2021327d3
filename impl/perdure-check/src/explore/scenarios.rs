//! The scenarios `perdure explore` knows, by name.
//!
//! * `log` — the tutorial commit-marker log (`perdure_pm::commit_log`), two
//!   threads appending concurrently, checked as a `queue`: an append is an
//!   `enq`, and after recovery the committed records are read back in order
//!   as `deq`s. Must pass.
//! * `log-nofence` — the same log with the `pfence` between writing a
//!   record and committing it removed. A crash may persist the commit word
//!   without the record, and the explorer must find it.
//!
//! Constructions add theirs here as they land.

use super::{At, Call, Scenario};
use perdure_pm::commit_log::{CommitLog, PAYLOAD_WORDS};
use perdure_pm::{Pool, Sim};
use serde_json::{json, Value};
use std::sync::Arc;

/// Every scenario, by name.
pub fn all() -> Vec<Arc<dyn Scenario>> {
    vec![
        Arc::new(LogScenario { record_fence: true }),
        Arc::new(LogScenario {
            record_fence: false,
        }),
    ]
}

/// The scenario called `name`.
pub fn by_name(name: &str) -> Option<Arc<dyn Scenario>> {
    all().into_iter().find(|s| s.name() == name)
}

/// The tutorial commit-marker log under two appending threads.
#[derive(Debug, Clone, Copy)]
pub struct LogScenario {
    /// Whether the record is fenced before the commit (false: the mutant).
    pub record_fence: bool,
}

const LOG_LEN: u64 = 16 << 10;
const THREADS: u64 = 2;
const APPENDS: u64 = 2;

impl LogScenario {
    fn log<'p>(&self, pool: &'p Pool<Sim>) -> Result<CommitLog<'p, Sim>, String> {
        let log =
            CommitLog::attach(pool, pool.data_offset(), LOG_LEN).map_err(|e| e.to_string())?;
        Ok(if self.record_fence {
            log
        } else {
            log.without_record_fence()
        })
    }

    fn payload(v: u64) -> [u64; PAYLOAD_WORDS] {
        std::array::from_fn(|k| v.wrapping_mul(31).wrapping_add(k as u64))
    }
}

impl Scenario for LogScenario {
    fn name(&self) -> &'static str {
        if self.record_fence {
            "log"
        } else {
            "log-nofence"
        }
    }

    fn description(&self) -> &'static str {
        if self.record_fence {
            "the tutorial commit-marker log, 2 threads x 2 appends, checked as a queue (must pass)"
        } else {
            "the log with the pfence between record and commit removed (the explorer must find the bug)"
        }
    }

    fn object(&self) -> &'static str {
        "queue"
    }

    fn setup(&self, pool: &Pool<Sim>) -> Result<(), String> {
        CommitLog::open(pool, pool.data_offset(), LOG_LEN)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn workload(&self, _seed: u64) -> Vec<Vec<Call>> {
        (0..THREADS)
            .map(|t| {
                (0..APPENDS)
                    .map(|k| Call::new("enq", vec![json!(100 * (t + 1) + k)]))
                    .collect()
            })
            .collect()
    }

    fn apply(&self, at: At<'_>, call: &Call) -> Result<Value, String> {
        let v = call
            .args
            .first()
            .and_then(Value::as_u64)
            .ok_or("enq needs a number")?;
        self.log(at.pool)?
            .append(&Self::payload(v))
            .map_err(|e| e.to_string())?;
        Ok(Value::Null)
    }

    fn recover(&self, pool: &Pool<Sim>) -> Result<(), String> {
        CommitLog::open(pool, pool.data_offset(), LOG_LEN)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn observe(&self, at: At<'_>) -> Result<Vec<(Call, Value)>, String> {
        let log = self.log(at.pool)?;
        let mut seen = Vec::new();
        for i in 0..log.len() {
            // A torn record is observed as a value no one enqueued, which
            // the checker rejects.
            let v = match log.read(i) {
                Ok(p) if p == Self::payload(p[0] / 31) => json!(p[0] / 31),
                Ok(_) => json!(format!("record {i}: payload does not match any append")),
                Err(e) => json!(format!("{e}")),
            };
            seen.push((Call::new("deq", vec![]), v));
        }
        seen.push((Call::new("deq", vec![]), Value::Null));
        Ok(seen)
    }
}
