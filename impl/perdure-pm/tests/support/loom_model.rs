//! The loom model set-up shared by the `loom_*` tests of perdure-pm and
//! perdure-ptm (included by `#[path]`): how a test's preemption bound is
//! chosen (`LOOM_MAX_PREEMPTIONS`, `PERDURE_DEPTH=deep`), the count of
//! explored interleavings, and the `PERDURE-CHECK` line `make verify` reads.
//!
//! Only test code: loom's exhaustive exploration of the `sync` facade, no
//! crashes of its own (a test that wants crash images injects them).

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// How a test's preemption bound is chosen.
#[derive(Clone, Copy, Debug)]
pub enum Preemptions {
    /// `LOOM_MAX_PREEMPTIONS` if set; else `normal`, or `deep` under
    /// `PERDURE_DEPTH=deep`.
    Default { normal: usize, deep: usize },
    /// The given bound (one more under `PERDURE_DEPTH=deep`), or
    /// `LOOM_MAX_PREEMPTIONS` if that is lower.
    AtMost(usize),
}

/// What one loom exploration covered.
#[derive(Clone, Copy, Debug)]
pub struct Explored {
    /// Executions loom ran (interleavings explored).
    pub runs: usize,
    /// The preemption bound it ran under.
    pub bound: Option<usize>,
    /// Wall-clock seconds of the exploration.
    pub seconds: f64,
}

impl Explored {
    /// The `explored` field of the `PERDURE-CHECK` line.
    pub fn interleavings(&self) -> String {
        format!(
            "{} interleavings (preemption bound {:?})",
            self.runs, self.bound
        )
    }
}

/// Whether `make verify DEPTH=deep` asked for the deeper bounds.
fn deep() -> bool {
    std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "deep")
}

/// Runs `f` under loom in every interleaving within the bound chosen by
/// `preemptions`, with loom's branch budget raised to `max_branches` if
/// given (setting up a pool is many atomic accesses, each a branch point).
pub fn explore<F: Fn() + Sync + Send + 'static>(
    preemptions: Preemptions,
    max_branches: Option<usize>,
    f: F,
) -> Explored {
    // A counter per call (tests run in parallel), outside loom's view.
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let mut b = loom::model::Builder::new();
    if let Some(max) = max_branches {
        b.max_branches = max;
    }
    b.preemption_bound =
        match preemptions {
            Preemptions::Default { normal, deep: d } => Some(
                b.preemption_bound
                    .unwrap_or(if deep() { d } else { normal }),
            ),
            Preemptions::AtMost(bound) => {
                let ours = if deep() { bound + 1 } else { bound };
                Some(b.preemption_bound.map_or(ours, |env| env.min(ours)))
            }
        };
    let bound = b.preemption_bound;
    let t = std::time::Instant::now();
    b.check(move || {
        counter.fetch_add(1, Relaxed);
        f()
    });
    Explored {
        runs: runs.load(Relaxed),
        bound,
        seconds: t.elapsed().as_secs_f64(),
    }
}

/// Prints the passing `PERDURE-CHECK` line of the loom row `name`, with the
/// exploration's seconds if `seconds` is given.
pub fn report(name: &str, explored: &str, detail: &str, seconds: Option<f64>) {
    let seconds = seconds.map_or(String::new(), |s| format!(",\"seconds\":{s}"));
    println!(
        "PERDURE-CHECK {{\"name\":\"{name}\",\"kind\":\"loom\",\"status\":\"pass\",\"explored\":\"{explored}\",\"detail\":\"{detail}\"{seconds}}}"
    );
}

/// [`explore`], then [`report`] without seconds.
pub fn check<F: Fn() + Sync + Send + 'static>(
    name: &str,
    preemptions: Preemptions,
    max_branches: Option<usize>,
    detail: &str,
    f: F,
) {
    let e = explore(preemptions, max_branches, f);
    report(name, &e.interleavings(), detail, None);
}
