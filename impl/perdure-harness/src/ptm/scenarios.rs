//! Crash-explorer scenarios for the PTMs (feature `check`): perdure-check's
//! [`Scenario`] for every construction × a small transactional object.
//!
//! A scenario is a [`Construction`] (Redo-PTM, CX-PTM, CX-PUC, each with a
//! small configuration, 2 thread ids) and an [`Object`] written against the
//! one interface ([`Ptm::update_tx`], [`Ptm::read_tx`], [`Transaction`]):
//!
//! * `counter` — one word; `add(d)` an update, `get()` a read-only
//!   transaction (checked as HISTORY.md's `counter`);
//! * `queue` — a linked list with `head` and `tail` in different cache
//!   lines, a node allocated per `enq` and freed per `deq` (`queue`);
//! * `set` — a sorted linked list of keys 1–3, a node allocated per insert
//!   and freed per remove (`set`);
//! * `map` — a linked list of `(key, value)` entries, keys 1–2 (`map`);
//! * `kv` — perdure-kv's store itself ([`Kv`], `map`; the scenarios of
//!   [`kv`], explored by perdure-kv's `tests/shuttle_explore_kv.rs`).
//!
//! These are minimal versions written inside the scenarios (a few
//! transactional loads and stores each), not the data structures of
//! `src/ds`; they exercise what the constructions must get right —
//! several words and lines per transaction, allocation and free — and
//! can be swapped for the real structures when those land.
//!
//! The explorer runs each workload (2 threads, a few calls each) under
//! shuttle schedules, captures a crash point after every persistence event
//! of the PTM's pool, and recovers every crash image Px86 allows there:
//! [`Scenario::open`] with `after_crash` builds a pool from the image and
//! opens the PTM on it — null recovery (§5 "Recovery": `cur_comb` names the
//! consistent replica, every other replica is invalid and the first update
//! copies). [`Scenario::observe`] then reads the whole object *and commits
//! updates* on the recovered PTM (so the copy after recovery, and its
//! allocator, are checked too), and the history goes to the
//! durable-linearizability checker. None of these objects is detectable, so
//! a call cut off by the crash may or may not have taken effect, but
//! entirely or not at all.
//!
//! ## Runs only in a `--cfg perdure_shuttle` build
//!
//! The explorer runs the threads as shuttle threads, which are coroutines
//! on one OS thread; the PTMs keep per-thread state (the leased thread id,
//! the transaction a closure runs in, for nesting) in thread-locals
//! (perdure-ptm's `registry`), which are shuttle's own only under
//! `--cfg perdure_shuttle`. In any other build [`Scenario::open`] returns
//! an error saying so, rather than explore with threads that share their
//! thread-locals. Under that cfg every atomic of the PTM is a scheduling
//! point as well, so the schedules interleave the threads at volatile
//! accesses (locks, announce array, ring, queue of nodes) as well as at
//! persistent ones.
//!
//! ## Adding a construction or an object
//!
//! A Redo variant is one [`Redo`] line in `constructions` (its
//! `redo::Config`); another object implements [`Object`] and is one line in
//! [`all`].
//!
//! Not covered: crashes during recovery (null recovery writes nothing, so
//! there is nothing to crash in; the first update after it is explored as
//! an observation only, without a crash inside it), thread crashes, more
//! than 2 threads.

use perdure_check::explore::{At, Call, Scenario, Session};
use perdure_pm::{Pool, Sim, SimOptions};
use perdure_ptm::cx::{self, CxPtm, CxPuc};
use perdure_ptm::redo::{self, RedoPtm};
use perdure_ptm::PtmError;
use perdure_ptm::{Ptm, Transaction, TxRead};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// Thread ids of every scenario's PTM (the explorer's 2 threads; the
/// setup and the observations run on threads of their own).
pub const THREADS: usize = 2;

/// The size of a scenario PTM's pool: room for Redo-PTM's `N + 1 = 3` and
/// CX's `2N = 4` replicas of 4 KiB (the objects use a few hundred bytes).
const POOL: u64 = 32 << 10;

// --- Constructions ---------------------------------------------------------------

/// A construction the scenarios run an object on.
pub trait Construction: Send + Sync + 'static {
    /// The PTM.
    type P: Ptm + 'static;
    /// Short name, the first part of the scenario's name.
    fn name(&self) -> &'static str;
    /// Formats `pool` and opens the PTM.
    fn create(&self, pool: Pool<Sim>) -> Result<Self::P, PtmError>;
    /// Opens the PTM in `pool` (null recovery).
    fn open(&self, pool: Pool<Sim>) -> Result<Self::P, PtmError>;
    /// The PTM's pool.
    fn pool<'a>(&self, p: &'a Self::P) -> &'a Pool<Sim>;
}

