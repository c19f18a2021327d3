//! CX's queue of mutations (seed §4: "the consensus mechanism … based on a
//! turn queue \[39\]") and the wait-free reclamation of its nodes (§4: "the
//! nodes of the wait-free queue … are tracked with a wait-free
//! implementation of hazard pointers with reference counting").
//!
//! ## The queue
//!
//! A singly linked list from a sentinel to `tail`. The order of the nodes is
//! the sequential history `H` every replica follows; a node's `ticket` is its
//! position (the sentinel of an open pool has the sequence `cur_comb`
//! persisted, each node the previous one's plus one, modulo 2^44 as in
//! [`crate::sti`]).
//!
//! `enqueue` is the turn-queue enqueue of Ramalhete and Correia (reference
//! \[39\]) as the published CX uses it, in four steps:
//!
//! 1. publish the node in `enqueuers[tid]`;
//! 2. link a published node after `tail` (`tail.next` CAS from null), the
//!    one whose turn it is: the first non-empty `enqueuers[(j + t) % N]`,
//!    `j = 1..N`, where `t` is the thread that enqueued the current tail;
//! 3. give the linked node its ticket (tail's plus one) and advance `tail`
//!    to it (CAS);
//! 4. clear the enqueuer of the node that is now `tail`.
//!
//! Every thread helps with whatever step the tail is at, so after at most
//! `N` iterations the caller's own node is in the queue: the turns give each
//! announced node a place within `N` advances of `tail`. perdure checks that
//! instead of assuming it — the caller only leaves once its node has a
//! ticket — so a mistake in the argument would cost time, not a lost node.
//!
//! ## Reclamation
//!
//! A node stops being needed once it is behind the head of the replica
//! `cur_comb` designates *and* no replica will replay it. CX (and perdure)
//! decide the second part by a window: the thread whose `cur_comb` CAS moved
//! the designated head past a range of nodes *retires* that range into its
//! own FIFO, and *disposes* of a retired node once it is `window` tickets
//! behind the newest node that thread retired. Disposing self-links the node
//! (`next = self`): a replica whose head, or any node on its way forward, is
//! self-linked can no longer be brought up to date by replay, and is copied
//! from the designated replica (§4: "if a node is disposed of (or
//! equivalently "self-linked") during memory reclamation, this can
//! invalidate a replica and force a future updater thread to make a new copy
//! from curComb").
//!
//! Freeing follows the published `HazardPointersCX`: disposing of node `P`
//! hands `P`'s successor `S` to the thread's hazard-pointer retired list, and
//! `S` is freed once it is itself self-linked, no hazard pointer names it,
//! and no `Combined` head refers to it (`refcnt == 0`). Handing over the
//! *successor* is what makes the traversal's validation sound: a thread that
//! reads `S = P.next`, publishes `S` as a hazard pointer and then sees
//! `P.next == S` again knows `P` was not yet self-linked, so `S` was not yet
//! in any retired list, so any later scan sees the hazard pointer.
//!
//! ## Bounds
//!
//! Each thread's FIFO holds nodes whose tickets lie within `window` of each
//! other: at most `window` nodes. A disposed node is freed at the first scan
//! after the last hazard pointer (5 per thread) and the last `Combined` head
//! (`2N`) naming it go away; scans run when a retired list exceeds
//! [`scan_threshold`]. So at most about `N·(window + scan_threshold) + 7N`
//! nodes are alive beyond those not yet behind `cur_comb` — each holding its
//! boxed closure.

use crate::sti::{self, INVALID};
use crate::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU64,
    Ordering::{Release, SeqCst},
};
use std::collections::VecDeque;
use std::ptr::null_mut;

/// Hazard pointer slots of each thread.
pub(crate) const HP_TAIL: usize = 0;
pub(crate) const HP_TAIL_NEXT: usize = 1;
/// The two slots a traversal alternates between.
pub(crate) const HP_WALK: [usize; 2] = [2, 3];
/// The thread's own node, from its enqueue until its result is read.
pub(crate) const HP_MY: usize = 4;
const HPS: usize = 5;

