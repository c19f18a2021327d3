//! Model-based property tests of Memento's detectable queues and stacks
//! (MSQ-mmt-cas, MSQ-mmt-indel, MSQ-mmt-vol, CombQ-mmt, the Treiber stack,
//! the elimination stack): proptest generates one thread's histories of
//! root operations with, in between, clean reopens, full crashes on the
//! `Sim` backend (between operations, or inside an operation after a chosen
//! persistence event, one Px86 crash image of the point) and thread crashes
//! (§2.5: the operation re-run by `run_root`), and checks them against a
//! `VecDeque`; a failure shrinks to a minimal history.
//!
//! Detectability is checked exactly: after a crash inside an operation the
//! runtime says whether it committed (`next_op`); if it did, its recorded
//! result (`last_result`) must be the model's, and if not, resuming it with
//! its memento (recovery mode) must return the model's result — the
//! operation takes effect exactly once either way, and the recovered
//! contents must be the model's. A crash between operations or a reopen
//! must lose nothing that returned.
//!
//! Cases per structure: `PROPTEST_CASES` (default 64), from
//! `PROPTEST_RNG_SEED` (default 1). Does not cover:
//! several threads (the structures' unit tests' full-crash sweeps and the
//! crash explorer), thread crashes during recovery.

#[path = "../../../perdure-pm/tests/support/sim_proptest.rs"]
mod sim_proptest;

use perdure_memento::ds::combq::{CombQMmt, CombQueue};
use perdure_memento::ds::elim::{ElimStack, ElimStackMmt};
use perdure_memento::ds::msq::{Msq, MsqKind, QueueMmt};
use perdure_memento::ds::treiber::{StackMmt, TreiberStack};
use perdure_memento::ds::{decode_opt, encode_opt};
use perdure_memento::{ClockKind, Config, Handle, Memento, MementoError, Runtime};
use perdure_pm::sim::CrashPoint;
use perdure_pm::{Pool, Sim};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestError, TestRunner};
use sim_proptest::{image_words, runner_config};
use std::collections::VecDeque;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

const BASE: u64 = 4096;

/// One thread, five 256 KiB heap chunks, the counter clock (reproducible).
fn config() -> Config {
    let mut c = Config::default();
    (c.threads, c.heap_bytes, c.clock) = (1, 1536 << 10, ClockKind::Counter);
    c
}

/// One step of a generated history; `true` is a push (enqueue) of a value
/// of its own, `false` a pop (dequeue).
#[derive(Clone, Debug)]
enum Step {
    /// A root operation.
    Op(bool),
    /// Close and reopen the pool: every write has reached NVMM.
    Reopen,
    /// A full crash between operations, recovering image `image`.
    Crash { image: u8 },
    /// A full crash inside operation `push` after its `event`-th
    /// persistence event (after it if it has fewer), recovering image
    /// `image`; the operation is then resumed if it had not committed.
    CrashIn { push: bool, event: u8, image: u8 },
    /// One thread crash after the `event`-th persistence event (from 0) of
    /// operation `push`, if it gets that far; `run_root` then re-runs it in
    /// recovery mode, uncrashed ([`Handle::crash_after`] is one-shot).
    ThreadCrash { push: bool, event: u8 },
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        8 => any::<bool>().prop_map(Step::Op),
        1 => Just(Step::Reopen),
        1 => (0u8..8).prop_map(|image| Step::Crash { image }),
        3 => (any::<bool>(), 0u8..32, 0u8..8)
            .prop_map(|(push, event, image)| Step::CrashIn { push, event, image }),
        2 => (any::<bool>(), 0u8..32).prop_map(|(push, event)| Step::ThreadCrash { push, event }),
    ];
    prop::collection::vec(step, 1..24)
}

