//! The constructions the shared suites run on: [`Construction`] says how to
//! create, open and count one; [`ptm_suite!`](crate::common::ptm_suite)
//! instantiates a suite's `fn name<C: Construction>()`s as `#[test]`s per
//! construction (`cx_ptm::`, `cx_puc::`, `redo::`, `timed::`, `opt::`).

use perdure_pm::{Backend, Pool};
use perdure_ptm::Front;
use perdure_ptm::{
    cx, redo, CxPtm, CxPuc, PVar, Ptm, PtmError, RedoOptPtm, RedoPtm, RedoTimedPtm, Transaction,
    TxRead,
};

/// The counter at root 0, allocated on first use.
pub fn counter<T: Transaction>(tx: &T) -> PVar<u64> {
    if tx.root(0) == 0 {
        let c = tx.alloc_zeroed(8).expect("room for a counter");
        tx.set_root(0, c);
    }
    PVar::at(tx.root(0))
}

/// Increments the counter at root 0; returns the new value.
pub fn increment<P: Ptm>(p: &P) -> u64 {
    p.update_tx(|tx| {
        let c = counter(tx);
        let n = tx.get(c) + 1;
        tx.set(c, n);
        n
    })
    .unwrap()
}

/// One construction of the crate, as the suites see it.
pub trait Construction: 'static {
    /// The name used in messages.
    const NAME: &'static str;
    /// Its prefix in PERDURE-CHECK row names (`cx-ptm`, `redotimed`, ...).
    const TAG: &'static str;
    /// The `kind` of its errors (the header it reads).
    const KIND: &'static str;
    /// Its replicas for `N` threads.
    fn replicas(threads: usize) -> usize;
    /// The PTM on backend `B`.
    type P<B: Backend>: Ptm + Front + Send + Sync + 'static;
    /// Formats `pool` with the small test configuration for `threads`
    /// threads (and `max_read_tries` read tries) and opens it.
    fn create_with<B: Backend>(
        pool: Pool<B>,
        threads: usize,
        max_read_tries: usize,
    ) -> Result<Self::P<B>, PtmError>;
    /// Opens `pool` (null recovery) with the small configuration (the
    /// thread count comes from the pool).
    fn open<B: Backend>(pool: Pool<B>) -> Result<Self::P<B>, PtmError>;
    /// Opens `pool`, or creates one for `threads` threads if it holds none.
    fn open_or_create<B: Backend>(pool: Pool<B>, threads: usize) -> Result<Self::P<B>, PtmError>;
    /// Successful `cur_comb` CASes.
    fn commits<B: Backend>(p: &Self::P<B>) -> u64;
    /// Attempts rolled back after a lost `cur_comb` CAS (CX: none counted,
    /// 0).
    fn rollbacks<B: Backend>(p: &Self::P<B>) -> u64;
    /// Whether an update issues at most one `psync` even under contention
    /// (CX: its own CAS's or none; Redo may sync again to collect).
    const ONE_PSYNC_PER_UPDATE: bool;
    /// Whether a read counts in exactly one of `reads_direct` and
    /// `reads_published` (Redo counts a read that published itself and then
    /// succeeded on its own in both).
    const READ_COUNTED_ONCE: bool;
    /// Read-only transactions that ran on the designated replica.
    fn reads_direct<B: Backend>(p: &Self::P<B>) -> u64;
    /// Read-only transactions that published themselves.
    fn reads_published<B: Backend>(p: &Self::P<B>) -> u64;
    /// `N`, from the pool.
    fn threads<B: Backend>(p: &Self::P<B>) -> usize;
    /// The transactional region's length.
    fn region_len<B: Backend>(p: &Self::P<B>) -> u64;
    /// Its pool.
    fn pool<B: Backend>(p: &Self::P<B>) -> &Pool<B>;
    /// The raw `cur_comb` word.
    fn cur_comb_word<B: Backend>(p: &Self::P<B>) -> u64;
    /// The construction's own counters after `updates` single-thread
    /// increments and one read (`ptm_basic`'s counter).
    fn check_counter_stats<B: Backend>(p: &Self::P<B>, updates: u64);

    /// The small test configuration for `threads` threads.
    fn create<B: Backend>(pool: Pool<B>, threads: usize) -> Result<Self::P<B>, PtmError> {
        Self::create_with(pool, threads, 10)
    }
    /// On a fresh volatile pool of `size` bytes.
    fn volatile<B: Backend>(threads: usize, size: u64, backend: B) -> Self::P<B> {
        let pool = Pool::volatile("ptm-test", size, backend).unwrap();
        Self::create(pool, threads).unwrap()
    }
}

