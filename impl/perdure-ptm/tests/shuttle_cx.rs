//! shuttle: randomized and PCT schedules (seeded, reproducible) of CX's
//! consensus — the turn queue, the `2N` locks, replays, copies, the
//! `cur_comb` CAS loop, node reclamation — for CX-PTM and CX-PUC, with and
//! without full crashes.
//!
//! Run with `RUSTFLAGS="--cfg perdure_shuttle" cargo test --release -p
//! perdure-ptm --test shuttle_cx`. Without the cfg this file is empty.
//! `PERDURE_SHUTTLE_ITERS` sets the schedules per test (default 1,000;
//! 20,000 with `PERDURE_DEPTH=deep`).
//!
//! Every shared access — the queue's links, tickets, enqueuers and hazard
//! pointers, the locks and heads, and every word of the replicas and of
//! `cur_comb` — is a shuttle scheduling point.
//!
//! * `consensus_*`: three writers, three updates each (a shared total and a
//!   slot per writer), and a reader, with a replay window of one node (every
//!   replica is copied when taken, every retired node disposed of at once)
//!   and `MAX_READ_TRIES` 0 (every read enqueues itself, then tries the
//!   designated replica `N` times before collecting what an updater ran):
//!   no increment lost or doubled, each writer gets its own results, every
//!   read sees whole transactions.
//! * `crash_*`: two threads, two updates each, on the Px86 simulator (write
//!   backs and fences are scheduling points too); after every persistence
//!   event a crash point is captured, and every point's images (all, or a
//!   seeded sample of 32) are checked as null recovery reads them — the
//!   state `cur_comb` designates is whole transactions, between what each
//!   thread had completed and started — and some are reopened and updated.

#![cfg(perdure_shuttle)]

use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::sync::{thread, Arc};
use perdure_pm::{Backend, NoFlush, Pool, Sim};
use perdure_ptm::cx::{Config, CxStats};
use perdure_ptm::front::Front;
use perdure_ptm::{CxPtm, CxPuc, Ptm, Transaction, TxRead};

fn iterations() -> usize {
    let deep = std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "deep");
    std::env::var("PERDURE_SHUTTLE_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if deep { 20_000 } else { 1000 })
}

fn config(threads: usize) -> Config {
    Config {
        threads,
        max_read_tries: 0,
        replay_window: 1,
        dirty_lines_per_replica: 32,
        undo_entries_per_thread: 64,
    }
}

type PtmOf<B> = CxPtm<B>;
type PucOf<B> = CxPuc<B, u64>;

fn make_ptm<B: Backend>(pool: Pool<B>, c: &Config) -> PtmOf<B> {
    CxPtm::create(pool, c).unwrap()
}

fn make_puc<B: Backend>(pool: Pool<B>, c: &Config) -> PucOf<B> {
    CxPuc::create(pool, c, 0).unwrap()
}

/// Word 0 of the record at root 0 is the total, word `1 + t` the slot of
/// the test's thread `t`.
fn bump_slot<T: Transaction>(tx: &T, t: u64) -> u64 {
    let rec = tx.root(0);
    let slot = rec + 8 * (1 + t);
    let n = tx.load(slot) + 1;
    tx.store(slot, n);
    tx.store(rec, tx.load(rec) + 1);
    (t << 32) | n
}

fn setup<P: Front>(p: &P, words: u64) {
    p.handle().unwrap().update_tx(move |tx| {
        let rec = tx.alloc_zeroed(8 * words).unwrap();
        tx.set_root(0, rec);
    });
}

/// What the schedules of a test did, summed over them: closures run for
/// other threads, copies, reads that enqueued themselves, failed CAS tries,
/// nodes disposed of.
/// (One array per test: tests run in parallel.)
type Seen = [std::sync::atomic::AtomicU64; 5];
static SEEN_RANDOM: Seen = [const { std::sync::atomic::AtomicU64::new(0) }; 5];
static SEEN_PCT: Seen = [const { std::sync::atomic::AtomicU64::new(0) }; 5];

fn seen(totals: &Seen) -> String {
    let v: Vec<u64> = totals
        .iter()
        .map(|a| a.swap(0, std::sync::atomic::Ordering::Relaxed))
        .collect();
    format!(
        "; over all schedules {} closures helped, {} copies, {} reads enqueued, {} CAS retries, {} nodes disposed",
        v[0], v[1], v[2], v[3], v[4]
    )
}

