//! The concurrent persistent heap: per-thread allocation for the lock-free
//! constructions, with crash-consistent metadata in the pool and a bounded
//! crash leak.
//!
//! ## Where it comes from
//!
//! RELAX (thesis, §6.5.1, "A Persistent SMR") proposes making `ssmem`
//! persistent: retired objects are collected in per-thread *free sets*; a
//! completed free set is flushed and pushed on a durable list; a thread
//! allocates from a free set it takes from the list. Its bound: a crash loses,
//! per thread, the free set being allocated from and the free set being
//! filled — "at most two free sets".
//!
//! This heap keeps the free-set structure and does better on the set being
//! allocated from: its position (`alloc_state`) is written back with a `pwb`
//! (no fence) on every allocation, so after a crash allocation resumes where it
//! stopped and the rest of that set is not lost. The same holds for carving
//! fresh chunks (`bump`). Both rely on the allocation contract below.
//!
//! ## The allocation contract
//!
//! [`HeapThread::alloc`] issues a `pwb` but no fence. The caller must not make
//! the returned block reachable from persistent memory (link it into a
//! structure, store it in a root) before its own next `pfence` or `psync`,
//! which every durable structure issues anyway between initialising a node
//! and publishing it. Until then a crash may hand the block out again, which
//! is harmless precisely because nothing persistent refers to it.
//! [`HeapThread::alloc_durable`] adds the fence for callers that want it.
//!
//! ## What a crash can leak (per crash, per thread slot in use)
//!
//! 1. each class's *filling* set: the blocks freed since that class's last
//!    completed set, fewer than [`SET_CAPACITY`] blocks per class (they are
//!    kept in DRAM until the set completes, as in RELAX);
//! 2. at most one spare 512-byte set array;
//! 3. blocks the application allocated but had not yet published (inherent
//!    to any allocator without a recovery-time collection; detectable
//!    constructions such as Memento's can reclaim them);
//! 4. only if the crash hits one of two short windows, one of: a set in
//!    transfer between a slot's stack and the global stack (≤ 62 blocks and its
//!    array), or a chunk claimed but not yet recorded in the slot (≤ 256 KiB).
//!
//! Nothing else is lost: the set being allocated from, the slot's stack of
//! completed sets, the global stacks and the chunk being carved all survive.
//! A TLA+ model of this protocol (`specs/alloc/Heap.tla`) checks
//! double-allocation freedom and this bound; the code is checked by loom,
//! shuttle and the SIGKILL test `heap_kill`.
//!
//! Not done yet: a recovery-time collection that returns leaked blocks given
//! the set of live ones (RELAX suggests one "after a certain number of
//! crashes"); double frees are not detected (a block carries no header).
//!
//! ## Layout (offsets from the heap's base, a 4096-aligned pool offset)
//!
//! | offset | content |
//! | --- | --- |
//! | 0..64 | magic, version, length, slot count, chunk count, chunk-table offset, chunk-area offset, CRC-32 of the preceding words |
//! | 64 | `next_chunk`: chunks `[0, next_chunk)` have been handed out (own line) |
//! | 128 + 64·c | global stack of completed sets of class `c`: `(set >> 9) | tag << 41` (own line) |
//! | 960 + 896·s | slot `s`: line 0 = owner (the pool incarnation that claimed it); line 1 + c = class `c`: `alloc_state`, `sets_head`, `bump`, `set_count` |
//! | table | one word per chunk: the class shift it is carved into (0 = unused) |
//! | chunks | [`CHUNK_SIZE`]-byte chunks, each carved into blocks of one class |
//!
//! A free set is a 512-byte block: `link`, `count`, then up to
//! [`SET_CAPACITY`] block offsets. `alloc_state` packs `(set >> 9) << 16 | index`
//! into one word and `bump` packs `(chunk + 1) << 24 | used`, so each persists
//! atomically (Px86: an aligned 8-byte store does).
//!
//! ## Crash protocol (the order of stores is the algorithm)
//!
//! * alloc from the current set: store `alloc_state = (set, i + 1)`, `pwb`.
//! * pop the slot's own stack: store `alloc_state = (top, 0)`, then
//!   `sets_head = top.link` (same line, so they persist in that order), `pwb`,
//!   `pfence`. Recovery repairs the one intermediate state: if `sets_head` is
//!   the current alloc set, pop it again.
//! * pop the global stack: CAS the head, `pwb` + `pfence`, then store
//!   `alloc_state`, `pwb` + `pfence` (window 4).
//! * complete a filling set: write the array, `pwb` its lines, `pfence`, then
//!   push it: `sets_head = array`, `pwb`, `pfence`.
//! * new chunk: bump `next_chunk`, `pwb` + `pfence`; record its class in the
//!   table, `pwb` + `pfence`; store `bump = (chunk, 0)`, `pwb` + `pfence`
//!   (window 4). Carving: store `bump = (chunk, used + size)`, `pwb`.
//! * An exhausted set's array is reused only after `alloc_state` durably
//!   points elsewhere.
//!
//! Progress: allocation and free are lock-free (the global stacks are Treiber
//! stacks with ABA tags; everything else is thread-local); slot registration
//! is a bounded scan.

