//! Allocator throughput, with write-backs and fences per operation.
//!
//! * `heap`: the concurrent persistent heap, each thread alternating
//!   allocations and frees of 64-byte blocks (a window of 1,000 live blocks
//!   per thread), on a pool file, per backend, with 1 and 2 threads.
//! * `region`: the sequential region allocator (in DRAM; its persistence is
//!   the transactional memory's job).
//!
//! An "op" is one alloc or one free. Prints a table and writes
//! `out/bench/alloc.json`. Relate the pwb/pfence columns to
//! `flush_cost`'s per-instruction costs.

use perdure_harness::bench as common;
use perdure_pm::heap::Heap;
use perdure_pm::region::RegionAlloc;
use perdure_pm::stats::{self, FlushCounts};
use perdure_pm::{Backend, Msync, NoFlush, Pmem, Pool};
use std::time::Instant;

const LAYOUT: &str = "bench-alloc";
const POOL: u64 = 256 << 20;

struct Row {
    what: String,
    threads: usize,
    ops: u64,
    mops: f64,
    counts: FlushCounts,
}

fn heap_run<B: Backend>(backend: B, threads: usize, ops_per_thread: u64) -> Row {
    let dir = common::pool_dir();
    let pool = Pool::create_with(dir.path().join("a.pool"), LAYOUT, POOL, backend).expect("pool");
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, POOL - base, 16).expect("heap");
    let t0 = Instant::now();
    let counts: Vec<FlushCounts> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let heap = &heap;
                s.spawn(move || {
                    let mut t = heap.register().expect("slot");
                    let mut live = std::collections::VecDeque::with_capacity(1024);
                    let start = stats::thread_counts();
                    for _ in 0..ops_per_thread / 2 {
                        live.push_back(t.alloc(64).expect("alloc"));
                        if live.len() > 1000 {
                            t.free(live.pop_front().unwrap()).expect("free");
                        }
                    }
                    for b in live.drain(..) {
                        t.free(b).expect("free");
                    }
                    stats::thread_counts() - start
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let secs = t0.elapsed().as_secs_f64();
    let ops = ops_per_thread * threads as u64;
    Row {
        what: format!("heap/{}", pool.backend().name()),
        threads,
        ops,
        mops: ops as f64 / secs / 1e6,
        counts: counts
            .into_iter()
            .fold(FlushCounts::default(), |a, b| a + b),
    }
}

fn region_run(ops: u64) -> Row {
    let mut mem = vec![0u64; (64 << 20) / 8];
    let mut r = RegionAlloc::format(&mut mem).unwrap();
    let mut live = std::collections::VecDeque::with_capacity(1024);
    let t0 = Instant::now();
    for i in 0..ops / 2 {
        live.push_back(r.alloc(16 + (i % 4) * 40).unwrap());
        if live.len() > 1000 {
            r.free(live.pop_front().unwrap()).unwrap();
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    Row {
        what: "region (DRAM)".into(),
        threads: 1,
        ops,
        mops: ops as f64 / secs / 1e6,
        counts: FlushCounts::default(),
    }
}

fn main() {
    let n = if common::quick() { 200_000 } else { 4_000_000 };
    let mut rows = Vec::new();
    for threads in [1, 2] {
        if let Some(p) = Pmem::new() {
            rows.push(heap_run(p, threads, n));
        }
        rows.push(heap_run(Msync, threads, n / 10));
        rows.push(heap_run(NoFlush, threads, n));
    }
    rows.push(region_run(n));
    println!();
    println!("allocator throughput (ops = allocs + frees)");
    println!(
        "{:<22} {:>7} {:>10} {:>9} {:>9} {:>9}",
        "allocator", "threads", "ops", "Mops/s", "pwb/op", "pfence/op"
    );
    for r in &rows {
        let (pwb, pfence, _) = r.counts.per_op(r.ops);
        println!(
            "{:<22} {:>7} {:>10} {:>9.2} {:>9.3} {:>9.4}",
            r.what, r.threads, r.ops, r.mops, pwb, pfence
        );
    }
    let json: Vec<String> = rows
        .iter()
        .map(|r| {
            let (pwb, pfence, psync) = r.counts.per_op(r.ops);
            format!(
                "{{\"allocator\":{},\"threads\":{},\"ops\":{},\"mops\":{:.4},\"pwb_per_op\":{:.4},\"pfence_per_op\":{:.5},\"psync_per_op\":{:.5}}}",
                common::json_str(&r.what),
                r.threads,
                r.ops,
                r.mops,
                pwb,
                pfence,
                psync
            )
        })
        .collect();
    let path = common::out_dir().join("alloc.json");
    std::fs::write(&path, format!("{{\"rows\":[{}]}}\n", json.join(","))).expect("write results");
    println!("wrote {}", path.display());
}
