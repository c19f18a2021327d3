//! Crash tests of the skip list and the BST on the simulated Px86 backend
//! (`perdure_pm::Sim`), as `crash_sim.rs` does for the list and the hash
//! table: a sequence of operations runs while a crash hook captures crash
//! points; each point's crash images (Px86's allowed subsets of unflushed
//! lines) are recovered lazily under every tracking variant that applies to
//! the shape (eager Mirror recovery included), with zeroed and with garbage
//! DRAM, and the recovered set must be the state before or after the
//! operation in flight — durable linearisability for a sequential history.
//! The recovered structure must keep working (5 more operations checked
//! against the model) and, once traversed, the replicas of every field the
//! traversal read must agree.
//!
//! Explores: every 3rd persistence event of 14 operations after a preload
//! of 5 keys, up to 3 images per crash point, every applicable variant × 2
//! DRAM fills (zeroed-only variants once) × 2 shapes; crashes with two
//! threads operating on disjoint keys of one structure (every 4th event, up
//! to 2 images); a second crash inside the lazily recovering execution.
//! `PERDURE_DEPTH=deep`: every event, up to 8 images. Reported as
//! PERDURE-CHECK rows. Does not cover: two threads on the same key at the
//! crash (the skip list's LINKED hand-off and the BST's helping are covered
//! by `sets_concurrent.rs` without crashes), OS schedules beyond the one
//! each run gets, 16-byte CASes persisting as two halves.

mod common;
mod sets;

use common::*;
use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::{NoFlush, Pool, Sim};
use perdure_relax::{Space, Tracking};
use sets::*;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

const SMALL_POOL: u64 = 2 << 20;

fn deep() -> bool {
    std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "deep")
}

fn stride(ci: u64) -> u64 {
    if deep() {
        1
    } else {
        ci
    }
}

fn images_per_point(ci: u64) -> u64 {
    if deep() {
        8
    } else {
        ci
    }
}

fn small_space<B: perdure_pm::Backend>(pool: &Pool<B>, t: Tracking) -> Space<'_, B> {
    space_with_heap(pool, t, 1536 << 10)
}

/// A space whose heap has `heap` bytes (256 KiB chunks, one size class
/// each, per thread slot that allocates from it).
fn space_with_heap<B: perdure_pm::Backend>(pool: &Pool<B>, t: Tracking, heap: u64) -> Space<'_, B> {
    let cfg = perdure_relax::Config {
        threads: 2,
        roots: 2,
        heap_bytes: heap,
        msb_sequences: t == Tracking::PseudoBitset,
    };
    Space::create(pool, base(pool), &cfg, perdure_relax::OpenOptions::new(t)).unwrap()
}

fn sim_pool() -> Pool<Sim> {
    Pool::volatile("relax-sets-crash", SMALL_POOL, Sim::default()).unwrap()
}

/// The pool of the two-thread runs: two thread slots (and the recovering
/// thread's) each take a chunk per size class, and the skip list's nodes
/// use up to four classes, more than `SMALL_POOL`'s heap has chunks.
const TWO_THREAD_POOL: u64 = 4 << 20;

/// (events before, events after, state before, state after) per op.
type OpLog = Vec<(u64, u64, BTreeSet<u64>, BTreeSet<u64>)>;

struct Run {
    points: Vec<(u64, CrashPoint)>,
    ops: OpLog,
    base: u64,
}

const SCRIPT: [(bool, u64); 14] = [
    (true, 5),
    (true, 25),
    (true, 60),
    (false, 5),
    (false, 30),
    (false, 60),
    (true, 30),
    (false, 99),
    (true, 20),
    (false, 10),
    (true, 1),
    (false, 50),
    (true, 55),
    (false, 25),
];

fn record(shape: Shape, t: Tracking, stride: u64) -> Run {
    let pool = sim_pool();
    let base = base(&pool);
    let sp = small_space(&pool, t);
    let mut h = sp.handle().unwrap();
    let set = Set::create(shape, &mut h, 0).unwrap();
    let mut model = BTreeSet::new();
    for k in [10, 20, 30, 40, 50] {
        assert!(set.insert(&mut h, k).unwrap());
        model.insert(k);
    }
    let points = Arc::new(Mutex::new(Vec::new()));
    let sink = points.clone();
    pool.backend().set_crash_hook(move |e, view| {
        if e % stride == 0 {
            sink.lock().unwrap().push((e, view.capture()));
        }
    });
    let mut ops = Vec::new();
    for (ins, k) in SCRIPT {
        let before = model.clone();
        let e0 = pool.backend().counts().events;
        let r = if ins {
            set.insert(&mut h, k).unwrap()
        } else {
            set.remove(&mut h, k).unwrap()
        };
        let e1 = pool.backend().counts().events;
        let expect = if ins {
            model.insert(k)
        } else {
            model.remove(&k)
        };
        assert_eq!(
            r, expect,
            "{shape:?} {t:?}: op ({ins}, {k}) before the crash"
        );
        ops.push((e0, e1, before, model.clone()));
    }
    pool.backend().clear_crash_hook();
    let points = std::mem::take(&mut *points.lock().unwrap());
    Run { points, ops, base }
}

