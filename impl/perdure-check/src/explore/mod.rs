//! The crash explorer: schedules × crash points × crash images, each
//! recovered and checked for durable linearizability.
//!
//! A [`Scenario`] builds a durable object in a pool on the [`Sim`] backend
//! and names the operations each thread performs. For every schedule the
//! explorer:
//!
//! 1. runs the threads as shuttle threads under a seeded scheduler (random,
//!    PCT or exhaustive DFS). The `Sim` backend yields to shuttle before every
//!    persistent-memory access, write-back and fence, so the schedules
//!    interleave the threads at every PM access (shared DRAM state that does
//!    not go through the pool is interleaved only at those points; the loom
//!    and shuttle tests of each crate cover it);
//! 2. records the history (`invoke`/`return`) and, through `Sim`'s crash hook,
//!    captures a [`CrashPoint`] after every persistence event, with the
//!    history prefix at that moment; the end of the run is a crash point too;
//! 3. for each crash point (all, or a seeded sample), enumerates the crash
//!    images Px86 allows (all when few, else a seeded uniform sample), and for
//!    each: builds a pool holding the image (volatile regions zeroed or
//!    filled with garbage), runs the scenario's recovery, lets each cut-off
//!    operation report its outcome if the object is detectable, runs the
//!    scenario's recovering workload (calls that several shuttle threads
//!    make concurrently right after the crash, for lazily recovering
//!    constructions; none by default) and its observing operations, and
//!    checks the whole history — prefix, `crash`, `recover`s, the
//!    recovering threads' interleaved calls, observations — with the
//!    [durable-linearizability checker](crate::history).
//!
//! Everything is derived from one seed, so a violation is reproduced by
//! running again with the same seed and at least as many schedules; the
//! violation names the schedule, the crash point (the persistence event it
//! follows) and the image, and its history is written as ndjson, with an
//! HTML page of it beside ([`crate::history::render_html`]: the crash point
//! marked, and which writes of each unsettled line the image kept or lost).
//!
//! With [`ExploreConfig::recovery_crashes`] set, each image whose recovery
//! passed is crashed again *during* that recovery: the recovery's own
//! persistence events are captured as crash points, a seeded sample of them
//! is taken, and up to [`RECOVERY_IMAGES`] images of each are recovered from
//! scratch and checked against the same prefix (what the interrupted
//! recovery did is never reported to anyone, so the history is unchanged).
//!
//! What it does not cover: a third crash (during the second recovery); in
//! the `std` build, store buffers for memory outside the pool and
//! interleavings that differ only in accesses to it (the `--cfg
//! perdure_shuttle` build schedules and buffers the facade's DRAM atomics
//! too: `perdure_pm::sync::with_dram_tso`).

pub mod scenarios;

use perdure_pm::px86::Coverage;
use perdure_pm::sim::{CrashImage, CrashPoint, ImageLine, SimModel, SimOptions, VolatileFill};
use perdure_pm::{Pool, Sim};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// One operation call: its name and JSON arguments, as in `HISTORY.md`.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The operation.
    pub op: String,
    /// Its arguments.
    pub args: Vec<Value>,
}

impl Call {
    /// A call of `op` with `args`.
    pub fn new(op: &str, args: Vec<Value>) -> Call {
        Call {
            op: op.to_owned(),
            args,
        }
    }
}

/// A durable object and a workload to explore. Implemented once per
/// construction; the explorer does the rest.
pub trait Scenario: Send + Sync + 'static {
    /// Short name (`perdure explore NAME`).
    fn name(&self) -> &'static str;
    /// One line saying what it exercises.
    fn description(&self) -> &'static str;
    /// The sequential model of `HISTORY.md` its histories are checked
    /// against.
    fn object(&self) -> &'static str;
    /// The object's initial state, the history header's `init`
    /// (`HISTORY.md`), when [`Scenario::setup`] builds it non-empty; `None`:
    /// the model's default (empty).
    fn init(&self) -> Option<Value> {
        None
    }
    /// Pool size in bytes.
    fn pool_size(&self) -> u64 {
        64 << 10
    }
    /// Simulator options.
    fn sim_options(&self) -> perdure_pm::SimOptions {
        perdure_pm::SimOptions::default()
    }
    /// Why this build cannot explore the scenario (`None`: it can). The
    /// command line refuses such a scenario before exploring it.
    fn unavailable(&self) -> Option<String> {
        None
    }
    /// Builds the empty object, durably (not explored for crashes).
    fn setup(&self, pool: &Pool<Sim>) -> Result<(), String>;
    /// Builds the volatile state (DRAM) the threads of one run share — a
    /// runtime, a scratchpad — after `setup` (`after_crash` false) or after
    /// `recover` on a crash image (true). Objects without volatile state keep
    /// the default.
    fn open(&self, pool: &Arc<Pool<Sim>>, after_crash: bool) -> Result<Session, String> {
        let _ = (pool, after_crash);
        Ok(Arc::new(()))
    }
    /// The simulator of the pool the object lives in: by default the
    /// explorer's own pool's. An object that owns its pool (a PTM takes its
    /// pool by value) builds it in [`Scenario::open`] and returns its
    /// simulator here, from the session. The explorer installs its crash and
    /// yield hooks on it for the run and captures the end of the run from it.
    fn sim<'a>(&self, pool: &'a Pool<Sim>, session: &'a Session) -> &'a Sim {
        let _ = session;
        pool.backend()
    }
    /// The calls each thread makes, in order; one inner vector per thread.
    fn workload(&self, seed: u64) -> Vec<Vec<Call>>;
    /// Performs `call` as thread `at.thread`; returns the operation's
    /// result.
    fn apply(&self, at: At<'_>, call: &Call) -> Result<Value, String>;
    /// Recovery after a crash, on the crash image (before `open`).
    fn recover(&self, pool: &Pool<Sim>) -> Result<(), String>;
    /// For a detectable object: the outcome of `at.thread`'s call cut off
    /// by the crash (`Some(result)` if it took effect, reported as
    /// `recover`). `index` is the call's position in the thread's sequence
    /// (0-based).
    fn recover_call(&self, at: At<'_>, index: usize, call: &Call) -> Result<Option<Value>, String> {
        let _ = (at, index, call);
        Ok(None)
    }
    /// Calls that several threads make *concurrently* right after recovery
    /// (one inner vector per thread), before [`Scenario::observe`]: for a
    /// construction whose recovery runs lazily, concurrently with
    /// operations. They run as shuttle threads (every interleaving point of
    /// the run is one here too) and are recorded with their real
    /// interleaving, as `invoke`/`return` events after the `crash`. Default:
    /// none.
    fn recovering_workload(&self, session: &Session) -> Vec<Vec<Call>> {
        let _ = session;
        Vec::new()
    }
    /// Performs `call` of [`Scenario::recovering_workload`] as recovering
    /// thread `at.thread` (numbered from 0 after the crash).
    fn apply_recovering(&self, at: At<'_>, call: &Call) -> Result<Value, String> {
        self.apply(at, call)
    }
    /// Operations after recovery that observe the state (e.g. drain a
    /// queue), with their results; they run alone, as thread 0
    /// (`at.thread` is 0).
    fn observe(&self, at: At<'_>) -> Result<Vec<(Call, Value)>, String>;
}

/// Where a [`Scenario`]'s call runs: the pool, the run's volatile state
/// ([`Scenario::open`]) and the calling thread.
#[derive(Clone, Copy)]
pub struct At<'a> {
    /// The explorer's pool (the run's, or the recovered image's).
    pub pool: &'a Pool<Sim>,
    /// The volatile state of the run.
    pub session: &'a Session,
    /// The calling thread (0-based).
    pub thread: usize,
}

