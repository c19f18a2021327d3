//! Sequential model-based tests of the data structures of `perdure_ptm::ds`
//! on every construction (`common::ptms`: the Redo family, CX-PTM, CX-PUC through
//! its annotated interface): seeded random operations checked one by one
//! against `std` collections, the structure's `check` (its invariant) every
//! 200 operations and at the end, then `destroy` and a leak check (the
//! region allocator's live bytes return to what they were before the
//! structure was created).
//!
//! Explores: 2,000 operations per structure and construction (200 in debug
//! builds) on small key ranges (so that inserts hit present keys and removes
//! hit absent ones), one thread. Concurrency is `ds_concurrent.rs`'s.

use crate::common;
use crate::ds_common;

use common::ptms::Construction;
use ds_common::{scaled, Rng, SetOps};
use perdure_pm::NoFlush;
use perdure_ptm::ds::{self, HashMap, HashSet, ListSet, PArray, Queue, RbTreeSet};
use perdure_ptm::Ptm;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

const POOL: u64 = 16 << 20;

fn ops() -> u64 {
    scaled(2000)
}

fn queue_model<P: Ptm>(name: &str, p: &P) {
    let before = ds::live_bytes(p).unwrap();
    let q = Queue::create(p, 3).unwrap();
    let mut model = VecDeque::new();
    let mut rng = Rng(0x5EED_0001);
    for i in 0..ops() {
        if rng.below(100) < 55 {
            let v = rng.next() % ds::MAX_VALUE;
            q.enqueue(p, v).unwrap();
            model.push_back(v);
        } else {
            assert_eq!(
                q.dequeue(p).unwrap(),
                model.pop_front(),
                "{name}: dequeue #{i}"
            );
        }
        if i % 200 == 0 {
            assert_eq!(
                q.check(p).unwrap(),
                model.len() as u64,
                "{name}: check at #{i}"
            );
        }
    }
    assert_eq!(q.len(p).unwrap(), model.len() as u64, "{name}");
    assert_eq!(q.check(p).unwrap(), model.len() as u64, "{name}");
    while let Some(v) = model.pop_front() {
        assert_eq!(q.dequeue(p).unwrap(), Some(v), "{name}: drain");
    }
    assert_eq!(q.dequeue(p).unwrap(), None, "{name}: empty");
    assert!(q.is_empty(p).unwrap());
    q.destroy(p).unwrap();
    assert_eq!(
        ds::live_bytes(p).unwrap(),
        before,
        "{name}: the queue leaked blocks"
    );
}

/// The set `create` makes against a `BTreeSet`; then destroyed, leaving no
/// live block behind.
fn set_model<P: Ptm, S: SetOps>(
    name: &str,
    what: &str,
    p: &P,
    create: impl FnOnce() -> S,
    keys: u64,
    seed: u64,
) {
    let before = ds::live_bytes(p).unwrap();
    let s = create();
    let mut model = BTreeSet::new();
    let mut rng = Rng(seed);
    for i in 0..ops() {
        let k = rng.below(keys);
        match rng.below(3) {
            0 => assert_eq!(
                s.insert(p, k),
                model.insert(k),
                "{name} {what}: insert {k} (#{i})"
            ),
            1 => assert_eq!(
                s.remove(p, k),
                model.remove(&k),
                "{name} {what}: remove {k} (#{i})"
            ),
            _ => assert_eq!(
                s.contains(p, k),
                model.contains(&k),
                "{name} {what}: contains {k} (#{i})"
            ),
        }
        if i % 200 == 0 {
            assert_eq!(
                s.check(p),
                model.len() as u64,
                "{name} {what}: check at #{i}"
            );
        }
    }
    assert_eq!(s.check(p), model.len() as u64, "{name} {what}");
    for k in 0..keys {
        assert_eq!(
            s.contains(p, k),
            model.contains(&k),
            "{name} {what}: final contains {k}"
        );
    }
    s.destroy(p);
    assert_eq!(
        ds::live_bytes(p).unwrap(),
        before,
        "{name}: the {what} leaked"
    );
}

fn sets_model<P: Ptm>(name: &str, p: &P) {
    let list = || ListSet::create(p, 5).unwrap();
    set_model(name, "list", p, list, 64, 0x5EED_0002);
    let tree = || RbTreeSet::create(p, 6).unwrap();
    set_model(name, "tree", p, tree, 300, 0x5EED_0003);
    // 2 buckets: the first inserts already resize the table several times.
    let hash = || HashSet::create_with(p, 7, 2).unwrap();
    set_model(name, "hash set", p, hash, 300, 0x5EED_0004);
}

