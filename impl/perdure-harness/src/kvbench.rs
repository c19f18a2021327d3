//! db_bench: RocksDB's benchmark workloads, as seed 000 runs them on RedoDB
//! (§6, Figures 7 and 8: 16-byte keys, 100-byte values, 10^6 keys; fill
//! random, read random, read while writing, overwrite), over any key-value
//! store that implements [`Engine`]: perdure-kv (`perdure kv bench`, the
//! `db_bench` bench of perdure-kv) and the Rust stores beside it
//! (`impl/kv-peers`, run by `make bench`).
//!
//! A run ([`run`]) takes a [`Subject`] (a store on a backend, opened in a
//! directory of its own) through the workloads in db_bench's order, each
//! on the database the earlier ones left (`fillseq` on a fresh one,
//! `fillrandom` on another fresh one, then `overwrite`, `readrandom`,
//! `readseq`, `seekrandom`, `readwhilewriting`, `deleterandom`), then
//! closes it and measures the time to reopen it and complete one write
//! (recovery to first write). Each workload reports operations per
//! second, µs per operation, p50/p99/p99.9 latency, `pwb`/`pfence`/`psync`
//! per operation (perdure's counters, summed over the run's threads; none
//! for other stores), the process's resident-memory growth and the bytes
//! the database holds on its file system.
//!
//! Keys are `num` 16-byte decimal strings (`0000000000001234`), values 100
//! bytes; random workloads draw keys uniformly from `0..num` (so
//! `fillrandom` writes about 63% distinct keys, as db_bench does). With
//! `threads` threads the operations are split evenly; `readwhilewriting`
//! runs `threads` readers and one writer and reports the readers.

use crate::bench::{Histogram, Rng};
use crate::svg;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A key-value store under test, open.
pub trait Engine: Send + Sync {
    /// Sets `key` to `value`, durably if the subject is durable.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String>;
    /// Whether `key` is present (its value read).
    fn get(&self, key: &[u8]) -> Result<bool, String>;
    /// Removes `key`.
    fn delete(&self, key: &[u8]) -> Result<(), String>;
    /// Reads up to `n` entries from the first key at or after `from`, in
    /// key order; how many it read.
    fn seek(&self, from: &[u8], n: usize) -> Result<usize, String>;
    /// Reads every entry in key order; how many.
    fn scan_all(&self) -> Result<u64, String>;
    /// perdure's persistence counters of the calling thread, if the store
    /// counts them.
    fn flush_counts(&self) -> Option<perdure_pm::stats::FlushCounts> {
        None
    }
    /// The calling thread is done with the store (perdure-kv gives its
    /// thread id back: a PTM's replicas are as many as its thread ids).
    fn thread_done(&self) {}
}

/// A store on a backend: how to open it in a directory.
pub trait Subject: Send + Sync {
    /// Its name in tables and plots (`perdure-kv/redo-opt/pmem`, `redb`).
    fn name(&self) -> String;
    /// Whether a write is durable when it returns.
    fn durable(&self) -> bool;
    /// Opens the database in `dir`, creating it if `fresh` (the directory
    /// is then empty).
    fn open(&self, dir: &Path, fresh: bool, cfg: &Config) -> Result<Box<dyn Engine>, String>;
}

/// A workload of db_bench.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// `num` puts in key order, on a fresh database.
    FillSeq,
    /// `num` puts of random keys, on a fresh database.
    FillRandom,
    /// `num` puts of random keys, on the filled database.
    Overwrite,
    /// `num` gets of random keys.
    ReadRandom,
    /// Every entry read in key order (one operation per entry).
    ReadSeq,
    /// `num / 10` seeks to a random key, each reading the next 100 entries.
    SeekRandom,
    /// `num` gets of random keys by `threads` readers while one writer puts
    /// random keys.
    ReadWhileWriting,
    /// `num` deletes of random keys.
    DeleteRandom,
}

impl Workload {
    /// Every workload, in the order a run takes them.
    pub const ALL: [Workload; 8] = [
        Workload::FillSeq,
        Workload::FillRandom,
        Workload::Overwrite,
        Workload::ReadRandom,
        Workload::ReadSeq,
        Workload::SeekRandom,
        Workload::ReadWhileWriting,
        Workload::DeleteRandom,
    ];

