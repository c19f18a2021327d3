//! RedoTimed-PTM and RedoOpt-PTM (seed §5, "Timed variant" and "Additional
//! optimizations"): the two variants of Redo-PTM, as switches on the one
//! implementation of Algorithms 1–3 ([`Variant`] in [`Config`]).
//!
//! | variant | differs from Redo-PTM in |
//! | --- | --- |
//! | [`Variant::Redo`] | nothing: Algorithms 1–3 |
//! | [`Variant::Timed`] | step {5}: for a window of about four copy times from the start of an update, only `combs[0]` and `combs[1]` may be locked; a thread that finds both taken backs off (exponentially, reference \[1\]) and checks whether another thread's commit carried its request; after the window, any of the `N + 1` |
//! | [`Variant::Opt`] | Timed, plus store aggregation, flush aggregation by cache line, non-temporal copies and the full-flush switch (below) |
//!
//! The variants share the persistent layout: a pool written by one opens
//! with any other (the variant is volatile configuration, not persisted).
//!
//! ## RedoTimed-PTM's window
//!
//! "This limited period of time corresponds to four times the amount of time
//! it takes to make a copy of the object" (§5). perdure measures every copy
//! of a replica (an exponential moving average, weight 1/4) and uses
//! `4 ×` that, or [`Config::timed_window`] when set. Before the first copy
//! has been measured the window is empty; on a freshly opened pool the first
//! update copies (null recovery invalidates the other replicas), so the
//! estimate exists from then on. Wait-freedom is kept: the window is bounded,
//! and after it the update locks as Redo-PTM does.
//!
//! ## RedoOpt-PTM's optimizations
//!
//! * **Store aggregation**: a per-thread open-addressing hash set
//!   (`WordSet`) maps each word a batch stored to its log entry; a repeated
//!   store rewrites that entry's new value instead of appending, so a replay
//!   writes each word once. The set is reset in O(1) by a generation number
//!   ("efficient reset and re-usage"). Merging across the closures of one
//!   combined batch is kept correct for a closure that panics (its stores
//!   alone are undone): an entry of an earlier closure that a later one
//!   rewrites has its previous new value saved, and restored on a panic.
//!   When the set is half full it stops merging (entries are appended as
//!   in Redo-PTM).
//! * **Flush aggregation by cache line**: a replica's dirty lines are kept
//!   distinct with a second hash set, so each line is counted once towards
//!   the threshold below and written back once.
//! * **Postponed `pwb`s with the full-flush switch**: write-backs wait until
//!   the commit (as in all variants, Alg. 3 L26, because the dirty lines
//!   belong to the replica); when more distinct lines than a tenth of the
//!   replica are dirty, the replica is marked for a complete flush of its
//!   used part (and any line beyond it) before the `cur_comb` CAS.
//! * **Non-temporal copy**: a replica is copied with non-temporal stores
//!   ([`perdure_pm::PmWord::ntstore`]: `movnti` on x86 `Pmem`; a store and a
//!   write-back of its line elsewhere), which persist without `pwb`s; the
//!   `pfence` before the `cur_comb` CAS (or, on x86, the locked CAS itself)
//!   orders them before the CAS.
//!
//! ## Volatile footprint of RedoOpt
//!
//! Per thread, a store set of `2 × log_entries_per_thread` slots rounded to
//! a power of two (16 bytes each); per replica, a line set of
//! `2 × dirty_lines_per_replica` slots (16 bytes each). With the default
//! configuration (8 threads, 64 Ki entries, 16 Ki lines) that is about
//! 21 MB on top of Redo-PTM's 20 MB, 41 MB in all (checked under 64 MB by
//! `tests/suite/redo_variants.rs`); see [`Config::volatile_bytes`].

use super::core::{bump, Held, RedoPtm};
use super::state::Combined;
use super::tx::Writer;
use crate::breakdown::{self, Bucket};
use crate::replica::word;
use crate::sti;
use crate::sync::atomic::Ordering;
use perdure_pm::Backend;
use std::time::{Duration, Instant};

#[cfg(doc)]
use super::config::{Config, Variant};

/// Exponential backoff (reference \[1\] of the seed): spins, doubling up to
/// a cap, yielding the processor once the spins are long.
pub(crate) struct Backoff {
    spins: u32,
}

impl Backoff {
    pub(crate) fn new() -> Backoff {
        Backoff { spins: 16 }
    }

    pub(crate) fn wait(&mut self) {
        let _t = breakdown::timer(Bucket::Wait);
        for _ in 0..self.spins {
            crate::sync::spin_loop();
        }
        if self.spins >= 1024 {
            crate::sync::thread::yield_now();
        } else {
            self.spins *= 2;
        }
    }
}

