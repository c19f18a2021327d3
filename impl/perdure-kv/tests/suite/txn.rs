//! perdure-kv's transactions and snapshots: own writes seen, all or
//! nothing (an `Err`, a full region), serializable read-modify-writes from
//! two threads, snapshots that never see half a transaction, and random
//! transactions against a `BTreeMap` model with reopens in between.

use perdure_harness::bench::Rng;
use perdure_kv::{KvError, Store};
use perdure_pm::{NoFlush, Pool};
use perdure_ptm::redo::Config;
use perdure_ptm::{CxPtm, Ptm, RedoOptPtm, RedoPtm};
use std::collections::BTreeMap;

#[derive(Debug)]
enum Error {
    Kv(KvError),
    Abort(u32),
}

impl From<KvError> for Error {
    fn from(e: KvError) -> Error {
        Error::Kv(e)
    }
}

fn opt(name: &str, size: u64) -> Store<RedoOptPtm<NoFlush>> {
    let pool = Pool::volatile(name, size, NoFlush).unwrap();
    Store::create(RedoOptPtm::create(pool, &Config::small()).unwrap(), 0).unwrap()
}

#[test]
fn a_transaction_sees_its_own_writes_and_applies_them_together() {
    let db = opt("kv-txn-own", 8 << 20);
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"2").unwrap();
    db.put(b"c", b"3").unwrap();
    let seen = db
        .transaction(|tx| {
            tx.put(b"b", b"20")?;
            tx.delete(b"c")?;
            tx.put(b"d", b"4")?;
            let b = tx.get(b"b")?;
            let c = tx.get(b"c")?;
            let all = tx.scan_prefix(b"", 10)?;
            Ok::<_, KvError>((b, c, all))
        })
        .unwrap();
    let pairs = |v: &[(&[u8], &[u8])]| -> Vec<(Vec<u8>, Vec<u8>)> {
        v.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
    };
    let after = pairs(&[(b"a", b"1"), (b"b", b"20"), (b"d", b"4")]);
    assert_eq!(seen, (Some(b"20".to_vec()), None, after.clone()));
    assert_eq!(db.scan_prefix(b"", 10).unwrap(), after);
    assert_eq!(db.check().unwrap(), 3);
}

#[test]
fn an_err_applies_nothing_and_reaches_the_caller() {
    let db = opt("kv-txn-abort", 8 << 20);
    db.put(b"x", b"1").unwrap();
    let r: Result<(), Error> = db.transaction(|tx| {
        tx.put(b"x", b"2")?;
        tx.put(b"y", b"3")?;
        tx.delete(b"x")?;
        Err(Error::Abort(7))
    });
    assert!(matches!(r, Err(Error::Abort(7))), "{r:?}");
    assert_eq!(db.get(b"x").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"y").unwrap(), None);
    assert_eq!(db.check().unwrap(), 1);
    // Errors of the store's own reach the caller through From.
    let r: Result<(), Error> = db.transaction(|tx| {
        tx.put(&[0u8; perdure_kv::MAX_KEY_BYTES + 1], b"v")?;
        Ok(())
    });
    assert!(
        matches!(r, Err(Error::Kv(KvError::KeyTooLarge { .. }))),
        "{r:?}"
    );
}

#[test]
fn a_transaction_that_does_not_fit_applies_nothing() {
    let db = opt("kv-txn-full", 1 << 20);
    let mut n = 0u32;
    while db.put(&n.to_le_bytes(), &[1u8; 1000]).is_ok() {
        n += 1;
        assert!(n < 100_000, "the region never filled");
    }
    let before = db.check().unwrap();
    let r = db.transaction(|tx| {
        tx.delete(&0u32.to_le_bytes())?;
        tx.put(b"small", b"v")?;
        tx.put(b"big", &[2u8; 8000])?;
        Ok::<_, KvError>(())
    });
    assert!(
        matches!(r, Err(KvError::Full { needed }) if needed > 8000),
        "{r:?}"
    );
    assert_eq!(db.check().unwrap(), before);
    assert_eq!(db.get(&0u32.to_le_bytes()).unwrap(), Some(vec![1u8; 1000]));
    assert_eq!(db.get(b"small").unwrap(), None);
}

/// Read-modify-write increments of one counter from two threads: none is
/// lost (each transaction reads the value the last one wrote).
fn counters_add_up<P: Ptm + 'static>(db: Store<P>) {
    db.put(b"n", &0u64.to_le_bytes()).unwrap();
    std::thread::scope(|s| {
        for _ in 0..2 {
            let db = &db;
            s.spawn(move || {
                for _ in 0..300 {
                    db.transaction(|tx| {
                        let v = tx.get(b"n")?.ok_or(KvError::Lost)?;
                        let n = u64::from_le_bytes(v.try_into().map_err(|_| KvError::Lost)?);
                        tx.put(b"n", &(n + 1).to_le_bytes())?;
                        Ok::<_, KvError>(())
                    })
                    .unwrap();
                }
            });
        }
    });
    assert_eq!(db.get(b"n").unwrap(), Some(600u64.to_le_bytes().to_vec()));
}

