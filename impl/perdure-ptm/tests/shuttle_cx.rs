//! shuttle: randomized and PCT schedules (seeded, reproducible) of CX's
//! consensus — the turn queue, the `2N` locks, replays, copies, the
//! `cur_comb` CAS loop, node reclamation — for CX-PTM and CX-PUC, with and
//! without full crashes.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-ptm --test shuttle_cx`. Without the cfg this file is empty.
//! `PERDURE_SHUTTLE_ITERS` sets the schedules per test (default 1,000;
//! 20,000 with `PERDURE_DEPTH=deep`).
//!
//! The workloads and the crash-image check are `shuttle_common`'s, shared
//! with `shuttle_redo.rs`. Every shared access — the queue's links, tickets, enqueuers and hazard
//! pointers, the locks and heads, and every word of the replicas and of
//! `cur_comb` — is a shuttle scheduling point.
//!
//! * `consensus_*`: three writers, three updates each (a shared total and a
//!   slot per writer), and a reader, with a replay window of one node (every
//!   replica is copied when taken, every retired node disposed of at once)
//!   and `MAX_READ_TRIES` 0 (every read enqueues itself, then tries the
//!   designated replica `N` times before collecting what an updater ran):
//!   no increment lost or doubled, each writer gets its own results, every
//!   read sees whole transactions.
//! * `crash_*`: two threads, two updates each, on the Px86 simulator (write
//!   backs and fences are scheduling points too); after every persistence
//!   event a crash point is captured, and every point's images (all, or a
//!   seeded sample of 32) are checked as null recovery reads them — the
//!   state `cur_comb` designates is whole transactions, between what each
//!   thread had completed and started — and some are reopened and updated.
//! * `plain_value_*`: CX-PUC's own interface, a plain `#[repr(C)]` stack
//!   changed with ordinary Rust by two writers and walked by a reader; the
//!   counters add up, and dropping the PUC frees every queue node (each
//!   closure holds a token whose count must be back to one).

#![cfg(perdure_shuttle)]

mod shuttle_common;

use perdure_pm::sync::{thread, Arc};
use perdure_pm::{Backend, NoFlush, Pool, Sim};
use perdure_ptm::cx::{Config, CxStats};
use perdure_ptm::{CxPtm, CxPuc, PtmError};
use shuttle_common::{explore, iterations, random_and_pct_tests, row, Schedules};

fn config(threads: usize) -> Config {
    Config {
        threads,
        max_read_tries: 0,
        replay_window: 1,
        dirty_lines_per_replica: 32,
        undo_entries_per_thread: 64,
    }
}

type PtmOf<B> = CxPtm<B>;
type PucOf<B> = CxPuc<B, u64>;

fn make_ptm<B: Backend>(pool: Pool<B>, c: &Config) -> PtmOf<B> {
    CxPtm::create(pool, c).unwrap()
}

fn make_puc<B: Backend>(pool: Pool<B>, c: &Config) -> PucOf<B> {
    CxPuc::create(pool, c, 0).unwrap()
}

/// What the schedules of a test did, summed over them: closures run for
/// other threads, copies, reads that enqueued themselves, of those the
/// reads that took the result an updater computed (R{2}'s collection after
/// `N` failed tries, which these schedules rarely or never reach; the
/// directed schedule of `mutants_ptm`'s
/// `cx_published_read_tries_n_times_then_collects` forces it), failed CAS
/// tries, nodes disposed of.
/// (One array per test: tests run in parallel.)
type Seen = [std::sync::atomic::AtomicU64; 6];
static SEEN_RANDOM: Seen = [const { std::sync::atomic::AtomicU64::new(0) }; 6];
static SEEN_PCT: Seen = [const { std::sync::atomic::AtomicU64::new(0) }; 6];

fn seen(totals: &Seen) -> String {
    let v: Vec<u64> = totals
        .iter()
        .map(|a| a.swap(0, std::sync::atomic::Ordering::Relaxed))
        .collect();
    format!(
        "; over all schedules {} closures helped, {} copies, {} reads enqueued ({} collected from an updater), {} CAS retries, {} nodes disposed",
        v[0], v[1], v[2], v[3], v[4], v[5]
    )
}

