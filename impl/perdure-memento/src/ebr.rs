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

use crate::sync::Mutex;
use perdure_pm::epoch::Epochs;

/// A thread's reclamation state, owned by the one [`Participant`] that has
/// claimed the thread id (so the per-operation calls take no lock: a locked
/// instruction on x86 also waits for every pending `clwb`, so a mutex per
/// call cost what a `pfence` costs) and parked in the collector between
/// owners, so that a thread's next incarnation finds its predecessor's
/// critical section (§6.2).
#[derive(Debug, Default)]
struct Bags {
    /// Retired in the current critical section (may hold duplicates).
    retired: Vec<u64>,
    /// Locations to flush at the end of the critical section.
    flush: Vec<u64>,
    /// Deduplicated retirements, stamped with the epoch they were sealed in,
    /// oldest first.
    sealed: std::collections::VecDeque<(u64, Vec<u64>)>,
    /// Emptied vectors kept for the next sealed bag.
    spare: Vec<Vec<u64>>,
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
    /// The thread's bags while no participant holds them; `None` while one
    /// does.
    parked: Mutex<Option<Bags>>,
}

/// The reclamation domain of one runtime: one slot per thread id.
#[derive(Debug)]
pub struct Collector {
    /// The global epoch and the threads' pin words (`perdure_pm::epoch`).
    epochs: Epochs,
    locals: Vec<Local>,
}

/// One thread id's membership in a [`Collector`]: at most one exists per
/// thread id at a time ([`Collector::claim`]); give it back with
/// [`Collector::release`].
#[derive(Debug)]
pub struct Participant {
    tid: usize,
    bags: Bags,
}

impl Participant {
    /// The thread id this participant speaks for.
    pub fn tid(&self) -> usize {
        self.tid
    }

    /// Blocks retired but not yet free (what a full crash now would leak).
    pub fn pending(&self) -> usize {
        self.bags.retired.len() + self.bags.sealed.iter().map(|(_, v)| v.len()).sum::<usize>()
    }
}

