//! Concurrent tests: 3 threads on every tracking variant, with and without
//! a preceding crash, the recovering threads racing each other
//! (`recover_field` and `recover_node` run concurrently with operations,
//! §6.3).
//!
//! Explores: OS-scheduled interleavings on the test machine (not
//! exhaustive: there is no loom/shuttle model of this crate yet), 6
//! variants × 2 structures, garbage DRAM where the variant allows it.
//! The crash here is quiescent (a snapshot between operations, on the
//! `NoFlush` backend); crashes inside operations are `crash_sim.rs`'s.

mod common;

use common::*;
use perdure_pm::{Backend, NoFlush, Pool};
use perdure_relax::ds::{HarrisList, HashTable};
use perdure_relax::{Space, Tracking};
use std::collections::BTreeSet;

const THREADS: u64 = 3;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Every thread inserts and removes keys of its own residue class (mod 4)
/// with a seeded random pattern, checking each result against its own
/// model; keys ≡ 3 (mod 4) are never touched and must always be found if
/// preloaded. Returns the union of the models.
fn hammer<B: Backend>(
    sp: &Space<'_, B>,
    ds: Ds,
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
                        match r >> 60 {
                            0..=5 => {
                                assert_eq!(
                                    ds.insert(&mut h, k).unwrap(),
                                    model.insert(k),
                                    "insert {k}"
                                )
                            }
                            6..=11 => {
                                assert_eq!(
                                    ds.remove(&mut h, k).unwrap(),
                                    model.remove(&k),
                                    "remove {k}"
                                )
                            }
                            _ => assert_eq!(ds.contains(&mut h, k).unwrap(), model.contains(&k)),
                        }
                        let fixed = (i % 100) * 4 + 3;
                        assert_eq!(
                            ds.contains(&mut h, fixed).unwrap(),
                            preload.contains(&fixed)
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

fn run(t: Tracking, hash: bool) {
    let pool = Pool::volatile("relax-conc", POOL, NoFlush).unwrap();
    let b = base(&pool);
    let preload: BTreeSet<u64> = (0..400).filter(|k| k % 3 != 0).collect();
    let want = {
        let sp = create(&pool, t);
        let mut h = sp.handle().unwrap();
        let ds = if hash {
            Ds::Hash(HashTable::create(&mut h, 0, 16).unwrap())
        } else {
            Ds::List(HarrisList::create(&mut h, 0).unwrap())
        };
        for &k in &preload {
            ds.insert(&mut h, k).unwrap();
        }
        drop(h);
        let want = hammer(&sp, ds, &preload, 600);
        let mut h = sp.handle().unwrap();
        assert_eq!(
            ds.keys(&mut h).unwrap(),
            want.iter().copied().collect::<Vec<_>>(),
            "{t:?} before the crash"
        );
        want
    };
    // Crash (quiescent): a new pool from the words, new DRAM (garbage where
    // allowed), and threads that start operating at once, recovering lazily
    // and concurrently.
    let words = pool.snapshot_words();
    let p2 = Pool::volatile_from_words(&words, NoFlush).unwrap();
    p2.reincarnate();
    let sp = Space::open(&p2, b, opts(t, Some(0xfeed))).unwrap();
    let ds = if hash {
        Ds::Hash(HashTable::open(&sp, 0).unwrap())
    } else {
        Ds::List(HarrisList::open(&sp, 0).unwrap())
    };
    let after = hammer(&sp, ds, &want, 600);
    let mut h = sp.handle().unwrap();
    assert_eq!(
        ds.keys(&mut h).unwrap(),
        after.iter().copied().collect::<Vec<_>>(),
        "{t:?} after the crash"
    );
}

#[test]
fn list_under_every_variant_with_concurrent_recovery() {
    for t in Tracking::ALL {
        run(t, false);
    }
}

#[test]
fn hash_table_under_every_variant_with_concurrent_recovery() {
    for t in Tracking::ALL {
        run(t, true);
    }
}

#[test]
fn racing_inserts_and_removes_of_the_same_keys_succeed_once_each() {
    let pool = Pool::volatile("relax-conc", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Hybrid);
    let mut h = sp.handle().unwrap();
    let l = HarrisList::create(&mut h, 0).unwrap();
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
                                    l.insert(&mut h, k).unwrap()
                                } else {
                                    l.remove(&mut h, k).unwrap()
                                }
                            })
                            .count() as u64
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        })
    };
    assert_eq!(count(true), 300, "each key inserted exactly once");
    let mut h = sp.handle().unwrap();
    assert_eq!(l.keys(&mut h).unwrap(), (0..300).collect::<Vec<_>>());
    drop(h);
    assert_eq!(count(false), 300, "each key removed exactly once");
    let mut h = sp.handle().unwrap();
    assert!(l.keys(&mut h).unwrap().is_empty());
}
