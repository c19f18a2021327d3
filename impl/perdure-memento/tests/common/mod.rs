//! What the Memento explorer test binaries share.

use perdure_check::explore::{explore, CrashPoints, ExploreConfig, SchedulerKind};
use perdure_harness::memento::scenarios;
use perdure_harness::report;

/// 10 with `PERDURE_DEPTH=deep`, else 1.
pub fn depth_factor() -> usize {
    if std::env::var("PERDURE_DEPTH").as_deref() == Ok("deep") {
        10
    } else {
        1
    }
}

/// Explores scenario `name` over `schedules` random schedules (×10 with
/// `PERDURE_DEPTH=deep`), every crash point, up to 16 images each; prints a
/// PERDURE-CHECK row named `explore:{name}{suffix}` and fails on a violation.
pub fn run(name: &str, schedules: usize, suffix: &str) {
    run_with(name, suffix, random(schedules, 7));
}

/// [`run`] with the explorer's `seed` (which also draws the schedules and
/// the scenario's workload): for a scenario whose rare paths some seeds'
/// first schedules reach and others' do not (the crash-site coverage of
/// the report says which).
#[allow(dead_code)] // not every test binary uses it
pub fn run_seeded(name: &str, schedules: usize, seed: u64) {
    run_with(name, "", random(schedules, seed));
}

/// Random schedules (×10 with `PERDURE_DEPTH=deep`), every crash point, up
/// to 16 images each.
fn random(schedules: usize, seed: u64) -> ExploreConfig {
    ExploreConfig {
        seed,
        schedules: schedules * depth_factor(),
        scheduler: SchedulerKind::Random,
        crash_points: CrashPoints::All,
        images: 16,
        ..ExploreConfig::default()
    }
}

/// Crashes during recovery: `points` sampled crash points of one schedule
/// (×10 with `PERDURE_DEPTH=deep`), 2 images each, and inside each image's
/// recovery 4 sampled crash points with 2 images each, recovered again;
/// reported as `explore:{name}@recovery-crash`.
#[allow(dead_code)] // not every test binary uses it
pub fn run_recovery_crashes(name: &str, points: usize) {
    run_recovery_crashes_seeded(name, points, 11, 4)
}

/// [`run_recovery_crashes`] with the explorer's `seed` (which also draws
/// the scenario's workload) and `inner` sampled crash points inside each
/// recovery: for a scenario whose recovery does more when the workload has
/// a given mix (SOFT's rebuild unlinks a deleted node only if there was a
/// delete), or has a rare path (SOFT's insert recovery finding its node
/// took effect, whose write-back 4 inner points never sample).
#[allow(dead_code)] // not every test binary uses it
pub fn run_recovery_crashes_seeded(name: &str, points: usize, seed: u64, inner: usize) {
    run_recovery_crashes_over(name, 1, points, seed, inner)
}

/// [`run_recovery_crashes_seeded`] over `schedules` schedules (`points`
/// sampled crash points each): for a recovery path only some schedules
/// lead to (Clevel-mmt's `attach` settling a move a crash cut off needs a
/// schedule in which the rehash moves an item).
#[allow(dead_code)] // not every test binary uses it
pub fn run_recovery_crashes_over(
    name: &str,
    schedules: usize,
    points: usize,
    seed: u64,
    inner: usize,
) {
    run_with(
        name,
        "@recovery-crash",
        ExploreConfig {
            seed,
            schedules,
            scheduler: SchedulerKind::Random,
            crash_points: CrashPoints::Sample(points * depth_factor()),
            images: 2,
            recovery_crashes: inner,
            ..ExploreConfig::default()
        },
    );
}

/// Exhaustive schedules, bounded: shuttle's DFS over the first `schedules`
/// schedules (×10 with `PERDURE_DEPTH=deep`) of scenario `name`, in the
/// order DFS enumerates them (the last choices varied first), every crash
/// point, up to 16 images each; reported as `explore:{name}@dfs`. Beside
/// the random and PCT rows, it reaches the schedules that differ from one
/// another in one late choice, which random sampling rarely does twice.
#[allow(dead_code)] // not every test binary uses it
pub fn run_dfs(name: &str, schedules: usize) {
    run_with(
        name,
        "@dfs",
        ExploreConfig {
            seed: 13,
            schedules: schedules * depth_factor(),
            scheduler: SchedulerKind::Dfs,
            crash_points: CrashPoints::All,
            images: 16,
            ..ExploreConfig::default()
        },
    );
}

/// Crashes while scenario `name`'s object is created
/// ([`perdure_check::explore::explore_creation`]): every crash point of the
/// creation, up to 4 images each (40 with `PERDURE_DEPTH=deep`); reported
/// as `explore:{name}@create-crash`.
#[allow(dead_code)] // not every test binary uses it
pub fn run_creation(name: &str) {
    let scenario = scenario(name);
    let cfg = ExploreConfig {
        seed: 17,
        images: 4 * depth_factor() as u64,
        ..ExploreConfig::default()
    };
    let t = std::time::Instant::now();
    let r = perdure_check::explore::explore_creation(scenario, &cfg);
    if let Some(why) = report::creation_row(&format!("explore:{name}@create-crash"), &r, t) {
        panic!("{why}");
    }
}

/// The Memento scenario named `name`.
fn scenario(name: &str) -> std::sync::Arc<dyn perdure_check::explore::Scenario> {
    scenarios::all()
        .into_iter()
        .find(|s| s.name() == name)
        .expect("scenario exists")
}

fn run_with(name: &str, suffix: &str, cfg: ExploreConfig) {
    let scenario = scenario(name);
    let t = std::time::Instant::now();
    let report = explore(scenario, &cfg);
    let explored = format!(
        "{} schedules, {} operations, {} crash points ({} sampled images), {} images checked{}",
        report.executions,
        report.operations,
        report.crash_points,
        report.sampled_points,
        report.images_checked,
        if report.recovery_crash_points > 0 {
            format!(
                "; a second crash at {} points inside their recoveries, {} images checked",
                report.recovery_crash_points, report.recovery_images_checked
            )
        } else {
            String::new()
        }
    );
    let row = format!("explore:{name}{suffix}");
    if let Some(why) = report::explore_row(&row, name, &report, &explored, None, t) {
        panic!("{why}");
    }
    assert!(report.crash_points > 0 && report.images_checked > 0);
    if cfg.recovery_crashes > 0 {
        assert!(
            report.recovery_images_checked > 0,
            "no crash inside a recovery"
        );
    }
}
