//! A hash table of Harris lists (the thesis's hash-table benchmark): a fixed
//! bucket array, each bucket a pointer to the sentinel of a
//! [`Harris list`](super::list). Operations hash the key, load the bucket's
//! pointer (recovering the sentinel on first touch under the markable
//! variants) and run the list operation there; they linearise where the
//! list operation does.
//!
//! The bucket array is one node: field 0 holds the bucket count (written
//! once, before the root is set), fields 1..=n the bucket pointers (also
//! never changed: each points at its sentinel for the table's life).

use super::list::{contains_at, insert_at, keys_at, remove_at, ListNode};
use crate::error::RelaxError;
use crate::node::{FieldKind, Node};
use crate::patomic::PAtomicPtr;
use crate::space::{Handle, Space};
use perdure_pm::Backend;

/// Most buckets (the array is one heap block of at most 64 KiB).
pub const MAX_BUCKETS: usize = crate::node::MAX_COUNTED;

/// The bucket array node: `[n, bucket 0, …, bucket n−1]`.
#[derive(Debug)]
pub struct Buckets;

impl Node for Buckets {
    type Child = ListNode;

    fn field_count<B: Backend>(space: &Space<'_, B>, node: u64) -> Result<usize, RelaxError> {
        crate::node::counted_field_count(space, node, "bucket array")
    }

    fn field_kind(i: usize) -> FieldKind {
        FieldKind::values_then_pointers(i, 1)
    }
}

/// A list operation on the list at a sentinel.
type ListOp<B> =
    for<'a, 's, 'p> fn(&'a mut Handle<'s, 'p, B>, u64, u64) -> Result<bool, RelaxError>;

fn hash(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A hash table of Harris lists, as a set of `u64` keys.
#[derive(Clone, Copy, Debug)]
pub struct HashTable {
    buckets: u64,
    n: u64,
}

impl HashTable {
    /// Creates a table with `n` buckets (1..=[`MAX_BUCKETS`]) at root `root`.
    pub fn create<B: Backend>(
        h: &mut Handle<'_, '_, B>,
        root: usize,
        n: usize,
    ) -> Result<Self, RelaxError> {
        if n == 0 || n > MAX_BUCKETS {
            return Err(RelaxError::Config(format!(
                "a hash table needs 1..={MAX_BUCKETS} buckets, not {n}"
            )));
        }
        let mut init = vec![n as u64];
        for _ in 0..n {
            init.push(h.alloc_node::<ListNode>(&[0, 0])?);
        }
        let buckets = h.alloc_node::<Buckets>(&init)?;
        h.space().set_root(root, buckets)?;
        Ok(HashTable {
            buckets,
            n: n as u64,
        })
    }

    /// Opens the table at root `root` after a crash, recovering the bucket
    /// array (lazy) or everything (eager) before the first operation.
    pub fn open<B: Backend>(space: &Space<'_, B>, root: usize) -> Result<Self, RelaxError> {
        let buckets = space
            .root(root)?
            .ok_or(RelaxError::EmptyRoot { index: root })?;
        let n = Buckets::field_count(space, buckets)? as u64 - 1;
        space.pool().check_range(buckets, 16 * (n + 1), 16)?;
        space.recover_root::<Buckets>(buckets)?;
        Ok(HashTable { buckets, n })
    }

    fn head<B: Backend>(&self, sp: &Space<'_, B>, key: u64) -> Result<u64, RelaxError> {
        let i = hash(key) % self.n;
        PAtomicPtr::<ListNode>::at(self.buckets + 16 * (1 + i)).load(sp)
    }

    /// Runs the list operation `op` on `key`'s bucket, in a critical
    /// section.
    fn in_bucket<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B>,
        key: u64,
        op: ListOp<B>,
    ) -> Result<bool, RelaxError> {
        h.critical(|h| {
            let head = self.head(h.space(), key)?;
            op(h, head, key)
        })
    }

    /// Inserts `key`; false if present.
    pub fn insert<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B>,
        key: u64,
    ) -> Result<bool, RelaxError> {
        self.in_bucket(h, key, insert_at)
    }

    /// Removes `key`; false if absent.
    pub fn remove<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B>,
        key: u64,
    ) -> Result<bool, RelaxError> {
        self.in_bucket(h, key, remove_at)
    }

    /// Whether `key` is present.
    pub fn contains<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B>,
        key: u64,
    ) -> Result<bool, RelaxError> {
        self.in_bucket(h, key, contains_at)
    }

    /// Every key, sorted (exact when no update runs concurrently).
    pub fn keys<B: Backend>(&self, h: &mut Handle<'_, '_, B>) -> Result<Vec<u64>, RelaxError> {
        let mut out = Vec::new();
        h.critical(|h| {
            for i in 0..self.n {
                let head =
                    PAtomicPtr::<ListNode>::at(self.buckets + 16 * (1 + i)).load(h.space())?;
                keys_at(h, head, &mut out)?;
            }
            Ok::<_, RelaxError>(())
        })?;
        out.sort_unstable();
        Ok(out)
    }
}
