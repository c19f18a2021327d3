//! The mutants of perdure-kv's store (perdure-pm's catalogue, group `kv`;
//! `src/mutant.rs`): each switched on in turn, the check that exists to
//! catch it run on the code as written (it must pass) and on the mutant
//! (it must fail). Prints a PERDURE-CHECK row `mutant:kv/<name>` each:
//! `pass` if caught.
//!
//! | mutant | check |
//! | --- | --- |
//! | `batch-in-two-transactions` | every Px86 crash image taken inside a 4-put batch holds all of it or none (`Sim`, RedoOpt-PTM) |
//! | `transaction-applies-on-err` | a transaction that returns `Err` leaves the store as it was |
//! | `index-split-drops-next-link` | `check` and a scan after 200 puts (the index's leaves split; the leaf chain) |
//! | `overwrite-leaves-old-node-in-index` | `check` after overwrites by values of other sizes |
//! | `batch-allocates-as-it-goes` | a batch whose last put does not fit leaves the store as it was |

#![cfg(all(feature = "mutants", not(any(perdure_loom, perdure_shuttle))))]

use perdure_harness::report::MutantTrial;
use perdure_kv::mutant::{self, Mutant};
use perdure_kv::{KvError, Store, WriteBatch};
use perdure_pm::sim::VolatileFill;
use perdure_pm::{NoFlush, Pool, Sim};
use perdure_ptm::redo::Config;
use perdure_ptm::RedoOptPtm;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

type Check = fn() -> Result<String, String>;

fn opt(size: u64) -> Store<RedoOptPtm<NoFlush>> {
    let pool = Pool::volatile("kv-mutants", size, NoFlush).unwrap();
    Store::create(RedoOptPtm::create(pool, &Config::small()).unwrap(), 0).unwrap()
}

fn contents<P: perdure_ptm::Ptm>(s: &Store<P>) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, String> {
    s.check().map_err(|e| e.to_string())?;
    Ok(s.scan_prefix(b"", usize::MAX)
        .map_err(|e| e.to_string())?
        .into_iter()
        .collect())
}

/// Every crash image of a 4-put batch (3 images per crash point) holds
/// the state before it or after it.
fn batch_is_crash_atomic() -> Result<String, String> {
    let pool = Pool::volatile("kv-mutants-sim", 2 << 20, Sim::default()).unwrap();
    let s = Store::create(RedoOptPtm::create(pool, &Config::small()).unwrap(), 0).unwrap();
    s.put(b"a", b"old").unwrap();
    let before = contents(&s)?;
    let points = Arc::new(Mutex::new(Vec::new()));
    let sim = s.ptm().pool().backend();
    {
        let points = Arc::clone(&points);
        sim.set_crash_hook(move |_, view| points.lock().unwrap().push(view.capture()));
    }
    let mut b = WriteBatch::new();
    for k in [&b"a"[..], b"b", b"c", b"d"] {
        b.put(k, b"new").unwrap();
    }
    s.write(b).map_err(|e| e.to_string())?;
    sim.clear_crash_hook();
    let after = contents(&s)?;
    let points = std::mem::take(&mut *points.lock().unwrap());
    let mut images = 0;
    for (i, cp) in points.iter().enumerate() {
        for img in cp.images(3, i as u64).1 {
            let words = cp.materialize(&img, VolatileFill::Zeroed);
            let pool = Pool::volatile_from_words(&words, Sim::default()).unwrap();
            let r = Store::open(RedoOptPtm::open(pool, &Config::small()).unwrap(), 0)
                .map_err(|e| e.to_string())?;
            let got = contents(&r)?;
            if got != before && got != after {
                return Err(format!(
                    "crash point {i}: an image holds part of the batch: {got:?}"
                ));
            }
            images += 1;
        }
    }
    Ok(format!(
        "{} crash points, {images} images, each before or after",
        points.len()
    ))
}

