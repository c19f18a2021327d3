//! The layout of one replica of the transactional region, and the region
//! allocator inside it.
//!
//! | region offset | content |
//! | --- | --- |
//! | `0 .. 512` | [`crate::tx::ROOTS`] root slots |
//! | `512 ..` | a [`perdure_pm::region`] allocator: its metadata, then the blocks |
//!
//! Everything a transaction can reach — roots, allocator metadata, user
//! objects — is inside the region and addressed by region offset, so a
//! replica copied byte for byte, or brought up to date by replaying another
//! replica's physical log, carries a consistent allocator with it. This is
//! what the seed means by a sequential allocator "within the appropriate
//! NVMM region" (§4): an allocation is a few loads and stores of the
//! transaction like any other, so it is wait-free and crash-atomic with the
//! transaction (§5, "wait-free allocation and deallocation").
//!
//! Only the *used* prefix of a replica, `ALLOC_BASE + bump`, can hold
//! anything a transaction wrote (a store outside it is a store to memory
//! that was never allocated); copies and whole-replica flushes cover that
//! prefix.

use crate::error::PtmError;
use crate::tx::{Transaction, ROOTS};
use perdure_pm::region::{RegionAlloc, RegionError, RegionMemory, BLOCKS_START, MIN_SHIFT};
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{Backend, Pool};

/// Where the allocator's part of the region starts.
pub const ALLOC_BASE: u64 = 8 * ROOTS as u64;
/// Smallest replica: the roots, the allocator's metadata and room for blocks.
pub const MIN_REPLICA: u64 = 4096;
const _: () = assert!(MIN_REPLICA >= ALLOC_BASE + BLOCKS_START + (1 << MIN_SHIFT));
/// Offset of the allocator's bump pointer in its metadata (see
/// [`perdure_pm::region`]'s layout table).
const ALLOC_BUMP: u64 = 16;

/// A replica read and written directly (not through a transaction): for
/// formatting, validating and measuring replicas.
pub(crate) struct DirectView<'a, B: Backend> {
    pub pool: &'a Pool<B>,
    /// Pool offset of the replica's region offset `ALLOC_BASE`.
    pub base: u64,
    /// Bytes from there to the replica's end.
    pub len: u64,
}

impl<B: Backend> RegionMemory for DirectView<'_, B> {
    fn byte_len(&self) -> u64 {
        self.len
    }
    fn load(&self, off: u64) -> u64 {
        word(self.pool, self.base + off).load(Ordering::Acquire)
    }
    fn store(&mut self, off: u64, val: u64) {
        word(self.pool, self.base + off).store(val, Ordering::Release)
    }
}

/// The pool word at `off`, which the caller has validated against the
/// geometry checked when the PTM was opened.
#[inline]
pub(crate) fn word<B: Backend>(pool: &Pool<B>, off: u64) -> perdure_pm::PmWord<'_, B> {
    match pool.word(off) {
        Ok(w) => w,
        // Replica offsets are checked against the region before they get
        // here and the region against the pool when the PTM is opened.
        Err(e) => unreachable!("replica word outside the pool: {e}"),
    }
}

/// Formats the replica at pool offset `replica` (`len` bytes): zero roots
/// and an empty allocator. Not flushed.
pub(crate) fn format<B: Backend>(pool: &Pool<B>, replica: u64, len: u64) -> Result<(), PtmError> {
    for i in 0..ROOTS as u64 {
        word(pool, replica + 8 * i).store(0, Ordering::Release);
    }
    let mut view = DirectView {
        pool,
        base: replica + ALLOC_BASE,
        len: len - ALLOC_BASE,
    };
    RegionAlloc::format(&mut view)?;
    Ok(())
}

/// The used prefix of the replica at pool offset `replica` (`len` bytes):
/// `ALLOC_BASE` plus the allocator's bump pointer, after checking the
/// allocator's metadata.
pub(crate) fn used_len<B: Backend>(
    pool: &Pool<B>,
    replica: u64,
    len: u64,
) -> Result<u64, RegionError> {
    let mut view = DirectView {
        pool,
        base: replica + ALLOC_BASE,
        len: len - ALLOC_BASE,
    };
    RegionAlloc::attach(&mut view)?;
    Ok(ALLOC_BASE + view.load(ALLOC_BUMP))
}

/// The allocator seen through a transaction: every load and store of its
/// metadata is a transactional one (logged, replayed, flushed like the
/// user's).
struct TxAllocView<'a, T: Transaction> {
    tx: &'a T,
}

impl<T: Transaction> RegionMemory for TxAllocView<'_, T> {
    fn byte_len(&self) -> u64 {
        self.tx.region_len() - ALLOC_BASE
    }
    fn load(&self, off: u64) -> u64 {
        self.tx.load(ALLOC_BASE + off)
    }
    fn store(&mut self, off: u64, val: u64) {
        self.tx.store(ALLOC_BASE + off, val)
    }
}

/// `alloc` through a transaction; returns a region offset.
pub(crate) fn tx_alloc<T: Transaction>(tx: &T, size: u64) -> Result<u64, PtmError> {
    let mut view = TxAllocView { tx };
    let off = RegionAlloc::attach(&mut view)?.alloc(size)?;
    Ok(ALLOC_BASE + off)
}

/// `has_room` through a transaction (loads only).
pub(crate) fn tx_has_room<T: Transaction>(tx: &T, needs: &[(u64, u64)]) -> Result<bool, PtmError> {
    let mut view = TxAllocView { tx };
    Ok(RegionAlloc::attach(&mut view)?.has_room(needs))
}

/// `free` through a transaction, of a region offset `alloc` returned.
pub(crate) fn tx_free<T: Transaction>(tx: &T, off: u64) -> Result<(), PtmError> {
    let Some(inner) = off.checked_sub(ALLOC_BASE) else {
        return Err(RegionError::InvalidFree {
            offset: off,
            reason: "not the offset of a block (it lies in the root table)",
        }
        .into());
    };
    let mut view = TxAllocView { tx };
    RegionAlloc::attach(&mut view)?.free(inner)?;
    Ok(())
}
