//! DurableQ: the durable (non-detectable) Michael–Scott queue of Friedman,
//! Herlihy, Marathe and Petrank, "A Persistent Lock-Free Queue for
//! Non-Volatile Memory" (PPoPP 2018, the *durable queue*), the first
//! baseline of seed 001 §7.1.
//!
//! A Michael–Scott queue in persistent memory: a list from `head` (a
//! sentinel) to the last node, `tail` a hint at or one behind the last node.
//! A node is one line: `[value, next, deqThreadID]` (`deqThreadID` 0: not
//! dequeued; thread ids are 1..=P). Every thread has a slot
//! `returnedValues\[tid\]` naming a *returned-value block* `[state, value]`
//! (state 0 = the dequeue is in progress, 1 = it found the queue empty,
//! 2 = it returned `value`).
//!
//! ## The operations (step labels as in the code)
//!
//! **enqueue(v)** — the paper's `enq`:
//! * E1. Allocate a node `[v, null, 0]`; `BARRIER(node)`.
//! * E2. Loop: `last = tail`, `next = last.next`; retry if `tail` moved.
//! * E3. If `next` is null: CAS `last.next` null → node; on success
//!   `BARRIER_OPT(&last.next)`, CAS `tail` last → node, return (the
//!   linearization point is the link CAS).
//! * E4. Otherwise help: `BARRIER_OPT(&last.next)`, CAS `tail` last → next.
//!   A link is always flushed before `tail` moves past it, so every link from
//!   `head` to `tail` is persisted.
//!
//! **dequeue()** — the paper's `deq(threadID)`:
//! * D1. Allocate a new returned-value block; `BARRIER` it; store it in
//!   `returnedValues\[tid\]`; `BARRIER` the slot. (Retire the previous block:
//!   reclamation, not in the paper.)
//! * D2. Loop: `first = head`, `last = tail`, `next = first.next`; retry if
//!   `head` moved.
//! * D3. If `first == last`: if `next` is null write EMPTY to the block,
//!   `BARRIER` it and return `None` (linearized at the load of null);
//!   otherwise `BARRIER_OPT(&last.next)`, CAS `tail` last → next, retry.
//! * D4. Otherwise CAS `next.deqThreadID` 0 → tid (the linearization point);
//!   on success `BARRIER` it, write `next.value` to the block,
//!   `BARRIER_OPT` the block, CAS `head` first → next, and return the value.
//! * D5. If another thread marked `next`, help it finish — the paper's "same
//!   context" check: read its block from `returnedValues`, and only if `head`
//!   is still `first` (so the block is that dequeue's), `BARRIER` the mark,
//!   write the value into its block, `BARRIER_OPT` it, CAS `head`. Retry.
//! * D6 (the §6.1 fix). Whoever's CAS moves `head` retires `first`; the
//!   owner of the mark and whoever moved `head` DEFERFLUSH `head`, so `head`
//!   is durable past the node before the critical section ends — before
//!   `first` can be freed and before the owner's next dequeue replaces (and
//!   retires) its returned-value block.
//!
//! **recovery** ([`DurableQueue::open`], single-threaded, after a crash):
//! * R1. Validate the header and the heap; walk the list from the persisted
//!   `head`, checking every pointer.
//! * R2. While `head.next` is marked by a thread `t`, the dequeue took effect
//!   but its `head` CAS did not persist: write the node's value into
//!   `returnedValues\[t\]`'s block and advance `head`. Persist `head`.
//! * R3. `tail` := the last node.
//! * R4. Free the sentinels R2 unlinked (their retirements were lost with
//!   DRAM; the §6.1 fix guarantees none of them was freed before the
//!   crash, since the persisted `head` had not passed them).
//!
//! ## Guarantees
//!
//! Durably linearizable: marks persist in queue order (each mark is
//! `BARRIER`ed before `head` moves past its node, by the owner or a helper),
//! so after R2 the queue holds exactly the values enqueued by durable links
//! and not yet marked. Not detectable: the per-thread block tells the value
//! of the thread's *last* dequeue (after a crash, [`DurableQueue::returned`])
//! but not which operation that was, and nothing tells whether a cut-off
//! enqueue took effect except finding its value in the queue. Lock-free.
//!
//! Costs per operation (uncontended, on `Pmem`): enqueue 2 `pwb`s (node,
//! link) and 1 `pfence`; a non-empty dequeue 5 `pwb`s (new block, slot,
//! mark, block, deferred `head`) and 4 `pfence`s; plus the heap's `pwb` per
//! allocation.

