//! Redo-PTM (seed §5, Algorithms 1–3): a wait-free persistent transactional
//! memory built from `N + 1` replicas, Herlihy's combining consensus and
//! physical redo/undo logs; and its two variants, RedoTimed-PTM and
//! RedoOpt-PTM (§5, "Timed variant", "Additional optimizations"), run by
//! the same code with [`Config::variant`] ([`Variant`]; the wrappers
//! [`RedoTimedPtm`] and [`RedoOptPtm`] fix it). All three share the
//! persistent layout.
//!
//! | file | seed |
//! | --- | --- |
//! | `redo/mod.rs` | the layout, creation and null recovery, the public API |
//! | [`state`] | Algorithm 1: `State`, `Combined`, the write-set log |
//! | `redo/update.rs` | Algorithm 3, `applyUpdate` |
//! | `redo/read.rs` | Algorithm 2, `applyRead` |
//! | `redo/tx.rs` | what closures get: [`Tx`], [`ReadTx`] (the annotated loads and stores); RedoOpt's store aggregation |
//! | [`variant`] | RedoTimed-PTM's two-replica window and backoff; RedoOpt-PTM's copies, flushes and hash sets; the wrappers |
//!
//! ## Persistent layout (pool offsets, from the pool's data offset `D`)
//!
//! | offset | content |
//! | --- | --- |
//! | `D` | header line ([`perdure_pm::meta`]): magic, version, threads `N`, replica length, replicas' offset, pool size; checksum |
//! | `D + 64` | `cur_comb` (its own line): a [`SeqTidIdx`](crate::sti) whose `idx` names the replica holding the latest committed state |
//! | `D + 4096 + r·L`, `r = 0..=N` | replica `r` (`L` bytes, page aligned): the transactional region, see [`crate::replica`] |
//!
//! Everything else — `Combined` instances, `stMatrix`, the ring, announce and
//! request arrays, logs — is volatile (§5: "all other components of
//! Redo-PTM are located in transient memory").
//!
//! ## An update (Algorithm 3; steps as in the seed)
//!
//! 1. {1} publish the closure in `req[tid]` and announce it;
//! 2. {2} read `cur_comb` into `cur` and the designated replica's `head`
//!    (`tail`, the ticket of the latest state);
//! 3. {3} `cpySt`: this thread's next `State` (`stMatrix[tid][lastIdx]`)
//!    becomes ticket `(tail.seq + 1, tid, lastIdx)` with the applied
//!    requests and results of `tail`'s state; re-check `cur_comb`;
//! 4. {4} help append `tail` to the ring (the bounded queue of states);
//! 5. {5} take a `Combined` exclusively with the strong trylock (kept across
//!    the two attempts);
//! 6. {6} bring its replica up to `tail`: replay the redo logs of the states
//!    in the ring after its `head`, or — if one is missing, reused or
//!    overflowed — copy the designated replica under a shared lock;
//! 7. {7} run every announced, unapplied request on the replica (the thread's
//!    own and other threads'), logging each store;
//! 8. write back every dirty line of the replica, publish the log, set
//!    `head`, {8} downgrade the lock, `pfence`;
//! 9. {9} CAS `cur_comb` from `cur` to `(tail.seq + 1, tid, replica)`. On
//!    success: `pwb(cur_comb)`, `psync`, release the previously designated
//!    replica, append the ticket to the ring, return the result. On failure:
//!    undo the log (L38), and try once more from 2.
//!
//! After two attempts (or if no `Combined` could be taken) the thread's
//! request has been applied by another thread (Herlihy: once `cur_comb` has
//! advanced twice after the announcement, a winner's scan saw it), and the
//! result is read from the designated state (L43–L50). perdure checks that
//! rather than assuming it: the state must name the request as applied, or
//! the thread tries again (this only repeats while others keep committing,
//! so it does not change the progress bound).
//!
//! A read-only transaction (Algorithm 2) runs its closure on the designated
//! replica under a shared lock; after `max_read_tries` failures (each one
//! means `cur_comb` moved) it publishes itself like an update, so an
//! updater runs it, and collects the result.
//!
//! ## Persistence: at most two fences per transaction
//!
//! An update that commits on its first attempt issues one `pfence` (before
//! the `cur_comb` CAS, ordering the replica's write-backs before it; left
//! out where a successful locked CAS completes write-backs, as on x86 with
//! [`perdure_pm::Pmem`]) and one `psync` (after `pwb(cur_comb)`), and a
//! `pwb` per dirty line. A lost CAS costs its `pfence` again on the second
//! attempt; a doomed attempt is abandoned before its fence when `cur_comb`
//! has already moved. Read-only transactions issue no fence unless the state
//! they read is not yet known to be durable.
//!
//! Two orderings matter beyond the seed's pseudo-code, and perdure enforces
//! both:
//!
//! * **Release after durability.** A replica stops being designated when the
//!   next CAS succeeds, but until the new `cur_comb` is durable a crash can
//!   still recover to it. The winner therefore releases the previously
//!   designated replica (`downgradeUnlock`, L31) only after its `pwb(cur_comb)`
//!   and `psync`; the seed releases it right after the CAS, which would let
//!   another writer overwrite the replica a crash would recover to.
//! * **A durability watermark, not the ring, tells readers to sync.** The
//!   seed's reader skips `pwb(cur_comb); psync()` when the ring already holds
//!   the state it read (Alg. 2 L13–L16), but helpers append to the ring
//!   (Alg. 3 L17) before the winner's `pwb`. perdure keeps a volatile
//!   `durable` sequence, raised after each `psync` of `cur_comb`; a
//!   transaction returns only once the state it read or committed is below
//!   it, syncing itself otherwise.
//!
//! Dirty lines belong to the replica (`DirtyLines`, see [`state`]), so lines a
//! writer wrote and then rolled back are written back by whoever next
//! designates the replica.
//!
//! ## Null recovery
//!
//! Opening a pool reads `cur_comb`, checks the replica it designates, and
//! starts from it: its `head` becomes the ticket of a fresh initial state
//! (seq as persisted), every other replica's `head` is
//! [`crate::sti::INVALID`] (volatile marking only; nothing is
//! written), and the first update that takes one of them copies. Nothing
//! in-flight at the crash survives: transactions that had not returned either
//! committed durably (they are in the designated replica) or did not.
//!
//! ## Helping and the lifetime of closures
//!
//! A helper runs other threads' closures (§5 {7}). It reads `req[i]`,
//! publishes it as its hazard pointer, and re-reads `req[i]`; only if it is
//! unchanged does it call the closure. A thread frees its old request only
//! when no hazard pointer names it, so a helper still simulating a request
//! whose owner has long returned (its attempt is then doomed: `cur_comb`
//! moved past it) still runs a live closure. Each thread keeps at most `N`
//! retired requests.
//!
//! ## Progress
//!
//! An update takes at most two attempts of bounded length (a simulation
//! runs each announced closure once; a replay is bounded by the ring; a copy
//! by the replica), then collects its result; a read takes at most
//! `max_read_tries + 2` tries, then collects. Allocation and free are a few
//! transactional loads and stores of the region allocator, so they are
//! wait-free with the transaction (§5). Two things fall outside the seed's
//! bound: publishing a transaction boxes its closure (one or two allocations
//! from the global allocator, which is not wait-free), and the collection
//! re-reads `cur_comb` until the state it finds names the request as applied
//! (immediately, unless no `Combined` could be locked in a scan — the
//! counting argument says one is free at every instant, but a scan can miss
//! it — in which case the thread tries again, which can only repeat while
//! other threads keep taking locks, i.e. make progress).
//!
//! ## Deviations from the seed, and why
//!
//! * `applied[i]` holds the sequence number of thread `i`'s last applied
//!   request instead of a bit compared with a toggling `announce[i]`: a
//!   reader that published its read (Alg. 2 {1}) may still succeed on its
//!   own in the remaining iterations and start a new transaction before any
//!   updater ran the read; a second toggle would then make the new
//!   transaction look applied.
//! * The log of each thread's states is one circular arena (see
//!   [`state`]), so the volatile footprint is fixed.
//! * The root table lives inside each replica (region offsets 0..512), not in
//!   the header: a root written by a transaction must change atomically with
//!   the replica it belongs to.
//! * The seed's `pwb(curComb)` before the CAS (L27) is not issued: with the
//!   release-after-durability rule, the base a transaction builds on is
//!   already durable or its winner is still holding the replica a crash would
//!   recover to.
//! * Release after durability and the durability watermark (above).
//! * {6} (`applyRedologs`) leaves a held replica whose head is *after* the
//!   attempt's `tail` untouched and ends the attempt (the attempt's `cur`
//!   is stale: the replica was designated and superseded since). The seed
//!   leaves this case to `applyRedologs`, whose only ways out are a replay
//!   and a copy; perdure used to mark the replica invalid and try the copy,
//!   which failed (`cur_comb` had moved) and left the replica invalid, so
//!   the next attempt copied the whole object: with two threads on SPS,
//!   0.3–1.2% of transactions copied 10^6 words, which cost RedoTimed and
//!   RedoOpt up to 10× their throughput (`make bench` prints copies per
//!   transaction).
//!
//! ## Volatile footprint
//!
//! Fixed at open, see [`Config::volatile_bytes`]: the log arenas
//! (`N × log_entries_per_thread × 24` bytes) dominate; the default
//! configuration uses about 14 MB (Redo-PTM, RedoTimed-PTM) or 35 MB
//! (RedoOpt-PTM, whose hash sets add about 21 MB), under the 64 MB bound
//! issue 5 sets (the published C++ RedoOpt allocates about 1 GB).
//!
//! ## Checked by
//!
//! * `tests/redo_basic.rs`: sequential semantics, allocation, roots, typed
//!   results, nesting, panics, handles, reopening a pool file;
//! * `tests/redo_concurrent.rs`: 2–4 threads (sums, results to the right
//!   thread, whole-transaction reads, allocating transactions);
//! * `tests/redo_fences.rs`: 1 `pfence` + 1 `psync` per update, none per
//!   read, counted with [`perdure_pm::stats`];
//! * `tests/redo_crash.rs`: full crashes on the Px86 simulator, every image
//!   of every persistence event (sampled beyond a limit); it fails without
//!   the write-back of dirty lines, without the `pfence`, or without the
//!   `psync` after the CAS;
//! * `tests/shuttle_redo.rs`: random and PCT schedules, with and without
//!   crashes;
//! * `tests/redo_bad_input.rs`: damaged pools give typed errors;
//! * `tests/redo_variants.rs`: what the variants change, each against
//!   Redo-PTM (store aggregation, the panic undo across a batch, write-backs
//!   per distinct line, the full-flush switch, non-temporal copies, the
//!   two-replica window and its expiry);
//! * `tests/redo_breakdown.rs`: the Table 1 counters ([`crate::breakdown`]);
//! * `tests/shuttle_explore_ptm.rs`: the crash explorer (feature `check`,
//!   `src/scenarios.rs`) with a counter, a queue, a set and a map;
//! * `tests/shuttle_mutants_ptm.rs`, `tests/mutants_ptm.rs` (`MUTANTS.md`):
//!   mutants of this module's steps, each caught — among them releasing the
//!   superseded replica before the `psync`, caught by holding the winner in
//!   the window between its CAS and its `psync` (shuttle's schedules had
//!   not hit it).
//!
//! The basic, concurrent, fence and crash suites run once per variant
//! (`redo::`, `timed::`, `opt::` in the test names).
//!
//! ## What covers the variants
//!
//! The TLA+ model, the proofs, the traces (`traces/ptm/`) and the explorer
//! scenarios cover Redo-PTM's protocol; the variants change only which
//! replica is locked (Timed) and how a replica is logged, copied and written
//! back (Opt), which the crash, shuttle and variant tests above check.

