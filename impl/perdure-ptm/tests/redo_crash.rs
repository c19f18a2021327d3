//! Full-system crashes of Redo-PTM, RedoTimed-PTM and RedoOpt-PTM on
//! perdure-pm's Px86 simulator (every test runs once per variant).
//!
//! A workload runs on a `Sim` pool with a crash point captured after every
//! persistence event (each store, write-back, fence and CAS the PTM issues
//! to the pool). For every crash point, the crash images Px86 allows there
//! (all of them up to a limit, else a seeded sample) are materialised,
//! the pool is reopened from the image (null recovery), and the test checks:
//!
//! * every transaction that had returned before the crash is there, and no
//!   transaction is there in part: the recovered state is exactly the state
//!   after some number `n` of whole transactions, with
//!   `completed ≤ n ≤ started`;
//! * the recovered PTM works: the next update (which must copy, every other
//!   replica being invalid) sees that state, its allocator hands out no live
//!   block, and it commits.
//!
//! Run under both of the simulator's RMW semantics: without (a `pfence`
//! before the `cur_comb` CAS) and with (x86: the CAS completes write-backs
//! and the `pfence` is left out), and with logs too small for a transaction
//! (copies instead of replays, whole-range write-backs), and with logs too
//! small but line-by-line write-backs (copies, RedoOpt's non-temporal
//! ones among them, without a write-back covering them). Not covered: crashes inside `create`, and
//! thread crashes; each test prints a PERDURE-CHECK row with what it
//! explored.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod common;

use common::crash;
use perdure_pm::{Pool, Sim, SimOptions};
use perdure_ptm::redo::{Config, RedoPtm, Variant};

const POOL: u64 = 48 << 10;

/// The PERDURE-CHECK name prefix of a variant.
fn tag(v: Variant) -> &'static str {
    match v {
        Variant::Redo => "redo",
        Variant::Timed => "redotimed",
        Variant::Opt => "redoopt",
    }
}

/// The one-thread workload of [`crash::one_thread`] on Redo-PTM with
/// `config`, every crash image checked.
fn one_thread(options: SimOptions, config: &Config, name: &str) {
    let pool = Pool::volatile("redo-crash", POOL, Sim::new(options)).unwrap();
    let p = RedoPtm::create(pool, config).unwrap();
    let points = crash::one_thread(&p, p.pool().backend());
    let explored = crash::recover_all(
        &points,
        |pool| RedoPtm::open(pool, config),
        crash::check_one_thread,
    );
    crash::report(name, explored);
}

fn one_thread_full_crashes(v: Variant) {
    one_thread(
        SimOptions::default(),
        &common::config_v(2, v),
        &format!("{}-sim-crash-1t", tag(v)),
    );
}

fn one_thread_full_crashes_x86_cas(v: Variant) {
    one_thread(
        SimOptions {
            rmw_completes_flushes: true,
            ..SimOptions::default()
        },
        &common::config_v(2, v),
        &format!("{}-sim-crash-1t-x86", tag(v)),
    );
}

/// The same with a log arena smaller than a transaction and a dirty-line
/// set of two lines: every state overflows its log (other replicas copy
/// instead of replaying) and write-backs fall back to whole ranges.
fn one_thread_full_crashes_tiny_logs(v: Variant) {
    let config = Config {
        log_entries_per_thread: 4,
        dirty_lines_per_replica: 2,
        ..common::config_v(2, v)
    };
    one_thread(
        SimOptions::default(),
        &config,
        &format!("{}-sim-crash-1t-tiny-logs", tag(v)),
    );
}

/// RedoOpt-PTM with a log arena smaller than a transaction and the usual
/// dirty-line set: every update copies the replica it takes with
/// non-temporal stores, persisted by the `pfence` or the locked CAS before
/// `cur_comb` moves and by no write-back, while write-backs stay line by
/// line (with tiny dirty-line sets, above, the full-flush switch would
/// cover the copy). Redo-PTM and RedoTimed-PTM copy with plain stores and
/// a whole-range write-back, which the tiny-logs test covers. This test
/// fails if RedoOpt copies with plain stores.
#[test]
fn opt_one_thread_full_crashes_copies() {
    let v = Variant::Opt;
    let config = Config {
        log_entries_per_thread: 4,
        ..common::config_v(2, v)
    };
    one_thread(
        SimOptions::default(),
        &config,
        &format!("{}-sim-crash-1t-copies", tag(v)),
    );
    one_thread(
        SimOptions {
            rmw_completes_flushes: true,
            ..SimOptions::default()
        },
        &config,
        &format!("{}-sim-crash-1t-copies-x86", tag(v)),
    );
}

/// Two threads, three transactions each: each increments its own slot and
/// a shared total (see [`crash::two_threads`]).
fn two_thread_full_crashes(v: Variant) {
    let p = common::redo_v(2, POOL, Sim::default(), v);
    let points = crash::two_threads(&p, p.pool().backend());
    let explored = crash::recover_all(
        &points,
        |pool| RedoPtm::open(pool, &common::config_v(2, v)),
        crash::check_two_threads,
    );
    crash::report(&format!("{}-sim-crash-2t", tag(v)), explored);
}

common::redo_variant_tests!(
    one_thread_full_crashes,
    one_thread_full_crashes_x86_cas,
    one_thread_full_crashes_tiny_logs,
    two_thread_full_crashes,
);
