//! # The Px86 litmus engine behind `perdure litmus`
//!
//! Implements the operational reading of Px86 in `PX86.md` (after Raad,
//! Wickerson, Neiger and Vafeiadis, POPL 2020, with `clwb` and non-temporal
//! stores after Raad, Maranget and Vafeiadis, POPL 2022) and decides the
//! `allow`/`forbid` expectations of `*.litmus` files by exhaustive
//! exploration, with a crash possible at every point.
//!
//! * [`syntax`] — the file format ([`parse`], [`parse_file`], [`Test`],
//!   typed [`ParseError`]s with file and line).
//! * [`engine`] — the machine and the explorer ([`run`], [`Report`]).
//! * [`report`] — what `perdure litmus` does: [`check_paths`] runs a set of
//!   files, [`render`] and [`Summary`] say what they found.
//!
//! ## The operational model
//!
//! A machine state ([`engine`]'s `Machine`) holds, per thread, the program
//! counter, the registers (each either not yet written or holding a value),
//! a FIFO store buffer of `store`, `clflush` and `sfence` entries, and the
//! *pending* `clflushopt`/`clwb`/`ntstore`s, each tagged with its place in
//! program order; and, per cache line, a
//! [`perdure_pm::px86::LineHistory`] — the stores that became visible to
//! the line, in order, and the mark (how many are guaranteed persisted) —
//! over a base snapshot. Visible memory is each line's base with its whole
//! sequence applied. The persistence rules (appending a visible store,
//! raising the mark when a flush takes effect, a non-temporal store visible
//! and persisted at once, which prefixes a crash may keep) are exactly
//! those of `perdure_pm::px86`, shared with the `Sim` backend; this module
//! adds *when* each of those events may happen. A machine step is one of:
//!
//! | step | enabled when | effect | PX86.md rule |
//! | --- | --- | --- | --- |
//! | execute `store x v` | always | enters the buffer | "enters the thread's store buffer" |
//! | execute `clflush x` | always | enters the buffer | "ordered like a store (FIFO with the thread's stores)" |
//! | execute `sfence` | always | enters the buffer as a barrier | "waits for ... before any younger store becomes visible" |
//! | execute `clflushopt x` / `clwb x` | always | pending | "take effect at some point after ..." |
//! | execute `ntstore x v` | always | pending | "at some point before the thread's next fence or locked RMW completes" |
//! | execute `load r x` | always | `r` := newest own buffered/pending store to `x`, else visible `x` | "reads the newest own buffered store to `x`, else visible memory" |
//! | execute `mfence` | buffer empty, nothing pending | — | "drain the store buffer"; flushes/ntstores done "no later than the next ... mfence" |
//! | execute `cas`/`xchg`/`faa` | buffer empty, nothing pending | read and write visible memory atomically; the write is appended to the line | "locked RMWs ... drain the store buffer" |
//! | drain a buffered store | it is the head; no older pending flush of its line, no older pending ntstore to its location | appended to its line's sequence | "becomes visible, in FIFO order"; "younger stores (to other lines) may become visible before it" |
//! | drain a buffered `clflush x` | it is the head | mark of `line(x)` := length | "the mark of `line(x)` is raised to the current length" |
//! | drain a buffered `sfence` | it is the head; no older pending flush/ntstore | — | "`sfence` waits for the thread's older `clflushopt`/`clwb`/non-temporal stores" |
//! | a pending `clflushopt`/`clwb x` takes effect | no older store to `line(x)` in the buffer or pending; no older `sfence` in the buffer | mark of `line(x)` := length | "after all older stores of the thread to `line(x)`, all older loads and RMWs, and all older fences" |
//! | a pending `ntstore x v` takes effect | no older `sfence` in the buffer; no older store/ntstore to `x` still buffered/pending | appended and mark := length | "becomes visible and persisted together" |
//!
//! Loads and RMWs take effect when they execute, and threads execute in
//! program order, so "after all older loads and RMWs" holds for every
//! pending flush by construction; an `mfence` completes when it executes,
//! so it is never an unfinished older fence. "No later than the thread's
//! next `sfence`, `mfence` or locked RMW completes" is the other side of the
//! same checks: an `sfence` cannot leave the buffer, nor an `mfence`/RMW
//! execute, while an older flush or ntstore is pending.
//!
//! **Crashes.** Every reachable state is a crash point: the initial state
//! (a crash before anything runs), every intermediate state, and the states
//! where every thread has finished (with or without buffered stores left).
//! At a crash point each line independently keeps a prefix of its sequence
//! at least as long as its mark ([`perdure_pm::px86::CrashImages`]
//! enumerates every combination); registers, buffers and visible memory are
//! lost. The *outcome* of a crash is, for every location the expectations
//! name, its persisted value, and for every register they name, its value
//! at the crash (or "not written", printed `_`).
//!
//! **Expectations.** `allow O` is met when some execution and crash point
//! yield an outcome that agrees with every `loc=val` and `reg=val` of `O` (a
//! register must have been written before the crash, and its latest value
//! counts); `forbid O` is met when none does. Locations and registers `O`
//! does not name are unconstrained.
//!
//! ## State space, and what is exhaustive
//!
//! Exploration is a depth-first search over machine states with a hash set
//! of the states seen: every reachable state is expanded once, and every
//! step enabled in it is taken. Programs have no loops and every step
//! either executes an instruction, removes a buffer entry or removes a
//! pending entry, so the state graph is acyclic and finite, and every path
//! has at most `2 n` steps for `n` instructions in all. A thread of `n`
//! instructions, `k` of them `clflushopt`/`clwb`/`ntstore`, has at most
//! `(n + 1)^2 * 2^k` (program counter, buffer, pending set) combinations
//! (the buffer is a contiguous run of its executed stores, clflushes and
//! sfences); states multiply across threads, and with the register values
//! read and the order in which stores reach each line. The per-line histories are
//! *compacted* after every flush and ntstore (the guaranteed-persisted
//! prefix is folded into the base), which merges executions that differ
//! only in what is certainly persisted already. Crash outcomes depend only
//! on the lines and registers the expectations name, so each distinct
//! projection of a state onto those is enumerated once. The tests of
//! `modelcheck/litmus/` have at most a few thousand states each. An
//! exploration stops at [`Limits::max_states`] (default two million); the
//! report then says it is incomplete and every expectation it did not
//! decide is [`Status::Undecided`], which `perdure litmus` counts as unmet.
//!
//! Within the model everything is exhaustive: every interleaving of thread
//! steps, buffer drains and pending flushes/ntstores; every crash point;
//! every persisted image. Not covered: anything outside the model —
//! `lfence`, string operations, memory types other than write-back, sizes
//! other than one location per access (a location is an indivisible word;
//! a 16-byte store is two stores), and instruction reordering that x86
//! performs but that is unobservable in TSO.
//!
//! ## Resolved ambiguities of PX86.md
//!
//! * **Younger stores to the flushed line.** "Younger stores (to other
//!   lines) may become visible before [a clflushopt/clwb] takes effect" is
//!   read as: a younger store of the same thread *to the same line* may
//!   not. (Otherwise the mark could cover a store that became visible after
//!   the flush; see `clflushopt+sameline-younger.litmus`.)
//! * **ntstore and older stores.** PX86.md gives ntstore only an upper bound
//!   ("before the thread's next fence or locked RMW completes"), so a
//!   pending ntstore may take effect before the thread's older buffered
//!   stores to *other* locations become visible (Intel SDM vol. 3 §8.2.2:
//!   streaming stores are an exception to write ordering). Older stores and
//!   ntstores to the *same* location go first, and a younger store to a
//!   location does not overtake a pending ntstore to it (per-location
//!   coherence). A younger sfence orders it ("any younger store" includes
//!   ntstores).
//! * **Loads after an ntstore** read it while it is pending, like a buffered
//!   store (a thread reads its own latest write).
//! * **A failed `cas`** is a locked read: it drains the buffer and completes
//!   pending flushes like any locked RMW, sets its register to 0, and writes
//!   nothing (so it adds nothing to the line's sequence).
//! * **A locked RMW's own write** becomes visible when it executes but is
//!   not persisted by it (no rule says so): only a flush or a later
//!   ntstore to the line raises the mark.
//! * **Registers in outcomes** are the register's value at the crash; a
//!   register written twice counts with its latest value, and one not yet
//!   written matches no `reg=val`.
//!
//! ## Where this engine and the `Sim` backend differ
//!
//! Both apply the persistence rules of `perdure_pm::px86` (line sequences,
//! marks, prefixes at least the mark). The differences:
//!
//! * **Store buffers.** The `Sim` backend (`perdure_pm::sim`) runs the
//!   implementation's threads under sequentially consistent interleavings:
//!   a store is visible to every thread when it executes, so there is no
//!   store-to-load reordering and no store-buffer forwarding to observe, and
//!   a fence only orders persistence. This engine has full x86-TSO store
//!   buffers, so it also produces the outcomes that come from buffered
//!   stores (`SB`, `SB+sfence`, `SB+forwarding`, a flush or ntstore
//!   reordered with a buffered store, `ntstore+older-store`). Persistence-only
//!   outcomes agree.
//! * **When a write-back takes effect.** `Sim` lets a `pwb` take effect at
//!   its issue (the mark rises, at the next fence, to the line's length when
//!   the `pwb` was issued); this engine lets a `clflushopt`/`clwb` take
//!   effect at any point between its lower bounds and the next fence. The
//!   earliest point constrains crashes least, so both give the same set of
//!   crash images for the same visible history.
//! * **Locked RMWs.** Here every locked RMW, successful or failed, completes
//!   the thread's pending flushes and ntstores, as PX86.md says. `Sim` does
//!   so only with `SimOptions::rmw_completes_flushes` (off by default, so
//!   that code that must also run on the `Msync` backend fences explicitly),
//!   and then for successful RMWs.

pub mod engine;
pub mod report;
pub mod syntax;

pub use engine::{run, run_with, Limits, Report, Stats, Status, Step, Verdict, Witness};
pub use report::{
    check_paths, collect_files, render, summarize, FileResult, RenderOptions, Summary,
};
pub use syntax::{
    parse, parse_file, Expectation, Instr, Key, ParseError, ParseErrorKind, Polarity, Test, Thread,
    Value,
};
