//! The ordered index (RedoDB had none; RocksDB users expect one): a B+tree
//! over the store's nodes, in the bytes' lexicographic order of their keys,
//! for range and prefix scans. Sequential code inside the PTM's
//! transactions, like the hash map beside it (`map.rs`).
//!
//! * Blocks of [`BLOCK_BYTES`] (one 1 KiB block of the region allocator):
//!   `[kind, count, link, entries...]`. An inner block's `link` is its
//!   first child, and its `count` entries `[prefix0, prefix1, ext, child]`
//!   are separators in increasing order, each with the child whose keys
//!   are at or above it.
//! * A leaf is `[kind, 0, link, entries...]`: `link` is the next leaf (0
//!   at the end), and it keeps no count (the word is 0, so both kinds
//!   have `kind` and `link` at the same offsets). Its entries `[prefix0,
//!   prefix1, node]` are in no order but contiguous: an insert appends one
//!   and a delete moves the last into its place and zeroes the last's
//!   `node`, so either stores on the one or two lines of the entries it
//!   moves, and no count line besides (issue 18: a line fewer per insert,
//!   two write-backs with RedoOpt's replay). Every slot past the last
//!   entry has `node` 0, which no node is (the allocator never returns
//!   offset 0): a leaf's count is the first such slot, found by a binary
//!   search of at most 6 loads ([`leaf_count`]), and a new leaf zeroes
//!   the `node` of its empty slots (its block may be a reused one).
//! * Keys are compared by their first 16 bytes first, kept inline as two
//!   byte-swapped words ([`Key::prefix`]); only keys with equal first 16
//!   bytes load the rest: a leaf entry's from its node, a separator's from
//!   `ext`: `INLINE | length` for a key of at most 16 bytes (nothing to
//!   load), otherwise `length << 48 | copy`, a block holding the key's
//!   words from the third on (at most 126, so it too is a 1 KiB block).
//! * Splits: a full leaf's entries and the new one are sorted and halved;
//!   the entries of the upper half leave the leaf for a new right leaf,
//!   those of the lower half stored above the leaf's new count move into
//!   the holes, and the upper half's least key becomes the separator
//!   (but a key above every other of the last leaf starts a leaf of its
//!   own, so a sequential fill leaves full leaves behind). A
//!   full inner block splits around its middle separator, which moves up.
//!   A new root makes the tree one level taller (the header's `height`).
//!   Deletes leave blocks as they are (an empty leaf stays in the chain),
//!   so separators remain valid bounds and never need a key that is gone.
//! * Room: a transaction's stores are kept whatever it returns, so an
//!   insert asks the allocator ([`perdure_ptm::Transaction::has_room`])
//!   for the blocks its split could need ([`blocks_per_insert`]) before
//!   the store's first store; a batch asks for all of its puts at once.
//! * Bad input: every block is checked for its kind and count, every walk
//!   is bounded (the height, the region's block count, a leaf's binary
//!   search its capacity); an entry below a leaf's count whose `node` is
//!   0 is damage where it is read, and [`check`] walks the whole tree,
//!   every empty slot of every leaf included. Damage is a typed fault,
//!   never a panic.

use crate::node::{
    alloc, ld, st, step_bound, words_for, Damage, Fault, Key, StoredKey, MAX_KEY_BYTES,
};
use perdure_ptm::{Transaction, TxRead};
use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::Bound;