use crate::backend::Backend;
use crate::error::PoolError;
use crate::meta;
use crate::pool::{PmWord, Pool};
use crate::sync::atomic::Ordering;

/// Magic word of a formatted heap.
pub const HEAP_MAGIC: u64 = u64::from_le_bytes(*b"PRDHEAP1");
const HEAP_VERSION: u64 = 1;
// Under loom and shuttle the geometry shrinks (4 KiB chunks, 4-block sets,
// one kept set) so that a model checker can reach chunk exhaustion, set
// completion and donation in a few steps; the algorithm is the same.
#[cfg(not(any(perdure_loom, perdure_shuttle)))]
mod geometry {
    pub const CHUNK_SHIFT: u32 = 18;
    pub const MAX_CLASS_SHIFT: u32 = 16;
    pub const SET_CAPACITY: usize = 62;
    pub const KEEP_SETS: u64 = 4;
}
#[cfg(any(perdure_loom, perdure_shuttle))]
mod geometry {
    pub const CHUNK_SHIFT: u32 = 12;
    pub const MAX_CLASS_SHIFT: u32 = 10;
    pub const SET_CAPACITY: usize = 4;
    pub const KEEP_SETS: u64 = 1;
}

/// log2 of the chunk size (256 KiB; 4 KiB under loom/shuttle).
pub const CHUNK_SHIFT: u32 = geometry::CHUNK_SHIFT;
/// Chunks are carved into blocks of a single class.
pub const CHUNK_SIZE: u64 = 1 << CHUNK_SHIFT;
/// Smallest block: 16 bytes.
pub const MIN_CLASS_SHIFT: u32 = 4;
/// Largest block: 64 KiB (1 KiB under loom/shuttle).
pub const MAX_CLASS_SHIFT: u32 = geometry::MAX_CLASS_SHIFT;
/// Number of size classes.
pub const NUM_CLASSES: usize = (MAX_CLASS_SHIFT - MIN_CLASS_SHIFT + 1) as usize;
/// Blocks per completed free set (62; 4 under loom/shuttle).
pub const SET_CAPACITY: usize = geometry::SET_CAPACITY;
const SET_SHIFT: u32 = 9;
const SET_CLASS: usize = (SET_SHIFT - MIN_CLASS_SHIFT) as usize;
/// A slot keeps at most this many completed sets before donating to the
/// global stack.
const KEEP_SETS: u64 = geometry::KEEP_SETS;
/// Default number of thread slots.
pub const DEFAULT_SLOTS: u64 = 64;
/// Largest number of thread slots.
pub const MAX_SLOTS: u64 = 4096;

// Header (a `meta` line): magic, version, length, slots, chunks, table,
// chunk area (in this order; see `Heap::format`), then the check word.
const H_NEXT_CHUNK: u64 = 64;
const H_GLOBAL: u64 = 128;
const H_SLOT_TABLE: u64 = H_GLOBAL + LINE * NUM_CLASSES as u64;
const LINE: u64 = 64;
const SLOT_SIZE: u64 = LINE * (1 + NUM_CLASSES as u64);
const W_ALLOC: u64 = 0;
const W_HEAD: u64 = 8;
const W_BUMP: u64 = 16;
const W_COUNT: u64 = 24;
const TAG_SHIFT: u32 = 41;
const SET_MASK: u64 = (1 << TAG_SHIFT) - 1;

