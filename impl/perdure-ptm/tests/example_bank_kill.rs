//! The `bank` example's promise, checked: Redo-PTM on a pool file survives
//! `SIGKILL` at arbitrary moments and continues.
//!
//! The test re-runs its own binary as a child process (`child_workload`,
//! selected by an environment variable) that runs the example's workload
//! (`examples/bank/workload.rs`, included by path) on a pool file with the
//! `Pmem` backend and prints `durable T` after transfers returned. The parent
//! kills the child with `SIGKILL` after a random delay, reopens the pool
//! (null recovery) and checks that the bank is consistent (money conserved,
//! counters agree) and holds at least every total a child printed; then it
//! starts the next child on the same file. Each round must commit more
//! transfers, so the pool keeps working after every kill.
//!
//! What this covers: process crashes (the kernel keeps a killed process's
//! stores to a `MAP_SHARED` mapping) at whatever instruction the kill lands
//! on, with 2 threads inside transactions. Power failures, where unflushed
//! lines are lost, are covered by the crash-image tests on the simulator
//! (`redo_crash.rs`), not here.

#[path = "../examples/bank/workload.rs"]
mod workload;

use perdure_pm::Pmem;
use perdure_ptm::redo::RedoPtm;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "PERDURE_BANK_CHILD_POOL";
const THREADS: usize = 2;
const ACCOUNTS: u64 = 64;
const POOL_SIZE: u64 = 8 << 20;

/// Runs only as a child of `killed_repeatedly_the_bank_stays_consistent_and_continues`.
#[test]
fn child_workload() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return; // not a child: nothing to do
    };
    let ptm: RedoPtm<Pmem> =
        workload::open_or_create(std::path::Path::new(&path), POOL_SIZE, THREADS).unwrap();
    {
        let h = ptm.handle().unwrap();
        workload::ensure_bank(&h, ACCOUNTS).unwrap();
        assert!(workload::audit(&h).consistent);
    }
    std::thread::scope(|s| {
        for w in 0..THREADS as u64 {
            let ptm = &ptm;
            s.spawn(move || {
                // A worker that cannot run ends the child at once, so the
                // parent sees it exit instead of a half-working child.
                let h = ptm.handle().unwrap_or_else(|e| {
                    eprintln!("child worker {w}: {e}");
                    std::process::exit(3)
                });
                let mut rng =
                    0x2545_f491_4f6c_dd1du64.wrapping_mul(w + 1) ^ std::process::id() as u64;
                let mut mine = 0u64;
                loop {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let total = workload::transfer(
                        &h,
                        rng % ACCOUNTS,
                        (rng >> 20) % ACCOUNTS,
                        (rng >> 40) % 500,
                    );
                    mine += 1;
                    if mine % 16 == 0 {
                        println!("durable {total}");
                    }
                }
            });
        }
    });
}

#[test]
fn killed_repeatedly_the_bank_stays_consistent_and_continues() {
    if std::env::var_os(CHILD_ENV).is_some() || Pmem::new().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bank.pool");
    let exe = std::env::current_exe().unwrap();
    let mut rng = 0x853c_49e6_748f_ea9bu64 ^ u64::from(std::process::id());
    let mut committed_before = 0u64;
    let rounds = 6;
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "child_workload",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD_ENV, &path)
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
        // Wait until the child is running transfers, then let it run for a
        // random 5–80 ms and kill it wherever it is.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let run_for = Duration::from_millis(5 + rng % 76);
        let mut max_durable = 0u64;
        let mut started: Option<Instant> = None;
        let give_up = Instant::now() + Duration::from_secs(60);
        loop {
            match rx.recv_timeout(Duration::from_millis(1)) {
                Ok(line) => {
                    if let Some(t) = line.strip_prefix("durable ") {
                        max_durable = max_durable.max(t.trim().parse().unwrap());
                        started.get_or_insert_with(Instant::now);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    panic!(
                        "round {round}: the child exited on its own: {:?}",
                        child.wait()
                    )
                }
            }
            if started.is_some_and(|s| s.elapsed() >= run_for) {
                break;
            }
            assert!(
                Instant::now() < give_up,
                "round {round}: the child made no progress in 60 s"
            );
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Lines the child printed before it died are durable too.
        reader.join().unwrap();
        while let Ok(line) = rx.try_recv() {
            if let Some(t) = line.strip_prefix("durable ") {
                max_durable = max_durable.max(t.trim().parse().unwrap());
            }
        }

        let ptm: RedoPtm<Pmem> = workload::open_or_create(&path, POOL_SIZE, THREADS).unwrap();
        let audit = workload::audit(&ptm.handle().unwrap());
        assert!(
            audit.consistent,
            "round {round}: inconsistent bank after SIGKILL: {audit:?}"
        );
        assert!(
            audit.total >= max_durable,
            "round {round}: the child printed `durable {max_durable}` but the pool holds only \
             {} transfers",
            audit.total
        );
        assert!(
            audit.total > committed_before,
            "round {round}: no transfer committed ({} before, {} now)",
            committed_before,
            audit.total
        );
        eprintln!(
            "round {round}: killed after {run_for:?}; child printed up to {max_durable}, pool holds {}",
            audit.total
        );
        committed_before = audit.total;
    }
}
