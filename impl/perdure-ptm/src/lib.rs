//! # perdure-ptm
//!
//! Wait-free persistent transactional memories from "Persistent Memory and
//! the Rise of Universal Constructions" (Correia, Felber, Ramalhete, EuroSys
//! 2020; seed 000): a sequential operation written as a closure becomes a
//! durable linearizable, wait-free transaction over persistent memory.
//!
//! | module | seed | what |
//! | --- | --- | --- |
//! | [`tx`] | §1, §4–§5 | the one interface: [`Ptm::update_tx`], [`Ptm::read_tx`], [`PVar`], [`PPtr`], allocation, roots; the determinism contract |
//! | [`cx`] | §4 | [`CxPtm`] and [`CxPuc`]: the turn queue, `2N` replicas, reclamation of queue nodes, null recovery |
//! | [`redo`] | §5, Algorithms 1–3 | [`RedoPtm`]: `N + 1` replicas, Herlihy's combining consensus, physical redo/undo logs, null recovery; its variants [`RedoTimedPtm`] (two-replica window with backoff) and [`RedoOptPtm`] (store and flush aggregation, non-temporal copies, full-flush switch) |
//! | [`breakdown`] | §6, Table 1 | per-thread time in apply, flush, copy, user code and waiting (cargo feature `breakdown`) |
//! | [`ds`] | §6 | the queue, sorted list set, red-black tree set, resizable hash set and map, SPS array, written once against [`Ptm`]; plain queue/set for [`CxPuc`] |
//! | [`rwlock`] | §4, reference \[11\] | the strong try reader-writer lock every `Combined` carries |
//! | [`sti`] | Algorithm 1 | `SeqTidIdx`, the word `cur_comb`, heads and tickets are made of |
//! | [`replica`] | §4–§5 | the layout of a replica: roots, then the region allocator |
//! | [`registry`] | — | thread ids and nested transactions |
//! | [`front`] | — | `update_tx`/`read_tx` with leased ids and nesting, [`front::Handle`], for the CX constructions |
//! | `trace_ev!` (feature `trace`) | — | hooks at the protocol steps the trace producer of `perdure-harness` maps to the specs (`perdure trace redo-ptm`, `perdure trace cx-ptm`) |
//! | `mutant` (feature `mutants`) | §4–§5 | mutants of the seed's steps, caught by `tests/shuttle_mutants_ptm.rs` and `tests/mutants_ptm.rs` (`MUTANTS.md`) |
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

#[macro_use(mutant)]
extern crate perdure_pm;

pub mod breakdown;
pub mod cx;
pub mod ds;
pub mod error;
pub mod front;
mod layout;
#[cfg(feature = "mutants")]
pub mod mutant;
pub mod redo;
pub mod registry;
pub mod replica;
pub mod rwlock;
pub mod sti;
pub mod tx;

pub(crate) use perdure_pm::sync;

pub use cx::{CxPtm, CxPuc};
pub use error::PtmError;
pub use redo::{RedoOptPtm, RedoPtm, RedoTimedPtm};
pub use registry::release_thread_ids;
pub use rwlock::StrongTryRwLock;
pub use tx::{PPtr, PVar, PWord, Ptm, Transaction, TxRead, ROOTS};
