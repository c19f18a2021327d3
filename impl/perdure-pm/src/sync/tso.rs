//! The shuttle build's atomics and mutex, with Px86 store buffers for DRAM.
//!
//! Under `--cfg perdure_shuttle` the facade's atomics are these wrappers,
//! not shuttle's: each operation is a scheduling point (a shuttle context
//! switch, as with shuttle's own atomics), and then, while a [`Sim`] running
//! the Px86 model is installed with [`with_dram_tso`], it follows x86-TSO
//! through that simulator (PX86.md, "Visibility"):
//!
//! * a store with any ordering but `SeqCst` (a `mov`) enters the calling
//!   thread's FIFO store buffer — the *same* buffer as its pool stores,
//!   `pwb`s and `pfence`s, so TSO's order between DRAM and pool stores
//!   holds — and leaves it when the simulator drains it;
//! * a load reads the thread's newest buffered store to the atomic, else
//!   memory;
//! * a `SeqCst` store (`xchg`), every read-modify-write (`lock`-prefixed)
//!   and `fence(SeqCst)` (`mfence`) drain the thread's buffer first; an
//!   `mfence`, like a locked RMW, also completes the thread's pending
//!   write-backs when the simulator's model says so
//!   (`SimOptions::rmw_completes_flushes`, x86's rule; off by default, as on
//!   `Msync`, where only a `pfence` orders a write-back);
//! * locking and unlocking a facade [`Mutex`] drain the buffer (a lock is
//!   taken and released with locked instructions or a system call; draining
//!   at the release too is stronger than x86, where the release is a plain
//!   store, and so explores fewer executions, never one x86 forbids);
//! * `Acquire`/`Release`/`AcqRel` fences are compiler fences on x86: no-ops;
//! * a facade [`spawn`] drains the parent's buffer before the thread starts
//!   and the thread's own when it ends (creating and joining a thread are
//!   system calls), and a spin-loop hint drains the spinning thread's
//!   buffer, so every buffer drains eventually whatever the drain rate.
//!
//! Without an installed simulator, or under the `Sc` model, every operation
//! is immediate (sequentially consistent), as shuttle's atomics are.
//!
//! The value of each atomic lives in a heap cell shared with the store
//! buffer entries that target it, so that an atomic can be moved or dropped
//! while one of its stores is buffered: the late store lands in the cell,
//! never in freed or reused memory.

use crate::sim::Sim;
use std::cell::Cell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::AtomicU64 as StdU64;
pub use std::sync::atomic::Ordering;
use std::sync::{Arc, LockResult, OnceLock, PoisonError};

/// The heap cell holding one atomic's value (as its 64-bit pattern).
pub(crate) type DramCell = Arc<StdU64>;

thread_local! {
    /// The simulator installed by [`with_dram_tso`] on this OS thread (the
    /// shuttle tasks of one execution share it), or null.
    static SIM: Cell<*const Sim> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with `sim` installed as the model of DRAM atomics and mutexes of
/// this OS thread (module docs), if `sim` runs Px86; then drains every
/// thread's buffer and restores the previous installation (also when `f`
/// panics).
pub fn with_dram_tso<R>(sim: &Sim, f: impl FnOnce() -> R) -> R {
    struct Restore<'a>(*const Sim, &'a Sim);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            self.1.drain_all();
            SIM.with(|s| s.set(self.0));
        }
    }
    let prev = SIM.with(|s| s.replace(std::ptr::from_ref(sim)));
    let _restore = Restore(prev, sim);
    f()
}

/// Whether a simulator is installed on this thread ([`with_dram_tso`]).
pub fn dram_tso_installed() -> bool {
    SIM.with(|s| !s.get().is_null())
}

/// `f` on the installed simulator, if any.
fn with_sim<R>(f: impl FnOnce(&Sim) -> R) -> Option<R> {
    let p = SIM.with(Cell::get);
    if p.is_null() {
        return None;
    }
    // SAFETY: a non-null `SIM` was set by `with_dram_tso` from a `&Sim` that
    // lives at least until that call returns, and the call's `Restore`
    // guard resets `SIM` before returning or unwinding; the thread-local is
    // this OS thread's, so the pointer is used only while that borrow lasts.
    Some(f(unsafe { &*p }))
}

/// A scheduling point: a plain shuttle context switch (not `yield_now`,
/// which some schedulers take as a hint to deprioritise the thread).
#[inline]
fn switch() {
    shuttle::thread::sleep(std::time::Duration::ZERO);
}

/// One atomic's value cell, created on first use from the constructor's
/// value (so that `new` can be `const`).
struct Slot {
    init: u64,
    cell: OnceLock<DramCell>,
}

