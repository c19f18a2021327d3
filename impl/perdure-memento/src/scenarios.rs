//! Crash-explorer scenarios for the detectable structures (feature
//! `check`; `perdure explore msq-mmt-vol` …).
//!
//! Each scenario runs a Memento runtime on the simulated Px86 backend with
//! the deterministic counter clock. Threads run their calls as root
//! operations ([`Handle::run_root`]). After a crash the explorer recovers
//! the image with [`Runtime::open`] (calibration, OWN, clearing) and the
//! structure's own recovery, then asks every cut-off call for its outcome:
//! a call whose completion persisted reports the result stored in its root
//! slot; any other call is *resumed* with its memento in recovery mode and
//! reports the result it finishes with — the detectability the seed claims
//! (exactly once, with the result it took effect with). The history, with
//! these `recover` lines and a final drain, goes to the
//! durable-linearizability and detectability checker.
//!
//! Not covered here: thread crashes (see `tests/thread_crash.rs`), crashes
//! during recovery, concurrent resumption of the crashed threads (they are
//! resumed one after another).

use crate::compose::Memento;
use crate::ds::msq::{Msq, MsqKind, QueueMmt};
use crate::ds::treiber::{StackMmt, TreiberStack};
use crate::ds::{decode_opt, NODE};
use crate::runtime::{Config, Handle, Runtime};
use crate::ts::ClockKind;
use perdure_check::explore::{Call, Scenario, Session};
use perdure_pm::{Pool, Sim};
use serde_json::{json, Value};
use std::sync::Arc;

/// Every Memento scenario.
pub fn all() -> Vec<Arc<dyn Scenario>> {
    let mut v: Vec<Arc<dyn Scenario>> = Vec::new();
    for kind in [MsqKind::Cas, MsqKind::Indel, MsqKind::Vol] {
        v.push(Arc::new(QueueScenario { kind }));
    }
    v.push(Arc::new(StackScenario));
    v
}

const BASE: u64 = 4096;
const HEAP: u64 = 2 << 20;
const THREADS: usize = 2;

fn config() -> Config {
    Config {
        threads: THREADS,
        heap_bytes: HEAP,
        clock: ClockKind::Counter,
    }
}

/// A runtime and the structure, over a pool kept alive beside them.
struct State<M: Memento, S> {
    // Field order is drop order: the runtime (which borrows the pool) goes
    // before the pool.
    rt: Runtime<'static, Sim, M>,
    obj: S,
    _pool: Arc<Pool<Sim>>,
}

fn open_state<M: Memento + 'static, S>(
    pool: &Arc<Pool<Sim>>,
    after_crash: bool,
    obj: impl FnOnce(&Runtime<'static, Sim, M>) -> Result<S, String>,
) -> Result<State<M, S>, String> {
    let keep = pool.clone();
    if after_crash {
        keep.reincarnate();
    }
    // SAFETY: the runtime borrows the pool behind `keep`, an `Arc` stored in
    // the same `State` and dropped after the runtime (field order); the
    // pool's heap allocation never moves while an `Arc` to it lives, so the
    // reference stays valid for the runtime's whole life. The `'static` is
    // never exposed: `State` is private and hands out only shorter borrows.
    let pool_ref: &'static Pool<Sim> = unsafe { &*Arc::as_ptr(&keep) };
    let rt = Runtime::<Sim, M>::open_with(pool_ref, BASE, ClockKind::Counter)
        .map_err(|e| e.to_string())?;
    let obj = obj(&rt)?;
    Ok(State {
        rt,
        obj,
        _pool: keep,
    })
}

fn state<T: 'static>(session: &Session) -> Result<&T, String> {
    session
        .downcast_ref::<T>()
        .ok_or_else(|| "session of the wrong type".to_string())
}

/// Runs `call` as `thread`'s root operation number `index`, or reports its
/// stored result if it already completed.
fn run_call<M: Memento + 'static, S>(
    st: &State<M, S>,
    thread: usize,
    index: Option<usize>,
    body: impl FnMut(&mut Handle<'_, 'static, Sim, M>, &mut M, u64) -> u64,
) -> Result<u64, String> {
    let tid = thread + 1;
    if let Some(i) = index {
        let next = st.rt.next_op(tid);
        if next == i as u64 + 1 {
            return Ok(st.rt.last_result(tid));
        }
        if next != i as u64 {
            return Err(format!(
                "thread {tid}: root slot says operation {next} is next, the history says {i}"
            ));
        }
    }
    let mut h = st.rt.handle(tid).map_err(|e| e.to_string())?;
    Ok(h.run_root(body).result)
}

