//! What Redo-PTM's closures get: [`ReadTx`] (loads from one replica) and
//! [`Tx`] (loads and logged stores on the replica the running thread holds
//! exclusively).
//!
//! An update stores in place (the replica is private to the thread until its
//! `cur_comb` CAS) and appends `[offset, old, new]` to its log
//! (`WriteSetEntry`, Algorithm 1 L22–L25): the redo half (`new`) brings other
//! replicas up to date (Algorithm 3 {6}), the undo half (`old`) rolls this
//! replica back if the CAS is lost (Algorithm 3 L38). Loads read the replica
//! directly: it already holds the transaction's own stores.

use super::state::{DirtyLines, LogArena};
use super::wordset::WordSet;
use crate::error::PtmError;
use crate::replica::word;
use crate::tx::TxRead;
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{Backend, PmRange, Pool};
use std::cell::{Cell, RefCell};

/// An update transaction `$tx` on the replica of its `read` field, which
/// the running thread holds exclusively (Redo-PTM's [`Tx`] and CX-PTM's):
/// `as_ref` is that view (what a `read_tx` nested in the transaction gets);
/// loads read the replica (it already holds the transaction's own stores);
/// a store goes in place, after its writer `w` logged the old and new value
/// (`w.log`: Redo-PTM's redo/undo log, CX-PTM's undo log) and with its line
/// marked dirty (`w.dirty`) for the write-back before the `cur_comb` CAS.
macro_rules! update_tx_in_place {
    ($tx:ident) => {
        impl<'t, B: Backend> AsRef<$crate::redo::ReadTx<'t, B>> for $tx<'t, B> {
            fn as_ref(&self) -> &$crate::redo::ReadTx<'t, B> {
                &self.read
            }
        }

        impl<B: Backend> $crate::tx::TxRead for $tx<'_, B> {
            #[inline]
            fn region_len(&self) -> u64 {
                $crate::tx::TxRead::region_len(&self.read)
            }

            #[inline]
            fn try_load(&self, off: u64) -> Result<u64, $crate::error::PtmError> {
                $crate::tx::TxRead::try_load(&self.read, off)
            }
        }

        impl<B: Backend> $crate::tx::Transaction for $tx<'_, B> {
            #[inline]
            fn try_store(&self, off: u64, val: u64) -> Result<(), $crate::error::PtmError> {
                let w = self.read.word(off)?;
                let old = w.load(perdure_pm::sync::atomic::Ordering::Relaxed);
                self.w.log(off, old, val);
                w.store(val, perdure_pm::sync::atomic::Ordering::Relaxed);
                self.w.dirty.borrow_mut().add(w.offset());
                Ok(())
            }

            fn alloc(&self, size: u64) -> Result<u64, $crate::error::PtmError> {
                $crate::replica::tx_alloc(self, size)
            }

            fn free(&self, off: u64) -> Result<(), $crate::error::PtmError> {
                $crate::replica::tx_free(self, off)
            }

            fn has_room(&self, needs: &[(u64, u64)]) -> Result<bool, $crate::error::PtmError> {
                $crate::replica::tx_has_room(self, needs)
            }
        }
    };
}
pub(crate) use update_tx_in_place;

/// Read access to one replica: what a `read_tx` closure gets.
pub struct ReadTx<'t, B: Backend> {
    /// The replica's words (its pool offset and length), bounds checked
    /// once.
    words: PmRange<'t, B>,
}

impl<'t, B: Backend> ReadTx<'t, B> {
    /// The replica of `len` bytes at pool offset `base`.
    pub(crate) fn new(pool: &'t Pool<B>, base: u64, len: u64) -> ReadTx<'t, B> {
        match pool.range(base, len) {
            Ok(words) => ReadTx { words },
            // Replicas are checked against the pool when the PTM is opened.
            Err(e) => unreachable!("replica outside the pool: {e}"),
        }
    }

    /// The pool.
    #[inline]
    pub(crate) fn pool(&self) -> &'t Pool<B> {
        self.words.pool()
    }

    /// Pool offset of the replica.
    #[inline]
    pub(crate) fn base(&self) -> u64 {
        self.words.base()
    }

    /// The replica word at region offset `off`.
    #[inline]
    // Lazily: `ok_or` builds and drops a `PtmError` (which owns heap data
    // in other variants, so the drop is a call) on every access, measured
    // at 15 instructions per store (docs/bench/ptm-paths.md).
    #[allow(clippy::unnecessary_lazy_evaluations)]
    pub(crate) fn word(&self, off: u64) -> Result<perdure_pm::PmWord<'t, B>, PtmError> {
        self.words.word(off).ok_or_else(|| PtmError::BadOffset {
            offset: off,
            len: self.words.len(),
        })
    }
}

