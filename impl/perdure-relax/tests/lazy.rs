//! Laziness (§6.1, §6.6): after a crash, opening a structure recovers its
//! root object only (lazy variants) or every reachable node (eager Mirror);
//! a lazy variant recovers a node the first time an operation reaches it,
//! and nothing beyond. Checked on the DRAM replica directly, with zeroed
//! DRAM (an unrecovered slot is (0, 0) there); and the recovery bitset on
//! garbage DRAM whose `from` index points at another word's entry. Beside
//! these, checks written for missed mutants of the mutation campaign
//! (`MUTANTS.md`): a space's bounds and size, bucket arrays longer than a
//! recovery batch and of the most buckets, the bucket of a hash table's
//! keys, a BST's root accessor, and garbage DRAM that is garbage.

mod common;

use common::*;
use perdure_pm::{NoFlush, Pool};
use perdure_relax::ds::HarrisList;
use perdure_relax::{OpenOptions, Space, Tracking};

/// The list nodes of keys 1..=20 (in order), after a crash.
fn setup(pool: &Pool<NoFlush>, t: Tracking) -> Vec<u64> {
    let sp = create(pool, t);
    let mut h = sp.handle().unwrap();
    let l = HarrisList::create(&mut h, 0).unwrap();
    for k in (1..=20).rev() {
        l.insert(&mut h, k).unwrap();
    }
    // Walk NVMM to find the nodes (next is field 1, at +16).
    let mut nodes = Vec::new();
    let mut n = pool
        .word(l.head() + 16)
        .unwrap()
        .load(std::sync::atomic::Ordering::Acquire);
    while n != 0 {
        nodes.push(n);
        n = pool
            .word(n + 16)
            .unwrap()
            .load(std::sync::atomic::Ordering::Acquire)
            & !0xf;
    }
    assert_eq!(nodes.len(), 20);
    nodes
}

fn recovered(sp: &Space<'_, NoFlush>, node: u64) -> bool {
    // Field 0 (the key) holds a non-zero sequence once copied.
    sp.dram().seq(node) != 0
}

#[test]
fn lazy_variants_recover_only_what_operations_reach() {
    for t in Tracking::ALL.into_iter().filter(|t| *t != Tracking::Eager) {
        let pool = Pool::volatile("relax-lazy", POOL, NoFlush).unwrap();
        let nodes = setup(&pool, t);
        pool.reincarnate();
        let sp = Space::open(&pool, base(&pool), OpenOptions::new(t)).unwrap();
        let l = HarrisList::open(&sp, 0).unwrap();
        assert!(
            nodes.iter().all(|&n| !recovered(&sp, n)),
            "{t:?}: opening recovered more than the root"
        );
        let mut h = sp.handle().unwrap();
        assert!(l.contains(&mut h, 5).unwrap());
        // find(5) reads the keys 1..=5 and the `next` of each of their
        // nodes. Field tracking recovers exactly those fields; the pointer
        // variants recover a node when a pointer to it is loaded, so the
        // load of key 5's `next` also recovers key 6's node.
        let reached = if t.marks_pointers() { 6 } else { 5 };
        for (i, &n) in nodes.iter().enumerate() {
            assert_eq!(
                recovered(&sp, n),
                i < reached,
                "{t:?}: node of key {}",
                i + 1
            );
        }
        assert_eq!(l.keys(&mut h).unwrap(), (1..=20).collect::<Vec<_>>());
        assert!(nodes.iter().all(|&n| recovered(&sp, n)), "{t:?}");
    }
}

