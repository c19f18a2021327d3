//! Full-system crashes of Redo-PTM on perdure-pm's Px86 simulator.
//!
//! A workload runs on a `Sim` pool with a crash point captured after every
//! persistence event (each store, write-back, fence and CAS the PTM issues
//! to the pool). For every crash point, the crash images Px86 allows there
//! (all of them up to a limit, else a seeded sample) are materialised,
//! the pool is reopened from the image (null recovery), and the test checks:
//!
//! * every transaction that had returned before the crash is there, and no
//!   transaction is there in part: the recovered state is exactly the state
//!   after some number `n` of whole transactions, with
//!   `completed ≤ n ≤ started`;
//! * the recovered PTM works: the next update (which must copy, every other
//!   replica being invalid) sees that state, its allocator hands out no live
//!   block, and it commits.
//!
//! Run under both of the simulator's RMW semantics: without (a `pfence`
//! before the `cur_comb` CAS) and with (x86: the CAS completes write-backs
//! and the `pfence` is left out), and with logs too small for a transaction
//! (copies instead of replays, whole-range write-backs). Not covered: crashes inside `create`, and
//! thread crashes; each test prints a PERDURE-CHECK row with what it
//! explored.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod common;

use common::crash::{capture, recover_all, report, Progress};
use perdure_pm::{Pool, Sim, SimOptions};
use perdure_ptm::redo::{Config, RedoPtm};
use perdure_ptm::{Transaction, TxRead};
use std::sync::atomic::Ordering::SeqCst;

const POOL: u64 = 48 << 10;

/// One thread, transactions `i = 1..=K`: `a = b = i` in two words on
/// different lines, root 1 = i, and a node `i` pushed on the list at root 2
/// (an allocation per transaction).
fn one_thread(options: SimOptions, config: &Config, name: &str) {
    const K: u64 = 5;
    let pool = Pool::volatile("redo-crash", POOL, Sim::new(options)).unwrap();
    let p = RedoPtm::create(pool, config).unwrap();
    p.update_tx(|tx| {
        let rec = tx.alloc_zeroed(128).unwrap();
        tx.set_root(0, rec);
    })
    .unwrap();
    let progress = Progress::new(1);
    let points = capture(p.pool().backend(), &progress, || {
        for i in 1..=K {
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
        }
    });
    assert!(
        points.len() > 20 * K as usize,
        "{} crash points",
        points.len()
    );
    let explored = recover_all(
        &points,
        |pool| RedoPtm::open(pool, config),
        |p, pt| {
            let h = p.handle().unwrap();
            let n = h.read_tx(|tx| tx.root(1));
            assert!(
                pt.completed[0] <= n && n <= pt.started[0],
                "event {}: recovered {n} transactions, completed {} started {}",
                pt.cp.event,
                pt.completed[0],
                pt.started[0]
            );
            let ok: bool = h.read_tx(move |tx| {
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
            });
            assert!(
                ok,
                "event {}: a partial transaction after recovery (n = {n})",
                pt.cp.event
            );
            // The recovered PTM commits, and its allocator gives no live block.
            let fresh: bool = h.update_tx(move |tx| {
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
            });
            assert!(
                fresh,
                "event {}: the allocator handed out a live node",
                pt.cp.event
            );
            assert_eq!(h.read_tx(|tx| tx.root(1)), n + 1);
        },
    );
    report(name, explored);
}

#[test]
fn one_thread_full_crashes() {
    one_thread(
        SimOptions::default(),
        &common::config(2),
        "redo-sim-crash-1t",
    );
}

#[test]
fn one_thread_full_crashes_x86_cas() {
    one_thread(
        SimOptions {
            rmw_completes_flushes: true,
            ..SimOptions::default()
        },
        &common::config(2),
        "redo-sim-crash-1t-x86",
    );
}

/// The same with a log arena smaller than a transaction and a dirty-line
/// set of two lines: every state overflows its log (other replicas copy
/// instead of replaying) and write-backs fall back to whole ranges.
#[test]
fn one_thread_full_crashes_tiny_logs() {
    let config = Config {
        log_entries_per_thread: 4,
        dirty_lines_per_replica: 2,
        ..common::config(2)
    };
    one_thread(
        SimOptions::default(),
        &config,
        "redo-sim-crash-1t-tiny-logs",
    );
}

/// Two threads, three transactions each: each increments its own slot and
/// a shared total (the second thread's transactions may be run by the
/// first, and the other way round).
#[test]
fn two_thread_full_crashes() {
    const K: u64 = 3;
    let p = common::redo(2, POOL, Sim::default());
    p.handle().unwrap().update_tx(|tx| {
        let rec = tx.alloc_zeroed(192).unwrap();
        tx.set_root(0, rec);
    });
    let progress = Progress::new(2);
    let points = capture(p.pool().backend(), &progress, || {
        std::thread::scope(|s| {
            for t in 0..2usize {
                let (p, progress) = (&p, &progress);
                s.spawn(move || {
                    let h = p.handle().unwrap();
                    for _ in 0..K {
                        progress.started[t].fetch_add(1, SeqCst);
                        h.update_tx(move |tx| {
                            let rec = tx.root(0);
                            let slot = rec + 64 * (1 + t as u64);
                            tx.store(slot, tx.load(slot) + 1);
                            tx.store(rec, tx.load(rec) + 1);
                        });
                        progress.completed[t].fetch_add(1, SeqCst);
                    }
                });
            }
        })
    });
    let explored = recover_all(
        &points,
        |pool| RedoPtm::open(pool, &common::config(2)),
        |p, pt| {
            let h = p.handle().unwrap();
            let w: u64 = h.read_tx(|tx| {
                let rec = tx.root(0);
                (tx.load(rec) << 40) | (tx.load(rec + 64) << 20) | tx.load(rec + 128)
            });
            let (total, s0, s1) = (w >> 40, (w >> 20) & 0xfffff, w & 0xfffff);
            assert_eq!(
                total,
                s0 + s1,
                "event {}: a partial transaction",
                pt.cp.event
            );
            for (t, s) in [s0, s1].into_iter().enumerate() {
                assert!(
                    pt.completed[t] <= s && s <= pt.started[t],
                    "event {}: thread {t} recovered {s}, completed {} started {}",
                    pt.cp.event,
                    pt.completed[t],
                    pt.started[t]
                );
            }
            let after: u64 = h.update_tx(|tx| {
                let rec = tx.root(0);
                tx.store(rec, tx.load(rec) + 1);
                tx.load(rec)
            });
            assert_eq!(after, total + 1);
        },
    );
    report("redo-sim-crash-2t", explored);
}
