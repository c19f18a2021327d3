//! Process-crash test of a commit-marker log, in the style of sled's
//! recovery tests.
//!
//! The test binary re-runs itself as a child that appends records to a
//! persistent commit-marker log in a pool file and acknowledges each one on
//! stdout once it is durable:
//!
//! ```text
//! write record i (one cache line: seq, payload, checksum); pwb; pfence;
//! write commit word = i + 1; pwb; psync; print "ack i"
//! ```
//!
//! (the tutorial log, `perdure_pm::commit_log`).
//!
//! The parent kills the child with SIGKILL at a random moment (seeded,
//! reproducible), reopens the pool and checks that every acknowledged record
//! is present and intact and that nothing torn is visible: every record below
//! the commit word has the right sequence number, payload and checksum.
//! It repeats this for the `Pmem` and the `Msync` backend.
//!
//! What this covers: recovery from a process dying at any instruction —
//! the reopen path (advisory lock released by the kernel, incarnation bump,
//! header validation) and the log's commit protocol. What it does not cover:
//! power loss. A killed process loses nothing that reached the page cache, so
//! a missing flush goes unnoticed here; the Px86 simulator's crash images
//! check that. Each run prints a `PERDURE-CHECK` line for `make verify`.
//!
//! Environment: `PERDURE_KILLS` (default 200; 2,000 with `PERDURE_DEPTH=deep`),
//! `PERDURE_KILL_SEED`.

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
#[path = "support/kill.rs"]
mod kill;

#[cfg(any(perdure_loom, perdure_shuttle))]
fn main() {
    println!("process_kill: not built under the model checkers' facade (file pools need std)");
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
fn main() {
    real::main()
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
mod real {
    use super::kill;
    use perdure_pm::commit_log::{CommitLog, PAYLOAD_WORDS, RECORD};
    use perdure_pm::{Backend, Msync, NoFlush, Pmem, Pool};
    use std::path::Path;
    use std::time::{Duration, Instant};

    const LAYOUT: &str = "perdure-test-commit-log";
    const POOL_SIZE: u64 = 16 << 20;

    fn open_log<B: Backend>(p: &Pool<B>) -> CommitLog<'_, B> {
        let base = p.data_offset();
        CommitLog::open(p, base, p.size() - base).expect("open log")
    }

    fn payload(i: u64) -> [u64; PAYLOAD_WORDS] {
        std::array::from_fn(|w| {
            (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (w as u64).wrapping_mul(0xD1B5_4A32_D192_ED03))
                .rotate_left((i % 63) as u32)
        })
    }

    /// Child: append until killed (or the log is full), acknowledging each
    /// durable append.
    fn child<B: Backend + Default>(path: &Path) -> ! {
        let p: Pool<B> = Pool::open(path, LAYOUT).expect("child: open pool");
        let log = open_log(&p);
        let mut out = std::io::stdout().lock();
        let mut i = log.len();
        while let Ok(k) = log.append(&payload(i)) {
            debug_assert_eq!(k, i);
            if !kill::ack(&mut out, i) {
                break;
            }
            i += 1;
        }
        std::process::exit(0)
    }

    /// Reopens the pool: (committed records, acknowledged-but-lost, torn).
    fn verify<B: Backend + Default>(
        path: &Path,
        acked_upto: Option<u64>,
    ) -> Result<(u64, u64, u64), String> {
        let p: Pool<B> = Pool::open(path, LAYOUT).map_err(|e| format!("reopen failed: {e}"))?;
        let log = open_log(&p);
        let n = log.len();
        let lost = match acked_upto {
            Some(a) if n <= a => a + 1 - n,
            _ => 0,
        };
        let torn = (0..n).filter(|&i| log.read(i) != Ok(payload(i))).count() as u64;
        Ok((n, lost, torn))
    }

    fn run<B: Backend + Default>(
        name: &str,
        kills: u64,
        seed: u64,
        dir: &Path,
    ) -> Result<(String, String), String> {
        let path = dir.join(format!("{name}.pool"));
        let mut rng = kill::Rng::new(seed);
        let (mut acked, mut verified) = (0u64, 0u64);
        let mut fresh = true;
        for k in 0..kills {
            if fresh {
                let _ = std::fs::remove_file(&path);
                drop(Pool::<NoFlush>::create(&path, LAYOUT, POOL_SIZE).map_err(|e| e.to_string())?);
                fresh = false;
            }
            // Kill somewhere in the first ~40 ms: during open, mid-append, mid-msync.
            let delay = Duration::from_micros(rng.next() % 40_000);
            let acks = kill::spawn_and_kill(
                &[
                    ("PERDURE_KILL_CHILD", name.as_ref()),
                    ("PERDURE_KILL_PATH", path.as_os_str()),
                ],
                delay,
            )?;
            acked += acks.count;
            let (n, lost, torn) = verify::<B>(&path, acks.last)?;
            verified += n;
            if lost > 0 || torn > 0 {
                return Err(format!(
                    "{name}: kill {k} (seed {seed}): commit word {n}, last ack {:?}: {lost} acknowledged records lost, {torn} torn records visible",
                    acks.last
                ));
            }
            if n > (POOL_SIZE - 4096) / RECORD / 2 {
                fresh = true;
            }
        }
        Ok((
            format!("{kills} SIGKILLs, {acked} records acknowledged, 0 lost, 0 torn"),
            format!("{verified} committed records re-verified after the kills; process crash only (power loss is the simulator's job)"),
        ))
    }

    pub fn main() {
        if let Ok(name) = std::env::var("PERDURE_KILL_CHILD") {
            let path = std::env::var("PERDURE_KILL_PATH").expect("PERDURE_KILL_PATH");
            match name.as_str() {
                "pmem" => child::<Pmem>(Path::new(&path)),
                "msync" => child::<Msync>(Path::new(&path)),
                other => panic!("unknown backend {other}"),
            }
        }
        if !kill::selected("process_kill") {
            println!("process_kill: filtered out");
            return;
        }
        let (kills, seed) = (kill::kills(), kill::seed());
        let dir = tempfile::tempdir().expect("tempdir");
        let mut failed = false;
        let mut backends: Vec<&str> = vec!["msync"];
        if Pmem::new().is_some() {
            backends.insert(0, "pmem");
        }
        for name in backends {
            let t0 = Instant::now();
            let result = match name {
                "pmem" => run::<Pmem>(name, kills, seed, dir.path()),
                _ => run::<Msync>(name, kills, seed ^ 0xabcdef, dir.path()),
            };
            failed |= result.is_err();
            kill::report(
                &format!("explore:pm/process-kill/{name}"),
                &result,
                t0.elapsed().as_secs_f64(),
            );
        }
        if failed {
            std::process::exit(1);
        }
    }
}
