//! Bad input to every PTM is a typed error, never a panic: a pool without a
//! PTM, damaged header words, another version, geometry that does not fit,
//! another object layout, a `cur_comb` naming no replica, a damaged
//! designated replica, a pool too small for the replicas, a thread count
//! out of range (at creation, and in a header whose pool has room for its
//! replicas); and
//! `open_or_create` opens rather than re-creates. Each test once per
//! construction (`common::ptms`); the configurations each construction
//! refuses, and what only one has, are in `cx_bad_input.rs` and
//! `redo_bad_input.rs`.

use crate::common;

use common::ptms::{ptm_suite, Construction};
use perdure_pm::{meta, NoFlush, PmError, Pool};
use perdure_ptm::{Ptm, PtmError, Transaction, TxRead};
use std::sync::atomic::Ordering;

const SIZE: u64 = 256 << 10;

/// A formatted pool's words, after a few transactions.
fn formatted<C: Construction>() -> Vec<u64> {
    let pool = Pool::volatile("bad-input", SIZE, NoFlush).unwrap();
    let p = C::create(pool, 2).unwrap();
    for i in 0..5 {
        p.update_tx(move |tx| tx.set_root(0, i)).unwrap();
    }
    pool_of::<C>(&p).snapshot_words()
}

fn pool_of<C: Construction>(p: &C::P<NoFlush>) -> &Pool<NoFlush> {
    C::pool(p)
}

fn reopen<C: Construction>(words: &[u64]) -> Result<C::P<NoFlush>, PtmError> {
    let pool = Pool::volatile_from_words(words, NoFlush).expect("the pool header is intact");
    C::open(pool)
}

fn corrupt<C: Construction>(r: Result<C::P<NoFlush>, PtmError>) -> bool {
    matches!(r, Err(PtmError::Pm(PmError::Corrupt { what, .. })) if what == C::KIND)
}

/// Asserts that reopening `words` reports the pool corrupt (`what` says
/// which edit made it so).
fn assert_corrupt<C: Construction>(words: &[u64], what: &str) {
    let r = reopen::<C>(words);
    let shown = format!("{:?}", r.as_ref().map(|_| ()));
    assert!(corrupt::<C>(r), "{what}: {shown}");
}

/// The header's first word (its magic), in words.
fn header_base(words: &[u64]) -> usize {
    (Pool::volatile_from_words(words, NoFlush)
        .unwrap()
        .data_offset()
        / 8) as usize
}

/// Rewrites the header with `edit` applied and a valid checksum.
fn with_header(words: &[u64], edit: impl FnOnce(&mut [u64; 7])) -> Vec<u64> {
    let pool = Pool::volatile_from_words(words, NoFlush).unwrap();
    let base = header_base(words);
    let mut h = [0; 7];
    h.copy_from_slice(&words[base..base + 7]);
    edit(&mut h);
    meta::write(&pool, pool.data_offset(), &h).unwrap();
    pool.snapshot_words()
}

fn the_untouched_pool_opens<C: Construction>() {
    let p = reopen::<C>(&formatted::<C>()).unwrap();
    assert_eq!(p.read_tx(|tx| tx.root(0)).unwrap(), 4);
}

fn a_pool_without_a_ptm<C: Construction>() {
    let pool = Pool::volatile("empty", SIZE, NoFlush).unwrap();
    assert!(matches!(
        C::open(pool),
        Err(PtmError::Pm(PmError::NotFormatted(meta::NotFormatted {
            found: 0,
            ..
        })))
    ));
}

fn a_damaged_header<C: Construction>() {
    let words = formatted::<C>();
    let base = header_base(&words);
    for word in 1..8 {
        for bit in [0, 17, 63] {
            let mut w = words.clone();
            w[base + word] ^= 1 << bit;
            assert!(
                corrupt::<C>(reopen::<C>(&w)),
                "flip of header word {word} bit {bit}"
            );
        }
    }
    let mut w = words.clone();
    w[base] ^= 1;
    assert!(matches!(
        reopen::<C>(&w),
        Err(PtmError::Pm(PmError::NotFormatted(_)))
    ));
}