/// An index block's payload: a 1 KiB block of the region allocator less its
/// 16-byte header.
pub(crate) const BLOCK_BYTES: u64 = 1008;
// `B_COUNT` is an inner block's count, and 0 in a leaf (module docs).
perdure_pm::word_offsets!(B_KIND, B_COUNT, B_LINK);
const B_ENTRIES: u64 = B_LINK + 8;
const LEAF_ENTRY: u64 = 24;
const INNER_ENTRY: u64 = 32;
/// Entries of a leaf.
pub(crate) const LEAF_CAP: u64 = (BLOCK_BYTES - B_ENTRIES) / LEAF_ENTRY;
/// Separators of an inner block.
pub(crate) const INNER_CAP: u64 = (BLOCK_BYTES - B_ENTRIES) / INNER_ENTRY;
/// A leaf's kind (`KVLEAF01` was a leaf with a count word: the formats
/// before `PDKVMAP4`).
const LEAF: u64 = u64::from_le_bytes(*b"KVLEAF02");
const INNER: u64 = u64::from_le_bytes(*b"KVINNR01");
/// `ext` of a separator of at most 16 bytes: this bit and its length.
const INLINE: u64 = 1 << 63;
/// The low bits of `ext` that hold a copy's offset.
const COPY_MASK: u64 = (1 << 48) - 1;
/// No tree is taller: a walk deeper than this is damage.
pub(crate) const MAX_HEIGHT: u64 = 40;
// The layout is persistent.
const _: () =
    assert!(LEAF_CAP == 41 && INNER_CAP == 30 && MAX_KEY_BYTES as u64 - 16 <= BLOCK_BYTES);

/// The blocks one insert into a tree of `height` levels can take: a leaf,
/// a separator's copy, one block per inner level and a new root.
pub(crate) fn blocks_per_insert(height: u64) -> u64 {
    height + 2
}

/// Where the index lives: the header's words for its root and height.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tree {
    pub(crate) root_at: u64,
    pub(crate) height_at: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Leaf,
    Inner,
}

/// A leaf entry: the key's prefix and its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LeafEntry {
    prefix: (u64, u64),
    node: u64,
}

/// A separator: the key's prefix and `ext` (module docs).
#[derive(Clone, Copy, Debug)]
struct Sep {
    prefix: (u64, u64),
    ext: u64,
}

impl Sep {
    /// The rest of the key, if it is longer than 16 bytes: its length and
    /// where its words from the third on are.
    fn rest(self) -> Option<(u64, u64)> {
        (self.ext & INLINE == 0).then_some((self.ext >> 48, self.ext & COPY_MASK))
    }

    /// `key` against this separator.
    fn cmp_key<T: TxRead>(self, tx: &T, key: &Key) -> Result<Ordering, Fault> {
        let o = key.prefix().cmp(&self.prefix);
        if o != Ordering::Equal {
            return Ok(o);
        }
        let Some((len, copy)) = self.rest() else {
            // Equal first 16 bytes and a separator of at most 16: the
            // shorter is a prefix of the longer.
            return Ok(key.len.cmp(&(self.ext & !INLINE)));
        };
        for i in 2..(key.words.len() as u64).min(words_for(len)) {
            let a = key.words[i as usize].swap_bytes();
            let b = ld(tx, copy + 8 * (i - 2))?.swap_bytes();
            if a != b {
                return Ok(a.cmp(&b));
            }
        }
        Ok(key.len.cmp(&len))
    }

    /// Its bytes (for `check`).
    fn bytes<T: TxRead>(self, tx: &T) -> Result<Vec<u8>, Fault> {
        let (len, copy) = match self.rest() {
            None => (self.ext & !INLINE, 0),
            Some(r) => r,
        };
        if len > MAX_KEY_BYTES as u64 || (self.rest().is_none() && len > 16) {
            return Err(Fault::Corrupt(Damage::Lengths));
        }
        let mut out: Vec<u8> = [self.prefix.0, self.prefix.1]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect();
        for i in 2..words_for(len) {
            out.extend(ld(tx, copy + 8 * (i - 2))?.to_le_bytes());
        }
        out.resize(len as usize, 0);
        Ok(out)
    }
}

/// `key` against a leaf entry's key.
fn cmp_entry<T: TxRead>(tx: &T, key: &Key, e: LeafEntry) -> Result<Ordering, Fault> {
    match key.prefix().cmp(&e.prefix) {
        Ordering::Equal => StoredKey::of_node(e.node).cmp_with(tx, key),
        o => Ok(o),
    }
}

