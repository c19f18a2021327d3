//! shuttle: randomized and PCT schedules (seeded, reproducible) of the heap
//! under many threads, through the `sync` facade.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-pm --test shuttle_heap` (`make verify` does). Without the cfg this
//! file is empty. `PERDURE_SHUTTLE_ITERS` sets the schedules per scheduler
//! (default 5,000; 100,000 with `PERDURE_DEPTH=deep`).
//!
//! Each thread stamps every word of the blocks it holds (16 and 32 bytes,
//! two size classes) with its id and the allocation's index, and checks the
//! stamps before freeing: a block handed to two threads at once, or two
//! held blocks that overlap (a set of one class handed out as another's),
//! fail the check.
//! The model geometry (4-block sets, one kept set) makes threads complete,
//! donate and steal sets through the global stack within a few operations.

#![cfg(perdure_shuttle)]

use perdure_pm::heap::Heap;
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::sync::{thread, Arc};
use perdure_pm::{NoFlush, Pool};

const SIZE: u64 = 64 << 10;

#[path = "support/depth.rs"]
mod depth;

/// Schedules per test: `PERDURE_SHUTTLE_ITERS`, else 5,000 (200 in the
/// mutation tier, `PERDURE_DEPTH=mutants`: docs/MUTANTS.md).
fn iterations() -> usize {
    let normal = if depth::mutants() { 200 } else { 5000 };
    depth::count("PERDURE_SHUTTLE_ITERS", normal, 100_000)
}

/// Block sizes the threads alternate between: two size classes, so that a
/// set donated to or stolen from the wrong class's global stack hands out
/// blocks of the wrong size, which overlap.
const SIZES: [u64; 2] = [16, 32];

/// Operations per thread: enough frees of each class (a third of the
/// operations, and whenever more than 6 blocks are held) for a thread to
/// complete two sets of a class and donate one.
const OPS: u64 = 48;

/// Fills every word of block `b` (`size` bytes) with `stamp`.
fn stamp(pool: &Pool<NoFlush>, b: u64, size: u64, stamp: u64) {
    for w in (0..size).step_by(8) {
        pool.word(b + w).unwrap().store(stamp, Ordering::Relaxed);
    }
}

/// Checks that every word of block `b` still holds `stamp`.
fn check_stamp(pool: &Pool<NoFlush>, b: u64, size: u64, stamp: u64) {
    for w in (0..size).step_by(8) {
        let v = pool.word(b + w).unwrap().load(Ordering::Relaxed);
        assert_eq!(
            v, stamp,
            "block {b:#x} ({size} bytes), word {w}: {v:#x}, not its holder's stamp {stamp:#x}: the block overlaps another one held"
        );
    }
}

fn workload() {
    let pool = Arc::new(Pool::volatile("shuttle", SIZE, NoFlush).unwrap());
    let base = pool.data_offset();
    Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let handles: Vec<_> = (1..=3u64)
        .map(|id| {
            let pool = pool.clone();
            thread::spawn(move || {
                let heap = Heap::open(&pool, base).unwrap();
                let mut t = heap.register().unwrap();
                // (block, size, stamp): the stamp names the thread and the
                // allocation, so two blocks held at once never share one.
                let mut held: Vec<(u64, u64, u64)> = Vec::new();
                for i in 0..OPS {
                    if i % 3 == 2 || held.len() > 6 {
                        let (b, size, st) = held.remove((i as usize) % held.len());
                        check_stamp(&pool, b, size, st);
                        t.free(b).unwrap();
                    } else {
                        let size = SIZES[(i / 3 % 2) as usize];
                        let b = t.alloc(size).unwrap();
                        let st = id << 32 | i;
                        stamp(&pool, b, size, st);
                        held.push((b, size, st));
                    }
                }
                for (b, size, st) in held {
                    check_stamp(&pool, b, size, st);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn random_schedules_never_share_a_block() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_random(workload, n);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:pm/heap-random\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} random schedules (seed {seed}), 3 threads x {OPS} ops on 2 size classes\",\"detail\":\"no block held by two threads, no two held blocks overlap; no crashes injected\"}}");
}

#[test]
fn pct_schedules_never_share_a_block() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_pct(workload, n, 3);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:pm/heap-pct\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} PCT schedules (depth 3, seed {seed}), 3 threads x {OPS} ops on 2 size classes\",\"detail\":\"no block held by two threads, no two held blocks overlap; no crashes injected\"}}");
}

