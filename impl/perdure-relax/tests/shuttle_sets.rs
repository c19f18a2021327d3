//! shuttle: random and PCT schedules (seeded, reproducible) of the skip
//! list and the Natarajan–Mittal BST under every tracking variant each
//! admits (the skip list all but `MarkableAtomicPointer`, the BST all six),
//! with every atomic of the crate a scheduling point.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-relax --test shuttle_sets` (the `shuttle:relax` check of
//! `tools/verify.py` does); without the cfg this file is empty.
//!
//! ## One schedule
//!
//! A fresh space and structure; a preload of a random subset of the keys
//! 1..=3 (each with probability 3/4: the more nodes, the more recovery to
//! race); then one of four starts:
//!
//! * `none`: no crash, the threads start on the live structure;
//! * `crash-zero` / `crash-garbage`: the space is dropped, the pool
//!   reincarnated (a crash after a quiescent point) and reopened with a new
//!   volatile region, zeroed or seeded garbage (garbage only for the
//!   variants that allow it); the threads then race the lazy recovery, all
//!   of them on the same few nodes, so several recover the same node (and
//!   the same pointer fields) at once;
//! * `crash-cut-remove`: as `crash-…`, but the crash cuts off a remove of
//!   key 2 after its linearisation point and before any unlinking: the
//!   NVMM replica is edited as that remove's durable CASes would have left
//!   it (the BST: leaf 2's edge flagged; the skip list: every level of node
//!   2 marked), so the recovering threads must finish (help) a delete whose
//!   thread is gone. The cut-off remove must have taken effect before the
//!   crash or never: the history may start from either set (`CutOff`; the
//!   weaker notion, where it may also take effect after the crash, is used
//!   only for the equivalent mutant below).
//!
//! 2 or 3 threads (chosen by the schedule) then run 3 or 2 random
//! operations each (insert/remove/contains on keys 1..=3). Checked, every
//! schedule:
//!
//! * **linearizability** of the history (invocation and response order as
//!   the schedule ran them) against a sequential set, by brute force over
//!   every linearisation (Wing–Gong search with memoisation), ending in the
//!   set a final traversal reads;
//! * **the reclamation audit** (`perdure_harness::relax::audit`, on the log of `perdure_relax::audit`):
//!   the handles advance the epoch after every critical section, so nodes
//!   are freed during the run; afterwards one more handle drains the limbo
//!   lists; then no node was retired or freed twice, no block was handed
//!   out while live, every node reachable in NVMM is live, and — except in
//!   `crash-cut-remove`, where the documented crash leak applies — every
//!   node allocated and no longer reachable was retired;
//! * the replicas of every field of every reachable node agree once the
//!   field has been loaded (Mirror's Claim 2 at quiescence).
//!
//! Any error value, panic or shuttle step-bound overrun also fails.
//!
//! ## What these schedules found (all fixed)
//!
//! * **Finding M2** (`src/patomic.rs`): a late redundant recovery re-marks a
//!   pointer while a Mirror CAS is between its NVMM and DRAM halves; the
//!   CAS's success is lost in DRAM. Kept as the `Line44Once` rows below.
//! * **Reclamation epoch** (`src/space.rs`, `Handle::retire`): a retired
//!   node was tagged with the retiring thread's pinned epoch, which can be
//!   one behind the global epoch, so the end of the retirer's own critical
//!   section could free it while a thread pinned one epoch later still
//!   read it. Seen as a BST insert that returned true and was lost (its
//!   new internal node was the freed block; `bst/Hybrid/crash-garbage`);
//!   forced deterministically by `tests/suite/reclaim_epoch.rs`.
//! * **Skip-list retire while still linked** (`src/ds/skiplist.rs`,
//!   `find_chasing`): an insert of key k, racing the remove of the old k
//!   node, took the old node as its successor at upper levels and linked
//!   in front of it there; the remover's `find` stopped at the new node and
//!   left the old one linked behind it, then retired it: the audit saw a
//!   freed node reachable (`skiplist/Bitset/crash-zero`; the crash is
//!   incidental, the race is not).
//!
//! ## Budget
//!
//! `PERDURE_SHUTTLE_ITERS` sets the schedules per configuration and
//! scheduler (default 60 for `crash-*`, 30 for `none`; ×10 with
//! `PERDURE_DEPTH=deep`). The default run of this file takes about 45–50 s
//! in release on the 2-core machine (44 s inside the `shuttle:relax`
//! check, 47 s alone; the tests hold one mutant lock, so they run one after
//! the other; each row's `seconds` excludes the time a test waited for it).
//!
//! **Reproducing a failure.** Every run is seeded (the schedulers, and
//! the workload drawn from shuttle's random source; the skip list's height
//! generator, a `std` thread-local that all shuttle tasks of the test
//! thread share, is reseeded from that source at the start of each
//! schedule), so rerunning the test reproduces it, and `replay_a_schedule`
//! (ignored; `PERDURE_REPLAY_CASE`, `PERDURE_REPLAY_SCHEDULE`, and
//! `PERDURE_DEBUG` for a dump of the reachable nodes' replicas) replays the
//! one printed schedule.
//!
//! ## Mutants (feature `mutants`; `mutant::SETS` of `src/mutant.rs`)
//!
//! Each must be caught: the test switches it on and expects a violation
//! within its schedule budget.
//!
//! | mutant | what it breaks | what the seeded run reports first |
//! | --- | --- | --- |
//! | `SkipLinkUpperFirst` | skip-list insert links the upper levels before level 0 | the audit, `skiplist/Hybrid/none`: an insert whose level-0 CAS failed finds the key present on retry and frees its node, which its upper-level links had already published (reachable, freed) |
//! | `SkipRemoveNoMark` | skip-list remove unlinks without marking | linearizability, `skiplist/Bitset/none` (a remove whose unlink raced another update: its key is still there, or a concurrent insert is lost); earlier seeds showed the audit's reachable-but-freed node (an upper-level unlink failed and the node stayed linked there) |
//! | `BstCleanupNoTag` | BST cleanup swings the ancestor without tagging the sibling edge | a typed `Corrupt` error, `bst/Markable/none`: an insert under the unlinked parent broke the removed segment that the cleanup then retires; earlier seeds showed linearizability (a remove that returned true, its key still present) |
//! | `BstInsertNoHelp` | BST insert does not help a pending delete | the step bound: after `crash-cut-remove` nobody else finishes the delete and insert(2) spins (lock-freedom) |
//! | `Line44Once` (of `mutant::MIRROR`: Finding M2 put back) | a Mirror CAS's DRAM half lost to a late redundant recovery mark | linearizability after the crash (a thread's own successful remove or insert not seen by its next operation): `skiplist/Hybrid/crash-zero` (budget 3,000 schedules) and `bst/Markable/crash-zero`, then `crash-garbage` (budget 2,000) |
//!
//! Which check fires first depends on the seeded schedules (any change to
//! the code's scheduling points shifts them); each test asserts only that
//! some failure is found within its budget.
//!
//! `BstFlaggedLeafPresent` (Natarajan and Mittal's search, which ignores
//! the flag; `mutant::EQUIVALENT`) shows no violation without a crash, nor
//! after `crash-cut-remove` when the cut-off remove may take effect after
//! the crash (Izraelevitz et al.'s durable linearizability); it is caught
//! when the cut-off remove must take effect before the crash or never.
//! `flagged_leaf_present_is_equivalent_except_for_cut_off_removes` asserts
//! both (the module docs of `src/ds/bst.rs` say what this does and does not
//! show about the paper).
//!
//! `bitset_race_loses_bits_but_never_invents_one` runs the recovery
//! bitset's known race on its own and reports how often a set bit is lost.
//!
//! Not covered: crashes *during* the racing operations (the explorer of
//! `shuttle_explore_relax.rs` and `sets_crash_sim.rs` crash inside
//! operations), weak memory (shuttle runs sequentially consistent
//! interleavings), more than 3 keys or 6 operations per history.

