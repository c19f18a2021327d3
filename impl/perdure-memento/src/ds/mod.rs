//! The detectable structures of §5 and §7, and the baselines of §7.1.
//!
//! | module | structure | primitives |
//! | --- | --- | --- |
//! | [`treiber`] | Treiber stack | detectable CAS |
//! | [`msq`] | Michael–Scott queue: MSQ-mmt-cas, MSQ-mmt-indel, MSQ-mmt-vol | detectable CAS; insert/delete; insert/delete + DRAM tail (§5) |
//! | [`clevel`] | Clevel hash table: Clevel-mmt (§7.2) | detectable CAS; levels linked with link-and-persist; a detectable rehash |
//! | [`soft`] | SOFT hash table: SOFT-mmt (§7.2) | checkpoints; DRAM lists as a scratchpad (§5); per-bucket persistent chains |
//! | [`exchanger`] | exchanger | insert/delete |
//! | [`elim`] | elimination-backoff stack (Hendler et al.) | detectable CAS + exchangers |
//! | [`combq`] | combining queue CombQ-mmt (PBcomb) | checkpoints, a DRAM lock, a published state block |
//!
//! Every structure's operations take a [`Handle`](crate::Handle) and a
//! sub-memento, and run inside [`Handle::run_root`](crate::Handle::run_root).
//! Results of root operations are one word: [`encode_opt`] for "maybe a
//! value".

pub mod clevel;
pub mod combq;
pub mod elim;
pub mod exchanger;
pub mod msq;
pub mod soft;
#[cfg(test)]
mod testkit;
pub mod treiber;

crate::memento! {
    /// The root memento of a thread on a structure that inserts and
    /// removes (a queue's enqueue and dequeue, a stack's push and pop, a
    /// table's insert and delete): one sub-memento per operation
    /// (Requirement 1 of §2.3), the insert's first.
    pub struct RootMmt<I, R> {
        /// For the insert.
        pub insert: I,
        /// For the remove.
        pub remove: R,
    }
}

/// Bytes of a node: one cache line.
pub const NODE: u64 = 64;

/// `None` → 0, `Some(v)` → `v + 1` (values must be below `u64::MAX`).
pub fn encode_opt(v: Option<u64>) -> u64 {
    v.map_or(0, |v| v + 1)
}

/// The inverse of [`encode_opt`].
pub fn decode_opt(w: u64) -> Option<u64> {
    w.checked_sub(1)
}

pub(crate) use crate::runtime::pm_load as peek;
