//! Cross-check of two independent implementations of Px86 (`PX86.md`): the
//! Rust litmus engine (`perdure_check::litmus`) and the TLA+ model
//! `specs/common/Px86.tla`, on the six examples of `PX86.md`.
//!
//! For each example, the `modelcheck/litmus/<name>.litmus` file is parsed and
//! run by the engine, and every `allow`/`forbid` outcome it lists is looked up
//! among the TLC models of `specs/common/` by the invariant that states it
//! unreachable, `Unreachable_<key>_<value>_...` (keys and values in the order
//! the outcome is written, `:` and `-` spelled `_` and `m`):
//!
//! * `forbid O`: the example's model `specs/common/<Module>.cfg` lists the
//!   invariant, and TLC must pass it (no execution and crash yields `O`);
//! * `allow O`: the mutant `specs/common/mutants/<Module>_allow_<key>.cfg`
//!   checks only that invariant and names it in its `EXPECTED` line, and TLC
//!   must report it violated (some execution and crash yields `O`).
//!
//! The test asserts that the engine and TLC give the same answer for every
//! outcome, and that both match the file's expectation. It prints one
//! `PERDURE-CHECK` row (`crosscheck:px86-tla-litmus`). Without `java` or the
//! TLC jar (`make setup` fetches it) it prints a SKIP line and a `skip` row,
//! never a pass.
//!
//! Not covered: the other tests of `modelcheck/litmus/` (the TLA+ side has
//! models for the six examples only); outcomes the files do not list.

use perdure_check::litmus::{parse_file, run, Polarity, Report, Status, Test};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::common;

const CHECK: &str = "crosscheck:px86-tla-litmus";

/// The six examples of `PX86.md`: litmus file name and TLA+ model module.
const EXAMPLES: [(&str, &str); 6] = [
    ("SS", "Px86_SS"),
    ("SS+sameline", "Px86_SS_sameline"),
    ("clflush", "Px86_clflush"),
    ("clflushopt", "Px86_clflushopt"),
    ("clflushopt+sfence", "Px86_clflushopt_sfence"),
    ("MP+clflush", "Px86_MP_clflush"),
];

/// TLC runs at a time (the CI machine has two cores; each run is one JVM
/// with one worker).
const PARALLEL_RUNS: usize = 2;
/// A single run of these models takes seconds; this only guards a hang.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

fn repo_root() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    p.canonicalize().unwrap_or(p)
}

fn row(status: &str, explored: &str, detail: &str, seconds: f64) -> String {
    let seconds = (seconds * 10.0).round() / 10.0;
    common::report_row(CHECK, "litmus", status, explored, detail, Some(seconds))
}

/// Why TLC cannot run here, if it cannot: `java` missing or not working, or
/// the jar that `tools/env.sh` names absent.
fn tlc_unavailable(root: &Path) -> Option<String> {
    match Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => {}
        Ok(s) => return Some(format!("`java -version` failed ({s})")),
        Err(e) => return Some(format!("java not found on PATH ({e})")),
    }
    let out = Command::new("bash")
        .arg("-c")
        .arg("source tools/env.sh && printf %s \"$TLA_JAR\"")
        .current_dir(root)
        .output();
    let jar = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => {
            return Some(format!(
                "sourcing tools/env.sh failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }
        Err(e) => return Some(format!("bash not runnable ({e})")),
    };
    match std::fs::metadata(&jar) {
        Ok(m) if m.len() > 0 => None,
        _ => Some(format!("TLC jar missing at {jar}: run `make setup`")),
    }
}

/// The invariant of the TLA+ models that states outcome `e` unreachable.
fn invariant_name(test: &Test, outcome: &[(perdure_check::litmus::Key, i64)]) -> String {
    let mut name = String::from("Unreachable");
    for &(k, v) in outcome {
        let key: String = test
            .key_name(k)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let val = if v < 0 {
            format!("m{}", v.unsigned_abs())
        } else {
            v.to_string()
        };
        name.push_str(&format!("_{key}_{val}"));
    }
    name
}

/// The non-comment words of a TLC cfg.
fn cfg_words(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split("\\*").next().unwrap_or(""))
        .flat_map(|l| l.split_whitespace().map(str::to_owned))
        .collect()
}