#![cfg(perdure_shuttle)]

mod common;
mod sets;

use common::{leaked_pool, shuttle_iterations, tests_calling};
use perdure_harness::relax::audit;
use perdure_pm::sync::{thread, Arc};
use perdure_pm::{NoFlush, Pool};
use perdure_relax::ds::{BstNode, SkipNode};
use perdure_relax::mutant::{self, Mutant};
use perdure_relax::{Config, DramInit, OpenOptions, Space, Tracking};
use perdure_relax::{PAtomic, PAtomicPtr};
use sets::{Set, Shape};
use shuttle::rand::{thread_rng, Rng};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Pool bytes: the space's header and roots, and 48 heap chunks (4 KiB
/// each under shuttle): up to 4 thread slots × 4 size classes per
/// incarnation, twice.
const POOL: u64 = 256 << 10;
const HEAP: u64 = 48 * perdure_pm::heap::CHUNK_SIZE;
/// Keys 1..=KEYS.
const KEYS: u64 = 3;
/// The shuttle step bound of a schedule (a correct schedule takes a few
/// thousand steps; an operation spinning forever overruns it).
const MAX_STEPS: usize = 200_000;

/// Schedules per configuration and scheduler.
fn iterations(default: usize) -> usize {
    shuttle_iterations(default, 10 * default)
}

/// Schedules of a test that must *find* a violation (a mutant switched on,
/// a weaker variant): the full count in the mutation tier too, where
/// [`iterations`] takes a tenth (a search for a failure needs its budget).
fn search_iterations(default: usize) -> usize {
    if common::mutants() {
        default
    } else {
        iterations(default)
    }
}

/// How a schedule starts (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    None,
    Crash(DramInit),
    CrashCutRemove(DramInit),
}

