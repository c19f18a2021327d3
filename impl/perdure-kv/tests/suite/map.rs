//! perdure-kv's map against a `BTreeMap` model: random operations on every
//! PTM construction, reopen from the pool's words, two threads, and bad
//! input (limits, wrong slots, a full region, damaged words).

use perdure_harness::bench::Rng;
use perdure_kv::{KvError, Store, MAX_KEY_BYTES, MAX_VALUE_BYTES};
use perdure_pm::{NoFlush, Pool};
use perdure_ptm::redo::Config;
use perdure_ptm::{CxPtm, Ptm, RedoOptPtm, RedoPtm, RedoTimedPtm};
use std::collections::BTreeMap;
use std::sync::Arc;

const SIZE: u64 = 16 << 20;

/// `n` random bytes, `n` up to `max`.
fn bytes(r: &mut Rng, max: u64) -> Vec<u8> {
    let n = r.below(max + 1);
    (0..n).map(|_| r.next() as u8).collect()
}

fn pool(name: &str) -> Pool<NoFlush> {
    Pool::volatile(name, SIZE, NoFlush).unwrap()
}

/// `ops` random puts, gets and deletes over a small key space (so keys
/// repeat: overwrites, deletes of present keys), each checked against the
/// model; then `check` and the whole contents.
fn run_model<P: Ptm>(db: &Store<P>, model: &mut BTreeMap<Vec<u8>, Vec<u8>>, seed: u64, ops: usize) {
    let mut r = Rng::new(seed | 1);
    // Keys of 0..=40 bytes drawn from 300 values (some empty, some longer
    // than a word, some prefixes of others); values up to 300 bytes.
    let key = |r: &mut Rng| {
        let id = r.below(300);
        let len = (id * 7) % 41;
        (0..len)
            .map(|j| ((id % 5) as u8).wrapping_add((j as u8) / 4))
            .collect::<Vec<u8>>()
    };
    for i in 0..ops {
        let k = key(&mut r);
        match r.below(12) {
            0..=4 => {
                let v = bytes(&mut r, 300);
                let replaced = db.put(&k, &v).unwrap();
                assert_eq!(replaced, model.insert(k, v).is_some(), "op {i}: put");
            }
            5..=7 => {
                assert_eq!(db.get(&k).unwrap().as_ref(), model.get(&k), "op {i}: get");
            }
            8 | 9 => {
                assert_eq!(
                    db.delete(&k).unwrap(),
                    model.remove(&k).is_some(),
                    "op {i}: delete"
                );
            }
            10 => {
                let (a, b) = (k, key(&mut r));
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                let limit = r.below(40) as usize;
                let want: Vec<_> = model
                    .range(lo.clone()..=hi.clone())
                    .take(limit)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(
                    db.scan(&lo[..]..=&hi[..], limit).unwrap(),
                    want,
                    "op {i}: scan"
                );
            }
            _ => {
                let p = &k[..k.len().min(r.below(4) as usize)];
                let want: Vec<_> = model
                    .iter()
                    .filter(|(k, _)| k.starts_with(p))
                    .take(30)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(db.scan_prefix(p, 30).unwrap(), want, "op {i}: prefix {p:?}");
            }
        }
    }
    assert_eq!(db.check().unwrap(), model.len() as u64);
    assert_eq!(db.len().unwrap(), model.len() as u64);
    let all: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(db.scan_prefix(b"", usize::MAX).unwrap(), all);
    for (k, v) in model.iter() {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v), "key {k:?}");
    }
}

#[test]
fn every_construction_matches_the_model() {
    let config = Config::small();
    run_model(
        &Store::create(RedoPtm::create(pool("kv-redo"), &config).unwrap(), 0).unwrap(),
        &mut BTreeMap::new(),
        1,
        3000,
    );
    run_model(
        &Store::create(RedoTimedPtm::create(pool("kv-timed"), &config).unwrap(), 0).unwrap(),
        &mut BTreeMap::new(),
        2,
        3000,
    );
    run_model(
        &Store::create(RedoOptPtm::create(pool("kv-opt"), &config).unwrap(), 0).unwrap(),
        &mut BTreeMap::new(),
        3,
        3000,
    );
    let cx = perdure_ptm::cx::Config::small();
    run_model(
        &Store::create(CxPtm::create(pool("kv-cx"), &cx).unwrap(), 0).unwrap(),
        &mut BTreeMap::new(),
        4,
        3000,
    );
}

