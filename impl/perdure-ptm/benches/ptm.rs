//! The workloads of seed 000, §6 (Figures 4–6), on the constructions of
//! perdure-ptm, with write-backs, fences and durability barriers per
//! transaction, next to the published implementation's figures.
//!
//! * Constructions: Redo-PTM, RedoTimed-PTM and RedoOpt-PTM ([`RedoPtm`],
//!   `redo::Config::default()` with the [`Variant`] and `threads` = the
//!   largest thread count), CX-PTM ([`CxPtm`]), and CX-PUC ([`CxPuc`]
//!   through its annotated interface) on the queue only: CX-PUC writes back
//!   the whole used part of a replica after each update, and the seed
//!   presents it "only for small sized data structures" (§6). The reference
//!   figures (RedoOpt's and CX-PTM's) are printed next to the rows of the
//!   same construction.
//! * Workloads (each transaction one call of [`Ptm::update_tx`] or
//!   [`Ptm::read_tx`] on the structures of [`perdure_ptm::ds`]):
//!   - *SPS*: an array of 10^6 words ([`PArray`]); a transaction swaps 1, 4,
//!     8, 16, 32 or 64 random pairs; throughput in swaps/s;
//!   - *queue*: pre-filled with 1,000 values; each iteration is an enqueue
//!     transaction, then a dequeue transaction;
//!   - *sets*: linked list of 10^4 keys, red-black tree of 10^6 keys
//!     (10^5 with `PERDURE_BENCH_QUICK`), hash set of 10^6 keys (10^5
//!     quick), at 100%, 10% and 1% updates: an update removes a random key
//!     and, if that succeeded, inserts it again (two transactions); a lookup
//!     is two `contains` of random keys (two read-only transactions). Plus the
//!     sizes of the reference figures: the tree with 10^4 keys at 10%
//!     and the hash set with 10^3 keys at 1%.
//!
//!   Throughput is in transactions per second ("ops/s" below: one
//!   operation = one transaction); the counts are per transaction.
//! * Threads: 1, 2, then powers of two up to `available_parallelism`
//!   (`PERDURE_BENCH_THREADS=1,2,4` overrides).
//! * Backend: `Pmem` (clwb, else clflushopt, else clflush, from CPUID) on a
//!   pool file in `/dev/shm`, else the temporary directory
//!   (`PERDURE_BENCH_DIR` overrides). tmpfs has no DAX, so `MAP_SYNC` falls
//!   back to `MAP_SHARED`: the flushes are the real instructions but reach
//!   DRAM, as on the reference's DRAM machine.
//! * A subset, for a profiler: `PERDURE_BENCH_ONLY=<workloads>` (comma
//!   separated, from `sps`, `queue`, `list`, `tree`, `hash`, `tree10k`,
//!   `hash1k`: the last two are the reference figures' sizes) and
//!   `PERDURE_BENCH_PTMS=<constructions>` (from `redo`, `timed`, `opt`,
//!   `cx`, `puc`) run only those; the table is printed, no files written.
//!   `PERDURE_BENCH_SECS` sets the seconds per point.
//! * For `make bench-peers` (`tools/bench_peers.py`, which runs one point
//!   per process against the published C++ code): `PERDURE_BENCH_SWAPS`
//!   (SPS swaps per transaction, comma separated; default all six),
//!   `PERDURE_BENCH_WARMUP` (iterations of the measured loop each worker
//!   runs before the clock starts; default 0) and
//!   `PERDURE_BENCH_HASH_BUCKETS` (the hash set's initial buckets, a power
//!   of two; default [`hash::DEFAULT_BUCKETS`], grown to 2 keys a bucket).
//!   `PERDURE_BENCH_REDO_STATES`, `PERDURE_BENCH_REDO_LOG` and
//!   `PERDURE_BENCH_REDO_DIRTY` replace the Redo family's
//!   `states_per_thread`, `log_entries_per_thread` and
//!   `dirty_lines_per_replica` (for A/B runs of the sizes).
//! * Each point runs for 1 s (0.2 s with `PERDURE_BENCH_QUICK=1`); one pool
//!   per structure and construction, pre-filled once (in batches of
//!   [`BATCH`] operations per transaction) and reused for every update ratio
//!   and thread count; the structure's `check` runs after every point (a
//!   broken invariant aborts the benchmark).
//!
//! Built with the feature `breakdown` (the bench target `ptm_breakdown`,
//! which `make bench` runs after the others), it runs only the seed's
//! Table 1 instead: the hash set and the red-black tree at 100% updates on
//! every construction, with the share of each update's time spent applying
//! redo logs, flushing, copying replicas, running closures and waiting
//! ([`perdure_ptm::breakdown`]), into `ptm-breakdown.json`.
//!
//! Prints a table (with full replica copies and rolled-back attempts per
//! transaction, from [`Ptm::events`], whose every counter is also printed
//! per point as it runs), writes `ptm.json` and `ptm.csv` (one record per point)
//! and the plots `ptm-sps.svg` (swaps/s against swaps per transaction) and
//! `ptm-flushes.svg` (write-backs per transaction, one thread) into
//! `$PERDURE_BENCH_OUT` (else `out/bench/`).

