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
//! So an updater loads the replica's used words into its working copy (or
//! the designated replica's, when it copies), runs the closures there, and
//! then stores every word that differs into the replica through the pool —
//! the same words an in-place update would have changed — and writes the
//! whole used part back (`pwb` of every line, as the seed says). A reader
//! loads the designated replica's used words into its working copy under
//! the shared lock. Both cost `O(used)` per transaction, on top of the
//! `O(used)` write-back the seed already pays: CX-PUC is for small objects
//! (§6: "CX-PUC results are only presented for small sized data
//! structures").
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
//!   takes physical memory), twice (a snapshot for panics).

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

type UpdateFn = Box<dyn Fn(&mut [u64], &mut u64) -> u64 + Send + Sync>;
type ReadFn = Box<dyn Fn(&[u64], u64) -> u64 + Send + Sync>;

/// What a node of CX-PUC's queue runs: a closure over the working copy's
/// words and its used length.
pub(crate) enum Job {
    Update(UpdateFn),
    Read(ReadFn),
}

/// The CX-PUC flavour of the consensus.
pub(crate) struct Plainly<B>(PhantomData<B>);

/// A thread's working copy of a replica and its snapshot, as 16-aligned
/// words, allocated on first use.
pub(crate) struct WorkingCopy {
    words: Vec<u128>,
    snap: Vec<u128>,
    len: usize,
}

impl WorkingCopy {
    fn words(&mut self) -> &mut [u64] {
        if self.words.is_empty() {
            self.words = vec![0; self.len / 2];
        }
        // `[u128]` to `[u64]`: same bytes, stricter alignment.
        match <[u64]>::mut_from_bytes(self.words.as_mut_bytes()) {
            Ok(w) => w,
            Err(_) => unreachable!("u128 words are u64 words"),
        }
    }

    /// Loads the first `used` bytes of the replica at pool offset `base`.
    fn load<B: Backend>(&mut self, pool: &Pool<B>, base: u64, used: u64) {
        for (i, w) in self.words()[..(used / 8) as usize].iter_mut().enumerate() {
            *w = word(pool, base + 8 * i as u64).load(Ordering::Relaxed);
        }
    }

    fn snapshot(&mut self, used: u64) {
        let n = (used / 16) as usize;
        if self.snap.len() < n {
            self.snap.resize(n, 0);
        }
        let (words, snap) = (&self.words, &mut self.snap);
        snap[..n].copy_from_slice(&words[..n]);
    }

    fn restore(&mut self, used: u64) {
        let n = (used / 16) as usize;
        self.words[..n].copy_from_slice(&self.snap[..n]);
    }
}

/// One thread applying nodes to the replica it holds, through its working
/// copy.
pub(crate) struct Session<'a, B: Backend> {
    pool: &'a Pool<B>,
    base: u64,
    work: &'a mut WorkingCopy,
    /// Whether the working copy holds the replica's state (`used` bytes).
    loaded: bool,
    used: u64,
}

impl<B: Backend> Session<'_, B> {
    fn ensure_loaded(&mut self, cx: &Cx<B, Plainly<B>>) {
        if !self.loaded {
            self.used = cx.used_len(self.base);
            self.work.load(self.pool, self.base, self.used);
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
        WorkingCopy {
            words: Vec::new(),
            snap: Vec::new(),
            len: (region_len / 8) as usize,
        }
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
        match job {
            Job::Update(f) => {
                let before = s.used;
                s.work.snapshot(before);
                let mut used = before;
                let out = catch_unwind(AssertUnwindSafe(|| f(s.work.words(), &mut used)));
                match out {
                    Ok(v) => {
                        s.used = used.clamp(before, cx.region_len);
                        (v, false)
                    }
                    Err(_) => {
                        s.work.restore(before);
                        (0, true)
                    }
                }
            }
            Job::Read(f) => {
                let used = s.used;
                match catch_unwind(AssertUnwindSafe(|| f(s.work.words(), used))) {
                    Ok(v) => (v, false),
                    Err(_) => (0, true),
                }
            }
        }
    }

    fn copy_from(cx: &Cx<B, Self>, s: &mut Session<'_, B>, src: &Comb<B, Self>) {
        s.used = cx.used_len(src.replica);
        s.work.load(s.pool, src.replica, s.used);
        s.loaded = true;
    }

    /// Stores into the replica every used word that differs from the
    /// working copy (all of them, after a copy: the replica's old content
    /// is unknown).
    fn settle(_cx: &Cx<B, Self>, s: &mut Session<'_, B>) {
        if !s.loaded {
            return;
        }
        let (base, pool, used) = (s.base, s.pool, s.used);
        for (i, &v) in s.work.words()[..(used / 8) as usize].iter().enumerate() {
            let w = word(pool, base + 8 * i as u64);
            if w.load(Ordering::Relaxed) != v {
                w.store(v, Ordering::Relaxed);
            }
        }
    }

    fn write_back(_cx: &Cx<B, Self>, s: &mut Session<'_, B>) {
        if s.loaded {
            s.pool.pwb(s.base, s.used);
        }
    }
}