fn consensus<P: Ptm + Front + Send + Sync + 'static>(
    p: P,
    stats: fn(&P) -> CxStats,
    totals: &Seen,
) {
    let p = Arc::new(p);
    setup(&*p, 4);
    let writers: Vec<_> = (0..3u64)
        .map(|t| {
            let p = p.clone();
            thread::spawn(move || {
                let h = p.handle().unwrap();
                for i in 1..=3 {
                    let r = h.update_tx(move |tx| bump_slot(tx, t));
                    assert_eq!(r, (t << 32) | i, "thread {t} got {r:#x}");
                }
            })
        })
        .collect();
    let reader = {
        let p = p.clone();
        thread::spawn(move || {
            let h = p.handle().unwrap();
            for _ in 0..2 {
                let ok: bool = h.read_tx(|tx| {
                    let rec = tx.root(0);
                    tx.load(rec) == (1..4).map(|t| tx.load(rec + 8 * t)).sum::<u64>()
                });
                assert!(ok, "a read saw part of a transaction");
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    reader.join().unwrap();
    let total: u64 = p.handle().unwrap().read_tx(|tx| tx.load(tx.root(0)));
    assert_eq!(total, 9);
    let s = stats(&p);
    for (a, v) in totals.iter().zip([
        s.helped,
        s.copies,
        s.reads_published,
        s.cas_retries,
        s.disposed,
    ]) {
        a.fetch_add(v, std::sync::atomic::Ordering::Relaxed);
    }
}

fn consensus_ptm(totals: &Seen) {
    let pool = Pool::volatile("shuttle-cx", 64 << 10, NoFlush).unwrap();
    consensus(make_ptm(pool, &config(4)), |p| p.stats(), totals);
}

fn consensus_puc(totals: &Seen) {
    let pool = Pool::volatile("shuttle-cx", 64 << 10, NoFlush).unwrap();
    consensus(make_puc(pool, &config(4)), |p| p.stats(), totals);
}

fn row(name: &str, what: &str, detail: &str) {
    println!("PERDURE-CHECK {{\"name\":\"shuttle:ptm/{name}\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{what}\",\"detail\":\"{detail}\"}}");
}

const CONSENSUS: &str = "3 writers x 3 updates + 1 reader, replay window 1, MAX_READ_TRIES 0";
const CONSENSUS_DETAIL: &str = "no lost or doubled update, results to the right thread, reads see whole transactions; no crashes injected";

#[test]
fn consensus_random() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_random(|| consensus_ptm(&SEEN_RANDOM), n);
    row(
        "cx-ptm-consensus-random",
        &(format!("{n} random schedules (seed {seed}), {CONSENSUS}") + &seen(&SEEN_RANDOM)),
        CONSENSUS_DETAIL,
    );
    perdure_pm::sync::seeded::check_random(|| consensus_puc(&SEEN_RANDOM), n);
    row(
        "cx-puc-consensus-random",
        &(format!("{n} random schedules (seed {seed}), {CONSENSUS}") + &seen(&SEEN_RANDOM)),
        CONSENSUS_DETAIL,
    );
}

#[test]
fn consensus_pct() {
    let n = iterations();
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_pct(|| consensus_ptm(&SEEN_PCT), n, 3);
    row(
        "cx-ptm-consensus-pct",
        &(format!("{n} PCT schedules (depth 3, seed {seed}), {CONSENSUS}") + &seen(&SEEN_PCT)),
        CONSENSUS_DETAIL,
    );
    perdure_pm::sync::seeded::check_pct(|| consensus_puc(&SEEN_PCT), n, 3);
    row(
        "cx-puc-consensus-pct",
        &(format!("{n} PCT schedules (depth 3, seed {seed}), {CONSENSUS}") + &seen(&SEEN_PCT)),
        CONSENSUS_DETAIL,
    );
}

struct Point {
    cp: CrashPoint,
    started: [u64; 2],
    completed: [u64; 2],
}

/// Crash images checked per crash point (all if there are fewer).
const IMAGES: u64 = 32;

/// What null recovery would find in a crash image, read straight from its
/// words (CX's layout: header at the data offset 4096, `cur_comb` 64 bytes
/// in, replicas from 8192): the record's total and the two slots.
fn inspect(words: &[u64]) -> (u64, [u64; 2]) {
    let w = |off: u64| words[(off / 8) as usize];
    let header = 4096;
    let replica_len = w(header + 24);
    let cur = w(header + 64);
    let replica = header + 4096 + perdure_ptm::sti::idx(cur) as u64 * replica_len;
    let rec = replica + w(replica);
    (w(rec), [w(rec + 8), w(rec + 16)])
}

fn crash<P: Ptm + Front + Send + Sync + 'static>(
    make: fn(Pool<Sim>, &Config) -> P,
    open: fn(Pool<Sim>, &Config) -> P,
    sim_of: fn(&P) -> &Sim,
) {
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
    let pool = Pool::volatile("shuttle-cx-crash", 48 << 10, Sim::default()).unwrap();
    // Write-backs and fences are scheduling points too.
    pool.backend().set_yield_hook(shuttle::thread::yield_now);
    let p = Arc::new(make(pool, &config(2)));
    let sim = sim_of(&p);
    setup(&*p, 3);
    let progress: std::sync::Arc<[[AtomicU64; 2]; 2]> = std::sync::Arc::new(Default::default());
    let points = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    {
        let (points, progress) = (points.clone(), progress.clone());
        sim.set_crash_hook(move |_, view| {
            let completed = [progress[0][1].load(SeqCst), progress[1][1].load(SeqCst)];
            let started = [progress[0][0].load(SeqCst), progress[1][0].load(SeqCst)];
            points.lock().unwrap().push(Point {
                cp: view.capture(),
                started,
                completed,
            });
        });
    }
    let ts: Vec<_> = (0..2usize)
        .map(|t| {
            let (p, progress) = (p.clone(), progress.clone());
            thread::spawn(move || {
                let h = p.handle().unwrap();
                for _ in 0..2 {
                    progress[t][0].fetch_add(1, SeqCst);
                    h.update_tx(move |tx| bump_slot(tx, t as u64));
                    progress[t][1].fetch_add(1, SeqCst);
                }
            })
        })
        .collect();
    for h in ts {
        h.join().unwrap();
    }
    sim.clear_crash_hook();
    let points = std::mem::take(&mut *points.lock().unwrap());
    for (k, pt) in points.iter().enumerate() {
        let (_, images) = pt.cp.images(IMAGES, k as u64);
        for (j, img) in images.enumerate() {
            let words = pt.cp.materialize(&img, VolatileFill::Zeroed);
            let (total, slots) = inspect(&words);
            assert_eq!(
                total,
                slots[0] + slots[1],
                "event {}: part of a transaction",
                pt.cp.event
            );
            for (t, &s) in slots.iter().enumerate() {
                assert!(
                    pt.completed[t] <= s && s <= pt.started[t],
                    "event {}: thread {t} recovered {s} updates, completed {} started {}",
                    pt.cp.event,
                    pt.completed[t],
                    pt.started[t]
                );
            }
            if j == 0 && (k % 32 == 0 || k + 1 == points.len()) {
                let pool = Pool::volatile_from_words(&words, Sim::default()).unwrap();
                let q = open(pool, &config(2));
                let h = q.handle().unwrap();
                let after: u64 = h.update_tx(|tx| bump_slot(tx, 0));
                assert_eq!(after & 0xffff_ffff, slots[0] + 1);
                let total_after: u64 = h.read_tx(|tx| tx.load(tx.root(0)));
                assert_eq!(total_after, total + 1);
            }
        }
    }
}

fn crash_ptm() {
    crash(
        make_ptm::<Sim>,
        |pool, c| CxPtm::open(pool, c).unwrap(),
        |p| p.pool().backend(),
    );
}

fn crash_puc() {
    crash(
        make_puc::<Sim>,
        |pool, c| CxPuc::open(pool, c).unwrap(),
        |p| p.pool().backend(),
    );
}

const CRASH: &str = "2 threads x 2 updates, replay window 1, a crash point after every persistence event, up to 32 Px86 images each";
const CRASH_DETAIL: &str =
    "every completed transaction recovered, none in part; the recovered PTM commits";

#[test]
fn crash_pct() {
    let n = (iterations() / 2).max(20);
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_pct(crash_ptm, n, 3);
    row(
        "cx-ptm-crash-pct",
        &format!("{n} PCT schedules (depth 3, seed {seed}), {CRASH}"),
        CRASH_DETAIL,
    );
    perdure_pm::sync::seeded::check_pct(crash_puc, n, 3);
    row(
        "cx-puc-crash-pct",
        &format!("{n} PCT schedules (depth 3, seed {seed}), {CRASH}"),
        CRASH_DETAIL,
    );
}

#[test]
fn crash_random() {
    let n = (iterations() / 2).max(20);
    let seed = perdure_pm::sync::seeded::seed();
    perdure_pm::sync::seeded::check_random(crash_ptm, n);
    row(
        "cx-ptm-crash-random",
        &format!("{n} random schedules (seed {seed}), {CRASH}"),
        CRASH_DETAIL,
    );
    perdure_pm::sync::seeded::check_random(crash_puc, n);
    row(
        "cx-puc-crash-random",
        &format!("{n} random schedules (seed {seed}), {CRASH}"),
        CRASH_DETAIL,
    );
}
