//! CX-PUC (seed §4, "CX-PUC"): CX over a plain sequential value, with no
//! annotation of loads or stores; after an update the whole used part of
//! the replica is written back ("the approach we followed was hence to
//! flush the memory region in which the object has been allocated").
//!
//! ## The object, soundly
//!
//! The object is a value of a type `T` that is *plain*: `#[repr(C)]` (or
//! transparent) with no padding, no pointers or references, every bit
//! pattern valid — what `zerocopy`'s `FromBytes`, `IntoBytes`, `KnownLayout`
//! and `Immutable` derives check at compile time ([`Plain`]). It lives in
//! the region at [`OBJECT`] (the first block of the region allocator);
//! whatever it links to lives in further blocks, referred to by region
//! offsets, never by addresses, so a byte copy of a replica is a valid
//! replica (§4: "a byte per byte copy from the region referenced by
//! curComb").
//!
//! An update closure gets a [`PucMut`]: `&mut T` to the object, `&mut U` to
//! any plain `U` in an allocated block, `alloc`/`free`, and the used words
//! as `&mut [u64]` — ordinary Rust, no interposition; every view is checked
//! (bounds and alignment, by zerocopy) and none can outlive the closure's
//! borrow. A read closure gets a [`PucRef`] (`&T`, `&U`).
//!
//! Those references point into a per-thread **working copy** of the
//! replica, not into the replica itself, for two reasons:
//!
//! * the pool hands out its memory only as atomic words (`PmWord`), so that
//!   every backend sees every access — the `Sim` backend records each store
//!   to compute crash images, and a store it did not see would make a crash
//!   image claim that data persisted which never did; a `&mut T` into the
//!   mapping would bypass it;
//! * a panicking closure must be undone, and without annotation only a
//!   snapshot can undo it.
//!
//! The seed's updater applies each node's closure to the replica in place
//! (§4, `applyUpdate` step 4, "Apply all mutations starting at head of the
//! Combined instance until reaching the Node inserted in the first step";
//! "CX-PUC, which does in-place loads") and then writes back the whole
//! region. Here an updater's session on its replica works on the working
//! copy **line by line** (64-byte lines, three bitmaps per session):
//!
//! * a line is loaded from the held replica on its first load or store
//!   (`present`); an absent line holds the replica's words, so the working
//!   copy is, word for word, what the in-place replica would be;
//! * a line's first store in a job saves its words for the job's undo
//!   (`saved`, the undo log: a panicking closure gets its lines back) and
//!   marks it `dirty` for the session;
//! * settling stores into the replica every used word of a dirty line that
//!   differs, in word order — the words an in-place update would have
//!   changed, since a line no job stored to still holds the replica's
//!   words — and the install writes back the whole used part (`pwb` of
//!   every line, as the seed says);
//! * a copy (step 3, "a byte per byte copy from the region referenced by
//!   curComb") loads the source's whole used part and marks it dirty: the
//!   replica's old content is unknown.
//!
//! So an update through the annotated interface costs the lines it
//! touches, plus the `O(used)` write-back the seed already pays. The plain
//! interface ([`PucMut`]) hands out references, so it loads the used part
//! when its closure starts; its mutable views ([`PucMut::get_mut`],
//! [`PucMut::obj_mut`], [`PucMut::words_mut`], allocation) mark the lines
//! they cover. A reader loads the designated replica's used words into its
//! working copy under the shared lock. CX-PUC is for small objects (§6:
//! "CX-PUC results are only presented for small sized data structures").
//! The measurements are in `docs/bench/cx-puc.md`.
//!
//! ## Restrictions
//!
//! * `T` (and everything reached through offsets) must be [`Plain`], with
//!   alignment at most 16 (the allocator's payload alignment).
//! * Only the allocated part of the region — roots, allocator metadata and
//!   blocks up to the allocator's bump pointer — is the object's state:
//!   access beyond it is an error ([`PtmError::BadObject`],
//!   [`PtmError::BadOffset`]). Allocation returns zeroed blocks.
//! * A closure on the plain value ([`CxPuc::update`]) cannot start another
//!   transaction of the same PTM ([`PtmError::NestedInPlainTx`]); the
//!   annotated interface ([`Ptm`](crate::Ptm)) nests as the other PTMs do.
//! * Each thread's working copy is as long as a replica (allocated on its
//!   first transaction; only the used part is touched, so only that part
//!   takes physical memory), plus three bitmaps of a bit per line and the
//!   running job's saved lines.

use super::core::{Comb, Cx, Flavor};
use super::Config;
use crate::error::PtmError;
use crate::front::{self, Front, Handle, Sealed};
use crate::layout::{self, Kind, PoolConfig};
use crate::registry::Kind as TxKind;
use crate::replica::{word, ALLOC_BASE};
use crate::tx::{PWord, Transaction, TxRead, ROOTS};
use perdure_pm::region::{RegionAlloc, RegionError, RegionMemory, BLOCKS_START};
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{Backend, Pool};
use std::cell::Cell;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// A type CX-PUC can keep in persistent memory and copy byte for byte:
/// derive `zerocopy`'s `FromBytes`, `IntoBytes`, `KnownLayout` and
/// `Immutable` (re-exported as [`crate::cx::zerocopy`]) on a `#[repr(C)]`
/// type, plus `Clone` and `Copy`.
pub trait Plain:
    FromBytes + IntoBytes + KnownLayout + Immutable + Copy + Send + Sync + 'static
{
}
impl<T: FromBytes + IntoBytes + KnownLayout + Immutable + Copy + Send + Sync + 'static> Plain
    for T
{
}