use super::{
    critical, dequeue_loop, init_sentinel, link_at_tail, Arena, Marking, QueueConfig, ThreadCtx,
    BLOCK, NEXT, VALUE,
};
use crate::runtime::MementoError;
use perdure_pm::{Backend, Pool};

const MAGIC: u64 = u64::from_le_bytes(*b"PDDURQ01");
// The node word after `value` and `next`; the returned-value block words.
perdure_pm::word_offsets!(_, _, DEQ_TID);
perdure_pm::word_offsets!(RV_STATE, RV_VALUE);
// The layout is persistent: pools written before stay readable.
const _: () = assert!(DEQ_TID == 16 && RV_STATE == 0 && RV_VALUE == 8);
const RV_PENDING: u64 = 0;
const RV_EMPTY: u64 = 1;
const RV_SET: u64 = 2;

/// What a thread's returned-value block says about its last dequeue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returned {
    /// The thread has not dequeued since the queue was created.
    NoDequeue,
    /// Its last dequeue started and had not taken effect.
    Pending,
    /// Its last dequeue found the queue empty.
    Empty,
    /// Its last dequeue returned this value.
    Value(u64),
}

/// The durable queue over a pool. Share it between threads by reference;
/// each thread operates through its own [`DurableHandle`].
#[derive(Debug)]
pub struct DurableQueue<'p, B: Backend> {
    arena: Arena<'p, B>,
}

impl<'p, B: Backend> DurableQueue<'p, B> {
    /// Bytes a queue with `cfg` needs from its base.
    pub fn required_bytes(cfg: &QueueConfig) -> u64 {
        super::required_bytes(cfg)
    }

    /// Creates an empty queue at `base` (4096-aligned), durably: a sentinel
    /// node that `head` and `tail` name, every `returnedValues` slot null.
    pub fn create(pool: &'p Pool<B>, base: u64, cfg: &QueueConfig) -> Result<Self, MementoError> {
        let arena = Arena::create(pool, base, cfg, MAGIC, init_sentinel)?;
        Ok(DurableQueue { arena })
    }

    /// Opens the queue at `base` after a crash or a clean shutdown and
    /// recovers it (steps R1–R3 of the module docs).
    pub fn open(pool: &'p Pool<B>, base: u64) -> Result<Self, MementoError> {
        let arena = Arena::open(pool, base, MAGIC, "DurableQ")?;
        let q = DurableQueue { arena };
        q.recover()?;
        Ok(q)
    }

    fn recover(&self) -> Result<(), MementoError> {
        let a = &self.arena;
        let mut t = a.recovery_thread()?;
        // R1.
        let nodes = a.walk(a.peek(a.head()), NEXT)?;
        // R2: finish the dequeues whose head CAS did not persist.
        let mut head = nodes[0];
        let mut skipped = 0;
        for &n in &nodes[1..] {
            let owner = t.load(n + DEQ_TID);
            if owner == 0 {
                break;
            }
            let owner = self.owner(owner)?;
            let rv = t.load(a.slot(owner));
            if rv != 0 {
                let rv = a.block(rv, "returned-value block")?;
                t.store(rv + RV_VALUE, t.load(n + VALUE));
                t.store(rv + RV_STATE, RV_SET);
                t.pwb(rv, BLOCK);
            }
            head = n;
            skipped += 1;
        }
        t.store(a.head(), head);
        t.pwb(a.head(), 8);
        // R3.
        let last = nodes[nodes.len() - 1];
        t.store(a.tail(), last);
        t.barrier(a.tail(), 8);
        // R4: the sentinels R2 unlinked; their retirements were lost with
        // DRAM, and no one can reach them now.
        for &n in &nodes[..skipped] {
            t.free_now(n)?;
        }
        Ok(())
    }

