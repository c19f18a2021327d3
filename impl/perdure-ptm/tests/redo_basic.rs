//! Redo-PTM, one thread: sequential semantics (a counter, a small array,
//! allocation and free, roots, typed results), nested transactions, panics
//! in closures, and reopening a pool file; every test once per variant
//! (Redo-PTM, RedoTimed-PTM, RedoOpt-PTM: `redo::`, `timed::`, `opt::`).

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

use perdure_pm::{Msync, NoFlush, Pool};
use perdure_ptm::redo::{Config, RedoPtm, Variant};
use perdure_ptm::{PPtr, PVar, Ptm, PtmError, Transaction, TxRead};
use std::sync::Arc;

mod common;

fn ptm(threads: usize, v: Variant) -> RedoPtm<NoFlush> {
    common::redo_v(threads, 1 << 20, NoFlush, v)
}

/// The counter at root 0, allocated on first use.
fn counter<T: Transaction>(tx: &T) -> PVar<u64> {
    if tx.root(0) == 0 {
        let c = tx.alloc_zeroed(8).expect("room for a counter");
        tx.set_root(0, c);
    }
    PVar::at(tx.root(0))
}

/// Increments the counter at root 0; returns the new value.
fn increment<B: perdure_pm::Backend>(p: &RedoPtm<B>) -> u64 {
    p.update_tx(|tx| {
        let c = counter(tx);
        let n = tx.get(c) + 1;
        tx.set(c, n);
        n
    })
    .unwrap()
}

fn a_counter_counts(v: Variant) {
    let p = ptm(2, v);
    for i in 1..=200u64 {
        assert_eq!(increment(&p), i, "each increment returns the new value");
    }
    let n: u64 = p.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0)))).unwrap();
    assert_eq!(n, 200);
    let s = p.stats();
    assert_eq!(s.commits, 200);
    assert_eq!(s.rollbacks, 0);
    assert!(s.reads_direct >= 1);
    // The trait's event counters are the same statistics, by name.
    let ev = Ptm::events(&p);
    let get = |k: &str| ev.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    assert_eq!(get("copies"), Some(s.copies));
    assert_eq!(get("replays"), Some(s.replays));
    assert_eq!(get("rollbacks"), Some(0));
    assert!(
        s.copies + s.replays >= 199,
        "every commit after the first brings its replica up to date: {s:?}"
    );
}

fn an_array_allocation_and_free(v: Variant) {
    let p = ptm(2, v);
    const LEN: u64 = 16;
    let arr: PPtr<[u64]> = p
        .update_tx(|tx| {
            let a = tx.alloc_obj::<[u64]>(8 * LEN).unwrap();
            for i in 0..LEN {
                tx.set(a.field::<u64>(8 * i), i * i);
            }
            tx.set_root(1, a.offset());
            a
        })
        .unwrap();
    assert!(!arr.is_null() && arr.offset() % 16 == 0);
    // Reverse it in one transaction; read it back in another.
    p.update_tx(|tx| {
        let a = tx.root_ptr::<[u64]>(1);
        for i in 0..LEN / 2 {
            let (x, y) = (a.field::<u64>(8 * i), a.field::<u64>(8 * (LEN - 1 - i)));
            let (vx, vy) = (tx.get(x), tx.get(y));
            tx.set(x, vy);
            tx.set(y, vx);
        }
    })
    .unwrap();
    for i in 0..LEN {
        let v: u64 = p
            .read_tx(move |tx| tx.get(tx.root_ptr::<[u64]>(1).field::<u64>(8 * i)))
            .unwrap();
        assert_eq!(v, (LEN - 1 - i) * (LEN - 1 - i));
    }
    // Free it; the allocator hands the same block out again.
    p.update_tx(|tx| {
        tx.free(tx.root(1)).unwrap();
        tx.set_root(1, 0);
    })
    .unwrap();
    let again: u64 = p.update_tx(|tx| tx.alloc(8 * LEN).unwrap()).unwrap();
    assert_eq!(again, arr.offset());
    // Bad frees and impossible allocations are errors inside the closure.
    let errs: u64 = p
        .update_tx(|tx| {
            let a = tx.free(12345).is_err() as u64;
            let b = tx.free(0).is_err() as u64;
            let c = matches!(tx.alloc(u64::MAX), Err(PtmError::Alloc(_))) as u64;
            let d = matches!(tx.alloc(1 << 40), Err(PtmError::Alloc(_))) as u64;
            a + b + c + d
        })
        .unwrap();
    assert_eq!(errs, 4);
}

