//! Crash-explorer scenarios for Memento's primitives on their own (feature
//! `check`): the detectable CAS of seed 001 §3 (Algorithms 1–2) and
//! CHECKPOINT of §2.2, each checked as a `register` of `HISTORY.md`.
//!
//! * **`cas-register-2`, `cas-register-3`**: one [`DetectableCasAtomic`] (the
//!   default two-word location, `cmpxchg16b`)
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

use super::{Observed, OnRuntime, Op, RuntimeScenario, State};
use perdure_check::explore::{Call, Scenario};
use perdure_memento::Checkpoint;
use perdure_memento::Memento;
use perdure_memento::{CasMmt, DetectableCasAtomic, TwoWord};
use perdure_memento::{Handle, MementoError, Runtime};
use perdure_pm::{Pool, Sim};
use serde_json::{json, Value};
use std::sync::Arc;

/// The primitive scenarios.
pub fn all() -> Vec<Arc<dyn Scenario>> {
    vec![
        Arc::new(OnRuntime(CasRegister {
            threads: 2,
            idle: 0,
        })),
        Arc::new(OnRuntime(CasRegister {
            threads: 3,
            idle: 0,
        })),
        Arc::new(OnRuntime(CasRegister {
            threads: 2,
            idle: WIDE_IDLE,
        })),
        Arc::new(OnRuntime(CheckpointRegister::<2>)),
        Arc::new(OnRuntime(CheckpointRegister::<8>)),
    ]
}

fn num(call: &Call, i: usize) -> Result<u64, String> {
    call.args
        .get(i)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{}: argument {i} must be a number", call.op))
}

/// Idle thread slots of `cas-register-2-wide`: with them the runtime's
/// root-memento slots (128 bytes each for a CAS memento) fill more than
/// one page, so the heap's base is computed from a slot area of several
/// pages, which `Runtime::open` checks against the header.
const WIDE_IDLE: usize = 30;

/// A detectable-CAS location as a `register` (initially 0) under
/// `threads` threads.
#[derive(Debug, Clone, Copy)]
pub struct CasRegister {
    /// Threads.
    pub threads: usize,
    /// Further thread slots of the runtime that run nothing.
    pub idle: usize,
}

impl RuntimeScenario for CasRegister {
    type Mmt = CasMmt;
    type Obj = DetectableCasAtomic;

    fn name(&self) -> &'static str {
        match (self.threads, self.idle) {
            (2, 0) => "cas-register-2",
            (2, _) => "cas-register-2-wide",
            _ => "cas-register-3",
        }
    }

    fn description(&self) -> &'static str {
        match (self.threads, self.idle) {
            (2, 0) => "Memento detectable CAS (Algorithms 1-2) as a register, 2 threads x 3 ops (cas, read, cas), detectability checked",
            (2, _) => "Memento detectable CAS (Algorithms 1-2) as a register, 2 threads x 3 ops (cas, read, cas) on a runtime of 33 thread slots (a slot area of two pages), detectability checked",
            _ => "Memento detectable CAS (Algorithms 1-2) as a register, 3 threads x 2 ops (cas, cas/read), detectability checked",
        }
    }

    fn object(&self) -> &'static str {
        "register"
    }

    /// The workload's threads and one more, whose root operations only
    /// observe: an observing LOAD as a root operation of a workload thread
    /// would advance that thread's root slot, and a crash during recovery
    /// after it would leave the thread's cut-off call without its result.
    fn threads(&self) -> usize {
        self.threads + 1 + self.idle
    }

    fn create(&self, h: &mut Handle<'_, '_, Sim, CasMmt>) -> Result<u64, MementoError> {
        let off = h.alloc(64)?;
        DetectableCasAtomic::at(off).init(h.pool(), 0);
        Ok(off)
    }

    fn attach(&self, rt: &Runtime<'static, Sim, CasMmt>) -> Result<DetectableCasAtomic, String> {
        let root = rt.object_root();
        rt.pool()
            .check_range(root, DetectableCasAtomic::<TwoWord>::BYTES, 16)
            .map_err(|e| e.to_string())?;
        Ok(DetectableCasAtomic::at(root))
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

    fn call(&self, at: Op<'_, CasMmt, DetectableCasAtomic>, call: &Call) -> Result<Value, String> {
        let loc = *at.obj();
        match call.op.as_str() {
            "cas" => {
                let (old, new) = (num(call, 0)?, num(call, 1)?);
                let w = at.run(|h, m, _| u64::from(loc.cas(old, new, h, m).is_ok()))?;
                Ok(json!(w == 1))
            }
            "read" => Ok(json!(at.run(|h, _, _| loc.load(h))?)),
            o => Err(format!("unknown operation {o}")),
        }
    }

    fn observe(&self, _pool: &Pool<Sim>, st: &State<CasMmt, DetectableCasAtomic>) -> Observed {
        // A LOAD by the observer thread (the last id) after every cut-off
        // call was resumed (it helps an annotation left in the location, if
        // any).
        let loc = st.obj;
        let v = Op::new(st, self.threads).run(|h, _, _| loc.load(h))?;
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
}

impl<const N: usize> RuntimeScenario for CheckpointRegister<N> {
    type Mmt = CasMmt;
    type Obj = u64;

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

    fn threads(&self) -> usize {
        1
    }

    fn create(&self, h: &mut Handle<'_, '_, Sim, CasMmt>) -> Result<u64, MementoError> {
        // The variable is a zeroed heap block (timestamps 0: nothing
        // checkpointed), not a root memento, so it outlives the operations.
        let off = h.alloc(Checkpoint::<N>::SIZE)?;
        h.pool().pwb(off, Checkpoint::<N>::SIZE);
        h.pool().pfence();
        Ok(off)
    }

    fn attach(&self, rt: &Runtime<'static, Sim, CasMmt>) -> Result<u64, String> {
        let root = rt.object_root();
        rt.pool()
            .check_range(root, Checkpoint::<N>::SIZE, 64)
            .map_err(|e| e.to_string())?;
        Ok(root)
    }

    fn workload(&self, _seed: u64) -> Vec<Vec<Call>> {
        vec![(1..=3)
            .map(|v| Call::new("write", vec![json!(v)]))
            .collect()]
    }

    fn call(&self, at: Op<'_, CasMmt, u64>, call: &Call) -> Result<Value, String> {
        let off = *at.obj();
        match call.op.as_str() {
            "write" => {
                let v = num(call, 0)?;
                let w = at.run(|h, _, _| {
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

    fn observe(&self, pool: &Pool<Sim>, st: &State<CasMmt, u64>) -> Observed {
        let (words, ts) = Checkpoint::<N>::at(st.obj).peek(pool);
        let v = match (ts, Self::unpattern(&words)) {
            (0, _) => 0,
            (_, Some(v)) => v,
            (_, None) => return Err(format!("torn checkpoint: {words:?} (timestamp {ts})")),
        };
        Ok(vec![(Call::new("read", vec![]), json!(v))])
    }
}
