//! RedoDB's map (seed 000, §6 "Wait-free in-memory database": "a resizable
//! hash map annotated with the transactional semantics"), over byte-string
//! keys and values, with an ordered index beside it for scans: sequential
//! code run inside the PTM's transactions, so every operation is durable
//! and linearizable when it returns, and recovery is the PTM's null
//! recovery.
//!
//! * Layout (region words): header `[MAGIC, buckets, bucket_count,
//!   leaves, tree, height]` in the root slot; bucket array of `bucket_count` words,
//!   each the first node of its chain or 0; one node per entry (`node.rs`),
//!   in both structures at once: its hash chain, and the ordered index
//!   (`index.rs`, a B+tree whose leaves name the nodes; `tree` is its
//!   root, `height` its levels, `leaves` its number of leaves).
//! * No entry count (issue 18): a count every put and delete wrote was a
//!   line written back per write. The number of entries is the index
//!   leaves' counts, walked ([`len_in`]: a block per ~28 entries), and
//!   `leaves`, written only when a put adds a leaf (one in 21 to 41
//!   inserts), drives the resize.
//! * Hash: FNV-1a over the key's bytes, then [`perdure_ptm::ds::mix`] with
//!   its length; the node keeps it, so a resize moves nodes without
//!   reading keys.
//! * Resize: as `perdure_ptm::ds::hash` (the same transaction relinks
//!   every node into twice the buckets; skipped if the region has no room,
//!   or no room left for the rest of a batch), when a put that adds a leaf
//!   makes `ENTRIES_PER_LEAF · leaves > 2 · buckets`: the entries a leaf
//!   holds on average under random inserts (ln 2 of its 41, Yao's 69%
//!   fill) stand for the entry count. A random fill so doubles at about 2
//!   entries per bucket, a sequential one (full leaves) at 2.9, and since
//!   a leaf holds at most 41 entries no chain average passes 2.9 while
//!   there is room; leaves emptied by deletes stay and count, so a table
//!   may double early (more buckets than entries need), never late. A
//!   store starts with the buckets its creator asks for (at least 64; a
//!   database one per 256 bytes of its region, as RedoDB starts with 10 ·
//!   2^20): every resize writes back every node's link and is paid by one
//!   put, so a store sized for its keys never pays it.
//! * Overwrite: a value of the same number of words is written in place;
//!   otherwise a new node takes the old one's place in its chain and in the
//!   index, and the old block is freed.
//! * Room: a transaction's stores are kept whatever it returns, so every
//!   operation asks for the room it needs (its node, the index's
//!   [`index::room_for`]) before its first store, and a batch for all of
//!   its operations before the first: [`Fault::Full`] leaves the store as
//!   it was.
//! * Bad input: every offset read from the region goes through the PTM's
//!   checked loads; a walk longer than the region could hold is a cycle.
//!   Damage is a typed fault, never a panic.
//!
//! The formats before this one (`PDKVMAP5`) are refused with
//! [`Fault::OldFormat`]: the first (`PDKVMAP2`, an ordered treap through
//! two words of every node), the B+tree whose leaves kept a count word
//! (`PDKVMAP3`; `index.rs`), and the header with an entry count where
//! `leaves` is (`PDKVMAP4`).

use crate::error::KvError;
pub(crate) use crate::index::Range;
use crate::index::{self, Tree};
use crate::node::{
    alloc, free, holds, key_of, ld, st, step_bound, value_of, N_DATA, N_HASH, N_KLEN, N_NEXT,
    N_VLEN,
};
pub(crate) use crate::node::{
    node_size, pack, words_for, Damage, Fault, Key, MAX_KEY_BYTES, MAX_VALUE_BYTES,
};
use perdure_ptm::{Transaction, TxRead};

/// The header's magic.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDKVMAP5");
/// The magics of the formats before (module docs).
const MAGIC_OLD: [u64; 3] = [
    u64::from_le_bytes(*b"PDKVMAP2"),
    u64::from_le_bytes(*b"PDKVMAP3"),
    u64::from_le_bytes(*b"PDKVMAP4"),
];
/// The entries a leaf stands for in the resize's estimate (module docs).
const ENTRIES_PER_LEAF: u64 = 28;
// Between a split leaf's entries and a full leaf's.
const _: () = assert!(index::LEAF_CAP / 2 < ENTRIES_PER_LEAF && ENTRIES_PER_LEAF < index::LEAF_CAP);
/// The fewest buckets a store starts with.
pub(crate) const MIN_BUCKETS: u64 = 64;
/// The most buckets a store starts with (a 512 MiB bucket array).
const MAX_BUCKETS: u64 = 1 << 26;

