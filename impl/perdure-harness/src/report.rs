//! The PERDURE-CHECK rows of the constructions' explorer and mutant tests,
//! written once for the three crates (their `tests/` call it).
//!
//! `tools/verify.py` reads every line of a test's output that holds
//! `PERDURE-CHECK {json}`: `name`, `kind` (here always `explore`), `status`
//! (`pass`, `fail` or `skip`), `explored`, `seconds`, and `detail` where
//! the row has one. An exploration row says what the explorer covered and
//! fails on a violation ([`explore_row`]); a mutant row runs a check as
//! written and with the mutant switched on, and passes when only the
//! mutant fails it ([`MutantTrial`]).

use perdure_check::explore::{CreationReport, ExploreReport};
use serde_json::json;
use std::time::Instant;

/// Prints the row `PERDURE-CHECK {json}` of kind `explore`, timed from
/// `started`.
pub fn print_row(name: &str, status: &str, explored: &str, detail: Option<&str>, started: Instant) {
    let mut row = json!({
        "name": name,
        "kind": "explore",
        "status": status,
        "explored": explored,
        "seconds": started.elapsed().as_secs_f64(),
    });
    if let Some(detail) = detail {
        row["detail"] = json!(detail);
    }
    println!("PERDURE-CHECK {row}");
}

/// The row of a creation-crash check
/// ([`perdure_check::explore::explore_creation`]): passes when images were
/// checked and none broke the check; otherwise `Some` with why (the first
/// violation and its history).
pub fn creation_row(row: &str, r: &CreationReport, started: Instant) -> Option<String> {
    let ok = r.violations.is_empty() && r.images_checked > 0;
    print_row(
        row,
        if ok { "pass" } else { "fail" },
        &r.summary(),
        Some("a crash point after every persistence event of the object's creation; each image recovers as the empty object or refuses with an error"),
        started,
    );
    match r.violations.first() {
        Some((why, history)) => Some(format!("{row}: {why}\n{history}")),
        None if r.images_checked == 0 => Some(format!("{row}: no crash point during the creation")),
        None => None,
    }
}

/// What a report explored, in words: schedules, operations, crash points
/// reached and explored, images checked of those Px86 allows.
pub fn explored(r: &ExploreReport) -> String {
    format!(
        "{}: {} schedules, {} operations, {} crash points reached, {} explored ({} with sampled images), {} images checked of {} Px86 allows there",
        r.model.name(),
        r.executions,
        r.operations,
        r.crash_points_seen,
        r.crash_points,
        r.sampled_points,
        r.images_checked,
        r.images_allowed
    )
}

/// The first violation of the exploration of scenario `scenario`, in words
/// (how many, the first's reason, schedule, crash event, image and
/// history); `None` when there is none.
pub fn first_violation(scenario: &str, r: &ExploreReport) -> Option<String> {
    let v = &r.violations;
    v.first().map(|f| {
        format!(
            "{scenario}: {} violation(s); first: {} (schedule {}, crash event {}, image {})\n{}",
            v.len(),
            f.reason,
            f.schedule,
            f.crash_event,
            f.image,
            f.history
        )
    })
}

/// Prints the row `name` of the exploration of `scenario` that must find no
/// violation (status `pass` or `fail`); returns its first violation, if
/// any ([`first_violation`]).
pub fn explore_row(
    name: &str,
    scenario: &str,
    report: &ExploreReport,
    explored: &str,
    detail: Option<&str>,
    started: Instant,
) -> Option<String> {
    let failed = first_violation(scenario, report);
    let status = if failed.is_none() { "pass" } else { "fail" };
    print_row(name, status, explored, detail, started);
    failed
}

/// A check run on the code as written and with a mutant switched on: `Ok`
/// with what it covered, or `Err` with what went wrong (the first line
/// says it, a counterexample may follow).
#[derive(Clone, Debug)]
pub struct MutantTrial {
    /// The check on the code as written (must be `Ok`).
    pub baseline: Result<String, String>,
    /// The check with the mutant on (must be `Err`).
    pub mutated: Result<String, String>,
    /// When the trial started.
    pub started: Instant,
}