impl<B: Backend> RedoPtm<B> {
    /// Nanoseconds since this PTM was opened.
    fn now_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Records the start of `tid`'s update (RedoTimed's window starts here).
    pub(super) fn note_update_start(&self, tid: usize) {
        if self.config.variant.timed() {
            self.update_start[tid].store(self.now_ns(), Ordering::Relaxed);
        }
    }

    /// RedoTimed's window: [`Config::timed_window`], else four copy times.
    pub fn timed_window(&self) -> Duration {
        self.config
            .timed_window
            .unwrap_or_else(|| Duration::from_nanos(4 * self.copy_ns.load(Ordering::Relaxed)))
    }

    /// {5}: the `Combined` to work on. Redo-PTM: the first the strong
    /// trylock gives. RedoTimed/RedoOpt: within the window only `combs[0]`
    /// or `combs[1]`, backing off while both are taken; `None` (give the
    /// attempt up and collect) once `cur_comb` moves away from `cur`, since
    /// the commit may carry this thread's request.
    pub(super) fn lock_combined(&self, tid: usize, cur: u64) -> Option<Held> {
        if !self.config.variant.timed() {
            return self.lock_any(cur);
        }
        let window = u64::try_from(self.timed_window().as_nanos()).unwrap_or(u64::MAX);
        let deadline = self.update_start[tid]
            .load(Ordering::Relaxed)
            .saturating_add(window);
        let mut backoff = Backoff::new();
        loop {
            if let Some(h) = self.lock_first_two(cur) {
                return Some(h);
            }
            if self.now_ns() >= deadline {
                bump(&self.stats[tid].timed_fallbacks);
                let held = self.lock_any(cur);
                if mutant!(RedoTimedFallbackWithoutCopy) {
                    if let Some(h) = held.as_ref().filter(|h| h.idx >= 2) {
                        let tail = self.combs[sti::idx(cur)].head.load(Ordering::SeqCst);
                        self.combs[h.idx].head.store(tail, Ordering::SeqCst);
                    }
                }
                return held;
            }
            if cur != self.cur_comb().load(Ordering::SeqCst) {
                crate::trace_ev!(&self.pool, GiveUp(tid));
                return None;
            }
            bump(&self.stats[tid].backoffs);
            backoff.wait();
        }
    }

    /// Statistics of a commit: the replica it designated and its log.
    pub(super) fn note_commit(&self, tid: usize, c: &Combined, writer: &Writer<'_>) {
        // A replica's counter: other threads commit on it too.
        c.commits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if !writer.overflow.get() {
            // This thread's own counter (see `bump`).
            let e = &self.stats[tid].log_entries;
            let r = std::sync::atomic::Ordering::Relaxed;
            e.store(e.load(r).wrapping_add(writer.len.get()), r);
        }
    }

    /// `combs[0]` or `combs[1]`, whichever is not designated and free.
    fn lock_first_two(&self, cur: u64) -> Option<Held> {
        (0..2.min(self.combs.len()))
            .filter(|&i| i != sti::idx(cur))
            .find(|&i| self.combs[i].lock.exclusive_try_lock())
            .map(|i| Held {
                idx: i,
                dirty: std::cell::RefCell::new(self.combs[i].take_dirty()),
            })
    }

    /// The copy proper of [`RedoPtm::copy_designated`]: `used` bytes from
    /// the replica at `src` to the held one at `dst`. RedoOpt uses
    /// non-temporal stores (persisted without write-backs); the others
    /// store and mark the range dirty. Measures the copy for the window.
    pub(super) fn copy_words(&self, src: u64, dst: u64, used: u64, h: &Held) {
        let _t = breakdown::timer(Bucket::Copy);
        let start = Instant::now();
        if self.config.variant.opt() {
            for off in (0..used).step_by(8) {
                let v = word(&self.pool, src + off).load(Ordering::Relaxed);
                word(&self.pool, dst + off).ntstore(v);
            }
        } else {
            for off in (0..used).step_by(8) {
                let v = word(&self.pool, src + off).load(Ordering::Relaxed);
                word(&self.pool, dst + off).store(v, Ordering::Relaxed);
            }
            h.dirty.borrow_mut().add_range(dst, dst + used);
        }
        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let old = self.copy_ns.load(Ordering::Relaxed);
        let avg = if old == 0 { ns } else { (3 * old + ns) / 4 };
        self.copy_ns.store(avg.max(1), Ordering::Relaxed);
    }

    /// L26 (`flushDeferredPWBs`): the held replica's dirty lines, one `pwb`
    /// each, or (RedoOpt, past a tenth of the replica) its whole used part.
    pub(super) fn flush_dirty(&self, h: &Held) {
        let _t = breakdown::timer(Bucket::Flush);
        let base = self.combs[h.idx].replica;
        let mut dirty = h.dirty.borrow_mut();
        if dirty.full_flush_pending() {
            let used = crate::replica::used_len(&self.pool, base, self.replica_len)
                .unwrap_or(self.replica_len);
            if mutant!(RedoOptFullFlushShort) {
                #[cfg(feature = "mutants")]
                dirty.discard();
                self.pool.pwb(base, used / 8);
            } else {
                dirty.add_range(base, base + used);
            }
        }
        dirty.flush(&self.pool);
    }

    /// The `pfence` before the `cur_comb` CAS (timed as flush).
    pub(super) fn fence_before_cas(&self) {
        let _t = breakdown::timer(Bucket::Flush);
        if !self.pool.rmw_completes_flushes() && !mutant!(RedoNoFenceBeforeCas) {
            self.pool.pfence();
        }
    }
}

