//! `SeqTidIdx` (seed §5, Algorithm 1): the 64-bit word that names a state of
//! the object.
//!
//! | bits | field |
//! | --- | --- |
//! | 63 … 20 | `seq`: the position in the sequence of `cur_comb` transitions (44 bits) |
//! | 19 … 12 | `tid`: the thread whose transition it is (8 bits) |
//! | 11 … 0 | `idx`: in `cur_comb`, the `Combined` instance (replica) holding the state; in a ticket (`State::ticket`, `Combined::head`, the ring), the index of the `State` in that thread's row of `stMatrix` (12 bits) |
//!
//! The seed's published implementation uses the same 44/8/12 split.
//! Sequences are compared modulo 2^44 (serial-number arithmetic): at 10^7
//! transitions per second they wrap after about 20 days, and nothing in the
//! algorithm holds a sequence number for more than a tiny fraction of that.
//!
//! [`INVALID`] (all ones) is never a real ticket: thread id 255 is reserved.

/// Bits of the sequence.
pub const SEQ_BITS: u32 = 44;
/// Bits of the thread id.
pub const TID_BITS: u32 = 8;
/// Bits of the index.
pub const IDX_BITS: u32 = 12;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;
const HALF: u64 = 1 << (SEQ_BITS - 1);

/// Largest thread count: ids `0..MAX_THREADS`; id 255 is reserved for
/// [`INVALID`].
pub const MAX_THREADS: usize = (1 << TID_BITS) - 1;
/// Largest index (replica count, states per thread) + 1.
pub const MAX_IDX: usize = 1 << IDX_BITS;

/// A word that names no state: the head of a replica whose content is not
/// known to equal any committed state, and the empty ring slot.
pub const INVALID: u64 = u64::MAX;

/// Packs a `SeqTidIdx`.
#[inline]
pub fn pack(seq: u64, tid: usize, idx: usize) -> u64 {
    debug_assert!(tid < MAX_THREADS && idx < MAX_IDX);
    ((seq & SEQ_MASK) << (TID_BITS + IDX_BITS)) | ((tid as u64) << IDX_BITS) | idx as u64
}

/// The sequence.
#[inline]
pub fn seq(w: u64) -> u64 {
    w >> (TID_BITS + IDX_BITS)
}

/// The thread id.
#[inline]
pub fn tid(w: u64) -> usize {
    ((w >> IDX_BITS) & ((1 << TID_BITS) - 1)) as usize
}

/// The index.
#[inline]
pub fn idx(w: u64) -> usize {
    (w & ((1 << IDX_BITS) - 1)) as usize
}

/// `s + d` modulo 2^44.
#[inline]
pub fn seq_add(s: u64, d: u64) -> u64 {
    s.wrapping_add(d) & SEQ_MASK
}

/// How far `a` is after `b` (modulo 2^44).
#[inline]
pub fn seq_dist(a: u64, b: u64) -> u64 {
    a.wrapping_sub(b) & SEQ_MASK
}

/// Whether `a` comes strictly after `b`.
#[inline]
pub fn seq_after(a: u64, b: u64) -> bool {
    let d = seq_dist(a, b);
    d != 0 && d < HALF
}

/// Whether `a` is `b` or comes after it.
#[inline]
pub fn seq_at_least(a: u64, b: u64) -> bool {
    seq_dist(a, b) < HALF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let w = pack(SEQ_MASK, 254, MAX_IDX - 1);
        assert_eq!((seq(w), tid(w), idx(w)), (SEQ_MASK, 254, MAX_IDX - 1));
        let w = pack(12345, 3, 7);
        assert_eq!((seq(w), tid(w), idx(w)), (12345, 3, 7));
        assert_eq!(tid(INVALID), 255);
    }

    #[test]
    fn sequences_wrap() {
        let last = SEQ_MASK;
        assert_eq!(seq_add(last, 1), 0);
        assert!(seq_after(0, last));
        assert!(!seq_after(last, 0));
        assert_eq!(seq_dist(1, last), 2);
        assert!(seq_at_least(5, 5) && !seq_after(5, 5));
        // Half the ring apart, neither comes after the other (nor is at
        // least the other).
        assert!(!seq_after(HALF, 0) && !seq_after(0, HALF));
        assert!(!seq_at_least(HALF, 0) && !seq_at_least(0, HALF));
        assert!(seq_after(HALF - 1, 0) && !seq_after(0, HALF - 1));
    }
}
