//! The simulated Px86 backend: the PX86.md examples that sequentially
//! consistent interleavings can express, and every option of the simulator.

use perdure_pm::px86::Coverage;
use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::{Pool, Sim, SimOptions};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

const SIZE: u64 = 64 << 10;

fn pool(opts: SimOptions) -> Pool<Sim> {
    Pool::volatile("sim-test", SIZE, Sim::new(opts)).unwrap()
}

/// Two locations on different lines (or the same line).
fn locs(p: &Pool<Sim>, same_line: bool) -> (u64, u64) {
    let x = p.data_offset() + 1024;
    (x, if same_line { x + 8 } else { x + 128 })
}

/// Every persisted (x, y) over all images of `cp`.
fn outcomes(cp: &CrashPoint, x: u64, y: u64) -> BTreeSet<(u64, u64)> {
    let (cov, images) = cp.images(10_000, 1);
    assert_eq!(cov, Coverage::Exhaustive);
    images
        .map(|i| {
            let w = cp.materialize(&i, VolatileFill::Zeroed);
            (w[(x / 8) as usize], w[(y / 8) as usize])
        })
        .collect()
}

/// Crash points after every persistence event of `run`, outcomes unioned.
fn all_outcomes(p: &Pool<Sim>, x: u64, y: u64, run: impl FnOnce()) -> BTreeSet<(u64, u64)> {
    let points = std::sync::Arc::new(std::sync::Mutex::new(vec![p.backend().capture()]));
    let sink = points.clone();
    p.backend()
        .set_crash_hook(move |_, view| sink.lock().unwrap().push(view.capture()));
    run();
    p.backend().clear_crash_hook();
    let points = points.lock().unwrap();
    points.iter().flat_map(|cp| outcomes(cp, x, y)).collect()
}

#[test]
fn ss_different_lines_may_persist_out_of_order() {
    let p = pool(SimOptions::default());
    let (x, y) = locs(&p, false);
    let o = all_outcomes(&p, x, y, || {
        p.word(x).unwrap().store(1, Ordering::Relaxed);
        p.word(y).unwrap().store(1, Ordering::Relaxed);
    });
    assert!(o.contains(&(0, 1)), "SS: x=0 y=1 is allowed: {o:?}");
}

#[test]
fn ss_same_line_persists_in_order() {
    let p = pool(SimOptions::default());
    let (x, y) = locs(&p, true);
    let o = all_outcomes(&p, x, y, || {
        p.word(x).unwrap().store(1, Ordering::Relaxed);
        p.word(y).unwrap().store(1, Ordering::Relaxed);
    });
    assert!(
        !o.contains(&(0, 1)),
        "SS+sameline: x=0 y=1 is forbidden: {o:?}"
    );
    assert_eq!(o, [(0, 0), (1, 0), (1, 1)].into());
}

#[test]
fn pwb_without_fence_orders_nothing() {
    let p = pool(SimOptions::default());
    let (x, y) = locs(&p, false);
    let o = all_outcomes(&p, x, y, || {
        p.word(x).unwrap().store(1, Ordering::Relaxed);
        p.pwb(x, 8);
        p.word(y).unwrap().store(1, Ordering::Relaxed);
    });
    assert!(
        o.contains(&(0, 1)),
        "clflushopt without sfence: allowed: {o:?}"
    );
}

#[test]
fn pwb_and_fence_order_persistence() {
    let p = pool(SimOptions::default());
    let (x, y) = locs(&p, false);
    let o = all_outcomes(&p, x, y, || {
        p.word(x).unwrap().store(1, Ordering::Relaxed);
        p.pwb(x, 8);
        p.pfence();
        p.word(y).unwrap().store(1, Ordering::Relaxed);
    });
    assert!(
        !o.contains(&(0, 1)),
        "clflushopt+sfence: x=0 y=1 forbidden: {o:?}"
    );
    assert!(o.contains(&(1, 0)) && o.contains(&(1, 1)));
}

#[test]
fn message_passing_with_a_flush_of_another_threads_store() {
    // MP+clflush: T0 stores x; T1 reads x = 1, flushes x, fences, stores y.
    let p = pool(SimOptions::default());
    let (x, y) = locs(&p, false);
    let o = all_outcomes(&p, x, y, || {
        std::thread::scope(|s| {
            s.spawn(|| p.word(x).unwrap().store(1, Ordering::Release));
        });
        std::thread::scope(|s| {
            s.spawn(|| {
                assert_eq!(p.word(x).unwrap().load(Ordering::Acquire), 1);
                p.pwb(x, 8);
                p.pfence();
                p.word(y).unwrap().store(1, Ordering::Release);
            });
        });
    });
    assert!(!o.contains(&(0, 1)), "MP+clflush: x=0 y=1 forbidden: {o:?}");
}

