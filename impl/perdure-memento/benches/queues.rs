//! The queue workloads of seed 001, §7.1 (its Figure 5): Memento's three
//! detectable Michael–Scott queues against the two queues of Friedman et
//! al. (PPoPP 2018), with write-backs and fences per operation.
//!
//! * Queues: MSQ-mmt-cas, MSQ-mmt-indel, MSQ-mmt-vol ([`perdure_memento::ds::msq`],
//!   each operation a root operation through [`Runtime`] and
//!   `Handle::run_root`, as an application runs them), DurableQ and LogQ
//!   ([`perdure_memento::baseline`]).
//! * Workloads: *enqueue-dequeue* (each iteration enqueues, then dequeues),
//!   and *enqueue-p%* for p = 20, 50, 80 (each operation enqueues with
//!   probability p, else dequeues). The queue is pre-filled first so that
//!   dequeues find items: the seed uses 10M items for 10 s runs; here 1M by
//!   default (1 s runs), 100k with `PERDURE_BENCH_QUICK=1` (0.2 s runs) and
//!   10M with `PERDURE_BENCH_FULL=1`; `PERDURE_BENCH_PREFILL=n` overrides.
//!   The share of dequeues that found the queue empty is reported.
//! * Threads: 1, 2, then powers of two up to `available_parallelism`
//!   (`PERDURE_BENCH_THREADS=1,2,4` overrides).
//! * One point, for profiling: `PERDURE_BENCH_ONLY=<queue>[/<workload>]`
//!   (e.g. `MSQ-mmt-indel/pairs`; workloads `pairs`, `enq20`, `enq50`,
//!   `enq80`; default `pairs`) runs that queue and workload alone for
//!   `PERDURE_BENCH_SECS` seconds (default 5) per thread count and prints
//!   its rows, with no claims, breakdown or files.
//! * `PERDURE_BENCH_ROOT_PAIRS=k` (MSQ-mmt, enqueue-dequeue): each root
//!   operation runs `k` pairs as a detectable loop instead of each enqueue
//!   and each dequeue being a root operation: the shape of Memento's own
//!   queue bench (one root operation per thread, its epoch guard repinned
//!   every 10,000 pairs), which `make bench-peers` matches with it.
//! * Backend: `Pmem` (clwb, else clflushopt, else clflush, from CPUID) on a
//!   pool file in `/dev/shm`, else the temporary directory
//!   (`PERDURE_BENCH_DIR` overrides). tmpfs has no DAX, so
//!   `Pool::create_with` falls back from `MAP_SYNC` to `MAP_SHARED`: the
//!   flushes are the real instructions, but they reach DRAM, not persistent
//!   memory — the numbers are an upper bound for Optane.
//! * One fresh pool per point; each point runs for a fixed time; counts are
//!   [`perdure_pm::stats`]' per-thread `pwb`/`pfence` counters summed over
//!   the worker threads, divided by operations (an enqueue-dequeue pair is
//!   two operations).
//!
//! Prints a table, then a *claims* section that checks the seed's §7.1
//! observations (3) and (4) on the numbers measured, then where an MSQ-mmt
//! operation's time and flushes go (the queue operation against the rest
//! of `run_root`, one thread), and writes `out/bench/queues.json` (one
//! record per point, the verdicts, the breakdown) and the plots
//! `out/bench/queues-<workload>.svg` (throughput against threads) and
//! `out/bench/queues-flushes.svg` (write-backs and fences per operation).
//! The output helpers are `perdure_harness::bench`.

use perdure_harness::bench::{self as common, Rng};
use perdure_harness::svg;
use perdure_memento::baseline::{DurableQueue, LogQueue, QueueConfig};
use perdure_memento::ds::decode_opt;
use perdure_memento::ds::msq::{Msq, MsqKind, QueueMmt};
use perdure_memento::{Checkpoint, ClearMode, ClockKind, Config, Memento, Runtime};
use perdure_pm::stats::{self, FlushCounts};
use perdure_pm::{Backend, Pmem, Pool};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

const LAYOUT: &str = "bench-queues";
const BASE: u64 = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Workload {
    Pairs,
    /// Enqueue with this probability, in percent.
    Enq(u64),
}

impl Workload {
    const ALL: [Workload; 4] = [
        Workload::Pairs,
        Workload::Enq(20),
        Workload::Enq(50),
        Workload::Enq(80),
    ];