fn lock(m: &Mutex<Option<Bags>>) -> crate::sync::MutexGuard<'_, Option<Bags>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Collector {
    /// A collector for thread ids `0..slots`.
    pub fn new(slots: usize) -> Collector {
        Collector {
            epochs: Epochs::new(slots, 0),
            locals: (0..slots)
                .map(|_| Local {
                    parked: Mutex::new(Some(Bags::default())),
                })
                .collect(),
        }
    }

    /// Takes thread id `tid`'s reclamation state; `None` if another
    /// participant holds it (or `tid` is out of range).
    pub fn claim(&self, tid: usize) -> Option<Participant> {
        let bags = lock(&self.locals.get(tid)?.parked).take()?;
        Some(Participant { tid, bags })
    }

    /// Parks `p`'s state for the thread id's next participant (a critical
    /// section left open stays open: the next one revives it).
    pub fn release(&self, mut p: Participant) {
        self.release_in_place(&mut p);
    }

    /// [`Collector::release`] for an owner that is being dropped: `p` is
    /// left without state and must not be used again.
    pub(crate) fn release_in_place(&self, p: &mut Participant) {
        *lock(&self.locals[p.tid].parked) = Some(std::mem::take(&mut p.bags));
    }

    /// The global epoch.
    pub fn epoch(&self) -> u64 {
        self.epochs.now()
    }

    /// Whether `tid` is inside a critical section.
    pub fn is_pinned(&self, tid: usize) -> bool {
        self.epochs.is_pinned(tid)
    }

    /// Starts a critical section for `tid`, or revives the one a crashed
    /// incarnation of the thread left open (§6.2); returns true if revived.
    /// Needs no participant: the runtime pins, at open, the sections of
    /// threads a full crash cut off.
    pub fn pin(&self, tid: usize) -> bool {
        if self.epochs.is_pinned(tid) {
            return true;
        }
        // The pin is visible (fenced) before this thread reads any shared
        // pointer: `Epochs::pin`.
        if mutant!(EbrPinNoFence) {
            self.epochs.pin_unfenced(tid);
        } else {
            self.epochs.pin(tid);
        }
        false
    }

    /// Retires block `off` in `p`'s critical section. Retiring the same
    /// block twice in one critical section is allowed (§6.2).
    pub fn retire(&self, p: &mut Participant, off: u64) {
        debug_assert!(self.is_pinned(p.tid), "retire outside a critical section");
        p.bags.retired.push(off);
    }

    /// Defers a flush of the location at `off` to the end of `p`'s
    /// critical section (§6.1, DEFERFLUSH).
    pub fn defer_flush(&self, p: &mut Participant, off: u64) {
        p.bags.flush.push(off);
    }

    /// Calls `flush` on each deferred flush of `p`'s critical section once
    /// (deduplicated) and forgets them; the caller fences *before* calling
    /// [`Collector::unpin`].
    pub fn drain_flushes(&self, p: &mut Participant, mut flush: impl FnMut(u64)) {
        let f = &mut p.bags.flush;
        if f.len() > 1 {
            f.sort_unstable();
            f.dedup();
        }
        for &loc in f.iter() {
            flush(loc);
        }
        f.clear();
    }

    /// Ends `p`'s critical section: seals its retirements (deduplicated)
    /// into a bag, tries to advance the epoch, and calls `free` on each
    /// block now safe to free. Call after the deferred flushes are durable.
    pub fn unpin(&self, p: &mut Participant, mut free: impl FnMut(u64)) {
        let bags = &mut p.bags;
        debug_assert!(bags.flush.is_empty(), "unpin with deferred flushes pending");
        let e = self.epochs.now();
        if !bags.retired.is_empty() {
            let spare = bags.spare.pop().unwrap_or_default();
            let mut r = std::mem::replace(&mut bags.retired, spare);
            r.sort_unstable();
            r.dedup();
            bags.sealed.push_back((e, r));
        }
        // The section's reads happen before the epoch may advance past it.
        self.epochs.unpin(p.tid);
        bags.unpins += 1;
        let now =
            if bags.unpins % ADVANCE_EVERY == 0 || bags.sealed.len() > 2 * ADVANCE_EVERY as usize {
                self.epochs.try_advance()
            } else {
                e
            };
        while let Some((stamp, _)) = bags.sealed.front() {
            if *stamp + 2 > now {
                break;
            }
            if let Some((_, mut blocks)) = bags.sealed.pop_front() {
                for &b in &blocks {
                    free(b);
                }
                blocks.clear();
                bags.spare.push(blocks);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unpin(c: &Collector, p: &mut Participant) -> Vec<u64> {
        let mut freed = Vec::new();
        c.unpin(p, |b| freed.push(b));
        freed
    }

    fn flushes(c: &Collector, p: &mut Participant) -> Vec<u64> {
        let mut f = Vec::new();
        c.drain_flushes(p, |l| f.push(l));
        f
    }

    #[test]
    fn a_block_is_freed_only_two_epochs_after_it_was_sealed() {
        let c = Collector::new(3);
        let mut p = c.claim(1).unwrap();
        c.pin(1);
        c.retire(&mut p, 64);
        c.retire(&mut p, 64); // double retirement in one critical section
        assert!(flushes(&c, &mut p).is_empty());
        assert!(unpin(&c, &mut p).is_empty());
        let mut freed = Vec::new();
        for _ in 0..4 * ADVANCE_EVERY {
            c.pin(1);
            freed.extend(unpin(&c, &mut p));
        }
        assert_eq!(freed, vec![64], "freed once, deduplicated");
    }

    #[test]
    fn a_pinned_thread_holds_the_epoch_back() {
        let c = Collector::new(3);
        let mut p1 = c.claim(1).unwrap();
        let mut p2 = c.claim(2).unwrap();
        c.pin(2); // stays pinned at epoch 0
        c.pin(1);
        c.retire(&mut p1, 128);
        unpin(&c, &mut p1);
        for _ in 0..5 * ADVANCE_EVERY {
            c.pin(1);
            assert!(
                unpin(&c, &mut p1).is_empty(),
                "thread 2 is still in epoch 0"
            );
        }
        assert!(c.epoch() <= 1);
        flushes(&c, &mut p2);
        unpin(&c, &mut p2);
        let mut freed = Vec::new();
        for _ in 0..4 * ADVANCE_EVERY {
            c.pin(1);
            freed.extend(unpin(&c, &mut p1));
        }
        assert_eq!(freed, vec![128]);
    }

    #[test]
    fn pinning_a_pinned_thread_revives_its_section() {
        let c = Collector::new(2);
        let mut p = c.claim(1).unwrap();
        assert!(!c.pin(1));
        c.defer_flush(&mut p, 8);
        c.retire(&mut p, 256);
        // The thread crashes; its next incarnation claims the parked state
        // and pins again.
        c.release(p);
        let mut p = c.claim(1).unwrap();
        assert!(c.pin(1));
        c.defer_flush(&mut p, 8);
        c.retire(&mut p, 256);
        assert_eq!(flushes(&c, &mut p), vec![8]);
        unpin(&c, &mut p);
        assert_eq!(p.pending(), 1);
    }

    #[test]
    fn a_thread_id_has_one_participant_at_a_time() {
        let c = Collector::new(2);
        let p = c.claim(1).unwrap();
        assert!(c.claim(1).is_none());
        assert!(c.claim(2).is_none(), "out of range");
        c.release(p);
        assert!(c.claim(1).is_some());
    }
}