/// [`shuttle_common::consensus`] on `p`, its counters added to `totals`.
fn consensus<P: perdure_ptm::Ptm + perdure_ptm::Front + 'static>(
    p: P,
    stats: fn(&P) -> CxStats,
    totals: &Seen,
) {
    let p = shuttle_common::consensus(p);
    let s = stats(&p);
    for (a, v) in totals.iter().zip([
        s.helped,
        s.copies,
        s.reads_published,
        s.reads_collected,
        s.cas_retries,
        s.disposed,
    ]) {
        a.fetch_add(v, std::sync::atomic::Ordering::Relaxed);
    }
}

fn consensus_ptm(totals: &Seen) {
    let pool = Pool::volatile("shuttle-cx", 64 << 10, NoFlush).unwrap();
    consensus(make_ptm(pool, &config(4)), |p| p.stats(), totals);
}

fn consensus_puc(totals: &Seen) {
    let pool = Pool::volatile("shuttle-cx", 64 << 10, NoFlush).unwrap();
    consensus(make_puc(pool, &config(4)), |p| p.stats(), totals);
}

const CONSENSUS: &str = "3 writers x 3 updates + 1 reader, replay window 1, MAX_READ_TRIES 0";
const CONSENSUS_DETAIL: &str = "no lost or doubled update, results to the right thread, reads see whole transactions; no crashes injected";

/// The consensus workload on CX-PTM, then on CX-PUC, on schedules sampled
/// as `how`; rows `cx-ptm-consensus-<tag>` and `cx-puc-consensus-<tag>`.
fn consensus_rows(how: Schedules, tag: &str) {
    let totals: &'static Seen = match how {
        Schedules::Random => &SEEN_RANDOM,
        Schedules::Pct => &SEEN_PCT,
    };
    let n = iterations();
    for (name, run) in [
        ("cx-ptm", consensus_ptm as fn(&Seen)),
        ("cx-puc", consensus_puc),
    ] {
        let explored = explore(how, n, move || run(totals));
        row(
            &format!("{name}-consensus-{tag}"),
            &(format!("{explored}, {CONSENSUS}") + &seen(totals)),
            CONSENSUS_DETAIL,
        );
    }
}

random_and_pct_tests!(consensus_random, consensus_pct, consensus_rows);

/// [`shuttle_common::crash`] on the CX construction `make` creates (its
/// `Sim`: `sim_of`), reopened by `open`.
fn crash_on<P: perdure_ptm::Ptm + perdure_ptm::Front + 'static>(
    make: fn(Pool<Sim>, &Config) -> P,
    sim_of: fn(&P) -> &Sim,
    open: fn(Pool<Sim>, &Config) -> Result<P, PtmError>,
) {
    let pool = shuttle_common::sim_pool("shuttle-cx-crash", 48 << 10);
    shuttle_common::crash(make(pool, &config(2)), sim_of, |pool| {
        open(pool, &config(2))
    });
}

fn crash_ptm() {
    crash_on(make_ptm, |p| p.pool().backend(), CxPtm::open);
}

fn crash_puc() {
    crash_on(make_puc, |p| p.pool().backend(), CxPuc::open);
}

const CRASH: &str = "2 threads x 2 updates, replay window 1, a crash point after every persistence event, up to 32 Px86 images each";
const CRASH_DETAIL: &str =
    "every completed transaction recovered, none in part; the recovered PTM commits";

/// The crash workload on CX-PTM, then on CX-PUC, on schedules sampled as
/// `how`; rows `cx-ptm-crash-<tag>` and `cx-puc-crash-<tag>`.
fn crash_rows(how: Schedules, tag: &str) {
    let n = (iterations() / 2).max(20);
    for (name, run) in [("cx-ptm", crash_ptm as fn()), ("cx-puc", crash_puc)] {
        let explored = explore(how, n, run);
        row(
            &format!("{name}-crash-{tag}"),
            &format!("{explored}, {CRASH}"),
            CRASH_DETAIL,
        );
    }
}

