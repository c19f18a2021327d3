//! A detectable Treiber stack (seed 001, §7: "Treiber's stack, ref. 13"), made
//! detectable by the §2.4 transformation — the worked example of the crate
//! docs, complete.
//!
//! * `top` is a [`DetectableCasAtomic`]; a node is one line: `[value, next]`.
//! * **push(v)**: checkpoint a fresh node (allocation is non-deterministic:
//!   Requirement 2) holding `v`; loop with the expected top as the φ-node
//!   (Requirement 3): `node.next = top`, flush the node, detectable CAS
//!   `top: top → node`.
//! * **pop()**: loop with the observed top as the φ-node: empty → `None`;
//!   else detectable CAS `top: t → t.next`; on success retire `t` and return
//!   its value.
//!
//! The CAS sub-mementos are distinct per call site (Requirement 1, by the
//! [`memento!`](crate::memento) layout). Nodes are reclaimed with the
//! runtime's EBR: a popped node is retired in the pop's critical section and
//! freed two epochs later; the root memento holding it is cleared before the
//! section ends (§6.3).
//!
//! Linearization points: a push at its CAS's first plain CAS (L26), a pop at
//! its CAS's, an empty pop at the load of a null top. Lock-free.
//!
//! **No version tag.** A thread that pushes B over A, pops B, pushes C and
//! pops C installs the top value `A` again; with the seed's one-word
//! location that is the ABA the detectable CAS's recovery cannot tell apart
//! (`cas`, "The two-word location"). `top` is the default two-word
//! [`DetectableCasAtomic`], whose annotated pairs never recur, so the top's
//! value is just the node's offset and the stack is exactly once for any
//! workload. Null is offset 0.

use super::{encode_opt, NODE};
use crate::cas::{CasMmt, DetectableCasAtomic};
use crate::checkpoint::Checkpoint;
use crate::compose::Memento;
use crate::runtime::{Handle, MementoError};
use crate::word::offset_of;
use perdure_pm::{Backend, Pool};
use std::ops::ControlFlow;

crate::memento! {
    /// The memento of a push.
    pub struct PushMmt {
        /// The allocated node.
        pub node: Checkpoint<1>,
        /// The loop's φ-node: the expected top.
        pub top: Checkpoint<1>,
        /// The CAS publishing the node.
        pub cas: CasMmt,
    }
}

crate::memento! {
    /// The memento of a pop.
    pub struct PopMmt {
        /// The loop's φ-node: the observed top.
        pub top: Checkpoint<1>,
        /// The CAS unlinking it.
        pub cas: CasMmt,
    }
}

/// A root memento for a thread that pushes and pops.
pub type StackMmt = super::RootMmt<PushMmt, PopMmt>;

/// The stack: a handle on its `top` word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreiberStack {
    top: DetectableCasAtomic,
}

impl TreiberStack {
    /// Creates an empty stack (a fresh block holding `top`), durably.
    pub fn create<B: Backend, M: Memento>(
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<TreiberStack, MementoError> {
        let off = h.alloc(NODE)?;
        let s = TreiberStack {
            top: DetectableCasAtomic::at(off),
        };
        s.top.init(h.pool(), 0);
        h.pool().pfence();
        Ok(s)
    }

    /// The stack whose `top` word is at `off`.
    pub fn at(off: u64) -> TreiberStack {
        TreiberStack {
            top: DetectableCasAtomic::at(off),
        }
    }

    /// The offset of its `top` word (store it in the object root).
    pub fn offset(&self) -> u64 {
        self.top.offset()
    }

    /// Detectable push.
    pub fn push<B: Backend, M: Memento>(
        &self,
        v: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut PushMmt,
    ) -> Result<(), MementoError> {
        let [node] = mmt.node.checkpoint_with(h, |h| {
            let n = h.alloc(NODE)?;
            h.store_private(n, v);
            // Persisted before the checkpoint (checkpoint_with fences):
            // recovery skips this closure and never writes the value again.
            h.pwb(n, NODE);
            Ok::<_, MementoError>([n])
        })?;
        let first = self.top.load(h);
        h.detectable_loop(&mut mmt.top, [first], |h, [t]| {
            match self.try_push(node, t, h, &mut mmt.cas) {
                Ok(()) => ControlFlow::Break(()),
                Err(cur) => ControlFlow::Continue([cur]),
            }
        });
        Ok(())
    }

    /// One push attempt: link `node` (its value persisted) above `t`,
    /// persist the link, and CAS the top from `t`.
    pub(crate) fn try_push<B: Backend, M: Memento>(
        &self,
        node: u64,
        t: u64,
        h: &mut Handle<'_, '_, B, M>,
        cas: &mut CasMmt,
    ) -> Result<(), u64> {
        h.store(node + 8, t);
        h.flush(node, 16);
        self.top.cas(t, node, h, cas)
    }

    /// One pop attempt from the observed top `t` (not null): CAS the top to
    /// `t`'s successor; on success return `t`'s value and retire `t`.
    pub(crate) fn try_pop<B: Backend, M: Memento>(
        &self,
        t: u64,
        h: &mut Handle<'_, '_, B, M>,
        cas: &mut CasMmt,
    ) -> Result<u64, u64> {
        let next = h.load(offset_of(t) + 8);
        self.top.cas(t, next, h, cas)?;
        let v = h.load(offset_of(t));
        h.retire(offset_of(t));
        Ok(v)
    }

    /// The top, stable (helping a CAS in progress).
    pub(crate) fn load_top<B: Backend, M: Memento>(&self, h: &mut Handle<'_, '_, B, M>) -> u64 {
        self.top.load(h)
    }

    /// Detectable pop.
    pub fn pop<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut PopMmt,
    ) -> Option<u64> {
        let first = self.top.load(h);
        h.detectable_loop(&mut mmt.top, [first], |h, [t]| {
            if offset_of(t) == 0 {
                return ControlFlow::Break(None);
            }
            match self.try_pop(t, h, &mut mmt.cas) {
                Ok(v) => ControlFlow::Break(Some(v)),
                Err(cur) => ControlFlow::Continue([cur]),
            }
        })
    }

