//! The data structures survive closing and reopening a pool file, on
//! every construction: the structures are filled through an `Msync` pool
//! file, the PTM and the pool are dropped, the file is opened again (null
//! recovery), and every structure is found by its root slot, passes its
//! `check`, holds what the model says, and keeps working; three rounds.
//!
//! What this does not cover: a crash in the middle of a transaction (the
//! constructions' crash tests, `redo_crash.rs`/`cx_crash.rs`, and the crash
//! explorer do); here the process closes the pool cleanly.

use crate::common;
use crate::ds_common;

use common::ptms::{self, Construction};
use ds_common::Rng;
use perdure_pm::{Msync, Pool};
use perdure_ptm::ds::plain::{PlainQueue, PlainSet};
use perdure_ptm::ds::{self, HashMap, HashSet, ListSet, Queue, RbTreeSet};
use perdure_ptm::{CxPuc, Ptm};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

const SIZE: u64 = 8 << 20;
const LAYOUT: &str = "ds-test";

/// Pool files in `/dev/shm` where it exists: what is tested is that the
/// structures are found again in the file, not the disk's msync latency.
fn tempdir() -> tempfile::TempDir {
    match Path::new("/dev/shm") {
        shm if shm.is_dir() => tempfile::tempdir_in(shm).unwrap(),
        _ => tempfile::tempdir().unwrap(),
    }
}

#[derive(Default)]
struct Model {
    queue: VecDeque<u64>,
    list: BTreeSet<u64>,
    tree: BTreeSet<u64>,
    hash: BTreeSet<u64>,
    map: BTreeMap<u64, u64>,
}

/// One round: open (or create) every structure, check it against the
/// model, then run a batch of random operations on each.
fn round<P: Ptm>(name: &str, p: &P, model: &mut Model, seed: u64, first: bool) {
    let (q, l, t, h, m) = if first {
        (
            Queue::create(p, 10).unwrap(),
            ListSet::create(p, 11).unwrap(),
            RbTreeSet::create(p, 12).unwrap(),
            HashSet::create_with(p, 13, 4).unwrap(),
            HashMap::create_with(p, 14, 4).unwrap(),
        )
    } else {
        (
            Queue::open(p, 10).unwrap(),
            ListSet::open(p, 11).unwrap(),
            RbTreeSet::open(p, 12).unwrap(),
            HashSet::open(p, 13).unwrap(),
            HashMap::open(p, 14).unwrap(),
        )
    };
    for (what, size, expected) in [
        ("queue", q.check(p), model.queue.len()),
        ("list", l.check(p), model.list.len()),
        ("tree", t.check(p), model.tree.len()),
        ("hash set", h.check(p), model.hash.len()),
        ("map", m.check(p), model.map.len()),
    ] {
        assert_eq!(
            size.unwrap(),
            expected as u64,
            "{name}: {what} after reopening"
        );
    }
    for k in 0..100 {
        for (what, found, expected) in [
            ("list", l.contains(p, k), model.list.contains(&k)),
            ("tree", t.contains(p, k), model.tree.contains(&k)),
            ("hash", h.contains(p, k), model.hash.contains(&k)),
        ] {
            assert_eq!(found.unwrap(), expected, "{name}: {what} {k}");
        }
        assert_eq!(
            m.get(p, k).unwrap(),
            model.map.get(&k).copied(),
            "{name}: map {k}"
        );
    }
    let mut rng = Rng(seed);
    for _ in 0..150 {
        let k = rng.below(100);
        if rng.below(3) == 0 {
            if let Some(v) = model.queue.pop_front() {
                assert_eq!(q.dequeue(p).unwrap(), Some(v), "{name}: dequeue");
            }
            assert_eq!(l.remove(p, k).unwrap(), model.list.remove(&k));
            assert_eq!(t.remove(p, k).unwrap(), model.tree.remove(&k));
            assert_eq!(h.remove(p, k).unwrap(), model.hash.remove(&k));
            assert_eq!(m.remove(p, k).unwrap(), model.map.remove(&k));
        } else {
            let v = rng.next() % ds::MAX_VALUE;
            q.enqueue(p, v).unwrap();
            model.queue.push_back(v);
            assert_eq!(l.insert(p, k).unwrap(), model.list.insert(k));
            assert_eq!(t.insert(p, k).unwrap(), model.tree.insert(k));
            assert_eq!(h.insert(p, k).unwrap(), model.hash.insert(k));
            assert_eq!(m.insert(p, k, v).unwrap(), model.map.insert(k, v));
        }
    }
}

/// Four rounds of construction `C` on the pool file at `path`: the first
/// creates it, each later one reopens it.
fn survive<C: Construction>(path: &Path) {
    let mut model = Model::default();
    let t0 = std::time::Instant::now();
    {
        let pool: Pool<Msync> = Pool::create(path, LAYOUT, SIZE).unwrap();
        round(C::NAME, &C::create(pool, 2).unwrap(), &mut model, 1, true);
    }
    for r in 2..=4 {
        let pool: Pool<Msync> = Pool::open(path, LAYOUT).unwrap();
        round(C::NAME, &C::open(pool).unwrap(), &mut model, r, false);
    }
    eprintln!("{}: 4 rounds in {:?}", C::NAME, t0.elapsed());
}

#[test]
fn structures_survive_reopening_on_every_ptm() {
    let dir = tempdir();
    survive::<ptms::Redo>(&dir.path().join("redo.pool"));
    survive::<ptms::Cx>(&dir.path().join("cx.pool"));
    survive::<ptms::Puc>(&dir.path().join("puc.pool"));
}

#[test]
fn plain_structures_survive_reopening_on_cx_puc() {
    let dir = tempdir();
    let cfg = common::cx_config(2);
    let (qp, sp) = (dir.path().join("q.pool"), dir.path().join("s.pool"));
    let mut queue = VecDeque::new();
    let mut set = BTreeSet::new();
    for r in 0..3u64 {
        let (qpool, spool): (Pool<Msync>, Pool<Msync>) = if r == 0 {
            (
                Pool::create(&qp, LAYOUT, SIZE).unwrap(),
                Pool::create(&sp, LAYOUT, SIZE).unwrap(),
            )
        } else {
            (
                Pool::open(&qp, LAYOUT).unwrap(),
                Pool::open(&sp, LAYOUT).unwrap(),
            )
        };
        let (q, s) = if r == 0 {
            (
                CxPuc::create(qpool, &cfg, PlainQueue::default()).unwrap(),
                CxPuc::create(spool, &cfg, PlainSet::default()).unwrap(),
            )
        } else {
            (
                CxPuc::open(qpool, &cfg).unwrap(),
                CxPuc::open(spool, &cfg).unwrap(),
            )
        };
        assert_eq!(PlainQueue::check(&q).unwrap(), queue.len() as u64);
        assert_eq!(PlainSet::check(&s).unwrap(), set.len() as u64);
        let mut rng = Rng(77 + r);
        for i in 0..100 {
            let k = rng.below(50);
            if rng.below(3) == 0 {
                assert_eq!(PlainQueue::dequeue(&q).unwrap(), queue.pop_front());
                assert_eq!(PlainSet::remove(&s, k).unwrap(), set.remove(&k));
            } else {
                PlainQueue::enqueue(&q, 1000 * r + i).unwrap();
                queue.push_back(1000 * r + i);
                assert_eq!(PlainSet::insert(&s, k).unwrap(), set.insert(k));
            }
            assert_eq!(PlainSet::contains(&s, k).unwrap(), set.contains(&k));
        }
    }
}