/// Thread A allocates a chunk's worth of 16-byte blocks and frees them all,
/// completing sets of which its slot keeps one and donates the rest to the
/// global stack; thread B, afterwards, allocates as many blocks as A
/// donated: it takes A's sets from the global stack, and carves no new
/// chunk. A slot that kept its sets (no donation) would make B carve one.
fn donation() {
    let pool = Arc::new(Pool::volatile("shuttle", SIZE, NoFlush).unwrap());
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    // A stays registered, so that B gets a slot of its own (a slot A
    // released would come with A's stack).
    let mut a = heap.register().unwrap();
    let blocks: Vec<u64> = (0..64).map(|_| a.alloc(16).unwrap()).collect();
    for &b in &blocks {
        a.free(b).unwrap();
    }
    let freed = blocks.len() as u64;
    let used = heap.stats().chunks_used;
    let mut b = heap.register().unwrap();
    // A keeps at most two sets of 4 (the one it fills and the one it kept).
    for _ in 0..freed - 8 {
        b.alloc(16).unwrap();
    }
    let after = heap.stats().chunks_used;
    assert_eq!(
        after, used,
        "the second slot carved {} new chunks for blocks the first had freed: its sets were not donated",
        after - used
    );
    drop(a);
}

#[test]
fn freed_sets_reach_other_slots() {
    perdure_pm::sync::seeded::check_random(donation, 1);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:pm/heap-donation\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"1 schedule, 64 blocks freed by one slot, 56 allocated by another\",\"detail\":\"completed sets beyond the slot's kept one reach the global stack and are reused: no new chunk carved\"}}");
}

/// A chunk claim is durable before its blocks are handed out, and a slot
/// reopened after a crash goes on where it was: slot A allocates a block
/// durably (its first, which claims a chunk); in the crash image that keeps
/// only what was guaranteed persisted, the reopened heap's first slot (A's,
/// recovered) carves its next block from A's chunk, and no block of it or of
/// a second slot overlaps A's. A claim whose write-back missed the chunk
/// counter would let a new claim take A's chunk again; a slot that forgot
/// its state would claim a new chunk and leak its own.
fn claims_survive_a_crash() {
    use perdure_pm::sim::{ImageChoice, VolatileFill};
    use perdure_pm::{Sim, SimOptions};
    let pool = Pool::volatile("shuttle-claim", SIZE, Sim::new(SimOptions::default())).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let mut a = heap.register().unwrap();
    let held = a.alloc_durable(16).unwrap();
    let cp = pool.backend().capture();
    let words = cp.materialize(
        &ImageChoice(vec![0; cp.unsettled_lines()]),
        VolatileFill::Zeroed,
    );
    let image = Pool::volatile_from_words(&words, Sim::default()).unwrap();
    let heap = Heap::open(&image, base).unwrap();
    // The slot registered first is A's, recovered: it carves from A's chunk
    // (no new claim) ...
    let chunks = heap.stats().chunks_used;
    let mut first = heap.register().unwrap();
    let next = first.alloc(16).unwrap();
    assert_eq!(
        heap.stats().chunks_used,
        chunks,
        "the recovered slot claimed a new chunk for its next 16-byte block ({next:#x}): its own was lost"
    );
    assert_ne!(next, held, "the recovered slot handed out {held:#x} again");
    // ... and every slot's blocks, those of new claims included, lie apart
    // from A's.
    let mut slots = vec![first, heap.register().unwrap()];
    for t in &mut slots {
        for size in [16u64, 32, 64, 128] {
            for _ in 0..8 {
                let b = t.alloc(size).unwrap();
                assert!(
                    b + size <= held || held + 16 <= b,
                    "block {b:#x} ({size} bytes) after the crash overlaps {held:#x}, allocated durably before it"
                );
            }
        }
    }
}

#[test]
fn chunk_claims_are_durable() {
    perdure_pm::sync::seeded::check_random(claims_survive_a_crash, 1);
}

/// A chunk a slot claims is durably the slot's by the time `alloc` returns,
/// before any fence of the caller's: in every Px86 crash image taken right
/// after a plain (not durable) `alloc` of the slot's first block, the
/// recovered slot carves its next block from that chunk, and no second
/// chunk is claimed. (The block itself may be handed out again: only
/// `alloc_durable`, or the caller's fence, makes the allocation durable.)
/// A claim whose owner word (the class line's bump) is not durable with it
/// would leak the chunk, as a crash inside the claim can.
fn claims_are_owned() {
    use perdure_pm::px86::Coverage;
    use perdure_pm::sim::VolatileFill;
    use perdure_pm::{Sim, SimOptions};
    let pool = Pool::volatile("shuttle-owned", SIZE, Sim::new(SimOptions::default())).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 2).unwrap();
    let mut a = heap.register().unwrap();
    let first = a.alloc(16).unwrap();
    let cp = pool.backend().capture();
    let (coverage, images) = cp.images(4096, 1);
    assert_eq!(
        coverage,
        Coverage::Exhaustive,
        "{} images after the alloc",
        cp.total_images()
    );
    for choice in images {
        let words = cp.materialize(&choice, VolatileFill::Zeroed);
        let image = Pool::volatile_from_words(&words, Sim::default()).unwrap();
        // A restart: every slot is free again, A's recovered first.
        image.reincarnate();
        let heap = Heap::open(&image, base).unwrap();
        let claimed = heap.stats().chunks_used;
        let next = heap.register().unwrap().alloc(16).unwrap();
        assert_eq!(
            (claimed, heap.stats().chunks_used),
            (1, 1),
            "image {choice:?}: chunks claimed at recovery and after the next 16-byte block \
             ({next:#x}; the first was {first:#x})"
        );
    }
}

