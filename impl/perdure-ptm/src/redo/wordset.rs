//! RedoOpt-PTM's hash sets (seed §5, "Additional optimizations": store
//! aggregation and flush aggregation by cache line, with "efficient reset
//! and re-usage"): an open-addressing map from word offsets to log
//! positions, reset in O(1) by a generation number. Used by the write-set
//! log ([`super::tx`]) and a replica's dirty lines ([`super::state`]).

/// An open-addressing hash map from 8-aligned offsets to positions, reset
/// in O(1) by bumping a generation (RedoOpt's store set and line set).
/// Bounded: refuses inserts beyond half its slots.
#[derive(Debug)]
pub(crate) struct WordSet {
    /// The slots: a probe reads one 16-byte slot (key, generation and value
    /// side by side), not three arrays (on every RedoOpt store).
    slots: Box<[Slot]>,
    gen: u32,
    len: usize,
    /// Store aggregation: `(position, previous new value)` of entries of
    /// earlier closures that the running closure rewrote.
    pub(crate) saves: Vec<(u64, u64)>,
}

/// A slot of a [`WordSet`]: in the set when `gen` is the set's generation.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    key: u64,
    gen: u32,
    val: u32,
}

impl WordSet {
    /// A set of `slots` (rounded up to a power of two, at least 8) slots.
    pub(crate) fn new(slots: usize) -> WordSet {
        let slots = slots.max(8).next_power_of_two();
        WordSet {
            slots: vec![Slot::default(); slots].into_boxed_slice(),
            gen: 1,
            len: 0,
            saves: Vec::new(),
        }
    }

    /// An empty placeholder (no slots; every insert is refused).
    pub(crate) fn none() -> WordSet {
        WordSet {
            slots: Box::new([]),
            gen: 1,
            len: 0,
            saves: Vec::new(),
        }
    }

    /// Bytes this set holds.
    pub(crate) fn bytes_for(slots: usize) -> u64 {
        16 * slots.max(8).next_power_of_two() as u64
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.saves.clear();
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            self.slots.iter_mut().for_each(|s| s.gen = 0);
            self.gen = 1;
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        // Fibonacci hashing of the word (or line) number.
        let h = (key >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - self.slots.len().trailing_zeros())) as usize
    }

    /// `Ok(slot)` holding `key`, or `Err(slot)`, the empty slot where it
    /// would go (linear probing); `None` if the set has no slots.
    #[inline]
    pub(crate) fn find(&self, key: u64) -> Option<Result<usize, usize>> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.gen != self.gen {
                return Some(Err(i));
            }
            if s.key == key {
                return Some(Ok(i));
            }
            i = (i + 1) & mask;
        }
    }

    /// The position stored for `key`.
    #[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
    pub(crate) fn get(&self, key: u64) -> Option<u64> {
        match self.find(key)? {
            Ok(i) => Some(u64::from(self.slots[i].val)),
            Err(_) => None,
        }
    }

    /// The value in slot `slot` (an `Ok` of [`WordSet::find`]).
    #[inline]
    pub(crate) fn val_at(&self, slot: usize) -> u64 {
        u64::from(self.slots[slot].val)
    }

    /// Sets `key` to `val`; false if the set is half full or `val` does not
    /// fit (the caller then does without aggregation).
    #[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
    pub(crate) fn insert(&mut self, key: u64, val: u64) -> bool {
        let found = self.find(key);
        self.insert_found(found, key, val)
    }

    /// [`WordSet::insert`] with `found`, what [`WordSet::find`] just said
    /// for `key` (no second probe).
    #[inline]
    pub(crate) fn insert_found(
        &mut self,
        found: Option<Result<usize, usize>>,
        key: u64,
        val: u64,
    ) -> bool {
        let Ok(val) = u32::try_from(val) else {
            return false;
        };
        match found {
            None => false,
            Some(Ok(i)) => {
                self.slots[i].val = val;
                true
            }
            Some(Err(_)) if 2 * (self.len + 1) > self.slots.len() => false,
            Some(Err(i)) => {
                self.slots[i] = Slot {
                    key,
                    gen: self.gen,
                    val,
                };
                self.len += 1;
                true
            }
        }
    }

    #[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn word_set_maps_resets_and_bounds() {
        let mut s = WordSet::new(8);
        assert!(s.insert(64, 1));
        assert!(s.insert(72, 2));
        assert!(s.insert(64, 3), "an existing key is updated");
        assert_eq!(s.get(64), Some(3));
        assert_eq!(s.get(72), Some(2));
        assert_eq!(s.get(80), None);
        assert!(s.insert(80, 4));
        assert!(s.insert(88, 5));
        assert_eq!(s.len(), 4);
        assert!(!s.insert(96, 6), "half of 8 slots is the bound");
        s.clear();
        assert_eq!(s.get(64), None, "clear forgets every key");
        assert_eq!(s.len(), 0);
        assert!(s.insert(96, 7));
        assert_eq!(s.get(96), Some(7));
        assert!(!WordSet::none().insert(8, 1));
        assert!(!s.insert(104, u64::from(u32::MAX) + 1));
    }

    #[test]
    fn word_set_survives_generation_wrap() {
        let mut s = WordSet::new(8);
        s.gen = u32::MAX;
        assert!(s.insert(8, 1));
        s.clear();
        assert_eq!(s.gen, 1);
        assert_eq!(s.get(8), None);
    }
}
