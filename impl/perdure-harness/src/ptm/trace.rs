//! Protocol-level traces of the five PTMs (`perdure trace
//! redo-ptm|redo-timed|redo-opt|cx-ptm|cx-puc`), for trace validation
//! against `specs/ptm/` with TLC (`traces/ptm/`, `traces/SCHEMA.md`).
//! RedoTimed-PTM and RedoOpt-PTM run the Redo-PTM code with their
//! `perdure_ptm::redo::Variant`, CX-PUC the CX core; the hooks are shared.
//!
//! **Where the steps come from.** The library runs unmodified on the
//! [`Sim`] backend with its event trace on; every persistent-memory step the
//! specs model is a Sim event: the stores, write-backs (`pwb`), fences
//! (`pfence`, `psync`) and the CAS of `cur_comb` (`D + 64`) and of the
//! replicas' object words. The volatile steps are reported by one-line hooks
//! (`trace_ev!`, empty without perdure-ptm's feature `trace`) in
//! `impl/perdure-ptm/src/redo` and `src/cx`, which report them through
//! `perdure_pm::trace_step!` to this module's recorder, as [`Ev`]s:
//!
//! | hook | where | seed |
//! | --- | --- | --- |
//! | [`Ev::Announce`] | Redo `publish` | Algorithm 3 {1} (L2–L3): `req[tid]`, `announce[tid]` |
//! | [`Ev::Lock`] | Redo {5} after `exclusiveTryLock`; CX {2} `lock_any` | Alg. 3 L18; §4 step 2 |
//! | [`Ev::GiveUp`] | RedoTimed's `lock_combined` giving the attempt up (`cur_comb` moved while it backed off) | §5 "Timed variant" |
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
//! each is alone on its cache line, as the spec's weakest placement), or
//! ([`Workload::Queue`]) perdure-ptm's queue in root slot 0, created first
//! by one thread alone, its words PtmBase's `QOffs` (a pwb maps to the lowest
//! of them on its line; block header and magic values as the spec has
//! them); each transaction between `Invoke` and `Return` steps (with its
//! result). With
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

