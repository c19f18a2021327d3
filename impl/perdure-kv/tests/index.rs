//! The ordered index (`src/index.rs`, a B+tree) at the sizes where it has
//! several levels, against a `BTreeMap` model with keys that share long
//! prefixes (separators kept as copies, ties broken by whole keys). Its
//! damaged images: `tests/map.rs`.

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
