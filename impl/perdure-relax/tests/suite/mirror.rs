//! Mirror's persistent atomic (Algorithm 4.1) and `recover_field`
//! (Algorithms 6.2–6.3): the invariants of Chapter 7, Claim 2, checked
//! single-threaded, under contention, and on the scenario of Figure 6.2.
//!
//! Explores: every tracking variant for the sequential cases; 3 threads ×
//! 20 000 fetch-adds with a concurrent sampler of both replicas. Does not
//! cover: weak-memory reorderings (the tests run on x86-64 hardware, and
//! no loom model of this crate exists yet).

use crate::common;

use common::*;
use perdure_pm::{NoFlush, Pool};
use perdure_relax::ds::ListNode;
use perdure_relax::{DramInit, OpenOptions, PAtomic, Space, Tracking};
use std::sync::atomic::{AtomicBool, Ordering};

/// A fresh data field holding `v` (field 0 of a list node).
fn field(space: &Space<'_, NoFlush>, v: u64) -> PAtomic {
    let mut h = space.handle().unwrap();
    let n = h.alloc_node::<ListNode>(&[v, 0]).unwrap();
    PAtomic::at(n)
}

#[test]
fn sequential_operations_keep_the_replicas_equal() {
    for t in Tracking::ALL {
        let pool = Pool::volatile("relax-mirror", POOL, NoFlush).unwrap();
        let sp = create(&pool, t);
        let f = field(&sp, 10);
        assert_eq!(f.load(&sp).unwrap(), 10, "{t:?}");
        assert_eq!(f.compare_exchange(&sp, 10, 11).unwrap(), Ok(10));
        assert_eq!(f.compare_exchange(&sp, 10, 12).unwrap(), Err(11));
        assert_eq!(f.fetch_add(&sp, 5).unwrap(), 11);
        f.store(&sp, 99).unwrap();
        assert_eq!(f.load(&sp).unwrap(), 99);
        let (nv, d) = sp.replicas(f.offset()).unwrap();
        assert_eq!(nv, d, "{t:?}: replicas differ when quiescent");
        // Three successful writes (CAS, fetch-add, store), one step each.
        let mut s = nv.1;
        for _ in 0..3 {
            s = if t == Tracking::PseudoBitset {
                (s & (1 << 63)) | ((s - 1) & !(1 << 63))
            } else {
                s - 1
            };
        }
        let init = if t == Tracking::PseudoBitset {
            (1 << 63) | 1
        } else {
            1
        };
        assert_eq!(s, init, "{t:?}: sequence counts writes");
    }
}

#[test]
fn a_half_done_write_is_helped_and_loads_never_see_it_early() {
    let pool = Pool::volatile("relax-mirror", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Markable);
    let f = field(&sp, 1);
    let off = f.offset();
    let ((v, s), _) = sp.replicas(off).unwrap();
    // A writer stalls after L40: NVMM holds (2, s + 1), DRAM still (1, s).
    pool.dword(off)
        .unwrap()
        .compare_exchange(
            u128::from(v) | u128::from(s) << 64,
            2 | u128::from(s + 1) << 64,
        )
        .unwrap();
    assert_eq!(f.load(&sp).unwrap(), 1, "loads read DRAM only");
    // The next CAS helps (L18–L24) and then fails on the helped value.
    assert_eq!(f.compare_exchange(&sp, 1, 3).unwrap(), Err(2));
    assert_eq!(f.load(&sp).unwrap(), 2);
    let (nv, d) = sp.replicas(off).unwrap();
    assert_eq!(nv, (2, s + 1));
    assert_eq!(d, (2, s + 1));
}

#[test]
fn concurrent_fetch_adds_keep_mirrors_invariants() {
    const PER: u64 = 20_000;
    let pool = Pool::volatile("relax-mirror", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Bitset);
    let f = field(&sp, 0);
    let off = f.offset();
    let stop = AtomicBool::new(false);
    // The workers start once the sampler runs (on a loaded machine it could
    // otherwise be scheduled only after they finished).
    let sampling = AtomicBool::new(false);
    let mut samples = 0u64;
    std::thread::scope(|sc| {
        let workers: Vec<_> = (0..3)
            .map(|_| {
                sc.spawn(|| {
                    while !sampling.load(Ordering::Relaxed) {
                        std::thread::yield_now();
                    }
                    for _ in 0..PER {
                        f.fetch_add(&sp, 1).unwrap();
                    }
                })
            })
            .collect();
        let sampler = sc.spawn(|| {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                sampling.store(true, Ordering::Relaxed);
                // Invariant 1, NVMM.seq ≤ DRAM.seq + 1: read NVMM, then DRAM.
                let ((_, ns), _) = sp.replicas(off).unwrap();
                let ds = sp.dram().seq(off);
                assert!(
                    ds + 1 >= ns,
                    "NVMM seq {ns} more than one ahead of DRAM {ds}"
                );
                // Invariant 1, DRAM.seq ≤ NVMM.seq: read DRAM, then NVMM.
                let ds = sp.dram().seq(off);
                let ((_, ns), _) = sp.replicas(off).unwrap();
                assert!(ns >= ds, "DRAM seq {ds} ahead of NVMM {ns}");
                n += 1;
            }
            n
        });
        for w in workers {
            w.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        samples = sampler.join().unwrap();
    });
    assert_eq!(f.load(&sp).unwrap(), 3 * PER);
    let (nv, d) = sp.replicas(off).unwrap();
    assert_eq!(nv, d);
    assert_eq!(nv, (3 * PER, 1 + 3 * PER), "one sequence step per add");
    assert!(samples > 0);
}

