//! The data structures under full-system crashes, on perdure-pm's Px86
//! simulator, for Redo-PTM and CX-PTM: one thread runs transactions that
//! each change a queue, a red-black tree set, a hash map and a linked-list
//! set together (with the `*_in` functions, so one transaction spans all
//! four: enqueue, insert, map insert, and on every other transaction a
//! dequeue and three removes, which free nodes); a crash point is captured
//! after every persistence event (`tests/common/crash.rs`), crash images
//! are materialised (all of them up to a limit, else a seeded sample), the
//! pool is reopened (null recovery), and the test checks:
//!
//! * every structure passes its `check` (the invariants: queue tail and
//!   count, red-black properties, bucket placement, sortedness);
//! * together they hold exactly the state after `n` whole transactions,
//!   `completed ≤ n ≤ started`: nothing completed is lost, nothing is there
//!   in part, and the four structures never disagree;
//! * the recovered PTM works: the queue drains in FIFO order and the next
//!   transaction commits.
//!
//! Explores: every crash point of the workload when there are at most
//! [`MAX_POINTS`], else every k-th (printed in the PERDURE-CHECK row).
//! Not covered: multi-thread crash schedules (the constructions' own crash
//! tests cover those), crashes inside `create`.

use crate::common;

use common::crash::{self, Point};
use common::ptms::{self, Construction};
use perdure_pm::{Pool, Sim};
use perdure_ptm::ds::{hash, list, queue, rbtree, HashMap, ListSet, Queue, RbTreeSet};
use perdure_ptm::Ptm;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::Ordering::SeqCst;

const POOL: u64 = 256 << 10;
/// Transactions of the workload.
const K: u64 = 4;
/// Crash points checked at most (spread evenly over the workload).
const MAX_POINTS: usize = 120;
const KEYS: std::ops::Range<u64> = 0..K + 2;

#[derive(Debug, PartialEq, Eq, Default)]
struct State {
    queue: VecDeque<u64>,
    tree: BTreeSet<u64>,
    map: BTreeMap<u64, u64>,
    list: BTreeSet<u64>,
}

/// The state after the set-up and `n` transactions of the workload.
fn model(n: u64) -> State {
    let mut s = State::default();
    s.queue.extend([500, 501]);
    s.tree.insert(0);
    s.map.insert(0, 7);
    s.list.insert(0);
    for i in 1..=n {
        s.queue.push_back(i);
        s.tree.insert(i);
        s.map.insert(i, 100 + i);
        s.list.insert(i);
        if i % 2 == 0 {
            s.queue.pop_front();
            s.tree.remove(&(i - 1));
            s.map.remove(&(i - 1));
            s.list.remove(&(i - 1));
        }
    }
    s
}

fn workload<P: Ptm>(p: &P, sim: &Sim) -> Vec<Point> {
    let (q, t, m, l) = (
        Queue::create(p, 1).unwrap(),
        RbTreeSet::create(p, 2).unwrap(),
        HashMap::create_with(p, 3, 1).unwrap(),
        ListSet::create(p, 4).unwrap(),
    );
    q.enqueue(p, 500).unwrap();
    q.enqueue(p, 501).unwrap();
    t.insert(p, 0).unwrap();
    m.insert(p, 0, 7).unwrap();
    l.insert(p, 0).unwrap();
    let progress = crash::Progress::new(1);
    crash::capture(sim, &progress, || {
        for i in 1..=K {
            progress.started[0].fetch_add(1, SeqCst);
            p.update_tx(move |tx| {
                queue::enqueue_in(tx, 1, i).unwrap();
                assert!(rbtree::insert_in(tx, 2, i).unwrap());
                assert_eq!(hash::map_insert_in(tx, 3, i, 100 + i).unwrap(), None);
                assert!(list::insert_in(tx, 4, i).unwrap());
                if i % 2 == 0 {
                    queue::dequeue_in(tx, 1).unwrap().unwrap();
                    assert!(rbtree::remove_in(tx, 2, i - 1).unwrap());
                    assert!(hash::map_remove_in(tx, 3, i - 1).unwrap().is_some());
                    assert!(list::remove_in(tx, 4, i - 1).unwrap());
                }
            })
            .unwrap();
            progress.completed[0].fetch_add(1, SeqCst);
        }
    })
}

