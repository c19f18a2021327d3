//! Damaged perdure-kv database files: 10,000 seeded byte flips
//! (`PERDURE_KV_DAMAGE_CASES` to change) of a database file — 1 in 8 in
//! the pool's header page, 1 in 16 of the rest in the PTM's header (a
//! damaged magic must not pass for a never-formatted pool), the rest at a
//! random non-zero byte of the file
//! (the PTM's headers and allocator metadata, the store's header, buckets
//! and nodes, in every replica) — and after each: `Db::open`, a `get` of
//! every key, a full `scan` and `check` either work or return a typed
//! error; none panics or hangs (a watchdog aborts after 60 s without
//! progress), and none formats over the damage (a file that opened keeps
//! the entries it reads back with their values, or reports damage).
//! Every 100th case whose `check` names damage also runs
//! `perdure kv check`, which must exit 1 and name it.
//!
//! What this does not show: that every flip is noticed. A flip in a
//! replica the PTM does not designate is overwritten by its next copy, a
//! flip in a value's bytes or its length word is a different value (no
//! checksums over data),
//! and a flip of a free block's bytes changes nothing.

use perdure_harness::bench::Rng;
use perdure_kv::{Db, Durability, KvError, Options};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const KEYS: u32 = 120;

fn options() -> Options {
    Options {
        durability: Durability::Pmem,
        size: 1 << 20,
        threads: 1,
        create_if_missing: false,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key:{i:05}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    vec![i as u8; 8 + (i as usize % 40)]
}

/// What one damaged file did.
#[derive(Debug, Default)]
struct Tally {
    open_refused: u64,
    check_reported: u64,
    read_reported: u64,
    intact: u64,
    cli_checked: u64,
}

#[test]
fn flipped_bytes_get_typed_errors_never_a_panic_or_a_silent_format() {
    if perdure_pm::Pmem::new().is_none() {
        return;
    }
    let cases: u64 = std::env::var("PERDURE_KV_DAMAGE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let path = dir.path().join("good.db");
    {
        let db = Db::create(
            &path,
            &Options {
                create_if_missing: true,
                ..options()
            },
        )
        .unwrap();
        for i in 0..KEYS {
            db.put(&key(i), &value(i)).unwrap();
        }
        for i in (0..KEYS).step_by(7) {
            db.delete(&key(i)).unwrap();
        }
    }
    let good = std::fs::read(&path).unwrap();
    let ptm_header = perdure_pm::PoolInfo::read(&path)
        .unwrap()
        .header
        .data_offset as usize;
    let nonzero: Vec<usize> = (0..good.len()).filter(|&i| good[i] != 0).collect();
    let case_path = dir.path().join("case.db");
    let progress = Arc::new(AtomicU64::new(0));
    {
        let progress = Arc::clone(&progress);
        std::thread::spawn(move || {
            let mut last = u64::MAX;
            loop {
                std::thread::sleep(Duration::from_secs(60));
                let now = progress.load(Ordering::Relaxed);
                if now == last {
                    eprintln!("kv_damage: case {now} made no progress in 60 s (a hang)");
                    std::process::abort();
                }
                last = now;
            }
        });
    }
    let mut r = Rng::new(0x6b76_6461_6d67);
    let mut t = Tally::default();
    let start = Instant::now();
    for case in 0..cases {
        progress.store(case, Ordering::Relaxed);
        let at = if r.below(8) == 0 {
            r.below(4096) as usize
        } else if r.below(16) == 0 {
            ptm_header + r.below(64) as usize
        } else {
            nonzero[r.below(nonzero.len() as u64) as usize]
        };
        let flip = 1 + r.below(255) as u8;
        let mut bytes = good.clone();
        bytes[at] ^= flip;
        std::fs::write(&case_path, &bytes).unwrap();
        let outcome = std::panic::catch_unwind(|| run_case(&case_path));
        let outcome = outcome.unwrap_or_else(|_| {
            panic!("case {case}: byte {at:#x} ^= {flip:#04x} made perdure-kv panic")
        });
        match outcome {
            Outcome::OpenRefused => t.open_refused += 1,
            Outcome::Intact => t.intact += 1,
            Outcome::ReadReported => t.read_reported += 1,
            Outcome::CheckReported => {
                t.check_reported += 1;
                if t.check_reported % 100 == 1 {
                    let o = std::process::Command::new(env!("CARGO_BIN_EXE_perdure"))
                        .args(["kv", "check"])
                        .arg(&case_path)
                        .output()
                        .unwrap();
                    let err = String::from_utf8_lossy(&o.stderr);
                    assert_eq!(o.status.code(), Some(1), "case {case}: {err}");
                    assert!(err.contains("damaged"), "case {case}: {err}");
                    assert!(!err.contains("panicked"), "case {case}: {err}");
                    t.cli_checked += 1;
                }
            }
            Outcome::Lost(what) => {
                panic!("case {case}: byte {at:#x} ^= {flip:#04x}: {what}")
            }
        }
    }
    eprintln!(
        "kv_damage: {cases} flips in {:.1} s: {t:?}",
        start.elapsed().as_secs_f64()
    );
    perdure_harness::report::print_row(
        "explore:kv/damaged-files",
        "pass",
        &format!(
            "{cases} seeded byte flips of a {}-byte database file: open refused {}, check \
             reported damage {}, a read reported damage {}, intact {} (no panic, no hang, no \
             silent format); perdure kv check run on {} of the reported",
            good.len(),
            t.open_refused,
            t.check_reported,
            t.read_reported,
            t.intact,
            t.cli_checked
        ),
        Some("a flip that changes a value's bytes or a free block goes unnoticed: no checksums over data"),
        start,
    );
    // The flips reach both the pool's checks and the store's own.
    assert!(
        t.open_refused > 0 && t.check_reported > 0 && t.intact > 0,
        "{t:?}"
    );
}

enum Outcome {
    OpenRefused,
    CheckReported,
    ReadReported,
    Intact,
    Lost(String),
}

fn run_case(path: &std::path::Path) -> Outcome {
    let db = match Db::open(path, &options()) {
        Ok(db) => db,
        Err(_) => return Outcome::OpenRefused,
    };
    let checked = db.check();
    let mut read_failed = false;
    let mut entries = 0u64;
    for i in 0..KEYS {
        match db.get(&key(i)) {
            Ok(Some(v)) => {
                entries += 1;
                if i % 7 == 0 {
                    // A deleted key is back: possible only through damage,
                    // which check must then report.
                    if checked.is_ok() {
                        return Outcome::Lost(format!("deleted key {i} is back and check passes"));
                    }
                }
                // A value of other bytes or another length (its length
                // word flipped) is a flip of data: not noticed.
                let _ = v;
            }
            Ok(None) => {
                if i % 7 != 0 && checked.is_ok() {
                    return Outcome::Lost(format!("key {i} is gone and check passes"));
                }
            }
            Err(_) => read_failed = true,
        }
    }
    let scanned = db.scan_prefix(b"", usize::MAX);
    read_failed |= scanned.is_err();
    match checked {
        Ok(n) if !read_failed => {
            let live = u64::from(KEYS) - u64::from(KEYS.div_ceil(7));
            if n != live || entries != live {
                return Outcome::Lost(format!(
                    "check passes with {n} entries, {entries} read; {live} expected"
                ));
            }
            Outcome::Intact
        }
        Ok(_) => Outcome::ReadReported,
        Err(KvError::Corrupt { .. }) => Outcome::CheckReported,
        Err(_) => Outcome::CheckReported,
    }
}
