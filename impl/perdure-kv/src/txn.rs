//! Transactions over the store: [`Txn`] (any mix of reads and writes, all
//! or nothing) and [`Snapshot`] (reads of one consistent state).
//!
//! A [`crate::Store::transaction`] closure runs inside one update transaction
//! of the PTM, so it is serializable with every other operation of the
//! store and durable when the call returns. Its writes are buffered in the
//! [`Txn`] (its own reads see them) and applied when the closure returns
//! `Ok`: every new block is allocated first, so a region without room
//! leaves the store unchanged; when it returns `Err`, nothing is applied.
//! The PTM may run the closure more than once (Redo's combiner, CX's
//! helpers), on another thread: it must compute its writes and result
//! from the store's state and its captures alone.
//!
//! The closures are written once for every construction: a transaction is
//! seen through the object-safe [`RawRead`]/[`RawTx`] traits, and
//! [`DynRead`]/[`DynTx`] make those a [`TxRead`]/[`Transaction`] again for
//! the map's code.

use crate::error::KvError;
use crate::map::{self, Entry, Fault, Header, Key, Op, Range};
use perdure_ptm::{PtmError, Transaction, TxRead};
use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};

/// The loads of a transaction, object-safe.
pub(crate) trait RawRead {
    fn raw_region_len(&self) -> u64;
    fn raw_load(&self, off: u64) -> Result<u64, PtmError>;
}

/// The stores and allocation of an update transaction, object-safe.
pub(crate) trait RawTx: RawRead {
    fn raw_store(&self, off: u64, val: u64) -> Result<(), PtmError>;
    fn raw_alloc(&self, size: u64) -> Result<u64, PtmError>;
    fn raw_free(&self, off: u64) -> Result<(), PtmError>;
    fn raw_has_room(&self, needs: &[(u64, u64)]) -> Result<bool, PtmError>;
}

impl<T: TxRead> RawRead for T {
    fn raw_region_len(&self) -> u64 {
        self.region_len()
    }
    fn raw_load(&self, off: u64) -> Result<u64, PtmError> {
        self.try_load(off)
    }
}

impl<T: Transaction> RawTx for T {
    fn raw_store(&self, off: u64, val: u64) -> Result<(), PtmError> {
        self.try_store(off, val)
    }
    fn raw_alloc(&self, size: u64) -> Result<u64, PtmError> {
        self.alloc(size)
    }
    fn raw_free(&self, off: u64) -> Result<(), PtmError> {
        self.free(off)
    }
    fn raw_has_room(&self, needs: &[(u64, u64)]) -> Result<bool, PtmError> {
        self.has_room(needs)
    }
}

/// A read-only transaction of any construction.
#[derive(Clone, Copy)]
pub(crate) struct DynRead<'a>(pub(crate) &'a dyn RawRead);

impl TxRead for DynRead<'_> {
    fn region_len(&self) -> u64 {
        self.0.raw_region_len()
    }
    fn try_load(&self, off: u64) -> Result<u64, PtmError> {
        self.0.raw_load(off)
    }
}

/// An update transaction of any construction.
#[derive(Clone, Copy)]
pub(crate) struct DynTx<'a>(pub(crate) &'a dyn RawTx);

impl TxRead for DynTx<'_> {
    fn region_len(&self) -> u64 {
        self.0.raw_region_len()
    }
    fn try_load(&self, off: u64) -> Result<u64, PtmError> {
        self.0.raw_load(off)
    }
}

impl Transaction for DynTx<'_> {
    fn try_store(&self, off: u64, val: u64) -> Result<(), PtmError> {
        self.0.raw_store(off, val)
    }
    fn alloc(&self, size: u64) -> Result<u64, PtmError> {
        self.0.raw_alloc(size)
    }
    fn free(&self, off: u64) -> Result<(), PtmError> {
        self.0.raw_free(off)
    }
    fn has_room(&self, needs: &[(u64, u64)]) -> Result<bool, PtmError> {
        self.0.raw_has_room(needs)
    }
}

/// The packed range of `range`.
pub(crate) fn packed<K: AsRef<[u8]>>(range: &impl RangeBounds<K>) -> Range {
    fn b<K: AsRef<[u8]>>(x: Bound<&K>) -> Bound<&[u8]> {
        x.map(|k| k.as_ref())
    }
    Range::new(b(range.start_bound()), b(range.end_bound()))
}

/// Reads of one consistent state of the store: what a
/// [`crate::Store::snapshot`] closure gets.
pub struct Snapshot<'a> {
    tx: DynRead<'a>,
    hd: Header,
    root: usize,
}