use crate::traces::crash_image;
use perdure_check::sched::{self, mix};
use perdure_check::trace::Named;
use perdure_pm::hooks::{self, TraceStep, TraceVal};
use perdure_pm::region::BLOCK_TAG;
use perdure_pm::sim::{SimEvent, SimOp};
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{Pool, Sim, SimOptions};
use perdure_ptm::cx::CxPuc;
use perdure_ptm::ds::{self, hash, queue};
use perdure_ptm::internals::{sti, CUR_COMB, REPLICAS};
use perdure_ptm::redo::{RedoOptPtm, RedoTimedPtm};
use perdure_ptm::PtmError;
use perdure_ptm::{cx, redo, CxPtm, RedoPtm};
use perdure_ptm::{Transaction, TxRead};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A protocol step reported by a hook or by the producer (thread ids are
/// the PTM's, 0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// Redo {1}: thread `.0` announced its request number `.1`.
    Announce(usize, u64),
    /// Thread `.0` tried to lock a `Combined` exclusively: `Some(idx)` it
    /// got `combs[idx]`.
    Lock(usize, Option<usize>),
    /// RedoTimed {5}: thread `.0`'s `lock_combined` gave the attempt up,
    /// `cur_comb` having moved while it waited for `combs[0]`/`combs[1]`.
    GiveUp(usize),
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
    /// operation `op`, as worker `worker` (thread ids are leased: a worker
    /// that started late may get the id of one that finished; `None`: the
    /// queue's create, before the workers start).
    Invoke {
        /// Thread id.
        tid: usize,
        /// Transaction number of the thread.
        i: u64,
        /// The operation.
        op: Op,
        /// The producer's worker.
        worker: Option<usize>,
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

fn sink() -> std::sync::MutexGuard<'static, Option<Vec<Hooked>>> {
    SINK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A reported step as an [`Ev`] (`None`: a step the traces do not map,
/// such as a `Lock` that got no replica).
fn ev_of(s: &TraceStep<'_>) -> Option<Ev> {
    let int = |k: &str| match s.field(k) {
        Some(TraceVal::Int(v)) => Some(v),
        _ => None,
    };
    let tid = int("thread")? as usize;
    Some(match s.action {
        "Announce" => Ev::Announce(tid, int("seq")?),
        "Lock" => Ev::Lock(tid, int("comb").map(|c| c as usize)),
        "GiveUp" => Ev::GiveUp(tid),
        "Simulate" => Ev::Simulate(tid, int("comb")? as usize),
        "Apply" => Ev::Apply(tid, int("owner")? as usize, int("seq")?),
        "Unlock" => Ev::Unlock(tid, int("comb")? as usize),
        "Enqueue" => Ev::Enqueue(tid, int("ticket")?),
        _ => return None,
    })
}

/// Records `ev` at the position of the Sim events recorded so far.
fn emit(pool: &Pool<Sim>, ev: Ev) {
    if let Some(v) = sink().as_mut() {
        v.push(Hooked {
            at: pool.backend().trace_len(),
            ev,
        });
    }
}

/// Starts recording reported steps (discarding any earlier ones).
fn start_recording() {
    *sink() = Some(Vec::new());
    hooks::set_recorder(Some(Arc::new(|s: &TraceStep<'_>| {
        let (Some(at), Some(ev)) = (s.sim_pos, ev_of(s)) else {
            return;
        };
        if let Some(v) = sink().as_mut() {
            v.push(Hooked { at, ev });
        }
    })));
}

/// Stops recording; the steps reported since [`start_recording`].
fn take_recording() -> Vec<Hooked> {
    hooks::set_recorder(None);
    sink().take().unwrap_or_default()
}

/// A transaction of `specs/ptm/PtmBase.tla`'s workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Counters: `x[a]++`, returns the old `x[a]`.
    Inc(u64),
    /// Counters: `x[1]++` and `x[2]++`, returns the old `x[1]`.
    Both,
    /// Counters: `x[1]++` if `x[2] = 0`, returns the old `x[1]`.
    IncIf,
    /// Counters: read-only, returns `x[a]`.
    Get(u64),
    /// Queue: `ds::queue::create_in` at root slot 0, returns 0.
    QNew,
    /// Queue: `enqueue_in` of the value, returns 0.
    Enq(u64),
    /// Queue: `dequeue_in`, returns the value, 0 if the queue is empty.
    Deq,
    /// Queue: `len_in` (read-only), returns the count.
    QLen,
    /// Hash set: `create_set_in` at root slot 0 with `HASH_BUCKETS`
    /// buckets, returns 0.
    HNew,
    /// Hash set: `set_insert_in` of the key, 1 if it was added.
    HIns(u64),
    /// Hash set: `set_remove_in` of the key, 1 if it was removed.
    HDel(u64),
    /// Hash set: `set_contains_in` (read-only), 1 if the key is in.
    HHas(u64),
}

impl Op {
    /// PtmBase's name of the operation and its argument (`Tx(op, a)`).
    fn spec(self) -> (&'static str, u64) {
        match self {
            Op::Inc(a) => ("inc", a),
            Op::Both => ("both", 1),
            Op::IncIf => ("incif", 1),
            Op::Get(a) => ("get", a),
            Op::QNew => ("qnew", 0),
            Op::Enq(v) => ("enq", v),
            Op::Deq => ("deq", 0),
            Op::QLen => ("qlen", 0),
            Op::HNew => ("hnew", 0),
            Op::HIns(k) => ("hins", k),
            Op::HDel(k) => ("hdel", k),
            Op::HHas(k) => ("hhas", k),
        }
    }
}

/// The seeded mix of the counters: inc x[1], inc x[2], both, incif, get
/// x[1], get x[2].
const COUNTER_OPS: [Op; 6] = [
    Op::Inc(1),
    Op::Inc(2),
    Op::Both,
    Op::IncIf,
    Op::Get(1),
    Op::Get(2),
];
/// A transaction's result when the queue code returned an error (never a
/// value it stores: those are small).
const FAILED: u64 = u64::MAX;

/// Region offset of the counters' `x[w]`: root slot `8·w`, alone on its
/// cache line.
const fn x(w: u64) -> u64 {
    64 * w
}

/// Where the queue's region allocator starts (replica.rs `ALLOC_BASE`, the
/// spec's `QAB`).
const QAB: u64 = 8 * perdure_ptm::ROOTS as u64;
/// The words every structure on the region allocator has first (PtmBase's
/// `QOffs` and `HOffs` begin so): root slot 0, the allocator's bump, live
/// count and class-5 free list.
const ALLOC_WORDS: [u64; 4] = [0, QAB + 16, QAB + 24, QAB + 32];

/// The region offset of a structure's first block (PtmBase's `QH`): the
/// allocator's first block (`QAB + 512`) after the `reserved` bytes of
/// blocks the construction took before the structure (CX-PUC's object).
const fn first_block(reserved: u64) -> u64 {
    QAB + 512 + reserved
}

/// A structure's words after [`ALLOC_WORDS`]: how many lie in a row from
/// its first block (the queue's header block; the hash set's bucket array
/// and header block), and where its node blocks begin (4 words each).
fn fixed_layout(workload: Workload, reserved: u64) -> (u64, u64) {
    let h = first_block(reserved);
    match workload {
        Workload::Counters => (0, 0),
        Workload::Queue => (6, h + 64),
        Workload::HashSet => (10, h + 96),
    }
}

/// The bytes of region blocks CX-PUC's `u64` object takes before a
/// structure (one 32-byte block at the allocator's first; checked against
/// the created pool's bump by [`Layout::of`]).
const PUC_OBJECT_BLOCK: u64 = 32;

/// The hash set's buckets (PtmBase's `HBucket` has 2 entries per key).
const HASH_BUCKETS: u64 = 2;
/// The hash set's keys, 1..=HASH_KEYS: with 2 buckets a set of at most 4
/// never resizes (PtmBase does not model the resize).
const HASH_KEYS: u64 = 4;
/// PtmBase's `HBucket`: key `k`'s bucket (`ds::mix(k)` masked), `k` in
/// 1..=[`HASH_KEYS`]; [`trace`] checks it against the code's hash.
const SPEC_BUCKET: [u64; HASH_KEYS as usize] = [1, 0, 1, 0];
/// Node blocks of a structure's words the producer maps (a trace's `W` is
/// the part it uses: [`trace`]).
const QUEUE_BLOCKS: u64 = 32;
/// The spec's value of the header's magic (TLC's integers have 32 bits).
const SPEC_MAGIC: u64 = 1;
/// The pool: header, `cur_comb`, up to 6 replicas of 16 KiB.
const POOL: u64 = 128 << 10;
const LINE: u64 = 64;
/// Which construction to trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Construction {
    /// Redo-PTM (§5), `traces/ptm/redo/`.
    #[default]
    Redo,
    /// RedoTimed-PTM (§5, "Timed variant"), `traces/ptm/redo-timed/`: a
    /// fixed window (the measured one would make runs depend on the clock),
    /// never closing in runs with an even seed (only `combs[0]`/`combs[1]`,
    /// backoff) and closed at once in runs with an odd seed (the fallback to
    /// any replica).
    RedoTimed,
    /// RedoOpt-PTM (§5, "Additional optimizations"), `traces/ptm/redo-opt/`:
    /// non-temporal copies, store and flush aggregation, and a full-flush
    /// switch at the second distinct dirty line of a replica
    /// (`dirty_lines_per_replica: 1`), so a transaction that writes one line
    /// uses the postponed per-line `pwb` and one that writes both (`both`,
    /// or a replay of several) writes back the replica's whole used part.
    RedoOpt,
    /// CX-PTM (§4), `traces/ptm/cx/`.
    Cx,
    /// CX-PUC (§4), through its annotated [`perdure_ptm::Ptm`] interface
    /// over a `u64` object, `traces/ptm/cx-puc/`: the working copy's
    /// differing words stored into the replica, the whole used part
    /// written back per update.
    CxPuc,
}

impl Named for Construction {
    const ALL: &'static [Self] = &[
        Construction::Redo,
        Construction::RedoTimed,
        Construction::RedoOpt,
        Construction::Cx,
        Construction::CxPuc,
    ];

    /// The name `perdure trace` takes.
    fn name(self) -> &'static str {
        match self {
            Construction::Redo => "redo-ptm",
            Construction::RedoTimed => "redo-timed",
            Construction::RedoOpt => "redo-opt",
            Construction::Cx => "cx-ptm",
            Construction::CxPuc => "cx-puc",
        }
    }
}

/// The object a trace's transactions run on (PtmBase's workloads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    /// Two counters `x[1]`, `x[2]` (root slots, each alone on its line):
    /// a seeded mix of inc, both, incif and get.
    #[default]
    Counters,
    /// perdure-ptm's queue (`ds::queue`) in root slot 0, on the region
    /// allocator: created first (one transaction, before the workers
    /// start, never crashed), then a seeded mix of enq (half), deq (a
    /// third) and qlen.
    Queue,
    /// perdure-ptm's hash set (`ds::hash`, 2 buckets) in root slot 0:
    /// created first (as the queue), then a seeded mix of insert (half),
    /// remove (a third) and contains of keys 1..=4.
    HashSet,
}

