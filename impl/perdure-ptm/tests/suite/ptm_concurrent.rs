//! Every PTM with 2–4 threads: concurrent increments sum correctly and each
//! value is returned exactly once, every thread gets its own results back
//! (also when another thread ran its closure), read-only transactions see
//! only whole transactions (also when they publish themselves), and
//! transactions that allocate and free stay consistent. Each test once per
//! construction (`common::ptms`); CX's one-node window is in
//! `cx_concurrent.rs`, Redo's overflowing logs in `redo_concurrent.rs`.

use crate::common;

use common::ptms::{ptm_suite, Construction};
use common::runner::Runner;
use perdure_pm::{NoFlush, Pool};
use std::collections::BTreeSet;

fn per_thread() -> u64 {
    common::per_thread(3000)
}

/// `C` for `threads` threads (and `max_read_tries`) on a fresh 4 MiB pool.
fn ptm<C: Construction>(threads: usize, max_read_tries: usize) -> C::P<NoFlush> {
    let pool = Pool::volatile("ptm-conc", 4 << 20, NoFlush).unwrap();
    C::create_with(pool, threads, max_read_tries).unwrap()
}

fn concurrent_increments_are_applied_exactly_once<C: Construction>() {
    let name = C::NAME;
    for threads in 2..=4usize {
        let p = ptm::<C>(threads, 10);
        p.setup(1);
        let k = per_thread();
        let got = std::sync::Mutex::new(Vec::new());
        p.threads(threads, &|_, h| {
            let mine: Vec<u64> = (0..k).map(|_| h.bump(0) & 0xffff_ffff).collect();
            got.lock().unwrap().push(mine);
        });
        let total = threads as u64 * k;
        assert_eq!(
            p.read_word(0),
            total,
            "{name}, {threads} threads: lost or doubled"
        );
        let mut all = BTreeSet::new();
        for mine in got.into_inner().unwrap() {
            assert!(
                mine.windows(2).all(|w| w[0] < w[1]),
                "{name}: values went back"
            );
            for v in mine {
                assert!(all.insert(v), "{name}: value {v} returned twice");
            }
        }
        assert_eq!(all, (1..=total).collect::<BTreeSet<_>>(), "{name}");
        let commits = C::commits(&p);
        assert!(commits <= total + 1, "{name}: {commits} commits");
    }
}

fn results_reach_the_thread_that_asked<C: Construction>() {
    let name = C::NAME;
    let threads = 4usize;
    let p = ptm::<C>(threads, 10);
    p.setup(1 + threads as u64);
    let k = per_thread();
    p.threads(threads, &|i, h| {
        let t = i as u64;
        for n in 1..=k {
            // Each thread increments its own slot and gets back its slot
            // with the new count: a result delivered to the wrong thread,
            // or twice, shows up here.
            let r = h.bump(t);
            assert_eq!(r >> 32, t, "{name}: thread {t} got another's result");
            assert_eq!(r & 0xffff_ffff, n, "{name}: thread {t}'s increment {n}");
        }
        let (total, slots) = h.sums(threads as u64);
        assert_eq!(total, slots, "{name}: a read saw half a transaction");
        let _ = h.tid();
    });
    let sum: u64 = (0..threads as u64).map(|t| p.read_word(8 * (1 + t))).sum();
    assert_eq!(sum, threads as u64 * k);
    assert_eq!(p.read_word(0), sum);
}

fn readers_see_whole_transactions<C: Construction>(max_read_tries: usize) {
    let name = C::NAME;
    let p = ptm::<C>(4, max_read_tries);
    p.setup(1);
    let k = per_thread();
    p.threads(4, &|i, h| {
        if i < 2 {
            for _ in 0..k {
                h.pair_inc();
            }
        } else {
            let mut last = 0;
            for _ in 0..k {
                let (x, y) = h.pair();
                assert_eq!(x, y, "{name}: a read saw half a transaction");
                assert!(x >= last, "{name}: reads went back in time");
                last = x;
            }
        }
    });
    let reads = C::reads_direct(&p) + C::reads_published(&p);
    if C::READ_COUNTED_ONCE {
        assert_eq!(reads, 2 * k, "{name}");
    } else {
        assert!(reads >= 2 * k, "{name}: {reads} reads counted");
    }
    if max_read_tries == 0 && !C::READ_COUNTED_ONCE {
        assert_eq!(
            C::reads_published(&p),
            2 * k,
            "{name}: every read published"
        );
    }
}

fn readers_see_only_whole_transactions<C: Construction>() {
    readers_see_whole_transactions::<C>(10);
}

fn published_reads_see_only_whole_transactions<C: Construction>() {
    // MAX_READ_TRIES 0: every read publishes itself and is run by an
    // updater unless one of its direct tries succeeds.
    readers_see_whole_transactions::<C>(0);
}

fn allocating_transactions_stay_consistent<C: Construction>() {
    let threads = 3usize;
    let p = ptm::<C>(threads, 10);
    common::runner::allocating_transactions(C::NAME, &p, threads, per_thread());
}

ptm_suite!(
    concurrent_increments_are_applied_exactly_once,
    results_reach_the_thread_that_asked,
    readers_see_only_whole_transactions,
    published_reads_see_only_whole_transactions,
    allocating_transactions_stay_consistent,
);