/// The bucket count a store asked for `buckets` starts with: a power of
/// two in `MIN_BUCKETS..=MAX_BUCKETS`, `buckets` rounded up.
pub(crate) fn first_buckets(buckets: u64) -> u64 {
    buckets.clamp(MIN_BUCKETS, MAX_BUCKETS).next_power_of_two()
}

// The header words of the module docs' layout, in order.
perdure_pm::word_offsets!(_, H_BUCKETS, H_COUNT, H_LEAVES, H_TREE, H_HEIGHT);
/// The header's size.
pub(crate) const HEADER: u64 = H_HEIGHT + 8;
// The layout is persistent.
const _: () = assert!(HEADER == 48);

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
    match ld(tx, at)? {
        MAGIC => {}
        m if MAGIC_OLD.contains(&m) => return Err(Fault::OldFormat),
        _ => return Err(Fault::NotAStore),
    }
    let buckets = ld(tx, at + H_BUCKETS)?;
    let count = ld(tx, at + H_COUNT)?;
    if !count.is_power_of_two() {
        return Err(Fault::Corrupt(Damage::BucketCount));
    }
    Ok(Header { at, buckets, count })
}

impl Header {
    /// Where the ordered index lives.
    pub(crate) fn tree(self) -> Tree {
        Tree {
            root_at: self.at + H_TREE,
            height_at: self.at + H_HEIGHT,
        }
    }
}

/// Formats an empty store with `buckets` buckets (a power of two, from
/// [`first_buckets`]) in root slot `root` (which must be empty).
pub(crate) fn create_in<T: Transaction>(tx: &T, root: usize, buckets: u64) -> Result<u64, Fault> {
    if tx.root(root) != 0 {
        return Err(Fault::Exists);
    }
    if !has_room(tx, &[(HEADER, 1), (8 * buckets, 1)])? {
        return Err(Fault::Full);
    }
    let h = tx.alloc(HEADER).map_err(|_| Fault::Full)?;
    let b = tx.alloc_zeroed(8 * buckets).map_err(|_| Fault::Full)?;
    st(tx, h, MAGIC)?;
    st(tx, h + H_BUCKETS, b)?;
    st(tx, h + H_COUNT, buckets)?;
    st(tx, h + H_LEAVES, 0)?;
    st(tx, h + H_TREE, 0)?;
    st(tx, h + H_HEIGHT, 0)?;
    tx.set_root(root, h);
    Ok(0)
}

/// The number of entries: a walk of the index's leaves (module docs).
pub(crate) fn len_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    index::len(tx, header(tx, root)?.tree())
}

/// The most nodes a walk of the region can meet.
fn node_bound<T: TxRead>(tx: &T) -> u64 {
    step_bound(tx, N_DATA)
}