    /// db_bench's name.
    pub fn name(self) -> &'static str {
        match self {
            Workload::FillSeq => "fillseq",
            Workload::FillRandom => "fillrandom",
            Workload::Overwrite => "overwrite",
            Workload::ReadRandom => "readrandom",
            Workload::ReadSeq => "readseq",
            Workload::SeekRandom => "seekrandom",
            Workload::ReadWhileWriting => "readwhilewriting",
            Workload::DeleteRandom => "deleterandom",
        }
    }
}

impl std::str::FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Workload, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
                format!("unknown workload {s:?}: one of {}", names.join(", "))
            })
    }
}

/// A run's size.
#[derive(Clone, Debug)]
pub struct Config {
    /// Keys (db_bench's `--num`).
    pub num: u64,
    /// Threads.
    pub threads: usize,
    /// Value bytes.
    pub value_size: usize,
    /// Entries a `seekrandom` reads after its seek.
    pub seek_nexts: usize,
    /// The workloads to run (in [`Workload::ALL`]'s order).
    pub workloads: Vec<Workload>,
    /// Progress lines on stderr.
    pub progress: bool,
}

impl Default for Config {
    /// The seed's: 10^6 keys, 100-byte values, 1 thread, every workload.
    fn default() -> Config {
        Config {
            num: 1_000_000,
            threads: 1,
            value_size: 100,
            seek_nexts: 100,
            workloads: Workload::ALL.to_vec(),
            progress: false,
        }
    }
}

/// Key `i` (16 bytes).
pub fn key(i: u64) -> [u8; 16] {
    let mut k = [b'0'; 16];
    let s = i.to_string();
    k[16 - s.len().min(16)..].copy_from_slice(&s.as_bytes()[s.len().saturating_sub(16)..]);
    k
}

/// One workload's figures.
#[derive(Clone, Debug)]
pub struct Measure {
    /// The subject.
    pub subject: String,
    /// Whether its writes were durable.
    pub durable: bool,
    /// The workload (`recovery` for the reopen and first write).
    pub workload: String,
    /// Threads (readers, for `readwhilewriting`).
    pub threads: usize,
    /// Operations.
    pub ops: u64,
    /// Wall time.
    pub secs: f64,
    /// Latency quantiles, µs (NaN for `readseq`, one timed scan of
    /// every entry).
    pub p50: f64,
    /// p99.
    pub p99: f64,
    /// p99.9.
    pub p999: f64,
    /// `pwb`, `pfence`, `psync` per operation, where counted.
    pub flushes: Option<(f64, f64, f64)>,
    /// Resident-memory growth since the database was opened, bytes.
    pub volatile_bytes: u64,
    /// Bytes the database directory holds on its file system.
    pub persistent_bytes: u64,
}

impl Measure {
    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.secs.max(1e-9)
    }

    /// µs per operation (per thread).
    pub fn us_per_op(&self) -> f64 {
        self.secs * 1e6 * self.threads as f64 / self.ops.max(1) as f64
    }
}

/// The process's resident bytes.
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// Bytes allocated on the file system under `dir`.
pub fn dir_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    for e in rd.flatten() {
        let Ok(m) = e.metadata() else { continue };
        if m.is_dir() {
            total += dir_bytes(&e.path());
        } else {
            total += m.blocks() * 512;
        }
    }
    total
}

/// What each thread of a workload does with operation number `i` of its
/// share.
type Op<'a> = dyn Fn(&dyn Engine, &mut Rng, u64) -> Result<u64, String> + Sync + 'a;

type Counts = Option<perdure_pm::stats::FlushCounts>;

/// What one thread of a workload did: operations, latencies, flushes.
type ThreadRun = Result<(u64, Histogram, Counts), String>;

/// What a workload's threads did together.
struct Timed {
    ops: u64,
    secs: f64,
    hist: Histogram,
    flushes: Counts,
}

