//! The array of the seed's SPS benchmark (§6, Figure 4: "each swap
//! exchanges the values of two randomly selected entries of an array of
//! 10^6 64-bit integers, hence modifying two memory words in PM ... there
//! is no allocation being performed inside each transaction").
//!
//! Layout (region words): header `[MAGIC, len, data]`; `data` is one block
//! of `len` words. [`PArray::create`] fills entry `i` with `i`, in
//! transactions of [`FILL_CHUNK`] stores (one transaction of 10^6 stores
//! would exceed every construction's log), so swaps keep the array a
//! permutation of `0..len` — the invariant [`check_in`] verifies.

use super::{
    alloc, check_root, free, header, ld, open_root, read, st, update, DsError, Fault, Violation,
};
use crate::tx::{Ptm, Transaction, TxRead};

/// The array's header magic.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDARRAY1");
/// Entries [`PArray::create`] initialises per transaction.
pub const FILL_CHUNK: u64 = 2048;
const KIND: &str = "array";
const LEN: u64 = 8;
const DATA: u64 = 16;

/// A fixed-length array of `u64` in a root slot. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PArray {
    root: usize,
}

impl PArray {
    /// Creates an array of `len` entries holding `0..len` in root slot
    /// `root`, which must be 0 (several transactions: the slot is set by the
    /// first, which also records `len`; a crash before the last leaves a
    /// partly filled array that [`PArray::check`] rejects).
    pub fn create<P: Ptm>(ptm: &P, root: usize, len: u64) -> Result<PArray, DsError> {
        check_root(root)?;
        if len == 0 || len > 1 << 40 {
            return Err(DsError::BadSize {
                kind: KIND,
                reason: format!("{len} entries: must be in 1..=2^40"),
            });
        }
        update(ptm, root, KIND, move |tx| {
            match header(tx, root, MAGIC) {
                Err(Fault::NotCreated) => {}
                Ok(_) => return Err(Fault::WrongKind),
                Err(f) => return Err(f),
            }
            let data = alloc(tx, 8 * len)?;
            let h = match alloc(tx, 24) {
                Ok(h) => h,
                Err(f) => {
                    free(tx, data)?;
                    return Err(f);
                }
            };
            st(tx, h, MAGIC)?;
            st(tx, h + LEN, len)?;
            st(tx, h + DATA, data)?;
            st(tx, crate::tx::root_offset(root), h)?;
            Ok(0)
        })?;
        let mut start = 0;
        while start < len {
            let end = (start + FILL_CHUNK).min(len);
            update(ptm, root, KIND, move |tx| {
                let data = ld(tx, header(tx, root, MAGIC)? + DATA)?;
                for i in start..end {
                    st(tx, data + 8 * i, i)?;
                }
                Ok(0)
            })?;
            start = end;
        }
        Ok(PArray { root })
    }

    /// The array already in root slot `root`.
    pub fn open<P: Ptm>(ptm: &P, root: usize) -> Result<PArray, DsError> {
        open_root(ptm, root, KIND, MAGIC)?;
        Ok(PArray { root })
    }

    /// Its root slot.
    pub fn root(&self) -> usize {
        self.root
    }

    /// Swaps entries `i` and `j` (of the `(i, j)` pairs, in order) in one
    /// transaction.
    pub fn swap_all<P: Ptm>(&self, ptm: &P, pairs: Vec<(u64, u64)>) -> Result<(), DsError> {
        let root = self.root;
        update(ptm, root, KIND, move |tx| {
            // The header once for all pairs (a swap stores only entries).
            let (len, data) = bounds(tx, root)?;
            for &(i, j) in &pairs {
                if i >= len || j >= len {
                    return Err(Fault::Invariant(Violation::BadPointer));
                }
                swap_at(tx, data + 8 * i, data + 8 * j)?;
            }
            Ok(0)
        })
        .map(drop)
    }

    /// Entry `i` (a read-only transaction).
    pub fn get<P: Ptm>(&self, ptm: &P, i: u64) -> Result<u64, DsError> {
        let root = self.root;
        read(ptm, root, KIND, move |tx| get_in(tx, root, i))
    }

    /// Checks in one read-only transaction that the array is a permutation
    /// of `0..len`; returns `len`.
    pub fn check<P: Ptm>(&self, ptm: &P) -> Result<u64, DsError> {
        let root = self.root;
        read(ptm, root, KIND, move |tx| check_in(tx, root))
    }
}

/// The offset of entry `i`, checked against the length.
fn entry<T: TxRead>(tx: &T, root: usize, i: u64) -> Result<u64, Fault> {
    let [a] = entries(tx, root, [i])?;
    Ok(a)
}

/// The array's length and data block.
fn bounds<T: TxRead>(tx: &T, root: usize) -> Result<(u64, u64), Fault> {
    let h = header(tx, root, MAGIC)?;
    Ok((ld(tx, h + LEN)?, ld(tx, h + DATA)?))
}

/// The offsets of entries `idx`, the header read once.
fn entries<T: TxRead, const K: usize>(
    tx: &T,
    root: usize,
    idx: [u64; K],
) -> Result<[u64; K], Fault> {
    let (len, data) = bounds(tx, root)?;
    if idx.iter().any(|&i| i >= len) {
        return Err(Fault::Invariant(Violation::BadPointer));
    }
    Ok(idx.map(|i| data + 8 * i))
}

/// Swaps entries `i` and `j`.
pub fn swap_in<T: Transaction>(tx: &T, root: usize, i: u64, j: u64) -> Result<(), Fault> {
    let [a, b] = entries(tx, root, [i, j])?;
    swap_at(tx, a, b)
}

/// Swaps the words at offsets `a` and `b`.
fn swap_at<T: Transaction>(tx: &T, a: u64, b: u64) -> Result<(), Fault> {
    let (x, y) = (ld(tx, a)?, ld(tx, b)?);
    st(tx, a, y)?;
    st(tx, b, x)
}

/// Entry `i`.
pub fn get_in<T: TxRead>(tx: &T, root: usize, i: u64) -> Result<u64, Fault> {
    ld(tx, entry(tx, root, i)?)
}

/// Checks that the array is a permutation of `0..len`; returns `len`.
pub fn check_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    let h = header(tx, root, MAGIC)?;
    let (len, data) = (ld(tx, h + LEN)?, ld(tx, h + DATA)?);
    if len.saturating_mul(8) > tx.region_len() {
        return Err(Fault::Invariant(Violation::BadLength));
    }
    let mut seen = vec![false; len as usize];
    for i in 0..len {
        let v = ld(tx, data + 8 * i)?;
        match seen.get_mut(v as usize) {
            Some(s) if !*s => *s = true,
            Some(_) => return Err(Fault::Invariant(Violation::Duplicate)),
            None => return Err(Fault::Invariant(Violation::BadLength)),
        }
    }
    Ok(len)
}
