//! LogQ: the detectable *log queue* of Friedman, Herlihy, Marathe and
//! Petrank, "A Persistent Lock-Free Queue for Non-Volatile Memory" (PPoPP
//! 2018), the detectable baseline of seed 001 §7.1.
//!
//! The queue of [`super::durableq`] plus one *log entry* per operation, so
//! that after a crash each thread learns whether its last operation took
//! effect and with which result. Every operation carries an operation
//! number chosen by the caller; `logs\[tid\]` names the thread's current
//! entry.
//!
//! * A **node** is one line `[value, next, logInsert, logRemove]`:
//!   `logInsert` names the entry of the enqueue that created it,
//!   `logRemove` the entry of the dequeue that removed it (null: not
//!   dequeued). A dequeue takes effect when it CASes its entry into
//!   `logRemove`.
//! * A **log entry** is one line `[operationNum, action, status, node,
//!   value]` (action 1 = enqueue, 2 = dequeue; status 1 = the dequeue found
//!   the queue empty, 2 = the enqueue's node is linked).
//!
//! ## The operations (step labels as in the code)
//!
//! **enqueue(v, n)** — the paper's `enq` with `createEnqLogAndNode`:
//! * E1. Allocate an entry `[n, enqueue, 0, node, v]` and a node `[v, null,
//!   entry, null]`; `BARRIER_OPT(node)`, `BARRIER(entry)`; `logs\[tid\] =
//!   entry`; `BARRIER(&logs\[tid\])`. (Retire the previous entry.)
//! * E2–E4. The durable queue's link loop (see [`super::durableq`]): CAS the
//!   last node's `next`, `BARRIER_OPT` it, swing `tail`; help a lagging
//!   `tail` the same way.
//! * E5 (not in the paper). `status = LINKED`, DEFERFLUSH(`&status`): written
//!   back by the end of the critical section.
//!
//! **dequeue(n)** — the paper's `deq` with `createDeqLog`:
//! * D1. Allocate an entry `[n, dequeue, 0, null, 0]`; `BARRIER` it;
//!   `logs\[tid\] = entry`; `BARRIER` the slot. (Retire the previous entry.)
//! * D2–D3. As the durable queue: empty → `status = EMPTY`, `BARRIER`,
//!   return `None`; a lagging `tail` is helped.
//! * D4. CAS `next.logRemove` null → entry (the linearization point);
//!   `BARRIER` it; `entry.value = next.value; entry.node = next`;
//!   `BARRIER_OPT(entry)`; CAS `head` first → next; return the value.
//! * D5. If another dequeue marked `next` and `head` is still `first` ("same
//!   context"): `BARRIER(&next.logRemove)` (not in the paper, see below),
//!   complete its entry (`value`, `node`), `BARRIER_OPT` it, CAS `head`.
//! * D6 (seed §6.1). As in the durable queue: whoever moves `head` retires
//!   `first`; the marker and whoever moved `head` DEFERFLUSH `head`.
//!
//! **recovery** ([`LogQueue::open`], single-threaded) — the paper's
//! `recover`:
//! * R1. Validate the header and the heap, walk the list from `head`.
//! * R2. `updateHead`: while `head.next` has a `logRemove` entry, complete
//!   the entry (`value`, `node`), and advance `head`. Persist `head`.
//! * R3. `updateTail`: `tail` := the last node.
//! * R4. `finishPrevOperations`, for each thread's entry: an enqueue took
//!   effect iff its status is LINKED, or its node is in the queue, or its
//!   node has a `logRemove`; if not, `finishInsert` links it now. A dequeue
//!   took effect iff its status is EMPTY or its `node` is set; if not,
//!   `finishRemove` runs it now. Either way the entry then holds the result,
//!   reported by [`LogQueue::recovered`].
//! * R5. Free the nodes recovery unlinked (the old sentinels): their
//!   retirements were lost with DRAM.
//!
//! Recovery is idempotent: a crash during it leaves a state it recovers
//! from again (each step persists before the next depends on it).
//!
//! ## Deviations from the paper, each needed for correctness
//!
//! 1. **The dequeue's value is kept in its entry** (`entry.value`, in the
//!    line of `entry.node`, so one write-back persists both). The paper's
//!    recovery reads the result through `entry.node`, but with reclamation
//!    that node becomes the sentinel, is dequeued past and freed while the
//!    entry still names it.
//! 2. **The enqueue records its completion** (E5). The paper's
//!    `updateTailAndStatus` marks the entries of the nodes *still in the
//!    queue*; an enqueue whose node was dequeued before the crash would be
//!    linked a second time by `finishInsert`. Recovery here also treats a
//!    node with a `logRemove` as inserted — safe to read because a node is
//!    never freed while its enqueuer's critical section is open, and E5's
//!    write-back completes before that section ends. The cost is one
//!    deferred `pwb` per enqueue and the fence that ends the section.
//! 3. **A helper persists the mark before advancing `head`** (D5). In the
//!    published code a helper completes the other entry and moves `head`
//!    without flushing `next.logRemove`; the next dequeue's mark can then
//!    persist while this one does not, and R2 — which stops at the first
//!    unmarked node — would leave a node in the queue whose successor's
//!    value was already returned.
//! 4. Reclamation and the §6.1 fix (see [`super`]): entries are retired
//!    when the thread's next operation replaces them, nodes when `head`
//!    passes them; `node.logInsert` is written but never followed, since
//!    the entry it names is reclaimed after its operation.
//!
//! ## Guarantees
//!
//! Durably linearizable and detectable: after recovery, thread `tid`'s last
//! operation whose entry was installed (`logs\[tid\]`) has taken effect
//! exactly once, and [`LogQueue::recovered`] tells its number and result;
//! an operation cut off before E1/D1 installed its entry had no effect (the
//! number reported is the previous one's). Lock-free.
//!
//! Costs per operation (uncontended, on `Pmem`): enqueue 5 `pwb`s (node,
//! entry, slot, link, deferred status) and 3 `pfence`s; a non-empty dequeue
//! 5 `pwb`s (entry, slot, mark, entry, deferred `head`) and 4 `pfence`s;
//! plus the heap's `pwb` per allocation.

