//! The strong try reader-writer lock (seed §4, reference \[11\]: Correia and
//! Ramalhete, "Strong trylocks for reader-writer locks", PPoPP 2018).
//!
//! CX and Redo-PTM protect every `Combined` instance (a replica and its
//! metadata) with one of these. What makes it fit a wait-free construction is
//! that every method runs in a bounded number of steps (no loop waits for
//! another thread; [`StrongTryRwLock::exclusive_try_lock`] and
//! [`StrongTryRwLock::shared_try_lock`] are at most a handful of atomic
//! operations plus one scan of the read indicator) and that a try never fails
//! *spuriously*: it fails only if, at some moment during the call, another
//! thread held (or was in the middle of taking) the lock in a conflicting mode.
//! That is what lets the seed count replicas: with `N` threads each holding
//! at most one `Combined` besides the one `cur_comb` designates, a writer
//! scanning `N + 1` instances finds a free one.
//!
//! ## State
//!
//! A writer word `seq · state` (62 + 2 bits) and a read indicator with one
//! padded slot per thread id:
//!
//! | state | meaning | writers | readers |
//! | --- | --- | --- | --- |
//! | `NOLOCK` | free | may take it | may enter |
//! | `HLOCK` | a writer is trying (`seq` names the attempt) | may renew it as their own | entering cancels it (`HLOCK → NOLOCK`) |
//! | `WLOCK` | a writer holds it exclusively | refused | refused (an arrival rolls back) |
//! | `RLOCK` | read-only: a downgraded writer, or the replica `cur_comb` designates | refused | may enter |
//!
//! Transitions: `NOLOCK | HLOCK(seq) → HLOCK(seq+1)` and then
//! `HLOCK(seq+1) → WLOCK` by
//! [`exclusive_try_lock`](StrongTryRwLock::exclusive_try_lock) (a writer
//! renews an attempt another writer left behind rather than taking it over
//! as is: the renewal is its own write, which its fence then orders before
//! its scan of the read indicator);
//! `HLOCK → NOLOCK` by a reader that arrived first; `WLOCK → RLOCK` by
//! [`downgrade`](StrongTryRwLock::downgrade); `RLOCK → NOLOCK` by
//! [`downgrade_unlock`](StrongTryRwLock::downgrade_unlock) (in Redo-PTM this is
//! called by the *next* winner of `cur_comb`, not by the thread that
//! downgraded); `WLOCK | RLOCK → NOLOCK` by
//! [`exclusive_unlock`](StrongTryRwLock::exclusive_unlock).
//!
//! A read-indicator slot is `0` (not reading), `1` (reading) or `2`: a reader
//! that arrived while a writer held `WLOCK` and whose arrival a departing
//! writer confirmed (`1 → 2`, "abort rollback"). A reader that saw `WLOCK`
//! decrements its slot: from `1` it has rolled back and fails; from `2` a
//! writer left in the meantime and the reader holds the lock. This is what
//! keeps a reader from failing because of a writer that is already gone.
//!
//! Every access on the handshake is sequentially consistent. Each side of
//! the Dekker-style handshake between the read indicator and the writer word
//! (a reader's arrival then its look at the writer word; a writer's `HLOCK`
//! or `RLOCK` then its scan of the indicator) is a `SeqCst` store then a
//! `SeqCst` load, and C11's single total order over `SeqCst` operations
//! excludes the store-buffering outcome without fences. Writers add a
//! `SeqCst` fence anyway (they are rare); a reader, on every read-only
//! transaction, adds one only under loom, which models `SeqCst` accesses as
//! acquire/release and would otherwise report executions C11 excludes (on
//! x86 the fence is a second locked instruction, which also waits for the
//! thread's pending write-backs).
//!
//! Every write on the handshake is a read-modify-write (`swap` where a plain
//! store would do): on x86 a sequentially consistent store is the same
//! `xchg`, and loom keeps the atomicity of a read-modify-write only against
//! other read-modify-writes (tokio-rs/loom#254), so with plain stores it
//! reports executions no hardware has. The exception is a reader's departure,
//! a `Release` store outside loom (see
//! [`shared_unlock`](StrongTryRwLock::shared_unlock)).
//!
//! ## Progress
//!
//! Every method is wait-free (no unbounded loop); `exclusive_try_lock` and the
//! unlocks scan the `threads` read-indicator slots once or twice.

