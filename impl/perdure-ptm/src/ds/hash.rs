//! The resizable hash set of the seed's §6 set benchmarks ("a resizable
//! hash set ... with 10^6 keys", Figure 6 bottom, Table 1 "Hash") and the
//! hash map RedoDB is built on (§6, "a resizable hash map annotated with
//! the transactional semantics"): separate chaining over a power-of-two
//! bucket array, sequential code run inside a transaction.
//!
//! * Hash: [`super::mix`] (SplitMix64's finalizer) of the key, masked to
//!   the bucket count.
//! * Resize: when an insert makes `len > 2 · buckets`, the same transaction
//!   allocates a zeroed array of twice the buckets, relinks every node into
//!   it and frees the old array. The table never shrinks. If the region has
//!   no room for the larger array, the insert goes on without resizing
//!   (the table stays correct, with longer chains). A resize stores
//!   O(buckets + len) words in one transaction: on Redo-PTM such a
//!   transaction may exceed the log arena, and the other replicas then copy
//!   instead of replaying (see [`crate::redo`]).
//! * Layout (region words): header `[MAGIC, buckets, bucket_count, len]`;
//!   bucket array: `bucket_count` words, each the first node of its chain or
//!   0; set node `[key, next]` (32-byte class); map node `[key, next, value]`
//!   (64-byte class). A removed node is freed in the transaction that
//!   unlinks it.
//!
//! Invariant ([`check_set_in`], [`check_map_in`]): the bucket count is a
//! non-zero power of two; every key sits in the bucket its hash selects;
//! no key appears twice in its chain; every chain ends within the region's
//! block count; `len` is the number of nodes.

use super::{
    alloc, check_value, create_root, free, free_chain, header, header_or_create, ld, mix,
    open_root, read, st, step_bound, update, DsError, Fault, Violation,
};
use crate::tx::{Ptm, Transaction, TxRead};

/// The hash set's header magic.
pub const SET_MAGIC: u64 = u64::from_le_bytes(*b"PDHSET01");
/// The hash map's header magic.
pub const MAP_MAGIC: u64 = u64::from_le_bytes(*b"PDHMAP01");
/// Buckets of a table created with [`HashSet::create`] / [`HashMap::create`].
pub const DEFAULT_BUCKETS: u64 = 16;
const SET_KIND: &str = "hash set";
const MAP_KIND: &str = "hash map";
const BUCKETS: u64 = 8;
const COUNT: u64 = 16;
const LEN: u64 = 24;
const NEXT: u64 = 8;
const VALUE: u64 = 16;

/// The two tables share their code; a map's nodes carry a value word.
#[derive(Clone, Copy)]
struct Shape {
    magic: u64,
    node: u64,
}
const SET: Shape = Shape {
    magic: SET_MAGIC,
    node: 16,
};
const MAP: Shape = Shape {
    magic: MAP_MAGIC,
    node: 24,
};

fn validate_buckets(kind: &'static str, buckets: u64) -> Result<(), DsError> {
    if buckets.is_power_of_two() && buckets <= 1 << 40 {
        Ok(())
    } else {
        Err(DsError::BadSize {
            kind,
            reason: format!("{buckets} buckets: must be a power of two in 1..=2^40"),
        })
    }
}

fn create_table<T: Transaction>(
    tx: &T,
    root: usize,
    shape: Shape,
    buckets: u64,
) -> Result<u64, Fault> {
    header_or_create(tx, root, shape.magic, || {
        let arr = zeroed_array(tx, buckets)?;
        let h = match alloc(tx, 32) {
            Ok(h) => h,
            Err(f) => {
                free(tx, arr)?;
                return Err(f);
            }
        };
        st(tx, h, shape.magic)?;
        st(tx, h + BUCKETS, arr)?;
        st(tx, h + COUNT, buckets)?;
        st(tx, h + LEN, 0)?;
        st(tx, crate::tx::root_offset(root), h)?;
        Ok(h)
    })
}

fn zeroed_array<T: Transaction>(tx: &T, words: u64) -> Result<u64, Fault> {
    let arr = alloc(tx, 8 * words)?;
    for i in 0..words {
        st(tx, arr + 8 * i, 0)?;
    }
    Ok(arr)
}

