//! Bad input only Redo-PTM sees is a typed error, never a panic: the
//! configurations it refuses; and its default volatile footprint is
//! bounded. What every construction is checked for is in
//! `ptm_bad_input.rs`.

use crate::common;

use perdure_pm::{NoFlush, Pool};
use perdure_ptm::redo::{Config, RedoPtm};
use perdure_ptm::PtmError;

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

#[test]
fn bad_configurations() {
    let bad = common::changed::each_changed(
        Config::small(),
        &[
            |c| c.states_per_thread = 1,
            |c| c.states_per_thread = 5000,
            |c| c.log_entries_per_thread = 0,
            |c| c.dirty_lines_per_replica = 0,
        ],
    );
    common::assert_refused(bad, SIZE, RedoPtm::create);
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
fn the_default_footprint_is_bounded() {
    let bytes = Config::default().volatile_bytes();
    assert!(bytes < 64 << 20, "{bytes} bytes");
    println!(
        "default volatile footprint: {:.1} MB",
        bytes as f64 / (1 << 20) as f64
    );
}