impl<B: Backend> TxRead for ReadTx<'_, B> {
    #[inline]
    fn region_len(&self) -> u64 {
        self.words.len()
    }

    #[inline]
    fn try_load(&self, off: u64) -> Result<u64, PtmError> {
        Ok(self.word(off)?.load(Ordering::Relaxed))
    }
}

/// The log and dirty lines of one simulation (Algorithm 3 {7}): shared by
/// the closures the thread runs in one batch.
pub(crate) struct Writer<'a> {
    pub arena: &'a LogArena,
    /// Absolute arena position of the first entry.
    pub start: u64,
    pub len: Cell<u64>,
    pub overflow: Cell<bool>,
    pub dirty: &'a RefCell<DirtyLines>,
    /// RedoOpt's store aggregation: the thread's store set, mapping each
    /// region offset stored in this batch to its entry (relative position).
    merge: Option<&'a RefCell<WordSet>>,
    /// The first entry of the closure running now (its stores alone are
    /// undone if it panics).
    mark: Cell<u64>,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(
        arena: &'a LogArena,
        dirty: &'a RefCell<DirtyLines>,
        merge: Option<&'a RefCell<WordSet>>,
    ) -> Writer<'a> {
        if let Some(m) = merge {
            m.borrow_mut().clear();
        }
        Writer {
            arena,
            start: arena.position(),
            len: Cell::new(0),
            overflow: Cell::new(false),
            dirty,
            merge,
            mark: Cell::new(0),
        }
    }

    /// A closure starts: returns the mark to undo to if it panics.
    pub(crate) fn begin_closure(&self) -> u64 {
        let n = self.len.get();
        self.mark.set(n);
        if let Some(m) = &self.merge {
            m.borrow_mut().saves.clear();
        }
        n
    }

    /// The length to publish in `State::log_len`.
    pub(crate) fn published_len(&self) -> u64 {
        if self.overflow.get() {
            super::state::LOG_OVERFLOW
        } else {
            self.len.get()
        }
    }

    fn log(&self, off: u64, old: u64, new: u64) {
        if self.overflow.get() {
            return;
        }
        let n = self.len.get();
        if let Some(m) = &self.merge {
            let mut m = m.borrow_mut();
            let found = m.find(off);
            if let Some(Ok(slot)) = found {
                let pos = m.val_at(slot);
                // The entry may be stale (undone by a panicking closure):
                // it counts only if it is still in the log, for `off`.
                if pos < n && self.arena.read(self.start + pos)[0] == off {
                    if pos < self.mark.get() {
                        let prev = self.arena.read(self.start + pos)[2];
                        m.saves.push((pos, prev));
                    }
                    self.arena.set_new(self.start + pos, new);
                    return;
                }
            }
            if n < self.arena.cap() {
                // A full set only stops merging.
                let _ = m.insert_found(found, off, n);
            }
        }
        if n == self.arena.cap() {
            self.overflow.set(true);
            return;
        }
        self.arena.write(self.start + n, [off, old, new]);
        self.len.set(n + 1);
    }

    /// Rolls the replica at pool offset `base` back to the log's entry
    /// `mark` (Algorithm 3 L38 `applyUndolog` when `mark` is 0). Returns
    /// false, changing nothing, if the log overflowed.
    pub(crate) fn undo_to<B: Backend>(&self, pool: &Pool<B>, base: u64, mark: u64) -> bool {
        if self.overflow.get() {
            return false;
        }
        let mut dirty = self.dirty.borrow_mut();
        for i in (mark..self.len.get()).rev() {
            let [off, old, _] = self.arena.read(self.start + i);
            word(pool, base + off).store(old, Ordering::Relaxed);
            dirty.add(base + off);
        }
        if let Some(m) = &self.merge {
            let mut m = m.borrow_mut();
            // Entries of earlier closures that the panicking one rewrote
            // (a rollback to 0 restores their old values above instead).
            let saves = std::mem::take(&mut m.saves);
            if mark > 0 && mark == self.mark.get() {
                for &(pos, prev) in saves.iter().rev() {
                    let off = self.arena.read(self.start + pos)[0];
                    self.arena.set_new(self.start + pos, prev);
                    word(pool, base + off).store(prev, Ordering::Relaxed);
                    dirty.add(base + off);
                }
            }
            m.saves = saves;
            m.saves.clear();
        }
        self.len.set(mark);
        true
    }
}

/// An update transaction on the replica the running thread holds: what an
/// `update_tx` closure gets. Not `Send` or `Sync`: it belongs to the one
/// call running the closure.
pub struct Tx<'t, B: Backend> {
    pub(crate) read: ReadTx<'t, B>,
    pub(crate) w: &'t Writer<'t>,
}

update_tx_in_place!(Tx);
