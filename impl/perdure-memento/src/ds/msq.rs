//! Detectable Michael–Scott queues (seed 001, §7 and §5): MSQ-mmt-cas,
//! MSQ-mmt-indel and MSQ-mmt-vol, one algorithm with three choices of
//! primitives.
//!
//! The queue is a linked list from `head` (a sentinel) to the last node;
//! `tail` is a hint at or behind the last node. A node is one line:
//! `[value, next, repl]`.
//!
//! | variant | `next` links and `head` | `tail` |
//! | --- | --- | --- |
//! | [`MsqKind::Cas`] (MSQ-mmt-cas) | detectable CAS (§3) | persistent, plain CAS |
//! | [`MsqKind::Indel`] (MSQ-mmt-indel) | insert / delete (§4) | persistent, plain CAS |
//! | [`MsqKind::Vol`] (MSQ-mmt-vol) | insert / delete (§4) | DRAM scratchpad (§5) |
//!
//! **enqueue(v)**: checkpoint a fresh node holding `v` (Requirement 2);
//! find the last node from `tail`, helping `tail` forward; link the node
//! with a detectable CAS on `last.next` (inside [`Handle::detectable_loop`],
//! Requirement 3) or with INSERT (no memento, no loop checkpoint: its
//! recovery finds the node by traversal, Algorithm 3 L18); then swing `tail`.
//!
//! **dequeue()**: loop with the observed head as the φ-node: if its `next` is
//! null the queue is empty; if head equals tail, help tail first (so head
//! never passes tail); then a detectable CAS or DELETE from head to next;
//! the value is next's, the old head is retired.
//!
//! **The tail hint.** Neither tail is flushed: after a crash it may name a
//! node that was dequeued and freed. Its invariants (§5) — tail is reachable
//! from head, and every link from head to tail is persisted — are
//! re-established at start-up by [`Msq::recover`] (tail := head) and kept by
//! moving tail only to a node whose link was loaded persisted and moving head
//! only when it differs from tail. In the `Vol` variant the hint lives in
//! DRAM and is updated only in normal execution (§5's guideline: a recovering
//! operation's checkpointed values may be stale), and dequeue reads links
//! behind tail without the persist-bit check (they are persisted by the
//! invariant): one flush fewer per dequeue.
//!
//! Linearization points: an enqueue at its link (the first plain CAS, or
//! INSERT's CAS); a dequeue at its CAS on head (or DELETE's commit, the CAS
//! on the old head's `repl`); an empty dequeue at the load of a null `next`.
//! Lock-free.
//!
//! **The location form** (`Msq<F>`, MSQ-mmt-cas only). By default
//! ([`OneWord`]) `head` and the `next` links are the seed's 8-byte
//! detectable-CAS words ([`UniqueCasAtomic`]), sound here because the queue
//! never installs a value twice on them while a reader of the first
//! installation is pinned (the `SAFETY` argument of its constructor). [`Msq::create_with_form`] with
//! [`TwoWord`] makes them the crate's default 16-byte
//! [`DetectableCasAtomic`] instead, exactly once without that argument:
//! `next` moves to bytes 16–31 of the node (`[value, -, next]`), and `head`
//! takes bytes 0–15 of its line. `tail` is never the target of a detectable
//! CAS (plain CASes of stable words) and stays one word in both. The two
//! forms are the same algorithm; `benches/cas_forms.rs` measures what the
//! second word costs (`docs/bench/cas-forms.md`).

use super::{encode_opt, peek, NODE};
use crate::cas::{CasMmt, DetectableCasAtomic, OneWord, TwoWord, UniqueCasAtomic};
use crate::checkpoint::Checkpoint;
use crate::compose::Memento;
use crate::insdel::InsDelAtomic;
use crate::runtime::{Handle, MementoError};
use crate::word::{offset_of, CasWord};
use perdure_pm::sync::atomic::{AtomicU64, Ordering};
use perdure_pm::{Backend, Pool};
use std::marker::PhantomData;
use std::ops::ControlFlow;

