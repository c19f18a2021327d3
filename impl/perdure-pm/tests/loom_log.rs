//! loom: every interleaving (bounded preemptions) of two threads appending
//! to the tutorial commit-marker log on the simulated Px86 backend, with a
//! crash point after every persistence event and every crash image checked
//! against the log's crash invariant: every record below the persisted
//! commit word is intact.
//!
//! This is the crash explorer's "loom for small cases": the same `Sim`
//! backend and crash points, with loom choosing the interleavings
//! exhaustively instead of shuttle sampling them. The invariant is checked
//! directly (perdure-pm cannot use perdure-check's history checker).
//! Run with `RUSTFLAGS="--cfg perdure_loom"` (`make verify` does).

#![cfg(perdure_loom)]

use perdure_pm::commit_log::{CommitLog, PAYLOAD_WORDS};
use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::sync::{thread, Arc};
use perdure_pm::{Pool, Sim, SimOptions};

#[path = "support/loom_model.rs"]
mod loom_model;

use loom_model::Preemptions;

const SIZE: u64 = 8192;
const LOG: u64 = 1024;

fn payload(v: u64) -> [u64; PAYLOAD_WORDS] {
    [v; PAYLOAD_WORDS]
}

/// Checks every image of every crash point; returns (points, images).
fn check_points(points: &[CrashPoint], base: u64) -> (u64, u64) {
    let mut images = 0;
    for cp in points {
        let (_, it) = cp.images(1 << 12, 1);
        for img in it {
            images += 1;
            let words = cp.materialize(&img, VolatileFill::Zeroed);
            let pool = Pool::volatile_from_words(&words, Sim::default()).expect("image is a pool");
            let log = CommitLog::open(&pool, base, LOG).expect("recovery");
            for i in 0..log.len() {
                let p = log
                    .read(i)
                    .unwrap_or_else(|e| panic!("crash invariant broken: {e}"));
                assert!(p == payload(1) || p == payload(2), "record {i} holds {p:?}");
            }
        }
    }
    (points.len() as u64, images)
}

#[test]
fn every_interleaving_and_crash_image_of_two_appenders() {
    let totals = std::sync::Arc::new(std::sync::Mutex::new((0u64, 0u64)));
    let t = totals.clone();
    let bound = Preemptions::Default { normal: 2, deep: 3 };
    let explored = loom_model::explore(bound, Some(1_000_000), move || {
        let pool =
            Arc::new(Pool::volatile("loom-log", SIZE, Sim::new(SimOptions::default())).unwrap());
        let base = pool.data_offset();
        CommitLog::open(&pool, base, LOG).unwrap();
        let points = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        {
            let points = points.clone();
            pool.backend()
                .set_crash_hook(move |_, view| points.lock().unwrap().push(view.capture()));
        }
        let hs: Vec<_> = (1..=2u64)
            .map(|v| {
                let pool = pool.clone();
                thread::spawn(move || {
                    let log = CommitLog::attach(&pool, base, LOG).unwrap();
                    log.append(&payload(v)).unwrap();
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        pool.backend().clear_crash_hook();
        // Both appends committed, each record once: the commit word ends at
        // 2 (tickets commit in order; one that went past its turn, or back,
        // leaves it elsewhere).
        let log = CommitLog::attach(&pool, base, LOG).unwrap();
        assert_eq!(
            log.len(),
            2,
            "two appends returned, {} committed",
            log.len()
        );
        let mut got: Vec<u64> = (0..2).map(|i| log.read(i).unwrap()[0]).collect();
        got.sort_unstable();
        assert_eq!(got, [1, 2], "the committed records");
        let mut pts = std::mem::take(&mut *points.lock().unwrap());
        let end = pool.backend().capture();
        // Both appends returned: every image of the end state holds both
        // (an append is durable when it returns).
        let (_, it) = end.images(1 << 12, 1);
        for img in it {
            let words = end.materialize(&img, VolatileFill::Zeroed);
            let pool = Pool::volatile_from_words(&words, Sim::default()).expect("image is a pool");
            let n = CommitLog::open(&pool, base, LOG).expect("recovery").len();
            assert_eq!(
                n, 2,
                "an image after both appends returned recovers {n} records"
            );
        }
        pts.push(end);
        let (p, i) = check_points(&pts, base);
        let mut tot = t.lock().unwrap();
        tot.0 += p;
        tot.1 += i;
    });
    let (points, images) = *totals.lock().unwrap();
    assert!(explored.runs > 1 && images > 0);
    loom_model::report(
        "loom:pm/log-crash-images",
        &format!(
            "{}, {points} crash points, {images} images",
            explored.interleavings()
        ),
        "crash invariant on every image: records below the commit word intact; at the end both appends committed, each record once",
        None,
    );
}
