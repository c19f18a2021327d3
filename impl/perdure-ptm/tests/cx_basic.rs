//! CX-PTM and CX-PUC, one thread: sequential semantics through the shared
//! `Ptm` interface (a counter, an array, allocation and free, roots, typed
//! results, nesting, panics, handles, published reads, reopening a pool
//! file), CX-PUC's plain value (a stack of `#[repr(C)]` nodes changed with
//! ordinary Rust), and the reclamation window (nodes disposed of, replicas
//! invalidated and copied, memory bounded).

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod common;

use perdure_pm::{Backend, Msync, NoFlush, Pool};
use perdure_ptm::cx::zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
use perdure_ptm::cx::{Config, CxStats};
use perdure_ptm::front::Front;
use perdure_ptm::{CxPtm, CxPuc, PPtr, PVar, Ptm, PtmError, Transaction, TxRead};
use std::sync::Arc;

/// CX-PUC's object in these tests: a stack of [`Node`]s and its length.
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[zerocopy(crate = "perdure_ptm::cx::zerocopy")]
#[repr(C)]
struct Stack {
    top: u64,
    len: u64,
}

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[zerocopy(crate = "perdure_ptm::cx::zerocopy")]
#[repr(C)]
struct Node {
    value: u64,
    next: u64,
}

fn ptm(threads: usize) -> CxPtm<NoFlush> {
    common::cx(threads, 1 << 20, NoFlush)
}

fn puc(threads: usize) -> CxPuc<NoFlush, Stack> {
    common::puc(threads, 1 << 20, NoFlush)
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
fn increment<P: Ptm>(p: &P) -> u64 {
    p.update_tx(|tx| {
        let c = counter(tx);
        let n = tx.get(c) + 1;
        tx.set(c, n);
        n
    })
    .unwrap()
}

fn a_counter_counts<P: Ptm>(p: &P, stats: impl Fn(&P) -> CxStats) {
    for i in 1..=200u64 {
        assert_eq!(increment(p), i, "each increment returns the new value");
    }
    let n: u64 = p.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0)))).unwrap();
    assert_eq!(n, 200);
    let s = stats(p);
    assert_eq!(s.commits, 200);
    // One thread alternates between two replicas: each update runs the
    // other replica's last closure and its own.
    assert!(s.applied <= 2 * 200, "{s:?}");
    assert!(s.reads_direct >= 1);
    assert_eq!(s.helped, 0);
}

#[test]
fn a_counter_counts_on_cx_ptm() {
    a_counter_counts(&ptm(2), |p| p.stats());
}

#[test]
fn a_counter_counts_on_cx_puc() {
    a_counter_counts(&puc(2), |p| p.stats());
}

fn an_array_allocation_and_free<P: Ptm>(p: &P) {
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
    let sum_of_moved: u64 = p
        .read_tx(|tx| {
            let a = tx.root_ptr::<[u64]>(1);
            (0..LEN)
                .map(|i| u64::from(tx.get(a.field::<u64>(8 * i)) == (LEN - 1 - i).pow(2)))
                .sum()
        })
        .unwrap();
    assert_eq!(sum_of_moved, LEN, "the array was reversed");
    p.update_tx(|tx| {
        tx.free(tx.root(1)).unwrap();
        tx.set_root(1, 0);
    })
    .unwrap();
    let again: u64 = p.update_tx(|tx| tx.alloc(8 * LEN).unwrap()).unwrap();
    assert_eq!(again, arr.offset(), "the freed block is handed out again");
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
    assert!(p.update_tx(|_| true).unwrap());
    assert_eq!(p.update_tx(|_| -5i64).unwrap(), -5);
    assert_eq!(p.update_tx(|_| u64::MAX).unwrap(), u64::MAX);
}

#[test]
fn an_array_allocation_and_free_on_both() {
    an_array_allocation_and_free(&ptm(1));
    an_array_allocation_and_free(&puc(1));
}

fn nested_transactions_flatten<P: Ptm + Front + 'static>(p: Arc<P>, commits: impl Fn(&P) -> u64) {
    let inner = p.clone();
    let seen: u64 = p
        .update_tx(move |tx| {
            tx.set_root(3, 7);
            let r: u64 = inner
                .update_tx(|tx2| {
                    let v = tx2.root(3);
                    tx2.set_root(4, v + 1);
                    v
                })
                .unwrap();
            let r2: u64 = inner.read_tx(|t| t.root(4)).unwrap();
            let r3: u64 = Front::handle(&*inner).unwrap().read_tx(|t| t.root(3));
            r * 100 + r2 * 10 + r3
        })
        .unwrap();
    assert_eq!(seen, 7 * 100 + 8 * 10 + 7);
    assert_eq!(p.read_tx(|t| t.root(4)).unwrap(), 8);
    assert_eq!(commits(&p), 1, "one transaction, not three");
    let inner = p.clone();
    let refused: bool = p
        .read_tx(move |_| matches!(inner.update_tx(|_| ()), Err(PtmError::UpdateInReadTx)))
        .unwrap();
    assert!(refused);
}