impl Named for Workload {
    const ALL: &'static [Self] = &[Workload::Counters, Workload::Queue, Workload::HashSet];

    fn name(self) -> &'static str {
        match self {
            Workload::Counters => "counters",
            Workload::Queue => "queue",
            Workload::HashSet => "hash-set",
        }
    }
}

/// What a PTM trace runs: a construction and a workload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Target {
    /// The construction.
    pub construction: Construction,
    /// The transactions' object.
    pub workload: Workload,
}

/// A deliberate corruption of the first run's steps, which validation must
/// reject.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tamper {
    /// The first committing thread's next `Return` moved to right after its
    /// `cur_comb` CAS, before `pwb(cur_comb)` and the `psync`.
    ReturnBeforePsync,
    /// The replica write-backs of the first commit that has any deleted:
    /// the CAS designates a replica whose lines were not flushed.
    CasBeforeFlush,
    /// The last store of the first commit that changed a word of the
    /// replica it designates deleted: the replica misses an effect of what
    /// the CAS commits.
    LostStore,
    /// The first committing thread's next `Return` reports its result plus
    /// one: a result its place in the commit order does not give.
    WrongResult,
    /// The first `Apply` step (Redo {7}) doubled: the batch the next CAS
    /// commits holds one request twice.
    DoubleApply,
}

impl Named for Tamper {
    const ALL: &'static [Self] = &[
        Tamper::ReturnBeforePsync,
        Tamper::CasBeforeFlush,
        Tamper::LostStore,
        Tamper::WrongResult,
        Tamper::DoubleApply,
    ];

    fn name(self) -> &'static str {
        match self {
            Tamper::ReturnBeforePsync => "return-before-psync",
            Tamper::CasBeforeFlush => "cas-before-flush",
            Tamper::LostStore => "lost-store",
            Tamper::WrongResult => "wrong-result",
            Tamper::DoubleApply => "double-apply",
        }
    }
}

/// The most threads a trace has.
pub const MAX_THREADS: usize = 3;
/// The most transactions per thread.
pub const MAX_OPS: u64 = 6;

/// What to trace: threads 1..=[`MAX_THREADS`], transactions per thread
/// 1..=[`MAX_OPS`]; a crash is followed by null recovery; the tampering
/// corrupts the first run.
pub type TraceOptions = perdure_check::trace::TraceOptions<Target, Tamper>;

/// Errors of a traced run.
pub type TraceError = crate::traces::TraceError<PtmError, Tamper>;

/// Runs transaction `op` through handle `h`; the queue's in root slot 0
/// ([`FAILED`] if its code returned an error).
macro_rules! run_op {
    ($h:expr, $op:expr) => {
        match $op {
            Op::Inc(w) => {
                let off = x(w);
                $h.update_tx(move |tx| {
                    let v = tx.load(off);
                    tx.store(off, v + 1);
                    v
                })
            }
            Op::Both => $h.update_tx(|tx| {
                let (a, b) = (tx.load(x(1)), tx.load(x(2)));
                tx.store(x(1), a + 1);
                tx.store(x(2), b + 1);
                a
            }),
            Op::IncIf => $h.update_tx(|tx| {
                let a = tx.load(x(1));
                if tx.load(x(2)) == 0 {
                    tx.store(x(1), a + 1);
                }
                a
            }),
            Op::Get(w) => {
                let off = x(w);
                $h.read_tx(move |tx| tx.load(off))
            }
            Op::QNew => $h.update_tx(|tx| queue::create_in(tx, 0).map_or(FAILED, |_| 0)),
            Op::Enq(v) => {
                $h.update_tx(move |tx| queue::enqueue_in(tx, 0, v).map_or(FAILED, |()| 0))
            }
            Op::Deq => $h.update_tx(|tx| match queue::dequeue_in(tx, 0) {
                Ok(v) => v.unwrap_or(0),
                Err(_) => FAILED,
            }),
            Op::QLen => $h.read_tx(|tx| queue::len_in(tx, 0).unwrap_or(FAILED)),
            Op::HNew => {
                $h.update_tx(|tx| hash::create_set_in(tx, 0, HASH_BUCKETS).map_or(FAILED, |_| 0))
            }
            Op::HIns(k) => {
                $h.update_tx(move |tx| hash::set_insert_in(tx, 0, k).map_or(FAILED, u64::from))
            }
            Op::HDel(k) => {
                $h.update_tx(move |tx| hash::set_remove_in(tx, 0, k).map_or(FAILED, u64::from))
            }
            Op::HHas(k) => {
                $h.read_tx(move |tx| hash::set_contains_in(tx, 0, k).map_or(FAILED, u64::from))
            }
        }
    };
}

/// A worker's body: given its handle's thread id and a way to run
/// transaction `op` through that handle.
type Worker<'a> = dyn FnMut(usize, &dyn Fn(Op) -> u64) + 'a;

