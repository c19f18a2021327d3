//! The top-level application (seed 001, §2.5): a pool holding the root
//! object, one root memento per thread, the global timestamp arrays, and the
//! monitor that runs root operations and resumes them after crashes.
//!
//! ## Persistent layout (at the runtime's base offset)
//!
//! | offset | content |
//! | --- | --- |
//! | 0 | header line: magic, version, threads P, root-memento size, heap base, heap length, object root, checksum |
//! | 64·(1 + tid), tid = 0..=P | per-thread line: HELP\[Even\]\[tid\], HELP\[Odd\]\[tid\] (§3.1) |
//! | slots | per thread tid = 1..=P: a status line (`status`, `result`, `floor[0]`, `floor[1]`, `own_floor`) then the root memento |
//! | heap (4096-aligned) | [`perdure_pm::heap::Heap`]: the blocks of every structure |
//!
//! DRAM: OWN\[tid\] and LOCAL\[tid\] (§3.1, §2.2), the calibrated [`Clock`], the
//! reclamation [`Collector`].
//!
//! ## A root operation, and invalidating its mementos (§6.3)
//!
//! Thread `tid` runs its operations in order. Its status line holds
//! `status = (index, clearing)` naming the next operation, the last
//! `result`, two *floors* `floor[0..2]` and `own_floor`. Operation `i`
//! trusts only checkpoints newer than `floor[i mod 2]`: LOCAL (§2.2) starts
//! there, in normal and in recovery mode.
//!
//! 1. pin the critical section (or revive the crashed one, §6.2);
//! 2. run the operation with the root memento (in recovery mode if the
//!    thread or the system crashed since it started); it returns `r`;
//! 3. commit, in one line: `result = r`, `floor[(i + 1) mod 2] = now`,
//!    `own_floor = OWN[tid]`, then `status` — Px86 persists a line's stores
//!    in order, so the status persists only with the others. Then pwb.
//!
//! The seed's §6.3 CLEAR must make every pointer checkpointed during the
//! operation unusable once the critical section ends (the blocks may be
//! reclaimed). Two ways, chosen per runtime ([`ClearMode`]):
//!
//! * [`ClearMode::Floor`] (the default): the new floor does it in O(1). Every
//!   timestamp the operation checkpointed is older than the floor, so the
//!   next operation's checkpoints and CASes (strict `>` LOCAL) never take
//!   them for their own. Step 3 writes `status = (i + 1, 0)`; the deferred
//!   flushes (§6.1) are written back and one `pfence` ends the section.
//!   Cost per operation: 1 line + the deferred lines, 1 `pfence`.
//! * [`ClearMode::Zero`] (the seed as written): step 3 writes
//!   `status = (i, CLEARING)`; pwb, pfence; then zero the root memento
//!   (pwb, pfence); then `status = (i + 1, 0)`, pwb, the deferred flushes,
//!   pfence. After a crash with the flag set, [`Runtime::open`] (full crash)
//!   or the thread's next run (thread crash) finishes the clearing.
//!
//! Why two floors: a crash may persist step 3's floor without its status.
//! Operation `i` reads `floor[i mod 2]`, written by operation `i − 1`'s
//! commit; operation `i`'s commit writes the other one, so a torn commit
//! never moves the floor of the operation it belongs to.
//!
//! **`own_floor` is not in the seed.** §3.1 initialises OWN at start-up "as the
//! maximum timestamp checkpointed in CAS mementos", and §6.3 clears mementos
//! at the end of every operation — so after a clear and a full crash the
//! thread's last CAS parity and timestamp would be lost, while HELP\[p\]\[tid\]
//! still holds timestamps of helps of earlier CASes: the next CAS could reuse
//! the parity of the last one, and its recovery could read a stale HELP entry
//! as "helped" (Algorithm 1, L23–L24) and report a CAS that never took
//! effect. (With floors instead of zeroing the same happens when a later
//! failure overwrites the memento of the last success.) `own_floor` keeps
//! OWN's value durable, and [`Runtime::open`] initialises OWN as the larger
//! of `own_floor` and the mementos (see `specs/memento/` for the
//! model-checked argument). The commit writes it; so does a failed CAS
//! about to overwrite the memento of the thread's last success within an
//! operation (a loop reusing its CAS memento, as Clevel's resize does:
//! [`Handle`]'s `keep_own_durable`), before it writes its failure.
//!
//! ## Crashes
//!
//! * **Full crash** (power loss, process death): [`Runtime::open`] validates
//!   the layout, scans every root memento and HELP for T_max, calibrates the
//!   clock, initialises OWN, finishes interrupted clearings, pins the
//!   critical section of every thread whose operation was cut off (its
//!   memento may name blocks; nothing retired from now on is freed until it
//!   has resumed — so every such thread must resume),
//!   and every thread's next operation runs in recovery mode.
//! * **Thread crash** (§2.5 (3)): a thread dies, DRAM survives. The monitor
//!   re-runs the same operation with the same memento in recovery mode, in
//!   the same (revived) critical section. perdure injects them at persistence
//!   events ([`Handle::crash_after`]): the thread unwinds with a
//!   [`ThreadCrash`] payload, as if it had died there.

