//! What sets RedoTimed-PTM and RedoOpt-PTM apart from Redo-PTM (seed §5),
//! each checked against Redo-PTM on the same workload so that a test
//! cannot pass because nothing differs:
//!
//! * store aggregation: a transaction that stores one word a hundred times
//!   logs it once under RedoOpt (a hundred times under Redo), and other
//!   replicas replaying the merged log see the final values;
//! * merging across the closures of one combined batch, with a panic in
//!   the later closure: its stores alone are undone (also in the replayed
//!   log), on every variant;
//! * flush aggregation by cache line: two lines written alternately are
//!   written back as two lines under RedoOpt, while Redo's line list
//!   overflows into a range;
//! * the full-flush switch: past a tenth of the replica's lines, RedoOpt
//!   writes back the whole used part;
//! * non-temporal copies (counted by the Px86 simulator);
//! * RedoTimed's window: while the first two `Combined` instances are taken,
//!   an update waits (Timed, Opt) instead of using a third (Redo), and
//!   once the window runs out it uses one;
//! * the wrapper types open a pool written by another variant.

use crate::common;

use perdure_pm::stats::thread_counts;
use perdure_pm::{NoFlush, Pool, Sim};
use perdure_ptm::redo::{Config, RedoOptPtm, RedoPtm, RedoTimedPtm, Variant};
use perdure_ptm::{PVar, Ptm, Transaction, TxRead};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

fn ptm_with(threads: usize, v: Variant, config: Config) -> RedoPtm<NoFlush> {
    let pool = Pool::volatile("redo-variants", 1 << 20, NoFlush).unwrap();
    RedoPtm::create(
        pool,
        &Config {
            threads,
            variant: v,
            ..config
        },
    )
    .unwrap()
}

/// Root 0 → `words` zeroed words; returns their offset.
fn setup(p: &RedoPtm<NoFlush>, words: u64) -> u64 {
    p.handle().unwrap().update_tx(move |tx| {
        let a = tx.alloc_zeroed(8 * words).unwrap();
        tx.set_root(0, a);
        a
    })
}