#[cfg(not(perdure_loom))]
use crate::sync::atomic::Ordering::Release;
use crate::sync::atomic::{fence, AtomicU64, Ordering::SeqCst};
use crate::sync::CachePadded;

/// The reader's fence between its arrival and its look at the writer word:
/// only under loom (see the module docs).
#[inline(always)]
fn reader_fence() {
    #[cfg(perdure_loom)]
    fence(SeqCst);
}

const NOLOCK: u64 = 0;
const HLOCK: u64 = 1;
const RLOCK: u64 = 2;
const WLOCK: u64 = 3;
const SEQ_MASK: u64 = (1 << 62) - 1;

const NOT_READING: u64 = 0;
const READING: u64 = 1;

#[inline]
fn pack(seq: u64, state: u64) -> u64 {
    ((seq & SEQ_MASK) << 2) | state
}

#[inline]
fn seq_of(word: u64) -> u64 {
    word >> 2
}

#[inline]
fn state_of(word: u64) -> u64 {
    word & 3
}

/// The lock's state as seen by one load, for tests and diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockState {
    /// Free.
    NoLock,
    /// A writer is trying to take it.
    Trying,
    /// Held exclusively.
    Exclusive,
    /// Read-only (downgraded or designated).
    ReadOnly,
}

/// The strong try reader-writer lock of the seed's reference \[11\]. See the
/// module docs.
pub struct StrongTryRwLock {
    /// Each on its own pair of lines, so read-indicator slots of different
    /// threads (and the writer word) do not share a line.
    wstate: CachePadded<AtomicU64>,
    readers: Box<[CachePadded<AtomicU64>]>,
}