/// A pool whose `BitsetAtomic` space (dropped again) holds a fresh data
/// field with `v`, and the field's offset.
fn pool_with_field(v: u64) -> (Pool<NoFlush>, u64) {
    let pool = Pool::volatile("relax-mirror", POOL, NoFlush).unwrap();
    let off = field(&create(&pool, Tracking::Bitset), v).offset();
    (pool, off)
}

/// Reopens the space with a new DRAM region, as after a crash.
fn reopen<'p>(pool: &'p Pool<NoFlush>, t: Tracking, dram: DramInit) -> Space<'p, NoFlush> {
    pool.reincarnate();
    Space::open(pool, base(pool), OpenOptions { tracking: t, dram }).unwrap()
}

/// Figure 6.2: p1 reads the garbage DRAM pair (V1, S1) and NVMM's (NV1,
/// S_NV) and stalls before its DWCAS; p2 recovers the field and writes it
/// until, without the sequence window, DRAM would hold (V1, S1) again; p1's
/// DWCAS must then fail.
#[test]
fn figure_6_2_a_delayed_recoverer_cannot_roll_dram_back() {
    let (pool, off) = pool_with_field(40);
    let sp = reopen(&pool, Tracking::Bitset, DramInit::Zeroed);
    let ((nv1, snv), _) = sp.replicas(off).unwrap();
    // Garbage that writes would reach: two sequence steps ahead.
    let (v1, s1) = (77, snv + 2);
    sp.dram().store_pair(off, (v1, s1));
    // p1 has read both and stalls. p2 recovers and writes twice, ending on
    // the garbage value.
    let f = PAtomic::at(off);
    assert_eq!(f.load(&sp).unwrap(), nv1, "recovered from NVMM");
    f.store(&sp, 5).unwrap();
    f.store(&sp, v1).unwrap();
    let now = sp.dram().read_pair(off);
    assert_ne!(
        now,
        (v1, s1),
        "the sequence window keeps sequences from repeating"
    );
    // p1 wakes up.
    assert!(!sp.dram().dwcas(off, (v1, s1), (nv1, snv)));
    assert_eq!(f.load(&sp).unwrap(), v1);
    // Mirror's invariant still holds.
    let (nv, d) = sp.replicas(off).unwrap();
    assert_eq!(nv, d);
}

#[test]
fn recover_field_copies_nvmm_over_garbage_for_every_seq_relation() {
    // S_D below, equal to, one and many steps above, and far from S_NV.
    let (pool, off) = pool_with_field(1234);
    for (i, delta) in [0u64, 1, 2, 1 << 40, 1 << 63, (1 << 63) + 1, u64::MAX]
        .into_iter()
        .enumerate()
    {
        let sp = reopen(
            &pool,
            Tracking::Bitset,
            DramInit::Garbage { seed: i as u64 },
        );
        let ((nv, snv), _) = sp.replicas(off).unwrap();
        sp.dram().store_pair(off, (999, snv.wrapping_add(delta)));
        sp.recover_field(off).unwrap();
        let ((nv2, snv2), d) = sp.replicas(off).unwrap();
        assert_eq!(nv2, nv, "delta {delta:#x}: value kept");
        assert_eq!(
            d,
            (nv2, snv2),
            "delta {delta:#x}: DRAM = NVMM after recovery"
        );
        let sd = snv.wrapping_add(delta);
        let window = delta != 0 && delta <= 1 << 63;
        if window {
            assert_eq!(
                snv2,
                sd.wrapping_add(1),
                "delta {delta:#x}: NVMM seq moved past S_D"
            );
        } else if delta != 0 {
            assert_eq!(snv2, snv, "delta {delta:#x}: NVMM seq untouched");
        }
        assert_eq!(PAtomic::at(off).load(&sp).unwrap(), nv);
    }
}

/// A field whose replicas never agree (its DRAM sequence far from the
/// NVMM one, as a tracking bug or memory that is not a persistent atomic
/// would leave it) makes `compare_exchange` give up with `Diverged` after
/// its patience (2^26 rounds, a few seconds), not spin forever. The crash
/// checks never reach this: every field they touch is recovered.
#[test]
fn a_field_whose_replicas_never_agree_is_reported_diverged() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (pool, _) = leaked_pool("relax-diverged", POOL);
        let sp = create(pool, Tracking::Bitset);
        let f = field(&sp, 10);
        let ((_, snv), _) = sp.replicas(f.offset()).unwrap();
        sp.dram()
            .store_pair(f.offset(), (10, snv.wrapping_add(1000)));
        let _ = tx.send(f.compare_exchange(&sp, 10, 11).map_err(|e| e.to_string()));
    });
    let r = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("compare_exchange on a diverged field did not return within 60 s");
    assert!(
        matches!(&r, Err(e) if e.contains("does not converge")),
        "compare_exchange on a diverged field: {r:?}"
    );
}
