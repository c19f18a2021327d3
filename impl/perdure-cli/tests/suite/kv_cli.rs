//! `perdure kv` end to end: create, put, get, del, scan (prefix and
//! range, in key order, escaped), stat, check, export and import (a round
//! trip with bytes that are not UTF-8), and bad input — an absent key, a
//! missing or junk file, a bad ndjson line — giving a message and exit 1,
//! never a panic, with the database unchanged.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Output, Stdio};

fn perdure<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perdure"))
        .args(args)
        .output()
        .unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ok<S: AsRef<OsStr>>(args: &[S]) -> String {
    let o = perdure(args);
    assert!(
        o.status.success(),
        "{}{}",
        out(&o),
        String::from_utf8_lossy(&o.stderr)
    );
    out(&o)
}

/// Runs `perdure args`, which must exit with `code` (1: absent key or a
/// failed check; 2: any other failure) and say `expect`.
fn fails<S: AsRef<OsStr>>(args: &[S], code: i32, expect: &str) {
    let o = perdure(args);
    let t = format!("{}{}", out(&o), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(code), "{t}");
    assert!(t.contains(expect), "expected {expect:?} in: {t}");
    assert!(!t.contains("panicked"), "{t}");
}

#[test]
fn a_database_from_the_command_line() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let db = dir.path().join("fruit.db");
    let db = db.to_str().unwrap();
    let t = ok(&["kv", "create", db, "--size", "32M", "--threads", "2"]);
    assert!(t.contains("redo-opt") && t.contains("pmem"), "{t}");
    for (k, v) in [
        ("fruit:kiwi", "green"),
        ("fruit:apple", "red"),
        ("veg:leek", "white"),
        ("fruit:fig", "tab\there"),
    ] {
        ok(&["kv", "put", db, k, v]);
    }
    assert_eq!(ok(&["kv", "get", db, "fruit:apple"]), "red\n");
    assert_eq!(ok(&["kv", "get", db, "fruit:fig", "--raw"]), "tab\there");
    fails(&["kv", "get", db, "fruit:pear"], 1, "no key fruit:pear");
    assert_eq!(
        ok(&["kv", "scan", db, "fruit:"]),
        "fruit:apple\tred\nfruit:fig\ttab\\there\nfruit:kiwi\tgreen\n"
    );
    assert_eq!(
        ok(&["kv", "scan", db, "--from", "fruit:b", "--to", "veg:z"]),
        "fruit:fig\ttab\\there\nfruit:kiwi\tgreen\nveg:leek\twhite\n"
    );
    assert_eq!(
        ok(&["kv", "scan", db, "--limit", "1"]),
        "fruit:apple\tred\n"
    );
    ok(&["kv", "del", db, "veg:leek"]);
    fails(&["kv", "del", db, "veg:leek"], 1, "no key veg:leek");
    let t = ok(&["kv", "stat", db]);
    assert!(
        t.contains("entries       3") && t.contains("redo-opt"),
        "{t}"
    );
    assert!(ok(&["kv", "check", db]).contains("ok: 3 entries"));

    // Export, with a key and value that are not UTF-8, into a new database.
    let k = OsStr::from_bytes(b"bin\xff\x01");
    let v = OsStr::from_bytes(b"\x80\x01");
    ok(&[OsStr::new("kv"), OsStr::new("put"), OsStr::new(db), k, v]);
    let dump = ok(&["kv", "export", db]);
    assert_eq!(dump.lines().count(), 4, "{dump}");
    assert!(
        dump.contains(r#"{"key_hex":"62696eff01","value_hex":"8001"}"#),
        "{dump}"
    );
    let file = dir.path().join("dump.ndjson");
    std::fs::write(&file, &dump).unwrap();
    let copy = dir.path().join("copy.db");
    let copy = copy.to_str().unwrap();
    ok(&[
        "kv",
        "create",
        copy,
        "--size",
        "32M",
        "--construction",
        "cx-ptm",
        "--threads",
        "2",
    ]);
    assert!(ok(&["kv", "import", copy, file.to_str().unwrap()]).contains("imported 4"));
    assert_eq!(ok(&["kv", "export", copy]), dump);
    assert_eq!(ok(&["kv", "scan", copy]), ok(&["kv", "scan", db]));
    assert!(ok(&["kv", "stat", copy]).contains("cx-ptm"));
    // Import from standard input.
    let mut child = Command::new(env!("CARGO_BIN_EXE_perdure"))
        .args(["kv", "import", db, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"key\":\"z\",\"value\":\"last\"}\n")
        .unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
    assert_eq!(ok(&["kv", "get", db, "z"]), "last\n");
}

#[test]
fn bad_input_fails_cleanly_and_changes_nothing() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let db = dir.path().join("a.db");
    let db = db.to_str().unwrap();
    ok(&["kv", "create", db, "--size", "16M", "--threads", "2"]);
    ok(&["kv", "put", db, "k", "v"]);
    fails(&["kv", "create", db], 2, "exists");
    let missing = dir.path().join("missing.db");
    fails(
        &["kv", "get", missing.to_str().unwrap(), "k"],
        2,
        "does not exist",
    );
    assert!(!missing.exists());
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![7u8; 1 << 16]).unwrap();
    fails(
        &["kv", "check", junk.to_str().unwrap()],
        1,
        "not a perdure pool",
    );
    let pool = dir.path().join("other.pool");
    let p = pool.to_str().unwrap();
    ok(&["pool", "create", p, "--layout", "mine", "--size", "1M"]);
    fails(&["kv", "stat", p], 2, "not a perdure-kv database");
    // A bad line anywhere: nothing is imported.
    let bad = dir.path().join("bad.ndjson");
    std::fs::write(&bad, "{\"key\":\"a\",\"value\":\"1\"}\n{\"key\":\"b\"}\n").unwrap();
    fails(
        &["kv", "import", db, bad.to_str().unwrap()],
        2,
        "bad.ndjson:2",
    );
    fails(&["kv", "get", db, "a"], 1, "no key a");
    let key = "k".repeat(perdure_kv_max_key() + 1);
    fails(&["kv", "put", db, &key, "v"], 2, "over the limit");
    assert!(ok(&["kv", "check", db]).contains("ok: 1 entries"));
    // Wrong usage exits 2.
    assert_eq!(perdure(&["kv", "put", db]).status.code(), Some(2));
    assert_eq!(
        perdure(&["kv", "create", db, "--construction", "nope"])
            .status
            .code(),
        Some(2)
    );
}

fn perdure_kv_max_key() -> usize {
    1024
}
