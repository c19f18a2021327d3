//! The region allocator: sequential, with all its metadata inside the region
//! it manages.
//!
//! The persistent transactional memories (CX-PTM, Redo-PTM and its variants)
//! keep whole replicas of their heap and bring a stale replica up to date by
//! copying or by replaying a log. An allocator whose state lives *inside*
//! the region is copied along with the data, so a replica's allocator is
//! always consistent with that replica's objects; no separate metadata has
//! to be replicated, and the allocator needs no concurrency control because
//! the PTMs run it inside a (sequential) transaction.
//!
//! All memory access goes through [`RegionMemory`], so a PTM can route the
//! allocator's loads and stores through its own interposition (e.g. a redo
//! log) exactly like the user's.
//!
//! ## Design
//!
//! Segregated power-of-two size classes, no splitting or coalescing:
//!
//! * A block of class `k` is `2^k` bytes (`k` in 5..=63): a 16-byte block
//!   header, then the payload. Payloads are 16-byte aligned (enough for a
//!   16-byte CAS).
//! * `alloc(size)` pops the free list of the smallest class that fits
//!   `size + 16`, or carves a new block from the bump pointer: O(1).
//! * `free(offset)` validates the block header and pushes the block on its
//!   class's free list: O(1).
//! * All size arithmetic is checked: a request too large for any class is
//!   [`RegionError::TooLarge`], one that does not fit the remaining space is
//!   [`RegionError::OutOfSpace`]; nothing overflows, for any `u64` size.
//!
//! Freed memory is reused only by its own class, so a workload that frees
//! many small blocks and then allocates large ones can run out of space with
//! free bytes left; at most half of a block is internal fragmentation.
//!
//! ## Layout (offsets relative to the region start, 8-byte little-endian words)
//!
//! | offset | field |
//! | --- | --- |
//! | 0 | magic [`REGION_MAGIC`] |
//! | 8 | region length |
//! | 16 | bump: first never-allocated byte |
//! | 24 | bytes in live blocks |
//! | 32 + 8·i | head of the free list of class `i + 5` (payload offset, 0 = empty) |
//! | 512.. | blocks |
//!
//! A block header word holds [`BLOCK_TAG`], an allocated bit (bit 8) and the
//! class `k` (bits 0..8); a free block's first payload word links to the
//! next free payload of its class.

/// Memory the region allocator works in: 8-byte words at 8-aligned offsets
/// relative to the region start.
pub trait RegionMemory {
    /// Region length in bytes.
    fn byte_len(&self) -> u64;
    /// Reads the word at `off`.
    fn load(&self, off: u64) -> u64;
    /// Writes the word at `off`.
    fn store(&mut self, off: u64, val: u64);
}

impl RegionMemory for [u64] {
    fn byte_len(&self) -> u64 {
        (self.len() * 8) as u64
    }
    fn load(&self, off: u64) -> u64 {
        self[(off / 8) as usize]
    }
    fn store(&mut self, off: u64, val: u64) {
        self[(off / 8) as usize] = val;
    }
}

impl RegionMemory for Vec<u64> {
    fn byte_len(&self) -> u64 {
        (self.as_slice().len() * 8) as u64
    }
    fn load(&self, off: u64) -> u64 {
        self[(off / 8) as usize]
    }
    fn store(&mut self, off: u64, val: u64) {
        self[(off / 8) as usize] = val;
    }
}

/// Errors of the region allocator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegionError {
    /// No class can hold a request of this size.
    #[error("cannot allocate {requested} bytes: larger than the largest size class (2^63 bytes including the 16-byte header)")]
    TooLarge {
        /// The size asked for.
        requested: u64,
    },
    /// The region has no room for the block.
    #[error("region full: {requested} bytes need a {block}-byte block but only {available} bytes are left and the class's free list is empty")]
    OutOfSpace {
        /// The size asked for.
        requested: u64,
        /// The block size that would be used.
        block: u64,
        /// Bytes left after the bump pointer.
        available: u64,
    },
    /// `free` of something that is not a live block.
    #[error("invalid free of offset {offset:#x}: {reason}")]
    InvalidFree {
        /// The offset passed to `free`.
        offset: u64,
        /// Why it was refused.
        reason: &'static str,
    },
    /// The region does not hold a formatted allocator.
    #[error("the region holds no allocator (magic {found:#x}); format it first")]
    NotFormatted {
        /// The word found where the magic should be.
        found: u64,
    },
    /// The allocator's metadata is inconsistent.
    #[error("the region allocator's metadata is corrupt: {0}")]
    Corrupt(String),
    /// The region is too small or misaligned to hold an allocator.
    #[error(
        "a region of {len} bytes cannot hold an allocator (needs a multiple of 16, at least {min})"
    )]
    RegionTooSmall {
        /// The region's length.
        len: u64,
        /// The minimum length.
        min: u64,
    },
}