/// Waits until `flag` is set; false after 10 s.
fn wait_for(flag: &AtomicBool) -> bool {
    let start = Instant::now();
    while !flag.load(Ordering::SeqCst) {
        if start.elapsed() > Duration::from_secs(10) {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
    true
}

/// The log entries and write-backs of one update that stores word 0 a
/// hundred times and words 1..=3 once.
fn repeated_stores(v: Variant) -> (u64, u64, RedoPtm<NoFlush>) {
    let p = ptm_with(2, v, Config::small());
    let a = setup(&p, 64);
    let h = p.handle().unwrap();
    // Warm up: the other replica copies once.
    h.update_tx(move |tx| tx.set(PVar::<u64>::at(a + 8 * 4), 1));
    let before = (p.stats(), thread_counts());
    h.update_tx(move |tx| {
        for i in 0..100u64 {
            tx.set(PVar::<u64>::at(a), i);
        }
        for w in 1..=3u64 {
            tx.set(PVar::<u64>::at(a + 8 * w), 10 + w);
        }
    });
    let entries = p.stats().log_entries - before.0.log_entries;
    let pwbs = (thread_counts() - before.1).pwb;
    drop(h);
    (entries, pwbs, p)
}

#[test]
fn redo_opt_merges_repeated_stores() {
    let (redo, redo_pwb, _) = repeated_stores(Variant::Redo);
    let (timed, _, _) = repeated_stores(Variant::Timed);
    let (opt, opt_pwb, p) = repeated_stores(Variant::Opt);
    assert_eq!(redo, 103, "Redo-PTM logs every store");
    assert_eq!(timed, 103, "RedoTimed-PTM logs every store");
    assert_eq!(opt, 4, "RedoOpt-PTM logs each word once");
    assert!(opt_pwb <= redo_pwb, "opt {opt_pwb} pwbs, redo {redo_pwb}");
    // Replicas that replay the merged log hold the final values: a few
    // more updates rotate through the replicas (one thread: 0 and 1).
    let h = p.handle().unwrap();
    let a = h.read_tx(|tx| tx.root(0));
    for k in 0..4u64 {
        h.update_tx(move |tx| tx.set(PVar::<u64>::at(a + 8 * 5), k));
        let seen: Vec<u64> = (0..4u64)
            .map(|w| h.read_tx(move |tx| tx.get(PVar::<u64>::at(a + 8 * w))))
            .collect();
        assert_eq!(seen, vec![99, 11, 12, 13], "after update {k}");
    }
    assert!(p.stats().replays >= 2, "{:?}", p.stats());
    println!("log entries for 103 stores: redo {redo}, timed {timed}, opt {opt}; pwbs redo {redo_pwb}, opt {opt_pwb}");
}

/// Thread A's closure and thread B's run in one batch on thread A (A
/// waits inside its closure until B is simulating, and B waits inside its
/// own until A is done); B's closure rewrites A's word and panics. A's
/// commit must hold A's value, in its replica and in the log that other
/// replicas replay.
fn a_panic_in_a_later_closure_of_the_batch(v: Variant) {
    let p = Arc::new(ptm_with(
        2,
        v,
        Config {
            timed_window: Some(Duration::ZERO),
            ..Config::small()
        },
    ));
    let a = setup(&p, 8);
    let b_simulating = Arc::new(AtomicBool::new(false));
    let a_done = Arc::new(AtomicBool::new(false));
    let b_ran_on_a = Arc::new(AtomicU64::new(0));
    let ha = p.handle().unwrap(); // tid 0: its request comes first in a batch
    let a_thread = thread::current().id();
    let pb = Arc::clone(&p);
    let (bs, ad, br) = (
        Arc::clone(&b_simulating),
        Arc::clone(&a_done),
        Arc::clone(&b_ran_on_a),
    );
    let (to_b, from_main) = std::sync::mpsc::channel::<()>();
    let b = thread::spawn(move || {
        let hb = pb.handle().unwrap(); // tid 1
        to_b_ready(&from_main);
        let b_thread = thread::current().id();
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            hb.update_tx(move |tx| -> u64 {
                let me = thread::current().id();
                if me == b_thread {
                    bs.store(true, Ordering::SeqCst);
                    assert!(wait_for(&ad), "A never finished");
                }
                if me == a_thread {
                    br.fetch_add(1, Ordering::SeqCst);
                }
                tx.set(PVar::<u64>::at(a), 2);
                tx.set(PVar::<u64>::at(a + 8), 7);
                panic!("B's closure panics after storing");
            })
        }))
        .is_err()
    });
    to_b.send(()).unwrap();
    let bsim = Arc::clone(&b_simulating);
    let r = ha.update_tx(move |tx| {
        tx.set(PVar::<u64>::at(a), 1);
        tx.set(PVar::<u64>::at(a + 16), 3);
        if thread::current().id() == a_thread {
            assert!(wait_for(&bsim), "B never started simulating");
        }
        5u64
    });
    a_done.store(true, Ordering::SeqCst);
    assert_eq!(r, 5);
    assert!(b.join().unwrap(), "B's update reports its closure's panic");
    assert_eq!(
        b_ran_on_a.load(Ordering::SeqCst),
        1,
        "{v}: B's closure ran once on thread A, in A's batch"
    );
    let read = |w: u64| ha.read_tx(move |tx| tx.get(PVar::<u64>::at(a + 8 * w)));
    assert_eq!(
        (read(0), read(1), read(2)),
        (1, 0, 3),
        "{v}: after A's commit"
    );
    for k in 0..4u64 {
        ha.update_tx(move |tx| tx.set(PVar::<u64>::at(a + 8 * 3), k));
        assert_eq!(
            (read(0), read(1), read(2)),
            (1, 0, 3),
            "{v}: after replaying, update {k}"
        );
    }
}

