//! `perdure check-history` as a command: exit statuses, the verdict on the
//! last line, options, standard input, usage errors, and every file under
//! `tests/data/history/` (whose name states the expected answer).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs the command; returns (exit status, stdout, stderr).
fn cli(args: &[&str], stdin: &str) -> (u8, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_perdure"))
        .arg("check-history")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perdure runs");
    // A usage error exits before reading: a broken pipe is fine.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    let out = child.wait_with_output().expect("perdure finishes");
    (
        out.status.code().expect("an exit status") as u8,
        String::from_utf8(out.stdout).expect("UTF-8 output"),
        String::from_utf8(out.stderr).expect("UTF-8 errors"),
    )
}

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../perdure-check/tests/data/history")
}

const LOST: &str = r#"{"type":"header","object":"queue"}
{"type":"invoke","id":1,"thread":0,"op":"enq","args":[5]}
{"type":"return","id":1,"value":null}
{"type":"crash"}
{"type":"invoke","id":2,"thread":0,"op":"deq","args":[]}
{"type":"return","id":2,"value":null}
"#;

#[test]
fn every_data_file_gets_the_verdict_its_name_states() {
    let mut seen = 0;
    let mut kinds = [0; 3];
    for entry in std::fs::read_dir(data_dir()).expect("tests/data/history") {
        let path = entry.expect("directory entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let Some(stem) = name.strip_suffix(".ndjson") else {
            continue;
        };
        let expect = stem.rsplit('.').next().unwrap_or("");
        let (code, out, err) = cli(&[path.to_str().unwrap()], "");
        let last = last_line(&out);
        if expect == "pass" {
            assert_eq!(
                (code, last),
                (0, "durably linearizable"),
                "{name}\n{out}{err}"
            );
            kinds[0] += 1;
        } else if let Some(line) = expect.strip_prefix("fail-") {
            assert_eq!(code, 1, "{name}\n{out}{err}");
            let want = format!(
                "not durably linearizable: the minimal failing prefix ends at line {line},"
            );
            assert!(last.starts_with(&want), "{name}: {last}");
            assert!(out.contains(&format!("lines 1-{line};")), "{name}\n{out}");
            kinds[1] += 1;
        } else if let Some(line) = expect.strip_prefix("malformed-") {
            assert_eq!(code, 2, "{name}\n{out}{err}");
            assert!(
                last.starts_with(&format!("malformed: line {line}: ")),
                "{name}: {last}"
            );
            kinds[2] += 1;
        } else {
            panic!("{name}: the name must end in .pass, .fail-L or .malformed-L before .ndjson");
        }
        seen += 1;
    }
    assert!(
        seen >= 20 && kinds.iter().all(|&k| k >= 5),
        "{seen} files, {kinds:?}"
    );
}

#[test]
fn verdicts_and_exit_statuses() {
    let ok = data_dir().join("history_md_example.pass.ndjson");
    let (code, out, err) = cli(&[ok.to_str().unwrap()], "");
    assert_eq!(
        (code, last_line(&out)),
        (0, "durably linearizable"),
        "{err}"
    );
    assert!(out.starts_with("history: "), "{out}");
    assert!(out.contains("3 operations (2 returned, 1 recovered, 0 cut off without recover, 0 pending at the end), 1 crash"), "{out}");

    let (code, out, _) = cli(&["-"], LOST);
    assert_eq!(code, 1);
    assert!(last_line(&out)
        .starts_with("not durably linearizable: the minimal failing prefix ends at line 6"));
    assert!(out.contains("* id 2 (thread 0): deq() -> null"), "{out}");
    assert!(out.contains("id 1 (thread 0): enq(5) -> null"), "{out}");

    let (code, out, _) = cli(
        &["-"],
        "{\"type\":\"header\",\"object\":\"queue\"}\n{\"type\":\"crash\"\n",
    );
    assert_eq!(code, 2);
    assert!(
        last_line(&out).starts_with("malformed: line 2: not valid JSON: EOF while parsing"),
        "{out}"
    );
}

#[test]
fn html_writes_the_page_for_either_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("lost.html");
    let (code, out, err) = cli(&["-", "--html", page.to_str().unwrap()], LOST);
    // The report and exit status are unchanged.
    assert_eq!(code, 1, "{err}");
    assert!(last_line(&out)
        .starts_with("not durably linearizable: the minimal failing prefix ends at line 6"));
    assert!(err.is_empty(), "{err}");
    let html = std::fs::read_to_string(&page).expect("page written");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        html.contains("<title>&lt;stdin&gt; — perdure check-history</title>"),
        "title escaped"
    );
    assert!(html.contains("data-verdict=\"fail\""));
    assert!(html.contains("data-prefix-end=\"6\""));
    assert!(html.contains("<g class=\"crash\" data-line=\"4\""));
    assert!(html.contains("<g class=\"op returned culprit\" data-id=\"2\""));
    assert!(!html.contains("<script"));

    let ok = data_dir().join("history_md_example.pass.ndjson");
    let (code, _, err) = cli(
        &[ok.to_str().unwrap(), "-q", "--html", page.to_str().unwrap()],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&page).expect("page replaced");
    assert!(html.contains("data-verdict=\"pass\""));
    assert!(html.contains("class=\"recover\""), "the recover is marked");
}

