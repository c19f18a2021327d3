//! Durability backends: how a store in a mapped pool becomes durable.
//!
//! Algorithms are written once, generic over a [`Backend`], and speak the
//! vocabulary of the persistency literature:
//!
//! * `pwb(addr)` — *persistent write-back* of the cache line holding `addr`;
//! * `pfence()` — orders the calling thread's earlier `pwb`s before its later
//!   stores become persistent (Px86: an `sfence` after `clwb`/`clflushopt`);
//! * `psync()` — waits until the calling thread's earlier `pwb`s are durable.
//!
//! The backends:
//!
//! | backend | `pwb` | `pfence` | `psync` | durable against |
//! | --- | --- | --- | --- | --- |
//! | [`Pmem`] | `clwb` > `clflushopt` > `clflush`, chosen at run time from CPUID | `sfence` | `sfence` | power loss on real PM / DAX with `MAP_SYNC`; process crash otherwise |
//! | [`Msync`] | records the line's page as dirty (per thread) | `msync(MS_SYNC)` of the thread's dirty pages | same | power loss on an ordinary file system |
//! | [`NoFlush`] | nothing | nothing | nothing | process crash only (a baseline) |
//!
//! The simulated Px86 backend (`Sim`) that records every access and produces
//! crash images lives beside these and implements the same trait.
//!
//! **Why `Msync`'s `pfence` is an `msync`.** On an ordinary file the kernel
//! may write any dirty page back at any moment, so a later store can reach
//! the disk before an earlier one. The only way to *order* persistence is to
//! make the earlier lines durable before the later stores happen, which is
//! what `pfence` must promise. `Msync` therefore pays an `msync` per
//! `pfence`; the flush-cost benchmark reports what that costs. An algorithm
//! that needs ordering but not immediate durability pays the same here; that
//! is the honest price of persistence without PM hardware.
//!
//! **`Pmem` without `MAP_SYNC`.** On a file system without DAX the pool is
//! mapped through the page cache; `clwb` then moves data to DRAM page cache,
//! which survives the death of the process but not a power loss. The pool
//! reports its mapping mode ([`crate::MapMode`]) so a user can tell.
//!
//! The trait is `unsafe` at the bottom and safe on top, in the shape of
//! parking_lot's `RawMutex`: implementors provide three small raw methods
//! and promise their durability semantics; everyone else calls the counted
//! provided methods, usually through the range-checked wrappers on
//! [`crate::Pool`].

use crate::stats;
use crate::sync::atomic::{AtomicU64, Ordering};

/// The size of a cache line, the unit of persistence in Px86.
pub const CACHE_LINE: usize = 64;

/// Which kind of backend a type is, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// Cache-line flush instructions and `sfence`.
    Pmem,
    /// `msync` of dirty pages.
    Msync,
    /// No persistence instructions.
    NoFlush,
    /// The Px86 simulator.
    Sim,
}

impl BackendKind {
    /// The kind's name in reports (`"msync"`, `"noflush"`, `"sim"`, `"pmem"`).
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Pmem => "pmem",
            BackendKind::Msync => "msync",
            BackendKind::NoFlush => "noflush",
            BackendKind::Sim => "sim",
        }
    }
}