impl<'a> Snapshot<'a> {
    pub(crate) fn new(tx: DynRead<'a>, hd: Header, root: usize) -> Snapshot<'a> {
        Snapshot { tx, hd, root }
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        let k = map::key(key)?;
        map::get_in(&self.tx, self.hd, &k).map_err(|f| map::error(f, self.root, 0))
    }

    /// The entries whose keys are in `range`, in key order, at most `limit`.
    pub fn scan<K: AsRef<[u8]>>(
        &self,
        range: impl RangeBounds<K>,
        limit: usize,
    ) -> Result<Vec<Entry>, KvError> {
        map::scan_in(&self.tx, self.hd, &packed(&range), limit)
            .map_err(|f| map::error(f, self.root, 0))
    }

    /// The entries whose keys start with `prefix`, in key order, at most
    /// `limit`.
    pub fn scan_prefix(&self, prefix: &[u8], limit: usize) -> Result<Vec<Entry>, KvError> {
        map::scan_in(&self.tx, self.hd, &Range::prefix(prefix), limit)
            .map_err(|f| map::error(f, self.root, 0))
    }

    /// The number of entries, counted by a walk of the ordered index's
    /// leaves (a block per ~28 entries: no count is kept, `src/map.rs`).
    pub fn len(&self) -> Result<u64, KvError> {
        map::len_in(&self.tx, self.root).map_err(|f| map::error(f, self.root, 0))
    }

    /// Whether the store has no entry.
    pub fn is_empty(&self) -> Result<bool, KvError> {
        Ok(self.len()? == 0)
    }
}

/// A transaction's view of the store: what a [`crate::Store::transaction`]
/// closure gets. Reads see the transaction's own writes; writes are
/// applied together when the closure returns `Ok`.
pub struct Txn<'a> {
    tx: DynTx<'a>,
    hd: Header,
    root: usize,
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

impl<'a> Txn<'a> {
    pub(crate) fn new(tx: DynTx<'a>, hd: Header, root: usize) -> Txn<'a> {
        Txn {
            tx,
            hd,
            root,
            writes: BTreeMap::new(),
        }
    }

    fn err(&self, f: Fault) -> KvError {
        map::error(f, self.root, 0)
    }

    /// The value of `key`, if present (this transaction's writes
    /// included).
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        if let Some(w) = self.writes.get(key) {
            return Ok(w.clone());
        }
        let k = map::key(key)?;
        map::get_in(&self.tx, self.hd, &k).map_err(|f| self.err(f))
    }

    /// Sets `key` to `value` (the limits of [`crate::Store::put`] apply).
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), KvError> {
        map::key(key)?;
        map::check_value(value)?;
        self.writes.insert(key.to_vec(), Some(value.to_vec()));
        Ok(())
    }

    /// Removes `key`.
    pub fn delete(&mut self, key: &[u8]) -> Result<(), KvError> {
        map::key(key)?;
        self.writes.insert(key.to_vec(), None);
        Ok(())
    }

    /// The entries whose keys are in `range`, in key order, at most
    /// `limit` (this transaction's writes included).
    pub fn scan<K: AsRef<[u8]>>(
        &self,
        range: impl RangeBounds<K>,
        limit: usize,
    ) -> Result<Vec<Entry>, KvError> {
        self.merged(&packed(&range), limit)
    }

    /// The entries whose keys start with `prefix`, in key order, at most
    /// `limit` (this transaction's writes included).
    pub fn scan_prefix(&self, prefix: &[u8], limit: usize) -> Result<Vec<Entry>, KvError> {
        self.merged(&Range::prefix(prefix), limit)
    }

    /// The store's entries of `range` with the buffered writes laid over
    /// them.
    fn merged(&self, range: &Range, limit: usize) -> Result<Vec<Entry>, KvError> {
        let mine: Vec<(&Vec<u8>, &Option<Vec<u8>>)> =
            self.writes.iter().filter(|(k, _)| range.holds(k)).collect();
        // Enough of the store's entries that the deletes cannot leave
        // fewer than `limit`.
        let want = limit.saturating_add(mine.len());
        let stored = map::scan_in(&self.tx, self.hd, range, want).map_err(|f| self.err(f))?;
        let mut all: BTreeMap<Vec<u8>, Vec<u8>> = stored.into_iter().collect();
        for (k, w) in mine {
            match w {
                Some(v) => all.insert(k.clone(), v.clone()),
                None => all.remove(k),
            };
        }
        Ok(all.into_iter().take(limit).collect())
    }

    /// Applies the buffered writes: blocks first (all given back if one
    /// does not fit), then the puts and deletes. The bytes the new entries
    /// need on [`Fault::Full`].
    pub(crate) fn apply(self) -> Result<(), (Fault, u64)> {
        let ops: Vec<Op> = self
            .writes
            .into_iter()
            .map(|(k, w)| (Key::pack(&k), w.map(|v| (map::pack(&v), v.len() as u64))))
            .collect();
        let puts = ops
            .iter()
            .filter_map(|(k, w)| w.as_ref().map(|(v, _)| (k, v.len())));
        let needed = puts.clone().map(|(k, v)| map::node_size(k, v)).sum();
        map::write_in(&self.tx, self.root, &ops)
            .map(drop)
            .map_err(|f| (f, needed))
    }
}