    fn name(self) -> String {
        match self {
            Workload::Pairs => "enqueue-dequeue".into(),
            Workload::Enq(p) => format!("enqueue-{p}%"),
        }
    }

    fn key(self) -> String {
        match self {
            Workload::Pairs => "pairs".into(),
            Workload::Enq(p) => format!("enq{p}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Queue {
    Mmt(u8),
    Durable,
    Log,
}

const MSQ_CAS: Queue = Queue::Mmt(0);
const MSQ_INDEL: Queue = Queue::Mmt(1);
const MSQ_VOL: Queue = Queue::Mmt(2);
/// MSQ-mmt-vol with the seed's memento clearing (§6.3 as written) instead
/// of the O(1) floor the others use: what the runtime's commit costs.
const MSQ_VOL_ZERO: Queue = Queue::Mmt(3);
const QUEUES: [Queue; 6] = [
    MSQ_CAS,
    MSQ_INDEL,
    MSQ_VOL,
    MSQ_VOL_ZERO,
    Queue::Durable,
    Queue::Log,
];

impl Queue {
    fn msq_kind(self) -> Option<MsqKind> {
        match self {
            Queue::Mmt(0) => Some(MsqKind::Cas),
            Queue::Mmt(1) => Some(MsqKind::Indel),
            Queue::Mmt(_) => Some(MsqKind::Vol),
            _ => None,
        }
    }

    fn clear_mode(self) -> ClearMode {
        if self == MSQ_VOL_ZERO {
            ClearMode::Zero
        } else {
            ClearMode::Floor
        }
    }

    fn name(self) -> &'static str {
        match self {
            Queue::Durable => "DurableQ",
            Queue::Log => "LogQ",
            MSQ_VOL_ZERO => "MSQ-mmt-vol/zero-clear",
            q => q.msq_kind().map_or("?", MsqKind::name),
        }
    }
}

struct Settings {
    secs: f64,
    prefill: u64,
    threads: Vec<usize>,
    dir: PathBuf,
    pmem: Pmem,
    /// `PERDURE_BENCH_ROOT_PAIRS`: enqueue-dequeue pairs per root operation
    /// of the MSQ-mmt queues (0: each enqueue and each dequeue its own root
    /// operation, the default).
    root_pairs: u64,
}

impl Settings {
    fn from_env() -> Result<Settings, String> {
        let quick = common::quick();
        let full = common::full();
        let prefill = match common::env_value("PERDURE_BENCH_PREFILL")? {
            Some(n) => n,
            None if full => 10_000_000,
            None if quick => 100_000,
            None => 1_000_000,
        };
        let threads = common::thread_counts(64)?;
        let dir = common::bench_dir();
        let pmem = common::pmem()?;
        let root_pairs = common::env_value("PERDURE_BENCH_ROOT_PAIRS")?.unwrap_or(0);
        Ok(Settings {
            secs: if quick { 0.2 } else { 1.0 },
            prefill,
            threads,
            dir,
            pmem,
            root_pairs,
        })
    }

    fn pmem_name(&self) -> &'static str {
        self.pmem.name()
    }

    fn max_threads(&self) -> usize {
        self.threads.iter().copied().max().unwrap_or(1)
    }

    /// Heap for the pre-filled nodes (and LogQ's entries), plus what a run
    /// can grow by.
    fn heap_bytes(&self) -> u64 {
        ((256 << 20) + self.prefill * 160).next_multiple_of(1 << 20)
    }
}

/// What the worker threads of one point did.
#[derive(Default)]
struct Tally {
    ops: u64,
    deqs: u64,
    empty: u64,
    counts: FlushCounts,
    secs: f64,
}

impl Tally {
    /// The workers' tallies of one point: their sums, and the longest time.
    fn sum(tallies: Vec<Tally>) -> Tally {
        tallies.into_iter().fold(Tally::default(), |a, b| Tally {
            ops: a.ops + b.ops,
            deqs: a.deqs + b.deqs,
            empty: a.empty + b.empty,
            counts: a.counts + b.counts,
            secs: a.secs.max(b.secs),
        })
    }
}

struct Row {
    workload: Workload,
    queue: Queue,
    threads: usize,
    tally: Tally,
}

impl Row {
    fn mops(&self) -> f64 {
        self.tally.ops as f64 / self.tally.secs / 1e6
    }