/// Runs `per_thread` operations on each of `threads` threads; returns the
/// operations counted (an op may count several, as a seek's entries),
/// the wall time, the merged histogram and the summed flush counts.
fn timed(
    e: &dyn Engine,
    threads: usize,
    per_thread: u64,
    seed: u64,
    op: &Op<'_>,
    stop: Option<&AtomicBool>,
) -> Result<Timed, String> {
    let start = Instant::now();
    let results: Vec<ThreadRun> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut r = Rng::new(seed ^ (0x9e37_79b9 * (t as u64 + 1)));
                    let mut h = Histogram::new();
                    let before = e.flush_counts();
                    let mut n = 0;
                    for i in 0..per_thread {
                        let t0 = Instant::now();
                        n += op(e, &mut r, t as u64 * per_thread + i)?;
                        h.record(t0.elapsed().as_nanos() as u64);
                    }
                    let spent = e.flush_counts().zip(before).map(|(a, b)| a - b);
                    if let Some(stop) = stop {
                        stop.store(true, Ordering::Relaxed);
                    }
                    Ok((n, h, spent))
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a bench thread panicked".into()))
            })
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let mut hist = Histogram::new();
    let mut ops = 0;
    let mut flushes: Counts = None;
    for r in results {
        let (n, h, f) = r?;
        ops += n;
        hist.merge(&h);
        if let Some(f) = f {
            *flushes.get_or_insert_with(Default::default) += f;
        }
    }
    Ok(Timed {
        ops,
        secs,
        hist,
        flushes,
    })
}

