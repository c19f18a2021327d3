//! shuttle: randomized and PCT schedules (seeded, reproducible) of
//! `recover_field` (Algorithm 6.2) racing Mirror's CAS (Algorithm 4.1) right
//! after a crash, through the `sync` facade; and random schedules of reads
//! of a field's NVMM pair racing Mirror's writes (`nvmm_pairs`).
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-relax --test shuttle_relax` (`make verify` does). Without the cfg
//! this file is empty. `PERDURE_SHUTTLE_ITERS` sets the schedules per
//! scheduler (default 1,000; 20,000 with `PERDURE_DEPTH=deep`).
//!
//! The scenario is Figure 6.2's, made adversarial: after the crash the
//! garbage DRAM pair of a counter field is exactly the pair its first
//! increment will write, `(V_NV + 1, S_NV + 1)`. Two threads each recover
//! the field (through `BitsetAtomic` tracking) and add 1 twice; a third
//! loads it three times. Checked: every thread sees the counter only grow
//! (a delayed recoverer that rolled DRAM back would show an older value),
//! the final value is 4, and Mirror's replicas agree at the end.
//! Not covered: crashes during the race (see `crash_sim.rs`), weak memory
//! (shuttle runs sequentially consistent interleavings). Not shown yet: that
//! these schedules catch the `NoSeqWindow` mutant (a first attempt hit a
//! shuttle reporting failure; the mutant is caught by the deterministic
//! Figure 6.2 test in `mutants_relax.rs`).

#![cfg(perdure_shuttle)]

mod common;

use common::{leaked_pool, shuttle_iterations, tests_calling};
use perdure_pm::sync::seeded;
use perdure_pm::sync::{thread, Arc};
use perdure_relax::{Config, OpenOptions, PAtomic, Space, Tracking};

const SIZE: u64 = 64 << 10;

fn iterations() -> usize {
    shuttle_iterations(1000, 20_000)
}

/// A space of `threads` threads and one root filling the test's pool from
/// `base`.
fn config(base: u64, threads: usize) -> Config {
    Config {
        threads,
        roots: 1,
        heap_bytes: SIZE - base - 4096,
        msb_sequences: false,
    }
}

fn workload() {
    let (pool, base) = leaked_pool("shuttle-relax", SIZE);
    let cfg = config(base, 3);
    let off = {
        let sp = Space::create(pool, base, &cfg, OpenOptions::new(Tracking::Bitset)).unwrap();
        let mut h = sp.handle().unwrap();
        h.alloc_node::<perdure_relax::ds::ListNode>(&[0, 0])
            .unwrap()
    };
    // The crash: a new incarnation with fresh DRAM whose pair for the field
    // is what its first increment will write.
    pool.reincarnate();
    let opts = OpenOptions {
        tracking: Tracking::Bitset,
        dram: perdure_relax::DramInit::Zeroed,
    };
    let sp = Arc::new(Space::open(pool, base, opts).unwrap());
    let ((v, s), _) = sp.replicas(off).unwrap();
    sp.dram().store_pair(off, (v + 1, s + 1));
    let f = PAtomic::at(off);
    let ts: Vec<_> = (0..3)
        .map(|t| {
            let sp = sp.clone();
            thread::spawn(move || {
                let mut last = 0;
                for _ in 0..if t < 2 { 2 } else { 3 } {
                    let seen = if t < 2 {
                        f.fetch_add(&sp, 1).unwrap()
                    } else {
                        f.load(&sp).unwrap()
                    };
                    assert!(
                        seen >= last,
                        "thread {t} saw {seen} after {last}: DRAM rolled back"
                    );
                    last = seen;
                }
            })
        })
        .collect();
    for t in ts {
        t.join().unwrap();
    }
    assert_eq!(f.load(&sp).unwrap(), 4);
    let (nv, d) = sp.replicas(off).unwrap();
    assert_eq!(nv, d);
    // SAFETY-free cleanup: the space (and every thread's clone) is gone
    // before the leaked pool would be reclaimed; the pool itself stays
    // leaked (64 KiB of model memory per schedule).
    drop(sp);
}

/// `read_nvmm` (Algorithm 4.1 L5–L7; `Space::replicas` calls it) returns a
/// pair the NVMM replica held. One thread stores 1, 2 and 3 into a fresh
/// field, one Mirror write each (value `k` at the `k`th sequence after the
/// initial one), while another reads the NVMM pair three times. Under
/// shuttle the pool's 16-byte CAS is emulated by two 8-byte stores, value
/// first, so three 8-byte loads (sequence, value, sequence) can see a new
/// value with its old sequence, the torn pair of
/// `modelcheck/genmc/relax_read_nvmm.c`; every pair read must be
/// `(k, s0 + k)`.
fn nvmm_pairs() {
    let (pool, base) = leaked_pool("shuttle-relax-pairs", SIZE);
    let cfg = config(base, 2);
    let sp = Arc::new(Space::create(pool, base, &cfg, OpenOptions::new(Tracking::Bitset)).unwrap());
    let off = {
        let mut h = sp.handle().unwrap();
        h.alloc_node::<perdure_relax::ds::ListNode>(&[0, 0])
            .unwrap()
    };
    let ((v0, s0), _) = sp.replicas(off).unwrap();
    assert_eq!(v0, 0, "the field's initial value");
    let f = PAtomic::at(off);
    let writer = {
        let sp = sp.clone();
        thread::spawn(move || {
            for k in 1..=3 {
                f.store(&sp, k).unwrap();
            }
        })
    };
    let reader = {
        let sp = sp.clone();
        thread::spawn(move || {
            (0..3)
                .map(|_| sp.replicas(off).unwrap().0)
                .collect::<Vec<_>>()
        })
    };
    writer.join().unwrap();
    for (v, s) in reader.join().unwrap() {
        assert_eq!(
            s,
            s0 + v,
            "NVMM pair ({v}, {s}) read: value {v} was written at sequence {}",
            s0 + v
        );
    }
    assert_eq!(sp.replicas(off).unwrap().0, (3, s0 + 3), "the last write");
    drop(sp);
}

/// [`nvmm_pairs`] under [`iterations`] random schedules.
#[test]
fn nvmm_pairs_are_read_whole() {
    let n = iterations();
    let seed = seeded::seed();
    seeded::check_random(nvmm_pairs, n);
    println!("PERDURE-CHECK {{\"name\":\"shuttle:relax/read-nvmm-pairs\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{n} random schedules (seed {seed}), 3 Mirror stores against 3 reads of the NVMM pair\",\"detail\":\"the 16-byte CAS emulated by two stores; every pair read is one the replica held\"}}");
}

/// Which schedules a test explores.
#[derive(Clone, Copy)]
enum Schedules {
    /// Random schedules.
    Random,
    /// PCT schedules of bug depth 3.
    Pct,
}

/// Runs [`workload`] under [`iterations`] schedules of kind `how` from the
/// run's seed and prints the PERDURE-CHECK row.
fn explore(how: Schedules) {
    let n = iterations();
    let seed = seeded::seed();
    let (name, explored) = match how {
        Schedules::Random => {
            seeded::check_random(workload, n);
            ("random", format!("{n} random schedules (seed {seed})"))
        }
        Schedules::Pct => {
            seeded::check_pct(workload, n, 3);
            ("pct", format!("{n} PCT schedules (depth 3, seed {seed})"))
        }
    };
    println!("PERDURE-CHECK {{\"name\":\"shuttle:relax/recover-race-{name}\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{explored}, 2 recovering incrementers + 1 reader\",\"detail\":\"adversarial garbage DRAM (Figure 6.2); no rollback, final value 4, replicas agree\"}}");
}

tests_calling!(explore => {
    random_schedules_never_roll_a_recovered_field_back(Schedules::Random);
    pct_schedules_never_roll_a_recovered_field_back(Schedules::Pct);
});