fn arg(call: &Call) -> Result<Option<u64>, String> {
    match call.op.as_str() {
        "enq" | "push" => call
            .args
            .first()
            .and_then(Value::as_u64)
            .map(Some)
            .ok_or_else(|| format!("{} needs a number", call.op)),
        "deq" | "pop" => Ok(None),
        o => Err(format!("unknown operation {o}")),
    }
}

fn result_value(op: Option<u64>, w: u64) -> Value {
    match op {
        Some(_) => Value::Null,
        None => decode_opt(w).map_or(Value::Null, |v| json!(v)),
    }
}

fn mixed_workload(seed: u64, push: &str, pop: &str) -> Vec<Vec<Call>> {
    (0..THREADS as u64)
        .map(|t| {
            // Thread t: push, pop, push — or pop first, by seed.
            let pop_first = (seed >> t) & 1 == 1;
            let v = |k: u64| json!(10 * (t + 1) + k);
            if pop_first {
                vec![Call::new(pop, vec![]), Call::new(push, vec![v(1)])]
            } else {
                vec![Call::new(push, vec![v(1)]), Call::new(pop, vec![])]
            }
        })
        .collect()
}

/// A Michael–Scott queue variant under two threads.
#[derive(Debug, Clone, Copy)]
pub struct QueueScenario {
    /// The variant.
    pub kind: MsqKind,
}

type QState = State<QueueMmt, Msq>;

impl Scenario for QueueScenario {
    fn name(&self) -> &'static str {
        match self.kind {
            MsqKind::Cas => "msq-mmt-cas",
            MsqKind::Indel => "msq-mmt-indel",
            MsqKind::Vol => "msq-mmt-vol",
        }
    }

    fn description(&self) -> &'static str {
        match self.kind {
            MsqKind::Cas => "Memento MSQ-mmt-cas (detectable CAS), 2 threads x 2 ops, detectability checked",
            MsqKind::Indel => "Memento MSQ-mmt-indel (insert/delete), 2 threads x 2 ops, detectability checked",
            MsqKind::Vol => "Memento MSQ-mmt-vol (insert/delete, DRAM tail), 2 threads x 2 ops, detectability checked",
        }
    }

    fn object(&self) -> &'static str {
        "queue"
    }

    fn pool_size(&self) -> u64 {
        BASE + Runtime::<Sim, QueueMmt>::required_bytes(&config())
    }

    fn setup(&self, pool: &Pool<Sim>) -> Result<(), String> {
        let rt =
            Runtime::<Sim, QueueMmt>::create(pool, BASE, &config()).map_err(|e| e.to_string())?;
        let mut h = rt.handle(1).map_err(|e| e.to_string())?;
        let q = Msq::create(self.kind, &mut h).map_err(|e| e.to_string())?;
        drop(h);
        pool.psync();
        rt.set_object_root(q.offset()).map_err(|e| e.to_string())
    }

    fn open(&self, pool: &Arc<Pool<Sim>>, after_crash: bool) -> Result<Session, String> {
        let kind = self.kind;
        let st: QState = open_state(pool, after_crash, |rt| {
            let q = Msq::at(kind, rt.object_root());
            q.recover(rt.pool()).map_err(|e| e.to_string())?;
            Ok(q)
        })?;
        Ok(Arc::new(st))
    }

    fn workload(&self, seed: u64) -> Vec<Vec<Call>> {
        mixed_workload(seed, "enq", "deq")
    }

    fn apply(
        &self,
        _pool: &Pool<Sim>,
        session: &Session,
        thread: usize,
        call: &Call,
    ) -> Result<Value, String> {
        let st: &QState = state(session)?;
        let op = arg(call)?;
        let w = run_call(st, thread, None, |h, m, _| {
            st.obj.run(h, m, op).unwrap_or(u64::MAX)
        })?;
        if w == u64::MAX {
            return Err("the operation failed (out of memory?)".into());
        }
        Ok(result_value(op, w))
    }

    fn recover(&self, _pool: &Pool<Sim>) -> Result<(), String> {
        Ok(()) // Runtime::open in `open` is the recovery.
    }

    fn recover_call(
        &self,
        _pool: &Pool<Sim>,
        session: &Session,
        thread: usize,
        index: usize,
        call: &Call,
    ) -> Result<Option<Value>, String> {
        let st: &QState = state(session)?;
        let op = arg(call)?;
        let w = run_call(st, thread, Some(index), |h, m, _| {
            st.obj.run(h, m, op).unwrap_or(u64::MAX)
        })?;
        Ok(Some(result_value(op, w)))
    }

    fn observe(&self, pool: &Pool<Sim>, session: &Session) -> Result<Vec<(Call, Value)>, String> {
        let st: &QState = state(session)?;
        let mut out: Vec<(Call, Value)> = st
            .obj
            .contents(pool)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|v| (Call::new("deq", vec![]), json!(v)))
            .collect();
        out.push((Call::new("deq", vec![]), Value::Null));
        Ok(out)
    }
}

