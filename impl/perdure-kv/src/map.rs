//! RedoDB's map (seed 000, §6 "Wait-free in-memory database": "a resizable
//! hash map annotated with the transactional semantics"), over byte-string
//! keys and values, with an ordered index beside it for scans: sequential
//! code run inside the PTM's transactions, so every operation is durable
//! and linearizable when it returns, and recovery is the PTM's null
//! recovery.
//!
//! * Layout (region words): header `[MAGIC, buckets, bucket_count, len,
//!   tree]` in the root slot; bucket array of `bucket_count` words, each
//!   the first node of its chain or 0; node `[next, hash, key_len,
//!   value_len, left, right, key words..., value words...]` (bytes
//!   little-endian in words, the last word zero-padded), one block per
//!   entry, in both structures at once.
//! * Hash: FNV-1a over the key's bytes, then [`perdure_ptm::ds::mix`] with
//!   its length; the node keeps it, so a resize moves nodes without
//!   reading keys.
//! * Resize: as `perdure_ptm::ds::hash` (when `len > 2 · buckets`, the
//!   same transaction relinks every node into twice the buckets; skipped if
//!   the region has no room).
//! * Ordered index (RedoDB had none; RocksDB users expect one): the same
//!   nodes form a treap (Seidel and Aragon, "Randomized search trees",
//!   1996) through `left` and `right`: a binary search tree in the bytes'
//!   lexicographic order that is a max-heap in the nodes' hashes, so its
//!   shape is that of a tree built by inserting in random order (expected
//!   depth O(log n)) and is a function of the set of keys alone — the same
//!   in every replica and every run of a transaction. Insert links a leaf
//!   and rotates it up while its hash is above its parent's; delete rotates
//!   the node down (the child with the higher hash up) until it has at most
//!   one child and splices it out. Nodes never move between blocks for the
//!   tree, so the hash chains keep pointing at them.
//! * Overwrite: a value of the same number of words is written in place;
//!   otherwise a new node takes the old one's place in its chain and in the
//!   tree (same hash, so same position) and the old block is freed.
//! * Bad input: every offset read from the region goes through the PTM's
//!   checked loads; a walk longer than the region could hold is a cycle.
//!   Damage is a typed fault, never a panic.

use crate::error::KvError;
use perdure_ptm::{Transaction, TxRead};
use std::cmp::Ordering;
use std::ops::Bound;

/// The header's magic.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDKVMAP2");
/// The longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;
/// The longest value, in bytes.
pub const MAX_VALUE_BYTES: usize = 16 * 1024;
/// Buckets of a new store.
pub(crate) const INITIAL_BUCKETS: u64 = 64;

// The header and node words of the module docs' layout, in order.
perdure_pm::word_offsets!(_, H_BUCKETS, H_COUNT, H_LEN, H_TREE);
perdure_pm::word_offsets!(N_NEXT, N_HASH, N_KLEN, N_VLEN, N_LEFT, N_RIGHT);
/// The header's size.
pub(crate) const HEADER: u64 = H_TREE + 8;
/// Where a node's key words start.
const N_DATA: u64 = N_RIGHT + 8;
// The layout is persistent: pools written before stay readable.
const _: () = assert!(HEADER == 40 && N_DATA == 48);

/// Why an operation inside a transaction failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    NotCreated,
    NotAStore,
    Full,
    Exists,
    Corrupt(Damage),
}

/// What a corruption error names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Damage {
    Pointer,
    BucketCount,
    Cycle,
    Lengths,
    Misplaced,
    Count,
    Order,
    Heap,
    Index,
}

impl Damage {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Damage::Pointer => "a pointer outside the region",
            Damage::BucketCount => "a bucket count that is not a power of two",
            Damage::Cycle => "a chain or tree walk longer than the region can hold (a cycle)",
            Damage::Lengths => "a key or value length over the limits",
            Damage::Misplaced => "a node in a bucket its hash does not select",
            Damage::Count => "a length that is not the number of entries",
            Damage::Order => "ordered-index keys out of order",
            Damage::Heap => "an ordered-index node whose hash is above its parent's",
            Damage::Index => "an ordered-index node the hash map does not hold",
        }
    }
}

/// A key packed for the transactions: its words, length and hash.
#[derive(Clone, Debug)]
pub(crate) struct Key {
    pub(crate) words: Vec<u64>,
    pub(crate) len: u64,
    pub(crate) hash: u64,
}

