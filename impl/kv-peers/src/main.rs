//! db_bench of perdure-kv beside the Rust stores a user would pick
//! instead (issue 18 §3): redb, sled and fjall from crates.io, in the same
//! run, on the same file systems, through the same workloads
//! (`perdure_harness::kvbench`). `make bench` runs it after the
//! workspace's benches.
//!
//! Two groups:
//! * **memory**: the databases in `/dev/shm`; perdure-kv on `Pmem` (cache-
//!   line flushes, durable on persistent memory), the others with their
//!   durability off (redb `Durability::None`, sled without `flush`, fjall
//!   without `persist`) — the best case a DRAM-speed store reaches.
//!   10^6 keys (`PERDURE_BENCH_QUICK=1`: 10^5), every workload, 1 and 2
//!   threads.
//! * **durable**: the databases in the temporary directory (an ordinary
//!   file system); every write durable when it returns: perdure-kv on
//!   `Msync`, redb's default `Durability::Immediate` commit per write,
//!   sled's `flush` after each write, fjall's `persist(SyncAll)` after
//!   each write. 10^4 keys (quick: 2,000): fillrandom, overwrite,
//!   readrandom, 1 and 2 threads.
//!
//! With `REDODB_SRC` set to a checkout of pramalhe/RedoDB, the memory
//! group also builds and runs RedoDB's own db_bench (`ptmdb/`, on
//! RedoOpt-PTM, its sources unchanged; pool in `/dev/shm`, its
//! `PM_REGION_SIZE` sized for the key count) with the same key count,
//! threads and value size, every workload but `readseq` and `seekrandom`
//! (which read nothing there); it reports µs per operation and the
//! latency quantiles of its histogram.
//!
//! Writes `kv/peers.{txt,json}`, `kv/peers-memory.svg`,
//! `kv/peers-durable.svg` and `kv/peers-recovery.svg` under the bench
//! output directory, and prints the tables and perdure-kv's ratio to each
//! store per point.

use perdure_harness::bench::{self, out_dir};
use perdure_harness::kvbench::{self, Config, Engine, Measure, PerdureKv, Subject, Workload};
use perdure_kv::{Construction, Durability};
use redb::{ReadableDatabase, ReadableTable};
use std::path::{Path, PathBuf};

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

// --- redb -------------------------------------------------------------------------

const TABLE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("kv");

struct Redb {
    durable: bool,
}

struct RedbEngine {
    db: redb::Database,
    durable: bool,
}

impl Subject for Redb {
    fn name(&self) -> String {
        format!("redb{}", if self.durable { "/fsync" } else { "/no-sync" })
    }
    fn durable(&self) -> bool {
        self.durable
    }
    fn open(&self, dir: &Path, _fresh: bool, _: &Config) -> Result<Box<dyn Engine>, String> {
        let db = redb::Database::create(dir.join("redb.db")).map_err(err)?;
        Ok(Box::new(RedbEngine {
            db,
            durable: self.durable,
        }))
    }
}

impl RedbEngine {
    fn write(
        &self,
        f: impl FnOnce(&mut redb::Table<&[u8], &[u8]>) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut tx = self.db.begin_write().map_err(err)?;
        if !self.durable {
            tx.set_durability(redb::Durability::None).map_err(err)?;
        }
        {
            let mut t = tx.open_table(TABLE).map_err(err)?;
            f(&mut t)?;
        }
        tx.commit().map_err(err)
    }
}

impl Engine for RedbEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.write(|t| t.insert(key, value).map(drop).map_err(err))
    }
    fn get(&self, key: &[u8]) -> Result<bool, String> {
        let tx = self.db.begin_read().map_err(err)?;
        let t = match tx.open_table(TABLE) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(false),
            Err(e) => return Err(err(e)),
        };
        let found = t.get(key).map_err(err)?.map(|v| v.value().len()).is_some();
        Ok(found)
    }
    fn delete(&self, key: &[u8]) -> Result<(), String> {
        self.write(|t| t.remove(key).map(drop).map_err(err))
    }
    fn seek(&self, from: &[u8], n: usize) -> Result<usize, String> {
        let tx = self.db.begin_read().map_err(err)?;
        let t = tx.open_table(TABLE).map_err(err)?;
        let mut c = 0;
        for e in t.range(from..).map_err(err)?.take(n) {
            let (k, v) = e.map_err(err)?;
            c += usize::from(!k.value().is_empty() || v.value().is_empty());
        }
        Ok(c)
    }
    fn scan_all(&self) -> Result<u64, String> {
        let tx = self.db.begin_read().map_err(err)?;
        let t = tx.open_table(TABLE).map_err(err)?;
        let mut c = 0;
        for e in t.range(..).map_err(err)? {
            let (k, _) = e.map_err(err)?;
            c += u64::from(!k.value().is_empty());
        }
        Ok(c)
    }
}

