//! The queue and the sorted set as *plain* sequential Rust values for
//! CX-PUC (seed §4: "intended to be used with any sequential implementation
//! of an object and requires no interposing of the data accesses, neither
//! loads nor stores").
//!
//! The other modules of [`crate::ds`] are written against the annotated
//! interface ([`crate::Ptm`]), which CX-PUC also offers, so they run on
//! CX-PUC unchanged. This module shows the other way, the one CX-PUC exists
//! for: the object is an ordinary `#[repr(C)]` struct ([`PlainQueue`],
//! [`PlainSet`]) that is the CX-PUC's object itself, its nodes are plain
//! structs in blocks of the region allocator, and the operations are
//! ordinary Rust on `&mut` references ([`PucMut::obj_mut`],
//! [`PucMut::get_mut`]) — no load or store goes through a transaction.
//! What differs from the annotated structures:
//!
//! * the structure is the PUC's one object (`CxPuc<B, PlainQueue>`), not a
//!   root slot: one structure per CX-PUC;
//! * durability comes from CX-PUC writing back the whole used part of the
//!   replica after every update, so an update costs `O(used)` flushes
//!   whatever it changes (the seed presents CX-PUC "only for small sized
//!   data structures", §6);
//! * links are region offsets, never references, so a byte copy of a
//!   replica is a valid replica.
//!
//! Results travel out of [`CxPuc::update`] in one word as in
//! [`crate::ds`] (values at most [`super::MAX_VALUE`]).

use super::{check_value, decode, decode_opt, encode, encode_opt, DsError, Fault, Violation};
use crate::cx::puc::{PucMut, PucRef};
use crate::cx::CxPuc;
use crate::error::PtmError;
use perdure_pm::Backend;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// A node of [`PlainQueue`] and [`PlainSet`]: a word and a link.
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct PlainNode {
    /// The value (queue) or key (set).
    pub word: u64,
    /// The region offset of the next node, 0 at the end.
    pub next: u64,
}

fn fault(e: PtmError) -> Fault {
    match e {
        PtmError::Pm(perdure_pm::PmError::Region(_)) => Fault::OutOfSpace,
        _ => Fault::Invariant(Violation::BadPointer),
    }
}

/// A FIFO queue as a plain value: the object of a `CxPuc<B, PlainQueue>`.
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct PlainQueue {
    /// The oldest node, 0 if empty.
    pub head: u64,
    /// The newest node, 0 if empty.
    pub tail: u64,
    /// The number of nodes.
    pub len: u64,
}

const QUEUE_KIND: &str = "plain queue";
const SET_KIND: &str = "plain set";

impl PlainQueue {
    /// Appends `value`: plain sequential code on the PUC's working copy.
    pub fn enqueue_mut(m: &mut PucMut<'_, PlainQueue>, value: u64) -> Result<(), Fault> {
        let node = m
            .alloc_value(PlainNode {
                word: value,
                next: 0,
            })
            .map_err(fault)?;
        let tail = m.obj().tail;
        if tail == 0 {
            m.obj_mut().head = node;
        } else {
            m.get_mut::<PlainNode>(tail).map_err(fault)?.next = node;
        }
        let q = m.obj_mut();
        q.tail = node;
        q.len += 1;
        Ok(())
    }

    /// Removes and returns the oldest value, and frees its node.
    pub fn dequeue_mut(m: &mut PucMut<'_, PlainQueue>) -> Result<Option<u64>, Fault> {
        let head = m.obj().head;
        if head == 0 {
            return Ok(None);
        }
        let node = *m.get::<PlainNode>(head).map_err(fault)?;
        let q = m.obj_mut();
        q.head = node.next;
        if node.next == 0 {
            q.tail = 0;
        }
        q.len = q.len.wrapping_sub(1);
        m.free(head).map_err(fault)?;
        Ok(Some(node.word))
    }

