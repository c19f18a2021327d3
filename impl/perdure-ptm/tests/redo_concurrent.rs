//! Redo-PTM with 2–4 threads: concurrent increments sum correctly, every
//! thread gets its own results back (also when another thread ran its
//! closure), read-only transactions see only committed states, and
//! transactions that allocate and free stay consistent; every test once per
//! variant (Redo-PTM, RedoTimed-PTM, RedoOpt-PTM: `redo::`, `timed::`,
//! `opt::`).

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

use perdure_pm::NoFlush;
use perdure_ptm::redo::{RedoPtm, Variant};
use perdure_ptm::{PVar, Transaction, TxRead};
use std::collections::BTreeSet;

mod common;

fn ptm(threads: usize, v: Variant) -> RedoPtm<NoFlush> {
    common::redo_v(threads, 4 << 20, NoFlush, v)
}

fn per_thread() -> u64 {
    common::per_thread(3000)
}

/// Sets up root 0 → a counter and `slots` per-thread words after it.
/// (Through a handle dropped at once: `update_tx` would lease one of the
/// PTM's thread ids to the main thread for good.)
fn setup(p: &RedoPtm<NoFlush>, slots: u64) {
    p.handle().unwrap().update_tx(move |tx| {
        let c = tx.alloc_zeroed(8 * (1 + slots)).unwrap();
        tx.set_root(0, c);
    });
}

fn concurrent_increments_sum_and_return_distinct_values(v: Variant) {
    for threads in 2..=4usize {
        let p = ptm(threads, v);
        setup(&p, 0);
        let k = per_thread();
        let got: Vec<Vec<u64>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let h = p.handle().unwrap();
                        (0..k)
                            .map(|_| {
                                h.update_tx(|tx| {
                                    let c = PVar::<u64>::at(tx.root(0));
                                    let n = tx.get(c) + 1;
                                    tx.set(c, n);
                                    n
                                })
                            })
                            .collect()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let total = threads as u64 * k;
        let final_value: u64 = p.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0)))).unwrap();
        assert_eq!(
            final_value, total,
            "{threads} threads: lost or doubled increments"
        );
        let mut all = BTreeSet::new();
        for mine in &got {
            assert!(
                mine.windows(2).all(|w| w[0] < w[1]),
                "a thread saw its values go back"
            );
            for &v in mine {
                assert!(all.insert(v), "value {v} returned to two transactions");
            }
        }
        assert_eq!(all, (1..=total).collect::<BTreeSet<_>>());
        let s = p.stats();
        eprintln!("{threads} threads: {s:?}");
        assert!(s.commits <= total + 1);
    }
}

fn results_reach_the_thread_that_asked(v: Variant) {
    let threads = 4usize;
    let p = ptm(threads, v);
    setup(&p, threads as u64);
    let k = per_thread();
    // All handles are taken before anyone starts, so no id is reused.
    let barrier = std::sync::Barrier::new(threads);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let h = p.handle().unwrap();
                barrier.wait();
                let t = h.tid() as u64;
                for i in 1..=k {
                    // Each thread increments its own slot and gets back its
                    // id with the new count: a result delivered to the wrong
                    // thread, or twice, shows up here.
                    let r: u64 = h.update_tx(move |tx| {
                        let slot = PVar::<u64>::at(tx.root(0) + 8 * (1 + t));
                        let n = tx.get(slot) + 1;
                        tx.set(slot, n);
                        let total = PVar::<u64>::at(tx.root(0));
                        tx.set(total, tx.get(total) + 1);
                        (t << 32) | n
                    });
                    assert_eq!(r >> 32, t, "thread {t} got another thread's result");
                    assert_eq!(r & 0xffff_ffff, i, "thread {t}'s increment {i}");
                }
            });
        }
    });
    let sum: u64 = p
        .read_tx(move |tx| {
            let base = tx.root(0);
            let slots: u64 = (0..threads as u64)
                .map(|t| tx.load(base + 8 * (1 + t)))
                .sum();
            assert_eq!(slots, tx.load(base));
            slots
        })
        .unwrap();
    assert_eq!(sum, threads as u64 * k);
    let s = p.stats();
    eprintln!("results test: {s:?}");
}

