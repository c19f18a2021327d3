//! Every PTM, one thread, through the shared `Ptm` interface: sequential
//! semantics (a counter, an array, allocation and free, roots, typed
//! results), nested transactions, panics in closures, handles and thread
//! ids, published reads (Algorithm 2 {1} / CX's R{2}), and reopening a pool
//! file; each test once per construction (`common::ptms`). What only one
//! construction has is in `cx_basic.rs` (CX-PUC's plain value, the window)
//! and `redo_variants.rs`.

use crate::common;

use common::ptms::{increment, ptm_suite, Construction};
use perdure_pm::{Msync, NoFlush, PmError, Pool};
use perdure_ptm::Front;
use perdure_ptm::{PPtr, PVar, Ptm, PtmError, Transaction, TxRead};
use std::sync::Arc;

fn ptm<C: Construction>(threads: usize) -> C::P<NoFlush> {
    C::volatile(threads, 1 << 20, NoFlush)
}

fn a_counter_counts<C: Construction>() {
    let p = ptm::<C>(2);
    for i in 1..=200u64 {
        assert_eq!(increment(&p), i, "each increment returns the new value");
    }
    let n: u64 = p.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0)))).unwrap();
    assert_eq!(n, 200);
    C::check_counter_stats(&p, 200);
}

fn an_array_allocation_and_free<C: Construction>() {
    let p = ptm::<C>(1);
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
            let c = matches!(tx.alloc(u64::MAX), Err(PtmError::Pm(PmError::Region(_)))) as u64;
            let d = matches!(tx.alloc(1 << 40), Err(PtmError::Pm(PmError::Region(_)))) as u64;
            a + b + c + d
        })
        .unwrap();
    assert_eq!(errs, 4);
}

fn the_trait_interface<C: Construction>() {
    fn bump<P: Ptm>(p: &P) -> u64 {
        p.update_tx(|tx| {
            let v = tx.root(5) + 1;
            tx.set_root(5, v);
            v
        })
        .unwrap()
    }
    let p = ptm::<C>(1);
    assert_eq!(bump(&p), 1);
    assert_eq!(bump(&p), 2);
}

fn typed_results_round_trip<C: Construction>() {
    let p = ptm::<C>(1);
    assert!(p.update_tx(|_| true).unwrap());
    assert_eq!(p.update_tx(|_| -5i64).unwrap(), -5);
    assert_eq!(p.update_tx(|_| u64::MAX).unwrap(), u64::MAX);
    p.update_tx(|_| ()).unwrap();
    assert_eq!(
        p.read_tx(|_| PPtr::<u8>::from_offset(4096)).unwrap(),
        PPtr::from_offset(4096)
    );
    assert_eq!(p.read_tx(|tx| tx.region_len()).unwrap(), C::region_len(&p));
}

fn nested_transactions_flatten<C: Construction>() {
    let p = Arc::new(ptm::<C>(2));
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
            let r3: u64 = Front::handle(&*inner).unwrap().read_tx(|t| t.root(3));
            r * 100 + r2 * 10 + r3
        })
        .unwrap();
    assert_eq!(seen, 7 * 100 + 8 * 10 + 7);
    assert_eq!(p.read_tx(|t| t.root(4)).unwrap(), 8);
    assert_eq!(C::commits(&p), 1, "one transaction, not three");
    // An update inside a read is refused.
    let inner = p.clone();
    let refused: bool = p
        .read_tx(move |_| matches!(inner.update_tx(|_| ()), Err(PtmError::UpdateInReadTx)))
        .unwrap();
    assert!(refused);
}

fn a_panicking_closure_is_rolled_back<C: Construction>() {
    let p = ptm::<C>(2);
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
    let len = C::region_len(&p);
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
    assert_eq!(b - a, 128, "no block leaked by the panicked transaction");
    assert_eq!(p.read_tx(|t| t.root(0)).unwrap(), 1);
}

fn handles_and_thread_ids<C: Construction>() {
    let p = ptm::<C>(2);
    let a = Front::handle(&p).unwrap();
    let b = Front::handle(&p).unwrap();
    assert_ne!(a.tid(), b.tid());
    assert!(matches!(
        Front::handle(&p),
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
    let c = Front::handle(&p).unwrap();
    assert_ne!(c.tid(), b.tid());
    assert!(matches!(
        p.update_tx(|_| ()),
        Err(PtmError::TooManyThreads { .. })
    ));
}

fn a_pool_file_survives_closing<C: Construction>() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ptm.pool");
    {
        let pool: Pool<Msync> = Pool::create(&path, "ptm-test", 1 << 20).unwrap();
        let p = C::create(pool, 3).unwrap();
        for _ in 0..10 {
            increment(&p);
        }
    }
    for round in 1..=3u64 {
        let pool: Pool<Msync> = Pool::open(&path, "ptm-test").unwrap();
        let p = C::open(pool).unwrap();
        assert_eq!(C::threads(&p), 3, "the thread count comes from the pool");
        assert_eq!(increment(&p), 10 + round);
    }
    // The wrong program for the file: perdure-pm's layout check.
    assert!(matches!(
        Pool::<Msync>::open(&path, "other-layout"),
        Err(perdure_pm::PoolError::LayoutMismatch { .. })
    ));
}

fn published_reads_then_updates<C: Construction>() {
    // max_read_tries = 0: every read publishes itself (Algorithm 2 {1};
    // CX's R{2}) before trying the designated replica, then usually
    // completes on its own, leaving its request unapplied. The thread's
    // next update must still run (with the seed's toggling announce bit,
    // Redo's would look applied already).
    let pool = Pool::volatile("ptm-pub", 1 << 20, NoFlush).unwrap();
    let p = C::create_with(pool, 2, 0).unwrap();
    let h = Front::handle(&p).unwrap();
    for i in 1..=20u64 {
        assert_eq!(h.read_tx(|tx| tx.root(0)), i - 1);
        let n: u64 = h.update_tx(|tx| {
            let n = tx.root(0) + 1;
            tx.set_root(0, n);
            n
        });
        assert_eq!(n, i, "update {i} after a published read");
    }
    assert_eq!(C::reads_published(&p), 20);
    assert_eq!(C::commits(&p), 20);
}

ptm_suite!(
    a_counter_counts,
    an_array_allocation_and_free,
    typed_results_round_trip,
    the_trait_interface,
    nested_transactions_flatten,
    a_panicking_closure_is_rolled_back,
    handles_and_thread_ids,
    a_pool_file_survives_closing,
    published_reads_then_updates,
);
