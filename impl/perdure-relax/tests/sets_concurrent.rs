//! Concurrent tests of the skip list and the BST: 3 threads on every
//! tracking variant that applies to each shape, before and right after a
//! quiescent crash (the recovering threads race each other's
//! `recover_node` / `recover_field`, §6.3).
//!
//! Explores: OS-scheduled interleavings on the test machine (not
//! exhaustive: no loom/shuttle model of these structures). Disjoint keys
//! (each thread its own residue class, checked op by op against its own
//! model, the union checked at the end); overlapping keys (all threads on
//! 48 keys, 4 000 operations each: per key, the successful inserts minus the successful removes
//! must explain the final presence); racing inserts then removes of the
//! same 300 keys (each succeeds exactly once). `PERDURE_DEPTH=deep`: 10×
//! the operations. The crash is quiescent (a
//! snapshot between operations); crashes inside operations are
//! `sets_crash_sim.rs`'s.

mod common;
mod conc;
mod sets;

use common::*;
use conc::*;
use perdure_pm::{NoFlush, Pool};
use perdure_relax::{Space, Tracking};
use sets::*;
use std::collections::BTreeSet;

/// Operations per thread and phase scale by 10 under `PERDURE_DEPTH=deep`.
fn scale(n: u64) -> u64 {
    if std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "deep") {
        10 * n
    } else {
        n
    }
}

fn run(shape: Shape, t: Tracking) {
    let what = format!("{} {t:?}", shape.name());
    let pool = Pool::volatile("relax-sets-conc", POOL, NoFlush).unwrap();
    let b = base(&pool);
    let preload: BTreeSet<u64> = (100..500).filter(|k| k % 3 != 0).collect();
    let (want, overlap) = {
        // 6 of the 8 MiB as heap: every thread slot takes a 256 KiB chunk
        // per size class it allocates from, and skip-list nodes use four.
        let cfg = perdure_relax::Config {
            heap_bytes: 6 << 20,
            ..cfg(t == Tracking::PseudoBitset)
        };
        let sp = Space::create(&pool, b, &cfg, perdure_relax::OpenOptions::new(t)).unwrap();
        let mut h = sp.handle().unwrap();
        let a = Set::create(shape, &mut h, 0).unwrap();
        let o = Set::create(shape, &mut h, 1).unwrap();
        for &k in &preload {
            a.insert(&mut h, k).unwrap();
        }
        drop(h);
        let want = disjoint(&sp, a, &preload, scale(2000));
        let overlap = overlapping(&sp, o, &BTreeSet::new(), scale(4000));
        let mut h = sp.handle().unwrap();
        assert_eq!(
            a.key_set(&mut h).unwrap(),
            want,
            "{what}: disjoint, before the crash"
        );
        assert_eq!(
            o.key_set(&mut h).unwrap(),
            overlap,
            "{what}: overlapping, before the crash"
        );
        (want, overlap)
    };
    let words = pool.snapshot_words();
    let p2 = Pool::volatile_from_words(&words, NoFlush).unwrap();
    p2.reincarnate();
    let sp = Space::open(&p2, b, opts(t, Some(0xfeed))).unwrap();
    let a = Set::open(shape, &sp, 0).unwrap();
    let o = Set::open(shape, &sp, 1).unwrap();
    let after = disjoint(&sp, a, &want, scale(2000));
    let overlap2 = overlapping(&sp, o, &overlap, scale(4000));
    let mut h = sp.handle().unwrap();
    assert_eq!(
        a.key_set(&mut h).unwrap(),
        after,
        "{what}: disjoint, after the crash"
    );
    assert_eq!(
        o.key_set(&mut h).unwrap(),
        overlap2,
        "{what}: overlapping, after the crash"
    );
}

#[test]
fn skiplist_three_threads_under_every_applicable_variant_with_concurrent_recovery() {
    for t in Shape::Skip.variants() {
        run(Shape::Skip, t);
    }
}

#[test]
fn bst_three_threads_under_every_variant_with_concurrent_recovery() {
    for t in Shape::Bst.variants() {
        run(Shape::Bst, t);
    }
}

#[test]
fn racing_inserts_and_removes_of_the_same_keys_succeed_once_each() {
    for shape in Shape::ALL {
        racing_inserts_and_removes(shape.into(), Tracking::ZMarkable);
    }
}
