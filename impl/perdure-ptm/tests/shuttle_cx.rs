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

#![cfg(perdure_shuttle)]

mod shuttle_common;

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
/// other threads, copies, reads that enqueued themselves, failed CAS tries,
/// nodes disposed of.
/// (One array per test: tests run in parallel.)
type Seen = [std::sync::atomic::AtomicU64; 5];
static SEEN_RANDOM: Seen = [const { std::sync::atomic::AtomicU64::new(0) }; 5];
static SEEN_PCT: Seen = [const { std::sync::atomic::AtomicU64::new(0) }; 5];

fn seen(totals: &Seen) -> String {
    let v: Vec<u64> = totals
        .iter()
        .map(|a| a.swap(0, std::sync::atomic::Ordering::Relaxed))
        .collect();
    format!(
        "; over all schedules {} closures helped, {} copies, {} reads enqueued, {} CAS retries, {} nodes disposed",
        v[0], v[1], v[2], v[3], v[4]
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
