//! SOFT-mmt: the detectable SOFT hash table of seed 001 (§5 "SOFT", §7.2).
//!
//! SOFT (Zuriel, Friedman, Sheffi, Cohen, Petrank, "Efficient Lock-Free
//! Durable Sets", OOPSLA 2019) keeps two copies of a hash table of sorted
//! lists. The **DRAM copy** is a lock-free sorted list per bucket whose nodes
//! (`VNode`) hold the key, the value, a pointer to the persistent node and a
//! two-bit *state* in their `next` word: intend-to-insert, inserted,
//! intend-to-delete, deleted. The **PM copy** is a set of unlinked persistent
//! nodes holding key, value and validity, flushed once when inserted and once
//! when deleted. Searches read DRAM only; recovery rebuilds DRAM from PM.
//! §5 of the seed reads this as a *DRAM scratchpad*: the invariant "the DRAM
//! copy is equivalent to the PM copy" is (1) established at start-up by the
//! rebuild, and (2, 3) kept by SOFT's fine-grained helping, which moves a
//! DRAM node to *inserted* only after its PM node is durably valid and to
//! *deleted* only after its PM node is durably deleted. SOFT-mmt adds
//! mementos so that every insert and delete is *detectable*.
//!
//! ## The operations (SOFT's Algorithms, with the seed's §2.4 transformation)
//!
//! * **insert(k, v)** — find `k` in the bucket's DRAM list (trimming nodes in
//!   state *deleted*). Present → `false` (a node in *intend-to-insert* is
//!   first helped to *inserted*, as SOFT does). Absent → a PM node is
//!   allocated **inside [`Checkpoint::checkpoint_with`]** (so recovery
//!   reuses it instead of allocating again), written `[k, v, stamp]` and
//!   flushed, pushed on the bucket's persistent chain (see below), and a DRAM
//!   node in *intend-to-insert* is CASed in. Then SOFT's `create`: the PM node is
//!   marked valid and flushed — **the one flush of SOFT's insert, the
//!   durability point** — and the DRAM node moves to *inserted* (its
//!   linearization point; anyone who meets the node helps both steps).
//! * **delete(k)** — find `k`; absent, or in *intend-to-insert* → `false`.
//!   Otherwise the node is *claimed*: a CAS of the DRAM node's `deleter` from
//!   0 to the thread id. Exactly one delete wins; SOFT's transition
//!   *inserted → intend-to-delete* follows (anyone may do it once `deleter`
//!   is set). Then SOFT's `destroy`: the PM node's `del` word is CASed from 0
//!   to the winner's thread id and flushed — **the one flush of SOFT's
//!   delete**, which records *who deleted* — and the DRAM node moves to
//!   *deleted* (the linearization point). Every delete that meets a claimed
//!   node helps these steps before it returns `false`. The winner trims the
//!   DRAM node, unlinks the PM node from its chain and retires it.
//! * **lookup(k)** — SOFT's `contains`, DRAM only, wait-free: the value of a
//!   node in *inserted* or *intend-to-delete*, else `None`.
//!
//! ## Mementos: what is checkpointed and why
//!
//! | memento | checkpoint | holds | why |
//! | --- | --- | --- | --- |
//! | [`InsertMmt`] | `node` | the PM node and its stamp, or 0 for "k was present: false" | Requirement 2: the allocation (and the first find's verdict) are non-deterministic; recovery must reuse the block |
//! | [`InsertMmt`] | `result` | 1 / 0 | the seed's "memento versions additionally checkpoint results" (§7.2); it also separates "lost the race, cleaning up" from "not yet linked" |
//! | [`DeleteMmt`] | `target` | the PM node this delete tries to claim and its stamp, or 0 for "absent: false" | the find's verdict, and where recovery looks for *who deleted* |
//! | [`DeleteMmt`] | `result` | 1 / 0 | as for insert; after it the cleanup (unlink, retire) is idempotent |
//!
//! lookup has no memento: it has no effect, and a re-run after a crash is a
//! new linearization point inside the same pending operation.
//!
//! ## Recovery
//!
//! * **Full crash.** [`SoftTable::attach`] rebuilds DRAM from PM before any
//!   thread resumes: it walks every bucket's persistent chain (validating
//!   every pointer and bounding the walk), inserts every valid, undeleted PM
//!   node into its bucket's DRAM list in state *inserted*, and unlinks
//!   deleted and abandoned nodes from the chains (not freeing them: a pending
//!   memento may still name them). Then each thread resumes its operation
//!   with its memento ([`Handle::run_root`]).
//! * **Thread crash.** DRAM survives; the operation re-runs in recovery mode.
//!
//! Either way a re-run insert with node `P` checkpointed: if `result` is
//! checkpointed, it is the answer (a `false` redoes the idempotent cleanup).
//! Else if `P`'s stamp changed, `P` was freed and reused, which only a
//! delete that won on it can cause: `true`. Else if `P` is valid or deleted
//! in PM, the insert took effect (`P` is
//! flushed, its DRAM node helped to *inserted*): `true`. Else if a DRAM node
//! points at `P` (thread crash after the link), SOFT's `create` is resumed:
//! `true`. Else the insert has no effect anyone can have seen — helpers
//! validate and flush `P` before they return, lookups and deletes treat
//! *intend-to-insert* as absent — so it restarts normally with the same `P`
//! (pushed on the chain only if a walk does not find it there). A re-run
//! delete with target `P`: `result` if checkpointed; else a changed stamp
//! means another delete won and `P` was reused: `false`; else `P.del` names
//! the winner if it is set (its thread id: ours → `true`); else the DRAM
//! node's `deleter` does (thread crash); else nothing was claimed durably or
//! visibly and the delete claims again.
//!
//! **Why stamps.** After a full crash the reclamation domain starts empty: a
//! thread that resumes first can delete a node that another thread's
//! pending memento names, and free and reuse its block before that thread
//! resumes (a thread crash cannot cause this: the crashed thread's critical
//! section is revived and holds the epoch back). Each PM node therefore
//! carries a stamp (a fresh timestamp written when it is allocated), and
//! mementos checkpoint `[node, stamp]`; a mismatch in recovery means the
//! block has had another life. A runtime that pinned every thread with a
//! pending operation at [`Runtime::open`](crate::Runtime::open) would make
//! this unnecessary here and in the other structures.
//!
//! ## Where the PM nodes live: per-bucket persistent chains
//!
//! SOFT allocates PM nodes from per-thread durable areas and recovery scans
//! the areas. Here PM nodes are blocks of the runtime's heap, so that §6's
//! reclamation applies unchanged (a deleted node is retired through the
//! runtime's EBR, with the deferred flush of §6.1). Scanning the heap instead
//! of keeping chains would need an API the heap does not have (enumerating
//! the blocks of a size class) and a way to tell SOFT's blocks from other
//! structures' in a shared heap. So every PM node is also on
//! its bucket's **persistent chain**: an unsorted list in PM, pushed at the
//! head (Treiber), unlinked Harris-style (mark the node's `pnext`, then CAS
//! the predecessor), walked only on delete and at recovery, never by
//! searches. A node is pushed before its DRAM node is published, so every
//! node a helper can validate is already durably reachable. The unlink's
//! CAS and the mark are persisted by DEFERFLUSH before the critical section
//! ends, hence before the block can be freed; the flush is deferred *before*
//! the CAS, so that a thread crash right after the CAS cannot lose it (the
//! re-run's walk no longer meets that unlink).
//!
//! ## Layout
//!
//! * table block: line 0 `[MAGIC, buckets]`, then one chain head per bucket;
//! * PM node, one line: `[key, value, pnext, ins, del, stamp]`. `pnext`
//!   carries the Harris mark in bit 63; `ins` is [`INS_VALID`] once valid;
//!   `del` is the deleter's thread id once deleted; `stamp` identifies this
//!   life of the block.
//!
//! ## What differs from SOFT
//!
//! * **Validity in one word.** SOFT's `validStart`/`validEnd`/`deleted` bits
//!   let a node be written and flushed without ordering fences. A node here
//!   is one cache line and Px86 persists the stores to one line in order, so
//!   writing key and value before `ins` gives the same "flushed exactly once
//!   per insert, once per delete" with one validity word.
//! * **Who deleted.** SOFT's intend-to-delete CAS is won by one remover; here
//!   the win is a CAS on the DRAM node's `deleter` word, so that helpers can
//!   copy the winner's id into the PM node, and recovery can read it.
//! * **Extra persistence**: on insert, a flush of the fresh node before its
//!   checkpoint names it and the chain push (a `pwb` of the node, a flush of
//!   the head); on delete, deferred flushes for the mark and the unlink; and
//!   the memento checkpoints (a flush each). The seed's evaluation (§7.2)
//!   likewise reports SOFT-mmt slower than SOFT on inserts and deletes and
//!   as fast on searches — searches are unchanged.
//! * **A fixed bucket count** (SOFT does not resize either), at most
//!   [`MAX_BUCKETS`].
//!
//! ## SOFT itself: the baseline
//!
//! [`SoftTable::insert_plain`], [`SoftTable::delete_plain`] and
//! [`SoftTable::lookup_plain`] run SOFT without mementos on the same table,
//! each in one critical section ([`Handle::critical_section`]): durable
//! linearizable, not detectable. They are the detectable operations minus
//! the checkpoints (two per insert and delete), so a benchmark of both
//! measures what detectability costs; the chains are the same, so the
//! baseline carries this table's extra flushes (above) too.
//!
//! ## Reclamation (§6)
//!
//! PM nodes are retired with [`Handle::retire`] by their owner only — the
//! delete that won, or an insert that lost its race — after the node is
//! durably deleted (or was never valid) and off its chain. DRAM nodes are
//! retired by the thread whose CAS trimmed them, stamped with the runtime
//! collector's epoch, and dropped two epochs later: every DRAM access happens
//! inside a pinned critical section ([`Handle::run_root`]; the operations
//! refuse to run outside one). What a crash leaks: blocks allocated by an
//! insert that crashed before checkpointing them, nodes retired but not yet
//! freed (as every EBR, see `ebr`), and the node of an insert that
//! completed with `false` if a crash came before its deferred flushes (it
//! stays on its chain, invalid, and the rebuild keeps it as it keeps the
//! nodes of pending inserts).
//!
//! Progress: insert and delete are lock-free; lookup is wait-free.