use super::{
    critical, dequeue_loop, init_sentinel, link_at_tail, Arena, Marking, QueueConfig, ThreadCtx,
    BLOCK, NEXT, VALUE,
};
use crate::runtime::MementoError;
use perdure_pm::{Backend, Pool};
use std::collections::HashSet;

const MAGIC: u64 = u64::from_le_bytes(*b"PDLOGQ01");
// The node words after `value` and `next`; the log-entry words.
perdure_pm::word_offsets!(_, _, LOG_INSERT, LOG_REMOVE);
perdure_pm::word_offsets!(OP_NUM, ACTION, STATUS, NODE, RESULT);
// The layout is persistent: pools written before stay readable.
const _: () = assert!(LOG_INSERT == 16 && LOG_REMOVE == 24 && NODE == 24 && RESULT == 32);
const ENQ: u64 = 1;
const DEQ: u64 = 2;
const EMPTY: u64 = 1;
const LINKED: u64 = 2;

/// A thread's last operation as recovery found it: it has taken effect
/// exactly once, with this result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovered {
    /// Enqueue number `op_num` of `value`.
    Enqueued {
        /// The caller's operation number.
        op_num: u64,
        /// The value enqueued.
        value: u64,
    },
    /// Dequeue number `op_num`, which returned `value` (`None`: empty).
    Dequeued {
        /// The caller's operation number.
        op_num: u64,
        /// The value dequeued.
        value: Option<u64>,
    },
}

impl Recovered {
    /// The operation number.
    pub fn op_num(&self) -> u64 {
        match *self {
            Recovered::Enqueued { op_num, .. } | Recovered::Dequeued { op_num, .. } => op_num,
        }
    }
}

/// The log queue over a pool. Share it between threads by reference; each
/// thread operates through its own [`LogHandle`].
#[derive(Debug)]
pub struct LogQueue<'p, B: Backend> {
    arena: Arena<'p, B>,
    recovered: Vec<Option<Recovered>>,
}

impl<'p, B: Backend> LogQueue<'p, B> {
    /// Bytes a queue with `cfg` needs from its base.
    pub fn required_bytes(cfg: &QueueConfig) -> u64 {
        super::required_bytes(cfg)
    }

    /// Creates an empty queue at `base` (4096-aligned), durably.
    pub fn create(pool: &'p Pool<B>, base: u64, cfg: &QueueConfig) -> Result<Self, MementoError> {
        let arena = Arena::create(pool, base, cfg, MAGIC, init_sentinel)?;
        let recovered = vec![None; cfg.threads + 1];
        Ok(LogQueue { arena, recovered })
    }