/// The detectable Treiber stack under two threads.
#[derive(Debug, Clone, Copy)]
pub struct StackScenario;

type SState = State<StackMmt, TreiberStack>;

impl Scenario for StackScenario {
    fn name(&self) -> &'static str {
        "treiber-mmt"
    }

    fn description(&self) -> &'static str {
        "Memento Treiber stack (detectable CAS), 2 threads x 2 ops, detectability checked"
    }

    fn object(&self) -> &'static str {
        "stack"
    }

    fn pool_size(&self) -> u64 {
        BASE + Runtime::<Sim, StackMmt>::required_bytes(&config())
    }

    fn setup(&self, pool: &Pool<Sim>) -> Result<(), String> {
        let rt =
            Runtime::<Sim, StackMmt>::create(pool, BASE, &config()).map_err(|e| e.to_string())?;
        let mut h = rt.handle(1).map_err(|e| e.to_string())?;
        let s = TreiberStack::create(&mut h).map_err(|e| e.to_string())?;
        drop(h);
        pool.psync();
        rt.set_object_root(s.offset()).map_err(|e| e.to_string())
    }

    fn open(&self, pool: &Arc<Pool<Sim>>, after_crash: bool) -> Result<Session, String> {
        let st: SState = open_state(pool, after_crash, |rt| {
            let off = rt.object_root();
            rt.pool()
                .check_range(off, NODE, 64)
                .map_err(|e| e.to_string())?;
            Ok(TreiberStack::at(off))
        })?;
        Ok(Arc::new(st))
    }

    fn workload(&self, seed: u64) -> Vec<Vec<Call>> {
        mixed_workload(seed, "push", "pop")
    }

    fn apply(
        &self,
        _pool: &Pool<Sim>,
        session: &Session,
        thread: usize,
        call: &Call,
    ) -> Result<Value, String> {
        let st: &SState = state(session)?;
        let op = arg(call)?;
        let w = run_call(st, thread, None, |h, m, _| {
            st.obj.run(h, m, op).unwrap_or(u64::MAX)
        })?;
        if w == u64::MAX {
            return Err("the operation failed (out of memory?)".into());
        }
        Ok(result_value(op, w))
    }

    fn recover(&self, _pool: &Pool<Sim>) -> Result<(), String> {
        Ok(())
    }

    fn recover_call(
        &self,
        _pool: &Pool<Sim>,
        session: &Session,
        thread: usize,
        index: usize,
        call: &Call,
    ) -> Result<Option<Value>, String> {
        let st: &SState = state(session)?;
        let op = arg(call)?;
        let w = run_call(st, thread, Some(index), |h, m, _| {
            st.obj.run(h, m, op).unwrap_or(u64::MAX)
        })?;
        Ok(Some(result_value(op, w)))
    }

    fn observe(&self, pool: &Pool<Sim>, session: &Session) -> Result<Vec<(Call, Value)>, String> {
        let st: &SState = state(session)?;
        let mut out: Vec<(Call, Value)> = st
            .obj
            .contents(pool)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|v| (Call::new("pop", vec![]), json!(v)))
            .collect();
        out.push((Call::new("pop", vec![]), Value::Null));
        Ok(out)
    }
}
