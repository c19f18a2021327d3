//! Redo-PTM with 3 threads and 4-entry logs: every transaction overflows
//! its log, so no state is replayed (replicas copy) and a lost CAS cannot
//! be undone (its replica is marked invalid); the sums stay right. Once
//! per variant (`redo::`, `timed::`, `opt::`). What every construction is
//! checked for with 2–4 threads is in `ptm_concurrent.rs`.

use perdure_pm::NoFlush;
use perdure_ptm::redo::{RedoPtm, Variant};
use perdure_ptm::{Transaction, TxRead};

use crate::common;

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

common::redo_variant_tests!(transactions_larger_than_the_log);
