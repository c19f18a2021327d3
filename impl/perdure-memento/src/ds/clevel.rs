//! Clevel-mmt: the detectable Clevel hash table of seed 001 (§7: "Clevel
//! hash table \[15\] with bug fixes \[16\]", §7.2).
//!
//! Clevel (Chen, Hua, Ding, Zuo, "Lock-free Concurrent Level Hashing for
//! Persistent Memory", USENIX ATC 2020) is level hashing made lock-free: a
//! chain of *levels*, each an array of buckets of `slots` one-word slots, the
//! next level twice the size of the one below it. A key may live in either of
//! two buckets (two hash functions) of any level; a slot holds a pointer to an
//! immutable item block `[key, value]`, tagged with a fingerprint of the key
//! so that most mismatches are rejected without reading the item. Growth adds
//! a level on top; *rehashing* moves the items of the bottom level into the
//! upper ones and then drops it, so that about two levels stay live. Clevel-mmt
//! (the seed's conversion) makes insert, delete and the rehash detectable with
//! mementos, keeping Clevel's insert and resize schemes.
//!
//! ## The operations
//!
//! * **lookup(k)** scans the levels bottom to top (the bottom level first: an
//!   item only ever moves up, and it is placed in its new level before its
//!   old slot is cleared, so a bottom-to-top scan cannot miss an item that
//!   moves while it runs). No memento.
//! * **insert(k, v)** (insert if absent): a lookup decides "present"
//!   (`false`) or the item block is allocated, written and persisted — both
//!   inside one [`Checkpoint::checkpoint_with`] (Requirement 2: recovery reuses
//!   the block). Then *place*: a loop (Requirement 3) that picks an empty slot
//!   in the levels not being drained, top level first, both candidate
//!   buckets slot by slot (Clevel's order), checkpoints it, and installs the
//!   item there with a detectable CAS `0 → item`. When every candidate slot is
//!   taken, the thread adds a level (below) and picks again.
//! * **delete(k)** (a loop): find the item, checkpoint `[slot, word]`,
//!   detectable CAS `word → 0`, retire the item (§6). A failed CAS (another
//!   delete won, or the item started to move) finds again.
//! * **resize** (a root operation of its own, as Clevel's rehashing thread):
//!   while the bottom level has at most a quarter of the top level's buckets,
//!   visit each of its slots (the loop's φ-node is `[level, index]`): *seal*
//!   an empty slot (CAS `0 → SEALED`, so no insert can land behind the
//!   rehash), or *move* an item: checkpoint `[slot, word]`, detectable CAS
//!   `word → word | MOVED`, place it in an upper level (the insert's place,
//!   with its own memento), then mark the old slot *done*. A drained
//!   level is unlinked with a detectable CAS on the table's `last` word and
//!   retired.
//!
//! ## Growth: a level linked with link-and-persist
//!
//! A new level is allocated zeroed, persisted, and linked with a plain CAS of
//! the top level's `next` from 0 to the level with a *dirty* bit; the linker
//! (or any thread that reads the dirty link) flushes it and clears the bit.
//! So a link a thread acts on is durable, and a crash can never hide a level
//! an acknowledged insert used. Clevel's *context* (first level, last level,
//! resize threshold; replaced by CAS) is reduced here to the `last` word: the
//! first level is the end of the chain and the threshold is a quarter of its
//! size, so growth touches nothing but the link.
//!
//! ## Clevel's bugs and the fixes kept here
//!
//! Chen et al. (ASPLOS 2022, the seed's \[16\]) report that Clevel can lose
//! an item inserted into the bottom level while the rehash passes it, and
//! Memento's Clevel-mmt re-checks the context after every insert and moves
//! such an item itself. Sealing makes that window impossible instead: the
//! rehash leaves every slot of the bottom level non-empty (sealed or
//! done) before the level is dropped, so an insert's
//! `0 → item` CAS either lands before the rehash visits the slot (and the
//! rehash moves it) or fails.
//!
//! ## Detectability, and recovery after a full crash
//!
//! Insert and delete are detectable through their CAS mementos (§3) and the
//! checkpoints of their loops; the resize resumes at the slot it was at. A
//! move interrupted by a *full* crash is settled by [`ClevelTable::attach`]
//! before any thread resumes: an item still marked `MOVED` that is also
//! present unmarked elsewhere was placed, so its old slot is marked done; one
//! that is not was never placed, so the mark is removed (the resumed resize
//! sees its slot changed and visits it again). That reading is sound because
//! a delete of a moved item first makes the old slot durably *done* (it
//! completes the mark itself, or writes back the mover's completion) before
//! its own CAS: a bare mark never survives a crash next to a deleted copy
//! (found by the full-crash test: a delete acting on a completion the mover
//! had not yet written back let recovery restore a deleted item). Without this a delete waiting for
//! the move (below) could wait for a thread that resumes after it.
//!
//! ## Progress and the one caller contract
//!
//! Lookup and insert are lock-free. A delete that meets its key only in a
//! slot marked `MOVED` waits for the mover to place it (Clevel's find retries
//! in the same case); the wait is bounded by the mover's progress. Clevel's
//! insert is not linearizable for *concurrent inserts of one key* — both may
//! succeed and leave two items (as in Clevel and in Memento's Clevel-mmt,
//! where a later find keeps one); the tests and the crash explorer give each
//! thread its own keys to insert. A delete removes one item per call.
//!
//! ## Layout
//!
//! * header, one line: `[MAGIC, _, last (two words), slots, base]`; `last` (the bottom
//!   level) is a [`DetectableCasAtomic`];
//! * level: `[buckets, next, segments, segment…]`, each segment a block of
//!   whole buckets (blocks are at most [`perdure_pm::heap::MAX_CLASS_SHIFT`]
//!   bytes), a bucket `slots` slots;
//! * slot (a two-word [`DetectableCasAtomic`], 16 bytes): 0 empty; item offset with the tag
//!   `fingerprint << 2 | DONE << 1 | MOVED` (a 7-bit fingerprint): an item
//!   (neither bit), *marked* (moving), *done* (moved; the offset is kept so
//!   that a delete of the item can find and write back the slot), or
//!   `SEALED` (offset 0 with `MOVED`: passed while empty);
//! * item: `[key, value]`, 16 bytes, immutable.
//!
//! Slots and `last` are two-word (16-byte) detectable-CAS locations, exactly
//! once for any caller: the one-word form would need the words a thread
//! installs never to repeat, and a delete installs 0 in a slot every time.
//! The cost is 16 bytes per slot where Clevel has 8.
//!
//! ## The baseline
//!
//! [`ClevelTable::insert_plain`], [`ClevelTable::delete_plain`],
//! [`ClevelTable::lookup_plain`] and [`ClevelTable::resize_plain`] run the
//! same table without mementos: plain CASes, each slot written back and
//! fenced after its CAS (Clevel's persistence), one reclamation critical
//! section per operation and no root operation. They are the non-detectable
//! Clevel of §7.2's comparison, so that the difference measured is the cost
//! of detectability on one table design (perdure's, with the changes above),
//! not of two implementations.
//!
//! Not covered: a crash between allocating a level and linking it leaks the
//! level (nothing names it).

