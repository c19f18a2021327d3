//! What the PTM explorer test binaries share: running a scenario of
//! `perdure_harness::ptm::scenarios` and printing its PERDURE-CHECK row.

#![allow(dead_code)] // not every test binary uses all of it

use perdure_check::explore::{explore, CrashPoints, ExploreConfig, ExploreReport, SchedulerKind};
use perdure_harness::ptm::scenarios;
use perdure_harness::report;
pub use perdure_harness::report::explored;

/// 10 with `PERDURE_DEPTH=deep`, else 1.
pub fn depth_factor() -> usize {
    if std::env::var("PERDURE_DEPTH").as_deref() == Ok("deep") {
        10
    } else {
        1
    }
}

/// Shuttle steps per schedule, recoveries included: every atomic is a step
/// in this build, and each of hundreds of images is opened, copied and
/// updated after the run.
pub const MAX_STEPS: usize = 1 << 32;

/// `PERDURE_PROGRESS=1`: a progress line per schedule on stderr.
fn progress() -> usize {
    usize::from(std::env::var("PERDURE_PROGRESS").as_deref() == Ok("1"))
}

/// How much of a scenario to explore.
#[derive(Clone, Copy, Debug)]
pub enum Depth {
    /// Random schedules, every crash point, up to 6 images each (a point
    /// has far more: every line a transaction wrote to a replica that is not
    /// designated stays unsettled until that replica is next designated).
    Every {
        /// Schedules (×10 deep).
        schedules: usize,
    },
    /// Random schedules, a seeded sample of crash points per schedule, up
    /// to 6 images each.
    Sampled {
        /// Schedules (×10 deep).
        schedules: usize,
        /// Crash points per schedule (×10 deep).
        points: usize,
    },
}

/// The explorer configuration of `depth`.
pub fn config(depth: Depth) -> ExploreConfig {
    let f = depth_factor();
    match depth {
        Depth::Every { schedules } => ExploreConfig {
            seed: 7,
            schedules: schedules * f,
            scheduler: SchedulerKind::Random,
            crash_points: CrashPoints::All,
            images: 6,
            max_steps: MAX_STEPS,
            progress_every: progress(),
            ..ExploreConfig::default()
        },
        Depth::Sampled { schedules, points } => ExploreConfig {
            seed: 7,
            schedules: schedules * f,
            scheduler: SchedulerKind::Random,
            crash_points: CrashPoints::Sample(points * f),
            images: 6,
            max_steps: MAX_STEPS,
            progress_every: progress(),
            ..ExploreConfig::default()
        },
    }
}

/// Explores scenario `name` with `cfg`.
pub fn explore_named(name: &str, cfg: &ExploreConfig) -> ExploreReport {
    let scenario = scenarios::by_name(name).unwrap_or_else(|| panic!("no scenario {name}"));
    explore(scenario, cfg)
}

/// Explores scenario `name` at `depth`; prints a PERDURE-CHECK row named
/// `explore:ptm/{name}` and fails on a violation.
pub fn run(name: &str, depth: Depth) {
    run_as("ptm", name, depth)
}

/// [`run`], the row named `explore:{group}/{name}` (perdure-kv's
/// `tests/shuttle_explore_kv.rs` includes this file for its `kv` rows).
pub fn run_as(group: &str, name: &str, depth: Depth) {
    let cfg = config(depth);
    let t = std::time::Instant::now();
    let report = explore_named(name, &cfg);
    let row = format!("explore:{group}/{name}");
    if let Some(why) = report::explore_row(&row, name, &report, &explored(&report), Some(DETAIL), t)
    {
        panic!("{why}");
    }
    assert!(report.crash_points > 0 && report.images_checked > 0);
}

/// The `detail` of the scenarios' rows.
const DETAIL: &str = "shuttle random schedules (every atomic a scheduling point), Px86 crash images with volatile memory zeroed, null recovery, the recovered PTM read whole and updated, durable linearizability checked; not covered: crashes during recovery, thread crashes, more than 2 threads";