impl<'a> At<'a> {
    /// Thread `thread` of the run holding `pool` and `session`.
    pub fn new(pool: &'a Pool<Sim>, session: &'a Session, thread: usize) -> At<'a> {
        At {
            pool,
            session,
            thread,
        }
    }
}

/// The volatile state of one run ([`Scenario::open`]).
pub type Session = Arc<dyn std::any::Any + Send + Sync>;

/// Which shuttle scheduler picks the schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulerKind {
    /// Uniformly random choices at every scheduling point.
    Random,
    /// Probabilistic concurrency testing with this bug depth.
    Pct {
        /// The depth.
        depth: usize,
    },
    /// Exhaustive depth-first enumeration (small scenarios).
    Dfs,
}

/// Which crash points are explored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashPoints {
    /// After every persistence event.
    All,
    /// A seeded sample of this many per schedule.
    Sample(usize),
}

/// Explorer settings.
#[derive(Clone, Debug)]
pub struct ExploreConfig {
    /// The seed everything derives from.
    pub seed: u64,
    /// Schedules to run.
    pub schedules: usize,
    /// The scheduler.
    pub scheduler: SchedulerKind,
    /// Crash points per schedule.
    pub crash_points: CrashPoints,
    /// Images per crash point: all if at most this many, else a sample.
    pub images: u64,
    /// What volatile regions hold after a crash.
    pub volatile_fill: VolatileFill,
    /// Where failing histories are written (none: not written).
    pub out_dir: Option<PathBuf>,
    /// Stop after this many violations.
    pub max_violations: usize,
    /// Print a progress line to stderr every this many schedules (0: never).
    pub progress_every: usize,
    /// Crash points sampled inside the recovery of each checked image, each
    /// crashed again and recovered (0: no crashes during recovery).
    pub recovery_crashes: usize,
    /// Scheduling steps one schedule may take — its run and the recovery
    /// and observation of every image checked after it — before shuttle
    /// fails it as a likely livelock (shuttle's default, 1,000,000, unless
    /// set). Scenarios built with `--cfg perdure_shuttle`, where every
    /// atomic is a step, need more.
    pub max_steps: usize,
    /// The memory model the code runs under: Px86 with TSO store buffers
    /// (the default), or sequentially consistent interleavings. The
    /// scenario's own [`perdure_pm::SimOptions`] give the rest.
    pub model: SimModel,
    /// Under Px86, the chance (percent) that a store buffer's head drains at
    /// a scheduling point; `None`: 10%, 50% or 90%, varied per schedule.
    /// A low rate keeps stores buffered across long stretches of other
    /// threads' steps (the TSO-only mutants need that); any rate above 0
    /// drains every buffer eventually, as TSO requires.
    pub drain_percent: Option<u8>,
}

/// Images checked per crash point inside a recovery.
pub const RECOVERY_IMAGES: u64 = 2;

impl Default for ExploreConfig {
    fn default() -> Self {
        ExploreConfig {
            seed: 1,
            schedules: 20,
            scheduler: SchedulerKind::Random,
            crash_points: CrashPoints::All,
            images: 64,
            volatile_fill: VolatileFill::Zeroed,
            out_dir: None,
            max_violations: 1,
            progress_every: 0,
            recovery_crashes: 0,
            max_steps: 1_000_000,
            model: SimModel::Px86,
            drain_percent: None,
        }
    }
}

/// A history the checker rejected (or a recovery that failed).
#[derive(Clone, Debug)]
pub struct Violation {
    /// The seed of the run.
    pub seed: u64,
    /// The schedule (0-based) within the run.
    pub schedule: usize,
    /// The persistence event the crash point follows.
    pub crash_event: u64,
    /// The image (0-based) at that crash point.
    pub image: usize,
    /// What went wrong.
    pub reason: String,
    /// The failing history, ndjson.
    pub history: String,
    /// Where it was written, if it was.
    pub history_path: Option<PathBuf>,
    /// What the crash image kept and lost of each line the crash point left
    /// undetermined (empty: every line was settled, or no crash happened).
    /// For a second crash during recovery, the first crash's image.
    pub image_lines: Vec<ImageLine>,
    /// Where the HTML page of the history ([`crate::history::render_html`])
    /// was written, beside the history, if it was.
    pub html_path: Option<PathBuf>,
}

