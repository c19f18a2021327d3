//! Crash tests on the simulated Px86 backend (`perdure_pm::Sim`): a
//! sequence of list / hash-table operations runs single-threaded while a
//! crash hook captures crash points; each point's crash images (Px86's
//! allowed subsets of unflushed lines) are recovered lazily under every
//! tracking variant, with zeroed and with garbage DRAM, and the recovered
//! contents must be the state before or after the operation in flight (or
//! after the last completed one) — durable linearisability for a sequential
//! history. The recovered structure must then keep working: a few more
//! operations are checked against the model, and the replicas of every
//! node must agree.
//!
//! Explores: every 3rd persistence event of 14 operations after a preload,
//! up to 3 images per crash point (sampled with a fixed seed when more are
//! allowed), 6 variants × 2 DRAM fills (zeroed-only variants once) × 2
//! structures (`PERDURE_DEPTH=deep`: every event, up to 8 images); and a second crash inside the lazily recovering execution
//! (while `recover_field` has moved NVMM sequences and operations run),
//! recovered once more. Reported as PERDURE-CHECK rows. Does not cover:
//! concurrent operations at the crash (see `concurrent.rs` for concurrent
//! recovery), 16-byte CASes persisting as two halves.

mod common;

use common::*;
use perdure_pm::sim::VolatileFill;
use perdure_pm::{NoFlush, Pool, Sim};
use perdure_relax::ds::HarrisList;
use perdure_relax::{Space, Tracking};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

const SMALL_POOL: u64 = 2 << 20;

/// `PERDURE_DEPTH=deep` (`make verify DEPTH=deep`): every persistence
/// event and up to 8 images per crash point instead of every 3rd (4th, 2nd)
/// and 3 (2).
fn deep() -> bool {
    std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "deep")
}

/// The stride between captured crash points: `ci` normally, 1 when deep.
fn stride(ci: u64) -> u64 {
    if deep() {
        1
    } else {
        ci
    }
}

/// Images per crash point: `ci` normally, 8 when deep.
fn images_per_point(ci: u64) -> u64 {
    if deep() {
        8
    } else {
        ci
    }
}

fn small_cfg(t: Tracking) -> perdure_relax::Config {
    perdure_relax::Config {
        threads: 2,
        roots: 2,
        heap_bytes: 1536 << 10,
        msb_sequences: t == Tracking::PseudoBitset,
    }
}

/// A small pool on the simulator.
fn sim_pool() -> Pool<Sim> {
    Pool::volatile("relax-crash", SMALL_POOL, Sim::default()).unwrap()
}

/// A small space for variant `t` on `pool`.
fn small_space<B: perdure_pm::Backend>(pool: &Pool<B>, t: Tracking) -> Space<'_, B> {
    Space::create(
        pool,
        base(pool),
        &small_cfg(t),
        perdure_relax::OpenOptions::new(t),
    )
    .unwrap()
}

/// The recorded run: the ops' event ranges and the model state after each.
struct Run {
    points: Vec<(u64, perdure_pm::sim::CrashPoint)>,
    /// (events before, events after, state before, state after) per op.
    ops: Vec<(u64, u64, BTreeSet<u64>, BTreeSet<u64>)>,
    base: u64,
}