const KIND: Kind = Kind {
    name: "CX-PUC",
    magic: MAGIC,
    replicas: |n| 2 * n,
};
/// Magic of a CX-PUC header.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDCXPUC1");
/// The region offset of the object: the payload of the first block the
/// allocator carves from a fresh region.
pub const OBJECT: u64 = ALLOC_BASE + BLOCKS_START + 16;
/// Alignment of the working copies (the allocator's payload alignment).
const ALIGN: usize = 16;

/// What identifies `T`'s layout in the header (size and alignment).
fn fingerprint<T>() -> u64 {
    (1 << 63) | ((std::mem::align_of::<T>() as u64) << 40) | std::mem::size_of::<T>() as u64
}

type UpdateFn = Box<dyn Fn(&mut Work<'_>) -> u64 + Send + Sync>;
type ReadFn = Box<dyn Fn(&[u64], u64) -> u64 + Send + Sync>;

/// What a node of CX-PUC's queue runs: an update closure over the working
/// copy, or a read closure over its words and used length.
pub(crate) enum Job {
    Update(UpdateFn),
    Read(ReadFn),
}

/// The CX-PUC flavour of the consensus.
pub(crate) struct Plainly<B>(PhantomData<B>);

/// Words per line: the unit in which the working copy is loaded from a
/// replica, saved for a job's undo and settled (a replica's length is a
/// multiple of the 4 KiB granule, so of lines).
const LINE_WORDS: usize = 8;

/// One line's words before a job first changed them.
type SavedLine = (usize, [u64; LINE_WORDS]);

/// A thread's working copy of a replica, as 16-aligned words (allocated on
/// first use), with three line bitmaps for the session on it: `present`
/// (the line holds the replica's words, loaded on first touch), `dirty`
/// (the session may have changed it: settling compares these lines only)
/// and `saved` (the running job has saved it into `undo`).
pub(crate) struct WorkingCopy {
    words: Vec<u128>,
    present: Vec<u64>,
    dirty: Vec<u64>,
    saved: Vec<u64>,
    /// Bitmap words `[hi..]` of the three are zero.
    hi: usize,
    undo: Vec<SavedLine>,
    len: usize,
}

impl WorkingCopy {
    fn new(len: usize) -> WorkingCopy {
        WorkingCopy {
            words: Vec::new(),
            present: Vec::new(),
            dirty: Vec::new(),
            saved: Vec::new(),
            hi: 0,
            undo: Vec::new(),
            len,
        }
    }

    fn words(&mut self) -> &mut [u64] {
        if self.words.is_empty() {
            self.words = vec![0; self.len / 2];
            let bitmap = (self.len / LINE_WORDS).div_ceil(64);
            self.present = vec![0; bitmap];
            self.dirty = vec![0; bitmap];
            self.saved = vec![0; bitmap];
        }
        // `[u128]` to `[u64]`: same bytes, stricter alignment.
        match <[u64]>::mut_from_bytes(self.words.as_mut_bytes()) {
            Ok(w) => w,
            Err(_) => unreachable!("u128 words are u64 words"),
        }
    }

    /// Loads the first `used` bytes of the replica at pool offset `base`
    /// (a read's copy: it leaves the line bitmaps alone, a session resets
    /// them when it starts).
    fn load<B: Backend>(&mut self, pool: &Pool<B>, base: u64, used: u64) {
        for (i, w) in self.words()[..(used / 8) as usize].iter_mut().enumerate() {
            *w = word(pool, base + 8 * i as u64).load(Ordering::Relaxed);
        }
    }

    /// Starts a session: no line present, dirty or saved.
    fn reset(&mut self) {
        self.words();
        let hi = self.hi;
        for map in [&mut self.present, &mut self.dirty, &mut self.saved] {
            map[..hi].fill(0);
        }
        self.hi = 0;
        self.undo.clear();
    }

    /// Starts a job: no line saved.
    fn begin_job(&mut self) {
        for &(line, _) in &self.undo {
            self.saved[line / 64] &= !(1 << (line % 64));
        }
        self.undo.clear();
    }

    /// Undoes the running job: every line it changed gets back the words
    /// it had before.
    fn undo_job(&mut self) {
        let undo = std::mem::take(&mut self.undo);
        let words = self.words();
        for &(line, old) in undo.iter().rev() {
            words[line * LINE_WORDS..][..LINE_WORDS].copy_from_slice(&old);
        }
        self.undo = undo;
        self.begin_job();
    }

    /// The session's view for a closure, loading absent lines with
    /// `replica` (word `i` of the held replica).
    fn work<'a>(&'a mut self, used: &'a mut u64, replica: &'a dyn Fn(usize) -> u64) -> Work<'a> {
        self.words();
        let WorkingCopy {
            words,
            present,
            dirty,
            saved,
            hi,
            undo,
            ..
        } = self;
        let words = match <[u64]>::mut_from_bytes(words.as_mut_bytes()) {
            Ok(w) => w,
            Err(_) => unreachable!("u128 words are u64 words"),
        };
        Work {
            words,
            present,
            dirty,
            saved,
            hi,
            undo,
            used,
            replica,
        }
    }

    /// Calls `f` with each line the session may have changed, in order,
    /// and the working copy's words.
    fn for_dirty_lines(&mut self, mut f: impl FnMut(usize, &[u64])) {
        self.words();
        let words = match <[u64]>::ref_from_bytes(self.words.as_bytes()) {
            Ok(w) => w,
            Err(_) => unreachable!("u128 words are u64 words"),
        };
        for (i, &bits) in self.dirty[..self.hi].iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                f(64 * i + bits.trailing_zeros() as usize, words);
                bits &= bits - 1;
            }
        }
    }
}

