//! # perdure-relax
//!
//! Mirror's dual-replica persistent atomic and RELAX's lazy recovery
//! (Friedman, Petrank et al.; seed 002, a thesis: Mirror in Chapter 4, RELAX
//! in Chapter 6, the correctness argument in Chapter 7).
//!
//! Mirror makes a lock-free structure durable by giving every shared field
//! two replicas — one in NVMM, one in DRAM at the same offset — writing NVMM
//! first (double-width CAS with a sequence number, write-back, fence) and
//! DRAM second, and reading DRAM only. After a crash Mirror copies every
//! reachable node back to DRAM before the first operation; RELAX instead
//! starts at once and copies each field the first time it is touched, with
//! `recover_field` and one of five ways of tracking what has been recovered.
//!
//! | item | seed | what |
//! | --- | --- | --- |
//! | [`PAtomic`], [`PAtomicPtr`] | Algorithm 4.1; Algorithms 6.2–6.4 | Mirror's CAS, load, store, fetch-add; `recover_field`, its pointer variant, the markable load |
//! | [`Node`], [`FieldKind`] | §6.4.2 | a node's fields; `recover_node` and the eager trace from them |
//! | [`Space`], [`Handle`], [`Config`], [`OpenOptions`], [`Tracking`], [`DramInit`] | Chapter 4, §6.2, §6.4–6.6 | layout, roots, mirrored allocation on `perdure_pm::heap` (§6.5.1), epoch-based reclamation, the tracking variants (with the O(1)-initialisation bitset of §6.4.1), lazy and eager recovery; the volatile mirror region, zeroed or garbage after a crash |
//! | [`ds`] | Chapter 8 | Harris's list, a hash table of Harris lists, a skip list (Fraser), a BST (Natarajan–Mittal), an array |
//!
//! The source modules behind these items (`patomic`, `node`, `space`,
//! `bitset`, `dram`) are private; each cites the seed step it implements.
//! Checking hooks: `audit` (feature `check`: the reclamation audit's log,
//! read by `perdure-harness`), `trace_ev!` (feature `trace`), `mutant!`
//! and `pause!` (feature `mutants`).
//!
//! ## Evidence, and what it does not cover
//!
//! | check | what it explores |
//! | --- | --- |
//! | `tests/suite/mirror.rs` | Mirror's invariants (Claim 2) sequentially under every variant and under 3 contending threads with a concurrent sampler; a half-done write helped; Figure 6.2; `recover_field` over every relation of the garbage and NVMM sequences |
//! | `tests/crash_sim.rs` | Px86 crash images (`perdure_pm::Sim`) of list and hash-table runs, recovered lazily under every variant with zeroed and garbage DRAM; a second crash inside the recovering execution; crashes with two threads operating |
//! | `tests/suite/concurrent.rs` | 3 threads on every variant, before and right after a (quiescent) crash, recovering concurrently |
//! | `tests/lazy.rs` | what each variant recovers, read off the DRAM replica |
//! | `tests/shuttle_relax.rs` | shuttle schedules of `recover_field` racing Mirror's CAS over adversarial garbage |
//! | `tests/shuttle_explore_relax.rs` (feature `check`: `scenarios`) | the crash explorer on every structure × variant × DRAM fill: shuttle schedules, a crash at every persistence event (sampled on longer runs), Px86 images, 3 threads operating and recovering lazily at once after the crash, durable linearizability of the history; two mutants it must catch (`explore:relax/…` rows; also `perdure explore relax-…`) |
//! | `tests/mutants_relax.rs` (feature `mutants`, which the crate's own tests enable) | seven mutants, each caught: four drop a step of the seed; three put back a listing as written that `specs/relax` found wrong (Findings M1, R1, R2), caught by deterministic replays of the TLA+ counterexamples with threads held at pause points |
//! | `tests/suite/sets_model.rs` | the skip list and the BST against a `BTreeSet`: seeded random operations under every variant that applies to each (the skip list refuses `Markable`), then a quiescent crash with garbage DRAM and more operations; reclamation under churn on a heap too small to leak into |
//! | `tests/suite/sets_concurrent.rs` | 3 threads on the skip list and the BST under every applicable variant, disjoint and overlapping keys, before and right after a crash, recovering concurrently |
//! | `tests/shuttle_sets.rs` (feature `check`) | shuttle random and PCT schedules of 2–3 threads racing on the skip list and the BST under every applicable variant, without a crash, after a quiescent crash (zeroed and garbage DRAM, threads racing the lazy recovery of the same nodes) and after a crash that cut off a remove; every history checked linearizable by brute force; the reclamation audit (`audit`) after each; four set mutants and `Line44Once` (Finding M2, which these schedules found) caught; they also found a reclamation-epoch bug in `space` and a skip-list retire of a still-linked node (both fixed; `tests/suite/reclaim_epoch.rs` forces the first) |
//! | `tests/sets_crash_sim.rs` | Px86 crash images of skip-list and BST runs, recovered lazily (and eagerly) under every applicable variant with zeroed and garbage DRAM; two threads operating at the crash; a second crash inside the recovering execution |
//! | `traces/relax/` (`tests/trace_relax.rs` for the producer) | traces of one field — seeded schedules, a crash, garbage DRAM, 2–3 threads recovering it concurrently — replayed by TLC as steps of `specs/relax/RelaxRecoverField.tla` (and, with eager recovery, `Mirror.tla`), with the abstract register and Claim 2 checked at every step (`trace:relax/…` rows) |
//! | `tests/suite/bad_input.rs` | typed errors for bad pools, configurations, roots and pointers |
//!
//! Not covered yet: weak-memory behaviour (no loom model of this crate;
//! the tests run on x86-64, whose TSO plus the `SeqCst` accesses used here
//! is what the algorithm needs), 16-byte CASes persisting as two halves
//! (Mirror relies on the pair sharing a cache line), and a recovery-time
//! collection of what a crash leaks (see [`Space`]).
//!
//! ```
//! use perdure_pm::{NoFlush, Pool};
//! use perdure_relax::{ds::HarrisList, Config, OpenOptions, Space, Tracking};
//! # fn main() -> Result<(), perdure_relax::RelaxError> {
//! let pool = Pool::volatile("relax-doc", 8 << 20, NoFlush)?;
//! let base = pool.data_offset().next_multiple_of(4096);
//! let cfg = Config { heap_bytes: 4 << 20, ..Config::default() };
//! let space = Space::create(&pool, base, &cfg, OpenOptions::new(Tracking::Markable))?;
//! let mut h = space.handle()?;
//! let list = HarrisList::create(&mut h, 0)?;
//! assert!(list.insert(&mut h, 7)?);
//! assert!(list.contains(&mut h, 7)?);
//! # Ok(()) }
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use perdure_pm::sync;