fn record(kind: Kind, t: Tracking, stride: u64) -> Run {
    let pool = sim_pool();
    let base = base(&pool);
    let sp = small_space(&pool, t);
    let mut h = sp.handle().unwrap();
    let ds = Ds::create(kind, &mut h);
    let mut model = BTreeSet::new();
    for k in [10, 20, 30, 40, 50] {
        assert!(ds.insert(&mut h, k).unwrap());
        model.insert(k);
    }
    let points = Arc::new(Mutex::new(Vec::new()));
    let sink = points.clone();
    pool.backend().set_crash_hook(move |e, view| {
        if e % stride == 0 {
            sink.lock().unwrap().push((e, view.capture()));
        }
    });
    // Inserts at the front, middle and end, removes of the first, a middle
    // and the last key, re-inserts, and failing ops.
    let script: [(bool, u64); 14] = [
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
    let mut ops = Vec::new();
    for (ins, k) in script {
        let before = model.clone();
        let e0 = pool.backend().counts().events;
        let r = if ins {
            ds.insert(&mut h, k).unwrap()
        } else {
            ds.remove(&mut h, k).unwrap()
        };
        let e1 = pool.backend().counts().events;
        let expect = if ins {
            model.insert(k)
        } else {
            model.remove(&k)
        };
        assert_eq!(
            r, expect,
            "{t:?} {kind:?}: op ({ins}, {k}) before the crash"
        );
        ops.push((e0, e1, before, model.clone()));
    }
    pool.backend().clear_crash_hook();
    let points = std::mem::take(&mut *points.lock().unwrap());
    Run { points, ops, base }
}

fn check_point(
    kind: Kind,
    t: Tracking,
    run: &Run,
    e: u64,
    words: &[u64],
    garbage: Option<u64>,
) -> Result<(), String> {
    let allowed: Vec<&BTreeSet<u64>> = run
        .ops
        .iter()
        .filter(|(e0, e1, _, _)| *e0 <= e && e <= *e1)
        .flat_map(|(_, _, a, b)| [a, b])
        .collect();
    let pool = Pool::volatile_from_words(words, NoFlush).map_err(|e| e.to_string())?;
    pool.reincarnate();
    let sp = Space::open(&pool, run.base, opts(t, garbage)).map_err(|e| e.to_string())?;
    let ds = Ds::open(kind, &sp).map_err(|e| e.to_string())?;
    let mut h = sp.handle().map_err(|e| e.to_string())?;
    // Lazy recovery through point queries first, then a full traversal.
    let mut got = BTreeSet::new();
    for k in [1, 5, 10, 20, 25, 30, 40, 50, 55, 60, 99] {
        if ds.contains(&mut h, k).map_err(|e| e.to_string())? {
            got.insert(k);
        }
    }
    let keys: BTreeSet<u64> = ds
        .keys(&mut h)
        .map_err(|e| e.to_string())?
        .into_iter()
        .collect();
    if keys != got {
        return Err(format!("contains() says {got:?}, traversal says {keys:?}"));
    }
    if !allowed.iter().any(|a| **a == got) {
        return Err(format!("recovered {got:?}, allowed {allowed:?}"));
    }
    // It keeps working.
    let mut model = got.clone();
    for (ins, k) in [
        (true, 7u64),
        (false, 40),
        (true, 40),
        (false, 7),
        (true, 61),
    ] {
        let r = if ins {
            ds.insert(&mut h, k)
        } else {
            ds.remove(&mut h, k)
        }
        .map_err(|e| e.to_string())?;
        let m = if ins {
            model.insert(k)
        } else {
            model.remove(&k)
        };
        if r != m {
            return Err(format!("after recovery, op ({ins}, {k}) returned {r}"));
        }
    }
    let keys: BTreeSet<u64> = ds
        .keys(&mut h)
        .map_err(|e| e.to_string())?
        .into_iter()
        .collect();
    if keys != model {
        return Err(format!("after recovery and 5 ops: {keys:?} != {model:?}"));
    }
    // Quiescent, every reachable field traversed: Mirror's replicas agree.
    for f in reachable_fields(
        &pool,
        kind,
        sp.root(0).map_err(|e| e.to_string())?.unwrap_or(0),
    ) {
        let (nv, d) = sp.replicas(f).map_err(|e| e.to_string())?;
        if nv != d {
            return Err(format!("field {f:#x}: NVMM {nv:?} != DRAM {d:?}"));
        }
    }
    Ok(())
}

/// The fields of every node reachable in NVMM from the root object that
/// the structure's operations read (not the sentinels' keys nor the bucket
/// count, which field-tracking variants never recover).
fn reachable_fields(pool: &Pool<NoFlush>, kind: Kind, root: u64) -> Vec<u64> {
    let w = |off: u64| {
        pool.word(off)
            .unwrap()
            .load(std::sync::atomic::Ordering::Acquire)
    };
    let mut heads = vec![];
    let mut fields = vec![];
    match kind {
        Kind::List => heads.push(root),
        Kind::Hash => {
            let n = w(root);
            for i in 1..=n {
                fields.push(root + 16 * i);
            }
            heads.extend((1..=n).map(|i| w(root + 16 * i)));
        }
    }
    for head in heads {
        fields.push(head + 16);
        let mut n = w(head + 16) & !0xf;
        while n != 0 {
            fields.extend([n, n + 16]);
            n = w(n + 16) & !0xf;
        }
    }
    fields
}

fn explore(kind: Kind) {
    let mut total_images = 0u64;
    let mut total_points = 0u64;
    for t in Tracking::ALL {
        let run = record(kind, t, stride(3));
        assert!(run.points.len() > 20, "{t:?}: too few crash points");
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
                    if let Err(msg) = check_point(kind, t, &run, *e, &words, garbage) {
                        panic!("{kind:?} {t:?} crash at event {e} (dram {garbage:?}): {msg}");
                    }
                    total_images += 1;
                }
            }
        }
        total_points += run.points.len() as u64;
    }
    let name = match kind {
        Kind::List => "list",
        Kind::Hash => "hash",
    };
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:relax-{name}\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{total_points} crash points, {total_images} lazy recoveries\",\"detail\":\"1 in {} persistence events of 14 sequential ops, <={} Px86 images each, 6 tracking variants, zeroed and garbage DRAM; no concurrency at the crash\"}}", stride(3), images_per_point(3)
    );
}