// --- sled -------------------------------------------------------------------------

struct Sled {
    durable: bool,
}

struct SledEngine {
    db: sled::Db,
    durable: bool,
}

impl Subject for Sled {
    fn name(&self) -> String {
        format!("sled{}", if self.durable { "/flush" } else { "/no-flush" })
    }
    fn durable(&self) -> bool {
        self.durable
    }
    fn open(&self, dir: &Path, _fresh: bool, _: &Config) -> Result<Box<dyn Engine>, String> {
        let db = sled::open(dir.join("sled")).map_err(err)?;
        Ok(Box::new(SledEngine {
            db,
            durable: self.durable,
        }))
    }
}

impl SledEngine {
    fn sync(&self) -> Result<(), String> {
        if self.durable {
            self.db.flush().map(drop).map_err(err)?;
        }
        Ok(())
    }
}

impl Engine for SledEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.db.insert(key, value).map_err(err)?;
        self.sync()
    }
    fn get(&self, key: &[u8]) -> Result<bool, String> {
        Ok(self.db.get(key).map_err(err)?.is_some())
    }
    fn delete(&self, key: &[u8]) -> Result<(), String> {
        self.db.remove(key).map_err(err)?;
        self.sync()
    }
    fn seek(&self, from: &[u8], n: usize) -> Result<usize, String> {
        let mut c = 0;
        for e in self.db.range(from..).take(n) {
            e.map_err(err)?;
            c += 1;
        }
        Ok(c)
    }
    fn scan_all(&self) -> Result<u64, String> {
        let mut c = 0;
        for e in self.db.iter() {
            e.map_err(err)?;
            c += 1;
        }
        Ok(c)
    }
}

// --- fjall ------------------------------------------------------------------------

struct Fjall {
    durable: bool,
}

struct FjallEngine {
    db: fjall::Database,
    items: fjall::Keyspace,
    durable: bool,
}

impl Subject for Fjall {
    fn name(&self) -> String {
        format!(
            "fjall{}",
            if self.durable {
                "/sync-all"
            } else {
                "/no-sync"
            }
        )
    }
    fn durable(&self) -> bool {
        self.durable
    }
    fn open(&self, dir: &Path, _fresh: bool, _: &Config) -> Result<Box<dyn Engine>, String> {
        let db = fjall::Database::builder(dir.join("fjall"))
            .open()
            .map_err(err)?;
        let items = db
            .keyspace("kv", fjall::KeyspaceCreateOptions::default)
            .map_err(err)?;
        Ok(Box::new(FjallEngine {
            db,
            items,
            durable: self.durable,
        }))
    }
}

impl FjallEngine {
    fn sync(&self) -> Result<(), String> {
        if self.durable {
            self.db.persist(fjall::PersistMode::SyncAll).map_err(err)?;
        }
        Ok(())
    }
}

impl Engine for FjallEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.items.insert(key, value).map_err(err)?;
        self.sync()
    }
    fn get(&self, key: &[u8]) -> Result<bool, String> {
        Ok(self.items.get(key).map_err(err)?.is_some())
    }
    fn delete(&self, key: &[u8]) -> Result<(), String> {
        self.items.remove(key).map_err(err)?;
        self.sync()
    }
    fn seek(&self, from: &[u8], n: usize) -> Result<usize, String> {
        let mut c = 0;
        for g in self.items.range(from..).take(n) {
            g.into_inner().map_err(err)?;
            c += 1;
        }
        Ok(c)
    }
    fn scan_all(&self) -> Result<u64, String> {
        let mut c = 0;
        for g in self.items.iter() {
            g.into_inner().map_err(err)?;
            c += 1;
        }
        Ok(c)
    }
}

// --- RedoDB's own db_bench (C++) ---------------------------------------------------

