//! CombQ-mmt: a detectable combining queue (seed 001, §7: "CombQ-mmt:
//! combining queue \[21\]"; §7.1: "For safe reclamation, CombQ-mmt's combiner
//! allocates a new memory block"), after PBcomb, the persistent software
//! combining of Fatourou, Kallimanis and Kosmas ("Persistent Software
//! Combining", arXiv 2107.03492), made detectable with mementos.
//!
//! ## The algorithm
//!
//! Software combining: instead of contending on the queue, each thread
//! *announces* its request, and one thread at a time — the *combiner*,
//! holding a lock — applies every announced request to a copy of the state,
//! persists the copy, and publishes it with one pointer swing. PBcomb's
//! shape is kept:
//!
//! * the **state** is a block `[prev, head, tail, (served, return) per
//!   thread]`: the queue (a linked list of nodes `[value, next]` from the
//!   sentinel `head` to `tail`), and for each thread the sequence number of
//!   its last served request (PBcomb's `Deactivate`) and that request's
//!   result (`ReturnVal`);
//! * the **published** word points to the current state (PBcomb's
//!   `MIndex`/`S`);
//! * the **announce** line of thread `t` holds its request `[arg, seq]`
//!   (PBcomb's `Request[t]`, with a sequence number for the activate bit):
//!   `arg` is the node to enqueue, or 0 for a dequeue.
//!
//! An operation: checkpoint `[seq, node]` (`seq` = the last announced plus
//! one; an enqueue allocates its node, writes its value and flushes it);
//! announce `[arg, seq]` and flush it; then until served, read the published
//! state: if `served[t] ≥ seq` the request is done — flush the published
//! word (so the result returned is durable) and return `return[t]`;
//! otherwise take the lock (a CAS in DRAM) and combine.
//!
//! The **combiner** checkpoints a freshly allocated state block (§7.1: a new
//! block each time, instead of PBcomb's two per-thread records, so that old
//! states can be reclaimed safely), copies the published state into it,
//! serves every thread `t` whose announced `seq` exceeds `served[t]` in
//! thread order — an enqueue links its node after `tail` (writing and
//! flushing the old tail's `next`, which only the state's `tail` bounds), a
//! dequeue moves `head` to its successor and records the successor's value —,
//! records `prev`, flushes the block, CASes the published word from the
//! state it copied to the block, flushes it, retires the old state and the
//! sentinels its dequeues passed, and releases the lock.
//!
//! Linearization: every request served by a combine at the publishing CAS,
//! in thread order. Progress: blocking (a lock), like PBcomb.
//!
//! ## The lock
//!
//! The lock is a DRAM word naming its holder, as in PBcomb. It guards only
//! the act of combining, whose one effect is the publishing CAS: after a
//! full crash nobody combines and the lock starts free; after a thread crash
//! (DRAM survives) it still names the crashed combiner, whose re-run finds
//! it held by itself and resumes combining.
//!
//! ## Memento ([`CombMmt`]) and recovery
//!
//! | sub-memento | checkpoints | why |
//! | --- | --- | --- |
//! | `req` | `[seq, node]` | the request's identity: `seq` decides "served" after a crash (Requirement 2), and the node is an allocation |
//! | `block` | the combiner's new state block | an allocation: a re-run reuses it, and finds out whether it was published |
//!
//! Re-run after a crash with the same memento, an operation replays `req`
//! and re-announces the same request (idempotent), then:
//!
//! * published state has `served[t] ≥ seq` → the request took effect, and
//!   `return[t]` is its result: it stays there until `t`'s next request,
//!   which cannot be announced before this one returns;
//! * the lock names this thread (a thread crash while combining) → combine;
//!   `block` replays the block it was building. If the published word is
//!   that block, the crash came after publishing: flush it, finish
//!   (retire, unlock) and return. Otherwise nothing was published (a
//!   published block would serve this request) and the block, still
//!   private, is rebuilt from the current state;
//! * otherwise → normal execution: wait or combine, serving the request
//!   once.
//!
//! Every write a combine's result depends on — the nodes (flushed by their
//! enqueuers before announcing), the links and the block — persists before
//! the publishing CAS; the announce persists before the operation waits,
//! so a later operation's `seq` never reuses a served one; and no result is
//! returned before the published word it was read from is durable.
//!
//! ## Reclamation (§6)
//!
//! A superseded state and the sentinels passed by dequeues are retired by
//! the combiner that superseded them, after publishing: nobody reaches them
//! from the published state any more, and a thread still reading a result
//! from an old state is pinned, so EBR frees it only after that thread
//! leaves its critical section. The nodes a combine retires are exactly the
//! list from `prev.head` to the new `head`, so a combiner re-run after a
//! thread crash retires the same blocks again in its revived section, which
//! EBR deduplicates (§6.2). That list has at most one sentinel per thread
//! (one request each per combine), and the walk checks it before retiring:
//! a chain that does not reach the new head within `threads` links is
//! refused as corrupt and nothing is retired. A state block allocated but
//! never published (another combiner served the request first) is retired
//! by its owner.
//! What a full crash leaks: blocks in the volatile retirement bags (as for
//! every structure), and a combiner's unpublished state block and the
//! enqueued nodes of requests that are never re-run.

