//! Lock-free structures on a RELAX space: the five of the thesis's
//! evaluation (Chapter 8) — a linked list, a hash table, a skip list, a BST
//! and an array.
//!
//! Each structure is written once against [`crate::PAtomic`] and
//! [`crate::PAtomicPtr`] and runs under every [`crate::Tracking`] variant the
//! variant's assumptions allow. The list and the hash table are recursive, and every list node has
//! one incoming pointer except transiently while a deleted node is being
//! unlinked, so all six variants apply (§6.4.2 accepts the linked list for
//! `MarkableAtomicPointer`; a node re-reached through a deleted predecessor is
//! recovered again, which costs time, not correctness). The array has no
//! pointers, so only the field-tracking variants and eager recovery apply.
//! The skip list has one incoming pointer per level a node is linked at, so
//! `MarkableAtomicPointer` does not apply (§6.4.3; [`SkipList::open`] refuses
//! it) and the other five do. The BST (Natarajan–Mittal, the seed's \[45\])
//! has one incoming pointer per node except transiently, like the list, so
//! all six apply.
//!
//! | structure | Eager | Bitset | Markable | Hybrid | ZMarkable | PseudoBitset |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | [`HarrisList`], [`HashTable`] | yes | yes | yes | yes | yes | yes |
//! | [`SkipList`] | yes | yes | no (`Config` error) | yes | yes | yes |
//! | [`Bst`] | yes | yes | yes | yes | yes | yes |
//! | [`PArray`] | yes | yes | no (`Config` error) | no (`Config` error) | no (`Config` error) | yes |

#[macro_use]
mod common;

pub mod array;
pub mod bst;
pub mod hash;
pub mod list;
pub mod skiplist;

pub use array::PArray;
pub use bst::{Bst, BstNode};
pub use hash::HashTable;
pub use list::{HarrisList, ListNode};
pub use skiplist::{SkipList, SkipNode};