/// Redo-PTM (§5) with a configuration: small rings (so states are reused
/// and replicas fall back to copies within a few commits) and 2 read tries
/// (so read-only transactions also get published and run by updaters).
#[derive(Clone, Debug)]
pub struct Redo {
    /// Scenario name prefix.
    pub name: &'static str,
    /// Its configuration (`threads` is [`THREADS`]).
    pub config: redo::Config,
}

impl Redo {
    /// Redo-PTM with `states_per_thread` states per thread, and the rest
    /// small.
    pub fn small(name: &'static str, states_per_thread: usize) -> Redo {
        Redo {
            name,
            config: redo::Config {
                threads: THREADS,
                states_per_thread,
                log_entries_per_thread: 256,
                dirty_lines_per_replica: 32,
                max_read_tries: 2,
                variant: redo::Variant::Redo,
                timed_window: None,
            },
        }
    }

    /// RedoOpt-PTM, otherwise as [`Redo::small`]: store and flush
    /// aggregation, the full-flush switch and non-temporal copies. Its
    /// two-replica window is zero here (the explorer's schedules must not
    /// depend on the clock), so RedoTimed's locking rule is not what these
    /// rows explore; `tests/suite/redo_variants.rs` checks it with real threads.
    pub fn opt(name: &'static str, states_per_thread: usize) -> Redo {
        let mut r = Redo::small(name, states_per_thread);
        r.config.variant = redo::Variant::Opt;
        r.config.timed_window = Some(std::time::Duration::ZERO);
        r
    }

    /// RedoOpt-PTM whose full-flush switch triggers at the second distinct
    /// dirty line of a replica (`dirty_lines_per_replica: 1`, so the
    /// threshold, a tenth of the replica capped by it, is 1): every
    /// transaction or replay that writes two lines (a queue's node and its
    /// header, a set's node and its link) writes back the replica's whole
    /// used part before the `cur_comb` CAS, and those that write one line
    /// use the postponed per-line `pwb`.
    pub fn opt_full(name: &'static str, states_per_thread: usize) -> Redo {
        let mut r = Redo::opt(name, states_per_thread);
        r.config.dirty_lines_per_replica = 1;
        r
    }

    /// RedoTimed-PTM with a fixed window (not the measured four copy times:
    /// the explorer's schedules must not depend on the clock). `window`
    /// `Duration::MAX`: the window never closes, every update locks only
    /// `combs[0]` or `combs[1]` and backs off while the one that is not
    /// designated is taken, giving up once `cur_comb` moves (its request may
    /// have been carried). `Duration::ZERO`: the window closes at once, an
    /// update tries the first two and falls back to any of the `N + 1`.
    pub fn timed(name: &'static str, states_per_thread: usize, window: Duration) -> Redo {
        let mut r = Redo::small(name, states_per_thread);
        r.config.variant = redo::Variant::Timed;
        r.config.timed_window = Some(window);
        r
    }
}

impl Construction for Redo {
    type P = RedoPtm<Sim>;
    fn name(&self) -> &'static str {
        self.name
    }
    fn create(&self, pool: Pool<Sim>) -> Result<RedoPtm<Sim>, PtmError> {
        RedoPtm::create(pool, &self.config)
    }
    fn open(&self, pool: Pool<Sim>) -> Result<RedoPtm<Sim>, PtmError> {
        RedoPtm::open(pool, &self.config)
    }
    fn pool<'a>(&self, p: &'a RedoPtm<Sim>) -> &'a Pool<Sim> {
        p.pool()
    }
}

/// The CX configuration of the scenarios: 2 read tries, a replay window of
/// 2 nodes (retired nodes are disposed of quickly, so replicas are
/// invalidated and copied within a few updates).
fn cx_config() -> cx::Config {
    cx::Config {
        threads: THREADS,
        max_read_tries: 2,
        replay_window: 2,
        dirty_lines_per_replica: 32,
        undo_entries_per_thread: 64,
    }
}

/// CX-PTM (§4): annotated loads and stores, a `pwb` per written line.
#[derive(Clone, Debug)]
pub struct CxAnnotated {
    /// Its configuration.
    pub config: cx::Config,
}

impl Construction for CxAnnotated {
    type P = CxPtm<Sim>;
    fn name(&self) -> &'static str {
        "cx-ptm"
    }
    fn create(&self, pool: Pool<Sim>) -> Result<CxPtm<Sim>, PtmError> {
        CxPtm::create(pool, &self.config)
    }
    fn open(&self, pool: Pool<Sim>) -> Result<CxPtm<Sim>, PtmError> {
        CxPtm::open(pool, &self.config)
    }
    fn pool<'a>(&self, p: &'a CxPtm<Sim>) -> &'a Pool<Sim> {
        p.pool()
    }
}

