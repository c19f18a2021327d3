//! Each mutant of `src/mutant.rs` switched on in turn, with the check that
//! must catch it; and the same checks on the unmutated code, which must pass.
//! Needs the `mutants` feature, which the crate's dev-dependency on itself
//! turns on for its own tests (so plain `cargo test` runs this file).
//!
//! | mutant | check |
//! | --- | --- |
//! | `NoFlushBeforeDram` (Alg. 4.1 L41–42) | a crash image after a returned insert loses it |
//! | `NoSeqWindow` (Alg. 6.2 L4) | Figure 6.2: a delayed recoverer rolls DRAM back |
//! | `NoRecoveryMark` (Alg. 6.3 L4) | with garbage DRAM, a `MarkableAtomicPointer` list reads unrecovered nodes |
//! | `UnmarkWithoutRecover` (Alg. 6.4 L2.2) | the same check |
//! | `Line47AsWritten` (Alg. 4.1 L46–47, Finding M1) | TLC's M1 schedule: a CAS returns false and a load after it still reads `expected` |
//! | `RecoverNoFlush` (Alg. 6.2 L5, Finding R1) | TLC's R1 schedule on `Sim`: a redundant `recover_field` publishes an unfenced pair, a load returns it, a crash image loses it |
//! | `RecoverNoReread` (Alg. 6.2 L2, Finding R2) | TLC's R2 schedule: garbage just outside the window, recovery and one write in between, then line 4.1 moves NVMM's sequence after recovery |
//! | `TrackBeforeRecover` (§6.4.1, Claim 1) | BitsetAtomic: t1's tracked load is held between the early bit and its `recover_field`; a second thread's load of the field trusts the bit and reads the unrecovered DRAM value |
//! | `Line44Once` (Alg. 4.1 L44 with Alg. 6.3's mark, Finding M2) | a pointer CAS held between its NVMM DWCAS and L44 while a load unmarks the pointer; the CAS returns success and a load after it reads the old pointer |
//!
//! The three finding schedules (`specs/relax/README.md`, "Findings") are
//! forced step by step: each thread of the counterexample is a real thread
//! running the crate's code, held at the `pause!` points of `src/mutant.rs`
//! (a channel per thread) while the test runs the other steps, so the
//! interleaving is the TLA+ trace's, deterministically. They cover that one
//! schedule each, on one field, with the values of the traces (2^63 + 1 for
//! R2's garbage distance); the unmutated code passing them shows the fixes
//! handle those schedules, not all schedules (the TLA+ models and
//! `RecoverField.v` are the general evidence).
//!
//! "Mark a node recovered before `recover_node` returns" (issue 6) is
//! `TrackBeforeRecover`; its check forces the race of a second thread with
//! the first recovery on a BitsetAtomic field (the HybridAtomicPointer path
//! of the same mutant, a node's bit set before `recover_node`, is not
//! checked by a schedule of its own).
//!
//! Beside the table, checks written for missed mutants of the mutation
//! campaign (`docs/MUTANTS.md`, the crate's `MUTANTS.md`), among them a
//! space's creation and header checks, an overtaken DRAM half of a Mirror
//! CAS, a BitsetAtomic field recovered once only, the lines a node's
//! recovery writes back (its own; none when recovered again), the
//! epoch-advance cadence of a
//! handle's critical sections, and two skip-list races
//! forced the same way (a lost upper-level link, and a remover whose node
//! has a new node with its key in front of it, held at
//! `SkipFindBeforeLevel0`).

mod common;

use common::*;
use perdure_pm::sim::VolatileFill;
use perdure_pm::{Backend, NoFlush, Pool, Sim};
use perdure_relax::ds::{HarrisList, ListNode};
use perdure_relax::mutant::{self, Mutant, Point};
use perdure_relax::{
    Config, DramInit, FieldKind, Node, OpenOptions, PAtomic, PAtomicPtr, RelaxError, Space,
    Tracking,
};
use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::Duration;

/// Whether some crash image taken after `insert(1..=8)` returned lacks a key.
fn loses_a_returned_insert() -> bool {
    let pool = Pool::volatile("relax-mut", POOL, Sim::default()).unwrap();
    let sp = create(&pool, Tracking::Markable);
    let mut h = sp.handle().unwrap();
    let l = HarrisList::create(&mut h, 0).unwrap();
    for k in 1..=8 {
        l.insert(&mut h, k).unwrap();
    }
    let cp = pool.backend().capture();
    let (_, images) = cp.images(64, 1);
    for img in images {
        let words = cp.materialize(&img, VolatileFill::Zeroed);
        let p2 = Pool::volatile_from_words(&words, NoFlush).unwrap();
        p2.reincarnate();
        let s2 = Space::open(&p2, base(&p2), OpenOptions::new(Tracking::Markable)).unwrap();
        let l2 = HarrisList::open(&s2, 0).unwrap();
        let mut h2 = s2.handle().unwrap();
        if l2
            .keys(&mut h2)
            .map_or(true, |k| k != (1..=8).collect::<Vec<_>>())
        {
            return true;
        }
    }
    false
}

/// A data field holding `v` (field 0 of a list node), and the space of the
/// next incarnation (a crash: fresh zeroed DRAM, `BitsetAtomic` tracking).
fn field_after_crash<B: Backend>(pool: &Pool<B>, v: u64) -> (Space<'_, B>, u64) {
    let off = {
        let sp = create(pool, Tracking::Bitset);
        let mut h = sp.handle().unwrap();
        h.alloc_node::<ListNode>(&[v, 0]).unwrap()
    };
    pool.reincarnate();
    let sp = Space::open(pool, base(pool), OpenOptions::new(Tracking::Bitset)).unwrap();
    (sp, off)
}

