//! Crash-explorer scenarios for RELAX and Mirror (feature `check`):
//! perdure-check's [`Scenario`] for every structure of [`perdure_relax::ds`] under
//! every [`Tracking`] variant it allows, with zeroed and with garbage DRAM
//! after the crash.
//!
//! A scenario is a [`Structure`] (Harris's list, the hash table, the skip list and
//! the BST checked as HISTORY.md's `set`, the array as a `map` from cell to value), a
//! tracking variant (the five lazy ones of §6.4 and Mirror's eager recovery,
//! Chapter 4) and what the volatile region holds when the space is opened
//! after the crash ([`DramInit`]: zeroes, or seeded garbage — a different
//! seed for every image — for the variants that do not assume zeroed DRAM,
//! §6.4.4–6.4.5). Its run:
//!
//! 1. [`Scenario::open`] creates a space on the explorer's pool and the
//!    structure at root 0 (durably, before the explored run);
//! 2. 2 threads run a few seeded calls each (keys 1–4; for the array, cells
//!    1–3), each through its own [`Handle`], while the explorer captures a
//!    crash point after every persistence event (Mirror's NVMM DWCASes,
//!    write-backs and fences, the heap's and the roots' writes);
//! 3. for each crash image the explorer makes, [`Scenario::open`] opens
//!    the space on the image with a fresh volatile region
//!    ([`Space::open`]: O(1) for the lazy variants) and opens the structure
//!    (§6.6: its root object is recovered; eager Mirror copies everything
//!    reachable);
//! 4. [`Scenario::recovering_workload`]: 3 threads then run calls
//!    concurrently right after the crash, on overlapping keys, so lazy
//!    recovery (`recover_field`, Algorithm 6.2; the marked pointers'
//!    `recover_node`, Algorithms 6.3–6.4; the bitsets) runs in several
//!    threads at once and races their Mirror CASes. The explorer records
//!    them with their real interleaving;
//! 5. [`Scenario::observe`] reads every key sequentially, and the whole
//!    history — run, crash, the recovering threads' calls, the reads — must
//!    be durably linearizable (none of these structures is detectable: a
//!    call cut off by the crash took effect entirely or not at all).
//!
//! ## Builds
//!
//! The scenarios run in any build, but only a `--cfg perdure_shuttle`
//! build (`tests/shuttle_explore_relax.rs`) makes every atomic of the crate
//! — the DRAM replica's pairs, the bitsets, the epochs — a scheduling point;
//! in a plain build (`perdure explore relax-…`) the threads are interleaved
//! at persistent-memory accesses only. The pool is small under the shuttle
//! cfg (its heap geometry shrinks to 4 KiB chunks) and 6 MiB otherwise.
//!
//! ## Adding a structure
//!
//! A set-shaped structure with `create(h, root)`, `open(space, root)`,
//! `insert`, `remove` and `contains` (as [`HarrisList`]) is one
//! [`set_structure!`] line, plus one `v.extend(rows(Set::<T>::default(),
//! ops))` line in [`all`]; the variants it admits come from
//! [`SetStructure::applies`] (every variant unless it says otherwise).
//! Another shape implements [`Structure`].
//!
//! Not covered: a second crash during the recovering execution (see
//! `tests/crash_sim.rs`, single-threaded); garbage chosen adversarially
//! (the garbage is random, so a garbage pair inside `recover_field`'s
//! sequence window is practically never drawn; `tests/shuttle_relax.rs` and
//! `tests/suite/mirror.rs` build those); 16-byte CASes persisting as two halves;
//! weak memory (schedules are sequentially consistent).

use perdure_check::explore::{At, Call, Scenario, Session};
use perdure_pm::{Pool, Sim};
use perdure_relax::ds::{Bst, HarrisList, HashTable, PArray, SkipList};
use perdure_relax::{Config, DramInit, Handle, OpenOptions, RelaxError, Space, Tracking};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Threads of the explored run.
pub const THREADS: usize = 2;
/// Threads that run calls concurrently right after the crash.
pub const RECOVERING: usize = 3;
/// The root slot every structure sits at.
const ROOT: usize = 0;
/// Keys of the set workloads (the recovering threads also use 5–6).
const KEYS: u64 = 4;
/// Cells of the array.
const CELLS: usize = 3;

