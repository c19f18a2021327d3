//! What the two-word detectable-CAS location costs against the seed's
//! one-word one (issue 19: "the cost, side by side on the queue and stack
//! benchmarks"). The same code runs in both forms ([`OneWord`], the seed's
//! 8-byte word, [`UniqueCasAtomic`]; [`TwoWord`], the crate's default 16-byte
//! word and nonce, `cmpxchg16b`), so a row pair differs only in the form.
//!
//! * `cas-own`: the bare detectable CAS (`DetectableCasAtomic::cas`), each
//!   thread on a location of its own (its own line): `v → v + 1`, no
//!   contention, no helping. All of a thread's CASes run in one root
//!   operation with one reused CAS memento, so no `run_root` protocol is
//!   counted: the CAS alone.
//! * `cas-own/nofl`: `cas-own` on the `NoFlush` backend (write-backs and
//!   fences counted but not issued): the form's cost to the CPU alone, which
//!   the flushes otherwise hide.
//! * `cas-shared`: the same on one location shared by every thread (LOAD,
//!   then CAS from the value seen, retried from the value a failure
//!   returns): contention and LOADHELP. An operation is one successful CAS;
//!   `fail/op` counts the failed attempts. (Only with 2 or more threads.)
//!   Values only grow, so the one-word form's precondition holds in both.
//! * `MSQ-mmt-cas`: [`Msq`] enqueue-dequeue pairs, each operation a root
//!   operation (as `benches/queues.rs` runs it), the queue pre-filled;
//!   `Msq<OneWord>` (the default) and `Msq<TwoWord>`
//!   (`Msq::create_with_form`): `head` and the `next` links change form.
//! * `Treiber`: push-pop pairs, each a root operation, on this file's copy of
//!   `ds::treiber`'s push and pop (`Stack<F>`, line for line) with `top` in
//!   either form. **The one-word stack is a cost baseline only, not exactly
//!   once**: a pop re-installs a top value a push replaced, the ABA the
//!   two-word location exists for (`cas` module docs). This bench never
//!   crashes or recovers, and without recovery both forms behave alike;
//!   that is why the one-word stack lives here and not in `src/`. The
//!   elimination stack is a Treiber stack plus exchangers (insert/delete),
//!   so the form changes only its Treiber part; it is not run here.
//!
//! Each point runs on a fresh pool, for a fixed time; the points are
//! interleaved (every structure, thread count and form once per round) and
//! the median of the rounds is reported, so that a shared machine's drift
//! hits both forms alike. Default: 3 rounds of 0.15 s (about 10 s in all);
//! `PERDURE_BENCH_FULL=1`: 7 rounds of 1 s; `PERDURE_BENCH_ROUNDS` and
//! `PERDURE_BENCH_SECS` override; threads 1 and 2 (`PERDURE_BENCH_THREADS`).
//! `pwb/op` and `pfence/op` are [`perdure_pm::stats`]' per-thread counters
//! summed over the workers and all rounds, divided by operations.
//! Backend: `Pmem` on a pool file in `/dev/shm` (`PERDURE_BENCH_DIR`): the
//! flushes are real but reach DRAM.
//!
//! Prints a table with `2w/1w`, the two-word form's median throughput over
//! the one-word form's; writes `out/bench/cas_forms.json` and
//! `out/bench/cas_forms.svg`. Results: `docs/bench/cas-forms.md`.

use perdure_harness::bench as common;
use perdure_harness::svg;
use perdure_memento::ds::decode_opt;
use perdure_memento::ds::msq::{Msq, MsqKind, QueueForm, QueueMmt};
use perdure_memento::ds::treiber::{PopMmt, PushMmt, StackMmt};
use perdure_memento::ds::{encode_opt, NODE};
use perdure_memento::{
    CasForm, CasMmt, ClockKind, Config, DetectableCasAtomic, Handle, Memento, MementoError,
    OneWord, Runtime, TwoWord, UniqueCasAtomic,
};
use perdure_pm::stats::{self, FlushCounts};
use perdure_pm::{Backend, NoFlush, Pmem, Pool};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