/// Whether Figure 6.2's delayed DWCAS rolls the field back.
fn figure_6_2_rolls_back() -> bool {
    let pool = Pool::volatile("relax-mut", POOL, NoFlush).unwrap();
    let (sp, off) = field_after_crash(&pool, 40);
    let ((nv1, snv), _) = sp.replicas(off).unwrap();
    let (v1, s1) = (77, snv + 2);
    sp.dram().store_pair(off, (v1, s1));
    let f = PAtomic::at(off);
    f.load(&sp).unwrap();
    f.store(&sp, 5).unwrap();
    f.store(&sp, v1).unwrap();
    sp.dram().dwcas(off, (v1, s1), (nv1, snv))
}

/// Whether a Markable list over garbage DRAM reads wrong contents.
fn markable_reads_garbage() -> bool {
    let pool = Pool::volatile("relax-mut", POOL, NoFlush).unwrap();
    {
        let sp = create(&pool, Tracking::Markable);
        let mut h = sp.handle().unwrap();
        let l = HarrisList::create(&mut h, 0).unwrap();
        for k in 1..=8 {
            l.insert(&mut h, k).unwrap();
        }
    }
    pool.reincarnate();
    let o = OpenOptions {
        tracking: Tracking::Markable,
        dram: DramInit::Garbage { seed: 11 },
    };
    let sp = Space::open(&pool, base(&pool), o).unwrap();
    let l = HarrisList::open(&sp, 0).unwrap();
    let mut h = sp.handle().unwrap();
    l.keys(&mut h)
        .map_or(true, |k| k != (1..=8).collect::<Vec<_>>())
}

/// What a held thread reports.
#[derive(Debug, PartialEq)]
enum Ev {
    /// It reached this point and waits for a release.
    At(Point),
    /// Its operation returned.
    Done,
}

/// The controls of a thread held at pause points.
struct Held {
    ev: Receiver<Ev>,
    go: Sender<()>,
}

impl Held {
    /// The thread's next report (it pauses or finishes within 30 s).
    fn next(&self) -> Ev {
        self.ev
            .recv_timeout(Duration::from_secs(30))
            .expect("a held thread neither paused nor finished")
    }

    /// Lets the thread go on from the point it waits at.
    fn release(&self) {
        self.go.send(()).expect("the held thread is waiting");
    }
}

/// Runs `op` on a new thread that stops at the points of `stops`, in order
/// (each once; a point not at the front of the queue is passed).
fn spawn_held<'scope, T: Send + 'scope>(
    sc: &'scope Scope<'scope, '_>,
    stops: &[Point],
    op: impl FnOnce() -> T + Send + 'scope,
) -> (Held, ScopedJoinHandle<'scope, T>) {
    let (ev_tx, ev_rx) = channel();
    let (go_tx, go_rx) = channel::<()>();
    let mut stops: VecDeque<Point> = stops.iter().copied().collect();
    let h = sc.spawn(move || {
        let tx = ev_tx.clone();
        mutant::set_hook(Some(Box::new(move |p| {
            if stops.front() == Some(&p) {
                stops.pop_front();
                tx.send(Ev::At(p)).expect("the test listens");
                go_rx.recv().expect("the test releases");
            }
        })));
        let r = op();
        mutant::set_hook(None);
        let _ = ev_tx.send(Ev::Done);
        r
    });
    (
        Held {
            ev: ev_rx,
            go: go_tx,
        },
        h,
    )
}

/// Finding M1 (`mutants/MirrorAsWrittenLine47.cfg`): whether a CAS returns
/// false while a load after it still reads `expected`.
///
/// t1 runs `CAS(0→1)` and is held before its NVMM DWCAS (L40); t2 stores 0
/// (the value the field holds: the sequence moves, the value does not),
/// then runs `CAS(0→1)` and is held after its NVMM DWCAS, before its
/// write-back; t1 goes on: its L40 fails. t1 then loads. t1's false needs
/// t2's CAS linearized before it returns, and nothing writes 0 after that
/// CAS, so the load must return 1.
fn m1_false_cas_then_stale_load() -> bool {
    let pool = Pool::volatile("relax-mut", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Bitset);
    let off = {
        let mut h = sp.handle().unwrap();
        h.alloc_node::<ListNode>(&[0, 0]).unwrap()
    };
    let f = PAtomic::at(off);
    let violated = std::thread::scope(|sc| {
        let (t1, t1h) = spawn_held(sc, &[Point::CasBeforeNvmmDwcas], || {
            let r = f.compare_exchange(&sp, 0, 1).unwrap();
            (r, f.load(&sp).unwrap())
        });
        assert_eq!(t1.next(), Ev::At(Point::CasBeforeNvmmDwcas));
        f.store(&sp, 0).unwrap();
        let (t2, t2h) = spawn_held(sc, &[Point::CasAfterNvmmDwcas], || {
            f.compare_exchange(&sp, 0, 1).unwrap()
        });
        assert_eq!(t2.next(), Ev::At(Point::CasAfterNvmmDwcas));
        t1.release();
        assert_eq!(t1.next(), Ev::Done);
        let (r1, seen) = t1h.join().unwrap();
        t2.release();
        assert_eq!(t2.next(), Ev::Done);
        assert_eq!(t2h.join().unwrap(), Ok(0), "t2's CAS succeeded at L40");
        assert_eq!(r1, Err(1), "t1's CAS fails: t2's CAS beat it");
        seen != 1
    });
    let (nv, d) = sp.replicas(off).unwrap();
    assert_eq!(nv, d, "the replicas agree when quiescent");
    assert_eq!(f.load(&sp).unwrap(), 1);
    violated
}

