//! The hash tables of seed 001, §7.2, PiBench-style: Clevel-mmt against the
//! non-detectable Clevel on the same table (`ds::clevel`'s `*_plain`
//! operations), SOFT-mmt against SOFT (`ds::soft`'s `*_plain` operations),
//! and RELAX's hash table of Harris lists (`perdure_relax::ds::HashTable`,
//! `HybridAtomicPointer` tracking) beside them, with write-backs and fences
//! per operation, tail latency, and Clevel's load factor as the table grows.
//!
//! * Phases, each timed on its own, on one fresh table per table kind and
//!   thread count, in this order (PiBench: inserts into an empty table, then
//!   the measuring phases on the loaded table):
//!   *insert* (`n` distinct uniform keys, split over the threads; a thread
//!   that finds Clevel's bottom level to be drained runs the rehash itself,
//!   as Clevel's rehashing thread would), *search-hit* (`n` lookups of
//!   inserted keys), *search-hit-root* (the same lookups, each a root
//!   operation of the detectable tables: what recording a lookup's result
//!   durably costs; the baselines run their plain lookup again),
//!   *search-miss* (`n` of absent keys), *mix-50* (`n`
//!   operations, half inserts of new keys, half lookups of inserted ones),
//!   then the same with Zipfian keys (θ = 0.99, the hot ranks scattered over
//!   the keys): *search-hit-zipf*, *mix-50-zipf* (the inserts are of new
//!   keys, the lookups Zipfian), *delete-zipf* (`n` deletes of Zipfian keys:
//!   a hot key is removed once, its later deletes miss), and last *delete*
//!   (every key of the insert phase once; those the Zipfian deletes removed
//!   miss). The `hit` column says which share of a phase's operations found
//!   (lookup, delete) or added (insert) their key.
//! * `n`: 200,000 (`PERDURE_BENCH_QUICK=1`: 20,000; `PERDURE_BENCH_FULL=1`:
//!   2,000,000); threads 1 and 2 (`PERDURE_BENCH_THREADS`). Every point
//!   runs `PERDURE_BENCH_REPS` times (3; quick: 1), the tables interleaved
//!   round by round, and each phase reports the round with its median
//!   throughput (its latencies and counts are that round's).
//! * Backend: `Pmem` (real `clwb`/`clflushopt` + `sfence`) on a pool file in
//!   `/dev/shm` (`PERDURE_BENCH_DIR`); without persistent memory the flushes
//!   reach DRAM, so their cost here is the instructions', not Optane's.
//! * A Clevel-mmt or SOFT-mmt insert or delete is a root operation
//!   (`Handle::run_root`), as an application runs it; their lookups have no
//!   memento (as in the seed: a lookup has no effect and is re-run after a
//!   crash), so they run in a critical section, except in
//!   *search-hit-root*; a Clevel or SOFT
//!   operation is one reclamation critical section
//!   (`Handle::critical_section`); a RELAX operation is one of its critical
//!   sections. SOFT does not resize and a `SoftTable` has at most 4,096
//!   buckets, so SOFT and SOFT-mmt run on `n / 8192` tables of 4,096
//!   buckets (two keys per bucket once loaded), sharded by key (a re-run
//!   after a crash picks the same table: the key's); RELAX's table is a set
//!   (no values) on `n / 8190` tables of 4,095 buckets, at most 64 (a
//!   space's roots; as `perdure-relax`'s own bench).
//!
//! Each phase reports ops/s, µs per operation per thread, p50/p90/p99/p99.9/
//! p99.99 latency (a timer around each operation), write-backs and fences
//! per operation. The load-factor curve is a separate single-threaded fill
//! of Clevel-mmt and Clevel, sampled 100 times. Then the seed's relations
//! (§7.2) are checked against the measured numbers and printed with their
//! ratios: detectable tables slower on insert and delete, as fast on
//! searches, with similar tail latency; Clevel-mmt's load factor equal to
//! Clevel's.
//!
//! Writes `hash.json`, `hash-throughput-<T>t.svg` (Figure 7's form, one per
//! thread count), `hash-latency-<phase>.svg` (Figure 6's form, at the
//! largest thread count) and `hash-load-factor.svg` to `out/bench/`, and
//! prints a table.