/// A table of one transaction.
struct Table<'t, T> {
    tx: &'t T,
    h: u64,
    shape: Shape,
}

impl<T: TxRead> Table<'_, T> {
    fn open(tx: &T, root: usize, shape: Shape) -> Result<Table<'_, T>, Fault> {
        Ok(Table {
            tx,
            h: header(tx, root, shape.magic)?,
            shape,
        })
    }

    /// The bucket array and its mask.
    fn buckets(&self) -> Result<(u64, u64), Fault> {
        let count = ld(self.tx, self.h + COUNT)?;
        if !count.is_power_of_two() {
            return Err(Fault::Invariant(Violation::BadBuckets));
        }
        Ok((ld(self.tx, self.h + BUCKETS)?, count - 1))
    }

    /// The word linking to `key`'s node (or the chain's final 0 link), and
    /// that node (0 if absent).
    fn find(&self, key: u64) -> Result<(u64, u64), Fault> {
        let (arr, mask) = self.buckets()?;
        let mut link = arr + 8 * (mix(key) & mask);
        let mut node = ld(self.tx, link)?;
        for _ in 0..step_bound(self.tx) {
            if node == 0 || ld(self.tx, node)? == key {
                return Ok((link, node));
            }
            link = node + NEXT;
            node = ld(self.tx, link)?;
        }
        Err(Fault::Invariant(Violation::Cycle))
    }

    fn check(&self) -> Result<u64, Fault> {
        let (arr, mask) = self.buckets()?;
        let bound = step_bound(self.tx);
        let mut n = 0u64;
        for b in 0..=mask {
            let mut node = ld(self.tx, arr + 8 * b)?;
            let mut seen = Vec::new();
            while node != 0 {
                n += 1;
                if n > bound {
                    return Err(Fault::Invariant(Violation::Cycle));
                }
                let key = ld(self.tx, node)?;
                if mix(key) & mask != b {
                    return Err(Fault::Invariant(Violation::WrongBucket));
                }
                if seen.contains(&key) {
                    return Err(Fault::Invariant(Violation::Duplicate));
                }
                seen.push(key);
                node = ld(self.tx, node + NEXT)?;
            }
        }
        if n != ld(self.tx, self.h + LEN)? {
            return Err(Fault::Invariant(Violation::CountMismatch));
        }
        Ok(n)
    }
}

