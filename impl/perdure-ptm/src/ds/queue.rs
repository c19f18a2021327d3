//! The queue of the seed's §6 queue benchmark ("persistent linked-list
//! based queue", each enqueue and each dequeue one transaction): a singly
//! linked FIFO of `u64` values, sequential code run inside a transaction.
//!
//! Layout (region words): header `[MAGIC, head, tail, len]`; node
//! `[value, next]` (a 16-byte payload: the allocator's 32-byte class).
//! An enqueue allocates a node and links it after `tail`; a dequeue unlinks
//! `head` and frees it in the same transaction.
//!
//! Invariant ([`check_in`]): following `next` from `head` reaches 0 after
//! exactly `len` nodes, the last of which is `tail`; `head == 0` iff
//! `tail == 0` iff `len == 0`.

use super::{
    alloc, check_value, create_header, create_root, destroy_chain, free, header, ld, open_root,
    read, st, step_bound, update, DsError, Fault, Violation,
};
use crate::tx::{Ptm, Transaction, TxRead};

/// The queue's header magic.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDQUEUE1");
const KIND: &str = "queue";
// The header and node words of the module docs' layout, in order.
perdure_pm::word_offsets!(_, HEAD, TAIL, LEN);
perdure_pm::word_offsets!(_, NEXT);
// The layout is persistent: pools written before stay readable.
const _: () = assert!(HEAD == 8 && TAIL == 16 && LEN == 24 && NEXT == 8);

/// A queue in a root slot. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queue {
    root: usize,
}

impl Queue {
    /// The queue in root slot `root`, created empty if the slot is 0.
    pub fn create<P: Ptm>(ptm: &P, root: usize) -> Result<Queue, DsError> {
        create_root(ptm, root, KIND, move |tx| create_in(tx, root))?;
        Ok(Queue { root })
    }

    /// Appends `value` (at most [`super::MAX_VALUE`]).
    pub fn enqueue<P: Ptm>(&self, ptm: &P, value: u64) -> Result<(), DsError> {
        check_value(value)?;
        let root = self.root;
        update(ptm, root, KIND, move |tx| {
            enqueue_in(tx, root, value).map(|()| 0)
        })
        .map(drop)
    }

    /// Removes and returns the oldest value, `None` if the queue is empty.
    pub fn dequeue<P: Ptm>(&self, ptm: &P) -> Result<Option<u64>, DsError> {
        let root = self.root;
        update(ptm, root, KIND, move |tx| dequeue_in(tx, root))
    }

    /// The number of values (the stored count).
    pub fn len<P: Ptm>(&self, ptm: &P) -> Result<u64, DsError> {
        let root = self.root;
        read(ptm, root, KIND, move |tx| len_in(tx, root))
    }

    /// Whether the queue is empty.
    pub fn is_empty<P: Ptm>(&self, ptm: &P) -> Result<bool, DsError> {
        Ok(self.len(ptm)? == 0)
    }
}

handle_basics!(Queue, KIND, MAGIC, check_in, destroy_in);

/// Creates an empty queue in root slot `root` if the slot is 0; returns
/// the header's offset.
pub fn create_in<T: Transaction>(tx: &T, root: usize) -> Result<u64, Fault> {
    create_header(tx, root, MAGIC, 4)
}

/// Appends `value`.
pub fn enqueue_in<T: Transaction>(tx: &T, root: usize, value: u64) -> Result<(), Fault> {
    let h = header(tx, root, MAGIC)?;
    let node = alloc(tx, 16)?;
    st(tx, node, value)?;
    st(tx, node + NEXT, 0)?;
    let tail = ld(tx, h + TAIL)?;
    if tail == 0 {
        st(tx, h + HEAD, node)?;
    } else {
        st(tx, tail + NEXT, node)?;
    }
    st(tx, h + TAIL, node)?;
    st(tx, h + LEN, ld(tx, h + LEN)? + 1)
}

/// Removes and returns the oldest value.
pub fn dequeue_in<T: Transaction>(tx: &T, root: usize) -> Result<Option<u64>, Fault> {
    let h = header(tx, root, MAGIC)?;
    let node = ld(tx, h + HEAD)?;
    if node == 0 {
        return Ok(None);
    }
    let value = ld(tx, node)?;
    let next = ld(tx, node + NEXT)?;
    st(tx, h + HEAD, next)?;
    if next == 0 {
        st(tx, h + TAIL, 0)?;
    }
    st(tx, h + LEN, ld(tx, h + LEN)?.wrapping_sub(1))?;
    free(tx, node)?;
    Ok(Some(value))
}

/// The stored count.
pub fn len_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    let h = header(tx, root, MAGIC)?;
    ld(tx, h + LEN)
}

/// Checks the invariant of the module docs; returns the length.
pub fn check_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    let h = header(tx, root, MAGIC)?;
    let (head, tail, len) = (ld(tx, h + HEAD)?, ld(tx, h + TAIL)?, ld(tx, h + LEN)?);
    if (head == 0) != (tail == 0) {
        return Err(Fault::Invariant(Violation::BadTail));
    }
    let bound = step_bound(tx);
    let (mut n, mut node, mut last) = (0u64, head, 0u64);
    while node != 0 {
        n += 1;
        if n > bound {
            return Err(Fault::Invariant(Violation::Cycle));
        }
        ld(tx, node)?;
        last = node;
        node = ld(tx, node + NEXT)?;
    }
    if last != tail {
        return Err(Fault::Invariant(Violation::BadTail));
    }
    if n != len {
        return Err(Fault::Invariant(Violation::CountMismatch));
    }
    Ok(n)
}

/// Frees every node and the header; clears the root slot.
pub fn destroy_in<T: Transaction>(tx: &T, root: usize) -> Result<(), Fault> {
    check_in(tx, root)?;
    destroy_chain(tx, root, MAGIC, HEAD, NEXT)
}
