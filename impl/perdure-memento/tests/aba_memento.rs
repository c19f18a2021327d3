//! Finding 4 (`specs/memento/README.md`, TLC's `mutants/AbaDirtyWord.cfg`)
//! run on the implementation under a forced schedule: the ABA on the
//! annotated word that the seed's one-word location cannot survive, and
//! the default two-word location does.
//!
//! Thread 1 (the owner) runs `cas(0, 1)`, `cas(1, 0)`, `cas(0, 1)` on one
//! location, each its own root operation: the first and the third write the
//! same annotated word `(p, 1, 1)` in the one-word form. Thread 2 (the
//! helper, PATIENCE 0) runs `cas(0, 1)`. The schedule is forced with the
//! simulator's yield hook, which the helper thread blocks in:
//!
//! 1. the owner's first CAS is cut by a thread crash right after its first
//!    plain CAS (L26), so its annotated word stays in the location;
//! 2. before the owner resumes, the helper's CAS fails on that word, enters
//!    LOADHELP, takes t_cur (L4) and stops before its L5 load;
//! 3. the owner resumes its first CAS (⑦), runs its second, and its third
//!    is cut by a thread crash right after its first plain CAS;
//! 4. the helper resumes: its L5 load finds the annotated word of the
//!    owner's *third* CAS. One word: the same word as the first, so it
//!    raises HELP\[p\]\[1\] to its old t_cur (below t_own of the third CAS)
//!    and cleans the location; the owner's recovery of the third CAS finds
//!    no help newer than t_own (⑧), re-executes and reports `Err` for a CAS
//!    whose effect is in the location. Two words: the nonce differs, the
//!    helper starts again from L4 with a fresh t_cur, and recovery sees the
//!    help;
//! 5. the owner reads the location.
//!
//! The five operations are checked as a `register` history. Two rows: the
//! two-word location passes (`explore:memento/cas-aba-forced`), and the
//! one-word location, as a mutant of it, must fail
//! (`mutant:memento/cas-aba-one-word`).

use perdure_check::explore::check_history;
use perdure_harness::report::{print_row, MutantTrial};
use perdure_memento::{
    quiet_thread_crashes, CasForm, CasMmt, ClockKind, Config, DetectableCasAtomic, Runtime,
    UniqueCasAtomic,
};
use perdure_pm::{Pool, Sim, SimOptions};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::time::Instant;

const BASE: u64 = 4096;

/// The helper stops before this access of its second root operation (the
/// first, a LOAD, takes it out of the recovery mode every thread starts in,
/// and leaves its status in the handle): its first plain CAS (which fails),
/// then LOADHELP's L5 load, after L4's t_cur.
const HELPER_STOP_AT: u64 = 2;

static HELPER_READY: AtomicBool = AtomicBool::new(false);
static OWNER_CUT: AtomicBool = AtomicBool::new(false);
static HELPER_PAUSED: AtomicBool = AtomicBool::new(false);
static HELPER_RESUME: AtomicBool = AtomicBool::new(false);
static HELPER_DONE: AtomicBool = AtomicBool::new(false);
static HELPER_RESULT: AtomicU64 = AtomicU64::new(u64::MAX);

thread_local! {
    /// Accesses of the helper's root operation so far (`None`: not the helper).
    static HELPER_ACCESSES: Cell<Option<u64>> = const { Cell::new(None) };
}

/// The simulator's yield hook: blocks the helper before its access
/// `HELPER_STOP_AT` until the owner lets it go.
fn hook() {
    HELPER_ACCESSES.with(|c| {
        if let Some(n) = c.get() {
            c.set(Some(n + 1));
            if n + 1 == HELPER_STOP_AT {
                HELPER_PAUSED.store(true, SeqCst);
                while !HELPER_RESUME.load(SeqCst) {
                    std::thread::yield_now();
                }
            }
        }
    });
}

fn wait_for(flag: &AtomicBool, what: &str) -> Result<(), String> {
    let start = Instant::now();
    while !flag.load(SeqCst) {
        if start.elapsed().as_secs() > 30 {
            return Err(format!("the forced schedule did not happen: {what}"));
        }
        std::thread::yield_now();
    }
    Ok(())
}

