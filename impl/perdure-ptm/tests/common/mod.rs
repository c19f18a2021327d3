//! Helpers shared by the integration tests of Redo-PTM and CX.

#![allow(dead_code)]

pub mod changed;
pub mod crash;
pub mod ptms;
pub mod runner;

use perdure_pm::{Backend, Pool};
use perdure_ptm::redo::{Config, RedoPtm, Variant};

/// A Redo-PTM for `threads` threads on a fresh volatile pool of `size` bytes.
pub fn redo<B: Backend>(threads: usize, size: u64, backend: B) -> RedoPtm<B> {
    redo_v(threads, size, backend, Variant::Redo)
}

/// The same, running variant `v` (Redo-PTM, RedoTimed-PTM, RedoOpt-PTM).
pub fn redo_v<B: Backend>(threads: usize, size: u64, backend: B, v: Variant) -> RedoPtm<B> {
    let pool = Pool::volatile("redo-test", size, backend).unwrap();
    RedoPtm::create(pool, &config_v(threads, v)).unwrap()
}

/// The small test configuration with `threads` threads, running `v`.
pub fn config_v(threads: usize, v: Variant) -> Config {
    Config {
        variant: v,
        ..config(threads)
    }
}

/// For each test function `name(v: Variant)` listed, one `#[test]` per
/// Redo variant: `redo::name`, `timed::name`, `opt::name`.
#[allow(unused_macros)]
macro_rules! redo_variant_tests {
    ($($name:ident),* $(,)?) => {
        mod redo {
            $( #[test] fn $name() { super::$name(perdure_ptm::redo::Variant::Redo) } )*
        }
        mod timed {
            $( #[test] fn $name() { super::$name(perdure_ptm::redo::Variant::Timed) } )*
        }
        mod opt {
            $( #[test] fn $name() { super::$name(perdure_ptm::redo::Variant::Opt) } )*
        }
    };
}
#[allow(unused_imports)]
pub(crate) use redo_variant_tests;

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

/// A CX-PTM for `threads` threads on a fresh volatile pool of `size` bytes.
pub fn cx<B: Backend>(threads: usize, size: u64, backend: B) -> perdure_ptm::CxPtm<B> {
    let pool = Pool::volatile("cx-test", size, backend).unwrap();
    perdure_ptm::CxPtm::create(pool, &cx_config(threads)).unwrap()
}

/// The small CX test configuration with `threads` threads.
pub fn cx_config(threads: usize) -> perdure_ptm::cx::Config {
    perdure_ptm::cx::Config {
        threads,
        ..perdure_ptm::cx::Config::small()
    }
}

/// A CX-PUC for `threads` threads holding `T::default()` on a fresh
/// volatile pool of `size` bytes.
pub fn puc<B: Backend, T: perdure_ptm::cx::Plain + Default>(
    threads: usize,
    size: u64,
    backend: B,
) -> perdure_ptm::CxPuc<B, T> {
    let pool = Pool::volatile("cx-test", size, backend).unwrap();
    perdure_ptm::CxPuc::create(pool, &cx_config(threads), T::default()).unwrap()
}

/// Runs `body(i)` on `threads` scoped threads started together; returns
/// the persistence instructions each issued, summed.
pub fn flush_counts_of(
    threads: usize,
    body: impl Fn(usize) + Sync,
) -> perdure_pm::stats::FlushCounts {
    use perdure_pm::stats::{thread_counts, FlushCounts};
    let barrier = std::sync::Barrier::new(threads);
    let counts: Vec<FlushCounts> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let (barrier, body) = (&barrier, &body);
                s.spawn(move || {
                    barrier.wait();
                    let start = thread_counts();
                    body(i);
                    thread_counts() - start
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    counts.iter().fold(FlushCounts::default(), |a, &c| a + c)
}

/// Sets up a counter at root 0 and a 64-line array at root 1, warms up
/// (the first update copies), then measures `n` updates that increment the
/// counter and store to `lines` lines of the array, and `n` reads.
pub fn single_thread_counts<P: perdure_ptm::Ptm>(
    p: &P,
    n: u64,
    lines: u64,
) -> (
    Vec<perdure_pm::stats::FlushCounts>,
    perdure_pm::stats::FlushCounts,
) {
    use perdure_pm::stats::thread_counts;
    use perdure_ptm::{PVar, Transaction, TxRead};
    p.update_tx(|tx| {
        let c = tx.alloc_zeroed(8).unwrap();
        tx.set_root(0, c);
        let a = tx.alloc_zeroed(64 * 64).unwrap();
        tx.set_root(1, a);
    })
    .unwrap();
    p.update_tx(|_| ()).unwrap();
    let mut each = Vec::new();
    for _ in 0..n {
        let before = thread_counts();
        p.update_tx(move |tx| {
            let c = PVar::<u64>::at(tx.root(0));
            let v = tx.get(c) + 1;
            tx.set(c, v);
            for l in 0..lines {
                tx.store(tx.root(1) + 64 * l, v);
            }
        })
        .unwrap();
        each.push(thread_counts() - before);
    }
    let start = thread_counts();
    for _ in 0..n {
        let v: u64 = p.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0)))).unwrap();
        assert!(v > 0);
    }
    (each, thread_counts() - start)
}

/// Checks that `create` refuses each configuration of `bad` with a typed
/// [`perdure_ptm::PtmError::Config`] (no panic) on a fresh pool of `size`
/// bytes.
pub fn assert_refused<C: std::fmt::Debug, P>(
    bad: Vec<C>,
    size: u64,
    create: impl Fn(Pool<perdure_pm::NoFlush>, &C) -> Result<P, perdure_ptm::PtmError>,
) {
    for bad in bad {
        let pool = Pool::volatile("cfg", size, perdure_pm::NoFlush).unwrap();
        assert!(
            matches!(create(pool, &bad), Err(perdure_ptm::PtmError::Config(_))),
            "{bad:?}"
        );
    }
}