/// The kind and count of the block at `at`, checked (a leaf's count is
/// its [`leaf_count`]).
fn block<T: TxRead>(tx: &T, at: u64) -> Result<(Kind, u64), Fault> {
    let kind = ld(tx, at + B_KIND)?;
    let count = ld(tx, at + B_COUNT)?;
    match kind {
        LEAF if count == 0 => Ok((Kind::Leaf, leaf_count(tx, at)?)),
        INNER if count > 0 && count <= INNER_CAP => Ok((Kind::Inner, count)),
        _ => Err(Fault::Corrupt(Damage::Shape)),
    }
}

/// Where the `node` word of slot `i` of a leaf is.
fn node_at(leaf: u64, i: u64) -> u64 {
    leaf + B_ENTRIES + LEAF_ENTRY * i + 16
}

/// The number of entries of a leaf: its first slot whose `node` is 0 (or
/// its capacity), by a binary search over the slots (module docs). On a
/// damaged leaf whose slots are not entries then zeroes, some count
/// within the capacity: [`leaf_entry`] and [`check`] name the damage.
fn leaf_count<T: TxRead>(tx: &T, leaf: u64) -> Result<u64, Fault> {
    let (mut lo, mut hi) = (0, LEAF_CAP);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if ld(tx, node_at(leaf, mid))? == 0 {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo)
}

/// Entry `i` of a leaf, which must be below its count: a `node` of 0 is
/// damage.
fn leaf_entry<T: TxRead>(tx: &T, leaf: u64, i: u64) -> Result<LeafEntry, Fault> {
    let at = leaf + B_ENTRIES + LEAF_ENTRY * i;
    let node = ld(tx, at + 16)?;
    if node == 0 {
        return Err(Fault::Corrupt(Damage::Shape));
    }
    Ok(LeafEntry {
        prefix: (ld(tx, at)?, ld(tx, at + 8)?),
        node,
    })
}

fn set_leaf_entry<T: Transaction>(tx: &T, leaf: u64, i: u64, e: LeafEntry) -> Result<(), Fault> {
    let at = leaf + B_ENTRIES + LEAF_ENTRY * i;
    st(tx, at, e.prefix.0)?;
    st(tx, at + 8, e.prefix.1)?;
    st(tx, at + 16, e.node)
}

fn leaf_entries<T: TxRead>(tx: &T, leaf: u64, count: u64) -> Result<Vec<LeafEntry>, Fault> {
    (0..count).map(|i| leaf_entry(tx, leaf, i)).collect()
}

/// Separator `i` of an inner block and the child right of it.
fn sep<T: TxRead>(tx: &T, inner: u64, i: u64) -> Result<(Sep, u64), Fault> {
    let at = inner + B_ENTRIES + INNER_ENTRY * i;
    Ok((
        Sep {
            prefix: (ld(tx, at)?, ld(tx, at + 8)?),
            ext: ld(tx, at + 16)?,
        },
        ld(tx, at + 24)?,
    ))
}

fn set_sep<T: Transaction>(
    tx: &T,
    inner: u64,
    i: u64,
    (s, child): (Sep, u64),
) -> Result<(), Fault> {
    let at = inner + B_ENTRIES + INNER_ENTRY * i;
    st(tx, at, s.prefix.0)?;
    st(tx, at + 8, s.prefix.1)?;
    st(tx, at + 16, s.ext)?;
    st(tx, at + 24, child)
}

/// Child `i` of an inner block (0: the one left of every separator).
fn child<T: TxRead>(tx: &T, inner: u64, i: u64) -> Result<u64, Fault> {
    if i == 0 {
        ld(tx, inner + B_LINK)
    } else {
        Ok(sep(tx, inner, i - 1)?.1)
    }
}

