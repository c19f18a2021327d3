//! The baselines of seed 001, §7.1: the two persistent Michael–Scott queues
//! of Friedman, Herlihy, Marathe and Petrank, "A Persistent Lock-Free Queue
//! for Non-Volatile Memory" (PPoPP 2018), reimplemented from the paper's
//! description, as the seed did, with reclamation and the seed's §6.1 fix.
//!
//! | module | queue | guarantee | per-thread PM slot |
//! | --- | --- | --- | --- |
//! | [`durableq`] | **DurableQ** | durable linearizability; the value of each thread's last dequeue survives a crash | `returnedValues\[tid\]`: the thread's current returned-value block |
//! | [`logq`] | **LogQ** | durable linearizability and detectability: after a crash every thread learns its last operation's number and result | `logs\[tid\]`: the thread's current log entry |
//!
//! Both are lock-free and generic over [`perdure_pm::Backend`] (`Pmem`,
//! `Msync`, `NoFlush`, `Sim`). Unlike the Memento structures of [`crate::ds`]
//! they use no mementos and no [`Runtime`](crate::Runtime): the algorithms
//! are the paper's, over a small persistent layout of their own (below).
//!
//! ## What the paper gives, and how it is cited
//!
//! The paper presents each queue as annotated pseudo-code; the authors also
//! published C++ (`DurableQueue::enq/deq`, `LogQueue::enq/deq/recover`).
//! The figure and line numbers of the PPoPP version could not be checked
//! against the paper's text here, so the code cites the steps by the names
//! of the published operations (`createEnqLogAndNode`, `updateHead`,
//! `finishInsert`, …) and by step labels defined in each module's docs
//! (E1–E4, D1–D6, R1–R4), which the comments in the code repeat.
//!
//! The paper's two flush primitives map onto [`Backend`]:
//!
//! | paper | here |
//! | --- | --- |
//! | `BARRIER(x)` (flush and wait) | `pwb(x)`; `pfence` |
//! | `BARRIER_OPT(x)` before a CAS (`clflushopt`, completed by the next locked instruction) | `pwb(x)`; the CAS — preceded by a `pfence` on backends whose RMWs do not complete write-backs ([`Backend::rmw_completes_flushes`]), followed by one if the CAS failed |
//!
//! ## Reclamation, and the use-after-free fix of seed §6.1
//!
//! Nodes, returned-value blocks (DurableQ) and log entries (LogQ) live in the
//! crate's persistent [`Heap`] and are reclaimed with the crate's epoch-based
//! reclamation (`Collector`, §6): each operation is one critical section
//! (pin at the start; at the end, the deferred flushes, one `pfence`, unpin,
//! free what the epochs allow). A block retired in a critical section is
//! never freed before that section ends.
//!
//! **The bug (seed §6.1).** Both published queues advance `head` with a CAS
//! that is never flushed, and reclaim the old sentinel right after. If the
//! CAS has not persisted when a crash comes, the recovered `head` points at
//! a block that was freed — and possibly reused as someone else's node, log
//! entry or returned-value block — and recovery walks or writes through it.
//! The same stale `head` also makes recovery act on a *later* operation's
//! per-thread block: the dequeue's mark on the node survives, recovery
//! finishes the dequeue again and writes its value into the thread's
//! current returned-value block (DurableQ) or its retired log entry (LogQ).
//!
//! **The fix.** Every dequeue that moves `head` or whose node `head` moved
//! past calls DEFERFLUSH(`head`) (`Collector::defer_flush`): the end of the
//! critical section writes `head` back and fences *before* the section ends,
//! hence before the old sentinel can be freed and before the thread's next
//! operation can retire its previous returned-value block or log entry. So
//! whenever recovery starts from a persisted `head`, every node, log entry
//! and returned-value block it can reach was live at the crash. Batching the
//! flush to the end of the section is the seed's own mitigation: one `pwb`
//! and the fence the section ends with anyway.
//!
//! Two more fixes the reclamation needs (each module's docs has the
//! details): LogQ keeps a dequeue's value in its log entry (the paper's
//! recovery reads it through the removed node, which may be freed by then),
//! and LogQ's enqueue records its completion in its log entry (the paper
//! infers it by finding the node in the queue, which fails — and enqueues a
//! second time — once the node has been dequeued).
//!
//! What a full crash leaks, as in `ebr`: blocks retired in the last
//! two epochs and blocks allocated by operations cut off before they
//! published them. Recovery does not collect them.
//!
//! ## Persistent layout (at a 4096-aligned base offset)
//!
//! | offset | content |
//! | --- | --- |
//! | 0 | header line ([`perdure_pm::meta`]): magic, version, threads P, heap base, heap length |
//! | 64 | `head` (own line) |
//! | 128 | `tail` (own line; written but never flushed, rebuilt by recovery) |
//! | 64·(2 + tid), tid = 1..=P | thread `tid`'s slot line: `returnedValues\[tid\]` or `logs\[tid\]` |
//! | heap (4096-aligned) | [`Heap`] with P + 1 thread slots (the extra one for recovery) |
//!
//! Every block is one 64-byte line, so each `pwb` of a node or an entry is
//! one write-back and no two threads' blocks share a line.

