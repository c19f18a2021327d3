//! `bank`: Redo-PTM on a pool file, killed at any moment, continues.
//!
//! ```text
//! cargo run --release -p perdure-ptm --example bank -- --pool /tmp/bank.pool --seconds 10 &
//! sleep 3; kill -9 $!
//! cargo run --release -p perdure-ptm --example bank -- --pool /tmp/bank.pool --seconds 2
//! ```
//!
//! Each run opens the pool (or creates it), lets Redo-PTM's null recovery
//! pick the replica `cur_comb` designates, audits the bank in one read-only
//! transaction (money is conserved, the per-thread counters add up to the
//! total of committed transfers), then runs random transfers on `--threads`
//! threads, printing progress once a second with the `pwb`/`pfence`/`psync`
//! each transfer cost. Kill it with `SIGKILL` whenever you like: the next run
//! finds a consistent bank holding every transfer that returned.
//!
//! With `--report-every K` each thread prints `durable T` after every `K`th
//! transfer, `T` being the total that transfer committed; such a line is
//! printed only after the transaction returned, so a later run must find a
//! total of at least `T`. `tests/example_bank_kill.rs` kills this workload
//! repeatedly and checks exactly that.
//!
//! What it shows and what it does not: a kill ends the process, not the
//! machine. The pool is a `MAP_SHARED` file mapping, so the kernel keeps every
//! store a killed process made. Surviving a power failure additionally needs
//! the write-backs to reach the media: `--backend pmem` issues real `clwb`
//! (or `clflushopt`) and `sfence`, which make it so on a DAX mapping of
//! persistent memory; on an ordinary file only `--backend msync` does (slow:
//! an `msync` per fence). Power failures are checked on the simulator (the
//! crash tests), not here.

mod workload;

use perdure_pm::{stats, Backend, Msync, Pmem};
use perdure_ptm::redo::RedoPtm;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage: bank --pool PATH [--threads T] [--accounts A] [--seconds S | --transfers N]
            [--report-every K] [--backend pmem|msync] [--size BYTES] [--audit-only]

  --pool PATH        the pool file (created if missing)
  --threads T        worker threads, 1..=64 (default 2; a new pool is made for T threads,
                     an existing one keeps the count it was made with)
  --accounts A       accounts in a new bank (default 1000)
  --seconds S        run for S seconds (default 5), or
  --transfers N      run N transfers per thread
  --report-every K   each thread prints `durable T` after every K-th transfer (default off)
  --backend B        pmem: clwb/clflushopt + sfence (default); msync: msync per fence
  --size BYTES       size of a new pool file (default 64 MiB)
  --audit-only       open, recover, audit, print, exit";