/// CX-PUC (§4): no annotation, the whole used region written back per
/// update (here through its [`Ptm`] interface, over a `u64` root value).
#[derive(Clone, Debug)]
pub struct CxPlain {
    /// Its configuration.
    pub config: cx::Config,
}

impl Construction for CxPlain {
    type P = CxPuc<Sim, u64>;
    fn name(&self) -> &'static str {
        "cx-puc"
    }
    fn create(&self, pool: Pool<Sim>) -> Result<CxPuc<Sim, u64>, PtmError> {
        CxPuc::create(pool, &self.config, 0u64)
    }
    fn open(&self, pool: Pool<Sim>) -> Result<CxPuc<Sim, u64>, PtmError> {
        CxPuc::open(pool, &self.config)
    }
    fn pool<'a>(&self, p: &'a CxPuc<Sim, u64>) -> &'a Pool<Sim> {
        p.pool()
    }
}

// --- Objects ---------------------------------------------------------------------

/// A small transactional object and its workload, written once against
/// [`Ptm`].
pub trait Object: Send + Sync + 'static {
    /// Short name, the second part of the scenario's name.
    fn name(&self) -> &'static str;
    /// The sequential model of HISTORY.md it is checked against.
    fn model(&self) -> &'static str;
    /// The PTM's pool size.
    fn pool(&self) -> u64 {
        POOL
    }
    /// Builds the empty object (before the explored run).
    fn init<P: Ptm>(&self, p: &P) -> Result<(), PtmError>;
    /// Thread `thread`'s `ops` calls, drawn from `rng`.
    fn calls(&self, thread: usize, ops: usize, rng: &mut u64) -> Vec<Call>;
    /// Performs `call`; returns its result as HISTORY.md writes it.
    fn apply<P: Ptm>(&self, p: &P, call: &Call) -> Result<Value, String>;
    /// After recovery: calls that read the whole object and commit updates,
    /// with their results.
    fn observe<P: Ptm>(&self, p: &P) -> Result<Vec<(Call, Value)>, String>;
}

fn arg(call: &Call, i: usize) -> Result<u64, String> {
    call.args
        .get(i)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{}: argument {i} must be a number", call.op))
}

fn ptm_err(e: PtmError) -> String {
    e.to_string()
}

/// `0` as `null`, anything else as the number (values and keys are ≥ 1).
fn opt(w: u64) -> Value {
    if w == 0 {
        Value::Null
    } else {
        json!(w)
    }
}

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Performs each call and records its result.
fn run_calls<P: Ptm, O: Object>(
    o: &O,
    p: &P,
    calls: Vec<Call>,
) -> Result<Vec<(Call, Value)>, String> {
    calls
        .into_iter()
        .map(|c| o.apply(p, &c).map(|v| (c, v)))
        .collect()
}

/// Allocates a zeroed block of `size` bytes and stores it in root 0.
fn alloc_root<P: Ptm>(p: &P, size: u64, what: &str) -> Result<(), PtmError> {
    let off = p.update_tx(move |tx| {
        let off = tx.alloc_zeroed(size).unwrap_or(0);
        tx.set_root(0, off);
        off
    })?;
    if off == 0 {
        return Err(PtmError::Config(format!("no room for the {what}")));
    }
    Ok(())
}

/// A counter in a zeroed word at root 0.
#[derive(Clone, Copy, Debug)]
pub struct Counter;

impl Object for Counter {
    fn name(&self) -> &'static str {
        "counter"
    }
    fn model(&self) -> &'static str {
        "counter"
    }
    fn init<P: Ptm>(&self, p: &P) -> Result<(), PtmError> {
        alloc_root(p, 8, "counter")
    }
    fn calls(&self, thread: usize, ops: usize, _rng: &mut u64) -> Vec<Call> {
        (0..ops)
            .map(|k| {
                if k % 2 == 0 {
                    Call::new("add", vec![json!(thread as u64 + 1)])
                } else {
                    Call::new("get", vec![])
                }
            })
            .collect()
    }
    fn apply<P: Ptm>(&self, p: &P, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "add" => {
                let d = arg(call, 0)?;
                p.update_tx(move |tx| {
                    let c = tx.root(0);
                    tx.store(c, tx.load(c) + d);
                })
                .map_err(ptm_err)?;
                Ok(Value::Null)
            }
            "get" => Ok(json!(p
                .read_tx(|tx| tx.load(tx.root(0)))
                .map_err(ptm_err)?)),
            op => Err(format!("counter has no operation {op}")),
        }
    }
    fn observe<P: Ptm>(&self, p: &P) -> Result<Vec<(Call, Value)>, String> {
        run_calls(
            self,
            p,
            vec![
                Call::new("get", vec![]),
                Call::new("add", vec![json!(100)]),
                Call::new("get", vec![]),
            ],
        )
    }
}

