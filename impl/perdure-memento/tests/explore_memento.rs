//! The crash explorer on every Memento scenario — the structures, and the
//! primitives as `register`s (`src/scenarios_prim.rs`: detectable CAS under
//! 2 and 3 threads, CHECKPOINT of one- and two-line slots): schedules × every crash
//! point × Px86 crash images, each recovered (runtime open, structure
//! recovery, cut-off operations resumed with their mementos) and checked
//! for durable linearizability and detectability. Reports a PERDURE-CHECK
//! row per scenario for `make verify`.

use perdure_check::explore::{explore, CrashPoints, ExploreConfig, SchedulerKind};
use perdure_memento::scenarios;

fn depth_factor() -> usize {
    if std::env::var("PERDURE_DEPTH").as_deref() == Ok("deep") {
        10
    } else {
        1
    }
}

fn run(name: &str, schedules: usize) {
    let scenario = scenarios::all()
        .into_iter()
        .find(|s| s.name() == name)
        .expect("scenario exists");
    let cfg = ExploreConfig {
        seed: 7,
        schedules: schedules * depth_factor(),
        scheduler: SchedulerKind::Random,
        crash_points: CrashPoints::All,
        images: 16,
        ..ExploreConfig::default()
    };
    let t = std::time::Instant::now();
    let report = explore(scenario, &cfg);
    let v = &report.violations;
    println!(
        "PERDURE-CHECK {}",
        serde_json::json!({
            "name": format!("explore:{name}"),
            "kind": "explore",
            "status": if v.is_empty() { "pass" } else { "fail" },
            "explored": format!(
                "{} schedules, {} operations, {} crash points ({} sampled images), {} images checked",
                report.executions, report.operations, report.crash_points,
                report.sampled_points, report.images_checked
            ),
            "seconds": t.elapsed().as_secs_f64(),
        })
    );
    assert!(
        v.is_empty(),
        "{name}: {} violation(s); first: {} (schedule {}, crash event {}, image {})\n{}",
        v.len(),
        v[0].reason,
        v[0].schedule,
        v[0].crash_event,
        v[0].image,
        v[0].history
    );
    assert!(report.crash_points > 0 && report.images_checked > 0);
}

#[test]
fn msq_mmt_indel_survives_every_crash_point() {
    run("msq-mmt-indel", 4);
}

#[test]
fn msq_mmt_vol_survives_every_crash_point() {
    run("msq-mmt-vol", 4);
}

#[test]
fn msq_mmt_cas_survives_every_crash_point() {
    run("msq-mmt-cas", 4);
}

#[test]
fn treiber_mmt_survives_every_crash_point() {
    run("treiber-mmt", 4);
}

#[test]
fn elim_stack_mmt_survives_every_crash_point() {
    run("elim-stack-mmt", 4);
}

#[test]
fn combq_mmt_survives_every_crash_point() {
    run("combq-mmt", 4);
}

#[test]
fn soft_mmt_survives_every_crash_point() {
    run("soft-mmt", 4);
}

#[test]
fn cas_register_2_threads_survives_every_crash_point() {
    run("cas-register-2", 8);
}

#[test]
fn cas_register_3_threads_survives_every_crash_point() {
    run("cas-register-3", 8);
}

#[test]
fn checkpoint_one_line_survives_every_crash_point() {
    run("checkpoint-1line", 1);
}

#[test]
fn checkpoint_two_lines_survives_every_crash_point() {
    run("checkpoint-2line", 1);
}