/// A traversal along the queue ({3}–{4} of `applyUpdate`) with the two
/// hazard pointers of `HP_WALK` taken in turn: the node it stands on is
/// protected by one of them (or, as a replica's head, by its reference
/// count), and each step publishes the successor in the *other* one, so
/// the node it steps off stays protected while [`TurnQueue::protect_next`]
/// re-reads its link to validate the successor.
#[derive(Debug)]
pub(crate) struct Walk {
    /// The index into `HP_WALK` of the slot the next step publishes in.
    next: usize,
}

impl Walk {
    /// A walk standing on a head (kept by its reference count).
    pub(crate) fn new() -> Walk {
        Walk { next: 1 }
    }

    /// Steps from `m` to its successor, published in the slot that does not
    /// protect `m` and validated ([`TurnQueue::protect_next`]); `None`
    /// (standing still) when `m` has no successor or has been disposed of.
    #[inline]
    pub(crate) fn step<J>(
        &mut self,
        q: &TurnQueue<J>,
        tid: usize,
        m: &Node<J>,
    ) -> Option<*mut Node<J>> {
        let next = q.protect_next(tid, HP_WALK[self.next], m)?;
        self.next ^= 1;
        Some(next)
    }
}

/// A node of the queue of mutations (seed §4: mutation, result, next,
/// ticket, refcnt).
pub(crate) struct Node<J> {
    /// The closure (`mutation`); `None` for a sentinel.
    pub job: Option<J>,
    /// The closure's result, written by every thread that applies the node
    /// (the same word each time: closures are deterministic).
    pub result: AtomicU64,
    /// Whether the closure panicked (then `result` is 0).
    pub panicked: AtomicBool,
    pub next: AtomicPtr<Node<J>>,
    /// The node's position in the queue; [`INVALID`] until it is linked.
    pub ticket: AtomicU64,
    /// How many `Combined` heads name the node.
    pub refcnt: AtomicU64,
    /// The thread that enqueued it (the turn of step 2).
    pub enq_tid: usize,
}

impl<J> Node<J> {
    /// A new, unlinked node on the heap.
    pub(crate) fn boxed(job: Option<J>, enq_tid: usize) -> *mut Node<J> {
        Box::into_raw(Box::new(Node {
            job,
            result: AtomicU64::new(0),
            panicked: AtomicBool::new(false),
            next: AtomicPtr::new(null_mut()),
            ticket: AtomicU64::new(INVALID),
            refcnt: AtomicU64::new(0),
            enq_tid,
        }))
    }

    /// Whether the node has been disposed of (`next == self`).
    #[inline]
    pub(crate) fn is_self_linked(&self) -> bool {
        std::ptr::eq(self.next.load(SeqCst), self)
    }

    #[inline]
    pub(crate) fn ticket(&self) -> u64 {
        self.ticket.load(SeqCst)
    }
}

#[repr(align(128))]
struct HpRow<J>([AtomicPtr<Node<J>>; HPS]);

#[repr(align(128))]
struct Enqueuer<J>(AtomicPtr<Node<J>>);

/// A thread's part of the reclamation, touched only by that thread.
pub(crate) struct Retirer<J> {
    /// Retired (behind `cur_comb`'s head) but still linked, oldest first.
    fifo: VecDeque<*mut Node<J>>,
    /// Successors of disposed nodes, freed when [`TurnQueue::scan`] finds
    /// them unreachable.
    retired: Vec<*mut Node<J>>,
}

impl<J> Retirer<J> {
    pub(crate) fn new() -> Retirer<J> {
        Retirer {
            fifo: VecDeque::new(),
            retired: Vec::new(),
        }
    }
}

// SAFETY: the raw pointers are nodes of a `TurnQueue<J>` whose `J` is
// `Send + Sync`; a `Retirer` is used by one thread at a time (it lives in a
// mutex of its thread id).
unsafe impl<J: Send + Sync> Send for Retirer<J> {}

/// The number of retired nodes above which a thread scans its list.
pub(crate) fn scan_threshold(threads: usize) -> usize {
    2 * (HPS + 2) * threads + 16
}

