//! Bad input to CX-PTM and CX-PUC is a typed error, never a panic: a pool
//! without a PTM (or with another construction's), damaged header words,
//! another version, a `cur_comb` naming no replica, a damaged designated
//! replica, a CX-PUC pool opened for an object of another layout, a pool
//! too small for `2N` replicas, bad configurations.

#![cfg(not(any(perdure_loom, perdure_shuttle)))]

mod common;

use perdure_pm::{meta, NoFlush, Pool};
use perdure_ptm::cx::{ptm::MAGIC, Config, VERSION};
use perdure_ptm::{CxPtm, CxPuc, PtmError, Transaction, TxRead};

const SIZE: u64 = 256 << 10;

/// A formatted CX-PTM pool's words, after a few transactions.
fn formatted() -> Vec<u64> {
    let p = common::cx(2, SIZE, NoFlush);
    for i in 0..5 {
        p.update_tx(move |tx| tx.set_root(0, i)).unwrap();
    }
    p.pool().snapshot_words()
}

fn reopen(words: &[u64]) -> Result<CxPtm<NoFlush>, PtmError> {
    let pool = Pool::volatile_from_words(words, NoFlush).expect("the pool header is intact");
    CxPtm::open(pool, &common::cx_config(2))
}

fn corrupt(r: Result<CxPtm<NoFlush>, PtmError>) -> bool {
    matches!(r, Err(PtmError::Corrupt { kind: "CX-PTM", .. }))
}

/// Rewrites the header with `edit` applied and a valid checksum.
fn with_header(words: &[u64], edit: impl FnOnce(&mut [u64; 7])) -> Vec<u64> {
    let pool = Pool::volatile_from_words(words, NoFlush).unwrap();
    let base = (pool.data_offset() / 8) as usize;
    let mut h = [0; 7];
    h.copy_from_slice(&words[base..base + 7]);
    edit(&mut h);
    meta::write(&pool, pool.data_offset(), &h).unwrap();
    pool.snapshot_words()
}

#[test]
fn the_untouched_pool_opens_and_others_do_not() {
    let words = formatted();
    assert_eq!(reopen(&words).unwrap().read_tx(|tx| tx.root(0)).unwrap(), 4);
    let pool = Pool::volatile("empty", SIZE, NoFlush).unwrap();
    assert!(matches!(
        CxPtm::open(pool, &Config::small()),
        Err(PtmError::NotFormatted { found: 0, .. })
    ));
    // Another construction's pool: its magic is not ours.
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    assert!(matches!(
        CxPuc::<_, u64>::open(pool, &Config::small()),
        Err(PtmError::NotFormatted {
            kind: "CX-PUC",
            found: MAGIC
        })
    ));
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    assert!(matches!(
        perdure_ptm::RedoPtm::open(pool, &perdure_ptm::redo::Config::small()),
        Err(PtmError::NotFormatted { .. })
    ));
}

#[test]
fn damaged_or_foreign_headers() {
    let words = formatted();
    let base = (Pool::volatile_from_words(&words, NoFlush)
        .unwrap()
        .data_offset()
        / 8) as usize;
    for word in 1..8 {
        for bit in [0, 17, 63] {
            let mut w = words.clone();
            w[base + word] ^= 1 << bit;
            assert!(corrupt(reopen(&w)), "flip of header word {word} bit {bit}");
        }
    }
    type Edit = Box<dyn Fn(&mut [u64; 7])>;
    let cases: Vec<(&str, Edit)> = vec![
        ("zero threads", Box::new(|h| h[2] = 0)),
        ("too many threads", Box::new(|h| h[2] = 1000)),
        ("more threads than replicas fit", Box::new(|h| h[2] = 100)),
        ("replica too small", Box::new(|h| h[3] = 512)),
        ("replica not page-sized", Box::new(|h| h[3] += 8)),
        ("replicas overflow the pool", Box::new(|h| h[3] = 1 << 60)),
        ("replicas elsewhere", Box::new(|h| h[4] += 4096)),
        ("another pool's size", Box::new(|h| h[5] *= 2)),
        ("a CX-PUC object layout", Box::new(|h| h[6] = (1 << 63) | 8)),
    ];
    for (what, edit) in cases {
        let w = with_header(&words, edit);
        assert!(corrupt(reopen(&w)), "{what}: {:?}", reopen(&w).map(|_| ()));
    }
    let w = with_header(&words, |h| h[1] = VERSION + 1);
    assert!(matches!(
        reopen(&w),
        Err(PtmError::UnsupportedVersion { found, .. }) if found == VERSION + 1
    ));
}

