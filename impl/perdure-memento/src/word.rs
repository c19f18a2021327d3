//! The bit layouts of Memento's persistent words (seed 001, §3.1 and §4.1).
//!
//! | word | bits 63 … 0 |
//! | --- | --- |
//! | detectable-CAS location (§3.1) | parity (1) · thread id (9) · user tag (9) · offset (45) |
//! | its second word, in the two-word form ([`CasPair`]) | reserved (2) · nonce t_own (62) |
//! | CAS memento (§3.1) | parity (1) · failure flag (1) · timestamp (62) |
//! | insert/delete location (§4.1) | persist bit (1) · reserved (8) · user tag (10) · offset (45) |
//! | `repl` field of a block (§4.1) | thread id (9) · user tag (10) · offset (45) |
//!
//! A *value* as users see it is the low part: tag and offset (54 bits for a
//! CAS location, 55 for an insert/delete location). Thread id 0 is reserved:
//! it marks a CAS location value that no CAS is in the middle of installing,
//! and a `repl` field of a block not yet replaced. Offsets are pool offsets,
//! so a pool works at any mapping address; 0 is the null pointer.

/// Thread ids are `1..=MAX_THREADS` (9 bits, 0 reserved).
pub const MAX_THREADS: usize = 511;

/// Bits of a detectable-CAS value (user tag and offset).
pub const CAS_VALUE_BITS: u32 = 54;
/// Mask of a detectable-CAS value.
pub const CAS_VALUE_MASK: u64 = (1 << CAS_VALUE_BITS) - 1;
const CAS_TID_SHIFT: u32 = 54;
const CAS_PARITY_SHIFT: u32 = 63;

/// Bits of an insert/delete value (user tag and offset).
pub const INSDEL_VALUE_BITS: u32 = 55;
/// Mask of an insert/delete value.
pub const INSDEL_VALUE_MASK: u64 = (1 << INSDEL_VALUE_BITS) - 1;
const PERSIST_BIT: u64 = 1 << 63;
const REPL_TID_SHIFT: u32 = 55;

/// Bits of an offset inside a value (32 TiB).
pub const OFFSET_BITS: u32 = 45;
/// Mask of the offset inside a value.
pub const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

/// Timestamps are 62 bits (§3.1: "about 47 years" of `rdtscp` ticks).
pub const TS_MASK: u64 = (1 << 62) - 1;
const MMT_FAIL_BIT: u64 = 1 << 62;
const MMT_PARITY_BIT: u64 = 1 << 63;

/// A pointer value with a user tag in the bits above the offset.
#[inline]
pub fn with_tag(offset: u64, tag: u64) -> u64 {
    (offset & OFFSET_MASK) | (tag << OFFSET_BITS)
}

/// The offset part of a value.
#[inline]
pub fn offset_of(value: u64) -> u64 {
    value & OFFSET_MASK
}

/// The user tag of a value.
#[inline]
pub fn tag_of(value: u64) -> u64 {
    value >> OFFSET_BITS
}

/// A detectable-CAS location word: ENCODE(parity, tid, value) of §3.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CasWord {
    /// The parity of the CAS installing it (meaningful only with `tid != 0`).
    pub parity: bool,
    /// The thread whose first plain CAS installed it, 0 when stable.
    pub tid: usize,
    /// The value (tag and offset).
    pub value: u64,
}

impl CasWord {
    /// A stable value: even parity, thread 0.
    #[inline]
    pub fn stable(value: u64) -> CasWord {
        CasWord {
            parity: false,
            tid: 0,
            value,
        }
    }

    /// ENCODE.
    #[inline]
    pub fn encode(self) -> u64 {
        ((self.parity as u64) << CAS_PARITY_SHIFT)
            | ((self.tid as u64) << CAS_TID_SHIFT)
            | (self.value & CAS_VALUE_MASK)
    }

    /// DECODE.
    #[inline]
    pub fn decode(w: u64) -> CasWord {
        CasWord {
            parity: w >> CAS_PARITY_SHIFT != 0,
            tid: ((w >> CAS_TID_SHIFT) & 0x1ff) as usize,
            value: w & CAS_VALUE_MASK,
        }
    }
}

/// A two-word detectable-CAS location (16 bytes, 16-aligned, written with
/// `cmpxchg16b`): the §3.1 word at the lower address and a *nonce* above
/// it. A stable value has nonce 0; an annotated one carries t_own, the
/// timestamp of the installing thread's previous successful CAS (OWN, read
/// at L6), so two CASes of one thread never write the same pair
/// (the detectable CAS's module docs, "The two-word location").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CasPair {
    /// The §3.1 word.
    pub word: CasWord,
    /// 0 when stable, else the installer's t_own (62 bits).
    pub nonce: u64,
}

