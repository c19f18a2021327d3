//! Mutants of the seed's algorithms, each caught by a check (feature
//! `mutants`; `MUTANTS.md` is the record).
//!
//! For every [`Mutant`]: the check that must catch it passes on the code
//! as written, and reports a violation with the mutant switched on.
//!
//! | mutant | check |
//! | --- | --- |
//! | Algorithm 1 L33: no flush of the location | crash explorer, `cas-register-2` |
//! | Algorithm 1 L35: no flush of the memento | crash explorer, `cas-register-2` |
//! | Algorithm 2: LOADHELP does not raise HELP | [`help_across_thread_crash`]: a thread crash after L33, a helper, the resumed CAS, checked as a `register` history; and the crash explorer, `cas-register-2` (a resumed CAS helps another) |
//! | Algorithm 3: INSERT clears the persist bit before flushing | [`insert_behind_unflushed_insert`]: a thread crash after L25, a second insert behind it, every Px86 crash image |
//! | Algorithm 1 L38 as published: the un-annotated word not written back | [`cas_after_stale_annotation`]: three committed CASes, every Px86 crash image, a LOAD that helps an old annotated word, a CAS of its parity |
//! | Clevel-mmt: a new level linked without link-and-persist | crash explorer, `clevel-mmt` |
//!
//! The mutant switch is process-global, so one test runs them all, in
//! turn. Prints a PERDURE-CHECK row per mutant for `make verify`.

use perdure_check::explore::{check_history, explore, CrashPoints, ExploreConfig, SchedulerKind};
use perdure_harness::memento::scenarios;
use perdure_harness::report::MutantTrial;
use perdure_memento::mutant::{self, Mutant};
use perdure_memento::word::{insdel_decode, CasWord};
use perdure_memento::{
    quiet_thread_crashes, CasMmt, ClockKind, Config, DetectableCasAtomic, Handle, InsDelAtomic,
    Memento, NoMmt, Runtime, ThreadCrash,
};
use perdure_pm::sim::VolatileFill;
use perdure_pm::{Pool, Sim, SimOptions};

const BASE: u64 = 4096;

fn config() -> Config {
    Config {
        threads: 2,
        heap_bytes: 1 << 20,
        clock: ClockKind::Counter,
    }
}

/// The 4 MiB simulated pool of a mutant check named `name`.
fn mutant_pool(name: &str) -> Result<Pool<Sim>, String> {
    Pool::volatile(name, 1 << 22, Sim::new(SimOptions::default())).map_err(|e| e.to_string())
}

/// A runtime on `pool` with PATIENCE 0: a LOAD that finds an annotated or
/// unflushed word helps at once, instead of waiting for its owner.
fn impatient_runtime<M: Memento>(pool: &Pool<Sim>) -> Result<Runtime<'_, Sim, M>, String> {
    let mut rt = Runtime::<Sim, M>::create(pool, BASE, &config()).map_err(|e| e.to_string())?;
    rt.set_patience(0);
    Ok(rt)
}

/// The crash explorer on `name` (the configuration of
/// `tests/explore_prims.rs`, fewer schedules): `Err` with the first
/// violation and its history.
fn explorer(name: &str, schedules: usize) -> Result<String, String> {
    let scenario = scenarios::all()
        .into_iter()
        .find(|s| s.name() == name)
        .expect("scenario exists");
    let cfg = ExploreConfig {
        seed: 7,
        schedules,
        scheduler: SchedulerKind::Random,
        crash_points: CrashPoints::All,
        images: 16,
        ..ExploreConfig::default()
    };
    let r = explore(scenario, &cfg);
    // The scheduler leaves its panic hook installed; keep injected thread
    // crashes of later checks quiet again.
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<ThreadCrash>().is_none() {
            prev(info);
        }
    }));
    match r.violations.first() {
        None => Ok(format!(
            "explorer on {name}: {} schedules, {} crash points, {} images checked",
            r.executions, r.crash_points, r.images_checked
        )),
        Some(v) => Err(format!(
            "explorer on {name}: {} (schedule {}, crash event {}, image {})\n{}",
            v.reason, v.schedule, v.crash_event, v.image, v.history
        )),
    }
}

