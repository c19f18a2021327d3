//! # perdure-ptm
//!
//! Wait-free persistent transactional memories from "Persistent Memory and
//! the Rise of Universal Constructions" (Correia, Felber, Ramalhete, EuroSys
//! 2020; seed 000).
//!
//! | module | seed | what |
//! | --- | --- | --- |
//! | [`rwlock`] | §4, reference \[11\] | the strong try reader-writer lock every `Combined` carries |

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod rwlock;

pub(crate) use perdure_pm::sync;

pub use rwlock::StrongTryRwLock;
