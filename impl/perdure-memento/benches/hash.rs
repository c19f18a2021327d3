//! The hash tables of seed 001, §7.2, first cut: Clevel-mmt against the
//! non-detectable Clevel on the same table (`ds::clevel`'s `*_plain`
//! operations), and SOFT-mmt, with write-backs and fences per operation and
//! Clevel's load factor.
//!
//! * Phases, each timed on its own, on one fresh table per thread count:
//!   *insert* (`n` distinct uniform keys, split over the threads; a thread
//!   that finds the bottom level to be drained runs the rehash itself, as
//!   Clevel's rehashing thread would), *search-hit* (`n` lookups of
//!   inserted keys), *search-miss* (`n` of absent keys), *search-zipf* (`n`
//!   lookups of inserted keys drawn from a Zipfian distribution, θ = 0.99,
//!   the hot ranks scattered over the keys), *mix-50* (`n` operations, half
//!   inserts of new keys, half lookups of inserted ones), *delete* (every
//!   key of the first phase once).
//! * `n`: 200,000 (`PERDURE_BENCH_QUICK=1`: 20,000; `PERDURE_BENCH_FULL=1`:
//!   2,000,000); threads 1 and 2 (`PERDURE_BENCH_THREADS`).
//! * Backend: `Pmem` on a pool file in `/dev/shm` (`PERDURE_BENCH_DIR`).
//! * A Clevel-mmt operation is a root operation (`Handle::run_root`), as an
//!   application runs it; a Clevel operation is one reclamation critical
//!   section (`Handle::critical_section`).
//!
//! Each phase reports ops/s, µs per operation per thread, p50/p99/p99.9
//! latency (a timer around each operation), write-backs and fences per
//! operation.
//!
//! Not yet (issue 19 §2): Zipfian inserts and deletes, p99.99,
//! SOFT (non-detectable) and the RELAX hash table beside them, and the plots.
//! Writes `out/bench/hash.json` and prints a table.

use perdure_harness::bench::{self as common, Histogram, Rng};
use perdure_memento::ds::clevel::{ClevelMmt, ClevelOp, ClevelTable};
use perdure_memento::ds::soft::{self, SoftMmt, SoftOp, SoftTable};
use perdure_memento::{ClockKind, Config, Handle, Memento, Runtime};
use perdure_pm::stats::{self, FlushCounts};
use perdure_pm::{Pmem, Pool};
use std::time::Instant;

const BASE: u64 = 4096;
const LAYOUT: &str = "bench-hash";

/// A table under test: its runtime's root memento, creation, one
/// operation (as a root operation or a critical section), and upkeep.
trait Subject: Sync + Sized {
    type M: Memento + 'static;
    const NAME: &'static str;
    fn create(h: &mut Handle<'_, '_, Pmem, Self::M>) -> Self;
    fn op(&self, h: &mut Handle<'_, '_, Pmem, Self::M>, op: ClevelOp);
    /// Rehash if the table asks for it (Clevel's rehashing thread).
    fn upkeep(&self, _h: &mut Handle<'_, '_, Pmem, Self::M>) {}
    fn load_factor(&self, _pool: &Pool<Pmem>) -> Option<f64> {
        None
    }
}

/// Clevel on one table: Clevel-mmt (`MMT`: every operation a root
/// operation) or Clevel without mementos (one critical section each).
struct ClevelSubject<const MMT: bool>(ClevelTable);
/// SOFT-mmt (4,096 buckets, its largest table).
struct SoftMmtSubject(SoftTable);

