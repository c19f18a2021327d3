//! Table 1 of the seed (§6, "Breakdown of the costs"): where an update
//! transaction's time goes, as per-thread counters of nanoseconds.
//!
//! Built only with the cargo feature `breakdown`. Without it every hook is
//! an empty inline function, [`take`] and [`read`] return zeros, and
//! [`ENABLED`] is false: no clock is read and nothing is stored.
//!
//! The hooks sit in the Redo-PTM family (all three variants) and in the CX
//! core that CX-PTM and CX-PUC share.
//!
//! With it, each thread keeps its own counters (a thread-local, no sharing,
//! no atomics); a benchmark calls [`take`] on each worker thread at the end
//! of a run and sums the results. The buckets follow Table 1's columns:
//!
//! | field | Table 1 | what is timed |
//! | --- | --- | --- |
//! | [`Breakdown::update_ns`], [`Breakdown::updates`] | updateTX | a whole update transaction (`applyUpdate`), from publication to return, and the number of them |
//! | [`Breakdown::apply_ns`] | apply | Redo: replaying other transactions' redo logs onto a replica (Alg. 3 {6}); CX: nothing (CX applies its queue by running the closures, which is `lambda`) |
//! | [`Breakdown::flush_ns`] | flush | issuing the write-backs of a replica's dirty lines, the `pfence` before the `cur_comb` CAS, and `pwb(cur_comb)` + `psync` |
//! | [`Breakdown::copy_ns`] | copy | copying the designated replica into an invalid one |
//! | [`Breakdown::lambda_ns`] | lambda | running closures on a replica: the thread's own and the ones it helps (Alg. 3 L23; CX step 4) |
//! | [`Breakdown::wait_ns`] | sleep | RedoTimed/RedoOpt backoff while the first two replicas are taken, and spinning while waiting for another thread's commit to carry this thread's request |
//!
//! The buckets other than `update_ns` do not nest, so their sum is at most
//! `update_ns`; the rest of an update (the scan of the announce array,
//! `cpySt`, lock attempts, rolling back a lost attempt) is not attributed.
//! Time spent in a bucket outside an update transaction (a read-only
//! transaction that syncs `cur_comb`) is counted too; benchmarks of Table 1
//! run updates only. Timing uses [`std::time::Instant`] (a vDSO clock read,
//! tens of nanoseconds), which the feature's measurements include.

/// Whether this build has the `breakdown` feature (counters are live).
pub const ENABLED: bool = cfg!(feature = "breakdown");

/// The calling thread's counters since its last [`take`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// Update transactions completed.
    pub updates: u64,
    /// Nanoseconds in update transactions, whole.
    pub update_ns: u64,
    /// Nanoseconds replaying redo logs.
    pub apply_ns: u64,
    /// Nanoseconds issuing `pwb`, `pfence` and `psync`.
    pub flush_ns: u64,
    /// Nanoseconds copying replicas.
    pub copy_ns: u64,
    /// Nanoseconds running closures.
    pub lambda_ns: u64,
    /// Nanoseconds backing off or waiting for another thread.
    pub wait_ns: u64,
}

impl Breakdown {
    /// The five Table 1 columns as fractions of `update_ns` (apply, flush,
    /// copy, lambda, wait); zeros when no update was timed.
    pub fn fractions(&self) -> [f64; 5] {
        let total = self.update_ns as f64;
        let f = |x: u64| if total > 0.0 { x as f64 / total } else { 0.0 };
        [
            f(self.apply_ns),
            f(self.flush_ns),
            f(self.copy_ns),
            f(self.lambda_ns),
            f(self.wait_ns),
        ]
    }
}

impl std::ops::Add for Breakdown {
    type Output = Breakdown;
    fn add(self, o: Breakdown) -> Breakdown {
        Breakdown {
            updates: self.updates + o.updates,
            update_ns: self.update_ns + o.update_ns,
            apply_ns: self.apply_ns + o.apply_ns,
            flush_ns: self.flush_ns + o.flush_ns,
            copy_ns: self.copy_ns + o.copy_ns,
            lambda_ns: self.lambda_ns + o.lambda_ns,
            wait_ns: self.wait_ns + o.wait_ns,
        }
    }
}

/// A bucket of [`Breakdown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bucket {
    Apply,
    Flush,
    Copy,
    Lambda,
    Wait,
}

#[cfg(feature = "breakdown")]
mod imp {
    use super::{Breakdown, Bucket};
    use std::cell::Cell;
    use std::time::Instant;

    thread_local! {
        static COUNTS: Cell<Breakdown> = const { Cell::new(Breakdown {
            updates: 0, update_ns: 0, apply_ns: 0, flush_ns: 0, copy_ns: 0, lambda_ns: 0, wait_ns: 0,
        }) };
    }

    fn add(bucket: Option<Bucket>, ns: u64) {
        COUNTS.with(|c| {
            let mut b = c.get();
            match bucket {
                None => {
                    b.updates += 1;
                    b.update_ns += ns;
                }
                Some(Bucket::Apply) => b.apply_ns += ns,
                Some(Bucket::Flush) => b.flush_ns += ns,
                Some(Bucket::Copy) => b.copy_ns += ns,
                Some(Bucket::Lambda) => b.lambda_ns += ns,
                Some(Bucket::Wait) => b.wait_ns += ns,
            }
            c.set(b);
        });
    }

    /// Adds the time until it is dropped to its bucket (`None`: a whole
    /// update).
    pub(crate) struct Timer {
        bucket: Option<Bucket>,
        start: Instant,
    }

    impl Drop for Timer {
        fn drop(&mut self) {
            let ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            add(self.bucket, ns);
        }
    }

    #[inline]
    pub(crate) fn timer(bucket: Bucket) -> Timer {
        Timer {
            bucket: Some(bucket),
            start: Instant::now(),
        }
    }

    #[inline]
    pub(crate) fn update() -> Timer {
        Timer {
            bucket: None,
            start: Instant::now(),
        }
    }

    pub(crate) fn read() -> Breakdown {
        COUNTS.with(|c| c.get())
    }

    pub(crate) fn take() -> Breakdown {
        COUNTS.with(|c| c.replace(Breakdown::default()))
    }
}

#[cfg(not(feature = "breakdown"))]
mod imp {
    use super::{Breakdown, Bucket};

    /// Nothing: the feature is off.
    pub(crate) struct Timer;

    impl Drop for Timer {
        /// Empty (so that hooks may end a timer with `drop` in both builds).
        #[inline(always)]
        fn drop(&mut self) {}
    }

    #[inline(always)]
    pub(crate) fn timer(_bucket: Bucket) -> Timer {
        Timer
    }

    #[inline(always)]
    pub(crate) fn update() -> Timer {
        Timer
    }

    pub(crate) fn read() -> Breakdown {
        Breakdown::default()
    }

    pub(crate) fn take() -> Breakdown {
        Breakdown::default()
    }
}

pub(crate) use imp::{timer, update};

/// Runs `f`, adding its time to `bucket` (nothing more without the
/// feature).
#[inline(always)]
pub(crate) fn timed<R>(bucket: Bucket, f: impl FnOnce() -> R) -> R {
    let _t = timer(bucket);
    f()
}

/// The calling thread's counters, left running.
pub fn read() -> Breakdown {
    imp::read()
}

/// The calling thread's counters, reset to zero.
pub fn take() -> Breakdown {
    imp::take()
}
