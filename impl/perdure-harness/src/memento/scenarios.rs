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

use perdure_check::explore::{At, Call, Scenario, Session};
use perdure_memento::ds::clevel::{ClevelMmt, ClevelOp, ClevelTable};
use perdure_memento::ds::combq::{CombQMmt, CombQueue};
use perdure_memento::ds::elim::{ElimStack, ElimStackMmt};
use perdure_memento::ds::msq::{Msq, MsqKind, QueueMmt};
use perdure_memento::ds::soft::{SoftMmt, SoftOp, SoftTable};
use perdure_memento::ds::treiber::{StackMmt, TreiberStack};
use perdure_memento::ds::{decode_opt, NODE};
use perdure_memento::ClockKind;
use perdure_memento::Memento;
use perdure_memento::{ClearMode, Config, Handle, MementoError, Runtime};
use perdure_pm::{Pool, Sim};
use serde_json::{json, Value};
use std::sync::Arc;

pub mod prim;

/// Every Memento scenario.
pub fn all() -> Vec<Arc<dyn Scenario>> {
    let mut v: Vec<Arc<dyn Scenario>> = Vec::new();
    for kind in [MsqKind::Cas, MsqKind::Indel, MsqKind::Vol] {
        v.push(Arc::new(OnRuntime(Detectable::two(QueueStructure {
            kind,
        }))));
    }
    v.push(Arc::new(OnRuntime(Detectable::two(StackStructure))));
    v.push(Arc::new(OnRuntime(Detectable::two(ElimStackStructure {
        slots: 1,
    }))));
    v.push(Arc::new(OnRuntime(Detectable::two(CombQueueStructure))));
    v.push(Arc::new(OnRuntime(Detectable::with_threads(
        QueueStructure { kind: MsqKind::Vol },
        3,
        "msq-mmt-vol-3t",
        "Memento MSQ-mmt-vol (insert/delete, DRAM tail), 3 threads x 2 ops, detectability checked",
    ))));
    v.push(Arc::new(OnRuntime(Detectable::with_threads(
        QueueStructure { kind: MsqKind::Cas },
        3,
        "msq-mmt-cas-3t",
        "Memento MSQ-mmt-cas (detectable CAS), 3 threads x 2 ops, detectability checked",
    ))));
    v.push(Arc::new(OnRuntime(Detectable::with_threads(
        ElimStackStructure { slots: 1 },
        3,
        "elim-stack-mmt-3t",
        "Memento elimination-backoff stack (Treiber + exchangers), 3 threads x 2 ops, detectability checked",
    ))));
    v.push(Arc::new(OnRuntime(Detectable::with_threads(
        ElimStackStructure { slots: 3 },
        3,
        "elim-stack-mmt-3t-3x",
        "Memento elimination-backoff stack with three exchangers (the hash of the φ-node picks one), 3 threads x 2 ops, detectability checked",
    ))));
    v.push(Arc::new(OnRuntime(Detectable::with_threads(
        CombQueueStructure,
        3,
        "combq-mmt-3t",
        "Memento combining queue CombQ-mmt, 3 threads x 2 ops, detectability checked",
    ))));
    v.push(Arc::new(OnRuntime(Detectable::with_threads(
        StackStructure,
        3,
        "treiber-mmt-3t",
        "Memento Treiber stack (detectable CAS, version-tagged top), 3 threads x 2 ops, detectability checked",
    ))));
    v.push(Arc::new(OnRuntime(
        Detectable::with_threads(
            QueueStructure {
                kind: MsqKind::Indel,
            },
            3,
            "msq-mmt-indel-3t-impatient",
            "Memento MSQ-mmt-indel (insert/delete), 3 threads x 2 ops, PATIENCE 0 (a thread that meets a dequeue in progress helps it at once, Algorithm 3 L10-L12), detectability checked",
        )
        .impatient(0),
    )));
    v.push(Arc::new(OnRuntime(SoftSet { threads: 2 })));
    v.push(Arc::new(OnRuntime(SoftSet { threads: 3 })));
    v.push(Arc::new(OnRuntime(ClevelSet { drain: false })));
    v.push(Arc::new(OnRuntime(ClevelSet { drain: true })));
    v.extend(prim::all());
    v
}

const BASE: u64 = 4096;
const HEAP: u64 = 2 << 20;
const THREADS: usize = 2;

/// How the scenarios' runtimes invalidate mementos: `PERDURE_CLEAR=zero`
/// for the seed's zeroing, else the O(1) floor.
fn clear_mode() -> ClearMode {
    match std::env::var("PERDURE_CLEAR").as_deref() {
        Ok("zero") => ClearMode::Zero,
        _ => ClearMode::Floor,
    }
}

