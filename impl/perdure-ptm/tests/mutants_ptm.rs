//! Mutants that need a thread paused in a window a few steps wide, caught
//! by pausing it there (feature `mutants`; `MUTANTS.md` is the record).
//!
//! The crash explorer (`tests/shuttle_mutants_ptm.rs`) catches the mutants
//! of the flushes and fences. Three mutants only matter while the winner of
//! a `cur_comb` CAS is between its CAS and its `pwb(cur_comb)` + `psync`:
//! another thread must act inside that window, which random and PCT
//! schedules hit with vanishing probability (the other thread needs tens of
//! steps in it). Here the window is forced:
//!
//! 1. thread T0 runs an update on the Px86 simulator; the simulator's yield
//!    hook (called before every persistent-memory access) pauses T0 at its
//!    first access after `cur_comb` changed, i.e. right after its CAS;
//! 2. while T0 is paused, the test thread (T1) runs one operation, with a
//!    crash point captured after every persistence event and at its end;
//! 3. every crash image (up to 64 per point, seeded sample beyond) is
//!    reopened (null recovery) and the recovered object checked against
//!    what the history allows: T0's operation pending, T1's pending at the
//!    points inside it and returned at the last.
//!
//! | mutant | T0 | T1 | violation |
//! | --- | --- | --- | --- |
//! | `RedoReadWithoutSync` (Alg. 2 L13–L16) | Redo-PTM `add(1)` | `get()` returns 1 | an image recovers 0 |
//! | `RedoReleaseBeforeSync` (Alg. 3 L31) | Redo-PTM `enq(1)` | `enq(2)`, on the replica T0 superseded | an image recovers a torn queue |
//! | `CxReleaseBeforeSync` (§4) | CX-PTM `enq(1)` | `enq(2)` | not caught: equivalent as placed |
//!
//! Two more pause T0 in the middle of its simulation (its first access
//! after it wrote the queue's `head` or `tail`) instead, and check the
//! final state without a crash: `RedoNoUndoOnFailedCas` (T0 `deq()` on
//! `[5]`, T1 `enq(2)`) and `RedoReplayWithoutValidity` (2 states per
//! thread; T0 `enq(1)`, T1 three `enq`s during and three after). Neither
//! mutant is caught by them (see [`known_uncaught`]).
//!
//! Each is first run on the code as written (must pass), then with the
//! mutant. Prints a PERDURE-CHECK row `mutant:ptm/<name>` each: `pass` if
//! caught, `skip` saying "NOT CAUGHT" and why for the three known not to be,
//! `fail` (and the test fails) for any other miss.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

use perdure_check::explore::Call;
use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::{Pool, Sim, SimOptions};
use perdure_ptm::mutant::{self, Mutant};
use perdure_ptm::scenarios::{Construction, Counter, CxAnnotated, Object, Queue, Redo, THREADS};
use perdure_ptm::{Ptm, TxRead};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering::SeqCst};
use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// The paused thread, and how to read the word it is paused after a
/// change of (`cur_comb`, or a word the update's closure writes), per run.
static T0: Mutex<Option<ThreadId>> = Mutex::new(None);
type ReadCurComb = Box<dyn Fn() -> u64 + Send + Sync>;
static CUR_COMB: AtomicPtr<ReadCurComb> = AtomicPtr::new(std::ptr::null_mut());
static BEFORE: AtomicU64 = AtomicU64::new(0);
static PAUSED: AtomicBool = AtomicBool::new(false);
static RESUME: AtomicBool = AtomicBool::new(false);