use perdure_harness::bench::{self as common, Histogram, Rng};
use perdure_harness::svg;
use perdure_memento::ds::clevel::{ClevelMmt, ClevelOp, ClevelTable};
use perdure_memento::ds::soft::{self, SoftMmt, SoftOp, SoftTable};
use perdure_memento::{ClockKind, Config, Handle, Memento, Runtime};
use perdure_pm::stats::{self, FlushCounts};
use perdure_pm::{Pmem, Pool};
use perdure_relax::ds::HashTable;
use std::time::Instant;

const BASE: u64 = 4096;
const LAYOUT: &str = "bench-hash";
/// The latency quantiles reported (and plotted).
const QUANTILES: [f64; 5] = [0.5, 0.9, 0.99, 0.999, 0.9999];

/// One operation of the benchmark.
#[derive(Clone, Copy)]
enum Op {
    Insert(u64, u64),
    /// A lookup in a critical section: how a detectable table's lookup runs
    /// (it has no memento, as in the seed: no effect, re-run after a crash).
    Lookup(u64),
    /// A lookup as a root operation of a detectable table (its result
    /// recorded durably); a plain lookup on the other tables.
    LookupRoot(u64),
    Delete(u64),
}

impl Op {
    fn key(self) -> u64 {
        match self {
            Op::Insert(k, _) | Op::Lookup(k) | Op::LookupRoot(k) | Op::Delete(k) => k,
        }
    }
}

/// One thread's access to a table under test.
trait Worker {
    /// Runs `op`: whether it added (insert), found (lookup) or removed
    /// (delete) its key.
    fn op(&mut self, op: Op) -> bool;
    /// Rehash if the table asks for it (Clevel's rehashing thread).
    fn upkeep(&mut self) {}
}

/// Clevel-mmt (`MMT`: every operation a root operation) or Clevel without
/// mementos (one critical section each), on one table.
struct ClevelWorker<'a, 'p, const MMT: bool> {
    h: Handle<'a, 'p, Pmem, ClevelMmt>,
    t: &'a ClevelTable,
}

impl<const MMT: bool> ClevelWorker<'_, '_, MMT> {
    fn run(&mut self, op: ClevelOp) -> bool {
        let t = self.t;
        let h = &mut self.h;
        if MMT {
            return h
                .run_root(|h, m, _| t.run(h, m, op).expect("operation"))
                .result
                != 0;
        }
        match op {
            ClevelOp::Insert(k, v) => t.insert_plain(k, v, h).expect("insert"),
            ClevelOp::Lookup(k) => t.lookup_plain(k, h).is_some(),
            ClevelOp::Delete(k) => t.delete_plain(k, h).expect("delete"),
            ClevelOp::Resize => t.resize_plain(h).expect("resize") != 0,
        }
    }
}

impl<const MMT: bool> Worker for ClevelWorker<'_, '_, MMT> {
    fn op(&mut self, op: Op) -> bool {
        self.run(match op {
            Op::Insert(k, v) => ClevelOp::Insert(k, v),
            Op::Lookup(k) => return self.t.lookup_plain(k, &mut self.h).is_some(),
            Op::LookupRoot(k) => ClevelOp::Lookup(k),
            Op::Delete(k) => ClevelOp::Delete(k),
        })
    }
    fn upkeep(&mut self) {
        if self.t.needs_resize(&mut self.h) {
            self.run(ClevelOp::Resize);
        }
    }
}

/// SOFT-mmt (`MMT`) or SOFT, sharded by key over several tables (a
/// re-run after a crash picks the same shard: it is the key's).
struct SoftWorker<'a, 'p, const MMT: bool> {
    h: Handle<'a, 'p, Pmem, SoftMmt>,
    shards: &'a [SoftTable],
}

/// The shard of `key` among `n`: Fibonacci hashing of a mixed key,
/// independent of the tables' own bucket hashes.
fn shard_of(key: u64, n: usize) -> usize {
    let z = (key ^ (key >> 31)).wrapping_mul(0xd6e8_feb8_6659_fd93);
    ((u128::from(z) * n as u128) >> 64) as usize
}