/// A durability backend.
///
/// # Safety
///
/// Implementors promise the semantics documented on each raw method. The
/// integrity of recovered persistent data structures, including the
/// allocators' metadata whose corruption would hand one block to two owners,
/// rests on that promise. `NoFlush` keeps it vacuously: it documents that it
/// gives no durability beyond the process, and nothing built on it claims
/// more.
pub unsafe trait Backend: std::fmt::Debug + Send + Sync + 'static {
    /// A short name for reports (`"pmem/clwb"`, `"msync"`, ...): by default
    /// the name of its [`Backend::kind`].
    fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The kind of this backend.
    fn kind(&self) -> BackendKind;

    /// Whether a successful locked read-modify-write (`compare_exchange`,
    /// `swap`, `fetch_add`) completes this thread's earlier write-backs, as
    /// Px86 says of x86's `lock`-prefixed instructions. Algorithms that lean
    /// on it (Memento's detectable CAS, L35–L38) issue an explicit `pfence`
    /// where it is false. False by default: `Msync` gives RMWs no such power.
    fn rmw_completes_flushes(&self) -> bool {
        false
    }

    /// Writes back the cache line containing `addr` towards persistence.
    /// Not counted; call [`Backend::pwb`] instead.
    ///
    /// # Safety
    ///
    /// `addr` must point into memory that stays mapped for the duration of
    /// the call.
    unsafe fn raw_pwb(&self, addr: *const u8);

    /// Orders this thread's earlier write-backs before its later stores
    /// persist. Not counted; call [`Backend::pfence`] instead.
    fn raw_pfence(&self);

    /// Waits until this thread's earlier write-backs are durable. Not
    /// counted; call [`Backend::psync`] instead.
    fn raw_psync(&self);

    /// `pwb` of the line holding `addr`, counted.
    ///
    /// # Safety
    ///
    /// As for [`Backend::raw_pwb`].
    #[inline]
    unsafe fn pwb(&self, addr: *const u8) {
        stats::count_pwb(1);
        // SAFETY: the caller upholds raw_pwb's contract.
        unsafe { self.raw_pwb(addr) }
    }

    /// `pwb` of every line overlapping `[addr, addr + len)`, counted per line.
    ///
    /// # Safety
    ///
    /// The whole range must stay mapped for the duration of the call.
    #[inline]
    unsafe fn pwb_range(&self, addr: *const u8, len: usize) {
        if len == 0 {
            return;
        }
        let first = (addr as usize) & !(CACHE_LINE - 1);
        let last = (addr as usize + (len - 1)) & !(CACHE_LINE - 1);
        let lines = (last - first) / CACHE_LINE + 1;
        stats::count_pwb(lines as u64);
        let mut line = first;
        while line <= last {
            // SAFETY: `line` lies within the caller's mapped range (it is the
            // start of a line overlapping it; flushes act on whole lines).
            unsafe { self.raw_pwb(line as *const u8) };
            line += CACHE_LINE;
        }
    }

    /// `pfence`, counted.
    #[inline]
    fn pfence(&self) {
        stats::count_pfence();
        self.raw_pfence();
    }

    /// `psync`, counted.
    #[inline]
    fn psync(&self) {
        stats::count_psync();
        self.raw_psync();
    }

    /// Told the call site of the persistence primitive about to reach this
    /// backend (a `#[track_caller]` location, [`crate::site`]). Ignored
    /// by default; [`crate::Sim`] attributes its events to it.
    #[inline]
    fn note_site(&self, site: &'static std::panic::Location<'static>) {
        let _ = site;
    }

    // --- Access hooks -------------------------------------------------------
    //
    // Every access to a pool word goes through these (via `crate::PmWord`),
    // with the word's pool offset, so that a recording backend (`Sim`) sees
    // each load, store and read-modify-write in the order it happened. The
    // defaults are the plain atomic operations and inline to nothing more.

    /// A load of the pool word at `off`.
    #[inline]
    fn load(&self, word: &AtomicU64, off: u64, order: Ordering) -> u64 {
        let _ = off;
        word.load(order)
    }

    /// A store to the pool word at `off`.
    #[inline]
    fn store(&self, word: &AtomicU64, off: u64, val: u64, order: Ordering) {
        let _ = off;
        word.store(val, order)
    }

    /// A compare-and-swap of the pool word at `off` (never fails spuriously).
    #[inline]
    fn compare_exchange(
        &self,
        word: &AtomicU64,
        off: u64,
        current: u64,
        new: u64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u64, u64> {
        let _ = off;
        word.compare_exchange(current, new, success, failure)
    }

    /// An atomic swap of the pool word at `off`.
    #[inline]
    fn swap(&self, word: &AtomicU64, off: u64, val: u64, order: Ordering) -> u64 {
        let _ = off;
        word.swap(val, order)
    }

    /// An atomic add to the pool word at `off`; returns the previous value.
    #[inline]
    fn fetch_add(&self, word: &AtomicU64, off: u64, val: u64, order: Ordering) -> u64 {
        let _ = off;
        word.fetch_add(val, order)
    }

    /// A non-temporal store: visible and persisted together, ordered with
    /// later stores only by the thread's next fence. The default is a store
    /// followed by a write-back of its line.
    #[inline]
    fn ntstore(&self, word: &AtomicU64, off: u64, val: u64) {
        let _ = off;
        word.store(val, Ordering::Release);
        // SAFETY: `word` is a live reference, so its line is mapped.
        unsafe { self.raw_pwb((word as *const AtomicU64).cast()) };
    }

    /// A 16-byte compare-and-swap of the two words at `off` (16-aligned),
    /// low word first. Atomic for visibility; whether it *persists*
    /// atomically is a property of the hardware an algorithm must state
    /// (the `Sim` backend can run both ways).
    #[inline]
    fn compare_exchange_16(
        &self,
        words: &[AtomicU64; 2],
        off: u64,
        current: u128,
        new: u128,
    ) -> Result<u128, u128> {
        let _ = off;
        crate::dword::compare_exchange_16(words, current, new)
    }

    /// Whether [`Backend::compare_exchange_16`] is one event for this
    /// backend's 8-byte accesses to the same words too (a torn pair is then
    /// impossible): the hardware instruction ([`crate::dword::is_native`]),
    /// or a backend that serialises every access itself.
    #[inline]
    fn dword_cas_atomic_with_words(&self) -> bool {
        crate::dword::is_native()
    }

    /// Called once by every pool constructor, before any access, with the
    /// pool's size and a way to read its initial words (a recording backend
    /// keeps a copy; the others never call `initial`).
    #[inline]
    fn attach(&self, pool_size: u64, initial: &mut dyn FnMut() -> Vec<u64>) {
        let _ = (pool_size, initial);
    }

    /// [`Backend::attach`] for a pool made from a simulator's crash image
    /// ([`crate::Pool::volatile_from_image`]): its initial words are
    /// `image`'s. The simulator keeps the image's pages instead of copying
    /// them; every other backend is told as by `attach`.
    #[inline]
    fn attach_image(&self, pool_size: u64, image: &crate::pages::CrashImage) {
        self.attach(pool_size, &mut || image.words());
    }

    /// Told by the pool of every `pwb` with its pool offset (after the
    /// write-back itself); a recording backend notes it.
    #[inline]
    fn record_pwb(&self, off: u64, len: u64) {
        let _ = (off, len);
    }
}