// A node's words (one line).
perdure_pm::word_offsets!(VALUE, NEXT, REPL);
// The layout is persistent: pools written before stay readable.
const _: () = assert!(VALUE == 0 && NEXT == 8 && REPL == 16);

mod sealed {
    use crate::cas::{CasForm, DetectableCasAtomic};

    /// What MSQ-mmt-cas needs of a form: where a node's `next` is, and how
    /// a location is made.
    pub trait Links: CasForm {
        /// Offset of `next` in a node of MSQ-mmt-cas.
        const NEXT: u64;
        /// The location of this form at `off`.
        fn loc(off: u64) -> DetectableCasAtomic<Self>;
    }
}
use sealed::Links;

/// A form MSQ-mmt-cas's locations can take: [`OneWord`] (the default) or
/// [`TwoWord`] (module docs). Sealed.
pub trait QueueForm: Links {}
impl QueueForm for OneWord {}
impl QueueForm for TwoWord {}

impl Links for OneWord {
    const NEXT: u64 = NEXT;
    /// MSQ-mmt-cas's `head`, `tail` and `next` words in the seed's one-word
    /// form ([`UniqueCasAtomic`]), 8 bytes in a node line.
    fn loc(off: u64) -> UniqueCasAtomic {
        // SAFETY: no value is installed twice on these words while a reader of
        // the first installation is still in its root operation. A `next` goes
        // from null to a node once, the node freshly allocated by the enqueue
        // (it is checkpointed, so a resumed enqueue links the same node, never
        // a second one). `head` and `tail` move forward along the list to nodes
        // never at that place before; a node comes back only after it was
        // dequeued, retired and freed by the runtime's reclamation (§6), which
        // frees it only once every thread pinned when it was retired — every
        // thread that could have read it in `head`, `tail` or a `next` — has
        // ended that critical section. A stalled helper holding an old word
        // is such a pinned thread.
        unsafe { UniqueCasAtomic::at_unique(off) }
    }
}

impl Links for TwoWord {
    /// 16-aligned, in the node's line: `[value, -, next (2 words)]` (REPL's
    /// word, which only insert/delete uses, is the first word of `next`).
    const NEXT: u64 = REPL;
    fn loc(off: u64) -> DetectableCasAtomic {
        DetectableCasAtomic::at(off)
    }
}

/// `tail` of MSQ-mmt-cas, one word in both forms: only plain CASes of
/// stable words and initialisation write it, so LOAD never helps there.
fn tail_loc(off: u64) -> UniqueCasAtomic {
    OneWord::loc(off)
}

/// The queue block: `head` in line 0, `tail` in line 1.
const HEAD: u64 = 0;
const TAIL: u64 = 64;

/// Which primitives the queue uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsqKind {
    /// MSQ-mmt-cas: detectable CAS everywhere.
    Cas,
    /// MSQ-mmt-indel: detectable insert and delete.
    Indel,
    /// MSQ-mmt-vol: insert and delete, tail in DRAM.
    Vol,
}

impl MsqKind {
    /// The seed's name.
    pub fn name(self) -> &'static str {
        match self {
            MsqKind::Cas => "MSQ-mmt-cas",
            MsqKind::Indel => "MSQ-mmt-indel",
            MsqKind::Vol => "MSQ-mmt-vol",
        }
    }
}

crate::memento! {
    /// The memento of an enqueue.
    pub struct EnqMmt {
        /// The allocated node.
        pub node: Checkpoint<1>,
        /// MSQ-mmt-cas: the loop's φ-node (the node believed last).
        pub last: Checkpoint<1>,
        /// MSQ-mmt-cas: the CAS linking the node.
        pub link: CasMmt,
    }
}

crate::memento! {
    /// The memento of a dequeue.
    pub struct DeqMmt {
        /// The loop's φ-node: the observed head.
        pub head: Checkpoint<1>,
        /// MSQ-mmt-cas: the CAS on head.
        pub cas: CasMmt,
    }
}

/// A root memento for a thread that enqueues and dequeues.
pub type QueueMmt = super::RootMmt<EnqMmt, DeqMmt>;