fn rbtree_sorted_inserts_then_removes<P: Ptm>(name: &str, p: &P) {
    // Ascending then descending keys: the rotations of every fix-up case.
    let t = RbTreeSet::create(p, 8).unwrap();
    let n = scaled(1000);
    for k in 0..n {
        assert!(t.insert(p, k).unwrap());
    }
    assert_eq!(t.check(p).unwrap(), n, "{name}");
    for k in (0..n).rev().step_by(2) {
        assert!(t.remove(p, k).unwrap());
    }
    assert_eq!(t.check(p).unwrap(), n / 2, "{name}");
    for k in 0..n {
        assert_eq!(
            t.contains(p, k).unwrap(),
            (n - 1 - k) % 2 == 1,
            "{name}: {k}"
        );
    }
    t.destroy(p).unwrap();
}

fn map_model<P: Ptm>(name: &str, p: &P) {
    let before = ds::live_bytes(p).unwrap();
    let m = HashMap::create_with(p, 9, 1).unwrap();
    let mut model = BTreeMap::new();
    let mut rng = Rng(0x5EED_0005);
    for i in 0..ops() {
        let k = rng.below(200);
        match rng.below(3) {
            0 => {
                let v = rng.next() % ds::MAX_VALUE;
                assert_eq!(
                    m.insert(p, k, v).unwrap(),
                    model.insert(k, v),
                    "{name}: insert {k} (#{i})"
                );
            }
            1 => assert_eq!(
                m.remove(p, k).unwrap(),
                model.remove(&k),
                "{name}: remove {k} (#{i})"
            ),
            _ => assert_eq!(
                m.get(p, k).unwrap(),
                model.get(&k).copied(),
                "{name}: get {k} (#{i})"
            ),
        }
    }
    assert_eq!(m.check(p).unwrap(), model.len() as u64, "{name}");
    m.destroy(p).unwrap();
    assert_eq!(ds::live_bytes(p).unwrap(), before, "{name}: the map leaked");
}

fn array_model<P: Ptm>(name: &str, p: &P) {
    let len = 5000;
    let a = PArray::create(p, 10, len).unwrap();
    let mut model: Vec<u64> = (0..len).collect();
    let mut rng = Rng(0x5EED_0006);
    for _ in 0..scaled(300) {
        let pairs: Vec<(u64, u64)> = (0..1 + rng.below(8))
            .map(|_| (rng.below(len), rng.below(len)))
            .collect();
        for &(i, j) in &pairs {
            model.swap(i as usize, j as usize);
        }
        a.swap_all(p, pairs).unwrap();
    }
    assert_eq!(a.check(p).unwrap(), len, "{name}: not a permutation");
    for i in (0..len).step_by(97) {
        assert_eq!(a.get(p, i).unwrap(), model[i as usize], "{name}: entry {i}");
    }
}

/// Runs `model` on a fresh 2-thread PTM of construction `C`.
fn on_fresh<C: Construction>(model: fn(&str, &C::P<NoFlush>)) {
    model(C::NAME, &C::volatile(2, POOL, NoFlush));
}

/// Several structures share one region; `create` on a slot that holds
/// one opens it.
fn shared_region<P: Ptm>(name: &str, p: &P) {
    let (q, l, t, h) = (
        Queue::create(p, 0).unwrap(),
        ListSet::create(p, 1).unwrap(),
        RbTreeSet::create(p, 2).unwrap(),
        HashSet::create(p, 3).unwrap(),
    );
    for k in 0..100 {
        q.enqueue(p, k).unwrap();
        assert!(l.insert(p, k).unwrap());
        assert!(t.insert(p, 2 * k).unwrap());
        assert!(h.insert(p, 3 * k).unwrap());
    }
    assert_eq!(
        (
            q.check(p).unwrap(),
            l.check(p).unwrap(),
            t.check(p).unwrap(),
            h.check(p).unwrap()
        ),
        (100, 100, 100, 100),
        "{name}"
    );
    // `create` on a slot that holds one opens it.
    assert_eq!(Queue::create(p, 0).unwrap().len(p).unwrap(), 100, "{name}");
}

common::ptms::ptm_suite!(on on_fresh:
    queue_model,
    sets_model,
    rbtree_sorted_inserts_then_removes,
    map_model,
    array_model,
    shared_region,
);