/// Keeps at most [`MAX_POINTS`] points, evenly spread; returns the stride.
fn thin(points: Vec<Point>) -> (Vec<Point>, usize) {
    let stride = points.len().div_ceil(MAX_POINTS).max(1);
    (points.into_iter().step_by(stride).collect(), stride)
}

fn check<P: Ptm>(p: &P, pt: &Point) {
    let ev = pt.cp.event;
    let (q, t, m, l) = (
        Queue::open(p, 1).unwrap(),
        RbTreeSet::open(p, 2).unwrap(),
        HashMap::open(p, 3).unwrap(),
        ListSet::open(p, 4).unwrap(),
    );
    let qlen = q.check(p).unwrap_or_else(|e| panic!("event {ev}: {e}"));
    let tlen = t.check(p).unwrap_or_else(|e| panic!("event {ev}: {e}"));
    let mlen = m.check(p).unwrap_or_else(|e| panic!("event {ev}: {e}"));
    let llen = l.check(p).unwrap_or_else(|e| panic!("event {ev}: {e}"));
    let mut got = State::default();
    for k in KEYS {
        if t.contains(p, k).unwrap() {
            got.tree.insert(k);
        }
        if let Some(v) = m.get(p, k).unwrap() {
            got.map.insert(k, v);
        }
        if l.contains(p, k).unwrap() {
            got.list.insert(k);
        }
    }
    assert_eq!(
        (tlen, mlen, llen),
        (
            got.tree.len() as u64,
            got.map.len() as u64,
            got.list.len() as u64
        ),
        "event {ev}: keys outside the workload's"
    );
    while let Some(v) = q.dequeue(p).unwrap() {
        got.queue.push_back(v);
    }
    assert_eq!(got.queue.len() as u64, qlen, "event {ev}");
    let (lo, hi) = (pt.completed[0], pt.started[0]);
    assert!(
        (lo..=hi).any(|n| model(n) == got),
        "event {ev}: recovered {got:?}, which is the state after no n in {lo}..={hi} transactions"
    );
    // The recovered PTM commits the next transaction.
    assert!(t.insert(p, 1000).unwrap());
    assert_eq!(t.check(p).unwrap(), tlen + 1);
}

/// Runs the workload on construction `C` on a fresh 2-thread simulated
/// pool, crashes it at the (thinned) points, checks every recovery and
/// prints row `explore:ptm/ds-crash-{row}`.
fn recover_whole_transactions<C: Construction>(row: &str) {
    let pool = Pool::volatile("ds-crash", POOL, Sim::default()).unwrap();
    let p = C::create(pool, 2).unwrap();
    let (points, stride) = thin(workload(&p, C::pool(&p).backend()));
    let explored = crash::recover_all(&points, C::open, check);
    report(row, explored, stride);
}

#[test]
fn structures_recover_whole_transactions_on_redo() {
    recover_whole_transactions::<ptms::Redo>("redo");
}

#[test]
fn structures_recover_whole_transactions_on_cx() {
    recover_whole_transactions::<ptms::Cx>("cx");
}

fn report(ptm: &str, (points, images, exhaustive): (usize, u64, usize), stride: usize) {
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:ptm/ds-crash-{ptm}\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{points} crash points (every {stride}), {images} Px86 crash images ({exhaustive} points exhaustively), 1 thread x {K} transactions over a queue, red-black tree, hash map and list\",\"detail\":\"every structure passes check; together they hold the state after n whole transactions, completed <= n <= started; the recovered PTM commits\"}}"
    );
}
