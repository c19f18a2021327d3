//! CX-PTM and CX-PUC (seed §4): wait-free persistent transactions from the
//! CX universal construction — a turn queue of closures, `2N` replicas each
//! behind a strong try reader-writer lock, and `cur_comb` in persistent
//! memory naming the replica that holds the latest state.
//!
//! | file | seed |
//! | --- | --- |
//! | `cx/mod.rs` | the walk-through below, [`Config`], [`CxStats`] |
//! | `layout` | the persistent layout (shared with Redo-PTM), creation, null recovery's checks |
//! | `cx/queue.rs` | the queue of mutations (turn queue, ref. \[39\]) and the wait-free reclamation of its nodes |
//! | `cx/core.rs` | `applyUpdate` steps 1–6 and `applyRead` steps 1–3, once for both flavours |
//! | [`ptm`] | CX-PTM: annotated loads and stores, a `pwb` per modified line ([`CxPtm`]) |
//! | [`puc`] | CX-PUC: a plain sequential value, the whole used region written back ([`CxPuc`]) |
//!
//! ## State
//!
//! Persistent (see `layout`): a header, `cur_comb`, and `2N` replicas
//! of the transactional region (roots, then the region allocator and its
//! blocks: `replica`). Volatile, as §4 says ("the queue of
//! mutations and the array of Combined instances, can be kept in volatile
//! memory"): the queue, whose nodes carry the closure, its result, `next`,
//! the `ticket` and a reference count; `2N` `Combined` instances, each a
//! replica's `head` (the last node applied to it), the replica and its
//! [`StrongTryRwLock`](crate::StrongTryRwLock); hazard pointers.
//!
//! `cur_comb` is one word, a `SeqTidIdx`: `idx` the replica,
//! `seq` the ticket of its head. The seed's `curComb` is the index alone;
//! the ticket makes every value distinct (no ABA on the CAS) and tells a
//! thread from `cur_comb` alone whether its node is in the designated state
//! (`seq ≥ ticket`).
//!
//! ## An update (§4 `applyUpdate`, steps 1–6)
//!
//! 1. {1} put the closure in a node and enqueue it (the turn queue gives it
//!    its ticket);
//! 2. {2} take a `Combined` exclusively, trying `combs[0]` to `combs[2N-1]`
//!    in order; if its head is already at or past our node, our node has
//!    been applied and installed: release it and collect the result;
//! 3. {3} if the replica is invalid — its head null (every replica but the
//!    designated one after an open), disposed of (self-linked) by the
//!    reclamation, or more than [`Config::replay_window`] nodes behind ours —
//!    copy the replica `cur_comb` designates, byte for byte, under a shared
//!    lock (`getCombined`; if `cur_comb` already holds our node, leave);
//! 4. {4} run every node's closure from the head up to ours on the replica,
//!    storing each result in its node, and make ours the head; a step finds
//!    its node disposed of (self-linked) if the reclamation passed it
//!    meanwhile, and then copies as in {3} — a step must never take a
//!    self-linked `next` for the successor, or the walk runs that node's
//!    closure twice on the replica (`TurnQueue::protect_next` in `cx/queue.rs`; a
//!    bug the `shuttle:ptm` schedules found in CI and loom now checks);
//! 5. write back what the update wrote (below), {5} downgrade the lock to
//!    read-only, `pfence`;
//! 6. {6} CAS `cur_comb` from the designated replica to ours, retried until
//!    it succeeds or the designated head is at or past our node (each retry
//!    means `cur_comb` moved; at most `N - 1` moves can leave our node out).
//!    The winner: `pwb(cur_comb)`, `psync`, then releases the replica it
//!    superseded and retires the nodes between the two heads.
//!
//! A thread that does not install its replica reads its node's result once
//! `cur_comb`'s sequence is at or past its ticket, after `pwb(cur_comb)` +
//! `psync` unless a durability watermark already covers it.
//!
//! ## A read (§4 `applyRead`, at most `MAX_READ_TRIES + N` tries)
//!
//! R{1} read `cur_comb`; R{3} take its replica's lock shared, check that
//! `cur_comb` has not moved, run the closure on the replica, unlock. After
//! [`Config::max_read_tries`] failed tries (each one means `cur_comb`
//! moved), R{2} enqueue the read as a node: an updater runs it on its
//! replica and stores its result; the reader keeps trying directly for `N`
//! more tries, then collects the result.
//!
//! ## Persistence: one `pfence` and one `psync` per update
//!
//! §4: CX is durable linearizable "if the variable curComb is persisted
//! together with the replica that it references". Before the CAS that
//! designates a replica, everything written to it since it was last
//! designated is written back and fenced; after the CAS, `pwb(cur_comb)` and
//! `psync` before the update returns or the superseded replica is released:
//!
//! * CX-PTM: a `pwb` per cache line its annotated stores (and copies)
//!   touched;
//! * CX-PUC: no annotation, so the whole used part of the replica (roots,
//!   allocator metadata, blocks up to the allocator's bump pointer).
//!
//! The `pfence` before the CAS is left out where a successful locked CAS
//! completes write-backs (x86 with [`perdure_pm::Pmem`]; the published code
//! relies on that everywhere). Reads issue no fence unless the state they
//! read is not yet known durable.
//!
//! ## Null recovery
//!
//! Opening a pool reads `cur_comb`, checks the replica it designates, and
//! starts from it: a fresh queue whose sentinel's ticket is `cur_comb`'s
//! sequence is that replica's head (read-locked, as the designated replica
//! always is); every other head is null, so the first update that takes one
//! of those replicas copies. Nothing is written.
//!
//! ## Reclamation (`cx/queue.rs`)
//!
//! The winner of a `cur_comb` CAS retires the nodes it moved the designated
//! head past; once a retired node is [`Config::replay_window`] tickets behind
//! the newest node its thread retired, it is disposed of (self-linked),
//! which invalidates any replica whose head is at or before it; it is freed
//! once no hazard pointer and no `Combined` head names it. Every step is
//! bounded.
//!
//! ## Progress
//!
//! An update enqueues (at most `N` helping iterations, checked), scans the
//! `2N` locks once, and then either replays at most `replay_window` closures
//! or copies the used part of the designated replica and runs the closures
//! enqueued between its head and ours (at most one per other thread's
//! pending update, plus enqueued reads); a copy that is invalidated again
//! means `cur_comb` moved, so there are at most `N` of them; the CAS is
//! retried at most `N` times. A read takes at most `max_read_tries + N`
//! tries, after which an updater has run it (checked: the reader collects
//! only once `cur_comb` holds its node, and keeps trying directly until
//! then). As in Redo-PTM, enqueueing boxes the closure and the node (the
//! global allocator is not wait-free). A thread whose scan of the `2N`
//! locks found none free scans again until one is, or until `cur_comb`
//! holds its node: each thread holds at most one replica exclusively and
//! one shared, and one more is designated, but a winner keeps the replica
//! it superseded read-locked until its `psync`, so all `2N` can be busy for
//! that moment (the published code has 128 `Combined` instances whatever
//! `N`).
//!
//! ## Deviations from the seed and the published code, and why
//!
//! * `cur_comb` carries the head's ticket besides the index (above).
//! * A replica is released by the next winner only after the new `cur_comb`
//!   is durable (the published code does the same), and the `pfence` before
//!   the CAS is explicit unless the backend's CAS completes write-backs.
//! * Lines a thread wrote to a replica it then left without installing are
//!   written back by the replica's next installer (they belong to the
//!   replica, as in Redo-PTM), not before the release: the published code
//!   flushes them but releases before its `psync`, which on a backend whose
//!   locked instructions do not complete write-backs lets the next
//!   installer's CAS overtake them (finding F5 of `specs/ptm/CXPTM.tla`).
//! * Results are collected only once `cur_comb` provably holds the node
//!   (sequence ≥ ticket), never on the strength of an iteration count: the
//!   published code returns `myNode->result` after `getCombined` gives up
//!   or its CAS loop runs out, which the bounds make right but a slip in
//!   them would make silently wrong.
//! * A copy that finds its replica invalidated again copies again (at most
//!   `N` times, each meaning `cur_comb` moved) instead of returning.
//! * A replica further than [`Config::replay_window`] nodes behind copies
//!   instead of replaying: that bounds the replay.
//! * CX-PUC runs closures on a per-thread working copy of the replica and
//!   writes the words that changed back through the pool (module docs of
//!   [`puc`] say why); the published CX-PUC mutates the replica in place and
//!   deep-copies objects with their copy constructors instead of copying
//!   bytes.
//! * A panicking closure is rolled back (CX-PTM: an undo log; CX-PUC: a
//!   snapshot of the working copy) and the panic reaches its submitter.
//!
//! ## Checked by
//!
//! * the suites every construction runs (`tests/common/ptms.rs`):
//!   `tests/suite/ptm_basic.rs` (sequential semantics through [`Ptm`](crate::Ptm),
//!   nesting, panics rolled back, handles, published reads, a pool file
//!   reopened), `tests/suite/ptm_concurrent.rs` (2–4 threads: increments once
//!   each, results to the right thread, whole-transaction reads, allocating
//!   transactions), `tests/suite/ptm_fences.rs` (one `pfence` and one `psync` per
//!   update, none under x86 CAS semantics, none per read),
//!   `tests/suite/ptm_crash.rs` (full crashes on the Px86 simulator, one and two
//!   threads), `tests/suite/ptm_bad_input.rs` (damaged pools give typed errors),
//!   `tests/suite/ds_proptest.rs` (the data structures against `std` models with
//!   reopens and crashes);
//! * what only CX has: `tests/suite/cx_basic.rs` (CX-PUC's plain value, the
//!   replay window, the volatile bound), `tests/suite/cx_concurrent.rs` (a
//!   one-node window under contention), `tests/suite/cx_fences.rs` (CX-PTM's
//!   `pwb`s = its distinct lines + `cur_comb`, CX-PUC's = every used line +
//!   `cur_comb`), `tests/suite/cx_crash.rs` (copying, CX-PUC's typed interface),
//!   `tests/suite/cx_bad_input.rs` (foreign pools, CX-PUC layouts, CX's
//!   configurations);
//! * `tests/shuttle_cx.rs`: random and PCT schedules with a one-node window,
//!   with and without crashes;
//! * `tests/loom_cx_queue.rs`: loom, the turn queue's enqueue with 2 and 3
//!   threads, and a traversal against reclamation;
//! * `tests/shuttle_explore_ptm.rs`: the crash explorer (feature `check`,
//!   `src/scenarios.rs`), both flavours with a counter, a queue, a set and a
//!   map; `tests/shuttle_mutants_ptm.rs`, `tests/mutants_ptm.rs`
//!   (`MUTANTS.md`): mutants of the write-backs and syncs around the CAS.
//!
//! ## Not done
//!
//! Traces for TLC, loom of the whole update path (only the queue and
//! its reclamation), CX-PUC objects with interior pointers (it takes
//! offsets), and benchmarks.

