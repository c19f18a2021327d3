//! The volatile replica: Mirror's DRAM region (thesis, Chapter 4: "`init`
//! `mmap`s a persistent and a volatile memory region").
//!
//! Every persistent atomic lives twice, at the *same offset*: in the pool
//! (NVMM, the persistent replica) and in this region (DRAM, the volatile
//! replica), so translating between the two is one addition (§6.5: "copied
//! in the same order, so that address translation between the two mirrored
//! spaces can be executed with a single addition"). The region spans the
//! whole pool so that any pool offset has a mirror.
//!
//! After a crash the region is new. [`DramInit`] says what it holds then:
//! zeroes (what `mmap` gives on Linux and Windows, the "zeroing assumption"
//! of §6.2 that `ZMarkableAtomicPointer` and `PseudoBitsetAtomic` need), or
//! arbitrary garbage (the general case that `recover_field`'s sequence window
//! of Algorithm 6.2 line 4 exists for). Zeroed regions are fresh anonymous
//! mappings: the kernel zeroes pages on first touch, so creating the region
//! costs O(1) and not O(size) — the lazy recovery of §6.1 depends on that.
//!
//! The 16-byte compare-and-swap on the replica is `lock cmpxchg16b` on
//! x86-64 (`perdure_pm::dword`); elsewhere it is emulated with a lock, and
//! the replica's pair reads then use the same lock (see [`Dram::read_pair`]).

use crate::sync::atomic::{AtomicU64, Ordering};

/// What the volatile region holds when it is created (after a crash).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DramInit {
    /// Zeroes, as `mmap` provides.
    Zeroed,
    /// Arbitrary words drawn from this seed (the general case of §6.3).
    Garbage {
        /// The seed.
        seed: u64,
    },
}

/// One replica's `(value, sequence)`.
pub type Replica = (u64, u64);

/// A 16-byte, 16-aligned (value, sequence) slot of the volatile region.
#[repr(C, align(16))]
struct Pair([AtomicU64; 2]);

/// Mirror's volatile region: as many 16-byte slots as the pool has.
pub struct Dram {
    #[cfg(not(any(perdure_loom, perdure_shuttle)))]
    ptr: std::ptr::NonNull<Pair>,
    #[cfg(any(perdure_loom, perdure_shuttle))]
    pairs: Vec<Pair>,
    len: usize,
}

// SAFETY: the region is only reached through atomics (shared `&Pair`s), like
// a `Vec<Pair>`; the raw pointer is owned exclusively by this value.
#[cfg(not(any(perdure_loom, perdure_shuttle)))]
unsafe impl Send for Dram {}
// SAFETY: as above: every access is an atomic operation.
#[cfg(not(any(perdure_loom, perdure_shuttle)))]
unsafe impl Sync for Dram {}

impl std::fmt::Debug for Dram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dram({} bytes)", self.len * 16)
    }
}