/// A detectable Michael–Scott queue; `F` is the form of MSQ-mmt-cas's
/// detectable-CAS locations (module docs; the other variants ignore it).
#[derive(Debug)]
pub struct Msq<F: QueueForm = OneWord> {
    kind: MsqKind,
    off: u64,
    /// MSQ-mmt-vol's tail (a node offset).
    tail_dram: AtomicU64,
    _form: PhantomData<F>,
}

impl Msq {
    /// Creates an empty queue (a block holding head and tail, and a
    /// sentinel node), durably; MSQ-mmt-cas in the seed's one-word form.
    pub fn create<B: Backend, M: Memento>(
        kind: MsqKind,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<Msq, MementoError> {
        Msq::create_with_form(kind, h)
    }

    /// The queue whose block is at `off`, after a crash or restart: call
    /// [`Msq::recover`] before any operation.
    pub fn at(kind: MsqKind, off: u64) -> Msq {
        Msq::at_with_form(kind, off)
    }
}

impl<F: QueueForm> Msq<F> {
    /// [`Msq::create`] with MSQ-mmt-cas's locations in form `F`
    /// (`Msq::<TwoWord>::create_with_form`: 16-byte locations).
    pub fn create_with_form<B: Backend, M: Memento>(
        kind: MsqKind,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<Msq<F>, MementoError> {
        let off = h.alloc(2 * NODE)?;
        let sentinel = h.alloc(NODE)?;
        let pool = h.pool();
        pool.pwb(sentinel, NODE);
        let q = Msq {
            kind,
            off,
            tail_dram: AtomicU64::new(sentinel),
            _form: PhantomData,
        };
        q.init_head(pool, sentinel);
        q.init_tail(pool, sentinel);
        pool.pfence();
        Ok(q)
    }

    /// [`Msq::at`] of a queue created in form `F`.
    pub fn at_with_form(kind: MsqKind, off: u64) -> Msq<F> {
        Msq {
            kind,
            off,
            tail_dram: AtomicU64::new(0),
            _form: PhantomData,
        }
    }

    /// The variant.
    pub fn kind(&self) -> MsqKind {
        self.kind
    }

    /// The queue block's offset (store it in the object root).
    pub fn offset(&self) -> u64 {
        self.off
    }

    fn init_head<B: Backend>(&self, pool: &Pool<B>, v: u64) {
        let loc = self.off + HEAD;
        match self.kind {
            MsqKind::Cas => F::loc(loc).init(pool, v),
            MsqKind::Indel | MsqKind::Vol => InsDelAtomic::at(loc).init(pool, v),
        }
    }

    fn init_tail<B: Backend>(&self, pool: &Pool<B>, v: u64) {
        let loc = self.off + TAIL;
        match self.kind {
            MsqKind::Cas => tail_loc(loc).init(pool, v),
            MsqKind::Indel | MsqKind::Vol => InsDelAtomic::at(loc).init(pool, v),
        }
    }

    /// The offset of `node`'s `next` word (MSQ-mmt-cas's depends on `F`).
    fn next_of(&self, node: u64) -> u64 {
        offset_of(node)
            + match self.kind {
                MsqKind::Cas => F::NEXT,
                MsqKind::Indel | MsqKind::Vol => NEXT,
            }
    }

    /// Start-up recovery (single-threaded, before the threads resume):
    /// validates the list from head (every pointer in the pool, no cycle)
    /// and re-establishes the tail invariant (tail := head).
    pub fn recover<B: Backend>(&self, pool: &Pool<B>) -> Result<(), MementoError> {
        pool.check_range(self.off, 2 * NODE, 64)?;
        if self.kind != MsqKind::Cas {
            self.help_head(pool)?;
        }
        let head = self.raw(pool, self.off + HEAD);
        let mut n = head;
        let mut steps = 0u64;
        while n != 0 {
            pool.check_range(offset_of(n), NODE, 8)
                .map_err(|e| MementoError::CorruptStructure(format!("queue node {n:#x}: {e}")))?;
            steps += 1;
            if steps > pool.size() / NODE {
                return Err(MementoError::CorruptStructure("cycle in the queue".into()));
            }
            n = self.raw(pool, self.next_of(n));
        }
        match self.kind {
            MsqKind::Vol => self.tail_dram.store(head, Ordering::SeqCst),
            _ => {
                self.init_tail(pool, head);
                pool.pfence();
            }
        }
        Ok(())
    }

    /// Moves `head` past blocks whose deletion committed (`repl` set) but
    /// whose L38 CAS on `head` did not persist: the delete completes (its
    /// result is durable in its memento or root slot) before its deferred
    /// flush of `head`, so a full crash can keep a head that is logically
    /// deleted. In normal execution LOADHELP moves it; at start-up this
    /// does, durably.
    fn help_head<B: Backend>(&self, pool: &Pool<B>) -> Result<(), MementoError> {
        let loc = self.off + HEAD;
        let mut steps = 0u64;
        loop {
            let head = self.raw(pool, loc);
            pool.check_range(offset_of(head), NODE, 8).map_err(|e| {
                MementoError::CorruptStructure(format!("queue head {head:#x}: {e}"))
            })?;
            let (tid, next) = crate::word::repl_decode(peek(pool, offset_of(head) + REPL));
            if tid == 0 {
                break;
            }
            steps += 1;
            if next == 0 || steps > pool.size() / NODE {
                return Err(MementoError::CorruptStructure(format!(
                    "queue head {head:#x}: replaced by {next:#x}"
                )));
            }
            InsDelAtomic::at(loc).init(pool, next);
        }
        pool.pfence();
        Ok(())
    }

    /// The value of a location word whatever its annotation.
    fn raw<B: Backend>(&self, pool: &Pool<B>, loc: u64) -> u64 {
        let w = peek(pool, loc);
        match self.kind {
            MsqKind::Cas => CasWord::decode(w).value,
            _ => crate::word::insdel_decode(w).1,
        }
    }

    /// The values from head to tail, without helping (after recovery,
    /// single-threaded).
    pub fn contents<B: Backend>(&self, pool: &Pool<B>) -> Result<Vec<u64>, MementoError> {
        self.recover(pool)?;
        let mut out = Vec::new();
        let mut n = self.raw(pool, self.next_of(self.raw(pool, self.off + HEAD)));
        while n != 0 {
            out.push(peek(pool, offset_of(n) + VALUE));
            n = self.raw(pool, self.next_of(n));
        }
        Ok(out)
    }

    fn load_tail<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>) -> u64 {
        match self.kind {
            MsqKind::Vol => self.tail_dram.load(Ordering::SeqCst),
            MsqKind::Cas => tail_loc(self.off + TAIL).load(h),
            MsqKind::Indel => crate::word::insdel_decode(h.load(self.off + TAIL)).1,
        }
    }

