//! A lock-free skip list as a set of `u64` keys — the thesis's skip-list
//! benchmark (Chapter 8 cites Fraser, "Practical lock-freedom", 2003, its
//! reference \[18\]), here in the formulation of Herlihy and Shavit's
//! `LockFreeSkipList` (The Art of Multiprocessor Programming, §14.4), with
//! Fraser's check of the new node's own pointers while it is being linked,
//! and a hand-off that decides which thread retires a removed node.
//!
//! A node is `[key, height, next[0], …, next[height−1]]`, each a persistent
//! atomic (16 bytes): `key` and `height` are written once before the node
//! is published (the NVMM replica is authoritative for them, so
//! [`Node::field_count`] reads the height there); `next[i]` is a [`PAtomicPtr`]
//! whose bit 0 is the deletion mark of level `i` ([`DELETED`]), bit 2 is
//! RELAX's recovery mark (§6.4.2, never in NVMM), and bit 1 of `next[0]`
//! only is [`LINKED`] (below). The list starts at a head node of height
//! [`MAX_HEIGHT`] that a root designates; null ends every level.
//!
//! * `find(key)`: from the head's top level down, walk each level while the
//!   next key is `< key`, unlinking (with a CAS on the predecessor's
//!   `next[i]`) every node whose `next[i]` is marked; return the
//!   predecessor and successor at every level, and whether the level-0
//!   successor holds `key`.
//! * `insert`: `find`; CAS the level-0 predecessor from the successor to a
//!   new node (written in both replicas, written back and fenced first) —
//!   the linearisation point; then link levels 1..height, each by first
//!   setting the node's own `next[i]` to the current successor with a CAS
//!   (it fails only if a remover marked it: linking stops) and then CASing
//!   the predecessor, re-running `find` when that fails.
//! * `remove`: `find`; mark `next[height−1]` down to `next[1]`, then CAS the
//!   mark into `next[0]` — the linearisation point, won by one remover —
//!   then `find` again to unlink the node from every level. That `find`
//!   walks past unmarked nodes with the same key until it reaches the
//!   removed node (`find_chasing`): a new node with the key, inserted while
//!   the old one was being removed, can precede it at an upper level, and
//!   a `find` stopping at the new node would leave the old one linked —
//!   harmless under a garbage collector (Herlihy and Shavit's setting), a
//!   use after free once the old node is retired.
//! * `contains`: `find`.
//!
//! **Reclamation.** A node may be retired only once no level can link it
//! again. The inserter may still be linking upper levels when the node is
//! removed, so the two threads hand off on `next[0]`: when the inserter has
//! stopped linking it sets [`LINKED`] in `next[0]` with a CAS; the remover's
//! marking CAS on `next[0]` sees whether `LINKED` was already there. If it
//! was, no link can follow, and the remover retires the node after its
//! `find`; if not, the inserter's CAS fails on the mark, and the inserter
//! runs `find` itself (which unlinks every level it linked) and retires the
//! node. Exactly one of the two CASes comes first, so the node is retired
//! once. Every CAS on a `next[0]` keeps its `LINKED` bit. A crash between
//! an insert's level-0 CAS and its `LINKED` CAS leaves a node without
//! `LINKED` that no inserter will come back to: when it is later removed,
//! its remover does not retire it, and the block is leaked (one node per
//! insert cut by a crash, on top of the heap's own crash leaks described in
//! [`Space`]; reachable nodes are never freed).
//!
//! **Tracking variants.** A skip-list node has one incoming pointer per
//! level it is linked at, so `MarkableAtomicPointer` does not apply (§6.4.3:
//! a node re-reached through a second, still-marked pointer is recovered
//! again, which re-marks its own pointers, and the recovery cascades; the
//! seed introduces `HybridAtomicPointer` for this shape).
//! [`SkipList::create`] and [`SkipList::open`] refuse it with
//! [`RelaxError::Config`]. Every other variant applies: `Hybrid` and
//! `ZMarkable` recover a node once however many pointers lead to it, the
//! field-tracking variants track fields, and eager Mirror recovery traces
//! every level.
//!
//! Every CAS is Mirror's (Algorithm 4.1), durable before it returns, so an
//! operation that returned survives a crash (durable linearisability); a
//! crash in the middle of an insert may leave a node linked at a prefix of
//! its levels, which is a valid skip list. Lock free; reclamation is
//! epoch-based (see [`Space`]).