/// A FIFO queue: root 0 is a header with `head` at byte 0 and `tail` at
/// byte 64 (another line), nodes are `[value, next]`.
#[derive(Clone, Copy, Debug)]
pub struct Queue;

const TAIL: u64 = 64;

fn enq<T: Transaction>(tx: &T, v: u64) -> u64 {
    let q = tx.root(0);
    let Ok(node) = tx.alloc(16) else {
        return 0;
    };
    tx.store(node, v);
    tx.store(node + 8, 0);
    let tail = tx.load(q + TAIL);
    if tail == 0 {
        tx.store(q, node);
    } else {
        tx.store(tail + 8, node);
    }
    tx.store(q + TAIL, node);
    1
}

fn deq<T: Transaction>(tx: &T) -> u64 {
    let q = tx.root(0);
    let head = tx.load(q);
    if head == 0 {
        return 0;
    }
    let v = tx.load(head);
    let next = tx.load(head + 8);
    tx.store(q, next);
    if next == 0 {
        tx.store(q + TAIL, 0);
    }
    let _ = tx.free(head);
    v
}

impl Object for Queue {
    fn name(&self) -> &'static str {
        "queue"
    }
    fn model(&self) -> &'static str {
        "queue"
    }
    fn init<P: Ptm>(&self, p: &P) -> Result<(), PtmError> {
        alloc_root(p, TAIL + 8, "queue")
    }
    fn calls(&self, thread: usize, ops: usize, _rng: &mut u64) -> Vec<Call> {
        (0..ops)
            .map(|k| {
                if k % 2 == 0 {
                    Call::new("enq", vec![json!(10 * (thread as u64 + 1) + k as u64)])
                } else {
                    Call::new("deq", vec![])
                }
            })
            .collect()
    }
    fn apply<P: Ptm>(&self, p: &P, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "enq" => {
                let v = arg(call, 0)?;
                match p.update_tx(move |tx| enq(tx, v)).map_err(ptm_err)? {
                    1 => Ok(Value::Null),
                    _ => Err("enq: the region is full".into()),
                }
            }
            "deq" => Ok(opt(p.update_tx(|tx| deq(tx)).map_err(ptm_err)?)),
            op => Err(format!("queue has no operation {op}")),
        }
    }
    fn observe<P: Ptm>(&self, p: &P) -> Result<Vec<(Call, Value)>, String> {
        let mut seen = Vec::new();
        // At most every value the workloads enqueue, then one `null`.
        for _ in 0..32 {
            let v = self.apply(p, &Call::new("deq", vec![]))?;
            let empty = v.is_null();
            seen.push((Call::new("deq", vec![]), v));
            if empty {
                break;
            }
        }
        seen.extend(run_calls(
            self,
            p,
            vec![
                Call::new("enq", vec![json!(999)]),
                Call::new("deq", vec![]),
                Call::new("deq", vec![]),
            ],
        )?);
        Ok(seen)
    }
}

/// Keys of the set and the map scenarios: few, so that the threads'
/// operations collide.
const KEYS: u64 = 3;

/// A set: a sorted linked list of `[key, next]` nodes from root 0's
/// `first` word.
#[derive(Clone, Copy, Debug)]
pub struct Set;

/// The offset of the link word that points to the first node with a key
/// `≥ k` (the header's `first` or a node's `next`), and that node (0: none).
///
/// # Panics
///
/// After [`MAX_WALK`] nodes (a cycle: the list never holds that many), or
/// on an offset outside the region; the scenario reports either as an
/// error (a damaged state after recovery).
fn find<T: TxRead>(tx: &T, head: u64, k: u64, next_at: u64) -> (u64, u64) {
    let mut link = head;
    let mut cur = tx.load(link);
    let mut steps = 0;
    while cur != 0 && tx.load(cur) < k {
        steps += 1;
        assert!(steps <= MAX_WALK, "a cycle in the list");
        link = cur + next_at;
        cur = tx.load(link);
    }
    (link, cur)
}

/// More nodes than any scenario's list holds.
const MAX_WALK: usize = 64;