/// Whether every root operation the workload runs gets a thread crash
/// injected (`PERDURE_THREAD_CRASH=1`): after a seeded number of its
/// persistence events (0–31, from the thread id and the operation's index),
/// so some operations crash early, some late and some not at all; the
/// runtime re-runs a crashed operation with its memento (§2.5 (3)), under
/// the explorer's schedules, helpers included.
fn thread_crash_mode() -> bool {
    std::env::var("PERDURE_THREAD_CRASH").as_deref() == Ok("1")
}

/// `PERDURE_THREAD_CRASH_AT=n`: every root operation crashes after its
/// `n`th persistence event instead of a seeded one (a sweep over `n` reaches
/// each window of an operation in turn).
fn thread_crash_at() -> Option<u64> {
    std::env::var("PERDURE_THREAD_CRASH_AT").ok()?.parse().ok()
}

static THREAD_CRASHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Thread crashes injected so far in this process (`PERDURE_THREAD_CRASH=1`).
pub fn thread_crashes_injected() -> u64 {
    THREAD_CRASHES.load(std::sync::atomic::Ordering::Relaxed)
}

/// The persistency model explored: by default a locked RMW does not
/// complete earlier write-backs (as with `Msync`, so every fence the code
/// needs off x86 is checked); `PERDURE_SIM_RMW=1` explores x86's Px86, where
/// it does and the code leaves those fences out (as on `Pmem`).
fn sim_options() -> perdure_pm::SimOptions {
    perdure_pm::SimOptions {
        rmw_completes_flushes: std::env::var("PERDURE_SIM_RMW").as_deref() == Ok("1"),
        ..perdure_pm::SimOptions::default()
    }
}

fn config(threads: usize) -> Config {
    Config {
        threads,
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
    patience: Option<u64>,
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
    let mut rt = Runtime::<Sim, M>::open_with(pool_ref, BASE, ClockKind::Counter)
        .map_err(|e| e.to_string())?;
    rt.set_clear_mode(clear_mode());
    if let Some(p) = patience {
        rt.set_patience(p);
    }
    let obj = obj(&rt)?;
    Ok(State {
        rt,
        obj,
        _pool: keep,
    })
}

/// What differs between the scenarios that run on a Memento runtime; the
/// rest — pool size, runtime creation and reopening, resumption of cut-off
/// calls — is [`OnRuntime`]'s, once for all of them.
trait RuntimeScenario: Send + Sync + 'static {
    /// The root memento of its threads.
    type Mmt: Memento + 'static;
    /// The object and its DRAM state.
    type Obj: Send + Sync + 'static;
    /// Scenario name.
    fn name(&self) -> &'static str;
    /// One line saying what it exercises.
    fn description(&self) -> &'static str;
    /// The sequential object of `HISTORY.md`.
    fn object(&self) -> &'static str;
    /// Threads of the runtime.
    fn threads(&self) -> usize {
        THREADS
    }
    /// PATIENCE of the runtime's helping loads, if not the counter clock's
    /// default (`Some(0)`: help a transient word at once, so every helping
    /// path runs whenever a thread meets another's operation in progress).
    fn patience(&self) -> Option<u64> {
        None
    }
    /// Creates the object with thread 1's handle; returns the offset to
    /// store as the object root.
    fn create(&self, h: &mut Handle<'_, '_, Sim, Self::Mmt>) -> Result<u64, MementoError>;
    /// The object at the runtime's object root, after its start-up recovery.
    fn attach(&self, rt: &Runtime<'static, Sim, Self::Mmt>) -> Result<Self::Obj, String>;
    /// The object's initial state as the history's `init`, when
    /// [`RuntimeScenario::create`] builds it non-empty.
    fn init(&self) -> Option<Value> {
        None
    }
    /// Each thread's calls.
    fn workload(&self, seed: u64) -> Vec<Vec<Call>>;
    /// Runs `call` as `op`'s root operation ([`Op::run`]).
    fn call(&self, op: Op<'_, Self::Mmt, Self::Obj>, call: &Call) -> Result<Value, String>;
    /// The calls that read the recovered object back.
    fn observe(&self, pool: &Pool<Sim>, st: &State<Self::Mmt, Self::Obj>) -> Observed;
}

/// What [`RuntimeScenario::observe`] returns: the observing calls and
/// their results.
type Observed = Result<Vec<(Call, Value)>, String>;

/// One root operation of a [`RuntimeScenario`]: the run's state, the
/// calling thread (0-based) and, when a call cut off by the crash is
/// resumed, its index in the thread's sequence.
struct Op<'s, M: Memento, S> {
    st: &'s State<M, S>,
    thread: usize,
    index: Option<usize>,
}

impl<M: Memento, S> Clone for Op<'_, M, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: Memento, S> Copy for Op<'_, M, S> {}

impl<'s, M: Memento + 'static, S> Op<'s, M, S> {
    /// A new call by `thread` (not a resumed one).
    fn new(st: &'s State<M, S>, thread: usize) -> Self {
        Op {
            st,
            thread,
            index: None,
        }
    }

    /// The object the call operates on.
    fn obj(&self) -> &'s S {
        &self.st.obj
    }

    /// Runs `body` as this root operation, or reports its stored result if
    /// it already completed.
    fn run(
        self,
        mut body: impl FnMut(&mut Handle<'_, 'static, Sim, M>, &mut M, u64) -> u64,
    ) -> Result<u64, String> {
        self.try_run(|h, m, i| Ok::<u64, std::convert::Infallible>(body(h, m, i)))
    }

    /// [`Op::run`] of a fallible body ([`Handle::try_run_root`]): an error
    /// fails the run (a structure's operation should not fail in these
    /// small explorations; out of memory would be a bug in the scenario's
    /// sizing).
    fn try_run<E: std::fmt::Display>(
        self,
        body: impl FnMut(&mut Handle<'_, 'static, Sim, M>, &mut M, u64) -> Result<u64, E>,
    ) -> Result<u64, String> {
        try_run_call(self.st, self.thread, self.index, body)
    }
}

