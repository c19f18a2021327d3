//! Full-system crash checking on perdure-pm's Px86 simulator, shared by the
//! crash tests of every construction: capture a crash point after every
//! persistence event of a workload, then materialise each point's crash
//! images (all, or a seeded sample beyond a limit), reopen each (null
//! recovery) and hand the recovered PTM to a check.

use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::{Pool, Sim};
use perdure_ptm::{Ptm, Transaction, TxRead};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

/// Images checked per crash point (all of them if there are fewer).
pub fn image_limit() -> u64 {
    if cfg!(debug_assertions) {
        8
    } else {
        48
    }
}

/// A crash point with what the workload had started and completed by then
/// (per thread).
pub struct Point {
    pub cp: CrashPoint,
    pub started: Vec<u64>,
    pub completed: Vec<u64>,
}

impl Point {
    /// Checks that thread `t`'s `n` recovered transactions are whole ones
    /// it ran: none it completed is lost, none it had not started is there.
    pub fn assert_recovered(&self, t: usize, n: u64) {
        assert!(
            self.completed[t] <= n && n <= self.started[t],
            "event {}: thread {t} recovered {n} transactions, completed {} started {}",
            self.cp.event,
            self.completed[t],
            self.started[t]
        );
    }
}

/// Transactions started and completed per thread, as the workload counts
/// them.
pub struct Progress {
    pub started: Vec<AtomicU64>,
    pub completed: Vec<AtomicU64>,
}

impl Progress {
    pub fn new(threads: usize) -> Arc<Progress> {
        Arc::new(Progress {
            started: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            completed: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        })
    }
    fn snapshot(v: &[AtomicU64]) -> Vec<u64> {
        v.iter().map(|a| a.load(SeqCst)).collect()
    }
}

/// Runs `work` with a crash point captured after every persistence event
/// of `sim`.
pub fn capture(sim: &Sim, progress: &Arc<Progress>, work: impl FnOnce()) -> Vec<Point> {
    let points = Arc::new(Mutex::new(Vec::new()));
    {
        let (points, progress) = (points.clone(), progress.clone());
        sim.set_crash_hook(move |_, view| {
            // Completed first: a transaction counted completed here has
            // returned, so it also counts as started.
            let completed = Progress::snapshot(&progress.completed);
            let started = Progress::snapshot(&progress.started);
            points.lock().unwrap().push(Point {
                cp: view.capture(),
                started,
                completed,
            });
        });
    }
    work();
    sim.clear_crash_hook();
    Arc::try_unwrap(points)
        .ok()
        .expect("the hook is gone")
        .into_inner()
        .unwrap()
}

/// Materialises every checked image of every point, reopens it with
/// `open`, and hands the recovered PTM to `check`. Returns (points, images,
/// exhaustive points).
pub fn recover_all<P, E: std::fmt::Display>(
    points: &[Point],
    open: impl Fn(Pool<Sim>) -> Result<P, E>,
    mut check: impl FnMut(&P, &Point),
) -> (usize, u64, usize) {
    let mut images = 0;
    let mut exhaustive = 0;
    for (i, pt) in points.iter().enumerate() {
        let (coverage, it) = pt.cp.images(image_limit(), 0x5eed ^ i as u64);
        if coverage == perdure_pm::px86::Coverage::Exhaustive {
            exhaustive += 1;
        }
        for img in it {
            images += 1;
            let words = pt.cp.materialize(&img, VolatileFill::Zeroed);
            let pool = Pool::volatile_from_words(&words, Sim::default()).expect("a pool image");
            let p = open(pool).unwrap_or_else(|e| {
                panic!(
                    "crash point {i} (event {}): recovery failed: {e}",
                    pt.cp.event
                )
            });
            check(&p, pt);
        }
    }
    (points.len(), images, exhaustive)
}

/// The one-thread workload ([`one_thread`]) on a PTM `create` makes on a
/// fresh `Sim` pool with `options` (its pool: `pool_of`), every crash image
/// reopened with `open`
/// and checked ([`check_one_thread`]); prints PERDURE-CHECK row `name`.
pub fn run_one_thread<P: Ptm, E: std::fmt::Display>(
    options: perdure_pm::SimOptions,
    pool_size: u64,
    create: impl FnOnce(Pool<Sim>) -> P,
    pool_of: fn(&P) -> &Pool<Sim>,
    open: impl Fn(Pool<Sim>) -> Result<P, E>,
    name: &str,
) {
    let pool = Pool::volatile("ptm-crash", pool_size, Sim::new(options)).unwrap();
    let p = create(pool);
    let points = one_thread(&p, pool_of(&p).backend());
    report(name, recover_all(&points, open, check_one_thread));
}

