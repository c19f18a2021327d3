//! # perdure-harness
//!
//! The checking machinery of perdure's three constructions, kept out of
//! their crates (which expose only hidden hooks: `perdure_pm::hooks`):
//!
//! | module | what |
//! | --- | --- |
//! | [`ptm`] | crash-explorer scenarios of the five PTMs (counter, queue, set, map) and the protocol-trace producer of `perdure trace redo-ptm|redo-timed|redo-opt|cx-ptm|cx-puc` |
//! | [`memento`] | crash-explorer scenarios of every detectable structure and primitive, and the trace producer of `perdure trace memento-…` |
//! | [`relax`] | crash-explorer scenarios of every RELAX structure × tracking variant × DRAM fill, and the trace producer of `perdure trace relax` |
//! | [`heapcount`] | a global allocator counting each thread's live heap bytes, for the tests that check a drop frees what it should |
//! | [`report`] | the PERDURE-CHECK rows of the constructions' explorer and mutant tests |
//! | [`svg`] | the benchmarks' SVG line plots |
//! | [`traces`] | what the PTM and Memento trace producers share: their error type, the crash image a run is recovered from |
//!
//! [`scenarios`] lists every scenario of every construction: what `perdure
//! explore --list` shows.
//!
//! Layering: `perdure-pm` at the bottom; `perdure-check` and the
//! constructions each on `perdure-pm` alone; this crate on the checker and
//! the constructions; the `perdure` command line on top. The constructions'
//! tests, benches and the command line use it; no construction depends on
//! it outside `[dev-dependencies]`.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod bench;
pub mod heapcount;
pub mod kvbench;
pub mod memento;
pub mod ptm;
pub mod relax;
pub mod report;
mod session;
pub mod svg;
pub mod traces;

use perdure_check::explore::Scenario;
use std::sync::Arc;

/// Every crash-explorer scenario of every construction, in the order
/// `perdure explore --list` shows them after the checker's own (the
/// tutorial log): Memento's, RELAX's, then the PTMs' (which explore only in
/// a `--cfg perdure_shuttle` build; elsewhere opening one reports why).
pub fn construction_scenarios() -> Vec<Arc<dyn Scenario>> {
    let mut all = memento::scenarios::all();
    all.extend(relax::scenarios::all());
    all.extend(ptm::scenarios::all());
    all
}

/// Every scenario: the checker's own, then [`construction_scenarios`].
pub fn scenarios() -> Vec<Arc<dyn Scenario>> {
    let mut all = perdure_check::explore::scenarios::all();
    all.extend(construction_scenarios());
    all
}