/// A [`RuntimeScenario`] as the explorer's [`Scenario`].
struct OnRuntime<T>(T);

impl<T: RuntimeScenario> OnRuntime<T> {
    fn st<'s>(&self, session: &'s Session) -> Result<&'s State<T::Mmt, T::Obj>, String> {
        crate::session::state(session)
    }
}

impl<T: RuntimeScenario> Scenario for OnRuntime<T> {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn description(&self) -> &'static str {
        self.0.description()
    }

    fn object(&self) -> &'static str {
        self.0.object()
    }

    fn init(&self) -> Option<Value> {
        self.0.init()
    }

    fn sim_options(&self) -> perdure_pm::SimOptions {
        sim_options()
    }

    fn pool_size(&self) -> u64 {
        BASE + Runtime::<Sim, T::Mmt>::required_bytes(&config(self.0.threads()))
    }

    fn setup(&self, pool: &Pool<Sim>) -> Result<(), String> {
        let rt = Runtime::<Sim, T::Mmt>::create(pool, BASE, &config(self.0.threads()))
            .map_err(|e| e.to_string())?;
        let mut h = rt.handle(1).map_err(|e| e.to_string())?;
        let root = self.0.create(&mut h).map_err(|e| e.to_string())?;
        drop(h);
        pool.psync();
        rt.set_object_root(root).map_err(|e| e.to_string())
    }

    fn open(&self, pool: &Arc<Pool<Sim>>, after_crash: bool) -> Result<Session, String> {
        let st: State<T::Mmt, T::Obj> =
            open_state(pool, after_crash, self.0.patience(), |rt| self.0.attach(rt))?;
        Ok(Arc::new(st))
    }

    fn workload(&self, seed: u64) -> Vec<Vec<Call>> {
        self.0.workload(seed)
    }

    fn apply(&self, at: At<'_>, call: &Call) -> Result<Value, String> {
        self.0.call(Op::new(self.st(at.session)?, at.thread), call)
    }

    fn recover(&self, _pool: &Pool<Sim>) -> Result<(), String> {
        Ok(()) // Runtime::open and the object's attach in `open` are the recovery.
    }

    fn recover_call(&self, at: At<'_>, index: usize, call: &Call) -> Result<Option<Value>, String> {
        let op = Op {
            index: Some(index),
            ..Op::new(self.st(at.session)?, at.thread)
        };
        self.0.call(op, call).map(Some)
    }

    fn observe(&self, at: At<'_>) -> Result<Vec<(Call, Value)>, String> {
        self.0.observe(at.pool, self.st(at.session)?)
    }
}

/// [`Op::try_run`]: runs `body` as `thread`'s root operation number
/// `index`, or reports its stored result if it already completed.
fn try_run_call<M: Memento + 'static, S, E: std::fmt::Display>(
    st: &State<M, S>,
    thread: usize,
    index: Option<usize>,
    body: impl FnMut(&mut Handle<'_, 'static, Sim, M>, &mut M, u64) -> Result<u64, E>,
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
    if index.is_none() && thread_crash_mode() {
        let k = st.rt.next_op(tid);
        let n = thread_crash_at().unwrap_or(
            ((tid as u64 * 0x9E37_79B9) ^ k.wrapping_mul(0x2545_F491)).wrapping_mul(0xFF51_AFD7)
                >> 59,
        );
        h.crash_after(Some(n));
        perdure_memento::quiet_thread_crashes();
    }
    let done = h.try_run_root(body);
    h.crash_after(None);
    let done = done.map_err(|e| format!("thread {tid}: the operation failed: {e}"))?;
    THREAD_CRASHES.fetch_add(
        u64::from(done.thread_crashes),
        std::sync::atomic::Ordering::Relaxed,
    );
    Ok(done.result)
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

