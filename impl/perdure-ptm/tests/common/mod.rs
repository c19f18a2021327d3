//! Helpers shared by the Redo-PTM integration tests.

#![allow(dead_code)]

use perdure_pm::{Backend, Pool};
use perdure_ptm::redo::{Config, RedoPtm};

/// A Redo-PTM for `threads` threads on a fresh volatile pool of `size` bytes.
pub fn redo<B: Backend>(threads: usize, size: u64, backend: B) -> RedoPtm<B> {
    let pool = Pool::volatile("redo-test", size, backend).unwrap();
    RedoPtm::create(pool, &config(threads)).unwrap()
}

/// The small test configuration with `threads` threads.
pub fn config(threads: usize) -> Config {
    Config {
        threads,
        ..Config::small()
    }
}

/// Operations per thread in the concurrent tests: fewer in debug builds.
pub fn per_thread(release: u64) -> u64 {
    if cfg!(debug_assertions) {
        release / 10
    } else {
        release
    }
}