    fn mpairs(&self) -> Option<f64> {
        (self.workload == Workload::Pairs).then(|| self.mops() / 2.0)
    }

    fn empty_share(&self) -> f64 {
        self.tally.empty as f64 / self.tally.deqs.max(1) as f64
    }
}

/// An operation through a thread's handle: `Some(v)` enqueues `v`, `None`
/// dequeues; the third argument numbers the thread's operations (LogQ's
/// `operationNum`). Returns the dequeued value (`None` for an enqueue or
/// an empty queue).
type Op<'a, H> = &'a (dyn Fn(&mut H, Option<u64>, u64) -> Option<u64> + Sync);

perdure_memento::memento! {
    /// The root memento of `PERDURE_BENCH_ROOT_PAIRS`: the loop's φ-node
    /// (the pair's index), then the queue's two sub-mementos, reused by
    /// every pair of the root operation.
    struct PairsMmt {
        round: Checkpoint<1>,
        queue: QueueMmt,
    }
}

/// `PERDURE_BENCH_ROOT_PAIRS=k`, enqueue-dequeue pairs on an MSQ-mmt
/// queue: each root operation runs `k` pairs as a detectable loop
/// (`Handle::detectable_loop`, its index checkpointed at the head of every
/// iteration, Requirement 3 of §2.3), so its commit, its reclamation
/// section and its fence at the end are paid once per `k` pairs. This is
/// the shape of Memento's own queue bench, whose threads each run one root
/// operation for the whole run, reuse one enqueue and one dequeue memento,
/// and repin their epoch guard every 10,000 operations (its `--relax`);
/// perdure's loop adds a checkpoint per pair that Memento's plain loop
/// does not have, which keeps the loop recoverable. Pre-fill as `measure`.
fn measure_root_pairs(
    s: &Settings,
    threads: usize,
    rt: &Runtime<'_, Pmem, PairsMmt>,
    q: &Msq,
) -> Tally {
    let k = s.root_pairs;
    let root = |h: &mut perdure_memento::Handle<'_, '_, Pmem, PairsMmt>, base: u64, pairs: u64| {
        h.run_root(|h, mmt, _| {
            let (round, queue) = (&mut mmt.round, &mut mmt.queue);
            h.detectable_loop(round, [0], |h, [i]| {
                if i == pairs {
                    return ControlFlow::Break(i);
                }
                q.enqueue(base + i, h, &mut queue.insert).expect("enqueue");
                let _ = q.dequeue(h, &mut queue.remove);
                ControlFlow::Continue([i + 1])
            })
        })
    };
    {
        let mut h = rt.handle(1).expect("handle");
        for i in 0..s.prefill {
            h.run_root(|h, mmt, _| {
                q.enqueue(i, h, &mut mmt.queue.insert).expect("enqueue");
                0
            });
        }
    }
    let stop = AtomicBool::new(false);
    let start = Barrier::new(threads + 1);
    let tallies: Vec<Tally> = std::thread::scope(|sc| {
        let workers: Vec<_> = (1..=threads)
            .map(|tid| {
                let (stop, start, root) = (&stop, &start, &root);
                sc.spawn(move || {
                    let mut h = rt.handle(tid).expect("handle");
                    let mut t = Tally::default();
                    let mut n = 0u64;
                    start.wait();
                    let c0 = stats::thread_counts();
                    let t0 = Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        let done = root(&mut h, ((tid as u64) << 40) | n, k);
                        debug_assert_eq!(done.result, k);
                        n += k;
                        t.ops += 2 * k;
                        t.deqs += k;
                    }
                    t.secs = t0.elapsed().as_secs_f64();
                    t.counts = stats::thread_counts() - c0;
                    t
                })
            })
            .collect();
        start.wait();
        std::thread::sleep(Duration::from_secs_f64(s.secs));
        stop.store(true, Ordering::Relaxed);
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    Tally::sum(tallies)
}

/// Pre-fills the queue from thread 1, then runs the workload on `threads`
/// threads for the configured time.
fn measure<H>(
    s: &Settings,
    workload: Workload,
    threads: usize,
    handle: &(dyn Fn(usize) -> H + Sync),
    op: Op<'_, H>,
) -> Tally {
    {
        let mut h = handle(1);
        for i in 0..s.prefill {
            op(&mut h, Some(i), i);
        }
    }
    let stop = AtomicBool::new(false);
    let start = Barrier::new(threads + 1);
    let tallies: Vec<Tally> = std::thread::scope(|sc| {
        let workers: Vec<_> = (1..=threads)
            .map(|tid| {
                let (stop, start) = (&stop, &start);
                sc.spawn(move || {
                    let mut h = handle(tid);
                    let mut coin = Rng::new(1 + tid as u64);
                    let mut t = Tally::default();
                    let mut n = 0u64;
                    let value = |n: u64| ((tid as u64) << 40) | n;
                    start.wait();
                    let c0 = stats::thread_counts();
                    let t0 = Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        let enqueue = match workload {
                            Workload::Pairs => {
                                op(&mut h, Some(value(n)), n);
                                n += 1;
                                t.ops += 1;
                                false
                            }
                            Workload::Enq(p) => coin.below(100) < p,
                        };
                        if enqueue {
                            op(&mut h, Some(value(n)), n);
                        } else {
                            t.deqs += 1;
                            if op(&mut h, None, n).is_none() {
                                t.empty += 1;
                            }
                        }
                        n += 1;
                        t.ops += 1;
                    }
                    t.secs = t0.elapsed().as_secs_f64();
                    t.counts = stats::thread_counts() - c0;
                    t
                })
            })
            .collect();
        start.wait();
        std::thread::sleep(Duration::from_secs_f64(s.secs));
        stop.store(true, Ordering::Relaxed);
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    Tally::sum(tallies)
}

/// A fresh pool file in the configured directory (removed with the
/// returned guard).
fn pool_file(s: &Settings) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(&s.dir).expect("a temporary directory for the pool");
    let path = dir.path().join("queue.pool");
    (dir, path)
}

/// Runs `f` on a fresh Memento runtime holding an empty MSQ of `kind`;
/// returns its result and how the pool was mapped.
fn with_msq<M: Memento, R>(
    s: &Settings,
    kind: MsqKind,
    clear: ClearMode,
    f: impl FnOnce(&Runtime<'_, Pmem, M>, &Msq) -> R,
) -> (R, String) {
    let (_dir, path) = pool_file(s);
    let cfg = Config {
        threads: s.max_threads(),
        heap_bytes: s.heap_bytes(),
        clock: ClockKind::Tsc,
    };
    let size = BASE + Runtime::<Pmem, M>::required_bytes(&cfg);
    let pool = Pool::create_with(&path, LAYOUT, size, s.pmem).expect("pool");
    let mut rt = Runtime::<Pmem, M>::create(&pool, BASE, &cfg).expect("runtime");
    rt.set_clear_mode(clear);
    let q = Msq::create(kind, &mut rt.handle(1).expect("handle")).expect("queue");
    rt.set_object_root(q.offset()).expect("object root");
    (f(&rt, &q), pool.mode().describe().into())
}

/// One point on a fresh pool file.
fn point(s: &Settings, queue: Queue, workload: Workload, threads: usize) -> (Tally, String) {
    if let Some(kind) = queue.msq_kind() {
        if s.root_pairs > 0 && workload == Workload::Pairs {
            return with_msq(s, kind, queue.clear_mode(), |rt, q| {
                measure_root_pairs(s, threads, rt, q)
            });
        }
        return with_msq(s, kind, queue.clear_mode(), |rt, q| {
            measure(
                s,
                workload,
                threads,
                &|tid| rt.handle(tid).expect("handle"),
                &|h, arg, _| {
                    let done = h.run_root(|h, mmt, _| q.run(h, mmt, arg).expect("queue operation"));
                    decode_opt(done.result)
                },
            )
        });
    }
    let (_dir, path) = pool_file(s);
    let cfg = QueueConfig {
        threads: s.max_threads(),
        heap_bytes: s.heap_bytes(),
    };
    let size = BASE + DurableQueue::<Pmem>::required_bytes(&cfg);
    let pool = Pool::create_with(&path, LAYOUT, size, s.pmem).expect("pool");
    let tally = if queue == Queue::Durable {
        let q = DurableQueue::create(&pool, BASE, &cfg).expect("queue");
        measure(
            s,
            workload,
            threads,
            &|tid| q.handle(tid).expect("handle"),
            &|h, arg, _| {
                match arg {
                    Some(v) => h.enqueue(v).map(|()| None),
                    None => h.dequeue(),
                }
                .expect("queue operation")
            },
        )
    } else {
        let q = LogQueue::create(&pool, BASE, &cfg).expect("queue");
        measure(
            s,
            workload,
            threads,
            &|tid| q.handle(tid).expect("handle"),
            &|h, arg, n| {
                match arg {
                    Some(v) => h.enqueue(v, n).map(|()| None),
                    None => h.dequeue(n),
                }
                .expect("queue operation")
            },
        )
    };
    (tally, pool.mode().describe().into())
}

/// Time and persistence instructions of `ops` root operations of one kind,
/// split between the queue operation itself and the rest of `run_root`
/// (the root-operation protocol of §2.5/§6.3: critical section, result and
/// clearing flag, `own_floor`, zeroing the root memento, status).
#[derive(Default)]
struct Split {
    ops: u64,
    total_ns: f64,
    inside_ns: f64,
    total: FlushCounts,
    inside: FlushCounts,
}

impl Split {
    fn line(&self, what: &str) -> String {
        let n = self.ops.max(1) as f64;
        let per = |c: u64| c as f64 / n;
        format!(
            "{what}: {:.0} ns/op, {:.2} pwb, {:.2} pfence | queue operation {:.0} ns, {:.2} pwb, {:.2} pfence | run_root protocol {:.0} ns ({:.0}%), {:.2} pwb, {:.2} pfence",
            self.total_ns / n,
            per(self.total.pwb),
            per(self.total.pfence),
            self.inside_ns / n,
            per(self.inside.pwb),
            per(self.inside.pfence),
            (self.total_ns - self.inside_ns) / n,
            100.0 * (self.total_ns - self.inside_ns) / self.total_ns,
            per(self.total.pwb - self.inside.pwb),
            per(self.total.pfence - self.inside.pfence),
        )
    }

    fn json(&self, what: &str) -> String {
        let n = self.ops.max(1) as f64;
        format!(
            "{{\"op\":{},\"ops\":{},\"ns_per_op\":{:.1},\"queue_op_ns\":{:.1},\"pwb_per_op\":{:.3},\"pfence_per_op\":{:.3},\"queue_op_pwb\":{:.3},\"queue_op_pfence\":{:.3}}}",
            common::json_str(what),
            self.ops,
            self.total_ns / n,
            self.inside_ns / n,
            self.total.pwb as f64 / n,
            self.total.pfence as f64 / n,
            self.inside.pwb as f64 / n,
            self.inside.pfence as f64 / n
        )
    }
}

/// Where an MSQ-mmt operation's time goes, one thread: `ops` enqueues
/// then `ops` dequeues, each timed inside and around `run_root`.
fn msq_split(s: &Settings, kind: MsqKind, ops: u64) -> [Split; 2] {
    with_msq(s, kind, ClearMode::Floor, |rt, q| {
        let mut h = rt.handle(1).expect("handle");
        [true, false].map(|enqueue| {
            let mut sp = Split {
                ops,
                ..Split::default()
            };
            let (c0, t0) = (stats::thread_counts(), Instant::now());
            for i in 0..ops {
                h.run_root(|h, mmt, _| {
                    let (a, t) = (stats::thread_counts(), Instant::now());
                    let r = q
                        .run(h, mmt, enqueue.then_some(i))
                        .expect("queue operation");
                    sp.inside_ns += t.elapsed().as_nanos() as f64;
                    sp.inside += stats::thread_counts() - a;
                    r
                });
            }
            sp.total_ns = t0.elapsed().as_nanos() as f64;
            sp.total = stats::thread_counts() - c0;
            sp
        })
    })
    .0
}

/// The measured throughput of every point, by (workload, queue, threads).
struct Results(BTreeMap<(Workload, Queue, usize), f64>);

impl Results {
    fn get(&self, w: Workload, q: Queue, t: usize) -> f64 {
        self.0.get(&(w, q, t)).copied().unwrap_or(f64::NAN)
    }
}

struct Claim {
    text: &'static str,
    holds: bool,
    detail: Vec<String>,
}

/// How much slower "at least as fast" tolerates: the machines perdure runs
/// on are shared, and repeated runs of one point differ by this much.
const NOISE: f64 = 0.95;

/// Observation (3) of §7.1: MSQ-mmt-vol ≥ DurableQ, and MSQ-mmt-vol ≥ the
/// other MSQ-mmt queues, at every point (within [`NOISE`]).
fn at_least(r: &Results, s: &Settings, text: &'static str, rivals: &[Queue]) -> Claim {
    let mut holds = true;
    let mut detail = Vec::new();
    for w in Workload::ALL {
        let mut parts = Vec::new();
        for &t in &s.threads {
            let vol = r.get(w, MSQ_VOL, t);
            for &q in rivals {
                let other = r.get(w, q, t);
                let ok = vol >= NOISE * other;
                holds &= ok;
                parts.push(format!(
                    "{t}T {:.3} vs {} {:.3} ({:.2}x){}",
                    vol,
                    q.name(),
                    other,
                    vol / other,
                    if ok { "" } else { " FAILS" }
                ));
            }
        }
        detail.push(format!("{}: {}", w.name(), parts.join("; ")));
    }
    Claim {
        text,
        holds,
        detail,
    }
}

/// How close "comparable" is: at least this share of the slower of
/// DurableQ and LogQ.
const COMPARABLE: f64 = 0.8;

/// Observation (4) of §7.1: MSQ-mmt-cas and -indel comparable with DurableQ
/// and LogQ for the dequeue-heavy workload (enqueue-20%), slower for the
/// enqueue-heavy one (enqueue-80%).
fn comparable_then_slower(r: &Results, s: &Settings) -> Claim {
    let mut holds = true;
    let mut detail = Vec::new();
    for (w, want_comparable) in [(Workload::Enq(20), true), (Workload::Enq(80), false)] {
        let mut parts = Vec::new();
        for &t in &s.threads {
            let floor = r.get(w, Queue::Durable, t).min(r.get(w, Queue::Log, t));
            for q in [MSQ_CAS, MSQ_INDEL] {
                let ratio = r.get(w, q, t) / floor;
                let comparable = ratio >= COMPARABLE;
                let ok = comparable == want_comparable;
                holds &= ok;
                parts.push(format!(
                    "{t}T {} {:.2}x{}",
                    q.name(),
                    ratio,
                    if ok { "" } else { " FAILS" }
                ));
            }
        }
        detail.push(format!(
            "{} (want {}): {}",
            w.name(),
            if want_comparable {
                "comparable"
            } else {
                "slower"
            },
            parts.join("; ")
        ));
    }
    Claim {
        text: "MSQ-mmt-cas/indel are comparable with DurableQ and LogQ for dequeue-heavy work (enqueue-20%) but slower for enqueue-heavy work (enqueue-80%) [ratio to the slower of DurableQ/LogQ; comparable = at least 0.8x]",
        holds,
        detail,
    }
}

fn write_plots(rows: &[Row], s: &Settings, out: &std::path::Path) -> Vec<PathBuf> {
    let mut written = Vec::new();
    for w in Workload::ALL {
        let series: Vec<svg::Series> = QUEUES
            .iter()
            .map(|&q| svg::Series {
                name: q.name().into(),
                points: rows
                    .iter()
                    .filter(|r| r.workload == w && r.queue == q)
                    .map(|r| (r.threads as f64, r.mops()))
                    .collect(),
            })
            .collect();
        let title = format!("{} ({}, pre-filled {})", w.name(), s.pmem_name(), s.prefill);
        let doc = svg::line_chart(&title, "threads", "throughput (M ops/s)", &series);
        let path = out.join(format!("queues-{}.svg", w.key()));
        std::fs::write(&path, doc).expect("write a plot");
        written.push(path);
    }
    let one = s.threads[0];
    let groups: Vec<String> = QUEUES.iter().map(|q| q.name().to_string()).collect();
    let per_op = |f: fn(&FlushCounts) -> u64| -> Vec<f64> {
        QUEUES
            .iter()
            .map(|&q| {
                rows.iter()
                    .find(|r| r.workload == Workload::Pairs && r.queue == q && r.threads == one)
                    .map_or(0.0, |r| {
                        f(&r.tally.counts) as f64 / r.tally.ops.max(1) as f64
                    })
            })
            .collect()
    };
    let series = vec![
        ("pwb / op".to_string(), per_op(|c| c.pwb)),
        ("pfence / op".to_string(), per_op(|c| c.pfence)),
    ];
    let title = format!("write-backs and fences per operation (enqueue-dequeue, {one} thread)");
    let path = out.join("queues-flushes.svg");
    std::fs::write(
        &path,
        svg::bar_chart(&title, "per operation", &groups, &series),
    )
    .expect("write a plot");
    written.push(path);
    written
}

/// `PERDURE_BENCH_ONLY`: one queue and workload, for a profiler.
fn only_point(s: &Settings, only: &str) -> Result<(), String> {
    let (qname, wkey) = only.split_once('/').unwrap_or((only, "pairs"));
    let q = QUEUES
        .iter()
        .copied()
        .find(|q| q.name() == qname)
        .ok_or_else(|| {
            let names: Vec<_> = QUEUES.iter().map(|q| q.name()).collect();
            format!("no queue {qname:?}; the queues are {}", names.join(", "))
        })?;
    let w = Workload::ALL
        .into_iter()
        .find(|w| w.key() == wkey)
        .ok_or_else(|| {
            format!("no workload {wkey:?}; the workloads are pairs, enq20, enq50, enq80")
        })?;
    let secs = common::env_secs("PERDURE_BENCH_SECS")?.unwrap_or(5.0);
    let s = Settings {
        secs,
        prefill: s.prefill,
        threads: s.threads.clone(),
        dir: s.dir.clone(),
        pmem: s.pmem,
        root_pairs: s.root_pairs,
    };
    for &t in &s.threads {
        let (tally, mode) = point(&s, q, w, t);
        let (pwb, pfence, _) = tally.counts.per_op(tally.ops);
        println!(
            "{} {} {t}T: {:.3} M ops/s, {:.2} pwb/op, {:.2} pfence/op ({mode})",
            q.name(),
            w.name(),
            tally.ops as f64 / tally.secs / 1e6,
            pwb,
            pfence
        );
    }
    Ok(())
}

fn main() {
    let s = common::settings_or_exit("queues", Settings::from_env());
    if let Ok(only) = std::env::var("PERDURE_BENCH_ONLY") {
        if let Err(e) = only_point(&s, &only) {
            eprintln!("queues bench: PERDURE_BENCH_ONLY={only}: {e}");
            std::process::exit(1);
        }
        return;
    }
    println!();
    println!(
        "queues (seed 001 §7.1): backend {}, pool files in {}, {} s per point, pre-filled with {} items, threads {:?}",
        s.pmem_name(),
        s.dir.display(),
        s.secs,
        s.prefill,
        s.threads
    );
    let mut rows = Vec::new();
    let mut mapping = String::new();
    for w in Workload::ALL {
        for &q in &QUEUES {
            for &t in &s.threads {
                let (tally, mode) = point(&s, q, w, t);
                mapping = mode;
                let row = Row {
                    workload: w,
                    queue: q,
                    threads: t,
                    tally,
                };
                eprintln!(
                    "  {:<16} {:<14} {}T  {:.3} M ops/s",
                    w.name(),
                    q.name(),
                    t,
                    row.mops()
                );
                rows.push(row);
            }
        }
    }
    println!("mapping: {mapping}");
    println!();
    println!(
        "{:<16} {:<14} {:>7} {:>10} {:>9} {:>9} {:>8} {:>9} {:>7}",
        "workload",
        "queue",
        "threads",
        "ops",
        "Mops/s",
        "Mpairs/s",
        "pwb/op",
        "pfence/op",
        "empty%"
    );
    for r in &rows {
        let (pwb, pfence, _) = r.tally.counts.per_op(r.tally.ops);
        println!(
            "{:<16} {:<14} {:>7} {:>10} {:>9.3} {:>9} {:>8.2} {:>9.2} {:>7.1}",
            r.workload.name(),
            r.queue.name(),
            r.threads,
            r.tally.ops,
            r.mops(),
            r.mpairs().map_or("-".into(), |p| format!("{p:.3}")),
            pwb,
            pfence,
            100.0 * r.empty_share()
        );
    }

    let results = Results(
        rows.iter()
            .map(|r| ((r.workload, r.queue, r.threads), r.mops()))
            .collect(),
    );
    let claims = [
        at_least(
            &results,
            &s,
            "MSQ-mmt-vol is at least as fast as DurableQ [at every point, within 5%]",
            &[Queue::Durable],
        ),
        at_least(
            &results,
            &s,
            "MSQ-mmt-vol is at least as fast as the other MSQ-mmt queues [at every point, within 5%]",
            &[MSQ_CAS, MSQ_INDEL],
        ),
        comparable_then_slower(&results, &s),
    ];
    println!();
    println!("claims (seed 001 §7.1, observations 3 and 4), on the numbers above:");
    for c in &claims {
        println!(
            "  [{}] {}",
            if c.holds { "HOLDS" } else { "DOES NOT HOLD" },
            c.text
        );
        for d in &c.detail {
            println!("      {d}");
        }
    }
    println!();
    println!("reference (the published Rust insert/delete queue, clwb on DRAM): about 0.8-1.0 M pairs/s with 1 thread, 1.3 M pairs/s with 2 threads");
    for q in [MSQ_INDEL, MSQ_VOL] {
        let ours: Vec<String> = [1, 2]
            .into_iter()
            .filter(|t| s.threads.contains(t))
            .map(|t| {
                format!(
                    "{t}T {:.3} M pairs/s",
                    results.get(Workload::Pairs, q, t) / 2.0
                )
            })
            .collect();
        println!("  ours, {}: {}", q.name(), ours.join(", "));
    }

    println!();
    println!("where MSQ-mmt's time goes (1 thread, each root operation timed inside and around run_root):");
    let split_ops = if common::quick() { 20_000 } else { 100_000 };
    let mut json_split = Vec::new();
    let mut vol_pair_ns = (0.0, 0.0);
    for q in [MSQ_CAS, MSQ_INDEL, MSQ_VOL] {
        let kind = q.msq_kind().expect("an MSQ-mmt queue");
        let [enq, deq] = msq_split(&s, kind, split_ops);
        println!("  {}", enq.line(&format!("{} enqueue", q.name())));
        println!("  {}", deq.line(&format!("{} dequeue", q.name())));
        json_split.push(enq.json(&format!("{} enqueue", q.name())));
        json_split.push(deq.json(&format!("{} dequeue", q.name())));
        if q == MSQ_VOL {
            let n = split_ops.max(1) as f64;
            vol_pair_ns = (
                (enq.total_ns + deq.total_ns) / n,
                (enq.inside_ns + deq.inside_ns) / n,
            );
        }
    }
    let durable_pair_ns = 1e3 / (results.get(Workload::Pairs, Queue::Durable, s.threads[0]) / 2.0);
    println!(
        "  an MSQ-mmt-vol enqueue-dequeue pair: {:.0} ns as root operations, {:.0} ns for the queue operations alone; a DurableQ pair: {:.0} ns ({} thread)",
        vol_pair_ns.0, vol_pair_ns.1, durable_pair_ns, s.threads[0]
    );

    let out = common::out_dir();
    let json_rows: Vec<String> = rows
        .iter()
        .map(|r| {
            let (pwb, pfence, psync) = r.tally.counts.per_op(r.tally.ops);
            format!(
                "{{\"workload\":{},\"queue\":{},\"threads\":{},\"seconds\":{:.4},\"ops\":{},\"mops\":{:.5},\"mpairs\":{},\"dequeues\":{},\"empty_dequeues\":{},\"pwb_per_op\":{:.4},\"pfence_per_op\":{:.4},\"psync_per_op\":{:.5}}}",
                common::json_str(&r.workload.name()),
                common::json_str(r.queue.name()),
                r.threads,
                r.tally.secs,
                r.tally.ops,
                r.mops(),
                r.mpairs().map_or("null".into(), |p| format!("{p:.5}")),
                r.tally.deqs,
                r.tally.empty,
                pwb,
                pfence,
                psync
            )
        })
        .collect();
    let json_claims: Vec<String> = claims
        .iter()
        .map(|c| {
            format!(
                "{{\"claim\":{},\"verdict\":{},\"detail\":[{}]}}",
                common::json_str(c.text),
                common::json_str(if c.holds { "HOLDS" } else { "DOES NOT HOLD" }),
                c.detail
                    .iter()
                    .map(|d| common::json_str(d))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        })
        .collect();
    let json = format!(
        "{{\"bench\":\"queues\",\"backend\":{},\"mapping\":{},\"seconds_per_point\":{},\"prefill\":{},\"threads\":{:?},\"rows\":[{}],\"claims\":[{}],\"msq_run_root_split\":[{}]}}\n",
        common::json_str(s.pmem_name()),
        common::json_str(&mapping),
        s.secs,
        s.prefill,
        s.threads,
        json_rows.join(","),
        json_claims.join(","),
        json_split.join(",")
    );
    let path = out.join("queues.json");
    std::fs::write(&path, json).expect("write results");
    println!();
    println!("wrote {}", path.display());
    for p in write_plots(&rows, &s, &out) {
        println!("wrote {}", p.display());
    }
}
