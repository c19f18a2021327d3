//! Redo-PTM's configuration ([`Config`]: the thread count, which fixes the
//! `N + 1` replicas, and the sizes of the volatile structures of
//! Algorithm 1), the member of the family that runs ([`Variant`], seed §5),
//! and the counters threads keep ([`RedoStats`]).

use super::state::DirtyLines;
use super::wordset::WordSet;
use crate::error::PtmError;
use crate::layout::{self, PoolConfig};
use crate::sti;

/// Which member of the Redo-PTM family a [`RedoPtm`](crate::RedoPtm) runs (seed §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Redo-PTM: Algorithms 1–3.
    #[default]
    Redo,
    /// RedoTimed-PTM: only the first two replicas for a window of about
    /// four copy times, with backoff.
    Timed,
    /// RedoOpt-PTM: RedoTimed-PTM with store and flush aggregation,
    /// non-temporal copies and the full-flush switch.
    Opt,
}

impl Variant {
    /// All three, in the seed's order.
    pub const ALL: [Variant; 3] = [Variant::Redo, Variant::Timed, Variant::Opt];

    /// The seed's name of the construction.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Redo => "Redo-PTM",
            Variant::Timed => "RedoTimed-PTM",
            Variant::Opt => "RedoOpt-PTM",
        }
    }

    /// Whether step {5} starts with the two-replica window.
    pub fn timed(self) -> bool {
        self != Variant::Redo
    }

    /// Whether the RedoOpt optimizations are on.
    pub fn opt(self) -> bool {
        self == Variant::Opt
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Variant {
    /// Dirty-line sets for the replicas of this variant: RedoOpt keeps lines
    /// distinct and switches to a full flush past a tenth of the replica
    /// ("postponed `pwb`s with the full-flush switch", [`super::variant`]).
    pub(crate) fn dirty_lines(self, cap: usize, replica_len: u64) -> DirtyLines {
        if self.opt() {
            let tenth = (replica_len / perdure_pm::CACHE_LINE as u64 / 10).max(1);
            let full_after = usize::try_from(tenth).unwrap_or(usize::MAX).min(cap);
            DirtyLines::distinct(cap, full_after)
        } else {
            DirtyLines::new(cap)
        }
    }
}

/// Redo-PTM's configuration: the thread count (persistent: it fixes the
/// number of replicas) and the sizes of the volatile structures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `N`: thread ids `0..N` and `N + 1` replicas. At most 254. Used by
    /// `RedoPtm::create`; `RedoPtm::open` takes it from the pool.
    pub threads: usize,
    /// `RSIZE`: pre-allocated `State`s per thread (2..=4096, the 12-bit
    /// index of a ticket). A replica more than about `RSIZE` commits of one
    /// thread behind is copied rather than replayed; the ring holds
    /// `N·RSIZE` entries (rounded up to a power of two). Each state costs
    /// `40 + 16·N` bytes.
    pub states_per_thread: usize,
    /// Capacity of each thread's log arena, in entries of 24 bytes. A
    /// transaction (one combined batch) with more stores is not replayable:
    /// other replicas copy instead.
    pub log_entries_per_thread: usize,
    /// Dirty cache lines a replica tracks one by one before it falls back to
    /// writing back the whole range they span.
    pub dirty_lines_per_replica: usize,
    /// `MAX_READ_TRIES` of Algorithm 2.
    pub max_read_tries: usize,
    /// Which member of the family runs: Redo-PTM, RedoTimed-PTM or
    /// RedoOpt-PTM (see [`Variant`]). Volatile: a pool opens with any.
    pub variant: Variant,
    /// RedoTimed/RedoOpt: the window during which an update may lock only
    /// `combs[0]` and `combs[1]`. `None` (the default): four times the
    /// measured copy time of a replica, as in the seed.
    pub timed_window: Option<std::time::Duration>,
}

impl Default for Config {
    /// 8 threads, 4096 states each, 64 Ki log entries per thread, 16 Ki
    /// dirty lines per replica, 10 read tries: about 20 MB of volatile
    /// memory (41 MB for RedoOpt-PTM), of which the states take 5.5 MB.
    ///
    /// 4096 states (the most a ticket's index can name; the published code
    /// has 2096) because a replica that falls behind while one thread is
    /// descheduled must still be replayable when it is next taken: with 64,
    /// two threads on SPS copied the whole replica (10^6 words) once in
    /// 200–1,000 transactions, because the replica was more than the ring
    /// behind or a `State` it needed had been reused. With fewer threads
    /// than 8 the states cost less (`N·RSIZE·(40 + 16·N)` bytes: 0.6 MB for
    /// 2 threads); with many more, lower it (19 MB for 16 threads, 72 MB
    /// for 32). Measurements: `docs/bench/redo-2t.md`.
    fn default() -> Config {
        Config {
            threads: 8,
            states_per_thread: 4096,
            log_entries_per_thread: 64 << 10,
            dirty_lines_per_replica: 16 << 10,
            max_read_tries: 10,
            variant: Variant::Redo,
            timed_window: None,
        }
    }
}