/// Defines a thin wrapper that runs [`RedoPtm`] as one variant.
macro_rules! variant_wrapper {
    ($(#[$doc:meta])* $name:ident, $variant:expr) => {
        $(#[$doc])*
        pub struct $name<B: Backend>(RedoPtm<B>);

        impl<B: Backend> $name<B> {
            /// Formats `pool` (see [`RedoPtm::create`]) and opens it as this
            /// variant, whatever `config.variant` says.
            pub fn create(
                pool: perdure_pm::Pool<B>,
                config: &super::config::Config,
            ) -> Result<Self, crate::error::PtmError> {
                RedoPtm::create(pool, &Self::config(config)).map($name)
            }

            /// Opens the Redo-PTM pool (written by any variant) as this
            /// variant (see [`RedoPtm::open`]).
            pub fn open(
                pool: perdure_pm::Pool<B>,
                config: &super::config::Config,
            ) -> Result<Self, crate::error::PtmError> {
                RedoPtm::open(pool, &Self::config(config)).map($name)
            }

            /// Opens, or creates if the pool holds none
            /// (see [`RedoPtm::open_or_create`]).
            pub fn open_or_create(
                pool: perdure_pm::Pool<B>,
                config: &super::config::Config,
            ) -> Result<Self, crate::error::PtmError> {
                RedoPtm::open_or_create(pool, &Self::config(config)).map($name)
            }

            fn config(config: &super::config::Config) -> super::config::Config {
                super::config::Config {
                    variant: $variant,
                    ..config.clone()
                }
            }

            /// The underlying [`RedoPtm`].
            pub fn inner(&self) -> &RedoPtm<B> {
                &self.0
            }

            /// Unwraps the underlying [`RedoPtm`].
            pub fn into_inner(self) -> RedoPtm<B> {
                self.0
            }
        }

        impl<B: Backend> std::ops::Deref for $name<B> {
            type Target = RedoPtm<B>;
            fn deref(&self) -> &RedoPtm<B> {
                &self.0
            }
        }

        impl<B: Backend> std::fmt::Debug for $name<B> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }

        impl<B: Backend> crate::front::Sealed for $name<B> {}

        /// The front of the [`RedoPtm`] it runs (so it is a [`crate::Ptm`]).
        impl<B: Backend> crate::front::Front for $name<B> {
            type Tx<'t> = super::tx::Tx<'t, B>;
            type ReadTx<'t> = super::tx::ReadTx<'t, B>;

            fn uid(&self) -> u64 {
                self.0.uid()
            }

            fn tid_pool(&self) -> &crate::front::TidPoolRef {
                self.0.tid_pool()
            }

            fn update_with<R, F>(&self, tid: usize, f: F) -> R
            where
                R: crate::tx::PWord,
                F: for<'t> Fn(&Self::Tx<'t>) -> R + Send + Sync + 'static,
            {
                self.0.update_with(tid, f)
            }

            fn read_with<R, F>(&self, tid: usize, f: F) -> R
            where
                R: crate::tx::PWord,
                F: for<'t> Fn(&Self::ReadTx<'t>) -> R + Send + Sync + 'static,
            {
                self.0.read_with(tid, f)
            }

            fn event_counts(&self) -> Vec<(&'static str, u64)> {
                self.0.event_counts()
            }
        }
    };
}

variant_wrapper!(
    /// RedoTimed-PTM (seed §5, "Timed variant"): [`RedoPtm`] with
    /// [`Variant::Timed`]. Dereferences to the [`RedoPtm`] it runs.
    RedoTimedPtm,
    super::config::Variant::Timed
);

variant_wrapper!(
    /// RedoOpt-PTM (seed §5, "Additional optimizations"): [`RedoPtm`] with
    /// [`Variant::Opt`]. Dereferences to the [`RedoPtm`] it runs.
    RedoOptPtm,
    super::config::Variant::Opt
);