use perdure_harness::bench as common;
use perdure_harness::svg;
use perdure_pm::stats::{self, FlushCounts};
use perdure_pm::{Backend, Pmem, Pool};
use perdure_ptm::breakdown::{self, Breakdown};
use perdure_ptm::ds::{hash, list, queue, rbtree, HashSet, ListSet, PArray, Queue, RbTreeSet};
use perdure_ptm::redo::Variant;
use perdure_ptm::{CxPtm, CxPuc, Ptm};
use perdure_ptm::{PtmError, RedoPtm};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

const LAYOUT: &str = "bench-ptm";
/// Operations per pre-fill transaction.
const BATCH: u64 = 256;
const SWAPS: [u64; 6] = [1, 4, 8, 16, 32, 64];
const UPDATES: [u64; 3] = [100, 10, 1];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cons {
    Redo,
    Timed,
    Opt,
    Cx,
    Puc,
}

/// The four constructions on annotated words (CX-PUC, on a plain value,
/// runs the queue only: each update writes back the used region).
const ALL_PTMS: [Cons; 4] = [Cons::Redo, Cons::Timed, Cons::Opt, Cons::Cx];

impl Cons {
    fn name(self) -> &'static str {
        match self {
            Cons::Redo => "Redo-PTM",
            Cons::Timed => "RedoTimed-PTM",
            Cons::Opt => "RedoOpt-PTM",
            Cons::Cx => "CX-PTM",
            Cons::Puc => "CX-PUC",
        }
    }
    fn replicas(self, threads: usize) -> u64 {
        match self {
            Cons::Redo | Cons::Timed | Cons::Opt => threads as u64 + 1,
            Cons::Cx | Cons::Puc => 2 * threads as u64,
        }
    }
}

struct Settings {
    secs: f64,
    quick: bool,
    threads: Vec<usize>,
    dir: PathBuf,
    pmem: Pmem,
    /// `PERDURE_BENCH_ONLY`'s workloads, if set.
    only: Option<Vec<String>>,
    /// `PERDURE_BENCH_PTMS`'s constructions, if set.
    ptms: Option<Vec<Cons>>,
    /// SPS's swaps per transaction (`PERDURE_BENCH_SWAPS`, else [`SWAPS`]).
    swaps: Vec<u64>,
    /// Iterations each worker runs before the clock (`PERDURE_BENCH_WARMUP`).
    warmup: u64,
    /// The hash set's initial buckets (`PERDURE_BENCH_HASH_BUCKETS`).
    hash_buckets: u64,
    /// `PERDURE_BENCH_REDO_STATES`, `_LOG`, `_DIRTY`: Redo-PTM's
    /// `states_per_thread`, `log_entries_per_thread` and
    /// `dirty_lines_per_replica` instead of the defaults.
    redo_sizes: [Option<usize>; 3],
}

const WORKLOADS: [&str; 7] = ["sps", "queue", "list", "tree", "hash", "tree10k", "hash1k"];

