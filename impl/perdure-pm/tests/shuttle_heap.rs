//! shuttle: randomized and PCT schedules (seeded, reproducible) of the heap
//! under many threads, through the `sync` facade.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-pm --test shuttle_heap` (`make verify` does). Without the cfg this
//! file is empty. `PERDURE_SHUTTLE_ITERS` sets the schedules per scheduler
//! (default 5,000; 100,000 with `PERDURE_DEPTH=deep`).
//!
//! Each thread stamps the blocks it holds with its id and checks the stamp
//! before freeing: a block handed to two threads at once fails the check.
//! The model geometry (4-block sets, one kept set) makes threads complete,
//! donate and steal sets through the global stack within a few operations.

#![cfg(perdure_shuttle)]

use perdure_pm::heap::Heap;
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::sync::{thread, Arc};
use perdure_pm::{NoFlush, Pool};

const SIZE: u64 = 64 << 10;

#[path = "support/depth.rs"]
mod depth;

/// Schedules per test: `PERDURE_SHUTTLE_ITERS`, else 5,000 (200 in the
/// mutation tier, `PERDURE_DEPTH=mutants`: docs/MUTANTS.md).
fn iterations() -> usize {
    let normal = if depth::mutants() { 200 } else { 5000 };
    depth::count("PERDURE_SHUTTLE_ITERS", normal, 5000)
}

fn workload() {
    let pool = Arc::new(Pool::volatile("shuttle", SIZE, NoFlush).unwrap());
    let base = pool.data_offset();
    Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let handles: Vec<_> = (1..=3u64)
        .map(|id| {
            let pool = pool.clone();
            thread::spawn(move || {
                let heap = Heap::open(&pool, base).unwrap();
                let mut t = heap.register().unwrap();
                let mut held = Vec::new();
                for i in 0..24u64 {
                    if i % 3 == 2 || held.len() > 6 {
                        let b: u64 = held.remove((i as usize) % held.len());
                        assert_eq!(
                            pool.word(b).unwrap().load(Ordering::Relaxed),
                            id,
                            "block {b:#x} was handed to another thread"
                        );
                        t.free(b).unwrap();
                    } else {
                        let b = t.alloc(16).unwrap();
                        pool.word(b).unwrap().store(id, Ordering::Relaxed);
                        held.push(b);
                    }
                }
                for b in held {
                    assert_eq!(pool.word(b).unwrap().load(Ordering::Relaxed), id);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn random_schedules_never_share_a_block() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_random(workload, n);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:pm/heap-random\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} random schedules (seed {seed}), 3 threads x 24 ops\",\"detail\":\"no block held by two threads; no crashes injected\"}}");
}

#[test]
fn pct_schedules_never_share_a_block() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_pct(workload, n, 3);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:pm/heap-pct\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} PCT schedules (depth 3, seed {seed}), 3 threads x 24 ops\",\"detail\":\"no block held by two threads; no crashes injected\"}}");
}
