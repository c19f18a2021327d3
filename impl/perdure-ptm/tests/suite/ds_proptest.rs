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
//! CX-PUC's plain queue and set (`ds::plain`, the object of a CX-PUC
//! itself, changed with ordinary Rust) have the same property
//! (`plain_queue_property`, `plain_set_property`).
//!
//! After each interruption every structure passes its `check` and the whole
//! state (every key of the small key ranges, the queue drained and
//! refilled, every array entry) is compared with the model. A failure
//! shrinks to a minimal sequence. Cases per construction: 16, or
//! `PROPTEST_CASES`; sequences of up to 24 steps.

use crate::common;

use common::ptms::Construction;
use perdure_pm::sim::VolatileFill;
use perdure_pm::{Pool, Sim};
use perdure_ptm::ds::plain::{PlainQueue, PlainSet};
use perdure_ptm::ds::{HashMap, HashSet, ListSet, PArray, Queue, RbTreeSet};
use perdure_ptm::CxPuc;
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

/// A step of a generated run, with operations `O`.
#[derive(Clone, Debug)]
enum Step<O> {
    Do(O),
    Reopen,
    /// A crash after the last completed operation (image sample seed).
    Crash(u64),
    /// A crash after persistence event `pick` (mod their count) of the op.
    CrashDuring(O, u16, u64),
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

fn step<O: Clone + std::fmt::Debug + 'static>(
    op: impl Strategy<Value = O> + Clone + 'static,
) -> impl Strategy<Value = Step<O>> {
    prop_oneof![
        12 => op.clone().prop_map(Step::Do),
        1 => Just(Step::Reopen),
        1 => any::<u64>().prop_map(Step::Crash),
        2 => (op, any::<u16>(), any::<u64>()).prop_map(|(o, e, s)| Step::CrashDuring(o, e, s)),
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

/// What a run drives: a PTM `P` on a `Sim` pool file, the handles `H` of
/// the structures in it, their operations and their `std` model.
trait Subject {
    const NAME: &'static str;
    type P;
    type H;
    type Op: Clone + std::fmt::Debug + 'static;
    type Model: Clone + std::fmt::Debug + PartialEq;
    fn op() -> BoxedStrategy<Self::Op>;
    fn model() -> Self::Model;
    fn model_apply(m: &mut Self::Model, op: &Self::Op) -> Option<u64>;
    /// Formats `pool` and creates the structures.
    fn create(pool: Pool<Sim>) -> (Self::P, Self::H);
    /// Null recovery of `pool`, and the structures in it.
    fn open(pool: Pool<Sim>) -> Result<(Self::P, Self::H), TestCaseError>;
    fn pool(p: &Self::P) -> &Pool<Sim>;
    fn apply(h: &Self::H, p: &Self::P, op: &Self::Op) -> Result<Option<u64>, TestCaseError>;
    /// The whole state, after every structure passed its `check`.
    fn read(h: &Self::H, p: &Self::P) -> Result<Self::Model, TestCaseError>;
}

/// The structures of `perdure_ptm::ds` (a [`World`]) on construction `C`.
struct OnPtm<C>(std::marker::PhantomData<C>);

impl<C: Construction> Subject for OnPtm<C> {
    const NAME: &'static str = C::NAME;
    type P = C::P<Sim>;
    type H = World;
    type Op = DsOp;
    type Model = Model;
    fn op() -> BoxedStrategy<DsOp> {
        ds_op().boxed()
    }
    fn model() -> Model {
        Model::new()
    }
    fn model_apply(m: &mut Model, op: &DsOp) -> Option<u64> {
        m.apply(op)
    }
    fn create(pool: Pool<Sim>) -> (Self::P, World) {
        let p = C::create(pool, 1).unwrap();
        let w = World::create(&p);
        (p, w)
    }
    fn open(pool: Pool<Sim>) -> Result<(Self::P, World), TestCaseError> {
        let p = C::open(pool).map_err(|e| TestCaseError::fail(format!("recovery: {e}")))?;
        let w = World::open(&p)?;
        Ok((p, w))
    }
    fn pool(p: &Self::P) -> &Pool<Sim> {
        C::pool(p)
    }
    fn apply(w: &World, p: &Self::P, op: &DsOp) -> Result<Option<u64>, TestCaseError> {
        w.apply(p, op)
    }
    fn read(w: &World, p: &Self::P) -> Result<Model, TestCaseError> {
        w.read(p)
    }
}

/// A crash image's words and the state null recovery finds in it.
type Recovered<M> = (Vec<u64>, M);

/// The sampled crash images of `cp` (seeded by `seed`), recovered.
fn recover<S: Subject>(
    cp: &perdure_pm::sim::CrashPoint,
    seed: u64,
) -> Result<Vec<Recovered<S::Model>>, TestCaseError> {
    let mut out = Vec::new();
    for img in cp.images(IMAGES, seed).1 {
        let words = cp.materialize(&img, VolatileFill::Zeroed);
        let (q, h) = S::open(Pool::volatile_from_words(&words, Sim::default()).unwrap())?;
        let got = S::read(&h, &q)?;
        drop(q);
        out.push((words, got));
    }
    Ok(out)
}

/// `create`, `open` and `pool` of a [`Subject`] that is a CX-PUC object
/// (no handle: the object is the structure), with [`puc_create`] and
/// [`puc_open`].
macro_rules! puc_subject_pool {
    () => {
        fn create(pool: Pool<Sim>) -> (Self::P, ()) {
            (puc_create(pool), ())
        }
        fn open(pool: Pool<Sim>) -> Result<(Self::P, ()), TestCaseError> {
            Ok((puc_open(pool)?, ()))
        }
        fn pool(p: &Self::P) -> &Pool<Sim> {
            p.pool()
        }
    };
}

/// A CX-PUC holding `T::default()` on `pool`.
fn puc_create<T: perdure_ptm::cx::Plain + Default>(pool: Pool<Sim>) -> CxPuc<Sim, T> {
    CxPuc::create(pool, &common::cx_config(1), T::default()).unwrap()
}

/// Null recovery of the CX-PUC in `pool`.
fn puc_open<T: perdure_ptm::cx::Plain>(pool: Pool<Sim>) -> Result<CxPuc<Sim, T>, TestCaseError> {
    CxPuc::open(pool, &common::cx_config(1))
        .map_err(|e| TestCaseError::fail(format!("recovery: {e}")))
}

/// CX-PUC's plain queue (`ds::plain::PlainQueue`): the object itself.
struct PlainQ;

impl Subject for PlainQ {
    const NAME: &'static str = "CX-PUC plain queue";
    type P = CxPuc<Sim, PlainQueue>;
    type H = ();
    /// `Some(v)` enqueues `v`, `None` dequeues.
    type Op = Option<u64>;
    type Model = VecDeque<u64>;
    fn op() -> BoxedStrategy<Option<u64>> {
        prop::option::weighted(0.6, 0..1000u64).boxed()
    }
    fn model() -> VecDeque<u64> {
        VecDeque::new()
    }
    fn model_apply(m: &mut VecDeque<u64>, op: &Option<u64>) -> Option<u64> {
        match *op {
            Some(v) => {
                m.push_back(v);
                None
            }
            None => m.pop_front(),
        }
    }
    puc_subject_pool!();
    fn apply(_: &(), p: &Self::P, op: &Option<u64>) -> Result<Option<u64>, TestCaseError> {
        match *op {
            Some(v) => PlainQueue::enqueue(p, v).map(|()| None),
            None => PlainQueue::dequeue(p),
        }
        .map_err(|e| TestCaseError::fail(format!("{op:?}: {e}")))
    }
    fn read(_: &(), p: &Self::P) -> Result<VecDeque<u64>, TestCaseError> {
        let e = |e: perdure_ptm::ds::DsError| TestCaseError::fail(format!("plain queue: {e}"));
        let len = PlainQueue::check(p).map_err(e)?;
        let mut m = VecDeque::new();
        while let Some(v) = PlainQueue::dequeue(p).map_err(e)? {
            m.push_back(v);
        }
        for &v in &m {
            PlainQueue::enqueue(p, v).map_err(e)?;
        }
        prop_assert_eq!(len, m.len() as u64, "the plain queue's count");
        Ok(m)
    }
}

/// CX-PUC's plain set (`ds::plain::PlainSet`).
struct PlainS;

impl Subject for PlainS {
    const NAME: &'static str = "CX-PUC plain set";
    type P = CxPuc<Sim, PlainSet>;
    type H = ();
    /// (0 insert, 1 remove, 2 contains; key).
    type Op = (u8, u64);
    type Model = BTreeSet<u64>;
    fn op() -> BoxedStrategy<(u8, u64)> {
        (0..3u8, 0..KEYS).boxed()
    }
    fn model() -> BTreeSet<u64> {
        BTreeSet::new()
    }
    fn model_apply(m: &mut BTreeSet<u64>, &(o, k): &(u8, u64)) -> Option<u64> {
        Some(u64::from(match o {
            0 => m.insert(k),
            1 => m.remove(&k),
            _ => m.contains(&k),
        }))
    }
    puc_subject_pool!();
    fn apply(_: &(), p: &Self::P, &(o, k): &(u8, u64)) -> Result<Option<u64>, TestCaseError> {
        match o {
            0 => PlainSet::insert(p, k),
            1 => PlainSet::remove(p, k),
            _ => PlainSet::contains(p, k),
        }
        .map(|b| Some(u64::from(b)))
        .map_err(|e| TestCaseError::fail(format!("({o}, {k}): {e}")))
    }
    fn read(_: &(), p: &Self::P) -> Result<BTreeSet<u64>, TestCaseError> {
        let e = |e: perdure_ptm::ds::DsError| TestCaseError::fail(format!("plain set: {e}"));
        let len = PlainSet::check(p).map_err(e)?;
        let mut m = BTreeSet::new();
        for k in 0..KEYS {
            if PlainSet::contains(p, k).map_err(e)? {
                m.insert(k);
            }
        }
        prop_assert_eq!(len, m.len() as u64, "keys outside the model's");
        Ok(m)
    }
}

/// Runs `steps` on `S` in a fresh pool file.
fn run<S: Subject>(steps: &[Step<S::Op>]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ds.pool");
    let open = || S::open(Pool::<Sim>::open(&path, LAYOUT).unwrap());
    let pool = Pool::create_with(&path, LAYOUT, POOL, Sim::default()).unwrap();
    let (mut p, mut w) = S::create(pool);
    let mut model = S::model();
    for (n, step) in steps.iter().enumerate() {
        match step {
            Step::Do(op) => {
                let got = S::apply(&w, &p, op)?;
                prop_assert_eq!(got, S::model_apply(&mut model, op), "step {} ({:?})", n, op);
            }
            Step::Reopen => {
                drop(p);
                (p, w) = open()?;
                let got = S::read(&w, &p)?;
                prop_assert_eq!(&got, &model, "step {}: reopened", n);
            }
            Step::Crash(seed) => {
                let cp = S::pool(&p).backend().capture();
                let mut last = None;
                for (words, got) in recover::<S>(&cp, *seed)? {
                    prop_assert_eq!(&got, &model, "step {}: a crash image", n);
                    last = Some(words);
                }
                drop(p);
                write_image(&path, &last.expect("a crash point has an image"));
                (p, w) = open()?;
            }
            Step::CrashDuring(op, pick, seed) => {
                let sim = S::pool(&p).backend();
                let points = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
                {
                    let points = points.clone();
                    sim.set_crash_hook(move |_, view| points.lock().unwrap().push(view.capture()));
                }
                let before = model.clone();
                let got = S::apply(&w, &p, op)?;
                sim.clear_crash_hook();
                prop_assert_eq!(got, S::model_apply(&mut model, op), "step {} ({:?})", n, op);
                let points = std::mem::take(&mut *points.lock().unwrap());
                let Some(cp) = points.get(*pick as usize % points.len().max(1)) else {
                    continue; // the operation issued no persistence event
                };
                let mut last = None;
                for (words, got) in recover::<S>(cp, *seed)? {
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
                (p, w) = open()?;
                model = state;
            }
        }
    }
    let got = S::read(&w, &p)?;
    prop_assert_eq!(&got, &model, "at the end");
    Ok(())
}

/// Runs the property on `S`, shrinking a failure to a minimal sequence.
fn check<S: Subject>() {
    let mut runner = TestRunner::new(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let steps = prop::collection::vec(step(S::op()), 1..24);
    if let Err(e) = runner.run(&steps, |steps| run::<S>(&steps)) {
        panic!("{}: {e}", S::NAME);
    }
}

/// The property for the structures of `ds` on construction `C`.
fn property<C: Construction>() {
    check::<OnPtm<C>>();
}

common::ptms::ptm_suite!(property);

#[test]
fn plain_queue_property() {
    check::<PlainQ>();
}

#[test]
fn plain_set_property() {
    check::<PlainS>();
}
