//! The data structures of `perdure_ptm::ds` under 2–4 threads, on every
//! construction (`common::ptms`), each operation its own transaction:
//!
//! * queue: every thread enqueues its own numbered values and dequeues;
//!   afterwards the values dequeued plus those left are exactly the values
//!   enqueued (none lost, none twice), and each thread saw every other
//!   thread's values in the order they were enqueued (FIFO);
//! * sets (list, red-black tree, hash set) with disjoint keys: each thread
//!   inserts its keys and removes every other one; the final set is
//!   exactly the keys left;
//! * sets with overlapping keys: threads insert and remove the same small
//!   key range at random; for every key, successful inserts minus
//!   successful removes is 1 if the key is in the final set and 0 if not;
//! * the hash map with overlapping keys: the final value of each key is
//!   one some thread wrote.
//!
//! The invariant (`check`) holds after each phase. Explores: seeded random
//! schedules the OS picks, a few hundred operations per thread (a tenth in
//! debug builds); loom/shuttle explore the constructions themselves.

use crate::common;
use crate::ds_common;

use common::ptms::Construction;
use ds_common::{scaled, Rng, SetOps};
use perdure_pm::NoFlush;
use perdure_ptm::ds::{HashMap, HashSet, ListSet, Queue, RbTreeSet};
use perdure_ptm::Ptm;
use std::collections::{BTreeMap, BTreeSet};

const POOL: u64 = 16 << 20;