/// What the producer needs of a construction.
trait Traced: Sized + Sync {
    /// Formats `pool` and opens the PTM (`seed`: the run's, for a
    /// configuration that varies by run).
    fn create(pool: Pool<Sim>, threads: usize, seed: u64) -> Result<Self, PtmError>;
    /// Opens the PTM on a crash image (null recovery).
    fn open(pool: Pool<Sim>, threads: usize, seed: u64) -> Result<Self, PtmError>;
    fn the_pool(&self) -> &Pool<Sim>;
    fn region(&self) -> u64;
    /// `Combined` instances (replicas).
    fn combs(&self) -> usize;
    /// Runs `body` with a handle's thread id and a way to run a transaction.
    fn with_handle(&self, body: &mut Worker<'_>) -> Result<(), PtmError>;
    /// Bytes of region blocks the construction allocates at create, before
    /// any structure (PtmBase's `Reserved`).
    const RESERVED: u64 = 0;
}

fn redo_config(threads: usize) -> redo::Config {
    redo::Config {
        threads,
        ..redo::Config::small()
    }
}

fn cx_config(threads: usize) -> cx::Config {
    cx::Config {
        threads,
        ..cx::Config::small()
    }
}

/// RedoTimed-PTM's window in run `seed` (see [`Construction::RedoTimed`]).
fn timed_window(seed: u64) -> std::time::Duration {
    if seed % 2 == 0 {
        std::time::Duration::MAX
    } else {
        std::time::Duration::ZERO
    }
}

/// RedoTimed-PTM's configuration in run `seed`: its window by
/// [`timed_window`].
fn timed_config(threads: usize, seed: u64) -> redo::Config {
    redo::Config {
        timed_window: Some(timed_window(seed)),
        ..redo_config(threads)
    }
}

/// RedoOpt-PTM's configuration (see [`Construction::RedoOpt`]): its window
/// closed at once (the clock must not steer the runs; RedoTimed's traces
/// cover the window).
fn opt_config(threads: usize) -> redo::Config {
    redo::Config {
        dirty_lines_per_replica: 1,
        timed_window: Some(std::time::Duration::ZERO),
        ..redo_config(threads)
    }
}

/// [`Traced`] for a construction: its configuration for a run's thread
/// count and seed, its `Combined` instances as a function of the thread
/// count, and the initial value a PUC is created with (the rest is the same
/// for every PTM).
macro_rules! traced {
    ($ty:ty, $config:expr, $combs:expr $(, $init:expr, $reserved:expr)?) => {
        impl Traced for $ty {
            $(const RESERVED: u64 = $reserved;)?
            fn create(pool: Pool<Sim>, threads: usize, seed: u64) -> Result<Self, PtmError> {
                <$ty>::create(pool, &$config(threads, seed) $(, $init)?)
            }
            fn open(pool: Pool<Sim>, threads: usize, seed: u64) -> Result<Self, PtmError> {
                <$ty>::open(pool, &$config(threads, seed))
            }
            fn the_pool(&self) -> &Pool<Sim> {
                self.pool()
            }
            fn region(&self) -> u64 {
                self.region_len()
            }
            fn combs(&self) -> usize {
                $combs(self.threads())
            }
            fn with_handle(&self, body: &mut Worker<'_>) -> Result<(), PtmError> {
                let h = self.handle()?;
                body(h.tid(), &|op| run_op!(h, op));
                Ok(())
            }
        }
    };
}

/// The Redo-PTM family's `Combined` instances: one per thread and one more.
const REDO_COMBS: fn(usize) -> usize = |threads| threads + 1;
/// CX's: two per thread.
const CX_COMBS: fn(usize) -> usize = |threads| 2 * threads;

traced!(RedoPtm<Sim>, |t, _| redo_config(t), REDO_COMBS);
traced!(RedoTimedPtm<Sim>, timed_config, REDO_COMBS);
traced!(RedoOptPtm<Sim>, |t, _| opt_config(t), REDO_COMBS);
traced!(CxPuc<Sim, u64>, |t, _| cx_config(t), CX_COMBS, 0u64, PUC_OBJECT_BLOCK);
traced!(CxPtm<Sim>, |t, _| cx_config(t), CX_COMBS);

/// Pool offsets of what the trace maps, and the spec's object words.
struct Layout {
    header: u64,
    cur: u64,
    replicas: Vec<u64>,
    /// Bytes per replica.
    region: u64,
    workload: Workload,
    /// Bytes of blocks before the structure's ([`Traced::RESERVED`]).
    reserved: u64,
    /// Region offsets of the spec's words `x[1]`, `x[2]`, ... (ascending).
    words: Vec<u64>,
}

impl Layout {
    fn of<P: Traced>(p: &P, workload: Workload, seed: u64) -> Result<Layout, TraceError> {
        let header = p.the_pool().data_offset();
        let words = match workload {
            Workload::Counters => vec![x(1), x(2)],
            Workload::Queue | Workload::HashSet => {
                let (run, nodes) = fixed_layout(workload, P::RESERVED);
                ALLOC_WORDS
                    .iter()
                    .copied()
                    .chain((0..run).map(|j| first_block(P::RESERVED) + 8 * j))
                    .chain((0..4 * QUEUE_BLOCKS).map(|j| nodes + 8 * j))
                    .collect()
            }
        };
        let l = Layout {
            header,
            cur: header + CUR_COMB,
            replicas: (0..p.combs())
                .map(|r| header + REPLICAS + r as u64 * p.region())
                .collect(),
            region: p.region(),
            workload,
            reserved: P::RESERVED,
            words,
        };
        if l.replicas.last().map_or(0, |r| r + p.region()) > POOL
            || l.replicas.iter().any(|r| r % LINE != 0)
            || l.words.last().map_or(true, |&w| w >= p.region())
        {
            return Err(TraceError::unmapped(
                seed,
                "the replicas do not fit the pool or its lines, or the object its replicas: \
                 the layout is not the one this producer knows",
            ));
        }
        Ok(l)
    }

    /// `(replica, region offset)` of a pool offset inside a replica.
    fn in_replica(&self, off: u64) -> Option<(usize, u64)> {
        self.replicas
            .iter()
            .enumerate()
            .find_map(|(r, &b)| (b..b + self.region).contains(&off).then_some((r, off - b)))
    }

    /// `(replica, word)` of an object word's pool offset.
    fn object_word(&self, off: u64) -> Option<(usize, u64)> {
        let (r, ro) = self.in_replica(off)?;
        let i = self.words.binary_search(&ro).ok()?;
        Some((r, i as u64 + 1))
    }

    /// `(replica, word)` of the lowest object word on the cache line at
    /// pool offset `line` (a pwb's: the spec writes back that word's line).
    fn line_word(&self, line: u64) -> Option<(usize, u64)> {
        let (r, ro) = self.in_replica(line)?;
        let i = self.words.partition_point(|&w| w < ro);
        let w = *self.words.get(i)?;
        (w < ro + LINE).then_some((r, i as u64 + 1))
    }

    /// The spec's value of word `w` holding `v`: the block header words
    /// without [`BLOCK_TAG`], the magic as [`SPEC_MAGIC`] (PtmBase's
    /// `QAllocated`, `QFree`, `QMagic`).
    fn spec_val(&self, w: u64, v: u64) -> u64 {
        let Some(&ro) = self.words.get((w as usize).wrapping_sub(1)) else {
            return v;
        };
        // The first node block; the magic's and the fixed blocks' header words, from h.
        let nodes = fixed_layout(self.workload, self.reserved).1;
        let h = first_block(self.reserved);
        let (magic_at, magic, headers): (u64, u64, &[u64]) = match self.workload {
            Workload::Counters => return v,
            Workload::Queue => (16, queue::MAGIC, &[0]),
            Workload::HashSet => (48, hash::SET_MAGIC, &[0, 32]),
        };
        if ro == h + magic_at && v == magic {
            return SPEC_MAGIC;
        }
        let block_header =
            headers.iter().any(|&o| ro == h + o) || (ro >= nodes && (ro - nodes) % 32 == 0);
        if block_header && v & (0xffff << 48) == BLOCK_TAG {
            v & !BLOCK_TAG
        } else {
            v
        }
    }

