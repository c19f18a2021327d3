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
//! | [`redo`] | §5, Algorithms 1–3 | [`RedoPtm`]: `N + 1` replicas, Herlihy's combining consensus, physical redo/undo logs, null recovery |
//! | [`rwlock`] | §4, reference \[11\] | the strong try reader-writer lock every `Combined` carries |
//! | [`sti`] | Algorithm 1 | `SeqTidIdx`, the word `cur_comb`, heads and tickets are made of |
//! | [`replica`] | §4–§5 | the layout of a replica: roots, then the region allocator |
//! | [`registry`] | — | thread ids and nested transactions |
//! | [`front`] | — | `update_tx`/`read_tx` with leased ids and nesting, [`front::Handle`], for the CX constructions |
//! | `scenarios` (feature `check`) | — | crash-explorer scenarios: each construction with a counter, a queue, a set and a map (`tests/shuttle_explore_ptm.rs`) |
//! | `mutant` (feature `mutants`) | §4–§5 | mutants of the seed's steps, caught by `tests/shuttle_mutants_ptm.rs` and `tests/mutants_ptm.rs` (`MUTANTS.md`) |
//!
//! Not built yet (later work of issue 5): RedoTimed-PTM and RedoOpt-PTM
//! (§5), the data structures written against [`Ptm`], traces and
//! benchmarks.
//!
//! All constructions run on any [`perdure_pm::Backend`]: `Pmem`, `Msync`,
//! `NoFlush`, and `Sim`, the Px86 simulator the crash tests use.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

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

pub mod cx;
pub mod error;
pub mod front;
#[cfg(feature = "mutants")]
pub mod mutant;
pub mod redo;
pub mod registry;
pub mod replica;
pub mod rwlock;
#[cfg(feature = "check")]
pub mod scenarios;
pub mod sti;
pub mod tx;

pub(crate) use perdure_pm::sync;

pub use cx::{CxPtm, CxPuc};
pub use error::PtmError;
pub use redo::RedoPtm;
pub use rwlock::StrongTryRwLock;
pub use tx::{PPtr, PVar, PWord, Ptm, Transaction, TxRead, ROOTS};