/// Finding R2 (`mutants/RelaxAsWrittenWindow.cfg`): whether a
/// `recover_field` moves NVMM's sequence after the field was recovered.
///
/// After a crash NVMM holds `(v0, s0)` and DRAM the garbage sequence
/// `s0 + 2^63 + 1`, just outside line 4's window. t2's `recover_field`
/// reads DRAM (line 1) and is held; t1 recovers the field (a tracked load)
/// and stores 5 once, which brings NVMM's sequence to `s0 + 1`, inside the
/// window of t2's stale `S_D`; t2 goes on. If t2 reaches line 5 having
/// moved NVMM's sequence at line 4.1, Mirror's first invariant (NVMM's
/// sequence is DRAM's or one more) is checked right there.
fn r2_seq_moved_after_recovery() -> bool {
    let pool = Pool::volatile("relax-mut", POOL, NoFlush).unwrap();
    let (sp, off) = field_after_crash(&pool, 40);
    let ((v0, s0), _) = sp.replicas(off).unwrap();
    let garbage = (77, s0.wrapping_add((1 << 63) + 1));
    sp.dram().store_pair(off, garbage);
    let f = PAtomic::at(off);
    let violated = std::thread::scope(|sc| {
        let stops = [Point::RecoverAfterLine1, Point::RecoverBeforeLine5];
        let (t2, t2h) = spawn_held(sc, &stops, || sp.recover_field(off).unwrap());
        assert_eq!(t2.next(), Ev::At(Point::RecoverAfterLine1));
        assert_eq!(f.load(&sp).unwrap(), v0, "t1 recovered the field");
        assert_eq!(sp.replicas(off).unwrap(), ((v0, s0), (v0, s0)));
        f.store(&sp, 5).unwrap();
        t2.release();
        let mut violated = false;
        loop {
            match t2.next() {
                Ev::At(Point::RecoverBeforeLine5) => {
                    let ((_, ns), (_, ds)) = sp.replicas(off).unwrap();
                    violated |= ns != ds && ns != ds.wrapping_add(1);
                    t2.release();
                }
                Ev::Done => break,
                e => panic!("unexpected {e:?}"),
            }
        }
        t2h.join().unwrap();
        violated
    });
    let (nv, d) = sp.replicas(off).unwrap();
    assert_eq!(nv.0, 5);
    assert_eq!(d.0, 5);
    violated
}

/// Finding R1 (`mutants/RelaxAsWrittenNoFlush.cfg`), on the Px86 simulator:
/// whether a load returns a value that a crash at that moment can lose.
///
/// The field is recovered (DRAM = NVMM = `(0, s)`). t1 runs `CAS(0→1)` and
/// is held after its NVMM DWCAS, before its write-back; t2's (redundant)
/// `recover_field` copies NVMM's `(1, s + 1)` to DRAM and a load returns 1.
/// Every crash image at that moment (up to 64) is recovered and the field
/// loaded: each must give 1.
fn r1_load_lost_by_crash() -> bool {
    let pool = Pool::volatile("relax-mut", POOL, Sim::default()).unwrap();
    let (sp, off) = field_after_crash(&pool, 0);
    let f = PAtomic::at(off);
    assert_eq!(f.load(&sp).unwrap(), 0, "t1 recovered the field");
    std::thread::scope(|sc| {
        let (t1, t1h) = spawn_held(sc, &[Point::CasAfterNvmmDwcas], || {
            f.compare_exchange(&sp, 0, 1).unwrap()
        });
        assert_eq!(t1.next(), Ev::At(Point::CasAfterNvmmDwcas));
        sp.recover_field(off).unwrap();
        let seen = f.load(&sp).unwrap();
        assert_eq!(seen, 1, "the recoverer copied t1's pair to DRAM");
        let cp = pool.backend().capture();
        let (_, images) = cp.images(64, 1);
        let mut lost = false;
        let mut n = 0;
        for img in images {
            n += 1;
            let words = cp.materialize(&img, VolatileFill::Zeroed);
            let p2 = Pool::volatile_from_words(&words, NoFlush).unwrap();
            p2.reincarnate();
            let s2 = Space::open(&p2, base(&p2), OpenOptions::new(Tracking::Bitset)).unwrap();
            lost |= PAtomic::at(off).load(&s2).unwrap() != seen;
        }
        assert!(n > 0, "at least one crash image");
        t1.release();
        assert_eq!(t1.next(), Ev::Done);
        assert_eq!(t1h.join().unwrap(), Ok(0));
        lost
    })
}

