//! The PTMs' TSO-only mutant: correct under sequential consistency, wrong
//! under x86-TSO, caught on the Px86 simulator only.
//!
//! `RedoAnnounceRelease` makes Redo-PTM's announcement (Algorithm 3 L4,
//! `announce[tid] = seq`) a plain store instead of an `xchg`. Its window:
//!
//! 1. thread A announces `add(1)` and reads `cur_comb` (its `init`, {2});
//!    the simulator's yield hook holds A right there, before its next
//!    persistent-memory access;
//! 2. thread B runs two `add(2)` updates: each commit's simulation reads
//!    `announce[A]`;
//! 3. A resumes.
//!
//! As written (an `xchg`), and for the mutant under sequential consistency,
//! the announcement is visible at once: B's first commit applies A's update
//! too (B *helps* A), and A, finding two commits since `init`, collects its
//! result. For the mutant under Px86 the announcement is still in A's store
//! buffer while B commits (the facade's DRAM atomics share the Px86 buffer
//! with the pool's: `perdure_pm::sync::with_dram_tso`): B's commits do not
//! apply it, A takes "two transitions since the announcement" for
//! "applied", finds no result, and retries forever — nobody else will
//! commit. shuttle fails the schedule when it exceeds its step budget.
//!
//! The check passes when the code as written passes under Px86 (counter 5,
//! A helped), the mutant passes under Sc (the same), and the mutant fails
//! under Px86. One row: `mutant:ptm/redo-announce-store-release@tso`.
//!
//! The window is a few steps wide, so it is forced (as `tests/mutants_ptm.rs`
//! forces the windows of three crash mutants); the random and PCT schedules
//! of the crash explorer reached it in none of 2,000 schedules of
//! `redo-queue`.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-ptm --test shuttle_tso_mutants_ptm` (`shuttle:ptm` does).

#![cfg(perdure_shuttle)]

use perdure_harness::report::{held_sim, held_window, shuttle_task, TsoMutantTrial};
use perdure_pm::sim::SimModel;
use perdure_pm::sync::{thread, Arc};
use perdure_pm::Pool;
use perdure_ptm::mutant::{self, Mutant};
use perdure_ptm::redo::{Config, RedoPtm, Variant};
use perdure_ptm::{Transaction, TxRead};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

/// The held thread's shuttle task id (`usize::MAX`: nobody held), its
/// persistent-memory accesses since it was armed, and the handshake.
static HELD: AtomicUsize = AtomicUsize::new(usize::MAX);
static ACCESSES: AtomicUsize = AtomicUsize::new(0);
static PAUSED: AtomicBool = AtomicBool::new(false);
static RESUME: AtomicBool = AtomicBool::new(false);

/// The persistent-memory access of A's update it is held before: the
/// first is its `cur_comb` read at {2} (`init`; nothing before it in the
/// update touches the pool), so A is held right after it.
const HOLD_BEFORE_ACCESS: usize = 2;

/// The simulator's yield hook (before every persistent-memory access):
/// holds A before its [`HOLD_BEFORE_ACCESS`]th access until B is done.
fn gate() {
    if shuttle_task() != HELD.load(SeqCst) {
        return;
    }
    if ACCESSES.fetch_add(1, SeqCst) + 1 == HOLD_BEFORE_ACCESS {
        PAUSED.store(true, SeqCst);
        while !RESUME.load(SeqCst) {
            shuttle::thread::yield_now();
        }
    }
}

fn config() -> Config {
    Config {
        threads: 3,
        states_per_thread: 4,
        log_entries_per_thread: 64,
        dirty_lines_per_replica: 32,
        max_read_tries: 2,
        variant: Variant::Redo,
        timed_window: Some(std::time::Duration::ZERO),
    }
}

/// The window under `model`, over 3 random schedules: `Ok` with the final
/// counter and B's helps, `Err` with what went wrong (shuttle's step budget
/// exceeded: A never returned).
fn window(model: SimModel) -> Result<String, String> {
    let r = held_window(
        model,
        "A held after its cur_comb read",
        3,
        300_000,
        |why| {
            if RESUME.load(SeqCst) {
                format!("B committed its two updates and A's update never returned ({why})")
            } else {
                format!("the run failed before B was done ({why})")
            }
        },
        move || one_run(model),
    );
    HELD.store(usize::MAX, SeqCst);
    r
}

fn one_run(model: SimModel) -> Result<String, String> {
    HELD.store(usize::MAX, SeqCst);
    ACCESSES.store(0, SeqCst);
    PAUSED.store(false, SeqCst);
    RESUME.store(false, SeqCst);
    let sim = held_sim(model);
    let pool = Pool::volatile("tso-redo", 64 << 10, sim).expect("pool");
    let p = Arc::new(RedoPtm::create(pool, &config()).expect("create"));
    p.handle().unwrap().update_tx(|tx| {
        let c = tx.alloc_zeroed(8).unwrap();
        tx.set_root(0, c);
    });
    assert!(p.pool().backend().set_yield_hook(gate));
    let r = perdure_pm::sync::with_dram_tso(p.pool().backend(), || {
        let a = {
            let p = p.clone();
            thread::spawn(move || {
                let h = p.handle().unwrap();
                HELD.store(shuttle_task(), SeqCst);
                h.update_tx(|tx| {
                    let c = tx.root(0);
                    tx.store(c, tx.load(c) + 1);
                });
            })
        };
        let b = {
            let p = p.clone();
            thread::spawn(move || {
                let h = p.handle().unwrap();
                while !PAUSED.load(SeqCst) {
                    shuttle::thread::yield_now();
                }
                for _ in 0..2 {
                    h.update_tx(|tx| {
                        let c = tx.root(0);
                        tx.store(c, tx.load(c) + 2);
                    });
                }
                RESUME.store(true, SeqCst);
            })
        };
        b.join().unwrap();
        a.join().unwrap();
        p.handle().unwrap().read_tx(|tx| tx.load(tx.root(0)))
    });
    let helped = p.stats().helped;
    if r == 5 && helped >= 1 {
        Ok(format!(
            "counter {r}, {helped} help(s): B's commit applied A's announced update"
        ))
    } else {
        Err(format!("counter {r} (expected 5), {helped} help(s) (expected at least 1): the window was not reached as intended"))
    }
}

#[test]
fn the_tso_only_mutant_is_caught_under_px86_and_passes_under_sc() {
    let _guard = mutant::lock();
    let m = Mutant::RedoAnnounceRelease;
    let row = format!("mutant:ptm/{}@tso", m.name());
    TsoMutantTrial::check(mutant::set, m, &row, m.name(), window);
}