fn err_applies_nothing() -> Result<String, String> {
    let s = opt(8 << 20);
    s.put(b"x", b"1").unwrap();
    let r: Result<(), KvError> = s.transaction(|tx| {
        tx.put(b"x", b"2")?;
        tx.put(b"y", b"3")?;
        Err(KvError::Lost)
    });
    if !matches!(r, Err(KvError::Lost)) {
        return Err(format!("the transaction returned {r:?}"));
    }
    let got = contents(&s)?;
    let want: BTreeMap<_, _> = [(b"x".to_vec(), b"1".to_vec())].into();
    if got != want {
        return Err(format!("after an Err the store holds {got:?}"));
    }
    Ok("1 aborted transaction of 2 puts left the store as it was".into())
}

fn puts_pass_check() -> Result<String, String> {
    let s = opt(8 << 20);
    for i in 0..200u32 {
        s.put(&i.to_be_bytes(), b"v").unwrap();
    }
    let m = contents(&s)?;
    if m.len() != 200 {
        return Err(format!("a scan after 200 puts found {}", m.len()));
    }
    Ok(format!(
        "200 puts (index leaves split), check passes, a scan finds {}",
        m.len()
    ))
}

fn overwrites_pass_check() -> Result<String, String> {
    let s = opt(8 << 20);
    for i in 0..50u32 {
        s.put(&i.to_be_bytes(), b"short").unwrap();
    }
    for i in 0..50u32 {
        s.put(&i.to_be_bytes(), &[7u8; 100]).unwrap();
    }
    contents(&s).map(|m| {
        format!(
            "50 overwrites by longer values, check passes with {}",
            m.len()
        )
    })
}

fn full_batch_changes_nothing() -> Result<String, String> {
    let s = opt(1 << 20);
    let mut n = 0u32;
    while s.put(&n.to_le_bytes(), &[1u8; 1000]).is_ok() {
        n += 1;
    }
    let before = contents(&s)?;
    let mut b = WriteBatch::new();
    b.delete(&0u32.to_le_bytes()).unwrap();
    b.put(b"small", b"v").unwrap();
    b.put(b"big", &[2u8; 8000]).unwrap();
    let r = s.write(b);
    if !matches!(r, Err(KvError::Full { .. })) {
        return Err(format!("the batch returned {r:?}"));
    }
    let got = contents(&s)?;
    if got != before {
        return Err(format!(
            "a batch that did not fit changed {} entries",
            before.len().abs_diff(got.len()).max(1)
        ));
    }
    Ok(format!(
        "a batch that did not fit left {} entries as they were",
        got.len()
    ))
}

fn check_of(m: Mutant) -> Check {
    match m {
        Mutant::KvBatchInTwo => batch_is_crash_atomic,
        Mutant::KvTxnAppliesOnErr => err_applies_nothing,
        Mutant::KvIndexSplitDropsNext => puts_pass_check,
        Mutant::KvOverwriteStaleIndex => overwrites_pass_check,
        Mutant::KvBatchNoAllocFirst => full_batch_changes_nothing,
        other => panic!("{other:?} is not a kv mutant"),
    }
}

#[test]
fn every_kv_mutant_is_caught() {
    let _guard = mutant::lock();
    let mut missed = Vec::new();
    let mut n = 0;
    for m in Mutant::of("kv") {
        n += 1;
        let check = check_of(m);
        // A check that panics on the mutant has caught it too.
        let guarded = move || {
            std::panic::catch_unwind(check)
                .unwrap_or_else(|_| Err("the check panicked".to_string()))
        };
        let trial = MutantTrial::run(mutant::set, m, guarded, guarded);
        let explored = MutantTrial::first_line(&trial.baseline);
        trial.report(
            &format!("mutant:kv/{}", m.name()),
            m.name(),
            &explored,
            &mut missed,
        );
    }
    assert!(n >= 5, "the catalogue has {n} kv mutants");
    assert!(
        missed.is_empty(),
        "mutants not caught:\n{}",
        missed.join("\n")
    );
}