pub mod durableq;
pub mod logq;

pub use durableq::{DurableHandle, DurableQueue, Returned};
pub use logq::{LogHandle, LogQueue, Recovered};

use crate::compose::align_up;
use crate::ebr::{Collector, Participant};
use crate::runtime::{check_placement, pm_word, MementoError};
use crate::word::MAX_THREADS;
use perdure_pm::heap::{Heap, HeapThread};
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{meta, Backend, Pool};

const VERSION: u64 = 1;
const LINE: u64 = 64;
/// Bytes of every block (node, log entry, returned-value block).
pub const BLOCK: u64 = 64;
const HEAD: u64 = 64;
const TAIL: u64 = 128;
/// The node words both queues share: the value and the link.
pub(crate) const VALUE: u64 = 0;
pub(crate) const NEXT: u64 = 8;

/// How to create a baseline queue.
#[derive(Clone, Debug)]
pub struct QueueConfig {
    /// Thread ids `1..=threads` (at most 511).
    pub threads: usize,
    /// Bytes of heap for nodes and per-operation blocks.
    pub heap_bytes: u64,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            threads: 8,
            heap_bytes: 64 << 20,
        }
    }
}

fn heap_base_for(base: u64, threads: u64) -> u64 {
    align_up(base + LINE * (3 + threads), 4096)
}

/// Bytes a queue with `cfg` needs from its base.
pub fn required_bytes(cfg: &QueueConfig) -> u64 {
    heap_base_for(0, cfg.threads as u64) + cfg.heap_bytes
}

/// The persistent layout both queues share, and their DRAM state: the heap,
/// the reclamation domain, and which thread ids have a live handle.
#[derive(Debug)]
pub(crate) struct Arena<'p, B: Backend> {
    pool: &'p Pool<B>,
    base: u64,
    threads: usize,
    heap: Heap<'p, B>,
    heap_range: (u64, u64),
    ebr: Collector,
    rmw_fences: bool,
}