/// `recoverNode` on a node of more fields than one write-back batch
/// (`RECOVER_BATCH`): a hash table of 200 buckets (three batches of 64
/// fields and a part of a fourth) and one of `MAX_BUCKETS` (the most a
/// bucket array holds: with its count, 64 full batches), reopened after a
/// crash under each variant that recovers its root node at open, recovers
/// its bucket array batch by batch, every bucket's field copied (a
/// non-zero sequence in DRAM), and finds every key.
#[test]
fn a_bucket_array_longer_than_a_batch_recovers_whole() {
    use perdure_relax::ds::hash::MAX_BUCKETS;
    use perdure_relax::ds::HashTable;
    for buckets in [200, MAX_BUCKETS] {
        for t in [Tracking::Markable, Tracking::Hybrid, Tracking::ZMarkable] {
            let pool = Pool::volatile("relax-batches", POOL, NoFlush).unwrap();
            let array = {
                let sp = create(&pool, t);
                let mut h = sp.handle().unwrap();
                let ht = HashTable::create(&mut h, 0, buckets).unwrap();
                for k in 1..=40 {
                    ht.insert(&mut h, k).unwrap();
                }
                sp.root(0).unwrap().unwrap()
            };
            pool.reincarnate();
            let sp = Space::open(&pool, base(&pool), OpenOptions::new(t)).unwrap();
            let ht = HashTable::open(&sp, 0).unwrap();
            let unrecovered: Vec<usize> = (0..=buckets)
                .filter(|&i| sp.dram().seq(array + 16 * i as u64) == 0)
                .collect();
            assert!(
                unrecovered.is_empty(),
                "{t:?}, {buckets} buckets: fields {unrecovered:?}"
            );
            let mut h = sp.handle().unwrap();
            assert_eq!(
                ht.keys(&mut h).unwrap(),
                (1..=40).collect::<Vec<_>>(),
                "{t:?}, {buckets} buckets"
            );
        }
    }
}

#[test]
fn eager_recovery_copies_every_reachable_node_before_the_first_operation() {
    let pool = Pool::volatile("relax-lazy", POOL, NoFlush).unwrap();
    let nodes = setup(&pool, Tracking::Eager);
    pool.reincarnate();
    let sp = Space::open(&pool, base(&pool), OpenOptions::new(Tracking::Eager)).unwrap();
    let head = sp.root(0).unwrap().unwrap();
    assert_eq!(
        sp.recover_root::<perdure_relax::ds::ListNode>(head)
            .unwrap(),
        21
    );
    for &n in &nodes {
        for f in [n, n + 16] {
            let (nv, d) = sp.replicas(f).unwrap();
            assert_eq!(nv, d, "field {f:#x} not copied");
        }
    }
}

#[test]
fn an_array_recovers_cell_by_cell_and_refuses_pointer_tracking() {
    use perdure_relax::ds::PArray;
    for t in [Tracking::Bitset, Tracking::PseudoBitset] {
        let pool = Pool::volatile("relax-lazy", POOL, NoFlush).unwrap();
        {
            let sp = create(&pool, t);
            let mut h = sp.handle().unwrap();
            let a = PArray::create(&mut h, 0, 100).unwrap();
            for i in 0..100 {
                a.cell(i).unwrap().store(&sp, i as u64 * 3).unwrap();
            }
        }
        pool.reincarnate();
        let sp = Space::open(&pool, base(&pool), OpenOptions::new(t)).unwrap();
        let a = PArray::open(&sp, 0).unwrap();
        assert_eq!(a.len(), 100, "{t:?}: the reopened array's length");
        assert!(!a.is_empty(), "{t:?}: the reopened array is not empty");
        let cell_recovered = |i: usize| sp.dram().seq(a.cell(i).unwrap().offset()) != 0;
        assert!(
            (0..100).all(|i| !cell_recovered(i)),
            "{t:?}: open recovered cells"
        );
        assert_eq!(a.cell(42).unwrap().load(&sp).unwrap(), 126);
        assert_eq!(a.cell(7).unwrap().fetch_add(&sp, 1).unwrap(), 21);
        for i in 0..100 {
            assert_eq!(cell_recovered(i), i == 42 || i == 7, "{t:?}: cell {i}");
        }
        assert!(a.cell(100).is_err());
    }
    for t in [Tracking::Markable, Tracking::Hybrid, Tracking::ZMarkable] {
        let pool = Pool::volatile("relax-lazy", POOL, NoFlush).unwrap();
        let sp = create(&pool, t);
        let mut h = sp.handle().unwrap();
        let e = PArray::create(&mut h, 0, 4).unwrap_err();
        assert!(
            matches!(e, perdure_relax::RelaxError::Config(_)),
            "{t:?}: {e}"
        );
    }
}

/// `Space::required_bytes` is what a space needs from its base: a pool that
/// ends there holds one, and the pool of a page less does not (root tables
/// of 4 to 64 slots: past 8, more than the header's line).
#[test]
fn a_space_fits_in_its_required_bytes() {
    use perdure_relax::Config;
    for roots in [4, 16, 64] {
        let cfg = Config {
            threads: 2,
            roots,
            heap_bytes: 1 << 20,
            msb_sequences: false,
        };
        let need = Space::<NoFlush>::required_bytes(&cfg);
        assert!(
            need > cfg.heap_bytes + 8 * roots,
            "{roots} roots: {need} bytes"
        );
        let probe = Pool::volatile("relax-fit", 1 << 20, NoFlush).unwrap();
        let at = base(&probe);
        for (size, fits) in [(at + need, true), (at + need - 4096, false)] {
            let pool = Pool::volatile("relax-fit", size, NoFlush).unwrap();
            assert_eq!(base(&pool), at);
            let r = Space::create(&pool, at, &cfg, OpenOptions::new(Tracking::Bitset));
            assert_eq!(
                r.is_ok(),
                fits,
                "{roots} roots: a pool of {size} bytes, {need} from the base {at:#x}"
            );
        }
    }
}