fn headers_that_do_not_fit<C: Construction>() {
    let words = formatted::<C>();
    type Edit = Box<dyn Fn(&mut [u64; 7])>;
    let cases: Vec<(&str, Edit)> = vec![
        ("zero threads", Box::new(|h| h[2] = 0)),
        ("too many threads", Box::new(|h| h[2] = 1000)),
        ("more threads than replicas fit", Box::new(|h| h[2] = 100)),
        (
            "many more threads than replicas fit",
            Box::new(|h| h[2] = 200),
        ),
        ("replica too small", Box::new(|h| h[3] = 512)),
        // A page multiple, so only the least-length check stands before the
        // allocator's view of the replica (its length less the allocator's
        // base would wrap).
        ("replica of no bytes", Box::new(|h| h[3] = 0)),
        ("replica not page-sized", Box::new(|h| h[3] += 8)),
        ("replicas overflow the pool", Box::new(|h| h[3] = 1 << 60)),
        ("replicas elsewhere", Box::new(|h| h[4] += 4096)),
        ("another pool's size", Box::new(|h| h[5] *= 2)),
        (
            "another object layout (a CX-PUC one, or none)",
            Box::new(|h| h[6] = if h[6] == 0 { (1 << 63) | 8 } else { 0 }),
        ),
    ];
    for (what, edit) in cases {
        assert_corrupt::<C>(&with_header(&words, edit), what);
    }
    let w = with_header(&words, |h| h[1] += 1);
    assert!(matches!(
        reopen::<C>(&w),
        Err(PtmError::UnsupportedVersion { found, .. }) if found == perdure_ptm::cx::VERSION + 1
    ));
    let w = with_header(&words, |_| ());
    assert!(
        reopen::<C>(&w).is_ok(),
        "rewriting the same header is harmless"
    );
}

fn a_cur_comb_naming_no_replica<C: Construction>() {
    let words = formatted::<C>();
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    let cur_comb = pool.data_offset() + 64;
    let good = pool.word(cur_comb).unwrap().load(Ordering::Relaxed);
    // Index R (the replica count) and up name none; thread 255 is none.
    let past = (good & !0xfff) | C::replicas(2) as u64;
    for bad in [good | 0xfff, past, good | (0xff << 12), u64::MAX] {
        let mut w = words.clone();
        w[(cur_comb / 8) as usize] = bad;
        assert!(corrupt::<C>(reopen::<C>(&w)), "cur_comb {bad:#x}");
    }
}

fn a_damaged_designated_replica<C: Construction>() {
    let words = formatted::<C>();
    let p = reopen::<C>(&words).unwrap();
    let replica = pool_of::<C>(&p).data_offset()
        + 4096
        + perdure_ptm::internals::sti::idx(C::cur_comb_word(&p)) as u64 * C::region_len(&p);
    drop(p);
    // The allocator's magic, length and bump pointer (region offsets 512,
    // 520, 528).
    for (word, bad) in [(512u64, 0u64), (520, 12345), (528, u64::MAX), (528, 7)] {
        let mut w = words.clone();
        w[((replica + word) / 8) as usize] = bad;
        assert!(
            corrupt::<C>(reopen::<C>(&w)),
            "replica word {word} = {bad:#x}"
        );
    }
}

fn a_pool_too_small<C: Construction>() {
    let mut cases = vec![(8192, 2), (16 << 10, 2), (32 << 10, 8)];
    if C::replicas(8) == 16 {
        // CX's 16 replicas of at least 4 KiB do not fit 64 KiB (Redo's 9 do).
        cases.push((64 << 10, 8));
    }
    for (size, threads) in cases {
        let pool = Pool::volatile("small", size, NoFlush).unwrap();
        let r = C::create(pool, threads).map(|_| ());
        assert!(
            matches!(r, Err(PtmError::PoolTooSmall { threads: t, replicas, .. })
                if t == threads && replicas == C::replicas(threads)),
            "{size} bytes, {threads} threads: {r:?}"
        );
    }
}

fn thread_counts_out_of_range<C: Construction>() {
    for threads in [0, 255] {
        let pool = Pool::volatile("cfg", SIZE, NoFlush).unwrap();
        let r = C::create(pool, threads).map(|_| ());
        assert!(
            matches!(r, Err(PtmError::Config(_))),
            "{threads} threads: {r:?}"
        );
    }
}

