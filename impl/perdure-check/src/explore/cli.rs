//! `perdure explore`: the crash explorer on the command line.

use super::{explore, scenarios, CrashPoints, ExploreConfig, SchedulerKind};
use perdure_pm::sim::VolatileFill;
use std::process::ExitCode;

const HELP: &str = "\
perdure explore — crash exploration on the simulated Px86 backend

USAGE:
    perdure explore SCENARIO [OPTIONS]
    perdure explore --list

OPTIONS:
    --seed S              seed everything derives from (default 1)
    --schedules N         schedules to run (default 20)
    --scheduler KIND      random (default), pct[:DEPTH] (default depth 3), or dfs (exhaustive)
    --images M            images per crash point: all if at most M, else a
                          seeded sample of M (default 64)
    --crash-points K      explore a seeded sample of K crash points per schedule
                          (default: every persistence event)
    --recovery-crashes R  also crash each image's recovery at R sampled points
                          (2 images each) and recover again (default 0: no
                          crash during recovery)
    --volatile MODE       what volatile memory holds after a crash: zero (default) or garbage
    --out DIR             where failing histories are written (default out/explore)
    --max-violations N    stop after N violations (default 1)
    --quiet               no progress lines

Prints what was explored (executions, operations, crash points, images
checked of those Px86 allows) and, for a violation, the seed, schedule, crash
point and image, the reason, and the path of the failing history (ndjson,
readable by `perdure check-history`). The same seed and at least as many
schedules reproduce it.

EXIT STATUS: 0 no violation, 1 violations found, 2 wrong usage.
";

fn usage(msg: &str) -> ExitCode {
    eprintln!("perdure explore: {msg}");
    eprintln!("run `perdure explore --help` for usage");
    ExitCode::from(2)
}

/// Entry point of `perdure explore` (`args` are those after `explore`).
pub fn cli_main(args: &[String]) -> ExitCode {
    cli_main_with(args, Vec::new())
}

/// [`cli_main`] knowing `extra` scenarios besides perdure-check's own (the
/// construction crates' scenarios, registered by the `perdure` binary).
pub fn cli_main_with(args: &[String], extra: Vec<std::sync::Arc<dyn super::Scenario>>) -> ExitCode {
    let all = || scenarios::all().into_iter().chain(extra.iter().cloned());
    let mut cfg = ExploreConfig {
        out_dir: Some("out/explore".into()),
        progress_every: 5,
        ..ExploreConfig::default()
    };
    let mut name: Option<String> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        let parsed: Result<(), String> = (|| {
            match a.as_str() {
                "-h" | "--help" => return Err(String::new()),
                "--list" => {
                    for s in all() {
                        println!("{:<14} {:<8} {}", s.name(), s.object(), s.description());
                    }
                    return Err("listed".into());
                }
                "--seed" => cfg.seed = num(&value("--seed")?)?,
                "--schedules" => cfg.schedules = num(&value("--schedules")?)? as usize,
                "--images" => cfg.images = num(&value("--images")?)?,
                "--crash-points" => {
                    cfg.crash_points = CrashPoints::Sample(num(&value("--crash-points")?)? as usize)
                }
                "--max-violations" => {
                    cfg.max_violations = num(&value("--max-violations")?)?.max(1) as usize
                }
                "--recovery-crashes" => {
                    cfg.recovery_crashes = num(&value("--recovery-crashes")?)? as usize
                }
                "--out" => cfg.out_dir = Some(value("--out")?.into()),
                "--quiet" => cfg.progress_every = 0,
                "--volatile" => {
                    cfg.volatile_fill = match value("--volatile")?.as_str() {
                        "zero" => VolatileFill::Zeroed,
                        "garbage" => VolatileFill::Garbage { seed: cfg.seed },
                        other => {
                            return Err(format!("--volatile takes zero or garbage, not {other:?}"))
                        }
                    }
                }
                "--scheduler" => {
                    let v = value("--scheduler")?;
                    cfg.scheduler = match v.split_once(':') {
                        None if v == "random" => SchedulerKind::Random,
                        None if v == "dfs" => SchedulerKind::Dfs,
                        None if v == "pct" => SchedulerKind::Pct { depth: 3 },
                        Some(("pct", d)) => SchedulerKind::Pct {
                            depth: num(d)?.max(1) as usize,
                        },
                        _ => {
                            return Err(format!(
                                "unknown scheduler {v:?} (random, pct[:DEPTH], dfs)"
                            ))
                        }
                    }
                }
                s if s.starts_with('-') => return Err(format!("unknown option {s}")),
                s if name.is_none() => name = Some(s.to_owned()),
                s => return Err(format!("unexpected argument {s:?}")),
            }
            Ok(())
        })();
        match parsed {
            Ok(()) => {}
            Err(e) if e.is_empty() => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            Err(e) if e == "listed" => return ExitCode::SUCCESS,
            Err(e) => return usage(&e),
        }
    }
    let Some(name) = name else {
        return usage("which scenario? (`perdure explore --list`)");
    };
    let Some(scenario) = all().find(|s| s.name() == name) else {
        return usage(&format!("no scenario {name:?} (`perdure explore --list`)"));
    };
    if let VolatileFill::Garbage { .. } = cfg.volatile_fill {
        cfg.volatile_fill = VolatileFill::Garbage { seed: cfg.seed };
    }
    println!(
        "explore {name}: {} — seed {}, {} schedules ({:?}), images per point {}",
        scenario.description(),
        cfg.seed,
        cfg.schedules,
        cfg.scheduler,
        cfg.images
    );
    let report = explore(scenario, &cfg);
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

fn num(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("{s:?} is not a non-negative integer"))
}