fn to_b_ready(rx: &std::sync::mpsc::Receiver<()>) {
    rx.recv().unwrap();
}

common::redo_variant_tests!(a_panic_in_a_later_closure_of_the_batch);

/// Two lines written alternately, 100 times each, with a 16-line dirty
/// list: write-backs of the update.
fn alternating_lines(v: Variant) -> u64 {
    let p = ptm_with(
        2,
        v,
        Config {
            dirty_lines_per_replica: 16,
            ..Config::small()
        },
    );
    let a = setup(&p, 8 * 1024);
    let h = p.handle().unwrap();
    h.update_tx(move |tx| tx.set(PVar::<u64>::at(a), 1));
    let before = thread_counts();
    h.update_tx(move |tx| {
        for i in 0..100u64 {
            tx.set(PVar::<u64>::at(a), i);
            tx.set(PVar::<u64>::at(a + 60_000), i);
        }
    });
    (thread_counts() - before).pwb
}

#[test]
fn redo_opt_writes_back_each_line_once() {
    let redo = alternating_lines(Variant::Redo);
    let opt = alternating_lines(Variant::Opt);
    // Two data lines and cur_comb (plus the replayed lines of the warm-up).
    assert!(opt <= 8, "RedoOpt: {opt} pwbs");
    assert!(
        redo >= 60_000 / 64,
        "Redo's list of 16 lines overflows into the range between them: {redo} pwbs"
    );
    println!("two lines written alternately: pwbs redo {redo}, opt {opt}");
}

/// One store in each of 200 lines of a 16 KiB array, in a replica of
/// about 340 KiB (a tenth is 530 lines; the dirty list is capped at 100).
fn many_lines(v: Variant) -> u64 {
    let p = ptm_with(
        2,
        v,
        Config {
            dirty_lines_per_replica: 100,
            ..Config::small()
        },
    );
    let a = setup(&p, 2048);
    let h = p.handle().unwrap();
    h.update_tx(move |tx| tx.set(PVar::<u64>::at(a), 1));
    h.update_tx(move |tx| tx.set(PVar::<u64>::at(a), 2));
    let before = thread_counts();
    h.update_tx(move |tx| {
        for l in 0..200u64 {
            tx.set(PVar::<u64>::at(a + 64 * l), l);
        }
    });
    (thread_counts() - before).pwb
}

#[test]
fn redo_opt_switches_to_a_full_flush() {
    let redo = many_lines(Variant::Redo);
    let opt = many_lines(Variant::Opt);
    // Redo: the list overflows into the range of the 200 lines (plus the
    // replayed line and cur_comb). RedoOpt: past min(100, 530) distinct
    // lines the whole used part (> 16 KiB: the array and the root table)
    // is written back.
    assert!((200..=210).contains(&redo), "Redo: {redo} pwbs");
    assert!(opt > 16 * 1024 / 64 && opt > redo, "RedoOpt: {opt} pwbs");
    println!("200 lines: pwbs redo {redo}, opt {opt} (full flush)");
}

#[test]
fn redo_opt_copies_with_non_temporal_stores() {
    for v in Variant::ALL {
        let pool = Pool::volatile("redo-variants", 64 << 10, Sim::default()).unwrap();
        let p = RedoPtm::create(pool, &common::config_v(2, v)).unwrap();
        assert_eq!(p.timed_window(), Duration::ZERO, "no copy measured yet");
        let h = p.handle().unwrap();
        for k in 0..3u64 {
            h.update_tx(move |tx| {
                if tx.root(0) == 0 {
                    let c = tx.alloc_zeroed(8).unwrap();
                    tx.set_root(0, c);
                }
                tx.set(PVar::<u64>::at(tx.root(0)), k);
            });
        }
        assert!(p.stats().copies >= 1, "{v}: the first update copies");
        assert!(p.timed_window() > Duration::ZERO, "{v}: a copy was timed");
        let nt = p.pool().backend().counts().ntstores;
        if v == Variant::Opt {
            assert!(nt > 0, "RedoOpt copies with non-temporal stores");
        } else {
            assert_eq!(nt, 0, "{v} copies with plain stores");
        }
    }
}