fn typed_results_round_trip(v: Variant) {
    let p = ptm(1, v);
    assert!(p.update_tx(|_| true).unwrap());
    assert_eq!(p.update_tx(|_| -5i64).unwrap(), -5);
    assert_eq!(p.update_tx(|_| u64::MAX).unwrap(), u64::MAX);
    p.update_tx(|_| ()).unwrap();
    assert_eq!(
        p.read_tx(|_| PPtr::<u8>::from_offset(4096)).unwrap(),
        PPtr::from_offset(4096)
    );
    assert_eq!(p.read_tx(|tx| tx.region_len()).unwrap(), p.region_len());
}

fn nested_transactions_flatten(v: Variant) {
    let p = Arc::new(ptm(2, v));
    let inner = p.clone();
    let seen: u64 = p
        .update_tx(move |tx| {
            tx.set_root(3, 7);
            // A nested update runs inline, in this transaction.
            let r: u64 = inner
                .update_tx(|tx2| {
                    let v = tx2.root(3);
                    tx2.set_root(4, v + 1);
                    v
                })
                .unwrap();
            // A nested read sees this transaction's stores.
            let r2: u64 = inner.read_tx(|t| t.root(4)).unwrap();
            // So does a nested call through a handle taken inside.
            let r3: u64 = inner.handle().unwrap().read_tx(|t| t.root(3));
            r * 100 + r2 * 10 + r3
        })
        .unwrap();
    assert_eq!(seen, 7 * 100 + 8 * 10 + 7);
    assert_eq!(p.read_tx(|t| t.root(4)).unwrap(), 8);
    assert_eq!(p.stats().commits, 1, "one transaction, not three");
    // An update inside a read is refused.
    let inner = p.clone();
    let refused: bool = p
        .read_tx(move |_| matches!(inner.update_tx(|_| ()), Err(PtmError::UpdateInReadTx)))
        .unwrap();
    assert!(refused);
}

fn a_panicking_closure_is_rolled_back(v: Variant) {
    let p = ptm(2, v);
    p.update_tx(|tx| tx.set_root(0, 1)).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.update_tx(|tx| -> () {
            tx.set_root(0, 2);
            tx.alloc(64).unwrap();
            panic!("deliberate");
        })
    }));
    assert!(r.is_err(), "the submitter panics");
    assert_eq!(p.read_tx(|t| t.root(0)).unwrap(), 1, "stores undone");
    // An access outside the region panics the same way; try_load reports it.
    let len = p.region_len();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.update_tx(move |tx| tx.load(len))
    }));
    assert!(r.is_err());
    let e: bool = p
        .read_tx(move |tx| {
            matches!(tx.try_load(len), Err(PtmError::BadOffset { .. }))
                && matches!(tx.try_load(3), Err(PtmError::BadOffset { .. }))
        })
        .unwrap();
    assert!(e);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.read_tx(|_| -> u64 { panic!("deliberate read") })
    }));
    assert!(r.is_err());
    // Still works, and the allocation of the panicked closure was undone.
    let a: u64 = p.update_tx(|tx| tx.alloc(64).unwrap()).unwrap();
    let b: u64 = p.update_tx(|tx| tx.alloc(64).unwrap()).unwrap();
    assert_eq!(
        b - a,
        128,
        "no block was leaked by the panicked transaction"
    );
    assert_eq!(p.read_tx(|t| t.root(0)).unwrap(), 1);
}

