//! perdure-kv under `SIGKILL`: a writer process is killed wherever it is,
//! 200 times per backend (`Pmem` on tmpfs, `Msync` on the temporary
//! directory's file system; `PERDURE_KV_KILLS` sets the count), and after
//! every kill the database is whole.
//!
//! The child (this test binary re-run with [`CHILD_ENV`] set) opens the
//! database file and runs two writer threads. Thread `t`'s batch `n` puts
//! the four keys `t/n/j`, deletes the four of batch `n - 3` and sets
//! `seq/t` to `n`, in one [`WriteBatch`]; when `write` returns, the child
//! prints `ack t n`. After each kill the parent reopens the file (null
//! recovery) and checks:
//! * no acknowledged write is lost: `seq/t` is at least every `n` printed;
//! * no batch is half applied: the keys under `t/` are exactly those of
//!   batches `seq/t - 2 ..= seq/t`, each with its value, and nothing of a
//!   later batch;
//! * `Db::check` and `perdure kv check` pass;
//! * the child made progress (every round acknowledges a batch first).
//!
//! What this covers: process crashes at whatever instruction the kill
//! lands on, with two threads inside RedoOpt-PTM's combining. A killed
//! process's stores to the `MAP_SHARED` mapping stay in the page cache, so
//! this does not cover power failure (lost unflushed lines): the crash
//! images of the explorer do.

use perdure_kv::{Db, Durability, Options, WriteBatch};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "PERDURE_KV_KILL_CHILD";
const THREADS: u64 = 2;

fn options(durability: Durability) -> Options {
    Options {
        durability,
        size: 32 << 20,
        threads: THREADS as usize,
        create_if_missing: false,
        ..Options::default()
    }
}

fn key(t: u64, n: u64, j: u64) -> Vec<u8> {
    format!("{t}/{n:08}/{j}").into_bytes()
}

/// Runs only as a child of the kill tests: `PERDURE_KV_KILL_CHILD=path,durability`.
#[test]
fn child_writer() {
    let Some(arg) = std::env::var_os(CHILD_ENV) else {
        return; // not a child: nothing to do
    };
    let arg = arg.into_string().unwrap();
    let (path, durability) = arg.rsplit_once(',').unwrap();
    let db = Db::open(path, &options(durability.parse().unwrap())).unwrap_or_else(|e| {
        eprintln!("child: {e}");
        std::process::exit(3)
    });
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let db = &db;
            s.spawn(move || {
                let seq = format!("seq/{t}").into_bytes();
                let mut n = db
                    .get(&seq)
                    .unwrap()
                    .map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
                loop {
                    n += 1;
                    let mut b = WriteBatch::new();
                    for j in 0..4 {
                        b.put(&key(t, n, j), &key(t, n, j).repeat(3)).unwrap();
                        if n > 3 {
                            b.delete(&key(t, n - 3, j)).unwrap();
                        }
                    }
                    b.put(&seq, &n.to_le_bytes()).unwrap();
                    db.write(b).unwrap_or_else(|e| {
                        eprintln!("child: {e}");
                        std::process::exit(3)
                    });
                    println!("ack {t} {n}");
                }
            });
        }
    });
}

/// Checks the database after a kill; returns each thread's `seq`.
fn audit(path: &Path, durability: Durability, acked: &[u64]) -> Vec<u64> {
    let db = Db::open(path, &options(durability)).unwrap();
    let mut seqs = Vec::new();
    for t in 0..THREADS {
        let seq = db
            .get(format!("seq/{t}").as_bytes())
            .unwrap()
            .map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
        assert!(
            seq >= acked[t as usize],
            "thread {t}: batch {} was acknowledged but seq is {seq}",
            acked[t as usize]
        );
        let want: Vec<(Vec<u8>, Vec<u8>)> = (seq.saturating_sub(2).max(1)..=seq)
            .flat_map(|n| (0..4).map(move |j| (key(t, n, j), key(t, n, j).repeat(3))))
            .collect();
        let got = db
            .scan_prefix(format!("{t}/").as_bytes(), usize::MAX)
            .unwrap();
        assert_eq!(got, want, "thread {t}, seq {seq}: a batch is half applied");
        seqs.push(seq);
    }
    assert_eq!(
        db.check().unwrap(),
        seqs.iter()
            .map(|&s| s.min(3) * 4 + u64::from(s > 0))
            .sum::<u64>()
    );
    seqs
}