#[macro_use(mutant, pause)]
extern crate perdure_pm;

/// `trace_ev!(off, "Action", key = value, …)`: the calling thread took
/// protocol step `Action` on the field at `off`, reported through
/// [`perdure_pm::trace_step!`] (with the offset as `field`) to the trace
/// producer of perdure-harness (`perdure trace relax`); nothing without the
/// `trace` feature, and the arguments are not evaluated then.
macro_rules! trace_ev {
    ($off:expr, $action:literal $(, $k:ident = $v:expr)* $(,)?) => {
        perdure_pm::trace_step!($action, field = $off $(, $k = $v)*)
    };
}

#[cfg(feature = "check")]
#[doc(hidden)]
pub mod audit;
mod bitset;
mod dram;
pub mod ds;
mod error;
#[cfg(feature = "mutants")]
#[doc(hidden)]
pub mod mutant;
mod patomic;
mod space;

/// What the crate's own tests read of the internals; not part of the API.
#[doc(hidden)]
pub mod internals {
    pub use crate::bitset::Bitset;
}

pub use dram::DramInit;
pub use error::RelaxError;
pub use patomic::{PAtomic, PAtomicPtr, RECOVERY_MARK};
/// `crate::node`: the node contract, which lives under the space that
/// manages the nodes (the two refer to each other).
use space::node;
pub use space::node::{FieldKind, Node};
pub use space::{Config, Handle, OpenOptions, Space, Tracking};