/// What an update closure runs on: the working copy and its used length,
/// with the line bitmaps that say which words were loaded and changed.
pub(crate) struct Work<'a> {
    words: &'a mut [u64],
    present: &'a mut [u64],
    dirty: &'a mut [u64],
    saved: &'a mut [u64],
    hi: &'a mut usize,
    undo: &'a mut Vec<SavedLine>,
    used: &'a mut u64,
    replica: &'a dyn Fn(usize) -> u64,
}

impl Work<'_> {
    /// The same working copy for a shorter borrow.
    fn reborrow(&mut self) -> Work<'_> {
        Work {
            words: self.words,
            present: self.present,
            dirty: self.dirty,
            saved: self.saved,
            hi: self.hi,
            undo: self.undo,
            used: self.used,
            replica: self.replica,
        }
    }

    /// The same state as cells, for the accesses through `&self`.
    fn lines(&mut self) -> Lines<'_> {
        self.cells().0
    }

    /// [`Work::lines`] and the used length, as cells.
    fn cells(&mut self) -> (Lines<'_>, &Cell<u64>) {
        fn cells(m: &mut [u64]) -> &[Cell<u64>] {
            Cell::from_mut(m).as_slice_of_cells()
        }
        let lines = Lines {
            words: Cell::from_mut(&mut *self.words).as_slice_of_cells(),
            present: cells(self.present),
            dirty: cells(self.dirty),
            saved: cells(self.saved),
            hi: Cell::from_mut(&mut *self.hi),
            undo: Cell::from_mut(&mut *self.undo),
            replica: self.replica,
        };
        (lines, Cell::from_mut(&mut *self.used))
    }
}

/// The working copy of a session, line by line, through shared cells (an
/// annotated transaction's loads and stores take `&self`).
#[derive(Clone, Copy)]
struct Lines<'a> {
    words: &'a [Cell<u64>],
    present: &'a [Cell<u64>],
    dirty: &'a [Cell<u64>],
    saved: &'a [Cell<u64>],
    hi: &'a Cell<usize>,
    undo: &'a Cell<Vec<SavedLine>>,
    replica: &'a dyn Fn(usize) -> u64,
}

impl Lines<'_> {
    fn test(map: &[Cell<u64>], line: usize) -> bool {
        map[line / 64].get() & (1 << (line % 64)) != 0
    }

    fn set(&self, map: &[Cell<u64>], line: usize) {
        let m = &map[line / 64];
        m.set(m.get() | (1 << (line % 64)));
        if self.hi.get() <= line / 64 {
            self.hi.set(line / 64 + 1);
        }
    }

    /// Loads line `line` from the replica unless the working copy has it.
    fn ensure(&self, line: usize) {
        if !Self::test(self.present, line) {
            for i in line * LINE_WORDS..(line + 1) * LINE_WORDS {
                self.words[i].set((self.replica)(i));
            }
            self.set(self.present, line);
        }
    }

    /// Line `line` is about to change: loaded, saved for the job's undo,
    /// marked dirty.
    fn touch(&self, line: usize) {
        self.ensure(line);
        if !Self::test(self.saved, line) {
            let old = std::array::from_fn(|j| self.words[line * LINE_WORDS + j].get());
            let mut undo = self.undo.take();
            undo.push((line, old));
            self.undo.set(undo);
            self.set(self.saved, line);
            self.set(self.dirty, line);
        }
    }

    /// [`Lines::ensure`] of every line of the byte range `r`.
    fn ensure_bytes(&self, r: std::ops::Range<usize>) {
        for line in Self::lines_of(r) {
            self.ensure(line);
        }
    }

    /// [`Lines::touch`] of every line of the byte range `r`.
    fn touch_bytes(&self, r: std::ops::Range<usize>) {
        for line in Self::lines_of(r) {
            self.touch(line);
        }
    }

    fn lines_of(r: std::ops::Range<usize>) -> std::ops::Range<usize> {
        let line = 8 * LINE_WORDS;
        if r.is_empty() {
            0..0
        } else {
            r.start / line..r.end.div_ceil(line)
        }
    }

    fn load(&self, i: usize) -> u64 {
        self.ensure(i / LINE_WORDS);
        self.words[i].get()
    }

    fn store(&self, i: usize, val: u64) {
        self.touch(i / LINE_WORDS);
        self.words[i].set(val);
    }
}