const LAYOUT: &str = "bench-cas-forms";
const BASE: u64 = 4096;

/// A location form as this bench makes it.
trait Form: CasForm {
    const NAME: &'static str;
    /// The location at `off`, for a bench workload (see each impl).
    fn loc(off: u64) -> DetectableCasAtomic<Self>;
}

impl Form for OneWord {
    const NAME: &'static str = "one-word";
    fn loc(off: u64) -> UniqueCasAtomic {
        // SAFETY: on `cas-own` and `cas-shared` locations the values only
        // grow, so none is installed twice. On `Stack<OneWord>`'s top the
        // precondition does NOT hold (a pop re-installs a value): detectability
        // after a crash rests on it, and this bench never crashes, never
        // recovers and never reads a result back from a memento; without
        // recovery a help of a later CAS that wrote the same word is the help
        // that CAS needs, and the reclamation that keeps a popped node from
        // coming back while a reader is pinned is the runtime's, as in the
        // two-word stack. The one-word stack is a cost baseline only.
        unsafe { UniqueCasAtomic::at_unique(off) }
    }
}

impl Form for TwoWord {
    const NAME: &'static str = "two-word";
    fn loc(off: u64) -> DetectableCasAtomic {
        DetectableCasAtomic::at(off)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Structure {
    CasOwn,
    /// `cas-own` on the `NoFlush` backend: what the form costs the CPU
    /// when write-backs and fences are free.
    CasOwnNoFlush,
    CasShared,
    Msq,
    Treiber,
}

impl Structure {
    const ALL: [Structure; 5] = [
        Structure::CasOwn,
        Structure::CasOwnNoFlush,
        Structure::CasShared,
        Structure::Msq,
        Structure::Treiber,
    ];

    fn name(self) -> &'static str {
        match self {
            Structure::CasOwn => "cas-own",
            Structure::CasOwnNoFlush => "cas-own/nofl",
            Structure::CasShared => "cas-shared",
            Structure::Msq => "MSQ-mmt-cas",
            Structure::Treiber => "Treiber",
        }
    }

    fn runs_on(self, threads: usize) -> bool {
        self != Structure::CasShared || threads >= 2
    }
}

struct Settings {
    secs: f64,
    rounds: usize,
    prefill: u64,
    threads: Vec<usize>,
    dir: PathBuf,
    pmem: Pmem,
}

impl Settings {
    fn from_env() -> Result<Settings, String> {
        let full = common::full();
        let threads = common::env_list::<usize>("PERDURE_BENCH_THREADS")?.unwrap_or(vec![1, 2]);
        if threads.is_empty() || threads.contains(&0) {
            return Err(format!("thread counts must be at least 1: {threads:?}"));
        }
        let secs = common::env_secs("PERDURE_BENCH_SECS")?;
        let rounds = common::env_value::<usize>("PERDURE_BENCH_ROUNDS")?;
        Ok(Settings {
            secs: secs.unwrap_or(if full { 1.0 } else { 0.15 }),
            rounds: rounds.unwrap_or(if full { 7 } else { 3 }).max(1),
            prefill: if full { 100_000 } else { 10_000 },
            threads,
            dir: common::bench_dir(),
            pmem: common::pmem()?,
        })
    }

    fn max_threads(&self) -> usize {
        self.threads.iter().copied().max().unwrap_or(1)
    }
}

/// What the workers of one point did.
#[derive(Default, Clone, Copy)]
struct Tally {
    ops: u64,
    /// Failed CAS attempts (`cas-shared`).
    failed: u64,
    counts: FlushCounts,
    secs: f64,
}

impl Tally {
    fn add(self, b: Tally) -> Tally {
        Tally {
            ops: self.ops + b.ops,
            failed: self.failed + b.failed,
            counts: self.counts + b.counts,
            secs: self.secs.max(b.secs),
        }
    }

