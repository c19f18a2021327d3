//! Full-system crashes of CX-PTM and CX-PUC on perdure-pm's Px86 simulator,
//! with the workloads and checks of `common/crash.rs` (shared with
//! Redo-PTM's crash tests): a crash point after every persistence event,
//! every crash image Px86 allows there (up to a limit, else a seeded
//! sample) reopened by null recovery, and checked to hold every transaction
//! that had returned and none in part, with a recovered PTM that commits
//! (copying: every replica but the designated one is invalid after an open).
//!
//! Configurations: both of the simulator's RMW semantics (a `pfence`
//! before the `cur_comb` CAS, or none where the CAS completes write-backs);
//! a one-node replay window (every update copies the designated replica
//! and every retired node is disposed of); CX-PUC's typed interface; two
//! threads. Not covered: crashes inside `create`, thread crashes. Each test
//! prints a PERDURE-CHECK row with what it explored.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod common;

use common::crash;
use perdure_pm::{Pool, Sim, SimOptions};
use perdure_ptm::cx::Config;
use perdure_ptm::{CxPtm, CxPuc};
use std::sync::atomic::Ordering::SeqCst;

/// Room for 2N = 4 replicas of 4 KiB... 8 KiB each.
const POOL: u64 = 48 << 10;

fn x86() -> SimOptions {
    SimOptions {
        rmw_completes_flushes: true,
        ..SimOptions::default()
    }
}

fn ptm_one_thread(options: SimOptions, config: &Config, name: &str) {
    let pool = Pool::volatile("cx-crash", POOL, Sim::new(options)).unwrap();
    let p = CxPtm::create(pool, config).unwrap();
    let points = crash::one_thread(&p, p.pool().backend());
    let explored = crash::recover_all(
        &points,
        |pool| CxPtm::open(pool, config),
        crash::check_one_thread,
    );
    crash::report(name, explored);
}

fn puc_one_thread(options: SimOptions, config: &Config, name: &str) {
    let pool = Pool::volatile("cx-crash", POOL, Sim::new(options)).unwrap();
    let p = CxPuc::create(pool, config, 0u64).unwrap();
    let points = crash::one_thread(&p, p.pool().backend());
    let explored = crash::recover_all(
        &points,
        |pool| CxPuc::<Sim, u64>::open(pool, config),
        crash::check_one_thread,
    );
    crash::report(name, explored);
}

fn window_1() -> Config {
    Config {
        replay_window: 1,
        ..common::cx_config(2)
    }
}

#[test]
fn cx_ptm_one_thread_full_crashes() {
    ptm_one_thread(
        SimOptions::default(),
        &common::cx_config(2),
        "cx-ptm-sim-crash-1t",
    );
}

#[test]
fn cx_ptm_one_thread_full_crashes_x86_cas() {
    ptm_one_thread(x86(), &common::cx_config(2), "cx-ptm-sim-crash-1t-x86");
}

#[test]
fn cx_ptm_one_thread_full_crashes_copying() {
    ptm_one_thread(
        SimOptions::default(),
        &window_1(),
        "cx-ptm-sim-crash-1t-copy",
    );
}

#[test]
fn cx_puc_one_thread_full_crashes() {
    puc_one_thread(
        SimOptions::default(),
        &common::cx_config(2),
        "cx-puc-sim-crash-1t",
    );
}

#[test]
fn cx_puc_one_thread_full_crashes_x86_cas_copying() {
    puc_one_thread(x86(), &window_1(), "cx-puc-sim-crash-1t-x86-copy");
}

#[test]
fn cx_ptm_two_thread_full_crashes() {
    let p = common::cx(2, POOL, Sim::default());
    let points = crash::two_threads(&p, p.pool().backend());
    let explored = crash::recover_all(
        &points,
        |pool| CxPtm::open(pool, &common::cx_config(2)),
        crash::check_two_threads,
    );
    crash::report("cx-ptm-sim-crash-2t", explored);
}

#[test]
fn cx_puc_two_thread_full_crashes() {
    let p: CxPuc<Sim, u64> = common::puc(2, POOL, Sim::default());
    let points = crash::two_threads(&p, p.pool().backend());
    let explored = crash::recover_all(
        &points,
        |pool| CxPuc::<Sim, u64>::open(pool, &common::cx_config(2)),
        crash::check_two_threads,
    );
    crash::report("cx-puc-sim-crash-2t", explored);
}

/// CX-PUC through its typed interface: the object is `[i, i, i, i]`
/// (the words spread over the object's block) after update `i`, set with
/// plain Rust.
#[test]
fn cx_puc_typed_full_crashes() {
    const K: u64 = 5;
    let pool = Pool::volatile("cx-crash", POOL, Sim::default()).unwrap();
    let p = CxPuc::create(pool, &common::cx_config(2), [0u64; 4]).unwrap();
    let progress = crash::Progress::new(1);
    let points = crash::capture(p.pool().backend(), &progress, || {
        for i in 1..=K {
            progress.started[0].fetch_add(1, SeqCst);
            p.update(move |m| *m.obj_mut() = [i; 4]).unwrap();
            progress.completed[0].fetch_add(1, SeqCst);
        }
    });
    let explored = crash::recover_all(
        &points,
        |pool| CxPuc::<Sim, [u64; 4]>::open(pool, &common::cx_config(2)),
        |q, pt| {
            let o = q.read(|r| {
                let o = r.obj();
                if o.iter().all(|&w| w == o[0]) {
                    o[0]
                } else {
                    u64::MAX
                }
            });
            let n = o.unwrap();
            assert!(
                pt.completed[0] <= n && n <= pt.started[0],
                "event {}: recovered {n}, completed {} started {}",
                pt.cp.event,
                pt.completed[0],
                pt.started[0]
            );
            q.update(move |m| m.obj_mut()[3] = n + 1).unwrap();
            assert_eq!(q.read(|r| r.obj()[3]).unwrap(), n + 1);
        },
    );
    crash::report("cx-puc-sim-crash-typed", explored);
}