/// A space opens again at any base it was created at, however far into the
/// pool, as long as it fits: `Space::open` checks the root table's range
/// (`base..heap_base`) and the heap's, and neither reaches past the pool's
/// end when the space ends exactly there.
#[test]
fn a_space_far_into_its_pool_opens_again() {
    use perdure_relax::Config;
    let cfg = Config {
        threads: 2,
        roots: 4,
        heap_bytes: 1 << 20,
        msb_sequences: false,
    };
    let need = Space::<NoFlush>::required_bytes(&cfg);
    let probe = Pool::volatile("relax-far", 1 << 20, NoFlush).unwrap();
    let first = base(&probe);
    for at in [first, first + (4 << 20)] {
        let pool = Pool::volatile("relax-far", at + need, NoFlush).unwrap();
        Space::create(&pool, at, &cfg, OpenOptions::new(Tracking::Bitset))
            .unwrap_or_else(|e| panic!("created at {at:#x}: {e}"));
        Space::open(&pool, at, OpenOptions::new(Tracking::Bitset))
            .unwrap_or_else(|e| panic!("opened at {at:#x} in a pool of {} bytes: {e}", at + need));
    }
}

/// A field's sequence (§6.4.4–§6.4.5): a fresh field starts at 1 — with the
/// MSB set in an MSB-sequence space (PseudoBitsetAtomic's, where the MSB
/// tells a recovered DRAM pair from a zeroed one) — and every write adds
/// one in the low 63 bits, keeping the MSB; both replicas agree when
/// quiescent. Checked on a list node's key (`store`, `fetch_add`) and its
/// pointer field (`PAtomicPtr::store`, which no structure calls).
#[test]
fn field_sequences_start_at_one_and_count_below_the_msb() {
    use perdure_relax::ds::ListNode;
    use perdure_relax::{PAtomic, PAtomicPtr};
    for t in [Tracking::Bitset, Tracking::PseudoBitset] {
        let msb = if t == Tracking::PseudoBitset {
            1 << 63
        } else {
            0
        };
        let pool = Pool::volatile("relax-seq", POOL, NoFlush).unwrap();
        let sp = create(&pool, t);
        let mut h = sp.handle().unwrap();
        let n = h.alloc_node::<ListNode>(&[5, 0]).unwrap();
        let m = h.alloc_node::<ListNode>(&[6, 0]).unwrap();
        let both = |f: u64| {
            let (nv, d) = sp.replicas(f).unwrap();
            assert_eq!(nv, d, "{t:?}: the replicas of {f:#x} differ");
            nv
        };
        assert_eq!(both(n), (5, msb | 1), "{t:?}: a fresh key");
        assert_eq!(both(n + 16), (0, msb | 1), "{t:?}: a fresh pointer");
        let key = PAtomic::at(n);
        key.store(&sp, 7).unwrap();
        assert_eq!(both(n), (7, msb | 2), "{t:?}: after a store");
        assert_eq!(key.fetch_add(&sp, 3).unwrap(), 7);
        assert_eq!(both(n), (10, msb | 3), "{t:?}: after a fetch_add");
        let next = PAtomicPtr::<ListNode>::at(n + 16);
        next.store(&sp, m).unwrap();
        assert_eq!(next.load(&sp).unwrap(), m, "{t:?}: the stored pointer");
        assert_eq!(both(n + 16), (m, msb | 2), "{t:?}: after a pointer store");
    }
}

