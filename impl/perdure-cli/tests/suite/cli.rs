//! The `perdure` binary end to end: help, pool create/info, and bad files
//! (random bytes, empty, truncated) giving a message and a non-zero exit,
//! never a panic.

use std::process::{Command, Output};

fn perdure(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perdure"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn assert_clean_failure(o: &Output, expect: &str) {
    let t = text(o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains(expect), "expected {expect:?} in: {t}");
    assert!(!t.contains("panicked"), "{t}");
}

#[test]
fn help_lists_the_commands() {
    let o = perdure(&["--help"]);
    assert!(o.status.success());
    let t = text(&o);
    for cmd in [
        "pool info",
        "pool create",
        "litmus",
        "check-history",
        "explore",
    ] {
        assert!(t.contains(cmd), "{cmd} missing from: {t}");
    }
}

#[test]
fn wrong_usage_exits_2() {
    for args in [
        &["frobnicate"][..],
        &["pool"],
        &["pool", "info"],
        &["pool", "create", "x"],
        &["explore"],
        &["explore", "no-such-scenario"],
        &["trace-to-tla", "x"],
        &["trace"],
        &["trace", "no-such-object"],
        &["trace", "relax", "--threads", "4"],
        &["trace", "memento-cas", "--threads", "5"],
        &["trace", "memento-cas", "--tamper", "dequeue-twice"],
        &["trace", "redo-ptm", "--tamper", "nope"],
        &["trace", "cx-ptm", "--ops", "7"],
        &["trace", "cx-ptm", "--threads", "0"],
        &["trace", "cx-ptm", "--runs"],
        &["trace", "cx-ptm", "--runs", "0"],
        &["trace", "cx-ptm", "--seed", "x"],
        &["trace", "cx-ptm", "--tamper"],
        &["trace", "cx-ptm", "--what"],
        &["trace", "log", "--image", "x"],
        &["check-history"],
        &["completions", "tcsh"],
    ] {
        let o = perdure(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
}

#[test]
fn litmus_on_a_missing_file_fails_with_a_message() {
    let o = perdure(&["litmus", "/nonexistent.litmus"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("/nonexistent.litmus"));
}

#[test]
fn create_then_info() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.pool");
    let ps = p.to_str().unwrap();
    let o = perdure(&["pool", "create", ps, "--layout", "demo", "--size", "1M"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = perdure(&["pool", "info", ps]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("\"demo\"") && t.contains("1048576 bytes") && t.contains("mapping"),
        "{t}"
    );
    let o = perdure(&["pool", "create", ps, "--layout", "demo", "--size", "1M"]);
    assert_clean_failure(&o, "already exists");
}

#[test]
fn random_4k_file_is_refused() {
    let mut x = 0x1234_5678_9abc_def1u64;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    assert_info_refuses("random.bin", &bytes, "not a perdure pool");
}

#[test]
fn empty_file_is_refused() {
    assert_info_refuses("empty.pool", b"", "truncated");
}

/// `perdure pool info` on a file `name` holding `bytes` fails cleanly,
/// saying `expect`.
fn assert_info_refuses(name: &str, bytes: &[u8], expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    assert_clean_failure(&perdure(&["pool", "info", p.to_str().unwrap()]), expect);
}

#[test]
fn truncated_pool_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.pool");
    let ps = p.to_str().unwrap();
    assert!(
        perdure(&["pool", "create", ps, "--layout", "demo", "--size", "64K"])
            .status
            .success()
    );
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(40_000)
        .unwrap();
    assert_clean_failure(&perdure(&["pool", "info", ps]), "truncated");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(1000)
        .unwrap();
    assert_clean_failure(&perdure(&["pool", "info", ps]), "truncated");
}

#[test]
fn missing_file_is_refused() {
    assert_clean_failure(
        &perdure(&["pool", "info", "/nonexistent/x.pool"]),
        "does not exist",
    );
}

#[test]
fn a_typo_gets_a_suggestion() {
    let o = perdure(&["trace", "redo-ptm", "--tamperr", "lost-store"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--tamper"), "{}", text(&o));
    let o = perdure(&["explor"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("explore"), "{}", text(&o));
}

#[test]
fn explore_lists_every_construction_and_refuses_what_this_build_cannot_run() {
    let o = perdure(&["explore", "--list"]);
    assert!(o.status.success(), "{}", text(&o));
    let list = String::from_utf8_lossy(&o.stdout);
    for name in [
        "log",
        "msq-mmt-vol",
        "relax-bst-hybrid-zero",
        "redo-counter",
        "cx-puc-map",
    ] {
        assert!(
            list.lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "{name} not listed"
        );
    }
    // The PTM scenarios need a shuttle build: refused up front, no
    // exploration, no history written.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let o = perdure(&["explore", "redo-counter", "--schedules", "1", "--out", out]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("perdure_shuttle"), "{}", text(&o));
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn completions_name_the_commands() {
    for shell in ["bash", "zsh", "fish"] {
        let o = perdure(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", text(&o));
        let t = String::from_utf8_lossy(&o.stdout);
        for word in ["check-history", "redo-ptm", "return-before-psync"] {
            assert!(t.contains(word), "{shell}: no {word}");
        }
    }
}

#[test]
fn trace_log_prints_ndjson_steps() {
    let o = perdure(&["trace", "log", "--threads", "1", "--appends", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    assert_eq!(t.lines().count(), 7, "{t}");
    assert!(t
        .lines()
        .all(|l| l.starts_with('{') && l.contains("\"type\":\"step\"")));
    let o = perdure(&[
        "trace",
        "log",
        "--threads",
        "1",
        "--appends",
        "1",
        "--drop-first",
        "Fence",
    ]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 6);
}

#[test]
fn every_trace_option_is_taken() {
    let o = perdure(&[
        "trace",
        "redo-ptm",
        "--seed",
        "9",
        "--runs",
        "2",
        "--threads",
        "3",
        "--ops",
        "6",
        "--crash",
        "--tamper",
        "lost-store",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    assert_eq!(t.matches("\"Begin\"").count(), 2, "{t}");
    assert!(t.contains("\"Crash\""), "{t}");
}

#[test]
fn trace_queue_workload_creates_the_queue_first() {
    let o = perdure(&[
        "trace",
        "redo-ptm",
        "--workload",
        "queue",
        "--seed",
        "3",
        "--threads",
        "2",
        "--ops",
        "3",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    let invokes: Vec<&str> = t.lines().filter(|l| l.contains("\"Invoke\"")).collect();
    assert_eq!(invokes.len(), 1 + 2 * 3, "{t}");
    assert!(invokes[0].contains("\"op\":\"qnew\""), "{}", invokes[0]);
    assert!(invokes[1..].iter().all(|l| ["enq", "deq", "qlen"]
        .iter()
        .any(|op| l.contains(&format!("\"op\":\"{op}\"")))));
    // The spec's word count: 10 fixed words and whole node blocks.
    let begin = t.lines().next().unwrap_or_default();
    let words: u64 = begin
        .split("\"words\":")
        .nth(1)
        .and_then(|r| r.trim_end_matches('}').parse().ok())
        .unwrap_or(0);
    assert!(words >= 10 && (words - 10) % 4 == 0, "{begin}");
    assert!(begin.contains("\"reserved\":0"), "{begin}");
    // CX-PUC's object takes the allocator's first block: the queue's are one
    // block later, which the Begin step says (PtmBase's Reserved).
    let o = perdure(&["trace", "cx-puc", "--workload", "queue", "--ops", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    let begin = t.lines().next().unwrap_or_default();
    assert!(begin.contains("\"reserved\":32"), "{begin}");
    let o = perdure(&["trace", "redo-ptm", "--workload", "hash"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn trace_mutant_runs_the_mutated_code() {
    let args = [
        "trace", "cx-ptm", "--seed", "1", "--runs", "1", "--ops", "2",
    ];
    let fences = |o: &Output| {
        String::from_utf8_lossy(&o.stdout)
            .matches("\"Fence\"")
            .count()
    };
    let clean = perdure(&args);
    assert!(clean.status.success(), "{}", text(&clean));
    let mut m = args.to_vec();
    m.extend(["--mutant", "cx-no-fence-before-cas"]);
    let mutated = perdure(&m);
    assert!(mutated.status.success(), "{}", text(&mutated));
    assert!(fences(&mutated) < fences(&clean));
    // A mutant of another construction, or no mutant at all: usage errors.
    for bad in ["mirror-no-flush-before-dram-L41", "no-such-mutant"] {
        let mut b = args.to_vec();
        b.extend(["--mutant", bad]);
        let o = perdure(&b);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(!text(&o).contains("panicked"));
    }
}

/// A reader that stops early (`perdure trace ... | head -1`) ends the
/// command quietly, by SIGPIPE as for any Unix filter: no panic message,
/// no exit code 101.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_a_trace_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_perdure"))
        .args([
            "trace",
            "redo-ptm",
            "--runs",
            "40",
            "--threads",
            "3",
            "--ops",
            "6",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("\"Begin\""), "{first}");
    // The read end is dropped here: the rest of the trace has nowhere to go.
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        o.status.signal(),
        Some(libc::SIGPIPE),
        "{:?} {err}",
        o.status
    );
}