fn mixed_workload(seed: u64, threads: usize, push: &str, pop: &str) -> Vec<Vec<Call>> {
    (0..threads as u64)
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

/// A detectable structure as the explorer drives it: how to build it, find
/// it again after a crash, run one call, and read it back.
pub trait Structure: Send + Sync + 'static {
    /// The root memento of its threads.
    type Mmt: Memento + 'static;
    /// The handle on the structure (with its DRAM state, if any).
    type Obj: StructureOps<Self::Mmt>;
    /// Scenario name.
    fn name(&self) -> &'static str;
    /// One line saying what it exercises.
    fn description(&self) -> &'static str;
    /// The sequential object of `HISTORY.md`.
    fn object(&self) -> &'static str;
    /// The insert and remove operation names (`enq`/`deq`, `push`/`pop`).
    fn ops(&self) -> (&'static str, &'static str);
    /// Creates the empty structure; returns the offset to store as the object root.
    fn create(&self, h: &mut Handle<'_, '_, Sim, Self::Mmt>) -> Result<u64, MementoError>;
    /// The structure at the object root, after its start-up recovery.
    fn attach(&self, pool: &Pool<Sim>, root: u64) -> Result<Self::Obj, MementoError>;
}

/// What the explorer runs on a detectable structure of
/// `perdure_memento::ds`: one root operation, and the contents after
/// recovery. Each structure has both as its own methods.
pub trait StructureOps<M: Memento>: Send + Sync + 'static {
    /// One root operation's body: insert `Some(v)` or remove.
    fn run(
        &self,
        h: &mut Handle<'_, 'static, Sim, M>,
        mmt: &mut M,
        op: Option<u64>,
    ) -> Result<u64, MementoError>;
    /// The values in removal order, read single-threaded after recovery.
    fn contents(&self, pool: &Pool<Sim>) -> Result<Vec<u64>, MementoError>;
}

/// [`StructureOps`] for structures by their own `run` and `contents`.
macro_rules! structure_ops {
    ($($obj:ty: $mmt:ty),* $(,)?) => {$(
        impl StructureOps<$mmt> for $obj {
            fn run(
                &self,
                h: &mut Handle<'_, 'static, Sim, $mmt>,
                mmt: &mut $mmt,
                op: Option<u64>,
            ) -> Result<u64, MementoError> {
                <$obj>::run(self, h, mmt, op)
            }
            fn contents(&self, pool: &Pool<Sim>) -> Result<Vec<u64>, MementoError> {
                <$obj>::contents(self, pool)
            }
        }
    )*};
}

structure_ops!(
    Msq: QueueMmt,
    TreiberStack: StackMmt,
    CombQueue: CombQMmt,
    ElimStack: ElimStackMmt,
);

/// The scenario of a [`Structure`] under two threads (or more).
#[derive(Debug, Clone, Copy)]
pub struct Detectable<S> {
    structure: S,
    threads: usize,
    name: &'static str,
    description: &'static str,
    patience: Option<u64>,
}

impl<S: Structure> Detectable<S> {
    /// Two threads, the structure's own name and description.
    pub fn two(structure: S) -> Detectable<S> {
        Detectable {
            threads: THREADS,
            name: structure.name(),
            description: structure.description(),
            structure,
            patience: None,
        }
    }

    /// `threads` threads under a scenario name of its own.
    pub fn with_threads(
        structure: S,
        threads: usize,
        name: &'static str,
        description: &'static str,
    ) -> Detectable<S> {
        Detectable {
            structure,
            threads,
            name,
            description,
            patience: None,
        }
    }

    /// The same with PATIENCE `patience` (0: a thread that meets another's
    /// operation in progress helps it at once).
    pub fn impatient(self, patience: u64) -> Detectable<S> {
        Detectable {
            patience: Some(patience),
            ..self
        }
    }
}

