//! Model-based property tests of perdure-kv with proptest: generated
//! sequences of puts, deletes, gets, write batches, transactions (some
//! ending in `Err`) and range scans on a store in a pool file (`Sim`
//! backend, one thread), checked step by step against a `BTreeMap`, on
//! RedoOpt-PTM, Redo-PTM and CX-PTM, with three kinds of interruption in
//! between (as `perdure-ptm`'s `tests/suite/ds_proptest.rs`):
//!
//! * **reopen**: the PTM and the pool are dropped and the file is opened
//!   again (null recovery);
//! * **crash**: a crash point of the Px86 simulator after the last
//!   completed operation; every sampled crash image must hold exactly the
//!   model's state, and the run goes on from one of them;
//! * **crash during an operation**: a crash point after one of the
//!   persistence events of an operation — a batch or a transaction of
//!   several keys included; its images must hold the state before or after
//!   the whole operation, never a part of it.
//!
//! After each interruption the store passes its `check` and its whole
//! contents equal the model. Cases per construction: 16, or
//! `PROPTEST_CASES`; sequences of up to 24 steps.

use perdure_kv::{KvError, Store, WriteBatch};
use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::{Pool, Sim};
use perdure_ptm::{CxPtm, Ptm, RedoOptPtm, RedoPtm};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};
use std::collections::BTreeMap;
use std::path::Path;

const POOL: u64 = 2 << 20;
const LAYOUT: &str = "kv-proptest";
const IMAGES: u64 = 3;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
/// A write of a batch or a transaction: a put or (`None`) a delete.
type Write = (Vec<u8>, Option<Vec<u8>>);

#[derive(Clone, Debug)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Get(Vec<u8>),
    Batch(Vec<Write>),
    /// The writes, then `Err` if the flag is set.
    Txn(Vec<Write>, bool),
    Scan(Vec<u8>, Vec<u8>, usize),
}

#[derive(Clone, Debug)]
enum Step {
    Do(Op),
    Reopen,
    Crash(u64),
    CrashDuring(Op, u16, u64),
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16)
}

/// Keys from 12 values of 1 to 12 bytes (some prefixes of others).
fn key() -> impl Strategy<Value = Vec<u8>> + Clone {
    (0..12u8).prop_map(|k| vec![b'a' + k % 3; 1 + k as usize])
}

fn value() -> impl Strategy<Value = Vec<u8>> + Clone {
    (any::<u8>(), 0..40usize).prop_map(|(b, n)| vec![b; n])
}

fn write() -> impl Strategy<Value = Write> + Clone {
    (key(), prop::option::weighted(0.7, value()))
}