/// A comma-separated list of names from `known`.
fn names_from_env<T: Copy>(var: &str, known: &[(&str, T)]) -> Result<Option<Vec<T>>, String> {
    let Ok(v) = std::env::var(var) else {
        return Ok(None);
    };
    v.split(',')
        .map(|n| {
            let n = n.trim();
            known
                .iter()
                .find(|(k, _)| *k == n)
                .map(|&(_, t)| t)
                .ok_or_else(|| {
                    let all: Vec<_> = known.iter().map(|(k, _)| *k).collect();
                    format!(
                        "{var}: unknown name {n:?}; the names are {}",
                        all.join(", ")
                    )
                })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

impl Settings {
    fn from_env() -> Result<Settings, String> {
        let quick = common::quick();
        let threads = common::thread_counts(64)?;
        let dir = common::bench_dir();
        let pmem = common::pmem()?;
        let wl: Vec<(&str, &str)> = WORKLOADS.iter().map(|w| (*w, *w)).collect();
        let only = names_from_env("PERDURE_BENCH_ONLY", &wl)?
            .map(|v| v.into_iter().map(String::from).collect());
        let ptms = names_from_env(
            "PERDURE_BENCH_PTMS",
            &[
                ("redo", Cons::Redo),
                ("timed", Cons::Timed),
                ("opt", Cons::Opt),
                ("cx", Cons::Cx),
                ("puc", Cons::Puc),
            ],
        )?;
        let secs = common::env_secs("PERDURE_BENCH_SECS")?.unwrap_or(if quick { 0.2 } else { 1.0 });
        let swaps = common::env_list::<u64>("PERDURE_BENCH_SWAPS")?.unwrap_or(SWAPS.to_vec());
        if swaps.contains(&0) {
            return Err("PERDURE_BENCH_SWAPS: swaps per transaction must be at least 1".into());
        }
        let warmup = common::env_value("PERDURE_BENCH_WARMUP")?.unwrap_or(0);
        let hash_buckets =
            common::env_value("PERDURE_BENCH_HASH_BUCKETS")?.unwrap_or(hash::DEFAULT_BUCKETS);
        if !hash_buckets.is_power_of_two() {
            return Err(format!(
                "PERDURE_BENCH_HASH_BUCKETS={hash_buckets}: must be a power of two"
            ));
        }
        let redo_sizes = [
            common::env_value("PERDURE_BENCH_REDO_STATES")?,
            common::env_value("PERDURE_BENCH_REDO_LOG")?,
            common::env_value("PERDURE_BENCH_REDO_DIRTY")?,
        ];
        Ok(Settings {
            secs,
            quick,
            threads,
            dir,
            pmem,
            only,
            ptms,
            swaps,
            warmup,
            hash_buckets,
            redo_sizes,
        })
    }

    /// Whether workload `w` (one of [`WORKLOADS`]) is selected.
    fn runs(&self, w: &str) -> bool {
        self.only
            .as_ref()
            .map_or(true, |o| o.iter().any(|x| x == w))
    }

    /// Whether construction `c` is selected.
    fn runs_cons(&self, c: Cons) -> bool {
        self.ptms.as_ref().map_or(true, |o| o.contains(&c))
    }

    fn max_threads(&self) -> usize {
        self.threads.iter().copied().max().unwrap_or(1)
    }

    fn big(&self) -> u64 {
        if self.quick {
            100_000
        } else {
            1_000_000
        }
    }
}

/// Work generic over the construction: what `with_ptm` runs on the PTM it
/// builds (closures cannot be generic, traits can).
trait Job {
    type Out;
    fn run<P: Ptm>(self, p: &P) -> Self::Out;
}

/// Builds `cons` on a fresh pool file with replicas of `replica_bytes`
/// for `s.max_threads()` threads and runs `job` on it.
fn with_ptm<J: Job>(s: &Settings, cons: Cons, replica_bytes: u64, job: J) -> (J::Out, String) {
    let dir = tempfile::tempdir_in(&s.dir).expect("a temporary directory for the pool");
    let path = dir.path().join("ptm.pool");
    let n = s.max_threads();
    let size = (cons.replicas(n) * replica_bytes + (1 << 20)).next_multiple_of(1 << 20);
    let pool = Pool::create_with(&path, LAYOUT, size, s.pmem).expect("pool");
    let mode = pool.mode().describe().to_string();
    let fail = |e: PtmError| -> ! { panic!("{}: {e}", cons.name()) };
    let out = match cons {
        Cons::Redo | Cons::Timed | Cons::Opt => {
            let d = perdure_ptm::redo::Config::default();
            let [states, log, dirty] = s.redo_sizes;
            let cfg = perdure_ptm::redo::Config {
                threads: n,
                variant: match cons {
                    Cons::Timed => Variant::Timed,
                    Cons::Opt => Variant::Opt,
                    _ => Variant::Redo,
                },
                states_per_thread: states.unwrap_or(d.states_per_thread),
                log_entries_per_thread: log.unwrap_or(d.log_entries_per_thread),
                dirty_lines_per_replica: dirty.unwrap_or(d.dirty_lines_per_replica),
                ..d
            };
            job.run(&RedoPtm::create(pool, &cfg).unwrap_or_else(|e| fail(e)))
        }
        Cons::Cx => {
            let cfg = perdure_ptm::cx::Config {
                threads: n,
                ..Default::default()
            };
            job.run(&CxPtm::create(pool, &cfg).unwrap_or_else(|e| fail(e)))
        }
        Cons::Puc => {
            let cfg = perdure_ptm::cx::Config {
                threads: n,
                ..Default::default()
            };
            job.run(&CxPuc::<_, u64>::create(pool, &cfg, 0).unwrap_or_else(|e| fail(e)))
        }
    };
    (out, mode)
}

/// Runs `f` on a thread of its own, so that the main thread never leases
/// one of the PTM's thread ids.
fn aside<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| s.spawn(f).join().expect("a pre-fill or check thread"))
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Default, Clone)]
struct Tally {
    txs: u64,
    /// Swaps (SPS) or transactions (the others).
    items: u64,
    counts: FlushCounts,
    secs: f64,
    /// Table 1's time breakdown, summed over the workers (zeros without
    /// the `breakdown` feature).
    breakdown: Breakdown,
    /// The construction's consensus events over the point ([`Ptm::events`]:
    /// copies, replays, ...), all threads.
    events: Vec<(&'static str, u64)>,
}

impl Tally {
    /// `name=x/tx` for each nonzero event.
    fn events_per_tx(&self) -> String {
        self.events
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, _)| format!("{k}={}/tx", per_tx(self.event_per_tx(k))))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Event `name` per transaction (0 if the construction does not count
    /// it).
    fn event_per_tx(&self, name: &str) -> f64 {
        let n = self
            .events
            .iter()
            .find(|(k, _)| *k == name)
            .map_or(0, |e| e.1);
        n as f64 / self.txs.max(1) as f64
    }
}

/// A rate per transaction: three decimals, or two significant digits below
/// 0.01 (a full copy of the SPS array costs ~125,000 `pwb`s, so 0.0004
/// copies per transaction are 50 `pwb`s per transaction).
fn per_tx(x: f64) -> String {
    if x == 0.0 || x >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.1e}")
    }
}