    /// Swings the tail hint from `t` to `n` (best effort, not flushed).
    /// Callers pass a `t` they just loaded from the tail and its successor
    /// `n`, whose link they loaded persisted — never a value recovered from a
    /// checkpoint alone (§5's guideline: a recovering operation's
    /// checkpointed values may be stale, and moving the tail to one could
    /// move it behind the head).
    fn swing_tail<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, t: u64, n: u64) {
        match self.kind {
            MsqKind::Vol => {
                let _ = self
                    .tail_dram
                    .compare_exchange(t, n, Ordering::SeqCst, Ordering::SeqCst);
            }
            MsqKind::Cas => {
                let _ = h.cas(
                    self.off + TAIL,
                    CasWord::stable(t).encode(),
                    CasWord::stable(n).encode(),
                );
            }
            MsqKind::Indel => {
                let _ = h.cas(self.off + TAIL, t, n);
            }
        }
    }

    /// A node's `next`, persisted (the link may be in the middle of an
    /// insert or a CAS).
    fn load_next<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, node: u64) -> u64 {
        let loc = self.next_of(node);
        match self.kind {
            MsqKind::Cas => F::loc(loc).load(h),
            _ => InsDelAtomic::at(loc).load(h),
        }
    }

    /// Whether `node` is in the queue (INSERT's recovery traversal). Links
    /// are read with LOAD, which persists a link whose persist bit is set:
    /// finding the node through an unpersisted link and reporting OK would
    /// lose the enqueue at the next full crash (specs/memento, mutant
    /// InsertRecoveryPlainLoad).
    fn contains<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>, node: u64) -> bool {
        let mut n = crate::word::insdel_decode(h.load(self.off + HEAD)).1;
        while n != 0 {
            if offset_of(n) == offset_of(node) {
                return true;
            }
            n = InsDelAtomic::at(offset_of(n) + NEXT).load(h);
        }
        false
    }

    /// Detectable enqueue.
    pub fn enqueue<B: Backend, M: Memento>(
        &self,
        v: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut EnqMmt,
    ) -> Result<(), MementoError> {
        let [node] = mmt.node.checkpoint_with(h, |h| {
            let n = h.alloc(NODE)?;
            h.store_private(n + VALUE, v);
            h.pwb(n, NODE); // fenced by checkpoint_with
            Ok::<_, MementoError>([n])
        })?;
        match self.kind {
            MsqKind::Cas => {
                let first = self.load_tail(h);
                h.detectable_loop(&mut mmt.last, [first], |h, [t]| {
                    // In recovery go straight to the CAS on the checkpointed
                    // `t`: only its recovery knows whether it took effect.
                    // Branching first on a fresh load of `t.next` — not a
                    // stable value (Requirement 2) — would see our own node
                    // there after a successful link, leave recovery at the
                    // next checkpoint and link the node after itself.
                    if !h.rec() {
                        let next = self.load_next(h, t);
                        if next != 0 {
                            self.swing_tail(h, t, next);
                            return ControlFlow::Continue([self.load_tail(h)]);
                        }
                    }
                    let link = F::loc(self.next_of(t));
                    match link.cas(0, node, h, &mut mmt.link) {
                        Ok(()) => {
                            self.swing_tail(h, t, node);
                            ControlFlow::Break(())
                        }
                        Err(_) => ControlFlow::Continue([self.load_tail(h)]),
                    }
                });
            }
            MsqKind::Indel | MsqKind::Vol => loop {
                let t = self.load_tail(h);
                let next = self.load_next(h, t);
                if next != 0 {
                    self.swing_tail(h, t, next);
                    continue;
                }
                let link = InsDelAtomic::at(offset_of(t) + NEXT);
                // In recovery INSERT succeeds if the node is anywhere in the
                // queue, so `t` need not be its predecessor: swing the tail
                // only after an insert done in normal execution.
                let normal = !h.rec();
                if link
                    .insert(node, node + REPL, h, |h, n| self.contains(h, n))
                    .is_ok()
                {
                    if normal {
                        self.swing_tail(h, t, node);
                    }
                    break;
                }
            },
        }
        Ok(())
    }

    /// Detectable dequeue: the oldest value, or `None` if empty.
    pub fn dequeue<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut DeqMmt,
    ) -> Option<u64> {
        let head = self.off + HEAD;
        let first = self.raw_head(h);
        h.detectable_loop(&mut mmt.head, [first], |h, [old]| {
            // Behind the tail every link is persisted (§5): MSQ-mmt-vol reads
            // it plainly unless old is the tail; the others always LOAD.
            let t = self.load_tail(h);
            let next = if self.kind == MsqKind::Vol && offset_of(old) != offset_of(t) {
                crate::word::insdel_decode(h.load(self.next_of(old))).1
            } else {
                self.load_next(h, old)
            };
            if next == 0 {
                return ControlFlow::Break(None);
            }
            if offset_of(old) == offset_of(t) {
                self.swing_tail(h, t, next);
            }
            let r = match self.kind {
                MsqKind::Cas => F::loc(head).cas(old, next, h, &mut mmt.cas).map(|()| {
                    h.retire(offset_of(old));
                }),
                _ => InsDelAtomic::at(head)
                    .delete(old, next, offset_of(old) + REPL, h)
                    .map(|_| ()),
            };
            match r {
                Ok(()) => ControlFlow::Break(Some(h.load(offset_of(next) + VALUE))),
                Err(_) => ControlFlow::Continue([self.raw_head(h)]),
            }
        })
    }

    /// The head as a dequeue starts from it: a stable value (helping a CAS or
    /// a delete in progress).
    fn raw_head<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>) -> u64 {
        let head = self.off + HEAD;
        match self.kind {
            MsqKind::Cas => F::loc(head).load(h),
            _ => {
                let old = crate::word::insdel_decode(h.load(head)).1;
                InsDelAtomic::at(head).load_help(h, old, offset_of(old) + REPL)
            }
        }
    }

    /// Runs `op` (`enqueue v` when `Some(v)`, else `dequeue`) as a root
    /// operation's body; the result word is [`encode_opt`] of the dequeued
    /// value (0 for an enqueue).
    pub fn run<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B, QueueMmt>,
        mmt: &mut QueueMmt,
        op: Option<u64>,
    ) -> Result<u64, MementoError> {
        match op {
            Some(v) => self.enqueue(v, h, &mut mmt.insert).map(|()| 0),
            None => Ok(encode_opt(self.dequeue(h, &mut mmt.remove))),
        }
    }
}