impl Start {
    fn name(self) -> String {
        let fill = |d: DramInit| match d {
            DramInit::Zeroed => "zero",
            DramInit::Garbage { .. } => "garbage",
        };
        match self {
            Start::None => "none".into(),
            Start::Crash(d) => format!("crash-{}", fill(d)),
            Start::CrashCutRemove(d) => format!("crash-cut-remove-{}", fill(d)),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Case {
    shape: Shape,
    tracking: Tracking,
    start: Start,
    /// Which durable linearizability a cut-off remove is checked against.
    cut_off: CutOff,
}

/// When the remove that `crash-cut-remove` cut off may take effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CutOff {
    /// Before the crash or never: the run starts from the set with or
    /// without key 2. What this crate's BST and skip list promise (their
    /// removes linearise at a CAS that is durable before it returns).
    BeforeCrash,
    /// At any moment after its invocation, after the crash included, or
    /// never — Izraelevitz, Mendes and Scott's definition, which
    /// `perdure-check`'s history checker uses: the remove is an optional
    /// operation of the history, with any result.
    Anytime,
}

impl Case {
    fn name(&self) -> String {
        format!(
            "{}/{:?}/{}",
            self.shape.name(),
            self.tracking,
            self.start.name()
        )
    }
}

/// Every configuration of `shape`: each variant × {none, crash-zero,
/// crash-garbage where allowed, crash-cut-remove (garbage where allowed)}.
fn cases(shape: Shape) -> Vec<Case> {
    let g = DramInit::Garbage { seed: 0 };
    let mut v = vec![];
    for tracking in shape.variants() {
        let fill = if tracking.needs_zeroed_dram() {
            DramInit::Zeroed
        } else {
            g
        };
        let mut starts = vec![Start::None, Start::Crash(DramInit::Zeroed)];
        if !tracking.needs_zeroed_dram() {
            starts.push(Start::Crash(g));
        }
        starts.push(Start::CrashCutRemove(fill));
        for start in starts {
            v.push(Case {
                shape,
                tracking,
                start,
                cut_off: CutOff::BeforeCrash,
            });
        }
    }
    v
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Insert,
    Remove,
    Contains,
}

/// One completed operation: thread, op, key, result, and the schedule
/// clock at invocation and response.
#[derive(Clone, Copy, Debug)]
struct Event {
    thread: usize,
    op: Op,
    key: u64,
    result: bool,
    inv: u64,
    resp: u64,
}

fn bit(k: u64) -> u64 {
    1 << k
}

fn show(s: u64) -> BTreeSet<u64> {
    (0..64).filter(|k| s & bit(*k) != 0).collect()
}

/// Whether some sequential run of the set from one of `initial`, in an
/// order consistent with real time, gives every result of `h` and ends in
/// `fin` (Wing–Gong search, memoised on (operations done, set)). An event
/// with `optional` set (the last, if any) may be left out, and its result
/// is not checked.
fn linearizable(h: &[Event], optional: bool, initial: &[u64], fin: u64) -> bool {
    fn go(
        h: &[Event],
        optional: bool,
        done: u32,
        s: u64,
        fin: u64,
        seen: &mut HashSet<(u32, u64)>,
    ) -> bool {
        let required = if optional { h.len() - 1 } else { h.len() };
        let all_required = (0..required).all(|i| done & (1 << i) != 0);
        if all_required && s == fin {
            return true;
        }
        if done.count_ones() as usize == h.len() {
            return false;
        }
        if !seen.insert((done, s)) {
            return false;
        }
        for (i, e) in h.iter().enumerate() {
            if done & (1 << i) != 0 {
                continue;
            }
            // e may go next only if no pending operation returned before e
            // was invoked.
            let blocked = h
                .iter()
                .enumerate()
                .any(|(j, o)| done & (1 << j) == 0 && j != i && o.resp < e.inv);
            if blocked {
                continue;
            }
            let present = s & bit(e.key) != 0;
            let (res, next) = match e.op {
                Op::Insert => (!present, s | bit(e.key)),
                Op::Remove => (present, s & !bit(e.key)),
                Op::Contains => (present, s),
            };
            let free = optional && i == h.len() - 1;
            if (free || res == e.result) && go(h, optional, done | (1 << i), next, fin, seen) {
                return true;
            }
        }
        false
    }
    initial
        .iter()
        .any(|&s| go(h, optional, 0, s, fin, &mut HashSet::new()))
}

/// The first failure of the current schedule, recorded before panicking
/// (so an expected-violation test can tell a check's failure from any
/// other panic).
static FAILURE: Mutex<Option<String>> = Mutex::new(None);

fn fail(msg: String) -> ! {
    {
        let mut f = FAILURE.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none() {
            *f = Some(msg.clone());
        }
    }
    panic!("{msg}");
}

/// Every node reachable in NVMM from the root object `root`.
fn reachable(pool: &Pool<NoFlush>, shape: Shape, root: u64) -> BTreeSet<u64> {
    let w = |off: u64| pool.word(off).unwrap().load(Ordering::Acquire);
    let mut seen = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n == 0 || !seen.insert(n) {
            continue;
        }
        match shape {
            Shape::Skip => {
                let h = w(n + 16);
                stack.extend((0..h).map(|i| w(n + 32 + 16 * i) & !0xf));
            }
            Shape::Bst => stack.extend([w(n + 16) & !0xf, w(n + 32) & !0xf]),
        }
    }
    seen
}

/// The crash cut off a remove of `key` after its linearising CAS: edits
/// the NVMM replica as that CAS (and, for the skip list, the marking of the
/// upper levels before it) left it: value bit 0 set, sequence + 1.
fn cut_off_remove(pool: &Pool<NoFlush>, shape: Shape, root: u64, key: u64) {
    let w = |off: u64| pool.word(off).unwrap();
    let mark = |field: u64| {
        let v = w(field).load(Ordering::Acquire);
        w(field).store(v | 1, Ordering::Release);
        let s = w(field + 8).load(Ordering::Acquire);
        w(field + 8).store(s + 1, Ordering::Release);
    };
    match shape {
        Shape::Skip => {
            let mut n = w(root + 32).load(Ordering::Acquire) & !0xf;
            while n != 0 && w(n).load(Ordering::Acquire) != key {
                n = w(n + 32).load(Ordering::Acquire) & !0xf;
            }
            assert_ne!(n, 0, "key {key} is not in the skip list");
            let h = w(n + 16).load(Ordering::Acquire);
            for lvl in (0..h).rev() {
                mark(n + 32 + 16 * lvl);
            }
        }
        Shape::Bst => {
            let mut edge = root + 16;
            loop {
                let n = w(edge).load(Ordering::Acquire) & !0xf;
                if w(n + 16).load(Ordering::Acquire) == 0 {
                    assert_eq!(w(n).load(Ordering::Acquire), key);
                    break;
                }
                edge = if key < w(n).load(Ordering::Acquire) {
                    n + 16
                } else {
                    n + 32
                };
            }
            mark(edge);
        }
    }
}

/// One schedule of `case` (module docs).
fn schedule(case: Case) {
    let Case {
        shape,
        tracking,
        start,
        ..
    } = case;
    let mut rng = thread_rng();
    perdure_relax::ds::skiplist::seed_heights(rng.gen());
    let (pool, base) = leaked_pool("shuttle-sets", POOL);
    let cfg = Config {
        threads: 4,
        roots: 1,
        heap_bytes: HEAP,
        msb_sequences: tracking == Tracking::PseudoBitset,
    };
    // The preload.
    let mut initial = 0u64;
    for k in 1..=KEYS {
        if rng.gen_bool(0.75) || (k == 2 && matches!(start, Start::CrashCutRemove(_))) {
            initial |= bit(k);
        }
    }
    let sp = Space::create(pool, base, &cfg, OpenOptions::new(tracking))
        .unwrap_or_else(|e| fail(format!("create: {e}")));
    sp.audit_start(true);
    let set = {
        let mut h = sp.handle().unwrap();
        let set = Set::create(shape, &mut h, 0).unwrap();
        for k in show(initial) {
            assert!(set.insert(&mut h, k).unwrap());
        }
        set
    };
    let root = sp.root(0).unwrap().unwrap();
    let mut events = vec![];
    let mut initials = vec![initial];
    let (sp, set) = match start {
        Start::None => (sp, set),
        Start::Crash(fill) | Start::CrashCutRemove(fill) => {
            events = sp.audit_events();
            drop(sp);
            if matches!(start, Start::CrashCutRemove(_)) {
                cut_off_remove(pool, shape, root, 2);
                if case.cut_off == CutOff::BeforeCrash {
                    initials.push(initial & !bit(2));
                }
            }
            pool.reincarnate();
            let dram = match fill {
                DramInit::Zeroed => DramInit::Zeroed,
                DramInit::Garbage { .. } => DramInit::Garbage { seed: rng.gen() },
            };
            let sp = Space::open(pool, base, OpenOptions { tracking, dram })
                .unwrap_or_else(|e| fail(format!("reopen: {e}")));
            sp.audit_start(true);
            let set = Set::open(shape, &sp, 0).unwrap_or_else(|e| fail(format!("open: {e}")));
            (sp, set)
        }
    };
    let sp = Arc::new(sp);
    // The workload: 2 threads × 3 operations or 3 × 2.
    let threads = if rng.gen_bool(0.5) { 2 } else { 3 };
    let plans: Vec<Vec<(Op, u64)>> = (0..threads)
        .map(|_| {
            (0..6 / threads)
                .map(|_| {
                    let op = match rng.gen_range(0..3) {
                        0 => Op::Insert,
                        1 => Op::Remove,
                        _ => Op::Contains,
                    };
                    (op, rng.gen_range(1..=KEYS))
                })
                .collect()
        })
        .collect();
    let clock = Arc::new(AtomicU64::new(0));
    let history = Arc::new(Mutex::new(Vec::new()));
    let ts: Vec<_> = plans
        .into_iter()
        .enumerate()
        .map(|(t, plan)| {
            let (sp, clock, history) = (sp.clone(), clock.clone(), history.clone());
            thread::spawn(move || {
                let mut h = sp.handle().unwrap_or_else(|e| fail(format!("handle: {e}")));
                for (op, key) in plan {
                    // std atomics: the clock adds no scheduling point, so
                    // it orders invocations and responses as they ran.
                    let inv = clock.fetch_add(1, Ordering::SeqCst);
                    let r = match op {
                        Op::Insert => set.insert(&mut h, key),
                        Op::Remove => set.remove(&mut h, key),
                        Op::Contains => set.contains(&mut h, key),
                    };
                    let resp = clock.fetch_add(1, Ordering::SeqCst);
                    let result =
                        r.unwrap_or_else(|e| fail(format!("thread {t} {op:?}({key}): {e}")));
                    history.lock().unwrap().push(Event {
                        thread: t,
                        op,
                        key,
                        result,
                        inv,
                        resp,
                    });
                }
            })
        })
        .collect();
    for t in ts {
        t.join()
            .unwrap_or_else(|_| fail("a thread panicked".into()));
    }
    let sp = Arc::try_unwrap(sp).unwrap_or_else(|_| fail("the space is still shared".into()));
    let mut history = history.lock().unwrap().clone();
    let optional = matches!(start, Start::CrashCutRemove(_)) && case.cut_off == CutOff::Anytime;
    if optional {
        history.push(Event {
            thread: usize::MAX,
            op: Op::Remove,
            key: 2,
            result: true,
            inv: 0,
            resp: u64::MAX,
        });
    }
    // The final state, then reclamation drained: the handle takes the
    // orphaned limbo lists, and each critical section advances the epoch.
    let fin = {
        let mut h = sp.handle().unwrap();
        let keys = set
            .key_set(&mut h)
            .unwrap_or_else(|e| fail(format!("final traversal: {e}")));
        for _ in 0..4 {
            h.critical(|_| ());
        }
        keys
    };
    let fin_bits = fin.iter().fold(0, |s, k| s | bit(*k));
    if !linearizable(&history, optional, &initials, fin_bits) {
        if std::env::var("PERDURE_DEBUG").is_ok() {
            for n in reachable(pool, shape, root) {
                let nf = match shape {
                    Shape::Skip => 2 + pool.word(n + 16).unwrap().load(Ordering::Acquire),
                    Shape::Bst => 3,
                };
                let fields: Vec<_> = (0..nf).map(|i| sp.replicas(n + 16 * i).unwrap()).collect();
                eprintln!("node {n:#x}: (nvmm, dram) {fields:x?}");
            }
        }
        let mut h = history.clone();
        h.sort_by_key(|e| e.inv);
        fail(format!(
            "{}: not linearizable: initial {:?}, final {fin:?}, history (thread, op, key, result, inv, resp): {:?}",
            case.name(),
            initials.iter().map(|s| show(*s)).collect::<Vec<_>>(),
            h.iter()
                .map(|e| (e.thread, e.op, e.key, e.result, e.inv, e.resp))
                .collect::<Vec<_>>()
        ));
    }
    events.extend(sp.audit_events());
    let reach = reachable(pool, shape, root);
    match audit::check(&events, &reach) {
        Err(e) => fail(format!("{}: reclamation audit: {e}", case.name())),
        Ok(sum) if sum.leaked > 0 && !matches!(start, Start::CrashCutRemove(_)) => fail(format!(
            "{}: reclamation audit: {} unreachable node(s) never retired ({sum:?})",
            case.name(),
            sum.leaked
        )),
        Ok(sum) => {
            AUDITED.fetch_add(1, Ordering::Relaxed);
            FREED.fetch_add(sum.freed as u64, Ordering::Relaxed);
        }
    }
    // Every field of every reachable node, read through the crate (which
    // recovers it if it is not yet), then its replicas compared.
    for &n in &reach {
        let fields = match shape {
            Shape::Skip => 2 + pool.word(n + 16).unwrap().load(Ordering::Acquire),
            Shape::Bst => 3,
        };
        for i in 0..fields {
            let f = n + 16 * i;
            let r = match (shape, i) {
                (_, 0) | (Shape::Skip, 1) => PAtomic::at(f).load(&sp),
                (Shape::Skip, _) => PAtomicPtr::<SkipNode>::at(f).load(&sp),
                (Shape::Bst, _) => PAtomicPtr::<BstNode>::at(f).load(&sp),
            };
            r.unwrap_or_else(|e| fail(format!("{}: load of {f:#x}: {e}", case.name())));
            let (nv, d) = sp.replicas(f).unwrap();
            if nv != d {
                fail(format!(
                    "{}: field {f:#x}: NVMM {nv:?} != DRAM {d:?} after a load",
                    case.name()
                ));
            }
        }
    }
    drop(sp);
    // SAFETY: `pool` came from `Box::leak` above; every `Space` borrowing it
    // (the pre-crash one, the shared one unwrapped above, all thread clones
    // joined) is dropped, and nothing else holds the reference.
    unsafe {
        drop(Box::from_raw(
            pool as *const Pool<NoFlush> as *mut Pool<NoFlush>,
        ))
    };
}

/// Schedules whose audit passed, and the nodes they freed (for the rows).
static AUDITED: AtomicU64 = AtomicU64::new(0);
static FREED: AtomicU64 = AtomicU64::new(0);

fn config() -> shuttle::Config {
    let mut c = shuttle::Config::new();
    c.max_steps = shuttle::MaxSteps::FailAfter(MAX_STEPS);
    c
}

/// Runs `n` random and `n` PCT (depth 3) schedules of `case`, seeded.
fn run_case(case: Case, n: usize, seed: u64) {
    let f = move || schedule(case);
    shuttle::Runner::new(RandomScheduler::new_from_seed(seed, n), config()).run(f);
    shuttle::Runner::new(PctScheduler::new_from_seed(seed, 3, n), config()).run(f);
}

fn run_shape(shape: Shape) {
    let _g = mutant::lock();
    mutant::set(None);
    let t = Instant::now();
    let (mut schedules, mut configs) = (0, 0);
    AUDITED.store(0, Ordering::Relaxed);
    FREED.store(0, Ordering::Relaxed);
    for (i, case) in cases(shape).into_iter().enumerate() {
        let n = iterations(if case.start == Start::None { 30 } else { 60 });
        run_case(case, n, 0x5e75 + i as u64);
        schedules += 2 * n;
        configs += 1;
    }
    println!(
        "PERDURE-CHECK {}",
        serde_json::json!({
            "name": format!("shuttle:relax/sets-{}", shape.name()),
            "kind": "explore",
            "status": "pass",
            "explored": format!("{schedules} schedules (random and PCT depth 3) over {configs} configurations (variant × none / crash zeroed / crash garbage / crash cutting off a remove), 2–3 threads × 3–2 operations on keys 1..=3; {} audited, {} nodes freed during the runs", AUDITED.load(Ordering::Relaxed), FREED.load(Ordering::Relaxed)),
            "detail": "linearizability (brute force) of every history, reclamation audit (no double retire/free, reachable nodes live, no leak without a cut-off operation), replicas agree after a traversal; not covered: crashes during the racing operations, weak memory",
            "seconds": t.elapsed().as_secs_f64(),
        })
    );
}

tests_calling!(run_shape => {
    skiplist_schedules_are_linearizable_and_reclaim_safely(Shape::Skip);
    bst_schedules_are_linearizable_and_reclaim_safely(Shape::Bst);
});

/// Runs `case` with mutant `m` on, up to `n` random schedules then `n` PCT
/// ones; returns the first failure, if any.
fn with_mutant(m: Mutant, case: Case, n: usize) -> (Option<String>, f64) {
    let _g = mutant::lock();
    let t = Instant::now();
    *FAILURE.lock().unwrap_or_else(|e| e.into_inner()) = None;
    mutant::set(Some(m));
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(|| run_case(case, n, 0xbad));
    std::panic::set_hook(hook);
    mutant::set(None);
    let recorded = FAILURE.lock().unwrap_or_else(|e| e.into_inner()).take();
    let found = match r {
        Ok(()) => None,
        Err(p) => Some(recorded.unwrap_or_else(|| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into())
        })),
    };
    (found, t.elapsed().as_secs_f64())
}

