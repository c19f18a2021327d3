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

use perdure_pm::{Backend, NoFlush, Pool};
use perdure_ptm::cx::{Config, CxStats};
use perdure_ptm::{CxPtm, CxPuc};
use shuttle_common::{iterations, row};

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

#[test]
fn consensus_random() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_random(|| consensus_ptm(&SEEN_RANDOM), n);
    row(
        "cx-ptm-consensus-random",
        &(format!("{n} random schedules (seed {seed}), {CONSENSUS}") + &seen(&SEEN_RANDOM)),
        CONSENSUS_DETAIL,
    );
    perdure_pm::sync::seeded::check_random(|| consensus_puc(&SEEN_RANDOM), n);
    row(
        "cx-puc-consensus-random",
        &(format!("{n} random schedules (seed {seed}), {CONSENSUS}") + &seen(&SEEN_RANDOM)),
        CONSENSUS_DETAIL,
    );
}

#[test]
fn consensus_pct() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_pct(|| consensus_ptm(&SEEN_PCT), n, 3);
    row(
        "cx-ptm-consensus-pct",
        &(format!("{n} PCT schedules (depth 3, seed {seed}), {CONSENSUS}") + &seen(&SEEN_PCT)),
        CONSENSUS_DETAIL,
    );
    perdure_pm::sync::seeded::check_pct(|| consensus_puc(&SEEN_PCT), n, 3);
    row(
        "cx-puc-consensus-pct",
        &(format!("{n} PCT schedules (depth 3, seed {seed}), {CONSENSUS}") + &seen(&SEEN_PCT)),
        CONSENSUS_DETAIL,
    );
}

fn crash_ptm() {
    let pool = shuttle_common::sim_pool("shuttle-cx-crash", 48 << 10);
    shuttle_common::crash(
        make_ptm(pool, &config(2)),
        |p| p.pool().backend(),
        |pool| CxPtm::open(pool, &config(2)),
    );
}

fn crash_puc() {
    let pool = shuttle_common::sim_pool("shuttle-cx-crash", 48 << 10);
    shuttle_common::crash(
        make_puc(pool, &config(2)),
        |p| p.pool().backend(),
        |pool| CxPuc::open(pool, &config(2)),
    );
}

const CRASH: &str = "2 threads x 2 updates, replay window 1, a crash point after every persistence event, up to 32 Px86 images each";
const CRASH_DETAIL: &str =
    "every completed transaction recovered, none in part; the recovered PTM commits";

#[test]
fn crash_pct() {
    let n = (iterations() / 2).max(20);
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_pct(crash_ptm, n, 3);
    row(
        "cx-ptm-crash-pct",
        &format!("{n} PCT schedules (depth 3, seed {seed}), {CRASH}"),
        CRASH_DETAIL,
    );
    perdure_pm::sync::seeded::check_pct(crash_puc, n, 3);
    row(
        "cx-puc-crash-pct",
        &format!("{n} PCT schedules (depth 3, seed {seed}), {CRASH}"),
        CRASH_DETAIL,
    );
}

#[test]
fn crash_random() {
    let n = (iterations() / 2).max(20);
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_random(crash_ptm, n);
    row(
        "cx-ptm-crash-random",
        &format!("{n} random schedules (seed {seed}), {CRASH}"),
        CRASH_DETAIL,
    );
    perdure_pm::sync::seeded::check_random(crash_puc, n);
    row(
        "cx-puc-crash-random",
        &format!("{n} random schedules (seed {seed}), {CRASH}"),
        CRASH_DETAIL,
    );
}