/// Shards of `cap` buckets for `n` keys: two keys per bucket once loaded.
fn shards_for(n: u64, cap: u64, max: u64) -> u64 {
    (n / 2).div_ceil(cap).clamp(1, max)
}

impl<const MMT: bool> Worker for SoftWorker<'_, '_, MMT> {
    fn op(&mut self, op: Op) -> bool {
        let key = op.key();
        let t = &self.shards[shard_of(key, self.shards.len())];
        let h = &mut self.h;
        if MMT {
            let op = match op {
                Op::Insert(k, v) => SoftOp::Insert(k, v),
                Op::Lookup(k) => return t.lookup_plain(k, h).expect("lookup").is_some(),
                Op::LookupRoot(k) => SoftOp::Lookup(k),
                Op::Delete(k) => SoftOp::Delete(k),
            };
            return h
                .run_root(|h, m, _| t.run(h, m, op).expect("operation"))
                .result
                != 0;
        }
        match op {
            Op::Insert(k, v) => t.insert_plain(k, v, h).expect("insert"),
            Op::Lookup(k) | Op::LookupRoot(k) => t.lookup_plain(k, h).expect("lookup").is_some(),
            Op::Delete(k) => t.delete_plain(k, h).expect("delete"),
        }
    }
}

/// RELAX's hash table, sharded by key over several tables.
struct RelaxWorker<'s, 'p> {
    h: perdure_relax::Handle<'s, 'p, Pmem>,
    shards: &'s [HashTable],
}

impl Worker for RelaxWorker<'_, '_> {
    fn op(&mut self, op: Op) -> bool {
        let key = op.key();
        let t = self.shards[shard_of(key, self.shards.len())];
        let h = &mut self.h;
        match op {
            Op::Insert(..) => t.insert(h, key),
            Op::Lookup(_) | Op::LookupRoot(_) => t.contains(h, key),
            Op::Delete(_) => t.remove(h, key),
        }
        .expect("operation")
    }
}

/// The tables, by name, with their runners.
const TABLES: [(&str, Point); 5] = [
    ("Clevel-mmt", clevel_point::<true>),
    ("Clevel", clevel_point::<false>),
    ("SOFT-mmt", soft_point::<true>),
    ("SOFT", soft_point::<false>),
    ("RELAX-hash", relax_point),
];

/// A point's runner: keys, threads, backend → each phase's tally and the
/// load factor after the inserts (for a table that has one).
type Point = fn(u64, usize, Pmem) -> (Vec<Tally>, Option<f64>);

/// The phases, in the order they run: name, key distribution of the keys
/// it looks up or deletes.
const PHASES: [(&str, Dist); 9] = [
    ("insert", Dist::Uniform),
    ("search-hit", Dist::Uniform),
    ("search-hit-root", Dist::Uniform),
    ("search-miss", Dist::Uniform),
    ("mix-50", Dist::Uniform),
    ("search-hit-zipf", Dist::Zipf),
    ("mix-50-zipf", Dist::Zipf),
    ("delete-zipf", Dist::Zipf),
    ("delete", Dist::Uniform),
];

#[derive(Clone, Copy, PartialEq)]
enum Dist {
    Uniform,
    Zipf,
}

/// Zipfian ranks in `[0, n)` with exponent `theta` (Gray et al., "Quickly
/// generating billion-record synthetic databases", SIGMOD 1994; YCSB's
/// generator).
struct Zipf {
    n: f64,
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
}

impl Zipf {
    fn new(n: u64, theta: f64) -> Zipf {
        let zeta = |m: u64| (1..=m).map(|i| 1.0 / (i as f64).powf(theta)).sum::<f64>();
        let zetan = zeta(n);
        Zipf {
            n: n as f64,
            theta,
            zetan,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta(2) / zetan),
        }
    }

    fn rank(&self, r: &mut Rng) -> u64 {
        let u = r.unit();
        let uz = u * self.zetan;
        if uz < 1.0 {
            0
        } else if uz < 1.0 + 0.5f64.powf(self.theta) {
            1
        } else {
            ((self.n * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64)
                .min(self.n as u64 - 1)
        }
    }
}

