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
//!
//! CX-PTM's counterpart of the second (its replica released before the
//! `psync`) is equivalent while the winner's shared hold lasts, and is not a
//! mutant (`MUTANTS.md`, "Removed"); `cx_window_as_written` runs the same
//! window on CX-PTM as written.
//!
//! Two more hold threads elsewhere and check the state without a crash:
//!
//! * `RedoReplayWithoutValidity` (Alg. 3 L19): 2 states per thread; T0's
//!   `enq(1)` paused in its simulation (its first access after it wrote the
//!   queue's `head` or `tail`) holding a replica, three `enq`s committed
//!   meanwhile and three after; the replica T0 left behind is replayed
//!   over reused states, and the queue read after each commit is torn;
//! * `RedoNoUndoOnFailedCas` (Alg. 3 L38): on `[5]`, W's `enq(2)` held
//!   before its CAS, then L's `deq()` (whose batch is `enq(2)`, `deq()`)
//!   held before its CAS; W commits, L's CAS fails, and without the undo
//!   its `head` store survives the replay of W's log: the re-run `deq()`
//!   returns 2 and `[5]` is lost.
//!
//! Each is first run on the code as written (must pass), then with the
//! mutant. Prints a PERDURE-CHECK row `mutant:ptm/<name>` each: `pass` if
//! caught, `fail` (and the test fails) if not.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

use perdure_check::explore::Call;
use perdure_harness::ptm::scenarios::{
    Construction, Counter, CxAnnotated, Object, Queue, Redo, THREADS,
};
use perdure_harness::report::MutantTrial;
use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::{Pool, Sim, SimOptions};
use perdure_ptm::mutant::{self, Mutant};
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

/// Arms [`gate`] to pause at the first access after `watch()` changes,
/// starts T0 running `call` on `p`, and returns once T0 is paused (or an
/// error if it finished or timed out without pausing).
fn start_paused<P: Ptm + 'static, O: Object>(
    sim: &Sim,
    watch: ReadCurComb,
    o: O,
    p: &'static P,
    call: Call,
) -> Result<std::thread::JoinHandle<Result<Value, String>>, String> {
    *T0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    PAUSED.store(false, SeqCst);
    RESUME.store(false, SeqCst);
    BEFORE.store(watch(), SeqCst);
    // The previous reader is leaked on purpose: a paused hook may hold it.
    let _old = CUR_COMB.swap(Box::into_raw(Box::new(watch)), SeqCst);
    if !sim.set_yield_hook(gate) {
        return Err("the simulator already has a yield hook".into());
    }
    let th = std::thread::spawn(move || {
        *T0.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::thread::current().id());
        let r = o.apply(p, &call);
        RESUME.store(true, SeqCst); // in case it never paused
        r
    });
    let start = Instant::now();
    while !PAUSED.load(SeqCst) {
        if th.is_finished() || start.elapsed() > Duration::from_secs(20) {
            RESUME.store(true, SeqCst);
            let _ = th.join();
            return Err("T0 was never paused".into());
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    Ok(th)
}

/// What T1 did, and the crash points captured during it.
struct Window {
    t1_result: Value,
    points: Vec<CrashPoint>,
}

/// A PTM of `c` on a fresh 32 KiB simulated pool named `name`, leaked so
/// that hooks and threads may borrow it for the rest of the process.
fn leaked<C: Construction>(c: &C, name: &str) -> Result<&'static C::P, String> {
    let pool = Pool::volatile(name, 32 << 10, Sim::new(SimOptions::default()))
        .map_err(|e| e.to_string())?;
    Ok(Box::leak(Box::new(
        c.create(pool).map_err(|e| e.to_string())?,
    )))
}

