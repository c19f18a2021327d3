//! Model-based property tests of every RELAX structure under every tracking
//! variant it admits: proptest generates sequences of operations with
//! reopens (a clean close: every write in NVMM) and crashes on the `Sim`
//! backend in between — between operations, and inside an update after a
//! chosen persistence event, one Px86 crash image chosen among those the
//! crash point allows — and checks each result against a sequential `std`
//! model; a failure shrinks to a minimal sequence.
//!
//! After a crash between operations the recovered structure must hold the
//! model's state (durability of what returned); after a crash inside an
//! update, the state before or after it (durable linearisability of a
//! sequential history), and the model then follows what was recovered.
//! Each recovery is lazy (the point queries first, with garbage DRAM where
//! the variant allows it), and, once traversed, the replicas of every field
//! read must agree.
//!
//! Cases per structure and variant: `PROPTEST_CASES` (default 24), from
//! `PROPTEST_RNG_SEED` (default 1). Does not
//! cover: concurrency at the crash (`crash_sim.rs`, `concurrent.rs`).

use crate::common;
use crate::crash;

#[path = "../../../perdure-pm/tests/support/sim_proptest.rs"]
mod sim_proptest;

use common::*;
use crash::{reincarnated, sim_pool, small_space, SMALL_POOL};
use perdure_pm::sim::CrashPoint;
use perdure_pm::Sim;
use perdure_relax::ds::PArray;
use perdure_relax::{Handle, Space, Tracking};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestError, TestRunner};
use sim_proptest::{image_words, runner_config};
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

/// Keys of the set operations: few, so that operations collide.
const KEYS: u64 = 12;
/// Cells of the array.
const CELLS: usize = 4;

/// One step of a generated history.
#[derive(Clone, Debug)]
enum Step<O> {
    /// An operation, checked against the model.
    Op(O),
    /// Close and reopen the pool: every write has reached NVMM.
    Reopen,
    /// A crash between operations, recovering image `image` of the point.
    Crash { image: u8 },
    /// A crash inside `op` after its `event`-th persistence event (after
    /// the operation if it has fewer), recovering image `image`.
    CrashIn { op: O, event: u8, image: u8 },
}

fn steps<O: Clone + Debug>(
    op: impl Strategy<Value = O> + Clone,
) -> impl Strategy<Value = Vec<Step<O>>> {
    let step = prop_oneof![
        8 => op.clone().prop_map(Step::Op),
        1 => Just(Step::Reopen),
        1 => (0u8..8).prop_map(|image| Step::Crash { image }),
        2 => (op, 0u8..24, 0u8..8).prop_map(|(op, event, image)| Step::CrashIn { op, event, image }),
    ];
    prop::collection::vec(step, 1..24)
}