mod read;
pub mod state;
mod tx;
mod update;
pub mod variant;

pub use tx::{ReadTx, Tx};
pub use variant::{RedoOptPtm, RedoTimedPtm, Variant};

use self::state::{Combined, DirtyLines, LogArena, State};
use self::variant::WordSet;
use crate::error::PtmError;
use crate::registry::{self, Current, Kind, TidPool};
use crate::replica::{self, word, ALLOC_BASE, MIN_REPLICA};
use crate::sti::{self, INVALID};
use crate::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use crate::tx::{PWord, Ptm};
use perdure_pm::{meta, Backend, PmWord, Pool};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Arc;

const KIND: &str = "Redo-PTM";
/// Magic of a Redo-PTM header.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDREDO01");
/// The format version this build writes and reads.
pub const VERSION: u64 = 1;
/// `cur_comb`'s offset from the header.
const CUR_COMB: u64 = 64;
/// The first replica's offset from the header.
const REPLICAS: u64 = 4096;
/// Replica lengths are multiples of this.
const REPLICA_GRANULE: u64 = 4096;

/// Redo-PTM's configuration: the thread count (persistent: it fixes the
/// number of replicas) and the sizes of the volatile structures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `N`: thread ids `0..N` and `N + 1` replicas. At most 254. Used by
    /// [`RedoPtm::create`]; [`RedoPtm::open`] takes it from the pool.
    pub threads: usize,
    /// `RSIZE`: pre-allocated `State`s per thread (2..=4096). A replica more
    /// than about `RSIZE` commits of one thread behind is copied rather than
    /// replayed.
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
    /// RedoOpt-PTM (see [`variant`]). Volatile: a pool opens with any.
    pub variant: Variant,
    /// RedoTimed/RedoOpt: the window during which an update may lock only
    /// `combs[0]` and `combs[1]`. `None` (the default): four times the
    /// measured copy time of a replica, as in the seed.
    pub timed_window: Option<std::time::Duration>,
}

