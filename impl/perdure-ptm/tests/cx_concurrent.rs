//! CX-PTM and CX-PUC with 2–4 threads: concurrent increments sum
//! correctly and each value is returned exactly once, every thread gets its
//! own results back (also when another thread ran its closure), read-only
//! transactions see only whole transactions (also when they enqueue
//! themselves), transactions that allocate and free stay consistent, and a
//! one-node replay window (every replica invalidated, every node disposed
//! of at once) changes none of that and keeps memory bounded.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod common;

use perdure_pm::{NoFlush, Pool};
use perdure_ptm::cx::{Config, CxStats};
use perdure_ptm::front::Front;
use perdure_ptm::{CxPtm, CxPuc, PVar, Ptm, Transaction, TxRead};
use std::collections::BTreeSet;

fn per_thread() -> u64 {
    common::per_thread(3000)
}

/// Both flavours with `config` on a fresh 4 MiB pool, each handed to `f`
/// with its name and a way to read its counters.
fn on_both(config: &Config, f: impl Fn(&str, &dyn Fn() -> CxStats, &dyn Runner)) {
    let pool = Pool::volatile("cx-conc", 4 << 20, NoFlush).unwrap();
    let p = CxPtm::create(pool, config).unwrap();
    f("cx-ptm", &|| p.stats(), &p);
    let pool = Pool::volatile("cx-conc", 4 << 20, NoFlush).unwrap();
    let q: CxPuc<NoFlush, [u64; 2]> = CxPuc::create(pool, config, [0; 2]).unwrap();
    f("cx-puc", &|| q.stats(), &q);
}

/// What the tests do with a PTM, object-safe so one test body serves both
/// flavours: run `body` on `threads` threads, each with a handle.
trait Runner: Sync {
    fn setup(&self, words: u64);
    fn threads(&self, threads: usize, body: &(dyn Fn(usize, &dyn Ops) + Sync));
    fn read_word(&self, off_in_record: u64) -> u64;
    /// The stack's length by walking it, and its recorded length, in one
    /// read-only transaction.
    fn stack(&self) -> (u64, u64);
}

/// One thread's operations.
trait Ops {
    fn tid(&self) -> usize;
    /// Adds 1 to the record's word 0 and to its word `1 + slot`; returns
    /// `(slot << 32) | new slot value`, with the new total in bits 16..32.
    fn bump(&self, slot: u64) -> u64;
    /// The record's total and the sum of its first `slots` slots.
    fn sums(&self, slots: u64) -> (u64, u64);
    /// Pushes on / pops from the stack at roots 1 (top) and 2 (length).
    fn push(&self, v: u64);
    fn pop(&self);
    /// Two words on different lines, set together to `a + 1`.
    fn pair_inc(&self);
    fn pair(&self) -> (u64, u64);
}

fn bump<T: Transaction>(tx: &T, slot: u64) -> u64 {
    let rec = tx.root(0);
    let s = PVar::<u64>::at(rec + 8 * (1 + slot));
    let n = tx.get(s) + 1;
    tx.set(s, n);
    let total = PVar::<u64>::at(rec);
    tx.set(total, tx.get(total) + 1);
    (slot << 32) | n
}

impl<P: Ptm + Front> Runner for P {
    fn setup(&self, words: u64) {
        self.handle().unwrap().update_tx(move |tx| {
            let rec = tx.alloc_zeroed(8 * words).unwrap();
            tx.set_root(0, rec);
            let pair = tx.alloc_zeroed(128).unwrap();
            tx.set_root(3, pair);
        });
    }

    fn threads(&self, threads: usize, body: &(dyn Fn(usize, &dyn Ops) + Sync)) {
        let barrier = std::sync::Barrier::new(threads);
        std::thread::scope(|s| {
            for i in 0..threads {
                let barrier = &barrier;
                s.spawn(move || {
                    let h = self.handle().unwrap();
                    barrier.wait();
                    body(i, &h);
                });
            }
        });
    }

    fn read_word(&self, off: u64) -> u64 {
        self.read_tx(move |tx| tx.load(tx.root(0) + off)).unwrap()
    }

    fn stack(&self) -> (u64, u64) {
        let w: u64 = self
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
    }
}