/// The invariants a cfg checks (the words after INVARIANT/INVARIANTS up to
/// the next cfg keyword).
fn cfg_invariants(text: &str) -> Vec<String> {
    const KEYWORDS: [&str; 14] = [
        "CONSTANT",
        "CONSTANTS",
        "INIT",
        "NEXT",
        "SPECIFICATION",
        "INVARIANT",
        "INVARIANTS",
        "PROPERTY",
        "PROPERTIES",
        "SYMMETRY",
        "VIEW",
        "CONSTRAINT",
        "CONSTRAINTS",
        "CHECK_DEADLOCK",
    ];
    let mut out = vec![];
    let mut inside = false;
    for w in cfg_words(text) {
        if KEYWORDS.contains(&w.as_str()) {
            inside = w.starts_with("INVARIANT");
        } else if inside {
            out.push(w);
        }
    }
    out
}

/// The invariant a mutant cfg's `\* ... EXPECTED: TLC reports Name violated`
/// line names (as tools/verify.py reads it).
fn cfg_expected(text: &str) -> Option<String> {
    text.lines()
        .filter(|l| l.trim_start().starts_with("\\*"))
        .find_map(|l| {
            let after = &l[l.find("EXPECTED:")? + "EXPECTED:".len()..];
            let words: Vec<&str> = after
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .collect();
            let i = words.iter().position(|w| *w == "violated")?;
            (i > 0).then(|| words[i - 1].to_owned())
        })
}

/// One TLC run: the model, the cfg, and what `tools/tlc.sh` summarised.
#[derive(Clone, Debug)]
struct TlcRun {
    cfg: PathBuf,
    /// `"pass"` or `"fail"`.
    status: String,
    detail: String,
    distinct: Option<u64>,
    seconds: f64,
}

impl TlcRun {
    fn violated(&self, invariant: &str) -> bool {
        self.status == "fail"
            && self
                .detail
                .contains(&format!("Invariant {invariant} is violated"))
    }
}

