//! Bad input to Redo-PTM is a typed error, never a panic: a pool without a
//! PTM, a damaged header, a header from another version or another pool,
//! geometry that does not fit, a `cur_comb` naming no replica, a damaged
//! designated replica, a pool too small, a bad configuration.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod common;

use perdure_pm::{meta, NoFlush, Pool};
use perdure_ptm::redo::{Config, RedoPtm, MAGIC, VERSION};
use perdure_ptm::PtmError;
use std::sync::atomic::Ordering;

const SIZE: u64 = 256 << 10;

/// A formatted pool's words, after a few transactions.
fn formatted() -> Vec<u64> {
    let p = common::redo(2, SIZE, NoFlush);
    for i in 0..5 {
        p.update_tx(move |tx| {
            use perdure_ptm::Transaction;
            tx.set_root(0, i)
        })
        .unwrap();
    }
    p.pool().snapshot_words()
}

fn reopen(words: &[u64]) -> Result<RedoPtm<NoFlush>, PtmError> {
    let pool = Pool::volatile_from_words(words, NoFlush).expect("the pool header is intact");
    RedoPtm::open(pool, &common::config(2))
}

fn header_words(words: &[u64], pool: &Pool<NoFlush>) -> [u64; 7] {
    let base = (pool.data_offset() / 8) as usize;
    let mut w = [0; 7];
    w.copy_from_slice(&words[base..base + 7]);
    w
}

/// Rewrites the PTM header with `edit` applied and a valid checksum.
fn with_header(words: &[u64], edit: impl FnOnce(&mut [u64; 7])) -> Vec<u64> {
    let pool = Pool::volatile_from_words(words, NoFlush).unwrap();
    let mut h = header_words(words, &pool);
    edit(&mut h);
    meta::write(&pool, pool.data_offset(), &h).unwrap();
    pool.snapshot_words()
}

#[test]
fn the_untouched_pool_opens() {
    let words = formatted();
    let p = reopen(&words).unwrap();
    use perdure_ptm::TxRead;
    assert_eq!(p.read_tx(|tx| tx.root(0)).unwrap(), 4);
}

#[test]
fn a_pool_without_a_ptm() {
    let pool = Pool::volatile("empty", SIZE, NoFlush).unwrap();
    assert!(matches!(
        RedoPtm::open(pool, &Config::small()),
        Err(PtmError::NotFormatted { found: 0, .. })
    ));
}

#[test]
fn a_damaged_header() {
    let words = formatted();
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    let base = (pool.data_offset() / 8) as usize;
    for word in 1..8 {
        for bit in [0, 17, 63] {
            let mut w = words.clone();
            w[base + word] ^= 1 << bit;
            assert!(
                matches!(reopen(&w), Err(PtmError::Corrupt { .. })),
                "flip of header word {word} bit {bit}"
            );
        }
    }
    let mut w = words.clone();
    w[base] ^= 1;
    assert!(matches!(reopen(&w), Err(PtmError::NotFormatted { .. })));
}

#[test]
fn headers_that_do_not_fit() {
    let words = formatted();
    type Edit = Box<dyn Fn(&mut [u64; 7])>;
    let cases: Vec<(&str, Edit)> = vec![
        ("zero threads", Box::new(|h| h[2] = 0)),
        ("too many threads", Box::new(|h| h[2] = 1000)),
        ("more threads than replicas fit", Box::new(|h| h[2] = 200)),
        ("replica too small", Box::new(|h| h[3] = 512)),
        ("replica not page-sized", Box::new(|h| h[3] += 8)),
        ("replicas overflow the pool", Box::new(|h| h[3] = 1 << 60)),
        ("replicas elsewhere", Box::new(|h| h[4] += 4096)),
        ("another pool's size", Box::new(|h| h[5] *= 2)),
    ];
    for (what, edit) in cases {
        let w = with_header(&words, edit);
        assert!(
            matches!(reopen(&w), Err(PtmError::Corrupt { .. })),
            "{what}: {:?}",
            reopen(&w).map(|_| ())
        );
    }
    let w = with_header(&words, |h| h[1] = VERSION + 1);
    assert!(matches!(
        reopen(&w),
        Err(PtmError::UnsupportedVersion { found, .. }) if found == VERSION + 1
    ));
    let w = with_header(&words, |h| h[0] = MAGIC);
    assert!(reopen(&w).is_ok(), "rewriting the same header is harmless");
}