/// Errors of the heap.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HeapError {
    /// No block of the class is free and every chunk is in use.
    #[error(
        "heap out of memory: no free {class_size}-byte block and all {chunks} chunks are in use"
    )]
    OutOfMemory {
        /// Block size of the class.
        class_size: u64,
        /// Number of chunks in the heap.
        chunks: u64,
    },
    /// The request exceeds the largest class.
    #[error("cannot allocate {requested} bytes: the heap's largest block is {max} bytes")]
    TooLarge {
        /// The size asked for.
        requested: u64,
        /// The largest block.
        max: u64,
    },
    /// Every thread slot is taken.
    #[error(
        "all {slots} thread slots are in use; drop a HeapThread or format the heap with more slots"
    )]
    NoFreeSlot {
        /// The number of slots.
        slots: u64,
    },
    /// `free` of an offset that is not a block of this heap.
    #[error("invalid free of offset {offset:#x}: {reason}")]
    InvalidFree {
        /// The offset.
        offset: u64,
        /// Why it was refused.
        reason: &'static str,
    },
    /// No heap at that offset.
    #[error("{0}; format one there first")]
    NotFormatted(#[from] meta::NotFormatted),
    /// The heap's metadata is inconsistent.
    #[error("the heap's metadata is corrupt: {0}")]
    Corrupt(String),
    /// The range cannot hold a heap.
    #[error("cannot format a heap at {base:#x} with {len} bytes: {reason}")]
    BadRange {
        /// Start.
        base: u64,
        /// Length.
        len: u64,
        /// Why.
        reason: String,
    },
    /// A pool error.
    #[error(transparent)]
    Pool(#[from] PoolError),
}

/// The class shift for `size` bytes.
fn class_shift(size: u64) -> Result<u32, HeapError> {
    if size > 1 << MAX_CLASS_SHIFT {
        return Err(HeapError::TooLarge {
            requested: size,
            max: 1 << MAX_CLASS_SHIFT,
        });
    }
    let need = size.max(1 << MIN_CLASS_SHIFT);
    Ok(64 - (need - 1).leading_zeros())
}

fn enc_alloc(set: u64, index: u64) -> u64 {
    if set == 0 {
        0
    } else {
        ((set >> SET_SHIFT) << 16) | index
    }
}

fn dec_alloc(w: u64) -> (u64, u64) {
    ((w >> 16) << SET_SHIFT, w & 0xffff)
}

fn enc_bump(chunk: u64, used: u64) -> u64 {
    ((chunk + 1) << 24) | used
}

/// `None` if no chunk, else (chunk index, bytes used).
fn dec_bump(w: u64) -> Option<(u64, u64)> {
    (w != 0).then(|| ((w >> 24) - 1, w & 0xff_ffff))
}

/// Usage figures of a heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapStats {
    /// Chunks in the heap.
    pub chunks: u64,
    /// Chunks handed out to slots so far.
    pub chunks_used: u64,
    /// Thread slots.
    pub slots: u64,
    /// Slots claimed in the current incarnation.
    pub slots_in_use: u64,
}

/// A concurrent persistent heap in a range of a pool. Share it between
/// threads by reference; each thread allocates through its own
/// [`HeapThread`] from [`Heap::register`].
#[derive(Debug)]
pub struct Heap<'p, B: Backend> {
    pool: &'p Pool<B>,
    base: u64,
    slots: u64,
    nchunks: u64,
    table: u64,
    chunks: u64,
}