/// [`run_one_thread`] on the PTM a construction's own `create` makes with
/// `config`, every crash image reopened by its `open` with `config`.
pub fn run_one_thread_with<C, P: Ptm, E: std::fmt::Display + std::fmt::Debug>(
    options: perdure_pm::SimOptions,
    pool_size: u64,
    config: &C,
    create: impl FnOnce(Pool<Sim>, &C) -> Result<P, E>,
    pool_of: fn(&P) -> &Pool<Sim>,
    open: impl Fn(Pool<Sim>, &C) -> Result<P, E>,
    name: &str,
) {
    let make = |pool| create(pool, config).unwrap();
    run_one_thread(
        options,
        pool_size,
        make,
        pool_of,
        |pool| open(pool, config),
        name,
    );
}

/// Crashes inside `create`: a crash point after every persistence event of
/// the PTM's creation on a fresh `Sim` pool with `options`; every checked
/// image is reopened with `open`, which either refuses with an error (the
/// creation had not completed) or gives a PTM whose roots are all zero and
/// that commits an update. Prints PERDURE-CHECK row `explore:ptm/{name}`.
pub fn run_creation<P: Ptm, E: std::fmt::Display>(
    options: perdure_pm::SimOptions,
    pool_size: u64,
    create: impl FnOnce(Pool<Sim>) -> P,
    pool_of: fn(&P) -> &Pool<Sim>,
    open: impl Fn(Pool<Sim>) -> Result<P, E>,
    name: &str,
) {
    let pool = Pool::volatile("ptm-create", pool_size, Sim::new(options)).unwrap();
    let points = Arc::new(Mutex::new(Vec::new()));
    {
        let points = points.clone();
        pool.backend()
            .set_crash_hook(move |_, view| points.lock().unwrap().push(view.capture()));
    }
    let p = create(pool);
    pool_of(&p).backend().clear_crash_hook();
    drop(p);
    let points: Vec<CrashPoint> = std::mem::take(&mut *points.lock().unwrap());
    let (mut images, mut recovered, mut refused) = (0u64, 0u64, 0u64);
    for (i, cp) in points.iter().enumerate() {
        let (_, it) = cp.images(image_limit(), 0xc7ea7e ^ i as u64);
        for img in it {
            images += 1;
            let words = cp.materialize(&img, VolatileFill::Zeroed);
            let pool = Pool::volatile_from_words(&words, Sim::default()).expect("a pool image");
            let Ok(p) = open(pool) else {
                refused += 1;
                continue;
            };
            let roots: Vec<u64> = (0..3)
                .map(|r| p.read_tx(move |tx| tx.root(r)).unwrap())
                .collect();
            assert!(
                roots.iter().all(|&r| r == 0),
                "{name}: crash point {i} (event {}): a PTM opened after a crash inside create holds roots {roots:?}",
                cp.event
            );
            p.update_tx(|tx| tx.set_root(1, 7)).unwrap();
            assert_eq!(
                p.read_tx(|tx| tx.root(1)).unwrap(),
                7,
                "{name}: event {}",
                cp.event
            );
            recovered += 1;
        }
    }
    assert!(images > 0, "{name}: no crash point inside create");
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:ptm/{name}\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{} crash points inside create, {images} images checked: {recovered} opened as an empty PTM that commits, {refused} refused with an error\",\"detail\":\"a crash inside create leaves no PTM or an empty one, never a partial one\"}}",
        points.len()
    );
}

/// Prints the PERDURE-CHECK row of a crash test.
pub fn report(name: &str, (points, images, exhaustive): (usize, u64, usize)) {
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:ptm/{name}\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{points} crash points, {images} Px86 crash images ({exhaustive} points exhaustively)\",\"detail\":\"every completed transaction recovered, none in part; the recovered PTM commits the next update\"}}"
    );
}

thread_local! {
    /// Calls of [`quiet_panics`] in progress on this OS thread (a count, not
    /// a flag: shuttle runs its tasks on one OS thread, and one task's quiet
    /// section may interleave with another's).
    static QUIET: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Runs `f`, which is expected to panic, with the panic hook silent on
/// this OS thread meanwhile; returns whether it did (`Err`).
pub fn quiet_panics<R>(f: impl FnOnce() -> R) -> Result<R, ()> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(|q| q.get()) == 0 {
                prev(info);
            }
        }));
    });
    QUIET.with(|q| q.set(q.get() + 1));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(q.get() - 1));
    r.map_err(drop)
}

/// Transactions of the one-thread workload.
pub const ONE_THREAD_K: u64 = 5;