fn caught(m: Mutant, case: Case, n: usize) {
    let (found, secs) = with_mutant(m, case, n);
    println!(
        "PERDURE-CHECK {}",
        serde_json::json!({
            "name": format!("shuttle:relax/mutant-{}", m.name()),
            "kind": "explore",
            "status": if found.is_some() { "pass" } else { "fail" },
            "explored": format!("up to {n} random + {n} PCT schedules of {}", case.name()),
            "detail": format!("mutant switched on: a violation must be found; found: {}", found.as_deref().unwrap_or("nothing")),
            "seconds": secs,
        })
    );
    assert!(
        found.is_some(),
        "{}: not caught on {}",
        m.name(),
        case.name()
    );
}

fn case(shape: Shape, tracking: Tracking, start: Start) -> Case {
    Case {
        shape,
        tracking,
        start,
        cut_off: CutOff::BeforeCrash,
    }
}

#[test]
fn mutant_skiplist_links_upper_levels_first_is_caught() {
    caught(
        Mutant::SkipLinkUpperFirst,
        case(Shape::Skip, Tracking::Hybrid, Start::None),
        300,
    );
}

#[test]
fn mutant_skiplist_remove_without_marking_is_caught() {
    caught(
        Mutant::SkipRemoveNoMark,
        case(Shape::Skip, Tracking::Bitset, Start::None),
        300,
    );
}

