//! Crash-explorer scenarios for Memento's primitives on their own (feature
//! `check`): the detectable CAS of seed 001 §3 (Algorithms 1–2) and
//! CHECKPOINT of §2.2, each checked as a `register` of `HISTORY.md`.
//!
//! * **`cas-register-2`, `cas-register-3`**: one [`DetectableCasAtomic`]
//!   shared by 2 (3) threads; each root operation is one `cas(old, new)`
//!   (a detectable CAS with the root memento, reporting whether it
//!   succeeded) or one `read()` (LOAD, which helps an annotated value with
//!   LOADHELP). A cut-off CAS is resumed with its memento after the crash
//!   and must report the outcome it took effect with, exactly once.
//! * **`checkpoint-1line`, `checkpoint-2line`**: one thread checkpoints
//!   increasing values (`write(v)`) into one [`Checkpoint`] variable whose
//!   slot fits in one cache line (2 words) or spans two (8 words: step 4's
//!   buffer flush). The value is written as a pattern over all its words,
//!   so after the crash `read()` fails on a torn value; the history checker
//!   then requires the read to return the last checkpointed value — a
//!   completed checkpoint survives, and a cut-off one, resumed with its
//!   root operation, takes effect exactly once.
//!
//! The runtimes, recovery and resumption are those of the structure
//! scenarios (see the parent module).

use super::{open_state, run_call, sim_options, state, State, BASE, HEAP};
use crate::cas::{CasMmt, DetectableCasAtomic};
use crate::checkpoint::Checkpoint;
use crate::compose::Memento;
use crate::runtime::{Config, Runtime};
use crate::ts::ClockKind;
use perdure_check::explore::{Call, Scenario, Session};
use perdure_pm::{Pool, Sim};
use serde_json::{json, Value};
use std::sync::Arc;

/// The primitive scenarios.
pub fn all() -> Vec<Arc<dyn Scenario>> {
    vec![
        Arc::new(CasRegister { threads: 2 }),
        Arc::new(CasRegister { threads: 3 }),
        Arc::new(CheckpointRegister::<2>),
        Arc::new(CheckpointRegister::<8>),
    ]
}

fn config(threads: usize) -> Config {
    Config {
        threads,
        heap_bytes: HEAP,
        clock: ClockKind::Counter,
    }
}

fn num(call: &Call, i: usize) -> Result<u64, String> {
    call.args
        .get(i)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{}: argument {i} must be a number", call.op))
}

/// Builds a runtime for `threads`, lets `create` make the object (with
/// thread 1's handle) and records its offset as the object root.
fn setup_with<M: Memento>(
    pool: &Pool<Sim>,
    threads: usize,
    create: impl FnOnce(&mut crate::Handle<'_, '_, Sim, M>) -> Result<u64, crate::MementoError>,
) -> Result<(), String> {
    let rt = Runtime::<Sim, M>::create(pool, BASE, &config(threads)).map_err(|e| e.to_string())?;
    let mut h = rt.handle(1).map_err(|e| e.to_string())?;
    let root = create(&mut h).map_err(|e| e.to_string())?;
    drop(h);
    pool.psync();
    rt.set_object_root(root).map_err(|e| e.to_string())
}

/// A detectable-CAS location as a `register` (initially 0) under
/// `threads` threads.
#[derive(Debug, Clone, Copy)]
pub struct CasRegister {
    /// Threads.
    pub threads: usize,
}

impl CasRegister {
    fn call(
        &self,
        session: &Session,
        thread: usize,
        index: Option<usize>,
        call: &Call,
    ) -> Result<Value, String> {
        let st: &State<CasMmt, DetectableCasAtomic> = state(session)?;
        let loc = st.obj;
        match call.op.as_str() {
            "cas" => {
                let (old, new) = (num(call, 0)?, num(call, 1)?);
                let w = run_call(st, thread, index, |h, m, _| {
                    u64::from(loc.cas(old, new, h, m).is_ok())
                })?;
                Ok(json!(w == 1))
            }
            "read" => Ok(json!(run_call(st, thread, index, |h, _, _| loc.load(h))?)),
            o => Err(format!("unknown operation {o}")),
        }
    }
}