    fn mops(&self) -> f64 {
        self.ops as f64 / self.secs / 1e6
    }
}

/// Runs `work(handle, tid, stop)` on threads `1..=threads` for the
/// configured time, counting each worker's flushes and fences.
fn timed<H>(
    s: &Settings,
    threads: usize,
    handle: &(dyn Fn(usize) -> H + Sync),
    work: &(dyn Fn(&mut H, usize, &AtomicBool) -> Tally + Sync),
) -> Tally {
    let stop = AtomicBool::new(false);
    let start = Barrier::new(threads + 1);
    std::thread::scope(|sc| {
        let workers: Vec<_> = (1..=threads)
            .map(|tid| {
                let (stop, start) = (&stop, &start);
                sc.spawn(move || {
                    let mut h = handle(tid);
                    start.wait();
                    let (c0, t0) = (stats::thread_counts(), Instant::now());
                    let mut t = work(&mut h, tid, stop);
                    t.secs = t0.elapsed().as_secs_f64();
                    t.counts = stats::thread_counts() - c0;
                    t
                })
            })
            .collect();
        start.wait();
        std::thread::sleep(Duration::from_secs_f64(s.secs));
        stop.store(true, Ordering::Relaxed);
        workers
            .into_iter()
            .map(|w| w.join().expect("worker"))
            .fold(Tally::default(), Tally::add)
    })
}

/// Runs `f` on a fresh runtime on a fresh pool file on `backend`; returns
/// its result and how the pool was mapped.
fn with_runtime<B: Backend, M: Memento, R>(
    s: &Settings,
    backend: B,
    heap_bytes: u64,
    f: impl FnOnce(&Runtime<'_, B, M>) -> R,
) -> (R, String) {
    let dir = tempfile::tempdir_in(&s.dir).expect("a temporary directory for the pool");
    let path = dir.path().join("cas-forms.pool");
    let cfg = Config {
        threads: s.max_threads(),
        heap_bytes,
        clock: ClockKind::Tsc,
    };
    let size = BASE + Runtime::<B, M>::required_bytes(&cfg);
    let pool = Pool::create_with(&path, LAYOUT, size, backend).expect("pool");
    let rt = Runtime::<B, M>::create(&pool, BASE, &cfg).expect("runtime");
    (f(&rt), pool.mode().describe().into())
}

perdure_memento::memento! {
    /// The root memento of a thread's run of bare CASes: one CAS memento,
    /// reused by every CAS of the run.
    struct CasRunMmt {
        cas: CasMmt,
    }
}

/// `cas-own` (`shared` false) or `cas-shared`, on `backend`.
fn bare_cas<F: Form, B: Backend>(
    s: &Settings,
    backend: B,
    threads: usize,
    shared: bool,
) -> (Tally, String) {
    with_runtime::<B, CasRunMmt, _>(s, backend, 1 << 20, |rt| {
        let block = {
            let mut h = rt.handle(1).expect("handle");
            let block = h.alloc(NODE * (1 + threads as u64)).expect("locations");
            for i in 0..=threads as u64 {
                F::loc(block + NODE * i).init(rt.pool(), 0);
            }
            rt.pool().pfence();
            block
        };
        timed(
            s,
            threads,
            &|tid| rt.handle(tid).expect("handle"),
            &|h, tid, stop| {
                let loc = F::loc(block + if shared { 0 } else { NODE * tid as u64 });
                let mut t = Tally::default();
                h.run_root(|h, m, _| {
                    let mut cur = loc.load(h);
                    while !stop.load(Ordering::Relaxed) {
                        match loc.cas(cur, cur + 1, h, &mut m.cas) {
                            Ok(()) => {
                                cur += 1;
                                t.ops += 1;
                            }
                            Err(now) => {
                                cur = now;
                                t.failed += 1;
                            }
                        }
                    }
                    0
                });
                t
            },
        )
    })
}

/// Enqueue-dequeue pairs on MSQ-mmt-cas in form `F`, pre-filled.
fn msq<F: Form + QueueForm>(s: &Settings, threads: usize) -> (Tally, String) {
    with_runtime::<Pmem, QueueMmt, _>(s, s.pmem, heap_for(s.prefill), |rt| {
        let q = {
            let mut h = rt.handle(1).expect("handle");
            let q = Msq::<F>::create_with_form(MsqKind::Cas, &mut h).expect("queue");
            for i in 0..s.prefill {
                h.run_root(|h, m, _| q.run(h, m, Some(i)).expect("enqueue"));
            }
            q
        };
        timed(
            s,
            threads,
            &|tid| rt.handle(tid).expect("handle"),
            &|h, tid, stop| pairs(h, tid, stop, |h, m, op| q.run(h, m, op)),
        )
    })
}

/// Push-pop pairs on [`Stack`] in form `F`, pre-filled.
fn treiber<F: Form>(s: &Settings, threads: usize) -> (Tally, String) {
    with_runtime::<Pmem, StackMmt, _>(s, s.pmem, heap_for(s.prefill), |rt| {
        let st = {
            let mut h = rt.handle(1).expect("handle");
            let st = Stack::<F>::create(&mut h).expect("stack");
            for i in 0..s.prefill {
                h.run_root(|h, m, _| st.run(h, m, Some(i)).expect("push"));
            }
            st
        };
        timed(
            s,
            threads,
            &|tid| rt.handle(tid).expect("handle"),
            &|h, tid, stop| pairs(h, tid, stop, |h, m, op| st.run(h, m, op)),
        )
    })
}

/// Heap for `prefill` nodes and what a run can grow by.
fn heap_for(prefill: u64) -> u64 {
    ((64 << 20) + prefill * 128).next_multiple_of(1 << 20)
}

/// A worker of an insert-remove structure: insert, then remove, each a
/// root operation, until `stop`; two operations per pair.
fn pairs<M: Memento>(
    h: &mut Handle<'_, '_, Pmem, M>,
    tid: usize,
    stop: &AtomicBool,
    run: impl Fn(&mut Handle<'_, '_, Pmem, M>, &mut M, Option<u64>) -> Result<u64, MementoError>,
) -> Tally {
    let mut t = Tally::default();
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let v = ((tid as u64) << 40) | n;
        h.run_root(|h, m, _| run(h, m, Some(v)).expect("insert"));
        let got = h.run_root(|h, m, _| run(h, m, None).expect("remove"));
        debug_assert!(decode_opt(got.result).is_some(), "pre-filled");
        n += 1;
        t.ops += 2;
    }
    t
}

/// `ds::treiber::TreiberStack`'s push and pop, line for line, with `top`
/// of form `F` (module docs: with `OneWord`, a cost baseline that is not
/// exactly once).
struct Stack<F: Form> {
    top: DetectableCasAtomic<F>,
}

impl<F: Form> Stack<F> {
    fn create<B: Backend, M: Memento>(h: &mut Handle<'_, '_, B, M>) -> Result<Self, MementoError> {
        let off = h.alloc(NODE)?;
        let s = Stack { top: F::loc(off) };
        s.top.init(h.pool(), 0);
        h.pool().pfence();
        Ok(s)
    }