/// No persistence instructions at all: the baseline that shows what
/// persistence costs. Data survives the death of the process (it is in the
/// page cache) but not a power loss.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoFlush;

// SAFETY: NoFlush promises nothing beyond process-crash survival, which the
// page cache gives; its documentation says so.
unsafe impl Backend for NoFlush {
    fn kind(&self) -> BackendKind {
        BackendKind::NoFlush
    }
    #[inline]
    unsafe fn raw_pwb(&self, _addr: *const u8) {}
    #[inline]
    fn raw_pfence(&self) {}
    #[inline]
    fn raw_psync(&self) {}
}

pub use pmem::{FlushInstruction, Pmem};

mod pmem {
    use super::{Backend, BackendKind};
    use std::sync::atomic::{AtomicU8, Ordering};

    /// The cache-line write-back instruction a [`Pmem`] backend issues.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum FlushInstruction {
        /// `clwb`: writes the line back and may keep it cached (best).
        Clwb,
        /// `clflushopt`: writes back and invalidates; weakly ordered.
        Clflushopt,
        /// `clflush`: writes back and invalidates; ordered like a store.
        Clflush,
    }

    impl FlushInstruction {
        /// All instructions, best first.
        pub const ALL: [FlushInstruction; 3] = [
            FlushInstruction::Clwb,
            FlushInstruction::Clflushopt,
            FlushInstruction::Clflush,
        ];

        /// The instruction's mnemonic.
        pub fn mnemonic(self) -> &'static str {
            match self {
                FlushInstruction::Clwb => "clwb",
                FlushInstruction::Clflushopt => "clflushopt",
                FlushInstruction::Clflush => "clflush",
            }
        }

        /// Whether this CPU implements the instruction (CPUID).
        pub fn supported(self) -> bool {
            let (clflush, clflushopt, clwb) = cpu_features();
            match self {
                FlushInstruction::Clwb => clwb,
                FlushInstruction::Clflushopt => clflushopt,
                FlushInstruction::Clflush => clflush,
            }
        }

        /// The best instruction this CPU has, detected once per process.
        pub fn detect() -> FlushInstruction {
            static CACHED: AtomicU8 = AtomicU8::new(0);
            match CACHED.load(Ordering::Relaxed) {
                1 => FlushInstruction::Clwb,
                2 => FlushInstruction::Clflushopt,
                3 => FlushInstruction::Clflush,
                _ => {
                    let best = FlushInstruction::ALL
                        .into_iter()
                        .find(|i| i.supported())
                        .unwrap_or(FlushInstruction::Clflush);
                    let code = match best {
                        FlushInstruction::Clwb => 1,
                        FlushInstruction::Clflushopt => 2,
                        FlushInstruction::Clflush => 3,
                    };
                    CACHED.store(code, Ordering::Relaxed);
                    best
                }
            }
        }
    }

    /// Returns (clflush, clflushopt, clwb) support from CPUID.
    #[cfg(target_arch = "x86_64")]
    fn cpu_features() -> (bool, bool, bool) {
        use std::arch::x86_64::{__cpuid, __cpuid_count};
        // CPUID exists on every x86_64 CPU; leaf 0 gives the highest
        // supported standard leaf, checked before reading leaf 7.
        let max_leaf = __cpuid(0).eax;
        let leaf1 = __cpuid(1);
        let clflush = leaf1.edx & (1 << 19) != 0;
        if max_leaf < 7 {
            return (clflush, false, false);
        }
        let leaf7 = __cpuid_count(7, 0);
        let clflushopt = leaf7.ebx & (1 << 23) != 0;
        let clwb = leaf7.ebx & (1 << 24) != 0;
        (clflush, clflushopt, clwb)
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn cpu_features() -> (bool, bool, bool) {
        (false, false, false)
    }

    /// Real persistence instructions: `clwb` (else `clflushopt`, else
    /// `clflush`) for `pwb`, `sfence` for `pfence` and `psync`.
    ///
    /// Only available on x86_64; [`Pmem::new`] is `None` elsewhere.
    #[derive(Clone, Copy, Debug)]
    pub struct Pmem {
        instruction: FlushInstruction,
    }

    impl Default for Pmem {
        /// The best instruction the CPU has.
        ///
        /// # Panics
        ///
        /// On a non-x86_64 target, where no flush instruction exists; use
        /// [`Pmem::new`] to handle that case.
        fn default() -> Self {
            Pmem::new().expect("the Pmem backend needs an x86_64 CPU with clflush")
        }
    }

    impl Pmem {
        /// The backend with the best instruction the CPU has, or `None` if it
        /// has none (not x86_64).
        pub fn new() -> Option<Pmem> {
            let best = FlushInstruction::detect();
            best.supported().then_some(Pmem { instruction: best })
        }

        /// The backend forced to use `instruction`, if the CPU has it (the
        /// flush-cost benchmark compares all three).
        pub fn with_instruction(instruction: FlushInstruction) -> Option<Pmem> {
            instruction.supported().then_some(Pmem { instruction })
        }

        /// The instruction this backend issues for `pwb`.
        pub fn instruction(&self) -> FlushInstruction {
            self.instruction
        }
    }

    // SAFETY: clwb/clflushopt/clflush write the line back to the persistence
    // domain (or to the page cache when the mapping is not DAX, as documented),
    // and sfence orders/awaits them per the Intel SDM and Px86.
    unsafe impl Backend for Pmem {
        fn name(&self) -> &'static str {
            match self.instruction {
                FlushInstruction::Clwb => "pmem/clwb",
                FlushInstruction::Clflushopt => "pmem/clflushopt",
                FlushInstruction::Clflush => "pmem/clflush",
            }
        }

        fn kind(&self) -> BackendKind {
            BackendKind::Pmem
        }

        fn rmw_completes_flushes(&self) -> bool {
            // Intel SDM: CLFLUSHOPT and CLWB are ordered with respect to
            // locked read-modify-write instructions (Px86: they take effect
            // no later than the thread's next locked RMW completes).
            true
        }

        #[inline]
        unsafe fn raw_pwb(&self, addr: *const u8) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the caller guarantees `addr` is mapped; the instruction
            // was checked against CPUID when `self` was built; none of these
            // instructions touch the stack or flags.
            unsafe {
                match self.instruction {
                    FlushInstruction::Clwb => core::arch::asm!(
                        "clwb [{0}]", in(reg) addr, options(nostack, preserves_flags)
                    ),
                    FlushInstruction::Clflushopt => core::arch::asm!(
                        "clflushopt [{0}]", in(reg) addr, options(nostack, preserves_flags)
                    ),
                    FlushInstruction::Clflush => core::arch::asm!(
                        "clflush [{0}]", in(reg) addr, options(nostack, preserves_flags)
                    ),
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = addr;
        }

        #[inline]
        fn raw_pfence(&self) {
            sfence();
        }

        #[inline]
        fn raw_psync(&self) {
            sfence();
        }

        #[cfg(all(target_arch = "x86_64", not(any(perdure_loom, perdure_shuttle))))]
        #[inline]
        fn ntstore(&self, word: &crate::sync::atomic::AtomicU64, _off: u64, val: u64) {
            // SAFETY: `word` is a live, 8-aligned reference; movnti writes
            // exactly those 8 bytes, bypassing the cache (an atomic 8-byte
            // store for visibility), and touches neither stack nor flags.
            unsafe {
                core::arch::asm!(
                    "movnti qword ptr [{p}], {v}",
                    p = in(reg) word as *const crate::sync::atomic::AtomicU64,
                    v = in(reg) val,
                    options(nostack, preserves_flags)
                )
            };
        }
    }

    #[inline]
    fn sfence() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: sfence has no operands and no preconditions.
        unsafe {
            core::arch::asm!("sfence", options(nostack, preserves_flags))
        };
    }
}

