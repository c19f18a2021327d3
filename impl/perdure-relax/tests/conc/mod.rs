//! The concurrent suites of the set structures, written once for every
//! [`Kind`]: threads on disjoint keys (each checked op by op against its
//! own model), on overlapping keys (the successful inserts minus the
//! successful removes must explain the final presence of each key), and
//! racing inserts then removes of the same keys (each succeeds exactly
//! once). `concurrent.rs` runs them for the list and the hash table,
//! `sets_concurrent.rs` for the skip list and the BST.
#![allow(dead_code)]

use super::common::*;
use perdure_pm::{Backend, NoFlush, Pool};
use perdure_relax::{OpenOptions, Space, Tracking};
use std::collections::BTreeSet;

/// Threads of every suite.
pub const THREADS: u64 = 3;

/// Runs `body(t)` on threads `t` = 0..[`THREADS`] with a handle each, and
/// returns their results in thread order.
pub fn on_threads<B: Backend + Sync, T: Send>(
    sp: &Space<'_, B>,
    body: impl Fn(u64, &mut perdure_relax::Handle<'_, '_, B>) -> T + Sync,
) -> Vec<T> {
    std::thread::scope(|sc| {
        let hs: Vec<_> = (0..THREADS)
            .map(|t| {
                let body = &body;
                sc.spawn(move || body(t, &mut sp.handle().unwrap()))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// What the threads of a suite run on: `ops` operations each on `set` in
/// `sp`, which holds the keys `start` when they begin.
pub struct Threads<'a, 's, B: Backend> {
    pub sp: &'a Space<'s, B>,
    pub set: Ds,
    pub start: &'a BTreeSet<u64>,
    pub ops: u64,
}

/// Disjoint keys: thread `t` owns keys ≡ t (mod 4); keys ≡ 3 are only
/// read. Returns the union of the models.
pub fn disjoint<B: Backend>(on: Threads<'_, '_, B>) -> BTreeSet<u64> {
    let Threads {
        sp,
        set,
        start: preload,
        ops,
    } = on;
    let models = on_threads(sp, |t, h| {
        let mut model: BTreeSet<u64> = preload.iter().copied().filter(|k| k % 4 == t).collect();
        for (i, r) in (0..ops).zip(draws(0x5eed ^ t)) {
            let k = (r % 100) * 4 + t;
            match r >> 61 {
                0..=2 => assert_eq!(set.insert(h, k).unwrap(), model.insert(k), "insert {k}"),
                3..=5 => assert_eq!(set.remove(h, k).unwrap(), model.remove(&k), "remove {k}"),
                _ => assert_eq!(
                    set.contains(h, k).unwrap(),
                    model.contains(&k),
                    "contains {k}"
                ),
            }
            let fixed = (i % 100) * 4 + 3;
            assert_eq!(
                set.contains(h, fixed).unwrap(),
                preload.contains(&fixed),
                "fixed {fixed}"
            );
        }
        model
    });
    let mut all: BTreeSet<u64> = preload.iter().copied().filter(|k| k % 4 == 3).collect();
    for m in models {
        all.extend(m);
    }
    all
}

/// Overlapping keys: every thread on keys 0..48. Returns the final set
/// implied by the successful operations, checking that it is consistent.
pub fn overlapping<B: Backend>(on: Threads<'_, '_, B>) -> BTreeSet<u64> {
    let Threads {
        sp,
        set,
        start,
        ops,
    } = on;
    let nets = on_threads(sp, |t, h| {
        let mut net = vec![0i64; 48];
        for r in draws(0xa11 ^ (t << 8)).take(ops as usize) {
            let k = r % 48;
            match r >> 62 {
                0 | 1 => net[k as usize] += set.insert(h, k).unwrap() as i64,
                2 => net[k as usize] -= set.remove(h, k).unwrap() as i64,
                _ => {
                    set.contains(h, k).unwrap();
                }
            }
        }
        net
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

/// Three threads insert keys 0..300, then remove them, on a structure of
/// `kind` under variant `t`: each insert and each remove succeeds once.
pub fn racing_inserts_and_removes(kind: Kind, t: Tracking) {
    let pool = Pool::volatile("relax-conc", POOL, NoFlush).unwrap();
    let sp = create(&pool, t);
    let mut h = sp.handle().unwrap();
    let set = Ds::create(kind, &mut h, 0).unwrap();
    drop(h);
    let count = |insert: bool| -> u64 {
        on_threads(&sp, |_, h| {
            (0..300u64)
                .filter(|&k| set.update(h, insert, k).unwrap())
                .count() as u64
        })
        .into_iter()
        .sum()
    };
    assert_eq!(count(true), 300, "{kind:?}: each key inserted exactly once");
    let mut h = sp.handle().unwrap();
    assert_eq!(
        set.keys(&mut h).unwrap(),
        (0..300).collect::<Vec<_>>(),
        "{kind:?}"
    );
    drop(h);
    assert_eq!(count(false), 300, "{kind:?}: each key removed exactly once");
    let mut h = sp.handle().unwrap();
    assert!(set.keys(&mut h).unwrap().is_empty(), "{kind:?}");
}

/// What [`run`] does on each side of the crash.
pub struct Phases {
    /// Keys inserted before the threads start (into root 0).
    pub preload: BTreeSet<u64>,
    /// Operations per thread on disjoint keys (root 0).
    pub disjoint: u64,
    /// Operations per thread on overlapping keys (root 1), if any.
    pub overlapping: Option<u64>,
}

/// Three threads on a structure of `kind` under `t` (one on disjoint keys
/// at root 0, and one on overlapping keys at root 1 if `p` asks), then a
/// quiescent crash — a new pool from the words, new DRAM (garbage where
/// allowed) — and threads that start operating at once, recovering lazily
/// and concurrently; the keys are checked on both sides.
pub fn run(kind: Kind, t: Tracking, p: &Phases) {
    let what = format!("{} {t:?}", kind.name());
    let pool = Pool::volatile("relax-conc", POOL, NoFlush).unwrap();
    let b = base(&pool);
    let phase =
        |sp: &Space<'_, NoFlush>, fresh: bool, (a0, o0): (&BTreeSet<u64>, &BTreeSet<u64>)| {
            let open = |root| {
                if fresh {
                    Ds::create(kind, &mut sp.handle().unwrap(), root).unwrap()
                } else {
                    Ds::open(kind, sp, root).unwrap()
                }
            };
            let (a, o) = (open(0), open(1));
            if fresh {
                let mut h = sp.handle().unwrap();
                for &k in a0 {
                    a.insert(&mut h, k).unwrap();
                }
            }
            let want = disjoint(Threads {
                sp,
                set: a,
                start: a0,
                ops: p.disjoint,
            });
            let overlap = p.overlapping.map_or_else(BTreeSet::new, |ops| {
                overlapping(Threads {
                    sp,
                    set: o,
                    start: o0,
                    ops,
                })
            });
            let mut h = sp.handle().unwrap();
            let side = if fresh { "before" } else { "after" };
            assert_eq!(
                a.key_set(&mut h).unwrap(),
                want,
                "{what}: disjoint, {side} the crash"
            );
            assert_eq!(
                o.key_set(&mut h).unwrap(),
                overlap,
                "{what}: overlapping, {side} the crash"
            );
            (want, overlap)
        };
    let (want, overlap) = {
        // 6 of the 8 MiB as heap: every thread slot takes a 256 KiB chunk
        // per size class it allocates from, and skip-list nodes use four.
        let cfg = perdure_relax::Config {
            heap_bytes: 6 << 20,
            ..cfg(t == Tracking::PseudoBitset)
        };
        let sp = Space::create(&pool, b, &cfg, OpenOptions::new(t)).unwrap();
        phase(&sp, true, (&p.preload, &BTreeSet::new()))
    };
    let p2 = Pool::volatile_from_words(&pool.snapshot_words(), NoFlush).unwrap();
    p2.reincarnate();
    let sp = Space::open(&p2, b, opts(t, Some(0xfeed))).unwrap();
    phase(&sp, false, (&want, &overlap));
}