/// Runs `t0` on T0 until just after its `cur_comb` CAS, then `t1` on this
/// thread with a crash point after every persistence event (and one at its
/// end); then lets T0 finish.
fn window<C: Construction>(
    c: &C,
    o: impl Object + Clone,
    t0: Call,
    t1: Call,
) -> Result<Window, String>
where
    C::P: Ptm + 'static,
{
    // Leaked: the gate reads `cur_comb` through it from a `'static` hook.
    let p = leaked(c, "mutant-window")?;
    o.init(p).map_err(|e| e.to_string())?;
    let sim = c.pool(p).backend();
    let th = start_paused(sim, cur_comb_reader(c.pool(p)), o.clone(), p, t0)?;
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

/// T0's result, the other calls' results, and the queue at the end (or
/// what was torn about it, and after which call).
type MidSimulation = (Value, Vec<Value>, Result<Vec<u64>, String>);

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
) -> Result<MidSimulation, String> {
    let c = Redo::small("redo", 2);
    let p = leaked(&c, "mutant-mid")?;
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
    let th = start_paused(c.pool(p).backend(), read, o, p, t0)?;
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
        // The replica each commit designates, read whole.
        if let Err(torn) = queue_contents(p) {
            return Ok((r0, results, Err(format!("after {}: {torn}", call.op))));
        }
    }
    Ok((r0, results, queue_contents(p)))
}

/// Threads paused before their `cur_comb` CAS (slot 0 and 1), for
/// [`lost_cas_over_wider_batch`].
static BEFORE_CAS: [Mutex<Option<ThreadId>>; 2] = [Mutex::new(None), Mutex::new(None)];
static FENCES_AT_ARM: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static HELD: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
static GO: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
static FENCE_SIM: AtomicPtr<Sim> = AtomicPtr::new(std::ptr::null_mut());