impl MutantTrial {
    /// Switches the mutants off (`set(None)`) and runs `baseline`, switches
    /// `m` on and runs `mutated`, then switches it off again. The mutant
    /// switch is process-global: the caller holds its lock.
    pub fn run<M>(
        set: impl Fn(Option<M>),
        m: M,
        baseline: impl FnOnce() -> Result<String, String>,
        mutated: impl FnOnce() -> Result<String, String>,
    ) -> MutantTrial {
        let started = Instant::now();
        set(None);
        let baseline = baseline();
        set(Some(m));
        let mutated = mutated();
        set(None);
        MutantTrial {
            baseline,
            mutated,
            started,
        }
    }

    /// The code as written passes and the mutant fails.
    pub fn caught(&self) -> bool {
        self.baseline.is_ok() && self.mutated.is_err()
    }

    /// `pass` if caught, else `fail`.
    pub fn status(&self) -> &'static str {
        if self.caught() {
            "pass"
        } else {
            "fail"
        }
    }

    /// What `r` covered, or the first line of what went wrong.
    pub fn first_line(r: &Result<String, String>) -> String {
        match r {
            Ok(s) => s.clone(),
            Err(s) => s.lines().next().unwrap_or_default().to_owned(),
        }
    }

    /// Prints the row `name` with `status` and `explored`.
    pub fn print_row(&self, name: &str, status: &str, explored: &str) {
        print_row(name, status, explored, None, self.started);
    }

    /// Prints the row `row` (`pass` if caught, else `fail`) and the
    /// counterexample of mutant `mutant`, if it failed; adds a line to
    /// `missed` if it was not caught.
    pub fn report(&self, row: &str, mutant: &str, explored: &str, missed: &mut Vec<String>) {
        self.print_row(row, self.status(), explored);
        if let Err(why) = &self.mutated {
            println!("counterexample for {mutant}:\n{why}");
        }
        if !self.caught() {
            missed.push(self.missed(mutant));
        }
    }

    /// The line saying mutant `mutant` was not caught.
    pub fn missed(&self, mutant: &str) -> String {
        format!(
            "{mutant}: as written {:?}, mutant {:?}",
            self.baseline, self.mutated
        )
    }
}

/// A TSO-only mutant's trial: the check on the code as written under Px86,
/// on the mutant under sequential consistency, and on the mutant under
/// Px86. Caught when only the last fails: the mutant is wrong, and only a
/// store buffer shows it.
#[derive(Debug)]
pub struct TsoMutantTrial {
    /// The code as written, Px86.
    pub baseline_px86: Result<String, String>,
    /// The mutant, Sc.
    pub mutant_sc: Result<String, String>,
    /// The mutant, Px86.
    pub mutant_px86: Result<String, String>,
    started: Instant,
}

impl TsoMutantTrial {
    /// Runs `check(model)` on the code as written under Px86, then with `m`
    /// switched on (through `set`) under Sc and under Px86; switches it off
    /// again. The mutant switch is process-global: the caller holds its lock.
    pub fn run<M: Copy>(
        set: impl Fn(Option<M>),
        m: M,
        check: impl Fn(perdure_pm::sim::SimModel) -> Result<String, String>,
    ) -> TsoMutantTrial {
        use perdure_pm::sim::SimModel;
        let started = Instant::now();
        set(None);
        let baseline_px86 = check(SimModel::Px86);
        set(Some(m));
        let mutant_sc = check(SimModel::Sc);
        let mutant_px86 = check(SimModel::Px86);
        set(None);
        TsoMutantTrial {
            baseline_px86,
            mutant_sc,
            mutant_px86,
            started,
        }
    }

    /// [`TsoMutantTrial::run`], then the row `row` of mutant `name`
    /// ([`TsoMutantTrial::report`]); panics if the mutant was not caught.
    pub fn check<M: Copy>(
        set: impl Fn(Option<M>),
        m: M,
        row: &str,
        name: &str,
        check: impl Fn(perdure_pm::sim::SimModel) -> Result<String, String>,
    ) {
        let mut missed = Vec::new();
        TsoMutantTrial::run(set, m, check).report(row, name, &mut missed);
        assert!(missed.is_empty(), "not caught:\n{}", missed.join("\n"));
    }

    /// As written passes under Px86, the mutant passes under Sc and fails
    /// under Px86.
    pub fn caught(&self) -> bool {
        self.baseline_px86.is_ok() && self.mutant_sc.is_ok() && self.mutant_px86.is_err()
    }