/// A header recording 255 threads (`MAX_THREADS`; id 255 is `INVALID`'s)
/// in a pool with room for their replicas: formatted for 254 threads with
/// replicas of the least length, the pool's leftover holds the replicas a
/// 255th thread adds, so the geometry checks pass and only the thread-count
/// check refuses it. (`headers_that_do_not_fit`'s 0 and 1,000 threads are
/// also refused by the geometry.)
fn a_thread_count_only_its_own_check_refuses<C: Construction>() {
    let header = Pool::volatile("probe", SIZE, NoFlush)
        .unwrap()
        .data_offset();
    let size = header + 4096 + C::replicas(255) as u64 * 4096;
    let pool = Pool::volatile("room-for-255", size, NoFlush).unwrap();
    let p = C::create(pool, 254).unwrap();
    let words = pool_of::<C>(&p).snapshot_words();
    drop(p);
    assert!(reopen::<C>(&words).is_ok(), "254 threads, as formatted");
    let w = with_header(&words, |h| h[2] = 255);
    assert_corrupt::<C>(&w, "255 threads in a pool with room for their replicas");
}

/// A replica length that is no page multiple, where nothing else
/// contradicts it: in a pool just created (`cur_comb` designates replica
/// 0, which starts where it did), the header's length 16 bytes short and
/// replica 0's allocator made to agree (its length word follows its magic,
/// the first nonzero word of the replica: the roots before it are zero).
/// The replicas fit and the allocator attaches, so only the length check
/// refuses it. `headers_that_do_not_fit`'s lengths are also refused by the
/// geometry or by the allocator's recorded length; this pair is a forgery
/// no format writes.
fn a_replica_length_only_its_own_check_refuses<C: Construction>() {
    let pool = Pool::volatile("fresh", SIZE, NoFlush).unwrap();
    let p = C::create(pool, 2).unwrap();
    let words = pool_of::<C>(&p).snapshot_words();
    drop(p);
    let hb = header_base(&words);
    let (len, base) = (words[hb + 3], (words[hb + 4] / 8) as usize);
    let magic = base + words[base..].iter().position(|&w| w != 0).unwrap();
    let mut w = with_header(&words, |h| h[3] -= 16);
    let recorded = w[magic + 1];
    assert!(
        recorded < len && len - recorded < 4096,
        "replica 0's allocator records {recorded} bytes of a {len}-byte replica"
    );
    w[magic + 1] -= 16;
    assert_corrupt::<C>(&w, "replicas 16 bytes short of a page multiple");
}

fn open_or_create<C: Construction>() {
    let pool = Pool::volatile("oc", SIZE, NoFlush).unwrap();
    let p = C::open_or_create(pool, 3).unwrap();
    assert_eq!(C::threads(&p), 3);
    p.update_tx(|tx| tx.set_root(0, 9)).unwrap();
    let words = pool_of::<C>(&p).snapshot_words();
    let pool = Pool::volatile_from_words(&words, NoFlush).unwrap();
    let p = C::open_or_create(pool, 5).unwrap();
    assert_eq!(C::threads(&p), 3, "opened, not re-created");
    assert_eq!(p.read_tx(|tx| tx.root(0)).unwrap(), 9);
    // A damaged magic is reported, not formatted over: every bit of it.
    let header = (pool_of::<C>(&p).data_offset() / 8) as usize;
    for bit in 0..64 {
        let mut w = words.clone();
        w[header] ^= 1 << bit;
        let pool = Pool::volatile_from_words(&w, NoFlush).unwrap();
        let r = C::open_or_create(pool, 5).map(|_| ());
        assert!(r.is_err(), "bit {bit} of the magic flipped: formatted over");
    }
}

ptm_suite!(
    the_untouched_pool_opens,
    a_pool_without_a_ptm,
    a_damaged_header,
    headers_that_do_not_fit,
    a_cur_comb_naming_no_replica,
    a_damaged_designated_replica,
    a_pool_too_small,
    thread_counts_out_of_range,
    a_thread_count_only_its_own_check_refuses,
    a_replica_length_only_its_own_check_refuses,
    open_or_create,
);
