//! A detectable elimination-backoff stack (seed 001, §7: "elimination stack,
//! ref. 27" — Hendler, Shavit, Yerushalmi, "A Scalable Lock-Free Stack
//! Algorithm", SPAA 2004), made detectable by the §2.4 transformation.
//!
//! A Treiber stack ([`super::treiber`], whose loop bodies it reuses) plus an
//! *elimination array* of [`Exchanger`]s. A push and a pop that meet cancel
//! out: the pop takes the push's value and neither touches `top`. As in
//! Hendler et al., an operation goes to the array only when its CAS on `top`
//! fails (contention is when elimination pays), and returns to the stack if
//! nobody eliminates with it.
//!
//! * **push(v)**: checkpoint a fresh node holding `v`; loop with φ-node
//!   `[expected top, round]`: link and CAS the node in (`try_push`); on
//!   failure, offer `v + 1` at exchanger `slot(top, round)`, accepting only a
//!   pop's offer (0). Eliminated: retire the node (it was never published)
//!   and return. Otherwise next round with a fresh top.
//! * **pop()**: loop with φ-node `[observed top, round]`: null → empty;
//!   CAS it off (`try_pop`); on failure offer 0 at `slot(top, round)`,
//!   accepting only a push's offer; eliminated → the push's value.
//!
//! The exchanger is chosen by a hash of the φ-node — stable by
//! construction (Requirement 2), and "random" as Hendler et al. want, with a
//! twist: operations that failed on the same top in the same round go to
//! the same exchanger, which is where their partners are.
//!
//! ## Mementos ([`ElimPushMmt`], [`ElimPopMmt`])
//!
//! | sub-memento | what | why |
//! | --- | --- | --- |
//! | `node` (push) | the allocated node | allocation is non-deterministic (Requirement 2) |
//! | `ctx` | φ-node `[top, round]`, at the head of every iteration | Requirement 3: the CAS's inputs and the exchanger's index are stable per iteration |
//! | `cas` | the detectable CAS on `top` (§3) | one attempt on the stack |
//! | `xchg` | the [`ExchangeMmt`] of the elimination attempt | one attempt in the array |
//!
//! Each attempt — on the stack, then in the array — has its own
//! sub-memento (Requirement 1) and both are reused across iterations,
//! which the φ checkpoint makes safe: after a crash the loop resumes in the
//! iteration it was in, a sub-memento checkpointed in an earlier iteration
//! is older than that iteration's φ (LOCAL) and is ignored, and the CAS and
//! the exchange each report whether they took effect (§3.3; the exchanger's
//! recovery). So a push takes effect once — on the stack or by elimination
//! — and a pop returns one value once.
//!
//! ## Reclamation (§6)
//!
//! A popped node is retired by its popper (Treiber); a push node that was
//! eliminated was never published and is retired by its pusher (twice after
//! a thread crash in a revived section: deduplicated); exchanger nodes as in
//! [`super::exchanger`]. The root memento, which holds the node and the φ,
//! is cleared before the critical section ends.
//!
//! Linearization: as the Treiber stack for operations that succeed on
//! `top`; an eliminated push and pop at the exchange's commit, push first.
//! Lock-free.

use super::exchanger::{ExchangeMmt, Exchanger};
use super::treiber::TreiberStack;
use super::{encode_opt, NODE};
use crate::cas::{CasMmt, DetectableCasAtomic};
use crate::checkpoint::Checkpoint;
use crate::compose::Memento;
use crate::runtime::{Handle, MementoError};
use perdure_pm::sync::atomic::{AtomicU64, Ordering};
use perdure_pm::{Backend, Pool};
use std::ops::ControlFlow;

/// Exchangers in the elimination array of [`ElimStack::create`].
pub const ELIM_SLOTS: u64 = 2;
/// Largest elimination array [`ElimStack::at`] accepts.
pub const MAX_ELIM_SLOTS: u64 = 64;
/// A pop's offer (a push offers its value plus one).
const POP_OFFER: u64 = 0;
/// Word 2 of the stack's first line (after the two-word `top`): the number
/// of exchangers.
const SLOTS_WORD: u64 = 16;

crate::memento! {
    /// The memento of a push.
    pub struct ElimPushMmt {
        /// The allocated node.
        pub node: Checkpoint<1>,
        /// The loop's φ-node: `[expected top, round]`.
        pub ctx: Checkpoint<2>,
        /// The CAS publishing the node.
        pub cas: CasMmt,
        /// The elimination attempt.
        pub xchg: ExchangeMmt,
    }
}