impl Default for Config {
    /// 8 threads, 64 states each, 64 Ki log entries per thread, 16 Ki dirty
    /// lines per replica, 10 read tries: about 13 MB of volatile memory.
    fn default() -> Config {
        Config {
            threads: 8,
            states_per_thread: 64,
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

    fn validate(&self) -> Result<(), PtmError> {
        let bad = |what: String| Err(PtmError::Config(what));
        if self.threads == 0 || self.threads > sti::MAX_THREADS - 1 {
            return bad(format!(
                "threads is {}, must be in 1..={} (8-bit thread ids; the replicas are threads + 1)",
                self.threads,
                sti::MAX_THREADS - 1
            ));
        }
        if self.states_per_thread < 2 || self.states_per_thread > sti::MAX_IDX {
            return bad(format!(
                "states_per_thread is {}, must be in 2..={} (12-bit state indices; a thread needs one state besides the one it last committed)",
                self.states_per_thread,
                sti::MAX_IDX
            ));
        }
        if self.log_entries_per_thread == 0 || self.log_entries_per_thread > 1 << 28 {
            return bad(format!(
                "log_entries_per_thread is {}, must be in 1..={}",
                self.log_entries_per_thread,
                1u64 << 28
            ));
        }
        if self.dirty_lines_per_replica == 0 || self.dirty_lines_per_replica > 1 << 28 {
            return bad(format!(
                "dirty_lines_per_replica is {}, must be in 1..={}",
                self.dirty_lines_per_replica,
                1u64 << 28
            ));
        }
        Ok(())
    }

    fn ring_len(&self) -> usize {
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
            n * variant::WordSet::bytes_for(2 * self.log_entries_per_thread)
                + (n + 1) * variant::WordSet::bytes_for(2 * self.dirty_lines_per_replica)
        } else {
            0
        };
        arenas + states + ring + combs + per_thread + sets
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
    /// Replicas copied from the designated one.
    pub copies: u64,
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

#[derive(Default)]
#[repr(align(128))]
struct ThreadStats {
    commits: std::sync::atomic::AtomicU64,
    rollbacks: std::sync::atomic::AtomicU64,
    replays: std::sync::atomic::AtomicU64,
    copies: std::sync::atomic::AtomicU64,
    helped: std::sync::atomic::AtomicU64,
    reads_direct: std::sync::atomic::AtomicU64,
    reads_published: std::sync::atomic::AtomicU64,
    log_entries: std::sync::atomic::AtomicU64,
    backoffs: std::sync::atomic::AtomicU64,
    timed_fallbacks: std::sync::atomic::AtomicU64,
}

/// Counts one on a thread's own statistics counter. Only the thread that
/// holds the thread id writes its counters (a thread id passes from one
/// thread to the next through the id pool's acquire/release), so a load and
/// a store do: a `fetch_add` would be a locked instruction on every
/// transaction, which on x86 also waits for the thread's pending
/// write-backs.
#[inline]
fn bump(c: &std::sync::atomic::AtomicU64) {
    use std::sync::atomic::Ordering::Relaxed;
    c.store(c.load(Relaxed).wrapping_add(1), Relaxed);
}

type UpdateFn<B> = Box<dyn for<'t> Fn(&Tx<'t, B>) -> u64 + Send + Sync>;
type ReadFn<B> = Box<dyn for<'t> Fn(&ReadTx<'t, B>) -> u64 + Send + Sync>;

/// What a published request runs.
enum Job<B: Backend> {
    Update(UpdateFn<B>),
    Read(ReadFn<B>),
}

/// A published operation (`req[tid]`): the closure and its sequence number.
struct Request<B: Backend> {
    seq: u64,
    job: Job<B>,
}

/// A retired request, owned by its thread's list until no hazard pointer
/// names it.
struct Retired<B: Backend>(*mut Request<B>);

// SAFETY: a `Request` holds only `Send + Sync` closures; the pointer is the
// unique owner of a leaked `Box` (see `RedoPtm::reclaim`).
unsafe impl<B: Backend> Send for Retired<B> {}

/// Per thread id, touched only by the thread holding the id.
struct Slot<B: Backend> {
    /// `stMatrix[tid].lastIdx`: the next state this thread fills.
    last_idx: usize,
    retired: Vec<Retired<B>>,
}

/// A `Combined` held exclusively by the running thread, with its dirty
/// lines taken out.
struct Held {
    idx: usize,
    dirty: RefCell<DirtyLines>,
}

/// How an attempt ended.
enum Attempt {
    /// This thread's CAS committed a state with its request.
    Committed(u64, bool),
    /// The request was found applied in the state this thread read.
    Applied(u64, bool),
    /// Neither: collect the result from the designated state.
    GaveUp,
}

/// Redo-PTM over a pool. See the module docs.
pub struct RedoPtm<B: Backend> {
    pool: Pool<B>,
    uid: u64,
    config: Config,
    n: usize,
    cur_comb_off: u64,
    replica_len: u64,
    combs: Box<[Combined]>,
    /// `stMatrix`: `states[tid][idx]`.
    states: Box<[Box<[State]>]>,
    arenas: Box<[LogArena]>,
    ring: Box<[AtomicU64]>,
    announce: Box<[AtomicU64]>,
    req: Box<[AtomicPtr<Request<B>>]>,
    hp: Box<[AtomicPtr<Request<B>>]>,
    slots: Box<[std::sync::Mutex<Slot<B>>]>,
    durable: AtomicU64,
    tids: Arc<TidPool>,
    stats: Box<[ThreadStats]>,
    /// RedoOpt: each thread's store set (store aggregation).
    store_sets: Box<[std::sync::Mutex<RefCell<WordSet>>]>,
    /// RedoTimed/RedoOpt: when each thread's update started (ns after
    /// `epoch`), and the average copy time (ns) that sizes the window.
    epoch: std::time::Instant,
    update_start: Box<[std::sync::atomic::AtomicU64]>,
    copy_ns: std::sync::atomic::AtomicU64,
}

impl<B: Backend> std::fmt::Debug for RedoPtm<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedoPtm")
            .field("threads", &self.n)
            .field("replica_len", &self.replica_len)
            .field("cur_comb", &self.cur_comb().load(Ordering::Relaxed))
            .finish()
    }
}