#[cfg(test)]
mod tests {
    //! MSQ-mmt-cas in the two-word form; the one-word form (the default) is
    //! swept by the crash explorer and `tests/suite/proptest_memento.rs`.
    use super::*;
    use crate::ds::{decode_opt, testkit};

    fn create(rt: &testkit::Rt<'_, QueueMmt>) -> Msq<TwoWord> {
        let mut h = rt.handle(1).expect("handle");
        Msq::create_with_form(MsqKind::Cas, &mut h).expect("create")
    }

    fn attach(pool: &Pool<perdure_pm::Sim>, off: u64) -> Msq<TwoWord> {
        let q = Msq::at_with_form(MsqKind::Cas, off);
        q.recover(pool).expect("recover");
        q
    }

    #[test]
    fn two_word_locations_sit_where_the_form_says() {
        testkit::with_runtime::<QueueMmt>(1, |rt| {
            let q = create(rt);
            let mut h = rt.handle(1).unwrap();
            let mut op = |o| decode_opt(h.run_root(|h, m, _| q.run(h, m, o).unwrap()).result);
            assert_eq!(op(Some(5)), None);
            let pool = rt.pool();
            let sentinel = CasWord::decode(peek(pool, q.offset() + HEAD)).value;
            let node = CasWord::decode(peek(pool, offset_of(sentinel) + REPL)).value;
            assert_eq!(peek(pool, offset_of(sentinel) + NEXT), 0, "word 1 unused");
            assert_eq!(peek(pool, offset_of(node) + VALUE), 5);
            assert_eq!(q.contents(pool).unwrap(), vec![5]);
            assert_eq!(op(None), Some(5));
            assert_eq!(op(None), None);
        });
    }

    #[test]
    fn two_word_form_conserves_every_value_across_thread_crashes() {
        testkit::with_runtime::<QueueMmt>(2, |rt| {
            let q = create(rt);
            testkit::two_thread_conservation(
                rt,
                &q,
                150,
                Some(29),
                &|q, h, o| h.run_root(|h, m, _| q.run(h, m, o).unwrap()).result,
                |q| q.contents(rt.pool()).expect("contents"),
            );
        });
    }

    #[test]
    fn two_word_form_loses_and_repeats_nothing_across_full_crashes() {
        let sweep = testkit::insert_remove_full_crash_sweep::<QueueMmt, Msq<TwoWord>>(
            create,
            attach,
            Msq::offset,
            &|q, h, m, o| q.run(h, m, o).expect("op"),
            |q, pool| q.contents(pool).expect("contents"),
        );
        assert!(sweep.images > 20, "{sweep:?}");
    }
}