impl<S: Structure> RuntimeScenario for Detectable<S> {
    type Mmt = S::Mmt;
    type Obj = S::Obj;

    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        self.description
    }

    fn threads(&self) -> usize {
        self.threads
    }

    fn patience(&self) -> Option<u64> {
        self.patience
    }

    fn object(&self) -> &'static str {
        self.structure.object()
    }

    fn create(&self, h: &mut Handle<'_, '_, Sim, S::Mmt>) -> Result<u64, MementoError> {
        self.structure.create(h)
    }

    fn attach(&self, rt: &Runtime<'static, Sim, S::Mmt>) -> Result<S::Obj, String> {
        self.structure
            .attach(rt.pool(), rt.object_root())
            .map_err(|e| e.to_string())
    }

    fn workload(&self, seed: u64) -> Vec<Vec<Call>> {
        let (ins, rem) = self.structure.ops();
        mixed_workload(seed, self.threads, ins, rem)
    }

    fn call(&self, at: Op<'_, S::Mmt, S::Obj>, call: &Call) -> Result<Value, String> {
        let op = arg(call)?;
        let w = at.try_run(|h, m, _| at.obj().run(h, m, op))?;
        Ok(result_value(op, w))
    }

    fn observe(&self, pool: &Pool<Sim>, st: &State<S::Mmt, S::Obj>) -> Observed {
        let (_, rem) = self.structure.ops();
        let mut out: Vec<(Call, Value)> = st
            .obj
            .contents(pool)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|v| (Call::new(rem, vec![]), json!(v)))
            .collect();
        out.push((Call::new(rem, vec![]), Value::Null));
        Ok(out)
    }
}

/// A Michael–Scott queue variant.
#[derive(Debug, Clone, Copy)]
pub struct QueueStructure {
    /// The variant.
    pub kind: MsqKind,
}

impl Structure for QueueStructure {
    type Mmt = QueueMmt;
    type Obj = Msq;

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

    fn ops(&self) -> (&'static str, &'static str) {
        ("enq", "deq")
    }

    fn create(&self, h: &mut Handle<'_, '_, Sim, QueueMmt>) -> Result<u64, MementoError> {
        Msq::create(self.kind, h).map(|q| q.offset())
    }

    fn attach(&self, pool: &Pool<Sim>, root: u64) -> Result<Msq, MementoError> {
        let q = Msq::at(self.kind, root);
        q.recover(pool)?;
        Ok(q)
    }
}

/// The detectable Treiber stack.
#[derive(Debug, Clone, Copy)]
pub struct StackStructure;

impl Structure for StackStructure {
    type Mmt = StackMmt;
    type Obj = TreiberStack;

    fn name(&self) -> &'static str {
        "treiber-mmt"
    }

    fn description(&self) -> &'static str {
        "Memento Treiber stack (detectable CAS), 2 threads x 2 ops, detectability checked"
    }

    fn object(&self) -> &'static str {
        "stack"
    }

    fn ops(&self) -> (&'static str, &'static str) {
        ("push", "pop")
    }

    fn create(&self, h: &mut Handle<'_, '_, Sim, StackMmt>) -> Result<u64, MementoError> {
        TreiberStack::create(h).map(|s| s.offset())
    }

    fn attach(&self, pool: &Pool<Sim>, root: u64) -> Result<TreiberStack, MementoError> {
        pool.check_range(root, NODE, 64)?;
        Ok(TreiberStack::at(root))
    }
}

/// SOFT-mmt (seed 001, §7.2) checked as a `set`: `insert(k)` maps `k` to
/// [`SoftSet::value`], `remove(k)` deletes, `contains(k)` is a lookup (which
/// must return that value). Two buckets, keys 1 and 2, so chains are shared.
/// (HISTORY.md's `map` does not fit: its `put` overwrites and returns the
/// previous value, SOFT's insert does neither.)
#[derive(Debug, Clone, Copy)]
pub struct SoftSet {
    /// Threads of the workload, 2 operations each (2 or 3).
    pub threads: usize,
}

impl SoftSet {
    /// The value inserted with key `k`.
    pub fn value(k: u64) -> u64 {
        10 * k + 1
    }

    fn op(call: &Call) -> Result<SoftOp, String> {
        let k = call
            .args
            .first()
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("{} needs a key", call.op))?;
        match call.op.as_str() {
            "insert" => Ok(SoftOp::Insert(k, Self::value(k))),
            "remove" => Ok(SoftOp::Delete(k)),
            "contains" => Ok(SoftOp::Lookup(k)),
            o => Err(format!("unknown operation {o}")),
        }
    }
}

impl RuntimeScenario for SoftSet {
    type Mmt = SoftMmt;
    type Obj = SoftTable;