/// The accessors [`CxPtm`] and [`CxPuc`] share (both wrap a `cx`).
macro_rules! accessors {
    () => {
        /// The pool.
        pub fn pool(&self) -> &perdure_pm::Pool<B> {
            &self.cx.pool
        }

        /// `N`: the thread ids (the pool has `2N` replicas).
        pub fn threads(&self) -> usize {
            self.cx.n
        }

        /// The transactional region's length (one replica).
        pub fn region_len(&self) -> u64 {
            self.cx.region_len
        }

        /// The configuration in effect.
        pub fn config(&self) -> &$crate::cx::Config {
            &self.cx.config
        }

        /// The raw `cur_comb` word (for tests and tools).
        pub fn cur_comb_word(&self) -> u64 {
            self.cx
                .cur_comb()
                .load(perdure_pm::sync::atomic::Ordering::SeqCst)
        }

        /// The counters of all threads, summed.
        pub fn stats(&self) -> $crate::cx::CxStats {
            self.cx.stats()
        }
    };
}
pub(crate) use accessors;

/// The part of [`crate::front::Front`] [`CxPtm`] and [`CxPuc`] share (both
/// wrap a `cx`): the PTM's id, its thread ids and the counters it reports.
macro_rules! front_ids {
    () => {
        fn event_counts(&self) -> Vec<(&'static str, u64)> {
            self.stats().events()
        }

        fn uid(&self) -> u64 {
            self.cx.uid
        }

        fn tid_pool(&self) -> &$crate::front::TidPoolRef {
            &self.cx.tids
        }
    };
}
pub(crate) use front_ids;