impl<T: Transaction> Table<'_, T> {
    /// Inserts `key` (with `value` for a map) if absent: `Ok(None)` if it
    /// was added, `Ok(Some(old))` if present (a map's value is replaced).
    fn insert(&self, key: u64, value: u64) -> Result<Option<u64>, Fault> {
        let (link, node) = self.find(key)?;
        if node != 0 {
            if self.shape.node > 16 {
                let old = ld(self.tx, node + VALUE)?;
                st(self.tx, node + VALUE, value)?;
                return Ok(Some(old));
            }
            return Ok(Some(0));
        }
        let new = alloc(self.tx, self.shape.node)?;
        st(self.tx, new, key)?;
        st(self.tx, new + NEXT, 0)?;
        if self.shape.node > 16 {
            st(self.tx, new + VALUE, value)?;
        }
        st(self.tx, link, new)?;
        let len = ld(self.tx, self.h + LEN)? + 1;
        st(self.tx, self.h + LEN, len)?;
        let count = ld(self.tx, self.h + COUNT)?;
        if len > 2 * count {
            self.grow(count)?;
        }
        Ok(None)
    }

    /// Doubles the bucket array (skipped if the region has no room).
    fn grow(&self, count: u64) -> Result<(), Fault> {
        let new_count = 2 * count;
        let arr = match zeroed_array(self.tx, new_count) {
            Ok(a) => a,
            Err(Fault::OutOfSpace) => return Ok(()),
            Err(f) => return Err(f),
        };
        let (old, mask) = self.buckets()?;
        let bound = step_bound(self.tx);
        let mut moved = 0u64;
        for b in 0..=mask {
            let mut node = ld(self.tx, old + 8 * b)?;
            while node != 0 {
                moved += 1;
                if moved > bound {
                    return Err(Fault::Invariant(Violation::Cycle));
                }
                let next = ld(self.tx, node + NEXT)?;
                let slot = arr + 8 * (mix(ld(self.tx, node)?) & (new_count - 1));
                st(self.tx, node + NEXT, ld(self.tx, slot)?)?;
                st(self.tx, slot, node)?;
                node = next;
            }
        }
        st(self.tx, self.h + BUCKETS, arr)?;
        st(self.tx, self.h + COUNT, new_count)?;
        free(self.tx, old)
    }

    /// Removes `key`: its value (0 for a set) if it was present.
    fn remove(&self, key: u64) -> Result<Option<u64>, Fault> {
        let (link, node) = self.find(key)?;
        if node == 0 {
            return Ok(None);
        }
        let value = if self.shape.node > 16 {
            ld(self.tx, node + VALUE)?
        } else {
            0
        };
        st(self.tx, link, ld(self.tx, node + NEXT)?)?;
        st(
            self.tx,
            self.h + LEN,
            ld(self.tx, self.h + LEN)?.wrapping_sub(1),
        )?;
        free(self.tx, node)?;
        Ok(Some(value))
    }

    fn destroy(&self, root: usize) -> Result<(), Fault> {
        self.check()?;
        let (arr, mask) = self.buckets()?;
        for b in 0..=mask {
            free_chain(self.tx, ld(self.tx, arr + 8 * b)?, NEXT)?;
        }
        free(self.tx, arr)?;
        free(self.tx, self.h)?;
        st(self.tx, crate::tx::root_offset(root), 0)
    }
}

/// `create` and `create_with` of the handle `$ty` of a table of shape
/// `$shape` (the `$what` in the docs), whose errors name `$kind`.
macro_rules! table_handle {
    ($ty:ident, $what:literal, $kind:expr, $shape:expr) => {
        impl $ty {
            #[doc = concat!("The ", $what, " in root slot `root`, created empty with")]
            /// [`DEFAULT_BUCKETS`] buckets if the slot is 0.
            pub fn create<P: Ptm>(ptm: &P, root: usize) -> Result<$ty, DsError> {
                $ty::create_with(ptm, root, DEFAULT_BUCKETS)
            }

            #[doc = concat!("The ", $what, " in root slot `root`, created empty with `buckets`")]
            /// buckets (a power of two) if the slot is 0.
            pub fn create_with<P: Ptm>(ptm: &P, root: usize, buckets: u64) -> Result<$ty, DsError> {
                validate_buckets($kind, buckets)?;
                create_root(ptm, root, $kind, move |tx| {
                    create_table(tx, root, $shape, buckets)
                })?;
                Ok($ty { root })
            }
        }
    };
}

/// Frees every node of the table of shape `shape` in root slot `root`, its
/// bucket array and its header, and clears the slot.
fn destroy_table_in<T: Transaction>(tx: &T, root: usize, shape: Shape) -> Result<(), Fault> {
    Table::open(tx, root, shape)?.destroy(root)
}

fn destroy_set_in<T: Transaction>(tx: &T, root: usize) -> Result<(), Fault> {
    destroy_table_in(tx, root, SET)
}

fn destroy_map_in<T: Transaction>(tx: &T, root: usize) -> Result<(), Fault> {
    destroy_table_in(tx, root, MAP)
}

/// A resizable hash set of `u64` keys in a root slot. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashSet {
    root: usize,
}

table_handle!(HashSet, "set", SET_KIND, SET);
handle_basics!(HashSet, SET_KIND, SET_MAGIC, check_set_in, destroy_set_in);
set_membership!(
    HashSet,
    SET_KIND,
    set_insert_in,
    set_remove_in,
    set_contains_in
);

impl HashSet {
    /// The stored count and the bucket count.
    pub fn len_and_buckets<P: Ptm>(&self, ptm: &P) -> Result<(u64, u64), DsError> {
        let root = self.root;
        let field = |f: u64| {
            read(ptm, root, SET_KIND, move |tx| {
                ld(tx, header(tx, root, SET_MAGIC)? + f)
            })
        };
        Ok((field(LEN)?, field(COUNT)?))
    }
}