impl Slot {
    const fn new(init: u64) -> Slot {
        Slot {
            init,
            cell: OnceLock::new(),
        }
    }

    fn cell(&self) -> &DramCell {
        self.cell.get_or_init(|| Arc::new(StdU64::new(self.init)))
    }

    fn load(&self) -> u64 {
        switch();
        let c = self.cell();
        with_sim(|s| s.dram_load(c)).unwrap_or_else(|| c.load(Ordering::SeqCst))
    }

    fn store(&self, v: u64, order: Ordering) {
        switch();
        let c = self.cell();
        if with_sim(|s| s.dram_store(c, v, order == Ordering::SeqCst)).is_none() {
            c.store(v, Ordering::SeqCst);
        }
    }

    /// A locked read-modify-write `op` on the cell.
    fn rmw<R>(&self, op: impl FnOnce(&StdU64) -> R) -> R {
        switch();
        let c = self.cell();
        let mut op = Some(op);
        let mut run = || (op.take().expect("a locked operation runs once"))(c);
        match with_sim(|s| s.dram_locked(&mut run)) {
            Some(r) => r,
            None => run(),
        }
    }

    /// `f` applied to the value until the CAS succeeds: `Ok(old)`, or
    /// `Err(current)` when `f` declines. One locked instruction.
    fn update(&self, mut f: impl FnMut(u64) -> Option<u64>) -> Result<u64, u64> {
        self.rmw(|c| c.fetch_update(Ordering::SeqCst, Ordering::SeqCst, &mut f))
    }

    /// The value without a scheduling point or a store buffer, and without
    /// creating the cell (an atomic never accessed holds its initial value).
    fn peek(&self) -> u64 {
        self.cell
            .get()
            .map_or(self.init, |c| c.load(Ordering::SeqCst))
    }

    fn into_inner(self) -> u64 {
        match self.cell.into_inner() {
            Some(c) => c.load(Ordering::SeqCst),
            None => self.init,
        }
    }
}

/// `fence`: a `SeqCst` fence is an `mfence` (module docs); weaker ones
/// constrain only the compiler on x86.
pub fn fence(order: Ordering) {
    assert!(
        order != Ordering::Relaxed,
        "there is no such thing as a relaxed fence"
    );
    switch();
    if order == Ordering::SeqCst {
        with_sim(Sim::dram_fence);
    }
}

pub use std::sync::atomic::compiler_fence;

macro_rules! int_atomic {
    ($(#[$doc:meta])* $name:ident, $t:ty) => {
        $(#[$doc])*
        pub struct $name(Slot);

        impl $name {
            /// A new atomic holding `v`.
            pub const fn new(v: $t) -> $name {
                $name(Slot::new(v as u64))
            }
            /// The value (module docs).
            pub fn load(&self, _order: Ordering) -> $t {
                self.0.load() as $t
            }
            /// Stores `v` (module docs).
            pub fn store(&self, v: $t, order: Ordering) {
                self.0.store(v as u64, order)
            }
            /// Swaps in `v`, returning the old value (locked).
            pub fn swap(&self, v: $t, _order: Ordering) -> $t {
                self.0.rmw(|c| c.swap(v as u64, Ordering::SeqCst)) as $t
            }
            /// Compare-and-swap (locked).
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                _success: Ordering,
                _failure: Ordering,
            ) -> Result<$t, $t> {
                self.0
                    .rmw(|c| {
                        c.compare_exchange(
                            current as u64,
                            new as u64,
                            Ordering::SeqCst,
                            Ordering::SeqCst,
                        )
                    })
                    .map(|v| v as $t)
                    .map_err(|v| v as $t)
            }
            /// Compare-and-swap (locked; never fails spuriously here).
            pub fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.compare_exchange(current, new, success, failure)
            }
            /// Adds `v` (wrapping), returning the old value (locked).
            pub fn fetch_add(&self, v: $t, _order: Ordering) -> $t {
                self.upd(|x| Some(x.wrapping_add(v)))
            }
            /// Subtracts `v` (wrapping), returning the old value (locked).
            pub fn fetch_sub(&self, v: $t, _order: Ordering) -> $t {
                self.upd(|x| Some(x.wrapping_sub(v)))
            }
            /// Bitwise or, returning the old value (locked).
            pub fn fetch_or(&self, v: $t, _order: Ordering) -> $t {
                self.upd(|x| Some(x | v))
            }
            /// Bitwise and, returning the old value (locked).
            pub fn fetch_and(&self, v: $t, _order: Ordering) -> $t {
                self.upd(|x| Some(x & v))
            }
            /// Maximum, returning the old value (locked).
            pub fn fetch_max(&self, v: $t, _order: Ordering) -> $t {
                self.upd(|x| Some(x.max(v)))
            }
            /// Minimum, returning the old value (locked).
            pub fn fetch_min(&self, v: $t, _order: Ordering) -> $t {
                self.upd(|x| Some(x.min(v)))
            }
            /// `f` until it takes (one locked instruction here).
            pub fn fetch_update<F: FnMut($t) -> Option<$t>>(
                &self,
                _set: Ordering,
                _fetch: Ordering,
                mut f: F,
            ) -> Result<$t, $t> {
                self.0
                    .update(|x| f(x as $t).map(|y| y as u64))
                    .map(|v| v as $t)
                    .map_err(|v| v as $t)
            }
            fn upd(&self, mut f: impl FnMut($t) -> Option<$t>) -> $t {
                match self.0.update(|x| f(x as $t).map(|y| y as u64)) {
                    Ok(v) | Err(v) => v as $t,
                }
            }
            /// The value, consuming the atomic.
            pub fn into_inner(self) -> $t {
                self.0.into_inner() as $t
            }
            /// The value, read outside the model: no scheduling point and
            /// no store buffer. For a snapshot no thread's access races
            /// with (a pool's words copied into a crash image), which would
            /// otherwise be a context switch per word.
            pub fn load_unmodelled(&self) -> $t {
                self.0.peek() as $t
            }
            /// Stores `v` outside the model, as [`Self::load_unmodelled`]
            /// reads (a fresh pool filled from an image).
            pub fn store_unmodelled(&self, v: $t) {
                self.0.cell().store(v as u64, Ordering::SeqCst)
            }
        }

        impl Default for $name {
            fn default() -> $name {
                $name::new(0)
            }
        }

        impl From<$t> for $name {
            fn from(v: $t) -> $name {
                $name::new(v)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // No scheduling point: a debug print is not an access.
                write!(f, "{}", self.0.cell().load(Ordering::SeqCst) as $t)
            }
        }
    };
}