#[test]
fn chunk_claims_are_owned_when_alloc_returns() {
    perdure_pm::sync::seeded::check_random(claims_are_owned, 1);
}

// ---------------------------------------------------------------------------
// Sequential checks of the heap's persistent layout and slot protocol, one
// slot at a time (no schedule to explore; shuttle only because the model
// geometry, 4-block sets and one kept set, makes each state a few operations
// away). Written for mutants the concurrent workloads above did not notice
// (`MUTANTS.md`, "cargo-mutants: the missed mutants").
// ---------------------------------------------------------------------------

use perdure_pm::heap::{HeapError, MAX_CLASS_SHIFT, MIN_CLASS_SHIFT, SET_CAPACITY};

/// Offsets of the module docs' layout table, for the model geometry's
/// classes (16 B to 1 KiB: 7), computed here from the class bounds.
const H_GLOBAL: u64 = 128;
const CLASSES: u64 = (MAX_CLASS_SHIFT - MIN_CLASS_SHIFT + 1) as u64;
const H_SLOTS: u64 = H_GLOBAL + 64 * CLASSES;
const SLOT_SIZE: u64 = 64 * (1 + CLASSES);

fn load<B: perdure_pm::Backend>(pool: &Pool<B>, off: u64) -> u64 {
    pool.word(off).unwrap().load(Ordering::Relaxed)
}

/// Class `c`'s line of slot `s` (`alloc_state`, `sets_head`, `bump`,
/// `set_count`).
fn class_line(base: u64, s: u64, c: u64) -> u64 {
    base + H_SLOTS + SLOT_SIZE * s + 64 * (1 + c)
}

/// A restart of `pool` with its memory as it is (every store persisted):
/// the same words in a new pool, a new incarnation, so every slot is free
/// and a slot registered recovers from its persistent state.
fn restart(words: &[u64]) -> Pool<NoFlush> {
    let image = Pool::volatile_from_words(words, NoFlush).unwrap();
    image.reincarnate();
    image
}

/// The heap's metadata lies where the module docs' layout table says: the
/// header records the chunk table right after the slots (`H_SLOTS +
/// slots · SLOT_SIZE`, a line per class and one for the owner), and a
/// registered slot's owner word, at `H_SLOTS + s · SLOT_SIZE`, holds the pool
/// incarnation. A heap is read back by later builds from these offsets; a
/// slot table sized for another class count would read another build's
/// heap wrong, which no workload of one build notices.
fn layout() {
    let pool = Pool::volatile("shuttle-layout", SIZE, NoFlush).unwrap();
    let base = pool.data_offset();
    let slots = 3;
    let heap = Heap::format(&pool, base, SIZE - base, slots).unwrap();
    assert_eq!(
        load(&pool, base + 40),
        base + H_SLOTS + slots * SLOT_SIZE,
        "the chunk table's offset in the header"
    );
    let _a = heap.register().unwrap();
    let _b = heap.register().unwrap();
    for s in 0..slots {
        let owner = load(&pool, base + H_SLOTS + s * SLOT_SIZE);
        let expected = if s < 2 { pool.incarnation() } else { 0 };
        assert_eq!(owner, expected, "slot {s}'s owner word");
    }
}

#[test]
fn heap_layout_follows_the_module_docs() {
    perdure_pm::sync::seeded::check_random(layout, 1);
}

/// `Heap::format` takes the slot counts `Heap::open` takes, `1..=MAX_SLOTS`,
/// and refuses any other with `BadRange` before it writes: 0 and
/// `MAX_SLOTS + 1` are refused, 1 and `MAX_SLOTS` formatted (in a pool with
/// room for every slot) and opened again. A heap formatted with a count
/// outside the range would not open after a restart; the workloads format
/// a few slots only.
fn slot_bounds() {
    use perdure_pm::heap::MAX_SLOTS;
    const BIG: u64 = 4 << 20;
    let pool = Pool::volatile("shuttle-slot-bounds", BIG, NoFlush).unwrap();
    let base = pool.data_offset();
    for slots in [0, MAX_SLOTS + 1] {
        let formatted = Heap::format(&pool, base, BIG - base, slots).map(|_| ());
        assert!(
            matches!(formatted, Err(HeapError::BadRange { .. })),
            "a heap of {slots} slots: {formatted:?}"
        );
    }
    for slots in [1, MAX_SLOTS] {
        Heap::format(&pool, base, BIG - base, slots)
            .unwrap_or_else(|e| panic!("a heap of {slots} slots: {e}"));
        Heap::open(&pool, base).unwrap_or_else(|e| panic!("a heap of {slots} slots, opened: {e}"));
    }
}

#[test]
fn heap_format_takes_the_slot_counts_open_takes() {
    perdure_pm::sync::seeded::check_random(slot_bounds, 1);
}

