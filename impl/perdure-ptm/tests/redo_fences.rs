//! Redo-PTM's persistence instructions per transaction, counted with
//! perdure-pm's per-thread flush counters (seed §1 and Table in §2: two
//! fences per transaction, one `pfence` and one `psync`).
//!
//! * one thread: every update issues exactly one `pfence` and one `psync`
//!   (no `pfence` where a successful locked CAS completes write-backs, as on
//!   x86 with `Pmem`), and every read-only transaction none;
//! * four threads: fences stay within two per transaction plus one per
//!   attempt that lost its `cur_comb` CAS after fencing.
//!
//! Each test prints its measured averages, and runs once per variant
//! (Redo-PTM, RedoTimed-PTM, RedoOpt-PTM: `redo::`, `timed::`, `opt::`).

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod common;

use perdure_pm::stats::{thread_counts, FlushCounts};
use perdure_pm::{Backend, NoFlush, Sim, SimOptions};
use perdure_ptm::redo::{RedoPtm, Variant};
use perdure_ptm::{PVar, Transaction, TxRead};

fn increment<B: Backend>(p: &RedoPtm<B>) -> u64 {
    p.update_tx(|tx| {
        let c = PVar::<u64>::at(tx.root(0));
        let n = tx.get(c) + 1;
        tx.set(c, n);
        n
    })
    .unwrap()
}

fn setup<B: Backend>(p: &RedoPtm<B>) {
    p.update_tx(|tx| {
        let c = tx.alloc_zeroed(8).unwrap();
        tx.set_root(0, c);
    })
    .unwrap();
    // Warm up: the first update of the other replica copies it.
    increment(p);
}

/// Per-transaction counts of `n` updates and `n` reads on one thread.
fn single_thread<B: Backend>(
    p: &RedoPtm<B>,
    n: u64,
) -> (FlushCounts, FlushCounts, Vec<FlushCounts>) {
    setup(p);
    let mut each = Vec::new();
    let start = thread_counts();
    for _ in 0..n {
        let before = thread_counts();
        increment(p);
        each.push(thread_counts() - before);
    }
    let updates = thread_counts() - start;
    let start = thread_counts();
    for _ in 0..n {
        let v: u64 = p.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0)))).unwrap();
        assert!(v > 0);
    }
    (updates, thread_counts() - start, each)
}

fn one_pfence_and_one_psync_per_update(v: Variant) {
    let p = common::redo_v(2, 1 << 20, NoFlush, v);
    let n = 200;
    let (updates, reads, each) = single_thread(&p, n);
    for (i, c) in each.iter().enumerate() {
        assert_eq!((c.pfence, c.psync), (1, 1), "update {i}: {c}");
        assert!(
            c.pwb >= 2,
            "update {i} wrote back its line and cur_comb: {c}"
        );
    }
    assert_eq!(
        reads,
        FlushCounts::default(),
        "reads need no fence once durable"
    );
    let (pwb, pfence, psync) = updates.per_op(n);
    println!("{v} 1 thread, NoFlush: per update pwb {pwb:.2} pfence {pfence:.2} psync {psync:.2}; per read {reads}");
}

fn no_pfence_where_the_cas_completes_write_backs(v: Variant) {
    let sim = Sim::new(SimOptions {
        rmw_completes_flushes: true,
        ..SimOptions::default()
    });
    let p = common::redo_v(2, 64 << 10, sim, v);
    let (updates, reads, each) = single_thread(&p, 50);
    for c in &each {
        assert_eq!((c.pfence, c.psync), (0, 1), "{c}");
    }
    assert_eq!(reads, FlushCounts::default());
    // The simulator saw the same.
    let sim = p.pool().backend().counts();
    assert!(sim.psync >= 50);
    println!(
        "{v} 1 thread, x86 CAS semantics: per update {:?}",
        updates.per_op(50)
    );
}

fn fences_under_contention(v: Variant) {
    let threads = 4;
    let p = common::redo_v(threads, 4 << 20, NoFlush, v);
    p.handle().unwrap().update_tx(|tx| {
        let c = tx.alloc_zeroed(8).unwrap();
        tx.set_root(0, c);
    });
    let k = common::per_thread(2000);
    let before = p.stats();
    let total = common::flush_counts_of(threads, |_| {
        let h = p.handle().unwrap();
        for _ in 0..k {
            h.update_tx(|tx| {
                let c = PVar::<u64>::at(tx.root(0));
                tx.set(c, tx.get(c) + 1);
            });
        }
    });
    let stats = p.stats();
    let txs = threads as u64 * k;
    let rollbacks = stats.rollbacks - before.rollbacks;
    assert!(
        total.pfence + total.psync <= 2 * txs + rollbacks,
        "{total} for {txs} transactions and {rollbacks} rollbacks"
    );
    assert!(
        total.pfence <= txs + rollbacks,
        "a pfence only before a CAS: {total}"
    );
    let (pwb, pfence, psync) = total.per_op(txs);
    println!(
        "{v} {threads} threads, NoFlush: per update pwb {pwb:.2} pfence {pfence:.2} psync {psync:.2} ({} commits, {rollbacks} rollbacks, {} helped)",
        stats.commits - before.commits,
        stats.helped - before.helped
    );
}

common::redo_variant_tests!(
    one_pfence_and_one_psync_per_update,
    no_pfence_where_the_cas_completes_write_backs,
    fences_under_contention,
);