/// Where `key` is in the hash map: the bucket word, the link word that
/// names its node (or the chain's last link), and the node (0 if absent).
fn find<T: TxRead>(tx: &T, hd: Header, key: &Key) -> Result<(u64, u64, u64), Fault> {
    let bucket = hd.buckets + 8 * (key.hash & (hd.count - 1));
    let mut link = bucket;
    let mut node = ld(tx, link)?;
    let bound = node_bound(tx);
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

/// [`Transaction::has_room`], a damaged allocator as damage.
fn has_room<T: Transaction>(tx: &T, needs: &[(u64, u64)]) -> Result<bool, Fault> {
    tx.has_room(needs)
        .map_err(|_| Fault::Corrupt(Damage::Pointer))
}

/// Counts a leaf a put added, and doubles the buckets when the leaves
/// stand for more than 2 entries per bucket (module docs): every node
/// relinked by its kept hash; skipped if there is no room for the new
/// buckets and `inserts` more inserts into the index.
fn added_leaf<T: Transaction>(tx: &T, hd: Header, inserts: u64) -> Result<(), Fault> {
    let leaves = ld(tx, hd.at + H_LEAVES)?.saturating_add(1);
    // More leaves than the region's blocks: damage (which would otherwise
    // double the buckets at every new leaf).
    if leaves > step_bound(tx, index::BLOCK_BYTES) {
        return Err(Fault::Corrupt(Damage::Count));
    }
    st(tx, hd.at + H_LEAVES, leaves)?;
    if leaves * ENTRIES_PER_LEAF <= hd.count.saturating_mul(2) {
        return Ok(());
    }
    let new_count = 2 * hd.count;
    if !has_room(
        tx,
        &[(8 * new_count, 1), index::room_for(tx, hd.tree(), inserts)?],
    )? {
        return Ok(());
    }
    let Ok(nb) = tx.alloc_zeroed(8 * new_count) else {
        return Ok(());
    };
    let bound = node_bound(tx);
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
/// `block` is a block of [`node_size`] allocated for it by a batch that
/// made sure of the index's room for itself and `later` more puts (the
/// block is freed if the value is written in place), or `None` to take
/// the room here, if needed, before anything is stored ([`Fault::Full`]
/// leaves the store unchanged).
pub(crate) fn put_in<T: Transaction>(
    tx: &T,
    hd: Header,
    key: &Key,
    value: &[u64],
    vlen: u64,
    block: Option<u64>,
    later: u64,
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
        None => {
            let size = node_size(key, value.len());
            let inserts = u64::from(found == 0);
            if !has_room(tx, &[(size, 1), index::room_for(tx, hd.tree(), inserts)?])? {
                return Err(Fault::Full);
            }
            alloc(tx, size)?
        }
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
        if !mutant!(KvOverwriteStaleIndex) {
            index::replace(tx, hd.tree(), key, found, block)?;
        }
        free(tx, found)?;
        return Ok(1);
    }
    st(tx, block + N_NEXT, ld(tx, bucket)?)?;
    st(tx, bucket, block)?;
    if index::insert(tx, hd.tree(), key, block)? {
        added_leaf(tx, hd, later)?;
    }
    Ok(0)
}

/// One operation of a batch: a put of `(value words, value length)`, or
/// a delete (`None`).
pub(crate) type Op = (Key, Option<(Vec<u64>, u64)>);

/// A batch: the room for every put's node and index insert asked for and
/// every node block allocated first (if one does not fit, the ones taken
/// are given back and nothing else is stored: [`Fault::Full`]), then the
/// operations in order.
pub(crate) fn write_in<T: Transaction>(tx: &T, root: usize, ops: &[Op]) -> Result<u64, Fault> {
    let hd = header(tx, root)?;
    let sizes: Vec<(u64, u64)> = ops
        .iter()
        .filter_map(|(k, w)| w.as_ref().map(|(v, _)| (node_size(k, v.len()), 1)))
        .collect();
    let mut blocks = Vec::with_capacity(sizes.len());
    if !mutant!(KvBatchNoAllocFirst) {
        let mut needs = sizes.clone();
        needs.push(index::room_for(tx, hd.tree(), sizes.len() as u64)?);
        if !has_room(tx, &needs)? {
            return Err(Fault::Full);
        }
        for &(size, _) in &sizes {
            match tx.alloc(size) {
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
    let mut later = sizes.len() as u64;
    for (k, w) in ops {
        // Read again: an earlier put of the batch may have resized.
        let hd = header(tx, root)?;
        match w {
            Some((v, vlen)) => {
                later -= 1;
                put_in(tx, hd, k, v, *vlen, blocks.next(), later)?
            }
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
    index::remove(tx, hd.tree(), key, found)?;
    free(tx, found)?;
    Ok(1)
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

/// The entries of `range` in key order, at most `limit`.
pub(crate) fn scan_in<T: TxRead>(
    tx: &T,
    hd: Header,
    range: &Range,
    limit: usize,
) -> Result<Vec<Entry>, Fault> {
    index::scan(tx, hd.tree(), range, limit)?
        .into_iter()
        .map(|n| {
            let key = key_of(tx, n)?;
            let value = value_of(tx, n, words_for(key.len() as u64))?;
            Ok((key, value))
        })
        .collect()
}

/// Walks both structures and checks every invariant of the module docs:
/// each chain node in the bucket its hash selects, lengths within the
/// limits, every pointer inside the region, no cycle; the index as
/// [`index::check`] does, each of its entries the node the hash map finds
/// for its key, as many as entries, `leaves` leaves. Returns the number
/// of entries.
pub(crate) fn check_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    let hd = header(tx, root)?;
    let bound = node_bound(tx);
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
    let (in_index, leaves) = index::check(tx, hd.tree(), |node, key| {
        if ld(tx, node + N_HASH)? != key.hash {
            return Err(Fault::Corrupt(Damage::Misplaced));
        }
        if find(tx, hd, key)?.2 != node {
            return Err(Fault::Corrupt(Damage::Index));
        }
        Ok(())
    })?;
    if in_index != seen {
        return Err(Fault::Corrupt(Damage::Index));
    }
    if ld(tx, hd.at + H_LEAVES)? != leaves {
        return Err(Fault::Corrupt(Damage::Count));
    }
    Ok(seen)
}

/// The error of `fault` in root slot `root`; `needed` is what a full
/// region lacked room for.
pub(crate) fn error(fault: Fault, root: usize, needed: u64) -> KvError {
    match fault {
        Fault::NotCreated => KvError::NotCreated { root },
        Fault::NotAStore => KvError::NotAStore { root },
        Fault::OldFormat => KvError::OldFormat { root },
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
