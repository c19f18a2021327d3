//! Sequential model tests of the skip list and the BST against
//! `BTreeSet`, under every tracking variant that applies to each shape.
//!
//! Explores: per shape and variant, 2 500 seeded random operations
//! (insert / remove / contains, keys in 0..160 so that every kind of
//! operation both succeeds and fails), a full comparison of `keys()` every
//! 250 operations, then a quiescent crash (a new incarnation from the NVMM
//! words, garbage DRAM where the variant allows it), lazy recovery and
//! 1 500 more operations checked the same way. Also: the skip list refuses
//! `MarkableAtomicPointer` at create and open; BST keys beyond `MAX_KEY`
//! are errors; heavy insert/remove churn on a heap too small to hold
//! what it allocates (so removed nodes must go back to the heap). Does not
//! cover: concurrency (`sets_concurrent.rs`), crashes inside operations
//! (`sets_crash_sim.rs`).

use crate::common;
use crate::sets;

use common::*;
use perdure_pm::{NoFlush, Pool};
use perdure_relax::ds::{Bst, SkipList};
use perdure_relax::{Config, OpenOptions, RelaxError, Space, Tracking};
use sets::*;
use std::collections::BTreeSet;

fn check_ops<B: perdure_pm::Backend>(
    set: Set,
    h: &mut perdure_relax::Handle<'_, '_, B>,
    model: &mut BTreeSet<u64>,
    seed: u64,
    n: u64,
    what: &str,
) {
    for (i, r) in (0..n).zip(draws(seed)) {
        let k = r % 160;
        match (r >> 32) % 3 {
            0 => assert_eq!(
                set.insert(h, k).unwrap(),
                model.insert(k),
                "{what}: op {i} insert {k}"
            ),
            1 => assert_eq!(
                set.remove(h, k).unwrap(),
                model.remove(&k),
                "{what}: op {i} remove {k}"
            ),
            _ => assert_eq!(
                set.contains(h, k).unwrap(),
                model.contains(&k),
                "{what}: op {i} contains {k}"
            ),
        }
        if i % 250 == 249 {
            assert_eq!(&set.key_set(h).unwrap(), model, "{what}: keys after op {i}");
        }
    }
}

fn model_run(shape: Shape, t: Tracking) {
    let what = format!("{} {t:?}", shape.name());
    let pool = Pool::volatile("relax-sets", POOL, NoFlush).unwrap();
    let b = base(&pool);
    let mut model = BTreeSet::new();
    {
        let sp = create(&pool, t);
        let mut h = sp.handle().unwrap();
        let set = Set::create(shape, &mut h, 0).unwrap();
        assert!(
            set.keys(&mut h).unwrap().is_empty(),
            "{what}: new set not empty"
        );
        check_ops(set, &mut h, &mut model, 0x5eed ^ t as u64, 2500, &what);
        assert!(
            !model.is_empty(),
            "{what}: the run should leave keys behind"
        );
    }
    let words = pool.snapshot_words();
    let p2 = Pool::volatile_from_words(&words, NoFlush).unwrap();
    p2.reincarnate();
    let sp = Space::open(&p2, b, opts(t, Some(0xbeef))).unwrap();
    let set = Set::open(shape, &sp, 0).unwrap();
    let mut h = sp.handle().unwrap();
    // Point queries first (lazy recovery along search paths), then a scan.
    for k in 0..160 {
        assert_eq!(
            set.contains(&mut h, k).unwrap(),
            model.contains(&k),
            "{what}: recovered {k}"
        );
    }
    assert_eq!(
        set.key_set(&mut h).unwrap(),
        model,
        "{what}: recovered keys"
    );
    check_ops(
        set,
        &mut h,
        &mut model,
        0xfeed ^ t as u64,
        1500,
        &format!("{what} after crash"),
    );
}

tests_calling!(|shape: Shape| shape.under_every_variant(model_run) => {
    skiplist_matches_a_btreeset_under_every_applicable_variant(Shape::Skip);
    bst_matches_a_btreeset_under_every_variant(Shape::Bst);
});