/// A structure under test and its sequential model.
trait Subject: Copy + Debug {
    /// An operation.
    type Op: Clone + Debug;
    /// The model's state.
    type State: Clone + Debug + PartialEq;
    /// The state of a new structure.
    fn initial() -> Self::State;
    /// Creates the structure at root 0.
    fn create(self, h: &mut Handle<'_, '_, Sim>) -> Result<Self, String>;
    /// Opens it at root 0 (recovering lazily).
    fn open(self, sp: &Space<'_, Sim>) -> Result<Self, String>;
    /// Runs `op`; its result.
    fn apply(self, h: &mut Handle<'_, '_, Sim>, op: &Self::Op) -> Result<u64, String>;
    /// What `op` returns on `state`, which it updates.
    fn model(state: &mut Self::State, op: &Self::Op) -> u64;
    /// Reads the whole state (point queries first), checking that the ways
    /// of reading it agree and that the replicas of what it read agree.
    fn read(self, sp: &Space<'_, Sim>, h: &mut Handle<'_, '_, Sim>) -> Result<Self::State, String>;
}

/// A set structure of kind `.0`, once created or opened.
#[derive(Clone, Copy, Debug)]
struct Set(Kind, Option<Ds>);

impl Subject for Set {
    /// (insert, remove or contains as 0, 1, 2; key).
    type Op = (u8, u64);
    type State = BTreeSet<u64>;
    fn initial() -> BTreeSet<u64> {
        BTreeSet::new()
    }
    fn create(self, h: &mut Handle<'_, '_, Sim>) -> Result<Self, String> {
        Ok(Set(
            self.0,
            Some(Ds::create(self.0, h, 0).map_err(|e| e.to_string())?),
        ))
    }
    fn open(self, sp: &Space<'_, Sim>) -> Result<Self, String> {
        Ok(Set(
            self.0,
            Some(Ds::open(self.0, sp, 0).map_err(|e| e.to_string())?),
        ))
    }
    fn apply(self, h: &mut Handle<'_, '_, Sim>, &(o, k): &(u8, u64)) -> Result<u64, String> {
        let ds = self.1.expect("opened");
        match o {
            0 | 1 => ds.update(h, o == 0, k),
            _ => ds.contains(h, k),
        }
        .map(u64::from)
        .map_err(|e| e.to_string())
    }
    fn model(state: &mut BTreeSet<u64>, &(o, k): &(u8, u64)) -> u64 {
        u64::from(match o {
            0 | 1 => model_update(state, o == 0, k),
            _ => state.contains(&k),
        })
    }
    fn read(
        self,
        sp: &Space<'_, Sim>,
        h: &mut Handle<'_, '_, Sim>,
    ) -> Result<BTreeSet<u64>, String> {
        let ds = self.1.expect("opened");
        let err = |e: perdure_relax::RelaxError| e.to_string();
        let mut got = BTreeSet::new();
        for k in 0..KEYS {
            if ds.contains(h, k).map_err(err)? {
                got.insert(k);
            }
        }
        let keys = ds.key_set(h).map_err(err)?;
        if keys != got {
            return Err(format!("contains() says {got:?}, traversal says {keys:?}"));
        }
        let root = sp.root(0).map_err(err)?.unwrap_or(0);
        for f in traversed_fields(sp.pool(), self.0, root) {
            let (nv, d) = sp.replicas(f).map_err(err)?;
            if nv != d {
                return Err(format!("field {f:#x}: NVMM {nv:?} != DRAM {d:?}"));
            }
        }
        Ok(got)
    }
}

/// The persistent array of [`CELLS`] cells.
#[derive(Clone, Copy, Debug)]
struct Array(Option<PArray>);

/// A cell operation: store, fetch-add or load.
#[derive(Clone, Debug)]
enum CellOp {
    Store(usize, u64),
    FetchAdd(usize, u64),
    Load(usize),
}

impl Subject for Array {
    type Op = CellOp;
    type State = Vec<u64>;
    fn initial() -> Vec<u64> {
        vec![0; CELLS]
    }
    fn create(self, h: &mut Handle<'_, '_, Sim>) -> Result<Self, String> {
        Ok(Array(Some(
            PArray::create(h, 0, CELLS).map_err(|e| e.to_string())?,
        )))
    }
    fn open(self, sp: &Space<'_, Sim>) -> Result<Self, String> {
        Ok(Array(Some(PArray::open(sp, 0).map_err(|e| e.to_string())?)))
    }
    fn apply(self, h: &mut Handle<'_, '_, Sim>, op: &CellOp) -> Result<u64, String> {
        let a = self.0.expect("opened");
        let sp = h.space();
        let cell = |c: usize| a.cell(c).map_err(|e| e.to_string());
        match *op {
            CellOp::Store(c, v) => cell(c)?.store(sp, v).map(|()| 0),
            CellOp::FetchAdd(c, d) => cell(c)?.fetch_add(sp, d),
            CellOp::Load(c) => cell(c)?.load(sp),
        }
        .map_err(|e| e.to_string())
    }
    fn model(state: &mut Vec<u64>, op: &CellOp) -> u64 {
        match *op {
            CellOp::Store(c, v) => {
                state[c] = v;
                0
            }
            CellOp::FetchAdd(c, d) => {
                state[c] += d;
                state[c] - d
            }
            CellOp::Load(c) => state[c],
        }
    }
    fn read(self, sp: &Space<'_, Sim>, _: &mut Handle<'_, '_, Sim>) -> Result<Vec<u64>, String> {
        let a = self.0.expect("opened");
        (0..CELLS)
            .map(|c| {
                let v = a
                    .cell(c)
                    .and_then(|x| x.load(sp))
                    .map_err(|e| e.to_string())?;
                let (nv, d) = sp
                    .replicas(a.cell(c).unwrap().offset())
                    .map_err(|e| e.to_string())?;
                if nv != d {
                    return Err(format!("cell {c}: NVMM {nv:?} != DRAM {d:?}"));
                }
                Ok(v)
            })
            .collect()
    }
}

/// How the previous incarnation ended.
enum End<S> {
    /// Reopened or crashed between operations: the recovered state is the
    /// model's.
    Exact,
    /// Crashed inside an update: the state before or after it.
    Either(S, S),
}

/// Runs `history` on `subject` under variant `t`, one incarnation of the
/// pool after another.
fn run<S: Subject>(subject: S, t: Tracking, history: &[Step<S::Op>]) -> Result<(), TestCaseError> {
    let mut model = S::initial();
    let mut words: Option<(Vec<u64>, End<S::State>, u64)> = None;
    let mut next = 0;
    loop {
        let fresh = words.is_none();
        let pool = match &words {
            None => sim_pool(SMALL_POOL),
            Some((w, _, _)) => reincarnated(w, Sim::default()),
        };
        let sp = match &words {
            None => small_space(&pool, t),
            Some((_, _, seed)) => Space::open(&pool, base(&pool), opts(t, Some(*seed)))
                .map_err(|e| TestCaseError::fail(format!("open: {e}")))?,
        };
        let mut h = sp
            .handle()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let ds = if fresh {
            subject.create(&mut h)
        } else {
            subject.open(&sp)
        }
        .map_err(TestCaseError::fail)?;
        if let Some((_, end, _)) = words.take() {
            let got = ds.read(&sp, &mut h).map_err(TestCaseError::fail)?;
            match end {
                End::Exact => prop_assert_eq!(&got, &model, "recovered state"),
                End::Either(before, after) => {
                    prop_assert!(
                        got == before || got == after,
                        "recovered {:?}, allowed {:?} or {:?}",
                        got,
                        before,
                        after
                    );
                    model = got;
                }
            }
        }
        while words.is_none() {
            let Some(step) = history.get(next) else {
                let got = ds.read(&sp, &mut h).map_err(TestCaseError::fail)?;
                prop_assert_eq!(got, model, "final state");
                return Ok(());
            };
            next += 1;
            match step {
                Step::Op(op) => {
                    let r = ds.apply(&mut h, op).map_err(TestCaseError::fail)?;
                    prop_assert_eq!(r, S::model(&mut model, op), "{:?}", op);
                }
                Step::Reopen => break,
                Step::Crash { image } => {
                    let cp = pool.backend().capture();
                    words = Some((image_words(&cp, *image), End::Exact, u64::from(*image)));
                }
                Step::CrashIn { op, event, image } => {
                    let at = pool.backend().counts().events + 1 + u64::from(*event);
                    let point: Arc<Mutex<Option<CrashPoint>>> = Arc::default();
                    let sink = point.clone();
                    pool.backend().set_crash_hook(move |e, view| {
                        if e == at {
                            *sink.lock().unwrap() = Some(view.capture());
                        }
                    });
                    let before = model.clone();
                    let r = ds.apply(&mut h, op);
                    pool.backend().clear_crash_hook();
                    let r = r.map_err(TestCaseError::fail)?;
                    prop_assert_eq!(r, S::model(&mut model, op), "{:?}", op);
                    let cp = point.lock().unwrap().take();
                    let cp = cp.unwrap_or_else(|| pool.backend().capture());
                    let end = End::Either(before, model.clone());
                    words = Some((image_words(&cp, *image), end, u64::from(*image)));
                }
            }
        }
        if words.is_none() {
            // Reopen: a clean close, the handle dropped first.
            drop(h);
            words = Some((pool.snapshot_words(), End::Exact, 0));
        }
    }
}

/// Runs the property for `subject` under every variant of `variants`,
/// panicking with the shrunk history on a failure.
fn check<S: Subject>(subject: S, variants: &[Tracking], op: impl Strategy<Value = S::Op> + Clone) {
    for &t in variants {
        let mut runner = TestRunner::new(runner_config(24));
        match runner.run(&steps(op.clone()), |h| run(subject, t, &h)) {
            Ok(()) => {}
            Err(TestError::Fail(why, history)) => {
                panic!("{subject:?} {t:?}: {why}\nminimal history: {history:#?}")
            }
            Err(e) => panic!("{subject:?} {t:?}: {e}"),
        }
    }
}

fn set_op() -> impl Strategy<Value = (u8, u64)> + Clone {
    (0u8..3, 0..KEYS)
}

/// The list, the hash table, the skip list and the BST, each under every
/// variant it admits.
#[test]
fn every_set_matches_a_btreeset_across_reopens_and_crashes() {
    for kind in Kind::ALL {
        check(Set(kind, None), &kind.variants(), set_op());
    }
}

#[test]
fn array_matches_a_vec_across_reopens_and_crashes() {
    let op = prop_oneof![
        (0..CELLS, 0u64..1000).prop_map(|(c, v)| CellOp::Store(c, v)),
        (0..CELLS, 1u64..10).prop_map(|(c, d)| CellOp::FetchAdd(c, d)),
        (0..CELLS).prop_map(CellOp::Load),
    ];
    check(
        Array(None),
        &[Tracking::Eager, Tracking::Bitset, Tracking::PseudoBitset],
        op,
    );
}