pub(crate) mod core;
pub mod ptm;
pub mod puc;
pub(crate) mod queue;

#[cfg(perdure_loom)]
#[doc(hidden)]
pub use queue::model_checks;

pub use crate::layout::VERSION;
pub use ptm::{CxPtm, Tx};
pub use puc::{CxPuc, Plain, PucMut, PucRead, PucRef, PucTx};
/// The `zerocopy` this crate's [`Plain`] is defined with; derive its traits
/// through it with `#[zerocopy(crate = "perdure_ptm::cx::zerocopy")]`.
pub use zerocopy;

use crate::error::PtmError;
pub(crate) use crate::layout::Geometry;
use crate::layout::{self, PoolConfig};

/// The configuration of CX-PTM and CX-PUC: the thread count (persistent: it
/// fixes the number of replicas) and the sizes of the volatile structures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `N`: thread ids `0..N` and `2N` replicas. At most 254. Used by
    /// `create`; `open` takes it from the pool.
    pub threads: usize,
    /// `MAX_READ_TRIES` of `applyRead`.
    pub max_read_tries: usize,
    /// How far (in nodes) a replica may lag and still be brought up to date
    /// by running the closures it missed; a retired node is disposed of
    /// (invalidating replicas still before it) once it is this far behind
    /// its retirer's newest. The published code keeps 1,000–2,000 per
    /// thread.
    pub replay_window: usize,
    /// CX-PTM: dirty cache lines a replica tracks one by one before it falls
    /// back to writing back the whole range they span.
    pub dirty_lines_per_replica: usize,
    /// CX-PTM: stores of one closure that can be rolled back if it panics.
    pub undo_entries_per_thread: usize,
}

