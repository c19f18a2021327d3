//! The crash explorer end to end on the tutorial log: the correct log passes
//! every crash point and every image; with the record fence removed the
//! explorer finds the bug and the counterexample reproduces from its seed.

use perdure_check::explore::{explore, scenarios, CrashPoints, ExploreConfig, SchedulerKind};
use perdure_pm::px86::Coverage;

use crate::common;

fn cfg(seed: u64, schedules: usize) -> ExploreConfig {
    ExploreConfig {
        seed,
        schedules,
        scheduler: SchedulerKind::Random,
        crash_points: CrashPoints::All,
        images: 1 << 16,
        ..ExploreConfig::default()
    }
}

#[test]
fn the_log_survives_every_crash_point_and_image() {
    let sc = scenarios::by_name("log").unwrap();
    let r = explore(sc, &cfg(7, 20));
    println!("log: {}", r.summary());
    assert_eq!(r.executions, 20);
    assert!(r.crash_points > 100, "{}", r.summary());
    assert_eq!(
        r.sampled_points,
        0,
        "every image enumerated: {}",
        r.summary()
    );
    assert_eq!(r.images_checked as u128, r.images_allowed);
    assert!(
        r.violations.is_empty(),
        "{:?}",
        r.violations.first().map(|v| (&v.reason, &v.history))
    );
    let row = common::report_row(
        "explore:log",
        "explore",
        "pass",
        &r.summary(),
        "every crash point, every Px86 image; random scheduler, seed 7",
        None,
    );
    println!("{row}");
}

#[test]
fn the_log_without_its_record_fence_is_caught_and_reproducible() {
    let sc = scenarios::by_name("log-nofence").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = cfg(7, 20);
    c.out_dir = Some(dir.path().to_owned());
    let r = explore(sc.clone(), &c);
    println!("log-nofence: {}", r.summary());
    let v = common::first_dl_violation(&r, "the explorer must find the missing fence");
    let path = v.history_path.as_ref().expect("history written");
    let written = std::fs::read_to_string(path).unwrap();
    assert_eq!(written, v.history);
    // The page beside it marks the crash point and what the image lost: the
    // bug is a record lost while the commit word covering it persisted.
    let page = v.html_path.as_ref().expect("page written");
    assert_eq!(page, &path.with_extension("html"));
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains(&format!(
        "crash point: after persistence event {}",
        v.crash_event
    )));
    assert!(html.contains("<g class=\"crash crash-point\""));
    assert!(html.contains("data-verdict=\"fail\""));
    assert!(
        v.image_lines.iter().any(|l| l.kept < l.writes.len()),
        "{:?}",
        v.image_lines
    );
    assert!(html.contains("lost: [0x"), "the lost writes are listed");
    // The counterexample is a real one: the standalone checker rejects it.
    assert!(perdure_check::explore::check_history(&written).is_err());
    // Same seed, same schedules: the same counterexample.
    let again = explore(sc, &c);
    let w = again.violations.first().unwrap();
    assert_eq!(
        (w.schedule, w.crash_event, w.image),
        (v.schedule, v.crash_event, v.image)
    );
    assert_eq!(w.history, v.history);
    let detail = format!(
        "mutant caught as expected at schedule {} event {} image {}; reproduced from seed 7",
        v.schedule, v.crash_event, v.image
    );
    let row = common::report_row(
        "explore:log-nofence",
        "explore",
        "pass",
        &r.summary(),
        &detail,
        None,
    );
    println!("{row}");
}

#[test]
fn images_are_sampled_when_asked() {
    let sc = scenarios::by_name("log").unwrap();
    let mut c = cfg(3, 3);
    c.images = 1;
    c.crash_points = CrashPoints::Sample(5);
    let r = explore(sc, &c);
    assert_eq!(r.crash_points, 15);
    assert!(r.images_checked <= 15);
    let _ = Coverage::Exhaustive;
}
