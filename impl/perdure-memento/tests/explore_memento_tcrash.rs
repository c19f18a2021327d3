//! The Memento explorer with a thread crash injected into the root
//! operations of the workload (`PERDURE_THREAD_CRASH=1`, see
//! `scenarios::thread_crash_mode`): at a seeded persistence event of each
//! operation, so that across the schedules operations crash at their start,
//! middle and commit, and the runtime re-runs each with its memento while the
//! other thread runs (and helps). Full crashes are explored on top, as in
//! `explore_memento.rs`. One binary per setting: the scenarios read it from
//! the environment.

mod common;
#[macro_use]
mod explore_suite;

fn setting() {
    std::env::set_var("PERDURE_THREAD_CRASH", "1");
}

/// The injected-crash counter is per process: the tests take turns so that
/// each reads its own.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(name: &str) {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    setting();
    let before = perdure_harness::memento::scenarios::thread_crashes_injected();
    common::run(name, 4, "@thread-crash");
    let injected = perdure_harness::memento::scenarios::thread_crashes_injected() - before;
    println!("{name}: {injected} thread crashes injected");
    assert!(injected > 0, "{name}: no thread crash was injected");
}

explore_tests! {
    msq_mmt_vol_survives_thread_crashes => run("msq-mmt-vol");
    msq_mmt_cas_survives_thread_crashes => run("msq-mmt-cas");
    treiber_mmt_survives_thread_crashes => run("treiber-mmt");
    elim_stack_mmt_survives_thread_crashes => run("elim-stack-mmt");
    combq_mmt_survives_thread_crashes => run("combq-mmt");
    soft_mmt_survives_thread_crashes => run("soft-mmt");
    cas_register_2_threads_survives_thread_crashes => run("cas-register-2");
}
