//! The evaluation of seed 002 (the RELAX thesis), Chapter 8, on
//! `perdure-relax`: every RELAX tracking variant against Mirror (eager
//! recovery, [`Tracking::Eager`], same allocator and same structures), in
//! steady state and after a crash.
//!
//! ## Structures
//!
//! Each is a set of `u64` keys behind the small trait [`BenchSet`]:
//!
//! * `list`: [`HarrisList`] (the thesis's small list: 128 keys by default);
//! * `hash`: [`HashTable`]s of 4095 buckets (the crate's largest bucket
//!   array, one heap block) at up to 64 roots, a key's table chosen by a
//!   hash independent of the bucket hash: `⌈keys/4095⌉` tables (at most
//!   64), so the load stays about 1 up to 262 080 keys and grows past that
//!   (61 keys per bucket at 16M keys). Each table is opened, i.e. its
//!   bucket array recovered (§6.6), before its first operation — lazily for
//!   RELAX, all at restart for Mirror;
//! * `skiplist`: [`SkipList`] (Fraser's), every variant but
//!   MarkableAtomicPointer (several incoming pointers per node, §6.4.3);
//! * `bst`: [`Bst`] (Natarajan–Mittal), keys drawn in a scrambled order
//!   (an odd multiplier modulo 2^62) so that the fill does not build a
//!   list-shaped tree;
//! * `array`: [`PArray`]s of 4095 cells at up to 64 roots used as a set
//!   over a known key range (§8.1's constrained set: insert = CAS 0→1,
//!   remove = CAS 1→0), so at most 262 080 cells. Only the variants that
//!   track fields apply (BitsetAtomic, PseudoBitsetAtomic; the thesis uses
//!   them for arrays under every version, §8.1).
//!
//! A structure with the shape of [`HarrisList`] (`create(h, root)`,
//! `open(space, root)`, `insert`/`remove`/`contains(h, key)`) is added with
//! two lines: `rooted_set!(Type, "name", bytes_per_key);` next to the
//! list's, and `big(Type::NAME, steady::<Type>, Some(recovery::<Type>)),`
//! in [`experiments`] (the hash table's sizes and the recovery runs).
//!
//! ## Workloads (§8.1)
//!
//! A structure of `n` keys draws keys from a range of `2n` (the array: cells
//! `0..2n`; the others: `2^62 − i` for `i < 2n`); it is filled with about
//! `n` of them (each key of the range with probability 1/2, inserted in
//! descending order so that sorted lists grow at their head), then each
//! operation is a `contains` with the read ratio, else an insert or a
//! remove with equal probability (so the size stays about `n`).
//!
//! * **Steady state** (Figures 8.1–8.4), no crash: threads 1..=max at 20%
//!   updates and the default size; sizes at 20% updates and max threads;
//!   update ratios 0, 20, 50, 100% at the default size and max threads.
//!   Every variant of a point runs on its own pool, filled once; the
//!   variants of a point are run round-robin `reps` times and the median
//!   is reported (shared machines drift; interleaving keeps the drift out
//!   of the ratios). Reported: M ops/s, the ratio to Mirror, `pwb` and
//!   `pfence` per operation ([`perdure_pm::stats`], summed over threads),
//!   and the same throughput *CPU-normalised*: operations per second that
//!   the worker threads were actually on a CPU
//!   (`/proc/thread-self/schedstat`), times the threads. On an idle
//!   machine the two agree; on a shared one the wall-clock figure mostly
//!   measures how much CPU the bench got, so the ratios and the targets
//!   below use the CPU-normalised one (caches and memory bandwidth are
//!   still shared: it is a better estimate, not an isolated one).
//! * **A/B** (`PERDURE_RELAX_ONLY=ab`, alone; not in the default run):
//!   the steady-state question, whether MarkableAtomicPointer and
//!   HybridAtomicPointer stay within 5% of Mirror, with the placement of
//!   each variant's pool out of the answer. On the list, the hash table,
//!   the skip list (Hybrid only) and the BST, at the steady points above,
//!   per size: each **round** creates fresh pools of the same size, one per
//!   arm (Mirror, Markable, Hybrid), and fills them on one thread (the same
//!   allocations in the same order on each); then every point of the size
//!   is measured on every arm, one after the other with the same key
//!   sequence, the worker threads pinned (`sched_setaffinity`, thread `t`
//!   on the `t`-th allowed CPU) and registered in order. The arms run
//!   forward in even rounds and backward in odd ones (ABBA; with three
//!   arms A B C | C B A), so a linear drift cancels over each pair of
//!   rounds. Each round gives a ratio variant/Mirror per point
//!   (CPU-normalised); the geometric mean of the rounds' ratios gets a 95%
//!   t-interval on their logarithms. Rounds go on, in pairs, until every
//!   interval of the size is within ±`PERDURE_RELAX_AB_HALF_WIDTH` (or
//!   `PERDURE_RELAX_AB_ROUNDS` rounds). A point **holds** when its interval
//!   lies above 0.95, is **missed** when it lies below, and is
//!   **undecided** otherwise. Writes `relax-ab.json` and the forest plot
//!   `relax-ab.svg`.
//! * **Recovery** (Figures 8.5, 8.6 and the recovery times of §8.2.4): the
//!   hash table, the skip list and the BST (the thesis leaves lists and
//!   arrays out, and so does this bench).
//!   One pool is filled to each `n` of a growing scan (default 1M, 2M, 4M,
//!   8M, 16M keys); at each `n` the process "crashes" and restarts under
//!   every variant: the `Space` and `Pool` are dropped (so the DRAM replica
//!   is gone), the pool file is opened again (`Pool::open_with`, a new
//!   incarnation, a fresh zeroed DRAM region) and the structure opened, and
//!   one operation runs. **Time to first op** is from the start of
//!   `Pool::open_with` to the end of that operation; Mirror's **recovery
//!   time** is its structure open (the trace and copy of everything
//!   reachable), fitted against `n` by least squares (ns per key). Then,
//!   on the largest `n`, the pool file is kept as a crash image and for
//!   each variant and key distribution (uniform; YCSB's scrambled Zipfian,
//!   θ = 0.99) a copy of it is restarted and run with 20% updates on all
//!   threads, the completed operations counted in 100 ms bins for 30 s
//!   from the restart: the thesis's throughput-over-time curves. The same
//!   runs for 10 s (a third) on a crash image of the smallest size: with
//!   the hash table's fixed 262 080 buckets the largest size has long
//!   bucket lists (64 keys at 16M), so its operations are slow and lazy
//!   recovery is still going on after 30 s, while at 1M keys (4 per
//!   bucket) the whole recovery fits in the window.
//!   The crashes are quiescent (no operation in flight): what is measured
//!   is what the restart costs, not the repair of a torn write.
//!   The scan's pool is created with `msb_sequences` so that
//!   PseudoBitsetAtomic can open it; the other variants run on it unchanged
//!   (their sequences count in the low 63 bits).
//!
//! ## Backend
//!
//! `Pmem` (clwb, else clflushopt, else clflush) on pool files in
//! `/dev/shm`, else the temporary directory (`PERDURE_BENCH_DIR`
//! overrides). tmpfs has no DAX: the flushes are the real instructions but
//! reach DRAM, not Optane, so a write-back costs far less than on the
//! thesis's machine and the eager copy reads DRAM-speed "NVMM".
//!
//! ## Settings (environment)
//!
//! | variable | effect |
//! | --- | --- |
//! | (default) | steady points 0.3 s × 5 rounds; hash sizes 8K, 128K, 1M keys; recovery scan 1M..16M keys, 30 s timelines at 16M and 10 s at 1M, for the hash table, the skip list and the BST (the recovery half took 30 minutes on 2 cores) |
//! | `PERDURE_BENCH_QUICK=1` | 0.1 s × 1 round; small sizes; scan 64K..256K keys, 3 s timelines (about 1 minute) |
//! | `PERDURE_BENCH_FULL=1` | 1 s × 5 rounds; hash sizes up to 8M (the thesis's default size); scan 4M..64M keys, 60 s timelines |
//! | `PERDURE_BENCH_THREADS=1,2` | the thread counts (default 1, 2, then powers of two up to the cores) |
//! | `PERDURE_RELAX_KEYS=1000000,16000000` | the recovery scan's sizes (the largest gets the timelines; the thesis's is 128M) |
//! | `PERDURE_RELAX_TIMELINE_SECS=100` | timeline length at the largest size (the thesis's: 100 s; a third of it at the smallest) |
//! | `PERDURE_RELAX_ONLY=steady` or `=recovery` | run one half |
//! | `PERDURE_RELAX_ONLY=ab` | the A/B mode alone (0.5 s per measurement, 6 to 40 rounds per size; quick: 0.05 s, 4 rounds) |
//! | `PERDURE_RELAX_AB_SECS=0.5` | seconds per measurement in the A/B mode |
//! | `PERDURE_RELAX_AB_HALF_WIDTH=0.02` | stop a size's rounds when every interval is within ± this (relative) |
//! | `PERDURE_RELAX_AB_MIN_ROUNDS=6`, `PERDURE_RELAX_AB_ROUNDS=40` | the fewest and the most rounds per size (even rounds only end a size early) |
//! | `PERDURE_RELAX_AB_PIN=0` | do not pin the worker threads |
//! | `PERDURE_RELAX_AB_STRUCTURES=list,bst` | the structures of the A/B mode (default list, hash, skiplist, bst) |
//!
//! Prints tables and writes `relax.json` and the plots `relax-threads-*.svg`,
//! `relax-size-*.svg`, `relax-updates-*.svg`,
//! `relax-recovery-<structure>-<keys>-{uniform,zipf}.svg` (and `…-cpu.svg`, the
//! same CPU-normalised: each bin's operations per on-CPU second of the
//! threads, times the threads) and
//! `relax-eager-<structure>.svg` into `$PERDURE_OUT/bench` (else
//! `out/bench/`); the A/B mode writes `relax-ab.json` and `relax-ab.svg`
//! there instead. The targets of issues 6 and 17 are reported, not
//! asserted.

use perdure_harness::bench::{self as common, Rng};
use perdure_harness::svg;
use perdure_pm::stats::{self, FlushCounts};
use perdure_pm::{Backend, Pmem, Pool};
use perdure_relax::ds::{Bst, HarrisList, HashTable, PArray, SkipList};
use perdure_relax::{Config, Handle, OpenOptions, RelaxError, Space, Tracking};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

const LAYOUT: &str = "bench-relax";
/// Entries of one bucket array / array node (`ds::hash::MAX_BUCKETS`).
const SHARD_CAP: u64 = 4095;
/// Roots of a space (`space::MAX_ROOTS`): the most shards.
const MAX_SHARDS: u64 = 64;
/// Keys are `KEY_TOP - i` for `i` in the range (see [`BenchSet::key`]).
const KEY_TOP: u64 = 1 << 62;

type Sp<'p> = Space<'p, Pmem>;
type H<'s, 'p> = Handle<'s, 'p, Pmem>;
type Res<T> = Result<T, RelaxError>;

// ---------------------------------------------------------------- structures

