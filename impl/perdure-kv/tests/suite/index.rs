//! The ordered index (`src/index.rs`, a B+tree) at the sizes where it has
//! several levels, against a `BTreeMap` model with keys that share long
//! prefixes (separators kept as copies, ties broken by whole keys). Its
//! damaged images: `tests/suite/map.rs`.

use perdure_harness::bench::Rng;
use perdure_kv::Store;
use perdure_pm::{NoFlush, Pool};
use perdure_ptm::redo::Config;
use perdure_ptm::RedoOptPtm;
use std::collections::BTreeMap;

fn store(name: &str, size: u64) -> Store<RedoOptPtm<NoFlush>> {
    let pool = Pool::volatile(name, size, NoFlush).unwrap();
    Store::create(RedoOptPtm::create(pool, &Config::small()).unwrap(), 0).unwrap()
}

/// Key `id` of one of three shapes: short (at most 16 bytes: inline
/// separators), long with a 24-byte prefix shared by all of its shape
/// (copies, and ties on the first 16 bytes), and a short one's extension
/// (a key that is a prefix of another).
fn key(id: u64) -> Vec<u8> {
    match id % 3 {
        0 => format!("s{id:x}").into_bytes(),
        1 => format!("long-shared-prefix-0000:{id:020}:tail").into_bytes(),
        _ => format!("s{:x}\0x{id}", id - 2).into_bytes(),
    }
}