impl<'p, B: Backend> Arena<'p, B> {
    /// Formats the layout at `base`; `init` builds the empty queue with a
    /// recovery-slot thread (its stores made durable by `init`); the header,
    /// magic last, is written after it, so a crash during creation leaves no
    /// queue rather than a half-made one.
    pub(crate) fn create(
        pool: &'p Pool<B>,
        base: u64,
        cfg: &QueueConfig,
        magic: u64,
        init: impl FnOnce(&mut ThreadCtx<'_, 'p, B>) -> Result<(), MementoError>,
    ) -> Result<Self, MementoError> {
        check_placement(cfg.threads, base)?;
        let p = cfg.threads as u64;
        let heap_base = heap_base_for(base, p);
        pool.check_range(base, heap_base - base + cfg.heap_bytes, 4096)?;
        for off in (base..heap_base).step_by(8) {
            pool.word(off)?.store(0, Ordering::Relaxed);
        }
        pool.pwb(base, heap_base - base);
        pool.pfence();
        let heap = Heap::format(pool, heap_base, cfg.heap_bytes, p + 1)?;
        let arena = Arena::assemble(pool, base, cfg.threads, heap, (heap_base, cfg.heap_bytes));
        init(&mut arena.recovery_thread()?)?;
        let words = [magic, VERSION, p, heap_base, cfg.heap_bytes, 0, 0];
        meta::write(pool, base, &words)?;
        Ok(arena)
    }

    /// Opens the layout at `base` (validating the header and the heap) of
    /// the queue `what` with header magic `magic`.
    pub(crate) fn open(
        pool: &'p Pool<B>,
        base: u64,
        magic: u64,
        what: &'static str,
    ) -> Result<Self, MementoError> {
        pool.check_range(base, LINE, 4096)?;
        let corrupt = |reason: String| {
            MementoError::from(perdure_pm::PmError::corrupt("baseline queue", base, reason))
        };
        let words = match meta::read(pool, base, magic)? {
            meta::Verdict::Valid(words) => words,
            meta::Verdict::NoMagic(found) => {
                return Err(meta::NotFormatted::new(what, base, found).into())
            }
            meta::Verdict::BadChecksum(_) => {
                return Err(corrupt("header checksum mismatch".into()))
            }
        };
        let [_, version, p, heap_base, heap_len, _, _] = words;
        if version != VERSION {
            return Err(corrupt(format!("unknown version {version}")));
        }
        if p == 0 || p > MAX_THREADS as u64 {
            return Err(corrupt(format!("thread count {p} out of range")));
        }
        if heap_base != heap_base_for(base, p) {
            return Err(corrupt("the heap base does not follow the slots".into()));
        }
        pool.check_range(base, heap_base - base + heap_len, 4096)?;
        let heap = Heap::open(pool, heap_base)?;
        Ok(Arena::assemble(
            pool,
            base,
            p as usize,
            heap,
            (heap_base, heap_len),
        ))
    }

    fn assemble(
        pool: &'p Pool<B>,
        base: u64,
        threads: usize,
        heap: Heap<'p, B>,
        heap_range: (u64, u64),
    ) -> Self {
        Arena {
            pool,
            base,
            threads,
            heap,
            heap_range,
            ebr: Collector::new(threads + 1),
            rmw_fences: pool.rmw_completes_flushes(),
        }
    }