#[test]
fn harris_list_recovers_durably_linearizable_under_every_variant() {
    explore(Kind::List);
}

#[test]
fn hash_table_recovers_durably_linearizable_under_every_variant() {
    explore(Kind::Hash);
}

#[test]
fn a_structure_used_with_a_dropped_op_loses_nothing_that_returned() {
    // Sanity of the harness: a crash image taken after every op has
    // returned must recover exactly the final state.
    let pool = Pool::volatile("relax-crash", SMALL_POOL, Sim::default()).unwrap();
    let sp = Space::create(
        &pool,
        base(&pool),
        &small_cfg(Tracking::Markable),
        perdure_relax::OpenOptions::new(Tracking::Markable),
    )
    .unwrap();
    let mut h = sp.handle().unwrap();
    let l = HarrisList::create(&mut h, 0).unwrap();
    for k in 0..20 {
        l.insert(&mut h, k * 3).unwrap();
    }
    l.remove(&mut h, 9).unwrap();
    let cp = pool.backend().capture();
    let (_, images) = cp.images(8, 1);
    let mut n = 0;
    for img in images {
        let words = cp.materialize(&img, VolatileFill::Zeroed);
        let p2 = Pool::volatile_from_words(&words, NoFlush).unwrap();
        p2.reincarnate();
        let s2 = Space::open(&p2, base(&p2), opts(Tracking::Markable, Some(3))).unwrap();
        let l2 = HarrisList::open(&s2, 0).unwrap();
        let mut h2 = s2.handle().unwrap();
        let want: Vec<u64> = (0..20).map(|k| k * 3).filter(|&k| k != 9).collect();
        assert_eq!(l2.keys(&mut h2).unwrap(), want);
        n += 1;
    }
    assert!(n >= 1);
}