/// One thread, transactions `i = 1..=K`: `a = b = i` in two words on
/// different lines, root 1 = i, and a node `i` pushed on the list at root 2
/// (an allocation per transaction); after each odd `i`, a transaction that
/// stores `1000 + i` into `a` and root 1 and then panics (rolled back).
/// Returns the crash points of `sim`, the PTM's backend.
pub fn one_thread<P: Ptm>(p: &P, sim: &Sim) -> Vec<Point> {
    p.update_tx(|tx| {
        let rec = tx.alloc_zeroed(128).unwrap();
        tx.set_root(0, rec);
    })
    .unwrap();
    let progress = Progress::new(1);
    let points = capture(sim, &progress, || {
        for i in 1..=ONE_THREAD_K {
            progress.started[0].fetch_add(1, SeqCst);
            p.update_tx(move |tx| {
                let rec = tx.root(0);
                tx.store(rec, i);
                tx.store(rec + 64, i);
                tx.set_root(1, i);
                let node = tx.alloc(16).unwrap();
                tx.store(node, i);
                tx.store(node + 8, tx.root(2));
                tx.set_root(2, node);
            })
            .unwrap();
            progress.completed[0].fetch_add(1, SeqCst);
            if i % 2 == 1 {
                // A transaction whose closure panics after storing: its
                // stores are rolled back (the undo paths), and no crash
                // image may show them.
                let r = quiet_panics(|| {
                    p.update_tx(move |tx| -> () {
                        let rec = tx.root(0);
                        tx.store(rec, 1000 + i);
                        tx.set_root(1, 1000 + i);
                        std::panic::resume_unwind(Box::new("rolled back on purpose"))
                    })
                });
                assert!(r.is_err(), "a panicking transaction committed");
            }
        }
    });
    assert!(
        points.len() > 10 * ONE_THREAD_K as usize,
        "{} crash points",
        points.len()
    );
    points
}

/// The recovered state of [`one_thread`] is `n` whole transactions,
/// `completed ≤ n ≤ started`, and the recovered PTM commits an update
/// whose allocation is no live node.
pub fn check_one_thread<P: Ptm>(p: &P, pt: &Point) {
    let n: u64 = p.read_tx(|tx| tx.root(1)).unwrap();
    pt.assert_recovered(0, n);
    let ok: bool = p
        .read_tx(move |tx| {
            let rec = tx.root(0);
            let mut cur = tx.root(2);
            let mut expect = n;
            while cur != 0 {
                if tx.load(cur) != expect {
                    return false;
                }
                expect -= 1;
                cur = tx.load(cur + 8);
            }
            expect == 0 && tx.load(rec) == n && tx.load(rec + 64) == n
        })
        .unwrap();
    assert!(
        ok,
        "event {}: a partial transaction after recovery (n = {n})",
        pt.cp.event
    );
    let fresh: bool = p
        .update_tx(move |tx| {
            let node = tx.alloc(16).unwrap();
            let mut cur = tx.root(2);
            while cur != 0 {
                if cur == node {
                    return false;
                }
                cur = tx.load(cur + 8);
            }
            tx.set_root(1, n + 1);
            true
        })
        .unwrap();
    assert!(
        fresh,
        "event {}: the allocator handed out a live node",
        pt.cp.event
    );
    assert_eq!(p.read_tx(|tx| tx.root(1)).unwrap(), n + 1);
}

/// Transactions per thread of the two-thread workload.
pub const TWO_THREADS_K: u64 = 3;

/// Two threads, three transactions each: each increments its own slot and
/// a shared total (one thread's transactions may be run by the other). The
/// threads lease their ids (setup runs on a thread of its own and gives
/// its id back, so the main thread keeps none).
pub fn two_threads<P: Ptm + Sync>(p: &P, sim: &Sim) -> Vec<Point> {
    std::thread::scope(|s| {
        s.spawn(|| {
            p.update_tx(|tx| {
                let rec = tx.alloc_zeroed(192).unwrap();
                tx.set_root(0, rec);
            })
            .unwrap();
            // The scope can return before this thread's locals (and its
            // lease) are destroyed; the two threads below need both ids.
            assert_eq!(perdure_ptm::release_thread_ids(), Some(1));
        });
    });
    let progress = Progress::new(2);
    capture(sim, &progress, || {
        std::thread::scope(|s| {
            for t in 0..2usize {
                let progress = &progress;
                s.spawn(move || {
                    for _ in 0..TWO_THREADS_K {
                        progress.started[t].fetch_add(1, SeqCst);
                        p.update_tx(move |tx| {
                            let rec = tx.root(0);
                            let slot = rec + 64 * (1 + t as u64);
                            tx.store(slot, tx.load(slot) + 1);
                            tx.store(rec, tx.load(rec) + 1);
                        })
                        .unwrap();
                        progress.completed[t].fetch_add(1, SeqCst);
                    }
                });
            }
        })
    })
}

/// The recovered state of [`two_threads`]: the total is the sum of the
/// slots, each slot between what its thread completed and started, and the
/// recovered PTM commits.
pub fn check_two_threads<P: Ptm>(p: &P, pt: &Point) {
    let w: u64 = p
        .read_tx(|tx| {
            let rec = tx.root(0);
            (tx.load(rec) << 40) | (tx.load(rec + 64) << 20) | tx.load(rec + 128)
        })
        .unwrap();
    let (total, s0, s1) = (w >> 40, (w >> 20) & 0xfffff, w & 0xfffff);
    assert_eq!(
        total,
        s0 + s1,
        "event {}: a partial transaction",
        pt.cp.event
    );
    for (t, s) in [s0, s1].into_iter().enumerate() {
        pt.assert_recovered(t, s);
    }
    let after: u64 = p
        .update_tx(|tx| {
            let rec = tx.root(0);
            tx.store(rec, tx.load(rec) + 1);
            tx.load(rec)
        })
        .unwrap();
    assert_eq!(after, total + 1);
}