    fn push<B: Backend, M: Memento>(
        &self,
        v: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut PushMmt,
    ) -> Result<(), MementoError> {
        let [node] = mmt.node.checkpoint_with(h, |h| {
            let n = h.alloc(NODE)?;
            h.store_private(n, v);
            h.pwb(n, NODE);
            Ok::<_, MementoError>([n])
        })?;
        let first = self.top.load(h);
        h.detectable_loop(&mut mmt.top, [first], |h, [t]| {
            h.store(node + 8, t);
            h.flush(node, 16);
            match self.top.cas(t, node, h, &mut mmt.cas) {
                Ok(()) => ControlFlow::Break(()),
                Err(cur) => ControlFlow::Continue([cur]),
            }
        });
        Ok(())
    }

    fn pop<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut PopMmt,
    ) -> Option<u64> {
        let first = self.top.load(h);
        h.detectable_loop(&mut mmt.top, [first], |h, [t]| {
            let t_off = perdure_memento::word::offset_of(t);
            if t_off == 0 {
                return ControlFlow::Break(None);
            }
            let next = h.load(t_off + 8);
            match self.top.cas(t, next, h, &mut mmt.cas) {
                Ok(()) => {
                    let v = h.load(t_off);
                    h.retire(t_off);
                    ControlFlow::Break(Some(v))
                }
                Err(cur) => ControlFlow::Continue([cur]),
            }
        })
    }