impl Scenario for CasRegister {
    fn name(&self) -> &'static str {
        match self.threads {
            2 => "cas-register-2",
            _ => "cas-register-3",
        }
    }

    fn description(&self) -> &'static str {
        match self.threads {
            2 => "Memento detectable CAS (Algorithms 1-2) as a register, 2 threads x 3 ops (cas, read, cas), detectability checked",
            _ => "Memento detectable CAS (Algorithms 1-2) as a register, 3 threads x 2 ops (cas, cas/read), detectability checked",
        }
    }

    fn object(&self) -> &'static str {
        "register"
    }

    fn sim_options(&self) -> perdure_pm::SimOptions {
        sim_options()
    }

    fn pool_size(&self) -> u64 {
        BASE + Runtime::<Sim, CasMmt>::required_bytes(&config(self.threads))
    }

    fn setup(&self, pool: &Pool<Sim>) -> Result<(), String> {
        setup_with::<CasMmt>(pool, self.threads, |h| {
            let off = h.alloc(64)?;
            DetectableCasAtomic::at(off).init(h.pool(), 0);
            Ok(off)
        })
    }

    fn open(&self, pool: &Arc<Pool<Sim>>, after_crash: bool) -> Result<Session, String> {
        let st: State<CasMmt, DetectableCasAtomic> = open_state(pool, after_crash, |rt| {
            let root = rt.object_root();
            rt.pool()
                .check_range(root, 8, 8)
                .map_err(|e| e.to_string())?;
            Ok(DetectableCasAtomic::at(root))
        })?;
        Ok(Arc::new(st))
    }

    fn workload(&self, seed: u64) -> Vec<Vec<Call>> {
        // Values 0..=3, so that CASes of different threads meet: thread t
        // (value t + 1) swings the register from a seeded value to its own,
        // and (2 threads) reads, then from its own value to a seeded one.
        let cas = |old: u64, new: u64| Call::new("cas", vec![json!(old), json!(new)]);
        (0..self.threads as u64)
            .map(|t| {
                let bits = seed >> (4 * t);
                let own = t + 1;
                let from = bits % 3; // 0, 1 or 2
                let from = if from == own { 0 } else { from };
                let to = (own + 1 + (bits >> 2) % 2) % 4;
                if self.threads == 2 {
                    vec![cas(from, own), Call::new("read", vec![]), cas(own, to)]
                } else if (bits >> 3) & 1 == 0 {
                    vec![cas(from, own), cas(own, to)]
                } else {
                    vec![cas(from, own), Call::new("read", vec![])]
                }
            })
            .collect()
    }

    fn apply(
        &self,
        _pool: &Pool<Sim>,
        session: &Session,
        thread: usize,
        call: &Call,
    ) -> Result<Value, String> {
        self.call(session, thread, None, call)
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
        self.call(session, thread, Some(index), call).map(Some)
    }

    fn observe(&self, _pool: &Pool<Sim>, session: &Session) -> Result<Vec<(Call, Value)>, String> {
        // A LOAD by thread 1 after every cut-off call was resumed (it helps
        // an annotation left in the location, if any).
        let st: &State<CasMmt, DetectableCasAtomic> = state(session)?;
        let loc = st.obj;
        let v = run_call(st, 0, None, |h, _, _| loc.load(h))?;
        Ok(vec![(Call::new("read", vec![]), json!(v))])
    }
}

/// A [`Checkpoint`] variable of `N` words as a `register` (initially 0):
/// thread 1 checkpoints `write(1)`, `write(2)`, `write(3)`.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointRegister<const N: usize>;

impl<const N: usize> CheckpointRegister<N> {
    /// The words `v` is checkpointed as: word `i` is `v` with `i` in its
    /// high half, so a slot mixing two values is visible.
    pub fn pattern(v: u64) -> [u64; N] {
        std::array::from_fn(|i| v | ((i as u64) << 32))
    }

