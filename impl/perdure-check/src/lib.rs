//! # perdure-check: the machinery that ties perdure's code to its specs
//!
//! * [`history`] — the durable-linearizability and detectability checker for
//!   histories with crashes (`HISTORY.md`), behind `perdure check-history`.
//! * [`litmus`] — the Px86 litmus engine (`PX86.md`): exhaustive TSO store
//!   buffers, flush and fence ordering, line-granular persistence with
//!   crashes at every point, behind `perdure litmus`. Its persistence rules
//!   are [`perdure_pm::px86`], shared with the simulated PM backend.
//! * [`explore`] — the crash explorer: scenarios run on the `Sim` backend
//!   under shuttle's seeded schedulers, crashes at every persistence event,
//!   every (or a sample of the) Px86 crash images recovered and checked with
//!   [`history`], behind `perdure explore`.
//! * [`trace`] — traces into TLC: `perdure trace-to-tla` and protocol-level
//!   traces of the implementation (`perdure trace`), validated against the
//!   TLA+ specs by `tools/trace-check.sh`.
//!
//! The `perdure` binary parses the command line and calls these modules
//! with typed options.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod explore;
pub mod history;
pub mod litmus;
pub mod sched;
pub mod trace;