    fn run<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B, StackMmt>,
        mmt: &mut StackMmt,
        op: Option<u64>,
    ) -> Result<u64, MementoError> {
        match op {
            Some(v) => self.push(v, h, &mut mmt.insert).map(|()| 0),
            None => Ok(encode_opt(self.pop(h, &mut mmt.remove))),
        }
    }
}

/// One point: `structure` in form `F` on `threads` threads.
fn point<F: Form + QueueForm>(
    s: &Settings,
    structure: Structure,
    threads: usize,
) -> (Tally, String) {
    match structure {
        Structure::CasOwn => bare_cas::<F, _>(s, s.pmem, threads, false),
        Structure::CasOwnNoFlush => bare_cas::<F, _>(s, NoFlush, threads, false),
        Structure::CasShared => bare_cas::<F, _>(s, s.pmem, threads, true),
        Structure::Msq => msq::<F>(s, threads),
        Structure::Treiber => treiber::<F>(s, threads),
    }
}

/// A (structure, form, threads) point over all rounds.
struct Row {
    structure: Structure,
    form: &'static str,
    threads: usize,
    rounds: Vec<Tally>,
}

impl Row {
    fn total(&self) -> Tally {
        self.rounds
            .iter()
            .copied()
            .fold(Tally::default(), Tally::add)
    }

    fn median_mops(&self) -> f64 {
        let mut m: Vec<f64> = self.rounds.iter().map(Tally::mops).collect();
        m.sort_by(f64::total_cmp);
        let n = m.len();
        if n % 2 == 1 {
            m[n / 2]
        } else {
            (m[n / 2 - 1] + m[n / 2]) / 2.0
        }
    }

    fn per_op(&self) -> (f64, f64, f64) {
        let t = self.total();
        let (pwb, pfence, _) = t.counts.per_op(t.ops);
        (pwb, pfence, t.failed as f64 / t.ops.max(1) as f64)
    }
}

/// The two-word form's median throughput over the one-word form's, at the
/// same structure and thread count.
fn ratio(rows: &[Row], r: &Row) -> f64 {
    let of = |form: &str| {
        rows.iter()
            .find(|o| o.structure == r.structure && o.threads == r.threads && o.form == form)
            .map_or(f64::NAN, Row::median_mops)
    };
    of(TwoWord::NAME) / of(OneWord::NAME)
}