/// Magic word of a formatted region.
pub const REGION_MAGIC: u64 = u64::from_le_bytes(*b"PRDRGN01");
/// Tag in the upper bits of every block header.
pub const BLOCK_TAG: u64 = 0xB10C_u64 << 48;
/// Smallest class: 32-byte blocks.
pub const MIN_SHIFT: u32 = 5;
/// Largest class: 2^63-byte blocks.
pub const MAX_SHIFT: u32 = 63;
const NUM_CLASSES: u64 = (MAX_SHIFT - MIN_SHIFT + 1) as u64;
const OFF_LEN: u64 = 8;
const OFF_BUMP: u64 = 16;
const OFF_LIVE: u64 = 24;
const OFF_HEADS: u64 = 32;
/// Where the first block starts.
pub const BLOCKS_START: u64 = 512;
const BLOCK_HEADER: u64 = 16;
const ALLOCATED: u64 = 1 << 8;

/// Usage figures of a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionStats {
    /// Region length.
    pub len: u64,
    /// Bytes ever carved from the bump pointer (blocks, live or free).
    pub carved: u64,
    /// Bytes in live blocks (block sizes, headers included).
    pub live: u64,
}

/// The block class (`k`, block = `2^k` bytes) for a request of `size` bytes,
/// or `None` if no class is large enough.
pub fn class_for(size: u64) -> Option<u32> {
    let need = size.checked_add(BLOCK_HEADER)?.max(1 << MIN_SHIFT);
    // ceil(log2(need)) for need >= 2
    let shift = 64 - (need - 1).leading_zeros();
    (shift <= MAX_SHIFT).then_some(shift)
}

/// A region allocator over some [`RegionMemory`]. Holds no state of its own:
/// everything is in the region.
pub struct RegionAlloc<'m, M: RegionMemory + ?Sized> {
    mem: &'m mut M,
}

impl<'m, M: RegionMemory + ?Sized> RegionAlloc<'m, M> {
    /// Formats `mem` as an empty region, discarding what it held.
    pub fn format(mem: &'m mut M) -> Result<Self, RegionError> {
        let len = mem.byte_len();
        let min = BLOCKS_START + (1 << MIN_SHIFT);
        if len < min || len % 16 != 0 {
            return Err(RegionError::RegionTooSmall { len, min });
        }
        mem.store(0, REGION_MAGIC);
        mem.store(OFF_LEN, len);
        mem.store(OFF_BUMP, BLOCKS_START);
        mem.store(OFF_LIVE, 0);
        for i in 0..NUM_CLASSES {
            mem.store(OFF_HEADS + 8 * i, 0);
        }
        Ok(RegionAlloc { mem })
    }

    /// Attaches to a region formatted earlier (or copied from one), checking
    /// its metadata.
    pub fn attach(mem: &'m mut M) -> Result<Self, RegionError> {
        let magic = mem.load(0);
        if magic != REGION_MAGIC {
            return Err(RegionError::NotFormatted { found: magic });
        }
        let len = mem.load(OFF_LEN);
        if len != mem.byte_len() {
            return Err(RegionError::Corrupt(format!(
                "recorded length {len} differs from the region's {}",
                mem.byte_len()
            )));
        }
        let bump = mem.load(OFF_BUMP);
        if bump < BLOCKS_START || bump > len || bump % 16 != 0 {
            return Err(RegionError::Corrupt(format!(
                "bump pointer {bump:#x} out of range"
            )));
        }
        Ok(RegionAlloc { mem })
    }

    /// Allocates a block whose payload holds at least `size` bytes and
    /// returns the payload's offset in the region (16-byte aligned, never 0).
    pub fn alloc(&mut self, size: u64) -> Result<u64, RegionError> {
        let shift = class_for(size).ok_or(RegionError::TooLarge { requested: size })?;
        let head_slot = OFF_HEADS + 8 * u64::from(shift - MIN_SHIFT);
        let head = self.mem.load(head_slot);
        let block_size = 1u64 << shift;
        let payload = if head != 0 {
            let block = head - BLOCK_HEADER;
            self.check_block(head, block, false)?;
            self.mem.store(head_slot, self.mem.load(head));
            head
        } else {
            let bump = self.mem.load(OFF_BUMP);
            let len = self.mem.load(OFF_LEN);
            let available = len.saturating_sub(bump);
            if block_size > available {
                return Err(RegionError::OutOfSpace {
                    requested: size,
                    block: block_size,
                    available,
                });
            }
            self.mem.store(OFF_BUMP, bump + block_size);
            bump + BLOCK_HEADER
        };
        self.mem.store(
            payload - BLOCK_HEADER,
            BLOCK_TAG | ALLOCATED | u64::from(shift),
        );
        self.mem.store(payload - 8, 0);
        let live = self.mem.load(OFF_LIVE);
        self.mem.store(OFF_LIVE, live + block_size);
        Ok(payload)
    }