#[test]
fn a_fence_on_another_thread_does_not_complete_my_pwb() {
    let p = pool(SimOptions::default());
    let (x, y) = locs(&p, false);
    let o = all_outcomes(&p, x, y, || {
        p.word(x).unwrap().store(1, Ordering::Relaxed);
        p.pwb(x, 8);
        std::thread::scope(|s| {
            s.spawn(|| p.pfence());
        });
        p.word(y).unwrap().store(1, Ordering::Relaxed);
    });
    assert!(
        o.contains(&(0, 1)),
        "another thread's fence orders nothing of mine: {o:?}"
    );
}

#[test]
fn rmw_completes_flushes_only_when_asked() {
    for (px86, forbidden) in [(false, false), (true, true)] {
        let p = pool(SimOptions {
            rmw_completes_flushes: px86,
            ..SimOptions::default()
        });
        let (x, y) = locs(&p, false);
        let o = all_outcomes(&p, x, y, || {
            p.word(x).unwrap().store(1, Ordering::Relaxed);
            p.pwb(x, 8);
            p.word(y).unwrap().fetch_add(1, Ordering::AcqRel);
        });
        assert_eq!(
            !o.contains(&(0, 1)),
            forbidden,
            "rmw_completes_flushes={px86}: {o:?}"
        );
    }
}

#[test]
fn ntstore_is_persisted_when_visible() {
    let p = pool(SimOptions::default());
    let (x, y) = locs(&p, false);
    let o = all_outcomes(&p, x, y, || {
        p.word(x).unwrap().ntstore(7);
        p.word(y).unwrap().store(1, Ordering::Relaxed);
    });
    assert!(o.iter().all(|&(vx, _)| vx == 7 || o.contains(&(0, 0))));
    assert!(
        !o.contains(&(0, 1)),
        "the ntstore persisted before y became visible: {o:?}"
    );
}

#[test]
fn dword_cas_persists_atomically_or_in_halves() {
    for (atomic, torn_seen) in [(true, false), (false, true)] {
        let p = pool(SimOptions {
            dword_persists_atomically: atomic,
            ..SimOptions::default()
        });
        let d = p.data_offset() + 2048;
        let v = 5u128 | (6u128 << 64);
        assert_eq!(p.dword(d).unwrap().compare_exchange(0, v), Ok(0));
        assert_eq!(p.dword(d).unwrap().load(), v);
        let cp = p.backend().capture();
        let (_, images) = cp.images(100, 1);
        let seen: BTreeSet<(u64, u64)> = images
            .map(|i| {
                let w = cp.materialize(&i, VolatileFill::Zeroed);
                (w[(d / 8) as usize], w[(d / 8) as usize + 1])
            })
            .collect();
        let torn = seen.contains(&(5, 0)) || seen.contains(&(0, 6));
        assert_eq!(torn, torn_seen, "atomic={atomic}: {seen:?}");
        assert!(seen.contains(&(0, 0)) && seen.contains(&(5, 6)));
    }
}

#[test]
fn volatile_regions_are_zeroed_or_garbage() {
    let p = pool(SimOptions::default());
    let v = p.data_offset() + 4096;
    p.backend().declare_volatile(v, 64);
    for i in 0..8 {
        p.word(v + 8 * i).unwrap().store(42, Ordering::Relaxed);
    }
    p.pwb(v, 64);
    p.psync();
    let cp = p.backend().capture();
    let (_, mut images) = cp.images(1, 1);
    let img = images.next().unwrap();
    let zero = cp.materialize(&img, VolatileFill::Zeroed);
    assert!((0..8).all(|i| zero[(v / 8) as usize + i] == 0));
    let garbage = cp.materialize(&img, VolatileFill::Garbage { seed: 3 });
    let g: Vec<u64> = (0..8).map(|i| garbage[(v / 8) as usize + i]).collect();
    assert!(g.iter().all(|&w| w != 42) && g.iter().any(|&w| w != 0));
    assert_eq!(g, {
        let again = cp.materialize(&img, VolatileFill::Garbage { seed: 3 });
        (0..8)
            .map(|i| again[(v / 8) as usize + i])
            .collect::<Vec<_>>()
    });
}

