//! The checking commands: `perdure litmus`, `check-history`, `explore` and
//! `trace-to-tla`, each a clap argument struct and the function that runs
//! it with perdure-check.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};
use perdure_check::explore::{self, CrashPoints, ExploreConfig, Scenario, SchedulerKind};
use perdure_check::history::{
    check_and_report, check_report_html, write_page, CheckOptions, ObjectKind, ParseOptions,
};
use perdure_check::litmus::{check_paths, render, summarize, Limits, RenderOptions};
use perdure_pm::sim::{SimModel, VolatileFill};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

const LITMUS_ABOUT: &str = "\
Run Px86 litmus tests (PX86.md) exhaustively.

Each FILE is a *.litmus test; each DIR contributes the *.litmus files directly
inside it, in sorted order. For every test, every execution of the Px86
operational model (TSO store buffers, clflush/clflushopt/clwb, sfence/mfence,
locked RMWs, non-temporal stores) is explored, with a crash at every point and
every persisted image the cache lines allow there. The command prints the
reachable outcomes over the locations and registers the expectations name
(`_`: register not written before the crash), and marks each `allow`/`forbid`
as met or NOT MET, with a witness execution for unmet forbids.";

/// `perdure litmus [OPTIONS] FILE|DIR...`.
#[derive(Debug, Args)]
#[command(
    long_about = LITMUS_ABOUT,
    after_help = "EXIT STATUS:\n    0 every expectation met; 1 an expectation not met or undecided, or a file\n    that does not parse (file:line: reason); 2 wrong usage."
)]
pub struct LitmusArgs {
    /// Print only verdicts that are not met, and the summary.
    #[arg(short, long)]
    quiet: bool,
    /// Print a witness execution for every expectation that has one (allow met, forbid not met).
    #[arg(short, long)]
    witnesses: bool,
    /// Stop exploring a test after N distinct machine states; a test cut short has its unreached
    /// expectations reported as UNDECIDED.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_states,
          value_parser = clap::value_parser!(u64).range(1..).map(|n| n as usize))]
    max_states: usize,
    /// Litmus files, or directories of them.
    #[arg(value_name = "FILE|DIR", required = true)]
    paths: Vec<PathBuf>,
}

/// Runs `perdure litmus`.
pub fn litmus(a: LitmusArgs) -> ExitCode {
    let opts = RenderOptions {
        quiet: a.quiet,
        witnesses: a.witnesses,
    };
    let results = check_paths(
        &a.paths,
        Limits {
            max_states: a.max_states,
        },
    );
    for r in &results {
        match &r.outcome {
            Ok((test, report)) => print!("{}", render(test, report, opts)),
            Err(e) => println!("{e}"),
        }
    }
    let summary = summarize(&results);
    println!("{}", summary.line());
    if summary.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

const HISTORY_ABOUT: &str = "\
Decide whether a history with crashes is durably linearizable.

The history is ndjson in the format of HISTORY.md: a header naming the object
(register, counter, queue, stack, set, map) and its initial state, then
invoke / return / crash / recover events.";

const HISTORY_AFTER: &str = "\
OUTPUT:
    A summary (events, operations, crashes, search effort), for a violation the
    minimal failing prefix and the operations involved, and the verdict on the
    last line:
        durably linearizable          exit 0
        not durably linearizable: ... exit 1
        malformed: line N: ...        exit 2 (also: wrong usage, unreadable file)
        undecided: ...                exit 3 (the search limit was reached)
    With --html OUT, the page is written for every verdict but malformed; an OUT
    that cannot be written exits 2 after the report (the message says why).";

/// `perdure check-history FILE|- [OPTIONS]`.
#[derive(Debug, Args)]
#[command(long_about = HISTORY_ABOUT, after_help = HISTORY_AFTER)]
pub struct CheckHistoryArgs {
    /// The history file, or - to read it from standard input.
    #[arg(value_name = "FILE")]
    file: String,
    /// Check against object M instead of the header's `object`.
    #[arg(long, value_name = "M", value_parser = object_kind())]
    model: Option<ObjectKind>,
    /// Skip events of type T instead of rejecting them (repeatable), for traces that carry extra
    /// event types.
    #[arg(long, value_name = "T")]
    ignore_type: Vec<String>,
    /// Give up on a search after memoizing N states (verdict `undecided`, exit 3); 0 for no limit.
    /// The default is about 1 GB.
    #[arg(long, value_name = "N", default_value_t = CheckOptions::DEFAULT_MAX_STATES)]
    max_states: u64,
    /// Print only the verdict line.
    #[arg(short, long)]
    quiet: bool,
    /// Also write the history and its verdict as a self-contained HTML page to OUT: one lane
    /// per thread, crash lines, the minimal failing prefix highlighted. An OUT that cannot be
    /// written exits 2 after the report.
    #[arg(long, value_name = "OUT")]
    html: Option<PathBuf>,
}

/// The text of `file`, or of standard input for `-`.
fn read_input(file: &str) -> std::io::Result<String> {
    if file == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(file)
    }
}