/// The region allocator (and its zero fill) over the working copy, line
/// by line; offsets are region offsets.
impl RegionMemory for Lines<'_> {
    fn byte_len(&self) -> u64 {
        8 * self.words.len() as u64
    }
    fn load(&self, off: u64) -> u64 {
        Lines::load(self, (off / 8) as usize)
    }
    fn store(&mut self, off: u64, val: u64) {
        Lines::store(self, (off / 8) as usize, val)
    }
}

/// One thread applying nodes to the replica it holds, through its working
/// copy.
pub(crate) struct Session<'a, B: Backend> {
    pool: &'a Pool<B>,
    base: u64,
    work: &'a mut WorkingCopy,
    /// Whether the session has started: `used` is the replica's used
    /// length (or the copied one's), the working copy's present lines
    /// hold the state the session reached, its absent ones the replica's.
    loaded: bool,
    used: u64,
}

impl<B: Backend> Session<'_, B> {
    fn ensure_loaded(&mut self, cx: &Cx<B, Plainly<B>>) {
        if !self.loaded {
            self.used = cx.used_len(self.base);
            self.work.reset();
            self.loaded = true;
        }
    }
}

impl<B: Backend> Flavor<B> for Plainly<B> {
    type Job = Job;
    type CombState = ();
    type Scratch = WorkingCopy;
    type Session<'a> = Session<'a, B>;

    fn comb_state(_config: &Config) {}

    fn scratch(_config: &Config, region_len: u64) -> WorkingCopy {
        WorkingCopy::new((region_len / 8) as usize)
    }

    fn begin<'a>(
        cx: &'a Cx<B, Self>,
        comb: &'a Comb<B, Self>,
        scratch: &'a mut WorkingCopy,
    ) -> Session<'a, B> {
        Session {
            pool: &cx.pool,
            base: comb.replica,
            work: scratch,
            loaded: false,
            used: 0,
        }
    }

    fn run(cx: &Cx<B, Self>, s: &mut Session<'_, B>, job: &Job) -> (u64, bool) {
        s.ensure_loaded(cx);
        let (pool, base) = (s.pool, s.base);
        let replica = |i: usize| word(pool, base + 8 * i as u64).load(Ordering::Relaxed);
        match job {
            Job::Update(f) => {
                let before = s.used;
                s.work.begin_job();
                let mut used = before;
                let out = {
                    let mut w = s.work.work(&mut used, &replica);
                    catch_unwind(AssertUnwindSafe(|| f(&mut w)))
                };
                match out {
                    Ok(v) => {
                        s.used = used.clamp(before, cx.region_len);
                        (v, false)
                    }
                    Err(_) => {
                        s.work.undo_job();
                        (0, true)
                    }
                }
            }
            Job::Read(f) => {
                let used = s.used;
                s.work
                    .work(&mut s.used, &replica)
                    .lines()
                    .ensure_bytes(0..used as usize);
                match catch_unwind(AssertUnwindSafe(|| f(s.work.words(), used))) {
                    Ok(v) => (v, false),
                    Err(_) => (0, true),
                }
            }
        }
    }

    /// §4: "a byte per byte copy from the region referenced by curComb",
    /// into the working copy: every line of the source's used part is
    /// loaded and dirty (the replica's old content is unknown).
    fn copy_from(cx: &Cx<B, Self>, s: &mut Session<'_, B>, src: &Comb<B, Self>) {
        s.used = cx.used_len(src.replica);
        s.work.reset();
        let (pool, from) = (s.pool, src.replica);
        let source = |i: usize| word(pool, from + 8 * i as u64).load(Ordering::Relaxed);
        let mut used = s.used;
        let mut w = s.work.work(&mut used, &source);
        let lines = w.lines();
        for line in Lines::lines_of(0..s.used as usize) {
            lines.ensure(line);
            lines.set(lines.dirty, line);
        }
        s.loaded = true;
    }

    /// Stores into the replica every used word of a dirty line that
    /// differs from the working copy, in word order: the words of the used
    /// part that differ, since a line no job touched holds the replica's
    /// words (or is absent).
    fn settle(_cx: &Cx<B, Self>, s: &mut Session<'_, B>) {
        if !s.loaded {
            return;
        }
        let (base, pool, used) = (s.base, s.pool, (s.used / 8) as usize);
        s.work.for_dirty_lines(|line, words| {
            let start = (line * LINE_WORDS).min(used);
            let end = ((line + 1) * LINE_WORDS).min(used);
            for (i, &v) in words[start..end].iter().enumerate() {
                let w = word(pool, base + 8 * (start + i) as u64);
                if w.load(Ordering::Relaxed) != v {
                    w.store(v, Ordering::Relaxed);
                }
            }
        });
    }

    fn write_back(_cx: &Cx<B, Self>, s: &mut Session<'_, B>) {
        if s.loaded {
            s.pool.pwb(s.base, s.used);
        }
    }
}

/// The allocator's part of a region (from `ALLOC_BASE`) in a memory that
/// holds the whole region.
struct Heap<'m, M: ?Sized>(&'m mut M);