/// `Heap::format` gives the heap every chunk its range has room for: a
/// range that ends exactly where its eighth chunk ends (the chunk area, at
/// the header's word 6, plus 8 chunks) holds 8 chunks, and one a page
/// shorter 7. A format that kept a chunk back from an exact fit would waste
/// a chunk of every such pool; none of the workloads would notice.
fn exact_fit() {
    use perdure_pm::heap::CHUNK_SIZE;
    const BIG: u64 = 1 << 20;
    let pool = Pool::volatile("shuttle-exact-fit", BIG, NoFlush).unwrap();
    let base = pool.data_offset();
    Heap::format(&pool, base, BIG - base, 1).unwrap();
    let area = load(&pool, base + 48);
    let len = area - base + 8 * CHUNK_SIZE;
    assert!(base + len <= BIG, "the test's pool is too small");
    let heap = Heap::format(&pool, base, len, 1).unwrap();
    assert_eq!(load(&pool, base + 48), area, "the chunk area moved");
    assert_eq!(heap.stats().chunks, 8, "chunks of a range with room for 8");
    let heap = Heap::format(&pool, base, len - 4096, 1).unwrap();
    assert_eq!(
        heap.stats().chunks,
        7,
        "chunks of a range a page short of 8"
    );
}

#[test]
fn heap_format_fills_its_range_with_chunks() {
    perdure_pm::sync::seeded::check_random(exact_fit, 1);
}

/// `Heap::open` checks the geometry its header records, all of it: a heap
/// of 8 chunks in a range with room for exactly 8 opens; its header
/// rewritten (with a valid checksum) to record no slots (its chunk area
/// still inside the range), a ninth chunk past the range's end (its
/// tables still consistent: only the end check refuses it), or slots, a
/// chunk count and a chunk table placed so that a page-aligned chunk area
/// starts inside the table (at its start, or only past its first 8 + n
/// bytes), is refused as corrupt.
fn open_checks_geometry() {
    use perdure_pm::heap::{HeapError, CHUNK_SIZE, MAX_SLOTS};
    const BIG: u64 = 1 << 20;
    let pool = Pool::volatile("shuttle-open-geometry", BIG, NoFlush).unwrap();
    let base = pool.data_offset();
    Heap::format(&pool, base, BIG - base, 1).unwrap();
    let len = load(&pool, base + 48) - base + 8 * CHUNK_SIZE;
    Heap::format(&pool, base, len, 1).unwrap();
    let header: [u64; 7] = std::array::from_fn(|i| load(&pool, base + 8 * i as u64));
    assert_eq!(header[4], 8, "chunks of the exact fit");
    // A slot count whose chunk table starts at most 64 bytes (8 chunks'
    // entries) past a page boundary, with the chunk area at that boundary:
    // the area starts before the table's end, inside the table.
    let (slots, table) = (1..=MAX_SLOTS)
        .map(|s| (s, base + H_SLOTS + s * SLOT_SIZE))
        .find(|&(_, t)| (1..=64).contains(&(t % 4096)))
        .expect("a slot count that puts the chunk table just past a page boundary");
    let over_table = [(3, slots), (5, table), (6, table - table % 4096)];
    // A chunk count whose table entries (8 bytes each) reach past the next
    // page boundary, with the chunk area at that boundary: only the table's
    // full length, 8 · nchunks, shows the overlap.
    let room = (BIG - base) / 4096 * 4096;
    let (slots2, table2, n2) = (1..=MAX_SLOTS)
        .map(|s| {
            let t = base + H_SLOTS + s * SLOT_SIZE;
            let gap = 4096 - t % 4096;
            (s, t, gap / 8 + 1)
        })
        .find(|&(_, t, n)| {
            let area = t + (4096 - t % 4096);
            8 + n <= area - t && area + n * CHUNK_SIZE <= base + room
        })
        .expect("a slot and chunk count whose table crosses a page boundary");
    let long_table = [
        (2, room),
        (3, slots2),
        (4, n2),
        (5, table2),
        (6, table2 + (4096 - table2 % 4096)),
    ];
    let edits: [(&str, &[(usize, u64)]); 4] = [
        ("no slots", &[(3, 0)]),
        ("a ninth chunk", &[(4, 9)]),
        ("a chunk area inside the chunk table", &over_table),
        (
            "a chunk table longer than the gap to its chunk area",
            &long_table,
        ),
    ];
    for (what, edit) in edits {
        let mut words = header;
        for &(i, v) in edit {
            words[i] = v;
        }
        perdure_pm::meta::write(&pool, base, &words).unwrap();
        let r = Heap::open(&pool, base).map(|_| ());
        assert!(matches!(r, Err(HeapError::Corrupt(_))), "{what}: {r:?}");
    }
    perdure_pm::meta::write(&pool, base, &header).unwrap();
    assert!(Heap::open(&pool, base).is_ok(), "the header as formatted");
}

#[test]
fn heap_open_checks_each_part_of_its_geometry() {
    perdure_pm::sync::seeded::check_random(open_checks_geometry, 1);
}