/// Algorithm 2's HELP, checked with a thread crash: thread 1's `cas(0, 5)`
/// crashes right after its first plain CAS is flushed (L26, L33); before
/// it is resumed, thread 2's `read()` finds the annotated word and, with
/// PATIENCE 0, helps it (LOADHELP: HELP, then the second plain CAS); the
/// resumed CAS must then see from HELP (L23–L24, case ⑧) that it took
/// effect. The two operations are checked as a `register` history.
fn help_across_thread_crash() -> Result<String, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let pool = mutant_pool("mutant-help")?;
    let rt = impatient_runtime::<CasMmt>(&pool)?;
    let mut h1 = rt.handle(1).map_err(|x| e(&x))?;
    let mut h2 = rt.handle(2).map_err(|x| e(&x))?;
    let loc = DetectableCasAtomic::at(h1.alloc(64).map_err(|x| e(&x))?);
    loc.init(&pool, 0);
    pool.pfence();
    // Events of the CAS: first plain CAS, pwb, pfence (L33) — crash then.
    h1.crash_after(Some(2));
    let mut attempts = 0;
    let mut read = None;
    let done = h1.run_root(|h, m, _| {
        attempts += 1;
        if attempts == 2 {
            read = Some(loc.load(&mut h2));
        }
        u64::from(loc.cas(0, 5, h, m).is_ok())
    });
    let read = read.ok_or("the CAS was not cut off by the thread crash")?;
    let history = format!(
        concat!(
            "{{\"type\":\"header\",\"object\":\"register\"}}\n",
            "{{\"type\":\"invoke\",\"id\":1,\"thread\":0,\"op\":\"cas\",\"args\":[0,5]}}\n",
            "{{\"type\":\"invoke\",\"id\":2,\"thread\":1,\"op\":\"read\",\"args\":[]}}\n",
            "{{\"type\":\"return\",\"id\":2,\"value\":{}}}\n",
            "{{\"type\":\"return\",\"id\":1,\"value\":{}}}\n",
        ),
        read,
        done.result == 1
    );
    let summary = format!(
        "thread crash after L33 ({} thread crash), helper read {read}, resumed cas(0, 5) returned {}",
        done.thread_crashes,
        done.result == 1
    );
    check_history(&history)
        .map(|()| summary.clone())
        .map_err(|why| format!("{summary}: {why}\n{history}"))
}

