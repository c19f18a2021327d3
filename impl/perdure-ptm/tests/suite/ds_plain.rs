//! The plain (unannotated) queue and set of `perdure_ptm::ds::plain` on
//! CX-PUC: seeded random operations against `VecDeque`/`BTreeSet` with the
//! invariant checked along the way and no leaked blocks, and the queue
//! under 3 threads (values conserved, FIFO per producer).

use crate::common;
use crate::ds_common;

use ds_common::{scaled, Rng};
use perdure_pm::{NoFlush, Pool};
use perdure_ptm::ds::plain::{PlainQueue, PlainSet};
use perdure_ptm::CxPuc;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

fn puc<T: perdure_ptm::cx::Plain + Default>(threads: usize) -> CxPuc<NoFlush, T> {
    let pool = Pool::volatile("ds-plain", 4 << 20, NoFlush).unwrap();
    CxPuc::create(pool, &common::cx_config(threads), T::default()).unwrap()
}

/// Bytes in live blocks, read through the annotated view.
fn live<T: perdure_ptm::cx::Plain>(p: &CxPuc<NoFlush, T>) -> u64 {
    p.read(|r| perdure_ptm::ds::live_bytes_in(&r.tx())).unwrap()
}

/// Runs `scaled(1500)` seeded random operations (`op(p, model, rng, i)`)
/// on a fresh CX-PUC holding a `T` and on its model `M`, checking the
/// invariant every 100 (`check`, the model's length); then `drain` empties
/// both, and every block the run allocated must be free again (else
/// `leaked`).
fn against_model<T, M>(
    seed: u64,
    mut op: impl FnMut(&CxPuc<NoFlush, T>, &mut M, &mut Rng, u64),
    check: impl Fn(&CxPuc<NoFlush, T>, &M) -> (u64, u64),
    drain: impl FnOnce(&CxPuc<NoFlush, T>, M),
    leaked: &str,
) where
    T: perdure_ptm::cx::Plain + Default,
    M: Default,
{
    let p = puc::<T>(2);
    let before = live(&p);
    let mut model = M::default();
    let mut rng = Rng(seed);
    for i in 0..scaled(1500) {
        op(&p, &mut model, &mut rng, i);
        if i % 100 == 0 {
            let (checked, len) = check(&p, &model);
            assert_eq!(checked, len);
        }
    }
    drain(&p, model);
    assert_eq!(live(&p), before, "{leaked}");
}

#[test]
fn plain_queue_matches_vecdeque() {
    against_model(
        0x9A1,
        |p, model: &mut VecDeque<u64>, rng, i| {
            if rng.below(100) < 55 {
                PlainQueue::enqueue(p, i).unwrap();
                model.push_back(i);
            } else {
                assert_eq!(
                    PlainQueue::dequeue(p).unwrap(),
                    model.pop_front(),
                    "dequeue #{i}"
                );
            }
        },
        |p, model| (PlainQueue::check(p).unwrap(), model.len() as u64),
        |p, mut model| {
            while let Some(v) = model.pop_front() {
                assert_eq!(PlainQueue::dequeue(p).unwrap(), Some(v));
            }
            assert_eq!(PlainQueue::dequeue(p).unwrap(), None);
        },
        "dequeued nodes were not freed",
    );
}

#[test]
fn plain_set_matches_btreeset() {
    against_model(
        0x9A2,
        |p, model: &mut BTreeSet<u64>, rng, _| {
            let k = rng.below(80);
            match rng.below(3) {
                0 => assert_eq!(
                    PlainSet::insert(p, k).unwrap(),
                    model.insert(k),
                    "insert {k}"
                ),
                1 => assert_eq!(
                    PlainSet::remove(p, k).unwrap(),
                    model.remove(&k),
                    "remove {k}"
                ),
                _ => assert_eq!(
                    PlainSet::contains(p, k).unwrap(),
                    model.contains(&k),
                    "contains {k}"
                ),
            }
        },
        |p, model| (PlainSet::check(p).unwrap(), model.len() as u64),
        |p, model| {
            for k in model {
                assert!(PlainSet::remove(p, k).unwrap());
            }
            assert_eq!(PlainSet::check(p).unwrap(), 0);
        },
        "removed nodes were not freed",
    );
}

#[test]
fn plain_queue_conserves_values_under_three_threads() {
    let threads = 3u64;
    let p = puc::<PlainQueue>(threads as usize + 1);
    let per = scaled(300);
    let got: Vec<Vec<u64>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let p = &p;
                s.spawn(move || {
                    let mut out = Vec::new();
                    for i in 0..per {
                        PlainQueue::enqueue(p, (t << 32) | i).unwrap();
                        if i % 2 == 0 {
                            out.extend(PlainQueue::dequeue(p).unwrap());
                        }
                    }
                    out
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut rest = Vec::new();
    while let Some(v) = PlainQueue::dequeue(&p).unwrap() {
        rest.push(v);
    }
    for mine in got.iter().chain(std::iter::once(&rest)) {
        let mut last = BTreeMap::new();
        for &v in mine {
            if let Some(prev) = last.insert(v >> 32, v) {
                assert!(prev < v, "{v:#x} after {prev:#x}: not FIFO");
            }
        }
    }
    let mut all: Vec<u64> = got.into_iter().flatten().chain(rest).collect();
    all.sort_unstable();
    let want: Vec<u64> = (0..threads)
        .flat_map(|t| (0..per).map(move |i| (t << 32) | i))
        .collect();
    assert_eq!(all, want, "values lost or dequeued twice");
}