/// A second crash in the middle of the lazily recovering execution: the
/// recovered pool runs on `Sim` too; its crash points (every 2nd event of a
/// full traversal and three updates) are recovered again and must hold the
/// state before or after the update in flight.
#[test]
fn a_crash_during_lazy_recovery_is_recovered_again() {
    let mut checked = 0u64;
    for t in [
        Tracking::Bitset,
        Tracking::Markable,
        Tracking::Hybrid,
        Tracking::ZMarkable,
        Tracking::PseudoBitset,
    ] {
        let run = record(Kind::List, t, stride(3));
        for (pi, (e, cp)) in run.points.iter().enumerate().step_by(stride(4) as usize) {
            let (_, mut images) = cp.images(1, pi as u64);
            let img = images.next().expect("at least one image");
            let words = cp.materialize(&img, VolatileFill::Zeroed);
            let pool = Pool::volatile_from_words(&words, Sim::default()).unwrap();
            pool.reincarnate();
            let sp = Space::open(&pool, run.base, opts(t, Some(pi as u64))).unwrap();
            let l = HarrisList::open(&sp, 0).unwrap();
            let mut h = sp.handle().unwrap();
            let points = Arc::new(Mutex::new(Vec::new()));
            let sink = points.clone();
            pool.backend().set_crash_hook(move |e2, view| {
                if e2 % stride(2) == 0 {
                    sink.lock().unwrap().push((e2, view.capture()));
                }
            });
            let got: BTreeSet<u64> = l.keys(&mut h).unwrap().into_iter().collect();
            let allowed: Vec<_> = run
                .ops
                .iter()
                .filter(|(e0, e1, _, _)| *e0 <= *e && *e <= *e1)
                .flat_map(|(_, _, a, b)| [a.clone(), b.clone()])
                .collect();
            assert!(
                allowed.contains(&got),
                "{t:?} first recovery at {e}: {got:?}"
            );
            let mut model = got.clone();
            let mut ops = vec![(0u64, pool.backend().counts().events, got.clone(), got)];
            for (ins, k) in [(true, 7u64), (false, 40), (true, 61)] {
                let before = model.clone();
                let e0 = pool.backend().counts().events;
                let r = if ins {
                    l.insert(&mut h, k)
                } else {
                    l.remove(&mut h, k)
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
                let (_, images) = cp2.images(images_per_point(2), *e2);
                for img in images {
                    let w2 = cp2.materialize(&img, VolatileFill::Zeroed);
                    let p3 = Pool::volatile_from_words(&w2, NoFlush).unwrap();
                    p3.reincarnate();
                    let s3 = Space::open(&p3, run.base, opts(t, Some(*e2))).unwrap();
                    let l3 = HarrisList::open(&s3, 0).unwrap();
                    let mut h3 = s3.handle().unwrap();
                    let got3: BTreeSet<u64> = l3.keys(&mut h3).unwrap().into_iter().collect();
                    let ok = ops
                        .iter()
                        .filter(|(a, b, _, _)| *a <= *e2 && *e2 <= *b)
                        .any(|(_, _, x, y)| *x == got3 || *y == got3);
                    assert!(
                        ok,
                        "{t:?}: crash at {e}, then at {e2} of recovery: {got3:?}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} second-crash images");
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:relax-crash-in-recovery\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{checked} second-crash recoveries\",\"detail\":\"list; 5 lazy variants; 1 in {} first-crash points, 1 in {} events of the recovering execution, <={} images each\"}}", stride(4), stride(2), images_per_point(2)
    );
}

/// Crashes with two threads operating at the crash: each thread updates
/// its own keys (even / odd) in one shared list (so they traverse, help
/// unlink and CAS next to each other's nodes). Per thread the recovered
/// keys must be its state after its completed operations, or after the one
/// in flight. The events counter is read before and after each operation:
/// an operation whose "after" read is at most the crash point had finished
/// by then, one whose "before" read is above it had not started.
#[test]
fn crashes_with_two_threads_operating_recover_each_threads_prefix() {
    let mut checked = 0u64;
    for t in [
        Tracking::Bitset,
        Tracking::Markable,
        Tracking::Hybrid,
        Tracking::ZMarkable,
    ] {
        let pool = sim_pool();
        let base = base(&pool);
        let sp = small_space(&pool, t);
        let l = {
            let mut h = sp.handle().unwrap();
            let l = HarrisList::create(&mut h, 0).unwrap();
            for k in 0..8 {
                l.insert(&mut h, k * 4).unwrap();
                l.insert(&mut h, k * 4 + 1).unwrap();
            }
            l
        };
        let points = Arc::new(Mutex::new(Vec::new()));
        let sink = points.clone();
        pool.backend().set_crash_hook(move |e, view| {
            // 1 in 2: how many events the run has depends on the OS schedule
            // (retries, and whether the epoch lets a thread reclaim), and 1
            // in 4 left ZMarkable at 20 points in one CI run.
            if e % stride(2) == 0 {
                sink.lock().unwrap().push((e, view.capture()));
            }
        });
        // Per thread: (before, after, state after) of each op, and the
        // initial state.
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
                                l.insert(&mut h, k)
                            } else {
                                l.remove(&mut h, k)
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
                let l2 = HarrisList::open(&s2, 0).unwrap();
                let mut h2 = s2.handle().unwrap();
                let got: BTreeSet<u64> = l2.keys(&mut h2).unwrap().into_iter().collect();
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
                        "{t:?} crash at {e}: thread {th} recovered {mine:?}, allowed {allowed:?}"
                    );
                }
                checked += 1;
            }
        }
    }
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:relax-list-2threads\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{checked} lazy recoveries\",\"detail\":\"2 threads x 10 updates on one list, OS schedule (not enumerated), 1 in {} persistence events, <={} Px86 images, 4 variants\"}}", stride(2), images_per_point(2)
    );
}