    /// Opens the queue at `base` after a crash or a clean shutdown, recovers
    /// it and finishes every thread's last operation (R1–R5); their results
    /// are then in [`LogQueue::recovered`].
    pub fn open(pool: &'p Pool<B>, base: u64) -> Result<Self, MementoError> {
        let arena = Arena::open(pool, base, MAGIC, "LogQ")?;
        let mut q = LogQueue {
            recovered: vec![None; arena.threads() + 1],
            arena,
        };
        q.recovered = q.recover()?;
        Ok(q)
    }

    fn recover(&self) -> Result<Vec<Option<Recovered>>, MementoError> {
        let a = &self.arena;
        let mut t = a.recovery_thread()?;
        // R1.
        let nodes = a.walk(a.peek(a.head()), NEXT)?;
        // R2: updateHead.
        let mut h = 0;
        while h + 1 < nodes.len() {
            let n = nodes[h + 1];
            let entry = t.load(n + LOG_REMOVE);
            if entry == 0 {
                break;
            }
            let entry = a.block(entry, "log entry")?;
            t.store(entry + RESULT, t.load(n + VALUE));
            t.store(entry + NODE, n);
            t.pwb(entry, BLOCK);
            h += 1;
        }
        // The entries' results are durable before the head moves past their
        // nodes: a crash after the head's move and a second recovery would
        // otherwise find neither the claim (the node is behind the head) nor
        // the result (entry NODE still 0), and dequeue again.
        if h > 0 {
            t.pfence();
        }
        t.store(a.head(), nodes[h]);
        t.barrier(a.head(), 8);
        let mut unlinked: Vec<u64> = nodes[..h].to_vec();
        // R3: updateTail.
        let mut last = nodes[nodes.len() - 1];
        t.store(a.tail(), last);
        t.barrier(a.tail(), 8);
        let mut in_queue: HashSet<u64> = nodes[h..].iter().copied().collect();
        // R4: finishPrevOperations.
        let mut out = vec![None; a.threads() + 1];
        for (tid, slot) in out.iter_mut().enumerate().skip(1) {
            let entry = t.load(a.slot(tid));
            if entry == 0 {
                continue;
            }
            let entry = a.block(entry, "log entry")?;
            let op_num = t.load(entry + OP_NUM);
            *slot = Some(match t.load(entry + ACTION) {
                ENQ => {
                    let node = a.block(t.load(entry + NODE), "enqueued node")?;
                    let inserted = t.load(entry + STATUS) == LINKED
                        || in_queue.contains(&node)
                        || t.load(node + LOG_REMOVE) != 0;
                    if !inserted {
                        // finishInsert (single-threaded: link at the end).
                        t.store(last + NEXT, node);
                        t.barrier(last + NEXT, 8);
                        t.store(a.tail(), node);
                        t.pwb(a.tail(), 8);
                        in_queue.insert(node);
                        last = node;
                    }
                    if t.load(entry + STATUS) != LINKED {
                        t.store(entry + STATUS, LINKED);
                        t.barrier(entry, BLOCK);
                    }
                    Recovered::Enqueued {
                        op_num,
                        value: t.load(entry + RESULT),
                    }
                }
                DEQ => {
                    let value = if t.load(entry + STATUS) == EMPTY {
                        None
                    } else if t.load(entry + NODE) != 0 {
                        Some(t.load(entry + RESULT))
                    } else {
                        // finishRemove.
                        let first = t.load(a.head());
                        let next = t.load(first + NEXT);
                        if next == 0 {
                            t.store(entry + STATUS, EMPTY);
                            t.barrier(entry, BLOCK);
                            None
                        } else {
                            t.store(next + LOG_REMOVE, entry);
                            t.barrier(next + LOG_REMOVE, 8);
                            let v = t.load(next + VALUE);
                            t.store(entry + RESULT, v);
                            t.store(entry + NODE, next);
                            t.barrier(entry, BLOCK);
                            t.store(a.head(), next);
                            t.barrier(a.head(), 8);
                            if last == first {
                                last = next;
                            }
                            unlinked.push(first);
                            Some(v)
                        }
                    };
                    Recovered::Dequeued { op_num, value }
                }
                other => {
                    return Err(MementoError::CorruptStructure(format!(
                        "log entry {entry:#x} has action {other}"
                    )))
                }
            });
        }
        if a.peek(a.tail()) != last {
            t.store(a.tail(), last);
        }
        t.pfence();
        // R5.
        for n in unlinked {
            t.free_now(n)?;
        }
        Ok(out)
    }