use super::{encode_opt, peek};
use crate::cas::{CasMmt, DetectableCasAtomic, TwoWord};
use crate::checkpoint::Checkpoint;
use crate::compose::Memento;
use crate::runtime::{Handle, MementoError};
use crate::word::{offset_of, tag_of, with_tag, CasWord};
use perdure_pm::{Backend, Pool};
use std::ops::ControlFlow;

const MAGIC: u64 = u64::from_le_bytes(*b"CLEVEL01");
const H_LAST: u64 = 16;
const H_SLOTS: u64 = 32;
const H_BASE: u64 = 40;
/// Bytes of a slot: a two-word detectable-CAS location.
const SLOT: u64 = 16;
const L_BUCKETS: u64 = 0;
const L_NEXT: u64 = 8;
const L_SEGS: u64 = 16;
const L_SEG0: u64 = 24;
/// Bytes of an item block: `[key, value]`.
pub const ITEM: u64 = 16;
/// The `next` link's dirty bit (link-and-persist).
const DIRTY: u64 = 1;
/// Tag bit: the item is being (or has been) moved out of this slot.
const MOVED: u64 = 1;
/// [`MOVED`] in a slot word.
const MOVED_BIT: u64 = MOVED << crate::word::OFFSET_BITS;
/// Tag bit, with [`MOVED`]: the move is complete (the item is placed
/// elsewhere); the word keeps the item's offset so that a delete of the item
/// can write it back (see `seal_moved`).
const DONE_BIT: u64 = 2 << crate::word::OFFSET_BITS;
/// A slot the rehash has passed: no item, never empty again.
const SEALED: u64 = MOVED_BIT;
/// Most slots per bucket (a bucket is then one cache line).
pub const MAX_SLOTS: u64 = 8;
/// Most levels a chain may hold (a longer one is corrupt).
const MAX_LEVELS: usize = 48;

crate::memento! {
    /// The memento of placing an item in an empty slot (insert and move).
    pub struct PlaceMmt {
        /// The loop's φ-node: the attempt.
        pub probe: Checkpoint<1>,
        /// The slot this attempt chose.
        pub slot: Checkpoint<1>,
        /// The CAS installing the item.
        pub cas: CasMmt,
    }
}

crate::memento! {
    /// The memento of an insert.
    pub struct InsertMmt {
        /// The item block, or 0 for "the key was present: false".
        pub node: Checkpoint<1>,
        /// Placing it.
        pub place: PlaceMmt,
    }
}

crate::memento! {
    /// The memento of a delete.
    pub struct DeleteMmt {
        /// The loop's φ-node: the attempt.
        pub pos: Checkpoint<1>,
        /// The slot and word this attempt found, or `[0, 0]`: absent.
        pub target: Checkpoint<2>,
        /// The CAS emptying the slot.
        pub cas: CasMmt,
    }
}

crate::memento! {
    /// The memento of a resize (rehash).
    pub struct ResizeMmt {
        /// The loop's φ-node: `[level, slot index]`.
        pub pos: Checkpoint<2>,
        /// The slot and item word being moved.
        pub take: Checkpoint<2>,
        /// The CAS marking it moved.
        pub mark: CasMmt,
        /// Placing it above.
        pub place: PlaceMmt,
        /// The CAS unlinking the drained level.
        pub swap: CasMmt,
    }
}

crate::memento! {
    /// The root memento of a thread on a Clevel table.
    pub struct ClevelMmt {
        /// For insert.
        pub insert: InsertMmt,
        /// For delete.
        pub remove: DeleteMmt,
        /// For resize.
        pub resize: ResizeMmt,
    }
}

/// A root operation on a [`ClevelTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClevelOp {
    /// Insert if absent.
    Insert(u64, u64),
    /// Delete.
    Delete(u64),
    /// Lookup.
    Lookup(u64),
    /// Rehash while the bottom level is to be drained.
    Resize,
}

/// Usage figures of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClevelStats {
    /// Levels in the chain.
    pub levels: usize,
    /// Slots in all levels.
    pub slots: u64,
    /// Items (unmarked, plus marked ones not present elsewhere).
    pub items: u64,
}

impl ClevelStats {
    /// Items per slot.
    pub fn load_factor(&self) -> f64 {
        if self.slots == 0 {
            0.0
        } else {
            self.items as f64 / self.slots as f64
        }
    }
}

/// The levels of a chain as one operation saw them, bottom to top.
struct View {
    levels: [(u64, u64); MAX_LEVELS],
    len: usize,
}

impl View {
    fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.levels[..self.len].iter().copied()
    }

    fn top(&self) -> (u64, u64) {
        self.levels[self.len - 1]
    }

    /// Levels of at most this many buckets are being drained.
    fn threshold(&self) -> u64 {
        self.top().1 / 4
    }
}

/// SplitMix64's finaliser: the key's hash.
fn mix(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The key's fingerprint (8 bits) and its two bucket hashes (distinct).
fn hashes(key: u64) -> (u64, [u64; 2]) {
    let h = mix(key);
    let a = h & 0xffff_ffff;
    let b = h >> 32;
    (h >> 57, [a, if a == b { a ^ 1 } else { b }])
}

/// The slot word of item `item` of a key with fingerprint `fp`.
fn item_word(item: u64, fp: u64) -> u64 {
    with_tag(item, fp << 2)
}

fn fp_of(w: u64) -> u64 {
    tag_of(w) >> 2
}

fn is_moved(w: u64) -> bool {
    tag_of(w) & MOVED != 0
}

fn is_done(w: u64) -> bool {
    w & DONE_BIT != 0
}

/// The candidate buckets of a key in a level of `n` buckets (one if both
/// hashes meet).
fn buckets_of(hs: [u64; 2], n: u64) -> ([u64; 2], usize) {
    let (a, b) = (hs[0] % n, hs[1] % n);
    if a == b {
        ([a, a], 1)
    } else {
        ([a, b], 2)
    }
}

/// The detectable-CAS location at `off` (a slot or the `last` word): the
/// two-word form, exactly once for any sequence of words. (The one-word
/// form would need the words a thread installs never to repeat: a delete
/// installs 0 in a slot each time, so the same annotated 0 could recur.)
fn word_at(off: u64) -> DetectableCasAtomic<TwoWord> {
    DetectableCasAtomic::at(off)
}

/// A fresh item block `[key, value]`, written back (not fenced: the
/// caller orders it before publishing the item).
fn new_item<B: Backend, M: Memento>(
    h: &mut Handle<'_, '_, B, M>,
    key: u64,
    value: u64,
) -> Result<u64, MementoError> {
    let item = h.alloc(ITEM)?;
    h.store_private(item, key);
    h.store_private(item + 8, value);
    h.pwb(item, ITEM);
    Ok(item)
}

fn corrupt(msg: String) -> MementoError {
    MementoError::CorruptStructure(format!("Clevel: {msg}"))
}

/// A Clevel-mmt table: a handle on its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClevelTable {
    hdr: u64,
    slots: u64,
    seg_buckets: u64,
}

impl ClevelTable {
    fn max_block() -> u64 {
        1 << perdure_pm::heap::MAX_CLASS_SHIFT
    }

    fn with(hdr: u64, slots: u64) -> ClevelTable {
        ClevelTable {
            hdr,
            slots,
            seg_buckets: Self::max_block() / (SLOT * slots),
        }
    }