/// Runs `cfg`'s workloads on `subject` in fresh directories under `base`;
/// calls `each` with every measure as it is taken.
pub fn run(
    subject: &dyn Subject,
    base: &Path,
    cfg: &Config,
    each: &mut dyn FnMut(&Measure),
) -> Result<Vec<Measure>, String> {
    let value = vec![b'v'; cfg.value_size];
    let num = cfg.num.max(1);
    let threads = cfg.threads.max(1);
    let per = num / threads as u64;
    let mut out = Vec::new();
    let wants = |w: Workload| cfg.workloads.contains(&w);
    let fresh_dir = |name: &str| -> Result<std::path::PathBuf, String> {
        let d = base.join(name);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        Ok(d)
    };
    let mut record =
        |w: &str, th: usize, t: &Timed, vol: u64, dir: &Path, out: &mut Vec<Measure>| {
            let m = Measure {
                subject: subject.name(),
                durable: subject.durable(),
                workload: w.to_owned(),
                threads: th,
                ops: t.ops,
                secs: t.secs,
                p50: t.hist.quantile(0.5),
                p99: t.hist.quantile(0.99),
                p999: t.hist.quantile(0.999),
                flushes: t.flushes.map(|f| f.per_op(t.ops)),
                volatile_bytes: vol,
                persistent_bytes: dir_bytes(dir),
            };
            if cfg.progress {
                eprintln!(
                    "db_bench {} {} {}T: {:.0} ops/s, {:.2} us/op",
                    m.subject,
                    m.workload,
                    m.threads,
                    m.ops_per_sec(),
                    m.us_per_op()
                );
            }
            each(&m);
            out.push(m);
        };
    let put_seq = |e: &dyn Engine, _: &mut Rng, i: u64| e.put(&key(i), &value).map(|()| 1);
    let put_rand =
        |e: &dyn Engine, r: &mut Rng, _: u64| e.put(&key(r.below(num)), &value).map(|()| 1);
    if wants(Workload::FillSeq) {
        let dir = fresh_dir("fillseq")?;
        let rss0 = rss();
        let e = subject.open(&dir, true, cfg)?;
        let t = timed(&*e, threads, per, 1, &put_seq, None)?;
        record(
            "fillseq",
            threads,
            &t,
            rss().saturating_sub(rss0),
            &dir,
            &mut out,
        );
    }
    let dir = fresh_dir("random")?;
    let rss0 = rss();
    let mut e = subject.open(&dir, true, cfg)?;
    // The later workloads need a filled database: fillrandom fills it, or
    // (when it is not asked for) an untimed fill in order.
    if wants(Workload::FillRandom) {
        let t = timed(&*e, threads, per, 2, &put_rand, None)?;
        record(
            "fillrandom",
            threads,
            &t,
            rss().saturating_sub(rss0),
            &dir,
            &mut out,
        );
    }
    if !wants(Workload::FillRandom) || wants(Workload::ReadSeq) || wants(Workload::SeekRandom) {
        // Every key present (fillrandom leaves ~37% out), untimed.
        timed(&*e, threads, per, 0, &put_seq, None)?;
    }
    let vol = |rss0: u64| rss().saturating_sub(rss0);
    if wants(Workload::Overwrite) {
        let t = timed(&*e, threads, per, 3, &put_rand, None)?;
        record("overwrite", threads, &t, vol(rss0), &dir, &mut out);
    }
    if wants(Workload::ReadRandom) {
        let get = |e: &dyn Engine, r: &mut Rng, _: u64| e.get(&key(r.below(num))).map(|_| 1);
        let t = timed(&*e, threads, per, 4, &get, None)?;
        record("readrandom", threads, &t, vol(rss0), &dir, &mut out);
    }
    if wants(Workload::ReadSeq) {
        let all = |e: &dyn Engine, _: &mut Rng, _: u64| e.scan_all();
        let t = timed(&*e, 1, 1, 5, &all, None)?;
        record("readseq", 1, &t, vol(rss0), &dir, &mut out);
        if let Some(m) = out.last_mut() {
            (m.p50, m.p99, m.p999) = (f64::NAN, f64::NAN, f64::NAN);
        }
    }
    if wants(Workload::SeekRandom) {
        let n = cfg.seek_nexts;
        let seek = |e: &dyn Engine, r: &mut Rng, _: u64| e.seek(&key(r.below(num)), n).map(|_| 1);
        let t = timed(&*e, threads, (per / 10).max(1), 6, &seek, None)?;
        record("seekrandom", threads, &t, vol(rss0), &dir, &mut out);
    }
    if wants(Workload::ReadWhileWriting) {
        let stop = Arc::new(AtomicBool::new(false));
        let t = std::thread::scope(|s| {
            let writer = {
                let (e, stop, value) = (&*e, Arc::clone(&stop), &value);
                s.spawn(move || {
                    let mut r = Rng::new(77);
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        e.put(&key(r.below(num)), value)?;
                        n += 1;
                    }
                    e.thread_done();
                    Ok::<u64, String>(n)
                })
            };
            let get = |e: &dyn Engine, r: &mut Rng, _: u64| e.get(&key(r.below(num))).map(|_| 1);
            let readers = timed(&*e, threads, per, 7, &get, Some(&stop));
            stop.store(true, Ordering::Relaxed);
            let writes = writer
                .join()
                .unwrap_or_else(|_| Err("the writer panicked".into()));
            readers.and_then(|r| writes.map(|_| r))
        })?;
        record("readwhilewriting", threads, &t, vol(rss0), &dir, &mut out);
    }
    if wants(Workload::DeleteRandom) {
        let del = |e: &dyn Engine, r: &mut Rng, _: u64| e.delete(&key(r.below(num))).map(|()| 1);
        let t = timed(&*e, threads, per, 8, &del, None)?;
        record("deleterandom", threads, &t, vol(rss0), &dir, &mut out);
    }
    // Recovery to first write: close, reopen, one put.
    drop(e);
    let t0 = Instant::now();
    e = subject.open(&dir, false, cfg)?;
    e.put(&key(0), &value)?;
    let secs = t0.elapsed().as_secs_f64();
    let mut hist = Histogram::new();
    hist.record((secs * 1e9) as u64);
    let t = Timed {
        ops: 1,
        secs,
        hist,
        flushes: None,
    };
    record("recovery", 1, &t, 0, &dir, &mut out);
    drop(e);
    Ok(out)
}