use crate::compose::{Memento, Scan};
use crate::ebr::{Collector, Participant};
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::CachePadded;
use crate::ts::{Clock, ClockKind};
use crate::word::{CasTs, MAX_THREADS};
use perdure_pm::heap::{Heap, HeapThread};
use perdure_pm::{meta, Backend, PmError, PmWord, Pool};
use std::marker::PhantomData;

const MAGIC: u64 = u64::from_le_bytes(*b"PDMMNTO1");
const VERSION: u64 = 2;
const LINE: u64 = 64;
// Header words, in order: magic, version, threads, root-memento size, heap
// base, heap length, 0; then the checksum (a `meta` line). The object root
// has the otherwise unused line of thread id 0.
const OBJECT_ROOT: u64 = 64;
// Word offsets inside a thread's status line: `status`, `result`,
// `floor[0]`, `floor[1]` (at `ST_FLOOR + 8`), `own_floor`.
perdure_pm::word_offsets!(_, ST_RESULT, ST_FLOOR, _, ST_OWN_FLOOR);
const _: () = assert!(ST_RESULT == 8 && ST_FLOOR == 16 && ST_OWN_FLOOR == 32);
const CLEARING: u64 = 1;

/// How a root operation's mementos are invalidated at its end (§6.3; see
/// the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClearMode {
    /// Raise the thread's timestamp floor: O(1), one line.
    #[default]
    Floor,
    /// Zero the root memento under a crash-safe clearing flag (the seed).
    Zero,
}
/// PATIENCE of Algorithms 2–4 in `rdtscp` ticks (about 13 µs at 3 GHz; the
/// value of the published implementation), or in nanoseconds (40 µs) where
/// the TSC clock's monotonic stand-in reads for a CPU without `rdtscp`.
pub const DEFAULT_PATIENCE_TSC: u64 = 40_000;
/// PATIENCE with the counter clock: readings, not time.
pub const DEFAULT_PATIENCE_COUNTER: u64 = 4;

/// Checks what a new runtime or baseline queue is given: `threads` in
/// `1..=MAX_THREADS` and a 4096-aligned `base`.
pub(crate) fn check_placement(threads: usize, base: u64) -> Result<(), MementoError> {
    if threads == 0 || threads > MAX_THREADS {
        return Err(MementoError::Config(format!(
            "threads must be in 1..={MAX_THREADS}, not {threads}"
        )));
    }
    if base % 4096 != 0 {
        return Err(MementoError::Config("the base must be 4096-aligned".into()));
    }
    Ok(())
}

/// Errors of the runtime.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MementoError {
    /// The pool, the heap, or a header: no runtime (or baseline queue) at
    /// that offset, damaged metadata, the heap out of memory ([`PmError`]).
    #[error(transparent)]
    Pm(#[from] PmError),
    /// The pool was created for a different root memento.
    #[error("the pool's root mementos are {found} bytes, this program's are {expected}: wrong program for this pool")]
    LayoutMismatch {
        /// Size recorded in the pool.
        found: u64,
        /// Size of the program's root memento type.
        expected: u64,
    },
    /// A bad configuration or argument.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A thread id out of range.
    #[error("thread id {tid} is out of range 1..={threads}")]
    BadThread {
        /// The id.
        tid: usize,
        /// Threads of the runtime.
        threads: usize,
    },
    /// A persistent structure is corrupt.
    #[error("corrupt structure: {0}")]
    CorruptStructure(String),
    /// Another live handle already speaks for this thread id.
    #[error("thread id {tid} already has a handle; drop it before asking for another")]
    ThreadInUse {
        /// The id.
        tid: usize,
    },
}

perdure_pm::pm_error_conversions!(MementoError::Pm);

/// How to create a runtime.
#[derive(Clone, Debug)]
pub struct Config {
    /// Thread ids `1..=threads` (at most 511).
    pub threads: usize,
    /// Bytes of heap for the structures' blocks.
    pub heap_bytes: u64,
    /// Timestamp source.
    pub clock: ClockKind,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            threads: 8,
            heap_bytes: 64 << 20,
            clock: ClockKind::Tsc,
        }
    }
}

/// The payload a thread crash unwinds with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadCrash {
    /// The thread.
    pub tid: usize,
}

/// The Memento runtime over a pool, for root mementos of type `M`.
pub struct Runtime<'p, B: Backend, M: Memento> {
    pool: &'p Pool<B>,
    base: u64,
    threads: usize,
    slots: u64,
    heap: Heap<'p, B>,
    clock: Clock,
    local: Vec<CachePadded<AtomicU64>>,
    own: Vec<CachePadded<AtomicU64>>,
    ebr: Collector,
    rmw_fences: bool,
    needs_recovery: Vec<CachePadded<AtomicU64>>,
    patience: u64,
    clear: ClearMode,
    _m: PhantomData<fn() -> M>,
}

impl<B: Backend, M: Memento> std::fmt::Debug for Runtime<'_, B, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("base", &self.base)
            .field("threads", &self.threads)
            .field("clock", &self.clock)
            .finish()
    }
}

fn slot_size<M: Memento>() -> u64 {
    LINE + crate::compose::align_up(M::SIZE, LINE)
}

