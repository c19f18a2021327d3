//! The transactional interface, one for every construction of the seed.
//!
//! A user writes a sequential operation as a closure and hands it to
//! [`Ptm::update_tx`] or [`Ptm::read_tx`]:
//!
//! ```
//! # use perdure_ptm::{Ptm, PVar, Transaction, TxRead, redo::{Config, RedoPtm}};
//! # use perdure_pm::{NoFlush, Pool};
//! # let pool = Pool::volatile("doc", 1 << 20, NoFlush).unwrap();
//! # let ptm = RedoPtm::create(pool, &Config { threads: 2, ..Config::small() }).unwrap();
//! // A counter in root slot 0: allocate it once, then increment it.
//! ptm.update_tx(|tx| {
//!     if tx.root(0) == 0 {
//!         let c = tx.alloc_zeroed(8).unwrap();
//!         tx.set_root(0, c);
//!     }
//! })?;
//! let n: u64 = ptm.update_tx(|tx| {
//!     let c = PVar::<u64>::at(tx.root(0));
//!     let n = tx.get(c) + 1;
//!     tx.set(c, n);
//!     n
//! })?;
//! assert_eq!(n, 1);
//! assert_eq!(ptm.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0))))?, 1);
//! # Ok::<(), perdure_ptm::PtmError>(())
//! ```
//!
//! ## The closure may run several times, on other threads
//!
//! These are *universal constructions* (seed §1): to be wait-free, a thread
//! that finds other threads' operations announced runs them itself
//! (Herlihy's combining), on its own replica, and an attempt whose commit
//! loses the race is rolled back and run again. So a transaction's closure
//! may be called **any number of times, on any thread, concurrently with
//! itself**, and some of those calls are discarded. What the type system
//! enforces:
//!
//! * `Fn`, not `FnMut` or `FnOnce`: a call cannot consume or mutate what the
//!   closure captured;
//! * `Send + Sync`: another thread may call it, several at once;
//! * `'static`: it owns what it captured. A helper may still be running a
//!   closure after the thread that submitted it has returned (its attempt is
//!   then doomed and discarded), so the closure is moved to the heap and
//!   freed only when no helper can be running it (hazard pointers, see
//!   [`crate::redo`]). A borrowed closure could not be kept alive that long
//!   without making its owner wait for the slowest helper, which would not
//!   be wait-free.
//!
//! What it cannot enforce, and the caller must ensure — **determinism**:
//! given the same transactional memory, a call performs the same loads,
//! stores, allocations and frees and returns the same value. Do not read
//! clocks, random numbers, thread ids, or shared mutable state (atomics,
//! mutexes) captured by the closure; do not perform I/O or other side effects
//! outside the transaction (they may happen several times, or for an attempt
//! that is discarded). A non-deterministic closure cannot cause undefined
//! behaviour — every access is bounds-checked and the PTM's own structures do
//! not depend on it — but its transactions may commit the effects of one run
//! and return the result of another.
//!
//! A closure that panics is caught where it runs: its stores are rolled back
//! (if its log fits the configured log arena; otherwise its partial effects
//! commit, since every run of it would make the same ones), the panic is
//! recorded as its outcome, and the submitting thread panics when it
//! collects the result. A load or store of an offset outside the region
//! panics in this way; the `try_` variants return [`PtmError::BadOffset`].
//!
//! ## Persistent memory as offsets
//!
//! The transactional memory is a *region* of `region_len` bytes. Every
//! location is named by its byte offset in the region, never by an address:
//! the pool may be mapped anywhere, and the constructions keep several
//! replicas of the region and copy them byte for byte. [`PVar<T>`] is a
//! typed 8-byte word at an offset, [`PPtr<T>`] a typed offset of an object
//! (0 is null). The region starts with [`ROOTS`] root slots (offsets
//! `0, 8, …`), then the allocator's metadata, then the blocks
//! [`Transaction::alloc`] hands out.
//!
//! ## Nested transactions flatten
//!
//! `update_tx` or `read_tx` called (on the same PTM) from inside a
//! transaction's closure runs its closure at once, inside the enclosing
//! transaction, on the same [`Transaction`]. `update_tx` inside `read_tx`
//! is an error ([`PtmError::UpdateInReadTx`]).

use crate::error::PtmError;
use std::marker::PhantomData;

/// Number of root slots at the start of every region.
pub const ROOTS: usize = 64;

/// The region offset of root slot `index`.
#[inline]
pub fn root_offset(index: usize) -> u64 {
    8 * index as u64
}

/// [`root_offset`] for the root accessors of [`TxRead`] and [`Transaction`].
///
/// # Panics
///
/// If `index >= ROOTS`.
fn checked_root_offset(index: usize) -> u64 {
    assert!(
        index < ROOTS,
        "{}",
        PtmError::BadRoot {
            index,
            count: ROOTS
        }
    );
    root_offset(index)
}