/// A yield hook: a thread in a `BEFORE_CAS` slot waits, at its first
/// access after the simulator's `pfence` count rose past the slot's
/// `FENCES_AT_ARM` (its fence before the CAS: the next access is the CAS),
/// until the slot's `GO`.
fn gate_before_cas() {
    let me = std::thread::current().id();
    let Some(k) =
        (0..2).find(|&k| *BEFORE_CAS[k].lock().unwrap_or_else(|e| e.into_inner()) == Some(me))
    else {
        return;
    };
    if HELD[k].load(SeqCst) {
        return;
    }
    let sim = FENCE_SIM.load(SeqCst);
    if sim.is_null() {
        return;
    }
    // SAFETY: set to a pool's simulator whose PTM is leaked, never freed.
    let fences = unsafe { &*sim }.counts().pfence;
    if fences > FENCES_AT_ARM[k].load(SeqCst) {
        HELD[k].store(true, SeqCst);
        while !GO[k].load(SeqCst) {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// `RedoNoUndoOnFailedCas`, the case where the un-undone stores survive:
/// the queue holds `[5]`; W runs `enq(2)` and is held before its CAS (its
/// batch: `enq(2)` alone); then L announces `deq()`, runs the batch
/// `enq(2)`, `deq()` and is held before its CAS; W commits; L's CAS fails,
/// it rolls back (mutated: does not), replays W's log (which does not write
/// the queue's `head`) and runs `deq()` again. It must return 5 and leave
/// `[2]`.
fn lost_cas_over_wider_batch() -> Result<String, String> {
    let c = Redo::small("redo", 4);
    let p = leaked(&c, "mutant-lost-cas")?;
    let o = Queue;
    // Set up on a thread of its own, so its thread id is free again.
    std::thread::spawn(move || -> Result<(), String> {
        o.init(p).map_err(|e| e.to_string())?;
        o.apply(p, &Call::new("enq", vec![json!(5)]))?;
        Ok(())
    })
    .join()
    .map_err(|_| "set-up panicked".to_string())??;
    let sim = c.pool(p).backend();
    FENCE_SIM.store(sim as *const Sim as *mut Sim, SeqCst);
    for k in 0..2 {
        *BEFORE_CAS[k].lock().unwrap_or_else(|e| e.into_inner()) = None;
        HELD[k].store(false, SeqCst);
        GO[k].store(false, SeqCst);
    }
    if !sim.set_yield_hook(gate_before_cas) {
        return Err("the simulator already has a yield hook".into());
    }
    let spawn = |k: usize, call: Call| {
        FENCES_AT_ARM[k].store(sim.counts().pfence, SeqCst);
        std::thread::spawn(move || {
            *BEFORE_CAS[k].lock().unwrap_or_else(|e| e.into_inner()) =
                Some(std::thread::current().id());
            let r = o.apply(p, &call);
            GO[k].store(true, SeqCst);
            r
        })
    };
    let wait_held = |k: usize, th: &std::thread::JoinHandle<Result<Value, String>>| {
        let start = Instant::now();
        while !HELD[k].load(SeqCst) {
            if th.is_finished() || start.elapsed() > Duration::from_secs(20) {
                GO[0].store(true, SeqCst);
                GO[1].store(true, SeqCst);
                return Err(format!("thread {k} was never held before its CAS"));
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        Ok(())
    };
    let w = spawn(0, Call::new("enq", vec![json!(2)]));
    wait_held(0, &w)?;
    let l = spawn(1, Call::new("deq", vec![]));
    wait_held(1, &l)?;
    GO[0].store(true, SeqCst);
    let rw = w.join().map_err(|_| "W panicked".to_string())??;
    GO[1].store(true, SeqCst);
    let rl = l.join().map_err(|_| "L panicked".to_string())??;
    let end = queue_contents(p)?;
    let stats = p.stats();
    if rw != Value::Null || rl != json!(5) || end != [2] {
        return Err(format!(
            "deq() returned {rl} and left {end:?}, from [5] with enq(2) concurrent (expected 5, [2]); {stats:?}"
        ));
    }
    if stats.rollbacks == 0 {
        return Err("L's CAS did not fail: the case was not reached".into());
    }
    Ok(format!(
        "Redo-PTM: enq(2) held before its CAS, deq() with the wider batch held before its CAS, enq(2) commits, deq()'s CAS fails ({} rollback); deq() returned 5, [2] left",
        stats.rollbacks
    ))
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
    Box::new(move || pool.word(off).map(|w| w.load(SeqCst)).unwrap_or(u64::MAX))
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
            let pool =
                Pool::volatile_from_words(&words, Sim::default()).map_err(|e| e.to_string())?;
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
    Ok(format!(
        "Redo-PTM add(1) paused after its CAS, get() in the window; {summary}"
    ))
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
        return Err(
            "the queue is torn (a node without its value, or the tail not at the last node)".into(),
        );
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
        if allowed.contains(&got.as_slice()) {
            Ok(())
        } else {
            Err(format!("recovered the queue {got:?}"))
        }
    })?;
    Ok(format!(
        "{what} enq(1) paused after its CAS, enq(2) in the window; {summary}"
    ))
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

/// A check: what it explored, or the violation.
type Check = fn() -> Result<String, String>;

#[test]
fn window_mutants_are_caught() {
    let _guard = mutant::lock();
    let cases: [(Mutant, Check); 4] = [
        (Mutant::RedoReadWithoutSync, read_in_window),
        (Mutant::RedoReleaseBeforeSync, redo_enq),
        (Mutant::RedoNoUndoOnFailedCas, lost_cas_over_wider_batch),
        (Mutant::RedoReplayWithoutValidity, replay_of_reused_state),
    ];
    let mut missed = Vec::new();
    for (m, run) in cases {
        let trial = MutantTrial::run(mutant::set, m, run, run);
        let caught = trial.caught();
        let text = |r: &Result<String, String>| match r {
            Ok(s) => format!("no violation ({s})"),
            Err(s) => s.clone(),
        };
        let explored = format!(
            "a thread paused in a window of the update (after its cur_comb CAS, or in its simulation), other operations run meanwhile, crash images or the final state checked; as written: {}; mutant: {}",
            text(&trial.baseline),
            text(&trial.mutated)
        );
        let status = if caught { "pass" } else { "fail" };
        trial.print_row(&format!("mutant:ptm/{}", m.name()), status, &explored);
        if !caught {
            missed.push(trial.missed(m.name()));
        }
    }
    assert!(missed.is_empty(), "not caught:\n{}", missed.join("\n"));
}

/// CX-PTM as written, in the window `RedoReleaseBeforeSync` needs: `enq(1)`
/// held right after its `cur_comb` CAS, `enq(2)` run meanwhile, every crash
/// image of both checked.
#[test]
fn cx_window_as_written() {
    let _guard = mutant::lock();
    mutant::set(None);
    if let Err(why) = cx_enq() {
        panic!("CX-PTM as written, enq(2) in enq(1)'s window: {why}");
    }
}

/// CX-PTM's reclamation counters, on one thread's 200 updates with a replay
/// window of 1: retired nodes are disposed of and, at the scans, freed, and
/// never more freed than disposed of. (The shuttle runs are too short for a
/// scan, so their `freed` stays 0.)
#[test]
fn cx_counts_disposed_and_freed_nodes() {
    use perdure_pm::NoFlush;
    use perdure_ptm::cx::Config;
    use perdure_ptm::{CxPtm, Transaction};
    let _guard = mutant::lock();
    mutant::set(None);
    let pool = Pool::volatile("cx-counters", 1 << 20, NoFlush).unwrap();
    let config = Config {
        threads: 2,
        max_read_tries: 0,
        replay_window: 1,
        dirty_lines_per_replica: 32,
        undo_entries_per_thread: 64,
    };
    let p = CxPtm::create(pool, &config).unwrap();
    for i in 0..200u64 {
        let was = p
            .update_tx(move |tx| {
                let was = tx.root(1);
                tx.set_root(1, i + 1);
                was
            })
            .unwrap();
        assert_eq!(was, i);
    }
    let s = p.stats();
    assert!(s.disposed > 0, "200 updates, no node disposed of: {s:?}");
    assert!(s.freed > 0, "200 updates, no node freed: {s:?}");
    assert!(
        s.freed <= s.disposed,
        "more nodes freed than disposed of: {s:?}"
    );
}

/// Redo-PTM's read-only transactions see the region's length, as updates do.
#[test]
fn redo_read_tx_knows_the_region_length() {
    use perdure_pm::NoFlush;
    use perdure_ptm::redo::{Config, RedoPtm};
    let _guard = mutant::lock();
    mutant::set(None);
    let pool = Pool::volatile("redo-region-len", 1 << 20, NoFlush).unwrap();
    let p = RedoPtm::create(
        pool,
        &Config {
            threads: 2,
            ..Config::small()
        },
    )
    .unwrap();
    let len = p.region_len();
    assert!(len > 8, "region of {len} bytes");
    assert_eq!(p.read_tx(|tx| tx.region_len()).unwrap(), len);
    assert_eq!(p.update_tx(|tx| tx.region_len()).unwrap(), len);
}

/// RedoOpt-PTM logs a word stored many times in one update once (its store
/// aggregation), Redo-PTM once per store.
#[test]
fn redo_opt_logs_a_repeated_store_once() {
    use perdure_pm::NoFlush;
    use perdure_ptm::redo::{Config, RedoPtm, Variant};
    use perdure_ptm::{PVar, Transaction};
    let _guard = mutant::lock();
    mutant::set(None);
    for (variant, expected) in [(Variant::Opt, 1), (Variant::Redo, 50)] {
        let pool = Pool::volatile("redo-opt-merge", 1 << 20, NoFlush).unwrap();
        let p = RedoPtm::create(
            pool,
            &Config {
                threads: 2,
                variant,
                ..Config::small()
            },
        )
        .unwrap();
        let a = p
            .update_tx(|tx| {
                let a = tx.alloc_zeroed(64).unwrap();
                tx.set_root(0, a);
                a
            })
            .unwrap();
        let before = p.stats().log_entries;
        p.update_tx(move |tx| {
            for i in 0..50u64 {
                tx.set(PVar::<u64>::at(a), i);
            }
        })
        .unwrap();
        let entries = p.stats().log_entries - before;
        assert_eq!(
            entries, expected,
            "{variant:?}: log entries of 50 stores to one word"
        );
        assert_eq!(p.read_tx(move |tx| tx.get(PVar::<u64>::at(a))).unwrap(), 49);
    }
}