    /// Whether `alloc` could now give, one after the other, `count` blocks
    /// of `size` bytes for every `(size, count)` of `needs` — reading only:
    /// each class's free list (at most as many links as it is asked for;
    /// a link that does not lead to a free block of its class ends it),
    /// then the room after the bump pointer for the rest. A caller that
    /// must not fail half-way through its stores asks first.
    pub fn has_room(&self, needs: &[(u64, u64)]) -> bool {
        let mut bytes = 0u64;
        for &(size, count) in needs {
            let Some(shift) = class_for(size) else {
                return false;
            };
            bytes = bytes.saturating_add(count.saturating_mul(1 << shift));
        }
        let bump = self.mem.load(OFF_BUMP);
        let room = self.mem.load(OFF_LEN).saturating_sub(bump);
        // Usually the room after the bump pointer is enough by itself.
        if bytes <= room {
            return true;
        }
        // Otherwise each class asked for takes what its free list holds,
        // the rest from the bump.
        let mut shifts: Vec<u32> = needs.iter().filter_map(|n| class_for(n.0)).collect();
        shifts.sort_unstable();
        shifts.dedup();
        let mut from_bump = 0u64;
        for shift in shifts {
            let count = needs
                .iter()
                .filter(|n| class_for(n.0) == Some(shift))
                .fold(0u64, |a, n| a.saturating_add(n.1));
            let mut head = self.mem.load(OFF_HEADS + 8 * u64::from(shift - MIN_SHIFT));
            let mut free = 0;
            while free < count
                && head % 16 == 0
                && head >= BLOCKS_START + BLOCK_HEADER
                && head < bump
            {
                if self.check_block(head, head - BLOCK_HEADER, false) != Ok(shift) {
                    break;
                }
                free += 1;
                head = self.mem.load(head);
            }
            from_bump = from_bump.saturating_add((count - free).saturating_mul(1 << shift));
        }
        from_bump <= room
    }

    /// Returns the block with payload at `offset` to its class.
    pub fn free(&mut self, offset: u64) -> Result<(), RegionError> {
        let bump = self.mem.load(OFF_BUMP);
        if offset < BLOCKS_START + BLOCK_HEADER || offset >= bump || offset % 16 != 0 {
            return Err(RegionError::InvalidFree {
                offset,
                reason: "not the payload offset of any block in this region",
            });
        }
        let block = offset - BLOCK_HEADER;
        let shift = self.check_block(offset, block, true)?;
        let head_slot = OFF_HEADS + 8 * u64::from(shift - MIN_SHIFT);
        self.mem.store(offset, self.mem.load(head_slot));
        self.mem.store(head_slot, offset);
        self.mem.store(block, BLOCK_TAG | u64::from(shift));
        let live = self.mem.load(OFF_LIVE);
        self.mem.store(OFF_LIVE, live.saturating_sub(1 << shift));
        Ok(())
    }

    /// Usable payload bytes of the live block at `offset`.
    pub fn usable_size(&self, offset: u64) -> Result<u64, RegionError> {
        let bump = self.mem.load(OFF_BUMP);
        if offset < BLOCKS_START + BLOCK_HEADER || offset >= bump || offset % 16 != 0 {
            return Err(RegionError::InvalidFree {
                offset,
                reason: "not the payload offset of any block in this region",
            });
        }
        let shift = self.check_block(offset, offset - BLOCK_HEADER, true)?;
        Ok((1 << shift) - BLOCK_HEADER)
    }

    /// Checks the header of the block at `block`; returns its class.
    fn check_block(
        &self,
        offset: u64,
        block: u64,
        want_allocated: bool,
    ) -> Result<u32, RegionError> {
        let word = self.mem.load(block);
        if word & !(ALLOCATED | 0xff) != BLOCK_TAG {
            return Err(RegionError::InvalidFree {
                offset,
                reason: "no block header there",
            });
        }
        let shift = (word & 0xff) as u32;
        let bump = self.mem.load(OFF_BUMP);
        let fits = (MIN_SHIFT..=MAX_SHIFT).contains(&shift)
            && block.checked_add(1 << shift).is_some_and(|end| end <= bump);
        if !fits {
            return Err(RegionError::Corrupt(format!(
                "block at {block:#x} has class {shift}, which does not fit the region"
            )));
        }
        match (word & ALLOCATED != 0, want_allocated) {
            (true, true) | (false, false) => Ok(shift),
            (false, true) => Err(RegionError::InvalidFree {
                offset,
                reason: "the block is already free (double free)",
            }),
            (true, false) => Err(RegionError::Corrupt(format!(
                "block at {block:#x} is on a free list but marked allocated"
            ))),
        }
    }

