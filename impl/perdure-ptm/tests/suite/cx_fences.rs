//! The `pwb`s of CX-PTM and CX-PUC per update, counted with perdure-pm's
//! per-thread flush counters: CX-PTM one per line its stores touched plus
//! `cur_comb`; CX-PUC every line of the used region plus `cur_comb` — the
//! seed's difference between the two (§4); and CX-PUC's typed update costs
//! what an annotated one does. The fences every construction issues are
//! `ptm_fences.rs`'s. Each test prints its measured averages.

use crate::common;

use perdure_pm::stats::{thread_counts, FlushCounts};
use perdure_pm::NoFlush;
use perdure_ptm::{CxPtm, CxPuc, TxRead};

#[test]
fn cx_ptm_one_pfence_one_psync_and_a_pwb_per_line() {
    let p = common::cx(2, 1 << 20, NoFlush);
    let n = 100;
    let (each, reads) = common::single_thread_counts(&p, n, 3);
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
    let total = each.iter().fold(FlushCounts::default(), |a, &c| a + c);
    let (pwb, pfence, psync) = total.per_op(n);
    println!("cx-ptm 1 thread, NoFlush, {lines} lines/update: per update pwb {pwb:.2} pfence {pfence:.2} psync {psync:.2}; per read {reads}");
}

#[test]
fn cx_puc_writes_back_the_whole_used_region() {
    let p: CxPuc<NoFlush, u64> = common::puc(2, 1 << 20, NoFlush);
    let n = 100;
    let (each, reads) = common::single_thread_counts(&p, n, 3);
    let used_lines = p.read(|r| 8 * r.words().len() as u64).unwrap().div_ceil(64);
    for (i, c) in each.iter().enumerate() {
        assert_eq!((c.pfence, c.psync), (1, 1), "update {i}: {c}");
        assert_eq!(
            c.pwb,
            used_lines + 1,
            "update {i}: every used line and cur_comb"
        );
    }
    println!(
        "cx-puc 1 thread, NoFlush: {used_lines} used lines, per update pwb {}; per read {reads}",
        each[0].pwb
    );
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
