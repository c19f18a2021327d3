//! loom: every interleaving (C11 memory model, bounded preemptions) of CX's
//! queue of mutations (seed §4, reference \[39\]) and the reclamation of its
//! nodes; the scenarios are `perdure_ptm::cx::model_checks` (the queue is
//! crate-private).
//!
//! Run with `RUSTFLAGS="--cfg perdure_loom" cargo test --release -p
//! perdure-ptm --test loom_cx_queue` (`make verify` does). Without the cfg
//! this file is empty. Preemption bounds: 3 for two threads, 2 for three
//! (one more with `PERDURE_DEPTH=deep`; lower if `LOOM_MAX_PREEMPTIONS`
//! says so).
//!
//! * `two_enqueuers`, `three_enqueuers`: every node is linked exactly once,
//!   tickets are consecutive in list order, the tail is the last node, and
//!   every enqueuer's announcement slot is empty afterwards;
//! * `a_validated_successor_is_not_freed`: a traversal that publishes a
//!   hazard pointer on `mn.next` and re-reads `mn.next` never finds that
//!   successor freed, against a thread that retires, disposes of (self-links)
//!   and scans the same nodes, and never steps from a disposed node to the
//!   node itself (the step is `TurnQueue::protect_next`, the walk's own
//!   code; without its self-link test the walk ran a closure twice on its
//!   replica, which `shuttle:ptm` found); everything disposed of and
//!   unprotected is freed, and a node a `Combined` head names is not;
//! * `a_walk_keeps_the_node_it_steps_off_protected`: the walk of
//!   `core::update_on` (`Walk`, two hazard pointers taken in turn) steps
//!   from a head to node 2 and on to node 3 against the same retiring
//!   thread: after the second step both nodes are named by the walker's
//!   hazard pointers and neither is freed (with one slot for both, node 2
//!   is unprotected while the step re-reads its link).
//!
//! Not covered: the update path around the queue (locks, replicas,
//! `cur_comb`), which the shuttle and crash tests exercise.

#![cfg(perdure_loom)]

use perdure_ptm::cx::model_checks;

#[path = "../../perdure-pm/tests/support/loom_model.rs"]
mod loom_model;

/// Runs `f` under loom with a preemption bound of `bound` (one more for
/// `PERDURE_DEPTH=deep`), or `LOOM_MAX_PREEMPTIONS` if that is lower.
fn model<F: Fn() + Sync + Send + 'static>(name: &str, bound: usize, f: F) {
    loom_model::check(
        &format!("loom:ptm/{name}"),
        loom_model::Preemptions::AtMost(bound),
        None,
        "CX's turn queue and node reclamation: nodes linked once with consecutive tickets; no validated successor freed",
        f,
    );
}

#[test]
fn two_enqueuers() {
    model("cx-turn-queue-2", 3, || model_checks::enqueuers(2));
}

#[test]
fn three_enqueuers() {
    // Three threads explode beyond a bound of 2 (over 7 minutes at 3).
    model("cx-turn-queue-3", 2, || model_checks::enqueuers(3));
}

#[test]
fn a_validated_successor_is_not_freed() {
    model(
        "cx-reclaim-vs-walk",
        3,
        model_checks::a_validated_successor_is_not_freed,
    );
}

#[test]
fn a_walk_keeps_the_node_it_steps_off_protected() {
    model(
        "cx-walk-vs-reclaim",
        3,
        model_checks::a_walk_keeps_the_node_it_steps_off_protected,
    );
}