fn object_kind() -> impl TypedValueParser<Value = ObjectKind> {
    PossibleValuesParser::new(["register", "counter", "queue", "stack", "set", "map"])
        .try_map(|s| ObjectKind::from_name(&s).ok_or(format!("unknown model {s:?}")))
}

/// Runs `perdure check-history`.
pub fn check_history(a: CheckHistoryArgs) -> ExitCode {
    let text = match read_input(&a.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("perdure check-history: cannot read {}: {e}", a.file);
            return ExitCode::from(2);
        }
    };
    let name = if a.file == "-" { "<stdin>" } else { &a.file };
    let parse = ParseOptions {
        object_override: a.model,
        ignored_event_types: a.ignore_type,
    };
    let check = CheckOptions {
        max_states: (a.max_states > 0).then_some(a.max_states),
    };
    let mut out = std::io::stdout().lock();
    let Some(path) = a.html else {
        let code = check_and_report(&text, name, &parse, &check, a.quiet, &mut out);
        return ExitCode::from(code);
    };
    let (code, page) = check_report_html(&text, name, &parse, &check, a.quiet, &mut out);
    let Some(page) = page else {
        eprintln!(
            "perdure check-history: no HTML page written to {}: the history is malformed",
            path.display()
        );
        return ExitCode::from(code);
    };
    match write_page(&path, &page) {
        Ok(()) => ExitCode::from(code),
        Err(e) => {
            eprintln!("perdure check-history: {e}");
            ExitCode::from(2)
        }
    }
}

const EXPLORE_ABOUT: &str = "\
Crash-explore a scenario on the simulated Px86 backend.

Prints what was explored (executions, operations, crash points, images
checked of those Px86 allows) and, for a violation, the seed, schedule, crash
point and image, the reason, and the path of the failing history (ndjson,
readable by `perdure check-history`) and of its HTML page beside it (same
name, .html). The same seed and at least as many schedules reproduce it.";

/// What volatile memory holds after a crash.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Volatile {
    /// Zeroes.
    Zero,
    /// Seeded garbage.
    Garbage,
}

/// `perdure explore SCENARIO [OPTIONS]` or `perdure explore --list`.
#[derive(Debug, Args)]
#[command(
    long_about = EXPLORE_ABOUT,
    after_help = "EXIT STATUS: 0 no violation, 1 violations found, 2 wrong usage."
)]
pub struct ExploreArgs {
    /// The scenario (`perdure explore --list`).
    #[arg(required_unless_present = "list")]
    scenario: Option<String>,
    /// List the scenarios: name, object, description.
    #[arg(long)]
    list: bool,
    /// Seed everything derives from [default: 1].
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Schedules to run [default: 20].
    #[arg(long, value_name = "N")]
    schedules: Option<usize>,
    /// random (default), pct or pct:DEPTH (default depth 3), or dfs (exhaustive).
    #[arg(long, value_name = "KIND", value_parser = scheduler)]
    scheduler: Option<SchedulerKind>,
    /// Images per crash point: all if at most M, else a seeded sample of M [default: 64].
    #[arg(long, value_name = "M")]
    images: Option<u64>,
    /// Explore a seeded sample of K crash points per schedule [default: every persistence event].
    #[arg(long, value_name = "K")]
    crash_points: Option<usize>,
    /// Also crash each image's recovery at R sampled points (2 images each) and recover again
    /// [default: 0, no crash during recovery].
    #[arg(long, value_name = "R")]
    recovery_crashes: Option<usize>,
    /// The memory model: px86 (TSO store buffers and Px86 persistence) or sc (sequentially
    /// consistent interleavings, Px86 persistence) [default: px86].
    #[arg(long, value_name = "MODEL", value_parser = model)]
    model: Option<SimModel>,
    /// What volatile memory holds after a crash.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = Volatile::Zero)]
    volatile: Volatile,
    /// Where failing histories are written.
    #[arg(long, value_name = "DIR", default_value = "out/explore")]
    out: PathBuf,
    /// Stop after N violations [default: 1].
    #[arg(long, value_name = "N")]
    max_violations: Option<usize>,
    /// No progress lines.
    #[arg(long)]
    quiet: bool,
}

/// `--model`.
fn model(v: &str) -> Result<SimModel, String> {
    SimModel::parse(v).ok_or_else(|| format!("unknown model {v:?} (px86, sc)"))
}

fn scheduler(v: &str) -> Result<SchedulerKind, String> {
    let depth = |d: &str| {
        d.parse::<usize>()
            .map(|d| d.max(1))
            .map_err(|_| format!("{d:?} is not a non-negative integer"))
    };
    match v.split_once(':') {
        None if v == "random" => Ok(SchedulerKind::Random),
        None if v == "dfs" => Ok(SchedulerKind::Dfs),
        None if v == "pct" => Ok(SchedulerKind::Pct { depth: 3 }),
        Some(("pct", d)) => Ok(SchedulerKind::Pct { depth: depth(d)? }),
        _ => Err(format!(
            "unknown scheduler {v:?} (random, pct[:DEPTH], dfs)"
        )),
    }
}