impl Object for Set {
    fn name(&self) -> &'static str {
        "set"
    }
    fn model(&self) -> &'static str {
        "set"
    }
    fn init<P: Ptm>(&self, p: &P) -> Result<(), PtmError> {
        alloc_root(p, 8, "set")
    }
    fn calls(&self, _thread: usize, ops: usize, rng: &mut u64) -> Vec<Call> {
        (0..ops)
            .map(|_| {
                let k = json!(1 + xorshift(rng) % KEYS);
                match xorshift(rng) % 3 {
                    0 => Call::new("insert", vec![k]),
                    1 => Call::new("remove", vec![k]),
                    _ => Call::new("contains", vec![k]),
                }
            })
            .collect()
    }
    fn apply<P: Ptm>(&self, p: &P, call: &Call) -> Result<Value, String> {
        let k = arg(call, 0)?;
        let r = match call.op.as_str() {
            "insert" => p.update_tx(move |tx| {
                let (link, cur) = find(tx, tx.root(0), k, 8);
                if cur != 0 && tx.load(cur) == k {
                    return 0;
                }
                let Ok(node) = tx.alloc(16) else {
                    return 2;
                };
                tx.store(node, k);
                tx.store(node + 8, cur);
                tx.store(link, node);
                1
            }),
            "remove" => p.update_tx(move |tx| {
                let (link, cur) = find(tx, tx.root(0), k, 8);
                if cur == 0 || tx.load(cur) != k {
                    return 0;
                }
                tx.store(link, tx.load(cur + 8));
                let _ = tx.free(cur);
                1
            }),
            "contains" => p.read_tx(move |tx| {
                let (_, cur) = find(tx, tx.root(0), k, 8);
                u64::from(cur != 0 && tx.load(cur) == k)
            }),
            op => return Err(format!("set has no operation {op}")),
        }
        .map_err(ptm_err)?;
        match r {
            0 | 1 => Ok(json!(r == 1)),
            _ => Err("insert: the region is full".into()),
        }
    }
    fn observe<P: Ptm>(&self, p: &P) -> Result<Vec<(Call, Value)>, String> {
        let mut calls: Vec<Call> = (1..=KEYS)
            .map(|k| Call::new("contains", vec![json!(k)]))
            .collect();
        calls.push(Call::new("insert", vec![json!(1)]));
        calls.push(Call::new("remove", vec![json!(2)]));
        calls.push(Call::new("contains", vec![json!(1)]));
        calls.push(Call::new("contains", vec![json!(2)]));
        run_calls(self, p, calls)
    }
}

/// A map: a sorted linked list of `[key, value, next]` entries from root
/// 0's `first` word.
#[derive(Clone, Copy, Debug)]
pub struct Map;

impl Object for Map {
    fn name(&self) -> &'static str {
        "map"
    }
    fn model(&self) -> &'static str {
        "map"
    }
    fn init<P: Ptm>(&self, p: &P) -> Result<(), PtmError> {
        Set.init(p)
    }
    fn calls(&self, thread: usize, ops: usize, rng: &mut u64) -> Vec<Call> {
        (0..ops)
            .map(|i| {
                let k = json!(1 + xorshift(rng) % (KEYS - 1));
                match xorshift(rng) % 3 {
                    0 => Call::new("put", vec![k, json!(100 * (thread + 1) + i)]),
                    1 => Call::new("remove", vec![k]),
                    _ => Call::new("get", vec![k]),
                }
            })
            .collect()
    }
    fn apply<P: Ptm>(&self, p: &P, call: &Call) -> Result<Value, String> {
        let k = arg(call, 0)?;
        let r = match call.op.as_str() {
            "put" => {
                let v = arg(call, 1)?;
                p.update_tx(move |tx| {
                    let (link, cur) = find(tx, tx.root(0), k, 16);
                    if cur != 0 && tx.load(cur) == k {
                        let old = tx.load(cur + 8);
                        tx.store(cur + 8, v);
                        return old;
                    }
                    let Ok(e) = tx.alloc(24) else {
                        return u64::MAX;
                    };
                    tx.store(e, k);
                    tx.store(e + 8, v);
                    tx.store(e + 16, cur);
                    tx.store(link, e);
                    0
                })
            }
            "remove" => p.update_tx(move |tx| {
                let (link, cur) = find(tx, tx.root(0), k, 16);
                if cur == 0 || tx.load(cur) != k {
                    return 0;
                }
                let old = tx.load(cur + 8);
                tx.store(link, tx.load(cur + 16));
                let _ = tx.free(cur);
                old
            }),
            "get" => p.read_tx(move |tx| {
                let (_, cur) = find(tx, tx.root(0), k, 16);
                if cur != 0 && tx.load(cur) == k {
                    tx.load(cur + 8)
                } else {
                    0
                }
            }),
            op => return Err(format!("map has no operation {op}")),
        }
        .map_err(ptm_err)?;
        if r == u64::MAX {
            return Err("put: the region is full".into());
        }
        Ok(opt(r))
    }
    fn observe<P: Ptm>(&self, p: &P) -> Result<Vec<(Call, Value)>, String> {
        self.observe_with(self, p)
    }
}