#[test]
fn read_modify_writes_from_two_threads_are_serializable() {
    counters_add_up(opt("kv-txn-rmw", 8 << 20));
    let pool = Pool::volatile("kv-txn-rmw-redo", 8 << 20, NoFlush).unwrap();
    counters_add_up(Store::create(RedoPtm::create(pool, &Config::small()).unwrap(), 0).unwrap());
    let pool = Pool::volatile("kv-txn-rmw-cx", 8 << 20, NoFlush).unwrap();
    let cx = perdure_ptm::cx::Config::small();
    counters_add_up(Store::create(CxPtm::create(pool, &cx).unwrap(), 0).unwrap());
}

/// Transfers between 8 accounts keep their sum; a snapshot taken while
/// they run always sees the sum (never half a transfer).
#[test]
fn snapshots_never_see_half_a_transaction() {
    let db = opt("kv-txn-snap", 8 << 20);
    for a in 0..8u8 {
        db.put(&[b'a', a], &100u64.to_le_bytes()).unwrap();
    }
    let read = |v: Option<Vec<u8>>| -> Result<u64, KvError> {
        Ok(u64::from_le_bytes(
            v.ok_or(KvError::Lost)?
                .try_into()
                .map_err(|_| KvError::Lost)?,
        ))
    };
    std::thread::scope(|s| {
        let db = &db;
        s.spawn(move || {
            let mut r = Rng::new(3);
            for _ in 0..400 {
                let (from, to, amount) = (r.below(8) as u8, r.below(8) as u8, r.below(50));
                db.transaction(move |tx| {
                    let f = read(tx.get(&[b'a', from])?)?;
                    if f < amount || from == to {
                        return Ok(());
                    }
                    let t = read(tx.get(&[b'a', to])?)?;
                    tx.put(&[b'a', from], &(f - amount).to_le_bytes())?;
                    tx.put(&[b'a', to], &(t + amount).to_le_bytes())?;
                    Ok::<_, KvError>(())
                })
                .unwrap();
            }
        });
        s.spawn(move || {
            for _ in 0..400 {
                let sum = db
                    .snapshot(move |s| {
                        s.scan_prefix(b"a", 100)?
                            .into_iter()
                            .map(|(_, v)| read(Some(v)))
                            .sum::<Result<u64, KvError>>()
                    })
                    .unwrap();
                assert_eq!(sum, 800);
            }
        });
    });
}

/// Random transactions (puts, deletes, gets and scans checked inside
/// against the model with the transaction's own writes, some ending in
/// `Err`) against the model, the store reopened from its words every 50.
#[test]
fn random_transactions_match_the_model_across_reopens() {
    let config = Config::small();
    let mut db = opt("kv-txn-model", 16 << 20);
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut r = Rng::new(11);
    for round in 0..400 {
        let seed = r.next();
        let abort = r.below(5) == 0;
        let before = model.clone();
        // The closure replays the same choices on every run.
        let expect = std::sync::Arc::new(before.clone());
        let result: Result<BTreeMap<Vec<u8>, Vec<u8>>, Error> = db.transaction(move |tx| {
            let mut r = Rng::new(seed | 1);
            let mut m = (*expect).clone();
            for _ in 0..1 + r.below(12) {
                let k = vec![b'k', r.below(40) as u8];
                match r.below(4) {
                    0 | 1 => {
                        let v = vec![r.below(256) as u8; r.below(30) as usize];
                        tx.put(&k, &v)?;
                        m.insert(k, v);
                    }
                    2 => {
                        tx.delete(&k)?;
                        m.remove(&k);
                    }
                    _ => {
                        assert_eq!(tx.get(&k)?.as_ref(), m.get(&k));
                        let want: Vec<_> = m
                            .range(k.clone()..)
                            .take(5)
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect();
                        assert_eq!(tx.scan(&k[..].., 5)?, want);
                    }
                }
            }
            if abort {
                return Err(Error::Abort(round));
            }
            Ok(m)
        });
        match result {
            Ok(m) => model = m,
            Err(Error::Abort(n)) => assert_eq!(n, round),
            Err(e) => panic!("round {round}: {e:?}"),
        }
        let all: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(
            db.scan_prefix(b"", usize::MAX).unwrap(),
            all,
            "round {round}"
        );
        if round % 50 == 49 {
            let words = db.ptm().pool().snapshot_words();
            drop(db);
            let p = Pool::volatile_from_words(&words, NoFlush).unwrap();
            db = Store::open(RedoOptPtm::open(p, &config).unwrap(), 0).unwrap();
            assert_eq!(db.check().unwrap(), model.len() as u64);
        }
    }
}
