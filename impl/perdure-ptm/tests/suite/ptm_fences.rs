//! Every PTM's persistence instructions per transaction, counted with
//! perdure-pm's per-thread flush counters (seed §1 and §2: two fences per
//! transaction, one `pfence` and one `psync`):
//!
//! * one thread: every update issues exactly one `pfence` (before the
//!   `cur_comb` CAS) and one `psync` (after `pwb(cur_comb)`), and at least
//!   the `pwb`s of its line and of `cur_comb`; read-only transactions none;
//! * no `pfence` where a successful locked CAS completes write-backs (x86
//!   with `Pmem`; the simulator's `rmw_completes_flushes`);
//! * four threads: at most one `pfence` per transaction plus one per
//!   attempt that lost its `cur_comb` CAS after fencing, and at most two
//!   fences per transaction (CX: at most one `psync`).
//!
//! Each test prints its measured averages and runs once per construction
//! (`common::ptms`). How many `pwb`s CX-PTM and CX-PUC issue is in
//! `cx_fences.rs`.

use crate::common;

use common::ptms::{ptm_suite, Construction};
use perdure_pm::stats::FlushCounts;
use perdure_pm::{NoFlush, Sim, SimOptions};
use perdure_ptm::Front;
use perdure_ptm::{PVar, Transaction, TxRead};

fn one_pfence_and_one_psync_per_update<C: Construction>() {
    let p = C::volatile(2, 1 << 20, NoFlush);
    let n = 200;
    let (each, reads) = common::single_thread_counts(&p, n, 0);
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
    let total = each.iter().fold(FlushCounts::default(), |a, &c| a + c);
    let (pwb, pfence, psync) = total.per_op(n);
    println!(
        "{} 1 thread, NoFlush: per update pwb {pwb:.2} pfence {pfence:.2} psync {psync:.2}; per read {reads}",
        C::NAME
    );
}

fn no_pfence_where_the_cas_completes_write_backs<C: Construction>() {
    let sim = Sim::new(SimOptions {
        rmw_completes_flushes: true,
        ..SimOptions::default()
    });
    let p = C::volatile(2, 64 << 10, sim);
    let n = 50;
    let (each, reads) = common::single_thread_counts(&p, n, 1);
    for c in &each {
        assert_eq!((c.pfence, c.psync), (0, 1), "{c}");
    }
    assert_eq!(reads, FlushCounts::default());
    assert!(
        C::pool(&p).backend().counts().psync >= n,
        "the simulator saw them"
    );
    let total = each.iter().fold(FlushCounts::default(), |a, &c| a + c);
    println!(
        "{} 1 thread, x86 CAS semantics: per update {:?}",
        C::NAME,
        total.per_op(n)
    );
}

fn fences_under_contention<C: Construction>() {
    let threads = 4;
    let p = C::volatile(threads, 4 << 20, NoFlush);
    Front::handle(&p).unwrap().update_tx(|tx| {
        let c = tx.alloc_zeroed(8).unwrap();
        tx.set_root(0, c);
    });
    let k = common::per_thread(2000);
    let rollbacks_before = C::rollbacks(&p);
    let total = common::flush_counts_of(threads, |_| {
        let h = Front::handle(&p).unwrap();
        for _ in 0..k {
            h.update_tx(|tx| {
                let c = PVar::<u64>::at(tx.root(0));
                tx.set(c, tx.get(c) + 1);
            });
        }
    });
    let txs = threads as u64 * k;
    let rollbacks = C::rollbacks(&p) - rollbacks_before;
    assert!(
        total.pfence + total.psync <= 2 * txs + rollbacks,
        "{total} for {txs} transactions and {rollbacks} rollbacks"
    );
    assert!(
        total.pfence <= txs + rollbacks,
        "a pfence only before a CAS: {total}"
    );
    if C::ONE_PSYNC_PER_UPDATE {
        assert!(total.psync <= txs, "{total}");
    }
    let (pwb, pfence, psync) = total.per_op(txs);
    println!(
        "{} {threads} threads, NoFlush: per update pwb {pwb:.2} pfence {pfence:.2} psync {psync:.2} ({rollbacks} rollbacks)",
        C::NAME
    );
}

ptm_suite!(
    one_pfence_and_one_psync_per_update,
    no_pfence_where_the_cas_completes_write_backs,
    fences_under_contention,
);