fn op() -> impl Strategy<Value = Op> + Clone {
    prop_oneof![
        4 => (key(), value()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => key().prop_map(Op::Delete),
        2 => key().prop_map(Op::Get),
        2 => prop::collection::vec(write(), 1..6).prop_map(Op::Batch),
        2 => (prop::collection::vec(write(), 1..6), prop::bool::weighted(0.3))
            .prop_map(|(w, abort)| Op::Txn(w, abort)),
        1 => (key(), key(), 0..8usize).prop_map(|(a, b, n)| {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            Op::Scan(lo, hi, n)
        }),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => op().prop_map(Step::Do),
        1 => Just(Step::Reopen),
        1 => any::<u64>().prop_map(Step::Crash),
        3 => (op(), any::<u16>(), any::<u64>()).prop_map(|(o, e, s)| Step::CrashDuring(o, e, s)),
    ]
}

/// The model's answer to `op`, as text.
fn model_apply(m: &mut Model, op: &Op) -> String {
    match op {
        Op::Put(k, v) => format!("{:?}", m.insert(k.clone(), v.clone()).is_some()),
        Op::Delete(k) => format!("{:?}", m.remove(k).is_some()),
        Op::Get(k) => format!("{:?}", m.get(k)),
        Op::Batch(ws) => {
            for (k, w) in ws {
                match w {
                    Some(v) => m.insert(k.clone(), v.clone()),
                    None => m.remove(k),
                };
            }
            "()".into()
        }
        Op::Txn(ws, abort) => {
            if !*abort {
                model_apply(m, &Op::Batch(ws.clone()));
            }
            format!("{abort}")
        }
        Op::Scan(a, b, n) => {
            let v: Vec<_> = m.range(a.clone()..b.clone()).take(*n).collect();
            format!("{v:?}")
        }
    }
}

fn fail(e: KvError) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// The store's answer to `op`, as text.
fn apply<P: Ptm>(s: &Store<P>, op: &Op) -> Result<String, TestCaseError> {
    Ok(match op {
        Op::Put(k, v) => format!("{:?}", s.put(k, v).map_err(fail)?),
        Op::Delete(k) => format!("{:?}", s.delete(k).map_err(fail)?),
        Op::Get(k) => format!("{:?}", s.get(k).map_err(fail)?.as_ref()),
        Op::Batch(ws) => {
            let mut b = WriteBatch::new();
            for (k, w) in ws {
                match w {
                    Some(v) => b.put(k, v).map_err(fail)?,
                    None => b.delete(k).map_err(fail)?,
                };
            }
            s.write(b).map_err(fail)?;
            "()".into()
        }
        Op::Txn(ws, abort) => {
            let (ws, abort) = (ws.clone(), *abort);
            let r = s.transaction(move |tx| {
                for (k, w) in &ws {
                    match w {
                        Some(v) => tx.put(k, v)?,
                        None => tx.delete(k)?,
                    }
                }
                if abort {
                    return Err(KvError::Lost);
                }
                Ok(())
            });
            match r {
                Ok(()) => "false".into(),
                Err(KvError::Lost) => "true".into(),
                Err(e) => return Err(fail(e)),
            }
        }
        Op::Scan(a, b, n) => {
            let v = s.scan(&a[..]..&b[..], *n).map_err(fail)?;
            let v: Vec<(&Vec<u8>, &Vec<u8>)> = v.iter().map(|(k, v)| (k, v)).collect();
            format!("{v:?}")
        }
    })
}

/// The whole contents, after `check`.
fn read<P: Ptm>(s: &Store<P>) -> Result<Model, TestCaseError> {
    let n = s.check().map_err(fail)?;
    let all: Model = s
        .scan_prefix(b"", usize::MAX)
        .map_err(fail)?
        .into_iter()
        .collect();
    prop_assert_eq!(n, all.len() as u64);
    Ok(all)
}

/// A construction the property runs on.
trait Construction {
    const NAME: &'static str;
    type P: Ptm + 'static;
    fn create(pool: Pool<Sim>) -> Self::P;
    fn open(pool: Pool<Sim>) -> Self::P;
    fn pool(p: &Store<Self::P>) -> &Pool<Sim>;
}

macro_rules! construction {
    ($ty:ident, $name:literal, $ptm:ty, $config:expr) => {
        struct $ty;
        impl Construction for $ty {
            const NAME: &'static str = $name;
            type P = $ptm;
            fn create(pool: Pool<Sim>) -> $ptm {
                <$ptm>::create(pool, &$config).unwrap()
            }
            fn open(pool: Pool<Sim>) -> $ptm {
                <$ptm>::open(pool, &$config).unwrap()
            }
            fn pool(s: &Store<$ptm>) -> &Pool<Sim> {
                s.ptm().pool()
            }
        }
    };
}

fn redo_config() -> perdure_ptm::redo::Config {
    perdure_ptm::redo::Config {
        threads: 2,
        ..perdure_ptm::redo::Config::small()
    }
}

fn cx_config() -> perdure_ptm::cx::Config {
    perdure_ptm::cx::Config {
        threads: 2,
        ..perdure_ptm::cx::Config::small()
    }
}

construction!(OnRedoOpt, "redo-opt", RedoOptPtm<Sim>, redo_config());
construction!(OnRedo, "redo", RedoPtm<Sim>, redo_config());
construction!(OnCx, "cx-ptm", CxPtm<Sim>, cx_config());

fn write_image(path: &Path, words: &[u64]) {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

/// The sampled images of `cp`, each recovered: its words and contents.
fn recover<C: Construction>(
    cp: &CrashPoint,
    seed: u64,
) -> Result<Vec<(Vec<u64>, Model)>, TestCaseError> {
    let mut out = Vec::new();
    for img in cp.images(IMAGES, seed).1 {
        let words = cp.materialize(&img, VolatileFill::Zeroed);
        let pool = Pool::volatile_from_words(&words, Sim::default()).unwrap();
        let s = Store::open(C::open(pool), 0).map_err(fail)?;
        out.push((words, read(&s)?));
    }
    Ok(out)
}

fn run<C: Construction>(steps: &[Step]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.pool");
    let open = || -> Result<Store<C::P>, TestCaseError> {
        Store::open(C::open(Pool::<Sim>::open(&path, LAYOUT).unwrap()), 0).map_err(fail)
    };
    let pool = Pool::create_with(&path, LAYOUT, POOL, Sim::default()).unwrap();
    let mut s = Store::create(C::create(pool), 0).map_err(fail)?;
    let mut model = Model::new();
    for (n, step) in steps.iter().enumerate() {
        match step {
            Step::Do(op) => {
                let got = apply(&s, op)?;
                prop_assert_eq!(got, model_apply(&mut model, op), "step {} ({:?})", n, op);
            }
            Step::Reopen => {
                drop(s);
                s = open()?;
                prop_assert_eq!(&read(&s)?, &model, "step {}: reopened", n);
            }
            Step::Crash(seed) => {
                let cp = C::pool(&s).backend().capture();
                let mut last = None;
                for (words, got) in recover::<C>(&cp, *seed)? {
                    prop_assert_eq!(&got, &model, "step {}: a crash image", n);
                    last = Some(words);
                }
                drop(s);
                write_image(&path, &last.expect("a crash point has an image"));
                s = open()?;
            }
            Step::CrashDuring(op, pick, seed) => {
                let sim = C::pool(&s).backend();
                let points = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
                {
                    let points = points.clone();
                    sim.set_crash_hook(move |_, view| points.lock().unwrap().push(view.capture()));
                }
                let before = model.clone();
                let got = apply(&s, op)?;
                sim.clear_crash_hook();
                prop_assert_eq!(got, model_apply(&mut model, op), "step {} ({:?})", n, op);
                let points = std::mem::take(&mut *points.lock().unwrap());
                let Some(cp) = points.get(*pick as usize % points.len().max(1)) else {
                    continue; // a read, or a write that changed nothing
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
                drop(s);
                write_image(&path, &words);
                s = open()?;
                model = state;
            }
        }
    }
    prop_assert_eq!(&read(&s)?, &model, "at the end");
    Ok(())
}

fn check<C: Construction>() {
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

#[test]
fn redo_opt_property() {
    check::<OnRedoOpt>();
}

#[test]
fn redo_property() {
    check::<OnRedo>();
}

#[test]
fn cx_ptm_property() {
    check::<OnCx>();
}