#[test]
fn skiplist_refuses_markable_at_create_and_open() {
    let pool = Pool::volatile("relax-sets", POOL, NoFlush).unwrap();
    let b = base(&pool);
    {
        let sp = create(&pool, Tracking::Markable);
        let mut h = sp.handle().unwrap();
        let e = SkipList::create(&mut h, 0).unwrap_err();
        assert!(matches!(e, RelaxError::Config(_)), "{e}");
        assert!(e.to_string().contains("MarkableAtomicPointer"), "{e}");
        assert_eq!(
            sp.root(0).unwrap(),
            None,
            "a refused create must not set the root"
        );
    }
    // A skip list made under Hybrid, reopened under Markable: refused;
    // under ZMarkable: fine.
    pool.reincarnate();
    {
        let sp = Space::open(&pool, b, OpenOptions::new(Tracking::Hybrid)).unwrap();
        let mut h = sp.handle().unwrap();
        let l = SkipList::create(&mut h, 1).unwrap();
        assert!(l.insert(&mut h, 3).unwrap());
    }
    pool.reincarnate();
    let sp = Space::open(&pool, b, OpenOptions::new(Tracking::Markable)).unwrap();
    let e = SkipList::open(&sp, 1).unwrap_err();
    assert!(matches!(e, RelaxError::Config(_)), "{e}");
    drop(sp);
    pool.reincarnate();
    let sp = Space::open(&pool, b, OpenOptions::new(Tracking::ZMarkable)).unwrap();
    let l = SkipList::open(&sp, 1).unwrap();
    let mut h = sp.handle().unwrap();
    assert_eq!(l.keys(&mut h).unwrap(), vec![3]);
}

#[test]
fn bst_rejects_sentinel_keys_and_skiplist_takes_every_u64() {
    let pool = Pool::volatile("relax-sets", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Markable);
    let mut h = sp.handle().unwrap();
    let t = Bst::create(&mut h, 0).unwrap();
    let max = perdure_relax::ds::bst::MAX_KEY;
    assert!(t.insert(&mut h, max).unwrap());
    assert!(t.insert(&mut h, 0).unwrap());
    for k in [max + 1, u64::MAX - 1, u64::MAX] {
        assert!(
            matches!(t.insert(&mut h, k), Err(RelaxError::Config(_))),
            "{k}"
        );
        assert!(
            matches!(t.remove(&mut h, k), Err(RelaxError::Config(_))),
            "{k}"
        );
        assert!(
            matches!(t.contains(&mut h, k), Err(RelaxError::Config(_))),
            "{k}"
        );
    }
    assert_eq!(t.keys(&mut h).unwrap(), vec![0, max]);
    drop(h);
    drop(sp);
    pool.reincarnate();
    let sp = Space::open(&pool, base(&pool), OpenOptions::new(Tracking::Hybrid)).unwrap();
    let mut h = sp.handle().unwrap();
    let l = SkipList::create(&mut h, 1).unwrap();
    for k in [0, 1, u64::MAX - 1, u64::MAX] {
        assert!(l.insert(&mut h, k).unwrap());
    }
    assert!(l.contains(&mut h, u64::MAX).unwrap());
    assert!(l.remove(&mut h, u64::MAX).unwrap());
    assert_eq!(l.keys(&mut h).unwrap(), vec![0, 1, u64::MAX - 1]);
}

#[test]
fn removed_nodes_go_back_to_the_heap() {
    // 40 000 insert/remove pairs allocate 40 000 skip-list nodes (3/4 of
    // them 64-byte blocks, most others 128) or 80 000 BST nodes (64-byte
    // blocks): about 3 MB and 5 MB, more than the 2 MiB heap holds (eight
    // 256 KiB chunks, one class each); only reclamation lets them run.
    for shape in Shape::ALL {
        let pool = Pool::volatile("relax-sets", POOL, NoFlush).unwrap();
        let cfg = Config {
            threads: 2,
            roots: 1,
            heap_bytes: 2 << 20,
            msb_sequences: false,
        };
        let sp =
            Space::create(&pool, base(&pool), &cfg, OpenOptions::new(Tracking::Hybrid)).unwrap();
        let mut h = sp.handle().unwrap();
        let set = Set::create(shape, &mut h, 0).unwrap();
        for k in 0..50 {
            set.insert(&mut h, k * 2).unwrap();
        }
        for i in 0..40_000u64 {
            let k = (i * 7) % 101;
            let present = k % 2 == 0 && k < 100;
            assert_eq!(
                set.insert(&mut h, k).unwrap(),
                !present,
                "{shape:?} insert {k}"
            );
            if !present {
                assert!(set.remove(&mut h, k).unwrap(), "{shape:?} remove {k}");
            }
        }
        assert_eq!(
            set.keys(&mut h).unwrap(),
            (0..50).map(|k| k * 2).collect::<Vec<_>>(),
            "{shape:?}"
        );
    }
}
