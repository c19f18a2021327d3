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
//! | `trace` (feature `trace`) | — | protocol-level traces of Redo-PTM and CX-PTM on the `Sim` backend, for TLC (`perdure trace redo-ptm`, `perdure trace cx-ptm`) |
//! | `scenarios` (feature `check`) | — | crash-explorer scenarios: each construction with a counter, a queue, a set and a map (`tests/shuttle_explore_ptm.rs`) |
//! | `mutant` (feature `mutants`) | §4–§5 | mutants of the seed's steps, caught by `tests/shuttle_mutants_ptm.rs` and `tests/mutants_ptm.rs` (`MUTANTS.md`) |
//!
//! All constructions run on any [`perdure_pm::Backend`]: `Pmem`, `Msync`,
//! `NoFlush`, and `Sim`, the Px86 simulator the crash tests use.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

/// A trace hook (`crate::trace_ev!(&pool, Variant(args..))`): with feature
/// `trace`, reports a protocol step to [`trace`] (ordered among the `Sim`
/// backend's events); without it, expands to nothing (its arguments are
/// not evaluated; also under loom and shuttle, whose models do not trace).
#[cfg(all(feature = "trace", not(any(perdure_loom, perdure_shuttle))))]
macro_rules! trace_ev {
    ($pool:expr, $variant:ident ( $($arg:expr),* )) => {
        $crate::trace::emit($pool, $crate::trace::Ev::$variant($($arg),*))
    };
}
#[cfg(not(all(feature = "trace", not(any(perdure_loom, perdure_shuttle)))))]
macro_rules! trace_ev {
    ($pool:expr, $variant:ident ( $($arg:expr),* )) => {};
}
pub(crate) use trace_ev;

/// Whether the named `mutant::Mutant` is switched on: a hook at a seed step
/// that a mutant removes or reorders. A constant `false` unless the feature
/// `mutants` is enabled.
#[cfg(feature = "mutants")]
macro_rules! mutant {
    ($m:ident) => {
        crate::mutant::active(crate::mutant::Mutant::$m)
    };
}
#[cfg(not(feature = "mutants"))]
macro_rules! mutant {
    ($m:ident) => {
        false
    };
}

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
#[cfg(feature = "check")]
pub mod scenarios;
pub mod sti;
#[cfg(all(feature = "trace", not(any(perdure_loom, perdure_shuttle))))]
pub mod trace;
pub mod tx;

pub(crate) use perdure_pm::sync;

pub use cx::{CxPtm, CxPuc};
pub use error::PtmError;
pub use redo::{RedoOptPtm, RedoPtm, RedoTimedPtm};
pub use registry::release_thread_ids;
pub use rwlock::StrongTryRwLock;
pub use tx::{PPtr, PVar, PWord, Ptm, Transaction, TxRead, ROOTS};