#[test]
fn a_reopened_store_has_every_entry() {
    let config = Config::small();
    let mut model = BTreeMap::new();
    let db = Store::create(RedoOptPtm::create(pool("kv-reopen"), &config).unwrap(), 3).unwrap();
    run_model(&db, &mut model, 7, 2000);
    let words = db.ptm().pool().snapshot_words();
    drop(db);
    let p = Pool::volatile_from_words(&words, NoFlush).unwrap();
    let db = Store::open(RedoOptPtm::open(p, &config).unwrap(), 3).unwrap();
    assert_eq!(db.check().unwrap(), model.len() as u64);
    for (k, v) in model.iter() {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v), "key {k:?}");
    }
    run_model(&db, &mut model, 8, 1000);
}

#[test]
fn two_threads_each_see_their_own_writes_and_all_land() {
    let db = Store::create(
        RedoOptPtm::create(pool("kv-2t"), &Config::small()).unwrap(),
        0,
    )
    .unwrap();
    std::thread::scope(|s| {
        for t in 0..2u8 {
            let db = &db;
            s.spawn(move || {
                for i in 0..500u32 {
                    let k = [&[t][..], &i.to_le_bytes()[..]].concat();
                    assert!(!db.put(&k, &k.repeat(3)).unwrap());
                    assert_eq!(db.get(&k).unwrap(), Some(k.repeat(3)));
                    if i % 5 == 0 {
                        assert!(db.delete(&k).unwrap());
                    }
                }
            });
        }
    });
    assert_eq!(db.check().unwrap(), 2 * 400);
}

