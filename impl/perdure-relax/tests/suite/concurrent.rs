//! Concurrent tests: 3 threads on every tracking variant, with and without
//! a preceding crash, the recovering threads racing each other
//! (`recover_field` and `recover_node` run concurrently with operations,
//! §6.3).
//!
//! Explores: OS-scheduled interleavings on the test machine (not
//! exhaustive: there is no loom/shuttle model of this crate yet), 6
//! variants × 2 structures, garbage DRAM where the variant allows it.
//! The crash here is quiescent (a snapshot between operations, on the
//! `NoFlush` backend); crashes inside operations are `crash_sim.rs`'s.

use crate::common;
use crate::conc;

use common::*;
use conc::*;
use perdure_relax::Tracking;

fn lists_run(t: Tracking, hash: bool) {
    let phases = Phases {
        preload: (0..400).filter(|k| k % 3 != 0).collect(),
        disjoint: 600,
        overlapping: None,
    };
    run(if hash { Kind::Hash } else { Kind::List }, t, &phases);
}

#[test]
fn list_under_every_variant_with_concurrent_recovery() {
    for t in Tracking::ALL {
        lists_run(t, false);
    }
}

#[test]
fn hash_table_under_every_variant_with_concurrent_recovery() {
    for t in Tracking::ALL {
        lists_run(t, true);
    }
}

#[test]
fn racing_inserts_and_removes_of_the_same_keys_succeed_once_each() {
    racing_inserts_and_removes(Kind::List, Tracking::Hybrid);
}
