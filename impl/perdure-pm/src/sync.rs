//! The `sync` facade: the one place shared-memory primitives come from.
//!
//! Every piece of perdure that touches memory shared between threads imports
//! its atomics, `Arc`, `Mutex` and threads from here, never from `std`
//! directly. Normally they are `std`'s; under `--cfg perdure_loom` they are
//! [loom]'s (exhaustive exploration of the C11 memory model on small cases);
//! under `--cfg perdure_shuttle` they are [shuttle]'s (randomized and PCT
//! schedulers, seeded and reproducible). This is the pattern crossbeam uses
//! with its private `primitive` module, so that the same algorithm code is
//! explored by the model checkers without edits.
//!
//! Persistent memory itself is reached through [`crate::Pool::word`], which
//! under the model-checking configurations hands out facade atomics from an
//! in-memory word array instead of a mapped file (a model checker cannot
//! track accesses to raw mapped memory).
//!
//! The flush counters of [`crate::stats`] deliberately do *not* go through
//! the facade: they are instrumentation, not part of any algorithm.
//!
//! [loom]: https://docs.rs/loom
//! [shuttle]: https://docs.rs/shuttle

/// A value alone on a 128-byte aligned block (two cache lines: x86 cores
/// prefetch lines in adjacent pairs). For per-thread slots that sit side by
/// side in an array and are written by their owner on every operation
/// (announcements, hazard pointers, epoch pins, a thread's LOCAL): unpadded,
/// each write takes the line away from the other threads' cores (false
/// sharing). Layout only; the same type under every configuration.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct CachePadded<T>(pub T);

impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
mod imp {
    pub use std::sync::atomic;
    pub use std::sync::{Arc, Mutex, MutexGuard};
    pub use std::thread;

    /// A hint that the caller is spinning; yields to the model checker's
    /// scheduler under loom and shuttle.
    #[inline]
    pub fn spin_loop() {
        std::hint::spin_loop();
    }
}

#[cfg(perdure_loom)]
mod imp {
    pub use loom::sync::atomic;
    pub use loom::sync::{Arc, Mutex, MutexGuard};
    pub use loom::thread;

    /// A hint that the caller is spinning; yields to loom's scheduler.
    #[inline]
    pub fn spin_loop() {
        loom::thread::yield_now();
    }
}

#[cfg(all(perdure_shuttle, not(perdure_loom)))]
mod tso;

#[cfg(all(perdure_shuttle, not(perdure_loom)))]
mod imp {
    /// Atomics that follow x86-TSO through an installed Px86 simulator
    /// ([`super::with_dram_tso`]); sequentially consistent otherwise.
    pub mod atomic {
        pub use super::super::tso::{
            compiler_fence, fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize,
            Ordering,
        };
    }
    pub use super::tso::{Mutex, MutexGuard};
    pub use shuttle::sync::Arc;

    /// Shuttle's threads; [`thread::spawn`] drains store buffers as a
    /// thread starts and ends (module docs of `sync/tso.rs`).
    pub mod thread {
        pub use super::super::tso::spawn;
        pub use shuttle::thread::*;
    }

    /// A hint that the caller is spinning; drains the caller's store buffer
    /// if a Px86 simulator is installed ([`super::with_dram_tso`]), then
    /// yields to shuttle's scheduler. The drain makes every spinning
    /// thread's stores visible eventually whatever the drain rate, so a
    /// spin-wait never stalls on a store that stays buffered only because
    /// the simulator never chose to drain it (TSO drains every buffer in
    /// finite time); it is stronger than x86's `pause`, never weaker.
    #[inline]
    pub fn spin_loop() {
        super::tso::drain_own();
        shuttle::thread::yield_now();
    }
}

pub use imp::*;

#[cfg(all(perdure_shuttle, not(perdure_loom)))]
pub use tso::{dram_tso_installed, with_dram_tso};

/// Runs `f` with `sim` as the model of the facade's DRAM atomics and
/// mutexes: under `--cfg perdure_shuttle`, a Px86 `sim` gives them store
/// buffers shared with the pool's (`sync/tso.rs`); in other builds the
/// facade's atomics are `std`'s or loom's and this just runs `f`.
#[cfg(not(all(perdure_shuttle, not(perdure_loom))))]
pub fn with_dram_tso<R>(sim: &crate::Sim, f: impl FnOnce() -> R) -> R {
    let _ = sim;
    f()
}

/// Whether [`with_dram_tso`] installed a simulator on this thread (never,
/// outside the shuttle build).
#[cfg(not(all(perdure_shuttle, not(perdure_loom))))]
pub fn dram_tso_installed() -> bool {
    false
}

/// Which implementation of the facade this build uses: `"std"`, `"loom"` or
/// `"shuttle"`. Reports and tests print it so a reader knows what ran.
pub const FLAVOUR: &str = if cfg!(perdure_loom) {
    "loom"
} else if cfg!(perdure_shuttle) {
    "shuttle"
} else {
    "std"
};

/// Seeded shuttle runs for the `shuttle_*` tests, so that a failure in CI can
/// be replayed and two runs of the same tree explore the same schedules.
///
/// The seed is `PERDURE_SHUTTLE_SEED` (a number), else [`DEFAULT_SEED`];
/// `PERDURE_SHUTTLE_SEED=random` draws one from the OS and prints it, for
/// runs meant to widen the search (`make verify DEPTH=deep` leaves the
/// choice to the caller). A failing schedule is printed by shuttle and can
/// also be replayed with `shuttle::replay`.
#[cfg(all(perdure_shuttle, not(perdure_loom)))]
pub mod seeded {
    use shuttle::scheduler::{PctScheduler, RandomScheduler};

    /// The seed when `PERDURE_SHUTTLE_SEED` is unset.
    pub const DEFAULT_SEED: u64 = 1;

    /// The seed of this run (see the module docs). Panics with what to do on
    /// an unparsable `PERDURE_SHUTTLE_SEED`.
    pub fn seed() -> u64 {
        static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        *SEED.get_or_init(read_seed)
    }

    fn read_seed() -> u64 {
        match std::env::var("PERDURE_SHUTTLE_SEED") {
            Err(_) => DEFAULT_SEED,
            Ok(s) if s == "random" => {
                // The clock and the address of a fresh allocation: enough to
                // differ between runs without a dependency.
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                let a = Box::new(0u8);
                let s = t ^ (std::ptr::from_ref(&*a) as u64).rotate_left(32);
                eprintln!("PERDURE_SHUTTLE_SEED=random: seed {s}");
                s
            }
            Ok(s) => s.trim().parse().unwrap_or_else(|_| {
                panic!("PERDURE_SHUTTLE_SEED={s:?}: expected a number or \"random\"")
            }),
        }
    }

    /// `n` random schedules of `f` from [`seed`].
    pub fn check_random<F: Fn() + Send + Sync + 'static>(f: F, n: usize) {
        let runner = shuttle::Runner::new(
            RandomScheduler::new_from_seed(seed(), n),
            shuttle::Config::new(),
        );
        runner.run(f);
    }

    /// `n` PCT schedules of `f` (bug depth `depth`) from [`seed`].
    pub fn check_pct<F: Fn() + Send + Sync + 'static>(f: F, n: usize, depth: usize) {
        let runner = shuttle::Runner::new(
            PctScheduler::new_from_seed(seed(), depth, n),
            shuttle::Config::new(),
        );
        runner.run(f);
    }
}