/// A detectable queue or stack and how its contents are ordered.
trait Subject: Debug {
    /// The thread's root memento.
    type M: Memento + 'static;
    /// The structure, attached to a runtime.
    type Obj;
    /// Whether it is a stack (`contents` top first) or a queue (head first).
    const STACK: bool;
    fn create(&self, h: &mut Handle<'_, '_, Sim, Self::M>) -> Result<Self::Obj, MementoError>;
    fn attach(&self, pool: &Pool<Sim>, off: u64) -> Result<Self::Obj, MementoError>;
    fn offset(obj: &Self::Obj) -> u64;
    /// Push `Some(v)` or pop, as a root operation's body: the result word.
    fn run(
        obj: &Self::Obj,
        h: &mut Handle<'_, '_, Sim, Self::M>,
        m: &mut Self::M,
        op: Option<u64>,
    ) -> Result<u64, MementoError>;
    fn contents(obj: &Self::Obj, pool: &Pool<Sim>) -> Result<Vec<u64>, MementoError>;
}

/// A [`Subject`] whose structure type `$obj` has the common `offset`,
/// `run` and `contents`; `$create` and `$attach` (given `$s`, the subject,
/// and `$h` or `$pool`, `$off`) make it.
macro_rules! subject {
    ($subject:ty, $mmt:ty, $obj:ty, stack: $stack:expr,
     create: |$s:ident, $h:ident| $create:expr,
     attach: |$s2:ident, $pool:ident, $off:ident| $attach:expr) => {
        impl Subject for $subject {
            type M = $mmt;
            type Obj = $obj;
            const STACK: bool = $stack;
            fn create(&self, $h: &mut Handle<'_, '_, Sim, $mmt>) -> Result<$obj, MementoError> {
                let $s = self;
                $create
            }
            fn attach(&self, $pool: &Pool<Sim>, $off: u64) -> Result<$obj, MementoError> {
                let $s2 = self;
                $attach
            }
            fn offset(obj: &$obj) -> u64 {
                obj.offset()
            }
            fn run(
                obj: &$obj,
                h: &mut Handle<'_, '_, Sim, $mmt>,
                m: &mut $mmt,
                op: Option<u64>,
            ) -> Result<u64, MementoError> {
                obj.run(h, m, op)
            }
            fn contents(obj: &$obj, pool: &Pool<Sim>) -> Result<Vec<u64>, MementoError> {
                obj.contents(pool)
            }
        }
    };
}

/// An MSQ-mmt variant.
#[derive(Debug)]
struct MsqMmt(MsqKind);
subject!(MsqMmt, QueueMmt, Msq, stack: false,
create: |s, h| Msq::create(s.0, h),
attach: |s, pool, off| {
    let q = Msq::at(s.0, off);
    q.recover(pool).map(|()| q)
});

/// CombQ-mmt.
#[derive(Debug)]
struct CombQ;
subject!(CombQ, CombQMmt, CombQueue, stack: false,
    create: |_s, h| CombQueue::create(h),
    attach: |_s, pool, off| CombQueue::at(pool, off));

/// The Treiber stack.
#[derive(Debug)]
struct Treiber;
subject!(Treiber, StackMmt, TreiberStack, stack: true,
    create: |_s, h| TreiberStack::create(h),
    attach: |_s, _pool, off| Ok(TreiberStack::at(off)));

/// The elimination-backoff stack.
#[derive(Debug)]
struct Elim;
subject!(Elim, ElimStackMmt, ElimStack, stack: true,
    create: |_s, h| ElimStack::create(h),
    attach: |_s, pool, off| ElimStack::at(pool, off));

/// The sequential model: values in push order.
#[derive(Debug, Default)]
struct Model {
    values: VecDeque<u64>,
    /// Root operations completed (the next one's index).
    ops: u64,
}

impl Model {
    /// Applies `op` once: its result word.
    fn apply(&mut self, stack: bool, op: Option<u64>) -> u64 {
        self.ops += 1;
        match op {
            Some(v) => {
                self.values.push_back(v);
                0
            }
            None if stack => encode_opt(self.values.pop_back()),
            None => encode_opt(self.values.pop_front()),
        }
    }

    /// The contents as the structure lists them.
    fn contents(&self, stack: bool) -> Vec<u64> {
        if stack {
            self.values.iter().rev().copied().collect()
        } else {
            self.values.iter().copied().collect()
        }
    }
}

fn fail(e: impl ToString) -> TestCaseError {
    TestCaseError::fail(e.to_string())
}

