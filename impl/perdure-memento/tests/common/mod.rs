//! What the Memento explorer test binaries share.

use perdure_check::explore::{explore, CrashPoints, ExploreConfig, SchedulerKind};
use perdure_memento::scenarios;

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
            "name": format!("explore:{name}{suffix}"),
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