    pub(crate) fn pool(&self) -> &'p Pool<B> {
        self.pool
    }

    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    pub(crate) fn head(&self) -> u64 {
        self.base + HEAD
    }

    pub(crate) fn tail(&self) -> u64 {
        self.base + TAIL
    }

    /// Thread `tid`'s slot word (`returnedValues\[tid\]` / `logs\[tid\]`).
    pub(crate) fn slot(&self, tid: usize) -> u64 {
        self.base + LINE * (2 + tid as u64)
    }

    /// A plain load, for recovery and inspection.
    pub(crate) fn peek(&self, off: u64) -> u64 {
        pm_word(self.pool, off).load(Ordering::Acquire)
    }

    /// Checks that `off`, read from persistent memory, names a block of the
    /// heap (recovery validates every pointer before following it).
    pub(crate) fn block(&self, off: u64, what: &str) -> Result<u64, MementoError> {
        let (start, len) = self.heap_range;
        if off < start || off >= start + len || off % BLOCK != 0 {
            return Err(MementoError::CorruptStructure(format!(
                "{what} {off:#x} is not a block of the heap [{start:#x}, {:#x})",
                start + len
            )));
        }
        Ok(off)
    }

    /// Walks the list from `from` through the `next` words (at `next_at` in
    /// each node), validating each node, and returns the nodes in order
    /// (`from` first). Fails on a pointer out of the heap or a cycle.
    pub(crate) fn walk(&self, from: u64, next_at: u64) -> Result<Vec<u64>, MementoError> {
        let limit = self.heap_range.1 / BLOCK;
        let mut nodes = vec![self.block(from, "queue node")?];
        let mut n = self.peek(from + next_at);
        while n != 0 {
            if nodes.len() as u64 > limit {
                return Err(MementoError::CorruptStructure("cycle in the queue".into()));
            }
            nodes.push(self.block(n, "queue node")?);
            n = self.peek(n + next_at);
        }
        Ok(nodes)
    }

    /// The values in the queue, oldest first (single-threaded).
    pub(crate) fn contents(&self) -> Result<Vec<u64>, MementoError> {
        let nodes = self.walk(self.peek(self.head()), NEXT)?;
        Ok(nodes[1..].iter().map(|&n| self.peek(n + VALUE)).collect())
    }

    /// A context for thread `tid` (1..=P); one at a time per id.
    pub(crate) fn thread(&self, tid: usize) -> Result<ThreadCtx<'_, 'p, B>, MementoError> {
        if tid == 0 || tid > self.threads {
            return Err(MementoError::BadThread {
                tid,
                threads: self.threads,
            });
        }
        self.claim(tid)
    }

    /// The context recovery and creation use (id 0, its own heap slot).
    pub(crate) fn recovery_thread(&self) -> Result<ThreadCtx<'_, 'p, B>, MementoError> {
        self.claim(0)
    }

    fn claim(&self, tid: usize) -> Result<ThreadCtx<'_, 'p, B>, MementoError> {
        let ebr = self
            .ebr
            .claim(tid)
            .ok_or(MementoError::ThreadInUse { tid })?;
        match self.heap.register() {
            Ok(heap) => Ok(ThreadCtx {
                arena: self,
                tid,
                heap,
                ebr,
            }),
            Err(e) => {
                self.ebr.release(ebr);
                Err(e.into())
            }
        }
    }
}

/// A thread's context: its id, its heap slot, and the persistence
/// vocabulary of the paper over the pool.
#[derive(Debug)]
pub(crate) struct ThreadCtx<'a, 'p, B: Backend> {
    arena: &'a Arena<'p, B>,
    tid: usize,
    heap: HeapThread<'a, 'p, B>,
    /// The id's reclamation state (claimed: one context per id at a time).
    ebr: Participant,
}

impl<B: Backend> Drop for ThreadCtx<'_, '_, B> {
    fn drop(&mut self) {
        self.arena.ebr.release_in_place(&mut self.ebr);
    }
}

impl<'a, 'p, B: Backend> ThreadCtx<'a, 'p, B> {
    pub(crate) fn tid(&self) -> usize {
        self.tid
    }

    pub(crate) fn arena(&self) -> &'a Arena<'p, B> {
        self.arena
    }

    #[inline]
    pub(crate) fn load(&self, off: u64) -> u64 {
        pm_word(self.arena.pool, off).load(Ordering::Acquire)
    }

    #[inline]
    #[track_caller]
    pub(crate) fn store(&self, off: u64, v: u64) {
        pm_word(self.arena.pool, off).store(v, Ordering::Release)
    }

    #[inline]
    #[track_caller]
    pub(crate) fn cas(&self, off: u64, current: u64, new: u64) -> Result<u64, u64> {
        pm_word(self.arena.pool, off).compare_exchange(
            current,
            new,
            Ordering::AcqRel,
            Ordering::Acquire,
        )
    }

    #[inline]
    #[track_caller]
    pub(crate) fn pwb(&self, off: u64, len: u64) {
        self.arena.pool.pwb(off, len);
    }