crate::memento! {
    /// The memento of a pop.
    pub struct ElimPopMmt {
        /// The loop's φ-node: `[observed top, round]`.
        pub ctx: Checkpoint<2>,
        /// The CAS unlinking the top.
        pub cas: CasMmt,
        /// The elimination attempt.
        pub xchg: ExchangeMmt,
    }
}

/// A root memento for a thread that pushes and pops.
pub type ElimStackMmt = super::RootMmt<ElimPushMmt, ElimPopMmt>;

/// The elimination stack: one block, `top` and the array size in line 0,
/// exchanger `i`'s slot in line `1 + i`.
#[derive(Debug)]
pub struct ElimStack {
    stack: TreiberStack,
    off: u64,
    slots: u64,
    patience: Option<u64>,
    eliminations: AtomicU64,
}

impl ElimStack {
    /// Creates an empty stack with [`ELIM_SLOTS`] exchangers, durably.
    pub fn create<B: Backend, M: Memento>(
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<ElimStack, MementoError> {
        Self::create_with(h, ELIM_SLOTS)
    }

    /// Creates an empty stack with `slots` exchangers (1..=[`MAX_ELIM_SLOTS`]).
    pub fn create_with<B: Backend, M: Memento>(
        h: &mut Handle<'_, '_, B, M>,
        slots: u64,
    ) -> Result<ElimStack, MementoError> {
        if !(1..=MAX_ELIM_SLOTS).contains(&slots) {
            return Err(MementoError::Config(format!(
                "an elimination array has 1..={MAX_ELIM_SLOTS} exchangers, not {slots}"
            )));
        }
        let off = h.alloc(NODE * (1 + slots))?;
        let pool = h.pool();
        DetectableCasAtomic::at(off).init(pool, 0);
        crate::runtime::pm_word(pool, off + SLOTS_WORD).store(slots, Ordering::Release);
        for i in 0..slots {
            Exchanger::at(off + NODE * (1 + i)).init(pool);
        }
        pool.pwb(off, NODE * (1 + slots));
        pool.pfence();
        Ok(Self::with(off, slots))
    }

    fn with(off: u64, slots: u64) -> ElimStack {
        ElimStack {
            stack: TreiberStack::at(off),
            off,
            slots,
            patience: None,
            eliminations: AtomicU64::new(0),
        }
    }

    /// The stack whose block is at `off` (after a restart), validated.
    pub fn at<B: Backend>(pool: &Pool<B>, off: u64) -> Result<ElimStack, MementoError> {
        pool.check_range(off, NODE, 64)?;
        let slots = super::peek(pool, off + SLOTS_WORD);
        if !(1..=MAX_ELIM_SLOTS).contains(&slots) {
            return Err(MementoError::CorruptStructure(format!(
                "elimination stack at {off:#x}: {slots} exchangers"
            )));
        }
        pool.check_range(off, NODE * (1 + slots), 64)?;
        Ok(Self::with(off, slots))
    }

    /// The offset of its block (store it in the object root).
    pub fn offset(&self) -> u64 {
        self.off
    }

    /// Sets how long an eliminating operation waits in an exchanger for a
    /// partner, in clock units (default: the runtime's PATIENCE).
    pub fn set_patience(&mut self, patience: u64) {
        self.patience = Some(patience);
    }

    /// Exchanges that eliminated a push with a pop since this handle was
    /// made (each pair counted by both; DRAM, for statistics).
    pub fn eliminations(&self) -> u64 {
        self.eliminations.load(Ordering::Relaxed)
    }

    /// The exchanger an operation that failed on `top` in `round` tries: a
    /// hash of the (stable) φ-node.
    fn exchanger(&self, top: u64, round: u64) -> Exchanger {
        let mix =
            (top ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        Exchanger::at(self.off + NODE * (1 + (mix >> 32) % self.slots))
    }

    /// One elimination attempt: offers `offer` at the exchanger chosen by
    /// `(top, round)`, taking only a partner of the other kind. Returns the
    /// partner's offer.
    pub(crate) fn eliminate<B: Backend, M: Memento>(
        &self,
        offer: u64,
        top: u64,
        round: u64,
        h: &mut Handle<'_, '_, B, M>,
        xchg: &mut ExchangeMmt,
    ) -> Result<Option<u64>, MementoError> {
        let patience = self.patience.unwrap_or_else(|| h.runtime().patience());
        let pushing = offer != POP_OFFER;
        let r = self.exchanger(top, round).exchange(
            offer,
            |theirs| (theirs == POP_OFFER) == pushing,
            patience,
            h,
            xchg,
        )?;
        if r.is_some() {
            self.eliminations.fetch_add(1, Ordering::Relaxed);
        }
        Ok(r)
    }

    /// Detectable push. Values must be below `u64::MAX` (a push offers
    /// `v + 1` to the elimination array).
    pub fn push<B: Backend, M: Memento>(
        &self,
        v: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut ElimPushMmt,
    ) -> Result<(), MementoError> {
        let offer = v.checked_add(1).ok_or_else(|| {
            MementoError::Config("the elimination stack cannot hold u64::MAX".into())
        })?;
        let [node] = mmt.node.checkpoint_with(h, |h| {
            let n = h.alloc(NODE)?;
            h.store_private(n, v);
            // Durable (with the heap's record of the allocation) before the
            // checkpoint naming the node: recovery skips this closure.
            h.flush(n, NODE);
            Ok::<_, MementoError>([n])
        })?;
        let first = self.stack.load_top(h);
        h.detectable_loop(&mut mmt.ctx, [first, 0], |h, [t, round]| {
            if self.stack.try_push(node, t, h, &mut mmt.cas).is_ok() {
                return ControlFlow::Break(Ok(()));
            }
            match self.eliminate(offer, t, round, h, &mut mmt.xchg) {
                Ok(Some(_)) => {
                    // Eliminated: the node never reached the stack.
                    h.retire(node);
                    ControlFlow::Break(Ok(()))
                }
                Ok(None) => ControlFlow::Continue([self.stack.load_top(h), round + 1]),
                Err(e) => ControlFlow::Break(Err(e)),
            }
        })
    }

    /// Detectable pop: the top value, or `None` if the stack is empty.
    pub fn pop<B: Backend, M: Memento>(
        &self,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut ElimPopMmt,
    ) -> Result<Option<u64>, MementoError> {
        let first = self.stack.load_top(h);
        h.detectable_loop(&mut mmt.ctx, [first, 0], |h, [t, round]| {
            if crate::word::offset_of(t) == 0 {
                return ControlFlow::Break(Ok(None));
            }
            if let Ok(v) = self.stack.try_pop(t, h, &mut mmt.cas) {
                return ControlFlow::Break(Ok(Some(v)));
            }
            match self.eliminate(POP_OFFER, t, round, h, &mut mmt.xchg) {
                Ok(Some(pushed)) => ControlFlow::Break(Ok(Some(pushed - 1))),
                Ok(None) => ControlFlow::Continue([self.stack.load_top(h), round + 1]),
                Err(e) => ControlFlow::Break(Err(e)),
            }
        })
    }

    /// Runs `op` (`push v` when `Some(v)`, else `pop`) as a root operation's
    /// body; the result word is [`encode_opt`] of the popped value (0 for a
    /// push).
    pub fn run<B: Backend>(
        &self,
        h: &mut Handle<'_, '_, B, ElimStackMmt>,
        mmt: &mut ElimStackMmt,
        op: Option<u64>,
    ) -> Result<u64, MementoError> {
        match op {
            Some(v) => self.push(v, h, &mut mmt.insert).map(|()| 0),
            None => self.pop(h, &mut mmt.remove).map(encode_opt),
        }
    }

    /// The values from top to bottom, read without helping (after recovery,
    /// single-threaded).
    pub fn contents<B: Backend>(&self, pool: &Pool<B>) -> Result<Vec<u64>, MementoError> {
        self.stack.contents(pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ds::decode_opt;
    use crate::ds::testkit::{self, Rt};

    fn setup(rt: &Rt<ElimStackMmt>) -> ElimStack {
        let mut h = rt.handle(1).expect("handle");
        ElimStack::create(&mut h).expect("create")
    }

    fn op(
        s: &ElimStack,
        h: &mut Handle<'_, '_, perdure_pm::Sim, ElimStackMmt>,
        o: Option<u64>,
    ) -> u64 {
        h.run_root(|h, m, _| s.run(h, m, o).expect("op")).result
    }

    #[test]
    fn sequential_push_pop_is_lifo() {
        testkit::with_runtime::<ElimStackMmt>(2, |rt| {
            let s = setup(rt);
            let mut h = rt.handle(1).unwrap();
            assert_eq!(op(&s, &mut h, None), 0, "empty");
            let mut model = Vec::new();
            for i in 0..40u64 {
                if i % 3 == 2 {
                    assert_eq!(decode_opt(op(&s, &mut h, None)), model.pop());
                } else {
                    op(&s, &mut h, Some(i));
                    model.push(i);
                }
            }
            let mut top_first = model.clone();
            top_first.reverse();
            assert_eq!(s.contents(rt.pool()).unwrap(), top_first);
            while let Some(v) = model.pop() {
                assert_eq!(decode_opt(op(&s, &mut h, None)), Some(v));
            }
            assert_eq!(op(&s, &mut h, None), 0);
            let r = h.run_root(|h, m, _| {
                testkit::opt(s.push(u64::MAX, h, &mut m.insert).err().map(|_| 1))
            });
            assert_eq!(r.result, testkit::opt(Some(1)), "u64::MAX is refused");
        });
    }

    #[test]
    fn a_push_and_a_pop_eliminate_in_the_array() {
        testkit::with_runtime::<ElimStackMmt>(2, |rt| {
            let mut s = setup(rt);
            s.set_patience(200_000);
            let (pushed, popped) = std::thread::scope(|sc| {
                let pusher = sc.spawn(|| {
                    let mut h = rt.handle(1).unwrap();
                    h.run_root(|h, m, _| {
                        testkit::opt(s.eliminate(42 + 1, 0x40, 3, h, &mut m.insert.xchg).unwrap())
                    })
                    .result
                });
                let mut h = rt.handle(2).unwrap();
                let mut popped = 0;
                // Until the two meet (the pop may offer first and time out).
                for _ in 0..1000 {
                    if popped != 0 {
                        break;
                    }
                    popped = h
                        .run_root(|h, m, _| {
                            testkit::opt(
                                s.eliminate(POP_OFFER, 0x40, 3, h, &mut m.remove.xchg)
                                    .unwrap(),
                            )
                        })
                        .result;
                }
                (pusher.join().unwrap(), popped)
            });
            assert_eq!(decode_opt(pushed), Some(POP_OFFER), "the push met a pop");
            assert_eq!(decode_opt(popped), Some(43), "the pop got the push's value");
        });
    }

    /// Two threads push and pop (with thread crashes, if asked): every
    /// value is popped once; returns the eliminating exchanges.
    fn conservation(n: u64, crash_every: Option<u64>) -> u64 {
        let mut eliminations = 0;
        testkit::with_runtime::<ElimStackMmt>(2, |rt| {
            let mut s = setup(rt);
            s.set_patience(2_000);
            testkit::two_thread_conservation(rt, &s, n, crash_every, &|s, h, o| op(s, h, o), |s| {
                s.contents(rt.pool()).expect("contents")
            });
            eliminations = s.eliminations();
        });
        eliminations
    }

    #[test]
    fn two_threads_conserve_every_value() {
        let e = conservation(300, None);
        eprintln!("elim-stack: {e} eliminating exchanges");
    }

    #[test]
    fn two_threads_conserve_every_value_across_thread_crashes() {
        conservation(150, Some(31));
    }

    #[test]
    fn a_thread_crash_anywhere_in_push_or_pop_acts_once() {
        testkit::with_runtime::<ElimStackMmt>(2, |rt| {
            let s = setup(rt);
            let mut h = rt.handle(1).unwrap();
            let mut model = Vec::new();
            testkit::thread_crash_sweep(&mut h, |h, n| {
                let r = h.run_root(|h, m, _| s.run(h, m, Some(n)).unwrap());
                model.push(n);
                r.thread_crashes
            });
            let mut top_first = model.clone();
            top_first.reverse();
            assert_eq!(s.contents(rt.pool()).unwrap(), top_first, "each push once");
            testkit::thread_crash_sweep(&mut h, |h, _| {
                let r = h.run_root(|h, m, _| s.run(h, m, None).unwrap());
                assert_eq!(decode_opt(r.result), model.pop(), "each pop once, in order");
                r.thread_crashes
            });
        });
    }

    #[test]
    fn a_full_crash_anywhere_loses_and_repeats_nothing() {
        // Thread t pushes 10t + 1 and 10t + 2 and pops twice, concurrently.
        let sweep = testkit::insert_remove_full_crash_sweep::<ElimStackMmt, ElimStack>(
            |rt| {
                let mut h = rt.handle(1).expect("handle");
                ElimStack::create_with(&mut h, 1).expect("create")
            },
            |pool, off| ElimStack::at(pool, off).expect("attach"),
            ElimStack::offset,
            &|s, h, m, o| s.run(h, m, o).expect("op"),
            |s, pool| s.contents(pool).expect("contents"),
        );
        assert!(sweep.images > 20, "{sweep:?}");
    }
}