/// SplitMix64: the garbage generator (deterministic per seed).
pub(crate) fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Dram {
    /// A volatile region mirroring `bytes` bytes of a pool, filled per `init`.
    /// `bytes` is rounded up to 16.
    pub fn new(bytes: u64, init: DramInit) -> Dram {
        let len = bytes.div_ceil(16) as usize;
        match init {
            DramInit::Zeroed => Self::zeroed(len),
            DramInit::Garbage { seed } => Self::garbage(len, seed),
        }
    }

    /// `len` pairs of SplitMix64 words from `seed` (value, then sequence).
    #[cfg(not(any(perdure_loom, perdure_shuttle)))]
    fn garbage(len: usize, seed: u64) -> Dram {
        let d = Self::zeroed(len);
        let mut s = seed;
        for i in 0..len {
            let p = d.pair(i);
            p.0[0].store(splitmix(&mut s), Ordering::Relaxed);
            p.0[1].store(splitmix(&mut s), Ordering::Relaxed);
        }
        d
    }

    /// As above, the words given to the atomics as they are made: under
    /// loom and shuttle every store is a scheduling point, and a fill by
    /// stores made a recovery of a 96 KiB space cost 12k of them.
    #[cfg(any(perdure_loom, perdure_shuttle))]
    fn garbage(len: usize, seed: u64) -> Dram {
        let mut s = seed;
        let mut pair = || {
            let v = splitmix(&mut s);
            Pair([AtomicU64::new(v), AtomicU64::new(splitmix(&mut s))])
        };
        Dram {
            pairs: (0..len).map(|_| pair()).collect(),
            len,
        }
    }

    /// Bytes mapped for `len` pairs (at least one page's worth is rounded
    /// by the kernel; zero pairs still map one pair).
    #[cfg(not(any(perdure_loom, perdure_shuttle)))]
    fn map_len(len: usize) -> usize {
        len.max(1).saturating_mul(std::mem::size_of::<Pair>())
    }

    /// A fresh private anonymous mapping: the kernel supplies zero pages
    /// on first touch, so creating a region of any size is O(1). (The
    /// global allocator is not used: glibc serves allocations below its
    /// adaptive mmap threshold, up to 32 MiB, from recycled heap memory
    /// that `calloc` must clear, an O(size) cost that showed up as
    /// milliseconds in the first operation after a restart.)
    #[cfg(not(any(perdure_loom, perdure_shuttle)))]
    fn zeroed(len: usize) -> Dram {
        let bytes = Self::map_len(len);
        // SAFETY: a new anonymous private mapping at an address the kernel
        // picks; no existing memory is affected. MAP_NORESERVE: the region
        // mirrors a whole pool, most of which a lazy recovery never
        // touches.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            // As the global allocator does when memory runs out.
            std::alloc::handle_alloc_error(
                std::alloc::Layout::from_size_align(bytes, 16)
                    .unwrap_or(std::alloc::Layout::new::<Pair>()),
            )
        }
        let Some(ptr) = std::ptr::NonNull::new(raw as *mut Pair) else {
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<Pair>())
        };
        Dram { ptr, len }
    }

    #[cfg(any(perdure_loom, perdure_shuttle))]
    fn zeroed(len: usize) -> Dram {
        Dram {
            pairs: (0..len)
                .map(|_| Pair([AtomicU64::new(0), AtomicU64::new(0)]))
                .collect(),
            len,
        }
    }

    #[inline]
    fn pair(&self, i: usize) -> &Pair {
        assert!(i < self.len, "volatile slot {i} beyond the region");
        #[cfg(not(any(perdure_loom, perdure_shuttle)))]
        {
            // SAFETY: i < len pairs were allocated (zeroed: a valid
            // `AtomicU64` is any bit pattern) and live as long as `self`.
            unsafe { &*self.ptr.as_ptr().add(i) }
        }
        #[cfg(any(perdure_loom, perdure_shuttle))]
        {
            &self.pairs[i]
        }
    }

    /// Size in bytes.
    pub fn bytes(&self) -> u64 {
        self.len as u64 * 16
    }

    #[inline]
    fn at(&self, off: u64) -> &Pair {
        debug_assert!(off % 16 == 0, "a persistent atomic is 16-aligned");
        self.pair((off / 16) as usize)
    }

    /// The value word of the slot at pool offset `off`.
    #[inline]
    pub fn val(&self, off: u64) -> u64 {
        self.at(off).0[0].load(Ordering::Acquire)
    }

    /// The sequence word of the slot at pool offset `off`.
    #[inline]
    pub fn seq(&self, off: u64) -> u64 {
        self.at(off).0[1].load(Ordering::Acquire)
    }

    /// A consistent (value, sequence) of the slot at `off`. On x86-64 this
    /// is Mirror's read of Algorithm 4.1 lines 9–11 (sequence, value,
    /// sequence again, retried until the two sequence reads agree): the
    /// replica is only written by `cmpxchg16b`, so any single 8-byte read
    /// sees one of its states. With the emulated 16-byte CAS, whose two
    /// stores are not one event to 8-byte readers, it is a 16-byte CAS-load.
    #[inline]
    pub fn read_pair(&self, off: u64) -> (u64, u64) {
        let p = self.at(off);
        if cfg!(all(
            target_arch = "x86_64",
            not(any(perdure_loom, perdure_shuttle))
        )) {
            loop {
                let s = p.0[1].load(Ordering::Acquire);
                let v = p.0[0].load(Ordering::Acquire);
                let s2 = p.0[1].load(Ordering::Acquire);
                if s == s2 {
                    return (v, s);
                }
                crate::sync::spin_loop();
            }
        } else {
            let w = match perdure_pm::dword::compare_exchange_16(&p.0, 0, 0) {
                Ok(w) | Err(w) => w,
            };
            (w as u64, (w >> 64) as u64)
        }
    }

    /// Double-width CAS of the slot at `off` from `current` to `new`
    /// (each a (value, sequence) pair); true on success.
    #[inline]
    pub fn dwcas(&self, off: u64, current: (u64, u64), new: (u64, u64)) -> bool {
        perdure_pm::dword::compare_exchange_16(&self.at(off).0, pack(current), pack(new)).is_ok()
    }

    /// Plain stores of a slot; only for a replica no other thread can see
    /// yet (a fresh allocation, eager recovery before the first operation).
    #[inline]
    pub fn store_pair(&self, off: u64, pair: (u64, u64)) {
        let p = self.at(off);
        p.0[0].store(pair.0, Ordering::Release);
        p.0[1].store(pair.1, Ordering::Release);
    }

    /// The value word at `off` (for the recovery bitset, which keeps its own
    /// words in a region of the same kind).
    #[inline]
    pub(crate) fn word(&self, word_index: u64) -> &AtomicU64 {
        &self.pair((word_index / 2) as usize).0[(word_index % 2) as usize]
    }
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
impl Drop for Dram {
    fn drop(&mut self) {
        // SAFETY: mapped in `zeroed` with this very length; no reference
        // into the region outlives `self`. A failed munmap leaks the
        // mapping, nothing worse.
        unsafe {
            libc::munmap(
                self.ptr.as_ptr() as *mut libc::c_void,
                Self::map_len(self.len),
            );
        }
    }
}

/// `(value, sequence)` as the 16-byte word `value | sequence << 64`.
#[inline]
pub(crate) fn pack(p: (u64, u64)) -> u128 {
    u128::from(p.0) | (u128::from(p.1) << 64)
}

/// The inverse of [`pack`].
#[inline]
pub(crate) fn unpack(w: u128) -> (u64, u64) {
    (w as u64, (w >> 64) as u64)
}