impl Map {
    /// A map's observation, run by `o`: every key read, an update of each
    /// kind, the keys read again.
    fn observe_with<P: Ptm, O: Object>(&self, o: &O, p: &P) -> Result<Vec<(Call, Value)>, String> {
        let mut calls: Vec<Call> = (1..=KEYS)
            .map(|k| Call::new("get", vec![json!(k)]))
            .collect();
        calls.push(Call::new("put", vec![json!(1), json!(7)]));
        calls.push(Call::new("remove", vec![json!(2)]));
        calls.push(Call::new("get", vec![json!(1)]));
        calls.push(Call::new("get", vec![json!(2)]));
        run_calls(o, p, calls)
    }
}

/// perdure-kv's store (`perdure_kv::Store`, the seed's §6 map with its
/// ordered index) in root slot 0, keys 1–2 as `k1`, `k2`, values as 8
/// little-endian bytes: `put` and `remove` are [`perdure_kv::Store::transaction`]s
/// that read the old value and write (the transaction path: buffered
/// writes applied all or nothing), `get` a plain read. Checked as a `map`;
/// the observation also runs the store's own `check` (both structures,
/// each against the other) on the recovered PTM.
#[derive(Clone, Copy, Debug)]
pub struct Kv;

fn kv_key(k: u64) -> Vec<u8> {
    format!("k{k}").into_bytes()
}

fn kv_value(v: Option<Vec<u8>>) -> Result<Value, String> {
    match v {
        None => Ok(Value::Null),
        Some(b) => {
            let w: [u8; 8] = b
                .try_into()
                .map_err(|b: Vec<u8>| format!("a value of {} bytes, not 8", b.len()))?;
            Ok(opt(u64::from_le_bytes(w)))
        }
    }
}

impl Object for Kv {
    fn name(&self) -> &'static str {
        "kv"
    }
    fn model(&self) -> &'static str {
        "map"
    }
    /// The ordered index takes 1 KiB blocks: CX-PTM's four replicas of a
    /// 32 KiB pool leave no room for a put's.
    fn pool(&self) -> u64 {
        64 << 10
    }
    fn init<P: Ptm>(&self, p: &P) -> Result<(), PtmError> {
        match perdure_kv::Store::create_at(p, 0) {
            Ok(_) => Ok(()),
            Err(perdure_kv::KvError::Ptm(e)) => Err(e),
            Err(e) => Err(PtmError::Config(format!("perdure-kv: {e}"))),
        }
    }
    fn calls(&self, thread: usize, ops: usize, rng: &mut u64) -> Vec<Call> {
        Map.calls(thread, ops, rng)
    }
    fn apply<P: Ptm>(&self, p: &P, call: &Call) -> Result<Value, String> {
        let db = perdure_kv::Store::attach(p, 0).map_err(|e| e.to_string())?;
        let k = kv_key(arg(call, 0)?);
        let old = match call.op.as_str() {
            "put" => {
                let v = arg(call, 1)?.to_le_bytes();
                db.transaction(move |tx| {
                    let old = tx.get(&k)?;
                    tx.put(&k, &v)?;
                    Ok::<_, perdure_kv::KvError>(old)
                })
            }
            "remove" => db.transaction(move |tx| {
                let old = tx.get(&k)?;
                tx.delete(&k)?;
                Ok::<_, perdure_kv::KvError>(old)
            }),
            "get" => db.get(&k),
            op => return Err(format!("kv has no operation {op}")),
        }
        .map_err(|e| format!("{}: {e}", call.op))?;
        kv_value(old)
    }
    fn observe<P: Ptm>(&self, p: &P) -> Result<Vec<(Call, Value)>, String> {
        let db = perdure_kv::Store::attach(p, 0).map_err(|e| e.to_string())?;
        db.check()
            .map_err(|e| format!("check after recovery: {e}"))?;
        let seen = Map.observe_with(self, p)?;
        db.check()
            .map_err(|e| format!("check after the observation: {e}"))?;
        Ok(seen)
    }
}

// --- Scenarios -------------------------------------------------------------------

/// Construction `C` with object `O`, `ops` calls per thread.
pub struct PtmScenario<C: Construction, O: Object> {
    name: &'static str,
    description: &'static str,
    construction: C,
    object: O,
    ops: usize,
}