/// Runs `history` on `s`, one incarnation of the pool after another.
fn run<S: Subject>(s: &S, history: &[Step]) -> Result<(), TestCaseError> {
    perdure_memento::quiet_thread_crashes();
    let mut model = Model::default();
    // The crash image to recover, and the operation it cut off (if any).
    let mut image: Option<(Vec<u64>, Option<Option<u64>>)> = None;
    let mut next = 0;
    // A value of its own for each push.
    let value = |i: usize| 1000 + i as u64;
    loop {
        let pool = match &image {
            None => {
                let size = BASE + Runtime::<Sim, S::M>::required_bytes(&config());
                Pool::volatile("memento-proptest", size, Sim::default()).map_err(fail)?
            }
            Some((words, _)) => {
                let pool = Pool::volatile_from_words(words, Sim::default()).map_err(fail)?;
                pool.reincarnate();
                pool
            }
        };
        let (rt, obj) = match &image {
            None => {
                let rt = Runtime::<Sim, S::M>::create(&pool, BASE, &config()).map_err(fail)?;
                let obj = s.create(&mut rt.handle(1).map_err(fail)?).map_err(fail)?;
                rt.set_object_root(S::offset(&obj)).map_err(fail)?;
                pool.psync();
                (rt, obj)
            }
            Some(_) => {
                let rt = Runtime::<Sim, S::M>::open_with(&pool, BASE, ClockKind::Counter)
                    .map_err(|e| fail(format!("open: {e}")))?;
                let obj = s
                    .attach(&pool, rt.object_root())
                    .map_err(|e| fail(format!("attach: {e}")))?;
                (rt, obj)
            }
        };
        let mut h = rt.handle(1).map_err(fail)?;
        if let Some((_, cut_off)) = image.take() {
            let done = rt.next_op(1);
            match cut_off {
                None => prop_assert_eq!(done, model.ops, "operations committed"),
                Some(op) => {
                    prop_assert!(
                        done == model.ops || done == model.ops + 1,
                        "{} committed, {} before the cut-off one",
                        done,
                        model.ops
                    );
                    let result = if done == model.ops {
                        h.run_root(|h, m, _| S::run(&obj, h, m, op).expect("resumed"))
                            .result
                    } else {
                        rt.last_result(1)
                    };
                    let want = model.apply(S::STACK, op);
                    prop_assert_eq!(
                        decode_opt(result),
                        decode_opt(want),
                        "result of the cut-off {:?}",
                        op
                    );
                }
            }
            let got = S::contents(&obj, &pool).map_err(fail)?;
            prop_assert_eq!(got, model.contents(S::STACK), "recovered contents");
        }
        while image.is_none() {
            let Some(step) = history.get(next) else {
                let got = S::contents(&obj, &pool).map_err(fail)?;
                prop_assert_eq!(got, model.contents(S::STACK), "final contents");
                return Ok(());
            };
            next += 1;
            let op = |push: bool| push.then(|| value(next));
            match *step {
                Step::Op(push) | Step::ThreadCrash { push, .. } => {
                    if let Step::ThreadCrash { event, .. } = *step {
                        h.crash_after(Some(u64::from(event)));
                    }
                    let done = h.run_root(|h, m, _| S::run(&obj, h, m, op(push)).expect("op"));
                    h.crash_after(None);
                    prop_assert_eq!(done.index, model.ops, "index");
                    let want = model.apply(S::STACK, op(push));
                    prop_assert_eq!(
                        decode_opt(done.result),
                        decode_opt(want),
                        "{:?} after {} thread crashes",
                        step,
                        done.thread_crashes
                    );
                }
                Step::Reopen => break,
                Step::Crash { image: i } => {
                    image = Some((image_words(&pool.backend().capture(), i), None));
                }
                Step::CrashIn {
                    push,
                    event,
                    image: i,
                } => {
                    let at = pool.backend().counts().events + 1 + u64::from(event);
                    let point: Arc<Mutex<Option<CrashPoint>>> = Arc::default();
                    let sink = point.clone();
                    pool.backend().set_crash_hook(move |e, view| {
                        if e == at {
                            *sink.lock().unwrap() = Some(view.capture());
                        }
                    });
                    h.run_root(|h, m, _| S::run(&obj, h, m, op(push)).expect("op"));
                    pool.backend().clear_crash_hook();
                    let cp = point.lock().unwrap().take();
                    let cp = cp.unwrap_or_else(|| pool.backend().capture());
                    image = Some((image_words(&cp, i), Some(op(push))));
                }
            }
        }
        if image.is_none() {
            // Reopen: a clean close, the handle dropped first.
            drop(h);
            image = Some((pool.snapshot_words(), None));
        }
    }
}