/// Finding M2 (`src/patomic.rs`): whether a pointer CAS that returned
/// success is not seen by a load after it.
///
/// After a crash under `MarkableAtomicPointer`, node `a`'s next pointer is
/// recovered (Algorithm 6.3: DRAM holds `mark(b)`). t1 runs `CAS(b→c)` on
/// it and is held after its NVMM DWCAS; a load (Algorithm 6.4) recovers `b`
/// and clears the mark (it returns `b`: linearized before t1's CAS). t1
/// goes on: its L44 DWCAS expects the marked pair it read at L9 and fails.
/// After t1's success, a load must return `c`.
fn m2_cas_success_then_stale_load() -> bool {
    let pool = Pool::volatile("relax-mut", POOL, NoFlush).unwrap();
    let (a, b, c) = {
        let sp = create(&pool, Tracking::Markable);
        let mut h = sp.handle().unwrap();
        let b = h.alloc_node::<ListNode>(&[2, 0]).unwrap();
        let c = h.alloc_node::<ListNode>(&[3, 0]).unwrap();
        let a = h.alloc_node::<ListNode>(&[1, b]).unwrap();
        (a, b, c)
    };
    pool.reincarnate();
    let sp = Space::open(&pool, base(&pool), OpenOptions::new(Tracking::Markable)).unwrap();
    let next = PAtomicPtr::<ListNode>::at(a + 16);
    sp.recover_field_ptr::<ListNode>(next.offset()).unwrap();
    let (_, (dv, _)) = sp.replicas(next.offset()).unwrap();
    assert_eq!(dv, b | perdure_relax::RECOVERY_MARK, "recovered and marked");
    std::thread::scope(|sc| {
        let (t1, t1h) = spawn_held(sc, &[Point::CasAfterNvmmDwcas], || {
            next.compare_exchange(&sp, b, c).unwrap()
        });
        assert_eq!(t1.next(), Ev::At(Point::CasAfterNvmmDwcas));
        assert_eq!(next.load(&sp).unwrap(), b, "the load before t1's CAS");
        t1.release();
        assert_eq!(t1.next(), Ev::Done);
        assert_eq!(t1h.join().unwrap(), Ok(b), "t1's CAS succeeded at L40");
        next.load(&sp).unwrap() != c
    })
}

/// Claim 1 (`TrackBeforeRecover`): whether a load reads a field that
/// tracking reports recovered before it is.
///
/// After a crash (zeroed DRAM, BitsetAtomic) the field holds 40 in NVMM. t1
/// loads it and is held after tracking found it unrecovered, before its
/// `recover_field`; a second load runs to completion meanwhile. Both must
/// return 40.
fn claim1_load_before_recovery() -> bool {
    let pool = Pool::volatile("relax-mut", POOL, NoFlush).unwrap();
    let (sp, off) = field_after_crash(&pool, 40);
    let f = PAtomic::at(off);
    std::thread::scope(|sc| {
        let (t1, t1h) = spawn_held(sc, &[Point::TrackBeforeRecover], || f.load(&sp).unwrap());
        assert_eq!(t1.next(), Ev::At(Point::TrackBeforeRecover));
        let seen = std::thread::scope(|sc2| sc2.spawn(|| f.load(&sp).unwrap()).join().unwrap());
        t1.release();
        assert_eq!(t1.next(), Ev::Done);
        let first = t1h.join().unwrap();
        assert_eq!(first, 40, "t1 recovered the field itself");
        seen != 40
    })
}

fn check(m: Mutant) -> bool {
    match m {
        Mutant::NoFlushBeforeDram => loses_a_returned_insert(),
        Mutant::NoSeqWindow => figure_6_2_rolls_back(),
        Mutant::NoRecoveryMark | Mutant::UnmarkWithoutRecover => markable_reads_garbage(),
        Mutant::Line47AsWritten => m1_false_cas_then_stale_load(),
        Mutant::RecoverNoFlush => r1_load_lost_by_crash(),
        Mutant::RecoverNoReread => r2_seq_moved_after_recovery(),
        Mutant::Line44Once => m2_cas_success_then_stale_load(),
        Mutant::TrackBeforeRecover => claim1_load_before_recovery(),
        // Not in `mutant::MIRROR`: the set mutants are caught by the shuttle
        // schedules of `tests/shuttle_sets.rs`, the other constructions'
        // by their own crates.
        _ => unreachable!("{} is not checked here", m.name()),
    }
}

/// What `check(m)` runs (the `explored` text of its PERDURE-CHECK row).
fn what(m: Mutant) -> &'static str {
    match m {
        Mutant::NoFlushBeforeDram => "crash images (up to 64, Sim) after 8 returned Markable list inserts",
        Mutant::NoSeqWindow => "Figure 6.2: a delayed recoverer's DWCAS after two writes",
        Mutant::NoRecoveryMark | Mutant::UnmarkWithoutRecover => {
            "a Markable list of 8 keys reopened over garbage DRAM, read whole"
        }
        Mutant::Line47AsWritten => "TLC's M1 schedule, forced: a false CAS, then a load",
        Mutant::RecoverNoFlush => "TLC's R1 schedule, forced on Sim: a load, then every crash image (up to 64)",
        Mutant::RecoverNoReread => "TLC's R2 schedule, forced: garbage 2^63+1 ahead, recovery and a write in between",
        Mutant::Line44Once => "M2 schedule, forced: a pointer CAS held between L40 and L44 while a load unmarks",
        Mutant::TrackBeforeRecover => {
            "Claim 1 schedule, forced: a BitsetAtomic load held before its recover_field, a second load meanwhile"
        }
        _ => "checked by tests/shuttle_sets.rs",
    }
}