impl<const MMT: bool> Subject for ClevelSubject<MMT> {
    type M = ClevelMmt;
    const NAME: &'static str = if MMT { "Clevel-mmt" } else { "Clevel" };
    fn create(h: &mut Handle<'_, '_, Pmem, ClevelMmt>) -> Self {
        ClevelSubject(ClevelTable::create(h, 1024, 8).expect("table"))
    }
    fn op(&self, h: &mut Handle<'_, '_, Pmem, ClevelMmt>, op: ClevelOp) {
        let t = &self.0;
        if MMT {
            h.run_root(|h, m, _| t.run(h, m, op).expect("operation"));
            return;
        }
        match op {
            ClevelOp::Insert(k, v) => {
                t.insert_plain(k, v, h).expect("insert");
            }
            ClevelOp::Lookup(k) => {
                t.lookup_plain(k, h);
            }
            ClevelOp::Delete(k) => {
                t.delete_plain(k, h).expect("delete");
            }
            ClevelOp::Resize => {
                t.resize_plain(h).expect("resize");
            }
        }
    }
    fn upkeep(&self, h: &mut Handle<'_, '_, Pmem, ClevelMmt>) {
        if self.0.needs_resize(h) {
            self.op(h, ClevelOp::Resize);
        }
    }
    fn load_factor(&self, pool: &Pool<Pmem>) -> Option<f64> {
        Some(self.0.stats(pool).expect("stats").load_factor())
    }
}

impl Subject for SoftMmtSubject {
    type M = SoftMmt;
    const NAME: &'static str = "SOFT-mmt";
    fn create(h: &mut Handle<'_, '_, Pmem, SoftMmt>) -> Self {
        SoftMmtSubject(SoftTable::create(h, soft::MAX_BUCKETS).expect("table"))
    }
    fn op(&self, h: &mut Handle<'_, '_, Pmem, SoftMmt>, op: ClevelOp) {
        let op = match op {
            ClevelOp::Insert(k, v) => SoftOp::Insert(k, v),
            ClevelOp::Lookup(k) => SoftOp::Lookup(k),
            ClevelOp::Delete(k) => SoftOp::Delete(k),
            ClevelOp::Resize => return,
        };
        h.run_root(|h, m, _| self.0.run(h, m, op).expect("operation"));
    }
}

/// A point's runner: keys, threads, backend → each phase's tally and the
/// load factor after the inserts (for a table that has one).
type Point = fn(u64, usize, Pmem) -> (Vec<Tally>, Option<f64>);

const PHASES: [&str; 6] = [
    "insert",
    "search-hit",
    "search-miss",
    "search-zipf",
    "mix-50",
    "delete",
];

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
    secs: f64,
    counts: FlushCounts,
    hist: Histogram,
}

/// The key of index `i` (distinct for distinct `i`; absent keys have the top bit set).
fn key(i: u64) -> u64 {
    let mut r = Rng::new(i);
    r.next() >> 1
}