fn run_tlc(root: &Path, module: &str, cfg: &Path) -> TlcRun {
    let start = Instant::now();
    let model = root.join("specs/common").join(format!("{module}.tla"));
    let failed = |detail: String| TlcRun {
        cfg: cfg.to_owned(),
        status: "error".into(),
        detail,
        distinct: None,
        seconds: start.elapsed().as_secs_f64(),
    };
    let mut cmd = Command::new("bash");
    cmd.arg(root.join("tools/tlc.sh"))
        .arg(&model)
        .arg(cfg)
        .current_dir(root)
        // Tiny models (at most a few hundred states): one worker per JVM,
        // the JIT's quick tier only, and a small heap (TLC sizes its
        // fingerprint set from the heap, and zeroing a large one costs more
        // than checking these models); ~30% faster start-up than the
        // defaults.
        .env("TLC_WORKERS", "1")
        .env(
            "TLC_JAVA_OPTS",
            "-XX:+UseParallelGC -XX:TieredStopAtLevel=1 -Xmx256m",
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot run tools/tlc.sh: {e}")),
    };
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > RUN_TIMEOUT => {
                // The whole group: bash and the java it started.
                let _ = Command::new("kill")
                    .arg("--")
                    .arg(format!("-{}", child.id()))
                    .status();
                let _ = child.wait();
                return failed(format!("TLC timed out after {RUN_TIMEOUT:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return failed(format!("waiting for TLC: {e}")),
        }
    }
    let out = reader.join().unwrap_or_default();
    let Some(summary) = out
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("TLC-SUMMARY "))
    else {
        return failed("tools/tlc.sh printed no TLC-SUMMARY line".into());
    };
    let s: Json = match serde_json::from_str(summary) {
        Ok(v) => v,
        Err(e) => return failed(format!("bad TLC-SUMMARY ({e}): {summary}")),
    };
    TlcRun {
        cfg: cfg.to_owned(),
        status: s["status"].as_str().unwrap_or("error").to_owned(),
        detail: s["detail"].as_str().unwrap_or("").to_owned(),
        distinct: s["distinct"].as_u64(),
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// One litmus expectation and where the TLA+ side states it.
struct Outcome {
    example: &'static str,
    module: &'static str,
    text: String,
    polarity: Polarity,
    /// The engine found the outcome reachable.
    engine_reachable: bool,
    invariant: String,
    /// Index into the list of cfgs to run.
    job: usize,
}

#[test]
fn px86_tla_model_and_litmus_engine_agree_on_the_six_examples() {
    let start = Instant::now();
    let root = repo_root();
    if let Some(why) = tlc_unavailable(&root) {
        println!("SKIP {CHECK}: {why}; the TLA+ side of the cross-check cannot run");
        println!(
            "{}",
            row("skip", "", &format!("{why}; run make setup"), 0.0)
        );
        return;
    }

    let mut problems: Vec<String> = vec![];
    let mut outcomes: Vec<Outcome> = vec![];
    let mut jobs: Vec<(&'static str, PathBuf)> = vec![];
    let mut engine_states = 0u64;
    let job_of = |jobs: &mut Vec<(&'static str, PathBuf)>, module: &'static str, cfg: PathBuf| {
        jobs.iter().position(|(_, c)| *c == cfg).unwrap_or_else(|| {
            jobs.push((module, cfg));
            jobs.len() - 1
        })
    };

    for (name, module) in EXAMPLES {
        let file = root
            .join("modelcheck/litmus")
            .join(format!("{name}.litmus"));
        let test = parse_file(&file).unwrap_or_else(|e| panic!("{e}"));
        let report: Report = run(&test);
        engine_states += report.stats.states;
        assert!(
            report.stats.complete,
            "{name}: litmus exploration incomplete"
        );
        let never_cfg = root.join("specs/common").join(format!("{module}.cfg"));
        let never_text = std::fs::read_to_string(&never_cfg)
            .unwrap_or_else(|e| panic!("{}: {e}", never_cfg.display()));
        let never_invariants = cfg_invariants(&never_text);
        for v in &report.verdicts {
            let e = &test.expectations[v.expectation];
            let text = test.outcome_text(&e.outcome);
            let engine_reachable = match (e.polarity, v.status) {
                (Polarity::Allow, Status::Met) | (Polarity::Forbid, Status::NotMet) => true,
                (Polarity::Allow, Status::NotMet) | (Polarity::Forbid, Status::Met) => false,
                (_, Status::Undecided) => {
                    problems.push(format!("{name}: `{text}` undecided by the engine"));
                    continue;
                }
            };
            let invariant = invariant_name(&test, &e.outcome);
            let cfg = match e.polarity {
                Polarity::Forbid => {
                    if !never_invariants.contains(&invariant) {
                        problems.push(format!(
                            "{name}: forbid `{text}`: {} does not check {invariant}",
                            never_cfg.display()
                        ));
                        continue;
                    }
                    never_cfg.clone()
                }
                Polarity::Allow => {
                    let key = &invariant["Unreachable_".len()..];
                    let cfg = root
                        .join("specs/common/mutants")
                        .join(format!("{module}_allow_{key}.cfg"));
                    let Ok(t) = std::fs::read_to_string(&cfg) else {
                        problems.push(format!(
                            "{name}: allow `{text}`: no mutant {}",
                            cfg.display()
                        ));
                        continue;
                    };
                    if cfg_expected(&t).as_deref() != Some(invariant.as_str())
                        || cfg_invariants(&t) != [invariant.clone()]
                    {
                        problems.push(format!(
                            "{name}: allow `{text}`: {} must check only {invariant} and \
                             expect it violated",
                            cfg.display()
                        ));
                        continue;
                    }
                    cfg
                }
            };
            let job = job_of(&mut jobs, module, cfg);
            outcomes.push(Outcome {
                example: name,
                module,
                text,
                polarity: e.polarity,
                engine_reachable,
                invariant,
                job,
            });
        }
        // The example's own model runs even when the file has no forbid line.
        job_of(&mut jobs, module, never_cfg);
    }

    // Run every cfg once, PARALLEL_RUNS at a time.
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<TlcRun>>> = Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|s| {
        for _ in 0..PARALLEL_RUNS {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some((module, cfg)) = jobs.get(i) else {
                    break;
                };
                let r = run_tlc(&root, module, cfg);
                results.lock().unwrap()[i] = Some(r);
            });
        }
    });
    let results: Vec<TlcRun> = results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect();
    let rel = |p: &Path| p.strip_prefix(&root).unwrap_or(p).display().to_string();

    // Every example model must pass as a whole (its forbidden outcomes, the
    // rule invariants of Px86.tla, TypeOK); a violated forbidden outcome is
    // reported below with the outcome.
    for (i, r) in results.iter().enumerate() {
        let is_example_model = r.cfg.parent() == Some(root.join("specs/common").as_path());
        let explained = outcomes
            .iter()
            .any(|o| o.job == i && r.violated(&o.invariant));
        if is_example_model && r.status != "pass" && !explained {
            problems.push(format!("{}: TLC {}: {}", rel(&r.cfg), r.status, r.detail));
        }
    }

    let mut agree = 0;
    println!(
        "{:<18} {:<6} {:<16} {:<10} {:<10} TLA+ model",
        "example", "", "outcome", "engine", "TLC"
    );
    for o in &outcomes {
        let r = &results[o.job];
        let tlc_reachable = if r.violated(&o.invariant) {
            Some(true)
        } else if r.status == "pass" {
            Some(false)
        } else {
            None
        };
        let word = |b: bool| if b { "reachable" } else { "never" };
        println!(
            "{:<18} {:<6} {:<16} {:<10} {:<10} {}",
            o.example,
            if o.polarity == Polarity::Allow {
                "allow"
            } else {
                "forbid"
            },
            o.text,
            word(o.engine_reachable),
            tlc_reachable.map_or("error", word),
            rel(&r.cfg)
        );
        let expected = o.polarity == Polarity::Allow;
        match tlc_reachable {
            None => problems.push(format!(
                "{} `{}`: TLC on {} ended neither with a pass nor with {} violated: {} {}",
                o.example,
                o.text,
                rel(&r.cfg),
                o.invariant,
                r.status,
                r.detail
            )),
            Some(t) if t != o.engine_reachable => problems.push(format!(
                "{} `{}`: the engine says {}, TLC ({} on {}) says {}",
                o.example,
                o.text,
                word(o.engine_reachable),
                o.invariant,
                o.module,
                word(t)
            )),
            Some(t) if t != expected => problems.push(format!(
                "{} `{}`: both say {} but the file expects {}",
                o.example,
                o.text,
                word(t),
                word(expected)
            )),
            Some(_) => agree += 1,
        }
    }

    let tla_states: u64 = results.iter().filter_map(|r| r.distinct).sum();
    let tlc_seconds: f64 = results.iter().map(|r| r.seconds).sum();
    let explored = format!(
        "{} examples, {agree} outcomes agree ({} allow, {} forbid); {} TLC runs, {tla_states} distinct TLA+ states; {engine_states} engine states",
        EXAMPLES.len(),
        outcomes.iter().filter(|o| o.polarity == Polarity::Allow).count(),
        outcomes.iter().filter(|o| o.polarity == Polarity::Forbid).count(),
        results.len(),
    );
    let seconds = start.elapsed().as_secs_f64();
    if problems.is_empty() {
        println!(
            "{}",
            row(
                "pass",
                &explored,
                &format!(
                    "every allow/forbid outcome of the six PX86.md examples gets the same answer from perdure_check::litmus and TLC on specs/common/Px86.tla (forbid: the example's model passes; allow: its mutant reports Unreachable_* violated); TLC time {tlc_seconds:.0} s over {PARALLEL_RUNS} parallel runs"
                ),
                seconds
            )
        );
    } else {
        println!("{}", row("fail", &explored, &problems.join("; "), seconds));
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(agree, outcomes.len());
    assert!(agree >= 6, "only {agree} outcomes compared");
}

#[test]
fn invariant_names_follow_the_outcome_text() {
    let test = perdure_check::litmus::parse(
        "name t\nthread 0\n  load r1 x\nthread 1\n  load r1 y\n  store z -3\nend\nallow 0:r1=1 x=0 z=-3\n",
        "t.litmus",
    )
    .unwrap();
    let e = &test.expectations[0];
    assert_eq!(
        invariant_name(&test, &e.outcome),
        "Unreachable_0_r1_1_x_0_z_m3"
    );
    let cfg = "\\* MODEL: ../M.tla\n\\* EXPECTED: TLC reports Unreachable_x_0 violated.\nSPECIFICATION Spec\nINVARIANTS TypeOK\n  Unreachable_x_0 \\* comment\nCHECK_DEADLOCK FALSE\n";
    assert_eq!(cfg_expected(cfg).as_deref(), Some("Unreachable_x_0"));
    assert_eq!(cfg_invariants(cfg), ["TypeOK", "Unreachable_x_0"]);
}