/// Algorithm 3's persist bit, checked with a thread crash and every crash
/// image: thread 1's INSERT of block `n1` at the empty location `L`
/// crashes right after its second CAS (mutant: the bit is cleared, L25)
/// or its flush's `pwb` (as written: the bit is still set, L24); thread 2
/// LOADs `L` (as written it waits PATIENCE 0, flushes and clears the bit)
/// and INSERTs `n2` behind `n1`, which completes. Then a full crash: in
/// every crash image Px86 allows, `n2` must be reachable from `L`.
fn insert_behind_unflushed_insert() -> Result<String, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let pool = mutant_pool("mutant-insert")?;
    let rt = impatient_runtime::<NoMmt>(&pool)?;
    let mut h1 = rt.handle(1).map_err(|x| e(&x))?;
    let mut h2 = rt.handle(2).map_err(|x| e(&x))?;
    // L and the blocks: [next, repl], each in its own line.
    let mut block = || h1.alloc(64).map_err(|x| e(&x));
    let (l, n1, n2) = (block()?, block()?, block()?);
    InsDelAtomic::at(l).init(&pool, 0);
    InsDelAtomic::at(n1).init(&pool, 0);
    InsDelAtomic::at(n2).init(&pool, 0);
    pool.pwb(n1, 64);
    pool.pwb(n2, 64);
    pool.pfence();
    // Thread 1: the second event of INSERT, then a thread crash.
    h1.crash_after(Some(1));
    let crashed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = InsDelAtomic::at(l).insert(n1, n1 + 8, &mut h1, never);
    }))
    .is_err();
    if !crashed {
        return Err("thread 1's INSERT was not cut off".into());
    }
    // Thread 2: LOAD L, INSERT n2 at n1.next; it returns.
    let seen = InsDelAtomic::at(l).load(&mut h2);
    if seen != n1 {
        return Err(format!("thread 2 loaded {seen:#x} from L, not n1"));
    }
    InsDelAtomic::at(n1)
        .insert(n2, n2 + 8, &mut h2, never)
        .map_err(|cur| format!("thread 2's INSERT failed (n1.next = {cur:#x})"))?;
    // A full crash now.
    let cp = pool.backend().capture();
    let (_, images) = cp.images(1 << 12, 7);
    let mut checked = 0;
    for (k, image) in images.enumerate() {
        checked += 1;
        let words = cp.materialize(&image, VolatileFill::Zeroed);
        let word = |off: u64| insdel_decode(words[(off / 8) as usize]).1;
        let (at_l, at_n1) = (word(l), word(n1));
        if at_l != n1 || at_n1 != n2 {
            return Err(format!(
                "crash image {k}: L = {at_l:#x}, n1.next = {at_n1:#x}: thread 2's completed \
                 INSERT of n2 = {n2:#x} behind n1 = {n1:#x} is not reachable from L \
                 (thread 2's LOAD returned n1 with the persist bit clear, unflushed)"
            ));
        }
    }
    Ok(format!(
        "{checked} crash images after a thread crash in INSERT and a completed INSERT behind it"
    ))
}

/// Algorithm 1 L38's un-annotated word, checked across a full crash: thread
/// 1 commits `x.cas(0, 1)` (odd parity), `x.cas(1, 2)` (even) and
/// `y.cas(0, 1)` (odd); then a full crash, every Px86 crash image of it.
/// In each, the thread's next operation (in recovery mode, as every first
/// operation after a full crash) LOADs `x` — with PATIENCE 0 it helps
/// whatever annotated word the image kept there, raising HELP\[even\]\[1\] —
/// and runs `y.cas(1, 2)` (even). If that CAS returns OK, `y` must hold 2:
/// with the mutant the image keeps `x.cas(1, 2)`'s annotated word, the
/// help's post-crash timestamp exceeds OWN, and recovery's L23–L24 (⑧)
/// reports the CAS helped although it never ran.
fn cas_after_stale_annotation() -> Result<String, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let pool = mutant_pool("mutant-stale")?;
    let rt = Runtime::<Sim, CasMmt>::create(&pool, BASE, &config()).map_err(|x| e(&x))?;
    let mut h = rt.handle(1).map_err(|x| e(&x))?;
    let x = DetectableCasAtomic::at(h.alloc(64).map_err(|x| e(&x))?);
    let y = DetectableCasAtomic::at(h.alloc(64).map_err(|x| e(&x))?);
    x.init(&pool, 0);
    y.init(&pool, 0);
    pool.pfence();
    for (loc, old, new) in [(x, 0, 1), (x, 1, 2), (y, 0, 1)] {
        let done = h.run_root(|h, m, _| u64::from(loc.cas(old, new, h, m).is_ok()));
        if done.result != 1 {
            return Err(format!("cas({old}, {new}) at {:#x} failed", loc.offset()));
        }
    }
    drop(h);
    let cp = pool.backend().capture();
    let (_, images) = cp.images(1 << 12, 7);
    let (mut checked, mut annotated) = (0, 0);
    for (k, image) in images.enumerate() {
        checked += 1;
        let words = cp.materialize(&image, VolatileFill::Zeroed);
        if CasWord::decode(words[(x.offset() / 8) as usize]).tid != 0 {
            annotated += 1;
        }
        let pool = Pool::volatile_from_words(&words, Sim::default()).map_err(|x| e(&x))?;
        pool.reincarnate();
        let mut rt = Runtime::<Sim, CasMmt>::open_with(&pool, BASE, ClockKind::Counter)
            .map_err(|x| e(&x))?;
        rt.set_patience(0);
        let mut h = rt.handle(1).map_err(|x| e(&x))?;
        let done = h.run_root(|h, m, _| {
            let _ = x.load(h);
            u64::from(y.cas(1, 2, h, m).is_ok())
        });
        let at_y = y.peek(&pool).value;
        if done.result == 1 && at_y != 2 {
            return Err(format!(
                "crash image {k}: x = {:?} after the crash; y.cas(1, 2) returned OK but y \
                 holds {at_y}: the LOAD's help of x's old annotated word was taken for a \
                 help of the CAS (L23–L24, case ⑧)",
                CasWord::decode(words[(x.offset() / 8) as usize])
            ));
        }
    }
    Ok(format!(
        "{checked} crash images after three committed CASes ({annotated} with x annotated), \
         then a LOAD of x and a CAS on y"
    ))
}