/// Runs `perdure explore` over perdure-check's scenarios and `extra`
/// (the constructions').
pub fn explore(a: ExploreArgs, extra: Vec<Arc<dyn Scenario>>) -> ExitCode {
    let all: Vec<Arc<dyn Scenario>> = explore::scenarios::all().into_iter().chain(extra).collect();
    if a.list {
        for s in &all {
            println!("{:<14} {:<8} {}", s.name(), s.object(), s.description());
        }
        return ExitCode::SUCCESS;
    }
    let name = a.scenario.unwrap_or_default();
    let Some(scenario) = all.into_iter().find(|s| s.name() == name) else {
        let msg = format!("no scenario {name:?} (`perdure explore --list`)");
        crate::usage_error(&["explore"], msg)
    };
    if let Some(why) = scenario.unavailable() {
        eprintln!("perdure explore: {name}: {why}");
        return ExitCode::from(2);
    }
    let d = ExploreConfig::default();
    let seed = a.seed.unwrap_or(d.seed);
    let cfg = ExploreConfig {
        seed,
        schedules: a.schedules.unwrap_or(d.schedules),
        scheduler: a.scheduler.unwrap_or(d.scheduler),
        crash_points: a.crash_points.map_or(d.crash_points, CrashPoints::Sample),
        images: a.images.unwrap_or(d.images),
        volatile_fill: match a.volatile {
            Volatile::Zero => VolatileFill::Zeroed,
            Volatile::Garbage => VolatileFill::Garbage { seed },
        },
        out_dir: Some(a.out),
        max_violations: a.max_violations.unwrap_or(d.max_violations).max(1),
        progress_every: if a.quiet { 0 } else { 5 },
        recovery_crashes: a.recovery_crashes.unwrap_or(d.recovery_crashes),
        model: a.model.unwrap_or(d.model),
        ..d
    };
    println!(
        "explore {name}: {} — model {}, seed {}, {} schedules ({:?}), images per point {}",
        scenario.description(),
        cfg.model.name(),
        cfg.seed,
        cfg.schedules,
        cfg.scheduler,
        cfg.images
    );
    let report = explore::explore(scenario, &cfg);
    println!("explored: {}", report.summary());
    for v in &report.violations {
        println!("VIOLATION: {}", v.reason);
        println!(
            "  seed {} schedule {} crash point after persistence event {} image {}",
            v.seed, v.schedule, v.crash_event, v.image
        );
        match &v.history_path {
            Some(p) => println!(
                "  failing history: {} (check it: perdure check-history {})",
                p.display(),
                p.display()
            ),
            None => println!("  failing history:\n{}", v.history),
        }
        if let Some(p) = &v.html_path {
            println!(
                "  drawn: {} (lanes, the crash point, what the image kept and lost)",
                p.display()
            );
        }
        println!(
            "  reproduce: perdure explore {name} --seed {} --schedules {}",
            v.seed,
            v.schedule + 1
        );
    }
    if report.violations.is_empty() {
        println!("explore {name}: no violation");
        ExitCode::SUCCESS
    } else {
        println!("explore {name}: {} violation(s)", report.violations.len());
        ExitCode::from(1)
    }
}

const TO_TLA_ABOUT: &str = "\
Turn an ndjson trace into a TLA+ module.

Writes DIR/NAME.tla (or prints it without --out), defining `Trace`, a
sequence of records, one per line of FILE (`-` reads stdin), and `Null`.
A line that is not JSON or holds what TLA+ cannot represent (a fraction,
an object key that is not an identifier) is an error naming its line.";

/// `perdure trace-to-tla FILE --module NAME [--out DIR]`.
#[derive(Debug, Args)]
#[command(
    long_about = TO_TLA_ABOUT,
    after_help = "EXIT STATUS: 0 written, 1 bad input, 2 wrong usage."
)]
pub struct TraceToTlaArgs {
    /// The ndjson trace, or - for standard input.
    #[arg(value_name = "FILE")]
    file: String,
    /// The module's name.
    #[arg(long, value_name = "NAME")]
    module: String,
    /// Write DIR/NAME.tla instead of printing the module.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Runs `perdure trace-to-tla`.
pub fn trace_to_tla(a: TraceToTlaArgs) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("perdure trace-to-tla: {msg}");
        ExitCode::from(1)
    };
    let text = match read_input(&a.file) {
        Ok(t) => t,
        Err(e) => {
            let what = if a.file == "-" { "stdin" } else { &a.file };
            return fail(format!("cannot read {what}: {e}"));
        }
    };
    let tla = match perdure_check::trace::to_tla_module(&text, &a.module) {
        Ok(t) => t,
        Err(e) => return fail(format!("{}: {e}", a.file)),
    };
    let Some(dir) = a.out else {
        print!("{tla}");
        return ExitCode::SUCCESS;
    };
    let path = dir.join(format!("{}.tla", a.module));
    match std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, tla)) {
        Ok(()) => {
            println!("wrote {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!("cannot write {}: {e}", path.display())),
    }
}
