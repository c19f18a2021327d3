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
mod sets;

use common::*;
use perdure_pm::{Backend, NoFlush, Pool};
use perdure_relax::{Space, Tracking};
use sets::*;
use std::collections::BTreeSet;

const THREADS: u64 = 3;

/// Operations per thread and phase scale by 10 under `PERDURE_DEPTH=deep`.
fn scale(n: u64) -> u64 {
    if std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "deep") {
        10 * n
    } else {
        n
    }
}

/// Disjoint keys: thread `t` owns keys ≡ t (mod 4); keys ≡ 3 are only
/// read. Returns the union of the models.
fn disjoint<B: Backend>(
    sp: &Space<'_, B>,
    set: Set,
    preload: &BTreeSet<u64>,
    ops: u64,
) -> BTreeSet<u64> {
    let models: Vec<BTreeSet<u64>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..THREADS)
            .map(|t| {
                sc.spawn(move || {
                    let mut h = sp.handle().unwrap();
                    let mut model: BTreeSet<u64> =
                        preload.iter().copied().filter(|k| k % 4 == t).collect();
                    let mut s = 0x5eed ^ t;
                    for i in 0..ops {
                        let r = splitmix(&mut s);
                        let k = (r % 100) * 4 + t;
                        match r >> 61 {
                            0..=2 => assert_eq!(
                                set.insert(&mut h, k).unwrap(),
                                model.insert(k),
                                "insert {k}"
                            ),
                            3..=5 => assert_eq!(
                                set.remove(&mut h, k).unwrap(),
                                model.remove(&k),
                                "remove {k}"
                            ),
                            _ => assert_eq!(
                                set.contains(&mut h, k).unwrap(),
                                model.contains(&k),
                                "contains {k}"
                            ),
                        }
                        let fixed = (i % 100) * 4 + 3;
                        assert_eq!(
                            set.contains(&mut h, fixed).unwrap(),
                            preload.contains(&fixed),
                            "fixed {fixed}"
                        );
                    }
                    model
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: BTreeSet<u64> = preload.iter().copied().filter(|k| k % 4 == 3).collect();
    for m in models {
        all.extend(m);
    }
    all
}

/// Overlapping keys: every thread on keys 0..48. Returns the final set
/// implied by the successful operations, checking that it is consistent.
fn overlapping<B: Backend>(
    sp: &Space<'_, B>,
    set: Set,
    start: &BTreeSet<u64>,
    ops: u64,
) -> BTreeSet<u64> {
    let nets: Vec<Vec<i64>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..THREADS)
            .map(|t| {
                sc.spawn(move || {
                    let mut h = sp.handle().unwrap();
                    let mut net = vec![0i64; 48];
                    let mut s = 0xa11 ^ (t << 8);
                    for _ in 0..ops {
                        let r = splitmix(&mut s);
                        let k = r % 48;
                        match r >> 62 {
                            0 | 1 => net[k as usize] += set.insert(&mut h, k).unwrap() as i64,
                            2 => net[k as usize] -= set.remove(&mut h, k).unwrap() as i64,
                            _ => {
                                set.contains(&mut h, k).unwrap();
                            }
                        }
                    }
                    net
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut out = BTreeSet::new();
    for k in 0..48u64 {
        let total: i64 =
            start.contains(&k) as i64 + nets.iter().map(|n| n[k as usize]).sum::<i64>();
        assert!(total == 0 || total == 1, "key {k}: net presence {total}");
        if total == 1 {
            out.insert(k);
        }
    }
    out
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
        let pool = Pool::volatile("relax-sets-conc", POOL, NoFlush).unwrap();
        let sp = create(&pool, Tracking::ZMarkable);
        let mut h = sp.handle().unwrap();
        let set = Set::create(shape, &mut h, 0).unwrap();
        drop(h);
        let count = |insert: bool| -> u64 {
            std::thread::scope(|sc| {
                let hs: Vec<_> = (0..THREADS)
                    .map(|_| {
                        sc.spawn(|| {
                            let mut h = sp.handle().unwrap();
                            (0..300u64)
                                .filter(|&k| {
                                    if insert {
                                        set.insert(&mut h, k).unwrap()
                                    } else {
                                        set.remove(&mut h, k).unwrap()
                                    }
                                })
                                .count() as u64
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).sum()
            })
        };
        assert_eq!(
            count(true),
            300,
            "{shape:?}: each key inserted exactly once"
        );
        let mut h = sp.handle().unwrap();
        assert_eq!(
            set.keys(&mut h).unwrap(),
            (0..300).collect::<Vec<_>>(),
            "{shape:?}"
        );
        drop(h);
        assert_eq!(
            count(false),
            300,
            "{shape:?}: each key removed exactly once"
        );
        let mut h = sp.handle().unwrap();
        assert!(set.keys(&mut h).unwrap().is_empty(), "{shape:?}");
    }
}