fn killed_repeatedly(durability: Durability, dir: &Path) {
    let path = dir.join("kill.db");
    drop(
        Db::create(
            &path,
            &Options {
                create_if_missing: true,
                ..options(durability)
            },
        )
        .unwrap(),
    );
    let rounds: u64 = std::env::var("PERDURE_KV_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let exe = std::env::current_exe().unwrap();
    let name = match durability {
        Durability::Pmem => "pmem",
        _ => "msync",
    };
    let mut rng = 0x853c_49e6_748f_ea9bu64 ^ u64::from(std::process::id());
    let mut before = vec![0u64; THREADS as usize];
    let start = Instant::now();
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "child_writer",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD_ENV, format!("{},{name}", path.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Wait for the first acknowledgement, then let it run a random
        // 0-15 ms and kill it wherever it is.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let run_for = Duration::from_micros(rng % 15_000);
        let mut acked = vec![0u64; THREADS as usize];
        let note = |line: &str, acked: &mut Vec<u64>| {
            if let Some(rest) = line.strip_prefix("ack ") {
                let (t, n) = rest.split_once(' ').unwrap();
                let (t, n): (usize, u64) = (t.parse().unwrap(), n.trim().parse().unwrap());
                acked[t] = acked[t].max(n);
                true
            } else {
                false
            }
        };
        let mut started: Option<Instant> = None;
        let give_up = Instant::now() + Duration::from_secs(60);
        loop {
            match rx.recv_timeout(Duration::from_millis(1)) {
                Ok(line) => {
                    if note(&line, &mut acked) {
                        started.get_or_insert_with(Instant::now);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    panic!(
                        "{name} round {round}: the child exited on its own: {:?}",
                        child.wait()
                    )
                }
            }
            if started.is_some_and(|s| s.elapsed() >= run_for) {
                break;
            }
            assert!(
                Instant::now() < give_up,
                "{name} round {round}: the child made no progress in 60 s"
            );
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Lines the child printed before it died count too.
        reader.join().unwrap();
        while let Ok(line) = rx.try_recv() {
            note(&line, &mut acked);
        }
        for t in 0..THREADS as usize {
            acked[t] = acked[t].max(before[t]);
        }
        let seqs = audit(&path, durability, &acked);
        assert!(
            seqs.iter().sum::<u64>() > before.iter().sum::<u64>(),
            "{name} round {round}: nothing committed"
        );
        let o = Command::new(env!("CARGO_BIN_EXE_perdure"))
            .args(["kv", "check"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name} round {round}: perdure kv check: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        before = seqs;
    }
    perdure_harness::report::print_row(
        &format!("explore:kv/process-kill/{name}"),
        "pass",
        &format!(
            "{rounds} SIGKILLs of a 2-thread writer of RedoOpt write batches; {} batches committed \
             per thread; after each: no acknowledged batch lost, none half applied, check passes",
            before.iter().map(u64::to_string).collect::<Vec<_>>().join(" and ")
        ),
        Some(
            "process crashes only (the killed process's stores stay in the page cache); power \
             failure is the explorer's (explore:kv/*)",
        ),
        start,
    );
}

#[test]
fn killed_writers_on_pmem_lose_no_acknowledged_batch_and_apply_none_in_half() {
    if std::env::var_os(CHILD_ENV).is_some() || perdure_pm::Pmem::new().is_none() {
        return;
    }
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    killed_repeatedly(Durability::Pmem, dir.path());
}

#[test]
fn killed_writers_on_msync_lose_no_acknowledged_batch_and_apply_none_in_half() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    killed_repeatedly(Durability::Msync, dir.path());
}