/// The forced run on the location `make(off)` builds: `Ok` with what
/// happened if the history is linearizable, else `Err` with it.
fn forced_run<F: CasForm>(make: fn(u64) -> DetectableCasAtomic<F>) -> Result<String, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    for f in [
        &HELPER_READY,
        &OWNER_CUT,
        &HELPER_PAUSED,
        &HELPER_RESUME,
        &HELPER_DONE,
    ] {
        f.store(false, SeqCst);
    }
    let sim = Sim::new(SimOptions::default());
    sim.set_yield_hook(hook);
    let pool = Pool::volatile("aba", 1 << 22, sim).map_err(|x| e(&x))?;
    let cfg = Config {
        threads: 2,
        heap_bytes: 1 << 20,
        clock: ClockKind::Counter,
    };
    let mut rt = Runtime::<Sim, CasMmt>::create(&pool, BASE, &cfg).map_err(|x| e(&x))?;
    rt.set_patience(0);
    let rt = &rt;
    let mut h1 = rt.handle(1).map_err(|x| e(&x))?;
    let mut h2 = rt.handle(2).map_err(|x| e(&x))?;
    let loc = make(h1.alloc(64).map_err(|x| e(&x))?);
    loc.init(&pool, 0);
    pool.pfence();
    std::thread::scope(|s| {
        let helper = s.spawn(move || {
            h2.run_root(|h, _, _| loc.load(h));
            HELPER_ACCESSES.with(|c| c.set(Some(0)));
            HELPER_READY.store(true, SeqCst);
            // Its CAS starts once the owner's first CAS is cut after L26.
            while !OWNER_CUT.load(SeqCst) && !HELPER_RESUME.load(SeqCst) {
                std::thread::yield_now();
            }
            let done = h2.run_root(|h, m, _| u64::from(loc.cas(0, 1, h, m).is_ok()));
            HELPER_ACCESSES.with(|c| c.set(None));
            HELPER_RESULT.store(done.result, SeqCst);
            HELPER_DONE.store(true, SeqCst);
        });
        let mut run = || -> Result<String, String> {
            // 1–2: the first CAS, cut after L26; the helper runs to its L5.
            wait_for(&HELPER_READY, "the helper's first root operation")?;
            h1.crash_after(Some(0));
            let mut attempts = 0;
            let mut paused = Ok(());
            let first = h1.run_root(|h, m, _| {
                attempts += 1;
                if attempts == 2 {
                    OWNER_CUT.store(true, SeqCst);
                    paused = wait_for(&HELPER_PAUSED, "the helper in LOADHELP");
                }
                u64::from(loc.cas(0, 1, h, m).is_ok())
            });
            paused?;
            // 3: the second CAS; the third, cut after L26.
            let second = h1.run_root(|h, m, _| u64::from(loc.cas(1, 0, h, m).is_ok()));
            h1.crash_after(Some(0));
            let (mut attempts, mut helped) = (0, Ok(()));
            let third = h1.run_root(|h, m, _| {
                attempts += 1;
                if attempts == 2 {
                    // 4: the helper finishes before the owner recovers.
                    HELPER_RESUME.store(true, SeqCst);
                    helped = wait_for(&HELPER_DONE, "the helper's return");
                }
                u64::from(loc.cas(0, 1, h, m).is_ok())
            });
            helped?;
            // 5.
            let read = h1.run_root(|h, _, _| loc.load(h)).result;
            let helper = HELPER_RESULT.load(SeqCst) == 1;
            let (first, second, third) = (first.result == 1, second.result == 1, third.result == 1);
            let history = [
                r#"{"type":"header","object":"register"}"#.to_owned(),
                r#"{"type":"invoke","id":1,"thread":0,"op":"cas","args":[0,1]}"#.into(),
                r#"{"type":"invoke","id":9,"thread":1,"op":"cas","args":[0,1]}"#.into(),
                format!(r#"{{"type":"return","id":1,"value":{first}}}"#),
                r#"{"type":"invoke","id":2,"thread":0,"op":"cas","args":[1,0]}"#.into(),
                format!(r#"{{"type":"return","id":2,"value":{second}}}"#),
                r#"{"type":"invoke","id":3,"thread":0,"op":"cas","args":[0,1]}"#.into(),
                format!(r#"{{"type":"return","id":9,"value":{helper}}}"#),
                format!(r#"{{"type":"return","id":3,"value":{third}}}"#),
                r#"{"type":"invoke","id":4,"thread":0,"op":"read","args":[]}"#.into(),
                format!(r#"{{"type":"return","id":4,"value":{read}}}"#),
            ]
            .join("\n");
            let summary = format!(
                "owner cas(0,1) {first}, cas(1,0) {second}, cas(0,1) {third} (cut after L26 twice), \
                 helper cas(0,1) {helper} (stopped at L5 across the owner's CASes), read {read}"
            );
            check_history(&(history.clone() + "\n"))
                .map(|()| summary.clone())
                .map_err(|why| format!("{summary}: {why}\n{history}"))
        };
        let r = run();
        // Never leave the helper blocked, whatever happened.
        HELPER_RESUME.store(true, SeqCst);
        helper
            .join()
            .map_err(|_| "the helper panicked".to_owned())?;
        r
    })
}

#[test]
fn aba_on_the_annotated_word_breaks_only_the_one_word_location() {
    quiet_thread_crashes();
    let started = Instant::now();
    let two = forced_run(DetectableCasAtomic::at);
    print_row(
        "explore:memento/cas-aba-forced",
        if two.is_ok() { "pass" } else { "fail" },
        &format!(
            "two-word location, forced ABA schedule: {}",
            MutantTrial::first_line(&two)
        ),
        Some("tests/aba_memento.rs; TLC: DetectableCAS_TwoWord.cfg"),
        started,
    );
    // SAFETY: none needed for memory safety here (the test frees nothing);
    // the one-word location's precondition is broken on purpose: the owner
    // installs 1 twice while the stalled helper holds the first word.
    let one_word = |off| unsafe { UniqueCasAtomic::at_unique(off) };
    let trial = MutantTrial::run(
        |_: Option<()>| {},
        (),
        || two.clone(),
        || forced_run(one_word),
    );
    let explored = format!(
        "forced ABA schedule; two-word: {}; one-word: {}",
        MutantTrial::first_line(&trial.baseline),
        MutantTrial::first_line(&trial.mutated)
    );
    let mut missed = Vec::new();
    trial.report(
        "mutant:memento/cas-aba-one-word",
        "cas-aba-one-word",
        &explored,
        &mut missed,
    );
    assert!(two.is_ok(), "two-word location: {}", two.unwrap_err());
    assert!(missed.is_empty(), "not caught:\n{}", missed.join("\n"));
}