    /// The spec's image of pool words `at`: every replica's object words.
    fn replica_images(&self, at: impl Fn(u64) -> u64) -> Vec<Vec<u64>> {
        self.replicas
            .iter()
            .map(|&b| {
                (1..=self.words.len() as u64)
                    .map(|w| self.spec_val(w, at(b + self.words[w as usize - 1])))
                    .collect()
            })
            .collect()
    }

    /// The words of the image: `cur_comb` and every replica's object words.
    fn image(&self, words: &[u64]) -> (u64, Vec<Vec<u64>>) {
        let at = |off: u64| words.get((off / 8) as usize).copied().unwrap_or(0);
        (at(self.cur), self.replica_images(at))
    }
}

fn cc_json(w: u64) -> Value {
    json!({"seq": sti::seq(w), "tid": sti::tid(w), "idx": sti::idx(w)})
}

/// The pool word at `off`, loaded (an offset of the PTM's [`Layout`],
/// inside the pool; 0 for one outside it, which the trace then shows).
fn read_word(pool: &Pool<Sim>, off: u64) -> u64 {
    pool.word(off).map_or(0, |w| w.load(Ordering::SeqCst))
}

/// The operation worker `w` runs as its transaction `j` in run `seed`.
fn op_of(workload: Workload, seed: u64, w: usize, j: u64) -> Op {
    let r = mix(seed ^ ((w as u64) << 40) ^ (j << 8) ^ 0x7074_6d00);
    match workload {
        Workload::Counters => COUNTER_OPS[(r % COUNTER_OPS.len() as u64) as usize],
        // Values >= 1, distinct per worker and transaction.
        Workload::Queue => match r % 6 {
            0..=2 => Op::Enq(10 * (w as u64 + 1) + j + 1),
            3 | 4 => Op::Deq,
            _ => Op::QLen,
        },
        Workload::HashSet => {
            let k = 1 + (r >> 8) % HASH_KEYS;
            match r % 6 {
                0..=2 => Op::HIns(k),
                3 | 4 => Op::HDel(k),
                _ => Op::HHas(k),
            }
        }
    }
}

/// What a pass runs: `threads` workers under schedule `seed`, worker `w`
/// its transactions `next[w]..ops` of `workload`, thread id `t` numbering
/// its transactions from `first[t]`; `create`: instead, one worker
/// creating the queue (no worker number in its `Invoke`).
#[derive(Clone, Copy)]
struct Plan<'a> {
    threads: usize,
    seed: u64,
    next: &'a [u64],
    first: &'a [u64],
    ops: u64,
    workload: Workload,
    create: bool,
}

/// One recorded pass: the Sim events and the reported steps.
struct Pass {
    events: Vec<SimEvent>,
    hooks: Vec<Hooked>,
    /// Positions in `events` of the persistence events the trace maps
    /// (object-word stores, their write-backs, fences, `cur_comb`).
    mapped: Vec<usize>,
    /// The crash image's words, if a crash point was captured.
    image: Option<Vec<u64>>,
}

/// Runs every worker's transactions from `next[worker]` to `ops` under the
/// seeded scheduler, numbering each thread id's from `first[tid]` on,
/// recording; with `crash_at`, captures the crash point
/// once that many Sim events are recorded (right after a persistence event).
fn record<P: Traced>(
    p: &P,
    lay: &Layout,
    plan: &Plan<'_>,
    crash_at: Option<usize>,
) -> Result<Pass, TraceError> {
    let Plan {
        threads,
        seed,
        next,
        first,
        ops,
        workload,
        create,
    } = *plan;
    let sim = p.the_pool().backend();
    let captured: Arc<Mutex<Option<(perdure_pm::sim::CrashPoint, usize)>>> =
        Arc::new(Mutex::new(None));
    if let Some(at) = crash_at {
        let c = captured.clone();
        sim.set_crash_hook(move |_, view| {
            let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
            if c.is_none() && view.trace_len() >= at {
                *c = Some((view.capture(), view.trace_len()));
            }
        });
    }
    sim.set_yield_hook(sched::yield_now);
    sim.start_trace();
    start_recording();
    let number: Vec<std::sync::atomic::AtomicU64> = first
        .iter()
        .map(|&f| std::sync::atomic::AtomicU64::new(f))
        .collect();
    let number = &number;
    sched::start(threads, seed);
    let failed = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|w| {
                s.spawn(move || {
                    sched::enter(w);
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        p.with_handle(&mut |tid, exec| {
                            // The marker: which simulator thread is `tid`.
                            let _ = read_word(p.the_pool(), lay.header + 8 * tid as u64);
                            let todo = if create {
                                0..1
                            } else {
                                next.get(w).copied().unwrap_or(ops)..ops
                            };
                            for j in todo {
                                let op = if !create {
                                    op_of(workload, seed, w, j)
                                } else if workload == Workload::HashSet {
                                    Op::HNew
                                } else {
                                    Op::QNew
                                };
                                let i = number[tid].fetch_add(1, Ordering::SeqCst);
                                emit(
                                    p.the_pool(),
                                    Ev::Invoke {
                                        tid,
                                        i,
                                        op,
                                        worker: (!create).then_some(w),
                                    },
                                );
                                let res = exec(op);
                                emit(p.the_pool(), Ev::Return { tid, i, res });
                            }
                        })
                    }));
                    sched::exit(w);
                    match r {
                        Ok(Ok(())) => None,
                        Ok(Err(e)) => Some(TraceError::Construction(e)),
                        Err(_) => Some(TraceError::Panicked),
                    }
                })
            })
            .collect();
        hs.into_iter()
            .filter_map(|h| h.join().unwrap_or(Some(TraceError::Panicked)))
            .next()
    });
    let serial = sched::stop();
    sim.clear_crash_hook();
    let mut events = sim.take_trace();
    let mut hooks = take_recording();
    if let Some(e) = failed {
        return Err(e);
    }
    TraceError::serialised(serial, seed)?;
    let image = match captured.lock().unwrap_or_else(|e| e.into_inner()).take() {
        None => None,
        Some((cp, len)) => {
            events.truncate(len);
            // A step reported at `len` came after the crash point.
            hooks.retain(|h| h.at < len);
            let image = crash_image(&cp, seed, mix(seed ^ 0x1_6e));
            Some(image.ok_or_else(|| TraceError::unmapped(seed, "no crash image"))?)
        }
    };
    let cur_line = lay.cur & !(LINE - 1);
    let mapped = (0..events.len())
        .filter(|&n| {
            let e = &events[n];
            match e.op {
                SimOp::Pfence | SimOp::Psync => true,
                SimOp::Pwb => e.off == cur_line || lay.line_word(e.off).is_some(),
                SimOp::Store | SimOp::NtStore | SimOp::Cas => {
                    e.off == lay.cur || lay.object_word(e.off).is_some()
                }
                _ => false,
            }
        })
        .collect();
    Ok(Pass {
        events,
        hooks,
        mapped,
        image,
    })
}