/// Runs `body(t)` on `threads` scoped threads and collects the results.
fn on_threads<R: Send>(threads: usize, body: impl Fn(usize) -> R + Sync) -> Vec<R> {
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let body = &body;
                s.spawn(move || body(t))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn queue_concurrent<P: Ptm>(name: &str, p: &P, threads: usize) {
    let q = Queue::create(p, 1).unwrap();
    let per = scaled(400);
    let got: Vec<Vec<u64>> = on_threads(threads, |t| {
        let mut rng = Rng(0xC0FFEE + t as u64);
        let mut out = Vec::new();
        for i in 0..per {
            q.enqueue(p, ((t as u64) << 32) | i).unwrap();
            if rng.below(2) == 0 {
                if let Some(v) = q.dequeue(p).unwrap() {
                    out.push(v);
                }
            }
        }
        out
    });
    assert_eq!(q.check(p).unwrap(), q.len(p).unwrap(), "{name}");
    let mut rest = Vec::new();
    while let Some(v) = q.dequeue(p).unwrap() {
        rest.push(v);
    }
    assert_eq!(q.check(p).unwrap(), 0, "{name}");
    for mine in got.iter().chain(std::iter::once(&rest)) {
        let mut last = BTreeMap::new();
        for &v in mine {
            if let Some(prev) = last.insert(v >> 32, v) {
                assert!(
                    prev < v,
                    "{name}, {threads} threads: {v:#x} dequeued after {prev:#x} (FIFO order)"
                );
            }
        }
    }
    let mut all: Vec<u64> = got.into_iter().flatten().chain(rest).collect();
    all.sort_unstable();
    let want: Vec<u64> = (0..threads as u64)
        .flat_map(|t| (0..per).map(move |i| (t << 32) | i))
        .collect();
    assert_eq!(
        all, want,
        "{name}, {threads} threads: values lost or dequeued twice"
    );
}

fn set_disjoint<P: Ptm, S: SetOps>(name: &str, what: &str, p: &P, s: S, threads: usize) {
    let per = scaled(200);
    on_threads(threads, |t| {
        let base = t as u64 * 1_000_000;
        for k in 0..per {
            assert!(
                s.insert(p, base + k),
                "{name} {what}: insert of a fresh key failed"
            );
        }
        for k in (0..per).step_by(2) {
            assert!(
                s.remove(p, base + k),
                "{name} {what}: remove of an own key failed"
            );
        }
    });
    let want = threads as u64 * (per / 2);
    assert_eq!(s.check(p), want, "{name} {what}, {threads} threads");
    for t in 0..threads as u64 {
        for k in 0..per {
            assert_eq!(
                s.contains(p, t * 1_000_000 + k),
                k % 2 == 1,
                "{name} {what}: key {t}/{k}"
            );
        }
    }
}

fn set_overlapping<P: Ptm, S: SetOps>(name: &str, what: &str, p: &P, s: S, threads: usize) {
    const KEYS: u64 = 32;
    let base = 1 << 40;
    let per = scaled(300);
    let nets: Vec<Vec<i64>> = on_threads(threads, |t| {
        let mut rng = Rng(0xABCD + t as u64);
        let mut net = vec![0i64; KEYS as usize];
        for _ in 0..per {
            let k = rng.below(KEYS);
            if rng.below(2) == 0 {
                if s.insert(p, base + k) {
                    net[k as usize] += 1;
                }
            } else if s.remove(p, base + k) {
                net[k as usize] -= 1;
            }
        }
        net
    });
    let mut present = 0;
    for k in 0..KEYS {
        let net: i64 = nets.iter().map(|n| n[k as usize]).sum();
        let here = s.contains(p, base + k);
        assert_eq!(
            net,
            i64::from(here),
            "{name} {what}, {threads} threads: key {k} inserted-removed {net}, present {here}"
        );
        present += u64::from(here);
    }
    // The disjoint phase's keys are still there.
    assert_eq!(
        s.check(p),
        threads as u64 * (scaled(200) / 2) + present,
        "{name} {what}"
    );
}

fn sets_concurrent<P: Ptm>(name: &str, p: &P, threads: usize) {
    let l = ListSet::create(p, 2).unwrap();
    let t = RbTreeSet::create(p, 3).unwrap();
    let h = HashSet::create_with(p, 4, 2).unwrap();
    set_disjoint(name, "list", p, l, threads);
    set_disjoint(name, "rbtree", p, t, threads);
    set_disjoint(name, "hash set", p, h, threads);
    set_overlapping(name, "list", p, l, threads);
    set_overlapping(name, "rbtree", p, t, threads);
    set_overlapping(name, "hash set", p, h, threads);
}

fn map_concurrent<P: Ptm>(name: &str, p: &P, threads: usize) {
    let m = HashMap::create_with(p, 5, 1).unwrap();
    let per = scaled(300);
    let wrote: Vec<BTreeSet<(u64, u64)>> = on_threads(threads, |t| {
        let mut rng = Rng(0x1234 + t as u64);
        let mut w = BTreeSet::new();
        for i in 0..per {
            let k = rng.below(40);
            let v = ((t as u64) << 32) | i;
            m.insert(p, k, v).unwrap();
            w.insert((k, v));
        }
        w
    });
    let n = m.check(p).unwrap();
    let mut found = 0;
    for k in 0..40 {
        if let Some(v) = m.get(p, k).unwrap() {
            found += 1;
            assert!(
                wrote.iter().any(|w| w.contains(&(k, v))),
                "{name}: key {k} holds {v:#x}, which nobody wrote there"
            );
        }
    }
    assert_eq!(n, found, "{name}");
}

/// `run(name, p, workers)` for each worker count in `workers`, on a fresh
/// PTM of construction `C` with one more thread id than workers (the main
/// thread keeps one).
fn on_fresh<C: Construction>(
    workers: impl IntoIterator<Item = usize>,
    run: fn(&str, &C::P<NoFlush>, usize),
) {
    for threads in workers {
        run(C::NAME, &C::volatile(threads + 1, POOL, NoFlush), threads);
    }
}

fn queue_conserves_values_and_keeps_fifo_order<C: Construction>() {
    on_fresh::<C>(2..=4, queue_concurrent);
}

fn sets_agree_with_the_counts_of_successful_operations<C: Construction>() {
    on_fresh::<C>([2, 4], sets_concurrent);
}

fn hash_map_holds_values_some_thread_wrote<C: Construction>() {
    on_fresh::<C>([2, 3], map_concurrent);
}

common::ptms::ptm_suite!(
    queue_conserves_values_and_keeps_fifo_order,
    sets_agree_with_the_counts_of_successful_operations,
    hash_map_holds_values_some_thread_wrote,
);
