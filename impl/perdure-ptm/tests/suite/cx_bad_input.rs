//! Bad input only CX-PTM and CX-PUC see is a typed error, never a panic:
//! another construction's pool, a CX-PUC pool opened for an object of
//! another layout, the configurations CX refuses. What every construction
//! is checked for is in `ptm_bad_input.rs`.

use crate::common;

use perdure_pm::meta::NotFormatted;
use perdure_pm::{NoFlush, PmError, Pool};
use perdure_ptm::cx::{ptm::MAGIC, Config};
use perdure_ptm::{CxPtm, CxPuc, PtmError, Transaction};

const SIZE: u64 = 256 << 10;

/// A formatted CX-PTM pool's words, after a few transactions.
fn formatted() -> Vec<u64> {
    let p = common::cx(2, SIZE, NoFlush);
    for i in 0..5 {
        p.update_tx(move |tx| tx.set_root(0, i)).unwrap();
    }
    p.pool().snapshot_words()
}

#[test]
fn another_constructions_pool_is_not_formatted() {
    let words = formatted();
    // Another construction's pool: its magic is not ours.
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    assert!(matches!(
        CxPuc::<_, u64>::open(pool, &Config::small()),
        Err(PtmError::Pm(PmError::NotFormatted(NotFormatted {
            what: "CX-PUC",
            found: MAGIC,
            ..
        })))
    ));
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    assert!(matches!(
        perdure_ptm::RedoPtm::open(pool, &perdure_ptm::redo::Config::small()),
        Err(PtmError::Pm(PmError::NotFormatted(_)))
    ));
}

#[test]
fn a_puc_object_of_another_layout() {
    let p: CxPuc<NoFlush, [u64; 2]> = common::puc(2, SIZE, NoFlush);
    p.update(|m| *m.obj_mut() = [3, 4]).unwrap();
    let words = p.pool().snapshot_words();
    let open = |words: &[u64]| Pool::volatile_from_words(words, NoFlush).unwrap();
    assert!(matches!(
        CxPuc::<_, [u64; 3]>::open(open(&words), &Config::small()),
        Err(PtmError::Pm(PmError::Corrupt { what: "CX-PUC", .. }))
    ));
    assert!(matches!(
        CxPuc::<_, u128>::open(open(&words), &Config::small()),
        Err(PtmError::Pm(PmError::Corrupt { .. }))
    ));
    let q = CxPuc::<_, [u64; 2]>::open(open(&words), &Config::small()).unwrap();
    assert_eq!(q.read(|r| r.obj()[0] * 10 + r.obj()[1]).unwrap(), 34);
}

#[test]
fn bad_configurations() {
    let bad = common::changed::each_changed(
        Config::small(),
        &[
            |c| c.replay_window = 0,
            |c| c.dirty_lines_per_replica = 0,
            |c| c.undo_entries_per_thread = 1 << 29,
        ],
    );
    common::assert_refused(bad, SIZE, CxPtm::create);
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
fn open_or_create_keeps_the_puc_object() {
    let pool = Pool::volatile("oc", SIZE, NoFlush).unwrap();
    let q = CxPuc::open_or_create(pool, &common::cx_config(2), 5u64).unwrap();
    q.update(|m| *m.obj_mut() += 1).unwrap();
    let pool = Pool::volatile_from_words(&q.pool().snapshot_words(), NoFlush).unwrap();
    let q = CxPuc::open_or_create(pool, &common::cx_config(2), 0u64).unwrap();
    assert_eq!(q.read(|r| *r.obj()).unwrap(), 6);
}

/// A CX-PUC read through the annotated view ([`perdure_ptm::TxRead`])
/// refuses every offset that is not a word of the allocated part:
/// unaligned, at the allocated length, past it (the mutation campaign's
/// `puc.rs:497:25` gap: no check handed a PUC read such an offset).
#[test]
fn a_puc_read_refuses_offsets_outside_the_allocated_words() {
    use perdure_ptm::TxRead;
    let pool = Pool::volatile("puc-offsets", SIZE, NoFlush).unwrap();
    let q = CxPuc::open_or_create(pool, &common::cx_config(1), 5u64).unwrap();
    let verdicts: u64 = q
        .read(|r| {
            let tx = r.tx();
            let used = 8 * r.words().len() as u64;
            let refused = [3, used - 5, used, used + 8, used + 3]
                .iter()
                .filter(|&&o| matches!(tx.try_load(o), Err(PtmError::BadOffset { .. })))
                .count() as u64;
            // 10 × refused + 1 if the last word of the allocated part loads.
            10 * refused + u64::from(tx.try_load(used - 8).is_ok())
        })
        .unwrap();
    assert_eq!(
        verdicts, 51,
        "5 bad offsets refused, the last allocated word loaded"
    );
}
