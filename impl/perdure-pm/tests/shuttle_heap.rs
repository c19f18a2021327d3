//! shuttle: randomized and PCT schedules (seeded, reproducible) of the heap
//! under many threads, through the `sync` facade.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-pm --test shuttle_heap` (`make verify` does). Without the cfg this
//! file is empty. `PERDURE_SHUTTLE_ITERS` sets the schedules per scheduler
//! (default 5,000; 100,000 with `PERDURE_DEPTH=deep`).
//!
//! Each thread stamps every word of the blocks it holds (16 and 32 bytes,
//! two size classes) with its id and the allocation's index, and checks the
//! stamps before freeing: a block handed to two threads at once, or two
//! held blocks that overlap (a set of one class handed out as another's),
//! fail the check.
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
    depth::count("PERDURE_SHUTTLE_ITERS", normal, 100_000)
}

/// Block sizes the threads alternate between: two size classes, so that a
/// set donated to or stolen from the wrong class's global stack hands out
/// blocks of the wrong size, which overlap.
const SIZES: [u64; 2] = [16, 32];

/// Operations per thread: enough frees of each class (a third of the
/// operations, and whenever more than 6 blocks are held) for a thread to
/// complete two sets of a class and donate one.
const OPS: u64 = 48;

/// Fills every word of block `b` (`size` bytes) with `stamp`.
fn stamp(pool: &Pool<NoFlush>, b: u64, size: u64, stamp: u64) {
    for w in (0..size).step_by(8) {
        pool.word(b + w).unwrap().store(stamp, Ordering::Relaxed);
    }
}

/// Checks that every word of block `b` still holds `stamp`.
fn check_stamp(pool: &Pool<NoFlush>, b: u64, size: u64, stamp: u64) {
    for w in (0..size).step_by(8) {
        let v = pool.word(b + w).unwrap().load(Ordering::Relaxed);
        assert_eq!(
            v, stamp,
            "block {b:#x} ({size} bytes), word {w}: {v:#x}, not its holder's stamp {stamp:#x}: the block overlaps another one held"
        );
    }
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
                // (block, size, stamp): the stamp names the thread and the
                // allocation, so two blocks held at once never share one.
                let mut held: Vec<(u64, u64, u64)> = Vec::new();
                for i in 0..OPS {
                    if i % 3 == 2 || held.len() > 6 {
                        let (b, size, st) = held.remove((i as usize) % held.len());
                        check_stamp(&pool, b, size, st);
                        t.free(b).unwrap();
                    } else {
                        let size = SIZES[(i / 3 % 2) as usize];
                        let b = t.alloc(size).unwrap();
                        let st = id << 32 | i;
                        stamp(&pool, b, size, st);
                        held.push((b, size, st));
                    }
                }
                for (b, size, st) in held {
                    check_stamp(&pool, b, size, st);
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
    println!("PERDURE-CHECK {{\"name\":\"shuttle:pm/heap-random\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} random schedules (seed {seed}), 3 threads x {OPS} ops on 2 size classes\",\"detail\":\"no block held by two threads, no two held blocks overlap; no crashes injected\"}}");
}

#[test]
fn pct_schedules_never_share_a_block() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_pct(workload, n, 3);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:pm/heap-pct\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} PCT schedules (depth 3, seed {seed}), 3 threads x {OPS} ops on 2 size classes\",\"detail\":\"no block held by two threads, no two held blocks overlap; no crashes injected\"}}");
}

/// Thread A allocates a chunk's worth of 16-byte blocks and frees them all,
/// completing sets of which its slot keeps one and donates the rest to the
/// global stack; thread B, afterwards, allocates as many blocks as A
/// donated: it takes A's sets from the global stack, and carves no new
/// chunk. A slot that kept its sets (no donation) would make B carve one.
fn donation() {
    let pool = Arc::new(Pool::volatile("shuttle", SIZE, NoFlush).unwrap());
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    // A stays registered, so that B gets a slot of its own (a slot A
    // released would come with A's stack).
    let mut a = heap.register().unwrap();
    let blocks: Vec<u64> = (0..64).map(|_| a.alloc(16).unwrap()).collect();
    for &b in &blocks {
        a.free(b).unwrap();
    }
    let freed = blocks.len() as u64;
    let used = heap.stats().chunks_used;
    let mut b = heap.register().unwrap();
    // A keeps at most two sets of 4 (the one it fills and the one it kept).
    for _ in 0..freed - 8 {
        b.alloc(16).unwrap();
    }
    let after = heap.stats().chunks_used;
    assert_eq!(
        after, used,
        "the second slot carved {} new chunks for blocks the first had freed: its sets were not donated",
        after - used
    );
    drop(a);
}

#[test]
fn freed_sets_reach_other_slots() {
    perdure_pm::sync::seeded::check_random(donation, 1);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:pm/heap-donation\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"1 schedule, 64 blocks freed by one slot, 56 allocated by another\",\"detail\":\"completed sets beyond the slot's kept one reach the global stack and are reused: no new chunk carved\"}}");
}

/// A chunk claim is durable before its blocks are handed out, and a slot
/// reopened after a crash goes on where it was: slot A allocates a block
/// durably (its first, which claims a chunk); in the crash image that keeps
/// only what was guaranteed persisted, the reopened heap's first slot (A's,
/// recovered) carves its next block from A's chunk, and no block of it or of
/// a second slot overlaps A's. A claim whose write-back missed the chunk
/// counter would let a new claim take A's chunk again; a slot that forgot
/// its state would claim a new chunk and leak its own.
fn claims_survive_a_crash() {
    use perdure_pm::sim::{ImageChoice, VolatileFill};
    use perdure_pm::{Sim, SimOptions};
    let pool = Pool::volatile("shuttle-claim", SIZE, Sim::new(SimOptions::default())).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let mut a = heap.register().unwrap();
    let held = a.alloc_durable(16).unwrap();
    let cp = pool.backend().capture();
    let words = cp.materialize(
        &ImageChoice(vec![0; cp.unsettled_lines()]),
        VolatileFill::Zeroed,
    );
    let image = Pool::volatile_from_words(&words, Sim::default()).unwrap();
    let heap = Heap::open(&image, base).unwrap();
    // The slot registered first is A's, recovered: it carves from A's chunk
    // (no new claim) ...
    let chunks = heap.stats().chunks_used;
    let mut first = heap.register().unwrap();
    let next = first.alloc(16).unwrap();
    assert_eq!(
        heap.stats().chunks_used,
        chunks,
        "the recovered slot claimed a new chunk for its next 16-byte block ({next:#x}): its own was lost"
    );
    assert_ne!(next, held, "the recovered slot handed out {held:#x} again");
    // ... and every slot's blocks, those of new claims included, lie apart
    // from A's.
    let mut slots = vec![first, heap.register().unwrap()];
    for t in &mut slots {
        for size in [16u64, 32, 64, 128] {
            for _ in 0..8 {
                let b = t.alloc(size).unwrap();
                assert!(
                    b + size <= held || held + 16 <= b,
                    "block {b:#x} ({size} bytes) after the crash overlaps {held:#x}, allocated durably before it"
                );
            }
        }
    }
}

#[test]
fn chunk_claims_are_durable() {
    perdure_pm::sync::seeded::check_random(claims_survive_a_crash, 1);
}