use super::common::{addr, key_of, level_keys, root_node};
use crate::error::RelaxError;
use crate::node::Node;
use crate::patomic::{PAtomic, PAtomicPtr, LOW_BITS};
use crate::space::{Handle, Space, Tracking};
use crate::sync::atomic::Ordering;
use perdure_pm::Backend;
use std::cell::Cell;

/// The most levels a node (and the head) has.
pub const MAX_HEIGHT: usize = 24;
/// The deletion mark of a level (bit 0 of `next[i]`).
pub const DELETED: u64 = 1;
/// Bit 1 of `next[0]`: the inserter has stopped linking the node (see the
/// module docs).
pub const LINKED: u64 = 2;
const HEIGHT: u64 = 16;
const NEXT: u64 = 32;

node_type! {
    /// A skip-list node: `[key, height, next[0..height]]`.
    SkipNode {
        child: SkipNode,
        count: |space, node| {
            let h = space.pool().word(node + HEIGHT)?.load(Ordering::Acquire);
            check_height(space, node, h)?;
            Ok(2 + h as usize)
        },
        values: 2,
    }
}

fn check_height<B: Backend>(space: &Space<'_, B>, node: u64, h: u64) -> Result<(), RelaxError> {
    if h == 0 || h > MAX_HEIGHT as u64 {
        return Err(RelaxError::corrupt(
            space.base(),
            format!("skip-list node at {node:#x} claims height {h}"),
        ));
    }
    Ok(())
}

fn height_of<B: Backend>(sp: &Space<'_, B>, n: u64) -> Result<usize, RelaxError> {
    let h = PAtomic::at(n + HEIGHT).load(sp)?;
    check_height(sp, n, h)?;
    Ok(h as usize)
}

fn next_of(n: u64, level: usize) -> PAtomicPtr<SkipNode> {
    PAtomicPtr::at(n + NEXT + 16 * level as u64)
}

thread_local! {
    static RNG: Cell<u64> = const { Cell::new(0x2545_f491_4f6c_dd1d) };
}

/// Reseeds the calling OS thread's height generator (feature `check`):
/// a test that runs several model-checker tasks on one OS thread (shuttle)
/// reseeds it at the start of each schedule from the schedule's own random
/// source, so that the heights, drawn in schedule order, replay with it.
#[cfg(feature = "check")]
pub fn seed_heights(seed: u64) {
    RNG.with(|r| r.set(seed | 1));
}

/// A geometric height (p = 1/2) in `1..=MAX_HEIGHT`, from a per-thread
/// xorshift generator (deterministic for a given thread's history).
fn random_height() -> usize {
    RNG.with(|r| {
        let mut x = r.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        r.set(x);
        (1 + x.trailing_ones() as usize).min(MAX_HEIGHT)
    })
}

fn refuse(t: Tracking) -> Result<(), RelaxError> {
    if t == Tracking::Markable {
        return Err(RelaxError::Config(
            "MarkableAtomicPointer needs a single incoming pointer per node (§6.4.2); a skip-list node has one per level it is linked at, and re-reaching a recovered node through a still-marked pointer recovers it again and cascades (§6.4.3): use HybridAtomicPointer, ZMarkableAtomicPointer, a field-tracking variant or eager recovery".into(),
        ));
    }
    Ok(())
}

/// Per level: the predecessor, the value read from its `next[level]`
/// (unmarked; carries `LINKED` at level 0), and the successor.
#[derive(Clone, Copy)]
struct Window {
    preds: [(u64, u64); MAX_HEIGHT],
    succs: [u64; MAX_HEIGHT],
}

/// `find`: the window at every level around `key`, unlinking marked nodes
/// on the way; `found` if the level-0 successor holds `key` (and was
/// unmarked when read).
fn find<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    key: u64,
) -> Result<(Window, bool), RelaxError> {
    find_chasing(h, head, key, 0)
}