fn new_block<T: Transaction>(tx: &T, kind: u64, count: u64, link: u64) -> Result<u64, Fault> {
    let b = alloc(tx, BLOCK_BYTES)?;
    st(tx, b + B_KIND, kind)?;
    st(tx, b + B_COUNT, count)?;
    st(tx, b + B_LINK, link)?;
    Ok(b)
}

/// A new leaf holding `entries` (at most [`LEAF_CAP`]), followed by
/// `link`: the `node` of every other slot zeroed (module docs).
fn new_leaf<T: Transaction>(tx: &T, entries: &[LeafEntry], link: u64) -> Result<u64, Fault> {
    let leaf = new_block(tx, LEAF, 0, link)?;
    for (i, &e) in entries.iter().enumerate() {
        set_leaf_entry(tx, leaf, i as u64, e)?;
    }
    for i in entries.len() as u64..LEAF_CAP {
        st(tx, node_at(leaf, i), 0)?;
    }
    Ok(leaf)
}

/// The inner blocks from the root down, each with the child taken.
type Path = Vec<(u64, u64)>;

/// The leaf whose range holds `key` (the first leaf for `None`), its
/// count, and the path to it.
fn descend<T: TxRead>(tx: &T, root: u64, key: Option<&Key>) -> Result<(Path, u64, u64), Fault> {
    let mut path = Vec::new();
    let mut at = root;
    loop {
        let (kind, count) = block(tx, at)?;
        if kind == Kind::Leaf {
            return Ok((path, at, count));
        }
        if path.len() as u64 >= MAX_HEIGHT {
            return Err(Fault::Corrupt(Damage::Shape));
        }
        // The number of separators at or below `key`.
        let (mut lo, mut hi) = (0, count);
        if let Some(key) = key {
            while lo < hi {
                let mid = (lo + hi) / 2;
                if sep(tx, at, mid)?.0.cmp_key(tx, key)? == Ordering::Less {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
        }
        path.push((at, lo));
        at = child(tx, at, lo)?;
    }
}

/// The tree's height (0: empty).
pub(crate) fn height<T: TxRead>(tx: &T, tree: Tree) -> Result<u64, Fault> {
    let h = ld(tx, tree.height_at)?;
    if h > MAX_HEIGHT {
        return Err(Fault::Corrupt(Damage::Shape));
    }
    Ok(h)
}

/// What `inserts` inserts into the tree may take from the allocator, as a
/// `(size, count)` need of [`perdure_ptm::Transaction::has_room`] (module
/// docs, "Room").
pub(crate) fn room_for<T: TxRead>(tx: &T, tree: Tree, inserts: u64) -> Result<(u64, u64), Fault> {
    // A batch's inserts can make the tree taller as they go: one level
    // more per factor of INNER_CAP / 2 in their number.
    let mut growth = 1;
    let mut n = inserts;
    while n > 1 {
        n /= INNER_CAP / 2;
        growth += 1;
    }
    let per = blocks_per_insert(height(tx, tree)? + growth - 1);
    Ok((BLOCK_BYTES, inserts.saturating_mul(per)))
}

/// Adds `node` (key `key`, not in the tree) to the tree; true if that
/// added a leaf (the hash map's resize counts them: `map.rs`). The caller
/// asked for [`room_for`] first.
pub(crate) fn insert<T: Transaction>(
    tx: &T,
    tree: Tree,
    key: &Key,
    node: u64,
) -> Result<bool, Fault> {
    let entry = LeafEntry {
        prefix: key.prefix(),
        node,
    };
    let root = ld(tx, tree.root_at)?;
    if root == 0 {
        let leaf = new_leaf(tx, &[entry], 0)?;
        st(tx, tree.height_at, 1)?;
        st(tx, tree.root_at, leaf)?;
        return Ok(true);
    }
    let (path, leaf, count) = descend(tx, root, Some(key))?;
    if count < LEAF_CAP {
        // Filling the first empty slot is the count's increment.
        set_leaf_entry(tx, leaf, count, entry)?;
        return Ok(false);
    }
    split_leaf(tx, tree, path, leaf, entry)?;
    Ok(true)
}

/// Sorts leaf entries by key: by prefix, then each run of equal prefixes
/// by the nodes' whole keys.
fn sort_entries<T: TxRead>(tx: &T, v: &mut [LeafEntry]) -> Result<(), Fault> {
    v.sort_unstable_by_key(|e| e.prefix);
    let mut i = 0;
    while i < v.len() {
        let j = i + v[i..]
            .iter()
            .take_while(|e| e.prefix == v[i].prefix)
            .count();
        if j - i > 1 {
            let mut run = v[i..j]
                .iter()
                .map(|e| Ok((StoredKey::of_node(e.node).bytes(tx)?, *e)))
                .collect::<Result<Vec<_>, Fault>>()?;
            run.sort_by(|a, b| a.0.cmp(&b.0));
            for (k, (_, e)) in run.into_iter().enumerate() {
                v[i + k] = e;
            }
        }
        i = j;
    }
    Ok(())
}

/// The separator for a key held by `e`'s node (module docs).
fn separator<T: Transaction>(tx: &T, e: LeafEntry) -> Result<Sep, Fault> {
    let key = StoredKey::of_node(e.node);
    let len = key.len(tx)?;
    if len <= 16 {
        return Ok(Sep {
            prefix: e.prefix,
            ext: INLINE | len,
        });
    }
    let copy = alloc(tx, BLOCK_BYTES)?;
    for i in 2..words_for(len) {
        st(tx, copy + 8 * (i - 2), ld(tx, key.data_at + 8 * i)?)?;
    }
    Ok(Sep {
        prefix: e.prefix,
        ext: len << 48 | copy,
    })
}

fn split_leaf<T: Transaction>(
    tx: &T,
    tree: Tree,
    path: Path,
    leaf: u64,
    entry: LeafEntry,
) -> Result<(), Fault> {
    let mut all = leaf_entries(tx, leaf, LEAF_CAP)?;
    all.push(entry);
    let mut sorted = all.clone();
    sort_entries(tx, &mut sorted)?;
    let next = ld(tx, leaf + B_LINK)?;
    // Keys inserted in increasing order: the last leaf stays full and the
    // new key starts the next one (leaves of sequential fills are full).
    let mid = if next == 0 && sorted.last() == Some(&entry) {
        sorted.len() - 1
    } else {
        sorted.len() / 2
    };
    let lower: HashSet<u64> = sorted[..mid].iter().map(|e| e.node).collect();
    // Slots below `mid` that hold an upper entry, and lower entries from
    // `mid` on (the new one among them, at `LEAF_CAP`): as many of each.
    let holes = (0..mid).filter(|&i| !lower.contains(&all[i].node));
    let movers: Vec<LeafEntry> = all[mid..]
        .iter()
        .filter(|e| lower.contains(&e.node))
        .copied()
        .collect();
    if lower.len() != mid || holes.clone().count() != movers.len() {
        // Two entries for one node.
        return Err(Fault::Corrupt(Damage::Index));
    }
    for (slot, e) in holes.zip(movers) {
        set_leaf_entry(tx, leaf, slot as u64, e)?;
    }
    let right = new_leaf(tx, &sorted[mid..], next)?;
    // The leaf's count becomes `mid`: its slots from there on empty.
    for i in mid as u64..LEAF_CAP {
        st(tx, node_at(leaf, i), 0)?;
    }
    if !mutant!(KvIndexSplitDropsNext) {
        st(tx, leaf + B_LINK, right)?;
    }
    let s = separator(tx, sorted[mid])?;
    insert_up(tx, tree, path, leaf, (s, right))
}

/// Puts separator `s` with its right child into the parent of `left` (the
/// last block of `path`), splitting upwards while a parent is full.
fn insert_up<T: Transaction>(
    tx: &T,
    tree: Tree,
    mut path: Path,
    mut left: u64,
    mut s: (Sep, u64),
) -> Result<(), Fault> {
    loop {
        let Some((parent, slot)) = path.pop() else {
            let root = new_block(tx, INNER, 1, left)?;
            set_sep(tx, root, 0, s)?;
            st(tx, tree.height_at, height(tx, tree)? + 1)?;
            return st(tx, tree.root_at, root);
        };
        let (_, count) = block(tx, parent)?;
        if count < INNER_CAP {
            for i in (slot..count).rev() {
                set_sep(tx, parent, i + 1, sep(tx, parent, i)?)?;
            }
            set_sep(tx, parent, slot, s)?;
            return st(tx, parent + B_COUNT, count + 1);
        }
        let mut seps = (0..count)
            .map(|i| sep(tx, parent, i))
            .collect::<Result<Vec<_>, _>>()?;
        seps.insert(slot as usize, s);
        let mid = seps.len() / 2;
        let right = new_block(tx, INNER, (seps.len() - mid - 1) as u64, seps[mid].1)?;
        for (i, &e) in seps[mid + 1..].iter().enumerate() {
            set_sep(tx, right, i as u64, e)?;
        }
        let first = (slot as usize).min(mid);
        for (i, &e) in seps[first..mid].iter().enumerate() {
            set_sep(tx, parent, (first + i) as u64, e)?;
        }
        st(tx, parent + B_COUNT, mid as u64)?;
        s = (seps[mid].0, right);
        left = parent;
    }
}

/// The leaf holding `node` (key `key`) and its slot there.
fn locate<T: TxRead>(tx: &T, tree: Tree, key: &Key, node: u64) -> Result<(u64, u64, u64), Fault> {
    let root = ld(tx, tree.root_at)?;
    if root == 0 {
        return Err(Fault::Corrupt(Damage::Index));
    }
    let (_, leaf, count) = descend(tx, root, Some(key))?;
    for i in 0..count {
        if ld(tx, node_at(leaf, i))? == node {
            return Ok((leaf, i, count));
        }
    }
    Err(Fault::Corrupt(Damage::Index))
}

/// Takes `node` (key `key`) out of the tree: the leaf's last entry takes
/// its slot, and the last slot is emptied.
pub(crate) fn remove<T: Transaction>(
    tx: &T,
    tree: Tree,
    key: &Key,
    node: u64,
) -> Result<(), Fault> {
    let (leaf, i, count) = locate(tx, tree, key, node)?;
    if i + 1 != count {
        set_leaf_entry(tx, leaf, i, leaf_entry(tx, leaf, count - 1)?)?;
    }
    st(tx, node_at(leaf, count - 1), 0)
}

/// Makes the entry of `old` (key `key`) name `new`, a node of the same key.
pub(crate) fn replace<T: Transaction>(
    tx: &T,
    tree: Tree,
    key: &Key,
    old: u64,
    new: u64,
) -> Result<(), Fault> {
    let (leaf, i, _) = locate(tx, tree, key, old)?;
    st(tx, node_at(leaf, i), new)
}

/// A key range of a scan: its bounds as bytes and packed.
#[derive(Clone, Debug)]
pub(crate) struct Range {
    bytes: (Bound<Vec<u8>>, Bound<Vec<u8>>),
    from: Bound<Key>,
    to: Bound<Key>,
}

impl Range {
    pub(crate) fn new(from: Bound<&[u8]>, to: Bound<&[u8]>) -> Range {
        Range {
            bytes: (from.map(<[u8]>::to_vec), to.map(<[u8]>::to_vec)),
            from: from.map(Key::pack),
            to: to.map(Key::pack),
        }
    }

    /// The keys that start with `prefix`.
    pub(crate) fn prefix(prefix: &[u8]) -> Range {
        // The first byte string after every one with this prefix: the
        // prefix without its trailing 0xff bytes, its last byte plus one.
        let mut end = prefix.to_vec();
        while end.last() == Some(&0xff) {
            end.pop();
        }
        let to = match end.last_mut() {
            Some(b) => {
                *b += 1;
                Bound::Excluded(&end[..])
            }
            None => Bound::Unbounded,
        };
        Range::new(Bound::Included(prefix), to)
    }

    /// Whether the range holds `key`.
    pub(crate) fn holds(&self, key: &[u8]) -> bool {
        use std::ops::RangeBounds;
        let (a, b) = &self.bytes;
        (a.as_ref().map(Vec::as_slice), b.as_ref().map(Vec::as_slice)).contains(key)
    }

    /// Whether `e`'s key is at or after the range's start.
    fn above_start<T: TxRead>(&self, tx: &T, e: LeafEntry) -> Result<bool, Fault> {
        Ok(match &self.from {
            Bound::Unbounded => true,
            Bound::Included(k) => cmp_entry(tx, k, e)? != Ordering::Greater,
            Bound::Excluded(k) => cmp_entry(tx, k, e)? == Ordering::Less,
        })
    }

    /// Whether `e`'s key is before the range's end.
    fn below_end<T: TxRead>(&self, tx: &T, e: LeafEntry) -> Result<bool, Fault> {
        Ok(match &self.to {
            Bound::Unbounded => true,
            Bound::Included(k) => cmp_entry(tx, k, e)? != Ordering::Less,
            Bound::Excluded(k) => cmp_entry(tx, k, e)? == Ordering::Greater,
        })
    }
}

/// The number of entries: the leaves' counts, walked along the chain
/// (about one block per 28 entries; no count is kept: module docs).
pub(crate) fn len<T: TxRead>(tx: &T, tree: Tree) -> Result<u64, Fault> {
    let root = ld(tx, tree.root_at)?;
    if root == 0 {
        return Ok(0);
    }
    let (_, mut leaf, _) = descend(tx, root, None)?;
    let mut n = 0;
    for _ in 0..step_bound(tx, BLOCK_BYTES) {
        let (kind, count) = block(tx, leaf)?;
        if kind != Kind::Leaf {
            return Err(Fault::Corrupt(Damage::Chain));
        }
        n += count;
        leaf = ld(tx, leaf + B_LINK)?;
        if leaf == 0 {
            return Ok(n);
        }
    }
    Err(Fault::Corrupt(Damage::Cycle))
}

/// The nodes of the keys in `range`, in key order, at most `limit`.
pub(crate) fn scan<T: TxRead>(
    tx: &T,
    tree: Tree,
    range: &Range,
    limit: usize,
) -> Result<Vec<u64>, Fault> {
    let mut out = Vec::new();
    let root = ld(tx, tree.root_at)?;
    if root == 0 || limit == 0 {
        return Ok(out);
    }
    let start = match &range.from {
        Bound::Included(k) | Bound::Excluded(k) => Some(k),
        Bound::Unbounded => None,
    };
    let (_, mut leaf, _) = descend(tx, root, start)?;
    let bound = step_bound(tx, BLOCK_BYTES);
    let mut entries = Vec::with_capacity(LEAF_CAP as usize);
    for _ in 0..bound {
        let (kind, count) = block(tx, leaf)?;
        if kind != Kind::Leaf {
            return Err(Fault::Corrupt(Damage::Chain));
        }
        entries.clear();
        for i in 0..count {
            let e = leaf_entry(tx, leaf, i)?;
            if range.above_start(tx, e)? {
                entries.push(e);
            }
        }
        sort_entries(tx, &mut entries)?;
        for &e in &entries {
            if !range.below_end(tx, e)? {
                return Ok(out);
            }
            out.push(e.node);
            if out.len() >= limit {
                return Ok(out);
            }
        }
        leaf = ld(tx, leaf + B_LINK)?;
        if leaf == 0 {
            return Ok(out);
        }
    }
    Err(Fault::Corrupt(Damage::Cycle))
}

/// Walks the whole tree and checks every invariant of the module docs:
/// blocks of a known kind within their capacity, every leaf's entries
/// then empty slots; separators increasing,
/// within their block's range, their copies' words; every leaf at the
/// header's height, linked to the next leaf in key order, the last to
/// none; each leaf entry's prefix its node's, its key within its leaf's
/// range and above every key of the leaves before. `visit` is called with
/// every entry's node and key in key order. Returns the number of entries
/// and the number of leaves.
pub(crate) fn check<T: TxRead>(
    tx: &T,
    tree: Tree,
    mut visit: impl FnMut(u64, &Key) -> Result<(), Fault>,
) -> Result<(u64, u64), Fault> {
    let root = ld(tx, tree.root_at)?;
    let height = height(tx, tree)?;
    if root == 0 {
        return if height == 0 {
            Ok((0, 0))
        } else {
            Err(Fault::Corrupt(Damage::Shape))
        };
    }
    let bound = step_bound(tx, BLOCK_BYTES);
    let mut blocks = 0u64;
    let mut entries = 0u64;
    let mut leaves = 0u64;
    let mut prev_leaf: Option<u64> = None;
    let mut prev_key: Option<Vec<u8>> = None;
    let order = Fault::Corrupt(Damage::Order);
    // Blocks to visit, in key order from the top: (block, depth, lower
    // bound, upper bound) with the bounds' bytes.
    type Bounds = (Option<Vec<u8>>, Option<Vec<u8>>);
    let mut stack: Vec<(u64, u64, Bounds)> = vec![(root, 1, (None, None))];
    while let Some((at, depth, (lo, hi))) = stack.pop() {
        blocks += 1;
        if blocks > bound || depth > height {
            return Err(Fault::Corrupt(Damage::Shape));
        }
        let (kind, count) = block(tx, at)?;
        let within = |k: &[u8]| {
            lo.as_deref().map_or(true, |lo| lo <= k) && hi.as_deref().map_or(true, |hi| k < hi)
        };
        if kind == Kind::Inner {
            let mut bounds = vec![lo.clone()];
            let mut children = vec![child(tx, at, 0)?];
            for i in 0..count {
                let (s, c) = sep(tx, at, i)?;
                let b = s.bytes(tx)?;
                if !within(&b) || bounds.last().is_some_and(|p| p.as_ref() >= Some(&b)) {
                    return Err(order);
                }
                bounds.push(Some(b));
                children.push(c);
            }
            bounds.push(hi.clone());
            for (i, &c) in children.iter().enumerate().rev() {
                stack.push((c, depth + 1, (bounds[i].clone(), bounds[i + 1].clone())));
            }
            continue;
        }
        if depth != height {
            return Err(Fault::Corrupt(Damage::Shape));
        }
        if let Some(p) = prev_leaf {
            if ld(tx, p + B_LINK)? != at {
                return Err(Fault::Corrupt(Damage::Chain));
            }
        }
        prev_leaf = Some(at);
        leaves += 1;
        for i in count..LEAF_CAP {
            if ld(tx, node_at(at, i))? != 0 {
                return Err(Fault::Corrupt(Damage::Shape));
            }
        }
        let mut keys = Vec::with_capacity(count as usize);
        for e in leaf_entries(tx, at, count)? {
            let bytes = StoredKey::of_node(e.node).bytes(tx)?;
            let key = Key::pack(&bytes);
            if key.prefix() != e.prefix {
                return Err(Fault::Corrupt(Damage::Index));
            }
            if !within(&bytes) {
                return Err(order);
            }
            keys.push((bytes, key, e.node));
        }
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        for (bytes, key, node) in keys {
            if prev_key.as_ref().is_some_and(|p| *p >= bytes) {
                return Err(order);
            }
            visit(node, &key)?;
            entries += 1;
            prev_key = Some(bytes);
        }
    }
    if prev_leaf.is_some_and(|p| ld(tx, p + B_LINK) != Ok(0)) {
        return Err(Fault::Corrupt(Damage::Chain));
    }
    Ok((entries, leaves))
}
