//! `perdure litmus` through the binary: exit status on met, unmet, broken
//! and missing inputs, and on wrong usage.

use std::process::{Command, ExitCode};

fn code(args: &[&str]) -> ExitCode {
    let out = Command::new(env!("CARGO_BIN_EXE_perdure"))
        .arg("litmus")
        .args(args)
        .output()
        .expect("perdure runs");
    ExitCode::from(out.status.code().expect("an exit status") as u8)
}

fn write(dir: &std::path::Path, name: &str, src: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, src).unwrap();
    p.display().to_string()
}

const GOOD: &str = "name SS\nthread 0\n store x 1\n store y 1\nend\nallow x=0 y=1\nforbid x=2\n";

#[test]
fn all_met_exits_zero() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "ss.litmus", GOOD);
    assert_eq!(code(&[&f]), ExitCode::SUCCESS);
    assert_eq!(code(&["--quiet", &f]), ExitCode::SUCCESS);
    assert_eq!(code(&["-w", &f]), ExitCode::SUCCESS);
}

#[test]
fn a_wrong_expectation_exits_non_zero() {
    let d = tempfile::tempdir().unwrap();
    // SS+sameline forbids x=0 y=1; claiming it allowed is wrong.
    let f = write(
        d.path(),
        "wrong.litmus",
        "name W\nline x y\nthread 0\n store x 1\n store y 1\nend\nallow x=0 y=1\n",
    );
    assert_eq!(code(&[&f]), ExitCode::FAILURE);
    // And a wrong forbid.
    let g = write(
        d.path(),
        "wrong2.litmus",
        "name W2\nthread 0\n store x 1\n store y 1\nend\nforbid x=0 y=1\n",
    );
    assert_eq!(code(&[&g]), ExitCode::FAILURE);
    // One wrong file among good ones still fails the run.
    let ok = write(d.path(), "ok.litmus", GOOD);
    assert_eq!(code(&[&ok, &g]), ExitCode::FAILURE);
}

#[test]
fn a_file_that_does_not_parse_exits_non_zero() {
    let d = tempfile::tempdir().unwrap();
    let ok = write(d.path(), "a.litmus", GOOD);
    let bad = write(
        d.path(),
        "b.litmus",
        "name B\nthread 0\n stor x 1\nend\nallow x=0\n",
    );
    assert_eq!(code(&[&ok, &bad]), ExitCode::FAILURE);
    assert_eq!(code(&[d.path().to_str().unwrap()]), ExitCode::FAILURE);
}

#[test]
fn directories_run_their_litmus_files_only() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.litmus", GOOD);
    write(d.path(), "notes.txt", "not a litmus file");
    std::fs::create_dir(d.path().join("sub")).unwrap();
    write(&d.path().join("sub"), "broken.litmus", "garbage");
    assert_eq!(code(&[d.path().to_str().unwrap()]), ExitCode::SUCCESS);
    let files = perdure_check::litmus::collect_files(&[d.path().to_path_buf()]);
    assert_eq!(files.len(), 1);
    // An empty directory and a missing path are failures, not successes.
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(code(&[empty.path().to_str().unwrap()]), ExitCode::FAILURE);
    assert_eq!(code(&["/nonexistent/dir/x.litmus"]), ExitCode::FAILURE);
}

#[test]
fn usage_errors_exit_two_and_help_exits_zero() {
    assert_eq!(code(&[]), ExitCode::from(2));
    assert_eq!(code(&["--frobnicate", "x.litmus"]), ExitCode::from(2));
    assert_eq!(code(&["--max-states"]), ExitCode::from(2));
    assert_eq!(code(&["--max-states", "0", "x"]), ExitCode::from(2));
    assert_eq!(code(&["--help"]), ExitCode::SUCCESS);
    assert_eq!(code(&["-h"]), ExitCode::SUCCESS);
}

#[test]
fn a_state_limit_too_small_fails_instead_of_passing() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "ss.litmus", GOOD);
    // `forbid x=2` cannot be decided after 2 states.
    assert_eq!(code(&["--max-states", "2", &f]), ExitCode::FAILURE);
}

#[test]
fn the_suite_passes_through_the_cli() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../modelcheck/litmus");
    assert_eq!(code(&["--quiet", dir]), ExitCode::SUCCESS);
}