/// `find` that also walks past unmarked nodes holding `key` until it
/// reaches `chase` (a removed, marked node) or a larger key, so that it
/// unlinks `chase` from every level it is linked at: what the thread that
/// retires `chase` runs first. Plain `find` stops at the first unmarked
/// node with `key`; a new node with the same key, inserted while `chase`
/// was being removed, may precede it at an upper level — its window was
/// read before the remover marked those levels, so `chase` is its
/// successor there — and a plain `find` would leave `chase` linked behind
/// it: retired, freed, still reachable (found by `tests/shuttle_sets.rs`,
/// skip list under `BitsetAtomic` after a crash).
fn find_chasing<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    key: u64,
    chase: u64,
) -> Result<(Window, bool), RelaxError> {
    let sp = h.space();
    let mut w = Window {
        preds: [(0, 0); MAX_HEIGHT],
        succs: [0; MAX_HEIGHT],
    };
    'retry: loop {
        let mut pred = head;
        let mut found = false;
        for lvl in (0..MAX_HEIGHT).rev() {
            let mut pv = next_of(pred, lvl).load(sp)?;
            if pv & DELETED != 0 {
                continue 'retry;
            }
            let mut curr = addr(pv);
            loop {
                if curr == 0 {
                    break;
                }
                let cv = next_of(curr, lvl).load(sp)?;
                if cv & DELETED != 0 {
                    // Unlink `curr` at this level, keeping pred's LINKED.
                    let new = addr(cv) | (pv & LINKED);
                    match next_of(pred, lvl).compare_exchange(sp, pv, new)? {
                        Ok(_) => {
                            pv = new;
                            curr = addr(cv);
                            continue;
                        }
                        Err(_) => continue 'retry,
                    }
                }
                let ck = key_of(curr).load(sp)?;
                if ck < key || (chase != 0 && ck == key && curr != chase) {
                    pred = curr;
                    pv = cv;
                    curr = addr(cv);
                } else {
                    if lvl == 0 {
                        found = ck == key;
                    }
                    break;
                }
            }
            w.preds[lvl] = (pred, pv);
            w.succs[lvl] = curr;
            if lvl == 1 {
                pause!(SkipFindBeforeLevel0);
            }
        }
        return Ok((w, found));
    }
}

/// Links levels `1..height` of `node` (already linked at level 0), then
/// hands off with a remover (module docs): returns after setting `LINKED`,
/// or after unlinking and retiring the node if a remover marked it first.
fn link_upper<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    key: u64,
    node: u64,
    height: usize,
    mut w: Window,
) -> Result<(), RelaxError> {
    'levels: for lvl in 1..height {
        loop {
            let sp = h.space();
            let (p, pv) = w.preds[lvl];
            let s = w.succs[lvl];
            // Fraser: the node's own pointer first; only a remover's mark
            // can change it before the node is linked at this level.
            let nv = next_of(node, lvl).load(sp)?;
            if nv & DELETED != 0 {
                break 'levels;
            }
            if nv != s && next_of(node, lvl).compare_exchange(sp, nv, s)?.is_err() {
                break 'levels;
            }
            if next_of(p, lvl).compare_exchange(sp, pv, node)?.is_ok() {
                break;
            }
            let (w2, _) = find(h, head, key)?;
            w = w2;
            if next_of(node, 0).load(h.space())? & DELETED != 0 {
                break 'levels;
            }
        }
    }
    loop {
        let sp = h.space();
        let v = next_of(node, 0).load(sp)?;
        if v & DELETED != 0 {
            // The remover marked level 0 before we stopped linking: it left
            // the node to us. Our links all precede this find.
            find_chasing(h, head, key, node)?;
            h.retire(node);
            return Ok(());
        }
        if next_of(node, 0)
            .compare_exchange(sp, v, v | LINKED)?
            .is_ok()
        {
            return Ok(());
        }
    }
}

fn insert_at<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    key: u64,
) -> Result<bool, RelaxError> {
    let height = random_height();
    let mut node = 0;
    let mut init = vec![0u64; 2 + height];
    init[0] = key;
    init[1] = height as u64;
    loop {
        let (w, found) = find(h, head, key)?;
        if found {
            if node != 0 {
                h.free_unpublished(node)?;
            }
            return Ok(false);
        }
        init[2..].copy_from_slice(&w.succs[..height]);
        if node == 0 {
            node = h.alloc_node::<SkipNode>(&init)?;
        } else {
            h.init_fields(node, &init)?;
        }
        let (p, pv) = w.preds[0];
        if mutant!(SkipLinkUpperFirst) {
            // The mutant: upper levels first, one attempt each.
            for lvl in 1..height {
                let (pu, puv) = w.preds[lvl];
                if next_of(pu, lvl)
                    .compare_exchange(h.space(), puv, node)?
                    .is_err()
                {
                    break;
                }
            }
        }
        if next_of(p, 0)
            .compare_exchange(h.space(), pv, node | (pv & LINKED))?
            .is_ok()
        {
            if mutant!(SkipLinkUpperFirst) {
                link_upper(h, head, key, node, 1, w)?;
            } else {
                link_upper(h, head, key, node, height, w)?;
            }
            return Ok(true);
        }
    }
}