    /// The value of a slot's words, if they are one value's pattern.
    pub fn unpattern(words: &[u64; N]) -> Option<u64> {
        let v = words[0];
        (v >> 32 == 0 && *words == Self::pattern(v)).then_some(v)
    }

    fn call(
        &self,
        session: &Session,
        thread: usize,
        index: Option<usize>,
        call: &Call,
    ) -> Result<Value, String> {
        let st: &State<CasMmt, u64> = state(session)?;
        let off = st.obj;
        match call.op.as_str() {
            "write" => {
                let v = num(call, 0)?;
                let w = run_call(st, thread, index, |h, _, _| {
                    let mut cp = Checkpoint::<N>::at(off);
                    Self::unpattern(&cp.checkpoint(h, Self::pattern(v))).unwrap_or(u64::MAX)
                })?;
                if w != v {
                    return Err(format!("write({v}) returned the checkpointed value {w}"));
                }
                Ok(Value::Null)
            }
            o => Err(format!("unknown operation {o}")),
        }
    }
}

impl<const N: usize> Scenario for CheckpointRegister<N> {
    fn name(&self) -> &'static str {
        if Checkpoint::<N>::SIZE > 128 {
            "checkpoint-2line"
        } else {
            "checkpoint-1line"
        }
    }

    fn description(&self) -> &'static str {
        if Checkpoint::<N>::SIZE > 128 {
            "Memento CHECKPOINT (2.2) of 8 words (a slot of 2 lines) as a register, 1 thread x 3 writes, no torn or lost value"
        } else {
            "Memento CHECKPOINT (2.2) of 2 words (a slot of 1 line) as a register, 1 thread x 3 writes, no torn or lost value"
        }
    }

    fn object(&self) -> &'static str {
        "register"
    }

    fn sim_options(&self) -> perdure_pm::SimOptions {
        sim_options()
    }

    fn pool_size(&self) -> u64 {
        BASE + Runtime::<Sim, CasMmt>::required_bytes(&config(1))
    }

    fn setup(&self, pool: &Pool<Sim>) -> Result<(), String> {
        // The variable is a zeroed heap block (timestamps 0: nothing
        // checkpointed), not a root memento, so it outlives the operations.
        setup_with::<CasMmt>(pool, 1, |h| {
            let off = h.alloc(Checkpoint::<N>::SIZE)?;
            h.pool().pwb(off, Checkpoint::<N>::SIZE);
            h.pool().pfence();
            Ok(off)
        })
    }

    fn open(&self, pool: &Arc<Pool<Sim>>, after_crash: bool) -> Result<Session, String> {
        let st: State<CasMmt, u64> = open_state(pool, after_crash, |rt| {
            let root = rt.object_root();
            rt.pool()
                .check_range(root, Checkpoint::<N>::SIZE, 64)
                .map_err(|e| e.to_string())?;
            Ok(root)
        })?;
        Ok(Arc::new(st))
    }

    fn workload(&self, _seed: u64) -> Vec<Vec<Call>> {
        vec![(1..=3)
            .map(|v| Call::new("write", vec![json!(v)]))
            .collect()]
    }

    fn apply(
        &self,
        _pool: &Pool<Sim>,
        session: &Session,
        thread: usize,
        call: &Call,
    ) -> Result<Value, String> {
        self.call(session, thread, None, call)
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
        self.call(session, thread, Some(index), call).map(Some)
    }

    fn observe(&self, pool: &Pool<Sim>, session: &Session) -> Result<Vec<(Call, Value)>, String> {
        let st: &State<CasMmt, u64> = state(session)?;
        let (words, ts) = Checkpoint::<N>::at(st.obj).peek(pool);
        let v = match (ts, Self::unpattern(&words)) {
            (0, _) => 0,
            (_, Some(v)) => v,
            (_, None) => return Err(format!("torn checkpoint: {words:?} (timestamp {ts})")),
        };
        Ok(vec![(Call::new("read", vec![]), json!(v))])
    }
}