impl<'p, B: Backend, M: Memento> Runtime<'p, B, M> {
    /// Bytes a runtime with `cfg` needs from its base (4096-aligned).
    pub fn required_bytes(cfg: &Config) -> u64 {
        let slots = LINE * (cfg.threads as u64 + 2) + slot_size::<M>() * cfg.threads as u64;
        crate::compose::align_up(slots, 4096) + cfg.heap_bytes
    }

    /// Creates an empty runtime at `base` (4096-aligned), durably.
    pub fn create(pool: &'p Pool<B>, base: u64, cfg: &Config) -> Result<Self, MementoError> {
        check_placement(cfg.threads, base)?;
        let p = cfg.threads as u64;
        let slots = base + LINE * (p + 2);
        let heap_base = crate::compose::align_up(slots + slot_size::<M>() * p, 4096);
        pool.check_range(base, heap_base - base + cfg.heap_bytes, 4096)?;
        // Zero the header, HELP and the slots; durable before the magic.
        pool.zero_durably(base, heap_base - base)?;
        Heap::format(pool, heap_base, cfg.heap_bytes, p)?;
        let words = [MAGIC, VERSION, p, M::SIZE, heap_base, cfg.heap_bytes, 0];
        meta::write(pool, base, &words)?;
        Self::open_with(pool, base, cfg.clock)
    }

    /// Opens the runtime at `base` after a full crash or a clean shutdown
    /// (§2.5): validates, calibrates, initialises OWN, finishes interrupted
    /// clearings. Every thread's next operation runs in recovery mode.
    pub fn open(pool: &'p Pool<B>, base: u64) -> Result<Self, MementoError> {
        Self::open_with(pool, base, ClockKind::Tsc)
    }

    /// [`Runtime::open`] with a chosen timestamp source.
    pub fn open_with(pool: &'p Pool<B>, base: u64, clock: ClockKind) -> Result<Self, MementoError> {
        pool.check_range(base, LINE, 4096)?;
        let corrupt =
            |reason: &str| MementoError::from(PmError::corrupt("Memento runtime", base, reason));
        let words = match meta::read(pool, base, MAGIC)? {
            meta::Verdict::Valid(words) => words,
            meta::Verdict::NoMagic(found) => {
                return Err(meta::NotFormatted::new("Memento runtime", base, found).into())
            }
            meta::Verdict::BadChecksum(_) => return Err(corrupt("header checksum mismatch")),
        };
        let [_, version, p, mmt_size, heap_base, heap_len, _] = words;
        if version != VERSION {
            return Err(corrupt(&format!("unknown version {version}")));
        }
        if p == 0 || p > MAX_THREADS as u64 {
            return Err(corrupt(&format!("thread count {p} out of range")));
        }
        if mmt_size != M::SIZE {
            return Err(MementoError::LayoutMismatch {
                found: mmt_size,
                expected: M::SIZE,
            });
        }
        let slots = base + LINE * (p + 2);
        if heap_base != crate::compose::align_up(slots + slot_size::<M>() * p, 4096) {
            return Err(corrupt("heap base does not follow the slots"));
        }
        pool.check_range(base, heap_base - base, 4096)?;
        let heap = Heap::open(pool, heap_base)?;
        let _ = heap_len;
        let threads = p as usize;
        let rt_tmp = |clock: Clock| Runtime {
            patience: match clock.kind() {
                ClockKind::Tsc => DEFAULT_PATIENCE_TSC,
                ClockKind::Counter => DEFAULT_PATIENCE_COUNTER,
            },
            pool,
            base,
            threads,
            slots,
            heap,
            clock,
            local: (0..=threads)
                .map(|_| CachePadded(AtomicU64::new(0)))
                .collect(),
            own: (0..=threads)
                .map(|_| CachePadded(AtomicU64::new(0)))
                .collect(),
            ebr: Collector::new(threads + 1),
            rmw_fences: pool.rmw_completes_flushes(),
            needs_recovery: (0..=threads)
                .map(|_| CachePadded(AtomicU64::new(1)))
                .collect(),
            clear: ClearMode::default(),
            _m: PhantomData,
        };
        // Scan HELP, the status lines and every root memento (§2.5 T_max,
        // §3.1 OWN).
        let mut t_max = 0u64;
        let mut owns = vec![CasTs::CLEAR; threads + 1];
        let mut started = vec![false; threads + 1];
        #[allow(clippy::needless_range_loop)] // tid is also a layout index
        for tid in 1..=threads {
            let line = base + LINE * (1 + tid as u64);
            let h0 = pool.word(line)?.load(Ordering::Acquire);
            let h1 = pool.word(line + 8)?.load(Ordering::Acquire);
            let slot = slots + slot_size::<M>() * (tid as u64 - 1);
            let st = |w: u64| pool.word(slot + w).map(|w| w.load(Ordering::Acquire));
            let mut scan = Scan::default();
            scan.timestamp(h0);
            scan.timestamp(h1);
            scan.timestamp(st(ST_FLOOR)?);
            scan.timestamp(st(ST_FLOOR + 8)?);
            scan.cas(CasTs::decode(st(ST_OWN_FLOOR)?));
            let status = st(0)?;
            let floor = st(ST_FLOOR + 8 * ((status >> 1) & 1))?;
            let mut mmt = Scan::default();
            M::at(slot + LINE).scan(pool, &mut mmt);
            // The thread's operation had started if its memento holds a
            // timestamp newer than the operation's floor.
            started[tid] = mmt.t_max > floor;
            scan.timestamp(mmt.t_max);
            if let Some(o) = mmt.own {
                scan.cas(o);
            }
            t_max = t_max.max(scan.t_max);
            owns[tid] = scan.own.unwrap_or(CasTs::CLEAR);
        }
        let rt = rt_tmp(Clock::calibrated(clock, t_max));
        for (tid, o) in owns.iter().enumerate() {
            rt.own[tid].store(o.encode(), Ordering::Relaxed);
        }
        // Pin every thread whose operation was cut off until it resumes
        // (run_root revives the section): its memento may name blocks that
        // another thread, resuming first, would otherwise retire and see
        // reclaimed and reused before this one looks at them.
        for (tid, s) in started.iter().enumerate() {
            if *s {
                rt.ebr.pin(tid);
            }
        }
        // Finish interrupted clearings.
        for tid in 1..=threads {
            let st = rt.w(rt.status_off(tid)).load(Ordering::Acquire);
            if st & CLEARING != 0 {
                rt.finish_clearing(tid, st >> 1);
            }
        }
        Ok(rt)
    }

