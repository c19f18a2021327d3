//! loom: every interleaving (C11 memory model, bounded preemptions) of
//! Redo-PTM's combining consensus (seed §5, Algorithm 3 {1}–{9}: publish
//! and announce, copy of the tail `State` and its `applied[]` check, the
//! ring, the strong try lock, replay or copy, simulation of every announced
//! request, the `cur_comb` CAS, undo of a lost attempt, collection of a
//! result another thread's commit carried), on the real [`RedoPtm`] over a
//! model pool (every word a loom atomic; `NoFlush` backend).
//!
//! Run with `RUSTFLAGS="--cfg perdure_loom" cargo test --release -p
//! perdure-ptm --test loom_redo_consensus` (`make verify` does, as part of
//! `loom:ptm`). Without the cfg this file is empty.
//!
//! Each worker runs one update transaction on a shared word `x` that adds a
//! distinct power of two and returns the old value. Checked in every
//! explored execution, after the workers joined:
//! * **exactly once**: `x` is the sum of every worker's increment (a request
//!   applied twice, or lost, changes the sum: the increments are distinct
//!   bits far apart, so no other combination gives it);
//! * **one sequential order**: the results are the prefix sums of some order
//!   of the workers (each result is the sum of the increments of the
//!   workers before it in that order), so every request ran once, on the
//!   state its predecessor left, and its result reached its submitter
//!   whether it committed it or another thread's commit carried it;
//! * the replica `cur_comb` designates agrees with a read-only transaction
//!   run afterwards.
//!
//! Bounds: 2 workers with a preemption bound of 2 (3 with
//! `PERDURE_DEPTH=deep`), 11,672 interleavings, 20 s; 3 workers that
//! keep their thread ids with a bound of 0 (1 deep); lower if
//! `LOOM_MAX_PREEMPTIONS` says so (`tools/verify.py` sets 3); 3 workers
//! whose ids are reused by later workers, bound 0 (1 deep: the depth at
//! which it found the bug `three_updaters_reusing_ids_apply_once` records);
//! a reader whose read publishes at once and then runs an update, against
//! an updater, bound 2 (31,018 interleavings, about twice
//! `redo-consensus-2`'s time; 3 deep: 246,100,
//! about 9 minutes, which `MUTANTS.md`'s `update.rs:172:25` needs).
//! Not covered:
//! crashes (the crash explorer and `tests/suite/redo_crash.rs`), read-only
//! transactions racing updates beyond that one reader, RedoTimed/RedoOpt (the same consensus with
//! another lock choice: their window uses the clock, which loom does not
//! model), more than one transaction per worker (state reuse in the ring:
//! the explorer's `redo-rsize2-…` rows and `tests/mutants_ptm.rs`).

#![cfg(perdure_loom)]

use perdure_pm::sync::{thread, Arc};
use perdure_pm::{NoFlush, Pool};
use perdure_ptm::redo::{Config, RedoPtm};
use perdure_ptm::{Transaction, TxRead};

/// The shared word: root slot 8 (region offset 64).
const X: u64 = 64;

#[path = "../../perdure-pm/tests/support/loom_model.rs"]
mod loom_model;

/// Runs `f` under loom with a preemption bound of `bound` (one more for
/// `PERDURE_DEPTH=deep`), or `LOOM_MAX_PREEMPTIONS` if that is lower.
fn model<F: Fn() + Sync + Send + 'static>(name: &str, bound: usize, f: F) {
    // Creating the PTM alone is thousands of atomic accesses.
    let e = loom_model::explore(loom_model::Preemptions::AtMost(bound), Some(10_000_000), f);
    loom_model::report(
        &format!("loom:ptm/{name}"),
        &e.interleavings(),
        "Redo-PTM's combining consensus (Algorithm 3): every announced update applied exactly once, results the prefix sums of one sequential order",
        Some(e.seconds),
    );
}

/// A Redo-PTM for `threads` thread ids (2 states each, small logs and dirty
/// sets) reading directly `max_read_tries` times before publishing, on a
/// model pool of `pages` pages.
fn model_ptm(threads: usize, max_read_tries: usize, pages: u64) -> Arc<RedoPtm<NoFlush>> {
    let config = Config {
        threads,
        states_per_thread: 2,
        log_entries_per_thread: 16,
        dirty_lines_per_replica: 8,
        max_read_tries,
        ..Config::small()
    };
    let pool = Pool::volatile("loom-redo", 4096 * pages, NoFlush).expect("a model pool");
    Arc::new(RedoPtm::create(pool, &config).expect("Redo-PTM on the model pool"))
}