    #[inline]
    #[track_caller]
    pub(crate) fn pfence(&self) {
        self.arena.pool.pfence();
    }

    /// `BARRIER(x)`: write back and wait.
    #[inline]
    #[track_caller]
    pub(crate) fn barrier(&self, off: u64, len: u64) {
        self.arena.pool.pwb(off, len);
        self.arena.pool.pfence();
    }

    /// `BARRIER_OPT(lines)` followed by `CAS(loc, current, new)`: the lines
    /// are durable when this returns, whatever the CAS did, and on every
    /// backend they are durable no later than the CAS takes effect.
    #[inline]
    pub(crate) fn persist_then_cas(
        &self,
        lines: (u64, u64),
        loc: u64,
        current: u64,
        new: u64,
    ) -> Result<u64, u64> {
        self.pwb(lines.0, lines.1);
        if !self.arena.rmw_fences {
            self.arena.pool.pfence();
        }
        let r = self.cas(loc, current, new);
        if r.is_err() && self.arena.rmw_fences {
            self.arena.pool.pfence();
        }
        r
    }

    /// A fresh zeroed block (not yet durable: the caller flushes it, with a
    /// fence, before publishing it — the heap's contract).
    pub(crate) fn alloc_block(&mut self) -> Result<u64, MementoError> {
        let off = self.heap.alloc(BLOCK)?;
        for w in (off..off + BLOCK).step_by(8) {
            pm_word(self.arena.pool, w).store(0, Ordering::Relaxed);
        }
        Ok(off)
    }

    /// Frees a block nobody else can reach (recovery only).
    pub(crate) fn free_now(&mut self, off: u64) -> Result<(), MementoError> {
        Ok(self.heap.free(off)?)
    }

    /// Starts the operation's critical section.
    #[inline]
    pub(crate) fn pin(&self) {
        self.arena.ebr.pin(self.tid);
    }

    /// RETIRE: `off` is freed once no critical section can still use it.
    #[inline]
    pub(crate) fn retire(&mut self, off: u64) {
        self.arena.ebr.retire(&mut self.ebr, off);
    }

    /// DEFERFLUSH (seed §6.1): `off` is written back before this critical
    /// section ends.
    #[inline]
    pub(crate) fn defer_flush(&mut self, off: u64) {
        self.arena.ebr.defer_flush(&mut self.ebr, off);
    }

    /// Ends the critical section: the deferred write-backs and a fence, then
    /// unpin and free what the epochs allow.
    pub(crate) fn end_op(&mut self) {
        let arena = self.arena;
        let mut flushed = false;
        arena.ebr.drain_flushes(&mut self.ebr, |loc| {
            arena.pool.pwb(loc, 8);
            flushed = true;
        });
        if flushed {
            arena.pool.pfence();
        }
        let heap = &mut self.heap;
        arena.ebr.unpin(&mut self.ebr, |b| {
            if let Err(e) = heap.free(b) {
                eprintln!("perdure-memento: freeing retired block {b:#x} failed: {e}");
            }
        });
    }
}

/// The empty queue (creation): a durable zeroed sentinel that `head` and
/// `tail` name, durably.
pub(crate) fn init_sentinel<B: Backend>(t: &mut ThreadCtx<'_, '_, B>) -> Result<(), MementoError> {
    let sentinel = t.alloc_block()?;
    t.barrier(sentinel, BLOCK);
    let a = t.arena();
    t.store(a.head(), sentinel);
    t.store(a.tail(), sentinel);
    t.pwb(a.head(), 8);
    t.barrier(a.tail(), 8);
    Ok(())
}