/// The queue of mutations with its hazard pointers. See the module docs.
pub(crate) struct TurnQueue<J> {
    tail: AtomicPtr<Node<J>>,
    enqueuers: Box<[Enqueuer<J>]>,
    hp: Box<[HpRow<J>]>,
    /// The sentinel this queue started with (for `Drop`).
    first: *mut Node<J>,
    /// Counters: nodes disposed of, nodes freed.
    pub disposed: std::sync::atomic::AtomicU64,
    pub freed: std::sync::atomic::AtomicU64,
}

// SAFETY: the queue shares nodes between threads through atomics; a node
// carries a `J: Send + Sync` and is freed by one thread once no other can
// reach it (hazard pointers and reference counts, see the module docs).
unsafe impl<J: Send + Sync> Send for TurnQueue<J> {}
// SAFETY: as above.
unsafe impl<J: Send + Sync> Sync for TurnQueue<J> {}

impl<J> TurnQueue<J> {
    /// A queue of one sentinel with ticket `first_ticket`, for `threads`
    /// thread ids. The sentinel starts with `refcnt` 1: the caller makes it
    /// the head of the designated `Combined`.
    pub(crate) fn new(threads: usize, first_ticket: u64) -> TurnQueue<J> {
        let first = Node::boxed(None, 0);
        // SAFETY: just allocated, not shared yet.
        let s = unsafe { &*first };
        s.ticket.store(first_ticket, SeqCst);
        s.refcnt.store(1, SeqCst);
        TurnQueue {
            tail: AtomicPtr::new(first),
            enqueuers: (0..threads)
                .map(|_| Enqueuer(AtomicPtr::new(null_mut())))
                .collect(),
            hp: (0..threads)
                .map(|_| HpRow(std::array::from_fn(|_| AtomicPtr::new(null_mut()))))
                .collect(),
            first,
            disposed: std::sync::atomic::AtomicU64::new(0),
            freed: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The sentinel the queue started with.
    pub(crate) fn first(&self) -> *mut Node<J> {
        self.first
    }

    /// Publishes `p` in hazard pointer `slot` of `tid`.
    #[inline]
    pub(crate) fn protect(&self, tid: usize, slot: usize, p: *mut Node<J>) {
        self.hp[tid].0[slot].store(p, SeqCst);
    }

    /// One step of a walk along the queue ({3}–{4} of `applyUpdate`): `m`'s
    /// successor, published in hazard pointer `slot` of `tid` and validated
    /// (`m.next` still names it after the hazard pointer does, so it was in
    /// no retired list when a scan could see the pointer). `None` when `m`
    /// has no successor, or has been disposed of — its `next` names `m`
    /// itself, whether the self-link happened before the first load or
    /// between the two: the walker must then copy, never step to `m` again
    /// (it would run `m`'s closure a second time on the replica; found by
    /// the `shuttle:ptm` schedules, see `tests/shuttle_cx.rs`).
    #[inline]
    pub(crate) fn protect_next(
        &self,
        tid: usize,
        slot: usize,
        m: &Node<J>,
    ) -> Option<*mut Node<J>> {
        let next = m.next.load(SeqCst);
        if next.is_null() || std::ptr::eq(next, m) {
            return None;
        }
        self.protect(tid, slot, next);
        (m.next.load(SeqCst) == next).then_some(next)
    }

    /// Clears hazard pointers `HP_WALK` of `tid` (a [`Walk`]'s, when it ends).
    pub(crate) fn clear_walk(&self, tid: usize) {
        for s in HP_WALK {
            self.clear(tid, s);
        }
    }

    /// Clears hazard pointer `slot` of `tid`: a Release store (a plain
    /// `mov` on x86, where SeqCst would be an `xchg` that waits for the
    /// store buffer), which orders this thread's reads through the pointer
    /// before it; a `scan` that sees the null frees after them.
    #[inline]
    pub(crate) fn clear(&self, tid: usize, slot: usize) {
        self.hp[tid].0[slot].store(null_mut(), Release);
    }

    fn n(&self) -> usize {
        self.enqueuers.len()
    }

    /// Appends `my` (unlinked, protected by `tid`'s [`HP_MY`]) to the queue:
    /// when this returns, `my` is linked and has its ticket.
    pub(crate) fn enqueue(&self, my: *mut Node<J>, tid: usize) {
        let n = self.n();
        // SAFETY: `my` is the caller's node, protected by its hazard pointer.
        let me = unsafe { &*my };
        self.enqueuers[tid].0.store(my, SeqCst);
        let mut iterations = 0usize;
        loop {
            if self.enqueuers[tid].0.load(SeqCst).is_null() {
                break; // a helper did all four steps
            }
            if iterations >= n && me.ticket() != INVALID {
                break; // linked (the turn argument says by now; checked)
            }
            iterations += 1;
            let ltail = self.tail.load(SeqCst);
            self.protect(tid, HP_TAIL, ltail);
            if ltail != self.tail.load(SeqCst) {
                continue;
            }
            // SAFETY: `ltail` was the tail after our hazard pointer named
            // it; the tail is never retired (only nodes behind the
            // designated head are), so no scan can free it now.
            let lt = unsafe { &*ltail };
            // Step 4 for the node that is tail now.
            let owner = &self.enqueuers[lt.enq_tid].0;
            if owner.load(SeqCst) == ltail {
                let _ = owner.compare_exchange(ltail, null_mut(), SeqCst, SeqCst);
            }
            // Step 2: link the node whose turn it is.
            for j in 1..=n {
                let help = self.enqueuers[(j + lt.enq_tid) % n].0.load(SeqCst);
                if help.is_null() {
                    continue;
                }
                let _ = lt.next.compare_exchange(null_mut(), help, SeqCst, SeqCst);
                break;
            }
            // Step 3: ticket, then advance the tail.
            let lnext = lt.next.load(SeqCst);
            if !lnext.is_null() {
                self.protect(tid, HP_TAIL_NEXT, lnext);
                if ltail != self.tail.load(SeqCst) {
                    continue;
                }
                // SAFETY: `lnext` was `tail.next` while `ltail` was still
                // the tail (checked after the hazard pointer was set): a
                // node after the tail is not retired.
                let ln = unsafe { &*lnext };
                ln.ticket.store(sti::seq_add(lt.ticket(), 1), SeqCst);
                let _ = self.tail.compare_exchange(ltail, lnext, SeqCst, SeqCst);
            }
        }
        self.enqueuers[tid].0.store(null_mut(), SeqCst);
        self.clear(tid, HP_TAIL);
        self.clear(tid, HP_TAIL_NEXT);
    }

    /// Retires the nodes from `from` (the previously designated head) up to
    /// `to` (the new one), exclusive, into `r`'s FIFO, then disposes of those
    /// more than `window` tickets behind the newest, and scans if the retired
    /// list has grown past [`scan_threshold`].
    ///
    /// # Safety
    ///
    /// `from .. to` must be the nodes the caller's `cur_comb` CAS moved the
    /// designated head past (each retired exactly once, by that CAS's
    /// winner), with `to` reachable from `from`; the caller must hold the
    /// previously designated replica under a shared lock (so `from` is alive)
    /// and `to` protected.
    pub(crate) unsafe fn retire_range(
        &self,
        r: &mut Retirer<J>,
        from: *mut Node<J>,
        to: *mut Node<J>,
        window: u64,
    ) {
        let mut p = from;
        while p != to && !p.is_null() {
            r.fifo.push_back(p);
            // SAFETY: nodes between the old and the new designated head are
            // neither disposed nor freed before this retirement (caller's
            // contract), so `p` is alive and its `next` is the real one.
            p = unsafe { &*p }.next.load(SeqCst);
        }
        let Some(&newest) = r.fifo.back() else {
            return;
        };
        // SAFETY: in our FIFO, hence not yet disposed, hence alive.
        let newest_t = unsafe { &*newest }.ticket();
        while let Some(&old) = r.fifo.front() {
            // SAFETY: as above.
            let o = unsafe { &*old };
            if sti::seq_dist(newest_t, o.ticket()) < window {
                break;
            }
            r.fifo.pop_front();
            let succ = o.next.load(SeqCst);
            o.next.store(old, SeqCst); // dispose: self-link
            self.disposed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if !succ.is_null() {
                r.retired.push(succ);
            }
        }
        if r.retired.len() > scan_threshold(self.n()) {
            self.scan(r);
        }
    }

    /// Frees the retired nodes that are self-linked, named by no hazard
    /// pointer and by no `Combined` head (checked in that order).
    pub(crate) fn scan(&self, r: &mut Retirer<J>) {
        let mut freed = 0;
        r.retired.retain(|&p| {
            // SAFETY: a node in a retired list is freed only here, by its
            // owner, and is alive until then.
            let node = unsafe { &*p };
            if !node.is_self_linked() {
                return true;
            }
            if self
                .hp
                .iter()
                .any(|row| row.0.iter().any(|h| h.load(SeqCst) == p))
            {
                return true;
            }
            if node.refcnt.load(SeqCst) != 0 {
                return true;
            }
            // SAFETY: `p` came from `Node::boxed`; it is self-linked, so its
            // predecessor was disposed of before it joined this list and no
            // traversal can newly reach it; no hazard pointer named it after
            // that, and no head refers to it. It is in one retired list only
            // (a node has one predecessor), and is dropped from it here.
            drop(unsafe { Box::from_raw(p) });
            freed += 1;
            false
        });
        self.freed
            .fetch_add(freed, std::sync::atomic::Ordering::Relaxed);
    }

    /// Frees every node still allocated, given every thread's [`Retirer`]
    /// (with `&mut`: no thread is running).
    pub(crate) fn free_all<'r>(&mut self, retirers: impl Iterator<Item = &'r mut Retirer<J>>)
    where
        J: 'r,
    {
        // Every live node is reachable by intact `next` links from the
        // first sentinel, a FIFO or a retired list: a live node that is in
        // no list has a predecessor that was not disposed of.
        let mut starts = vec![self.first];
        for r in retirers {
            starts.extend(r.fifo.drain(..));
            starts.append(&mut r.retired);
        }
        let mut seen = std::collections::HashSet::new();
        for s in starts {
            let mut p = s;
            while !p.is_null() && seen.insert(p as usize) {
                // SAFETY: reachable as argued above, and not freed: nothing
                // runs concurrently and each node is visited once.
                let next = unsafe { &*p }.next.load(SeqCst);
                p = if next == p { null_mut() } else { next };
            }
        }
        for p in seen {
            // SAFETY: each live node once; `Box::into_raw` made it.
            drop(unsafe { Box::from_raw(p as *mut Node<J>) });
        }
    }
}

#[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
mod tests {
    use super::*;

