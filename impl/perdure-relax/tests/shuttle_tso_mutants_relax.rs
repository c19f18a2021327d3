//! RELAX's TSO-only mutant: correct under sequential consistency, wrong
//! under x86-TSO, caught on the Px86 simulator only.
//!
//! `SpacePinNoFence` makes the pin of the space's reclamation (§6.5,
//! `Handle::critical`) a plain store with no fence after it. Its window:
//!
//! 1. thread A enters a critical section and reads node X (a list node the
//!    space allocated); it holds there;
//! 2. thread B retires X in a critical section and runs four more (eager
//!    reclamation: each end advances the epoch if it can and frees what two
//!    advances allow);
//! 3. A reads the reclamation audit's log: was X freed?
//!
//! As written (a `SeqCst` store and a fence), and for the mutant under
//! sequential consistency, B's advances see A pinned and X waits for A. For
//! the mutant under Px86 the pin is still in A's store buffer (the facade's
//! DRAM atomics share the Px86 buffer: `perdure_pm::sync::with_dram_tso`):
//! B sees A unpinned and X goes back to the heap under A.
//!
//! The check passes when the code as written passes under Px86, the mutant
//! passes under Sc, and the mutant fails under Px86. One row:
//! `mutant:relax/space-pin-plain-store-no-fence@tso`. The window is forced
//! (as `tests/suite/reclaim_epoch.rs` forces its schedule).
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-relax --test shuttle_tso_mutants_relax` (`shuttle:relax` does).

#![cfg(perdure_shuttle)]

use perdure_harness::report::{held_sim, held_window, TsoMutantTrial};
use perdure_pm::sim::SimModel;
use perdure_pm::{NoFlush, Pool};
use perdure_relax::audit::BlockEvent;
use perdure_relax::ds::ListNode;
use perdure_relax::mutant::{self, Mutant};
use perdure_relax::{Config, OpenOptions, Space, Tracking};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

static PAUSED: AtomicBool = AtomicBool::new(false);
static RESUME: AtomicBool = AtomicBool::new(false);

/// The window under `model`, over 3 random schedules: `Ok` if X was not
/// freed while A was in its critical section, `Err` if it was.
fn window(model: SimModel) -> Result<String, String> {
    held_window(
        model,
        "A held in its critical section",
        3,
        1_000_000,
        |why| format!("the run failed: {why}"),
        move || one_run(model),
    )
}

fn one_run(model: SimModel) -> Result<String, String> {
    PAUSED.store(false, SeqCst);
    RESUME.store(false, SeqCst);
    let pool = Pool::volatile("tso-space", 4 << 20, NoFlush).expect("pool");
    let base = pool.data_offset().next_multiple_of(4096);
    let cfg = Config {
        threads: 3,
        roots: 1,
        heap_bytes: 2 << 20,
        msb_sequences: false,
    };
    let sp = Space::create(&pool, base, &cfg, OpenOptions::new(Tracking::Bitset)).expect("space");
    sp.audit_start(true);
    let x = sp
        .handle()
        .unwrap()
        .alloc_node::<ListNode>(&[7, 0])
        .unwrap();
    let sim = held_sim(model);
    perdure_pm::sync::with_dram_tso(&sim, || {
        shuttle::thread::scope(|s| {
            let sp = &sp;
            let a = s.spawn(move || {
                let mut h = sp.handle().unwrap();
                h.critical(|_| {
                    // A holds X (read before B unlinks it).
                    PAUSED.store(true, SeqCst);
                    while !RESUME.load(SeqCst) {
                        shuttle::thread::yield_now();
                    }
                    let freed = sp
                        .audit_events()
                        .iter()
                        .any(|&(ev, b)| b == x && ev == BlockEvent::Free);
                    if freed {
                        Err(format!("node {x:#x} was freed while A, which read it, was still in its critical section"))
                    } else {
                        Ok(format!("node {x:#x} stayed allocated while A was in its critical section"))
                    }
                })
            });
            s.spawn(move || {
                while !PAUSED.load(SeqCst) {
                    shuttle::thread::yield_now();
                }
                let mut h = sp.handle().unwrap();
                h.critical(|h| h.retire(x));
                for _ in 0..4 {
                    h.critical(|_| ());
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
    let m = Mutant::SpacePinNoFence;
    let row = format!("mutant:relax/{}@tso", m.name());
    TsoMutantTrial::check(mutant::set, m, &row, m.name(), window);
}