/// `Heap::format` writes only inside its range: a heap of 8 chunks formatted
/// 64 KiB into a pool whose every word holds a pattern leaves the pattern
/// before its base and after its end (another structure's memory), and
/// zeroes its metadata: every word between the header and the chunk area,
/// so the first blocks come from the chunk area.
fn stays_in_range() {
    use perdure_pm::heap::CHUNK_SIZE;
    const BIG: u64 = 1 << 20;
    const PATTERN: u64 = 0xA5A5_A5A5_A5A5_A5A5;
    let pool = Pool::volatile("shuttle-in-range", BIG, NoFlush).unwrap();
    let start = pool.data_offset();
    for w in (start..BIG).step_by(8) {
        pool.word(w).unwrap().store(PATTERN, Ordering::Relaxed);
    }
    let base = start + (64 << 10);
    let len = 4096 + 8 * CHUNK_SIZE;
    let heap = Heap::format(&pool, base, len, 2).unwrap();
    assert!(heap.stats().chunks >= 1);
    for w in (start..base).chain(base + len..BIG).step_by(8) {
        assert_eq!(
            load(&pool, w),
            PATTERN,
            "word {w:#x} outside the heap's range"
        );
    }
    assert_eq!(load(&pool, base + 16), len, "the header's length word");
    // Past the 64-byte header, the slot table and the chunk table hold
    // zeroes up to the chunk area: no slot or chunk inherits the pattern.
    let area = load(&pool, base + 48);
    for w in (base + 64..area).step_by(8) {
        assert_eq!(load(&pool, w), 0, "metadata word {w:#x} not cleared");
    }
    let mut t = heap.register().unwrap();
    let (a, b) = (t.alloc(16).unwrap(), t.alloc(256).unwrap());
    assert!(
        a != b && [a, b].iter().all(|&x| x >= area && x < base + len),
        "blocks {a:#x} and {b:#x} outside the chunk area [{area:#x}, {:#x})",
        base + len
    );
}

#[test]
fn heap_format_writes_only_inside_its_range() {
    perdure_pm::sync::seeded::check_random(stays_in_range, 1);
}

/// The global stacks are Treiber stacks whose head word carries an ABA tag
/// (`(set >> 9) | tag << 41`): every push and every pop increments it, so a
/// head value never recurs and a pop that read an old head cannot succeed
/// after the stack was popped and re-pushed under it. Slot A donates two
/// sets of 16-byte blocks (the model geometry keeps one), slot B pops
/// both: the head word's tag counts 1, 2, 3, 4 and its set field follows
/// the pushes and pops.
fn tags() {
    let pool = Pool::volatile("shuttle-tags", SIZE, NoFlush).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let head = || load(&pool, base + H_GLOBAL);
    let split = |w: u64| ((w & ((1 << 41) - 1)) << 9, w >> 41);
    let mut a = heap.register().unwrap();
    let blocks: Vec<u64> = (0..3 * SET_CAPACITY)
        .map(|_| a.alloc(16).unwrap())
        .collect();
    let mut seen = Vec::new();
    for (i, &b) in blocks.iter().enumerate() {
        a.free(b).unwrap();
        if (i + 1) % SET_CAPACITY == 0 && i + 1 > SET_CAPACITY {
            seen.push(split(head()));
        }
    }
    let tags: Vec<u64> = seen.iter().map(|&(_, t)| t).collect();
    assert_eq!(tags, [1, 2], "the global stack's tag after each push");
    let sets: Vec<u64> = seen.iter().map(|&(s, _)| s).collect();
    assert!(
        sets[0] != 0 && sets[1] != 0 && sets[0] != sets[1],
        "the sets pushed: {sets:x?}"
    );
    // B pops the two sets: its first allocation, and the one after the
    // first set's blocks.
    let mut b = heap.register().unwrap();
    b.alloc(16).unwrap();
    seen.push(split(head()));
    for _ in 0..SET_CAPACITY {
        b.alloc(16).unwrap();
    }
    seen.push(split(head()));
    let tags: Vec<u64> = seen.iter().map(|&(_, t)| t).collect();
    assert_eq!(
        tags,
        [1, 2, 3, 4],
        "the global stack's tag after each push and pop"
    );
    assert_eq!(
        seen[2].0, sets[0],
        "after the first pop the first set is on top"
    );
    assert_eq!(seen[3].0, 0, "after the second pop the stack is empty");
    drop(a);
}

#[test]
fn global_stack_tags_count_every_push_and_pop() {
    perdure_pm::sync::seeded::check_random(tags, 1);
}