use super::{encode_opt, peek, NODE};
use crate::checkpoint::Checkpoint;
use crate::compose::Memento;
use crate::runtime::{pm_word, Handle, MementoError};
use crate::word::MAX_THREADS;
use perdure_pm::sync::atomic::{AtomicU64, Ordering};
use perdure_pm::{Backend, Pool};

/// Queue block, line 0: the published state and the thread count.
const PUBLISHED: u64 = 0;
const THREADS: u64 = 8;
/// Announce line of thread `t`: line `t` of the queue block.
const ARG: u64 = 0;
const SEQ: u64 = 8;
/// State block words.
const PREV: u64 = 0;
const HEAD: u64 = 8;
const TAIL: u64 = 16;
const PER_THREAD: u64 = 24;
/// Node words.
const VALUE: u64 = 0;
const NEXT: u64 = 8;

fn state_size(threads: u64) -> u64 {
    PER_THREAD + 16 * threads
}

fn served(t: u64) -> u64 {
    PER_THREAD + 16 * (t - 1)
}

fn ret(t: u64) -> u64 {
    served(t) + 8
}

crate::memento! {
    /// The memento of an enqueue or a dequeue.
    pub struct CombMmt {
        /// `[seq, node]`: the request's sequence number and, for an
        /// enqueue, its node.
        pub req: Checkpoint<2>,
        /// The state block this thread allocated as the combiner.
        pub block: Checkpoint<1>,
    }
}

/// A root memento for a thread that enqueues and dequeues.
pub type CombQMmt = super::RootMmt<CombMmt, CombMmt>;

/// The combining queue: its persistent block and its DRAM lock.
#[derive(Debug)]
pub struct CombQueue {
    off: u64,
    threads: u64,
    /// The combiner's thread id, 0 when free.
    lock: AtomicU64,
}