/// A value stored in one persistent 8-byte word, and returned by
/// transactions (the constructions return results through a 64-bit word,
/// as the seed's `results` array does).
pub trait PWord: Copy {
    /// The word that stores `self`.
    fn into_word(self) -> u64;
    /// The value a word stores.
    fn from_word(word: u64) -> Self;
}

macro_rules! pword_int {
    ($($t:ty),*) => {$(
        impl PWord for $t {
            #[inline]
            fn into_word(self) -> u64 {
                self as u64
            }
            #[inline]
            fn from_word(word: u64) -> Self {
                word as $t
            }
        }
    )*};
}
pword_int!(u64, i64, u32, i32, u16, i16, u8, i8, usize, isize);

impl PWord for bool {
    #[inline]
    fn into_word(self) -> u64 {
        u64::from(self)
    }
    #[inline]
    fn from_word(word: u64) -> Self {
        word != 0
    }
}

impl PWord for () {
    #[inline]
    fn into_word(self) -> u64 {
        0
    }
    #[inline]
    fn from_word(_: u64) -> Self {}
}

/// A typed persistent word: the 8 bytes at a region offset, holding a `T`.
pub struct PVar<T> {
    off: u64,
    _t: PhantomData<fn() -> T>,
}

impl<T> PVar<T> {
    /// The word at region offset `off` (8-aligned for any access to work).
    #[inline]
    pub const fn at(off: u64) -> PVar<T> {
        PVar {
            off,
            _t: PhantomData,
        }
    }

    /// Its region offset.
    #[inline]
    pub const fn offset(self) -> u64 {
        self.off
    }
}

impl<T> Clone for PVar<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for PVar<T> {}
impl<T> PartialEq for PVar<T> {
    fn eq(&self, other: &Self) -> bool {
        self.off == other.off
    }
}
impl<T> Eq for PVar<T> {}
impl<T> std::hash::Hash for PVar<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.off.hash(state)
    }
}
impl<T> std::fmt::Debug for PVar<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PVar({:#x})", self.off)
    }
}

/// A typed persistent pointer: the region offset of an object of type `T`
/// (a marker: the object's layout is the user's), 0 for null.
pub struct PPtr<T: ?Sized> {
    off: u64,
    _t: PhantomData<fn() -> *const T>,
}

impl<T: ?Sized> PPtr<T> {
    /// The null pointer.
    #[inline]
    pub const fn null() -> PPtr<T> {
        PPtr::from_offset(0)
    }

    /// The object at region offset `off`.
    #[inline]
    pub const fn from_offset(off: u64) -> PPtr<T> {
        PPtr {
            off,
            _t: PhantomData,
        }
    }

    /// Its region offset.
    #[inline]
    pub const fn offset(self) -> u64 {
        self.off
    }

    /// Whether it is null.
    #[inline]
    pub const fn is_null(self) -> bool {
        self.off == 0
    }

    /// The word `byte` bytes into the object, as a `U`.
    #[inline]
    pub const fn field<U>(self, byte: u64) -> PVar<U> {
        PVar::at(self.off + byte)
    }

    /// The same offset, seen as a pointer to a `U`.
    #[inline]
    pub const fn cast<U: ?Sized>(self) -> PPtr<U> {
        PPtr::from_offset(self.off)
    }
}

impl<T: ?Sized> Clone for PPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: ?Sized> Copy for PPtr<T> {}
impl<T: ?Sized> PartialEq for PPtr<T> {
    fn eq(&self, other: &Self) -> bool {
        self.off == other.off
    }
}
impl<T: ?Sized> Eq for PPtr<T> {}
impl<T: ?Sized> std::hash::Hash for PPtr<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.off.hash(state)
    }
}
impl<T: ?Sized> std::fmt::Debug for PPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PPtr({:#x})", self.off)
    }
}

impl<T: ?Sized> PWord for PPtr<T> {
    #[inline]
    fn into_word(self) -> u64 {
        self.off
    }
    #[inline]
    fn from_word(word: u64) -> Self {
        PPtr::from_offset(word)
    }
}

/// Loads inside a transaction: what every transaction, read-only or not,
/// can do.
pub trait TxRead {
    /// The region's length in bytes.
    fn region_len(&self) -> u64;

    /// The word at region offset `off`, or [`PtmError::BadOffset`].
    fn try_load(&self, off: u64) -> Result<u64, PtmError>;

    /// The word at region offset `off`.
    ///
    /// # Panics
    ///
    /// If `off` is not an 8-aligned offset inside the region (the panic ends
    /// the closure; see the module docs).
    #[inline]
    fn load(&self, off: u64) -> u64 {
        match self.try_load(off) {
            Ok(v) => v,
            Err(e) => panic!("{e}"),
        }
    }