/// A set of `u64` keys on a RELAX space: what the experiments run.
trait BenchSet: Sized + Send + Sync {
    /// The structure's name in tables and file names.
    const NAME: &'static str;
    /// Heap bytes to reserve per key (the node, its allocation class, and
    /// room for churn), on top of a fixed 96 MiB.
    const BYTES_PER_KEY: u64 = 48;
    /// The structure's key for the workload's `i`-th key of the range: by
    /// default `KEY_TOP - i`, so that growing the range (the recovery scan)
    /// and filling it in order of `i` inserts ever smaller keys, at the head
    /// of sorted lists (O(1) per insert instead of a walk to the tail).
    fn key(i: u64) -> u64 {
        KEY_TOP - i
    }
    /// Whether the structure can run under `t`.
    fn supports(t: Tracking) -> bool {
        let _ = t;
        true
    }
    /// A new, empty structure for keys in `[0, range)`.
    fn create(h: &mut H<'_, '_>, range: u64) -> Res<Self>;
    /// The structure after a restart (what must run before its first
    /// operation; Mirror's eager recovery for [`Tracking::Eager`]).
    fn open(sp: &Sp<'_>) -> Res<Self>;
    fn insert(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool>;
    fn remove(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool>;
    fn contains(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool>;
}

/// `BenchSet` for a structure shaped like [`HarrisList`], at root 0:
/// `rooted_set!(Type, "name")`, or `rooted_set!(Type, "name", bytes)` with
/// the heap bytes to reserve per key if a node is larger than a list's.
macro_rules! rooted_set {
    ($ty:ty, $name:literal) => {
        rooted_set!($ty, $name, 48);
    };
    ($ty:ty, $name:literal, $bytes:expr) => {
        rooted_set!($ty, $name, $bytes, {});
    };
    // With items overriding the trait's defaults (`supports`, `key`).
    ($ty:ty, $name:literal, $bytes:expr, { $($extra:item)* }) => {
        impl BenchSet for $ty {
            const NAME: &'static str = $name;
            const BYTES_PER_KEY: u64 = $bytes;
            $($extra)*
            fn create(h: &mut H<'_, '_>, _range: u64) -> Res<Self> {
                <$ty>::create(h, 0)
            }
            fn open(sp: &Sp<'_>) -> Res<Self> {
                <$ty>::open(sp, 0)
            }
            fn insert(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool> {
                <$ty>::insert(self, h, key)
            }
            fn remove(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool> {
                <$ty>::remove(self, h, key)
            }
            fn contains(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool> {
                <$ty>::contains(self, h, key)
            }
        }
    };
}

rooted_set!(HarrisList, "list");
// MarkableAtomicPointer needs one incoming pointer per node (§6.4.3).
rooted_set!(SkipList, "skiplist", 160, {
    fn supports(t: Tracking) -> bool {
        t != Tracking::Markable
    }
});
// Keys in a scrambled order (odd multiplier modulo 2^62, a bijection): the
// default descending order would grow an unbalanced BST into a list.
rooted_set!(Bst, "bst", 128, {
    fn key(i: u64) -> u64 {
        i.wrapping_mul(0x9E37_79B9_7F4A_7C15) & ((1 << 62) - 1)
    }
});

/// Up to [`MAX_SHARDS`] structures at roots `0..shards`, each opened before
/// its first operation (all at once under [`Tracking::Eager`]).
struct Shards<T> {
    cells: Vec<OnceLock<T>>,
}

impl<T: Copy> Shards<T> {
    fn created(items: Vec<T>) -> Self {
        Shards {
            cells: items
                .into_iter()
                .map(|t| {
                    let c = OnceLock::new();
                    let _ = c.set(t);
                    c
                })
                .collect(),
        }
    }

    fn opened(sp: &Sp<'_>, open: impl Fn(&Sp<'_>, usize) -> Res<T>) -> Res<Self> {
        let mut n = 0;
        while (n as u64) < MAX_SHARDS && sp.root(n)?.is_some() {
            n += 1;
        }
        let s = Shards {
            cells: (0..n).map(|_| OnceLock::new()).collect(),
        };
        if sp.tracking() == Tracking::Eager {
            for (i, c) in s.cells.iter().enumerate() {
                let _ = c.set(open(sp, i)?);
            }
        }
        Ok(s)
    }

    fn get(&self, sp: &Sp<'_>, i: usize, open: impl Fn(&Sp<'_>, usize) -> Res<T>) -> T {
        *self.cells[i].get_or_init(|| open(sp, i).expect("open a shard"))
    }
}

/// The bench's hash table: see the module docs.
struct Hash(Shards<HashTable>);

fn shard_of(key: u64, n: usize) -> usize {
    // Fibonacci hashing of a mixed key: independent of the buckets' hash.
    let z = (key ^ (key >> 31)).wrapping_mul(0xd6e8_feb8_6659_fd93);
    ((u128::from(z) * n as u128) >> 64) as usize
}

impl Hash {
    fn table(&self, h: &H<'_, '_>, key: u64) -> HashTable {
        let i = shard_of(key, self.0.cells.len());
        self.0.get(h.space(), i, HashTable::open)
    }
}

impl BenchSet for Hash {
    const NAME: &'static str = "hash";
    fn create(h: &mut H<'_, '_>, range: u64) -> Res<Self> {
        let shards = (range / 2).div_ceil(SHARD_CAP).clamp(1, MAX_SHARDS);
        let tables = (0..shards as usize)
            .map(|i| HashTable::create(h, i, SHARD_CAP as usize))
            .collect::<Res<Vec<_>>>()?;
        Ok(Hash(Shards::created(tables)))
    }
    fn open(sp: &Sp<'_>) -> Res<Self> {
        Ok(Hash(Shards::opened(sp, HashTable::open)?))
    }
    fn insert(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool> {
        self.table(h, key).insert(h, key)
    }
    fn remove(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool> {
        self.table(h, key).remove(h, key)
    }
    fn contains(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool> {
        self.table(h, key).contains(h, key)
    }
}

/// The bench's array set: see the module docs.
struct Array(Shards<PArray>);

impl Array {
    fn cell(&self, h: &H<'_, '_>, key: u64) -> Res<perdure_relax::PAtomic> {
        let (i, j) = ((key / SHARD_CAP) as usize, (key % SHARD_CAP) as usize);
        if i >= self.0.cells.len() {
            return Err(RelaxError::Config(format!("key {key} beyond the array")));
        }
        self.0.get(h.space(), i, PArray::open).cell(j)
    }
}

impl BenchSet for Array {
    const NAME: &'static str = "array";
    fn key(i: u64) -> u64 {
        i
    }
    fn supports(t: Tracking) -> bool {
        !t.marks_pointers()
    }
    fn create(h: &mut H<'_, '_>, range: u64) -> Res<Self> {
        if range > SHARD_CAP * MAX_SHARDS {
            return Err(RelaxError::Config(format!("{range} cells is too many")));
        }
        let shards = range.div_ceil(SHARD_CAP).max(1);
        let arrays = (0..shards)
            .map(|i| {
                let n = (range - i * SHARD_CAP).min(SHARD_CAP);
                PArray::create(h, i as usize, n as usize)
            })
            .collect::<Res<Vec<_>>>()?;
        Ok(Array(Shards::created(arrays)))
    }
    fn open(sp: &Sp<'_>) -> Res<Self> {
        Ok(Array(Shards::opened(sp, PArray::open)?))
    }
    fn insert(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool> {
        Ok(self
            .cell(h, key)?
            .compare_exchange(h.space(), 0, 1)?
            .is_ok())
    }
    fn remove(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool> {
        Ok(self
            .cell(h, key)?
            .compare_exchange(h.space(), 1, 0)?
            .is_ok())
    }
    fn contains(&self, h: &mut H<'_, '_>, key: u64) -> Res<bool> {
        Ok(self.cell(h, key)?.load(h.space())? != 0)
    }
}

// ---------------------------------------------------------------- settings

struct Settings {
    quick: bool,
    full: bool,
    secs: f64,
    reps: usize,
    threads: Vec<usize>,
    scan: Vec<u64>,
    timeline: f64,
    steady: bool,
    recovery: bool,
    /// The A/B mode (`PERDURE_RELAX_ONLY=ab`), alone.
    ab: Option<AbSettings>,
    dir: PathBuf,
    pmem: Pmem,
}

/// The A/B mode's settings (see the module docs).
struct AbSettings {
    /// Seconds per measurement.
    secs: f64,
    /// Stop when every interval's relative half-width is at most this.
    half_width: f64,
    min_rounds: usize,
    max_rounds: usize,
    /// The CPUs worker `t` is pinned to (`cpus[t % len]`); `None`: unpinned.
    cpus: Option<Vec<usize>>,
    /// The structures to run (all four when unset).
    structures: Option<Vec<String>>,
}

impl AbSettings {
    fn from_env(quick: bool) -> Result<AbSettings, String> {
        let secs =
            common::env_secs("PERDURE_RELAX_AB_SECS")?.unwrap_or(if quick { 0.05 } else { 0.5 });
        let half_width = common::env_value::<f64>("PERDURE_RELAX_AB_HALF_WIDTH")?.unwrap_or(0.02);
        if !(half_width > 0.0 && half_width < 1.0) {
            return Err(format!(
                "PERDURE_RELAX_AB_HALF_WIDTH={half_width} must be in (0, 1)"
            ));
        }
        let min_rounds =
            common::env_value("PERDURE_RELAX_AB_MIN_ROUNDS")?.unwrap_or(if quick { 4 } else { 6 });
        let max_rounds =
            common::env_value("PERDURE_RELAX_AB_ROUNDS")?.unwrap_or(if quick { 4 } else { 40 });
        if min_rounds < 2 || max_rounds < min_rounds {
            return Err(format!(
                "A/B rounds: need 2 <= PERDURE_RELAX_AB_MIN_ROUNDS ({min_rounds}) <= PERDURE_RELAX_AB_ROUNDS ({max_rounds})"
            ));
        }
        let pin = common::env_value::<u8>("PERDURE_RELAX_AB_PIN")?.unwrap_or(1) != 0;
        let cpus = if pin {
            let c = allowed_cpus();
            if c.is_empty() {
                return Err(
                    "PERDURE_RELAX_AB_PIN: sched_getaffinity failed (set it to 0 to run unpinned)"
                        .into(),
                );
            }
            Some(c)
        } else {
            None
        };
        Ok(AbSettings {
            secs,
            half_width,
            min_rounds,
            max_rounds,
            cpus,
            structures: common::env_list("PERDURE_RELAX_AB_STRUCTURES")?,
        })
    }
}

impl Settings {
    fn from_env() -> Result<Settings, String> {
        let quick = common::quick();
        let full = common::full();
        let threads = common::thread_counts(32)?;
        let mut scan = match common::env_list("PERDURE_RELAX_KEYS")? {
            Some(k) => k,
            None if quick => vec![1 << 16, 1 << 17, 1 << 18],
            None if full => vec![4 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20],
            None => vec![1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20],
        };
        scan.sort_unstable();
        scan.dedup();
        if scan.first().map_or(true, |&n| n < 1024) {
            return Err(format!(
                "recovery sizes must be at least 1024 keys: {scan:?}"
            ));
        }
        let timeline = match common::env_value("PERDURE_RELAX_TIMELINE_SECS")? {
            Some(t) => t,
            None if quick => 3.0,
            None if full => 60.0,
            None => 30.0,
        };
        let only = std::env::var("PERDURE_RELAX_ONLY").unwrap_or_default();
        if !["", "steady", "recovery", "ab"].contains(&only.as_str()) {
            return Err(format!(
                "PERDURE_RELAX_ONLY={only}: expected steady, recovery or ab"
            ));
        }
        let ab = if only == "ab" {
            Some(AbSettings::from_env(quick)?)
        } else {
            None
        };
        let dir = common::bench_dir();
        let pmem = common::pmem()?;
        Ok(Settings {
            quick,
            full,
            secs: if quick {
                0.1
            } else if full {
                1.0
            } else {
                0.3
            },
            reps: if quick { 1 } else { 5 },
            threads,
            scan,
            timeline,
            steady: only.is_empty() || only == "steady",
            recovery: only.is_empty() || only == "recovery",
            ab,
            dir,
            pmem,
        })
    }

    fn max_threads(&self) -> usize {
        self.threads.iter().copied().max().unwrap_or(1)
    }
}

/// What an experiment runs on one structure.
struct Experiment {
    name: &'static str,
    /// Sizes (keys) of the size sweep.
    sizes: Vec<u64>,
    /// The size of the thread and update sweeps.
    default: u64,
    steady: SteadyFn,
    recovery: Option<RecoveryFn>,
    /// The A/B comparison of the pointer variants with Mirror (`None`
    /// where no pointer variant applies: the array).
    ab: Option<AbFn>,
}

type SteadyFn = fn(&Settings, &Experiment, &mut Vec<SteadyRow>);
type RecoveryFn = fn(&Settings) -> RecoveryReport;
type AbFn = fn(&Settings, &Experiment, &AbSettings, &mut Vec<AbPoint>);

/// The structures and their sizes (keys). The thesis: 128 keys for the
/// list, 8M for the others.
fn experiments(s: &Settings) -> Vec<Experiment> {
    let pick = |quick: Vec<u64>, normal: Vec<u64>, full: Vec<u64>| {
        if s.quick {
            quick
        } else if s.full {
            full
        } else {
            normal
        }
    };
    // The sizes of the large structures (the thesis's 8M keys is the
    // default size only with PERDURE_BENCH_FULL).
    let big_sizes = pick(
        vec![8 << 10, 64 << 10],
        vec![8 << 10, 128 << 10, 1 << 20],
        vec![8 << 10, 128 << 10, 1 << 20, 8 << 20],
    );
    let big_default = *big_sizes.last().expect("a size");
    let big =
        |name: &'static str, steady: SteadyFn, recovery: Option<RecoveryFn>, ab: AbFn| Experiment {
            name,
            sizes: big_sizes.clone(),
            default: big_default,
            steady,
            recovery,
            ab: Some(ab),
        };
    let array_max = SHARD_CAP * MAX_SHARDS / 2;
    vec![
        Experiment {
            name: HarrisList::NAME,
            sizes: pick(vec![32, 128], vec![32, 128, 512], vec![32, 128, 512, 2048]),
            default: 128,
            steady: steady::<HarrisList>,
            recovery: None,
            ab: Some(ab::<HarrisList>),
        },
        big(
            Hash::NAME,
            steady::<Hash>,
            Some(recovery::<Hash>),
            ab::<Hash>,
        ),
        big(
            SkipList::NAME,
            steady::<SkipList>,
            Some(recovery::<SkipList>),
            ab::<SkipList>,
        ),
        big(Bst::NAME, steady::<Bst>, Some(recovery::<Bst>), ab::<Bst>),
        // Another structure shaped like HarrisList: after its
        // `rooted_set!(Type, "name", bytes_per_key);` line, one entry here.
        Experiment {
            name: Array::NAME,
            sizes: pick(
                vec![2 << 10, 16 << 10],
                vec![2 << 10, 16 << 10, array_max],
                vec![2 << 10, 16 << 10, array_max],
            ),
            default: pick(vec![16 << 10], vec![array_max], vec![array_max])[0],
            steady: steady::<Array>,
            recovery: None,
            ab: None,
        },
    ]
}

// ---------------------------------------------------------------- keys, pools

/// YCSB's scrambled Zipfian over `[0, n)` (Gray et al., SIGMOD 1994, as in
/// YCSB's `ZipfianGenerator`, θ = 0.99; the rank hashed with FNV-1a so
/// that hot keys are spread over the key space).
struct Zipf {
    n: u64,
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
}

impl Zipf {
    fn new(n: u64) -> Zipf {
        let theta = 0.99;
        let zeta = |m: u64| (1..=m).map(|i| 1.0 / (i as f64).powf(theta)).sum::<f64>();
        let zetan = zeta(n);
        let zeta2 = zeta(2);
        Zipf {
            n,
            theta,
            zetan,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }

    fn rank(&self, u: f64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            0
        } else if uz < 1.0 + 0.5f64.powf(self.theta) {
            1
        } else {
            ((self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64)
                .min(self.n - 1)
        }
    }

    fn key(&self, rng: &mut Rng) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.rank(rng.unit()).to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h % self.n
    }
}

#[derive(Clone, Copy)]
enum Keys<'z> {
    Uniform(u64),
    Zipf(&'z Zipf),
}

impl Keys<'_> {
    fn next(self, rng: &mut Rng) -> u64 {
        match self {
            Keys::Uniform(r) => rng.below(r),
            Keys::Zipf(z) => z.key(rng),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Keys::Uniform(_) => "uniform",
            Keys::Zipf(_) => "zipf",
        }
    }
}

/// Whether `key` belongs to the initial half of the range.
fn member(key: u64) -> bool {
    let z = (key ^ 0x5851_f42d_4c95_7f2d).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (z >> 63) == 1
}

/// Space parameters for a structure of about `keys` keys.
fn config<S: BenchSet>(keys: u64, threads: usize, msb: bool) -> Config {
    Config {
        threads: threads + 2,
        roots: MAX_SHARDS,
        // The nodes with churn and per-thread sets; the fixed part holds
        // the bucket arrays and sentinels of 64 tables (12 MiB).
        heap_bytes: (keys * S::BYTES_PER_KEY + (96 << 20)).next_multiple_of(1 << 20),
        msb_sequences: msb,
    }
}

fn pool_size(cfg: &Config) -> u64 {
    2 * 4096 + Sp::required_bytes(cfg) + (1 << 20)
}

fn base_of<B: Backend>(pool: &Pool<B>) -> u64 {
    pool.data_offset().next_multiple_of(4096)
}

/// Inserts the members of `[lo, hi)` in ascending order of `i` (descending
/// keys, [`BenchSet::key`]) on `threads` threads (thread `t` takes the `i`
/// `≡ t mod threads`). Returns how many were inserted.
fn fill<S: BenchSet>(sp: &Sp<'_>, set: &S, lo: u64, hi: u64, threads: usize) -> u64 {
    std::thread::scope(|sc| {
        let ws: Vec<_> = (0..threads as u64)
            .map(|t| {
                sc.spawn(move || {
                    let mut h = sp.handle().expect("handle");
                    let mut n = 0;
                    for i in lo..hi {
                        if i % threads as u64 == t
                            && member(i)
                            && set.insert(&mut h, S::key(i)).expect("insert")
                        {
                            n += 1;
                        }
                    }
                    n
                })
            })
            .collect();
        ws.into_iter().map(|w| w.join().expect("fill thread")).sum()
    })
}

/// One operation of the workload: a `contains` with the read ratio, else an
/// insert or a remove with equal probability.
fn op<S: BenchSet>(set: &S, h: &mut H<'_, '_>, rng: &mut Rng, keys: Keys<'_>, upd: u64) {
    let k = S::key(keys.next(rng));
    let c = rng.below(200);
    if c < 2 * upd {
        if c & 1 == 0 {
            set.insert(h, k).expect("insert");
        } else {
            set.remove(h, k).expect("remove");
        }
    } else {
        set.contains(h, k).expect("contains");
    }
}

// ---------------------------------------------------------------- steady state

#[derive(Default, Clone, Copy)]
struct Tally {
    ops: u64,
    counts: FlushCounts,
    /// Wall-clock seconds (the longest thread).
    secs: f64,
    /// On-CPU seconds summed over the threads (NaN if unknown).
    cpu: f64,
    threads: usize,
}

impl Tally {
    /// Wall-clock throughput, M ops/s.
    fn mops(&self) -> f64 {
        self.ops as f64 / self.secs.max(1e-9) / 1e6
    }

    /// CPU-normalised throughput, M ops/s: what the threads would do with a
    /// core each (operations per on-CPU second of a thread, times the
    /// threads). Equal to [`Tally::mops`] on an idle machine; on a shared
    /// one it leaves out the time the threads spent preempted.
    fn cpu_mops(&self) -> f64 {
        self.ops as f64 / self.cpu.max(1e-9) * self.threads as f64 / 1e6
    }
}

/// The calling thread's on-CPU time in ns (`/proc/thread-self/schedstat`,
/// its first field), if the kernel reports it.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// The CPUs this process may run on (`sched_getaffinity`), ascending;
/// empty if the call fails.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: `cpu_set_t` is a plain bit array, valid when zeroed; the
    // kernel writes at most `size_of::<cpu_set_t>()` bytes into it, and
    // CPU_ISSET reads it with an index below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Pins the calling thread to `cpu` (`sched_setaffinity`, pid 0 = this
/// thread). Panics if the kernel refuses: a measurement that asked for
/// pinning must not silently run without it.
fn pin_to(cpu: usize) {
    // SAFETY: as in `allowed_cpus`; CPU_SET is given an index below
    // CPU_SETSIZE (`cpu` came from `allowed_cpus`).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    assert_eq!(
        rc,
        0,
        "sched_setaffinity to CPU {cpu}: {}",
        std::io::Error::last_os_error()
    );
}

/// Runs the workload on `threads` threads for `secs`. Thread `t` registers
/// its handle after thread `t − 1` (the same heap slot for the same thread
/// in every run) and, with `cpus`, runs on `cpus[t % cpus.len()]`.
#[allow(clippy::too_many_arguments)]
fn measure<S: BenchSet>(
    sp: &Sp<'_>,
    set: &S,
    threads: usize,
    upd: u64,
    keys: Keys<'_>,
    secs: f64,
    seed: u64,
    cpus: Option<&[usize]>,
) -> Tally {
    let stop = AtomicBool::new(false);
    let start = Barrier::new(threads + 1);
    let turn = AtomicUsize::new(0);
    std::thread::scope(|sc| {
        let ws: Vec<_> = (0..threads as u64)
            .map(|t| {
                let (stop, start, turn) = (&stop, &start, &turn);
                sc.spawn(move || {
                    if let Some(c) = cpus {
                        pin_to(c[t as usize % c.len()]);
                    }
                    while turn.load(Ordering::Acquire) != t as usize {
                        std::thread::yield_now();
                    }
                    let mut h = sp.handle().expect("handle");
                    turn.store(t as usize + 1, Ordering::Release);
                    let mut rng = Rng::new(seed.wrapping_mul(0x100_0000_01b3) ^ (t + 1) << 48);
                    start.wait();
                    let (c0, t0, cpu0) = (stats::thread_counts(), Instant::now(), thread_cpu_ns());
                    let mut ops = 0;
                    while !stop.load(Ordering::Relaxed) {
                        op(set, &mut h, &mut rng, keys, upd);
                        ops += 1;
                    }
                    let cpu = match (cpu0, thread_cpu_ns()) {
                        (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e9,
                        _ => f64::NAN,
                    };
                    Tally {
                        ops,
                        counts: stats::thread_counts() - c0,
                        secs: t0.elapsed().as_secs_f64(),
                        cpu,
                        threads: 1,
                    }
                })
            })
            .collect();
        start.wait();
        std::thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        ws.into_iter()
            .map(|w| w.join().expect("worker"))
            .fold(Tally::default(), |a, b| Tally {
                ops: a.ops + b.ops,
                counts: a.counts + b.counts,
                secs: a.secs.max(b.secs),
                cpu: a.cpu + b.cpu,
                threads: a.threads + b.threads,
            })
    })
}

struct SteadyRow {
    structure: &'static str,
    keys: u64,
    threads: usize,
    upd: u64,
    variant: Tracking,
    /// Median wall-clock throughput over the rounds, M ops/s.
    mops: f64,
    /// Median CPU-normalised throughput over the rounds ([`Tally::cpu_mops`]).
    cpu_mops: f64,
    /// Every round's wall-clock throughput.
    rounds: Vec<f64>,
    /// Every round's CPU-normalised throughput.
    cpu_rounds: Vec<f64>,
    /// Summed over the rounds.
    tally: Tally,
}

fn variants<S: BenchSet>() -> Vec<Tracking> {
    Tracking::ALL
        .into_iter()
        .filter(|&t| S::supports(t))
        .collect()
}

/// A variant's name in plot legends (the seed's names are too long for
/// the legend column).
fn short(t: Tracking) -> String {
    match t {
        Tracking::Eager => "Mirror (eager)".into(),
        t => format!("{t:?}"),
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The next seed of a steady-state round.
static SEEDS: AtomicU64 = AtomicU64::new(1);

/// The (threads, update %) points at size `n`: at the default size the
/// thread sweep at 20% updates and the update sweep at max threads; at the
/// other sizes max threads at 20%.
fn points(s: &Settings, e: &Experiment, n: u64) -> Vec<(usize, u64)> {
    let maxt = s.max_threads();
    if n == e.default {
        let mut p: Vec<(usize, u64)> = s.threads.iter().map(|&t| (t, 20)).collect();
        p.extend([0, 50, 100].map(|u| (maxt, u)));
        p
    } else {
        vec![(maxt, 20)]
    }
}

fn steady<S: BenchSet>(s: &Settings, e: &Experiment, rows: &mut Vec<SteadyRow>) {
    let vs = variants::<S>();
    let maxt = s.max_threads();
    for &n in &e.sizes {
        let points = points(s, e, n);
        let range = 2 * n;
        let dirs: Vec<tempfile::TempDir> = vs
            .iter()
            .map(|_| tempfile::tempdir_in(&s.dir).expect("a directory for the pool"))
            .collect();
        let cfgs: Vec<Config> = vs
            .iter()
            .map(|&t| config::<S>(n, maxt, t == Tracking::PseudoBitset))
            .collect();
        let pools: Vec<Pool<Pmem>> = dirs
            .iter()
            .zip(&cfgs)
            .map(|(d, c)| {
                Pool::create_with(d.path().join("s.pool"), LAYOUT, pool_size(c), s.pmem)
                    .expect("pool")
            })
            .collect();
        let spaces: Vec<Sp<'_>> = pools
            .iter()
            .zip(vs.iter().zip(&cfgs))
            .map(|(p, (&t, c))| {
                Space::create(p, base_of(p), c, OpenOptions::new(t)).expect("space")
            })
            .collect();
        let sets: Vec<S> = spaces
            .iter()
            .map(|sp| {
                let set = S::create(&mut sp.handle().expect("handle"), range).expect("create");
                fill(sp, &set, 0, range, maxt);
                set
            })
            .collect();
        for &(t, u) in &points {
            let mut acc: Vec<(Vec<f64>, Vec<f64>, Tally)> =
                vec![(Vec::new(), Vec::new(), Tally::default()); vs.len()];
            for _ in 0..s.reps {
                // A fresh key sequence for every round of every point (the
                // same for the variants of a round): a thread replaying a
                // sequence it ran before on the same structure would find
                // its inserts' keys present and its removes' absent.
                let seed = SEEDS.fetch_add(1, Ordering::Relaxed);
                for (i, sp) in spaces.iter().enumerate() {
                    let tl = measure(sp, &sets[i], t, u, Keys::Uniform(range), s.secs, seed, None);
                    acc[i].0.push(tl.mops());
                    acc[i].1.push(tl.cpu_mops());
                    let a = &mut acc[i].2;
                    a.ops += tl.ops;
                    a.counts += tl.counts;
                    a.secs += tl.secs;
                    a.cpu += tl.cpu;
                    a.threads = tl.threads;
                }
            }
            let (mirror, mirror_cpu) = (median(&acc[0].0), median(&acc[0].1));
            for (i, (rounds, cpu_rounds, tally)) in acc.into_iter().enumerate() {
                let row = SteadyRow {
                    structure: e.name,
                    keys: n,
                    threads: t,
                    upd: u,
                    variant: vs[i],
                    mops: median(&rounds),
                    cpu_mops: median(&cpu_rounds),
                    rounds,
                    cpu_rounds,
                    tally,
                };
                eprintln!(
                    "  {:<6} {:>9} keys {}T {:>3}% upd {:<24} {:8.3} M ops/s ({:.3}x Mirror), CPU-normalised {:8.3} ({:.3}x)",
                    e.name,
                    n,
                    t,
                    u,
                    vs[i].seed_name(),
                    row.mops,
                    row.mops / mirror,
                    row.cpu_mops,
                    row.cpu_mops / mirror_cpu
                );
                rows.push(row);
            }
        }
    }
}

fn print_steady(rows: &[SteadyRow]) {
    println!();
    println!("steady state (no crash): median over the rounds of the wall-clock and the CPU-normalised throughput (M ops/s), each relative to Mirror (eager) at the same point; persistence instructions per operation");
    println!(
        "{:<6} {:>9} {:>3} {:>4} {:<24} {:>9} {:>8} {:>9} {:>8} {:>8} {:>9}",
        "struct",
        "keys",
        "thr",
        "upd%",
        "variant",
        "Mops/s",
        "/Mirror",
        "Mops/cpu",
        "/Mirror",
        "pwb/op",
        "pfence/op"
    );
    for r in rows {
        let (pwb, pfence, _) = r.tally.counts.per_op(r.tally.ops);
        let (wall, cpu) = ratios(rows, r);
        println!(
            "{:<6} {:>9} {:>3} {:>4} {:<24} {:>9.3} {:>8.3} {:>9.3} {:>8.3} {:>8.3} {:>9.3}",
            r.structure,
            r.keys,
            r.threads,
            r.upd,
            r.variant.seed_name(),
            r.mops,
            wall,
            r.cpu_mops,
            cpu,
            pwb,
            pfence
        );
    }
}

/// `r`'s (wall-clock, CPU-normalised) throughput relative to Mirror's at
/// the same point.
fn ratios(rows: &[SteadyRow], r: &SteadyRow) -> (f64, f64) {
    rows.iter()
        .find(|m| {
            m.structure == r.structure
                && m.keys == r.keys
                && m.threads == r.threads
                && m.upd == r.upd
                && m.variant == Tracking::Eager
        })
        .map_or((f64::NAN, f64::NAN), |m| {
            (r.mops / m.mops, r.cpu_mops / m.cpu_mops)
        })
}

// ---------------------------------------------------------------- A/B

/// A pointer variant against Mirror at one point, round by round.
struct AbPoint {
    structure: &'static str,
    keys: u64,
    threads: usize,
    upd: u64,
    variant: Tracking,
    /// Each round's (variant, Mirror) measurement.
    rounds: Vec<(Tally, Tally)>,
    /// Keys each side held after the fill (the same by construction).
    filled: u64,
    /// Seconds the size's rounds took, fills included.
    group_secs: f64,
}

/// The geometric mean of ratios and its 95% t-interval (on the logs).
#[derive(Clone, Copy)]
struct Interval {
    geo: f64,
    lo: f64,
    hi: f64,
    /// `hi / geo − 1` (= `1 − lo / geo` on the log scale): the interval's
    /// relative half-width.
    half: f64,
}

/// Student's t, two-sided 95% (the 0.975 quantile), `df` degrees of
/// freedom: a table to 30, the Cornish–Fisher expansion above (within
/// 1e-3 there).
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => {
            let (z, v) = (1.959_964_f64, df as f64);
            z + (z.powi(3) + z) / (4.0 * v)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
        }
    }
}

/// The geometric mean of `ratios` (the finite, positive ones) with a 95%
/// t-interval on their logarithms: the ratios of the rounds are treated as
/// independent draws (each round has fresh pools), so the interval covers
/// the ratio one would get averaging over many placements.
fn geo_interval(ratios: &[f64]) -> Interval {
    let logs: Vec<f64> = ratios
        .iter()
        .filter(|r| r.is_finite() && **r > 0.0)
        .map(|r| r.ln())
        .collect();
    let n = logs.len();
    if n == 0 {
        return Interval {
            geo: f64::NAN,
            lo: f64::NAN,
            hi: f64::NAN,
            half: f64::INFINITY,
        };
    }
    let mean = logs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return Interval {
            geo: mean.exp(),
            lo: f64::NAN,
            hi: f64::NAN,
            half: f64::INFINITY,
        };
    }
    let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let h = t975(n - 1) * (var / n as f64).sqrt();
    Interval {
        geo: mean.exp(),
        lo: (mean - h).exp(),
        hi: (mean + h).exp(),
        half: h.exp_m1(),
    }
}

/// The bound: a pointer variant within 5% of Mirror.
const AB_TARGET: f64 = 0.95;

impl AbPoint {
    /// The CPU-normalised ratio of each round ([`Tally::cpu_mops`]).
    fn cpu_ratios(&self) -> Vec<f64> {
        self.rounds
            .iter()
            .map(|(v, m)| v.cpu_mops() / m.cpu_mops())
            .collect()
    }
    fn wall_ratios(&self) -> Vec<f64> {
        self.rounds
            .iter()
            .map(|(v, m)| v.mops() / m.mops())
            .collect()
    }
    fn ci(&self) -> Interval {
        geo_interval(&self.cpu_ratios())
    }
    /// Whether the interval lies above the bound, below it, or across.
    fn verdict(&self) -> &'static str {
        let c = self.ci();
        if c.lo >= AB_TARGET {
            "holds"
        } else if c.hi < AB_TARGET {
            "missed"
        } else {
            "undecided"
        }
    }
    /// `pwb`, `pfence` per operation of the variant's side and Mirror's.
    fn per_op(&self) -> ((f64, f64), (f64, f64)) {
        let sum = |side: fn(&(Tally, Tally)) -> Tally| {
            self.rounds
                .iter()
                .map(side)
                .fold((0, FlushCounts::default()), |a, t| {
                    (a.0 + t.ops, a.1 + t.counts)
                })
        };
        let ((vo, vc), (mo, mc)) = (sum(|r| r.0), sum(|r| r.1));
        let (vp, vf, _) = vc.per_op(vo);
        let (mp, mf, _) = mc.per_op(mo);
        ((vp, vf), (mp, mf))
    }
    fn label(&self) -> String {
        format!(
            "{} {} keys {}T {}% {}",
            self.structure,
            self.keys,
            self.threads,
            self.upd,
            short_variant(self.variant)
        )
    }
}

fn short_variant(t: Tracking) -> &'static str {
    match t {
        Tracking::Markable => "Markable",
        Tracking::Hybrid => "Hybrid",
        Tracking::Eager => "Mirror",
        _ => t.seed_name(),
    }
}

/// The A/B comparison of MarkableAtomicPointer and HybridAtomicPointer with
/// Mirror on `S` (see the module docs): per size, rounds of fresh pools
/// built and filled alike, measured in ABBA order with pinned threads,
/// until every point's interval is narrow enough.
fn ab<S: BenchSet>(s: &Settings, e: &Experiment, a: &AbSettings, out: &mut Vec<AbPoint>) {
    // Mirror first: arm 0 is the denominator of every ratio.
    let arms: Vec<Tracking> = [Tracking::Eager, Tracking::Markable, Tracking::Hybrid]
        .into_iter()
        .filter(|&t| S::supports(t))
        .collect();
    let maxt = s.max_threads();
    for &n in &e.sizes {
        let pts = points(s, e, n);
        let range = 2 * n;
        // The same configuration, hence pool size and layout, for every arm
        // (no msb_sequences: PseudoBitset is not an arm).
        let cfg = config::<S>(n, maxt, false);
        let mut group: Vec<AbPoint> = pts
            .iter()
            .flat_map(|&(t, u)| {
                arms[1..].iter().map(move |&v| AbPoint {
                    structure: e.name,
                    keys: n,
                    threads: t,
                    upd: u,
                    variant: v,
                    rounds: Vec::new(),
                    filled: 0,
                    group_secs: 0.0,
                })
            })
            .collect();
        let started = Instant::now();
        for round in 0..a.max_rounds {
            // ABBA: the arms forward in even rounds, backward in odd ones,
            // so that a linear drift weighs on every arm alike over a pair
            // of rounds (with three arms: A B C | C B A).
            let order: Vec<usize> = if round % 2 == 0 {
                (0..arms.len()).collect()
            } else {
                (0..arms.len()).rev().collect()
            };
            // Fresh pools every round, created and filled in the round's
            // order: each round draws a new placement of every arm's pages.
            let dir = tempfile::tempdir_in(&s.dir).expect("a directory for the pools");
            let pools: Vec<Pool<Pmem>> = order
                .iter()
                .map(|&i| {
                    let path = dir.path().join(format!("ab{i}.pool"));
                    Pool::create_with(path, LAYOUT, pool_size(&cfg), s.pmem).expect("pool")
                })
                .collect();
            let spaces: Vec<Sp<'_>> = pools
                .iter()
                .zip(&order)
                .map(|(p, &i)| {
                    Space::create(p, base_of(p), &cfg, OpenOptions::new(arms[i])).expect("space")
                })
                .collect();
            // One filling thread: the same allocations in the same order
            // on every arm.
            let mut filled = Vec::new();
            let fill_start = Instant::now();
            let sets: Vec<S> = spaces
                .iter()
                .map(|sp| {
                    let set = S::create(&mut sp.handle().expect("handle"), range).expect("create");
                    filled.push(fill(sp, &set, 0, range, 1));
                    set
                })
                .collect();
            let fill_secs = fill_start.elapsed().as_secs_f64();
            assert!(
                filled.windows(2).all(|w| w[0] == w[1]),
                "the arms were filled differently: {filled:?}"
            );
            for (p, &(t, u)) in pts.iter().enumerate() {
                let seed = SEEDS.fetch_add(1, Ordering::Relaxed);
                let mut tallies = vec![Tally::default(); arms.len()];
                for (k, &i) in order.iter().enumerate() {
                    tallies[i] = measure(
                        &spaces[k],
                        &sets[k],
                        t,
                        u,
                        Keys::Uniform(range),
                        a.secs,
                        seed,
                        a.cpus.as_deref(),
                    );
                }
                for j in 1..arms.len() {
                    let g = &mut group[p * (arms.len() - 1) + j - 1];
                    g.rounds.push((tallies[j], tallies[0]));
                    g.filled = filled[0];
                }
            }
            drop(sets);
            drop(spaces);
            drop(pools);
            drop(dir);
            let done = round + 1;
            let widest = group.iter().map(|g| g.ci().half).fold(0.0, f64::max);
            eprintln!(
                "  A/B {:<8} {:>9} keys round {:>2} ({}; fills {:.1} s): widest 95% interval ±{:.2}%, {:.0} s so far",
                e.name,
                n,
                done,
                order
                    .iter()
                    .map(|&i| short_variant(arms[i]))
                    .collect::<Vec<_>>()
                    .join(" "),
                fill_secs,
                widest * 100.0,
                started.elapsed().as_secs_f64()
            );
            if done >= a.min_rounds && done % 2 == 0 && widest <= a.half_width {
                break;
            }
        }
        let secs = started.elapsed().as_secs_f64();
        for mut g in group {
            g.group_secs = secs;
            out.push(g);
        }
    }
}

fn print_ab(points: &[AbPoint], a: &AbSettings) {
    println!();
    println!(
        "A/B, pointer variants against Mirror (eager): geometric mean over the rounds of the CPU-normalised ratio variant/Mirror, its 95% t-interval, the overhead 1 - ratio with its interval, the wall-clock ratio; pwb and pfence per operation of the variant | of Mirror; target: ratio >= {AB_TARGET} (interval above it: holds; below: missed; across: undecided); stop at ±{:.1}% or {} rounds",
        a.half_width * 100.0,
        a.max_rounds
    );
    println!(
        "{:<8} {:>9} {:>3} {:>4} {:<9} {:>6} {:>7} {:>17} {:>7} {:>22} {:>7} {:>15} {:>15} {:>9}",
        "struct",
        "keys",
        "thr",
        "upd%",
        "variant",
        "rounds",
        "ratio",
        "95% interval",
        "±%",
        "overhead % [95%]",
        "wall",
        "pwb/op V|M",
        "pfence/op V|M",
        "verdict"
    );
    for p in points {
        let c = p.ci();
        let w = geo_interval(&p.wall_ratios());
        let ((vp, vf), (mp, mf)) = p.per_op();
        println!(
            "{:<8} {:>9} {:>3} {:>4} {:<9} {:>6} {:>7.4} {:>17} {:>7.2} {:>22} {:>7.4} {:>15} {:>15} {:>9}",
            p.structure,
            p.keys,
            p.threads,
            p.upd,
            short_variant(p.variant),
            p.rounds.len(),
            c.geo,
            format!("[{:.4}, {:.4}]", c.lo, c.hi),
            c.half * 100.0,
            format!(
                "{:.2} [{:.2}, {:.2}]",
                (1.0 - c.geo) * 100.0,
                (1.0 - c.hi) * 100.0,
                (1.0 - c.lo) * 100.0
            ),
            w.geo,
            format!("{vp:.3}|{mp:.3}"),
            format!("{vf:.3}|{mf:.3}"),
            p.verdict()
        );
    }
}

/// The 5% target per structure and variant, on the A/B intervals.
fn ab_targets(points: &[AbPoint]) -> Vec<String> {
    let mut keys: Vec<(&str, Tracking)> = Vec::new();
    for p in points {
        if !keys.contains(&(p.structure, p.variant)) {
            keys.push((p.structure, p.variant));
        }
    }
    keys.into_iter()
        .map(|(st, v)| {
            let ps: Vec<&AbPoint> = points
                .iter()
                .filter(|p| p.structure == st && p.variant == v)
                .collect();
            let count = |x: &str| ps.iter().filter(|p| p.verdict() == x).count();
            let (holds, missed) = (count("holds"), count("missed"));
            let worst = ps
                .iter()
                .min_by(|a, b| a.ci().geo.total_cmp(&b.ci().geo))
                .expect("a point");
            let wc = worst.ci();
            format!(
                "[{}] {} within 5% of Mirror in steady state on {st} (A/B, 95% intervals): above 0.95x at {holds} of {} points, below at {missed}, across at {}; lowest {:.4}x [{:.4}, {:.4}] at {} keys/{}T/{}%",
                if holds == ps.len() {
                    "HOLDS"
                } else if missed > 0 {
                    "DOES NOT HOLD"
                } else {
                    "UNDECIDED"
                },
                v.seed_name(),
                ps.len(),
                ps.len() - holds - missed,
                wc.geo,
                wc.lo,
                wc.hi,
                worst.keys,
                worst.threads,
                worst.upd
            )
        })
        .collect()
}

fn ab_json(p: &AbPoint) -> String {
    let (c, w) = (p.ci(), geo_interval(&p.wall_ratios()));
    let ((vp, vf), (mp, mf)) = p.per_op();
    let r5 = |x: f64| (x * 1e5).round() / 1e5;
    let side = |f: fn(&(Tally, Tally)) -> f64| p.rounds.iter().map(f).map(r5).collect::<Vec<_>>();
    format!(
        "{{\"structure\":{},\"keys\":{},\"filled\":{},\"threads\":{},\"update_pct\":{},\"variant\":{},\"rounds\":{},\"ratio\":{:.5},\"ci95\":[{:.5},{:.5}],\"half_width\":{:.5},\"wall_ratio\":{:.5},\"wall_ci95\":[{:.5},{:.5}],\"verdict\":{},\"ratios\":{:?},\"wall_ratios\":{:?},\"variant_cpu_mops\":{:?},\"mirror_cpu_mops\":{:?},\"variant_mops\":{:?},\"mirror_mops\":{:?},\"variant_pwb_per_op\":{:.4},\"variant_pfence_per_op\":{:.4},\"mirror_pwb_per_op\":{:.4},\"mirror_pfence_per_op\":{:.4},\"size_seconds\":{:.1}}}",
        common::json_str(p.structure),
        p.keys,
        p.filled,
        p.threads,
        p.upd,
        common::json_str(p.variant.seed_name()),
        p.rounds.len(),
        c.geo,
        c.lo,
        c.hi,
        c.half,
        w.geo,
        w.lo,
        w.hi,
        common::json_str(p.verdict()),
        p.cpu_ratios().into_iter().map(r5).collect::<Vec<_>>(),
        p.wall_ratios().into_iter().map(r5).collect::<Vec<_>>(),
        side(|r| r.0.cpu_mops()),
        side(|r| r.1.cpu_mops()),
        side(|r| r.0.mops()),
        side(|r| r.1.mops()),
        vp,
        vf,
        mp,
        mf,
        p.group_secs
    )
}

/// Runs the A/B mode and writes `relax-ab.json` and `relax-ab.svg`.
fn run_ab(s: &Settings, a: &AbSettings, exps: &[Experiment], out: &Path) {
    let t0 = Instant::now();
    let mut points = Vec::new();
    for e in exps {
        let wanted = a
            .structures
            .as_ref()
            .map_or(true, |w| w.iter().any(|x| x == e.name));
        if let (Some(f), true) = (e.ab, wanted) {
            f(s, e, a, &mut points);
        }
    }
    print_ab(&points, a);
    let targets = ab_targets(&points);
    println!();
    println!("targets of issue 17 (reported, not asserted), on the A/B intervals above:");
    for t in &targets {
        println!("  {t}");
    }
    let body = format!(
        "{{\"bench\":\"relax-ab\",\"backend\":{},\"seconds_per_measurement\":{},\"half_width_target\":{},\"min_rounds\":{},\"max_rounds\":{},\"threads\":{:?},\"pinned_cpus\":{},\"fill_threads\":1,\"ratio_target\":{AB_TARGET},\"total_seconds\":{:.1},\"targets\":[{}],\"points\":[{}]}}\n",
        common::json_str(s.pmem.name()),
        a.secs,
        a.half_width,
        a.min_rounds,
        a.max_rounds,
        s.threads,
        a.cpus.as_ref().map_or("null".into(), |c| format!("{c:?}")),
        t0.elapsed().as_secs_f64(),
        targets.iter().map(|t| common::json_str(t)).collect::<Vec<_>>().join(","),
        points.iter().map(ab_json).collect::<Vec<_>>().join(",")
    );
    let json = out.join("relax-ab.json");
    std::fs::write(&json, body).expect("write results");
    let rows: Vec<svg::ForestRow> = points
        .iter()
        .map(|p| {
            let c = p.ci();
            svg::ForestRow {
                label: p.label(),
                series: usize::from(p.variant == Tracking::Hybrid),
                estimate: c.geo,
                lo: c.lo,
                hi: c.hi,
            }
        })
        .collect();
    let plot = out.join("relax-ab.svg");
    std::fs::write(
        &plot,
        svg::forest_plot(
            "RELAX steady state: variant / Mirror, 95% intervals (A/B rounds)",
            "throughput ratio to Mirror (CPU-normalised, geometric mean)",
            &rows,
            &["MarkableAtomicPointer", "HybridAtomicPointer"],
            &[(1.0, "1"), (AB_TARGET, "0.95")],
        ),
    )
    .expect("write a plot");
    println!();
    println!("wrote {}", json.display());
    println!("wrote {}", plot.display());
}

// ---------------------------------------------------------------- recovery

/// The times of one restart, each from the start of `Pool::open_with`.
#[derive(Clone, Copy, Default)]
struct Restart {
    pool_ms: f64,
    space_ms: f64,
    /// Structure open: Mirror's recovery (trace and copy) for Eager.
    open_ms: f64,
    /// The on-CPU time of the structure open (NaN if unknown).
    open_cpu_ms: f64,
    /// The end of the first operation.
    first_op_ms: f64,
}

impl Restart {
    fn json(&self) -> String {
        format!(
            "{{\"pool_open_ms\":{:.4},\"space_open_ms\":{:.4},\"structure_open_ms\":{:.4},\"structure_open_cpu_ms\":{:.4},\"first_op_ms\":{:.4}}}",
            self.pool_ms, self.space_ms, self.open_ms, self.open_cpu_ms, self.first_op_ms
        )
    }
}

struct ScanRow {
    keys: u64,
    inserted: u64,
    variant: Tracking,
    /// The restart with the median time to first op.
    restart: Restart,
    /// Every restart's time to first op, ms.
    all: Vec<f64>,
}

/// Restarts per RELAX variant and size in the scan.
const RESTARTS: usize = 3;

struct Timeline {
    /// The size crashed at (keys).
    n: u64,
    /// Its length (s).
    secs: f64,
    keys: &'static str,
    variant: Tracking,
    restart: Restart,
    run: Run,
    threads: usize,
}

const BIN: Duration = Duration::from_millis(100);

impl Timeline {
    fn mops(&self, bin: usize) -> f64 {
        self.run.bins[bin] as f64 / BIN.as_secs_f64() / 1e6
    }
    /// CPU-normalised M ops/s of a bin ([`Tally::cpu_mops`]), 0 for a bin
    /// without operations.
    fn cpu_mops(&self, bin: usize) -> f64 {
        let (ops, cpu) = (self.run.bins[bin], self.run.cpu[bin]);
        if ops == 0 || cpu <= 0.0 {
            0.0
        } else {
            ops as f64 / cpu * self.threads as f64 / 1e6
        }
    }
    /// Average M ops/s over the bins of the last `secs` seconds.
    fn tail(&self, secs: f64) -> f64 {
        let n = self.run.bins.len();
        let k = ((secs / BIN.as_secs_f64()) as usize).clamp(1, n);
        let ops: u64 = self.run.bins[n - k..].iter().sum();
        ops as f64 / (k as f64 * BIN.as_secs_f64()) / 1e6
    }
    /// CPU-normalised M ops/s over the bins of the last `secs` seconds.
    fn cpu_tail(&self, secs: f64) -> f64 {
        let n = self.run.bins.len();
        let k = ((secs / BIN.as_secs_f64()) as usize).clamp(1, n);
        let ops: u64 = self.run.bins[n - k..].iter().sum();
        let cpu: f64 = self.run.cpu[n - k..].iter().sum();
        ops as f64 / cpu.max(1e-9) * self.threads as f64 / 1e6
    }
    /// The first time (s) at which the throughput of a 1 s window reaches
    /// `share` of the tail throughput.
    fn time_to(&self, share: f64, tail: f64) -> Option<f64> {
        let w = 10usize.min(self.run.bins.len());
        (0..=self.run.bins.len() - w).find_map(|i| {
            let ops: u64 = self.run.bins[i..i + w].iter().sum();
            (ops as f64 / (w as f64 * BIN.as_secs_f64()) / 1e6 >= share * tail)
                .then(|| (i + w) as f64 * BIN.as_secs_f64())
        })
    }
    fn ops(&self) -> u64 {
        self.run.bins.iter().sum()
    }
}

struct RecoveryReport {
    structure: &'static str,
    scan: Vec<ScanRow>,
    timelines: Vec<Timeline>,
}

/// Opens the pool file, the space under `t` and the structure, and runs one
/// operation (a `contains` of a key drawn from `keys`), timing each step.
fn restart<S: BenchSet>(
    s: &Settings,
    path: &Path,
    t: Tracking,
    keys: Keys<'_>,
    then: impl FnOnce(&Sp<'_>, &S, Instant),
) -> Restart {
    let t0 = Instant::now();
    let ms = |t0: Instant| t0.elapsed().as_secs_f64() * 1e3;
    let pool = Pool::open_with(path, LAYOUT, s.pmem).expect("reopen the pool");
    let pool_ms = ms(t0);
    let sp = Space::open(&pool, base_of(&pool), OpenOptions::new(t)).expect("open the space");
    let space_ms = ms(t0);
    let cpu0 = thread_cpu_ns();
    let set = S::open(&sp).expect("open the structure");
    let open_ms = ms(t0);
    let open_cpu_ms = match (cpu0, thread_cpu_ns()) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e6,
        _ => f64::NAN,
    };
    {
        let mut h = sp.handle().expect("handle");
        let mut rng = Rng::new(0xf00d);
        let k = S::key(keys.next(&mut rng));
        set.contains(&mut h, k).expect("first operation");
    }
    let first_op_ms = ms(t0);
    then(&sp, &set, t0);
    Restart {
        pool_ms,
        space_ms,
        open_ms,
        open_cpu_ms,
        first_op_ms,
    }
}

/// Runs the workload on every thread until `dur` after `t0`, counting
/// completed operations in [`BIN`]s from `t0`.
fn timeline<S: BenchSet>(
    sp: &Sp<'_>,
    set: &S,
    t0: Instant,
    threads: usize,
    keys: Keys<'_>,
    dur: Duration,
) -> Run {
    let nbins = (dur.as_nanos() / BIN.as_nanos()) as usize;
    let bin_of = |e: Duration| (e.as_nanos() / BIN.as_nanos()) as usize;
    std::thread::scope(|sc| {
        let ws: Vec<_> = (0..threads as u64)
            .map(|t| {
                sc.spawn(move || {
                    let mut h = sp.handle().expect("handle");
                    let mut rng = Rng::new(0xabcd ^ (t + 1) << 32);
                    let mut run = Run {
                        bins: vec![0; nbins],
                        cpu: vec![0.0; nbins],
                        ..Run::default()
                    };
                    let c0 = stats::thread_counts();
                    let mut first = None;
                    // The on-CPU time is read when an operation ends in a
                    // new bin and charged to the bin the thread was in.
                    let (mut cur, mut cpu_at) = (bin_of(t0.elapsed()), thread_cpu_ns());
                    loop {
                        let e = t0.elapsed();
                        if e >= dur {
                            break;
                        }
                        if first.is_none() && e >= Duration::from_secs(1) {
                            first =
                                Some((run.bins.iter().sum::<u64>(), stats::thread_counts() - c0));
                        }
                        op(set, &mut h, &mut rng, keys, 20);
                        let b = bin_of(t0.elapsed());
                        if b < nbins {
                            run.bins[b] += 1;
                        }
                        if b != cur {
                            let now = thread_cpu_ns();
                            if let (Some(a), Some(n), true) = (cpu_at, now, cur < nbins) {
                                run.cpu[cur] += n.saturating_sub(a) as f64 / 1e9;
                            }
                            (cur, cpu_at) = (b, now);
                        }
                    }
                    if let (Some(a), Some(n), true) = (cpu_at, thread_cpu_ns(), cur < nbins) {
                        run.cpu[cur] += n.saturating_sub(a) as f64 / 1e9;
                    }
                    run.counts = stats::thread_counts() - c0;
                    run.first_sec = first.unwrap_or_else(|| (run.bins.iter().sum(), run.counts));
                    run
                })
            })
            .collect();
        let mut all = Run {
            bins: vec![0; nbins],
            cpu: vec![0.0; nbins],
            ..Run::default()
        };
        for w in ws {
            let r = w.join().expect("worker");
            for (x, y) in all.bins.iter_mut().zip(r.bins) {
                *x += y;
            }
            for (x, y) in all.cpu.iter_mut().zip(r.cpu) {
                *x += y;
            }
            all.counts += r.counts;
            all.first_sec.0 += r.first_sec.0;
            all.first_sec.1 += r.first_sec.1;
        }
        all
    })
}

/// What the threads of a timeline did.
#[derive(Default)]
struct Run {
    /// Operations completed in each bin after the restart.
    bins: Vec<u64>,
    /// On-CPU seconds of the threads in each bin.
    cpu: Vec<f64>,
    counts: FlushCounts,
    /// Operations and persistence instructions in the first second.
    first_sec: (u64, FlushCounts),
}

fn recovery<S: BenchSet>(s: &Settings) -> RecoveryReport {
    let threads = s.max_threads();
    let nmax = *s.scan.last().expect("a scan size");
    let range = 2 * nmax;
    let dir = tempfile::tempdir_in(&s.dir).expect("a directory for the pool");
    let image = dir.path().join("image.pool");
    let small = dir.path().join("small.pool");
    let cfg = config::<S>(nmax, threads, true);
    let mut scan = Vec::new();
    // Every variant but Eager, then Eager, whose incarnation the next fill
    // step continues in.
    let order: Vec<Tracking> = variants::<S>()
        .into_iter()
        .filter(|&t| t != Tracking::Eager)
        .chain([Tracking::Eager])
        .collect();
    let t = Instant::now();
    let mut inserted = {
        let pool = Pool::create_with(&image, LAYOUT, pool_size(&cfg), s.pmem).expect("pool");
        let sp = Space::create(
            &pool,
            base_of(&pool),
            &cfg,
            OpenOptions::new(Tracking::Eager),
        )
        .expect("space");
        let set = S::create(&mut sp.handle().expect("handle"), range).expect("create");
        fill(&sp, &set, 0, 2 * s.scan[0], threads)
    };
    eprintln!(
        "  {} filled to {inserted} keys (range {}) in {:.1} s",
        S::NAME,
        2 * s.scan[0],
        t.elapsed().as_secs_f64()
    );
    for (i, &n) in s.scan.iter().enumerate() {
        let mut added = 0;
        for &v in &order {
            if v == Tracking::Eager && i == 0 && s.scan.len() > 1 {
                // The smallest size's crash image, for its short timelines.
                std::fs::copy(&image, &small).expect("copy the crash image");
            }
            // Mirror restarts once (its recovery is long, and its
            // incarnation goes on to the next fill step); RELAX several
            // times, the median reported.
            let reps = if v == Tracking::Eager { 1 } else { RESTARTS };
            let mut rs = Vec::new();
            for _ in 0..reps {
                let r = restart::<S>(s, &image, v, Keys::Uniform(2 * n), |sp, set, _| {
                    if let (Tracking::Eager, Some(&next)) = (v, s.scan.get(i + 1)) {
                        let t = Instant::now();
                        added = fill(sp, set, 2 * n, 2 * next, threads);
                        eprintln!(
                            "  {} filled to {} keys (range {}) in {:.1} s",
                            S::NAME,
                            inserted + added,
                            2 * next,
                            t.elapsed().as_secs_f64()
                        );
                    }
                });
                rs.push(r);
            }
            let all: Vec<f64> = rs.iter().map(|r| r.first_op_ms).collect();
            rs.sort_by(|a, b| a.first_op_ms.total_cmp(&b.first_op_ms));
            let r = rs[rs.len() / 2];
            eprintln!(
                "  {:<6} {:>9} keys {:<24} first op {:9.3} ms after the restart (pool {:.3}, space {:.3}, structure {:.3}; median of {})",
                S::NAME,
                inserted,
                v.seed_name(),
                r.first_op_ms,
                r.pool_ms,
                r.space_ms - r.pool_ms,
                r.open_ms - r.space_ms,
                all.len()
            );
            scan.push(ScanRow {
                keys: n,
                inserted,
                variant: v,
                restart: r,
                all,
            });
        }
        inserted += added;
    }
    // The timelines: each restart from a copy of a crash image, the
    // largest size's for the configured time, the smallest's (if the scan
    // has two sizes) for a third of it.
    let mut timelines = Vec::new();
    let mut images = vec![(nmax, image.clone(), s.timeline)];
    if s.scan.len() > 1 {
        images.insert(0, (s.scan[0], small.clone(), s.timeline / 3.0));
    }
    let run = dir.path().join("run.pool");
    for (n, img, secs) in images {
        let zipf = Zipf::new(2 * n);
        let dur = Duration::from_secs_f64(secs);
        for keys in [Keys::Uniform(2 * n), Keys::Zipf(&zipf)] {
            for &v in [Tracking::Eager]
                .iter()
                .chain(order.iter().filter(|&&t| t != Tracking::Eager))
            {
                std::fs::copy(&img, &run).expect("copy the crash image");
                let mut out = None;
                let r = restart::<S>(s, &run, v, keys, |sp, set, t0| {
                    out = Some(timeline(sp, set, t0, threads, keys, dur));
                });
                std::fs::remove_file(&run).expect("remove the run's pool");
                let tl = Timeline {
                    n,
                    secs,
                    keys: keys.name(),
                    variant: v,
                    restart: r,
                    run: out.expect("the timeline ran"),
                    threads,
                };
                let tail = (secs / 6.0).max(0.5);
                eprintln!(
                    "  {:<6} {:>9} keys {:<8} {:<24} first op {:8.3} ms, tail {:.3} M ops/s (CPU-normalised {:.3}), {} ops",
                    S::NAME,
                    n,
                    tl.keys,
                    v.seed_name(),
                    r.first_op_ms,
                    tl.tail(tail),
                    tl.cpu_tail(tail),
                    tl.ops()
                );
                timelines.push(tl);
            }
        }
        if img != image {
            std::fs::remove_file(&img).expect("remove a crash image");
        }
    }
    RecoveryReport {
        structure: S::NAME,
        scan,
        timelines,
    }
}

/// Least squares `y = a + b x`: `(a, b, r²)`.
fn fit(pts: &[(f64, f64)]) -> (f64, f64, f64) {
    let n = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |(a, b), p| (a + p.0, b + p.1));
    let (mx, my) = (sx / n, sy / n);
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = pts.iter().map(|p| (p.1 - my).powi(2)).sum();
    let b = if sxx > 0.0 { sxy / sxx } else { f64::NAN };
    let r2 = if sxx > 0.0 && syy > 0.0 {
        sxy * sxy / (sxx * syy)
    } else {
        f64::NAN
    };
    (my - b * mx, b, r2)
}

/// The steady-state summary per structure and variant, and the issue's
/// 5% target for MarkableAtomicPointer and HybridAtomicPointer.
fn steady_summary(rows: &[SteadyRow], targets: &mut Vec<String>) -> Vec<String> {
    let mut json = Vec::new();
    let mut structures: Vec<&str> = rows.iter().map(|r| r.structure).collect();
    structures.dedup();
    println!();
    println!("steady state, CPU-normalised ratio to Mirror over every point of a structure (min / median / max), and the points below 0.95 (wall-clock median in brackets):");
    for st in structures {
        for t in Tracking::ALL.into_iter().filter(|&t| t != Tracking::Eager) {
            let rs: Vec<(f64, &SteadyRow)> = rows
                .iter()
                .filter(|r| r.structure == st && r.variant == t)
                .map(|r| (ratios(rows, r).1, r))
                .collect();
            if rs.is_empty() {
                continue;
            }
            let v: Vec<f64> = rs.iter().map(|p| p.0).collect();
            let wall: Vec<f64> = rs.iter().map(|p| ratios(rows, p.1).0).collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let below: Vec<String> = rs
                .iter()
                .filter(|p| p.0 < 0.95)
                .map(|(x, r)| {
                    format!(
                        "{}k/{}T/{}%: {:.3}",
                        r.keys as f64 / 1e3,
                        r.threads,
                        r.upd,
                        x
                    )
                })
                .collect();
            let line = format!(
                "  {:<6} {:<24} {:.3} / {:.3} / {:.3} [{:.3}]   below 0.95 at {} of {} points{}",
                st,
                t.seed_name(),
                lo,
                median(&v),
                hi,
                median(&wall),
                below.len(),
                v.len(),
                if below.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", below.join(", "))
                }
            );
            println!("{line}");
            if matches!(t, Tracking::Markable | Tracking::Hybrid) {
                targets.push(format!(
                    "[{}] {} within 5% of Mirror in steady state on {}: {} of {} points at >= 0.95x, CPU-normalised (min {:.3}x, median {:.3}x; wall-clock median {:.3}x)",
                    if below.is_empty() { "HOLDS" } else { "DOES NOT HOLD" },
                    t.seed_name(),
                    st,
                    v.len() - below.len(),
                    v.len(),
                    lo,
                    median(&v),
                    median(&wall)
                ));
            }
            json.push(format!(
                "{{\"structure\":{},\"variant\":{},\"min_ratio\":{:.4},\"median_ratio\":{:.4},\"max_ratio\":{:.4},\"median_wall_ratio\":{:.4},\"points\":{},\"points_below_0.95\":{}}}",
                common::json_str(st),
                common::json_str(t.seed_name()),
                lo,
                median(&v),
                hi,
                median(&wall),
                v.len(),
                below.len()
            ));
        }
    }
    json
}

fn steady_json(rows: &[SteadyRow]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            let (pwb, pfence, psync) = r.tally.counts.per_op(r.tally.ops);
            format!(
                "{{\"structure\":{},\"keys\":{},\"threads\":{},\"update_pct\":{},\"variant\":{},\"mops\":{:.5},\"rounds_mops\":{:?},\"ratio_to_mirror\":{:.4},\"cpu_mops\":{:.5},\"cpu_rounds_mops\":{:?},\"cpu_ratio_to_mirror\":{:.4},\"ops\":{},\"pwb_per_op\":{:.4},\"pfence_per_op\":{:.4},\"psync_per_op\":{:.5}}}",
                common::json_str(r.structure),
                r.keys,
                r.threads,
                r.upd,
                common::json_str(r.variant.seed_name()),
                r.mops,
                r.rounds.iter().map(|x| (x * 1e5).round() / 1e5).collect::<Vec<_>>(),
                ratios(rows, r).0,
                r.cpu_mops,
                r.cpu_rounds
                    .iter()
                    .map(|x| (x * 1e5).round() / 1e5)
                    .collect::<Vec<_>>(),
                ratios(rows, r).1,
                r.tally.ops,
                pwb,
                pfence,
                psync
            )
        })
        .collect()
}

fn steady_plots(rows: &[SteadyRow], s: &Settings, out: &Path) -> Vec<PathBuf> {
    let mut written = Vec::new();
    let mut structures: Vec<&str> = rows.iter().map(|r| r.structure).collect();
    structures.dedup();
    let maxt = s.max_threads();
    for st in structures {
        let of = |t: Tracking| {
            rows.iter()
                .filter(move |r| r.structure == st && r.variant == t)
        };
        let default = rows
            .iter()
            .filter(|r| r.structure == st && r.upd == 0)
            .map(|r| r.keys)
            .next()
            .unwrap_or(0);
        let present: Vec<Tracking> = Tracking::ALL
            .into_iter()
            .filter(|&t| of(t).next().is_some())
            .collect();
        let mk = |x: &dyn Fn(&SteadyRow) -> Option<f64>| -> Vec<svg::Series> {
            present
                .iter()
                .map(|&t| svg::Series {
                    name: short(t),
                    points: of(t).filter_map(|r| x(r).map(|x| (x, r.mops))).collect(),
                })
                .collect()
        };
        let plots = [
            (
                "threads",
                format!("{st}: throughput vs threads ({default} keys, 20% updates)"),
                "threads",
                mk(&|r| (r.keys == default && r.upd == 20).then_some(r.threads as f64)),
            ),
            (
                "size",
                format!("{st}: throughput vs size ({maxt} threads, 20% updates)"),
                "keys",
                mk(&|r| (r.threads == maxt && r.upd == 20).then_some(r.keys as f64)),
            ),
            (
                "updates",
                format!("{st}: throughput vs update ratio ({default} keys, {maxt} threads)"),
                "updates (%)",
                mk(&|r| (r.keys == default && r.threads == maxt).then_some(r.upd as f64)),
            ),
        ];
        for (what, title, xl, mut series) in plots {
            for se in &mut series {
                se.points.sort_by(|a, b| a.0.total_cmp(&b.0));
                se.points.dedup_by(|a, b| a.0 == b.0);
            }
            let path = out.join(format!("relax-{what}-{st}.svg"));
            std::fs::write(
                &path,
                svg::line_chart(&title, xl, "throughput (M ops/s)", &series),
            )
            .expect("write a plot");
            written.push(path);
        }
    }
    written
}

fn recovery_report(
    rep: &RecoveryReport,
    s: &Settings,
    out: &Path,
    targets: &mut Vec<String>,
) -> (Vec<String>, Vec<PathBuf>) {
    let st = rep.structure;
    let mut written = Vec::new();
    let mut present: Vec<Tracking> = Vec::new();
    for r in &rep.scan {
        if !present.contains(&r.variant) {
            present.push(r.variant);
        }
    }
    present.sort_by_key(|t| Tracking::ALL.iter().position(|x| x == t));
    let sizes: Vec<u64> = {
        let mut v: Vec<u64> = rep.scan.iter().map(|r| r.keys).collect();
        v.dedup();
        v
    };
    println!();
    println!("{st}: time from restart (Pool::open_with) to the first completed operation, ms; Mirror's structure open is its recovery");
    print!("{:>10} {:>10}", "keys", "inserted");
    for t in &present {
        print!(" {:>22}", t.seed_name());
    }
    println!(" {:>16} {:>12}", "Mirror recovery", "(on-CPU)");
    let mut eager_pts = Vec::new();
    let mut eager_cpu = Vec::new();
    let mut lazy_max: f64 = 0.0;
    for &n in &sizes {
        let rows: Vec<&ScanRow> = rep.scan.iter().filter(|r| r.keys == n).collect();
        print!("{:>10} {:>10}", n, rows[0].inserted);
        for t in &present {
            let r = rows.iter().find(|r| r.variant == *t).expect("a scan row");
            print!(" {:>22.3}", r.restart.first_op_ms);
            if *t != Tracking::Eager {
                lazy_max = lazy_max.max(r.restart.first_op_ms);
            }
        }
        let e = rows
            .iter()
            .find(|r| r.variant == Tracking::Eager)
            .expect("Mirror's row");
        let rec = e.restart.open_ms - e.restart.space_ms;
        eager_pts.push((e.inserted as f64, rec * 1e6));
        eager_cpu.push((e.inserted as f64, e.restart.open_cpu_ms * 1e6));
        println!(" {:>16.1} {:>12.1}", rec, e.restart.open_cpu_ms);
    }
    let (a, b, r2) = fit(&eager_pts);
    let (ca, cb, cr2) = fit(&eager_cpu);
    println!(
        "  Mirror's recovery fitted as a + b·keys: b = {:.1} ns per key, a = {:.2} ms, r² = {:.4} (on-CPU time: b = {:.1} ns per key, a = {:.2} ms, r² = {:.4})",
        b,
        a / 1e6,
        r2,
        cb,
        ca / 1e6,
        cr2
    );
    println!("  the slowest RELAX first operation over every size: {lazy_max:.3} ms");
    for t in present.iter().filter(|&&t| t != Tracking::Eager) {
        let worst = rep
            .scan
            .iter()
            .filter(|r| r.variant == *t)
            .map(|r| r.restart.first_op_ms)
            .fold(0.0, f64::max);
        targets.push(format!(
            "[{}] {st}: {} completes its first operation within 1 ms of the restart at every size up to {} keys: at most {worst:.3} ms (median of {RESTARTS} restarts per size)",
            if worst <= 1.0 { "HOLDS" } else { "DOES NOT HOLD" },
            t.seed_name(),
            sizes.last().copied().unwrap_or(0)
        ));
    }
    targets.push(format!(
        "[{}] {st}: Mirror's recovery grows linearly in the size: {b:.1} ns per key, intercept {:.2} ms, r^2 = {r2:.4} over {} sizes (linear = r^2 >= 0.98; on-CPU: {cb:.1} ns per key, r^2 = {cr2:.4})",
        if r2 >= 0.98 { "HOLDS" } else { "DOES NOT HOLD" },
        a / 1e6,
        sizes.len()
    ));
    let mut json = vec![format!(
        "\"eager_fit\":{{\"ns_per_key\":{:.3},\"intercept_ms\":{:.4},\"r2\":{:.5}}},\"eager_cpu_fit\":{{\"ns_per_key\":{:.3},\"intercept_ms\":{:.4},\"r2\":{:.5}}},\"lazy_first_op_max_ms\":{:.4}",
        b,
        a / 1e6,
        r2,
        cb,
        ca / 1e6,
        cr2,
        lazy_max
    )];
    json.push(format!(
        "\"scan\":[{}]",
        rep.scan
            .iter()
            .map(|r| format!(
                "{{\"keys\":{},\"inserted\":{},\"variant\":{},\"restart\":{},\"first_op_ms_all\":{:?}}}",
                r.keys,
                r.inserted,
                common::json_str(r.variant.seed_name()),
                r.restart.json(),
                r.all
            ))
            .collect::<Vec<_>>()
            .join(",")
    ));
    // Timelines.
    let mut tl_json = Vec::new();
    let mut crashed: Vec<(u64, f64)> = Vec::new();
    for t in &rep.timelines {
        if !crashed.contains(&(t.n, t.secs)) {
            crashed.push((t.n, t.secs));
        }
    }
    for (n, secs) in crashed {
        println!();
        println!(
        "{st}: after a crash at {n} keys (range {}), {} threads, 20% updates, {secs} s: throughput every 100 ms from the restart; tail = the last {:.1} s",
        2 * n,
        s.max_threads(),
        (secs / 6.0).max(0.5)
    );
        println!(
            "{:<8} {:<24} {:>10} {:>10} {:>10} {:>8} {:>10} {:>8} {:>9} {:>10} {:>11} {:>10}",
            "keys",
            "variant",
            "1st op ms",
            "Mops 1st s",
            "tail Mops",
            "/Mirror",
            "tail /cpu",
            "/Mirror",
            "90% at s",
            "pwb/op 1s",
            "pwb/op rest",
            "pfence/op"
        );
        for dist in ["uniform", "zipf"] {
            let tls: Vec<&Timeline> = rep
                .timelines
                .iter()
                .filter(|t| t.keys == dist && t.n == n)
                .collect();
            let Some(mirror) = tls.iter().find(|t| t.variant == Tracking::Eager) else {
                continue;
            };
            let tail_secs = (secs / 6.0).max(0.5);
            let (mirror_tail, mirror_cpu) = (mirror.tail(tail_secs), mirror.cpu_tail(tail_secs));
            for t in &tls {
                let (tail, cpu_tail) = (t.tail(tail_secs), t.cpu_tail(tail_secs));
                let first = t.run.first_sec;
                let (pwb1, _, _) = first.1.per_op(first.0);
                let rest = (t.ops() - first.0, t.run.counts - first.1);
                let (pwbr, _, _) = rest.1.per_op(rest.0);
                let (pwb, pfence, _) = t.run.counts.per_op(t.ops());
                let to90 = t.time_to(0.9, tail);
                println!(
                "{:<8} {:<24} {:>10.3} {:>10.3} {:>10.3} {:>8.3} {:>10.3} {:>8.3} {:>9} {:>10.2} {:>11.2} {:>10.2}",
                dist,
                t.variant.seed_name(),
                t.restart.first_op_ms,
                first.0 as f64 / 1e6,
                tail,
                tail / mirror_tail,
                cpu_tail,
                cpu_tail / mirror_cpu,
                to90.map_or("-".into(), |x| format!("{x:.1}")),
                pwb1,
                pwbr,
                pfence
            );
                tl_json.push(format!(
                "{{\"crashed_at_keys\":{n},\"seconds\":{secs},\"keys\":{},\"variant\":{},\"restart\":{},\"bin_ms\":100,\"ops_per_bin\":{:?},\"cpu_seconds_per_bin\":{:?},\"ops_first_second\":{},\"tail_seconds\":{},\"tail_mops\":{:.5},\"tail_ratio_to_mirror\":{:.4},\"tail_cpu_mops\":{:.5},\"tail_cpu_ratio_to_mirror\":{:.4},\"seconds_to_90pct_of_tail\":{},\"pwb_per_op\":{:.4},\"pfence_per_op\":{:.4},\"pwb_per_op_first_second\":{:.4},\"pwb_per_op_after\":{:.4}}}",
                common::json_str(dist),
                common::json_str(t.variant.seed_name()),
                t.restart.json(),
                t.run.bins,
                t.run.cpu.iter().map(|c| (c * 1e4).round() / 1e4).collect::<Vec<_>>(),
                first.0,
                tail_secs,
                tail,
                tail / mirror_tail,
                cpu_tail,
                cpu_tail / mirror_cpu,
                to90.map_or("null".into(), |x| format!("{x:.2}")),
                pwb,
                pfence,
                pwb1,
                pwbr
            ));
            }
            for (suffix, what, cpu) in [
                ("", "throughput (M ops/s)", false),
                ("-cpu", "CPU-normalised throughput (M ops/s)", true),
            ] {
                let series: Vec<svg::Series> = tls
                    .iter()
                    .map(|t| svg::Series {
                        name: short(t.variant),
                        points: (0..t.run.bins.len())
                            .map(|i| {
                                let y = if cpu { t.cpu_mops(i) } else { t.mops(i) };
                                ((i + 1) as f64 * BIN.as_secs_f64(), y)
                            })
                            .collect(),
                    })
                    .collect();
                let title = format!(
                    "{st}, crash at {n} keys, {dist}, {} threads, 20% upd.",
                    s.max_threads()
                );
                let path = out.join(format!("relax-recovery-{st}-{n}-{dist}{suffix}.svg"));
                std::fs::write(
                    &path,
                    svg::line_chart_xy(&title, "seconds after the restart", what, &series),
                )
                .expect("write a plot");
                written.push(path);
            }
        }
    }
    json.push(format!("\"timelines\":[{}]", tl_json.join(",")));
    let series = vec![
        svg::Series {
            name: "wall-clock".into(),
            points: eager_pts
                .iter()
                .map(|&(n, ns)| (n / 1e6, ns / 1e9))
                .collect(),
        },
        svg::Series {
            name: "on-CPU".into(),
            points: eager_cpu
                .iter()
                .map(|&(n, ns)| (n / 1e6, ns / 1e9))
                .collect(),
        },
    ];
    let path = out.join(format!("relax-eager-{st}.svg"));
    std::fs::write(
        &path,
        svg::line_chart_xy(
            &format!("{st}: Mirror's recovery time vs size ({b:.0} ns per key)"),
            "keys (millions)",
            "recovery (s)",
            &series,
        ),
    )
    .expect("write a plot");
    written.push(path);
    (json, written)
}

fn main() {
    let s = common::settings_or_exit("relax", Settings::from_env());
    println!();
    println!(
        "relax (seed 002, Chapter 8): backend {}, pool files in {}, steady points {} s x {} rounds, threads {:?}, recovery scan {:?} keys, timelines {} s",
        s.pmem.name(),
        s.dir.display(),
        s.secs,
        s.reps,
        s.threads,
        s.scan,
        s.timeline
    );
    let out = common::out_dir();
    let exps = experiments(&s);
    if let Some(a) = &s.ab {
        println!(
            "A/B mode: {} s per measurement, rounds {}..={} until every 95% interval is within ±{:.1}%, workers pinned to {}",
            a.secs,
            a.min_rounds,
            a.max_rounds,
            a.half_width * 100.0,
            a.cpus
                .as_ref()
                .map_or("no CPU (PERDURE_RELAX_AB_PIN=0)".into(), |c| format!("CPUs {c:?}"))
        );
        run_ab(&s, a, &exps, &out);
        return;
    }
    let mut written = Vec::new();
    let mut json = Vec::new();
    let mut targets = Vec::new();
    if s.steady {
        let mut rows = Vec::new();
        for e in &exps {
            (e.steady)(&s, e, &mut rows);
        }
        print_steady(&rows);
        let summary = steady_summary(&rows, &mut targets);
        json.push(format!("\"steady\":[{}]", steady_json(&rows).join(",")));
        json.push(format!("\"steady_summary\":[{}]", summary.join(",")));
        written.extend(steady_plots(&rows, &s, &out));
    }
    if s.recovery {
        let mut recs = Vec::new();
        for e in &exps {
            if let Some(f) = e.recovery {
                let rep = f(&s);
                let (j, w) = recovery_report(&rep, &s, &out, &mut targets);
                recs.push(format!(
                    "{{\"structure\":{},{}}}",
                    common::json_str(e.name),
                    j.join(",")
                ));
                written.extend(w);
            }
        }
        json.push(format!("\"recovery\":[{}]", recs.join(",")));
    }
    let body = format!(
        "{{\"bench\":\"relax\",\"backend\":{},\"seconds_per_point\":{},\"rounds\":{},\"threads\":{:?},\"timeline_seconds\":{},\"targets\":[{}],{}}}\n",
        common::json_str(s.pmem.name()),
        s.secs,
        s.reps,
        s.threads,
        s.timeline,
        targets.iter().map(|t| common::json_str(t)).collect::<Vec<_>>().join(","),
        json.join(",")
    );
    let path = out.join("relax.json");
    std::fs::write(&path, body).expect("write results");
    println!();
    println!("targets of issue 6 (reported, not asserted), on the numbers above:");
    for t in &targets {
        println!("  {t}");
    }
    println!();
    println!("wrote {}", path.display());
    for p in written {
        println!("wrote {}", p.display());
    }
}
