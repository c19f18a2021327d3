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

mod common;
mod conc;

use common::*;
use conc::*;
use perdure_pm::{NoFlush, Pool};
use perdure_relax::ds::{HarrisList, HashTable};
use perdure_relax::{Space, Tracking};
use std::collections::BTreeSet;

fn run(t: Tracking, hash: bool) {
    let pool = Pool::volatile("relax-conc", POOL, NoFlush).unwrap();
    let b = base(&pool);
    let preload: BTreeSet<u64> = (0..400).filter(|k| k % 3 != 0).collect();
    let want = {
        let sp = create(&pool, t);
        let mut h = sp.handle().unwrap();
        let ds = if hash {
            Ds::Hash(HashTable::create(&mut h, 0, 16).unwrap())
        } else {
            Ds::List(HarrisList::create(&mut h, 0).unwrap())
        };
        for &k in &preload {
            ds.insert(&mut h, k).unwrap();
        }
        drop(h);
        let want = disjoint(&sp, ds, &preload, 600);
        let mut h = sp.handle().unwrap();
        assert_eq!(
            ds.keys(&mut h).unwrap(),
            want.iter().copied().collect::<Vec<_>>(),
            "{t:?} before the crash"
        );
        want
    };
    // Crash (quiescent): a new pool from the words, new DRAM (garbage where
    // allowed), and threads that start operating at once, recovering lazily
    // and concurrently.
    let words = pool.snapshot_words();
    let p2 = Pool::volatile_from_words(&words, NoFlush).unwrap();
    p2.reincarnate();
    let sp = Space::open(&p2, b, opts(t, Some(0xfeed))).unwrap();
    let ds = Ds::open(if hash { Kind::Hash } else { Kind::List }, &sp, 0).unwrap();
    let after = disjoint(&sp, ds, &want, 600);
    let mut h = sp.handle().unwrap();
    assert_eq!(
        ds.keys(&mut h).unwrap(),
        after.iter().copied().collect::<Vec<_>>(),
        "{t:?} after the crash"
    );
}

#[test]
fn list_under_every_variant_with_concurrent_recovery() {
    for t in Tracking::ALL {
        run(t, false);
    }
}

#[test]
fn hash_table_under_every_variant_with_concurrent_recovery() {
    for t in Tracking::ALL {
        run(t, true);
    }
}

#[test]
fn racing_inserts_and_removes_of_the_same_keys_succeed_once_each() {
    racing_inserts_and_removes(Kind::List, Tracking::Hybrid);
}