    fn owner(&self, tid: u64) -> Result<usize, MementoError> {
        if tid == 0 || tid > self.arena.threads() as u64 {
            return Err(MementoError::CorruptStructure(format!(
                "a node is marked dequeued by thread {tid}, not in 1..={}",
                self.arena.threads()
            )));
        }
        Ok(tid as usize)
    }

    /// Threads (ids `1..=threads()`).
    pub fn threads(&self) -> usize {
        self.arena.threads()
    }

    /// The pool.
    pub fn pool(&self) -> &'p Pool<B> {
        self.arena.pool()
    }

    /// A handle for thread `tid` (one live handle per id).
    pub fn handle(&self, tid: usize) -> Result<DurableHandle<'_, 'p, B>, MementoError> {
        Ok(DurableHandle {
            t: self.arena.thread(tid)?,
        })
    }

    /// What thread `tid`'s returned-value block says (read it after
    /// recovery to learn the value of the thread's last dequeue).
    pub fn returned(&self, tid: usize) -> Result<Returned, MementoError> {
        let a = &self.arena;
        if tid == 0 || tid > a.threads() {
            return Err(MementoError::BadThread {
                tid,
                threads: a.threads(),
            });
        }
        let rv = a.peek(a.slot(tid));
        if rv == 0 {
            return Ok(Returned::NoDequeue);
        }
        let rv = a.block(rv, "returned-value block")?;
        match a.peek(rv + RV_STATE) {
            RV_PENDING => Ok(Returned::Pending),
            RV_EMPTY => Ok(Returned::Empty),
            RV_SET => Ok(Returned::Value(a.peek(rv + RV_VALUE))),
            s => Err(MementoError::CorruptStructure(format!(
                "returned-value block {rv:#x} has state {s}"
            ))),
        }
    }

    /// The values in the queue, oldest first (single-threaded: after
    /// recovery or when no operation runs).
    pub fn contents(&self) -> Result<Vec<u64>, MementoError> {
        self.arena.contents()
    }
}

/// Thread `tid`'s access to a [`DurableQueue`].
#[derive(Debug)]
pub struct DurableHandle<'q, 'p, B: Backend> {
    t: ThreadCtx<'q, 'p, B>,
}

impl<B: Backend> DurableHandle<'_, '_, B> {
    /// The thread id.
    pub fn tid(&self) -> usize {
        self.t.tid()
    }

    /// Enqueues `v`, durably (steps E1–E4).
    pub fn enqueue(&mut self, v: u64) -> Result<(), MementoError> {
        critical(&mut self.t, |t| {
            // E1.
            let node = t.alloc_block()?;
            t.store(node + VALUE, v);
            t.barrier(node, BLOCK);
            link_at_tail(t, node);
            Ok(())
        })
    }

