//! loom: every interleaving (C11 memory model, bounded preemptions) of two
//! and three threads on the strong try reader-writer lock (seed §4,
//! reference \[11\]).
//!
//! Run with `RUSTFLAGS="--cfg perdure_loom" cargo test --release -p
//! perdure-ptm --test loom_rwlock` (`make verify` does). Without the cfg this
//! file is empty.
//!
//! Each test checks, in every explored execution:
//! * mutual exclusion: no reader holds the lock while a writer holds it
//!   exclusively, and no two writers hold it together;
//! * strength (no spurious failure) in the observable form: a try that starts
//!   after the conflicting holder has left succeeds, and of two conflicting
//!   tries at least one succeeds;
//! * nothing leaks: once everyone has unlocked, a writer takes the lock.
//!
//! Not covered: more than three threads, and the lock inside Redo-PTM (the
//! crash and concurrency tests of `redo_*.rs` exercise that).

#![cfg(perdure_loom)]

use perdure_pm::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use perdure_pm::sync::{thread, Arc};
use perdure_ptm::StrongTryRwLock;

fn model<F: Fn() + Sync + Send + 'static>(name: &str, f: F) {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = runs.clone();
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        // LOOM_MAX_PREEMPTIONS unset: 3 normally, 4 for DEPTH=deep.
        let deep = std::env::var("PERDURE_DEPTH").is_ok_and(|d| d == "deep");
        b.preemption_bound = Some(if deep { 4 } else { 3 });
    }
    let bound = b.preemption_bound;
    b.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f()
    });
    let runs = runs.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "PERDURE-CHECK {{\"name\":\"loom:ptm/{name}\",\"kind\":\"loom\",\"status\":\"pass\",\"explored\":\"{runs} interleavings (preemption bound {bound:?})\",\"detail\":\"mutual exclusion, no spurious failure, no leaked state\"}}"
    );
}

/// Who is inside the lock, maintained by the threads of a test.
#[derive(Default)]
struct Inside {
    readers: AtomicUsize,
    writers: AtomicUsize,
}

impl Inside {
    fn writer<R>(&self, f: impl FnOnce() -> R) -> R {
        assert_eq!(self.writers.fetch_add(1, SeqCst), 0, "two writers inside");
        assert_eq!(self.readers.load(SeqCst), 0, "a writer with readers inside");
        let r = f();
        self.writers.fetch_sub(1, SeqCst);
        r
    }
    fn reader(&self) {
        self.readers.fetch_add(1, SeqCst);
        assert_eq!(
            self.writers.load(SeqCst),
            0,
            "a reader with a writer inside"
        );
        self.readers.fetch_sub(1, SeqCst);
    }
}

fn assert_free(lock: &StrongTryRwLock) {
    let before = lock.state();
    assert!(
        lock.exclusive_try_lock(),
        "the lock leaked a hold: {before:?} {lock:?}"
    );
    lock.exclusive_unlock();
}

#[test]
fn a_writer_and_a_reader() {
    model("rwlock-writer-reader", || {
        let lock = Arc::new(StrongTryRwLock::new(2));
        let inside = Arc::new(Inside::default());
        let (l, i) = (lock.clone(), inside.clone());
        let w = thread::spawn(move || {
            let ok = l.exclusive_try_lock();
            if ok {
                i.writer(|| ());
                l.exclusive_unlock();
            }
            ok
        });
        let (l, i) = (lock.clone(), inside.clone());
        let r = thread::spawn(move || {
            let ok = l.shared_try_lock(1);
            if ok {
                i.reader();
                l.shared_unlock(1);
            }
            ok
        });
        let (w, r) = (w.join().unwrap(), r.join().unwrap());
        assert!(w || r, "both tries failed: one of them was spurious");
        assert_free(&lock);
    });
}