/// `pending_frees` counts the freed blocks waiting in DRAM filling sets
/// (what a crash would leak), and `flush` pushes them into the slot as a
/// completed set: none pending afterwards, and the blocks come back to the
/// slot's next allocations.
fn pending() {
    let pool = Pool::volatile("shuttle-pending", SIZE, NoFlush).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let mut a = heap.register().unwrap();
    assert_eq!(a.pending_frees(), 0, "a fresh slot");
    let blocks: Vec<u64> = (0..SET_CAPACITY - 1)
        .map(|_| a.alloc(16).unwrap())
        .collect();
    for (i, &b) in blocks.iter().enumerate() {
        a.free(b).unwrap();
        assert_eq!(a.pending_frees(), i + 1, "after {} frees", i + 1);
    }
    a.flush().unwrap();
    assert_eq!(a.pending_frees(), 0, "after flush");
    let mut again: Vec<u64> = blocks.iter().map(|_| a.alloc(16).unwrap()).collect();
    let mut freed = blocks.clone();
    again.sort_unstable();
    freed.sort_unstable();
    assert_eq!(again, freed, "the flushed blocks, allocated again");
}

#[test]
fn flush_pushes_pending_frees_into_the_slot() {
    perdure_pm::sync::seeded::check_random(pending, 1);
}

