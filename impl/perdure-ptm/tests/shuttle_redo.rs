//! shuttle: randomized and PCT schedules (seeded, reproducible) of Redo-PTM's
//! combining consensus, with and without full crashes; and random schedules
//! of RedoOpt-PTM (`*_opt_*`, fewer schedules).
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-ptm --test shuttle_redo` (`make verify` does). Without the cfg this
//! file is empty. `PERDURE_SHUTTLE_ITERS` sets the schedules per test
//! (default 1,000; 20,000 with `PERDURE_DEPTH=deep`).
//!
//! Every shared access of the PTM — the announce and request arrays, hazard
//! pointers, locks, heads, the ring, states, logs, and every word of the
//! replicas and of `cur_comb` — is a shuttle scheduling point, so the
//! schedules interleave threads inside copies, replays and simulations.
//!
//! * `consensus_*`: three threads, three updates each (a shared total and a
//!   slot per thread), and a reader: the total is the sum of the slots in
//!   every read, no increment is lost or doubled, and every thread gets back
//!   its own results.
//! * `crash_*`: two threads, two updates each, on the Px86 simulator; after
//!   every persistence event a crash point is captured, and at the end of the
//!   schedule each point's crash images (all, or a seeded sample of 32) are
//!   checked as null recovery reads them — the state `cur_comb` designates
//!   is whole transactions, between what had completed and what had started
//!   per thread — and some are reopened and updated.
//! * `timed_window_replays_instead_of_copying`: RedoTimed with a window that
//!   never closes, two writers: at most the first update copies a replica
//!   (a regression test of step {6}'s stale-`tail` case, which made two
//!   writers copy the whole object; it fails without the fix).

#![cfg(perdure_shuttle)]

use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::sync::{thread, Arc};
use perdure_pm::{NoFlush, Pool, Sim};
use perdure_ptm::redo::{Config, RedoPtm, Variant};
use perdure_ptm::{Transaction, TxRead};

fn iterations() -> usize {
    let deep = std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "deep");
    std::env::var("PERDURE_SHUTTLE_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if deep { 20_000 } else { 1000 })
}

/// `v` runs with an empty RedoTimed window: shuttle replays schedules,
/// so nothing may depend on the clock (`tests/redo_variants.rs` checks the
/// window with real threads); RedoOpt's aggregation, distinct dirty lines
/// and non-temporal copies are explored as they are.
fn config(threads: usize, v: Variant) -> Config {
    Config {
        threads,
        states_per_thread: 4,
        log_entries_per_thread: 256,
        dirty_lines_per_replica: 32,
        max_read_tries: 2,
        variant: v,
        timed_window: Some(std::time::Duration::ZERO),
    }
}

/// The record at root 0: word 0 the total, word 8·(1 + t) the slot of the
/// test's thread `t` (its spawn index, not its thread id: ids are reused
/// once a thread drops its handle).
fn bump_slot<T: Transaction>(tx: &T, t: u64) -> u64 {
    let rec = tx.root(0);
    let slot = rec + 8 * (1 + t);
    let n = tx.load(slot) + 1;
    tx.store(slot, n);
    tx.store(rec, tx.load(rec) + 1);
    (t << 32) | n
}

fn setup<B: perdure_pm::Backend>(p: &RedoPtm<B>, words: u64) {
    p.handle().unwrap().update_tx(move |tx| {
        let rec = tx.alloc_zeroed(8 * words).unwrap();
        tx.set_root(0, rec);
    });
}

/// `writers` threads, each running `updates` [`bump_slot`] transactions and
/// checking that each returns its own slot's new value.
fn spawn_writers(
    p: &Arc<RedoPtm<NoFlush>>,
    writers: u64,
    updates: u64,
) -> Vec<thread::JoinHandle<()>> {
    (0..writers)
        .map(|t| {
            let p = p.clone();
            thread::spawn(move || {
                let h = p.handle().unwrap();
                for i in 1..=updates {
                    let r = h.update_tx(move |tx| bump_slot(tx, t));
                    assert_eq!(r, (t << 32) | i, "thread {t} got {r:#x}");
                }
            })
        })
        .collect()
}

fn consensus(v: Variant) {
    let pool = Pool::volatile("shuttle-redo", 32 << 10, NoFlush).unwrap();
    let p = Arc::new(RedoPtm::create(pool, &config(4, v)).unwrap());
    setup(&p, 4);
    let writers = spawn_writers(&p, 3, 3);
    let reader = {
        let p = p.clone();
        thread::spawn(move || {
            let h = p.handle().unwrap();
            for _ in 0..2 {
                let ok: bool = h.read_tx(|tx| {
                    let rec = tx.root(0);
                    tx.load(rec) == (1..4).map(|t| tx.load(rec + 8 * t)).sum::<u64>()
                });
                assert!(ok, "a read saw part of a transaction");
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    reader.join().unwrap();
    let total: u64 = p.handle().unwrap().read_tx(|tx| tx.load(tx.root(0)));
    assert_eq!(total, 9);
}

/// RedoTimed with a window that never closes: two writers share
/// `combs[0]` and `combs[1]`, each a commit or two behind the other, so
/// after the first update's copy (a fresh PTM's other replicas are invalid)
/// every replica is brought up to date by replaying logs. Returns the
/// copies made. An attempt that read `cur_comb` before the other writer
/// committed twice finds its replica *ahead* of its `tail`; step {6} used
/// to invalidate it and then copy (found by the SPS bench).
fn timed_copies() -> u64 {
    let pool = Pool::volatile("shuttle-redo-copies", 32 << 10, NoFlush).unwrap();
    let c = Config {
        states_per_thread: 16,
        timed_window: Some(std::time::Duration::MAX),
        ..config(2, Variant::Timed)
    };
    let p = Arc::new(RedoPtm::create(pool, &c).unwrap());
    setup(&p, 3);
    let writers = spawn_writers(&p, 2, 4);
    for w in writers {
        w.join().unwrap();
    }
    p.stats().copies
}

#[test]
fn timed_window_replays_instead_of_copying() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    let most = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let m = most.clone();
    perdure_pm::sync::seeded::check_random(
        move || {
            let copies = timed_copies();
            m.fetch_max(copies, std::sync::atomic::Ordering::Relaxed);
            assert!(
                copies <= 1,
                "{copies} copies: only the first update should copy"
            );
        },
        n,
    );
    let most = most.load(std::sync::atomic::Ordering::Relaxed);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:ptm/redotimed-no-copy-storm\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} random schedules (seed {seed}) of RedoTimed-PTM with a window that never closes, 2 writers x 4 updates\",\"detail\":\"at most {most} copy per schedule (the first update's): every other replica is brought up to date by replay\"}}");
}

#[test]
fn consensus_random() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_random(|| consensus(Variant::Redo), n);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:ptm/redo-consensus-random\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} random schedules (seed {seed}), 3 writers x 3 updates + 1 reader\",\"detail\":\"no lost or doubled update, results to the right thread, reads see whole transactions; no crashes injected\"}}");
}

#[test]
fn consensus_pct() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_pct(|| consensus(Variant::Redo), n, 3);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:ptm/redo-consensus-pct\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} PCT schedules (depth 3, seed {seed}), 3 writers x 3 updates + 1 reader\",\"detail\":\"no lost or doubled update, results to the right thread, reads see whole transactions; no crashes injected\"}}");
}

struct Point {
    cp: CrashPoint,
    started: [u64; 2],
    completed: [u64; 2],
}

fn crash(v: Variant) {
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
    let pool = Pool::volatile("shuttle-redo-crash", 32 << 10, Sim::default()).unwrap();
    // Write-backs and fences are scheduling points too: a thread can be
    // preempted between its `cur_comb` CAS and its `psync`.
    pool.backend().set_yield_hook(shuttle::thread::yield_now);
    let p = Arc::new(RedoPtm::create(pool, &config(2, v)).unwrap());
    setup(&p, 3);
    // Progress per thread, read by the crash hook (outside shuttle's view).
    let progress: std::sync::Arc<[[AtomicU64; 2]; 2]> = std::sync::Arc::new(Default::default());
    let points = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    {
        let (points, progress) = (points.clone(), progress.clone());
        p.pool().backend().set_crash_hook(move |_, view| {
            let completed = [progress[0][1].load(SeqCst), progress[1][1].load(SeqCst)];
            let started = [progress[0][0].load(SeqCst), progress[1][0].load(SeqCst)];
            points.lock().unwrap().push(Point {
                cp: view.capture(),
                started,
                completed,
            });
        });
    }
    let ts: Vec<_> = (0..2usize)
        .map(|t| {
            let (p, progress) = (p.clone(), progress.clone());
            thread::spawn(move || {
                let h = p.handle().unwrap();
                for _ in 0..2 {
                    progress[t][0].fetch_add(1, SeqCst);
                    h.update_tx(move |tx| bump_slot(tx, t as u64));
                    progress[t][1].fetch_add(1, SeqCst);
                }
            })
        })
        .collect();
    for h in ts {
        h.join().unwrap();
    }
    p.pool().backend().clear_crash_hook();
    let points = std::mem::take(&mut *points.lock().unwrap());
    for (k, pt) in points.iter().enumerate() {
        let (_, images) = pt.cp.images(IMAGES, k as u64);
        for (j, img) in images.enumerate() {
            let words = pt.cp.materialize(&img, VolatileFill::Zeroed);
            // Every image is checked on its words (no scheduling points);
            // some are also reopened and updated.
            let (total, slots) = inspect(&words);
            assert_eq!(
                total,
                slots[0] + slots[1],
                "event {}: part of a transaction",
                pt.cp.event
            );
            for (t, &s) in slots.iter().enumerate() {
                assert!(
                    pt.completed[t] <= s && s <= pt.started[t],
                    "event {}: thread {t} recovered {s} updates, completed {} started {}",
                    pt.cp.event,
                    pt.completed[t],
                    pt.started[t]
                );
            }
            if j == 0 && (k % 32 == 0 || k + 1 == points.len()) {
                let pool = Pool::volatile_from_words(&words, Sim::default()).unwrap();
                let q = RedoPtm::open(pool, &config(2, v))
                    .unwrap_or_else(|e| panic!("event {}: recovery failed: {e}", pt.cp.event));
                let h = q.handle().unwrap();
                let after: u64 = h.update_tx(|tx| bump_slot(tx, 0));
                assert_eq!(after & 0xffff_ffff, slots[0] + 1);
                let total_after: u64 = h.read_tx(|tx| tx.load(tx.root(0)));
                assert_eq!(total_after, total + 1);
            }
        }
    }
}

/// Crash images checked per crash point (all if there are fewer).
const IMAGES: u64 = 32;

/// What null recovery would find in a crash image, read straight from its
/// words (Redo-PTM's layout: header at the data offset 4096, `cur_comb` 64
/// bytes in, replicas from 8192): the record's total and the two slots.
fn inspect(words: &[u64]) -> (u64, [u64; 2]) {
    let w = |off: u64| words[(off / 8) as usize];
    let header = 4096;
    let replica_len = w(header + 24);
    let cur = w(header + 64);
    let replica = header + 4096 + perdure_ptm::sti::idx(cur) as u64 * replica_len;
    let rec = replica + w(replica);
    (w(rec), [w(rec + 8), w(rec + 16)])
}

#[test]
fn crash_pct() {
    let n = (iterations() / 2).max(20);
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_pct(|| crash(Variant::Redo), n, 3);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:ptm/redo-crash-pct\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} PCT schedules (depth 3, seed {seed}), 2 threads x 2 updates, a crash point after every persistence event, up to 32 Px86 images each\",\"detail\":\"every completed transaction recovered, none in part; the recovered PTM commits\"}}");
}

#[test]
fn crash_random() {
    let n = (iterations() / 2).max(20);
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_random(|| crash(Variant::Redo), n);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:ptm/redo-crash-random\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} random schedules (seed {seed}), 2 threads x 2 updates, a crash point after every persistence event, up to 32 Px86 images each\",\"detail\":\"every completed transaction recovered, none in part; the recovered PTM commits\"}}");
}

#[test]
fn consensus_opt_random() {
    let n = (iterations() / 2).max(20);
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_random(|| consensus(Variant::Opt), n);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:ptm/redoopt-consensus-random\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} random schedules (seed {seed}) of RedoOpt-PTM, 3 writers x 3 updates + 1 reader\",\"detail\":\"no lost or doubled update, results to the right thread, reads see whole transactions, with store aggregation across combined closures; RedoTimed window empty (clock-free); no crashes injected\"}}");
}

#[test]
fn crash_opt_random() {
    let n = (iterations() / 4).max(20);
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_random(|| crash(Variant::Opt), n);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:ptm/redoopt-crash-random\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} random schedules (seed {seed}) of RedoOpt-PTM, 2 threads x 2 updates, a crash point after every persistence event, up to 32 Px86 images each\",\"detail\":\"every completed transaction recovered, none in part; the recovered PTM commits; RedoTimed window empty (clock-free)\"}}");
}