/// Creates an empty hash set with `buckets` buckets (a power of two) in
/// root slot `root` if the slot is 0; returns the header's offset.
pub fn create_set_in<T: Transaction>(tx: &T, root: usize, buckets: u64) -> Result<u64, Fault> {
    create_table(tx, root, SET, buckets)
}

/// Adds `key` to the hash set; whether it was absent.
pub fn set_insert_in<T: Transaction>(tx: &T, root: usize, key: u64) -> Result<bool, Fault> {
    Ok(Table::open(tx, root, SET)?.insert(key, 0)?.is_none())
}

/// Removes `key` from the hash set; whether it was present.
pub fn set_remove_in<T: Transaction>(tx: &T, root: usize, key: u64) -> Result<bool, Fault> {
    Ok(Table::open(tx, root, SET)?.remove(key)?.is_some())
}

/// Whether `key` is in the hash set.
pub fn set_contains_in<T: TxRead>(tx: &T, root: usize, key: u64) -> Result<bool, Fault> {
    Ok(Table::open(tx, root, SET)?.find(key)?.1 != 0)
}

/// Checks the hash set's invariant; returns its size.
pub fn check_set_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    Table::open(tx, root, SET)?.check()
}

/// A resizable hash map from `u64` keys to `u64` values (at most
/// [`super::MAX_VALUE`]) in a root slot. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashMap {
    root: usize,
}

table_handle!(HashMap, "map", MAP_KIND, MAP);
handle_basics!(HashMap, MAP_KIND, MAP_MAGIC, check_map_in, destroy_map_in);

impl HashMap {
    /// Maps `key` to `value`; the value it replaced, if any.
    pub fn insert<P: Ptm>(&self, ptm: &P, key: u64, value: u64) -> Result<Option<u64>, DsError> {
        check_value(value)?;
        let root = self.root;
        update(ptm, root, MAP_KIND, move |tx| {
            map_insert_in(tx, root, key, value)
        })
    }

    /// Removes `key`; its value, if it was present.
    pub fn remove<P: Ptm>(&self, ptm: &P, key: u64) -> Result<Option<u64>, DsError> {
        let root = self.root;
        update(ptm, root, MAP_KIND, move |tx| map_remove_in(tx, root, key))
    }

    /// `key`'s value, if any (a read-only transaction).
    pub fn get<P: Ptm>(&self, ptm: &P, key: u64) -> Result<Option<u64>, DsError> {
        let root = self.root;
        read(ptm, root, MAP_KIND, move |tx| map_get_in(tx, root, key))
    }
}

/// Creates an empty hash map with `buckets` buckets (a power of two) in
/// root slot `root` if the slot is 0; returns the header's offset.
pub fn create_map_in<T: Transaction>(tx: &T, root: usize, buckets: u64) -> Result<u64, Fault> {
    create_table(tx, root, MAP, buckets)
}

/// Maps `key` to `value`; the value it replaced, if any.
pub fn map_insert_in<T: Transaction>(
    tx: &T,
    root: usize,
    key: u64,
    value: u64,
) -> Result<Option<u64>, Fault> {
    Table::open(tx, root, MAP)?.insert(key, value)
}

/// Removes `key` from the map; its value, if it was present.
pub fn map_remove_in<T: Transaction>(tx: &T, root: usize, key: u64) -> Result<Option<u64>, Fault> {
    Table::open(tx, root, MAP)?.remove(key)
}

/// `key`'s value in the map, if any.
pub fn map_get_in<T: TxRead>(tx: &T, root: usize, key: u64) -> Result<Option<u64>, Fault> {
    let t = Table::open(tx, root, MAP)?;
    match t.find(key)?.1 {
        0 => Ok(None),
        node => ld(tx, node + VALUE).map(Some),
    }
}

/// Checks the hash map's invariant; returns its size.
pub fn check_map_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    Table::open(tx, root, MAP)?.check()
}