    /// Thread `tid`'s last operation as the last recovery found and
    /// finished it (`None`: the thread had run no operation, or the queue
    /// was created rather than opened).
    pub fn recovered(&self, tid: usize) -> Option<Recovered> {
        self.recovered.get(tid).copied().flatten()
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
    pub fn handle(&self, tid: usize) -> Result<LogHandle<'_, 'p, B>, MementoError> {
        Ok(LogHandle {
            t: self.arena.thread(tid)?,
        })
    }

    /// The values in the queue, oldest first (single-threaded: after
    /// recovery or when no operation runs).
    pub fn contents(&self) -> Result<Vec<u64>, MementoError> {
        self.arena.contents()
    }
}

/// Thread `tid`'s access to a [`LogQueue`].
#[derive(Debug)]
pub struct LogHandle<'q, 'p, B: Backend> {
    t: ThreadCtx<'q, 'p, B>,
}

/// Allocates a log entry for operation `op_num` and installs it in
/// `logs\[tid\]` (E1/D1's second half: `createEnqLogAndNode` /
/// `createDeqLog`), retiring the thread's previous entry. `fill` writes the
/// entry's (and the node's) words; the entry is made durable before it is
/// installed.
fn install_entry<B: Backend>(
    t: &mut ThreadCtx<'_, '_, B>,
    op_num: u64,
    action: u64,
    fill: impl FnOnce(&ThreadCtx<'_, '_, B>, u64),
) -> Result<u64, MementoError> {
    let entry = t.alloc_block()?;
    t.store(entry + OP_NUM, op_num);
    t.store(entry + ACTION, action);
    fill(t, entry);
    t.barrier(entry, BLOCK);
    let slot = t.arena().slot(t.tid());
    let previous = t.load(slot);
    t.store(slot, entry);
    t.barrier(slot, 8);
    if previous != 0 {
        t.retire(previous);
    }
    Ok(entry)
}

impl<B: Backend> LogHandle<'_, '_, B> {
    /// The thread id.
    pub fn tid(&self) -> usize {
        self.t.tid()
    }

    /// Enqueues `v` as operation number `op_num` (steps E1–E5).
    pub fn enqueue(&mut self, v: u64, op_num: u64) -> Result<(), MementoError> {
        critical(&mut self.t, |t| {
            // E1: createEnqLogAndNode.
            let node = t.alloc_block()?;
            let entry = install_entry(t, op_num, ENQ, |t, entry| {
                t.store(entry + NODE, node);
                t.store(entry + RESULT, v);
                t.store(node + VALUE, v);
                t.store(node + LOG_INSERT, entry);
                t.pwb(node, BLOCK);
            })?;
            // E2–E4.
            link_at_tail(t, node);
            // E5.
            t.store(entry + STATUS, LINKED);
            t.defer_flush(entry + STATUS);
            Ok(())
        })
    }