impl Default for Config {
    /// 8 threads, 10 read tries, a replay window of 256 nodes, 16 Ki dirty
    /// lines per replica, 4 Ki undo entries per thread.
    fn default() -> Config {
        Config {
            threads: 8,
            max_read_tries: 10,
            replay_window: 256,
            dirty_lines_per_replica: 16 << 10,
            undo_entries_per_thread: 4 << 10,
        }
    }
}

impl Config {
    /// A small configuration for tests and examples: 4 threads, a window of
    /// 32 nodes, 1 Ki dirty lines and undo entries.
    pub fn small() -> Config {
        Config {
            threads: 4,
            max_read_tries: 10,
            replay_window: 32,
            dirty_lines_per_replica: 1 << 10,
            undo_entries_per_thread: 1 << 10,
        }
    }

    /// The nodes alive at once, at most, beyond those of transactions in
    /// flight: `N·(replay_window + scan threshold) + 7N` (see
    /// `cx/queue.rs`).
    pub fn max_retained_nodes(&self) -> u64 {
        let n = self.threads as u64;
        n * (self.replay_window as u64 + queue::scan_threshold(self.threads) as u64) + 7 * n
    }

    /// An upper bound on CX-PTM's volatile memory, in bytes, closures'
    /// captures not included: `2N·(128·(N+1) + 8·dirty + 256 + 16·512)`
    /// for the `Combined` instances (with their filters of repeated lines), `(max_retained_nodes + 2N)·(96 + 16)` for the
    /// nodes and their boxed closures, `N·(16·undo + 512)` per thread.
    pub fn volatile_bytes_ptm(&self) -> u64 {
        let n = self.threads as u64;
        let filter = crate::redo::state::DirtyLines::filter_bytes();
        let combs =
            2 * n * (128 * (n + 1) + 8 * self.dirty_lines_per_replica as u64 + 256 + filter);
        let nodes = (self.max_retained_nodes() + 2 * n) * (96 + 16);
        let threads = n * (16 * self.undo_entries_per_thread as u64 + 512);
        combs + nodes + threads
    }
}

impl PoolConfig for Config {
    fn threads_mut(&mut self) -> &mut usize {
        &mut self.threads
    }

    fn validate(&self) -> Result<(), PtmError> {
        layout::validate_threads(self.threads, "2 x threads")?;
        layout::validate_ranges(&[
            ("replay_window", self.replay_window, 1usize, 1 << 30),
            (
                "dirty_lines_per_replica",
                self.dirty_lines_per_replica,
                1,
                1 << 28,
            ),
            (
                "undo_entries_per_thread",
                self.undo_entries_per_thread,
                0,
                1 << 28,
            ),
        ])
    }
}

/// Counters of what the threads of a CX-PTM or CX-PUC did, for tests and
/// benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CxStats {
    /// Successful `cur_comb` CASes.
    pub commits: u64,
    /// Replicas copied from the designated one (step {3}).
    pub copies: u64,
    /// Closures run on replicas (each node, once per replica it reaches).
    pub applied: u64,
    /// Of those, closures of other threads.
    pub helped: u64,
    /// Read-only transactions that ran on the designated replica.
    pub reads_direct: u64,
    /// Read-only transactions that enqueued themselves (R{2}).
    pub reads_published: u64,
    /// Of those, reads whose result an updater computed: every direct try
    /// after publishing failed and the thread collected its node's result.
    pub reads_collected: u64,
    /// `cur_comb` CAS tries that failed or found the lock taken.
    pub cas_retries: u64,
    /// Queue nodes disposed of (self-linked).
    pub disposed: u64,
    /// Queue nodes freed.
    pub freed: u64,
}

impl CxStats {
    /// The counters [`crate::Ptm::events`] reports for CX-PTM and CX-PUC.
    pub(crate) fn events(&self) -> Vec<(&'static str, u64)> {
        vec![("copies", self.copies), ("cas_retries", self.cas_retries)]
    }
}
