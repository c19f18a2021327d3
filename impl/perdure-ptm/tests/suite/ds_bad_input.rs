//! Bad input to the data structures gives typed errors, never a panic or a
//! hang: a root slot out of range, an empty slot, a slot holding another
//! kind of structure, a reserved value, a bad bucket count, an exhausted
//! region, and structures damaged on purpose (a cycle, a red root, an
//! unsorted list, a key in the wrong bucket, a bad count), which `check`
//! reports as the violation it is.

use perdure_pm::{NoFlush, Pool};
use perdure_ptm::ds::{self, DsError, HashSet, ListSet, PArray, Queue, RbTreeSet, Violation};
use perdure_ptm::redo::{Config, RedoPtm};
use perdure_ptm::{Transaction, TxRead};

fn ptm(size: u64) -> RedoPtm<NoFlush> {
    let pool = Pool::volatile("ds-bad", size, NoFlush).unwrap();
    RedoPtm::create(
        pool,
        &Config {
            threads: 2,
            ..Config::small()
        },
    )
    .unwrap()
}

/// Overwrites the word `field` bytes into the header of root `root`'s
/// structure, or into its first node (the word the header's word at
/// `node_at` points to).
fn poke(p: &RedoPtm<NoFlush>, root: usize, node_at: Option<u64>, field: u64, val: u64) {
    p.update_tx(move |tx| {
        let mut at = tx.root(root);
        if let Some(n) = node_at {
            at = tx.load(at + n);
        }
        tx.store(at + field, val);
    })
    .unwrap();
}

fn violation<T: std::fmt::Debug>(r: Result<T, DsError>) -> Violation {
    match r {
        Err(DsError::Invariant { violation, .. }) => violation,
        other => panic!("expected an invariant violation, got {other:?}"),
    }
}

#[test]
fn bad_roots_and_values_are_errors() {
    let p = ptm(4 << 20);
    assert!(matches!(
        Queue::create(&p, 64),
        Err(DsError::BadRoot {
            root: 64,
            count: 64
        })
    ));
    assert!(matches!(
        ListSet::open(&p, 1),
        Err(DsError::NotCreated { root: 1, .. })
    ));
    let q = Queue::create(&p, 1).unwrap();
    assert!(matches!(
        RbTreeSet::open(&p, 1),
        Err(DsError::WrongKind { root: 1, .. })
    ));
    assert!(matches!(
        HashSet::create(&p, 1),
        Err(DsError::WrongKind { .. })
    ));
    assert!(matches!(
        q.enqueue(&p, u64::MAX),
        Err(DsError::ReservedValue { .. })
    ));
    assert!(matches!(
        q.enqueue(&p, ds::MAX_VALUE + 1),
        Err(DsError::ReservedValue { .. })
    ));
    q.enqueue(&p, ds::MAX_VALUE).unwrap();
    assert_eq!(q.dequeue(&p).unwrap(), Some(ds::MAX_VALUE));
    assert!(matches!(
        HashSet::create_with(&p, 2, 3),
        Err(DsError::BadSize { .. })
    ));
    assert!(matches!(
        HashSet::create_with(&p, 2, 0),
        Err(DsError::BadSize { .. })
    ));
    assert!(matches!(
        PArray::create(&p, 2, 0),
        Err(DsError::BadSize { .. })
    ));
    let msg = RbTreeSet::open(&p, 1).unwrap_err().to_string();
    assert!(
        msg.contains("root slot 1") && msg.contains("red-black tree"),
        "{msg}"
    );
}

#[test]
fn a_full_region_is_an_error_and_changes_nothing() {
    let p = ptm(1 << 20);
    let s = ListSet::create(&p, 0).unwrap();
    let mut k = 0;
    let err = loop {
        match s.insert(&p, k) {
            Ok(true) => k += 1,
            Ok(false) => panic!("fresh key {k} reported present"),
            Err(e) => break e,
        }
        assert!(k < 1 << 20, "the region never filled up");
    };
    assert!(matches!(err, DsError::OutOfSpace { root: 0, .. }), "{err}");
    assert_eq!(s.check(&p).unwrap(), k, "the failed insert changed the set");
    assert!(!s.contains(&p, k).unwrap());
    // Removing makes room again.
    assert!(s.remove(&p, 0).unwrap());
    assert!(s.insert(&p, k).unwrap());
}

#[test]
fn damaged_structures_are_reported_not_looped_on() {
    let p = ptm(4 << 20);
    // A queue whose last node links back to its first: a cycle.
    let q = Queue::create(&p, 0).unwrap();
    for v in 0..3 {
        q.enqueue(&p, v).unwrap();
    }
    p.update_tx(|tx| {
        let h = tx.root(0);
        let (head, tail) = (tx.load(h + 8), tx.load(h + 16));
        tx.store(tail + 8, head);
    })
    .unwrap();
    assert_eq!(violation(q.check(&p)), Violation::Cycle);

    // A list with its count off by one, then with two keys swapped.
    let l = ListSet::create(&p, 1).unwrap();
    for k in [10, 20, 30] {
        l.insert(&p, k).unwrap();
    }
    poke(&p, 1, None, 16, 4);
    assert_eq!(violation(l.check(&p)), Violation::CountMismatch);
    poke(&p, 1, None, 16, 3);
    poke(&p, 1, Some(8), 0, 25);
    assert_eq!(violation(l.check(&p)), Violation::Unsorted);
    // A list whose first node links to itself: `check` sees its key
    // repeat, and an insert walking it stops at the step bound.
    p.update_tx(|tx| {
        let first = tx.load(tx.root(1) + 8);
        tx.store(first + 8, first);
    })
    .unwrap();
    assert_eq!(violation(l.check(&p)), Violation::Unsorted);
    assert_eq!(violation(l.insert(&p, 1000)), Violation::Cycle);

    // A tree whose root turned red, then whose colour word is garbage.
    let t = RbTreeSet::create(&p, 2).unwrap();
    for k in 0..20 {
        t.insert(&p, k).unwrap();
    }
    assert_eq!(t.check(&p).unwrap(), 20);
    poke(&p, 2, Some(8), 32, 1);
    assert_eq!(violation(t.check(&p)), Violation::RedRoot);
    poke(&p, 2, Some(8), 32, 7);
    assert_eq!(violation(t.check(&p)), Violation::RedRoot);
    poke(&p, 2, Some(8), 32, 0);
    // The root's left child pointing outside the region.
    poke(&p, 2, Some(8), 8, 1 << 50);
    assert_eq!(violation(t.check(&p)), Violation::BadPointer);

    // A hash set with a key moved to another bucket's chain.
    let h = HashSet::create_with(&p, 3, 64).unwrap();
    for k in 0..10 {
        h.insert(&p, k).unwrap();
    }
    p.update_tx(|tx| {
        let hdr = tx.root(3);
        let arr = tx.load(hdr + 8);
        let b = ds::mix(0) & 63;
        let node = tx.load(arr + 8 * b);
        tx.store(node, 1 << 33);
    })
    .unwrap();
    let v = violation(h.check(&p));
    assert!(
        v == Violation::WrongBucket || v == Violation::Duplicate,
        "{v:?}"
    );
    // A bucket count that is not a power of two.
    poke(&p, 3, None, 16, 48);
    assert_eq!(violation(h.check(&p)), Violation::BadBuckets);
    assert_eq!(violation(h.contains(&p, 1)), Violation::BadBuckets);

    // Untouched roots still work.
    let fresh = Queue::create(&p, 9).unwrap();
    fresh.enqueue(&p, 1).unwrap();
    assert_eq!(fresh.check(&p).unwrap(), 1);
}
