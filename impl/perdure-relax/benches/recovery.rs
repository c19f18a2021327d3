//! Recovery time, lazy against eager (the thesis's headline, Chapter 8:
//! RELAX answers in milliseconds where Mirror first copies the whole
//! structure).
//!
//! For each tracking variant: a hash table of Harris lists (4095 buckets)
//! with `n` keys is built on a volatile pool with the `NoFlush` backend,
//! the process "crashes" (a new incarnation, a fresh zeroed DRAM region),
//! and we time
//!
//! * **open**: `Space::open` + `HashTable::open` — everything that must run
//!   before the first operation (eager: the trace-and-copy of every node);
//! * **first pass**: `contains` of every key once (lazy variants recover as
//!   they go);
//! * **second pass**: the same again (everything recovered: steady state).
//!
//! `n` = 100 000 (10 000 with `PERDURE_BENCH_QUICK=1`; 100 000 and
//! 1 000 000 with `PERDURE_BENCH_FULL=1`; building the table dominates). One
//! thread. `NoFlush`: what is measured is the copying and tracking, not
//! flushes. Since the fix of Finding R1 (`specs/relax/README.md`) every
//! `recover_field` that copies writes back and fences the NVMM line before
//! its DRAM DWCAS, i.e. about one `pwb` + `pfence` per recovered field,
//! which this backend makes free: on real NVMM the lazy first pass pays
//! them, and this bench does not measure that cost. Prints a table and
//! writes `out/bench/relax-recovery.json`.

#[path = "../../perdure-pm/benches/common.rs"]
mod common;

use perdure_pm::{NoFlush, Pool};
use perdure_relax::ds::HashTable;
use perdure_relax::{Config, DramInit, OpenOptions, Space, Tracking};
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let sizes: &[u64] = if common::quick() {
        &[10_000]
    } else if std::env::var_os("PERDURE_BENCH_FULL").is_some() {
        &[100_000, 1_000_000]
    } else {
        &[100_000]
    };
    let mut records = Vec::new();
    println!(
        "{:>9} {:<24} {:>10} {:>13} {:>14}",
        "keys", "variant", "open ms", "1st pass ms", "2nd pass ms"
    );
    for &n in sizes {
        for t in Tracking::ALL {
            let heap = (n * 32 * 2).max(8 << 20) + (1 << 20);
            let size = heap + (1 << 20);
            let pool = Pool::volatile("relax-bench", size, NoFlush).expect("pool");
            let base = pool.data_offset().next_multiple_of(4096);
            let cfg = Config {
                threads: 2,
                roots: 1,
                heap_bytes: heap,
                msb_sequences: t == Tracking::PseudoBitset,
            };
            {
                let sp = Space::create(&pool, base, &cfg, OpenOptions::new(t)).expect("space");
                let mut h = sp.handle().expect("handle");
                let tab = HashTable::create(&mut h, 0, 4095).expect("table");
                for k in 0..n {
                    tab.insert(&mut h, k.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                        .expect("insert");
                }
            }
            pool.reincarnate();
            let t0 = Instant::now();
            let opts = OpenOptions {
                tracking: t,
                dram: DramInit::Zeroed,
            };
            let sp = Space::open(&pool, base, opts).expect("open");
            let tab = HashTable::open(&sp, 0).expect("open table");
            let open = ms(t0);
            let mut h = sp.handle().expect("handle");
            let mut pass = || {
                let t1 = Instant::now();
                for k in 0..n {
                    let found = tab
                        .contains(&mut h, k.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                        .expect("contains");
                    assert!(found, "key {k} lost");
                }
                ms(t1)
            };
            let first = pass();
            let second = pass();
            println!(
                "{n:>9} {:<24} {open:>10.2} {first:>13.1} {second:>14.1}",
                t.seed_name()
            );
            records.push(format!(
                "{{\"keys\":{n},\"variant\":{},\"open_ms\":{open:.3},\"first_pass_ms\":{first:.3},\"second_pass_ms\":{second:.3}}}",
                common::json_str(t.seed_name())
            ));
        }
    }
    let path = common::out_dir().join("relax-recovery.json");
    let body = format!("[\n{}\n]\n", records.join(",\n"));
    match std::fs::write(&path, body) {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => eprintln!("cannot write {}: {e}", path.display()),
    }
}