    /// Dequeues the oldest value as operation number `op_num`, or `None` if
    /// the queue is empty (steps D1–D6).
    pub fn dequeue(&mut self, op_num: u64) -> Result<Option<u64>, MementoError> {
        critical(&mut self.t, |t| {
            // D1: createDeqLog.
            let entry = install_entry(t, op_num, DEQ, |_, _| {})?;
            let got = dequeue_loop(
                t,
                Marking {
                    mark_at: LOG_REMOVE,
                    mine: entry,
                    own_record: entry,
                    record_of: |_: &ThreadCtx<'_, '_, B>, other: u64| Ok(other),
                    fill: |t: &ThreadCtx<'_, '_, B>, entry: u64, node: u64, value: u64| {
                        t.store(entry + RESULT, value);
                        t.store(entry + NODE, node);
                    },
                },
            )?;
            if got.is_none() {
                // D3: empty.
                t.store(entry + STATUS, EMPTY);
                t.barrier(entry + STATUS, 8);
            }
            Ok(got)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use std::collections::HashMap;

    fn op<B: Backend>(h: &mut LogHandle<'_, '_, B>, arg: Option<u64>, n: u64) -> Option<u64> {
        match arg {
            Some(v) => h.enqueue(v, n).map(|()| None),
            None => h.dequeue(n),
        }
        .unwrap()
    }

    /// [`op`], returning what recovery would report for it.
    fn recorded<B: Backend>(h: &mut LogHandle<'_, '_, B>, arg: Option<u64>, n: u64) -> Recovered {
        let got = op(h, arg, n);
        match arg {
            Some(value) => Recovered::Enqueued { op_num: n, value },
            None => Recovered::Dequeued {
                op_num: n,
                value: got,
            },
        }
    }

    #[test]
    fn fifo_single_thread() {
        let pool = volatile_pool();
        let q = LogQueue::create(&pool, BASE, &config(2, BIG_POOL)).unwrap();
        check_fifo(&mut q.handle(1).unwrap(), &op);
        assert!(q.contents().unwrap().is_empty());
        assert_eq!(q.recovered(1), None);
    }

    #[test]
    fn two_threads_conserve_every_value() {
        let pool = volatile_pool();
        let q = LogQueue::create(&pool, BASE, &config(2, BIG_POOL)).unwrap();
        check_conservation(&|tid| q.handle(tid).unwrap(), &op, || q.contents().unwrap());
    }

    /// Runs `ops` (Some = enqueue, None = dequeue; operation number = index)
    /// on thread 1 and crashes at every persistence event of the last one.
    /// Recovery must report either the last operation — having taken effect
    /// exactly once, with the right result — or, if its entry was not yet
    /// installed, the previous operation with the result it returned and
    /// the queue untouched by the last one.
    fn crash_during_last_op(rmw: bool, ops: &[Option<u64>]) {
        let pool = sim_pool(rmw);
        let q = LogQueue::create(&pool, BASE, &config(2, POOL)).unwrap();
        let mut h = q.handle(1).unwrap();
        let k = ops.len() - 1;
        let mut previous = None;
        for (i, &arg) in ops[..k].iter().enumerate() {
            previous = Some(recorded(&mut h, arg, i as u64));
        }
        let before = q.contents().unwrap();
        let (last, points) = crash_points_during(&pool, || recorded(&mut h, ops[k], k as u64));
        drop(h);
        let after = apply(&before, ops[k]);
        let (mut saw_before, mut saw_after) = (false, false);
        for (i, cp) in points.iter().enumerate() {
            for image in images(cp, 16, i as u64) {
                let r = LogQueue::open(&image, BASE).expect("recovery");
                let got = r.contents().unwrap();
                let rec = r.recovered(1);
                if rec == Some(last) {
                    saw_after = true;
                    assert_eq!(got, after, "crash point {i}: {last:?} recovered");
                } else {
                    saw_before = true;
                    assert_eq!(rec, previous, "crash point {i}: wrong recovered op");
                    assert_eq!(got, before, "crash point {i}: op {k} had an effect");
                }
                // Recovering the recovered pool again changes nothing.
                let again = LogQueue::open(&image, BASE).expect("second recovery");
                assert_eq!(again.contents().unwrap(), got);
                assert_eq!(again.recovered(1), rec);
                drop(again);
                check_keeps_working(&mut r.handle(2).unwrap(), &op, &got);
            }
        }
        assert!(saw_before && saw_after, "both outcomes are reachable");
    }

    #[test]
    fn a_cut_off_enqueue_is_recovered_exactly_once() {
        for rmw in [false, true] {
            crash_during_last_op(rmw, &[Some(1), Some(2), None, Some(3)]);
            crash_during_last_op(rmw, &[Some(4)]);
        }
    }

    #[test]
    fn a_cut_off_dequeue_is_recovered_exactly_once() {
        for rmw in [false, true] {
            crash_during_last_op(rmw, &[Some(1), Some(2), Some(3), None, None]);
            crash_during_last_op(rmw, &[Some(1), None, None]);
        }
    }

    /// Deviation 2: thread 1's last operation enqueued a value that thread 2
    /// has since dequeued (its node is no longer in the queue); recovery
    /// must not enqueue it again.
    #[test]
    fn an_enqueue_whose_value_was_dequeued_is_not_repeated() {
        for extra_dequeue in [false, true] {
            let pool = sim_pool(false);
            let q = LogQueue::create(&pool, BASE, &config(2, POOL)).unwrap();
            let (mut h1, mut h2) = (q.handle(1).unwrap(), q.handle(2).unwrap());
            h1.enqueue(5, 0).unwrap();
            h2.enqueue(6, 0).unwrap();
            assert_eq!(h2.dequeue(1).unwrap(), Some(5));
            let expect = if extra_dequeue {
                assert_eq!(h2.dequeue(2).unwrap(), Some(6));
                vec![]
            } else {
                vec![6]
            };
            for image in images(&pool.backend().capture(), 64, 1) {
                let r = LogQueue::open(&image, BASE).unwrap();
                assert_eq!(r.contents().unwrap(), expect);
                assert_eq!(
                    r.recovered(1),
                    Some(Recovered::Enqueued {
                        op_num: 0,
                        value: 5
                    })
                );
            }
        }
    }

    /// Long enough that nodes and entries are freed and reused before the
    /// crash (the §6.1 fix and deviations 1–2).
    #[test]
    fn recovery_after_reclamation_and_reuse() {
        let mut ops: Vec<Option<u64>> = Vec::new();
        for i in 0..400 {
            ops.push(Some(i));
            ops.push(None);
        }
        ops.extend([Some(1000), Some(1001), None]);
        crash_during_last_op(false, &ops);
        ops.push(Some(1002));
        crash_during_last_op(true, &ops);
    }

    /// Two threads on the simulator, crash images at several moments: after
    /// recovery every thread's last operation is either one it completed
    /// (with the same result) or the one in flight, and the queue holds
    /// exactly the values enqueued and not dequeued by the operations that
    /// took effect.
    #[test]
    fn concurrent_crash_conserves_values_and_reports_last_ops() {
        #[derive(Default, Clone)]
        struct ThreadLog {
            done: HashMap<u64, Recovered>,
            in_flight: Option<u64>,
        }
        const OPS: u64 = 40;
        let pool = sim_pool(false);
        let q = LogQueue::create(&pool, BASE, &config(2, POOL)).unwrap();
        let at = [150, 700, 1300, 2100, 2900, 3600];
        let logs = vec![ThreadLog::default(); 3];
        let snaps = concurrent_snapshots(&pool, logs, &at, |tid, logs| {
            let mut h = q.handle(tid).unwrap();
            for n in 0..OPS {
                logs.lock().unwrap()[tid].in_flight = Some(n);
                let arg = (n % 2 == 0).then(|| value(tid, n));
                let r = recorded(&mut h, arg, n);
                let mut l = logs.lock().unwrap();
                l[tid].done.insert(n, r);
                l[tid].in_flight = None;
            }
        });
        for (k, (cp, l)) in snaps.iter().enumerate() {
            for image in images(cp, 8, k as u64) {
                let r = LogQueue::open(&image, BASE).expect("recovery");
                let got = r.contents().unwrap();
                per_producer_fifo(&got);
                let mut effective: Vec<Recovered> = Vec::new();
                for (tid, tl) in l.iter().enumerate().skip(1) {
                    effective.extend(tl.done.values().copied());
                    let Some(rec) = r.recovered(tid) else {
                        assert!(tl.done.is_empty(), "thread {tid}: no recovered op");
                        continue;
                    };
                    match tl.done.get(&rec.op_num()) {
                        Some(done) => assert_eq!(*done, rec, "thread {tid}: result changed"),
                        None => {
                            assert_eq!(Some(rec.op_num()), tl.in_flight, "thread {tid}");
                            effective.push(rec);
                        }
                    }
                }
                let mut expect: HashSet<u64> = HashSet::new();
                let mut taken: Vec<u64> = Vec::new();
                for e in effective {
                    match e {
                        Recovered::Enqueued { value, .. } => assert!(expect.insert(value)),
                        Recovered::Dequeued { value, .. } => taken.extend(value),
                    }
                }
                for v in taken {
                    assert!(
                        expect.remove(&v),
                        "snapshot {k}: {v} dequeued twice or never enqueued"
                    );
                }
                let got_set: HashSet<u64> = got.iter().copied().collect();
                assert_eq!(got_set.len(), got.len(), "duplicate in {got:?}");
                assert_eq!(got_set, expect, "snapshot {k}: contents");
            }
        }
    }
}