fn main() {
    let s = common::settings_or_exit("cas_forms", Settings::from_env());
    println!();
    println!(
        "cas_forms (issue 19: the two-word detectable-CAS location against the seed's one-word one): backend {}, pool files in {}, {} rounds of {} s per point, threads {:?}, queue and stack pre-filled with {}",
        s.pmem.name(),
        s.dir.display(),
        s.rounds,
        s.secs,
        s.threads,
        s.prefill
    );
    let mut rows: Vec<Row> = Vec::new();
    for st in Structure::ALL {
        for &t in &s.threads {
            if st.runs_on(t) {
                for form in [OneWord::NAME, TwoWord::NAME] {
                    rows.push(Row {
                        structure: st,
                        form,
                        threads: t,
                        rounds: Vec::new(),
                    });
                }
            }
        }
    }
    let mut mapping = String::new();
    for round in 0..s.rounds {
        // Alternate which form goes first, so neither always runs warm.
        let flip = round % 2 == 1;
        for i in 0..rows.len() {
            let row = &rows[i ^ usize::from(flip)];
            let (tally, mode) = if row.form == OneWord::NAME {
                point::<OneWord>(&s, row.structure, row.threads)
            } else {
                point::<TwoWord>(&s, row.structure, row.threads)
            };
            if row.structure != Structure::CasOwnNoFlush {
                mapping = mode;
            }
            eprintln!(
                "  round {} {:<12} {:<9} {}T  {:.3} M ops/s",
                round + 1,
                row.structure.name(),
                row.form,
                row.threads,
                tally.mops()
            );
            rows[i ^ usize::from(flip)].rounds.push(tally);
        }
    }
    println!("mapping: {mapping}");
    println!();
    println!(
        "{:<12} {:<9} {:>7} {:>9} {:>8} {:>9} {:>8} {:>7}",
        "structure", "form", "threads", "Mops/s", "pwb/op", "pfence/op", "fail/op", "2w/1w"
    );
    for r in &rows {
        let (pwb, pfence, fail) = r.per_op();
        println!(
            "{:<12} {:<9} {:>7} {:>9.3} {:>8.2} {:>9.2} {:>8.2} {:>7}",
            r.structure.name(),
            r.form,
            r.threads,
            r.median_mops(),
            pwb,
            pfence,
            fail,
            if r.form == TwoWord::NAME {
                format!("{:.2}", ratio(&rows, r))
            } else {
                "-".into()
            }
        );
    }

    let out = common::out_dir();
    let json_rows: Vec<String> = rows
        .iter()
        .map(|r| {
            let (pwb, pfence, fail) = r.per_op();
            let t = r.total();
            let per_round: Vec<String> = r.rounds.iter().map(|t| format!("{:.5}", t.mops())).collect();
            format!(
                "{{\"structure\":{},\"form\":{},\"threads\":{},\"ops\":{},\"mops_median\":{:.5},\"mops_rounds\":[{}],\"pwb_per_op\":{:.4},\"pfence_per_op\":{:.4},\"failed_cas_per_op\":{:.4},\"two_over_one\":{}}}",
                common::json_str(r.structure.name()),
                common::json_str(r.form),
                r.threads,
                t.ops,
                r.median_mops(),
                per_round.join(","),
                pwb,
                pfence,
                fail,
                if r.form == TwoWord::NAME {
                    format!("{:.4}", ratio(&rows, r))
                } else {
                    "null".into()
                }
            )
        })
        .collect();
    let json = format!(
        "{{\"bench\":\"cas_forms\",\"backend\":{},\"mapping\":{},\"seconds_per_round\":{},\"rounds\":{},\"prefill\":{},\"threads\":{:?},\"rows\":[{}]}}\n",
        common::json_str(s.pmem.name()),
        common::json_str(&mapping),
        s.secs,
        s.rounds,
        s.prefill,
        s.threads,
        json_rows.join(",")
    );
    let path = out.join("cas_forms.json");
    std::fs::write(&path, json).expect("write results");
    println!();
    println!("wrote {}", path.display());

    let groups: Vec<String> = rows
        .iter()
        .filter(|r| r.form == OneWord::NAME)
        .map(|r| format!("{} {}T", r.structure.name(), r.threads))
        .collect();
    let series: Vec<(String, Vec<f64>)> = [OneWord::NAME, TwoWord::NAME]
        .into_iter()
        .map(|form| {
            let ys = rows
                .iter()
                .filter(|r| r.form == form)
                .map(Row::median_mops)
                .collect();
            (form.to_string(), ys)
        })
        .collect();
    let title = format!(
        "detectable CAS, one-word vs two-word location ({}, median of {} rounds)",
        s.pmem.name(),
        s.rounds
    );
    let path = out.join("cas_forms.svg");
    std::fs::write(
        &path,
        svg::bar_chart(&title, "throughput (M ops/s)", &groups, &series),
    )
    .expect("write a plot");
    println!("wrote {}", path.display());
}