fn readers_see_only_committed_states(v: Variant) {
    let p = ptm(4, v);
    // Two words on different cache lines, always written together.
    p.handle().unwrap().update_tx(|tx| {
        let a = tx.alloc_zeroed(128).unwrap();
        tx.set_root(0, a);
    });
    let k = per_thread();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let h = p.handle().unwrap();
                for _ in 0..k {
                    h.update_tx(|tx| {
                        let a = tx.root(0);
                        let v = tx.load(a) + 1;
                        tx.store(a, v);
                        tx.store(a + 64, v);
                    });
                }
            });
        }
        for _ in 0..2 {
            s.spawn(|| {
                let h = p.handle().unwrap();
                let mut last = 0;
                for _ in 0..k {
                    let (x, y): (u64, u64) = {
                        let w: u64 = h.read_tx(|tx| {
                            let a = tx.root(0);
                            (tx.load(a) << 32) | tx.load(a + 64)
                        });
                        (w >> 32, w & 0xffff_ffff)
                    };
                    assert_eq!(x, y, "a read saw half a transaction");
                    assert!(x >= last, "reads went back in time");
                    last = x;
                }
            });
        }
    });
    let s = p.stats();
    eprintln!("readers test: {s:?}");
    assert_eq!(s.reads_direct + s.reads_published, 2 * per_thread());
}

fn allocating_transactions_stay_consistent(v: Variant) {
    // Each thread pushes and pops nodes of a shared stack (allocation and
    // free inside transactions, replayed and copied between replicas).
    let threads = 3usize;
    let p = ptm(threads, v);
    let k = per_thread();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let h = p.handle().unwrap();
                let t = h.tid() as u64;
                for i in 0..k {
                    if i % 3 == 2 {
                        h.update_tx(|tx| {
                            let top = tx.root(1);
                            if top != 0 {
                                tx.set_root(1, tx.load(top + 8));
                                tx.set_root(2, tx.root(2) - 1);
                                tx.free(top).unwrap();
                            }
                        });
                    } else {
                        h.update_tx(move |tx| {
                            let n = tx.alloc(16).unwrap();
                            tx.store(n, (t << 32) | i);
                            tx.store(n + 8, tx.root(1));
                            tx.set_root(1, n);
                            tx.set_root(2, tx.root(2) + 1);
                        });
                    }
                }
            });
        }
    });
    let (len, count): (u64, u64) = {
        let w: u64 = p
            .read_tx(|tx| {
                let mut n = 0u64;
                let mut cur = tx.root(1);
                while cur != 0 {
                    n += 1;
                    cur = tx.load(cur + 8);
                }
                (n << 32) | tx.root(2)
            })
            .unwrap();
        (w >> 32, w & 0xffff_ffff)
    };
    assert_eq!(len, count, "the list and its count disagree");
    assert_eq!(len, threads as u64 * k / 3, "pushes minus pops");
}

fn transactions_larger_than_the_log(v: Variant) {
    // A 4-entry log arena: every transaction overflows it, so no state can
    // be replayed (replicas copy) and a lost CAS cannot be undone (the
    // replica is marked invalid and copied by its next user).
    let threads = 3usize;
    let pool = perdure_pm::Pool::volatile("redo-tiny", 4 << 20, NoFlush).unwrap();
    let config = perdure_ptm::redo::Config {
        threads,
        log_entries_per_thread: 4,
        dirty_lines_per_replica: 2,
        variant: v,
        ..perdure_ptm::redo::Config::small()
    };
    let p = RedoPtm::create(pool, &config).unwrap();
    p.handle().unwrap().update_tx(|tx| {
        let a = tx.alloc_zeroed(64 * 9).unwrap();
        tx.set_root(0, a);
    });
    let k = common::per_thread(1000);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let h = p.handle().unwrap();
                for _ in 0..k {
                    h.update_tx(|tx| {
                        // Eight words on eight lines, all the same value.
                        let a = tx.root(0);
                        let v = tx.load(a) + 1;
                        for i in 0..8 {
                            tx.store(a + 64 * i, v);
                        }
                    });
                }
            });
        }
    });
    let ok: u64 = p
        .read_tx(|tx| {
            let a = tx.root(0);
            let v = tx.load(a);
            if (0..8).all(|i| tx.load(a + 64 * i) == v) {
                v
            } else {
                u64::MAX
            }
        })
        .unwrap();
    assert_eq!(ok, threads as u64 * k);
    let s = p.stats();
    eprintln!("tiny logs: {s:?}");
    assert_eq!(s.replays, 0, "no overflowed state can be replayed");
    assert!(s.copies > 0);
}

common::redo_variant_tests!(
    concurrent_increments_sum_and_return_distinct_values,
    results_reach_the_thread_that_asked,
    readers_see_only_committed_states,
    allocating_transactions_stay_consistent,
    transactions_larger_than_the_log,
);