#[test]
fn every_mutant_is_caught_and_the_seed_passes() {
    let _g = mutant::lock();
    let mut missed = Vec::new();
    for m in mutant::MIRROR {
        let t = std::time::Instant::now();
        mutant::set(None);
        let seed_ok = !check(m);
        mutant::set(Some(m));
        let caught = check(m);
        mutant::set(None);
        let pass = seed_ok && caught;
        println!(
            "PERDURE-CHECK {{\"name\":\"mutant:relax/{}\",\"kind\":\"explore\",\"status\":\"{}\",\"explored\":\"{}; as written: {}; mutant: {}\",\"seconds\":{:.3}}}",
            m.name(),
            if pass { "pass" } else { "fail" },
            what(m),
            if seed_ok { "no violation" } else { "VIOLATION" },
            if caught { "violation found" } else { "NOT caught" },
            t.elapsed().as_secs_f64()
        );
        if !pass {
            missed.push(format!(
                "{}: seed passes {seed_ok}, mutant caught {caught}",
                m.name()
            ));
        }
    }
    assert!(missed.is_empty(), "{}", missed.join("\n"));
}

/// The skip list refuses `Tracking::Markable` (§6.4.2: a markable pointer
/// needs a single incoming pointer per node), at `create` and at `open`;
/// the set tests only run it under the variants it accepts.
#[test]
fn skiplist_refuses_markable_tracking() {
    use perdure_relax::ds::SkipList;
    use perdure_relax::RelaxError;
    let pool = Pool::volatile("skip-markable", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Markable);
    let mut h = sp.handle().unwrap();
    assert!(
        matches!(SkipList::create(&mut h, 0), Err(RelaxError::Config(_))),
        "a skip list was created under Markable"
    );
    assert!(
        matches!(SkipList::open(&sp, 0), Err(RelaxError::Config(_))),
        "a skip list was opened under Markable"
    );
}

/// `Space::create` on a pool that held something else: it refuses a heap
/// that does not fit the pool before writing anything, and a space it
/// creates reads every root as empty (each root word zeroed, not only the
/// first). The tests' pools start zeroed.
#[test]
fn space_create_checks_its_room_and_zeroes_every_root() {
    const PATTERN: u64 = 0xA5A5_A5A5_A5A5_A5A5;
    let pool = Pool::volatile("space-create-dirty", POOL, NoFlush).unwrap();
    let b = base(&pool);
    let fill = || {
        for w in (b..b + 8192).step_by(8) {
            pool.word(w)
                .unwrap()
                .store(PATTERN, perdure_pm::sync::atomic::Ordering::Relaxed);
        }
    };
    fill();
    let c = cfg(false);
    // A heap half a page too large for the pool.
    let too_big = perdure_relax::Config {
        heap_bytes: POOL - b - 4096 + 2048,
        ..c
    };
    assert!(
        Space::create(&pool, b, &too_big, OpenOptions::new(Tracking::Hybrid)).is_err(),
        "a space whose heap ends past the pool was created"
    );
    for w in (b..b + 8192).step_by(8) {
        assert_eq!(
            pool.word(w)
                .unwrap()
                .load(perdure_pm::sync::atomic::Ordering::Relaxed),
            PATTERN,
            "word {w:#x} written by a refused create"
        );
    }
    let sp = Space::create(&pool, b, &c, OpenOptions::new(Tracking::Hybrid)).expect("create");
    for i in 0..c.roots as usize {
        assert!(
            matches!(sp.root(i), Ok(None)),
            "root {i} of a new space: {:?}",
            sp.root(i)
        );
    }
}

/// `Space::create` writes its zeroed roots back before it returns: on a
/// pool whose memory held a persisted pattern, every crash image right
/// after `create` (the writes not written back may be lost) must open to a
/// space whose roots are all empty. The tests' pools start zeroed, where a
/// lost zeroing reads the same. Run with the tests' 4 roots (one line) and
/// with the most a space may have (`MAX_ROOTS`, 64: eight lines), where a
/// write-back of the first line only leaves roots 8 on with the pattern.
#[test]
fn space_create_roots_are_durably_empty() {
    for roots in [cfg(false).roots, 64] {
        create_roots_are_durably_empty(Config {
            roots,
            ..cfg(false)
        });
    }
}

fn create_roots_are_durably_empty(c: Config) {
    const PATTERN: u64 = 0xA5A5_A5A5_A5A5_A5A5;
    let pool = Pool::volatile("space-create-durable", POOL, Sim::default()).unwrap();
    let b = base(&pool);
    for w in (b..b + 8192).step_by(8) {
        pool.word(w)
            .unwrap()
            .store(PATTERN, perdure_pm::sync::atomic::Ordering::Relaxed);
    }
    pool.pwb(b, 8192);
    pool.pfence();
    drop(Space::create(&pool, b, &c, OpenOptions::new(Tracking::Hybrid)).expect("create"));
    let cp = pool.backend().capture();
    let (_, images) = cp.images(64, 1);
    let mut checked = 0;
    for img in images {
        let words = cp.materialize(&img, VolatileFill::Zeroed);
        let p2 = Pool::volatile_from_words(&words, NoFlush).unwrap();
        p2.reincarnate();
        let sp = Space::open(&p2, b, OpenOptions::new(Tracking::Hybrid)).expect("open");
        for i in 0..c.roots as usize {
            assert!(
                matches!(sp.root(i), Ok(None)),
                "root {i} of {} in the crash image {:?} right after create: {:?}",
                c.roots,
                img.0,
                sp.root(i)
            );
        }
        checked += 1;
    }
    assert!(checked > 0, "no crash image after create");
}