impl Key {
    /// Packs `bytes` (no limit: bounds of scans may be longer than keys).
    pub(crate) fn pack(bytes: &[u8]) -> Key {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Key {
            words: pack(bytes),
            len: bytes.len() as u64,
            hash: perdure_ptm::ds::mix(h ^ bytes.len() as u64),
        }
    }
}

pub(crate) fn pack(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

pub(crate) fn unpack(words: &[u64], len: usize) -> Vec<u8> {
    let mut out: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    out.truncate(len);
    out
}

pub(crate) fn words_for(len: u64) -> u64 {
    len.div_ceil(8)
}

/// The block of a node for `key` and a value of `value_words` words.
pub(crate) fn node_size(key: &Key, value_words: usize) -> u64 {
    N_DATA + 8 * (key.words.len() + value_words) as u64
}

pub(crate) fn ld<T: TxRead>(tx: &T, off: u64) -> Result<u64, Fault> {
    tx.try_load(off)
        .map_err(|_| Fault::Corrupt(Damage::Pointer))
}

pub(crate) fn st<T: Transaction>(tx: &T, off: u64, val: u64) -> Result<(), Fault> {
    tx.try_store(off, val)
        .map_err(|_| Fault::Corrupt(Damage::Pointer))
}

fn free<T: Transaction>(tx: &T, off: u64) -> Result<(), Fault> {
    tx.free(off).map_err(|_| Fault::Corrupt(Damage::Pointer))
}

/// The store's header words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub(crate) at: u64,
    buckets: u64,
    count: u64,
}

/// The header of the store in root slot `root`.
pub(crate) fn header<T: TxRead>(tx: &T, root: usize) -> Result<Header, Fault> {
    // Root slot `root` (the caller checked `root < ROOTS`).
    let at = ld(tx, 8 * root as u64)?;
    if at == 0 {
        return Err(Fault::NotCreated);
    }
    if ld(tx, at)? != MAGIC {
        return Err(Fault::NotAStore);
    }
    let buckets = ld(tx, at + H_BUCKETS)?;
    let count = ld(tx, at + H_COUNT)?;
    if !count.is_power_of_two() {
        return Err(Fault::Corrupt(Damage::BucketCount));
    }
    Ok(Header { at, buckets, count })
}

/// Formats an empty store in root slot `root` (which must be 0).
pub(crate) fn create_in<T: Transaction>(tx: &T, root: usize) -> Result<u64, Fault> {
    if tx.root(root) != 0 {
        return Err(Fault::Exists);
    }
    let h = tx.alloc(HEADER).map_err(|_| Fault::Full)?;
    let b = tx
        .alloc_zeroed(8 * INITIAL_BUCKETS)
        .map_err(|_| Fault::Full)?;
    st(tx, h, MAGIC)?;
    st(tx, h + H_BUCKETS, b)?;
    st(tx, h + H_COUNT, INITIAL_BUCKETS)?;
    st(tx, h + H_LEN, 0)?;
    st(tx, h + H_TREE, 0)?;
    tx.set_root(root, h);
    Ok(0)
}

/// The number of entries.
pub(crate) fn len_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    ld(tx, header(tx, root)?.at + H_LEN)
}

/// The most nodes a walk of a region of this length can meet.
fn step_bound<T: TxRead>(tx: &T) -> u64 {
    tx.region_len() / N_DATA + 1
}

/// `key` against the key of `node`, in the bytes' lexicographic order
/// (words are little-endian, so a byte swap makes their order the bytes').
fn cmp_node<T: TxRead>(tx: &T, key: &Key, node: u64) -> Result<Ordering, Fault> {
    let nlen = ld(tx, node + N_KLEN)?;
    if nlen > MAX_KEY_BYTES as u64 {
        return Err(Fault::Corrupt(Damage::Lengths));
    }
    let words = (key.words.len() as u64).min(words_for(nlen));
    for i in 0..words {
        let a = key.words[i as usize].swap_bytes();
        let b = ld(tx, node + N_DATA + 8 * i)?.swap_bytes();
        if a != b {
            return Ok(a.cmp(&b));
        }
    }
    Ok(key.len.cmp(&nlen))
}