int_atomic!(
    /// The facade's `AtomicU64` in the shuttle build (module docs).
    AtomicU64,
    u64
);
int_atomic!(
    /// The facade's `AtomicUsize` in the shuttle build (module docs).
    AtomicUsize,
    usize
);
int_atomic!(
    /// The facade's `AtomicU32` in the shuttle build (module docs).
    AtomicU32,
    u32
);

/// The facade's `AtomicBool` in the shuttle build (module docs).
pub struct AtomicBool(Slot);

impl AtomicBool {
    /// A new atomic holding `v`.
    pub const fn new(v: bool) -> AtomicBool {
        AtomicBool(Slot::new(v as u64))
    }
    /// The value (module docs).
    pub fn load(&self, _order: Ordering) -> bool {
        self.0.load() != 0
    }
    /// Stores `v` (module docs).
    pub fn store(&self, v: bool, order: Ordering) {
        self.0.store(u64::from(v), order)
    }
    /// Swaps in `v`, returning the old value (locked).
    pub fn swap(&self, v: bool, _order: Ordering) -> bool {
        self.0.rmw(|c| c.swap(u64::from(v), Ordering::SeqCst)) != 0
    }
    /// Compare-and-swap (locked).
    pub fn compare_exchange(
        &self,
        current: bool,
        new: bool,
        _success: Ordering,
        _failure: Ordering,
    ) -> Result<bool, bool> {
        self.0
            .rmw(|c| {
                c.compare_exchange(
                    u64::from(current),
                    u64::from(new),
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
            })
            .map(|v| v != 0)
            .map_err(|v| v != 0)
    }
    /// Compare-and-swap (locked; never fails spuriously here).
    pub fn compare_exchange_weak(
        &self,
        current: bool,
        new: bool,
        success: Ordering,
        failure: Ordering,
    ) -> Result<bool, bool> {
        self.compare_exchange(current, new, success, failure)
    }
    /// Bitwise or, returning the old value (locked).
    pub fn fetch_or(&self, v: bool, _order: Ordering) -> bool {
        self.0.rmw(|c| c.fetch_or(u64::from(v), Ordering::SeqCst)) != 0
    }
    /// Bitwise and, returning the old value (locked).
    pub fn fetch_and(&self, v: bool, _order: Ordering) -> bool {
        self.0.rmw(|c| c.fetch_and(u64::from(v), Ordering::SeqCst)) != 0
    }
    /// The value, consuming the atomic.
    pub fn into_inner(self) -> bool {
        self.0.into_inner() != 0
    }
}

impl Default for AtomicBool {
    fn default() -> AtomicBool {
        AtomicBool::new(false)
    }
}

impl fmt::Debug for AtomicBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.cell().load(Ordering::SeqCst) != 0)
    }
}