impl<M: RegionMemory + ?Sized> RegionMemory for Heap<'_, M> {
    fn byte_len(&self) -> u64 {
        self.0.byte_len() - ALLOC_BASE
    }
    fn load(&self, off: u64) -> u64 {
        self.0.load(ALLOC_BASE + off)
    }
    fn store(&mut self, off: u64, val: u64) {
        self.0.store(ALLOC_BASE + off, val)
    }
}

fn bad_object<U>(offset: u64, used: u64) -> PtmError {
    PtmError::BadObject {
        offset,
        size: std::mem::size_of::<U>(),
        align: std::mem::align_of::<U>(),
        used,
    }
}

/// The byte range of a `U` at `off`, if it lies in the first `used` bytes.
fn range_of<U>(off: u64, used: u64) -> Option<std::ops::Range<usize>> {
    let end = off.checked_add(std::mem::size_of::<U>() as u64)?;
    (end <= used).then_some(off as usize..end as usize)
}

/// Allocates a zeroed block of `size` bytes in `mem` (a whole region);
/// returns its region offset and the used length after it (`ALLOC_BASE`
/// plus the allocator's bump pointer).
fn alloc_in<M: RegionMemory + ?Sized>(mem: &mut M, size: u64) -> Result<(u64, u64), PtmError> {
    let (off, used) = {
        let mut heap = Heap(&mut *mem);
        let mut a = RegionAlloc::attach(&mut heap)?;
        let off = ALLOC_BASE + a.alloc(size)?;
        (off, ALLOC_BASE + BLOCKS_START + a.stats().carved)
    };
    let end = (off + size.max(1)).div_ceil(16) * 16;
    for o in (off..end).step_by(8) {
        mem.store(o, 0);
    }
    Ok((off, used))
}

fn free_in<M: RegionMemory + ?Sized>(mem: &mut M, off: u64) -> Result<(), PtmError> {
    let Some(inner) = off.checked_sub(ALLOC_BASE) else {
        return Err(RegionError::InvalidFree {
            offset: off,
            reason: "not the offset of a block (it lies in the root table)",
        }
        .into());
    };
    RegionAlloc::attach(&mut Heap(mem))?.free(inner)?;
    Ok(())
}

/// An update of a CX-PUC's plain value: what [`CxPuc::update`]'s closure
/// gets. Views of the object and of allocated blocks borrow it, so none
/// outlives the closure or overlaps another mutable one.
///
/// The used part of the working copy is loaded when the closure starts
/// (its views are plain references); a mutable view marks its lines as
/// changed, so settling compares those only.
pub struct PucMut<'a, T> {
    work: Work<'a>,
    _t: PhantomData<fn() -> T>,
}

impl<'a, T: Plain> PucMut<'a, T> {
    /// The plain interface over `work`, with its used part loaded.
    fn new(mut work: Work<'a>) -> PucMut<'a, T> {
        let used = *work.used as usize;
        work.lines().ensure_bytes(0..used);
        PucMut {
            work,
            _t: PhantomData,
        }
    }

    /// The object.
    ///
    /// # Panics
    ///
    /// If a closure has damaged the allocator so that the object's block
    /// no longer counts as allocated.
    pub fn obj(&self) -> &T {
        self.get(OBJECT).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The object, mutably.
    ///
    /// # Panics
    ///
    /// As [`PucMut::obj`].
    pub fn obj_mut(&mut self) -> &mut T {
        self.get_mut(OBJECT).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The `U` at region offset `off` (in an allocated block).
    pub fn get<U: Plain>(&self, off: u64) -> Result<&U, PtmError> {
        let used = *self.work.used;
        let r = range_of::<U>(off, used).ok_or_else(|| bad_object::<U>(off, used))?;
        U::ref_from_bytes(&self.work.words.as_bytes()[r]).map_err(|_| bad_object::<U>(off, used))
    }

    /// The `U` at region offset `off`, mutably.
    pub fn get_mut<U: Plain>(&mut self, off: u64) -> Result<&mut U, PtmError> {
        let used = *self.work.used;
        let r = range_of::<U>(off, used).ok_or_else(|| bad_object::<U>(off, used))?;
        self.work.lines().touch_bytes(r.clone());
        U::mut_from_bytes(&mut self.work.words.as_mut_bytes()[r])
            .map_err(|_| bad_object::<U>(off, used))
    }

    /// Allocates a zeroed block of at least `size` bytes; returns its
    /// region offset (16-aligned).
    pub fn alloc(&mut self, size: u64) -> Result<u64, PtmError> {
        self.tx().alloc(size)
    }

    /// Allocates a block holding `value`; returns its region offset.
    pub fn alloc_value<U: Plain>(&mut self, value: U) -> Result<u64, PtmError> {
        let off = self.alloc(std::mem::size_of::<U>() as u64)?;
        *self.get_mut::<U>(off)? = value;
        Ok(off)
    }

    /// Frees the block at `off` (an offset `alloc` returned).
    pub fn free(&mut self, off: u64) -> Result<(), PtmError> {
        self.tx().free(off)
    }

    /// Root slot `index` (0 if never set).
    ///
    /// # Panics
    ///
    /// If `index >= ROOTS`.
    pub fn root(&self, index: usize) -> u64 {
        assert!(index < ROOTS, "root {index} of {ROOTS}");
        self.work.words[index]
    }

    /// Sets root slot `index`.
    ///
    /// # Panics
    ///
    /// If `index >= ROOTS`.
    pub fn set_root(&mut self, index: usize, val: u64) {
        assert!(index < ROOTS, "root {index} of {ROOTS}");
        self.work.lines().store(index, val);
    }

    /// The allocated part of the region, as words (offset `8·i` is word
    /// `i`). Writing the allocator's metadata through it is allowed, and
    /// can make later allocations fail.
    pub fn words(&self) -> &[u64] {
        &self.work.words[..(*self.work.used / 8) as usize]
    }

    /// The allocated part of the region, mutably (every line of it counts
    /// as changed).
    pub fn words_mut(&mut self) -> &mut [u64] {
        let used = *self.work.used as usize;
        self.work.lines().touch_bytes(0..used);
        &mut self.work.words[..used / 8]
    }

    /// The annotated view of the same update (the [`Transaction`]
    /// interface the other PTMs offer), for code written against [`Ptm`](crate::Ptm).
    pub fn tx(&mut self) -> PucTx<'_> {
        PucTx::of(&mut self.work)
    }
}

/// A read of a CX-PUC's plain value: what [`CxPuc::read`]'s closure gets.
pub struct PucRef<'a, T> {
    words: &'a [u64],
    used: u64,
    _t: PhantomData<fn() -> T>,
}

impl<'a, T: Plain> PucRef<'a, T> {
    /// The object.
    ///
    /// # Panics
    ///
    /// As [`PucMut::obj`].
    pub fn obj(&self) -> &'a T {
        self.get(OBJECT).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The `U` at region offset `off` (in an allocated block).
    pub fn get<U: Plain>(&self, off: u64) -> Result<&'a U, PtmError> {
        let r = range_of::<U>(off, self.used).ok_or_else(|| bad_object::<U>(off, self.used))?;
        U::ref_from_bytes(&self.words.as_bytes()[r]).map_err(|_| bad_object::<U>(off, self.used))
    }