fn cx_config(threads: usize, max_read_tries: usize) -> cx::Config {
    cx::Config {
        max_read_tries,
        ..super::cx_config(threads)
    }
}

fn redo_config(threads: usize, max_read_tries: usize) -> redo::Config {
    redo::Config {
        max_read_tries,
        ..super::config(threads)
    }
}

/// CX-PTM.
pub struct Cx;
/// CX-PUC, its plain value a `u64` the suites do not touch.
pub struct Puc;
/// Redo-PTM.
pub struct Redo;
/// RedoTimed-PTM.
pub struct Timed;
/// RedoOpt-PTM.
pub struct Opt;

/// `commits`, `reads_published`, `threads` from the construction's stats.
macro_rules! counted {
    () => {
        fn commits<B: Backend>(p: &Self::P<B>) -> u64 {
            p.stats().commits
        }
        fn reads_published<B: Backend>(p: &Self::P<B>) -> u64 {
            p.stats().reads_published
        }
        fn reads_direct<B: Backend>(p: &Self::P<B>) -> u64 {
            p.stats().reads_direct
        }
        fn threads<B: Backend>(p: &Self::P<B>) -> usize {
            p.threads()
        }
        fn region_len<B: Backend>(p: &Self::P<B>) -> u64 {
            p.region_len()
        }
        fn pool<B: Backend>(p: &Self::P<B>) -> &Pool<B> {
            p.pool()
        }
        fn cur_comb_word<B: Backend>(p: &Self::P<B>) -> u64 {
            p.cur_comb_word()
        }
    };
}

/// The CX family: one impl per construction; `$init` is CX-PUC's initial
/// plain value.
macro_rules! cx_construction {
    ($c:ident, $name:literal, $tag:literal, $p:ident $(<$t:ty>, $init:expr)?) => {
        impl Construction for $c {
            const NAME: &'static str = $name;
            const KIND: &'static str = $name;
            const TAG: &'static str = $tag;
            const ONE_PSYNC_PER_UPDATE: bool = true;
            const READ_COUNTED_ONCE: bool = true;
            fn rollbacks<B: Backend>(_: &Self::P<B>) -> u64 {
                0
            }
            fn replicas(n: usize) -> usize {
                2 * n
            }
            type P<B: Backend> = $p<B $(, $t)?>;
            fn create_with<B: Backend>(
                pool: Pool<B>,
                n: usize,
                r: usize,
            ) -> Result<Self::P<B>, PtmError> {
                $p::create(pool, &cx_config(n, r) $(, $init)?)
            }
            fn open<B: Backend>(pool: Pool<B>) -> Result<Self::P<B>, PtmError> {
                $p::open(pool, &cx_config(1, 10))
            }
            fn open_or_create<B: Backend>(pool: Pool<B>, n: usize) -> Result<Self::P<B>, PtmError> {
                $p::open_or_create(pool, &cx_config(n, 10) $(, $init)?)
            }
            fn check_counter_stats<B: Backend>(p: &Self::P<B>, updates: u64) {
                cx_counter_stats(p.stats(), updates)
            }
            counted!();
        }
    };
}
cx_construction!(Cx, "CX-PTM", "cx-ptm", CxPtm);
cx_construction!(Puc, "CX-PUC", "cx-puc", CxPuc<u64>, 0);

/// One thread alternates between two replicas: each update runs the other
/// replica's last closure and its own; nobody helps.
fn cx_counter_stats(s: cx::CxStats, updates: u64) {
    assert_eq!(s.commits, updates);
    assert!(s.applied <= 2 * updates, "{s:?}");
    assert!(s.reads_direct >= 1);
    assert_eq!(s.helped, 0);
}

