//! # perdure-ptm
//!
//! Wait-free persistent transactional memories from "Persistent Memory and
//! the Rise of Universal Constructions" (Correia, Felber, Ramalhete, EuroSys
//! 2020; seed 000): a sequential operation written as a closure becomes a
//! durable linearizable, wait-free transaction over persistent memory.
//!
//! The API:
//!
//! | item | seed | what |
//! | --- | --- | --- |
//! | [`Ptm`], [`Transaction`], [`TxRead`], [`PVar`], [`PPtr`], [`ROOTS`] | §1, §4–§5 | the one interface: [`Ptm::update_tx`], [`Ptm::read_tx`], allocation, roots; the determinism contract |
//! | [`CxPtm`], [`CxPuc`] ([`cx`]) | §4 | the turn queue, `2N` replicas, reclamation of queue nodes, null recovery |
//! | [`RedoPtm`], [`RedoTimedPtm`], [`RedoOptPtm`] ([`redo`]) | §5, Algorithms 1–3 | `N + 1` replicas, Herlihy's combining consensus, physical redo/undo logs, null recovery; the two-replica window with backoff; store and flush aggregation, non-temporal copies, full-flush switch |
//! | [`Handle`], [`Front`] | — | a thread's leased id, and nested transactions, for every construction |
//! | [`ds`] | §6 | the queue, sorted list set, red-black tree set, resizable hash set and map, SPS array, written once against [`Ptm`]; plain queue/set for [`CxPuc`] |
//! | [`breakdown`] | §6, Table 1 | per-thread time in apply, flush, copy, user code and waiting (cargo feature `breakdown`) |
//! | [`StrongTryRwLock`] | §4, reference \[11\] | the strong try reader-writer lock every `Combined` carries |
//!
//! Inside (private modules, each citing the seed): `sti` (Algorithm 1's
//! `SeqTidIdx`, the word `cur_comb`, heads and tickets are made of),
//! `replica` (a replica's roots, then its region allocator), `layout` (the
//! pool: header, `cur_comb`, replicas), `registry` (thread ids, nesting),
//! `front` (`update_tx`/`read_tx` over a construction's two entry points).
//! The checking hooks — `trace_ev!` (feature `trace`) and `mutant!` with
//! [`mutant`] (feature `mutants`) — are used by `perdure-harness` and the
//! crate's tests (`MUTANTS.md`).
//!
//! All constructions run on any [`perdure_pm::Backend`]: `Pmem`, `Msync`,
//! `NoFlush`, and `Sim`, the Px86 simulator the crash tests use.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

/// A trace hook at a protocol step (`crate::trace_ev!(&pool, Step(args..))`):
/// reports the step through [`perdure_pm::trace_step!`] with feature
/// `trace` (ordered among the pool's `Sim` events); without it, nothing,
/// and its arguments are not evaluated. The steps the trace producer
/// (perdure-harness) maps to the specs' actions, thread ids 0-based:
///
/// | step | where | seed |
/// | --- | --- | --- |
/// | `Announce(tid, seq)` | Redo `publish` | Algorithm 3 {1} (L2–L3): `req[tid]`, `announce[tid]` |
/// | `Lock(tid, Some(comb))` | Redo {5} after `exclusiveTryLock`; CX {2} `lock_any` | Alg. 3 L18; §4 step 2 |
/// | `GiveUp(tid)` | RedoTimed `lock_combined` giving the attempt up: `cur_comb` moved while it backed off | §5 "Timed variant" |
/// | `Simulate(tid, comb)` | Redo {7}, before the first closure runs | Alg. 3 L20 |
/// | `Apply(tid, owner, seq)` | Redo {7}, after each request's closure ran | Alg. 3 L23–L24 |
/// | `Unlock(tid, comb)` | Redo L41; CX when a thread leaves its replica | Alg. 3 L41; §4 steps 2, 6 |
/// | `Enqueue(tid, ticket)` | CX `publish` (updates and enqueued reads) | §4 step 1, `applyRead` step 2 |
macro_rules! trace_ev {
    ($pool:expr, Announce($tid:expr, $seq:expr)) => {
        perdure_pm::trace_step!(pool = $pool; "Announce", thread = $tid, seq = $seq)
    };
    ($pool:expr, Lock($tid:expr, $comb:expr)) => {
        perdure_pm::trace_step!(pool = $pool; "Lock", thread = $tid, comb = $comb)
    };
    ($pool:expr, GiveUp($tid:expr)) => {
        perdure_pm::trace_step!(pool = $pool; "GiveUp", thread = $tid)
    };
    ($pool:expr, Simulate($tid:expr, $comb:expr)) => {
        perdure_pm::trace_step!(pool = $pool; "Simulate", thread = $tid, comb = $comb)
    };
    ($pool:expr, Apply($tid:expr, $owner:expr, $seq:expr)) => {
        perdure_pm::trace_step!(pool = $pool; "Apply", thread = $tid, owner = $owner, seq = $seq)
    };
    ($pool:expr, Unlock($tid:expr, $comb:expr)) => {
        perdure_pm::trace_step!(pool = $pool; "Unlock", thread = $tid, comb = $comb)
    };
    ($pool:expr, Enqueue($tid:expr, $ticket:expr)) => {
        perdure_pm::trace_step!(pool = $pool; "Enqueue", thread = $tid, ticket = $ticket)
    };
}
pub(crate) use trace_ev;

/// Adds each thread's counters `$field` (atomics of the per-thread counter
/// blocks `$threads`) into the same fields of `$sum` (CX's and Redo-PTM's
/// `stats()`).
macro_rules! sum_counters {
    ($sum:ident += $threads:expr; $($field:ident),+ $(,)?) => {
        for t in $threads.iter() {
            $($sum.$field += t.$field.load(std::sync::atomic::Ordering::Relaxed);)+
        }
    };
}
pub(crate) use sum_counters;

#[macro_use(mutant)]
extern crate perdure_pm;

pub mod breakdown;
pub mod cx;
pub mod ds;
mod error;
mod front;
mod layout;
#[cfg(feature = "mutants")]
#[doc(hidden)]
pub mod mutant;
pub mod redo;
mod registry;
mod replica;
mod rwlock;
mod sti;
mod tx;

/// What the checking harness (`perdure-harness`) and the crate's own tests
/// read of the internals; not part of the API.
#[doc(hidden)]
pub mod internals {
    pub use crate::layout::{CUR_COMB, REPLICAS};
    /// Algorithm 1's `SeqTidIdx`: the parts of a `cur_comb` word.
    pub mod sti {
        pub use crate::sti::{idx, seq, tid};
    }
}

pub(crate) use perdure_pm::sync;

pub use cx::{CxPtm, CxPuc};
pub use error::PtmError;
pub use front::{Front, Handle};
pub use redo::{RedoOptPtm, RedoPtm, RedoTimedPtm};
pub use registry::release_thread_ids;
pub use rwlock::StrongTryRwLock;
pub use tx::{PPtr, PVar, PWord, Ptm, Transaction, TxRead, ROOTS};