/// One phase's totals over the threads.
#[derive(Default, Clone)]
struct Tally {
    ops: u64,
    hits: u64,
    secs: f64,
    counts: FlushCounts,
    hist: Histogram,
}

/// The key of index `i` (distinct for distinct `i`, never 0: RELAX's
/// sentinels hold key 0; absent keys have the top bit set).
fn key(i: u64) -> u64 {
    let mut r = Rng::new(i);
    (r.next() >> 1).max(1)
}

/// The operation `i` of `phase` (thread range `[lo, lo + per)` of `total`
/// inserted keys).
fn phase_op(phase: &str, i: u64, total: u64, zipf: &Zipf, rng: &mut Rng) -> Op {
    // A Zipfian rank's key among the inserted ones: hot ranks scattered.
    let mut hot = || key(Rng::new(zipf.rank(rng)).next() % total);
    match phase {
        "insert" => Op::Insert(key(i), i),
        "search-hit" => Op::Lookup(key(i)),
        "search-hit-root" => Op::LookupRoot(key(i)),
        "search-miss" => Op::Lookup(key(i) | 1 << 63),
        // Half inserts of new keys, half lookups of inserted ones.
        "mix-50" if i % 2 == 0 => Op::Insert(key(total + i), i),
        "mix-50" => Op::Lookup(key(i)),
        "search-hit-zipf" => Op::Lookup(hot()),
        "mix-50-zipf" if i % 2 == 0 => Op::Insert(key(2 * total + i), i),
        "mix-50-zipf" => Op::Lookup(hot()),
        "delete-zipf" => Op::Delete(hot()),
        _ => Op::Delete(key(i)),
    }
}

/// Runs every phase on `threads` threads; `worker(t)` makes thread `t`'s
/// worker (inside the thread); `load_factor` is read after the inserts.
fn drive<W: Worker>(
    n: u64,
    threads: usize,
    worker: &(dyn Fn(usize) -> W + Sync),
    load_factor: &dyn Fn() -> Option<f64>,
) -> (Vec<Tally>, Option<f64>) {
    let per = n / threads as u64;
    let total = per * threads as u64;
    let zipf = Zipf::new(total, 0.99);
    let mut tallies = Vec::new();
    let mut lf = None;
    for (phase, _) in PHASES {
        let barrier = std::sync::Barrier::new(threads);
        let results: Vec<Tally> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|ti| {
                    let (barrier, zipf) = (&barrier, &zipf);
                    s.spawn(move || {
                        let mut w = worker(ti);
                        let lo = ti as u64 * per;
                        let mut rng = Rng::new(0x21cf + ti as u64);
                        let mut hist = Histogram::new();
                        let mut hits = 0;
                        barrier.wait();
                        let c0 = stats::thread_counts();
                        let t0 = Instant::now();
                        for i in lo..lo + per {
                            let op = phase_op(phase, i, total, zipf, &mut rng);
                            let o0 = Instant::now();
                            hits += u64::from(w.op(op));
                            hist.record(o0.elapsed().as_nanos() as u64);
                            if phase == "insert" && i % 1024 == 0 {
                                w.upkeep();
                            }
                        }
                        Tally {
                            ops: per,
                            hits,
                            secs: t0.elapsed().as_secs_f64(),
                            counts: stats::thread_counts() - c0,
                            hist,
                        }
                    })
                })
                .collect();
            hs.into_iter().map(|x| x.join().expect("thread")).collect()
        });
        let mut tally = Tally::default();
        for r in results {
            tally.ops += r.ops;
            tally.hits += r.hits;
            tally.secs = tally.secs.max(r.secs);
            tally.counts += r.counts;
            tally.hist.merge(&r.hist);
        }
        if phase == "insert" {
            lf = load_factor();
        }
        tallies.push(tally);
    }
    (tallies, lf)
}

/// A pool file with a Memento runtime for `threads` workers (plus the
/// creating handle, thread id 1, which the workers reuse).
fn memento_pool<M: Memento + 'static>(
    dir: &tempfile::TempDir,
    n: u64,
    threads: usize,
    pmem: Pmem,
) -> (Pool<Pmem>, Config) {
    // Items and PM nodes (up to 2n keys: the inserts and the mixes' new
    // ones), levels, a chunk per class and thread, and the doubling chain.
    let cfg = Config {
        threads,
        heap_bytes: (n * 256).max(64 << 20),
        clock: ClockKind::Tsc,
    };
    let size = BASE + Runtime::<Pmem, M>::required_bytes(&cfg);
    let path = dir.path().join("hash.pool");
    (
        Pool::create_with(&path, LAYOUT, size, pmem).expect("pool"),
        cfg,
    )
}

