//! A detectable lock-free exchanger (seed 001, §7: "exchanger"; §4: "we can
//! implement Michael-Scott's queue and exchanger with insert and delete
//! operations"), built on one insert/delete location, the *slot*.
//!
//! Two threads that meet in the exchanger swap values; a thread that meets
//! nobody within its patience gets nothing. This is the exchanger of the
//! elimination-backoff stack (Hendler, Shavit, Yerushalmi 2004) and of
//! `java.util.concurrent.Exchanger`, with the slot protocol of the published
//! Memento implementation, made detectable with insert/delete (§4).
//!
//! ## Protocol
//!
//! The slot ([`InsDelAtomic`]) is null or holds a node (one line, `[value,
//! repl, kind]`) whose `kind` says what it is — `WAITING` (an offer: a
//! thread waits for a partner) or `MATCHED` (the node a partner left behind
//! when it took the waiting offer). A node is published at most once; its
//! `kind` is written, and persisted, just before the attempt that may
//! publish it (a re-run in the same iteration writes the same kind). A thread checkpoints a fresh node
//! holding its value, then loops over what it sees in the slot:
//!
//! * **null** — INSERT its node as `WAITING` (L16–L26), then *wait*;
//! * **a `WAITING` offer `w`** — if `accept(w.value)`, DELETE `w` replacing it
//!   by its own node as `MATCHED` (L27–L40). The delete's CAS on
//!   `w.repl` (L34) *is* the exchange: it records, in the offer node, the
//!   partner's thread id and node, and commits both sides at once. The
//!   thread returns `w.value`. If `accept` refuses (the elimination stack's
//!   push meeting a push), it gives up;
//! * **a `MATCHED` node `m`** — a finished exchange: DELETE `m` replacing it by
//!   its own node as `WAITING` (clearing the slot and offering in one
//!   step), then wait.
//!
//! A failed insert or delete (another thread got there first) retries with
//! the value it returns, at most `TRIES` times, then gives up.
//!
//! **Waiting.** Spin until the slot no longer holds the offer or `patience`
//! clock units have passed, then *cancel*: DELETE the own offer replacing it
//! by null. Success means nobody took it: time out (`None`). Failure means
//! `repl` is set — a partner took it: its node is `repl`'s value, and the
//! partner's value is in it. The waiter first *flushes* `repl`: the
//! partner's delete may not have persisted it yet, and returning a value the
//! next crash forgets would break exactly-once for the partner.
//!
//! Linearization: a successful exchange at the CAS on the offer's `repl`
//! (both partners, at one point); a time-out at the cancelling CAS; a give-up
//! at its last read of the slot. Lock-free: a thread retries only when
//! another thread's insert or delete succeeded, and it retries a bounded
//! number of times; waiting is bounded by `patience`.
//!
//! ## Memento ([`ExchangeMmt`]) and recovery
//!
//! | sub-memento | checkpoints | why |
//! | --- | --- | --- |
//! | `node` | the allocated node (value written and flushed) | an allocation is non-deterministic (Requirement 2); recovery reuses the block instead of leaking it and inserting another |
//! | `ctx` | the loop's φ-node `[slot value seen, tries]` | Requirement 3: the branch taken and the old value of a delete must be the same after a crash (Requirement 2) |
//!
//! Insert and delete need no memento: their progress is checkpointed in
//! the nodes themselves (§4.1). After a crash the operation is re-run with
//! the same memento: `node` and `ctx` replay, and then
//!
//! * INSERT's recovery (L17–L19) reports the offer made iff the node is in
//!   the slot or its `repl` is set;
//! * DELETE's recovery (L28–L31) reports the take (or the cancel) done iff
//!   the deleted node's `repl` names this thread — a single word, so the
//!   responder's and the waiter's recoveries read the same verdict;
//! * the cancel of a wait, if its recovery finds a `repl` naming another
//!   thread, reports the exchange that partner made; if it finds `repl`
//!   empty, nothing happened and it retries in normal mode.
//!
//! So a re-run returns what the interrupted run returned or would have
//! returned, and an exchange takes effect once for both partners.
//!
//! ## Reclamation (§6)
//!
//! Every published node is retired exactly once, by the thread whose DELETE
//! detaches it (L38: the responder retires the offer it took, a canceller its
//! own offer, a thread clearing a `MATCHED` node that node); a node never
//! published (give-up) is retired by its owner. EBR frees a node only after
//! every thread pinned when it was retired has left its critical section, so
//! a waiter reading its partner's node, or a thread reading an offer's
//! value, reads live memory; a thread crash revives the critical section and
//! a second retirement of the same node is deduplicated (§6.2); the root
//! memento holding `node` is cleared before the section ends (§6.3).