    /// Checks the queue invariant of [`super::queue`]; returns the length.
    pub fn check_ref(r: &PucRef<'_, PlainQueue>) -> Result<u64, Fault> {
        let q = *r.obj();
        if (q.head == 0) != (q.tail == 0) {
            return Err(Fault::Invariant(Violation::BadTail));
        }
        let bound = r.words().len() as u64 / 4 + 1;
        let (mut n, mut node, mut last) = (0u64, q.head, 0);
        while node != 0 {
            n += 1;
            if n > bound {
                return Err(Fault::Invariant(Violation::Cycle));
            }
            last = node;
            node = r.get::<PlainNode>(node).map_err(fault)?.next;
        }
        if last != q.tail {
            return Err(Fault::Invariant(Violation::BadTail));
        }
        if n != q.len {
            return Err(Fault::Invariant(Violation::CountMismatch));
        }
        Ok(n)
    }

    /// [`PlainQueue::enqueue_mut`] as one CX-PUC update.
    pub fn enqueue<B: Backend>(puc: &CxPuc<B, PlainQueue>, value: u64) -> Result<(), DsError> {
        check_value(value)?;
        let w = puc.update(move |m| encode(PlainQueue::enqueue_mut(m, value).map(|()| 0)))?;
        decode(w).map(drop).map_err(|f| f.at(0, QUEUE_KIND))
    }

    /// [`PlainQueue::dequeue_mut`] as one CX-PUC update.
    pub fn dequeue<B: Backend>(puc: &CxPuc<B, PlainQueue>) -> Result<Option<u64>, DsError> {
        let w = puc.update(|m| encode_opt(PlainQueue::dequeue_mut(m)))?;
        decode_opt(w).map_err(|f| f.at(0, QUEUE_KIND))
    }

    /// [`PlainQueue::check_ref`] as one CX-PUC read.
    pub fn check<B: Backend>(puc: &CxPuc<B, PlainQueue>) -> Result<u64, DsError> {
        let w = puc.read(|r| encode(PlainQueue::check_ref(r)))?;
        decode(w).map_err(|f| f.at(0, QUEUE_KIND))
    }
}

/// A sorted linked-list set as a plain value: the object of a
/// `CxPuc<B, PlainSet>`.
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct PlainSet {
    /// The node with the smallest key, 0 if empty.
    pub first: u64,
    /// The number of nodes.
    pub len: u64,
}

impl PlainSet {
    /// The node before the first node with a key `>= key` (0: the set
    /// itself) and that node (0 if none), reading nodes with `get`.
    fn find(
        first: u64,
        words: usize,
        key: u64,
        get: impl Fn(u64) -> Result<PlainNode, Fault>,
    ) -> Result<(u64, u64), Fault> {
        let bound = words as u64 / 4 + 1;
        let (mut prev, mut node) = (0, first);
        for _ in 0..bound {
            if node == 0 {
                return Ok((prev, 0));
            }
            let n = get(node)?;
            if n.word >= key {
                return Ok((prev, node));
            }
            (prev, node) = (node, n.next);
        }
        Err(Fault::Invariant(Violation::Cycle))
    }

    fn find_mut(m: &PucMut<'_, PlainSet>, key: u64) -> Result<(u64, u64), Fault> {
        PlainSet::find(m.obj().first, m.words().len(), key, |off| {
            m.get::<PlainNode>(off).copied().map_err(fault)
        })
    }

    fn link(m: &mut PucMut<'_, PlainSet>, prev: u64, to: u64) -> Result<(), Fault> {
        if prev == 0 {
            m.obj_mut().first = to;
        } else {
            m.get_mut::<PlainNode>(prev).map_err(fault)?.next = to;
        }
        Ok(())
    }