impl CombQueue {
    /// Creates an empty queue for the runtime's threads (a queue block, a
    /// sentinel node and the initial state), durably.
    pub fn create<B: Backend, M: Memento>(
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<CombQueue, MementoError> {
        let threads = h.runtime().threads() as u64;
        let off = h.alloc(NODE * (1 + threads))?;
        let sentinel = h.alloc(NODE)?;
        let state = h.alloc(state_size(threads))?;
        let pool = h.pool();
        pm_word(pool, state + HEAD).store(sentinel, Ordering::Relaxed);
        pm_word(pool, state + TAIL).store(sentinel, Ordering::Relaxed);
        pm_word(pool, off + PUBLISHED).store(state, Ordering::Relaxed);
        pm_word(pool, off + THREADS).store(threads, Ordering::Relaxed);
        pool.pwb(sentinel, NODE);
        pool.pwb(state, state_size(threads));
        pool.pwb(off, NODE * (1 + threads));
        pool.pfence();
        Ok(CombQueue {
            off,
            threads,
            lock: AtomicU64::new(0),
        })
    }

    /// The queue whose block is at `off`, after a crash or restart: validates
    /// the published state and its list (every pointer in the pool, `tail`
    /// reachable from `head`, no cycle). The lock starts free.
    pub fn at<B: Backend>(pool: &Pool<B>, off: u64) -> Result<CombQueue, MementoError> {
        let corrupt =
            |what: String| MementoError::CorruptStructure(format!("CombQ at {off:#x}: {what}"));
        pool.check_range(off, NODE, 64)?;
        let threads = peek(pool, off + THREADS);
        if !(1..=MAX_THREADS as u64).contains(&threads) {
            return Err(corrupt(format!("{threads} threads")));
        }
        pool.check_range(off, NODE * (1 + threads), 64)?;
        let state = peek(pool, off + PUBLISHED);
        pool.check_range(state, state_size(threads), 8)
            .map_err(|e| corrupt(format!("state {state:#x}: {e}")))?;
        let (mut n, tail) = (peek(pool, state + HEAD), peek(pool, state + TAIL));
        let mut steps = 0;
        loop {
            pool.check_range(n, NODE, 8)
                .map_err(|e| corrupt(format!("node {n:#x}: {e}")))?;
            if n == tail {
                break;
            }
            steps += 1;
            if steps > pool.size() / NODE {
                return Err(corrupt("a cycle in the list".into()));
            }
            n = peek(pool, n + NEXT);
        }
        Ok(CombQueue {
            off,
            threads,
            lock: AtomicU64::new(0),
        })
    }

    /// The offset of the queue block (store it in the object root).
    pub fn offset(&self) -> u64 {
        self.off
    }

    fn announce(&self, tid: u64) -> u64 {
        self.off + NODE * tid
    }

    fn unlock(&self) {
        self.lock.store(0, Ordering::SeqCst);
    }

    /// Detectable enqueue. Values must be below `u64::MAX` (a dequeue's
    /// result is stored as the value plus one).
    pub fn enqueue<B: Backend, M: Memento>(
        &self,
        v: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut CombMmt,
    ) -> Result<(), MementoError> {
        if v == u64::MAX {
            return Err(MementoError::Config(
                "the combining queue cannot hold u64::MAX".into(),
            ));
        }
        self.apply(Some(v), h, mmt).map(|_| ())
    }

    /// Detectable dequeue: the oldest value, or `None` if empty.
    pub fn dequeue<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut CombMmt,
    ) -> Result<Option<u64>, MementoError> {
        self.apply(None, h, mmt).map(super::decode_opt)
    }

    /// Announces the request (enqueue `Some(v)`, or dequeue) and waits until
    /// it is served, combining if it gets the lock. Returns the state's
    /// result word.
    fn apply<B: Backend, M: Memento>(
        &self,
        op: Option<u64>,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut CombMmt,
    ) -> Result<u64, MementoError> {
        let tid = h.tid() as u64;
        if tid > self.threads {
            return Err(MementoError::BadThread {
                tid: tid as usize,
                threads: self.threads as usize,
            });
        }
        let req = self.announce(tid);
        let [seq, node] = mmt.req.checkpoint_with(h, |h| {
            let node = match op {
                Some(v) => {
                    let n = h.alloc(NODE)?;
                    h.store_private(n + VALUE, v);
                    // Durable (with the heap's record of the allocation)
                    // before the checkpoint naming it.
                    h.flush(n, NODE);
                    n
                }
                None => 0,
            };
            Ok::<_, MementoError>([h.load(req + SEQ) + 1, node])
        })?;
        // The argument before the sequence number: a combiner that sees the
        // new `seq` sees its `arg`. Durable before anyone can serve it and
        // the operation return, so the next operation's `seq` is fresh.
        h.store(req + ARG, node);
        h.store(req + SEQ, seq);
        h.flush(req, 16);
        let published = self.off + PUBLISHED;
        loop {
            if self.lock.load(Ordering::SeqCst) == tid {
                break; // held by this thread's crashed incarnation
            }
            let s = h.load(published);
            if h.load(s + served(tid)) >= seq {
                h.flush(published, 8);
                return Ok(h.load(s + ret(tid)));
            }
            pause!(CombBeforeLock);
            if self
                .lock
                .compare_exchange(0, tid, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                break;
            }
            perdure_pm::sync::spin_loop();
        }
        self.combine(seq, h, mmt)
    }