/// `flush` keeps completing sets until the filling set is empty, also when
/// it holds more than one set's worth: that happens after the heap ran out
/// of memory for a set array (the blocks are kept, and more frees pile up).
/// A heap of 3 chunks: a completed set of 32-byte blocks; five 16-byte
/// blocks; every 512-byte block (set arrays) carved. Freeing the five finds
/// no array (all five stay pending); exhausting the 32-byte set gives its
/// array back (the slot's spare), which becomes the array of a completed
/// set of four freed 512-byte blocks. `flush` then has four arrays for one
/// set of four and one of one: nothing must stay pending.
fn flush_overflow() {
    let pool = Pool::volatile("shuttle-flush", SIZE, NoFlush).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, 4 * 4096, 1).unwrap();
    assert_eq!(heap.stats().chunks, 3);
    let mut a = heap.register().unwrap();
    let small: Vec<u64> = (0..SET_CAPACITY).map(|_| a.alloc(32).unwrap()).collect();
    for &b in &small {
        a.free(b).unwrap();
    }
    let z: Vec<u64> = (0..SET_CAPACITY + 1)
        .map(|_| a.alloc(16).unwrap())
        .collect();
    let mut y = Vec::new();
    loop {
        match a.alloc(512) {
            Ok(b) => y.push(b),
            Err(HeapError::OutOfMemory { .. }) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(y.len() >= SET_CAPACITY, "{} arrays carved", y.len());
    for &b in &z {
        a.free(b).unwrap();
    }
    assert_eq!(
        a.pending_frees(),
        z.len(),
        "no array for the freed 16-byte blocks"
    );
    for _ in 0..=SET_CAPACITY {
        a.alloc(32).unwrap();
    }
    for &b in &y[..SET_CAPACITY] {
        a.free(b).unwrap();
    }
    assert_eq!(
        a.pending_frees(),
        z.len(),
        "the 512-byte blocks completed a set"
    );
    a.flush().unwrap();
    assert_eq!(a.pending_frees(), 0, "after flush");
    let mut again: Vec<u64> = z.iter().map(|_| a.alloc(16).unwrap()).collect();
    let mut freed = z.clone();
    again.sort_unstable();
    freed.sort_unstable();
    assert_eq!(again, freed, "the flushed 16-byte blocks, allocated again");
}

#[test]
fn flush_completes_more_than_one_set() {
    perdure_pm::sync::seeded::check_random(flush_overflow, 1);
}

/// Recovery repairs the one intermediate state a crash can leave in a slot:
/// a pop of its own stack whose `alloc_state` store persisted and whose
/// `sets_head` store (same line, the next store) did not, so that the set
/// being allocated from is still the stack's head. Built by hand from a
/// slot holding one completed set, then restarted: the recovered slot must
/// hand out the set's blocks once, not pop the set again when it is
/// exhausted.
fn repair() {
    let pool = Pool::volatile("shuttle-repair", SIZE, NoFlush).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let mut a = heap.register().unwrap();
    let blocks: Vec<u64> = (0..SET_CAPACITY).map(|_| a.alloc(16).unwrap()).collect();
    for &b in &blocks {
        a.free(b).unwrap();
    }
    let line = class_line(base, 0, 0);
    let set = load(&pool, line + 8);
    assert_ne!(set, 0, "the completed set on the slot's stack");
    let mut words = pool.snapshot_words();
    // alloc_state = (set, 0): the pop's first store.
    words[(line / 8) as usize] = (set >> 9) << 16;
    std::mem::forget(a);
    let image = restart(&words);
    let heap = Heap::open(&image, base).unwrap();
    let mut t = heap.register().unwrap();
    assert_eq!(
        load(&image, line + 8),
        0,
        "the stack's head after the repair"
    );
    let got: Vec<u64> = (0..2 * SET_CAPACITY)
        .map(|_| t.alloc(16).unwrap())
        .collect();
    for (i, b) in got.iter().enumerate() {
        assert!(
            !got[..i].contains(b),
            "block {b:#x} handed out twice after the restart: {got:x?}"
        );
    }
    for b in &blocks {
        assert!(got.contains(b), "the set's block {b:#x} was not handed out");
    }
}

#[test]
fn recovery_repairs_a_half_done_pop() {
    perdure_pm::sync::seeded::check_random(repair, 1);
}

/// Recovery validates the set a slot allocates from: a set of fewer than
/// `SET_CAPACITY` blocks (one `flush` completed) is loaded and allocation
/// goes on in it; a count above `SET_CAPACITY` (not a set this heap wrote)
/// makes `register` fail with `Corrupt` rather than hand out the words past
/// the set's array as blocks.
fn recover_counts() {
    let pool = Pool::volatile("shuttle-counts", SIZE, NoFlush).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let mut a = heap.register().unwrap();
    let n = SET_CAPACITY - 1;
    let blocks: Vec<u64> = (0..n).map(|_| a.alloc(16).unwrap()).collect();
    for &b in &blocks {
        a.free(b).unwrap();
    }
    a.flush().unwrap();
    let first = a.alloc(16).unwrap();
    let line = class_line(base, 0, 0);
    let set = (load(&pool, line) >> 16) << 9;
    assert_eq!(load(&pool, set + 8), n as u64, "the partial set's count");
    let mut words = pool.snapshot_words();
    std::mem::forget(a);
    {
        let image = restart(&words);
        let heap = Heap::open(&image, base).unwrap();
        let mut t = heap
            .register()
            .expect("a slot allocating from a partial set recovers");
        let mut got: Vec<u64> = (1..n).map(|_| t.alloc(16).unwrap()).collect();
        got.push(first);
        got.sort_unstable();
        let mut freed = blocks.clone();
        freed.sort_unstable();
        assert_eq!(got, freed, "the rest of the partial set after the restart");
    }
    words[((set + 8) / 8) as usize] = SET_CAPACITY as u64 + 1;
    let image = restart(&words);
    let heap = Heap::open(&image, base).unwrap();
    let r = heap.register();
    match r {
        Err(HeapError::Corrupt(_)) => {}
        Err(e) => panic!("a set count above SET_CAPACITY: {e}"),
        Ok(_) => panic!("a slot whose set count is above SET_CAPACITY was recovered"),
    }
}

#[test]
fn recovery_checks_the_alloc_sets_count() {
    perdure_pm::sync::seeded::check_random(recover_counts, 1);
}

/// A slot's count of completed sets (`set_count`, word 3 of its class
/// line) follows its stack in persistent memory: 1 once `flush` pushed a
/// set, 0 once the slot's next allocation popped it. Recovery reloads the
/// count and a restarted slot donates by it, so a count left stale by a pop
/// makes it donate sets it does not have to.
fn set_count() {
    let pool = Pool::volatile("shuttle-set-count", SIZE, NoFlush).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let mut a = heap.register().unwrap();
    let blocks: Vec<u64> = (0..SET_CAPACITY - 1)
        .map(|_| a.alloc(16).unwrap())
        .collect();
    for &b in &blocks {
        a.free(b).unwrap();
    }
    a.flush().unwrap();
    let line = class_line(base, 0, 0);
    assert_eq!(
        load(&pool, line + 24),
        1,
        "set_count after flush pushed a set"
    );
    let b = a.alloc(16).unwrap();
    assert!(
        blocks.contains(&b),
        "the next block, {b:#x}, is not a flushed one"
    );
    assert_eq!(
        load(&pool, line + 24),
        0,
        "set_count after the set was popped"
    );
}

#[test]
fn set_count_follows_the_slot_s_stack() {
    perdure_pm::sync::seeded::check_random(set_count, 1);
}

/// A slot's persisted count of completed sets (`set_count`) stays equal to
/// the number of sets on its stack across a donation, and a restarted slot
/// donates by the count it reloads: slot A frees two sets' worth of 16-byte
/// blocks (the model geometry keeps one set and donates the other), so its
/// stack holds one set and `set_count` must read 1; after a restart the
/// recovered slot frees one set's worth more (blocks it held across the
/// restart), which makes two kept sets, one too many: it must donate one,
/// the global stack's second push. A donation that left the count at 2
/// would make the restarted slot donate early; a recovery that reloaded
/// the count as 0 would keep up to `KEEP_SETS` more sets than the slot
/// may (locality only: no block is handed out twice either way).
fn set_count_across_restart() {
    let pool = Pool::volatile("shuttle-set-count-restart", SIZE, NoFlush).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let tag = |p: &Pool<NoFlush>| load(p, base + H_GLOBAL) >> 41;
    let mut a = heap.register().unwrap();
    let blocks: Vec<u64> = (0..3 * SET_CAPACITY)
        .map(|_| a.alloc(16).unwrap())
        .collect();
    for &b in &blocks[..2 * SET_CAPACITY] {
        a.free(b).unwrap();
    }
    assert_eq!(tag(&pool), 1, "the global stack's pushes: one set donated");
    let line = class_line(base, 0, 0);
    let mut on_stack = 0;
    let mut set = load(&pool, line + 8);
    while set != 0 && on_stack <= 3 {
        on_stack += 1;
        set = load(&pool, set);
    }
    assert_eq!(on_stack, 1, "sets on the slot's stack after the donation");
    assert_eq!(
        load(&pool, line + 24),
        on_stack,
        "set_count after the donation: the sets on the slot's stack"
    );
    let words = pool.snapshot_words();
    std::mem::forget(a);
    let image = restart(&words);
    let heap = Heap::open(&image, base).unwrap();
    let mut t = heap.register().unwrap();
    for &b in &blocks[2 * SET_CAPACITY..] {
        t.free(b).unwrap();
    }
    assert_eq!(
        tag(&image),
        2,
        "the global stack's pushes after the restarted slot completed a second kept set: \
         it did not donate"
    );
    assert_eq!(
        load(&image, line + 24),
        1,
        "set_count after the restarted slot's donation"
    );
}

#[test]
fn set_count_survives_a_restart_and_a_donation() {
    perdure_pm::sync::seeded::check_random(set_count_across_restart, 1);
}

/// Recovery validates a slot's bump word on both of its fields: after a
/// 16-byte block is carved from the slot's chunk, a restart whose bump word
/// names a chunk past the heap's last (`nchunks`, header word 4) makes
/// `register` fail with `Corrupt`, and so does one whose used bytes exceed
/// `CHUNK_SIZE` in a chunk that exists; either alone would have the slot
/// carve blocks outside the chunk table.
fn recover_bump() {
    use perdure_pm::heap::CHUNK_SIZE;
    let pool = Pool::volatile("shuttle-bump", SIZE, NoFlush).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, SIZE - base, 4).unwrap();
    let mut a = heap.register().unwrap();
    a.alloc(16).unwrap();
    let bump = class_line(base, 0, 0) + 16;
    let nchunks = load(&pool, base + 32);
    let word = load(&pool, bump);
    assert_eq!(word & 0xff_ffff, 16, "the bump word's used bytes");
    let chunk = (word >> 24) - 1;
    assert!(
        chunk < nchunks,
        "the bump word's chunk {chunk} of {nchunks}"
    );
    let words = pool.snapshot_words();
    std::mem::forget(a);
    let cases = [
        ("a chunk past the last", (nchunks + 1) << 24 | 16),
        (
            "more bytes used than a chunk has",
            (chunk + 1) << 24 | (CHUNK_SIZE + 16),
        ),
    ];
    for (what, w) in cases {
        let mut words = words.clone();
        words[(bump / 8) as usize] = w;
        let image = restart(&words);
        let heap = Heap::open(&image, base).unwrap();
        let r = heap.register();
        match r {
            Err(HeapError::Corrupt(_)) => {}
            Err(e) => panic!("a bump word with {what}: {e}"),
            Ok(_) => panic!("a slot whose bump word has {what} was recovered"),
        }
    }
}