    fn name(&self) -> &'static str {
        match self.threads {
            2 => "soft-mmt",
            _ => "soft-mmt-3t",
        }
    }

    fn description(&self) -> &'static str {
        match self.threads {
            2 => "Memento SOFT-mmt hash table as a set, 2 threads x 2 ops on 2 keys, detectability checked",
            _ => "Memento SOFT-mmt hash table as a set, 3 threads x 2 ops on 2 keys, detectability checked",
        }
    }

    /// The workload's threads and one more, whose root operations only
    /// observe (as `CasRegister`'s): an observing lookup as a root
    /// operation of a workload thread would advance that thread's root
    /// slot, and a crash during recovery after it would leave the thread's
    /// cut-off call without its result.
    fn threads(&self) -> usize {
        self.threads + 1
    }

    fn object(&self) -> &'static str {
        "set"
    }

    fn create(&self, h: &mut Handle<'_, '_, Sim, SoftMmt>) -> Result<u64, MementoError> {
        SoftTable::create(h, 2).map(|t| t.offset())
    }

    fn attach(&self, rt: &Runtime<'static, Sim, SoftMmt>) -> Result<SoftTable, String> {
        SoftTable::attach(rt.pool(), rt.object_root()).map_err(|e| e.to_string())
    }

    fn workload(&self, seed: u64) -> Vec<Vec<Call>> {
        // Thread t inserts a key, then inserts, removes or looks up a key;
        // both keys are drawn from {1, 2} by the seed.
        (0..self.threads as u64)
            .map(|t| {
                let bits = seed >> (8 * t);
                let key = |i: u64| json!(1 + ((bits >> i) & 1));
                let second = ["insert", "remove", "contains"][((bits >> 2) % 3) as usize];
                vec![
                    Call::new("insert", vec![key(0)]),
                    Call::new(second, vec![key(1)]),
                ]
            })
            .collect()
    }

    fn call(&self, at: Op<'_, SoftMmt, SoftTable>, call: &Call) -> Result<Value, String> {
        let op = Self::op(call)?;
        let obj = at.obj();
        let w = at.try_run(|h, m, _| {
            let w = obj.run(h, m, op).map_err(|e| e.to_string())?;
            if let (SoftOp::Delete(k), 1) = (op, w) {
                // The node this delete claimed is off the chain once it
                // returns (SOFT's Harris unlink, marked and flushed).
                let [node, _] = m.remove.target.peek(h.pool()).0;
                if obj.on_chain(h.pool(), k, node).map_err(|e| e.to_string())? {
                    return Err(format!(
                        "remove({k}) returned true with its node {node:#x} still on the chain"
                    ));
                }
            }
            Ok::<u64, String>(w)
        })?;
        match (op, w) {
            (SoftOp::Lookup(k), w) => match decode_opt(w) {
                None => Ok(json!(false)),
                Some(v) if v == Self::value(k) => Ok(json!(true)),
                Some(v) => Err(format!("lookup({k}) returned value {v}")),
            },
            (_, w) => Ok(json!(w == 1)),
        }
    }

    fn observe(&self, pool: &Pool<Sim>, st: &State<SoftMmt, SoftTable>) -> Observed {
        // Lookups read the rebuilt DRAM copy; they must agree with the PM
        // copy read directly.
        let pm = st.obj.contents(pool).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for k in [1u64, 2] {
            let call = Call::new("contains", vec![json!(k)]);
            let in_pm = pm.iter().any(|&(key, v)| key == k && v == Self::value(k));
            let seen = self.call(Op::new(st, self.threads), &call)?;
            if seen != json!(in_pm) {
                return Err(format!("contains({k}): DRAM says {seen}, PM says {in_pm}"));
            }
            out.push((call, seen));
        }
        Ok(out)
    }
}

/// Clevel-mmt (seed 001, §7.2) checked as a `set`, on a table small enough
/// that the workload grows it and rehashes: levels of 1 and 2 one-slot
/// buckets (3 slots). Thread `t` inserts its own keys `10t + 1` and
/// `10t + 2` (the fourth insert adds a level; Clevel's insert is not
/// linearizable for concurrent inserts of one key: see `ds::clevel`), then
/// removes or looks up a key of the other thread's; a workload thread's
/// lookup is one root operation that first runs the detectable rehash
/// (Clevel's resize thread, invisible to the set) and then looks up.
///
/// `drain` (`clevel-mmt-drain`): the rehash's races, which the growing
/// workload reaches only by chance. The table starts with
/// [`ClevelSet::PRELOADED`] in three levels (1, 2 and 4 buckets; key 21
/// alone in the bottom one, which is to be drained); thread 1 drains it
/// (a lookup of 21, so a resize first) while thread 2 removes 21 and then
/// looks up 12 (a second resize, racing the first). Thread 2's remove
/// either empties the bottom slot before the rehash reaches it (which
/// then seals it), or meets 21 marked as moving, waits for the move, and
/// completes the move's mark itself before removing the placed copy
/// (`seal_moved`): the delete/move race of Clevel's bug (ASPLOS 2022).
#[derive(Debug, Clone, Copy)]
pub struct ClevelSet {
    /// The pre-loaded table and the rehash races, instead of growth.
    pub drain: bool,
}