fn allowed_at(ops: &OpLog, e: u64) -> Vec<&BTreeSet<u64>> {
    ops.iter()
        .filter(|(e0, e1, _, _)| *e0 <= e && e <= *e1)
        .flat_map(|(_, _, a, b)| [a, b])
        .collect()
}

fn check_point(
    shape: Shape,
    t: Tracking,
    run: &Run,
    e: u64,
    words: &[u64],
    garbage: Option<u64>,
) -> Result<(), String> {
    let err = |x: perdure_relax::RelaxError| x.to_string();
    let allowed = allowed_at(&run.ops, e);
    let pool = Pool::volatile_from_words(words, NoFlush).map_err(|e| e.to_string())?;
    pool.reincarnate();
    let sp = Space::open(&pool, run.base, opts(t, garbage)).map_err(err)?;
    let set = Set::open(shape, &sp, 0).map_err(err)?;
    let mut h = sp.handle().map_err(err)?;
    let mut got = BTreeSet::new();
    for k in [1, 5, 10, 20, 25, 30, 40, 50, 55, 60, 99] {
        if set.contains(&mut h, k).map_err(err)? {
            got.insert(k);
        }
    }
    let keys = set.key_set(&mut h).map_err(err)?;
    if keys != got {
        return Err(format!("contains() says {got:?}, traversal says {keys:?}"));
    }
    if !allowed.iter().any(|a| **a == got) {
        return Err(format!("recovered {got:?}, allowed {allowed:?}"));
    }
    let mut model = got;
    for (ins, k) in [
        (true, 7u64),
        (false, 40),
        (true, 40),
        (false, 7),
        (true, 61),
    ] {
        let r = if ins {
            set.insert(&mut h, k)
        } else {
            set.remove(&mut h, k)
        }
        .map_err(err)?;
        let m = if ins {
            model.insert(k)
        } else {
            model.remove(&k)
        };
        if r != m {
            return Err(format!("after recovery, op ({ins}, {k}) returned {r}"));
        }
    }
    let keys = set.key_set(&mut h).map_err(err)?;
    if keys != model {
        return Err(format!("after recovery and 5 ops: {keys:?} != {model:?}"));
    }
    let root = sp.root(0).map_err(err)?.unwrap_or(0);
    for f in traversed_fields(&pool, shape, root) {
        let (nv, d) = sp.replicas(f).map_err(err)?;
        if nv != d {
            return Err(format!("field {f:#x}: NVMM {nv:?} != DRAM {d:?}"));
        }
    }
    Ok(())
}

fn explore(shape: Shape) {
    let mut total_images = 0u64;
    let mut total_points = 0u64;
    let variants = shape.variants();
    for &t in &variants {
        let run = record(shape, t, stride(3));
        assert!(
            run.points.len() > 20,
            "{t:?}: too few crash points ({})",
            run.points.len()
        );
        let fills: &[Option<u64>] = if t.needs_zeroed_dram() {
            &[None]
        } else {
            &[None, Some(0xbad)]
        };
        for (pi, (e, cp)) in run.points.iter().enumerate() {
            let (_, images) = cp.images(images_per_point(3), 7 + pi as u64);
            for img in images {
                let words = cp.materialize(&img, VolatileFill::Zeroed);
                for &g in fills {
                    let garbage = g.map(|s| s ^ pi as u64);
                    if let Err(msg) = check_point(shape, t, &run, *e, &words, garbage) {
                        panic!("{shape:?} {t:?} crash at event {e} (dram {garbage:?}): {msg}");
                    }
                    total_images += 1;
                }
            }
        }
        total_points += run.points.len() as u64;
    }
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:relax-{}\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{total_points} crash points, {total_images} lazy recoveries\",\"detail\":\"1 in {} persistence events of 14 sequential ops after 5 inserts, <={} Px86 images each, {} tracking variants ({}), zeroed and garbage DRAM; no concurrency at the crash\"}}",
        shape.name(),
        stride(3),
        images_per_point(3),
        variants.len(),
        variants.iter().map(|t| t.seed_name()).collect::<Vec<_>>().join(", ")
    );
}