/// Four replicas (three threads). A (tid 0) holds one of `combs[0..2]`
/// inside its closure until released; the other is designated. B (tid 1)
/// then updates. Returns whether B finished while A was held, B's time,
/// and the per-replica commits and stats at the end.
struct Scenario {
    b_done_while_a_held: bool,
    b_elapsed: Duration,
    commits: Vec<u64>,
    stats: perdure_ptm::redo::RedoStats,
}

fn held_first_two(v: Variant, window: Duration, hold: Duration) -> Scenario {
    let p = Arc::new(ptm_with(
        3,
        v,
        Config {
            timed_window: Some(window),
            ..Config::small()
        },
    ));
    let a = setup(&p, 8);
    // Designate one of combs[0..2] and bring the other up to date.
    {
        let h = p.handle().unwrap();
        for _ in 0..4 {
            h.update_tx(move |tx| {
                tx.set(PVar::<u64>::at(a + 8), tx.get(PVar::<u64>::at(a + 8)) + 1)
            });
        }
    }
    let cur = perdure_ptm::internals::sti::idx(p.cur_comb_word());
    assert!(cur < 2, "one thread keeps to combs[0] and combs[1]: {cur}");
    let before = p.replica_commits();
    let a_in = Arc::new(AtomicBool::new(false));
    let release = Arc::new(AtomicBool::new(false));
    let b_done = Arc::new(AtomicBool::new(false));
    let ha = p.handle().unwrap();
    let a_thread: ThreadId = thread::current().id();
    let pb = Arc::clone(&p);
    let (bd, ai) = (Arc::clone(&b_done), Arc::clone(&a_in));
    let b = thread::spawn(move || {
        let hb = pb.handle().unwrap();
        assert!(wait_for(&ai), "A never entered its closure");
        let start = Instant::now();
        hb.update_tx(move |tx| tx.set(PVar::<u64>::at(a + 16), 9));
        let t = start.elapsed();
        bd.store(true, Ordering::SeqCst);
        t
    });
    let (ai_r, rel) = (Arc::clone(&a_in), Arc::clone(&release));
    let ai = Arc::clone(&a_in);
    let main = thread::spawn(move || {
        // Release A `hold` after it entered its closure, or once B is done
        // (whichever is first).
        assert!(wait_for(&ai_r), "A never entered its closure");
        let start = Instant::now();
        while start.elapsed() < hold && !b_done.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(1));
        }
        let done = b_done.load(Ordering::SeqCst);
        rel.store(true, Ordering::SeqCst);
        done
    });
    ha.update_tx(move |tx| {
        tx.set(PVar::<u64>::at(a), 1);
        if thread::current().id() == a_thread {
            ai.store(true, Ordering::SeqCst);
            assert!(wait_for(&release), "never released");
        }
    });
    let b_done_while_a_held = main.join().unwrap();
    let b_elapsed = b.join().unwrap();
    let read = |w: u64| ha.read_tx(move |tx| tx.get(PVar::<u64>::at(a + 8 * w)));
    let got = (read(0), read(2));
    assert_eq!(got, (1, 9), "{v}: both updates committed");
    let after = p.replica_commits();
    Scenario {
        b_done_while_a_held,
        b_elapsed,
        commits: after.iter().zip(&before).map(|(x, y)| x - y).collect(),
        stats: p.stats(),
    }
}

#[test]
fn redo_uses_a_third_replica_while_the_first_two_are_taken() {
    let s = held_first_two(
        Variant::Redo,
        Duration::from_secs(3600),
        Duration::from_secs(10),
    );
    assert!(
        s.b_done_while_a_held,
        "Redo-PTM does not wait for combs[0..2]"
    );
    assert!(s.commits[2] + s.commits[3] >= 1, "{:?}", s.commits);
    assert_eq!(s.stats.backoffs, 0);
}