/// The checked geometry of a pool's replicas.
struct Geometry {
    header: u64,
    threads: usize,
    replica_len: u64,
}

impl Geometry {
    fn replicas_base(&self) -> u64 {
        self.header + REPLICAS
    }
    fn replica(&self, r: usize) -> u64 {
        self.replicas_base() + r as u64 * self.replica_len
    }
}

impl<B: Backend> RedoPtm<B> {
    /// Formats `pool` for Redo-PTM with `config.threads` threads (`N + 1`
    /// replicas splitting the pool) and opens it. Whatever the pool held in
    /// its data area is discarded. Crash-atomic: the header is written last,
    /// so a crash during `create` leaves a pool [`RedoPtm::open`] reports as
    /// not formatted.
    pub fn create(pool: Pool<B>, config: &Config) -> Result<RedoPtm<B>, PtmError> {
        config.validate()?;
        let n = config.threads;
        let header = pool.data_offset();
        let size = pool.size();
        let replicas = n as u64 + 1;
        let too_small = || PtmError::PoolTooSmall {
            pool_size: size,
            threads: n,
            replicas: n + 1,
            min_replica: MIN_REPLICA,
            needed: header + REPLICAS + replicas * MIN_REPLICA,
        };
        let avail = size.checked_sub(header + REPLICAS).ok_or_else(too_small)?;
        let replica_len = (avail / replicas) / REPLICA_GRANULE * REPLICA_GRANULE;
        if replica_len < MIN_REPLICA {
            return Err(too_small());
        }
        let g = Geometry {
            header,
            threads: n,
            replica_len,
        };
        // Invalidate any earlier header first, so that a crash below leaves
        // "not formatted" rather than an old PTM over a half-formatted area.
        pool.word(header)?.store(0, Ordering::Release);
        pool.pwb(header, 8);
        pool.pfence();
        replica::format(&pool, g.replica(0), replica_len)?;
        pool.pwb(
            g.replica(0),
            replica::used_len(&pool, g.replica(0), replica_len)?,
        );
        pool.word(header + CUR_COMB)?
            .store(sti::pack(0, 0, 0), Ordering::Release);
        pool.pwb(header + CUR_COMB, 8);
        pool.pfence();
        meta::write(
            &pool,
            header,
            &[
                MAGIC,
                VERSION,
                n as u64,
                replica_len,
                g.replicas_base(),
                size,
                0,
            ],
        )?;
        RedoPtm::open(pool, config)
    }

