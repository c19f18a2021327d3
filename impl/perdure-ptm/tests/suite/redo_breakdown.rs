//! The Table 1 counters ([`perdure_ptm::breakdown`]) for the Redo family
//! and CX-PTM, on one thread.
//!
//! Built without the `breakdown` feature (what `cargo test` and CI run),
//! the counters must stay zero: no hook records anything. With
//! `cargo test -p perdure-ptm --features breakdown --test redo_breakdown`,
//! every update is counted, the buckets this workload must enter (apply:
//! replays; copy: the first update; lambda; flush) are non-zero, and the
//! disjoint buckets sum to no more than the whole updates' time.

use crate::common;

use perdure_pm::NoFlush;
use perdure_ptm::breakdown::{self, Breakdown};
use perdure_ptm::redo::Variant;
use perdure_ptm::{PVar, Ptm, Transaction, TxRead};

const UPDATES: u64 = 50;

/// `UPDATES` increments (the first one allocates) and as many reads.
fn workload<P: Ptm>(p: &P) {
    for _ in 0..UPDATES {
        p.update_tx(|tx| {
            if tx.root(0) == 0 {
                let c = tx.alloc_zeroed(8).unwrap();
                tx.set_root(0, c);
            }
            let c = PVar::<u64>::at(tx.root(0));
            tx.set(c, tx.get(c) + 1);
        })
        .unwrap();
    }
    for _ in 0..UPDATES {
        let v: u64 = p.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0)))).unwrap();
        assert_eq!(v, UPDATES);
    }
}

fn check(name: &str, b: Breakdown, replays: bool) {
    println!(
        "{name}: {} updates, {:.1} us each; apply/flush/copy/lambda/wait {:?}",
        b.updates,
        b.update_ns as f64 / b.updates.max(1) as f64 / 1000.0,
        b.fractions().map(|f| (f * 1000.0).round() / 10.0)
    );
    if !breakdown::ENABLED {
        assert_eq!(b, Breakdown::default(), "{name}: no feature, no counts");
        return;
    }
    assert_eq!(b.updates, UPDATES, "{name}");
    assert!(
        b.update_ns > 0 && b.lambda_ns > 0 && b.flush_ns > 0,
        "{name}: {b:?}"
    );
    assert!(b.copy_ns > 0, "{name}: the first update copies: {b:?}");
    if replays {
        assert!(b.apply_ns > 0, "{name}: later updates replay: {b:?}");
    }
    let parts = b.apply_ns + b.flush_ns + b.copy_ns + b.lambda_ns + b.wait_ns;
    assert!(
        parts <= b.update_ns,
        "{name}: {parts} > {}: {b:?}",
        b.update_ns
    );
}

#[test]
fn the_redo_variants_count_their_time() {
    for v in Variant::ALL {
        let p = common::redo_v(2, 1 << 20, NoFlush, v);
        breakdown::take();
        workload(&p);
        let b = breakdown::take();
        check(v.name(), b, true);
        assert_eq!(breakdown::read(), Breakdown::default(), "take resets");
    }
}

#[test]
fn cx_ptm_counts_its_time() {
    let p = common::cx(2, 1 << 20, NoFlush);
    breakdown::take();
    workload(&p);
    let b = breakdown::take();
    check("CX-PTM", b, false);
    assert_eq!(b.apply_ns, 0, "CX applies its queue by running closures");
}
