//! What `shuttle_cx.rs` and `shuttle_redo.rs` share: the schedule count,
//! the workloads (writers bumping a slot each and a shared total, a reader
//! checking whole transactions; two threads with a crash point after every
//! persistence event) and the check of a crash image as null recovery reads
//! it, written once for any PTM.

#![allow(dead_code)]

use perdure_pm::sim::VolatileFill;
use perdure_pm::sync::{thread, Arc};
use perdure_pm::{Pool, Sim};
use perdure_ptm::Front;
use perdure_ptm::{Ptm, Transaction, TxRead};

#[path = "../../../perdure-pm/tests/support/depth.rs"]
mod depth;

#[path = "../common/crash.rs"]
mod crash;

/// Schedules per test: `PERDURE_SHUTTLE_ITERS`, else 1,000 (20,000 with
/// `PERDURE_DEPTH=deep`, 25 with `PERDURE_DEPTH=mutants`).
pub fn iterations() -> usize {
    let normal = if depth::mutants() { 25 } else { 1000 };
    depth::count("PERDURE_SHUTTLE_ITERS", normal, 20_000)
}

/// How a test samples shuttle schedules (seeded, see
/// `perdure_pm::sync::seeded`).
#[derive(Clone, Copy, Debug)]
pub enum Schedules {
    /// Shuttle's random scheduler.
    Random,
    /// PCT of depth 3.
    Pct,
}

/// `#[test]`s `$random` and `$pct`: `$rows(how, tag)` on random schedules
/// (tag `random`), then on PCT ones (tag `pct`).
macro_rules! random_and_pct_tests {
    ($random:ident, $pct:ident, $rows:expr) => {
        #[test]
        fn $random() {
            $rows(Schedules::Random, "random");
        }

        #[test]
        fn $pct() {
            $rows(Schedules::Pct, "pct");
        }
    };
}
pub(crate) use random_and_pct_tests;

/// Runs `f` on `n` schedules sampled as `how`; returns what was explored,
/// for a row: `N random schedules (seed S)` or `N PCT schedules (depth 3,
/// seed S)`.
pub fn explore<F: Fn() + Send + Sync + 'static>(how: Schedules, n: usize, f: F) -> String {
    let seed = perdure_pm::sync::seeded::seed();
    match how {
        Schedules::Random => {
            perdure_pm::sync::seeded::check_random(f, n);
            format!("{n} random schedules (seed {seed})")
        }
        Schedules::Pct => {
            perdure_pm::sync::seeded::check_pct(f, n, 3);
            format!("{n} PCT schedules (depth 3, seed {seed})")
        }
    }
}

/// Prints the PERDURE-CHECK row `shuttle:ptm/<name>`.
pub fn row(name: &str, what: &str, detail: &str) {
    println!("PERDURE-CHECK {{\"name\":\"shuttle:ptm/{name}\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{what}\",\"detail\":\"{detail}\"}}");
}

/// The record at root 0: word 0 the total, word 8·(1 + t) the slot of the
/// test's thread `t` (its spawn index, not its thread id: ids are reused
/// once a thread drops its handle).
pub fn bump_slot<T: Transaction>(tx: &T, t: u64) -> u64 {
    let rec = tx.root(0);
    let slot = rec + 8 * (1 + t);
    let n = tx.load(slot) + 1;
    tx.store(slot, n);
    tx.store(rec, tx.load(rec) + 1);
    (t << 32) | n
}

/// Allocates the record of `words` words at root 0.
pub fn setup<P: Front>(p: &P, words: u64) {
    p.handle().unwrap().update_tx(move |tx| {
        let rec = tx.alloc_zeroed(8 * words).unwrap();
        tx.set_root(0, rec);
    });
}

/// `writers` threads, each running `updates` [`bump_slot`] transactions and
/// checking that each returns its own slot's new value.
pub fn spawn_writers<P: Ptm + Front + 'static>(
    p: &Arc<P>,
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

/// Three writers, three updates each, and a reader: no increment lost or
/// doubled, each writer gets its own results, every read sees whole
/// transactions. Returns the PTM (for its counters).
pub fn consensus<P: Ptm + Front + 'static>(p: P) -> Arc<P> {
    let p = Arc::new(p);
    setup(&*p, 4);
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
    p
}