use super::{encode_opt, peek, NODE};
use crate::checkpoint::Checkpoint;
use crate::compose::Memento;
use crate::runtime::{Handle, MementoError};
use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use crate::sync::Mutex;
use perdure_pm::{Backend, Pool};

const MAGIC: u64 = u64::from_le_bytes(*b"SOFTMMT1");
/// Largest bucket count (the chain heads fill one heap block).
pub const MAX_BUCKETS: u64 = 4096;
const HEADS: u64 = 64;

// PM node words.
const KEY: u64 = 0;
const VALUE: u64 = 8;
const PNEXT: u64 = 16;
const INS: u64 = 24;
const DEL: u64 = 32;
const STAMP: u64 = 40;
/// `ins` of a PM node that is valid (SOFT's validStart = validEnd).
pub const INS_VALID: u64 = 1;
/// The Harris mark on a PM node's `pnext`: the node is being unlinked.
const MARK: u64 = 1 << 63;

// DRAM node states, in the low bits of the node's own `next` word (SOFT).
const INSERTED: usize = 0;
const INTEND_TO_DELETE: usize = 1;
const INTEND_TO_INSERT: usize = 2;
const DELETED: usize = 3;
const STATE_MASK: usize = 3;

crate::memento! {
    /// The memento of an insert.
    pub struct InsertMmt {
        /// The PM node allocated for this insert and its stamp, or 0: the
        /// key was present.
        pub node: Checkpoint<2>,
        /// The result (1 inserted, 0 not), once decided.
        pub result: Checkpoint<1>,
    }
}

crate::memento! {
    /// The memento of a delete.
    pub struct DeleteMmt {
        /// The PM node of the node this delete tries to claim and its stamp,
        /// or 0: absent.
        pub target: Checkpoint<2>,
        /// The result (1 deleted, 0 not), once decided.
        pub result: Checkpoint<1>,
    }
}

/// A root memento for a thread that inserts, deletes and looks up (a
/// lookup checkpoints nothing).
pub type SoftMmt = super::RootMmt<InsertMmt, DeleteMmt>;

/// One root operation on a [`SoftTable`] ([`SoftTable::run`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoftOp {
    /// `insert(key, value)`.
    Insert(u64, u64),
    /// `delete(key)`.
    Delete(u64),
    /// `lookup(key)`.
    Lookup(u64),
}

/// A DRAM node (SOFT's volatile node).
#[derive(Debug)]
struct VNode {
    key: u64,
    value: u64,
    /// The PM node.
    pptr: u64,
    /// The PM node's stamp.
    stamp: u64,
    /// The thread id of the delete that claimed it, 0 if none.
    deleter: AtomicU64,
    /// The successor's address with this node's state in the low two bits.
    next: AtomicUsize,
}

impl VNode {
    fn new(key: u64, value: u64, pptr: u64, stamp: u64, next: usize) -> VNode {
        VNode {
            key,
            value,
            pptr,
            stamp,
            deleter: AtomicU64::new(0),
            next: AtomicUsize::new(next),
        }
    }
}

fn state(w: usize) -> usize {
    w & STATE_MASK
}

fn addr(w: usize) -> usize {
    w & !STATE_MASK
}

/// What a search of a bucket found: SOFT's `find` result.
struct Found {
    /// The last node with a smaller key (or the bucket's head).
    pred: usize,
    /// `pred`'s state as read with the link to `curr`.
    pred_state: usize,
    /// The first node with a key at least the one searched (0: none).
    curr: usize,
    /// `curr`'s state.
    curr_state: usize,
}

/// A detectable SOFT hash table: the PM table block and the DRAM lists.
#[derive(Debug)]
pub struct SoftTable {
    off: u64,
    buckets: u64,
    /// The DRAM lists' head sentinels, one per bucket (never freed while the
    /// table lives, so their addresses are stable).
    heads: Box<[VNode]>,
    /// Trimmed DRAM nodes and the collector epoch they were retired in.
    limbo: Mutex<Vec<(u64, usize)>>,
}

impl Drop for SoftTable {
    fn drop(&mut self) {
        // `&mut self`: no operation runs, every node is ours to free.
        let limbo = std::mem::take(&mut *self.limbo.get_mut().unwrap_or_else(|e| e.into_inner()));
        for (_, p) in limbo {
            // SAFETY: a limbo entry is a node trimmed from its list (so no
            // list reaches it) and retired exactly once, by the thread whose
            // trimming CAS succeeded; it came from `Box::into_raw`.
            drop(unsafe { Box::from_raw(p as *mut VNode) });
        }
        for head in self.heads.iter() {
            let mut p = addr(head.next.load(Ordering::SeqCst));
            while p != 0 {
                // SAFETY: every node reachable from a head was published by
                // `Box::into_raw` and is freed only here or after trimming
                // (then it is no longer reachable); we are the only user.
                let node = unsafe { Box::from_raw(p as *mut VNode) };
                p = addr(node.next.load(Ordering::SeqCst));
            }
        }
    }
}