    /// Creates an empty table, durably: two levels of `base` and `2·base`
    /// buckets of `slots` slots (1..=[`MAX_SLOTS`]; Clevel uses 8).
    pub fn create<B: Backend, M: Memento>(
        h: &mut Handle<'_, '_, B, M>,
        base: u64,
        slots: u64,
    ) -> Result<ClevelTable, MementoError> {
        if !(1..=MAX_SLOTS).contains(&slots) || base == 0 || base > 1 << 32 {
            return Err(MementoError::Config(format!(
                "Clevel: {slots} slots per bucket and {base} buckets: need 1..={MAX_SLOTS} slots and 1..=2^32 buckets"
            )));
        }
        let hdr = h.alloc(64)?;
        let t = Self::with(hdr, slots);
        let bottom = t.new_level(h, base)?;
        let top = t.new_level(h, 2 * base)?;
        h.store_private(bottom + L_NEXT, top);
        h.pwb(bottom + L_NEXT, 8);
        h.store_private(hdr, MAGIC);
        h.store_private(hdr + H_SLOTS, slots);
        h.store_private(hdr + H_BASE, base);
        h.pwb(hdr, 64);
        word_at(hdr + H_LAST).init(h.pool(), bottom);
        h.pool().pfence();
        Ok(t)
    }

    /// [`ClevelTable::create`], then `items` installed directly (a bulk
    /// load before the table is published: not detectable, durable when it
    /// returns). Keys must be distinct.
    pub fn create_with<B: Backend, M: Memento>(
        h: &mut Handle<'_, '_, B, M>,
        base: u64,
        slots: u64,
        items: &[(u64, u64)],
    ) -> Result<ClevelTable, MementoError> {
        let t = Self::create(h, base, slots)?;
        for &(k, v) in items {
            if t.find(h, k).is_some() {
                return Err(MementoError::Config(format!("Clevel: key {k} given twice")));
            }
            let s = t.free_slot(h, k)?;
            let item = new_item(h, k, v)?;
            h.pfence();
            word_at(s).init(h.pool(), item_word(item, hashes(k).0));
        }
        h.pfence();
        Ok(t)
    }

    /// The table whose header is at `off`, after a full crash: checks the
    /// header and the chain of levels, then settles every move a crash cut
    /// off (module docs). Run it once, before any thread resumes.
    pub fn attach<B: Backend>(pool: &Pool<B>, off: u64) -> Result<ClevelTable, MementoError> {
        pool.check_range(off, 64, 64)?;
        if peek(pool, off) != MAGIC {
            return Err(corrupt(format!("no table at {off:#x}")));
        }
        let slots = peek(pool, off + H_SLOTS);
        if !(1..=MAX_SLOTS).contains(&slots) {
            return Err(corrupt(format!("{slots} slots per bucket")));
        }
        let t = Self::with(off, slots);
        let levels = t.levels_of(pool)?;
        let mut settled = false;
        for &(l, n) in &levels {
            for i in 0..n * slots {
                let s = t.slot_at(pool, l, i / slots, i % slots);
                let w = word_at(s).peek(pool).value;
                if !is_moved(w) || is_done(w) || offset_of(w) == 0 {
                    continue;
                }
                let placed = t
                    .holders(pool, &levels, w)?
                    .iter()
                    .any(|&(s2, x)| s2 != s && !is_moved(x));
                let to = if placed { w | DONE_BIT } else { w & !MOVED_BIT };
                // The pair becomes stable: the value word, then a nonce of 0.
                crate::runtime::pm_word(pool, s).store(
                    CasWord::stable(to).encode(),
                    perdure_pm::sync::atomic::Ordering::Release,
                );
                crate::runtime::pm_word(pool, s + 8)
                    .store(0, perdure_pm::sync::atomic::Ordering::Release);
                pool.pwb(s, 8);
                settled = true;
            }
        }
        if settled {
            pool.pfence();
        }
        Ok(t)
    }

    /// The offset of its header (store it in the object root).
    pub fn offset(&self) -> u64 {
        self.hdr
    }

    fn last(&self) -> DetectableCasAtomic<TwoWord> {
        word_at(self.hdr + H_LAST)
    }

    // --- levels -------------------------------------------------------------------------