impl std::fmt::Debug for StrongTryRwLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StrongTryRwLock")
            .field("state", &self.state())
            .field(
                "read_indicator",
                &self
                    .readers
                    .iter()
                    .map(|r| r.0.load(SeqCst))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl StrongTryRwLock {
    /// A free lock for thread ids `0..threads`.
    pub fn new(threads: usize) -> StrongTryRwLock {
        StrongTryRwLock {
            wstate: CachePadded(AtomicU64::new(pack(0, NOLOCK))),
            readers: (0..threads)
                .map(|_| CachePadded(AtomicU64::new(NOT_READING)))
                .collect(),
        }
    }

    /// The number of thread ids (read-indicator slots).
    pub fn threads(&self) -> usize {
        self.readers.len()
    }

    /// The current state (one load; may be stale by the time it returns).
    pub fn state(&self) -> LockState {
        match state_of(self.wstate.0.load(SeqCst)) {
            NOLOCK => LockState::NoLock,
            HLOCK => LockState::Trying,
            RLOCK => LockState::ReadOnly,
            _ => LockState::Exclusive,
        }
    }

    fn slot(&self, tid: usize) -> &AtomicU64 {
        &self.readers[tid].0
    }

    /// Tries to take the lock in shared mode for thread `tid`. Fails only if
    /// a writer held it exclusively during the call.
    ///
    /// # Panics
    ///
    /// If `tid` is not below [`StrongTryRwLock::threads`] (a caller bug).
    pub fn shared_try_lock(&self, tid: usize) -> bool {
        if state_of(self.wstate.0.load(SeqCst)) == WLOCK {
            return false;
        }
        self.slot(tid).swap(READING, SeqCst);
        reader_fence();
        let mut ws = self.wstate.0.load(SeqCst);
        if state_of(ws) == HLOCK {
            // A writer is only trying: readers win, cancel its attempt.
            match self
                .wstate
                .0
                .compare_exchange(ws, pack(seq_of(ws), NOLOCK), SeqCst, SeqCst)
            {
                Ok(_) => return true,
                Err(now) => ws = now,
            }
        }
        if state_of(ws) != WLOCK {
            return true;
        }
        // A writer holds it: roll the arrival back, unless a writer leaving
        // in the meantime confirmed it (slot 2), in which case we hold.
        self.slot(tid).fetch_sub(1, SeqCst) != READING
    }

    /// Releases thread `tid`'s shared hold.
    pub fn shared_unlock(&self, tid: usize) {
        // A release is enough: the critical section's reads happen before
        // the load of a writer that sees the slot empty. A writer's
        // confirming CAS (1 → 2) comes before this store in the slot's
        // modification order (and is overwritten) or after it (and fails).
        // Under loom a swap, for loom#254 (see the module docs).
        #[cfg(perdure_loom)]
        self.slot(tid).swap(NOT_READING, SeqCst);
        #[cfg(not(perdure_loom))]
        self.slot(tid).store(NOT_READING, Release);
    }

    fn readers_empty(&self) -> bool {
        self.readers.iter().all(|r| r.0.load(SeqCst) == NOT_READING)
    }

    /// Confirms the arrival of every reader that arrived during `WLOCK` and
    /// has not rolled back yet (`1 → 2`): they now hold the lock.
    fn abort_rollback(&self) {
        for r in self.readers.iter() {
            if r.0.load(SeqCst) == READING {
                let _ = r.0.compare_exchange(READING, READING + 1, SeqCst, SeqCst);
            }
        }
    }

    /// Tries to take the lock exclusively. Fails only if, during the call,
    /// it was held (or being taken) by another thread in a conflicting mode,
    /// or is read-only (`RLOCK`).
    pub fn exclusive_try_lock(&self) -> bool {
        let ws = self.wstate.0.load(SeqCst);
        let st = state_of(ws);
        if st == WLOCK || st == RLOCK {
            return false;
        }
        if !self.readers_empty() {
            return false;
        }
        // Announce (or renew another writer's) attempt under a fresh seq.
        // A writer that loses this race fails: the winner is still trying.
        let next = pack(seq_of(ws).wrapping_add(1), HLOCK);
        if self
            .wstate
            .0
            .compare_exchange(ws, next, SeqCst, SeqCst)
            .is_err()
        {
            return false;
        }
        fence(SeqCst);
        // Readers that arrived before our HLOCK became visible are in the
        // indicator now; later ones see HLOCK and cancel it.
        if !self.readers_empty() {
            return false;
        }
        self.wstate
            .0
            .compare_exchange(next, pack(seq_of(next), WLOCK), SeqCst, SeqCst)
            .is_ok()
    }

    /// Releases an exclusive (or downgraded) hold: `RLOCK`, confirm waiting
    /// readers, then `NOLOCK`.
    pub fn exclusive_unlock(&self) {
        let seq = seq_of(self.wstate.0.load(SeqCst));
        self.wstate.0.swap(pack(seq, RLOCK), SeqCst);
        fence(SeqCst);
        self.abort_rollback();
        self.wstate.0.swap(pack(seq, NOLOCK), SeqCst);
    }

    /// Turns an exclusive hold into a read-only one (`WLOCK → RLOCK`):
    /// readers may enter, writers stay out.
    pub fn downgrade(&self) {
        let seq = seq_of(self.wstate.0.load(SeqCst));
        self.wstate.0.swap(pack(seq, RLOCK), SeqCst);
        fence(SeqCst);
        self.abort_rollback();
    }

    /// Ends a read-only hold (`RLOCK → NOLOCK`), whoever downgraded it.
    /// Readers inside keep their shared holds; writers may take the lock once
    /// they have left.
    pub fn downgrade_unlock(&self) {
        let ws = self.wstate.0.load(SeqCst);
        debug_assert_eq!(
            state_of(ws),
            RLOCK,
            "downgrade_unlock of a lock not in RLOCK"
        );
        // Nothing else writes the word in RLOCK: writers refuse it without a
        // CAS and readers only CAS an HLOCK.
        self.wstate.0.swap(pack(seq_of(ws), NOLOCK), SeqCst);
    }

    /// Marks a free lock read-only (`NOLOCK → RLOCK`): at start-up, for the
    /// replica `cur_comb` designates.
    pub fn set_read_lock(&self) {
        let seq = seq_of(self.wstate.0.load(SeqCst));
        self.wstate.0.swap(pack(seq, RLOCK), SeqCst);
    }
}

#[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn sequential_transitions() {
        let l = StrongTryRwLock::new(3);
        assert_eq!(l.state(), LockState::NoLock);
        assert!(l.shared_try_lock(0));
        assert!(l.shared_try_lock(1));
        assert!(!l.exclusive_try_lock(), "readers inside");
        l.shared_unlock(0);
        l.shared_unlock(1);
        assert!(l.exclusive_try_lock());
        assert_eq!(l.state(), LockState::Exclusive);
        assert!(!l.exclusive_try_lock());
        assert!(!l.shared_try_lock(2));
        l.downgrade();
        assert_eq!(l.state(), LockState::ReadOnly);
        assert!(!l.exclusive_try_lock(), "read-only refuses writers");
        assert!(l.shared_try_lock(2), "read-only admits readers");
        l.downgrade_unlock();
        assert!(!l.exclusive_try_lock(), "reader 2 still inside");
        l.shared_unlock(2);
        assert!(l.exclusive_try_lock());
        l.exclusive_unlock();
        assert_eq!(l.state(), LockState::NoLock);
        l.set_read_lock();
        assert!(!l.exclusive_try_lock());
        assert!(l.shared_try_lock(0));
        l.shared_unlock(0);
    }

    #[test]
    fn a_rolled_back_reader_leaves_no_trace() {
        let l = StrongTryRwLock::new(2);
        assert!(l.exclusive_try_lock());
        assert!(!l.shared_try_lock(1));
        l.exclusive_unlock();
        assert!(l.exclusive_try_lock(), "the failed reader rolled back");
        l.exclusive_unlock();
    }

    #[test]
    fn a_confirmed_arrival_holds_the_lock() {
        // A reader stuck between its arrival and its rollback when the
        // writer leaves: the departing writer confirms it (slot 1 -> 2) and
        // its rollback then finds 2, so it holds the lock.
        let l = StrongTryRwLock::new(2);
        assert!(l.exclusive_try_lock());
        l.slot(1).store(READING, SeqCst); // arrival, as shared_try_lock does
        l.downgrade(); // confirms
        assert_ne!(l.slot(1).fetch_sub(1, SeqCst), READING);
        assert_eq!(l.slot(1).load(SeqCst), READING, "the reader holds");
        l.downgrade_unlock();
        assert!(!l.exclusive_try_lock());
        l.shared_unlock(1);
        assert!(l.exclusive_try_lock());
    }

    #[test]
    fn hlock_is_renewed_or_cancelled() {
        let l = StrongTryRwLock::new(2);
        // A writer that set HLOCK and stopped (it saw a reader) leaves HLOCK.
        l.wstate.0.store(pack(7, HLOCK), SeqCst);
        assert!(l.shared_try_lock(0), "a reader cancels HLOCK");
        assert_eq!(l.state(), LockState::NoLock);
        l.shared_unlock(0);
        l.wstate.0.store(pack(7, HLOCK), SeqCst);
        assert!(l.exclusive_try_lock(), "a writer renews HLOCK");
        assert_eq!(l.state(), LockState::Exclusive);
        assert_eq!(seq_of(l.wstate.0.load(SeqCst)), 8);
    }
}
