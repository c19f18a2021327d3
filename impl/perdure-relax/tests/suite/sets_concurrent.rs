//! Concurrent tests of the skip list and the BST: 3 threads on every
//! tracking variant that applies to each shape, before and right after a
//! quiescent crash (the recovering threads race each other's
//! `recover_node` / `recover_field`, §6.3).
//!
//! Explores: OS-scheduled interleavings on the test machine (not
//! exhaustive: no loom/shuttle model of these structures). Disjoint keys
//! (each thread its own residue class, checked op by op against its own
//! model, the union checked at the end); overlapping keys (all threads on
//! 48 keys, 4 000 operations each: per key, the successful inserts minus the successful removes
//! must explain the final presence); racing inserts then removes of the
//! same 300 keys (each succeeds exactly once). `PERDURE_DEPTH=deep`: 10×
//! the operations. The crash is quiescent (a
//! snapshot between operations); crashes inside operations are
//! `sets_crash_sim.rs`'s.

use crate::common;
use crate::conc;
use crate::sets;

use common::tests_calling;
use conc::*;
use perdure_relax::Tracking;
use sets::*;

/// Operations per thread and phase scale by 10 under `PERDURE_DEPTH=deep`.
fn scale(n: u64) -> u64 {
    if common::deep() {
        10 * n
    } else {
        n
    }
}

fn sets_run(shape: Shape, t: Tracking) {
    let phases = Phases {
        preload: (100..500).filter(|k| k % 3 != 0).collect(),
        disjoint: scale(2000),
        overlapping: Some(scale(4000)),
    };
    run(shape.into(), t, &phases);
}

tests_calling!(|shape: Shape| shape.under_every_variant(sets_run) => {
    skiplist_three_threads_under_every_applicable_variant_with_concurrent_recovery(Shape::Skip);
    bst_three_threads_under_every_variant_with_concurrent_recovery(Shape::Bst);
});

#[test]
fn racing_inserts_and_removes_of_the_same_keys_succeed_once_each() {
    for shape in Shape::ALL {
        racing_inserts_and_removes(shape.into(), Tracking::ZMarkable);
    }
}
