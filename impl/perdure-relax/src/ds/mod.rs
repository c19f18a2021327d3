//! Lock-free structures on a RELAX space (the thesis's evaluation,
//! Chapter 8, runs a linked list, a hash table, a skip list, a BST and an
//! array; this crate has the list, the hash table and the array so far).
//!
//! Each structure is written once against [`crate::PAtomic`] and
//! [`crate::PPtr`] and runs under every [`crate::Tracking`] variant the
//! variant's assumptions allow: both are recursive, and every list node has
//! one incoming pointer except transiently while a deleted node is being
//! unlinked, so all six variants apply (§6.4.2 accepts the linked list for
//! `MarkableAtomicPointer`; a node re-reached through a deleted predecessor is
//! recovered again, which costs time, not correctness). The array has no
//! pointers, so only the field-tracking variants and eager recovery apply.

pub mod array;
pub mod hash;
pub mod list;

pub use array::PArray;
pub use hash::HashTable;
pub use list::{HarrisList, ListNode};