    /// Opens the Redo-PTM in `pool` (null recovery, see the module docs).
    /// The thread count comes from the pool; the rest of `config` sizes the
    /// volatile structures.
    pub fn open(pool: Pool<B>, config: &Config) -> Result<RedoPtm<B>, PtmError> {
        let header = pool.data_offset();
        let corrupt = |reason: String| PtmError::Corrupt { kind: KIND, reason };
        let words = match meta::read(&pool, header, MAGIC)? {
            meta::Verdict::Valid(w) => w,
            meta::Verdict::NoMagic(found) => {
                return Err(PtmError::NotFormatted { kind: KIND, found })
            }
            meta::Verdict::BadChecksum(stored) => {
                return Err(corrupt(format!(
                    "the header's checksum {stored:#x} does not match its fields"
                )))
            }
        };
        if words[1] != VERSION {
            return Err(PtmError::UnsupportedVersion {
                kind: KIND,
                found: words[1],
                supported: VERSION,
            });
        }
        let n = usize::try_from(words[2]).unwrap_or(usize::MAX);
        if n == 0 || n > sti::MAX_THREADS - 1 {
            return Err(corrupt(format!("the header records {} threads", words[2])));
        }
        let g = Geometry {
            header,
            threads: n,
            replica_len: words[3],
        };
        if g.replica_len < MIN_REPLICA || g.replica_len % REPLICA_GRANULE != 0 {
            return Err(corrupt(format!(
                "the replica length {} is not a multiple of {REPLICA_GRANULE} of at least {MIN_REPLICA}",
                g.replica_len
            )));
        }
        if words[4] != g.replicas_base() {
            return Err(corrupt(format!(
                "the replicas start at {:#x}, expected {:#x}",
                words[4],
                g.replicas_base()
            )));
        }
        if words[5] != pool.size() {
            return Err(corrupt(format!(
                "the header was written for a pool of {} bytes, this one has {}",
                words[5],
                pool.size()
            )));
        }
        let end = (n as u64 + 1)
            .checked_mul(g.replica_len)
            .and_then(|r| r.checked_add(g.replicas_base()));
        if end.map_or(true, |e| e > pool.size()) {
            return Err(corrupt(format!(
                "{} replicas of {} bytes do not fit the pool",
                n + 1,
                g.replica_len
            )));
        }
        let cur = pool.word(header + CUR_COMB)?.load(Ordering::Acquire);
        if sti::idx(cur) > n || sti::tid(cur) >= sti::MAX_THREADS {
            return Err(corrupt(format!(
                "cur_comb {cur:#x} names replica {} of {}",
                sti::idx(cur),
                n + 1
            )));
        }
        replica::used_len(&pool, g.replica(sti::idx(cur)), g.replica_len).map_err(|e| {
            corrupt(format!(
                "the replica cur_comb designates ({}) has a damaged allocator: {e}",
                sti::idx(cur)
            ))
        })?;
        let config = Config {
            threads: n,
            ..config.clone()
        };
        config.validate()?;
        Ok(RedoPtm::build(pool, config, &g, cur))
    }