    /// How operations' mementos are invalidated ([`ClearMode`]); a DRAM
    /// setting, free to change between runs (recovery handles both).
    pub fn set_clear_mode(&mut self, mode: ClearMode) {
        self.clear = mode;
    }

    /// The [`ClearMode`] in use.
    pub fn clear_mode(&self) -> ClearMode {
        self.clear
    }

    /// The pool.
    pub fn pool(&self) -> &'p Pool<B> {
        self.pool
    }

    /// PATIENCE: how long a helping load waits for an operation in progress
    /// to finish before helping it (Algorithm 2 L9, Algorithm 3 L10,
    /// Algorithm 4 L9), in clock units.
    pub fn patience(&self) -> u64 {
        self.patience
    }

    /// Sets PATIENCE.
    pub fn set_patience(&mut self, patience: u64) {
        self.patience = patience;
    }

    /// Threads (ids `1..=threads()`).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The heap.
    pub fn heap(&self) -> &Heap<'p, B> {
        &self.heap
    }

    /// The reclamation domain.
    pub fn collector(&self) -> &Collector {
        &self.ebr
    }

    /// The root object's offset (0 until set).
    pub fn object_root(&self) -> u64 {
        self.w(self.base + OBJECT_ROOT).load(Ordering::Acquire)
    }

    /// Sets the root object durably.
    pub fn set_object_root(&self, off: u64) -> Result<(), MementoError> {
        self.pool.check_range(off, 8, 8)?;
        self.w(self.base + OBJECT_ROOT)
            .store(off, Ordering::Release);
        self.pool.pwb(self.base + OBJECT_ROOT, 8);
        self.pool.psync();
        Ok(())
    }

    pub(crate) fn w(&self, off: u64) -> PmWord<'p, B> {
        pm_word(self.pool, off)
    }

    /// The offset of HELP[`parity`][`tid`] (Algorithm 2), for the trace
    /// producer of perdure-harness.
    #[doc(hidden)]
    pub fn help_off(&self, parity: bool, tid: usize) -> u64 {
        self.base + LINE * (1 + tid as u64) + 8 * parity as u64
    }

    fn slot(&self, tid: usize) -> u64 {
        self.slots + slot_size::<M>() * (tid as u64 - 1)
    }

    fn status_off(&self, tid: usize) -> u64 {
        self.slot(tid)
    }

    /// The offset of `tid`'s root memento.
    pub fn root_memento_offset(&self, tid: usize) -> u64 {
        self.slot(tid) + LINE
    }

    /// The index of `tid`'s next operation, and whether its root memento may
    /// hold progress of it (a crash came since the operation started).
    pub fn next_op(&self, tid: usize) -> u64 {
        self.w(self.status_off(tid)).load(Ordering::Acquire) >> 1
    }

    /// The result of `tid`'s last completed operation (valid once
    /// [`Runtime::next_op`] is past it).
    pub fn last_result(&self, tid: usize) -> u64 {
        self.w(self.status_off(tid) + ST_RESULT)
            .load(Ordering::Acquire)
    }

    /// OWN[tid] (DRAM).
    pub(crate) fn own(&self, tid: usize) -> CasTs {
        CasTs::decode(self.own[tid].load(Ordering::Relaxed))
    }

    pub(crate) fn set_own(&self, tid: usize, v: CasTs) {
        self.own[tid].store(v.encode(), Ordering::Relaxed);
    }

    pub(crate) fn local(&self, tid: usize) -> u64 {
        self.local[tid].load(Ordering::Relaxed)
    }

    pub(crate) fn set_local(&self, tid: usize, ts: u64) {
        self.local[tid].store(ts, Ordering::Relaxed);
    }

    /// [`ClearMode::Zero`] after the flag is set (also recovery): zero the
    /// root memento, then advance the status.
    fn finish_clearing(&self, tid: usize, index: u64) {
        let m = self.root_memento_offset(tid);
        let len = crate::compose::align_up(M::SIZE, LINE);
        if let Err(e) = self.pool.zero_durably(m, len) {
            panic!("perdure-memento: root memento at {m:#x} out of the pool ({e}); the pool is corrupt");
        }
        let st = self.status_off(tid);
        self.w(st).store((index + 1) << 1, Ordering::Release);
        self.pool.pwb(st, 8);
    }

    /// Operation `index`'s floor: its checkpoints are newer.
    fn floor(&self, tid: usize, index: u64) -> u64 {
        self.w(self.status_off(tid) + ST_FLOOR + 8 * (index & 1))
            .load(Ordering::Acquire)
    }

    /// A handle for thread `tid` (claims a heap slot).
    pub fn handle(&self, tid: usize) -> Result<Handle<'_, 'p, B, M>, MementoError> {
        if tid == 0 || tid > self.threads {
            return Err(MementoError::BadThread {
                tid,
                threads: self.threads,
            });
        }
        let ebr = self
            .ebr
            .claim(tid)
            .ok_or(MementoError::ThreadInUse { tid })?;
        let heap = match self.heap.register() {
            Ok(heap) => heap,
            Err(e) => {
                self.ebr.release(ebr);
                return Err(e.into());
            }
        };
        Ok(Handle {
            rt: self,
            tid,
            rec: false,
            heap,
            ebr,
            crash_after: None,
            events: 0,
            fence_due: false,
            committed: None,
        })
    }
}