#[test]
fn recovery_checks_the_bump_word() {
    perdure_pm::sync::seeded::check_random(recover_bump, 1);
}

/// Every request size maps to its class (no schedule involved): a block of
/// `size` bytes is aligned to its class's block size (the next power of two
/// from 16 bytes up, at most 4 KiB), and two blocks of a class lie a block
/// apart at least; a size past the largest class is refused with that
/// class's size. The workloads above allocate 16 and 32 bytes only.
#[test]
fn heap_alloc_sizes_map_to_their_classes() {
    // One schedule: the sync facade's atomics need shuttle's runtime.
    perdure_pm::sync::seeded::check_random(alloc_sizes, 1);
}

fn alloc_sizes() {
    use perdure_pm::heap::{HeapError, MAX_CLASS_SHIFT};
    let pool = Pool::volatile("heap-classes", 1 << 20, NoFlush).unwrap();
    let base = pool.data_offset();
    let heap = Heap::format(&pool, base, (1 << 20) - base, 2).unwrap();
    let mut t = heap.register().unwrap();
    let max = 1u64 << MAX_CLASS_SHIFT;
    for size in [
        1u64,
        8,
        16,
        17,
        32,
        33,
        64,
        100,
        128,
        256,
        511,
        512,
        max / 2 + 1,
        max,
    ] {
        let block = size.next_power_of_two().max(16);
        let a = t.alloc(size).unwrap();
        let b = t.alloc(size).unwrap();
        for x in [a, b] {
            assert_eq!(
                x % block.min(4096),
                0,
                "alloc({size}) returned {x:#x}: not {block}-aligned"
            );
        }
        assert!(
            a.abs_diff(b) >= block,
            "alloc({size}) twice: {a:#x} and {b:#x} overlap"
        );
    }
    match t.alloc(max + 1) {
        Err(HeapError::TooLarge { requested, max: m }) => {
            assert_eq!((requested, m), (max + 1, max), "alloc({}) refused", max + 1)
        }
        other => panic!("alloc({}) past the largest class: {other:?}", max + 1),
    }
}