random_and_pct_tests!(crash_random, crash_pct, crash_rows);

#[path = "common/puc_stack.rs"]
mod puc_stack;
use puc_stack::{Node, Stack};

/// Two writers push two values each on CX-PUC's plain stack (a block
/// allocated and linked through `obj_mut`, `alloc_value`), a reader walks
/// it (`obj`, `get`) twice; every closure holds a clone of `token`. Then:
/// the stack holds the four values once each, every read saw a whole stack
/// (its walk agrees with `len`), the counters add up (each of the four
/// pushes ran on at least one replica; a node is freed only once disposed
/// of), and once the PUC is dropped no closure is left: every queue node
/// was freed, the ones still linked included.
fn plain_value_run() {
    let token = std::sync::Arc::new(());
    let pool = Pool::volatile("shuttle-cx-plain", 64 << 10, NoFlush).unwrap();
    let p = Arc::new(CxPuc::<NoFlush, Stack>::create(pool, &config(3), Stack::default()).unwrap());
    let writers: Vec<_> = (0..2u64)
        .map(|t| {
            let (p, token) = (p.clone(), token.clone());
            thread::spawn(move || {
                for i in 0..2u64 {
                    let held = token.clone();
                    let v = 10 * (t + 1) + i;
                    let len = p
                        .update(move |m| {
                            let _ = &held;
                            let next = m.obj().top;
                            let node = m.alloc_value(Node { value: v, next }).unwrap();
                            let s = m.obj_mut();
                            s.top = node;
                            s.len += 1;
                            s.len
                        })
                        .unwrap();
                    assert!((1..=4).contains(&len), "push({v}) returned length {len}");
                }
            })
        })
        .collect();
    let reader = {
        let (p, token) = (p.clone(), token.clone());
        thread::spawn(move || {
            for _ in 0..2 {
                let held = token.clone();
                let whole: bool = p
                    .read(move |r| {
                        let _ = &held;
                        let (mut cur, mut n) = (r.obj().top, 0u64);
                        while cur != 0 && n <= 4 {
                            cur = r.get::<Node>(cur).unwrap().next;
                            n += 1;
                        }
                        n == r.obj().len
                    })
                    .unwrap();
                assert!(
                    whole,
                    "a read saw a stack whose walk disagrees with its length"
                );
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    reader.join().unwrap();
    let mut values: Vec<u64> = p
        .read(|r| {
            let (mut cur, mut acc) = (r.obj().top, 0u64);
            while cur != 0 {
                let n = r.get::<Node>(cur).unwrap();
                acc = acc * 100 + n.value;
                cur = n.next;
            }
            acc
        })
        .map(|mut acc| {
            let mut v = Vec::new();
            while acc != 0 {
                v.push(acc % 100);
                acc /= 100;
            }
            v
        })
        .unwrap();
    values.sort_unstable();
    assert_eq!(values, [10, 11, 20, 21], "the stack after four pushes");
    let s = p.stats();
    assert!(
        s.applied >= 4,
        "4 pushes, {} closures applied: {s:?}",
        s.applied
    );
    assert!(s.commits >= 1, "no commit counted: {s:?}");
    assert!(
        s.freed <= s.disposed,
        "more nodes freed than disposed of: {s:?}"
    );
    drop(p);
    assert_eq!(
        std::sync::Arc::strong_count(&token),
        1,
        "closures outlived the PUC: queue nodes were not freed on drop"
    );
}

/// [`plain_value_run`] on schedules sampled as `how`; row
/// `cx-puc-plain-<tag>`.
fn plain_value_rows(how: Schedules, tag: &str) {
    let explored = explore(how, iterations(), plain_value_run);
    row(
        &format!("cx-puc-plain-{tag}"),
        &format!("{explored}, 2 writers x 2 pushes on a plain #[repr(C)] stack + 1 reader, replay window 1"),
        "each value pushed once, reads see whole stacks, counters consistent, every queue node freed on drop",
    );
}

random_and_pct_tests!(plain_value_random, plain_value_pct, plain_value_rows);