impl CasPair {
    /// ENCODE of the pair: the word low, the nonce high.
    #[inline]
    pub fn encode(self) -> u128 {
        u128::from(self.word.encode()) | (u128::from(self.nonce & TS_MASK) << 64)
    }

    /// DECODE of the pair.
    #[inline]
    pub fn decode(w: u128) -> CasPair {
        CasPair {
            word: CasWord::decode(w as u64),
            nonce: (w >> 64) as u64 & TS_MASK,
        }
    }
}

/// A CAS memento word or an OWN/LOCAL entry: ENCODETS(parity, ts) with the
/// failure flag of §3.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CasTs {
    /// Parity of the CAS it checkpoints.
    pub parity: bool,
    /// The CAS failed (the memento checkpoints a failure).
    pub fail: bool,
    /// Timestamp, 0 when nothing is checkpointed.
    pub ts: u64,
}

impl CasTs {
    /// The cleared memento: even, no failure, timestamp 0.
    pub const CLEAR: CasTs = CasTs {
        parity: false,
        fail: false,
        ts: 0,
    };

    /// ENCODETS.
    #[inline]
    pub fn encode(self) -> u64 {
        ((self.parity as u64) << 63) | ((self.fail as u64) << 62) | (self.ts & TS_MASK)
    }

    /// DECODETS.
    #[inline]
    pub fn decode(w: u64) -> CasTs {
        CasTs {
            parity: w & MMT_PARITY_BIT != 0,
            fail: w & MMT_FAIL_BIT != 0,
            ts: w & TS_MASK,
        }
    }
}

/// An insert/delete location word: ENCODE(persist, value) of §4.1.
#[inline]
pub fn insdel_encode(persist: bool, value: u64) -> u64 {
    if persist {
        PERSIST_BIT | (value & INSDEL_VALUE_MASK)
    } else {
        value & INSDEL_VALUE_MASK
    }
}

/// DECODE of an insert/delete location word: (persist bit, value).
#[inline]
pub fn insdel_decode(w: u64) -> (bool, u64) {
    (w & PERSIST_BIT != 0, w & INSDEL_VALUE_MASK)
}

/// ENCODER of §4.1: a `repl` word naming the deleting thread and the
/// replacement value.
#[inline]
pub fn repl_encode(tid: usize, value: u64) -> u64 {
    ((tid as u64) << REPL_TID_SHIFT) | (value & INSDEL_VALUE_MASK)
}

/// DECODER of §4.1: (thread id, replacement value); thread 0 means not
/// replaced.
#[inline]
pub fn repl_decode(w: u64) -> (usize, u64) {
    ((w >> REPL_TID_SHIFT) as usize, w & INSDEL_VALUE_MASK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cas_word_round_trips_every_field() {
        for parity in [false, true] {
            for tid in [0, 1, 77, MAX_THREADS] {
                for value in [0, 1, CAS_VALUE_MASK, with_tag(0x1234_5678, 0x1ff)] {
                    let w = CasWord { parity, tid, value };
                    assert_eq!(CasWord::decode(w.encode()), w);
                }
            }
        }
    }

    #[test]
    fn cas_pair_round_trips_and_stable_is_the_word() {
        for nonce in [0, 1, TS_MASK] {
            let p = CasPair {
                word: CasWord {
                    parity: true,
                    tid: MAX_THREADS,
                    value: CAS_VALUE_MASK,
                },
                nonce,
            };
            assert_eq!(CasPair::decode(p.encode()), p);
        }
        let s = CasPair {
            word: CasWord::stable(5),
            nonce: 0,
        };
        assert_eq!(s.encode(), u128::from(CasWord::stable(5).encode()));
    }

    #[test]
    fn cas_ts_round_trips_and_clear_is_zero() {
        assert_eq!(CasTs::CLEAR.encode(), 0);
        for parity in [false, true] {
            for fail in [false, true] {
                for ts in [0, 1, TS_MASK] {
                    let t = CasTs { parity, fail, ts };
                    assert_eq!(CasTs::decode(t.encode()), t);
                }
            }
        }
    }

    #[test]
    fn insdel_and_repl_round_trip() {
        for v in [0, 5, INSDEL_VALUE_MASK] {
            assert_eq!(insdel_decode(insdel_encode(true, v)), (true, v));
            assert_eq!(insdel_decode(insdel_encode(false, v)), (false, v));
            assert_eq!(repl_decode(repl_encode(MAX_THREADS, v)), (MAX_THREADS, v));
        }
        assert_eq!(repl_decode(0), (0, 0));
    }

    #[test]
    fn tags_and_offsets_split() {
        let v = with_tag(0xdead_beef, 0x155);
        assert_eq!(offset_of(v), 0xdead_beef);
        assert_eq!(tag_of(v), 0x155);
    }
}
