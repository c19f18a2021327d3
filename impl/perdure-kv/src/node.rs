//! An entry's node, what the hash map (`map.rs`) and the ordered index
//! (`index.rs`) both point at, and what every walk of the region shares:
//! checked loads and stores, the faults a damaged region raises, keys
//! packed into words and compared in the bytes' order.
//!
//! * Node (one block per entry): `[next, hash, key_len, value_len, key
//!   words..., value words...]`, bytes little-endian in words, the last
//!   word zero-padded. `next` links the hash chain; the node does not move
//!   while its value keeps its size, so both structures keep pointing at
//!   it.
//! * Keys compare in the bytes' lexicographic order: a word byte-swapped
//!   (big-endian) compares as its eight bytes do, so a key's first two
//!   words so swapped ([`Key::prefix`]) order any two keys that differ in
//!   their first 16 bytes, and the index keeps them inline.
//! * Bad input: every offset goes through the PTM's checked loads; lengths
//!   over the limits are [`Damage::Lengths`]. Damage is a typed fault,
//!   never a panic.

use perdure_ptm::{Transaction, TxRead};
use std::cmp::Ordering;

/// The longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;
/// The longest value, in bytes.
pub const MAX_VALUE_BYTES: usize = 16 * 1024;

// The node words of the module docs' layout, in order.
pub(crate) const N_NEXT: u64 = 0;
pub(crate) const N_HASH: u64 = 8;
pub(crate) const N_KLEN: u64 = 16;
pub(crate) const N_VLEN: u64 = 24;
/// Where a node's key words start.
pub(crate) const N_DATA: u64 = N_VLEN + 8;
// The layout is persistent.
const _: () = assert!(N_DATA == 32);

/// Why an operation inside a transaction failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    NotCreated,
    NotAStore,
    OldFormat,
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
    Shape,
    Index,
    Chain,
}

impl Damage {
    /// Every kind, in the order of their codes (`store.rs`).
    pub(crate) const ALL: [Damage; 10] = [
        Damage::Pointer,
        Damage::BucketCount,
        Damage::Cycle,
        Damage::Lengths,
        Damage::Misplaced,
        Damage::Count,
        Damage::Order,
        Damage::Shape,
        Damage::Index,
        Damage::Chain,
    ];

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Damage::Pointer => "a pointer outside the region",
            Damage::BucketCount => "a bucket count that is not a power of two",
            Damage::Cycle => "a chain or tree walk longer than the region can hold (a cycle)",
            Damage::Lengths => "a key or value length over the limits",
            Damage::Misplaced => "a node in a bucket its hash does not select",
            Damage::Count => "a leaf count that is not the number of the ordered index's leaves",
            Damage::Order => "ordered-index keys out of order or outside their block's range",
            Damage::Shape => {
                "an ordered-index block with a bad kind or count (a leaf's: an empty slot among its \
                 entries, or an entry after them), or leaves at different depths"
            }
            Damage::Index => {
                "an ordered-index entry the hash map does not hold, or whose key words are not its node's"
            }
            Damage::Chain => "an ordered-index leaf whose next link is not the next leaf",
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

    /// The first two words byte-swapped (0 past the key's end): ordered
    /// as the key's first 16 bytes, zero-padded.
    pub(crate) fn prefix(&self) -> (u64, u64) {
        let w = |i: usize| self.words.get(i).map_or(0, |w| w.swap_bytes());
        (w(0), w(1))
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

pub(crate) fn alloc<T: Transaction>(tx: &T, size: u64) -> Result<u64, Fault> {
    tx.alloc(size).map_err(|_| Fault::Full)
}

pub(crate) fn free<T: Transaction>(tx: &T, off: u64) -> Result<(), Fault> {
    tx.free(off).map_err(|_| Fault::Corrupt(Damage::Pointer))
}

/// The most blocks of `size` bytes a region of this length can hold: the
/// bound of every walk (a longer one is a cycle).
pub(crate) fn step_bound<T: TxRead>(tx: &T, size: u64) -> u64 {
    tx.region_len() / size + 1
}

/// A key stored in the region: its length at `len_at`, its words from
/// `data_at` (a node's, or a copy the index keeps).
#[derive(Clone, Copy, Debug)]
pub(crate) struct StoredKey {
    pub(crate) len_at: u64,
    pub(crate) data_at: u64,
}

impl StoredKey {
    /// The key of node `node`.
    pub(crate) fn of_node(node: u64) -> StoredKey {
        StoredKey {
            len_at: node + N_KLEN,
            data_at: node + N_DATA,
        }
    }

    /// Its length, checked against the limit.
    pub(crate) fn len<T: TxRead>(self, tx: &T) -> Result<u64, Fault> {
        let len = ld(tx, self.len_at)?;
        if len > MAX_KEY_BYTES as u64 {
            return Err(Fault::Corrupt(Damage::Lengths));
        }
        Ok(len)
    }

    /// `key` against this key, in the bytes' lexicographic order.
    pub(crate) fn cmp_with<T: TxRead>(self, tx: &T, key: &Key) -> Result<Ordering, Fault> {
        let len = self.len(tx)?;
        let words = (key.words.len() as u64).min(words_for(len));
        for i in 0..words {
            let a = key.words[i as usize].swap_bytes();
            let b = ld(tx, self.data_at + 8 * i)?.swap_bytes();
            if a != b {
                return Ok(a.cmp(&b));
            }
        }
        Ok(key.len.cmp(&len))
    }

    /// Its bytes.
    pub(crate) fn bytes<T: TxRead>(self, tx: &T) -> Result<Vec<u8>, Fault> {
        let len = self.len(tx)?;
        read_bytes(tx, self.data_at, len)
    }
}

/// Whether `node` holds `key`.
pub(crate) fn holds<T: TxRead>(tx: &T, key: &Key, node: u64) -> Result<bool, Fault> {
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

/// The key of `node`.
pub(crate) fn key_of<T: TxRead>(tx: &T, node: u64) -> Result<Vec<u8>, Fault> {
    StoredKey::of_node(node).bytes(tx)
}

/// The value of `node` (its key has `kwords` words).
pub(crate) fn value_of<T: TxRead>(tx: &T, node: u64, kwords: u64) -> Result<Vec<u8>, Fault> {
    let vlen = ld(tx, node + N_VLEN)?;
    if vlen > MAX_VALUE_BYTES as u64 {
        return Err(Fault::Corrupt(Damage::Lengths));
    }
    read_bytes(tx, node + N_DATA + 8 * kwords, vlen)
}

/// The `len` bytes whose words start at `at` (one allocation: the bytes).
fn read_bytes<T: TxRead>(tx: &T, at: u64, len: u64) -> Result<Vec<u8>, Fault> {
    let mut out = Vec::with_capacity(8 * words_for(len) as usize);
    for i in 0..words_for(len) {
        out.extend_from_slice(&ld(tx, at + 8 * i)?.to_le_bytes());
    }
    out.truncate(len as usize);
    Ok(out)
}
