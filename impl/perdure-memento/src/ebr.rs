//! PM-safe epoch-based reclamation (seed 001, §6).
//!
//! Classic EBR (Fraser 2004): a thread *pins* the current global epoch for
//! the length of a critical section; a block unlinked and *retired* in a
//! critical section is freed once the global epoch has advanced twice, when
//! no thread can still hold a pointer to it. The global epoch advances when
//! every pinned thread has seen it.
//!
//! Persistent memory adds three problems, and §6 fixes each:
//!
//! 1. **Use-after-free through an unflushed location (§6.1).** Deleting a
//!    block (Algorithm 3, L38) CASes the location away from it and retires
//!    it; if the CAS had not persisted when a crash came, the recovered
//!    location would still point at a block that was freed. The location must
//!    be flushed before the block is freed. Rather than flush at L38,
//!    [`Collector::defer_flush`] records the location and the end of the
//!    critical section flushes every recorded location once, in a batch,
//!    followed by one fence — before the retired blocks reach a bag, hence
//!    before they can be freed (a block retired in a critical section is
//!    never freed in the same one).
//! 2. **Double retirement after a thread crash (§6.2).** A thread that
//!    crashes at L38 re-executes it in recovery and retires the block again.
//!    The crashed thread's critical section is *revived* — its pin, its
//!    deferred flushes and its retired list live in shared DRAM indexed by
//!    thread id, and [`Collector::pin`] on a still-pinned thread resumes it —
//!    and retirements are deduplicated when the critical section ends.
//! 3. **Use-after-free through a memento (§6.3).** A memento may hold a
//!    pointer to a block (a checkpointed node); the runtime clears a root
//!    memento at the end of the operation, *before* the critical section
//!    ends, under a crash-safe clearing flag (see [`crate::runtime`]).
//!
//! Progress: pinning and retiring are wait-free; advancing the epoch is
//! lock-free (a CAS on the global epoch); a stalled pinned thread blocks
//! reclamation, not progress, as in every EBR.
//!
//! What a full crash loses: the volatile bags (blocks retired in the last two
//! epochs and not yet freed) are leaked — at most the blocks a thread retired
//! in the last two epochs before the crash. Reclaiming them needs a
//! recovery-time collection, which perdure does not have yet.

use crate::sync::atomic::{fence, AtomicU64, Ordering};
use crate::sync::Mutex;

/// Epochs are stored shifted left by one; bit 0 says "pinned".
const PINNED: u64 = 1;

#[derive(Debug, Default)]
struct Bags {
    /// Retired in the current critical section (may hold duplicates).
    retired: Vec<u64>,
    /// Locations to flush at the end of the critical section.
    flush: Vec<u64>,
    /// Deduplicated retirements, stamped with the epoch they were sealed in.
    sealed: Vec<(u64, Vec<u64>)>,
    /// Critical sections ended, to try advancing the epoch only every
    /// [`ADVANCE_EVERY`]th time.
    unpins: u64,
}

/// How many critical sections a thread ends between its attempts to advance
/// the global epoch. Attempting at every unpin scans every thread and CASes
/// the shared epoch word once per operation — a cache line every thread
/// writes; every 16th keeps reclamation prompt (a block waits at most a few
/// more sections) at a fraction of the traffic.
const ADVANCE_EVERY: u64 = 16;

#[derive(Debug)]
struct Local {
    state: AtomicU64,
    bags: Mutex<Bags>,
}

/// The reclamation domain of one runtime: one slot per thread id.
#[derive(Debug)]
pub struct Collector {
    global: AtomicU64,
    locals: Vec<Local>,
}

fn lock(m: &Mutex<Bags>) -> crate::sync::MutexGuard<'_, Bags> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What ending a critical section left to do.
#[derive(Debug, Default)]
pub struct Unpinned {
    /// Locations to flush (deduplicated), before anything else.
    pub flush: Vec<u64>,
    /// Blocks now safe to free.
    pub free: Vec<u64>,
}

impl Collector {
    /// A collector for thread ids `0..slots`.
    pub fn new(slots: usize) -> Collector {
        Collector {
            global: AtomicU64::new(0),
            locals: (0..slots)
                .map(|_| Local {
                    state: AtomicU64::new(0),
                    bags: Mutex::new(Bags::default()),
                })
                .collect(),
        }
    }

    /// The global epoch.
    pub fn epoch(&self) -> u64 {
        self.global.load(Ordering::SeqCst)
    }

    /// Whether `tid` is inside a critical section.
    pub fn is_pinned(&self, tid: usize) -> bool {
        self.locals[tid].state.load(Ordering::SeqCst) & PINNED != 0
    }

