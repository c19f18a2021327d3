//! What every benchmark of the workspace shares: where results and pool
//! files go, the environment variables that size a run, table and JSON
//! helpers. The plots are in [`crate::svg`].
//!
//! The variables (README of `docs/bench/`): `PERDURE_OUT` (results go to its
//! `bench/`, default `out/bench/` at the repository root),
//! `PERDURE_BENCH_DIR` (pool files; default `/dev/shm`, else the system temp
//! dir), `PERDURE_BENCH_QUICK` and `PERDURE_BENCH_FULL` (a shorter or a
//! longer run), `PERDURE_BENCH_THREADS` (a comma-separated list of thread
//! counts).

use perdure_pm::Pmem;
use std::path::PathBuf;
use std::str::FromStr;

/// `out/bench/` at the repository root (or `$PERDURE_OUT/bench`), created.
pub fn out_dir() -> PathBuf {
    let base = std::env::var_os("PERDURE_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../out"));
    let dir = base.join("bench");
    std::fs::create_dir_all(&dir).expect("create out/bench");
    dir
}

/// A fresh directory for pool files: under `$PERDURE_BENCH_DIR`, else the
/// system temp dir.
pub fn pool_dir() -> tempfile::TempDir {
    match std::env::var_os("PERDURE_BENCH_DIR") {
        Some(d) => tempfile::tempdir_in(d).expect("tempdir in PERDURE_BENCH_DIR"),
        None => tempfile::tempdir().expect("tempdir"),
    }
}

/// Where pool files go: `$PERDURE_BENCH_DIR`, else `/dev/shm` where it
/// exists (memory, as persistent memory would be), else the temp dir.
pub fn bench_dir() -> PathBuf {
    std::env::var_os("PERDURE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| match PathBuf::from("/dev/shm") {
            shm if shm.is_dir() => shm,
            _ => std::env::temp_dir(),
        })
}

/// The cache-line flush backend the benchmarks run on.
pub fn pmem() -> Result<Pmem, String> {
    Pmem::new().ok_or_else(|| "this CPU has no cache-line flush instruction".to_owned())
}

/// Escapes a string for JSON.
pub fn json_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Whether a quick run was asked for (`PERDURE_BENCH_QUICK=1`).
pub fn quick() -> bool {
    std::env::var_os("PERDURE_BENCH_QUICK").is_some()
}

/// Whether a full (long) run was asked for (`PERDURE_BENCH_FULL=1`).
pub fn full() -> bool {
    std::env::var_os("PERDURE_BENCH_FULL").is_some()
}

/// The value of `var` parsed, `None` when unset; a value that does not
/// parse is an error naming the variable.
pub fn env_value<T: FromStr>(var: &str) -> Result<Option<T>, String>
where
    T::Err: std::fmt::Display,
{
    match std::env::var(var) {
        Ok(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|e| format!("{var}={v}: {e}")),
        Err(_) => Ok(None),
    }
}

/// Seconds from `var` (a positive, finite number), `None` when unset.
pub fn env_secs(var: &str) -> Result<Option<f64>, String> {
    match env_value::<f64>(var)? {
        Some(x) if !(x.is_finite() && x > 0.0) => {
            Err(format!("{var}={x} is not a positive number of seconds"))
        }
        secs => Ok(secs),
    }
}

/// The comma-separated list in `var` parsed, `None` when unset.
pub fn env_list<T: FromStr>(var: &str) -> Result<Option<Vec<T>>, String>
where
    T::Err: std::fmt::Display,
{
    match std::env::var(var) {
        Ok(v) => v
            .split(',')
            .map(|t| t.trim().parse().map_err(|e| format!("{var}={v}: {t}: {e}")))
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Err(_) => Ok(None),
    }
}

/// The thread counts of a run: `$PERDURE_BENCH_THREADS`, else 1, 2 and the
/// powers of two up to the machine's parallelism, and that parallelism.
/// Each must be in `1..=max`.
pub fn thread_counts(max: usize) -> Result<Vec<usize>, String> {
    let threads = match env_list::<usize>("PERDURE_BENCH_THREADS")? {
        Some(t) => t,
        None => {
            let avail = std::thread::available_parallelism().map_or(2, |n| n.get());
            let mut t = vec![1, 2];
            let mut n = 4;
            while n <= avail {
                t.push(n);
                n *= 2;
            }
            if !t.contains(&avail) {
                t.push(avail);
            }
            t
        }
    };
    if threads.is_empty() || threads.iter().any(|&t| t == 0 || t > max) {
        return Err(format!("thread counts must be in 1..={max}: {threads:?}"));
    }
    Ok(threads)
}

/// The settings of bench `name`, or its error on stderr and exit code 1.
pub fn settings_or_exit<T>(name: &str, settings: Result<T, String>) -> T {
    settings.unwrap_or_else(|e| {
        eprintln!("{name} bench: {e}");
        std::process::exit(1);
    })
}

/// xorshift64*: a benchmark thread's randomness (Vigna, "An experimental
/// exploration of Marsaglia's xorshift generators", 2016).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A stream from `seed` (any value; it is mixed, and never zero).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[0, n)` (multiply-shift, no modulo bias worth the name).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A latency histogram: 64 powers of two of nanoseconds, 16 steps each
/// (the benchmarks' p50/p99/p99.9).
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Histogram {
        Histogram {
            counts: vec![0; 64 * 16],
        }
    }

    fn bucket(ns: u64) -> usize {
        if ns < 16 {
            return ns as usize;
        }
        let p = 63 - ns.leading_zeros() as usize; // ns in [2^p, 2^(p+1))
        let sub = ((ns >> (p - 4)) & 15) as usize;
        (p - 3) * 16 + sub
    }

    fn lower(b: usize) -> u64 {
        if b < 16 {
            return b as u64;
        }
        let p = b / 16 + 3;
        (1u64 << p) + ((b % 16) as u64) * (1u64 << (p - 4))
    }

    /// Counts one latency of `ns` nanoseconds.
    pub fn record(&mut self, ns: u64) {
        self.counts[Histogram::bucket(ns).min(64 * 16 - 1)] += 1;
    }

    /// Adds `o`'s counts.
    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
    }

    /// The latency at quantile `q`, in µs.
    pub fn quantile(&self, q: f64) -> f64 {
        let total: u64 = self.counts.iter().sum();
        let want = ((total as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return Histogram::lower(b) as f64 / 1000.0;
            }
        }
        0.0
    }
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram::new()
    }
}
