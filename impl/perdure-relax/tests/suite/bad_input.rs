//! Bad input gives typed errors, never a panic: a pool with no space, a
//! corrupt header, bad configurations, roots out of range or empty,
//! pointers that leave the pool, and counted nodes with a bad count.

use crate::common;

use common::*;
use perdure_pm::meta::NotFormatted;
use perdure_pm::{NoFlush, PmError, Pool};
use perdure_relax::ds::array::MAX_CELLS;
use perdure_relax::ds::hash::MAX_BUCKETS;
use perdure_relax::ds::{HarrisList, HashTable, PArray};
use perdure_relax::{Config, DramInit, OpenOptions, PAtomic, RelaxError, Space, Tracking};
use std::sync::atomic::Ordering;

fn pool() -> Pool<NoFlush> {
    Pool::volatile("relax-bad", POOL, NoFlush).unwrap()
}

/// A pool formatted with a space made under `t` (dropped again), and the
/// space's base.
fn formatted(t: Tracking) -> (Pool<NoFlush>, u64) {
    let p = pool();
    let b = base(&p);
    drop(create(&p, t));
    (p, b)
}

/// Reopens the space at `b` after a crash with `o`, expecting an error.
fn reopen_err(p: &Pool<NoFlush>, b: u64, o: OpenOptions) -> RelaxError {
    p.reincarnate();
    Space::open(p, b, o).unwrap_err()
}

#[test]
fn opening_an_unformatted_range_is_not_formatted() {
    let p = pool();
    let e = Space::open(&p, base(&p), OpenOptions::new(Tracking::Bitset)).unwrap_err();
    assert!(
        matches!(
            e,
            RelaxError::Pm(PmError::NotFormatted(NotFormatted { found: 0, .. }))
        ),
        "{e}"
    );
}

#[test]
fn a_corrupt_header_is_reported() {
    let (p, b) = formatted(Tracking::Bitset);
    // Flip the root count (word 2): the checksum no longer matches.
    p.word(b + 16).unwrap().store(1000, Ordering::Relaxed);
    let e = reopen_err(&p, b, OpenOptions::new(Tracking::Bitset));
    assert!(matches!(e, RelaxError::Pm(PmError::Corrupt { .. })), "{e}");
    assert!(e.to_string().contains("checksum"), "{e}");
}

#[test]
fn bad_configurations_are_refused() {
    let p = pool();
    let b = base(&p);
    for cfg in [
        Config {
            threads: 0,
            ..cfg(false)
        },
        Config {
            roots: 0,
            ..cfg(false)
        },
        Config {
            roots: 1000,
            ..cfg(false)
        },
    ] {
        let e = Space::create(&p, b, &cfg, OpenOptions::new(Tracking::Bitset)).unwrap_err();
        assert!(matches!(e, RelaxError::Config(_)), "{e}");
    }
    let e = Space::create(&p, b + 64, &cfg(false), OpenOptions::new(Tracking::Bitset)).unwrap_err();
    assert!(matches!(e, RelaxError::Config(_)), "misaligned base: {e}");
    let huge = Config {
        heap_bytes: 1 << 40,
        ..cfg(false)
    };
    let e = Space::create(&p, b, &huge, OpenOptions::new(Tracking::Bitset)).unwrap_err();
    assert!(
        matches!(e, RelaxError::Pm(PmError::Pool(_))),
        "heap beyond the pool: {e}"
    );
}

#[test]
fn zeroed_dram_variants_refuse_garbage_and_pseudo_needs_msb_sequences() {
    let (p, b) = formatted(Tracking::Markable);
    for t in [Tracking::ZMarkable, Tracking::PseudoBitset] {
        let o = OpenOptions {
            tracking: t,
            dram: DramInit::Garbage { seed: 1 },
        };
        let e = reopen_err(&p, b, o);
        assert!(matches!(e, RelaxError::Config(_)), "{t:?}: {e}");
    }
    let e = reopen_err(&p, b, OpenOptions::new(Tracking::PseudoBitset));
    assert!(e.to_string().contains("msb_sequences"), "{e}");
}

#[test]
fn roots_out_of_range_empty_or_reset_are_errors() {
    let p = pool();
    let sp = create(&p, Tracking::Markable);
    assert!(matches!(
        sp.root(4),
        Err(RelaxError::NoSuchRoot { index: 4, count: 4 })
    ));
    assert!(matches!(
        HarrisList::open(&sp, 1),
        Err(RelaxError::EmptyRoot { index: 1 })
    ));
    let mut h = sp.handle().unwrap();
    HarrisList::create(&mut h, 1).unwrap();
    let e = HarrisList::create(&mut h, 1).unwrap_err();
    assert!(e.to_string().contains("immutable"), "{e}");
    let e = HashTable::create(&mut h, 2, 0).unwrap_err();
    assert!(matches!(e, RelaxError::Config(_)), "{e}");
}

