//! Harris's lock-free ordered linked list (Harris, DISC 2001) with Michael's
//! one-node-at-a-time unlinking (SPAA 2002), which safe memory reclamation
//! needs, as a set of `u64` keys — the thesis's linked-list benchmark.
//!
//! A node is two persistent atomics: `key` (a [`PAtomic`](crate::PAtomic)) and `next` (a
//! [`PAtomicPtr`]); bit 0 of `next` is Harris's deletion mark (the node is
//! logically deleted), bit 2 is RELAX's recovery mark (§6.4.2) and never
//! reaches NVMM. The list starts at a sentinel node that a root designates.
//!
//! * `find(key)`: walk from the sentinel; a node whose `next` carries the
//!   deletion mark is unlinked with a CAS on its predecessor's `next` and
//!   retired; stop at the first key ≥ `key`.
//! * `insert`: `find`, then CAS the predecessor's `next` from the successor
//!   to a new node (initialised in both replicas, written back and fenced
//!   first). Linearises at that CAS.
//! * `remove`: `find`, CAS the deletion mark into the victim's `next`
//!   (the linearisation point), then try to unlink it.
//! * `contains`: `find`.
//!
//! Every CAS is Mirror's (Algorithm 4.1): durable before it returns, so an
//! operation that returned survives a crash (durable linearisability). Lock
//! free; reclamation is epoch-based (see [`Space`]).

use super::common::{key_of, level_keys, root_node};
use crate::error::RelaxError;
use crate::patomic::PAtomicPtr;
use crate::space::{Handle, Space};
use perdure_pm::Backend;

/// Harris's deletion mark (bit 0 of `next`).
pub const DELETED: u64 = 1;
const NEXT: u64 = 16;

node_type! {
    /// A list node: `[key, next]`.
    ListNode: 2 fields, 1 values
}

fn next_of(n: u64) -> PAtomicPtr<ListNode> {
    PAtomicPtr::at(n + NEXT)
}

/// `find`: `(pred, curr, found)` with `pred.key < key ≤ curr.key` at some
/// moment of the call (`curr` = 0 at the end of the list).
fn find<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    key: u64,
) -> Result<(u64, u64, bool), RelaxError> {
    let sp = h.space();
    'retry: loop {
        let mut prev = head;
        let mut curr = next_of(prev).load(sp)? & !DELETED;
        loop {
            if curr == 0 {
                return Ok((prev, 0, false));
            }
            let next = next_of(curr).load(sp)?;
            if next & DELETED != 0 {
                match next_of(prev).compare_exchange(sp, curr, next & !DELETED)? {
                    Ok(_) => {
                        h.retire(curr);
                        curr = next & !DELETED;
                        continue;
                    }
                    Err(_) => continue 'retry,
                }
            }
            let ck = key_of(curr).load(sp)?;
            if ck >= key {
                return Ok((prev, curr, ck == key));
            }
            prev = curr;
            curr = next;
        }
    }
}

/// Insert into the list whose sentinel is `head`.
pub(crate) fn insert_at<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    key: u64,
) -> Result<bool, RelaxError> {
    let mut node = 0;
    loop {
        let (prev, curr, found) = find(h, head, key)?;
        if found {
            if node != 0 {
                h.free_unpublished(node)?;
            }
            return Ok(false);
        }
        if node == 0 {
            node = h.alloc_node::<ListNode>(&[key, curr])?;
        } else {
            h.init_fields(node, &[key, curr])?;
        }
        if next_of(prev)
            .compare_exchange(h.space(), curr, node)?
            .is_ok()
        {
            return Ok(true);
        }
    }
}

/// Remove from the list whose sentinel is `head`.
pub(crate) fn remove_at<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    key: u64,
) -> Result<bool, RelaxError> {
    loop {
        let (prev, curr, found) = find(h, head, key)?;
        if !found {
            return Ok(false);
        }
        let sp = h.space();
        let next = next_of(curr).load(sp)?;
        if next & DELETED != 0 {
            continue;
        }
        if next_of(curr)
            .compare_exchange(sp, next, next | DELETED)?
            .is_err()
        {
            continue;
        }
        if next_of(prev).compare_exchange(sp, curr, next)?.is_ok() {
            h.retire(curr);
        } else {
            find(h, head, key)?;
        }
        return Ok(true);
    }
}

/// Membership in the list whose sentinel is `head`.
pub(crate) fn contains_at<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    key: u64,
) -> Result<bool, RelaxError> {
    Ok(find(h, head, key)?.2)
}

/// The keys of the list whose sentinel is `head`, in order (not deleted).
/// Linearisable only when no update runs concurrently.
pub(crate) fn keys_at<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    out: &mut Vec<u64>,
) -> Result<(), RelaxError> {
    level_keys(h.space(), head, next_of, DELETED, 32, "list", out)
}

/// Harris's list as a set of `u64` keys, rooted at a root slot of a space.
#[derive(Clone, Copy, Debug)]
pub struct HarrisList {
    head: u64,
}

impl HarrisList {
    /// Creates an empty list and stores its sentinel in root `root`.
    pub fn create<B: Backend>(h: &mut Handle<'_, '_, B>, root: usize) -> Result<Self, RelaxError> {
        let head = h.alloc_node::<ListNode>(&[0, 0])?;
        h.space().set_root(root, head)?;
        Ok(HarrisList { head })
    }

    /// Opens the list at root `root` after a crash: recovers the sentinel
    /// (lazy variants, O(1)) or the whole list (eager), before the first
    /// operation (§6.6).
    pub fn open<B: Backend>(space: &Space<'_, B>, root: usize) -> Result<Self, RelaxError> {
        let head = root_node(space, root)?;
        space.recover_root::<ListNode>(head)?;
        Ok(HarrisList { head })
    }

    /// The sentinel's offset.
    pub fn head(&self) -> u64 {
        self.head
    }

    set_methods!(
        at head as at_head,
        keys "The keys, in order (exact when no update runs concurrently)."
    );
}
