//! Test harness shared by the structures' unit tests: a runtime on the
//! simulated Px86 backend, thread-crash sweeps (a crash after every
//! persistence event of an operation, re-run by [`Handle::run_root`]) and
//! full-crash sweeps (a crash image at persistence events of a concurrent
//! run, recovered with [`Runtime::open`] and the cut-off operations resumed
//! with their mementos, as the crash explorer does).

use crate::compose::Memento;
use crate::runtime::{Config, Handle, Runtime};
use crate::ts::ClockKind;
use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::{Pool, Sim};
use std::sync::{Arc, Mutex};

/// The runtime the tests use.
pub(crate) type Rt<'p, M> = Runtime<'p, Sim, M>;

const BASE: u64 = 4096;
/// Five 256 KiB chunks: enough size classes for every structure's blocks.
const HEAP: u64 = 1536 << 10;
/// Crash points kept per full-crash sweep (each holds a copy of the pool).
const MAX_POINTS: u64 = 120;
/// Crash images recovered per crash point.
const IMAGES: u64 = 3;

fn config(threads: usize) -> Config {
    config_heap(threads, HEAP)
}

fn config_heap(threads: usize, heap_bytes: u64) -> Config {
    Config {
        threads,
        heap_bytes,
        clock: ClockKind::Counter,
    }
}

fn new_pool<M: Memento>(threads: usize) -> Pool<Sim> {
    new_pool_heap::<M>(threads, HEAP)
}

fn new_pool_heap<M: Memento>(threads: usize, heap_bytes: u64) -> Pool<Sim> {
    let size = BASE + Runtime::<Sim, M>::required_bytes(&config_heap(threads, heap_bytes));
    Pool::volatile("perdure-memento-test", size, Sim::default()).expect("pool")
}

/// Keeps injected thread crashes quiet.
pub(crate) fn quiet() {
    crate::runtime::quiet_thread_crashes();
}

/// A root operation's result word for "maybe a value".
pub(crate) fn opt(v: Option<u64>) -> u64 {
    super::encode_opt(v)
}

