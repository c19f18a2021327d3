//! A value on its own pair of cache lines.
//!
//! The seed's per-thread arrays (Algorithm 3's `announce`, the request and
//! hazard-pointer slots, the read indicators of the strong try lock) are
//! written by their owner on every transaction and read by the others; two
//! threads' slots on one line make each write invalidate the other's copy
//! (false sharing). 128 bytes: the adjacent-line prefetcher of x86 cores
//! fetches lines in pairs.

/// `T` alone on a 128-byte aligned block.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}