impl<C: Construction, O: Object> PtmScenario<C, O> {
    /// The scenario `<construction>-<object>` (with `-<ops>ops` unless
    /// `ops` is 2), 2 threads × `ops` calls.
    pub fn new(construction: C, object: O, ops: usize) -> PtmScenario<C, O> {
        let name = if ops == 2 {
            format!("{}-{}", construction.name(), object.name())
        } else {
            format!("{}-{}-{ops}ops", construction.name(), object.name())
        };
        let description = format!(
            "{} with a transactional {}, {THREADS} threads x {ops} calls, null recovery, checked as a {}",
            construction.name(),
            object.name(),
            object.model()
        );
        PtmScenario {
            // Scenario names are `&'static str`; a handful per process.
            name: crate::session::leak(name),
            description: crate::session::leak(description),
            construction,
            object,
            ops,
        }
    }

    fn live<'s>(&self, session: &'s Session) -> Result<&'s Live<C::P>, String> {
        crate::session::state(session)
    }

    /// Runs `f` on a thread of its own, so that the thread id it leases
    /// is given back when it returns (the explorer's threads need both).
    fn on_own_thread<R: Send + 'static>(
        f: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, String> {
        perdure_pm::sync::thread::spawn(f)
            .join()
            .map_err(|_| "a set-up thread panicked".to_string())
    }
}

/// The PTM of one run (or of one recovered image).
struct Live<P> {
    ptm: Arc<P>,
}

impl<C: Construction, O: Object + Clone> Scenario for PtmScenario<C, O> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> &'static str {
        self.description
    }
    fn object(&self) -> &'static str {
        self.object.model()
    }
    /// The explorer's own pool is unused (the PTM owns its pool): small.
    fn pool_size(&self) -> u64 {
        16 << 10
    }
    fn sim_options(&self) -> SimOptions {
        sim_options()
    }
    fn setup(&self, _pool: &Pool<Sim>) -> Result<(), String> {
        Ok(())
    }
    fn unavailable(&self) -> Option<String> {
        (perdure_pm::sync::FLAVOUR != "shuttle").then(|| {
            format!(
                "the PTM scenarios need a `--cfg perdure_shuttle` build (this one's sync facade is {}): \
                 the explorer's threads are shuttle coroutines and the PTMs keep thread-locals; \
                 run them with `python3 tools/verify.py shuttle:ptm`",
                perdure_pm::sync::FLAVOUR
            )
        })
    }
    fn open(&self, pool: &Arc<Pool<Sim>>, after_crash: bool) -> Result<Session, String> {
        if let Some(why) = self.unavailable() {
            return Err(why);
        }
        let ptm = if after_crash {
            // The crash image, in a pool the PTM owns; opening it is the
            // whole recovery (null recovery).
            let own = Pool::volatile_from_words(
                &pool.snapshot_words(),
                Sim::new(pool.backend().options()),
            )
            .map_err(|e| e.to_string())?;
            Arc::new(self.construction.open(own).map_err(ptm_err)?)
        } else {
            let own = Pool::volatile(
                self.name,
                self.object.pool(),
                Sim::new(pool.backend().options()),
            )
            .map_err(|e| e.to_string())?;
            let ptm = Arc::new(self.construction.create(own).map_err(ptm_err)?);
            let (p, o) = (ptm.clone(), self.object.clone());
            Self::on_own_thread(move || o.init(&*p))?.map_err(ptm_err)?;
            ptm
        };
        Ok(Arc::new(Live { ptm }))
    }
    fn sim<'a>(&self, pool: &'a Pool<Sim>, session: &'a Session) -> &'a Sim {
        match session.downcast_ref::<Live<C::P>>() {
            Some(l) => self.construction.pool(&l.ptm).backend(),
            None => pool.backend(),
        }
    }
    fn workload(&self, seed: u64) -> Vec<Vec<Call>> {
        let mut rng = seed | 1;
        (0..THREADS)
            .map(|t| self.object.calls(t, self.ops, &mut rng))
            .collect()
    }
    fn apply(&self, at: At<'_>, call: &Call) -> Result<Value, String> {
        let ptm = &*self.live(at.session)?.ptm;
        caught(|| self.object.apply(ptm, call))
    }
    /// Nothing: opening the image is the recovery ([`Scenario::open`]).
    fn recover(&self, _pool: &Pool<Sim>) -> Result<(), String> {
        Ok(())
    }
    fn observe(&self, at: At<'_>) -> Result<Vec<(Call, Value)>, String> {
        let ptm = &*self.live(at.session)?.ptm;
        caught(|| self.object.observe(ptm))
    }
}