    /// Dequeues the oldest value, or `None` if the queue is empty, durably
    /// (steps D1–D6).
    pub fn dequeue(&mut self) -> Result<Option<u64>, MementoError> {
        critical(&mut self.t, |t| {
            let a = t.arena();
            let tid = t.tid();
            // D1.
            let rv = t.alloc_block()?;
            t.barrier(rv, BLOCK);
            let slot = a.slot(tid);
            let previous = t.load(slot);
            t.store(slot, rv);
            t.barrier(slot, 8);
            if previous != 0 {
                t.retire(previous);
            }
            let threads = a.threads() as u64;
            let got = dequeue_loop(
                t,
                Marking {
                    mark_at: DEQ_TID,
                    mine: tid as u64,
                    own_record: rv,
                    // D5: `returnedValues[owner]`, set before the owner marked.
                    record_of: |t: &ThreadCtx<'_, '_, B>, owner: u64| {
                        let address = match owner {
                            1.. if owner <= threads => t.load(a.slot(owner as usize)),
                            _ => 0,
                        };
                        if address == 0 {
                            return Err(MementoError::CorruptStructure(format!(
                                "a node is marked by thread {owner}, which has no returned-value block"
                            )));
                        }
                        Ok(address)
                    },
                    fill: |t: &ThreadCtx<'_, '_, B>, block: u64, _node: u64, value: u64| {
                        t.store(block + RV_VALUE, value);
                        t.store(block + RV_STATE, RV_SET);
                    },
                },
            )?;
            if got.is_none() {
                // D3: empty.
                t.store(rv + RV_STATE, RV_EMPTY);
                t.barrier(rv, BLOCK);
            }
            Ok(got)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use std::collections::HashSet;

    fn op<B: Backend>(h: &mut DurableHandle<'_, '_, B>, arg: Option<u64>, _: u64) -> Option<u64> {
        match arg {
            Some(v) => h.enqueue(v).map(|()| None),
            None => h.dequeue(),
        }
        .unwrap()
    }

    #[test]
    fn fifo_single_thread() {
        let pool = volatile_pool();
        let q = DurableQueue::create(&pool, BASE, &config(2, BIG_POOL)).unwrap();
        let mut h = q.handle(1).unwrap();
        assert_eq!(q.returned(1).unwrap(), Returned::NoDequeue);
        check_fifo(&mut h, &op);
        assert_eq!(q.returned(1).unwrap(), Returned::Empty);
        h.enqueue(9).unwrap();
        h.dequeue().unwrap();
        assert_eq!(q.returned(1).unwrap(), Returned::Value(9));
        assert!(q.contents().unwrap().is_empty());
    }

    #[test]
    fn a_second_handle_for_the_same_thread_is_refused() {
        let pool = volatile_pool();
        let q = DurableQueue::create(&pool, BASE, &config(2, BIG_POOL)).unwrap();
        let _h = q.handle(1).unwrap();
        assert!(q.handle(1).is_err());
        assert!(q.handle(3).is_err());
        assert!(q.handle(0).is_err());
    }

    #[test]
    fn two_threads_conserve_every_value() {
        let pool = volatile_pool();
        let q = DurableQueue::create(&pool, BASE, &config(2, BIG_POOL)).unwrap();
        check_conservation(&|tid| q.handle(tid).unwrap(), &op, || q.contents().unwrap());
    }

    /// Runs `ops` (Some = enqueue, None = dequeue) on thread 1, and crashes
    /// at every persistence event of the last one; every crash image must
    /// recover to the queue before or after that operation, with the
    /// returned-value block telling the dequeue's value when it took effect.
    fn crash_during_last_op(rmw: bool, ops: &[Option<u64>]) {
        let pool = sim_pool(rmw);
        let q = DurableQueue::create(&pool, BASE, &config(2, POOL)).unwrap();
        let mut h = q.handle(1).unwrap();
        let (last, prefix) = ops.split_last().unwrap();
        for &arg in prefix {
            op(&mut h, arg, 0);
        }
        let before = q.contents().unwrap();
        let (result, points) = crash_points_during(&pool, || op(&mut h, *last, 0));
        drop(h);
        let after = apply(&before, *last);
        for (i, cp) in points.iter().enumerate() {
            for image in images(cp, 16, i as u64) {
                let r = DurableQueue::open(&image, BASE).expect("recovery");
                let got = r.contents().unwrap();
                assert!(
                    got == before || got == after,
                    "crash point {i}: {got:?} is neither {before:?} nor {after:?}"
                );
                if last.is_none() && got == after && before != after {
                    assert_eq!(
                        r.returned(1).unwrap(),
                        Returned::Value(result.unwrap()),
                        "crash point {i}: the dequeued value is lost"
                    );
                }
                check_keeps_working(&mut r.handle(2).unwrap(), &op, &got);
            }
        }
    }

    #[test]
    fn recovery_after_a_crash_in_an_enqueue() {
        for rmw in [false, true] {
            crash_during_last_op(rmw, &[Some(1), Some(2), None, Some(3)]);
        }
    }

    #[test]
    fn recovery_after_a_crash_in_a_dequeue() {
        for rmw in [false, true] {
            crash_during_last_op(rmw, &[Some(1), Some(2), Some(3), None, None]);
            crash_during_last_op(rmw, &[Some(1), None, None]);
        }
    }

    /// Long enough that retired nodes and blocks are freed and reused, then a
    /// crash at every event of a final dequeue: recovery must never follow a
    /// stale `head` into a reused block (the §6.1 fix).
    #[test]
    fn recovery_after_reclamation_and_reuse() {
        let mut ops: Vec<Option<u64>> = Vec::new();
        for i in 0..400 {
            ops.push(Some(i));
            ops.push(None);
        }
        ops.extend([Some(1000), Some(1001), None]);
        crash_during_last_op(false, &ops);
    }

    /// Two threads run concurrently on the simulator; crash images taken at
    /// several moments must recover to a queue that keeps every completed
    /// enqueue not taken by a completed dequeue, and nothing else.
    #[test]
    fn concurrent_crash_recovers_a_consistent_queue() {
        #[derive(Default, Clone)]
        struct Log {
            enq_done: Vec<u64>,
            enq_started: Vec<u64>,
            deq_done: Vec<u64>,
            deq_in_flight: usize,
        }
        let pool = sim_pool(false);
        let q = DurableQueue::create(&pool, BASE, &config(2, POOL)).unwrap();
        let at = [200, 700, 1300, 2000, 2800];
        let snaps = concurrent_snapshots(&pool, Log::default(), &at, |tid, log| {
            let mut h = q.handle(tid).unwrap();
            for i in 0..40 {
                let v = value(tid, i);
                log.lock().unwrap().enq_started.push(v);
                h.enqueue(v).unwrap();
                let mut l = log.lock().unwrap();
                l.enq_done.push(v);
                l.deq_in_flight += 1;
                drop(l);
                let d = h.dequeue().unwrap();
                let mut l = log.lock().unwrap();
                l.deq_in_flight -= 1;
                l.deq_done.extend(d);
            }
        });
        for (k, (cp, l)) in snaps.iter().enumerate() {
            for image in images(cp, 8, k as u64) {
                let r = DurableQueue::open(&image, BASE).expect("recovery");
                let got = r.contents().unwrap();
                per_producer_fifo(&got);
                let got_set: HashSet<u64> = got.iter().copied().collect();
                assert_eq!(got_set.len(), got.len(), "duplicate in {got:?}");
                let started: HashSet<u64> = l.enq_started.iter().copied().collect();
                for v in &got {
                    assert!(started.contains(v), "{v} was never enqueued");
                }
                for v in &l.deq_done {
                    assert!(!got_set.contains(v), "{v} was dequeued and is back");
                }
                let deq: HashSet<u64> = l.deq_done.iter().copied().collect();
                let missing = l
                    .enq_done
                    .iter()
                    .filter(|v| !got_set.contains(v) && !deq.contains(v))
                    .count();
                // Only a dequeue in flight when the image was taken may
                // have taken a value it had not returned yet.
                assert!(
                    missing <= l.deq_in_flight,
                    "snapshot {k}: {missing} completed enqueues lost: {got:?}"
                );
            }
        }
    }
}