use super::NODE;
use crate::checkpoint::Checkpoint;
use crate::compose::Memento;
use crate::insdel::InsDelAtomic;
use crate::runtime::{Handle, MementoError};
use crate::word::{insdel_decode, repl_decode};
use perdure_pm::{Backend, Pool};
use std::ops::ControlFlow;

/// Word offsets in a node.
const VALUE: u64 = 0;
const REPL: u64 = 8;
const KIND: u64 = 16;
/// Kinds of a published node (0: never published).
const WAITING: u64 = 1;
const MATCHED: u64 = 2;
/// Failed inserts/deletes an exchange tolerates before giving up.
const TRIES: u64 = 4;

crate::memento! {
    /// The memento of an exchange.
    pub struct ExchangeMmt {
        /// The allocated node, holding the value offered.
        pub node: Checkpoint<1>,
        /// The loop's φ-node: `[slot value seen, tries so far]`.
        pub ctx: Checkpoint<2>,
    }
}

/// How one pass of the loop ended.
enum Step {
    /// The node is in the slot as `WAITING`: wait for a partner.
    Offered,
    /// A waiting partner was taken; its value.
    Took(u64),
    /// No exchange: contention, or `accept` refused the waiting offer.
    GaveUp,
}

/// An exchanger: a handle on its slot word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchanger {
    slot: InsDelAtomic,
}

impl Exchanger {
    /// Creates an empty exchanger (a fresh line holding the slot), durably.
    pub fn create<B: Backend, M: Memento>(
        h: &mut Handle<'_, '_, B, M>,
    ) -> Result<Exchanger, MementoError> {
        let off = h.alloc(NODE)?;
        let x = Exchanger::at(off);
        x.init(h.pool());
        h.pool().pfence();
        Ok(x)
    }

    /// The exchanger whose slot word is at `off` (8-aligned).
    pub fn at(off: u64) -> Exchanger {
        Exchanger {
            slot: InsDelAtomic::at(off),
        }
    }

    /// Empties the slot (before the exchanger is published; not detectable).
    pub fn init<B: Backend>(&self, pool: &Pool<B>) {
        self.slot.init(pool, 0);
    }

    /// The offset of its slot word.
    pub fn offset(&self) -> u64 {
        self.slot.offset()
    }

    /// The node offset in the slot and whether it is a waiting offer, read
    /// without helping (inspection and tests).
    pub fn peek<B: Backend>(&self, pool: &Pool<B>) -> Option<(u64, bool)> {
        let (_, v) = self.slot.peek(pool);
        (v != 0).then(|| (v, super::peek(pool, v + KIND) == WAITING))
    }