/// What an exploration did.
#[derive(Clone, Debug, Default)]
pub struct ExploreReport {
    /// Schedules run.
    pub executions: usize,
    /// Operations performed across schedules.
    pub operations: u64,
    /// Crash points reached.
    pub crash_points_seen: u64,
    /// Crash points explored.
    pub crash_points: u64,
    /// Crash images Px86 allows at the explored points (saturating).
    pub images_allowed: u128,
    /// Images recovered and checked.
    pub images_checked: u64,
    /// Crash points whose images were sampled rather than enumerated.
    pub sampled_points: u64,
    /// Crash points explored inside recoveries ([`ExploreConfig::recovery_crashes`]).
    pub recovery_crash_points: u64,
    /// Images of those recovered and checked.
    pub recovery_images_checked: u64,
    /// Violations found.
    pub violations: Vec<Violation>,
    /// The memory model the code ran under ([`perdure_pm::Sim::model`]).
    pub model: SimModel,
}

impl ExploreReport {
    /// One line for humans.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} executions, {} operations, {} crash points ({} explored), {} images checked of {} allowed{}, {} violations",
            self.model.name(),
            self.executions,
            self.operations,
            self.crash_points_seen,
            self.crash_points,
            self.images_checked,
            self.images_allowed,
            if self.sampled_points > 0 {
                format!(" ({} points sampled)", self.sampled_points)
            } else {
                String::new()
            } + &if self.recovery_crash_points > 0 {
                format!(
                    "; crashes during recovery: {} points, {} images checked",
                    self.recovery_crash_points, self.recovery_images_checked
                )
            } else {
                String::new()
            },
            self.violations.len()
        )
    }
}

/// A history event as the explorer records it.
#[derive(Clone, Debug)]
enum HEvent {
    Invoke { id: u64, thread: usize, call: Call },
    Return { id: u64, value: Value },
}

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Keeps a seeded sample of `n` of `v`'s elements (a Fisher–Yates prefix).
fn keep_sample<T>(v: &mut Vec<T>, n: usize, rng: &mut u64) {
    for i in 0..v.len().min(n) {
        let j = i + (xorshift(rng) as usize) % (v.len() - i);
        v.swap(i, j);
    }
    v.truncate(n);
}

/// Builds the ndjson history for a crash at `prefix`, followed by recovery
/// events, the recovering threads' calls and observations.
fn history_text(
    object: &str,
    init: Option<Value>,
    prefix: &[HEvent],
    recovered: &[(u64, Value)],
    concurrent: &[HEvent],
    observed: &[(Call, Value)],
    next_id: u64,
) -> String {
    let mut out = String::new();
    let mut push = |v: Value| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    push(match init {
        Some(init) => json!({"type":"header","object":object,"init":init}),
        None => json!({"type":"header","object":object}),
    });
    let events = |es: &[HEvent], push: &mut dyn FnMut(Value)| {
        for e in es {
            match e {
                HEvent::Invoke { id, thread, call } => push(
                    json!({"type":"invoke","id":id,"thread":thread,"op":call.op,"args":call.args}),
                ),
                HEvent::Return { id, value } => {
                    push(json!({"type":"return","id":id,"value":value}))
                }
            }
        }
    };
    events(prefix, &mut push);
    push(json!({"type":"crash"}));
    for (id, value) in recovered {
        push(json!({"type":"recover","id":id,"value":value}));
    }
    events(concurrent, &mut push);
    let first_observed = next_id
        + concurrent
            .iter()
            .filter(|e| matches!(e, HEvent::Invoke { .. }))
            .count() as u64;
    for (k, (call, value)) in observed.iter().enumerate() {
        let id = first_observed + k as u64;
        push(json!({"type":"invoke","id":id,"thread":0,"op":call.op,"args":call.args}));
        push(json!({"type":"return","id":id,"value":value}));
    }
    out
}

/// Checks one history with the durable-linearizability checker: `Ok` if it
/// is durably linearizable, else the checker's explanation.
pub fn check_history(text: &str) -> Result<(), String> {
    use crate::history::{check_text, CheckOptions, ParseOptions, Verdict};
    match check_text(text, &ParseOptions::default(), &CheckOptions::default()) {
        Err(m) => Err(format!("malformed history (an explorer bug): {m}")),
        Ok(report) => match report.verdict {
            Verdict::DurablyLinearizable => Ok(()),
            Verdict::NotDurablyLinearizable(v) => Err(format!(
                "not durably linearizable: the history up to line {} has no durable linearization{}",
                v.prefix_end_line,
                v.key.map(|k| format!(" (key {k})")).unwrap_or_default()
            )),
            Verdict::Undecided { max_states, .. } => Err(format!(
                "the checker gave up after {max_states} states (undecided)"
            )),
        },
    }
}

/// The exploration's running totals, shared by the schedules.
struct Shared {
    report: ExploreReport,
    schedule: usize,
    stop: bool,
}

impl Shared {
    /// Adds one schedule's outcome to the report; asks to stop once
    /// [`ExploreConfig::max_violations`] are found.
    fn record(&mut self, outcome: ScheduleOutcome, cfg: &ExploreConfig, name: &str) {
        let r = &mut self.report;
        r.executions += 1;
        r.operations += outcome.operations;
        r.crash_points_seen += outcome.crash_points_seen;
        r.crash_points += outcome.crash_points;
        r.images_allowed = r.images_allowed.saturating_add(outcome.images_allowed);
        r.images_checked += outcome.images_checked;
        r.sampled_points += outcome.sampled_points;
        r.recovery_crash_points += outcome.recovery_crash_points;
        r.recovery_images_checked += outcome.recovery_images_checked;
        r.violations.extend(outcome.violations);
        if r.violations.len() >= cfg.max_violations {
            self.stop = true;
        }
        if cfg.progress_every > 0 && self.report.executions % cfg.progress_every == 0 {
            eprintln!("[explore {name}] {}", self.report.summary());
        }
    }
}