    /// Root slot `index`.
    ///
    /// # Panics
    ///
    /// If `index >= ROOTS`.
    pub fn root(&self, index: usize) -> u64 {
        assert!(index < ROOTS, "root {index} of {ROOTS}");
        self.words[index]
    }

    /// The allocated part of the region, as words.
    pub fn words(&self) -> &'a [u64] {
        &self.words[..(self.used / 8) as usize]
    }

    /// The annotated view (the [`TxRead`] interface).
    pub fn tx(&self) -> PucRead<'a> {
        PucRead {
            mem: Mem::Words(self.words, self.used),
        }
    }
}

enum Mem<'a> {
    /// A read's working copy, its used part loaded.
    Words(&'a [u64], u64),
    /// An update's working copy, loaded line by line.
    Lines(Lines<'a>, &'a Cell<u64>),
}

/// CX-PUC's read-only transactions through the annotated interface
/// ([`TxRead`]): loads of the allocated part of the region.
pub struct PucRead<'a> {
    mem: Mem<'a>,
}

impl PucRead<'_> {
    fn used(&self) -> u64 {
        match &self.mem {
            Mem::Words(_, u) => *u,
            Mem::Lines(_, u) => u.get(),
        }
    }

    fn check(&self, off: u64) -> Result<usize, PtmError> {
        if off % 8 == 0 && off < self.used() {
            Ok((off / 8) as usize)
        } else {
            Err(PtmError::BadOffset {
                offset: off,
                len: self.used(),
            })
        }
    }
}

impl TxRead for PucRead<'_> {
    fn region_len(&self) -> u64 {
        8 * match &self.mem {
            Mem::Words(w, _) => w.len(),
            Mem::Lines(l, _) => l.words.len(),
        } as u64
    }

    fn try_load(&self, off: u64) -> Result<u64, PtmError> {
        let i = self.check(off)?;
        Ok(match &self.mem {
            Mem::Words(w, _) => w[i],
            Mem::Lines(l, _) => l.load(i),
        })
    }
}

/// CX-PUC's update transactions through the annotated interface
/// ([`Transaction`]): loads and stores of the working copy (a line is
/// loaded from the replica on its first load or store, and marked changed
/// on its first store), allocation through the region allocator (zeroed
/// blocks).
pub struct PucTx<'a> {
    read: PucRead<'a>,
}

/// The read-only view of the same transaction.
impl<'a> AsRef<PucRead<'a>> for PucTx<'a> {
    fn as_ref(&self) -> &PucRead<'a> {
        &self.read
    }
}

impl<'a> PucTx<'a> {
    fn of(work: &'a mut Work<'_>) -> PucTx<'a> {
        let (lines, used) = work.cells();
        PucTx {
            read: PucRead {
                mem: Mem::Lines(lines, used),
            },
        }
    }

    fn lines(&self) -> (Lines<'a>, &'a Cell<u64>) {
        match self.read.mem {
            Mem::Lines(l, u) => (l, u),
            Mem::Words(..) => unreachable!("an update works on lines"),
        }
    }
}