#[test]
fn a_cur_comb_naming_no_replica_or_a_damaged_one() {
    let words = formatted();
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    let cur_comb = pool.data_offset() + 64;
    let good = pool
        .word(cur_comb)
        .unwrap()
        .load(std::sync::atomic::Ordering::Relaxed);
    // 2N = 4 replicas: index 4 and up name none.
    for bad in [good | 0xfff, (good & !0xfff) | 4, u64::MAX] {
        let mut w = words.clone();
        w[(cur_comb / 8) as usize] = bad;
        assert!(corrupt(reopen(&w)), "cur_comb {bad:#x}");
    }
    let p = reopen(&words).unwrap();
    let replica = p.pool().data_offset()
        + 4096
        + perdure_ptm::sti::idx(p.cur_comb_word()) as u64 * p.region_len();
    drop(p);
    // The allocator's magic, length and bump pointer (region offsets 512,
    // 520, 528).
    for (word, bad) in [(512u64, 0u64), (520, 12345), (528, u64::MAX), (528, 7)] {
        let mut w = words.clone();
        w[((replica + word) / 8) as usize] = bad;
        assert!(corrupt(reopen(&w)), "replica word {word} = {bad:#x}");
    }
}

#[test]
fn a_puc_object_of_another_layout() {
    let p: CxPuc<NoFlush, [u64; 2]> = common::puc(2, SIZE, NoFlush);
    p.update(|m| *m.obj_mut() = [3, 4]).unwrap();
    let words = p.pool().snapshot_words();
    let open = |words: &[u64]| Pool::volatile_from_words(words, NoFlush).unwrap();
    assert!(matches!(
        CxPuc::<_, [u64; 3]>::open(open(&words), &Config::small()),
        Err(PtmError::Corrupt { kind: "CX-PUC", .. })
    ));
    assert!(matches!(
        CxPuc::<_, u128>::open(open(&words), &Config::small()),
        Err(PtmError::Corrupt { .. })
    ));
    let q = CxPuc::<_, [u64; 2]>::open(open(&words), &Config::small()).unwrap();
    assert_eq!(q.read(|r| r.obj()[0] * 10 + r.obj()[1]).unwrap(), 34);
}

#[test]
fn a_pool_too_small_and_bad_configurations() {
    let pool = Pool::volatile("small", 16 << 10, NoFlush).unwrap();
    assert!(matches!(
        CxPtm::create(pool, &common::cx_config(2)),
        Err(PtmError::PoolTooSmall {
            threads: 2,
            replicas: 4,
            ..
        })
    ));
    let pool = Pool::volatile("small", 64 << 10, NoFlush).unwrap();
    assert!(matches!(
        CxPuc::create(pool, &common::cx_config(8), 0u64),
        Err(PtmError::PoolTooSmall { replicas: 16, .. })
    ));
    let bad_configs = [
        Config {
            threads: 0,
            ..Config::small()
        },
        Config {
            threads: 255,
            ..Config::small()
        },
        Config {
            replay_window: 0,
            ..Config::small()
        },
        Config {
            dirty_lines_per_replica: 0,
            ..Config::small()
        },
        Config {
            undo_entries_per_thread: 1 << 29,
            ..Config::small()
        },
    ];
    for bad in bad_configs {
        let pool = Pool::volatile("cfg", SIZE, NoFlush).unwrap();
        assert!(
            matches!(CxPtm::create(pool, &bad), Err(PtmError::Config(_))),
            "{bad:?}"
        );
    }
    #[derive(
        Clone,
        Copy,
        perdure_ptm::cx::zerocopy::FromBytes,
        perdure_ptm::cx::zerocopy::IntoBytes,
        perdure_ptm::cx::zerocopy::KnownLayout,
        perdure_ptm::cx::zerocopy::Immutable,
    )]
    #[zerocopy(crate = "perdure_ptm::cx::zerocopy")]
    #[repr(C, align(64))]
    struct Wide([u64; 8]);
    let pool = Pool::volatile("cfg", SIZE, NoFlush).unwrap();
    assert!(matches!(
        CxPuc::create(pool, &Config::small(), Wide([0; 8])),
        Err(PtmError::Config(_))
    ));
    // On open, only the volatile sizes are taken from the configuration.
    let pool = Pool::volatile_from_words(&formatted(), NoFlush).unwrap();
    let bad = Config {
        replay_window: 0,
        ..Config::small()
    };
    assert!(matches!(CxPtm::open(pool, &bad), Err(PtmError::Config(_))));
}

#[test]
fn open_or_create() {
    let pool = Pool::volatile("oc", SIZE, NoFlush).unwrap();
    let p = CxPtm::open_or_create(pool, &common::cx_config(3)).unwrap();
    assert_eq!(p.threads(), 3);
    p.update_tx(|tx| tx.set_root(0, 9)).unwrap();
    let pool = Pool::volatile_from_words(&p.pool().snapshot_words(), NoFlush).unwrap();
    let p = CxPtm::open_or_create(pool, &common::cx_config(5)).unwrap();
    assert_eq!(p.threads(), 3, "opened, not re-created");
    assert_eq!(p.read_tx(|tx| tx.root(0)).unwrap(), 9);
    let pool = Pool::volatile("oc", SIZE, NoFlush).unwrap();
    let q = CxPuc::open_or_create(pool, &common::cx_config(2), 5u64).unwrap();
    q.update(|m| *m.obj_mut() += 1).unwrap();
    let pool = Pool::volatile_from_words(&q.pool().snapshot_words(), NoFlush).unwrap();
    let q = CxPuc::open_or_create(pool, &common::cx_config(2), 0u64).unwrap();
    assert_eq!(q.read(|r| *r.obj()).unwrap(), 6);
}