/// Locks `m`, whether or not a thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs the exploration.
pub fn explore(scenario: Arc<dyn Scenario>, cfg: &ExploreConfig) -> ExploreReport {
    let cfg = &tier_budget(cfg);
    let shared = Arc::new(Mutex::new(Shared {
        report: ExploreReport::default(),
        schedule: 0,
        stop: false,
    }));
    let body = {
        let shared = shared.clone();
        let cfg = cfg.clone();
        let scenario = scenario.clone();
        move || {
            let schedule = {
                let mut s = lock(&shared);
                if s.stop {
                    return;
                }
                s.schedule += 1;
                s.schedule - 1
            };
            let outcome = run_schedule(&scenario, &cfg, schedule);
            lock(&shared).record(outcome, &cfg, scenario.name());
        }
    };
    run_schedules(cfg, body);
    let mut report = std::mem::take(&mut lock(&shared).report);
    report.model = cfg.model.in_this_build();
    if let Some(dir) = &cfg.out_dir {
        write_histories(&mut report, dir, scenario.name());
    }
    report
}

/// What [`explore_creation`] found.
#[derive(Clone, Debug, Default)]
pub struct CreationReport {
    /// Crash points captured while the object was created.
    pub crash_points: u64,
    /// Images recovered and checked.
    pub images_checked: u64,
    /// Of those, images whose recovery succeeded and whose object then
    /// observed empty, as the durable-linearizability check of the empty
    /// history requires.
    pub recovered: u64,
    /// Of those, images whose recovery refused with an error (the creation
    /// had not completed: no object to open).
    pub refused: u64,
    /// Violations: an image that is not a valid pool, or an object that
    /// recovered and then broke the check (with the history).
    pub violations: Vec<(String, String)>,
}

impl CreationReport {
    /// One line for humans.
    pub fn summary(&self) -> String {
        format!(
            "{} crash points during creation, {} images checked: {} recovered as the empty object, {} refused with an error, {} violations",
            self.crash_points,
            self.images_checked,
            self.recovered,
            self.refused,
            self.violations.len()
        )
    }
}

/// Crashes while the object is being created: the scenario's
/// [`Scenario::setup`] and first [`Scenario::open`] run on one simulated
/// pool with a crash point after every persistence event (the explorer
/// proper starts its crash points after them); every image (up to
/// `cfg.images` per point, a seeded sample beyond) is recovered as after
/// any crash. A recovery may refuse (a creation that did not complete left
/// no object: a user creates it again); a recovery that succeeds must give
/// an object whose observation is the empty object's. What it does not
/// check: that a refusal happens only where the creation had not been
/// published (the scenarios publish in different ways), and a scenario
/// whose object lives in a pool of its own (the PTMs) has no crash points
/// here.
pub fn explore_creation(scenario: Arc<dyn Scenario>, cfg: &ExploreConfig) -> CreationReport {
    let cfg = &tier_budget(cfg);
    let shared = Arc::new(Mutex::new(CreationReport::default()));
    let body = {
        let (shared, cfg, scenario) = (shared.clone(), cfg.clone(), scenario.clone());
        move || {
            let r = creation_schedule(&scenario, &cfg);
            *lock(&shared) = r;
        }
    };
    let once = ExploreConfig {
        schedules: 1,
        scheduler: SchedulerKind::Random,
        ..cfg.clone()
    };
    run_schedules(&once, body);
    let report = std::mem::take(&mut *lock(&shared));
    report
}

fn creation_schedule(scenario: &Arc<dyn Scenario>, cfg: &ExploreConfig) -> CreationReport {
    let mut out = CreationReport::default();
    let pool = match Pool::volatile(
        scenario.name(),
        scenario.pool_size(),
        Sim::new(sim_options(scenario, cfg, 0)),
    ) {
        Ok(p) => Arc::new(p),
        Err(e) => {
            out.violations
                .push((format!("cannot create the pool: {e}"), String::new()));
            return out;
        }
    };
    let captured: Arc<Mutex<Vec<CrashPoint>>> = Arc::new(Mutex::new(Vec::new()));
    {
        let captured = captured.clone();
        // The creation's thousand-odd events (formatting the pool): in the
        // mutation tier every eighth is captured, the capture being the cost.
        let stride = if mutation_tier() { 8 } else { 1 };
        let mut seen = 0u64;
        pool.backend().set_crash_hook(move |_, view| {
            seen += 1;
            if seen % stride == 0 {
                lock(&captured).push(view.capture());
            }
        });
    }
    let created = scenario
        .setup(&pool)
        .and_then(|()| scenario.open(&pool, false).map(drop));
    pool.backend().clear_crash_hook();
    if let Err(e) = created {
        out.violations.push((
            format!("creation failed before any crash: {e}"),
            String::new(),
        ));
        return out;
    }
    let mut points = std::mem::take(&mut *lock(&captured));
    let mut rng = cfg.seed ^ 0x6372_6561_7465;
    if let CrashPoints::Sample(n) = cfg.crash_points {
        keep_sample(&mut points, n, &mut rng);
    }
    for cp in &points {
        out.crash_points += 1;
        let (_, images) = cp.images(cfg.images, cfg.seed ^ cp.event);
        for (k, image) in images.enumerate() {
            out.images_checked += 1;
            let words = cp.image(&image, cfg.volatile_fill);
            let options = sim_options(scenario, cfg, cp.event ^ (k as u64) << 40);
            let (verdict, _) = check_image(scenario, options, &words, &[], 1, false);
            match verdict {
                Ok(()) => out.recovered += 1,
                Err((why, _)) if why.starts_with("recovery failed") => out.refused += 1,
                Err(v) => {
                    out.violations.push((
                        format!("crash point after event {}, image {k}: {}", cp.event, v.0),
                        v.1,
                    ));
                    if out.violations.len() >= cfg.max_violations {
                        return out;
                    }
                }
            }
        }
    }
    out
}