#[test]
fn counts_every_access_kind() {
    let p = pool(SimOptions::default());
    let base = p.backend().counts();
    let x = p.data_offset() + 512;
    let w = p.word(x).unwrap();
    w.load(Ordering::Relaxed);
    w.store(1, Ordering::Relaxed);
    let _ = w.compare_exchange(1, 2, Ordering::AcqRel, Ordering::Relaxed);
    let _ = w.compare_exchange(9, 3, Ordering::AcqRel, Ordering::Relaxed);
    w.swap(4, Ordering::AcqRel);
    w.fetch_add(1, Ordering::AcqRel);
    w.ntstore(6);
    let _ = p.dword(x + 16).unwrap().compare_exchange(0, 1);
    p.pwb(x, 100);
    p.pfence();
    p.psync();
    let c = p.backend().counts();
    assert_eq!(c.loads - base.loads, 1);
    assert_eq!(c.stores - base.stores, 1);
    assert_eq!(c.cas - base.cas, 2);
    assert_eq!(c.rmw - base.rmw, 2);
    assert_eq!(c.ntstores - base.ntstores, 1);
    assert_eq!(c.dword_cas - base.dword_cas, 1);
    assert_eq!(
        c.pwb - base.pwb,
        2,
        "100 bytes from a line start span 2 lines"
    );
    assert_eq!((c.pfence - base.pfence, c.psync - base.psync), (1, 1));
    assert_eq!(w.load(Ordering::Relaxed), 6);
}

#[test]
fn many_unsettled_lines_are_sampled_with_the_total_reported() {
    let p = pool(SimOptions::default());
    for i in 0..30u64 {
        p.word(p.data_offset() + 64 * i)
            .unwrap()
            .store(i + 1, Ordering::Relaxed);
    }
    let cp = p.backend().capture();
    assert_eq!(cp.unsettled_lines(), 30);
    assert_eq!(cp.total_images(), 1 << 30);
    let (cov, images) = cp.images(500, 11);
    assert_eq!(cov, Coverage::Sampled(500));
    assert_eq!(images.count(), 500);
    p.pwb(p.data_offset(), 64 * 30);
    p.psync();
    assert_eq!(
        p.backend().capture().total_images(),
        1,
        "after psync only one image"
    );
}

#[test]
fn an_image_becomes_a_pool_again() {
    let p = pool(SimOptions::default());
    let x = p.data_offset() + 64;
    p.word(x).unwrap().store(77, Ordering::Relaxed);
    p.pwb(x, 8);
    p.psync();
    p.set_root(0, Some(x)).unwrap();
    let cp = p.backend().capture();
    let (_, mut images) = cp.images(10, 1);
    let words = cp.materialize(&images.next().unwrap(), VolatileFill::Zeroed);
    let q = Pool::volatile_from_words(&words, Sim::default()).unwrap();
    assert_eq!(q.root(0).unwrap(), Some(x));
    assert_eq!(q.word(x).unwrap().load(Ordering::Relaxed), 77);
    assert_eq!(q.header().layout, "sim-test");
}

#[test]
fn traces_record_every_event_with_dense_thread_numbers() {
    use perdure_pm::sim::{SimEvent, SimOp};
    let p = pool(SimOptions::default());
    let x = p.data_offset() + 128;
    p.backend().start_trace();
    p.word(x).unwrap().store(5, Ordering::Relaxed);
    std::thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(p.word(x).unwrap().load(Ordering::Relaxed), 5);
            p.pwb(x, 8);
            p.pfence();
        });
    });
    let t = p.backend().take_trace();
    assert_eq!(
        t,
        vec![
            SimEvent {
                thread: 0,
                op: SimOp::Store,
                off: x,
                val: 5
            },
            SimEvent {
                thread: 1,
                op: SimOp::Load,
                off: x,
                val: 5
            },
            SimEvent {
                thread: 1,
                op: SimOp::Pwb,
                off: x & !63,
                val: 0
            },
            SimEvent {
                thread: 1,
                op: SimOp::Pfence,
                off: 0,
                val: 0
            },
        ]
    );
    assert!(p.backend().take_trace().is_empty(), "tracing stopped");
}