/// Membership in the skip list whose head is `head`.
fn contains_at<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    key: u64,
) -> Result<bool, RelaxError> {
    Ok(find(h, head, key)?.1)
}

/// The keys of the skip list whose head is `head`, in order, read along
/// level 0 (not deleted). Linearisable only when no update runs
/// concurrently.
fn keys_at<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    out: &mut Vec<u64>,
) -> Result<(), RelaxError> {
    let next0 = |n| next_of(n, 0);
    level_keys(h.space(), head, next0, LOW_BITS, 48, "skip list", out)
}

fn remove_at<B: Backend>(
    h: &mut Handle<'_, '_, B>,
    head: u64,
    key: u64,
) -> Result<bool, RelaxError> {
    let (w, found) = find(h, head, key)?;
    if !found {
        return Ok(false);
    }
    let sp = h.space();
    let node = w.succs[0];
    let height = height_of(sp, node)?;
    if mutant!(SkipRemoveNoMark) {
        // The mutant: unlink from the top level down without marking; the
        // bottom level's CAS decides (retry from the top if it fails).
        for lvl in (0..height).rev() {
            let (p, pv) = w.preds[lvl];
            if addr(pv) != node {
                continue;
            }
            let nv = next_of(node, lvl).load(sp)?;
            let ok = next_of(p, lvl)
                .compare_exchange(sp, pv, addr(nv) | (pv & LINKED))?
                .is_ok();
            if lvl == 0 {
                if !ok {
                    return remove_at(h, head, key);
                }
                h.retire(node);
                return Ok(true);
            }
        }
        return remove_at(h, head, key);
    }
    for lvl in (1..height).rev() {
        loop {
            let v = next_of(node, lvl).load(sp)?;
            if v & DELETED != 0
                || next_of(node, lvl)
                    .compare_exchange(sp, v, v | DELETED)?
                    .is_ok()
            {
                break;
            }
        }
    }
    loop {
        let v = next_of(node, 0).load(sp)?;
        if v & DELETED != 0 {
            return Ok(false); // another remover linearised first
        }
        if next_of(node, 0)
            .compare_exchange(sp, v, v | DELETED)?
            .is_ok()
        {
            find_chasing(h, head, key, node)?;
            if v & LINKED != 0 {
                h.retire(node);
            }
            return Ok(true);
        }
    }
}

/// A lock-free skip list as a set of `u64` keys (every `u64` is a valid
/// key), rooted at a root slot of a space. Not usable under
/// [`Tracking::Markable`] (module docs).
#[derive(Clone, Copy, Debug)]
pub struct SkipList {
    head: u64,
}

impl SkipList {
    /// Creates an empty skip list and stores its head in root `root`.
    /// [`RelaxError::Config`] under [`Tracking::Markable`].
    pub fn create<B: Backend>(h: &mut Handle<'_, '_, B>, root: usize) -> Result<Self, RelaxError> {
        refuse(h.space().tracking())?;
        let mut init = vec![0u64; 2 + MAX_HEIGHT];
        init[1] = MAX_HEIGHT as u64;
        let head = h.alloc_node::<SkipNode>(&init)?;
        h.space().set_root(root, head)?;
        Ok(SkipList { head })
    }

    /// Opens the skip list at root `root` after a crash: recovers the head
    /// (lazy variants, O(1)) or every node (eager) before the first
    /// operation (§6.6). [`RelaxError::Config`] under
    /// [`Tracking::Markable`].
    pub fn open<B: Backend>(space: &Space<'_, B>, root: usize) -> Result<Self, RelaxError> {
        refuse(space.tracking())?;
        let head = root_node(space, root)?;
        let n = SkipNode::field_count(space, head)?;
        if n != 2 + MAX_HEIGHT {
            return Err(RelaxError::corrupt(
                space.base(),
                format!(
                    "the skip-list head at {head:#x} has {} levels, not {MAX_HEIGHT}",
                    n - 2
                ),
            ));
        }
        space.pool().check_range(head, 16 * n as u64, 16)?;
        space.recover_root::<SkipNode>(head)?;
        Ok(SkipList { head })
    }

    /// The head's offset.
    pub fn head(&self) -> u64 {
        self.head
    }

    set_methods!(
        at head as at_head,
        keys "The keys, in order, read along level 0 (exact when no update runs concurrently)."
    );
}
