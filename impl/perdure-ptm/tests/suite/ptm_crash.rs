//! Full-system crashes of every PTM on perdure-pm's Px86 simulator, with
//! the workloads and checks of `common/crash.rs`: a crash point after every
//! persistence event (each store, write-back, fence and CAS the PTM issues
//! to the pool); at each, the crash images Px86 allows (all of them up to a
//! limit, else a seeded sample) are materialised, reopened by null
//! recovery, and checked:
//!
//! * every transaction that had returned before the crash is there, and
//!   none is there in part: the recovered state is the state after some
//!   number `n` of whole transactions, `completed ≤ n ≤ started`;
//! * the recovered PTM works: the next update (which copies, every other
//!   replica being invalid) sees that state, its allocator hands out no
//!   live block, and it commits.
//!
//! One thread under both of the simulator's RMW semantics (a `pfence`
//! before the `cur_comb` CAS, or none where the CAS completes write-backs;
//! CX-PUC's x86 run is `cx_crash.rs`'s, with copying), and two threads.
//! Each test once per construction (`common::ptms`), printing the
//! PERDURE-CHECK row `explore:ptm/<construction>-sim-crash-1t`, `-1t-x86`,
//! `-2t`. What only one construction has (CX's copying window and CX-PUC's
//! typed interface, Redo's tiny logs and RedoOpt's non-temporal copies) is
//! in `cx_crash.rs` and `redo_crash.rs`. Crashes inside `create`:
//! `explore:ptm/<construction>-sim-crash-create` (every image opens as an
//! empty PTM that commits, or is refused with an error). Not covered:
//! thread crashes.

use crate::common;

use common::crash;
use common::ptms::{ptm_suite, Construction};
use perdure_pm::{Sim, SimOptions};

/// Room for 2N = 4 replicas of 8 KiB (CX), or 3 of 12 KiB (Redo).
const POOL: u64 = 48 << 10;

fn one_thread<C: Construction>(options: SimOptions, suffix: &str) {
    crash::run_one_thread(
        options,
        POOL,
        |pool| C::create(pool, 2).unwrap(),
        C::pool::<Sim>,
        C::open,
        &format!("{}-sim-crash-1t{suffix}", C::TAG),
    );
}

fn one_thread_full_crashes<C: Construction>() {
    one_thread::<C>(SimOptions::default(), "");
}

fn one_thread_full_crashes_x86_cas<C: Construction>() {
    let x86 = SimOptions {
        rmw_completes_flushes: true,
        ..SimOptions::default()
    };
    one_thread::<C>(x86, "-x86");
}

/// Two threads, three transactions each: each increments its own slot and
/// a shared total (see [`crash::two_threads`]).
fn two_thread_full_crashes<C: Construction>() {
    let p = C::volatile(2, POOL, Sim::default());
    let points = crash::two_threads(&p, C::pool(&p).backend());
    let explored = crash::recover_all(&points, C::open, crash::check_two_threads);
    crash::report(&format!("{}-sim-crash-2t", C::TAG), explored);
}

/// Crashes inside `create` (see [`crash::run_creation`]).
fn create_crashes<C: Construction>() {
    crash::run_creation(
        SimOptions::default(),
        POOL,
        |pool| C::create(pool, 2).unwrap(),
        C::pool::<Sim>,
        C::open,
        &format!("{}-sim-crash-create", C::TAG),
    );
}

ptm_suite!(
    one_thread_full_crashes,
    two_thread_full_crashes,
    create_crashes
);
ptm_suite!(@mod x86_cx_ptm, Cx, one_thread_full_crashes_x86_cas);
ptm_suite!(@mod x86_redo, Redo, one_thread_full_crashes_x86_cas);
ptm_suite!(@mod x86_timed, Timed, one_thread_full_crashes_x86_cas);
ptm_suite!(@mod x86_opt, Opt, one_thread_full_crashes_x86_cas);
