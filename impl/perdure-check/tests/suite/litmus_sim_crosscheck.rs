//! The differential test of `Sim` against the Px86 litmus engine: every test
//! of `modelcheck/litmus/` also runs as a small program on a `Sim` pool under
//! [`SimModel::Px86`], its threads as shuttle tasks (exhaustive DFS over the
//! scheduling points) with several seeded drain policies, a crash point
//! captured after every persistence event and after every load, and every
//! crash image Px86 allows there enumerated. The outcomes over the test's
//! keys (persisted locations, registers written before the crash) must be a
//! subset of the engine's — an outcome only `Sim` reaches would make `Sim`
//! unsound, and an unsound `Sim` passes every construction — and equal to
//! them for every test whose instructions `Sim` models exactly.
//!
//! Where `Sim` is not exact, by design: a non-temporal store takes effect at
//! the earliest moment the rules allow (the engine also delays it), so tests
//! with `ntstore` may reach fewer outcomes; they are checked for soundness
//! only and counted apart. Every test also runs under [`SimModel::Sc`], whose
//! outcomes must be the engine's too (a subset: no store buffers). Row
//! `litmus:sim-crosscheck`.
//!
//! Instruction mapping: `store` → a `Release` store (a plain `mov`), `load` →
//! an `Acquire` load, `clwb`/`clflushopt` → `Pool::pwb`, `sfence` →
//! `Pool::pfence`, `mfence` → `Sim::mfence`, `clflush` → `Sim::clflush`,
//! `cas`/`xchg`/`faa` → the word's locked RMWs, `ntstore` → `ntstore`; the
//! simulator completes write-backs at locked RMWs, as Px86 does.

use perdure_check::litmus::{parse_file, run, Instr, Key, Test, Value};
use perdure_pm::sim::{CrashPoint, SimModel, VolatileFill};
use perdure_pm::{NoFlush, Pool, Sim, SimOptions};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

const CHECK: &str = "litmus:sim-crosscheck";
/// Drain policies per test: (percent, seed).
const POLICIES: [(u8, u64); 6] = [(0, 1), (10, 2), (30, 3), (50, 4), (90, 5), (100, 6)];
/// Cap on DFS schedules per policy (the suite's programs are far smaller).
const MAX_SCHEDULES: usize = 20_000;

type Outcome = Vec<Option<Value>>;
type Regs = Vec<Vec<Option<Value>>>;

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../modelcheck/litmus")
}

fn thread_id() -> usize {
    shuttle::current::try_get_current_task().map_or(usize::MAX, usize::from)
}

/// Where location `l` lives: line `line_of[l]` of its own 64 bytes, at its
/// slot in that line.
fn offset(test: &Test, base: u64, l: usize) -> u64 {
    let line = test.line_of[l];
    let slot = test.lines[line].iter().position(|&x| x == l).unwrap_or(0);
    base + 64 * line as u64 + 8 * slot as u64
}

/// The keys' values in crash image `words` with registers `regs`.
fn outcome(test: &Test, keys: &[Key], base: u64, words: &[u64], regs: &Regs) -> Outcome {
    keys.iter()
        .map(|k| match *k {
            Key::Loc(l) => Some(words[(offset(test, base, l) / 8) as usize] as Value),
            Key::Reg { thread, reg } => regs[thread][reg],
        })
        .collect()
}