/// A `Sim` pool of `size` bytes whose write-backs and fences are shuttle
/// scheduling points too (a thread can be preempted between its `cur_comb`
/// CAS and its `psync`).
pub fn sim_pool(layout: &str, size: u64) -> Pool<Sim> {
    let pool = Pool::volatile(layout, size, Sim::default()).unwrap();
    pool.backend().set_yield_hook(shuttle::thread::yield_now);
    pool
}

/// Crash images checked per crash point (all if there are fewer).
const IMAGES: u64 = 32;

/// What null recovery would find in a crash image, read straight from its
/// words (the layout of `perdure_ptm`'s constructions: header at the data
/// offset 4096, `cur_comb` 64 bytes in, replicas from 8192): the record's
/// total and the two slots.
fn inspect(words: &[u64]) -> (u64, [u64; 2]) {
    let w = |off: u64| words[(off / 8) as usize];
    let header = 4096;
    let replica_len = w(header + 24);
    let cur = w(header + 64);
    let replica = header + 4096 + perdure_ptm::internals::sti::idx(cur) as u64 * replica_len;
    let rec = replica + w(replica);
    (w(rec), [w(rec + 8), w(rec + 16)])
}

/// Two threads, two updates each, on `p` (on a [`sim_pool`]); after every
/// persistence event a crash point is captured, and at the end of the
/// schedule each point's crash images (all, or a seeded sample of 32) are
/// checked as null recovery reads them — the state `cur_comb` designates is
/// whole transactions, between what had completed and what had started per
/// thread — and some are reopened with `open` and updated.
pub fn crash<P: Ptm + Front + 'static, E: std::fmt::Display>(
    p: P,
    sim_of: fn(&P) -> &Sim,
    open: impl Fn(Pool<Sim>) -> Result<P, E>,
) {
    crash_workload(p, sim_of, open, false)
}

/// [`crash`] with, between each thread's two updates, an update whose
/// closure stores into the shared total and its own slot and then panics:
/// rolled back, it must leave no trace in any crash image. (Combined after
/// the other thread's closure into one batch, it would roll back words an
/// earlier closure of the batch wrote, RedoOpt's merged store set,
/// `redo/tx.rs` `undo_to`'s saves: 2,000 random and 250 PCT schedules did
/// not combine them so; not covered yet.)
pub fn crash_with_rollbacks<P: Ptm + Front + 'static, E: std::fmt::Display>(
    p: P,
    sim_of: fn(&P) -> &Sim,
    open: impl Fn(Pool<Sim>) -> Result<P, E>,
) {
    crash_workload(p, sim_of, open, true)
}

fn crash_workload<P: Ptm + Front + 'static, E: std::fmt::Display>(
    p: P,
    sim_of: fn(&P) -> &Sim,
    open: impl Fn(Pool<Sim>) -> Result<P, E>,
    rollbacks: bool,
) {
    use std::sync::atomic::Ordering::SeqCst;
    let p = Arc::new(p);
    let sim = sim_of(&p);
    setup(&*p, 3);
    // Progress per thread, read by the crash hook (outside shuttle's view).
    let progress = crash::Progress::new(2);
    let points = crash::capture(sim, &progress, || {
        let ts: Vec<_> = (0..2usize)
            .map(|t| {
                let (p, progress) = (p.clone(), progress.clone());
                thread::spawn(move || {
                    let h = p.handle().unwrap();
                    for k in 0..2 {
                        if rollbacks && k == 1 {
                            let r = crash::quiet_panics(|| {
                                h.update_tx(move |tx| -> () {
                                    let rec = tx.root(0);
                                    tx.store(rec, tx.load(rec) + 1000);
                                    tx.store(rec + 8 * (1 + t as u64), 7777);
                                    std::panic::resume_unwind(Box::new("rolled back on purpose"))
                                })
                            });
                            assert!(r.is_err(), "a panicking transaction committed");
                        }
                        progress.started[t].fetch_add(1, SeqCst);
                        h.update_tx(move |tx| bump_slot(tx, t as u64));
                        progress.completed[t].fetch_add(1, SeqCst);
                    }
                })
            })
            .collect();
        for h in ts {
            h.join().unwrap();
        }
    });
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
                pt.assert_recovered(t, s);
            }
            if j == 0 && (k % 32 == 0 || k + 1 == points.len()) {
                let pool = Pool::volatile_from_words(&words, Sim::default()).unwrap();
                let q = open(pool)
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