/// Rewrites word `index` of a fresh space's header to each of `values`,
/// with a valid checksum (as a tool or a bug would leave it), and checks that
/// `open` refuses it as corrupt, naming `what`.
fn refuses_checksummed_header_word(index: usize, values: &[u64], what: &str) {
    for &v in values {
        let p = Pool::volatile("relax-header", POOL, NoFlush).unwrap();
        let b = base(&p);
        drop(create(&p, Tracking::Bitset));
        let magic = p
            .word(b)
            .unwrap()
            .load(std::sync::atomic::Ordering::Relaxed);
        let mut words = match perdure_pm::meta::read(&p, b, magic).unwrap() {
            perdure_pm::meta::Verdict::Valid(w) => w,
            _ => panic!("the space's header does not read back"),
        };
        words[index] = v;
        perdure_pm::meta::write(&p, b, &words).unwrap();
        p.reincarnate();
        let e =
            perdure_relax::Space::open(&p, b, perdure_relax::OpenOptions::new(Tracking::Bitset))
                .unwrap_err();
        assert!(
            matches!(
                e,
                perdure_relax::RelaxError::Pm(perdure_pm::PmError::Corrupt { .. })
            ) && e.to_string().contains(what),
            "{what} {v}: {e}"
        );
    }
}

/// A header whose checksum is valid but whose root count is 0, or above
/// the largest, is refused by name: the count bounds every root access.
#[test]
fn a_checksummed_header_with_a_root_count_out_of_range_is_refused() {
    refuses_checksummed_header_word(2, &[0, 1 << 40], "root count");
}

/// The same for the thread count (word 5): 0 or above `MAX_THREADS` in a
/// checksummed header is refused by name — the count sizes every per-thread
/// table the space opens (the campaign's `space.rs:292:25` gap: the bounds
/// were checked at creation only).
#[test]
fn a_checksummed_header_with_a_thread_count_out_of_range_is_refused() {
    refuses_checksummed_header_word(5, &[0, 257, 1 << 40], "thread count");
}

/// Fix M2's retry (`finish_dram_half`) stops once DRAM shows another
/// sequence than the one L9 read, whatever the value: that pair is a later
/// write's. t1 runs `CAS(0→1)` on a data field and is held after its NVMM
/// DWCAS; a store of 0 then helps t1's pair into DRAM (L18–L24) and writes
/// 0 again, at the next sequence — the value t1's L9 read; t1 goes on and
/// its L44 DWCAS fails. The store returned after t1's CAS took effect, so a
/// load must return 0, and the replicas agree. (Retrying from that later
/// pair, as if it were the one L9 read, rolls DRAM back to t1's `(1, s+1)`:
/// the campaign's `patomic.rs:497:34` gap.)
#[test]
fn an_overtaken_dram_half_is_left_to_the_later_write() {
    let _g = mutant::lock();
    let pool = Pool::volatile("relax-overtaken", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Bitset);
    let off = {
        let mut h = sp.handle().unwrap();
        h.alloc_node::<ListNode>(&[0, 0]).unwrap()
    };
    let f = PAtomic::at(off);
    std::thread::scope(|sc| {
        let (t1, t1h) = spawn_held(sc, &[Point::CasAfterNvmmDwcas], || {
            f.compare_exchange(&sp, 0, 1).unwrap()
        });
        assert_eq!(t1.next(), Ev::At(Point::CasAfterNvmmDwcas));
        f.store(&sp, 0).unwrap();
        t1.release();
        assert_eq!(t1.next(), Ev::Done);
        assert_eq!(t1h.join().unwrap(), Ok(0), "t1's CAS succeeded at L40");
    });
    assert_eq!(f.load(&sp).unwrap(), 0, "the store after t1's CAS");
    let (nv, d) = sp.replicas(off).unwrap();
    assert_eq!(nv, d, "the replicas agree when quiescent");
}

/// BitsetAtomic recovers a field on its first access after a restart and
/// never again: the field's bit says it is done (§6.4.1), so the work after
/// a restart is paid once per field. Both fields of a node (two
/// consecutive bits, so at least one is not bit 0 of its bitset word),
/// loaded twice each after a crash: tracking must find each unrecovered
/// on its first load only (one `TrackBeforeRecover` each), and the loads
/// return what the node held.
#[test]
fn a_bitset_field_is_recovered_once() {
    use std::cell::Cell;
    use std::rc::Rc;
    let _g = mutant::lock();
    let pool = Pool::volatile("relax-once", POOL, NoFlush).unwrap();
    let (sp, off) = field_after_crash(&pool, 40);
    let seen = Rc::new(Cell::new(0));
    let count = seen.clone();
    mutant::set_hook(Some(Box::new(move |p| {
        if p == Point::TrackBeforeRecover {
            count.set(count.get() + 1);
        }
    })));
    let mut found = Vec::new();
    for (f, v) in [(off, 40), (off + 16, 0)] {
        for round in 0..2 {
            let before = seen.get();
            assert_eq!(PAtomic::at(f).load(&sp).unwrap(), v, "field {f:#x}");
            found.push((f / 16 % 64, round, seen.get() - before));
        }
    }
    mutant::set_hook(None);
    let want: Vec<_> = [off, off + 16]
        .iter()
        .flat_map(|&f| [(f / 16 % 64, 0, 1), (f / 16 % 64, 1, 0)])
        .collect();
    assert_eq!(
        found, want,
        "(bit in its word, load, recoveries): each field recovered on its first load only"
    );
}