    /// Starts a critical section for `tid`, or revives the one a crashed
    /// incarnation of the thread left open (§6.2); returns true if revived.
    pub fn pin(&self, tid: usize) -> bool {
        let local = &self.locals[tid];
        if local.state.load(Ordering::SeqCst) & PINNED != 0 {
            return true;
        }
        loop {
            let e = self.global.load(Ordering::SeqCst);
            local.state.store((e << 1) | PINNED, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if self.global.load(Ordering::SeqCst) == e {
                return false;
            }
        }
    }

    /// Retires block `off` in `tid`'s critical section. Retiring the same
    /// block twice in one critical section is allowed (§6.2).
    pub fn retire(&self, tid: usize, off: u64) {
        debug_assert!(self.is_pinned(tid), "retire outside a critical section");
        lock(&self.locals[tid].bags).retired.push(off);
    }

    /// Defers a flush of the location at `off` to the end of `tid`'s
    /// critical section (§6.1, DEFERFLUSH).
    pub fn defer_flush(&self, tid: usize, off: u64) {
        lock(&self.locals[tid].bags).flush.push(off);
    }

    /// The deferred flushes of `tid`'s critical section, deduplicated; the
    /// caller flushes them and fences *before* calling [`Collector::unpin`].
    pub fn take_flushes(&self, tid: usize) -> Vec<u64> {
        let mut f = std::mem::take(&mut lock(&self.locals[tid].bags).flush);
        f.sort_unstable();
        f.dedup();
        f
    }

    /// Ends `tid`'s critical section: seals its retirements (deduplicated)
    /// into a bag, tries to advance the epoch, and returns the blocks now
    /// safe to free. Call after the deferred flushes are durable.
    pub fn unpin(&self, tid: usize) -> Vec<u64> {
        let local = &self.locals[tid];
        let mut bags = lock(&local.bags);
        debug_assert!(bags.flush.is_empty(), "unpin with deferred flushes pending");
        let mut r = std::mem::take(&mut bags.retired);
        r.sort_unstable();
        r.dedup();
        let e = self.global.load(Ordering::SeqCst);
        if !r.is_empty() {
            bags.sealed.push((e, r));
        }
        local.state.store(e << 1, Ordering::SeqCst);
        bags.unpins += 1;
        let now =
            if bags.unpins % ADVANCE_EVERY == 0 || bags.sealed.len() > 2 * ADVANCE_EVERY as usize {
                self.try_advance()
            } else {
                e
            };
        let mut free = Vec::new();
        bags.sealed.retain_mut(|(stamp, blocks)| {
            if *stamp + 2 <= now {
                free.append(blocks);
                false
            } else {
                true
            }
        });
        free
    }

    /// Advances the global epoch if every pinned thread has seen it;
    /// returns the (possibly new) epoch.
    fn try_advance(&self) -> u64 {
        let e = self.global.load(Ordering::SeqCst);
        fence(Ordering::SeqCst);
        for l in &self.locals {
            let s = l.state.load(Ordering::SeqCst);
            if s & PINNED != 0 && s >> 1 != e {
                return e;
            }
        }
        match self
            .global
            .compare_exchange(e, e + 1, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) => e + 1,
            Err(now) => now,
        }
    }

    /// Blocks sealed but not yet free (what a full crash now would leak).
    pub fn pending(&self) -> usize {
        self.locals
            .iter()
            .map(|l| {
                let b = lock(&l.bags);
                b.retired.len() + b.sealed.iter().map(|(_, v)| v.len()).sum::<usize>()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_freed_only_two_epochs_after_it_was_sealed() {
        let c = Collector::new(3);
        c.pin(1);
        c.retire(1, 64);
        c.retire(1, 64); // double retirement in one critical section
        assert!(c.take_flushes(1).is_empty());
        assert!(c.unpin(1).is_empty());
        let mut freed = Vec::new();
        for _ in 0..4 * ADVANCE_EVERY {
            c.pin(1);
            freed.extend(c.unpin(1));
        }
        assert_eq!(freed, vec![64], "freed once, deduplicated");
    }

    #[test]
    fn a_pinned_thread_holds_the_epoch_back() {
        let c = Collector::new(3);
        c.pin(2); // stays pinned at epoch 0
        c.pin(1);
        c.retire(1, 128);
        c.unpin(1);
        for _ in 0..5 * ADVANCE_EVERY {
            c.pin(1);
            assert!(c.unpin(1).is_empty(), "thread 2 is still in epoch 0");
        }
        assert!(c.epoch() <= 1);
        c.take_flushes(2);
        c.unpin(2);
        let mut freed = Vec::new();
        for _ in 0..4 * ADVANCE_EVERY {
            c.pin(1);
            freed.extend(c.unpin(1));
        }
        assert_eq!(freed, vec![128]);
    }

    #[test]
    fn pinning_a_pinned_thread_revives_its_section() {
        let c = Collector::new(2);
        assert!(!c.pin(1));
        c.defer_flush(1, 8);
        c.retire(1, 256);
        // The thread crashes; its next incarnation pins again.
        assert!(c.pin(1));
        c.defer_flush(1, 8);
        c.retire(1, 256);
        assert_eq!(c.take_flushes(1), vec![8]);
        c.unpin(1);
        assert_eq!(c.pending(), 1);
    }
}