/// The used length of a working copy's words (after an allocation):
/// `ALLOC_BASE` plus the allocator's bump pointer, or all of it if the
/// allocator's metadata has been damaged.
fn used_of(words: &mut [u64]) -> u64 {
    let len = 8 * words.len() as u64;
    match RegionAlloc::attach(&mut words[(ALLOC_BASE / 8) as usize..]) {
        Ok(a) => ALLOC_BASE + BLOCKS_START + a.stats().carved,
        Err(_) => len,
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

/// Allocates a zeroed block of `size` bytes in `words` (a whole region);
/// returns its region offset and the new used length.
fn alloc_in(words: &mut [u64], size: u64) -> Result<(u64, u64), PtmError> {
    let off = {
        let mut a = RegionAlloc::attach(&mut words[(ALLOC_BASE / 8) as usize..])?;
        ALLOC_BASE + a.alloc(size)?
    };
    let end = (off + size.max(1)).div_ceil(16) * 16;
    words[(off / 8) as usize..(end / 8) as usize].fill(0);
    Ok((off, used_of(words)))
}

fn free_in(words: &mut [u64], off: u64) -> Result<(), PtmError> {
    let Some(inner) = off.checked_sub(ALLOC_BASE) else {
        return Err(RegionError::InvalidFree {
            offset: off,
            reason: "not the offset of a block (it lies in the root table)",
        }
        .into());
    };
    RegionAlloc::attach(&mut words[(ALLOC_BASE / 8) as usize..])?.free(inner)?;
    Ok(())
}

/// An update of a CX-PUC's plain value: what [`CxPuc::update`]'s closure
/// gets. Views of the object and of allocated blocks borrow it, so none
/// outlives the closure or overlaps another mutable one.
pub struct PucMut<'a, T> {
    words: &'a mut [u64],
    used: &'a mut u64,
    _t: PhantomData<fn() -> T>,
}

impl<'a, T: Plain> PucMut<'a, T> {
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
        let used = *self.used;
        let r = range_of::<U>(off, used).ok_or_else(|| bad_object::<U>(off, used))?;
        U::ref_from_bytes(&self.words.as_bytes()[r]).map_err(|_| bad_object::<U>(off, used))
    }

    /// The `U` at region offset `off`, mutably.
    pub fn get_mut<U: Plain>(&mut self, off: u64) -> Result<&mut U, PtmError> {
        let used = *self.used;
        let r = range_of::<U>(off, used).ok_or_else(|| bad_object::<U>(off, used))?;
        U::mut_from_bytes(&mut self.words.as_mut_bytes()[r]).map_err(|_| bad_object::<U>(off, used))
    }

    /// Allocates a zeroed block of at least `size` bytes; returns its
    /// region offset (16-aligned).
    pub fn alloc(&mut self, size: u64) -> Result<u64, PtmError> {
        let (off, used) = alloc_in(self.words, size)?;
        *self.used = used.max(*self.used);
        Ok(off)
    }

    /// Allocates a block holding `value`; returns its region offset.
    pub fn alloc_value<U: Plain>(&mut self, value: U) -> Result<u64, PtmError> {
        let off = self.alloc(std::mem::size_of::<U>() as u64)?;
        *self.get_mut::<U>(off)? = value;
        Ok(off)
    }

    /// Frees the block at `off` (an offset `alloc` returned).
    pub fn free(&mut self, off: u64) -> Result<(), PtmError> {
        free_in(self.words, off)
    }

    /// Root slot `index` (0 if never set).
    ///
    /// # Panics
    ///
    /// If `index >= ROOTS`.
    pub fn root(&self, index: usize) -> u64 {
        assert!(index < ROOTS, "root {index} of {ROOTS}");
        self.words[index]
    }

    /// Sets root slot `index`.
    ///
    /// # Panics
    ///
    /// If `index >= ROOTS`.
    pub fn set_root(&mut self, index: usize, val: u64) {
        assert!(index < ROOTS, "root {index} of {ROOTS}");
        self.words[index] = val;
    }

    /// The allocated part of the region, as words (offset `8·i` is word
    /// `i`). Writing the allocator's metadata through it is allowed, and
    /// can make later allocations fail.
    pub fn words(&self) -> &[u64] {
        &self.words[..(*self.used / 8) as usize]
    }

    /// The allocated part of the region, mutably.
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words[..(*self.used / 8) as usize]
    }

    /// The annotated view of the same update (the [`Transaction`]
    /// interface the other PTMs offer), for code written against [`Ptm`](crate::Ptm).
    pub fn tx(&mut self) -> PucTx<'_> {
        PucTx {
            read: PucRead {
                mem: Mem::Cells(
                    Cell::from_mut(&mut *self.words).as_slice_of_cells(),
                    Cell::from_mut(&mut *self.used),
                ),
            },
        }
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
    Words(&'a [u64], u64),
    Cells(&'a [Cell<u64>], &'a Cell<u64>),
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
            Mem::Cells(_, u) => u.get(),
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
            Mem::Cells(c, _) => c.len(),
        } as u64
    }

    fn try_load(&self, off: u64) -> Result<u64, PtmError> {
        let i = self.check(off)?;
        Ok(match &self.mem {
            Mem::Words(w, _) => w[i],
            Mem::Cells(c, _) => c[i].get(),
        })
    }
}

