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
//!
//! Checks written for cargo-mutants' missed mutants (`MUTANTS.md`,
//! "cargo-mutants: the missed mutants") run only on the code as written.
//! Some use directed schedules of their own: `pause_before_accesses` holds
//! one thread before chosen persistent-memory accesses of its operation
//! (the simulator's yield hook, counted from 1) while the test thread
//! commits, e.g. between the two `cur_comb` loads of a CX read's try.

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

#[global_allocator]
static ALLOC: perdure_harness::heapcount::Counting = perdure_harness::heapcount::Counting;

/// The mutant lock, with no mutant switched on, and a fresh 1 MiB volatile
/// pool without flushes: how the unmutated checks below start. Keep the
/// guard for the whole check.
fn unmutated_pool(name: &str) -> (impl Sized, Pool<perdure_pm::NoFlush>) {
    let guard = mutant::lock();
    mutant::set(None);
    let pool = Pool::volatile(name, 1 << 20, perdure_pm::NoFlush).unwrap();
    (guard, pool)
}

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
/// every image after it must recover 1. On CX-PTM the read's own
/// `ensure_durable` (the published code's `PWB(&per->curComb); PSYNC()`
/// before a read returns) is what makes that hold.
fn read_in_window<C: Construction>(c: &C, what: &str) -> Result<String, String>
where
    C::P: Ptm + 'static,
{
    let w = window(
        c,
        Counter,
        Call::new("add", vec![json!(1)]),
        Call::new("get", vec![]),
    )?;
    if w.t1_result != json!(1) {
        return Err(format!("T1's get() returned {}, not 1", w.t1_result));
    }
    let summary = check_images(c, &w, |p, last| {
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
        "{what} add(1) paused after its CAS, get() in the window; {summary}"
    ))
}

fn redo_get() -> Result<String, String> {
    read_in_window(&Redo::small("redo", 4), "Redo-PTM")
}

