//! `perdure check-history`: the command-line front end of the checker.

use super::check::{check_history, CheckOptions, Verdict};
use super::parse::{parse_history, History, ObjectKind, Outcome, ParseOptions};
use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Instant;

const HELP: &str = "\
perdure check-history — decide whether a history with crashes is durably linearizable

USAGE:
    perdure check-history FILE [OPTIONS]
    perdure check-history - [OPTIONS]          (read the history from standard input)

The history is ndjson in the format of HISTORY.md: a header naming the object
(register, counter, queue, stack, set, map) and its initial state, then
invoke / return / crash / recover events.

OPTIONS:
    --model M          Check against object M instead of the header's `object`.
    --ignore-type T    Skip events of type T instead of rejecting them (repeatable),
                       for traces that carry extra event types.
    --max-states N     Give up on a search after memoizing N states (verdict
                       `undecided`, exit 3); 0 for no limit. Default 5000000
                       (about 1 GB).
    --quiet, -q        Print only the verdict line.
    --help, -h         Print this help.

OUTPUT:
    A summary (events, operations, crashes, search effort), for a violation the
    minimal failing prefix and the operations involved, and the verdict on the
    last line:
        durably linearizable          exit 0
        not durably linearizable: ... exit 1
        malformed: line N: ...        exit 2 (also: wrong usage, unreadable file)
        undecided: ...                exit 3 (the search limit was reached)
";

/// Entry point of `perdure check-history` (`args` are the arguments after
/// the subcommand).
pub fn cli_main(args: &[String]) -> ExitCode {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = run(
        args,
        &mut stdin.lock(),
        &mut stdout.lock(),
        &mut stderr.lock(),
    );
    ExitCode::from(code)
}

struct Args {
    file: String,
    parse: ParseOptions,
    check: CheckOptions,
    quiet: bool,
}

enum Parsed {
    Run(Args),
    Help,
}

fn parse_args(args: &[String]) -> Result<Parsed, String> {
    let mut file = None;
    let mut parse = ParseOptions::default();
    let mut check = CheckOptions::default();
    let mut quiet = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--help" | "-h" => return Ok(Parsed::Help),
            "--quiet" | "-q" => quiet = true,
            "--model" => {
                let name = value("--model")?;
                let kind = ObjectKind::from_name(&name).ok_or_else(|| {
                    format!(
                        "unknown model {name:?} (known: register, counter, queue, stack, set, map)"
                    )
                })?;
                parse.object_override = Some(kind);
            }
            "--ignore-type" => parse.ignored_event_types.push(value("--ignore-type")?),
            "--max-states" => {
                let n = value("--max-states")?;
                let n: u64 = n.parse().map_err(|_| {
                    format!("--max-states takes a number of states (0: no limit), got {n:?}")
                })?;
                check.max_states = (n > 0).then_some(n);
            }
            "-" => set_file(&mut file, arg)?,
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag:?}")),
            _ => set_file(&mut file, arg)?,
        }
    }
    let file = file.ok_or("missing the history FILE (or - for standard input)")?;
    Ok(Parsed::Run(Args {
        file,
        parse,
        check,
        quiet,
    }))
}

fn set_file(file: &mut Option<String>, arg: &str) -> Result<(), String> {
    match file {
        Some(first) => Err(format!("one history at a time: got {first:?} and {arg:?}")),
        None => {
            *file = Some(arg.to_string());
            Ok(())
        }
    }
}

/// Runs the command with explicit streams; returns the exit status. The
/// verdict goes to `out` (last line), usage and I/O errors to `err`.
pub fn run(args: &[String], stdin: &mut dyn Read, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let args = match parse_args(args) {
        Ok(Parsed::Help) => {
            let _ = out.write_all(HELP.as_bytes());
            return 0;
        }
        Ok(Parsed::Run(args)) => args,
        Err(msg) => {
            let _ = writeln!(err, "perdure check-history: {msg}");
            let _ = writeln!(err, "run `perdure check-history --help` for usage");
            return 2;
        }
    };

    let mut text = String::new();
    let read = if args.file == "-" {
        stdin.read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(&args.file).map(|t| text = t)
    };
    if let Err(e) = read {
        let _ = writeln!(err, "perdure check-history: cannot read {}: {e}", args.file);
        return 2;
    }
    let name = if args.file == "-" {
        "<stdin>"
    } else {
        args.file.as_str()
    };

    let started = Instant::now();
    let history = match parse_history(&text, &args.parse) {
        Ok(h) => h,
        Err(e) => {
            let _ = writeln!(out, "malformed: {e}");
            return 2;
        }
    };
    let report = check_history(&history, &args.check);
    let seconds = started.elapsed().as_secs_f64();

    if !args.quiet {
        let _ = writeln!(out, "history: {name}: {}", summary(&history));
        let s = &report.stats;
        let _ = writeln!(
            out,
            "checked: {} partition{}{} (largest {} operations): {} search steps, {} memoized states{}, in {:.3} s",
            s.partitions,
            if s.partitions == 1 { "" } else { "s" },
            if history.object().is_keyed() { " (one per key)" } else { "" },
            s.largest_partition,
            s.search.steps,
            s.search.states,
            if s.prefix_searches > 0 {
                format!(
                    ", {} prefix search{}",
                    s.prefix_searches,
                    if s.prefix_searches == 1 { "" } else { "es" }
                )
            } else {
                String::new()
            },
            seconds
        );
    }
    match &report.verdict {
        Verdict::DurablyLinearizable => {
            let _ = writeln!(out, "durably linearizable");
        }
        Verdict::NotDurablyLinearizable(v) => {
            if !args.quiet {
                let _ = write!(out, "{}", v.explain(&history));
            }
            let _ = writeln!(out, "{}", v.verdict_line(&history));
        }
        Verdict::Undecided { key, max_states } => {
            let _ = writeln!(
                out,
                "undecided: the search{} reached the limit of {max_states} states (--max-states) before deciding; no violation found",
                match key {
                    Some(k) => format!(" on key {}", super::value::render(k)),
                    None => String::new(),
                }
            );
        }
    }
    report.verdict.exit_status()
}

/// `61 events (lines 1-61), a queue, 30 operations (...), 2 crashes`.
fn summary(h: &History) -> String {
    let (mut returned, mut recovered, mut cut_off, mut pending) = (0, 0, 0, 0);
    for op in h.operations() {
        match op.outcome {
            Outcome::Returned { .. } => returned += 1,
            Outcome::Recovered { .. } => recovered += 1,
            Outcome::CutOff { .. } => cut_off += 1,
            Outcome::Pending => pending += 1,
        }
    }
    let crashes = h.crash_lines().len();
    format!(
        "{} events (lines {}-{}), object {}, {} operations ({returned} returned, {recovered} recovered, {cut_off} cut off without recover, {pending} pending at the end), {crashes} crash{}",
        h.event_count(),
        h.header_line(),
        h.last_line(),
        h.object(),
        h.operations().len(),
        if crashes == 1 { "" } else { "es" }
    )
}
