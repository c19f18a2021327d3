//! `perdure trace-to-tla` and `perdure trace`.

use super::log::{drop_first, trace, LogTraceOptions};
use super::to_tla_module;
use std::process::ExitCode;

const HELP_TO_TLA: &str = "\
perdure trace-to-tla — turn an ndjson trace into a TLA+ module

USAGE:
    perdure trace-to-tla FILE --module NAME [--out DIR]

Writes DIR/NAME.tla (or prints it without --out), defining `Trace`, a
sequence of records, one per line of FILE (`-` reads stdin), and `Null`.
A line that is not JSON or holds what TLA+ cannot represent (a fraction,
an object key that is not an identifier) is an error naming its line.

EXIT STATUS: 0 written, 1 bad input, 2 wrong usage.
";

const HELP_TRACE: &str = "\
perdure trace — record protocol-level traces of the implementation

USAGE:
    perdure trace log [--threads N] [--appends N] [--crash-after E] [--image K]
                      [--without-record-fence] [--drop-first ACTION] [--out FILE]

Runs the tutorial commit-marker log (perdure_pm::commit_log) on the simulated
Px86 backend and prints its trace as steps of specs/tutorial/CommitLog.tla
(ndjson, traces/SCHEMA.md). --crash-after E crashes after E persistence
events, keeps the K-th allowed crash image (--image), recovers and appends
once more. --without-record-fence runs the buggy variant; --drop-first ACTION
removes the first step with that action (a tampered trace, for testing the
validation). Check a trace with tools/trace-check.sh.

EXIT STATUS: 0 written, 1 the run failed, 2 wrong usage.
";

fn usage(cmd: &str, msg: &str) -> ExitCode {
    eprintln!("perdure {cmd}: {msg}");
    eprintln!("run `perdure {cmd} --help` for usage");
    ExitCode::from(2)
}

/// Entry point of `perdure trace-to-tla` (`args` after the subcommand).
pub fn cli_main(args: &[String]) -> ExitCode {
    let (mut file, mut module, mut out) = (None, None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => {
                print!("{HELP_TO_TLA}");
                return ExitCode::SUCCESS;
            }
            "--module" => match it.next() {
                Some(m) => module = Some(m.clone()),
                None => return usage("trace-to-tla", "--module needs a NAME"),
            },
            "--out" => match it.next() {
                Some(d) => out = Some(d.clone()),
                None => return usage("trace-to-tla", "--out needs a DIR"),
            },
            s if s.starts_with('-') && s != "-" => {
                return usage("trace-to-tla", &format!("unknown option {s}"))
            }
            s if file.is_none() => file = Some(s.to_owned()),
            s => return usage("trace-to-tla", &format!("unexpected argument {s:?}")),
        }
    }
    let (Some(file), Some(module)) = (file, module) else {
        return usage("trace-to-tla", "needs FILE and --module NAME");
    };
    let text = if file == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s) {
            eprintln!("perdure trace-to-tla: cannot read stdin: {e}");
            return ExitCode::from(1);
        }
        s
    } else {
        match std::fs::read_to_string(&file) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("perdure trace-to-tla: cannot read {file}: {e}");
                return ExitCode::from(1);
            }
        }
    };
    let tla = match to_tla_module(&text, &module) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("perdure trace-to-tla: {file}: {e}");
            return ExitCode::from(1);
        }
    };
    match out {
        None => {
            print!("{tla}");
            ExitCode::SUCCESS
        }
        Some(dir) => {
            let path = std::path::Path::new(&dir).join(format!("{module}.tla"));
            match std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, tla)) {
                Ok(()) => {
                    println!("wrote {}", path.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("perdure trace-to-tla: cannot write {}: {e}", path.display());
                    ExitCode::from(1)
                }
            }
        }
    }
}

/// Entry point of `perdure trace` (`args` after the subcommand).
pub fn trace_cli_main(args: &[String]) -> ExitCode {
    let mut it = args.iter();
    match it.next().map(String::as_str) {
        Some("-h" | "--help") | None => {
            print!("{HELP_TRACE}");
            return if args.is_empty() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
        Some("log") => {}
        Some(other) => {
            return usage(
                "trace",
                &format!("unknown object {other:?} (only `log` so far)"),
            )
        }
    }
    let mut opts = LogTraceOptions::default();
    let (mut drop, mut out) = (None, None);
    while let Some(a) = it.next() {
        let r: Result<(), String> = (|| {
            let mut value = |flag: &str| {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            let num = |flag: &str, v: String| {
                v.parse::<u64>()
                    .map_err(|_| format!("{flag} needs a non-negative integer, not {v:?}"))
            };
            match a.as_str() {
                "--threads" => {
                    opts.threads = num("--threads", value("--threads")?)?.clamp(1, 8) as usize
                }
                "--appends" => {
                    opts.appends = num("--appends", value("--appends")?)?.clamp(1, 32) as usize
                }
                "--crash-after" => {
                    opts.crash_after = Some(num("--crash-after", value("--crash-after")?)?)
                }
                "--image" => opts.image = num("--image", value("--image")?)?,
                "--without-record-fence" => opts.without_record_fence = true,
                "--drop-first" => drop = Some(value("--drop-first")?),
                "--out" => out = Some(value("--out")?),
                "-h" | "--help" => return Err(String::new()),
                s => return Err(format!("unknown argument {s:?}")),
            }
            Ok(())
        })();
        match r {
            Ok(()) => {}
            Err(e) if e.is_empty() => {
                print!("{HELP_TRACE}");
                return ExitCode::SUCCESS;
            }
            Err(e) => return usage("trace", &e),
        }
    }
    let mut text = match trace(&opts) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("perdure trace log: {e}");
            return ExitCode::from(1);
        }
    };
    if let Some(action) = drop {
        text = drop_first(&text, &action);
    }
    match out {
        None => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Some(path) => match std::fs::write(&path, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("perdure trace log: cannot write {path}: {e}");
                ExitCode::from(1)
            }
        },
    }
}