/// The update adding `d` to `X`; it returns the old value.
fn add(d: u64) -> impl Fn(&perdure_ptm::redo::Tx<'_, NoFlush>) -> u64 + Send + Sync + 'static {
    move |tx| {
        let v = tx.load(X);
        tx.store(X, v + d);
        v
    }
}

/// `workers` threads each run one update adding `1 << (16 * w)` to `X`.
///
/// `hold_ids`: each worker, after its update, waits until every worker has
/// done its update before it exits, so no thread id is released and leased
/// again by a later worker during the run.
fn workers_apply_once(workers: usize, hold_ids: bool) {
    // One more thread id for the main thread's final read.
    let ptm = model_ptm(workers + 1, 2, 2 + workers as u64 + 2);
    let inc = |w: usize| 1u64 << (16 * w);
    let done = Arc::new((loom::sync::Mutex::new(0usize), loom::sync::Condvar::new()));
    let hs: Vec<_> = (0..workers)
        .map(|w| {
            let p = ptm.clone();
            let done = done.clone();
            thread::spawn(move || {
                let r = p.update_tx(add(inc(w))).expect("the update");
                if hold_ids {
                    let (m, cv) = &*done;
                    let mut n = m.lock().unwrap();
                    *n += 1;
                    cv.notify_all();
                    while *n < workers {
                        n = cv.wait(n).unwrap();
                    }
                }
                r
            })
        })
        .collect();
    let olds: Vec<u64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    let all: u64 = (0..workers).map(inc).sum();
    let x = ptm.read_tx(|tx| tx.load(X)).expect("the read");
    assert_eq!(
        x, all,
        "every update applied exactly once (results {olds:x?}, x = {x:#x})"
    );
    // Sorted by result, each result is the sum of the increments before it.
    let mut order: Vec<usize> = (0..workers).collect();
    order.sort_by_key(|&w| olds[w]);
    let mut sum = 0;
    for &w in &order {
        assert_eq!(
            olds[w], sum,
            "worker {w}'s result is not the state its predecessor left (results {olds:x?})"
        );
        sum += inc(w);
    }
}

#[test]
fn two_updaters_apply_once() {
    model("redo-consensus-2", 2, || workers_apply_once(2, false));
}

/// Three updaters that keep their thread ids to the end. A preemption bound
/// of 0 here (512 interleavings, about a second); 1 with
/// `PERDURE_DEPTH=deep` (227,264 interleavings, about 9 minutes on this
/// machine, measured before the fix recorded below: too long for CI).
#[test]
fn three_updaters_holding_their_ids_apply_once() {
    model("redo-consensus-3", 0, || workers_apply_once(3, true));
}

/// Three updaters whose thread ids are released when they exit (a later
/// worker may lease the id of one that finished, and so reuse its ring of
/// `State`s). This found a bug (fixed in `redo::update::attempt_update`):
/// step {3}'s copy of the tail `State` was validated by re-reading
/// `cur_comb` only; with the state being reused by its owner, the copy
/// paired the new `applied[]` with the old `results[]` and a worker returned
/// the wrong old value (results `[0, 0, 1]`, at preemption bound 1, about a
/// minute in). The copy is now validated as a seqlock read (acquire fence,
/// the state's ticket re-read). Bound 0 here (fast, but it does not reach
/// that execution); 1 with `PERDURE_DEPTH=deep` (162,542 interleavings,
/// about 9 minutes on this machine), which does.
#[test]
fn three_updaters_reusing_ids_apply_once() {
    model("redo-consensus-3-reuse", 0, || workers_apply_once(3, false));
}

/// A reader that publishes its read at once (`max_read_tries` 0) and then
/// runs an update, against another thread's update. The read's request
/// completes without a commit when it then runs directly, and the reader's
/// next request, the update, replaces it in `req[tid]`; an attempt of the
/// other thread that simulates across that replacement must not commit
/// with the requests from there on left out. Checked: both increments
/// applied once, the two update results the prefix sums of one order, and
/// the read saw a state of that order before the reader's own update.
/// A commit across the replacement (`attempt_update`'s `complete &&`
/// weakened to `||`) takes more than two preemptions to reach: at bound 3
/// (`PERDURE_DEPTH=deep`) that mutant fails here (both results 0), at
/// bound 2 it passes.
fn read_then_update_against_an_update() {
    let ptm = model_ptm(3, 0, 7);
    let (r_inc, u_inc) = (1u64, 1u64 << 16);
    let reader = {
        let p = ptm.clone();
        thread::spawn(move || {
            let seen = p.read_tx(|tx| tx.load(X)).expect("the read");
            let old = p.update_tx(add(r_inc)).expect("the reader's update");
            (seen, old)
        })
    };
    let updater = {
        let p = ptm.clone();
        thread::spawn(move || p.update_tx(add(u_inc)).expect("the update"))
    };
    let (seen, r_old) = reader.join().unwrap();
    let u_old = updater.join().unwrap();
    let x = ptm.read_tx(|tx| tx.load(X)).expect("the final read");
    assert_eq!(
        x,
        r_inc + u_inc,
        "both updates applied once (read {seen:#x}, results {r_old:#x}, {u_old:#x})"
    );
    assert!(
        (r_old, u_old) == (0, r_inc) || (r_old, u_old) == (u_inc, 0),
        "the results are not the prefix sums of one order: reader {r_old:#x}, updater {u_old:#x}"
    );
    assert!(
        seen == 0 || (seen == u_inc && r_old == u_inc),
        "the read saw {seen:#x}, not a state before the reader's update (results {r_old:#x}, {u_old:#x})"
    );
}

#[test]
fn a_published_read_then_an_update_against_an_update() {
    model("redo-consensus-read", 2, read_then_update_against_an_update);
}
