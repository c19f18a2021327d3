//! Model-based property tests of every data structure of `perdure_ptm::ds`
//! on every PTM (`common::ptms`: CX-PTM, CX-PUC through its annotated
//! interface, Redo-PTM, RedoTimed-PTM, RedoOpt-PTM), with proptest:
//! generated sequences of operations on a queue, a sorted list set, a
//! red-black tree set, a hash set, a hash map and an SPS array living in
//! one pool file (`Sim` backend, one thread), checked step by step against
//! `std` models (`VecDeque`, `BTreeSet`, `BTreeMap`, `Vec`), with three
//! kinds of interruption in between:
//!
//! * **reopen**: the PTM and the pool are dropped and the file is opened
//!   again (null recovery);
//! * **crash**: a crash point of the Px86 simulator after the last
//!   completed operation; every sampled crash image must hold exactly the
//!   model's state (durable linearizability: a returned transaction is
//!   durable), and the run goes on from one of them (written to the file);
//! * **crash during an operation**: a crash point after one of the
//!   persistence events of an operation; its images must hold the state
//!   before or after the operation, never a part of it, and the model
//!   follows whichever it holds.
//!
//! After each interruption every structure passes its `check` and the whole
//! state (every key of the small key ranges, the queue drained and
//! refilled, every array entry) is compared with the model. A failure
//! shrinks to a minimal sequence. Cases per construction: 16, or
//! `PROPTEST_CASES`; sequences of up to 24 steps.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod common;

use common::ptms::Construction;
use perdure_pm::sim::VolatileFill;
use perdure_pm::{Pool, Sim};
use perdure_ptm::ds::{HashMap, HashSet, ListSet, PArray, Queue, RbTreeSet};
use perdure_ptm::Ptm;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

const POOL: u64 = 1 << 20;
const LAYOUT: &str = "ds-proptest";
/// Keys of the sets and the map: few, so that operations collide.
const KEYS: u64 = 12;
/// Entries of the SPS array.
const ALEN: u64 = 8;
/// Crash images checked per crash point.
const IMAGES: u64 = 3;

/// Cases per property: `PROPTEST_CASES`, else 16.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16)
}

/// An operation on one of the structures.
#[derive(Clone, Debug)]
enum DsOp {
    Enqueue(u64),
    Dequeue,
    /// On set `s` (0 list, 1 tree, 2 hash set): 0 insert, 1 remove, 2 contains.
    Set(u8, u8, u64),
    /// 0 insert `(k, v)`, 1 remove `k`, 2 get `k`.
    Map(u8, u64, u64),
    /// `PArray::swap_all` with these pairs.
    Swap(Vec<(u64, u64)>),
}

/// A step of a generated run.
#[derive(Clone, Debug)]
enum Step {
    Do(DsOp),
    Reopen,
    /// A crash after the last completed operation (image sample seed).
    Crash(u64),
    /// A crash after persistence event `pick` (mod their count) of the op.
    CrashDuring(DsOp, u16, u64),
}

fn ds_op() -> impl Strategy<Value = DsOp> {
    prop_oneof![
        3 => (0..1000u64).prop_map(DsOp::Enqueue),
        2 => Just(DsOp::Dequeue),
        6 => (0..3u8, 0..3u8, 0..KEYS).prop_map(|(s, o, k)| DsOp::Set(s, o, k)),
        3 => (0..3u8, 0..KEYS, 0..1000u64).prop_map(|(o, k, v)| DsOp::Map(o, k, v)),
        1 => prop::collection::vec((0..ALEN, 0..ALEN), 1..4).prop_map(DsOp::Swap),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => ds_op().prop_map(Step::Do),
        1 => Just(Step::Reopen),
        1 => any::<u64>().prop_map(Step::Crash),
        2 => (ds_op(), any::<u16>(), any::<u64>()).prop_map(|(o, e, s)| Step::CrashDuring(o, e, s)),
    ]
}

/// The abstract state of all the structures.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Model {
    queue: VecDeque<u64>,
    sets: [BTreeSet<u64>; 3],
    map: BTreeMap<u64, u64>,
    array: Vec<u64>,
}

impl Model {
    fn new() -> Model {
        Model {
            queue: VecDeque::new(),
            sets: Default::default(),
            map: BTreeMap::new(),
            array: (0..ALEN).collect(),
        }
    }