/// The simulator options of one pool of the exploration: the scenario's,
/// with the configured model, the thread ids of shuttle's tasks, and (under
/// Px86) drain choices seeded by `salt` — the schedule, or the image — at a
/// rate that varies with it (10%, 50% or 90% per scheduling point, unless
/// [`ExploreConfig::drain_percent`] fixes it), so that short and long-lived
/// store buffers both occur.
fn sim_options(scenario: &Arc<dyn Scenario>, cfg: &ExploreConfig, salt: u64) -> SimOptions {
    const RATES: [u8; 3] = [50, 10, 90];
    let mut seed = cfg.seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xd7a1;
    let rate = RATES[(xorshift(&mut seed) % 3) as usize];
    SimOptions {
        model: cfg.model,
        drain_seed: xorshift(&mut seed),
        drain_percent: cfg.drain_percent.unwrap_or(rate),
        thread_id: Some(shuttle_task_id),
        ..scenario.sim_options()
    }
}

/// What varies the program between schedules (the workload drawn, the
/// drain choices): the schedule's number — except under DFS, which
/// enumerates the interleavings of one program and needs every execution
/// to run the same one.
fn program_salt(cfg: &ExploreConfig, schedule: usize) -> u64 {
    match cfg.scheduler {
        SchedulerKind::Dfs => 0,
        _ => schedule as u64,
    }
}

/// The id of the running shuttle task (the explorer's threads are shuttle
/// tasks sharing one OS thread). While shuttle tears a task down (a
/// thread-local's destructor touching the pool) it may not say; such
/// accesses count as one thread of their own.
fn shuttle_task_id() -> usize {
    shuttle::current::try_get_current_task().map_or(usize::MAX, usize::from)
}

/// Whether this is the mutation tier, `PERDURE_DEPTH=mutants` (see [`tier_budget`]).
fn mutation_tier() -> bool {
    std::env::var("PERDURE_DEPTH").as_deref() == Ok("mutants")
}

/// The budget of a run in the mutation tier: with `PERDURE_DEPTH=mutants`
/// (set by `tools/mutants_cargo.py`, the test command of `make mutants`,
/// docs/MUTANTS.md) a quarter of the schedules (at least one), a quarter of
/// a sample of crash points (at least one), at most 2 images per crash point
/// and at most 2 crashes inside a recovery (creation crashes: every eighth
/// crash point); the seed is kept, so the tier's
/// schedules are the first ones of the full run. The point of the tier is
/// cost per mutant: a mutant that breaks an algorithm is nearly always
/// caught by its first schedules. Any other depth: `cfg` as given.
fn tier_budget(cfg: &ExploreConfig) -> ExploreConfig {
    let mut cfg = cfg.clone();
    if mutation_tier() {
        cfg.schedules = cfg.schedules.div_ceil(4).max(1);
        if let CrashPoints::Sample(n) = cfg.crash_points {
            cfg.crash_points = CrashPoints::Sample(n.div_ceil(4).max(1));
        }
        cfg.images = cfg.images.min(2);
        cfg.recovery_crashes = cfg.recovery_crashes.min(2);
    }
    cfg
}

/// Runs `body` once per schedule under the configured shuttle scheduler.
fn run_schedules(cfg: &ExploreConfig, body: impl Fn() + Send + Sync + 'static) {
    let mut config = shuttle::Config::new();
    config.max_steps = shuttle::MaxSteps::FailAfter(cfg.max_steps);
    match cfg.scheduler {
        SchedulerKind::Random => {
            shuttle::Runner::new(
                shuttle::scheduler::RandomScheduler::new_from_seed(cfg.seed, cfg.schedules),
                config,
            )
            .run(body);
        }
        SchedulerKind::Pct { depth } => {
            shuttle::Runner::new(
                shuttle::scheduler::PctScheduler::new_from_seed(cfg.seed, depth, cfg.schedules),
                config,
            )
            .run(body);
        }
        SchedulerKind::Dfs => {
            shuttle::Runner::new(
                shuttle::scheduler::DfsScheduler::new(Some(cfg.schedules), false),
                config,
            )
            .run(body);
        }
    }
}

/// Writes each violation's history into `dir`, and its HTML page beside it
/// (same stem, `.html`), and records where.
fn write_histories(report: &mut ExploreReport, dir: &Path, name: &str) {
    for v in &mut report.violations {
        let _ = std::fs::create_dir_all(dir);
        let path = dir.join(format!(
            "explore-{}-seed{}-schedule{}-event{}-image{}.ndjson",
            name, v.seed, v.schedule, v.crash_event, v.image
        ));
        if std::fs::write(&path, &v.history).is_ok() {
            v.history_path = Some(path.clone());
        }
        let html = path.with_extension("html");
        let title = html
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        if let Some(page) = violation_page(v, &title) {
            if crate::history::write_page(&html, &page).is_ok() {
                v.html_path = Some(html);
            }
        }
    }
}

/// The HTML page of a violation's history, with its crash point and what
/// the image kept and lost; `None` when there is no history to draw (the
/// run failed before any crash).
fn violation_page(v: &Violation, title: &str) -> Option<String> {
    use crate::history::{check_history, parse_history, CheckOptions, HtmlPage, ParseOptions};
    let history = parse_history(&v.history, &ParseOptions::default()).ok()?;
    let verdict = check_history(&history, &CheckOptions::default()).verdict;
    let crash_line = history.crash_lines().first().copied();
    let mut point = vec![
        format!("the explorer's finding: {}", v.reason),
        format!(
            "seed {}, schedule {} (0-based), crash after persistence event {}, image {} of that crash point",
            v.seed, v.schedule, v.crash_event, v.image
        ),
    ];
    if let Some(line) = crash_line {
        point.push(format!("the crash is line {line} of the history"));
    }
    if v.reason.contains("second crash during recovery") {
        point.push(
            "a second crash interrupted the recovery: the image below is the first crash's; the second crash's image is not shown".into(),
        );
    }
    let mut image = Vec::new();
    if v.image_lines.is_empty() {
        image.push("every line written was settled (flushed and fenced) at this crash point: the image is memory as written, nothing could be lost".into());
    }
    for l in &v.image_lines {
        image.push(describe_image_line(l));
    }
    image.push(
        "values are raw 64-bit words at pool offsets; which object field a word holds is not shown"
            .into(),
    );
    let page = HtmlPage {
        title: title.to_string(),
        crash_point: crash_line.map(|l| {
            (
                l,
                format!("crash point: after persistence event {}", v.crash_event),
            )
        }),
        sections: vec![
            ("Crash point".into(), point),
            (
                "What the crash image kept and lost (lines not settled at the crash)".into(),
                image,
            ),
        ],
    };
    Some(crate::history::render_html(&history, &verdict, &page))
}