fn clevel_point<const MMT: bool>(n: u64, threads: usize, pmem: Pmem) -> (Vec<Tally>, Option<f64>) {
    let dir = tempfile::tempdir_in(common::bench_dir()).expect("a directory for the pool");
    let (pool, cfg) = memento_pool::<ClevelMmt>(&dir, n, threads, pmem);
    let rt = Runtime::<Pmem, ClevelMmt>::create(&pool, BASE, &cfg).expect("runtime");
    let t = ClevelTable::create(&mut rt.handle(1).expect("handle"), 1024, 8).expect("table");
    let worker = |ti: usize| ClevelWorker::<MMT> {
        h: rt.handle(ti + 1).expect("handle"),
        t: &t,
    };
    let lf = || Some(t.stats(&pool).expect("stats").load_factor());
    drive(n, threads, &worker, &lf)
}

fn soft_point<const MMT: bool>(n: u64, threads: usize, pmem: Pmem) -> (Vec<Tally>, Option<f64>) {
    let dir = tempfile::tempdir_in(common::bench_dir()).expect("a directory for the pool");
    let (pool, cfg) = memento_pool::<SoftMmt>(&dir, n, threads, pmem);
    let rt = Runtime::<Pmem, SoftMmt>::create(&pool, BASE, &cfg).expect("runtime");
    let tables: Vec<SoftTable> = {
        let mut h = rt.handle(1).expect("handle");
        (0..shards_for(n, soft::MAX_BUCKETS, 1024))
            .map(|_| SoftTable::create(&mut h, soft::MAX_BUCKETS).expect("table"))
            .collect()
    };
    let worker = |ti: usize| SoftWorker::<MMT> {
        h: rt.handle(ti + 1).expect("handle"),
        shards: &tables,
    };
    drive(n, threads, &worker, &|| None)
}

fn relax_point(n: u64, threads: usize, pmem: Pmem) -> (Vec<Tally>, Option<f64>) {
    use perdure_relax::{Config, OpenOptions, Space, Tracking};
    let dir = tempfile::tempdir_in(common::bench_dir()).expect("a directory for the pool");
    const CAP: u64 = perdure_relax::ds::hash::MAX_BUCKETS as u64;
    let shards = shards_for(n, CAP, 64);
    let cfg = Config {
        threads: threads + 1,
        roots: 64,
        // A list node per key (up to 2n), the bucket arrays and sentinels.
        heap_bytes: (n * 2 * 64 + (96 << 20)).next_multiple_of(1 << 20),
        msb_sequences: false,
    };
    let size = 2 * 4096 + Space::<Pmem>::required_bytes(&cfg) + (1 << 20);
    let pool = Pool::create_with(dir.path().join("relax.pool"), LAYOUT, size, pmem).expect("pool");
    let base = pool.data_offset().next_multiple_of(4096);
    let sp = Space::create(&pool, base, &cfg, OpenOptions::new(Tracking::Hybrid)).expect("space");
    let tables: Vec<HashTable> = {
        let mut h = sp.handle().expect("handle");
        (0..shards as usize)
            .map(|i| HashTable::create(&mut h, i, CAP as usize).expect("table"))
            .collect()
    };
    let worker = |_: usize| RelaxWorker {
        h: sp.handle().expect("handle"),
        shards: &tables,
    };
    drive(n, threads, &worker, &|| None)
}