impl Config {
    /// A small configuration for tests and examples: 4 threads, 16 states,
    /// 4 Ki log entries, 1 Ki dirty lines (about 0.5 MB).
    pub fn small() -> Config {
        Config {
            threads: 4,
            states_per_thread: 16,
            log_entries_per_thread: 4 << 10,
            dirty_lines_per_replica: 1 << 10,
            max_read_tries: 10,
            variant: Variant::Redo,
            timed_window: None,
        }
    }

    pub(crate) fn ring_len(&self) -> usize {
        (self.threads * self.states_per_thread).next_power_of_two()
    }

    /// The volatile memory a PTM with this configuration allocates when it
    /// is opened, in bytes (the persistent replicas are in the pool).
    ///
    /// `N·(24·log + 8) + N·RSIZE·(40 + 16·N) + 8·ring + (N+1)·(128·(N+1) +
    /// 8·dirty + 96) + 64·N`, where `ring` is `N·RSIZE` rounded up to a power
    /// of two; RedoOpt adds its hash sets, `N·16·pow2(2·log) +
    /// (N+1)·16·pow2(2·dirty)`. Heap bookkeeping comes on top.
    pub fn volatile_bytes(&self) -> u64 {
        let n = self.threads as u64;
        let arenas = n * (24 * self.log_entries_per_thread as u64 + 8);
        let states = n * self.states_per_thread as u64 * (40 + 16 * n);
        let ring = 8 * self.ring_len() as u64;
        let combs = (n + 1) * (128 * (n + 1) + 8 * self.dirty_lines_per_replica as u64 + 96);
        let per_thread = 64 * n;
        let sets = if self.variant.opt() {
            n * WordSet::bytes_for(2 * self.log_entries_per_thread)
                + (n + 1) * WordSet::bytes_for(2 * self.dirty_lines_per_replica)
        } else {
            0
        };
        arenas + states + ring + combs + per_thread + sets
    }
}

impl PoolConfig for Config {
    fn threads_mut(&mut self) -> &mut usize {
        &mut self.threads
    }

    fn validate(&self) -> Result<(), PtmError> {
        layout::validate_threads(self.threads, "threads + 1")?;
        if self.states_per_thread < 2 || self.states_per_thread > sti::MAX_IDX {
            return Err(PtmError::Config(format!(
                "states_per_thread is {}, must be in 2..={} (12-bit state indices; a thread needs one state besides the one it last committed)",
                self.states_per_thread,
                sti::MAX_IDX
            )));
        }
        layout::validate_ranges(&[
            (
                "log_entries_per_thread",
                self.log_entries_per_thread,
                1,
                1 << 28,
            ),
            (
                "dirty_lines_per_replica",
                self.dirty_lines_per_replica,
                1,
                1 << 28,
            ),
        ])
    }
}

/// Counters of what the threads of a PTM did, for tests and benchmarks
/// (Table 1's breakdown needs them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedoStats {
    /// Successful `cur_comb` CASes.
    pub commits: u64,
    /// Attempts that simulated and were rolled back (lost CAS, or `cur_comb`
    /// moved during the simulation).
    pub rollbacks: u64,
    /// Replicas brought up to date by replaying logs.
    pub replays: u64,
    /// States whose logs those replays applied (over `replays`: how far
    /// behind a replayed replica was, on average).
    pub replayed_states: u64,
    /// Replicas copied from the designated one; the four counters below
    /// split them by why the replica could not be replayed.
    pub copies: u64,
    /// Copies of a replica whose head was `INVALID` (or not before the
    /// designated state): a replay, copy or simulation on it was abandoned,
    /// or a rollback could not be undone (an overflowed log), or null
    /// recovery invalidated it.
    pub copies_invalid: u64,
    /// Copies of a replica more than the ring's length behind, or whose
    /// ring slots had been lapped by later commits.
    pub copies_lapped: u64,
    /// Copies of a replica one of whose pending `State`s had been reused by
    /// its owner (more than `states_per_thread` commits of that thread
    /// since).
    pub copies_reused: u64,
    /// Copies of a replica one of whose pending logs overflowed its arena
    /// or had been overwritten in it (`log_entries_per_thread`).
    pub copies_log: u64,
    /// Closures run for other threads.
    pub helped: u64,
    /// Read-only transactions that ran on the designated replica.
    pub reads_direct: u64,
    /// Read-only transactions that published themselves (Alg. 2 {1}).
    pub reads_published: u64,
    /// Log entries of committed states (RedoOpt merges repeated stores to
    /// one entry).
    pub log_entries: u64,
    /// RedoTimed/RedoOpt: backoffs while `combs[0]` and `combs[1]` were
    /// taken.
    pub backoffs: u64,
    /// RedoTimed/RedoOpt: updates whose window ran out, so that they locked
    /// among all `N + 1` replicas.
    pub timed_fallbacks: u64,
}
