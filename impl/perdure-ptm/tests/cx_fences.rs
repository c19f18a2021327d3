//! Persistence instructions per transaction of CX-PTM and CX-PUC, counted
//! with perdure-pm's per-thread flush counters:
//!
//! * one thread: every update issues exactly one `pfence` (before the
//!   `cur_comb` CAS; none where the CAS completes write-backs) and one
//!   `psync` (after `pwb(cur_comb)`); read-only transactions none;
//! * `pwb`s: CX-PTM one per line its stores touched plus `cur_comb`;
//!   CX-PUC every line of the used region plus `cur_comb` — the seed's
//!   difference between the two (§4);
//! * four threads: at most one `pfence` and one `psync` per transaction.
//!
//! Each test prints its measured averages.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod common;

use perdure_pm::stats::{thread_counts, FlushCounts};
use perdure_pm::{NoFlush, Sim, SimOptions};
use perdure_ptm::front::Front;
use perdure_ptm::{CxPtm, CxPuc, PVar, Ptm, Transaction, TxRead};

/// Sets up a counter at root 0 and a 64-line array at root 1, warms up
/// (the first update copies), then measures `n` updates that increment the
/// counter and store to `lines` lines of the array, and `n` reads.
fn single_thread<P: Ptm>(p: &P, n: u64, lines: u64) -> (Vec<FlushCounts>, FlushCounts) {
    p.update_tx(|tx| {
        let c = tx.alloc_zeroed(8).unwrap();
        tx.set_root(0, c);
        let a = tx.alloc_zeroed(64 * 64).unwrap();
        tx.set_root(1, a);
    })
    .unwrap();
    p.update_tx(|_| ()).unwrap();
    let mut each = Vec::new();
    for _ in 0..n {
        let before = thread_counts();
        p.update_tx(move |tx| {
            let c = PVar::<u64>::at(tx.root(0));
            let v = tx.get(c) + 1;
            tx.set(c, v);
            for l in 0..lines {
                tx.store(tx.root(1) + 64 * l, v);
            }
        })
        .unwrap();
        each.push(thread_counts() - before);
    }
    let start = thread_counts();
    for _ in 0..n {
        let v: u64 = p.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0)))).unwrap();
        assert!(v > 0);
    }
    (each, thread_counts() - start)
}

#[test]
fn cx_ptm_one_pfence_one_psync_and_a_pwb_per_line() {
    let p = common::cx(2, 1 << 20, NoFlush);
    let n = 100;
    let (each, reads) = single_thread(&p, n, 3);
    // The lines of the counter and of 3 array lines (the counter's block
    // and the array's first line may share one). A replica is two updates
    // behind, so it also replays the previous update: the same lines.
    let lines: u64 = p
        .read_tx(|tx| {
            let mut l: Vec<u64> = (0..3).map(|i| (tx.root(1) + 64 * i) / 64).collect();
            l.push(tx.root(0) / 64);
            l.sort_unstable();
            l.dedup();
            l.len() as u64
        })
        .unwrap();
    for (i, c) in each.iter().enumerate() {
        assert_eq!((c.pfence, c.psync), (1, 1), "update {i}: {c}");
        assert_eq!(c.pwb, lines + 1, "update {i}: its lines and cur_comb: {c}");
    }
    assert_eq!(
        reads,
        FlushCounts::default(),
        "reads need no fence once durable"
    );
    let total = each.iter().fold(FlushCounts::default(), |a, &c| a + c);
    let (pwb, pfence, psync) = total.per_op(n);
    println!("cx-ptm 1 thread, NoFlush, {lines} lines/update: per update pwb {pwb:.2} pfence {pfence:.2} psync {psync:.2}; per read {reads}");
}

#[test]
fn cx_puc_writes_back_the_whole_used_region() {
    let p: CxPuc<NoFlush, u64> = common::puc(2, 1 << 20, NoFlush);
    let n = 100;
    let (each, reads) = single_thread(&p, n, 3);
    let used_lines = p.read(|r| 8 * r.words().len() as u64).unwrap().div_ceil(64);
    for (i, c) in each.iter().enumerate() {
        assert_eq!((c.pfence, c.psync), (1, 1), "update {i}: {c}");
        assert_eq!(
            c.pwb,
            used_lines + 1,
            "update {i}: every used line and cur_comb"
        );
    }
    assert_eq!(reads, FlushCounts::default());
    println!(
        "cx-puc 1 thread, NoFlush: {used_lines} used lines, per update pwb {}",
        each[0].pwb
    );
}

#[test]
fn no_pfence_where_the_cas_completes_write_backs() {
    let x86 = || {
        Sim::new(SimOptions {
            rmw_completes_flushes: true,
            ..SimOptions::default()
        })
    };
    let p = common::cx(2, 64 << 10, x86());
    let (each, reads) = single_thread(&p, 30, 1);
    for c in &each {
        assert_eq!((c.pfence, c.psync), (0, 1), "{c}");
    }
    assert_eq!(reads, FlushCounts::default());
    assert!(
        p.pool().backend().counts().psync >= 30,
        "the simulator saw them"
    );
    let q: CxPuc<Sim, u64> = common::puc(2, 64 << 10, x86());
    let (each, _) = single_thread(&q, 30, 1);
    for c in &each {
        assert_eq!((c.pfence, c.psync), (0, 1), "{c}");
    }
}

fn under_contention<P: Ptm + Front>(name: &str, p: &P) {
    let threads = 4;
    p.handle().unwrap().update_tx(|tx| {
        let c = tx.alloc_zeroed(8).unwrap();
        tx.set_root(0, c);
    });
    let k = common::per_thread(2000);
    let total = common::flush_counts_of(threads, |_| {
        let h = p.handle().unwrap();
        for _ in 0..k {
            h.update_tx(|tx| {
                let c = PVar::<u64>::at(tx.root(0));
                tx.set(c, tx.get(c) + 1);
            });
        }
    });
    let txs = threads as u64 * k;
    assert!(
        total.pfence <= txs,
        "{name}: a pfence only before a CAS: {total}"
    );
    assert!(total.psync <= txs, "{name}: {total}");
    let (pwb, pfence, psync) = total.per_op(txs);
    println!("{name} {threads} threads, NoFlush: per update pwb {pwb:.2} pfence {pfence:.2} psync {psync:.2}");
}

#[test]
fn fences_under_contention() {
    under_contention("cx-ptm", &common::cx(4, 4 << 20, NoFlush));
    let q: CxPuc<NoFlush, u64> = common::puc(4, 4 << 20, NoFlush);
    under_contention("cx-puc", &q);
}

#[test]
fn the_trait_and_the_typed_api_agree() {
    // The typed CX-PUC update costs what an annotated one does.
    let p: CxPuc<NoFlush, u64> = common::puc(2, 1 << 20, NoFlush);
    p.update(|m| *m.obj_mut() = 1).unwrap();
    let before = thread_counts();
    p.update(|m| *m.obj_mut() += 1).unwrap();
    let c = thread_counts() - before;
    assert_eq!((c.pfence, c.psync), (1, 1));
    assert_eq!(p.read(|r| *r.obj()).unwrap(), 2);
    let _ = CxPtm::<NoFlush>::open;
}