/// Runs the property for `s`, panicking with the shrunk history on a
/// failure.
fn check<S: Subject>(s: S) {
    let mut runner = TestRunner::new(runner_config(64));
    match runner.run(&steps(), |h| run(&s, &h)) {
        Ok(()) => {}
        Err(TestError::Fail(why, history)) => {
            panic!("{s:?}: {why}\nminimal history: {history:#?}")
        }
        Err(e) => panic!("{s:?}: {e}"),
    }
}

#[test]
fn msq_mmt_cas_is_a_detectable_fifo_across_crashes() {
    check(MsqMmt(MsqKind::Cas));
}

#[test]
fn msq_mmt_indel_is_a_detectable_fifo_across_crashes() {
    check(MsqMmt(MsqKind::Indel));
}

#[test]
fn msq_mmt_vol_is_a_detectable_fifo_across_crashes() {
    check(MsqMmt(MsqKind::Vol));
}

#[test]
fn combq_mmt_is_a_detectable_fifo_across_crashes() {
    check(CombQ);
}

#[test]
fn treiber_stack_is_a_detectable_lifo_across_crashes() {
    check(Treiber);
}

#[test]
fn elimination_stack_is_a_detectable_lifo_across_crashes() {
    check(Elim);
}

/// Histories the property found on MSQ-mmt-cas (it failed from 48 cases
/// on), shrunk; regressions now. 0: after a full crash that leaves the third
/// enqueue's unflushed lines in some states (images 2, 4, 6 of the point;
/// reopening cleanly or images 0, 1, 3, 5, 7 passed), an enqueue that
/// thread-crashes after 22 or more persistence events returned but its
/// value was not in the queue. 1: a dequeue cut off at its second
/// persistence event was recovered as having returned 1002, but 1002 was
/// still in the queue. MSQ-mmt-indel and MSQ-mmt-vol passed both.
///
/// The cause, in both: the links' second plain CASes (Algorithm 1 L38)
/// were never written back, so the crash image kept annotated `next` words
/// of committed enqueues (finding 0: 1001's and 1002's, parities odd and
/// even; finding 1: 1002's, even). After the crash the thread's own LOAD
/// of such a word helped it (Algorithm 2) and raised HELP\[even\]\[1\] to a
/// post-crash timestamp. The recovering CAS of even parity — the link on
/// the checkpointed φ-node in 0, the CAS on head in 1 — found its memento
/// stale and its annotation absent, read that HELP entry as a help of
/// itself (L23–L24, case ⑧) and returned OK without taking effect. Fixed
/// in `DetectableCasAtomic::second_cas` (the word is written back).
fn msq_mmt_cas_findings() -> Vec<Vec<Step>> {
    use Step::*;
    vec![
        vec![
            Op(true),
            Op(true),
            Op(true),
            Crash { image: 6 },
            ThreadCrash {
                push: true,
                event: 22,
            },
        ],
        vec![
            CrashIn {
                push: true,
                event: 0,
                image: 0,
            },
            Op(true),
            Op(false),
            CrashIn {
                push: false,
                event: 1,
                image: 7,
            },
        ],
    ]
}

#[test]
fn msq_mmt_cas_findings_hold() {
    let failed: Vec<String> = msq_mmt_cas_findings()
        .iter()
        .enumerate()
        .filter_map(|(i, history)| {
            run(&MsqMmt(MsqKind::Cas), history)
                .err()
                .map(|e| format!("finding {i}: {e}"))
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn msq_mmt_indel_and_vol_pass_the_msq_mmt_cas_findings() {
    for kind in [MsqKind::Indel, MsqKind::Vol] {
        for (i, history) in msq_mmt_cas_findings().iter().enumerate() {
            if let Err(e) = run(&MsqMmt(kind), history) {
                panic!("{kind:?} finding {i}: {e}");
            }
        }
    }
}