#[test]
fn mutant_bst_cleanup_without_tag_is_caught() {
    caught(
        Mutant::BstCleanupNoTag,
        case(Shape::Bst, Tracking::Markable, Start::None),
        300,
    );
}

#[test]
fn mutant_bst_insert_without_helping_is_caught() {
    caught(
        Mutant::BstInsertNoHelp,
        case(
            Shape::Bst,
            Tracking::Markable,
            Start::CrashCutRemove(DramInit::Zeroed),
        ),
        300,
    );
}

/// Natarajan and Mittal's search (a flagged leaf with the key counts as
/// present) passes every check without a crash, and after a crash that
/// cut off a remove if that remove may take effect after the crash
/// (`CutOff::Anytime`, Izraelevitz et al.'s definition); it is caught when
/// the cut-off remove must take effect before the crash or never
/// (`CutOff::BeforeCrash`, what this crate's BST keeps by counting a
/// flagged leaf as absent). See `src/ds/bst.rs`.
#[test]
fn flagged_leaf_present_is_equivalent_except_for_cut_off_removes() {
    let mut secs = 0.0;
    let n = search_iterations(60);
    let mut found = vec![];
    let zero = Start::CrashCutRemove(DramInit::Zeroed);
    let garbage = Start::CrashCutRemove(DramInit::Garbage { seed: 0 });
    for (start, cut_off) in [
        (Start::None, CutOff::BeforeCrash),
        (zero, CutOff::Anytime),
        (garbage, CutOff::Anytime),
    ] {
        let c = Case {
            cut_off,
            ..case(Shape::Bst, Tracking::Markable, start)
        };
        let (f, t) = with_mutant(Mutant::BstFlaggedLeafPresent, c, n);
        secs += t;
        found.extend(f);
    }
    let (strict, t) = with_mutant(
        Mutant::BstFlaggedLeafPresent,
        case(Shape::Bst, Tracking::Markable, zero),
        n,
    );
    secs += t;
    let ok = found.is_empty() && strict.is_some();
    println!(
        "PERDURE-CHECK {}",
        serde_json::json!({
            "name": format!("shuttle:relax/equivalent-{}", Mutant::BstFlaggedLeafPresent.name()),
            "kind": "explore",
            "status": if ok { "pass" } else { "fail" },
            "explored": format!("{n} random + {n} PCT schedules of each of bst/Markable/{{none, crash-cut-remove-zero, crash-cut-remove-garbage}} with the cut-off remove allowed to take effect after the crash, then of crash-cut-remove-zero with it required before the crash"),
            "detail": format!("Natarajan–Mittal's search (flag ignored): no violation expected in the first three, one expected in the last (found: {})", strict.as_deref().unwrap_or("nothing")),
            "seconds": secs,
        })
    );
    assert!(found.is_empty(), "{found:?}");
    assert!(
        strict.is_some(),
        "a cut-off remove took effect after the crash in no schedule"
    );
}

