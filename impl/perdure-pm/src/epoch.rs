//! The epoch clock of epoch-based reclamation (Fraser, "Practical lock-
//! freedom", 2004, §5.2.3), shared by Memento's PM-safe reclamation
//! (`perdure_memento`'s `ebr`, seed 001 §6) and RELAX's space (seed 002,
//! §6.5's reclamation): a global epoch and one pin word per thread slot.
//!
//! A thread *pins* the global epoch for the length of a critical section
//! ([`Epochs::pin`]); the global epoch advances ([`Epochs::try_advance`])
//! only when every pinned thread has seen it. A block retired while the
//! global epoch was `e` can therefore be freed once the epoch reaches
//! `e + 2`: every thread that could still hold a pointer to it has left its
//! critical section. What is retired, when it is freed and what persistent
//! memory adds (flushing before freeing, double retirement) stay with the
//! two constructions; this module only keeps time. It lives in DRAM: after
//! a crash nothing is pinned.
//!
//! A pin word holds `epoch << 1 | 1` while its slot is pinned and `0` (or
//! an even value) while it is not.

use crate::sync::atomic::{fence, AtomicU64, Ordering};
use crate::sync::CachePadded;

/// The global epoch and the pin words of `slots` thread slots.
#[derive(Debug)]
pub struct Epochs {
    global: AtomicU64,
    /// Each on its own lines: a slot's owner writes it at every pin and unpin.
    pins: Vec<CachePadded<AtomicU64>>,
}

const PINNED: u64 = 1;

impl Epochs {
    /// A clock at epoch `start` with `slots` unpinned slots.
    pub fn new(slots: usize, start: u64) -> Epochs {
        Epochs {
            global: AtomicU64::new(start),
            pins: (0..slots).map(|_| CachePadded(AtomicU64::new(0))).collect(),
        }
    }

    /// The global epoch.
    pub fn now(&self) -> u64 {
        self.global.load(Ordering::SeqCst)
    }

    /// Whether `slot` is pinned.
    pub fn is_pinned(&self, slot: usize) -> bool {
        self.pins[slot].load(Ordering::SeqCst) & PINNED != 0
    }

    /// Pins the global epoch for `slot` and returns it: the pin is
    /// published (and fenced) before the epoch is read again, and retried
    /// until the epoch did not move in between, so a concurrent
    /// [`Epochs::try_advance`] either sees the pin or advanced before it.
    pub fn pin(&self, slot: usize) -> u64 {
        let pin = &self.pins[slot];
        loop {
            let e = self.global.load(Ordering::SeqCst);
            pin.store((e << 1) | PINNED, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if self.global.load(Ordering::SeqCst) == e {
                return e;
            }
        }
    }

    /// [`Epochs::pin`] as the TSO-only mutants of Memento's and RELAX's
    /// reclamation have it: the pin is a plain (`Release`) store and no
    /// fence follows it. Under sequential consistency that is still a pin;
    /// under x86-TSO the pin can wait in the store buffer while the caller
    /// reads the epoch and shared pointers, so a concurrent
    /// [`Epochs::try_advance`] misses it and a block the caller holds is
    /// freed under it. Not for use outside the mutants
    /// (`hooks::mutants`).
    #[doc(hidden)]
    pub fn pin_unfenced(&self, slot: usize) -> u64 {
        let pin = &self.pins[slot];
        loop {
            let e = self.global.load(Ordering::SeqCst);
            pin.store((e << 1) | PINNED, Ordering::Release);
            if self.global.load(Ordering::SeqCst) == e {
                return e;
            }
        }
    }

    /// Ends `slot`'s critical section.
    pub fn unpin(&self, slot: usize) {
        self.pins[slot].store(0, Ordering::SeqCst);
    }

    /// Advances the global epoch if every pinned slot has seen it; returns
    /// the (possibly new) epoch.
    pub fn try_advance(&self) -> u64 {
        let e = self.global.load(Ordering::SeqCst);
        fence(Ordering::SeqCst);
        for p in &self.pins {
            let s = p.load(Ordering::SeqCst);
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
}

#[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn the_epoch_waits_for_a_slot_pinned_in_an_older_one() {
        let c = Epochs::new(2, 5);
        assert_eq!(c.pin(0), 5);
        assert!(c.is_pinned(0) && !c.is_pinned(1));
        assert_eq!(c.try_advance(), 6, "slot 0 has seen epoch 5");
        assert_eq!(c.try_advance(), 6, "slot 0 is still pinned in 5");
        c.unpin(0);
        assert!(!c.is_pinned(0));
        assert_eq!(c.try_advance(), 7);
        assert_eq!(c.pin(1), 7);
        assert_eq!(c.try_advance(), 8);
        assert_eq!(c.now(), 8);
    }
}