#[test]
fn html_to_an_unwritable_path_exits_2_after_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("no-such-dir").join("page.html");
    let (code, out, err) = cli(&["-", "--html", bad.to_str().unwrap()], LOST);
    assert_eq!(code, 2);
    // Nothing else is lost: the whole report is printed.
    assert!(out.contains("minimal failing prefix: lines 1-6"), "{out}");
    assert!(
        last_line(&out).starts_with("not durably linearizable"),
        "{out}"
    );
    assert!(
        err.starts_with("perdure check-history: cannot write the HTML page ")
            && err.contains("page.html"),
        "{err}"
    );
    assert!(!bad.exists());
    // A malformed history draws no page, says so, and keeps exit 2.
    let page = dir.path().join("m.html");
    let (code, out, err) = cli(
        &["-", "--html", page.to_str().unwrap()],
        "{\"type\":\"crash\"}\n",
    );
    assert_eq!(code, 2);
    assert!(last_line(&out).starts_with("malformed: line 1"), "{out}");
    assert!(err.contains("no HTML page written"), "{err}");
    assert!(!page.exists());
}

#[test]
fn quiet_prints_only_the_verdict() {
    let (code, out, _) = cli(&["-", "--quiet"], LOST);
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 1, "{out}");
    let (code, out, _) = cli(&["-q", "-"], "{\"type\":\"header\",\"object\":\"set\"}\n");
    assert_eq!((code, out.as_str()), (0, "durably linearizable\n"));
}

#[test]
fn model_and_ignored_types() {
    let text = "{\"type\":\"header\",\"object\":\"memento-queue\"}\n\
                {\"type\":\"invoke\",\"id\":1,\"thread\":0,\"op\":\"enq\",\"args\":[1]}\n\
                {\"type\":\"snapshot\",\"state\":[1]}\n\
                {\"type\":\"return\",\"id\":1,\"value\":null}\n";
    let (code, out, _) = cli(&["-"], text);
    assert_eq!((code, last_line(&out)), (2, "malformed: line 1: unknown object \"memento-queue\" (known: register, counter, queue, stack, set, map)"));
    let (code, out, _) = cli(&["-", "--model", "queue"], text);
    assert_eq!(code, 2);
    assert!(
        last_line(&out).starts_with("malformed: line 3: unknown event type \"snapshot\""),
        "{out}"
    );
    let (code, out, _) = cli(
        &["-", "--model", "queue", "--ignore-type", "snapshot"],
        text,
    );
    assert_eq!(
        (code, last_line(&out)),
        (0, "durably linearizable"),
        "{out}"
    );
}

#[test]
fn the_search_bound_gives_undecided() {
    // 16 concurrent adds and a get no subset sums to: deciding takes 2^16
    // configurations.
    let mut text = String::from("{\"type\":\"header\",\"object\":\"counter\"}\n");
    for i in 0..16 {
        text += &format!(
            "{{\"type\":\"invoke\",\"id\":{i},\"thread\":{i},\"op\":\"add\",\"args\":[{}]}}\n",
            1u64 << i
        );
    }
    text += "{\"type\":\"invoke\",\"id\":99,\"thread\":99,\"op\":\"get\",\"args\":[]}\n";
    text += "{\"type\":\"return\",\"id\":99,\"value\":-1}\n";
    for i in 0..16 {
        text += &format!("{{\"type\":\"return\",\"id\":{i},\"value\":null}}\n");
    }
    let (code, out, _) = cli(&["-", "--max-states", "1000"], &text);
    assert_eq!(code, 3, "{out}");
    assert!(
        last_line(&out).starts_with("undecided: the search reached the limit of 1000 states"),
        "{out}"
    );
    let (code, out, _) = cli(&["-", "--max-states", "0"], &text);
    assert_eq!(code, 1, "{out}");
    assert!(last_line(&out).contains("ends at line 19"), "{out}");
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let cases: &[&[&str]] = &[
        &[],
        &["--bogus", "x"],
        &["a.ndjson", "b.ndjson"],
        &["-", "--model"],
        &["-", "--model", "deque"],
        &["-", "--max-states", "many"],
    ];
    for args in cases {
        let (code, out, err) = cli(args, "");
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty(), "{args:?}: {out}");
        // clap's message.
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.contains("--help"), "{args:?}: {err}");
    }
    let (code, _, err) = cli(&["/nonexistent/history.ndjson"], "");
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot read /nonexistent/history.ndjson"),
        "{err}"
    );
}

#[test]
fn help_describes_usage_and_verdicts() {
    for flag in ["--help", "-h"] {
        let (code, out, _) = cli(&[flag], "");
        assert_eq!(code, 0);
        for needle in [
            "Usage:",
            "--model",
            "--quiet",
            "--max-states",
            "durably linearizable",
            "exit 2",
        ] {
            assert!(out.contains(needle), "{flag}: no {needle:?} in\n{out}");
        }
    }
}
