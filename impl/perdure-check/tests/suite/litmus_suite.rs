//! The litmus suite `modelcheck/litmus/` through the library API, and the six
//! examples of `PX86.md` against the verdicts of its table.

use perdure_check::litmus::{
    check_paths, parse, parse_file, run, summarize, Limits, Polarity, Status,
};
use std::path::PathBuf;

use crate::common;

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../modelcheck/litmus")
}

#[test]
fn the_whole_suite_parses_and_every_expectation_is_met() {
    let start = std::time::Instant::now();
    let results = check_paths(&[suite_dir()], Limits::default());
    let summary = summarize(&results);
    let mut problems = vec![];
    for r in &results {
        match &r.outcome {
            Err(e) => problems.push(e.to_string()),
            Ok((test, report)) => {
                if !report.stats.complete {
                    problems.push(format!("{}: exploration incomplete", test.name));
                }
                for v in &report.verdicts {
                    if v.status != Status::Met {
                        let e = &test.expectations[v.expectation];
                        problems.push(format!(
                            "{}:{}: {:?} {} is {:?}",
                            test.file,
                            e.line,
                            e.polarity,
                            test.outcome_text(&e.outcome),
                            v.status
                        ));
                    }
                }
            }
        }
    }
    let status = if problems.is_empty() { "pass" } else { "fail" };
    let explored = format!(
        "{} tests, {} expectations, {} states, {} persisted states",
        summary.tests,
        summary.met + summary.unmet,
        summary.states,
        summary.persisted_states
    );
    let seconds = start.elapsed().as_secs_f64();
    let detail = if problems.is_empty() {
        format!(
            "every allow/forbid met; exhaustive over TSO interleavings, crash points and per-line persisted prefixes ({} files failed to parse)",
            summary.failed_files
        )
    } else {
        problems.join("; ")
    };
    let row = common::report_row(
        "litmus:modelcheck/litmus",
        "litmus",
        status,
        &explored,
        &detail,
        Some(seconds),
    );
    println!("{row}");
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(summary.tests >= 30, "only {} tests", summary.tests);
    assert_eq!(summary.failed_files, 0);
    assert!(summary.passed());
}

#[test]
fn the_suite_uses_both_polarities_for_every_instruction() {
    let mut seen: Vec<(String, bool, bool)> = vec![];
    for r in check_paths(&[suite_dir()], Limits::default()) {
        let (test, _) = r.outcome.expect("parses");
        let allow = test
            .expectations
            .iter()
            .any(|e| e.polarity == Polarity::Allow);
        let forbid = test
            .expectations
            .iter()
            .any(|e| e.polarity == Polarity::Forbid);
        for (t, th) in test.threads.iter().enumerate() {
            for pc in 0..th.instrs.len() {
                let kw = test.instr_text(t, pc);
                let kw = kw.split_whitespace().next().unwrap().to_string();
                match seen.iter_mut().find(|s| s.0 == kw) {
                    Some(s) => {
                        s.1 |= allow;
                        s.2 |= forbid;
                    }
                    None => seen.push((kw, allow, forbid)),
                }
            }
        }
    }
    for &kw in perdure_check::litmus::syntax::INSTRUCTIONS {
        let s = seen
            .iter()
            .find(|s| s.0 == kw)
            .unwrap_or_else(|| panic!("no test uses {kw}"));
        assert!(s.1 && s.2, "{kw}: allow {} forbid {}", s.1, s.2);
    }
}

/// PX86.md's table: name, program (threads separated by `||`), outcome, and
/// whether Px86 allows it.
const TABLE: &[(&str, &str, &str, &str, bool)] = &[
    ("SS", "", "store x 1; store y 1", "x=0 y=1", true),
    (
        "SS+sameline",
        "line x y",
        "store x 1; store y 1",
        "x=0 y=1",
        false,
    ),
    (
        "clflush",
        "",
        "store x 1; clflush x; store y 1",
        "x=0 y=1",
        false,
    ),
    (
        "clflushopt",
        "",
        "store x 1; clflushopt x; store y 1",
        "x=0 y=1",
        true,
    ),
    (
        "clflushopt+sfence",
        "",
        "store x 1; clflushopt x; sfence; store y 1",
        "x=0 y=1",
        false,
    ),
    (
        "MP+clflush",
        "",
        "store x 1 || load r1 x; clflush x; store y 1",
        "r1=1 x=0 y=1",
        false,
    ),
];

fn program(name: &str, header: &str, threads: &str, expectation: &str) -> String {
    let mut s = format!("name {name}\n{header}\n");
    for (i, t) in threads.split("||").enumerate() {
        s += &format!("thread {i}\n");
        for instr in t.split(';') {
            s += &format!("  {}\n", instr.trim());
        }
    }
    s + "end\n" + expectation + "\n"
}

#[test]
fn the_six_px86_examples_give_the_tables_verdicts() {
    for &(name, header, threads, outcome, allowed) in TABLE {
        // Both polarities of the table's outcome: exactly the table's one is
        // met, so neither verdict is vacuous.
        let allow = parse(
            &program(name, header, threads, &format!("allow {outcome}")),
            name,
        )
        .unwrap();
        let forbid = parse(
            &program(name, header, threads, &format!("forbid {outcome}")),
            name,
        )
        .unwrap();
        let a = run(&allow).verdicts[0].status;
        let f = run(&forbid).verdicts[0].status;
        if allowed {
            assert_eq!((a, f), (Status::Met, Status::NotMet), "{name}");
        } else {
            assert_eq!((a, f), (Status::NotMet, Status::Met), "{name}");
        }
    }
}

#[test]
fn the_suite_holds_the_six_examples_under_their_names() {
    for &(name, header, threads, outcome, allowed) in TABLE {
        let test = parse_file(&suite_dir().join(format!("{name}.litmus")))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(test.name, name);
        // Same program as the table.
        let table = parse(&program(name, header, threads, "allow x=0"), name).unwrap();
        let prog = |t: &perdure_check::litmus::Test| {
            t.threads
                .iter()
                .map(|th| (th.id, th.instrs.clone(), th.registers.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(prog(&test), prog(&table), "{name}: program");
        assert_eq!(test.locations, table.locations, "{name}: locations");
        assert_eq!(test.lines, table.lines, "{name}: lines");
        // The table's expectation is in the file with the table's polarity.
        let want = if allowed {
            Polarity::Allow
        } else {
            Polarity::Forbid
        };
        assert!(
            test.expectations
                .iter()
                .any(|e| e.polarity == want && test.outcome_text(&e.outcome) == outcome),
            "{name}: no `{want:?} {outcome}` line"
        );
        assert!(run(&test).all_met(), "{name}");
    }
}

#[test]
fn every_suite_file_explains_its_expectations() {
    for r in check_paths(&[suite_dir()], Limits::default()) {
        let src = std::fs::read_to_string(&r.path).unwrap();
        assert!(
            src.lines().next().is_some_and(|l| l.starts_with('#')),
            "{}: starts with a comment",
            r.path.display()
        );
        assert!(
            src.lines()
                .filter(|l| l.trim_start().starts_with('#'))
                .count()
                >= 2,
            "{}: gives reasons",
            r.path.display()
        );
    }
}

#[test]
fn the_readme_lists_every_test() {
    let readme = std::fs::read_to_string(suite_dir().join("README.md")).expect("README.md");
    for r in check_paths(&[suite_dir()], Limits::default()) {
        let (test, _) = r.outcome.expect("parses");
        assert!(
            readme.contains(&format!("`{}`", test.name)),
            "README.md does not list {}",
            test.name
        );
    }
}