/// Whether `node` holds `key`.
fn holds<T: TxRead>(tx: &T, key: &Key, node: u64) -> Result<bool, Fault> {
    if ld(tx, node + N_HASH)? != key.hash || ld(tx, node + N_KLEN)? != key.len {
        return Ok(false);
    }
    for (i, &w) in key.words.iter().enumerate() {
        if ld(tx, node + N_DATA + 8 * i as u64)? != w {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Where `key` is in the hash map: the bucket word, the link word that
/// names its node (or the chain's last link), and the node (0 if absent).
fn find<T: TxRead>(tx: &T, hd: Header, key: &Key) -> Result<(u64, u64, u64), Fault> {
    let bucket = hd.buckets + 8 * (key.hash & (hd.count - 1));
    let mut link = bucket;
    let mut node = ld(tx, link)?;
    let bound = step_bound(tx);
    let mut steps = 0;
    while node != 0 {
        steps += 1;
        if steps > bound {
            return Err(Fault::Corrupt(Damage::Cycle));
        }
        if holds(tx, key, node)? {
            return Ok((bucket, link, node));
        }
        link = node + N_NEXT;
        node = ld(tx, link)?;
    }
    Ok((bucket, link, 0))
}

/// The tree's link words from the root's down to the one that names the
/// node of `key` (or the empty link where it would hang), and that node
/// (0 if absent).
fn tree_path<T: TxRead>(tx: &T, hd: Header, key: &Key) -> Result<(Vec<u64>, u64), Fault> {
    let mut path = vec![hd.at + H_TREE];
    let bound = step_bound(tx);
    loop {
        let link = path[path.len() - 1];
        let node = ld(tx, link)?;
        if node == 0 {
            return Ok((path, 0));
        }
        if path.len() as u64 > bound {
            return Err(Fault::Corrupt(Damage::Cycle));
        }
        match cmp_node(tx, key, node)? {
            Ordering::Equal => return Ok((path, node)),
            Ordering::Less => path.push(node + N_LEFT),
            Ordering::Greater => path.push(node + N_RIGHT),
        }
    }
}

/// Links the new leaf `node` (key `key`, children already 0) into the
/// tree, then rotates it up while its hash is above its parent's.
fn tree_insert<T: Transaction>(tx: &T, hd: Header, key: &Key, node: u64) -> Result<(), Fault> {
    let (path, found) = tree_path(tx, hd, key)?;
    if found != 0 {
        return Err(Fault::Corrupt(Damage::Index));
    }
    let mut i = path.len() - 1;
    st(tx, path[i], node)?;
    while i > 0 && !mutant!(KvTreapNoRotation) {
        let parent = ld(tx, path[i - 1])?;
        if ld(tx, parent + N_HASH)? >= key.hash {
            break;
        }
        // A rotation: `node` takes `parent`'s place, `parent` becomes its
        // child on the side `node` was not.
        let (inner, outer) = if path[i] == parent + N_LEFT {
            (N_LEFT, N_RIGHT)
        } else {
            (N_RIGHT, N_LEFT)
        };
        st(tx, parent + inner, ld(tx, node + outer)?)?;
        st(tx, node + outer, parent)?;
        st(tx, path[i - 1], node)?;
        i -= 1;
    }
    Ok(())
}

/// Takes `node` (key `key`) out of the tree: rotated down, the child with
/// the higher hash up, until it has at most one child, then spliced out.
fn tree_remove<T: Transaction>(tx: &T, hd: Header, key: &Key, node: u64) -> Result<(), Fault> {
    let (path, found) = tree_path(tx, hd, key)?;
    if found != node {
        return Err(Fault::Corrupt(Damage::Index));
    }
    let mut link = path[path.len() - 1];
    let bound = step_bound(tx);
    for _ in 0..=bound {
        let (l, r) = (ld(tx, node + N_LEFT)?, ld(tx, node + N_RIGHT)?);
        if l == 0 || r == 0 {
            return st(tx, link, l | r);
        }
        let (up, side, other) = if ld(tx, l + N_HASH)? > ld(tx, r + N_HASH)? {
            (l, N_LEFT, N_RIGHT)
        } else {
            (r, N_RIGHT, N_LEFT)
        };
        st(tx, node + side, ld(tx, up + other)?)?;
        st(tx, up + other, node)?;
        st(tx, link, up)?;
        link = up + other;
    }
    Err(Fault::Corrupt(Damage::Cycle))
}

/// Doubles the buckets when `len > 2 · count` (as `perdure_ptm::ds::hash`):
/// every node relinked by its kept hash; skipped if there is no room.
fn maybe_resize<T: Transaction>(tx: &T, hd: Header) -> Result<(), Fault> {
    let len = ld(tx, hd.at + H_LEN)?;
    if len <= 2 * hd.count {
        return Ok(());
    }
    let new_count = 2 * hd.count;
    let Ok(nb) = tx.alloc_zeroed(8 * new_count) else {
        return Ok(());
    };
    let bound = step_bound(tx);
    let mut steps = 0;
    for i in 0..hd.count {
        let mut node = ld(tx, hd.buckets + 8 * i)?;
        while node != 0 {
            steps += 1;
            if steps > bound {
                return Err(Fault::Corrupt(Damage::Cycle));
            }
            let next = ld(tx, node + N_NEXT)?;
            let b = nb + 8 * (ld(tx, node + N_HASH)? & (new_count - 1));
            st(tx, node + N_NEXT, ld(tx, b)?)?;
            st(tx, b, node)?;
            node = next;
        }
    }
    st(tx, hd.at + H_BUCKETS, nb)?;
    st(tx, hd.at + H_COUNT, new_count)?;
    free(tx, hd.buckets)
}

/// A put: `value` (`vlen` bytes) for `key`; 1 if it replaced a value.
/// `block` is a block of [`node_size`] allocated for it beforehand (freed
/// if the value is written in place), or `None` to allocate one here, if
/// needed, before anything is stored ([`Fault::Full`] leaves the store
/// unchanged).
pub(crate) fn put_in<T: Transaction>(
    tx: &T,
    hd: Header,
    key: &Key,
    value: &[u64],
    vlen: u64,
    block: Option<u64>,
) -> Result<u64, Fault> {
    let (bucket, link, found) = find(tx, hd, key)?;
    let vwords = value.len() as u64;
    let kwords = key.words.len() as u64;
    if found != 0 && words_for(ld(tx, found + N_VLEN)?) == vwords {
        // Same size: in place.
        st(tx, found + N_VLEN, vlen)?;
        for (i, &w) in value.iter().enumerate() {
            st(tx, found + N_DATA + 8 * (kwords + i as u64), w)?;
        }
        if let Some(b) = block {
            free(tx, b)?;
        }
        return Ok(1);
    }
    let block = match block {
        Some(b) => b,
        None => tx
            .alloc(node_size(key, value.len()))
            .map_err(|_| Fault::Full)?,
    };
    st(tx, block + N_HASH, key.hash)?;
    st(tx, block + N_KLEN, key.len)?;
    st(tx, block + N_VLEN, vlen)?;
    for (i, &w) in key.words.iter().chain(value.iter()).enumerate() {
        st(tx, block + N_DATA + 8 * i as u64, w)?;
    }
    if found != 0 {
        st(tx, block + N_NEXT, ld(tx, found + N_NEXT)?)?;
        st(tx, link, block)?;
        st(tx, block + N_LEFT, ld(tx, found + N_LEFT)?)?;
        st(tx, block + N_RIGHT, ld(tx, found + N_RIGHT)?)?;
        let (path, at) = tree_path(tx, hd, key)?;
        if at != found {
            return Err(Fault::Corrupt(Damage::Index));
        }
        if !mutant!(KvOverwriteStaleIndex) {
            st(tx, path[path.len() - 1], block)?;
        }
        free(tx, found)?;
        return Ok(1);
    }
    st(tx, block + N_NEXT, ld(tx, bucket)?)?;
    st(tx, block + N_LEFT, 0)?;
    st(tx, block + N_RIGHT, 0)?;
    st(tx, bucket, block)?;
    tree_insert(tx, hd, key, block)?;
    st(tx, hd.at + H_LEN, ld(tx, hd.at + H_LEN)? + 1)?;
    maybe_resize(tx, hd)?;
    Ok(0)
}

/// One operation of a batch: a put of `(value words, value length)`, or
/// a delete (`None`).
pub(crate) type Op = (Key, Option<(Vec<u64>, u64)>);

/// A batch: every block allocated first (if one does not fit, the ones
/// taken are given back and nothing else is stored: [`Fault::Full`]), then
/// the operations in order.
pub(crate) fn write_in<T: Transaction>(tx: &T, root: usize, ops: &[Op]) -> Result<u64, Fault> {
    header(tx, root)?;
    let mut blocks = Vec::with_capacity(ops.len());
    for (k, w) in ops.iter().filter(|_| !mutant!(KvBatchNoAllocFirst)) {
        if let Some((v, _)) = w {
            match tx.alloc(node_size(k, v.len())) {
                Ok(b) => blocks.push(b),
                Err(_) => {
                    for &b in &blocks {
                        free(tx, b)?;
                    }
                    return Err(Fault::Full);
                }
            }
        }
    }
    let mut blocks = blocks.into_iter();
    for (k, w) in ops {
        // Read again: an earlier put of the batch may have resized.
        let hd = header(tx, root)?;
        match w {
            Some((v, vlen)) => put_in(tx, hd, k, v, *vlen, blocks.next())?,
            None => delete_in(tx, hd, k)?,
        };
    }
    Ok(0)
}

/// A delete; 1 if the key was present.
pub(crate) fn delete_in<T: Transaction>(tx: &T, hd: Header, key: &Key) -> Result<u64, Fault> {
    let (_, link, found) = find(tx, hd, key)?;
    if found == 0 {
        return Ok(0);
    }
    st(tx, link, ld(tx, found + N_NEXT)?)?;
    tree_remove(tx, hd, key, found)?;
    free(tx, found)?;
    st(tx, hd.at + H_LEN, ld(tx, hd.at + H_LEN)?.wrapping_sub(1))?;
    Ok(1)
}

/// The value of `node` (its key has `kwords` words).
fn value_of<T: TxRead>(tx: &T, node: u64, kwords: u64) -> Result<Vec<u8>, Fault> {
    let vlen = ld(tx, node + N_VLEN)?;
    if vlen > MAX_VALUE_BYTES as u64 {
        return Err(Fault::Corrupt(Damage::Lengths));
    }
    let base = node + N_DATA + 8 * kwords;
    let words = (0..words_for(vlen))
        .map(|i| ld(tx, base + 8 * i))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(unpack(&words, vlen as usize))
}

/// The key of `node`.
fn key_of<T: TxRead>(tx: &T, node: u64) -> Result<Vec<u8>, Fault> {
    let klen = ld(tx, node + N_KLEN)?;
    if klen > MAX_KEY_BYTES as u64 {
        return Err(Fault::Corrupt(Damage::Lengths));
    }
    let words = (0..words_for(klen))
        .map(|i| ld(tx, node + N_DATA + 8 * i))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(unpack(&words, klen as usize))
}

/// The value of `key`, if present.
pub(crate) fn get_in<T: TxRead>(tx: &T, hd: Header, key: &Key) -> Result<Option<Vec<u8>>, Fault> {
    let (_, _, node) = find(tx, hd, key)?;
    if node == 0 {
        return Ok(None);
    }
    value_of(tx, node, key.words.len() as u64).map(Some)
}

/// A key-value pair of a scan.
pub type Entry = (Vec<u8>, Vec<u8>);

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

    /// Whether `node`'s key is at or after the range's start.
    fn above_start<T: TxRead>(&self, tx: &T, node: u64) -> Result<bool, Fault> {
        Ok(match &self.from {
            Bound::Unbounded => true,
            Bound::Included(k) => cmp_node(tx, k, node)? != Ordering::Greater,
            Bound::Excluded(k) => cmp_node(tx, k, node)? == Ordering::Less,
        })
    }

    /// Whether `node`'s key is before the range's end.
    fn below_end<T: TxRead>(&self, tx: &T, node: u64) -> Result<bool, Fault> {
        Ok(match &self.to {
            Bound::Unbounded => true,
            Bound::Included(k) => cmp_node(tx, k, node)? != Ordering::Less,
            Bound::Excluded(k) => cmp_node(tx, k, node)? == Ordering::Greater,
        })
    }
}

/// The entries of `range` in key order, at most `limit`.
pub(crate) fn scan_in<T: TxRead>(
    tx: &T,
    hd: Header,
    range: &Range,
    limit: usize,
) -> Result<Vec<Entry>, Fault> {
    let mut out = Vec::new();
    let bound = step_bound(tx);
    let mut steps = 0u64;
    let mut step = || {
        steps += 1;
        if steps > 2 * bound {
            Err(Fault::Corrupt(Damage::Cycle))
        } else {
            Ok(())
        }
    };
    // The stack holds the nodes at or after the start whose left subtree
    // is done, in the order they are due.
    let mut stack = Vec::new();
    let mut node = ld(tx, hd.at + H_TREE)?;
    while node != 0 {
        step()?;
        if range.above_start(tx, node)? {
            stack.push(node);
            node = ld(tx, node + N_LEFT)?;
        } else {
            node = ld(tx, node + N_RIGHT)?;
        }
    }
    while let Some(n) = stack.pop() {
        if out.len() >= limit || !range.below_end(tx, n)? {
            break;
        }
        let key = key_of(tx, n)?;
        let value = value_of(tx, n, words_for(key.len() as u64))?;
        out.push((key, value));
        let mut c = ld(tx, n + N_RIGHT)?;
        while c != 0 {
            step()?;
            stack.push(c);
            c = ld(tx, c + N_LEFT)?;
        }
    }
    Ok(out)
}

/// Walks both structures and checks every invariant of the module docs:
/// each chain node in the bucket its hash selects, lengths within the
/// limits, every pointer inside the region, no cycle, `len` entries; the
/// tree in strictly increasing key order, each node's hash at most its
/// parent's, each tree node the one the hash map finds for its key, as
/// many tree nodes as entries. Returns the number of entries.
pub(crate) fn check_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    let hd = header(tx, root)?;
    let bound = step_bound(tx);
    let mut seen = 0u64;
    for i in 0..hd.count {
        let mut node = ld(tx, hd.buckets + 8 * i)?;
        while node != 0 {
            seen += 1;
            if seen > bound {
                return Err(Fault::Corrupt(Damage::Cycle));
            }
            if ld(tx, node + N_HASH)? & (hd.count - 1) != i {
                return Err(Fault::Corrupt(Damage::Misplaced));
            }
            let (klen, vlen) = (ld(tx, node + N_KLEN)?, ld(tx, node + N_VLEN)?);
            if klen > MAX_KEY_BYTES as u64 || vlen > MAX_VALUE_BYTES as u64 {
                return Err(Fault::Corrupt(Damage::Lengths));
            }
            // The last data word must be inside the region.
            ld(
                tx,
                node + N_DATA + 8 * (words_for(klen) + words_for(vlen)).max(1) - 8,
            )?;
            node = ld(tx, node + N_NEXT)?;
        }
    }
    if ld(tx, hd.at + H_LEN)? != seen {
        return Err(Fault::Corrupt(Damage::Count));
    }
    // The tree, in order (an explicit stack of (node, parent's hash)).
    let mut in_tree = 0u64;
    let mut prev: Option<Key> = None;
    let mut stack: Vec<(u64, u64)> = Vec::new();
    let mut node = ld(tx, hd.at + H_TREE)?;
    let mut above = u64::MAX;
    loop {
        while node != 0 {
            in_tree += 1;
            if in_tree > seen {
                // More tree nodes than entries (or a cycle).
                return Err(Fault::Corrupt(Damage::Index));
            }
            let h = ld(tx, node + N_HASH)?;
            if h > above {
                return Err(Fault::Corrupt(Damage::Heap));
            }
            stack.push((node, h));
            above = h;
            node = ld(tx, node + N_LEFT)?;
        }
        let Some((n, h)) = stack.pop() else { break };
        let key = Key::pack(&key_of(tx, n)?);
        if key.hash != h {
            return Err(Fault::Corrupt(Damage::Misplaced));
        }
        if let Some(p) = &prev {
            if cmp_node(tx, p, n)? != Ordering::Less {
                return Err(Fault::Corrupt(Damage::Order));
            }
        }
        if find(tx, hd, &key)?.2 != n {
            return Err(Fault::Corrupt(Damage::Index));
        }
        prev = Some(key);
        node = ld(tx, n + N_RIGHT)?;
        above = h;
    }
    if in_tree != seen {
        return Err(Fault::Corrupt(Damage::Index));
    }
    Ok(seen)
}

/// The error of `fault` in root slot `root`; `needed` is what a full
/// region lacked room for.
pub(crate) fn error(fault: Fault, root: usize, needed: u64) -> KvError {
    match fault {
        Fault::NotCreated => KvError::NotCreated { root },
        Fault::NotAStore => KvError::NotAStore { root },
        Fault::Full => KvError::Full { needed },
        Fault::Exists => KvError::Exists { root },
        Fault::Corrupt(d) => KvError::Corrupt {
            root,
            what: d.describe(),
        },
    }
}

/// `bytes` as a key, if within the limit.
pub(crate) fn key(bytes: &[u8]) -> Result<Key, KvError> {
    if bytes.len() > MAX_KEY_BYTES {
        return Err(KvError::KeyTooLarge {
            len: bytes.len(),
            max: MAX_KEY_BYTES,
        });
    }
    Ok(Key::pack(bytes))
}

pub(crate) fn check_value(value: &[u8]) -> Result<(), KvError> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(KvError::ValueTooLarge {
            len: value.len(),
            max: MAX_VALUE_BYTES,
        });
    }
    Ok(())
}