/// Heap bytes of a scenario's space: 24 chunks (the heap's geometry is
/// 4 KiB chunks under loom/shuttle and 256 KiB ones otherwise). A thread
/// claims a chunk per size class it allocates from, and what the crashed
/// incarnation claimed stays claimed (`perdure_pm::heap`), so the run's
/// threads and the recovering ones need a dozen or so.
fn heap_bytes() -> u64 {
    24 * perdure_pm::heap::CHUNK_SIZE
}

/// The space configuration of a scenario with variant `t`.
fn space_config(t: Tracking) -> Config {
    Config {
        threads: THREADS.max(RECOVERING),
        roots: 1,
        heap_bytes: heap_bytes(),
        msb_sequences: t == Tracking::PseudoBitset,
    }
}

fn relax_err(e: RelaxError) -> String {
    e.to_string()
}

fn arg(call: &Call, i: usize) -> Result<u64, String> {
    call.args
        .get(i)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{}: argument {i} must be a number", call.op))
}

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// The short name of a variant in scenario names.
pub fn variant_name(t: Tracking) -> &'static str {
    match t {
        Tracking::Eager => "eager",
        Tracking::Bitset => "bitset",
        Tracking::Markable => "markable",
        Tracking::Hybrid => "hybrid",
        Tracking::ZMarkable => "zmarkable",
        Tracking::PseudoBitset => "pseudobitset",
    }
}

// --- Structures ------------------------------------------------------------------

/// A structure of [`perdure_relax::ds`] and its workloads, as the scenarios drive
/// it.
pub trait Structure: Send + Sync + 'static {
    /// The opened structure (a few offsets).
    type D: Copy + Send + Sync + 'static;
    /// Short name, the second part of the scenario's name.
    fn name(&self) -> &'static str;
    /// The sequential model of HISTORY.md it is checked against.
    fn model(&self) -> &'static str;
    /// Whether the structure runs under variant `t` (§6.4.6).
    fn applies(&self, t: Tracking) -> bool;
    /// Creates the empty structure at root 0.
    fn create(&self, h: &mut Handle<'_, '_, Sim>) -> Result<Self::D, RelaxError>;
    /// Opens it after a crash (recovers its root object, §6.6).
    fn open(&self, s: &Space<'_, Sim>) -> Result<Self::D, RelaxError>;
    /// Thread `thread`'s `ops` calls of the explored run, drawn from `rng`.
    fn calls(&self, thread: usize, ops: usize, rng: &mut u64) -> Vec<Call>;
    /// Recovering thread `thread`'s calls right after the crash.
    fn recovering_calls(&self, thread: usize) -> Vec<Call>;
    /// Performs `call`; its result as HISTORY.md writes it.
    fn apply(&self, d: Self::D, h: &mut Handle<'_, '_, Sim>, call: &Call) -> Result<Value, String>;
    /// The calls that read the whole state, in order.
    fn observe_calls(&self) -> Vec<Call>;
}

/// A set of `u64` keys on a space, with the interface of [`HarrisList`].
pub trait SetStructure: Copy + Send + Sync + 'static {
    /// Short name.
    const NAME: &'static str;
    /// Whether it runs under `t` (the pointer-marking variants need a
    /// recursive structure, §6.4.2–6.4.4).
    fn applies(t: Tracking) -> bool;
    /// Creates an empty set at root `root`.
    fn create(h: &mut Handle<'_, '_, Sim>, root: usize) -> Result<Self, RelaxError>;
    /// Opens the set at root `root`.
    fn open(s: &Space<'_, Sim>, root: usize) -> Result<Self, RelaxError>;
    /// Inserts `key`; false if present.
    fn insert(self, h: &mut Handle<'_, '_, Sim>, key: u64) -> Result<bool, RelaxError>;
    /// Removes `key`; false if absent.
    fn remove(self, h: &mut Handle<'_, '_, Sim>, key: u64) -> Result<bool, RelaxError>;
    /// Whether `key` is present.
    fn contains(self, h: &mut Handle<'_, '_, Sim>, key: u64) -> Result<bool, RelaxError>;
}