/// `f`, with a panic turned into an error: a closure that panics on the
/// state it finds (an offset outside the region, a cycle) reaches its
/// submitter as a panic, and a damaged state must be reported as a
/// violation, not stop the exploration.
fn caught<R>(f: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into());
        Err(format!("a transaction panicked: {msg}"))
    })
}

/// The persistency model explored: by default a locked RMW does not
/// complete earlier write-backs (as with `Msync`, so the `pfence` before
/// the `cur_comb` CAS is checked); `PERDURE_SIM_RMW=1` explores x86's
/// Px86, where it does and the constructions leave that fence out.
fn sim_options() -> SimOptions {
    SimOptions {
        rmw_completes_flushes: std::env::var("PERDURE_SIM_RMW").as_deref() == Ok("1"),
        ..SimOptions::default()
    }
}

/// The constructions every object runs on: Redo-PTM, its variants (on the
/// small runs only: each row costs CI time), CX-PTM and CX-PUC.
///
/// * `redo-timed-wide`: RedoTimed-PTM whose window never closes (only
///   `combs[0]`/`combs[1]`, backoff, give up when `cur_comb` moves);
/// * `redo-timed-closed`: RedoTimed-PTM whose window is closed at once (the
///   first two tried, then the fallback to any replica);
/// * `redo-opt`: RedoOpt-PTM with postponed per-line `pwb`s (its threshold,
///   a tenth of the replica, is never reached by these objects),
///   non-temporal copies, store and flush aggregation;
/// * `redo-opt-full`: RedoOpt-PTM whose full-flush switch triggers at the
///   second dirty line ([`Redo::opt_full`]).
fn constructions(ops: usize) -> (Vec<Redo>, CxAnnotated, CxPlain) {
    let mut redos = vec![Redo::small("redo", 4)];
    if ops <= 2 {
        redos.push(Redo::opt("redo-opt", 4));
        redos.push(Redo::opt_full("redo-opt-full", 4));
        redos.push(Redo::timed("redo-timed-wide", 4, Duration::MAX));
        redos.push(Redo::timed("redo-timed-closed", 4, Duration::ZERO));
    }
    (
        redos,
        CxAnnotated {
            config: cx_config(),
        },
        CxPlain {
            config: cx_config(),
        },
    )
}

/// Every construction with `object`, `ops` calls per thread.
fn with_every_construction<O: Object + Clone>(object: O, ops: usize) -> Vec<Arc<dyn Scenario>> {
    let (redos, cxp, cxu) = constructions(ops);
    let mut v: Vec<Arc<dyn Scenario>> = Vec::new();
    for r in redos {
        v.push(Arc::new(PtmScenario::new(r, object.clone(), ops)));
    }
    v.push(Arc::new(PtmScenario::new(cxp, object.clone(), ops)));
    v.push(Arc::new(PtmScenario::new(cxu, object, ops)));
    v
}

/// Every PTM scenario: each construction with the counter, the queue, the
/// set and the map, 2 threads × 2 calls (`<construction>-<object>`) and
/// 2 threads × 6 calls (`…-6ops`, for sampled runs); and Redo-PTM with two
/// states per thread (`redo-rsize2-…`: states are reused after two commits
/// of a thread, so replays meet reused states).
pub fn all() -> Vec<Arc<dyn Scenario>> {
    let mut v = Vec::new();
    for ops in [2, 6] {
        v.extend(with_every_construction(Counter, ops));
        v.extend(with_every_construction(Queue, ops));
        v.extend(with_every_construction(Set, ops));
        v.extend(with_every_construction(Map, ops));
    }
    v.push(Arc::new(PtmScenario::new(
        Redo::small("redo-rsize2", 2),
        Queue,
        6,
    )));
    v.push(Arc::new(PtmScenario::new(
        Redo::small("redo-rsize2", 2),
        Map,
        6,
    )));
    v
}

/// perdure-kv's store ([`Kv`]) on every construction, 2 threads × 2 calls
/// (`<construction>-kv`) and × 4 calls (`…-kv-4ops`, Redo-PTM and CX-PTM
/// only).
pub fn kv() -> Vec<Arc<dyn Scenario>> {
    let mut v = with_every_construction(Kv, 2);
    let (redos, cxp, _) = constructions(4);
    for r in redos {
        v.push(Arc::new(PtmScenario::new(r, Kv, 4)));
    }
    v.push(Arc::new(PtmScenario::new(cxp, Kv, 4)));
    v
}

/// The scenario called `name`.
pub fn by_name(name: &str) -> Option<Arc<dyn Scenario>> {
    all().into_iter().chain(kv()).find(|s| s.name() == name)
}
