//! Full-system crashes of what only CX has, on perdure-pm's Px86 simulator,
//! with the workloads and checks of `common/crash.rs` (see `ptm_crash.rs`
//! for what every construction is checked for): a one-node replay window
//! (every update copies the designated replica and every retired node is
//! disposed of) for CX-PTM and, under x86 RMW semantics, for CX-PUC; and
//! CX-PUC's typed interface. Not covered: crashes inside `create`, thread
//! crashes. Each test prints a PERDURE-CHECK row with what it explored.

use crate::common;

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
    let (create, open) = (CxPtm::create, CxPtm::open);
    crash::run_one_thread_with(options, POOL, config, create, CxPtm::pool, open, name);
}

fn puc_one_thread(options: SimOptions, config: &Config, name: &str) {
    crash::run_one_thread(
        options,
        POOL,
        |pool| CxPuc::create(pool, config, 0u64).unwrap(),
        CxPuc::pool,
        |pool| CxPuc::<Sim, u64>::open(pool, config),
        name,
    );
}

fn window_1() -> Config {
    Config {
        replay_window: 1,
        ..common::cx_config(2)
    }
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
fn cx_puc_one_thread_full_crashes_x86_cas_copying() {
    puc_one_thread(x86(), &window_1(), "cx-puc-sim-crash-1t-x86-copy");
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
            pt.assert_recovered(0, n);
            q.update(move |m| m.obj_mut()[3] = n + 1).unwrap();
            assert_eq!(q.read(|r| r.obj()[3]).unwrap(), n + 1);
        },
    );
    crash::report("cx-puc-sim-crash-typed", explored);
}