/// `set_structure!(Type, "name", |h, root| create, |s, root| open)`: a
/// [`SetStructure`] for a set of [`perdure_relax::ds`] whose `insert`, `remove` and
/// `contains` have [`HarrisList`]'s signatures, under every variant (append
/// `, applies = |t| …` to restrict them).
#[macro_export]
#[doc(hidden)]
macro_rules! __relax_set_structure {
    ($ty:ty, $name:literal, |$h:ident, $r:ident| $create:expr, |$s:ident, $r2:ident| $open:expr $(, applies = |$t:ident| $applies:expr)?) => {
        impl $crate::relax::scenarios::SetStructure for $ty {
            const NAME: &'static str = $name;
            #[allow(unused_variables)]
            fn applies(t: perdure_relax::Tracking) -> bool {
                true $(&& { let $t = t; $applies })?
            }
            fn create(
                $h: &mut perdure_relax::Handle<'_, '_, perdure_pm::Sim>,
                $r: usize,
            ) -> Result<Self, perdure_relax::RelaxError> {
                $create
            }
            fn open(
                $s: &perdure_relax::Space<'_, perdure_pm::Sim>,
                $r2: usize,
            ) -> Result<Self, perdure_relax::RelaxError> {
                $open
            }
            $crate::relax::scenarios::set_structure!(@keyed $ty: insert remove contains);
        }
    };
    // The keyed operations, each the type's own method of that name.
    (@keyed $ty:ty: $($op:ident)*) => {$(
        fn $op(
            self,
            h: &mut perdure_relax::Handle<'_, '_, perdure_pm::Sim>,
            key: u64,
        ) -> Result<bool, perdure_relax::RelaxError> {
            <$ty>::$op(&self, h, key)
        }
    )*};
}
pub use __relax_set_structure as set_structure;

/// Buckets of the scenarios' hash table: 2, so keys 1–4 share buckets.
pub const BUCKETS: usize = 2;

set_structure!(
    HarrisList,
    "list",
    |h, root| HarrisList::create(h, root),
    |s, root| HarrisList::open(s, root)
);
set_structure!(
    HashTable,
    "hash",
    |h, root| HashTable::create(h, root, BUCKETS),
    |s, root| HashTable::open(s, root)
);

set_structure!(
    SkipList,
    "skiplist",
    |h, root| SkipList::create(h, root),
    |s, root| SkipList::open(s, root),
    applies = |t| t != Tracking::Markable
);
set_structure!(Bst, "bst", |h, root| Bst::create(h, root), |s, root| {
    Bst::open(s, root)
});

/// A [`SetStructure`] driven as HISTORY.md's `set`.
pub struct Set<T>(std::marker::PhantomData<fn() -> T>);

impl<T> Default for Set<T> {
    fn default() -> Self {
        Set(std::marker::PhantomData)
    }
}

impl<T: SetStructure> Structure for Set<T> {
    type D = T;
    fn name(&self) -> &'static str {
        T::NAME
    }
    fn model(&self) -> &'static str {
        "set"
    }
    fn applies(&self, t: Tracking) -> bool {
        T::applies(t)
    }
    fn create(&self, h: &mut Handle<'_, '_, Sim>) -> Result<T, RelaxError> {
        T::create(h, ROOT)
    }
    fn open(&self, s: &Space<'_, Sim>) -> Result<T, RelaxError> {
        T::open(s, ROOT)
    }
    /// The first call inserts; then inserts, removes and lookups of keys
    /// 1–4, uniformly.
    fn calls(&self, _thread: usize, ops: usize, rng: &mut u64) -> Vec<Call> {
        (0..ops)
            .map(|k| {
                let r = xorshift(rng);
                let key = json!(1 + r % KEYS);
                let op = if k == 0 {
                    "insert"
                } else {
                    ["insert", "remove", "contains"][((r >> 16) % 3) as usize]
                };
                Call::new(op, vec![key])
            })
            .collect()
    }
    /// Thread `r` looks up key `1 + r`, inserts `2 + r` and removes
    /// `1 + (r + 2) mod 4`: every thread's first call walks (and
    /// recovers) the same nodes, and the keys overlap between threads.
    fn recovering_calls(&self, r: usize) -> Vec<Call> {
        let r = r as u64;
        vec![
            Call::new("contains", vec![json!(1 + r)]),
            Call::new("insert", vec![json!(2 + r)]),
            Call::new("remove", vec![json!(1 + (r + 2) % KEYS)]),
        ]
    }
    fn apply(&self, d: T, h: &mut Handle<'_, '_, Sim>, call: &Call) -> Result<Value, String> {
        let key = arg(call, 0)?;
        let r = match call.op.as_str() {
            "insert" => d.insert(h, key),
            "remove" => d.remove(h, key),
            "contains" => d.contains(h, key),
            op => return Err(format!("a set has no operation {op}")),
        };
        r.map(Value::Bool).map_err(relax_err)
    }
    fn observe_calls(&self) -> Vec<Call> {
        (1..=KEYS + 2)
            .map(|k| Call::new("contains", vec![json!(k)]))
            .collect()
    }
}