/// Enqueue steps E2–E4, the same in both queues: links `node` (durable,
/// `next` null) after the last node and swings `tail`; `BARRIER_OPT` on
/// every link before `tail` passes it, so the links from `head` to `tail`
/// are persisted; the link is durable when this returns.
pub(crate) fn link_at_tail<B: Backend>(t: &ThreadCtx<'_, '_, B>, node: u64) {
    let a = t.arena();
    loop {
        // E2.
        let last = t.load(a.tail());
        let next = t.load(last + NEXT);
        if last != t.load(a.tail()) {
            continue;
        }
        if next == 0 {
            // E3: the link CAS is the linearization point.
            if t.cas(last + NEXT, 0, node).is_ok() {
                let _ = t.persist_then_cas((last + NEXT, 8), a.tail(), last, node);
                return;
            }
        } else {
            // E4: help a lagging tail.
            let _ = t.persist_then_cas((last + NEXT, 8), a.tail(), last, next);
        }
    }
}

/// How a queue's dequeue marks a node and records a dequeue's result
/// (steps D4–D5 differ only in these).
pub(crate) struct Marking<R, F> {
    /// The mark word's offset in a node (`deqThreadID` / `logRemove`).
    pub mark_at: u64,
    /// This dequeue's mark (its thread id / its log entry).
    pub mine: u64,
    /// The block this dequeue's result goes to.
    pub own_record: u64,
    /// The block of the dequeue whose mark is `other` (D5 reads it before
    /// the "same context" check).
    pub record_of: R,
    /// Writes the result — the node and its value — into a record block.
    pub fill: F,
}

/// Dequeue steps D2–D6, the same in both queues: returns the value
/// dequeued, or `None` if the queue was empty (the caller records EMPTY).
pub(crate) fn dequeue_loop<B, R, F>(
    t: &mut ThreadCtx<'_, '_, B>,
    m: Marking<R, F>,
) -> Result<Option<u64>, MementoError>
where
    B: Backend,
    R: Fn(&ThreadCtx<'_, '_, B>, u64) -> Result<u64, MementoError>,
    F: Fn(&ThreadCtx<'_, '_, B>, u64, u64, u64),
{
    let a = t.arena();
    loop {
        // D2.
        let first = t.load(a.head());
        let last = t.load(a.tail());
        let next = t.load(first + NEXT);
        if first != t.load(a.head()) {
            continue;
        }
        if first == last {
            // D3.
            if next == 0 {
                return Ok(None);
            }
            let _ = t.persist_then_cas((last + NEXT, 8), a.tail(), last, next);
            continue;
        }
        let value = t.load(next + VALUE);
        match t.cas(next + m.mark_at, 0, m.mine) {
            Ok(_) => {
                // D4: the mark CAS is the linearization point.
                t.barrier(next + m.mark_at, 8);
                (m.fill)(t, m.own_record, next, value);
                if t.persist_then_cas((m.own_record, BLOCK), a.head(), first, next)
                    .is_ok()
                {
                    t.retire(first);
                }
                // D6: head is past `next` now (moved by us or by a helper):
                // durable before this critical section ends.
                t.defer_flush(a.head());
                return Ok(Some(value));
            }
            Err(other) => {
                // D5: finish the other dequeue, in the same context only.
                let record = (m.record_of)(t, other)?;
                if t.load(a.head()) == first {
                    t.barrier(next + m.mark_at, 8);
                    (m.fill)(t, record, next, value);
                    if t.persist_then_cas((record, BLOCK), a.head(), first, next)
                        .is_ok()
                    {
                        // D6.
                        t.retire(first);
                        t.defer_flush(a.head());
                    }
                }
            }
        }
    }
}

/// Runs `op` as one critical section of `t` (pin, `op`, end).
pub(crate) fn critical<'a, 'p, B: Backend, R>(
    t: &mut ThreadCtx<'a, 'p, B>,
    op: impl FnOnce(&mut ThreadCtx<'a, 'p, B>) -> R,
) -> R {
    t.pin();
    let r = op(t);
    t.end_op();
    r
}

#[cfg(test)]
pub(crate) mod testing {
    //! Shared by the two queues' tests: pools, crash images, workloads.