fn step(action: &str, thread: usize) -> Value {
    json!({"type": "step", "action": action, "thread": thread})
}

fn with(mut v: Value, extra: Value) -> Value {
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            o.insert(k.clone(), x.clone());
        }
    }
    v
}

/// The steps of a pass: its Sim events and reported steps in the order they
/// happened, mapped (trace thread = thread id + 1; 0 = a thread that is no
/// worker).
fn steps_of(
    pass: &Pass,
    lay: &Layout,
    threads: usize,
    seed: u64,
) -> Result<Vec<Value>, TraceError> {
    let mut out = Vec::new();
    let mut sim_tid: HashMap<usize, usize> = HashMap::new();
    let mut hooks = pass.hooks.iter().peekable();
    let cur_line = lay.cur & !(LINE - 1);
    for (n, e) in pass.events.iter().enumerate() {
        while let Some(h) = hooks.next_if(|h| h.at <= n) {
            out.extend(hook_step(&h.ev));
        }
        let t = sim_tid.get(&e.thread).map_or(0, |t| t + 1);
        let s = match e.op {
            SimOp::Load if e.off >= lay.header && e.off < lay.header + 8 * threads as u64 => {
                sim_tid.insert(e.thread, ((e.off - lay.header) / 8) as usize);
                None
            }
            SimOp::Load | SimOp::CasFailed => None,
            SimOp::Pfence => Some(with(step("Fence", t), json!({"kind": "pfence"}))),
            SimOp::Psync => Some(with(step("Fence", t), json!({"kind": "psync"}))),
            SimOp::Pwb if e.off == cur_line => Some(step("PwbC", t)),
            SimOp::Pwb => lay
                .line_word(e.off)
                .map(|(r, w)| with(step("PwbR", t), json!({"comb": r, "word": w}))),
            _ if e.off == lay.cur => match e.op {
                SimOp::Cas => Some(with(step("CasCC", t), json!({"cc": cc_json(e.val)}))),
                SimOp::Store => Some(with(step("StoreCC", t), json!({"cc": cc_json(e.val)}))),
                op => return Err(TraceError::unmapped(seed, format!("{op:?} of cur_comb"))),
            },
            // RedoOpt's copies: a non-temporal store, persisted without a
            // `pwb` (by the thread's next fence, in the trace's model).
            SimOp::Store | SimOp::NtStore => lay.object_word(e.off).map(|(r, w)| {
                with(
                    step(
                        if e.op == SimOp::NtStore {
                            "NtStore"
                        } else {
                            "Store"
                        },
                        t,
                    ),
                    json!({"comb": r, "word": w, "val": lay.spec_val(w, e.val)}),
                )
            }),
            op => match lay.object_word(e.off) {
                Some(_) => {
                    return Err(TraceError::unmapped(
                        seed,
                        format!("{op:?} of an object word"),
                    ))
                }
                None => None,
            },
        };
        out.extend(s);
    }
    for h in hooks {
        out.extend(hook_step(&h.ev));
    }
    Ok(out)
}

fn hook_step(ev: &Ev) -> Option<Value> {
    Some(match *ev {
        Ev::Announce(tid, seq) => with(step("Announce", tid + 1), json!({"seq": seq})),
        Ev::Lock(tid, idx) => with(step("Lock", tid + 1), json!({"comb": idx?})),
        Ev::GiveUp(tid) => step("GiveUp", tid + 1),
        Ev::Simulate(tid, idx) => with(step("Simulate", tid + 1), json!({"comb": idx})),
        Ev::Apply(tid, owner, seq) => with(
            step("Apply", tid + 1),
            json!({"owner": owner + 1, "seq": seq}),
        ),
        Ev::Unlock(tid, idx) => with(step("Unlock", tid + 1), json!({"comb": idx})),
        Ev::Enqueue(tid, ticket) => with(step("Enqueue", tid + 1), json!({"ticket": ticket})),
        Ev::Invoke { tid, i, op, worker } => {
            let (name, a) = op.spec();
            with(
                step("Invoke", tid + 1),
                json!({"i": i, "op": name, "a": a, "worker": worker}),
            )
        }
        Ev::Return { tid, i, res } => with(step("Return", tid + 1), json!({"i": i, "res": res})),
    })
}

/// The run's first step: the created pool's `cur_comb` and replicas, the
/// bytes of blocks before the structure (`reserved`, PtmBase's `Reserved`)
/// and the spec's word count (`words`, set by [`trace`] once every run is
/// in).
fn begin_step(lay: &Layout, words_of: impl Fn(u64) -> u64) -> Value {
    json!({"type": "step", "action": "Begin", "thread": 0, "cc": cc_json(words_of(lay.cur)),
           "img": lay.replica_images(&words_of), "reserved": lay.reserved, "words": 0})
}

/// After the steps `so_far`: each worker's next transaction, and each
/// thread id's next transaction number.
fn next_ops(so_far: &[Value], threads: usize) -> (Vec<u64>, Vec<u64>) {
    let (mut next, mut first) = (vec![0; threads], vec![0; threads]);
    for s in so_far.iter().filter(|s| s["action"] == "Invoke") {
        if let Some(n) = next.get_mut(s["worker"].as_u64().unwrap_or(u64::MAX) as usize) {
            *n += 1;
        }
        let t = s["thread"].as_u64().unwrap_or(0) as usize;
        if let Some(f) = t.checked_sub(1).and_then(|t| first.get_mut(t)) {
            *f = s["i"].as_u64().unwrap_or(0) + 1;
        }
    }
    (next, first)
}

