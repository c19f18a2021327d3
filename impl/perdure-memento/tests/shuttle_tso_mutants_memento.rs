//! Memento's TSO-only mutant: correct under sequential consistency, wrong
//! under x86-TSO, caught on the Px86 simulator only.
//!
//! `EbrPinNoFence` makes the pin of the PM-safe reclamation (§6.2; the
//! runtime's `Collector::pin`, at the start of every root operation) a
//! plain store with no fence after it. Its window, on the runtime's own
//! collector:
//!
//! 1. thread A pins the epoch and reads the shared word naming block X;
//!    it holds there (the stand-in for an operation that still uses X);
//! 2. thread B retires X in a critical section and then runs 40 more, each
//!    ending with an unpin that may advance the epoch and free what two
//!    advances allow;
//! 3. A looks at what B freed, then unpins.
//!
//! As written (a `SeqCst` store and a fence), and for the mutant under
//! sequential consistency, B's advances see A pinned: the epoch moves at
//! most once past A's and X stays allocated while A holds it. For the
//! mutant under Px86 the pin is still in A's store buffer (the facade's DRAM
//! atomics share the Px86 buffer: `perdure_pm::sync::with_dram_tso`): B sees
//! A unpinned, the epoch advances twice, and X is freed under A.
//!
//! The check passes when the code as written passes under Px86, the mutant
//! passes under Sc, and the mutant fails under Px86. One row:
//! `mutant:memento/ebr-pin-plain-store-no-fence@tso`. The window (A between
//! its pin and its next locked instruction) is forced: random and PCT
//! schedules would need B's 41 critical sections inside it.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-memento --test shuttle_tso_mutants_memento` (`shuttle:memento`
//! does).

#![cfg(perdure_shuttle)]

use perdure_harness::report::{held_sim, held_window, TsoMutantTrial};
use perdure_memento::mutant::{self, Mutant};
use perdure_memento::{ClockKind, Config, NoMmt, Runtime};
use perdure_pm::sim::SimModel;
use perdure_pm::sync::atomic::{AtomicU64, Ordering};
use perdure_pm::{NoFlush, Pool};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Mutex;

static PAUSED: AtomicBool = AtomicBool::new(false);
static RESUME: AtomicBool = AtomicBool::new(false);

/// The block B retires (any offset: the collector only hands it to `free`).
const X: u64 = 0x4000;

/// The window under `model`, over 3 random schedules: `Ok` if X was not
/// freed while A held it, `Err` saying when it was.
fn window(model: SimModel) -> Result<String, String> {
    held_window(
        model,
        "A held after its pin",
        3,
        1_000_000,
        |why| format!("the run failed: {why}"),
        move || one_run(model),
    )
}

fn one_run(model: SimModel) -> Result<String, String> {
    PAUSED.store(false, SeqCst);
    RESUME.store(false, SeqCst);
    let pool = Pool::volatile("tso-ebr", 1 << 20, NoFlush).expect("pool");
    let base = pool.data_offset().next_multiple_of(4096);
    let cfg = Config {
        threads: 2,
        heap_bytes: 256 << 10,
        clock: ClockKind::Counter,
    };
    let rt = Runtime::<NoFlush, NoMmt>::create(&pool, base, &cfg).expect("runtime");
    let sim = held_sim(model);
    // The shared word naming X (a pointer readers follow).
    let shared = AtomicU64::new(X);
    let freed: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    perdure_pm::sync::with_dram_tso(&sim, || {
        shuttle::thread::scope(|s| {
            let a = s.spawn(|| {
                let c = rt.collector();
                let mut p = c.claim(1).expect("participant 1");
                c.pin(1);
                let held = shared.load(Ordering::Acquire);
                let epoch = c.epoch();
                PAUSED.store(true, SeqCst);
                while !RESUME.load(SeqCst) {
                    shuttle::thread::yield_now();
                }
                let after = c.epoch();
                let gone = freed.lock().unwrap().contains(&held);
                c.unpin(&mut p, |_| {});
                if gone {
                    Err(format!("block {held:#x}, read by A pinned at epoch {epoch}, was freed while A held it (epoch now {after})"))
                } else {
                    Ok(format!("block {held:#x} stayed allocated while A held it (A pinned at epoch {epoch}, epoch now {after})"))
                }
            });
            s.spawn(|| {
                while !PAUSED.load(SeqCst) {
                    shuttle::thread::yield_now();
                }
                let c = rt.collector();
                let mut p = c.claim(2).expect("participant 2");
                let free = |b| freed.lock().unwrap().push(b);
                c.pin(2);
                shared.store(X + 64, Ordering::Release); // X unlinked
                c.retire(&mut p, X);
                c.unpin(&mut p, free);
                for _ in 0..40 {
                    c.pin(2);
                    c.unpin(&mut p, free);
                }
                RESUME.store(true, SeqCst);
            });
            a.join().expect("A")
        })
    })
}

#[test]
fn the_tso_only_mutant_is_caught_under_px86_and_passes_under_sc() {
    let _guard = mutant::lock();
    let m = Mutant::EbrPinNoFence;
    let row = format!("mutant:memento/{}@tso", m.name());
    TsoMutantTrial::check(mutant::set, m, &row, m.name(), window);
}