/// The array under the variants that can track it: 12 sequential cell
/// updates (stores and fetch-adds); every recovered image holds the cells
/// before or after the update in flight.
#[test]
fn array_recovers_durably_linearizable_under_field_tracking_and_eager() {
    use perdure_relax::ds::PArray;
    let mut checked = 0u64;
    for t in [Tracking::Eager, Tracking::Bitset, Tracking::PseudoBitset] {
        let pool = sim_pool();
        let base = base(&pool);
        let sp = small_space(&pool, t);
        let mut h = sp.handle().unwrap();
        let a = PArray::create(&mut h, 0, 8).unwrap();
        let points = Arc::new(Mutex::new(Vec::new()));
        let sink = points.clone();
        pool.backend().set_crash_hook(move |e, view| {
            if e % stride(2) == 0 {
                sink.lock().unwrap().push((e, view.capture()));
            }
        });
        let mut model = vec![0u64; 8];
        let mut ops = Vec::new();
        for i in 0..12u64 {
            let before = model.clone();
            let e0 = pool.backend().counts().events;
            let c = (i * 5 % 8) as usize;
            if i % 2 == 0 {
                a.cell(c).unwrap().store(&sp, i + 100).unwrap();
                model[c] = i + 100;
            } else {
                a.cell(c).unwrap().fetch_add(&sp, 7).unwrap();
                model[c] += 7;
            }
            ops.push((pool.backend().counts().events, e0, before, model.clone()));
        }
        pool.backend().clear_crash_hook();
        drop(h);
        let points = std::mem::take(&mut *points.lock().unwrap());
        let fills: &[Option<u64>] = if t.needs_zeroed_dram() {
            &[None]
        } else {
            &[None, Some(1)]
        };
        for (pi, (e, cp)) in points.iter().enumerate() {
            let (_, images) = cp.images(images_per_point(3), pi as u64);
            for img in images {
                let words = cp.materialize(&img, VolatileFill::Zeroed);
                for &g in fills {
                    let p2 = Pool::volatile_from_words(&words, NoFlush).unwrap();
                    p2.reincarnate();
                    let s2 = Space::open(&p2, base, opts(t, g.map(|s| s ^ pi as u64))).unwrap();
                    let a2 = PArray::open(&s2, 0).unwrap();
                    let got: Vec<u64> = (0..8)
                        .map(|i| a2.cell(i).unwrap().load(&s2).unwrap())
                        .collect();
                    let ok = ops
                        .iter()
                        .filter(|(e1, e0, _, _)| *e0 <= *e && *e <= *e1)
                        .any(|(_, _, x, y)| *x == got || *y == got);
                    assert!(ok, "{t:?} crash at {e} (dram {g:?}): {got:?}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} recoveries");
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:relax-array\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{checked} recoveries\",\"detail\":\"12 sequential cell updates, 1 in {} persistence events, <={} images; Eager, BitsetAtomic (zeroed and garbage DRAM), PseudoBitsetAtomic\"}}",
        stride(2),
        images_per_point(3)
    );
}
