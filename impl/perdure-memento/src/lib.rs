//! # perdure-memento
//!
//! Memento (Cho, Jeon, Kang — "Practical Detectability for Persistent
//! Lock-Free Data Structures", seed 001): detectable operations on
//! persistent memory, their stable composition, PM-safe reclamation, and
//! detectable lock-free structures built from them.
//!
//! An operation is *detectable* if, after a crash, re-running it with the
//! same *memento* — a small per-thread checkpoint object in persistent
//! memory — finishes it exactly once and returns the result it took effect
//! with. Memento builds every detectable operation from a few primitives:
//!
//! | item | seed | what |
//! | --- | --- | --- |
//! | [`ClockKind`] | §2.5, §3.1 | `rdtscp` timestamps, calibrated at start-up |
//! | [`Checkpoint`] | §2.2 | stabilise a value |
//! | [`DetectableCasAtomic`], [`CasMmt`] | §3, Algorithms 1–2 | detectable CAS in O(1) space per location (16 bytes), with helping; exactly once for any caller |
//! | [`UniqueCasAtomic`], [`OneWord`], [`TwoWord`], [`CasForm`] | §3.1 | the seed's one-word location, for structures that never install a value twice (an `unsafe` constructor states that) |
//! | [`InsDelAtomic`] | §4, Algorithms 3–4 | detectable insert/delete, checkpointed in the blocks |
//! | [`memento!`], [`Memento`], [`NoMmt`], [`Scan`] | §2.3–2.4 | composite mementos, Requirements 1–3 |
//! | [`Runtime`], [`Handle`], [`Config`] | §2.5, §6, §6.3 | the pool layout, the monitor, thread and full crashes, memento clearing, epoch-based reclamation with deferred flushes |
//! | [`ds`] | §5, §7 | the detectable structures |
//! | [`baseline`] | §7.1 | DurableQ and LogQ (Friedman et al., PPoPP 2018): the queues Memento's MSQs are compared with |
//! | [`word`] | §3, §4 | the word encodings (parity, thread id, timestamp tags) a structure's words carry |
//!
//! The source modules behind these items (`ts`, `checkpoint`, `cas`,
//! `insdel`, `compose`, `ebr`, `runtime`) are private; each cites the seed
//! step it implements.
//!
//! ## Making a lock-free operation detectable (§2.4)
//!
//! Take a volatile Treiber-stack push:
//!
//! ```text
//! fn push(stack, v):
//!     node = alloc(); node.val = v
//!     loop:
//!         top = stack.top.load()
//!         node.next = top
//!         if stack.top.cas(top, node): return
//! ```
//!
//! 1. **Replace each plain CAS** by a detectable one ([`DetectableCasAtomic::cas`]) or by an
//!    insert/delete ([`InsDelAtomic`]), each with a **fresh sub-memento** (Requirement 1).
//! 2. **Put the code in SSA form; give every loop containing detectable operations a single
//!    φ-node and checkpoint it** at the head of each iteration (Requirement 3) —
//!    [`Handle::detectable_loop`] does exactly that.
//! 3. **Checkpoint every value that must be stable** (Requirement 2): CAS inputs, branch
//!    conditions — found by walking back from them. Here: the node (an allocation is
//!    non-deterministic) and `top` (a load). [`Checkpoint::checkpoint_with`] skips the
//!    expression in recovery, so the allocation is not repeated — nor anything written
//!    inside it: `pwb` what it writes (a fence then orders it before the checkpoint).
//!
//! ```
//! use perdure_memento::{memento, Checkpoint, CasMmt, DetectableCasAtomic, Handle, Memento};
//! use perdure_pm::Backend;
//! use std::ops::ControlFlow;
//!
//! memento! {
//!     /// Push's memento: one sub-memento per detectable call site.
//!     pub struct PushMmt {
//!         /// Step 3: the allocated node.
//!         pub node: Checkpoint<1>,
//!         /// Step 2: the loop's φ-node (the expected top).
//!         pub top: Checkpoint<1>,
//!         /// Step 1: the detectable CAS.
//!         pub cas: CasMmt,
//!     }
//! }
//!
//! /// Detectable push onto a stack whose top is a detectable-CAS location.
//! /// Node layout: [value, next].
//! fn push<B: Backend, M: Memento>(
//!     top: DetectableCasAtomic,
//!     v: u64,
//!     h: &mut Handle<'_, '_, B, M>,
//!     mmt: &mut PushMmt,
//! ) -> Result<(), perdure_memento::MementoError> {
//!     let [node] = mmt.node.checkpoint_with(h, |h| {
//!         let n = h.alloc(16)?;
//!         h.store(n, v);
//!         h.pwb(n, 16); // persisted before the checkpoint: recovery skips this closure
//!         Ok::<_, perdure_memento::MementoError>([n])
//!     })?;
//!     let first = top.load(h);
//!     h.detectable_loop(&mut mmt.top, [first], |h, [t]| {
//!         h.store(node + 8, t);   // node.next = top (the node is private)
//!         h.flush(node, 16);      // persist the node before publishing it
//!         match top.cas(t, node, h, &mut mmt.cas) {
//!             Ok(()) => ControlFlow::Break(Ok(())),
//!             Err(cur) => ControlFlow::Continue([cur]),
//!         }
//!     })
//! }
//! ```
//!
//! After a crash anywhere in `push`, the runtime re-runs it with the same memento in recovery
//! mode: `node` comes back from its checkpoint (no second allocation), the loop resumes in the
//! iteration it was in, and the CAS reports whether it took effect — so the value is pushed
//! exactly once. [`ds::treiber`] is this stack, complete with pop and reclamation. A pop lets
//! the same node become the top again: [`DetectableCasAtomic`]'s 16-byte location is exactly
//! once under that ABA too (the seed's one-word location is not; [`UniqueCasAtomic`]).
//!
//! ## Running an application (§2.5)
//!
//! [`Runtime::create`] lays out a pool: the header, HELP, one root memento per thread, and a
//! heap. Each thread takes a [`Handle`] and calls [`Handle::run_root`] for each of its root
//! operations; after a crash [`Runtime::open`] calibrates the clock and every thread resumes its
//! operation with its memento. Thread crashes (a thread dies, the process lives) are re-run by
//! `run_root` itself; [`Handle::crash_after`] injects them at persistence events for testing.
//!
//! ## Backends
//!
//! Generic over [`perdure_pm::Backend`]: `Pmem` (clwb/clflushopt + sfence; a successful locked
//! CAS completes earlier flushes, as the seed relies on), `Msync` (an ordinary file), `NoFlush`,
//! and `Sim` (the Px86 simulator the crash explorer and the tests use).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[macro_use(mutant, pause)]
extern crate perdure_pm;

pub mod baseline;
mod cas;
mod checkpoint;
mod compose;
pub mod ds;
mod ebr;
mod insdel;
#[cfg(feature = "mutants")]
#[doc(hidden)]
pub mod mutant;
mod patience;
mod runtime;
mod ts;
pub mod word;

pub(crate) use perdure_pm::sync;

pub use cas::{CasForm, CasMmt, DetectableCasAtomic, OneWord, TwoWord, UniqueCasAtomic};
pub use checkpoint::Checkpoint;
pub use compose::{Memento, NoMmt, Scan};
pub use insdel::InsDelAtomic;
pub use runtime::{
    quiet_thread_crashes, ClearMode, Completed, Config, Handle, MementoError, Runtime, ThreadCrash,
    DEFAULT_PATIENCE_COUNTER, DEFAULT_PATIENCE_TSC,
};
pub use ts::{tsc_available, ClockKind};

#[doc(hidden)]
pub use compose::align_up as __align_up;
#[doc(hidden)]
pub use perdure_pm::Backend as __Backend;
#[doc(hidden)]
pub use perdure_pm::Pool as __Pool;
