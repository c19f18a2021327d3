//! db_bench on perdure-kv (`make bench`; seed 000 §6, Figures 7 and 8):
//! every construction on the `Pmem` backend in `/dev/shm` (DRAM as
//! persistent memory, the seed's setting), 10^6 keys of 16 bytes, values
//! of 100, 1 and 2 threads, every workload of
//! `perdure_harness::kvbench`. Writes `kv/db_bench.{txt,json,svg}` and
//! `kv/db_bench-recovery.svg` under the bench output directory.
//!
//! `PERDURE_BENCH_QUICK=1`: 10^5 keys; `PERDURE_BENCH_FULL=1`: 10^7 keys
//! (the seed's Figure 8), RedoOpt-PTM only. `PERDURE_BENCH_THREADS`: the
//! thread counts. The stores beside it (redb, sled, fjall) are
//! `impl/kv-peers`, which `make bench` runs after this.

use perdure_harness::bench::{self, bench_dir, out_dir, settings_or_exit, thread_counts};
use perdure_harness::kvbench::{self, Config, PerdureKv};
use perdure_kv::{Construction, Durability};

fn main() {
    let (num, constructions) = if bench::full() {
        (10_000_000, vec![Construction::RedoOpt])
    } else if bench::quick() {
        (100_000, Construction::ALL.to_vec())
    } else {
        (1_000_000, Construction::ALL.to_vec())
    };
    let threads = settings_or_exit("db_bench", thread_counts(2));
    let dir = tempfile::tempdir_in(bench_dir()).expect("a directory for the databases");
    let mut all = Vec::new();
    for &c in &constructions {
        for &t in &threads {
            let cfg = Config {
                num,
                threads: t,
                progress: true,
                ..Config::default()
            };
            let subject = PerdureKv {
                construction: c,
                durability: Durability::Pmem,
            };
            match kvbench::run(&subject, dir.path(), &cfg, &mut |_| {}) {
                Ok(m) => all.extend(m),
                Err(e) => {
                    eprintln!("db_bench: {} {t}T: {e}", c.name());
                    std::process::exit(1);
                }
            }
        }
    }
    let table = kvbench::table(&all);
    print!("{table}");
    let out = out_dir().join("kv");
    std::fs::create_dir_all(&out).expect("create the output directory");
    std::fs::write(out.join("db_bench.txt"), &table).expect("write the table");
    std::fs::write(out.join("db_bench.json"), kvbench::json(&all)).expect("write the JSON");
    let title = format!(
        "perdure-kv db_bench, {num} keys, Pmem on {}",
        bench_dir().display()
    );
    std::fs::write(
        out.join("db_bench.svg"),
        kvbench::throughput_svg(&title, &all),
    )
    .expect("write the plot");
    std::fs::write(
        out.join("db_bench-recovery.svg"),
        kvbench::recovery_svg("perdure-kv: reopen and first write", &all),
    )
    .expect("write the plot");
    eprintln!("db_bench: wrote {}", out.display());
}
