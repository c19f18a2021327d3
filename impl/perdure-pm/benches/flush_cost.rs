//! Flush cost per backend on this machine: the baseline every later
//! benchmark relates its numbers to.
//!
//! For each backend it measures, on a pool file:
//! * `1 line`: store to a line, `pwb` it, `pfence` — ns per round;
//! * `64 lines`: store to 64 consecutive lines, `pwb` each, one `pfence` —
//!   ns per line.
//!
//! Lines are written before they are flushed, as real code does (a flush of a
//! clean line costs less). Prints a table and writes
//! `out/bench/flush_cost.json`.

use perdure_harness::bench as common;
use perdure_pm::{Backend, FlushInstruction, Msync, NoFlush, Pmem, Pool, CACHE_LINE};
use std::sync::atomic::Ordering;
use std::time::Instant;

const LAYOUT: &str = "bench-flush";
const POOL: u64 = 16 << 20;

struct Row {
    backend: String,
    mode: String,
    one_line_ns: f64,
    per_line_ns: f64,
    rounds: u64,
}

fn measure<B: Backend>(backend: B, rounds: u64) -> Row {
    let dir = common::pool_dir();
    let pool =
        Pool::create_with(dir.path().join("f.pool"), LAYOUT, POOL, backend).expect("create pool");
    let base = pool.data_offset();
    let span = (POOL - base) / CACHE_LINE as u64;
    // Warm up the mapping (page faults are not what we measure).
    for l in 0..span {
        pool.word(base + l * 64)
            .unwrap()
            .store(1, Ordering::Relaxed);
    }
    pool.sync_all().unwrap();

    let t = Instant::now();
    for r in 0..rounds {
        let off = base + (r % span) * 64;
        pool.word(off).unwrap().store(r, Ordering::Relaxed);
        pool.pwb(off, 8);
        pool.pfence();
    }
    let one_line_ns = t.elapsed().as_nanos() as f64 / rounds as f64;

    let batches = (rounds / 64).max(4);
    let t = Instant::now();
    for b in 0..batches {
        let first = (b * 64) % (span - 64);
        for l in 0..64 {
            let off = base + (first + l) * 64;
            pool.word(off).unwrap().store(b, Ordering::Relaxed);
            pool.pwb(off, 8);
        }
        pool.pfence();
    }
    let per_line_ns = t.elapsed().as_nanos() as f64 / (batches * 64) as f64;
    Row {
        backend: pool.backend().name().to_owned(),
        mode: format!("{:?}", pool.mode()),
        one_line_ns,
        per_line_ns,
        rounds,
    }
}

fn main() {
    let quick = common::quick();
    let fast_rounds = if quick { 20_000 } else { 1_000_000 };
    let msync_rounds = if quick { 50 } else { 400 };
    let mut rows = Vec::new();
    for instr in FlushInstruction::ALL {
        match Pmem::with_instruction(instr) {
            Some(p) => rows.push(measure(p, fast_rounds)),
            None => println!("(pmem/{} not supported by this CPU)", instr.mnemonic()),
        }
    }
    rows.push(measure(Msync, msync_rounds));
    rows.push(measure(NoFlush, fast_rounds));

    println!();
    println!("flush cost on this machine (pool file in the system temp dir)");
    println!(
        "{:<18} {:<8} {:>16} {:>18} {:>10}",
        "backend", "mapping", "ns/(pwb+pfence)", "ns/line (64+1 fence)", "rounds"
    );
    for r in &rows {
        println!(
            "{:<18} {:<8} {:>16.1} {:>18.1} {:>10}",
            r.backend, r.mode, r.one_line_ns, r.per_line_ns, r.rounds
        );
    }
    let json: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{{\"backend\":{},\"mapping\":{},\"ns_per_pwb_pfence\":{:.2},\"ns_per_line_batched\":{:.2},\"rounds\":{}}}",
                common::json_str(&r.backend),
                common::json_str(&r.mode),
                r.one_line_ns,
                r.per_line_ns,
                r.rounds
            )
        })
        .collect();
    let path = common::out_dir().join("flush_cost.json");
    std::fs::write(&path, format!("{{\"rows\":[{}]}}\n", json.join(","))).expect("write results");
    println!("wrote {}", path.display());
}
