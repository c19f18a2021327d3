//! `perdure trace <object>`: record protocol-level traces of the
//! implementation. Every producer takes one
//! [`perdure_check::trace::TraceOptions`], filled here from the command
//! line ([`RunArgs`] and the producer's tamper modes).

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Subcommand};
use perdure_check::trace::log::{self, DropFirst, LogRun};
use perdure_check::trace::{Named, TraceOptions};
use perdure_harness::{memento, ptm, relax};
use perdure_pm::hooks::mutants::{self, Mutant};
use std::fmt::Display;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::process::ExitCode;

const EXIT: &str = "EXIT STATUS: 0 written, 1 the run failed, 2 wrong usage.";

const PTM_ABOUT: &str = "\
Record traces of a PTM.

Runs the construction (Redo-PTM, RedoTimed-PTM, RedoOpt-PTM, CX-PTM or
CX-PUC) on the simulated Px86 backend under seeded schedules
(seeds N..N+R-1), T threads (1..=3) each running K transactions (1..=6) of
a seeded mix of inc, both, incif and get on two words
(specs/ptm/PtmBase.tla's object). --workload queue runs perdure-ptm's queue
instead (ds/queue.rs on the region allocator: created first by one
thread, then a seeded mix of enqueue, dequeue and len), --workload
hash-set its hash set (ds/hash.rs, 2 buckets, keys 1..4: insert, remove,
contains), on PtmBase's words of each; neither for cx-puc, whose own
object shifts the allocator's blocks.
--crash takes a full crash at a seeded
persistence event of every run, keeps an allowed crash image, reopens the
PTM on it (null recovery) and goes on. Prints the trace (ndjson,
traces/SCHEMA.md) for traces/ptm/ (redo/, redo-timed/, redo-opt/, cx/,
cx-puc/: each replayed through its spec's actions). redo-timed runs with
a window that never closes on even seeds and one closed at once on odd
seeds; redo-opt switches to a full flush at the second dirty line of a
replica.
--tamper corrupts the first run: return-before-psync moves the first
committer's return before its pwb(cur_comb) + psync; cas-before-flush drops
the replica write-backs before the first commit that has any; lost-store
drops the last value-changing store to the replica the first such commit
designates.
--mutant NAME runs the code with a mutant of perdure_pm::hooks::mutants
switched on (a ptm one, e.g. redo-no-fence-before-cas): its pwb, pfence and
psync steps are the simulator's events, so a skipped one is not in the trace.
Check a trace with tools/trace-check.sh traces/ptm/<dir>/<Spec>Trace.tla
(redo/RedoPTMTrace.tla for the Redo family, cx/CXPTMTrace.tla for CX).";

const MEMENTO_ABOUT: &str = "\
Record traces of Memento on the simulator.

Runs R runs (seeds N, N+1, ...) of the detectable CAS (memento-cas: T threads
(1..=4) x K root operations of one CAS each) or of MSQ-mmt-indel
(memento-queue: T threads alternating enqueue and dequeue) or of Clevel-mmt
(memento-clevel: T threads inserting their own keys into a small table, deleting
the next thread's, the last one rehashing; growth and a resize) on the simulated
Px86 backend, each under the seed's schedule, with --crash a full crash at a
seeded persistence event and recovery; prints the ndjson trace
(traces/SCHEMA.md) for traces/memento/DetectableCASTrace.tla,
InsDelQueueTrace.tla or clevel/ClevelTrace.tla. --tamper alters the trace so that validation must
reject it. --mutant NAME runs the code with a memento mutant of
perdure_pm::hooks::mutants switched on (e.g. cas-no-flush-loc-L33).";

const RELAX_ABOUT: &str = "\
Record protocol-level traces of one Mirror/RELAX field.

Runs T workers (1..=3) of K seeded calls (load, store, cas over values 0..3)
on one field of a RELAX space (BitsetAtomic tracking) on the simulated Px86
backend under a seeded schedule, R runs with seeds N.., and prints the steps
of Algorithms 4.1 and 6.2 as ndjson (traces/SCHEMA.md) for
traces/relax/RelaxTrace.tla. --crash: a full crash at a seeded persistence
event, a seeded Px86 image, garbage DRAM near the NVMM pair, and K more
calls per worker, each worker recovering the field lazily. --eager: Mirror's
eager recovery instead (Tracking::Eager: the field is copied to DRAM when the
space is reopened), for traces/relax/mirror/MirrorTrace.tla. The write-back
+ fence steps (L21, L42, R43) come from the simulator's pwb and pfence events;
--mutant NAME runs the code with a relax mutant of perdure_pm::hooks::mutants
switched on (e.g. mirror-no-flush-before-dram-L41), so a skipped one leaves
no step.";

const LOG_ABOUT: &str = "\
Record a protocol-level trace of the tutorial log.

Runs the tutorial commit-marker log (perdure_pm::commit_log) on the simulated
Px86 backend and prints its trace as steps of specs/tutorial/CommitLog.tla
(ndjson, traces/SCHEMA.md). --crash-after E crashes after E persistence
events, keeps the K-th allowed crash image (--image), recovers and appends
once more. --without-record-fence runs the buggy variant; --drop-first ACTION
removes the first step with that action (a tampered trace, for testing the
validation). Check a trace with tools/trace-check.sh.";

/// `perdure trace`.
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Record a protocol-level trace of the tutorial log.
    #[command(long_about = LOG_ABOUT, after_help = EXIT)]
    Log(LogArgs),
    /// Record traces of Memento's detectable CAS.
    #[command(long_about = MEMENTO_ABOUT, after_help = EXIT)]
    MementoCas(MementoArgs<CasObject>),
    /// Record traces of Memento's MSQ-mmt-indel queue.
    #[command(long_about = MEMENTO_ABOUT, after_help = EXIT)]
    MementoQueue(MementoArgs<QueueObject>),
    /// Record traces of Memento's Clevel-mmt hash table.
    #[command(long_about = MEMENTO_ABOUT, after_help = EXIT)]
    MementoClevel(MementoArgs<ClevelObject>),
    /// Record traces of Redo-PTM.
    #[command(long_about = PTM_ABOUT, after_help = EXIT)]
    RedoPtm(PtmArgs),
    /// Record traces of RedoTimed-PTM.
    #[command(long_about = PTM_ABOUT, after_help = EXIT)]
    RedoTimed(PtmArgs),
    /// Record traces of RedoOpt-PTM.
    #[command(long_about = PTM_ABOUT, after_help = EXIT)]
    RedoOpt(PtmArgs),
    /// Record traces of CX-PTM.
    #[command(long_about = PTM_ABOUT, after_help = EXIT)]
    CxPtm(PtmArgs),
    /// Record traces of CX-PUC.
    #[command(long_about = PTM_ABOUT, after_help = EXIT)]
    CxPuc(PtmArgs),
    /// Record traces of one Mirror/RELAX field.
    #[command(long_about = RELAX_ABOUT, after_help = EXIT)]
    Relax(RelaxArgs),
}

/// The options every seeded producer takes.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The first run's seed (runs use N, N+1, ...).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(0..=u64::MAX / 2))]
    seed: u64,
    /// Runs in the trace.
    #[arg(long, value_name = "R", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    runs: u64,
    /// Threads: 1..=3 for the PTMs and relax, 1..=4 for Memento.
    #[arg(long, value_name = "T", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=8).map(|n| n as usize))]
    threads: usize,
    /// Operations per thread.
    #[arg(long, value_name = "K", default_value_t = 3,
          value_parser = clap::value_parser!(u64).range(1..=6))]
    ops: u64,
    /// Take a full crash at a seeded persistence event in every run, then recover.
    #[arg(long)]
    crash: bool,
    /// Run the implementation with this mutant of perdure_pm::hooks::mutants
    /// switched on (one of the subcommand's construction).
    #[arg(long, value_name = "NAME",
          value_parser = PossibleValuesParser::new(Mutant::ALL.map(Mutant::name))
              .map(|s| Mutant::ALL.into_iter().find(|m| m.name() == s).expect("listed")))]
    mutant: Option<Mutant>,
}