/// Finding M2 put back (`Line44Once`, `src/patomic.rs`): a late redundant
/// recovery re-marks a pointer while a Mirror CAS is between its NVMM and
/// DRAM halves, and the CAS's success is lost in DRAM. These schedules
/// found it first (an insert that returned true, then the same thread's
/// remove returning false); this keeps them able to.
#[test]
fn mutant_line44_once_is_caught() {
    caught(
        Mutant::Line44Once,
        case(
            Shape::Skip,
            Tracking::Hybrid,
            Start::Crash(DramInit::Zeroed),
        ),
        search_iterations(1500),
    );
}

/// The configurations where Finding M2 showed (skip list under `Hybrid`,
/// BST under `Markable`, after a crash, zeroed and garbage DRAM), with many
/// more schedules: a one-off run (`cargo test … -- --ignored`;
/// `PERDURE_SHUTTLE_ITERS` schedules per configuration and scheduler,
/// default 1,000).
#[test]
#[ignore]
fn many_schedules_of_the_m2_configurations() {
    let _g = mutant::lock();
    mutant::set(None);
    let n = iterations(1000);
    let t = Instant::now();
    let mut total = 0;
    for (shape, tracking) in [
        (Shape::Skip, Tracking::Hybrid),
        (Shape::Bst, Tracking::Markable),
    ] {
        for (i, start) in [
            Start::Crash(DramInit::Zeroed),
            Start::Crash(DramInit::Garbage { seed: 0 }),
            Start::CrashCutRemove(DramInit::Garbage { seed: 0 }),
        ]
        .into_iter()
        .enumerate()
        {
            run_case(case(shape, tracking, start), n, 0x3232 + i as u64);
            total += 2 * n;
        }
    }
    println!(
        "{total} schedules of skiplist/Hybrid and bst/Markable after a crash passed in {:.1} s",
        t.elapsed().as_secs_f64()
    );
}

