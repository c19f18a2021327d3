//! The recovery bitset of `BitsetAtomic` and `HybridAtomicPointer` (thesis
//! §6.4.1, §6.4.3): one bit per 16-byte slot of the pool, in DRAM, usable
//! right after a crash without an O(n) initialisation.
//!
//! §6.4.1 asks for "an array with O(1) initialization time, for which a
//! concurrent lock-free variant was recently proposed by Jayanti and Shun",
//! which keeps "two indices for each word in the main array". This is that
//! shape (the classic sparse-set trick, made concurrent); the code is ours,
//! not Jayanti and Shun's:
//!
//! * `words[w]`: 64 bits; `from[w]`: an index into `to`; `to[k]`: a word
//!   number. All three start as whatever DRAM holds (zeroes or garbage).
//! * `(count, pending)`: one 16-byte descriptor, set to `(0, none)` at
//!   creation — the whole initialisation, O(1).
//! * Word `w` is *initialised* iff `from[w] < count` and `to[from[w]] == w`.
//!   Every `to[k]` with `k < count` was written by a push, so garbage in
//!   `from` can only point at a genuine entry: no word is ever taken as
//!   initialised by accident.
//! * Initialising `w`: zero `words[w]`, then push `w`: install
//!   `(count, w)` with a 16-byte CAS, write `to[count] = w` and
//!   `from[w] = count`, then CAS the descriptor to `(count + 1, none)`.
//!   Anyone who finds a pending push completes it first (the writes are
//!   idempotent: every helper writes the same two values), so pushing is
//!   lock-free, and a word is pushed at most once (the pusher re-checks
//!   after helping).
//!
//! Bits are only ever set (a field or node, once recovered, stays recovered
//! until the next crash replaces the whole bitset). Claim 1 of Chapter 7
//! needs no false positives, and there are none: a bit reads as set only if
//! its word was initialised (zeroed, then pushed) and then the bit was set.
//! False negatives are possible in one race — a thread that found `w`
//! uninitialised zeroes `words[w]` after another initialised it and set a
//! bit — and cost only a repeated, harmless `recover_field` (Chapter 7: any
//! later call "at most can assist the normal execution").
//!
//! Space: three words per 64 slots, i.e. 24 bytes per KiB of pool (§6.4.1
//! counts 16 for the two indices; the third word is the bits themselves).

use crate::dram::{Dram, DramInit};
use crate::sync::atomic::Ordering;

const NONE: u64 = 0;

/// An O(1)-initialisation concurrent bitset over the 16-byte slots of a pool.
#[derive(Debug)]
pub struct Bitset {
    words: Dram,
    from: Dram,
    to: Dram,
    desc: Dram,
    nwords: u64,
}

impl Bitset {
    /// A bitset for a pool of `pool_bytes` bytes, its arrays holding what
    /// `init` says DRAM holds. O(1) apart from the allocation itself (and
    /// the garbage fill a test asks for).
    pub fn new(pool_bytes: u64, init: DramInit) -> Bitset {
        let bits = pool_bytes.div_ceil(16);
        let nwords = bits.div_ceil(64).max(1);
        let salt = |k: u64| match init {
            DramInit::Zeroed => DramInit::Zeroed,
            DramInit::Garbage { seed } => DramInit::Garbage {
                seed: seed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            },
        };
        Bitset {
            words: Dram::new(nwords * 8, salt(1)),
            from: Dram::new(nwords * 8, salt(2)),
            to: Dram::new(nwords * 8, salt(3)),
            // The descriptor is the one word set at creation: (0, NONE).
            desc: Dram::new(16, DramInit::Zeroed),
            nwords,
        }
    }

    fn desc(&self) -> (u64, u64) {
        self.desc.read_pair(0)
    }

    fn initialised(&self, w: u64) -> bool {
        let f = self.from.word(w).load(Ordering::Acquire);
        let (count, _) = self.desc();
        f < count && f < self.nwords && self.to.word(f).load(Ordering::Acquire) == w
    }

    /// Completes the pending push `(count, w + 1)`.
    fn help(&self, count: u64, pending: u64) {
        let w = pending - 1;
        if count < self.nwords {
            self.to.word(count).store(w, Ordering::Release);
            self.from.word(w).store(count, Ordering::Release);
        }
        self.desc.dwcas(0, (count, pending), (count + 1, NONE));
    }

    fn ensure(&self, w: u64) {
        if self.initialised(w) {
            return;
        }
        self.words.word(w).store(0, Ordering::Release);
        loop {
            let (count, pending) = self.desc();
            if pending != NONE {
                self.help(count, pending);
                continue;
            }
            if self.initialised(w) {
                return;
            }
            if count >= self.nwords {
                // Cannot happen (each word is pushed at most once); if it
                // did, the word stays uninitialised: only false negatives.
                debug_assert!(false, "bitset descriptor overflow");
                return;
            }
            if self.desc.dwcas(0, (count, NONE), (count, w + 1)) {
                self.help(count, w + 1);
                return;
            }
        }
    }

    /// Whether the bit of the 16-byte slot at pool offset `off` is set.
    #[inline]
    pub fn test(&self, off: u64) -> bool {
        let bit = off / 16;
        let w = bit / 64;
        if w >= self.nwords || !self.initialised(w) {
            return false;
        }
        self.words.word(w).load(Ordering::Acquire) & (1 << (bit % 64)) != 0
    }

    /// Sets the bit of the slot at pool offset `off`.
    #[inline]
    pub fn set(&self, off: u64) {
        let bit = off / 16;
        let w = bit / 64;
        if w >= self.nwords {
            return;
        }
        self.ensure(w);
        self.words
            .word(w)
            .fetch_or(1 << (bit % 64), Ordering::AcqRel);
    }
}

#[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn garbage_never_reads_as_set() {
        for seed in 0..20 {
            let b = Bitset::new(1 << 16, DramInit::Garbage { seed });
            for off in (0..1 << 16).step_by(16) {
                assert!(!b.test(off), "seed {seed}: slot {off:#x} set by garbage");
            }
            b.set(0x40);
            b.set(0x1230);
            assert!(b.test(0x40) && b.test(0x1230));
            assert!(!b.test(0x50) && !b.test(0x1220));
        }
    }

    #[test]
    fn concurrent_setters_never_lose_a_bit_set_after_initialisation() {
        let b = std::sync::Arc::new(Bitset::new(1 << 14, DramInit::Garbage { seed: 9 }));
        let hs: Vec<_> = (0..3u64)
            .map(|t| {
                let b = b.clone();
                std::thread::spawn(move || {
                    for i in 0..1024u64 {
                        if i % 3 == t && i % 2 == 0 {
                            b.set(i * 16);
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        for i in (1..1024u64).step_by(2) {
            assert!(!b.test(i * 16), "slot {i} was never set");
        }
        // A bit may be lost only to a racing first initialisation of its
        // word: set each again now that every word is initialised.
        for i in (0..1024u64).step_by(2) {
            b.set(i * 16);
        }
        for i in 0..1024u64 {
            assert_eq!(b.test(i * 16), i % 2 == 0, "slot {i}");
        }
    }
}