/// The table of `measures`: one row per subject and workload.
pub fn table(measures: &[Measure]) -> String {
    let mut s = format!(
        "{:<28} {:<17} {:>3} {:>12} {:>9} {:>8} {:>8} {:>9} {:>20} {:>9} {:>10}\n",
        "store",
        "workload",
        "thr",
        "ops/s",
        "us/op",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "pwb/pfence/psync",
        "RSS MB",
        "disk MB"
    );
    let q = |x: f64| {
        if x.is_nan() {
            "-".to_owned()
        } else {
            format!("{x:.2}")
        }
    };
    for m in measures {
        let fl = m
            .flushes
            .map_or("-".to_owned(), |(a, b, c)| format!("{a:.1}/{b:.2}/{c:.2}"));
        s += &format!(
            "{:<28} {:<17} {:>3} {:>12.0} {:>9.2} {:>8} {:>8} {:>9} {:>20} {:>9.1} {:>10.1}\n",
            m.subject,
            m.workload,
            m.threads,
            m.ops_per_sec(),
            m.us_per_op(),
            q(m.p50),
            q(m.p99),
            q(m.p999),
            fl,
            m.volatile_bytes as f64 / 1e6,
            m.persistent_bytes as f64 / 1e6
        );
    }
    s
}

/// `measures` as a JSON array.
pub fn json(measures: &[Measure]) -> String {
    let q = |x: f64| {
        if x.is_nan() {
            "null".to_owned()
        } else {
            format!("{x:.3}")
        }
    };
    let rows: Vec<String> = measures
        .iter()
        .map(|m| {
            let fl = m.flushes.map_or("null".to_owned(), |(a, b, c)| {
                format!("{{\"pwb\":{a:.3},\"pfence\":{b:.3},\"psync\":{c:.3}}}")
            });
            format!(
                "{{\"store\":{},\"durable\":{},\"workload\":{},\"threads\":{},\"ops\":{},\"secs\":{:.6},\
                 \"ops_per_sec\":{:.1},\"us_per_op\":{:.4},\"p50_us\":{},\"p99_us\":{},\
                 \"p999_us\":{},\"flushes_per_op\":{fl},\"volatile_bytes\":{},\"persistent_bytes\":{}}}",
                crate::bench::json_str(&m.subject),
                m.durable,
                crate::bench::json_str(&m.workload),
                m.threads,
                m.ops,
                m.secs,
                m.ops_per_sec(),
                m.us_per_op(),
                q(m.p50),
                q(m.p99),
                q(m.p999),
                m.volatile_bytes,
                m.persistent_bytes
            )
        })
        .collect();
    format!("[\n  {}\n]\n", rows.join(",\n  "))
}

/// A grouped bar chart of `measures`' throughput: one group per workload
/// (`recovery` left out), one bar per store (and thread count).
pub fn throughput_svg(title: &str, measures: &[Measure]) -> String {
    let mut groups: Vec<String> = Vec::new();
    let mut stores: Vec<String> = Vec::new();
    for m in measures.iter().filter(|m| m.workload != "recovery") {
        if !groups.contains(&m.workload) {
            groups.push(m.workload.clone());
        }
        let s = format!("{} {}T", m.subject, m.threads);
        if !stores.contains(&s) {
            stores.push(s);
        }
    }
    let series: Vec<(String, Vec<f64>)> = stores
        .iter()
        .map(|s| {
            let vals = groups
                .iter()
                .map(|g| {
                    measures
                        .iter()
                        .find(|m| &m.workload == g && &format!("{} {}T", m.subject, m.threads) == s)
                        .map_or(0.0, |m| m.ops_per_sec() / 1e3)
                })
                .collect();
            (s.clone(), vals)
        })
        .collect();
    svg::bar_chart(title, "thousand operations per second", &groups, &series)
}

/// A bar chart of recovery to first write, ms, per store.
pub fn recovery_svg(title: &str, measures: &[Measure]) -> String {
    let rec: Vec<&Measure> = measures
        .iter()
        .filter(|m| m.workload == "recovery")
        .collect();
    let series: Vec<(String, Vec<f64>)> = rec
        .iter()
        .map(|m| (m.subject.clone(), vec![m.secs * 1e3]))
        .collect();
    svg::bar_chart(
        title,
        "ms from open to the first write's return",
        &["recovery".to_owned()],
        &series,
    )
}