#[test]
fn a_cur_comb_naming_no_replica() {
    let words = formatted();
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    let cur_comb = pool.data_offset() + 64;
    let good = pool.word(cur_comb).unwrap().load(Ordering::Relaxed);
    for bad in [good | 0xfff, good | (0xff << 12), u64::MAX] {
        let mut w = words.clone();
        w[(cur_comb / 8) as usize] = bad;
        assert!(
            matches!(reopen(&w), Err(PtmError::Corrupt { .. })),
            "cur_comb {bad:#x}"
        );
    }
}

#[test]
fn a_damaged_designated_replica() {
    let words = formatted();
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    let p = RedoPtm::open(pool, &common::config(2)).unwrap();
    let replica = p.pool().data_offset()
        + 4096
        + perdure_ptm::sti::idx(p.cur_comb_word()) as u64 * p.region_len();
    drop(p);
    // The allocator's magic, length and bump pointer (region offsets 512,
    // 520, 528).
    for (word, bad) in [(512u64, 0u64), (520, 12345), (528, u64::MAX), (528, 7)] {
        let mut w = words.clone();
        w[((replica + word) / 8) as usize] = bad;
        assert!(
            matches!(reopen(&w), Err(PtmError::Corrupt { .. })),
            "replica word {word} = {bad:#x}"
        );
    }
}

#[test]
fn a_pool_too_small_and_bad_configurations() {
    let pool = Pool::volatile("small", 8192, NoFlush).unwrap();
    assert!(matches!(
        RedoPtm::create(pool, &common::config(2)),
        Err(PtmError::PoolTooSmall { threads: 2, .. })
    ));
    let pool = Pool::volatile("small", 32 << 10, NoFlush).unwrap();
    assert!(matches!(
        RedoPtm::create(pool, &common::config(8)),
        Err(PtmError::PoolTooSmall { .. })
    ));
    for bad in [
        Config {
            threads: 0,
            ..Config::small()
        },
        Config {
            threads: 255,
            ..Config::small()
        },
        Config {
            states_per_thread: 1,
            ..Config::small()
        },
        Config {
            states_per_thread: 5000,
            ..Config::small()
        },
        Config {
            log_entries_per_thread: 0,
            ..Config::small()
        },
        Config {
            dirty_lines_per_replica: 0,
            ..Config::small()
        },
    ] {
        let pool = Pool::volatile("cfg", SIZE, NoFlush).unwrap();
        assert!(
            matches!(RedoPtm::create(pool, &bad), Err(PtmError::Config(_))),
            "{bad:?}"
        );
    }
    // On open, only the volatile sizes are taken from the configuration.
    let words = formatted();
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    assert!(matches!(
        RedoPtm::open(
            pool,
            &Config {
                states_per_thread: 1,
                ..Config::small()
            }
        ),
        Err(PtmError::Config(_))
    ));
}

#[test]
fn open_or_create() {
    let pool = Pool::volatile("oc", SIZE, NoFlush).unwrap();
    let p = RedoPtm::open_or_create(pool, &common::config(3)).unwrap();
    assert_eq!(p.threads(), 3);
    p.update_tx(|tx| {
        use perdure_ptm::Transaction;
        tx.set_root(0, 9)
    })
    .unwrap();
    let words = p.pool().snapshot_words();
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    let p = RedoPtm::open_or_create(pool, &common::config(5)).unwrap();
    assert_eq!(p.threads(), 3, "opened, not re-created");
    use perdure_ptm::TxRead;
    assert_eq!(p.read_tx(|tx| tx.root(0)).unwrap(), 9);
}

#[test]
fn the_default_footprint_is_bounded() {
    let bytes = Config::default().volatile_bytes();
    assert!(bytes < 64 << 20, "{bytes} bytes");
    println!(
        "default volatile footprint: {:.1} MB",
        bytes as f64 / (1 << 20) as f64
    );
}