/// Runs `iteration` on `threads` threads for `s.secs`, after `s.warmup`
/// uncounted iterations on each; it returns the transactions and items it
/// did.
fn measure<P: Ptm>(
    s: &Settings,
    p: &P,
    threads: usize,
    iteration: &(dyn Fn(&P, &mut Rng) -> (u64, u64) + Sync),
) -> Tally {
    let stop = AtomicBool::new(false);
    let start = Barrier::new(threads + 1);
    let events0 = p.events();
    let tallies: Vec<Tally> = std::thread::scope(|sc| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (stop, start) = (&stop, &start);
                sc.spawn(move || {
                    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ ((t as u64 + 1) << 32));
                    let mut tally = Tally::default();
                    for _ in 0..s.warmup {
                        iteration(p, &mut rng);
                    }
                    start.wait();
                    breakdown::take();
                    let c0 = stats::thread_counts();
                    let t0 = Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        let (txs, items) = iteration(p, &mut rng);
                        tally.txs += txs;
                        tally.items += items;
                    }
                    tally.secs = t0.elapsed().as_secs_f64();
                    tally.counts = stats::thread_counts() - c0;
                    tally.breakdown = breakdown::take();
                    tally
                })
            })
            .collect();
        start.wait();
        std::thread::sleep(Duration::from_secs_f64(s.secs));
        stop.store(true, Ordering::Relaxed);
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let events = p
        .events()
        .into_iter()
        .zip(events0)
        .map(|((k, n), (_, n0))| (k, n.wrapping_sub(n0)))
        .collect();
    let total = tallies.into_iter().fold(Tally::default(), |a, b| Tally {
        txs: a.txs + b.txs,
        items: a.items + b.items,
        counts: a.counts + b.counts,
        secs: a.secs.max(b.secs),
        breakdown: a.breakdown + b.breakdown,
        events: Vec::new(),
    });
    Tally { events, ..total }
}

struct Row {
    workload: &'static str,
    param: String,
    size: u64,
    cons: Cons,
    threads: usize,
    tally: Tally,
}

impl Row {
    fn rate(&self) -> f64 {
        self.tally.items as f64 / self.tally.secs
    }
    fn unit(&self) -> &'static str {
        if self.workload == "SPS" {
            "swaps/s"
        } else {
            "ops/s"
        }
    }
    /// The reference figure for this point (published C++
    /// RedoOpt-PTM/CX-PTM on a 2-core DRAM machine, clflushopt).
    fn reference(&self) -> Option<&'static str> {
        let one = self.threads == 1;
        let two = self.threads == 2;
        if !(one || two) {
            return None;
        }
        let pick = |a, b| Some(if one { a } else { b });
        match (self.workload, self.param.as_str(), self.size, self.cons) {
            ("SPS", "1 swap/tx", _, Cons::Opt) => pick("RedoOpt 0.84M", "RedoOpt 0.50M"),
            ("SPS", "16 swaps/tx", _, Cons::Opt) => pick("RedoOpt 2.31M", "RedoOpt 1.56M"),
            ("queue", _, _, Cons::Opt) => pick(
                "RedoOpt 375K (4.5 pwb, 2.1 pfence)",
                "RedoOpt 291K (4.5 pwb, 2.1 pfence)",
            ),
            ("tree", "10% updates", 10_000, Cons::Opt) => pick("RedoOpt 533K", "RedoOpt 306K"),
            ("tree", "10% updates", 10_000, Cons::Cx) => pick("CX-PTM 368K", "CX-PTM 167K"),
            ("hash", "1% updates", 1_000, Cons::Opt) => pick("RedoOpt 12.5M", "RedoOpt 12.1M"),
            _ => None,
        }
    }
}