/// INSERT's recovery-time `contains`: not needed, no INSERT here recovers.
fn never(_: &mut Handle<'_, '_, Sim, NoMmt>, _: u64) -> bool {
    false
}

/// What catches `m`: its description and the check.
fn check(m: Mutant) -> (&'static str, fn() -> Result<String, String>) {
    match m {
        Mutant::NoFlushLocL33 => ("crash explorer on cas-register-2", || {
            explorer("cas-register-2", 2)
        }),
        Mutant::NoFlushMementoL35 => ("crash explorer on cas-register-2", || {
            explorer("cas-register-2", 2)
        }),
        Mutant::SkipHelpUpdate => (
            "thread-crash injection: a helped CAS resumed, as a register history; and the crash explorer on cas-register-2",
            || match (help_across_thread_crash(), explorer("cas-register-2", 2)) {
                (Ok(a), Ok(b)) => Ok(format!("{a}; {b}")),
                (a, b) => Err(format!(
                    "{}\n{}",
                    a.err().unwrap_or_else(|| "thread-crash check: no violation".into()),
                    b.err().unwrap_or_else(|| "explorer: no violation".into())
                )),
            },
        ),
        Mutant::ClearBeforeFlushL25 => (
            "thread-crash injection in INSERT, a second INSERT behind it, every Px86 crash image",
            insert_behind_unflushed_insert,
        ),
        Mutant::CheckpointNoFence => ("crash explorer on checkpoint-1line", || {
            explorer("checkpoint-1line", 2)
        }),
        Mutant::NoFlushLocL38 => (
            "three committed CASes, a full crash (every Px86 image), a LOAD helping an old annotated word, a CAS of its parity",
            cas_after_stale_annotation,
        ),
        Mutant::ClevelLinkNoPersist => ("crash explorer on clevel-mmt", || {
            explorer("clevel-mmt", 1)
        }),
        // Only Memento's mutants reach here (`Mutant::of("memento")`); one
        // added to the catalogue without a check here fails the test.
        _ => ("no check", || Err(String::new())),
    }
}

#[test]
fn every_mutant_is_caught_by_its_check() {
    let _guard = mutant::lock();
    quiet_thread_crashes();
    let mut missed = Vec::new();
    // The TSO-only mutants have their check in the shuttle build.
    for m in Mutant::of("memento").filter(|m| !mutant::TSO.contains(m)) {
        let (what, run) = check(m);
        let trial = MutantTrial::run(mutant::set, m, run, run);
        let explored = format!(
            "{what}; as written: {}; mutant: {}",
            MutantTrial::first_line(&trial.baseline),
            MutantTrial::first_line(&trial.mutated)
        );
        trial.report(
            &format!("mutant:memento/{}", m.name()),
            m.name(),
            &explored,
            &mut missed,
        );
    }
    assert!(missed.is_empty(), "not caught:\n{}", missed.join("\n"));
}