    /// Applies `op`; returns its result as one comparable value.
    fn apply(&mut self, op: &DsOp) -> Option<u64> {
        match *op {
            DsOp::Enqueue(v) => {
                self.queue.push_back(v);
                None
            }
            DsOp::Dequeue => self.queue.pop_front(),
            DsOp::Set(s, o, k) => {
                let set = &mut self.sets[s as usize];
                Some(u64::from(match o {
                    0 => set.insert(k),
                    1 => set.remove(&k),
                    _ => set.contains(&k),
                }))
            }
            DsOp::Map(0, k, v) => self.map.insert(k, v),
            DsOp::Map(1, k, _) => self.map.remove(&k),
            DsOp::Map(_, k, _) => self.map.get(&k).copied(),
            DsOp::Swap(ref pairs) => {
                for &(i, j) in pairs {
                    self.array.swap(i as usize, j as usize);
                }
                None
            }
        }
    }
}

/// The structures' handles (roots 0–6 of the one region).
struct World {
    queue: Queue,
    list: ListSet,
    tree: RbTreeSet,
    hset: HashSet,
    map: HashMap,
    array: PArray,
}

impl World {
    fn create<P: Ptm>(p: &P) -> World {
        World {
            array: PArray::create(p, 0, ALEN).unwrap(),
            queue: Queue::create(p, 1).unwrap(),
            list: ListSet::create(p, 2).unwrap(),
            tree: RbTreeSet::create(p, 3).unwrap(),
            hset: HashSet::create_with(p, 4, 2).unwrap(),
            map: HashMap::create_with(p, 5, 2).unwrap(),
        }
    }

    /// The structures of a reopened or recovered pool.
    fn open<P: Ptm>(p: &P) -> Result<World, TestCaseError> {
        let e = |err: perdure_ptm::ds::DsError| TestCaseError::fail(format!("reopening: {err}"));
        Ok(World {
            array: PArray::open(p, 0).map_err(e)?,
            queue: Queue::open(p, 1).map_err(e)?,
            list: ListSet::open(p, 2).map_err(e)?,
            tree: RbTreeSet::open(p, 3).map_err(e)?,
            hset: HashSet::open(p, 4).map_err(e)?,
            map: HashMap::open(p, 5).map_err(e)?,
        })
    }

    fn apply<P: Ptm>(&self, p: &P, op: &DsOp) -> Result<Option<u64>, TestCaseError> {
        let e = |err: perdure_ptm::ds::DsError| TestCaseError::fail(format!("{op:?}: {err}"));
        Ok(match *op {
            DsOp::Enqueue(v) => {
                self.queue.enqueue(p, v).map_err(e)?;
                None
            }
            DsOp::Dequeue => self.queue.dequeue(p).map_err(e)?,
            DsOp::Set(s, o, k) => Some(u64::from(
                match (s, o) {
                    (0, 0) => self.list.insert(p, k),
                    (0, 1) => self.list.remove(p, k),
                    (0, _) => self.list.contains(p, k),
                    (1, 0) => self.tree.insert(p, k),
                    (1, 1) => self.tree.remove(p, k),
                    (1, _) => self.tree.contains(p, k),
                    (_, 0) => self.hset.insert(p, k),
                    (_, 1) => self.hset.remove(p, k),
                    (_, _) => self.hset.contains(p, k),
                }
                .unwrap(),
            )),
            DsOp::Map(0, k, v) => self.map.insert(p, k, v).map_err(e)?,
            DsOp::Map(1, k, _) => self.map.remove(p, k).map_err(e)?,
            DsOp::Map(_, k, _) => self.map.get(p, k).map_err(e)?,
            DsOp::Swap(ref pairs) => {
                self.array.swap_all(p, pairs.clone()).map_err(e)?;
                None
            }
        })
    }

    /// The whole state, after every structure passed its `check` (the
    /// queue is drained and refilled to read it).
    fn read<P: Ptm>(&self, p: &P) -> Result<Model, TestCaseError> {
        let e = |what: &str, err: perdure_ptm::ds::DsError| {
            TestCaseError::fail(format!("{what}: {err}"))
        };
        let qlen = self.queue.check(p).map_err(|x| e("queue", x))?;
        let lens = [
            self.list.check(p).map_err(|x| e("list", x))?,
            self.tree.check(p).map_err(|x| e("tree", x))?,
            self.hset.check(p).map_err(|x| e("hash set", x))?,
        ];
        let mlen = self.map.check(p).map_err(|x| e("map", x))?;
        self.array.check(p).map_err(|x| e("array", x))?;
        let mut m = Model::new();
        while let Some(v) = self.queue.dequeue(p).map_err(|x| e("queue", x))? {
            m.queue.push_back(v);
        }
        for &v in &m.queue {
            self.queue.enqueue(p, v).map_err(|x| e("queue", x))?;
        }
        for k in 0..KEYS {
            for (s, set) in m.sets.iter_mut().enumerate() {
                if self.apply(p, &DsOp::Set(s as u8, 2, k))? == Some(1) {
                    set.insert(k);
                }
            }
            if let Some(v) = self.map.get(p, k).map_err(|x| e("map", x))? {
                m.map.insert(k, v);
            }
        }
        for i in 0..ALEN {
            m.array[i as usize] = self.array.get(p, i).map_err(|x| e("array", x))?;
        }
        let counted = (qlen, lens, mlen);
        let seen = (
            m.queue.len() as u64,
            [0, 1, 2].map(|s| m.sets[s].len() as u64),
            m.map.len() as u64,
        );
        if counted != seen {
            return Err(TestCaseError::fail(format!(
                "counts {counted:?} but contents {seen:?}"
            )));
        }
        Ok(m)
    }
}