    fn tickets(q: &TurnQueue<u32>) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        let mut p = q.first;
        while !p.is_null() {
            let n = unsafe { &*p };
            out.push((n.ticket(), n.job.unwrap_or(0)));
            p = n.next.load(SeqCst);
        }
        out
    }

    #[test]
    fn sequential_enqueues_get_consecutive_tickets() {
        let mut q = TurnQueue::<u32>::new(3, 40);
        for i in 1..=5 {
            let n = Node::boxed(Some(i), (i % 3) as usize);
            q.protect(0, HP_MY, n);
            q.enqueue(n, (i % 3) as usize);
        }
        assert_eq!(
            tickets(&q),
            vec![(40, 0), (41, 1), (42, 2), (43, 3), (44, 4), (45, 5)]
        );
        q.free_all(std::iter::empty());
    }

    #[test]
    fn disposal_self_links_and_frees_behind_a_window() {
        let mut q = TurnQueue::<u32>::new(1, 0);
        let mut nodes = vec![q.first];
        for i in 1..=40 {
            let n = Node::boxed(Some(i), 0);
            q.protect(0, HP_MY, n);
            q.enqueue(n, 0);
            nodes.push(n);
        }
        q.clear(0, HP_MY);
        let mut r = Retirer::new();
        // The designated head moves from the sentinel to node 30; node 30
        // carries the head's reference now.
        unsafe {
            (*nodes[0]).refcnt.store(0, SeqCst);
            (*nodes[30]).refcnt.store(1, SeqCst);
            q.retire_range(&mut r, nodes[0], nodes[30], 8);
        }
        // Tickets 0..=21 are at least 8 behind the newest retired (29).
        assert_eq!(q.disposed.load(std::sync::atomic::Ordering::Relaxed), 22);
        for (i, &n) in nodes.iter().enumerate().take(30) {
            assert_eq!(unsafe { &*n }.is_self_linked(), i <= 21, "node {i}");
        }
        assert_eq!(r.fifo.len(), 8);
        q.scan(&mut r);
        // Successors of disposed nodes 1..=21 are themselves disposed and
        // free; node 22 (successor of 21) is still linked.
        assert_eq!(q.freed.load(std::sync::atomic::Ordering::Relaxed), 21);
        assert_eq!(r.retired.len(), 1);
        let mut rs = [r];
        q.free_all(rs.iter_mut());
    }
}