#[test]
fn two_writers_and_a_reader() {
    model("rwlock-two-writers-reader", || {
        let lock = Arc::new(StrongTryRwLock::new(3));
        let inside = Arc::new(Inside::default());
        let writer = |l: Arc<StrongTryRwLock>, i: Arc<Inside>| {
            thread::spawn(move || {
                let ok = l.exclusive_try_lock();
                if ok {
                    i.writer(|| ());
                    l.exclusive_unlock();
                }
                ok
            })
        };
        let w1 = writer(lock.clone(), inside.clone());
        let w2 = writer(lock.clone(), inside.clone());
        let (l, i) = (lock.clone(), inside.clone());
        let r = thread::spawn(move || {
            let ok = l.shared_try_lock(2);
            if ok {
                i.reader();
                l.shared_unlock(2);
            }
            ok
        });
        let oks = [w1.join().unwrap(), w2.join().unwrap(), r.join().unwrap()];
        assert!(oks.iter().any(|&x| x), "all three tries failed");
        assert_free(&lock);
    });
}

#[test]
fn readers_never_fail_each_other() {
    model("rwlock-two-readers", || {
        let lock = Arc::new(StrongTryRwLock::new(2));
        let hs: Vec<_> = (0..2)
            .map(|tid| {
                let l = lock.clone();
                thread::spawn(move || {
                    let ok = l.shared_try_lock(tid);
                    if ok {
                        l.shared_unlock(tid);
                    }
                    ok
                })
            })
            .collect();
        for h in hs {
            assert!(h.join().unwrap(), "a reader failed with no writer around");
        }
        assert_free(&lock);
    });
}

/// Redo-PTM's life cycle of a `Combined`: a writer holds it, downgrades it
/// before its `cur_comb` CAS, and the next winner (another thread) ends the
/// read-only hold; meanwhile a reader tries.
#[test]
fn downgrade_then_another_thread_unlocks() {
    model("rwlock-downgrade-handover", || {
        let lock = Arc::new(StrongTryRwLock::new(3));
        let inside = Arc::new(Inside::default());
        let downgraded = Arc::new(AtomicBool::new(false));
        assert!(lock.exclusive_try_lock());
        inside.writers.store(1, SeqCst);
        let (l, i, d) = (lock.clone(), inside.clone(), downgraded.clone());
        let writer = thread::spawn(move || {
            i.writers.store(0, SeqCst);
            l.downgrade();
            d.store(true, SeqCst);
        });
        let (l, d) = (lock.clone(), downgraded.clone());
        let next_winner = thread::spawn(move || {
            if d.load(SeqCst) {
                l.downgrade_unlock();
                true
            } else {
                false
            }
        });
        let (l, i, d) = (lock.clone(), inside.clone(), downgraded.clone());
        let reader = thread::spawn(move || {
            let after = d.load(SeqCst);
            let ok = l.shared_try_lock(2);
            assert!(
                ok || !after,
                "a reader failed after the writer had downgraded"
            );
            if ok {
                i.reader();
                l.shared_unlock(2);
            }
        });
        writer.join().unwrap();
        reader.join().unwrap();
        if !next_winner.join().unwrap() {
            lock.downgrade_unlock();
        }
        assert_free(&lock);
    });
}

/// A reader racing a writer's exclusive_unlock (whose abort-rollback step
/// confirms readers that arrived during WLOCK).
#[test]
fn a_reader_racing_an_unlock() {
    model("rwlock-unlock-race", || {
        let lock = Arc::new(StrongTryRwLock::new(2));
        let inside = Arc::new(Inside::default());
        let released = Arc::new(AtomicBool::new(false));
        assert!(lock.exclusive_try_lock());
        inside.writers.store(1, SeqCst);
        let (l, i, rel) = (lock.clone(), inside.clone(), released.clone());
        let writer = thread::spawn(move || {
            i.writers.store(0, SeqCst);
            l.exclusive_unlock();
            rel.store(true, SeqCst);
        });
        let (l, i, rel) = (lock.clone(), inside.clone(), released.clone());
        let reader = thread::spawn(move || {
            let after = rel.load(SeqCst);
            let ok = l.shared_try_lock(1);
            assert!(ok || !after, "a reader failed after the writer had left");
            if ok {
                i.reader();
                l.shared_unlock(1);
            }
        });
        writer.join().unwrap();
        reader.join().unwrap();
        assert_free(&lock);
    });
}