fn human(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.3}M", x / 1e6)
    } else {
        format!("{:.1}K", x / 1e3)
    }
}

struct Bench<'s> {
    s: &'s Settings,
    rows: Vec<Row>,
    mapping: String,
}

impl Bench<'_> {
    fn push(&mut self, row: Row) {
        let (pwb, pfence, _) = row.tally.counts.per_op(row.tally.txs);
        eprintln!(
            "  {:<6} {:<14} n={:<8} {:<9} {}T  {} {}  {:.2} pwb/tx {:.2} pfence/tx  {}",
            row.workload,
            row.param,
            row.size,
            row.cons.name(),
            row.threads,
            human(row.rate()),
            row.unit(),
            pwb,
            pfence,
            row.tally.events_per_tx()
        );
        self.rows.push(row);
    }
}

struct Sps<'a, 'b> {
    b: &'a mut Bench<'b>,
    cons: Cons,
}

impl Job for Sps<'_, '_> {
    type Out = ();
    fn run<P: Ptm>(self, p: &P) {
        let len = 1_000_000;
        let a = aside(|| PArray::create(p, 0, len).expect("SPS array"));
        let s = self.b.s;
        for &swaps in &s.swaps {
            for &threads in &s.threads {
                let tally = measure(s, p, threads, &|p, rng| {
                    let pairs: Vec<(u64, u64)> = (0..swaps)
                        .map(|_| (rng.below(len), rng.below(len)))
                        .collect();
                    a.swap_all(p, pairs).expect("swap");
                    (1, swaps)
                });
                self.b.push(Row {
                    workload: "SPS",
                    param: format!("{swaps} swap{}/tx", if swaps == 1 { "" } else { "s" }),
                    size: len,
                    cons: self.cons,
                    threads,
                    tally,
                });
            }
        }
        assert_eq!(aside(|| a.check(p)).expect("SPS check"), len);
    }
}

struct QueueJob<'a, 'b> {
    b: &'a mut Bench<'b>,
    cons: Cons,
}

