//! Shared machinery of the process-kill tests (sled's pattern): the test
//! binary re-runs itself as a child selected by an environment variable,
//! the parent kills it with SIGKILL after a random delay and then checks
//! what survived.

#![allow(dead_code)]

#[path = "depth.rs"]
mod depth;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// xorshift64: a seeded, reproducible source of kill delays and choices.
pub struct Rng(pub u64);

impl Rng {
    /// A generator seeded with `seed` (never zero).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// What the child acknowledged before it died.
pub struct Acks {
    /// The last `ack N` line read.
    pub last: Option<u64>,
    /// How many `ack` lines were read.
    pub count: u64,
}

/// Runs this test binary as a child with `envs`, kills it with SIGKILL after
/// `delay` (or when it exits by itself), and returns its acknowledgements.
pub fn spawn_and_kill(envs: &[(&str, &std::ffi::OsStr)], delay: Duration) -> Result<Acks, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("spawn child: {e}"))?;
    let stdout = child.stdout.take().ok_or("child has no stdout")?;
    let reader = std::thread::spawn(move || {
        let mut acks = Acks {
            last: None,
            count: 0,
        };
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(i) = line
                .strip_prefix("ack ")
                .and_then(|s| s.parse::<u64>().ok())
            {
                acks.last = Some(i);
                acks.count += 1;
            }
        }
        acks
    });
    let t0 = Instant::now();
    while t0.elapsed() < delay {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    reader.join().map_err(|_| "ack reader panicked".to_string())
}

/// Writes `ack i` to stdout and flushes; false if the parent is gone.
pub fn ack(out: &mut impl Write, i: u64) -> bool {
    writeln!(out, "ack {i}").and_then(|_| out.flush()).is_ok()
}

/// The kill count: `PERDURE_KILLS`, else 200 (2,000 with `PERDURE_DEPTH=deep`).
pub fn kills() -> u64 {
    depth::count("PERDURE_KILLS", 200, 2000)
}

/// The seed: `PERDURE_KILL_SEED`, else a fixed default.
pub fn seed() -> u64 {
    std::env::var("PERDURE_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_2026)
}

/// Whether `cargo test`'s filter arguments (if any) select `name`.
pub fn selected(name: &str) -> bool {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    args.is_empty() || args.iter().any(|a| name.contains(a.as_str()))
}

/// Prints the human line and the `PERDURE-CHECK` line `make verify` reads.
pub fn report(name: &str, result: &Result<(String, String), String>, secs: f64) {
    let (status, explored, detail) = match result {
        Ok((explored, detail)) => ("pass", explored.clone(), detail.clone()),
        Err(e) => ("fail", String::new(), e.clone()),
    };
    println!("{name}: {status}: {explored} {detail} ({secs:.1} s)");
    let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    println!(
        "PERDURE-CHECK {{\"name\":\"{}\",\"kind\":\"explore\",\"status\":\"{status}\",\"explored\":\"{}\",\"seconds\":{secs:.2},\"detail\":\"{}\"}}",
        esc(name),
        esc(&explored),
        esc(&detail)
    );
}