/// One run of construction `P`: its steps, from `Begin`. The queue is
/// created first, by one thread alone (its own pass, never crashed: a crash
/// in it would leave the workers no queue), then the workers run.
fn one_run<P: Traced>(opts: &TraceOptions, seed: u64) -> Result<Vec<Value>, TraceError> {
    let workload = opts.object.workload;
    let fresh = || -> Result<(P, Layout), TraceError> {
        let pool = Pool::volatile("trace-ptm", POOL, Sim::new(SimOptions::default()))?;
        let p = P::create(pool, opts.threads, seed)?;
        let lay = Layout::of(&p, workload, seed)?;
        // The structure's blocks are where PtmBase has them only if the
        // construction took exactly RESERVED bytes of blocks at create.
        let bump = read_word(p.the_pool(), lay.replicas[0] + QAB + 16);
        if workload != Workload::Counters && bump != 512 + P::RESERVED {
            return Err(TraceError::unmapped(
                seed,
                format!(
                    "the created region's bump is {bump}, not {}: the construction's own \
                     blocks are not the ones this producer knows",
                    512 + P::RESERVED
                ),
            ));
        }
        Ok((p, lay))
    };
    let zeros = vec![0; opts.threads];
    let plan = Plan {
        threads: opts.threads,
        seed,
        next: &zeros,
        first: &zeros,
        ops: opts.ops,
        workload,
        create: false,
    };
    let creating = Plan {
        threads: 1,
        create: true,
        ..plan
    };
    // The create pass (appended to `out`), then the workers' pass from where
    // the steps so far leave each worker and thread id's numbering.
    let passes = |p: &P,
                  lay: &Layout,
                  out: &mut Vec<Value>,
                  crash_at: Option<usize>|
     -> Result<Pass, TraceError> {
        if workload != Workload::Counters {
            let pass = record(p, lay, &creating, None)?;
            out.extend(steps_of(&pass, lay, opts.threads, seed)?);
        }
        let (next, first) = next_ops(out, opts.threads);
        let plan = Plan {
            next: &next,
            first: &first,
            ..plan
        };
        record(p, lay, &plan, crash_at)
    };
    let crash_at = if opts.crash {
        let (p, lay) = fresh()?;
        let dry = passes(&p, &lay, &mut Vec::new(), None)?;
        // A crash right after one of the mapped persistence events, drawn
        // uniformly (the copies' many stores to other words would otherwise
        // draw most crash points into the first copy).
        let n = dry.mapped.len().max(1) as u64;
        Some(
            dry.mapped
                .get((mix(seed ^ 0xc4a5) % n) as usize)
                .map_or(1, |&k| k + 1),
        )
    } else {
        None
    };
    let (p, lay) = fresh()?;
    let read = |off: u64| read_word(p.the_pool(), off);
    let mut out = vec![begin_step(&lay, read)];
    let pass = passes(&p, &lay, &mut out, crash_at)?;
    out.extend(steps_of(&pass, &lay, opts.threads, seed)?);
    let Some(words) = pass.image else {
        return Ok(out);
    };
    drop(p);
    let (cc, img) = lay.image(&words);
    out.push(
        json!({"type": "step", "action": "Crash", "thread": 0, "cc": cc_json(cc), "img": img}),
    );
    let (next, first) = next_ops(&out, opts.threads);
    let pool = Pool::volatile_from_words(&words, Sim::new(SimOptions::default()))?;
    pool.backend().start_trace();
    let p = P::open(pool, opts.threads, seed)?;
    let opened = p.the_pool().backend().take_trace();
    let lay = Layout::of(&p, workload, seed)?;
    // Null recovery writes nothing the specs see (checked, not assumed).
    if let Some(e) = opened.iter().find(|e| {
        matches!(
            e.op,
            SimOp::Store | SimOp::Cas | SimOp::NtStore | SimOp::Rmw
        ) && (e.off == lay.cur || lay.object_word(e.off).is_some())
    }) {
        return Err(TraceError::unmapped(
            seed,
            format!("recovery wrote {:?} at {}", e.op, e.off),
        ));
    }
    let after = record(
        &p,
        &lay,
        &Plan {
            seed: seed ^ 0xafe7,
            next: &next,
            first: &first,
            ..plan
        },
        None,
    )?;
    out.extend(steps_of(&after, &lay, opts.threads, seed)?);
    Ok(out)
}

/// Applies `tamper` to one run's steps; false if the run has no step to
/// tamper with.
fn tamper_with(steps: &mut Vec<Value>, tamper: Tamper) -> bool {
    let cas: Vec<usize> = (0..steps.len())
        .filter(|&k| steps[k]["action"] == "CasCC")
        .collect();
    // The first committing thread's next `Return` after its CAS.
    let first_return = |steps: &[Value]| -> Option<(usize, usize)> {
        let &c = cas.first()?;
        let t = &steps[c]["thread"];
        let r = (c + 1..steps.len())
            .find(|&k| steps[k]["action"] == "Return" && &steps[k]["thread"] == t)?;
        Some((c, r))
    };
    match tamper {
        Tamper::ReturnBeforePsync => {
            let Some((c, r)) = first_return(steps) else {
                return false;
            };
            let ret = steps.remove(r);
            steps.insert(c + 1, ret);
            true
        }
        Tamper::WrongResult => {
            let Some((_, r)) = first_return(steps) else {
                return false;
            };
            let Some(res) = steps[r]["res"].as_u64() else {
                return false;
            };
            steps[r]["res"] = json!(res.wrapping_add(1));
            true
        }
        Tamper::DoubleApply => {
            let Some(a) = steps.iter().position(|s| s["action"] == "Apply") else {
                return false;
            };
            let twice = steps[a].clone();
            steps.insert(a + 1, twice);
            true
        }
        Tamper::CasBeforeFlush => {
            let mut from = 0;
            for &c in &cas {
                let t = steps[c]["thread"].clone();
                let flushes: Vec<usize> = (from..c)
                    .filter(|&k| steps[k]["action"] == "PwbR" && steps[k]["thread"] == t)
                    .collect();
                if !flushes.is_empty() {
                    for k in flushes.into_iter().rev() {
                        steps.remove(k);
                    }
                    return true;
                }
                from = c + 1;
            }
            false
        }
        Tamper::LostStore => {
            // The visible value of each (replica, word) before each step.
            let mut vis: HashMap<(u64, u64), u64> = HashMap::new();
            let mut last: HashMap<(u64, u64), usize> = HashMap::new();
            for k in 0..steps.len() {
                let s = &steps[k];
                let (t, c) = (s["thread"].as_u64(), s["comb"].as_u64());
                if s["action"] == "Store" || s["action"] == "NtStore" {
                    let (c, w, v) = (
                        c.unwrap_or(0),
                        s["word"].as_u64().unwrap_or(0),
                        s["val"].as_u64().unwrap_or(0),
                    );
                    if vis.get(&(c, w)).copied().unwrap_or(0) != v {
                        last.insert((t.unwrap_or(0), c), k);
                    }
                    vis.insert((c, w), v);
                } else if s["action"] == "CasCC" {
                    let c = s["cc"]["idx"].as_u64().unwrap_or(0);
                    if let Some(&j) = last.get(&(t.unwrap_or(0), c)) {
                        steps.remove(j);
                        return true;
                    }
                } else if s["action"] == "Lock" || s["action"] == "Unlock" {
                    last.remove(&(t.unwrap_or(0), c.unwrap_or(0)));
                }
            }
            false
        }
    }
}

