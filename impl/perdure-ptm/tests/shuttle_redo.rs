//! shuttle: randomized and PCT schedules (seeded, reproducible) of Redo-PTM's
//! combining consensus, with and without full crashes; and random schedules
//! of RedoOpt-PTM (`*_opt_*`, fewer schedules).
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-ptm --test shuttle_redo` (`make verify` does). Without the cfg this
//! file is empty. `PERDURE_SHUTTLE_ITERS` sets the schedules per test
//! (default 1,000; 20,000 with `PERDURE_DEPTH=deep`).
//!
//! The workloads and the crash-image check are `shuttle_common`'s, shared
//! with `shuttle_cx.rs`. Every shared access of the PTM — the announce and request arrays, hazard
//! pointers, locks, heads, the ring, states, logs, and every word of the
//! replicas and of `cur_comb` — is a shuttle scheduling point, so the
//! schedules interleave threads inside copies, replays and simulations.
//!
//! * `consensus_*`: three threads, three updates each (a shared total and a
//!   slot per thread), and a reader: the total is the sum of the slots in
//!   every read, no increment is lost or doubled, and every thread gets back
//!   its own results.
//! * `crash_*`: two threads, two updates each, on the Px86 simulator; after
//!   every persistence event a crash point is captured, and at the end of the
//!   schedule each point's crash images (all, or a seeded sample of 32) are
//!   checked as null recovery reads them — the state `cur_comb` designates
//!   is whole transactions, between what had completed and what had started
//!   per thread — and some are reopened and updated.
//! * `crash_rollback_opt_random`: the same on RedoOpt-PTM with, between each
//!   thread's two updates, one whose closure stores and then panics: rolled
//!   back (under concurrency), no crash image may show its stores.
//! * `timed_window_replays_instead_of_copying`: RedoTimed with a window that
//!   never closes, two writers: at most the first update copies a replica
//!   (a regression test of step {6}'s stale-`tail` case, which made two
//!   writers copy the whole object; it fails without the fix).

#![cfg(perdure_shuttle)]

mod shuttle_common;

use perdure_pm::{NoFlush, Pool};
use perdure_ptm::redo::{Config, RedoPtm, Variant};
use shuttle_common::{
    explore, iterations, random_and_pct_tests, row, setup, spawn_writers, Schedules,
};

/// `v` runs with an empty RedoTimed window: shuttle replays schedules,
/// so nothing may depend on the clock (`tests/suite/redo_variants.rs` checks the
/// window with real threads); RedoOpt's aggregation, distinct dirty lines
/// and non-temporal copies are explored as they are.
fn config(threads: usize, v: Variant) -> Config {
    Config {
        threads,
        states_per_thread: 4,
        log_entries_per_thread: 256,
        dirty_lines_per_replica: 32,
        max_read_tries: 2,
        variant: v,
        timed_window: Some(std::time::Duration::ZERO),
    }
}

/// The consensus workload on variant `v`, then its counters: the commits
/// the threads counted are the `cur_comb` CASes the replicas counted, and
/// the committed states logged entries.
fn consensus(v: Variant) {
    let pool = Pool::volatile("shuttle-redo", 32 << 10, NoFlush).unwrap();
    let p = shuttle_common::consensus(RedoPtm::create(pool, &config(4, v)).unwrap());
    let (s, per_replica) = (p.stats(), p.replica_commits());
    assert!(s.commits >= 1, "{v:?}: 9 updates, no commit counted: {s:?}");
    assert_eq!(
        per_replica.iter().sum::<u64>(),
        s.commits,
        "{v:?}: the replicas' commit counters {per_replica:?} disagree with the threads' {s:?}"
    );
    assert!(s.log_entries >= 1, "{v:?}: commits logged no entry: {s:?}");
}

/// RedoTimed with a window that never closes: two writers share
/// `combs[0]` and `combs[1]`, each a commit or two behind the other, so
/// after the first update's copy (a fresh PTM's other replicas are invalid)
/// every replica is brought up to date by replaying logs. Returns the
/// copies made. An attempt that read `cur_comb` before the other writer
/// committed twice finds its replica *ahead* of its `tail`; step {6} used
/// to invalidate it and then copy (found by the SPS bench).
fn timed_copies() -> u64 {
    let pool = Pool::volatile("shuttle-redo-copies", 32 << 10, NoFlush).unwrap();
    let c = Config {
        states_per_thread: 16,
        timed_window: Some(std::time::Duration::MAX),
        ..config(2, Variant::Timed)
    };
    let p = perdure_pm::sync::Arc::new(RedoPtm::create(pool, &c).unwrap());
    setup(&*p, 3);
    let writers = spawn_writers(&p, 2, 4);
    for w in writers {
        w.join().unwrap();
    }
    p.stats().copies
}

#[test]
fn timed_window_replays_instead_of_copying() {
    let most = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let m = most.clone();
    let explored = explore(Schedules::Random, iterations(), move || {
        let copies = timed_copies();
        m.fetch_max(copies, std::sync::atomic::Ordering::Relaxed);
        assert!(
            copies <= 1,
            "{copies} copies: only the first update should copy"
        );
    });
    let most = most.load(std::sync::atomic::Ordering::Relaxed);
    row(
        "redotimed-no-copy-storm",
        &format!("{explored} of RedoTimed-PTM with a window that never closes, 2 writers x 4 updates"),
        &format!("at most {most} copy per schedule (the first update's): every other replica is brought up to date by replay"),
    );
}

const CONSENSUS_DETAIL: &str = "no lost or doubled update, results to the right thread, reads see whole transactions; no crashes injected";

/// Redo-PTM's consensus workload on schedules sampled as `how`; row
/// `redo-consensus-<tag>`.
fn consensus_row(how: Schedules, tag: &str) {
    let explored = explore(how, iterations(), || consensus(Variant::Redo));
    row(
        &format!("redo-consensus-{tag}"),
        &format!("{explored}, 3 writers x 3 updates + 1 reader"),
        CONSENSUS_DETAIL,
    );
}

random_and_pct_tests!(consensus_random, consensus_pct, consensus_row);

fn crash(v: Variant) {
    let pool = shuttle_common::sim_pool("shuttle-redo-crash", 32 << 10);
    shuttle_common::crash(
        RedoPtm::create(pool, &config(2, v)).unwrap(),
        |p| p.pool().backend(),
        |pool| RedoPtm::open(pool, &config(2, v)),
    );
}

/// [`crash`] with a rolled-back update between each thread's two
/// (`shuttle_common::crash_with_rollbacks`).
fn crash_rollbacks(v: Variant) {
    let pool = shuttle_common::sim_pool("shuttle-redo-crash-rollback", 32 << 10);
    shuttle_common::crash_with_rollbacks(
        RedoPtm::create(pool, &config(2, v)).unwrap(),
        |p| p.pool().backend(),
        |pool| RedoPtm::open(pool, &config(2, v)),
    );
}

const CRASH: &str =
    "2 threads x 2 updates, a crash point after every persistence event, up to 32 Px86 images each";
const CRASH_DETAIL: &str =
    "every completed transaction recovered, none in part; the recovered PTM commits";

/// Redo-PTM's crash workload on schedules sampled as `how`; row
/// `redo-crash-<tag>`.
fn crash_row(how: Schedules, tag: &str) {
    let explored = explore(how, (iterations() / 2).max(20), || crash(Variant::Redo));
    row(
        &format!("redo-crash-{tag}"),
        &format!("{explored}, {CRASH}"),
        CRASH_DETAIL,
    );
}

random_and_pct_tests!(crash_random, crash_pct, crash_row);

/// The workload `run` on RedoOpt-PTM, on `n` random schedules; row
/// `redoopt-<name>`, `what` saying what ran.
fn opt_random_row(name: &str, n: usize, run: fn(Variant), what: &str, detail: &str) {
    let explored = explore(Schedules::Random, n, move || run(Variant::Opt));
    row(
        &format!("redoopt-{name}"),
        &format!("{explored} of RedoOpt-PTM, {what}"),
        detail,
    );
}

#[test]
fn consensus_opt_random() {
    opt_random_row(
        "consensus-random",
        (iterations() / 2).max(20),
        consensus,
        "3 writers x 3 updates + 1 reader",
        "no lost or doubled update, results to the right thread, reads see whole transactions, with store aggregation across combined closures; RedoTimed window empty (clock-free); no crashes injected",
    );
}

#[test]
fn crash_rollback_opt_random() {
    opt_random_row(
        "crash-rollback-random",
        (iterations() / 4).max(20),
        crash_rollbacks,
        "2 threads x 2 updates with a panicking (rolled-back) update between them, a crash point after every persistence event, up to 32 Px86 images each",
        &format!("{CRASH_DETAIL}; no image shows a rolled-back store; RedoTimed window empty (clock-free)"),
    );
}

#[test]
fn crash_opt_random() {
    opt_random_row(
        "crash-random",
        (iterations() / 4).max(20),
        crash,
        CRASH,
        &format!("{CRASH_DETAIL}; RedoTimed window empty (clock-free)"),
    );
}