    use perdure_pm::sim::{CrashPoint, VolatileFill};
    use perdure_pm::{NoFlush, Pool, Sim, SimOptions};
    use std::sync::{Arc, Mutex};

    pub const BASE: u64 = 4096;
    pub const POOL: u64 = 1 << 20;

    pub const BIG_POOL: u64 = 16 << 20;

    /// A configuration filling a pool of `pool_size` bytes from [`BASE`].
    pub fn config(threads: usize, pool_size: u64) -> super::QueueConfig {
        super::QueueConfig {
            threads,
            heap_bytes: pool_size - 2 * BASE - 4096,
        }
    }

    /// A pool of [`BIG_POOL`] bytes without persistence instructions.
    pub fn volatile_pool() -> Pool<NoFlush> {
        Pool::volatile("baseline-test", BIG_POOL, NoFlush).expect("pool")
    }

    pub fn sim_pool(rmw_completes_flushes: bool) -> Pool<Sim> {
        let opts = SimOptions {
            rmw_completes_flushes,
            ..SimOptions::default()
        };
        Pool::volatile("baseline-test", POOL, Sim::new(opts)).expect("pool")
    }

    /// The crash points after every persistence event `run` issues.
    pub fn crash_points_during<R>(
        pool: &Pool<Sim>,
        run: impl FnOnce() -> R,
    ) -> (R, Vec<CrashPoint>) {
        let points = Arc::new(Mutex::new(Vec::new()));
        let sink = points.clone();
        pool.backend().set_crash_hook(move |_, view| {
            sink.lock().unwrap().push(view.capture());
        });
        let r = run();
        pool.backend().clear_crash_hook();
        let points = std::mem::take(&mut *points.lock().unwrap());
        assert!(points.len() > 3, "the operation issued persistence events");
        (r, points)
    }

    /// The simulator's event count so far.
    pub fn events(pool: &Pool<Sim>) -> u64 {
        pool.backend().counts().events
    }

    /// Up to `limit` Px86 crash images of `cp`, each as a fresh pool that
    /// has been "reopened" (a new incarnation, as opening a file does).
    pub fn images(cp: &CrashPoint, limit: u64, seed: u64) -> Vec<Pool<Sim>> {
        let (_, choices) = cp.images(limit, seed);
        choices
            .map(|c| {
                let words = cp.materialize(&c, VolatileFill::Zeroed);
                let p = Pool::volatile_from_words(&words, Sim::default()).expect("image");
                p.reincarnate();
                p
            })
            .collect()
    }

    /// Values are `producer * 1_000_000 + sequence`, so every value is
    /// unique and tells who enqueued it and in which order.
    pub fn value(producer: usize, seq: u64) -> u64 {
        producer as u64 * 1_000_000 + seq
    }