#[test]
fn skiplist_recovers_durably_linearizable_under_every_applicable_variant() {
    explore(Shape::Skip);
}

#[test]
fn bst_recovers_durably_linearizable_under_every_variant() {
    explore(Shape::Bst);
}

/// Two threads at the crash, each on its own keys (≡ thread mod 4) of one
/// structure, so that they traverse, help and CAS next to each other's
/// nodes. Per thread the recovered keys must be its state after its
/// completed operations or after the one in flight (the events counter is
/// read before and after each operation).
fn two_threads(shape: Shape) {
    let mut checked = 0u64;
    let mut variants = vec![
        Tracking::Eager,
        Tracking::Bitset,
        Tracking::Hybrid,
        Tracking::ZMarkable,
    ];
    if shape == Shape::Bst {
        variants.push(Tracking::Markable);
    }
    for &t in &variants {
        let pool = Pool::volatile("relax-sets-crash", TWO_THREAD_POOL, Sim::default()).unwrap();
        let base = base(&pool);
        let sp = space_with_heap(&pool, t, TWO_THREAD_POOL - (512 << 10));
        let set = {
            let mut h = sp.handle().unwrap();
            let set = Set::create(shape, &mut h, 0).unwrap();
            for k in 0..8 {
                set.insert(&mut h, k * 4).unwrap();
                set.insert(&mut h, k * 4 + 1).unwrap();
            }
            set
        };
        let points = Arc::new(Mutex::new(Vec::new()));
        let sink = points.clone();
        pool.backend().set_crash_hook(move |e, view| {
            if e % stride(4) == 0 {
                sink.lock().unwrap().push((e, view.capture()));
            }
        });
        type Log = (BTreeSet<u64>, Vec<(u64, u64, BTreeSet<u64>)>);
        let logs: Vec<Log> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..2u64)
                .map(|th| {
                    let sp = &sp;
                    let pool = &pool;
                    sc.spawn(move || {
                        let mut h = sp.handle().unwrap();
                        let mut model: BTreeSet<u64> = (0..8).map(|k| k * 4 + th).collect();
                        let init = model.clone();
                        let mut log = Vec::new();
                        for i in 0..10u64 {
                            let k = ((i * 3 + th) % 10) * 4 + th;
                            let e0 = pool.backend().counts().events;
                            let ins = i % 2 == 0;
                            let r = if ins {
                                set.insert(&mut h, k)
                            } else {
                                set.remove(&mut h, k)
                            }
                            .unwrap();
                            let e1 = pool.backend().counts().events;
                            assert_eq!(
                                r,
                                if ins {
                                    model.insert(k)
                                } else {
                                    model.remove(&k)
                                }
                            );
                            log.push((e0, e1, model.clone()));
                        }
                        (init, log)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        pool.backend().clear_crash_hook();
        let points = std::mem::take(&mut *points.lock().unwrap());
        assert!(points.len() > 20, "{t:?}: {} crash points", points.len());
        for (pi, (e, cp)) in points.iter().enumerate() {
            let (_, images) = cp.images(images_per_point(2), pi as u64);
            for img in images {
                let words = cp.materialize(&img, VolatileFill::Zeroed);
                let p2 = Pool::volatile_from_words(&words, NoFlush).unwrap();
                p2.reincarnate();
                let s2 = Space::open(&p2, base, opts(t, Some(pi as u64))).unwrap();
                let set2 = Set::open(shape, &s2, 0).unwrap();
                let mut h2 = s2.handle().unwrap();
                let got = set2.key_set(&mut h2).unwrap();
                for (th, (init, log)) in logs.iter().enumerate() {
                    let mine: BTreeSet<u64> =
                        got.iter().copied().filter(|k| k % 4 == th as u64).collect();
                    let done = log.iter().take_while(|(_, e1, _)| *e1 <= *e).count();
                    let mut allowed = vec![if done == 0 { init } else { &log[done - 1].2 }];
                    if let Some((e0, _, next)) = log.get(done) {
                        if *e0 <= *e {
                            allowed.push(next);
                        }
                    }
                    assert!(
                        allowed.contains(&&mine),
                        "{shape:?} {t:?} crash at {e}: thread {th} recovered {mine:?}, allowed {allowed:?}"
                    );
                }
                // And it keeps working: both threads' keys, one more round.
                let mut model = got.clone();
                for k in [2u64, 4, 5, 33] {
                    assert_eq!(
                        set2.insert(&mut h2, k).unwrap(),
                        model.insert(k),
                        "{shape:?} {t:?} at {e}"
                    );
                }
                assert_eq!(
                    set2.key_set(&mut h2).unwrap(),
                    model,
                    "{shape:?} {t:?} at {e}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "only {checked} recoveries");
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:relax-{}-2threads\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{checked} lazy recoveries\",\"detail\":\"2 threads x 10 updates on disjoint keys of one structure, OS schedule (not enumerated), 1 in {} persistence events, <={} Px86 images, {} variants\"}}",
        shape.name(),
        stride(4),
        images_per_point(2),
        variants.len()
    );
}

#[test]
fn skiplist_crashes_with_two_threads_operating_recover_each_threads_prefix() {
    two_threads(Shape::Skip);
}

#[test]
fn bst_crashes_with_two_threads_operating_recover_each_threads_prefix() {
    two_threads(Shape::Bst);
}

/// A second crash inside the lazily recovering execution (which runs on
/// `Sim` too): its crash points during a traversal and three updates are
/// recovered again and must hold the state before or after the update in
/// flight.
#[test]
fn a_crash_during_lazy_recovery_is_recovered_again() {
    let mut checked = 0u64;
    for shape in Shape::ALL {
        for t in [
            Tracking::Bitset,
            Tracking::Hybrid,
            Tracking::ZMarkable,
            Tracking::PseudoBitset,
        ] {
            let run = record(shape, t, stride(3));
            for (pi, (e, cp)) in run.points.iter().enumerate().step_by(stride(6) as usize) {
                let (_, mut images) = cp.images(1, pi as u64);
                let img = images.next().expect("at least one image");
                let words = cp.materialize(&img, VolatileFill::Zeroed);
                let pool = Pool::volatile_from_words(&words, Sim::default()).unwrap();
                pool.reincarnate();
                let sp = Space::open(&pool, run.base, opts(t, Some(pi as u64))).unwrap();
                let set = Set::open(shape, &sp, 0).unwrap();
                let mut h = sp.handle().unwrap();
                let points = Arc::new(Mutex::new(Vec::new()));
                let sink = points.clone();
                pool.backend().set_crash_hook(move |e2, view| {
                    if e2 % stride(3) == 0 {
                        sink.lock().unwrap().push((e2, view.capture()));
                    }
                });
                let got = set.key_set(&mut h).unwrap();
                assert!(
                    allowed_at(&run.ops, *e).contains(&&got),
                    "{shape:?} {t:?} first recovery at {e}: {got:?}"
                );
                let mut model = got.clone();
                let mut ops: OpLog = vec![(0, pool.backend().counts().events, got.clone(), got)];
                for (ins, k) in [(true, 7u64), (false, 40), (true, 61)] {
                    let before = model.clone();
                    let e0 = pool.backend().counts().events;
                    let r = if ins {
                        set.insert(&mut h, k)
                    } else {
                        set.remove(&mut h, k)
                    }
                    .unwrap();
                    assert_eq!(
                        r,
                        if ins {
                            model.insert(k)
                        } else {
                            model.remove(&k)
                        }
                    );
                    ops.push((e0, pool.backend().counts().events, before, model.clone()));
                }
                pool.backend().clear_crash_hook();
                drop(h);
                let points = std::mem::take(&mut *points.lock().unwrap());
                for (e2, cp2) in &points {
                    let (_, images) = cp2.images(images_per_point(1), *e2);
                    for img in images {
                        let w2 = cp2.materialize(&img, VolatileFill::Zeroed);
                        let p3 = Pool::volatile_from_words(&w2, NoFlush).unwrap();
                        p3.reincarnate();
                        let s3 = Space::open(&p3, run.base, opts(t, Some(*e2))).unwrap();
                        let set3 = Set::open(shape, &s3, 0).unwrap();
                        let mut h3 = s3.handle().unwrap();
                        let got3 = set3.key_set(&mut h3).unwrap();
                        assert!(
                            allowed_at(&ops, *e2).contains(&&got3),
                            "{shape:?} {t:?}: crash at {e}, then at {e2} of recovery: {got3:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} second-crash images");
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:relax-sets-crash-in-recovery\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{checked} second-crash recoveries\",\"detail\":\"skip list and BST; BitsetAtomic, HybridAtomicPointer, ZMarkableAtomicPointer, PseudoBitsetAtomic; 1 in {} first-crash points, 1 in {} events of the recovering execution, <={} images each\"}}",
        stride(6),
        stride(3),
        images_per_point(1)
    );
}