/// Clevel's load factor while one thread inserts `n` keys into an empty
/// table (`MMT`: Clevel-mmt), sampled 100 times: (keys inserted, load factor).
fn load_curve<const MMT: bool>(n: u64, pmem: Pmem) -> Vec<(f64, f64)> {
    let dir = tempfile::tempdir_in(common::bench_dir()).expect("a directory for the pool");
    let (pool, cfg) = memento_pool::<ClevelMmt>(&dir, n, 1, pmem);
    let rt = Runtime::<Pmem, ClevelMmt>::create(&pool, BASE, &cfg).expect("runtime");
    let t = ClevelTable::create(&mut rt.handle(1).expect("handle"), 1024, 8).expect("table");
    let mut w = ClevelWorker::<MMT> {
        h: rt.handle(1).expect("handle"),
        t: &t,
    };
    let step = (n / 100).max(1);
    let mut curve = Vec::new();
    for i in 0..n {
        w.op(Op::Insert(key(i), i));
        if i % 1024 == 0 {
            w.upkeep();
        }
        if (i + 1) % step == 0 {
            let lf = t.stats(&pool).expect("stats").load_factor();
            curve.push(((i + 1) as f64, lf));
        }
    }
    curve
}

/// One measured point: table, threads, phase index, its tally, the load factor.
struct Row {
    table: &'static str,
    threads: usize,
    phase: usize,
    tally: Tally,
}

impl Row {
    fn ops_s(&self) -> f64 {
        self.tally.ops as f64 / self.tally.secs
    }
    fn q(&self, q: f64) -> f64 {
        self.tally.hist.quantile(q)
    }
}

fn find<'r>(rows: &'r [Row], table: &str, threads: usize, phase: &str) -> Option<&'r Row> {
    rows.iter()
        .find(|r| r.table == table && r.threads == threads && PHASES[r.phase].0 == phase)
}

/// The seed's relations (§7.2), checked on the measured rows at `threads`:
/// each a line "holds" / "does not hold" with the ratios behind it.
fn relations(rows: &[Row], threads: usize, lf: &[(&str, f64)]) -> Vec<String> {
    let mut out = Vec::new();
    let verdict = |ok: bool| if ok { "holds" } else { "does not hold" };
    // A claim's verdict with the ratios behind it.
    let line = |claim: &str, pairs: &[(&str, f64)], ok: bool| {
        let list: Vec<String> = pairs.iter().map(|(p, r)| format!("{p} {r:.2}x")).collect();
        format!("{claim}: {} ({})", verdict(ok), list.join(", "))
    };
    for (det, base) in [("Clevel-mmt", "Clevel"), ("SOFT-mmt", "SOFT")] {
        // `of(det's row, base's row)` for each phase both tables ran.
        let pairs = |phases: &[&'static str], of: fn(&Row, &Row) -> f64| -> Vec<(&str, f64)> {
            phases
                .iter()
                .filter_map(|&p| {
                    Some((
                        p,
                        of(find(rows, det, threads, p)?, find(rows, base, threads, p)?),
                    ))
                })
                .collect()
        };
        let speed = |a: &Row, b: &Row| a.ops_s() / b.ops_s();
        let upd = pairs(&["insert", "delete"], speed);
        out.push(line(
            &format!("{det} slower than {base} on insert and delete (\"incur overhead\")"),
            &upd,
            upd.iter().all(|&(_, r)| r < 1.0),
        ));
        let srch = pairs(&["search-hit", "search-miss", "search-hit-zipf"], speed);
        out.push(line(
            &format!("{det} as fast as {base} on searches (\"similar throughput\", read here as within 0.8x-1.25x)"),
            &srch,
            srch.iter().all(|&(_, r)| (0.8..=1.25).contains(&r)),
        ));
        if let Some(&(_, r)) = pairs(&["search-hit-root"], speed).first() {
            out.push(format!(
                "{det}'s lookup as a root operation: {r:.2}x {base}'s lookup (no relation in the seed, whose lookups are not root operations)"
            ));
        }
        let tails = pairs(&["insert", "search-hit", "delete"], |a, b| {
            a.q(0.99) / b.q(0.99).max(1e-3)
        });
        out.push(line(
            &format!("{det} p99 latency similar to {base}'s (\"similar tail latencies\", read here as at most 1.5x)"),
            &tails,
            tails.iter().all(|&(_, r)| r <= 1.5),
        ));
    }
    let get = |name: &str| lf.iter().find(|x| x.0 == name).map(|x| x.1);
    if let (Some(a), Some(b)) = (get("Clevel-mmt"), get("Clevel")) {
        out.push(format!(
            "Clevel-mmt's load factor \"almost the same\" as Clevel's (within 0.02): {} ({a:.3} vs {b:.3})",
            verdict((a - b).abs() <= 0.02)
        ));
    }
    out
}