#[test]
fn nested_transactions_flatten_on_both() {
    nested_transactions_flatten(Arc::new(ptm(2)), |p| p.stats().commits);
    nested_transactions_flatten(Arc::new(puc(2)), |p| p.stats().commits);
}

#[test]
fn the_plain_value_refuses_nesting() {
    let p = Arc::new(puc(2));
    let inner = p.clone();
    let refused: u64 = p
        .update(move |_| {
            let a = matches!(inner.update_tx(|_| ()), Err(PtmError::NestedInPlainTx));
            let b = matches!(inner.read_tx(|_| ()), Err(PtmError::NestedInPlainTx));
            let c = matches!(inner.update(|_| ()), Err(PtmError::NestedInPlainTx));
            u64::from(a) + u64::from(b) + u64::from(c)
        })
        .unwrap();
    assert_eq!(refused, 3);
}

fn a_panicking_closure_is_rolled_back<P: Ptm>(p: &P) {
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
    let e: bool = p
        .read_tx(|tx| {
            let len = tx.region_len();
            matches!(tx.try_load(len), Err(PtmError::BadOffset { .. }))
                && matches!(tx.try_load(3), Err(PtmError::BadOffset { .. }))
        })
        .unwrap();
    assert!(e);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.read_tx(|_| -> u64 { panic!("deliberate read") })
    }));
    assert!(r.is_err());
    let a: u64 = p.update_tx(|tx| tx.alloc(64).unwrap()).unwrap();
    let b: u64 = p.update_tx(|tx| tx.alloc(64).unwrap()).unwrap();
    assert_eq!(b - a, 128, "no block leaked by the panicked transaction");
    assert_eq!(p.read_tx(|t| t.root(0)).unwrap(), 1);
}

#[test]
fn a_panicking_closure_is_rolled_back_on_both() {
    a_panicking_closure_is_rolled_back(&ptm(2));
    a_panicking_closure_is_rolled_back(&puc(2));
}

#[test]
fn handles_and_thread_ids() {
    let p = ptm(2);
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
}

fn published_reads_then_updates<P: Ptm + Front>(p: &P, stats: impl Fn(&P) -> CxStats) {
    // max_read_tries = 0: every read enqueues itself (R{2}) before trying
    // the designated replica, and usually completes on its own; its node
    // stays in the queue and is run by the next update.
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
    let s = stats(p);
    assert_eq!(s.reads_published, 20);
    assert_eq!(s.commits, 20);
}

#[test]
fn published_reads_then_updates_on_both() {
    let config = Config {
        max_read_tries: 0,
        ..common::cx_config(2)
    };
    let pool = Pool::volatile("cx-pub", 1 << 20, NoFlush).unwrap();
    published_reads_then_updates(&CxPtm::create(pool, &config).unwrap(), |p| p.stats());
    let pool = Pool::volatile("cx-pub", 1 << 20, NoFlush).unwrap();
    let q = CxPuc::create(pool, &config, Stack::default()).unwrap();
    published_reads_then_updates(&q, |p| p.stats());
}

fn a_pool_file_survives_closing<P: Ptm>(
    create: impl Fn(Pool<Msync>) -> P,
    open: impl Fn(Pool<Msync>) -> P,
    threads: impl Fn(&P) -> usize,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cx.pool");
    {
        let pool: Pool<Msync> = Pool::create(&path, "cx-test", 1 << 20).unwrap();
        let p = create(pool);
        for _ in 0..10 {
            increment(&p);
        }
    }
    for round in 1..=3u64 {
        let pool: Pool<Msync> = Pool::open(&path, "cx-test").unwrap();
        let p = open(pool);
        assert_eq!(threads(&p), 3, "the thread count comes from the pool");
        assert_eq!(increment(&p), 10 + round);
    }
}

#[test]
fn a_pool_file_survives_closing_on_both() {
    let config = common::cx_config(3);
    a_pool_file_survives_closing(
        |pool| CxPtm::create(pool, &config).unwrap(),
        |pool| CxPtm::open(pool, &Config::default()).unwrap(),
        |p| p.threads(),
    );
    a_pool_file_survives_closing(
        |pool| CxPuc::create(pool, &config, Stack::default()).unwrap(),
        |pool| CxPuc::<_, Stack>::open(pool, &Config::default()).unwrap(),
        |p| p.threads(),
    );
}