/// The workloads RedoDB's `ptmdb/db_bench.cc` has of kvbench's, in
/// kvbench's order. Not `readseq` and `seekrandom`: its iterator starts
/// only when `TMHashMap::sizeHM` is non-zero, and `innerPut` has the
/// increment commented out, so they read no entry (`readseq` counts `num`
/// of them and prints 0.000 µs/op; its `seekrandom` is a point seek, not
/// kvbench's 100 entries).
const REDODB_WORKLOADS: [&str; 6] = [
    "fillseq",
    "fillrandom",
    "overwrite",
    "readrandom",
    "readwhilewriting",
    "deleterandom",
];

/// RedoOpt's replicas (`MAX_COMBINEDS` of `RedoOpt.hpp`, `MAX_THREADS + 1`):
/// the mapped region is cut into this many equal parts, each a whole copy
/// of the heap.
const REDOOPT_REPLICAS: u64 = 42;

/// Where `RedoOpt.hpp` asks `mmap` to put the region (`base_addr`, a hint
/// it asserts was honoured).
const REDOOPT_BASE: u64 = 0x7fdd_c000_0000;

/// `PM_REGION_SIZE` for `num` keys. Its Makefile's 4 GiB gives each replica
/// 97.5 MiB, and the `TMHashMap` every database starts with allocates its
/// 10·2^20 buckets (80 MiB) as one EsLoco block of 128 MiB (a power of two
/// with a 16-byte header): `pmalloc` returns null at `DB::Open`, whatever
/// the key count. Each key then takes three power-of-two blocks: the node
/// (40 bytes: 64), the key (17: 64) and the value (101: 128). One eighth of
/// slack on top, in whole MiB. (The authors' other line in that Makefile,
/// for their machine, is 122 GiB.)
fn redodb_region(num: u64) -> u64 {
    const MIB: u64 = 1 << 20;
    let replica = (128 * MIB + num * 256) * 9 / 8;
    replica.div_ceil(MIB) * MIB * REDOOPT_REPLICAS
}

/// Builds RedoDB's db_bench on RedoOpt-PTM (`ptmdb/`, its sources
/// unchanged) from the checkout `src` into `build`: its Makefile's
/// sources and flags (`bin/db_bench_redoopt`), with this CPU's flush
/// instruction, a `PM_REGION_SIZE` that holds `num` keys
/// ([`redodb_region`]) and its pool file at `pool` (`PM_FILE_NAME`, as
/// the Makefile's DAX line sets it), away from other users of its default
/// `/dev/shm/redoopt_shared`.
fn build_redodb(src: &Path, build: &Path, num: u64, pool: &Path) -> Result<PathBuf, String> {
    let ptmdb = src.join("ptmdb");
    if !ptmdb.join("db_bench.cc").exists() {
        return Err(format!(
            "REDODB_SRC={}: no ptmdb/db_bench.cc (not a checkout of pramalhe/RedoDB)",
            src.display()
        ));
    }
    let region = redodb_region(num);
    // Without address randomisation (see `run_redodb`) the shared
    // libraries sit just under 0x7fff_f800_0000; keep 4 GiB below them.
    if REDOOPT_BASE + region > 0x7fff_0000_0000 {
        return Err(format!(
            "RedoDB's region for {num} keys ({} GiB) does not fit between its fixed base \
             address {REDOOPT_BASE:#x} and the shared libraries",
            region >> 30
        ));
    }
    std::fs::create_dir_all(build).map_err(err)?;
    let out = build.join("db_bench_redoopt");
    let cpu = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let pwb = if cpu.contains(" clwb") {
        "CLWB"
    } else {
        "CLFLUSHOPT"
    };
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    // Its Makefile's SRCS and REDOOPT_SRCS, and the bench.
    let sources = [
        "db_bench.cc",
        "db_impl.cc",
        "status.cc",
        "port/port_posix.cc",
        "util/histogram.cc",
        "util/env_posix.cc",
        "util/testutil.cc",
        "write_batch.cc",
        "common/ThreadRegistry.cpp",
        "ptms/redoopt/RedoOpt.cpp",
    ];
    let status = std::process::Command::new("nice")
        .args(["-n", "5"])
        .arg(&cxx)
        .current_dir(&ptmdb)
        .args(["-std=c++14", "-O2", "-g", &format!("-DPWB_IS_{pwb}")])
        .arg(format!("-DPM_REGION_SIZE={region}ULL"))
        .arg(format!("-DPM_FILE_NAME=\"{}\"", pool.display()))
        .arg("-DUSE_REDOOPT")
        .args(sources.iter().filter(|f| ptmdb.join(f).exists()))
        .args(["-I.", "-Iutil", "-Iport", "-o"])
        .arg(&out)
        .arg("-lpthread")
        .status()
        .map_err(|e| format!("{cxx}: {e}"))?;
    if !status.success() {
        return Err(format!(
            "RedoDB's db_bench did not build with {cxx} ({status})"
        ));
    }
    Ok(out)
}