pub(crate) fn pm_word<B: Backend>(pool: &Pool<B>, off: u64) -> PmWord<'_, B> {
    match pool.word(off) {
        Ok(w) => w,
        // Offsets reach here from validated layouts, from the allocator, or
        // from structures whose recovery validated every reachable pointer.
        Err(e) => panic!("perdure-memento: persistent offset {off:#x} out of the pool ({e}); the pool is corrupt"),
    }
}

pub(crate) fn pm_dword<B: Backend>(pool: &Pool<B>, off: u64) -> perdure_pm::PmDword<'_, B> {
    match pool.dword(off) {
        Ok(w) => w,
        // As pm_word; a detectable-CAS location is 16-aligned by construction.
        Err(e) => panic!("perdure-memento: persistent pair {off:#x} out of the pool or not 16-aligned ({e}); the pool is corrupt"),
    }
}

/// A plain load of a pool word, for single-threaded inspection (`peek`s,
/// recovery-time scans).
pub(crate) fn pm_load<B: Backend>(pool: &Pool<B>, off: u64) -> u64 {
    pm_word(pool, off).load(Ordering::Acquire)
}

/// A thread's context: its id, recovery mode, heap slot and crash injection.
/// Every detectable operation takes one.
pub struct Handle<'r, 'p, B: Backend, M: Memento> {
    rt: &'r Runtime<'p, B, M>,
    tid: usize,
    rec: bool,
    heap: HeapThread<'r, 'p, B>,
    /// This thread id's reclamation state (one handle per id at a time).
    ebr: Participant,
    crash_after: Option<u64>,
    events: u64,
    /// A `pfence` this thread owes before its next write to the pool
    /// ([`Handle::defer_fence`]).
    fence_due: bool,
    /// The status word and the next operation's floor as this handle's last
    /// root operation committed them: only this handle writes them, and
    /// reading them back from the pool would miss the cache (a `clwb` may
    /// evict the line it writes back).
    committed: Option<(u64, u64)>,
}

impl<B: Backend, M: Memento> Drop for Handle<'_, '_, B, M> {
    fn drop(&mut self) {
        // A critical section left open (the handle's thread died in an
        // operation) stays open for the id's next handle to revive.
        self.rt.ebr.release_in_place(&mut self.ebr);
    }
}

impl<B: Backend, M: Memento> std::fmt::Debug for Handle<'_, '_, B, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("tid", &self.tid)
            .field("rec", &self.rec)
            .finish()
    }
}

/// What happened to a root operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completed {
    /// Its index in the thread's sequence.
    pub index: u64,
    /// Its result.
    pub result: u64,
    /// Thread crashes it survived.
    pub thread_crashes: u32,
}

impl<'r, 'p, B: Backend, M: Memento> Handle<'r, 'p, B, M> {
    /// The thread id.
    #[inline]
    pub fn tid(&self) -> usize {
        self.tid
    }

    /// Whether the operation is replaying checkpointed progress (recovery
    /// mode). Sub-operations clear it when they find nothing checkpointed.
    #[inline]
    pub fn rec(&self) -> bool {
        self.rec
    }

    #[inline]
    pub(crate) fn set_rec(&mut self, rec: bool) {
        self.rec = rec;
    }

    /// The runtime.
    #[inline]
    pub fn runtime(&self) -> &'r Runtime<'p, B, M> {
        self.rt
    }