    /// Opens the Redo-PTM in `pool`, creating one if the pool holds none.
    pub fn open_or_create(pool: Pool<B>, config: &Config) -> Result<RedoPtm<B>, PtmError> {
        let header = pool.data_offset();
        match meta::read(&pool, header, MAGIC)? {
            meta::Verdict::NoMagic(_) => RedoPtm::create(pool, config),
            _ => RedoPtm::open(pool, config),
        }
    }

    /// The volatile side, after null recovery from `cur`.
    fn build(pool: Pool<B>, config: Config, g: &Geometry, cur: u64) -> RedoPtm<B> {
        let n = g.threads;
        let rsize = config.states_per_thread;
        let s = sti::seq(cur);
        let designated = sti::idx(cur);
        let ticket0 = sti::pack(s, 0, 0);
        let combs: Box<[Combined]> = (0..=n)
            .map(|r| {
                let dirty = Self::dirty_lines_for(
                    config.variant,
                    config.dirty_lines_per_replica,
                    g.replica_len,
                );
                Combined::new(g.replica(r), n, dirty)
            })
            .collect();
        combs[designated].head.store(ticket0, Ordering::SeqCst);
        combs[designated].lock.set_read_lock();
        let states: Box<[Box<[State]>]> = (0..n)
            .map(|_| (0..rsize).map(|_| State::new(n)).collect())
            .collect();
        states[0][0].reset(ticket0);
        let ring: Box<[AtomicU64]> = (0..config.ring_len())
            .map(|_| AtomicU64::new(INVALID))
            .collect();
        ring[(s as usize) & (ring.len() - 1)].store(ticket0, Ordering::SeqCst);
        let slots = (0..n)
            .map(|t| {
                std::sync::Mutex::new(Slot {
                    last_idx: usize::from(t == 0),
                    retired: Vec::with_capacity(n + 1),
                })
            })
            .collect();
        RedoPtm {
            uid: registry::next_uid(),
            n,
            cur_comb_off: g.header + CUR_COMB,
            replica_len: g.replica_len,
            combs,
            states,
            arenas: (0..n)
                .map(|_| LogArena::new(config.log_entries_per_thread))
                .collect(),
            ring,
            announce: (0..n).map(|_| AtomicU64::new(0)).collect(),
            req: (0..n)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            hp: (0..n)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            slots,
            durable: AtomicU64::new(s),
            tids: TidPool::new(n),
            stats: (0..n).map(|_| ThreadStats::default()).collect(),
            store_sets: (0..n)
                .map(|_| {
                    std::sync::Mutex::new(RefCell::new(if config.variant.opt() {
                        WordSet::new(2 * config.log_entries_per_thread)
                    } else {
                        WordSet::none()
                    }))
                })
                .collect(),
            epoch: std::time::Instant::now(),
            update_start: (0..n)
                .map(|_| std::sync::atomic::AtomicU64::new(0))
                .collect(),
            copy_ns: std::sync::atomic::AtomicU64::new(0),
            config,
            pool,
        }
    }

    /// The pool.
    pub fn pool(&self) -> &Pool<B> {
        &self.pool
    }

    /// `N`: the thread ids.
    pub fn threads(&self) -> usize {
        self.n
    }

    /// The transactional region's length (one replica).
    pub fn region_len(&self) -> u64 {
        self.replica_len
    }