/// RedoDB's db_bench command: under `setarch -R` where that works.
/// `RedoOpt.hpp` maps its region at [`REDOOPT_BASE`] and asserts it got that
/// address; with address randomisation the shared libraries land in that
/// range on some runs (for the 17 GiB of 10^6 keys, 36 of 2,000 launches of
/// `cat` here had a mapping there).
fn redodb_command(bin: &Path) -> std::process::Command {
    let setarch_works = std::process::Command::new("setarch")
        .args([std::env::consts::ARCH, "-R", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if setarch_works {
        let mut c = std::process::Command::new("setarch");
        c.args([std::env::consts::ARCH, "-R"]).arg(bin);
        c
    } else {
        std::process::Command::new(bin)
    }
}

/// One line of db_bench's latency histogram: `[ left, right ) count
/// percent% cumulative%`, in µs.
fn histogram_bucket(line: &str) -> Option<(f64, f64, f64)> {
    let rest = line.trim_start().strip_prefix('[')?;
    let mut f = rest
        .split(|c: char| c == ',' || c == ')' || c.is_whitespace())
        .filter(|t| !t.is_empty());
    let mut next = || f.next()?.parse::<f64>().ok();
    Some((next()?, next()?, next()?))
}

/// p50/p99/p99.9 of `m` from its histogram `buckets` (emptied), as
/// LevelDB's `Histogram::Percentile` interpolates within a bucket.
fn set_quantiles(m: Option<&mut Measure>, buckets: &mut Vec<(f64, f64, f64)>) {
    let total: f64 = buckets.iter().map(|b| b.2).sum();
    if let Some(m) = m.filter(|_| total > 0.0) {
        let q = |p: f64| {
            let threshold = total * p / 100.0;
            let mut sum = 0.0;
            for &(left, right, count) in buckets.iter() {
                if sum + count >= threshold {
                    return left + (right - left) * (threshold - sum) / count;
                }
                sum += count;
            }
            f64::NAN
        };
        (m.p50, m.p99, m.p999) = (q(50.0), q(99.0), q(99.9));
    }
    buckets.clear();
}

/// Runs RedoDB's db_bench (`num` keys, `threads` threads, 100-byte values)
/// on a new pool file `pool` and reads its `name : X micros/op` lines and
/// the latency histogram after each (`--histogram=1`: one clock read per
/// operation, as kvbench's own latencies take).
fn run_redodb(bin: &Path, pool: &Path, num: u64, threads: usize) -> Result<Vec<Measure>, String> {
    use std::io::{BufRead, Read};
    use std::process::Stdio;
    // A pool left by a run of another size would be mapped as it is.
    let _ = std::fs::remove_file(pool);
    let mut child = redodb_command(bin)
        .arg(format!("--benchmarks={}", REDODB_WORKLOADS.join(",")))
        .arg(format!("--num={num}"))
        .arg(format!("--threads={threads}"))
        .arg("--value_size=100")
        .arg("--histogram=1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", bin.display()))?;
    // Its progress lines go to stderr: drain them so the pipe never fills.
    let mut err_pipe = child.stderr.take().expect("stderr is piped");
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    // Read until the last workload's histogram ends (a blank line), then
    // stop it: at exit `~Benchmark` deletes the hash map in one transaction
    // (every node freed), which took minutes and once spun for good in
    // `RedoOpt::addAddrIfAbsent` (2 threads, 10^6 keys: still freeing the
    // same node 4 minutes later, in minute 14). Nothing is measured there.
    let last = REDODB_WORKLOADS[REDODB_WORKLOADS.len() - 1];
    let mut text = String::new();
    let mut reported = false;
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout is piped"));
    for line in stdout.lines() {
        let Ok(line) = line else { break };
        text += &line;
        text.push('\n');
        if line.starts_with(last) && line.contains("micros/op") {
            reported = true;
        } else if reported && line.trim().is_empty() {
            break;
        }
    }
    if reported {
        let _ = child.kill();
    }
    let status = child.wait().map_err(err)?;
    let stderr = stderr.join().unwrap_or_default();
    let _ = std::fs::remove_file(pool);
    if !reported {
        // Its progress lines end in `\r`: keep the last real line.
        let last = stderr
            .split(['\r', '\n'])
            .rfind(|l| !l.trim().is_empty() && !l.contains("... finished"))
            .unwrap_or_default();
        return Err(format!(
            "RedoDB's db_bench failed ({status}): {last}\n{text}"
        ));
    }
    let out = parse_redodb(&text, num, threads);
    if out.is_empty() {
        return Err(format!(
            "RedoDB's db_bench printed no micros/op line:\n{text}"
        ));
    }
    Ok(out)
}

/// RedoDB's db_bench's report: a measure per `name : X micros/op` line,
/// with the quantiles of the histogram that follows it.
fn parse_redodb(text: &str, num: u64, threads: usize) -> Vec<Measure> {
    let mut out: Vec<Measure> = Vec::new();
    // The histogram lines that follow each result, `[ left, right ) count ...`.
    let mut buckets: Vec<(f64, f64, f64)> = Vec::new();
    for line in text.lines() {
        if let Some(b) = histogram_bucket(line) {
            buckets.push(b);
            continue;
        }
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim();
        let Some(us) = rest
            .split_whitespace()
            .next()
            .and_then(|x| x.parse::<f64>().ok())
        else {
            continue;
        };
        if !REDODB_WORKLOADS.contains(&name) || !rest.contains("micros/op") {
            continue;
        }
        set_quantiles(out.last_mut(), &mut buckets);
        // Each of LevelDB's db_bench threads does `num` operations
        // (`readwhilewriting`: each reader; the writer is not counted), and
        // micros/op is the threads' summed seconds over their summed
        // operations: the wall time is `us * num`.
        let ops = num * threads as u64;
        out.push(Measure {
            subject: "RedoDB (C++)/redo-opt/pmem".into(),
            durable: true,
            workload: name.into(),
            threads,
            ops,
            secs: us * num as f64 / 1e6,
            p50: f64::NAN,
            p99: f64::NAN,
            p999: f64::NAN,
            flushes: None,
            volatile_bytes: 0,
            persistent_bytes: 0,
        });
    }
    set_quantiles(out.last_mut(), &mut buckets);
    out
}

// --- The run ----------------------------------------------------------------------

fn group(
    name: &str,
    base: &Path,
    subjects: &[Box<dyn Subject>],
    num: u64,
    workloads: &[Workload],
) -> Vec<Measure> {
    let mut all = Vec::new();
    for threads in [1, 2] {
        for s in subjects {
            let cfg = Config {
                num,
                threads,
                workloads: workloads.to_vec(),
                progress: true,
                ..Config::default()
            };
            let dir = tempfile::tempdir_in(base).expect("a directory for the database");
            match kvbench::run(&**s, dir.path(), &cfg, &mut |_| {}) {
                Ok(m) => all.extend(m),
                Err(e) => eprintln!("kv-peers {name}: {} {threads}T failed: {e}", s.name()),
            }
        }
    }
    all
}

/// perdure-kv's throughput over each other store's, per workload and
/// thread count.
fn ratios(measures: &[Measure]) -> String {
    let mut s = String::new();
    // `readseq` is one thread in both thread counts' runs: its first run
    // only.
    let mut seen = std::collections::HashSet::new();
    for m in measures
        .iter()
        .filter(|m| m.subject.starts_with("perdure-kv") && m.workload != "recovery")
    {
        for o in measures.iter().filter(|o| {
            !o.subject.starts_with("perdure-kv")
                && o.workload == m.workload
                && o.threads == m.threads
        }) {
            if !seen.insert((
                m.workload.clone(),
                m.threads,
                m.subject.clone(),
                o.subject.clone(),
            )) {
                continue;
            }
            s += &format!(
                "{:<17} {}T  {:<28} / {:<28} {:>7.2}x\n",
                m.workload,
                m.threads,
                m.subject,
                o.subject,
                m.ops_per_sec() / o.ops_per_sec().max(1e-9)
            );
        }
    }
    s
}

fn main() {
    let quick = bench::quick();
    let shm = PathBuf::from("/dev/shm");
    let memory_base = if shm.is_dir() {
        shm
    } else {
        std::env::temp_dir()
    };
    let disk_base = std::env::temp_dir();
    let memory: Vec<Box<dyn Subject>> = vec![
        Box::new(PerdureKv {
            construction: Construction::RedoOpt,
            durability: Durability::Pmem,
        }),
        Box::new(Redb { durable: false }),
        Box::new(Sled { durable: false }),
        Box::new(Fjall { durable: false }),
    ];
    let durable: Vec<Box<dyn Subject>> = vec![
        Box::new(PerdureKv {
            construction: Construction::RedoOpt,
            durability: Durability::Msync,
        }),
        Box::new(Redb { durable: true }),
        Box::new(Sled { durable: true }),
        Box::new(Fjall { durable: true }),
    ];
    let mem_num = if quick { 100_000 } else { 1_000_000 };
    let mut mem = group("memory", &memory_base, &memory, mem_num, &Workload::ALL);
    // RedoDB's own db_bench, when its checkout is given.
    match std::env::var_os("REDODB_SRC") {
        None => eprintln!("kv-peers: REDODB_SRC not set: RedoDB's own db_bench left out"),
        Some(src) => {
            let build = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/redodb");
            let pool = memory_base.join(format!("kv-peers-redodb-{}", std::process::id()));
            match build_redodb(Path::new(&src), &build, mem_num, &pool) {
                Err(e) => eprintln!("kv-peers: {e}"),
                Ok(bin) => {
                    for threads in [1, 2] {
                        match run_redodb(&bin, &pool, mem_num, threads) {
                            Ok(m) => mem.extend(m),
                            Err(e) => eprintln!("kv-peers: {threads}T: {e}"),
                        }
                    }
                }
            }
        }
    }
    let dur = group(
        "durable",
        &disk_base,
        &durable,
        if quick { 2_000 } else { 10_000 },
        &[
            Workload::FillRandom,
            Workload::Overwrite,
            Workload::ReadRandom,
        ],
    );
    let mut text = format!(
        "== memory: {} (perdure-kv durable on Pmem; the others' durability off) ==\n{}\n{}\n",
        memory_base.display(),
        kvbench::table(&mem),
        ratios(&mem)
    );
    text += &format!(
        "== durable: {} (every write durable on return) ==\n{}\n{}",
        disk_base.display(),
        kvbench::table(&dur),
        ratios(&dur)
    );
    print!("{text}");
    let out = out_dir().join("kv");
    std::fs::create_dir_all(&out).expect("create the output directory");
    let all: Vec<Measure> = mem.iter().chain(&dur).cloned().collect();
    std::fs::write(out.join("peers.txt"), &text).expect("write the table");
    std::fs::write(out.join("peers.json"), kvbench::json(&all)).expect("write the JSON");
    std::fs::write(
        out.join("peers-memory.svg"),
        kvbench::throughput_svg(
            "db_bench in /dev/shm: perdure-kv (Pmem) and the others, durability off",
            &mem,
        ),
    )
    .expect("write a plot");
    std::fs::write(
        out.join("peers-durable.svg"),
        kvbench::throughput_svg(
            "db_bench, every write durable, on the temporary directory's file system",
            &dur,
        ),
    )
    .expect("write a plot");
    std::fs::write(
        out.join("peers-recovery.svg"),
        kvbench::recovery_svg("reopen and first write", &all),
    )
    .expect("write a plot");
    eprintln!("kv-peers: wrote {}", out.display());
}

#[cfg(test)]
mod tests {
    use super::parse_redodb;

    #[test]
    fn reads_redodb_results_and_histograms() {
        let text = "fillrandom   :      14.527 micros/op;   14.1 MB/s
Microseconds per op:
Count: 200  Average: 14.5839  StdDev: 466.71
Min: 1.0000  Median: 2.5243  Max: 38104.0000
------------------------------------------------------
[       1,       2 )      20  10.000%  10.000% ##
[       2,       3 )     178  89.000%  99.000% ##############
[   35000,   40000 )       2   1.000% 100.000%

readseq      :       0.000 micros/op;
readrandom   :       3.926 micros/op; (100 of 100 found)
";
        let m = parse_redodb(text, 100, 2);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].workload.as_str(), m[0].ops), ("fillrandom", 200));
        assert!((m[0].secs - 14.527e-4).abs() < 1e-9);
        assert!((m[0].p50 - 2.4494).abs() < 1e-3, "{}", m[0].p50);
        assert!((m[0].p99 - 3.0).abs() < 1e-9);
        assert!((m[0].p999 - 39_500.0).abs() < 1e-6, "{}", m[0].p999);
        assert_eq!(m[1].workload, "readrandom");
        assert!(m[1].p50.is_nan());
    }
}
