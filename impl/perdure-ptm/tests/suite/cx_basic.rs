//! What only CX has, one thread: CX-PUC's plain value (a stack of
//! `#[repr(C)]` nodes changed with ordinary Rust, no nesting in it), and the
//! reclamation window (nodes disposed of, replicas invalidated and copied,
//! memory bounded). The sequential semantics through the shared `Ptm`
//! interface are `ptm_basic.rs`, run on every construction.

use crate::common;

use perdure_pm::{Backend, NoFlush, Pool};
use perdure_ptm::cx::{Config, CxStats};
use perdure_ptm::{CxPtm, CxPuc, Ptm, PtmError, TxRead};
use std::sync::Arc;

#[path = "../common/puc_stack.rs"]
mod puc_stack;
use puc_stack::{Node, Stack};

fn ptm(threads: usize) -> CxPtm<NoFlush> {
    common::cx(threads, 1 << 20, NoFlush)
}

fn puc(threads: usize) -> CxPuc<NoFlush, Stack> {
    common::puc(threads, 1 << 20, NoFlush)
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
        assert_eq!(common::ptms::increment(&p), i);
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