/// A phase's label under a bar group (the full names do not fit).
fn short(phase: &str) -> &str {
    match phase {
        "search-hit" => "hit",
        "search-hit-root" => "hit root",
        "search-miss" => "miss",
        "mix-50" => "mix",
        "search-hit-zipf" => "hit Z",
        "mix-50-zipf" => "mix Z",
        "delete-zipf" => "del Z",
        other => other,
    }
}

fn write_plots(rows: &[Row], threads: &[usize], curves: &[(&str, Vec<(f64, f64)>)]) {
    let out = common::out_dir();
    let names: Vec<&str> = TABLES.iter().map(|t| t.0).collect();
    for &th in threads {
        let groups: Vec<String> = PHASES.iter().map(|p| short(p.0).to_string()).collect();
        let series: Vec<(String, Vec<f64>)> = names
            .iter()
            .map(|&name| {
                let vals = PHASES
                    .iter()
                    .map(|p| find(rows, name, th, p.0).map_or(0.0, |r| r.ops_s() / 1e6))
                    .collect();
                (name.to_string(), vals)
            })
            .collect();
        let title = format!("hash tables, {th} thread(s): throughput by phase (Z: Zipfian)");
        let doc = svg::bar_chart(&title, "M ops/s", &groups, &series);
        std::fs::write(out.join(format!("hash-throughput-{th}t.svg")), doc).expect("write a plot");
    }
    let th = *threads.iter().max().expect("a thread count");
    for phase in ["insert", "search-hit", "delete"] {
        let series: Vec<svg::Series> = names
            .iter()
            .filter_map(|&name| {
                let r = find(rows, name, th, phase)?;
                Some(svg::Series {
                    name: name.to_string(),
                    points: QUANTILES.iter().map(|&q| (100.0 * q, r.q(q))).collect(),
                })
            })
            .collect();
        let title = format!("hash tables, {th} thread(s): {phase} latency by percentile");
        let doc = svg::line_chart_log(&title, "percentile", "latency (µs)", &series);
        std::fs::write(out.join(format!("hash-latency-{phase}.svg")), doc).expect("write a plot");
    }
    let series: Vec<svg::Series> = curves
        .iter()
        .map(|(name, pts)| svg::Series {
            name: name.to_string(),
            points: pts.clone(),
        })
        .collect();
    let doc = svg::line_chart_xy(
        "Clevel's load factor while one thread fills it",
        "keys inserted",
        "load factor",
        &series,
    );
    std::fs::write(out.join("hash-load-factor.svg"), doc).expect("write a plot");
}