/// The facade's `AtomicPtr` in the shuttle build (module docs).
pub struct AtomicPtr<T> {
    slot: Slot,
    _t: std::marker::PhantomData<*mut T>,
}

// SAFETY: like `std::sync::atomic::AtomicPtr`, the wrapper only moves the
// pointer's bits between threads; it never dereferences it.
unsafe impl<T> Send for AtomicPtr<T> {}
// SAFETY: as above; every access goes through the cell's atomic operations.
unsafe impl<T> Sync for AtomicPtr<T> {}

impl<T> AtomicPtr<T> {
    /// A new atomic holding `p`.
    pub fn new(p: *mut T) -> AtomicPtr<T> {
        AtomicPtr {
            slot: Slot::new(Self::to_bits(p)),
            _t: std::marker::PhantomData,
        }
    }
    fn to_bits(p: *mut T) -> u64 {
        p as usize as u64
    }
    fn from_bits(b: u64) -> *mut T {
        b as usize as *mut T
    }
    /// The value (module docs).
    pub fn load(&self, _order: Ordering) -> *mut T {
        Self::from_bits(self.slot.load())
    }
    /// Stores `p` (module docs).
    pub fn store(&self, p: *mut T, order: Ordering) {
        self.slot.store(Self::to_bits(p), order)
    }
    /// Swaps in `p`, returning the old pointer (locked).
    pub fn swap(&self, p: *mut T, _order: Ordering) -> *mut T {
        let b = Self::to_bits(p);
        Self::from_bits(self.slot.rmw(|c| c.swap(b, Ordering::SeqCst)))
    }
    /// Compare-and-swap (locked).
    pub fn compare_exchange(
        &self,
        current: *mut T,
        new: *mut T,
        _success: Ordering,
        _failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        let (c0, n) = (Self::to_bits(current), Self::to_bits(new));
        self.slot
            .rmw(|c| c.compare_exchange(c0, n, Ordering::SeqCst, Ordering::SeqCst))
            .map(Self::from_bits)
            .map_err(Self::from_bits)
    }
    /// Compare-and-swap (locked; never fails spuriously here).
    pub fn compare_exchange_weak(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        self.compare_exchange(current, new, success, failure)
    }
    /// The value, consuming the atomic.
    pub fn into_inner(self) -> *mut T {
        Self::from_bits(self.slot.into_inner())
    }
}

impl<T> Default for AtomicPtr<T> {
    fn default() -> AtomicPtr<T> {
        AtomicPtr::new(std::ptr::null_mut())
    }
}

impl<T> fmt::Debug for AtomicPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.slot.cell().load(Ordering::SeqCst))
    }
}

/// The facade's `Mutex` in the shuttle build: shuttle's, with the calling
/// thread's store buffer drained when it locks and before it unlocks
/// (module docs).
pub struct Mutex<T: ?Sized>(shuttle::sync::Mutex<T>);

/// The guard of a facade [`Mutex`].
pub struct MutexGuard<'a, T: ?Sized> {
    inner: shuttle::sync::MutexGuard<'a, T>,
}

/// Drains the calling thread's store buffer, if a simulator is installed.
pub(crate) fn drain_own() {
    with_sim(Sim::drain_thread);
}

impl<T> Mutex<T> {
    /// A new mutex holding `t`.
    pub const fn new(t: T) -> Mutex<T> {
        Mutex(shuttle::sync::Mutex::new(t))
    }
    /// The value, consuming the mutex.
    pub fn into_inner(self) -> LockResult<T> {
        self.0.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Locks (draining the thread's buffer first).
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        drain_own();
        match self.0.lock() {
            Ok(inner) => Ok(MutexGuard { inner }),
            Err(e) => Err(PoisonError::new(MutexGuard {
                inner: e.into_inner(),
            })),
        }
    }
    /// The value, through a unique borrow.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.0.get_mut()
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Mutex<T> {
        Mutex::new(T::default())
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        // Before `inner` unlocks (fields drop after this).
        drain_own();
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

/// Shuttle's `spawn`, with the parent's store buffer drained before the
/// thread starts and the thread's own when `f` returns (module docs).
pub fn spawn<F, T>(f: F) -> shuttle::thread::JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    drain_own();
    shuttle::thread::spawn(move || {
        let r = f();
        // A scheduling point first: other threads may run while the last
        // stores are still buffered.
        switch();
        drain_own();
        r
    })
}