fn cx_get() -> Result<String, String> {
    read_in_window(&cx_small(), "CX-PTM")
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

/// CX-PTM for the window checks: a small replay window and lists.
fn cx_small() -> CxAnnotated {
    CxAnnotated {
        config: perdure_ptm::cx::Config {
            threads: THREADS,
            max_read_tries: 2,
            replay_window: 8,
            dirty_lines_per_replica: 32,
            undo_entries_per_thread: 64,
        },
    }
}

fn cx_enq() -> Result<String, String> {
    enq_in_window(&cx_small(), "CX-PTM")
}

/// A check: what it explored, or the violation.
type Check = fn() -> Result<String, String>;

#[test]
fn window_mutants_are_caught() {
    let _guard = mutant::lock();
    let cases: [(Mutant, Check); 4] = [
        (Mutant::RedoReadWithoutSync, redo_get),
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

/// CX-PTM as written, in `RedoReadWithoutSync`'s window: `add(1)` held
/// right after its `cur_comb` CAS, before its `pwb(cur_comb)` + `psync`;
/// `get()` runs meanwhile, directly on the replica `cur_comb` designates
/// (read-locked since before the CAS), and returns 1, so every crash image
/// from its return on must recover 1: the read must make `cur_comb`
/// durable itself before it returns (`ensure_durable`).
#[test]
fn cx_read_in_window_as_written() {
    let _guard = mutant::lock();
    mutant::set(None);
    match cx_get() {
        Ok(s) => println!("{s}"),
        Err(why) => panic!("CX-PTM as written, get() in add(1)'s window: {why}"),
    }
}

/// CX-PTM's reclamation counters, on one thread's 200 updates with a replay
/// window of 1: retired nodes are disposed of and, at the scans, freed, and
/// never more freed than disposed of. (The shuttle runs are too short for a
/// scan, so their `freed` stays 0.)
#[test]
fn cx_counts_disposed_and_freed_nodes() {
    use perdure_ptm::cx::Config;
    use perdure_ptm::{CxPtm, Transaction};
    let (_guard, pool) = unmutated_pool("cx-counters");
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
    use perdure_ptm::redo::{Config, RedoPtm};
    let (_guard, pool) = unmutated_pool("redo-region-len");
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

/// Redo-PTM's read-only transactions refuse an offset at the region's end
/// (`PtmError::BadOffset`), as past it, and read the last word before it.
#[test]
fn redo_read_tx_refuses_the_region_end() {
    use perdure_ptm::PtmError;
    let _guard = mutant::lock();
    mutant::set(None);
    let p = small_redo("redo-region-end");
    let len = p.region_len();
    // What `try_load(off)` gave, as a word: 0 read, 1 `BadOffset` naming
    // `off` and the region's length, 2 any other error.
    let outcome = |off: u64| {
        p.read_tx(move |tx| match tx.try_load(off) {
            Ok(_) => 0u64,
            Err(PtmError::BadOffset { offset, len: l }) if (offset, l) == (off, len) => 1,
            Err(_) => 2,
        })
        .unwrap()
    };
    assert_eq!(outcome(len - 8), 0, "the region's last word");
    assert_eq!(outcome(len), 1, "a read at the region's end ({len} bytes)");
    assert_eq!(outcome(len + 8), 1, "a read past the region's end");
}

/// A CX-PUC of one word for two threads, on a 1 MiB pool without flushes.
fn two_thread_cx_puc(name: &str) -> perdure_ptm::CxPuc<perdure_pm::NoFlush, u64> {
    use perdure_ptm::cx::Config;
    let pool = Pool::volatile(name, 1 << 20, perdure_pm::NoFlush).unwrap();
    let config = Config {
        threads: 2,
        ..Config::small()
    };
    perdure_ptm::CxPuc::create(pool, &config, 0).unwrap()
}

/// CX-PUC's transactions see the region's length through the annotated
/// interface, reads (the working copy's words) as updates (its lines), as
/// Redo-PTM's do: `region_len` of `PucRead`, which `PucTx` passes on.
#[test]
fn cx_puc_transactions_know_the_region_length() {
    let _guard = mutant::lock();
    mutant::set(None);
    let p = two_thread_cx_puc("cx-puc-region-len");
    let len = p.region_len();
    assert!(len > 16, "region of {len} bytes");
    assert_eq!(p.read_tx(|tx| tx.region_len()).unwrap(), len, "a read");
    assert_eq!(p.update_tx(|tx| tx.region_len()).unwrap(), len, "an update");
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

/// A two-thread Redo-PTM of the small configuration on a 1 MiB volatile pool.
fn small_redo(name: &str) -> perdure_ptm::RedoPtm<perdure_pm::NoFlush> {
    let pool = Pool::volatile(name, 1 << 20, perdure_pm::NoFlush).unwrap();
    let config = perdure_ptm::redo::Config {
        threads: 2,
        ..perdure_ptm::redo::Config::small()
    };
    perdure_ptm::RedoPtm::create(pool, &config).unwrap()
}

/// `Ptm::events` reports the Redo family's counters under their names:
/// the bench prints them per point (issue 17's profiles read them), and
/// nothing in the crate reads them back, so only a direct check can tell a
/// wrong list.
#[test]
fn redo_events_count_its_commits() {
    use perdure_ptm::Transaction;
    let _guard = mutant::lock();
    mutant::set(None);
    let p = small_redo("redo-events");
    let before = p.stats().commits;
    for i in 0..7u64 {
        p.update_tx(move |tx| tx.set_root(0, i)).unwrap();
    }
    let events = p.events();
    let get = |name: &str| events.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    assert_eq!(get("commits"), Some(before + 7), "{events:?}");
    for name in ["helped", "copies", "replays", "rollbacks"] {
        assert!(get(name).is_some(), "{name} missing from {events:?}");
    }
}

/// Redo-PTM frees the requests it retires once no hazard pointer names
/// them (`reclaim`, after each `publish`): each update's closure holds a
/// clone of one `Arc`, so its count is the requests still alive. One
/// thread, no helper: at most the current request and the one retired by
/// this update may live. A `reclaim` that keeps what it should free (or
/// frees what a hazard pointer names) shows here as a count that grows
/// with the updates.
#[test]
fn redo_frees_retired_requests() {
    use perdure_ptm::Transaction;
    use std::sync::Arc;
    let _guard = mutant::lock();
    mutant::set(None);
    let p = small_redo("redo-reclaim");
    let token = Arc::new(());
    for i in 0..50u64 {
        let t = Arc::clone(&token);
        p.update_tx(move |tx| {
            let _ = &t;
            tx.set_root(0, i)
        })
        .unwrap();
    }
    let alive = Arc::strong_count(&token) - 1;
    assert!(alive <= 2, "{alive} of 50 requests still alive");
    drop(p);
    assert_eq!(Arc::strong_count(&token), 1, "requests leaked after drop");
}

/// The strong trylock's public view of itself: `threads` is its number of
/// read-indicator slots, and `state` decodes the writer word (a free lock,
/// one held exclusively, one downgraded or marked read-only). Nothing in
/// the crate reads either, so only a direct check can tell a wrong answer;
/// `Trying` (an abandoned `HLOCK`) needs two threads: `loom_rwlock`'s
/// `an_abandoned_attempt_reads_as_trying`.
#[test]
fn the_rwlock_reports_its_threads_and_state() {
    use perdure_ptm::StrongTryRwLock;
    let state = |l: &StrongTryRwLock| format!("{:?}", l.state());
    for n in [1, 3] {
        assert_eq!(StrongTryRwLock::new(n).threads(), n);
    }
    let l = StrongTryRwLock::new(3);
    assert_eq!(state(&l), "NoLock", "a new lock");
    assert!(l.exclusive_try_lock());
    assert_eq!(state(&l), "Exclusive");
    l.downgrade();
    assert_eq!(state(&l), "ReadOnly", "downgraded");
    l.downgrade_unlock();
    assert_eq!(state(&l), "NoLock", "after downgrade_unlock");
    assert!(l.shared_try_lock(2));
    assert_eq!(state(&l), "NoLock", "readers leave the writer word alone");
    l.shared_unlock(2);
    l.set_read_lock();
    assert_eq!(state(&l), "ReadOnly", "marked read-only");
    l.downgrade_unlock();
    assert!(l.exclusive_try_lock());
    l.exclusive_unlock();
    assert_eq!(state(&l), "NoLock", "after exclusive_unlock");
}

/// The configurations' `small()` are what their docs promise (CX: 4
/// threads, a window of 32 nodes, 1 Ki dirty lines and undo entries;
/// Redo: 4 threads, 16 states, 4 Ki log entries, 1 Ki dirty lines), which
/// tests and examples size their pools by.
#[test]
fn small_configs_are_the_documented_sizes() {
    let cx = perdure_ptm::cx::Config::small();
    assert_eq!(
        (
            cx.threads,
            cx.max_read_tries,
            cx.replay_window,
            cx.dirty_lines_per_replica,
            cx.undo_entries_per_thread
        ),
        (4, 10, 32, 1024, 1024),
        "{cx:?}"
    );
    let redo = perdure_ptm::redo::Config::small();
    assert_eq!(
        (
            redo.threads,
            redo.states_per_thread,
            redo.log_entries_per_thread,
            redo.dirty_lines_per_replica,
            redo.max_read_tries
        ),
        (4, 16, 4096, 1024, 10),
        "{redo:?}"
    );
}

/// The documented bounds, computed by hand for two threads. CX's
/// `max_retained_nodes` is `N·(replay_window + scan threshold) + 7N`, with
/// a scan threshold of `2·(5 + 2)·N + 16` (`cx/queue.rs`). Redo's
/// `volatile_bytes` is `N·(24·log + 8) + N·RSIZE·(40 + 16·N) + 8·ring +
/// (N+1)·(128·(N+1) + 8·dirty + 96) + 64·N`, and RedoOpt adds its hash
/// sets of 16-byte slots, `N·16·pow2(2·log) + (N+1)·16·pow2(2·dirty)`
/// (`WordSet::bytes_for`). The PTMs' `volatile_bytes` report these; the
/// other checks (`redo_variants.rs`, `cx_basic.rs`, not in the mutation
/// tier) only compare with them.
#[test]
fn configs_report_their_documented_bounds() {
    use perdure_ptm::redo::Variant;
    let cx = perdure_ptm::cx::Config {
        threads: 2,
        replay_window: 64,
        ..perdure_ptm::cx::Config::small()
    };
    assert_eq!(cx.max_retained_nodes(), 2 * (64 + 44) + 7 * 2, "{cx:?}");
    let n = 2u64;
    let (log, dirty, rsize) = (4096u64, 1024u64, 16u64);
    let redo_bytes = n * (24 * log + 8)
        + n * rsize * (40 + 16 * n)
        + 8 * (n * rsize).next_power_of_two()
        + (n + 1) * (128 * (n + 1) + 8 * dirty + 96)
        + 64 * n;
    let sets =
        n * 16 * (2 * log).next_power_of_two() + (n + 1) * 16 * (2 * dirty).next_power_of_two();
    for (variant, expected) in [
        (Variant::Redo, redo_bytes),
        (Variant::Timed, redo_bytes),
        (Variant::Opt, redo_bytes + sets),
    ] {
        let config = perdure_ptm::redo::Config {
            threads: 2,
            variant,
            ..perdure_ptm::redo::Config::small()
        };
        assert_eq!(
            (
                config.log_entries_per_thread,
                config.dirty_lines_per_replica,
                config.states_per_thread
            ),
            (log as usize, dirty as usize, rsize as usize)
        );
        assert_eq!(config.volatile_bytes(), expected, "{variant:?}");
    }
}

/// Each handle names the thread id it claimed (`Handle::tid`): two
/// handles of a two-thread PTM hold ids 0 and 1, and a dropped handle's id
/// is claimed again.
#[test]
fn handles_report_their_thread_ids() {
    let _guard = mutant::lock();
    mutant::set(None);
    let p = small_redo("handle-tids");
    let (a, b) = (p.handle().unwrap(), p.handle().unwrap());
    let mut tids = [a.tid(), b.tid()];
    tids.sort_unstable();
    assert_eq!(tids, [0, 1], "the thread ids of two handles");
    let freed = b.tid();
    drop(b);
    assert_eq!(p.handle().unwrap().tid(), freed, "a dropped handle's id");
}

/// `RedoPtm::variant` is the variant it was created with.
#[test]
fn redo_reports_its_variant() {
    use perdure_pm::NoFlush;
    use perdure_ptm::redo::{Config, RedoPtm, Variant};
    let _guard = mutant::lock();
    mutant::set(None);
    for variant in Variant::ALL {
        let pool = Pool::volatile("redo-variant", 1 << 20, NoFlush).unwrap();
        let config = Config {
            threads: 2,
            variant,
            ..Config::small()
        };
        assert_eq!(RedoPtm::create(pool, &config).unwrap().variant(), variant);
    }
}

/// An uncontended read-only transaction of CX-PTM runs directly on the
/// designated replica (R{1}, `CxStats::reads_direct`); only with no direct
/// tries (`max_read_tries` 0) is it published as a node (R{2}).
#[test]
fn cx_reads_run_directly_when_uncontended() {
    use perdure_pm::NoFlush;
    use perdure_ptm::cx::Config;
    use perdure_ptm::{CxPtm, Transaction};
    let _guard = mutant::lock();
    mutant::set(None);
    for (tries, expected) in [(10, (3, 0)), (0, (0, 3))] {
        let pool = Pool::volatile("cx-direct-reads", 1 << 20, NoFlush).unwrap();
        let config = Config {
            threads: 2,
            max_read_tries: tries,
            ..Config::small()
        };
        let p = CxPtm::create(pool, &config).unwrap();
        p.update_tx(|tx| tx.set_root(1, 7)).unwrap();
        for _ in 0..3 {
            assert_eq!(p.read_tx(|tx| tx.root(1)).unwrap(), 7);
        }
        let s = p.stats();
        assert_eq!(
            (s.reads_direct, s.reads_published),
            expected,
            "max_read_tries {tries}: (direct, published) reads of 3: {s:?}"
        );
    }
}

/// An uncontended read-only transaction of Redo-PTM runs directly on the
/// current replica (`RedoStats::reads_direct`); with no direct tries first
/// (`max_read_tries` 0) it is published, then, with no updater to serve it
/// and `cur_comb` not two states on, still runs directly (Algorithm 3's
/// R{2} tries before it waits). Each read runs on a thread of its own
/// watched for 30 s: a reader that waits for an updater where there is
/// none never returns.
#[test]
fn redo_reads_run_directly_when_uncontended() {
    use perdure_pm::NoFlush;
    use perdure_ptm::redo::{Config, RedoPtm};
    use perdure_ptm::Transaction;
    use std::sync::mpsc::channel;
    use std::time::Duration;
    let _guard = mutant::lock();
    mutant::set(None);
    for (tries, expected) in [(10, (3, 0)), (0, (3, 3))] {
        let pool = Pool::volatile("redo-direct-reads", 1 << 20, NoFlush).unwrap();
        let config = Config {
            threads: 2,
            max_read_tries: tries,
            ..Config::small()
        };
        let p = std::sync::Arc::new(RedoPtm::create(pool, &config).unwrap());
        p.update_tx(|tx| tx.set_root(1, 7)).unwrap();
        for i in 0..3 {
            let (tx, rx) = channel();
            let reader = p.clone();
            std::thread::spawn(move || {
                let _ = tx.send(reader.read_tx(|t| t.root(1)).unwrap());
            });
            assert_eq!(
                rx.recv_timeout(Duration::from_secs(30)),
                Ok(7),
                "max_read_tries {tries}: read {i} did not return 7 within 30 s"
            );
        }
        let s = p.stats();
        assert_eq!(
            (s.reads_direct, s.reads_published),
            expected,
            "max_read_tries {tries}: (direct, published) reads of 3: {s:?}"
        );
    }
}

/// CX-PTM keeps the nodes disposed of but not yet freed within
/// `Config::max_retained_nodes` (the documented bound, `N·(window + scan
/// threshold) + 7N`), after every one of 300 updates of one thread with a
/// replay window of 1 (every retired node is disposed of at once, and freed
/// only at the scans, which run past a threshold of retired nodes).
#[test]
fn cx_keeps_disposed_nodes_within_the_documented_bound() {
    use perdure_ptm::cx::Config;
    use perdure_ptm::{CxPtm, Transaction};
    let (_guard, pool) = unmutated_pool("cx-retained");
    let config = Config {
        threads: 2,
        replay_window: 1,
        ..Config::small()
    };
    let bound = config.max_retained_nodes();
    let p = CxPtm::create(pool, &config).unwrap();
    let mut most = 0;
    for i in 0..300u64 {
        p.update_tx(move |tx| tx.set_root(1, i)).unwrap();
        let s = p.stats();
        most = most.max(s.disposed - s.freed);
        assert!(
            s.disposed - s.freed <= bound,
            "after update {i}: {} nodes disposed of and not freed, bound {bound}",
            s.disposed - s.freed
        );
    }
    assert!(most > 1, "the check needs nodes waiting for a scan: {most}");
}

/// `Config::max_retained_nodes` is the most queue nodes CX-PTM keeps alive,
/// and not much more: two thread ids take turns running bursts of updates
/// with a replay window of 64, each burst as long as the window plus the
/// scan threshold (`2·(5 + 2)·2 + 16 = 44`, `cx/queue.rs`), so that a
/// thread leaves with its FIFO of retired nodes full and its list of
/// disposed ones one short of a scan, and both stay so while the other
/// runs (216 nodes at the end of a burst). Every closure captures a token,
/// so the token's count is the nodes alive. The most alive after any
/// update must stay within the bound, and reach at least half of it: the
/// bound sizes `volatile_bytes_ptm`, which a bound many times what the
/// queue can hold would make meaningless.
#[test]
fn cx_retained_nodes_reach_the_documented_bound() {
    use perdure_ptm::cx::Config;
    use perdure_ptm::{CxPtm, Transaction};
    use std::sync::Arc;
    let (_guard, pool) = unmutated_pool("cx-retained-bursts");
    let config = Config {
        threads: 2,
        max_read_tries: 0,
        replay_window: 64,
        ..Config::small()
    };
    let bound = config.max_retained_nodes();
    let p = CxPtm::create(pool, &config).unwrap();
    let token = Arc::new(());
    let handles = [p.handle().unwrap(), p.handle().unwrap()];
    const BURST: u64 = 64 + 44;
    let mut most = 0;
    for burst in 0..8 {
        let h = &handles[burst % 2];
        for i in 0..BURST {
            let t = Arc::clone(&token);
            h.update_tx(move |tx| {
                let _held = &t;
                tx.set_root(1, i)
            });
            let alive = Arc::strong_count(&token) as u64 - 1;
            most = most.max(alive);
            assert!(
                alive <= bound,
                "burst {burst}, update {i}: {alive} nodes alive, bound {bound} ({:?})",
                p.stats()
            );
        }
    }
    assert!(
        2 * most >= bound,
        "at most {most} nodes alive, less than half the bound {bound} ({:?})",
        p.stats()
    );
}

/// CX-PTM replays a replica that is at most `replay_window` nodes behind
/// (`Config::replay_window`: {3} copies only a replica further behind, or
/// null, or disposed of). One thread's updates alternate between two
/// replicas (the designated one is read-locked), so each replica it takes
/// is two nodes behind its new node. With a window of 1 every update copies
/// and then runs its own closure only; with a window of 2 or more only the
/// first update copies (its replica's head is null) and every later one
/// replays the two closures it missed.
#[test]
fn cx_replays_within_the_window_and_copies_beyond() {
    use perdure_pm::NoFlush;
    use perdure_ptm::cx::Config;
    use perdure_ptm::{CxPtm, Transaction};
    let _guard = mutant::lock();
    mutant::set(None);
    for window in [1, 2, 3] {
        let pool = Pool::volatile("cx-replay-window", 1 << 20, NoFlush).unwrap();
        let config = Config {
            threads: 2,
            max_read_tries: 0,
            replay_window: window,
            ..Config::small()
        };
        let p = CxPtm::create(pool, &config).unwrap();
        p.update_tx(|tx| tx.set_root(1, 0)).unwrap();
        let first = p.stats();
        assert_eq!((first.copies, first.applied), (1, 1), "the first update");
        for i in 1..40u64 {
            let before = p.stats();
            p.update_tx(move |tx| tx.set_root(1, i)).unwrap();
            let s = p.stats();
            let step = (s.copies - before.copies, s.applied - before.applied);
            let expected = if window < 2 { (1, 1) } else { (0, 2) };
            assert_eq!(
                step, expected,
                "window {window}, update {i}: (copies, closures run) {step:?}"
            );
        }
    }
}

/// A thread's own queue node stays protected (hazard pointer `HP_MY`) only
/// until its transaction returns: once another thread's updates have moved
/// far past it, it is freed, and the closure it holds with it, even though
/// its thread never runs another transaction. Here thread 1 runs one
/// read-only transaction, published as a node (`max_read_tries` 0), whose
/// closure captures a token; thread 0 then runs 300 updates with a replay
/// window of 1, and the token's count must be back to one. (A thread that
/// left after an *update* would not do: the node before its own sits in its
/// own FIFO of retired nodes until it retires more.)
#[test]
fn cx_frees_the_node_of_a_thread_that_left() {
    use perdure_ptm::cx::Config;
    use perdure_ptm::{CxPtm, Transaction};
    use std::sync::Arc;
    let (_guard, pool) = unmutated_pool("cx-left");
    let config = Config {
        threads: 2,
        max_read_tries: 0,
        replay_window: 1,
        ..Config::small()
    };
    let p = CxPtm::create(pool, &config).unwrap();
    let token = Arc::new(());
    let h0 = p.handle().unwrap();
    h0.update_tx(|tx| tx.set_root(2, 7));
    std::thread::scope(|s| {
        s.spawn(|| {
            let h1 = p.handle().unwrap();
            assert_eq!(h1.tid(), 1);
            let t = Arc::clone(&token);
            let seen = h1.read_tx(move |tx| {
                let _held = &t;
                tx.root(2)
            });
            assert_eq!(seen, 7);
        });
    });
    assert_eq!(
        (p.stats().reads_published, Arc::strong_count(&token)),
        (1, 2),
        "the read was published as a node, which holds its closure"
    );
    for i in 0..300u64 {
        h0.update_tx(move |tx| tx.set_root(1, i));
    }
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "thread 1's node was never freed: {:?}",
        p.stats()
    );
}

/// CX-PUC's `free` gives a block back to the region's allocator: the next
/// allocation of its size class reuses it, and freeing it twice is refused.
#[test]
fn cx_puc_frees_blocks_for_reuse() {
    let _guard = mutant::lock();
    mutant::set(None);
    let p = two_thread_cx_puc("cx-puc-free");
    let (a, b) = (
        p.update(|m| m.alloc(64).unwrap()).unwrap(),
        p.update(|m| m.alloc(64).unwrap()).unwrap(),
    );
    assert_ne!(a, b);
    let freed = p.update(move |m| m.free(a).is_ok()).unwrap();
    assert!(freed, "free of an allocated block");
    let c = p.update(|m| m.alloc(64).unwrap()).unwrap();
    assert_eq!(c, a, "the freed block is reused by its size class");
    // Bit 0: the first free succeeded; bit 1: the second failed.
    let twice = p
        .update(move |m| u64::from(m.free(c).is_ok()) | u64::from(m.free(c).is_err()) << 1)
        .unwrap();
    assert_eq!(twice, 0b11, "free, then a double free refused");
}

/// Waits until `flag` is set; false after 10 s.
fn wait_for(flag: &AtomicBool) -> bool {
    let start = Instant::now();
    while !flag.load(SeqCst) {
        if start.elapsed() > Duration::from_secs(10) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// RedoOpt-PTM, one batch of two closures on thread A (A waits inside its
/// closure until B is simulating, B inside its own until A is done, as
/// `redo_variants.rs`'s `a_panic_in_a_later_closure_of_the_batch`): A
/// stores `c`, then `a` twice (merged into its second log entry); B's
/// closure, run by A in the same batch, rewrites `a` (an entry of the
/// earlier closure: its value is saved for the undo), stores `x` twice
/// (its own entry, merged) and panics. A's commit must hold `a = 1`,
/// `c = 3`, `x = 0` and two log entries, and so must its log: the next
/// update, on another replica, replays it (the undo puts `a`'s saved value
/// back in the replica and in the log entry). The tier's other checks never
/// combine a panicking closure with another.
#[test]
fn redo_opt_undoes_only_the_panicking_closure_of_a_batch() {
    use perdure_ptm::redo::{Config, RedoPtm, Variant};
    use perdure_ptm::{PVar, Transaction};
    use std::sync::Arc;
    let (_guard, pool) = unmutated_pool("redo-opt-batch");
    let p = RedoPtm::create(
        pool,
        &Config {
            threads: 2,
            variant: Variant::Opt,
            timed_window: Some(Duration::ZERO),
            ..Config::small()
        },
    )
    .unwrap();
    let ha = p.handle().unwrap(); // tid 0: its request comes first in a batch
    let a = ha.update_tx(|tx| {
        let a = tx.alloc_zeroed(64).unwrap();
        tx.set_root(0, a);
        a
    });
    let (c, x) = (a + 16, a + 32);
    let b_simulating = Arc::new(AtomicBool::new(false));
    let a_done = Arc::new(AtomicBool::new(false));
    let a_thread = std::thread::current().id();
    let before = p.stats().log_entries;
    let b_panicked = std::thread::scope(|s| {
        let (bs, ad) = (Arc::clone(&b_simulating), Arc::clone(&a_done));
        let b = s.spawn(|| {
            let hb = p.handle().unwrap(); // tid 1
            let b_thread = std::thread::current().id();
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                hb.update_tx(move |tx| -> u64 {
                    if std::thread::current().id() == b_thread {
                        bs.store(true, SeqCst);
                        assert!(wait_for(&ad), "A never finished");
                    }
                    tx.set(PVar::<u64>::at(a), 2);
                    tx.set(PVar::<u64>::at(x), 6);
                    tx.set(PVar::<u64>::at(x), 7);
                    panic!("B's closure panics after storing");
                })
            }))
            .is_err()
        });
        let bsim = Arc::clone(&b_simulating);
        let r = ha.update_tx(move |tx| {
            tx.set(PVar::<u64>::at(c), 3);
            tx.set(PVar::<u64>::at(a), 1);
            tx.set(PVar::<u64>::at(a), 1);
            if std::thread::current().id() == a_thread {
                assert!(wait_for(&bsim), "B never started simulating");
            }
            5u64
        });
        a_done.store(true, SeqCst);
        assert_eq!(r, 5);
        b.join().unwrap()
    });
    assert!(b_panicked, "B's update reports its closure's panic");
    let read = |w: u64| ha.read_tx(move |tx| tx.get(PVar::<u64>::at(w)));
    assert_eq!(
        (read(a), read(c), read(x)),
        (1, 3, 0),
        "after A's commit: a, c, x"
    );
    assert_eq!(
        p.stats().log_entries - before,
        2,
        "A's batch logs c and a once each: {:?}",
        p.stats()
    );
    // The next update runs on another replica, which replays A's log:
    // the entry of `a` must carry the value put back (1), not B's 2.
    let replays = p.stats().replayed_states;
    let d = a + 48;
    ha.update_tx(move |tx| tx.set(PVar::<u64>::at(d), 9));
    assert_eq!(
        p.stats().replayed_states - replays,
        1,
        "the update after A's commit replays A's batch: {:?}",
        p.stats()
    );
    assert_eq!(
        (read(a), read(c), read(x), read(d)),
        (1, 3, 0, 9),
        "after a replay of A's log on another replica: a, c, x, d"
    );
}

/// Redo-PTM brings an invalid replica up to date by copying the used part
/// of the designated one, and writes back exactly that copy before the
/// replica is designated: with a 4-entry log, every update of 5 stores
/// overflows it, so the next one copies (a 60 KiB array in a 64 KiB block,
/// and the region's head), and its write-backs must cover the copy (at
/// least its 1,024 lines; a shorter range leaves copied lines volatile) without running on
/// to the pool's end (at most twice that). The copies are also timed for
/// RedoTimed's window, four copy times: it must lie between 1 µs (eight
/// thousand words cannot be copied faster) and four times the longest
/// update that copied (an average of copies, each shorter than its update).
#[test]
fn redo_writes_back_each_copy_and_times_it() {
    use perdure_pm::stats::thread_counts;
    use perdure_ptm::redo::{Config, RedoPtm};
    use perdure_ptm::Transaction;
    let (_guard, pool) = unmutated_pool("redo-copy");
    let p = RedoPtm::create(
        pool,
        &Config {
            threads: 2,
            log_entries_per_thread: 4,
            ..Config::small()
        },
    )
    .unwrap();
    let h = p.handle().unwrap();
    let mut longest = Duration::ZERO;
    let start = Instant::now();
    h.update_tx(|tx| {
        let a = tx.alloc_zeroed(60 << 10).unwrap();
        tx.set_root(0, a);
    });
    longest = longest.max(start.elapsed());
    for k in 0..4u64 {
        let copies = p.stats().copies;
        let (pwb, start) = (thread_counts().pwb, Instant::now());
        h.update_tx(move |tx| {
            for r in 1..=5 {
                tx.set_root(r, k);
            }
        });
        longest = longest.max(start.elapsed());
        let pwb = thread_counts().pwb - pwb;
        assert_eq!(p.stats().copies, copies + 1, "update {k} copies");
        assert!(
            (1024..=2048).contains(&pwb),
            "update {k}: {pwb} lines written back for a copy of 1,024 and more"
        );
    }
    let window = p.timed_window();
    assert!(
        window >= Duration::from_micros(1) && window <= 4 * longest,
        "window {window:?}, longest copying update {longest:?}"
    );
}

/// RedoTimed's window without `Config::timed_window` is four times a
/// running average of the copies' times (`copy_words`: the first copy's
/// time, then `(3·old + new) / 4`), each copy timed inside its update. A
/// copy takes at most its update's time `U` (measured around it here), so
/// `V`, the same running average of the copying updates' times, bounds the
/// average: `window ≤ 4·V` after every update, whatever the machine's
/// load. Here a first copy of a few words, then copies of 2 MiB (each
/// update overflows its log of 4 entries, so the next replica must copy),
/// which take nearly all of their updates' time: a window that is the
/// latest copy alone (`old != 0`) breaks that bound at the first long copy.
/// And from the second copy on, four times the average exceeds both `2·V`
/// and `2·U`, which a window of one average (`avg + 4`: at most `V + 4`),
/// an average that gives the old one a quarter of the weight (`3 + old`:
/// its average stays below `V`, so it could exceed `2·V` only with an
/// update faster than the old average, which `2·U` rules out) or none
/// (`3 / old`: at most `U + 3`) never reach. An update stretched outside
/// its copy (a loaded machine) can hide that, so it gets up to 5 fresh
/// PTMs.
#[test]
fn redo_window_is_four_running_copy_times() {
    use perdure_pm::NoFlush;
    use perdure_ptm::redo::{Config, RedoPtm};
    use perdure_ptm::Transaction;
    let _guard = mutant::lock();
    mutant::set(None);
    let mut tried = Vec::new();
    for attempt in 0..5 {
        let pool = Pool::volatile("redo-copy-average", 16 << 20, NoFlush).unwrap();
        let config = Config {
            threads: 2,
            log_entries_per_thread: 4,
            ..Config::small()
        };
        let p = RedoPtm::create(pool, &config).unwrap();
        let h = p.handle().unwrap();
        // `v`: the running average of the copying updates' times (ns).
        let (mut v, mut copies, mut seen) = (0f64, 0u64, Vec::new());
        for k in 0..10u64 {
            let before = p.stats().copies;
            let start = Instant::now();
            if k == 0 {
                h.update_tx(|tx| {
                    let a = tx.alloc(2 << 20).unwrap();
                    tx.set_root(0, a);
                });
            } else {
                h.update_tx(move |tx| {
                    for r in 1..=5 {
                        tx.set_root(r, k);
                    }
                });
            }
            let u = start.elapsed().as_nanos() as u64;
            for _ in before..p.stats().copies {
                v = if copies == 0 {
                    u as f64
                } else {
                    (3.0 * v + u as f64) / 4.0
                };
                copies += 1;
            }
            let w = p.timed_window().as_nanos() as u64;
            assert!(
                w as f64 <= 4.0 * v + 4.0,
                "attempt {attempt}, update {k} ({copies} copies): window {w} ns, more than four running averages of the copying updates' times ({v:.0} ns)"
            );
            if copies >= 2 && w as f64 >= 2.0 * v + 8.0 && w > 2 * u {
                println!(
                    "attempt {attempt}, update {k}: window {w} ns, running average of the copying updates {v:.0} ns, this update {u} ns"
                );
                return;
            }
            seen.push(format!("{w}/{v:.0}/{u}"));
        }
        assert!(
            copies >= 9,
            "attempt {attempt}: {copies} copies in 10 updates"
        );
        tried.push(seen.join(" "));
    }
    panic!(
        "the window never exceeded twice the copying updates' running average and the update's time (window/average/update, ns, per PTM):\n{}",
        tried.join("\n")
    );
}

/// RedoTimed-PTM's window starts with each update (`note_update_start`),
/// not when the PTM was opened. With a window of 150 ms: thread H's update
/// holds the one of the first two replicas that is not designated (its
/// closure waits), and once the PTM is older than the window, this
/// thread's update finds both taken and backs off for the whole window
/// before it falls back to the third replica, where it runs H's closure
/// too and commits; H then finds its update applied.
#[test]
fn redo_timed_window_counts_from_the_update_start() {
    use perdure_ptm::redo::{Config, RedoPtm, Variant};
    use perdure_ptm::Transaction;
    use std::sync::Arc;
    const WINDOW: Duration = Duration::from_millis(150);
    std::thread_local! {
        static HOLDER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    let (_guard, pool) = unmutated_pool("redo-timed-start");
    let config = Config {
        threads: 2,
        variant: Variant::Timed,
        timed_window: Some(WINDOW),
        ..Config::small()
    };
    let p = RedoPtm::create(pool, &config).unwrap();
    let opened = Instant::now();
    p.update_tx(|tx| tx.set_root(1, 0)).unwrap();
    let (entered, release) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let p = &p;
    let took = std::thread::scope(|s| {
        let (e, r) = (entered.clone(), release.clone());
        let holder = s.spawn(move || {
            HOLDER.with(|h| h.set(true));
            p.update_tx(move |tx| {
                if HOLDER.with(|h| h.get()) {
                    e.store(true, SeqCst);
                    while !r.load(SeqCst) {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                tx.set_root(1, 1)
            })
        });
        let waited = wait_for(&entered);
        let took = waited.then(|| {
            std::thread::sleep(
                (WINDOW + Duration::from_millis(20)).saturating_sub(opened.elapsed()),
            );
            let start = Instant::now();
            p.update_tx(|tx| tx.set_root(2, 2)).unwrap();
            start.elapsed()
        });
        release.store(true, SeqCst);
        holder.join().unwrap().unwrap();
        took
    });
    let took = took.expect("the holder's closure never ran");
    let s = p.stats();
    assert!(
        took >= WINDOW,
        "an update that found the first two replicas taken committed after {took:?}, within the window of {WINDOW:?} ({s:?})"
    );
    assert!(s.timed_fallbacks >= 1, "no fallback: {s:?}");
    let roots = p.read_tx(|tx| (tx.root(1) << 8) | tx.root(2)).unwrap();
    assert_eq!(roots, (1 << 8) | 2, "roots 1 and 2 after both updates");
}

/// Redo-PTM with a number of states per thread that is not a power of two
/// (3): a thread takes its states in turn, `(i + 1) mod 3`, never the one
/// its last commit designated. Were it to take that one, its next update
/// would overwrite the state `cur_comb` names (its ticket changed, every
/// attempt would find the designated state gone, and the update would
/// never return). One thread's 12 updates, on a thread of its own, must
/// return within 10 s.
#[test]
fn redo_takes_its_states_in_turn_whatever_their_count() {
    use perdure_ptm::redo::{Config, RedoPtm};
    use perdure_ptm::Transaction;
    use std::sync::Arc;
    let (_guard, pool) = unmutated_pool("redo-three-states");
    let config = Config {
        threads: 2,
        states_per_thread: 3,
        ..Config::small()
    };
    let p = Arc::new(RedoPtm::create(pool, &config).unwrap());
    let done = Arc::new(AtomicU64::new(0));
    let (q, d) = (p.clone(), done.clone());
    // Not joined: a thread whose update never returns is left behind.
    std::thread::spawn(move || {
        for i in 1..=12u64 {
            q.update_tx(move |tx| tx.set_root(1, i)).unwrap();
            d.store(i, SeqCst);
        }
    });
    let start = Instant::now();
    while done.load(SeqCst) < 12 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let done = done.load(SeqCst);
    assert_eq!(
        done,
        12,
        "updates returned within 10 s, of 12 on one thread with 3 states per thread ({:?})",
        p.stats()
    );
    assert_eq!(p.read_tx(|tx| tx.root(1)).unwrap(), 12);
}

/// The thread [`pause_before_accesses`] pauses, the numbers of its
/// persistent-memory accesses to pause before, the one it is paused
/// before (0: none) and the last one it may pass.
static P_THREAD: Mutex<Option<ThreadId>> = Mutex::new(None);
static P_PAUSE_AT: Mutex<Vec<u64>> = Mutex::new(Vec::new());
static P_PAUSED: AtomicU64 = AtomicU64::new(0);
static P_GO: AtomicU64 = AtomicU64::new(0);

std::thread_local! {
    static P_ACCESSES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A yield hook: on the paused thread, counts its persistent-memory
/// accesses and waits before each one `P_PAUSE_AT` lists until `P_GO`
/// reaches it.
fn gate_at_accesses() {
    if *P_THREAD.lock().unwrap_or_else(|e| e.into_inner()) != Some(std::thread::current().id()) {
        return;
    }
    let k = P_ACCESSES.with(|a| {
        a.set(a.get() + 1);
        a.get()
    });
    if P_PAUSE_AT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&k)
    {
        P_PAUSED.store(k, SeqCst);
        while P_GO.load(SeqCst) < k {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// A directed schedule on a counter of `c`'s PTM `p`: thread P runs
/// `call` and waits before each of its persistent-memory accesses (the
/// operation's, counted from 1) numbered in `pause_at`, while this thread
/// commits one `add(1)`. Returns P's result and the commits made (fewer
/// if P returned before reaching a pause).
fn pause_before_accesses<C: Construction>(
    c: &C,
    p: &'static C::P,
    call: Call,
    pause_at: &[u64],
) -> Result<(Value, usize), String>
where
    C::P: Ptm + 'static,
{
    let o = Counter;
    *P_THREAD.lock().unwrap_or_else(|e| e.into_inner()) = None;
    *P_PAUSE_AT.lock().unwrap_or_else(|e| e.into_inner()) = pause_at.to_vec();
    P_PAUSED.store(0, SeqCst);
    P_GO.store(0, SeqCst);
    if !c.pool(p).backend().set_yield_hook(gate_at_accesses) {
        return Err("the simulator already has a yield hook".into());
    }
    let paused = std::thread::spawn(move || {
        P_ACCESSES.with(|a| a.set(0));
        *P_THREAD.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::thread::current().id());
        let r = o.apply(p, &call);
        P_GO.store(u64::MAX, SeqCst);
        r
    });
    let mut commits = 0;
    for &k in pause_at {
        let start = Instant::now();
        while P_PAUSED.load(SeqCst) != k && !paused.is_finished() {
            if start.elapsed() > Duration::from_secs(20) {
                P_GO.store(u64::MAX, SeqCst);
                return Err(format!("P never reached its access {k}"));
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        if paused.is_finished() {
            break;
        }
        o.apply(p, &Call::new("add", vec![json!(1)]))?;
        commits += 1;
        P_GO.store(k, SeqCst);
    }
    P_GO.store(u64::MAX, SeqCst);
    let got = paused.join().map_err(|_| "P panicked".to_string())??;
    Ok((got, commits))
}

/// CX-PTM for the directed schedules, on a fresh simulated
/// pool, with a counter at 0.
fn cx_counter(
    name: &str,
    threads: usize,
    max_read_tries: usize,
    replay_window: usize,
) -> (CxAnnotated, &'static perdure_ptm::CxPtm<Sim>) {
    let c = CxAnnotated {
        config: perdure_ptm::cx::Config {
            threads,
            max_read_tries,
            replay_window,
            dirty_lines_per_replica: 32,
            undo_entries_per_thread: 64,
        },
    };
    let p = leaked(&c, name).unwrap();
    Counter.init(p).unwrap();
    (c, p)
}

/// CX-PTM's published read (R{2}, `max_read_tries` 0, `N` = 2), under a
/// directed schedule: thread P runs `get()` on a counter at 5 (not 0: a
/// node whose result was never computed holds 0), which enqueues its node
/// and then tries the designated replica; before each of P's
/// persistent-memory accesses numbered in `pause_at` (its first, the
/// `cur_comb` load of its first try; its second, the load that checks
/// `cur_comb` has not moved, and so on), this thread commits one `add(1)`
/// (the first applies P's node, at the counter's 5). Returns what `get()`
/// returned, the commits made, and the reads collected
/// (`CxStats::reads_collected`).
fn published_read(pause_at: &[u64]) -> Result<(u64, usize, u64), String> {
    let (c, p) = cx_counter("published-read", 2, 0, 8);
    Counter.apply(p, &Call::new("add", vec![json!(5)]))?;
    let (got, commits) = pause_before_accesses(&c, p, Call::new("get", vec![]), pause_at)?;
    let got = got
        .as_u64()
        .ok_or_else(|| format!("get() returned {got}"))?;
    Ok((got, commits, p.stats().reads_collected))
}

/// CX-PTM's `getCombined`, on an update whose node another thread
/// installs while it asks. Three threads, a replay window of 8: thread H's
/// update holds the one of `combs[0]`, `combs[1]` that is not designated
/// (its closure waits, as in `redo_timed_window_counts_from_the_update_start`),
/// so thread P's `add(1)` takes a replica never used (a null head) and asks
/// for the designated one to copy; P waits before its second
/// persistent-memory access, the load that checks `cur_comb` has not moved
/// since it took that replica's shared lock, while this thread's `add(1)`
/// commits on a fourth replica, H's and P's nodes included (the superseded
/// head stays linked: within the window). P must then find its node in
/// `cur_comb` and return without copying the replica it had locked, no
/// longer designated, or running a closure: during P's update the updates
/// copy once in all and run three closures (this thread's: H's, P's and
/// its own), not twice and five.
#[test]
fn cx_update_installed_meanwhile_copies_nothing() {
    use perdure_ptm::Transaction;
    use std::sync::Arc;
    std::thread_local! {
        static HOLDER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    let _guard = mutant::lock();
    mutant::set(None);
    let (c, p) = cx_counter("cx-get-combined", 3, 2, 8);
    let (entered, release) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (e, r) = (entered.clone(), release.clone());
    let holder = std::thread::spawn(move || {
        HOLDER.with(|h| h.set(true));
        p.update_tx(move |tx| {
            if HOLDER.with(|h| h.get()) {
                e.store(true, SeqCst);
                while !r.load(SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            let c = tx.root(0);
            tx.store(c, tx.load(c) + 10);
        })
    });
    assert!(wait_for(&entered), "H's closure never ran");
    let before = p.stats();
    let out = pause_before_accesses(&c, p, Call::new("add", vec![json!(1)]), &[2]);
    let s = p.stats();
    release.store(true, SeqCst);
    holder.join().unwrap().unwrap();
    let (got, commits) = out.unwrap();
    assert_eq!((got, commits), (Value::Null, 1), "P's result, commits made");
    assert_eq!(
        (
            s.copies - before.copies,
            s.applied - before.applied,
            s.commits - before.commits
        ),
        (1, 3, 1),
        "(copies, closures run, commits) during P's add(1): {s:?}"
    );
    let v = Counter.apply(p, &Call::new("get", vec![])).unwrap();
    assert_eq!(
        v,
        json!(12),
        "the counter after H's add(10) and both add(1)"
    );
}

/// R{2}'s bound of `N` tries, and the tries before it. A published read
/// that finds the designated replica free reads it, however far `cur_comb`
/// has moved past its node: with one commit before its first try (which
/// applies the node at 5) it returns 6, and so it does with the commit
/// between the two loads of its first try (that try fails, the second
/// reads). Only after `N` = 2 failed tries (a commit inside each) does it
/// take its node's result, 5, which the first commit computed (the
/// updater's run of the read's closure) and left there, instead of trying
/// again. Each schedule is checked to have run all its commits, and the
/// last to have collected one read.
#[test]
fn cx_published_read_tries_n_times_then_collects() {
    let _guard = mutant::lock();
    mutant::set(None);
    for (pause_at, expected, why) in [
        (&[1][..], 6, "a commit before the first try"),
        (&[2][..], 6, "a commit inside the first try"),
        (
            &[2, 4][..],
            5,
            "a commit inside each of the first two tries",
        ),
    ] {
        let (got, commits, collected) =
            published_read(pause_at).unwrap_or_else(|e| panic!("{why}: {e}"));
        assert_eq!(
            (got, commits, collected),
            (expected, pause_at.len(), u64::from(expected == 5)),
            "{why}: (get()'s result, commits made, reads collected)"
        );
    }
}

/// RedoOpt-PTM's full-flush switch (seed §5, "postpone issuing pwbs"):
/// an update that dirties more than a tenth of the replica's lines writes
/// back its whole used part; one that dirties fewer writes back each line
/// once. With `Config::small`'s 1,024 dirty lines and a replica of about
/// 340 KiB (a tenth: about 530 lines) over a 64 KiB array, 20 lines cost
/// about 20 write-backs and a tenth plus 20 lines more than the array's
/// 1,024, but no more than the replica's lines (the full flush stops at the
/// used part's end). (`redo_variants.rs` checks the switch with a list
/// capped below the tenth, which does not tell where the tenth lies.)
#[test]
fn redo_opt_flushes_the_whole_replica_past_a_tenth_of_its_lines() {
    use perdure_pm::stats::thread_counts;
    use perdure_ptm::redo::{Config, RedoPtm, Variant};
    use perdure_ptm::{PVar, Transaction};
    let (_guard, pool) = unmutated_pool("redo-opt-tenth");
    let p = RedoPtm::create(
        pool,
        &Config {
            threads: 2,
            variant: Variant::Opt,
            ..Config::small()
        },
    )
    .unwrap();
    let tenth = p.region_len() / 64 / 10;
    assert!(
        (100..=900).contains(&tenth),
        "a tenth of the replica is {tenth} lines"
    );
    let h = p.handle().unwrap();
    let a = h.update_tx(|tx| {
        let a = tx.alloc_zeroed(64 << 10).unwrap();
        tx.set_root(0, a);
        a
    });
    h.update_tx(move |tx| tx.set(PVar::<u64>::at(a), 1));
    h.update_tx(move |tx| tx.set(PVar::<u64>::at(a), 2));
    let lines = |n: u64| {
        let before = thread_counts().pwb;
        h.update_tx(move |tx| {
            for l in 0..n {
                tx.set(PVar::<u64>::at(a + 64 * l), l + 1);
            }
        });
        thread_counts().pwb - before
    };
    let few = lines(20);
    assert!(few <= 30, "20 lines: {few} write-backs");
    let many = lines(tenth + 20);
    assert!(
        many > 1024,
        "{} lines, past the tenth ({tenth}): {many} write-backs",
        tenth + 20
    );
    // The full flush covers the replica's used part, not the memory past it.
    let replica_lines = p.region_len() / 64;
    assert!(
        many <= replica_lines,
        "{} lines, past the tenth: {many} write-backs, more than the replica's {replica_lines} lines",
        tenth + 20
    );
}

/// Redo-PTM brings a replica far behind up to date by replaying the ring's
/// redo logs as long as none of their states was reused ({6}: it copies
/// only if one is missing, reused or overflowed): the ring keeps the
/// tickets of the last `N·RSIZE` states (rounded up to a power of two: 64
/// here), as many as the threads have. Thread 3's read holds the replica
/// designated after the first update (a shared lock, in its closure) while
/// threads 0–2 commit 35 updates on the two replicas that stay free (at
/// most 13 of each thread's 16 states: none reused). The next update takes
/// the replica the read held, 35 states behind, and must replay them (and
/// see the last value), not copy the designated replica.
#[test]
fn redo_replays_a_replica_as_far_behind_as_the_ring_reaches() {
    use perdure_ptm::redo::{Config, RedoPtm, Variant};
    use perdure_ptm::Transaction;
    use std::sync::Arc;
    let (_guard, pool) = unmutated_pool("redo-ring");
    let p = RedoPtm::create(
        pool,
        &Config {
            threads: 4,
            states_per_thread: 16,
            variant: Variant::Redo,
            ..Config::small()
        },
    )
    .unwrap();
    const BEHIND: u64 = 35;
    let writers = [
        p.handle().unwrap(),
        p.handle().unwrap(),
        p.handle().unwrap(),
    ];
    writers[0].update_tx(|tx| tx.set_root(1, 100));
    let inside = Arc::new(AtomicBool::new(false));
    let release = Arc::new(AtomicBool::new(false));
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let h = p.handle().unwrap();
            let (inside, release) = (Arc::clone(&inside), Arc::clone(&release));
            h.read_tx(move |tx| {
                inside.store(true, SeqCst);
                wait_for(&release);
                tx.root(1)
            })
        });
        assert!(wait_for(&inside), "the read never started");
        for i in 0..BEHIND {
            writers[i as usize % 3].update_tx(move |tx| tx.set_root(1, 101 + i));
        }
        release.store(true, SeqCst);
        assert_eq!(reader.join().unwrap(), 100, "the held read");
    });
    let before = p.stats();
    let seen = writers[2].update_tx(|tx| {
        let seen = tx.root(1);
        tx.set_root(1, 0);
        seen
    });
    let s = p.stats();
    assert_eq!(
        seen,
        100 + BEHIND,
        "the last value, on the replica brought up to date"
    );
    assert_eq!(
        (s.replays - before.replays, s.copies - before.copies),
        (1, 0),
        "(replays, copies) of an update on a replica {BEHIND} states behind: {s:?}"
    );
}

/// Opening a pool takes the thread count from the pool, whatever the
/// configuration says (`RedoPtm::open`, `CxPtm::open`: "the rest of
/// `config` sizes the volatile structures"): a 2-thread pool opened with a
/// configuration of 0 threads (which `create` refuses) or of 5 must open
/// with 2 thread ids, and its configuration in effect say 2.
#[test]
fn open_takes_the_thread_count_from_the_pool() {
    use perdure_pm::NoFlush;
    use perdure_ptm::{cx, redo, CxPtm, RedoPtm, Transaction};
    let _guard = mutant::lock();
    mutant::set(None);
    let words = {
        let pool = Pool::volatile("redo-reopen", 1 << 20, NoFlush).unwrap();
        let config = redo::Config {
            threads: 2,
            ..redo::Config::small()
        };
        let p = RedoPtm::create(pool, &config).unwrap();
        p.update_tx(|tx| tx.set_root(1, 7)).unwrap();
        p.pool().snapshot_words()
    };
    for claimed in [0, 5] {
        let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
        let config = redo::Config {
            threads: claimed,
            ..redo::Config::small()
        };
        let p = RedoPtm::open(pool, &config)
            .unwrap_or_else(|e| panic!("Redo-PTM opened with {claimed} threads: {e}"));
        assert_eq!(
            (p.threads(), p.config().threads),
            (2, 2),
            "Redo-PTM opened with {claimed} threads"
        );
        assert_eq!(p.read_tx(|tx| tx.root(1)).unwrap(), 7);
    }
    let words = {
        let pool = Pool::volatile("cx-reopen", 1 << 20, NoFlush).unwrap();
        let config = cx::Config {
            threads: 2,
            ..cx::Config::small()
        };
        let p = CxPtm::create(pool, &config).unwrap();
        p.update_tx(|tx| tx.set_root(1, 7)).unwrap();
        p.pool().snapshot_words()
    };
    for claimed in [0, 5] {
        let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
        let config = cx::Config {
            threads: claimed,
            ..cx::Config::small()
        };
        let p = CxPtm::open(pool, &config)
            .unwrap_or_else(|e| panic!("CX-PTM opened with {claimed} threads: {e}"));
        assert_eq!(
            (p.threads(), p.config().threads),
            (2, 2),
            "CX-PTM opened with {claimed} threads"
        );
        assert_eq!(p.read_tx(|tx| tx.root(1)).unwrap(), 7);
    }
}

/// CX-PTM's `helped` counts the closures of other threads only: one thread
/// alone helps nobody, though it applies every one of its own closures
/// (and, with a replay window of 1, copies replicas). `Ptm::events`, the
/// counters benchmarks report, are `CxStats`'s copies and CAS retries.
#[test]
fn cx_counts_help_and_reports_its_events() {
    use perdure_ptm::cx::Config;
    use perdure_ptm::{CxPtm, Transaction};
    let (_guard, pool) = unmutated_pool("cx-helped");
    let config = Config {
        threads: 2,
        replay_window: 1,
        ..Config::small()
    };
    let p = CxPtm::create(pool, &config).unwrap();
    for i in 0..50u64 {
        p.update_tx(move |tx| tx.set_root(1, i)).unwrap();
    }
    let s = p.stats();
    assert!(
        s.applied >= 50 && s.copies > 0,
        "50 updates on one thread: {s:?}"
    );
    assert_eq!(s.helped, 0, "one thread helped another: {s:?}");
    assert_eq!(
        p.events(),
        vec![("copies", s.copies), ("cas_retries", s.cas_retries)],
        "CX-PTM's events"
    );
}

/// CX-PUC's update sees its root table and its allocated words: a root set
/// and a word written through `words_mut` in one update are read back by
/// the next through `root`, `words` and `get` (and the root by a read-only
/// transaction's `root`), and `words` is the allocated
/// part of the region (it covers the block allocated last and ends at most
/// a line past it, whether `alloc` or the annotated interface's `tx().alloc`
/// allocated it, and is as long as a read-only transaction's view of it and
/// as `words_mut`), and a block freed, through `free` or `tx().free`, is
/// allocated again. Only the typed object's `obj`, `get` and
/// `alloc_value` were used by the tier's checks.
#[test]
fn cx_puc_updates_see_roots_and_words() {
    use perdure_pm::NoFlush;
    use perdure_ptm::cx::Config;
    use perdure_ptm::CxPuc;
    let (_guard, pool) = unmutated_pool("cx-puc-words");
    let config = Config {
        threads: 2,
        ..Config::small()
    };
    let p = CxPuc::<NoFlush, u64>::create(pool, &config, 0).unwrap();
    let a = p
        .update(|m| {
            let a = m.alloc(64).unwrap();
            m.set_root(3, a);
            m.words_mut()[(a / 8) as usize + 1] = 0xA5;
            a
        })
        .unwrap();
    assert_eq!(p.update(|m| m.root(3)).unwrap(), a, "root 3");
    assert_eq!(
        p.read(|r| r.root(3)).unwrap(),
        a,
        "root 3 in a read-only transaction"
    );
    assert_eq!(
        p.update(move |m| m.words()[(a / 8) as usize + 1]).unwrap(),
        0xA5,
        "the word written through words_mut, read through words"
    );
    assert_eq!(
        p.update(move |m| *m.get::<u64>(a + 8).unwrap()).unwrap(),
        0xA5,
        "the word written through words_mut, read through get"
    );
    let len = p.update(|m| m.words().len() as u64).unwrap();
    let read_len = p.read(|r| r.words().len() as u64).unwrap();
    assert!(
        len * 8 >= a + 64 && len * 8 <= a + 128 && len == read_len,
        "words: {len} words, a block at {a} of 64 bytes, {read_len} words in a read"
    );
    let mut_len = p.update(|m| m.words_mut().len() as u64).unwrap();
    assert_eq!(
        mut_len, len,
        "words_mut's words (the allocated part, as words gives it)"
    );
    // The same through the annotated interface's alloc.
    let b = p
        .update(|m| {
            use perdure_ptm::Transaction;
            m.tx().alloc(64).unwrap()
        })
        .unwrap();
    let len = p.update(|m| m.words().len() as u64).unwrap();
    assert!(
        b >= a + 64 && len * 8 >= b + 64 && len * 8 <= b + 128,
        "words: {len} words, a block at {b} of 64 bytes allocated through tx()"
    );
    // A freed block is the next of its size allocated (the allocator's
    // free lists), whether `free` or `tx().free` freed it.
    let x = p
        .update(move |m| {
            m.free(a).unwrap();
            m.alloc(64).unwrap()
        })
        .unwrap();
    let y = p
        .update(move |m| {
            use perdure_ptm::Transaction;
            m.tx().free(b).unwrap();
            m.alloc(64).unwrap()
        })
        .unwrap();
    assert_eq!(
        (x, y),
        (a, b),
        "64-byte blocks allocated after freeing a, then b"
    );
}

/// A Redo-PTM of `variant` for 2 threads with 12 log entries per thread,
/// and a zeroed block of `bytes` in root 0 (allocated by its first update,
/// whose log overflows).
fn redo_with_a_block(
    pool: Pool<perdure_pm::NoFlush>,
    variant: perdure_ptm::redo::Variant,
    bytes: u64,
) -> (perdure_ptm::redo::RedoPtm<perdure_pm::NoFlush>, u64) {
    use perdure_ptm::redo::{Config, RedoPtm};
    use perdure_ptm::Transaction;
    let config = Config {
        threads: 2,
        variant,
        log_entries_per_thread: 12,
        ..Config::small()
    };
    let p = RedoPtm::create(pool, &config).unwrap();
    let a = p
        .update_tx(move |tx| {
            let a = tx.alloc_zeroed(bytes).unwrap();
            tx.set_root(0, a);
            a
        })
        .unwrap();
    (p, a)
}

/// RedoOpt-PTM's store set holds an entry for every word its log can hold:
/// with a log of 12 entries, stores to 10 words, each stored twice, make 10
/// entries. A set sized for fewer (half its slots usable) stops merging
/// after 8 words, and the second stores to the other two make 12.
/// `redo_opt_logs_a_repeated_store_once` stores to one word only.
#[test]
fn redo_opt_merges_stores_to_as_many_words_as_its_log_holds() {
    use perdure_ptm::redo::Variant;
    use perdure_ptm::{PVar, Transaction};
    let (_guard, pool) = unmutated_pool("redo-opt-set");
    let (p, a) = redo_with_a_block(pool, Variant::Opt, 128);
    let before = p.stats().log_entries;
    p.update_tx(move |tx| {
        for round in 0..2u64 {
            for w in 0..10u64 {
                tx.set(PVar::<u64>::at(a + 8 * w), 100 * round + w);
            }
        }
    })
    .unwrap();
    assert_eq!(
        p.stats().log_entries - before,
        10,
        "log entries of 20 stores to 10 words: {:?}",
        p.stats()
    );
    assert_eq!(
        p.read_tx(move |tx| tx.get(PVar::<u64>::at(a + 72)))
            .unwrap(),
        109
    );
}

/// CX-PUC keeps objects aligned to 16 bytes, so it takes an object of that
/// alignment (a `u128`), stores it and reads it back; only a wider
/// alignment is refused (`tests/suite`'s `cx_bad_input`).
#[test]
fn cx_puc_takes_a_16_byte_aligned_object() {
    use perdure_pm::NoFlush;
    use perdure_ptm::cx::Config;
    use perdure_ptm::CxPuc;
    assert_eq!(std::mem::align_of::<u128>(), 16);
    let (_guard, pool) = unmutated_pool("cx-puc-u128");
    let v = (7u128 << 64) | 9;
    let p = CxPuc::<NoFlush, u128>::create(pool, &Config::small(), v).unwrap();
    p.update(|m| {
        *m.obj_mut() += 1;
    })
    .unwrap();
    let (hi, lo) = (
        p.read(|r| (*r.obj() >> 64) as u64).unwrap(),
        p.read(|r| *r.obj() as u64).unwrap(),
    );
    assert_eq!((hi, lo), (7, 10), "the object after one increment");
}

/// A `PVar<bool>` holds both values: stored through a transaction and read
/// back by the next, true then false (the word of `false` is 0, of `true`
/// 1), in the region word at its offset (and two `PVar`s are equal, and
/// hash alike, when their offsets are). And `()` is the word 0: a `PVar<()>` store over a
/// word holding 7 leaves 0 there, as an update returning `()` leaves 0 in
/// its result word.
/// No other check stored a `bool` or a `()`.
#[test]
fn ptm_bool_and_unit_words_round_trip() {
    use perdure_ptm::redo::{Config, RedoPtm};
    use perdure_ptm::{PVar, PWord, Transaction};
    let (_guard, pool) = unmutated_pool("redo-bool");
    let p = RedoPtm::create(pool, &Config::small()).unwrap();
    let a = p
        .update_tx(|tx| {
            let a = tx.alloc_zeroed(16).unwrap();
            tx.set_root(0, a);
            a
        })
        .unwrap();
    let b = PVar::<bool>::at(a);
    assert!(
        b == PVar::at(a) && b != PVar::at(a + 8),
        "PVars are equal when their offsets are"
    );
    let hash = |v: PVar<bool>| {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        BuildHasherDefault::<DefaultHasher>::default().hash_one(v)
    };
    assert!(
        hash(b) == hash(PVar::at(a)) && hash(b) != hash(PVar::at(a + 8)),
        "PVars hash as their offsets"
    );
    for v in [true, false] {
        p.update_tx(move |tx| tx.set(b, v)).unwrap();
        assert_eq!(p.read_tx(move |tx| tx.get(b)).unwrap(), v, "stored {v}");
        assert_eq!(
            p.read_tx(move |tx| tx.load(a)).unwrap(),
            u64::from(v),
            "the region word at the PVar's offset {a:#x}, {v} stored"
        );
    }
    assert_eq!((false.into_word(), true.into_word()), (0, 1));
    let w = PVar::<u64>::at(a + 8);
    p.update_tx(move |tx| tx.set(w, 7)).unwrap();
    p.update_tx(move |tx| tx.set(PVar::<()>::at(a + 8), ()))
        .unwrap();
    assert_eq!(
        p.read_tx(move |tx| tx.get(w)).unwrap(),
        0,
        "() stored over 7"
    );
}

/// A Redo-PTM state whose log fills its owner's arena exactly (12 entries
/// of 12) is replayed like any other: the update after it brings its
/// replica up to date from that log, with no copy. One store more
/// overflows the log (an overflowed log counts no entries), and the
/// replica behind it is copied (`copies_log`): the bound is the arena's
/// capacity, inclusive.
#[test]
fn redo_replays_a_log_that_fills_its_arena() {
    use perdure_ptm::redo::Variant;
    use perdure_ptm::{PVar, Transaction};
    let (_guard, pool) = unmutated_pool("redo-full-log");
    let (p, a) = redo_with_a_block(pool, Variant::Redo, 256);
    let one_store = |v: u64| {
        p.update_tx(move |tx| tx.set(PVar::<u64>::at(a + 8 * 20), v))
            .unwrap()
    };
    // Small updates until the replicas a thread alternates between are
    // each one state behind (the allocation's log overflowed).
    for v in 0..3 {
        one_store(v);
    }
    for (stores, copied) in [(12u64, 0), (13, 1)] {
        let before = p.stats();
        p.update_tx(move |tx| {
            for w in 0..stores {
                tx.set(PVar::<u64>::at(a + 8 * w), stores + w);
            }
        })
        .unwrap();
        let mid = p.stats();
        one_store(stores);
        let after = p.stats();
        assert_eq!(
            (
                mid.log_entries - before.log_entries,
                after.copies_log - mid.copies_log,
                after.replays - mid.replays,
            ),
            (if stores <= 12 { stores } else { 0 }, copied, 1 - copied),
            "{stores} stores with a 12-entry arena, then one update: (entries logged, copies for a log, replays): {after:?}"
        );
        assert_eq!(
            p.read_tx(move |tx| tx.get(PVar::<u64>::at(a + 8 * (stores - 1))))
                .unwrap(),
            2 * stores - 1
        );
    }
}

/// Redo-PTM's rollback after a lost `cur_comb` CAS (Alg. 3 L38) marks each
/// restored word's line dirty: the replica's dirty lines were written back
/// (and cleared) before the CAS, so that mark is all that makes the next
/// commit on the replica write the restored values back. Each thread's
/// update reads a counter `c`, stores 1 to its own word `x[tid]` if `c` was
/// 0, and stores `c + 1`; `c` and the two words lie on lines of their own.
/// W (tid 1) runs its update alone and is held before its CAS; L (tid 0)
/// then runs the batch `a` (its own, from `c = 0`: `x[0] = 1`), `b` (W's:
/// `c = 2`), writes it back and is held before its CAS. W commits (`b`
/// first: `x[1] = 1`, `c = 1`). L's CAS fails, it rolls its replica back
/// and, in its second attempt on the same replica, replays W's log and
/// runs `a` again from `c = 1`, which stores `c` only: `x[0]`'s line holds
/// the failed attempt's 1 in persistent memory and 0 in the cache, and only
/// the rollback's mark makes L's commit write it back. A crash point is
/// captured at every persistence event from L's rollback to its return;
/// every image must recover `b` alone or `b` then `a` (`x = [0, 1]`,
/// `c` 1 or 2; `c = 2` at the end). Without the mark (`undo_to` marking
/// another line), the images of L's commit recover `x = [1, 1]`.
fn lost_cas_then_commit_on_the_same_replica() -> Result<String, String> {
    use perdure_ptm::{PVar, Transaction};
    use std::sync::mpsc;
    let c = Redo::small("redo", 4);
    let p = leaked(&c, "mutant-lost-cas-replica")?;
    let blk = {
        let h = p.handle().map_err(|e| e.to_string())?;
        h.update_tx(|tx| {
            let b = tx.alloc_zeroed(512).unwrap();
            tx.set_root(0, b);
            b
        })
    };
    let (cnt, x) = (blk, [blk + 192, blk + 384]);
    let sim: &'static Sim = c.pool(p).backend();
    FENCE_SIM.store(sim as *const Sim as *mut Sim, SeqCst);
    for k in 0..2 {
        *BEFORE_CAS[k].lock().unwrap_or_else(|e| e.into_inner()) = None;
        HELD[k].store(false, SeqCst);
        GO[k].store(false, SeqCst);
    }
    if !sim.set_yield_hook(gate_before_cas) {
        return Err("the simulator already has a yield hook".into());
    }
    // Slot 0 holds W, slot 1 L. The update of thread `tid`:
    let update = move |tid: usize| {
        move |tx: &perdure_ptm::redo::Tx<'_, Sim>| -> u64 {
            let n = tx.get(PVar::<u64>::at(cnt));
            if n == 0 {
                tx.set(PVar::<u64>::at(x[tid]), 1);
            }
            tx.set(PVar::<u64>::at(cnt), n + 1);
            n
        }
    };
    let release = || {
        GO[0].store(true, SeqCst);
        GO[1].store(true, SeqCst);
    };
    let wait_held = |k: usize| {
        let start = Instant::now();
        while !HELD[k].load(SeqCst) {
            if start.elapsed() > Duration::from_secs(20) {
                release();
                return Err(format!("{} was never held before its CAS", ["W", "L"][k]));
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        Ok(())
    };
    let points = std::sync::Arc::new(Mutex::new(Vec::new()));
    let (rw, rl) = std::thread::scope(|s| -> Result<(u64, u64), String> {
        let (ready_tx, ready_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let l = s.spawn(move || -> Option<(usize, u64)> {
            let h = p.handle().ok()?;
            ready_tx.send(h.tid()).ok()?;
            go_rx.recv().ok()?;
            *BEFORE_CAS[1].lock().unwrap_or_else(|e| e.into_inner()) =
                Some(std::thread::current().id());
            FENCES_AT_ARM[1].store(sim.counts().pfence, SeqCst);
            let r = h.update_tx(update(h.tid()));
            GO[1].store(true, SeqCst);
            Some((h.tid(), r))
        });
        ready_rx.recv().map_err(|_| "L took no thread id")?;
        let w = s.spawn(move || -> Option<(usize, u64)> {
            let h = p.handle().ok()?;
            *BEFORE_CAS[0].lock().unwrap_or_else(|e| e.into_inner()) =
                Some(std::thread::current().id());
            FENCES_AT_ARM[0].store(sim.counts().pfence, SeqCst);
            let r = h.update_tx(update(h.tid()));
            GO[0].store(true, SeqCst);
            Some((h.tid(), r))
        });
        let held = wait_held(0);
        let _ = go_tx.send(());
        held?;
        wait_held(1)?;
        GO[0].store(true, SeqCst);
        let rw = w.join().map_err(|_| "W panicked")?;
        {
            let points = points.clone();
            sim.set_crash_hook(move |_, view| points.lock().unwrap().push(view.capture()));
        }
        GO[1].store(true, SeqCst);
        let rl = l.join().map_err(|_| "L panicked")?;
        sim.clear_crash_hook();
        match (rw, rl) {
            (Some((1, rw)), Some((0, rl))) => Ok((rw, rl)),
            other => Err(format!(
                "(tid, result) of W and L: {other:?}, expected tids 1 and 0"
            )),
        }
    })?;
    let mut points = std::mem::take(&mut *points.lock().unwrap());
    points.push(sim.capture());
    let stats = p.stats();
    if (rw, rl) != (0, 1) || stats.rollbacks != 1 {
        return Err(format!(
            "W's update returned {rw}, L's {rl} (expected 0 and 1, after one rollback): {stats:?}"
        ));
    }
    let w = Window {
        t1_result: json!(rl),
        points,
    };
    let summary = check_images(&c, &w, |p, last| {
        let read = |off: u64| p.read_tx(move |tx| tx.load(off)).map_err(|e| e.to_string());
        let got = (read(cnt)?, read(x[0])?, read(x[1])?);
        match got {
            (2, 0, 1) | (1, 0, 1) if !last || got.0 == 2 => Ok(()),
            (n, x0, x1) => Err(format!(
                "recovered c = {n}, x = [{x0}, {x1}] (W's update returned first, from c = 0: x must be [0, 1], c 1 or 2{})",
                if last { ", 2 once L returned" } else { "" }
            )),
        }
    })?;
    Ok(format!(
        "Redo-PTM: W held before its CAS, L's wider batch held before its CAS, W commits, L's CAS fails ({} rollback) and L commits on the same replica; {summary}",
        stats.rollbacks
    ))
}

#[test]
fn redo_lost_cas_then_commit_on_the_same_replica() {
    let _guard = mutant::lock();
    mutant::set(None);
    match lost_cas_then_commit_on_the_same_replica() {
        Ok(s) => println!("{s}"),
        Err(why) => panic!("{why}"),
    }
}

/// `cur_comb_word` (the accessor tools and tests read `cur_comb` through)
/// names the replica each commit designates: a commit writes a replica
/// other than the designated one and CASes `cur_comb` to it, so the
/// replica index changes with every update, on Redo-PTM as on CX-PTM.
#[test]
fn cur_comb_word_moves_with_every_commit() {
    use perdure_pm::NoFlush;
    use perdure_ptm::internals::sti;
    use perdure_ptm::{CxPtm, RedoPtm, Transaction};
    let redo = RedoPtm::create(
        Pool::volatile("cur-comb-redo", 1 << 20, NoFlush).unwrap(),
        &perdure_ptm::redo::Config::small(),
    )
    .unwrap();
    let cx = CxPtm::create(
        Pool::volatile("cur-comb-cx", 1 << 20, NoFlush).unwrap(),
        &perdure_ptm::cx::Config::small(),
    )
    .unwrap();
    let mut seen = (Vec::new(), Vec::new());
    for i in 0..6u64 {
        redo.update_tx(move |tx| tx.set_root(0, i)).unwrap();
        cx.update_tx(move |tx| tx.set_root(0, i)).unwrap();
        seen.0.push(sti::idx(redo.cur_comb_word()));
        seen.1.push(sti::idx(cx.cur_comb_word()));
    }
    for (name, idx) in [("Redo-PTM", &seen.0), ("CX-PTM", &seen.1)] {
        assert!(
            idx.windows(2).all(|w| w[0] != w[1]),
            "{name}: the designated replica after each of 6 commits: {idx:?}"
        );
    }
}

/// Redo-PTM's step {4} writes the ring slot of the commit `tail` itself
/// when that slot holds an older commit (a lapped ring), so an update of
/// another thread goes on while the committer of `tail` is held between its
/// `cur_comb` CAS and its own ring write (L32–L35): Redo-PTM with 2 threads
/// of 4 states (a ring of 8), nine `add(1)`s first so that every slot holds
/// a commit, then T0's `add(1)` paused right after its CAS (the simulator's
/// yield hook, as [`window`]), and T1's `add(1)` must return within 10 s
/// while T0 stays paused; then the counter must read 11. (The campaign's
/// `update.rs:149:34` mutant, `rt != INVALID || …`, skips a slot holding
/// any other commit: T1's attempts give up until T0 writes the slot, which
/// it never does while paused. Before the ring laps its slots are
/// `INVALID`, which is why the window checks, on fresh PTMs, pass with it.)
#[test]
fn redo_update_helps_the_ring_slot_of_a_paused_committer() {
    let _guard = mutant::lock();
    mutant::set(None);
    let c = Redo::small("redo", 4);
    let p = leaked(&c, "redo-ring-help").expect("PTM");
    let add = Call::new("add", vec![json!(1)]);
    // T1, one of the PTM's two threads (this thread runs no transaction):
    // the counter's creation and nine add(1)s, then, once T0 is paused, its
    // add(1) in the window.
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let (done, result) = std::sync::mpsc::channel();
    let t1 = {
        let add = add.clone();
        std::thread::spawn(move || {
            Counter.init(p).expect("init");
            for _ in 0..9 {
                Counter.apply(p, &add).expect("add(1)");
            }
            let _ = done.send(Ok(Value::Null));
            if wait.recv().is_ok() {
                let _ = done.send(Counter.apply(p, &add));
            }
        })
    };
    result
        .recv()
        .expect("T1's nine add(1)s")
        .expect("T1's nine add(1)s");
    let sim = c.pool(p).backend();
    let t0 = start_paused(sim, cur_comb_reader(c.pool(p)), Counter, p, add)
        .expect("T0 paused after its CAS");
    go.send(()).expect("T1 waiting");
    let t1_result = result.recv_timeout(Duration::from_secs(10));
    RESUME.store(true, SeqCst);
    let t0_result = t0.join().expect("T0 panicked");
    t1.join().expect("T1 panicked");
    assert!(
        t1_result.is_ok(),
        "T1's add(1) did not return within 10 s while T0 was paused after its cur_comb CAS"
    );
    t0_result.expect("T0's add(1)");
    t1_result.unwrap().expect("T1's add(1)");
    let v = std::thread::spawn(move || Counter.apply(p, &Call::new("get", vec![])))
        .join()
        .expect("get() panicked");
    assert_eq!(v, Ok(json!(11)), "the counter after eleven add(1)s");
}

/// The replicas fit the pool at every size (`layout::create`): the space
/// after the header and the replicas' table is split into equal replicas,
/// each rounded down to 4 KiB, so for most sizes the rounding would hide an
/// over-count of that space; 48 consecutive sizes, 4 KiB apart, cover every
/// remainder for up to 48 replicas. Each pool is created, closed and opened
/// again (`open` refuses a geometry that does not fit the pool), then used.
#[test]
fn redo_replicas_fit_the_pool_at_every_size() {
    use perdure_pm::NoFlush;
    use perdure_ptm::redo::{Config, RedoPtm};
    use perdure_ptm::{PVar, Transaction};
    let _guard = mutant::lock();
    mutant::set(None);
    let dir = std::env::temp_dir().join(format!("perdure-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = Config {
        threads: 2,
        ..Config::small()
    };
    for k in 0..48u64 {
        let size = (4 << 20) + 4096 * k;
        let path = dir.join(format!("fit-{k}.ptm"));
        let _ = std::fs::remove_file(&path);
        let pool: Pool<NoFlush> = Pool::create(&path, "fit", size).unwrap();
        let p = RedoPtm::create(pool, &config).unwrap();
        drop(p);
        let pool: Pool<NoFlush> = Pool::open(&path, "fit").unwrap();
        let p = RedoPtm::open(pool, &config)
            .unwrap_or_else(|e| panic!("a {size}-byte pool reopened: {e}"));
        let h = p.handle().unwrap();
        h.update_tx(|tx| {
            let c = tx.alloc_zeroed(8).unwrap();
            tx.set_root(0, c);
            tx.set(PVar::<u64>::at(c), 7);
        });
        assert_eq!(
            h.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0)))),
            7,
            "a {size}-byte pool"
        );
        drop(h);
        drop(p);
        std::fs::remove_file(&path).unwrap();
    }
    let _ = std::fs::remove_dir(&dir);
}

/// A pool too small for a PTM is refused with `PtmError::PoolTooSmall`,
/// whose `needed` is the least pool size that fits: `create` succeeds on a
/// pool of exactly `needed` bytes and refuses one a page shorter, naming the
/// same `needed` again. Redo-PTM and CX-PTM (both lay out their replicas
/// through `layout::create`), at 2 and 5 threads. A `needed` that
/// under-counts sends users to a size that still fails; one that
/// over-counts asks for more than it takes.
#[test]
fn pool_too_small_names_the_least_size_that_fits() {
    use perdure_pm::NoFlush;
    use perdure_ptm::{cx, redo, CxPtm, PtmError, RedoPtm};
    let _guard = mutant::lock();
    mutant::set(None);
    let pool = |size: u64| Pool::volatile("too-small", size, NoFlush).unwrap();
    let needed = |r: Result<(), PtmError>, what: &str| match r {
        Err(PtmError::PoolTooSmall { needed, .. }) => needed,
        other => panic!("{what}: expected PoolTooSmall, got {other:?}"),
    };
    for threads in [2, 5] {
        let redo_cfg = redo::Config {
            threads,
            ..redo::Config::small()
        };
        let cx_cfg = cx::Config {
            threads,
            ..cx::Config::small()
        };
        let create = |size: u64, cx: bool| -> Result<(), PtmError> {
            if cx {
                CxPtm::create(pool(size), &cx_cfg).map(drop)
            } else {
                RedoPtm::create(pool(size), &redo_cfg).map(drop)
            }
        };
        for cx in [false, true] {
            let what = format!(
                "{}, {threads} threads",
                if cx { "CX-PTM" } else { "Redo-PTM" }
            );
            let n = needed(create(8 << 10, cx), &format!("{what}, 8 KiB"));
            assert!(n > 8 << 10, "{what}: needed {n} is not above 8 KiB");
            create(n, cx).unwrap_or_else(|e| panic!("{what}: a pool of needed = {n} bytes: {e}"));
            let again = needed(create(n - 4096, cx), &format!("{what}, {} bytes", n - 4096));
            assert_eq!(again, n, "{what}: needed changed with the pool's size");
        }
    }
}

/// One Redo-PTM's life on one thread: created on a volatile pool, `n`
/// update transactions (each announces a boxed request, later retired),
/// then dropped.
fn redo_life(n: u64) {
    use perdure_pm::NoFlush;
    use perdure_ptm::redo::{Config, RedoPtm};
    use perdure_ptm::Transaction;
    let pool = Pool::volatile("redo-drop", 8 << 20, NoFlush).unwrap();
    let config = Config {
        threads: 2,
        ..Config::small()
    };
    let p = RedoPtm::create(pool, &config).unwrap();
    let h = p.handle().unwrap();
    for k in 0..n {
        h.update_tx(move |tx| tx.set_root(1, k));
    }
    drop(h);
    drop(p);
}

/// Dropping a Redo-PTM frees the requests still announced and every
/// thread's retired ones (`impl Drop for RedoPtm`): a leak no crash check
/// sees. Without the drop, 40 bytes stay allocated (the last request). The binary counts each thread's live heap bytes
/// (`perdure_harness::heapcount`).
#[test]
fn redo_drop_frees_its_requests() {
    let _guard = mutant::lock();
    mutant::set(None);
    // A first life warms up whatever is allocated once per thread.
    redo_life(4);
    let before = perdure_harness::heapcount::live_bytes();
    redo_life(100);
    let leaked = perdure_harness::heapcount::live_bytes() - before;
    // The last request stays announced until the drop frees it (40 bytes
    // when this check was written): every byte must come back.
    assert_eq!(
        leaked, 0,
        "bytes not freed after a Redo-PTM's life of 100 updates"
    );
}