fn timed_waits(v: Variant) {
    let hold = Duration::from_millis(300);
    let s = held_first_two(v, Duration::from_secs(3600), hold);
    assert!(!s.b_done_while_a_held, "{v}: B waited for combs[0..2]");
    assert!(s.b_elapsed >= hold / 2, "{v}: B took {:?}", s.b_elapsed);
    assert_eq!(
        s.commits[2] + s.commits[3],
        0,
        "{v}: within the window only combs[0] and combs[1] are designated: {:?}",
        s.commits
    );
    assert!(s.stats.backoffs > 0, "{v}: {:?}", s.stats);
    assert_eq!(s.stats.timed_fallbacks, 0, "{v}: {:?}", s.stats);
}

#[test]
fn redo_timed_and_opt_wait_for_the_first_two_replicas() {
    timed_waits(Variant::Timed);
    timed_waits(Variant::Opt);
}

fn window_runs_out(v: Variant) {
    let window = Duration::from_millis(200);
    let s = held_first_two(v, window, Duration::from_secs(10));
    assert!(
        s.b_done_while_a_held,
        "{v}: after the window B uses any replica"
    );
    assert!(s.b_elapsed >= window, "{v}: B took {:?}", s.b_elapsed);
    assert!(s.commits[2] + s.commits[3] >= 1, "{v}: {:?}", s.commits);
    assert!(s.stats.timed_fallbacks >= 1, "{v}: {:?}", s.stats);
}

#[test]
fn redo_timed_and_opt_windows_run_out() {
    window_runs_out(Variant::Timed);
    window_runs_out(Variant::Opt);
}

#[test]
fn the_wrappers_share_the_pool_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("variants.pool");
    let config = Config {
        threads: 2,
        ..Config::small()
    };
    {
        let pool: Pool<perdure_pm::Msync> = Pool::create(&path, "redo-test", 1 << 20).unwrap();
        let p = RedoOptPtm::create(pool, &config).unwrap();
        assert_eq!(p.variant(), Variant::Opt);
        let v: u64 = Ptm::update_tx(&p, |tx| {
            let c = tx.alloc_zeroed(8).unwrap();
            tx.set_root(0, c);
            tx.set(PVar::<u64>::at(c), 41);
            41u64
        })
        .unwrap();
        assert_eq!(v, 41);
    }
    {
        let pool: Pool<perdure_pm::Msync> = Pool::open(&path, "redo-test").unwrap();
        let p = RedoTimedPtm::open(pool, &config).unwrap();
        assert_eq!(p.variant(), Variant::Timed);
        let v: u64 = Ptm::update_tx(&p, |tx| {
            let c = PVar::<u64>::at(tx.root(0));
            tx.set(c, tx.get(c) + 1);
            tx.get(c)
        })
        .unwrap();
        assert_eq!(v, 42);
    }
    let pool: Pool<perdure_pm::Msync> = Pool::open(&path, "redo-test").unwrap();
    let p = RedoPtm::open(pool, &config).unwrap();
    assert_eq!(p.variant(), Variant::Redo);
    let v: u64 = p.read_tx(|tx| tx.get(PVar::<u64>::at(tx.root(0)))).unwrap();
    assert_eq!(v, 42);
}

#[test]
fn the_default_footprints_stay_under_64_mb() {
    for v in Variant::ALL {
        let c = Config {
            variant: v,
            ..Config::default()
        };
        let bytes = c.volatile_bytes();
        println!(
            "{v}: default volatile footprint {:.1} MB",
            bytes as f64 / 1e6
        );
        assert!(bytes < 64 << 20, "{v}: {bytes} bytes");
        if v == Variant::Opt {
            let redo = Config::default().volatile_bytes();
            assert!(bytes > redo, "RedoOpt's hash sets are counted");
        }
    }
}