impl TxRead for PucTx<'_> {
    fn region_len(&self) -> u64 {
        self.read.region_len()
    }

    fn try_load(&self, off: u64) -> Result<u64, PtmError> {
        self.read.try_load(off)
    }
}

impl Transaction for PucTx<'_> {
    fn try_store(&self, off: u64, val: u64) -> Result<(), PtmError> {
        let i = self.read.check(off)?;
        self.lines().0.store(i, val);
        Ok(())
    }

    fn alloc(&self, size: u64) -> Result<u64, PtmError> {
        let (mut lines, used) = self.lines();
        let (off, u) = alloc_in(&mut lines, size)?;
        // The plain views read the used part without loading it: load
        // what the allocation added.
        lines.ensure_bytes(used.get() as usize..u as usize);
        used.set(used.get().max(u));
        Ok(off)
    }

    fn has_room(&self, needs: &[(u64, u64)]) -> Result<bool, PtmError> {
        let mut lines = self.lines().0;
        Ok(RegionAlloc::attach(&mut Heap(&mut lines))?.has_room(needs))
    }

    fn free(&self, off: u64) -> Result<(), PtmError> {
        free_in(&mut self.lines().0, off)
    }
}

/// CX-PUC over a pool, for a plain object of type `T`. See the module docs.
pub struct CxPuc<B: Backend, T: Plain> {
    cx: Cx<B, Plainly<B>>,
    _t: PhantomData<fn() -> T>,
}

impl<B: Backend, T: Plain> std::fmt::Debug for CxPuc<B, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CxPuc")
            .field("threads", &self.cx.n)
            .field("replica_len", &self.cx.region_len)
            .field("object", &std::any::type_name::<T>())
            .finish()
    }
}

impl<B: Backend, T: Plain> CxPuc<B, T> {
    /// Formats `pool` for CX-PUC with `config.threads` threads (`2N`
    /// replicas) holding `init`, and opens it. Crash-atomic: the header is
    /// written last.
    pub fn create(pool: Pool<B>, config: &Config, init: T) -> Result<CxPuc<B, T>, PtmError> {
        config.validate()?;
        if std::mem::align_of::<T>() > ALIGN {
            return Err(PtmError::Config(format!(
                "{} is aligned to {} bytes; CX-PUC keeps objects aligned to at most {ALIGN}",
                std::any::type_name::<T>(),
                std::mem::align_of::<T>()
            )));
        }
        layout::create(
            &pool,
            &KIND,
            config.threads,
            fingerprint::<T>(),
            |pool, base, len| {
                let mut words: Vec<u64> = (0..len / 8)
                    .map(|i| word(pool, base + 8 * i).load(Ordering::Relaxed))
                    .collect();
                let (off, used) = alloc_in(words.as_mut_slice(), std::mem::size_of::<T>() as u64)?;
                assert_eq!(off, OBJECT, "the first block of a fresh region");
                let bytes = init.as_bytes();
                words.as_mut_bytes()[off as usize..off as usize + bytes.len()]
                    .copy_from_slice(bytes);
                for (i, &v) in words[..(used / 8) as usize].iter().enumerate() {
                    word(pool, base + 8 * i as u64).store(v, Ordering::Relaxed);
                }
                Ok(())
            },
        )?;
        CxPuc::open(pool, config)
    }

    /// Opens the CX-PUC in `pool` (null recovery, as [`super::CxPtm::open`]).
    /// The object's type must have the size and alignment it was created
    /// with.
    pub fn open(pool: Pool<B>, config: &Config) -> Result<CxPuc<B, T>, PtmError> {
        let (g, cur, config) = layout::open_with_config(&pool, &KIND, fingerprint::<T>(), config)?;
        Ok(CxPuc {
            cx: Cx::build(pool, config, &g, cur),
            _t: PhantomData,
        })
    }

    /// Opens the CX-PUC in `pool`, creating one holding `init` if the pool
    /// holds none (see [`crate::CxPtm::open_or_create`]: a damaged header
    /// is reported, never formatted over).
    pub fn open_or_create(
        pool: Pool<B>,
        config: &Config,
        init: T,
    ) -> Result<CxPuc<B, T>, PtmError> {
        layout::open_or_create(
            pool,
            &KIND,
            |pool| CxPuc::open(pool, config),
            |pool| CxPuc::create(pool, config, init),
        )
    }

    super::accessors!();

    /// An upper bound on the volatile memory this PUC uses: CX-PTM's figure
    /// without dirty lines or undo logs, plus per thread a working copy of
    /// a replica (virtual; the used part is what is touched), its three
    /// line bitmaps and a job's saved lines (at most every line, each with
    /// its index).
    pub fn volatile_bytes(&self) -> u64 {
        let c = Config {
            dirty_lines_per_replica: 0,
            undo_entries_per_thread: 0,
            ..self.cx.config.clone()
        };
        let lines = self.cx.region_len / (8 * LINE_WORDS as u64);
        let saved = std::mem::size_of::<SavedLine>() as u64;
        let per_thread = self.cx.region_len + 3 * 8 * lines.div_ceil(64) + saved * lines;
        c.volatile_bytes_ptm() + self.cx.n as u64 * per_thread
    }