    /// Adds `key`; whether it was absent.
    pub fn insert_mut(m: &mut PucMut<'_, PlainSet>, key: u64) -> Result<bool, Fault> {
        let (prev, node) = PlainSet::find_mut(m, key)?;
        if node != 0 && m.get::<PlainNode>(node).map_err(fault)?.word == key {
            return Ok(false);
        }
        let new = m
            .alloc_value(PlainNode {
                word: key,
                next: node,
            })
            .map_err(fault)?;
        PlainSet::link(m, prev, new)?;
        m.obj_mut().len += 1;
        Ok(true)
    }

    /// Removes `key`; whether it was present.
    pub fn remove_mut(m: &mut PucMut<'_, PlainSet>, key: u64) -> Result<bool, Fault> {
        let (prev, node) = PlainSet::find_mut(m, key)?;
        if node == 0 {
            return Ok(false);
        }
        let n = *m.get::<PlainNode>(node).map_err(fault)?;
        if n.word != key {
            return Ok(false);
        }
        PlainSet::link(m, prev, n.next)?;
        let s = m.obj_mut();
        s.len = s.len.wrapping_sub(1);
        m.free(node).map_err(fault)?;
        Ok(true)
    }

    /// Whether `key` is in the set.
    pub fn contains_ref(r: &PucRef<'_, PlainSet>, key: u64) -> Result<bool, Fault> {
        let (_, node) = PlainSet::find(r.obj().first, r.words().len(), key, |off| {
            r.get::<PlainNode>(off).copied().map_err(fault)
        })?;
        Ok(node != 0 && r.get::<PlainNode>(node).map_err(fault)?.word == key)
    }

    /// Checks the invariant of [`super::list`]; returns the size.
    pub fn check_ref(r: &PucRef<'_, PlainSet>) -> Result<u64, Fault> {
        let bound = r.words().len() as u64 / 4 + 1;
        let (mut n, mut node, mut prev) = (0u64, r.obj().first, None::<u64>);
        while node != 0 {
            n += 1;
            if n > bound {
                return Err(Fault::Invariant(Violation::Cycle));
            }
            let x = r.get::<PlainNode>(node).map_err(fault)?;
            if prev.is_some_and(|p| p >= x.word) {
                return Err(Fault::Invariant(Violation::Unsorted));
            }
            prev = Some(x.word);
            node = x.next;
        }
        if n != r.obj().len {
            return Err(Fault::Invariant(Violation::CountMismatch));
        }
        Ok(n)
    }

    /// [`PlainSet::insert_mut`] as one CX-PUC update.
    pub fn insert<B: Backend>(puc: &CxPuc<B, PlainSet>, key: u64) -> Result<bool, DsError> {
        let w = puc.update(move |m| encode(PlainSet::insert_mut(m, key).map(u64::from)))?;
        decode(w).map(|b| b != 0).map_err(|f| f.at(0, SET_KIND))
    }

    /// [`PlainSet::remove_mut`] as one CX-PUC update.
    pub fn remove<B: Backend>(puc: &CxPuc<B, PlainSet>, key: u64) -> Result<bool, DsError> {
        let w = puc.update(move |m| encode(PlainSet::remove_mut(m, key).map(u64::from)))?;
        decode(w).map(|b| b != 0).map_err(|f| f.at(0, SET_KIND))
    }

    /// [`PlainSet::contains_ref`] as one CX-PUC read.
    pub fn contains<B: Backend>(puc: &CxPuc<B, PlainSet>, key: u64) -> Result<bool, DsError> {
        let w = puc.read(move |r| encode(PlainSet::contains_ref(r, key).map(u64::from)))?;
        decode(w).map(|b| b != 0).map_err(|f| f.at(0, SET_KIND))
    }

    /// [`PlainSet::check_ref`] as one CX-PUC read.
    pub fn check<B: Backend>(puc: &CxPuc<B, PlainSet>) -> Result<u64, DsError> {
        let w = puc.read(|r| encode(PlainSet::check_ref(r)))?;
        decode(w).map_err(|f| f.at(0, SET_KIND))
    }
}
