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
//! Not covered: more than three threads (a writer that tries twice stands
//! in for a third writer), and the lock inside Redo-PTM (the
//! crash and concurrency tests of `redo_*.rs` exercise that).

#![cfg(perdure_loom)]

use perdure_pm::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use perdure_pm::sync::{thread, Arc};
use perdure_ptm::StrongTryRwLock;

#[path = "../../perdure-pm/tests/support/loom_model.rs"]
mod loom_model;

fn model<F: Fn() + Sync + Send + 'static>(name: &str, f: F) {
    // LOOM_MAX_PREEMPTIONS unset: 3 normally, 4 for DEPTH=deep.
    model_bounded(name, 4, f)
}

/// [`model`] with bound `deep` at DEPTH=deep (3 otherwise).
fn model_bounded<F: Fn() + Sync + Send + 'static>(name: &str, deep: usize, f: F) {
    let bound = loom_model::Preemptions::Default { normal: 3, deep };
    loom_model::check(
        &format!("loom:ptm/{name}"),
        bound,
        None,
        "mutual exclusion, no spurious failure, no leaked state",
        f,
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

/// A thread that tries the lock exclusively and, if it got it, checks it is
/// alone inside, then unlocks; it returns whether the try succeeded.
fn try_writer(l: Arc<StrongTryRwLock>, i: Arc<Inside>) -> thread::JoinHandle<bool> {
    thread::spawn(move || {
        let ok = l.exclusive_try_lock();
        if ok {
            i.writer(|| ());
            l.exclusive_unlock();
        }
        ok
    })
}

/// A thread that tries the lock shared as `tid` and, if it got it, checks
/// no writer is inside, then unlocks; it returns whether the try succeeded.
/// With `after`, a try that starts once the flag is set must succeed (the
/// message says why).
fn try_reader(
    l: Arc<StrongTryRwLock>,
    i: Arc<Inside>,
    tid: usize,
    after: Option<(Arc<AtomicBool>, &'static str)>,
) -> thread::JoinHandle<bool> {
    thread::spawn(move || {
        let flag_set = after.as_ref().map(|(f, why)| (f.load(SeqCst), *why));
        let ok = l.shared_try_lock(tid);
        if let Some((set, why)) = flag_set {
            assert!(ok || !set, "{why}");
        }
        if ok {
            i.reader();
            l.shared_unlock(tid);
        }
        ok
    })
}

/// A writer holding a lock of `threads` lets go of it with `release`, then
/// sets a flag; meanwhile `meanwhile` (given the lock and the flag) may
/// spawn another thread, and a reader `reader_tid` tries the lock, which
/// must succeed if the flag was set when it started (else `why`). Returns
/// the lock and what `meanwhile` returned once writer and reader joined.
fn a_reader_races_a_release<R>(
    threads: usize,
    reader_tid: usize,
    release: fn(&StrongTryRwLock),
    why: &'static str,
    meanwhile: impl FnOnce(&Arc<StrongTryRwLock>, &Arc<AtomicBool>) -> R,
) -> (Arc<StrongTryRwLock>, R) {
    let lock = Arc::new(StrongTryRwLock::new(threads));
    let inside = Arc::new(Inside::default());
    let released = Arc::new(AtomicBool::new(false));
    assert!(lock.exclusive_try_lock());
    inside.writers.store(1, SeqCst);
    let (l, i, rel) = (lock.clone(), inside.clone(), released.clone());
    let writer = thread::spawn(move || {
        i.writers.store(0, SeqCst);
        release(&l);
        rel.store(true, SeqCst);
    });
    let other = meanwhile(&lock, &released);
    let after = Some((released.clone(), why));
    let reader = try_reader(lock.clone(), inside.clone(), reader_tid, after);
    writer.join().unwrap();
    reader.join().unwrap();
    (lock, other)
}

/// `writers` writers and then a reader (the last thread id) try a free
/// lock at once; returns the lock and whether each try succeeded, the
/// reader's last.
fn writers_and_a_reader_try(writers: usize) -> (Arc<StrongTryRwLock>, Vec<bool>) {
    let lock = Arc::new(StrongTryRwLock::new(writers + 1));
    let inside = Arc::new(Inside::default());
    let mut hs: Vec<_> = (0..writers)
        .map(|_| try_writer(lock.clone(), inside.clone()))
        .collect();
    hs.push(try_reader(lock.clone(), inside.clone(), writers, None));
    let oks = hs.into_iter().map(|h| h.join().unwrap()).collect();
    (lock, oks)
}

#[test]
fn a_writer_and_a_reader() {
    model("rwlock-writer-reader", || {
        let (lock, oks) = writers_and_a_reader_try(1);
        assert!(
            oks.iter().any(|&x| x),
            "both tries failed: one of them was spurious"
        );
        assert_free(&lock);
    });
}

#[test]
fn two_writers_and_a_reader() {
    model("rwlock-two-writers-reader", || {
        let (lock, oks) = writers_and_a_reader_try(2);
        assert!(oks.iter().any(|&x| x), "all three tries failed");
        assert_free(&lock);
    });
}

/// A writer's attempt renewed twice behind its back: writer A announces
/// `HLOCK(s)` and scans; writer B takes and releases the lock, then
/// announces again just as the reader enters, and fails on the reader,
/// leaving `HLOCK(s + 2)`. A's last CAS expects `HLOCK(s)`: only the
/// sequence number tells the two attempts apart (a sequence kept to its
/// low bit would let A in beside the reader). Needs three preemptions; 3
/// at DEPTH=deep too (181k interleavings at 3).
#[test]
fn a_writer_renewed_twice_and_a_reader() {
    model_bounded("rwlock-renewed-twice", 3, || {
        let lock = Arc::new(StrongTryRwLock::new(3));
        let inside = Arc::new(Inside::default());
        let a = try_writer(lock.clone(), inside.clone());
        let (l, i) = (lock.clone(), inside.clone());
        let b = thread::spawn(move || {
            let first = l.exclusive_try_lock();
            if first {
                i.writer(|| ());
                l.exclusive_unlock();
            }
            let second = l.exclusive_try_lock();
            if second {
                i.writer(|| ());
                l.exclusive_unlock();
            }
            first || second
        });
        let r = try_reader(lock.clone(), inside.clone(), 2, None);
        let oks = [a.join().unwrap(), b.join().unwrap(), r.join().unwrap()];
        assert!(oks.iter().any(|&x| x), "every try failed");
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
        let (lock, next_winner) = a_reader_races_a_release(
            3,
            2,
            StrongTryRwLock::downgrade,
            "a reader failed after the writer had downgraded",
            |lock, downgraded| {
                let (l, d) = (lock.clone(), downgraded.clone());
                thread::spawn(move || {
                    if d.load(SeqCst) {
                        l.downgrade_unlock();
                        true
                    } else {
                        false
                    }
                })
            },
        );
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
        let (lock, ()) = a_reader_races_a_release(
            2,
            1,
            StrongTryRwLock::exclusive_unlock,
            "a reader failed after the writer had left",
            |_, _| (),
        );
        assert_free(&lock);
    });
}

/// A writer's attempt abandoned beside a reader is reported as such: after
/// a writer and a reader tried a free lock and left, the lock is free or
/// holds the writer's `HLOCK` (it announced, then saw the reader arrive and
/// gave up), which `state` must call `Trying`, never `Exclusive` or
/// `ReadOnly`. Two preemptions reach the `HLOCK` (the tier's bound).
#[test]
fn an_abandoned_attempt_reads_as_trying() {
    model("rwlock-abandoned-attempt", || {
        let (lock, oks) = writers_and_a_reader_try(1);
        let state = format!("{:?}", lock.state());
        assert!(
            state == "NoLock" || (state == "Trying" && !oks[0]),
            "after both left: {state} ({oks:?}) {lock:?}"
        );
        assert_free(&lock);
    });
}