/// The array ([`PArray`]) as HISTORY.md's `map`: key `k` is cell `k − 1`, a
/// cell holding 0 is an absent key; `put` and `remove` are CAS loops
/// (Algorithm 4.1) that return the previous value.
#[derive(Clone, Copy, Debug, Default)]
pub struct Array;

impl Array {
    fn cell(d: PArray, call: &Call) -> Result<perdure_relax::PAtomic, String> {
        let k = arg(call, 0)?;
        if k == 0 {
            return Err("array keys start at 1".into());
        }
        d.cell(k as usize - 1).map_err(relax_err)
    }
}

/// 0 as `null`, anything else as the number.
fn opt(w: u64) -> Value {
    if w == 0 {
        Value::Null
    } else {
        json!(w)
    }
}

impl Structure for Array {
    type D = PArray;
    fn name(&self) -> &'static str {
        "array"
    }
    fn model(&self) -> &'static str {
        "map"
    }
    /// No pointers lead to the cells: the field-tracking variants and eager
    /// recovery only (`ds::array`).
    fn applies(&self, t: Tracking) -> bool {
        !t.marks_pointers()
    }
    fn create(&self, h: &mut Handle<'_, '_, Sim>) -> Result<PArray, RelaxError> {
        PArray::create(h, ROOT, CELLS)
    }
    fn open(&self, s: &Space<'_, Sim>) -> Result<PArray, RelaxError> {
        PArray::open(s, ROOT)
    }
    /// Puts (of values unique to the call), gets and removes of cells 1–3.
    fn calls(&self, thread: usize, ops: usize, rng: &mut u64) -> Vec<Call> {
        (0..ops)
            .map(|k| {
                let r = xorshift(rng);
                let key = json!(1 + r % CELLS as u64);
                let v = json!(10 * (thread as u64 + 1) + k as u64);
                match if k == 0 { 0 } else { (r >> 16) % 3 } {
                    0 => Call::new("put", vec![key, v]),
                    1 => Call::new("get", vec![key]),
                    _ => Call::new("remove", vec![key]),
                }
            })
            .collect()
    }
    /// Thread `r` reads cell `1 + r mod 3`, puts into the next one and
    /// reads that: two threads race on each cell's recovery.
    fn recovering_calls(&self, r: usize) -> Vec<Call> {
        let (a, b) = (1 + r as u64 % 3, 1 + (r as u64 + 1) % 3);
        vec![
            Call::new("get", vec![json!(a)]),
            Call::new("put", vec![json!(b), json!(100 + r as u64)]),
            Call::new("get", vec![json!(b)]),
        ]
    }
    fn apply(&self, d: PArray, h: &mut Handle<'_, '_, Sim>, call: &Call) -> Result<Value, String> {
        let cell = Self::cell(d, call)?;
        let sp = h.space();
        let swap = |new: u64| -> Result<Value, String> {
            loop {
                let cur = cell.load(sp).map_err(relax_err)?;
                if cell
                    .compare_exchange(sp, cur, new)
                    .map_err(relax_err)?
                    .is_ok()
                {
                    return Ok(opt(cur));
                }
            }
        };
        match call.op.as_str() {
            "get" => Ok(opt(cell.load(sp).map_err(relax_err)?)),
            "put" => {
                let v = arg(call, 1)?;
                if v == 0 {
                    return Err("put of 0 (0 is an empty cell)".into());
                }
                swap(v)
            }
            "remove" => swap(0),
            op => Err(format!("the array has no operation {op}")),
        }
    }
    fn observe_calls(&self) -> Vec<Call> {
        (1..=CELLS as u64)
            .map(|k| Call::new("get", vec![json!(k)]))
            .collect()
    }
}

// --- The scenario ----------------------------------------------------------------

/// A structure under a tracking variant, with the DRAM after a crash.
pub struct RelaxScenario<S: Structure> {
    name: &'static str,
    description: &'static str,
    structure: S,
    tracking: Tracking,
    garbage: bool,
    ops: usize,
    /// Garbage seeds: one per recovered image.
    seeds: AtomicU64,
}