/// The spec's word count `W` for `steps` (all runs): the counters' 2; the
/// structure's fixed words and its node blocks (PtmBase's `QBlocks` =
/// (W - 10) / 4, `HBlocks` = (W - 14) / 4): those any step stores to,
/// writes back or finds non-zero in an image, and as many as
/// [`live_bound`] gives (for the hash set at most one per key). The code's run may use fewer, but TLC's replay
/// also explores the orders the trace leaves open (a pending enqueue
/// applied before another thread's dequeue), and each must find its block
/// among the words.
fn spec_words(workload: Workload, steps: &[Value]) -> u64 {
    if workload == Workload::Counters {
        return 2;
    }
    let fixed = ALLOC_WORDS.len() as u64 + fixed_layout(workload, 0).0;
    // A set holds at most its HASH_KEYS keys, whatever the order.
    let blocks = match workload {
        Workload::HashSet => live_bound(steps).min(HASH_KEYS),
        _ => live_bound(steps),
    };
    let mut top = fixed + 4 * blocks;
    for s in steps {
        if let Some(w) = s["word"].as_u64() {
            top = top.max(w);
        }
        for img in s["img"].as_array().into_iter().flatten() {
            for (i, v) in img.as_array().into_iter().flatten().enumerate() {
                if v.as_u64() != Some(0) {
                    top = top.max(i as u64 + 1);
                }
            }
        }
    }
    fixed + (top - fixed).div_ceil(4) * 4
}

/// The most node blocks any order of a run's transactions that TLC's
/// replay can follow may carve, over all runs. The allocator carves a
/// block only when its free list is empty, so the blocks carved are the
/// most nodes live at once; up to a step of the trace, at most the
/// allocating transactions invoked so far (enqueues, inserts) have taken
/// effect, and at least the freeing ones returned so far (a dequeue that
/// returned a value, a remove that returned 1: a replay in which one did
/// not free stops at its `Return`).
fn live_bound(steps: &[Value]) -> u64 {
    let (mut live, mut most) = (0i64, 0i64);
    let mut pending = std::collections::HashMap::new();
    for s in steps {
        let thread = s["thread"].as_u64();
        match s["action"].as_str() {
            Some("Begin") => {
                live = 0;
                pending.clear();
            }
            Some("Invoke") => {
                let op = s["op"].as_str().unwrap_or_default();
                if op == "enq" || op == "hins" {
                    live += 1;
                    most = most.max(live);
                }
                pending.insert(thread, op.to_owned());
            }
            Some("Return") => {
                let frees = match pending.remove(&thread).as_deref() {
                    Some("deq") => s["res"].as_u64().is_some_and(|r| r != 0),
                    Some("hdel") => s["res"].as_u64() == Some(1),
                    _ => false,
                };
                live -= i64::from(frees);
            }
            _ => {}
        }
    }
    most as u64
}

/// The largest value TLC's integers hold.
const TLC_MAX: u64 = (1 << 31) - 1;

/// Sets every `Begin`'s `words` to `w`, cuts the images to `w` words, and
/// checks that every value fits TLC's integers and that no queue
/// transaction failed.
fn finish(steps: &mut [Value], w: u64, seed: u64) -> Result<(), TraceError> {
    for s in steps.iter_mut() {
        if s["action"] == "Return" && s["res"].as_u64() == Some(FAILED) {
            return Err(TraceError::unmapped(
                seed,
                format!("a queue transaction failed (step {s})"),
            ));
        }
        if s["action"] == "Begin" {
            s["words"] = json!(w);
        }
        if let Some(imgs) = s.get_mut("img").and_then(Value::as_array_mut) {
            for img in imgs {
                if let Some(ws) = img.as_array_mut() {
                    ws.truncate(w as usize);
                }
            }
        }
        let big = |v: &Value| v.as_u64().is_some_and(|v| v > TLC_MAX);
        let imgs = s["img"].as_array().into_iter().flatten();
        if ["val", "res", "a"].iter().any(|k| big(&s[*k]))
            || imgs
                .flat_map(|i| i.as_array().into_iter().flatten())
                .any(big)
        {
            return Err(TraceError::unmapped(
                seed,
                format!("a value beyond TLC's integers (step {s})"),
            ));
        }
    }
    Ok(())
}

/// The ndjson trace of `opts.runs` runs (seeds `seed..seed + runs`).
pub fn trace(opts: &TraceOptions) -> Result<String, TraceError> {
    opts.check_bounds(MAX_THREADS, MAX_OPS)
        .map_err(TraceError::Options)?;
    // PtmBase's HBucket is the code's hash of the traced keys.
    for k in 1..=HASH_KEYS {
        if ds::mix(k) & (HASH_BUCKETS - 1) != SPEC_BUCKET[k as usize - 1] {
            return Err(TraceError::Options(format!(
                "key {k}'s bucket is not PtmBase's HBucket[{k}]: ds::mix changed, update both"
            )));
        }
    }
    let _one = sched::RUN.lock().unwrap_or_else(|e| e.into_inner());
    let mut all = Vec::new();
    for k in 0..opts.runs {
        let seed = opts.seed.wrapping_add(k);
        let mut steps = match opts.object.construction {
            Construction::Redo => one_run::<RedoPtm<Sim>>(opts, seed)?,
            Construction::RedoTimed => one_run::<RedoTimedPtm<Sim>>(opts, seed)?,
            Construction::RedoOpt => one_run::<RedoOptPtm<Sim>>(opts, seed)?,
            Construction::Cx => one_run::<CxPtm<Sim>>(opts, seed)?,
            Construction::CxPuc => one_run::<CxPuc<Sim, u64>>(opts, seed)?,
        };
        if k == 0 {
            if let Some(t) = opts.tamper {
                if !tamper_with(&mut steps, t) {
                    return Err(TraceError::unmapped(
                        seed,
                        format!("nothing to tamper with ({t:?}): try another seed"),
                    ));
                }
            }
        }
        all.extend(steps);
    }
    let w = spec_words(opts.object.workload, &all);
    finish(&mut all, w, opts.seed)?;
    let mut text = String::new();
    for s in all {
        text.push_str(&s.to_string());
        text.push('\n');
    }
    Ok(text)
}