impl<'p, B: Backend> Heap<'p, B> {
    /// Formats `[base, base + len)` of `pool` as an empty heap with `slots`
    /// thread slots, discarding what the range held, and makes it durable.
    /// `base` must be 4096-aligned.
    pub fn format(pool: &'p Pool<B>, base: u64, len: u64, slots: u64) -> Result<Self, HeapError> {
        let bad = |reason: String| HeapError::BadRange { base, len, reason };
        if base % 4096 != 0 {
            return Err(bad("the base must be 4096-aligned".into()));
        }
        if slots == 0 || slots > MAX_SLOTS {
            return Err(bad(format!("the slot count must be in 1..={MAX_SLOTS}")));
        }
        pool.check_range(base, len, 4096)?;
        let end = base + len;
        let table = base + H_SLOT_TABLE + slots * SLOT_SIZE;
        // n chunks need n table words before the (4096-aligned) chunk area.
        let mut nchunks = len / CHUNK_SIZE;
        let chunks_at = |n: u64| (table + 8 * n).div_ceil(4096) * 4096;
        while nchunks > 0 && chunks_at(nchunks) + nchunks * CHUNK_SIZE > end {
            nchunks -= 1;
        }
        if nchunks == 0 {
            return Err(bad(format!(
                "too small for {slots} slots and one {CHUNK_SIZE}-byte chunk"
            )));
        }
        let chunks = chunks_at(nchunks);
        // Clear the metadata, make it durable, then write the header and
        // its magic last: a crash mid-format leaves no valid heap.
        pool.zero_durably(base, chunks - base)?;
        let words = [HEAP_MAGIC, HEAP_VERSION, len, slots, nchunks, table, chunks];
        meta::write(pool, base, &words)?;
        Ok(Heap::at(pool, base, [slots, nchunks, table, chunks]))
    }

    /// The heap at `base` with the geometry its header records.
    fn at(pool: &'p Pool<B>, base: u64, [slots, nchunks, table, chunks]: [u64; 4]) -> Self {
        Heap {
            pool,
            base,
            slots,
            nchunks,
            table,
            chunks,
        }
    }

    /// Opens the heap formatted at `base`, validating its header.
    pub fn open(pool: &'p Pool<B>, base: u64) -> Result<Self, HeapError> {
        pool.check_range(base, H_SLOT_TABLE, 4096)?;
        let words = match meta::read(pool, base, HEAP_MAGIC)? {
            meta::Verdict::Valid(words) => words,
            meta::Verdict::NoMagic(found) => {
                return Err(meta::NotFormatted::new("heap", base, found).into())
            }
            meta::Verdict::BadChecksum(check) => {
                return Err(HeapError::Corrupt(format!(
                    "header checksum {check:#x} does not match"
                )))
            }
        };
        let [_, version, len, slots, nchunks, table, chunks] = words;
        if version != HEAP_VERSION {
            return Err(HeapError::Corrupt(format!(
                "unknown heap version {version}"
            )));
        }
        let geometry_ok = (1..=MAX_SLOTS).contains(&slots)
            && table == base + H_SLOT_TABLE + slots * SLOT_SIZE
            && chunks >= table + 8 * nchunks
            && chunks % 4096 == 0
            && nchunks >= 1
            && chunks
                .checked_add(nchunks.saturating_mul(CHUNK_SIZE))
                .is_some_and(|e| base.checked_add(len).is_some_and(|end| e <= end));
        if !geometry_ok {
            return Err(HeapError::Corrupt(
                "inconsistent geometry in the header".into(),
            ));
        }
        pool.check_range(base, len, 4096)?;
        Ok(Heap::at(pool, base, [slots, nchunks, table, chunks]))
    }