    /// The configuration in effect.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// RedoOpt: the thread's store set, for its next simulation.
    fn store_set(&self, tid: usize) -> Option<std::sync::MutexGuard<'_, RefCell<WordSet>>> {
        self.config.variant.opt().then(|| {
            self.store_sets[tid]
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        })
    }

    /// The volatile memory this PTM allocated, per [`Config::volatile_bytes`].
    pub fn volatile_bytes(&self) -> u64 {
        self.config.volatile_bytes()
    }

    /// The raw `cur_comb` word (for tests and tools).
    pub fn cur_comb_word(&self) -> u64 {
        self.cur_comb().load(Ordering::SeqCst)
    }

    /// The counters of all threads, summed.
    pub fn stats(&self) -> RedoStats {
        let mut s = RedoStats::default();
        let get = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
        for t in self.stats.iter() {
            s.commits += get(&t.commits);
            s.rollbacks += get(&t.rollbacks);
            s.replays += get(&t.replays);
            s.copies += get(&t.copies);
            s.helped += get(&t.helped);
            s.reads_direct += get(&t.reads_direct);
            s.reads_published += get(&t.reads_published);
            s.log_entries += get(&t.log_entries);
            s.backoffs += get(&t.backoffs);
            s.timed_fallbacks += get(&t.timed_fallbacks);
        }
        s
    }

    /// Per replica, the `cur_comb` CASes that designated it since the PTM
    /// was opened (RedoTimed-PTM keeps to `combs[0]` and `combs[1]`).
    pub fn replica_commits(&self) -> Vec<u64> {
        self.combs
            .iter()
            .map(|c| c.commits.load(std::sync::atomic::Ordering::Relaxed))
            .collect()
    }

    /// The variant running.
    pub fn variant(&self) -> Variant {
        self.config.variant
    }

    /// A handle speaking for one of the `N` thread ids until it is dropped.
    pub fn handle(&self) -> Result<Handle<'_, B>, PtmError> {
        let tid = self
            .tids
            .claim()
            .ok_or(PtmError::TooManyThreads { max: self.n })?;
        Ok(Handle {
            ptm: self,
            tid,
            _not_send: PhantomData,
        })
    }

    /// Runs `f` as an update transaction with the calling thread's leased
    /// thread id (see [`crate::registry`]); see [`crate::tx`] for what `f`
    /// must satisfy.
    ///
    /// # Panics
    ///
    /// If `f` panicked (on whichever thread ran it).
    pub fn update_tx<R, F>(&self, f: F) -> Result<R, PtmError>
    where
        R: PWord,
        F: for<'t> Fn(&Tx<'t, B>) -> R + Send + Sync + 'static,
    {
        if let Some(cur) = registry::current(self.uid) {
            return self.nested_update(cur, f);
        }
        let tid = self.leased_tid()?;
        Ok(self.update_with(tid, f))
    }

    /// Runs `f` as a read-only transaction with the calling thread's leased
    /// thread id.
    ///
    /// # Panics
    ///
    /// If `f` panicked.
    pub fn read_tx<R, F>(&self, f: F) -> Result<R, PtmError>
    where
        R: PWord,
        F: for<'t> Fn(&ReadTx<'t, B>) -> R + Send + Sync + 'static,
    {
        if let Some(cur) = registry::current(self.uid) {
            return Ok(self.nested_read(cur, f));
        }
        let tid = self.leased_tid()?;
        Ok(self.read_with(tid, f))
    }

    fn leased_tid(&self) -> Result<usize, PtmError> {
        registry::leased_tid(self.uid, &self.tids).ok_or(PtmError::TooManyThreads { max: self.n })
    }

    fn nested_update<R, F>(&self, cur: Current, f: F) -> Result<R, PtmError>
    where
        F: for<'t> Fn(&Tx<'t, B>) -> R,
    {
        match cur.kind {
            // SAFETY: `cur` was set by `execute` of this PTM (same uid, so
            // the same `B`) around a call on this thread that is still on
            // the stack below us; the `Tx` it points to lives in that frame.
            Kind::Update => Ok(f(unsafe { &*(cur.ptr as *const Tx<'_, B>) })),
            Kind::Read => Err(PtmError::UpdateInReadTx),
        }
    }

    fn nested_read<R, F>(&self, cur: Current, f: F) -> R
    where
        F: for<'t> Fn(&ReadTx<'t, B>) -> R,
    {
        match cur.kind {
            // SAFETY: as in `nested_update`.
            Kind::Update => f(unsafe { &*(cur.ptr as *const Tx<'_, B>) }.as_read()),
            // SAFETY: as in `nested_update`, for a `ReadTx` set by
            // `execute` or `apply_read`.
            Kind::Read => f(unsafe { &*(cur.ptr as *const ReadTx<'_, B>) }),
        }
    }

    fn update_with<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&Tx<'t, B>) -> R + Send + Sync + 'static,
    {
        let (w, panicked) =
            self.apply_update(tid, Job::Update(Box::new(move |tx| f(tx).into_word())));
        if panicked {
            panic!("the update transaction's closure panicked (its message was printed where it ran); its stores were rolled back");
        }
        R::from_word(w)
    }

    fn read_with<R, F>(&self, tid: usize, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&ReadTx<'t, B>) -> R + Send + Sync + 'static,
    {
        self.apply_read(tid, f)
    }

    #[inline]
    fn cur_comb(&self) -> PmWord<'_, B> {
        word(&self.pool, self.cur_comb_off)
    }

    #[inline]
    fn ring_slot(&self, seq: u64) -> &AtomicU64 {
        &self.ring[(seq as usize) & (self.ring.len() - 1)]
    }

    /// The state a ticket names, if its fields are in range.
    #[inline]
    fn state_of(&self, ticket: u64) -> Option<&State> {
        self.states
            .get(sti::tid(ticket))
            .and_then(|row| row.get(sti::idx(ticket)))
    }

    fn slot(&self, tid: usize) -> std::sync::MutexGuard<'_, Slot<B>> {
        self.slots[tid].lock().unwrap_or_else(|e| e.into_inner())
    }

    // --- Persistence ---------------------------------------------------------

    /// Raises the durability watermark to `seq` (one attempt: a lower value
    /// left behind only costs a later reader a redundant sync).
    fn note_durable(&self, seq: u64) {
        let d = self.durable.load(Ordering::SeqCst);
        if sti::seq_after(seq, d) {
            let _ = self
                .durable
                .compare_exchange(d, seq, Ordering::SeqCst, Ordering::SeqCst);
        }
    }

    /// Returns once `cur_comb` at `seq` or later is durable: at once if the
    /// watermark says so, else after `pwb(cur_comb); psync()` (Alg. 2
    /// L15–L16, L20–L21; Alg. 3 L44–L45).
    fn ensure_durable(&self, seq: u64) {
        if sti::seq_at_least(self.durable.load(Ordering::SeqCst), seq) {
            return;
        }
        let _t = crate::breakdown::timer(crate::breakdown::Bucket::Flush);
        let now = self.cur_comb().load(Ordering::SeqCst);
        self.pool.pwb(self.cur_comb_off, 8);
        self.pool.psync();
        self.note_durable(sti::seq(now));
    }
}

impl<B: Backend> Drop for RedoPtm<B> {
    fn drop(&mut self) {
        for r in self.req.iter() {
            let p = r.swap(std::ptr::null_mut(), Ordering::SeqCst);
            if !p.is_null() {
                // SAFETY: no transaction is running (we have `&mut self`);
                // `p` came from `Box::into_raw` and was never retired.
                drop(unsafe { Box::from_raw(p) });
            }
        }
        for s in self.slots.iter() {
            let mut s = s.lock().unwrap_or_else(|e| e.into_inner());
            for r in s.retired.drain(..) {
                // SAFETY: retired requests are owned by this list alone and
                // no helper is running.
                drop(unsafe { Box::from_raw(r.0) });
            }
        }
    }
}

/// One of a [`RedoPtm`]'s thread ids, held until dropped. Not `Send`: it
/// speaks for the thread that took it.
pub struct Handle<'p, B: Backend> {
    ptm: &'p RedoPtm<B>,
    tid: usize,
    _not_send: PhantomData<*const ()>,
}

impl<B: Backend> std::fmt::Debug for Handle<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Handle(tid {})", self.tid)
    }
}

impl<'p, B: Backend> Handle<'p, B> {
    /// The thread id.
    pub fn tid(&self) -> usize {
        self.tid
    }

    /// The PTM.
    pub fn ptm(&self) -> &'p RedoPtm<B> {
        self.ptm
    }

    /// Runs `f` as an update transaction (see [`crate::tx`]).
    ///
    /// # Panics
    ///
    /// If `f` panicked, or if called inside a read-only transaction of the
    /// same PTM.
    pub fn update_tx<R, F>(&self, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&Tx<'t, B>) -> R + Send + Sync + 'static,
    {
        if let Some(cur) = registry::current(self.ptm.uid) {
            return match self.ptm.nested_update(cur, f) {
                Ok(r) => r,
                Err(e) => panic!("{e}"),
            };
        }
        self.ptm.update_with(self.tid, f)
    }

    /// Runs `f` as a read-only transaction.
    ///
    /// # Panics
    ///
    /// If `f` panicked.
    pub fn read_tx<R, F>(&self, f: F) -> R
    where
        R: PWord,
        F: for<'t> Fn(&ReadTx<'t, B>) -> R + Send + Sync + 'static,
    {
        if let Some(cur) = registry::current(self.ptm.uid) {
            return self.ptm.nested_read(cur, f);
        }
        self.ptm.read_with(self.tid, f)
    }
}

impl<B: Backend> Drop for Handle<'_, B> {
    fn drop(&mut self) {
        self.ptm.tids.release(self.tid);
    }
}

impl<B: Backend> Ptm for RedoPtm<B> {
    type ReadTx<'t>
        = ReadTx<'t, B>
    where
        Self: 't;
    type Tx<'t>
        = Tx<'t, B>
    where
        Self: 't;

    fn update_tx<R, F>(&self, f: F) -> Result<R, PtmError>
    where
        R: PWord,
        F: for<'t> Fn(&Tx<'t, B>) -> R + Send + Sync + 'static,
    {
        RedoPtm::update_tx(self, f)
    }

    fn read_tx<R, F>(&self, f: F) -> Result<R, PtmError>
    where
        R: PWord,
        F: for<'t> Fn(&ReadTx<'t, B>) -> R + Send + Sync + 'static,
    {
        RedoPtm::read_tx(self, f)
    }

    fn events(&self) -> Vec<(&'static str, u64)> {
        let s = self.stats();
        vec![
            ("copies", s.copies),
            ("replays", s.replays),
            ("rollbacks", s.rollbacks),
            ("timed_fallbacks", s.timed_fallbacks),
        ]
    }
}

const _: () = assert!(ALLOC_BASE < MIN_REPLICA);