fn entries(m: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// 24,000 operations over 12,000 keys (a tree of three levels: about 300
/// leaves under a dozen inner blocks): puts, overwrites by values of other
/// sizes, deletes (leaves that empty stay in the chain), then range and
/// prefix scans, `check` and the whole contents against the model.
#[test]
fn a_deep_index_matches_the_model() {
    let db = store("kv-index-deep", 96 << 20);
    let mut model = BTreeMap::new();
    let mut r = Rng::new(7);
    for i in 0..24_000u64 {
        let k = key(r.below(12_000));
        if r.below(4) == 0 {
            assert_eq!(db.delete(&k).unwrap(), model.remove(&k).is_some(), "op {i}");
        } else {
            let v = vec![i as u8; 1 + r.below(40) as usize];
            assert_eq!(
                db.put(&k, &v).unwrap(),
                model.insert(k, v).is_some(),
                "op {i}"
            );
        }
    }
    assert!(model.len() > 7_000, "{} keys", model.len());
    assert_eq!(db.check().unwrap(), model.len() as u64);
    assert_eq!(db.scan_prefix(b"", usize::MAX).unwrap(), entries(&model));
    for _ in 0..300 {
        let (a, b) = (key(r.below(12_000)), key(r.below(12_000)));
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let limit = r.below(300) as usize;
        let want: Vec<_> = model
            .range(lo.clone()..hi.clone())
            .take(limit)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(
            db.scan(&lo[..]..&hi[..], limit).unwrap(),
            want,
            "{lo:?}..{hi:?}"
        );
    }
    for p in [
        &b"long-shared-prefix-0000:0000000000000000"[..],
        b"s1",
        b"s2a",
    ] {
        let want: Vec<_> = model
            .iter()
            .filter(|(k, _)| k.starts_with(p))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert!(!want.is_empty(), "{p:?}");
        assert_eq!(db.scan_prefix(p, usize::MAX).unwrap(), want, "prefix {p:?}");
    }
    // Delete everything: the leaves empty, the tree stays, and works.
    for k in model.keys() {
        assert!(db.delete(k).unwrap());
    }
    assert_eq!(db.check().unwrap(), 0);
    assert_eq!(db.scan_prefix(b"", usize::MAX).unwrap(), vec![]);
    db.put(b"again", b"v").unwrap();
    assert_eq!(db.check().unwrap(), 1);
}

/// The root leaf of the store in root slot 0, while the tree is one leaf:
/// the header's `tree` word (`src/map.rs`: `[MAGIC, buckets,
/// bucket_count, len, tree, height]`).
fn root_leaf(db: &Store<RedoOptPtm<NoFlush>>) -> u64 {
    use perdure_ptm::{Ptm, TxRead};
    db.ptm()
        .read_tx(|tx| {
            let header = tx.root(0);
            assert_eq!(tx.load(header + 40), 1, "the tree is one leaf");
            tx.load(header + 32)
        })
        .unwrap()
}

/// Where the `node` word of slot `i` of `leaf` is (`src/index.rs`: `[kind,
/// 0, link, entries...]`, entries `[prefix0, prefix1, node]`).
fn node_word(leaf: u64, i: u64) -> u64 {
    leaf + 24 + 24 * i + 16
}

fn poke(db: &Store<RedoOptPtm<NoFlush>>, off: u64, val: u64) {
    use perdure_ptm::{Ptm, Transaction};
    db.ptm().update_tx(move |tx| tx.store(off, val)).unwrap();
}

/// A leaf has no count word: its count is its first slot with `node` 0,
/// found by a binary search. A leaf filled to exactly its capacity (41
/// entries), then one more key (a sequential split), then deletes in a
/// random order down to empty and puts again in a random order (random
/// splits, whose left leaves zero their upper slots): `check` (which
/// checks every empty slot) and a whole scan after every step.
#[test]
fn a_leaf_full_to_capacity_then_emptied_then_split_at_random() {
    let db = store("kv-index-leaf", 16 << 20);
    let mut model = BTreeMap::new();
    let key = |i: u64| format!("k{i:04}").into_bytes();
    let step = |db: &Store<RedoOptPtm<NoFlush>>, model: &BTreeMap<Vec<u8>, Vec<u8>>| {
        assert_eq!(db.check().unwrap(), model.len() as u64);
        assert_eq!(db.scan_prefix(b"", usize::MAX).unwrap(), entries(model));
    };
    for i in 0..41 {
        assert!(!db.put(&key(i), b"v").unwrap());
        model.insert(key(i), b"v".to_vec());
        step(&db, &model);
    }
    // Full, and still one leaf.
    let leaf = root_leaf(&db);
    assert_ne!(
        db.ptm()
            .read_tx(move |tx| perdure_ptm::TxRead::load(tx, node_word(leaf, 40)))
            .unwrap(),
        0
    );
    assert!(!db.put(&key(41), b"v").unwrap());
    model.insert(key(41), b"v".to_vec());
    step(&db, &model);
    let mut r = Rng::new(18);
    let mut keys: Vec<Vec<u8>> = model.keys().cloned().collect();
    while !keys.is_empty() {
        let k = keys.swap_remove(r.below(keys.len() as u64) as usize);
        assert!(db.delete(&k).unwrap());
        model.remove(&k);
        step(&db, &model);
    }
    for _ in 0..300 {
        let k = key(r.below(400));
        let v = vec![1u8; 1 + r.below(20) as usize];
        assert_eq!(db.put(&k, &v).unwrap(), model.insert(k, v).is_some());
    }
    step(&db, &model);
}

/// A damaged leaf: an entry below the count with `node` 0 (which the binary
/// search steps over), a non-zero `node` past the count, and a non-zero
/// word where an inner block keeps its count are each named by `check`,
/// and the walks that meet them return a typed error.
#[test]
fn a_damaged_leaf_count_is_reported() {
    use perdure_kv::KvError;
    // `Damage::Shape`: "an ordered-index block with a bad kind or count".
    let shape = |r: Result<u64, KvError>| match r {
        Err(KvError::Corrupt { what, .. }) => what.contains("block with a bad kind or count"),
        _ => false,
    };
    // A hole below the count: slot 5 of a full leaf.
    let db = store("kv-index-hole", 16 << 20);
    for i in 0..41u64 {
        db.put(format!("k{i:04}").as_bytes(), b"v").unwrap();
    }
    let leaf = root_leaf(&db);
    poke(&db, node_word(leaf, 5), 0);
    assert!(shape(db.check()), "{:?}", db.check());
    assert!(matches!(
        db.scan_prefix(b"", usize::MAX),
        Err(KvError::Corrupt { .. })
    ));
    assert!(matches!(
        db.put(b"k9999", b"v"),
        Err(KvError::Corrupt { .. })
    ));
    // A node past the count: slot 35 of a leaf of 30.
    let db = store("kv-index-past", 16 << 20);
    for i in 0..30u64 {
        db.put(format!("k{i:04}").as_bytes(), b"v").unwrap();
    }
    let leaf = root_leaf(&db);
    poke(&db, node_word(leaf, 35), leaf);
    assert!(shape(db.check()), "{:?}", db.check());
    // The count word of a leaf.
    let db = store("kv-index-count", 16 << 20);
    for i in 0..30u64 {
        db.put(format!("k{i:04}").as_bytes(), b"v").unwrap();
    }
    let leaf = root_leaf(&db);
    poke(&db, leaf + 8, 30);
    assert!(shape(db.check()), "{:?}", db.check());
    assert!(matches!(
        db.scan_prefix(b"", usize::MAX),
        Err(KvError::Corrupt { .. })
    ));
}

/// Stores of the formats before (`PDKVMAP2`: a treap; `PDKVMAP3`: leaves
/// with a count word; `PDKVMAP4`: a header with an entry count) are
/// refused with a typed error, not misread.
#[test]
fn a_store_of_a_format_before_is_refused() {
    use perdure_kv::KvError;
    use perdure_ptm::{Ptm, TxRead};
    for old in [b"PDKVMAP2", b"PDKVMAP3", b"PDKVMAP4"] {
        let db = store("kv-index-old", 16 << 20);
        db.put(b"k", b"v").unwrap();
        let header = db.ptm().read_tx(|tx| tx.root(0)).unwrap();
        poke(&db, header, u64::from_le_bytes(*old));
        let words = db.ptm().pool().snapshot_words();
        let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
        let ptm = RedoOptPtm::open(pool, &Config::small()).unwrap();
        assert!(matches!(
            Store::open(ptm, 0),
            Err(KvError::OldFormat { root: 0 })
        ));
    }
}

/// No entry count is kept (`src/map.rs`): `len` walks the leaves, and the
/// header's leaf count, which drives the hash map's resize, is checked.
#[test]
fn len_walks_the_leaves_and_check_names_a_wrong_leaf_count() {
    use perdure_kv::KvError;
    use perdure_ptm::{Ptm, TxRead};
    let db = store("kv-index-len", 16 << 20);
    let mut model = BTreeMap::new();
    let mut r = Rng::new(5);
    assert_eq!(db.len().unwrap(), 0);
    assert!(db.is_empty().unwrap());
    for i in 0..3000u64 {
        let k = key(r.below(1500));
        if r.below(3) == 0 {
            assert_eq!(db.delete(&k).unwrap(), model.remove(&k).is_some());
        } else {
            model.insert(k.clone(), vec![1]);
            db.put(&k, &[1]).unwrap();
        }
        if i % 97 == 0 {
            assert_eq!(db.len().unwrap(), model.len() as u64, "op {i}");
        }
    }
    assert_eq!(db.len().unwrap(), model.len() as u64);
    assert_eq!(db.check().unwrap(), model.len() as u64);
    for k in model.keys() {
        db.delete(k).unwrap();
    }
    assert!(db.is_empty().unwrap());
    assert_eq!(db.check().unwrap(), 0);
    // The header's `leaves` (`[MAGIC, buckets, bucket_count, leaves, ...]`).
    let header = db.ptm().read_tx(|tx| tx.root(0)).unwrap();
    let leaves = db.ptm().read_tx(move |tx| tx.load(header + 24)).unwrap();
    assert!(leaves > 10, "{leaves}");
    poke(&db, header + 24, leaves - 1);
    assert!(matches!(
        db.check(),
        Err(KvError::Corrupt { what, .. }) if what.contains("leaf count")
    ));
}