/// `Space::create` takes 1..=256 threads and 1..=64 roots (`MAX_THREADS`,
/// `MAX_ROOTS`), both bounds included, and refuses either count outside
/// with a configuration error.
#[test]
fn a_space_takes_thread_and_root_counts_within_their_bounds() {
    use perdure_relax::{Config, RelaxError};
    let cases = [
        (0, 4, false),
        (1, 4, true),
        (256, 4, true),
        (257, 4, false),
        (2, 0, false),
        (2, 1, true),
        (2, 64, true),
        (2, 65, false),
    ];
    for (threads, roots, ok) in cases {
        let cfg = Config {
            threads,
            roots,
            heap_bytes: 1 << 20,
            msb_sequences: false,
        };
        let pool = Pool::volatile("relax-counts", 4 << 20, NoFlush).unwrap();
        let r = Space::create(&pool, base(&pool), &cfg, OpenOptions::new(Tracking::Bitset));
        match r {
            Ok(_) => assert!(ok, "{threads} threads, {roots} roots accepted"),
            Err(RelaxError::Config(_)) => assert!(!ok, "{threads} threads, {roots} roots refused"),
            Err(e) => panic!("{threads} threads, {roots} roots: {e}"),
        }
    }
}

/// `Space::create` formats its heap with one slot more than the space has
/// threads: a dropped `Handle` frees its space slot before its heap slot
/// (the `HeapThread` field drops after `Handle::drop`), so a thread that
/// registers in that window, with every other space slot held, still needs
/// a free heap slot. With all of a space's handles held, the heap must
/// count `threads + 1` slots, `threads` of them in use, and a registration
/// (the one a new handle would make in the window) must find the spare.
/// No workload drops and registers handles concurrently on a full space,
/// so without the spare nothing failed.
#[test]
fn a_space_s_heap_keeps_a_spare_slot_past_its_threads() {
    use perdure_relax::Config;
    for threads in [1, 2, 8] {
        let cfg = Config {
            threads,
            roots: 4,
            heap_bytes: 1 << 20,
            msb_sequences: false,
        };
        let pool = Pool::volatile("relax-spare-slot", 4 << 20, NoFlush).unwrap();
        let sp = Space::create(&pool, base(&pool), &cfg, OpenOptions::new(Tracking::Bitset))
            .unwrap_or_else(|e| panic!("{threads} threads: {e}"));
        let handles: Vec<_> = (0..threads).map(|_| sp.handle().unwrap()).collect();
        let stats = sp.heap().stats();
        assert_eq!(
            (stats.slots, stats.slots_in_use),
            (threads as u64 + 1, threads as u64),
            "{threads} threads, every handle held: the heap's slots and those in use"
        );
        let spare = sp.heap().register().unwrap_or_else(|e| {
            panic!(
                "{threads} threads, every handle held: no heap slot left for a handle \
                 registered while another drops ({e})"
            )
        });
        drop(spare);
        drop(handles);
    }
}

/// The recovery bitset's O(1) initialisation (`src/bitset.rs`): a word `w`
/// is initialised only if `from[w] < count` *and* `to[from[w]] == w`, so a
/// garbage `from[w]` that points below the count — at a genuine entry,
/// another word's — does not make `w`'s garbage bits read as set (Claim 1
/// of Chapter 7: no false positives). The arrays' garbage is SplitMix64
/// from the seed (`from`'s salted with `2 · γ`, its word 1 the stream's
/// second output, SplitMix64 of state `seed' + 2 · γ`), and SplitMix64's
/// mix maps 0 to 0: the seed below makes `from[1]` 0. Setting a slot of
/// word 0 pushes word 0 (`count` 1, `to[0] = 0`); then no slot of word 1,
/// whose bits are garbage, may read as set. (Random garbage points below
/// the count with probability about `count / 2^64`, so the garbage-DRAM
/// checks never met one.)
#[test]
fn bitset_garbage_from_index_below_the_count_initialises_nothing() {
    use perdure_relax::internals::Bitset;
    use perdure_relax::DramInit;
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
    let salt = 2u64.wrapping_mul(GAMMA);
    let seed = 0u64.wrapping_sub(2u64.wrapping_mul(GAMMA)) ^ salt;
    let b = Bitset::new(4096, DramInit::Garbage { seed });
    b.set(0x10);
    assert!(b.test(0x10), "the slot set");
    for off in (64 * 16..128 * 16).step_by(16) {
        assert!(
            !b.test(off),
            "slot {off:#x} of word 1 (never initialised, from[1] = 0 < count 1) reads as set"
        );
    }
}

