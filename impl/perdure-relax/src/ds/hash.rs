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

use super::common::{create_counted, open_counted};
use super::list::{contains_at, insert_at, keys_at, remove_at, ListNode};
use crate::error::RelaxError;
use crate::patomic::PAtomicPtr;
use crate::space::{Handle, Space};
use perdure_pm::Backend;

/// Most buckets (the array is one heap block of at most 64 KiB).
pub const MAX_BUCKETS: usize = crate::node::MAX_COUNTED;

node_type! {
    /// The bucket array node: `[n, bucket 0, …, bucket n−1]`.
    Buckets {
        child: ListNode,
        count: |space, node| crate::node::counted_field_count(space, node, "bucket array"),
        values: 1,
    }
}

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
        let sentinel = |h: &mut Handle<'_, '_, B>| h.alloc_node::<ListNode>(&[0, 0]);
        let buckets =
            create_counted::<Buckets, B>(h, root, n, ("a hash table", "buckets"), sentinel)?;
        Ok(HashTable {
            buckets,
            n: n as u64,
        })
    }

    /// Opens the table at root `root` after a crash, recovering the bucket
    /// array (lazy) or everything (eager) before the first operation.
    pub fn open<B: Backend>(space: &Space<'_, B>, root: usize) -> Result<Self, RelaxError> {
        let (buckets, n) = open_counted::<Buckets, B>(space, root)?;
        Ok(HashTable { buckets, n })
    }

    /// The sentinel of bucket `i`.
    fn bucket<B: Backend>(&self, sp: &Space<'_, B>, i: u64) -> Result<u64, RelaxError> {
        PAtomicPtr::<ListNode>::at(self.buckets + 16 * (1 + i)).load(sp)
    }

    /// Runs the list operation `op` on `key`'s bucket, in a critical
    /// section.
    fn in_bucket<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B>,
        key: u64,
        op: impl FnOnce(&mut Handle<'_, '_, B>, u64, u64) -> Result<bool, RelaxError>,
    ) -> Result<bool, RelaxError> {
        h.critical(|h| {
            let head = self.bucket(h.space(), hash(key) % self.n)?;
            op(h, head, key)
        })
    }

    set_methods!(via in_bucket);

    /// Every key, sorted (exact when no update runs concurrently).
    pub fn keys<B: Backend>(&self, h: &mut Handle<'_, '_, B>) -> Result<Vec<u64>, RelaxError> {
        let mut out = Vec::new();
        h.critical(|h| {
            for i in 0..self.n {
                let head = self.bucket(h.space(), i)?;
                keys_at(h, head, &mut out)?;
            }
            Ok::<_, RelaxError>(())
        })?;
        out.sort_unstable();
        Ok(out)
    }
}