/// `line 0x1040: 3 writes not settled (1 guaranteed persisted): kept 2, lost
/// 1; kept [0x1040]=5 ...; lost [0x1048]=9`.
fn describe_image_line(l: &ImageLine) -> String {
    let words = |ws: &[Vec<(u64, u64)>]| {
        ws.iter()
            .flatten()
            .map(|(off, val)| format!("[{off:#x}]={val:#x}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let kept = &l.writes[..l.kept.min(l.writes.len())];
    let lost = &l.writes[l.kept.min(l.writes.len())..];
    let torn = match (l.torn_half, lost.first()) {
        (Some(half), Some(w)) => match w.get(half) {
            Some((off, val)) => format!(
                "; torn: of the first lost 16-byte write, only [{off:#x}]={val:#x} persisted"
            ),
            None => String::new(),
        },
        _ => String::new(),
    };
    format!(
        "line {:#x}: {} write{} not settled ({} guaranteed persisted): kept {}, lost {}{torn}; kept: {}; lost: {}",
        l.offset,
        l.writes.len(),
        if l.writes.len() == 1 { "" } else { "s" },
        l.guaranteed,
        kept.len(),
        lost.len(),
        if kept.is_empty() { "none".to_string() } else { words(kept) },
        if lost.is_empty() { "none".to_string() } else { words(lost) },
    )
}

/// A crash point with the history prefix at that moment.
type Captured = (CrashPoint, Vec<HEvent>);

#[derive(Default)]
struct ScheduleOutcome {
    operations: u64,
    crash_points_seen: u64,
    crash_points: u64,
    images_allowed: u128,
    images_checked: u64,
    sampled_points: u64,
    recovery_crash_points: u64,
    recovery_images_checked: u64,
    violations: Vec<Violation>,
}

/// Where the calls of a set of threads are recorded: the history events in
/// their real interleaving, and the next free operation id.
#[derive(Clone)]
struct Recorder {
    events: Arc<Mutex<Vec<HEvent>>>,
    next_id: Arc<Mutex<u64>>,
}

impl Recorder {
    /// An empty record whose first call gets id `first_id`.
    fn new(first_id: u64) -> Recorder {
        Recorder {
            events: Arc::new(Mutex::new(Vec::new())),
            next_id: Arc::new(Mutex::new(first_id)),
        }
    }

    /// Records `call` by `thread`: its invocation with a fresh id, then
    /// `apply`'s result as its return; nothing more if `apply` fails.
    fn call(
        &self,
        thread: usize,
        call: &Call,
        apply: impl FnOnce() -> Result<Value, String>,
    ) -> Result<(), String> {
        let id = {
            let mut n = lock(&self.next_id);
            *n += 1;
            *n - 1
        };
        lock(&self.events).push(HEvent::Invoke {
            id,
            thread,
            call: call.clone(),
        });
        let value = apply()?;
        lock(&self.events).push(HEvent::Return { id, value });
        Ok(())
    }

    /// The events so far.
    fn events(&self) -> Vec<HEvent> {
        lock(&self.events).clone()
    }

    /// The next free id.
    fn next_id(&self) -> u64 {
        *lock(&self.next_id)
    }
}

/// One of the scenario's ways to perform a call ([`Scenario::apply`] or
/// [`Scenario::apply_recovering`]).
type Apply = fn(&dyn Scenario, At<'_>, &Call) -> Result<Value, String>;

/// Runs `workload` (one list of calls per thread) on shuttle threads, each
/// call performed by `apply` and recorded by `recorder`; a thread stops at
/// its first failed call. Joins every thread, then reports the first
/// problem: a thread that panicked (`a {role} thread panicked`), else the
/// first failed call's error.
fn run_threads(
    scenario: &Arc<dyn Scenario>,
    pool: &Arc<Pool<Sim>>,
    session: &Session,
    workload: Vec<Vec<Call>>,
    recorder: &Recorder,
    apply: Apply,
    role: &str,
) -> Result<(), String> {
    let errors: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    // Spawning and joining synchronise (a system call, locked
    // instructions): under Px86 every store buffer drains at both.
    scenario.sim(pool, session).drain_all();
    let handles: Vec<_> = workload
        .into_iter()
        .enumerate()
        .map(|(thread, calls)| {
            let (scenario, pool, session) = (scenario.clone(), pool.clone(), session.clone());
            let (recorder, errors) = (recorder.clone(), errors.clone());
            shuttle::thread::spawn(move || {
                for call in calls {
                    let applied = recorder.call(thread, &call, || {
                        let r = apply(&*scenario, At::new(&pool, &session, thread), &call);
                        // The caller observes the response only through a
                        // locked instruction or a system call: the
                        // thread's store buffer drains first (Px86).
                        scenario.sim(&pool, &session).drain_thread();
                        r
                    });
                    if let Err(e) = applied {
                        lock(&errors).push(e);
                        return;
                    }
                }
            })
        })
        .collect();
    // Join every thread, even after one panicked.
    let mut panicked = false;
    for h in handles {
        panicked |= h.join().is_err();
    }
    scenario.sim(pool, session).drain_all();
    if panicked {
        return Err(format!("a {role} thread panicked"));
    }
    let first_error = lock(&errors).first().cloned();
    first_error.map_or(Ok(()), Err)
}

/// The run of one schedule, before any crash: the crash points captured
/// and what they need.
struct Run {
    /// Every crash point, the end of the run included.
    points: Vec<Captured>,
    /// Operations invoked.
    operations: u64,
    /// The first id free after the run.
    ids_used: u64,
    /// The run's pool, kept until the schedule is checked.
    _pool: Arc<Pool<Sim>>,
}

/// Explores one schedule: runs the workload, then crashes at its crash
/// points and checks each image.
fn run_schedule(
    scenario: &Arc<dyn Scenario>,
    cfg: &ExploreConfig,
    schedule: usize,
) -> ScheduleOutcome {
    let mut out = ScheduleOutcome::default();
    let mut run = match run_workload(scenario, cfg, schedule) {
        Ok(run) => run,
        Err(reason) => {
            out.violations.push(Violation {
                seed: cfg.seed,
                schedule,
                crash_event: 0,
                image: 0,
                reason,
                history: String::new(),
                history_path: None,
                image_lines: Vec::new(),
                html_path: None,
            });
            return out;
        }
    };
    out.operations = run.operations;
    out.crash_points_seen = run.points.len() as u64;
    let mut rng = cfg.seed ^ 0x5eed ^ (schedule as u64) << 20;
    if let CrashPoints::Sample(n) = cfg.crash_points {
        keep_sample(&mut run.points, n, &mut rng);
    }
    check_points(scenario, cfg, schedule, &run, &mut out);
    out
}

/// The workload phase of a schedule: builds the object, runs the workload's
/// threads under shuttle and captures a crash point (with the history
/// prefix) after every persistence event and at the end. `Err` says why the
/// run failed before any crash.
fn run_workload(
    scenario: &Arc<dyn Scenario>,
    cfg: &ExploreConfig,
    schedule: usize,
) -> Result<Run, String> {
    let pool = Pool::volatile(
        scenario.name(),
        scenario.pool_size(),
        Sim::new(sim_options(scenario, cfg, program_salt(cfg, schedule))),
    )
    .map(Arc::new)
    .map_err(|e| format!("cannot create the pool: {e}"))?;
    scenario
        .setup(&pool)
        .map_err(|e| format!("setup failed: {e}"))?;
    let session = scenario
        .open(&pool, false)
        .map_err(|e| format!("open failed: {e}"))?;
    let recorder = Recorder::new(1);
    let captured: Arc<Mutex<Vec<Captured>>> = Arc::new(Mutex::new(Vec::new()));
    let sim = scenario.sim(&pool, &session);
    {
        let (events, captured) = (recorder.events.clone(), captured.clone());
        sim.set_crash_hook(move |_, view| {
            let prefix = lock(&events).clone();
            lock(&captured).push((view.capture(), prefix));
        });
    }
    sim.set_yield_hook(shuttle::thread::yield_now);
    let workload =
        scenario.workload(cfg.seed ^ program_salt(cfg, schedule).wrapping_mul(0x9E37_79B9));
    let apply: Apply = |scenario, at, call| scenario.apply(at, call);
    // In the shuttle build, the facade's DRAM atomics get store buffers too
    // (`perdure_pm::sync::with_dram_tso`).
    let ran = perdure_pm::sync::with_dram_tso(sim, || {
        run_threads(
            scenario, &pool, &session, workload, &recorder, apply, "workload",
        )
    });
    sim.clear_crash_hook();
    ran.map_err(|e| format!("an operation failed before any crash: {e}"))?;
    // The end of the run is a crash point too.
    let full = recorder.events();
    lock(&captured).push((sim.capture(), full.clone()));
    drop(session);
    let operations = full
        .iter()
        .filter(|e| matches!(e, HEvent::Invoke { .. }))
        .count() as u64;
    let points = std::mem::take(&mut *lock(&captured));
    Ok(Run {
        points,
        operations,
        ids_used: recorder.next_id(),
        _pool: pool,
    })
}

/// The crash phase of a schedule: every explored crash point's images
/// (all, or a seeded sample) recovered and checked, until
/// [`ExploreConfig::max_violations`].
fn check_points(
    scenario: &Arc<dyn Scenario>,
    cfg: &ExploreConfig,
    schedule: usize,
    run: &Run,
    out: &mut ScheduleOutcome,
) {
    for (cp, prefix) in &run.points {
        out.crash_points += 1;
        out.images_allowed = out.images_allowed.saturating_add(cp.total_images());
        let (coverage, images) = cp.images(
            cfg.images,
            cfg.seed ^ cp.event.wrapping_mul(0x2545_F491_4F6C_DD1D),
        );
        if matches!(coverage, Coverage::Sampled(_)) {
            out.sampled_points += 1;
        }
        for (k, image) in images.enumerate() {
            out.images_checked += 1;
            let words = cp.image(&image, cfg.volatile_fill);
            let seed = cp.event ^ (k as u64) << 40;
            let verdict = check_crash_image(scenario, cfg, &words, prefix, run.ids_used, seed, out);
            if let Err((reason, history)) = verdict {
                out.violations.push(Violation {
                    seed: cfg.seed,
                    schedule,
                    crash_event: cp.event,
                    image: k,
                    reason,
                    history,
                    history_path: None,
                    image_lines: cp.image_lines(&image),
                    html_path: None,
                });
                if out.violations.len() >= cfg.max_violations {
                    return;
                }
            }
        }
    }
}

/// One crash image, recovered and checked; with
/// [`ExploreConfig::recovery_crashes`], then crashed again during that
/// recovery ([`crash_recovery`], seeded by `seed`).
fn check_crash_image(
    scenario: &Arc<dyn Scenario>,
    cfg: &ExploreConfig,
    words: &CrashImage,
    prefix: &[HEvent],
    next_id: u64,
    seed: u64,
    out: &mut ScheduleOutcome,
) -> Result<(), (String, String)> {
    let capture = cfg.recovery_crashes > 0;
    let options = sim_options(scenario, cfg, seed);
    let (verdict, inner) = check_image(scenario, options, words, prefix, next_id, capture);
    verdict?;
    if capture {
        crash_recovery(scenario, cfg, inner, prefix, next_id, seed, out)
    } else {
        Ok(())
    }
}

/// Crashes again inside the recovery whose crash points are `inner`: a
/// seeded sample of [`ExploreConfig::recovery_crashes`] of them, up to
/// [`RECOVERY_IMAGES`] images each, every one recovered from scratch and
/// checked against the same prefix.
fn crash_recovery(
    scenario: &Arc<dyn Scenario>,
    cfg: &ExploreConfig,
    mut inner: Vec<CrashPoint>,
    prefix: &[HEvent],
    next_id: u64,
    seed: u64,
    out: &mut ScheduleOutcome,
) -> Result<(), (String, String)> {
    let mut rng = cfg.seed ^ seed ^ 0x7265_636f_7665_7279;
    keep_sample(&mut inner, cfg.recovery_crashes, &mut rng);
    for rcp in inner {
        out.recovery_crash_points += 1;
        let (_, images) = rcp.images(RECOVERY_IMAGES, rng ^ rcp.event);
        for image in images {
            out.recovery_images_checked += 1;
            let words = rcp.image(&image, cfg.volatile_fill);
            let options = sim_options(scenario, cfg, seed ^ rcp.event);
            if let (Err((reason, history)), _) =
                check_image(scenario, options, &words, prefix, next_id, false)
            {
                return Err((
                    format!(
                        "after a second crash during recovery (recovery event {}): {reason}",
                        rcp.event
                    ),
                    history,
                ));
            }
        }
    }
    Ok(())
}

/// The verdict on one recovered image, and (when `capture` is set) the
/// crash points of its recovery.
type ImageVerdict = (Result<(), (String, String)>, Vec<CrashPoint>);

/// Recovers one image and checks the resulting history; with `capture`,
/// also returns a crash point after every persistence event of the
/// recovery (for [`crash_recovery`]).
fn check_image(
    scenario: &Arc<dyn Scenario>,
    options: SimOptions,
    words: &CrashImage,
    prefix: &[HEvent],
    next_id: u64,
    capture: bool,
) -> ImageVerdict {
    let pool = match Pool::volatile_from_image(words, Sim::new(options)) {
        Ok(pool) => Arc::new(pool),
        Err(e) => {
            return (
                Err((
                    format!("the crash image is not a valid pool: {e}"),
                    String::new(),
                )),
                Vec::new(),
            )
        }
    };
    let inner: Arc<Mutex<Vec<CrashPoint>>> = Arc::new(Mutex::new(Vec::new()));
    if capture {
        let inner = inner.clone();
        pool.backend()
            .set_crash_hook(move |_, view| lock(&inner).push(view.capture()));
    }
    let verdict = recover_and_check(scenario, &pool, prefix, next_id);
    pool.backend().clear_crash_hook();
    let points = std::mem::take(&mut *lock(&inner));
    (verdict, points)
}

/// Runs the scenario's recovery on `pool`, resumes the cut-off calls, runs
/// the recovering workload, observes, and checks the history.
fn recover_and_check(
    scenario: &Arc<dyn Scenario>,
    pool: &Arc<Pool<Sim>>,
    prefix: &[HEvent],
    next_id: u64,
) -> Result<(), (String, String)> {
    let pool = pool.clone();
    let partial = || {
        history_text(
            scenario.object(),
            scenario.init(),
            prefix,
            &[],
            &[],
            &[],
            next_id,
        )
    };
    scenario
        .recover(&pool)
        .map_err(|e| (format!("recovery failed: {e}"), partial()))?;
    let session = scenario
        .open(&pool, true)
        .map_err(|e| (format!("recovery failed: {e}"), partial()))?;
    let mut recovered = Vec::new();
    for (id, thread, index, call) in cut_off(prefix) {
        match scenario.recover_call(At::new(&pool, &session, thread), index, &call) {
            Ok(Some(v)) => recovered.push((id, v)),
            Ok(None) => {}
            Err(e) => return Err((format!("recovering call {id} failed: {e}"), partial())),
        }
    }
    let concurrent = run_recovering(scenario, &pool, &session, next_id)
        .map_err(|e| (format!("a recovering call failed: {e}"), partial()))?;
    let observed = scenario
        .observe(At::new(&pool, &session, 0))
        .map_err(|e| (format!("observing after recovery failed: {e}"), partial()))?;
    let text = history_text(
        scenario.object(),
        scenario.init(),
        prefix,
        &recovered,
        &concurrent,
        &observed,
        next_id,
    );
    check_history(&text).map_err(|why| (why, text))
}

/// The calls of `prefix` a crash at its end cuts off (invoked, not
/// returned), in invocation order: (id, thread, index of the call in its
/// thread's sequence, call).
fn cut_off(prefix: &[HEvent]) -> Vec<(u64, usize, usize, Call)> {
    let mut pending: Vec<(u64, usize, usize, Call)> = Vec::new();
    let mut per_thread: std::collections::HashMap<usize, usize> = Default::default();
    for e in prefix {
        match e {
            HEvent::Invoke { id, thread, call } => {
                let n = per_thread.entry(*thread).or_insert(0);
                pending.push((*id, *thread, *n, call.clone()));
                *n += 1;
            }
            HEvent::Return { id, .. } => pending.retain(|(p, _, _, _)| p != id),
        }
    }
    pending
}

/// Runs the scenario's [`Scenario::recovering_workload`] on shuttle
/// threads, recording the calls with their real interleaving (ids from
/// `next_id`); returns the events.
fn run_recovering(
    scenario: &Arc<dyn Scenario>,
    pool: &Arc<Pool<Sim>>,
    session: &Session,
    next_id: u64,
) -> Result<Vec<HEvent>, String> {
    let workload = scenario.recovering_workload(session);
    if workload.is_empty() {
        return Ok(Vec::new());
    }
    // The recovered image's simulator yields to shuttle at every
    // persistent access, as the run's did, so the threads interleave there
    // (in a `--cfg perdure_shuttle` build every atomic is a yield point
    // anyway). Set only here: recoveries without concurrent calls keep
    // running in one stretch, within the schedule's step budget.
    scenario
        .sim(pool, session)
        .set_yield_hook(shuttle::thread::yield_now);
    let recorder = Recorder::new(next_id);
    let apply: Apply = |scenario, at, call| scenario.apply_recovering(at, call);
    run_threads(
        scenario,
        pool,
        session,
        workload,
        &recorder,
        apply,
        "recovering",
    )?;
    Ok(recorder.events())
}