/// A node of eight data fields, two cache lines (a test type: every node
/// type of `ds` has a pointer field).
struct EightValues;

impl Node for EightValues {
    type Child = EightValues;
    fn field_count<B: Backend>(_: &Space<'_, B>, _: u64) -> Result<usize, RelaxError> {
        Ok(8)
    }
    fn field_kind(_: usize) -> FieldKind {
        FieldKind::Value
    }
}

/// A node's recovery writes back the fields it copies, and only those: the
/// first recovery of a node of eight data fields after a crash writes back
/// each field (Finding R1: its NVMM pair durable before the DRAM copy),
/// eight write-backs of the node's own two lines, under one fence (`recover_fields`'
/// batch). Recovered a second time (as by a thread that lost the race to
/// recover it), it copies nothing: Algorithm 6.2's line 3 finds each
/// field's DRAM pair equal to its NVMM pair, so nothing is written back or
/// fenced. (Algorithm 6.3, for pointer fields, has no line 3.)
#[test]
fn recovering_a_recovered_data_node_copies_nothing() {
    use perdure_pm::sim::SimOp;
    use perdure_pm::stats::thread_counts;
    use perdure_pm::{Sim, SimOptions};
    let pool = Pool::volatile("relax-again", POOL, Sim::new(SimOptions::default())).unwrap();
    let node = {
        let sp = create(&pool, Tracking::Bitset);
        let mut h = sp.handle().unwrap();
        h.alloc_node::<EightValues>(&[5, 6, 7, 8, 9, 10, 11, 12])
            .unwrap()
    };
    assert_eq!(node % 64, 0, "a 128-byte node is two lines");
    pool.reincarnate();
    let sp = Space::open(&pool, base(&pool), OpenOptions::new(Tracking::Bitset)).unwrap();
    let mut spent = Vec::new();
    for _ in 0..2 {
        pool.backend().start_trace();
        let before = thread_counts();
        EightValues::recover_node(&sp, node).unwrap();
        let c = thread_counts() - before;
        let lines: std::collections::BTreeSet<u64> = pool
            .backend()
            .take_trace()
            .iter()
            .filter(|e| e.op == SimOp::Pwb)
            .map(|e| e.off & !63)
            .collect();
        spent.push((c.pwb, c.pfence, lines));
    }
    assert_eq!(
        spent,
        [(8, 1, [node, node + 64].into()), (0, 0, [].into())],
        "(write-backs, fences, lines written back) of the first and the second recovery"
    );
    for (i, v) in (5..=12).enumerate() {
        let f = node + 16 * i as u64;
        assert_eq!(PAtomic::at(f).load(&sp).unwrap(), v, "field {f:#x}");
    }
}

/// Without eager reclaim, the audit keeps the space's own cadence: a
/// handle tries to advance the epoch at every 8th critical section's end
/// only, so a node it retires in its first section (tagged with epoch e)
/// is freed at its 16th, when the second attempt reaches e + 2, and not
/// before; with eager reclaim it would be freed at its 2nd. Every other
/// check starts the audit eager, so the flag's `false` was never read.
#[test]
fn a_retired_node_is_freed_at_the_second_epoch_advance() {
    use perdure_relax::audit::BlockEvent;
    let pool = Pool::volatile("relax-cadence", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Bitset);
    sp.audit_start(false);
    let mut h = sp.handle().unwrap();
    let x = h.alloc_node::<ListNode>(&[7, 0]).unwrap();
    h.critical(|h| h.retire(x));
    let freed = |sp: &Space<'_, NoFlush>| {
        sp.audit_events()
            .iter()
            .any(|&(ev, b)| b == x && ev == BlockEvent::Free)
    };
    let mut sections = 1;
    while !freed(&sp) && sections < 20 {
        h.critical(|_| ());
        sections += 1;
    }
    assert_eq!(
        sections, 16,
        "critical sections ended when node {x:#x} was freed"
    );
}

/// The nodes a skip list links at `lvl`, from its head (at most 4), read
/// from the NVMM replica. A node is `[key, height, next[0], ...]`, 16 bytes
/// a field.
fn skip_level(pool: &Pool<NoFlush>, head: u64, lvl: u64) -> Vec<u64> {
    let word = |off: u64| {
        pool.word(off)
            .unwrap()
            .load(std::sync::atomic::Ordering::Acquire)
    };
    let mut nodes = Vec::new();
    let mut n = word(head + 32 + 16 * lvl) & !0xf;
    while n != 0 && nodes.len() < 4 {
        nodes.push(n);
        n = word(n + 32 + 16 * lvl) & !0xf;
    }
    nodes
}