    /// The combiner's part, holding the lock: serve every announced request
    /// into a new state block and publish it.
    fn combine<B: Backend, M: Memento>(
        &self,
        seq: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut CombMmt,
    ) -> Result<u64, MementoError> {
        let tid = h.tid() as u64;
        let size = state_size(self.threads);
        let [block] = match mmt.block.checkpoint_with(h, |h| {
            let b = h.alloc(size)?;
            // The heap's record of the allocation, durable before the
            // checkpoint: else a crash could hand the block out twice.
            h.pfence();
            Ok::<_, MementoError>([b])
        }) {
            Ok(b) => b,
            Err(e) => {
                self.unlock();
                return Err(e);
            }
        };
        let published = self.off + PUBLISHED;
        let s = h.load(published);
        if s == block {
            // Published before a thread crash: finish that combine.
            h.flush(published, 8);
            self.finish(h, block)?;
            return Ok(h.load(block + ret(tid)));
        }
        if h.load(s + served(tid)) >= seq {
            // Served by the previous combiner; the block was never published.
            self.unlock();
            h.retire(block);
            h.flush(published, 8);
            return Ok(h.load(s + ret(tid)));
        }
        for w in (0..size).step_by(8) {
            let v = h.load(s + w);
            h.store(block + w, v);
        }
        h.store(block + PREV, s);
        let (mut head, mut tail) = (h.load(s + HEAD), h.load(s + TAIL));
        for t in 1..=self.threads {
            let req = self.announce(t);
            let t_seq = h.load(req + SEQ);
            if t_seq <= h.load(block + served(t)) {
                continue;
            }
            let arg = h.load(req + ARG);
            let r = if arg != 0 {
                h.store(tail + NEXT, arg);
                h.pwb(tail + NEXT, 8);
                tail = arg;
                0
            } else if head == tail {
                0
            } else {
                head = h.load(head + NEXT);
                encode_opt(Some(h.load(head + VALUE)))
            };
            h.store(block + ret(t), r);
            h.store(block + served(t), t_seq);
        }
        h.store(block + HEAD, head);
        h.store(block + TAIL, tail);
        h.pwb(block, size);
        h.pfence();
        if h.cas(published, s, block).is_err() {
            self.unlock();
            return Err(MementoError::CorruptStructure(
                "CombQ: the published state changed under the combiner's lock".into(),
            ));
        }
        h.flush(published, 8);
        self.finish(h, block)?;
        Ok(h.load(block + ret(tid)))
    }