/// Every outcome `Sim` reaches on `test` over `keys`, with the number of
/// schedules and crash images explored.
fn sim_outcomes(
    test: &Arc<Test>,
    keys: &Arc<Vec<Key>>,
    model: SimModel,
) -> (BTreeSet<Outcome>, u64, u64) {
    let found: Arc<Mutex<BTreeSet<Outcome>>> = Arc::default();
    let counts: Arc<Mutex<(u64, u64)>> = Arc::default();
    for (percent, seed) in POLICIES {
        // One initial pool image: every location at its init value, persisted.
        let scratch = Pool::volatile("litmus", 64 << 10, NoFlush).expect("a volatile pool");
        let base = scratch.data_offset();
        for l in 0..test.locations.len() {
            let w = scratch.word(offset(test, base, l)).expect("in the pool");
            w.store(test.init[l] as u64, Ordering::Relaxed);
        }
        let initial = scratch.snapshot_words();
        let run_counter = Arc::new(Mutex::new(0u64));
        let (test, keys, found, counts) =
            (test.clone(), keys.clone(), found.clone(), counts.clone());
        let body = move || {
            let n = {
                let mut c = run_counter.lock().unwrap();
                *c += 1;
                *c
            };
            let options = SimOptions {
                model,
                rmw_completes_flushes: true,
                drain_percent: percent,
                drain_seed: seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                thread_id: Some(thread_id),
                ..SimOptions::default()
            };
            let pool = Arc::new(
                Pool::volatile_from_words(&initial, Sim::new(options))
                    .expect("the image is a pool"),
            );
            let sim = pool.backend();
            sim.set_yield_hook(shuttle::thread::yield_now);
            let regs: Arc<Mutex<Regs>> = Arc::new(Mutex::new(
                test.threads
                    .iter()
                    .map(|t| vec![None; t.registers.len()])
                    .collect(),
            ));
            let points: Arc<Mutex<Vec<(CrashPoint, Regs)>>> = Arc::default();
            points
                .lock()
                .unwrap()
                .push((sim.capture(), regs.lock().unwrap().clone()));
            {
                let (points, regs) = (points.clone(), regs.clone());
                sim.set_crash_hook(move |_, view| {
                    let r = regs.lock().unwrap().clone();
                    points.lock().unwrap().push((view.capture(), r));
                });
            }
            let handles: Vec<_> = (0..test.threads.len())
                .map(|t| {
                    let (test, pool, regs, points) =
                        (test.clone(), pool.clone(), regs.clone(), points.clone());
                    shuttle::thread::spawn(move || {
                        for instr in &test.threads[t].instrs {
                            run_instr(&test, &pool, base, t, *instr, &regs, &points);
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().expect("a litmus thread panicked");
            }
            // The program is over: every buffer drains (each leaving a
            // crash point) before the last one.
            sim.drain_all();
            sim.clear_crash_hook();
            points
                .lock()
                .unwrap()
                .push((sim.capture(), regs.lock().unwrap().clone()));
            let mut out = found.lock().unwrap();
            let mut c = counts.lock().unwrap();
            c.0 += 1;
            for (cp, r) in points.lock().unwrap().iter() {
                let (_, images) = cp.images(u64::MAX, 0);
                for image in images {
                    c.1 += 1;
                    let words = cp.materialize(&image, VolatileFill::Zeroed);
                    out.insert(outcome(&test, &keys, base, &words, r));
                }
            }
        };
        let mut config = shuttle::Config::new();
        config.max_steps = shuttle::MaxSteps::FailAfter(100_000);
        shuttle::Runner::new(
            shuttle::scheduler::DfsScheduler::new(Some(MAX_SCHEDULES), false),
            config,
        )
        .run(body);
    }
    let found = std::mem::take(&mut *found.lock().unwrap());
    let (schedules, images) = *counts.lock().unwrap();
    (found, schedules, images)
}

/// Thread `t` executes `instr`; a load records its register and captures a
/// crash point (a register changed, persistent memory did not).
fn run_instr(
    test: &Test,
    pool: &Pool<Sim>,
    base: u64,
    t: usize,
    instr: Instr,
    regs: &Mutex<Regs>,
    points: &Mutex<Vec<(CrashPoint, Regs)>>,
) {
    let word = |l: usize| pool.word(offset(test, base, l)).expect("in the pool");
    let off = |l: usize| offset(test, base, l);
    let set = |reg: usize, v: Value| {
        let mut r = regs.lock().unwrap();
        r[t][reg] = Some(v);
        let snapshot = r.clone();
        drop(r);
        points
            .lock()
            .unwrap()
            .push((pool.backend().capture(), snapshot));
    };
    // A locked RMW writes its register in the same step as its write: the
    // crash point its write left (the last one captured: nothing runs
    // between the access and this) has the register too.
    let set_rmw = |reg: usize, v: Value, wrote: bool| {
        if wrote {
            if let Some(last) = points.lock().unwrap().last_mut() {
                last.1[t][reg] = Some(v);
            }
        }
        set(reg, v);
    };
    match instr {
        Instr::Store { loc, val } => word(loc).store(val as u64, Ordering::Release),
        Instr::Load { reg, loc } => {
            let v = word(loc).load(Ordering::Acquire) as Value;
            set(reg, v);
        }
        Instr::Clflush { loc } => pool.backend().clflush(off(loc)),
        Instr::Clflushopt { loc } | Instr::Clwb { loc } => pool.pwb(off(loc), 8),
        Instr::Sfence => pool.pfence(),
        Instr::Mfence => pool.backend().mfence(),
        Instr::Cas { reg, loc, old, new } => {
            let ok = word(loc)
                .compare_exchange(old as u64, new as u64, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
            if let Some(reg) = reg {
                set_rmw(reg, Value::from(ok), ok && old != new);
            }
        }
        Instr::Xchg { reg, loc, val } => {
            let v = word(loc).swap(val as u64, Ordering::SeqCst) as Value;
            set_rmw(reg, v, true);
        }
        Instr::Faa { reg, loc, val } => {
            let v = word(loc).fetch_add(val as u64, Ordering::SeqCst) as Value;
            set_rmw(reg, v, true);
        }
        Instr::Ntstore { loc, val } => word(loc).ntstore(val as u64),
    }
}

#[test]
fn sim_reaches_exactly_the_engines_outcomes() {
    let start = std::time::Instant::now();
    let mut files: Vec<PathBuf> = std::fs::read_dir(suite_dir())
        .expect("modelcheck/litmus exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "litmus"))
        .collect();
    files.sort();
    let (mut equal, mut subset, mut schedules, mut images, mut outcomes) = (0, 0, 0u64, 0u64, 0);
    let mut sc_subset = 0;
    let mut problems = vec![];
    for f in &files {
        let test = match parse_file(f) {
            Ok(t) => Arc::new(t),
            Err(e) => {
                problems.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        let report = run(&test);
        let engine: BTreeSet<Outcome> = report.outcomes.iter().cloned().collect();
        let keys = Arc::new(report.keys.clone());
        let (sim, s, i) = sim_outcomes(&test, &keys, SimModel::Px86);
        // The sequentially consistent model has fewer behaviours, never
        // other ones: its outcomes are the engine's too.
        let (sc, s_sc, i_sc) = sim_outcomes(&test, &keys, SimModel::Sc);
        schedules += s_sc;
        images += i_sc;
        let sc_extra: Vec<_> = sc.difference(&engine).collect();
        if !sc_extra.is_empty() {
            problems.push(format!(
                "{}: Sim under sc reaches outcomes the engine does not over {:?}: {sc_extra:?}",
                test.name, report.keys
            ));
        }
        sc_subset += usize::from(sc.len() < engine.len());
        schedules += s;
        images += i;
        outcomes += sim.len();
        let extra: Vec<_> = sim.difference(&engine).collect();
        let missed: Vec<_> = engine.difference(&sim).collect();
        let has_nt = test
            .threads
            .iter()
            .flat_map(|t| &t.instrs)
            .any(|i| matches!(i, Instr::Ntstore { .. }));
        if !extra.is_empty() {
            problems.push(format!(
                "{}: Sim reaches outcomes the engine does not (Sim unsound) over {:?}: {extra:?}",
                test.name, report.keys
            ));
        } else if !missed.is_empty() && !has_nt {
            problems.push(format!(
                "{}: Sim misses outcomes the engine reaches over {:?}: {missed:?}",
                test.name, report.keys
            ));
        } else if missed.is_empty() {
            equal += 1;
        } else {
            subset += 1;
        }
    }
    let status = if problems.is_empty() { "pass" } else { "fail" };
    let explored = format!(
        "{} tests: under px86 {equal} with the engine's outcomes exactly, {subset} (ntstore) a subset; under sc none outside, {sc_subset} a strict subset; {outcomes} px86 outcomes, {schedules} schedules, {images} crash images on Sim",
        files.len()
    );
    let detail = if problems.is_empty() {
        "no outcome Sim reaches is outside the engine's".to_string()
    } else {
        problems.join("; ")
    };
    println!(
        "PERDURE-CHECK {}",
        serde_json::json!({"name": CHECK, "kind": "litmus", "status": status,
            "explored": explored, "detail": detail, "seconds": start.elapsed().as_secs_f64()})
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