/// The bodies of `tests/loom_cx_queue.rs` (the queue is crate-private, so
/// the scenarios live here, built only under `--cfg perdure_loom`): run
/// inside `loom::model`, they check every interleaving of
///
/// * two and three threads enqueueing one node each: every node is linked
///   once, tickets are consecutive in list order, the tail is the last node
///   and every enqueuer leaves its slot empty;
/// * a traversal stepping from a node to its successor (hazard pointer,
///   then validation, as `core::update_on` does) against a thread retiring,
///   disposing of and scanning those nodes: a successor the traversal
///   validated is never freed under it, and everything disposed of and not
///   protected is freed;
/// * a [`Walk`] of two steps against the same thread: the node the second
///   step leaves is still protected while the step validates its successor.
#[cfg(perdure_loom)]
#[doc(hidden)]
pub mod model_checks {
    use super::*;
    use loom::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst as Sc};

    /// `threads` threads enqueue one node each.
    pub fn enqueuers(threads: usize) {
        let q = Arc::new(TurnQueue::<usize>::new(threads, 0));
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let q = q.clone();
                loom::thread::spawn(move || {
                    let n = Node::boxed(Some(t + 1), t);
                    q.protect(t, HP_MY, n);
                    q.enqueue(n, t);
                    // SAFETY: ours, protected.
                    let tk = unsafe { &*n }.ticket();
                    assert!((1..=threads as u64).contains(&tk), "ticket {tk}");
                    q.clear(t, HP_MY);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let mut seen = Vec::new();
        let mut p = q.first;
        let mut expect = 0;
        while !p.is_null() {
            // SAFETY: nothing is retired in this test.
            let n = unsafe { &*p };
            assert_eq!(n.ticket(), expect, "tickets follow the list");
            expect += 1;
            if let Some(j) = n.job {
                assert!(!seen.contains(&j), "node {j} linked twice");
                seen.push(j);
            }
            if n.next.load(Sc).is_null() {
                assert_eq!(q.tail.load(Sc), p, "the tail is the last node");
            }
            p = n.next.load(Sc);
        }
        assert_eq!(seen.len(), threads, "every node linked");
        assert!(q.enqueuers.iter().all(|e| e.0.load(Sc).is_null()));
        let mut q = Arc::try_unwrap(q).ok().expect("threads joined");
        q.free_all(std::iter::empty());
    }

    /// A job that records its drop (when its node is freed).
    struct Tracked(usize, std::sync::Arc<[AtomicBool; 5]>);
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.1[self.0].store(true, Sc);
        }
    }

    /// A queue of two threads with nodes 1 to 4 after its sentinel, each
    /// recording its drop in `dropped[i]`; node 1 is a `Combined` head
    /// (reference count 1). Returns the queue and the nodes, as addresses
    /// (to move into loom threads).
    fn four_nodes(
        dropped: &std::sync::Arc<[AtomicBool; 5]>,
    ) -> (Arc<TurnQueue<Tracked>>, [usize; 4]) {
        let q = Arc::new(TurnQueue::<Tracked>::new(2, 0));
        let nodes = [1, 2, 3, 4].map(|i| {
            let n = Node::boxed(Some(Tracked(i, dropped.clone())), 0);
            q.protect(0, HP_MY, n);
            q.enqueue(n, 0);
            n as usize
        });
        q.clear(0, HP_MY);
        // SAFETY: just linked, nothing retired yet.
        unsafe { &*(nodes[0] as *mut Node<Tracked>) }
            .refcnt
            .store(1, Sc);
        unsafe { &*q.first }.refcnt.store(0, Sc);
        (q, nodes)
    }

    /// The retiring thread of the reclamation models, beside `walker`: the
    /// designated head moves from the sentinel to node 4 (`n4`), a window of
    /// 1 disposes of the sentinel and nodes 1 and 2 (their successors, nodes
    /// 1 to 3, join the retired list), and a scan runs; once the walker has
    /// joined, a second scan. Returns the retirer, for `free_all`.
    fn retire_beside(
        q: &TurnQueue<Tracked>,
        n4: usize,
        walker: loom::thread::JoinHandle<()>,
    ) -> Retirer<Tracked> {
        let mut r = Retirer::new();
        // SAFETY: as `retire_range` requires (single retirer).
        unsafe { q.retire_range(&mut r, q.first, n4 as *mut _, 1) };
        q.scan(&mut r);
        walker.join().unwrap();
        q.scan(&mut r);
        r
    }

    /// A traversal steps from node 1 to node 2 while another thread
    /// retires, disposes of and scans them.
    pub fn a_validated_successor_is_not_freed() {
        {
            let dropped: std::sync::Arc<[AtomicBool; 5]> = std::sync::Arc::new(Default::default());
            let (q, [n1, _, _, n4]) = four_nodes(&dropped);
            let walker = {
                let (q, dropped) = (q.clone(), dropped.clone());
                loom::thread::spawn(move || {
                    let mn = n1 as *mut Node<Tracked>;
                    // SAFETY: kept alive by its reference count.
                    let m = unsafe { &*mn };
                    if let Some(next) = q.protect_next(1, HP_WALK[0], m) {
                        // Stepping from a disposed node to itself would run
                        // its closure twice on the walker's replica.
                        assert_ne!(next, mn, "a walk stepped from a disposed node to itself");
                        assert!(!dropped[2].load(Sc), "a validated successor was freed");
                        // SAFETY: validated under the hazard pointer.
                        assert_eq!(unsafe { &*next }.ticket(), 2);
                    }
                    q.clear(1, HP_WALK[0]);
                })
            };
            let mut r = retire_beside(&q, n4, walker);
            assert!(dropped[2].load(Sc), "node 2, unprotected at last, is freed");
            assert!(!dropped[1].load(Sc), "node 1 is still a head");
            let mut q = Arc::try_unwrap(q).ok().expect("joined");
            q.free_all(std::iter::once(&mut r));
        }
    }

    /// Whether `tid`'s hazard pointers name `p`.
    fn protected<J>(q: &TurnQueue<J>, tid: usize, p: *mut Node<J>) -> bool {
        q.hp[tid].0.iter().any(|h| h.load(Sc) == p)
    }

    /// A [`Walk`] steps from a head, node 1, to node 2 and on to node 3
    /// while another thread retires, disposes of and scans nodes 1 to 3.
    pub fn a_walk_keeps_the_node_it_steps_off_protected() {
        let dropped: std::sync::Arc<[AtomicBool; 5]> = std::sync::Arc::new(Default::default());
        let (q, [n1, n2, n3, n4]) = four_nodes(&dropped);
        let walker = {
            let (q, dropped) = (q.clone(), dropped.clone());
            loom::thread::spawn(move || {
                let p = |n: usize| n as *mut Node<Tracked>;
                let mut walk = Walk::new();
                // SAFETY: node 1 is kept alive by its reference count.
                if let Some(next) = walk.step(&q, 1, unsafe { &*p(n1) }) {
                    assert_eq!(next, p(n2));
                    // SAFETY: validated under the walk's hazard pointer.
                    if let Some(next) = walk.step(&q, 1, unsafe { &*p(n2) }) {
                        assert_eq!(next, p(n3));
                        assert!(
                            protected(&q, 1, p(n2)) && protected(&q, 1, p(n3)),
                            "the walk's second step left the node it stepped off, or its successor, unprotected"
                        );
                        assert!(
                            !dropped[2].load(Sc) && !dropped[3].load(Sc),
                            "a node under the walk was freed"
                        );
                    }
                }
                q.clear_walk(1);
            })
        };
        let mut r = retire_beside(&q, n4, walker);
        assert!(dropped[2].load(Sc), "node 2, unprotected at last, is freed");
        let mut q = Arc::try_unwrap(q).ok().expect("joined");
        q.free_all(std::iter::once(&mut r));
    }
}