impl<S: Structure> RelaxScenario<S> {
    /// `relax-<structure>-<variant>-<zero|garbage>` (with `-<ops>ops`
    /// unless `ops` is 3): 2 threads × `ops` calls.
    pub fn new(structure: S, tracking: Tracking, garbage: bool, ops: usize) -> Self {
        let dram = if garbage { "garbage" } else { "zero" };
        let mut name = format!(
            "relax-{}-{}-{dram}",
            structure.name(),
            variant_name(tracking)
        );
        if ops != 3 {
            name += &format!("-{ops}ops");
        }
        let description = format!(
            "{} under {} with {dram} DRAM after the crash, {THREADS} threads x {ops} calls, {RECOVERING} threads recovering concurrently, checked as a {}",
            structure.name(),
            tracking.seed_name(),
            structure.model()
        );
        RelaxScenario {
            // Scenario names are `&'static str`; a few dozen per process.
            name: crate::session::leak(name),
            description: crate::session::leak(description),
            structure,
            tracking,
            garbage,
            ops,
            seeds: AtomicU64::new(0x6a72_6167),
        }
    }

    fn live<'s>(&self, session: &'s Session) -> Result<&'s Live<S::D>, String> {
        crate::session::state(session)
    }

    fn dram(&self) -> DramInit {
        if self.garbage {
            DramInit::Garbage {
                seed: self.seeds.fetch_add(1, Ordering::Relaxed),
            }
        } else {
            DramInit::Zeroed
        }
    }
}

/// The space of one run (or of one recovered image), its structure, and a
/// handle per thread (made on the thread's first call).
///
/// The space borrows the pool and the handles borrow the space, all in one
/// value that the explorer shares between its threads; the borrows are
/// given `'static` lifetimes, which is sound because of where each borrowed
/// value lives (the pool in an `Arc`, the space in a `Box`, neither ever
/// moved out) and of the drop order (fields drop in declaration order:
/// handles, then the space, then the pool).
struct Live<D> {
    handles: Vec<Mutex<Option<Handle<'static, 'static, Sim>>>>,
    space: Box<Space<'static, Sim>>,
    d: D,
    _pool: Arc<Pool<Sim>>,
}