    /// The value of a typed word.
    #[inline]
    fn get<T: PWord>(&self, var: PVar<T>) -> T {
        T::from_word(self.load(var.offset()))
    }

    /// Root slot `index` (0 if never set).
    ///
    /// # Panics
    ///
    /// If `index >= ROOTS`.
    #[inline]
    fn root(&self, index: usize) -> u64 {
        self.load(checked_root_offset(index))
    }

    /// Root slot `index` as a typed pointer.
    #[inline]
    fn root_ptr<T: ?Sized>(&self, index: usize) -> PPtr<T> {
        PPtr::from_offset(self.root(index))
    }
}

/// Loads, stores, allocation and roots inside an update transaction.
pub trait Transaction: TxRead {
    /// Stores `val` at region offset `off`, or [`PtmError::BadOffset`].
    fn try_store(&self, off: u64, val: u64) -> Result<(), PtmError>;

    /// Allocates a block of at least `size` bytes in the region and returns
    /// its offset (16-aligned, never 0). Its content is unspecified: it is
    /// the same in every replica only once the transaction has written it
    /// (use [`Transaction::alloc_zeroed`] for zeroes).
    fn alloc(&self, size: u64) -> Result<u64, PtmError>;

    /// Frees the block at `off` (an offset `alloc` returned).
    fn free(&self, off: u64) -> Result<(), PtmError>;

    /// Whether [`Transaction::alloc`] could now give, one after the other,
    /// `count` blocks of `size` bytes for every `(size, count)` of `needs`
    /// — reading only. A closure whose stores must not stop half-way for
    /// want of room (a transaction's stores are kept whatever it returns)
    /// asks before its first store.
    fn has_room(&self, needs: &[(u64, u64)]) -> Result<bool, PtmError>;

    /// Stores `val` at region offset `off`.
    ///
    /// # Panics
    ///
    /// If `off` is not an 8-aligned offset inside the region.
    #[inline]
    fn store(&self, off: u64, val: u64) {
        if let Err(e) = self.try_store(off, val) {
            panic!("{e}")
        }
    }

    /// Sets a typed word.
    #[inline]
    fn set<T: PWord>(&self, var: PVar<T>, val: T) {
        self.store(var.offset(), val.into_word())
    }

    /// Sets root slot `index`.
    ///
    /// # Panics
    ///
    /// If `index >= ROOTS`.
    #[inline]
    fn set_root(&self, index: usize, val: u64) {
        self.store(checked_root_offset(index), val)
    }

    /// [`Transaction::alloc`], then zeroes the block's first `size` bytes
    /// (rounded up to words).
    fn alloc_zeroed(&self, size: u64) -> Result<u64, PtmError> {
        let off = self.alloc(size)?;
        for w in 0..size.div_ceil(8) {
            self.store(off + 8 * w, 0);
        }
        Ok(off)
    }

    /// Allocates an object of `size` bytes as a typed pointer.
    fn alloc_obj<T: ?Sized>(&self, size: u64) -> Result<PPtr<T>, PtmError> {
        self.alloc(size).map(PPtr::from_offset)
    }
}

/// A persistent transactional memory: the one interface of CX-PUC, CX-PTM,
/// Redo-PTM, RedoTimed-PTM and RedoOpt-PTM (those built so far:
/// [`crate::redo::RedoPtm`], [`crate::CxPtm`], and [`crate::CxPuc`], whose
/// own interface runs closures on a plain value instead).
///
/// Both methods run the closure as one durable linearizable transaction:
/// when they return, its effects are visible to every later transaction and
/// survive a crash. See the module docs for what the closure must satisfy.
pub trait Ptm: Send + Sync {
    /// What a read-only closure gets.
    type ReadTx<'t>: TxRead
    where
        Self: 't;
    /// What an update closure gets.
    type Tx<'t>: Transaction
    where
        Self: 't;

    /// Runs `f` as an update transaction and returns its result.
    fn update_tx<R, F>(&self, f: F) -> Result<R, PtmError>
    where
        R: PWord,
        F: for<'t> Fn(&Self::Tx<'t>) -> R + Send + Sync + 'static;

    /// Runs `f` as a read-only transaction and returns its result.
    fn read_tx<R, F>(&self, f: F) -> Result<R, PtmError>
    where
        R: PWord,
        F: for<'t> Fn(&Self::ReadTx<'t>) -> R + Send + Sync + 'static;

    /// Counters of the construction's consensus events since it was opened
    /// (replica copies, log replays, ...), named, for benchmarks and
    /// reports: a difference of two calls over a run, divided by its
    /// transactions, says what each transaction cost besides flushes. Empty
    /// unless the construction counts events.
    fn events(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}