/// Pushes `v` with plain Rust on the stack object.
fn push<B: Backend>(p: &CxPuc<B, Stack>, v: u64) -> u64 {
    p.update(move |m| {
        let next = m.obj().top;
        let node = m.alloc_value(Node { value: v, next }).unwrap();
        let s = m.obj_mut();
        s.top = node;
        s.len += 1;
        s.len
    })
    .unwrap()
}

/// Pops with plain Rust; `u64::MAX` if empty.
fn pop<B: Backend>(p: &CxPuc<B, Stack>) -> u64 {
    p.update(|m| {
        let top = m.obj().top;
        if top == 0 {
            return u64::MAX;
        }
        let node = *m.get::<Node>(top).unwrap();
        *m.obj_mut() = Stack {
            top: node.next,
            len: m.obj().len - 1,
        };
        m.free(top).unwrap();
        node.value
    })
    .unwrap()
}

#[test]
fn the_plain_value_is_ordinary_rust() {
    let p = puc(2);
    for v in 1..=50 {
        assert_eq!(push(&p, v * 10), v);
    }
    for v in (41..=50).rev() {
        assert_eq!(pop(&p), v * 10);
    }
    // Reads see the object and follow offsets with plain references.
    let (len, sum): (u64, u64) = {
        let w: u64 = p
            .read(|r| {
                let mut sum = 0;
                let mut cur = r.obj().top;
                while cur != 0 {
                    let n: &Node = r.get(cur).unwrap();
                    sum += n.value;
                    cur = n.next;
                }
                (r.obj().len << 32) | sum
            })
            .unwrap();
        (w >> 32, w & 0xffff_ffff)
    };
    assert_eq!(len, 40);
    assert_eq!(sum, (1..=40).map(|v| v * 10).sum::<u64>());
    // Views are checked: misaligned or unallocated places are errors.
    let errs: u64 = p
        .update(|m| {
            let top = m.obj().top;
            let a = matches!(m.get::<Node>(top + 4), Err(PtmError::BadObject { .. }));
            let used = 8 * m.words().len() as u64;
            let b = matches!(m.get::<Node>(used), Err(PtmError::BadObject { .. }));
            let c = matches!(m.get_mut::<u128>(top + 8), Err(PtmError::BadObject { .. }));
            let d = m.get::<u128>(top).is_ok();
            u64::from(a) + u64::from(b) + u64::from(c) + u64::from(d)
        })
        .unwrap();
    assert_eq!(errs, 4);
    // The same value through the annotated interface.
    let top: u64 = p
        .read_tx(|tx| tx.load(perdure_ptm::cx::puc::OBJECT))
        .unwrap();
    assert_eq!(top, p.read(|r| r.obj().top).unwrap());
    // A panic undoes the plain changes too.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.update(|m| -> () {
            m.obj_mut().len = 999;
            m.alloc(1000).unwrap();
            panic!("deliberate");
        })
    }));
    assert!(r.is_err());
    assert_eq!(p.read(|r| r.obj().len).unwrap(), 40);
    assert_eq!(push(&p, 7), 41);
}

/// 300 increments on one thread with a replay window of `window` nodes.
fn increments_with_window(window: usize) -> (Config, CxStats) {
    let config = Config {
        replay_window: window,
        ..common::cx_config(3)
    };
    let pool = Pool::volatile("cx-window", 1 << 20, NoFlush).unwrap();
    let p = CxPtm::create(pool, &config).unwrap();
    for i in 1..=300 {
        assert_eq!(increment(&p), i);
    }
    (config, p.stats())
}

#[test]
fn a_small_window_disposes_nodes_and_copies_replicas() {
    // A window of one node: every replica but the designated one is too
    // far behind when next taken, and retired nodes are disposed of at once.
    let (config, s) = increments_with_window(1);
    assert_eq!(s.commits, 300);
    assert!(s.copies >= 299, "every update copies: {s:?}");
    assert!(s.disposed >= 299, "{s:?}");
    let alive = s.disposed - s.freed;
    assert!(
        alive <= config.max_retained_nodes(),
        "{alive} disposed nodes not freed, bound {}",
        config.max_retained_nodes()
    );
    // A wide window: no disposal within it, no copy after the first.
    let (_, s) = increments_with_window(1000);
    assert_eq!((s.copies, s.disposed), (1, 0), "{s:?}");
}

#[test]
fn memory_is_bounded() {
    let c = Config::default();
    assert!(
        c.volatile_bytes_ptm() < 64 << 20,
        "{}",
        c.volatile_bytes_ptm()
    );
    let p = ptm(2);
    assert!(p.volatile_bytes() < 16 << 20);
    let q = puc(2);
    assert!(q.volatile_bytes() >= 4 * q.region_len());
}