fn hash(key: u64) -> u64 {
    // A fixed mix (splitmix64's finaliser): deterministic across runs, so
    // PM chains and the rebuilt DRAM lists agree on buckets.
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn corrupt(what: String) -> MementoError {
    MementoError::CorruptStructure(format!("SOFT table: {what}"))
}

/// The value of `c` checkpointed by this operation before a crash, if any,
/// without leaving recovery mode (a checkpoint that is not there ends
/// recovery mode in [`Checkpoint::checkpoint`], which must not happen before
/// the operation has looked at what else it did).
fn replayed<B: Backend, M: Memento>(c: &Checkpoint<1>, h: &Handle<'_, '_, B, M>) -> Option<u64> {
    let ([v], ts) = c.peek(h.pool());
    (h.rec() && ts > h.local()).then_some(v)
}

impl SoftTable {
    fn empty(off: u64, buckets: u64) -> SoftTable {
        SoftTable {
            off,
            buckets,
            heads: (0..buckets).map(|_| VNode::new(0, 0, 0, 0, 0)).collect(),
            limbo: Mutex::new(Vec::new()),
        }
    }

    /// Creates an empty table with `buckets` buckets (a power of two, at
    /// most [`MAX_BUCKETS`]), durably. Store [`SoftTable::offset`] in the
    /// object root.
    pub fn create<B: Backend, M: Memento>(
        h: &mut Handle<'_, '_, B, M>,
        buckets: u64,
    ) -> Result<SoftTable, MementoError> {
        if !buckets.is_power_of_two() || buckets > MAX_BUCKETS {
            return Err(MementoError::Config(format!(
                "SOFT bucket count must be a power of two up to {MAX_BUCKETS}, not {buckets}"
            )));
        }
        let len = HEADS + 8 * buckets;
        let off = h.alloc(len)?;
        let pool = h.pool();
        pool.word(off)?.store(MAGIC, Ordering::Release);
        pool.word(off + 8)?.store(buckets, Ordering::Release);
        pool.pwb(off, len);
        pool.pfence();
        Ok(SoftTable::empty(off, buckets))
    }

    /// The table at `off` after a start-up or a full crash: validates the
    /// persistent chains and rebuilds the DRAM copy from them (§5 (1)), before
    /// any thread resumes. Deleted and abandoned PM nodes are unlinked from
    /// their chains (durably), not freed.
    pub fn attach<B: Backend>(pool: &Pool<B>, off: u64) -> Result<SoftTable, MementoError> {
        pool.check_range(off, HEADS, 64)?;
        let magic = peek(pool, off);
        if magic != MAGIC {
            return Err(corrupt(format!("bad magic {magic:#x} at {off:#x}")));
        }
        let buckets = peek(pool, off + 8);
        if !buckets.is_power_of_two() || buckets > MAX_BUCKETS {
            return Err(corrupt(format!("bucket count {buckets}")));
        }
        pool.check_range(off, HEADS + 8 * buckets, 64)?;
        let table = SoftTable::empty(off, buckets);
        let max_nodes = pool.size() / NODE;
        let mut seen = 0u64;
        for b in 0..buckets {
            let mut prev = table.head_off(b);
            let mut cur = peek(pool, prev);
            let mut live = Vec::new();
            while cur != 0 {
                pool.check_range(cur, NODE, 64)
                    .map_err(|e| corrupt(format!("chain {b}: node {cur:#x}: {e}")))?;
                seen += 1;
                if seen > max_nodes {
                    return Err(corrupt("a cycle in the persistent chains".into()));
                }
                let pnext = peek(pool, cur + PNEXT);
                let next = pnext & !MARK;
                if peek(pool, cur + DEL) != 0 || pnext & MARK != 0 {
                    // Deleted, or an insert's node being discarded: off the
                    // chain. Its owner's recovery retires it if pending.
                    pool.word(prev)?.store(next, Ordering::Release);
                    pool.pwb(prev, 8);
                } else {
                    if peek(pool, cur + INS) == INS_VALID {
                        let key = peek(pool, cur + KEY);
                        if table.bucket(key) != b {
                            return Err(corrupt(format!(
                                "node {cur:#x} with key {key} is on chain {b}"
                            )));
                        }
                        live.push((key, peek(pool, cur + VALUE), cur, peek(pool, cur + STAMP)));
                    }
                    // An invalid node stays: its insert is pending.
                    prev = cur + PNEXT;
                }
                cur = next;
            }
            live.sort_unstable();
            if let Some(w) = live.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(corrupt(format!("two valid nodes for key {}", w[0].0)));
            }
            // Build the sorted DRAM list back to front, every node inserted.
            let mut next = 0usize;
            for &(key, value, p, stamp) in live.iter().rev() {
                let node = VNode::new(key, value, p, stamp, next | INSERTED);
                next = Box::into_raw(Box::new(node)) as usize;
            }
            table.heads[b as usize].next.store(next, Ordering::SeqCst);
        }
        pool.pfence();
        Ok(table)
    }

    /// The table block's offset (store it in the object root).
    pub fn offset(&self) -> u64 {
        self.off
    }

    /// The number of buckets.
    pub fn buckets(&self) -> u64 {
        self.buckets
    }

    fn bucket(&self, key: u64) -> u64 {
        hash(key) & (self.buckets - 1)
    }

    fn head_off(&self, b: u64) -> u64 {
        self.off + HEADS + 8 * b
    }

    /// The DRAM node at `p` (a head sentinel or a published node).
    fn vnode(&self, p: usize) -> &VNode {
        // SAFETY: `p` is a head sentinel (owned by `self`) or a node read from
        // a list link during this critical section. Nodes are freed only two
        // collector epochs after they were trimmed, and every caller is inside
        // a pinned critical section (`check_pinned`), which holds the epoch
        // back until it ends; so the node is alive for the borrow.
        unsafe { &*(p as *const VNode) }
    }

    fn head_ptr(&self, b: u64) -> usize {
        &self.heads[b as usize] as *const VNode as usize
    }

    fn check_pinned<B: Backend, M: Memento>(
        &self,
        h: &Handle<'_, '_, B, M>,
    ) -> Result<(), MementoError> {
        if h.runtime().collector().is_pinned(h.tid()) {
            Ok(())
        } else {
            Err(MementoError::Config(
                "SOFT operations must run inside Handle::run_root (a pinned critical section)"
                    .into(),
            ))
        }
    }

    /// Retires a DRAM node this thread trimmed; drops those two epochs old.
    fn retire_vnode<B: Backend, M: Memento>(&self, h: &Handle<'_, '_, B, M>, p: usize) {
        let epoch = h.runtime().collector().epoch();
        let ripe: Vec<usize> = {
            let mut limbo = self.limbo.lock().unwrap_or_else(|e| e.into_inner());
            limbo.push((epoch, p));
            let mut ripe = Vec::new();
            limbo.retain(|&(stamp, q)| {
                if stamp + 2 <= epoch {
                    ripe.push(q);
                    false
                } else {
                    true
                }
            });
            ripe
        };
        for q in ripe {
            // SAFETY: `q` was unlinked (trimmed) before it was stamped with
            // epoch `stamp`; any thread that could still reach it was pinned
            // at an epoch at most `stamp`, and the collector cannot reach
            // `stamp + 2` while such a thread stays pinned. It came from
            // `Box::into_raw` and was retired once (one trimming CAS wins).
            drop(unsafe { Box::from_raw(q as *mut VNode) });
        }
    }

    /// SOFT's `find`: the first node of bucket `b` with a key at least `key`
    /// and its predecessor, trimming nodes in state *deleted* on the way.
    fn find<B: Backend, M: Memento>(&self, h: &Handle<'_, '_, B, M>, b: u64, key: u64) -> Found {
        'retry: loop {
            let mut pred = self.head_ptr(b);
            let w = self.vnode(pred).next.load(Ordering::SeqCst);
            let mut pred_state = state(w);
            let mut curr = addr(w);
            loop {
                if curr == 0 {
                    return Found {
                        pred,
                        pred_state,
                        curr,
                        curr_state: INSERTED,
                    };
                }
                let c = self.vnode(curr);
                let succ = c.next.load(Ordering::SeqCst);
                let curr_state = state(succ);
                if curr_state == DELETED {
                    // Trim: only a CAS that keeps pred's state succeeds.
                    let trimmed = self.vnode(pred).next.compare_exchange(
                        curr | pred_state,
                        addr(succ) | pred_state,
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    );
                    if trimmed.is_err() {
                        continue 'retry;
                    }
                    self.retire_vnode(h, curr);
                    curr = addr(succ);
                    continue;
                }
                if c.key >= key {
                    return Found {
                        pred,
                        pred_state,
                        curr,
                        curr_state,
                    };
                }
                pred = curr;
                pred_state = curr_state;
                curr = addr(succ);
            }
        }
    }

    /// The DRAM node of bucket `b` whose PM node is `p`, if any (no trimming).
    fn find_by_pptr(&self, b: u64, key: u64, p: u64) -> Option<usize> {
        let mut curr = addr(self.vnode(self.head_ptr(b)).next.load(Ordering::SeqCst));
        while curr != 0 {
            let c = self.vnode(curr);
            if c.key > key {
                return None;
            }
            if c.pptr == p {
                return Some(curr);
            }
            curr = addr(c.next.load(Ordering::SeqCst));
        }
        None
    }

    /// Moves a node's state from `from` to `to` if it is in `from`
    /// (whatever its successor does meanwhile); a no-op otherwise.
    fn advance_state(&self, p: usize, from: usize, to: usize) {
        let n = &self.vnode(p).next;
        let mut w = n.load(Ordering::SeqCst);
        while state(w) == from {
            match n.compare_exchange(w, addr(w) | to, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return,
                Err(cur) => w = cur,
            }
        }
    }

    /// SOFT's `create` and the move to *inserted*: make the node's PM node
    /// durably valid (the insert's one flush), then linearize. Any thread may
    /// run it for a node in *intend-to-insert*; it is idempotent.
    fn complete_insert<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, p: usize) {
        let pnode = self.vnode(p).pptr;
        if h.load(pnode + INS) != INS_VALID {
            h.store(pnode + INS, INS_VALID);
        }
        h.flush(pnode, NODE);
        self.advance_state(p, INTEND_TO_INSERT, INSERTED);
    }

    /// SOFT's `destroy` and the moves to *intend-to-delete* and *deleted*,
    /// for a claimed node: the PM node durably records the winner (the
    /// delete's one flush), then the delete linearizes. Idempotent; any
    /// thread may run it.
    fn complete_delete<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, p: usize) {
        let v = self.vnode(p);
        let winner = v.deleter.load(Ordering::SeqCst);
        self.advance_state(p, INSERTED, INTEND_TO_DELETE);
        if h.load(v.pptr + DEL) == 0 {
            // A failure means a helper recorded the same winner.
            let _ = h.cas(v.pptr + DEL, 0, winner);
        }
        h.flush(v.pptr, NODE);
        self.advance_state(p, INTEND_TO_DELETE, DELETED);
    }

    /// Pushes PM node `p` (not yet on any chain) on bucket `b`'s chain,
    /// durably: its link persists before the head names it.
    fn chain_push<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, b: u64, p: u64) {
        let head = self.head_off(b);
        loop {
            let first = h.load(head);
            h.store(p + PNEXT, first);
            h.pwb(p, NODE);
            h.fence_unless_rmw_fences();
            if h.cas(head, first, p).is_ok() {
                break;
            }
        }
        h.flush(head, 8);
    }

    /// Whether PM node `p` is on bucket `b`'s chain (recovery only).
    fn chain_contains<B: Backend, M: Memento>(
        &self,
        h: &Handle<'_, '_, B, M>,
        b: u64,
        p: u64,
    ) -> bool {
        let mut cur = h.load(self.head_off(b));
        while cur != 0 {
            if cur == p {
                return true;
            }
            cur = h.load(cur + PNEXT) & !MARK;
        }
        false
    }

    /// Takes PM node `p`, owned by the caller, off bucket `b`'s chain:
    /// marks its `pnext` (Harris), then walks the chain unlinking every
    /// marked node until `p` is gone. The mark and each unlink are flushed
    /// before the critical section ends (DEFERFLUSH, §6.1), so the node can
    /// be freed only once no durable chain reaches it, and a rebuild
    /// recognises it as garbage if another thread's unlink was lost.
    /// Idempotent.
    fn chain_unlink<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, b: u64, p: u64) {
        h.defer_flush(p + PNEXT);
        loop {
            let n = h.load(p + PNEXT);
            if n & MARK != 0 || h.cas(p + PNEXT, n, n | MARK).is_ok() {
                break;
            }
        }
        'retry: loop {
            let mut prev = self.head_off(b);
            let mut cur = h.load(prev);
            while cur != 0 {
                let next = h.load(cur + PNEXT);
                if next & MARK != 0 {
                    // Deferred before the CAS: a thread crash right after
                    // it must not lose the flush (the re-run's walk no
                    // longer meets this unlink). A failed CAS costs a flush.
                    h.defer_flush(prev);
                    if h.cas(prev, cur, next & !MARK).is_err() {
                        continue 'retry;
                    }
                    cur = next & !MARK;
                    continue;
                }
                prev = cur + PNEXT;
                cur = next;
            }
            return;
        }
    }

    /// Whether `f` (a find of `key`) found it, helping a node in
    /// *intend-to-insert* to *inserted* first, as SOFT's insert does.
    fn found_helping<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        f: &Found,
        key: u64,
    ) -> bool {
        if f.curr == 0 || self.vnode(f.curr).key != key {
            return false;
        }
        if f.curr_state == INTEND_TO_INSERT {
            self.complete_insert(h, f.curr);
        }
        true
    }

    /// Whether `f` (a find of `key`) found a node a delete may claim: in
    /// *inserted* or *intend-to-delete*.
    fn deletable(&self, f: &Found, key: u64) -> bool {
        f.curr != 0
            && self.vnode(f.curr).key == key
            && matches!(f.curr_state, INSERTED | INTEND_TO_DELETE)
    }

    /// A fresh PM node `[key, value, stamp]` (not written back): its
    /// offset and stamp.
    fn new_node<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        key: u64,
        value: u64,
    ) -> Result<(u64, u64), MementoError> {
        let n = h.alloc(NODE)?;
        let stamp = h.now();
        h.store_private(n + KEY, key);
        h.store_private(n + VALUE, value);
        h.store_private(n + STAMP, stamp);
        Ok((n, stamp))
    }

    /// Cleanup of a PM node whose owner decided it is garbage (a delete that
    /// won, an insert that lost): off the chain, then retired (§6).
    fn discard<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, b: u64, p: u64) {
        self.chain_unlink(h, b, p);
        h.retire(p);
    }

    /// Detectable insert: `true` if `key` was absent and is now mapped to
    /// `value`, `false` (and no change) if it was present.
    pub fn insert<B: Backend, M: Memento>(
        &self,
        key: u64,
        value: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut InsertMmt,
    ) -> Result<bool, MementoError> {
        self.check_pinned(h)?;
        let b = self.bucket(key);
        // The first find decides "present" (0) or allocates the PM node; the
        // checkpoint makes both stable, and recovery reuses the block.
        let [node, stamp] = mmt.node.checkpoint_with(h, |h| {
            let f = self.find(h, b, key);
            if self.found_helping(h, &f, key) {
                return Ok([0, 0]);
            }
            // Durable before the checkpoint names it (checkpoint_with fences
            // after this pwb): a reused block must not show its previous
            // life's `ins`/`del`/`stamp` to a recovery.
            let (n, stamp) = self.new_node(h, key, value)?;
            h.pwb(n, NODE);
            Ok::<_, MementoError>([n, stamp])
        })?;
        if node == 0 {
            return Ok(false);
        }
        if h.rec() {
            if let Some(r) = replayed(&mmt.result, h) {
                let [r] = mmt.result.checkpoint(h, [r]);
                if r == 0 {
                    self.discard(h, b, node);
                }
                return Ok(r != 0);
            }
            if h.load(node + STAMP) != stamp {
                // The block was freed and reused: only a delete that won on
                // it after it was inserted frees an undiscarded node.
                mmt.result.checkpoint(h, [1]);
                return Ok(true);
            }
            if h.load(node + INS) == INS_VALID || h.load(node + DEL) != 0 {
                // It took effect (and may since have been deleted).
                h.flush(node, NODE);
                if let Some(p) = self.find_by_pptr(b, key, node) {
                    self.advance_state(p, INTEND_TO_INSERT, INSERTED);
                }
                mmt.result.checkpoint(h, [1]);
                return Ok(true);
            }
            if let Some(p) = self.find_by_pptr(b, key, node) {
                // Linked before a thread crash: resume SOFT's create.
                self.complete_insert(h, p);
                mmt.result.checkpoint(h, [1]);
                return Ok(true);
            }
            // No effect anyone can have seen: start over with the same node.
            h.set_rec(false);
            if self.chain_contains(h, b, node) {
                h.flush(self.head_off(b), 8);
            } else {
                self.chain_push(h, b, node);
            }
        } else {
            self.chain_push(h, b, node);
        }
        let linked = self.link(h, b, key, value, node, stamp);
        mmt.result.checkpoint(h, [u64::from(linked)]);
        if !linked {
            self.discard(h, b, node);
        }
        Ok(linked)
    }

    /// SOFT's insert from the DRAM link on, for PM node `node` (on the
    /// chain already): links a DRAM node in *intend-to-insert* and completes
    /// it (`true`), or finds `key` present, helps it to *inserted* and
    /// returns `false` (the caller then discards `node`).
    fn link<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        b: u64,
        key: u64,
        value: u64,
        node: u64,
        stamp: u64,
    ) -> bool {
        loop {
            let f = self.find(h, b, key);
            if self.found_helping(h, &f, key) {
                return false;
            }
            let fresh = VNode::new(key, value, node, stamp, f.curr | INTEND_TO_INSERT);
            let fresh = Box::into_raw(Box::new(fresh)) as usize;
            let linked = self.vnode(f.pred).next.compare_exchange(
                f.curr | f.pred_state,
                fresh | f.pred_state,
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
            match linked {
                Ok(_) => {
                    self.complete_insert(h, fresh);
                    return true;
                }
                Err(_) => {
                    // SAFETY: the CAS failed, so `fresh` was never published:
                    // we hold the only pointer to the box we just leaked.
                    drop(unsafe { Box::from_raw(fresh as *mut VNode) });
                }
            }
        }
    }

    /// Detectable delete: `true` if `key` was present and this call removed
    /// it, `false` if it was absent (or another delete removed it first).
    pub fn delete<B: Backend, M: Memento>(
        &self,
        key: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut DeleteMmt,
    ) -> Result<bool, MementoError> {
        self.check_pinned(h)?;
        let b = self.bucket(key);
        let mut seen = 0usize;
        let [target, stamp] = mmt.target.checkpoint_with(h, |h| {
            let f = self.find(h, b, key);
            if self.deletable(&f, key) {
                seen = f.curr;
                let v = self.vnode(f.curr);
                Ok::<_, MementoError>([v.pptr, v.stamp])
            } else {
                Ok([0, 0])
            }
        })?;
        if target == 0 {
            return Ok(false);
        }
        let tid = h.tid() as u64;
        let won = if h.rec() {
            if let Some(r) = replayed(&mmt.result, h) {
                let [r] = mmt.result.checkpoint(h, [r]);
                if r != 0 {
                    self.discard(h, b, target);
                }
                return Ok(r != 0);
            }
            if h.load(target + STAMP) != stamp {
                // Freed and reused after a full crash, before this delete
                // resumed: another delete won on it (a winner's own node is
                // freed only after its result is checkpointed).
                mmt.result.checkpoint(h, [0]);
                return Ok(false);
            }
            let recorded = h.load(target + DEL);
            let node = self.find_by_pptr(b, key, target);
            match (recorded, node) {
                (0, None) => {
                    return Err(corrupt(format!(
                        "delete of key {key}: its node {target:#x} is neither deleted nor listed"
                    )))
                }
                (0, Some(p)) => match self.vnode(p).deleter.load(Ordering::SeqCst) {
                    0 => {
                        // Nothing claimed that anyone can have seen: claim.
                        h.set_rec(false);
                        self.claim(h, p)
                    }
                    w => {
                        self.complete_delete(h, p);
                        w == tid
                    }
                },
                (w, node) => {
                    // Durable already: a listed node is flushed again by
                    // complete_delete; a trimmed one was flushed before it
                    // became *deleted*; after a full crash PM is what we read.
                    if let Some(p) = node {
                        self.complete_delete(h, p);
                    }
                    w == tid
                }
            }
        } else {
            self.claim(h, seen)
        };
        if won {
            self.find(h, b, key); // trims the node (SOFT: the winner trims)
            mmt.result.checkpoint(h, [1]);
            self.discard(h, b, target);
        } else {
            mmt.result.checkpoint(h, [0]);
        }
        Ok(won)
    }

    /// Claims DRAM node `p` for this thread's delete and completes the
    /// delete, whoever claimed it; returns whether this thread won.
    fn claim<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, p: usize) -> bool {
        let tid = h.tid() as u64;
        let won = self
            .vnode(p)
            .deleter
            .compare_exchange(0, tid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        self.complete_delete(h, p);
        won
    }

    /// Insert without mementos: SOFT itself (durable linearizable, not
    /// detectable), the baseline beside SOFT-mmt on the same table, in one
    /// critical section of its own ([`Handle::critical_section`]). The steps
    /// of [`SoftTable::insert`] without its two checkpoints: the node is
    /// written and pushed on its chain (`chain_push` writes it back before
    /// the head names it), linked in DRAM and made valid (SOFT's one flush).
    /// A crash leaves at most an invalid node on a chain, which
    /// [`SoftTable::attach`] unlinks.
    pub fn insert_plain<B: Backend, M: Memento>(
        &self,
        key: u64,
        value: u64,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<bool, MementoError> {
        h.critical_section(|h| {
            let b = self.bucket(key);
            let f = self.find(h, b, key);
            if self.found_helping(h, &f, key) {
                return Ok(false);
            }
            let (node, stamp) = self.new_node(h, key, value)?;
            self.chain_push(h, b, node);
            let linked = self.link(h, b, key, value, node, stamp);
            if !linked {
                self.discard(h, b, node);
            }
            Ok(linked)
        })
    }

    /// Delete without mementos (see [`SoftTable::insert_plain`]): claim,
    /// SOFT's `destroy` (the one flush) and the move to *deleted*; the
    /// winner trims and discards the node.
    pub fn delete_plain<B: Backend, M: Memento>(
        &self,
        key: u64,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<bool, MementoError> {
        h.critical_section(|h| {
            let b = self.bucket(key);
            let f = self.find(h, b, key);
            if !self.deletable(&f, key) {
                return Ok(false);
            }
            let target = self.vnode(f.curr).pptr;
            let won = self.claim(h, f.curr);
            if won {
                self.find(h, b, key); // trims the node
                self.discard(h, b, target);
            }
            Ok(won)
        })
    }

    /// Lookup in a critical section of its own, for the baseline.
    pub fn lookup_plain<B: Backend, M: Memento>(
        &self,
        key: u64,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<Option<u64>, MementoError> {
        h.critical_section(|h| self.lookup(key, h))
    }

    /// SOFT's `contains`, returning the value: DRAM only, wait-free.
    pub fn lookup<B: Backend, M: Memento>(
        &self,
        key: u64,
        h: &Handle<'_, '_, B, M>,
    ) -> Result<Option<u64>, MementoError> {
        self.check_pinned(h)?;
        let b = self.bucket(key);
        let mut curr = addr(self.vnode(self.head_ptr(b)).next.load(Ordering::SeqCst));
        while curr != 0 && self.vnode(curr).key < key {
            curr = addr(self.vnode(curr).next.load(Ordering::SeqCst));
        }
        if curr == 0 {
            return Ok(None);
        }
        let c = self.vnode(curr);
        let present = c.key == key
            && matches!(
                state(c.next.load(Ordering::SeqCst)),
                INSERTED | INTEND_TO_DELETE
            );
        Ok(present.then_some(c.value))
    }

    /// Runs `op` as a root operation's body. The result word is 1 / 0 for
    /// insert and delete, [`encode_opt`] of the value for lookup (values
    /// must then be below `u64::MAX`).
    pub fn run<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B, SoftMmt>,
        mmt: &mut SoftMmt,
        op: SoftOp,
    ) -> Result<u64, MementoError> {
        match op {
            SoftOp::Insert(k, v) => self.insert(k, v, h, &mut mmt.insert).map(u64::from),
            SoftOp::Delete(k) => self.delete(k, h, &mut mmt.remove).map(u64::from),
            SoftOp::Lookup(k) => self.lookup(k, h).map(encode_opt),
        }
    }

    /// The PM copy: every valid, undeleted `(key, value)` on the chains,
    /// sorted by key, read without helping (single-threaded inspection, e.g.
    /// after recovery). Fails on a corrupt or cyclic chain.
    pub fn contents<B: Backend>(&self, pool: &Pool<B>) -> Result<Vec<(u64, u64)>, MementoError> {
        let mut out = Vec::new();
        let max_nodes = pool.size() / NODE;
        let mut seen = 0u64;
        for b in 0..self.buckets {
            let mut cur = peek(pool, self.head_off(b));
            while cur != 0 {
                pool.check_range(cur, NODE, 64)?;
                seen += 1;
                if seen > max_nodes {
                    return Err(corrupt("a cycle in the persistent chains".into()));
                }
                if peek(pool, cur + INS) == INS_VALID && peek(pool, cur + DEL) == 0 {
                    out.push((peek(pool, cur + KEY), peek(pool, cur + VALUE)));
                }
                cur = peek(pool, cur + PNEXT) & !MARK;
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Whether PM node `node` is reachable on `key`'s chain, read without
    /// helping (inspection: a delete that returned `true` has taken its
    /// node off the chain, SOFT's Harris unlink). Fails on a corrupt or
    /// cyclic chain.
    pub fn on_chain<B: Backend>(
        &self,
        pool: &Pool<B>,
        key: u64,
        node: u64,
    ) -> Result<bool, MementoError> {
        let max_nodes = pool.size() / NODE;
        let mut cur = peek(pool, self.head_off(self.bucket(key)));
        for _ in 0..=max_nodes {
            if cur == 0 {
                return Ok(false);
            }
            if cur == node {
                return Ok(true);
            }
            pool.check_range(cur, NODE, 64)?;
            cur = peek(pool, cur + PNEXT) & !MARK;
        }
        Err(corrupt("a cycle in the persistent chains".into()))
    }

    /// The DRAM copy: every `(key, value)` in state *inserted* or
    /// *intend-to-delete*, sorted by key. Takes `&mut self`: no operation
    /// may run meanwhile.
    pub fn dram_contents(&mut self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for b in 0..self.buckets {
            let mut curr = addr(self.vnode(self.head_ptr(b)).next.load(Ordering::SeqCst));
            while curr != 0 {
                let c = self.vnode(curr);
                let w = c.next.load(Ordering::SeqCst);
                if matches!(state(w), INSERTED | INTEND_TO_DELETE) {
                    out.push((c.key, c.value));
                }
                curr = addr(w);
            }
        }
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit;
    use super::*;
    use crate::runtime::{Completed, Config, Runtime};
    use crate::ts::ClockKind;
    use perdure_pm::sim::VolatileFill;
    use perdure_pm::{PmError, Sim};
    use std::collections::BTreeMap;
    use std::sync::Mutex as StdMutex;

    const BASE: u64 = 4096;
    const HEAP: u64 = 1536 << 10;

    type Rt<'p> = Runtime<'p, Sim, SoftMmt>;

    fn config(threads: usize) -> Config {
        Config {
            threads,
            heap_bytes: HEAP,
            clock: ClockKind::Counter,
        }
    }

    fn new_pool(threads: usize) -> Pool<Sim> {
        let size = BASE + Rt::required_bytes(&config(threads));
        Pool::volatile("soft-mmt-test", size, Sim::default()).expect("pool")
    }

    /// A runtime and an empty table with `buckets` buckets, the table
    /// durably named by the object root.
    fn setup(pool: &Pool<Sim>, threads: usize, buckets: u64) -> (Rt<'_>, SoftTable) {
        let rt = Rt::create(pool, BASE, &config(threads)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let t = SoftTable::create(&mut h, buckets).expect("table");
        drop(h);
        rt.set_object_root(t.offset()).expect("root");
        (rt, t)
    }

    /// A deterministic xorshift64* stream.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn random_op(rng: &mut Rng, keys: u64) -> SoftOp {
        let k = rng.below(keys);
        match rng.below(3) {
            0 => SoftOp::Insert(k, rng.below(1000)),
            1 => SoftOp::Delete(k),
            _ => SoftOp::Lookup(k),
        }
    }

    /// The sequential specification: a map whose insert does not overwrite.
    fn model_apply(model: &mut BTreeMap<u64, u64>, op: SoftOp) -> u64 {
        match op {
            SoftOp::Insert(k, v) => match model.entry(k) {
                std::collections::btree_map::Entry::Occupied(_) => 0,
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(v);
                    1
                }
            },
            SoftOp::Delete(k) => u64::from(model.remove(&k).is_some()),
            SoftOp::Lookup(k) => encode_opt(model.get(&k).copied()),
        }
    }

    fn run_op(t: &SoftTable, h: &mut Handle<'_, '_, Sim, SoftMmt>, op: SoftOp) -> Completed {
        h.run_root(|h, m, _| t.run(h, m, op).expect("SOFT operation"))
    }

    fn entries(model: &BTreeMap<u64, u64>) -> Vec<(u64, u64)> {
        model.iter().map(|(k, v)| (*k, *v)).collect()
    }

    /// The PM copy and the DRAM copy both equal `want` (§5's invariant), and,
    /// no operation being in progress, the chains hold nothing else.
    fn assert_copies(t: &mut SoftTable, pool: &Pool<Sim>, want: &[(u64, u64)], what: &str) {
        assert_eq!(t.contents(pool).expect("PM copy"), want, "{what}: PM copy");
        assert_eq!(t.dram_contents(), want, "{what}: DRAM copy");
        assert_eq!(
            chain_len(t, pool),
            want.len(),
            "{what}: nodes on the chains"
        );
    }

    /// The number of PM nodes on the chains.
    fn chain_len(t: &SoftTable, pool: &Pool<Sim>) -> usize {
        (0..t.buckets())
            .map(|b| {
                let mut n = 0;
                let mut cur = peek(pool, t.head_off(b));
                while cur != 0 {
                    n += 1;
                    cur = peek(pool, cur + PNEXT) & !MARK;
                }
                n
            })
            .sum()
    }

    /// Every crash image Px86 allows now (up to 16) rebuilds to `want`: what
    /// completed operations did is durable, whatever is still unflushed.
    fn assert_durable(t: &SoftTable, pool: &Pool<Sim>, want: &[(u64, u64)], what: &str) {
        let point = pool.backend().capture();
        let (_, choices) = point.images(16, 1);
        for choice in choices {
            let words = point.materialize(&choice, VolatileFill::Zeroed);
            let image = Pool::volatile_from_words(&words, Sim::default()).expect("image");
            let mut rebuilt = SoftTable::attach(&image, t.offset()).expect("rebuild");
            assert_copies(
                &mut rebuilt,
                &image,
                want,
                &format!("{what}, crash image {choice:?}"),
            );
        }
    }

    #[test]
    fn sequential_ops_follow_the_map_model() {
        let pool = new_pool(1);
        let (rt, mut t) = setup(&pool, 1, 4);
        let mut h = rt.handle(1).expect("handle");
        let mut model = BTreeMap::new();
        let mut rng = Rng(0x5eed);
        for i in 0..1500 {
            let op = random_op(&mut rng, 40);
            let want = model_apply(&mut model, op);
            assert_eq!(run_op(&t, &mut h, op).result, want, "op {i}: {op:?}");
            if i % 100 == 0 {
                assert_copies(&mut t, &pool, &entries(&model), &format!("after op {i}"));
            }
        }
        assert_copies(&mut t, &pool, &entries(&model), "at the end");
        // A restart rebuilds the same DRAM copy from PM.
        drop(h);
        drop(t);
        drop(rt);
        pool.reincarnate();
        let rt = Rt::open_with(&pool, BASE, ClockKind::Counter).expect("reopen");
        let mut t = SoftTable::attach(&pool, rt.object_root()).expect("attach");
        assert_copies(&mut t, &pool, &entries(&model), "after a restart");
        let mut h = rt.handle(1).expect("handle");
        for k in 0..40 {
            let want = encode_opt(model.get(&k).copied());
            assert_eq!(run_op(&t, &mut h, SoftOp::Lookup(k)).result, want);
        }
    }

    /// SOFT without mementos on the same table: a model's results, both
    /// copies equal, and every crash image after a completed operation
    /// rebuilds to the model (durable linearizability, sequentially).
    #[test]
    fn the_baseline_agrees_with_a_model_and_is_durable() {
        let pool = new_pool(1);
        let (rt, mut t) = setup(&pool, 1, 4);
        let mut h = rt.handle(1).expect("handle");
        let mut model = BTreeMap::new();
        let mut rng = Rng(0xba5e);
        for i in 0..1200 {
            let op = random_op(&mut rng, 40);
            let want = model_apply(&mut model, op);
            let got = match op {
                SoftOp::Insert(k, v) => u64::from(t.insert_plain(k, v, &mut h).unwrap()),
                SoftOp::Delete(k) => u64::from(t.delete_plain(k, &mut h).unwrap()),
                SoftOp::Lookup(k) => encode_opt(t.lookup_plain(k, &mut h).unwrap()),
            };
            assert_eq!(got, want, "op {i}: {op:?}");
            if i % 150 == 0 {
                assert_copies(&mut t, &pool, &entries(&model), &format!("after op {i}"));
                assert_durable(&t, &pool, &entries(&model), &format!("after op {i}"));
            }
        }
        assert_durable(&t, &pool, &entries(&model), "at the end");
    }

    #[test]
    fn operations_refuse_to_run_outside_a_critical_section() {
        let pool = new_pool(1);
        let (rt, t) = setup(&pool, 1, 1);
        let h = rt.handle(1).expect("handle");
        assert!(matches!(t.lookup(1, &h), Err(MementoError::Config(_))));
    }

    #[test]
    fn bad_bucket_counts_and_bad_tables_are_errors() {
        let pool = new_pool(1);
        let (rt, t) = setup(&pool, 1, 2);
        let mut h = rt.handle(1).expect("handle");
        for bad in [0, 3, 2 * MAX_BUCKETS] {
            assert!(matches!(
                SoftTable::create(&mut h, bad),
                Err(MementoError::Config(_))
            ));
        }
        // Not a table: the magic is checked.
        assert!(SoftTable::attach(&pool, t.offset() + 64).is_err());
        // A chain pointing outside the pool is reported, not followed.
        pool.word(t.head_off(0))
            .expect("head")
            .store(pool.size() + 64, Ordering::SeqCst);
        assert!(matches!(
            SoftTable::attach(&pool, t.offset()),
            Err(MementoError::CorruptStructure(_)) | Err(MementoError::Pm(PmError::Pool(_)))
        ));
        // A cycle is reported too.
        pool.word(t.head_off(0))
            .expect("head")
            .store(0, Ordering::SeqCst);
        let c = run_op(&t, &mut h, SoftOp::Insert(5, 50));
        assert_eq!(c.result, 1);
        let b = t.bucket(5);
        let n = peek(&pool, t.head_off(b));
        pool.word(n + PNEXT)
            .expect("pnext")
            .store(n, Ordering::SeqCst);
        assert!(matches!(
            SoftTable::attach(&pool, t.offset()),
            Err(MementoError::CorruptStructure(_))
        ));
    }

    #[test]
    fn two_threads_on_disjoint_keys() {
        let pool = new_pool(2);
        let (rt, mut t) = setup(&pool, 2, 8);
        std::thread::scope(|s| {
            for tid in 1..=2u64 {
                let (rt, t) = (&rt, &t);
                s.spawn(move || {
                    let mut h = rt.handle(tid as usize).expect("handle");
                    let base = 1000 * tid;
                    for k in base..base + 150 {
                        assert_eq!(run_op(t, &mut h, SoftOp::Insert(k, k + 1)).result, 1);
                    }
                    for k in (base..base + 150).step_by(2) {
                        assert_eq!(run_op(t, &mut h, SoftOp::Delete(k)).result, 1);
                        assert_eq!(run_op(t, &mut h, SoftOp::Delete(k)).result, 0);
                    }
                    for k in base..base + 150 {
                        let want = if k % 2 == 0 { None } else { Some(k + 1) };
                        let got = run_op(t, &mut h, SoftOp::Lookup(k)).result;
                        assert_eq!(got, encode_opt(want), "lookup {k}");
                    }
                });
            }
        });
        let want: Vec<(u64, u64)> = [1000u64, 2000]
            .iter()
            .flat_map(|b| (*b..*b + 150).filter(|k| k % 2 == 1).map(|k| (k, k + 1)))
            .collect();
        assert_copies(&mut t, &pool, &want, "final state");
    }

    /// Two threads run `rounds` random inserts, deletes and lookups each on
    /// keys `0..keys`, with a thread crash injected at a random persistence
    /// event of each operation if `crash_within` is given. Per key, the
    /// successful inserts and deletes of both threads alternate, starting
    /// with an insert, so the final presence is their difference; lookups
    /// see the key's only value or nothing.
    fn overlapping(keys: u64, rounds: usize, buckets: u64, crash_within: Option<u64>) {
        testkit::quiet();
        let pool = new_pool(2);
        let (rt, mut t) = setup(&pool, 2, buckets);
        let value = |k: u64| 100 + k;
        let counts = StdMutex::new(vec![(0i64, 0i64); keys as usize]);
        std::thread::scope(|s| {
            for tid in 1..=2usize {
                let (rt, t, counts) = (&rt, &t, &counts);
                s.spawn(move || {
                    let mut h = rt.handle(tid).expect("handle");
                    let mut rng = Rng(0xabc + tid as u64);
                    for _ in 0..rounds {
                        let k = rng.below(keys);
                        let op = match rng.below(3) {
                            0 => SoftOp::Insert(k, value(k)),
                            1 => SoftOp::Delete(k),
                            _ => SoftOp::Lookup(k),
                        };
                        h.crash_after(crash_within.map(|n| rng.below(n)));
                        let r = run_op(t, &mut h, op).result;
                        h.crash_after(None);
                        let c = &mut counts.lock().expect("counts")[k as usize];
                        match op {
                            SoftOp::Insert(..) => c.0 += r as i64,
                            SoftOp::Delete(_) => c.1 += r as i64,
                            SoftOp::Lookup(_) => {
                                assert!(r == 0 || r == encode_opt(Some(value(k))), "lookup {k}")
                            }
                        }
                    }
                });
            }
        });
        let counts = counts.into_inner().expect("counts");
        let (ins, del) = counts.iter().fold((0, 0), |(i, d), c| (i + c.0, d + c.1));
        assert!(
            ins > 50 && del > 50,
            "{ins} inserts and {del} deletes succeeded"
        );
        let mut want = Vec::new();
        for (k, &(ins, del)) in (0..keys).zip(&counts) {
            assert!(
                ins - del == 0 || ins - del == 1,
                "key {k}: {ins} inserts, {del} deletes"
            );
            if ins - del == 1 {
                want.push((k, value(k)));
            }
        }
        assert_copies(&mut t, &pool, &want, "final state");
    }

    #[test]
    fn two_threads_on_overlapping_keys() {
        overlapping(12, 1500, 2, None);
    }

    #[test]
    fn concurrent_thread_crashes_keep_results_exact() {
        overlapping(8, 800, 1, Some(24));
    }

    #[test]
    fn freed_nodes_are_never_left_on_a_durable_chain() {
        // Each round frees a node whose chain predecessor stays (an unlink
        // through a `pnext`, not the head); after a few dozen rounds the heap
        // hands freed blocks out again. A lost unlink would leave a reused
        // block on a chain in some crash image.
        let pool = new_pool(1);
        let (rt, mut t) = setup(&pool, 1, 1);
        let mut h = rt.handle(1).expect("handle");
        let mut model = BTreeMap::new();
        let mut blocks = std::collections::BTreeSet::new();
        let mut reused = 0;
        for i in 0..160 {
            for op in [
                SoftOp::Insert(1000 + i, i),
                SoftOp::Insert(i, i),
                SoftOp::Delete(1000 + i),
            ] {
                let want = model_apply(&mut model, op);
                assert_eq!(run_op(&t, &mut h, op).result, want);
                if let SoftOp::Insert(..) = op {
                    reused += usize::from(!blocks.insert(peek(&pool, t.head_off(0))));
                }
            }
            if i >= 60 {
                assert_durable(&t, &pool, &entries(&model), &format!("round {i}"));
            }
        }
        assert_copies(&mut t, &pool, &entries(&model), "at the end");
        assert!(reused > 20, "only {reused} blocks were reused");
    }

    #[test]
    fn thread_crashes_anywhere_in_insert_and_delete_take_effect_once() {
        let pool = new_pool(1);
        let (rt, mut t) = setup(&pool, 1, 2);
        let mut h = rt.handle(1).expect("handle");
        // Neighbours in the same buckets, so chains and lists are not trivial.
        let mut model = BTreeMap::new();
        for k in 1000..1006 {
            let op = SoftOp::Insert(k, k);
            assert_eq!(run_op(&t, &mut h, op).result, model_apply(&mut model, op));
        }
        // For n = 0, 1, …: the operation on key n with a thread crash after
        // n persistence events; its result and effect must be the model's.
        type Phase = (fn(u64) -> SoftOp, u64, &'static str);
        let phases: [Phase; 4] = [
            (|n| SoftOp::Insert(n, 7 * n), 1, "insert"),
            (|n| SoftOp::Insert(n, 1), 0, "insert of a present key"),
            (SoftOp::Delete, 1, "delete"),
            (SoftOp::Delete, 0, "delete of an absent key"),
        ];
        for (op, result, what) in phases {
            let events = testkit::thread_crash_sweep(&mut h, |h, n| {
                let want = model_apply(&mut model, op(n));
                assert_eq!(want, result, "{what} {n}: the model disagrees");
                let c = run_op(&t, h, op(n));
                assert_eq!(c.result, want, "{what} {n}");
                let what = format!("{what}, crash after {n}");
                assert_copies(&mut t, &pool, &entries(&model), &what);
                assert_durable(&t, &pool, &entries(&model), &what);
                c.thread_crashes
            });
            assert!(events > 3, "{what} has {events} persistence events");
        }
    }

    /// Links a DRAM node in *intend-to-insert* for PM node `p`, as an insert
    /// does just before it validates `p`.
    fn link_intend_to_insert(
        t: &SoftTable,
        h: &Handle<'_, '_, Sim, SoftMmt>,
        key: u64,
        value: u64,
        p: u64,
    ) {
        let b = t.bucket(key);
        let f = t.find(h, b, key);
        assert!(
            f.curr == 0 || t.vnode(f.curr).key != key,
            "key {key} already listed"
        );
        let stamp = peek(h.pool(), p + STAMP);
        let fresh = VNode::new(key, value, p, stamp, f.curr | INTEND_TO_INSERT);
        let fresh = Box::into_raw(Box::new(fresh));
        t.vnode(f.pred)
            .next
            .compare_exchange(
                f.curr | f.pred_state,
                fresh as usize | f.pred_state,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .expect("no concurrent change");
    }

    /// A thread crash can also strike between a DRAM-only step and the next
    /// persistence event, where `crash_after` cannot put it. These tests build
    /// those states by hand: for n = 0, 1, … `op(n)` names a fresh operation
    /// (and may prepare for it), which runs with a crash after n events; in
    /// the re-run, `tamper` builds the state once the memento shows the
    /// progress it needs (a checkpoint newer than LOCAL, which starts each
    /// operation above every older checkpoint), and says so.
    fn crash_then_tamper(
        t: &SoftTable,
        h: &mut Handle<'_, '_, Sim, SoftMmt>,
        mut op: impl FnMut(&SoftTable, &mut Handle<'_, '_, Sim, SoftMmt>, u64) -> SoftOp,
        mut tamper: impl FnMut(&SoftTable, &mut Handle<'_, '_, Sim, SoftMmt>, &SoftMmt, u64) -> bool,
    ) -> (u64, Completed) {
        testkit::quiet();
        for n in 0.. {
            let this = op(t, h, n);
            let mut runs = 0;
            let mut tampered = false;
            h.crash_after(Some(n));
            let c = h.run_root(|h, m, _| {
                runs += 1;
                if runs == 2 && !tampered {
                    tampered = tamper(t, h, m, n);
                }
                t.run(h, m, this).expect("SOFT operation")
            });
            h.crash_after(None);
            assert!(c.thread_crashes > 0, "never reached the state to build");
            if tampered {
                return (n, c);
            }
        }
        unreachable!()
    }

    #[test]
    fn insert_recovery_resumes_create_after_the_dram_link() {
        let pool = new_pool(2);
        let (rt, mut t) = setup(&pool, 2, 1);
        let mut h = rt.handle(1).expect("handle");
        // The crash came after the push on the chain, before the DRAM node
        // was validated: finish the push (the insert flushes the head before
        // it links) and link the node as the crashed insert had.
        let (n, c) = crash_then_tamper(
            &t,
            &mut h,
            |_, _, n| SoftOp::Insert(n, 10 * n),
            |t, h, m, n| {
                let ([p, _], ts) = m.insert.node.peek(h.pool());
                let ready = ts > h.local() && p != 0 && t.chain_contains(h, t.bucket(n), p);
                if ready {
                    h.flush(t.head_off(t.bucket(n)), 8);
                    link_intend_to_insert(t, h, n, 10 * n, p);
                }
                ready
            },
        );
        assert_eq!(c.result, 1);
        let want: Vec<(u64, u64)> = (0..=n).map(|k| (k, 10 * k)).collect();
        assert_copies(&mut t, &pool, &want, "after the resumed create");
        assert_durable(&t, &pool, &want, "after the resumed create");
    }

    #[test]
    fn an_insert_that_loses_the_race_after_a_crash_cleans_up_once() {
        // An insert crashes after pushing its node; before it resumes, thread
        // 2 inserts the same key; the resumed insert finds it, checkpoints
        // `false` and discards its node — with a second crash after each of
        // its persistence events.
        let pool = new_pool(2);
        let (rt, mut t) = setup(&pool, 2, 1);
        let mut h = rt.handle(1).expect("handle");
        let mut h2 = rt.handle(2).expect("handle");
        let mut model = BTreeMap::new();
        for second in 0.. {
            let key = |n: u64| 1000 * (second + 1) + n;
            let (n, c) = crash_then_tamper(
                &t,
                &mut h,
                |_, _, n| SoftOp::Insert(key(n), 1),
                |t, h, m, n| {
                    let ([p, _], ts) = m.insert.node.peek(h.pool());
                    let ready =
                        ts > h.local() && p != 0 && t.chain_contains(h, t.bucket(key(n)), p);
                    if ready {
                        let r = run_op(t, &mut h2, SoftOp::Insert(key(n), 2)).result;
                        assert_eq!(r, 1);
                        h.crash_after(Some(second));
                    }
                    ready
                },
            );
            // The attempts that did not reach the state inserted their keys.
            model.extend((0..n).map(|m| (key(m), 1)));
            model.insert(key(n), 2);
            assert_eq!(c.result, 0, "the resumed insert lost the race");
            assert_copies(
                &mut t,
                &pool,
                &entries(&model),
                &format!("second crash at {second}"),
            );
            assert_durable(
                &t,
                &pool,
                &entries(&model),
                &format!("second crash at {second}"),
            );
            if c.thread_crashes == 1 {
                assert!(second > 3, "the cleanup has {second} persistence events");
                return;
            }
        }
    }

    /// Deletes a fresh key with a crash after the target checkpoint; before
    /// the re-run `claimer` claims the node (and destroys its PM node if
    /// `destroyed`). Returns the delete's result, the PM `del` word, and
    /// whether the key is left.
    fn delete_after_claim(claimer: u64, destroyed: bool) -> (u64, u64, bool) {
        let pool = new_pool(2);
        let (rt, mut t) = setup(&pool, 2, 1);
        let mut h = rt.handle(1).expect("handle");
        let mut target = 0;
        let (n, c) = crash_then_tamper(
            &t,
            &mut h,
            |t, h, n| {
                assert_eq!(run_op(t, h, SoftOp::Insert(n, n)).result, 1);
                SoftOp::Delete(n)
            },
            |t, h, m, n| {
                let ([p, _], ts) = m.remove.target.peek(h.pool());
                if ts <= h.local() || p == 0 {
                    return false;
                }
                target = p;
                let v = t.find_by_pptr(t.bucket(n), n, p).expect("listed");
                t.vnode(v).deleter.store(claimer, Ordering::SeqCst);
                if destroyed {
                    t.complete_delete(h, v);
                }
                true
            },
        );
        let state = t.contents(&pool).expect("PM copy");
        assert_eq!(t.dram_contents(), state, "DRAM copy equals PM copy");
        assert_durable(&t, &pool, &state, "after the delete");
        // Earlier attempts deleted their keys without a tampered claim.
        assert!(state.iter().all(|&(k, _)| k > n), "{state:?}");
        (c.result, peek(&pool, target + DEL), state.is_empty())
    }

    #[test]
    fn delete_recovery_finishes_its_own_claim() {
        assert_eq!(delete_after_claim(1, false), (1, 1, true));
    }

    #[test]
    fn delete_recovery_helps_another_claim_and_reports_false() {
        assert_eq!(delete_after_claim(2, false), (0, 2, true));
        assert_eq!(delete_after_claim(2, true), (0, 2, true));
    }

    #[test]
    fn a_pending_delete_keeps_its_target_from_reuse() {
        // Thread 2's delete of 7 is cut off by a full crash after it
        // checkpointed its target. After recovery thread 1 runs first: it
        // deletes 7 and recycles many nodes; the runtime keeps thread 2's
        // critical section pinned until it resumes, so the target's block
        // is never reused meanwhile. Thread 2's delete then resumes: it lost.
        let pool = new_pool(2);
        let (rt, t) = setup(&pool, 2, 1);
        let mut h2 = rt.handle(2).expect("handle");
        let mut image = None;
        let (_, c) = crash_then_tamper(
            &t,
            &mut h2,
            |t, h, n| {
                assert_eq!(run_op(t, h, SoftOp::Insert(7 + 100 * n, 70)).result, 1);
                SoftOp::Delete(7 + 100 * n)
            },
            |_, h, m, n| {
                let ([p, _], ts) = m.remove.target.peek(h.pool());
                let ready = ts > h.local() && p != 0;
                if ready {
                    // As one event later: the checkpoint's flush completed.
                    h.flush(m.remove.target.offset(), Checkpoint::<2>::SIZE);
                    image = Some((h.pool().backend().capture(), 7 + 100 * n));
                }
                ready
            },
        );
        assert_eq!(c.result, 1);
        let (point, key) = image.expect("captured");
        drop(h2);
        let (_, mut choices) = point.images(1, 3);
        let words = point.materialize(&choices.next().expect("image"), VolatileFill::Zeroed);
        let pool = Pool::volatile_from_words(&words, Sim::default()).expect("image");
        pool.reincarnate();
        let rt = Rt::open_with(&pool, BASE, ClockKind::Counter).expect("open");
        let mut t = SoftTable::attach(&pool, rt.object_root()).expect("rebuild");
        let mut h1 = rt.handle(1).expect("handle");
        let mut model: BTreeMap<u64, u64> =
            t.contents(&pool).expect("PM copy").into_iter().collect();
        assert_eq!(model.get(&key), Some(&70));
        let [target, _] = SoftMmt::at(rt.root_memento_offset(2))
            .remove
            .target
            .peek(&pool)
            .0;
        assert_eq!(run_op(&t, &mut h1, SoftOp::Delete(key)).result, 1);
        model.remove(&key);
        // Insert and delete: the target must not come back as a live node.
        let reused = (0..2000u64).any(|i| {
            assert_eq!(run_op(&t, &mut h1, SoftOp::Insert(5000 + i, i)).result, 1);
            if peek(&pool, target + KEY) == 5000 + i {
                model.insert(5000 + i, i);
                return true;
            }
            assert_eq!(run_op(&t, &mut h1, SoftOp::Delete(5000 + i)).result, 1);
            false
        });
        assert!(
            !reused,
            "the target's block was reused while thread 2's operation was pending"
        );
        let mut h2 = rt.handle(2).expect("handle");
        let c = run_op(&t, &mut h2, SoftOp::Delete(key));
        assert_eq!(c.result, 0, "the resumed delete lost to thread 1's");
        assert_copies(&mut t, &pool, &entries(&model), "after both deletes");
    }

    /// Full crashes ([`testkit::full_crash_sweep`]): threads run random
    /// operations on keys of their own (in two shared buckets), then look
    /// up all of them, which reads the rebuilt DRAM copy. In every recovered
    /// crash image each thread's results must be those of its sequential
    /// model — the cut-off operation resumed exactly once, with its result —
    /// and the PM copy the final state, with nothing else on the chains.
    fn full_crash_sweep(threads: u64, ops: usize, seed: u64) -> testkit::Sweep {
        const KEYS: u64 = 5;
        let workloads: Vec<Vec<SoftOp>> = (0..threads)
            .map(|t| {
                let mut rng = Rng(seed + t);
                let key = |k| 100 * t + k;
                let mut w: Vec<SoftOp> = (0..ops)
                    .map(|_| match random_op(&mut rng, KEYS) {
                        SoftOp::Insert(k, v) => SoftOp::Insert(key(k), v),
                        SoftOp::Delete(k) => SoftOp::Delete(key(k)),
                        SoftOp::Lookup(k) => SoftOp::Lookup(key(k)),
                    })
                    .collect();
                w.extend((0..KEYS).map(|k| SoftOp::Lookup(key(k))));
                w
            })
            .collect();
        let mut last = BTreeMap::new();
        let expected: Vec<Vec<u64>> = workloads
            .iter()
            .map(|w| w.iter().map(|op| model_apply(&mut last, *op)).collect())
            .collect();
        let counts: Vec<usize> = workloads.iter().map(Vec::len).collect();
        testkit::full_crash_sweep::<SoftMmt, SoftTable>(
            &counts,
            |rt| SoftTable::create(&mut rt.handle(1).expect("handle"), 2).expect("table"),
            |pool, root| SoftTable::attach(pool, root).expect("rebuild"),
            SoftTable::offset,
            &|t, tid, i, h, m, _| t.run(h, m, workloads[tid - 1][i]).expect("SOFT operation"),
            |t, pool, results| {
                if results != expected {
                    return Err(format!("results differ from the model's: {expected:?}"));
                }
                let pm = t.contents(pool).map_err(|e| e.to_string())?;
                if pm != entries(&last) || chain_len(t, pool) != pm.len() {
                    return Err(format!(
                        "PM copy {pm:?}, {} chain nodes",
                        chain_len(t, pool)
                    ));
                }
                Ok(())
            },
        )
    }

    #[test]
    fn full_crashes_anywhere_are_recovered_exactly_once_one_thread() {
        let sweep = full_crash_sweep(1, 40, 11);
        assert!(
            sweep.points >= 60 && sweep.images >= sweep.points,
            "{sweep:?}"
        );
    }

    #[test]
    fn full_crashes_anywhere_are_recovered_exactly_once_two_threads() {
        let sweep = full_crash_sweep(2, 25, 23);
        assert!(
            sweep.points >= 60 && sweep.images >= sweep.points,
            "{sweep:?}"
        );
    }
}