/// A hash table puts key `k` in bucket `mix(k) mod n`, with `mix` the
/// finalizer of SplitMix64 (of `k + γ`): the fixed function a table's
/// persistent layout is read back with, by this build and later ones. 64
/// keys in 16 buckets, read from NVMM bucket by bucket, each in its
/// bucket, spread over at least 12 buckets (a constant hash would put them
/// all in one, a correct and slow set), and the table finds every key.
#[test]
fn a_hash_table_puts_each_key_in_its_bucket() {
    use perdure_relax::ds::HashTable;
    fn mix(k: u64) -> u64 {
        let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    let pool = Pool::volatile("relax-spread", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Markable);
    let mut h = sp.handle().unwrap();
    let ht = HashTable::create(&mut h, 0, 16).unwrap();
    for k in 1..=64 {
        assert!(ht.insert(&mut h, k).unwrap(), "insert {k}");
    }
    let word = |off: u64| {
        pool.word(off)
            .unwrap()
            .load(std::sync::atomic::Ordering::Acquire)
    };
    let array = sp.root(0).unwrap().unwrap();
    let mut used = 0;
    for b in 0..16 {
        // Bucket b's sentinel, then its list: a node is [key, next].
        let mut n = word(word(array + 16 * (1 + b)) + 16) & !0xf;
        used += usize::from(n != 0);
        while n != 0 {
            let k = word(n);
            assert_eq!(mix(k) % 16, b, "key {k} in bucket {b}");
            n = word(n + 16) & !0xf;
        }
    }
    assert!(used >= 12, "64 keys in {used} of 16 buckets");
    assert_eq!(ht.keys(&mut h).unwrap(), (1..=64).collect::<Vec<_>>());
}

/// `Bst::root` is the tree's root sentinel `R`, the node its root slot
/// names, when the tree is created and when it is opened after a crash.
#[test]
fn a_bst_root_is_the_node_its_root_slot_names() {
    use perdure_relax::ds::Bst;
    let pool = Pool::volatile("relax-bst-root", POOL, NoFlush).unwrap();
    let created = {
        let sp = create(&pool, Tracking::Hybrid);
        let mut h = sp.handle().unwrap();
        let t = Bst::create(&mut h, 2).unwrap();
        assert_eq!(Some(t.root()), sp.root(2).unwrap(), "created");
        t.root()
    };
    pool.reincarnate();
    let sp = Space::open(&pool, base(&pool), OpenOptions::new(Tracking::Hybrid)).unwrap();
    let t = Bst::open(&sp, 2).unwrap();
    assert_eq!(
        (t.root(), sp.root(2).unwrap()),
        (created, Some(created)),
        "opened"
    );
}

/// Garbage DRAM (`DramInit::Garbage`) is garbage: in a space reopened with
/// it, the DRAM pairs of 32 fields nothing has loaded since (a node's and
/// the 31 after it) hold 64 words, none 0 and no two equal (SplitMix64's
/// outputs), so the variants that accept garbage DRAM are checked against
/// something other than a zeroed replica.
#[test]
fn garbage_dram_holds_distinct_words() {
    let pool = Pool::volatile("relax-garbage", POOL, NoFlush).unwrap();
    let node = {
        let sp = create(&pool, Tracking::Bitset);
        let mut h = sp.handle().unwrap();
        h.alloc_node::<perdure_relax::ds::ListNode>(&[5, 0])
            .unwrap()
    };
    pool.reincarnate();
    let sp = Space::open(&pool, base(&pool), opts(Tracking::Bitset, Some(7))).unwrap();
    let words: std::collections::BTreeSet<u64> = (0..32)
        .map(|i| node + 16 * i)
        .flat_map(|f| [sp.dram().val(f), sp.dram().seq(f)])
        .collect();
    assert!(
        words.len() == 64 && !words.contains(&0),
        "the DRAM words of 32 fields: {} distinct, 0 among them: {}",
        words.len(),
        words.contains(&0)
    );
}

/// The other half of the initialisation test: `from[w]` must be *below* the
/// count, not equal to it. On zeroed DRAM, before the first push, every
/// `from[w]` is 0 and `to[0]` is 0, so with `from[w] <= count` word 0 would
/// read as initialised at count 0: setting a slot of word 0 would push
/// nothing, and the next push (word 1's, into `to[0]`) would take word 0's
/// entry away, losing the bit set before it.
#[test]
fn bitset_from_index_at_the_count_is_not_initialised() {
    use perdure_relax::internals::Bitset;
    use perdure_relax::DramInit;
    let b = Bitset::new(4096, DramInit::Zeroed);
    b.set(0x10);
    b.set(64 * 16);
    assert!(
        b.test(0x10),
        "word 0's slot, set before word 1 was pushed, is lost"
    );
    assert!(b.test(64 * 16), "word 1's slot");
    assert!(!b.test(0x20), "a slot never set reads as set");
}