fn main() {
    let n: u64 = if common::full() {
        2_000_000
    } else if common::quick() {
        20_000
    } else {
        200_000
    };
    let threads = common::settings_or_exit("hash", common::thread_counts(2));
    let pmem = common::settings_or_exit("hash", common::pmem());
    let reps = common::settings_or_exit("hash", common::env_value::<usize>("PERDURE_BENCH_REPS"))
        .unwrap_or(if common::quick() { 1 } else { 3 })
        .max(1);
    println!(
        "hash tables, {n} keys, {reps} round(s), Pmem in {}",
        common::bench_dir().display()
    );
    println!(
        "{:<11} {:>2} {:<15} {:>10} {:>8} {:>5} {:>7} {:>7} {:>7} {:>8} {:>8} {:>6} {:>6} {:>5}",
        "table",
        "T",
        "phase",
        "ops/s",
        "us/op",
        "hit",
        "p50 us",
        "p90 us",
        "p99 us",
        "p99.9 us",
        "p99.99",
        "pwb",
        "pfence",
        "load"
    );
    // Every point `reps` times, the tables interleaved round by round; each
    // phase keeps the round with its median throughput.
    let mut runs: Vec<Vec<(Vec<Tally>, Option<f64>)>> =
        vec![Vec::new(); TABLES.len() * threads.len()];
    for rep in 0..reps {
        eprintln!("hash: round {}/{reps}", rep + 1);
        for (ti, (_, run)) in TABLES.iter().enumerate() {
            for (hi, &th) in threads.iter().enumerate() {
                runs[ti * threads.len() + hi].push(run(n, th, pmem));
            }
        }
    }
    let mut rows = Vec::new();
    let mut json = Vec::new();
    for (ti, (name, _)) in TABLES.into_iter().enumerate() {
        for (hi, &th) in threads.iter().enumerate() {
            let point = &runs[ti * threads.len() + hi];
            let lf = point[0].1;
            let tallies = (0..PHASES.len()).map(|pi| {
                let mut by_speed: Vec<&Tally> = point.iter().map(|r| &r.0[pi]).collect();
                by_speed
                    .sort_by(|a, b| (a.ops as f64 / a.secs).total_cmp(&(b.ops as f64 / b.secs)));
                by_speed[by_speed.len() / 2].clone()
            });
            let lf_text = lf.map_or("-".to_owned(), |x| format!("{x:.2}"));
            for (pi, t) in tallies.enumerate() {
                let row = Row {
                    table: name,
                    threads: th,
                    phase: pi,
                    tally: t,
                };
                let t = &row.tally;
                let phase = PHASES[pi].0;
                let per_op = |c: u64| c as f64 / t.ops as f64;
                let (pwb, pfence) = (per_op(t.counts.pwb), per_op(t.counts.pfence));
                let qs: Vec<f64> = QUANTILES.iter().map(|&q| row.q(q)).collect();
                println!(
                    "{:<11} {:>2} {:<15} {:>10.0} {:>8.3} {:>4.0}% {:>7.2} {:>7.2} {:>7.2} {:>8.2} {:>8.2} {:>6.2} {:>6.2} {:>5}",
                    name,
                    th,
                    phase,
                    row.ops_s(),
                    1e6 * t.secs * th as f64 / t.ops as f64,
                    100.0 * t.hits as f64 / t.ops as f64,
                    qs[0],
                    qs[1],
                    qs[2],
                    qs[3],
                    qs[4],
                    pwb,
                    pfence,
                    lf_text
                );
                json.push(format!(
                    "{{\"table\":{},\"threads\":{th},\"phase\":{},\"ops\":{},\"hits\":{},\"secs\":{},\"p50_us\":{},\"p90_us\":{},\"p99_us\":{},\"p999_us\":{},\"p9999_us\":{},\"pwb_per_op\":{pwb},\"pfence_per_op\":{pfence},\"load_factor\":{}}}",
                    common::json_str(name),
                    common::json_str(phase),
                    t.ops,
                    t.hits,
                    t.secs,
                    qs[0],
                    qs[1],
                    qs[2],
                    qs[3],
                    qs[4],
                    lf.map_or("null".to_owned(), |x| x.to_string())
                ));
                rows.push(row);
            }
        }
    }
    let curves = vec![
        ("Clevel-mmt", load_curve::<true>(n, pmem)),
        ("Clevel", load_curve::<false>(n, pmem)),
    ];
    let final_lf: Vec<(&str, f64)> = curves
        .iter()
        .filter_map(|(name, c)| Some((*name, c.last()?.1)))
        .collect();
    println!("\nthe seed's relations (§7.2), at 1 thread unless said:");
    for th in &threads {
        for line in relations(&rows, *th, if *th == 1 { &final_lf } else { &[] }) {
            println!("  {th}T: {line}");
        }
    }
    write_plots(&rows, &threads, &curves);
    let out = common::out_dir();
    let path = out.join("hash.json");
    let lf_json: Vec<String> = curves
        .iter()
        .map(|(name, c)| {
            let pts: Vec<String> = c.iter().map(|(x, y)| format!("[{x},{y}]")).collect();
            format!(
                "{{\"table\":{},\"load_factor_curve\":[{}]}}",
                common::json_str(name),
                pts.join(",")
            )
        })
        .collect();
    json.extend(lf_json);
    std::fs::write(&path, format!("[\n{}\n]\n", json.join(",\n"))).expect("write hash.json");
    eprintln!(
        "hash: wrote {} and the plots hash-*.svg beside it",
        path.display()
    );
}