impl Job for QueueJob<'_, '_> {
    type Out = ();
    fn run<P: Ptm>(self, p: &P) {
        let prefill = 1000;
        let q = aside(|| {
            let q = Queue::create(p, 0).expect("queue");
            p.update_tx(move |tx| {
                for v in 0..prefill {
                    queue::enqueue_in(tx, 0, v).expect("pre-fill");
                }
            })
            .expect("pre-fill");
            q
        });
        let s = self.b.s;
        for &threads in &s.threads {
            let tally = measure(s, p, threads, &|p, rng| {
                q.enqueue(p, rng.below(1 << 40)).expect("enqueue");
                q.dequeue(p).expect("dequeue");
                (2, 2)
            });
            self.b.push(Row {
                workload: "queue",
                param: "enq-deq".into(),
                size: prefill,
                cons: self.cons,
                threads,
                tally,
            });
        }
        assert_eq!(aside(|| q.check(p)).expect("queue check"), prefill);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SetKind {
    List,
    Tree,
    Hash,
}

impl SetKind {
    fn name(self) -> &'static str {
        match self {
            SetKind::List => "list",
            SetKind::Tree => "tree",
            SetKind::Hash => "hash",
        }
    }
    /// Bytes a replica needs for `keys` keys (nodes are power-of-two
    /// blocks; the hash set's bucket arrays add about 8 bytes per key).
    fn replica_bytes(self, keys: u64) -> u64 {
        let per_key = match self {
            SetKind::List => 32,
            SetKind::Tree => 64,
            SetKind::Hash => 32 + 16,
        };
        (keys * per_key * 5 / 4 + (4 << 20)).next_multiple_of(1 << 20)
    }
}

/// One set in root slot 0, whichever kind.
#[derive(Clone, Copy)]
enum AnySet {
    List(ListSet),
    Tree(RbTreeSet),
    Hash(HashSet),
}

impl AnySet {
    fn insert<P: Ptm>(self, p: &P, k: u64) -> bool {
        match self {
            AnySet::List(s) => s.insert(p, k),
            AnySet::Tree(s) => s.insert(p, k),
            AnySet::Hash(s) => s.insert(p, k),
        }
        .expect("insert")
    }
    fn remove<P: Ptm>(self, p: &P, k: u64) -> bool {
        match self {
            AnySet::List(s) => s.remove(p, k),
            AnySet::Tree(s) => s.remove(p, k),
            AnySet::Hash(s) => s.remove(p, k),
        }
        .expect("remove")
    }
    fn contains<P: Ptm>(self, p: &P, k: u64) -> bool {
        match self {
            AnySet::List(s) => s.contains(p, k),
            AnySet::Tree(s) => s.contains(p, k),
            AnySet::Hash(s) => s.contains(p, k),
        }
        .expect("contains")
    }
    fn check<P: Ptm>(self, p: &P) -> u64 {
        match self {
            AnySet::List(s) => s.check(p),
            AnySet::Tree(s) => s.check(p),
            AnySet::Hash(s) => s.check(p),
        }
        .expect("check")
    }
}

struct SetJob<'a, 'b> {
    b: &'a mut Bench<'b>,
    cons: Cons,
    kind: SetKind,
    keys: u64,
    updates: &'a [u64],
}

impl Job for SetJob<'_, '_> {
    type Out = ();
    fn run<P: Ptm>(self, p: &P) {
        let (kind, keys) = (self.kind, self.keys);
        let buckets = self.b.s.hash_buckets;
        let set = aside(|| {
            let set = match kind {
                SetKind::List => AnySet::List(ListSet::create(p, 0).expect("list")),
                SetKind::Tree => AnySet::Tree(RbTreeSet::create(p, 0).expect("tree")),
                SetKind::Hash => {
                    AnySet::Hash(HashSet::create_with(p, 0, buckets).expect("hash set"))
                }
            };
            // Keys 0..keys; the list gets them in descending order, so that
            // each insert is at the front.
            let mut start = 0;
            while start < keys {
                let end = (start + BATCH).min(keys);
                p.update_tx(move |tx| {
                    for i in start..end {
                        let ok = match kind {
                            SetKind::List => list::insert_in(tx, 0, keys - 1 - i),
                            SetKind::Tree => rbtree::insert_in(tx, 0, i),
                            SetKind::Hash => hash::set_insert_in(tx, 0, i),
                        };
                        ok.expect("pre-fill insert");
                    }
                })
                .expect("pre-fill");
                start = end;
            }
            set
        });
        assert_eq!(aside(|| set.check(p)), keys, "pre-filled set");
        let s = self.b.s;
        for &updates in self.updates {
            for &threads in &s.threads {
                let tally = measure(s, p, threads, &|p, rng| {
                    if rng.below(100) < updates {
                        let k = rng.below(keys);
                        if set.remove(p, k) {
                            set.insert(p, k);
                            (2, 2)
                        } else {
                            (1, 1)
                        }
                    } else {
                        set.contains(p, rng.below(keys));
                        set.contains(p, rng.below(keys));
                        (2, 2)
                    }
                });
                self.b.push(Row {
                    workload: kind.name(),
                    param: format!("{updates}% updates"),
                    size: keys,
                    cons: self.cons,
                    threads,
                    tally,
                });
                assert_eq!(aside(|| set.check(p)), keys, "set after a point");
            }
        }
    }
}

fn out_dir() -> PathBuf {
    match std::env::var_os("PERDURE_BENCH_OUT") {
        Some(d) => {
            let d = PathBuf::from(d);
            std::fs::create_dir_all(&d).expect("create PERDURE_BENCH_OUT");
            d
        }
        None => common::out_dir(),
    }
}

fn write_outputs(b: &Bench<'_>) {
    let out = out_dir();
    let mut csv = String::from(
        "workload,param,size,construction,threads,seconds,transactions,items,items_per_s,pwb_per_tx,pfence_per_tx,psync_per_tx,reference\n",
    );
    let mut json = Vec::new();
    for r in &b.rows {
        let (pwb, pfence, psync) = r.tally.counts.per_op(r.tally.txs);
        let reference = r.reference().unwrap_or("");
        csv.push_str(&format!(
            "{},{},{},{},{},{:.4},{},{},{:.1},{:.4},{:.4},{:.4},\"{}\"\n",
            r.workload,
            r.param,
            r.size,
            r.cons.name(),
            r.threads,
            r.tally.secs,
            r.tally.txs,
            r.tally.items,
            r.rate(),
            pwb,
            pfence,
            psync,
            reference
        ));
        json.push(format!(
            "{{\"workload\":{},\"param\":{},\"size\":{},\"construction\":{},\"threads\":{},\"seconds\":{:.4},\"transactions\":{},\"items\":{},\"items_per_s\":{:.1},\"unit\":{},\"pwb_per_tx\":{:.4},\"pfence_per_tx\":{:.4},\"psync_per_tx\":{:.4},\"events\":{{{}}},\"reference\":{}}}",
            common::json_str(r.workload),
            common::json_str(&r.param),
            r.size,
            common::json_str(r.cons.name()),
            r.threads,
            r.tally.secs,
            r.tally.txs,
            r.tally.items,
            r.rate(),
            common::json_str(r.unit()),
            pwb,
            pfence,
            psync,
            r.tally
                .events
                .iter()
                .map(|(k, n)| format!("{}:{n}", common::json_str(k)))
                .collect::<Vec<_>>()
                .join(","),
            r.reference().map_or("null".into(), common::json_str)
        ));
    }
    let json = format!(
        "{{\"bench\":\"ptm\",\"seed\":\"000 §6\",\"backend\":{},\"mapping\":{},\"seconds_per_point\":{},\"quick\":{},\"threads\":{:?},\"rows\":[{}]}}\n",
        common::json_str(b.s.pmem.name()),
        common::json_str(&b.mapping),
        b.s.secs,
        b.s.quick,
        b.s.threads,
        json.join(",")
    );
    for (name, text) in [("ptm.json", json), ("ptm.csv", csv)] {
        let path = out.join(name);
        std::fs::write(&path, text).expect("write results");
        println!("wrote {}", path.display());
    }
    // SPS: swaps/s against swaps per transaction.
    let mut series = Vec::new();
    for cons in ALL_PTMS {
        for &t in &b.s.threads {
            let points: Vec<(f64, f64)> = b
                .rows
                .iter()
                .filter(|r| r.workload == "SPS" && r.cons == cons && r.threads == t)
                .map(|r| {
                    (
                        (r.tally.items as f64 / r.tally.txs.max(1) as f64),
                        r.rate() / 1e6,
                    )
                })
                .collect();
            if !points.is_empty() {
                series.push(svg::Series {
                    name: format!("{} {t}T", cons.name()),
                    points,
                });
            }
        }
    }
    let path = out.join("ptm-sps.svg");
    let title = format!("SPS, 10^6 words ({})", b.s.pmem.name());
    std::fs::write(
        &path,
        svg::line_chart(&title, "swaps per transaction", "M swaps/s", &series),
    )
    .expect("write a plot");
    println!("wrote {}", path.display());
    // Write-backs and fences per transaction, one thread, 100% updates.
    let one = b.s.threads[0];
    let picks: Vec<&Row> = b
        .rows
        .iter()
        .filter(|r| {
            r.threads == one
                && matches!(
                    (r.workload, r.param.as_str()),
                    ("SPS", "1 swap/tx")
                        | ("SPS", "16 swaps/tx")
                        | ("queue", _)
                        | ("list", "100% updates")
                        | ("tree", "100% updates")
                        | ("hash", "100% updates")
                )
        })
        .collect();
    let groups: Vec<String> = picks
        .iter()
        .map(|r| format!("{} {} {}", r.workload, r.param, r.cons.name()))
        .collect();
    let per = |f: fn(&FlushCounts) -> u64| -> Vec<f64> {
        picks
            .iter()
            .map(|r| f(&r.tally.counts) as f64 / r.tally.txs.max(1) as f64)
            .collect()
    };
    let bars = vec![
        ("pwb / tx".to_string(), per(|c| c.pwb)),
        ("pfence / tx".to_string(), per(|c| c.pfence)),
    ];
    let path = out.join("ptm-flushes.svg");
    std::fs::write(
        &path,
        svg::bar_chart(
            &format!("write-backs and fences per transaction ({one} thread)"),
            "per transaction",
            &groups,
            &bars,
        ),
    )
    .expect("write a plot");
    println!("wrote {}", path.display());
}

/// The seed's Table 1: where an update's time goes, for the hash set and
/// the red-black tree at 100% updates, on every construction (the bench
/// target `ptm_breakdown`, built with the feature `breakdown`; the timers
/// cost tens of nanoseconds each, so its throughput is not the main
/// table's). Writes `ptm-breakdown.json`.
fn table_1(b: &mut Bench<'_>) {
    let s = b.s;
    let keys = s.big();
    for kind in [SetKind::Hash, SetKind::Tree] {
        for cons in ALL_PTMS {
            with_ptm(
                s,
                cons,
                kind.replica_bytes(keys),
                SetJob {
                    b: &mut *b,
                    cons,
                    kind,
                    keys,
                    updates: &[100],
                },
            );
        }
    }
    println!();
    println!(
        "Table 1 (seed 000 §6): share of an update transaction's time, 100% updates, {keys} keys"
    );
    println!(
        "{:<6} {:<13} {:>3} {:>10} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "bench",
        "PTM",
        "thr",
        "updates/s",
        "us/update",
        "apply",
        "flush",
        "copy",
        "lambda",
        "wait",
        "other"
    );
    let mut json = Vec::new();
    for r in &b.rows {
        let d = r.tally.breakdown;
        let f = d.fractions();
        let other = (1.0 - f.iter().sum::<f64>()).max(0.0);
        let us = d.update_ns as f64 / 1e3 / d.updates.max(1) as f64;
        println!(
            "{:<6} {:<13} {:>3} {:>10} {:>9.2} {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}% {:>6.1}%",
            r.workload,
            r.cons.name(),
            r.threads,
            human(r.rate()),
            us,
            100.0 * f[0],
            100.0 * f[1],
            100.0 * f[2],
            100.0 * f[3],
            100.0 * f[4],
            100.0 * other
        );
        json.push(format!(
            "{{\"workload\":\"{}\",\"size\":{},\"construction\":\"{}\",\"threads\":{},\"updates\":{},\"update_ns\":{},\"apply_ns\":{},\"flush_ns\":{},\"copy_ns\":{},\"lambda_ns\":{},\"wait_ns\":{}}}",
            r.workload, r.size, r.cons.name(), r.threads, d.updates, d.update_ns, d.apply_ns, d.flush_ns, d.copy_ns, d.lambda_ns, d.wait_ns
        ));
    }
    let path = out_dir().join("ptm-breakdown.json");
    std::fs::write(
        &path,
        format!(
            "{{\"bench\":\"ptm-breakdown\",\"rows\":[{}]}}\n",
            json.join(",")
        ),
    )
    .expect("write ptm-breakdown.json");
    println!("wrote {}", path.display());
}

fn main() {
    let s = common::settings_or_exit("ptm", Settings::from_env());
    println!();
    println!(
        "ptm (seed 000 §6): backend {}, pool files in {}, {} s per point, threads {:?}{}",
        s.pmem.name(),
        s.dir.display(),
        s.secs,
        s.threads,
        if s.quick {
            " (quick: tree and hash set of 10^5 keys)"
        } else {
            ""
        }
    );
    let mut b = Bench {
        s: &s,
        rows: Vec::new(),
        mapping: String::new(),
    };
    if breakdown::ENABLED {
        table_1(&mut b);
        return;
    }
    for cons in ALL_PTMS
        .into_iter()
        .filter(|&c| s.runs("sps") && s.runs_cons(c))
    {
        let (_, mode) = with_ptm(&s, cons, 12 << 20, Sps { b: &mut b, cons });
        b.mapping = mode;
    }
    for cons in ALL_PTMS
        .into_iter()
        .chain([Cons::Puc])
        .filter(|&c| s.runs("queue") && s.runs_cons(c))
    {
        let (_, mode) = with_ptm(&s, cons, 4 << 20, QueueJob { b: &mut b, cons });
        b.mapping = mode;
    }
    let big = s.big();
    let sets: [(&str, SetKind, u64, &[u64]); 5] = [
        ("list", SetKind::List, 10_000, &UPDATES),
        ("tree", SetKind::Tree, big, &UPDATES),
        ("hash", SetKind::Hash, big, &UPDATES),
        ("tree10k", SetKind::Tree, 10_000, &[10]),
        ("hash1k", SetKind::Hash, 1_000, &[1]),
    ];
    for (name, kind, keys, updates) in sets {
        if !s.runs(name) {
            continue;
        }
        for cons in ALL_PTMS.into_iter().filter(|&c| s.runs_cons(c)) {
            with_ptm(
                &s,
                cons,
                kind.replica_bytes(keys),
                SetJob {
                    b: &mut b,
                    cons,
                    kind,
                    keys,
                    updates,
                },
            );
        }
    }

    println!("mapping: {}", b.mapping);
    println!();
    println!(
        "{:<6} {:<13} {:>8} {:<9} {:>3} {:>10} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9}  reference (issue 5, published C++, 2-core DRAM)",
        "bench", "param", "size", "PTM", "thr", "rate", "unit", "pwb/tx", "pfence/tx", "psync/tx", "copies/tx", "rollbk/tx"
    );
    for r in &b.rows {
        let (pwb, pfence, psync) = r.tally.counts.per_op(r.tally.txs);
        println!(
            "{:<6} {:<13} {:>8} {:<9} {:>3} {:>10} {:>8} {:>8.2} {:>9.2} {:>9.2} {:>9} {:>9}  {}",
            r.workload,
            r.param,
            r.size,
            r.cons.name(),
            r.threads,
            human(r.rate()),
            r.unit(),
            pwb,
            pfence,
            psync,
            per_tx(r.tally.event_per_tx("copies")),
            per_tx(r.tally.event_per_tx("rollbacks")),
            r.reference().unwrap_or("")
        );
    }
    println!();
    println!("ops/s counts transactions (an update is a remove and a re-insert, a lookup two contains); the references are the published C++ RedoOpt-PTM's and CX-PTM's.");
    if s.only.is_some() || s.ptms.is_some() {
        println!("a subset (PERDURE_BENCH_ONLY / PERDURE_BENCH_PTMS): no files written");
        return;
    }
    write_outputs(&b);
}
