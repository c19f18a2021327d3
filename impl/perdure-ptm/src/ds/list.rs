//! The ordered linked-list set of the seed's §6 set benchmarks ("an
//! ordered linked list set of 10^4 keys", Figure 6 top): a singly linked
//! list of `u64` keys in increasing order, sequential code run inside a
//! transaction. Every operation walks from the first node, so an update's
//! transaction loads O(n) words and stores O(1) — the workload that
//! motivated Redo-PTM's physical log over CX's re-execution (§3).
//!
//! Layout (region words): header `[MAGIC, first, len]`; node `[key, next]`
//! (a 16-byte payload: the allocator's 32-byte class). A removed node is
//! freed in the transaction that unlinks it.
//!
//! Invariant ([`check_in`]): keys strictly increase along `next`, the walk
//! ends (0) within the region's block count, and `len` is the number of
//! nodes.

use super::{
    alloc, create_header, create_root, destroy_chain, free, header, ld, open_root, read, st,
    step_bound, update, DsError, Fault, Violation,
};
use crate::tx::{Ptm, Transaction, TxRead};

/// The list set's header magic.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDLIST01");
const KIND: &str = "linked-list set";
const FIRST: u64 = 8;
const LEN: u64 = 16;
const NEXT: u64 = 8;

/// A sorted linked-list set in a root slot. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListSet {
    root: usize,
}

set_handle!(ListSet);

/// Creates an empty set in root slot `root` if the slot is 0; returns the
/// header's offset.
pub fn create_in<T: Transaction>(tx: &T, root: usize) -> Result<u64, Fault> {
    create_header(tx, root, MAGIC, 3)
}

/// The word holding the link to the first node with a key `>= key`, and
/// that node (0 if none).
fn find<T: TxRead>(tx: &T, h: u64, key: u64) -> Result<(u64, u64), Fault> {
    let bound = step_bound(tx);
    let mut link = h + FIRST;
    let mut node = ld(tx, link)?;
    for _ in 0..bound {
        if node == 0 || ld(tx, node)? >= key {
            return Ok((link, node));
        }
        link = node + NEXT;
        node = ld(tx, link)?;
    }
    Err(Fault::Invariant(Violation::Cycle))
}

/// Adds `key`; whether it was absent.
pub fn insert_in<T: Transaction>(tx: &T, root: usize, key: u64) -> Result<bool, Fault> {
    let h = header(tx, root, MAGIC)?;
    let (link, node) = find(tx, h, key)?;
    if node != 0 && ld(tx, node)? == key {
        return Ok(false);
    }
    let new = alloc(tx, 16)?;
    st(tx, new, key)?;
    st(tx, new + NEXT, node)?;
    st(tx, link, new)?;
    st(tx, h + LEN, ld(tx, h + LEN)? + 1)?;
    Ok(true)
}

/// Removes `key`; whether it was present.
pub fn remove_in<T: Transaction>(tx: &T, root: usize, key: u64) -> Result<bool, Fault> {
    let h = header(tx, root, MAGIC)?;
    let (link, node) = find(tx, h, key)?;
    if node == 0 || ld(tx, node)? != key {
        return Ok(false);
    }
    st(tx, link, ld(tx, node + NEXT)?)?;
    st(tx, h + LEN, ld(tx, h + LEN)?.wrapping_sub(1))?;
    free(tx, node)?;
    Ok(true)
}

/// Whether `key` is in the set.
pub fn contains_in<T: TxRead>(tx: &T, root: usize, key: u64) -> Result<bool, Fault> {
    let h = header(tx, root, MAGIC)?;
    let (_, node) = find(tx, h, key)?;
    Ok(node != 0 && ld(tx, node)? == key)
}

/// Checks the invariant of the module docs; returns the size.
pub fn check_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    let h = header(tx, root, MAGIC)?;
    let bound = step_bound(tx);
    let (mut n, mut node, mut prev) = (0u64, ld(tx, h + FIRST)?, None::<u64>);
    while node != 0 {
        n += 1;
        if n > bound {
            return Err(Fault::Invariant(Violation::Cycle));
        }
        let key = ld(tx, node)?;
        if prev.is_some_and(|p| p >= key) {
            return Err(Fault::Invariant(Violation::Unsorted));
        }
        prev = Some(key);
        node = ld(tx, node + NEXT)?;
    }
    if n != ld(tx, h + LEN)? {
        return Err(Fault::Invariant(Violation::CountMismatch));
    }
    Ok(n)
}

/// Frees every node and the header; clears the root slot.
pub fn destroy_in<T: Transaction>(tx: &T, root: usize) -> Result<(), Fault> {
    check_in(tx, root)?;
    destroy_chain(tx, root, MAGIC, FIRST, NEXT)
}