struct Args {
    pool: PathBuf,
    threads: usize,
    accounts: u64,
    seconds: f64,
    transfers: Option<u64>,
    report_every: u64,
    backend: String,
    size: u64,
    audit_only: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        pool: PathBuf::new(),
        threads: 2,
        accounts: 1000,
        seconds: 5.0,
        transfers: None,
        report_every: 0,
        backend: "pmem".into(),
        size: 64 << 20,
        audit_only: false,
    };
    let mut pool = None;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--audit-only" {
            a.audit_only = true;
            continue;
        }
        if flag == "-h" || flag == "--help" {
            return Err(String::new());
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |what: &str| -> Result<u64, String> {
            value
                .parse::<u64>()
                .map_err(|_| format!("{what} must be a non-negative integer, not `{value}`"))
        };
        match flag.as_str() {
            "--pool" => pool = Some(PathBuf::from(&value)),
            "--threads" => {
                a.threads = num("--threads")? as usize;
                if !(1..=64).contains(&a.threads) {
                    return Err(format!("--threads must be 1..=64, not {}", a.threads));
                }
            }
            "--accounts" => {
                a.accounts = num("--accounts")?;
                if a.accounts < 2 {
                    return Err("--accounts must be at least 2".into());
                }
            }
            "--seconds" => {
                a.seconds = value
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| {
                        format!("--seconds must be a non-negative number, not `{value}`")
                    })?
            }
            "--transfers" => a.transfers = Some(num("--transfers")?),
            "--report-every" => a.report_every = num("--report-every")?,
            "--backend" => {
                if value != "pmem" && value != "msync" {
                    return Err(format!("--backend must be pmem or msync, not `{value}`"));
                }
                a.backend = value;
            }
            "--size" => a.size = num("--size")?,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    a.pool = pool.ok_or("--pool PATH is required")?;
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("bank: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = if args.backend == "msync" {
        run::<Msync>(&args)
    } else if Pmem::new().is_none() {
        Err("--backend pmem needs an x86_64 CPU with clflush; use --backend msync".into())
    } else {
        run::<Pmem>(&args)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bank: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run<B: Backend + Default>(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let existed = args.pool.exists();
    let t0 = Instant::now();
    let ptm: RedoPtm<B> = workload::open_or_create(&args.pool, args.size, args.threads)?;
    let opened = t0.elapsed();
    // This thread's handle is dropped before the workers take theirs: the
    // PTM has exactly as many thread ids as it was made with.
    let (accounts, audit) = {
        let h = ptm.handle()?;
        (
            workload::ensure_bank(&h, args.accounts)?,
            workload::audit(&h),
        )
    };
    println!(
        "{} {} ({} backend, {} threads, {accounts} accounts): open + null recovery {:.1} ms; \
         {} transfers committed so far; audit {}",
        if existed { "opened" } else { "created" },
        args.pool.display(),
        B::default().name(),
        ptm.threads(),
        opened.as_secs_f64() * 1e3,
        audit.total,
        verdict(audit.consistent),
    );
    if !audit.consistent {
        return Err(
            "the bank is inconsistent: money was created or lost, or a counter \
                    disagrees with the total"
                .into(),
        );
    }
    if args.audit_only {
        return Ok(());
    }

    let workers = ptm.threads().min(args.threads);
    let done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let deadline = t0 + Duration::from_secs_f64(args.seconds);
    let start = Instant::now();
    let counts = std::thread::scope(|s| -> Result<Vec<(u64, stats::FlushCounts)>, String> {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (ptm, done, stop) = (&ptm, &done, &stop);
                let limit = args.transfers;
                let report = args.report_every;
                s.spawn(move || -> Result<(u64, stats::FlushCounts), String> {
                    let h = ptm.handle().map_err(|e| e.to_string())?;
                    let before = stats::thread_counts();
                    let mut rng = 0x9e37_79b9_7f4a_7c15u64
                        ^ (w as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9)
                        ^ start.elapsed().as_nanos() as u64;
                    let mut mine = 0u64;
                    while !stop.load(Ordering::Relaxed) && limit.map_or(true, |l| mine < l) {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        let (from, to, amount) =
                            (rng % accounts, (rng >> 20) % accounts, (rng >> 40) % 100);
                        let total = workload::transfer(&h, from, to, amount);
                        mine += 1;
                        done.fetch_add(1, Ordering::Relaxed);
                        if report != 0 && mine % report == 0 {
                            println!("durable {total}");
                        }
                    }
                    Ok((mine, stats::thread_counts() - before))
                })
            })
            .collect();
        let mut last = (Instant::now(), 0u64);
        while handles.iter().any(|h| !h.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            if args.transfers.is_none() && Instant::now() >= deadline {
                stop.store(true, Ordering::Relaxed);
            }
            if last.0.elapsed() >= Duration::from_secs(1) {
                let n = done.load(Ordering::Relaxed);
                println!(
                    "  {:>6.1} s: {n} transfers this run ({:.0}/s)",
                    start.elapsed().as_secs_f64(),
                    (n - last.1) as f64 / last.0.elapsed().as_secs_f64()
                );
                last = (Instant::now(), n);
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a worker panicked".to_string())?)
            .collect()
    })?;
    let elapsed = start.elapsed().as_secs_f64();
    let transfers: u64 = counts.iter().map(|c| c.0).sum();
    let flushes = counts
        .iter()
        .fold(stats::FlushCounts::default(), |a, c| a + c.1);
    let (pwb, pfence, psync) = flushes.per_op(transfers);
    let audit = workload::audit(&ptm.handle()?);
    println!(
        "ran {transfers} transfers in {elapsed:.2} s ({:.0}/s), per transfer: {pwb:.2} pwb, \
         {pfence:.2} pfence, {psync:.2} psync; {} committed in all; audit {}",
        transfers as f64 / elapsed.max(1e-9),
        audit.total,
        verdict(audit.consistent),
    );
    if !audit.consistent {
        return Err("the bank is inconsistent after the run".into());
    }
    Ok(())
}

/// How an audit's result reads in the summary lines.
fn verdict(consistent: bool) -> &'static str {
    if consistent {
        "consistent"
    } else {
        "INCONSISTENT"
    }
}