    /// After `block` is published and durable: retire what it superseded
    /// (the old state, and the sentinels from its head to the new head) and
    /// release the lock. Idempotent within a critical section.
    ///
    /// A combine serves at most one request per thread, so its dequeues
    /// passed at most `threads` sentinels: the walk from the old head must
    /// meet the new head within that many links. One that does not is a
    /// broken state (a corrupt pool, or a bug): nothing is retired (a leak
    /// is safe, retiring a node still in the queue is not) and the error
    /// says so; the lock is released either way.
    fn finish<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        block: u64,
    ) -> Result<(), MementoError> {
        let prev = h.load(block + PREV);
        let end = h.load(block + HEAD);
        let first = h.load(prev + HEAD);
        let mut passed = 0;
        let mut n = first;
        while n != end && passed < self.threads {
            n = h.load(n + NEXT);
            passed += 1;
        }
        if n != end {
            self.unlock();
            return Err(MementoError::CorruptStructure(format!(
                "CombQ: the new head {end:#x} is not within {} links of the old head {first:#x}",
                self.threads
            )));
        }
        n = first;
        while n != end {
            let next = h.load(n + NEXT);
            h.retire(n);
            n = next;
        }
        h.retire(prev);
        self.unlock();
        Ok(())
    }

    /// Runs `op` (`enqueue v` when `Some(v)`, else `dequeue`) as a root
    /// operation's body; the result word is [`encode_opt`] of the dequeued
    /// value (0 for an enqueue).
    pub fn run<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B, CombQMmt>,
        mmt: &mut CombQMmt,
        op: Option<u64>,
    ) -> Result<u64, MementoError> {
        match op {
            Some(v) => self.enqueue(v, h, &mut mmt.insert).map(|()| 0),
            None => self.dequeue(h, &mut mmt.remove).map(encode_opt),
        }
    }

    /// The values from head to tail in the published state, read without
    /// synchronisation (after recovery, single-threaded).
    pub fn contents<B: Backend>(&self, pool: &Pool<B>) -> Result<Vec<u64>, MementoError> {
        let state = peek(pool, self.off + PUBLISHED);
        let (mut n, tail) = (peek(pool, state + HEAD), peek(pool, state + TAIL));
        let mut out = Vec::new();
        while n != tail {
            n = peek(pool, n + NEXT);
            pool.check_range(n, NODE, 8)?;
            out.push(peek(pool, n + VALUE));
            if out.len() as u64 > pool.size() / NODE {
                return Err(MementoError::CorruptStructure("CombQ: a cycle".into()));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ds::decode_opt;
    use crate::ds::testkit::{self, Rt};
    use std::collections::VecDeque;

    fn setup(rt: &Rt<CombQMmt>) -> CombQueue {
        let mut h = rt.handle(1).expect("handle");
        CombQueue::create(&mut h).expect("create")
    }

    fn op(q: &CombQueue, h: &mut Handle<'_, '_, perdure_pm::Sim, CombQMmt>, o: Option<u64>) -> u64 {
        h.run_root(|h, m, _| q.run(h, m, o).expect("op")).result
    }

    #[test]
    fn sequential_enqueue_dequeue_is_fifo() {
        testkit::with_runtime::<CombQMmt>(3, |rt| {
            let q = setup(rt);
            let mut model = VecDeque::new();
            for (k, tid) in (0..60u64).zip([1, 2, 3].iter().cycle()) {
                let mut h = rt.handle(*tid).unwrap();
                if k % 3 == 2 {
                    assert_eq!(decode_opt(op(&q, &mut h, None)), model.pop_front());
                } else {
                    op(&q, &mut h, Some(k));
                    model.push_back(k);
                }
            }
            assert_eq!(q.contents(rt.pool()).unwrap(), Vec::from(model.clone()));
            let mut h = rt.handle(2).unwrap();
            while let Some(v) = model.pop_front() {
                assert_eq!(decode_opt(op(&q, &mut h, None)), Some(v));
            }
            assert_eq!(op(&q, &mut h, None), 0, "empty");
            let r = h.run_root(|h, m, _| {
                testkit::opt(q.enqueue(u64::MAX, h, &mut m.insert).err().map(|_| 1))
            });
            assert_eq!(r.result, testkit::opt(Some(1)), "u64::MAX is refused");
            let q2 = CombQueue::at(rt.pool(), q.offset()).unwrap();
            assert!(q2.contents(rt.pool()).unwrap().is_empty());
        });
    }

    /// Two threads enqueue and dequeue (with thread crashes, if asked):
    /// every value is dequeued once, and each thread sees each producer's
    /// values in order.
    fn conservation(n: u64, crash_every: Option<u64>) {
        testkit::with_runtime::<CombQMmt>(2, |rt| {
            let q = setup(rt);
            let removed = testkit::two_thread_conservation(
                rt,
                &q,
                n,
                crash_every,
                &|q, h, o| op(q, h, o),
                |q| q.contents(rt.pool()).expect("contents"),
            );
            for seen in &removed {
                for producer in 1..=2 {
                    let mine: Vec<_> = seen.iter().filter(|v| *v / 100_000 == producer).collect();
                    assert!(
                        mine.windows(2).all(|w| w[0] < w[1]),
                        "FIFO per producer: {mine:?}"
                    );
                }
            }
        });
    }

    #[test]
    fn two_threads_conserve_every_value() {
        conservation(300, None);
    }

    #[test]
    fn two_threads_conserve_every_value_across_thread_crashes() {
        conservation(150, Some(29));
    }

    #[test]
    fn a_thread_crash_anywhere_in_enqueue_or_dequeue_acts_once() {
        testkit::with_runtime::<CombQMmt>(2, |rt| {
            let q = setup(rt);
            let mut h = rt.handle(1).unwrap();
            let mut model = VecDeque::new();
            testkit::thread_crash_sweep(&mut h, |h, n| {
                let r = h.run_root(|h, m, _| q.run(h, m, Some(n)).unwrap());
                model.push_back(n);
                r.thread_crashes
            });
            assert_eq!(q.contents(rt.pool()).unwrap(), Vec::from(model.clone()));
            testkit::thread_crash_sweep(&mut h, |h, _| {
                let r = h.run_root(|h, m, _| q.run(h, m, None).unwrap());
                assert_eq!(
                    decode_opt(r.result),
                    model.pop_front(),
                    "each dequeue once, in order"
                );
                r.thread_crashes
            });
        });
    }

    #[test]
    fn a_full_crash_anywhere_loses_and_repeats_nothing() {
        // Thread t enqueues 10t + 1 and 10t + 2 and dequeues twice.
        let sweep = testkit::insert_remove_full_crash_sweep::<CombQMmt, CombQueue>(
            setup,
            |pool, off| CombQueue::at(pool, off).expect("attach"),
            CombQueue::offset,
            &|q, h, m, o| q.run(h, m, o).expect("op"),
            |q, pool| q.contents(pool).expect("contents"),
        );
        assert!(sweep.images > 20, "{sweep:?}");
    }
}