    /// Allocates a level of `n` buckets, zeroed and persisted (not linked).
    fn new_level<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        n: u64,
    ) -> Result<u64, MementoError> {
        let segs = n.div_ceil(self.seg_buckets);
        // At least two lines each (a bucket of 8 slots), so that the blocks
        // of small levels share one size class.
        let dir_bytes = (L_SEG0 + 8 * segs).max(128);
        if dir_bytes > Self::max_block() {
            return Err(MementoError::Config(format!(
                "Clevel: a level of {n} buckets is larger than the heap's largest block allows"
            )));
        }
        let dir = h.alloc(dir_bytes)?;
        for k in 0..segs {
            let buckets = self.seg_buckets.min(n - k * self.seg_buckets);
            let bytes = (buckets * self.slots * SLOT).max(128);
            let seg = match h.alloc(bytes) {
                Ok(s) => s,
                Err(e) => {
                    for j in 0..k {
                        let _ = h.free_unpublished(h.load(dir + L_SEG0 + 8 * j));
                    }
                    let _ = h.free_unpublished(dir);
                    return Err(e);
                }
            };
            h.pwb(seg, bytes);
            h.store_private(dir + L_SEG0 + 8 * k, seg);
        }
        h.store_private(dir + L_BUCKETS, n);
        h.store_private(dir + L_SEGS, segs);
        h.pwb(dir, dir_bytes);
        h.pfence();
        Ok(dir)
    }

    /// Frees a level nobody else has seen.
    fn free_level<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, l: u64) {
        for k in 0..h.load(l + L_SEGS) {
            let _ = h.free_unpublished(h.load(l + L_SEG0 + 8 * k));
        }
        let _ = h.free_unpublished(l);
    }

    /// Retires an unlinked level (§6).
    fn retire_level<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, l: u64) {
        for k in 0..h.load(l + L_SEGS) {
            let seg = h.load(l + L_SEG0 + 8 * k);
            h.retire(seg);
        }
        h.retire(l);
    }

    /// The level above `l`, 0 at the top; a dirty link is persisted first.
    fn next_of<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, l: u64) -> u64 {
        let w = h.load(l + L_NEXT);
        if w & DIRTY != 0 {
            h.flush(l + L_NEXT, 8);
            let _ = h.cas(l + L_NEXT, w, w & !DIRTY);
        }
        w & !DIRTY
    }

    /// The chain as this thread sees it now, bottom to top.
    fn view<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>) -> View {
        let mut v = View {
            levels: [(0, 0); MAX_LEVELS],
            len: 0,
        };
        let mut l = offset_of(self.last().load(h));
        while l != 0 && v.len < MAX_LEVELS {
            v.levels[v.len] = (l, h.load(l + L_BUCKETS));
            v.len += 1;
            l = self.next_of(h, l);
        }
        v
    }

    /// Pool offset of slot `i` of bucket `b` of level `l`.
    /// Pool offset of bucket `b` of level `l` (its first slot). Level
    /// blocks are immutable once linked.
    fn bucket_at<B: Backend>(&self, pool: &Pool<B>, l: u64, b: u64) -> u64 {
        let seg = peek(pool, l + L_SEG0 + 8 * (b / self.seg_buckets));
        seg + (b % self.seg_buckets) * self.slots * SLOT
    }

    /// Pool offset of slot `i` of bucket `b` of level `l`.
    fn slot_at<B: Backend>(&self, pool: &Pool<B>, l: u64, b: u64, i: u64) -> u64 {
        self.bucket_at(pool, l, b) + i * SLOT
    }

    /// Adds a level on top of `top` (of `n` buckets) unless one is there.
    fn grow<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        top: u64,
        n: u64,
    ) -> Result<(), MementoError> {
        if self.next_of(h, top) != 0 {
            return Ok(());
        }
        let l = self.new_level(h, 2 * n)?;
        if mutant!(ClevelLinkNoPersist) {
            if h.cas(top + L_NEXT, 0, l).is_err() {
                self.free_level(h, l);
            }
            return Ok(());
        }
        match h.cas(top + L_NEXT, 0, l | DIRTY) {
            Ok(_) => {
                h.flush(top + L_NEXT, 8);
                let _ = h.cas(top + L_NEXT, l | DIRTY, l);
            }
            Err(_) => self.free_level(h, l),
        }
        Ok(())
    }

    // --- finding --------------------------------------------------------------------

    /// Visits, bottom to top over the levels of `v`, the slots of `key`'s
    /// candidate buckets whose stable word names an item holding `key`
    /// (empty and sealed slots, other fingerprints and other keys
    /// skipped), until `f` breaks.
    fn scan_key<B: Backend, M: Memento, R>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        v: &View,
        key: u64,
        mut f: impl FnMut(&mut Handle<'_, '_, B, M>, u64, u64) -> ControlFlow<R>,
    ) -> Option<R> {
        let (fp, hs) = hashes(key);
        for (l, n) in v.iter() {
            let (bs, nb) = buckets_of(hs, n);
            for &b in &bs[..nb] {
                let base = self.bucket_at(h.pool(), l, b);
                for s in (0..self.slots).map(|i| base + i * SLOT) {
                    let w = word_at(s).load(h);
                    if offset_of(w) == 0 || fp_of(w) != fp || h.load(offset_of(w)) != key {
                        continue;
                    }
                    if let ControlFlow::Break(r) = f(h, s, w) {
                        return Some(r);
                    }
                }
            }
        }
        None
    }

    /// The slot holding `key` and its word, scanning bottom to top; a
    /// marked item counts (it is present until its move completes).
    fn find<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        key: u64,
    ) -> Option<(u64, u64)> {
        let v = self.view(h);
        self.scan_key(h, &v, key, |_, s, w| {
            if is_done(w) {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break((s, w))
            }
        })
    }

    /// For a delete: the slot holding `key` unmarked, and its word. Marked
    /// copies of that item met on the way (its move is complete) are sealed
    /// first, durably, so no recovery can take them for unplaced moves; if
    /// only a marked copy exists, waits for its mover to place it.
    fn find_unmarked<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        key: u64,
    ) -> Option<(u64, u64)> {
        loop {
            let v = self.view(h);
            let mut marked = [(0u64, 0u64); 4];
            let mut nm = 0;
            let found = self.scan_key(h, &v, key, |h, s, w| {
                if is_moved(w) {
                    if nm < marked.len() {
                        marked[nm] = (s, w);
                        nm += 1;
                    }
                    return ControlFlow::Continue(());
                }
                let mut sealed = false;
                for &(ms, mw) in &marked[..nm] {
                    if offset_of(mw) == offset_of(w) {
                        self.seal_moved(h, ms, mw);
                        sealed = true;
                    }
                }
                if sealed {
                    h.pfence();
                }
                ControlFlow::Break((s, w))
            });
            if found.is_some() || marked[..nm].iter().all(|&(_, w)| is_done(w)) {
                return found;
            }
            // Only a marked copy: its mover has not placed it yet.
            perdure_pm::sync::spin_loop();
        }
    }

    /// Completes the move recorded in slot `s` (word `mw`, marked or done)
    /// of an item found placed elsewhere, and writes the slot back either
    /// way (the caller fences): a delete of the item must not take effect
    /// while a crash could still bring the bare mark back, or recovery would
    /// take the item for unplaced and restore it. A plain CAS on the stable
    /// word, after helping the mark's CAS off the slot if it is still
    /// annotated (a plain CAS would fail on the annotated word); the mover's
    /// own completion seen here may not be durable yet, hence the write-back.
    fn seal_moved<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, s: u64, mw: u64) {
        if !is_done(mw) {
            while word_at(s).load(h) == mw && h.cas(s, mw, mw | DONE_BIT).is_err() {}
        }
        h.pwb(s, 8);
    }

    /// Slots holding item word `w` (marked or not), read from the pool.
    fn holders<B: Backend>(
        &self,
        pool: &Pool<B>,
        levels: &[(u64, u64)],
        w: u64,
    ) -> Result<Vec<(u64, u64)>, MementoError> {
        let item = offset_of(w);
        pool.check_range(item, ITEM, 8)?;
        let (_, hs) = hashes(peek(pool, item));
        let mut out = Vec::new();
        for &(l, n) in levels {
            let (bs, nb) = buckets_of(hs, n);
            for &b in &bs[..nb] {
                for i in 0..self.slots {
                    let s = self.slot_at(pool, l, b, i);
                    let x = word_at(s).peek(pool).value;
                    if offset_of(x) == item {
                        out.push((s, x));
                    }
                }
            }
        }
        Ok(out)
    }

    /// An empty slot for `key` in the levels not being drained, top first;
    /// adds a level when there is none.
    fn free_slot<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        key: u64,
    ) -> Result<u64, MementoError> {
        let (_, hs) = hashes(key);
        loop {
            let v = self.view(h);
            let th = v.threshold();
            for (l, n) in v.iter().rev().filter(|&(_, n)| n > th) {
                let (bs, nb) = buckets_of(hs, n);
                let bases = bs.map(|b| self.bucket_at(h.pool(), l, b));
                for i in 0..self.slots {
                    for base in &bases[..nb] {
                        let s = base + i * SLOT;
                        if h.load(s) == 0 {
                            return Ok(s);
                        }
                    }
                }
            }
            let (top, n) = v.top();
            self.grow(h, top, n)?;
        }
    }

    /// Places item word `w` (of `key`) in an empty slot: Clevel's insert
    /// step, detectable.
    fn place<B: Backend, M: Memento>(
        &self,
        key: u64,
        w: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut PlaceMmt,
    ) -> Result<(), MementoError> {
        h.detectable_loop(&mut mmt.probe, [0], |h, [k]| {
            let t = match mmt
                .slot
                .checkpoint_with(h, |h| self.free_slot(h, key).map(|s| [s]))
            {
                Ok([t]) => t,
                Err(e) => return ControlFlow::Break(Err(e)),
            };
            match word_at(t).cas(0, w, h, &mut mmt.cas) {
                Ok(()) => ControlFlow::Break(Ok(())),
                Err(_) => ControlFlow::Continue([k + 1]),
            }
        })
    }

    // --- operations -------------------------------------------------------------------

    /// Detectable insert: `true` if `key` was absent and is now mapped to
    /// `value`, `false` (and no change) if it was present.
    pub fn insert<B: Backend, M: Memento>(
        &self,
        key: u64,
        value: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut InsertMmt,
    ) -> Result<bool, MementoError> {
        let [item] = mmt.node.checkpoint_with(h, |h| {
            if self.find(h, key).is_some() {
                return Ok([0]);
            }
            // Durable before the checkpoint names it (checkpoint_with
            // fences): recovery skips this closure.
            Ok::<_, MementoError>([new_item(h, key, value)?])
        })?;
        if item == 0 {
            return Ok(false);
        }
        let (fp, _) = hashes(key);
        self.place(key, item_word(item, fp), h, &mut mmt.place)?;
        Ok(true)
    }

    /// Detectable delete: `true` if `key` was present and this call removed
    /// it, `false` if it was absent.
    pub fn delete<B: Backend, M: Memento>(
        &self,
        key: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut DeleteMmt,
    ) -> Result<bool, MementoError> {
        h.detectable_loop(&mut mmt.pos, [0], |h, [k]| {
            let found = self.find_unmarked(h, key).map_or([0, 0], |(s, w)| [s, w]);
            let [s, w] = mmt.target.checkpoint(h, found);
            if s == 0 {
                return ControlFlow::Break(Ok(false));
            }
            match word_at(s).cas(w, 0, h, &mut mmt.cas) {
                Ok(()) => {
                    h.retire(offset_of(w));
                    ControlFlow::Break(Ok(true))
                }
                Err(_) => ControlFlow::Continue([k + 1]),
            }
        })
    }

    /// Lookup: the value of `key`, if present.
    pub fn lookup<B: Backend, M: Memento>(
        &self,
        key: u64,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Option<u64> {
        self.find(h, key).map(|(_, w)| h.load(offset_of(w) + 8))
    }

    /// Whether the bottom level is to be drained (a [`ClevelTable::resize`]
    /// has work).
    pub fn needs_resize<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>) -> bool {
        let v = self.view(h);
        v.len > 1 && v.levels[0].1 <= v.threshold()
    }

    /// Detectable rehash: while the bottom level has at most a quarter of
    /// the top level's buckets, moves its items up and unlinks it. Returns
    /// 1 if it drained a level (another resize may have unlinked it), 0 if
    /// there was nothing to do.
    pub fn resize<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut ResizeMmt,
    ) -> Result<u64, MementoError> {
        h.detectable_loop(&mut mmt.pos, [0, 0], |h, [level, index]| {
            let v = self.view(h);
            let (last, n) = v.levels[0];
            if level != last {
                // The first visit, or the level was unlinked: begin with
                // the bottom level, if it is to be drained.
                if v.len < 2 || n > v.threshold() {
                    return ControlFlow::Break(Ok(u64::from(level != 0)));
                }
                return ControlFlow::Continue([last, 0]);
            }
            if index == n * self.slots {
                // Every slot sealed or moved, durably: unlink the level.
                h.pfence();
                if v.len < 2 {
                    return ControlFlow::Break(Err(corrupt(
                        "a drained level with none above".into(),
                    )));
                }
                let next = v.levels[1].0;
                if self.last().cas(last, next, h, &mut mmt.swap).is_ok() {
                    self.retire_level(h, last);
                }
                return ControlFlow::Continue([last, index]);
            }
            let s = self.slot_at(h.pool(), last, index / self.slots, index % self.slots);
            let w = word_at(s).load(h);
            if w == 0 {
                if h.cas(s, 0, SEALED).is_ok() {
                    h.pwb(s, 8);
                }
                return ControlFlow::Continue([last, index]);
            }
            if offset_of(w) == 0 || is_done(w) {
                return ControlFlow::Continue([last, index + 1]);
            }
            // A marked word is ours (resumed after a crash: the checkpoint
            // and the mark's CAS memento say so) or another resize's (the
            // mark fails and the slot is visited again until it is moved).
            let [s, w] = mmt.take.checkpoint(h, [s, w & !MOVED_BIT]);
            let marked = w | MOVED_BIT;
            if word_at(s).cas(w, marked, h, &mut mmt.mark).is_err() {
                perdure_pm::sync::spin_loop();
                return ControlFlow::Continue([last, index]);
            }
            if h.load(s) != marked {
                // Settled by a recovery (placed and sealed, or unmarked) or
                // sealed by a delete: look at the slot again.
                return ControlFlow::Continue([last, index]);
            }
            let key = h.load(offset_of(w));
            if let Err(e) = self.place(key, w, h, &mut mmt.place) {
                return ControlFlow::Break(Err(e));
            }
            if h.cas(s, marked, marked | DONE_BIT).is_ok() {
                h.pwb(s, 8);
            }
            ControlFlow::Continue([last, index + 1])
        })
    }

    /// Runs `op` as a root operation's body. The result word is 1 / 0 for
    /// insert and delete, [`encode_opt`] of the value for lookup (values
    /// must then be below `u64::MAX`), the levels dropped for resize.
    pub fn run<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B, ClevelMmt>,
        mmt: &mut ClevelMmt,
        op: ClevelOp,
    ) -> Result<u64, MementoError> {
        match op {
            ClevelOp::Insert(k, v) => self.insert(k, v, h, &mut mmt.insert).map(u64::from),
            ClevelOp::Delete(k) => self.delete(k, h, &mut mmt.remove).map(u64::from),
            ClevelOp::Lookup(k) => Ok(encode_opt(self.lookup(k, h))),
            ClevelOp::Resize => self.resize(h, &mut mmt.resize),
        }
    }

    // --- the non-detectable baseline -------------------------------------------------

    /// Clevel without mementos (the baseline of §7.2): insert if absent on
    /// the same table, every CAS a plain CAS whose slot is then written
    /// back and fenced (Clevel's persistence), one critical section of §6
    /// ([`Handle::critical_section`]), no root operation. Not detectable: a
    /// crash may leave it done or not, and nothing tells which.
    pub fn insert_plain<B: Backend, M: Memento>(
        &self,
        key: u64,
        value: u64,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<bool, MementoError> {
        h.critical_section(|h| {
            if self.find(h, key).is_some() {
                return Ok(false);
            }
            let item = new_item(h, key, value)?;
            h.pfence();
            let w = item_word(item, hashes(key).0);
            self.place_plain(key, w, h)?;
            Ok(true)
        })
    }

    fn place_plain<B: Backend, M: Memento>(
        &self,
        key: u64,
        w: u64,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<(), MementoError> {
        loop {
            let s = self.free_slot(h, key)?;
            if h.cas(s, 0, w).is_ok() {
                h.flush(s, 8);
                return Ok(());
            }
        }
    }

    /// Delete without mementos (see [`ClevelTable::insert_plain`]).
    pub fn delete_plain<B: Backend, M: Memento>(
        &self,
        key: u64,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<bool, MementoError> {
        h.critical_section(|h| loop {
            let Some((s, w)) = self.find_unmarked(h, key) else {
                return Ok(false);
            };
            if h.cas(s, w, 0).is_ok() {
                h.flush(s, 8);
                h.retire(offset_of(w));
                return Ok(true);
            }
        })
    }

    /// Lookup in a critical section of its own, for the baseline (a
    /// detectable structure's lookup runs inside its root operation).
    pub fn lookup_plain<B: Backend, M: Memento>(
        &self,
        key: u64,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Option<u64> {
        h.critical_section(|h| self.lookup(key, h))
    }

    /// The rehash without mementos (see [`ClevelTable::insert_plain`]);
    /// returns 1 if it drained a level. A crash inside it is not resumed:
    /// the next [`ClevelTable::attach`] settles a cut-off move and the next
    /// rehash carries on.
    pub fn resize_plain<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<u64, MementoError> {
        h.critical_section(|h| {
            let mut drained = 0;
            loop {
                let v = self.view(h);
                let (last, n) = v.levels[0];
                if v.len < 2 || n > v.threshold() {
                    return Ok(drained);
                }
                let mut index = 0;
                while index < n * self.slots {
                    let s = self.slot_at(h.pool(), last, index / self.slots, index % self.slots);
                    let w = word_at(s).load(h);
                    if w == 0 {
                        if h.cas(s, 0, SEALED).is_ok() {
                            h.pwb(s, 8);
                        }
                        continue;
                    }
                    if offset_of(w) == 0 || is_done(w) {
                        index += 1;
                        continue;
                    }
                    if is_moved(w) || h.cas(s, w, w | MOVED_BIT).is_err() {
                        perdure_pm::sync::spin_loop();
                        continue;
                    }
                    h.flush(s, 8);
                    self.place_plain(h.load(offset_of(w)), w, h)?;
                    if h.cas(s, w | MOVED_BIT, w | MOVED_BIT | DONE_BIT).is_ok() {
                        h.pwb(s, 8);
                    }
                    index += 1;
                }
                h.pfence();
                let next = v.levels[1].0;
                if h.cas(self.hdr + H_LAST, last, next).is_ok() {
                    h.flush(self.hdr + H_LAST, 8);
                    self.retire_level(h, last);
                }
                drained = 1;
            }
        })
    }

    // --- inspection ---------------------------------------------------------------------

    /// The chain of levels read from the pool, every pointer checked.
    fn levels_of<B: Backend>(&self, pool: &Pool<B>) -> Result<Vec<(u64, u64)>, MementoError> {
        let mut out = Vec::new();
        let mut l = offset_of(word_at(self.hdr + H_LAST).peek(pool).value);
        while l != 0 {
            if out.len() == MAX_LEVELS {
                return Err(corrupt("too many levels (a cycle?)".into()));
            }
            pool.check_range(l, L_SEG0, 8)?;
            let n = peek(pool, l + L_BUCKETS);
            let segs = peek(pool, l + L_SEGS);
            if n == 0 || n > 1 << 40 || segs != n.div_ceil(self.seg_buckets) {
                return Err(corrupt(format!(
                    "level {l:#x}: {n} buckets in {segs} segments"
                )));
            }
            pool.check_range(l, L_SEG0 + 8 * segs, 8)?;
            for k in 0..segs {
                let bytes = self.seg_buckets.min(n - k * self.seg_buckets) * self.slots * SLOT;
                pool.check_range(peek(pool, l + L_SEG0 + 8 * k), bytes, 8)?;
            }
            out.push((l, n));
            l = peek(pool, l + L_NEXT) & !DIRTY;
        }
        if out.is_empty() {
            return Err(corrupt("no levels".into()));
        }
        Ok(out)
    }

    /// Every `(key, value)` the table holds, sorted by key, read without
    /// helping (single-threaded inspection, e.g. after recovery). A marked
    /// item counts once, wherever it is.
    pub fn contents<B: Backend>(&self, pool: &Pool<B>) -> Result<Vec<(u64, u64)>, MementoError> {
        let levels = self.levels_of(pool)?;
        let mut items = std::collections::BTreeSet::new();
        for &(l, n) in &levels {
            for i in 0..n * self.slots {
                let w = word_at(self.slot_at(pool, l, i / self.slots, i % self.slots))
                    .peek(pool)
                    .value;
                if offset_of(w) != 0 && !is_done(w) {
                    pool.check_range(offset_of(w), ITEM, 8)?;
                    items.insert(offset_of(w));
                }
            }
        }
        let mut out: Vec<(u64, u64)> = items
            .iter()
            .map(|&i| (peek(pool, i), peek(pool, i + 8)))
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    /// The chain and every slot word, for failure messages.
    #[cfg(test)]
    fn dump<B: Backend>(&self, pool: &Pool<B>) -> String {
        let mut out = format!("last word {:?}\n", word_at(self.hdr + H_LAST).peek(pool));
        let Ok(levels) = self.levels_of(pool) else {
            return out + "bad chain";
        };
        for (l, n) in levels {
            out += &format!(
                "level {l:#x} ({n} buckets, next {:#x}):",
                peek(pool, l + L_NEXT)
            );
            for i in 0..n * self.slots {
                let w = word_at(self.slot_at(pool, l, i / self.slots, i % self.slots)).peek(pool);
                let key = if offset_of(w.value) != 0 {
                    peek(pool, offset_of(w.value))
                } else {
                    0
                };
                out += &format!(" [{:?} key {key}]", w);
            }
            out += "\n";
        }
        out
    }

    /// Levels, slots and items (for the load factor).
    pub fn stats<B: Backend>(&self, pool: &Pool<B>) -> Result<ClevelStats, MementoError> {
        let levels = self.levels_of(pool)?;
        Ok(ClevelStats {
            levels: levels.len(),
            slots: levels.iter().map(|&(_, n)| n * self.slots).sum(),
            items: self.contents(pool)?.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ds::decode_opt;
    use crate::ds::testkit;
    use std::collections::BTreeMap;

    fn run(
        t: &ClevelTable,
        h: &mut Handle<'_, '_, perdure_pm::Sim, ClevelMmt>,
        op: ClevelOp,
    ) -> u64 {
        h.run_root(|h, m, _| t.run(h, m, op).expect("op")).result
    }

    /// The explorer's `clevel-mmt-drain` (perdure-harness) stands on this
    /// bulk load: 21 alone in the bottom of three levels, a rehash due.
    #[test]
    fn the_drain_scenarios_table_has_21_alone_in_its_bottom_level() {
        testkit::with_runtime_heap::<ClevelMmt>(1, HEAP, |rt| {
            let mut h = rt.handle(1).unwrap();
            let items: Vec<(u64, u64)> =
                [11, 12, 21, 22].iter().map(|&k| (k, 10 * k + 3)).collect();
            let t = ClevelTable::create_with(&mut h, 1, 1, &items).unwrap();
            let levels = t.levels_of(h.pool()).unwrap();
            assert_eq!(levels.iter().map(|l| l.1).collect::<Vec<_>>(), [1, 2, 4]);
            let w = word_at(t.slot_at(h.pool(), levels[0].0, 0, 0))
                .peek(h.pool())
                .value;
            assert_eq!(peek(h.pool(), offset_of(w)), 21, "{}", t.dump(h.pool()));
            assert!(t.needs_resize(&mut h));
        });
    }

    #[test]
    fn model_with_growth_and_resize() {
        testkit::with_runtime_heap::<ClevelMmt>(1, HEAP, |rt| {
            let mut h = rt.handle(1).unwrap();
            let t = ClevelTable::create(&mut h, 1, 2).unwrap();
            let mut model = BTreeMap::new();
            let mut rng = 0x1234_5678u64;
            for step in 0..600u64 {
                rng = mix(rng);
                let k = rng % 97;
                match rng >> 60 {
                    0..=7 => {
                        let r = run(&t, &mut h, ClevelOp::Insert(k, step));
                        let absent = !model.contains_key(&k);
                        assert_eq!(r == 1, absent, "insert({k}) at step {step}");
                        model.entry(k).or_insert(step);
                    }
                    8..=11 => {
                        let r = run(&t, &mut h, ClevelOp::Delete(k));
                        assert_eq!(
                            r == 1,
                            model.remove(&k).is_some(),
                            "delete({k}) at step {step}"
                        );
                    }
                    _ => {
                        let r = run(&t, &mut h, ClevelOp::Lookup(k));
                        assert_eq!(
                            decode_opt(r),
                            model.get(&k).copied(),
                            "lookup({k}) at step {step}"
                        );
                    }
                }
                if step % 7 == 0 {
                    run(&t, &mut h, ClevelOp::Resize);
                }
            }
            let got = t.contents(rt.pool()).unwrap();
            let want: Vec<(u64, u64)> = model.into_iter().collect();
            assert_eq!(got, want);
            let st = t.stats(rt.pool()).unwrap();
            assert!(st.levels >= 2 && st.levels <= 3, "{st:?}");
            assert!(st.load_factor() > 0.0 && st.load_factor() <= 1.0);
        });
    }

    #[test]
    fn resize_drains_the_bottom_level() {
        testkit::with_runtime_heap::<ClevelMmt>(1, HEAP, |rt| {
            let mut h = rt.handle(1).unwrap();
            let t = ClevelTable::create(&mut h, 1, 1).unwrap();
            for k in 0..12 {
                assert_eq!(run(&t, &mut h, ClevelOp::Insert(k, 100 + k)), 1);
            }
            let before = t.stats(rt.pool()).unwrap();
            assert!(
                before.levels > 2,
                "12 items in 3 slots grew the chain: {before:?}"
            );
            assert!(t.needs_resize(&mut h));
            assert_eq!(run(&t, &mut h, ClevelOp::Resize), 1);
            let after = t.stats(rt.pool()).unwrap();
            assert!(after.levels < before.levels, "{before:?} → {after:?}");
            assert_eq!(after.items, 12);
            for k in 0..12 {
                assert_eq!(
                    decode_opt(run(&t, &mut h, ClevelOp::Lookup(k))),
                    Some(100 + k)
                );
            }
            assert!(!t.needs_resize(&mut h));
        });
    }

    /// Heap for the tests: a chunk per size class of items, level
    /// directories and segments.
    const HEAP: u64 = 16 << 18;

    #[test]
    fn every_thread_crash_point_of_every_operation() {
        testkit::with_runtime_heap::<ClevelMmt>(1, HEAP, |rt| {
            let mut h = rt.handle(1).unwrap();
            let t = ClevelTable::create(&mut h, 2, 2).unwrap();
            let mut model: BTreeMap<u64, u64> = BTreeMap::new();
            type Phase = (fn(u64) -> ClevelOp, &'static str);
            let phases: [Phase; 4] = [
                (|n| ClevelOp::Insert(100 + n, n), "insert"),
                (|n| ClevelOp::Insert(100 + n, 7), "insert of a present key"),
                (|n| ClevelOp::Delete(100 + 2 * n), "delete"),
                (|n| ClevelOp::Delete(1000 + n), "delete of an absent key"),
            ];
            for (op, what) in phases {
                let events = testkit::thread_crash_sweep(&mut h, |h, n| {
                    let op = op(n);
                    let done = h.run_root(|h, m, _| t.run(h, m, op).expect("op"));
                    let want = match op {
                        ClevelOp::Insert(k, v) => {
                            let absent = !model.contains_key(&k);
                            model.entry(k).or_insert(v);
                            u64::from(absent)
                        }
                        ClevelOp::Delete(k) => u64::from(model.remove(&k).is_some()),
                        _ => unreachable!(),
                    };
                    assert_eq!(done.result, want, "{what} {op:?}, crash after {n}");
                    let want: Vec<(u64, u64)> = model.iter().map(|(&k, &v)| (k, v)).collect();
                    assert_eq!(
                        t.contents(rt.pool()).unwrap(),
                        want,
                        "{what} {op:?}, crash after {n}"
                    );
                    done.thread_crashes
                });
                assert!(events > 2, "{what} has {events} persistence events");
            }
            // Resize: a fresh table per crash point, grown until its bottom
            // level is to be drained.
            let events = testkit::thread_crash_sweep(&mut h, |h, n| {
                h.crash_after(None);
                let t = ClevelTable::create(h, 1, 1).unwrap();
                for k in 0..4 {
                    assert_eq!(run(&t, h, ClevelOp::Insert(k, 10 + k)), 1);
                }
                assert!(t.needs_resize(h));
                h.crash_after(Some(n));
                let done = h.run_root(|h, m, _| t.run(h, m, ClevelOp::Resize).expect("op"));
                assert_eq!(done.result, 1, "resize, crash after {n}");
                let want: Vec<(u64, u64)> = (0..4).map(|k| (k, 10 + k)).collect();
                assert_eq!(
                    t.contents(rt.pool()).unwrap(),
                    want,
                    "resize, crash after {n}"
                );
                assert!(!t.needs_resize(h), "resize, crash after {n}");
                assert_eq!(
                    t.stats(rt.pool()).unwrap().levels,
                    2,
                    "resize, crash after {n}"
                );
                done.thread_crashes
            });
            assert!(events > 10, "resize has {events} persistence events");
        });
    }

    static LAST_IMAGE: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

    /// Full crashes at persistence events of a concurrent run: two threads
    /// insert their own keys (growing the chain), delete each other's first
    /// key, and thread 2 rehashes; after recovery every thread's results
    /// and the table agree on each key: inserted once, deleted at most
    /// once, present iff not deleted.
    #[test]
    fn full_crashes_during_inserts_deletes_and_a_resize() {
        let ops = |tid: usize, i: usize| -> ClevelOp {
            let own = 10 * tid as u64;
            let other = 10 * (3 - tid) as u64;
            match (tid, i) {
                (_, 0) => ClevelOp::Insert(own + 1, own + 101),
                (_, 1) => ClevelOp::Insert(own + 2, own + 102),
                (2, 2) => ClevelOp::Resize,
                (_, _) => ClevelOp::Delete(other + 1),
            }
        };
        let sweep = testkit::full_crash_sweep::<ClevelMmt, ClevelTable>(
            &[3, 4],
            |rt| {
                let mut h = rt.handle(1).unwrap();
                // Two keys of a third party fill two of the three slots, so
                // the workload's inserts grow the chain (a bulk load: a root
                // operation would count as the workload's).
                ClevelTable::create_with(&mut h, 1, 1, &[(1, 1), (2, 2)]).unwrap()
            },
            |pool, off| {
                let before = ClevelTable::with(off, 1).dump(pool);
                let t = ClevelTable::attach(pool, off).expect("attach");
                *LAST_IMAGE.lock().unwrap() =
                    format!("image:\n{before}attached:\n{}", t.dump(pool));
                t
            },
            |t| t.offset(),
            &|t, tid, i, h, m, _| t.run(h, m, ops(tid, i)).expect("op"),
            |t, pool, results| {
                let got: BTreeMap<u64, u64> = t
                    .contents(pool)
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .collect();
                let mut want = BTreeMap::from([(1, 1), (2, 2)]);
                for (t0, r) in results.iter().enumerate() {
                    let tid = t0 + 1;
                    for (i, &w) in r.iter().enumerate() {
                        if let ClevelOp::Insert(k, v) = ops(tid, i) {
                            if w != 1 {
                                return Err(format!("thread {tid} insert({k}) returned {w}"));
                            }
                            want.insert(k, v);
                        }
                    }
                }
                for (t0, r) in results.iter().enumerate() {
                    let tid = t0 + 1;
                    if let (ClevelOp::Delete(k), Some(&w)) = (ops(tid, 3), r.get(3)) {
                        if w == 1 && want.remove(&k).is_none() {
                            return Err(format!(
                                "thread {tid} deleted {k} twice or before it was inserted"
                            ));
                        }
                    }
                    if let (ClevelOp::Delete(k), Some(&w)) = (ops(tid, 2), r.get(2)) {
                        if w == 1 && want.remove(&k).is_none() {
                            return Err(format!(
                                "thread {tid} deleted {k} twice or before it was inserted"
                            ));
                        }
                    }
                }
                if got != want {
                    return Err(format!(
                        "table {got:?}, results say {want:?}\n{}\nafter:\n{}",
                        LAST_IMAGE.lock().unwrap(),
                        t.dump(pool)
                    ));
                }
                Ok(())
            },
        );
        assert!(sweep.images > 100, "{sweep:?}");
    }

    /// The baseline is durably linearizable: one thread runs plain inserts
    /// that grow the table (levels of 1 and 2 one-slot buckets at first),
    /// rehashes, deletes and lookups; at every persistence event (a crash
    /// hook), up to 3 crash images attach (settling a cut-off move) to a
    /// table holding exactly the operations completed by then, with or
    /// without the one in flight, and reopen a runtime that can go on.
    #[test]
    fn the_baseline_is_durable_at_every_crash_point() {
        use perdure_pm::sim::VolatileFill;
        use perdure_pm::{Pool, Sim};
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        use std::sync::{Arc, Mutex};
        let mut ops = Vec::new();
        for k in 1..=7u64 {
            ops.push(ClevelOp::Insert(k, 100 + k));
            if k % 2 == 0 {
                ops.push(ClevelOp::Resize);
            }
        }
        for k in [2u64, 5, 9, 7] {
            ops.push(ClevelOp::Delete(k));
        }
        ops.extend([
            ClevelOp::Resize,
            ClevelOp::Insert(8, 108),
            ClevelOp::Lookup(8),
        ]);
        // The set after `i` operations completed.
        let mut states = vec![BTreeMap::new()];
        for op in &ops {
            let mut next = states.last().unwrap().clone();
            match *op {
                ClevelOp::Insert(k, v) => {
                    next.entry(k).or_insert(v);
                }
                ClevelOp::Delete(k) => {
                    next.remove(&k);
                }
                _ => {}
            }
            states.push(next);
        }
        let (mut images, mut points) = (0, 0);
        testkit::with_runtime_heap::<ClevelMmt>(1, HEAP, |rt| {
            let pool = rt.pool();
            let mut h = rt.handle(1).unwrap();
            let t = ClevelTable::create(&mut h, 1, 1).unwrap();
            pool.psync();
            let done = Arc::new(AtomicUsize::new(0));
            let captured: Arc<Mutex<Vec<_>>> = Arc::default();
            {
                let (done, captured) = (done.clone(), captured.clone());
                pool.backend().set_crash_hook(move |_, view| {
                    captured
                        .lock()
                        .unwrap()
                        .push((view.capture(), done.load(SeqCst)));
                });
            }
            for (i, &op) in ops.iter().enumerate() {
                let got = match op {
                    ClevelOp::Insert(k, v) => u64::from(t.insert_plain(k, v, &mut h).unwrap()),
                    ClevelOp::Delete(k) => u64::from(t.delete_plain(k, &mut h).unwrap()),
                    ClevelOp::Lookup(k) => encode_opt(t.lookup_plain(k, &mut h)),
                    ClevelOp::Resize => t.resize_plain(&mut h).unwrap(),
                };
                if let ClevelOp::Lookup(k) = op {
                    assert_eq!(decode_opt(got), states[i].get(&k).copied(), "op {i}");
                }
                done.store(i + 1, SeqCst);
            }
            pool.backend().clear_crash_hook();
            assert!(
                t.stats(pool).unwrap().levels >= 2,
                "the workload grows the table"
            );
            let captured = std::mem::take(&mut *captured.lock().unwrap());
            points = captured.len();
            for (cp, n) in &captured {
                let (_, choices) = cp.images(3, cp.event);
                for choice in choices {
                    images += 1;
                    let words = cp.materialize(&choice, VolatileFill::Zeroed);
                    let image = Pool::volatile_from_words(&words, Sim::default()).unwrap();
                    image.reincarnate();
                    let a = ClevelTable::attach(&image, t.offset())
                        .unwrap_or_else(|e| panic!("event {}: attach: {e}", cp.event));
                    let got: BTreeMap<u64, u64> = a.contents(&image).unwrap().into_iter().collect();
                    let ok = got == states[*n] || states.get(n + 1) == Some(&got);
                    assert!(
                        ok,
                        "event {} after {n} operations ({:?} in flight): {got:?}, want {:?}",
                        cp.event,
                        ops.get(*n),
                        &states[*n..(n + 2).min(states.len())]
                    );
                    let rt2 = crate::Runtime::<Sim, ClevelMmt>::open_with(
                        &image,
                        4096,
                        crate::ClockKind::Counter,
                    )
                    .unwrap();
                    let mut h2 = rt2.handle(1).unwrap();
                    assert!(
                        a.insert_plain(99, 1, &mut h2).unwrap(),
                        "event {}",
                        cp.event
                    );
                    assert_eq!(a.lookup_plain(99, &mut h2), Some(1));
                }
            }
        });
        assert!(
            points > 100 && images > points,
            "{points} points, {images} images"
        );
    }

    #[test]
    fn the_baseline_agrees_with_a_model() {
        testkit::with_runtime_heap::<ClevelMmt>(1, HEAP, |rt| {
            let mut h = rt.handle(1).unwrap();
            let t = ClevelTable::create(&mut h, 1, 2).unwrap();
            let mut model = BTreeMap::new();
            let mut rng = 0x5eed_u64;
            for step in 0..600u64 {
                rng = mix(rng);
                let k = rng % 61;
                match rng >> 61 {
                    0..=3 => {
                        let absent = !model.contains_key(&k);
                        assert_eq!(
                            t.insert_plain(k, step, &mut h).unwrap(),
                            absent,
                            "insert({k})"
                        );
                        model.entry(k).or_insert(step);
                    }
                    4 | 5 => {
                        let had = model.remove(&k).is_some();
                        assert_eq!(t.delete_plain(k, &mut h).unwrap(), had, "delete({k})");
                    }
                    _ => assert_eq!(
                        t.lookup_plain(k, &mut h),
                        model.get(&k).copied(),
                        "lookup({k})"
                    ),
                }
                if step % 5 == 0 {
                    t.resize_plain(&mut h).unwrap();
                }
            }
            let want: Vec<(u64, u64)> = model.into_iter().collect();
            assert_eq!(t.contents(rt.pool()).unwrap(), want);
            assert!(!t.needs_resize(&mut h) || t.resize_plain(&mut h).unwrap() == 1);
        });
    }
}