/// Runs `f` on a fresh runtime with `threads` threads.
pub(crate) fn with_runtime<M: Memento>(threads: usize, f: impl FnOnce(&Rt<'_, M>)) {
    with_runtime_heap(threads, HEAP, f)
}

/// [`with_runtime`] with a heap of `heap_bytes` (a structure whose blocks
/// come in many size classes needs a chunk per class).
pub(crate) fn with_runtime_heap<M: Memento>(
    threads: usize,
    heap_bytes: u64,
    f: impl FnOnce(&Rt<'_, M>),
) {
    let pool = new_pool_heap::<M>(threads, heap_bytes);
    let rt =
        Runtime::<Sim, M>::create(&pool, BASE, &config_heap(threads, heap_bytes)).expect("runtime");
    f(&rt);
}

/// Runs `op(h, n)` — one root operation, which returns the thread crashes it
/// survived — with a thread crash injected after `n` persistence events, for
/// n = 0, 1, … until the operation finishes without reaching the crash.
pub(crate) fn thread_crash_sweep<M: Memento>(
    h: &mut Handle<'_, '_, Sim, M>,
    mut op: impl FnMut(&mut Handle<'_, '_, Sim, M>, u64) -> u32,
) -> u64 {
    quiet();
    let mut n = 0;
    loop {
        h.crash_after(Some(n));
        let crashes = op(h, n);
        h.crash_after(None);
        if crashes == 0 {
            assert!(n > 0, "the operation issued no persistence event");
            return n;
        }
        n += 1;
    }
}

/// What a full-crash sweep covered.
#[derive(Debug)]
#[allow(dead_code)] // read through Debug in failure messages
pub(crate) struct Sweep {
    /// Crash points recovered.
    pub points: usize,
    /// Crash images recovered.
    pub images: usize,
}

/// One root operation of the workload: `(object, tid, index in the
/// thread's sequence, handle, root memento, resumed after a crash)` → the
/// result word.
pub(crate) type Op<'a, S, M> =
    &'a (dyn Fn(&S, usize, usize, &mut Handle<'_, '_, Sim, M>, &mut M, bool) -> u64 + Sync);

/// Runs `ops_per_thread[t]` root operations on each thread `t + 1`,
/// concurrently, on the simulator; at persistence events of the run takes
/// crash images, and for each one: reincarnates a pool holding it, opens the
/// runtime (calibration, OWN, clearing), attaches the structure, and runs
/// every thread's remaining operations one thread after the other — the cut
/// off one in recovery mode. `check(object, pool, results)` then sees each
/// thread's results: the pre-crash results of operations the image says
/// completed, and the resumed ones; its error fails the test with the crash
/// point, the image and the uninterrupted run's results.
pub(crate) fn full_crash_sweep<M: Memento + 'static, S: Sync>(
    ops_per_thread: &[usize],
    setup: impl Fn(&Rt<'_, M>) -> S,
    attach: impl Fn(&Pool<Sim>, u64) -> S,
    offset: impl Fn(&S) -> u64,
    op: Op<'_, S, M>,
    check: impl Fn(&S, &Pool<Sim>, &[Vec<u64>]) -> Result<(), String>,
) -> Sweep {
    quiet();
    let threads = ops_per_thread.len();
    let run = |stride: Option<u64>| {
        let pool = new_pool::<M>(threads);
        let rt = Runtime::<Sim, M>::create(&pool, BASE, &config(threads)).expect("runtime");
        let obj = setup(&rt);
        rt.set_object_root(offset(&obj)).expect("root");
        pool.psync();
        let start = pool.backend().counts().events;
        let points: Arc<Mutex<Vec<CrashPoint>>> = Arc::default();
        if let Some(stride) = stride {
            let points = points.clone();
            pool.backend().set_crash_hook(move |event, view| {
                if (event - start) % stride == 0 {
                    points.lock().unwrap().push(view.capture());
                }
            });
        }
        let results: Vec<Vec<u64>> = std::thread::scope(|s| {
            let hs: Vec<_> = (1..=threads)
                .map(|tid| {
                    let (rt, obj) = (&rt, &obj);
                    s.spawn(move || {
                        let mut h = rt.handle(tid).expect("handle");
                        (0..ops_per_thread[tid - 1])
                            .map(|i| h.run_root(|h, m, _| op(obj, tid, i, h, m, false)).result)
                            .collect()
                    })
                })
                .collect();
            hs.into_iter().map(|t| t.join().expect("thread")).collect()
        });
        pool.backend().clear_crash_hook();
        let end = pool.backend().counts().events;
        let mut points = std::mem::take(&mut *points.lock().unwrap());
        points.push(pool.backend().capture());
        (end - start, points, results)
    };
    // A first run measures the workload; the second keeps at most
    // MAX_POINTS evenly spaced crash points.
    let (events, _, _) = run(None);
    let (events, points, results) = run(Some(events.div_ceil(MAX_POINTS).max(1)));
    let mut sweep = Sweep {
        points: points.len(),
        images: 0,
    };
    for cp in &points {
        let (_, images) = cp.images(IMAGES, cp.event);
        for image in images {
            sweep.images += 1;
            let words = cp.materialize(&image, VolatileFill::Zeroed);
            let pool = Pool::volatile_from_words(&words, Sim::default()).expect("image");
            pool.reincarnate();
            let rt = Runtime::<Sim, M>::open_with(&pool, BASE, ClockKind::Counter)
                .unwrap_or_else(|e| panic!("crash event {}: open: {e}", cp.event));
            let obj = attach(&pool, rt.object_root());
            let mut after: Vec<Vec<u64>> = Vec::new();
            let completed: Vec<u64> = (1..=threads).map(|tid| rt.next_op(tid)).collect();
            for tid in 1..=threads {
                let done = completed[tid - 1] as usize;
                assert!(
                    done <= ops_per_thread[tid - 1],
                    "thread {tid}: op {done} next"
                );
                let mut r = results[tid - 1][..done].to_vec();
                let mut h = rt.handle(tid).expect("handle");
                for i in done..ops_per_thread[tid - 1] {
                    r.push(h.run_root(|h, m, _| op(&obj, tid, i, h, m, true)).result);
                }
                after.push(r);
            }
            if let Err(e) = check(&obj, &pool, &after) {
                panic!(
                    "crash after event {} ({} events in all), image {:?}: {e}\n\
                     operations completed before the crash: {completed:?}\n\
                     results after recovery: {after:?}\nresults without a crash: {results:?}",
                    cp.event, events, image.0
                );
            }
        }
    }
    sweep
}

/// A root operation's body on an insert/remove structure (a queue or a
/// stack): `Some(v)` inserts `v`, `None` removes; the result word is
/// [`encode_opt`](super::encode_opt) of the removed value.
pub(crate) type RunOp<'a, S, M> =
    &'a (dyn Fn(&S, &mut Handle<'_, '_, Sim, M>, &mut M, Option<u64>) -> u64 + Sync);

/// [`full_crash_sweep`] of an insert/remove structure on two threads:
/// thread `t` inserts `10t + 1` and `10t + 2`, then removes twice. Every
/// value inserted must be removed once or still be in `contents`, and
/// nothing else.
pub(crate) fn insert_remove_full_crash_sweep<M: Memento + 'static, S: Sync>(
    setup: impl Fn(&Rt<'_, M>) -> S,
    attach: impl Fn(&Pool<Sim>, u64) -> S,
    offset: impl Fn(&S) -> u64,
    run: RunOp<'_, S, M>,
    contents: impl Fn(&S, &Pool<Sim>) -> Vec<u64>,
) -> Sweep {
    full_crash_sweep::<M, S>(
        &[4, 4],
        setup,
        attach,
        offset,
        &|s, tid, i, h, m, _| run(s, h, m, (i < 2).then_some(10 * tid as u64 + i as u64 + 1)),
        |s, pool, results| {
            exactly_once(
                results
                    .iter()
                    .flat_map(|r| &r[2..])
                    .filter_map(|r| super::decode_opt(*r)),
                contents(s, pool),
                [11, 12, 21, 22],
            )
        },
    )
}

/// `Ok` if `removed` and `left` (what a structure still holds) together
/// hold every value of `inserted` exactly once and nothing else.
pub(crate) fn exactly_once(
    removed: impl IntoIterator<Item = u64>,
    left: impl IntoIterator<Item = u64>,
    inserted: impl IntoIterator<Item = u64>,
) -> Result<(), String> {
    let mut count = std::collections::BTreeMap::new();
    for v in removed.into_iter().chain(left) {
        *count.entry(v).or_insert(0i64) += 1;
    }
    for v in inserted {
        *count.entry(v).or_insert(0) -= 1;
    }
    count.retain(|_, c| *c != 0);
    if count.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "value → times seen minus times inserted: {count:?}"
        ))
    }
}

