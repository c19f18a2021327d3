//! 16-byte compare-and-swap (`lock cmpxchg16b`), the double-width CAS that
//! persistent constructions use to update a value together with a sequence
//! number or a tag.
//!
//! * On x86_64 with CPUID's `cx16` bit (every x86_64 CPU in use today) it is
//!   the `lock cmpxchg16b` instruction on the two words.
//! * Elsewhere, and under loom and shuttle (whose atomics cannot be the
//!   operand of a hardware instruction), it is emulated with a lock: atomic
//!   with respect to other 16-byte operations, *not* with respect to plain
//!   8-byte accesses to the same words. Algorithms that mix the two on one
//!   location must not rely on the emulation.
//!
//! Values are `low | high << 64`, the low word at the lower address.

use crate::sync::atomic::AtomicU64;

/// Compare-and-swap of `words` as one 16-byte value: if they hold `current`,
/// write `new` and return `Ok(current)`, else return `Err(actual)`.
/// `words` must be 16-byte aligned.
#[inline]
pub fn compare_exchange_16(words: &[AtomicU64; 2], current: u128, new: u128) -> Result<u128, u128> {
    // The emulation of the model checkers needs no alignment (and their
    // atomics are not 8 bytes each, so their pairs are not 16-aligned).
    assert!(
        cfg!(any(perdure_loom, perdure_shuttle)) || (words.as_ptr() as usize) % 16 == 0,
        "a 16-byte CAS needs a 16-byte-aligned location"
    );
    imp::cas16(words, current, new)
}

/// Whether [`compare_exchange_16`] is the hardware instruction here, and so
/// one event for 8-byte loads and CASes of the same words too. The
/// emulation (off x86_64, or without `cx16`, or under loom and shuttle) is
/// atomic only with respect to other 16-byte operations: it stores the low
/// word, then the high one, so an 8-byte reader can see the pair torn and
/// an 8-byte CAS can slip between the two stores (found by the GenMC models
/// `modelcheck/genmc/relax_read_nvmm*`). Code that mixes 8- and 16-byte
/// accesses on one location must use 16-byte operations where this is false.
pub fn is_native() -> bool {
    imp::native()
}

#[cfg(all(target_arch = "x86_64", not(any(perdure_loom, perdure_shuttle))))]
mod imp {
    use super::AtomicU64;

    pub(super) fn native() -> bool {
        has_cx16()
    }

    fn has_cx16() -> bool {
        use std::sync::atomic::{AtomicU8, Ordering};
        static CACHED: AtomicU8 = AtomicU8::new(0);
        match CACHED.load(Ordering::Relaxed) {
            1 => true,
            2 => false,
            _ => {
                let yes = std::arch::x86_64::__cpuid(1).ecx & (1 << 13) != 0;
                CACHED.store(if yes { 1 } else { 2 }, Ordering::Relaxed);
                yes
            }
        }
    }

    pub(super) fn cas16(words: &[AtomicU64; 2], current: u128, new: u128) -> Result<u128, u128> {
        if !has_cx16() {
            return super::emulated::cas16(words, current, new);
        }
        let ptr = words.as_ptr() as *mut u64;
        let (mut lo, mut hi) = (current as u64, (current >> 64) as u64);
        let (new_lo, new_hi) = (new as u64, (new >> 64) as u64);
        let ok: u8;
        // SAFETY: `ptr` is 16-aligned (checked by the caller) and points to
        // two live words; cmpxchg16b is supported (CPUID). rbx is reserved
        // by LLVM, so the new low word is swapped into it and restored after.
        unsafe {
            core::arch::asm!(
                "xchg {nlo}, rbx",
                "lock cmpxchg16b xmmword ptr [{p}]",
                "sete {ok}",
                "mov rbx, {nlo}",
                p = in(reg) ptr,
                nlo = inout(reg) new_lo => _,
                ok = out(reg_byte) ok,
                inout("rax") lo,
                inout("rdx") hi,
                in("rcx") new_hi,
                options(nostack),
            );
        }
        let seen = u128::from(lo) | (u128::from(hi) << 64);
        if ok != 0 {
            Ok(current)
        } else {
            Err(seen)
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", not(any(perdure_loom, perdure_shuttle)))))]
mod imp {
    pub(super) use super::emulated::cas16;

    pub(super) fn native() -> bool {
        false
    }
}

#[allow(dead_code)]
mod emulated {
    use super::AtomicU64;
    use crate::sync::atomic::Ordering;
    use crate::sync::Mutex;

    #[cfg(not(any(perdure_loom, perdure_shuttle)))]
    fn lock() -> std::sync::MutexGuard<'static, ()> {
        static LOCK: Mutex<()> = Mutex::new(());
        LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[cfg(any(perdure_loom, perdure_shuttle))]
    fn lock() -> crate::sync::MutexGuard<'static, ()> {
        // Model checkers need their own primitives, created per execution;
        // one leaked lock per execution is acceptable in a test run.
        thread_local! {
            static LOCK: std::cell::Cell<Option<&'static Mutex<()>>> = const { std::cell::Cell::new(None) };
        }
        let m = LOCK.with(|l| match l.get() {
            Some(m) => m,
            None => {
                let m: &'static Mutex<()> = Box::leak(Box::new(Mutex::new(())));
                l.set(Some(m));
                m
            }
        });
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn cas16(words: &[AtomicU64; 2], current: u128, new: u128) -> Result<u128, u128> {
        let _guard = lock();
        let seen = u128::from(words[0].load(Ordering::Acquire))
            | (u128::from(words[1].load(Ordering::Acquire)) << 64);
        if seen == current {
            words[0].store(new as u64, Ordering::Release);
            words[1].store((new >> 64) as u64, Ordering::Release);
            Ok(current)
        } else {
            Err(seen)
        }
    }
}

#[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
mod tests {
    use super::*;

    #[repr(align(16))]
    struct Aligned([AtomicU64; 2]);

    #[test]
    fn succeeds_and_fails_like_a_cas() {
        let a = Aligned([AtomicU64::new(1), AtomicU64::new(2)]);
        let v = 1u128 | (2u128 << 64);
        let w = 3u128 | (4u128 << 64);
        assert_eq!(compare_exchange_16(&a.0, v, w), Ok(v));
        assert_eq!(compare_exchange_16(&a.0, v, w), Err(w));
        assert_eq!(a.0[0].load(std::sync::atomic::Ordering::Relaxed), 3);
        assert_eq!(a.0[1].load(std::sync::atomic::Ordering::Relaxed), 4);
        assert_eq!(emulated::cas16(&a.0, w, v), Ok(w));
    }

    #[test]
    fn concurrent_increments_of_both_halves_stay_consistent() {
        let a = std::sync::Arc::new(Aligned([AtomicU64::new(0), AtomicU64::new(0)]));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let a = a.clone();
                std::thread::spawn(move || {
                    for _ in 0..100_000 {
                        let mut cur = 0u128;
                        loop {
                            let lo = cur as u64;
                            let next = u128::from(lo + 1) | (u128::from(lo + 1) << 64);
                            match compare_exchange_16(&a.0, cur, next) {
                                Ok(_) => break,
                                Err(seen) => cur = seen,
                            }
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(a.0[0].load(std::sync::atomic::Ordering::Relaxed), 200_000);
        assert_eq!(a.0[1].load(std::sync::atomic::Ordering::Relaxed), 200_000);
    }
}