impl ClevelSet {
    /// The keys of `clevel-mmt-drain`'s table, in their bulk-load order
    /// (21 lands alone in the bottom level: pinned by perdure-memento's
    /// unit test `the_drain_scenarios_table_has_21_alone_in_its_bottom_level`;
    /// `create` checks the three levels and that a rehash is due).
    pub const PRELOADED: [u64; 4] = [11, 12, 21, 22];

    /// The value inserted with key `k`.
    pub fn value(k: u64) -> u64 {
        10 * k + 3
    }
}

impl RuntimeScenario for ClevelSet {
    type Mmt = ClevelMmt;
    type Obj = ClevelTable;

    fn name(&self) -> &'static str {
        if self.drain {
            "clevel-mmt-drain"
        } else {
            "clevel-mmt"
        }
    }

    fn description(&self) -> &'static str {
        if self.drain {
            "Memento Clevel-mmt hash table as a set, pre-loaded in three levels, 2 threads: a rehash draining the bottom level against a remove of its key and a second rehash, detectability checked"
        } else {
            "Memento Clevel-mmt hash table as a set, 2 threads x 3 ops, growth and a detectable rehash, detectability checked"
        }
    }

    /// The workload's threads and an observer (as [`SoftSet`]'s).
    fn threads(&self) -> usize {
        THREADS + 1
    }

    fn object(&self) -> &'static str {
        "set"
    }

    fn create(&self, h: &mut Handle<'_, '_, Sim, ClevelMmt>) -> Result<u64, MementoError> {
        if !self.drain {
            return ClevelTable::create(h, 1, 1).map(|t| t.offset());
        }
        let items: Vec<(u64, u64)> = Self::PRELOADED
            .iter()
            .map(|&k| (k, Self::value(k)))
            .collect();
        let t = ClevelTable::create_with(h, 1, 1, &items)?;
        // The races need 21 alone in a bottom level that is to be drained:
        // three levels (1, 2 and 4 buckets of one slot) and a rehash due.
        let stats = t.stats(h.pool())?;
        if stats.levels != 3 || stats.slots != 7 || !t.needs_resize(h) {
            return Err(MementoError::Config(format!(
                "clevel-mmt-drain: the bulk load gave {stats:?}, not three levels with a rehash due"
            )));
        }
        Ok(t.offset())
    }

    fn init(&self) -> Option<Value> {
        self.drain.then(|| json!(Self::PRELOADED))
    }

    fn attach(&self, rt: &Runtime<'static, Sim, ClevelMmt>) -> Result<ClevelTable, String> {
        ClevelTable::attach(rt.pool(), rt.object_root()).map_err(|e| e.to_string())
    }

    fn workload(&self, seed: u64) -> Vec<Vec<Call>> {
        if self.drain {
            return vec![
                vec![Call::new("contains", vec![json!(21)])],
                vec![
                    Call::new("remove", vec![json!(21)]),
                    Call::new("contains", vec![json!(12)]),
                ],
            ];
        }
        (1..=THREADS as u64)
            .map(|t| {
                let bits = seed >> (8 * t);
                let other = json!(10 * (3 - t) + 1 + (bits & 1));
                let third = if bits & 2 == 0 { "remove" } else { "contains" };
                vec![
                    Call::new("insert", vec![json!(10 * t + 1)]),
                    Call::new("insert", vec![json!(10 * t + 2)]),
                    Call::new(third, vec![other]),
                ]
            })
            .collect()
    }

    fn call(&self, at: Op<'_, ClevelMmt, ClevelTable>, call: &Call) -> Result<Value, String> {
        let k = call
            .args
            .first()
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("{} needs a key", call.op))?;
        let worker = at.thread < THREADS;
        let obj = at.obj();
        let w = at.try_run(|h, m, _| match call.op.as_str() {
            "insert" => obj
                .run(h, m, ClevelOp::Insert(k, Self::value(k)))
                .map_err(|e| e.to_string()),
            "remove" => obj
                .run(h, m, ClevelOp::Delete(k))
                .map_err(|e| e.to_string()),
            "contains" => {
                if worker {
                    obj.resize(h, &mut m.resize).map_err(|e| e.to_string())?;
                }
                obj.run(h, m, ClevelOp::Lookup(k))
                    .map_err(|e| e.to_string())
            }
            o => Err(format!("unknown operation {o}")),
        })?;
        match call.op.as_str() {
            "contains" => match decode_opt(w) {
                None => Ok(json!(false)),
                Some(v) if v == Self::value(k) => Ok(json!(true)),
                Some(v) => Err(format!("lookup({k}) returned value {v}")),
            },
            _ => Ok(json!(w == 1)),
        }
    }

    fn observe(&self, pool: &Pool<Sim>, st: &State<ClevelMmt, ClevelTable>) -> Observed {
        // Lookups through the recovered table must agree with its contents
        // read directly.
        let held = st.obj.contents(pool).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for k in [11u64, 12, 21, 22] {
            let call = Call::new("contains", vec![json!(k)]);
            let direct = held.iter().any(|&(key, v)| key == k && v == Self::value(k));
            let seen = self.call(Op::new(st, THREADS), &call)?;
            if seen != json!(direct) {
                return Err(format!(
                    "contains({k}): lookup says {seen}, the slots say {direct}"
                ));
            }
            out.push((call, seen));
        }
        Ok(out)
    }
}

