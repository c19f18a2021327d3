//! loom: exhaustive interleavings (C11 memory model, bounded preemptions) of
//! the heap's shared-memory paths through the `sync` facade.
//!
//! Run with `RUSTFLAGS="--cfg perdure_loom" cargo test --release -p perdure-pm
//! --test loom_heap` (`make verify` does). Without the cfg this file is empty.
//!
//! Covered: two threads claiming slots and chunks concurrently (the slot
//! owner CAS, the `next_chunk` CAS) and a hand-over of a completed set
//! through the global Treiber stack. Not covered here: crashes (the
//! simulator's and the TLA+ model's job) and long runs (shuttle's).

#![cfg(perdure_loom)]

use perdure_pm::heap::{Heap, SET_CAPACITY};
use perdure_pm::sync::{thread, Arc};
use perdure_pm::{NoFlush, Pool};

const SIZE: u64 = 32 << 10;

#[path = "support/loom_model.rs"]
mod loom_model;

use loom_model::Preemptions;

/// Setting up a pool and a heap is hundreds of (uncontended) atomic stores,
/// each a loom branch point: raise the branch budget accordingly.
fn model<F: Fn() + Sync + Send + 'static>(name: &str, f: F) {
    // LOOM_MAX_PREEMPTIONS unset: 3 normally, 5 for `make verify DEPTH=deep`.
    let bound = Preemptions::Default { normal: 3, deep: 5 };
    loom_model::check(
        &format!("loom:pm/{name}"),
        bound,
        Some(1_000_000),
        "exhaustive up to the bound; no crashes injected",
        f,
    );
}

fn setup() -> Arc<Pool<NoFlush>> {
    let pool = Pool::volatile("loom", SIZE, NoFlush).unwrap();
    let base = pool.data_offset();
    Heap::format(&pool, base, SIZE - base, 3).unwrap();
    Arc::new(pool)
}

#[test]
fn two_threads_get_distinct_slots_and_blocks() {
    model("heap-slots-and-chunks", || {
        let pool = setup();
        let base = pool.data_offset();
        let spawn = |pool: Arc<Pool<NoFlush>>| {
            thread::spawn(move || {
                let heap = Heap::open(&pool, base).unwrap();
                let mut t = heap.register().unwrap();
                let b = t.alloc(1024).unwrap(); // a whole model chunk's worth of class
                std::mem::forget(t); // keep the slot claimed; skip the flush
                b
            })
        };
        let a = spawn(pool.clone());
        let b = spawn(pool.clone());
        let (x, y) = (a.join().unwrap(), b.join().unwrap());
        assert_ne!(x, y, "two threads were handed the same block");
        let heap = Heap::open(&pool, base).unwrap();
        assert_eq!(heap.stats().slots_in_use, 2);
    });
}

#[test]
fn a_set_donated_by_one_thread_is_allocated_once_by_another() {
    model("heap-global-stack", || {
        let pool = setup();
        let base = pool.data_offset();
        // Thread 1 frees enough blocks to complete two sets, so one is
        // donated to the global stack; thread 2 allocates concurrently.
        let blocks: Vec<u64> = {
            let heap = Heap::open(&pool, base).unwrap();
            let mut t = heap.register().unwrap();
            let v = (0..2 * SET_CAPACITY)
                .map(|_| t.alloc(16).unwrap())
                .collect();
            drop(t);
            v
        };
        let p1 = pool.clone();
        let freer = thread::spawn(move || {
            let heap = Heap::open(&p1, base).unwrap();
            let mut t = heap.register().unwrap();
            for b in blocks {
                t.free(b).unwrap();
            }
            std::mem::forget(t);
        });
        let p2 = pool.clone();
        let taker = thread::spawn(move || {
            let heap = Heap::open(&p2, base).unwrap();
            let mut t = heap.register().unwrap();
            let got: Vec<u64> = (0..2).map(|_| t.alloc(16).unwrap()).collect();
            std::mem::forget(t);
            got
        });
        freer.join().unwrap();
        let got = taker.join().unwrap();
        assert_ne!(got[0], got[1]);
        // Every block the taker holds is gone from the heap: draining all
        // freed blocks never returns one of them.
        let heap = Heap::open(&pool, base).unwrap();
        let mut t = heap.register().unwrap();
        for _ in 0..2 * SET_CAPACITY {
            let b = t.alloc(16).unwrap();
            assert!(
                !got.contains(&b),
                "block {b:#x} handed out while the taker holds it"
            );
        }
    });
}