impl<D> Live<D> {
    /// Opens (or creates) the space on `pool` with `space`, and the
    /// structure on it with `d`.
    fn new(
        pool: &Arc<Pool<Sim>>,
        space: impl FnOnce(&'static Pool<Sim>) -> Result<Space<'static, Sim>, RelaxError>,
        d: impl FnOnce(&'static Space<'static, Sim>) -> Result<D, RelaxError>,
    ) -> Result<Self, String> {
        let pool = pool.clone();
        // SAFETY: the pool lives in the `Arc` that `Live` keeps in `_pool`
        // (a heap allocation that does not move), and every value borrowing
        // it (the space, the handles) is dropped before that field (or, on
        // an error here, before the local `pool`).
        let pool_ref: &'static Pool<Sim> = unsafe { &*Arc::as_ptr(&pool) };
        let space = Box::new(space(pool_ref).map_err(relax_err)?);
        // SAFETY: the space is boxed, so moving the box into `Live` does not
        // move it; `d` keeps no borrow of it (it returns offsets), and any
        // handle it makes is dropped before it returns.
        let sp: &'static Space<'static, Sim> =
            unsafe { &*(space.as_ref() as *const Space<'static, Sim>) };
        let d = d(sp).map_err(relax_err)?;
        Ok(Live {
            handles: (0..THREADS.max(RECOVERING))
                .map(|_| Mutex::new(None))
                .collect(),
            space,
            d,
            _pool: pool,
        })
    }

    /// The space, for as long as `self` lives.
    fn space_ref(&self) -> &'static Space<'static, Sim> {
        // SAFETY: the space is boxed (its address is stable while `self`
        // lives) and is dropped after `handles`, the only place where
        // borrows longer than `&self` are kept.
        unsafe { &*(self.space.as_ref() as *const Space<'static, Sim>) }
    }

    /// Runs `f` with thread `thread`'s handle.
    fn with_handle<R>(
        &self,
        thread: usize,
        f: impl FnOnce(&mut Handle<'static, 'static, Sim>) -> R,
    ) -> Result<R, String> {
        let slot = self
            .handles
            .get(thread)
            .ok_or_else(|| format!("no handle slot for thread {thread}"))?;
        // Each slot is used by one thread at a time: never contended.
        let mut g = slot.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(self.space_ref().handle().map_err(relax_err)?);
        }
        match g.as_mut() {
            Some(h) => Ok(f(h)),
            None => Err("no handle".into()),
        }
    }
}

impl<S: Structure> Scenario for RelaxScenario<S> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> &'static str {
        self.description
    }
    fn object(&self) -> &'static str {
        self.structure.model()
    }
    fn pool_size(&self) -> u64 {
        heap_bytes() + (64 << 10)
    }
    /// Nothing: the space is created in [`Scenario::open`], so that the run
    /// starts with the volatile replica of a fresh space, not of a reopened
    /// one.
    fn setup(&self, _pool: &Pool<Sim>) -> Result<(), String> {
        Ok(())
    }
    fn open(&self, pool: &Arc<Pool<Sim>>, after_crash: bool) -> Result<Session, String> {
        let base = pool.data_offset().next_multiple_of(4096);
        let t = self.tracking;
        let live = if after_crash {
            let opts = OpenOptions {
                tracking: t,
                dram: self.dram(),
            };
            Live::new(
                pool,
                |p| Space::open(p, base, opts),
                |sp| self.structure.open(sp),
            )?
        } else {
            let cfg = space_config(t);
            Live::new(
                pool,
                |p| Space::create(p, base, &cfg, OpenOptions::new(t)),
                |sp| {
                    let mut h = sp.handle()?;
                    self.structure.create(&mut h)
                },
            )?
        };
        Ok(Arc::new(live))
    }
    fn workload(&self, seed: u64) -> Vec<Vec<Call>> {
        let mut rng = seed | 1;
        (0..THREADS)
            .map(|t| self.structure.calls(t, self.ops, &mut rng))
            .collect()
    }
    fn apply(&self, at: At<'_>, call: &Call) -> Result<Value, String> {
        let live = self.live(at.session)?;
        live.with_handle(at.thread, |h| self.structure.apply(live.d, h, call))?
    }
    /// A new incarnation of the pool, as opening a pool file starts (the
    /// heap's thread slots of the crashed execution are free again);
    /// opening the space and the structure on the image is the rest of the
    /// blocking part of recovery ([`Scenario::open`]); everything else is
    /// lazy.
    fn recover(&self, pool: &Pool<Sim>) -> Result<(), String> {
        pool.reincarnate();
        Ok(())
    }
    fn recovering_workload(&self, _session: &Session) -> Vec<Vec<Call>> {
        (0..RECOVERING)
            .map(|r| self.structure.recovering_calls(r))
            .collect()
    }
    fn observe(&self, at: At<'_>) -> Result<Vec<(Call, Value)>, String> {
        let live = self.live(at.session)?;
        live.with_handle(at.thread, |h| {
            self.structure
                .observe_calls()
                .into_iter()
                .map(|c| self.structure.apply(live.d, h, &c).map(|v| (c, v)))
                .collect()
        })?
    }
}

/// The DRAM fills variant `t` runs with: zeroed, and garbage unless the
/// variant assumes zeroed DRAM (§6.4.4–6.4.5).
fn fills(t: Tracking) -> &'static [bool] {
    if t.needs_zeroed_dram() {
        &[false]
    } else {
        &[false, true]
    }
}

/// `structure` under every variant it admits, with every DRAM fill the
/// variant admits, 2 threads × `ops` calls.
pub fn rows<S: Structure + Clone>(structure: S, ops: usize) -> Vec<Arc<dyn Scenario>> {
    let mut v: Vec<Arc<dyn Scenario>> = Vec::new();
    for t in Tracking::ALL {
        if !structure.applies(t) {
            continue;
        }
        for &garbage in fills(t) {
            v.push(Arc::new(RelaxScenario::new(
                structure.clone(),
                t,
                garbage,
                ops,
            )));
        }
    }
    v
}

impl<T> Clone for Set<T> {
    fn clone(&self) -> Self {
        Set::default()
    }
}

/// Every RELAX scenario: each structure under each variant and DRAM fill it
/// admits, 2 threads × 3 calls (`relax-<structure>-<variant>-<fill>`) and
/// 2 threads × 8 calls (`…-8ops`, for sampled crash points).
pub fn all() -> Vec<Arc<dyn Scenario>> {
    let mut v = Vec::new();
    for ops in [3, 8] {
        v.extend(rows(Set::<HarrisList>::default(), ops));
        v.extend(rows(Set::<HashTable>::default(), ops));
        v.extend(rows(Set::<SkipList>::default(), ops));
        v.extend(rows(Set::<Bst>::default(), ops));
        v.extend(rows(Array, ops));
    }
    v
}

/// The scenario called `name`.
pub fn by_name(name: &str) -> Option<Arc<dyn Scenario>> {
    all().into_iter().find(|s| s.name() == name)
}