    /// Prints the row `row` (`pass` if caught, else `fail`) and the Px86
    /// counterexample; adds a line to `missed` if not caught.
    pub fn report(&self, row: &str, mutant: &str, missed: &mut Vec<String>) {
        let line = MutantTrial::first_line;
        let explored = format!(
            "as written, px86: {}; mutant, sc: {}; mutant, px86: {}",
            line(&self.baseline_px86),
            line(&self.mutant_sc),
            line(&self.mutant_px86),
        );
        print_row(
            row,
            if self.caught() { "pass" } else { "fail" },
            &explored,
            Some("a TSO-only mutant: caught under Px86 (store buffers for pool and DRAM alike), passes under sequential consistency"),
            self.started,
        );
        if let Err(why) = &self.mutant_px86 {
            println!("counterexample for {mutant} (px86):\n{why}");
        }
        if !self.caught() {
            missed.push(format!(
                "{mutant}: as written px86 {:?}, mutant sc {:?}, mutant px86 {:?}",
                self.baseline_px86, self.mutant_sc, self.mutant_px86
            ));
        }
    }
}

/// Runs `f`, turning a panic into `Err` with its message: shuttle fails a
/// schedule that exceeds its step budget (a likely livelock) by panicking.
pub fn catch_panic<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic without a message".into())
    })
}

/// One forced window of a TSO-only mutant's check (shuttle build): `body`
/// runs once per schedule of `schedules` seeded random ones, with at most
/// `max_steps` steps each, and returns its verdict; the first failing
/// schedule's verdict is kept. A panic — shuttle's step budget exceeded, a
/// livelock — becomes `Err` with what `on_panic` makes of its first line.
/// `what` says what was held where, for the `Ok` line.
#[cfg(all(perdure_shuttle, not(perdure_loom)))]
pub fn held_window(
    model: perdure_pm::sim::SimModel,
    what: &str,
    schedules: usize,
    max_steps: usize,
    on_panic: impl FnOnce(&str) -> String,
    body: impl Fn() -> Result<String, String> + Send + Sync + 'static,
) -> Result<String, String> {
    use std::sync::{Arc, Mutex};
    let out: Arc<Mutex<Option<Result<String, String>>>> = Arc::default();
    let o = out.clone();
    let run = move || {
        let verdict = body();
        let mut g = o.lock().unwrap_or_else(|e| e.into_inner());
        if !matches!(*g, Some(Err(_))) {
            *g = Some(verdict);
        }
    };
    let mut cfg = shuttle::Config::new();
    cfg.max_steps = shuttle::MaxSteps::FailAfter(max_steps);
    let ran = catch_panic(|| {
        shuttle::Runner::new(
            shuttle::scheduler::RandomScheduler::new_from_seed(
                perdure_pm::sync::seeded::seed(),
                schedules,
            ),
            cfg,
        )
        .run(run)
    });
    let tag = model.name();
    match ran {
        Err(why) => Err(format!(
            "{tag}: {}",
            on_panic(why.lines().next().unwrap_or_default())
        )),
        Ok(_) => out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_else(|| Err("no schedule ran".into()))
            .map(|s| format!("{tag}: {schedules} random schedules, {what}: {s}"))
            .map_err(|e| format!("{tag}: {e}")),
    }
}

/// The simulator of a [`held_window`] run: `model`, no random drains (a
/// buffer drains at its thread's locked instructions, `SeqCst` stores,
/// fences, `psync`s, spin-loop hints and end — late, but always
/// eventually, as TSO requires), threads told apart by shuttle task.
#[cfg(all(perdure_shuttle, not(perdure_loom)))]
pub fn held_sim(model: perdure_pm::sim::SimModel) -> perdure_pm::Sim {
    perdure_pm::Sim::new(perdure_pm::sim::SimOptions {
        model,
        drain_percent: 0,
        thread_id: Some(shuttle_task),
        ..perdure_pm::sim::SimOptions::default()
    })
}

/// The running shuttle task's id (`usize::MAX` outside a task).
#[cfg(all(perdure_shuttle, not(perdure_loom)))]
pub fn shuttle_task() -> usize {
    shuttle::current::try_get_current_task().map_or(usize::MAX, usize::from)
}