pub use msync::Msync;

mod msync {
    use super::{Backend, BackendKind};
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicU64, Ordering};

    thread_local! {
        /// Start addresses of the pages this thread has `pwb`-ed since its
        /// last `pfence`/`psync`.
        static DIRTY_PAGES: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    }

    static FAILURES: AtomicU64 = AtomicU64::new(0);
    static LAST_ERRNO: AtomicU64 = AtomicU64::new(0);

    fn page_size() -> usize {
        static PAGE: AtomicU64 = AtomicU64::new(0);
        match PAGE.load(Ordering::Relaxed) {
            0 => {
                // SAFETY: sysconf has no memory-safety preconditions.
                let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
                let p = if p > 0 { p as u64 } else { 4096 };
                PAGE.store(p, Ordering::Relaxed);
                p as usize
            }
            p => p as usize,
        }
    }

    /// Persistence for ordinary files: `pwb` records the line's page as dirty
    /// (per thread), `pfence` and `psync` `msync(MS_SYNC)` the thread's dirty
    /// pages, coalesced into ranges. See the module docs for why `pfence`
    /// must be an `msync`.
    ///
    /// An `msync` that fails with an I/O error cannot be reported through
    /// `pfence()`; it is counted ([`Msync::failures`]), the first one is
    /// printed to stderr, and [`crate::Pool::psync_checked`] returns it.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Msync;

    impl Msync {
        /// How many `msync` calls have failed in this process.
        pub fn failures() -> u64 {
            FAILURES.load(Ordering::Relaxed)
        }

        /// The errno of the most recent failed `msync`, if any.
        pub fn last_error() -> Option<std::io::Error> {
            match LAST_ERRNO.load(Ordering::Relaxed) {
                0 => None,
                e => Some(std::io::Error::from_raw_os_error(e as i32)),
            }
        }

        fn drain() {
            DIRTY_PAGES.with(|pages| {
                let mut pages = pages.borrow_mut();
                if pages.is_empty() {
                    return;
                }
                // One `msync` over the span from the lowest dirty page to
                // the highest: the kernel writes back only the dirty pages
                // in it (the page cache tracks them) and makes them durable
                // with one journal commit and one device flush, where an
                // `msync` per run of contiguous pages paid those per run
                // (a transaction dirties 5-10 scattered pages: ~5x slower
                // on ext4). The span may hold other threads' dirty pages
                // too: they are written back early, which is harmless.
                let (lo, hi) = pages
                    .iter()
                    .fold((usize::MAX, 0), |(lo, hi), &p| (lo.min(p), hi.max(p)));
                sync_range(lo, hi + page_size() - lo);
                pages.clear();
            });
        }
    }

    fn sync_range(start: usize, len: usize) {
        // SAFETY: msync only reads the kernel's page tables for the range; on
        // an address that is no longer mapped it fails with ENOMEM and does
        // nothing, so no memory is touched from user space.
        let rc = unsafe { libc::msync(start as *mut libc::c_void, len, libc::MS_SYNC) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            // ENOMEM: the mapping was unmapped after this thread marked it
            // dirty; unmapping a pool syncs the whole mapping first, so
            // nothing is lost.
            if err.raw_os_error() == Some(libc::ENOMEM) {
                return;
            }
            LAST_ERRNO.store(err.raw_os_error().unwrap_or(-1) as u64, Ordering::Relaxed);
            if FAILURES.fetch_add(1, Ordering::Relaxed) == 0 {
                eprintln!(
                    "perdure: msync of {len} bytes at {start:#x} failed: {err}; \
                     data may not be durable (check the device and free space)"
                );
            }
        }
    }

    // SAFETY: after drain() every page this thread marked dirty has been
    // msync-ed with MS_SYNC, which returns only once the data is on stable
    // storage; drain() runs before any later store of the thread can be
    // issued, so later stores cannot overtake earlier write-backs.
    unsafe impl Backend for Msync {
        fn kind(&self) -> BackendKind {
            BackendKind::Msync
        }

        #[inline]
        unsafe fn raw_pwb(&self, addr: *const u8) {
            let page = (addr as usize) & !(page_size() - 1);
            DIRTY_PAGES.with(|pages| {
                let mut pages = pages.borrow_mut();
                if pages.last() != Some(&page) {
                    pages.push(page);
                }
            });
        }

        fn raw_pfence(&self) {
            Msync::drain();
        }

        fn raw_psync(&self) {
            Msync::drain();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats;

    #[test]
    fn pwb_range_counts_lines_it_touches() {
        let buf = vec![0u8; 4 * CACHE_LINE];
        let before = stats::thread_counts();
        let base = buf.as_ptr();
        let aligned = ((base as usize + CACHE_LINE - 1) & !(CACHE_LINE - 1)) as *const u8;
        // SAFETY: the ranges below lie within `buf`.
        unsafe {
            NoFlush.pwb_range(aligned, 1); // one line
            NoFlush.pwb_range(aligned, CACHE_LINE); // one line
            NoFlush.pwb_range(aligned.add(CACHE_LINE - 1), 2); // straddles: two
            NoFlush.pwb_range(aligned, 0); // nothing
        }
        NoFlush.pfence();
        NoFlush.psync();
        let spent = stats::thread_counts() - before;
        assert_eq!(spent.pwb, 4);
        assert_eq!(spent.pfence, 1);
        assert_eq!(spent.psync, 1);
    }

    #[test]
    fn detected_instruction_is_supported() {
        if let Some(p) = Pmem::new() {
            assert!(p.instruction().supported());
            let x = [7u64; 8];
            // SAFETY: `x` is live on the stack.
            unsafe { p.pwb(x.as_ptr().cast()) };
            p.pfence();
            assert_eq!(x[0], 7);
        }
    }
}
