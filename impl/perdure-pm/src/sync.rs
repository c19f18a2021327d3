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
mod imp {
    pub use shuttle::sync::atomic;
    pub use shuttle::sync::{Arc, Mutex, MutexGuard};
    pub use shuttle::thread;

    /// A hint that the caller is spinning; yields to shuttle's scheduler.
    #[inline]
    pub fn spin_loop() {
        shuttle::thread::yield_now();
    }
}

pub use imp::*;

/// Which implementation of the facade this build uses: `"std"`, `"loom"` or
/// `"shuttle"`. Reports and tests print it so a reader knows what ran.
pub const FLAVOUR: &str = if cfg!(perdure_loom) {
    "loom"
} else if cfg!(perdure_shuttle) {
    "shuttle"
} else {
    "std"
};