fn the_trait_interface(v: Variant) {
    fn bump<P: Ptm>(p: &P) -> u64 {
        p.update_tx(|tx| {
            let v = tx.root(5) + 1;
            tx.set_root(5, v);
            v
        })
        .unwrap()
    }
    let p = ptm(1, v);
    assert_eq!(bump(&p), 1);
    assert_eq!(bump(&p), 2);
}

fn handles_and_thread_ids(v: Variant) {
    let p = ptm(2, v);
    let a = p.handle().unwrap();
    let b = p.handle().unwrap();
    assert_ne!(a.tid(), b.tid());
    assert!(matches!(
        p.handle(),
        Err(PtmError::TooManyThreads { max: 2 })
    ));
    assert!(
        matches!(p.update_tx(|_| ()), Err(PtmError::TooManyThreads { .. })),
        "the implicit lease needs a free id too"
    );
    a.update_tx(|tx| tx.set_root(0, 41));
    assert_eq!(b.update_tx(|tx| tx.root(0) + 1), 42);
    drop(a);
    p.update_tx(|_| ()).unwrap();
    assert_eq!(p.read_tx(|t| t.root(0)).unwrap(), 41);
    // Giving a lease back by hand: not from inside a transaction, then
    // the id is free for the other handle's successor at once.
    assert!(p
        .update_tx(|_| perdure_ptm::release_thread_ids().is_none())
        .unwrap());
    assert_eq!(perdure_ptm::release_thread_ids(), Some(1));
    assert_eq!(perdure_ptm::release_thread_ids(), Some(0));
    let c = p.handle().unwrap();
    assert_ne!(c.tid(), b.tid());
    assert!(matches!(
        p.update_tx(|_| ()),
        Err(PtmError::TooManyThreads { .. })
    ));
}

fn a_pool_file_survives_closing(v: Variant) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("redo.pool");
    let config = Config {
        threads: 3,
        variant: v,
        ..Config::small()
    };
    {
        let pool: Pool<Msync> = Pool::create(&path, "redo-test", 1 << 20).unwrap();
        let p = RedoPtm::create(pool, &config).unwrap();
        for _ in 0..10 {
            increment(&p);
        }
    }
    for round in 1..=3u64 {
        let pool: Pool<Msync> = Pool::open(&path, "redo-test").unwrap();
        let p = RedoPtm::open(
            pool,
            &Config {
                variant: v,
                ..Config::default()
            },
        )
        .unwrap();
        assert_eq!(p.threads(), 3, "the thread count comes from the pool");
        assert_eq!(increment(&p), 10 + round);
    }
    // The wrong program for the file: perdure-pm's layout check.
    assert!(matches!(
        Pool::<Msync>::open(&path, "other-layout"),
        Err(perdure_pm::PoolError::LayoutMismatch { .. })
    ));
}

fn a_published_read_then_an_update(v: Variant) {
    // max_read_tries = 0: every read publishes itself (Algorithm 2 {1})
    // before trying the designated replica, then usually completes on its
    // own, leaving its request unapplied. The thread's next update must
    // still run: with the seed's toggling announce bit it would look
    // applied already.
    let pool = Pool::volatile("redo-pub", 1 << 20, NoFlush).unwrap();
    let config = Config {
        threads: 2,
        max_read_tries: 0,
        variant: v,
        ..Config::small()
    };
    let p = RedoPtm::create(pool, &config).unwrap();
    let h = p.handle().unwrap();
    for i in 1..=20u64 {
        assert_eq!(h.read_tx(|tx| tx.root(0)), i - 1);
        let n: u64 = h.update_tx(|tx| {
            let n = tx.root(0) + 1;
            tx.set_root(0, n);
            n
        });
        assert_eq!(n, i, "update {i} after a published read");
    }
    let s = p.stats();
    assert_eq!(s.reads_published, 20);
    assert_eq!(s.commits, 20);
}

common::redo_variant_tests!(
    a_counter_counts,
    an_array_allocation_and_free,
    typed_results_round_trip,
    nested_transactions_flatten,
    a_panicking_closure_is_rolled_back,
    the_trait_interface,
    handles_and_thread_ids,
    a_pool_file_survives_closing,
    a_published_read_then_an_update,
);