/// The recovery bitset's one race (`src/bitset.rs`: `ensure` zeroes a word
/// before it claims it, so a thread late to zero a word can wipe a bit
/// that another thread set after initialising it). Two threads set two
/// bits of one uninitialised word of a garbage bitset: a bit never set
/// must never read as set (Claim 1: no false positives); a set bit may be
/// lost, and how often is reported. The loss costs a redundant
/// `recover_field` / `recover_node` (the variants' schedules above run
/// into it and stay linearizable).
#[test]
fn bitset_race_loses_bits_but_never_invents_one() {
    use perdure_relax::internals::Bitset;
    let n = iterations(300);
    let t = Instant::now();
    let lost = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let l = lost.clone();
    let f = move || {
        let b = Arc::new(Bitset::new(4096, DramInit::Garbage { seed: 7 }));
        let ts: Vec<_> = [0x40u64, 0x80]
            .into_iter()
            .map(|off| {
                let b = b.clone();
                thread::spawn(move || b.set(off))
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        for off in (0..4096).step_by(16) {
            if off != 0x40 && off != 0x80 {
                assert!(!b.test(off), "slot {off:#x} reads as set, never set");
            }
        }
        if !b.test(0x40) || !b.test(0x80) {
            l.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    };
    shuttle::Runner::new(RandomScheduler::new_from_seed(1, n), config()).run(f.clone());
    shuttle::Runner::new(PctScheduler::new_from_seed(1, 3, n), config()).run(f);
    let lost = lost.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "PERDURE-CHECK {}",
        serde_json::json!({
            "name": "shuttle:relax/bitset-race",
            "kind": "explore",
            "status": "pass",
            "explored": format!("{n} random + {n} PCT schedules of 2 threads setting 2 bits of one uninitialised word (garbage arrays)"),
            "detail": format!("no bit ever read as set that was not set; a set bit was lost (a false negative, a redundant recovery) in {lost} of {} schedules", 2 * n),
            "seconds": t.elapsed().as_secs_f64(),
        })
    );
}

/// `Line44Once` on the BST under `MarkableAtomicPointer` after a crash
/// (up to 500 random + 500 PCT schedules per DRAM fill; the seeded run
/// finds it within the first few hundred).
#[test]
fn mutant_line44_once_is_caught_on_the_bst() {
    let n = search_iterations(500);
    let mut secs = 0.0;
    let found = [DramInit::Zeroed, DramInit::Garbage { seed: 0 }]
        .into_iter()
        .find_map(|d| {
            let (f, t) = with_mutant(
                Mutant::Line44Once,
                case(Shape::Bst, Tracking::Markable, Start::Crash(d)),
                n,
            );
            secs += t;
            f
        });
    println!(
        "PERDURE-CHECK {}",
        serde_json::json!({
            "name": "shuttle:relax/mutant-mirror-L44-once-M2-bst",
            "kind": "explore",
            "status": if found.is_some() { "pass" } else { "fail" },
            "explored": format!("up to {n} random + {n} PCT schedules of bst/Markable/crash-zero, then crash-garbage"),
            "detail": format!("mutant switched on: a violation must be found; found: {}", found.as_deref().unwrap_or("nothing")),
            "seconds": secs,
        })
    );
    assert!(found.is_some(), "Line44Once not caught on bst/Markable");
}

/// Replays one printed schedule: `PERDURE_REPLAY_CASE` names the
/// configuration as the failure message does (`bst/Hybrid/crash-garbage`),
/// `PERDURE_REPLAY_SCHEDULE` is a file holding the schedule string.
#[test]
#[ignore]
fn replay_a_schedule() {
    let name = std::env::var("PERDURE_REPLAY_CASE").expect("PERDURE_REPLAY_CASE");
    let file = std::env::var("PERDURE_REPLAY_SCHEDULE").expect("PERDURE_REPLAY_SCHEDULE");
    let sched: String = std::fs::read_to_string(file)
        .expect("schedule file")
        .split_whitespace()
        .collect();
    let case = Shape::ALL
        .into_iter()
        .flat_map(cases)
        .find(|c| c.name() == name)
        .unwrap_or_else(|| panic!("no configuration {name}"));
    let mut replay = shuttle::scheduler::ReplayScheduler::new_from_encoded(&sched);
    replay.set_allow_incomplete();
    shuttle::Runner::new(ThenFirst(replay), config()).run(move || schedule(case));
}

/// A replay that, once the recorded schedule ends, goes on with the first
/// runnable task (so a `PERDURE_DEBUG` dump after the recorded failure
/// point can run).
struct ThenFirst(shuttle::scheduler::ReplayScheduler);

impl shuttle::scheduler::Scheduler for ThenFirst {
    fn new_execution(&mut self) -> Option<shuttle::scheduler::Schedule> {
        self.0.new_execution()
    }
    fn next_task(
        &mut self,
        runnable: &[&shuttle::scheduler::Task],
        current: Option<shuttle::scheduler::TaskId>,
        yielding: bool,
    ) -> Option<shuttle::scheduler::TaskId> {
        self.0
            .next_task(runnable, current, yielding)
            .or_else(|| runnable.first().map(|t| t.id()))
    }
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
}

/// Runs one configuration (`PERDURE_REPLAY_CASE`, named as the failure
/// messages name it) with `PERDURE_SHUTTLE_ITERS` random and PCT schedules
/// (default 1,000) from seed `PERDURE_SEED` (default 1): a one-off hunt.
#[test]
#[ignore]
fn hunt_one_configuration() {
    let name = std::env::var("PERDURE_REPLAY_CASE").expect("PERDURE_REPLAY_CASE");
    let seed = std::env::var("PERDURE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let case = Shape::ALL
        .into_iter()
        .flat_map(cases)
        .find(|c| c.name() == name)
        .unwrap_or_else(|| panic!("no configuration {name}"));
    run_case(case, iterations(1000), seed);
}