/// CX-PUC's update transactions through the annotated interface
/// ([`Transaction`]): loads and stores of the working copy, allocation
/// through the region allocator (zeroed blocks).
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
    fn cells(&self) -> (&'a [Cell<u64>], &'a Cell<u64>) {
        match self.read.mem {
            Mem::Cells(c, u) => (c, u),
            Mem::Words(..) => unreachable!("an update works on cells"),
        }
    }
}

/// The region allocator over the working copy's cells.
struct CellMemory<'a>(&'a [Cell<u64>]);

impl RegionMemory for CellMemory<'_> {
    fn byte_len(&self) -> u64 {
        8 * self.0.len() as u64
    }
    fn load(&self, off: u64) -> u64 {
        self.0[(off / 8) as usize].get()
    }
    fn store(&mut self, off: u64, val: u64) {
        self.0[(off / 8) as usize].set(val)
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
        self.cells().0[i].set(val);
        Ok(())
    }

    fn alloc(&self, size: u64) -> Result<u64, PtmError> {
        let (cells, used) = self.cells();
        let heap = &cells[(ALLOC_BASE / 8) as usize..];
        let off = {
            let mut mem = CellMemory(heap);
            let mut a = RegionAlloc::attach(&mut mem)?;
            let off = ALLOC_BASE + a.alloc(size)?;
            used.set(used.get().max(ALLOC_BASE + BLOCKS_START + a.stats().carved));
            off
        };
        let end = (off + size.max(1)).div_ceil(16) * 16;
        for c in &cells[(off / 8) as usize..(end / 8) as usize] {
            c.set(0);
        }
        Ok(off)
    }

    fn free(&self, off: u64) -> Result<(), PtmError> {
        let Some(inner) = off.checked_sub(ALLOC_BASE) else {
            return Err(RegionError::InvalidFree {
                offset: off,
                reason: "not the offset of a block (it lies in the root table)",
            }
            .into());
        };
        let mut mem = CellMemory(&self.cells().0[(ALLOC_BASE / 8) as usize..]);
        RegionAlloc::attach(&mut mem)?.free(inner)?;
        Ok(())
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
                let (off, used) = alloc_in(&mut words, std::mem::size_of::<T>() as u64)?;
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
    /// holds none.
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
    /// without dirty lines or undo logs, plus two working copies of a
    /// replica per thread (virtual; the used part is what is touched).
    pub fn volatile_bytes(&self) -> u64 {
        let c = Config {
            dirty_lines_per_replica: 0,
            undo_entries_per_thread: 0,
            ..self.cx.config.clone()
        };
        c.volatile_bytes_ptm() + 2 * self.cx.n as u64 * self.cx.region_len
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
            Box::new(move |words: &mut [u64], used: &mut u64| {
                // No transaction of this PTM may nest in `f`: it holds the
                // working copy mutably.
                let _no = no_nesting(uid);
                let mut m = PucMut {
                    words,
                    used,
                    _t: PhantomData,
                };
                f(&mut m).into_word()
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
            Box::new(move |words: &mut [u64], used: &mut u64| {
                let mut m = PucMut::<()> {
                    words,
                    used,
                    _t: PhantomData,
                };
                let tx = m.tx();
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