    /// The pool.
    #[inline]
    pub fn pool(&self) -> &'p Pool<B> {
        self.rt.pool
    }

    /// A timestamp (`rdtscp; lfence`, calibrated).
    #[inline]
    pub fn now(&self) -> u64 {
        self.rt.clock.now()
    }

    /// Injects a thread crash after `n` more persistence events of this
    /// thread's Memento code (stores, CASes, pwbs and fences issued through
    /// the handle), or never.
    pub fn crash_after(&mut self, n: Option<u64>) {
        self.crash_after = n;
    }

    /// Persistence events issued through this handle so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    #[inline]
    fn tick(&mut self) {
        self.events += 1;
        if let Some(n) = self.crash_after {
            if n == 0 {
                self.crash_after = None;
                std::panic::panic_any(ThreadCrash { tid: self.tid });
            }
            self.crash_after = Some(n - 1);
        }
    }

    /// A persistent word's load.
    #[inline]
    pub fn load(&self, off: u64) -> u64 {
        self.rt.w(off).load(Ordering::SeqCst)
    }

    /// A persistent word's store (a crash point). `SeqCst`: on x86 an
    /// `xchg`, which also orders it before this thread's later loads — what
    /// a store to a location other threads read may need. For a word no
    /// other thread reads yet, [`Handle::store_private`] is cheaper.
    #[inline]
    #[track_caller]
    pub fn store(&mut self, off: u64, v: u64) {
        self.pay_fence();
        self.rt.w(off).store(v, Ordering::SeqCst);
        self.tick();
    }

    /// A persistent word's store (a crash point) to a word no other thread
    /// reads until a later release of this thread publishes it: the
    /// thread's status line, its mementos, a block it allocated and has not
    /// linked yet. `Release`, a plain `mov` on x86.
    ///
    /// Why it matters: a locked instruction (a `SeqCst` store is an `xchg`)
    /// waits until every earlier `clwb` of the thread has completed, so a
    /// `pwb` followed by a `SeqCst` store serialises on the write-back,
    /// while a plain store lets the write-backs overlap until the next fence
    /// (about 20% of an MSQ-mmt enqueue-dequeue pair on this machine). For
    /// persistence nothing changes: Px86 orders a store after earlier
    /// write-backs of other lines only through a fence, and the algorithms
    /// issue those fences explicitly (the crash explorer's `Sim` backend
    /// treats every store as plain, so what it checked did not depend on
    /// `xchg`'s fence).
    #[inline]
    #[track_caller]
    pub fn store_private(&mut self, off: u64, v: u64) {
        self.pay_fence();
        self.rt.w(off).store(v, Ordering::Release);
        self.tick();
    }

    /// A persistent word's compare-and-swap (a crash point); `Err` holds the
    /// current value.
    #[inline]
    #[track_caller]
    pub fn cas(&mut self, off: u64, current: u64, new: u64) -> Result<u64, u64> {
        if self.fence_due {
            if self.rt.rmw_fences {
                // The locked CAS completes the owed write-backs first.
                self.fence_due = false;
            } else {
                self.pfence();
            }
        }
        let r = self
            .rt
            .w(off)
            .compare_exchange(current, new, Ordering::SeqCst, Ordering::SeqCst);
        self.tick();
        r
    }

    /// A persistent 16-byte pair's atomic load (`off` 16-aligned): on x86 a
    /// `lock cmpxchg16b` that writes back what it finds
    /// ([`perdure_pm::PmDword::load`]); not a crash point.
    #[inline]
    #[track_caller]
    pub(crate) fn load16(&self, off: u64) -> u128 {
        pm_dword(self.rt.pool, off).load()
    }

    /// A persistent 16-byte pair's compare-and-swap (`off` 16-aligned; a
    /// crash point), as [`Handle::cas`] for a word; `Err` holds the current
    /// pair.
    #[inline]
    #[track_caller]
    pub(crate) fn cas16(&mut self, off: u64, current: u128, new: u128) -> Result<u128, u128> {
        if self.fence_due {
            if self.rt.rmw_fences {
                self.fence_due = false;
            } else {
                self.pfence();
            }
        }
        let r = pm_dword(self.rt.pool, off).compare_exchange(current, new);
        self.tick();
        r
    }

    /// `pwb` of the lines of `[off, off + len)` (a crash point).
    #[inline]
    #[track_caller]
    pub fn pwb(&mut self, off: u64, len: u64) {
        self.rt.pool.pwb(off, len);
        self.tick();
    }

    /// Called before a CAS memento holding `prev` is overwritten by a failure
    /// checkpoint (`DetectableCasAtomic::cas`, L29–L31): if `prev` is the
    /// thread's last successful CAS (OWN) and the status line's `own_floor`
    /// does not hold it yet, writes OWN there and makes it durable (`pwb`,
    /// `pfence`) first. Not in the seed. A loop that reuses its CAS memento
    /// after a φ checkpoint (Clevel's resize: `mark`, `swap`) can fail where
    /// it last succeeded; the memento was then the only durable trace of
    /// OWN, and after a full crash before the commit [`Runtime::open`] would
    /// initialise OWN from an older CAS, so that the thread's next CAS took
    /// the parity of its last one (module docs, `own_floor`; found by the
    /// proof in `proofs/theories/Memento/DetCasMulti.v`, whose
    /// `detcas_multi_own_reinit` needs it).
    #[track_caller]
    pub(crate) fn keep_own_durable(&mut self, prev: CasTs) {
        let rt = self.rt;
        let own = rt.own(self.tid);
        if prev.fail || prev.ts != own.ts {
            return;
        }
        let at = rt.status_off(self.tid) + ST_OWN_FLOOR;
        if CasTs::decode(self.load(at)).ts >= own.ts {
            return;
        }
        self.store_private(at, own.encode());
        self.pwb(at, 8);
        self.pfence();
    }

    /// `pfence` (a crash point).
    #[inline]
    #[track_caller]
    pub fn pfence(&mut self) {
        self.rt.pool.pfence();
        self.fence_due = false;
        self.tick();
    }

    /// Pays the `pfence` [`Handle::defer_fence`] owes, if any.
    #[inline]
    #[track_caller]
    fn pay_fence(&mut self) {
        if self.fence_due {
            self.pfence();
        }
    }

    /// Owes a `pfence` before this thread's next write to the pool: the
    /// `pwb`s issued so far must persist before anything the thread writes
    /// later, but nothing between now and that write needs them persisted.
    /// [`Handle::store`], [`Handle::alloc`] and [`Handle::free_unpublished`]
    /// pay the fence first; [`Handle::cas`] pays it where a locked RMW does
    /// not complete earlier write-backs by itself, and on x86, where it does,
    /// pays nothing. The end of a root operation pays it. A thread that
    /// publishes something through DRAM that other threads act on in the
    /// pool must [`Handle::pfence`] first.
    #[inline]
    pub fn defer_fence(&mut self) {
        self.fence_due = true;
    }

    /// `flush` of the seed (`clflush`: write back and wait) = pwb + pfence.
    #[inline]
    #[track_caller]
    pub fn flush(&mut self, off: u64, len: u64) {
        self.pwb(off, len);
        self.pfence();
    }

    /// Before a locked RMW that the seed relies on to complete earlier
    /// `flushopt`s (Px86: a `lock`-prefixed instruction, even a failed CAS,
    /// completes the thread's pending write-backs before its own write): a
    /// `pfence` unless the backend's RMWs do that.
    #[inline]
    #[track_caller]
    pub(crate) fn fence_unless_rmw_fences(&mut self) {
        if !self.rt.rmw_fences {
            self.pfence();
        }
    }

    /// Allocates a zeroed block of `size` bytes. Publish it only after a
    /// fence (the allocator's contract); checkpoint it so a recovering
    /// operation reuses the same block.
    #[track_caller]
    pub fn alloc(&mut self, size: u64) -> Result<u64, MementoError> {
        self.pay_fence();
        let off = self.heap.alloc(size)?;
        let mut o = off;
        while o < off + size {
            self.rt.w(o).store(0, Ordering::Relaxed);
            o += 8;
        }
        Ok(off)
    }

    /// Frees a block immediately (for blocks never published).
    pub fn free_unpublished(&mut self, off: u64) -> Result<(), MementoError> {
        self.pay_fence();
        Ok(self.heap.free(off)?)
    }

    /// Retires a block unlinked in this critical section (§6).
    pub fn retire(&mut self, off: u64) {
        self.rt.ebr.retire(&mut self.ebr, off);
    }

    /// DEFERFLUSH of §6.1: flush `loc` before this critical section ends.
    pub fn defer_flush(&mut self, loc: u64) {
        self.rt.ebr.defer_flush(&mut self.ebr, loc);
    }

    /// LOCAL[tid].
    #[inline]
    pub(crate) fn local(&self) -> u64 {
        self.rt.local(self.tid)
    }

    #[inline]
    pub(crate) fn set_local(&self, ts: u64) {
        self.rt.set_local(self.tid, ts)
    }

    /// Runs this thread's next root operation with its root memento, resuming
    /// it in recovery mode after a crash, and re-running it after every
    /// injected thread crash (§2.5 (3)). `op` gets the operation's index and
    /// must be deterministic given it (the workload), and stable across
    /// crashes through its mementos.
    pub fn run_root(&mut self, mut op: impl FnMut(&mut Self, &mut M, u64) -> u64) -> Completed {
        match self.try_run_root(|h, m, i| Ok::<u64, std::convert::Infallible>(op(h, m, i))) {
            Ok(done) => done,
            Err(never) => match never {},
        }
    }

    /// [`Handle::run_root`] for a body that can fail (a [`MementoError`]
    /// such as a full heap, or an error of the caller's). An `Err` commits
    /// nothing: the operation stays pending, as after a thread crash — its
    /// critical section stays open (blocks its mementos may name are not
    /// reclaimed) and the next `run_root`/`try_run_root` of this thread
    /// resumes it in recovery mode, with the same index and memento, so it
    /// still takes effect exactly once. Pass the same operation again (after
    /// freeing memory, say); what it did before the error is found through
    /// its mementos.
    pub fn try_run_root<E>(
        &mut self,
        mut op: impl FnMut(&mut Self, &mut M, u64) -> Result<u64, E>,
    ) -> Result<Completed, E> {
        let tid = self.tid;
        let rt = self.rt;
        let st_off = rt.status_off(tid);
        // The status and floor this handle committed last, else the pool's
        // (the first operation, and every retry after a thread crash: the
        // crashed attempt may have committed).
        let mut known = self.committed.take();
        let start = match known {
            Some((st, _)) => st >> 1,
            None => rt.w(st_off).load(Ordering::Acquire) >> 1,
        };
        let mut crashes = 0;
        loop {
            let (st, floor) = match known.take() {
                Some(k) => k,
                None => {
                    let st = rt.w(st_off).load(Ordering::Acquire);
                    (st, rt.floor(tid, st >> 1))
                }
            };
            let index = st >> 1;
            if index != start || st & CLEARING != 0 {
                // Committed by an attempt a thread crash cut off (or by the
                // run before a full crash, for a clearing): make it durable.
                if st & CLEARING != 0 {
                    rt.finish_clearing(tid, index);
                } else {
                    rt.pool.pwb(st_off, LINE);
                }
                self.end_section();
                rt.needs_recovery[tid].store(0, Ordering::Relaxed);
                return Ok(Completed {
                    index: start,
                    result: rt.last_result(tid),
                    thread_crashes: crashes,
                });
            }
            rt.ebr.pin(tid);
            self.rec = rt.needs_recovery[tid].load(Ordering::Relaxed) != 0;
            rt.needs_recovery[tid].store(1, Ordering::Relaxed);
            self.set_local(floor);
            let mut mmt = M::at(rt.root_memento_offset(tid));
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let r = op(self, &mut mmt, index)?;
                // Step 3: the commit line; the status last.
                let floor = self.now();
                self.store_private(st_off + ST_RESULT, r);
                self.store_private(st_off + ST_FLOOR + 8 * ((index + 1) & 1), floor);
                self.store_private(st_off + ST_OWN_FLOOR, rt.own[tid].load(Ordering::Relaxed));
                match rt.clear {
                    ClearMode::Floor => self.store_private(st_off, (index + 1) << 1),
                    ClearMode::Zero => {
                        self.store_private(st_off, (index << 1) | CLEARING);
                        self.pwb(st_off, LINE);
                        self.pfence();
                    }
                }
                Ok((r, floor))
            }));
            match run {
                Ok(Err(e)) => return Err(e),
                Ok(Ok((result, floor))) => {
                    self.committed = Some(((index + 1) << 1, floor));
                    match rt.clear {
                        // Completed by end_section's pfence.
                        ClearMode::Floor => rt.pool.pwb(st_off, LINE),
                        ClearMode::Zero => rt.finish_clearing(tid, index),
                    }
                    self.end_section();
                    rt.needs_recovery[tid].store(0, Ordering::Relaxed);
                    return Ok(Completed {
                        index,
                        result,
                        thread_crashes: crashes,
                    });
                }
                Err(payload) => match payload.downcast::<ThreadCrash>() {
                    Ok(_) => {
                        crashes += 1;
                        continue;
                    }
                    Err(other) => std::panic::resume_unwind(other),
                },
            }
        }
    }

    /// Runs `op` as one critical section of §6's reclamation, without a
    /// root operation: no memento, no commit, nothing detectable. For
    /// non-detectable structures on the same runtime (the baselines beside
    /// the detectable versions, e.g. [`ClevelTable::insert_plain`](crate::ds::clevel::ClevelTable::insert_plain)).
    /// Ends like a root operation's section: the deferred flushes, one
    /// `pfence`, unpin. Do not call it while this thread has a root
    /// operation pending (after a thread crash or an `Err` of
    /// [`Handle::try_run_root`]): the section would be that operation's.
    pub fn critical_section<R>(&mut self, op: impl FnOnce(&mut Self) -> R) -> R {
        self.rt.ebr.pin(self.tid);
        let r = op(self);
        self.end_section();
        r
    }

    /// The end of the critical section: deferred flushes, fence, unpin,
    /// free what reclamation allows.
    fn end_section(&mut self) {
        let rt = self.rt;
        rt.ebr
            .drain_flushes(&mut self.ebr, |loc| rt.pool.pwb(loc, 8));
        rt.pool.pfence();
        self.fence_due = false;
        let heap = &mut self.heap;
        rt.ebr.unpin(&mut self.ebr, |b| {
            if let Err(e) = heap.free(b) {
                eprintln!("perdure-memento: freeing retired block {b:#x} failed: {e}");
            }
        });
    }
}

/// Installs (once per process) a panic hook that keeps injected
/// [`ThreadCrash`] unwinds quiet and passes every other panic on.
pub fn quiet_thread_crashes() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<ThreadCrash>().is_none() {
                prev(info);
            }
        }));
    });
}

impl<B: Backend, M: Memento> Handle<'_, '_, B, M> {
    /// A loop containing detectable sub-operations, written so that
    /// Requirement 3 of §2.3 holds by construction: the loop's single φ-node
    /// (its context, `N` words) is checkpointed in `ctx` at the head of every
    /// iteration, so a recovering operation resumes in the iteration it
    /// crashed in, with that iteration's context. `body` returns
    /// `Continue(next context)` or `Break(result)`.
    pub fn detectable_loop<const N: usize, R>(
        &mut self,
        ctx: &mut crate::Checkpoint<N>,
        init: [u64; N],
        mut body: impl FnMut(&mut Self, [u64; N]) -> std::ops::ControlFlow<R, [u64; N]>,
    ) -> R {
        let mut phi = init;
        loop {
            let v = ctx.checkpoint(self, phi);
            match body(self, v) {
                std::ops::ControlFlow::Break(r) => return r,
                std::ops::ControlFlow::Continue(next) => phi = next,
            }
        }
    }
}