impl RunArgs {
    /// Runs `produce` with `--mutant` switched on (the switch is
    /// process-global: held under its lock, off again afterwards); a mutant
    /// of another construction than `construction` is a usage error.
    fn with_mutant<R>(&self, cmd: &str, construction: &str, produce: impl FnOnce() -> R) -> R {
        let Some(m) = self.mutant else {
            return produce();
        };
        if m.construction() != construction {
            let names: Vec<_> = Mutant::of(construction).map(Mutant::name).collect();
            let msg = format!(
                "--mutant {} is a mutant of {}, not of `perdure trace {cmd}` ({construction}: {})",
                m.name(),
                m.construction(),
                names.join(", ")
            );
            crate::usage_error(&["trace", cmd], msg)
        }
        let _switch = mutants::lock();
        mutants::set(Some(m));
        let r = produce();
        mutants::set(None);
        r
    }

    /// The options of `perdure trace CMD`, a producer of at most
    /// `max_threads` threads (more is a usage error).
    fn options<C, T>(
        &self,
        cmd: &str,
        object: C,
        tamper: Option<T>,
        max_threads: usize,
    ) -> TraceOptions<C, T> {
        if self.threads > max_threads {
            let msg = format!(
                "--threads {} is more than `perdure trace {cmd}` takes (1..={max_threads})",
                self.threads
            );
            crate::usage_error(&["trace", cmd], msg)
        }
        TraceOptions {
            object,
            seed: self.seed,
            runs: self.runs,
            threads: self.threads,
            ops: self.ops,
            crash: self.crash,
            tamper,
        }
    }
}