    /// Current usage.
    pub fn stats(&self) -> RegionStats {
        RegionStats {
            len: self.mem.load(OFF_LEN),
            carved: self.mem.load(OFF_BUMP) - BLOCKS_START,
            live: self.mem.load(OFF_LIVE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(class_for(0), Some(5));
        assert_eq!(class_for(16), Some(5));
        assert_eq!(class_for(17), Some(6));
        assert_eq!(class_for(48), Some(6));
        assert_eq!(class_for((1 << 63) - 16), Some(63));
        assert_eq!(class_for((1 << 63) - 15), None);
        assert_eq!(class_for(u64::MAX), None);
        assert_eq!(class_for(u64::MAX - 15), None);
        assert_eq!(class_for(u64::MAX - 16), None);
    }

    /// `has_room` against `alloc` itself: after random allocations and
    /// frees (free lists of several classes, a bump pointer near the end),
    /// each of 400 random requests of one to three sizes is answered true
    /// exactly when a copy of the region can allocate all of it.
    #[test]
    fn has_room_says_what_alloc_does() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let mut mem = vec![0u64; 4096];
        let mut live = Vec::new();
        {
            let mut a = RegionAlloc::format(&mut mem[..]).unwrap();
            for _ in 0..300 {
                if next(3) == 0 && !live.is_empty() {
                    let i = next(live.len() as u64) as usize;
                    a.free(live.swap_remove(i)).unwrap();
                } else if let Ok(off) = a.alloc(16 + next(1000)) {
                    live.push(off);
                }
            }
        }
        let (mut yes, mut no) = (0, 0);
        for _ in 0..400 {
            let needs: Vec<(u64, u64)> = (0..1 + next(3)).map(|_| (next(700), next(5))).collect();
            let said = RegionAlloc::attach(&mut mem[..]).unwrap().has_room(&needs);
            let mut copy = mem.clone();
            let mut a = RegionAlloc::attach(&mut copy[..]).unwrap();
            let did = needs
                .iter()
                .all(|&(size, count)| (0..count).all(|_| a.alloc(size).is_ok()));
            assert_eq!(said, did, "{needs:?}");
            if did {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(yes > 40 && no > 40, "{yes} fit, {no} did not");
    }

    #[test]
    fn huge_requests_are_typed_errors() {
        let mut mem = vec![0u64; 4096];
        let mut a = RegionAlloc::format(&mut mem[..]).unwrap();
        for size in [
            u64::MAX,
            u64::MAX - 16,
            1 << 63,
            (1 << 63) - 16,
            1 << 40,
            32_769 - 16,
        ] {
            assert!(matches!(
                a.alloc(size),
                Err(RegionError::TooLarge { .. }) | Err(RegionError::OutOfSpace { .. })
            ));
        }
        assert_eq!(a.stats().live, 0);
    }

    #[test]
    fn reuse_and_double_free() {
        let mut mem = vec![0u64; 1024];
        let mut a = RegionAlloc::format(&mut mem).unwrap();
        let x = a.alloc(10).unwrap();
        let y = a.alloc(10).unwrap();
        assert_ne!(x, y);
        assert_eq!(x % 16, 0);
        a.free(x).unwrap();
        assert!(matches!(a.free(x), Err(RegionError::InvalidFree { .. })));
        assert!(matches!(
            a.free(x + 16),
            Err(RegionError::InvalidFree { .. })
        ));
        assert_eq!(
            a.alloc(16).unwrap(),
            x,
            "freed block is reused by its class"
        );
        assert_eq!(a.usable_size(y).unwrap(), 16);
    }

    #[test]
    fn copying_the_region_copies_the_allocator() {
        let mut a_mem = vec![0u64; 2048];
        let x = {
            let mut a = RegionAlloc::format(&mut a_mem).unwrap();
            a.alloc(100).unwrap()
        };
        let mut b_mem = a_mem.clone();
        let mut b = RegionAlloc::attach(&mut b_mem).unwrap();
        let y = b.alloc(100).unwrap();
        assert_ne!(x, y);
        b.free(x).unwrap();
        let mut a = RegionAlloc::attach(&mut a_mem).unwrap();
        assert_eq!(
            a.alloc(100).unwrap(),
            y,
            "the copy diverged only after the copy"
        );
    }

    #[test]
    fn fills_up_with_a_typed_error() {
        let mut mem = vec![0u64; (BLOCKS_START as usize + 4 * 64) / 8];
        let mut a = RegionAlloc::format(&mut mem).unwrap();
        for _ in 0..4 {
            a.alloc(48).unwrap();
        }
        assert!(matches!(
            a.alloc(48),
            Err(RegionError::OutOfSpace { available: 0, .. })
        ));
    }
}