/// One root operation of [`two_thread_conservation`]: insert `Some(v)` or
/// remove; the result word.
pub(crate) type InsertOrRemove<'a, S, M> =
    &'a (dyn Fn(&S, &mut Handle<'_, '_, Sim, M>, Option<u64>) -> u64 + Sync);

/// Two threads on one structure, each alternating `op(Some(v))` (insert a
/// value of its own, `100_000 · tid + i`) and `op(None)` (remove), `n` of
/// each, with a thread crash injected at a varying point of every operation
/// if `crash_every` is given. Checks that the removed values and `left()`
/// hold every inserted value exactly once; returns each thread's removed
/// values in order.
pub(crate) fn two_thread_conservation<M: Memento, S: Sync>(
    rt: &Rt<'_, M>,
    obj: &S,
    n: u64,
    crash_every: Option<u64>,
    op: InsertOrRemove<'_, S, M>,
    left: impl Fn(&S) -> Vec<u64>,
) -> Vec<Vec<u64>> {
    quiet();
    let value = |tid: u64, i: u64| 100_000 * tid + i;
    let removed: Vec<Vec<u64>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (1..=2u64)
            .map(|tid| {
                sc.spawn(move || {
                    let mut h = rt.handle(tid as usize).expect("handle");
                    let mut out = Vec::new();
                    for i in 0..2 * n {
                        if let Some(k) = crash_every {
                            h.crash_after(Some((i * 3 + tid) % k));
                        }
                        let o = (i % 2 == 0).then_some(value(tid, i));
                        out.extend(super::decode_opt(op(obj, &mut h, o)));
                        h.crash_after(None);
                    }
                    out
                })
            })
            .collect();
        hs.into_iter().map(|t| t.join().expect("thread")).collect()
    });
    let inserted = (1..=2).flat_map(|tid| (0..2 * n).step_by(2).map(move |i| value(tid, i)));
    if let Err(e) = exactly_once(removed.iter().flatten().copied(), left(obj), inserted) {
        panic!("{e}");
    }
    removed
}