    /// A handle speaking for one of the `N` thread ids until it is dropped.
    pub fn handle(&self) -> Result<Handle<'_, CxPuc<B, T>>, PtmError> {
        Handle::new(self)
    }

    fn leased_tid(&self) -> Result<usize, PtmError> {
        if crate::registry::current(self.cx.uid).is_some() {
            return Err(PtmError::NestedInPlainTx);
        }
        crate::registry::leased_tid(self.cx.uid, &self.cx.tids.pool)
            .ok_or(PtmError::TooManyThreads { max: self.cx.n })
    }

    /// Runs `f` on the plain value as one durable linearizable update
    /// (with the calling thread's leased thread id) and returns its result.
    /// `f` must be deterministic, as every closure of `tx`.
    ///
    /// # Panics
    ///
    /// If `f` panicked (its changes are undone).
    pub fn update<R, F>(&self, f: F) -> Result<R, PtmError>
    where
        R: PWord,
        F: for<'a> Fn(&mut PucMut<'a, T>) -> R + Send + Sync + 'static,
    {
        let tid = self.leased_tid()?;
        Ok(self.update_plain(tid, f))
    }

    /// Runs `f` on the plain value as a read-only transaction.
    ///
    /// # Panics
    ///
    /// If `f` panicked.
    pub fn read<R, F>(&self, f: F) -> Result<R, PtmError>
    where
        R: PWord,
        F: for<'a> Fn(&PucRef<'a, T>) -> R + Send + Sync + 'static,
    {
        let tid = self.leased_tid()?;
        Ok(self.read_plain(tid, f))
    }

    fn update_plain<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'a> Fn(&mut PucMut<'a, T>) -> R + Send + Sync + 'static,
    {
        let uid = self.cx.uid;
        self.run_update(
            tid,
            Box::new(move |work: &mut Work<'_>| {
                // No transaction of this PTM may nest in `f`: it holds the
                // working copy mutably.
                let _no = no_nesting(uid);
                f(&mut PucMut::new(work.reborrow())).into_word()
            }),
        )
    }

    fn read_plain<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'a> Fn(&PucRef<'a, T>) -> R + Send + Sync + 'static,
    {
        let uid = self.cx.uid;
        let view = move |words: &[u64], used: u64| {
            let _no = no_nesting(uid);
            f(&PucRef {
                words,
                used,
                _t: PhantomData,
            })
        };
        self.run_read(tid, view)
    }

    fn run_update<R: PWord>(&self, tid: usize, job: UpdateFn) -> R {
        let (w, panicked) = self.cx.apply_update(tid, Job::Update(job));
        if panicked {
            panic!("the update transaction's closure panicked (its message was printed where it ran); its changes were undone");
        }
        R::from_word(w)
    }

    /// `applyRead` with `view` run on a working copy of the designated
    /// replica.
    fn run_read<R, V>(&self, tid: usize, view: V) -> R
    where
        R: PWord,
        V: Fn(&[u64], u64) -> R + Send + Sync + 'static,
    {
        let direct = |cx: &Cx<B, Plainly<B>>, base: u64, work: &mut WorkingCopy| {
            let used = cx.used_len(base);
            work.load(&cx.pool, base, used);
            view(work.words(), used)
        };
        if let Some(r) = self.cx.apply_read(tid, &direct) {
            return r;
        }
        let published = |cx: &Cx<B, Plainly<B>>, job: &Job, base: u64, work: &mut WorkingCopy| {
            let Job::Read(g) = job else {
                unreachable!("a read publishes a read job")
            };
            let used = cx.used_len(base);
            work.load(&cx.pool, base, used);
            g(work.words(), used)
        };
        let job = Job::Read(Box::new(move |w, u| view(w, u).into_word()));
        front::result_of(
            TxKind::Read,
            self.cx.apply_published_read(tid, job, &published),
        )
    }
}

/// Marks the running closure as one no transaction of PTM `uid` may nest
/// in (a null current transaction, see [`front::enter`]), until the guard
/// drops.
fn no_nesting(uid: u64) -> crate::registry::Enter {
    crate::registry::Enter::new(crate::registry::Current {
        uid,
        kind: TxKind::Update,
        ptr: std::ptr::null(),
    })
}

impl<B: Backend, T: Plain> Sealed for CxPuc<B, T> {}

impl<B: Backend, T: Plain> Front for CxPuc<B, T> {
    type Tx<'t> = PucTx<'t>;
    type ReadTx<'t> = PucRead<'t>;

    super::front_ids!();

    fn update_with<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&PucTx<'t>) -> R + Send + Sync + 'static,
    {
        let uid = self.cx.uid;
        self.run_update(
            tid,
            Box::new(move |work: &mut Work<'_>| {
                let tx = PucTx::of(work);
                let _in = front::enter(uid, TxKind::Update, &tx);
                f(&tx).into_word()
            }),
        )
    }

    fn read_with<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&PucRead<'t>) -> R + Send + Sync + 'static,
    {
        let uid = self.cx.uid;
        self.run_read(tid, move |words: &[u64], used: u64| {
            let rt = PucRead {
                mem: Mem::Words(words, used),
            };
            let _in = front::enter(uid, TxKind::Read, &rt);
            f(&rt)
        })
    }
}