/// Four threads (the PTM's four thread ids) on one store, each owning
/// its keys: puts, overwrites by values of other sizes, deletes, batches
/// and transactions, each thread checking its own keys against its own
/// model, scans of its prefix included; at the end the whole store equals
/// the union of the models, on Redo-PTM, RedoOpt-PTM and CX-PTM.
fn four_threads<P: Ptm + 'static>(db: Store<P>) {
    // `Store::create` ran a transaction on this thread, which leased one of
    // the PTM's four ids until the thread exits: give it back, or the
    // fourth worker finds no id (`TooManyThreads`) unless another worker
    // has already exited (about 1 run in 10 here).
    assert!(perdure_ptm::release_thread_ids().is_some_and(|n| n >= 1));
    let models: Vec<BTreeMap<Vec<u8>, Vec<u8>>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4u8)
            .map(|t| {
                let db = &db;
                s.spawn(move || {
                    let mut r = Rng::new(17 + u64::from(t));
                    let mut m = BTreeMap::new();
                    for i in 0..300 {
                        let k = vec![t, r.below(40) as u8];
                        match r.below(6) {
                            0 | 1 => {
                                let v = bytes(&mut r, 60);
                                assert_eq!(db.put(&k, &v).unwrap(), m.insert(k, v).is_some());
                            }
                            2 => assert_eq!(db.delete(&k).unwrap(), m.remove(&k).is_some()),
                            3 => {
                                let mut b = perdure_kv::WriteBatch::new();
                                let k2 = vec![t, r.below(40) as u8];
                                let v = bytes(&mut r, 20);
                                b.put(&k, &v).unwrap().delete(&k2).unwrap();
                                db.write(b).unwrap();
                                m.insert(k.clone(), v);
                                m.remove(&k2);
                            }
                            4 => {
                                let old = m.get(&k).cloned();
                                let (kk, n) = (k.clone(), i as u8);
                                let got = db
                                    .transaction(move |tx| {
                                        let old = tx.get(&kk)?;
                                        let mut v = old.clone().unwrap_or_default();
                                        v.push(n);
                                        tx.put(&kk, &v)?;
                                        Ok::<_, KvError>(old)
                                    })
                                    .unwrap();
                                assert_eq!(got, old, "thread {t}, op {i}");
                                let mut v = old.unwrap_or_default();
                                v.push(n);
                                m.insert(k, v);
                            }
                            _ => {
                                let want: Vec<_> =
                                    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                                assert_eq!(db.scan_prefix(&[t], usize::MAX).unwrap(), want);
                            }
                        }
                    }
                    m
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all: BTreeMap<_, _> = models.into_iter().flatten().collect();
    assert_eq!(db.check().unwrap(), all.len() as u64);
    let want: Vec<_> = all.into_iter().collect();
    assert_eq!(db.scan_prefix(b"", usize::MAX).unwrap(), want);
}

#[test]
fn four_threads_on_one_store() {
    let config = Config::small();
    four_threads(Store::create(RedoPtm::create(pool("kv-4t-redo"), &config).unwrap(), 0).unwrap());
    four_threads(
        Store::create(RedoOptPtm::create(pool("kv-4t-opt"), &config).unwrap(), 0).unwrap(),
    );
    let cx = perdure_ptm::cx::Config::small();
    four_threads(Store::create(CxPtm::create(pool("kv-4t-cx"), &cx).unwrap(), 0).unwrap());
}

#[test]
fn bad_input_gets_a_typed_error() {
    let config = Config::small();
    let ptm = Arc::new(RedoOptPtm::create(pool("kv-bad"), &config).unwrap());
    assert!(matches!(
        Store::open_in(Arc::clone(&ptm), 1),
        Err(KvError::NotCreated { root: 1 })
    ));
    assert!(matches!(
        Store::create_in(Arc::clone(&ptm), perdure_ptm::ROOTS),
        Err(KvError::BadRoot { .. })
    ));
    let db = Store::create_in(Arc::clone(&ptm), 1).unwrap();
    assert!(matches!(
        Store::create_in(Arc::clone(&ptm), 1),
        Err(KvError::Exists { root: 1 })
    ));
    let long = vec![1u8; MAX_KEY_BYTES + 1];
    assert!(matches!(
        db.put(&long, b"v"),
        Err(KvError::KeyTooLarge { .. })
    ));
    assert!(matches!(db.get(&long), Err(KvError::KeyTooLarge { .. })));
    let big = vec![2u8; MAX_VALUE_BYTES + 1];
    assert!(matches!(
        db.put(b"k", &big),
        Err(KvError::ValueTooLarge { .. })
    ));
    // The largest key and value are accepted.
    let k = vec![3u8; MAX_KEY_BYTES];
    let v = vec![4u8; MAX_VALUE_BYTES];
    assert!(!db.put(&k, &v).unwrap());
    assert_eq!(db.get(&k).unwrap(), Some(v));
    assert_eq!(db.check().unwrap(), 1);
    // A slot holding another structure is not a store.
    ptm.update_tx(|tx| {
        use perdure_ptm::Transaction;
        let b = tx.alloc_zeroed(64).unwrap();
        tx.set_root(2, b);
    })
    .unwrap();
    assert!(matches!(
        Store::open_in(Arc::clone(&ptm), 2),
        Err(KvError::NotAStore { root: 2 })
    ));
}

#[test]
fn a_full_region_leaves_the_store_unchanged() {
    let config = Config::small();
    let ptm = Arc::new(
        RedoOptPtm::create(
            Pool::volatile("kv-full", 1 << 20, NoFlush).unwrap(),
            &config,
        )
        .unwrap(),
    );
    let db = Store::create_in(Arc::clone(&ptm), 0).unwrap();
    let mut model = BTreeMap::new();
    let mut i = 0u32;
    let err = loop {
        let k = i.to_le_bytes().to_vec();
        match db.put(&k, &[7u8; 1000]) {
            Ok(_) => {
                model.insert(k, vec![7u8; 1000]);
            }
            Err(e) => break e,
        }
        i += 1;
        assert!(i < 100_000, "the region never filled");
    };
    assert!(
        matches!(err, KvError::Full { needed } if needed > 1000),
        "{err:?}"
    );
    assert_eq!(db.check().unwrap(), model.len() as u64);
    for (k, v) in model.iter() {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
    // Room again after a delete.
    let first = model.keys().next().unwrap().clone();
    assert!(db.delete(&first).unwrap());
    assert!(!db.put(&first, &[8u8; 1000]).unwrap());
}

/// 400 damaged images of `words` (a RedoOpt-PTM pool with a store in
/// root slot 0): a random bit pattern xored into a random non-zero word
/// (headers, replicas, logs, the store's nodes and index). Opening either
/// works or returns a typed error — never a panic — and `probe` runs on
/// each store that opens (true if it saw `Corrupt`). Returns how many
/// images were reported damaged.
fn damaged_images(
    words: &[u64],
    seed: u64,
    probe: impl Fn(&Store<RedoOptPtm<NoFlush>>) -> bool,
) -> usize {
    let nonzero: Vec<usize> = (0..words.len()).filter(|&i| words[i] != 0).collect();
    let mut r = Rng::new(seed);
    let mut corrupt = 0;
    for _ in 0..400 {
        let mut w = words.to_vec();
        let at = nonzero[r.below(nonzero.len() as u64) as usize];
        w[at] ^= r.next() | 1;
        let Ok(p) = Pool::volatile_from_words(&w, NoFlush) else {
            continue;
        };
        let Ok(ptm) = RedoOptPtm::open(p, &Config::small()) else {
            continue;
        };
        match Store::open(ptm, 0) {
            Ok(db) => corrupt += usize::from(probe(&db)),
            Err(
                KvError::Corrupt { .. } | KvError::NotAStore { .. } | KvError::NotCreated { .. },
            ) => corrupt += 1,
            Err(e) => panic!("unexpected error opening a damaged store: {e}"),
        }
    }
    corrupt
}

/// Damaged images of a store of 40 entries: `get` of every key and
/// `check` either work or return a typed error — never a panic or an
/// endless walk — and some of the damage is reported as `Corrupt`.
#[test]
fn damaged_words_are_reported_not_followed() {
    let db = Store::create(
        RedoOptPtm::create(pool("kv-damage"), &Config::small()).unwrap(),
        0,
    )
    .unwrap();
    for i in 0..40u32 {
        db.put(&i.to_le_bytes(), b"value").unwrap();
    }
    let corrupt = damaged_images(&db.ptm().pool().snapshot_words(), 99, |db| {
        let mut seen = false;
        for i in 0..40u32 {
            seen |= matches!(db.get(&i.to_le_bytes()), Err(KvError::Corrupt { .. }));
        }
        seen | matches!(db.check(), Err(KvError::Corrupt { .. }))
    });
    assert!(corrupt > 0, "no damage of 400 was reported");
}

/// Damaged images of a store whose ordered index has two levels (600
/// keys, a dozen leaves under an inner block): `check`, scans, a put and a
/// delete either work or return a typed error, and some damage is
/// reported.
#[test]
fn a_damaged_index_is_reported_not_followed() {
    let db = Store::create(
        RedoOptPtm::create(pool("kv-index-damage"), &Config::small()).unwrap(),
        0,
    )
    .unwrap();
    for i in 0..600u32 {
        db.put(format!("key-{i:05}").as_bytes(), b"value").unwrap();
    }
    let corrupt = damaged_images(&db.ptm().pool().snapshot_words(), 11, |db| {
        let mut seen = matches!(db.check(), Err(KvError::Corrupt { .. }));
        seen |= matches!(
            db.scan_prefix(b"", usize::MAX),
            Err(KvError::Corrupt { .. })
        );
        seen |= matches!(
            db.scan(&b"key-001"[..]..&b"key-009"[..], 50),
            Err(KvError::Corrupt { .. })
        );
        let _ = db.put(b"key-00500x", b"after");
        let _ = db.delete(b"key-00003");
        seen
    });
    assert!(corrupt > 0, "no damage of 400 was reported");
}

/// Random batches of 1 to 20 puts and deletes (keys repeat within a batch:
/// later operations win), each applied whole, against the model.
#[test]
fn batches_match_the_model() {
    use perdure_kv::WriteBatch;
    let db = Store::create(
        RedoOptPtm::create(pool("kv-batch"), &Config::small()).unwrap(),
        0,
    )
    .unwrap();
    let mut model = BTreeMap::new();
    let mut r = Rng::new(5);
    for _ in 0..300 {
        let mut b = WriteBatch::new();
        for _ in 0..1 + r.below(20) {
            let k = vec![r.below(60) as u8; 1 + r.below(20) as usize % 3];
            if r.below(3) == 0 {
                b.delete(&k).unwrap();
                model.remove(&k);
            } else {
                let v = bytes(&mut r, 100);
                b.put(&k, &v).unwrap();
                model.insert(k, v);
            }
        }
        db.write(b).unwrap();
    }
    assert_eq!(db.check().unwrap(), model.len() as u64);
    for (k, v) in model.iter() {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v), "key {k:?}");
    }
}

/// A batch whose last put does not fit changes nothing: its first
/// operations (a delete, a put) are not applied.
#[test]
fn a_batch_that_does_not_fit_changes_nothing() {
    use perdure_kv::WriteBatch;
    let ptm = RedoOptPtm::create(
        Pool::volatile("kv-batch-full", 1 << 20, NoFlush).unwrap(),
        &Config::small(),
    )
    .unwrap();
    let db = Store::create(ptm, 0).unwrap();
    let mut n = 0u32;
    while db.put(&n.to_le_bytes(), &[1u8; 1000]).is_ok() {
        n += 1;
        assert!(n < 100_000, "the region never filled");
    }
    let before = db.check().unwrap();
    let mut b = WriteBatch::new();
    b.delete(&0u32.to_le_bytes()).unwrap();
    b.put(b"new", b"small").unwrap();
    b.put(b"big", &[2u8; 8000]).unwrap();
    let e = db.write(b).unwrap_err();
    assert!(matches!(e, KvError::Full { .. }), "{e}");
    assert_eq!(db.check().unwrap(), before);
    assert_eq!(db.get(&0u32.to_le_bytes()).unwrap(), Some(vec![1u8; 1000]));
    assert_eq!(db.get(b"new").unwrap(), None);
}

#[test]
fn a_store_starts_with_the_buckets_asked_for_and_a_too_large_ask_is_full() {
    let config = Config::small();
    let ptm = Arc::new(RedoOptPtm::create(pool("kv-buckets"), &config).unwrap());
    // Asked for more than the region holds: Full, and nothing allocated.
    let err = Store::create_at_with(Arc::clone(&ptm), 0, SIZE).unwrap_err();
    assert!(
        matches!(err, KvError::Full { needed } if needed >= 8 * SIZE),
        "{err:?}"
    );
    let db = Store::create_at_with(Arc::clone(&ptm), 0, 1000).unwrap();
    // 1000 rounded up: 1024 buckets of 8 bytes (in a block of up to
    // twice that), and the 48-byte header.
    let (used, _) = db.space().unwrap();
    assert!((8 * 1024 + 48..16 * 1024 + 256).contains(&used), "{used}");
    // It doubles them (the put that does allocates 2048 buckets and frees
    // 1024), keeping every entry, when the index's leaves stand for two
    // keys per bucket (28 per leaf): with these increasing keys, full
    // leaves of 41, at the put that starts the 74th leaf, 2,994 keys.
    let mut model = BTreeMap::new();
    let mut doubled = None;
    for i in 0..3100u32 {
        let k = (i * 7919).to_be_bytes().to_vec();
        let before = db.space().unwrap().0;
        assert!(!db.put(&k, &i.to_le_bytes()).unwrap());
        model.insert(k, i.to_le_bytes().to_vec());
        if db.space().unwrap().0 >= before + 8 * 1024 {
            assert_eq!(doubled, None, "doubled twice");
            doubled = Some(i + 1);
        }
    }
    assert_eq!(doubled, Some(73 * 41 + 1));
    let (grown, _) = db.space().unwrap();
    assert_eq!(db.check().unwrap(), 3100);
    assert_eq!(db.len().unwrap(), 3100);
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
    // Fewer than 64 are 64.
    let small = Store::create_at_with(Arc::clone(&ptm), 1, 3).unwrap();
    let (with_small, _) = small.space().unwrap();
    let took = with_small - grown;
    assert!((8 * 64 + 48..16 * 64 + 256).contains(&took), "{took}");
}