    /// The pool the heap lives in.
    pub fn pool(&self) -> &'p Pool<B> {
        self.pool
    }

    fn w(&self, off: u64) -> PmWord<'p, B> {
        // Every offset the heap computes is derived from the validated
        // geometry (or checked by `valid_set`), so it is in range.
        match self.pool.word(off) {
            Ok(w) => w,
            Err(e) => unreachable!("heap offset {off:#x} escaped validation: {e}"),
        }
    }

    /// Claims a free thread slot. After a crash every slot is free again (a
    /// claim is tagged with the pool incarnation); claiming runs the slot's
    /// recovery.
    pub fn register(&self) -> Result<HeapThread<'_, 'p, B>, HeapError> {
        let incarnation = self.pool.incarnation();
        for s in 0..self.slots {
            let slot = self.base + H_SLOT_TABLE + s * SLOT_SIZE;
            let owner = self.w(slot);
            let v = owner.load(Ordering::Acquire);
            if v == incarnation {
                continue;
            }
            if owner
                .compare_exchange(v, incarnation, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                let mut t = HeapThread {
                    heap: self,
                    slot,
                    classes: std::array::from_fn(|_| ClassCache::default()),
                    spare: None,
                };
                match t.recover() {
                    Ok(()) => return Ok(t),
                    Err(e) => {
                        owner.store(0, Ordering::Release);
                        std::mem::forget(t);
                        return Err(e);
                    }
                }
            }
        }
        Err(HeapError::NoFreeSlot { slots: self.slots })
    }

    /// Usage figures.
    pub fn stats(&self) -> HeapStats {
        let inc = self.pool.incarnation();
        HeapStats {
            chunks: self.nchunks,
            chunks_used: self
                .w(self.base + H_NEXT_CHUNK)
                .load(Ordering::Acquire)
                .min(self.nchunks),
            slots: self.slots,
            slots_in_use: (0..self.slots)
                .filter(|s| {
                    self.w(self.base + H_SLOT_TABLE + s * SLOT_SIZE)
                        .load(Ordering::Acquire)
                        == inc
                })
                .count() as u64,
        }
    }

    /// Whether `set` can be the offset of a set array of this heap.
    fn valid_set(&self, set: u64) -> bool {
        set >= self.chunks
            && set < self.chunks + self.nchunks * CHUNK_SIZE
            && set % (1 << SET_SHIFT) == 0
    }

    /// Claims a fresh chunk, durably.
    fn claim_chunk(&self, class_size: u64) -> Result<u64, HeapError> {
        let next = self.w(self.base + H_NEXT_CHUNK);
        let mut cur = next.load(Ordering::Acquire);
        loop {
            if cur >= self.nchunks {
                return Err(HeapError::OutOfMemory {
                    class_size,
                    chunks: self.nchunks,
                });
            }
            match next.compare_exchange_weak(cur, cur + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
        self.pool.pwb(self.base + H_NEXT_CHUNK, 8);
        self.pool.pfence();
        Ok(cur)
    }
}

#[derive(Debug, Default)]
struct ClassCache {
    /// Set being allocated from (0 = none), next index, its count.
    set: u64,
    index: u64,
    count: u64,
    bump: u64,
    sets: u64,
    /// Freed blocks not yet in a completed set (DRAM only).
    filling: Vec<u64>,
}

/// A thread's handle on a [`Heap`]: owns one slot until dropped. Dropping it
/// pushes its partially filled sets into the slot, so a clean shutdown leaks
/// nothing.
#[derive(Debug)]
pub struct HeapThread<'h, 'p, B: Backend> {
    heap: &'h Heap<'p, B>,
    slot: u64,
    classes: [ClassCache; NUM_CLASSES],
    spare: Option<u64>,
}

impl<'h, 'p, B: Backend> HeapThread<'h, 'p, B> {
    fn line(&self, class: usize) -> u64 {
        self.slot + LINE * (1 + class as u64)
    }

    fn store(&self, off: u64, v: u64) {
        self.heap.w(off).store(v, Ordering::Release);
    }

    fn load(&self, off: u64) -> u64 {
        self.heap.w(off).load(Ordering::Acquire)
    }

    /// Loads the slot's persistent state into the cache, validating it, and
    /// repairs the one intermediate state a crash can leave (a pop of the
    /// slot's own stack whose second store was lost).
    fn recover(&mut self) -> Result<(), HeapError> {
        let pool = self.heap.pool;
        for c in 0..NUM_CLASSES {
            let line = self.line(c);
            let (set, index) = dec_alloc(self.load(line + W_ALLOC));
            let mut head = self.load(line + W_HEAD);
            let bump = self.load(line + W_BUMP);
            let corrupt = |what: String| {
                HeapError::Corrupt(format!("slot {:#x} class {c}: {what}", self.slot))
            };
            let mut count = 0;
            if set != 0 {
                if !self.heap.valid_set(set) {
                    return Err(corrupt(format!("alloc set {set:#x} out of range")));
                }
                count = self.load(set + 8);
                if count > SET_CAPACITY as u64 || index > count {
                    return Err(corrupt(format!("alloc set index {index} / count {count}")));
                }
                if head == set {
                    head = self.load(set);
                    self.store(line + W_HEAD, head);
                    pool.pwb(line, LINE);
                    pool.pfence();
                }
            }
            if head != 0 && !self.heap.valid_set(head) {
                return Err(corrupt(format!("stack head {head:#x} out of range")));
            }
            if let Some((chunk, used)) = dec_bump(bump) {
                if chunk >= self.heap.nchunks || used > CHUNK_SIZE {
                    return Err(corrupt(format!("bump chunk {chunk} used {used}")));
                }
            }
            let sets = self.load(line + W_COUNT).min(u64::from(u32::MAX));
            let cache = &mut self.classes[c];
            cache.set = set;
            cache.index = index;
            cache.count = count;
            cache.bump = bump;
            cache.sets = sets;
        }
        Ok(())
    }

    /// Allocates a block of at least `size` bytes (at most 64 KiB) and
    /// returns its pool offset, aligned to `min(block size, 4096)`.
    ///
    /// See the module docs for the contract: do not publish the block before
    /// this thread's next `pfence`/`psync`.
    pub fn alloc(&mut self, size: u64) -> Result<u64, HeapError> {
        let shift = class_shift(size)?;
        self.alloc_class((shift - MIN_CLASS_SHIFT) as usize)
    }

    /// [`HeapThread::alloc`] followed by a `pfence`: the allocation is
    /// durable when this returns.
    pub fn alloc_durable(&mut self, size: u64) -> Result<u64, HeapError> {
        let off = self.alloc(size)?;
        self.heap.pool.pfence();
        Ok(off)
    }

    fn alloc_class(&mut self, c: usize) -> Result<u64, HeapError> {
        let pool = self.heap.pool;
        let line = self.line(c);
        loop {
            let cache = &mut self.classes[c];
            if cache.set != 0 && cache.index < cache.count {
                let block = self
                    .heap
                    .w(cache.set + 16 + 8 * cache.index)
                    .load(Ordering::Relaxed);
                cache.index += 1;
                let state = enc_alloc(cache.set, cache.index);
                self.store(line + W_ALLOC, state);
                pool.pwb(line, 8);
                return Ok(block);
            }
            if !self.refill(c)? {
                return self.carve(c);
            }
        }
    }

    /// Makes a new completed set the current alloc set of class `c`: from
    /// the slot's own stack, else from the global stack. Returns false if
    /// there is none (then `alloc_state` is durably cleared).
    fn refill(&mut self, c: usize) -> Result<bool, HeapError> {
        let pool = self.heap.pool;
        let line = self.line(c);
        let exhausted = self.classes[c].set;
        let top = self.load(line + W_HEAD);
        let taken = if top != 0 {
            if !self.heap.valid_set(top) {
                return Err(HeapError::Corrupt(format!(
                    "stack head {top:#x} out of range"
                )));
            }
            // Pop the own stack: alloc_state first, then sets_head (same
            // line, so a crash keeps a prefix; recover() repairs the middle).
            self.store(line + W_ALLOC, enc_alloc(top, 0));
            self.store(line + W_HEAD, self.load(top));
            let sets = self.classes[c].sets.saturating_sub(1);
            self.classes[c].sets = sets;
            self.store(line + W_COUNT, sets);
            pool.pwb(line, LINE);
            pool.pfence();
            Some(top)
        } else if let Some(t) = self.pop_global(c)? {
            self.store(line + W_ALLOC, enc_alloc(t, 0));
            pool.pwb(line, 8);
            pool.pfence();
            Some(t)
        } else {
            None
        };
        match taken {
            Some(set) => {
                let count = self.load(set + 8);
                if count > SET_CAPACITY as u64 {
                    return Err(HeapError::Corrupt(format!(
                        "set {set:#x} has count {count}"
                    )));
                }
                let cache = &mut self.classes[c];
                cache.set = set;
                cache.index = 0;
                cache.count = count;
            }
            None => {
                if exhausted != 0 {
                    self.store(line + W_ALLOC, 0);
                    pool.pwb(line, 8);
                    pool.pfence();
                    self.classes[c].set = 0;
                }
            }
        }
        // alloc_state durably points elsewhere: the old array may be reused.
        if exhausted != 0 {
            self.release_array(exhausted)?;
        }
        Ok(taken.is_some())
    }

    fn pop_global(&mut self, c: usize) -> Result<Option<u64>, HeapError> {
        let pool = self.heap.pool;
        let g_off = self.heap.base + H_GLOBAL + LINE * c as u64;
        let g = self.heap.w(g_off);
        let mut h = g.load(Ordering::Acquire);
        loop {
            let t = (h & SET_MASK) << SET_SHIFT;
            if t == 0 {
                return Ok(None);
            }
            if !self.heap.valid_set(t) {
                return Err(HeapError::Corrupt(format!(
                    "global stack head {t:#x} out of range"
                )));
            }
            let next = self.load(t);
            let tag = (h >> TAG_SHIFT).wrapping_add(1);
            let new = ((next >> SET_SHIFT) & SET_MASK) | (tag << TAG_SHIFT);
            match g.compare_exchange(h, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    pool.pwb(g_off, 8);
                    pool.pfence();
                    return Ok(Some(t));
                }
                Err(now) => h = now,
            }
        }
    }

    /// Carves a block of class `c` from the slot's chunk, claiming a new
    /// chunk when it is full.
    fn carve(&mut self, c: usize) -> Result<u64, HeapError> {
        let pool = self.heap.pool;
        let line = self.line(c);
        let size = 1u64 << (c as u32 + MIN_CLASS_SHIFT);
        let (chunk, used) = match dec_bump(self.classes[c].bump) {
            Some((chunk, used)) if used + size <= CHUNK_SIZE => (chunk, used),
            _ => {
                let chunk = self.heap.claim_chunk(size)?;
                self.store(
                    self.heap.table + 8 * chunk,
                    u64::from(c as u32 + MIN_CLASS_SHIFT),
                );
                pool.pwb(self.heap.table + 8 * chunk, 8);
                pool.pfence();
                self.store(line + W_BUMP, enc_bump(chunk, 0));
                pool.pwb(line, 8);
                pool.pfence();
                (chunk, 0)
            }
        };
        let bump = enc_bump(chunk, used + size);
        self.classes[c].bump = bump;
        self.store(line + W_BUMP, bump);
        pool.pwb(line, 8);
        Ok(self.heap.chunks + chunk * CHUNK_SIZE + used)
    }

    /// Returns the block at `offset` to the heap. The caller guarantees no
    /// one will access it again (for lock-free structures: after a safe
    /// memory reclamation grace period).
    pub fn free(&mut self, offset: u64) -> Result<(), HeapError> {
        let heap = self.heap;
        let area_end = heap.chunks + heap.nchunks * CHUNK_SIZE;
        if offset < heap.chunks || offset >= area_end {
            return Err(HeapError::InvalidFree {
                offset,
                reason: "outside the heap's chunk area",
            });
        }
        let chunk = (offset - heap.chunks) >> CHUNK_SHIFT;
        let shift = self.load(heap.table + 8 * chunk);
        if !(u64::from(MIN_CLASS_SHIFT)..=u64::from(MAX_CLASS_SHIFT)).contains(&shift) {
            return Err(HeapError::InvalidFree {
                offset,
                reason: "in a chunk no block was ever allocated from",
            });
        }
        if (offset - heap.chunks) % (1 << shift) != 0 {
            return Err(HeapError::InvalidFree {
                offset,
                reason: "not the start of a block",
            });
        }
        self.free_in_class((shift - u64::from(MIN_CLASS_SHIFT)) as usize, offset)
    }

    fn free_in_class(&mut self, c: usize, offset: u64) -> Result<(), HeapError> {
        self.classes[c].filling.push(offset);
        if self.classes[c].filling.len() >= SET_CAPACITY {
            self.complete(c)?;
        }
        Ok(())
    }

    fn release_array(&mut self, array: u64) -> Result<(), HeapError> {
        match self.spare {
            None => {
                self.spare = Some(array);
                Ok(())
            }
            Some(_) => self.free_in_class(SET_CLASS, array),
        }
    }

    /// Turns (up to `SET_CAPACITY` of) class `c`'s filling blocks into a
    /// completed set on the slot's stack, durably.
    fn complete(&mut self, c: usize) -> Result<(), HeapError> {
        let pool = self.heap.pool;
        let mut filling = std::mem::take(&mut self.classes[c].filling);
        let n = filling.len().min(SET_CAPACITY);
        if n == 0 {
            return Ok(());
        }
        let array = match self.spare.take() {
            Some(a) => a,
            None => match self.alloc_class(SET_CLASS) {
                Ok(a) => a,
                Err(HeapError::OutOfMemory { .. }) => {
                    // Keep the blocks; the next free retries.
                    filling.append(&mut self.classes[c].filling);
                    self.classes[c].filling = filling;
                    return Ok(());
                }
                Err(e) => return Err(e),
            },
        };
        let rest = filling.split_off(n);
        for (i, block) in filling.iter().enumerate() {
            self.heap
                .w(array + 16 + 8 * i as u64)
                .store(*block, Ordering::Relaxed);
        }
        let line = self.line(c);
        self.store(array + 8, n as u64);
        self.store(array, self.load(line + W_HEAD));
        pool.pwb(array, 16 + 8 * n as u64);
        pool.pfence();
        let sets = self.classes[c].sets + 1;
        self.classes[c].sets = sets;
        self.store(line + W_HEAD, array);
        self.store(line + W_COUNT, sets);
        pool.pwb(line, LINE);
        pool.pfence();
        // Blocks freed during the completion (released arrays) and the
        // overflow go back to the filling set.
        let mut more = std::mem::take(&mut self.classes[c].filling);
        self.classes[c].filling = rest;
        self.classes[c].filling.append(&mut more);
        if sets > KEEP_SETS {
            self.donate(c)?;
        }
        Ok(())
    }

    /// Moves the top completed set of class `c` to the global stack.
    fn donate(&mut self, c: usize) -> Result<(), HeapError> {
        let pool = self.heap.pool;
        let line = self.line(c);
        let set = self.load(line + W_HEAD);
        if set == 0 {
            return Ok(());
        }
        // Off the own stack first (a crash before the push leaks the set;
        // the other order could hand it out twice).
        self.store(line + W_HEAD, self.load(set));
        let sets = self.classes[c].sets.saturating_sub(1);
        self.classes[c].sets = sets;
        self.store(line + W_COUNT, sets);
        pool.pwb(line, LINE);
        pool.pfence();
        let g_off = self.heap.base + H_GLOBAL + LINE * c as u64;
        let g = self.heap.w(g_off);
        let mut h = g.load(Ordering::Acquire);
        loop {
            self.store(set, (h & SET_MASK) << SET_SHIFT);
            pool.pwb(set, 8);
            pool.pfence();
            let tag = (h >> TAG_SHIFT).wrapping_add(1);
            let new = (set >> SET_SHIFT) | (tag << TAG_SHIFT);
            match g.compare_exchange(h, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => h = now,
            }
        }
        pool.pwb(g_off, 8);
        pool.pfence();
        Ok(())
    }

    /// Number of blocks of each class waiting in DRAM filling sets (what a
    /// crash now would leak from frees).
    pub fn pending_frees(&self) -> usize {
        self.classes.iter().map(|c| c.filling.len()).sum()
    }

    /// Pushes every partially filled set into the slot, durably, so nothing
    /// freed so far can be lost. Runs on drop.
    pub fn flush(&mut self) -> Result<(), HeapError> {
        if let Some(a) = self.spare.take() {
            self.free_in_class(SET_CLASS, a)?;
        }
        for c in 0..NUM_CLASSES {
            while !self.classes[c].filling.is_empty() {
                let before = self.classes[c].filling.len();
                self.complete(c)?;
                if self.classes[c].filling.len() >= before {
                    break; // out of memory for a set array: nothing more to do
                }
            }
        }
        Ok(())
    }
}

impl<B: Backend> Drop for HeapThread<'_, '_, B> {
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            eprintln!("perdure: releasing a heap slot failed to save its free blocks: {e}");
        }
        self.heap.w(self.slot).store(0, Ordering::Release);
    }
}