/// How long ago `t` was, for progress lines.
pub fn since(t: Instant) -> Duration {
    t.elapsed()
}

/// perdure-kv on one construction and backend.
#[cfg(not(any(perdure_loom, perdure_shuttle)))]
#[derive(Clone, Debug)]
pub struct PerdureKv {
    /// The construction.
    pub construction: perdure_kv::Construction,
    /// `Pmem` or `Msync`.
    pub durability: perdure_kv::Durability,
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
impl PerdureKv {
    /// The thread ids a run of `cfg` needs: its threads and the writer of
    /// `readwhilewriting` (every bench thread gives its id back when it is
    /// done, [`Engine::thread_done`]). Each id is a replica more.
    fn ids(cfg: &Config) -> usize {
        cfg.threads.max(1) + 1
    }
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
impl Subject for PerdureKv {
    fn name(&self) -> String {
        let d = match self.durability {
            perdure_kv::Durability::Msync => "msync",
            _ => "pmem",
        };
        format!("perdure-kv/{}/{d}", self.construction.name())
    }
    fn durable(&self) -> bool {
        true
    }
    fn open(&self, dir: &Path, fresh: bool, cfg: &Config) -> Result<Box<dyn Engine>, String> {
        let ids = PerdureKv::ids(cfg);
        let replicas = match self.construction {
            perdure_kv::Construction::CxPtm => 2 * ids,
            _ => ids + 1,
        } as u64;
        // A node of a 16-byte key and a value takes a block of the next
        // power of two; per key besides: the index (a 24-byte leaf entry
        // in 1 KiB leaves at least half full: up to 50 bytes), the buckets
        // (up to 16 bytes, twice while a resize copies them); the PTM's
        // metadata is the rest.
        let node = (32 + 16 + cfg.value_size as u64 + 7).next_power_of_two();
        let replica = (cfg.num * (node + 96)).max(8 << 20);
        let size = (replica * replicas + (16 << 20)).next_multiple_of(1 << 20);
        let db = perdure_kv::Db::open(
            dir.join("kv.db"),
            &perdure_kv::Options {
                construction: self.construction,
                durability: self.durability,
                size,
                threads: ids,
                create_if_missing: fresh,
                error_if_exists: fresh,
            },
        )
        .map_err(|e| e.to_string())?;
        Ok(Box::new(KvEngine(db)))
    }
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
struct KvEngine(perdure_kv::Db);

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
impl Engine for KvEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.0.put(key, value).map(drop).map_err(|e| e.to_string())
    }
    fn get(&self, key: &[u8]) -> Result<bool, String> {
        self.0
            .get(key)
            .map(|v| v.is_some())
            .map_err(|e| e.to_string())
    }
    fn delete(&self, key: &[u8]) -> Result<(), String> {
        self.0.delete(key).map(drop).map_err(|e| e.to_string())
    }
    fn seek(&self, from: &[u8], n: usize) -> Result<usize, String> {
        self.0
            .scan(from.., n)
            .map(|v| v.len())
            .map_err(|e| e.to_string())
    }
    fn scan_all(&self) -> Result<u64, String> {
        // In chunks of 10,000 entries, each from one snapshot (an
        // iterator's pages).
        use std::ops::Bound::{Excluded, Unbounded};
        let mut last: Option<Vec<u8>> = None;
        let mut n = 0;
        loop {
            let chunk = match &last {
                None => self.0.scan::<&[u8]>(.., 10_000),
                Some(k) => self.0.scan::<&[u8]>((Excluded(&k[..]), Unbounded), 10_000),
            }
            .map_err(|e| e.to_string())?;
            n += chunk.len() as u64;
            match chunk.into_iter().next_back() {
                Some((k, _)) => last = Some(k),
                None => return Ok(n),
            }
        }
    }
    fn flush_counts(&self) -> Option<perdure_pm::stats::FlushCounts> {
        Some(perdure_pm::stats::thread_counts())
    }
    fn thread_done(&self) {
        self.0.release_thread();
    }
}
