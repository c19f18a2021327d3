//! Protocol-level traces of the five PTMs (feature `trace`; `perdure trace
//! redo-ptm|redo-timed|redo-opt|cx-ptm|cx-puc`), for trace validation
//! against `specs/ptm/` with TLC (`traces/ptm/`, `traces/SCHEMA.md`).
//! RedoTimed-PTM and RedoOpt-PTM run the Redo-PTM code with their
//! [`crate::redo::Variant`], CX-PUC the CX core; the hooks are shared.
//!
//! **Where the steps come from.** The library runs unmodified on the
//! [`Sim`] backend with its event trace on; every persistent-memory step the
//! specs model is a Sim event: the stores, write-backs (`pwb`), fences
//! (`pfence`, `psync`) and the CAS of `cur_comb` (`D + 64`) and of the
//! replicas' object words. The volatile steps are reported by one-line hooks
//! (`crate::trace_ev!`, empty without this feature) in `src/redo` and
//! `src/cx`, as [`Ev`]s:
//!
//! | hook | where | seed |
//! | --- | --- | --- |
//! | [`Ev::Announce`] | Redo `publish` | Algorithm 3 {1} (L2–L3): `req[tid]`, `announce[tid]` |
//! | [`Ev::Lock`] | Redo {5} after `exclusiveTryLock`; CX {2} `lock_any` | Alg. 3 L18; §4 step 2 |
//! | [`Ev::Simulate`] | Redo {7}, before the first closure runs | Alg. 3 L20 |
//! | [`Ev::Apply`] | Redo {7}, after each request's closure ran | Alg. 3 L23–L24 |
//! | [`Ev::Unlock`] | Redo L41; CX when a thread leaves its replica | Alg. 3 L41; §4 steps 2, 6 |
//! | [`Ev::Enqueue`] | CX `publish` (updates and enqueued reads) | §4 step 1, `applyRead` step 2 |
//!
//! A hook records the number of Sim events recorded so far
//! ([`Sim::trace_len`]), so the two streams merge in the order they
//! happened: the seeded scheduler ([`perdure_check::sched`]) runs one worker
//! at a time and hands over only at Sim accesses, so nothing else happens
//! between a hook and the next Sim access of its thread.
//!
//! **A run** ([`trace`]): a fresh pool, the PTM created on it, `threads`
//! workers each running `ops` transactions of a seeded workload on the
//! specs' object (`specs/ptm/PtmBase.tla`: `inc(a)`, `both()`, `incif()`,
//! `get(a)` on words `x[1]`, `x[2]`, kept at region offsets 64 and 128 so
//! each is alone on its cache line, as the spec's weakest placement), each
//! transaction between `Invoke` and `Return` steps (with its result). With
//! `crash`, a crash-free pass of the same seed lists the persistence events
//! the trace maps (object-word stores, non-temporal ones included, and
//! write-backs, fences, the `cur_comb`
//! CAS), the crash point is drawn among them from the seed (uniformly: the
//! copies' stores to other words would otherwise draw most points), the
//! same schedule is recorded up to it, one
//! allowed crash image is drawn (of up to 256 sampled), the PTM is reopened
//! on it (null recovery: `RedoPtm::open`, `CxPtm::open`) and every thread
//! goes on with its next transaction (the cut-off ones are lost, as in the
//! specs), traced too. A worker's first Sim access is a load of the header
//! word `D + 8·tid`: it tells which simulator thread is which thread id.
//!
//! The mapping to the trace specs' steps is in `traces/ptm/README.md`.

mod run;

pub use run::{cli_main, trace, Construction, Tamper, TraceError, TraceOptions, OPS};

use perdure_pm::{Backend, Pool, Sim};
use std::sync::Mutex;

/// A protocol step reported by a hook or by the producer (thread ids are
/// the PTM's, 0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// Redo {1}: thread `.0` announced its request number `.1`.
    Announce(usize, u64),
    /// Thread `.0` tried to lock a `Combined` exclusively: `Some(idx)` it
    /// got `combs[idx]`.
    Lock(usize, Option<usize>),
    /// Redo {7}: thread `.0` starts simulating the announced requests on
    /// its held `Combined` `.1`.
    Simulate(usize, usize),
    /// Redo {7}: thread `.0` ran request number `.2` of thread `.1` on its
    /// replica.
    Apply(usize, usize, u64),
    /// Thread `.0` gave up its lock on `Combined` `.1` (not designated by
    /// it).
    Unlock(usize, usize),
    /// CX {1}: thread `.0`'s node got ticket `.1` in the turn queue.
    Enqueue(usize, u64),
    /// The producer: thread `tid` starts its transaction number `i`, the
    /// operation `op` ([`OPS`]), as worker `worker` (thread ids are leased:
    /// a worker that started late may get the id of one that finished).
    Invoke {
        /// Thread id.
        tid: usize,
        /// Transaction number of the thread.
        i: u64,
        /// The operation (an index into [`OPS`]).
        op: usize,
        /// The producer's worker.
        worker: usize,
    },
    /// The producer: thread `tid`'s transaction `i` returned `res`.
    Return {
        /// Thread id.
        tid: usize,
        /// Transaction number of the thread.
        i: u64,
        /// Its result.
        res: u64,
    },
}

/// A reported step and the number of Sim events recorded before it.
#[derive(Clone, Copy, Debug)]
struct Hooked {
    at: usize,
    ev: Ev,
}

/// The steps reported while a traced run records (`None`: not recording).
static SINK: Mutex<Option<Vec<Hooked>>> = Mutex::new(None);
/// Whether a traced run records: the hooks' fast path when none does (a
/// build with the feature, such as the `perdure` binary, pays one relaxed
/// load per hook). A process-wide switch of the recorder, not part of any
/// protocol the models explore, so a `std` atomic rather than the
/// `crate::sync` facade (whose loom atomics cannot be statics).
static RECORDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn sink() -> std::sync::MutexGuard<'static, Option<Vec<Hooked>>> {
    SINK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reports `ev` (the hooks' entry point): recorded only while a traced run
/// records and only for a pool on the [`Sim`] backend, at the position of
/// the Sim events recorded so far.
pub(crate) fn emit<B: Backend>(pool: &Pool<B>, ev: Ev) {
    if !RECORDING.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let mut g = sink();
    let Some(v) = g.as_mut() else {
        return;
    };
    let Some(sim) = (pool.backend() as &dyn std::any::Any).downcast_ref::<Sim>() else {
        return;
    };
    v.push(Hooked {
        at: sim.trace_len(),
        ev,
    });
}

/// Starts recording reported steps (discarding any earlier ones).
fn start_recording() {
    *sink() = Some(Vec::new());
    RECORDING.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Stops recording; the steps reported since [`start_recording`].
fn take_recording() -> Vec<Hooked> {
    RECORDING.store(false, std::sync::atomic::Ordering::SeqCst);
    sink().take().unwrap_or_default()
}
