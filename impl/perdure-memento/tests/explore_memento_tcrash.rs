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
    clevel_mmt_survives_thread_crashes => run("clevel-mmt");
    cas_register_2_threads_survives_thread_crashes => run("cas-register-2");
}

/// CombQ-mmt with every root operation crashed after its `n`th persistence
/// event, for each `n` from 0 to 47 in turn (one schedule each, every full
/// crash point on top, 2 images each): the seeded positions of `run` leave windows of an
/// operation unvisited, among them a combiner that crashed after publishing
/// its new state and must finish that combine when re-run (`combq.rs`,
/// "Published before a thread crash"). Row
/// `explore:combq-mmt@thread-crash-sweep`.
#[test]
fn combq_mmt_thread_crash_sweep() {
    use perdure_check::explore::{explore, CrashPoints, ExploreConfig, SchedulerKind};
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    setting();
    let name = "combq-mmt";
    let scenario = perdure_harness::memento::scenarios::all()
        .into_iter()
        .find(|s| s.name() == name)
        .expect("scenario");
    let t = std::time::Instant::now();
    let before = perdure_harness::memento::scenarios::thread_crashes_injected();
    let mut total = perdure_check::explore::ExploreReport::default();
    for n in 0..48u64 {
        std::env::set_var("PERDURE_THREAD_CRASH_AT", n.to_string());
        let r = explore(
            scenario.clone(),
            &ExploreConfig {
                seed: 7 + n,
                schedules: 1,
                scheduler: SchedulerKind::Random,
                crash_points: CrashPoints::All,
                images: 2,
                ..ExploreConfig::default()
            },
        );
        total.executions += r.executions;
        total.operations += r.operations;
        total.crash_points += r.crash_points;
        total.sampled_points += r.sampled_points;
        total.images_checked += r.images_checked;
        total.violations.extend(r.violations);
    }
    std::env::remove_var("PERDURE_THREAD_CRASH_AT");
    let injected = perdure_harness::memento::scenarios::thread_crashes_injected() - before;
    let explored = format!(
        "{} schedules (a thread crash after event n of every operation, n = 0..47), {} operations, {injected} thread crashes, {} crash points ({} sampled images), {} images checked",
        total.executions,
        total.operations,
        total.crash_points,
        total.sampled_points,
        total.images_checked
    );
    let row = format!("explore:{name}@thread-crash-sweep");
    if let Some(why) = perdure_harness::report::explore_row(&row, name, &total, &explored, None, t)
    {
        panic!("{why}");
    }
    assert!(injected > 0 && total.images_checked > 0);
}