    /// Detectable exchange: offers `value` and returns the value of the
    /// partner it was exchanged with, or `None` if no partner came within
    /// `patience` clock units (see [`Handle::now`]), the slot was too
    /// contended, or `accept` refused the partner waiting there. `accept`
    /// must be deterministic: it decides a branch (Requirement 2).
    pub fn exchange<B: Backend, M: Memento>(
        &self,
        value: u64,
        accept: impl Fn(u64) -> bool,
        patience: u64,
        h: &mut Handle<'_, '_, B, M>,
        mmt: &mut ExchangeMmt,
    ) -> Result<Option<u64>, MementoError> {
        let [node] = mmt.node.checkpoint_with(h, |h| {
            let n = h.alloc(NODE)?;
            h.store_private(n + VALUE, value);
            // The whole line (`repl` must read null after a crash too),
            // and the heap's record of the allocation, durable before the
            // checkpoint naming the node: recovery skips this closure.
            h.flush(n, NODE);
            Ok::<_, MementoError>([n])
        })?;
        let first = self.slot.load(h);
        let step = h.detectable_loop(&mut mmt.ctx, [first, 0], |h, [seen, tries]| {
            if tries >= TRIES {
                return ControlFlow::Break(Step::GaveUp);
            }
            let r = if seen == 0 {
                // An empty slot: offer.
                set_kind(h, node, WAITING);
                self.slot
                    .insert(node, node + REPL, h, |h, n| self.slot.load(h) == n)
                    .map(|()| Step::Offered)
            } else if h.load(seen + KIND) == WAITING {
                // A partner waits. Its value is immutable: a stable branch.
                let theirs = h.load(seen + VALUE);
                if !accept(theirs) {
                    return ControlFlow::Break(Step::GaveUp);
                }
                set_kind(h, node, MATCHED);
                self.slot
                    .delete(seen, node, seen + REPL, h)
                    .map(|_| Step::Took(theirs))
            } else {
                // A finished exchange: clear it and offer in one step.
                set_kind(h, node, WAITING);
                self.slot
                    .delete(seen, node, seen + REPL, h)
                    .map(|_| Step::Offered)
            };
            match r {
                Ok(step) => ControlFlow::Break(step),
                Err(cur) => ControlFlow::Continue([cur, tries + 1]),
            }
        });
        Ok(match step {
            Step::Took(theirs) => Some(theirs),
            Step::Offered => self.wait(node, patience, h),
            Step::GaveUp => {
                // Never published; a re-run retires it again in the same
                // (revived) critical section, which EBR deduplicates.
                h.retire(node);
                None
            }
        })
    }

    /// Waits for a partner to take the offer `node` (in the slot as
    /// `WAITING`), then cancels it or finds who took it.
    fn wait<B: Backend, M: Memento>(
        &self,
        node: u64,
        patience: u64,
        h: &mut Handle<'_, '_, B, M>,
    ) -> Option<u64> {
        let deadline = h.now().saturating_add(patience);
        while insdel_decode(h.load(self.slot.offset())).1 == node && h.now() < deadline {
            perdure_pm::sync::spin_loop();
        }
        loop {
            if self.slot.delete(node, 0, node + REPL, h).is_ok() {
                return None; // cancelled: timed out
            }
            let (tid, theirs) = repl_decode(h.load(node + REPL));
            if tid == 0 {
                // DELETE's recovery found no cancel (L30): nothing happened
                // yet, and the thread is back in normal mode.
                continue;
            }
            // Taken. Persist the partner's commit before acting on it.
            h.flush(node + REPL, 8);
            return Some(h.load(theirs + VALUE));
        }
    }
}