/// A parser of the names of `values` (their possible values are in the
/// help and the completions; a typo gets a suggestion).
fn named<T: Named + Send + Sync>(values: &'static [T]) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(values.iter().map(|v| v.name()))
        .try_map(|s| T::from_name(&s).ok_or(format!("unknown mode {s:?}")))
}

/// `perdure trace redo-ptm|redo-timed|redo-opt|cx-ptm|cx-puc`.
#[derive(Debug, Args)]
pub struct PtmArgs {
    #[command(flatten)]
    run: RunArgs,
    /// The transactions' object: counters (two words), queue or hash-set
    /// (perdure-ptm's, on the region allocator).
    #[arg(long, value_name = "OBJECT", default_value = "counters",
          value_parser = named(<ptm::trace::Workload as Named>::ALL))]
    workload: ptm::trace::Workload,
    /// Corrupt the first run this way.
    #[arg(long, value_name = "MODE", value_parser = named(<ptm::trace::Tamper as Named>::ALL))]
    tamper: Option<ptm::trace::Tamper>,
}

/// A Memento object as a type: the subcommand's tamper modes are those of
/// its traces ([`memento::trace::Tamper::of`]).
pub trait MementoObject {
    /// The object.
    const OBJECT: memento::trace::Object;
}

/// Memento's detectable CAS.
#[derive(Debug)]
pub struct CasObject;
impl MementoObject for CasObject {
    const OBJECT: memento::trace::Object = memento::trace::Object::Cas;
}

/// Memento's queue.
#[derive(Debug)]
pub struct QueueObject;
impl MementoObject for QueueObject {
    const OBJECT: memento::trace::Object = memento::trace::Object::Queue;
}

/// Memento's Clevel-mmt.
#[derive(Debug)]
pub struct ClevelObject;
impl MementoObject for ClevelObject {
    const OBJECT: memento::trace::Object = memento::trace::Object::Clevel;
}

/// `perdure trace memento-cas|memento-queue|memento-clevel`.
#[derive(Debug, Args)]
pub struct MementoArgs<O: MementoObject> {
    #[command(flatten)]
    run: RunArgs,
    /// Alter the trace this way (drop-first-cas, flip-err or lost-write for memento-cas,
    /// dequeue-twice, drop-repl-flush or lost-link for memento-queue, flip-insert or
    /// lost-item for memento-clevel).
    #[arg(long, value_name = "MODE",
          value_parser = named(memento::trace::Tamper::of(O::OBJECT)))]
    tamper: Option<memento::trace::Tamper>,
    #[arg(skip)]
    object: PhantomData<O>,
}

/// `perdure trace relax`.
#[derive(Debug, Args)]
pub struct RelaxArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Mirror's eager recovery instead of RELAX's lazy one.
    #[arg(long)]
    eager: bool,
    /// Corrupt the trace this way.
    #[arg(long, value_name = "MODE", value_parser = named(<relax::trace::Tamper as Named>::ALL))]
    tamper: Option<relax::trace::Tamper>,
}