/// No rollback alone; every commit after the first brings its replica up
/// to date; the trait's event counters are the same statistics, by name.
fn redo_counter_stats<P: Ptm>(p: &P, s: redo::RedoStats, updates: u64) {
    assert_eq!(s.commits, updates);
    assert_eq!(s.rollbacks, 0);
    assert!(s.reads_direct >= 1);
    let ev = Ptm::events(p);
    let get = |k: &str| ev.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    assert_eq!(get("copies"), Some(s.copies));
    assert_eq!(get("replays"), Some(s.replays));
    assert_eq!(get("rollbacks"), Some(0));
    assert!(
        s.copies + s.replays >= updates - 1,
        "every commit after the first brings its replica up to date: {s:?}"
    );
}

/// The Redo family: one impl per wrapper.
macro_rules! redo_construction {
    ($c:ident, $name:literal, $tag:literal, $p:ident) => {
        impl Construction for $c {
            const NAME: &'static str = $name;
            const TAG: &'static str = $tag;
            const KIND: &'static str = "Redo-PTM";
            const ONE_PSYNC_PER_UPDATE: bool = false;
            const READ_COUNTED_ONCE: bool = false;
            fn rollbacks<B: Backend>(p: &$p<B>) -> u64 {
                p.stats().rollbacks
            }
            fn replicas(n: usize) -> usize {
                n + 1
            }
            type P<B: Backend> = $p<B>;
            fn create_with<B: Backend>(
                pool: Pool<B>,
                n: usize,
                r: usize,
            ) -> Result<$p<B>, PtmError> {
                $p::create(pool, &redo_config(n, r))
            }
            fn open<B: Backend>(pool: Pool<B>) -> Result<$p<B>, PtmError> {
                $p::open(pool, &redo_config(1, 10))
            }
            fn open_or_create<B: Backend>(pool: Pool<B>, n: usize) -> Result<$p<B>, PtmError> {
                $p::open_or_create(pool, &redo_config(n, 10))
            }
            fn check_counter_stats<B: Backend>(p: &Self::P<B>, updates: u64) {
                redo_counter_stats(p, p.stats(), updates)
            }
            counted!();
        }
    };
}
redo_construction!(Redo, "Redo-PTM", "redo", RedoPtm);
redo_construction!(Timed, "RedoTimed-PTM", "redotimed", RedoTimedPtm);
redo_construction!(Opt, "RedoOpt-PTM", "redoopt", RedoOptPtm);

/// For each `fn name<C: Construction>()` listed, one `#[test]` per
/// construction: `cx_ptm::name`, `cx_puc::name`, `redo::name`,
/// `timed::name`, `opt::name`. `ptm_suite!(no_puc: ...)` leaves CX-PUC out.
/// `ptm_suite!(on run: ...)` lists `fn name<P: Ptm>(name: &str, p: &P)`s
/// instead, each run as `run::<C>(name)`.
#[allow(unused_macros)]
macro_rules! ptm_suite {
    (no_puc: $($name:ident),* $(,)?) => {
        $crate::common::ptms::ptm_suite!(@mod cx_ptm, Cx, $($name),*);
        $crate::common::ptms::ptm_suite!(@mod redo, Redo, $($name),*);
        $crate::common::ptms::ptm_suite!(@mod timed, Timed, $($name),*);
        $crate::common::ptms::ptm_suite!(@mod opt, Opt, $($name),*);
    };
    (@mod $m:ident, $c:ident, $($name:ident),*) => {
        mod $m {
            $( #[test] fn $name() { super::$name::<$crate::common::ptms::$c>() } )*
        }
    };
    (on $run:ident: $($name:ident),* $(,)?) => {
        $crate::common::ptms::ptm_suite!(@on $run, cx_ptm, Cx, $($name),*);
        $crate::common::ptms::ptm_suite!(@on $run, cx_puc, Puc, $($name),*);
        $crate::common::ptms::ptm_suite!(@on $run, redo, Redo, $($name),*);
        $crate::common::ptms::ptm_suite!(@on $run, timed, Timed, $($name),*);
        $crate::common::ptms::ptm_suite!(@on $run, opt, Opt, $($name),*);
    };
    (@on $run:ident, $m:ident, $c:ident, $($name:ident),*) => {
        mod $m {
            $( #[test] fn $name() { super::$run::<$crate::common::ptms::$c>(super::$name) } )*
        }
    };
    ($($name:ident),* $(,)?) => {
        $crate::common::ptms::ptm_suite!(no_puc: $($name),*);
        $crate::common::ptms::ptm_suite!(@mod cx_puc, Puc, $($name),*);
    };
}
#[allow(unused_imports)]
pub(crate) use ptm_suite;