std::thread_local! {
    static IN_GATE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The simulator's yield hook: on T0, once `cur_comb` differs from
/// `BEFORE`, wait for `RESUME`. (Reading `cur_comb` goes through the pool,
/// which calls this hook again: `IN_GATE` stops the recursion.)
fn gate() {
    if IN_GATE.with(|g| g.get()) || PAUSED.load(SeqCst) {
        return;
    }
    if *T0.lock().unwrap_or_else(|e| e.into_inner()) != Some(std::thread::current().id()) {
        return;
    }
    let p = CUR_COMB.load(SeqCst);
    if p.is_null() {
        return;
    }
    IN_GATE.with(|g| g.set(true));
    // SAFETY: set by `window` to a leaked box that is never freed.
    let now = (unsafe { &*p })();
    IN_GATE.with(|g| g.set(false));
    if now != BEFORE.load(SeqCst) {
        PAUSED.store(true, SeqCst);
        while !RESUME.load(SeqCst) {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// What T1 did, and the crash points captured during it.
struct Window {
    t1_result: Value,
    points: Vec<CrashPoint>,
}

/// Runs `t0` on T0 until just after its `cur_comb` CAS, then `t1` on this
/// thread with a crash point after every persistence event (and one at its
/// end); then lets T0 finish.
fn window<C: Construction>(c: &C, o: impl Object + Clone, t0: Call, t1: Call) -> Result<Window, String>
where
    C::P: Ptm + 'static,
{
    let pool = Pool::volatile("mutant-window", 32 << 10, Sim::new(SimOptions::default()))
        .map_err(|e| e.to_string())?;
    // Leaked: the gate reads `cur_comb` through it from a `'static` hook.
    let p: &'static C::P = Box::leak(Box::new(c.create(pool).map_err(|e| e.to_string())?));
    o.init(p).map_err(|e| e.to_string())?;
    let sim = c.pool(p).backend();
    *T0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    PAUSED.store(false, SeqCst);
    RESUME.store(false, SeqCst);
    let pool_ref: &'static Pool<Sim> = c.pool(p);
    let read = cur_comb_reader(pool_ref);
    BEFORE.store(read(), SeqCst);
    let old = CUR_COMB.swap(Box::into_raw(Box::new(read)), SeqCst);
    let _ = old; // leaked on purpose: a paused hook may still hold it
    if !sim.set_yield_hook(gate) {
        return Err("the simulator already has a yield hook".into());
    }
    let o0 = o.clone();
    let th = std::thread::spawn(move || {
        *T0.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::thread::current().id());
        let r = o0.apply(p, &t0);
        RESUME.store(true, SeqCst); // in case it never paused
        r
    });
    let start = Instant::now();
    while !PAUSED.load(SeqCst) {
        if th.is_finished() || start.elapsed() > Duration::from_secs(20) {
            RESUME.store(true, SeqCst);
            let _ = th.join();
            return Err("T0 was never paused after its cur_comb CAS".into());
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    let points = std::sync::Arc::new(Mutex::new(Vec::new()));
    {
        let points = points.clone();
        sim.set_crash_hook(move |_, view| points.lock().unwrap().push(view.capture()));
    }
    let t1_result = o.apply(p, &t1);
    sim.clear_crash_hook();
    let mut points = std::mem::take(&mut *points.lock().unwrap());
    points.push(sim.capture());
    RESUME.store(true, SeqCst);
    th.join()
        .map_err(|_| "T0 panicked".to_string())?
        .map_err(|e| format!("T0's operation failed: {e}"))?;
    Ok(Window {
        t1_result: t1_result.map_err(|e| format!("T1's operation failed: {e}"))?,
        points,
    })
}

/// Pauses T0 mid-simulation: Redo-PTM with 2 states per thread, the queue
/// holding `pre`, a no-op update so that the replica T0 takes needs no
/// replay; T0 runs `t0` and is paused at its first access after its
/// closure wrote the queue's `head` or `tail` in any replica; the test
/// thread runs `during`; T0 finishes; the test thread runs `after`.
/// Returns T0's result, the results of `during` and `after`, and the
/// queue's contents at the end.
fn pause_mid_simulation(
    pre: &[u64],
    t0: Call,
    during: &[Call],
    after: &[Call],
) -> Result<(Value, Vec<Value>, Result<Vec<u64>, String>), String> {
    let c = Redo::small("redo", 2);
    let pool = Pool::volatile("mutant-mid", 32 << 10, Sim::new(SimOptions::default()))
        .map_err(|e| e.to_string())?;
    let p: &'static <Redo as Construction>::P =
        Box::leak(Box::new(c.create(pool).map_err(|e| e.to_string())?));
    let o = Queue;
    o.init(p).map_err(|e| e.to_string())?;
    for &v in pre {
        o.apply(p, &Call::new("enq", vec![json!(v)]))?;
    }
    p.update_tx(|_| ()).map_err(|e| e.to_string())?;
    let h: u64 = p.read_tx(|tx| tx.root(0)).map_err(|e| e.to_string())?;
    let pool_ref: &'static Pool<Sim> = c.pool(p);
    let (base, len) = (pool_ref.data_offset() + 4096, p.region_len());
    let watched: Vec<u64> = (0..=THREADS as u64)
        .flat_map(|r| [base + r * len + h, base + r * len + h + 64])
        .collect();
    let read: ReadCurComb = Box::new(move || {
        // A fingerprint of the watched words.
        watched.iter().fold(0u64, |acc, &off| {
            let v = pool_ref.word(off).map(|w| w.load(SeqCst)).unwrap_or(0);
            acc.rotate_left(7) ^ v
        })
    });
    *T0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    PAUSED.store(false, SeqCst);
    RESUME.store(false, SeqCst);
    BEFORE.store(read(), SeqCst);
    let _old = CUR_COMB.swap(Box::into_raw(Box::new(read)), SeqCst);
    if !c.pool(p).backend().set_yield_hook(gate) {
        return Err("the simulator already has a yield hook".into());
    }
    let th = std::thread::spawn(move || {
        *T0.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::thread::current().id());
        let r = o.apply(p, &t0);
        RESUME.store(true, SeqCst);
        r
    });
    let start = Instant::now();
    while !PAUSED.load(SeqCst) {
        if th.is_finished() || start.elapsed() > Duration::from_secs(20) {
            RESUME.store(true, SeqCst);
            let _ = th.join();
            return Err("T0 was never paused in its simulation".into());
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    let mut results = Vec::new();
    for call in during {
        results.push(o.apply(p, call)?);
    }
    RESUME.store(true, SeqCst);
    let r0 = th
        .join()
        .map_err(|_| "T0 panicked".to_string())?
        .map_err(|e| format!("T0's operation failed: {e}"))?;
    for call in after {
        results.push(o.apply(p, call)?);
    }
    Ok((r0, results, queue_contents(p)))
}

/// `RedoNoUndoOnFailedCas`: T0's `deq()` on `[5]` is paused after writing
/// `head`; T1's `enq(2)` commits; T0's CAS cannot succeed, its replica is
/// rolled back (or, mutated, not) and brought forward by replaying T1's
/// log, which does not write `head`; T0 runs `deq()` again. It must return
/// 5 and leave `[2]`.
fn undo_after_failed_cas() -> Result<String, String> {
    let (r0, _, end) = pause_mid_simulation(
        &[5],
        Call::new("deq", vec![]),
        &[Call::new("enq", vec![json!(2)])],
        &[],
    )?;
    let end = end?;
    if r0 != json!(5) || end != [2] {
        return Err(format!(
            "deq() returned {r0} and left {end:?}, from [5] with enq(2) concurrent (expected 5, [2])"
        ));
    }
    Ok("Redo-PTM deq() on [5] paused mid-simulation, enq(2) committed meanwhile; deq() returned 5, [2] left".into())
}

/// `RedoReplayWithoutValidity`: 2 states per thread. T0's `enq(1)` is
/// paused mid-simulation holding a replica; T1 commits `enq(2)`, `enq(3)`,
/// `enq(4)` (T1's first state is reused by its third; T1's batches run
/// T0's request too); T0 finishes; T1's `enq(5)`, `enq(6)`, `enq(7)` take
/// the replica T0 left behind, whose replay meets the reused state. The
/// queue must hold the 7 values whole, in an order the history allows.
fn replay_of_reused_state() -> Result<String, String> {
    let enq = |v: u64| Call::new("enq", vec![json!(v)]);
    let (r0, _, end) = pause_mid_simulation(
        &[],
        enq(1),
        &[enq(2), enq(3), enq(4)],
        &[enq(5), enq(6), enq(7)],
    )?;
    let end = end?;
    let mut sorted = end.clone();
    sorted.sort_unstable();
    let others: Vec<u64> = end.iter().copied().filter(|&v| v != 1).collect();
    if r0 != Value::Null || sorted != [1, 2, 3, 4, 5, 6, 7] || others != [2, 3, 4, 5, 6, 7] {
        return Err(format!("the queue ended as {end:?} (enq(1) concurrent with enq(2), enq(3), enq(4), then enq(5), enq(6), enq(7))"));
    }
    Ok(format!("Redo-PTM (2 states per thread) enq(1) paused mid-simulation, 3 commits meanwhile, 3 after; the queue ended {end:?}"))
}

/// Reads `cur_comb` from the pool: the word the constructions keep 64 bytes
/// after their header (Redo-PTM and CX alike, `redo/mod.rs`, `cx/layout.rs`).
fn cur_comb_reader(pool: &'static Pool<Sim>) -> ReadCurComb {
    let off = pool.data_offset() + 64;
    Box::new(move || {
        pool.word(off)
            .map(|w| w.load(SeqCst))
            .unwrap_or(u64::MAX)
    })
}

/// Every checked image of every point reopened with `c`, and judged by
/// `ok(recovered, last)` (`last`: the point after T1 returned).
fn check_images<C: Construction>(
    c: &C,
    w: &Window,
    judge: impl Fn(&C::P, bool) -> Result<(), String>,
) -> Result<String, String> {
    let mut images = 0;
    for (i, cp) in w.points.iter().enumerate() {
        let last = i + 1 == w.points.len();
        let (_, it) = cp.images(64, 0x5eed ^ i as u64);
        for (k, img) in it.enumerate() {
            images += 1;
            let words = cp.materialize(&img, VolatileFill::Zeroed);
            let pool = Pool::volatile_from_words(&words, Sim::default()).map_err(|e| e.to_string())?;
            let verdict = match c.open(pool) {
                Err(e) => Err(format!("recovery failed: {e}")),
                Ok(p) => judge(&p, last),
            };
            if let Err(why) = verdict {
                return Err(format!(
                    "crash point {i} of {} (event {}), image {k}: {why} (T1 returned {})",
                    w.points.len(),
                    cp.event,
                    w.t1_result
                ));
            }
        }
    }
    Ok(format!(
        "{} crash points during T1's operation, {images} images",
        w.points.len()
    ))
}

/// `RedoReadWithoutSync`: T1's `get()` inside the window returns 1, so
/// every image after it must recover 1.
fn read_in_window() -> Result<String, String> {
    let c = Redo::small("redo", 4);
    let w = window(
        &c,
        Counter,
        Call::new("add", vec![json!(1)]),
        Call::new("get", vec![]),
    )?;
    if w.t1_result != json!(1) {
        return Err(format!("T1's get() returned {}, not 1", w.t1_result));
    }
    let summary = check_images(&c, &w, |p, last| {
        let v: u64 = p
            .read_tx(|tx| tx.load(tx.root(0)))
            .map_err(|e| e.to_string())?;
        match (v, last) {
            (1, _) | (0, false) => Ok(()),
            _ => Err(format!(
                "recovered the counter at {v} after a read returned 1 (T0's add(1) pending)"
            )),
        }
    })?;
    Ok(format!("Redo-PTM add(1) paused after its CAS, get() in the window; {summary}"))
}

/// The queue of [`Queue`] read raw: its values, or what is wrong with it.
fn queue_contents<P: Ptm>(p: &P) -> Result<Vec<u64>, String> {
    // Up to 7 values and a verdict, packed: bits 0..8 count, 8.. values
    // (each 8 bits); u64::MAX: torn (a null value, more than 7 nodes or a
    // cycle, or `tail` not the last node).
    let w: u64 = p
        .read_tx(|tx| {
            let q = tx.root(0);
            let (mut cur, tail) = (tx.load(q), tx.load(q + 64));
            let (mut n, mut packed, mut last) = (0u64, 0u64, 0u64);
            while cur != 0 {
                let v = tx.load(cur);
                if n == 7 || v == 0 || v > 255 {
                    return u64::MAX;
                }
                packed |= v << (8 + 8 * n);
                n += 1;
                last = cur;
                cur = tx.load(cur + 8);
            }
            if last != tail {
                return u64::MAX;
            }
            packed | n
        })
        .map_err(|e| e.to_string())?;
    if w == u64::MAX {
        return Err("the queue is torn (a node without its value, or the tail not at the last node)".into());
    }
    Ok((0..(w & 0xff)).map(|i| (w >> (8 + 8 * i)) & 0xff).collect())
}

/// `…ReleaseBeforeSync`: T1's `enq(2)` inside the window; every image must
/// recover a whole queue of T0's and T1's values (both pending inside
/// T1's operation; T1's returned at the last point).
fn enq_in_window<C: Construction>(c: &C, what: &str) -> Result<String, String> {
    let w = window(
        c,
        Queue,
        Call::new("enq", vec![json!(1)]),
        Call::new("enq", vec![json!(2)]),
    )?;
    let summary = check_images(c, &w, |p, last| {
        let got = queue_contents(p)?;
        let allowed: &[&[u64]] = if last {
            &[&[2], &[1, 2], &[2, 1]]
        } else {
            &[&[], &[1], &[2], &[1, 2], &[2, 1]]
        };
        if allowed.iter().any(|a| *a == got.as_slice()) {
            Ok(())
        } else {
            Err(format!("recovered the queue {got:?}"))
        }
    })?;
    Ok(format!("{what} enq(1) paused after its CAS, enq(2) in the window; {summary}"))
}

fn redo_enq() -> Result<String, String> {
    enq_in_window(&Redo::small("redo", 4), "Redo-PTM")
}

fn cx_enq() -> Result<String, String> {
    enq_in_window(
        &CxAnnotated {
            config: perdure_ptm::cx::Config {
                threads: THREADS,
                max_read_tries: 2,
                replay_window: 8,
                dirty_lines_per_replica: 32,
                undo_entries_per_thread: 64,
            },
        },
        "CX-PTM",
    )
}

/// Mutants these checks do not catch, and why (`MUTANTS.md`): reported as
/// `skip` rows saying so, not hidden, and not failing the build.
fn known_uncaught(m: Mutant) -> Option<&'static str> {
    match m {
        Mutant::CxReleaseBeforeSync => Some(
            "equivalent as placed: the CAS winner also holds the superseded replica shared (for retiring the queue nodes) until after its psync, so the replica cannot be taken exclusively in the window either way",
        ),
        Mutant::RedoNoUndoOnFailedCas => Some(
            "the next attempt replays the winner's physical redo log over the un-undone stores, and the winner's batch ran the loser's request too (it was announced before the winner's scan), so its log rewrites every word the loser wrote; a visible case needs the loser to announce after the winner's scan and both paused mid-simulation, which is not built",
        ),
        Mutant::RedoReplayWithoutValidity => Some(
            "the mutated run replays one reused state instead of copying (7 replays and 2 copies instead of 6 and 3) but its queue still ends whole; why the wrongly replayed replica does not show in the final state has not been established",
        ),
        _ => None,
    }
}

#[test]
fn window_mutants_are_caught() {
    let _guard = mutant::lock();
    let cases: [(Mutant, fn() -> Result<String, String>); 5] = [
        (Mutant::RedoReadWithoutSync, read_in_window),
        (Mutant::RedoReleaseBeforeSync, redo_enq),
        (Mutant::CxReleaseBeforeSync, cx_enq),
        (Mutant::RedoNoUndoOnFailedCas, undo_after_failed_cas),
        (Mutant::RedoReplayWithoutValidity, replay_of_reused_state),
    ];
    let mut missed = Vec::new();
    for (m, run) in cases {
        let t = Instant::now();
        mutant::set(None);
        let baseline = run();
        mutant::set(Some(m));
        let mutated = run();
        mutant::set(None);
        let caught = baseline.is_ok() && mutated.is_err();
        let text = |r: &Result<String, String>| match r {
            Ok(s) => format!("no violation ({s})"),
            Err(s) => s.clone(),
        };
        let uncaught = known_uncaught(m).filter(|_| !caught && baseline.is_ok());
        println!(
            "PERDURE-CHECK {}",
            serde_json::json!({
                "name": format!("mutant:ptm/{}", m.name()),
                "kind": "explore",
                "status": if caught { "pass" } else if uncaught.is_some() { "skip" } else { "fail" },
                "explored": format!(
                    "{}a thread paused in a window of the update (after its cur_comb CAS, or in its simulation), other operations run meanwhile, crash images or the final state checked; as written: {}; mutant: {}",
                    uncaught.map(|why| format!("NOT CAUGHT ({why}); ")).unwrap_or_default(),
                    text(&baseline),
                    text(&mutated)
                ),
                "seconds": t.elapsed().as_secs_f64(),
            })
        );
        if !caught && uncaught.is_none() {
            missed.push(format!("{}: as written {baseline:?}, mutant {mutated:?}", m.name()));
        }
    }
    assert!(missed.is_empty(), "not caught:\n{}", missed.join("\n"));
}