/// The words of the pool file at `path` become `words` (a crash image).
fn write_image(path: &Path, words: &[u64]) {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

/// The sampled crash images of `cp` (seeded by `seed`), each with the
/// state null recovery finds in it.
fn recover<C: Construction>(
    cp: &perdure_pm::sim::CrashPoint,
    seed: u64,
) -> Result<Vec<(Vec<u64>, Model)>, TestCaseError> {
    let mut out = Vec::new();
    for img in cp.images(IMAGES, seed).1 {
        let words = cp.materialize(&img, VolatileFill::Zeroed);
        let q = C::open(Pool::volatile_from_words(&words, Sim::default()).unwrap())
            .map_err(|e| TestCaseError::fail(format!("recovery: {e}")))?;
        let got = World::open(&q)?.read(&q)?;
        drop(q);
        out.push((words, got));
    }
    Ok(out)
}

/// Runs `steps` on construction `C` in a fresh pool file.
fn run<C: Construction>(steps: &[Step]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ds.pool");
    let open = || {
        let pool = Pool::<Sim>::open(&path, LAYOUT).unwrap();
        C::open(pool).map_err(|e| TestCaseError::fail(format!("reopening: {e}")))
    };
    let pool = Pool::create_with(&path, LAYOUT, POOL, Sim::default()).unwrap();
    let mut p = C::create(pool, 1).unwrap();
    let mut w = World::create(&p);
    let mut model = Model::new();
    for (n, step) in steps.iter().enumerate() {
        match step {
            Step::Do(op) => {
                let got = w.apply(&p, op)?;
                prop_assert_eq!(got, model.apply(op), "step {} ({:?})", n, op);
            }
            Step::Reopen => {
                drop(p);
                p = open()?;
                w = World::open(&p)?;
                let got = w.read(&p)?;
                prop_assert_eq!(&got, &model, "step {}: reopened", n);
            }
            Step::Crash(seed) => {
                let cp = C::pool(&p).backend().capture();
                let mut last = None;
                for (words, got) in recover::<C>(&cp, *seed)? {
                    prop_assert_eq!(&got, &model, "step {}: a crash image", n);
                    last = Some(words);
                }
                drop(p);
                write_image(&path, &last.expect("a crash point has an image"));
                p = open()?;
                w = World::open(&p)?;
            }
            Step::CrashDuring(op, pick, seed) => {
                let sim = C::pool(&p).backend();
                let points = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
                {
                    let points = points.clone();
                    sim.set_crash_hook(move |_, view| points.lock().unwrap().push(view.capture()));
                }
                let before = model.clone();
                let got = w.apply(&p, op)?;
                sim.clear_crash_hook();
                prop_assert_eq!(got, model.apply(op), "step {} ({:?})", n, op);
                let points = std::mem::take(&mut *points.lock().unwrap());
                let Some(cp) = points.get(*pick as usize % points.len().max(1)) else {
                    continue; // the operation issued no persistence event
                };
                let mut last = None;
                for (words, got) in recover::<C>(cp, *seed)? {
                    prop_assert!(
                        got == before || got == model,
                        "step {}: a crash during {:?} recovered {:?}, neither {:?} nor {:?}",
                        n,
                        op,
                        got,
                        before,
                        model
                    );
                    last = Some((words, got));
                }
                let (words, state) = last.expect("a crash point has an image");
                drop(p);
                write_image(&path, &words);
                p = open()?;
                w = World::open(&p)?;
                model = state;
            }
        }
    }
    let got = w.read(&p)?;
    prop_assert_eq!(&got, &model, "at the end");
    Ok(())
}

/// Runs the property on `C`, shrinking a failure to a minimal sequence.
fn property<C: Construction>() {
    let mut runner = TestRunner::new(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let steps = prop::collection::vec(step(), 1..24);
    if let Err(e) = runner.run(&steps, |steps| run::<C>(&steps)) {
        panic!("{}: {e}", C::NAME);
    }
}

common::ptms::ptm_suite!(property);