/// Fraser's relinking in the skip list's `link_upper`: a node whose link at
/// an upper level loses its CAS to a neighbour's insert takes the new
/// successor into its own pointer and links again, so every level it drew
/// links it. t1 inserts 10 (height 2, `seed_heights(1)`) and is held before
/// the NVMM DWCAS of its level-1 link (its second CAS, after level 0's); 20
/// (height 2) is inserted meanwhile and takes the head's level-1 pointer;
/// t1 goes on, its CAS fails and it finds again. Level 1 from the head must
/// then link 10 and 20. (Giving up the node's upper levels when its own
/// pointer is no longer the successor — the campaign's `skiplist.rs:266:24`
/// gap — leaves 10 at level 0 only: a correct set, a flatter list.)
#[test]
fn a_skip_list_node_that_lost_an_upper_link_race_links_again() {
    use perdure_relax::ds::{skiplist, SkipList};
    use std::sync::atomic::Ordering;
    let _g = mutant::lock();
    let pool = Pool::volatile("relax-relink", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Bitset);
    let l = {
        let mut h = sp.handle().unwrap();
        SkipList::create(&mut h, 0).unwrap()
    };
    std::thread::scope(|sc| {
        let stops = [Point::CasBeforeNvmmDwcas, Point::CasBeforeNvmmDwcas];
        let (t1, t1h) = spawn_held(sc, &stops, || {
            skiplist::seed_heights(1);
            let mut h = sp.handle().unwrap();
            l.insert(&mut h, 10).unwrap()
        });
        assert_eq!(t1.next(), Ev::At(Point::CasBeforeNvmmDwcas), "level 0");
        t1.release();
        assert_eq!(t1.next(), Ev::At(Point::CasBeforeNvmmDwcas), "level 1");
        skiplist::seed_heights(1);
        let mut h = sp.handle().unwrap();
        assert!(l.insert(&mut h, 20).unwrap());
        drop(h);
        t1.release();
        assert_eq!(t1.next(), Ev::Done);
        assert!(t1h.join().unwrap(), "10 inserted");
    });
    let word = |off: u64| pool.word(off).unwrap().load(Ordering::Acquire);
    let level = |lvl: u64| -> Vec<(u64, u64)> {
        let nodes = skip_level(&pool, l.head(), lvl);
        nodes.iter().map(|&n| (word(n), word(n + 16))).collect()
    };
    assert_eq!(level(0), [(10, 2), (20, 2)], "level 0: keys and heights");
    assert_eq!(level(1), [(10, 2), (20, 2)], "level 1 links both nodes");
}

/// `find_chasing`: a remover walks past unlinked nodes holding its key
/// until it reaches the node it removed, so a new node with the same key,
/// linked in front of it at an upper level, does not leave it reachable.
/// `chase` (10, height 2) is in the list. t1 inserts 10 (height 2) and is
/// held after its `find`'s level-1 window (successor `chase`, unmarked);
/// t2 removes 10, marks both levels and is held at the first CAS of its
/// `find_chasing` (the level-1 unlink, expecting the head to point at
/// `chase`). t1 goes on: level 0 shows `chase` deleted, so t1 unlinks it
/// there and inserts its node in front of `chase` at level 1. t2 goes on:
/// its CAS fails, its walk meets t1's node (10, not `chase`), must pass it
/// and unlink `chase` behind it. Level 1 must then link t1's node alone;
/// stopping at the first node with the key (plain `find`, the campaign's
/// `skiplist.rs:226:65` gap) leaves the retired `chase` linked there.
#[test]
fn a_skip_list_remover_unlinks_its_node_behind_a_new_node_with_its_key() {
    use perdure_relax::ds::{skiplist, SkipList};
    let _g = mutant::lock();
    let pool = Pool::volatile("relax-chase", POOL, NoFlush).unwrap();
    let sp = create(&pool, Tracking::Bitset);
    let l = {
        let mut h = sp.handle().unwrap();
        let l = SkipList::create(&mut h, 0).unwrap();
        skiplist::seed_heights(1);
        assert!(l.insert(&mut h, 10).unwrap());
        l
    };
    let level = |lvl: u64| skip_level(&pool, l.head(), lvl);
    let chase = level(1);
    assert_eq!(chase.len(), 1, "10 is linked at level 1");
    let chase = chase[0];
    std::thread::scope(|sc| {
        let (t1, t1h) = spawn_held(sc, &[Point::SkipFindBeforeLevel0], || {
            skiplist::seed_heights(1);
            let mut h = sp.handle().unwrap();
            l.insert(&mut h, 10).unwrap()
        });
        assert_eq!(t1.next(), Ev::At(Point::SkipFindBeforeLevel0));
        let cas = [Point::CasBeforeNvmmDwcas; 3];
        let (t2, t2h) = spawn_held(sc, &cas, || {
            let mut h = sp.handle().unwrap();
            l.remove(&mut h, 10).unwrap()
        });
        assert_eq!(t2.next(), Ev::At(Point::CasBeforeNvmmDwcas), "mark level 1");
        t2.release();
        assert_eq!(t2.next(), Ev::At(Point::CasBeforeNvmmDwcas), "mark level 0");
        t2.release();
        assert_eq!(
            t2.next(),
            Ev::At(Point::CasBeforeNvmmDwcas),
            "unlink level 1"
        );
        t1.release();
        assert_eq!(t1.next(), Ev::Done);
        assert!(t1h.join().unwrap(), "t1 inserted 10 after the removal");
        t2.release();
        assert_eq!(t2.next(), Ev::Done);
        assert!(t2h.join().unwrap(), "t2 removed the first 10");
    });
    let (l0, l1) = (level(0), level(1));
    assert_eq!(l0.len(), 1, "level 0 links t1's node alone");
    assert_ne!(l0[0], chase, "t1's node is a new one");
    assert_eq!(l1, l0, "level 1 links t1's node alone, not the removed one");
    let mut h = sp.handle().unwrap();
    assert!(l.contains(&mut h, 10).unwrap());
}