    /// Runs `op` (`push v` when `Some(v)`, else `pop`) as a root operation's
    /// body; the result word is [`encode_opt`] of the popped value (0 for a
    /// push).
    pub fn run<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B, StackMmt>,
        mmt: &mut StackMmt,
        op: Option<u64>,
    ) -> Result<u64, MementoError> {
        match op {
            Some(v) => self.push(v, h, &mut mmt.insert).map(|()| 0),
            None => Ok(encode_opt(self.pop(h, &mut mmt.remove))),
        }
    }

    /// The values from top to bottom, read without helping (after recovery,
    /// single-threaded); validates every pointer and fails on a corrupt or
    /// cyclic list.
    pub fn contents<B: Backend>(&self, pool: &Pool<B>) -> Result<Vec<u64>, MementoError> {
        let mut out = Vec::new();
        let mut t = self.top.peek(pool).value;
        while offset_of(t) != 0 {
            let t_off = offset_of(t);
            pool.check_range(t_off, NODE, 8)?;
            if out.len() as u64 > pool.size() / NODE {
                return Err(MementoError::CorruptStructure("cycle in the stack".into()));
            }
            out.push(super::peek(pool, t_off));
            t = super::peek(pool, t_off + 8);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ds::decode_opt;
    use crate::ds::testkit;

    #[test]
    fn the_top_never_repeats_an_annotated_pair_a_thread_installed() {
        testkit::with_runtime::<StackMmt>(1, |rt| {
            let mut h = rt.handle(1).unwrap();
            let s = TreiberStack::create(&mut h).unwrap();
            let pair = |rt: &crate::Runtime<'_, _, StackMmt>| {
                let w = crate::runtime::pm_load(rt.pool(), s.offset());
                let n = crate::runtime::pm_load(rt.pool(), s.offset() + 8);
                (w, n)
            };
            // Push A; then B and C pushed and popped: A is the top's value
            // again twice. Every push and pop leaves the top stable (nonce
            // 0), and every annotated pair it went through carried a nonce
            // t_own that no other CAS of the thread used: OWN advanced.
            let mut op = |o| h.run_root(|h, m, _| s.run(h, m, o).expect("op")).result;
            op(Some(1));
            let a = s.top.peek(rt.pool()).value;
            let mut owns = vec![rt.own(1).ts];
            for v in [2, 3] {
                op(Some(v));
                owns.push(rt.own(1).ts);
                assert_eq!(decode_opt(op(None)), Some(v));
                owns.push(rt.own(1).ts);
                assert_eq!(s.top.peek(rt.pool()).value, a, "A is the top again");
                assert_eq!(pair(rt).1, 0, "a stable top has nonce 0");
            }
            let mut sorted = owns.clone();
            sorted.dedup();
            assert_eq!(sorted.len(), owns.len(), "t_own never repeats: {owns:?}");
            assert_eq!(decode_opt(op(None)), Some(1));
            assert_eq!(offset_of(s.top.peek(rt.pool()).value), 0, "empty");
            assert_eq!(decode_opt(op(None)), None);
            assert_eq!(s.contents(rt.pool()).unwrap(), Vec::<u64>::new());
        });
    }

    #[test]
    fn a_failed_root_operation_stays_pending_and_resumes_exactly_once() {
        testkit::with_runtime::<StackMmt>(1, |rt| {
            let mut h = rt.handle(1).unwrap();
            let s = TreiberStack::create(&mut h).unwrap();
            // The push takes effect, then the body fails after it.
            let failed = h.try_run_root(|h, m, _| {
                s.push(7, h, &mut m.insert).map_err(|e| e.to_string())?;
                Err::<u64, String>("caller's error after the push".into())
            });
            assert_eq!(failed.unwrap_err(), "caller's error after the push");
            assert_eq!(rt.next_op(1), 0, "nothing committed");
            // Resumed: same index, in recovery mode; the push is found done.
            let done = h
                .try_run_root(|h, m, _| {
                    assert!(h.rec(), "the pending operation resumes in recovery");
                    s.push(7, h, &mut m.insert).map(|()| 0)
                })
                .unwrap();
            assert_eq!(done.index, 0);
            assert_eq!(rt.next_op(1), 1);
            assert_eq!(
                s.contents(rt.pool()).unwrap(),
                vec![7],
                "pushed exactly once"
            );
        });
    }
}