impl<P: Ptm + Front> Ops for perdure_ptm::front::Handle<'_, P> {
    fn tid(&self) -> usize {
        perdure_ptm::front::Handle::tid(self)
    }
    fn bump(&self, slot: u64) -> u64 {
        self.update_tx(move |tx| bump(tx, slot))
    }
    fn sums(&self, slots: u64) -> (u64, u64) {
        let w: u64 = self.read_tx(move |tx| {
            let rec = tx.root(0);
            let s: u64 = (0..slots).map(|t| tx.load(rec + 8 * (1 + t))).sum();
            (tx.load(rec) << 32) | s
        });
        (w >> 32, w & 0xffff_ffff)
    }
    fn push(&self, v: u64) {
        self.update_tx(move |tx| {
            let n = tx.alloc(16).unwrap();
            tx.store(n, v);
            tx.store(n + 8, tx.root(1));
            tx.set_root(1, n);
            tx.set_root(2, tx.root(2) + 1);
        });
    }
    fn pop(&self) {
        self.update_tx(|tx| {
            let top = tx.root(1);
            if top != 0 {
                tx.set_root(1, tx.load(top + 8));
                tx.set_root(2, tx.root(2) - 1);
                tx.free(top).unwrap();
            }
        });
    }
    fn pair_inc(&self) {
        self.update_tx(|tx| {
            let a = tx.root(3);
            let v = tx.load(a) + 1;
            tx.store(a, v);
            tx.store(a + 64, v);
        });
    }
    fn pair(&self) -> (u64, u64) {
        let w: u64 = self.read_tx(|tx| {
            let a = tx.root(3);
            (tx.load(a) << 32) | tx.load(a + 64)
        });
        (w >> 32, w & 0xffff_ffff)
    }
}

#[test]
fn concurrent_increments_are_applied_exactly_once() {
    for threads in 2..=4usize {
        on_both(&common::cx_config(threads), |name, stats, p| {
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
            let s = stats();
            eprintln!("{name} {threads} threads: {s:?}");
            assert!(s.commits <= total + 1, "{name}: {s:?}");
        });
    }
}

#[test]
fn results_reach_the_thread_that_asked() {
    let threads = 4usize;
    on_both(&common::cx_config(threads), |name, _, p| {
        p.setup(1 + threads as u64);
        let k = per_thread();
        p.threads(threads, &|i, h| {
            let t = i as u64;
            for n in 1..=k {
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
    });
}

fn readers_see_whole_transactions(config: &Config) {
    on_both(config, |name, stats, p| {
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
        let s = stats();
        eprintln!("{name} readers: {s:?}");
        assert_eq!(s.reads_direct + s.reads_published, 2 * k);
    });
}

#[test]
fn readers_see_only_whole_transactions() {
    readers_see_whole_transactions(&common::cx_config(4));
}

#[test]
fn published_reads_see_only_whole_transactions() {
    // MAX_READ_TRIES 0: every read enqueues itself and is run by an
    // updater unless one of its N direct tries succeeds.
    readers_see_whole_transactions(&Config {
        max_read_tries: 0,
        ..common::cx_config(4)
    });
}

fn allocating_transactions(config: &Config) {
    let threads = 3usize;
    on_both(config, |name, stats, p| {
        p.setup(1);
        let k = per_thread();
        p.threads(threads, &|i, h| {
            for j in 0..k {
                if j % 3 == 2 {
                    h.pop();
                } else {
                    h.push(((i as u64) << 32) | j);
                }
            }
        });
        let (len, count) = p.stack();
        assert_eq!(len, count, "{name}: the list and its count disagree");
        assert_eq!(len, threads as u64 * k / 3, "{name}: pushes minus pops");
        eprintln!("{name} allocating: {:?}", stats());
    });
}

#[test]
fn allocating_transactions_stay_consistent() {
    allocating_transactions(&common::cx_config(3));
}

#[test]
fn a_one_node_window_under_contention() {
    // Every replica is invalid when next taken and every retired node is
    // disposed of at once: copies everywhere, reclamation at full speed.
    let config = Config {
        replay_window: 1,
        ..common::cx_config(3)
    };
    allocating_transactions(&config);
    on_both(&config, |name, stats, p| {
        p.setup(1);
        let k = per_thread();
        p.threads(3, &|_, h| {
            for _ in 0..k {
                h.bump(0);
            }
        });
        assert_eq!(p.read_word(0), 3 * k, "{name}");
        let s = stats();
        assert!(s.copies > 0 && s.disposed > 0, "{name}: {s:?}");
        assert!(
            s.disposed - s.freed <= config.max_retained_nodes(),
            "{name}: {s:?}"
        );
    });
}