    /// Runs `worker(tid, log)` on threads 1 and 2 concurrently and, after
    /// each persistence event numbered `at` (counted from now), snapshots
    /// the crash point together with a copy of the shared `log` the workers
    /// keep of what they started and completed.
    pub fn concurrent_snapshots<L: Clone + Send + 'static>(
        pool: &Pool<Sim>,
        log: L,
        at: &[u64],
        worker: impl Fn(usize, &Mutex<L>) + Sync,
    ) -> Vec<(CrashPoint, L)> {
        let log = Arc::new(Mutex::new(log));
        let snaps = Arc::new(Mutex::new(Vec::new()));
        {
            let (log, snaps) = (log.clone(), snaps.clone());
            let start = events(pool);
            let at: std::collections::HashSet<u64> = at.iter().map(|e| start + e).collect();
            pool.backend().set_crash_hook(move |ev, view| {
                if at.contains(&ev) {
                    let l = log.lock().unwrap().clone();
                    snaps.lock().unwrap().push((view.capture(), l));
                }
            });
        }
        std::thread::scope(|s| {
            for tid in 1..=2 {
                let (log, worker) = (&log, &worker);
                s.spawn(move || worker(tid, log));
            }
        });
        pool.backend().clear_crash_hook();
        let snaps = std::mem::take(&mut *snaps.lock().unwrap());
        assert!(snaps.len() >= 3, "the run reached the crash points");
        snaps
    }

    /// The queue `before` after operation `arg` (`Some(v)`: enqueue `v`).
    pub fn apply(before: &[u64], arg: Option<u64>) -> Vec<u64> {
        let mut after = before.to_vec();
        match arg {
            Some(v) => after.push(v),
            None if !after.is_empty() => {
                after.remove(0);
            }
            None => {}
        }
        after
    }

    /// An operation on a queue through a handle: `Some(v)` enqueues `v`,
    /// `None` dequeues; the second argument is the operation number.
    pub type Op<'a, H> = &'a (dyn Fn(&mut H, Option<u64>, u64) -> Option<u64> + Sync);

    /// FIFO order on one thread, through an empty queue and back.
    pub fn check_fifo<H>(h: &mut H, op: Op<'_, H>) {
        let mut n = 0..;
        let mut run = |h: &mut H, arg| op(h, arg, n.next().unwrap());
        assert_eq!(run(h, None), None);
        for v in 0..500 {
            run(h, Some(v));
        }
        for v in 0..250 {
            assert_eq!(run(h, None), Some(v));
        }
        for v in 500..600 {
            run(h, Some(v));
        }
        let rest: Vec<u64> = std::iter::from_fn(|| run(h, None)).collect();
        assert_eq!(rest, (250..600).collect::<Vec<_>>());
    }

    /// Two threads enqueue distinct values and dequeue two of every three
    /// concurrently; with what is left (`contents`), every value is
    /// dequeued exactly once and each producer's values in order.
    pub fn check_conservation<H>(
        handle: &(dyn Fn(usize) -> H + Sync),
        op: Op<'_, H>,
        contents: impl FnOnce() -> Vec<u64>,
    ) {
        const N: u64 = 20_000;
        let got: Vec<Vec<u64>> = std::thread::scope(|s| {
            let hs: Vec<_> = (1..=2)
                .map(|tid| {
                    s.spawn(move || {
                        let mut h = handle(tid);
                        let mut out = Vec::new();
                        for i in 0..N {
                            op(&mut h, Some(value(tid, i)), 2 * i);
                            if i % 3 != 2 {
                                out.extend(op(&mut h, None, 2 * i + 1));
                            }
                        }
                        out
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for g in &got {
            per_producer_fifo(g);
        }
        let rest = contents();
        per_producer_fifo(&rest);
        let mut all: Vec<u64> = got.concat();
        all.extend(rest);
        let expect: std::collections::HashSet<u64> = (1..=2)
            .flat_map(|p| (0..N).map(move |i| value(p, i)))
            .collect();
        assert_eq!(all.len(), expect.len(), "a value was lost or duplicated");
        assert_eq!(
            all.into_iter().collect::<std::collections::HashSet<_>>(),
            expect
        );
    }

    /// A recovered queue holding `got` keeps working: a new value goes
    /// behind the recovered ones.
    pub fn check_keeps_working<H>(h: &mut H, op: Op<'_, H>, got: &[u64]) {
        op(h, Some(77), 1_000_000);
        let mut all: Vec<u64> = (1_000_001..).map_while(|n| op(h, None, n)).collect();
        assert_eq!(all.pop(), Some(77));
        assert_eq!(all, got);
    }

    /// Checks that the values of each producer appear in increasing order.
    pub fn per_producer_fifo(values: &[u64]) {
        let mut last = std::collections::HashMap::new();
        for &v in values {
            let p = v / 1_000_000;
            if let Some(&prev) = last.get(&p) {
                assert!(
                    prev < v,
                    "producer {p}: {v} after {prev}: FIFO violated in {values:?}"
                );
            }
            last.insert(p, v);
        }
    }
}