/// Marks the still private `node` as `kind` before an attempt that may
/// publish it: durable before the slot or a `repl` can name it (on x86 the
/// attempt's locked CAS completes the write-back).
fn set_kind<B: Backend, M: Memento>(h: &mut Handle<'_, '_, B, M>, node: u64, kind: u64) {
    h.store(node + KIND, kind);
    h.pwb(node + KIND, 8);
    h.fence_unless_rmw_fences();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ds::testkit::{self, Rt};

    crate::memento! {
        struct XMmt {
            x: ExchangeMmt,
        }
    }

    const LONG: u64 = 200_000;

    fn setup(rt: &Rt<XMmt>) -> Exchanger {
        let mut h = rt.handle(1).expect("handle");
        Exchanger::create(&mut h).expect("create")
    }

    #[test]
    fn alone_an_exchange_times_out_and_leaves_the_slot_empty() {
        testkit::with_runtime::<XMmt>(2, |rt| {
            let x = setup(rt);
            let mut h = rt.handle(1).unwrap();
            for v in 0..5 {
                let r = h.run_root(|h, m, _| {
                    testkit::opt(x.exchange(v, |_| true, 8, h, &mut m.x).unwrap())
                });
                assert_eq!(r.result, 0, "nobody to exchange with");
                assert_eq!(x.peek(rt.pool()), None);
            }
        });
    }

    #[test]
    fn a_refused_partner_is_not_taken() {
        testkit::with_runtime::<XMmt>(2, |rt| {
            let x = setup(rt);
            std::thread::scope(|s| {
                let waiter = s.spawn(|| {
                    let mut h = rt.handle(1).unwrap();
                    h.run_root(|h, m, _| {
                        testkit::opt(x.exchange(7, |_| true, LONG, h, &mut m.x).unwrap())
                    })
                    .result
                });
                // Wait until the offer is in the slot, then refuse it.
                while x.peek(rt.pool()).is_none() && !waiter.is_finished() {
                    std::thread::yield_now();
                }
                let mut h = rt.handle(2).unwrap();
                let r = h.run_root(|h, m, _| {
                    testkit::opt(x.exchange(8, |v| v != 7, LONG, h, &mut m.x).unwrap())
                });
                assert_eq!(r.result, 0);
                assert_eq!(waiter.join().unwrap(), 0, "the waiter times out");
            });
        });
    }

    /// Two threads exchange `n` times each; every exchange that succeeds is
    /// matched by the partner's, symmetrically.
    fn pairs_match(n: u64, crash_every: Option<u64>) {
        testkit::quiet();
        testkit::with_runtime::<XMmt>(2, |rt| {
            let x = setup(rt);
            let results: Vec<Vec<(u64, Option<u64>)>> = std::thread::scope(|s| {
                let hs: Vec<_> = (1..=2u64)
                    .map(|tid| {
                        s.spawn(move || {
                            let mut h = rt.handle(tid as usize).unwrap();
                            let mut out = Vec::new();
                            for i in 0..n {
                                let v = 1000 * tid + i;
                                if let Some(k) = crash_every {
                                    h.crash_after(Some((i * 7 + tid) % k));
                                }
                                let r = h.run_root(|h, m, _| {
                                    testkit::opt(
                                        x.exchange(v, |_| true, LONG, h, &mut m.x).unwrap(),
                                    )
                                });
                                h.crash_after(None);
                                out.push((v, crate::ds::decode_opt(r.result)));
                            }
                            out
                        })
                    })
                    .collect();
                hs.into_iter().map(|t| t.join().unwrap()).collect()
            });
            let got: std::collections::HashMap<u64, Option<u64>> =
                results.iter().flatten().copied().collect();
            let mut matched = 0;
            for (v, r) in results.iter().flatten() {
                if let Some(w) = r {
                    assert_eq!(got.get(w), Some(&Some(*v)), "{v} got {w}, not vice versa");
                    assert_ne!(v / 1000, w / 1000, "a thread exchanged with itself");
                    matched += 1;
                }
            }
            assert!(matched > 0, "no exchange succeeded in {n} rounds");
        });
    }

    #[test]
    fn two_threads_exchange_symmetrically() {
        pairs_match(100, None);
    }

    #[test]
    fn two_threads_exchange_symmetrically_across_thread_crashes() {
        pairs_match(100, Some(23));
    }

    #[test]
    fn a_thread_crash_anywhere_in_a_timed_out_exchange_repeats_nothing() {
        testkit::quiet();
        testkit::with_runtime::<XMmt>(2, |rt| {
            let x = setup(rt);
            let mut h = rt.handle(1).unwrap();
            testkit::thread_crash_sweep(&mut h, |h, n| {
                let r = h.run_root(|h, m, _| {
                    testkit::opt(x.exchange(n, |_| true, 4, h, &mut m.x).unwrap())
                });
                assert_eq!(r.result, 0);
                assert_eq!(x.peek(rt.pool()), None, "the offer was not cancelled");
                r.thread_crashes
            });
        });
    }

    #[test]
    fn a_thread_crash_anywhere_in_either_partner_keeps_the_exchange_whole() {
        testkit::quiet();
        // The waiter (thread 1) offers with a long patience; the responder
        // (thread 2) crashes after n events, for every n.
        for side in [1usize, 2] {
            testkit::with_runtime::<XMmt>(2, |rt| {
                let x = setup(rt);
                let (mut n, mut missed) = (0, 0);
                loop {
                    let (r1, r2) = std::thread::scope(|s| {
                        let waiter = s.spawn(|| {
                            let mut h = rt.handle(1).unwrap();
                            if side == 1 {
                                h.crash_after(Some(n));
                            }
                            h.run_root(|h, m, _| {
                                testkit::opt(x.exchange(11, |_| true, LONG, h, &mut m.x).unwrap())
                            })
                        });
                        while x.peek(rt.pool()).map_or(true, |(_, w)| !w) && !waiter.is_finished() {
                            std::thread::yield_now();
                        }
                        let mut h = rt.handle(2).unwrap();
                        if side == 2 {
                            h.crash_after(Some(n));
                        }
                        let r2 = h.run_root(|h, m, _| {
                            testkit::opt(x.exchange(22, |_| true, LONG, h, &mut m.x).unwrap())
                        });
                        (waiter.join().unwrap(), r2)
                    });
                    if (r1.result, r2.result) == (0, 0) && missed < 100 {
                        // They did not meet (the waiter timed out before the
                        // responder came, on a loaded machine): again.
                        missed += 1;
                        continue;
                    }
                    assert_eq!(
                        (r1.result, r2.result),
                        (testkit::opt(Some(22)), testkit::opt(Some(11))),
                        "crash after {n} events of thread {side}"
                    );
                    let crashed = if side == 1 { r1 } else { r2 }.thread_crashes;
                    if crashed == 0 {
                        break;
                    }
                    n += 1;
                }
                assert!(n > 3, "the sweep covered {n} crash points");
            });
        }
    }

    #[test]
    fn a_full_crash_anywhere_keeps_exchanges_symmetric() {
        // Two threads exchange once each, concurrently; after a crash both
        // are resumed one after the other (no partner in sight, so a short
        // patience): either each got the other's value or neither got any.
        let sweep = testkit::full_crash_sweep::<XMmt, Exchanger>(
            &[1, 1],
            setup,
            |_, off| Exchanger::at(off),
            |x| x.offset(),
            &|x, tid, _, h, m, resumed| {
                let patience = if resumed { 8 } else { LONG };
                let v = 100 * tid as u64;
                testkit::opt(x.exchange(v, |_| true, patience, h, &mut m.x).unwrap())
            },
            |x, pool, r| {
                let (a, b) = (
                    crate::ds::decode_opt(r[0][0]),
                    crate::ds::decode_opt(r[1][0]),
                );
                if (a, b) != (Some(200), Some(100)) && (a, b) != (None, None) {
                    return Err(format!("asymmetric exchange: {a:?} / {b:?}"));
                }
                // The slot may still name a taken offer (its replacement is
                // written back at the end of the taker's critical section),
                // but never one nobody took.
                match x.peek(pool) {
                    Some((w, true)) if crate::ds::peek(pool, w + REPL) == 0 => {
                        Err(format!("offer {w:#x} is left waiting"))
                    }
                    _ => Ok(()),
                }
            },
        );
        assert!(sweep.images > 10, "{sweep:?}");
    }
}