/// CombQ-mmt for the crash explorer (`combq-mmt`).
#[derive(Debug, Clone, Copy)]
pub struct CombQueueStructure;

impl Structure for CombQueueStructure {
    type Mmt = CombQMmt;
    type Obj = CombQueue;

    fn name(&self) -> &'static str {
        "combq-mmt"
    }

    fn description(&self) -> &'static str {
        "Memento CombQ-mmt (combining queue after PBcomb), 2 threads x 2 ops, detectability checked"
    }

    fn object(&self) -> &'static str {
        "queue"
    }

    fn ops(&self) -> (&'static str, &'static str) {
        ("enq", "deq")
    }

    fn create(&self, h: &mut Handle<'_, '_, Sim, CombQMmt>) -> Result<u64, MementoError> {
        CombQueue::create(h).map(|q| q.offset())
    }

    fn attach(&self, pool: &Pool<Sim>, root: u64) -> Result<CombQueue, MementoError> {
        CombQueue::at(pool, root)
    }
}

/// What [`ElimStackStructure`]'s red zones hold.
const RED_ZONE: u64 = 0x5245_445a_4f4e_4521;

/// The elimination stack for the crash explorer (`elim-stack-mmt`), with
/// `slots` exchangers.
#[derive(Debug, Clone, Copy)]
pub struct ElimStackStructure {
    /// Exchangers: 1 so that the explorer's threads meet; 3 so that the
    /// choice among them (`ElimStack::exchanger`) is exercised.
    slots: u64,
}

impl Structure for ElimStackStructure {
    type Mmt = ElimStackMmt;
    type Obj = ElimStack;

    fn name(&self) -> &'static str {
        "elim-stack-mmt"
    }

    fn description(&self) -> &'static str {
        "Memento elimination-backoff stack (detectable CAS + exchangers), 2 threads x 2 ops, detectability checked"
    }

    fn object(&self) -> &'static str {
        "stack"
    }

    fn ops(&self) -> (&'static str, &'static str) {
        ("push", "pop")
    }

    /// The stack's block between two red zones: blocks of its size
    /// allocated just before and after it (the heap carves a class's blocks
    /// in order, so they are its neighbours), filled with a pattern and
    /// persisted. `attach`, after every recovery, checks they are intact:
    /// an exchanger laid out beyond the stack's own block writes into one.
    fn create(&self, h: &mut Handle<'_, '_, Sim, ElimStackMmt>) -> Result<u64, MementoError> {
        let size = NODE * (1 + self.slots);
        let before = h.alloc(size)?;
        let s = ElimStack::create_with(h, self.slots)?;
        let after = h.alloc(size)?;
        if before + size != s.offset() || s.offset() + size != after {
            return Err(MementoError::Config(format!(
                "the red zones are not the stack's neighbours: {before:#x}, {:#x}, {after:#x}",
                s.offset()
            )));
        }
        for z in [before, after] {
            for w in (0..size).step_by(8) {
                h.store(z + w, RED_ZONE);
            }
            h.pwb(z, size);
        }
        h.pool().pfence();
        Ok(s.offset())
    }

    fn attach(&self, pool: &Pool<Sim>, root: u64) -> Result<ElimStack, MementoError> {
        let s = ElimStack::at(pool, root)?;
        let size = NODE * (1 + self.slots);
        for z in [root - size, root + size] {
            for w in (0..size).step_by(8) {
                let v = pool.word(z + w)?.load(std::sync::atomic::Ordering::Acquire);
                if v != RED_ZONE {
                    return Err(MementoError::CorruptStructure(format!(
                        "the red zone at {:#x}, beside the stack's block at {root:#x}, holds {v:#x}: something wrote outside the block",
                        z + w
                    )));
                }
            }
        }
        Ok(s)
    }
}