/// `perdure trace log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Appending threads (clamped to 1..=8).
    #[arg(long, value_name = "N", default_value_t = 2)]
    threads: u64,
    /// Appends per thread (clamped to 1..=32).
    #[arg(long, value_name = "N", default_value_t = 2)]
    appends: u64,
    /// Crash after E persistence events, then recover and append once more.
    #[arg(long, value_name = "E")]
    crash_after: Option<u64>,
    /// Keep the K-th allowed crash image (modulo their number).
    #[arg(long, value_name = "K", default_value_t = 0)]
    image: u64,
    /// Run the buggy variant without the record fence.
    #[arg(long)]
    without_record_fence: bool,
    /// Remove the first step with this action (a tampered trace).
    #[arg(long, value_name = "ACTION")]
    drop_first: Option<String>,
    /// Write the trace to FILE instead of printing it.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Runs `perdure trace <object>`.
pub fn run(cmd: TraceCommand) -> ExitCode {
    use ptm::trace::Construction;
    let ptm = |c: Construction, a: PtmArgs| {
        let target = ptm::trace::Target {
            construction: c,
            workload: a.workload,
        };
        let opts = a
            .run
            .options(c.name(), target, a.tamper, ptm::trace::MAX_THREADS);
        print_trace(
            a.run
                .with_mutant(c.name(), "ptm", || ptm::trace::trace(&opts)),
        )
    };
    match cmd {
        TraceCommand::Log(a) => trace_log(a),
        TraceCommand::MementoCas(a) => memento_trace("memento-cas", a),
        TraceCommand::MementoQueue(a) => memento_trace("memento-queue", a),
        TraceCommand::MementoClevel(a) => memento_trace("memento-clevel", a),
        TraceCommand::RedoPtm(a) => ptm(Construction::Redo, a),
        TraceCommand::RedoTimed(a) => ptm(Construction::RedoTimed, a),
        TraceCommand::RedoOpt(a) => ptm(Construction::RedoOpt, a),
        TraceCommand::CxPtm(a) => ptm(Construction::Cx, a),
        TraceCommand::CxPuc(a) => ptm(Construction::CxPuc, a),
        TraceCommand::Relax(a) => {
            let recovery = if a.eager {
                relax::trace::Recovery::Eager
            } else {
                relax::trace::Recovery::Lazy
            };
            let max = relax::trace::MAX_THREADS;
            let opts = a.run.options("relax", recovery, a.tamper, max);
            print_trace(
                a.run
                    .with_mutant("relax", "relax", || relax::trace::trace(&opts)),
            )
        }
    }
}

fn memento_trace<O: MementoObject>(cmd: &str, a: MementoArgs<O>) -> ExitCode {
    let opts = a
        .run
        .options(cmd, O::OBJECT, a.tamper, memento::trace::MAX_THREADS);
    print_trace(
        a.run
            .with_mutant(cmd, "memento", || memento::trace::trace(&opts)),
    )
}

/// Prints a produced trace (exit 0) or the producer's error (exit 1).
fn print_trace<E: Display>(trace: Result<String, E>) -> ExitCode {
    match trace {
        Ok(t) => {
            print!("{t}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("perdure trace: {e}");
            ExitCode::from(1)
        }
    }
}

fn trace_log(a: LogArgs) -> ExitCode {
    let opts = log::LogTraceOptions {
        object: LogRun {
            crash_after: a.crash_after.unwrap_or(0),
            image: a.image,
            without_record_fence: a.without_record_fence,
        },
        seed: 0,
        runs: 1,
        threads: a.threads.clamp(1, 8) as usize,
        ops: a.appends.clamp(1, 32),
        crash: a.crash_after.is_some(),
        tamper: a.drop_first.map(DropFirst),
    };
    let text = match log::trace(&opts) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("perdure trace log: {e}");
            return ExitCode::from(1);
        }
    };
    let Some(path) = a.out else {
        print!("{text}");
        return ExitCode::SUCCESS;
    };
    match std::fs::write(&path, text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perdure trace log: cannot write {}: {e}", path.display());
            ExitCode::from(1)
        }
    }
}