fn run_point<S: Subject>(n: u64, threads: usize, pmem: Pmem) -> (Vec<Tally>, Option<f64>) {
    let dir = tempfile::tempdir_in(common::bench_dir()).expect("a directory for the pool");
    let path = dir.path().join("hash.pool");
    // Items (16 B), levels (directories and segments), a chunk per class
    // and thread, and room for the doubling chain.
    let heap_bytes = (n * 160).max(64 << 20);
    let cfg = Config {
        threads,
        heap_bytes,
        clock: ClockKind::Tsc,
    };
    let size = BASE + Runtime::<Pmem, S::M>::required_bytes(&cfg);
    let pool = Pool::create_with(&path, LAYOUT, size, pmem).expect("pool");
    let rt = Runtime::<Pmem, S::M>::create(&pool, BASE, &cfg).expect("runtime");
    let t = S::create(&mut rt.handle(1).expect("handle"));
    let per = n / threads as u64;
    let zipf = Zipf::new(per * threads as u64, 0.99);
    let mut tallies = Vec::new();
    let mut load_factor = None;
    for phase in PHASES {
        let barrier = std::sync::Barrier::new(threads);
        let results: Vec<(u64, f64, FlushCounts, Histogram)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|ti| {
                    let (rt, t, barrier, zipf) = (&rt, &t, &barrier, &zipf);
                    s.spawn(move || {
                        let mut h = rt.handle(ti + 1).expect("handle");
                        let lo = ti as u64 * per;
                        let mut rng = Rng::new(0x21cf + ti as u64);
                        let total = per * threads as u64;
                        barrier.wait();
                        let mut hist = Histogram::new();
                        let c0 = stats::thread_counts();
                        let t0 = Instant::now();
                        for i in lo..lo + per {
                            let o0 = Instant::now();
                            let op = match phase {
                                "insert" => ClevelOp::Insert(key(i), i),
                                "search-hit" => ClevelOp::Lookup(key(i)),
                                "search-miss" => ClevelOp::Lookup(key(i) | 1 << 63),
                                // Half inserts of new keys, half lookups of inserted ones.
                                "mix-50" if i % 2 == 0 => ClevelOp::Insert(key(total + i), i),
                                "mix-50" => ClevelOp::Lookup(key(i)),
                                "search-zipf" => {
                                    // The rank's key: hot ranks scattered.
                                    let rank = zipf.rank(&mut rng);
                                    ClevelOp::Lookup(key(Rng::new(rank).next() % total))
                                }
                                _ => ClevelOp::Delete(key(i)),
                            };
                            t.op(&mut h, op);
                            hist.record(o0.elapsed().as_nanos() as u64);
                            if phase == "insert" && i % 1024 == 0 {
                                t.upkeep(&mut h);
                            }
                        }
                        let counts = stats::thread_counts() - c0;
                        (per, t0.elapsed().as_secs_f64(), counts, hist)
                    })
                })
                .collect();
            hs.into_iter().map(|x| x.join().expect("thread")).collect()
        });
        let mut tally = Tally::default();
        for (ops, secs, counts, hist) in results {
            tally.ops += ops;
            tally.secs = tally.secs.max(secs);
            tally.counts += counts;
            tally.hist.merge(&hist);
        }
        if phase == "insert" {
            load_factor = t.load_factor(&pool);
        }
        tallies.push(tally);
    }
    (tallies, load_factor)
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
    let mut json = Vec::new();
    println!(
        "hash tables, {n} keys, Pmem in {}",
        common::bench_dir().display()
    );
    println!(
        "{:<11} {:>2} {:<12} {:>12} {:>9} {:>7} {:>7} {:>8} {:>8} {:>8} {:>6}",
        "table",
        "T",
        "phase",
        "ops/s",
        "us/op",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "pwb/op",
        "pfence/op",
        "load"
    );
    for (name, run) in [
        (
            ClevelSubject::<true>::NAME,
            run_point::<ClevelSubject<true>> as Point,
        ),
        (
            ClevelSubject::<false>::NAME,
            run_point::<ClevelSubject<false>>,
        ),
        (SoftMmtSubject::NAME, run_point::<SoftMmtSubject>),
    ] {
        for &th in &threads {
            let (tallies, lf) = run(n, th, pmem);
            let lf_text = lf.map_or("-".to_owned(), |x| format!("{x:.2}"));
            for (phase, t) in PHASES.iter().zip(&tallies) {
                let ops_s = t.ops as f64 / t.secs;
                let pwb = t.counts.pwb as f64 / t.ops as f64;
                let pfence = t.counts.pfence as f64 / t.ops as f64;
                let (p50, p99, p999) = (
                    t.hist.quantile(0.5),
                    t.hist.quantile(0.99),
                    t.hist.quantile(0.999),
                );
                println!(
                    "{:<11} {:>2} {:<12} {:>12.0} {:>9.3} {:>7.2} {:>7.2} {:>8.2} {:>8.2} {:>8.2} {:>6}",
                    name,
                    th,
                    phase,
                    ops_s,
                    1e6 * t.secs * th as f64 / t.ops as f64,
                    p50,
                    p99,
                    p999,
                    pwb,
                    pfence,
                    lf_text
                );
                json.push(format!(
                    "{{\"table\":{},\"threads\":{th},\"phase\":{},\"ops\":{},\"secs\":{},\"p50_us\":{p50},\"p99_us\":{p99},\"p999_us\":{p999},\"pwb_per_op\":{pwb},\"pfence_per_op\":{pfence},\"load_factor\":{}}}",
                    common::json_str(name),
                    common::json_str(phase),
                    t.ops,
                    t.secs,
                    lf.map_or("null".to_owned(), |x| x.to_string())
                ));
            }
        }
    }
    let out = common::out_dir();
    std::fs::create_dir_all(&out).expect("the output directory");
    let path = out.join("hash.json");
    std::fs::write(&path, format!("[\n{}\n]\n", json.join(",\n"))).expect("write hash.json");
    eprintln!("hash: wrote {}", path.display());
}