#[test]
fn pointers_and_fields_outside_the_pool_are_errors() {
    for t in Tracking::ALL {
        let p = pool();
        let b = base(&p);
        {
            let sp = create(&p, t);
            let mut h = sp.handle().unwrap();
            let l = HarrisList::create(&mut h, 0).unwrap();
            l.insert(&mut h, 1).unwrap();
            // Corrupt the sentinel's next pointer in NVMM: beyond the pool.
            let next = l.head() + 16;
            p.word(next).unwrap().store(POOL + 4096, Ordering::Relaxed);
            assert!(PAtomic::at(POOL).load(&sp).is_err(), "{t:?}");
            assert!(
                PAtomic::at(b + 8).load(&sp).is_err(),
                "{t:?}: misaligned field"
            );
        }
        p.reincarnate();
        let sp = Space::open(&p, b, opts(t, Some(5))).unwrap();
        let r = HarrisList::open(&sp, 0).and_then(|l| {
            let mut h = sp.handle()?;
            l.keys(&mut h)
        });
        assert!(
            matches!(r, Err(RelaxError::Pm(PmError::Pool(_)))),
            "{t:?}: {r:?}"
        );
    }
}

/// A skip-list root that names a head running past the pool's end (its
/// height word says `MAX_HEIGHT` levels, its last level 16 bytes beyond the
/// end) is refused by `SkipList::open`, under every variant the skip list
/// takes: the lazy ones recover no field of it at open (BitsetAtomic none
/// at all), so the range check of the whole head is all that stands there.
#[test]
fn a_skip_list_head_past_the_pool_end_is_refused_at_open() {
    use perdure_relax::ds::skiplist::MAX_HEIGHT;
    use perdure_relax::ds::SkipList;
    for t in Tracking::ALL {
        if t == Tracking::Markable {
            continue; // refused whatever the head (`sets_model.rs`)
        }
        let p = pool();
        let b = base(&p);
        let head = POOL - 16 * (2 + MAX_HEIGHT as u64) + 16;
        {
            let sp = create(&p, t);
            PAtomic::at(head + 16)
                .store(&sp, MAX_HEIGHT as u64)
                .unwrap();
            sp.set_root(0, head).unwrap();
        }
        p.reincarnate();
        let sp = Space::open(&p, b, opts(t, Some(5))).unwrap();
        let r = SkipList::open(&sp, 0).map(|_| ());
        assert!(
            matches!(r, Err(RelaxError::Pm(PmError::Pool(_)))),
            "{t:?}: {r:?}"
        );
    }
}

/// A counted node (a hash table's bucket array, an array) whose count
/// word is damaged is refused as corrupt at open, naming the damaged space
/// by its base offset: a count of 0, one past the most a node holds
/// (`MAX_CELLS`, `MAX_BUCKETS`; its fields would still lie in the pool),
/// and one far past the pool's end.
#[test]
fn a_counted_node_with_a_bad_count_is_corrupt() {
    assert_eq!(MAX_CELLS, MAX_BUCKETS);
    for count in [0, MAX_CELLS as u64 + 1, 1 << 30] {
        for kind in ["bucket array", "array"] {
            let p = pool();
            let b = base(&p);
            let t = if kind == "array" {
                Tracking::Bitset
            } else {
                Tracking::Markable
            };
            let node = {
                let sp = create(&p, t);
                let mut h = sp.handle().unwrap();
                if kind == "array" {
                    PArray::create(&mut h, 0, 4).unwrap();
                } else {
                    HashTable::create(&mut h, 0, 4).unwrap();
                }
                sp.root(0).unwrap().unwrap()
            };
            p.word(node).unwrap().store(count, Ordering::Relaxed);
            p.reincarnate();
            let sp = Space::open(&p, b, OpenOptions::new(t)).unwrap();
            let e = if kind == "array" {
                PArray::open(&sp, 0).map(|_| ()).unwrap_err()
            } else {
                HashTable::open(&sp, 0).map(|_| ()).unwrap_err()
            };
            // Not 0: the space starts after the pool's header.
            assert!(b != 0);
            assert!(
                matches!(e, RelaxError::Pm(PmError::Corrupt { base, .. }) if base == b),
                "{kind} claiming {count} entries: {e}"
            );
        }
    }
}
