//! Per-thread counters of persistence instructions: `pwb`, `pfence`, `psync`.
//!
//! The field compares persistent constructions by throughput *and* by the
//! number of write-backs and fences they issue per operation, so every
//! backend counts them, always, on every thread. A counter is a thread-local
//! `Cell<u64>`: an increment is a TLS access and an add, with no atomic and
//! no sharing, cheap enough to leave on in production.
//!
//! `pwb` counts cache lines written back (a 200-byte range that spans four
//! lines counts four), `pfence` counts ordering fences and `psync` counts
//! durability barriers, as issued through [`crate::backend::Backend`]'s
//! counted methods.
//!
//! ```
//! use perdure_pm::stats;
//! let before = stats::thread_counts();
//! // ... run operations on this thread ...
//! let spent = stats::thread_counts() - before;
//! assert_eq!(spent.pwb, 0);
//! ```
//!
//! Under loom and shuttle the model checker's threads may share one OS
//! thread, so the counts of a model-checked run are per OS thread, not per
//! model thread; no check depends on them there.

use std::cell::Cell;
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

thread_local! {
    static PWB: Cell<u64> = const { Cell::new(0) };
    static PFENCE: Cell<u64> = const { Cell::new(0) };
    static PSYNC: Cell<u64> = const { Cell::new(0) };
}

/// A snapshot of persistence-instruction counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlushCounts {
    /// Cache lines written back (`clwb`/`clflushopt`/`clflush`, or lines
    /// marked dirty for `msync`).
    pub pwb: u64,
    /// Ordering fences (`sfence`, or an `msync` of the dirty pages).
    pub pfence: u64,
    /// Durability barriers.
    pub psync: u64,
}

impl FlushCounts {
    /// Counts divided by `ops`, for "per operation" reports.
    pub fn per_op(self, ops: u64) -> (f64, f64, f64) {
        let d = ops.max(1) as f64;
        (
            self.pwb as f64 / d,
            self.pfence as f64 / d,
            self.psync as f64 / d,
        )
    }
}

impl FlushCounts {
    /// The counts combined field by field with `f`.
    fn zip(self, rhs: FlushCounts, f: fn(u64, u64) -> u64) -> FlushCounts {
        FlushCounts {
            pwb: f(self.pwb, rhs.pwb),
            pfence: f(self.pfence, rhs.pfence),
            psync: f(self.psync, rhs.psync),
        }
    }
}

impl Sub for FlushCounts {
    type Output = FlushCounts;
    fn sub(self, rhs: FlushCounts) -> FlushCounts {
        self.zip(rhs, u64::wrapping_sub)
    }
}

impl Add for FlushCounts {
    type Output = FlushCounts;
    fn add(self, rhs: FlushCounts) -> FlushCounts {
        self.zip(rhs, u64::wrapping_add)
    }
}

impl AddAssign for FlushCounts {
    fn add_assign(&mut self, rhs: FlushCounts) {
        *self = *self + rhs;
    }
}

impl fmt::Display for FlushCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pwb={} pfence={} psync={}",
            self.pwb, self.pfence, self.psync
        )
    }
}

/// The calling thread's counts since it started (or since its last reset).
pub fn thread_counts() -> FlushCounts {
    FlushCounts {
        pwb: PWB.with(Cell::get),
        pfence: PFENCE.with(Cell::get),
        psync: PSYNC.with(Cell::get),
    }
}

/// Sets the calling thread's counts to zero and returns what they were.
pub fn reset_thread_counts() -> FlushCounts {
    let before = thread_counts();
    PWB.with(|c| c.set(0));
    PFENCE.with(|c| c.set(0));
    PSYNC.with(|c| c.set(0));
    before
}

#[inline]
pub(crate) fn count_pwb(lines: u64) {
    PWB.with(|c| c.set(c.get().wrapping_add(lines)));
}

#[inline]
pub(crate) fn count_pfence() {
    PFENCE.with(|c| c.set(c.get().wrapping_add(1)));
}

#[inline]
pub(crate) fn count_psync() {
    PSYNC.with(|c| c.set(c.get().wrapping_add(1)));
}
